/*
 * fuzz_api.c — libFuzzer target: the public API on fuzzed small problems.
 *
 * The input picks a shape (op, sizes 1..8 or so, mask kind, encoder
 * options, cross-attention, scale), a thread count and a data seed; every
 * runnable kernel must then agree with naive within api.md §4 (the bound of
 * harness/measure/verify.c). A second part breaks one argument of the same call
 * (a size of 0 or -1, a product that overflows, D % H != 0, a NULL data
 * pointer, a NaN scale or eps, an unknown activation, key/value heads that
 * do not divide H, a capacity below Lk, a causal value that is no alignment, a decoder call
 * past its cache's capacity or without its memory): the call must fail and leave the output's
 * bytes (and the cache) as they were. The decoder also runs through a cache in fuzzed chunks
 * and must give the whole call's rows. SDPA and generation also run on keys and values
 * stored as f16, bf16 or int8 (contract 0.3), and the input's bytes, read as floats of any
 * bit pattern, go through attn_convert_rows to every type: refused (nothing written) or
 * stored within the type's rounding. Any disagreement traps.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "internal.h"
#include "verify.h"
#include "workload.h"

typedef struct bytes {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned take(bytes *b, unsigned range)
{
    unsigned v = 0;
    if (b->n) {
        v = *b->p++;
        b->n--;
    }
    return range ? v % range : v;
}

static attn_status run_on(const char *kernel, int threads, const ab_workload *w, float *out)
{
    attn_ctx *ctx = NULL;
    attn_status st = attn_ctx_create(&ctx, kernel, threads);
    if (st == ATTN_OK)
        st = ab_workload_run(ctx, w, out);
    attn_ctx_destroy(ctx);
    return st;
}

/* One broken argument: the call must fail and write nothing. */
static void broken_call(const ab_workload *w, unsigned how, float *out, size_t n)
{
    static const int bad_sizes[] = { 0, -1, INT_MIN };
    const ab_shape *s = &w->shape;
    attn_ctx *ctx = NULL;
    if (attn_ctx_create(&ctx, "naive", 1) != ATTN_OK)
        return;
    memset(out, 0x5a, n * sizeof *out);
    attn_status st = ATTN_OK;
    int bad = bad_sizes[how % 3];
    switch (s->op) {
    case AB_OP_SDPA: {
        attn_sdpa_shape sh = { s->batch, s->heads, s->q_len, s->kv_len, s->head_dim, s->scale,
                               s->kv_heads, 0 };
        const float *q = w->q;
        attn_mask m = w->mask;
        switch ((how / 3) % 9) {
        case 0: sh.batch = bad; break;
        case 1: sh.kv_len = bad; break;
        case 2: sh.head_dim = bad; break;
        case 3: sh.batch = sh.n_heads = sh.q_len = INT_MAX; break;   /* overflows */
        case 4: q = NULL; break;
        case 5: sh.n_kv_heads = sh.n_heads + 1; break;               /* does not divide H */
        case 6: sh.kv_capacity = sh.kv_len > 1 ? sh.kv_len - 1 : -1; break;   /* 0 means Lk */
        case 7: m.causal = 3 + (int)(how % 5); break;                 /* not an alignment */
        default: sh.scale = NAN; break;
        }
        st = attn_sdpa(ctx, &sh, q, w->k, w->v, &m, out);
        break;
    }
    case AB_OP_MHA: {
        int d = s->heads * s->head_dim, h = s->heads, b = s->batch, lq = s->q_len;
        const float *x = w->x_q;
        float scale = s->scale;
        switch ((how / 3) % 6) {
        case 0: d = bad; break;
        case 1: lq = bad; break;
        case 2: h = d + 1; break;                                     /* D % H != 0 */
        case 3: b = lq = d = INT_MAX; h = 1; break;                   /* overflows */
        case 4: x = NULL; break;
        default: scale = INFINITY; break;
        }
        st = attn_mha(ctx, d, h, scale, &w->mha, b, lq, s->kv_len, x, w->x_kv, &w->mask, out);
        break;
    }
    case AB_OP_DECODER:
    case AB_OP_GENERATE: {                /* its first layer, on the prompt */
        attn_encoder_config c = w->enc_cfg;
        int b = s->batch, t = s->q_len, m = s->kv_len;
        const float *memory = w->x_kv;
        attn_kv_cache *cache = NULL;
        switch ((how / 3) % 6) {
        case 0: t = bad; break;
        case 1: m = bad; break;
        case 2: memory = NULL; break;                                 /* needed: no cache */
        case 3: c.n_heads = c.d_model + 1; break;                     /* D % H != 0 */
        case 4:                                                       /* past its capacity */
            if (attn_kv_cache_create(&cache, b, c.n_heads, c.d_model / c.n_heads, t) != ATTN_OK)
                __builtin_trap();
            t += 1;
            break;
        default: b = t = INT_MAX; break;                              /* overflows */
        }
        st = attn_decoder_layer(ctx, &c, w->dec, b, t, w->x_q, m, memory, w->mask.key_padding,
                                cache, out);
        if (cache && attn_kv_cache_length(cache) != 0)
            __builtin_trap();            /* a refused call appended to the cache */
        attn_kv_cache_destroy(cache);
        break;
    }
    case AB_OP_BERT: {                   /* the embeddings, or the stack */
        attn_embedding_config ec = w->emb_cfg;
        attn_embedding_weights ew = w->emb;
        attn_encoder_weights layers[4];
        int n_layers = s->layers < 4 ? s->layers : 4, b = s->batch, l = s->q_len;
        memcpy(layers, w->layers, sizeof layers[0] * (size_t)n_layers);
        const float *gamma = NULL;
        const int which = (int)((how / 3) % 6);   /* 0-2 break attn_embed, 3-5 attn_encoder */
        int offset = 0;
        switch (which) {
        case 0: offset = ec.max_positions - l + 1; break;             /* past the positions */
        case 1: ew.ln_beta = NULL; break;                             /* γ without β */
        case 2: b = bad; break;
        case 3: n_layers = 0; break;
        case 4: layers[n_layers - 1].w_ff2 = NULL; break;             /* the last layer's */
        default: gamma = w->emb.ln_gamma; break;                      /* final γ without β */
        }
        if (which <= 2)
            st = attn_embed(ctx, &ec, &ew, b, l, w->ids, w->type_ids, offset, out);
        else
            st = attn_encoder(ctx, &w->enc_cfg, n_layers, layers, gamma, NULL, b, l, w->x_q,
                              &w->mask, out);
        break;
    }
    default: {
        attn_encoder_config c = w->enc_cfg;
        int b = s->batch, l = s->q_len;
        switch ((how / 3) % 6) {
        case 0: c.d_model = bad; break;
        case 1: c.d_ff = bad; break;
        case 2: c.ln_eps = NAN; break;
        case 3: c.act = (attn_activation)99; break;
        case 4: b = l = INT_MAX; c.d_model = INT_MAX; c.n_heads = 1; break;
        default: l = bad; break;
        }
        st = attn_encoder_layer(ctx, &c, &w->enc, b, l, w->x_q, &w->mask, out);
        break;
    }
    }
    attn_ctx_destroy(ctx);
    if (st == ATTN_OK)
        __builtin_trap();                /* a broken call was accepted */
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &out[i], sizeof u);
        if (u != 0x5a5a5a5au)
            __builtin_trap();            /* a failing call wrote its output */
    }
}

