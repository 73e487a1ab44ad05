/*
 * kernel.c — the onednn kernel: oneDNN (Intel's deep-learning primitives
 * library, Debian libdnnl-dev) composed as a user of it would, inside the
 * suite:
 *   gemm       a matmul primitive with the bias, the activation (eltwise
 *              post-op) and the residual (binary-add post-op) fused;
 *   sdpa       per batch and block of bq query rows, a batched matmul
 *              S = scale·Q·Kᵀ over all heads (grouped-query heads read their
 *              shared K and V by broadcasting), the mask (attnbench's rows),
 *              the softmax primitive in place, and a batched matmul O = P·V
 *              written straight into the strided output;
 *   layernorm  the layer_normalization primitive with scale and shift.
 * MHA, the encoder and the decoder are composed from these as for every
 * kernel (compose.c).
 *
 * Primitives are created once per shape and thread count and kept in the
 * context (attn_exec.state: a small cache, freed with the context), as a
 * oneDNN user keeps them; a call without a context creates and frees its
 * own. Should a primitive not be creatable (memory, an unsupported layout),
 * the call falls back to oneDNN's BLAS-like dnnl_sgemm with attnbench's
 * epilogue, tiled attention (frame/sdpa.c) and LayerNorm, so a primitive
 * still cannot fail.
 *
 * Threads: oneDNN's OpenMP runtime uses omp_get_max_threads() of the
 * calling thread, when a primitive is created and when it runs. Each call
 * sets it to the context's thread count and restores the caller's value.
 *
 * Causal masks are applied to the full S: the composed form computes every
 * score and masks afterwards (as a user composing these primitives would),
 * so a causal call costs what an unmasked one does.
 */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../frame/decode.h"
#include "../frame/sdpa.h"
#include "../rows.h"

enum { DN_PRIMITIVES, DN_BQ, DN_N_PARAMS };

static const attn_param params[DN_N_PARAMS] = {
    [DN_PRIMITIVES] = { "primitives", "1: oneDNN's primitives; 0: its dnnl_sgemm with "
                        "attnbench's epilogue, tiled attention and LayerNorm (the fallback)",
                        0, 1, .threshold = 1 },
    [DN_BQ] = { "bq", "attention query rows per block (scores of all heads: H x bq x Lk floats)",
                1, 4096 },
};

static void default_params(int *v)
{
    v[DN_PRIMITIVES] = 1;
    /* 64 rows: at H 12, Lk 2048, the scores of a block are 6 MiB (L3). */
    v[DN_BQ] = 64;
}

/* Without params (a primitive called outside a context, in tests) the
 * defaults apply. */
static int param(const attn_exec *ex, int i)
{
    int v[DN_N_PARAMS];
    if (ex->params)
        return ex->params[i];
    default_params(v);
    return v[i];
}

/* The onednn-bf16 row's data: its matmuls ask for bf16 math. */
static const int bf16_math = 1;

static int row_bf16(const attn_exec *ex)
{
    return ex->data == &bf16_math;
}

/* ---- Primitives, described by value ------------------------------------------ */

enum { DN_MATMUL = 1, DN_SOFTMAX, DN_LAYERNORM };

/* Everything a primitive is created from, so that it is also its cache key
 * (compared bytewise: built on a zeroed struct). Tensors: matmul src,
 * weights, dst; softmax and layernorm their data in [0]. */
typedef struct dn_recipe {
    int kind, n_threads, nd;
    dnnl_dims_t dims[3], strides[3];   /* the first nd entries used */
    int bias;                          /* matmul: bias [1][n] */
    int act;                           /* matmul: ATTN_ACT_NONE or an activation */
    int residual;                      /* matmul: binary add of a tensor laid out as dst */
    float scale;                       /* matmul: output scale (1: none) */
    int bf16;                          /* matmul: fpmath_mode bf16 (the onednn-bf16 row) */
    float eps;                         /* layernorm */
} dn_recipe;

