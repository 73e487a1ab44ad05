/* suites.c — the named suites, and the shapes at each kernel's tile edges. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "suites.h"

/* ---- Suites --------------------------------------------------------------------- */

#define SDPA(b, h, lq, lk, dh, m) \
    { .op = AB_OP_SDPA, .batch = b, .heads = h, .q_len = lq, .kv_len = lk, .head_dim = dh, .mask = m }
/* Grouped-query SDPA (contract 0.2): hkv key/value heads. */
#define GQA(b, h, hkv, lq, lk, dh, m) \
    { .op = AB_OP_SDPA, .batch = b, .heads = h, .kv_heads = hkv, .q_len = lq, .kv_len = lk, \
      .head_dim = dh, .mask = m }
/* SDPA on keys and values stored as kv (contract 0.3). */
#define SDPA_KV(b, h, hkv, lq, lk, dh, m, kv) \
    { .op = AB_OP_SDPA, .batch = b, .heads = h, .kv_heads = (hkv) == (h) ? 0 : (hkv), .q_len = lq, \
      .kv_len = lk, .head_dim = dh, .mask = m, .kv_type = kv }
#define MHA(b, d, h, lq, lk, m) \
    { .op = AB_OP_MHA, .batch = b, .heads = h, .q_len = lq, .kv_len = lk, .head_dim = (d) / (h), \
      .cross = (lq) != (lk), .mask = m }
#define MHA_CROSS(b, d, h, lq, lk, m) \
    { .op = AB_OP_MHA, .batch = b, .heads = h, .q_len = lq, .kv_len = lk, .head_dim = (d) / (h), \
      .cross = 1, .mask = m }
/* A decoder layer: target length l, memory length mem (kv: through a cache
 * of that type). */
#define DEC_KV(b, d, h, f, l, mem, nf, a, m, kv) \
    { .op = AB_OP_DECODER, .batch = b, .heads = h, .q_len = l, .kv_len = mem, \
      .head_dim = (d) / (h), .d_ff = f, .norm_first = nf, .act = a, .mask = m, .kv_type = kv }
#define DEC(b, d, h, f, l, mem, nf, a, m) DEC_KV(b, d, h, f, l, mem, nf, a, m, ATTN_F32)
/* Generation: a prompt of p tokens, then n single-token steps, through a
 * stack of `layers` decoder layers over a memory of mem tokens. */
#define GEN_KV(b, d, h, f, p, n, mem, layers_, nf, a, m, kv) \
    { .op = AB_OP_GENERATE, .batch = b, .heads = h, .q_len = p, .steps = n, .kv_len = mem, \
      .layers = layers_, .head_dim = (d) / (h), .d_ff = f, .norm_first = nf, .act = a, .mask = m, \
      .kv_type = kv }
#define GEN(b, d, h, f, p, n, mem, layers_, nf, a, m) \
    GEN_KV(b, d, h, f, p, n, mem, layers_, nf, a, m, ATTN_F32)
#define ENC(b, d, h, f, l, nf, a, m) \
    { .op = AB_OP_ENCODER, .batch = b, .heads = h, .q_len = l, .kv_len = l, .head_dim = (d) / (h), \
      .d_ff = f, .norm_first = nf, .act = a, .mask = m }
/* A BERT end to end (embeddings and `layers` post-LN GELU layers), b
 * sequences of l tokens. */
#define BERT(b, d, h, f, l, layers_, m) \
    { .op = AB_OP_BERT, .batch = b, .heads = h, .q_len = l, .kv_len = l, .head_dim = (d) / (h), \
      .d_ff = f, .layers = layers_, .norm_first = 0, .act = ATTN_ACT_GELU_ERF, .mask = m }
#define BERT_BASE(b, l, m) BERT(b, 768, 12, 3072, l, 12, m)

