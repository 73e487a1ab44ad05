/*
 * gemm.c — the blocked kernel's GEMM: its arch for the frame's blocking
 * loops (frame/gemm.h) in plain C for the baseline ISA — packing, a 6×8
 * register micro-kernel, the fused epilogue (bias, activation, residual)
 * and the skinny path — and its gemm primitive.
 */
#include <string.h>

#include "blocked.h"

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* ---- Packing ------------------------------------------------------------------ */

/* Vectors of 4 floats in GCC/Clang's vector extension (see micro_kernel). */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
    v4f v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline v4f splat(float x)
{
    return (v4f){ x, x, x, x };
}



/* Rows [i0, i0+mb) × k-range [p0, p0+kb) of A, scaled by alpha, into MR-row
 * panels of broadcast quadruples: panel r holds a[p][i] four times from
 * (r·kb·MR + p·MR + i)·4, so the micro-kernel loads a ready vector instead
 * of shuffling a scalar into one (shuffles compete with the multiply and add
 * pipes; loads do not). Rows past mb are 0. */
static void pack_a(const blk_gemm *g, size_t i0, int mb, int p0, int kb, float *dst)
{
    for (int r = 0; r < mb; r += BLK_MR) {
        float *panel = dst + (size_t)r * kb * BLK_BCAST;
        int rows = min_int(BLK_MR, mb - r);
        for (int i = 0; i < BLK_MR; i++) {
            const float *src = g->a + (i0 + (size_t)(r + i)) * g->lda + p0;
            for (int p = 0; p < kb; p++) {
                float v = i < rows ? g->alpha * src[p] : 0.0f;
                float *q = panel + ((size_t)p * BLK_MR + i) * BLK_BCAST;
                q[0] = q[1] = q[2] = q[3] = v;
            }
        }
    }
}

/* Columns [j0, j0+nb) × k-range [p0, p0+kb) of op(B) into NR-column panels:
 * panel c holds b[p][j] at c·kb·NR + p·NR + j; columns past nb are 0.
 * For the [n][k] layout (nn.Linear weights, K in QKᵀ) this is a transpose:
 * it reads NR rows side by side and writes each step's NR values at once,
 * which the compiler turns into vector stores. */
static void pack_b(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst)
{
    for (int c = 0; c < nb; c += BLK_NR) {
        float *panel = dst + (size_t)c * kb;
        int cols = min_int(BLK_NR, nb - c);
        if (g->b_is_nk && cols == BLK_NR) {
            const float *src[BLK_NR];
            for (int j = 0; j < BLK_NR; j++)
                src[j] = blk_b_row(g, j0 + c + j) + p0;
            /* Built as vectors, not through a float[8] (whose scalar stores
             * a vector reload would have to wait for). NOTE: BLK_NR == 8. */
            for (int p = 0; p < kb; p++) {
                v4f lo = { src[0][p], src[1][p], src[2][p], src[3][p] };
                v4f hi = { src[4][p], src[5][p], src[6][p], src[7][p] };
                memcpy(panel + (size_t)p * BLK_NR, &lo, sizeof lo);
                memcpy(panel + (size_t)p * BLK_NR + 4, &hi, sizeof hi);
            }
        } else if (g->b_is_nk) {
            for (int p = 0; p < kb; p++)
                for (int j = 0; j < BLK_NR; j++)
                    panel[p * BLK_NR + j] = j < cols ? blk_b_row(g, j0 + c + j)[p0 + p] : 0.0f;
        } else {
            for (int p = 0; p < kb; p++) {
                const float *src = g->b + (size_t)(p0 + p) * g->ldb + j0 + c;
                for (int j = 0; j < BLK_NR; j++)
                    panel[p * BLK_NR + j] = j < cols ? src[j] : 0.0f;
            }
        }
    }
}

/* ---- Micro-kernel and epilogue ---------------------------------------------------- */


/* acc = Σ_p a[p][·] ⊗ b[p][·] over kb steps.
 *
 * Written with GCC/Clang vector types (4 floats, the width every 64-bit
 * target has: SSE2 on x86-64, NEON on AArch64) rather than left to the
 * auto-vectorizer, which at -O2 keeps a 6×8 accumulator array in memory.
 * Named accumulators stay in 12 registers; each step loads one B row (two
 * vectors) and six broadcast A values. Still ISA-neutral: no intrinsics. */
