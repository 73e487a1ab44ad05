/*
 * cmd_tune.c — `attnbench tune`: tunes each bucket of a suite (or of the
 * given shapes) and stores the winners in the wisdom file (tune.h,
 * kernels/wisdom.h); --export / --import move records between machines.
 * The records are merged into the file by wisdom_store.h.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "timer.h"
#include "plan.h"
#include "plan_flags.h"
#include "tune.h"
#include "wisdom_store.h"


/* ab_wisdom_merge, saying on stderr when a damaged file was set aside. */
static int merge(const char *path, const attn_wisdom *add, char *err, size_t len)
{
    char note[PATH_MAX + 300] = "";
    int rc = ab_wisdom_merge(path, add, note, sizeof note, err, len);
    if (note[0])
        fprintf(stderr, "attnbench tune: %s\n", note);
    return rc;
}

typedef struct tune_progress {
    const char *bucket;
    double deadline;
} tune_progress;

static void show_progress(void *arg, int done, int total, const ab_candidate *best)
{
    const tune_progress *p = arg;
    if (!isatty(2))
        return;
    double left = p->deadline - ab_now();
    fprintf(stderr, "\r\033[K%s: %d/%d candidates, best %s %.3g ms, %.0f s left", p->bucket, done,
            total, best && best->kernel ? best->kernel->name : "-",
            best && isfinite(best->median) ? best->median * 1e3 : 0.0, left > 0 ? left : 0.0);
}

static int parse_level(const char *s, ab_tune_level *l)
{
    if (strcmp(s, "estimate") == 0)
        *l = AB_TUNE_ESTIMATE;
    else if (strcmp(s, "measure") == 0)
        *l = AB_TUNE_MEASURE;
    else if (strcmp(s, "patient") == 0)
        *l = AB_TUNE_PATIENT;
    else
        return -1;
    return 0;
}

