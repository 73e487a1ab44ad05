/*
 * test_errors.c — every bad input of api.md §2 gets its status and leaves the
 * output untouched, for every runnable kernel.
 *
 * Each case starts from a valid call (checked to succeed first) and breaks one
 * thing. The output buffer is filled with a sentinel byte before the call and
 * must still hold it afterwards. In the overflow and out-of-memory cases the
 * declared sizes are far larger than the buffers passed: a library that
 * touched memory before checking would be caught by ASan (make test SAN=1) or
 * crash.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define OUT_FLOATS 4096
#define SENTINEL 0x5a

static float out_buf[OUT_FLOATS];

static int out_untouched(void)
{
    const unsigned char *p = (const unsigned char *)out_buf;
    for (size_t i = 0; i < sizeof out_buf; i++)
        if (p[i] != SENTINEL)
            return 0;
    return 1;
}

/* Inputs: generous zero-filled buffers that every valid base call fits in. */
static float in_a[OUT_FLOATS], in_b[OUT_FLOATS], in_c[OUT_FLOATS];
static float w_buf[8][OUT_FLOATS];
static uint8_t keep_buf[OUT_FLOATS];

/* The weights of a valid encoder layer (the attention's: of a valid MHA call). */
static const attn_encoder_weights base_layer = {
    .attn = { w_buf[0], w_buf[1], w_buf[2], w_buf[3], w_buf[4], w_buf[5], w_buf[6], w_buf[7] },
    .ln1_gamma = in_c, .ln1_beta = in_c, .ln2_gamma = in_c, .ln2_beta = in_c,
    .w_ff1 = in_a, .b_ff1 = in_b, .w_ff2 = in_a, .b_ff2 = in_b,
};

/* ---- One call of any entry point --------------------------------------------- */

/* The entry points that take a context, by the name their cases give. */
typedef enum entry { SDPA, MHA, ENCODER, STACK, EMBED, DECODER } entry;
static const char *const entry_name[] = {
    "sdpa", "mha", "encoder", "encoder stack", "embed", "decoder",
};

/* The arguments of a call of entry, which reads those of its signature.
 * null_config and null_weights pass NULL for the shape or config and for the
 * weights (the stack's layers); null_ids and null_types, for embed's ids and
 * type ids. */
typedef struct call {
    entry entry;
    attn_ctx *ctx;
    int null_config, null_weights, null_ids, null_types;
    attn_sdpa_shape shape;                    /* sdpa */
    int d_model, n_heads;                     /* mha */
    float scale;                              /* mha */
    attn_mha_weights mha;                     /* mha */
    attn_encoder_config config;               /* encoder, stack, decoder */
    attn_encoder_weights layers[3];           /* encoder: layers[0]; stack: n_layers */
    int n_layers;                             /* stack */
    const float *final_gamma, *final_beta;    /* stack */
    attn_decoder_weights decoder;             /* decoder */
    attn_embedding_config embedding;          /* embed */
    attn_embedding_weights tables;            /* embed */
    int32_t ids[6], type_ids[6];              /* embed */
    int position_offset;                      /* embed */
    int batch, q_len, kv_len, seq_len, tgt_len, mem_len;
    const float *q, *k, *v;                   /* sdpa */
    const float *x_q, *x_kv;                  /* mha */
    const float *x;                           /* encoder, stack, decoder */
    const float *memory;                      /* decoder */
    const uint8_t *pad;                       /* decoder: the memory's key padding */
    attn_kv_cache *cache;                     /* decoder */
    attn_mask mask;                           /* sdpa, mha, encoder, stack */
    float *out;                               /* out, y, or embed's x */
} call;

