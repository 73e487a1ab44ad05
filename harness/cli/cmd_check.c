/*
 * cmd_check.c — `attnbench check`: every runnable kernel × op × the check
 * suite, then each kernel on the edge shapes of its own tiles
 * (ab_edge_shapes), against the naive oracle, with api.md §4's bound.
 *
 * Each case runs twice: with every core and aligned buffers, and with one
 * thread and buffers 4 bytes past alignment, so that results are checked to
 * be independent of the thread count and of the input addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "select.h"
#include "suites.h"
#include "verify.h"
#include "workload.h"

#define SEED 20261122u

typedef struct variant {
    const char *label;
    int threads;         /* 0 = every core */
    size_t misalign;
} variant;

static const variant variants[] = {
    { "aligned, all cores", 0, 0 },
    { "unaligned, 1 thread", 1, 4 },
};

/* The oracle's output for s, or NULL with a message. */
static float *reference(const ab_shape *s, char *err, size_t len)
{
    ab_workload w;
    attn_ctx *ctx = NULL;
    float *ref = NULL;
    if (ab_workload_init(&w, s, SEED, 0) != 0) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    attn_status st = attn_ctx_create(&ctx, "naive", 1);
    if (st == ATTN_OK && (ref = ab_alloc_floats(w.out_len, 0)) != NULL)
        st = ab_workload_run(ctx, &w, ref);
    if (st != ATTN_OK || !ref) {
        snprintf(err, len, "oracle failed: %s", st != ATTN_OK ? attn_strerror(st) : "out of memory");
        ab_free(ref);
        ref = NULL;
    }
    attn_ctx_destroy(ctx);
    ab_workload_free(&w);
    return ref;
}

/* Runs kernel k on s in one variant; fills the verdict, or returns -1 with err. */
static int run_variant(const attn_kernel *k, const ab_shape *s, const variant *v, const float *ref,
                       ab_verdict *out, char *err, size_t len)
{
    ab_workload w;
    attn_ctx *ctx = NULL;
    float *y = NULL;
    int rc = -1;
    if (ab_workload_init(&w, s, SEED, v->misalign) != 0) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    attn_status st = attn_ctx_create(&ctx, k->name, v->threads);
    if (st == ATTN_OK && !(y = ab_alloc_floats(w.out_len, v->misalign)))
        st = ATTN_ERR_NO_MEMORY;
    if (st == ATTN_OK)
        st = ab_workload_run(ctx, &w, y);
    if (st == ATTN_OK) {
        *out = ab_verify_kernel(k->name, s, y, ref, w.out_len, w.max_abs_v);
        rc = 0;
    } else {
        snprintf(err, len, "%s", attn_strerror(st));
    }
    ab_free(y);
    attn_ctx_destroy(ctx);
    ab_workload_free(&w);
    return rc;
}

/* The counts of a check run. */
typedef struct tally {
    int cases, failures, quiet;
    double worst_ratio;
} tally;

/* Shape s on each of the nk kernels, in each variant, against the oracle. */
static void check_shape(const ab_shape *s, const attn_kernel *const *kernels, int nk, tally *t)
{
    char label[160], err[512];
    ab_shape_label(s, label, sizeof label);
    float *ref = reference(s, err, sizeof err);
    if (!ref) {
        printf("%-10s %-8s %-44s %s\n", "naive", ab_op_name(s->op), label, err);
        t->failures++;
        return;
    }
    for (int ki = 0; ki < nk; ki++) {
        for (size_t vi = 0; vi < sizeof variants / sizeof variants[0]; vi++) {
            ab_verdict v;
            t->cases++;
            if (run_variant(kernels[ki], s, &variants[vi], ref, &v, err, sizeof err) != 0) {
                t->failures++;
                printf("%-10s %-8s %-44s %-20s FAILED: %s\n", kernels[ki]->name,
                       ab_op_name(s->op), label, variants[vi].label, err);
                continue;
            }
            if (!v.ok)
                t->failures++;
            if (v.max_err / v.tol > t->worst_ratio)
                t->worst_ratio = v.max_err / v.tol;
            if (!t->quiet || !v.ok)
                printf("%-10s %-8s %-44s %-20s %10.3g %10.3g  %s\n", kernels[ki]->name,
                       ab_op_name(s->op), label, variants[vi].label, v.max_err, v.tol,
                       v.ok ? "ok" : "MISMATCH");
        }
    }
    ab_free(ref);
}

int ab_cmd_check(int argc, char **argv)
{
    const char *kernel = NULL, *op_name = NULL;
    int quiet = 0, n_pos;
    char op_help[160];
    snprintf(op_help, sizeof op_help, "only this op: %s", ab_op_list());
    const ab_flag flags[] = {
        { "kernel", AB_FLAG_STRING, &kernel, "K", "a kernel name, auto, or all (default: all, or ATTN_KERNEL)", 0, 0 },
        { "op", AB_FLAG_STRING, &op_name, "OP", op_help, 0, 0 },
        { "quiet", AB_FLAG_BOOL, &quiet, NULL, "print only failures and the summary", 0, 0 },
    };
    int rc = ab_cli_command("check", "attnbench check [--kernel K|all] [--op OP] [--quiet]",
                            "Runs every runnable kernel on the check suite (edge shapes, every\n"
                            "mask kind), then each on the shapes at the edges of its own tiles\n"
                            "(rows, widths, depths, keys and head dims around its register and\n"
                            "attention tiles, its blocks and its paths' crossovers: generated\n"
                            "from its row and default params), and compares it with the naive\n"
                            "oracle: max|y - y_ref| <= 1e-4*max(1, max|y_ref|), SDPA\n"
                            "2e-5*max(1, max|V|). Each case runs aligned on all cores and\n"
                            "unaligned on 1 thread. Exit status 1 on any mismatch.",
                            argc, argv, flags, 3, NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;
    ab_op op = AB_OP_SDPA;
    if (ab_cli_op("check", op_name, &op) != 0)
        return AB_EXIT_USAGE;
    const attn_kernel *kernels[64];
    char err[512];
    int nk = ab_select_kernels(kernel, getenv("ATTN_KERNEL"), kernels, 64, err, sizeof err);
    if (nk < 0) {
        fprintf(stderr, "attnbench check: %s\n", err);
        return AB_EXIT_USAGE;
    }

    const ab_suite *suite = ab_check_suite();
    tally t = { .quiet = quiet };
    if (!quiet)
        printf("%-10s %-8s %-44s %-20s %10s %10s  %s\n", "kernel", "op", "shape", "variant",
               "max err", "bound", "result");
    for (int i = 0; i < suite->n_shapes; i++)
        if (!op_name || suite->shapes[i].op == op)
            check_shape(&suite->shapes[i], kernels, nk, &t);
    int edge_shapes = 0;
    for (int ki = 0; ki < nk; ki++) {
        ab_shape edges[AB_MAX_EDGE_SHAPES];
        int n = ab_edge_shapes(kernels[ki], NULL, edges, AB_MAX_EDGE_SHAPES);
        for (int i = 0; i < n; i++)
            if (!op_name || edges[i].op == op) {
                check_shape(&edges[i], &kernels[ki], 1, &t);
                edge_shapes++;
            }
    }
    printf("check: %d kernel%s, %d cases (%d shapes at the kernels' own tile edges), %d failed; "
           "worst error %.3g of the bound\n", nk, nk == 1 ? "" : "s", t.cases, edge_shapes,
           t.failures, t.worst_ratio);
    return t.failures ? AB_EXIT_FAIL : AB_EXIT_OK;
}
