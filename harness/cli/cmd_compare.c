/*
 * cmd_compare.c — `attnbench compare BASE.json[,..] NEW.json[,..]`: pairs
 * the benchmarks of the two sides by name and judges each at the level of
 * runs (compare.h): every file is a run, giving one median per benchmark.
 * Reads Google Benchmark JSON from any program (bench_file.h), repetitions
 * or aggregates only. Exit status: 0 nothing regressed, 1 a regression, 2
 * unusable input (sides with no benchmark in common among it) or a --json
 * that could not be written: a CI gate must not read either as a verdict.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "bench_file.h"
#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "json.h"

static void print_row(const char *name, const ab_run_comparison *c, const char *runs)
{
    printf("%-64s %8.3f  [%7.3f, %7.3f] %7.1f%% %9.2g %7s  %s%s\n", name, c->ratio, c->lo, c->hi,
           100.0 * c->mde, c->p, runs, ab_verdict_name(c->verdict), c->unstable ? " (unstable)" : "");
}

static void json_row(ab_json *j, const char *name, const ab_run_comparison *c)
{
    ab_json_begin_object(j, NULL);
    ab_json_string(j, "name", name);
    ab_json_number(j, "ratio", c->ratio);
    ab_json_number(j, "ci_low", c->lo);
    ab_json_number(j, "ci_high", c->hi);
    ab_json_number(j, "mde", c->mde);
    ab_json_string(j, "verdict", ab_verdict_name(c->verdict));
    ab_json_number(j, "p", c->p);
    ab_json_int(j, "runs_base", c->runs_base);
    ab_json_int(j, "runs_new", c->runs_new);
    ab_json_bool(j, "unstable", c->unstable);
    ab_json_end_object(j);
}

/* One side's machine, for the warning: its id, else its CPU and host. */
static void machine_of(const ab_bench_file *f, char *buf, size_t len)
{
    if (f->machine_id[0])
        snprintf(buf, len, "machine %s (%s)", f->machine_id, f->cpu_model[0] ? f->cpu_model : "?");
    else if (f->cpu_model[0] || f->host[0])
        snprintf(buf, len, "CPU '%s' on host '%s'", f->cpu_model, f->host);
    else
        buf[0] = '\0';
}

/* 1 when every file of both sides that names its machine names the same
 * one (the first such file's; files that say nothing are skipped). */
static int one_machine(const ab_bench_file *b, int nb, const ab_bench_file *f, int nf,
                       char *first, char *other, size_t len)
{
    first[0] = '\0';
    for (int i = 0; i < nb + nf; i++) {
        machine_of(i < nb ? &b[i] : &f[i - nb], other, len);
        if (!first[0])
            snprintf(first, len, "%s", other);
        else if (other[0] && strcmp(first, other) != 0)
            return 0;
    }
    return 1;
}

/* 0 when no file of a side is another's copy (the same bytes): two copies
 * are not two runs, and their agreement is no measure of the noise. */
static int distinct_runs(const ab_bench_file *f, int n, const char *side, const char *list)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(f[i].content_sha256, f[j].content_sha256) == 0) {
                fprintf(stderr, "attnbench compare: %s: files %d and %d of '%.200s' are the same "
                        "bytes: one run given twice\n", side, j + 1, i + 1, list);
                return 0;
            }
    return 1;
}

/* 1 when name failed (error_occurred) in one of files[0..n). */
static int failed_in(const ab_bench_file *files, int n, const char *name)
{
    for (int f = 0; f < n; f++)
        for (int k = 0; k < files[f].n_bad; k++)
            if (files[f].bad[k].failed && strcmp(files[f].bad[k].name, name) == 0)
                return 1;
    return 0;
}

static ab_run_stat stat_of(const ab_sample_set *s)
{
    return ab_run_stat_of(s->t, s->n, s->unstable, s->precision, s->cv, s->repetitions);
}

