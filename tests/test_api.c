/*
 * test_api.c — the rules of the front door (api.md §2): status texts, the
 * kernel registry, context creation and kernel selection (auto, by name, by
 * ATTN_KERNEL), and workspace reuse across calls.
 */
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void test_strerror(void)
{
    t_case("attn_strerror: non-empty text for every status and for non-statuses");
    int values[] = { ATTN_OK, ATTN_ERR_INVALID_ARG, ATTN_ERR_NO_MEMORY, ATTN_ERR_UNSUPPORTED,
                     ATTN_ERR_OVERFLOW, -1, 5, 1000 };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        const char *s = attn_strerror((attn_status)values[i]);
        CHECK(s && s[0], "empty text for %d", values[i]);
    }
    CHECK(strcmp(attn_strerror(ATTN_OK), attn_strerror(ATTN_ERR_OVERFLOW)) != 0,
          "statuses share a text");
}

static void test_registry(void)
{
    int n = attn_kernel_count();
    t_case("registry: names are unique, lowercase, and NULL outside [0, count)");
    CHECK(n >= 1, "count %d", n);
    CHECK(attn_kernel_name(-1) == NULL, "name(-1) not NULL");
    CHECK(attn_kernel_name(n) == NULL, "name(count) not NULL");
    for (int i = 0; i < n; i++) {
        const char *name = attn_kernel_name(i);
        CHECK(name && name[0], "kernel %d has no name", i);
        if (!name)
            continue;
        for (const char *c = name; *c; c++)
            CHECK(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '-',
                  "name '%s' is not short lowercase", name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(name, attn_kernel_name(j)) != 0, "duplicate name %s", name);
    }

    t_case("registry: naive is registered, runs everywhere, and is the last row");
    CHECK(n >= 1 && strcmp(attn_kernel_name(n - 1), "naive") == 0, "last row is not naive");
    CHECK(attn_kernel_supported("naive") == 1, "naive not supported");
    CHECK(attn_kernel_supported(NULL) == 0, "NULL supported");
    CHECK(attn_kernel_supported("no-such-kernel") == 0, "unknown name supported");
    CHECK(attn_kernel_supported("") == 0, "empty name supported");
}

static void test_ctx_create(void)
{
    attn_ctx *ctx = NULL;
    attn_ctx *const sentinel = (attn_ctx *)(uintptr_t)0x1234;

    unsetenv("ATTN_KERNEL");
    t_case("attn_ctx_create: NULL out pointer and negative threads are invalid");
    CHECK_STATUS(attn_ctx_create(NULL, "naive", 0), ATTN_ERR_INVALID_ARG);
    ctx = sentinel;
    CHECK_STATUS(attn_ctx_create(&ctx, "naive", -1), ATTN_ERR_INVALID_ARG);
    CHECK(ctx == sentinel, "ctx written on failure");
    /* Past ATTN_MAX_THREADS: refused, where OpenMP exited the process (a
     * team of 2^31 - 1 threads) or crashed (10^8). The avx2 kernel starts
     * its team at creation, so the refusal must come first. */
    CHECK_STATUS(attn_ctx_create(&ctx, NULL, ATTN_MAX_THREADS + 1), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_ctx_create(&ctx, NULL, INT_MAX), ATTN_ERR_INVALID_ARG);
    CHECK(ctx == sentinel, "ctx written on failure");

    t_case("attn_ctx_create: an unknown kernel is unsupported and creates nothing");
    ctx = sentinel;
    CHECK_STATUS(attn_ctx_create(&ctx, "no-such-kernel", 1), ATTN_ERR_UNSUPPORTED);
    CHECK(ctx == sentinel, "ctx written on failure");

    t_case("attn_ctx_create: a registered kernel that cannot run here is unsupported");
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (attn_kernel_supported(name))
            continue;
        ctx = sentinel;
        CHECK_STATUS(attn_ctx_create(&ctx, name, 1), ATTN_ERR_UNSUPPORTED);
        CHECK(ctx == sentinel, "ctx written on failure");
    }

    t_case("attn_ctx_create: NULL and \"auto\" pick the first runnable fp32 row");
    const char *first = NULL;
    for (int i = 0; i < attn_kernel_count() && !first; i++)
        if (attn_kernel_supported(attn_kernel_name(i))
            && attn_kernel_math(attn_kernel_name(i)) == ATTN_F32)
            first = attn_kernel_name(i);
    const char *choices[] = { NULL, "auto" };
    for (int i = 0; i < 2; i++) {
        ctx = NULL;
        CHECK_STATUS(attn_ctx_create(&ctx, choices[i], 0), ATTN_OK);
        CHECK(ctx && first && strcmp(attn_ctx_kernel(ctx), first) == 0, "auto chose %s, not %s",
              ctx ? attn_ctx_kernel(ctx) : "(none)", first ? first : "(none)");
        attn_ctx_destroy(ctx);
    }

    t_case("attn_ctx_create: every runnable kernel by name, with 1 and 2 threads");
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *name = attn_kernel_name(i);
        if (!attn_kernel_supported(name))
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            ctx = NULL;
            CHECK_STATUS(attn_ctx_create(&ctx, name, threads), ATTN_OK);
            CHECK(ctx && strcmp(attn_ctx_kernel(ctx), name) == 0, "kernel %s", name);
            attn_ctx_destroy(ctx);
        }
    }

    t_case("ATTN_KERNEL: overrides auto, not an explicit name; unknown is an error");
    setenv("ATTN_KERNEL", "naive", 1);
    ctx = NULL;
    CHECK_STATUS(attn_ctx_create(&ctx, NULL, 1), ATTN_OK);
    CHECK(ctx && strcmp(attn_ctx_kernel(ctx), "naive") == 0, "ATTN_KERNEL=naive ignored");
    attn_ctx_destroy(ctx);
    setenv("ATTN_KERNEL", "no-such-kernel", 1);
    ctx = sentinel;
    CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_ERR_UNSUPPORTED);
    CHECK(ctx == sentinel, "ctx written on failure");
    ctx = NULL;
    CHECK_STATUS(attn_ctx_create(&ctx, "naive", 1), ATTN_OK);
    attn_ctx_destroy(ctx);
    setenv("ATTN_KERNEL", "auto", 1);
    ctx = NULL;
    CHECK_STATUS(attn_ctx_create(&ctx, NULL, 1), ATTN_OK);
    attn_ctx_destroy(ctx);
    unsetenv("ATTN_KERNEL");

    t_case("attn_ctx_kernel(NULL) is NULL; attn_ctx_destroy(NULL) is a no-op");
    CHECK(attn_ctx_kernel(NULL) == NULL, "not NULL");
    attn_ctx_destroy(NULL);
}