/* The decoder through a cache in chunks (from the input: 1 to 4 tokens
 * each), the memory given only on the first call, must give what one call
 * without a cache gives (whole). */
static void cached_decoder(const char *kernel, int threads, const ab_workload *w,
                           const float *whole, bytes *b)
{
    const ab_shape *s = &w->shape;
    size_t d = (size_t)s->heads * s->head_dim, rows = (size_t)s->batch * s->q_len;
    float *work = ab_alloc_floats(rows * d, 0), *out = ab_alloc_floats(rows * d, 0);
    int *chunks = malloc(sizeof(int) * (size_t)s->q_len), n_chunks = 0;
    attn_ctx *ctx = NULL;
    attn_kv_cache *cache = NULL;
    if (!work || !out || !chunks || attn_ctx_create(&ctx, kernel, threads) != ATTN_OK
        || attn_kv_cache_create(&cache, s->batch, s->heads, s->head_dim, s->q_len) != ATTN_OK)
        __builtin_trap();
    for (int p = 0; p < s->q_len; p += chunks[n_chunks++]) {
        int n = 1 + (int)take(b, 4);
        chunks[n_chunks] = n < s->q_len - p ? n : s->q_len - p;
    }
    if (ab_decode_chunks(ctx, &w->enc_cfg, 1, w->dec, &cache, s->batch, s->q_len, chunks,
                         n_chunks, w->x_q, s->kv_len, w->x_kv, w->mask.key_padding, work, out)
        != ATTN_OK)
        __builtin_trap();                /* a valid cached call refused */
    if (!ab_verify(s->op, out, whole, rows * d, w->max_abs_v).ok)
        __builtin_trap();                /* cached decoding differs from the whole call */
    attn_kv_cache_destroy(cache);
    attn_ctx_destroy(ctx);
    free(chunks);
    ab_free(work);
    ab_free(out);
}

