/*
 * bf16_row_impl.h — what the rows on bf16 units (kernels/avx512_bf16,
 * kernels/neon_bf16) share beyond their arch: the streaming attention over
 * their bf16-pair arch, the fp32 paths they borrow from their ISA's fp32
 * row, weights packed once, and the table row. Included last by each, after
 * SIMD_NAME(blk_arch) (panels of bf16 pairs, BF_MR × BF_NR tile) and with:
 *   BF_FP32_ROW        the ISA's fp32 row (attn_kernel__avx512, __neon):
 *                      its GEMM of at most BF_SKINNY_ROWS rows (a decoding
 *                      step: the weights read once, in place; converting
 *                      them would cost more than the product) and its
 *                      LayerNorm; its parameters are this row's
 *                      (simd_kernel.h's list), so its primitives take ex;
 *   BF_SKINNY_ROWS, BF_KERNEL_SYMBOL, BF_KERNEL_NAME, BF_DESCRIPTION,
 *   BF_REQUIRES;
 *   BF_PASSED_OVER_ON  ATTN_CPU_* bits of CPUs where the row is slower than
 *                      its ISA's fp32 row (kernel.h auto_passes_over_on);
 *                      0 when not defined.
 *   BF_HIDDEN16        1 when its arch stores and reads the hidden in
 *                      bf16 (frame/gemm.h blk_gemm c16, a16): its tile
 *                      stores c16 and reads a16's panels as packed A's;
 *                      0 when not defined.
 * Its arch's layernorm_row is simd/layernorm_impl.h's (the row's
 * LayerNorm, in a layernorm call or in its gemm's region).
 */

#ifndef BF_HIDDEN16
#define BF_HIDDEN16 0
#endif
#ifndef BF_PASSED_OVER_ON
#define BF_PASSED_OVER_ON 0
#endif

/* ---- Attention: the streaming template over the pair arch ------------------------------- */

#define GEMM_MR BF_MR
#define GEMM_NR BF_NR
#define SDPA_PACKS_P 1
#define GEMM_DEPTH_SLOTS(k) ((k) / 2)   /* key tiles start at multiples of NR (even): whole pairs */
static inline int gemm_min(int a, int b)
{
    return a < b ? a : b;
}
#include "sdpa_impl.h"

/* ---- GEMM: few rows in fp32, the rest on the pair arch ----------------------------------- */

extern const attn_kernel BF_FP32_ROW;

static int bf16_fp32_rows(size_t m)
{
    return m <= BF_SKINNY_ROWS;
}

static size_t bf16_gemm_scratch(const attn_exec *ex, size_t m, int n, int k)
{
    if (bf16_fp32_rows(m))
        return BF_FP32_ROW.gemm_scratch(ex, m, n, k);
    return blk_gemm_scratch(&SIMD_NAME(blk_arch), m, n, k, attn_exec_scratch_threads(ex),
                            ex->params);
}

static void bf16_gemm(const attn_exec *ex, const attn_gemm_problem *p)
{
    if (bf16_fp32_rows(p->m))
        BF_FP32_ROW.gemm(ex, p);
    else
        blk_gemm_threaded(&SIMD_NAME(blk_arch), ex, p);
}

/* The FFN's hidden in bf16 where the pair arch runs the gemm (not the
 * fp32 rows of a decoding step). */
#if BF_HIDDEN16
static size_t bf16_hidden_bytes(const attn_exec *ex, size_t m, int n)
{
    if (bf16_fp32_rows(m))
        return 0;
    return blk_hidden16_bytes(&SIMD_NAME(blk_arch), ex->params, m, n);
}
#endif

static size_t bf16_packed_floats(const attn_exec *ex, int n, int k)
{
    return blk_packed_floats(&SIMD_NAME(blk_arch), ex->params, n, k);
}

/* The weights as bf16 pairs in B panels, once (attn_weights_pack_encoder):
 * a call then neither converts nor transposes them. (A pair takes a
 * float's slot, half of each panel's kb: twice the bytes the pairs need.) */
static void bf16_pack_weights(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                              attn_packed_b *out)
{
    blk_pack_weights(&SIMD_NAME(blk_arch), ex->params, p, dst, out);
}

/* The ISA's LayerNorm row (simd/layernorm_impl.h), compiled here too: the
 * same function whether a layernorm call or the gemm's region runs it. */
static void bf16_layernorm(const attn_exec *ex, size_t m, int d, const float *x,
                           const float *gamma, const float *beta, float eps, float *y)
{
    attn_layernorm_rows(ex, m, d, x, gamma, beta, eps, y, SIMD_NAME(layernorm_row));
}

static void bf16_default_params(int *values)
{
    attn_simd_default_params(BF_MR, BF_NR, values);
}

const attn_kernel BF_KERNEL_SYMBOL = {
    .name = BF_KERNEL_NAME,
    .description = BF_DESCRIPTION,
    .requires = BF_REQUIRES,
    .auto_passes_over_on = BF_PASSED_OVER_ON,
    .math = ATTN_BF16,
    .parallel = 1,
    .explains = 1,
    .gemm_parts = 1,
    .gemm_layernorm = 1,
    .params = attn_simd_params,
    .n_params = SK_N_PARAMS,
    .default_params = bf16_default_params,
    .gemm = bf16_gemm,
    .gemm_scratch = bf16_gemm_scratch,
    .sdpa = SIMD_NAME(attn_sdpa),
    .sdpa_scratch = SIMD_NAME(attn_sdpa_scratch),
    /* the decode path widens in registers; the streaming path a head as
     * it packs it (sdpa_impl.h) */
    .kv_types = ATTN_KV_NARROW,
    .layernorm = bf16_layernorm,
#if BF_HIDDEN16
    .bf16_hidden_bytes = bf16_hidden_bytes,
#endif
    .packed_floats = bf16_packed_floats,
    .pack_weights = bf16_pack_weights,
    .geometry = { .mr = BF_MR, .nr = BF_NR, .skinny_rows = BF_SKINNY_ROWS,
                  .attn_rows = BF_MR, .attn_keys = BF_NR, .lanes = SIMD_LANES,
                  SDPA_DECODE_GEOMETRY(SIMD_LANES) },
};
