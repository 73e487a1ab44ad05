/*
 * gemm_impl.h — the SIMD kernels' GEMM arch (frame/gemm.h): packing, an MR×NR
 * register micro-kernel with FMA, and the fused epilogue. A template: each
 * ISA folder includes it once, compiled with its own flags, and gets
 * SIMD_NAME(blk_arch) (e.g. blk_arch__avx512) for the shared blocking loops.
 *
 * Register tile: MR rows × NV vectors (simd.h sets them per ISA). Each step
 * of the k loop loads NV vectors of a packed B row and broadcasts MR values
 * of A straight from the packed panel (a broadcast load uses a load port,
 * not a shuffle), then issues MR·NV independent FMAs.
 *   AVX-512: 12 × 2 zmm = 12×32 floats, 24 accumulators of 32 registers.
 *   AVX2:     6 × 2 ymm =  6×16 floats, 12 accumulators of 16 registers.
 *   NEON:     8 × 3 q   =  8×12 floats, 24 accumulators of 32 registers.
 */
#include <string.h>

#include "../frame/gemm.h"
#include "../frame/simd.h"

#if !defined(SIMD_REGISTERS) || !defined(SIMD_A_BY_LANE) || !defined(SIMD_TRANSPOSE_ROWS)
#error "gemm_impl.h: simd.h's target has no GEMM tile"
#endif

#define GEMM_MR SIMD_MR
#define GEMM_NV SIMD_NV
#define GEMM_NR (GEMM_NV * SIMD_LANES)

/* The micro-kernel's depth loop unrolled SIMD_K_UNROLL steps (simd.h), or
 * ATTN_GEMM_K_UNROLL for a build that times another count. */
#ifdef ATTN_GEMM_K_UNROLL
#define GEMM_K_UNROLL ATTN_GEMM_K_UNROLL
#else
#define GEMM_K_UNROLL SIMD_K_UNROLL
#endif
#define GEMM_PRAGMA_(text) _Pragma(#text)
#define GEMM_UNROLL_(n) GEMM_PRAGMA_(GCC unroll n)
#define GEMM_UNROLL_K GEMM_UNROLL_(GEMM_K_UNROLL)

static inline int gemm_min(int a, int b)
{
    return a < b ? a : b;
}

/* A, times alpha, into MR-row panels: a[p][i] at p·MR + i (frame/gemm.h). A
 * transpose of MR rows: four rows at a time by 4×4 transposes, the rest
 * (rows past a multiple of 4, the last p < 4, rows past mb as zeros) one
 * value at a time. */
static void SIMD_NAME(gemm_pack_a)(const blk_gemm *g, size_t i0, int mb, int p0, int kb,
                                   float *dst)
{
    for (int r = 0; r < mb; r += GEMM_MR) {
        float *panel = dst + (size_t)r * kb;
        int rows = gemm_min(GEMM_MR, mb - r);
        const float *src[GEMM_MR];
        for (int i = 0; i < rows; i++)
            src[i] = g->a + (i0 + (size_t)(r + i)) * g->lda + p0;
        int i = 0;
        for (; i + 4 <= rows; i += 4) {
            int p = 0;
            for (; p + 4 <= kb; p += 4)
                simd_transpose4(src + i, p, g->alpha, panel + (size_t)p * GEMM_MR + i, GEMM_MR);
            for (; p < kb; p++)
                for (int q = 0; q < 4; q++)
                    panel[(size_t)p * GEMM_MR + i + q] = g->alpha * src[i + q][p];
        }
        for (; i < GEMM_MR; i++)
            for (int p = 0; p < kb; p++)
                panel[(size_t)p * GEMM_MR + i] = i < rows ? g->alpha * src[i][p] : 0.0f;
    }
}

/* Rows of B's [n][k] layout transposed at a time (simd.h). */
#define GEMM_TRANSPOSE_ROWS SIMD_TRANSPOSE_ROWS

/* op(B) into NR-column panels: b[p][j] at p·NR + j (frame/gemm.h). The [n][k]
 * layout (weights, K) is a transpose, done 8×8 (AVX) or 4×4 at a time for
 * full panels. */
