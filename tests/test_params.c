/*
 * test_params.c — kernel parameters: the API refuses unknown names and
 * out-of-range values and leaves the context as it was; and every kernel
 * stays correct (against naive) with its parameters at their minimum and at
 * small odd values, where every blocking loop has many partial blocks, on a
 * few shapes and on the edge shapes of its own tiles at those values
 * (ab_edge_shapes, from its row). And the generator covers every row: each
 * tile edge a row and its default params name is met by some shape.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "suites.h"
#include "verify.h"
#include "workload.h"

static const char *const shapes[] = {
    "op=sdpa,B=2,H=2,Lq=19,Lk=23,Dh=13,mask=all",
    "op=sdpa,B=3,H=1,Lq=70,Lk=70,Dh=16,mask=padall",
    "op=mha,B=2,Lq=11,Lk=17,D=20,H=2,cross=1,mask=padding",
    "op=encoder,B=1,L=13,D=18,H=3,F=29,norm=post,act=gelu-tanh,mask=causal",
};

static void test_param_api(const char *kernel)
{
    attn_ctx *ctx = NULL;
    attn_param_info info;
    int n = attn_kernel_param_count(kernel), v;
    t_case("params [%s]: info, set and get; bad names and values refused", kernel);
    CHECK_STATUS(attn_ctx_create(&ctx, kernel, 1), ATTN_OK);
    if (!ctx)
        return;
    CHECK_STATUS(attn_kernel_param_info(kernel, n, &info), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_kernel_param_info(kernel, -1, &info), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_set_param(ctx, "no-such-param", 1), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_get_param(ctx, "no-such-param", &v), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_set_param(NULL, "x", 1), ATTN_ERR_INVALID_ARG);
    for (int i = 0; i < n; i++) {
        CHECK_STATUS(attn_kernel_param_info(kernel, i, &info), ATTN_OK);
        CHECK(info.min <= info.default_value && info.default_value <= info.max,
              "%s default %d outside [%d, %d]", info.name, info.default_value, info.min, info.max);
        CHECK_STATUS(attn_ctx_get_param(ctx, info.name, &v), ATTN_OK);
        CHECK(v == info.default_value, "%s starts at %d, not the default %d", info.name, v,
              info.default_value);
        CHECK_STATUS(attn_ctx_set_param(ctx, info.name, info.max + 1), ATTN_ERR_INVALID_ARG);
        CHECK_STATUS(attn_ctx_set_param(ctx, info.name, info.min - 1), ATTN_ERR_INVALID_ARG);
        CHECK_STATUS(attn_ctx_get_param(ctx, info.name, &v), ATTN_OK);
        CHECK(v == info.default_value, "%s changed by a refused set", info.name);
        CHECK_STATUS(attn_ctx_set_param(ctx, info.name, info.min), ATTN_OK);
        CHECK_STATUS(attn_ctx_get_param(ctx, info.name, &v), ATTN_OK);
        CHECK(v == info.min, "%s set to %d reads %d", info.name, info.min, v);
    }
    attn_ctx_destroy(ctx);
}

/* kernel on s with the parameter values v, against naive. */
static void check_values(const char *kernel, int n, const int *v, const ab_shape *s, uint64_t seed)
{
    ab_workload w;
    if (ab_workload_init(&w, s, seed, 4) != 0) {
        CHECK(0, "setup: out of memory");
        return;
    }
    attn_ctx *ref_ctx = NULL, *ctx = NULL;
    float *ref = ab_alloc_floats(w.out_len, 0), *y = ab_alloc_floats(w.out_len, 4);
    CHECK_STATUS(attn_ctx_create(&ref_ctx, "naive", 1), ATTN_OK);
    CHECK_STATUS(attn_ctx_create(&ctx, kernel, 2), ATTN_OK);
    for (int i = 0; ctx && i < n; i++) {
        attn_param_info info;
        attn_kernel_param_info(kernel, i, &info);
        CHECK_STATUS(attn_ctx_set_param(ctx, info.name, v[i]), ATTN_OK);
    }
    if (ctx && ref_ctx && ref && y) {
        CHECK_STATUS(ab_workload_run(ref_ctx, &w, ref), ATTN_OK);
        CHECK_STATUS(ab_workload_run(ctx, &w, y), ATTN_OK);
        ab_verdict vd = ab_verify_kernel(kernel, &w.shape, y, ref, w.out_len, w.max_abs_v);
        CHECK(vd.ok, "max error %.3g exceeds %.3g", vd.max_err, vd.tol);
    }
    attn_ctx_destroy(ctx);
    attn_ctx_destroy(ref_ctx);
    ab_free(ref);
    ab_free(y);
    ab_workload_free(&w);
}