static attn_status run(const call *c)
{
    switch (c->entry) {
    case SDPA:
        return attn_sdpa(c->ctx, c->null_config ? NULL : &c->shape, c->q, c->k, c->v, &c->mask,
                         c->out);
    case MHA:
        return attn_mha(c->ctx, c->d_model, c->n_heads, c->scale,
                        c->null_weights ? NULL : &c->mha, c->batch, c->q_len, c->kv_len, c->x_q,
                        c->x_kv, &c->mask, c->out);
    case ENCODER:
        return attn_encoder_layer(c->ctx, c->null_config ? NULL : &c->config,
                                  c->null_weights ? NULL : &c->layers[0], c->batch, c->seq_len,
                                  c->x, &c->mask, c->out);
    case STACK:
        return attn_encoder(c->ctx, c->null_config ? NULL : &c->config, c->n_layers,
                            c->null_weights ? NULL : c->layers, c->final_gamma, c->final_beta,
                            c->batch, c->seq_len, c->x, &c->mask, c->out);
    case EMBED:
        return attn_embed(c->ctx, c->null_config ? NULL : &c->embedding,
                          c->null_weights ? NULL : &c->tables, c->batch, c->seq_len,
                          c->null_ids ? NULL : c->ids, c->null_types ? NULL : c->type_ids,
                          c->position_offset, c->out);
    case DECODER:
        return attn_decoder_layer(c->ctx, c->null_config ? NULL : &c->config,
                                  c->null_weights ? NULL : &c->decoder, c->batch, c->tgt_len,
                                  c->x, c->mem_len, c->memory, c->pad, c->cache, c->out);
    }
    return ATTN_ERR_INVALID_ARG;   /* not reached: each entry is a case above */
}

/* The case "what": c must give want, and a refused call must leave the
 * output and the decoder's cache as they were (the others pass no cache:
 * attn_kv_cache_length(NULL) is -1 before and after). */
static void expect(const char *kernel, const char *what, const call *c, attn_status want)
{
    t_case("bad input [%s] %s: %s -> %s", kernel, entry_name[c->entry], what,
           attn_strerror(want));
    int before = attn_kv_cache_length(c->cache);
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = run(c);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK) {
        CHECK(out_untouched(), "output written by a failing call");
        CHECK(attn_kv_cache_length(c->cache) == before, "cache length %d -> %d by a failing call",
              before, attn_kv_cache_length(c->cache));
    }
}

/* In the cases functions below, each with its valid call in base, a call to
 * change in c and the kernel's name in kn: base changed by the statements
 * __VA_ARGS__ on c must give want. */
#define CASE(what, want, ...) \
    do { c = base; __VA_ARGS__; expect(kn, what, &c, want); } while (0)

/* An argument of a call, by the field of call that holds it. Its cases name
 * it by the field's last part ("shape.batch": batch). */
typedef struct arg {
    const char *field;
    size_t at;
} arg;

#define ARG(field) { #field, offsetof(call, field) }

static const char *arg_name(const arg *a)
{
    const char *dot = strrchr(a->field, '.');
    return dot ? dot + 1 : a->field;
}

/* For each of the arguments args[0 .. n): base with value (size bytes)
 * written into it must be refused, in the case named format ("NULL %s")
 * with the argument's name. */
static void refused_values(const char *kn, const call *base, const arg *args, size_t n,
                           const void *value, size_t size, const char *format)
{
    for (size_t i = 0; i < n; i++) {
        call c = *base;
        memcpy((char *)&c + args[i].at, value, size);
        char what[64];
        snprintf(what, sizeof what, format, arg_name(&args[i]));
        expect(kn, what, &c, ATTN_ERR_INVALID_ARG);
    }
}

/* In a cases function, the ARGs listed: "NULL name", each const float *
 * argument NULL; "name <= 0", each int argument at 0, then each at -1. */
#define NULL_CASES(...) \
    do { static const arg args_[] = { __VA_ARGS__ }; \
         const float *none = NULL; \
         refused_values(kn, &base, args_, sizeof args_ / sizeof args_[0], &none, sizeof none, \
                        "NULL %s"); } while (0)
#define POSITIVE_CASES(...) \
    do { static const arg args_[] = { __VA_ARGS__ }; \
         for (int bad = 0; bad >= -1; bad--) \
             refused_values(kn, &base, args_, sizeof args_ / sizeof args_[0], &bad, sizeof bad, \
                            "%s <= 0"); } while (0)

/* ---- SDPA ------------------------------------------------------------------ */

