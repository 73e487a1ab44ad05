/*
 * test_vmath.c — the stated error bound of kernels/vmath.h: attn_expf within
 * 2 ulp of the correctly rounded e^x over [-87.3, 88.7], exact at the edges
 * (0 below, +inf above, NaN through).
 */
#include <math.h>

#include "check.h"
#include "vmath.h"

/* Distance from y to the double reference, in units of the float spacing at
 * the reference. */
static double ulp_error(float y, double ref)
{
    float r = (float)ref;
    double ulp = (double)nextafterf(r, INFINITY) - (double)r;
    return fabs((double)y - ref) / ulp;
}

void test_vmath(void)
{
    t_case("vmath: attn_expf within 2 ulp over [-87.3, 88.7]");
    double worst = 0.0;
    float worst_x = 0.0f;
    /* Every 2^-12 step, plus points around every integer multiple of ln 2
     * (where the range reduction switches n). */
    for (double x = -87.3; x <= 88.7; x += 1.0 / 4096) {
        double e = ulp_error(attn_expf((float)x), exp((double)(float)x));
        if (e > worst)
            worst = e, worst_x = (float)x;
    }
    for (int n = -125; n <= 127; n++) {
        float c = (float)(n * M_LN2);
        for (int k = -8; k <= 8; k++) {
            float x = nextafterf(c, k < 0 ? -INFINITY : INFINITY);
            for (int s = 0; s < (k < 0 ? -k : k); s++)
                x = nextafterf(x, k < 0 ? -INFINITY : INFINITY);
            if (x < ATTN_EXPF_MIN || x > ATTN_EXPF_MAX)
                continue;
            double e = ulp_error(attn_expf(x), exp((double)x));
            if (e > worst)
                worst = e, worst_x = x;
        }
    }
    CHECK(worst <= 2.0, "%.2f ulp at x = %.9g", worst, worst_x);

    t_case("vmath: attn_expf edges: 0 below the normal range, +inf above, NaN stays NaN");
    CHECK(attn_expf(-INFINITY) == 0.0f, "exp(-inf) = %g", attn_expf(-INFINITY));
    CHECK(attn_expf(-100.0f) == 0.0f, "exp(-100) = %g", attn_expf(-100.0f));
    CHECK(attn_expf(0.0f) == 1.0f, "exp(0) = %.9g", attn_expf(0.0f));
    CHECK(isinf(attn_expf(89.0f)) && isinf(attn_expf(INFINITY)), "exp(89) not inf");
    CHECK(isnan(attn_expf(NAN)), "NaN lost");
    CHECK(attn_expf(ATTN_EXPF_MIN) > 0.0f && isfinite(attn_expf(ATTN_EXPF_MAX)),
          "range ends: %g %g", attn_expf(ATTN_EXPF_MIN), attn_expf(ATTN_EXPF_MAX));

    t_case("vmath: attn_erff within 5e-7 of erf everywhere; GELUs within 5e-7·max(1, |x|)");
    double werf = 0, wg1 = 0, wg2 = 0;
    float xe = 0;
    for (double x = -10.0; x <= 10.0; x += 1.0 / 8192) {
        float xf = (float)x;
        double e = fabs((double)attn_erff(xf) - erf((double)xf));
        if (e > werf)
            werf = e, xe = xf;
        double g1 = 0.5 * xf * (1.0 + erf(xf * M_SQRT1_2));
        double u = 0.7978845608028654 * (xf + 0.044715 * (double)xf * xf * xf);
        double g2 = 0.5 * xf * (1.0 + tanh(u));
        double scale = fmax(1.0, fabs((double)xf));
        wg1 = fmax(wg1, fabs(attn_gelu_erf(xf) - g1) / scale);
        wg2 = fmax(wg2, fabs(attn_gelu_tanh(xf) - g2) / scale);
    }
    CHECK(werf <= 5e-7, "erf error %.3g at x = %.9g", werf, xe);
    CHECK(wg1 <= 5e-7 && wg2 <= 5e-7, "GELU errors %.3g / %.3g (times max(1, |x|))", wg1, wg2);
    CHECK(attn_erff(0.0f) == 0.0f && attn_erff(INFINITY) == 1.0f && attn_erff(-INFINITY) == -1.0f,
          "erf edges");
}
