/* workload.c — reproducible inputs for a shape and one call of its operation. */
#include <limits.h>
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

void *ab_workload_take(ab_workload *w, size_t bytes, size_t misalign)
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

float *ab_workload_filled(ab_workload *w, size_t n, size_t misalign, double center, double amp,
                          uint64_t *seed)
{
    float *p = ab_workload_take(w, n * sizeof(float), misalign);
    for (size_t i = 0; p && i < n; i++)
        p[i] = (float)(center + amp * (2.0 * ab_rng_uniform(seed) - 1.0));
    return p;
}

/* The arrays of one layer: where each goes, its length, and the range it
 * is drawn from (projections and biases ±1/√D, W_ff2 ±1/√F, LayerNorm
 * γ 1 ± 0.2 and β ± 0.2). A decoder layer has two attentions and three
 * LayerNorms (26 arrays), an encoder layer one and two (16). */
#define LAYER_ARRAYS 26
static int layer_arrays(attn_mha_weights *const *mha, int n_mha, const float **const *ln,
                        int n_ln, const float **const ffn[4], size_t d, size_t f,
                        const float **slot[LAYER_ARRAYS], size_t len[LAYER_ARRAYS],
                        double center[LAYER_ARRAYS], double amp[LAYER_ARRAYS])
{
    double wamp = 1.0 / sqrt((double)d);
    int k = 0;
    for (int a = 0; a < n_mha; a++) {
        const float **m[8] = { &mha[a]->w_q, &mha[a]->w_k, &mha[a]->w_v, &mha[a]->w_o,
                               &mha[a]->b_q, &mha[a]->b_k, &mha[a]->b_v, &mha[a]->b_o };
        for (int i = 0; i < 8; i++, k++) {
            slot[k] = m[i];
            len[k] = i < 4 ? d * d : d;
            center[k] = 0.0;
            amp[k] = wamp;
        }
    }
    for (int i = 0; i < n_ln; i++, k++) {
        slot[k] = ln[i];
        len[k] = d;
        center[k] = i % 2 == 0 ? 1.0 : 0.0;   /* the γ */
        amp[k] = 0.2;
    }
    const size_t ffn_len[4] = { f * d, f, d * f, d };
    for (int i = 0; i < 4; i++, k++) {
        slot[k] = ffn[i];
        len[k] = ffn_len[i];
        center[k] = 0.0;
        amp[k] = i == 2 ? 1.0 / sqrt((double)f) : wamp;
    }
    return k;
}

static int decoder_arrays(void *layer, size_t d, size_t f, const float **slot[LAYER_ARRAYS],
                          size_t len[LAYER_ARRAYS], double center[LAYER_ARRAYS],
                          double amp[LAYER_ARRAYS])
{
    attn_decoder_weights *dw = layer;
    attn_mha_weights *const mha[2] = { &dw->self_attn, &dw->cross_attn };
    const float **const ln[6] = { &dw->ln1_gamma, &dw->ln1_beta, &dw->ln2_gamma, &dw->ln2_beta,
                                  &dw->ln3_gamma, &dw->ln3_beta };
    const float **const ffn[4] = { &dw->w_ff1, &dw->b_ff1, &dw->w_ff2, &dw->b_ff2 };
    return layer_arrays(mha, 2, ln, 6, ffn, d, f, slot, len, center, amp);
}

static int encoder_arrays(void *layer, size_t d, size_t f, const float **slot[LAYER_ARRAYS],
                          size_t len[LAYER_ARRAYS], double center[LAYER_ARRAYS],
                          double amp[LAYER_ARRAYS])
{
    attn_encoder_weights *ew = layer;
    attn_mha_weights *const mha[1] = { &ew->attn };
    const float **const ln[4] = { &ew->ln1_gamma, &ew->ln1_beta, &ew->ln2_gamma, &ew->ln2_beta };
    const float **const ffn[4] = { &ew->w_ff1, &ew->b_ff1, &ew->w_ff2, &ew->b_ff2 };
    return layer_arrays(mha, 1, ln, 4, ffn, d, f, slot, len, center, amp);
}