static void sdpa_cases(attn_ctx *ctx, const char *kn)
{
    const call base = {
        .entry = SDPA, .ctx = ctx, .shape = { 2, 2, 3, 4, 5, 0.0f, 0, 0 }, .q = in_a, .k = in_b,
        .v = in_c, .out = out_buf,
    };
    call c;
    CASE("valid base call", ATTN_OK, (void)0);
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL shape", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    NULL_CASES(ARG(q), ARG(k), ARG(v));
    CASE("NULL out", ATTN_ERR_INVALID_ARG, c.out = NULL);
    POSITIVE_CASES(ARG(shape.batch), ARG(shape.n_heads), ARG(shape.q_len), ARG(shape.kv_len),
                   ARG(shape.head_dim));
    CASE("scale NaN", ATTN_ERR_INVALID_ARG, c.shape.scale = NAN);
    CASE("scale +inf", ATTN_ERR_INVALID_ARG, c.shape.scale = INFINITY);
    CASE("scale -inf", ATTN_ERR_INVALID_ARG, c.shape.scale = -INFINITY);
    CASE("negative scale is used as is", ATTN_OK, c.shape.scale = -0.5f);
    /* Contract 0.2: causal alignment, grouped key/value heads, a cache's capacity. */
    CASE("causal top-left", ATTN_OK, c.mask.causal = ATTN_CAUSAL_TOP_LEFT);
    CASE("causal bottom-right", ATTN_OK, c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    CASE("causal -1", ATTN_ERR_INVALID_ARG, c.mask.causal = -1);
    CASE("n_kv_heads 1 (multi-query)", ATTN_OK, c.shape.n_kv_heads = 1);
    CASE("n_kv_heads == n_heads", ATTN_OK, c.shape.n_kv_heads = 2);
    CASE("n_kv_heads -1", ATTN_ERR_INVALID_ARG, c.shape.n_kv_heads = -1);
    CASE("n_kv_heads does not divide n_heads", ATTN_ERR_INVALID_ARG, c.shape.n_kv_heads = 3);
    CASE("n_kv_heads above n_heads", ATTN_ERR_INVALID_ARG, c.shape.n_kv_heads = 4);
    CASE("kv_capacity == kv_len", ATTN_OK, c.shape.kv_capacity = 4);
    CASE("kv_capacity above kv_len", ATTN_OK, c.shape.kv_capacity = 6);
    CASE("kv_capacity below kv_len", ATTN_ERR_INVALID_ARG, c.shape.kv_capacity = 3);
    CASE("kv_capacity -1", ATTN_ERR_INVALID_ARG, c.shape.kv_capacity = -1);
    CASE("k and v at their capacity overflow", ATTN_ERR_OVERFLOW,
         (c.shape.batch = 1 << 20, c.shape.kv_capacity = INT_MAX, c.shape.head_dim = 1 << 20));
    CASE("all sizes INT_MAX", ATTN_ERR_OVERFLOW,
         c.shape = (attn_sdpa_shape){ INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, 0.0f, 0, 0 });
    /* One size past 2^28 (api.md §2), though its tensors (8 GiB) fit: q_len
     * near INT_MAX wrapped the kernels' count of query blocks negative, and
     * the call returned ATTN_OK with out unwritten. */
    CASE("q_len INT_MAX, past the largest size", ATTN_ERR_OVERFLOW,
         c.shape = (attn_sdpa_shape){ 1, 1, INT_MAX, 1, 1, 0.0f, 0, 0 });
    CASE("kv_len 2^28 + 1, past the largest size", ATTN_ERR_OVERFLOW,
         c.shape = (attn_sdpa_shape){ 1, 1, 1, (1 << 28) + 1, 1, 0.0f, 0, 0 });
    /* q, k, v fit; only the per-batch keep mask (2^20·2^20·2^24 bytes) does not. */
    CASE("per-batch keep mask size overflows", ATTN_ERR_OVERFLOW,
         (c.shape = (attn_sdpa_shape){ 1 << 20, 1, 1 << 20, 1 << 24, 1, 0.0f, 0, 0 },
          c.mask.keep = keep_buf, c.mask.keep_per_batch = 1));
    /* keep would fit (2^62 bytes); the float bias (2^64 bytes) does not. */
    CASE("per-batch bias size overflows", ATTN_ERR_OVERFLOW,
         (c.shape = (attn_sdpa_shape){ 1 << 20, 1, 1 << 20, 1 << 22, 1, 0.0f, 0, 0 },
          c.mask.bias = in_a, c.mask.bias_per_batch = 1));
}

/* ---- MHA ------------------------------------------------------------------- */

static void mha_cases(attn_ctx *ctx, const char *kn)
{
    const call base = {
        .entry = MHA, .ctx = ctx, .d_model = 8, .n_heads = 2, .mha = base_layer.attn,
        .batch = 2, .q_len = 3, .kv_len = 5, .x_q = in_a, .x_kv = in_b, .out = out_buf,
    };
    call c;
    CASE("valid base call", ATTN_OK, (void)0);
    CASE("no biases (all NULL) is valid", ATTN_OK,
         c.mha.b_q = c.mha.b_k = c.mha.b_v = c.mha.b_o = NULL);
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    NULL_CASES(ARG(mha.w_q), ARG(mha.w_k), ARG(mha.w_v), ARG(mha.w_o), ARG(x_q), ARG(x_kv));
    CASE("NULL y", ATTN_ERR_INVALID_ARG, c.out = NULL);
    POSITIVE_CASES(ARG(d_model), ARG(n_heads), ARG(batch), ARG(q_len), ARG(kv_len));
    CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.n_heads = 3);
    CASE("scale NaN", ATTN_ERR_INVALID_ARG, c.scale = NAN);
    CASE("scale inf", ATTN_ERR_INVALID_ARG, c.scale = INFINITY);
    CASE("causal bottom-right (cross-attention of the last positions)", ATTN_OK,
         c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    CASE("d_model² overflows", ATTN_ERR_OVERFLOW, (c.d_model = INT_MAX, c.n_heads = 1));
    /* Below INT_MAX / 3 the fused Q, K, V product's 3·D wrapped int. */
    CASE("d_model 800000000, past the largest size", ATTN_ERR_OVERFLOW,
         (c.d_model = 800000000, c.n_heads = 1));
    CASE("batch·q_len·d_model overflows", ATTN_ERR_OVERFLOW,
         (c.batch = INT_MAX, c.q_len = INT_MAX, c.kv_len = 1));
    CASE("per-batch keep mask size overflows", ATTN_ERR_OVERFLOW,
         (c.d_model = 1, c.n_heads = 1, c.batch = 1 << 20, c.q_len = 1 << 20,
          c.kv_len = 1 << 24, c.mask.keep = keep_buf, c.mask.keep_per_batch = 1));
    /* Every size fits in size_t, but the projections alone need 2^48 bytes,
     * more than a 47-bit user address space: the allocation must fail. */
    CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
         (c.d_model = 1 << 12, c.n_heads = 1, c.batch = 1 << 16, c.q_len = 1 << 16,
          c.kv_len = 1 << 16));
}

