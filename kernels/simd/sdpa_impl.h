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
 *
 * A decoding step — few query rows per key/value head — takes the decode
 * path instead (frame/decode_impl.h, shared with the tiled attention).
 */
#include "../frame/decode_impl.h"
#include "simd_kernel.h"

/* What an arch other than gemm_impl.h's may change (avx512-bf16's, whose
 * panels hold bf16 pairs): SDPA_PACKS_P, 1 to pack P with the arch's
 * pack_a before P·V instead of reading it in place; SDPA_P_STORE (see
 * frame/decode_impl.h) and SDPA_P_ROW(ppack, kb, i), where row i of the
 * packed P starts, to have the softmax write P packed; GEMM_DEPTH_SLOTS(k),
 * the slots of a B panel that depth k takes (k/2 for pairs). */
#ifndef SDPA_PACKS_P
#define SDPA_PACKS_P SIMD_A_BY_LANE
#endif
#ifndef GEMM_DEPTH_SLOTS
#define GEMM_DEPTH_SLOTS(k) (k)
#endif

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

/* The row stride of the score tile S: bk, plus one cache line when bk is a
 * multiple of 512 floats. The micro-kernel writes (and P·V reads) MR rows
 * of S at once; at a stride of 2 KiB or a multiple of 4 KiB those rows
 * fall into a few sets of L1 (64 sets of 64 B: 4 KiB apart repeat a set),
 * 12 rows into 8 ways. Non-streaming tiles of Lk 1024 hit it: avx512 on a
 * Zen 4, H 12, Dh 64, 1 thread, 40.1 / 41.7 ms against 35–36.6 streamed
 * (L 768: no such loss). */
static size_t sdpa_score_stride(int bk)
{
    return (size_t)bk + (bk % 512 == 0 ? 16 : 0);
}

static int SIMD_NAME(sdpa_query_tile)(const int *params)
{
    int bq = params[SK_BQ] / GEMM_MR * GEMM_MR;
    return bq > 0 ? bq : GEMM_MR;
}

/* One thread's buffers, in floats, each start 64-byte aligned; kwide and
 * vwide (Lk × Dh each, none when both are fp32): the head's keys and values
 * widened from their storage type before they are packed. */
typedef struct sdpa_layout {
    size_t kpack, vpack, qpack, s, ppack, m, l, kwide, vwide, total;
} sdpa_layout;

