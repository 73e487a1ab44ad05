/*
 * test_vmath.c — the stated error bounds of the vector math, for every
 * implementation: vmath.h as compiled for the baseline ISA (blocked, einsum)
 * and the SIMD kernels' own (kernels/simd: vf_exp and the epilogue's vector
 * GELUs, compiled for AVX2 / AVX-512 / NEON in their folders), each on the
 * CPUs that run it.
 *   exp: within 2 ulp of the correctly rounded e^x over [-87.3, 88.7], exact
 *        at the edges (0 below, +inf above, NaN through); the SIMD
 *        softmax's exp of x <= 0 the same over [-87.3, 0].
 *   GELUs (erf and tanh forms): within 5e-7·max(1, |x|); erf (portable):
 *        within 5e-7 absolute.
 * The horizontal sum of four vectors at once (vf_reduce_add4, the decode
 * path's K pass) equal bit for bit to four single sums (vf_reduce_add).
 * And every kernel's LayerNorm against double precision on rows with a
 * large mean and a small spread.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "rows.h"
#include "simd/simd_kernel.h"
#include "vmath.h"

/* name: "portable" (runs everywhere) or the kernel whose row says what
 * the CPU must have (attn_registry_runnable: its requires bits). */
typedef struct vmath_impl {
    const char *name;
    void (*exp_n)(const float *x, float *y, size_t n);
    void (*exp_nonpos_n)(const float *x, float *y, size_t n);   /* NULL: none */
    void (*activate_n)(int act, float *x, size_t n);
    int (*reduce_add4)(const float *v, float *four, float *each);   /* NULL: none */
} vmath_impl;

static void exp_portable(const float *x, float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = attn_expf(x[i]);
}

static void activate_portable(int act, float *x, size_t n)
{
    attn_rows_activate(act, x, (int)n);
}

/* Distance from y to the double reference, in units of the float spacing at
 * the reference. */
static double ulp_error(float y, double ref)
{
    float r = (float)ref;
    double ulp = (double)nextafterf(r, INFINITY) - (double)r;
    return fabs((double)y - ref) / ulp;
}

/* Every 2^-12 step over [-87.3, hi], plus points around every integer
 * multiple of ln 2 (where the range reduction switches n) and the edges. */
static size_t exp_points(float **out, float hi)
{
    size_t cap = 800000, n = 0;
    float *x = malloc(cap * sizeof *x);
    if (!x)
        return 0;
    for (double v = -87.3; v <= hi && n < cap; v += 1.0 / 4096)
        x[n++] = (float)v;
    for (int e = -125; e <= 127; e++) {
        float c = (float)(e * M_LN2);
        for (int k = -8; k <= 8 && n < cap; k++) {
            float v = c;
            for (int s = 0; s < abs(k); s++)
                v = nextafterf(v, k < 0 ? -INFINITY : INFINITY);
            if (v >= ATTN_EXPF_MIN && v <= hi)
                x[n++] = v;
        }
    }
    *out = x;
    return n;
}

/* exp_n over [-87.3, hi]: the general exp (hi 88.7) or the softmax's (0). */
static void test_exp_bound(const char *impl, const char *what,
                           void (*exp_n)(const float *x, float *y, size_t n), float hi)
{
    t_case("vmath [%s]: %s within 2 ulp over [-87.3, %g]", impl, what, (double)hi);
    float *x = NULL;
    size_t n = exp_points(&x, hi);
    float *y = malloc((n ? n : 1) * sizeof *y);
    if (!n || !y) {
        CHECK(0, "out of memory");
        free(x);
        free(y);
        return;
    }
    exp_n(x, y, n);
    double worst = 0.0;
    float worst_x = 0.0f;
    for (size_t i = 0; i < n; i++) {
        double e = ulp_error(y[i], exp((double)x[i]));
        if (e > worst)
            worst = e, worst_x = x[i];
    }
    CHECK(worst <= 2.0, "%.2f ulp at x = %.9g", worst, worst_x);
    free(x);
    free(y);
}

