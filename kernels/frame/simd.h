/*
 * simd.h — the thin vector layer the SIMD kernels are written in (after
 * ggml's simd-mappings.h): one vector type `vf` of
 * SIMD_LANES floats and the handful of operations the micro-kernels, the
 * streaming attention and the row operations need. The ISA is the one this
 * translation unit is compiled for — each ISA folder (kernels/avx2,
 * kernels/avx512) compiles the same templates (kernels/simd/…_impl.h, and
 * the decode path, decode_impl.h beside this header) with its own flags, so
 * the shape of the code is written once.
 *
 * Tails: vf_load_n / vf_store_n touch only the first n < SIMD_LANES floats
 * (AVX-512 opmasks, AVX2 maskload/maskstore, NEON through a small buffer),
 * so no access ever leaves a row.
 *
 * Keys and values stored narrower (contract 0.3, dtype.h) are widened as
 * they are loaded: vf_load_f16, vf_load_bf16 and vf_load_i8 (and their _n
 * tails) take SIMD_LANES elements at any address and give the floats they
 * store, exactly (an int8's scale is applied by the caller).
 *
 * Each ISA also fixes the GEMM register tile, SIMD_MR rows × SIMD_NV
 * vectors (gemm_impl.h), and provides simd_transpose4: four rows of four
 * floats, times alpha, stored transposed (the packing routines' building
 * block).
 *
 * What the templates may count on differs by ISA; each says it here, once,
 * and the templates test these, never the ISA:
 *   SIMD_REGISTERS       vector registers, for the accumulators a loop keeps;
 *   SIMD_A_BY_LANE       1: the micro-kernel takes A by lane from packed
 *                        vectors (FMA by element, vf_fmadd_lane), so A must
 *                        be packed and a tile always computes its MR rows;
 *                        0: A is broadcast from memory, packed or in place;
 *   SIMD_TRANSPOSE_ROWS  rows of the widest transpose in registers:
 *                        simd_transpose4, and at 8 simd_transpose8;
 *   SIMD_K_UNROLL        depth steps the micro-kernel's loop is unrolled
 *                        by (broadcasting A): rolled, each step's FMAs came
 *                        with three pointer increments, a compare and a
 *                        branch. Set where an interleaved A/B measured it;
 *                        a build with -DATTN_GEMM_K_UNROLL=N takes N on
 *                        every ISA (reports/device_round.sh times 4
 *                        against the default that way).
 * (The portable target has no GEMM tile, and none of them.)
 */
#ifndef ATTN_SIMD_H
#define ATTN_SIMD_H

#include <stddef.h>
#include <string.h>

#include "../dtype.h"

/* The ISA comes from the folder that includes this header (its kernel.c
 * defines SIMD_TARGET_AVX512, _AVX2 or _NEON), never from the compiler's
 * predefined macros: a build with -march=native defines __AVX512F__ in every
 * file, and the avx2 folder must still compile the avx2 kernel. */
#if defined(SIMD_TARGET_AVX512)
#if !defined(__AVX512F__)
#error "simd.h: SIMD_TARGET_AVX512 needs -mavx512f (kernels/avx512's flags)"
#endif
#include <immintrin.h>

#define SIMD_X86 1
#define SIMD_ISA avx512
#define SIMD_LANES 16
#define SIMD_MR 12          /* 12 × 2 zmm: 24 accumulators of 32 registers */
#define SIMD_NV 2
#define SIMD_REGISTERS 32
#define SIMD_A_BY_LANE 0
#define SIMD_TRANSPOSE_ROWS 8
#define SIMD_K_UNROLL 1      /* not yet timed against 4 on an AVX-512 machine */
typedef __m512 vf;

