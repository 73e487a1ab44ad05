/*
 * kernel.c — the neon-bf16 kernel: the products in bf16 on AArch64's BF16
 * extension (BFDOT: each fp32 lane += a₀·b₀ + a₁·b₁ of a pair of bf16
 * values), accumulated in fp32; everything else fp32 (api.md §9.3). The
 * AArch64 counterpart of avx512_bf16/kernel.c, on the same frame:
 *   A panel: pair q of row i at q·MR + i (a vector of four rows' pairs,
 *            which BFDOT takes by lane);
 *   B panel: pair q of column j at q·NR + j (a vector: four columns' pairs);
 * each a pair per 32-bit slot of the frame's fp32 layout. The rounding to
 * bf16 is attn_f32_to_bf16 (nearest even) as the operands are packed, so
 * it is the same bit for bit as blocked-bf16's and avx512-bf16's. Its
 * attention is simd/sdpa_impl.h compiled over this arch (P packed into
 * pairs; a key tile's depth counted in pairs); a GEMM of at most 6 rows and
 * attention's decode path are neon's, in fp32, as in avx512-bf16. Tested
 * under qemu-aarch64 (make test-neon), whose CPU has BF16.
 */
#include <arm_neon.h>
#include <string.h>

#define SIMD_TARGET_NEON 1
#include "../frame/gemm.h"
#include "../frame/simd.h"
#include "../simd/simd_kernel.h"

/* Register tile: 8 rows × 12 columns (3 vectors): 24 accumulators, 3 B
 * vectors and 2 A vectors of the 32 q registers, as neon's fp32 tile. */
#define BF_MR 8
#define BF_NR 12
#define BF_NV 3
#define NEON_SKINNY_ROWS 6

static inline int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* The pair (x[0], x[1]) (x[1] absent: 0) rounded, as one 32-bit slot. */
static inline uint32_t pair_of(const float *x, int two, float alpha)
{
    uint32_t lo = attn_f32_to_bf16(alpha * x[0]);
    uint32_t hi = two ? attn_f32_to_bf16(alpha * x[1]) : 0;
    return lo | hi << 16;
}

/* Rows [i0, i0+mb) × depth [p0, p0+kb) of A, times alpha: panel r at
 * dst + r·kb, pair q of its row i at q·MR + i; rows past mb 0. */
static void pack_a(const blk_gemm *g, size_t i0, int mb, int p0, int kb, float *dst)
{
    const int pairs = (kb + 1) / 2;
    for (int r = 0; r < mb; r += BF_MR) {
        uint32_t *panel = (uint32_t *)(dst + (size_t)r * kb);
        for (int i = 0; i < BF_MR; i++) {
            const float *src = g->a + (i0 + (size_t)(r + i)) * g->lda + p0;
            for (int q = 0; q < pairs; q++)
                panel[(size_t)q * BF_MR + i] =
                    r + i < mb ? pair_of(src + 2 * q, 2 * q + 1 < kb, g->alpha) : 0;
        }
    }
}

/* Columns [j0, j0+nb) × depth [p0, p0+kb) of op(B): panel c at dst + c·kb,
 * pair q of its column j at q·NR + j; columns past nb 0. */
static void pack_b(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst)
{
    const int pairs = (kb + 1) / 2;
    for (int c = 0; c < nb; c += BF_NR) {
        uint32_t *panel = (uint32_t *)(dst + (size_t)c * kb);
        int cols = min_int(BF_NR, nb - c);
        for (int j = 0; j < BF_NR; j++)
            for (int q = 0; q < pairs; q++) {
                uint32_t v = 0;
                if (j < cols && g->b_is_nk) {
                    v = pair_of(blk_b_row(g, j0 + c + j) + p0 + 2 * q, 2 * q + 1 < kb, 1.0f);
                } else if (j < cols) {
                    const float *x = g->b + (size_t)(p0 + 2 * q) * g->ldb + j0 + c + j;
                    float two[2] = { x[0], 2 * q + 1 < kb ? x[g->ldb] : 0.0f };
                    v = pair_of(two, 1, 1.0f);
                }
                panel[(size_t)q * BF_NR + j] = v;
            }
    }
}

