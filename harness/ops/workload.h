/*
 * workload.h — the inputs of one shape, filled with reproducible random
 * data, and one call of the operation on a context. Used by `check`, `run`
 * and `tune` alike, so every command exercises the same data.
 */
#ifndef AB_WORKLOAD_H
#define AB_WORKLOAD_H

#include <stdint.h>

#include "attn.h"
#include "ops.h"

typedef struct ab_workload {
    ab_shape shape;
    /* sdpa: q, k, v.  mha/encoder: x_q, x_kv (== x_q for self-attention).
     * decoder, generate: x_q the target ([B][P + N][D]: the prompt, then
     * the token fed at each step), x_kv the memory. */
    float *q, *k, *v, *x_q, *x_kv;     /* sdpa kv=f32: k and v; else k_view, v_view */
    attn_kv_view k_view, v_view;
    attn_mha_weights mha;              /* mha, and the encoder's self-attention */
    attn_encoder_weights enc;
    attn_decoder_weights *dec;         /* decoder: one layer; generate: shape.layers */
    attn_encoder_config enc_cfg;       /* every layer */
    /* bert: the embeddings, shape.layers encoder layers and the [B][L] ids
     * and type ids; the weights are model's when it is not NULL */
    attn_embedding_config emb_cfg;
    attn_embedding_weights emb;
    const attn_encoder_weights *layers;
    int32_t *ids, *type_ids;
    const attn_bert *model;
    /* generate: a KV cache per layer, the chunks fed (P, then N ones) and
     * room for one chunk's activations */
    attn_kv_cache *caches[AB_MAX_LAYERS];
    int *chunks;
    float *chunk;
    attn_mask mask;
    size_t out_len;                  /* floats in the output */
    double max_abs_v;                /* SDPA tolerance: max |V| */
    void *blocks[48];                /* every allocation, for ab_workload_free */
    size_t sizes[48];                /* and its size */
    int n_blocks;
} ab_workload;

/* Allocates and fills the inputs of s from seed. Every buffer starts
 * misalign bytes past a 64-byte boundary. Returns 0, or -1 when out of
 * memory (w is then freed). */
int ab_workload_init(ab_workload *w, const ab_shape *s, uint64_t seed, size_t misalign);
/* The same, but op=bert takes its weights from model (not copied: it must
 * outlive w) when model is not NULL; its shape must be the model's (D, H,
 * F, layers, and L within its positions), which the caller checks. */
int ab_workload_init_model(ab_workload *w, const ab_shape *s, const attn_bert *model,
                           uint64_t seed, size_t misalign);
void ab_workload_free(ab_workload *w);
/* A copy of src whose every buffer sits shift bytes (rounded down to 64)
 * further from where a fresh allocation would put it: the same inputs at
 * other addresses. 0, or -1 when out of memory (dst is then empty). */
int ab_workload_clone(ab_workload *dst, const ab_workload *src, size_t shift);

/* bytes of memory starting misalign (< AB_MAX_SHIFT) bytes past a 64-byte
 * boundary, uninitialized; NULL when out of memory. Release with ab_free. */
#define AB_MAX_SHIFT ((size_t)1 << 20)
void *ab_alloc(size_t bytes, size_t misalign);
float *ab_alloc_floats(size_t n, size_t misalign);
void ab_free(void *p);

/* A small reproducible generator (splitmix64): the same numbers on every
 * platform, so a seed names the same inputs everywhere. */
uint64_t ab_rng_next(uint64_t *state);
double ab_rng_uniform(uint64_t *state);   /* [0, 1) */

/* One call of the shape's operation on ctx (its row's run), writing
 * out. For generate: the caches reset, then the prompt and the N steps
 * (ab_decode_chunks); out is every position's last-layer output,
 * [B][P + N][D]. */
