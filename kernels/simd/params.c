/* params.c — the SIMD kernels' parameters and their cache-derived defaults. */
#include "simd_kernel.h"

const attn_param attn_simd_params[SK_N_PARAMS] = {
    [SK_MC] = { "mc", "GEMM rows per packed A block (kept in L2); rounded down to MR", 1, 8192, 1 },
    [SK_KC] = { "kc", "GEMM depth per block (a B micro-panel kept in L1)", 8, 4096, 1 },
    [SK_NC] = { "nc", "GEMM columns per packed B panel (kept in L2); rounded down to NR", 1, 65536, 1 },
    [SK_SPLIT] = { "split", "GEMM thread split: 0 auto, 1 column panels, 2 row tiles", 0, 2, 1,
                   .traced = 1 },
    [SK_BQ] = { "bq", "attention query rows per tile; rounded down to MR", 1, 4096, .traced = 1 },
    [SK_BK] = { "bk", "attention keys per tile when streaming; rounded down to NR", 1, 65536,
                .traced = 1 },
    [SK_STREAM_FROM] = { "stream_from", "stream keys (flash) from this Lk up; below, one tile of all keys",
                         1, 1 << 30, .threshold = 1, .traced = 1 },
    [SK_DECODE_ROWS] = ATTN_DECODE_ROWS_PARAM,
    [SK_PREFETCH] = ATTN_PREFETCH_PARAM,
    [SK_STREAM_ROWS] = { "stream_rows", "GEMM: weights streamed unpacked, C computed transposed, "
                         "up to this many rows; 0 never", 0, 4096, 1, .threshold = 1,
                         .traced = 1 },
    [SK_ROW_PREFETCH] = ATTN_ROW_PREFETCH_PARAM,
};

static int clamp(long v, long lo, long hi)
{
    return (int)(v < lo ? lo : v > hi ? hi : v);
}

/* kc: 384, measured, not derived: on a Zen 4 (32 KiB L1d, 1 MiB L2) a
 * 512×3072×768 GEMM ran at 80 / 88 / 96 / 97 GFLOP/s (AVX-512, 1 thread)
 * with kc 128 / 256 / 384 / 768, and AVX2 alike: deeper blocks write the C
 * tile back less often, and the B micro-panel streams from L2 at the rate
 * the FMAs need even when it overflows L1. mc: an mc × kc block of A fills
 * a quarter of L2. nc: a kc × nc panel of B fills half of L2, not of L3 as
 * in BLIS: the packed panel is written and then read back by every A block,
 * and through L3 (a victim cache on AMD, shared) that cost showed — 512 ×
 * 3072 × 768 ran at 94 → 97 GFLOP/s and 128 × 3072 × 768 at 74–84 → 84–89
 * with nc 8192 → 384 (interleaved runs). Attention: a tile of bq = 4·MR query rows against bk = 8·NR
 * keys keeps S, P and the Q rows well inside L2. */
void attn_simd_default_params(int mr, int nr, int *v)
{
    long l2 = (long)attn_cpu_cache_size(2);
    v[SK_KC] = 384;
    v[SK_MC] = clamp(l2 / 4 / (long)(sizeof(float) * v[SK_KC]) / mr * mr, mr, 4096);
    v[SK_NC] = clamp(l2 / 2 / (long)(sizeof(float) * v[SK_KC]) / nr * nr, nr, 8192);
    v[SK_SPLIT] = 0;
    v[SK_BQ] = 4 * mr;
    v[SK_BK] = 8 * nr;
    /* Stream once one key tile of all keys would need S and P blocks
     * (2·bq·Lk floats) over half of L2. Measured on a Zen 4 (docs/kernels.md): the
     * two paths run within noise of each other from Lk 512 to 4096, so the
     * rule is about memory, not speed. */
    v[SK_STREAM_FROM] = clamp(l2 / 2 / (long)(2 * sizeof(float) * v[SK_BQ]), 64, 1 << 20);
    v[SK_DECODE_ROWS] = ATTN_DECODE_ROWS_DEFAULT;
    v[SK_PREFETCH] = ATTN_PREFETCH_DEFAULT;
    /* Measured, not derived (Zen 4, interleaved runs, encoder D 768 F 3072):
     * the streamed gemm won at 128 and 256 rows (20.4 -> 18.8 ms and 42.4
     * -> 39.4 ms a layer, 1 thread), tied at 384 and lost by 2-5% at 512,
     * where the weights, packed once per 16 panels of x, cost little. */
    v[SK_STREAM_ROWS] = 256;
    v[SK_ROW_PREFETCH] = attn_row_prefetch_default();
}