static void test_exp(const vmath_impl *im)
{
    test_exp_bound(im->name, "exp", im->exp_n, ATTN_EXPF_MAX);

    t_case("vmath [%s]: exp edges: 0 below the normal range, +inf above, NaN stays NaN", im->name);
    /* 17 values, so a vector implementation meets its tail too. */
    float e[17] = { -INFINITY, -100.0f, 0.0f, 89.0f, INFINITY, NAN, ATTN_EXPF_MIN, ATTN_EXPF_MAX,
                    -88.0f, 1.0f, -1.0f, 0.5f, -0.5f, 10.0f, -10.0f, 20.0f, -20.0f };
    float r[17];
    im->exp_n(e, r, 17);
    CHECK(r[0] == 0.0f && r[1] == 0.0f && r[8] == 0.0f, "exp(-inf, -100, -88) = %g %g %g", r[0],
          r[1], r[8]);
    CHECK(r[2] == 1.0f, "exp(0) = %.9g", r[2]);
    CHECK(isinf(r[3]) && isinf(r[4]), "exp(89), exp(inf) = %g %g", r[3], r[4]);
    CHECK(isnan(r[5]), "NaN lost");
    CHECK(r[6] > 0.0f && isfinite(r[7]), "range ends: %g %g", r[6], r[7]);
    for (int i = 9; i < 17; i++)
        CHECK(ulp_error(r[i], exp((double)e[i])) <= 2.0, "exp(%g) = %.9g (tail)", e[i], r[i]);
    if (!im->exp_nonpos_n)
        return;

    test_exp_bound(im->name, "softmax exp (x <= 0)", im->exp_nonpos_n, 0.0f);
    t_case("vmath [%s]: softmax exp edges: 0 below the normal range and at -inf, NaN stays NaN",
           im->name);
    /* 17 values, so the vector tail is met too. */
    float z[17] = { -INFINITY, -100.0f, -88.0f, ATTN_EXPF_MIN, 0.0f, NAN, -0.0f, -1e-30f,
                    -1.0f, -0.5f, -10.0f, -20.0f, -40.0f, -60.0f, -80.0f, -87.0f, -3.0f };
    im->exp_nonpos_n(z, r, 17);
    CHECK(r[0] == 0.0f && r[1] == 0.0f && r[2] == 0.0f, "exp(-inf, -100, -88) = %g %g %g", r[0],
          r[1], r[2]);
    CHECK(r[3] > 0.0f && r[4] == 1.0f && r[6] == 1.0f && r[7] == 1.0f,
          "exp(-87.3, 0, -0, -1e-30) = %g %.9g %.9g %.9g", r[3], r[4], r[6], r[7]);
    CHECK(isnan(r[5]), "NaN lost");
    for (int i = 8; i < 17; i++)
        CHECK(ulp_error(r[i], exp((double)z[i])) <= 2.0, "exp(%g) = %.9g (tail)", z[i], r[i]);
}

static void test_activations(const vmath_impl *im)
{
    t_case("vmath [%s]: erf within 5e-7; GELUs within 5e-7·max(1, |x|)", im->name);
    size_t n = 20 * 8192 + 1;
    float *x = malloc(n * sizeof *x), *g1 = malloc(n * sizeof *g1), *g2 = malloc(n * sizeof *g2);
    if (!x || !g1 || !g2) {
        CHECK(0, "out of memory");
        free(x), free(g1), free(g2);
        return;
    }
    for (size_t i = 0; i < n; i++)
        x[i] = g1[i] = g2[i] = (float)(-10.0 + (double)i / 8192);
    im->activate_n(ATTN_ACT_GELU_ERF, g1, n);
    im->activate_n(ATTN_ACT_GELU_TANH, g2, n);
    double w1 = 0, w2 = 0;
    float x1 = 0, x2 = 0;
    for (size_t i = 0; i < n; i++) {
        double xf = x[i];
        double r1 = 0.5 * xf * (1.0 + erf(xf * M_SQRT1_2));
        double u = 0.7978845608028654 * (xf + 0.044715 * xf * xf * xf);
        double r2 = 0.5 * xf * (1.0 + tanh(u));
        double scale = fmax(1.0, fabs(xf));
        if (fabs(g1[i] - r1) / scale > w1)
            w1 = fabs(g1[i] - r1) / scale, x1 = x[i];
        if (fabs(g2[i] - r2) / scale > w2)
            w2 = fabs(g2[i] - r2) / scale, x2 = x[i];
    }
    CHECK(w1 <= 5e-7, "GELU erf error %.3g at x = %.9g", w1, x1);
    CHECK(w2 <= 5e-7, "GELU tanh error %.3g at x = %.9g", w2, x2);
    float relu[3] = { -1.0f, 0.0f, 2.5f };
    im->activate_n(ATTN_ACT_RELU, relu, 3);
    CHECK(relu[0] == 0.0f && relu[1] == 0.0f && relu[2] == 2.5f, "relu");
    free(x), free(g1), free(g2);
}

/* Every kernel's LayerNorm against double precision, on rows whose mean is
 * large against their spread (mean 300, values ±1 around it: a float
 * running sum over 768 of them errs by ~1e-2 of the spread in the mean, and
 * E[x²]−μ² by more in the variance; the mean itself, rounded to float,
 * still leaves x−μ within 3e-5 of the spread), at widths that end in a
 * vector tail, with eps 1e-5 (torch) and 1e-12 (BERT). Bound: api.md §4's,
 * 1e-4·max(1, max|y|). */