static inline vf vf_zero(void) { return _mm512_setzero_ps(); }
static inline vf vf_set1(float x) { return _mm512_set1_ps(x); }
static inline vf vf_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
static inline __mmask16 simd_mask_(int n) { return (__mmask16)((1u << n) - 1u); }
static inline vf vf_load_n(const float *p, int n) { return _mm512_maskz_loadu_ps(simd_mask_(n), p); }
static inline void vf_store_n(float *p, vf v, int n) { _mm512_mask_storeu_ps(p, simd_mask_(n), v); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
static inline vf vf_add(vf a, vf b) { return _mm512_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm512_div_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
static inline vf vf_max(vf a, vf b) { return _mm512_max_ps(a, b); }
/* The sum of the 16 lanes: halves added at strides 8, 4, 2, 1, spelt out
 * so that vf_reduce_add4 can add in the same order, whatever the compiler
 * makes of _mm512_reduce_add_ps. */
static inline float vf_reduce_add(vf v)
{
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
/* out[0..4) = vf_reduce_add of a, b, c, d, bit for bit, the four sums
 * transposed into one vector as they are added: 14 vector operations
 * where four reductions take 32. */
static inline void vf_reduce_add4(vf a, vf b, vf c, vf d, float *out)
{
    /* stride 8: a's and b's lane sums in one vector, c's and d's in another */
    const vf ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                                _mm512_shuffle_f32x4(a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    const vf cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(1, 0, 1, 0)),
                                _mm512_shuffle_f32x4(c, d, _MM_SHUFFLE(3, 2, 3, 2)));
    /* stride 4: 128-bit block k holds the k-th vector's four partial sums */
    vf t = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
    t = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(1, 0, 3, 2)));   /* stride 2 */
    t = _mm512_add_ps(t, _mm512_permute_ps(t, _MM_SHUFFLE(2, 3, 0, 1)));   /* stride 1 */
    const __m512i first = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0);
    _mm_storeu_ps(out, _mm512_castps512_ps128(_mm512_permutexvar_ps(first, t)));
}
static inline float vf_reduce_max(vf v) { return _mm512_reduce_max_ps(v); }
/* n = round-to-nearest(x), and p·2^n for integral n (exact, no overflow
 * handling needed by the callers' clamped n). */
static inline vf vf_round(vf x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline vf vf_ldexp(vf p, vf n) { return _mm512_scalef_ps(p, n); }
static inline vf vf_ldexp_small(vf p, vf n) { return _mm512_scalef_ps(p, n); }
static inline vf vf_select_lt(vf a, vf b, vf x, vf y)   /* a < b ? x : y */
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), y, x);
}
static inline vf vf_select_nan(vf a, vf x)              /* a is NaN ? a : x */
{
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), x, a);
}
/* vcvtph2ps; bfloat16 is the top half of a float; vpmovsxbd. The tails
 * load with a mask (AVX512BW/VL, which the avx512 row requires). */
static inline vf vf_load_f16(const void *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
static inline vf vf_load_f16_n(const void *p, int n) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(simd_mask_(n), p)); }
static inline vf simd_bf16_widen_(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
static inline vf vf_load_bf16(const void *p) { return simd_bf16_widen_(_mm256_loadu_si256((const __m256i *)p)); }
static inline vf vf_load_bf16_n(const void *p, int n) { return simd_bf16_widen_(_mm256_maskz_loadu_epi16(simd_mask_(n), p)); }
static inline vf vf_load_i8(const void *p) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p))); }
static inline vf vf_load_i8_n(const void *p, int n) { return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(simd_mask_(n), p))); }

#elif defined(SIMD_TARGET_AVX2)
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "simd.h: SIMD_TARGET_AVX2 needs -mavx2 -mfma -mf16c (kernels/avx2's flags)"
#endif
#include <immintrin.h>

#define SIMD_X86 1
#define SIMD_ISA avx2
#define SIMD_LANES 8
#define SIMD_MR 6           /* 6 × 2 ymm: 12 accumulators of 16 registers */
#define SIMD_NV 2
#define SIMD_REGISTERS 16
#define SIMD_A_BY_LANE 0
#define SIMD_TRANSPOSE_ROWS 8
#define SIMD_K_UNROLL 4      /* Zen 3: the encoder layer 4-11% faster than 1; 8 as 4 */
typedef __m256 vf;

