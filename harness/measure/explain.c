/*
 * explain.c — the dry run behind `attnbench explain`, and its measured
 * calls (explain.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain.h"
#include "stats.h"
#include "timer.h"
#include "topology.h"
#include "workload.h"

/* One explained call (or, with times, reps measured ones after a warm-up)
 * on a traced context with the n_ps settings ps (each one the context's
 * kernel must have); 0, or -1 with err. */
static int explain_calls(const ab_workload *w, const char *kernel, int n_threads,
                         const ab_param_setting *ps, int n_ps, attn_trace *trace,
                         ab_explain_times *times, char *kernel_out, size_t kernel_len, char *err,
                         size_t err_len)
{
    attn_trace_clear(trace);
    trace->measure = times != NULL;
    if (times) {
        times->region_s = NULL;
        if (times->reps < 1) {
            snprintf(err, err_len, "measured calls %d: at least 1", times->reps);
            return -1;
        }
    }
    if (kernel_out && kernel_len)
        kernel_out[0] = '\0';
    if (n_threads < 1) {
        snprintf(err, err_len, "threads %d: at least 1", n_threads);
        return -1;
    }
    const int reps = times ? times->reps : 0;
    const ab_topology *topo = times ? times->topo : NULL;
    char terr[256];
    if (topo && n_threads > topo->cores) {
        /* More threads than cores would time the OS's sharing of them. */
        snprintf(err, err_len, "a measured call runs: at most %d threads here", topo->cores);
        return -1;
    }
    attn_ctx *ctx = NULL;
    attn_packed_weights *packed = NULL;
    float *out = NULL;
    double *per_call = NULL;   /* reps rows: the call, before its first region, each region */
    /* A measured call runs as `run` times it: its threads on the first
     * n_threads cores (this one on core 0), the weights packed. */
    if (topo)
        (void)ab_bind_cores(topo, n_threads, terr, sizeof terr);
    attn_status st = attn_ctx_create_traced(&ctx, kernel ? kernel : "auto", n_threads, trace);
    if (topo)
        (void)ab_pin_main_thread(topo, terr, sizeof terr);
    /* Set before the weights are packed: a blocking parameter (kc) decides
     * how they are cut. Each must be the kernel's (strict). */
    if (st == ATTN_OK && ab_params_apply(&ab_library_self, ctx, ps, n_ps, 1, err, err_len) != 0) {
        attn_ctx_destroy(ctx);
        return -1;
    }
    if (st == ATTN_OK && times) {
        st = ab_workload_pack(ctx, w, &packed);
        attn_trace_clear(trace);   /* the calls' regions only, not the packing's */
    }
    if (st == ATTN_OK && !(out = ab_alloc_floats(w->out_len, 0)))
        st = ATTN_ERR_NO_MEMORY;
    if (st == ATTN_OK)
        st = ab_workload_run(ctx, w, out);   /* the dry run, or the warm-up */
    const int n = trace->n;
    if (st == ATTN_OK && reps > 0 && !trace->failed
        && !(per_call = malloc((size_t)reps * (size_t)(n + 2) * sizeof *per_call)))
        st = ATTN_ERR_NO_MEMORY;
    int rc = 0;
    for (int r = 0; st == ATTN_OK && r < reps && !trace->failed; r++) {
        attn_trace_clear(trace);
        double t0 = ab_now();
        st = ab_workload_run(ctx, w, out);
        double t1 = ab_now();
        if (st != ATTN_OK || trace->failed)
            break;
        if (trace->n != n) {   /* the same call must run the same regions */
            snprintf(err, err_len, "calls ran %d and then %d parallel regions", n, trace->n);
            rc = -1;
            break;
        }
        /* A region lasts from its offer to the next region's (not a
         * phase: that is inside it) or to the call's end. */
        double *row = per_call + (size_t)r * (size_t)(n + 2);
        row[0] = t1 - t0;
        row[1] = n ? trace->regions[0].offered_s - t0 : row[0];
        for (int i = n - 1, next = -1; i >= 0; i--) {
            const attn_region *g = &trace->regions[i];
            row[2 + i] = g->after_barrier ? 0.0
                       : (next < 0 ? t1 : trace->regions[next].offered_s) - g->offered_s;
            if (!g->after_barrier)
                next = i;
        }
    }
    const char *ran = ctx ? attn_ctx_last_choice(ctx, NULL) : NULL;
    if (ran && kernel_out)
        snprintf(kernel_out, kernel_len, "%s", ran);
    if (rc != 0)
        ;   /* the calls disagreed: err says how */
    else if (st == ATTN_ERR_UNSUPPORTED && ran) {
        snprintf(err, err_len, "kernel %s does not describe its thread split (a library's own "
                 "threading, or loops explain does not know)", ran);
        rc = -1;
    } else if (st != ATTN_OK) {
        snprintf(err, err_len, "%s", attn_strerror(st));
        rc = -1;
    } else if (trace->failed) {
        snprintf(err, err_len, "out of memory while recording the regions");
        rc = -1;
    } else if (times) {
        times->region_s = malloc((size_t)(n ? n : 1) * sizeof *times->region_s);
        double *column = malloc((size_t)reps * sizeof *column);
        if (!times->region_s || !column) {
            free(times->region_s);
            times->region_s = NULL;
            snprintf(err, err_len, "out of memory");
            rc = -1;
        } else {
            for (int c = 0; c < n + 2; c++) {
                for (int r = 0; r < reps; r++)
                    column[r] = per_call[(size_t)r * (size_t)(n + 2) + (size_t)c];
                double m = ab_median_inplace(column, reps);
                if (c == 0)
                    times->call_s = m;
                else if (c == 1)
                    times->before_s = m;
                else
                    times->region_s[c - 2] = m;
            }
        }
        free(column);
    }
    free(per_call);
    ab_free(out);
    attn_weights_destroy(packed);
    attn_ctx_destroy(ctx);
    return rc;
}

