/*
 * einsum.h — the einsum-* kernel family: every contraction of SDPA, MHA and
 * the encoder layer written as an einsum and executed by engine.c with an
 * explicit loop order and layout. The variants differ only in the data of
 * this header's two structs; gemm.c and sdpa.c are shared, kernels.c holds
 * the table rows and the reasons for each order.
 */
#ifndef ATTN_EINSUM_H
#define ATTN_EINSUM_H

#include "../kernel.h"
#include "engine.h"

/* How an SDPA variant lays out its operands and orders its loops.
 *
 * Subscript letters have fixed roles: n or b the batch, h the head, q the
 * query row, k the key row, d the head feature. Q, V and O are always
 * "..qd"/"..kd" operands with their roles in whatever order the subscripts
 * give; K is either "..kd" or, when k_transposed, "..dk" (likewise V). */
typedef struct ein_sdpa_variant {
    /* Copy Q, K, V into contiguous [B][H][L][Dh] scratch first and O back at
     * the end (seed 001's transpose(1, 2)); otherwise work on the views. */
    int copy_bhld;
    /* Copy K (V) into [B][H][Dh][Lk] scratch, so that k is the unit-stride
     * axis of K (V). */
    int k_transposed, v_transposed;
    const char *scores, *scores_order;   /* e.g. "nqhd,nkhd->nhqk", "nhqkd" */
    const char *pv, *pv_order;           /* e.g. "nhqk,nkhd->nqhd", "nhqkd" */
} ein_sdpa_variant;

/* A kernel of the family: the data of its row (attn_kernel.data), which
 * its primitives, shared by every row, find in attn_exec.data. */
typedef struct ein_kernel {
    ein_sdpa_variant sdpa;
    const char *gemm_order;              /* "mk,nk->mn" in this order: a permutation of "mnk" */
} ein_kernel;

/* Scratch bytes of attn_sdpa__einsum; SIZE_MAX on overflow. */
size_t attn_sdpa_scratch__einsum(const attn_exec *ex, const attn_sdpa_problem *p);
/* SDPA of p with the row's variant; ex->scratch holds the bytes sized above. */
void attn_sdpa__einsum(const attn_exec *ex, const attn_sdpa_problem *p);

/* y = act(x·Wᵀ + bias) + residual as the einsum "mk,nk->mn" run in the
 * row's gemm order, then the epilogue; needs no scratch. */
void attn_gemm__einsum(const attn_exec *ex, const attn_gemm_problem *p);

#endif /* ATTN_EINSUM_H */