static inline vf vf_zero(void) { return _mm256_setzero_ps(); }
static inline vf vf_set1(float x) { return _mm256_set1_ps(x); }
static inline vf vf_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void vf_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
/* Lane i is on when i < n: compare a lane-index vector with n. */
static inline __m256i simd_mask_(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline vf vf_load_n(const float *p, int n) { return _mm256_maskload_ps(p, simd_mask_(n)); }
static inline void vf_store_n(float *p, vf v, int n) { _mm256_maskstore_ps(p, simd_mask_(n), v); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline vf vf_add(vf a, vf b) { return _mm256_add_ps(a, b); }
static inline vf vf_sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
static inline vf vf_div(vf a, vf b) { return _mm256_div_ps(a, b); }
static inline vf vf_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
static inline vf vf_max(vf a, vf b) { return _mm256_max_ps(a, b); }
static inline float vf_reduce_add(vf v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
/* out[0..4) = vf_reduce_add of a, b, c, d, bit for bit, transposed as
 * they are added. */
static inline void vf_reduce_add4(vf a, vf b, vf c, vf d, float *out)
{
    /* stride 4: [a's four sums, b's], [c's, d's] */
    const vf ab = _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
    const vf cd = _mm256_add_ps(_mm256_permute2f128_ps(c, d, 0x20), _mm256_permute2f128_ps(c, d, 0x31));
    /* stride 2: [a0 a1 c0 c1 | b0 b1 d0 d1] */
    const vf u = _mm256_add_ps(_mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                               _mm256_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
    /* stride 1: [a c a c | b d b d] */
    const vf r = _mm256_add_ps(_mm256_shuffle_ps(u, u, _MM_SHUFFLE(2, 0, 2, 0)),
                               _mm256_shuffle_ps(u, u, _MM_SHUFFLE(3, 1, 3, 1)));
    _mm_storeu_ps(out, _mm_unpacklo_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1)));
}
static inline float vf_reduce_max(vf v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline vf vf_round(vf x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
/* p·2^n for integral n in [-252, 254]: two exponent-field scalings, so that
 * n = 128 (x near 88.7) does not overflow the biased exponent. */
static inline vf vf_ldexp(vf p, vf n)
{
    __m256i ni = _mm256_cvtps_epi32(n), half = _mm256_srai_epi32(ni, 1);
    __m256i e1 = _mm256_slli_epi32(_mm256_add_epi32(half, _mm256_set1_epi32(127)), 23);
    __m256i e2 = _mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(ni, half), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e1)), _mm256_castsi256_ps(e2));
}
/* p·2^n for integral n in [-126, 127]: 2^n is a normal float, one step. */
static inline vf vf_ldexp_small(vf p, vf n)
{
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}
static inline vf vf_select_lt(vf a, vf b, vf x, vf y)   /* a < b ? x : y */
{
    return _mm256_blendv_ps(y, x, _mm256_cmp_ps(a, b, _CMP_LT_OQ));
}
static inline vf vf_select_nan(vf a, vf x)              /* a is NaN ? a : x */
{
    return _mm256_blendv_ps(x, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}
/* vcvtph2ps (F16C, which "avx2" includes: cpu.c); bfloat16 is the top
 * half of a float; vpmovsxbd for int8. Tails through a zeroed buffer. */
static inline vf simd_f16_widen_(__m128i raw) { return _mm256_cvtph_ps(raw); }
static inline vf simd_bf16_widen_(__m128i raw)
{
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}
static inline vf vf_load_f16(const void *p) { return simd_f16_widen_(_mm_loadu_si128((const __m128i *)p)); }
static inline vf vf_load_bf16(const void *p) { return simd_bf16_widen_(_mm_loadu_si128((const __m128i *)p)); }
static inline vf vf_load_i8(const void *p) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p))); }
static inline __m128i simd_tail_(const void *p, int bytes)
{
    __m128i t = _mm_setzero_si128();
    memcpy(&t, p, (size_t)bytes);
    return t;
}
static inline vf vf_load_f16_n(const void *p, int n) { return simd_f16_widen_(simd_tail_(p, 2 * n)); }
static inline vf vf_load_bf16_n(const void *p, int n) { return simd_bf16_widen_(simd_tail_(p, 2 * n)); }
static inline vf vf_load_i8_n(const void *p, int n) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(simd_tail_(p, n))); }

#elif defined(SIMD_TARGET_NEON)
#if !defined(__aarch64__) || !defined(__ARM_NEON)
#error "simd.h: SIMD_TARGET_NEON needs an AArch64 compiler"
#endif
#include <arm_neon.h>
#include <string.h>