/* ---- Encoder layer ------------------------------------------------------------- */

static void encoder_cases(attn_ctx *ctx, const char *kn)
{
    const call base = {
        .entry = ENCODER, .ctx = ctx,
        .config = { .d_model = 8, .n_heads = 2, .d_ff = 12, .ln_eps = 1e-5f, .norm_first = 1,
                    .act = ATTN_ACT_GELU_ERF },
        .layers = { base_layer }, .batch = 2, .seq_len = 3, .x = in_b, .out = out_buf,
    };
    call c;
    CASE("valid base call", ATTN_OK, (void)0);
    CASE("post-LN, ReLU, eps 0, no FFN biases is valid", ATTN_OK,
         (c.config.norm_first = 0, c.config.act = ATTN_ACT_RELU, c.config.ln_eps = 0.0f,
          c.layers[0].b_ff1 = c.layers[0].b_ff2 = NULL));
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    NULL_CASES(ARG(layers[0].attn.w_q), ARG(layers[0].attn.w_o), ARG(layers[0].ln1_gamma),
               ARG(layers[0].ln1_beta), ARG(layers[0].ln2_gamma), ARG(layers[0].ln2_beta),
               ARG(layers[0].w_ff1), ARG(layers[0].w_ff2), ARG(x));
    CASE("NULL y", ATTN_ERR_INVALID_ARG, c.out = NULL);
    POSITIVE_CASES(ARG(config.d_model), ARG(config.n_heads), ARG(config.d_ff), ARG(batch),
                   ARG(seq_len));
    CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.config.n_heads = 3);
    CASE("ln_eps negative", ATTN_ERR_INVALID_ARG, c.config.ln_eps = -1e-5f);
    CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.config.ln_eps = NAN);
    CASE("ln_eps inf", ATTN_ERR_INVALID_ARG, c.config.ln_eps = INFINITY);
    CASE("activation past the enum", ATTN_ERR_INVALID_ARG, c.config.act = (attn_activation)3);
    CASE("activation negative", ATTN_ERR_INVALID_ARG, c.config.act = (attn_activation)-1);
    CASE("causal bottom-right (Lq == Lk: as top-left)", ATTN_OK,
         c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    /* W1 and W2 fit (8 GiB each at D 1), but d_ff is past 2^28: rounded up
     * to a tile it wrapped int. (Past that limit no product of two sizes can
     * pass 2^63 bytes: the limit is what refuses them.) */
    CASE("d_ff INT_MAX, past the largest size", ATTN_ERR_OVERFLOW,
         (c.config.d_model = 1, c.config.n_heads = 1, c.config.d_ff = INT_MAX));
    CASE("batch·seq_len·d_model overflows", ATTN_ERR_OVERFLOW,
         (c.batch = INT_MAX, c.seq_len = INT_MAX));
    CASE("per-batch bias mask size overflows", ATTN_ERR_OVERFLOW,
         (c.config.d_model = 1, c.config.n_heads = 1, c.config.d_ff = 1, c.batch = 1 << 20,
          c.seq_len = 1 << 22, c.mask.bias = in_a, c.mask.bias_per_batch = 1));
    CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
         (c.config.d_model = 1 << 12, c.config.n_heads = 1, c.config.d_ff = 1 << 12,
          c.batch = 1 << 16, c.seq_len = 1 << 16));
}