static void SIMD_NAME(gemm_pack_b)(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst)
{
    for (int c = 0; c < nb; c += GEMM_NR) {
        float *panel = dst + (size_t)c * kb;
        int cols = gemm_min(GEMM_NR, nb - c);
        if (!g->b_is_nk) {
            for (int p = 0; p < kb; p++) {
                const float *src = g->b + (size_t)(p0 + p) * g->ldb + j0 + c;
                for (int v = 0; v < GEMM_NV; v++) {
                    int n = cols - v * SIMD_LANES;
                    vf x = n >= SIMD_LANES ? vf_load(src + v * SIMD_LANES)
                         : n > 0 ? vf_load_n(src + v * SIMD_LANES, n) : vf_zero();
                    vf_store(panel + (size_t)p * GEMM_NR + v * SIMD_LANES, x);
                }
            }
            continue;
        }
        if (cols < GEMM_NR) {
            for (int p = 0; p < kb; p++)
                for (int j = 0; j < GEMM_NR; j++)
                    panel[(size_t)p * GEMM_NR + j] =
                        j < cols ? blk_b_row(g, j0 + c + j)[p0 + p] : 0.0f;
            continue;
        }
        for (int grp = 0; grp < GEMM_NR; grp += GEMM_TRANSPOSE_ROWS) {
            const float *src[GEMM_TRANSPOSE_ROWS], *next[GEMM_TRANSPOSE_ROWS];
            /* The rows of the next group, if this call packs one, are
             * asked for while this group is transposed: weights come from
             * DRAM, in row pieces too short (kb floats) for the hardware
             * prefetcher to get going. */
            const int ahead = c + grp + 2 * GEMM_TRANSPOSE_ROWS <= nb;
            for (int j = 0; j < GEMM_TRANSPOSE_ROWS; j++) {
                src[j] = blk_b_row(g, j0 + c + grp + j) + p0;
                next[j] = ahead ? blk_b_row(g, j0 + c + grp + GEMM_TRANSPOSE_ROWS + j) + p0 : NULL;
            }
            int p = 0;
            for (; p + GEMM_TRANSPOSE_ROWS <= kb; p += GEMM_TRANSPOSE_ROWS) {
                if (ahead && p % 16 == 0)
                    for (int j = 0; j < GEMM_TRANSPOSE_ROWS; j++)
                        __builtin_prefetch(next[j] + p, 0, 3);
#if GEMM_TRANSPOSE_ROWS == 8
                simd_transpose8(src, p, panel + (size_t)p * GEMM_NR + grp, GEMM_NR);
#else
                simd_transpose4(src, p, 1.0f, panel + (size_t)p * GEMM_NR + grp, GEMM_NR);
#endif
            }
            for (; p < kb; p++)
                for (int j = 0; j < GEMM_TRANSPOSE_ROWS; j++)
                    panel[(size_t)p * GEMM_NR + grp + j] = src[j][p];
        }
    }
}

/* acc = Σ_p a[p][·] ⊗ b[p][·] over kb steps. The accumulator array is
 * indexed only by constants after full unrolling, so it lives in registers.
 * Taking A by lane (NEON) it is a function of its own: inlined, the values
 * the stores after it keep live pushed two accumulators out of the 32
 * registers. */
