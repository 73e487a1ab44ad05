/* workload.c — reproducible inputs for a shape and one call of its operation. */
#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

/* Allocations are 64-byte aligned plus misalign; the block's own start is
 * stored in the 8 bytes below the 64-byte boundary under the returned
 * pointer (the header keeps them inside the block), so ab_free can find it. */
void *ab_alloc(size_t bytes, size_t misalign)
{
    void *base = NULL;
    const size_t header = 64;
    if (misalign >= AB_MAX_SHIFT || bytes > SIZE_MAX - header - AB_MAX_SHIFT
        || posix_memalign(&base, 64, header + misalign + bytes) != 0)
        return NULL;
    char *p = (char *)base + header + misalign;
    memcpy(p - misalign % 64 - sizeof(void *), &base, sizeof(void *));
    return p;
}

float *ab_alloc_floats(size_t n, size_t misalign)
{
    return n > SIZE_MAX / sizeof(float) ? NULL : ab_alloc(n * sizeof(float), misalign);
}

void ab_free(void *p)
{
    if (!p)
        return;
    uintptr_t boundary = (uintptr_t)p & ~(uintptr_t)63;
    void *base;
    memcpy(&base, (char *)boundary - sizeof(void *), sizeof(void *));
    free(base);
}

uint64_t ab_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double ab_rng_uniform(uint64_t *s)
{
    return (double)(ab_rng_next(s) >> 11) * 0x1.0p-53;
}

/* A block of at least bytes, owned by w. */
static void *take(ab_workload *w, size_t bytes, size_t misalign)
{
    if (w->n_blocks == (int)(sizeof w->blocks / sizeof w->blocks[0]))
        return NULL;
    void *p = ab_alloc(bytes, misalign);
    if (p) {
        w->sizes[w->n_blocks] = bytes;
        w->blocks[w->n_blocks++] = p;
    }
    return p;
}

/* Uniform in [center − amp, center + amp). */
static float *filled(ab_workload *w, size_t n, size_t misalign, double center, double amp,
                     uint64_t *seed)
{
    float *p = take(w, n * sizeof(float), misalign);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(center + amp * (2.0 * ab_rng_uniform(seed) - 1.0));
    return p;
}

static int make_mask(ab_workload *w, size_t misalign, uint64_t *seed)
{
    const ab_shape *s = &w->shape;
    size_t b = (size_t)s->batch, lq = (size_t)s->q_len, lk = (size_t)s->kv_len;
    ab_mask_kind kind = s->mask;
    attn_mask *m = &w->mask;
    memset(m, 0, sizeof *m);

    m->causal = ab_shape_causal(s);
    if (kind == AB_MASK_PADDING || kind == AB_MASK_PADALL || kind == AB_MASK_ALL) {
        uint8_t *pad = take(w, b * lk, misalign);
        if (!pad)
            return -1;
        /* Batch i pads its last i·Lk/(2B) keys: every batch but the first
         * has padding, none loses more than half, so no row is empty... */
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < lk; j++)
                pad[i * lk + j] = j < lk - i * lk / (2 * b);
        /* ...except with padall, where the last batch is padding throughout. */
        if (kind == AB_MASK_PADALL)
            memset(pad + (b - 1) * lk, 0, lk);
        m->key_padding = pad;
    }
    if (kind == AB_MASK_KEEP || kind == AB_MASK_ALL) {
        size_t rows = kind == AB_MASK_KEEP ? b * lq : lq;
        uint8_t *keep = take(w, rows * lk, misalign);
        if (!keep)
            return -1;
        for (size_t i = 0; i < rows * lk; i++)
            keep[i] = ab_rng_uniform(seed) < 0.7;
        m->keep = keep;
        m->keep_per_batch = kind == AB_MASK_KEEP;
    }
    if (kind == AB_MASK_BIAS || kind == AB_MASK_ALL) {
        size_t rows = kind == AB_MASK_BIAS ? b * lq : lq;
        m->bias = filled(w, rows * lk, misalign, 0.0, 1.0, seed);
        if (!m->bias)
            return -1;
        m->bias_per_batch = kind == AB_MASK_BIAS;
    }
    return 0;
}