/* ---- Embeddings and encoder stack (contract 0.2, §7.5) ---------------------- */

static void embed_cases(attn_ctx *ctx, const char *kn)
{
    /* vocab 5, 4 positions, 2 types, D 8; B 2, L 3 */
    const call base = {
        .entry = EMBED, .ctx = ctx,
        .embedding = { .vocab_size = 5, .max_positions = 4, .n_token_types = 2, .d_model = 8,
                       .ln_eps = 1e-12f },
        .tables = { .token = in_a, .position = in_b, .token_type = in_c, .ln_gamma = in_c,
                    .ln_beta = in_b },
        .batch = 2, .seq_len = 3, .ids = { 0, 4, 2, 3, 1, 0 }, .type_ids = { 0, 1, 1, 0, 0, 1 },
        .out = out_buf,
    };
    call c;
    CASE("valid base call", ATTN_OK, (void)0);
    CASE("no LayerNorm is valid", ATTN_OK, c.tables.ln_gamma = c.tables.ln_beta = NULL);
    CASE("type_ids NULL (type 0) is valid", ATTN_OK, c.null_types = 1);
    CASE("the last positions (offset 1) are valid", ATTN_OK, c.position_offset = 1);
    CASE("no token types, type ids all 0, is valid", ATTN_OK,
         (c.embedding.n_token_types = 0, c.tables.token_type = NULL,
          memset(c.type_ids, 0, sizeof c.type_ids)));
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    CASE("NULL token table", ATTN_ERR_INVALID_ARG, c.tables.token = NULL);
    CASE("NULL position table", ATTN_ERR_INVALID_ARG, c.tables.position = NULL);
    CASE("token types without their table", ATTN_ERR_INVALID_ARG, c.tables.token_type = NULL);
    CASE("ln_gamma without ln_beta", ATTN_ERR_INVALID_ARG, c.tables.ln_beta = NULL);
    CASE("ln_beta without ln_gamma", ATTN_ERR_INVALID_ARG, c.tables.ln_gamma = NULL);
    CASE("NULL ids", ATTN_ERR_INVALID_ARG, c.null_ids = 1);
    CASE("NULL x", ATTN_ERR_INVALID_ARG, c.out = NULL);
    CASE("id = vocab_size (the last one)", ATTN_ERR_INVALID_ARG, c.ids[5] = 5);
    CASE("id negative", ATTN_ERR_INVALID_ARG, c.ids[2] = -1);
    CASE("type id = n_token_types", ATTN_ERR_INVALID_ARG, c.type_ids[4] = 2);
    CASE("type id negative", ATTN_ERR_INVALID_ARG, c.type_ids[0] = -1);
    CASE("no token types, a type id 1", ATTN_ERR_INVALID_ARG,
         (c.embedding.n_token_types = 0, c.tables.token_type = NULL));
    CASE("position_offset negative", ATTN_ERR_INVALID_ARG, c.position_offset = -1);
    CASE("position_offset + seq_len > max_positions", ATTN_ERR_INVALID_ARG,
         c.position_offset = 2);
    CASE("position_offset INT_MAX", ATTN_ERR_INVALID_ARG, c.position_offset = INT_MAX);
    CASE("n_token_types negative", ATTN_ERR_INVALID_ARG, c.embedding.n_token_types = -1);
    POSITIVE_CASES(ARG(embedding.vocab_size), ARG(embedding.max_positions),
                   ARG(embedding.d_model), ARG(batch), ARG(seq_len));
    CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.embedding.ln_eps = NAN);
    CASE("ln_eps negative", ATTN_ERR_INVALID_ARG, c.embedding.ln_eps = -1.0f);
    CASE("vocab·d_model overflows", ATTN_ERR_OVERFLOW,
         (c.embedding.vocab_size = INT_MAX, c.embedding.d_model = INT_MAX));
}

