/*
 * gemm.c — the projections and the FFN of the einsum kernels: the einsum
 * "mk,nk->mn" (y = x·Wᵀ, W in the nn.Linear [n][k] layout, read in place)
 * in the row's loop order (ein_kernel.gemm_order), with the bias folded
 * into the starting value of y and the activation and residual applied
 * afterwards.
 *
 * Only an order with k innermost reads W with unit stride (a dot product);
 * with n innermost W is read down a column (stride k): the engine's generic
 * strided loop. The gemm primitive could ask for scratch to hold a
 * transposed W, but these kernels deliberately do not: the family shows what
 * each loop order costs on the layouts the library is given.
 */
#include "einsum.h"
#include "../rows.h"

void attn_gemm__einsum(const attn_exec *ex, const attn_gemm_problem *p)
{
    const char *order = ((const ein_kernel *)ex->data)->gemm_order;
    const long m = (long)p->m;
    const int n = p->n;
    const int threads = ex->n_threads > 0 ? ex->n_threads : 1;

    /* y starts as the bias (or zero): the einsum accumulates into it. */
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < m; i++) {
        float *y = p->y + (size_t)i * p->ldy;
        for (int j = 0; j < n; j++)
            y[j] = p->bias ? p->bias[j] : 0.0f;
    }

    const ein_view vx = { { (ptrdiff_t)p->m, p->k }, { (ptrdiff_t)p->ldx, 1 } };
    const ein_view vw = { { p->n, p->k }, { p->k, 1 } };
    const ein_view vy = { { (ptrdiff_t)p->m, p->n }, { (ptrdiff_t)p->ldy, 1 } };
    ein_plan plan;
    /* Fixed, valid spec: cannot fail (checked by tests/test_einsum.c). */
    if (ein_plan_init(&plan, "mk,nk->mn", order, &vx, &vw, &vy) != EIN_OK)
        return;
    ein_plan_run(&plan, 1.0f, p->x, p->w, p->y, threads);

    if (p->act == ATTN_ACT_NONE && !p->residual)
        return;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (long i = 0; i < m; i++) {
        float *y = p->y + (size_t)i * p->ldy;
        const float *r = p->residual ? p->residual + (size_t)i * p->ldy : NULL;
        attn_rows_activate(p->act, y, n);
        for (int j = 0; r && j < n; j++)
            y[j] += r[j];
    }
}
