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

/* ---- SDPA ------------------------------------------------------------------ */

typedef struct sdpa_call {
    attn_ctx *ctx;
    attn_sdpa_shape s;
    int null_shape;
    const float *q, *k, *v;
    attn_mask mask;
    float *out;
} sdpa_call;

static void expect_sdpa(const char *kernel, const char *what, const sdpa_call *c, attn_status want)
{
    t_case("bad input [%s] sdpa: %s -> %s", kernel, what, attn_strerror(want));
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = attn_sdpa(c->ctx, c->null_shape ? NULL : &c->s, c->q, c->k, c->v, &c->mask,
                               c->out);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK)
        CHECK(out_untouched(), "output written by a failing call");
}

static void sdpa_cases(attn_ctx *ctx, const char *kn)
{
    const sdpa_call base = {
        .ctx = ctx, .s = { 2, 2, 3, 4, 5, 0.0f }, .q = in_a, .k = in_b, .v = in_c, .out = out_buf,
    };
    sdpa_call c;
#define SDPA_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_sdpa(kn, what, &c, want); } while (0)
    SDPA_CASE("valid base call", ATTN_OK, (void)0);
    SDPA_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    SDPA_CASE("NULL shape", ATTN_ERR_INVALID_ARG, c.null_shape = 1);
    SDPA_CASE("NULL q", ATTN_ERR_INVALID_ARG, c.q = NULL);
    SDPA_CASE("NULL k", ATTN_ERR_INVALID_ARG, c.k = NULL);
    SDPA_CASE("NULL v", ATTN_ERR_INVALID_ARG, c.v = NULL);
    SDPA_CASE("NULL out", ATTN_ERR_INVALID_ARG, c.out = NULL);
    for (int bad = 0; bad >= -1; bad--) {
        SDPA_CASE("batch <= 0", ATTN_ERR_INVALID_ARG, c.s.batch = bad);
        SDPA_CASE("n_heads <= 0", ATTN_ERR_INVALID_ARG, c.s.n_heads = bad);
        SDPA_CASE("q_len <= 0", ATTN_ERR_INVALID_ARG, c.s.q_len = bad);
        SDPA_CASE("kv_len <= 0", ATTN_ERR_INVALID_ARG, c.s.kv_len = bad);
        SDPA_CASE("head_dim <= 0", ATTN_ERR_INVALID_ARG, c.s.head_dim = bad);
    }
    SDPA_CASE("scale NaN", ATTN_ERR_INVALID_ARG, c.s.scale = NAN);
    SDPA_CASE("scale +inf", ATTN_ERR_INVALID_ARG, c.s.scale = INFINITY);
    SDPA_CASE("scale -inf", ATTN_ERR_INVALID_ARG, c.s.scale = -INFINITY);
    SDPA_CASE("negative scale is used as is", ATTN_OK, c.s.scale = -0.5f);
    /* Contract 0.2: causal alignment, grouped key/value heads, a cache's capacity. */
    SDPA_CASE("causal top-left", ATTN_OK, c.mask.causal = ATTN_CAUSAL_TOP_LEFT);
    SDPA_CASE("causal bottom-right", ATTN_OK, c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    SDPA_CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    SDPA_CASE("causal -1", ATTN_ERR_INVALID_ARG, c.mask.causal = -1);
    SDPA_CASE("n_kv_heads 1 (multi-query)", ATTN_OK, c.s.n_kv_heads = 1);
    SDPA_CASE("n_kv_heads == n_heads", ATTN_OK, c.s.n_kv_heads = 2);
    SDPA_CASE("n_kv_heads -1", ATTN_ERR_INVALID_ARG, c.s.n_kv_heads = -1);
    SDPA_CASE("n_kv_heads does not divide n_heads", ATTN_ERR_INVALID_ARG, c.s.n_kv_heads = 3);
    SDPA_CASE("n_kv_heads above n_heads", ATTN_ERR_INVALID_ARG, c.s.n_kv_heads = 4);
    SDPA_CASE("kv_capacity == kv_len", ATTN_OK, c.s.kv_capacity = 4);
    SDPA_CASE("kv_capacity above kv_len", ATTN_OK, c.s.kv_capacity = 6);
    SDPA_CASE("kv_capacity below kv_len", ATTN_ERR_INVALID_ARG, c.s.kv_capacity = 3);
    SDPA_CASE("kv_capacity -1", ATTN_ERR_INVALID_ARG, c.s.kv_capacity = -1);
    SDPA_CASE("k and v at their capacity overflow", ATTN_ERR_OVERFLOW,
              (c.s.batch = 1 << 20, c.s.kv_capacity = INT_MAX, c.s.head_dim = 1 << 20));
    SDPA_CASE("all sizes INT_MAX", ATTN_ERR_OVERFLOW,
              c.s = (attn_sdpa_shape){ INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, 0.0f, 0, 0 });
    /* q, k, v fit; only the per-batch keep mask (2^20·2^20·2^24 bytes) does not. */
    SDPA_CASE("per-batch keep mask size overflows", ATTN_ERR_OVERFLOW,
              (c.s = (attn_sdpa_shape){ 1 << 20, 1, 1 << 20, 1 << 24, 1, 0.0f, 0, 0 },
               c.mask.keep = keep_buf, c.mask.keep_per_batch = 1));
    /* keep would fit (2^62 bytes); the float bias (2^64 bytes) does not. */
    SDPA_CASE("per-batch bias size overflows", ATTN_ERR_OVERFLOW,
              (c.s = (attn_sdpa_shape){ 1 << 20, 1, 1 << 20, 1 << 22, 1, 0.0f, 0, 0 },
               c.mask.bias = in_a, c.mask.bias_per_batch = 1));
#undef SDPA_CASE
}

/* ---- MHA ------------------------------------------------------------------- */

typedef struct mha_call {
    attn_ctx *ctx;
    int d_model, n_heads;
    float scale;
    attn_mha_weights w;
    int null_weights;
    int batch, q_len, kv_len;
    const float *x_q, *x_kv;
    attn_mask mask;
    float *y;
} mha_call;

static void expect_mha(const char *kernel, const char *what, const mha_call *c, attn_status want)
{
    t_case("bad input [%s] mha: %s -> %s", kernel, what, attn_strerror(want));
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = attn_mha(c->ctx, c->d_model, c->n_heads, c->scale,
                              c->null_weights ? NULL : &c->w, c->batch, c->q_len, c->kv_len,
                              c->x_q, c->x_kv, &c->mask, c->y);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK)
        CHECK(out_untouched(), "output written by a failing call");
}