#define SIMD_ISA neon
#define SIMD_LANES 4
#define SIMD_MR 8           /* 8 × 3 q-registers: 24 accumulators of 32 */
#define SIMD_NV 3
#define SIMD_REGISTERS 32
#define SIMD_A_BY_LANE 1
#define SIMD_TRANSPOSE_ROWS 4
#define SIMD_K_UNROLL 1      /* its by-lane loop is its own, not unrolled */
typedef float32x4_t vf;

static inline vf vf_zero(void) { return vdupq_n_f32(0.0f); }
static inline vf vf_set1(float x) { return vdupq_n_f32(x); }
static inline vf vf_load(const float *p) { return vld1q_f32(p); }
static inline void vf_store(float *p, vf v) { vst1q_f32(p, v); }
/* No masked loads in Advanced SIMD: through a zeroed buffer. */
static inline vf vf_load_n(const float *p, int n)
{
    float t[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    memcpy(t, p, (size_t)n * sizeof(float));
    return vld1q_f32(t);
}
static inline void vf_store_n(float *p, vf v, int n)
{
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, (size_t)n * sizeof(float));
}
static inline vf vf_fmadd(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
static inline vf vf_add(vf a, vf b) { return vaddq_f32(a, b); }
static inline vf vf_sub(vf a, vf b) { return vsubq_f32(a, b); }
static inline vf vf_div(vf a, vf b) { return vdivq_f32(a, b); }
static inline vf vf_mul(vf a, vf b) { return vmulq_f32(a, b); }
static inline vf vf_max(vf a, vf b) { return vmaxq_f32(a, b); }
/* (v0 + v1) + (v2 + v3), spelt out pairwise for vf_reduce_add4's sake. */
static inline float vf_reduce_add(vf v)
{
    return vpadds_f32(vget_low_f32(vpaddq_f32(v, v)));
}
/* out[0..4) = vf_reduce_add of a, b, c, d, bit for bit. */
static inline void vf_reduce_add4(vf a, vf b, vf c, vf d, float *out)
{
    vst1q_f32(out, vpaddq_f32(vpaddq_f32(a, b), vpaddq_f32(c, d)));
}
static inline float vf_reduce_max(vf v) { return vmaxvq_f32(v); }
static inline vf vf_round(vf x) { return vrndnq_f32(x); }
/* p·2^n for integral n in [-252, 254], in two exponent-field steps. */
static inline vf vf_ldexp(vf p, vf n)
{
    int32x4_t ni = vcvtq_s32_f32(n), half = vshrq_n_s32(ni, 1);
    int32x4_t e1 = vshlq_n_s32(vaddq_s32(half, vdupq_n_s32(127)), 23);
    int32x4_t e2 = vshlq_n_s32(vaddq_s32(vsubq_s32(ni, half), vdupq_n_s32(127)), 23);
    return vmulq_f32(vmulq_f32(p, vreinterpretq_f32_s32(e1)), vreinterpretq_f32_s32(e2));
}
/* p·2^n for integral n in [-126, 127]: 2^n is a normal float, one step. */
static inline vf vf_ldexp_small(vf p, vf n)
{
    int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(127)), 23);
    return vmulq_f32(p, vreinterpretq_f32_s32(e));
}
static inline vf vf_select_lt(vf a, vf b, vf x, vf y) { return vbslq_f32(vcltq_f32(a, b), x, y); }
static inline vf vf_select_nan(vf a, vf x) { return vbslq_f32(vceqq_f32(a, a), x, a); }
/* b·a[lane] + c: FMA by element (lane must be a constant, hence a macro). */
#define vf_fmadd_lane(b, a, lane, c) vfmaq_laneq_f32(c, b, a, lane)
/* fcvtl, shll by 16, sxtl twice: the elements go through a small buffer,
 * at any address and for the tails alike. */
static inline uint16x4_t simd_u16x4_(const void *p, int n)
{
    uint16_t t[4] = { 0, 0, 0, 0 };
    memcpy(t, p, (size_t)n * 2);
    return vld1_u16(t);
}
static inline vf vf_load_f16_n(const void *p, int n) { return vcvt_f32_f16(vreinterpret_f16_u16(simd_u16x4_(p, n))); }
static inline vf vf_load_bf16_n(const void *p, int n) { return vreinterpretq_f32_u32(vshll_n_u16(simd_u16x4_(p, n), 16)); }
static inline vf vf_load_i8_n(const void *p, int n)
{
    int8_t t[8] = { 0 };
    memcpy(t, p, (size_t)n);
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vld1_s8(t)))));
}
static inline vf vf_load_f16(const void *p) { return vf_load_f16_n(p, 4); }
static inline vf vf_load_bf16(const void *p) { return vf_load_bf16_n(p, 4); }
static inline vf vf_load_i8(const void *p) { return vf_load_i8_n(p, 4); }