/* Primitives kept per context: a dozen per MHA or encoder shape; the
 * oldest goes when it is full. */
#define DN_CACHE 48

typedef struct dn_state {
    dnnl_stream_t stream;
    int n, next;
    dn_recipe key[DN_CACHE];
    dnnl_primitive_t prim[DN_CACHE];
} dn_state;

static dnnl_engine_t engine;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

static void engine_create(void)
{
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        engine = NULL;
}

static int tensor_desc(const dn_recipe *r, int t, dnnl_memory_desc_t *md)
{
    return dnnl_memory_desc_init_by_strides(md, r->nd, r->dims[t], dnnl_f32, r->strides[t])
           == dnnl_success;
}

static dnnl_alg_kind_t eltwise_of(int act)
{
    return act == ATTN_ACT_GELU_ERF ? dnnl_eltwise_gelu_erf
         : act == ATTN_ACT_GELU_TANH ? dnnl_eltwise_gelu_tanh : dnnl_eltwise_relu;
}

/* The matmul's attributes: output scale and post-ops. */
static dnnl_primitive_attr_t matmul_attr(const dn_recipe *r, const dnnl_memory_desc_t *dst)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t ops = NULL;
    int ok = dnnl_primitive_attr_create(&attr) == dnnl_success
          && dnnl_post_ops_create(&ops) == dnnl_success;
    if (ok && r->scale != 1.0f)
        ok = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &r->scale) == dnnl_success;
    /* onednn-bf16: oneDNN may compute this f32 matmul with bf16 products
     * (its implicit down-conversion, where its CPU code has it); it may
     * also keep f32, which the mode allows. */
    if (ok && r->bf16)
        ok = dnnl_primitive_attr_set_fpmath_mode(attr, dnnl_fpmath_mode_bf16) == dnnl_success;
    if (ok && r->act != ATTN_ACT_NONE)
        ok = dnnl_post_ops_append_eltwise(ops, 1.0f, eltwise_of(r->act), 0.0f, 0.0f)
             == dnnl_success;
    if (ok && r->residual)
        ok = dnnl_post_ops_append_binary(ops, dnnl_binary_add, dst) == dnnl_success;
    if (ok)
        ok = dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
    if (ops)
        dnnl_post_ops_destroy(ops);
    if (!ok && attr) {
        dnnl_primitive_attr_destroy(attr);
        attr = NULL;
    }
    return attr;
}

/* The primitive of r, or NULL when oneDNN cannot create it. */
static dnnl_primitive_t create(const dn_recipe *r)
{
    pthread_once(&engine_once, engine_create);
    if (!engine)
        return NULL;
    dnnl_memory_desc_t md[3];
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    int ok = tensor_desc(r, 0, &md[0]);
    if (ok && r->kind == DN_MATMUL) {
        dnnl_memory_desc_t bias;
        dnnl_matmul_desc_t d;
        ok = tensor_desc(r, 1, &md[1]) && tensor_desc(r, 2, &md[2])
          && (!r->bias
              || dnnl_memory_desc_init_by_tag(&bias, 2, (dnnl_dims_t){ 1, r->dims[2][1] },
                                              dnnl_f32, dnnl_ab) == dnnl_success)
          && dnnl_matmul_desc_init(&d, &md[0], &md[1], r->bias ? &bias : NULL, &md[2])
                 == dnnl_success
          && (attr = matmul_attr(r, &md[2])) != NULL
          && dnnl_primitive_desc_create(&pd, &d, attr, engine, NULL) == dnnl_success;
    } else if (ok && r->kind == DN_SOFTMAX) {
        dnnl_softmax_v2_desc_t d;
        ok = dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference, dnnl_softmax_accurate,
                                               &md[0], &md[0], r->nd - 1) == dnnl_success
          && dnnl_primitive_desc_create(&pd, &d, NULL, engine, NULL) == dnnl_success;
    } else if (ok) {
        dnnl_layer_normalization_desc_t d;
        ok = dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md[0], NULL,
                                                        r->eps, dnnl_use_scale | dnnl_use_shift)
                 == dnnl_success
          && dnnl_primitive_desc_create(&pd, &d, NULL, engine, NULL) == dnnl_success;
    }
    dnnl_primitive_t prim = NULL;
    if (ok && dnnl_primitive_create(&prim, pd) != dnnl_success)
        prim = NULL;
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return prim;
}

