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
};

static const int thread_counts[] = { 2, 3, 16 };

void test_threads(void)
{
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