static const attn_mha_weights all_weights = {
    w_buf[0], w_buf[1], w_buf[2], w_buf[3], w_buf[4], w_buf[5], w_buf[6], w_buf[7],
};

static void mha_cases(attn_ctx *ctx, const char *kn)
{
    const mha_call base = {
        .ctx = ctx, .d_model = 8, .n_heads = 2, .w = all_weights,
        .batch = 2, .q_len = 3, .kv_len = 5, .x_q = in_a, .x_kv = in_b, .y = out_buf,
    };
    mha_call c;
#define MHA_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_mha(kn, what, &c, want); } while (0)
    MHA_CASE("valid base call", ATTN_OK, (void)0);
    MHA_CASE("no biases (all NULL) is valid", ATTN_OK,
             c.w.b_q = c.w.b_k = c.w.b_v = c.w.b_o = NULL);
    MHA_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    MHA_CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    MHA_CASE("NULL w_q", ATTN_ERR_INVALID_ARG, c.w.w_q = NULL);
    MHA_CASE("NULL w_k", ATTN_ERR_INVALID_ARG, c.w.w_k = NULL);
    MHA_CASE("NULL w_v", ATTN_ERR_INVALID_ARG, c.w.w_v = NULL);
    MHA_CASE("NULL w_o", ATTN_ERR_INVALID_ARG, c.w.w_o = NULL);
    MHA_CASE("NULL x_q", ATTN_ERR_INVALID_ARG, c.x_q = NULL);
    MHA_CASE("NULL x_kv", ATTN_ERR_INVALID_ARG, c.x_kv = NULL);
    MHA_CASE("NULL y", ATTN_ERR_INVALID_ARG, c.y = NULL);
    for (int bad = 0; bad >= -1; bad--) {
        MHA_CASE("d_model <= 0", ATTN_ERR_INVALID_ARG, c.d_model = bad);
        MHA_CASE("n_heads <= 0", ATTN_ERR_INVALID_ARG, c.n_heads = bad);
        MHA_CASE("batch <= 0", ATTN_ERR_INVALID_ARG, c.batch = bad);
        MHA_CASE("q_len <= 0", ATTN_ERR_INVALID_ARG, c.q_len = bad);
        MHA_CASE("kv_len <= 0", ATTN_ERR_INVALID_ARG, c.kv_len = bad);
    }
    MHA_CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.n_heads = 3);
    MHA_CASE("scale NaN", ATTN_ERR_INVALID_ARG, c.scale = NAN);
    MHA_CASE("scale inf", ATTN_ERR_INVALID_ARG, c.scale = INFINITY);
    MHA_CASE("causal bottom-right (cross-attention of the last positions)", ATTN_OK,
             c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    MHA_CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    MHA_CASE("d_model² overflows", ATTN_ERR_OVERFLOW, (c.d_model = INT_MAX, c.n_heads = 1));
    MHA_CASE("batch·q_len·d_model overflows", ATTN_ERR_OVERFLOW,
             (c.batch = INT_MAX, c.q_len = INT_MAX, c.kv_len = 1));
    MHA_CASE("per-batch keep mask size overflows", ATTN_ERR_OVERFLOW,
             (c.d_model = 1, c.n_heads = 1, c.batch = 1 << 20, c.q_len = 1 << 20,
              c.kv_len = 1 << 24, c.mask.keep = keep_buf, c.mask.keep_per_batch = 1));
    /* Every size fits in size_t, but the projections alone need 2^48 bytes,
     * more than a 47-bit user address space: the allocation must fail. */
    MHA_CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
             (c.d_model = 1 << 12, c.n_heads = 1, c.batch = 1 << 16, c.q_len = 1 << 16,
              c.kv_len = 1 << 16));
