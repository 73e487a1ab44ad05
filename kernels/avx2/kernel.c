/*
 * kernel.c — the avx2 kernel: the SIMD templates (kernels/simd) compiled for
 * AVX2 + FMA (this folder's flags, Makefile): a 6×16 FMA micro-kernel,
 * maskload/maskstore tails, streaming attention.
 */
#define SIMD_TARGET_AVX2 1   /* the ISA simd.h maps to (not the compiler's macros) */
#include "../simd/gemm_impl.h"
#include "../simd/sdpa_impl.h"

#define SIMD_KERNEL_NAME "avx2"
#define SIMD_DESCRIPTION "AVX2+FMA: 6x16 FMA micro-kernel GEMM, fused epilogue, streaming (flash) attention, OpenMP"
#define SIMD_REQUIRES ATTN_REQUIRES_AVX2
#include "../simd/kernel_impl.h"