int ab_workload_init(ab_workload *w, const ab_shape *s, uint64_t seed, size_t misalign)
{
    memset(w, 0, sizeof *w);
    w->shape = *s;
    /* Sizes are each up to 2^30: their products can pass SIZE_MAX and wrap
     * into a small allocation. Every buffer is at most one of these. */
    double largest = fmax(fmax((double)s->batch * s->heads * fmax(s->q_len, s->kv_len) * s->head_dim,
                               (double)s->batch * s->q_len * s->kv_len * 5.0),
                          fmax((double)s->heads * s->head_dim * s->heads * s->head_dim,
                               (double)s->heads * s->head_dim * fmax(s->d_ff, 1)));
    if (!(largest * sizeof(float) < (double)(PTRDIFF_MAX / 2)))
        return -1;
    size_t b = (size_t)s->batch, lq = (size_t)s->q_len, lk = (size_t)s->kv_len;
    size_t h = (size_t)s->heads, dh = (size_t)s->head_dim, d = h * dh, f = (size_t)s->d_ff;
    double wamp = 1.0 / sqrt((double)d);   /* keeps projections O(1) */
    int ok = 1;

    if (s->op == AB_OP_SDPA) {
        w->q = filled(w, b * h * lq * dh, misalign, 0.0, 1.0, &seed);
        size_t hkv = (size_t)ab_shape_kv_heads(s);
        w->k = filled(w, b * hkv * lk * dh, misalign, 0.0, 1.0, &seed);
        w->v = filled(w, b * hkv * lk * dh, misalign, 0.0, 1.0, &seed);
        ok = w->q && w->k && w->v;
        w->max_abs_v = 1.0;
        w->out_len = b * h * lq * dh;
    } else {
        const float **slots[8] = { &w->mha.w_q, &w->mha.w_k, &w->mha.w_v, &w->mha.w_o,
                                   &w->mha.b_q, &w->mha.b_k, &w->mha.b_v, &w->mha.b_o };
        for (int i = 0; i < 8; i++)
            ok &= (*slots[i] = filled(w, i < 4 ? d * d : d, misalign, 0.0, wamp, &seed)) != NULL;
        w->x_q = filled(w, b * lq * d, misalign, 0.0, 1.0, &seed);
        w->x_kv = s->cross || s->op == AB_OP_DECODER
                ? filled(w, b * lk * d, misalign, 0.0, 1.0, &seed) : w->x_q;
        ok &= w->x_q && w->x_kv;
        w->out_len = b * lq * d;
    }
    if (ok && (s->op == AB_OP_ENCODER || s->op == AB_OP_DECODER)) {
        /* The encoder's weights, and the decoder's as far as they are the
         * same (its LN1, LN2 and FFN); then the decoder's own. */
        attn_encoder_weights *e = &w->enc;
        e->attn = w->mha;
        e->ln1_gamma = filled(w, d, misalign, 1.0, 0.2, &seed);
        e->ln1_beta = filled(w, d, misalign, 0.0, 0.2, &seed);
        e->ln2_gamma = filled(w, d, misalign, 1.0, 0.2, &seed);
        e->ln2_beta = filled(w, d, misalign, 0.0, 0.2, &seed);
        e->w_ff1 = filled(w, f * d, misalign, 0.0, wamp, &seed);
        e->b_ff1 = filled(w, f, misalign, 0.0, wamp, &seed);
        e->w_ff2 = filled(w, d * f, misalign, 0.0, 1.0 / sqrt((double)f), &seed);
        e->b_ff2 = filled(w, d, misalign, 0.0, wamp, &seed);
        ok = e->ln1_gamma && e->ln1_beta && e->ln2_gamma && e->ln2_beta && e->w_ff1
          && e->b_ff1 && e->w_ff2 && e->b_ff2;
        attn_encoder_config c = { (int)d, s->heads, s->d_ff, 1e-5f, s->norm_first, s->act };
        w->enc_cfg = c;
    }
    if (ok && s->op == AB_OP_DECODER) {
        attn_decoder_weights *dw = &w->dec;
        const float **cross[8] = { &dw->cross_attn.w_q, &dw->cross_attn.w_k, &dw->cross_attn.w_v,
                                   &dw->cross_attn.w_o, &dw->cross_attn.b_q, &dw->cross_attn.b_k,
                                   &dw->cross_attn.b_v, &dw->cross_attn.b_o };
        for (int i = 0; i < 8; i++)
            ok &= (*cross[i] = filled(w, i < 4 ? d * d : d, misalign, 0.0, wamp, &seed)) != NULL;
        dw->self_attn = w->mha;
        dw->ln1_gamma = w->enc.ln1_gamma;
        dw->ln1_beta = w->enc.ln1_beta;
        dw->ln2_gamma = w->enc.ln2_gamma;
        dw->ln2_beta = w->enc.ln2_beta;
        dw->ln3_gamma = filled(w, d, misalign, 1.0, 0.2, &seed);
        dw->ln3_beta = filled(w, d, misalign, 0.0, 0.2, &seed);
        dw->w_ff1 = w->enc.w_ff1;
        dw->b_ff1 = w->enc.b_ff1;
        dw->w_ff2 = w->enc.w_ff2;
        dw->b_ff2 = w->enc.b_ff2;
        ok &= dw->ln3_gamma && dw->ln3_beta;
    }
    if (!ok || make_mask(w, misalign, &seed) != 0) {
        ab_workload_free(w);
        return -1;
    }
    return 0;
}