#undef MHA_CASE
}

/* ---- Encoder layer ------------------------------------------------------------- */

typedef struct enc_call {
    attn_ctx *ctx;
    attn_encoder_config c;
    attn_encoder_weights w;
    int null_config, null_weights;
    int batch, seq_len;
    const float *x;
    attn_mask mask;
    float *y;
} enc_call;

static void expect_enc(const char *kernel, const char *what, const enc_call *c, attn_status want)
{
    t_case("bad input [%s] encoder: %s -> %s", kernel, what, attn_strerror(want));
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = attn_encoder_layer(c->ctx, c->null_config ? NULL : &c->c,
                                        c->null_weights ? NULL : &c->w, c->batch, c->seq_len,
                                        c->x, &c->mask, c->y);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK)
        CHECK(out_untouched(), "output written by a failing call");
}

static void encoder_cases(attn_ctx *ctx, const char *kn)
{
    const enc_call base = {
        .ctx = ctx,
        .c = { .d_model = 8, .n_heads = 2, .d_ff = 12, .ln_eps = 1e-5f, .norm_first = 1,
               .act = ATTN_ACT_GELU_ERF },
        .w = { .attn = all_weights, .ln1_gamma = in_c, .ln1_beta = in_c, .ln2_gamma = in_c,
               .ln2_beta = in_c, .w_ff1 = in_a, .b_ff1 = in_b, .w_ff2 = in_a, .b_ff2 = in_b },
        .batch = 2, .seq_len = 3, .x = in_b, .y = out_buf,
    };
    enc_call c;
#define ENC_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_enc(kn, what, &c, want); } while (0)
    ENC_CASE("valid base call", ATTN_OK, (void)0);
    ENC_CASE("post-LN, ReLU, eps 0, no FFN biases is valid", ATTN_OK,
             (c.c.norm_first = 0, c.c.act = ATTN_ACT_RELU, c.c.ln_eps = 0.0f,
              c.w.b_ff1 = c.w.b_ff2 = NULL));
    ENC_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    ENC_CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    ENC_CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    ENC_CASE("NULL w_q", ATTN_ERR_INVALID_ARG, c.w.attn.w_q = NULL);
    ENC_CASE("NULL w_o", ATTN_ERR_INVALID_ARG, c.w.attn.w_o = NULL);
    ENC_CASE("NULL ln1_gamma", ATTN_ERR_INVALID_ARG, c.w.ln1_gamma = NULL);
    ENC_CASE("NULL ln1_beta", ATTN_ERR_INVALID_ARG, c.w.ln1_beta = NULL);
    ENC_CASE("NULL ln2_gamma", ATTN_ERR_INVALID_ARG, c.w.ln2_gamma = NULL);
    ENC_CASE("NULL ln2_beta", ATTN_ERR_INVALID_ARG, c.w.ln2_beta = NULL);
    ENC_CASE("NULL w_ff1", ATTN_ERR_INVALID_ARG, c.w.w_ff1 = NULL);
    ENC_CASE("NULL w_ff2", ATTN_ERR_INVALID_ARG, c.w.w_ff2 = NULL);
    ENC_CASE("NULL x", ATTN_ERR_INVALID_ARG, c.x = NULL);
    ENC_CASE("NULL y", ATTN_ERR_INVALID_ARG, c.y = NULL);
    for (int bad = 0; bad >= -1; bad--) {
        ENC_CASE("d_model <= 0", ATTN_ERR_INVALID_ARG, c.c.d_model = bad);
        ENC_CASE("n_heads <= 0", ATTN_ERR_INVALID_ARG, c.c.n_heads = bad);
        ENC_CASE("d_ff <= 0", ATTN_ERR_INVALID_ARG, c.c.d_ff = bad);
        ENC_CASE("batch <= 0", ATTN_ERR_INVALID_ARG, c.batch = bad);
        ENC_CASE("seq_len <= 0", ATTN_ERR_INVALID_ARG, c.seq_len = bad);
    }
    ENC_CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.c.n_heads = 3);
    ENC_CASE("ln_eps negative", ATTN_ERR_INVALID_ARG, c.c.ln_eps = -1e-5f);
    ENC_CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.c.ln_eps = NAN);
    ENC_CASE("ln_eps inf", ATTN_ERR_INVALID_ARG, c.c.ln_eps = INFINITY);
    ENC_CASE("activation past the enum", ATTN_ERR_INVALID_ARG, c.c.act = (attn_activation)3);
    ENC_CASE("activation negative", ATTN_ERR_INVALID_ARG, c.c.act = (attn_activation)-1);
    ENC_CASE("causal bottom-right (Lq == Lk: as top-left)", ATTN_OK,
             c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT);
    ENC_CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    /* d_model² · 4 bytes still fits below 2^63; d_ff · d_model · 4 does not. */
    ENC_CASE("d_ff·d_model overflows", ATTN_ERR_OVERFLOW,
             (c.c.d_model = 1518500000, c.c.n_heads = 1, c.c.d_ff = INT_MAX));
    ENC_CASE("batch·seq_len·d_model overflows", ATTN_ERR_OVERFLOW,
             (c.batch = INT_MAX, c.seq_len = INT_MAX));
    ENC_CASE("per-batch bias mask size overflows", ATTN_ERR_OVERFLOW,
             (c.c.d_model = 1, c.c.n_heads = 1, c.c.d_ff = 1, c.batch = 1 << 20,
              c.seq_len = 1 << 22, c.mask.bias = in_a, c.mask.bias_per_batch = 1));
    ENC_CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
             (c.c.d_model = 1 << 12, c.c.n_heads = 1, c.c.d_ff = 1 << 12, c.batch = 1 << 16,
              c.seq_len = 1 << 16));
