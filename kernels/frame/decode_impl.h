/*
 * decode_impl.h — the decode path of attention (a few query rows against
 * many keys, as in a decoding step against a KV cache) and the online-
 * softmax row steps it shares with the streaming path: a template over the
 * vector layer (simd.h), compiled by each SIMD kernel through its
 * sdpa_impl.h and by the tiled attention (sdpa.c: the blocked, openblas
 * and onednn kernels') for the portable vector target, so that one decode
 * path serves them all.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "../rows.h"
#include "../split.h"
#include "decode.h"
#include "simd.h"

/* The decode path's register blocking (sdpa_decode_task): query rows and
 * keys per step, the widest row kept whole in registers (decode.h, so
 * that the kernels' rows can name them), and the lines asked for at a new
 * page. */
#define DECODE_RB SDPA_DECODE_ROW_GROUP
#if defined(SIMD_REGISTERS) && SIMD_REGISTERS >= 32
#define DECODE_KS 4
#define DECODE_KV 4
#elif defined(SIMD_REGISTERS)
/* AVX2's 16 registers: the K pass's 4 × 2 accumulators fill them, but the
 * V pass takes four keys a step, each P read by broadcast where it does
 * not fit: o is loaded and stored half as often, and the sums are the
 * same (in key order). Lk 16384, H 32, Hkv 8, Dh 128, 1 thread, a 2-vCPU
 * Zen 4, old and new builds in one process, two runs: f16 5.61 -> 5.44
 * and 5.77 -> 5.54 ms (old ÷ new 1.038 [1.021, 1.055], 1.045 [1.012,
 * 1.080]); int8 5.43 -> 5.26 and 5.59 -> 5.47 (1.033 [1.017, 1.050], 1.018
 * [0.939, 1.104]); in L3 (Lk 1024) f16 1.076 [1.040, 1.114]; Lq 4, Hkv 32,
 * Lk 4096 f16 1.039 [1.016, 1.064]; fp32, bound by memory, and 2 threads
 * within ±2% (every interval holding 1). */
#define DECODE_KS 2
#define DECODE_KV 4
#else
#define DECODE_KS 2
#define DECODE_KV 2
#endif
/* Keys per step for fewer than DECODE_RB rows of a narrow type: one row's
 * accumulators leave room for four keys even in AVX2's 16 registers (Lk
 * 16384, H 32, Dh 128, 1 thread, a 2-vCPU Zen 4, with the prefetch distance
 * of sdpa_kv_ahead: f16 14.8 -> 12.2 ms, i8 10.4 -> 9.8-9.9 ms). Not on
 * the portable target, whose exact binary16 widening needs the registers
 * (f16 65.8 -> 71.9 ms with four keys). */
#if defined(SIMD_REGISTERS)
#define DECODE_K1 4
#else
#define DECODE_K1 DECODE_KS
#endif
/* The V pass of DECODE_RB rows with o held in registers (AVX2): a chunk
 * of DECODE_VW vectors of each row's o stays in registers while the
 * block's keys go by, instead of o loaded and stored once per DECODE_KV
 * keys (with P broadcast from memory: 16 registers do not hold 4 × 4 of
 * it). A Zen 1 core loads and stores 128 bits at a time, and its samples
 * sat on those stores. Lk 512, H 32, Hkv 8, Dh 128, avx2, 1 thread, a
 * 2-vCPU Zen 1 (family 0x17 model 1), old and new builds in one process:
 * fp32 0.921 [0.903, 0.940] of the old time, int8 0.935 [0.927, 0.942]
 * (f16 0.926, ±17%); 2 threads 0.921 / 0.959 / 0.957; in L2 (Lk 256, H 4,
 * Hkv 1) 0.885 / 0.939 / 0.932; Lk 2048 int8 0.942 at 1 and 2 threads,
 * fp32 and f16 no change; Lk 16384 fp32 0.989 and f16 1.005 (no change),
 * int8 0.957. The portable target's 4-lane chunks (half a line) ran fp32
 * 1.07-1.21× slower held, so it keeps the stepped pass; AVX-512 and NEON
 * (32 registers hold P) are not measured held and keep it too. */