static void stack_cases(attn_ctx *ctx, const char *kn)
{
    const call base = {
        .entry = STACK, .ctx = ctx,
        .config = { .d_model = 8, .n_heads = 2, .d_ff = 12, .ln_eps = 1e-5f, .norm_first = 0,
                    .act = ATTN_ACT_GELU_ERF },
        .layers = { base_layer, base_layer, base_layer }, .n_layers = 3, .final_gamma = in_c,
        .final_beta = in_b, .batch = 2, .seq_len = 3, .x = in_b, .out = out_buf,
    };
    call c;
    CASE("valid base call", ATTN_OK, (void)0);
    CASE("no final LayerNorm is valid", ATTN_OK, c.final_gamma = c.final_beta = NULL);
    CASE("one layer is valid", ATTN_OK, c.n_layers = 1);
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    CASE("NULL layers", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    CASE("0 layers", ATTN_ERR_INVALID_ARG, c.n_layers = 0);
    CASE("-1 layers", ATTN_ERR_INVALID_ARG, c.n_layers = -1);
    CASE("final gamma without beta", ATTN_ERR_INVALID_ARG, c.final_beta = NULL);
    CASE("final beta without gamma", ATTN_ERR_INVALID_ARG, c.final_gamma = NULL);
    CASE("the last layer's w_v NULL", ATTN_ERR_INVALID_ARG, c.layers[2].attn.w_v = NULL);
    CASE("the second layer's ln2_beta NULL", ATTN_ERR_INVALID_ARG,
         c.layers[1].ln2_beta = NULL);
    CASE("NULL x", ATTN_ERR_INVALID_ARG, c.x = NULL);
    CASE("NULL y", ATTN_ERR_INVALID_ARG, c.out = NULL);
    CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.config.n_heads = 3);
    CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    CASE("batch·seq_len·d_model overflows", ATTN_ERR_OVERFLOW,
         (c.batch = INT_MAX, c.seq_len = INT_MAX));
    CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
         (c.config.d_model = 1 << 12, c.config.n_heads = 1, c.config.d_ff = 1 << 12,
          c.batch = 1 << 16, c.seq_len = 1 << 16));
}

/* ---- Decoder layer and KV cache (contract 0.2) ------------------------------- */

/* D 8, H 2, F 12, B 2, memory 3: weights and inputs a fixed non-zero pattern,
 * so that keys and values a refused call appended would change what the
 * cache gives next. */
