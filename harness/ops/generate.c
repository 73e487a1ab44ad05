/* generate.c — op=generate: token-by-token generation through a stack of
 * `layers` decoder layers with KV caches (stored as kv): a prompt of P
 * tokens in one call, then N calls of one token each, over a memory of M. */
#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    s->q_len = k->v[AB_KEY_P];
    s->kv_len = k->given & AB_KEY_BIT(M) ? k->v[AB_KEY_M] : s->q_len;
    /* The sequence, P + N, sizes the caches and the inputs in ints: each
     * key alone may be 2^30, their sum may not (it overflowed). */
    if ((long long)s->q_len + s->steps > 1 << 30) {
        snprintf(err, len, "shape: P + N = %lld is larger than 2^30",
                 (long long)s->q_len + s->steps);
        return -1;
    }
    return 0;
}

/* The whole sequence's products, made token by token: a cache makes the
 * same products as one call over P + N. */
static double flops(const ab_shape *s)
{
    return s->layers * ab_decoder_layer_flops(s->batch, (double)s->q_len + s->steps, s->kv_len,
                                              (double)s->heads * s->head_dim, s->d_ff);
}

/* Bytes one step (one token, every layer) moves with the cache holding
 * `held` tokens before it: the weights it uses, its token in and out; from
 * the cache as stored (kv) the memory's K and V and the `held` earlier
 * tokens' (inputs stored by earlier calls); and its own token's K and V,
 * which it stores there (an output; its reading them back is not counted,
 * as a decoder call's is not). Every term is a whole number below 2^53, so
 * the sum is exact in any order. */
static double step_bytes(const ab_shape *s, double held)
{
    double b = s->batch, d = (double)s->heads * s->head_dim;
    return s->layers * (4.0 * (ab_decoder_weight_floats(d, s->d_ff, 0) + b * 2.0 * d)
                        + ab_decoder_cache_bytes(s, s->kv_len + held)   /* read */
                        + ab_decoder_cache_bytes(s, 1.0));              /* stored */
}

/* The prompt's call is a decoder call with a cache (stored as kv, f32
 * included): it reads x, the memory and every weight, writes y, and stores
 * the keys and values of its P tokens and of the memory's M rows. Each of
 * the N steps then reads its layers' weights again (a stack whose weights
 * exceed the last-level cache must: pass_bytes) and the keys and values of
 * every earlier token, Σ (P + t) for t < N, and stores its own; every call
 * of every layer the memory's padding. */
static double bytes(const ab_shape *s)
{
    double b = s->batch, lq = s->q_len, d = (double)s->heads * s->head_dim, n = s->steps;
    double prompt = s->layers * (4.0 * (b * lq * d * 2.0 + b * s->kv_len * d
                                        + ab_decoder_weight_floats(d, s->d_ff, 1))
                                 + ab_decoder_cache_bytes(s, lq + s->kv_len));
    double earlier = s->layers * ab_decoder_cache_bytes(s, n * lq + n * (n - 1.0) / 2.0);
    return prompt + n * step_bytes(s, 0.0) + earlier + s->layers * (n + 1.0) * ab_mask_bytes(s);
}

/* One pass: the last step, the caches at their longest (P + N − 1 tokens
 * read, the last stored: all P + N of them, and the memory's, touched). */
static double pass_bytes(const ab_shape *s)
{
    return step_bytes(s, s->q_len + s->steps - 1.0) + s->layers * ab_mask_bytes(s);
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    const ab_shape *s = &w->shape;
    if (ab_workload_inputs(w, 1, misalign, seed) != 0)
        return -1;
    ab_workload_layer_config(w);
    if (!(w->dec = ab_workload_decoder_stack(w, s->layers, misalign, seed)))
        return -1;
    /* The prompt in one call, then one token per call. */
    int n = s->steps + 1;
    size_t chunk = (size_t)s->batch * (size_t)s->q_len * (size_t)s->heads * (size_t)s->head_dim;
    if (!(w->chunks = ab_workload_take(w, sizeof(int) * (size_t)n, misalign))
        || !(w->chunk = ab_workload_take(w, sizeof(float) * chunk, misalign)))
        return -1;
    for (int i = 0; i < n; i++)
        w->chunks[i] = i == 0 ? s->q_len : 1;
    for (int l = 0; l < s->layers; l++)
        if (attn_kv_cache_create_typed(&w->caches[l], s->batch, s->heads, s->head_dim,
                                       s->q_len + s->steps, s->kv_type, s->kv_type) != ATTN_OK)
            return -1;
    return 0;
}

static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    for (int l = 0; l < s->layers; l++)
        attn_kv_cache_reset(w->caches[l]);
    (void)lib;   /* its caches are this build's: timed on this build only (ops.h) */
    return ab_decode_chunks(ctx, &w->enc_cfg, s->layers, w->dec, w->caches, s->batch,
                            s->q_len + s->steps, w->chunks, s->steps + 1, w->x_q, s->kv_len,
                            w->x_kv, w->mask.key_padding, w->chunk, out);
}

const ab_op_row ab_op__generate = {
    .name = "generate",
    .description = "generation: a prompt of P tokens, then N tokens one by one, through `layers` "
                   "decoder layers with KV caches over a memory of M",
    .keys = AB_LAYER_KEYS | AB_KEY_BIT(P) | AB_KEY_BIT(N) | AB_KEY_BIT(M) | AB_KEY_BIT(layers)
          | AB_KEY_BIT(kv),
    .masks = AB_MASKS_PADDING,
    .text = { AB_KEY_B, AB_KEY_P, AB_KEY_N, AB_KEY_M, AB_KEY_layers, AB_KEY_D, AB_KEY_H,
              AB_KEY_F, AB_KEY_norm, AB_KEY_act, AB_KEY_kv, AB_KEY_mask, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_D, AB_KEY_H, AB_KEY_P, AB_KEY_N, AB_KEY_M, AB_KEY_layers,
               AB_KEY_F, AB_KEY_norm, AB_KEY_act, AB_KEY_kv, AB_KEY_mask, AB_KEY_END },
    .resolve = resolve, .flops = flops, .bytes = bytes,
    .pass_bytes = pass_bytes, .make = make, .run = run, .this_build_only = 1,
    /* P + N: the bucket of most of its steps (lengths P + 1 … P + N),
     * which take most of its time */
    .bucket = { .wisdom_op = ATTN_OP_ENCODER, .by_sequence = 1 },
    .tolerance = AB_TOL_OUTPUT, .gemms = 1,
    /* a call: the prompt, then N tokens; per new token, the prompt included */
    .rate = { "tokens_per_second", "ms_per_token", AB_KEY_N },
};