/* Every parameter at min + offset (clamped to its range): the shapes
 * above, then the edge shapes of the kernel's tiles at these values. */
static void test_values(const char *kernel, int offset)
{
    int n = attn_kernel_param_count(kernel), v[ATTN_MAX_PARAMS];
    for (int i = 0; i < n; i++) {
        attn_param_info info;
        attn_kernel_param_info(kernel, i, &info);
        v[i] = info.min + offset > info.max ? info.max : info.min + offset;
    }
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        ab_shape s;
        char err[256];
        t_case("params [%s]: all at min+%d, %s", kernel, offset, shapes[i]);
        if (ab_shape_parse(shapes[i], AB_OP_SDPA, &s, err, sizeof err) != 0)
            CHECK(0, "setup: %s", err);
        else
            check_values(kernel, n, v, &s, 11 + i);
    }
    ab_shape edges[AB_MAX_EDGE_SHAPES];
    int n_edges = ab_edge_shapes(attn_registry_find(kernel), v, edges, AB_MAX_EDGE_SHAPES);
    for (int i = 0; i < n_edges; i++) {
        char text[256];
        ab_shape_format(&edges[i], text, sizeof text);
        t_case("params [%s]: all at min+%d, tile edge %s", kernel, offset, text);
        check_values(kernel, n, v, &edges[i], 31 + (uint64_t)i);
    }
}

/* ---- The generator covers every row ---------------------------------------------- */

/* What a shape puts at an edge: gemm rows (B·L of mha and the encoder),
 * gemm widths and depths (D, and F), and attention's query rows, keys,
 * head dims and query rows per key/value head (SDPA). */
enum { GEMM_ROWS, GEMM_WIDTH, Q_ROWS, KEYS, HEAD_DIM, KV_ROWS };

static int meets(const ab_shape *s, int what, int v)
{
    int layer = s->op == AB_OP_MHA || s->op == AB_OP_ENCODER, sdpa = s->op == AB_OP_SDPA;
    switch (what) {
    case GEMM_ROWS: return layer && s->batch * s->q_len == v;
    case GEMM_WIDTH: return layer && (s->heads * s->head_dim == v || s->d_ff == v);
    case Q_ROWS: return sdpa && s->q_len == v;
    case KEYS: return sdpa && s->kv_len == v;
    case HEAD_DIM: return sdpa && s->head_dim == v;
    default: return sdpa && s->q_len * (s->heads / ab_shape_kv_heads(s)) == v;
    }
}

/* Some shape meets what at each of x − 1, x, x + 1 (x > 0; from - to + of
 * the neighbours asked for). */
static void covers(const char *kernel, const ab_shape *s, int n, int what, const char *name,
                   int x, int from, int to)
{
    for (int v = x + from; x > 0 && v <= x + to; v++) {
        int found = 0;
        for (int i = 0; i < n && !found; i++)
            found = meets(&s[i], what, v);
        CHECK(found || v < 1, "%s: no shape at %s %d (%s %+d)", kernel, name, v, name, v - x);
    }
}

/* The default of the kernel's parameter name in whole units (at least one;
 * unit 0: as it is), as the kernels round it; -1 when it has none. */
static int param_default(const char *kernel, const char *name, int unit)
{
    for (int i = 0; i < attn_kernel_param_count(kernel); i++) {
        attn_param_info info;
        attn_kernel_param_info(kernel, i, &info);
        if (strcmp(info.name, name) != 0)
            continue;
        if (unit <= 0)
            return info.default_value;
        return info.default_value / unit > 0 ? info.default_value / unit * unit : unit;
    }
    return -1;
}