static void state_free(void *state)
{
    dn_state *s = state;
    for (int i = 0; i < s->n; i++)
        dnnl_primitive_destroy(s->prim[i]);
    if (s->stream)
        dnnl_stream_destroy(s->stream);
    free(s);
}

/* The context's cache, created on first use; NULL without a context or
 * when it cannot be made (the call then creates its own primitives). */
static dn_state *state_of(const attn_exec *ex)
{
    if (!ex->state)
        return NULL;
    if (!*ex->state) {
        pthread_once(&engine_once, engine_create);
        dn_state *s = engine ? calloc(1, sizeof *s) : NULL;
        if (s && dnnl_stream_create(&s->stream, engine, dnnl_stream_default_flags)
                     != dnnl_success) {
            free(s);
            s = NULL;
        }
        *ex->state = s;
    }
    return *ex->state;
}

/* A primitive being run: from the cache, or made for this call (owned). */
typedef struct dn_call {
    dnnl_primitive_t prim;
    dnnl_stream_t stream;
    int owned;
} dn_call;

static int call_begin(const attn_exec *ex, const dn_recipe *r, dn_call *c)
{
    dn_state *s = state_of(ex);
    memset(c, 0, sizeof *c);
    if (s) {
        for (int i = 0; i < s->n; i++)
            if (memcmp(&s->key[i], r, sizeof *r) == 0) {
                c->prim = s->prim[i];
                c->stream = s->stream;
                return 1;
            }
        dnnl_primitive_t p = create(r);
        if (!p)
            return 0;
        int slot;
        if (s->n < DN_CACHE) {
            slot = s->n++;
        } else {   /* the oldest goes: no primitive is running between calls */
            slot = s->next;
            s->next = (s->next + 1) % DN_CACHE;
            dnnl_primitive_destroy(s->prim[slot]);
        }
        memcpy(&s->key[slot], r, sizeof *r);   /* bytewise, padding too: the key is compared so */
        s->prim[slot] = p;
        c->prim = p;
        c->stream = s->stream;
        return 1;
    }
    c->owned = 1;
    c->prim = create(r);
    if (c->prim && dnnl_stream_create(&c->stream, engine, dnnl_stream_default_flags)
                       == dnnl_success)
        return 1;
    if (c->prim)
        dnnl_primitive_destroy(c->prim);
    return 0;
}

static void call_end(dn_call *c)
{
    if (c->owned) {
        dnnl_stream_destroy(c->stream);
        dnnl_primitive_destroy(c->prim);
    }
}

/* Runs c with n arguments: arg[i] is tensor desc[i] of r (0..2; 3: a
 * [1][n] bias; 4: layernorm's [d] scale and shift) at ptr[i]. Returns 0
 * when a memory object cannot be made (nothing has run). */
typedef struct dn_arg { int arg, tensor; const void *ptr; } dn_arg;