#if defined(SIMD_REGISTERS) && SIMD_REGISTERS < 32
#define DECODE_V_HELD 1
#else
#define DECODE_V_HELD 0
#endif
#define DECODE_VW 2
/* The most keys a step of the K and of the V pass takes (array bounds). */
#define DECODE_KS_MOST (DECODE_K1 > DECODE_KS ? DECODE_K1 : DECODE_KS)
#define DECODE_KV_MOST (DECODE_K1 > DECODE_KV ? DECODE_K1 : DECODE_KV)
#define DECODE_ROW_VECS SDPA_DECODE_ROW_VECS
#define DECODE_PAGE_LINES 8

static inline size_t sdpa_round16(size_t n)
{
    return (n + 15) / 16 * 16;
}

/* Online-softmax step of one query row over a key tile: s[0..kb) scores, of
 * which the first n_vis are causally visible. Turns s into P, updates the
 * row's max m and sum l, and returns α, the factor the row's accumulated
 * output must be multiplied by (1 when nothing changes). Works on whole
 * vectors: s[n_vis..) up to the next multiple of the vector width (within
 * the row's bk floats) is set to −inf first, so those lanes give P = 0.
 * With p16 (only where the arch defines SDPA_P_STORE: avx512-bf16's
 * SDPA_P_STORE(p16, j, e0, e1, n) stores the first n ≤ 2·SIMD_LANES
 * lanes of e0 then e1 from element j on, rounded to bf16), P goes there
 * instead of into s, straight from the registers, two vectors a store:
 * kb values and a 0 to make the last pair, which are the row's bf16 pairs
 * in order. */
static float SIMD_NAME(sdpa_online_row)(float *s, int kb, int n_vis, float *m, float *l,
                                        uint16_t *p16)
{
    const int kv = (kb + SIMD_LANES - 1) / SIMD_LANES * SIMD_LANES;
    for (int j = n_vis; j < kv; j++)
        s[j] = -INFINITY;
    vf vmax = vf_set1(-INFINITY);
    for (int j = 0; j < kv; j += SIMD_LANES)
        vmax = vf_max(vmax, vf_load(s + j));
    float mx = vf_reduce_max(vmax);
    /* A NaN score must make the row NaN, as in the oracle. Whether the
     * vector max keeps or drops a NaN lane depends on the operand order;
     * dropped, the lane's e^(NaN − m) is NaN and so is l (when m is finite:
     * the scan below finds it when it is not). Kept, mx is NaN
     * and m becomes NaN for good (NaN compares false: m_new = *m would
     * drop it, or take the "all masked" exit when *m is −inf). */
    float m_new = mx != mx ? mx : mx > *m ? mx : *m;
#ifdef SDPA_P_STORE
    const int kb_even = (kb + 1) / 2 * 2;
#else
    (void)p16;
#endif
    /* Every lane but a NaN one −inf: x86's max returns its second operand
     * when either is NaN, so the vector max and its reduction can drop the
     * NaN and leave −inf, and the row would be taken for masked (a NaN in
     * the K row of a split's only key, Lk 513, gave a finite output where
     * the oracle gives NaN). Rare (a masked block), so a scan. */
    for (int j = 0; m_new == -INFINITY && j < n_vis; j++)
        if (s[j] != s[j])
            m_new = s[j];
    if (m_new == -INFINITY) {           /* every key so far masked: P = 0 */
#ifdef SDPA_P_STORE
        if (p16)
            for (int j = 0; j < kb_even; j += 2 * SIMD_LANES)
                SDPA_P_STORE(p16, j, vf_zero(), vf_zero(), kb_even - j);
        else
#endif
            for (int j = 0; j < kv; j += SIMD_LANES)
                vf_store(s + j, vf_zero());
        return 1.0f;
    }
    /* m = −inf (first visible tile) → 0; an unchanged max (most tiles after
     * the first few) skips the scalar exp, a dependency chain per row. */
    float alpha = m_new == *m ? 1.0f : attn_expf(*m - m_new);
    const vf vm = vf_set1(m_new);
    vf vsum = vf_zero();
#ifdef SDPA_P_STORE
    if (p16) {
        for (int j = 0; j < kv; j += 2 * SIMD_LANES) {
            vf e0 = vf_exp_nonpos(vf_sub(vf_load(s + j), vm));
            vf e1 = j + SIMD_LANES < kv ? vf_exp_nonpos(vf_sub(vf_load(s + j + SIMD_LANES), vm))
                                        : vf_zero();
            SDPA_P_STORE(p16, j, e0, e1, kb_even - j);
            vsum = vf_add(vf_add(vsum, e0), e1);   /* the order of the loop below */
        }
    } else
#endif
    for (int j = 0; j < kv; j += SIMD_LANES) {
        vf e = vf_exp_nonpos(vf_sub(vf_load(s + j), vm));   /* s ≤ max; −inf → 0 */
        vf_store(s + j, e);
        vsum = vf_add(vsum, e);
    }
    *l = *l * alpha + vf_reduce_add(vsum);
    *m = m_new;
    return alpha;
}