attn_status ab_workload_run(attn_ctx *ctx, const ab_workload *w, float *out);
/* w's weights packed once for ctx, as a deployment would before its calls
 * (the op row's pack); *out NULL when the op has none to pack. Timing
 * (run, tune) packs; the checks against the oracle do not, so that they
 * test the calls as given too (tests/test_packed.c: bit for bit the same). */
attn_status ab_workload_pack(attn_ctx *ctx, const ab_workload *w, attn_packed_weights **out);
/* The same two on a context of library lib (library.h: this build's, or
 * another build's loaded by run --lib). */
attn_status ab_workload_run_in(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                               float *out);
attn_status ab_workload_pack_in(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                                attn_packed_weights **out);

/* Decodes a target through a stack of n_layers decoder layers with caches
 * (one per layer), in chunks: call c feeds the next chunks[c] tokens of x
 * ([B][len][D], Σ chunks = len) through every layer in turn, and writes
 * the last layer's rows to out ([B][len][D]). A layer whose cache is empty
 * (created or reset) gets the memory; later calls pass NULL, as a user
 * does. work holds B·max(chunks)·D floats. The first refused call's
 * status, or ATTN_OK; a call that ran but left its cache other than
 * exactly its tokens longer (a library bug) is ATTN_ERR_INVALID_ARG. */
attn_status ab_decode_chunks(attn_ctx *ctx, const attn_encoder_config *c, int n_layers,
                             const attn_decoder_weights *layers, attn_kv_cache *const *caches,
                             int batch, int len, const int *chunks, int n_chunks, const float *x,
                             int mem_len, const float *memory, const uint8_t *mem_key_padding,
                             float *work, float *out);

/* ---- For the rows' make (ops.h): parts of a workload, each drawn from
 * *seed in turn, every buffer misalign bytes past a 64-byte boundary. Each
 * returns 0, or -1 when out of memory (the caller's make fails, and
 * ab_workload_init frees what was taken). ---------------------------------------- */

/* A block of at least bytes, owned by w (freed with it); NULL when out of memory. */
void *ab_workload_take(ab_workload *w, size_t bytes, size_t misalign);
/* n floats owned by w, uniform in [center − amp, center + amp). */
float *ab_workload_filled(ab_workload *w, size_t n, size_t misalign, double center, double amp,
                          uint64_t *seed);
/* rows × n values uniform in [−1, 1) drawn as ab_workload_filled draws
 * them, stored as type (one row at a time, so that the fp32 values are
 * never all in memory): the view of them. */
int ab_workload_stored(ab_workload *w, attn_dtype type, size_t rows, int n, size_t misalign,
                       uint64_t *seed, attn_kv_view *view);
/* w->mha: the four D×D projections and their biases, ±1/√D. */
int ab_workload_mha_weights(ab_workload *w, size_t misalign, uint64_t *seed);
/* w->x_q ([B][q_len + steps][D]) and w->x_kv: its own [B][kv_len][D]
 * when separate_kv, else x_q; and out_len, the size of x_q. */
int ab_workload_inputs(ab_workload *w, int separate_kv, size_t misalign, uint64_t *seed);
/* w->enc_cfg from the shape (D, H, F, norm, act; LayerNorm eps 1e-5). */
void ab_workload_layer_config(ab_workload *w);
/* w->enc: w->mha as its attention, then its LayerNorms (γ 1 ± 0.2, β
 * ± 0.2) and FFN (W_ff1, b_ff1, b_ff2 ±1/√D, W_ff2 ±1/√F). */
int ab_workload_encoder_weights(ab_workload *w, size_t misalign, uint64_t *seed);
/* n layers' weights, drawn as ab_workload_encoder_weights and
 * ab_workload_mha_weights draw theirs, in one block: NULL when out of
 * memory. */
attn_encoder_weights *ab_workload_encoder_stack(ab_workload *w, int n, size_t misalign,
                                                uint64_t *seed);
attn_decoder_weights *ab_workload_decoder_stack(ab_workload *w, int n, size_t misalign,
                                                uint64_t *seed);

#endif /* AB_WORKLOAD_H */
