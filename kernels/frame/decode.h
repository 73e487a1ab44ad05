/*
 * decode.h — what a kernel's table names of the shared decode path
 * (decode_impl.h): its two parameters with their defaults, and its fixed
 * sizes, which the table's geometry states (SDPA_DECODE_GEOMETRY). Apart
 * from the template so that a table, compiled for no vector target, can
 * include it.
 */
#ifndef ATTN_FRAME_DECODE_H
#define ATTN_FRAME_DECODE_H

#include <string.h>

#include "../kernel.h"

/* The decode path's parameters, the same in the table of every kernel that
 * runs it (blocked, openblas, the SIMD kernels' simd/params.c). */
#define ATTN_DECODE_ROWS_PARAM                                                                 \
    { "decode_rows", "attention: decode path (K and V streamed in place, split across "       \
      "threads) when Lq x heads per key/value head <= this; 0 never", 0, ATTN_DECODE_ROWS_MAX, \
      .threshold = 1, .decode_only = 1, .traced = 1 }
#define ATTN_PREFETCH_PARAM                                                                    \
    { "prefetch", "attention, decode path: prefetch K and V rows this many keys ahead; 0 off " \
      "(the hardware prefetcher alone)", 0, 256, .decode_only = 1 }
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
 * register path) prefetches as row_prefetch below says. */
enum { ATTN_DECODE_ROWS_DEFAULT = 16, ATTN_PREFETCH_DEFAULT = 16 };
/* How a single query row held in registers (decode_impl.h's register path)
 * prefetches: 0 the first lines of a new page only, where the row
 * `prefetch` keys on enters one (the hardware's stream prefetcher fetches
 * the rest); 1 every line of the row as many bytes ahead as `prefetch` fp32
 * rows span (so 2x the keys for f16 and bf16, 4x for int8). */
#define ATTN_ROW_PREFETCH_PARAM                                                                \
    { "row_prefetch", "attention, decode path, one query row in registers: 1 prefetch every " \
      "line, as many bytes ahead as `prefetch` fp32 keys; 0 a new page's first lines only", 0, 1, \
      .decode_only = 1 }
/* Its default, measured (docs/decoding.md; Lk 16384, H 32, 1 thread, the
 * builds or settings side by side in one process): every line, as many
 * bytes ahead, took
 *   - on a 16-core Intel Xeon (family 6 model 207), avx512, Dh 128: 0.80
 *     of the page-start time for f16, 0.77-0.80 for int8, 0.95-0.98 fp32;
 *   - on a 2-vCPU AMD EPYC of family 0x17 (Zen 1), avx2, Dh 64: 0.73 for
 *     f16, 0.91 for int8, fp32 unchanged;
 * but on a Zen 4 (family 0x19), avx512, Dh 128, every line (then at the
 * same keys ahead) took 1.14-1.21x for int8 and f16: its stream prefetcher
 * keeps up once restarted at each page, and the prefetches only add work.
 * So page starts on AMD from family 0x19 (Zen 3 unmeasured: it follows
 * Zen 4), every line elsewhere; `attnbench tune` tries both. */
static inline int attn_row_prefetch_default(void)
{
    const attn_cpu_info *cpu = attn_cpu();   /* read once, cached */
    return !(strcmp(cpu->vendor, "AuthenticAMD") == 0 && cpu->family >= 0x19);
}
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