typedef int (*layer_arrays_fn)(void *layer, size_t d, size_t f, const float **slot[LAYER_ARRAYS],
                               size_t len[LAYER_ARRAYS], double center[LAYER_ARRAYS],
                               double amp[LAYER_ARRAYS]);

/* n layers' weights (each elem bytes, its arrays laid out by arrays),
 * carved from one block: every array starts a multiple of 64 bytes into
 * it, so each is misaligned as the block is. */
static void *layer_stack(ab_workload *w, int n, size_t elem, layer_arrays_fn arrays, size_t d,
                         size_t f, size_t misalign, uint64_t *seed)
{
    char *layers = ab_workload_take(w, (size_t)n * elem, 0);   /* pointers: aligned */
    const float **slot[LAYER_ARRAYS];
    size_t len[LAYER_ARRAYS], total = 0;
    double center[LAYER_ARRAYS], amp[LAYER_ARRAYS];
    if (!layers)
        return NULL;
    memset(layers, 0, (size_t)n * elem);
    int count = arrays(layers, d, f, slot, len, center, amp);
    for (int i = 0; i < count; i++)
        total += (len[i] + 15) / 16 * 16;
    float *block = ab_workload_take(w, (size_t)n * total * sizeof(float), misalign);
    if (!block)
        return NULL;
    for (int l = 0; l < n; l++) {
        arrays(layers + (size_t)l * elem, d, f, slot, len, center, amp);
        for (int i = 0; i < count; i++) {
            for (size_t j = 0; j < len[i]; j++)
                block[j] = (float)(center[i] + amp[i] * (2.0 * ab_rng_uniform(seed) - 1.0));
            *slot[i] = block;
            block += (len[i] + 15) / 16 * 16;
        }
    }
    return layers;
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
        uint8_t *pad = ab_workload_take(w, b * lk, misalign);
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
        uint8_t *keep = ab_workload_take(w, rows * lk, misalign);
        if (!keep)
            return -1;
        for (size_t i = 0; i < rows * lk; i++)
            keep[i] = ab_rng_uniform(seed) < 0.7;
        m->keep = keep;
        m->keep_per_batch = kind == AB_MASK_KEEP;
    }
    if (kind == AB_MASK_BIAS || kind == AB_MASK_ALL) {
        size_t rows = kind == AB_MASK_BIAS ? b * lq : lq;
        m->bias = ab_workload_filled(w, rows * lk, misalign, 0.0, 1.0, seed);
        if (!m->bias)
            return -1;
        m->bias_per_batch = kind == AB_MASK_BIAS;
    }
    return 0;
}

int ab_workload_init(ab_workload *w, const ab_shape *s, uint64_t seed, size_t misalign)
{
    return ab_workload_init_model(w, s, NULL, seed, misalign);
}

int ab_workload_init_model(ab_workload *w, const ab_shape *s, const attn_bert *model,
                           uint64_t seed, size_t misalign)
{
    memset(w, 0, sizeof *w);
    const ab_op_row *row = ab_op_row_of(s->op);
    w->shape = *s;
    w->model = row && row->takes_model ? model : NULL;
    /* generate: the target is the prompt and the N tokens fed one by one */
    double target = (double)s->q_len + s->steps;
    double dm = (double)s->heads * s->head_dim;
    double n_layers = s->layers > 1 ? s->layers : 1;
    /* Sizes are each up to 2^30: their products can pass SIZE_MAX and wrap
     * into a small allocation. Every buffer is at most one of these (a
     * layer stack's weights are one block); a row that draws a larger one
     * (op=bert's token table) checks it in its make. */
    double largest = fmax(fmax((double)s->batch * s->heads * fmax(target, s->kv_len) * s->head_dim,
                               (double)s->batch * s->q_len * s->kv_len * 5.0),
                          n_layers * (8.0 * dm * dm + 2.0 * dm * fmax(s->d_ff, 1) + 16.0 * dm
                                      + fmax(s->d_ff, 1) + LAYER_ARRAYS * 16.0));
    if (!row || !(largest * sizeof(float) < (double)(PTRDIFF_MAX / 2)) || target > INT_MAX
        || n_layers > AB_MAX_LAYERS)   /* ab_shape_parse refuses it */
        return -1;
    if (row->make(w, &seed, misalign) != 0 || make_mask(w, misalign, &seed) != 0) {
        ab_workload_free(w);
        return -1;
    }
    return 0;
}

