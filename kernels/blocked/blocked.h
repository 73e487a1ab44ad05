/*
 * blocked.h — the cache-blocked portable kernel: shared between its GEMM
 * (gemm.c), its attention (sdpa.c) and its table (kernel.c).
 *
 * The GEMM is organised as in BLIS: C is computed in MR×NR register tiles by
 * a micro-kernel that streams packed panels of A (MR rows × kc) and B (kc ×
 * NR columns); kc is chosen so both panels stay in L1, an mc×kc block of A
 * stays in L2, and a kc×nc panel of B in L3. The blocking loops (gemm.c) are
 * shared: the SIMD kernels (kernels/simd) plug their own micro-kernel,
 * packing and epilogue in through a blk_arch, as BLIS plugs a micro-kernel
 * into its one set of loops. The blocked kernel's own blk_arch is plain C
 * built for the baseline ISA (SSE2 on x86-64, NEON on AArch64).
 */
#ifndef ATTN_BLOCKED_H
#define ATTN_BLOCKED_H

#include "../kernel.h"
#include "../rows.h"

/* Register tile: 6×8 floats is 12 SSE registers of accumulators, leaving 4 of
 * x86-64's 16 for the B row and the A broadcast. NOTE: the micro-kernel in
 * gemm.c is written for these values. */
#define BLK_MR 6
#define BLK_NR 8
/* Packed A holds each value 4 times (one vector): see pack_a in gemm.c. */
#define BLK_BCAST 4
/* The gemm reads B in place (blk_arch.skinny) up to this many rows of A:
 * two of gemm.c's pairs of rows. */
#define BLK_SKINNY_ROWS 4

/* Indices into the kernel's params (kernel.c lists names and ranges). */
enum { BLK_MC, BLK_KC, BLK_NC, BLK_SPLIT, BLK_BQ, BLK_DECODE_ROWS, BLK_PREFETCH, BLK_N_PARAMS };

/* The decode path's parameters (kernels/simd/decode_impl.h), the same in
 * the blocked kernel's table and the SIMD kernels' (simd/params.c). */
#define ATTN_DECODE_ROWS_PARAM                                                                 \
    { "decode_rows", "attention: decode path (K and V streamed in place, split across "       \
      "threads) when Lq x heads per key/value head <= this; 0 never", 0, 64, .threshold = 1 }
#define ATTN_PREFETCH_PARAM                                                                    \
    { "prefetch", "attention, decode path: prefetch K and V rows this many keys ahead; 0 off " \
      "(the hardware prefetcher alone)", 0, 256 }
/* Their defaults, measured (docs/decoding.md, avx512 on a Zen 4, H 32,
 * Dh 128, Lk 4096, decode_rows 64 against 0 in alternating runs): the
 * decode path up to 16 query rows per key/value head. With 4 heads per
 * key/value head it took 0.2–0.6× the streaming path's time up to 16 rows,
 * tied at 32, lost at 64 (1.3×); with one (Hkv = H) it took 0.3–0.4× at 1
 * and 4 rows and lost by 10% at 16 — the streaming path packs K and V once
 * per query head, which costs most when several heads share them. 16 loses
 * at most that 10% on either side; the tuner tries both paths per bucket.
 * Rows 16 keys ahead (8 KiB of K or V at Dh 128) into L2 (prefetcht1): 0 /
 * 8 / 12 / 16 / 24 keys ahead gave 15.7 / 18.5 / 21.5 / 21.4 / 20.7 GB/s
 * of K and V at Lk 16384, 1 thread; into L1 (prefetcht0) no gain at any
 * distance — the hardware prefetcher alone keeps too few lines in flight
 * for two streams. A single query row held in registers (decode_impl.h's
 * register path) prefetches only where the row `prefetch` keys on enters a
 * new page: its loop outruns a per-line prefetch. */
enum { ATTN_DECODE_ROWS_DEFAULT = 16, ATTN_PREFETCH_DEFAULT = 16 };
/* The decode path's key blocks (of its online softmax) and the keys of
 * one split (a task of split-KV): decode_impl.h says why. */
#define SDPA_DECODE_KEYS 64
#define SDPA_DECODE_SPLIT 512
/* Its register blocking (decode_impl.h says why): query rows taken
 * together, and the vectors of a single row's head kept in registers. */
#define SDPA_DECODE_ROW_GROUP 4
#define SDPA_DECODE_ROW_VECS 8
/* The decode path's fields of a kernel's attn_geometry, for vectors of
 * `lanes` floats (the portable target's 4, or the ISA's). */
