/*
 * decode.h — what a kernel's table names of the shared decode path
 * (decode_impl.h): its two parameters with their defaults, and its fixed
 * sizes, which the table's geometry states (SDPA_DECODE_GEOMETRY). Apart
 * from the template so that a table, compiled for no vector target, can
 * include it.
 */
#ifndef ATTN_FRAME_DECODE_H
#define ATTN_FRAME_DECODE_H

#include "../kernel.h"

/* The decode path's parameters, the same in the table of every kernel that
 * runs it (blocked, openblas, the SIMD kernels' simd/params.c). */
#define ATTN_DECODE_ROWS_PARAM                                                                 \
    { "decode_rows", "attention: decode path (K and V streamed in place, split across "       \
      "threads) when Lq x heads per key/value head <= this; 0 never", 0, 64, .threshold = 1 }
#define ATTN_PREFETCH_PARAM                                                                    \
    { "prefetch", "attention, decode path: prefetch K and V rows this many keys ahead; 0 off " \
      "(the hardware prefetcher alone)", 0, 256 }
/* Their defaults, measured (docs/decoding.md, avx512 on a Zen 4, H 32,
 * Dh 128, Lk 4096, decode_rows 64 against 0 in alternating runs): the
 * decode path up to 16 query rows per key/value head. With 4 heads per
 * key/value head it took 0.2–0.6× the streaming path's time up to 16 rows,
 * tied at 32, lost at 64 (1.3×); with one (Hkv = H) it took 0.3–0.4× at 1
 * and 4 rows and lost by 10% at 16 — the streaming path packs K and V once
 * per query head, which costs most when several heads share them. 16 loses
 * at most that 10% on either side; the tuner tries both paths per bucket.
 * Rows 16 keys ahead (8 KiB of K or V at Dh 128) into L2 (prefetcht1): 0 /
 * 8 / 12 / 16 / 24 keys ahead gave 15.7 / 18.5 / 21.5 / 21.4 / 20.7 GB/s
 * of K and V at Lk 16384, 1 thread; into L1 (prefetcht0) no gain at any
 * distance — the hardware prefetcher alone keeps too few lines in flight
 * for two streams. A single query row held in registers (decode_impl.h's
 * register path) prefetches only where the row `prefetch` keys on enters a
 * new page: its loop outruns a per-line prefetch. */
enum { ATTN_DECODE_ROWS_DEFAULT = 16, ATTN_PREFETCH_DEFAULT = 16 };
/* The decode path's key blocks (of its online softmax) and the keys of
 * one split (a task of split-KV): decode_impl.h says why. */
#define SDPA_DECODE_KEYS 64
#define SDPA_DECODE_SPLIT 512
/* Its register blocking (decode_impl.h says why): query rows taken
 * together, and the vectors of a single row's head kept in registers. */
#define SDPA_DECODE_ROW_GROUP 4
#define SDPA_DECODE_ROW_VECS 8
/* The decode path's fields of a kernel's attn_geometry, for vectors of
 * `lanes` floats (the portable target's 4, or the ISA's). */
#define SDPA_DECODE_GEOMETRY(lanes)                                                                \
    .decode_split = SDPA_DECODE_SPLIT, .decode_row_group = SDPA_DECODE_ROW_GROUP,                  \
    .decode_row_width = SDPA_DECODE_ROW_VECS * (lanes)

#endif /* ATTN_FRAME_DECODE_H */
