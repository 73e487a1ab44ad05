/*
 * dtype.h — the storage types of keys and values (attn.h's attn_dtype,
 * contract 0.3): one element's bytes, the scalar conversions to and from
 * fp32 with the rounding the contract fixes, and the widening of stored
 * rows. The SIMD kernels widen whole vectors in their own code (simd.h);
 * these are the definitions they are checked against.
 */
#ifndef ATTN_DTYPE_H
#define ATTN_DTYPE_H

#include <stdint.h>
#include <string.h>

#include "attn.h"

#define ATTN_DTYPE_COUNT 4
/* Bytes of one element of t (0 for a value that is not a type). */
static inline size_t attn_dtype_bytes(attn_dtype t)
{
    return t == ATTN_F32 ? 4 : t == ATTN_F16 || t == ATTN_BF16 ? 2 : t == ATTN_I8 ? 1 : 0;
}

/* The type's name in shape keys, the wisdom and reports: "f32", "f16",
 * "bf16", "i8" ("?" for a value that is not a type); attn_dtype_of_name is
 * the inverse (-1 for an unknown name). */
static inline const char *attn_dtype_name(attn_dtype t)
{
    static const char *const names[ATTN_DTYPE_COUNT] = { "f32", "f16", "bf16", "i8" };
    return (unsigned)t < ATTN_DTYPE_COUNT ? names[t] : "?";
}

static inline int attn_dtype_of_name(const char *s)
{
    for (int t = 0; t < ATTN_DTYPE_COUNT; t++)
        if (strcmp(s, attn_dtype_name((attn_dtype)t)) == 0)
            return t;
    return -1;
}

/* The largest finite binary16, and the largest finite bfloat16. */
#define ATTN_F16_MAX 65504.0f
#define ATTN_BF16_MAX 3.38953139e38f

static inline uint32_t attn_f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float attn_bits_f32(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* binary16 → fp32, exact (subnormals, infinities and NaN included). */
static inline float attn_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)                      /* inf, NaN (the payload kept) */
        return attn_bits_f32(sign | 0x7f800000u | m << 13);
    if (e == 0) {                       /* zero, subnormal: m · 2^-24 */
        float v = (float)m * 0x1p-24f;
        return sign ? -v : v;
    }
    return attn_bits_f32(sign | (e + 112) << 23 | m << 13);
}

/* fp32 → binary16, round to nearest, ties to even. A finite x that rounds
 * past binary16's range gives infinity here: the callers refuse such
 * values first (attn_check_rows). NaN stays NaN (quiet). */
static inline uint16_t attn_f32_to_f16(float x)
{
    uint32_t u = attn_f32_bits(x), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a >= 0x7f800000u)               /* inf, NaN */
        return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0));
    if (a < 0x38800000u) {              /* below the smallest normal, 2^-14: subnormal or 0 */
        /* a's value in units of 2^-24 (the subnormal step), rounded to
         * nearest even by the hardware: exact, as it is a float op on an
         * exactly representable product. */
        float units = attn_bits_f32(a) * 0x1p24f;
        float r = __builtin_rintf(units);
        return (uint16_t)(sign | (uint32_t)r);   /* r = 1024 is the smallest normal: right */
    }
    if (a >= 0x477ff000u)               /* 65520 and up round past 65504 */
        return (uint16_t)(sign | 0x7c00u);
    /* Normal: drop 13 mantissa bits, rounding to nearest even; a carry
     * into the exponent is the right result. */
    uint32_t rounded = a + 0x0fffu + ((a >> 13) & 1u);
    return (uint16_t)(sign | ((rounded >> 13) - (112u << 10)));
}

/* bfloat16 → fp32, exact. */
static inline float attn_bf16_to_f32(uint16_t b)
{
    return attn_bits_f32((uint32_t)b << 16);
}

/* fp32 → bfloat16, round to nearest, ties to even (a finite x past
 * ATTN_BF16_MAX's rounding gives infinity: checked by the callers). NaN
 * stays NaN (quiet). */
static inline uint16_t attn_f32_to_bf16(float x)
{
    uint32_t u = attn_f32_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* 16-bit element d at p: the caller's rows may sit at any address (attn.h),
 * so through memcpy, which compiles to one load. */
static inline uint16_t attn_load_u16(const void *p, int d)
{
    uint16_t u;
    memcpy(&u, (const char *)p + 2 * (size_t)d, sizeof u);
    return u;
}

/* Element d of a stored row (its scale for ATTN_I8), widened to fp32: the
 * stored value (contract: q · scale, one fp32 rounding, for ATTN_I8). */
static inline float attn_stored_value(attn_dtype t, const void *row, float scale, int d)
{
    float f;
    switch (t) {
    case ATTN_F16:  return attn_f16_to_f32(attn_load_u16(row, d));
    case ATTN_BF16: return attn_bf16_to_f32(attn_load_u16(row, d));
    case ATTN_I8:   return (float)((const int8_t *)row)[d] * scale;
    default:
        memcpy(&f, (const char *)row + 4 * (size_t)d, sizeof f);
        return f;
    }
}

/* n elements of a stored row into dst, widened (dtype.c). */
void attn_widen_row(attn_dtype t, const void *row, float scale, int n, float *dst);

/* Whether rows × n fp32 values can be stored as t (attn_convert_rows's
 * checks): ATTN_OK, or ATTN_ERR_RANGE for the first that cannot. */
attn_status attn_check_rows(attn_dtype t, size_t rows, int n, const float *src, size_t ld);
/* Converts rows × n fp32 values (row stride ld floats) to t at dst (row
 * stride dst_ld elements), scale[i · scale_ld] per row for ATTN_I8; the
 * rows must have passed attn_check_rows. */
void attn_store_rows(attn_dtype t, size_t rows, int n, const float *src, size_t ld, void *dst,
                     size_t dst_ld, float *scale, size_t scale_ld);

#endif /* ATTN_DTYPE_H */