/* C[0..mr)[0..nr) = (first ? 0 : C) + Σ_q a[q][·] ⊗ b[q][·] over the
 * ⌈kb/2⌉ pairs: per pair step 3 B vectors, 2 A vectors, 24 BFDOTs by lane. */
static void micro_kernel(int kb, const float *a_, const float *b_, float *c, size_t ldc, int mr,
                         int nr, int first)
{
    const uint32_t *a = (const uint32_t *)a_, *b = (const uint32_t *)b_;
    float32x4_t acc[BF_MR][BF_NV];
    for (int i = 0; i < BF_MR; i++)
        for (int v = 0; v < BF_NV; v++)
            acc[i][v] = vdupq_n_f32(0.0f);
    const int pairs = (kb + 1) / 2;
    for (int q = 0; q < pairs; q++, a += BF_MR, b += BF_NR) {
        bfloat16x8_t b0 = vreinterpretq_bf16_u32(vld1q_u32(b));
        bfloat16x8_t b1 = vreinterpretq_bf16_u32(vld1q_u32(b + 4));
        bfloat16x8_t b2 = vreinterpretq_bf16_u32(vld1q_u32(b + 8));
        bfloat16x8_t a0 = vreinterpretq_bf16_u32(vld1q_u32(a));
        bfloat16x8_t a1 = vreinterpretq_bf16_u32(vld1q_u32(a + 4));
#define BF_ROW(i, av, lane)                                                                        \
    acc[i][0] = vbfdotq_laneq_f32(acc[i][0], b0, av, lane);                                       \
    acc[i][1] = vbfdotq_laneq_f32(acc[i][1], b1, av, lane);                                       \
    acc[i][2] = vbfdotq_laneq_f32(acc[i][2], b2, av, lane);
        BF_ROW(0, a0, 0) BF_ROW(1, a0, 1) BF_ROW(2, a0, 2) BF_ROW(3, a0, 3)
        BF_ROW(4, a1, 0) BF_ROW(5, a1, 1) BF_ROW(6, a1, 2) BF_ROW(7, a1, 3)
#undef BF_ROW
    }
    float tile[BF_MR][BF_NR];
    for (int i = 0; i < BF_MR; i++)
        for (int v = 0; v < BF_NV; v++)
            vst1q_f32(&tile[i][v * 4], acc[i][v]);
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            c[(size_t)i * ldc + j] = first ? tile[i][j] : c[(size_t)i * ldc + j] + tile[i][j];
}

static void epilogue(const blk_gemm *g, size_t i0, int j0, int mr, int nr)
{
    blk_epilogue_tile(g, i0, j0, mr, nr);
}

#include "../simd/layernorm_impl.h"

static const blk_arch SIMD_NAME(blk_arch) = {
    .mr = BF_MR, .nr = BF_NR, .a_bcast = 1, .layernorm_row = SIMD_NAME(layernorm_row),
    .pack_a = pack_a, .pack_b = pack_b, .kernel = micro_kernel, .epilogue = epilogue,
};

#define BF_FP32_ROW attn_kernel__neon
#define BF_SKINNY_ROWS NEON_SKINNY_ROWS
#define BF_KERNEL_SYMBOL attn_kernel__neon_bf16
#define BF_KERNEL_NAME "neon-bf16"
#define BF_DESCRIPTION "AArch64 BF16: products in bf16 (BFDOT by lane, 8x12 tile, fp32 " \
                       "accumulation), streaming attention; decoding steps fp32 (neon's), OpenMP"
#define BF_REQUIRES ATTN_REQUIRES_NEON_BF16
#include "../simd/bf16_row_impl.h"
