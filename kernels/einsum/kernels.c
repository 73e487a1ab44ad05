/*
 * kernels.c — the rows of the einsum-* family. Each kernel is the same code
 * (sdpa.c, gemm.c, engine.c) run with different layouts and loop orders, so
 * that their timings show what the order alone costs. Names give the order
 * of the score contraction; letters: b/n batch, h head, q query, k key,
 * d head feature (and m, n, k rows, columns and depth of a projection).
 *
 *   kernel          layout            scores order          PV order             gemm
 *   einsum-nqhd     views, no copy    nhqkd  d inner: dot    nhqkd  d inner: axpy  mnk dot
 *   einsum-bhqd     BHLD copies       bhqkd  d inner: dot    bhqkd  d inner: axpy  nmk dot
 *   einsum-bhqk     Kᵀ, Vᵀ copies     bhqdk  k inner: axpy   bhqdk  k inner: dot   mkn strided
 *   einsum-bhdqk    Kᵀ copy           bhdqk  d outer: rank-1 bhkqd  k outer: rank-1 kmn strided
 */
#include "einsum.h"
#include "../rows.h"

/* A kernel of the family: its row and the row's data, the loop orders (the
 * gemm's, then the SDPA variant's fields) — all that sets it apart. Every
 * row shares the rest: the primitives, which read the orders from the
 * data, no parameters, and the engine's geometry: no register tile; dot
 * products summed in sixteen lanes (engine.h). */
#define EIN_KERNEL(sym, kname, order, desc, ...)                                                   \
    static const ein_kernel sym = { .sdpa = { __VA_ARGS__ }, .gemm_order = order };                \
    const attn_kernel attn_kernel__einsum_##sym = {                                                \
        .name = kname, .description = desc, .requires = 0, .parallel = 1,                         \
        .gemm = attn_gemm__einsum, .sdpa = attn_sdpa__einsum,                                      \
        .sdpa_scratch = attn_sdpa_scratch__einsum, .layernorm = attn_layernorm__portable,          \
        .data = &sym, .geometry = { .lanes = 16 },                                                 \
    }

/* ---- einsum-nqhd: seed 003 as written ------------------------------------------ */

/* "nqhd,nkhd->nhqk" and "nhqk,nkhd->nqhd" straight on the [N][L][H][Dh]
 * views — for MHA the [B][L][H·Dh] projections, for the public SDPA the
 * [B][H][L][Dh] inputs with other strides — with no transpose at all. The
 * scores reduce over d innermost, where Q and K are both contiguous: a dot
 * product per (q, k). PV keeps d innermost too; there d is an output index
 * along which V and O are contiguous and P is constant: an axpy of a V row
 * into an O row. The projections read W in place, k innermost: a dot of an
 * x row (kept in L1 across n) with each W row. */
EIN_KERNEL(nqhd, "einsum-nqhd", "mnk",
           "einsum, seed 003 in place: nqhd,nkhd->nhqk (d inner, dot), "
           "nhqk,nkhd->nqhd (d inner, axpy); gemm mnk",
           .scores = "nqhd,nkhd->nhqk", .scores_order = "nhqkd",
           .pv = "nhqk,nkhd->nqhd", .pv_order = "nhqkd");

/* ---- einsum-bhqd: seed 001's transpose, then batched matmuls ------------------- */

/* Q, K and V are first copied into contiguous [B][H][L][Dh] buffers (the
 * .transpose(1, 2) of seed 001), the batched "bhqd,bhkd->bhqk" and
 * "bhqk,bhkd->bhqd" run on them in the same orders as einsum-nqhd, and the
 * output is copied back. Against einsum-nqhd this isolates the price (or the
 * gain: each head's K block becomes one contiguous run) of the copies. The
 * projections use the other dot order, nmk: one W row stays in L1 while
 * the rows of x stream past it. */
EIN_KERNEL(bhqd, "einsum-bhqd", "nmk",
           "einsum, seed 001: Q/K/V copied to [B][H][L][Dh], bhqd,bhkd->bhqk "
           "(d inner, dot), bhqk,bhkd->bhqd (d inner, axpy); gemm nmk",
           .scores = "bhqd,bhkd->bhqk", .scores_order = "bhqkd",
           .pv = "bhqk,bhkd->bhqd", .pv_order = "bhqkd", .copy_bhld = 1);

/* ---- einsum-bhqk: the key index innermost ---------------------------------------- */

/* k innermost in both contractions, with K and V copied to [B][H][Dh][Lk]
 * so that k is their unit-stride axis. Scores "bhqd,bhdk->bhqk" in order
 * bhqdk: a row accumulator, S[q][:] += Q[q][d]·Kᵀ[d][:] (axpy; the score
 * row stays in L1 while Kᵀ streams). PV "bhqk,bhdk->bhqd" in order bhqdk:
 * k is now the reduction, a dot of a probability row with a Vᵀ row. The
 * projections keep the same idea — the output column n innermost,
 * y[m][:] += x[m][k]·W[:][k] — but W is not copied, so that loop walks
 * down a column of W (stride k): the engine's generic strided loop, the
 * slow case the family is meant to show. */
EIN_KERNEL(bhqk, "einsum-bhqk", "mkn",
           "einsum, k innermost on K/V copied to [B][H][Dh][Lk]: bhqd,bhdk->bhqk "
           "(axpy), bhqk,bhdk->bhqd (dot); gemm mkn (strided W)",
           .scores = "bhqd,bhdk->bhqk", .scores_order = "bhqdk",
           .pv = "bhqk,bhdk->bhqd", .pv_order = "bhqdk", .k_transposed = 1, .v_transposed = 1);

/* ---- einsum-bhdqk: the reduction index outermost ----------------------------------- */

/* Within each (b, h), the reduction index of each contraction is the
 * outermost loop: the textbook "outer product" form of a matrix product, a
 * sum of rank-1 updates. Scores "bhqd,bhdk->bhqk" in order bhdqk: for each
 * d, S[q][:] += Q[q][d]·Kᵀ[d][:] over every q (K copied to [Dh][Lk] so the
 * inner k loop is unit-stride). PV "bhqk,bhkd->bhqd" in order bhkqd: for
 * each key k, O[q][:] += P[q][k]·V[k][:] over every q, on V in place.
 * Chosen over "key index outermost" because it is the order that differs
 * most from the others in memory traffic: each element of the output block
 * is loaded and stored once per step of the reduction (Dh times for the
 * scores, kc times for the output) instead of once, so it measures what it
 * costs when the accumulator does not stay in registers. It is also the
 * one order that cannot be threaded inside a head: the engine shares out
 * the first run of output loops, here b and h, and q comes after the
 * reduction. Its projections, in order kmn, are rank-1 updates of all of y
 * along a strided column of W (threaded over m, every thread stepping
 * through k in the same order). */
EIN_KERNEL(bhdqk, "einsum-bhdqk", "kmn",
           "einsum, reduction outermost (rank-1 updates): bhqd,bhdk->bhqk in order "
           "bhdqk, bhqk,bhkd->bhqd in order bhkqd; gemm kmn (strided W)",
           .scores = "bhqd,bhdk->bhqk", .scores_order = "bhdqk",
           .pv = "bhqk,bhkd->bhqd", .pv_order = "bhkqd", .k_transposed = 1);