static inline void simd_transpose4(const float *const src[4], int p, float alpha, float *dst,
                                   size_t ld)
{
    float32x4_t a = vmulq_n_f32(vld1q_f32(src[0] + p), alpha);
    float32x4_t b = vmulq_n_f32(vld1q_f32(src[1] + p), alpha);
    float32x4_t c = vmulq_n_f32(vld1q_f32(src[2] + p), alpha);
    float32x4_t d = vmulq_n_f32(vld1q_f32(src[3] + p), alpha);
    float32x4x2_t ab = vtrnq_f32(a, b), cd = vtrnq_f32(c, d);
    vst1q_f32(dst, vcombine_f32(vget_low_f32(ab.val[0]), vget_low_f32(cd.val[0])));
    vst1q_f32(dst + ld, vcombine_f32(vget_low_f32(ab.val[1]), vget_low_f32(cd.val[1])));
    vst1q_f32(dst + 2 * ld, vcombine_f32(vget_high_f32(ab.val[0]), vget_high_f32(cd.val[0])));
    vst1q_f32(dst + 3 * ld, vcombine_f32(vget_high_f32(ab.val[1]), vget_high_f32(cd.val[1])));
}

#elif defined(SIMD_TARGET_PORTABLE)
/* GCC/Clang vector extensions: 4 floats that the compiler maps to the
 * baseline ISA (SSE2 on x86-64, Advanced SIMD on AArch64). For the tiled
 * attention's decode path (sdpa.c beside this header), so that it runs the
 * same template as the SIMD kernels; there is no GEMM tile here. */
#include <string.h>

#define SIMD_ISA portable
#define SIMD_LANES 4
typedef float vf __attribute__((vector_size(16)));
typedef int simd_vi_ __attribute__((vector_size(16)));