static const ab_shape smoke[] = {
    SDPA(2, 2, 33, 33, 16, AB_MASK_NONE), SDPA(2, 2, 33, 33, 16, AB_MASK_CAUSAL),
    SDPA(2, 2, 33, 33, 16, AB_MASK_PADDING), SDPA(2, 2, 33, 33, 16, AB_MASK_PADALL),
    SDPA(2, 2, 33, 33, 16, AB_MASK_KEEP), SDPA(2, 2, 33, 33, 16, AB_MASK_BIAS),
    SDPA(2, 2, 33, 33, 16, AB_MASK_ALL),
    MHA(2, 32, 4, 17, 17, AB_MASK_CAUSAL), MHA(2, 32, 4, 9, 17, AB_MASK_PADDING),
    ENC(2, 32, 4, 64, 17, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    ENC(2, 32, 4, 64, 17, 0, ATTN_ACT_RELU, AB_MASK_PADDING),
    BERT(2, 32, 4, 64, 17, 2, AB_MASK_PADDING),
};

/* BERT-base: D 768, 12 heads of 64, F 3072; BERT is post-LN with GELU. */
static const ab_shape bert_base[] = {
    SDPA(1, 12, 128, 128, 64, AB_MASK_NONE), SDPA(1, 12, 512, 512, 64, AB_MASK_NONE),
    MHA(1, 768, 12, 128, 128, AB_MASK_NONE), MHA(1, 768, 12, 512, 512, AB_MASK_NONE),
    ENC(1, 768, 12, 3072, 128, 0, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    ENC(1, 768, 12, 3072, 512, 0, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    BERT_BASE(1, 128, AB_MASK_PADDING), BERT_BASE(1, 512, AB_MASK_PADDING),
    BERT_BASE(8, 128, AB_MASK_PADDING), BERT_BASE(8, 512, AB_MASK_PADDING),
};

static const ab_shape long_seq[] = {
    SDPA(1, 12, 1024, 1024, 64, AB_MASK_NONE), SDPA(1, 12, 1024, 1024, 64, AB_MASK_CAUSAL),
    SDPA(1, 12, 2048, 2048, 64, AB_MASK_NONE), SDPA(1, 12, 2048, 2048, 64, AB_MASK_CAUSAL),
    SDPA(1, 12, 4096, 4096, 64, AB_MASK_NONE), SDPA(1, 12, 4096, 4096, 64, AB_MASK_CAUSAL),
    SDPA(1, 12, 8192, 8192, 64, AB_MASK_NONE), SDPA(1, 12, 8192, 8192, 64, AB_MASK_CAUSAL),
};

/* What `make bench-anchors` runs beside PyTorch (reports/pytorch_anchor.py):
 * the shapes of the SIMD kernels' targets (docs/performance.md). */
static const ab_shape anchors[] = {
    ENC(1, 768, 12, 3072, 128, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    ENC(1, 768, 12, 3072, 512, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    SDPA(1, 12, 512, 512, 64, AB_MASK_NONE), SDPA(1, 12, 2048, 2048, 64, AB_MASK_NONE),
    SDPA(1, 12, 4096, 4096, 64, AB_MASK_NONE), SDPA(1, 12, 4096, 4096, 64, AB_MASK_CAUSAL),
    DEC(1, 768, 12, 3072, 512, 512, 0, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
};

/* What `make bench` runs: the BERT-base building blocks at L 128 and 512,
 * masked and not, sized so the whole run fits in minutes. */
static const ab_shape default_suite[] = {
    SDPA(1, 12, 128, 128, 64, AB_MASK_NONE), SDPA(1, 12, 512, 512, 64, AB_MASK_NONE),
    SDPA(1, 12, 512, 512, 64, AB_MASK_CAUSAL),
    MHA(1, 768, 12, 128, 128, AB_MASK_NONE), MHA(1, 768, 12, 128, 128, AB_MASK_CAUSAL),
    ENC(1, 768, 12, 3072, 128, 0, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    ENC(1, 768, 12, 3072, 512, 1, ATTN_ACT_GELU_ERF, AB_MASK_PADDING),
};

/* Edge shapes (L = 1, Dh = 1, one head, odd widths, Lq ≠ Lk both ways, an
 * all-padding batch), every mask kind, and sizes at common vector edges
 * (15/16/17, 63/64/65, ...). Each kernel's own tile edges are not listed
 * here: ab_edge_shapes generates them from its row. */
static const ab_shape check[] = {
    SDPA(1, 1, 1, 1, 1, AB_MASK_NONE), SDPA(1, 1, 1, 1, 64, AB_MASK_CAUSAL),
    SDPA(2, 3, 5, 7, 3, AB_MASK_CAUSAL), SDPA(2, 2, 7, 5, 7, AB_MASK_CAUSAL),
    SDPA(2, 2, 17, 17, 17, AB_MASK_PADDING), SDPA(3, 2, 17, 17, 17, AB_MASK_PADALL),
    SDPA(2, 2, 17, 19, 17, AB_MASK_KEEP), SDPA(2, 2, 19, 17, 17, AB_MASK_BIAS),
    SDPA(2, 2, 33, 33, 33, AB_MASK_ALL), SDPA(1, 1, 15, 15, 16, AB_MASK_NONE),
    SDPA(1, 2, 16, 16, 15, AB_MASK_CAUSAL), SDPA(1, 2, 17, 17, 64, AB_MASK_NONE),
    SDPA(1, 2, 63, 63, 17, AB_MASK_CAUSAL), SDPA(1, 1, 64, 64, 32, AB_MASK_NONE),
    SDPA(1, 1, 65, 65, 65, AB_MASK_CAUSAL), SDPA(1, 2, 129, 129, 64, AB_MASK_ALL),
    SDPA(1, 2, 1, 257, 64, AB_MASK_NONE), SDPA(1, 1, 130, 3, 8, AB_MASK_CAUSAL),
    SDPA(2, 1, 200, 200, 128, AB_MASK_PADDING),
    MHA(1, 4, 4, 1, 1, AB_MASK_NONE), MHA(2, 6, 3, 5, 5, AB_MASK_NONE),
    MHA_CROSS(2, 13, 1, 3, 9, AB_MASK_PADDING), MHA(2, 32, 4, 17, 17, AB_MASK_CAUSAL),
    MHA(2, 48, 3, 33, 33, AB_MASK_KEEP), MHA_CROSS(1, 64, 4, 16, 33, AB_MASK_BIAS),
    MHA_CROSS(1, 64, 4, 33, 16, AB_MASK_CAUSAL), MHA(3, 24, 2, 9, 9, AB_MASK_PADALL),
    MHA(1, 64, 8, 65, 65, AB_MASK_ALL),
    ENC(2, 8, 2, 12, 1, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    ENC(2, 12, 3, 20, 5, 0, ATTN_ACT_RELU, AB_MASK_PADDING),
    ENC(1, 32, 4, 64, 17, 1, ATTN_ACT_GELU_TANH, AB_MASK_CAUSAL),
    ENC(2, 48, 6, 96, 33, 0, ATTN_ACT_GELU_ERF, AB_MASK_ALL),
    ENC(3, 64, 4, 256, 20, 1, ATTN_ACT_RELU, AB_MASK_PADALL),
    ENC(1, 16, 2, 33, 7, 0, ATTN_ACT_GELU_TANH, AB_MASK_KEEP),
    BERT(2, 12, 3, 20, 5, 3, AB_MASK_PADDING), BERT(1, 32, 4, 64, 17, 2, AB_MASK_NONE),
    /* Contract 0.2: bottom-right causal with Lq <, =, > Lk (the first rows
     * of the last see no key), decoding steps of 1-3 queries against key
     * counts around the tiles, grouped and multi-query heads. */
    SDPA(2, 2, 5, 9, 8, AB_MASK_CAUSAL_BR), SDPA(1, 3, 17, 17, 16, AB_MASK_CAUSAL_BR),
    SDPA(2, 2, 9, 4, 8, AB_MASK_CAUSAL_BR), SDPA(1, 2, 130, 129, 33, AB_MASK_CAUSAL_BR),
    SDPA(2, 4, 1, 257, 64, AB_MASK_CAUSAL_BR), SDPA(1, 2, 3, 1000, 128, AB_MASK_CAUSAL_BR),
    GQA(2, 4, 2, 1, 129, 64, AB_MASK_CAUSAL_BR), GQA(1, 8, 1, 1, 300, 128, AB_MASK_NONE),
    GQA(2, 6, 3, 17, 33, 16, AB_MASK_PADDING), GQA(1, 12, 4, 65, 65, 64, AB_MASK_CAUSAL),
    GQA(2, 4, 1, 7, 7, 8, AB_MASK_ALL), GQA(1, 8, 2, 2, 1025, 32, AB_MASK_CAUSAL_BR),
    DEC(2, 8, 2, 12, 1, 1, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    DEC(2, 12, 3, 20, 5, 9, 0, ATTN_ACT_RELU, AB_MASK_PADDING),
    DEC(1, 64, 4, 129, 130, 17, 1, ATTN_ACT_GELU_TANH, AB_MASK_NONE),
    DEC(3, 48, 6, 96, 33, 65, 0, ATTN_ACT_GELU_ERF, AB_MASK_PADDING),
    /* Projections of 1-6 rows take the gemms' skinny path: odd depths and
     * widths (k % 16, n % 4), the last rows of a row group. */
    DEC(1, 13, 1, 7, 5, 3, 1, ATTN_ACT_RELU, AB_MASK_NONE),
    GEN(3, 20, 2, 9, 2, 3, 4, 2, 1, ATTN_ACT_GELU_TANH, AB_MASK_PADDING),
    GEN(2, 16, 2, 24, 5, 4, 7, 2, 0, ATTN_ACT_RELU, AB_MASK_PADDING),
    GEN(1, 64, 4, 96, 1, 17, 33, 3, 1, ATTN_ACT_GELU_ERF, AB_MASK_NONE),
    /* Contract 0.3: keys and values stored as f16, bf16 and int8 — the
     * decode path (one row, grouped rows, a width with a vector tail, a
     * split), the streaming and tiled paths (widened per head), and typed
     * caches through generation. */
    SDPA_KV(2, 8, 2, 1, 1025, 128, AB_MASK_CAUSAL_BR, ATTN_F16),
    SDPA_KV(1, 4, 4, 1, 300, 64, AB_MASK_NONE, ATTN_I8),
    SDPA_KV(1, 2, 2, 1, 700, 33, AB_MASK_CAUSAL_BR, ATTN_BF16),
    SDPA_KV(2, 3, 3, 5, 33, 17, AB_MASK_PADDING, ATTN_BF16),
    SDPA_KV(1, 2, 2, 65, 65, 64, AB_MASK_CAUSAL, ATTN_F16),
    SDPA_KV(2, 6, 3, 17, 33, 16, AB_MASK_ALL, ATTN_I8),
    DEC_KV(1, 64, 4, 129, 33, 17, 1, ATTN_ACT_GELU_TANH, AB_MASK_NONE, ATTN_BF16),
    DEC_KV(2, 12, 3, 20, 5, 9, 0, ATTN_ACT_RELU, AB_MASK_PADDING, ATTN_I8),
    GEN_KV(1, 64, 4, 96, 3, 5, 9, 2, 1, ATTN_ACT_GELU_TANH, AB_MASK_PADDING, ATTN_F16),
    GEN_KV(2, 16, 2, 24, 2, 3, 5, 1, 0, ATTN_ACT_RELU, AB_MASK_NONE, ATTN_I8),
};

/* Decoding (contract 0.2): one query against a cache of 1k-32k keys, 32
 * heads of 128, all key/value heads or 8 (grouped-query): memory-bound,
 * judged in GB/s of K and V against the measured read bandwidth; the cache
 * fp32, then (contract 0.3) f16 and int8, which read half and a quarter of
 * the bytes. */
#define DECODE_AT(lk, kv) \
    SDPA_KV(1, 32, 32, 1, lk, 128, AB_MASK_CAUSAL_BR, kv), \
    SDPA_KV(1, 32, 8, 1, lk, 128, AB_MASK_CAUSAL_BR, kv)
#define DECODE_TYPES_AT(lk) DECODE_AT(lk, ATTN_F32), DECODE_AT(lk, ATTN_F16), DECODE_AT(lk, ATTN_I8)
static const ab_shape decode[] = {
    DECODE_TYPES_AT(1024), DECODE_TYPES_AT(4096), DECODE_TYPES_AT(16384), DECODE_TYPES_AT(32768),
};

/* Generation (contract 0.2): a 6-layer decoder of D 512, 8 heads, F 2048
 * (the original Transformer's base model: post-LN, ReLU) over a memory of
 * 128 tokens, a prompt of 128, then 128 tokens one at a time; with its
 * caches fp32, then (contract 0.3) f16. */
static const ab_shape generate[] = {
    GEN(1, 512, 8, 2048, 128, 128, 128, 6, 0, ATTN_ACT_RELU, AB_MASK_NONE),
    GEN_KV(1, 512, 8, 2048, 128, 128, 128, 6, 0, ATTN_ACT_RELU, AB_MASK_NONE, ATTN_F16),
};

/* What the CI regression gate (tests/gate.sh) times and counts: one of
 * each op, 1-10 ms per call for the fast kernels, small enough to run
 * under callgrind (~50x slower) in seconds. */
static const ab_shape gate[] = {
    SDPA(1, 4, 256, 256, 64, AB_MASK_NONE), SDPA(1, 4, 256, 256, 64, AB_MASK_CAUSAL),
    MHA(1, 256, 4, 128, 128, AB_MASK_NONE),
    ENC(1, 256, 4, 1024, 128, 1, ATTN_ACT_GELU_ERF, AB_MASK_PADDING),
};

#define SUITE(n, d, a) { n, d, a, (int)(sizeof a / sizeof a[0]), 0.0, 0.0 }
/* Tiny shapes: batches of 5 ms, at most 0.1 s of them per benchmark. */
#define QUICK_SUITE(n, d, a) { n, d, a, (int)(sizeof a / sizeof a[0]), 0.005, 0.1 }
static const ab_suite suites[] = {
    SUITE("default", "what `make bench` runs: BERT-base blocks at L 128/512, masked and not",
          default_suite),
    QUICK_SUITE("smoke", "seconds: every op and every mask kind at small sizes", smoke),
    SUITE("bert-base", "B 1, L 128 and 512, D 768, H 12, F 3072 (post-LN, GELU): the blocks, "
          "then the whole model (op=bert) at B 1 and 8", bert_base),
    SUITE("long", "SDPA, 12 heads of 64, L 1024 to 8192, causal and not", long_seq),
    SUITE("anchors", "the SIMD targets' shapes, timed beside PyTorch by make bench-anchors", anchors),
    SUITE("gate", "what the CI regression gate times and counts: one small shape per op", gate),
    SUITE("decode", "SDPA decoding: Lq 1 against Lk 1k-32k, H 32, Hkv 32 and 8, Dh 128, causal-br; "
          "the cache f32, f16 and i8", decode),
    SUITE("generate", "a 6-layer decoder (D 512, H 8, F 2048, memory 128): prompt 128, then "
          "128 tokens one by one; its caches f32 and f16", generate),
};
static const ab_suite check_suite = QUICK_SUITE("check", "edge shapes for `attnbench check`", check);

const ab_suite *ab_suite_find(const char *name)
{
    for (int i = 0; i < ab_suite_count(); i++)
        if (strcmp(suites[i].name, name) == 0)
            return &suites[i];
    if (strcmp(name, check_suite.name) == 0)
        return &check_suite;
    return NULL;
}

int ab_suite_count(void)
{
    return (int)(sizeof suites / sizeof suites[0]);
}

const ab_suite *ab_suite_get(int i)
{
    return (i >= 0 && i < ab_suite_count()) ? &suites[i] : NULL;
}

int ab_shapes_select(const char *suite_name, const char *shape_text, ab_op op, int filter_op,
                     ab_shape *out, int max, double suite_times[2], char *err, size_t len)
{
    int n = 0;
    if (suite_times)
        suite_times[0] = suite_times[1] = 0.0;
    if (shape_text && suite_name) {
        snprintf(err, len, "give --shape or --suite, not both");
        return -1;
    }
    if (shape_text) {
        char buf[2048];
        if (snprintf(buf, sizeof buf, "%s", shape_text) >= (int)sizeof buf) {
            snprintf(err, len, "--shape: too long");
            return -1;
        }
        for (char *save = NULL, *item = strtok_r(buf, ";", &save); item;
             item = strtok_r(NULL, ";", &save)) {
            if (n == max) {
                snprintf(err, len, "--shape: more than %d shapes", max);
                return -1;
            }
            if (ab_shape_parse(item, op, &out[n], err, len) != 0)
                return -1;
            n++;
        }
        if (n == 0)
            snprintf(err, len, "--shape: no shape given");
        return n ? n : -1;
    }
    const ab_suite *suite = ab_suite_find(suite_name ? suite_name : "default");
    if (!suite) {
        size_t used = (size_t)snprintf(err, len, "--suite: unknown suite '%s' (", suite_name);
        for (int i = 0; i < ab_suite_count() && used < len; i++)
            used += (size_t)snprintf(err + used, len - used, "%s, ", ab_suite_get(i)->name);
        if (used < len)
            snprintf(err + used, len - used, "%s)", ab_check_suite()->name);
        return -1;
    }
    for (int i = 0; i < suite->n_shapes; i++) {
        if (filter_op && suite->shapes[i].op != op)
            continue;
        if (n == max) {   /* never a suite cut short without a word */
            snprintf(err, len, "--suite %s: more than the %d shapes a run takes", suite->name, max);
            return -1;
        }
        out[n++] = suite->shapes[i];
    }
    if (n == 0) {   /* a run of nothing would write an empty result over --json */
        snprintf(err, len, "--suite %s has no op=%s shape", suite->name, ab_op_name(op));
        return -1;
    }
    if (suite_times) {
        suite_times[0] = suite->min_time;
        suite_times[1] = suite->max_time;
    }
    return n;
}

const ab_suite *ab_check_suite(void)
{
    return &check_suite;
}

/* ---- Edge shapes from a kernel's row ------------------------------------------------ */

/* What one kernel's shapes straddle, and the shapes so far. */
typedef struct edges {
    attn_geometry g;
    /* Its parameters' tiles (0: it has none), mc, nc, bq and bk in whole
     * micro-tiles as the SIMD kernels round them (blocked's bq, used as it
     * is, defaults to a multiple of its 6 rows); decode_rows and
     * stream_rows -1 when it has no decode path or streamed gemm. */
    int mc, kc, nc, bq, bk, stream_from, decode_rows, stream_rows;
    int lq;               /* query rows on the tiled path, past a last query tile */
    ab_shape *out;
    int n, max, turn;     /* turn: the next mask and activation in their cycles */
} edges;

/* The mask cycles: every kind for SDPA; for the layers (one batch, so no
 * all-padding one) and, where the keys are the edge, kinds under which the
 * rows see every key. An op that takes fewer masks (the decoders: padding
 * of their memory only) cycles through those of the cycle it takes. */
static const ab_mask_kind sdpa_masks[] = {
    AB_MASK_NONE, AB_MASK_CAUSAL, AB_MASK_PADDING, AB_MASK_ALL, AB_MASK_CAUSAL_BR, AB_MASK_KEEP,
    AB_MASK_BIAS, AB_MASK_PADALL,
};
static const ab_mask_kind layer_masks[] = {
    AB_MASK_NONE, AB_MASK_CAUSAL, AB_MASK_KEEP, AB_MASK_BIAS, AB_MASK_ALL, AB_MASK_PADDING,
};
static const ab_mask_kind key_masks[] = {
    AB_MASK_CAUSAL_BR, AB_MASK_NONE, AB_MASK_PADDING, AB_MASK_BIAS, AB_MASK_KEEP,
};
/* Streamed key tiles: causal tiles skipped (and every other part), each
 * tile rescaled, a batch all padding. */
static const ab_mask_kind stream_masks[] = { AB_MASK_ALL, AB_MASK_CAUSAL_BR, AB_MASK_PADALL };
typedef struct mask_cycle {
    const ab_mask_kind *masks;
    int n;
} mask_cycle;
#define CYCLE(masks) ((mask_cycle){ masks, (int)(sizeof masks / sizeof masks[0]) })
#define SDPA_MASKS CYCLE(sdpa_masks)
#define LAYER_MASKS CYCLE(layer_masks)
#define KEY_MASKS CYCLE(key_masks)
#define STREAM_MASKS CYCLE(stream_masks)

/* Turn t of the cycle, among the masks op takes (none when it takes none
 * of them: AB_MASK_NONE). */
static ab_mask_kind mask_at(mask_cycle c, ab_op op, int t)
{
    ab_mask_kind taken[AB_MASK_COUNT];
    int n = 0;
    for (int i = 0; i < c.n; i++)
        if (ab_op_row_of(op)->masks >> c.masks[i] & 1u)
            taken[n++] = c.masks[i];
    return n ? taken[t % n] : AB_MASK_NONE;
}

/* Adds s to the shapes unless it is there already. */
static void edge_put(edges *e, const ab_shape *s)
{
    for (int i = 0; i < e->n; i++)
        if (memcmp(&e->out[i], s, sizeof *s) == 0)
            return;
    if (e->n < e->max)
        e->out[e->n++] = *s;
}

/* Adds s with the cycle's next mask (and activation, norm), unless a size
 * is below 1, its FLOPs pass the budget (each must take milliseconds on
 * the naive oracle) or it is there already. Where the keys are the edge
 * (KEY_MASKS: the key tiles, the decode path), also s with its keys and
 * values stored narrower, the next of f16, bf16 and i8 in turn: the decode
 * path reads them in place, in other loops than fp32's. */
static void edge_add(edges *e, ab_shape s, mask_cycle cycle)
{
    if (s.batch < 1 || s.heads < 1 || s.q_len < 1 || s.kv_len < 1 || s.head_dim < 1)
        return;
    int t = e->turn++;
    s.mask = mask_at(cycle, s.op, t);
    if (ab_op_takes(s.op, AB_KEY_norm))
        s.norm_first = t % 2;
    if (ab_op_takes(s.op, AB_KEY_act))
        s.act = (attn_activation)(t % 3);
    if (ab_shape_flops(&s) > AB_EDGE_FLOPS)
        return;
    edge_put(e, &s);
    if (cycle.masks == key_masks && ab_op_takes(s.op, AB_KEY_kv)) {
        s.kv_type = (attn_dtype)(ATTN_F16 + t % 3);
        edge_put(e, &s);
    }
}

static ab_shape sdpa_edge(int b, int h, int hkv, int lq, int lk, int dh)
{
    ab_shape s = { .op = AB_OP_SDPA, .batch = b, .heads = h, .kv_heads = hkv == h ? 0 : hkv,
                   .q_len = lq, .kv_len = lk, .head_dim = dh };
    return s;
}

/* Self-attention (mha) or an encoder layer of one head of width d over l
 * tokens, b batches: the gemms see b·l rows, widths d, 3·d and f, depths d
 * and f. */
static ab_shape layer_edge(ab_op op, int b, int l, int d, int f)
{
    ab_shape s = { .op = op, .batch = b, .heads = 1, .q_len = l, .kv_len = l, .head_dim = d,
                   .d_ff = ab_op_takes(op, AB_KEY_F) ? f : 0 };
    return s;
}

/* v over x − 1, x and x + 1 when x > 0 (none otherwise). */
#define AROUND(v, x) for (int v = (x) - 1, v##_last = (x) > 0 ? (x) + 1 : (x) - 2; v <= v##_last; v++)

/* A parameter's value by name, or -1 when the kernel has no such parameter. */
static int param_named(const attn_kernel *k, const int *values, const char *name)
{
    for (int i = 0; i < k->n_params; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return values[i];
    return -1;
}

/* v in whole units (at least one), as the kernels round mc, nc, bq and bk. */
static int in_units(int v, int unit)
{
    if (v <= 0 || unit <= 0)
        return v > 0 ? v : 0;
    return v / unit > 0 ? v / unit * unit : unit;
}

int ab_edge_shapes(const attn_kernel *k, const int *params, ab_shape *out, int max)
{
    int defaults[ATTN_MAX_PARAMS] = { 0 };
    if (!params) {
        if (k->n_params > 0 && k->default_params)
            k->default_params(defaults);
        params = defaults;
    }
    edges e = { .g = k->geometry, .out = out, .max = max };
    const attn_geometry *g = &e.g;
    e.mc = in_units(param_named(k, params, "mc"), g->mr);
    e.kc = in_units(param_named(k, params, "kc"), 0);
    e.nc = in_units(param_named(k, params, "nc"), g->nr);
    e.bq = in_units(param_named(k, params, "bq"), g->attn_rows);
    e.bk = in_units(param_named(k, params, "bk"), g->attn_keys);
    e.stream_from = in_units(param_named(k, params, "stream_from"), 0);
    e.decode_rows = param_named(k, params, "decode_rows");
    e.stream_rows = param_named(k, params, "stream_rows");
    /* Past the decode path (when there is one) and a whole query tile. */
    e.lq = (e.bq ? e.bq : g->attn_rows ? g->attn_rows : 2) + 1;
    if (e.lq <= e.decode_rows)
        e.lq = e.decode_rows + 1;

    /* The GEMM: rows x widths around its register tile, depths around
     * kc (the FFN's second gemm, then the projections), rows around mc,
     * widths around nc; without a tile, widths around the vector. */
    const int wide = g->nr ? g->nr : g->lanes;
    AROUND(r, g->mr)
        AROUND(w, g->nr)
            edge_add(&e, layer_edge(AB_OP_ENCODER, 1, r, w, 2 * g->nr + 1), LAYER_MASKS);
    AROUND(kd, g->mr ? e.kc : 0) {
        edge_add(&e, layer_edge(AB_OP_ENCODER, 1, g->mr + 1, g->nr + 1, kd), LAYER_MASKS);
        edge_add(&e, layer_edge(AB_OP_MHA, 1, g->mr + 1, kd, 0), LAYER_MASKS);
    }
    AROUND(r, g->mr ? e.mc : 0)
        edge_add(&e, layer_edge(AB_OP_MHA, 1, r, g->nr + 1, 0), LAYER_MASKS);
    AROUND(n, g->nr ? e.nc : 0)
        edge_add(&e, layer_edge(AB_OP_ENCODER, 1, g->mr + 1, g->nr, n), LAYER_MASKS);
    /* The weights streamed up to stream_rows rows, then the blocking
     * loops: rows around it, widths and depth with tails on both paths
     * (and Q, K and V parts not whole register tiles apart). */
    AROUND(r, e.stream_rows > g->skinny_rows ? e.stream_rows : 0) {
        edge_add(&e, layer_edge(AB_OP_ENCODER, 1, r, g->nr + 1, 2 * g->nr + 1), LAYER_MASKS);
        edge_add(&e, layer_edge(AB_OP_MHA, 1, r, g->mr + 1, 0), LAYER_MASKS);
    }
    AROUND(w, g->mr ? 0 : g->lanes)
        edge_add(&e, layer_edge(AB_OP_ENCODER, 1, 3, w, 2 * g->lanes + 1), LAYER_MASKS);
    /* The FFN's second gemm reading rows 4 KiB apart (F 1024), which crowd
     * one L1 set and are packed, not read in place, its C four register
     * tiles wide and more, so that two threads split it by columns and
     * share the packed rows. */
    if (g->mr)
        edge_add(&e, layer_edge(AB_OP_ENCODER, 1, g->mr + 1, 3 * g->nr + 1, 1024), LAYER_MASKS);
    /* Its skinny path (a decoding step's b rows of one token): widths and
     * depths that end in a vector tail and a partial group of 4 rows of B;
     * and generation, a prompt of 2 then 2 steps of b rows. */
    AROUND(b, g->skinny_rows) {
        const int d = 2 * g->lanes + 1, f = 4 * g->lanes + 2;
        edge_add(&e, layer_edge(AB_OP_ENCODER, b, 1, d, f), LAYER_MASKS);
        ab_shape gen = { .op = AB_OP_GENERATE, .batch = b, .heads = 1, .q_len = 2, .steps = 2,
                         .kv_len = g->lanes + 1, .layers = 1, .head_dim = d, .d_ff = f };
        if (b >= g->skinny_rows)
            edge_add(&e, gen, LAYER_MASKS);
    }

    /* Attention: the last query tile's rows around the micro-tile, query
     * rows around the tile, keys around the key micro-tile and around kc
     * (P·V reduces over keys), streaming's key tiles and its crossover, and
     * head dims around the micro-tile, the vector and kc. */
    AROUND(r, g->attn_rows)
        edge_add(&e, sdpa_edge(1, 2, 2, e.bq + r, g->attn_keys + 1, wide + 1), SDPA_MASKS);
    AROUND(q, e.bq)
        edge_add(&e, sdpa_edge(2, 1, 1, q, 2 * g->attn_keys + 1, g->lanes + 1), SDPA_MASKS);
    const int streams = e.bk > 0 && e.stream_from > 0;
    const int key_edges[] = { g->attn_keys ? g->attn_keys : g->lanes, e.kc,
                              streams ? e.stream_from : 0 };
    for (size_t i = 0; i < sizeof key_edges / sizeof key_edges[0]; i++)
        AROUND(lk, key_edges[i])
            edge_add(&e, sdpa_edge(1, 2, 2, e.lq, lk, g->lanes + 1), KEY_MASKS);
    /* Streamed: a whole number of key tiles past stream_from, two at least. */
    AROUND(lk, streams ? (e.stream_from / e.bk + 2) * e.bk : 0)
        edge_add(&e, sdpa_edge(2, 2, 2, e.lq, lk, g->lanes + 1), STREAM_MASKS);
    const int dh_edges[] = { g->nr, g->lanes, e.kc };
    for (size_t i = 0; i < sizeof dh_edges / sizeof dh_edges[0]; i++)
        AROUND(dh, dh_edges[i])
            edge_add(&e, sdpa_edge(1, 2, 2, e.lq, 2 * wide + 1, dh), SDPA_MASKS);

    /* The decode path: query rows per key/value head at decode_rows (the
     * last on it) and decode_rows + 1 — a head's own rows, query heads
     * sharing one key/value head (multi-query, and groups of 4) — then one
     * row against keys around a split. */
    const int keys = g->decode_split ? g->decode_split + 1 : 2 * g->lanes + 1;
    for (int rows = e.decode_rows; e.decode_rows >= 0 && rows <= e.decode_rows + 1; rows++) {
        edge_add(&e, sdpa_edge(1, 2, 2, rows, keys, g->lanes + 1), KEY_MASKS);
        edge_add(&e, sdpa_edge(1, rows, 1, 1, keys, 2 * g->lanes + 1), KEY_MASKS);
    }
    if (e.decode_rows >= 4) {
        edge_add(&e, sdpa_edge(2, 8, 2, e.decode_rows / 4, keys, g->lanes + 1), KEY_MASKS);
        edge_add(&e, sdpa_edge(2, 8, 2, e.decode_rows / 4 + 1, keys, g->lanes + 1), KEY_MASKS);
    }
    AROUND(lk, e.decode_rows >= 0 ? g->decode_split : 0)
        edge_add(&e, sdpa_edge(2, 4, 2, 1, lk, g->lanes + 1), KEY_MASKS);
    /* Its register blocking: a head's own rows around the row group (a
     * group and the rows left over), and one row around the widest head it
     * keeps in registers, and one vector wide. */
    AROUND(rows, e.decode_rows >= g->decode_row_group ? g->decode_row_group : 0)
        edge_add(&e, sdpa_edge(1, 2, 2, rows, keys, g->lanes + 1), KEY_MASKS);
    AROUND(dh, e.decode_rows >= 1 ? g->decode_row_width : 0)
        edge_add(&e, sdpa_edge(1, 2, 2, 1, keys, dh), KEY_MASKS);
    if (e.decode_rows >= 1 && g->decode_row_width)
        edge_add(&e, sdpa_edge(1, 2, 2, 1, keys, g->lanes), KEY_MASKS);
    return e.n;
}