/* The run statistics of benchmark name in each of the n files of a side
 * that have it, in file order, into out; returns how many. */
static int side_stats(const ab_bench_file *files, int n, const char *name, ab_run_stat *out)
{
    int k = 0;
    for (int f = 0; f < n; f++) {
        const ab_sample_set *s = ab_bench_file_find(&files[f], name);
        if (s)
            out[k++] = stat_of(s);
    }
    return k;
}

/* 1 when name is one of names[0..n-1]. */
static int listed(const char *const *names, int n, const char *name)
{
    for (int j = 0; j < n; j++)
        if (strcmp(names[j], name) == 0)
            return 1;
    return 0;
}

/* The whole-run line's name: a median of ratios with one run a side, the
 * runs' geometric means with more (ab_compare_whole). */
static const char *whole_name(int runs_a_side)
{
    return runs_a_side ? "the whole run (runs' geometric means)"
                       : "the whole run (median over benchmarks)";
}

/* What --json says beside the rows of two sides: the benchmarks that
 * failed in NEW, those not judged for a bad time, and whether the files
 * name different machines. */
typedef struct side_notes {
    const char *const *failed;
    int n_failed;
    const char *const *unusable;
    int n_unusable;
    int machines_differ;
    int runs_a_side;          /* more than one run on a side: the whole run's kind */
} side_notes;

/* Both comparisons' end: the line of benchmarks that FAILED in side (a
 * regression each), and the exit status: 1 on a regression or a failure,
 * 2 when some input was not usable (the verdicts shown still stand). */
static int verdict_status(int regressions, const side_notes *notes, const char *side)
{
    if (notes->n_failed)
        printf("%d benchmark%s FAILED in %s: a regression\n", notes->n_failed,
               notes->n_failed == 1 ? "" : "s", side);
    if (notes->n_unusable)
        return AB_EXIT_USAGE;
    return regressions || notes->n_failed ? AB_EXIT_FAIL : AB_EXIT_OK;
}

static void json_names(ab_json *j, const char *key, const char *const *names, int n)
{
    ab_json_begin_array(j, key);
    for (int k = 0; k < n; k++)
        ab_json_string(j, NULL, names[k]);
    ab_json_end_array(j);
}

/* --json FILE: rows[i] named name_of(i), and the whole-run line when there
 * is one (and notes, for two sides); written atomically. 0, or -1 after a
 * message. */