int ab_workload_stored(ab_workload *w, attn_dtype type, size_t rows, int n, size_t misalign,
                       uint64_t *seed, attn_kv_view *view)
{
    char *data = ab_workload_take(w, rows * (size_t)n * attn_dtype_bytes(type), misalign);
    float *scale = type == ATTN_I8 ? ab_workload_take(w, rows * sizeof(float), misalign) : NULL;
    float *row = malloc((size_t)n * sizeof(float));
    int ok = data && row && (scale || type != ATTN_I8);
    for (size_t r = 0; ok && r < rows; r++) {
        for (int j = 0; j < n; j++)
            row[j] = (float)(2.0 * ab_rng_uniform(seed) - 1.0);
        ok = attn_convert_rows(type, 1, n, row, data + r * (size_t)n * attn_dtype_bytes(type),
                               scale ? scale + r : NULL) == ATTN_OK;
    }
    free(row);
    attn_kv_view v = { type, data, scale };
    *view = v;
    return ok ? 0 : -1;
}

int ab_workload_mha_weights(ab_workload *w, size_t misalign, uint64_t *seed)
{
    size_t d = (size_t)w->shape.heads * w->shape.head_dim;
    const float **slots[8] = { &w->mha.w_q, &w->mha.w_k, &w->mha.w_v, &w->mha.w_o,
                               &w->mha.b_q, &w->mha.b_k, &w->mha.b_v, &w->mha.b_o };
    for (int i = 0; i < 8; i++)   /* ±1/√D keeps the projections O(1) */
        if (!(*slots[i] = ab_workload_filled(w, i < 4 ? d * d : d, misalign, 0.0,
                                             1.0 / sqrt((double)d), seed)))
            return -1;
    return 0;
}

int ab_workload_inputs(ab_workload *w, int separate_kv, size_t misalign, uint64_t *seed)
{
    const ab_shape *s = &w->shape;
    size_t b = (size_t)s->batch, d = (size_t)s->heads * s->head_dim;
    size_t target = (size_t)s->q_len + (size_t)s->steps;
    w->x_q = ab_workload_filled(w, b * target * d, misalign, 0.0, 1.0, seed);
    w->x_kv = separate_kv ? ab_workload_filled(w, b * (size_t)s->kv_len * d, misalign, 0.0, 1.0, seed)
                          : w->x_q;
    w->out_len = b * target * d;
    return w->x_q && w->x_kv ? 0 : -1;
}

void ab_workload_layer_config(ab_workload *w)
{
    const ab_shape *s = &w->shape;
    attn_encoder_config c = { s->heads * s->head_dim, s->heads, s->d_ff, 1e-5f, s->norm_first,
                              s->act };
    w->enc_cfg = c;
}

int ab_workload_encoder_weights(ab_workload *w, size_t misalign, uint64_t *seed)
{
    size_t d = (size_t)w->shape.heads * w->shape.head_dim, f = (size_t)w->shape.d_ff;
    double wamp = 1.0 / sqrt((double)d);
    attn_encoder_weights *e = &w->enc;
    e->attn = w->mha;
    e->ln1_gamma = ab_workload_filled(w, d, misalign, 1.0, 0.2, seed);
    e->ln1_beta = ab_workload_filled(w, d, misalign, 0.0, 0.2, seed);
    e->ln2_gamma = ab_workload_filled(w, d, misalign, 1.0, 0.2, seed);
    e->ln2_beta = ab_workload_filled(w, d, misalign, 0.0, 0.2, seed);
    e->w_ff1 = ab_workload_filled(w, f * d, misalign, 0.0, wamp, seed);
    e->b_ff1 = ab_workload_filled(w, f, misalign, 0.0, wamp, seed);
    e->w_ff2 = ab_workload_filled(w, d * f, misalign, 0.0, 1.0 / sqrt((double)f), seed);
    e->b_ff2 = ab_workload_filled(w, d, misalign, 0.0, wamp, seed);
    return e->ln1_gamma && e->ln1_beta && e->ln2_gamma && e->ln2_beta && e->w_ff1 && e->b_ff1
        && e->w_ff2 && e->b_ff2 ? 0 : -1;
}