enum { DEC_D = 8, DEC_F = 12, DEC_B = 2, DEC_M = 3, DEC_CAP = 4 };
static float dec_data[2 * DEC_F * DEC_D];   /* room for every offset view below */

static void cache_cases(const char *kn)
{
    attn_kv_cache *cache = NULL;
    t_case("bad input [%s] kv cache: create, length, reset and destroy", kn);
    CHECK_STATUS(attn_kv_cache_create(NULL, 1, 1, 1, 1), ATTN_ERR_INVALID_ARG);
    static const int bad[4][4] = { { 0, 1, 1, 1 }, { 1, 0, 1, 1 }, { 1, 1, 0, 1 }, { 1, 1, 1, -1 } };
    for (int i = 0; i < 4; i++) {
        CHECK_STATUS(attn_kv_cache_create(&cache, bad[i][0], bad[i][1], bad[i][2], bad[i][3]),
                     ATTN_ERR_INVALID_ARG);
        CHECK(cache == NULL, "a refused create set the cache");
    }
    CHECK_STATUS(attn_kv_cache_create(&cache, INT_MAX, INT_MAX, INT_MAX, INT_MAX),
                 ATTN_ERR_OVERFLOW);
    CHECK_STATUS(attn_kv_cache_create(&cache, 1 << 14, 1 << 14, 1 << 10, 1 << 10),
                 ATTN_ERR_NO_MEMORY);
    CHECK(cache == NULL, "a refused create set the cache");
    CHECK(attn_kv_cache_length(NULL) == -1, "length of NULL is %d", attn_kv_cache_length(NULL));
    attn_kv_cache_reset(NULL);
    attn_kv_cache_destroy(NULL);
    CHECK_STATUS(attn_kv_cache_create(&cache, 1, 2, 4, 8), ATTN_OK);
    CHECK(attn_kv_cache_length(cache) == 0, "a new cache has length %d", attn_kv_cache_length(cache));
    attn_kv_cache_destroy(cache);
}

