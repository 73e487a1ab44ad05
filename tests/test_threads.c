/*
 * test_threads.c — every kernel that uses threads gives, with 2, 3 and 16
 * threads (more than this machine's cores: the 2-D GEMM splits and the
 * attention's chunks of a head that only many threads choose), the
 * results it gives with 1 (api.md §2: within §4's bound; the
 * kernels of attnbench's are in fact bitwise equal, which is checked too,
 * since each output element is reduced by one thread in a fixed order; a
 * library kernel whose row says threads_reorder_sums is held to the bound
 * alone).
 */
#include <string.h>

#include "check.h"
#include "kernel.h"
#include "verify.h"
#include "workload.h"

static const char *const shapes[] = {
    "op=sdpa,B=2,H=3,Lq=37,Lk=53,Dh=24,mask=all",
    "op=sdpa,B=1,H=2,L=130,Dh=64,mask=causal",
    /* a decoding step on the decode path: 2 key/value heads × 3 splits of
     * the keys shared among the threads, then merged */
    "op=sdpa,B=1,H=8,Hkv=2,Lq=1,Lk=1500,Dh=64,mask=causal-br",
    "op=mha,B=2,Lq=19,Lk=33,D=48,H=4,cross=1,mask=padding",
    "op=encoder,B=3,L=21,D=40,H=5,F=72,norm=pre,act=gelu,mask=keep",
    "op=encoder,B=1,L=67,D=64,H=4,F=160,norm=post,act=relu,mask=none",
    /* 300 rows (past the streamed gemm's 256) of 96 to 288 columns: 2-D
     * splits of the packed gemm at 16 threads */
    "op=encoder,B=3,L=100,D=96,H=2,F=192,norm=pre,act=gelu,mask=none",
    /* the FFN's second product over rows of 1024 floats, which crowd L1
     * and are packed: at 16 threads 5 row groups of 3 threads (avx2), 4
     * of 4 (blocked), each group sharing its packed rows */
    "op=encoder,B=3,L=100,D=96,H=2,F=1024,norm=pre,act=relu,mask=none",
    /* post-LN: the LayerNorms in the products' regions (packed, streamed
     * and, for a decoding step's 6 rows, skinny gemms) */
    "op=encoder,B=3,L=100,D=96,H=2,F=192,norm=post,act=gelu,mask=none",
    "op=decoder,B=2,L=3,M=40,D=64,H=4,F=96,norm=post",
};

static const int thread_counts[] = { 2, 3, 16 };

/* gemm with ln_out (kernel.h: the LayerNorm in the gemm's own region,
 * after a barrier) gives bit for bit the gemm followed by the row's
 * layernorm call, and with ln_in the layernorm call followed by the gemm,
 * on each gemm path (skinny, streamed, packed; for the bf16 rows also
 * their fp32 skinny path) and at 1, 3 and 16 threads; the gemm's own
 * output is unchanged by ln_out. */