#define SDPA_DECODE_GEOMETRY(lanes)                                                                \
    .decode_split = SDPA_DECODE_SPLIT, .decode_row_group = SDPA_DECODE_ROW_GROUP,                  \
    .decode_row_width = SDPA_DECODE_ROW_VECS * (lanes)
_Static_assert(BLK_N_PARAMS <= ATTN_MAX_PARAMS, "raise ATTN_MAX_PARAMS in kernel.h");

/* BLK_SPLIT: how the threads share a GEMM's C. */
enum { BLK_SPLIT_AUTO, BLK_SPLIT_COLUMNS, BLK_SPLIT_ROWS };

/* C = alpha·A·op(B) (+ epilogue), A [m][k] with row stride lda; B either
 * [n][k] (b_is_nk: the nn.Linear layout, or K in QKᵀ) or [k][n], row stride
 * ldb; C [m][n] with row stride ldc. The epilogue, applied once the whole
 * k-sum is in: C = act(C + bias[j]) + residual[i][j] (residual row stride ldc). */
typedef struct blk_gemm {
    size_t m;
    int n, k;
    const float *a;
    size_t lda;
    float alpha;
    const float *b;
    size_t ldb;
    int b_is_nk;
    const float *const *b_parts;   /* b_is_nk only: rows stacked from parts (kernel.h w_parts) */
    int part_n;
    float *c;
    size_t ldc;
    const float *bias;       /* [n] or NULL */
    int act;                 /* ATTN_ACT_NONE or an attn_activation */
    const float *residual;   /* or NULL */
} blk_gemm;

/* The gemm primitive's problem as the blocking loops see it: C = X·Wᵀ with
 * its epilogue, W in the [n][k] (nn.Linear) layout, whole or in parts. */
static inline blk_gemm blk_gemm_of(const attn_gemm_problem *p)
{
    blk_gemm g = {
        .m = p->m, .n = p->n, .k = p->k, .a = p->x, .lda = p->ldx, .alpha = 1.0f,
        .b = p->w, .ldb = (size_t)p->k, .b_is_nk = 1, .b_parts = p->w_parts,
        .part_n = p->part_n, .c = p->y, .ldc = p->ldy,
        .bias = p->bias, .act = p->act, .residual = p->residual,
    };
    return g;
}

/* Row j of B in the [n][k] layout (b_is_nk), whole or stacked from parts. */
static inline const float *blk_b_row(const blk_gemm *g, int j)
{
    if (g->b_parts)
        return g->b_parts[j / g->part_n] + (size_t)(j % g->part_n) * g->ldb;
    return g->b + (size_t)j * g->ldb;
}

/* What an ISA supplies to the shared blocking loops.
 *   pack_a: rows [i0, i0+mb) × depth [p0, p0+kb) of A, times alpha, into
 *     MR-row panels; panel r (rows r..r+MR) starts at r·kb·a_bcast and holds
 *     a[p][i] (a_bcast copies) at (p·MR + i)·a_bcast; rows past mb are 0.
 *   pack_b: columns [j0, j0+nb) × depth [p0, p0+kb) of op(B) into NR-column
 *     panels; panel c starts at c·kb and holds b[p][j] at p·NR + j; columns
 *     past nb are 0.
 *   kernel: C[0..mr)[0..nr) (row stride ldc) = (first ? 0 : C) + Σ_p
 *     a[p][·] ⊗ b[p][·] over kb steps, touching nothing outside the tile.
 *   and one of
 *   kernel_epilogue: the kernel for the last depth block when g has an
 *     epilogue (bias, activation, residual): applied to the accumulators
 *     before the tile's store, at (i0, j0) of g->c, so the finished tile is
 *     written once;
 *   epilogue: that epilogue on an mr×nr tile of C at (i0, j0) after the
 *     kernel has stored it (the tile is still in L1). */
