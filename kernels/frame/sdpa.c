/*
 * sdpa.c — the tiled attention (sdpa.h), with the products of a kernel's
 * plan: for each (batch, head, block of bq query rows), S = (scale·Q)·Kᵀ
 * over the keys the block can see, masked row softmax in place, then
 * O = P·V, on the thread's own buffers. The scale is folded into Q while it
 * is packed, and a causal block stops at the last key its last row can see.
 *
 * S is bq × Lk floats per thread: bq is chosen so that it stays in L2 for
 * common lengths. (The streaming "flash" kernels avoid S altogether.)
 *
 * A decoding step (at most decode_rows query rows per key/value head) takes
 * the decode path instead (decode_impl.h, the SIMD kernels' too), compiled
 * here for the portable vector target: K and V read once, in place, split
 * across threads.
 */
#include <omp.h>
#include <string.h>

#define SIMD_TARGET_PORTABLE 1   /* simd.h's GCC-vector target, for decode_impl.h */
#include "decode_impl.h"
#include "sdpa.h"
#include "../split.h"

/* Per thread: the score block (bq × Lk), then pack floats, then (keys or
 * values stored narrower) the head's widened to fp32, Lk × Dh each. */
static size_t thread_floats(const attn_sdpa_problem *p, int bq, size_t pack, size_t *s_floats,
                            size_t *wide_floats)
{
    size_t s = (size_t)bq * (size_t)p->kv_len;
    *s_floats = (s + 15) / 16 * 16;   /* keep the pack 64-byte aligned */
    *wide_floats = attn_kv_f32(p) ? 0 : ((size_t)p->kv_len * (size_t)p->head_dim + 15) / 16 * 16;
    return *s_floats + pack + 2 * *wide_floats;
}

size_t blk_sdpa_scratch(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp)
{
    int rows = sdpa_decode_rows__portable(p, sp->decode_rows);
    if (rows > 0) {
        sdpa_decode_plan d;
        return sdpa_decode_plan_of__portable(p, rows, attn_exec_scratch_threads(ex), &d)
                   ? d.total * sizeof(float)
                   : SIZE_MAX;
    }
    size_t s_floats, wide, bytes = sizeof(float);
    size_t floats = thread_floats(p, sp->bq, sp->pack_floats, &s_floats, &wide);
    if (!attn_mul_checked(&bytes, floats, SIZE_MAX)
        || !attn_mul_checked(&bytes, (size_t)attn_exec_scratch_threads(ex), SIZE_MAX))
        return SIZE_MAX;
    return bytes;
}

void blk_sdpa(const attn_exec *ex, const attn_sdpa_problem *p, const blk_sdpa_plan *sp)
{
    int decode_rows = sdpa_decode_rows__portable(p, sp->decode_rows);
    if (decode_rows > 0) {
        sdpa_decode__portable(ex, p, decode_rows, sp->prefetch, sp->row_prefetch);
        return;
    }
    const int bq = sp->bq, dh = p->head_dim;
    const int q_blocks = (p->q_len + bq - 1) / bq;
    const long tasks = (long)p->batch * p->n_heads * q_blocks;
    size_t s_floats, wide, per_thread = thread_floats(p, bq, sp->pack_floats, &s_floats, &wide);

    /* One task per block of bq rows, whatever the thread count: a library's
     * product (OpenBLAS, oneDNN) may sum differently with the rows it is
     * given, so the blocks stay where they are (the SIMD kernels' cut
     * heads finer). */
    if (attn_trace_units(ex, tasks, "bq query rows of a head",
                         "attention %dx%dx%dx%d (B, H, Lq, Lk), %d-row blocks", p->batch,
                         p->n_heads, p->q_len, p->kv_len, bq))
        return;
    attn_finite_scan *scan = ex->finite_scan;
    if (scan)
        scan->done = 1;
    /* Tasks differ in cost under a causal mask: hand them out dynamically,
     * the longest first. Which thread runs a task does not change its
     * result. */
    const int causal = p->mask && p->mask->causal;
    const long heads = (long)p->batch * p->n_heads;
#pragma omp parallel for num_threads(ex->n_threads) schedule(dynamic, 1)
    for (long next = 0; next < tasks; next++) {
        const long t = causal ? attn_task_longest_first(next, heads, q_blocks) : next;
        int b = (int)(t / ((long)p->n_heads * q_blocks));
        int h = (int)(t / q_blocks % p->n_heads);
        int q0 = (int)(t % q_blocks) * bq;
        int rows = p->q_len - q0 < bq ? p->q_len - q0 : bq;
        int keys = attn_mask_visible_keys(p->mask, q0 + rows - 1, p->q_len, p->kv_len);
        float *s = (float *)ex->scratch + (size_t)omp_get_thread_num() * per_thread;
        float *pack = s + s_floats;

        const float *q = p->q + b * p->q_st.batch + h * p->q_st.head + (size_t)q0 * p->q_st.row;
        const int kvh = attn_kv_head(p, h);
        float *out = p->out + b * p->out_st.batch + h * p->out_st.head + (size_t)q0 * p->out_st.row;
        if (keys == 0) {   /* bottom-right with Lq > Lk: these rows see no key */
            for (int i = 0; i < rows; i++)
                memset(out + (size_t)i * p->out_st.row, 0, (size_t)dh * sizeof(float));
            if (scan)
                attn_sdpa_scan_tile(scan, p, b, h, q0, rows);
            continue;
        }
        /* Keys or values stored narrower: the ones the block sees, widened
         * (O(keys·Dh) against the block's O(rows·keys·Dh) products). */
        size_t ldk, ldv;
        const float *k = attn_kv_f32_rows(p, 0, b, kvh, keys, pack + sp->pack_floats, &ldk);
        const float *v = attn_kv_f32_rows(p, 1, b, kvh, keys, pack + sp->pack_floats + wide, &ldv);

        blk_gemm qk = {
            .m = (size_t)rows, .n = keys, .k = dh, .a = q, .lda = p->q_st.row, .alpha = p->scale,
            .b = k, .ldb = ldk, .b_is_nk = 1, .c = s, .ldc = (size_t)keys,
            .act = ATTN_ACT_NONE,
        };
        sp->product(&qk, ex->params, pack);

        for (int i = 0; i < rows; i++) {
            float *row = s + (size_t)i * keys;
            int n = attn_mask_visible_keys(p->mask, q0 + i, p->q_len, p->kv_len);
            attn_rows_mask(p->mask, b, q0 + i, p->q_len, p->kv_len, 0, row, n);
            attn_rows_softmax(row, n);
            for (int j = n; j < keys; j++)   /* keys past the causal edge weigh 0 */
                row[j] = 0.0f;
        }

        blk_gemm pv = {
            .m = (size_t)rows, .n = dh, .k = keys, .a = s, .lda = (size_t)keys, .alpha = 1.0f,
            .b = v, .ldb = ldv, .b_is_nk = 0, .c = out, .ldc = p->out_st.row,
            .act = ATTN_ACT_NONE,
        };
        sp->product(&pv, ex->params, pack);
        if (scan)   /* the block's rows, as written (kernel.h attn_exec.finite_scan) */
            attn_sdpa_scan_tile(scan, p, b, h, q0, rows);
    }
}