static inline vf vf_zero(void) { return (vf){ 0.0f, 0.0f, 0.0f, 0.0f }; }
static inline vf vf_set1(float x) { return (vf){ x, x, x, x }; }
static inline vf vf_load(const float *p)
{
    vf v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void vf_store(float *p, vf v) { memcpy(p, &v, sizeof v); }
static inline vf vf_load_n(const float *p, int n)
{
    vf v = vf_zero();
    memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}
static inline void vf_store_n(float *p, vf v, int n) { memcpy(p, &v, (size_t)n * sizeof(float)); }
static inline vf vf_fmadd(vf a, vf b, vf c) { return a * b + c; }
static inline vf vf_add(vf a, vf b) { return a + b; }
static inline vf vf_sub(vf a, vf b) { return a - b; }
static inline vf vf_div(vf a, vf b) { return a / b; }
static inline vf vf_mul(vf a, vf b) { return a * b; }
static inline vf vf_select_lt(vf a, vf b, vf x, vf y)   /* a < b ? x : y */
{
    simd_vi_ m = a < b;
    return (vf)((m & (simd_vi_)x) | (~m & (simd_vi_)y));
}
static inline vf vf_select_nan(vf a, vf x)              /* a is NaN ? a : x */
{
    simd_vi_ m = a != a;
    return (vf)((m & (simd_vi_)a) | (~m & (simd_vi_)x));
}
/* As x86's max: the second operand when either is NaN. */
static inline vf vf_max(vf a, vf b) { return vf_select_lt(b, a, a, b); }
static inline float vf_reduce_add(vf v) { return (v[0] + v[1]) + (v[2] + v[3]); }
static inline void vf_reduce_add4(vf a, vf b, vf c, vf d, float *out)
{
    out[0] = vf_reduce_add(a), out[1] = vf_reduce_add(b);
    out[2] = vf_reduce_add(c), out[3] = vf_reduce_add(d);
}
static inline float vf_reduce_max(vf v)
{
    float a = v[0] > v[1] ? v[0] : v[1], b = v[2] > v[3] ? v[2] : v[3];
    return a > b ? a : b;
}
/* Round to nearest (even) for |x| < 2^22 — all its callers pass: adding
 * and taking away 1.5·2^23 leaves the float's integer part. */
static inline vf vf_round(vf x)
{
    const vf magic = vf_set1(12582912.0f);
    return (x + magic) - magic;
}
static inline vf vf_ldexp_small(vf p, vf n)              /* n integral in [-126, 127] */
{
    simd_vi_ e = (__builtin_convertvector(n, simd_vi_) + 127) << 23;
    return p * (vf)e;
}
static inline vf vf_ldexp(vf p, vf n)                    /* n integral in [-252, 254] */
{
    simd_vi_ ni = __builtin_convertvector(n, simd_vi_), half = ni >> 1;
    return p * (vf)((half + 127) << 23) * (vf)((ni - half + 127) << 23);
}
/* The narrow types widened in vectors of 4: bfloat16 and int8 by
 * conversion and shift; binary16 as the avx2 folder did before F16C, with
 * every case exact: normal values re-biased in the exponent field,
 * subnormals m·2^-24 by an exact int-to-float conversion, infinities and
 * NaN given the all-ones exponent. The elements go through a zeroed
 * buffer (any address; the tails). */
#if defined(__SSE2__)
/* On x86-64 the conversions below compiled lane by lane (scalar sign
 * extensions and inserts, 14 instructions per 4 int8 values; blocked's i8
 * decode ran at 2.4x its fp32 time): SSE2's unpacks place each element in
 * its lane at once. */
#include <emmintrin.h>
static inline __m128i simd_bytes_(const void *p, size_t n)   /* n <= 8 bytes, zero-filled */
{
    long long x = 0;
    memcpy(&x, p, n);
    return _mm_loadl_epi64((const __m128i *)&x);
}
static inline simd_vi_ simd_u16_(const void *p, int n)
{
    return (simd_vi_)_mm_unpacklo_epi16(simd_bytes_(p, (size_t)n * 2), _mm_setzero_si128());
}
static inline vf vf_load_i8_n(const void *p, int n)
{
    __m128i q = simd_bytes_(p, (size_t)n);
    q = _mm_unpacklo_epi16(_mm_unpacklo_epi8(q, q), _mm_unpacklo_epi8(q, q));
    return (vf)_mm_cvtepi32_ps(_mm_srai_epi32(q, 24));   /* byte k in the top of lane k */
}
#else
typedef unsigned short simd_u16x4_ __attribute__((vector_size(8)));
typedef signed char simd_i8x4_ __attribute__((vector_size(4)));
static inline simd_vi_ simd_u16_(const void *p, int n)
{
    simd_u16x4_ h = { 0, 0, 0, 0 };
    memcpy(&h, p, (size_t)n * 2);
    return __builtin_convertvector(h, simd_vi_);
}
static inline vf vf_load_i8_n(const void *p, int n)
{
    simd_i8x4_ q = { 0, 0, 0, 0 };
    memcpy(&q, p, (size_t)n);
    return __builtin_convertvector(__builtin_convertvector(q, simd_vi_), vf);
}
#endif
static inline vf vf_load_f16_n(const void *p, int n)
{
    const simd_vi_ h = simd_u16_(p, n), mag = h & 0x7fff, bits = mag << 13;
    const simd_vi_ normal = bits + (112 << 23), special = bits | 0x7f800000;
    const simd_vi_ sub = (simd_vi_)(__builtin_convertvector(mag, vf) * 0x1p-24f);
    const simd_vi_ is_sub = mag < 0x400, is_special = mag > 0x7bff;   /* -1 where true */
    simd_vi_ v = (is_sub & sub) | (is_special & special) | (~(is_sub | is_special) & normal);
    return (vf)(v | ((h ^ mag) << 16));
}
static inline vf vf_load_bf16_n(const void *p, int n) { return (vf)(simd_u16_(p, n) << 16); }
static inline vf vf_load_f16(const void *p) { return vf_load_f16_n(p, SIMD_LANES); }
static inline vf vf_load_bf16(const void *p) { return vf_load_bf16_n(p, SIMD_LANES); }
static inline vf vf_load_i8(const void *p) { return vf_load_i8_n(p, SIMD_LANES); }

#else
#error "simd.h: define SIMD_TARGET_AVX512, SIMD_TARGET_AVX2, SIMD_TARGET_NEON or SIMD_TARGET_PORTABLE (an ISA folder's kernel.c does)"
#endif

#if defined(SIMD_X86)
/* The vector at p, loaded into a register that its users then read. GCC
 * otherwise folds the load into every FMA that reads it (a memory operand),
 * which loads it once per use: the decode path's K pass for four rows and
 * two keys made 10 loads a step where 6 do, and ran 5.7% slower in L3
 * (avx2, Hkv 8, f16; docs/decoding.md). */
static inline vf vf_load_kept(const float *p)
{
    vf v = vf_load(p);
    __asm__("" : "+v"(v));
    return v;
}
#else
static inline vf vf_load_kept(const float *p) { return vf_load(p); }
#endif

#if defined(SIMD_X86)
/* Four rows of four floats from column p, times alpha, stored transposed:
 * dst[q·ld + r] = alpha·src[r][p + q]. SSE, which every x86-64 has. */
static inline void simd_transpose4(const float *const src[4], int p, float alpha, float *dst,
                                   size_t ld)
{
    const __m128 a = _mm_set1_ps(alpha);
    __m128 x0 = _mm_mul_ps(a, _mm_loadu_ps(src[0] + p));
    __m128 x1 = _mm_mul_ps(a, _mm_loadu_ps(src[1] + p));
    __m128 x2 = _mm_mul_ps(a, _mm_loadu_ps(src[2] + p));
    __m128 x3 = _mm_mul_ps(a, _mm_loadu_ps(src[3] + p));
    _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
    _mm_storeu_ps(dst, x0);
    _mm_storeu_ps(dst + ld, x1);
    _mm_storeu_ps(dst + 2 * ld, x2);
    _mm_storeu_ps(dst + 3 * ld, x3);
}

/* 8 rows × 8 floats (rows src[0..8) from column p) → 8 vectors of the
 * transposed block, stored 8 floats each at dst + p·ld for p = 0..7. The
 * classic unpack / shuffle / permute transpose of 8×8 floats in AVX. */
static inline void simd_transpose8(const float *const src[8], int p, float *dst, size_t ld)
{
    __m256 r0 = _mm256_loadu_ps(src[0] + p), r1 = _mm256_loadu_ps(src[1] + p);
    __m256 r2 = _mm256_loadu_ps(src[2] + p), r3 = _mm256_loadu_ps(src[3] + p);
    __m256 r4 = _mm256_loadu_ps(src[4] + p), r5 = _mm256_loadu_ps(src[5] + p);
    __m256 r6 = _mm256_loadu_ps(src[6] + p), r7 = _mm256_loadu_ps(src[7] + p);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst + 0 * ld, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(dst + 1 * ld, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(dst + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(dst + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(dst + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(dst + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(dst + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(dst + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif

static inline vf vf_min(vf a, vf b) { return vf_select_lt(a, b, a, b); }

/* The range reduction and polynomial of e^x shared by vf_exp and
 * vf_exp_nonpos: x = n·ln2 + r with ln2 split in two (Cody–Waite, as
 * vmath.h's attn_expf), |r| <= ln2/2; returns e^r, n in *n, for x the caller
 * has clamped to the normal range. e^r in Horner form, 1 + r·(1 + r·(…)),
 * degree 6, coefficients fitted (weighted least squares towards minimax,
 * then rounded to float) to 1.02 ulp on the reduced range: 6 FMAs where
 * Cephes' form (attn_expf) takes 8 operations for the same accuracy. */
static inline vf vf_exp_reduced(vf xc, vf *n)
{
    *n = vf_round(vf_mul(xc, vf_set1(1.44269504088896341f)));
    vf r = vf_fmadd(*n, vf_set1(-0.693359375f), xc);
    r = vf_fmadd(*n, vf_set1(2.12194440e-4f), r);
    vf p = vf_set1(0.001388105796650052f);
    p = vf_fmadd(p, r, vf_set1(0.008380072191357613f));
    p = vf_fmadd(p, r, vf_set1(0.041667502373456955f));
    p = vf_fmadd(p, r, vf_set1(0.16666337847709656f));
    p = vf_fmadd(p, r, vf_set1(0.4999999403953552f));
    p = vf_fmadd(p, r, vf_set1(1.0f));
    return vf_fmadd(p, r, vf_set1(1.0f));
}

/* e^x, the vector counterpart of vmath.h's attn_expf (the same range and
 * edge values), with n rounded to nearest and 2^n applied by vf_ldexp. 0
 * below -87.3, +inf above 88.7, NaN stays NaN. Bound: 2 ulp over
 * [-87.3, 88.7], tested against the double-precision exp
 * (tests/test_vmath.c). */
static inline vf vf_exp(vf x)
{
    const vf lo = vf_set1(-87.3f), hi = vf_set1(88.7f);
    vf n, p = vf_exp_reduced(vf_max(vf_min(x, hi), lo), &n);
    vf y = vf_ldexp(p, n);
    y = vf_select_lt(x, lo, vf_zero(), y);
    y = vf_select_lt(hi, x, vf_set1(__builtin_inff()), y);
    return vf_select_nan(x, y);
}

/* e^x for x <= 0 — softmax's e^(s − max) and erf's e^(−x²) — with the
 * same polynomial and bound as vf_exp, and 0 below -87.3 (−inf gives 0),
 * NaN stays NaN; at 14 vector operations instead of vf_exp's 20 (AVX-512),
 * because without an upper clamp 2^n is a normal float (n in [-126, 0])
 * and one exponent step suffices. The clamp is max(lo, x), not max(x, lo):
 * x86's max returns its second operand when either is NaN (so NaN goes on
 * through the polynomial), NEON's returns NaN. Correct up to x = 88 (tested
 * over [-87.3, 0]). */
static inline vf vf_exp_nonpos(vf x)
{
    const vf lo = vf_set1(-87.3f);
    vf n, p = vf_exp_reduced(vf_max(lo, x), &n);
    return vf_select_lt(x, lo, vf_zero(), vf_ldexp_small(p, n));
}

/* erf(x) by Abramowitz & Stegun 7.1.26, the formula of vmath.h's attn_erff
 * with vf_exp; and the two GELUs of api.md §1.3 as vmath.h writes them. Bound:
 * GELUs within 5e-7·max(1, |x|) of the double-precision formulas, tested
 * (tests/test_vmath.c). */
static inline vf vf_erf(vf x)
{
    vf ax = vf_max(x, vf_sub(vf_zero(), x));
    vf t = vf_div(vf_set1(1.0f), vf_fmadd(vf_set1(0.3275911f), ax, vf_set1(1.0f)));
    vf poly = vf_fmadd(vf_set1(1.061405429f), t, vf_set1(-1.453152027f));
    poly = vf_fmadd(poly, t, vf_set1(1.421413741f));
    poly = vf_fmadd(poly, t, vf_set1(-0.284496736f));
    poly = vf_fmadd(poly, t, vf_set1(0.254829592f));
    poly = vf_mul(poly, t);
    vf y = vf_sub(vf_set1(1.0f), vf_mul(poly, vf_exp_nonpos(vf_sub(vf_zero(), vf_mul(ax, ax)))));
    return vf_select_lt(x, vf_zero(), vf_sub(vf_zero(), y), y);
}

static inline vf vf_gelu_erf(vf x)
{
    vf e = vf_erf(vf_mul(x, vf_set1(0.70710678118654752f)));
    return vf_mul(vf_mul(vf_set1(0.5f), x), vf_add(vf_set1(1.0f), e));
}

static inline vf vf_gelu_tanh(vf x)
{
    vf x3 = vf_mul(vf_mul(x, x), x);
    vf u = vf_mul(vf_set1(0.7978845608028654f), vf_fmadd(vf_set1(0.044715f), x3, x));
    vf th = vf_sub(vf_set1(1.0f), vf_div(vf_set1(2.0f), vf_add(vf_exp(vf_add(u, u)), vf_set1(1.0f))));
    return vf_mul(vf_mul(vf_set1(0.5f), x), vf_add(vf_set1(1.0f), th));
}

/* attn_<op>__<isa>: names that say the variant in a stack trace. */
#define SIMD_CAT2_(a, b) a##__##b
#define SIMD_CAT_(a, b) SIMD_CAT2_(a, b)
#define SIMD_NAME(fn) SIMD_CAT_(fn, SIMD_ISA)

#endif /* ATTN_SIMD_H */