/* One context serving calls of growing and shrinking sizes must give what
 * fresh contexts give: the workspace is reused, never stale. */
static void test_workspace_reuse(void)
{
    const char *kernels[64];
    int nk = t_kernels(kernels, 64);
    const int dims[][5] = { { 1, 2, 3, 5, 4 }, { 2, 3, 17, 33, 8 }, { 1, 1, 2, 2, 3 } };
    uint64_t seed = 42;

    for (int ki = 0; ki < nk; ki++) {
        t_case("one context reused across SDPA calls of different sizes [%s]", kernels[ki]);
        attn_ctx *shared = NULL;
        CHECK_STATUS(attn_ctx_create(&shared, kernels[ki], 0), ATTN_OK);
        for (int c = 0; c < 3 && shared; c++) {
            attn_sdpa_shape s = { dims[c][0], dims[c][1], dims[c][2], dims[c][3], dims[c][4], 0.0f, 0, 0 };
            size_t nq = (size_t)s.batch * s.n_heads * s.q_len * s.head_dim;
            size_t nkv = (size_t)s.batch * s.n_heads * s.kv_len * s.head_dim;
            float *q = t_alloc(nq, 4, 0), *k = t_alloc(nkv, 4, 0), *v = t_alloc(nkv, 4, 0);
            float *o1 = t_alloc(nq, 4, 0), *o2 = t_alloc(nq, 4, 0);
            t_fill(q, nq, 1, &seed);
            t_fill(k, nkv, 1, &seed);
            t_fill(v, nkv, 1, &seed);
            attn_ctx *fresh = NULL;
            CHECK_STATUS(attn_ctx_create(&fresh, kernels[ki], 0), ATTN_OK);
            CHECK_STATUS(attn_sdpa(shared, &s, q, k, v, NULL, o1), ATTN_OK);
            CHECK_STATUS(attn_sdpa(fresh, &s, q, k, v, NULL, o2), ATTN_OK);
            CHECK(memcmp(o1, o2, nq * sizeof(float)) == 0, "shape %d differs", c);
            attn_ctx_destroy(fresh);
            t_free(q), t_free(k), t_free(v), t_free(o1), t_free(o2);
        }
        attn_ctx_destroy(shared);
    }
}

void test_api(void)
{
    test_strerror();
    test_registry();
    test_ctx_create();
    test_workspace_reuse();
}
