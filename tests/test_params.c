/*
 * test_params.c — kernel parameters: the API refuses unknown names and
 * out-of-range values and leaves the context as it was; and every kernel
 * stays correct (against naive) with its parameters at their minimum and at
 * small odd values, where every blocking loop has many partial blocks.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "verify.h"
#include "workload.h"

static const char *const shapes[] = {
    "op=sdpa,B=2,H=2,Lq=19,Lk=23,Dh=13,mask=all",
    /* Several key tiles even at the widest register tile (32): streaming
     * with online rescaling, causal tiles skipped, all-padding batches. */
    "op=sdpa,B=2,H=2,Lq=41,Lk=77,Dh=9,mask=all",
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

/* Every parameter at min + offset (clamped to its range). */
static void test_values(const char *kernel, int offset)
{
    int n = attn_kernel_param_count(kernel);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        ab_workload w;
        char err[256];
        t_case("params [%s]: all at min+%d, %s", kernel, offset, shapes[s]);
        if (t_workload(&w, shapes[s], 11 + s, 4, err, sizeof err) != 0) {
            CHECK(0, "setup: %s", err);
            continue;
        }
        attn_ctx *ref_ctx = NULL, *ctx = NULL;
        float *ref = ab_alloc_floats(w.out_len, 0), *y = ab_alloc_floats(w.out_len, 4);
        CHECK_STATUS(attn_ctx_create(&ref_ctx, "naive", 1), ATTN_OK);
        CHECK_STATUS(attn_ctx_create(&ctx, kernel, 2), ATTN_OK);
        for (int i = 0; ctx && i < n; i++) {
            attn_param_info info;
            attn_kernel_param_info(kernel, i, &info);
            int v = info.min + offset > info.max ? info.max : info.min + offset;
            CHECK_STATUS(attn_ctx_set_param(ctx, info.name, v), ATTN_OK);
        }
        if (ctx && ref_ctx && ref && y) {
            CHECK_STATUS(ab_workload_run(ref_ctx, &w, ref), ATTN_OK);
            CHECK_STATUS(ab_workload_run(ctx, &w, y), ATTN_OK);
            ab_verdict v = ab_verify(w.shape.op, y, ref, w.out_len, w.max_abs_v);
            CHECK(v.ok, "max error %.3g exceeds %.3g", v.max_err, v.tol);
        }
        attn_ctx_destroy(ctx);
        attn_ctx_destroy(ref_ctx);
        ab_free(ref);
        ab_free(y);
        ab_workload_free(&w);
    }
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
}