attn_encoder_weights *ab_workload_encoder_stack(ab_workload *w, int n, size_t misalign,
                                                uint64_t *seed)
{
    return layer_stack(w, n, sizeof(attn_encoder_weights), encoder_arrays,
                       (size_t)w->shape.heads * w->shape.head_dim, (size_t)w->shape.d_ff,
                       misalign, seed);
}

attn_decoder_weights *ab_workload_decoder_stack(ab_workload *w, int n, size_t misalign,
                                                uint64_t *seed)
{
    return layer_stack(w, n, sizeof(attn_decoder_weights), decoder_arrays,
                       (size_t)w->shape.heads * w->shape.head_dim, (size_t)w->shape.d_ff,
                       misalign, seed);
}

/* Every pointer of w into its blocks (at most WORKLOAD_SLOTS). */
#define WORKLOAD_SLOTS 64
static int pointer_slots(ab_workload *w, const void ***slot)
{
    const void **all[] = {
        (const void **)&w->q, (const void **)&w->k, (const void **)&w->v,
        (const void **)&w->k_view.data, (const void **)&w->v_view.data,
        (const void **)&w->k_view.scale, (const void **)&w->v_view.scale,
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
        (const void **)&w->mask.key_padding, (const void **)&w->mask.keep,
        (const void **)&w->mask.bias, (const void **)&w->dec,
        (const void **)&w->chunks, (const void **)&w->chunk,
        (const void **)&w->emb.token, (const void **)&w->emb.position,
        (const void **)&w->emb.token_type, (const void **)&w->emb.ln_gamma,
        (const void **)&w->emb.ln_beta, (const void **)&w->ids, (const void **)&w->type_ids,
        (const void **)&w->layers,
    };
    _Static_assert(sizeof all / sizeof all[0] <= WORKLOAD_SLOTS, "raise WORKLOAD_SLOTS");
    int n = (int)(sizeof all / sizeof all[0]);
    memcpy(slot, all, sizeof all);
    return n;
}

/* p moved from its place in one of src's blocks to the same place in dst's. */
static const void *moved(const void *p, const ab_workload *src, const ab_workload *dst)
{
    for (int i = 0; p && i < src->n_blocks; i++) {
        uintptr_t at = (uintptr_t)p, start = (uintptr_t)src->blocks[i];
        if (at >= start && at - start < src->sizes[i])
            return (const char *)dst->blocks[i] + (at - start);
    }
    return p;
}

int ab_workload_clone(ab_workload *dst, const ab_workload *src, size_t shift)
{
    *dst = *src;
    dst->n_blocks = 0;
    memset(dst->caches, 0, sizeof dst->caches);
    for (int i = 0; i < src->n_blocks; i++) {
        /* The same offset from a 64-byte boundary as the original, plus shift. */
        size_t misalign = shift / 64 * 64 + (uintptr_t)src->blocks[i] % 64;
        void *p = ab_workload_take(dst, src->sizes[i], misalign);
        if (!p) {
            ab_workload_free(dst);
            return -1;
        }
        memcpy(p, src->blocks[i], src->sizes[i]);
    }
    const void **slot[WORKLOAD_SLOTS];
    int n = pointer_slots(dst, slot);
    for (int k = 0; k < n; k++)
        *slot[k] = moved(*slot[k], src, dst);
    /* The layers' arrays, pointed to from the copied stack (a model's
     * layers are not the workload's: they stay where they are). */
    int n_layers = src->shape.layers > 1 ? src->shape.layers : 1;
    for (int l = 0; l < n_layers && (dst->dec || (dst->layers && !dst->model)); l++) {
        const float **field[LAYER_ARRAYS];
        size_t len[LAYER_ARRAYS];
        double center[LAYER_ARRAYS], amp[LAYER_ARRAYS];
        size_t d = (size_t)src->enc_cfg.d_model, f = (size_t)src->enc_cfg.d_ff;
        int count = dst->dec ? decoder_arrays(&dst->dec[l], d, f, field, len, center, amp)
                  : encoder_arrays((attn_encoder_weights *)&dst->layers[l], d, f, field, len,
                                   center, amp);   /* dst's own copy */
        for (int i = 0; i < count; i++)
            *field[i] = moved(*field[i], src, dst);
    }
    /* Caches are scratch: new ones, as the original's. */
    for (int l = 0; l < AB_MAX_LAYERS && src->caches[l]; l++)
        if (attn_kv_cache_create_typed(&dst->caches[l], src->shape.batch, src->shape.heads,
                                       src->shape.head_dim, src->shape.q_len + src->shape.steps,
                                       src->shape.kv_type, src->shape.kv_type)
            != ATTN_OK) {
            ab_workload_free(dst);
            return -1;
        }
    return 0;
}