/* C[0..MR)[0..NR) (row stride ldc) = (first ? 0 : C) + Σ_p a[p][·] ⊗ b[p][·]
 * over kb steps, for a full tile; a partial tile (mr < MR or nr < NR) goes
 * through a local tile first so that nothing outside it is touched. */
static void micro_kernel(int kb, const float *restrict a, const float *restrict b, float *c,
                         size_t ldc, int mr, int nr, int first)
{
    v4f c00 = splat(0), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    v4f c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int p = 0; p < kb; p++, a += BLK_MR * BLK_BCAST, b += BLK_NR) {
        v4f b0 = load4(b), b1 = load4(b + 4), x;
        x = load4(a + 0); c00 += x * b0; c01 += x * b1;
        x = load4(a + 4); c10 += x * b0; c11 += x * b1;
        x = load4(a + 8); c20 += x * b0; c21 += x * b1;
        x = load4(a + 12); c30 += x * b0; c31 += x * b1;
        x = load4(a + 16); c40 += x * b0; c41 += x * b1;
        x = load4(a + 20); c50 += x * b0; c51 += x * b1;
    }
    const v4f acc[BLK_MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 },
                                 { c30, c31 }, { c40, c41 }, { c50, c51 } };
    if (mr == BLK_MR && nr == BLK_NR) {
        for (int i = 0; i < BLK_MR; i++) {
            float *row = c + (size_t)i * ldc;
            v4f lo = acc[i][0], hi = acc[i][1];
            if (!first) {
                lo += load4(row);
                hi += load4(row + 4);
            }
            memcpy(row, &lo, sizeof lo);
            memcpy(row + 4, &hi, sizeof hi);
        }
        return;
    }
    float tile[BLK_MR][BLK_NR];
    memcpy(tile, acc, sizeof tile);
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++)
            c[(size_t)i * ldc + j] = first ? tile[i][j] : c[(size_t)i * ldc + j] + tile[i][j];
}

/* The epilogue on an mr×nr tile of C, once its whole k-sum is in. */
static void epilogue(const blk_gemm *g, size_t i0, int j0, int mr, int nr)
{
    blk_epilogue_tile(g, i0, j0, mr, nr);
}

/* Few rows of A (blk_arch.skinny): each row of B ([n][k]) read where it
 * is, once, and dotted with every row of A (two at a time, in L1): 4 B rows
 * × 2 A rows of 4-float partial sums, 8 of SSE2's 16 registers. */
#define SKINNY_MI 2
#define SKINNY_NJ 4
_Static_assert(BLK_SKINNY_ROWS % SKINNY_MI == 0, "the skinny path takes rows in pairs");
static void skinny(const blk_gemm *g, int n0, int n1)
{
    const int m = (int)g->m, k = g->k, body = k / 4 * 4;
    for (int j = n0; j < n1; j += SKINNY_NJ) {
        int nj = min_int(SKINNY_NJ, n1 - j);
        const float *b[SKINNY_NJ];
        for (int q = 0; q < SKINNY_NJ; q++)   /* past n1: row j again, not stored */
            b[q] = blk_b_row(g, j + (q < nj ? q : 0));
        for (int i0 = 0; i0 < m; i0 += SKINNY_MI) {
            int mi = min_int(SKINNY_MI, m - i0);
            const float *a[SKINNY_MI];
            v4f acc[SKINNY_MI][SKINNY_NJ];
            float sum[SKINNY_MI][SKINNY_NJ];
            for (int i = 0; i < SKINNY_MI; i++) {
                a[i] = g->a + (size_t)(i0 + (i < mi ? i : 0)) * g->lda;
                for (int q = 0; q < SKINNY_NJ; q++)
                    acc[i][q] = splat(0.0f);
            }
            for (int p = 0; p < body; p += 4)
                for (int i = 0; i < SKINNY_MI; i++) {
                    v4f av = load4(a[i] + p);
                    for (int q = 0; q < SKINNY_NJ; q++)
                        acc[i][q] += av * load4(b[q] + p);
                }
            for (int i = 0; i < SKINNY_MI; i++)
                for (int q = 0; q < SKINNY_NJ; q++) {
                    sum[i][q] = (acc[i][q][0] + acc[i][q][1]) + (acc[i][q][2] + acc[i][q][3]);
                    for (int p = body; p < k; p++)
                        sum[i][q] += a[i][p] * b[q][p];
                }
            for (int i = 0; i < mi; i++)
                for (int q = 0; q < nj; q++)
                    g->c[(size_t)(i0 + i) * g->ldc + j + q] = g->alpha * sum[i][q];
        }
        blk_epilogue_tile(g, 0, j, m, nj);
    }
}