#if SIMD_A_BY_LANE
#define GEMM_ACCUMULATE_INLINE __attribute__((noinline))
#else
#define GEMM_ACCUMULATE_INLINE inline __attribute__((always_inline))
#endif
static GEMM_ACCUMULATE_INLINE void
SIMD_NAME(gemm_accumulate)(int kb, const float *restrict a, const float *restrict b,
                           vf acc[GEMM_MR][GEMM_NV], int rows)
{
#pragma GCC unroll 16
    for (int i = 0; i < GEMM_MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            acc[i][v] = vf_zero();
#if SIMD_A_BY_LANE && GEMM_MR == 8 && GEMM_NV == 3
    /* By lane (NEON): the 8 values of A as two vectors and FMAs by lane.
     * Broadcasting each value (ld1r, or a scalar load for fmla by element)
     * would need 8 more registers than the 32 the 24 accumulators and 3 B
     * vectors leave, and the compiler spilled accumulators. */
    for (int p = 0; p < kb; p++, a += GEMM_MR, b += GEMM_NR) {
        const vf b0 = vf_load(b), b1 = vf_load(b + 4), b2 = vf_load(b + 8);
        const vf a0 = vf_load(a), a1 = vf_load(a + 4);
#define GEMM_ROW(i, av, lane)                                                                      \
    acc[i][0] = vf_fmadd_lane(b0, av, lane, acc[i][0]);                                            \
    acc[i][1] = vf_fmadd_lane(b1, av, lane, acc[i][1]);                                            \
    acc[i][2] = vf_fmadd_lane(b2, av, lane, acc[i][2]);
        GEMM_ROW(0, a0, 0) GEMM_ROW(1, a0, 1) GEMM_ROW(2, a0, 2) GEMM_ROW(3, a0, 3)
        GEMM_ROW(4, a1, 0) GEMM_ROW(5, a1, 1) GEMM_ROW(6, a1, 2) GEMM_ROW(7, a1, 3)
#undef GEMM_ROW
    }
    return;
#endif
    GEMM_UNROLL_K
    for (int p = 0; p < kb; p++, a += GEMM_MR, b += GEMM_NR) {
        vf bv[GEMM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            bv[v] = vf_load(b + v * SIMD_LANES);
#pragma GCC unroll 16
        for (int i = 0; i < GEMM_MR; i++) {
            if (i >= rows)
                break;
            vf ai = vf_set1(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++)
                acc[i][v] = vf_fmadd(ai, bv[v], acc[i][v]);
        }
    }
}

/* gemm_accumulate for a tile of mr rows: a short last tile (mr at most
 * two thirds of MR: 8 of 12 rows on AVX-512, 4 of 6 on AVX2) skips the
 * FMAs of the rows it does not have, whose sums are never stored. With M =
 * 128 = 10·12 + 8 the last tile was a twelfth of the work, a third of it
 * wasted. The row count is a constant in each call, so each loop is
 * unrolled for its own. (Taking A by lane, accumulate always does its MR rows.) */
#define GEMM_MR_SHORT (GEMM_MR / 3 * 2)
static inline __attribute__((always_inline)) void
SIMD_NAME(gemm_accumulate_tile)(int kb, const float *restrict a, const float *restrict b,
                                vf acc[GEMM_MR][GEMM_NV], int mr)
{
#if !SIMD_A_BY_LANE
    if (mr <= GEMM_MR_SHORT) {
        SIMD_NAME(gemm_accumulate)(kb, a, b, acc, GEMM_MR_SHORT);
        return;
    }
#endif
    SIMD_NAME(gemm_accumulate)(kb, a, b, acc, GEMM_MR);
}

#if !SIMD_A_BY_LANE
/* acc = Σ_p a[·][p] ⊗ b[p][·] with A not packed: row i of the tile at
 * a + i·lda. All MR rows must be readable (the caller's buffer holds whole
 * MR-row tiles); the sums of rows past mr are never stored. For attention's
 * P·V, where P is produced row by row and packing it (a transpose of
 * bq × keys floats per key tile, for only 2·Dh FLOPs per element) took 8%
 * of SDPA's time. Rows are addressed as MR/3 bases, each with offsets 0,
 * lda and 2·lda (x86's index scales 4 and 8): one index register instead
 * of MR pointers, which the compiler spilled. */
static inline __attribute__((always_inline)) void
SIMD_NAME(gemm_accumulate_rows)(int kb, const float *a, size_t lda, const float *restrict b,
                                vf acc[GEMM_MR][GEMM_NV])
{
#if GEMM_MR % 3 != 0
#error "gemm_accumulate_rows addresses rows in threes"
#endif
    const float *base[GEMM_MR / 3];
#pragma GCC unroll 16
    for (int i = 0; i < GEMM_MR; i++) {
        if (i % 3 == 0)
            base[i / 3] = a + (size_t)i * lda;
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            acc[i][v] = vf_zero();
    }
    GEMM_UNROLL_K
    for (int p = 0; p < kb; p++, b += GEMM_NR) {
        vf bv[GEMM_NV];
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            bv[v] = vf_load(b + v * SIMD_LANES);
#pragma GCC unroll 16
        for (int i = 0; i < GEMM_MR; i++) {
            vf ai = vf_set1(base[i / 3][(size_t)(i % 3) * lda]);
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++)
                acc[i][v] = vf_fmadd(ai, bv[v], acc[i][v]);
        }
#pragma GCC unroll 8
        for (int g = 0; g < GEMM_MR / 3; g++)
            base[g]++;
    }
}
#endif

/* act (ATTN_ACT_NONE or an attn_activation) on one vector, in registers. */
static inline __attribute__((always_inline)) vf SIMD_NAME(gemm_activate_vec)(int act, vf x)
{
    if (act == ATTN_ACT_GELU_ERF)
        return vf_gelu_erf(x);
    if (act == ATTN_ACT_GELU_TANH)
        return vf_gelu_tanh(x);
    if (act == ATTN_ACT_RELU)
        return vf_max(x, vf_zero());
    return x;
}

/* The epilogue of g on one vector of row i of the tile (n valid lanes, at
 * column j of C): bias, activation, residual — in registers. */
static inline __attribute__((always_inline)) vf
SIMD_NAME(gemm_epilogue_vec)(const blk_gemm *g, vf x, size_t i, int j, int n)
{
    if (g->bias)
        x = vf_add(x, n >= SIMD_LANES ? vf_load(g->bias + j) : vf_load_n(g->bias + j, n));
    x = SIMD_NAME(gemm_activate_vec)(g->act, x);
    if (g->residual) {
        const float *r = g->residual + i * g->ldc + j;
        x = vf_add(x, n >= SIMD_LANES ? vf_load(r) : vf_load_n(r, n));
    }
    return x;
}

/* Stores the accumulators to the mr×nr tile at c (adding C unless first);
 * with g, applies g's epilogue first (the tile is at (i0, j0) of g->c). */
static inline __attribute__((always_inline)) void
SIMD_NAME(gemm_store)(vf acc[GEMM_MR][GEMM_NV], float *c, size_t ldc, int mr, int nr, int first,
                      const blk_gemm *g, size_t i0, int j0)
{
#pragma GCC unroll 16
    for (int i = 0; i < GEMM_MR; i++) {
        if (i >= mr)
            break;
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++) {
            int n = nr - v * SIMD_LANES;
            if (n <= 0)
                break;
            float *dst = c + (size_t)i * ldc + v * SIMD_LANES;
            vf x = acc[i][v];
            if (!first)
                x = vf_add(x, n >= SIMD_LANES ? vf_load(dst) : vf_load_n(dst, n));
            if (g)
                x = SIMD_NAME(gemm_epilogue_vec)(g, x, i0 + (size_t)i, j0 + v * SIMD_LANES, n);
            if (n >= SIMD_LANES)
                vf_store(dst, x);
            else
                vf_store_n(dst, x, n);
        }
    }
}