void ab_workload_free(ab_workload *w)
{
    for (int l = 0; l < AB_MAX_LAYERS; l++) {
        attn_kv_cache_destroy(w->caches[l]);
        w->caches[l] = NULL;
    }
    for (int i = 0; i < w->n_blocks; i++)
        ab_free(w->blocks[i]);
    w->n_blocks = 0;
}

attn_status ab_workload_run_in(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                               float *out)
{
    const ab_op_row *row = ab_op_row_of(w->shape.op);
    return row ? row->run(lib, ctx, w, out) : ATTN_ERR_INVALID_ARG;
}

attn_status ab_workload_run(attn_ctx *ctx, const ab_workload *w, float *out)
{
    return ab_workload_run_in(&ab_library_self, ctx, w, out);
}

attn_status ab_workload_pack_in(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                                attn_packed_weights **out)
{
    const ab_op_row *row = ab_op_row_of(w->shape.op);
    *out = NULL;
    return row && row->pack ? row->pack(lib, ctx, w, out) : ATTN_OK;
}

attn_status ab_workload_pack(attn_ctx *ctx, const ab_workload *w, attn_packed_weights **out)
{
    return ab_workload_pack_in(&ab_library_self, ctx, w, out);
}

attn_status ab_decode_chunks(attn_ctx *ctx, const attn_encoder_config *c, int n_layers,
                             const attn_decoder_weights *layers, attn_kv_cache *const *caches,
                             int batch, int len, const int *chunks, int n_chunks, const float *x,
                             int mem_len, const float *memory, const uint8_t *mem_key_padding,
                             float *work, float *out)
{
    size_t d = (size_t)c->d_model;
    attn_status st = ATTN_OK;
    for (int ci = 0, p = 0; ci < n_chunks && st == ATTN_OK; p += chunks[ci++]) {
        size_t n = (size_t)chunks[ci];
        if (chunks[ci] < 0 || chunks[ci] > len - p)
            return ATTN_ERR_INVALID_ARG;
        if (n == 0)
            continue;
        /* The chunk's rows of every batch, together: [B][n][D]. */
        for (int b = 0; b < batch; b++)
            memcpy(work + b * n * d, x + ((size_t)b * len + p) * d, sizeof(float) * n * d);
        for (int l = 0; l < n_layers && st == ATTN_OK; l++) {   /* in place: y may be x */
            int held = attn_kv_cache_length(caches[l]);
            st = attn_decoder_layer(ctx, c, &layers[l], batch, (int)n, work, mem_len,
                                    held == 0 ? memory : NULL, mem_key_padding, caches[l], work);
            if (st == ATTN_OK && attn_kv_cache_length(caches[l]) != held + (int)n)
                st = ATTN_ERR_INVALID_ARG;   /* the cache must hold exactly what was given */
        }
        for (int b = 0; b < batch && st == ATTN_OK; b++)
            memcpy(out + ((size_t)b * len + p) * d, work + b * n * d, sizeof(float) * n * d);
    }
    return st;
}