static int execute(const dn_recipe *r, const dn_call *c, const dn_arg *args, int n)
{
    dnnl_exec_arg_t ea[6];
    int made = 0, ok = 1;
    for (; made < n && ok; made++) {
        dnnl_memory_desc_t md;
        int t = args[made].tensor;
        if (t < 3)
            ok = tensor_desc(r, t, &md);
        else
            ok = dnnl_memory_desc_init_by_tag(&md, t == 3 ? 2 : 1,
                                              t == 3 ? (dnnl_dims_t){ 1, r->dims[2][1] }
                                                     : (dnnl_dims_t){ r->dims[0][1] },
                                              dnnl_f32, t == 3 ? dnnl_ab : dnnl_a)
                 == dnnl_success;
        ea[made].arg = args[made].arg;
        ok = ok && dnnl_memory_create(&ea[made].memory, &md, engine, (void *)args[made].ptr)
                       == dnnl_success;
        if (!ok)
            break;
    }
    if (ok)
        ok = dnnl_primitive_execute(c->prim, c->stream, n, ea) == dnnl_success
          && dnnl_stream_wait(c->stream) == dnnl_success;
    for (int i = 0; i < made; i++)
        dnnl_memory_destroy(ea[i].memory);
    return ok;
}

/* oneDNN's threads for one call: the context's, then the caller's again. */
static int threads_begin(const attn_exec *ex)
{
    int saved = omp_get_max_threads();
    omp_set_num_threads(ex->n_threads);
    return saved;
}

/* Creates (or finds) r's primitive and runs it; 0 when it cannot. */
static int run(const attn_exec *ex, const dn_recipe *r, const dn_arg *args, int n)
{
    dn_call c;
    if (!call_begin(ex, r, &c))
        return 0;
    int ok = execute(r, &c, args, n);
    call_end(&c);
    return ok;
}

static void set2(int64_t *v, int64_t a, int64_t b)
{
    v[0] = a;
    v[1] = b;
}

static void set4(int64_t *v, int64_t a, int64_t b, int64_t c, int64_t d)
{
    v[0] = a;
    v[1] = b;
    v[2] = c;
    v[3] = d;
}

/* ---- GEMM ------------------------------------------------------------------- */

/* dnnl_sgemm (row-major) and attnbench's epilogue: the fallback. */
static void gemm_sgemm(const attn_gemm_problem *p)
{
    dnnl_sgemm('N', 'T', (dnnl_dim_t)p->m, p->n, p->k, 1.0f, p->x, (dnnl_dim_t)p->ldx, p->w,
               p->k, 0.0f, p->y, (dnnl_dim_t)p->ldy);
    const blk_gemm g = blk_gemm_of(p);
    blk_epilogue_rows(&g);
}

static void gemm(const attn_exec *ex, const attn_gemm_problem *p)
{
    dn_recipe r;
    memset(&r, 0, sizeof r);
    r.kind = DN_MATMUL;
    r.n_threads = ex->n_threads;
    r.bf16 = row_bf16(ex);
    r.nd = 2;
    set2(r.dims[0], (int64_t)p->m, p->k);
    set2(r.strides[0], (int64_t)p->ldx, 1);
    set2(r.dims[1], p->k, p->n);          /* W [n][k] read as Wᵀ */
    set2(r.strides[1], 1, p->k);
    set2(r.dims[2], (int64_t)p->m, p->n);
    set2(r.strides[2], (int64_t)p->ldy, 1);
    r.bias = p->bias != NULL;
    r.act = p->act;
    r.residual = p->residual != NULL;
    r.scale = 1.0f;
    dn_arg args[5] = {
        { DNNL_ARG_SRC, 0, p->x }, { DNNL_ARG_WEIGHTS, 1, p->w }, { DNNL_ARG_DST, 2, p->y },
    };
    int n = 3;
    if (r.bias)
        args[n++] = (dn_arg){ DNNL_ARG_BIAS, 3, p->bias };
    if (r.residual)   /* the binary post-op: after the eltwise one when there is one */
        args[n++] = (dn_arg){ DNNL_ARG_ATTR_MULTIPLE_POST_OP(r.act != ATTN_ACT_NONE)
                              | DNNL_ARG_SRC_1, 2, p->residual };
    int saved = threads_begin(ex);
    if (!param(ex, DN_PRIMITIVES) || !run(ex, &r, args, n))
        gemm_sgemm(p);
    omp_set_num_threads(saved);
}