static inline void SIMD_NAME(sdpa_scale_row)(float *o, int n, float f)
{
    const vf factor = vf_set1(f);
    int j = 0;
    for (; j + SIMD_LANES <= n; j += SIMD_LANES)
        vf_store(o + j, vf_mul(vf_load(o + j), factor));
    if (j < n)
        vf_store_n(o + j, vf_mul(vf_load_n(o + j, n - j), factor), n - j);
}

/* ---- The decode path ----------------------------------------------------------------
 *
 * A decoding step has one query (or a few) per head against a cache of
 * thousands of keys: the work is reading K and V, once. Packing them per
 * query head, as the prefill path does, reads and writes them again (and
 * for grouped heads H / Hkv times). So when the query rows that share a
 * key/value head — Lq x H / Hkv of them — are at most decode_rows:
 *   - those rows form one tile, so each key/value head is read once;
 *   - K and V are read in place, row after row (two sequential streams the
 *     hardware prefetcher follows), never packed;
 *   - the keys are cut into splits of SDPA_DECODE_SPLIT (split-KV), the
 *     tasks (batch, key/value head, split) are shared among the threads,
 *     and each keeps its rows' running max m, sum l and accumulator o (the
 *     online softmax over blocks of SDPA_DECODE_KEYS keys); the splits are
 *     merged exactly afterwards: M = max m_s, o = Σ e^(m_s − M)·o_s /
 *     Σ e^(m_s − M)·l_s.
 * The split size is fixed, not derived from the thread count, and the
 * merge goes in split order, so the result does not depend on the threads.
 * (Both sizes are in decode.h, beside the path's parameters, so that the
 * kernels' rows can name them.) */

/* Query rows of one key/value head when the decode path runs — when they
 * are at most max_rows (the kernel's decode_rows parameter) — else 0. */
static int SIMD_NAME(sdpa_decode_rows)(const attn_sdpa_problem *p, int max_rows)
{
    long rows = (long)p->q_len * (p->n_heads / attn_kv_heads(p));
    return rows <= max_rows ? (int)rows : 0;
}

/* Scratch of the decode path, in floats: per thread the scaled queries
 * [rows][Dh] and a block of scores [rows][SDPA_DECODE_KEYS]; per task its
 * partial result [m: rows][l: rows][o: rows·Dh]. */
typedef struct sdpa_decode_plan {
    int rows, keys, splits;
    long tasks;
    size_t scores, per_thread, part, parts, total;
} sdpa_decode_plan;

/* 0 when a size overflows. */
static int SIMD_NAME(sdpa_decode_plan_of)(const attn_sdpa_problem *p, int rows, int n_threads,
                                          sdpa_decode_plan *d)
{
    d->rows = rows;
    d->keys = attn_mask_visible_keys(p->mask, p->q_len - 1, p->q_len, p->kv_len);
    d->splits = d->keys > 0 ? (d->keys + SDPA_DECODE_SPLIT - 1) / SDPA_DECODE_SPLIT : 1;
    d->tasks = (long)p->batch * attn_kv_heads(p) * d->splits;
    /* rows <= 64 and head_dim < 2^31: the per-row sizes fit; the products
     * with the thread and task counts are checked. */
    d->scores = sdpa_round16((size_t)rows * (size_t)p->head_dim);
    d->per_thread = d->scores + sdpa_round16((size_t)rows * SDPA_DECODE_KEYS);
    d->part = sdpa_round16((size_t)rows * ((size_t)p->head_dim + 2));
    d->parts = d->per_thread;
    size_t all_parts = d->part;
    d->total = 0;
    return attn_mul_checked(&d->parts, (size_t)(n_threads > 0 ? n_threads : 1), SIZE_MAX / 8)
        && attn_mul_checked(&all_parts, (size_t)d->tasks, SIZE_MAX / 8)
        && attn_add_checked(&d->total, d->parts, SIZE_MAX / 8)
        && attn_add_checked(&d->total, all_parts, SIZE_MAX / 8);
}

