/*
 * compose.c — SDPA, MHA, the encoder and decoder layers, the encoder stack
 * and the embeddings, each written once in terms of a kernel's primitives
 * (gemm, sdpa, layernorm). A kernel that is faster at a
 * primitive makes every operation faster without copying this code.
 *
 * Workspace layout is computed by the same functions for sizing and for
 * running, so the two cannot drift apart.
 */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "compose.h"
#include "rows.h"
#include "split.h"

#define WS_ALIGN 64

/* Reserves elem·n1·n2 bytes at the next 64-byte boundary at or after *end and
 * returns their offset. On overflow, *end becomes SIZE_MAX and stays so. */
static size_t reserve(size_t *end, size_t elem, size_t n1, size_t n2)
{
    size_t bytes = elem, off = *end;
    if (off == SIZE_MAX
        || !attn_mul_checked(&bytes, n1, ATTN_SIZE_LIMIT)
        || !attn_mul_checked(&bytes, n2, ATTN_SIZE_LIMIT)
        || !attn_add_checked(&off, (WS_ALIGN - off % WS_ALIGN) % WS_ALIGN, ATTN_SIZE_LIMIT)) {
        *end = SIZE_MAX;
        return 0;
    }
    size_t after = off;
    if (!attn_add_checked(&after, bytes, ATTN_SIZE_LIMIT)) {
        *end = SIZE_MAX;
        return 0;
    }
    *end = after;
    return off;
}

/* ex with the bytes of its scratch from offset off on (none: off 0, bytes
 * 0 and no scratch). */
static attn_exec sub_exec(const attn_exec *ex, size_t off, size_t bytes)
{
    attn_exec sub = *ex;
    sub.scratch = bytes ? (char *)ex->scratch + off : NULL;
    sub.scratch_bytes = bytes;
    return sub;
}

static void layernorm(const attn_kernel *k, const attn_exec *ex, size_t m, int d,
                      const float *x, const float *gamma, const float *beta, float eps, float *y)
{
    attn_exec lex = sub_exec(ex, 0, 0);
    k->layernorm(&lex, m, d, x, gamma, beta, eps, y);
}

/* Scratch bytes for the kernel's gemm of m×n×k (0 when it needs none). */
static size_t gemm_bytes(const attn_kernel *k, const attn_exec *ex, size_t m, int n, int kk)
{
    return k->gemm_scratch ? k->gemm_scratch(ex, m, n, kk) : 0;
}

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* A gemm region sized for the largest of the gemms an operation makes;
 * SIZE_MAX (overflow) propagates. */
typedef struct gemm_region { size_t off, bytes; } gemm_region;

/* The LayerNorm before a product (pre-LN layers): dst = LayerNorm(src),
 * dst then the product's x. */
typedef struct pre_ln {
    const float *gamma, *beta;
    float eps;
    const float *src;
    float *dst;
} pre_ln;

/* pre's LayerNorm of m rows of width d as a call of its own, where the
 * product cannot take it in its region (none: nothing). */
static void pre_ln_call(const attn_kernel *k, const attn_exec *ex, size_t m, int d,
                        const pre_ln *pre)
{
    if (pre)
        layernorm(k, ex, m, d, pre->src, pre->gamma, pre->beta, pre->eps, pre->dst);
}

/* The LayerNorm after a product (post-LN layers): out = LayerNorm(y) with
 * gamma, beta and eps, y's rows contiguous. */
typedef struct post_ln {
    const float *gamma, *beta;
    float eps;
    float *out;
} post_ln;

/* The kernel's gemm of p (its scratch in gex) with the LayerNorm before it
 * (pre, p's rows of k; p->x is pre->dst) or after it (post, not both): in
 * the gemm's own parallel region where the kernel's gemm takes them
 * (gemm_layernorm: one fork and join fewer), else by a layernorm call. */
static void gemm_with_ln(const attn_kernel *k, const attn_exec *ex, const attn_exec *gex,
                         attn_gemm_problem *p, const pre_ln *pre, const post_ln *post)
{
    if (pre && k->gemm_layernorm) {
        p->ln_gamma = pre->gamma, p->ln_beta = pre->beta, p->ln_eps = pre->eps;
        p->ln_in = pre->src, p->x_ln = pre->dst;
    } else {
        pre_ln_call(k, ex, p->m, p->k, pre);
    }
    if (post && k->gemm_layernorm) {
        p->ln_gamma = post->gamma, p->ln_beta = post->beta, p->ln_eps = post->eps;
        p->ln_out = post->out;
    }
    k->gemm(gex, p);
    if (post && !k->gemm_layernorm)
        layernorm(k, ex, p->m, p->n, p->y, post->gamma, post->beta, post->eps, post->out);
}

/* y (row stride ldy) = act(x·wᵀ + bias) + residual (row stride ldy); x
 * given in bf16 instead when x16 is not NULL, y stored in bf16 when y16 is
 * not NULL (kernel.h: only where the kernel takes the hidden in bf16);
 * with pre, x = LayerNorm(pre->src) first; with post, post->out =
 * LayerNorm(y) after (gemm_with_ln). */
static void gemm_io(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t m, int n,
                    int kk, const float *x, const uint16_t *x16, const float *w, const float *bias,
                    int act, const float *residual, float *y, uint16_t *y16, size_t ldy,
                    const pre_ln *pre, const post_ln *post)
{
    attn_exec gex = sub_exec(ex, g.off, g.bytes);
    attn_gemm_problem p = {
        .m = m, .n = n, .k = kk, .x = x, .ldx = (size_t)kk, .w = w, .bias = bias,
        .act = act, .residual = residual, .y = y, .ldy = ldy,
        .packed = attn_packed_lookup(ex, k->name, w, NULL, NULL, n, kk),
        .x_bf16 = x16, .y_bf16 = y16,
    };
    gemm_with_ln(k, ex, &gex, &p, pre, post);
}

static void gemm_ld(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t m, int n,
                    int kk, const float *x, const float *w, const float *bias, int act,
                    const float *residual, float *y, size_t ldy)
{
    gemm_io(k, ex, g, m, n, kk, x, NULL, w, bias, act, residual, y, NULL, ldy, NULL, NULL);
}

static void gemm(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t m, int n, int kk,
                 const float *x, const float *w, const float *bias, int act,
                 const float *residual, float *y)
{
    gemm_ld(k, ex, g, m, n, kk, x, w, bias, act, residual, y, (size_t)n);
}

/* The feed-forward block's weights, as both layers' weights hold them. */
typedef struct ffn_weights {
    const float *w1, *b1, *w2, *b2;
} ffn_weights;
#define FFN_WEIGHTS(w) ((ffn_weights){ (w)->w_ff1, (w)->b_ff1, (w)->w_ff2, (w)->b_ff2 })

