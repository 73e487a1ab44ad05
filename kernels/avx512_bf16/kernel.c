/*
 * kernel.c — the avx512-bf16 kernel: the products in bf16 on AVX512_BF16's
 * VDPBF16PS (each fp32 lane += a₀·b₀ + a₁·b₁ of a pair of bf16 values: twice
 * the multiply-adds of an fp32 FMA per instruction), accumulated in fp32;
 * softmax, LayerNorm, activations, biases, residuals and outputs in fp32
 * (api.md §9.3).
 *
 * Its GEMM is the frame's blocking loops (frame/gemm.h) with an arch whose
 * packed panels hold bf16 pairs along the depth, one pair per 32-bit slot
 * where the fp32 arch holds one float:
 *   A panel: pair q of row i at i·⌈kb/2⌉ + q (each row's pairs in a run,
 *            written by vector stores; broadcast as one 32-bit value)
 *   B panel: pair q of column j at q·NR + j (a vector: 16 columns' pairs)
 * so a panel of depth kb takes ⌈kb/2⌉ of the kb slots the frame lays out.
 * Rounding happens as the operands are packed (VCVTNE2PS2BF16: nearest
 * even), and every operand is packed: the products' operands are all bf16.
 * Its attention is the SIMD kernels' streaming attention (simd/sdpa_impl.h,
 * compiled here for AVX-512 over this arch): K and V packed once per head
 * into pairs, the online softmax in fp32, which stores P as pairs.
 * Its parameters are the SIMD kernels' (simd_kernel.h), stream_rows unused.
 *
 * The FFN's hidden (compose.c) goes from one product to the next in bf16:
 * the first's epilogue stores it in the layout of the second's packed A
 * panels (frame/gemm.h blk_hidden16_at), which the second reads in place.
 *
 * Two paths stay fp32, memory-bound where bf16 buys nothing: a GEMM of at
 * most AVX512_SKINNY_ROWS rows (a decoding step: the weights read once,
 * where they are, by avx512's skinny path; converting them would cost more
 * than the product), and attention's decode path (avx512's, keys and values
 * read once in place). Both are more accurate than the bf16 bound needs.
 */
#include <immintrin.h>
#include <string.h>

#define SIMD_TARGET_AVX512 1   /* simd.h's vectors for the attention template */
#include "../frame/gemm.h"
#include "../frame/simd.h"
#include "../simd/simd_kernel.h"

/* Register tile: 12 rows × 32 columns (2 zmm): 24 accumulators, 2 B vectors
 * and a broadcast of 32 registers, as avx512's fp32 tile. */
#define BF_MR 12
#define BF_NR 32
#define BF_NV 2
/* GEMMs of at most this many rows run avx512's fp32 skinny path. */
#define AVX512_SKINNY_ROWS 6

static inline int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* n (≤ 32) floats from src, times alpha, rounded to bf16 and stored as
 * ⌈n/2⌉ pairs in out[0..16): out[q] = bf16(x[2q]) | bf16(x[2q+1]) << 16,
 * a missing x[n] as 0. */
static inline __m512i pairs_of(const float *src, int n, float alpha)
{
    __mmask16 m0 = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
    __mmask16 m1 = n >= 32 ? 0xffff : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
    __m512 va = _mm512_set1_ps(alpha);
    __m512 x0 = _mm512_mul_ps(_mm512_maskz_loadu_ps(m0, src), va);
    __m512 x1 = _mm512_mul_ps(_mm512_maskz_loadu_ps(m1, src + 16), va);
    /* cvtne2ps2bf16(hi, lo): lanes 0-15 from lo, 16-31 from hi: the 32
     * values in order, which read as 32-bit lanes are the 16 pairs. */
    return (__m512i)_mm512_cvtne2ps_pbh(x1, x0);
}

/* r[0..16): 16 rows of 16 32-bit elements, transposed in place (r[q] =
 * element q of every row): unpacks within 128-bit blocks, then whole
 * blocks, 64 shuffles for 256 elements. */
static inline void transpose16(__m512i *r)
{
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {   /* u[4i+e]: rows 4i..4i+3, element e of each block */
        u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int e = 0; e < 4; e++) {
        __m512i v0 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0x88);
        __m512i w0 = _mm512_shuffle_i32x4(u[e], u[4 + e], 0xDD);
        __m512i v1 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0x88);
        __m512i w1 = _mm512_shuffle_i32x4(u[8 + e], u[12 + e], 0xDD);
        r[e] = _mm512_shuffle_i32x4(v0, v1, 0x88);
        r[8 + e] = _mm512_shuffle_i32x4(v0, v1, 0xDD);
        r[4 + e] = _mm512_shuffle_i32x4(w0, w1, 0x88);
        r[12 + e] = _mm512_shuffle_i32x4(w0, w1, 0xDD);
    }
}

/* Columns col.. of op(B) = [n][k] rows (K in Q·Kᵀ), n of them valid (the
 * rest 0, n ≤ 16 may be ≤ 0), depth [p0, p0+kb), as pairs: pair q of
 * column j at dst[q·BF_NR + j]. 16 rows are converted 32 values at a time
 * and transposed in registers, each pair row stored as one vector (one
 * scalar store per pair before: K's packing was 0.9% of an encoder layer). */