/* o[0..n) += f·x[0..n). */
static inline void SIMD_NAME(sdpa_axpy)(float *o, const float *x, float f, int n)
{
    const vf vfac = vf_set1(f);
    int j = 0;
    for (; j + SIMD_LANES <= n; j += SIMD_LANES)
        vf_store(o + j, vf_fmadd(vfac, vf_load(x + j), vf_load(o + j)));
    if (j < n)
        vf_store_n(o + j, vf_fmadd(vfac, vf_load_n(x + j, n - j), vf_load_n(o + j, n - j)), n - j);
}

/* Asks for the cache lines of one K or V row of `bytes` bytes, into L2
 * (locality 2: prefetcht1 on x86; the measurements are in decode.h). */
static inline void SIMD_NAME(sdpa_prefetch_row)(const void *row, size_t bytes)
{
    for (size_t j = 0; j < bytes; j += 64)
        __builtin_prefetch((const char *)row + j, 0, 2);
}

/* Asks for the first lines of the page that the row at `row` (`bytes`
 * long) reaches into, when it reaches into a new one (the row contains a
 * 4 KiB boundary). The hardware's stream prefetcher follows each stream
 * within a page and stops at its end; this restarts it a page early. For
 * the register path below where row_prefetch is 0 (decode.h): on a Zen 4
 * its loop outran a per-line prefetch (Lk 16384, H 32, Dh 128, 1 thread,
 * avx512: 19.7-21.7 ms, against 26.7-27.1 ms with every line prefetched
 * and 23-24.3 ms for the one-key loops, docs/decoding.md); a Xeon's and a
 * Zen 1's prefetchers do not keep up with it. */
static inline void SIMD_NAME(sdpa_prefetch_page)(const void *row, size_t bytes)
{
    const uintptr_t first = (uintptr_t)row, last = first + bytes - 1;
    if ((first - 1) >> 12 == last >> 12)
        return;
    const char *page = (const char *)(last & ~(uintptr_t)4095);
    for (int i = 0; i < DECODE_PAGE_LINES; i++)
        __builtin_prefetch(page + 64 * i, 0, 2);
}

/* The decode path's inner loops over one block of keys.
 *
 * One query row whose dh = nv·SIMD_LANES floats fit in registers
 * (nv ≤ DECODE_ROW_VECS; a decoding step with Hkv = H): the query (K pass)
 * and the accumulator (V pass) stay in registers for the whole block, so a
 * key costs its loads and FMAs only, and the rows ahead are prefetched as
 * decode.h's row_prefetch says (sdpa_prefetch_ahead). The K pass reduces
 * four keys' dot products together (vf_reduce_add4, the same sums bit for
 * bit): a profile put most of its samples on the per-key horizontal sum.
 * Lk 16384, H 32, Dh 128, 1 thread, avx512 on a 2-vCPU Zen 4, old and new
 * builds in one process:
 * fp32 22.1 -> 20.2 ms, int8 6.79 -> 6.58-6.71, f16 10.3 -> 10.0; with
 * the keys in L3 (Lk 512) fp32 304 -> 265 us, int8 189 -> 178, f16 185
 * -> 176.
 *
 * Otherwise, from DECODE_RB rows up, rows are register-blocked: a vector
 * of K is loaded once for DECODE_RB query rows and DECODE_KS keys (RB·KS
 * accumulators), a vector of o is loaded and stored once for DECODE_KV
 * keys (or, on AVX2, held in registers over the block: DECODE_V_HELD), each
 * V vector once for all RB rows; every line of the row `ahead` keys on is
 * prefetched. One row and one key at a time, four rows (Hkv 8)
 * reloaded each K and V vector four times and stored o once per key: Lk
 * 16384, Hkv 8, 1 thread, avx512: 9.1-10.2 ms; blocked with 2 keys per
 * K step 6.5-6.7 ms, with 4 keys 6.3-6.5 ms (in L3, Lk 1024: 463-473,
 * 307-309, 273-277 us: with 2 keys the K loop was bound by its loads). Below
 * DECODE_RB rows the plain loops (sdpa_kv_dot, sdpa_kv_axpy: one key at a time)
 * are kept: with a single row, two or four keys at once ran 5-10% slower
 * from memory, and one accumulator per dot instead of two 50% slower on
 * the portable target. */