#undef ENC_CASE
}

/* ---- Encoder stack and embeddings (contract 0.2, §7.5) ---------------------- */

typedef struct stack_call {
    attn_ctx *ctx;
    attn_encoder_config c;
    attn_encoder_weights layers[3];
    int n_layers, null_config, null_layers;
    const float *final_gamma, *final_beta;
    int batch, seq_len;
    const float *x;
    attn_mask mask;
    float *y;
} stack_call;

static void expect_stack(const char *kernel, const char *what, const stack_call *c,
                         attn_status want)
{
    t_case("bad input [%s] encoder stack: %s -> %s", kernel, what, attn_strerror(want));
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = attn_encoder(c->ctx, c->null_config ? NULL : &c->c, c->n_layers,
                                  c->null_layers ? NULL : c->layers, c->final_gamma,
                                  c->final_beta, c->batch, c->seq_len, c->x, &c->mask, c->y);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK)
        CHECK(out_untouched(), "output written by a failing call");
}

static void stack_cases(attn_ctx *ctx, const char *kn)
{
    const attn_encoder_weights layer = {
        .attn = all_weights, .ln1_gamma = in_c, .ln1_beta = in_c, .ln2_gamma = in_c,
        .ln2_beta = in_c, .w_ff1 = in_a, .b_ff1 = in_b, .w_ff2 = in_a, .b_ff2 = in_b,
    };
    const stack_call base = {
        .ctx = ctx,
        .c = { .d_model = 8, .n_heads = 2, .d_ff = 12, .ln_eps = 1e-5f, .norm_first = 0,
               .act = ATTN_ACT_GELU_ERF },
        .layers = { layer, layer, layer }, .n_layers = 3, .final_gamma = in_c, .final_beta = in_b,
        .batch = 2, .seq_len = 3, .x = in_b, .y = out_buf,
    };
    stack_call c;
#define STACK_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_stack(kn, what, &c, want); } while (0)
    STACK_CASE("valid base call", ATTN_OK, (void)0);
    STACK_CASE("no final LayerNorm is valid", ATTN_OK, c.final_gamma = c.final_beta = NULL);
    STACK_CASE("one layer is valid", ATTN_OK, c.n_layers = 1);
    STACK_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    STACK_CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    STACK_CASE("NULL layers", ATTN_ERR_INVALID_ARG, c.null_layers = 1);
    STACK_CASE("0 layers", ATTN_ERR_INVALID_ARG, c.n_layers = 0);
    STACK_CASE("-1 layers", ATTN_ERR_INVALID_ARG, c.n_layers = -1);
    STACK_CASE("final gamma without beta", ATTN_ERR_INVALID_ARG, c.final_beta = NULL);
    STACK_CASE("final beta without gamma", ATTN_ERR_INVALID_ARG, c.final_gamma = NULL);
    STACK_CASE("the last layer's w_v NULL", ATTN_ERR_INVALID_ARG, c.layers[2].attn.w_v = NULL);
    STACK_CASE("the second layer's ln2_beta NULL", ATTN_ERR_INVALID_ARG,
               c.layers[1].ln2_beta = NULL);
    STACK_CASE("NULL x", ATTN_ERR_INVALID_ARG, c.x = NULL);
    STACK_CASE("NULL y", ATTN_ERR_INVALID_ARG, c.y = NULL);
    STACK_CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.c.n_heads = 3);
    STACK_CASE("causal 3", ATTN_ERR_INVALID_ARG, c.mask.causal = 3);
    STACK_CASE("batch·seq_len·d_model overflows", ATTN_ERR_OVERFLOW,
               (c.batch = INT_MAX, c.seq_len = INT_MAX));
    STACK_CASE("workspace larger than the address space", ATTN_ERR_NO_MEMORY,
               (c.c.d_model = 1 << 12, c.c.n_heads = 1, c.c.d_ff = 1 << 12, c.batch = 1 << 16,
                c.seq_len = 1 << 16));
