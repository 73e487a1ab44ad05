/* rows.c — row operations shared by the portable kernels. */
#include <math.h>

#include "rows.h"
#include "vmath.h"

void attn_rows_mask(const attn_mask *m, int b, int i, int q_len, int kv_len, float *s, int n)
{
    const uint8_t *pad = attn_mask_padding_row(m, b, kv_len);
    const uint8_t *keep = attn_mask_keep_row(m, b, i, q_len, kv_len);
    const float *bias = attn_mask_bias_row(m, b, i, q_len, kv_len);
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

float attn_rows_softmax(float *s, int n)
{
    float max = -INFINITY;
    for (int j = 0; j < n; j++)
        max = s[j] > max ? s[j] : max;
    if (max == -INFINITY) {
        for (int j = 0; j < n; j++)
            s[j] = 0.0f;
        return 0.0f;
    }
    float sum = 0.0f;
    for (int j = 0; j < n; j++) {
        s[j] = attn_expf(s[j] - max);   /* -inf - max = -inf → exactly 0 */
        sum += s[j];
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++)
        s[j] *= inv;
    return inv;
}

void attn_layernorm__portable(const attn_exec *ex, size_t m, int d, const float *x,
                              const float *gamma, const float *beta, float eps, float *y)
{
    long rows = (long)m;
#pragma omp parallel for num_threads(ex->n_threads) schedule(static)
    for (long i = 0; i < rows; i++) {
        const float *xr = x + (size_t)i * (size_t)d;
        float *yr = y + (size_t)i * (size_t)d;
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
}