/* Every pointer of w into its blocks (at most WORKLOAD_SLOTS). */
#define WORKLOAD_SLOTS 64
static int pointer_slots(ab_workload *w, const void ***slot)
{
    const void **all[] = {
        (const void **)&w->q, (const void **)&w->k, (const void **)&w->v,
        (const void **)&w->x_q, (const void **)&w->x_kv,
        (const void **)&w->mha.w_q, (const void **)&w->mha.w_k, (const void **)&w->mha.w_v,
        (const void **)&w->mha.w_o, (const void **)&w->mha.b_q, (const void **)&w->mha.b_k,
        (const void **)&w->mha.b_v, (const void **)&w->mha.b_o,
        (const void **)&w->enc.attn.w_q, (const void **)&w->enc.attn.w_k,
        (const void **)&w->enc.attn.w_v, (const void **)&w->enc.attn.w_o,
        (const void **)&w->enc.attn.b_q, (const void **)&w->enc.attn.b_k,
        (const void **)&w->enc.attn.b_v, (const void **)&w->enc.attn.b_o,
        (const void **)&w->enc.ln1_gamma, (const void **)&w->enc.ln1_beta,
        (const void **)&w->enc.ln2_gamma, (const void **)&w->enc.ln2_beta,
        (const void **)&w->enc.w_ff1, (const void **)&w->enc.b_ff1,
        (const void **)&w->enc.w_ff2, (const void **)&w->enc.b_ff2,
        (const void **)&w->dec.self_attn.w_q, (const void **)&w->dec.self_attn.w_k,
        (const void **)&w->dec.self_attn.w_v, (const void **)&w->dec.self_attn.w_o,
        (const void **)&w->dec.self_attn.b_q, (const void **)&w->dec.self_attn.b_k,
        (const void **)&w->dec.self_attn.b_v, (const void **)&w->dec.self_attn.b_o,
        (const void **)&w->dec.cross_attn.w_q, (const void **)&w->dec.cross_attn.w_k,
        (const void **)&w->dec.cross_attn.w_v, (const void **)&w->dec.cross_attn.w_o,
        (const void **)&w->dec.cross_attn.b_q, (const void **)&w->dec.cross_attn.b_k,
        (const void **)&w->dec.cross_attn.b_v, (const void **)&w->dec.cross_attn.b_o,
        (const void **)&w->dec.ln1_gamma, (const void **)&w->dec.ln1_beta,
        (const void **)&w->dec.ln2_gamma, (const void **)&w->dec.ln2_beta,
        (const void **)&w->dec.ln3_gamma, (const void **)&w->dec.ln3_beta,
        (const void **)&w->dec.w_ff1, (const void **)&w->dec.b_ff1,
        (const void **)&w->dec.w_ff2, (const void **)&w->dec.b_ff2,
        (const void **)&w->mask.key_padding, (const void **)&w->mask.keep,
        (const void **)&w->mask.bias,
    };
    _Static_assert(sizeof all / sizeof all[0] <= WORKLOAD_SLOTS, "raise WORKLOAD_SLOTS");
    int n = (int)(sizeof all / sizeof all[0]);
    memcpy(slot, all, sizeof all);
    return n;
}

int ab_workload_clone(ab_workload *dst, const ab_workload *src, size_t shift)
{
    *dst = *src;
    dst->n_blocks = 0;
    for (int i = 0; i < src->n_blocks; i++) {
        /* The same offset from a 64-byte boundary as the original, plus shift. */
        size_t misalign = shift / 64 * 64 + (uintptr_t)src->blocks[i] % 64;
        void *p = take(dst, src->sizes[i], misalign);
        if (!p) {
            ab_workload_free(dst);
            return -1;
        }
        memcpy(p, src->blocks[i], src->sizes[i]);
    }
    const void **slot[WORKLOAD_SLOTS];
    int n = pointer_slots(dst, slot);
    for (int k = 0; k < n; k++)
        for (int i = 0; *slot[k] && i < src->n_blocks; i++)
            if (*slot[k] == src->blocks[i]) {
                *slot[k] = dst->blocks[i];
                break;
            }
    return 0;
}

void ab_workload_free(ab_workload *w)
{
    for (int i = 0; i < w->n_blocks; i++)
        ab_free(w->blocks[i]);
    w->n_blocks = 0;
}

attn_status ab_workload_run(attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    switch (s->op) {
    case AB_OP_SDPA: {
        attn_sdpa_shape sh = { s->batch, s->heads, s->q_len, s->kv_len, s->head_dim, s->scale,
                                s->kv_heads, 0 };
        return attn_sdpa(ctx, &sh, w->q, w->k, w->v, &w->mask, out);
    }
    case AB_OP_MHA:
        return attn_mha(ctx, s->heads * s->head_dim, s->heads, s->scale, &w->mha, s->batch,
                        s->q_len, s->kv_len, w->x_q, w->x_kv, &w->mask, out);
    case AB_OP_ENCODER:
        return attn_encoder_layer(ctx, &w->enc_cfg, &w->enc, s->batch, s->q_len, w->x_q,
                                  &w->mask, out);
    case AB_OP_DECODER:   /* no cache: the layer over the whole target */
        return attn_decoder_layer(ctx, &w->enc_cfg, &w->dec, s->batch, s->q_len, w->x_q,
                                  s->kv_len, w->x_kv, w->mask.key_padding, NULL, out);
    default:
        return ATTN_ERR_INVALID_ARG;
    }
}