int ab_explain_workload(const ab_workload *w, const char *kernel, int n_threads,
                        const ab_param_setting *ps, int n_ps, attn_trace *trace,
                        char *kernel_out, size_t kernel_len, char *err, size_t err_len)
{
    return explain_calls(w, kernel, n_threads, ps, n_ps, trace, NULL, kernel_out, kernel_len, err,
                         err_len);
}

int ab_explain_measure(const ab_workload *w, const char *kernel, int n_threads,
                       attn_trace *trace, ab_explain_times *times, char *kernel_out,
                       size_t kernel_len, char *err, size_t err_len)
{
    return explain_calls(w, kernel, n_threads, NULL, 0, trace, times, kernel_out, kernel_len,
                         err, err_len);
}

int ab_explain_shape(const ab_shape *s, const char *kernel, int n_threads,
                     const ab_param_setting *ps, int n_ps, attn_trace *trace,
                     ab_explain_times *times, char *kernel_out, size_t kernel_len, char *err,
                     size_t err_len)
{
    ab_workload w;
    if (ab_workload_init(&w, s, 1, 0) != 0) {
        attn_trace_clear(trace);
        snprintf(err, err_len, "out of memory for the shape's inputs");
        return -1;
    }
    int rc = explain_calls(&w, kernel, n_threads, ps, n_ps, trace, times, kernel_out, kernel_len,
                           err, err_len);
    ab_workload_free(&w);
    return rc;
}

double ab_explain_worst(const attn_trace *trace, int *n_counted)
{
    double worst = 0.0;
    int n = 0;
    for (int i = 0; i < trace->n; i++) {
        const attn_region *r = &trace->regions[i];
        if (attn_region_units(r) < r->n_threads)
            continue;
        n++;
        double im = attn_region_imbalance(r);
        worst = im > worst ? im : worst;
    }
    if (n_counted)
        *n_counted = n;
    return worst;
}