/* ---- LayerNorm --------------------------------------------------------------- */

static void layernorm(const attn_exec *ex, size_t m, int d, const float *x, const float *gamma,
                      const float *beta, float eps, float *y)
{
    dn_recipe r;
    memset(&r, 0, sizeof r);
    r.kind = DN_LAYERNORM;
    r.n_threads = ex->n_threads;
    r.nd = 2;
    set2(r.dims[0], (int64_t)m, d);
    set2(r.strides[0], d, 1);
    r.eps = eps;
    /* Source and destination share the recipe's tensor 0 (same layout). */
    const dn_arg args[] = {
        { DNNL_ARG_SRC, 0, x }, { DNNL_ARG_DST, 0, y },
        { DNNL_ARG_SCALE, 4, gamma }, { DNNL_ARG_SHIFT, 4, beta },
    };
    int saved = threads_begin(ex);
    if (!param(ex, DN_PRIMITIVES) || !run(ex, &r, args, 4))
        attn_layernorm__portable(ex, m, d, x, gamma, beta, eps, y);
    omp_set_num_threads(saved);
}

/* ---- SDPA -------------------------------------------------------------------- */

/* The fallback's products: dnnl_sgemm on the calling thread (inside the
 * tiled attention's threads oneDNN runs it on one). */
static void product(const blk_gemm *g, const int *unused, float *pack)
{
    (void)unused;
    (void)pack;
    dnnl_sgemm('N', g->b_is_nk ? 'T' : 'N', (dnnl_dim_t)g->m, g->n, g->k, g->alpha, g->a,
               (dnnl_dim_t)g->lda, g->b, (dnnl_dim_t)g->ldb, 0.0f, g->c, (dnnl_dim_t)g->ldc);
}

static blk_sdpa_plan fallback_plan(const attn_exec *ex)
{
    blk_sdpa_plan sp = { .bq = param(ex, DN_BQ),
                         .decode_rows = ATTN_DECODE_ROWS_DEFAULT,
                         .prefetch = ATTN_PREFETCH_DEFAULT,
                         .row_prefetch = attn_row_prefetch_default(), .product = product };
    return sp;
}

/* The rows of one block: min(bq, Lq). */
static int block_rows(const attn_exec *ex, const attn_sdpa_problem *p)
{
    int bq = param(ex, DN_BQ);
    return bq < p->q_len ? bq : p->q_len;
}

/* Scores of a block, H x rows x Lk, then a byte per (head, row): 1 when
 * the mask hides every key of it. */
static size_t scores_floats(const attn_sdpa_problem *p, int rows)
{
    return (size_t)p->n_heads * (size_t)rows * (size_t)p->kv_len;
}

static size_t sdpa_scratch(const attn_exec *ex, const attn_sdpa_problem *p)
{
    blk_sdpa_plan sp = fallback_plan(ex);
    size_t fallback = blk_sdpa_scratch(ex, p, &sp);
    size_t rows = (size_t)block_rows(ex, p), bytes = sizeof(float);
    if (!attn_mul_checked(&bytes, scores_floats(p, (int)rows), SIZE_MAX)
        || !attn_add_checked(&bytes, (size_t)p->n_heads * rows, SIZE_MAX))
        return SIZE_MAX;
    return bytes > fallback ? bytes : fallback;
}

/* The three recipes of a block of rows: S = scale·Q·Kᵀ, softmax(S), O = S·V,
 * 4-D over (key/value head, head of its group, row, ·); K and V broadcast
 * over the group. */
