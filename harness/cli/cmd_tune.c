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
#include "history.h"
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

/* What a tune is to do, from its flags: the wisdom file, and either the
 * records to move between it and another file (--export, --import) or the
 * buckets to tune and how. */
typedef struct tune_plan {
    char wisdom[PATH_MAX];
    const char *export_path, *import_path;
    const char *publish, *pull;     /* the fleet's store (history.h) */
    int tunes;                      /* --suite or --shape given: buckets to tune */
    ab_plan plan;                  /* shapes, thread counts, machine (plan.h) */
    ab_tune_opts o;                /* level, rounds and min_time; tune_buckets sets the rest */
    double budget;
    int evaluate;
} tune_plan;

/* Parses the flags into t and finds the wisdom file; unless records are to
 * be moved, which needs no plan, also makes the plan. -1 when the command is
 * to go on, else the exit status (the message printed). */
static int plan_of(int argc, char **argv, tune_plan *t)
{
    const char *suite_name = NULL, *shape_text = NULL, *level_name = "measure", *wisdom = NULL;
    const char *threads_text = NULL;
    int n_pos;
    t->o = (ab_tune_opts){ .rounds = 7, .min_time = 0.05 };
    t->budget = 600;
    const ab_flag flags[] = {
        AB_PLAN_FLAG_SUITE(&suite_name),
        AB_PLAN_FLAG_SHAPE(&shape_text),
        { "level", AB_FLAG_STRING, &level_name, "L", "estimate, measure (default) or patient", 0, 0 },
        { "budget", AB_FLAG_DOUBLE, &t->budget, "S", "seconds for the whole search; the best so far is kept (default 600)", 1, 1e6 },
        AB_PLAN_FLAG_THREADS(&threads_text),
        { "rounds", AB_FLAG_INT, &t->o.rounds, "R", "interleaved timing rounds per comparison (default 7)", 3, 64 },
        { "min-time", AB_FLAG_DOUBLE, &t->o.min_time, "S", "seconds per timed batch (default 0.05)", 1e-4, 10 },
        { "wisdom", AB_FLAG_STRING, &wisdom, "FILE", "the wisdom file (default: $ATTN_WISDOM, else ~/.cache/attnbench/wisdom)", 0, 0 },
        { "export", AB_FLAG_STRING, &t->export_path, "FILE", "write every record of the wisdom to FILE and stop", 0, 0 },
        { "import", AB_FLAG_STRING, &t->import_path, "FILE", "merge FILE's records into the wisdom and stop", 0, 0 },
        { "publish", AB_FLAG_STRING, &t->publish, "DB", "store this machine's records in the fleet's history DB (a postgresql:// URL or SQLite file) under its machine key; with --suite/--shape, after tuning", 0, 0 },
        { "pull", AB_FLAG_STRING, &t->pull, "DB", "take the records DB holds for this machine key into the wisdom, each checked against naive here first, and stop", 0, 0 },
        { "bf16", AB_FLAG_BOOL, &t->o.bf16, NULL, "let the bf16 rows compete too: the records \"auto-bf16\" contexts use (a bucket keeps one record per math)", 0, 0 },
        { "evaluate", AB_FLAG_BOOL, &t->evaluate, NULL, "time each pick against an exhaustive search of its neighbourhood; exit 1 when it is over 5% slower", 0, 0 },
    };
    int rc = ab_cli_command(
        "tune",
        "attnbench tune [--suite NAME | --shape SHAPES] [--level estimate|measure|patient]\n"
        "                      [--budget S] [--threads N[,N2..]] [--wisdom FILE] [--bf16] [--evaluate]\n"
        "                      [--export FILE | --import FILE | --publish DB | --pull DB]",
        "For each bucket (op, length up to a power of 2, head width, mask kind, threads) of the\n"
        "shapes: checks every kernel (and parameter variant) against naive on a reduced shape,\n"
        "times those that pass interleaved, and stores the fastest in the wisdom, which \"auto\"\n"
        "contexts then use on this machine.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;

    if (wisdom)
        snprintf(t->wisdom, sizeof t->wisdom, "%s", wisdom);
    else if (attn_wisdom_default_path(t->wisdom, sizeof t->wisdom) != 0) {
        fprintf(stderr, "attnbench tune: no wisdom path: set ATTN_WISDOM or HOME, or give --wisdom\n");
        return AB_EXIT_USAGE;
    }
    if (!!t->export_path + !!t->import_path + !!t->publish + !!t->pull > 1) {
        fprintf(stderr, "attnbench tune: give one of --export, --import, --publish and --pull\n");
        return AB_EXIT_USAGE;
    }
    t->tunes = suite_name || shape_text || !(t->export_path || t->import_path || t->publish
                                             || t->pull);
    if (!t->tunes)
        return -1;
    if (t->export_path || t->import_path || t->pull) {
        fprintf(stderr, "attnbench tune: --export, --import and --pull move records: they take "
                "no --suite or --shape\n");
        return AB_EXIT_USAGE;
    }
    if (parse_level(level_name, &t->o.level) != 0) {
        fprintf(stderr, "attnbench tune: --level: '%s' (estimate, measure, patient)\n", level_name);
        return AB_EXIT_USAGE;
    }
    char err[512];
    if (ab_plan_make(&t->plan, suite_name, shape_text, AB_OP_SDPA, 0, threads_text, err,
                     sizeof err) != 0) {
        fprintf(stderr, "attnbench tune: %s\n", err);
        return AB_EXIT_USAGE;
    }
    return -1;
}

/* The records of in for this machine key into out, each checked here
 * against naive before it is trusted (a machine of the same key may still
 * differ: a microcode, a broken unit; a record is only as good as the
 * check it passes here); other machines' records too when keep_others
 * (they are carried, never applied here). Returns how many failed. */
static int trusted_records(const attn_wisdom *in, const char *key, const char *source, int verbose,
                           int keep_others, attn_wisdom *out)
{
    uint64_t me = attn_machine_hash(key);
    int rejected = 0;
    for (int i = 0; i < in->n; i++) {
        const attn_wisdom_record *rec = &in->rec[i];
        char bucket[80], why[300];
        double max_err;
        attn_bucket_format(&rec->bucket, bucket, sizeof bucket);
        if (rec->machine != me) {
            for (int m = 0; keep_others && m < in->n_machines; m++)
                if (in->machine_hash[m] == rec->machine)
                    attn_wisdom_put(out, rec, in->machine_key[m]);
            continue;
        }
        if (ab_tune_verify_record(rec, &max_err, why, sizeof why)) {
            attn_wisdom_put(out, rec, key);
            if (verbose)
                printf("%-36s %-12s checked here: %.3g of the error bound\n", bucket, rec->kernel,
                       max_err);
        } else {
            rejected++;
            fprintf(stderr, "attnbench: %s: %s: not trusted: %s\n", source, bucket, why);
        }
    }
    return rejected;
}

/* --export FILE writes every record of the wisdom to FILE (atomically);
 * --import FILE merges FILE's records into the wisdom. The two are one
 * function because they differ only in which file is read and where its
 * records go. */
static int move_records(const tune_plan *t)
{
    const char *import_path = t->import_path, *path = t->wisdom;
    char err[512];
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
    int st = 0, rejected = 0;
    if (import_path) {
        /* This machine's records checked here first, as a pull's are. */
        attn_wisdom *trusted = calloc(1, sizeof *trusted);
        char key[320];
        attn_machine_key(key, sizeof key);
        if (!trusted) {
            snprintf(err, sizeof err, "out of memory");
            st = -1;
        } else {
            rejected = trusted_records(w, key, import_path, 0, 1, trusted);
            *w = *trusted;
            st = merge(path, w, err, sizeof err);
        }
        free(trusted);
    } else {
        ab_atomic_file af;
        st = ab_atomic_open(&af, t->export_path, err, sizeof err);
        if (st == 0) {
            /* Its write error is the stream's, which the commit reports
             * (removing the temporary file). */
            attn_wisdom_write(af.f, w);
            st = ab_atomic_commit(&af, 0, err, sizeof err);
        }
    }
    if (st != 0)
        fprintf(stderr, "attnbench tune: %s\n", err);
    else
        printf("%s %d records (%d machines) %s %s%s\n", import_path ? "imported" : "exported", w->n,
               w->n_machines, import_path ? "into" : "to", import_path ? path : t->export_path,
               rejected ? " (some not trusted here: see above)" : "");
    free(w);
    return st != 0 ? AB_EXIT_FAIL : AB_EXIT_OK;
}

/* The row of a tuned bucket: the winner and its parameters, its time and
 * the untuned default's, the speedup and the check's error. */
static void print_row(const char *bucket, const attn_wisdom_record *rec, int out_of_time)
{
    char params[160] = "-";
    size_t used = 0;
    for (int p = 0; p < rec->n_params && used < sizeof params; p++)
        used += (size_t)snprintf(params + used, sizeof params - used, "%s%s=%d", p ? "," : "",
                                 rec->param_name[p], rec->param_value[p]);
    char tuned[24] = "-", dflt[24] = "-", speedup[16] = "-";
    if (rec->time_ns > 0)
        snprintf(tuned, sizeof tuned, "%.3g ms", rec->time_ns / 1e6);
    if (rec->default_time_ns > 0)
        snprintf(dflt, sizeof dflt, "%.3g ms", rec->default_time_ns / 1e6);
    if (rec->time_ns > 0 && rec->default_time_ns > 0)
        snprintf(speedup, sizeof speedup, "%.2fx", rec->default_time_ns / rec->time_ns);
    printf("%-36s %-8s %-44s %10s %10s %8s %.3g", bucket, rec->kernel, params, tuned, dflt,
           speedup, rec->max_err);
    if (out_of_time)
        printf("  (out of time: best so far, recorded as %s)", rec->level);
    putchar('\n');
}

/* --evaluate: times the pick against an exhaustive search of its
 * neighbourhood (which re-times the pick too) and prints how they compare.
 * 1 when the pick is over 5% slower than the search's best, else 0; a
 * search that fails judges nothing. */
static int evaluate_pick(const ab_shape *shape, const ab_tune_opts *o, ab_candidate *pick)
{
    ab_candidate winner;
    int n_ex = 0;
    if (ab_tune_evaluate(shape, o, pick, &winner, &n_ex) != 0)
        return 0;
    double ratio = pick->median / winner.median;
    printf("%-36s exhaustive search (%d candidates): best %s at %.3g ms; the pick at %.3g ms is "
           "%.3fx its time%s\n", "", n_ex, winner.kernel->name, winner.median * 1e3,
           pick->median * 1e3, ratio, ratio > 1.05 ? ": MORE THAN 5% SLOWER" : "");
    return ratio > 1.05;
}

/* Tunes each bucket of the plan's shapes at each thread count, on the
 * first shape that stands for it, a row each, until the budget is spent;
 * then merges the winners into the wisdom. 0, or AB_EXIT_FAIL when a
 * bucket failed, an evaluated pick was over 5% slower or the wisdom could
 * not be written. */
static int tune_buckets(const tune_plan *t)
{
    const ab_plan *plan = &t->plan;
    ab_tune_opts o = t->o;
    double start = ab_now();
    o.deadline = start + t->budget;

    char key[320], err[512];
    if (ab_wisdom_probe(t->wisdom, err, sizeof err) != 0) {   /* before the budget is spent */
        fprintf(stderr, "attnbench tune: writing %s: %s\n", t->wisdom, err);
        return AB_EXIT_FAIL;
    }
    attn_machine_key(key, sizeof key);
    uint64_t me = attn_machine_hash(key);
    attn_wisdom *found = calloc(1, sizeof *found);
    if (!found) {
        fprintf(stderr, "attnbench tune: out of memory\n");
        return AB_EXIT_FAIL;
    }
    printf("%-36s %-8s %-44s %10s %10s %8s %s\n", "bucket", "kernel", "parameters", "tuned",
           "default", "speedup", "max err");
    int failed = 0;
    for (int i = 0; i < plan->nt * plan->ns; i++) {
        const ab_shape *shape = &plan->shapes[i % plan->ns];
        attn_wisdom_record rec;
        ab_tune_result res;
        attn_bucket bk;
        o.threads = plan->thread_counts[i / plan->ns];
        /* One shape per bucket: the first that stands for it. */
        ab_shape_bucket(shape, o.threads, &bk);
        int seen = 0;
        for (int j = 0; j < found->n; j++)
            seen |= attn_bucket_equal(&found->rec[j].bucket, &bk);
        char bucket[80];
        attn_bucket_format(&bk, bucket, sizeof bucket);
        if (seen) {   /* said, not passed over: its calls take the record above */
            char text[512];
            ab_shape_format(shape, text, sizeof text);
            printf("%-36s %s: its bucket's record is the one above\n", bucket, text);
            continue;
        }
        if (ab_now() > o.deadline) {
            printf("%-36s out of time (--budget %.0f s): not tuned\n", bucket, t->budget);
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
        print_row(bucket, &rec, res.out_of_time);
        if (t->evaluate)
            failed += evaluate_pick(shape, &o, &res.best);
        fflush(stdout);
    }
    int st = found->n ? merge(t->wisdom, found, err, sizeof err) : 0;
    if (st != 0)
        fprintf(stderr, "attnbench tune: writing %s: %s\n", t->wisdom, err);
    else if (found->n)
        printf("wrote %d records to %s (%.0f s)\n", found->n, t->wisdom, ab_now() - start);
    free(found);
    return st != 0 || failed ? AB_EXIT_FAIL : AB_EXIT_OK;
}

/* This machine's key, id and the records of the wisdom at path that are
 * its own (w). 0, or -1 with a reason in err (w then empty). */
static int own_records(const char *path, char key[320], char id[24], attn_wisdom *w, char *err,
                       size_t len)
{
    attn_machine_key(key, 320);
    uint64_t me = attn_machine_hash(key);
    snprintf(id, 24, "%016llx", (unsigned long long)me);
    attn_wisdom *all = malloc(sizeof *all);
    memset(w, 0, sizeof *w);
    if (!all || attn_wisdom_read(path, all, err, len) != 0) {
        if (!all)
            snprintf(err, len, "out of memory");
        free(all);
        return -1;
    }
    for (int i = 0; i < all->n; i++)
        if (all->rec[i].machine == me)
            attn_wisdom_put(w, &all->rec[i], key);
    free(all);
    return 0;
}

/* --publish DB: this machine's records of the wisdom into the fleet's
 * store, under its machine key. */
static int publish(const tune_plan *t)
{
    char key[320], id[24], err[700];
    attn_wisdom *w = malloc(sizeof *w);
    if (!w || own_records(t->wisdom, key, id, w, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench tune: %s: %s\n", t->wisdom, w ? err : "out of memory");
        free(w);
        return AB_EXIT_FAIL;
    }
    int rc = AB_EXIT_OK, n_stored = 0, n_kept = 0;
    ab_history *h = ab_history_open(t->publish, err, sizeof err);
    if (!h || ab_history_wisdom_publish(h, key, id, w, &n_stored, &n_kept, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench tune: --publish: %s%s%s\n", h ? ab_history_name(h) : "",
                h ? ": " : "", err);
        rc = AB_EXIT_USAGE;
    } else {
        printf("published %d records of machine %s to %s (it holds %d for this key)\n",
               w->n - n_kept, id, ab_history_name(h), n_stored);
        if (n_kept)
            printf("%d record%s of a more thorough tune kept there (not replaced by this one's, of "
                   "a quicker level)\n", n_kept, n_kept == 1 ? "" : "s");
    }
    ab_history_close(h);
    free(w);
    return rc;
}

int ab_tune_pull(const char *target, const char *wisdom_path, int verbose, int only_if_none)
{
    char key[320], err[700];
    if (only_if_none) {
        /* A wisdom that cannot be read holds none of this machine's. */
        char id[24];
        attn_wisdom *own = malloc(sizeof *own);
        int has_own = own && own_records(wisdom_path, key, id, own, err, sizeof err) == 0
                      && own->n > 0;
        free(own);
        if (has_own)
            return AB_EXIT_OK;
    }
    attn_machine_key(key, sizeof key);
    attn_wisdom *got = malloc(sizeof *got), *trusted = calloc(1, sizeof *trusted);
    int none = 0;
    ab_history *h = got && trusted ? ab_history_open_existing(target, &none, err, sizeof err) : NULL;
    if (!h && none && only_if_none) {
        /* run's pull from $ATTN_WISDOM_DB: a store not yet made holds
         * nothing to pull, and the run goes on without creating it. */
        fprintf(stderr, "attnbench: pulling the wisdom: %s; nothing pulled\n", err);
        free(got);
        free(trusted);
        return AB_EXIT_OK;
    }
    if (!h || ab_history_wisdom_pull(h, key, got, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench: pulling the wisdom: %s%s%s\n", h ? ab_history_name(h) : "",
                h ? ": " : "", got && trusted ? err : "out of memory");
        ab_history_close(h);
        free(got);
        free(trusted);
        return AB_EXIT_USAGE;
    }
    int rejected = trusted_records(got, key, ab_history_name(h), verbose, 0, trusted);
    int rc = AB_EXIT_OK;
    if (trusted->n && merge(wisdom_path, trusted, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench: writing %s: %s\n", wisdom_path, err);
        rc = AB_EXIT_FAIL;
    } else if (verbose || trusted->n) {
        printf("pulled %d records for this machine key from %s into %s (%d not trusted)\n",
               trusted->n, ab_history_name(h), wisdom_path, rejected);
    }
    ab_history_close(h);
    free(got);
    free(trusted);
    return rc;
}

/* parse and plan → move the records, or tune the buckets (then publish
 * them when asked). */
int ab_cmd_tune(int argc, char **argv)
{
    tune_plan *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "attnbench tune: out of memory\n");
        return AB_EXIT_FAIL;
    }
    int rc = plan_of(argc, argv, t);
    if (rc >= 0) {               /* --help, or a usage error: nothing to do */
        free(t);
        return rc;
    }
    if (t->pull)
        rc = ab_tune_pull(t->pull, t->wisdom, 1, 0);
    else if (t->export_path || t->import_path)
        rc = move_records(t);
    else if (t->tunes)
        rc = tune_buckets(t);
    if (rc <= 0 && t->publish)   /* after a tuning that went well, or alone */
        rc = publish(t);
    free(t);
    return rc < 0 ? AB_EXIT_OK : rc;
}