#undef STACK_CASE
}

typedef struct embed_call {
    attn_ctx *ctx;
    attn_embedding_config c;
    attn_embedding_weights w;
    int null_config, null_weights;
    int batch, seq_len;
    int32_t ids[6], type_ids[6];
    int null_ids, null_types;
    int position_offset;
    float *x;
} embed_call;

static void expect_embed(const char *kernel, const char *what, const embed_call *c,
                         attn_status want)
{
    t_case("bad input [%s] embed: %s -> %s", kernel, what, attn_strerror(want));
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = attn_embed(c->ctx, c->null_config ? NULL : &c->c,
                                c->null_weights ? NULL : &c->w, c->batch, c->seq_len,
                                c->null_ids ? NULL : c->ids, c->null_types ? NULL : c->type_ids,
                                c->position_offset, c->x);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK)
        CHECK(out_untouched(), "output written by a failing call");
}

static void embed_cases(attn_ctx *ctx, const char *kn)
{
    /* vocab 5, 4 positions, 2 types, D 8; B 2, L 3 */
    const embed_call base = {
        .ctx = ctx,
        .c = { .vocab_size = 5, .max_positions = 4, .n_token_types = 2, .d_model = 8,
               .ln_eps = 1e-12f },
        .w = { .token = in_a, .position = in_b, .token_type = in_c, .ln_gamma = in_c,
               .ln_beta = in_b },
        .batch = 2, .seq_len = 3, .ids = { 0, 4, 2, 3, 1, 0 }, .type_ids = { 0, 1, 1, 0, 0, 1 },
        .x = out_buf,
    };
    embed_call c;
#define EMBED_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_embed(kn, what, &c, want); } while (0)
    EMBED_CASE("valid base call", ATTN_OK, (void)0);
    EMBED_CASE("no LayerNorm is valid", ATTN_OK, c.w.ln_gamma = c.w.ln_beta = NULL);
    EMBED_CASE("type_ids NULL (type 0) is valid", ATTN_OK, c.null_types = 1);
    EMBED_CASE("the last positions (offset 1) are valid", ATTN_OK, c.position_offset = 1);
    EMBED_CASE("no token types, type ids all 0, is valid", ATTN_OK,
               (c.c.n_token_types = 0, c.w.token_type = NULL, memset(c.type_ids, 0, sizeof c.type_ids)));
    EMBED_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    EMBED_CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    EMBED_CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    EMBED_CASE("NULL token table", ATTN_ERR_INVALID_ARG, c.w.token = NULL);
    EMBED_CASE("NULL position table", ATTN_ERR_INVALID_ARG, c.w.position = NULL);
    EMBED_CASE("token types without their table", ATTN_ERR_INVALID_ARG, c.w.token_type = NULL);
    EMBED_CASE("ln_gamma without ln_beta", ATTN_ERR_INVALID_ARG, c.w.ln_beta = NULL);
    EMBED_CASE("ln_beta without ln_gamma", ATTN_ERR_INVALID_ARG, c.w.ln_gamma = NULL);
    EMBED_CASE("NULL ids", ATTN_ERR_INVALID_ARG, c.null_ids = 1);
    EMBED_CASE("NULL x", ATTN_ERR_INVALID_ARG, c.x = NULL);
    EMBED_CASE("id = vocab_size (the last one)", ATTN_ERR_INVALID_ARG, c.ids[5] = 5);
    EMBED_CASE("id negative", ATTN_ERR_INVALID_ARG, c.ids[2] = -1);
    EMBED_CASE("type id = n_token_types", ATTN_ERR_INVALID_ARG, c.type_ids[4] = 2);
    EMBED_CASE("type id negative", ATTN_ERR_INVALID_ARG, c.type_ids[0] = -1);
    EMBED_CASE("no token types, a type id 1", ATTN_ERR_INVALID_ARG,
               (c.c.n_token_types = 0, c.w.token_type = NULL));
    EMBED_CASE("position_offset negative", ATTN_ERR_INVALID_ARG, c.position_offset = -1);
    EMBED_CASE("position_offset + seq_len > max_positions", ATTN_ERR_INVALID_ARG,
               c.position_offset = 2);
    EMBED_CASE("position_offset INT_MAX", ATTN_ERR_INVALID_ARG, c.position_offset = INT_MAX);
    EMBED_CASE("n_token_types negative", ATTN_ERR_INVALID_ARG, c.c.n_token_types = -1);
    for (int bad = 0; bad >= -1; bad--) {
        EMBED_CASE("vocab_size <= 0", ATTN_ERR_INVALID_ARG, c.c.vocab_size = bad);
        EMBED_CASE("max_positions <= 0", ATTN_ERR_INVALID_ARG, c.c.max_positions = bad);
        EMBED_CASE("d_model <= 0", ATTN_ERR_INVALID_ARG, c.c.d_model = bad);
        EMBED_CASE("batch <= 0", ATTN_ERR_INVALID_ARG, c.batch = bad);
        EMBED_CASE("seq_len <= 0", ATTN_ERR_INVALID_ARG, c.seq_len = bad);
    }
    EMBED_CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.c.ln_eps = NAN);
    EMBED_CASE("ln_eps negative", ATTN_ERR_INVALID_ARG, c.c.ln_eps = -1.0f);
    EMBED_CASE("vocab·d_model overflows", ATTN_ERR_OVERFLOW,
               (c.c.vocab_size = INT_MAX, c.c.d_model = INT_MAX));