static int write_verdicts(const char *path, const char *(*name_of)(const void *, int),
                          const void *names, const ab_run_comparison *rows, int n,
                          const ab_run_comparison *whole, const side_notes *notes)
{
    char err[512];
    ab_atomic_file file;
    if (ab_atomic_open(&file, path, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench compare: %s\n", err);
        return -1;
    }
    ab_json j;
    ab_json_init(&j, file.f);
    ab_json_begin_object(&j, NULL);
    ab_json_begin_array(&j, "rows");
    for (int k = 0; k < n; k++)
        json_row(&j, name_of(names, k), &rows[k]);
    ab_json_end_array(&j);
    if (whole) {
        ab_json_begin_array(&j, "whole_run");
        json_row(&j, whole_name(notes && notes->runs_a_side), whole);
        ab_json_end_array(&j);
    }
    if (notes) {
        json_names(&j, "failed_in_new", notes->failed, notes->n_failed);
        json_names(&j, "not_judged_bad_times", notes->unusable, notes->n_unusable);
        ab_json_bool(&j, "machines_differ", notes->machines_differ);
    }
    ab_json_end_object(&j);
    fputc('\n', file.f);
    if (ab_atomic_commit(&file, 0, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench compare: %s\n", err);
        return -1;
    }
    return 0;
}

static const char *name_in_list(const void *names, int k)
{
    return ((const char *const *)names)[k];
}

/* "<op>/<kernel>@<build>/<label>/threads:N": the kernel's "@build" part
 * (start and length), or 0 when the name has none. */
static size_t build_part(const char *name, size_t *at)
{
    const char *slash = strchr(name, '/'), *end = slash ? strchr(slash + 1, '/') : NULL;
    const char *mark = slash && end ? memchr(slash, '@', (size_t)(end - slash)) : NULL;
    if (!mark)
        return 0;
    *at = (size_t)(mark - name);
    return (size_t)(end - mark);
}

/* The rows of compare_builds: the judged kernels' names. */
typedef struct pair_names {
    const ab_bench_file *b;
    const int *judged;
} pair_names;

static const char *pair_name(const void *arg, int k)
{
    const pair_names *p = arg;
    return p->b->set[p->judged[k]].name;
}

/* 1 when the name's kernel is of build (its "@build" part is "@" build). */
static int of_build(const char *name, const char *build)
{
    size_t at, len = build_part(name, &at);
    return len && len == strlen(build) + 1 && strncmp(name + at + 1, build, len - 1) == 0;
}

/* One file of run --lib: the kernels of build `judged` (NULL: of every
 * build but the reference) against the same kernels of build `ref`, from
 * the rounds both ran in. Exit status as compare's. */
static int compare_builds(const char *path, const ab_compare_opts *o, const char *ref,
                          const char *judged, const char *json_path)
{
    char err[512];
    ab_bench_file *f = NULL;
    int nf = 0;
    if (ab_bench_files_load(path, &f, &nf, err, sizeof err) != 0 || nf != 1) {
        fprintf(stderr, "attnbench compare: %s\n", nf > 1 ? "one file of run --lib, or two sides" : err);
        if (f)
            ab_bench_files_free(f, nf);
        return AB_EXIT_USAGE;
    }
    const ab_bench_file *b = &f[0];
    int *mine = calloc((size_t)b->n, sizeof *mine), *base = calloc((size_t)b->n, sizeof *base);
    ab_run_comparison *v = calloc((size_t)b->n, sizeof *v);
    int pairs = 0, status = AB_EXIT_OK;
    if (!mine || !base || !v) {
        fprintf(stderr, "attnbench compare: out of memory\n");
        status = AB_EXIT_FAIL;
        goto done;
    }
    for (int i = 0; i < b->n; i++) {
        size_t at, len = build_part(b->set[i].name, &at);
        if (!len || of_build(b->set[i].name, ref) || (judged && !of_build(b->set[i].name, judged)))
            continue;
        char want[sizeof b->set[0].name];
        snprintf(want, sizeof want, "%.*s@%s%s", (int)at, b->set[i].name, ref,
                 b->set[i].name + at + len);
        for (int j = 0; j < b->n; j++)
            if (strcmp(b->set[j].name, want) == 0) {
                mine[pairs] = i;
                base[pairs++] = j;
                break;
            }
    }
    /* A kernel of a judged build that failed is a regression, as a failure
     * in NEW is between two sides; one of the reference build that failed,
     * or a time that is not a positive number, leaves its pair unjudged
     * (exit 2). Dropped unsaid, a broken build passed the gate. */
    side_notes notes = { 0 };
    const char **failed = calloc((size_t)b->n_bad + 1, sizeof *failed);
    const char **unusable = calloc((size_t)b->n_bad + 1, sizeof *unusable);
    if (!failed || !unusable) {
        fprintf(stderr, "attnbench compare: out of memory\n");
        status = AB_EXIT_FAIL;
        goto done_notes;
    }
    for (int k = 0; k < b->n_bad; k++) {
        const ab_bad_bench *bad = &b->bad[k];
        size_t at;
        if (!build_part(bad->name, &at))
            continue;
        if (bad->failed && !of_build(bad->name, ref) && (!judged || of_build(bad->name, judged)))
            failed[notes.n_failed++] = bad->name;
        else if (of_build(bad->name, ref) || !judged || of_build(bad->name, judged)) {
            unusable[notes.n_unusable++] = bad->name;
            fprintf(stderr, "attnbench compare: %s: %s: its pair is not judged\n", bad->name,
                    bad->failed ? "FAILED in the reference build"
                                : "a time that is not a positive number");
        }
    }
    if (pairs == 0 && notes.n_failed == 0) {
        fprintf(stderr, "attnbench compare: %s has no K@%s beside K@%s (a file of run --lib); "
                "give two sides to compare runs\n", path, judged ? judged : "BUILD", ref);
        status = AB_EXIT_USAGE;
        goto done_notes;
    }
    ab_compare_opts each = *o;
    each.alpha = pairs ? o->alpha / pairs : o->alpha;
    char head[80];
    snprintf(head, sizeof head, "benchmark (%.30s / %.30s)", judged ? judged : "BUILD", ref);
    printf("%-64s %8s %19s %8s %9s %7s  %s\n", head, "ratio", "interval", "MDE", "p", "rounds",
           "verdict");
    int regressions = 0, improvements = 0, unclear = 0;
    for (int k = 0; k < pairs; k++) {
        const ab_sample_set *a = &b->set[base[k]], *x = &b->set[mine[k]];
        double logs[AB_MAX_REP];
        int m = 0;
        for (int i = 0; i < x->n; i++)
            for (int j = 0; j < a->n; j++)
                if (x->round[i] >= 0 && x->round[i] == a->round[j] && a->t[j] > 0 && x->t[i] > 0) {
                    logs[m++] = log(x->t[i] / a->t[j]);
                    break;
                }
        if (ab_compare_paired(logs, m, &each, &v[k]) != 0) {
            fprintf(stderr, "attnbench compare: %s: unusable times\n", x->name);
            status = AB_EXIT_USAGE;
            goto done_notes;
        }
        char count[24];
        snprintf(count, sizeof count, "%d", m);
        print_row(x->name, &v[k], count);
        regressions += v[k].verdict == AB_REGRESSION;
        improvements += v[k].verdict == AB_IMPROVEMENT;
        unclear += v[k].verdict == AB_INCONCLUSIVE;
    }
    for (int k = 0; k < notes.n_failed; k++)
        printf("%-64s FAILED (error_occurred)\n", failed[k]);
    printf("%d regression%s, %d improvement%s, %d inconclusive of %d pairs (paired by round; "
           "ratio beyond +-%.0f%% and p < %g over the pairs; no change needs an MDE <= %.0f%%)\n",
           regressions, regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s",
           unclear, pairs, 100 * o->min_effect, o->alpha, 100 * o->threshold);
    status = verdict_status(regressions, &notes, "the judged build");
    notes.failed = failed;
    notes.unusable = unusable;
    const pair_names named = { b, mine };
    if (json_path && write_verdicts(json_path, pair_name, &named, v, pairs, NULL, &notes) != 0)
        status = AB_EXIT_USAGE;
done_notes:
    free(failed);
    free(unusable);
done:
    free(mine);
    free(base);
    free(v);
    ab_bench_files_free(f, nf);
    return status;
}

int ab_cmd_compare(int argc, char **argv)
{
    double alpha = 0.01, min_effect = 0.05, run_noise = AB_DEFAULT_RUN_NOISE;
    double threshold = AB_DEFAULT_THRESHOLD;
    const char *pos[2], *json_path = NULL, *base_build = NULL, *new_build = NULL;
    int n_pos;
    const ab_flag flags[] = {
        { "alpha", AB_FLAG_DOUBLE, &alpha, "P", "significance level (default 0.01)", 1e-9, 0.5 },
        { "min-effect", AB_FLAG_DOUBLE, &min_effect, "F", "smallest change that counts, as a fraction (default 0.05)", 0, 10 },
        { "run-noise", AB_FLAG_DOUBLE, &run_noise, "S", "run-to-run noise floor (sigma of log time) with one run a side (default 0.10, from A/A runs on the 2-vCPU VMs)", 0, 5 },
        { "threshold", AB_FLAG_DOUBLE, &threshold, "F", "the change a benchmark's data must be able to detect (its MDE) for \"no change\"; else \"inconclusive\" (default 0.10)", 0, 10 },
        { "json", AB_FLAG_STRING, &json_path, "FILE", "also write the verdicts as JSON", 0, 0 },
        { "base-build", AB_FLAG_STRING, &base_build, "NAME", "one file of run --lib: the build NAME is the base the others are judged against (default self)", 0, 0 },
        { "new-build", AB_FLAG_STRING, &new_build, "NAME", "one file of run --lib: judge only build NAME's kernels (default: every build but the base; self when --base-build is given)", 0, 0 },
    };
    int rc = ab_cli_command(
        "compare",
        "attnbench compare BASE.json[,..] NEW.json[,..] | RUN.json  [--alpha P] [--min-effect F]\n"
        "                         [--run-noise S] [--threshold F] [--json FILE]\n"
        "                         [--base-build NAME] [--new-build NAME]",
        "Pairs the benchmarks of two sides of Google Benchmark JSON by name and judges each\n"
        "at the level of runs: each file is a run and gives one median per benchmark, since\n"
        "repetitions inside one process share its state and understate how much runs differ.\n"
        "With two or more files a side (runs of each build, ideally interleaved A B A B), the\n"
        "run-to-run noise is estimated from them (a moderated t-test on the log medians); with\n"
        "one file a side it is the larger of --run-noise and the spread of all benchmarks'\n"
        "ratios. A regression needs new/base above 1 + min-effect AND p < alpha. Each\n"
        "benchmark's MDE is the slowdown its test would call 80% of the time: without a\n"
        "significant change it says \"no change\" only when the MDE is at most --threshold,\n"
        "else \"inconclusive\" (so is a benchmark a side flags unstable).\n"
        "With one file, written by run --lib, each K@BUILD is judged against K@self from the\n"
        "rounds both ran in (a paired t-test, alpha over the pairs): builds timed in one\n"
        "process, where the machine's drift cancels; --base-build NAME judges the kernels of\n"
        "self (or of --new-build NAME2) against NAME's instead (the CI gate: new against base).\n"
        "Exit status: 0 nothing regressed, 1 a regression, 2 unusable input (BASE and NEW\n"
        "with no benchmark in common too) or a --json that could not be written.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), pos, 2, &n_pos);
    if (rc >= 0)
        return rc;
    const ab_compare_opts o = { alpha, min_effect, run_noise, threshold };
    if (n_pos == 1)
        return compare_builds(pos[0], &o, base_build ? base_build : "self",
                              new_build ? new_build : base_build ? "self" : NULL, json_path);
    if (n_pos != 2) {
        fprintf(stderr, "attnbench compare: give two sides, BASE.json NEW.json (or one file of "
                "run --lib)\n");
        return AB_EXIT_USAGE;
    }
    char err[512];
    ab_bench_file *base = NULL, *fresh = NULL;
    int nb = 0, nf = 0;
    if (ab_bench_files_load(pos[0], &base, &nb, err, sizeof err) != 0
        || ab_bench_files_load(pos[1], &fresh, &nf, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench compare: %s\n", err);
        if (base)
            ab_bench_files_free(base, nb);
        return AB_EXIT_USAGE;
    }
    if (nb > AB_MAX_RUNS || nf > AB_MAX_RUNS) {
        fprintf(stderr, "attnbench compare: at most %d files a side\n", AB_MAX_RUNS);
        ab_bench_files_free(base, nb);
        ab_bench_files_free(fresh, nf);
        return AB_EXIT_USAGE;
    }
    if (!distinct_runs(base, nb, "BASE", pos[0]) || !distinct_runs(fresh, nf, "NEW", pos[1])) {
        ab_bench_files_free(base, nb);
        ab_bench_files_free(fresh, nf);
        return AB_EXIT_USAGE;
    }
    char first[256], other[256];
    side_notes notes = { 0 };
    notes.machines_differ = !one_machine(base, nb, fresh, nf, first, other, sizeof first);
    if (notes.machines_differ) {
        printf("warning: the files come from different machines (%s; %s): a ratio mixes the "
               "change with the machine\n", first, other);
        fprintf(stderr, "attnbench compare: warning: the files come from different machines "
                "(%s; %s)\n", first, other);
    }

    /* The benchmarks of the first base file, then any other base file's, each
     * with its runs on both sides. */
    ab_bench_runs *runs = calloc(AB_MAX_BENCH, sizeof *runs);
    ab_run_comparison *verdicts = calloc(AB_MAX_BENCH, sizeof *verdicts);
    const char **names = calloc(AB_MAX_BENCH, sizeof *names);
    const char **failed = calloc(AB_MAX_BENCH, sizeof *failed);
    /* Each file may name AB_MAX_BENCH benchmarks with bad times. */
    const char **unusable = calloc((size_t)(nb + nf) * AB_MAX_BENCH, sizeof *unusable);
    int n = 0, status = AB_EXIT_OK;
    if (!runs || !verdicts || !names || !failed || !unusable) {
        fprintf(stderr, "attnbench compare: out of memory\n");
        status = AB_EXIT_FAIL;
        goto done;
    }
    /* A benchmark with a time that is not a positive number in any file is
     * named and left out; the others are still judged (exit 2 at the end:
     * the input was not all usable). */
    for (int i = 0; i < nb + nf; i++) {
        const ab_bench_file *file = i < nb ? &base[i] : &fresh[i - nb];
        for (int k = 0; k < file->n_bad; k++)
            if (!file->bad[k].failed && !listed(unusable, notes.n_unusable, file->bad[k].name)) {
                unusable[notes.n_unusable++] = file->bad[k].name;
                fprintf(stderr, "attnbench compare: %s: a time that is not a positive number in "
                        "%s run %d: not judged\n", file->bad[k].name, i < nb ? "BASE" : "NEW",
                        1 + (i < nb ? i : i - nb));
            }
    }
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < base[i].n; k++) {
            const char *name = base[i].set[k].name;
            if (listed(names, n, name) || listed(unusable, notes.n_unusable, name)
                || n == AB_MAX_BENCH)
                continue;
            ab_bench_runs *r = &runs[n];
            r->attnbench = base[i].attnbench;
            r->threads = base[i].set[k].threads;
            r->nb = side_stats(base, nb, name, r->base);
            r->nf = side_stats(fresh, nf, name, r->fresh);
            names[n++] = name;
        }
    /* Failed in a NEW run: a regression whatever the other runs say. Only
     * in BASE: listed, not judged (and kept out of the pooled noise). */
    int judged = 0;
    for (int j = 0; j < n; j++) {
        if (failed_in(fresh, nf, names[j]))
            failed[notes.n_failed++] = names[j];
        if (runs[j].nf > 0) {
            runs[judged] = runs[j];
            names[judged++] = names[j];
        } else if (!listed(failed, notes.n_failed, names[j])) {
            printf("%-64s only in BASE\n", names[j]);
        }
    }
    if (ab_compare_runs(runs, judged, &o, verdicts) != 0) {
        fprintf(stderr, "attnbench compare: unusable times (a median that is not a positive "
                "number)\n");
        status = AB_EXIT_USAGE;
        goto done;
    }
    printf("%-64s %8s %19s %8s %9s %7s  %s\n", "benchmark", "new/base", "95% interval", "MDE",
           "p", "runs", "verdict");
    int regressions = 0, improvements = 0, unstable = 0, one_run = 0, unclear = 0;
    for (int j = 0; j < judged; j++) {
        const ab_run_comparison *c = &verdicts[j];
        char count[24];
        snprintf(count, sizeof count, "%d/%d", c->runs_base, c->runs_new);
        print_row(names[j], c, count);
        regressions += c->verdict == AB_REGRESSION;
        improvements += c->verdict == AB_IMPROVEMENT;
        unclear += c->verdict == AB_INCONCLUSIVE;
        unstable += c->unstable;
        one_run += c->runs_base + c->runs_new == 2;
    }
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < fresh[f].n; k++) {
            const char *name = fresh[f].set[k].name;
            int known = listed(names, judged, name);
            for (int g = 0; g < f && !known; g++)
                known = ab_bench_file_find(&fresh[g], name) != NULL;
            if (!known)
                printf("%-64s only in NEW\n", name);
        }
    /* Failed in NEW and not in BASE: no regression (nothing to regress
     * from), but said, not passed over. */
    for (int f = 0; f < nf; f++)
        for (int k = 0; k < fresh[f].n_bad; k++) {
            const char *name = fresh[f].bad[k].name;
            int known = !fresh[f].bad[k].failed || listed(names, n, name)
                     || listed(failed, notes.n_failed, name);
            for (int g = 0; g < f && !known; g++)
                known = failed_in(&fresh[g], 1, name);
            if (!known)
                printf("%-64s only in NEW, and FAILED there (error_occurred)\n", name);
        }
    for (int k = 0; k < notes.n_failed; k++)
        printf("%-64s FAILED in NEW (error_occurred)\n", failed[k]);
    if (judged == 0 && notes.n_failed == 0) {   /* the wrong files, or a renamed suite: no verdict, not a pass */
        fprintf(stderr, "attnbench compare: BASE and NEW have no benchmark in common: nothing "
                "to judge\n");
        status = AB_EXIT_USAGE;
        goto done;
    }
    ab_run_comparison whole;
    int has_whole = ab_compare_whole(runs, verdicts, judged, &o, &whole) == 0 && whole.runs_base > 0;
    notes.runs_a_side = one_run != judged;
    if (has_whole) {
        char count[24];
        snprintf(count, sizeof count, "%d/%d", notes.runs_a_side ? whole.runs_base : 1,
                 notes.runs_a_side ? whole.runs_new : 1);
        print_row(whole_name(notes.runs_a_side), &whole, count);
        regressions += whole.verdict == AB_REGRESSION;
        improvements += whole.verdict == AB_IMPROVEMENT;
    } else if (judged > 0) {
        printf("%-64s inconclusive: fewer than %d benchmarks of calls >= %.0f us%s\n",
               "the whole run", AB_WHOLE_MIN, 1e6 * AB_SHORT_CALL,
               one_run == judged ? "" : " in every run");
    }
    printf("%d regression%s, %d improvement%s, %d inconclusive (%d unstable) of %d (ratio beyond "
           "+-%.0f%% and p < %g; no change needs an MDE <= %.0f%%; ", regressions,
           regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s", unclear,
           unstable, judged, 100 * min_effect, alpha, 100 * threshold);
    if (one_run == judged)
        printf("one run a side: run-to-run noise %.1f%%, the larger of --run-noise and the "
               "spread across benchmarks)\n", judged ? 100 * verdicts[0].noise : 100 * run_noise);
    else
        printf("%d and %d runs: run-to-run noise estimated from them)\n", nb, nf);
    status = verdict_status(regressions, &notes, "NEW");
    notes.failed = failed;
    notes.unusable = unusable;
    if (json_path
        && write_verdicts(json_path, name_in_list, names, verdicts, judged, has_whole ? &whole : NULL,
                          &notes) != 0)
        status = AB_EXIT_USAGE;

done:
    free(runs);
    free(verdicts);
    free(names);
    free(failed);
    free(unusable);
    ab_bench_files_free(base, nb);
    ab_bench_files_free(fresh, nf);
    return status;
}