/* The bytes of the hidden in bf16 for the kernel's gemm of rows × f (0:
 * it stays fp32). */
static size_t hidden16_bytes(const attn_kernel *k, const attn_exec *ex, size_t rows, int f)
{
    return k->bf16_hidden_bytes ? k->bf16_hidden_bytes(ex, rows, f) : 0;
}

/* The hidden activations' buffers: [rows][F] fp32 at the offset returned,
 * then, where the kernel's gemm takes it, the hidden in bf16 at *hidden16. */
static size_t reserve_hidden(const attn_kernel *k, const attn_exec *ex, size_t *end, size_t rows,
                             int f, size_t *hidden16)
{
    size_t hidden = reserve(end, sizeof(float), rows, (size_t)f);
    size_t bytes = hidden16_bytes(k, ex, rows, f);
    *hidden16 = bytes ? reserve(end, 1, bytes, 1) : 0;
    return hidden;
}

/* y = act(x·W1ᵀ + b1)·W2ᵀ + b2 + residual, x and y [rows][D], the hidden
 * [rows][F] at ws + hidden (reserve_hidden); x = LayerNorm first with pre,
 * y normalized after with post (either may be NULL). Where
 * the kernel's gemm takes the hidden in bf16, the first product stores it
 * so only (the fp32 buffer then holds its partial sums), laid out as the
 * second's packed operand, which the second reads in place: it would have
 * rounded the fp32 hidden to bf16 as it packed it, so the values are the
 * same bit for bit, in half the bytes, with no pass of their own (the
 * packing of the fp32 hidden was 1.4% of a BERT-base layer on
 * avx512-bf16). */
static void ffn(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t rows,
                const attn_encoder_config *c, char *ws, size_t hidden, size_t hidden16,
                const float *x, ffn_weights w, const float *residual, float *y,
                const pre_ln *pre, const post_ln *post)
{
    const int d = c->d_model, f = c->d_ff;
    float *h = (float *)(ws + hidden);
    uint16_t *h16 = hidden16_bytes(k, ex, rows, f) ? (uint16_t *)(ws + hidden16) : NULL;
    gemm_io(k, ex, g, rows, f, d, x, NULL, w.w1, w.b1, (int)c->act, NULL, h, h16, (size_t)f, pre,
            NULL);
    gemm_io(k, ex, g, rows, d, f, h, h16, w.w2, w.b2, ATTN_ACT_NONE, residual, y, NULL, (size_t)d,
            NULL, post);
}

/* The Q, K and V projections of self-attention as one gemm of width 3·D:
 * x is read (and packed) once, and the threads share one larger problem.
 * qkv is [m][3D]; bias3 holds the three biases side by side (zeros for a
 * NULL one). */
static void gemm_qkv(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t m, int d,
                     const float *x, const attn_mha_weights *w, float *bias3, float *qkv,
                     const pre_ln *pre)
{
    const float *const parts[3] = { w->w_q, w->w_k, w->w_v };
    const float *const biases[3] = { w->b_q, w->b_k, w->b_v };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < d; j++)
            bias3[i * d + j] = biases[i] ? biases[i][j] : 0.0f;
    attn_exec gex = sub_exec(ex, g.off, g.bytes);
    attn_gemm_problem p = {
        .m = m, .n = 3 * d, .k = d, .x = x, .ldx = (size_t)d, .w_parts = parts, .part_n = d,
        .bias = bias3, .act = ATTN_ACT_NONE, .y = qkv, .ldy = 3 * (size_t)d,
        .packed = attn_packed_lookup(ex, k->name, w->w_q, w->w_k, w->w_v, 3 * d, d),
    };
    gemm_with_ln(k, ex, &gex, &p, pre, NULL);
}

/* ---- SDPA ------------------------------------------------------------------ */

/* NaN and Inf in q, k or v must reach exactly the outputs that depend on
 * them (a NaN key poisons the rows that attend it, a NaN value only its
 * column of those rows) and no other. Fast kernels multiply whole tiles,
 * so a masked key's probability 0 meets its NaN value (0·NaN = NaN) and
 * leaks into rows that never attend it; the oracle skips masked keys. So
 * a call whose result may be wrong goes to the oracle:
 *  - q is scanned before (O(Lq·Dh), small: a decoding step's one row);
 *  - k and v are not scanned (at decoding, reading them twice halved the
 *    kernel's bandwidth): with q finite, a non-finite k or v either
 *    reaches an output the oracle makes non-finite too, or leaks as NaN
 *    into outputs it should not reach. Either way the kernel's output is
 *    not all finite, and the oracle runs again on the same inputs. The
 *    kernels keep NaN sticky (a NaN score makes its row NaN, P = 0 is
 *    never skipped) so that no non-finite input ends in a finite output
 *    the oracle would not give (tests/test_stress.c). */

/* x - x is 0 for finite x and NaN for NaN and ±Inf: an integer OR of the
 * comparisons vectorizes (no float reduction to reorder); on x86-64 a
 * second AVX2 copy of the loop is picked at load time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static int rows_finite(const float *x, int batch, int heads, int len, int dh,
                       const attn_strides *st)
{
    /* Heads side by side in a row (MHA's [B·L][D] projections) are one
     * run of heads·dh floats: long runs in memory order, which the
     * hardware prefetcher follows. */
    int runs = heads, run = dh;
    if (st->head == (size_t)dh)
        runs = 1, run = heads * dh;
    /* Head by head, each head's rows in order: one sequential stream for
     * [B][H][L][Dh]. */
    for (int b = 0; b < batch; b++)
        for (int h = 0; h < runs; h++)
            for (int i = 0; i < len; i++) {
                if (!attn_row_finite(x + b * st->batch + h * st->head + i * st->row, run))
                    return 0;
            }
    return 1;
}

/* Keys or values stored as a type the kernel does not read in place
 * (attn_kernel.kv_types) are widened to fp32 for it first: a contiguous
 * [B][Hkv][kv_len][Dh] copy each, in the scratch before the kernel's own.
 * The problem the kernel then sees, and where its scratch starts. */
typedef struct sdpa_layout {
    int widen_k, widen_v;
    size_t k, v, kernel, end;
} sdpa_layout;

static int widens(const attn_kernel *k, const attn_kv_store *s)
{
    return s->type != ATTN_F32 && !(k->kv_types >> s->type & 1u);
}