static void test_edge_coverage(const attn_kernel *k)
{
    const attn_geometry *g = &k->geometry;
    ab_shape s[AB_MAX_EDGE_SHAPES];
    int n = ab_edge_shapes(k, NULL, s, AB_MAX_EDGE_SHAPES);
    t_case("edge shapes [%s]: %d, around every tile of its row, each well formed", k->name, n);
    CHECK((n > 0) == (g->mr || g->lanes), "%d shapes for a row %s geometry", n,
          g->mr || g->lanes ? "with" : "without");
    for (int i = 0; i < n; i++) {
        char text[256], err[256];
        ab_shape back;
        ab_shape_format(&s[i], text, sizeof text);
        CHECK(ab_shape_parse(text, AB_OP_SDPA, &back, err, sizeof err) == 0
              && memcmp(&back, &s[i], sizeof back) == 0, "%s does not round-trip", text);
        CHECK(ab_shape_flops(&s[i]) <= AB_EDGE_FLOPS, "%s: %.3g FLOPs", text, ab_shape_flops(&s[i]));
    }
    const int kc = param_default(k->name, "kc", 0), bq = param_default(k->name, "bq", g->attn_rows);
    const int bk = param_default(k->name, "bk", g->attn_keys);
    const int stream_from = param_default(k->name, "stream_from", 0);
    const int decode_rows = param_default(k->name, "decode_rows", 0);
    covers(k->name, s, n, GEMM_ROWS, "gemm rows", g->mr, -1, 1);
    covers(k->name, s, n, GEMM_WIDTH, "gemm width", g->nr ? g->nr : g->lanes, -1, 1);
    covers(k->name, s, n, GEMM_WIDTH, "gemm depth", g->mr ? kc : 0, -1, 1);
    covers(k->name, s, n, GEMM_ROWS, "gemm rows", g->mr ? param_default(k->name, "mc", g->mr) : 0,
           -1, 1);
    covers(k->name, s, n, GEMM_WIDTH, "gemm width", g->nr ? param_default(k->name, "nc", g->nr) : 0,
           -1, 1);
    covers(k->name, s, n, GEMM_ROWS, "skinny rows", g->skinny_rows, -1, 1);
    covers(k->name, s, n, GEMM_ROWS, "stream rows", param_default(k->name, "stream_rows", 0), -1, 1);
    covers(k->name, s, n, Q_ROWS, "query rows", bq, -1, 1);
    covers(k->name, s, n, Q_ROWS, "query rows", bq > 0 ? bq + g->attn_rows : 0, -1, 1);
    covers(k->name, s, n, KEYS, "keys", g->attn_keys ? g->attn_keys : g->lanes, -1, 1);
    covers(k->name, s, n, KEYS, "keys", kc, -1, 1);
    covers(k->name, s, n, KEYS, "keys", bk > 0 ? stream_from : 0, -1, 1);
    covers(k->name, s, n, HEAD_DIM, "head dim", g->nr, -1, 1);
    covers(k->name, s, n, HEAD_DIM, "head dim", g->lanes, -1, 1);
    covers(k->name, s, n, KV_ROWS, "query rows per key/value head", decode_rows, 0, 1);
    covers(k->name, s, n, KEYS, "decode keys", decode_rows >= 0 ? g->decode_split : 0, -1, 1);
    covers(k->name, s, n, KV_ROWS, "decode row group",
           decode_rows >= g->decode_row_group ? g->decode_row_group : 0, -1, 1);
    covers(k->name, s, n, HEAD_DIM, "decode row width", decode_rows >= 1 ? g->decode_row_width : 0,
           -1, 1);
}

void test_params(void)
{
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (!attn_kernel_supported(name))
            continue;
        test_param_api(name);
        if (attn_kernel_param_count(name) == 0)
            continue;
        test_values(name, 0);
        test_values(name, 5);
    }
    for (int i = 0; i < attn_registry_count(); i++)
        if (!attn_registry_get(i)->unavailable)
            test_edge_coverage(attn_registry_get(i));
}
