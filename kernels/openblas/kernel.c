/*
 * kernel.c — the openblas kernel: the library users would otherwise pick
 * for the products, inside the suite. Every matrix product is OpenBLAS's
 * cblas_sgemm; the rest is attnbench's — the gemm's epilogue (bias,
 * activation, residual), the tiled attention's masks and softmax
 * (frame/sdpa.c), the decode path (frame/decode_impl.h, portable) and
 * LayerNorm — so that its timings show what OpenBLAS's GEMM is worth here.
 *
 * Threads: OpenBLAS is set to one thread, once, and attnbench's OpenMP
 * threads split the work (row blocks of a gemm, the attention's tasks), as
 * for every other kernel. Letting OpenBLAS thread itself would mean a
 * process-wide thread count that contexts of different counts, used at
 * once, would fight over; and a gemm from inside the attention's threads
 * must not start threads of its own.
 */
#include <cblas.h>
#include <omp.h>
#include <pthread.h>

#include "../frame/decode.h"
#include "../frame/sdpa.h"
#include "../rows.h"

enum { OB_BQ, OB_DECODE_ROWS, OB_PREFETCH, OB_ROW_PREFETCH, OB_N_PARAMS };

static const attn_param params[OB_N_PARAMS] = {
    [OB_BQ] = BLK_SDPA_BQ_PARAM,
    [OB_DECODE_ROWS] = ATTN_DECODE_ROWS_PARAM,
    [OB_PREFETCH] = ATTN_PREFETCH_PARAM,
    [OB_ROW_PREFETCH] = ATTN_ROW_PREFETCH_PARAM,
};

static void default_params(int *v)
{
    /* As blocked's bq: a block of 512-key score rows in a quarter of L2. */
    long l2 = (long)attn_cpu_cache_size(2), bq = l2 / 4 / (long)(sizeof(float) * 512);
    v[OB_BQ] = (int)(bq < 8 ? 8 : bq > 512 ? 512 : bq);
    v[OB_DECODE_ROWS] = ATTN_DECODE_ROWS_DEFAULT;
    v[OB_PREFETCH] = ATTN_PREFETCH_DEFAULT;
    v[OB_ROW_PREFETCH] = attn_row_prefetch_default();
}

static pthread_once_t one_thread_once = PTHREAD_ONCE_INIT;

static void one_thread(void)
{
    openblas_set_num_threads(1);
}

/* C = alpha·A·op(B) of g on the calling thread: B [n][k] (b_is_nk) is
 * op = transpose, [k][n] none. */
static void product(const blk_gemm *g, const int *unused, float *pack)
{
    (void)unused;
    (void)pack;
    pthread_once(&one_thread_once, one_thread);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, g->b_is_nk ? CblasTrans : CblasNoTrans, (int)g->m,
                g->n, g->k, g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, 0.0f, g->c,
                (int)g->ldc);
}

/* Rows split among the threads, each block one cblas_sgemm and then the
 * epilogue on its rows (still in cache). */
static void gemm(const attn_exec *ex, const attn_gemm_problem *p)
{
    const blk_gemm g = blk_gemm_of(p);   /* no parts: the row says no gemm_parts */
    const long blocks = (long)((p->m + 63) / 64);
#pragma omp parallel for num_threads(ex->n_threads) schedule(static)
    for (long bi = 0; bi < blocks; bi++) {
        size_t i0 = (size_t)bi * 64, rows = p->m - i0 < 64 ? p->m - i0 : 64;
        blk_gemm part = g;
        part.m = rows;
        part.a = g.a + i0 * g.lda;
        part.c = g.c + i0 * g.ldc;
        part.residual = g.residual ? g.residual + i0 * g.ldc : NULL;
        product(&part, NULL, NULL);
        blk_epilogue_rows(&part);
    }
}

static blk_sdpa_plan plan_of(const int *v)
{
    blk_sdpa_plan sp = { .bq = v[OB_BQ], .decode_rows = v[OB_DECODE_ROWS],
                         .prefetch = v[OB_PREFETCH], .row_prefetch = v[OB_ROW_PREFETCH],
                         .product = product, .pack_floats = 0 };
    return sp;
}

static size_t sdpa_scratch(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = plan_of(ex->params);
    return blk_sdpa_scratch(ex, p, &sp);
}

static void sdpa(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = plan_of(ex->params);
    blk_sdpa(ex, p, &sp);
}

const attn_kernel attn_kernel__openblas = {
    .name = "openblas",
    .description = "OpenBLAS's cblas_sgemm for every product; attnbench's masks, softmax, "
                   "epilogues, decode path and LayerNorm; OpenMP over row blocks and tasks",
    .requires = 0,
    .own_isa_dispatch = 1,   /* OpenBLAS picks its kernels by CPU at run time */
    .parallel = 1,
    .params = params,
    .n_params = OB_N_PARAMS,
    .default_params = default_params,
    .gemm = gemm,
    .sdpa = sdpa,
    .sdpa_scratch = sdpa_scratch,
    .kv_types = ATTN_KV_NARROW,   /* frame/sdpa.c: decode path in place, tiles widened */
    .layernorm = attn_layernorm__portable,
    /* No register tile of its own. */
    .geometry = { BLK_SDPA_GEOMETRY },
};