static void sdpa_plan(const attn_kernel *k, const attn_sdpa_problem *p, sdpa_layout *l)
{
    size_t end = 0, rows = (size_t)p->batch * (size_t)attn_kv_heads(p) * (size_t)p->kv_len;
    l->widen_k = widens(k, &p->k_store);
    l->widen_v = widens(k, &p->v_store);
    l->k = l->widen_k ? reserve(&end, sizeof(float), rows, (size_t)p->head_dim) : 0;
    l->v = l->widen_v ? reserve(&end, sizeof(float), rows, (size_t)p->head_dim) : 0;
    l->kernel = reserve(&end, 1, 0, 1);
    l->end = end;
}

/* p as the kernel sees it once l's keys and values are widened (into
 * k and v, NULL when sizing): fp32, contiguous. */
static attn_sdpa_problem widened_problem(const attn_sdpa_problem *p, const sdpa_layout *l,
                                         const float *k, const float *v)
{
    attn_sdpa_problem w = *p;
    const size_t dh = (size_t)p->head_dim, len = (size_t)p->kv_len;
    const attn_strides st = { (size_t)attn_kv_heads(p) * len * dh, len * dh, dh };
    const attn_kv_store f32 = { .type = ATTN_F32 };
    if (l->widen_k)
        w.k = k, w.k_st = st, w.k_store = f32;
    if (l->widen_v)
        w.v = v, w.v_st = st, w.v_store = f32;
    return w;
}

