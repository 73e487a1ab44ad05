/*
 * compose.h — the public operations built from a kernel's primitives.
 *
 * Each operation has a workspace function, which sizes every buffer the run
 * will use (checked arithmetic: SIZE_MAX when a size does not fit), and a run
 * function, which cannot fail. api.c checks arguments, sizes the workspace,
 * allocates it, and only then runs: a failing call writes nothing.
 */
#ifndef ATTN_COMPOSE_H
#define ATTN_COMPOSE_H

#include <math.h>

#include "kernel.h"

/* Largest workspace or tensor the library will address, in bytes: no object
 * can be larger than PTRDIFF_MAX, so a size above it is an overflow. */
#define ATTN_SIZE_LIMIT ((size_t)PTRDIFF_MAX)
/* The largest of any one size (a length, D, F, a head width, a batch): the
 * kernels round sizes up to tiles (at most 65536) and take 3·D in int, and
 * at 2^28 none of that can pass INT_MAX (a q_len near INT_MAX once wrapped
 * the count of query blocks negative: no task ran and the call returned
 * ATTN_OK unwritten). No real model comes near it: 268 million tokens. */
#define ATTN_DIM_LIMIT (1 << 28)

/* The scale rule of api.md §1.1: 0 means 1/sqrt(head_dim). */
static inline float attn_resolve_scale(float scale, int head_dim)
{
    return scale != 0.0f ? scale : (float)(1.0 / sqrt((double)head_dim));
}

typedef struct attn_mha_args {
    int batch, q_len, kv_len, d_model, n_heads;
    float scale;                       /* resolved: never 0 */
    const attn_mha_weights *w;
    const float *x_q, *x_kv;
    const attn_mask *mask;             /* NULL when no part is set */
    float *y;
} attn_mha_args;

typedef struct attn_encoder_args {
    const attn_encoder_config *c;
    const attn_encoder_weights *w;
    int batch, seq_len;
    const float *x;
    const attn_mask *mask;             /* NULL when no part is set */
    float *y;
} attn_encoder_args;

/* attn_embed's arguments, checked (ids and type ids in range, positions
 * within the table). */
typedef struct attn_embed_args {
    const attn_embedding_config *c;
    const attn_embedding_weights *w;
    int batch, seq_len;
    const int32_t *ids, *type_ids;     /* type_ids NULL: type 0 */
    int position_offset;
    float *x;
} attn_embed_args;

/* attn_encoder's: layer carries the config, sizes, input, mask and output
 * (its w is NULL: layer i runs with layers[i]). */
typedef struct attn_stack_args {
    attn_encoder_args layer;
    int n_layers;
    const attn_encoder_weights *layers;
    const float *final_gamma, *final_beta;   /* both NULL: no final LayerNorm */
} attn_stack_args;

/* The KV cache (attn.h): self-attention keys and values, [B][H][capacity][Dh]
 * each, and the memory's cross-attention projections, [B][mem_len][D] each
 * (the layout the projection writes; SDPA reads heads as column blocks).
 * Keys are stored as k_type, values as v_type (contract 0.3); an ATTN_I8
 * row's scale is at [B][H][capacity] (mem: [B][mem_len][H]). */
struct attn_kv_cache {
    int batch, n_heads, head_dim, capacity;
    attn_dtype k_type, v_type;
    int length;                        /* target tokens stored */
    void *k, *v;
    float *k_scale, *v_scale;          /* ATTN_I8 only, else NULL */
    int mem_len;                       /* 0: no memory projections stored */
    size_t mem_rows;                   /* rows (B·mem_len·H) allocated in mem_k, mem_v */
    void *mem_k, *mem_v;
    float *mem_k_scale, *mem_v_scale;
};

typedef struct attn_decoder_args {
    const attn_encoder_config *c;
    const attn_decoder_weights *w;
    int batch, tgt_len, mem_len;
    const float *x, *memory;           /* memory unread when the cache has it */
    const uint8_t *mem_key_padding;
    attn_kv_cache *cache;              /* NULL: no cache; else checked to fit */
    float *y;
} attn_decoder_args;

/* The workspace functions read ex's threads and params (its scratch is
 * unused); the run functions find the whole workspace in ex->scratch.
 * SDPA, alone or inside MHA and the encoder, goes through attn_sdpa_run,
 * which runs the oracle's SDPA instead when q or the kernel's output is not
 * finite. */
/* The matrix of the context's packed weights (ex->packed) that kernel
 * packed for W = w0 (or for the Q, K and V weights w0, w1, w2 stacked),
 * n × k; NULL when there is none (api.c). */
const attn_packed_b *attn_packed_lookup(const attn_exec *ex, const char *kernel,
                                        const float *w0, const float *w1, const float *w2, int n,
                                        int k);

size_t attn_sdpa_workspace(const attn_kernel *k, const attn_exec *ex, const attn_sdpa_problem *p);
void   attn_sdpa_run(const attn_kernel *k, const attn_exec *ex, const attn_sdpa_problem *p);

size_t attn_mha_workspace(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a);
void   attn_mha_run(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a);

size_t attn_embed_workspace(const attn_kernel *k, const attn_exec *ex, const attn_embed_args *a);
void   attn_embed_run(const attn_kernel *k, const attn_exec *ex, const attn_embed_args *a);

/* The encoder stack; attn_encoder_layer is a stack of one. */
size_t attn_stack_workspace(const attn_kernel *k, const attn_exec *ex, const attn_stack_args *a);
void   attn_stack_run(const attn_kernel *k, const attn_exec *ex, const attn_stack_args *a);

/* With a cache, the run appends the tokens' keys and values, projects the
 * memory when the cache has length 0 (into mem_k / mem_v, which the caller
 * has sized), and advances length and mem_len. ATTN_ERR_RANGE when the
 * cache's types cannot hold the new keys or values or the memory's: the
 * run then stops before it writes y or advances the cache (the rows past
 * its length may have been written; they are not part of it). */
size_t attn_decoder_workspace(const attn_kernel *k, const attn_exec *ex, const attn_decoder_args *a);
attn_status attn_decoder_run(const attn_kernel *k, const attn_exec *ex, const attn_decoder_args *a);

#endif /* ATTN_COMPOSE_H */
