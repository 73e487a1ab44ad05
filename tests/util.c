/* util.c — buffers, random data and comparisons shared by the tests. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "verify.h"
#include "workload.h"

/* The harness's allocator and generator, so tests and benchmarks agree. */
void *t_alloc(size_t n, size_t elem, size_t misalign)
{
    void *p = ab_alloc(n * elem, misalign);
    if (p)
        memset(p, 0, n * elem);
    return p;
}

void t_free(void *p)
{
    ab_free(p);
}

void t_fill(float *x, size_t n, float a, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((2.0 * ab_rng_uniform(state) - 1.0) * a);
}

double t_max_diff_f64(const float *a, const double *ref, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - ref[i]);
        if (isnan(d))
            return INFINITY;
        if (d > m)
            m = d;
    }
    return m;
}

double t_max_diff(const float *a, const float *b, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (isnan(d))
            return INFINITY;
        if (d > m)
            m = d;
    }
    return m;
}

double t_max_abs_f64(const double *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) > m)
            m = fabs(x[i]);
    return m;
}

double t_max_abs(const float *x, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++)
        if (fabs((double)x[i]) > m)
            m = fabs((double)x[i]);
    return m;
}

void t_mean_var(const float *x, int n, double *mean, double *var)
{
    double m = 0.0, v = 0.0;
    for (int j = 0; j < n; j++)
        m += x[j];
    m /= n;
    for (int j = 0; j < n; j++)
        v += (x[j] - m) * (x[j] - m);
    *mean = m;
    *var = v / n;
}

int t_shape(const char *text, struct ab_shape *s)
{
    char err[256];
    int rc = ab_shape_parse(text, AB_OP_SDPA, s, err, sizeof err);
    CHECK(rc == 0, "shape %s: %s", text, err);
    return rc;
}

int t_workload(ab_workload *w, const char *shape, uint64_t seed, size_t misalign, char *err,
               size_t err_len)
{
    ab_shape s;
    if (ab_shape_parse(shape, AB_OP_SDPA, &s, err, err_len) != 0)
        return -1;
    if (ab_workload_init(w, &s, seed, misalign) != 0) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return 0;
}

float *t_run_kernel(const char *kernel, int threads, const ab_workload *w)
{
    attn_ctx *ctx = NULL;
    float *out = ab_alloc_floats(w->out_len, 0);
    attn_status st = attn_ctx_create(&ctx, kernel, threads);
    if (st == ATTN_OK && out)
        st = ab_workload_run(ctx, w, out);
    CHECK(st == ATTN_OK && out, "%s with %d threads: %s", kernel, threads, attn_strerror(st));
    attn_ctx_destroy(ctx);
    if (st != ATTN_OK) {
        ab_free(out);
        return NULL;
    }
    return out;
}

int t_kernels(const char **names, int max)
{
    static int reported;
    int n = 0;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (attn_kernel_supported(name)) {
            if (n < max && attn_kernel_math(name) == ATTN_F32)
                names[n++] = name;
        } else if (!reported) {
            t_skip("kernel %s cannot run on this machine", name);
        }
    }
    reported = 1;
    return n;
}

int t_bf16_kernels(const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (attn_kernel_supported(name) && attn_kernel_math(name) == ATTN_BF16 && n < max)
            names[n++] = name;
    }
    return n;
}

double t_bound_of(const char *kernel, double fp32_bound, double out_scale)
{
    return attn_kernel_math(kernel) == ATTN_BF16 ? AB_BF16_BOUND * fmax(1.0, out_scale)
                                                 : fp32_bound;
}

void t_each_context(const char *title, int threads,
                    void (*body)(attn_ctx *ctx, const char *kernel))
{
    const char *kernels[64];
    int n = t_kernels(kernels, 64);
    for (int i = 0; i < n; i++) {
        attn_ctx *ctx = NULL;
        t_case(title, kernels[i]);
        CHECK_STATUS(attn_ctx_create(&ctx, kernels[i], threads), ATTN_OK);
        if (!ctx)
            continue;
        body(ctx, kernels[i]);
        attn_ctx_destroy(ctx);
    }
}
