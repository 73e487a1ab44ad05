/*
 * simd_kernel.h — what the SIMD kernels (kernels/avx2, kernels/avx512) share
 * that needs no vector ISA: their parameter list and its defaults
 * (kernels/simd/params.c, built for the baseline ISA).
 */
#ifndef ATTN_SIMD_KERNEL_H
#define ATTN_SIMD_KERNEL_H

#include "../blocked/blocked.h"

/* Parameters, in order. The first four are the blocked GEMM's (same
 * indices, read by the shared blocking loops). */
enum {
    SK_MC = BLK_MC, SK_KC = BLK_KC, SK_NC = BLK_NC,
    SK_BQ = BLK_BQ,     /* attention: query rows per tile */
    SK_BK,              /* attention: keys per tile when streaming */
    SK_STREAM_FROM,     /* attention: stream (flash) when Lk >= this, else one key tile */
    SK_N_PARAMS
};

extern const attn_param attn_simd_params[SK_N_PARAMS];

/* Defaults for a micro-kernel of mr × nr floats, from the cache sizes. */
void attn_simd_default_params(int mr, int nr, int *values);

#endif /* ATTN_SIMD_KERNEL_H */