/* The input's bytes as rows of floats (any bit pattern: NaN, infinities,
 * subnormals, huge values) through attn_convert_rows to every type: a
 * refusal writes nothing; a conversion keeps each value within the type's
 * rounding (half a step of binary16's 11 bits or bfloat16's 8, half an
 * int8 row's scale). */
static void conversions(const uint8_t *data, size_t size)
{
    enum { DH = 8, ROWS = 4 };
    float x[ROWS * DH] = { 0 }, scale[ROWS], back[DH];
    unsigned char dst[sizeof x];
    memcpy(x, data, size < sizeof x ? size : sizeof x);
    for (int t = ATTN_F16; t <= ATTN_I8; t++) {
        memset(dst, 0x5a, sizeof dst);
        attn_status st = attn_convert_rows((attn_dtype)t, ROWS, DH, x, dst, scale);
        if (st == ATTN_ERR_RANGE) {
            for (size_t i = 0; i < sizeof dst; i++)
                if (dst[i] != 0x5a)
                    __builtin_trap();    /* a refused conversion wrote */
            continue;
        }
        if (st != ATTN_OK)
            __builtin_trap();
        for (int r = 0; r < ROWS; r++) {
            attn_widen_row((attn_dtype)t, dst + (size_t)r * DH * attn_dtype_bytes((attn_dtype)t),
                           scale[r], DH, back);
            for (int d = 0; d < DH; d++) {
                float v = x[r * DH + d], w = back[d];
                if (isnan(v) || isinf(v)) {
                    if (!(isnan(v) ? isnan(w) : w == v))
                        __builtin_trap();   /* non-finite not kept (16-bit types) */
                    continue;
                }
                double err = fabs((double)w - v);
                double bound = t == ATTN_I8 ? 0.5 * scale[r] * (1.0 + 1e-4) + 1e-38
                             : ldexp(fabs(v), t == ATTN_F16 ? -11 : -8) + (t == ATTN_F16 ? 0x1p-25 : 0x1p-133);
                if (!(err <= bound))
                    __builtin_trap();       /* stored outside the type's rounding */
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes b = { data, size };
    static const attn_activation acts[] = { ATTN_ACT_GELU_ERF, ATTN_ACT_GELU_TANH, ATTN_ACT_RELU };
    static const float scales[] = { 0.0f, 1.0f, 0.125f, -0.5f, 8.0f };
    ab_shape s = { 0 };
    s.op = (ab_op)take(&b, AB_OP_COUNT);
    s.batch = 1 + (int)take(&b, 3);
    s.heads = 1 + (int)take(&b, 4);
    s.q_len = 1 + (int)take(&b, 24);
    s.kv_len = s.op == AB_OP_SDPA || ab_op_takes(s.op, AB_KEY_M) || (s.op == AB_OP_MHA && take(&b, 2))
             ? 1 + (int)take(&b, 24) : s.q_len;
    s.cross = s.op == AB_OP_MHA && s.kv_len != s.q_len;
    s.head_dim = 1 + (int)take(&b, 16);
    s.d_ff = 1 + (int)take(&b, 24);
    s.mask = (ab_mask_kind)take(&b, AB_MASK_COUNT);
    s.norm_first = (int)take(&b, 2);
    s.act = acts[take(&b, 3)];
    s.scale = scales[take(&b, 5)];
    if (ab_op_takes(s.op, AB_KEY_M)) {         /* the memory's padding or none; default scale */
        s.mask = s.mask % 2 ? AB_MASK_PADDING : AB_MASK_NONE;
        s.scale = 0.0f;
    }
    if (s.op == AB_OP_BERT) {             /* 1-3 post-LN layers; key padding or none */
        s.mask = s.mask % 2 ? AB_MASK_PADDING : AB_MASK_NONE;
        s.scale = 0.0f;
        s.norm_first = 0;
        s.kv_len = s.q_len;
        s.layers = 1 + (int)take(&b, 3);
    }
    if (s.op == AB_OP_GENERATE) {         /* a prompt of q_len, then steps tokens */
        s.steps = 1 + (int)take(&b, 8);
        s.layers = 1 + (int)take(&b, 3);
    }
    int threads = 1 + (int)take(&b, 3);
    uint64_t seed = take(&b, 0) | (uint64_t)take(&b, 0) << 8;
    unsigned how = take(&b, 0);

    size_t misalign = take(&b, 2) * 4;
    /* Grouped-query SDPA (contract 0.2): a divisor of H key/value heads. */
    unsigned hkv = 1 + take(&b, (unsigned)s.heads);
    if (s.op == AB_OP_SDPA && s.heads % (int)hkv == 0 && (int)hkv != s.heads)
        s.kv_heads = (int)hkv;
    /* Keys and values stored narrower (last, so that older inputs stay fp32). */
    if (ab_op_takes(s.op, AB_KEY_kv))
        s.kv_type = (attn_dtype)take(&b, 4);
    conversions(data, size);
    ab_workload w;
    if (ab_workload_init(&w, &s, seed, misalign) != 0)
        return 0;
    float *ref = ab_alloc_floats(w.out_len, 0), *out = ab_alloc_floats(w.out_len, 0);
    if (ref && out && run_on("naive", 1, &w, ref) == ATTN_OK) {
        for (int i = 0; i < attn_kernel_count(); i++) {
            const char *k = attn_kernel_name(i);
            if (!attn_kernel_supported(k) || strcmp(k, "naive") == 0)
                continue;
            if (run_on(k, threads, &w, out) != ATTN_OK)
                __builtin_trap();        /* a valid call refused */
            if (attn_kernel_math(k) == ATTN_BF16) {
                /* The bf16 bound holds on the check suite's inputs (attnbench
                 * check, tests/test_bf16.c); the scales drawn here (up to 8)
                 * make softmax so peaked that bf16's rounding of the scores
                 * moves it further. A bf16 row must run every valid call and
                 * stay finite wherever the oracle is. */
                for (size_t e = 0; e < w.out_len; e++)
                    if (isfinite(ref[e]) && !isfinite(out[e]))
                        __builtin_trap();
                continue;
            }
            ab_verdict v = ab_verify_kernel(k, &s, out, ref, w.out_len, w.max_abs_v);
            if (!v.ok)
                __builtin_trap();        /* kernel k disagrees with the oracle */
            if (s.op == AB_OP_DECODER)
                cached_decoder(k, threads, &w, ref, &b);
        }
        broken_call(&w, how, out, w.out_len);
    } else if (ref && out) {
        __builtin_trap();                /* the oracle refused a valid call */
    }
    ab_free(ref);
    ab_free(out);
    ab_workload_free(&w);
    return 0;
}