/* Asks for the C tile's cache lines (for writing) before the k loop, so
 * that they arrive while the FMAs run: C is far too big for L2 (6 MiB for the
 * FFN's 512×3072), and loading the 24 vectors only after the loop left the
 * micro-kernel waiting on L3 at every depth block. */
static inline __attribute__((always_inline)) void
SIMD_NAME(gemm_prefetch_c)(const float *c, size_t ldc, int mr, int nr)
{
#pragma GCC unroll 16
    for (int i = 0; i < GEMM_MR; i++) {
        if (i >= mr)
            break;
        for (int j = 0; j < nr; j += 64 / (int)sizeof(float))
            __builtin_prefetch(c + (size_t)i * ldc + j, 1, 3);
        __builtin_prefetch(c + (size_t)i * ldc + nr - 1, 1, 3);
    }
}

/* Every micro-kernel below: C tile (+)= Σ_p a ⊗ b[p][·] over kb steps, the
 * C tile at c asked for first; A packed (lda 0: a[p][·] at a + p·MR) or
 * unpacked (row i of the tile at a + i·lda, all MR rows readable); with
 * g's epilogue applied before the store when g is set (the tile is at
 * (i0, j0) of g->c). Inlined into each, where lda and g are mostly
 * constants, so each compiles to its own loop. */
static inline __attribute__((always_inline)) void
SIMD_NAME(gemm_tile)(int kb, const float *a, size_t lda, const float *restrict b, float *c,
                     size_t ldc, int mr, int nr, int first, const blk_gemm *g, size_t i0, int j0)
{
    vf acc[GEMM_MR][GEMM_NV];
    SIMD_NAME(gemm_prefetch_c)(c, ldc, mr, nr);
#if !SIMD_A_BY_LANE
    if (lda)
        SIMD_NAME(gemm_accumulate_rows)(kb, a, lda, b, acc);
    else
#endif
        SIMD_NAME(gemm_accumulate_tile)(kb, a, b, acc, mr);
    SIMD_NAME(gemm_store)(acc, c, ldc, mr, nr, first, g, i0, j0);
}

/* A packed; see blk_arch in frame/gemm.h. */
static void SIMD_NAME(gemm_kernel)(int kb, const float *restrict a, const float *restrict b,
                                   float *c, size_t ldc, int mr, int nr, int first)
{
    SIMD_NAME(gemm_tile)(kb, a, 0, b, c, ldc, mr, nr, first, NULL, 0, 0);
}

/* The last depth block of a tile with g's epilogue applied in registers:
 * the tile is written once, finished. */
