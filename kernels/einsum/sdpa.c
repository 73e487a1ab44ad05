/*
 * sdpa.c — scaled dot-product attention of the einsum kernels, shared by
 * every variant: the variant (einsum.h) says the layouts and the subscripts
 * and loop order of the two contractions
 *
 *   scores  S = scale · einsum(Q, K)      e.g. "nqhd,nkhd->nhqk"
 *   output  O = einsum(softmax(S), V)     e.g. "nhqk,nkhd->nqhd"
 *
 * Between them, each score row is masked (attn_rows_mask) and softmaxed
 * (attn_rows_softmax, which also applies the all-masked → zeros rule).
 *
 * The whole score tensor [B][H][Lq][Lk] can be far too large to hold (seed
 * 003 materializes it), so the problem is cut into chunks — a box of nc
 * batches × hc heads × qc query rows — and both einsums run on one chunk at
 * a time, with the same subscripts: a chunk is the same contraction with
 * smaller extents and moved base pointers. The score buffer holds one chunk.
 *   - qc is chosen from a budget of score floats per (batch, head) that
 *     keeps a head's block of scores in a core's L2 next to its K block; it
 *     does not depend on the thread count, so neither does any arithmetic.
 *   - nc·hc is about the thread count: the engine shares out the leading
 *     output loops of an order, which for an order that starts with a
 *     reduction inside (b, h) — einsum-bhdqk — are only b and h.
 *   - With a causal mask, keys past the chunk's last row are never visible,
 *     so both contractions run over the first kc = min(Lk, q0 + qc) keys.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "einsum.h"
#include "../rows.h"

/* Score floats per (batch, head) in one chunk: 256 KiB, a quarter of a
 * typical L2 (the K block and the Q rows share the rest). */
#define EIN_SCORE_FLOATS 65536

/* Roles of the subscript letters. */
enum { R_B, R_H, R_Q, R_K, R_D, R_COUNT };

static int role_of(char c)
{
    switch (c) {
    case 'n':
    case 'b':
        return R_B;
    case 'h':
        return R_H;
    case 'q':
        return R_Q;
    case 'k':
        return R_K;
    default:
        return R_D;     /* 'd': the variants use no other letter */
    }
}

/* The letters of operand which (0: first input, 1: second, 2: output) of
 * subscripts "ab,cd->ef". */
static void operand_letters(const char *subs, int which, char *out)
{
    for (int w = 0; w < which; w++)
        subs += strcspn(subs, ",>") + 1;
    size_t n = strcspn(subs, ",-");
    if (n > EIN_MAX_INDICES)
        n = EIN_MAX_INDICES;
    memcpy(out, subs, n);
    out[n] = '\0';
}

/* The view of a tensor whose role r has extent ext[r] and stride st[r]. */
static ein_view view_of(const char *subs, int which, const ptrdiff_t *ext, const ptrdiff_t *st)
{
    char letters[EIN_MAX_INDICES + 1];
    ein_view v;
    memset(&v, 0, sizeof v);
    operand_letters(subs, which, letters);
    for (int i = 0; letters[i]; i++) {
        int r = role_of(letters[i]);
        v.shape[i] = ext[r];
        v.stride[i] = st[r];
    }
    return v;
}

static ptrdiff_t offset_of(const ptrdiff_t *st, ptrdiff_t b, ptrdiff_t h, ptrdiff_t q,
                           ptrdiff_t k)
{
    return b * st[R_B] + h * st[R_H] + q * st[R_Q] + k * st[R_K];
}

/* ---- Scratch layout (one function for sizing and running) ------------------------- */

typedef struct sdpa_layout {
    int nc, hc, qc;                    /* chunk box */
    size_t s, q, k, v, o;              /* byte offsets of the buffers in scratch */
    size_t end;                        /* bytes in all; SIZE_MAX on overflow */
} sdpa_layout;

#define LIMIT ((size_t)PTRDIFF_MAX)

