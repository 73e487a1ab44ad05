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

/* 1 when x[0..n) are all finite. Branch-free over the row (x − x is 0
 * for a finite x, NaN otherwise), so that it vectorizes. */
static inline int attn_row_finite(const float *x, int n)
{
    int bad = 0;
    for (int d = 0; d < n; d++)
        bad |= !(x[d] - x[d] == 0.0f);
    return !bad;
}

/* For an sdpa path that scans its tiles (kernel.h attn_exec.finite_scan):
 * rows [q0, q0 + rows) of head (b, h) of p's Q and output, scanned right
 * after the tile wrote them; scan->found set when one is not finite. */
static inline void attn_sdpa_scan_tile(attn_finite_scan *scan, const attn_sdpa_problem *p, int b,
                                       int h, int q0, int rows)
{
    const float *q = p->q + b * p->q_st.batch + h * p->q_st.head + (size_t)q0 * p->q_st.row;
    const float *o = p->out + b * p->out_st.batch + h * p->out_st.head
                   + (size_t)q0 * p->out_st.row;
    int ok = 1;
    for (int i = 0; i < rows; i++)
        ok &= attn_row_finite(q + (size_t)i * p->q_st.row, p->head_dim)
            & attn_row_finite(o + (size_t)i * p->out_st.row, p->head_dim);
    if (!ok)   /* threads may race to it: an atomic store */
        __atomic_store_n(&scan->found, 1, __ATOMIC_RELAXED);
}

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