#undef EMBED_CASE
}

/* ---- Decoder layer and KV cache (contract 0.2) ------------------------------- */

/* D 8, H 2, F 12, B 2, memory 3: weights and inputs a fixed non-zero pattern,
 * so that keys and values a refused call appended would change what the
 * cache gives next. */
enum { DEC_D = 8, DEC_F = 12, DEC_B = 2, DEC_M = 3, DEC_CAP = 4 };
static float dec_data[2 * DEC_F * DEC_D];   /* room for every offset view below */

typedef struct dec_call {
    attn_ctx *ctx;
    attn_encoder_config c;
    attn_decoder_weights w;
    int null_config, null_weights;
    int batch, tgt_len, mem_len;
    const float *x, *memory;
    const uint8_t *pad;
    attn_kv_cache *cache;
    float *y;
} dec_call;

static attn_status dec_run(const dec_call *c)
{
    return attn_decoder_layer(c->ctx, c->null_config ? NULL : &c->c, c->null_weights ? NULL : &c->w,
                              c->batch, c->tgt_len, c->x, c->mem_len, c->memory, c->pad, c->cache,
                              c->y);
}

static void expect_dec(const char *kernel, const char *what, const dec_call *c, attn_status want)
{
    t_case("bad input [%s] decoder: %s -> %s", kernel, what, attn_strerror(want));
    int before = attn_kv_cache_length(c->cache);
    memset(out_buf, SENTINEL, sizeof out_buf);
    attn_status st = dec_run(c);
    CHECK_STATUS(st, want);
    if (want != ATTN_OK) {
        CHECK(out_untouched(), "output written by a failing call");
        CHECK(attn_kv_cache_length(c->cache) == before, "cache length %d -> %d by a failing call",
              before, attn_kv_cache_length(c->cache));
    }
}

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
    const dec_call base = {
        .ctx = ctx,
        .c = { .d_model = DEC_D, .n_heads = 2, .d_ff = DEC_F, .ln_eps = 1e-5f, .norm_first = 0,
               .act = ATTN_ACT_RELU },
        .w = { .self_attn = mw, .cross_attn = mw, .ln1_gamma = dec_data + 1, .ln1_beta = dec_data + 2,
               .ln2_gamma = dec_data + 4, .ln2_beta = dec_data + 6, .ln3_gamma = dec_data + 8,
               .ln3_beta = dec_data + 9, .w_ff1 = dec_data, .b_ff1 = dec_data + 19,
               .w_ff2 = dec_data + 1, .b_ff2 = NULL },
        .batch = DEC_B, .tgt_len = 1, .mem_len = DEC_M, .x = dec_data + 23, .memory = dec_data + 29,
        .pad = pad, .y = out_buf,
    };
    dec_call c;