typedef struct blk_arch {
    int mr, nr, a_bcast;
    void (*pack_a)(const blk_gemm *g, size_t i0, int mb, int p0, int kb, float *dst);
    void (*pack_b)(const blk_gemm *g, int j0, int nb, int p0, int kb, float *dst);
    void (*kernel)(int kb, const float *a, const float *b, float *c, size_t ldc, int mr, int nr,
                   int first);
    void (*epilogue)(const blk_gemm *g, size_t i0, int j0, int mr, int nr);
    void (*kernel_epilogue)(int kb, const float *a, const float *b, const blk_gemm *g, size_t i0,
                            int j0, int mr, int nr, int first);
    /* Optional: a whole MR-row tile of g->c at (i0, j0) from A read where
     * it is (row i at a + i·lda), not packed; with g's epilogue when
     * epilogue is set. Used when alpha is 1: A then needs no packing pass
     * (only a last tile of fewer than MR rows is packed). */
    void (*kernel_unpacked)(int kb, const float *a, size_t lda, const float *b, const blk_gemm *g,
                            size_t i0, int j0, int nr, int first, int epilogue);
    /* Optional: columns [n0, n1) of every row of g (B in the [n][k] layout)
     * with g's epilogue, B read where it is, once when m <= skinny_rows:
     * for gemms of so few rows (a decoding step) that packing B costs more
     * than the product. blk_gemm_threaded uses it up to skinny_rows rows. */
    void (*skinny)(const blk_gemm *g, int n0, int n1);
    int skinny_rows;
    /* Optional: one MR×NR tile of Cᵀ = B·Aᵀ for blk_gemm_streamed (B in
     * the [n][k] layout read where it is, the broadcast operand; A packed
     * by pack_b as if it were B): rows j0..j0+nw of B (row i at b + i·ldb,
     * all MR rows readable) against xt, the k × NR panel of rows t0..t0+mt
     * of A, over the whole depth; g's epilogue applied and the tile stored
     * transposed at rows t0.., columns j0.. of g->c. */
    void (*kernel_stream)(int k, const float *b, size_t ldb, const float *xt, const blk_gemm *g,
                          size_t t0, int mt, int j0, int nw);
} blk_arch;

/* The epilogue of g on the mr×nr tile of C at (i0, j0): bias, activation,
 * residual. Inline so that each arch compiles it for its own ISA (the
 * activation's vmath loops then vectorize to that width). */
static inline void blk_epilogue_tile(const blk_gemm *g, size_t i0, int j0, int mr, int nr)
{
    for (int i = 0; i < mr; i++) {
        float *c = g->c + (i0 + (size_t)i) * g->ldc + j0;
        if (g->bias)
            for (int j = 0; j < nr; j++)
                c[j] += g->bias[j0 + j];
        attn_rows_activate(g->act, c, nr);
        if (g->residual) {
            const float *r = g->residual + (i0 + (size_t)i) * g->ldc + j0;
            for (int j = 0; j < nr; j++)
                c[j] += r[j];
        }
    }
}

/* Floats of packing space one thread needs for blk_gemm_range on m rows of
 * a gemm of width n and depth k with these params. */
size_t blk_pack_floats(const blk_arch *arch, const int *params, size_t m, int n, int k);

/* Computes rows [m0, m1) and columns [n0, n1) of g on the calling thread,
 * with packing space pack (blk_pack_floats of it). */
void blk_gemm_range(const blk_arch *arch, const blk_gemm *g, size_t m0, size_t m1, int n0, int n1,
                    const int *params, float *pack);

/* The gemm primitive and its scratch for any arch: the context's threads
 * split C (column panels when there are plenty, else row tiles). */
void blk_gemm_threaded(const blk_arch *arch, const attn_exec *ex, const attn_gemm_problem *p);
size_t blk_gemm_scratch(const blk_arch *arch, size_t m, int n, int k, int n_threads,
                        const int *params);

/* The gemm primitive with B streamed (arch->kernel_stream): the weights
 * are read once, where they are, never packed; A is packed once, shared by
 * the threads, which split the weights' rows. For few rows of A (up to a
 * few hundred), where packing the weights, 4·n·k bytes from DRAM on every
 * call, costs a large part of the product. */
void blk_gemm_streamed(const blk_arch *arch, const attn_exec *ex, const attn_gemm_problem *p);
size_t blk_gemm_streamed_scratch(const blk_arch *arch, size_t m, int k, int n_threads);

/* The blocked kernel's own arch: plain C for the baseline ISA. */
const blk_arch *blk_arch_portable(void);

/* The primitives of the kernel table. */
void attn_gemm__blocked(const attn_exec *ex, const attn_gemm_problem *p);
size_t attn_gemm_scratch__blocked(const attn_exec *ex, size_t m, int n, int k);
void attn_sdpa__blocked(const attn_exec *ex, const attn_sdpa_problem *p);

/* The tiled attention (sdpa.c) with the products of a kernel's choice:
 * product computes C = alpha·A·op(B) of g (no epilogue) on the calling
 * thread, with pack_floats of packing space. bq query rows per task; the
 * decode path (the SIMD kernels', for the portable target) when the rows
 * per key/value head are at most decode_rows. */
typedef struct blk_sdpa_plan {
    int bq, decode_rows, prefetch;
    void (*product)(const blk_gemm *g, const int *params, float *pack);
    size_t pack_floats;
} blk_sdpa_plan;
void blk_sdpa(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp);
size_t blk_sdpa_scratch(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp);
size_t attn_sdpa_scratch__blocked(const attn_exec *ex, const attn_sdpa_problem *p);

#endif /* ATTN_BLOCKED_H */