/* Reserves n1·n2·n3·n4 floats at the next 64-byte boundary of *end. */
static size_t reserve(size_t *end, size_t n1, size_t n2, size_t n3, size_t n4)
{
    size_t bytes = sizeof(float), off = *end;
    if (off == SIZE_MAX || !attn_mul_checked(&bytes, n1, LIMIT)
        || !attn_mul_checked(&bytes, n2, LIMIT) || !attn_mul_checked(&bytes, n3, LIMIT)
        || !attn_mul_checked(&bytes, n4, LIMIT)
        || !attn_add_checked(&off, (64 - off % 64) % 64, LIMIT)) {
        *end = SIZE_MAX;
        return 0;
    }
    size_t after = off;
    if (!attn_add_checked(&after, bytes, LIMIT)) {
        *end = SIZE_MAX;
        return 0;
    }
    *end = after;
    return off;
}

static void plan_layout(const ein_sdpa_variant *v, const attn_sdpa_problem *p, int n_threads,
                        sdpa_layout *l)
{
    int t = n_threads > 0 ? n_threads : 1;
    l->hc = p->n_heads < t ? p->n_heads : t;
    /* Grouped heads: a chunk stays inside one group (its heads share one
     * key/value head, which the chunk's views then broadcast with a head
     * stride of 0), so hc divides the group size. */
    const int group = p->n_heads / attn_kv_heads(p);
    while (group > 1 && group % l->hc != 0)
        l->hc--;
    l->nc = 1;
    if (l->hc == p->n_heads) {
        int want = (t + p->n_heads - 1) / p->n_heads;
        l->nc = want < p->batch ? want : p->batch;
    }
    int qc = EIN_SCORE_FLOATS / p->kv_len;
    l->qc = qc < 1 ? 1 : (qc > p->q_len ? p->q_len : qc);

    size_t end = 0, b = (size_t)p->batch, h = (size_t)p->n_heads, dh = (size_t)p->head_dim;
    size_t hkv = (size_t)attn_kv_heads(p);
    size_t lq = (size_t)p->q_len, lk = (size_t)p->kv_len;
    l->s = reserve(&end, (size_t)l->nc, (size_t)l->hc, (size_t)l->qc, lk);
    l->q = l->k = l->v = l->o = 0;
    if (v->copy_bhld)
        l->q = reserve(&end, b, h, lq, dh);
    if (v->copy_bhld || v->k_transposed)
        l->k = reserve(&end, b, hkv, lk, dh);
    if (v->copy_bhld || v->v_transposed)
        l->v = reserve(&end, b, hkv, lk, dh);
    if (v->copy_bhld)
        l->o = reserve(&end, b, h, lq, dh);
    l->end = end;
}

size_t attn_sdpa_scratch__einsum(const attn_exec *ex, const attn_sdpa_problem *p)
{
    sdpa_layout l;
    plan_layout(&((const ein_kernel *)ex->data)->sdpa, p, ex->n_threads, &l);
    return l.end;
}

/* ---- Copies ------------------------------------------------------------------------ */

/* dst[b][h][j][d] (transposed: dst[b][h][d][j]) = src at st, j < len. */
static void copy_in(float *dst, const float *src, attn_strides st, int batch, int heads,
                    int len, int dh, int transposed, int threads)
{
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++) {
            const float *s = src + (size_t)b * st.batch + (size_t)h * st.head;
            float *d = dst + ((size_t)b * (size_t)heads + (size_t)h) * (size_t)len * (size_t)dh;
            for (int j = 0; j < len; j++) {
                const float *row = s + (size_t)j * st.row;
                if (transposed)
                    for (int e = 0; e < dh; e++)
                        d[(size_t)e * (size_t)len + (size_t)j] = row[e];
                else
                    memcpy(d + (size_t)j * (size_t)dh, row, (size_t)dh * sizeof(float));
            }
        }
}

static void copy_out(float *dst, attn_strides st, const float *src, int batch, int heads,
                     int len, int dh, int threads)
{
#pragma omp parallel for collapse(2) num_threads(threads) schedule(static)
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < heads; h++) {
            float *d = dst + (size_t)b * st.batch + (size_t)h * st.head;
            const float *s = src + ((size_t)b * (size_t)heads + (size_t)h) * (size_t)len
                                       * (size_t)dh;
            for (int j = 0; j < len; j++)
                memcpy(d + (size_t)j * st.row, s + (size_t)j * (size_t)dh,
                       (size_t)dh * sizeof(float));
        }
}