static void block_recipes(const attn_exec *ex, const attn_sdpa_problem *p, int rows,
                          dn_recipe r[3])
{
    const int64_t hkv = attn_kv_heads(p), g = p->n_heads / hkv, lk = p->kv_len,
                  dh = p->head_dim, r64 = rows;
    for (int i = 0; i < 3; i++) {
        memset(&r[i], 0, sizeof r[i]);
        r[i].n_threads = ex->n_threads;
        r[i].bf16 = row_bf16(ex);
        r[i].nd = 4;
        r[i].scale = 1.0f;
    }
    const dnnl_dims_t s_dims = { hkv, g, r64, lk }, s_st = { g * r64 * lk, r64 * lk, lk, 1 };
    dn_recipe *qk = &r[0], *sm = &r[1], *pv = &r[2];
    qk->kind = DN_MATMUL;
    qk->act = ATTN_ACT_NONE;
    qk->scale = p->scale;
    set4(qk->dims[0], hkv, g, r64, dh);
    set4(qk->strides[0], g * (int64_t)p->q_st.head, (int64_t)p->q_st.head,
         (int64_t)p->q_st.row, 1);
    set4(qk->dims[1], hkv, 1, dh, lk);
    set4(qk->strides[1], (int64_t)p->k_st.head, (int64_t)p->k_st.head, 1, (int64_t)p->k_st.row);
    memcpy(qk->dims[2], s_dims, sizeof s_dims);
    memcpy(qk->strides[2], s_st, sizeof s_st);

    sm->kind = DN_SOFTMAX;
    memcpy(sm->dims[0], s_dims, sizeof s_dims);
    memcpy(sm->strides[0], s_st, sizeof s_st);

    pv->kind = DN_MATMUL;
    pv->act = ATTN_ACT_NONE;
    memcpy(pv->dims[0], s_dims, sizeof s_dims);
    memcpy(pv->strides[0], s_st, sizeof s_st);
    set4(pv->dims[1], hkv, 1, lk, dh);
    set4(pv->strides[1], (int64_t)p->v_st.head, (int64_t)p->v_st.head, (int64_t)p->v_st.row, 1);
    set4(pv->dims[2], hkv, g, r64, dh);
    set4(pv->strides[2], g * (int64_t)p->out_st.head, (int64_t)p->out_st.head,
         (int64_t)p->out_st.row, 1);
}

/* The mask on the scores of rows q0.. of batch b: hidden keys -INFINITY,
 * the bias added; dead[h·rows + i] = 1 when row i of head h sees no key. */
static void mask_block(const attn_exec *ex, const attn_sdpa_problem *p, int b, int q0, int rows,
                       float *s, unsigned char *dead)
{
    const long n = (long)p->n_heads * rows;
    const int lk = p->kv_len;
#pragma omp parallel for num_threads(ex->n_threads) schedule(static)
    for (long t = 0; t < n; t++) {
        int i = (int)(t % rows);
        float *row = s + (size_t)t * (size_t)lk;
        int visible = attn_mask_visible_keys(p->mask, q0 + i, p->q_len, lk);
        for (int j = visible; j < lk; j++)
            row[j] = -INFINITY;
        attn_rows_mask(p->mask, b, q0 + i, p->q_len, lk, 0, row, visible);
        int any = 0;
        for (int j = 0; j < visible; j++)
            any |= row[j] != -INFINITY;
        dead[t] = !any;
    }
}

/* Rows that see no key are zeros (api.md §1.2), not softmax's NaN. */
static void zero_dead_rows(const attn_sdpa_problem *p, int b, int q0, int rows,
                           const unsigned char *dead)
{
    for (int h = 0; h < p->n_heads; h++)
        for (int i = 0; i < rows; i++)
            if (dead[(size_t)h * rows + i])
                memset(p->out + (size_t)b * p->out_st.batch + (size_t)h * p->out_st.head
                           + (size_t)(q0 + i) * p->out_st.row,
                       0, sizeof(float) * (size_t)p->head_dim);
}

/* One block with the primitives; 0 when one cannot be created (nothing
 * written: the scores are the first thing computed, into scratch). */
