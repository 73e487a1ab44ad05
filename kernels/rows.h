/*
 * rows.h — row operations shared by the portable kernels (blocked, einsum):
 * applying a mask to a row of scores, softmax of a row, and LayerNorm.
 */
#ifndef ATTN_ROWS_H
#define ATTN_ROWS_H

#include "kernel.h"
#include "vmath.h"

/* For query row i of batch b: s[0..n) holds the scaled scores of keys
 * k0..k0+n-1, all visible under the causal rule (attn_mask_visible_keys
 * cuts those off first). The padding, keep and bias parts of m apply:
 * masked keys become -INFINITY, the bias is added to the others. */
void attn_rows_mask(const attn_mask *m, int b, int i, int q_len, int kv_len, int k0, float *s,
                    int n);

/* s[0..n) → softmax(s) in place; -INFINITY entries get exactly 0. Returns
 * the row's normalizer 1/Σ, or 0 when every entry is -INFINITY (the row
 * is then all zeros: the fully-masked rule). */
float attn_rows_softmax(float *s, int n);

/* x[0..n) → act(x) in place (api.md §1.3 activations; ATTN_ACT_NONE leaves
 * x). Inline, one loop per activation, so that each vectorizes (vmath.h)
 * inside the callers' tile loops. */
static inline void attn_rows_activate(int act, float *x, int n)
{
    if (act == ATTN_ACT_GELU_ERF)
        for (int j = 0; j < n; j++)
            x[j] = attn_gelu_erf(x[j]);
    else if (act == ATTN_ACT_GELU_TANH)
        for (int j = 0; j < n; j++)
            x[j] = attn_gelu_tanh(x[j]);
    else if (act == ATTN_ACT_RELU)
        for (int j = 0; j < n; j++)
            x[j] = x[j] > 0.0f ? x[j] : 0.0f;
}

/* LayerNorm of one row: xr[0..d) → yr[0..d) with gamma and beta. */
typedef void (*attn_layernorm_row_fn)(int d, const float *xr, const float *gamma,
                                      const float *beta, float eps, float *yr);

/* LayerNorm over the m rows of width d of x into y, row by row with `row`,
 * the rows split statically over ex->n_threads (split.h; a traced call
 * records the split and does no work). Every row is computed by one
 * thread with the same code whatever the count, so the result does not
 * depend on it. Same contract as attn_layernorm_fn otherwise. */
void attn_layernorm_rows(const attn_exec *ex, size_t m, int d, const float *x,
                         const float *gamma, const float *beta, float eps, float *y,
                         attn_layernorm_row_fn row);

/* Thread t of nt's part of that: its static share of the m rows of width
 * d (row stride ld in x and y). Also a gemm's LayerNorm phase, inside the
 * gemm's region (frame/gemm.c). */
void attn_layernorm_rows_part(size_t m, int d, size_t ld, const float *x, const float *gamma,
                              const float *beta, float eps, float *y, attn_layernorm_row_fn row,
                              int t, int nt);

/* LayerNorm of one row, mean and variance in double, two passes. */
void attn_layernorm_row__portable(int d, const float *xr, const float *gamma, const float *beta,
                                  float eps, float *yr);

/* LayerNorm over rows of width d, threaded over rows, row by row with
 * attn_layernorm_row__portable. Same contract as attn_layernorm_fn. */
void attn_layernorm__portable(const attn_exec *ex, size_t m, int d, const float *x,
                              const float *gamma, const float *beta, float eps, float *y);

#endif /* ATTN_ROWS_H */
