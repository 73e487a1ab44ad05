/* encoder.c — op=encoder: one transformer encoder layer (self-attention
 * and a feed-forward network, pre- or post-LN), with every mask. */
#include <stdio.h>

#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    ab_lengths_from_keys(k, s);
    if (s->q_len != s->kv_len) {
        snprintf(err, len, "shape: the encoder layer is self-attention: one L");
        return -1;
    }
    return 0;
}

double ab_encoder_layer_flops(const ab_shape *s)
{
    double lq = s->q_len, d = (double)s->heads * s->head_dim;
    return s->batch * (8.0 * lq * d * d + 4.0 * ab_visible_pairs(s) * d + 4.0 * lq * d * s->d_ff);
}

double ab_encoder_weight_floats(double d, double f)
{
    return 4.0 * d * d + 2.0 * d * f + 4.0 * d + f + d + 4.0 * d;
}

/* x and y; the layer's weights. */
static double bytes(const ab_shape *s)
{
    double d = (double)s->heads * s->head_dim;
    double floats = (double)s->batch * s->q_len * d * 2.0 + ab_encoder_weight_floats(d, s->d_ff);
    return 4.0 * floats + ab_mask_bytes(s);
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    if (ab_workload_mha_weights(w, misalign, seed) != 0
        || ab_workload_inputs(w, 0, misalign, seed) != 0)
        return -1;
    ab_workload_layer_config(w);
    return ab_workload_encoder_weights(w, misalign, seed);
}

static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    return lib->encoder_layer(ctx, &w->enc_cfg, &w->enc, s->batch, s->q_len, w->x_q, &w->mask,
                              out);
}

static attn_status pack(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                        attn_packed_weights **out)
{
    return lib->weights_pack_encoder(ctx, &w->enc_cfg, 1, &w->enc, out);
}

const ab_op_row ab_op__encoder = {
    .name = "encoder",
    .description = "one transformer encoder layer: self-attention, then the FFN; pre- or post-LN",
    .keys = AB_LAYER_KEYS | AB_KEY_BIT(L) | AB_KEY_BIT(Lq) | AB_KEY_BIT(Lk),
    .masks = AB_MASKS_ALL,
    .text = { AB_KEY_B, AB_KEY_LENGTHS, AB_KEY_D, AB_KEY_H, AB_KEY_F, AB_KEY_norm, AB_KEY_act,
              AB_KEY_mask, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_D, AB_KEY_H, AB_KEY_LENGTHS, AB_KEY_F, AB_KEY_norm, AB_KEY_act,
               AB_KEY_mask, AB_KEY_END },
    .resolve = resolve, .flops = ab_encoder_layer_flops, .bytes = bytes, .make = make, .run = run,
    .pack = pack,
    .bucket = { .wisdom_op = ATTN_OP_ENCODER },
    .tolerance = AB_TOL_OUTPUT, .gemms = 1,
};
