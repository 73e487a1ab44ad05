/* util.c — buffers, random data and comparisons shared by the tests. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The 64 bytes before the returned pointer hold the start of the block. */
void *t_alloc(size_t n, size_t elem, size_t misalign)
{
    size_t bytes = n * elem + misalign + 64;
    char *base = NULL;
    if (posix_memalign((void **)&base, 64, bytes + 64) != 0)
        return NULL;
    memset(base, 0, bytes + 64);
    char *p = base + 64 + misalign;
    memcpy(p - misalign - sizeof base, &base, sizeof base);
    return p;
}

void t_free(void *p)
{
    if (!p)
        return;
    /* Recover the 64-byte boundary the pointer was placed after. */
    char *c = p;
    uintptr_t boundary = (uintptr_t)c & ~(uintptr_t)63;
    char *base;
    memcpy(&base, (char *)boundary - sizeof base, sizeof base);
    free(base);
}

static uint64_t next(uint64_t *s)
{
    /* splitmix64: small, good enough, and the same on every platform. */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void t_fill(float *x, size_t n, float a, uint64_t *state)
{
    for (size_t i = 0; i < n; i++) {
        double u = (double)(next(state) >> 11) * 0x1.0p-53; /* [0, 1) */
        x[i] = (float)((2.0 * u - 1.0) * a);
    }
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

int t_kernels(const char **names, int max)
{
    static int reported;
    int n = 0;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (attn_kernel_supported(name)) {
            if (n < max)
                names[n++] = name;
        } else if (!reported) {
            t_skip("kernel %s cannot run on this machine", name);
        }
    }
    reported = 1;
    return n;
}
