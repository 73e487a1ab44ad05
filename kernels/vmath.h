/*
 * vmath.h — elementwise math for the portable kernels, written so that the
 * compiler can vectorize loops over it (no calls, no branches: selects).
 *
 * attn_expf: e^x for float x.
 *   Range reduction x = n·ln2 + r, |r| <= ln2/2, with ln2 split in two parts
 *   (Cody–Waite) so r is exact enough; e^r by Cephes' degree-6 polynomial;
 *   2^n by building the exponent bits. For x < -87.3 (e^x below the smallest
 *   normal float) it returns 0, for x > 88.7 +inf, and NaN stays NaN.
 *   Error bound: 2 ulp relative over [-87.3, 88.7], tested against the
 *   double-precision exp in tests/test_vmath.c.
 *
 * attn_erff: erf(x) by Abramowitz & Stegun 7.1.26 (a degree-5 polynomial in
 *   t = 1/(1 + 0.3275911·|x|) times e^(−x²)), odd-extended.
 *   Error bound: 5e-7 absolute for every x (the formula's 1.5e-7 plus float
 *   rounding), tested against the double-precision erf. Used in GELU, where
 *   it is multiplied by x/2: the absolute error is what matters there.
 *
 * attn_gelu_erf / attn_gelu_tanh: the two GELUs of api.md §1.3, the tanh one
 *   through tanh(u) = 1 − 2/(e^(2u) + 1). Error bound: 5e-7·max(1, |x|),
 *   tested against the double-precision formulas.
 */
#ifndef ATTN_VMATH_H
#define ATTN_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define ATTN_EXPF_MIN (-87.3f)
#define ATTN_EXPF_MAX 88.7f

static inline float attn_expf(float x)
{
    const float log2e = 1.44269504088896341f;
    const float c1 = 0.693359375f, c2 = -2.12194440e-4f;   /* c1 + c2 = ln 2 */
    /* Written so that NaN clamps too (every comparison false → the low
     * end): a NaN reaching the float → int conversion below would be
     * undefined behaviour. The NaN is restored at the end. */
    float xc = x > ATTN_EXPF_MIN ? (x < ATTN_EXPF_MAX ? x : ATTN_EXPF_MAX) : ATTN_EXPF_MIN;
    /* n = round(x·log2(e)), by truncating a value made positive first:
     * conversion to int truncates toward zero. */
    float t = xc * log2e + 0.5f;
    int32_t n = (int32_t)(t + 128.0f) - 128;
    float fn = (float)n;
    float r = xc - fn * c1;
    r = r - fn * c2;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    /* 2^n: n + 127 in the exponent field; n is in [-126, 128]. At 128 (only
     * for x near 88.7) scale in two steps so the bits never overflow. */
    int32_t half = n / 2;
    uint32_t b1 = (uint32_t)(half + 127) << 23, b2 = (uint32_t)(n - half + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = p * s1 * s2;
    y = x < ATTN_EXPF_MIN ? 0.0f : y;
    y = x > ATTN_EXPF_MAX ? (float)INFINITY : y;
    return x != x ? x : y;   /* NaN in, NaN out */
}

static inline float attn_erff(float x)
{
    const float p = 0.3275911f;
    const float a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f;
    const float a4 = -1.453152027f, a5 = 1.061405429f;
    float ax = x < 0.0f ? -x : x;
    float t = 1.0f / (1.0f + p * ax);
    float poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t;
    float y = 1.0f - poly * attn_expf(-ax * ax);
    return x < 0.0f ? -y : y;
}

static inline float attn_gelu_erf(float x)
{
    return 0.5f * x * (1.0f + attn_erff(x * 0.70710678118654752f));
}

static inline float attn_gelu_tanh(float x)
{
    float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
    float tanh_u = 1.0f - 2.0f / (attn_expf(2.0f * u) + 1.0f);
    return 0.5f * x * (1.0f + tanh_u);
}

#endif /* ATTN_VMATH_H */