/* K or V copied to [B][Hkv][Lk][Dh] (transposed: [B][Hkv][Dh][Lk]); st gets
 * the copy's strides per role. Returns the copy. */
static const float *copy_kv(float *dst, const float *src, attn_strides src_st, int B, int Hkv,
                            int Lk, int Dh, int transposed, int threads, ptrdiff_t *st)
{
    copy_in(dst, src, src_st, B, Hkv, Lk, Dh, transposed, threads);
    const ptrdiff_t hk = (ptrdiff_t)Lk * Dh;
    st[R_B] = Hkv * hk;
    st[R_H] = hk;
    st[R_K] = transposed ? 1 : Dh;
    st[R_D] = transposed ? Lk : 1;
    return dst;
}

/* ---- SDPA ------------------------------------------------------------------------- */

void attn_sdpa__einsum(const attn_exec *ex, const attn_sdpa_problem *p)
{
    const ein_sdpa_variant *v = &((const ein_kernel *)ex->data)->sdpa;
    const int threads = ex->n_threads > 0 ? ex->n_threads : 1;
    const int B = p->batch, H = p->n_heads, Lq = p->q_len, Lk = p->kv_len, Dh = p->head_dim;
    const int Hkv = attn_kv_heads(p), group = H / Hkv;
    const attn_mask *mask = p->mask;
    sdpa_layout l;
    plan_layout(v, p, threads, &l);
    char *ws = ex->scratch;
    float *S = (float *)(ws + l.s);

    /* Strides of each tensor per role: the caller's views, or the copies. */
    const float *q = p->q, *k = p->k, *vv = p->v;
    float *o = p->out;
    ptrdiff_t qst[R_COUNT] = { (ptrdiff_t)p->q_st.batch, (ptrdiff_t)p->q_st.head,
                               (ptrdiff_t)p->q_st.row, 0, 1 };
    ptrdiff_t kst[R_COUNT] = { (ptrdiff_t)p->k_st.batch, (ptrdiff_t)p->k_st.head, 0,
                               (ptrdiff_t)p->k_st.row, 1 };
    ptrdiff_t vst[R_COUNT] = { (ptrdiff_t)p->v_st.batch, (ptrdiff_t)p->v_st.head, 0,
                               (ptrdiff_t)p->v_st.row, 1 };
    ptrdiff_t ost[R_COUNT] = { (ptrdiff_t)p->out_st.batch, (ptrdiff_t)p->out_st.head,
                               (ptrdiff_t)p->out_st.row, 0, 1 };
    const ptrdiff_t hq = (ptrdiff_t)Lq * Dh;
    if (v->copy_bhld) {
        float *qc = (float *)(ws + l.q), *oc = (float *)(ws + l.o);
        copy_in(qc, p->q, p->q_st, B, H, Lq, Dh, 0, threads);
        q = qc;
        o = oc;
        qst[R_B] = ost[R_B] = H * hq;
        qst[R_H] = ost[R_H] = hq;
        qst[R_Q] = ost[R_Q] = Dh;
    }
    if (v->copy_bhld || v->k_transposed)
        k = copy_kv((float *)(ws + l.k), p->k, p->k_st, B, Hkv, Lk, Dh, v->k_transposed,
                    threads, kst);
    if (v->copy_bhld || v->v_transposed)
        vv = copy_kv((float *)(ws + l.v), p->v, p->v_st, B, Hkv, Lk, Dh, v->v_transposed,
                     threads, vst);
    /* Key/value heads are stepped by kv head: a chunk's base pointer moves to
     * the kv head of its first head; inside a chunk of a group (grouped-query
     * attention) every head reads that same one, a head stride of 0. */
    const ptrdiff_t k_head = kst[R_H], v_head = vst[R_H];
    if (group > 1)
        kst[R_H] = vst[R_H] = 0;
    /* The score chunk: [nc][hc][qc][Lk], rows of stride Lk. */
    const ptrdiff_t sst[R_COUNT] = { (ptrdiff_t)l.hc * l.qc * Lk, (ptrdiff_t)l.qc * Lk, Lk, 1, 0 };

    for (int n0 = 0; n0 < B; n0 += l.nc)
    for (int h0 = 0; h0 < H; h0 += l.hc)
    for (int q0 = 0; q0 < Lq; q0 += l.qc) {
        const int nn = B - n0 < l.nc ? B - n0 : l.nc;
        const int hh = H - h0 < l.hc ? H - h0 : l.hc;
        const int qq = Lq - q0 < l.qc ? Lq - q0 : l.qc;
        /* Keys past the chunk's last visible one are never read; at least
         * one, so that a chunk of rows that see none (bottom-right, Lq > Lk)
         * is a chunk of fully masked rows: zeros. */
        const int last = attn_mask_visible_keys(mask, q0 + qq - 1, Lq, Lk);
        const int kc = last > 0 ? last : 1;
        const ptrdiff_t kv_off = (ptrdiff_t)(h0 / group) * k_head - (ptrdiff_t)h0 * kst[R_H];
        const ptrdiff_t vv_off = (ptrdiff_t)(h0 / group) * v_head - (ptrdiff_t)h0 * vst[R_H];
        const ptrdiff_t ext[R_COUNT] = { nn, hh, qq, kc, Dh };
        const long rows = (long)nn * hh * qq;

        /* Scores accumulate into S: start from zero. */
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long r = 0; r < rows; r++)
            memset(S + r / ((long)hh * qq) * sst[R_B] + r / qq % hh * sst[R_H]
                       + r % qq * sst[R_Q],
                   0, (size_t)kc * sizeof(float));

        ein_plan plan;
        ein_view va = view_of(v->scores, 0, ext, qst), vb = view_of(v->scores, 1, ext, kst);
        ein_view vo = view_of(v->scores, 2, ext, sst);
        /* Fixed, valid specs: cannot fail (tests/test_einsum.c checks them). */
        if (ein_plan_init(&plan, v->scores, v->scores_order, &va, &vb, &vo) != EIN_OK)
            return;
        ein_plan_run(&plan, p->scale, q + offset_of(qst, n0, h0, q0, 0),
                     k + offset_of(kst, n0, h0, 0, 0) + kv_off, S, threads);

        /* Each row: causal cut, mask, softmax; and its output row zeroed for
         * the PV einsum to accumulate into. */
#pragma omp parallel for num_threads(threads) schedule(static)
        for (long r = 0; r < rows; r++) {
            int n = (int)(r / ((long)hh * qq)), h = (int)(r / qq % hh), i = (int)(r % qq);
            float *s = S + n * sst[R_B] + h * sst[R_H] + i * sst[R_Q];
            int vis = attn_mask_visible_keys(mask, q0 + i, Lq, Lk);
            vis = vis < kc ? vis : kc;
            for (int j = vis; j < kc; j++)
                s[j] = -INFINITY;
            attn_rows_mask(mask, n0 + n, q0 + i, Lq, Lk, 0, s, vis);
            attn_rows_softmax(s, kc);
            memset(o + offset_of(ost, n0 + n, h0 + h, q0 + i, 0), 0, (size_t)Dh * sizeof(float));
        }

        va = view_of(v->pv, 0, ext, sst);
        vb = view_of(v->pv, 1, ext, vst);
        vo = view_of(v->pv, 2, ext, ost);
        if (ein_plan_init(&plan, v->pv, v->pv_order, &va, &vb, &vo) != EIN_OK)
            return;
        ein_plan_run(&plan, 1.0f, S, vv + offset_of(vst, n0, h0, 0, 0) + vv_off,
                     o + offset_of(ost, n0, h0, q0, 0), threads);
    }

    if (v->copy_bhld)
        copy_out(p->out, p->out_st, o, B, H, Lq, Dh, threads);
}
