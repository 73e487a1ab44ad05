/*
 * sdpa_impl.h — the SIMD kernels' attention, a template compiled by each ISA
 * folder after gemm_impl.h (whose micro-kernel and packing it uses).
 *
 * Streaming ("flash") attention. For each (batch, head) the keys and values
 * are packed once into the micro-kernel's panel layout (O(Lk·Dh) floats per
 * thread, never O(Lq·Lk)); then for each tile of bq query rows, the visible
 * keys are taken in tiles of bk:
 *   S = (scale·Q)·Kᵀ           an bq × bk block, in L1/L2
 *   masks applied in the tile   (causal edge, padding, keep, bias)
 *   online softmax per row      m' = max(m, max S), α = e^(m − m'),
 *                               P = e^(S − m'), l = α·l + ΣP
 *   O = α·O + P·V               in place in the output rows
 * and at the end O /= l (a row with l = 0 — every key masked — is zeros).
 * Under a causal mask, key tiles past the tile's last row are never
 * visited: they are not computed at all.
 *
 * When Lk is below the stream_from parameter, bk is all of Lk: one key tile,
 * the plain score-matrix path (a bq × Lk block) with no rescaling — faster
 * for short sequences. The results do not depend on the thread count: a row
 * is computed by one thread, over the same key tiles, whatever the split.
 */
#include <math.h>
#include <omp.h>

#include "../vmath.h"
#include "simd_kernel.h"

static inline size_t sdpa_round16(size_t n)
{
    return (n + 15) / 16 * 16;
}

/* The key tile: bk rounded to whole NR panels, or all of Lk (rounded) when
 * not streaming. */