#define DECODE_INLINE inline __attribute__((always_inline))

/* The register path's prefetch of the row at `row` (`bytes` long), as
 * decode.h's row_prefetch says: every line if lines, else a new page's
 * first lines. */
static DECODE_INLINE void SIMD_NAME(sdpa_prefetch_ahead)(const void *row, size_t bytes, int lines)
{
    if (lines)
        SIMD_NAME(sdpa_prefetch_row)(row, bytes);
    else
        SIMD_NAME(sdpa_prefetch_page)(row, bytes);
}

/* regs[0..nv) = the nv vectors at x; the rest of DECODE_ROW_VECS zero. */
static DECODE_INLINE void SIMD_NAME(sdpa_decode_row_load)(vf *regs, const float *x, int nv)
{
#pragma GCC unroll 8
    for (int v = 0; v < DECODE_ROW_VECS; v++)
        regs[v] = v < nv ? vf_load(x + v * SIMD_LANES) : vf_zero();
}

/* The passes over keys and values, once per storage type. */
#define KV_T f32
#define KV_BYTES 4
#define KV_LOAD(p) vf_load((const float *)(const void *)(p))
#define KV_LOAD_N(p, n) vf_load_n((const float *)(const void *)(p), n)
#define KV_SCALED 0
#include "decode_kv_impl.h"
#undef KV_T
#undef KV_BYTES
#undef KV_LOAD
#undef KV_LOAD_N
#define KV_T f16
#define KV_BYTES 2
#define KV_LOAD(p) vf_load_f16(p)
#define KV_LOAD_N(p, n) vf_load_f16_n(p, n)
#include "decode_kv_impl.h"
#undef KV_T
#undef KV_LOAD
#undef KV_LOAD_N
#define KV_T bf16
#define KV_LOAD(p) vf_load_bf16(p)
#define KV_LOAD_N(p, n) vf_load_bf16_n(p, n)
#include "decode_kv_impl.h"
#undef KV_T
#undef KV_BYTES
#undef KV_LOAD
#undef KV_LOAD_N
#undef KV_SCALED
#define KV_T i8
#define KV_BYTES 1
#define KV_LOAD(p) vf_load_i8(p)
#define KV_LOAD_N(p, n) vf_load_i8_n(p, n)
#define KV_SCALED 1
#include "decode_kv_impl.h"
#undef KV_T
#undef KV_BYTES
#undef KV_LOAD
#undef KV_LOAD_N
#undef KV_SCALED

/* One storage type's passes (a task takes the keys' type's K passes and
 * the values' type's V passes). */
typedef struct sdpa_kv_pass {
    void (*block_scores)(const float *qs, int dh, int rows, const char *K, size_t kst, int kb,
                         int ahead, int ahead_ok, const float *scale, size_t scale_st, float *s);
    void (*block_values)(float *o, int dh, int rows, const char *V, size_t vst, int kb,
                         int ahead, int ahead_ok, const float *scale, size_t scale_st, float *s);
    void (*row_scores)(const float *q, int nv, const char *K, size_t kst, int kb, int ahead,
                       int lines, int ahead_ok, const float *scale, size_t scale_st, float *s);
    void (*row_values)(float *o, int nv, const char *V, size_t vst, int kb, int ahead,
                       int lines, int ahead_ok, const float *scale, size_t scale_st, float *s);
} sdpa_kv_pass;

