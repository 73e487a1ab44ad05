/*
 * test_concurrency.c — distinct contexts are independent (attn.h): several
 * threads, each with its own context of a different kernel (the threaded
 * ones with 2 OpenMP threads inside), call SDPA, MHA and the encoder layer
 * at the same time, repeatedly; every result must equal, bit for bit, what
 * the same context gives when it runs alone. Run by make test, and under
 * ThreadSanitizer by make test-tsan (which would see a shared mutable
 * state: a workspace, a lazily built table, the wisdom cache).
 */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "workload.h"

enum { N_WORKERS = 4, ROUNDS = 3 };

static const char *const shapes[] = {
    "op=sdpa,B=2,H=2,L=37,Dh=16,mask=causal",
    "op=mha,B=1,Lq=19,Lk=23,D=32,H=4,cross=1,mask=padding",
    "op=encoder,B=2,L=17,D=32,H=4,F=48,norm=pre,act=gelu,mask=keep",
};
enum { N_SHAPES = sizeof shapes / sizeof shapes[0] };

typedef struct worker {
    pthread_t thread;
    const char *kernel;
    const ab_workload *w;         /* [N_SHAPES], shared read-only */
    float *alone[N_SHAPES];       /* the results run alone */
    int mismatches, failures;
} worker;

static void *work(void *arg)
{
    worker *wk = arg;
    attn_ctx *ctx = NULL;
    if (attn_ctx_create(&ctx, wk->kernel, 2) != ATTN_OK) {
        wk->failures++;
        return NULL;
    }
    for (int r = 0; r < ROUNDS; r++)
        for (int s = 0; s < N_SHAPES; s++) {
            float *out = ab_alloc_floats(wk->w[s].out_len, 0);
            if (!out || ab_workload_run(ctx, &wk->w[s], out) != ATTN_OK)
                wk->failures++;
            else if (memcmp(out, wk->alone[s], wk->w[s].out_len * sizeof *out) != 0)
                wk->mismatches++;
            ab_free(out);
        }
    attn_ctx_destroy(ctx);
    return NULL;
}

void test_concurrency(void)
{
    ab_workload w[N_SHAPES];
    const char *kernels[64];
    int nk = t_kernels(kernels, 64);
    t_case("concurrency: %d threads, each its own context of a different kernel, at once",
           N_WORKERS);
    for (int s = 0; s < N_SHAPES; s++) {
        char err[256];
        if (t_workload(&w[s], shapes[s], 3 + s, 0, err, sizeof err) != 0) {
            CHECK(0, "setup of %s: %s", shapes[s], err);
            for (int i = 0; i < s; i++)
                ab_workload_free(&w[i]);
            return;
        }
    }
    worker wk[N_WORKERS];
    memset(wk, 0, sizeof wk);
    /* The fastest kernels first (kernels.def order), naive last, as many
     * distinct ones as there are workers. */
    for (int i = 0; i < N_WORKERS; i++) {
        wk[i].kernel = kernels[i % nk];
        wk[i].w = w;
        attn_ctx *ctx = NULL;
        CHECK_STATUS(attn_ctx_create(&ctx, wk[i].kernel, 2), ATTN_OK);
        for (int s = 0; ctx && s < N_SHAPES; s++) {
            wk[i].alone[s] = ab_alloc_floats(w[s].out_len, 0);
            CHECK(wk[i].alone[s] && ab_workload_run(ctx, &w[s], wk[i].alone[s]) == ATTN_OK,
                  "%s alone: %s fails", wk[i].kernel, shapes[s]);
        }
        attn_ctx_destroy(ctx);
    }
    for (int i = 0; i < N_WORKERS; i++)
        CHECK(pthread_create(&wk[i].thread, NULL, work, &wk[i]) == 0, "pthread_create");
    for (int i = 0; i < N_WORKERS; i++) {
        pthread_join(wk[i].thread, NULL);
        CHECK(wk[i].failures == 0 && wk[i].mismatches == 0,
              "%s beside the others: %d failed calls, %d results that differ from its run alone",
              wk[i].kernel, wk[i].failures, wk[i].mismatches);
        for (int s = 0; s < N_SHAPES; s++)
            ab_free(wk[i].alone[s]);
    }
    for (int s = 0; s < N_SHAPES; s++)
        ab_workload_free(&w[s]);
}
