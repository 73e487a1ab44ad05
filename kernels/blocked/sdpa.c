/*
 * sdpa.c — the blocked kernel's attention: the frame's tiled attention
 * (frame/sdpa.h) with the blocked GEMM for both products.
 */
#include "../frame/sdpa.h"
#include "blocked.h"

static void blocked_product(const blk_gemm *g, const int *params, float *pack)
{
    blk_gemm_range(blk_arch_portable(), g, 0, g->m, 0, g->n, params, pack);
}

static blk_sdpa_plan blocked_plan(const attn_sdpa_problem *p, const int *params)
{
    int widest = p->kv_len > p->head_dim ? p->kv_len : p->head_dim;
    /* QKᵀ packs k = Dh deep, n = keys wide; P·V packs k = keys deep, n = Dh
     * wide: the pack for (widest, widest) covers both. */
    blk_sdpa_plan sp = {
        .bq = params[BLK_BQ], .decode_rows = params[BLK_DECODE_ROWS],
        .prefetch = params[BLK_PREFETCH], .product = blocked_product,
        .pack_floats = blk_pack_floats(blk_arch_portable(), params, (size_t)params[BLK_BQ],
                                       widest, widest),
    };
    return sp;
}

size_t attn_sdpa_scratch__blocked(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params);
    return blk_sdpa_scratch(ex, p, &sp);
}

void attn_sdpa__blocked(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params);
    blk_sdpa(ex, p, &sp);
}