/* The keys (which 0) or values (1) of p widened into dst, [B][Hkv][Lk][Dh]. */
static void widen_kv(const attn_exec *ex, const attn_sdpa_problem *p, int which, float *dst)
{
    const int hkv = attn_kv_heads(p);
    const size_t head = (size_t)p->kv_len * (size_t)p->head_dim;
    const long heads = (long)p->batch * hkv;
    if (attn_trace_units(ex, heads, "key/value head", "%s widened to fp32, %dx%dx%dx%d",
                         which ? "values" : "keys", p->batch, hkv, p->kv_len, p->head_dim))
        return;
#pragma omp parallel num_threads(ex->n_threads)
    {
        long lo, hi;
        attn_split_static(heads, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        for (long bh = lo; bh < hi; bh++)
            attn_widen_kv(p, which, (int)(bh / hkv), (int)(bh % hkv), p->kv_len,
                          dst + (size_t)bh * head);
    }
}

/* The kernel's SDPA scratch (after any widened keys and values), or the
 * oracle's if larger (it may run instead, on the stored ones). */
static size_t sdpa_scratch(const attn_kernel *k, const attn_exec *ex, const attn_sdpa_problem *p)
{
    const attn_exec one = { .n_threads = 1 };
    sdpa_layout l;
    sdpa_plan(k, p, &l);
    attn_sdpa_problem w = widened_problem(p, &l, NULL, NULL);
    size_t own = l.end, oracle = attn_kernel__naive.sdpa_scratch(&one, p);
    reserve(&own, 1, k->sdpa_scratch(ex, &w), 1);
    return own > oracle ? own : oracle;
}

size_t attn_sdpa_workspace(const attn_kernel *k, const attn_exec *ex, const attn_sdpa_problem *p)
{
    size_t end = 0;
    reserve(&end, 1, sdpa_scratch(k, ex, p), 1);
    return end;
}

void attn_sdpa_run(const attn_kernel *k, const attn_exec *ex, const attn_sdpa_problem *p)
{
    /* A dry run (split.h) computes no values to scan: what it holds is
     * whatever the workspace held, so it takes the kernel's path, which is
     * what it shows. */
    const int dry = attn_exec_dry(ex);
    if (k->sdpa != attn_kernel__naive.sdpa) {
        sdpa_layout l;
        sdpa_plan(k, p, &l);
        float *wk = l.widen_k ? (float *)((char *)ex->scratch + l.k) : NULL;
        float *wv = l.widen_v ? (float *)((char *)ex->scratch + l.v) : NULL;
        if (wk)
            widen_kv(ex, p, 0, wk);
        if (wv)
            widen_kv(ex, p, 1, wv);
        attn_sdpa_problem own = widened_problem(p, &l, wk, wv);
        attn_exec kex = sub_exec(ex, l.kernel, ex->scratch_bytes - l.kernel);
        /* The scan for values that are not finite, by the kernel's threads
         * in its region where its path does it (kernel.h), else here. A bad
         * Q costs a kernel call whose result is dropped: it is rare, and
         * scanning Q first on one thread was 5% of SDPA L 2048 at 16
         * threads. */
        attn_finite_scan scan = { 0, 0 };
        kex.finite_scan = dry ? NULL : &scan;
        k->sdpa(&kex, &own);
        if (dry || (scan.done ? !scan.found
                              : rows_finite(p->q, p->batch, p->n_heads, p->q_len, p->head_dim,
                                            &p->q_st)
                                    && rows_finite(p->out, p->batch, p->n_heads, p->q_len,
                                                   p->head_dim, &p->out_st)))
            return;
    }
    attn_kernel__naive.sdpa(ex, p);
}

/* ---- MHA ------------------------------------------------------------------- */

typedef struct mha_layout {
    gemm_region gemm;                  /* the projections' packing buffers */
    int fused;                         /* Q, K, V from one gemm (mha_fused) */
    size_t q, k, v, o;                 /* projections and the attention output */
    size_t bias3;                      /* fused: the three biases, [3·D] */
    size_t sdpa, sdpa_bytes;           /* the kernel's SDPA scratch */
    size_t end;
} mha_layout;

/* Self-attention on a kernel whose gemm takes stacked weights: the
 * projections become one gemm into a [B·L][3D] buffer. */
static int mha_fused(const attn_kernel *k, const attn_mha_args *a)
{
    return k->gemm_parts && a->x_q == a->x_kv && a->q_len == a->kv_len;
}

/* SDPA straight on the [B][L][H·Dh] projections: head h is columns
 * h·Dh … h·Dh+Dh−1 of each row, so no transpose is needed. Fused, Q, K and
 * V are the three D-wide column blocks of rows 3D long. */
static attn_sdpa_problem mha_sdpa_problem(const attn_mha_args *a, int fused)
{
    size_t d = (size_t)a->d_model, dh = d / (size_t)a->n_heads, ld = fused ? 3 * d : d;
    attn_sdpa_problem p = {
        .batch = a->batch, .n_heads = a->n_heads, .q_len = a->q_len, .kv_len = a->kv_len,
        .head_dim = a->d_model / a->n_heads, .scale = a->scale, .mask = a->mask,
        .q_st = { (size_t)a->q_len * ld, dh, ld },
        .k_st = { (size_t)a->kv_len * ld, dh, ld },
        .v_st = { (size_t)a->kv_len * ld, dh, ld },
        .out_st = { (size_t)a->q_len * d, dh, d },
    };
    return p;
}

static void mha_plan(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a,
                     size_t base, mha_layout *l)
{
    size_t end = base, d = (size_t)a->d_model;
    size_t rows_q = (size_t)a->batch * (size_t)a->q_len;   /* both < 2^31: no overflow */
    size_t rows_kv = (size_t)a->batch * (size_t)a->kv_len;
    l->fused = mha_fused(k, a);
    attn_sdpa_problem p = mha_sdpa_problem(a, l->fused);

    l->gemm.bytes = max_size(gemm_bytes(k, ex, rows_q, a->d_model, a->d_model),
                             gemm_bytes(k, ex, rows_kv, a->d_model, a->d_model));
    if (l->fused)
        l->gemm.bytes = max_size(l->gemm.bytes, gemm_bytes(k, ex, rows_q, 3 * a->d_model, a->d_model));
    l->gemm.off = reserve(&end, 1, l->gemm.bytes, 1);
    if (l->fused) {
        l->q = reserve(&end, sizeof(float), rows_q, 3 * d);
        l->k = l->q + sizeof(float) * d;
        l->v = l->q + 2 * sizeof(float) * d;
        l->bias3 = reserve(&end, sizeof(float), 3, d);
    } else {
        l->q = reserve(&end, sizeof(float), rows_q, d);
        l->k = reserve(&end, sizeof(float), rows_kv, d);
        l->v = reserve(&end, sizeof(float), rows_kv, d);
    }
    l->o = reserve(&end, sizeof(float), rows_q, d);
    l->sdpa_bytes = sdpa_scratch(k, ex, &p);
    l->sdpa = reserve(&end, 1, l->sdpa_bytes, 1);
    l->end = end;
}

/* The end of every attention block: SDPA of p (its out set by the caller)
 * with the SDPA scratch at offset sdpa of the workspace, then
 * y = out·W_oᵀ + b_o + residual over rows rows of width d, then ln (may be
 * NULL). */
static void attend(const attn_kernel *k, const attn_exec *ex, gemm_region g, size_t sdpa,
                   size_t sdpa_bytes, const attn_sdpa_problem *p, const attn_mha_weights *w,
                   size_t rows, int d, const float *residual, float *y, const post_ln *ln)
{
    attn_exec sub = sub_exec(ex, sdpa, sdpa_bytes);
    attn_sdpa_run(k, &sub, p);
    gemm_io(k, ex, g, rows, d, d, p->out, NULL, w->w_o, w->b_o, ATTN_ACT_NONE, residual, y, NULL,
            (size_t)d, NULL, ln);
}

/* y = MHA(x_q, x_kv) + residual (residual may be NULL), using the
 * workspace from offset base on; with pre, x_q = x_kv = pre->dst =
 * LayerNorm(pre->src) first; with post, post->out = LayerNorm(y) after. */
static void mha_compute(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a,
                        size_t base, const float *residual, float *y, const pre_ln *pre,
                        const post_ln *post)
{
    mha_layout l;
    mha_plan(k, ex, a, base, &l);
    char *ws = ex->scratch;
    float *q = (float *)(ws + l.q), *kp = (float *)(ws + l.k);
    float *v = (float *)(ws + l.v), *o = (float *)(ws + l.o);
    const attn_mha_weights *w = a->w;
    int d = a->d_model;
    size_t rows_q = (size_t)a->batch * (size_t)a->q_len;
    size_t rows_kv = (size_t)a->batch * (size_t)a->kv_len;

    if (l.fused) {
        gemm_qkv(k, ex, l.gemm, rows_q, d, a->x_q, w, (float *)(ws + l.bias3), q, pre);
    } else {
        pre_ln_call(k, ex, rows_q, d, pre);
        gemm(k, ex, l.gemm, rows_q, d, d, a->x_q, w->w_q, w->b_q, ATTN_ACT_NONE, NULL, q);
        gemm(k, ex, l.gemm, rows_kv, d, d, a->x_kv, w->w_k, w->b_k, ATTN_ACT_NONE, NULL, kp);
        gemm(k, ex, l.gemm, rows_kv, d, d, a->x_kv, w->w_v, w->b_v, ATTN_ACT_NONE, NULL, v);
    }

    attn_sdpa_problem p = mha_sdpa_problem(a, l.fused);
    p.q = q;
    p.k = kp;
    p.v = v;
    p.out = o;
    attend(k, ex, l.gemm, l.sdpa, l.sdpa_bytes, &p, w, rows_q, d, residual, y, post);
}

size_t attn_mha_workspace(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a)
{
    mha_layout l;
    mha_plan(k, ex, a, 0, &l);
    return l.end;
}

void attn_mha_run(const attn_kernel *k, const attn_exec *ex, const attn_mha_args *a)
{
    mha_compute(k, ex, a, 0, NULL, a->y, NULL, NULL);
}

/* ---- Encoder layer ------------------------------------------------------------ */

typedef struct encoder_layout {
    gemm_region gemm;  /* the FFN's packing buffers (MHA has its own) */
    size_t t;          /* [B·L][D]: LN output (pre-LN) or pre-LN sums (post-LN) */
    size_t x1;         /* [B·L][D]: the stream after the attention block */
    size_t region;     /* start of the MHA workspace, reused for the FFN hidden */
    size_t hidden, hidden16; /* [B·L][F] (reserve_hidden) */
    size_t end;
} encoder_layout;

static attn_mha_args encoder_mha_args(const attn_encoder_args *a)
{
    attn_mha_args m = {
        .batch = a->batch, .q_len = a->seq_len, .kv_len = a->seq_len,
        .d_model = a->c->d_model, .n_heads = a->c->n_heads,
        .scale = attn_resolve_scale(0.0f, a->c->d_model / a->c->n_heads),
        .w = &a->w->attn, .mask = a->mask,
        /* Self-attention (mha_fused tells by the pointers): the inputs are
         * set by the caller, to one buffer. */
        .x_q = a->x, .x_kv = a->x,
    };
    return m;
}

/* The layer's buffers from offset base of the workspace on. */
static void encoder_plan(const attn_kernel *k, const attn_exec *ex, const attn_encoder_args *a,
                         size_t base, encoder_layout *l)
{
    size_t end = base, rows = (size_t)a->batch * (size_t)a->seq_len;
    attn_mha_args m = encoder_mha_args(a);
    mha_layout ml;

    l->gemm.bytes = max_size(gemm_bytes(k, ex, rows, a->c->d_ff, a->c->d_model),
                             gemm_bytes(k, ex, rows, a->c->d_model, a->c->d_ff));
    l->gemm.off = reserve(&end, 1, l->gemm.bytes, 1);
    l->t = reserve(&end, sizeof(float), rows, (size_t)a->c->d_model);
    l->x1 = reserve(&end, sizeof(float), rows, (size_t)a->c->d_model);
    l->region = end;
    mha_plan(k, ex, &m, l->region, &ml);
    /* The FFN hidden is needed only after attention is done with its buffers. */
    size_t ffn_end = l->region;
    l->hidden = reserve_hidden(k, ex, &ffn_end, rows, a->c->d_ff, &l->hidden16);
    l->end = (ml.end == SIZE_MAX || ffn_end == SIZE_MAX) ? SIZE_MAX
           : (ml.end > ffn_end ? ml.end : ffn_end);
}

/* One layer with the workspace from offset base on. x and y may be the same
 * buffer: x is last read before y is first written. */
static void encoder_compute(const attn_kernel *k, const attn_exec *ex, const attn_encoder_args *a,
                            size_t base)
{
    encoder_layout l;
    encoder_plan(k, ex, a, base, &l);
    char *ws = ex->scratch;
    float *t = (float *)(ws + l.t), *x1 = (float *)(ws + l.x1);
    const attn_encoder_config *c = a->c;
    const attn_encoder_weights *w = a->w;
    size_t rows = (size_t)a->batch * (size_t)a->seq_len;
    attn_mha_args m = encoder_mha_args(a);

    if (c->norm_first) {
        /* x1 = x + MHA(LN1(x));  y = x1 + FFN(LN2(x1)) */
        const pre_ln ln1 = { w->ln1_gamma, w->ln1_beta, c->ln_eps, a->x, t };
        const pre_ln ln2 = { w->ln2_gamma, w->ln2_beta, c->ln_eps, x1, t };
        m.x_q = m.x_kv = t;
        mha_compute(k, ex, &m, l.region, a->x, x1, &ln1, NULL);
        ffn(k, ex, l.gemm, rows, c, ws, l.hidden, l.hidden16, t, FFN_WEIGHTS(w), x1, a->y, &ln2,
            NULL);
    } else {
        /* x1 = LN1(x + MHA(x));  y = LN2(x1 + FFN(x1)) */
        const post_ln ln1 = { w->ln1_gamma, w->ln1_beta, c->ln_eps, x1 };
        const post_ln ln2 = { w->ln2_gamma, w->ln2_beta, c->ln_eps, a->y };
        m.x_q = m.x_kv = a->x;
        mha_compute(k, ex, &m, l.region, a->x, t, NULL, &ln1);
        ffn(k, ex, l.gemm, rows, c, ws, l.hidden, l.hidden16, x1, FFN_WEIGHTS(w), x1, t, NULL,
            &ln2);
    }
}

/* ---- Encoder stack ------------------------------------------------------------ */

/* With a final LayerNorm the layers run in a [B·L][D] buffer at the start of
 * the workspace (LayerNorm's input and output must not overlap) and the LN
 * writes y; without one they run in y. Either way one buffer carries the
 * stream through every layer, in place: no copy between layers. The layer
 * workspace follows it and serves every layer in turn. */
typedef struct stack_layout {
    size_t stream;     /* [B·L][D], with a final LayerNorm */
    size_t layers;     /* where each layer's workspace starts */
    size_t end;
} stack_layout;

static void stack_plan(const attn_kernel *k, const attn_exec *ex, const attn_stack_args *a,
                       stack_layout *s)
{
    size_t end = 0, rows = (size_t)a->layer.batch * (size_t)a->layer.seq_len;
    s->stream = a->final_gamma ? reserve(&end, sizeof(float), rows, (size_t)a->layer.c->d_model) : 0;
    s->layers = end;
    /* Every layer has the same buffers: plan them with the first's weights. */
    attn_encoder_args first = a->layer;
    first.w = &a->layers[0];
    encoder_layout l;
    encoder_plan(k, ex, &first, end, &l);   /* a base of SIZE_MAX gives SIZE_MAX */
    s->end = l.end;
}

size_t attn_stack_workspace(const attn_kernel *k, const attn_exec *ex, const attn_stack_args *a)
{
    stack_layout s;
    stack_plan(k, ex, a, &s);
    return s.end;
}

void attn_stack_run(const attn_kernel *k, const attn_exec *ex, const attn_stack_args *a)
{
    stack_layout s;
    stack_plan(k, ex, a, &s);
    float *stream = a->final_gamma ? (float *)((char *)ex->scratch + s.stream) : a->layer.y;
    attn_encoder_args layer = a->layer;
    for (int i = 0; i < a->n_layers; i++) {
        layer.w = &a->layers[i];
        layer.x = i == 0 ? a->layer.x : stream;
        layer.y = stream;
        encoder_compute(k, ex, &layer, s.layers);
    }
    if (a->final_gamma)
        layernorm(k, ex, (size_t)a->layer.batch * (size_t)a->layer.seq_len, a->layer.c->d_model,
                  stream, a->final_gamma, a->final_beta, a->layer.c->ln_eps, a->layer.y);
}

/* ---- Embeddings ----------------------------------------------------------------- */

/* dst[b][l] = token[id] + position[offset + l] (+ token_type[type]): the
 * rows are independent gathers, split across the threads; each row's sum is
 * one contiguous vectorizable loop. */
static void embed_row(const attn_embed_args *a, long r, float *dst)
{
    const attn_embedding_weights *w = a->w;
    const int d = a->c->d_model;
    const float *tok = w->token + (size_t)a->ids[r] * (size_t)d;
    const float *pos = w->position + (size_t)(a->position_offset + r % a->seq_len) * (size_t)d;
    float *y = dst + (size_t)r * (size_t)d;
    if (a->c->n_token_types > 0) {
        const float *typ = w->token_type + (size_t)(a->type_ids ? a->type_ids[r] : 0) * (size_t)d;
        for (int j = 0; j < d; j++)
            y[j] = tok[j] + pos[j] + typ[j];
    } else {
        for (int j = 0; j < d; j++)
            y[j] = tok[j] + pos[j];
    }
}

/* A region run by its first thread alone: every unit is thread 0's. */
static long first_takes_all(const void *units, int t)
{
    return t == 0 ? *(const long *)units : 0;
}

static void embed_sum(const attn_embed_args *a, const attn_exec *ex, float *dst)
{
    const int d = a->c->d_model;
    const long rows = (long)a->batch * a->seq_len;
    /* Below ~64 KiB of output a team costs more than it saves. Traced over
     * the context's threads even then: the others wait, which explain must
     * show (as a one-thread region it read "imbalance 1.000"). */
    attn_exec team = *ex;
    team.n_threads = (size_t)rows * (size_t)d < 16384 ? 1 : ex->n_threads;
    if (team.n_threads == 1
            ? attn_trace_region(ex, first_takes_all, &rows, "row", "embedding sums %ldx%d",
                                rows, d)
            : attn_trace_units(&team, rows, "row", "embedding sums %ldx%d", rows, d))
        return;
#pragma omp parallel num_threads(team.n_threads)
    {
        long lo, hi;
        attn_split_static(rows, omp_get_num_threads(), omp_get_thread_num(), &lo, &hi);
        for (long r = lo; r < hi; r++)
            embed_row(a, r, dst);
    }
}

/* With a LayerNorm the sums go to the workspace, then the kernel's
 * LayerNorm writes x; without one they go straight to x. */
size_t attn_embed_workspace(const attn_kernel *k, const attn_exec *ex, const attn_embed_args *a)
{
    (void)k;
    (void)ex;
    size_t end = 0;
    if (a->w->ln_gamma)
        reserve(&end, sizeof(float), (size_t)a->batch * (size_t)a->seq_len, (size_t)a->c->d_model);
    return end;
}

void attn_embed_run(const attn_kernel *k, const attn_exec *ex, const attn_embed_args *a)
{
    const attn_embedding_weights *w = a->w;
    if (!w->ln_gamma) {
        embed_sum(a, ex, a->x);
        return;
    }
    float *sum = ex->scratch;
    embed_sum(a, ex, sum);
    layernorm(k, ex, (size_t)a->batch * (size_t)a->seq_len, a->c->d_model, sum, w->ln_gamma,
              w->ln_beta, a->c->ln_eps, a->x);
}

/* ---- Decoder layer ------------------------------------------------------------ */

/* The buffers of one decoder layer call. The attention region (qkv … sdpa)
 * is reused for the FFN hidden once both attentions are done. */
typedef struct decoder_layout {
    gemm_region gemm;  /* every gemm's packing buffers */
    size_t t;          /* [rows][D]: LN output (pre-LN) or pre-LN sums (post-LN) */
    size_t x1, x2;     /* [rows][D]: the stream after self- and cross-attention */
    size_t qkv;        /* [rows][3D]: self-attention Q, K, V side by side */
    size_t bias3;      /* [3D]: their biases (fused projection) */
    size_t q, o;       /* [rows][D]: cross-attention Q; either attention's output */
    size_t mem_k, mem_v; /* [B·M][D]: the memory's K and V without a cache */
    size_t sdpa, sdpa_bytes;
    size_t hidden, hidden16; /* [rows][F] (reserve_hidden), over the attention region */
    size_t end;
} decoder_layout;

/* Self-attention is causal bottom-right: the tokens are the last tgt_len
 * positions of what the cache holds after them (without a cache, or at
 * length 0, bottom-right and top-left are the same). */
static const attn_mask decoder_self_mask = { .causal = ATTN_CAUSAL_BOTTOM_RIGHT };

static attn_mask decoder_cross_mask(const attn_decoder_args *a)
{
    attn_mask m = { .key_padding = a->mem_key_padding };
    return m;
}

/* One of the decoder's attentions as MHA's SDPA problem: the target's
 * queries against kv_len keys, heads as column blocks of the projections. */
static attn_sdpa_problem decoder_attention_problem(const attn_decoder_args *a, int kv_len,
                                                   const attn_mask *mask, int fused)
{
    attn_mha_args m = {
        .batch = a->batch, .q_len = a->tgt_len, .kv_len = kv_len, .d_model = a->c->d_model,
        .n_heads = a->c->n_heads, .mask = mask,
        .scale = attn_resolve_scale(0.0f, a->c->d_model / a->c->n_heads),
    };
    return mha_sdpa_problem(&m, fused);
}

/* Self-attention over the qkv rows and, with a cache, the keys and values
 * stored in it (the new ones appended first): [B][H][capacity][Dh]. */
static attn_sdpa_problem decoder_self_problem(const attn_decoder_args *a)
{
    int past = a->cache ? a->cache->length : 0;
    attn_sdpa_problem p = decoder_attention_problem(a, past + a->tgt_len, &decoder_self_mask, 1);
    if (a->cache) {
        const attn_kv_cache *c = a->cache;
        size_t cap = (size_t)c->capacity, dh = (size_t)p.head_dim, h = (size_t)c->n_heads;
        attn_strides st = { h * cap * dh, cap * dh, dh }, scale_st = { h * cap, cap, 1 };
        p.k_st = p.v_st = st;
        p.k = c->k_type == ATTN_F32 ? c->k : NULL;
        p.v = c->v_type == ATTN_F32 ? c->v : NULL;
        attn_kv_store ks = { c->k_type, c->k, c->k_scale, scale_st };
        attn_kv_store vs = { c->v_type, c->v, c->v_scale, scale_st };
        p.k_store = ks;
        p.v_store = vs;
    }
    return p;
}

/* Whether the memory's keys and values are projected into the workspace
 * (no cache, or a typed cache that stores their conversion), not straight
 * into an fp32 cache. */
static int decoder_memory_in_workspace(const attn_kv_cache *c)
{
    return !c || c->k_type != ATTN_F32 || c->v_type != ATTN_F32;
}

/* Cross-attention: the memory's K and V are [B][M][D], as projected; in a
 * typed cache, converted in that layout, a row's scale at [B][M][H]. */
static attn_sdpa_problem decoder_cross_problem(const attn_decoder_args *a, const attn_mask *m)
{
    attn_sdpa_problem p = decoder_attention_problem(a, a->mem_len, m->key_padding ? m : NULL, 0);
    const attn_kv_cache *c = a->cache;
    if (c) {
        size_t h = (size_t)c->n_heads, len = (size_t)a->mem_len;
        attn_strides scale_st = { len * h, 1, h };
        attn_kv_store ks = { c->k_type, c->mem_k, c->mem_k_scale, scale_st };
        attn_kv_store vs = { c->v_type, c->mem_v, c->mem_v_scale, scale_st };
        p.k_store = ks;
        p.v_store = vs;
    }
    return p;
}

static void decoder_plan(const attn_kernel *k, const attn_exec *ex, const attn_decoder_args *a,
                         decoder_layout *l)
{
    size_t end = 0, d = (size_t)a->c->d_model;
    size_t rows = (size_t)a->batch * (size_t)a->tgt_len;     /* both < 2^31 */
    size_t mem_rows = (size_t)a->batch * (size_t)a->mem_len;
    int dm = a->c->d_model, f = a->c->d_ff;
    attn_mask cm = decoder_cross_mask(a);
    attn_sdpa_problem self = decoder_self_problem(a), cross = decoder_cross_problem(a, &cm);

    l->gemm.bytes = max_size(max_size(gemm_bytes(k, ex, rows, dm, dm),
                                      gemm_bytes(k, ex, mem_rows, dm, dm)),
                             max_size(gemm_bytes(k, ex, rows, f, dm),
                                      gemm_bytes(k, ex, rows, dm, f)));
    if (k->gemm_parts)
        l->gemm.bytes = max_size(l->gemm.bytes, gemm_bytes(k, ex, rows, 3 * dm, dm));
    l->gemm.off = reserve(&end, 1, l->gemm.bytes, 1);
    l->t = reserve(&end, sizeof(float), rows, d);
    l->x1 = reserve(&end, sizeof(float), rows, d);
    l->x2 = reserve(&end, sizeof(float), rows, d);
    size_t region = end;
    l->qkv = reserve(&end, sizeof(float), rows, 3 * d);
    l->bias3 = reserve(&end, sizeof(float), 3, d);
    l->q = reserve(&end, sizeof(float), rows, d);
    l->o = reserve(&end, sizeof(float), rows, d);
    l->mem_k = l->mem_v = 0;
    if (decoder_memory_in_workspace(a->cache)) {
        l->mem_k = reserve(&end, sizeof(float), mem_rows, d);
        l->mem_v = reserve(&end, sizeof(float), mem_rows, d);
    }
    l->sdpa_bytes = max_size(sdpa_scratch(k, ex, &self), sdpa_scratch(k, ex, &cross));
    l->sdpa = reserve(&end, 1, l->sdpa_bytes, 1);
    size_t ffn_end = region;
    l->hidden = reserve_hidden(k, ex, &ffn_end, rows, f, &l->hidden16);
    l->end = (end == SIZE_MAX || ffn_end == SIZE_MAX) ? SIZE_MAX : max_size(end, ffn_end);
}

size_t attn_decoder_workspace(const attn_kernel *k, const attn_exec *ex, const attn_decoder_args *a)
{
    decoder_layout l;
    decoder_plan(k, ex, a, &l);
    return l.end;
}

/* Q, K and V of the target rows into qkv ([rows][3D]): one gemm of stacked
 * weights where the kernel takes them, else three into column blocks. */
static void decoder_project_qkv(const attn_kernel *k, const attn_exec *ex, const decoder_layout *l,
                                size_t rows, int d, const float *x, const attn_mha_weights *w,
                                float *qkv, const pre_ln *pre)
{
    if (k->gemm_parts) {
        gemm_qkv(k, ex, l->gemm, rows, d, x, w, (float *)((char *)ex->scratch + l->bias3), qkv,
                 pre);
        return;
    }
    pre_ln_call(k, ex, rows, d, pre);
    const float *const ws[3] = { w->w_q, w->w_k, w->w_v };
    const float *const bs[3] = { w->b_q, w->b_k, w->b_v };
    for (int i = 0; i < 3; i++)
        gemm_ld(k, ex, l->gemm, rows, d, d, x, ws[i], bs[i], ATTN_ACT_NONE, NULL,
                qkv + (size_t)i * d, 3 * (size_t)d);
}

/* The new tokens' K (part 1) or V (part 2) of qkv, D-wide column blocks of
 * rows 3D long, against the cache's type: ATTN_OK or ATTN_ERR_RANGE. Each
 * row of a head is checked as the cache will store it. */
static attn_status decoder_check_new(const attn_kv_cache *c, size_t rows, const float *qkv,
                                     int part)
{
    size_t dh = (size_t)c->head_dim, d = dh * (size_t)c->n_heads;
    attn_dtype t = part == 1 ? c->k_type : c->v_type;
    for (int h = 0; h < c->n_heads; h++) {
        attn_status st = attn_check_rows(t, rows, (int)dh, qkv + part * d + h * dh, 3 * d);
        if (st != ATTN_OK)
            return st;
    }
    return ATTN_OK;
}

/* Appends the new tokens' K and V (columns D … 3D−1 of qkv) to the cache,
 * converted to its types: row (b, i) head h goes to [b][h][length + i].
 * O(rows·D), against the projections' O(rows·D²). */
static void decoder_append(attn_kv_cache *cache, int tgt_len, const float *qkv)
{
    size_t dh = (size_t)cache->head_dim, d = dh * (size_t)cache->n_heads;
    size_t cap = (size_t)cache->capacity;
    for (int b = 0; b < cache->batch; b++)
        for (int h = 0; h < cache->n_heads; h++) {
            size_t at = ((size_t)b * cache->n_heads + h) * cap + (size_t)cache->length;
            const float *rows = qkv + (size_t)b * tgt_len * 3 * d + h * dh;
            float *ks = cache->k_scale ? cache->k_scale + at : NULL;
            float *vs = cache->v_scale ? cache->v_scale + at : NULL;
            attn_store_rows(cache->k_type, (size_t)tgt_len, (int)dh, rows + d, 3 * d,
                            (char *)cache->k + at * dh * attn_dtype_bytes(cache->k_type), dh, ks, 1);
            attn_store_rows(cache->v_type, (size_t)tgt_len, (int)dh, rows + 2 * d, 3 * d,
                            (char *)cache->v + at * dh * attn_dtype_bytes(cache->v_type), dh, vs, 1);
        }
}

/* out = residual + SelfMHA(in), through the cache when there is one;
 * ATTN_ERR_RANGE, with nothing stored, when its types cannot hold the new
 * keys or values. */
static attn_status decoder_self(const attn_kernel *k, const attn_exec *ex, const decoder_layout *l,
                                const attn_decoder_args *a, const float *in, const float *residual,
                                float *out, const pre_ln *pre, const post_ln *ln)
{
    size_t rows = (size_t)a->batch * (size_t)a->tgt_len;
    int d = a->c->d_model;
    float *qkv = (float *)((char *)ex->scratch + l->qkv);
    decoder_project_qkv(k, ex, l, rows, d, in, &a->w->self_attn, qkv, pre);
    attn_sdpa_problem p = decoder_self_problem(a);
    p.q = qkv;
    if (a->cache) {
        /* A dry run (split.h) has no values to check, only what the
         * workspace held: it stores them unchecked. */
        const int dry = attn_exec_dry(ex);
        attn_status st = dry ? ATTN_OK : decoder_check_new(a->cache, rows, qkv, 1);
        if (st == ATTN_OK && !dry)
            st = decoder_check_new(a->cache, rows, qkv, 2);
        if (st != ATTN_OK)
            return st;
        decoder_append(a->cache, a->tgt_len, qkv);
    } else {
        p.k = qkv + d;
        p.v = qkv + 2 * d;
    }
    p.out = (float *)((char *)ex->scratch + l->o);
    attend(k, ex, l->gemm, l->sdpa, l->sdpa_bytes, &p, &a->w->self_attn, rows, d, residual, out,
           ln);
    return ATTN_OK;
}

/* The memory's projections, [B·M][D] fp32 in the workspace, stored in the
 * cache as its types (rows of Dh, a scale each for ATTN_I8 at [B·M][H]);
 * ATTN_ERR_RANGE, with nothing stored, when they cannot be (unchecked in a
 * dry run, dry: its values are whatever the workspace held). */
static attn_status decoder_store_memory(attn_kv_cache *c, size_t mem_rows, const float *mk,
                                        const float *mv, int dry)
{
    size_t rows = mem_rows * (size_t)c->n_heads;
    int dh = c->head_dim;
    attn_status st = dry ? ATTN_OK : attn_check_rows(c->k_type, rows, dh, mk, (size_t)dh);
    if (st == ATTN_OK && !dry)
        st = attn_check_rows(c->v_type, rows, dh, mv, (size_t)dh);
    if (st != ATTN_OK)
        return st;
    attn_store_rows(c->k_type, rows, dh, mk, (size_t)dh, c->mem_k, (size_t)dh, c->mem_k_scale, 1);
    attn_store_rows(c->v_type, rows, dh, mv, (size_t)dh, c->mem_v, (size_t)dh, c->mem_v_scale, 1);
    return ATTN_OK;
}

/* out = residual + CrossMHA(in, memory); the memory's K and V come from
 * the cache after its first call. */
static attn_status decoder_cross(const attn_kernel *k, const attn_exec *ex,
                                 const decoder_layout *l, const attn_decoder_args *a,
                                 const float *in, const float *residual, float *out,
                                 const pre_ln *pre, const post_ln *ln)
{
    size_t rows = (size_t)a->batch * (size_t)a->tgt_len;
    size_t mem_rows = (size_t)a->batch * (size_t)a->mem_len;
    int d = a->c->d_model;
    char *ws = ex->scratch;
    const attn_mha_weights *w = &a->w->cross_attn;
    attn_kv_cache *c = a->cache;
    const int in_ws = decoder_memory_in_workspace(c);
    float *mk = in_ws ? (float *)(ws + l->mem_k) : c->mem_k;
    float *mv = in_ws ? (float *)(ws + l->mem_v) : c->mem_v;
    if (!c || c->length == 0) {
        gemm(k, ex, l->gemm, mem_rows, d, d, a->memory, w->w_k, w->b_k, ATTN_ACT_NONE, NULL, mk);
        gemm(k, ex, l->gemm, mem_rows, d, d, a->memory, w->w_v, w->b_v, ATTN_ACT_NONE, NULL, mv);
        attn_status st = c && in_ws ? decoder_store_memory(c, mem_rows, mk, mv, attn_exec_dry(ex))
                                    : ATTN_OK;
        if (st != ATTN_OK)
            return st;
    }
    float *q = (float *)(ws + l->q);
    gemm_io(k, ex, l->gemm, rows, d, d, in, NULL, w->w_q, w->b_q, ATTN_ACT_NONE, NULL, q, NULL,
            (size_t)d, pre, NULL);
    attn_mask m = decoder_cross_mask(a);
    attn_sdpa_problem p = decoder_cross_problem(a, &m);
    p.q = q;
    if (!c || !in_ws) {   /* fp32: the projections, in the workspace or the cache */
        p.k = mk;
        p.v = mv;
    } else {   /* a typed cache: a side it stores as fp32 is read from it, as fp32 */
        p.k = c->k_type == ATTN_F32 ? c->mem_k : NULL;
        p.v = c->v_type == ATTN_F32 ? c->mem_v : NULL;
    }
    p.out = (float *)(ws + l->o);
    attend(k, ex, l->gemm, l->sdpa, l->sdpa_bytes, &p, w, rows, d, residual, out, ln);
    return ATTN_OK;
}

/* x and y may be the same buffer: x is last read before y is first written
 * (a call refused for its cache's types stops before that). */
attn_status attn_decoder_run(const attn_kernel *k, const attn_exec *ex, const attn_decoder_args *a)
{
    decoder_layout l;
    decoder_plan(k, ex, a, &l);
    char *ws = ex->scratch;
    float *t = (float *)(ws + l.t), *x1 = (float *)(ws + l.x1), *x2 = (float *)(ws + l.x2);
    const attn_encoder_config *c = a->c;
    const attn_decoder_weights *w = a->w;
    size_t rows = (size_t)a->batch * (size_t)a->tgt_len;
    attn_status st;

    if (c->norm_first) {
        const pre_ln ln1 = { w->ln1_gamma, w->ln1_beta, c->ln_eps, a->x, t };
        const pre_ln ln2 = { w->ln2_gamma, w->ln2_beta, c->ln_eps, x1, t };
        const pre_ln ln3 = { w->ln3_gamma, w->ln3_beta, c->ln_eps, x2, t };
        if ((st = decoder_self(k, ex, &l, a, t, a->x, x1, &ln1, NULL)) != ATTN_OK)
            return st;
        if ((st = decoder_cross(k, ex, &l, a, t, x1, x2, &ln2, NULL)) != ATTN_OK)
            return st;
        ffn(k, ex, l.gemm, rows, c, ws, l.hidden, l.hidden16, t, FFN_WEIGHTS(w), x2, a->y, &ln3,
            NULL);
    } else {
        const post_ln ln1 = { w->ln1_gamma, w->ln1_beta, c->ln_eps, x1 };
        const post_ln ln2 = { w->ln2_gamma, w->ln2_beta, c->ln_eps, x2 };
        const post_ln ln3 = { w->ln3_gamma, w->ln3_beta, c->ln_eps, a->y };
        if ((st = decoder_self(k, ex, &l, a, a->x, a->x, t, NULL, &ln1)) != ATTN_OK)
            return st;
        if ((st = decoder_cross(k, ex, &l, a, x1, x1, t, NULL, &ln2)) != ATTN_OK)
            return st;
        ffn(k, ex, l.gemm, rows, c, ws, l.hidden, l.hidden16, x2, FFN_WEIGHTS(w), x2, t, NULL,
            &ln3);
    }
    if (a->cache) {
        a->cache->length += a->tgt_len;
        a->cache->mem_len = a->mem_len;
    }
    return ATTN_OK;
}
