/*
 * workload.h — the inputs of one shape, filled with reproducible random
 * data, and one call of the operation on a context. Used by `check`, `run`
 * and `tune` alike, so every command exercises the same data.
 */
#ifndef AB_WORKLOAD_H
#define AB_WORKLOAD_H

#include <stdint.h>

#include "attn.h"
#include "suites.h"

typedef struct ab_workload {
    ab_shape shape;
    /* sdpa: q, k, v.  mha/encoder: x_q, x_kv (== x_q for self-attention).
     * decoder: x_q the target, x_kv the memory. */
    float *q, *k, *v, *x_q, *x_kv;
    attn_mha_weights mha;              /* mha, and the layers' self-attention */
    attn_encoder_weights enc;
    attn_decoder_weights dec;          /* its self_attn is mha */
    attn_encoder_config enc_cfg;       /* both layers */
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

/* One call of the shape's operation on ctx, writing out. */
attn_status ab_workload_run(attn_ctx *ctx, const ab_workload *w, float *out);

#endif /* AB_WORKLOAD_H */
