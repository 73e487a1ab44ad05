/* rows.c — row operations shared by the portable kernels. */
#include <math.h>
#include <omp.h>

#include "rows.h"
#include "split.h"

void attn_rows_mask(const attn_mask *m, int b, int i, int q_len, int kv_len, int k0, float *s,
                    int n)
{
    const uint8_t *pad = attn_mask_padding_row(m, b, kv_len);
    const uint8_t *keep = attn_mask_keep_row(m, b, i, q_len, kv_len);
    const float *bias = attn_mask_bias_row(m, b, i, q_len, kv_len);
    pad = pad ? pad + k0 : NULL;
    keep = keep ? keep + k0 : NULL;
    bias = bias ? bias + k0 : NULL;
    if (bias)
        for (int j = 0; j < n; j++)
            s[j] += bias[j];
    if (pad)
        for (int j = 0; j < n; j++)
            s[j] = pad[j] ? s[j] : -INFINITY;
    if (keep)
        for (int j = 0; j < n; j++)
            s[j] = keep[j] ? s[j] : -INFINITY;
}

/* Lanes of the max and sum reductions: independent partial results the
 * compiler keeps in vector registers (a float sum may not be reordered
 * otherwise). The lane split depends only on n, never on threads. */
#define SOFTMAX_LANES 8

float attn_rows_softmax(float *s, int n)
{
    float lane[SOFTMAX_LANES];
    for (int l = 0; l < SOFTMAX_LANES; l++)
        lane[l] = -INFINITY;
    int j = 0;
    for (; j + SOFTMAX_LANES <= n; j += SOFTMAX_LANES)
        for (int l = 0; l < SOFTMAX_LANES; l++)
            lane[l] = s[j + l] > lane[l] ? s[j + l] : lane[l];
    float max = -INFINITY;
    for (; j < n; j++)
        max = s[j] > max ? s[j] : max;
    for (int l = 0; l < SOFTMAX_LANES; l++)
        max = lane[l] > max ? lane[l] : max;
    /* A comparison never picks a NaN: with every other score −inf the row
     * would be taken for masked, its NaN lost (the oracle's row is NaN). */
    for (j = 0; max == -INFINITY && j < n; j++)
        if (s[j] != s[j])
            max = s[j];
    if (max == -INFINITY) {
        for (j = 0; j < n; j++)
            s[j] = 0.0f;
        return 0.0f;
    }
    for (j = 0; j < n; j++)
        s[j] = attn_expf(s[j] - max);   /* -inf - max = -inf → exactly 0 */
    for (int l = 0; l < SOFTMAX_LANES; l++)
        lane[l] = 0.0f;
    for (j = 0; j + SOFTMAX_LANES <= n; j += SOFTMAX_LANES)
        for (int l = 0; l < SOFTMAX_LANES; l++)
            lane[l] += s[j + l];
    float sum = 0.0f;
    for (; j < n; j++)
        sum += s[j];
    for (int l = 0; l < SOFTMAX_LANES; l++)
        sum += lane[l];
    float inv = 1.0f / sum;
    for (j = 0; j < n; j++)
        s[j] *= inv;
    return inv;
}

void attn_layernorm_row__portable(int d, const float *xr, const float *gamma, const float *beta,
                                  float eps, float *yr)
{
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < d; j++)
        mean += xr[j];
    mean /= d;
    for (int j = 0; j < d; j++)
        var += ((double)xr[j] - mean) * ((double)xr[j] - mean);
    var /= d;
    float inv = (float)(1.0 / sqrt(var + (double)eps)), mu = (float)mean;
    for (int j = 0; j < d; j++)
        yr[j] = (xr[j] - mu) * inv * gamma[j] + beta[j];
}

void attn_layernorm_rows(const attn_exec *ex, size_t m, int d, const float *x,
                         const float *gamma, const float *beta, float eps, float *y,
                         attn_layernorm_row_fn row)
{
    if (attn_trace_units(ex, (long)m, "row", "layernorm %zux%d", m, d))
        return;
#pragma omp parallel num_threads(ex->n_threads)
    attn_layernorm_rows_part(m, d, (size_t)d, x, gamma, beta, eps, y, row, omp_get_thread_num(),
                             omp_get_num_threads());
}

void attn_layernorm_rows_part(size_t m, int d, size_t ld, const float *x, const float *gamma,
                              const float *beta, float eps, float *y, attn_layernorm_row_fn row,
                              int t, int nt)
{
    long lo, hi;
    attn_split_static((long)m, nt, t, &lo, &hi);
    for (long i = lo; i < hi; i++)
        row(d, x + (size_t)i * ld, gamma, beta, eps, y + (size_t)i * ld);
}

void attn_layernorm__portable(const attn_exec *ex, size_t m, int d, const float *x,
                              const float *gamma, const float *beta, float eps, float *y)
{
    attn_layernorm_rows(ex, m, d, x, gamma, beta, eps, y, attn_layernorm_row__portable);
}