/* ---- The arch and the primitive ---------------------------------------------------- */

static const blk_arch portable = {
    .mr = BLK_MR, .nr = BLK_NR, .a_bcast = BLK_BCAST,
    .pack_a = pack_a, .pack_b = pack_b, .kernel = micro_kernel, .epilogue = epilogue,
    .skinny = skinny, .skinny_rows = BLK_SKINNY_ROWS,
    .layernorm_row = attn_layernorm_row__portable,
};

/* ---- blocked-bf16: the same loops, operands rounded to bf16 ----------------------- */

/* Every packed value rounded to bf16 (nearest, ties to even) and kept as the
 * fp32 it widens to: the product of two such values is exact in fp32 (8 by
 * 8 significant bits), so the micro-kernel's fp32 FMAs accumulate exactly
 * the products a bf16 dot-product instruction would (VDPBF16PS, BFMMLA),
 * in fp32 — the emulation of contract §9.3 on any CPU. */
static void round_to_bf16(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = attn_bf16_to_f32(attn_f32_to_bf16(x[i]));
}

static size_t round_up_size(int n, int to)
{
    return (size_t)((n + to - 1) / to) * (size_t)to;
}

static void pack_a_bf16(const blk_gemm *g, size_t i0, int mb, int p0, int kb, float *dst)
{
    pack_a(g, i0, mb, p0, kb, dst);
    round_to_bf16(dst, round_up_size(mb, BLK_MR) * (size_t)kb * BLK_BCAST);
}

static void pack_b_bf16(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst)
{
    pack_b(g, j0, nb, p0, kb, dst);
    round_to_bf16(dst, round_up_size(nb, BLK_NR) * (size_t)kb);
}

/* No skinny path and no operand read in place: every operand is packed,
 * so every one is rounded. */
static const blk_arch portable_bf16 = {
    .mr = BLK_MR, .nr = BLK_NR, .a_bcast = BLK_BCAST,
    .pack_a = pack_a_bf16, .pack_b = pack_b_bf16, .kernel = micro_kernel, .epilogue = epilogue,
    .layernorm_row = attn_layernorm_row__portable,
};

const blk_arch *blk_arch_portable_bf16(void)
{
    return &portable_bf16;
}

size_t attn_gemm_scratch__blocked_bf16(const attn_exec *ex, size_t m, int n, int k)
{
    return blk_gemm_scratch(&portable_bf16, m, n, k, attn_exec_scratch_threads(ex), ex->params);
}

void attn_gemm__blocked_bf16(const attn_exec *ex, const attn_gemm_problem *p)
{
    blk_gemm_threaded(&portable_bf16, ex, p);
}

size_t attn_packed_floats__blocked_bf16(const attn_exec *ex, int n, int k)
{
    return blk_packed_floats(&portable_bf16, ex->params, n, k);
}

void attn_pack_weights__blocked_bf16(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                                     attn_packed_b *out)
{
    blk_pack_weights(&portable_bf16, ex->params, p, dst, out);
}

size_t attn_packed_floats__blocked(const attn_exec *ex, int n, int k)
{
    return blk_packed_floats(&portable, ex->params, n, k);
}

void attn_pack_weights__blocked(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                                attn_packed_b *out)
{
    blk_pack_weights(&portable, ex->params, p, dst, out);
}

size_t attn_gemm_scratch__blocked(const attn_exec *ex, size_t m, int n, int k)
{
    return blk_gemm_scratch(&portable, m, n, k, attn_exec_scratch_threads(ex), ex->params);
}

void attn_gemm__blocked(const attn_exec *ex, const attn_gemm_problem *p)
{
    blk_gemm_threaded(&portable, ex, p);
}

const blk_arch *blk_arch_portable(void)
{
    return &portable;
}
