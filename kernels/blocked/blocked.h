/*
 * blocked.h — the cache-blocked portable kernel: shared between its GEMM
 * (gemm.c), its attention (sdpa.c) and its table (kernel.c). Its GEMM is
 * the frame's blocking loops (frame/gemm.h) with an arch of plain C built
 * for the baseline ISA (SSE2 on x86-64, NEON on AArch64); its attention the
 * frame's tiled attention (frame/sdpa.h) with that GEMM for the products.
 */
#ifndef ATTN_BLOCKED_H
#define ATTN_BLOCKED_H

#include "../frame/gemm.h"

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

/* Indices into the kernel's params (kernel.c lists names and ranges): the
 * blocking loops' (frame/gemm.h), then the attention's. */
enum { BLK_BQ = BLK_LOOP_PARAMS, BLK_DECODE_ROWS, BLK_PREFETCH, BLK_ROW_PREFETCH, BLK_N_PARAMS };
_Static_assert(BLK_N_PARAMS <= ATTN_MAX_PARAMS, "raise ATTN_MAX_PARAMS in kernel.h");

/* The blocked kernel's own arch: plain C for the baseline ISA. */
const blk_arch *blk_arch_portable(void);

/* blocked-bf16's: the same, with every packed operand rounded to bf16. */
const blk_arch *blk_arch_portable_bf16(void);

/* The primitives of the kernel tables (blocked and blocked-bf16). */
void attn_gemm__blocked(const attn_exec *ex, const attn_gemm_problem *p);
size_t attn_gemm_scratch__blocked(const attn_exec *ex, size_t m, int n, int k);
void attn_sdpa__blocked(const attn_exec *ex, const attn_sdpa_problem *p);
size_t attn_sdpa_scratch__blocked(const attn_exec *ex, const attn_sdpa_problem *p);
void attn_gemm__blocked_bf16(const attn_exec *ex, const attn_gemm_problem *p);
size_t attn_gemm_scratch__blocked_bf16(const attn_exec *ex, size_t m, int n, int k);
void attn_sdpa__blocked_bf16(const attn_exec *ex, const attn_sdpa_problem *p);
size_t attn_sdpa_scratch__blocked_bf16(const attn_exec *ex, const attn_sdpa_problem *p);
/* Weights packed once, for each row (kernel.h packed_floats, pack_weights). */
size_t attn_packed_floats__blocked(const attn_exec *ex, int n, int k);
void attn_pack_weights__blocked(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                                attn_packed_b *out);
size_t attn_packed_floats__blocked_bf16(const attn_exec *ex, int n, int k);
void attn_pack_weights__blocked_bf16(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                                     attn_packed_b *out);
/* The blocked kernel's defaults, shared by both rows. */
void blk_default_params(int *values);

#endif /* ATTN_BLOCKED_H */
