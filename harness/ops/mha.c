/* mha.c — op=mha: multi-head attention, self (one input) or cross
 * (queries from x_q, keys and values from x_kv), with every mask. */
#include <stdio.h>

#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    ab_lengths_from_keys(k, s);
    s->cross = k->given & AB_KEY_BIT(cross) ? k->v[AB_KEY_cross] : s->q_len != s->kv_len;
    if (!s->cross && s->q_len != s->kv_len) {
        snprintf(err, len, "shape: self-attention needs Lq == Lk (or cross=1)");
        return -1;
    }
    return 0;
}

static double flops(const ab_shape *s)
{
    double lq = s->q_len, lk = s->kv_len, d = (double)s->heads * s->head_dim;
    return s->batch * (4.0 * lq * d * d + 4.0 * lk * d * d + 4.0 * ab_visible_pairs(s) * d);
}

/* x_q and y; x_kv when it is its own; the weights and biases. */
static double bytes(const ab_shape *s)
{
    double b = s->batch, d = (double)s->heads * s->head_dim;
    double floats = b * s->q_len * d * 2.0 + (s->cross ? b * s->kv_len * d : 0.0)
                  + 4.0 * d * d + 4.0 * d;
    return 4.0 * floats + ab_mask_bytes(s);
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    if (ab_workload_mha_weights(w, misalign, seed) != 0)
        return -1;
    return ab_workload_inputs(w, w->shape.cross, misalign, seed);
}

static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    return lib->mha(ctx, s->heads * s->head_dim, s->heads, s->scale, &w->mha, s->batch,
                    s->q_len, s->kv_len, w->x_q, w->x_kv, &w->mask, out);
}

const ab_op_row ab_op__mha = {
    .name = "mha",
    .description = "multi-head attention: the Q, K, V and output projections around SDPA, "
                   "self or cross",
    .keys = AB_KEY_BIT(B) | AB_KEY_BIT(H) | AB_KEY_BIT(L) | AB_KEY_BIT(Lq) | AB_KEY_BIT(Lk)
          | AB_KEY_BIT(Dh) | AB_KEY_BIT(D) | AB_KEY_BIT(mask) | AB_KEY_BIT(scale)
          | AB_KEY_BIT(cross),
    .masks = AB_MASKS_ALL,
    .text = { AB_KEY_B, AB_KEY_LENGTHS, AB_KEY_D, AB_KEY_H, AB_KEY_cross, AB_KEY_mask,
              AB_KEY_scale, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_D, AB_KEY_H, AB_KEY_LENGTHS, AB_KEY_cross, AB_KEY_mask,
               AB_KEY_scale, AB_KEY_END },
    .resolve = resolve, .flops = flops, .bytes = bytes, .make = make, .run = run,
    .bucket = { .wisdom_op = ATTN_OP_MHA },
    .tolerance = AB_TOL_OUTPUT, .gemms = 1,
};
