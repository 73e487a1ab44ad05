/*
 * kernel.c — the neon kernel: the SIMD templates (kernels/simd) compiled for
 * AArch64 Advanced SIMD: an 8×12 FMA micro-kernel (24 of the 32 q
 * registers), buffered tails, streaming attention.
 */
#define SIMD_TARGET_NEON 1   /* the ISA simd.h maps to (not the compiler's macros) */
#include "../simd/gemm_impl.h"
#include "../simd/sdpa_impl.h"

#define SIMD_KERNEL_NAME "neon"
#define SIMD_DESCRIPTION "AArch64 NEON: 8x12 FMA micro-kernel GEMM, fused epilogue, streaming (flash) attention, OpenMP"
#define SIMD_REQUIRES ATTN_REQUIRES_NEON
#include "../simd/kernel_impl.h"
