/*
 * blocked.h — the cache-blocked portable kernel: shared between its GEMM
 * (gemm.c), its attention (sdpa.c) and its table (kernel.c).
 *
 * The GEMM is organised as in BLIS: C is computed in MR×NR register tiles by
 * a micro-kernel that streams packed panels of A (MR rows × kc) and B (kc ×
 * NR columns); kc is chosen so both panels stay in L1, an mc×kc block of A
 * stays in L2, and a kc×nc panel of B in L3. Built for the baseline ISA, the
 * micro-kernel is plain C the compiler vectorizes (SSE2 on x86-64, NEON on
 * AArch64).
 */
#ifndef ATTN_BLOCKED_H
#define ATTN_BLOCKED_H

#include "../kernel.h"

/* Register tile: 6×8 floats is 12 SSE registers of accumulators, leaving 4 of
 * x86-64's 16 for the B row and the A broadcast. NOTE: the micro-kernel in
 * gemm.c is written for these values. */
#define BLK_MR 6
#define BLK_NR 8
/* Packed A holds each value 4 times (one vector): see pack_a in gemm.c. */
#define BLK_BCAST 4

/* Indices into the kernel's params (kernel.c lists names and ranges). */
enum { BLK_MC, BLK_KC, BLK_NC, BLK_BQ, BLK_N_PARAMS };

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
    float *c;
    size_t ldc;
    const float *bias;       /* [n] or NULL */
    int act;                 /* ATTN_ACT_NONE or an attn_activation */
    const float *residual;   /* or NULL */
} blk_gemm;

/* Floats of packing space one thread needs for blk_gemm_range on a gemm of
 * width n and depth k with these params. */
size_t blk_pack_floats(const int *params, int n, int k);

/* Computes rows [m0, m1) and columns [n0, n1) of g on the calling thread,
 * with packing space pack (blk_pack_floats of it). */
void blk_gemm_range(const blk_gemm *g, size_t m0, size_t m1, int n0, int n1, const int *params,
                    float *pack);

/* The primitives of the kernel table. */
void attn_gemm__blocked(const attn_exec *ex, const attn_gemm_problem *p);
size_t attn_gemm_scratch__blocked(size_t m, int n, int k, int n_threads, const int *params);
void attn_sdpa__blocked(const attn_exec *ex, const attn_sdpa_problem *p);
size_t attn_sdpa_scratch__blocked(const attn_sdpa_problem *p, int n_threads, const int *params);

#endif /* ATTN_BLOCKED_H */
