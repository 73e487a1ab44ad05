/*
 * kernel_impl.h — the table row of a SIMD kernel: included last by each ISA
 * folder's kernel.c, after gemm_impl.h and sdpa_impl.h, with SIMD_REQUIRES
 * (the ATTN_CPU_* bits) and SIMD_DESCRIPTION defined.
 */
void SIMD_NAME(attn_simd_exp)(const float *x, float *y, size_t n)
{
    size_t i = 0;
    for (; i + SIMD_LANES <= n; i += SIMD_LANES)
        vf_store(y + i, vf_exp(vf_load(x + i)));
    if (i < n)
        vf_store_n(y + i, vf_exp(vf_load_n(x + i, (int)(n - i))), (int)(n - i));
}

/* The epilogue's activation (gemm_epilogue_vec) over an array. */
void SIMD_NAME(attn_simd_activate)(int act, float *x, size_t n)
{
    const blk_gemm g = { .act = act };
    size_t i = 0;
    for (; i + SIMD_LANES <= n; i += SIMD_LANES)
        vf_store(x + i, SIMD_NAME(gemm_epilogue_vec)(&g, vf_load(x + i), 0, 0, SIMD_LANES));
    if (i < n) {
        int r = (int)(n - i);
        vf_store_n(x + i, SIMD_NAME(gemm_epilogue_vec)(&g, vf_load_n(x + i, r), 0, 0, r), r);
    }
}

static size_t SIMD_NAME(attn_gemm_scratch)(size_t m, int n, int k, int n_threads, const int *params)
{
    return blk_gemm_scratch(&SIMD_NAME(blk_arch), m, n, k, n_threads, params);
}

static void SIMD_NAME(attn_gemm)(const attn_exec *ex, const attn_gemm_problem *p)
{
    blk_gemm_threaded(&SIMD_NAME(blk_arch), ex, p);
}

static void SIMD_NAME(default_params)(int *values)
{
    attn_simd_default_params(GEMM_MR, GEMM_NR, values);
}

const attn_kernel SIMD_CAT_(attn_kernel, SIMD_ISA) = {
    .name = SIMD_KERNEL_NAME,
    .description = SIMD_DESCRIPTION,
    .requires = SIMD_REQUIRES,
    .parallel = 1,
    .gemm_parts = 1,
    .params = attn_simd_params,
    .n_params = SK_N_PARAMS,
    .default_params = SIMD_NAME(default_params),
    .gemm = SIMD_NAME(attn_gemm),
    .gemm_scratch = SIMD_NAME(attn_gemm_scratch),
    .sdpa = SIMD_NAME(attn_sdpa),
    .sdpa_scratch = SIMD_NAME(attn_sdpa_scratch),
    .layernorm = attn_layernorm__portable,
};
