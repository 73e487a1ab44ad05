/*
 * sdpa.c — the blocked kernels' attention: the frame's tiled attention
 * (frame/sdpa.h) with the blocked GEMM for both products; blocked-bf16's
 * with its operands rounded to bf16, and never the decode path (whose
 * products are fp32), so that every product of the row is rounded.
 */
#include "../frame/sdpa.h"
#include "blocked.h"

static void blocked_product(const blk_gemm *g, const int *params, float *pack)
{
    blk_gemm_range(blk_arch_portable(), g, 0, g->m, 0, g->n, params, pack);
}

static void blocked_bf16_product(const blk_gemm *g, const int *params, float *pack)
{
    blk_gemm_range(blk_arch_portable_bf16(), g, 0, g->m, 0, g->n, params, pack);
}

static blk_sdpa_plan blocked_plan(const attn_sdpa_problem *p, const int *params, int bf16)
{
    int widest = p->kv_len > p->head_dim ? p->kv_len : p->head_dim;
    /* QKᵀ packs k = Dh deep, n = keys wide; P·V packs k = keys deep, n = Dh
     * wide: the pack for (widest, widest) covers both. */
    blk_sdpa_plan sp = {
        .bq = params[BLK_BQ], .decode_rows = bf16 ? 0 : params[BLK_DECODE_ROWS],
        .prefetch = bf16 ? 0 : params[BLK_PREFETCH],
        .row_prefetch = bf16 ? 0 : params[BLK_ROW_PREFETCH],
        .product = bf16 ? blocked_bf16_product : blocked_product,
        .pack_floats = blk_pack_floats(blk_arch_portable(), params, (size_t)params[BLK_BQ],
                                       widest, widest),
    };
    return sp;
}

size_t attn_sdpa_scratch__blocked(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params, 0);
    return blk_sdpa_scratch(ex, p, &sp);
}

void attn_sdpa__blocked(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params, 0);
    blk_sdpa(ex, p, &sp);
}

size_t attn_sdpa_scratch__blocked_bf16(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params, 1);
    return blk_sdpa_scratch(ex, p, &sp);
}

void attn_sdpa__blocked_bf16(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = blocked_plan(p, ex->params, 1);
    blk_sdpa(ex, p, &sp);
}