#define DEC_CASE(what, want, ...) do { c = base; __VA_ARGS__; expect_dec(kn, what, &c, want); } while (0)
    DEC_CASE("valid call without a cache", ATTN_OK, c.tgt_len = 3);
    DEC_CASE("pre-LN, GELU, no memory padding is valid", ATTN_OK,
             (c.c.norm_first = 1, c.c.act = ATTN_ACT_GELU_TANH, c.pad = NULL));
    DEC_CASE("NULL context", ATTN_ERR_INVALID_ARG, c.ctx = NULL);
    DEC_CASE("NULL config", ATTN_ERR_INVALID_ARG, c.null_config = 1);
    DEC_CASE("NULL weights", ATTN_ERR_INVALID_ARG, c.null_weights = 1);
    DEC_CASE("NULL self w_k", ATTN_ERR_INVALID_ARG, c.w.self_attn.w_k = NULL);
    DEC_CASE("NULL cross w_o", ATTN_ERR_INVALID_ARG, c.w.cross_attn.w_o = NULL);
    DEC_CASE("NULL ln3_gamma", ATTN_ERR_INVALID_ARG, c.w.ln3_gamma = NULL);
    DEC_CASE("NULL ln3_beta", ATTN_ERR_INVALID_ARG, c.w.ln3_beta = NULL);
    DEC_CASE("NULL w_ff2", ATTN_ERR_INVALID_ARG, c.w.w_ff2 = NULL);
    DEC_CASE("NULL x", ATTN_ERR_INVALID_ARG, c.x = NULL);
    DEC_CASE("NULL y", ATTN_ERR_INVALID_ARG, c.y = NULL);
    DEC_CASE("NULL memory without a cache", ATTN_ERR_INVALID_ARG, c.memory = NULL);
    for (int bad = 0; bad >= -1; bad--) {
        DEC_CASE("batch <= 0", ATTN_ERR_INVALID_ARG, c.batch = bad);
        DEC_CASE("tgt_len <= 0", ATTN_ERR_INVALID_ARG, c.tgt_len = bad);
        DEC_CASE("mem_len <= 0", ATTN_ERR_INVALID_ARG, c.mem_len = bad);
        DEC_CASE("d_ff <= 0", ATTN_ERR_INVALID_ARG, c.c.d_ff = bad);
    }
    DEC_CASE("d_model % n_heads != 0", ATTN_ERR_INVALID_ARG, c.c.n_heads = 3);
    DEC_CASE("ln_eps NaN", ATTN_ERR_INVALID_ARG, c.c.ln_eps = NAN);
    DEC_CASE("activation past the enum", ATTN_ERR_INVALID_ARG, c.c.act = (attn_activation)3);
    DEC_CASE("batch·tgt_len·d_model overflows", ATTN_ERR_OVERFLOW,
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
    DEC_CASE("cache of length 0 and NULL memory", ATTN_ERR_INVALID_ARG,
             (c.cache = tested, c.memory = NULL));
    DEC_CASE("first step through a cache", ATTN_OK, (c.cache = tested, c.tgt_len = 2));
    c = base;
    c.cache = control;
    c.tgt_len = 2;
    CHECK_STATUS(dec_run(&c), ATTN_OK);
    DEC_CASE("cache length 2: memory NULL is valid", ATTN_OK, (c.cache = tested, c.memory = NULL));
    c = base;
    c.cache = control;
    CHECK_STATUS(dec_run(&c), ATTN_OK);
    DEC_CASE("cache batch differs", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.batch = 1));
    DEC_CASE("cache heads differ", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.c.n_heads = 4));
    DEC_CASE("cache head width differs", ATTN_ERR_INVALID_ARG,
             (c.cache = tested, c.c.d_model = 16));
    DEC_CASE("mem_len differs from the stored memory", ATTN_ERR_INVALID_ARG,
             (c.cache = tested, c.mem_len = 2));
    DEC_CASE("past the capacity (3 + 2 > 4)", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.tgt_len = 2));
    DEC_CASE("NULL w_ff1 with a cache", ATTN_ERR_INVALID_ARG, (c.cache = tested, c.w.w_ff1 = NULL));
    float want[DEC_B * DEC_D];
    c = base;
    c.cache = control;
    c.y = want;
    CHECK_STATUS(dec_run(&c), ATTN_OK);
    DEC_CASE("the last step after the refused calls", ATTN_OK, c.cache = tested);
    t_case("bad input [%s] decoder: refused calls left the cache as it was", kn);
    CHECK(memcmp(out_buf, want, sizeof want) == 0, "the step differs from the control cache's");
    CHECK(attn_kv_cache_length(tested) == DEC_CAP, "length %d", attn_kv_cache_length(tested));
    DEC_CASE("a full cache", ATTN_ERR_INVALID_ARG, c.cache = tested);
    attn_kv_cache_reset(tested);
    DEC_CASE("after reset, NULL memory is refused again", ATTN_ERR_INVALID_ARG,
             (c.cache = tested, c.memory = NULL));
    DEC_CASE("after reset, a new mem_len is taken", ATTN_OK, (c.cache = tested, c.mem_len = 2));
#undef DEC_CASE
    attn_kv_cache_destroy(tested);
    attn_kv_cache_destroy(control);
}

void test_errors(void)
{
    const char *kernels[64];
    int n = t_kernels(kernels, 64);
    for (int i = 0; i < n; i++) {
        attn_ctx *ctx = NULL;
        t_case("bad input [%s]: context", kernels[i]);
        CHECK_STATUS(attn_ctx_create(&ctx, kernels[i], 0), ATTN_OK);
        if (!ctx)
            continue;
        sdpa_cases(ctx, kernels[i]);
        mha_cases(ctx, kernels[i]);
        encoder_cases(ctx, kernels[i]);
        stack_cases(ctx, kernels[i]);
        embed_cases(ctx, kernels[i]);
        decoder_cases(ctx, kernels[i]);
        cache_cases(kernels[i]);
        attn_ctx_destroy(ctx);
    }
}