int ab_cmd_tune(int argc, char **argv)
{
    const char *suite_name = NULL, *shape_text = NULL, *level_name = "measure", *wisdom = NULL;
    const char *export_path = NULL, *import_path = NULL;
    const char *threads_text = NULL;
    int rounds = 7, evaluate = 0, n_pos;
    double budget = 600, min_time = 0.05;
    const ab_flag flags[] = {
        AB_PLAN_FLAG_SUITE(&suite_name),
        AB_PLAN_FLAG_SHAPE(&shape_text),
        { "level", AB_FLAG_STRING, &level_name, "L", "estimate, measure (default) or patient", 0, 0 },
        { "budget", AB_FLAG_DOUBLE, &budget, "S", "seconds for the whole search; the best so far is kept (default 600)", 1, 1e6 },
        AB_PLAN_FLAG_THREADS(&threads_text),
        { "rounds", AB_FLAG_INT, &rounds, "R", "interleaved timing rounds per comparison (default 7)", 3, 64 },
        { "min-time", AB_FLAG_DOUBLE, &min_time, "S", "seconds per timed batch (default 0.05)", 1e-4, 10 },
        { "wisdom", AB_FLAG_STRING, &wisdom, "FILE", "the wisdom file (default: $ATTN_WISDOM, else ~/.cache/attnbench/wisdom)", 0, 0 },
        { "export", AB_FLAG_STRING, &export_path, "FILE", "write every record of the wisdom to FILE and stop", 0, 0 },
        { "import", AB_FLAG_STRING, &import_path, "FILE", "merge FILE's records into the wisdom and stop", 0, 0 },
        { "evaluate", AB_FLAG_BOOL, &evaluate, NULL, "time each pick against an exhaustive search of its neighbourhood; exit 1 when it is over 5% slower", 0, 0 },
    };
    int rc = ab_cli_command(
        "tune",
        "attnbench tune [--suite NAME | --shape SHAPES] [--level estimate|measure|patient]\n"
        "                      [--budget S] [--threads N[,N2..]] [--wisdom FILE] [--evaluate]\n"
        "                      [--export FILE | --import FILE]",
        "For each bucket (op, length up to a power of 2, head width, mask kind, threads) of the\n"
        "shapes: checks every kernel (and parameter variant) against naive on a reduced shape,\n"
        "times those that pass interleaved, and stores the fastest in the wisdom, which \"auto\"\n"
        "contexts then use on this machine.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;

    char path[PATH_MAX], err[512];
    if (wisdom)
        snprintf(path, sizeof path, "%s", wisdom);
    else if (attn_wisdom_default_path(path, sizeof path) != 0) {
        fprintf(stderr, "attnbench tune: no wisdom path: set ATTN_WISDOM or HOME, or give --wisdom\n");
        return AB_EXIT_USAGE;
    }
    if (export_path && import_path) {
        fprintf(stderr, "attnbench tune: give --export or --import, not both\n");
        return AB_EXIT_USAGE;
    }
    if (export_path || import_path) {
        attn_wisdom *w = malloc(sizeof *w);
        if (!w) {
            fprintf(stderr, "attnbench tune: out of memory\n");
            return AB_EXIT_FAIL;
        }
        int r = attn_wisdom_read(import_path ? import_path : path, w, err, sizeof err);
        if (r != 0) {
            fprintf(stderr, "attnbench tune: %s: %s\n", import_path ? "--import" : "--export", err);
            free(w);
            return AB_EXIT_FAIL;
        }
        int st = 0;
        if (import_path) {
            st = merge(path, w, err, sizeof err);
        } else {
            ab_atomic_file af;
            st = ab_atomic_open(&af, export_path, err, sizeof err) != 0
                 || attn_wisdom_write(af.f, w) != 0 || ab_atomic_commit(&af, 0, err, sizeof err) != 0;
        }
        if (st != 0)
            fprintf(stderr, "attnbench tune: %s\n", err);
        else
            printf("%s %d records (%d machines) %s %s\n", import_path ? "imported" : "exported",
                   w->n, w->n_machines, import_path ? "into" : "to", import_path ? path : export_path);
        free(w);
        return st != 0 ? AB_EXIT_FAIL : AB_EXIT_OK;
    }

    ab_tune_opts o = { .rounds = rounds, .min_time = min_time };
    if (parse_level(level_name, &o.level) != 0) {
        fprintf(stderr, "attnbench tune: --level: '%s' (estimate, measure, patient)\n", level_name);
        return AB_EXIT_USAGE;
    }
    ab_plan *plan = malloc(sizeof *plan);
    if (!plan) {
        fprintf(stderr, "attnbench tune: out of memory\n");
        return AB_EXIT_FAIL;
    }
    if (ab_plan_make(plan, suite_name, shape_text, AB_OP_SDPA, 0, threads_text, err,
                     sizeof err) != 0) {
        fprintf(stderr, "attnbench tune: %s\n", err);
        free(plan);
        return AB_EXIT_USAGE;
    }
    double start = ab_now();
    o.deadline = start + budget;

    char key[320];
    attn_machine_key(key, sizeof key);
    uint64_t me = attn_machine_hash(key);
    attn_wisdom *found = calloc(1, sizeof *found);
    if (!found) {
        fprintf(stderr, "attnbench tune: out of memory\n");
        free(plan);
        return AB_EXIT_FAIL;
    }
    printf("%-36s %-8s %-44s %10s %10s %8s %s\n", "bucket", "kernel", "parameters", "tuned",
           "default", "speedup", "max err");
    int failed = 0;
    for (int t = 0; t < plan->nt * plan->ns; t++) {
        const ab_shape *shape = &plan->shapes[t % plan->ns];
        attn_wisdom_record rec;
        ab_tune_result res;
        attn_bucket bk;
        o.threads = plan->thread_counts[t / plan->ns];
        /* One shape per bucket: the first that stands for it. */
        ab_tune_bucket(shape, o.threads, &bk);
        int seen = 0;
        for (int j = 0; j < found->n; j++)
            seen |= attn_bucket_equal(&found->rec[j].bucket, &bk);
        if (seen)
            continue;
        char bucket[80];
        attn_bucket_format(&bk, bucket, sizeof bucket);
        if (ab_now() > o.deadline) {
            printf("%-36s out of time (--budget %.0f s): not tuned\n", bucket, budget);
            continue;
        }
        tune_progress tp = { bucket, o.deadline };
        o.progress = show_progress;
        o.progress_arg = &tp;
        int st = ab_tune_shape(shape, &o, &res);
        if (isatty(2))
            fprintf(stderr, "\r\033[K");
        if (st != 0) {
            printf("%-36s FAILED: %s\n", bucket, res.error);
            failed++;
            continue;
        }
        ab_tune_record(&res, shape, &o, me, &rec);
        attn_wisdom_put(found, &rec, key);
        char params[160] = "-";
        size_t used = 0;
        for (int p = 0; p < rec.n_params && used < sizeof params; p++)
            used += (size_t)snprintf(params + used, sizeof params - used, "%s%s=%d", p ? "," : "",
                                     rec.param_name[p], rec.param_value[p]);
        char tuned[24] = "-", dflt[24] = "-", speedup[16] = "-";
        if (rec.time_ns > 0)
            snprintf(tuned, sizeof tuned, "%.3g ms", rec.time_ns / 1e6);
        if (rec.default_time_ns > 0)
            snprintf(dflt, sizeof dflt, "%.3g ms", rec.default_time_ns / 1e6);
        if (rec.time_ns > 0 && rec.default_time_ns > 0)
            snprintf(speedup, sizeof speedup, "%.2fx", rec.default_time_ns / rec.time_ns);
        printf("%-36s %-8s %-44s %10s %10s %8s %.3g%s\n", bucket, rec.kernel, params, tuned, dflt,
               speedup, rec.max_err, res.out_of_time ? "  (out of time: best so far)" : "");
        ab_candidate winner;
        int n_ex = 0;
        if (evaluate && ab_tune_evaluate(shape, &o, &res.best, &winner, &n_ex) == 0) {
            double ratio = res.best.median / winner.median;
            printf("%-36s exhaustive search (%d candidates): best %s at %.3g ms; the pick at "
                   "%.3g ms is %.3fx its time%s\n", "", n_ex, winner.kernel->name,
                   winner.median * 1e3, res.best.median * 1e3, ratio,
                   ratio > 1.05 ? ": MORE THAN 5% SLOWER" : "");
            failed += ratio > 1.05;
        }
        fflush(stdout);
    }
    int st = found->n ? merge(path, found, err, sizeof err) : 0;
    if (st != 0)
        fprintf(stderr, "attnbench tune: writing %s: %s\n", path, err);
    else if (found->n)
        printf("wrote %d records to %s (%.0f s)\n", found->n, path, ab_now() - start);
    free(found);
    free(plan);
    return st != 0 || failed ? AB_EXIT_FAIL : AB_EXIT_OK;
}
