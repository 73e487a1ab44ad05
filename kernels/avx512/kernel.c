/*
 * kernel.c — the avx512 kernel: the SIMD templates (kernels/simd) compiled
 * for AVX-512 F/BW/DQ/VL (this folder's flags, Makefile): a 12×32 FMA
 * micro-kernel, masked-load tails, streaming attention.
 */
#define SIMD_TARGET_AVX512 1   /* the ISA simd.h maps to (not the compiler's macros) */
#include "../simd/gemm_impl.h"
#include "../simd/sdpa_impl.h"

#define SIMD_KERNEL_NAME "avx512"
#define SIMD_DESCRIPTION "AVX-512: 12x32 FMA micro-kernel GEMM, fused epilogue, streaming (flash) attention, OpenMP"
#define SIMD_REQUIRES ATTN_REQUIRES_AVX512
#include "../simd/kernel_impl.h"