static int SIMD_NAME(sdpa_key_tile)(const attn_sdpa_problem *p, const int *params)
{
    int all = (p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    if (p->kv_len < params[SK_STREAM_FROM])
        return all;
    int bk = params[SK_BK] / GEMM_NR * GEMM_NR;
    bk = bk > 0 ? bk : GEMM_NR;
    return bk < all ? bk : all;
}

static int SIMD_NAME(sdpa_query_tile)(const int *params)
{
    int bq = params[SK_BQ] / GEMM_MR * GEMM_MR;
    return bq > 0 ? bq : GEMM_MR;
}

/* One thread's buffers, in floats, each start 64-byte aligned. */
typedef struct sdpa_layout {
    size_t kpack, vpack, qpack, s, ppack, m, l, total;
} sdpa_layout;

/* 0 when a size overflows. */
static int SIMD_NAME(sdpa_layout_of)(const attn_sdpa_problem *p, const int *params, sdpa_layout *L)
{
    size_t lk = (size_t)(p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    size_t dh = (size_t)p->head_dim, dh_pad = (dh + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    size_t bq = (size_t)SIMD_NAME(sdpa_query_tile)(params);
    size_t bk = (size_t)SIMD_NAME(sdpa_key_tile)(p, params);
    size_t sizes[7] = { lk, dh_pad, bq, bq, bq, bq, bq };
    const size_t by[7] = { dh, lk, dh, bk, bk, 1, 1 };
    size_t off = 0, *fields[7] = { &L->kpack, &L->vpack, &L->qpack, &L->s, &L->ppack, &L->m, &L->l };
    for (int i = 0; i < 7; i++) {
        if (!attn_mul_checked(&sizes[i], by[i], SIZE_MAX / 8))
            return 0;
        *fields[i] = off;
        off += sdpa_round16(sizes[i]);
    }
    L->total = off;
    return 1;
}

/* ---- Decoding: a few query rows against many keys --------------------------------------
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
 * merge goes in split order, so the result does not depend on the threads. */
#define SDPA_DECODE_KEYS 64
#define SDPA_DECODE_SPLIT 512

static float SIMD_NAME(sdpa_online_row)(float *s, int kb, int n_vis, float *m, float *l);
static inline void SIMD_NAME(sdpa_scale_row)(float *o, int n, float f);

/* Query rows of one key/value head when the decode path runs, else 0. */
static int SIMD_NAME(sdpa_decode_rows)(const attn_sdpa_problem *p, const int *params)
{
    long rows = (long)p->q_len * (p->n_heads / attn_kv_heads(p));
    return rows <= params[SK_DECODE_ROWS] ? (int)rows : 0;
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

static inline float SIMD_NAME(sdpa_dot)(const float *a, const float *b, int n)
{
    vf acc0 = vf_zero(), acc1 = vf_zero();
    int j = 0;
    for (; j + 2 * SIMD_LANES <= n; j += 2 * SIMD_LANES) {
        acc0 = vf_fmadd(vf_load(a + j), vf_load(b + j), acc0);
        acc1 = vf_fmadd(vf_load(a + j + SIMD_LANES), vf_load(b + j + SIMD_LANES), acc1);
    }
    for (; j + SIMD_LANES <= n; j += SIMD_LANES)
        acc0 = vf_fmadd(vf_load(a + j), vf_load(b + j), acc0);
    if (j < n)
        acc1 = vf_fmadd(vf_load_n(a + j, n - j), vf_load_n(b + j, n - j), acc1);
    return vf_reduce_add(vf_add(acc0, acc1));
}

/* Asks for the cache lines of one K or V row of dh floats, into L2
 * (locality 2: prefetcht1 on x86; the measurements are in params.c). */
static inline void SIMD_NAME(sdpa_prefetch_row)(const float *row, int dh)
{
    for (int j = 0; j < dh; j += 64 / (int)sizeof(float))
        __builtin_prefetch(row + j, 0, 2);
}

/* Row r of a key/value head's tile: query row r % Lq of its (r / Lq)-th head. */
static void SIMD_NAME(sdpa_decode_task)(const attn_sdpa_problem *p, const sdpa_decode_plan *d,
                                        float *buf, float *part, int b, int kvh, int split,
                                        int ahead)
{
    const int dh = p->head_dim, lq = p->q_len, rows = d->rows;
    const int group = p->n_heads / attn_kv_heads(p);
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
    const float *K = p->k + b * p->k_st.batch + kvh * p->k_st.head;
    const float *V = p->v + b * p->v_st.batch + kvh * p->v_st.head;
    const int k_begin = split * SDPA_DECODE_SPLIT;
    const int k_end = k_begin + SDPA_DECODE_SPLIT < d->keys ? k_begin + SDPA_DECODE_SPLIT : d->keys;
    for (int k0 = k_begin; k0 < k_end; k0 += SDPA_DECODE_KEYS) {
        const int kb = k_end - k0 < SDPA_DECODE_KEYS ? k_end - k0 : SDPA_DECODE_KEYS;
        for (int jj = 0; jj < kb; jj++) {
            const float *krow = K + (size_t)(k0 + jj) * p->k_st.row;
            if (ahead && k0 + jj + ahead < k_end)
                SIMD_NAME(sdpa_prefetch_row)(krow + (size_t)ahead * p->k_st.row, dh);
            for (int r = 0; r < rows; r++)
                s[(size_t)r * SDPA_DECODE_KEYS + jj] =
                    SIMD_NAME(sdpa_dot)(qs + (size_t)r * dh, krow, dh);
        }
        for (int r = 0; r < rows; r++) {
            float *row = s + (size_t)r * SDPA_DECODE_KEYS;
            int n_vis = attn_mask_visible_keys(p->mask, r % lq, lq, p->kv_len) - k0;
            n_vis = n_vis < 0 ? 0 : n_vis > kb ? kb : n_vis;
            if (p->mask)
                attn_rows_mask(p->mask, b, r % lq, lq, p->kv_len, k0, row, n_vis);
            float alpha = SIMD_NAME(sdpa_online_row)(row, kb, n_vis, &m[r], &l[r]);
            if (alpha != 1.0f)
                SIMD_NAME(sdpa_scale_row)(o + (size_t)r * dh, dh, alpha);
        }
        for (int jj = 0; jj < kb; jj++) {
            const float *vrow = V + (size_t)(k0 + jj) * p->v_st.row;
            if (ahead && k0 + jj + ahead < k_end)
                SIMD_NAME(sdpa_prefetch_row)(vrow + (size_t)ahead * p->v_st.row, dh);
            /* No skip of P = 0: 0·NaN and 0·Inf must give NaN as in the
             * oracle's unmasked keys (compose.c then reruns the oracle). */
            for (int r = 0; r < rows; r++)
                SIMD_NAME(sdpa_axpy)(o + (size_t)r * dh, vrow,
                                     s[(size_t)r * SDPA_DECODE_KEYS + jj], dh);
        }
    }
}

static void SIMD_NAME(sdpa_decode)(const attn_exec *ex, const attn_sdpa_problem *p, int rows)
{
    sdpa_decode_plan d;
    SIMD_NAME(sdpa_decode_plan_of)(p, rows, ex->n_threads, &d);   /* checked when sizing */
    float *scratch = ex->scratch, *parts = scratch + d.parts;
    const int hkv = attn_kv_heads(p), dh = p->head_dim, lq = p->q_len;

#pragma omp parallel for num_threads(ex->n_threads) schedule(dynamic, 1)
    for (long t = 0; t < d.tasks; t++) {
        int split = (int)(t % d.splits), kvh = (int)(t / d.splits % hkv);
        int b = (int)(t / d.splits / hkv);
        SIMD_NAME(sdpa_decode_task)(p, &d, scratch + (size_t)omp_get_thread_num() * d.per_thread,
                                    parts + (size_t)t * d.part, b, kvh, split,
                                    ex->params[SK_PREFETCH]);
    }

    /* The exact merge of the splits, in split order. */
    const long heads = (long)p->batch * hkv;
#pragma omp parallel for num_threads(ex->n_threads) schedule(static)
    for (long bh = 0; bh < heads; bh++) {
        const int b = (int)(bh / hkv), kvh = (int)(bh % hkv), group = p->n_heads / hkv;
        const float *first = parts + (size_t)bh * d.splits * d.part;
        for (int r = 0; r < rows; r++) {
            const int h = kvh * group + r / lq, i = r % lq;
            float *out = p->out + b * p->out_st.batch + h * p->out_st.head
                       + (size_t)i * p->out_st.row;
            float mx = -INFINITY, sum = 0.0f;
            for (int sp = 0; sp < d.splits; sp++) {
                float ms = first[(size_t)sp * d.part + r];
                mx = ms != ms || mx != mx ? NAN : ms > mx ? ms : mx;   /* NaN wins */
            }
            for (int j = 0; j < dh; j++)
                out[j] = 0.0f;
            if (mx == -INFINITY)           /* every key masked: zeros (SPEC §1) */
                continue;
            for (int sp = 0; sp < d.splits; sp++) {
                const float *part = first + (size_t)sp * d.part;
                if (part[r] == -INFINITY)
                    continue;
                float f = attn_expf(part[r] - mx);
                sum += f * part[rows + r];
                SIMD_NAME(sdpa_axpy)(out, part + 2 * rows + (size_t)r * dh, f, dh);
            }
            SIMD_NAME(sdpa_scale_row)(out, dh, 1.0f / sum);
        }
    }
}

static size_t SIMD_NAME(attn_sdpa_scratch)(const attn_sdpa_problem *p, int n_threads, const int *params)
{
    int rows = SIMD_NAME(sdpa_decode_rows)(p, params);
    if (rows > 0) {
        sdpa_decode_plan d;
        return SIMD_NAME(sdpa_decode_plan_of)(p, rows, n_threads, &d) ? d.total * sizeof(float)
                                                                       : SIZE_MAX;
    }
    sdpa_layout L;
    size_t bytes = sizeof(float);
    if (!SIMD_NAME(sdpa_layout_of)(p, params, &L) || !attn_mul_checked(&bytes, L.total, SIZE_MAX)
        || !attn_mul_checked(&bytes, (size_t)n_threads, SIZE_MAX))
        return SIZE_MAX;
    return bytes;
}

/* Online-softmax step of one query row over a key tile: s[0..kb) scores, of
 * which the first n_vis are causally visible. Turns s into P, updates the
 * row's max m and sum l, and returns α, the factor the row's accumulated
 * output must be multiplied by (1 when nothing changes). Works on whole
 * vectors: s[n_vis..) up to the next multiple of the vector width (within
 * the row's bk floats) is set to −inf first, so those lanes give P = 0. */
static float SIMD_NAME(sdpa_online_row)(float *s, int kb, int n_vis, float *m, float *l)
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
     * dropped, the lane's e^(NaN − m) is NaN and so is l. Kept, mx is NaN
     * and m becomes NaN for good (NaN compares false: m_new = *m would
     * drop it, or take the "all masked" exit when *m is −inf). */
    float m_new = mx != mx ? mx : mx > *m ? mx : *m;
    if (m_new == -INFINITY) {           /* every key so far masked: P = 0 */
        for (int j = 0; j < kv; j += SIMD_LANES)
            vf_store(s + j, vf_zero());
        return 1.0f;
    }
    /* m = −inf (first visible tile) → 0; an unchanged max (most tiles after
     * the first few) skips the scalar exp, a dependency chain per row. */
    float alpha = m_new == *m ? 1.0f : attn_expf(*m - m_new);
    const vf vm = vf_set1(m_new);
    vf vsum = vf_zero();
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

/* Query rows [q0, q0+rows) of head (b, h), K and V already packed. */
static void SIMD_NAME(sdpa_query_tile_run)(const attn_sdpa_problem *p, const int *params,
                                           const sdpa_layout *L, float *buf, int b, int h, int q0,
                                           int rows)
{
    const blk_arch *arch = &SIMD_NAME(blk_arch);
    const int dh = p->head_dim, lk_pad = (p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    const int bk = SIMD_NAME(sdpa_key_tile)(p, params);
    float *kpack = buf + L->kpack, *vpack = buf + L->vpack, *qpack = buf + L->qpack;
    float *s = buf + L->s, *ppack = buf + L->ppack, *m = buf + L->m, *l = buf + L->l;
    float *out = p->out + b * p->out_st.batch + h * p->out_st.head + (size_t)q0 * p->out_st.row;
    const size_t ldo = p->out_st.row;

    blk_gemm qg = { .a = p->q + b * p->q_st.batch + h * p->q_st.head + (size_t)q0 * p->q_st.row,
                    .lda = p->q_st.row, .alpha = p->scale };
    arch->pack_a(&qg, 0, rows, 0, dh, qpack);
    for (int i = 0; i < rows; i++) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
    }
    const int keys = attn_mask_visible_keys(p->mask, q0 + rows - 1, p->q_len, p->kv_len);
    for (int k0 = 0; k0 < keys; k0 += bk) {
        const int kb = keys - k0 < bk ? keys - k0 : bk;
        for (int ir = 0; ir < rows; ir += GEMM_MR)
            for (int jr = 0; jr < kb; jr += GEMM_NR)
                arch->kernel(dh, qpack + (size_t)ir * dh, kpack + (size_t)(k0 + jr) * dh,
                             s + (size_t)ir * bk + jr, (size_t)bk, gemm_min(GEMM_MR, rows - ir),
                             gemm_min(GEMM_NR, kb - jr), 1);
        for (int i = 0; i < rows; i++) {
            float *row = s + (size_t)i * bk;
            int n_vis = attn_mask_visible_keys(p->mask, q0 + i, p->q_len, p->kv_len) - k0;
            n_vis = n_vis < 0 ? 0 : n_vis > kb ? kb : n_vis;
            if (p->mask)
                attn_rows_mask(p->mask, b, q0 + i, p->q_len, p->kv_len, k0, row, n_vis);
            float alpha = SIMD_NAME(sdpa_online_row)(row, kb, n_vis, &m[i], &l[i]);
            if (k0 > 0 && alpha != 1.0f)
                SIMD_NAME(sdpa_scale_row)(out + (size_t)i * ldo, dh, alpha);
        }
#if defined(SIMD_TARGET_NEON)
        /* NEON's micro-kernel takes A by lane from packed vectors. */
        blk_gemm pg = { .a = s, .lda = (size_t)bk, .alpha = 1.0f };
        arch->pack_a(&pg, 0, rows, 0, kb, ppack);
#define SDPA_P(ir) ppack + (size_t)(ir) * kb
#define SDPA_PV_KERNEL(ir, ...) arch->kernel(kb, SDPA_P(ir), __VA_ARGS__)
#else
        (void)ppack;   /* P is read in place, row by row */
#define SDPA_PV_KERNEL(ir, ...) \
    SIMD_NAME(gemm_kernel_rows)(kb, s + (size_t)(ir) * bk, (size_t)bk, __VA_ARGS__)
#endif
        for (int ir = 0; ir < rows; ir += GEMM_MR)
            for (int jc = 0; jc < dh; jc += GEMM_NR)
                SDPA_PV_KERNEL(ir, vpack + (size_t)jc * lk_pad + (size_t)k0 * GEMM_NR,
                               out + (size_t)ir * ldo + jc, ldo, gemm_min(GEMM_MR, rows - ir),
                               gemm_min(GEMM_NR, dh - jc), k0 == 0);
    }
    for (int i = 0; i < rows; i++) {
        float *o = out + (size_t)i * ldo;
        if (l[i] != 0.0f)                /* > 0, or NaN: the row stays NaN */
            SIMD_NAME(sdpa_scale_row)(o, dh, 1.0f / l[i]);
        else                             /* every key masked: zeros (SPEC §1) */
            for (int j = 0; j < dh; j++)
                o[j] = 0.0f;
    }
}

static void SIMD_NAME(attn_sdpa)(const attn_exec *ex, const attn_sdpa_problem *p)
{
    int decode_rows = SIMD_NAME(sdpa_decode_rows)(p, ex->params);
    if (decode_rows > 0) {
        SIMD_NAME(sdpa_decode)(ex, p, decode_rows);
        return;
    }
    const blk_arch *arch = &SIMD_NAME(blk_arch);
    const int bq = SIMD_NAME(sdpa_query_tile)(ex->params);
    const int q_tiles = (p->q_len + bq - 1) / bq;
    const long heads = (long)p->batch * p->n_heads;
    /* Each task packs K and V of its head once, then runs a run of query
     * tiles: whole heads when there are enough of them, else each head cut
     * into about 2 chunks per thread. */
    long want = 2L * ex->n_threads;
    int chunks = heads >= want ? 1 : (int)((want + heads - 1) / heads);
    chunks = chunks < q_tiles ? chunks : q_tiles;
    const long tasks = heads * chunks;
    sdpa_layout L;
    SIMD_NAME(sdpa_layout_of)(p, ex->params, &L);   /* checked when sizing the scratch */

#pragma omp parallel for num_threads(ex->n_threads) schedule(dynamic, 1)
    for (long t = 0; t < tasks; t++) {
        int b = (int)(t / chunks / p->n_heads), h = (int)(t / chunks % p->n_heads);
        int c = (int)(t % chunks);
        int t0 = (int)((long)q_tiles * c / chunks), t1 = (int)((long)q_tiles * (c + 1) / chunks);
        int q_end = t1 * bq < p->q_len ? t1 * bq : p->q_len;
        float *buf = (float *)ex->scratch + (size_t)omp_get_thread_num() * L.total;
        /* Only the keys the chunk's last row can see are packed. */
        int keys = attn_mask_visible_keys(p->mask, q_end - 1, p->q_len, p->kv_len);
        const int kvh = attn_kv_head(p, h);
        blk_gemm kg = { .b = p->k + b * p->k_st.batch + kvh * p->k_st.head, .ldb = p->k_st.row,
                        .b_is_nk = 1 };
        blk_gemm vg = { .b = p->v + b * p->v_st.batch + kvh * p->v_st.head, .ldb = p->v_st.row,
                        .b_is_nk = 0 };
        const int lk_pad = (p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
        arch->pack_b(&kg, 0, keys, 0, p->head_dim, buf + L.kpack);
        for (int jc = 0; jc < p->head_dim; jc += GEMM_NR)
            arch->pack_b(&vg, jc, gemm_min(GEMM_NR, p->head_dim - jc), 0, keys,
                         buf + L.vpack + (size_t)jc * lk_pad);
        for (int qt = t0; qt < t1; qt++) {
            int q0 = qt * bq, rows = p->q_len - q0 < bq ? p->q_len - q0 : bq;
            SIMD_NAME(sdpa_query_tile_run)(p, ex->params, &L, buf, b, h, q0, rows);
        }
    }
}