static void SIMD_NAME(gemm_kernel_epilogue)(int kb, const float *restrict a,
                                            const float *restrict b, const blk_gemm *g,
                                            size_t i0, int j0, int mr, int nr, int first)
{
    SIMD_NAME(gemm_tile)(kb, a, 0, b, g->c + i0 * g->ldc + j0, g->ldc, mr, nr, first, g, i0, j0);
}

#if !SIMD_A_BY_LANE
/* A unpacked, all MR rows readable (attention's P·V: P in place). */
static void SIMD_NAME(gemm_kernel_rows)(int kb, const float *a, size_t lda,
                                        const float *restrict b, float *c, size_t ldc, int mr,
                                        int nr, int first)
{
    SIMD_NAME(gemm_tile)(kb, a, lda, b, c, ldc, mr, nr, first, NULL, 0, 0);
}

/* A whole tile of g from A unpacked (blk_arch.kernel_unpacked). */
static void SIMD_NAME(gemm_kernel_unpacked)(int kb, const float *a, size_t lda,
                                            const float *restrict b, const blk_gemm *g, size_t i0,
                                            int j0, int nr, int first, int epilogue)
{
    SIMD_NAME(gemm_tile)(kb, a, lda, b, g->c + i0 * g->ldc + j0, g->ldc, GEMM_MR, nr, first,
                         epilogue ? g : NULL, i0, j0);
}

/* One tile of Cᵀ = W·Xᵀ (blk_arch.kernel_stream): rows j0.. of W read
 * where they are and broadcast, against the packed Xᵀ panel. Bias and
 * activation act on the accumulators (the bias is one value per register:
 * a row of W is a column of C); the tile is transposed through L1, and the
 * residual added after, where it is read in C's layout. */
static void SIMD_NAME(gemm_kernel_stream)(int k, const float *w, size_t ldw, const float *xt,
                                          const blk_gemm *g, size_t t0, int mt, int j0, int nw)
{
    vf acc[GEMM_MR][GEMM_NV];
    for (int t = 0; t < mt; t++) {
        const float *c = g->c + (t0 + (size_t)t) * g->ldc + j0;
        __builtin_prefetch(c, 1, 3);
        __builtin_prefetch(c + nw - 1, 1, 3);
    }
    SIMD_NAME(gemm_accumulate_rows)(k, w, ldw, xt, acc);
    float tile[GEMM_MR][GEMM_NR] __attribute__((aligned(64)));
#pragma GCC unroll 16
    for (int i = 0; i < GEMM_MR; i++) {
        vf bias = vf_set1(g->bias && i < nw ? g->bias[j0 + i] : 0.0f);
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++) {
            vf_store(&tile[i][v * SIMD_LANES],
                     SIMD_NAME(gemm_activate_vec)(g->act, vf_add(acc[i][v], bias)));
        }
    }
    /* The transpose, 4×4 blocks at a time; then the residual, row by row
     * of C (in L1 now). */
    float *c = g->c + t0 * g->ldc + j0;
    const int nw4 = nw / 4 * 4, mt4 = mt / 4 * 4;
    for (int i = 0; i < nw4; i += 4) {
        const float *const rows[4] = { tile[i], tile[i + 1], tile[i + 2], tile[i + 3] };
        for (int t = 0; t < mt4; t += 4)
            simd_transpose4(rows, t, 1.0f, c + (size_t)t * g->ldc + i, g->ldc);
        for (int t = mt4; t < mt; t++)
            for (int q = 0; q < 4; q++)
                c[(size_t)t * g->ldc + i + q] = tile[i + q][t];
    }
    for (int i = nw4; i < nw; i++)
        for (int t = 0; t < mt; t++)
            c[(size_t)t * g->ldc + i] = tile[i][t];
    if (g->residual) {
        const float *r = g->residual + t0 * g->ldc + j0;
        for (int t = 0; t < mt; t++, c += g->ldc, r += g->ldc)
            for (int i = 0; i < nw; i += SIMD_LANES) {
                int n = gemm_min(SIMD_LANES, nw - i);
                vf_store_n(c + i, vf_add(vf_load_n(c + i, n), vf_load_n(r + i, n)), n);
            }
    }
}
#endif

/* Few rows of A (blk_arch.skinny): every row of B ([n][k], where it is) is
 * read once and dotted with all the rows of A, which stay in L1: at a
 * decoding step (one token, m = B) packing B, the whole weight matrix, for
 * one row tile cost more than the product itself. SKINNY_NJ rows of B at a
 * time, each vector of them used by SKINNY_MI rows of A: SKINNY_MI ×
 * SKINNY_NJ accumulators, reduced across lanes once per element of C. */
