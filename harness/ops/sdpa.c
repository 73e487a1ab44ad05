/* sdpa.c — op=sdpa: scaled dot-product attention on [B][H][L][Dh], with
 * grouped key/value heads (Hkv) and every mask; decoding is Lq = 1; keys
 * and values stored as kv (attn_sdpa_kv) when it is not f32. */
#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    (void)err, (void)len;
    ab_lengths_from_keys(k, s);
    return 0;
}

static double flops(const ab_shape *s)
{
    return 4.0 * s->batch * s->heads * ab_visible_pairs(s) * s->head_dim;
}

/* Keys some query sees: all of them, but under a top-left causal mask with
 * Lq < Lk the keys from Lq on, which no query reaches. */
static double keys_read(const ab_shape *s)
{
    return ab_shape_causal(s) == ATTN_CAUSAL_TOP_LEFT && s->q_len < s->kv_len ? s->q_len
                                                                              : s->kv_len;
}

/* Q and the output; K and V of the key/value heads only, of the keys some
 * query sees, as stored (kv: their elements, and an int8 row's scale). */
static double bytes(const ab_shape *s)
{
    double q_out = 4.0 * s->batch * s->head_dim * 2.0 * s->heads * s->q_len;
    double kv_rows = 2.0 * s->batch * ab_shape_kv_heads(s) * keys_read(s);
    return q_out + kv_rows * ab_kv_row_bytes(s) + ab_mask_bytes(s);
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    const ab_shape *s = &w->shape;
    size_t b = (size_t)s->batch, dh = (size_t)s->head_dim;
    size_t q = b * (size_t)s->heads * (size_t)s->q_len * dh;
    size_t kv_rows = b * (size_t)ab_shape_kv_heads(s) * (size_t)s->kv_len;
    w->q = ab_workload_filled(w, q, misalign, 0.0, 1.0, seed);
    w->max_abs_v = 1.0;   /* the values, and their stored forms too */
    w->out_len = q;
    if (!w->q)
        return -1;
    if (s->kv_type != ATTN_F32) {   /* the same draws, stored narrower: K's, then V's */
        if (ab_workload_stored(w, s->kv_type, kv_rows, s->head_dim, misalign, seed, &w->k_view))
            return -1;
        return ab_workload_stored(w, s->kv_type, kv_rows, s->head_dim, misalign, seed,
                                  &w->v_view);
    }
    w->k = ab_workload_filled(w, kv_rows * dh, misalign, 0.0, 1.0, seed);
    w->v = ab_workload_filled(w, kv_rows * dh, misalign, 0.0, 1.0, seed);
    return w->k && w->v ? 0 : -1;
}

static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    attn_sdpa_shape sh = { s->batch, s->heads, s->q_len, s->kv_len, s->head_dim, s->scale,
                           s->kv_heads, 0 };
    if (s->kv_type != ATTN_F32)
        return lib->sdpa_kv(ctx, &sh, w->q, &w->k_view, &w->v_view, &w->mask, out);
    return lib->sdpa(ctx, &sh, w->q, w->k, w->v, &w->mask, out);
}

const ab_op_row ab_op__sdpa = {
    .name = "sdpa",
    .description = "softmax(Q·Kᵀ·scale + mask)·V on [B][H][L][Dh]; Hkv grouped key/value heads",
    .keys = AB_KEY_BIT(B) | AB_KEY_BIT(H) | AB_KEY_BIT(Hkv) | AB_KEY_BIT(L) | AB_KEY_BIT(Lq)
          | AB_KEY_BIT(Lk) | AB_KEY_BIT(Dh) | AB_KEY_BIT(D) | AB_KEY_BIT(mask) | AB_KEY_BIT(scale)
          | AB_KEY_BIT(kv),
    .masks = AB_MASKS_ALL,
    .text = { AB_KEY_B, AB_KEY_LENGTHS, AB_KEY_H, AB_KEY_Hkv, AB_KEY_Dh, AB_KEY_kv, AB_KEY_mask,
              AB_KEY_scale, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_H, AB_KEY_Hkv, AB_KEY_LENGTHS, AB_KEY_Dh, AB_KEY_kv, AB_KEY_mask,
               AB_KEY_scale, AB_KEY_END },
    .resolve = resolve, .flops = flops, .bytes = bytes, .make = make, .run = run,
    .bucket = { .wisdom_op = ATTN_OP_SDPA },
    .tolerance = AB_TOL_VALUES,
};
