/*
 * sdpa.h — the tiled attention (sdpa.c) with the products of a kernel's
 * choice: the blocked kernel's own GEMM, OpenBLAS's or oneDNN's sgemm. A
 * decoding step takes the shared decode path (decode_impl.h) instead,
 * compiled for the portable vector target.
 */
#ifndef ATTN_FRAME_SDPA_H
#define ATTN_FRAME_SDPA_H

#include "decode.h"
#include "gemm.h"

/* How a kernel runs the tiled attention: product computes C = alpha·A·op(B)
 * of g (no epilogue) on the calling thread, with pack_floats of packing
 * space. bq query rows per task; the decode path when the rows per
 * key/value head are at most decode_rows, prefetching prefetch keys ahead
 * as row_prefetch says (decode.h's parameters). */
typedef struct blk_sdpa_plan {
    int bq, decode_rows, prefetch, row_prefetch;
    void (*product)(const blk_gemm *g, const int *params, float *pack);
    size_t pack_floats;
} blk_sdpa_plan;

/* The plan's bq as a kernel's table lists it among its parameters. */
#define BLK_SDPA_BQ_PARAM                                                                      \
    { "bq", "attention query rows per task (bq x Lk scores kept in L2)", 1, 4096 }

/* The geometry of a kernel whose attention this is: the decode path's, for
 * the portable target's vectors of 4 floats (simd.h), which are also those
 * of the row loops. */
#define BLK_SDPA_GEOMETRY .lanes = 4, SDPA_DECODE_GEOMETRY(4)

/* The sdpa primitive and its scratch, in bytes (SIZE_MAX when a size
 * overflows), for a kernel's plan. */
void blk_sdpa(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp);
size_t blk_sdpa_scratch(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp);

#endif /* ATTN_FRAME_SDPA_H */