static void decoder_cases(attn_ctx *ctx, const char *kn)
{
    for (int i = 0; i < 2 * DEC_F * DEC_D; i++)
        dec_data[i] = 0.3f * sinf(0.7f * (float)i + 0.2f);
    static const uint8_t pad[DEC_B * DEC_M] = { 1, 1, 0, 1, 0, 1 };
    const attn_mha_weights mw = { dec_data, dec_data + 3, dec_data + 5, dec_data + 7,
                                  dec_data + 11, NULL, dec_data + 13, dec_data + 17 };
    const call base = {
        .entry = DECODER, .ctx = ctx,
        .config = { .d_model = DEC_D, .n_heads = 2, .d_ff = DEC_F, .ln_eps = 1e-5f,
                    .norm_first = 0, .act = ATTN_ACT_RELU },
        .decoder = { .self_attn = mw, .cross_attn = mw, .ln1_gamma = dec_data + 1,
                     .ln1_beta = dec_data + 2, .ln2_gamma = dec_data + 4, .ln2_beta = dec_data + 6,
                     .ln3_gamma = dec_data + 8, .ln3_beta = dec_data + 9, .w_ff1 = dec_data,
                     .b_ff1 = dec_data + 19, .w_ff2 = dec_data + 1, .b_ff2 = NULL },
        .batch = DEC_B, .tgt_len = 1, .mem_len = DEC_M, .x = dec_data + 23, .memory = dec_data + 29,
        .pad = pad, .out = out_buf,
    };
    call c;
    CASE("valid call without a cache", ATTN_OK, c.tgt_len = 3);
    CASE("pre-LN, GELU, no memory padding is valid", ATTN_OK,
         (c.config.norm_first = 1, c.config.act = ATTN_ACT_GELU_TANH, c.pad = NULL));
    CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    CASE("NULL self w_k", ATTN_ERR_INVALID_ARG, c.decoder.self_attn.w_k = NULL);
    CASE("NULL cross w_o", ATTN_ERR_INVALID_ARG, c.decoder.cross_attn.w_o = NULL);
    NULL_CASES(ARG(decoder.ln3_gamma), ARG(decoder.ln3_beta), ARG(decoder.w_ff2), ARG(x));
    CASE("NULL y", ATTN_ERR_INVALID_ARG, c.out = NULL);
    CASE("NULL memory without a cache", ATTN_ERR_INVALID_ARG, c.memory = NULL);
    POSITIVE_CASES(ARG(batch), ARG(tgt_len), ARG(mem_len), ARG(config.d_ff));
    CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.config.n_heads = 3);
    CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.config.ln_eps = NAN);
    CASE("activation past the enum", ATTN_ERR_INVALID_ARG, c.config.act = (attn_activation)3);
    CASE("batch·tgt_len·d_model overflows", ATTN_ERR_OVERFLOW,
         (c.batch = INT_MAX, c.tgt_len = INT_MAX));

    /* Two caches with the same history of valid calls: the one that also
     * sees every refused call must give the same next step, bit for bit. */
    attn_kv_cache *tested = NULL, *control = NULL;
    t_case("bad input [%s] decoder: caches for the refused calls", kn);
    CHECK_STATUS(attn_kv_cache_create(&tested, DEC_B, 2, DEC_D / 2, DEC_CAP), ATTN_OK);
    CHECK_STATUS(attn_kv_cache_create(&control, DEC_B, 2, DEC_D / 2, DEC_CAP), ATTN_OK);
    if (!tested || !control) {
        attn_kv_cache_destroy(tested);
        attn_kv_cache_destroy(control);
        return;
    }
    CASE("cache of length 0 and NULL memory", ATTN_ERR_INVALID_ARG,
         (c.cache = tested, c.memory = NULL));
    CASE("first step through a cache", ATTN_OK, (c.cache = tested, c.tgt_len = 2));
    c = base;
    c.cache = control;
    c.tgt_len = 2;
    CHECK_STATUS(run(&c), ATTN_OK);
    CASE("cache length 2: memory NULL is valid", ATTN_OK, (c.cache = tested, c.memory = NULL));
    c = base;
    c.cache = control;
    CHECK_STATUS(run(&c), ATTN_OK);
    CASE("cache batch differs", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.batch = 1));
    CASE("cache heads differ", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.config.n_heads = 4));
    CASE("cache head width differs", ATTN_ERR_INVALID_ARG,
         (c.cache = tested, c.config.d_model = 16));
    CASE("mem_len differs from the stored memory", ATTN_ERR_INVALID_ARG,
         (c.cache = tested, c.mem_len = 2));
    CASE("past the capacity (3 + 2 > 4)", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.tgt_len = 2));
    CASE("NULL w_ff1 with a cache", ATTN_ERR_INVALID_ARG,
         (c.cache = tested, c.decoder.w_ff1 = NULL));
    float want[DEC_B * DEC_D];
    c = base;
    c.cache = control;
    c.out = want;
    CHECK_STATUS(run(&c), ATTN_OK);
    CASE("the last step after the refused calls", ATTN_OK, c.cache = tested);
    t_case("bad input [%s] decoder: refused calls left the cache as it was", kn);
    CHECK(memcmp(out_buf, want, sizeof want) == 0, "the step differs from the control cache's");
    CHECK(attn_kv_cache_length(tested) == DEC_CAP, "length %d", attn_kv_cache_length(tested));
    CASE("a full cache", ATTN_ERR_INVALID_ARG, c.cache = tested);
    attn_kv_cache_reset(tested);
    CASE("after reset, NULL memory is refused again", ATTN_ERR_INVALID_ARG,
         (c.cache = tested, c.memory = NULL));
    CASE("after reset, a new mem_len is taken", ATTN_OK, (c.cache = tested, c.mem_len = 2));
    attn_kv_cache_destroy(tested);
    attn_kv_cache_destroy(control);
}

static void bad_inputs(attn_ctx *ctx, const char *kn)
{
    sdpa_cases(ctx, kn);
    mha_cases(ctx, kn);
    encoder_cases(ctx, kn);
    stack_cases(ctx, kn);
    embed_cases(ctx, kn);
    decoder_cases(ctx, kn);
    cache_cases(kn);
}

void test_errors(void)
{
    t_each_context("bad input [%s]: context", 0, bad_inputs);
}