#if SIMD_REGISTERS == 16
#define SKINNY_MI 2         /* 8 accumulators + 4 B vectors of 16 registers (AVX2) */
#else
#define SKINNY_MI 6         /* 24 accumulators + 4 B vectors of 32 registers */
#endif
#define SKINNY_NJ 4

/* One step of gemm_skinny: vectors at p of the B rows and A rows (n lanes
 * of them, n < SIMD_LANES only at the tail) into the accumulators. */
static inline __attribute__((always_inline)) void
SIMD_NAME(skinny_step)(const float *const b[SKINNY_NJ], const float *const next[SKINNY_NJ],
                       const float *const a[SKINNY_MI], int p, int n,
                       vf acc[SKINNY_MI][SKINNY_NJ])
{
    vf bv[SKINNY_NJ];
#pragma GCC unroll 4
    for (int q = 0; q < SKINNY_NJ; q++) {
        bv[q] = n == SIMD_LANES ? vf_load(b[q] + p) : vf_load_n(b[q] + p, n);
        __builtin_prefetch(next[q] + p, 0, 2);
    }
#pragma GCC unroll 8
    for (int i = 0; i < SKINNY_MI; i++) {
        vf av = n == SIMD_LANES ? vf_load(a[i] + p) : vf_load_n(a[i] + p, n);
#pragma GCC unroll 4
        for (int q = 0; q < SKINNY_NJ; q++)
            acc[i][q] = vf_fmadd(av, bv[q], acc[i][q]);
    }
}

static void SIMD_NAME(gemm_skinny)(const blk_gemm *g, int n0, int n1)
{
    const int m = (int)g->m, k = g->k, body = k / SIMD_LANES * SIMD_LANES;
    for (int j = n0; j < n1; j += SKINNY_NJ) {
        int nj = gemm_min(SKINNY_NJ, n1 - j);
        /* The rows and, prefetched as they are read, the next group's: B's
         * rows are too short (2-8 KiB) for the hardware's stream prefetch to
         * ramp up on each. */
        const float *b[SKINNY_NJ], *next[SKINNY_NJ];
        for (int q = 0; q < SKINNY_NJ; q++) {   /* past n1: row j again, not stored */
            b[q] = blk_b_row(g, j + (q < nj ? q : 0));
            next[q] = blk_b_row(g, j + SKINNY_NJ + q < n1 ? j + SKINNY_NJ + q : j);
        }
        for (int i0 = 0; i0 < m; i0 += SKINNY_MI) {
            int mi = gemm_min(SKINNY_MI, m - i0);
            const float *a[SKINNY_MI];
            vf acc[SKINNY_MI][SKINNY_NJ];
#pragma GCC unroll 8
            for (int i = 0; i < SKINNY_MI; i++) {
                a[i] = g->a + (size_t)(i0 + (i < mi ? i : 0)) * g->lda;
#pragma GCC unroll 4
                for (int q = 0; q < SKINNY_NJ; q++)
                    acc[i][q] = vf_zero();
            }
            for (int p = 0; p < body; p += SIMD_LANES)
                SIMD_NAME(skinny_step)(b, next, a, p, SIMD_LANES, acc);
            if (body < k)
                SIMD_NAME(skinny_step)(b, next, a, body, k - body, acc);
            for (int i = 0; i < mi; i++)
                for (int q = 0; q < nj; q++)
                    g->c[(size_t)(i0 + i) * g->ldc + j + q] = g->alpha * vf_reduce_add(acc[i][q]);
        }
        blk_epilogue_tile(g, 0, j, m, nj);
    }
}

#include "layernorm_impl.h"

static const blk_arch SIMD_NAME(blk_arch) = {
    .mr = GEMM_MR, .nr = GEMM_NR, .a_bcast = 1,
    .layernorm_row = SIMD_NAME(layernorm_row),
    .pack_a = SIMD_NAME(gemm_pack_a), .pack_b = SIMD_NAME(gemm_pack_b),
    .kernel = SIMD_NAME(gemm_kernel), .kernel_epilogue = SIMD_NAME(gemm_kernel_epilogue),
    .skinny = SIMD_NAME(gemm_skinny), .skinny_rows = SKINNY_MI,
#if !SIMD_A_BY_LANE
    .kernel_unpacked = SIMD_NAME(gemm_kernel_unpacked),
    .kernel_stream = SIMD_NAME(gemm_kernel_stream),
#endif
};