static void test_layernorm(void)
{
    static const int widths[] = { 1, 7, 15, 16, 17, 33, 768 };
    static const float epss[] = { 1e-5f, 1e-12f };
    enum { ROWS = 3 };
    uint64_t seed = 99;
    float *x = t_alloc(ROWS * 768, sizeof(float), 4), *y = t_alloc(ROWS * 768, sizeof(float), 0);
    float *g = t_alloc(768, sizeof(float), 0), *b = t_alloc(768, sizeof(float), 0);
    t_fill(g, 768, 1.0f, &seed);
    t_fill(b, 768, 1.0f, &seed);
    for (int ki = 0; ki < attn_kernel_count(); ki++) {
        const attn_kernel *k = attn_registry_get(ki);
        if (!attn_registry_runnable(k))
            continue;
        t_case("layernorm [%s]: large mean, small spread, tails, eps 1e-5 and 1e-12", k->name);
        attn_exec ex = { .n_threads = 1, .data = k->data };
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
            for (int ei = 0; ei < 2; ei++) {
                int d = widths[wi];
                t_fill(x, (size_t)ROWS * d, 1.0f, &seed);
                for (int i = 0; i < ROWS * d; i++)
                    x[i] += 300.0f;
                k->layernorm(&ex, ROWS, d, x, g, b, epss[ei], y);
                double worst = 0, top = 1;
                for (int r = 0; r < ROWS; r++) {
                    const float *xr = x + (size_t)r * d;
                    double mu, var;
                    t_mean_var(xr, d, &mu, &var);
                    for (int j = 0; j < d; j++) {
                        double ref = (xr[j] - mu) / sqrt(var + epss[ei]) * g[j] + b[j];
                        worst = fmax(worst, fabs(y[(size_t)r * d + j] - ref));
                        top = fmax(top, fabs(ref));
                    }
                }
                CHECK(worst <= 1e-4 * top, "width %d, eps %g: error %.3g (bound %.3g)", d,
                      (double)epss[ei], worst, 1e-4 * top);
            }
    }
    t_free(x);
    t_free(y);
    t_free(g);
    t_free(b);
}

/* vf_reduce_add4 against vf_reduce_add on lanes of mixed magnitudes and
 * signs, where the order of the additions shows in the last bits (checked:
 * the lanes summed left to right, another order, differ in 3.6% of the
 * draws of 4 lanes, a fifth of those of 8 and half of those of 16),
 * and with zeros of both signs, infinities and NaN now and then. */
static void test_reduce_add4(const vmath_impl *im)
{
    t_case("vmath [%s]: four horizontal sums at once, bit for bit the single ones", im->name);
    enum { MOST = 4 * 16 };
    float v[MOST], four[4], each[4];
    uint32_t seed = 7;
    int differs = 0, mismatches = 0;
    for (int draw = 0; draw < 2000; draw++) {
        for (int i = 0; i < MOST; i++) {
            seed = seed * 1664525u + 1013904223u;
            float m = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
            int e = (int)(seed >> 28) - 8;   /* 2^-8 .. 2^7: every lane's bits in play */
            v[i] = ldexpf(m, e);
            if (draw % 97 == 0 && i % 11 == 0)   /* specials now and then */
                v[i] = (float[]){ 0.0f, -0.0f, INFINITY, -INFINITY, NAN }[(seed >> 4) % 5];
        }
        const int lanes = im->reduce_add4(v, four, each);
        mismatches += memcmp(four, each, sizeof four) != 0;
        float left = 0.0f;
        for (int i = 0; i < lanes; i++)
            left += v[i];
        differs += draw % 97 != 0 && left != each[0];
    }
    CHECK(mismatches == 0, "%d of 2000 draws summed differently", mismatches);
    CHECK(differs > 40, "only %d of 2000 draws depend on the order: the test is blind", differs);
}

void test_vmath(void)
{
    static const vmath_impl impls[] = {
        { "portable", exp_portable, NULL, activate_portable, NULL },
#if defined(__x86_64__)
        { "avx2", attn_simd_exp__avx2, attn_simd_exp_nonpos__avx2, attn_simd_activate__avx2,
          attn_simd_reduce_add4__avx2 },
        { "avx512", attn_simd_exp__avx512, attn_simd_exp_nonpos__avx512,
          attn_simd_activate__avx512, attn_simd_reduce_add4__avx512 },
#endif
#if defined(__aarch64__)
        { "neon", attn_simd_exp__neon, attn_simd_exp_nonpos__neon, attn_simd_activate__neon,
          attn_simd_reduce_add4__neon },
#endif
    };
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++) {
        const attn_kernel *k = attn_registry_find(impls[i].name);
        if (!k && strcmp(impls[i].name, "portable") != 0) {
            t_case("vmath [%s]: a kernel row says what it needs", impls[i].name);
            CHECK(0, "no kernel row named %s", impls[i].name);
            continue;
        }
        if (k && !attn_registry_runnable(k)) {
            t_skip("vmath [%s]: this CPU cannot run it", impls[i].name);
            continue;
        }
        test_exp(&impls[i]);
        test_activations(&impls[i]);
        if (impls[i].reduce_add4)
            test_reduce_add4(&impls[i]);
    }

    test_layernorm();

    t_case("vmath [portable]: attn_erff within 5e-7 of erf everywhere");
    double werf = 0;
    float xe = 0;
    for (double v = -10.0; v <= 10.0; v += 1.0 / 8192) {
        double e = fabs((double)attn_erff((float)v) - erf((double)(float)v));
        if (e > werf)
            werf = e, xe = (float)v;
    }
    CHECK(werf <= 5e-7, "erf error %.3g at x = %.9g", werf, xe);
    CHECK(attn_erff(0.0f) == 0.0f && attn_erff(INFINITY) == 1.0f && attn_erff(-INFINITY) == -1.0f,
          "erf edges");
}