static int sdpa_block(const attn_exec *ex, const attn_sdpa_problem *p, int b, int q0, int rows,
                      const dn_recipe r[3])
{
    float *s = ex->scratch;
    unsigned char *dead = (unsigned char *)(s + scores_floats(p, rows));
    const dn_arg qk[] = {
        { DNNL_ARG_SRC, 0, p->q + (size_t)b * p->q_st.batch + (size_t)q0 * p->q_st.row },
        { DNNL_ARG_WEIGHTS, 1, p->k + (size_t)b * p->k_st.batch },
        { DNNL_ARG_DST, 2, s },
    };
    const dn_arg sm[] = { { DNNL_ARG_SRC, 0, s }, { DNNL_ARG_DST, 0, s } };
    float *out = p->out + (size_t)b * p->out_st.batch + (size_t)q0 * p->out_st.row;
    const dn_arg pv[] = {
        { DNNL_ARG_SRC, 0, s },
        { DNNL_ARG_WEIGHTS, 1, p->v + (size_t)b * p->v_st.batch },
        { DNNL_ARG_DST, 2, out },
    };
    if (!run(ex, &r[0], qk, 3))
        return 0;
    if (p->mask)
        mask_block(ex, p, b, q0, rows, s, dead);
    /* Past the first product, a failure falls back for the whole call,
     * which rewrites every output row. */
    if (!run(ex, &r[1], sm, 2) || !run(ex, &r[2], pv, 3))
        return 0;
    if (p->mask)
        zero_dead_rows(p, b, q0, rows, dead);
    return 1;
}

static void sdpa(const attn_exec *ex, const attn_sdpa_problem *p)
{
    const int bq = block_rows(ex, p);
    const int last = p->q_len % bq;
    dn_recipe full[3], tail[3];
    block_recipes(ex, p, bq, full);
    if (last)
        block_recipes(ex, p, last, tail);
    int saved = threads_begin(ex), ok = param(ex, DN_PRIMITIVES);
    for (int b = 0; b < p->batch && ok; b++)
        for (int q0 = 0; q0 < p->q_len && ok; q0 += bq) {
            int rows = p->q_len - q0 < bq ? p->q_len - q0 : bq;
            ok = sdpa_block(ex, p, b, q0, rows, rows == bq ? full : tail);
        }
    omp_set_num_threads(saved);
    if (!ok) {
        blk_sdpa_plan sp = fallback_plan(ex);
        blk_sdpa(ex, p, &sp);
    }
}

/* The fields both rows share: the same primitives, threads and parameters. */
#define ONEDNN_ROW_SHARED                                                                          \
    .requires = 0,                                                                                 \
    .own_isa_dispatch = 1,       /* oneDNN picks its kernels by CPU at run time */                 \
    .parallel = 1,                                                                                 \
    .threads_reorder_sums = 1,   /* oneDNN splits a product's depth by its thread count */        \
    .params = params, .n_params = DN_N_PARAMS, .default_params = default_params,                 \
    .gemm = gemm, .sdpa = sdpa, .sdpa_scratch = sdpa_scratch, .layernorm = layernorm,             \
    .state_free = state_free,                                                                      \
    /* No register tile of attnbench's; the fallback's attention is the tiled one. */           \
    .geometry = { BLK_SDPA_GEOMETRY }

const attn_kernel attn_kernel__onednn = {
    .name = "onednn",
    .description = "oneDNN primitives: matmul with bias, activation and residual post-ops, "
                   "batched matmul + softmax attention, layer_normalization; cached per context",
    ONEDNN_ROW_SHARED,
};

/* The same primitives with fpmath_mode bf16 on every matmul: the bf16 math
 * a oneDNN user turns on with one attribute (api.md §9.3). */
const attn_kernel attn_kernel__onednn_bf16 = {
    .name = "onednn-bf16",
    .description = "onednn with its matmuls in fpmath_mode bf16 (bf16 products where oneDNN "
                   "has them for this CPU, else f32)",
    .math = ATTN_BF16,
    .data = &bf16_math,
    ONEDNN_ROW_SHARED,
};