static void columns_to_pairs(const blk_gemm *g, int col, int n, int p0, int kb, uint32_t *dst)
{
    for (int p = 0; p < kb; p += 32) {
        const int depth = min_int(32, kb - p), nq = (depth + 1) / 2;
        __m512i r[16];
        for (int j = 0; j < 16; j++)
            r[j] = j < n ? pairs_of(blk_b_row(g, col + j) + p0 + p, depth, 1.0f)
                         : _mm512_setzero_si512();
        transpose16(r);
        for (int q = 0; q < nq; q++)
            _mm512_storeu_si512(dst + (size_t)(p / 2 + q) * BF_NR, r[q]);
    }
}

/* Rows [i0, i0+mb) × depth [p0, p0+kb) of A, times alpha: panel r (rows
 * r..r+MR) at dst + r·kb, its row i's pairs from i·⌈kb/2⌉ on, converted
 * 32 values at a time and stored whole (a layout of pair q at q·MR + i
 * took a scalar store per pair: 5% of an encoder layer); rows past mb 0. */
static void pack_a(const blk_gemm *g, size_t i0, int mb, int p0, int kb, float *dst)
{
    const int pairs = (kb + 1) / 2;
    for (int r = 0; r < mb; r += BF_MR) {
        uint32_t *panel = (uint32_t *)(dst + (size_t)r * kb);
        for (int i = 0; i < BF_MR; i++) {
            uint32_t *row = panel + (size_t)i * pairs;
            const float *src = g->a + (i0 + (size_t)(r + i)) * g->lda + p0;
            for (int p = 0; p < kb; p += 32) {
                int n = min_int(32, kb - p), nq = (n + 1) / 2;
                __m512i v = r + i < mb ? pairs_of(src + p, n, g->alpha) : _mm512_setzero_si512();
                _mm512_mask_storeu_epi32(row + p / 2, (__mmask16)((1u << nq) - 1), v);
            }
        }
    }
}

/* Attention's P as the softmax computes it (simd/sdpa_impl.h,
 * frame/decode_impl.h): row i of the packed P (pack_a's layout at ppack,
 * kb deep) starts at p_row, and the softmax stores the first n lanes of
 * e0, e1 there from element j on, rounded to bf16 (a row's pairs are its
 * bf16 values in order). Packing P from the fp32 scores afterwards read
 * the bq × bk block back from L2: 4.4% of SDPA H12 L2048 (Zen 4, 1 thread). */
static inline uint16_t *p_row(float *ppack, int kb, int i)
{
    return (uint16_t *)((uint32_t *)(ppack + (size_t)(i / BF_MR) * BF_MR * (size_t)kb)
                        + (size_t)(i % BF_MR) * (size_t)((kb + 1) / 2));
}

static inline void p_store(uint16_t *p16, int j, __m512 e0, __m512 e1, int n)
{
    __mmask32 m = n >= 32 ? ~(__mmask32)0 : n > 0 ? ((__mmask32)1 << n) - 1 : 0;
    _mm512_mask_storeu_epi16(p16 + j, m, (__m512i)_mm512_cvtne2ps_pbh(e1, e0));
}
#define SDPA_P_ROW p_row
#define SDPA_P_STORE p_store

/* Columns [j0, j0+nb) × depth [p0, p0+kb) of op(B): panel c at dst + c·kb,
 * pair q of its column j at q·NR + j; columns past nb 0. */
static void pack_b(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst)
{
    /* [k][n] (V in P·V): a pair is two rows' values of a column; the two
     * rows are rounded together and interleaved by one permute. */
    static const short interleave[32] = { 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23,
                                          8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30,
                                          15, 31 };
    const __m512i idx = _mm512_loadu_si512(interleave);
    for (int c = 0; c < nb; c += BF_NR) {
        uint32_t *panel = (uint32_t *)(dst + (size_t)c * kb);
        int cols = min_int(BF_NR, nb - c);
        if (g->b_is_nk) {
            for (int j = 0; j < BF_NR; j += 16)
                columns_to_pairs(g, j0 + c + j, cols - j, p0, kb, panel + j);
            continue;
        }
        for (int q = 0; q < (kb + 1) / 2; q++) {
            const float *r0 = g->b + (size_t)(p0 + 2 * q) * g->ldb + j0 + c;
            const int has_r1 = 2 * q + 1 < kb;
            for (int v = 0; v < BF_NV; v++) {
                int n = cols - v * 16;
                __mmask16 m = n >= 16 ? 0xffff : n > 0 ? (__mmask16)((1u << n) - 1) : 0;
                __m512 x0 = _mm512_maskz_loadu_ps(m, r0 + v * 16);
                __m512 x1 = has_r1 ? _mm512_maskz_loadu_ps(m, r0 + g->ldb + v * 16)
                                   : _mm512_setzero_ps();
                __m512i both = (__m512i)_mm512_cvtne2ps_pbh(x1, x0);
                _mm512_storeu_si512(panel + (size_t)q * BF_NR + v * 16,
                                    _mm512_permutexvar_epi16(idx, both));
            }
        }
    }
}

