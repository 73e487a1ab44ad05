/*
 * naive.c — the reference kernel, the oracle every other kernel is checked
 * against. The formulas of api.md §1 as plain loops with fp64 accumulation;
 * nothing here is clever, so that it is obviously right. Single-threaded.
 */
#include <math.h>
#include <stdint.h>

#include "../kernel.h"

static double activate(int act, double x)
{
    switch (act) {
    case ATTN_ACT_GELU_ERF:
        return 0.5 * x * (1.0 + erf(x * M_SQRT1_2));
    case ATTN_ACT_GELU_TANH: {
        const double k = 0.7978845608028654; /* sqrt(2/pi) */
        return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
    }
    case ATTN_ACT_RELU:
        return x > 0.0 ? x : 0.0;
    default:
        return x; /* ATTN_ACT_NONE */
    }
}

static void attn_gemm__naive(const attn_exec *ex, const attn_gemm_problem *p)
{
    (void)ex;
    for (size_t i = 0; i < p->m; i++) {
        const float *x = p->x + i * p->ldx;
        float *y = p->y + i * p->ldy;
        const float *r = p->residual ? p->residual + i * p->ldy : NULL;
        for (int j = 0; j < p->n; j++) {
            const float *w = p->w + (size_t)j * (size_t)p->k;
            double acc = p->bias ? p->bias[j] : 0.0;
            for (int t = 0; t < p->k; t++)
                acc += (double)x[t] * (double)w[t];
            acc = activate(p->act, acc);
            if (r)
                acc += r[j];
            y[j] = (float)acc;
        }
    }
}

/* Scratch: one row of scores and one output accumulator, in doubles. */
static size_t attn_sdpa_scratch__naive(const attn_exec *ex, const attn_sdpa_problem *p)
{
    (void)ex;
    size_t n = (size_t)p->kv_len + (size_t)p->head_dim;
    return n > SIZE_MAX / sizeof(double) ? SIZE_MAX : n * sizeof(double);
}

static void attn_sdpa__naive(const attn_exec *ex, const attn_sdpa_problem *p)
{
    double *score = ex->scratch;
    double *acc = score + p->kv_len;
    const attn_mask *m = p->mask;

    /* Grouped-query attention: query head h reads key/value head h / group. */
    const int group = p->n_kv_heads > 0 ? p->n_heads / p->n_kv_heads : 1;
    /* Causal: key j is visible to row i when j <= i + shift, the queries
     * being the first (top-left) or the last (bottom-right) Lq positions. */
    const long shift = m && m->causal == ATTN_CAUSAL_BOTTOM_RIGHT
                           ? (long)p->kv_len - (long)p->q_len : 0;

    for (int b = 0; b < p->batch; b++)
    for (int h = 0; h < p->n_heads; h++)
    for (int i = 0; i < p->q_len; i++) {
        const int kvh = h / group;
        const float *q = p->q + b * p->q_st.batch + h * p->q_st.head + i * p->q_st.row;
        float *out = p->out + b * p->out_st.batch + h * p->out_st.head + i * p->out_st.row;
        const uint8_t *pad = attn_mask_padding_row(m, b, p->kv_len);
        const uint8_t *keep = attn_mask_keep_row(m, b, i, p->q_len, p->kv_len);
        const float *bias = attn_mask_bias_row(m, b, i, p->q_len, p->kv_len);

        /* Scores; masked keys are -inf, i.e. excluded exactly. */
        double max = -INFINITY;
        for (int j = 0; j < p->kv_len; j++) {
            score[j] = -INFINITY;
            if ((m && m->causal && j > i + shift) || (pad && !pad[j]) || (keep && !keep[j]))
                continue;
            float ks;
            const void *k = attn_kv_row(p, 0, b, kvh, j, &ks);
            double dot = 0.0;
            for (int d = 0; d < p->head_dim; d++)
                dot += (double)q[d] * (double)attn_stored_value(p->k_store.type, k, ks, d);
            score[j] = dot * p->scale + (bias ? bias[j] : 0.0);
            /* A NaN score (NaN in q or k) makes max NaN, so the row comes
             * out NaN: never the zeros of a fully masked row. */
            if (score[j] > max || isnan(score[j]))
                max = score[j];
        }

        for (int d = 0; d < p->head_dim; d++)
            acc[d] = 0.0;
        /* Every key masked (max stays -inf): the row is zeros, not NaN. */
        if (max != -INFINITY) {
            double sum = 0.0;
            for (int j = 0; j < p->kv_len; j++) {
                if (score[j] == -INFINITY)
                    continue;
                double e = exp(score[j] - max);
                float vs;
                const void *v = attn_kv_row(p, 1, b, kvh, j, &vs);
                sum += e;
                for (int d = 0; d < p->head_dim; d++)
                    acc[d] += e * (double)attn_stored_value(p->v_store.type, v, vs, d);
            }
            for (int d = 0; d < p->head_dim; d++)
                acc[d] /= sum;
        }
        for (int d = 0; d < p->head_dim; d++)
            out[d] = (float)acc[d];
    }
}

static void attn_layernorm__naive(const attn_exec *ex, size_t m, int d, const float *x,
                                  const float *gamma, const float *beta, float eps, float *y)
{
    (void)ex;
    for (size_t i = 0; i < m; i++) {
        const float *xr = x + i * (size_t)d;
        float *yr = y + i * (size_t)d;
        /* Two passes: E[x²] − mean² cancels badly when |mean| ≫ std. */
        double mean = 0.0, var = 0.0;
        for (int j = 0; j < d; j++)
            mean += xr[j];
        mean /= d;
        for (int j = 0; j < d; j++)
            var += ((double)xr[j] - mean) * ((double)xr[j] - mean);
        var /= d;
        double inv = 1.0 / sqrt(var + (double)eps);
        for (int j = 0; j < d; j++)
            yr[j] = (float)(((double)xr[j] - mean) * inv * gamma[j] + beta[j]);
    }
}

const attn_kernel attn_kernel__naive = {
    .name = "naive",
    .description = "reference oracle: the formulas as plain loops, fp64 accumulation, 1 thread",
    .requires = 0,
    .parallel = 0,
    /* 0: its primitives have no parallel region to skip, so a dry run
     * would do all their arithmetic (explain refuses it). */
    .explains = 0,
    .gemm = attn_gemm__naive,
    .sdpa = attn_sdpa__naive,
    .sdpa_scratch = attn_sdpa_scratch__naive,
    .kv_types = ATTN_KV_NARROW,   /* each element widened as it is read (dtype.h) */
    .layernorm = attn_layernorm__naive,
};
