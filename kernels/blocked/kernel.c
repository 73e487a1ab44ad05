/*
 * kernel.c — the blocked kernel's table and its tunable parameters, whose
 * defaults come from this machine's cache sizes.
 */
#include "../frame/decode.h"
#include "../frame/sdpa.h"
#include "../rows.h"
#include "blocked.h"

static const attn_param params[BLK_N_PARAMS] = {
    [BLK_MC] = { "mc", "GEMM rows per A block (kept in L2); rounded down to 6", BLK_MR, 8192 },
    [BLK_KC] = { "kc", "GEMM depth per block (A and B micro-panels kept in L1)", 8, 4096 },
    [BLK_NC] = { "nc", "GEMM columns per B panel (kept in L3); rounded down to 8", BLK_NR, 65536 },
    [BLK_SPLIT] = { "split", "GEMM thread split: 0 auto, 1 column panels, 2 row tiles", 0, 2, 1,
                    .traced = 1 },
    [BLK_BQ] = BLK_SDPA_BQ_PARAM,
    [BLK_DECODE_ROWS] = ATTN_DECODE_ROWS_PARAM,
    [BLK_PREFETCH] = ATTN_PREFETCH_PARAM,
    [BLK_ROW_PREFETCH] = ATTN_ROW_PREFETCH_PARAM,
};

static int clamp(long v, long lo, long hi)
{
    return (int)(v < lo ? lo : v > hi ? hi : v);
}

/* BLIS-style sizing: the micro-panels of depth kc (A's broadcast 4×, so
 * 4·MR + NR floats per step) fill about half of L1; an mc×kc block of A a
 * quarter of L2 (the B panel streams through L2 beside it: at half of L2 the
 * two evicted each other, measured 20 vs 40 GFLOP/s on a 1 MiB L2); a kc×nc
 * panel of B half of L3.
 * bq lets a block of scores for 512 keys fill a quarter of L2. */
void blk_default_params(int *v)
{
    long l1 = (long)attn_cpu_cache_size(1), l2 = (long)attn_cpu_cache_size(2);
    long l3 = (long)attn_cpu_cache_size(3);
    v[BLK_KC] = clamp(l1 / 2 / (long)(sizeof(float) * (BLK_MR * BLK_BCAST + BLK_NR)) / 8 * 8,
                      32, 1024);
    v[BLK_MC] = clamp(l2 / 4 / (long)(sizeof(float) * BLK_BCAST * v[BLK_KC]) / BLK_MR * BLK_MR,
                      BLK_MR, 4096);
    v[BLK_NC] = clamp(l3 / 2 / (long)(sizeof(float) * v[BLK_KC]) / BLK_NR * BLK_NR, BLK_NR, 8192);
    v[BLK_BQ] = clamp(l2 / 4 / (long)(sizeof(float) * 512) / BLK_MR * BLK_MR, BLK_MR, 512);
    v[BLK_DECODE_ROWS] = ATTN_DECODE_ROWS_DEFAULT;
    v[BLK_PREFETCH] = ATTN_PREFETCH_DEFAULT;
    v[BLK_ROW_PREFETCH] = attn_row_prefetch_default();
}

const attn_kernel attn_kernel__blocked = {
    .name = "blocked",
    .description = "portable C, cache-blocked GEMM (6x8 tiles) and tiled attention, OpenMP",
    .requires = 0,
    .parallel = 1,
    .explains = 1,
    .gemm_parts = 1,
    .gemm_layernorm = 1,
    .params = params,
    .n_params = BLK_N_PARAMS,
    .default_params = blk_default_params,
    .gemm = attn_gemm__blocked,
    .gemm_scratch = attn_gemm_scratch__blocked,
    .sdpa = attn_sdpa__blocked,
    .sdpa_scratch = attn_sdpa_scratch__blocked,
    .kv_types = ATTN_KV_NARROW,   /* frame/sdpa.c: decode path in place, tiles widened */
    .layernorm = attn_layernorm__portable,
    .packed_floats = attn_packed_floats__blocked,
    .pack_weights = attn_pack_weights__blocked,
    /* The micro-kernel's and the skinny path's vectors are 4 floats too. */
    .geometry = { .mr = BLK_MR, .nr = BLK_NR, .skinny_rows = BLK_SKINNY_ROWS,
                  .attn_rows = BLK_MR, .attn_keys = BLK_NR, BLK_SDPA_GEOMETRY },
};

/* The same loops with every operand of every product (projections, FFN,
 * Q·Kᵀ, P·V) rounded to bf16 as it is packed and fp32 accumulation: the
 * contract of the bf16 rows (api.md §9.3) in portable C, so that it, its
 * bound and the composition are tested on every machine. Slower than
 * blocked (a rounding pass over every pack); a reference, not a choice. */
const attn_kernel attn_kernel__blocked_bf16 = {
    .name = "blocked-bf16",
    .description = "portable C emulation of the bf16 rows: blocked with every product's "
                   "operands rounded to bf16, fp32 accumulation",
    .requires = 0,
    .math = ATTN_BF16,
    .parallel = 1,
    .explains = 1,
    .gemm_parts = 1,
    .gemm_layernorm = 1,
    .params = params,
    .n_params = BLK_BQ + 1,   /* no decode path: decode_rows and prefetch do not apply */
    .default_params = blk_default_params,
    .gemm = attn_gemm__blocked_bf16,
    .gemm_scratch = attn_gemm_scratch__blocked_bf16,
    .sdpa = attn_sdpa__blocked_bf16,
    .sdpa_scratch = attn_sdpa_scratch__blocked_bf16,
    .kv_types = ATTN_KV_NARROW,   /* frame/sdpa.c widens a block's keys and values */
    .layernorm = attn_layernorm__portable,
    .packed_floats = attn_packed_floats__blocked_bf16,
    .pack_weights = attn_pack_weights__blocked_bf16,
    .geometry = { .mr = BLK_MR, .nr = BLK_NR, .attn_rows = BLK_MR, .attn_keys = BLK_NR,
                  .lanes = 4 },
};