/* C[0..mr)[0..nr) (row stride ldc) = (first ? 0 : C) + Σ_q a[q][·] ⊗ b[q][·]
 * over the ⌈kb/2⌉ pairs of the panels; with g (the last depth block of a
 * tile at (i0, j0) of g->c), g's bias, activation and residual applied to
 * the sums in registers before the tile's only store (the epilogue as a
 * pass over the stored tile took 6% of an encoder layer). Inlined into
 * both entries, where g is a constant. */
static inline __attribute__((always_inline)) void
tile(int kb, const float *a_, const float *b_, float *c, size_t ldc, int mr, int nr, int first,
     const blk_gemm *g, size_t i0, int j0)
{
    const uint32_t *a = (const uint32_t *)a_, *b = (const uint32_t *)b_;
    const size_t lda = (size_t)(kb + 1) / 2;   /* row i's pairs at a + i·lda */
    __m512 acc[BF_MR][BF_NV];
#pragma GCC unroll 12
    for (int i = 0; i < BF_MR; i++)
#pragma GCC unroll 2
        for (int v = 0; v < BF_NV; v++)
            acc[i][v] = _mm512_setzero_ps();
    const int pairs = (kb + 1) / 2;
    for (int q = 0; q < pairs; q++, a++, b += BF_NR) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 12
        for (int i = 0; i < BF_MR; i++) {
            __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[(size_t)i * lda]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
    }
#pragma GCC unroll 12
    for (int i = 0; i < BF_MR; i++) {
        if (i >= mr)
            break;
#pragma GCC unroll 2
        for (int v = 0; v < BF_NV; v++) {
            int n = nr - v * 16;
            if (n <= 0)
                break;
            __mmask16 m = n >= 16 ? 0xffff : (__mmask16)((1u << n) - 1);
            float *dst = c + (size_t)i * ldc + v * 16;
            __m512 x = acc[i][v];
            if (!first)
                x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, dst));
            if (g) {
                const int j = j0 + v * 16;
                if (g->bias)
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, g->bias + j));
                if (g->act == ATTN_ACT_GELU_ERF)
                    x = vf_gelu_erf(x);
                else if (g->act == ATTN_ACT_GELU_TANH)
                    x = vf_gelu_tanh(x);
                else if (g->act == ATTN_ACT_RELU)
                    x = _mm512_max_ps(x, _mm512_setzero_ps());
                if (g->residual)
                    x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(
                                             m, g->residual + (i0 + (size_t)i) * g->ldc + j));
                if (g->c16) {   /* the finished values in bf16 only (nearest even) */
                    _mm256_mask_storeu_epi16(blk_hidden16_at(g, i0 + (size_t)i, j), m,
                                             (__m256i)_mm512_cvtneps_pbh(x));
                    continue;
                }
            }
            _mm512_mask_storeu_ps(dst, m, x);
        }
    }
}

static void micro_kernel(int kb, const float *a, const float *b, float *c, size_t ldc, int mr,
                         int nr, int first)
{
    tile(kb, a, b, c, ldc, mr, nr, first, NULL, 0, 0);
}

static void micro_kernel_epilogue(int kb, const float *a, const float *b, const blk_gemm *g,
                                  size_t i0, int j0, int mr, int nr, int first)
{
    tile(kb, a, b, g->c + i0 * g->ldc + j0, g->ldc, mr, nr, first, g, i0, j0);
}

#include "../simd/layernorm_impl.h"

static const blk_arch SIMD_NAME(blk_arch) = {
    .mr = BF_MR, .nr = BF_NR, .a_bcast = 1, .layernorm_row = SIMD_NAME(layernorm_row),
    .pack_a = pack_a, .pack_b = pack_b, .kernel = micro_kernel,
    .kernel_epilogue = micro_kernel_epilogue,
};

#define BF_FP32_ROW attn_kernel__avx512
#define BF_SKINNY_ROWS AVX512_SKINNY_ROWS
#define BF_KERNEL_SYMBOL attn_kernel__avx512_bf16
#define BF_KERNEL_NAME "avx512-bf16"
#define BF_DESCRIPTION "AVX512_BF16: products in bf16 (VDPBF16PS, 12x32 tile, fp32 accumulation), " \
                       "streaming attention; decoding steps fp32 (avx512's paths), OpenMP"
#define BF_REQUIRES ATTN_REQUIRES_AVX512_BF16
/* Intel's cores with AMX (Sapphire Rapids and later) issue VDPBF16PS on one
 * port where FMA has two: on a 16-core Xeon of family 6 model 207 its
 * measured peak was 913 GFLOP/s against FMA's 1837, and this row ran
 * 0.62-0.65x avx512 (encoder L 512, SDPA L 2048, 1 and 16 threads;
 * docs/kernels.md). There bf16 pays through AMX tiles, not here: a choice
 * by features takes avx512. */
#define BF_PASSED_OVER_ON ATTN_CPU_AMX_BF16
#define BF_HIDDEN16 1
#include "../simd/bf16_row_impl.h"