/* 0 when a size overflows. */
static int SIMD_NAME(sdpa_layout_of)(const attn_sdpa_problem *p, const int *params, sdpa_layout *L)
{
    size_t lk = (size_t)(p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    size_t dh = (size_t)p->head_dim, dh_pad = (dh + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    size_t bq = (size_t)SIMD_NAME(sdpa_query_tile)(params);
    size_t bk = (size_t)SIMD_NAME(sdpa_key_tile)(p, params);
    size_t wide = attn_kv_f32(p) ? 0 : (size_t)p->kv_len;
    size_t sizes[9] = { lk, dh_pad, bq, bq, bq, bq, bq, wide, wide };
    const size_t by[9] = { dh, lk, dh, sdpa_score_stride((int)bk), bk, 1, 1, dh, dh };
    size_t off = 0, *fields[9] = { &L->kpack, &L->vpack, &L->qpack, &L->s, &L->ppack, &L->m, &L->l,
                                   &L->kwide, &L->vwide };
    for (int i = 0; i < 9; i++) {
        if (!attn_mul_checked(&sizes[i], by[i], SIZE_MAX / 8))
            return 0;
        *fields[i] = off;
        off += sdpa_round16(sizes[i]);
    }
    L->total = off;
    return 1;
}

static size_t SIMD_NAME(attn_sdpa_scratch)(const attn_exec *ex, const attn_sdpa_problem *p)
{
    const int n_threads = attn_exec_scratch_threads(ex), *params = ex->params;
    int rows = SIMD_NAME(sdpa_decode_rows)(p, params[SK_DECODE_ROWS]);
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

/* Query rows [q0, q0+rows) of head (b, h), K and V already packed. */
static void SIMD_NAME(sdpa_query_tile_run)(const attn_sdpa_problem *p, const int *params,
                                           const sdpa_layout *L, float *buf, int b, int h, int q0,
                                           int rows)
{
    const blk_arch *arch = &SIMD_NAME(blk_arch);
    const int dh = p->head_dim, lk_pad = (p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
    const int bk = SIMD_NAME(sdpa_key_tile)(p, params);
    const size_t lds = sdpa_score_stride(bk);
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
                             s + (size_t)ir * lds + jr, lds, gemm_min(GEMM_MR, rows - ir),
                             gemm_min(GEMM_NR, kb - jr), 1);
        for (int i = 0; i < rows; i++) {
            float *row = s + (size_t)i * lds;
            int n_vis = attn_mask_visible_keys(p->mask, q0 + i, p->q_len, p->kv_len) - k0;
            n_vis = n_vis < 0 ? 0 : n_vis > kb ? kb : n_vis;
            if (p->mask)
                attn_rows_mask(p->mask, b, q0 + i, p->q_len, p->kv_len, k0, row, n_vis);
#ifdef SDPA_P_STORE
            uint16_t *p16 = SDPA_P_ROW(ppack, kb, i);
#else
            uint16_t *p16 = NULL;
#endif
            float alpha = SIMD_NAME(sdpa_online_row)(row, kb, n_vis, &m[i], &l[i], p16);
            if (k0 > 0 && alpha != 1.0f)
                SIMD_NAME(sdpa_scale_row)(out + (size_t)i * ldo, dh, alpha);
        }
#if SDPA_PACKS_P
        /* The micro-kernel takes A by lane from packed vectors, or in bf16
         * pairs: P is packed — by the softmax itself where the arch says
         * how (SDPA_P_STORE; the last panel's rows past the tile zeroed
         * here), else here from s. */
#ifdef SDPA_P_STORE
        for (int i = rows; i % GEMM_MR != 0; i++)
            memset(SDPA_P_ROW(ppack, kb, i), 0, (size_t)(kb + 1) / 2 * sizeof(uint32_t));
#else
        blk_gemm pg = { .a = s, .lda = lds, .alpha = 1.0f };
        arch->pack_a(&pg, 0, rows, 0, kb, ppack);
#endif
#define SDPA_P(ir) ppack + (size_t)(ir) * kb
#define SDPA_PV_KERNEL(ir, ...) arch->kernel(kb, SDPA_P(ir), __VA_ARGS__)
#else
        (void)ppack;   /* P is read in place, row by row */
#define SDPA_PV_KERNEL(ir, ...) \
    SIMD_NAME(gemm_kernel_rows)(kb, s + (size_t)(ir) * lds, lds, __VA_ARGS__)
#endif
        for (int ir = 0; ir < rows; ir += GEMM_MR)
            for (int jc = 0; jc < dh; jc += GEMM_NR)
                SDPA_PV_KERNEL(ir, vpack + (size_t)jc * lk_pad + (size_t)GEMM_DEPTH_SLOTS(k0) * GEMM_NR,
                               out + (size_t)ir * ldo + jc, ldo, gemm_min(GEMM_MR, rows - ir),
                               gemm_min(GEMM_NR, dh - jc), k0 == 0);
    }
    for (int i = 0; i < rows; i++) {
        float *o = out + (size_t)i * ldo;
        if (l[i] != 0.0f)                /* > 0, or NaN: the row stays NaN */
            SIMD_NAME(sdpa_scale_row)(o, dh, 1.0f / l[i]);
        else                             /* every key masked: zeros (api.md §1) */
            for (int j = 0; j < dh; j++)
                o[j] = 0.0f;
    }
}

static void SIMD_NAME(attn_sdpa)(const attn_exec *ex, const attn_sdpa_problem *p)
{
    int decode_rows = SIMD_NAME(sdpa_decode_rows)(p, ex->params[SK_DECODE_ROWS]);
    if (decode_rows > 0) {
        SIMD_NAME(sdpa_decode)(ex, p, decode_rows, ex->params[SK_PREFETCH],
                               ex->params[SK_ROW_PREFETCH]);
        return;
    }
    const blk_arch *arch = &SIMD_NAME(blk_arch);
    const int bq = SIMD_NAME(sdpa_query_tile)(ex->params);
    const long heads = (long)p->batch * p->n_heads;
    /* Each task packs K and V of its head once, then runs its chunk of the
     * head's query rows (whole register tiles of them) in bq-row tiles:
     * whole heads when there are enough, else cut as split.h says. */
    const attn_chunked work = attn_split_chunks(heads, (p->q_len + GEMM_MR - 1) / GEMM_MR,
                                                ex->n_threads);
    const long tasks = heads * work.chunks;
    /* The key path in the name too (stream_from, bk): explain says which
     * one a shape takes, and the tuner tells those parameters' values apart
     * by it (attn_param.traced). */
    const int key_tile = SIMD_NAME(sdpa_key_tile)(p, ex->params);
    const int streams = p->kv_len >= ex->params[SK_STREAM_FROM];
    if (attn_trace_region(ex, attn_chunked_share, &work, "query rows of a register tile",
                          "attention %dx%dx%dx%d (B, H, Lq, Lk), %d chunks per head of %d-row tiles, "
                          "%s%d%s", p->batch, p->n_heads, p->q_len, p->kv_len, work.chunks, bq,
                          streams ? "keys in tiles of " : "all ", streams ? key_tile : p->kv_len,
                          streams ? "" : " keys in one tile"))
        return;
    sdpa_layout L;
    SIMD_NAME(sdpa_layout_of)(p, ex->params, &L);   /* checked when sizing the scratch */
    attn_finite_scan *scan = ex->finite_scan;       /* each tile's rows, as written */
    if (scan)
        scan->done = 1;

    const int causal = p->mask && p->mask->causal;
#pragma omp parallel for num_threads(ex->n_threads) schedule(dynamic, 1)
    for (long i = 0; i < tasks; i++) {
        const long t = causal ? attn_task_longest_first(i, heads, work.chunks) : i;
        int b = (int)(t / work.chunks / p->n_heads), h = (int)(t / work.chunks % p->n_heads);
        long g0, g1;
        attn_chunk_parts(&work, t, &g0, &g1);
        int q_begin = (int)g0 * GEMM_MR, q_end = (int)g1 * GEMM_MR < p->q_len ? (int)g1 * GEMM_MR
                                                                             : p->q_len;
        if (q_begin >= q_end)
            continue;
        float *buf = (float *)ex->scratch + (size_t)omp_get_thread_num() * L.total;
        /* Only the keys the chunk's last row can see are packed. */
        int keys = attn_mask_visible_keys(p->mask, q_end - 1, p->q_len, p->kv_len);
        const int kvh = attn_kv_head(p, h);
        /* K and V in place, or (stored narrower) widened first: O(Lk·Dh)
         * once per task, against its O(Lq·Lk·Dh) products. */
        size_t ldk, ldv;
        blk_gemm kg = { .b = attn_kv_f32_rows(p, 0, b, kvh, keys, buf + L.kwide, &ldk), .ldb = ldk,
                        .b_is_nk = 1 };
        blk_gemm vg = { .b = attn_kv_f32_rows(p, 1, b, kvh, keys, buf + L.vwide, &ldv), .ldb = ldv,
                        .b_is_nk = 0 };
        const int lk_pad = (p->kv_len + GEMM_NR - 1) / GEMM_NR * GEMM_NR;
        arch->pack_b(&kg, 0, keys, 0, p->head_dim, buf + L.kpack);
        for (int jc = 0; jc < p->head_dim; jc += GEMM_NR)
            arch->pack_b(&vg, jc, gemm_min(GEMM_NR, p->head_dim - jc), 0, keys,
                         buf + L.vpack + (size_t)jc * lk_pad);
        for (int q0 = q_begin; q0 < q_end; q0 += bq) {
            int rows = q_end - q0 < bq ? q_end - q0 : bq;
            SIMD_NAME(sdpa_query_tile_run)(p, ex->params, &L, buf, b, h, q0, rows);
            if (scan)
                attn_sdpa_scan_tile(scan, p, b, h, q0, rows);
        }
    }
}