#define SDPA_KV_PASS(t)                                                                            \
    { SIMD_NAME(sdpa_kv_block_scores_##t), SIMD_NAME(sdpa_kv_block_values_##t),                   \
      SIMD_NAME(sdpa_kv_row_scores_##t), SIMD_NAME(sdpa_kv_row_values_##t) }
static const sdpa_kv_pass SIMD_NAME(sdpa_kv_passes)[ATTN_DTYPE_COUNT] = {
    [ATTN_F32] = SDPA_KV_PASS(f32), [ATTN_F16] = SDPA_KV_PASS(f16),
    [ATTN_BF16] = SDPA_KV_PASS(bf16), [ATTN_I8] = SDPA_KV_PASS(i8),
};
#undef SDPA_KV_PASS

/* Keys (which 0) or values (1) of batch b, key/value head kvh as the
 * passes take them: the first row, the row stride and the scales. */
typedef struct sdpa_kv_rows {
    const char *data;
    size_t st;
    const float *scale;
    size_t scale_st;
    const sdpa_kv_pass *pass;
} sdpa_kv_rows;

static sdpa_kv_rows SIMD_NAME(sdpa_kv_rows_of)(const attn_sdpa_problem *p, int which, int b,
                                               int kvh)
{
    const attn_kv_store *s = which ? &p->v_store : &p->k_store;
    const attn_strides *st = which ? &p->v_st : &p->k_st;
    float unused;
    sdpa_kv_rows r = { attn_kv_row(p, which, b, kvh, 0, &unused),
                       st->row * attn_dtype_bytes(s->type), NULL, 0,
                       &SIMD_NAME(sdpa_kv_passes)[s->type] };
    if (s->type == ATTN_I8) {
        r.scale = s->scale + (size_t)b * s->scale_st.batch + (size_t)kvh * s->scale_st.head;
        r.scale_st = s->scale_st.row;
    }
    return r;
}

/* Row r of a key/value head's tile: query row r % Lq of its (r / Lq)-th head. */
static void SIMD_NAME(sdpa_decode_task)(const attn_sdpa_problem *p, const sdpa_decode_plan *d,
                                        float *buf, float *part, int b, int kvh, int split,
                                        int ahead, int lines)
{
    const int dh = p->head_dim, lq = p->q_len, rows = d->rows;
    const int group = p->n_heads / attn_kv_heads(p);
    const int nv = dh / SIMD_LANES;
    const int in_registers = rows == 1 && dh % SIMD_LANES == 0 && nv <= DECODE_ROW_VECS;
    float *qs = buf, *s = buf + d->scores;
    float *m = part, *l = part + rows, *o = part + 2 * rows;
    for (int r = 0; r < rows; r++) {
        const int h = kvh * group + r / lq, i = r % lq;
        const float *q = p->q + b * p->q_st.batch + h * p->q_st.head + (size_t)i * p->q_st.row;
        for (int j = 0; j < dh; j++) {
            qs[(size_t)r * dh + j] = q[j] * p->scale;
            o[(size_t)r * dh + j] = 0.0f;
        }
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    const sdpa_kv_rows K = SIMD_NAME(sdpa_kv_rows_of)(p, 0, b, kvh);
    const sdpa_kv_rows V = SIMD_NAME(sdpa_kv_rows_of)(p, 1, b, kvh);
    const int k_begin = split * SDPA_DECODE_SPLIT;
    const int k_end = k_begin + SDPA_DECODE_SPLIT < d->keys ? k_begin + SDPA_DECODE_SPLIT : d->keys;
    for (int k0 = k_begin; k0 < k_end; k0 += SDPA_DECODE_KEYS) {
        const int kb = k_end - k0 < SDPA_DECODE_KEYS ? k_end - k0 : SDPA_DECODE_KEYS;
        const char *Kb = K.data + (size_t)k0 * K.st, *Vb = V.data + (size_t)k0 * V.st;
        const float *ksc = K.scale ? K.scale + (size_t)k0 * K.scale_st : NULL;
        const float *vsc = V.scale ? V.scale + (size_t)k0 * V.scale_st : NULL;
        if (in_registers)
            K.pass->row_scores(qs, nv, Kb, K.st, kb, ahead, lines, k_end - k0, ksc, K.scale_st,
                               s);
        else
            K.pass->block_scores(qs, dh, rows, Kb, K.st, kb, ahead, k_end - k0, ksc, K.scale_st,
                                 s);
        for (int r = 0; r < rows; r++) {
            float *row = s + (size_t)r * SDPA_DECODE_KEYS;
            int n_vis = attn_mask_visible_keys(p->mask, r % lq, lq, p->kv_len) - k0;
            n_vis = n_vis < 0 ? 0 : n_vis > kb ? kb : n_vis;
            if (p->mask)
                attn_rows_mask(p->mask, b, r % lq, lq, p->kv_len, k0, row, n_vis);
            float alpha = SIMD_NAME(sdpa_online_row)(row, kb, n_vis, &m[r], &l[r], NULL);
            if (alpha != 1.0f)
                SIMD_NAME(sdpa_scale_row)(o + (size_t)r * dh, dh, alpha);
        }
        if (in_registers)
            V.pass->row_values(o, nv, Vb, V.st, kb, ahead, lines, k_end - k0, vsc, V.scale_st,
                               s);
        else
            V.pass->block_values(o, dh, rows, Vb, V.st, kb, ahead, k_end - k0, vsc, V.scale_st,
                                 s);
    }
}

/* The merge's unit: `cols` columns of one query row's output. A key/value
 * head as the unit left threads idle or doubled up wherever the heads do
 * not divide among them (32 heads on 24 threads: 2 against 1.33,
 * imbalance 1.5; the 8 heads of a grouped step on 16: half idle). A row
 * is cut into pieces of whole 16-float vectors: the widest whose units
 * (rows × pieces) deal out within 10% (B·H·Lq rows of Dh 128 on 16
 * threads: whole rows; on 96: 3 pieces of 48), else the most balanced (a
 * prime count: 32 rows on 41 threads, 4 pieces of 32 were 1.28, 8 of 16
 * are 1.12). Each piece finds its row's maximum and sum over the splits
 * itself (a few dozen floats; at most Dh/16 pieces a row) and adds its
 * columns in split order, so the output is the same bit for bit however
 * the row is cut. */
static int SIMD_NAME(decode_merge_cols)(const attn_sdpa_problem *p, const sdpa_decode_plan *d,
                                        int n_threads)
{
    const long rows = (long)p->batch * attn_kv_heads(p) * d->rows;
    const int vecs = (p->head_dim + 15) / 16, nt = n_threads > 0 ? n_threads : 1;
    int best = vecs;
    double best_im = 1e300;
    /* q pieces a row of w vectors (the last may be shorter), weighed in
     * vectors: the most units a thread gets, each counted as w wide. */
    for (int q = 1; q <= vecs && rows > 0; q++) {
        const int w = (vecs + q - 1) / q;
        const long units = rows * ((vecs + w - 1) / w);
        const double im = (double)((units + nt - 1) / nt) * w * nt / ((double)rows * vecs);
        if (im < best_im - 1e-9)
            best_im = im, best = w;
        if (im <= 1.1)
            break;
    }
    return 16 * best;
}

static long SIMD_NAME(decode_merge_units)(const attn_sdpa_problem *p, const sdpa_decode_plan *d,
                                          int cols)
{
    return (long)p->batch * attn_kv_heads(p) * d->rows * ((p->head_dim + cols - 1) / cols);
}

/* The exact merge of unit u of decode_merge_units: key/value head bh's
 * query row r, columns [c0, c1) of `cols`-wide pieces, its splits in
 * split order. */
static void SIMD_NAME(sdpa_decode_merge)(const attn_sdpa_problem *p, const sdpa_decode_plan *d,
                                         const float *parts, int cols, long u)
{
    const int hkv = attn_kv_heads(p), dh = p->head_dim, lq = p->q_len, rows = d->rows;
    const int pieces = (dh + cols - 1) / cols;
    const int c0 = (int)(u % pieces) * cols, c1 = c0 + cols < dh ? c0 + cols : dh;
    const int r = (int)(u / pieces % rows);
    const long bh = u / pieces / rows;
    const int b = (int)(bh / hkv), kvh = (int)(bh % hkv), group = p->n_heads / hkv;
    const float *first = parts + (size_t)bh * d->splits * d->part;
    const int h = kvh * group + r / lq, i = r % lq;
    float *out = p->out + b * p->out_st.batch + h * p->out_st.head + (size_t)i * p->out_st.row + c0;
    float mx = -INFINITY, sum = 0.0f;
    for (int sp = 0; sp < d->splits; sp++) {
        float ms = first[(size_t)sp * d->part + r];
        mx = ms != ms || mx != mx ? NAN : ms > mx ? ms : mx;   /* NaN wins */
    }
    for (int j = 0; j < c1 - c0; j++)
        out[j] = 0.0f;
    if (mx == -INFINITY)           /* every key masked: zeros (api.md §1) */
        return;
    for (int sp = 0; sp < d->splits; sp++) {
        const float *part = first + (size_t)sp * d->part;
        if (part[r] == -INFINITY)
            continue;
        float f = attn_expf(part[r] - mx);
        sum += f * part[rows + r];
        SIMD_NAME(sdpa_axpy)(out, part + 2 * rows + (size_t)r * dh + c0, f, c1 - c0);
    }
    SIMD_NAME(sdpa_scale_row)(out, c1 - c0, 1.0f / sum);
}

/* Offers the merge of the splits, `heads` key/value heads, to ex's trace
 * (split.h); 1: skip it. */
static int SIMD_NAME(decode_offer_merge)(const attn_exec *ex, const attn_sdpa_problem *p,
                                         long units, int cols)
{
    return attn_trace_units(ex, units, "a piece of a query row, its splits merged",
                            "decode %dx%dx%dx%d: the splits merged, rows in pieces of %d columns",
                            p->batch, p->n_heads, p->q_len, p->kv_len, cols);
}

/* The decode path on rows (sdpa_decode_rows) query rows per key/value
 * head, prefetching ahead keys ahead (0: none), a single row in registers
 * every line if lines, else a new page's first lines (decode.h's
 * row_prefetch); ex->scratch holds sdpa_decode_plan_of's total floats. */
static void SIMD_NAME(sdpa_decode)(const attn_exec *ex, const attn_sdpa_problem *p, int rows,
                                   int ahead, int lines)
{
    sdpa_decode_plan d;
    /* laid out as sized (a dry run's: one thread's slice) */
    SIMD_NAME(sdpa_decode_plan_of)(p, rows, attn_exec_scratch_threads(ex), &d);
    float *scratch = ex->scratch, *parts = scratch + d.parts;
    const int hkv = attn_kv_heads(p);
    const int cols = SIMD_NAME(decode_merge_cols)(p, &d, ex->n_threads);
    const long merges = SIMD_NAME(decode_merge_units)(p, &d, cols);
    /* Each region is offered right before its fork (split.h): a dry run
     * records both and returns. */
    if (attn_trace_units(ex, d.tasks, "a key/value head's run of keys",
                         "decode %dx%dx%dx%d (B, H, Lq, Lk), %d splits of %d keys per KV head",
                         p->batch, p->n_heads, p->q_len, p->kv_len, d.splits,
                         SDPA_DECODE_SPLIT)) {
        (void)SIMD_NAME(decode_offer_merge)(ex, p, merges, cols);
        return;
    }

#pragma omp parallel for num_threads(ex->n_threads) schedule(dynamic, 1)
    for (long t = 0; t < d.tasks; t++) {
        int split = (int)(t % d.splits), kvh = (int)(t / d.splits % hkv);
        int b = (int)(t / d.splits / hkv);
        SIMD_NAME(sdpa_decode_task)(p, &d, scratch + (size_t)omp_get_thread_num() * d.per_thread,
                                    parts + (size_t)t * d.part, b, kvh, split, ahead, lines);
    }

    /* The exact merge of the splits, in split order. */
    (void)SIMD_NAME(decode_offer_merge)(ex, p, merges, cols);   /* a measured trace times it */
#pragma omp parallel num_threads(ex->n_threads)
    {
        long lo, hi;
        attn_split_static(merges, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        for (long u = lo; u < hi; u++)
            SIMD_NAME(sdpa_decode_merge)(p, &d, parts, cols, u);
    }
}

