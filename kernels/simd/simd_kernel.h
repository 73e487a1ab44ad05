/*
 * simd_kernel.h — what the SIMD kernels (kernels/avx2, kernels/avx512) share
 * that needs no vector ISA: their parameter list and its defaults
 * (kernels/simd/params.c, built for the baseline ISA).
 */
#ifndef ATTN_SIMD_KERNEL_H
#define ATTN_SIMD_KERNEL_H

#include "../frame/decode.h"
#include "../frame/gemm.h"

/* Parameters, in order. The first four are the blocking loops' (mc, kc,
 * nc and split: frame/gemm.h). */
enum {
    SK_MC = BLK_MC, SK_KC = BLK_KC, SK_NC = BLK_NC, SK_SPLIT = BLK_SPLIT,
    SK_BQ = BLK_LOOP_PARAMS,   /* attention: query rows per tile */
    SK_BK,              /* attention: keys per tile when streaming */
    SK_STREAM_FROM,     /* attention: stream (flash) when Lk >= this, else one key tile */
    SK_DECODE_ROWS,     /* attention: the decode path when a group's query rows are <= this */
    SK_PREFETCH,        /* attention, decode path: software prefetch distance in keys */
    SK_STREAM_ROWS,     /* GEMM: the weights streamed (blk_gemm_streamed) up to this many rows */
    SK_ROW_PREFETCH,    /* attention, decode path: one row in registers prefetches every line */
    SK_N_PARAMS
};

/* The context, the tuner and wisdom keep params in arrays of this size. */
_Static_assert(SK_N_PARAMS <= ATTN_MAX_PARAMS, "raise ATTN_MAX_PARAMS in kernel.h");

extern const attn_param attn_simd_params[SK_N_PARAMS];

/* Defaults for a micro-kernel of mr × nr floats, from the cache sizes. */
void attn_simd_default_params(int mr, int nr, int *values);

/* The SIMD kernels' vector math over arrays, for tests/test_vmath.c: the
 * exp (vf_exp), the softmax's exp of x <= 0 (vf_exp_nonpos), the GEMM
 * epilogue's activations (vf_gelu_erf, vf_gelu_tanh, ReLU) and the
 * horizontal sums (vf_reduce_add4 against vf_reduce_add), each as compiled
 * in its ISA folder. Call only when the CPU can run that ISA. */
#if defined(__x86_64__)
void attn_simd_exp__avx2(const float *x, float *y, size_t n);
void attn_simd_exp_nonpos__avx2(const float *x, float *y, size_t n);
void attn_simd_activate__avx2(int act, float *x, size_t n);
int attn_simd_reduce_add4__avx2(const float *v, float *four, float *each);
void attn_simd_exp__avx512(const float *x, float *y, size_t n);
void attn_simd_exp_nonpos__avx512(const float *x, float *y, size_t n);
void attn_simd_activate__avx512(int act, float *x, size_t n);
int attn_simd_reduce_add4__avx512(const float *v, float *four, float *each);
#endif
#if defined(__aarch64__)
void attn_simd_exp__neon(const float *x, float *y, size_t n);
void attn_simd_exp_nonpos__neon(const float *x, float *y, size_t n);
void attn_simd_activate__neon(int act, float *x, size_t n);
int attn_simd_reduce_add4__neon(const float *v, float *four, float *each);
#endif

#endif /* ATTN_SIMD_KERNEL_H */
