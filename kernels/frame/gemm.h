/*
 * gemm.h — the GEMM frame: the cache-blocking loops and thread split that
 * every attnbench GEMM runs (gemm.c), and the interface through which a
 * kernel plugs its micro-kernel, packing and epilogue into them.
 *
 * The GEMM is organised as in BLIS: C is computed in MR×NR register tiles by
 * a micro-kernel that streams packed panels of A (MR rows × kc) and B (kc ×
 * NR columns); kc is chosen so both panels stay in L1, an mc×kc block of A
 * stays in L2, and a kc×nc panel of B in L3. The loops are written once; a
 * kernel supplies a blk_arch (the blocked kernel's is plain C for the
 * baseline ISA, the SIMD kernels' one per ISA), as BLIS plugs a micro-kernel
 * into its one set of loops.
 */
#ifndef ATTN_FRAME_GEMM_H
#define ATTN_FRAME_GEMM_H

#include "../kernel.h"
#include "../rows.h"

/* The parameters the loops read, at these indices: the first of the list
 * of every kernel that runs them (its own parameters follow, from
 * BLK_LOOP_PARAMS on). */
enum { BLK_MC, BLK_KC, BLK_NC, BLK_SPLIT, BLK_LOOP_PARAMS };

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
    /* B packed once (kernel.h attn_packed_b) at this call's kc, or NULL:
     * depth block pc's panel of columns j at b_packed + pc·⌈n⌉ + j·kb,
     * ⌈n⌉ rounded up to NR — pack_b's layout, block after block. */
    const float *b_packed;
    float *c;
    size_t ldc;
    const float *bias;       /* [n] or NULL */
    int act;                 /* ATTN_ACT_NONE or an attn_activation */
    const float *residual;   /* or NULL */
    /* The hidden in bf16 (kernel.h x_bf16, y_bf16; blk_hidden16_at), for
     * an arch whose kernel_epilogue stores c16 and whose micro-kernel
     * reads a16's depth blocks in place as packed A panels (alpha 1): the
     * finished C at c16 (c then holding only the partial sums of the
     * depth blocks before the last), A at a16 (a unused); their layout's
     * depth block (the call's kc) and rows (m rounded up to MR). */
    const uint16_t *a16;
    uint16_t *c16;
    int kc16;
    size_t rows16;
    /* LayerNorm of C's finished rows into ln_out (kernel.h), by the arch's
     * layernorm_row, in the gemm's region after a barrier; or of ln_in's
     * rows into ln_a, the A the product then reads (a = ln_a), before it. */
    const float *ln_gamma, *ln_beta;
    float ln_eps;
    float *ln_out;
    const float *ln_in;
    float *ln_a;
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
        .a16 = p->x_bf16, .c16 = p->y_bf16,
        .ln_gamma = p->ln_gamma, .ln_beta = p->ln_beta, .ln_eps = p->ln_eps, .ln_out = p->ln_out,
        .ln_in = p->ln_in, .ln_a = p->ln_in ? p->x_ln : NULL,
    };
    if (p->ln_in)
        g.a = p->x_ln;
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
    /* The row's LayerNorm of one row (rows.h), for g->ln_out and
     * g->ln_in; NULL: the row's gemm takes neither (gemm_layernorm 0). */
    attn_layernorm_row_fn layernorm_row;
} blk_arch;

/* The hidden in bf16: an m × n matrix laid out as the A panels of a gemm
 * of depth n (avx512-bf16's: each row's bf16 values in a run, rows kb
 * apart, one depth block after another) so that it is read in place:
 * element (i, j) at (j/kc)·kc·R + i·kb + j%kc, R = m rounded up to MR
 * (rows past m are read by the last tile and never stored), kb = min(kc,
 * n − (j/kc)·kc). Taken only where n is even and kc a multiple of 16: a
 * pair never straddles a block, nor a 16-column store. The bytes, or 0
 * when not taken. */
size_t blk_hidden16_bytes(const blk_arch *arch, const int *params, size_t m, int n);

/* Where element (i, j) of g's bf16 C goes. */
static inline uint16_t *blk_hidden16_at(const blk_gemm *g, size_t i, int j)
{
    int block = j / g->kc16 * g->kc16, kb = g->n - block < g->kc16 ? g->n - block : g->kc16;
    return g->c16 + (size_t)block * g->rows16 + i * (size_t)kb + (size_t)(j - block);
}

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

/* g's epilogue, when it has one, on all of C, for a product computed
 * without it (a library's sgemm): 64 rows at a time, as a tile's row count
 * is an int and g's may not be. */
static inline void blk_epilogue_rows(const blk_gemm *g)
{
    if (!g->bias && g->act == ATTN_ACT_NONE && !g->residual)
        return;
    for (size_t i = 0; i < g->m; i += 64)
        blk_epilogue_tile(g, i, 0, g->m - i < 64 ? (int)(g->m - i) : 64, g->n);
}

/* Weights packed once for arch's loops with these params: the floats,
 * SIZE_MAX when they overflow; and the packing (its depth blocks of kc,
 * each pack_b of all n columns) into dst, described in *out. */
size_t blk_packed_floats(const blk_arch *arch, const int *params, int n, int k);
void blk_pack_weights(const blk_arch *arch, const int *params, const attn_gemm_problem *p,
                      float *dst, attn_packed_b *out);

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

#endif /* ATTN_FRAME_GEMM_H */
