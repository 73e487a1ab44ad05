/*
 * explain.c — the dry run behind `attnbench explain` (explain.h).
 */
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "workload.h"

int ab_explain_workload(const ab_workload *w, const char *kernel, int n_threads,
                        attn_trace *trace, char *kernel_out, size_t kernel_len, char *err,
                        size_t err_len)
{
    attn_trace_clear(trace);
    if (kernel_out && kernel_len)
        kernel_out[0] = '\0';
    if (n_threads < 1) {
        snprintf(err, err_len, "threads %d: at least 1", n_threads);
        return -1;
    }
    attn_ctx *ctx = NULL;
    float *out = NULL;
    attn_status st = attn_ctx_create_traced(&ctx, kernel ? kernel : "auto", n_threads, trace);
    if (st == ATTN_OK && !(out = ab_alloc_floats(w->out_len, 0)))
        st = ATTN_ERR_NO_MEMORY;
    if (st == ATTN_OK)
        st = ab_workload_run(ctx, w, out);
    const char *ran = ctx ? attn_ctx_last_choice(ctx, NULL) : NULL;
    if (ran && kernel_out)
        snprintf(kernel_out, kernel_len, "%s", ran);
    int rc = 0;
    if (st == ATTN_ERR_UNSUPPORTED && ran) {
        snprintf(err, err_len, "kernel %s does not describe its thread split (a library's own "
                 "threading, or loops explain does not know)", ran);
        rc = -1;
    } else if (st != ATTN_OK) {
        snprintf(err, err_len, "%s", attn_strerror(st));
        rc = -1;
    } else if (trace->failed) {
        snprintf(err, err_len, "out of memory while recording the regions");
        rc = -1;
    }
    ab_free(out);
    attn_ctx_destroy(ctx);
    return rc;
}

int ab_explain_shape(const ab_shape *s, const char *kernel, int n_threads, attn_trace *trace,
                     char *kernel_out, size_t kernel_len, char *err, size_t err_len)
{
    ab_workload w;
    if (ab_workload_init(&w, s, 1, 0) != 0) {
        attn_trace_clear(trace);
        snprintf(err, err_len, "out of memory for the shape's inputs");
        return -1;
    }
    int rc = ab_explain_workload(&w, kernel, n_threads, trace, kernel_out, kernel_len, err,
                                 err_len);
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
