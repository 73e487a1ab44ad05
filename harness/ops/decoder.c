/* decoder.c — op=decoder: one transformer decoder layer (causal
 * self-attention over L target tokens, cross-attention over a memory of M,
 * then the FFN) without a cache, or with kv other than f32 through a cache
 * of that type; the memory may be padded. */
#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    (void)err, (void)len;
    s->q_len = k->v[AB_KEY_L];
    s->kv_len = k->given & AB_KEY_BIT(M) ? k->v[AB_KEY_M] : s->q_len;
    return 0;
}

double ab_decoder_layer_flops(double b, double lq, double lk, double d, double f)
{
    return b * (8.0 * lq * d * d + 4.0 * (lq * (lq + 1.0) / 2.0) * d     /* self-attention */
                + 4.0 * lq * d * d + 4.0 * lk * d * d + 4.0 * lq * lk * d /* cross-attention */
                + 4.0 * lq * d * f);                                      /* FFN */
}

double ab_decoder_weight_floats(double d, double f, int memory_kv)
{
    double attn = memory_kv ? 8.0 : 6.0;
    return attn * d * d + 2.0 * d * f + attn * d + f + d + 6.0 * d;
}

/* M is the shape's kv_len. */
static double flops(const ab_shape *s)
{
    return ab_decoder_layer_flops(s->batch, s->q_len, s->kv_len, (double)s->heads * s->head_dim,
                                  s->d_ff);
}

double ab_decoder_cache_bytes(const ab_shape *s, double rows)
{
    return (double)s->batch * s->heads * 2.0 * rows * ab_kv_row_bytes(s);
}

/* x and y; the memory; every weight, bias and LayerNorm; with kv other
 * than f32, what the call stores in its cache, as stored: the keys and
 * values of the L target tokens and of the M memory rows (the cache is the
 * call's output, as y is; its reading them back is not counted, as
 * without a cache K and V are intermediates). Every term is a whole
 * number. */
static double bytes(const ab_shape *s)
{
    double b = s->batch, d = (double)s->heads * s->head_dim;
    double floats = b * s->q_len * d * 2.0 + b * s->kv_len * d
                  + ab_decoder_weight_floats(d, s->d_ff, 1);
    double stored = s->kv_type == ATTN_F32
                  ? 0.0 : ab_decoder_cache_bytes(s, (double)s->q_len + s->kv_len);
    return 4.0 * floats + stored + ab_mask_bytes(s);
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    const ab_shape *s = &w->shape;
    if (ab_workload_inputs(w, 1, misalign, seed) != 0)
        return -1;
    ab_workload_layer_config(w);
    if (!(w->dec = ab_workload_decoder_stack(w, 1, misalign, seed)))
        return -1;
    /* kv other than f32: a cache of that type for the whole target. */
    return s->kv_type == ATTN_F32
        || attn_kv_cache_create_typed(&w->caches[0], s->batch, s->heads, s->head_dim, s->q_len,
                                      s->kv_type, s->kv_type) == ATTN_OK ? 0 : -1;
}

/* The layer over the whole target: without a cache, or (kv not f32) as a
 * prompt's call into an empty cache of that type, whose keys and values
 * (and the memory's) it then reads as stored. */
static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    attn_kv_cache_reset(w->caches[0]);
    return lib->decoder_layer(ctx, &w->enc_cfg, w->dec, s->batch, s->q_len, w->x_q, s->kv_len,
                              w->x_kv, w->mask.key_padding, w->caches[0], out);
}

const ab_op_row ab_op__decoder = {
    .name = "decoder",
    .description = "one decoder layer: causal self-attention over L, cross-attention over a "
                   "memory of M, the FFN; no cache with kv=f32, else through a cache of that type",
    .keys = AB_LAYER_KEYS | AB_KEY_BIT(L) | AB_KEY_BIT(M) | AB_KEY_BIT(kv),
    .masks = AB_MASKS_PADDING,
    .text = { AB_KEY_B, AB_KEY_L, AB_KEY_M, AB_KEY_D, AB_KEY_H, AB_KEY_F, AB_KEY_norm, AB_KEY_act,
              AB_KEY_kv, AB_KEY_mask, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_D, AB_KEY_H, AB_KEY_L, AB_KEY_M, AB_KEY_F, AB_KEY_norm,
               AB_KEY_act, AB_KEY_kv, AB_KEY_mask, AB_KEY_END },
    .resolve = resolve, .flops = flops, .bytes = bytes, .make = make, .run = run,
    .this_build_only = 1,
    .bucket = { .wisdom_op = ATTN_OP_ENCODER, .by_sequence = 1 },
    .tolerance = AB_TOL_OUTPUT, .gemms = 1,
};