static void test_gemm_layernorm(const attn_kernel *k)
{
    static const int rows[] = { 3, 100, 300 };
    const int n = 96, kk = 80;
    int params[ATTN_MAX_PARAMS];
    if (k->n_params)
        k->default_params(params);
    for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        const size_t m = (size_t)rows[r];
        t_case("threads [%s]: gemm of %zu rows with a LayerNorm in its region (after, before) "
               "equals the gemm and a layernorm call, at 1, 3, 16 threads", k->name, m);
        uint64_t seed = 3 + r;
        float *x = t_alloc(m * kk, sizeof(float), 0), *w = t_alloc((size_t)n * kk, sizeof(float), 0);
        float *bias = t_alloc((size_t)n, sizeof(float), 0), *res = t_alloc(m * n, sizeof(float), 0);
        float *gamma = t_alloc((size_t)n, sizeof(float), 0), *beta = t_alloc((size_t)n, sizeof(float), 0);
        float *y0 = t_alloc(m * n, sizeof(float), 0), *ln0 = t_alloc(m * n, sizeof(float), 0);
        float *y1 = t_alloc(m * n, sizeof(float), 0), *ln1 = t_alloc(m * n, sizeof(float), 0);
        if (!x || !w || !bias || !res || !gamma || !beta || !y0 || !ln0 || !y1 || !ln1)
            goto next;
        t_fill(x, m * kk, 1.0f, &seed);
        t_fill(w, (size_t)n * kk, 0.3f, &seed);
        t_fill(bias, (size_t)n, 0.3f, &seed);
        t_fill(res, m * n, 2.0f, &seed);
        t_fill(gamma, (size_t)n, 1.0f, &seed);
        t_fill(beta, (size_t)n, 0.5f, &seed);
        for (int threads = 1; threads <= 16; threads = threads == 1 ? 3 : threads == 3 ? 16 : 17) {
            attn_exec ex = { .n_threads = threads, .params = params, .data = k->data };
            ex.scratch_bytes = k->gemm_scratch ? k->gemm_scratch(&ex, m, n, kk) : 0;
            ex.scratch = ex.scratch_bytes ? t_alloc(ex.scratch_bytes, 1, 0) : NULL;
            if (ex.scratch_bytes && !ex.scratch)
                continue;
            attn_gemm_problem p = { .m = m, .n = n, .k = kk, .x = x, .ldx = (size_t)kk, .w = w,
                                    .bias = bias, .act = ATTN_ACT_NONE, .residual = res, .y = y0,
                                    .ldy = (size_t)n };
            k->gemm(&ex, &p);
            attn_exec lex = { .n_threads = threads, .params = params, .data = k->data };
            k->layernorm(&lex, m, n, y0, gamma, beta, 1e-5f, ln0);
            p.y = y1;
            p.ln_gamma = gamma, p.ln_beta = beta, p.ln_eps = 1e-5f, p.ln_out = ln1;
            memset(ln1, 0xff, m * n * sizeof(float));
            k->gemm(&ex, &p);
            CHECK(memcmp(y0, y1, m * n * sizeof(float)) == 0, "%d threads: the gemm's output "
                  "changed (max %g)", threads, t_max_diff(y0, y1, m * n));
            CHECK(memcmp(ln0, ln1, m * n * sizeof(float)) == 0, "%d threads: the LayerNorm "
                  "differs (max %g)", threads, t_max_diff(ln0, ln1, m * n));
            /* before: x0 = LayerNorm(x), y0 = x0·Wᵀ…, against both in one call */
            float *x0 = t_alloc(m * kk, sizeof(float), 0), *x1 = t_alloc(m * kk, sizeof(float), 0);
            if (x0 && x1) {
                k->layernorm(&lex, m, kk, x, gamma, beta, 1e-5f, x0);
                attn_gemm_problem q = { .m = m, .n = n, .k = kk, .x = x0, .ldx = (size_t)kk, .w = w,
                                        .bias = bias, .act = ATTN_ACT_NONE, .residual = res,
                                        .y = y0, .ldy = (size_t)n };
                k->gemm(&ex, &q);
                memset(x1, 0xff, m * kk * sizeof(float));
                q.x = NULL, q.y = y1;
                q.ln_gamma = gamma, q.ln_beta = beta, q.ln_eps = 1e-5f, q.ln_in = x, q.x_ln = x1;
                k->gemm(&ex, &q);
                CHECK(memcmp(x0, x1, m * kk * sizeof(float)) == 0
                          && memcmp(y0, y1, m * n * sizeof(float)) == 0,
                      "%d threads: LayerNorm before the product differs (x max %g, y max %g)",
                      threads, t_max_diff(x0, x1, m * kk), t_max_diff(y0, y1, m * n));
            }
            t_free(x0), t_free(x1);
            t_free(ex.scratch);
        }
    next:
        t_free(x), t_free(w), t_free(bias), t_free(res), t_free(gamma), t_free(beta);
        t_free(y0), t_free(ln0), t_free(y1), t_free(ln1);
    }
}

void test_threads(void)
{
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (k->gemm_layernorm && attn_registry_runnable(k))
            test_gemm_layernorm(k);
    }

    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (!k->parallel || !attn_registry_runnable(k))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            char err[256];
            ab_workload w;
            t_case("threads [%s]: %s with 1, 2, 3, 16 threads", k->name, shapes[s]);
            if (t_workload(&w, shapes[s], 7 + s, 0, err, sizeof err) != 0) {
                CHECK(0, "setup: %s", err);
                continue;
            }
            float *one = t_run_kernel(k->name, 1, &w);
            for (size_t ti = 0; one && ti < sizeof thread_counts / sizeof *thread_counts; ti++) {
                const int t = thread_counts[ti];
                float *many = t_run_kernel(k->name, t, &w);
                if (!many)
                    continue;
                ab_verdict v = ab_verify(w.shape.op, many, one, w.out_len, w.max_abs_v);
                CHECK(v.ok, "%d threads differ from 1 by %.3g (bound %.3g)", t, v.max_err, v.tol);
                CHECK(k->threads_reorder_sums
                          || memcmp(many, one, w.out_len * sizeof(float)) == 0,
                      "%d threads not bitwise equal to 1 (max diff %.3g)", t, v.max_err);
                ab_free(many);
            }
            ab_free(one);
            ab_workload_free(&w);
        }
    }
}
