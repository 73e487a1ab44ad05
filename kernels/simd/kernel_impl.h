/*
 * kernel_impl.h — the table row of a SIMD kernel: included last by each ISA
 * folder's kernel.c, after gemm_impl.h and sdpa_impl.h, with SIMD_REQUIRES
 * (the ISA's ATTN_REQUIRES_* of kernel.h) and SIMD_DESCRIPTION defined. Its
 * geometry is the templates' own: the register tile, the skinny path's
 * rows, the vector, the decode path's split.
 */
/* The softmax's and erf's exp (vf_exp_nonpos) and the general one (vf_exp)
 * over arrays, for their tests. */
#define SIMD_EXP_OVER_ARRAY(name, vexp)                                                            \
    void SIMD_NAME(name)(const float *x, float *y, size_t n)                                       \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + SIMD_LANES <= n; i += SIMD_LANES)                                               \
            vf_store(y + i, vexp(vf_load(x + i)));                                                 \
        if (i < n)                                                                                 \
            vf_store_n(y + i, vexp(vf_load_n(x + i, (int)(n - i))), (int)(n - i));                \
    }
SIMD_EXP_OVER_ARRAY(attn_simd_exp, vf_exp)
SIMD_EXP_OVER_ARRAY(attn_simd_exp_nonpos, vf_exp_nonpos)
#undef SIMD_EXP_OVER_ARRAY

/* four[0..4) = vf_reduce_add4 of the four vectors at v (4·SIMD_LANES
 * floats), each[0..4) = vf_reduce_add of each, for the test that they are
 * the same sums bit for bit (the decode path relies on it); returns
 * SIMD_LANES. */
int SIMD_NAME(attn_simd_reduce_add4)(const float *v, float *four, float *each)
{
    vf_reduce_add4(vf_load(v), vf_load(v + SIMD_LANES), vf_load(v + 2 * SIMD_LANES),
                   vf_load(v + 3 * SIMD_LANES), four);
    for (int i = 0; i < 4; i++)
        each[i] = vf_reduce_add(vf_load(v + i * SIMD_LANES));
    return SIMD_LANES;
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

static void SIMD_NAME(attn_layernorm)(const attn_exec *ex, size_t m, int d, const float *x,
                                      const float *gamma, const float *beta, float eps, float *y)
{
    attn_layernorm_rows(ex, m, d, x, gamma, beta, eps, y, SIMD_NAME(layernorm_row));
}

/* The gemm streams the weights (blk_gemm_streamed) from past the skinny
 * path's rows up to stream_rows rows, where packing them would cost a
 * large part of the product; else the blocked loops. */
static int SIMD_NAME(gemm_streams)(const attn_exec *ex, size_t m)
{
    return SIMD_NAME(blk_arch).kernel_stream && m > (size_t)SIMD_NAME(blk_arch).skinny_rows
        && m <= (size_t)ex->params[SK_STREAM_ROWS];
}

static size_t SIMD_NAME(attn_gemm_scratch)(const attn_exec *ex, size_t m, int n, int k)
{
    if (SIMD_NAME(gemm_streams)(ex, m))
        return blk_gemm_streamed_scratch(&SIMD_NAME(blk_arch), m, k,
                                         attn_exec_scratch_threads(ex));
    return blk_gemm_scratch(&SIMD_NAME(blk_arch), m, n, k, attn_exec_scratch_threads(ex),
                            ex->params);
}

static void SIMD_NAME(attn_gemm)(const attn_exec *ex, const attn_gemm_problem *p)
{
    if (SIMD_NAME(gemm_streams)(ex, p->m))
        blk_gemm_streamed(&SIMD_NAME(blk_arch), ex, p);
    else
        blk_gemm_threaded(&SIMD_NAME(blk_arch), ex, p);
}

static size_t SIMD_NAME(packed_floats)(const attn_exec *ex, int n, int k)
{
    return blk_packed_floats(&SIMD_NAME(blk_arch), ex->params, n, k);
}

static void SIMD_NAME(pack_weights)(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                                    attn_packed_b *out)
{
    blk_pack_weights(&SIMD_NAME(blk_arch), ex->params, p, dst, out);
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
    .explains = 1,
    .gemm_parts = 1,
    .gemm_layernorm = 1,
    .params = attn_simd_params,
    .n_params = SK_N_PARAMS,
    .default_params = SIMD_NAME(default_params),
    .gemm = SIMD_NAME(attn_gemm),
    .gemm_scratch = SIMD_NAME(attn_gemm_scratch),
    .sdpa = SIMD_NAME(attn_sdpa),
    .sdpa_scratch = SIMD_NAME(attn_sdpa_scratch),
    /* the decode path widens in registers; the streaming path a head as
     * it packs it (sdpa_impl.h) */
    .kv_types = ATTN_KV_NARROW,
    .layernorm = SIMD_NAME(attn_layernorm),
    .packed_floats = SIMD_NAME(packed_floats),
    .pack_weights = SIMD_NAME(pack_weights),
    .geometry = { .mr = GEMM_MR, .nr = GEMM_NR, .skinny_rows = SKINNY_MI,
                  .attn_rows = GEMM_MR, .attn_keys = GEMM_NR, .lanes = SIMD_LANES,
                  SDPA_DECODE_GEOMETRY(SIMD_LANES) },
};
