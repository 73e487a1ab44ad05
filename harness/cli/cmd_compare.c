/*
 * cmd_compare.c — `attnbench compare BASE.json[,..] NEW.json[,..]`: pairs
 * the benchmarks of the two sides by name and judges each at the level of
 * runs (compare.h): every file is a run, giving one median per benchmark.
 * Reads Google Benchmark JSON from any program (bench_file.h), repetitions
 * or aggregates only. Exit status: 0 nothing regressed, 1 a regression, 2
 * unusable input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_file.h"
#include "cli.h"
#include "commands.h"
#include "compare.h"

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

/* 1 when every file of both sides names the same machine (or none says). */
static int one_machine(const ab_bench_file *b, int nb, const ab_bench_file *f, int nf,
                       char *first, char *other, size_t len)
{
    machine_of(&b[0], first, len);
    for (int i = 0; i < nb + nf; i++) {
        machine_of(i < nb ? &b[i] : &f[i - nb], other, len);
        if (first[0] && other[0] && strcmp(first, other) != 0)
            return 0;
    }
    return 1;
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

int ab_cmd_compare(int argc, char **argv)
{
    double alpha = 0.01, min_effect = 0.05, run_noise = AB_DEFAULT_RUN_NOISE;
    const char *pos[2];
    int n_pos;
    const ab_flag flags[] = {
        { "alpha", AB_FLAG_DOUBLE, &alpha, "P", "significance level (default 0.01)", 1e-9, 0.5 },
        { "min-effect", AB_FLAG_DOUBLE, &min_effect, "F", "smallest change that counts, as a fraction (default 0.05)", 0, 10 },
        { "run-noise", AB_FLAG_DOUBLE, &run_noise, "S", "run-to-run noise floor (sigma of log time) with one run a side (default 0.10, from A/A runs on the 2-vCPU VMs)", 0, 5 },
    };
    int rc = ab_cli_command(
        "compare",
        "attnbench compare BASE.json[,..] NEW.json[,..] [--alpha P] [--min-effect F] [--run-noise S]",
        "Pairs the benchmarks of two sides of Google Benchmark JSON by name and judges each\n"
        "at the level of runs: each file is a run and gives one median per benchmark, since\n"
        "repetitions inside one process share its state and understate how much runs differ.\n"
        "With two or more files a side (runs of each build, ideally interleaved A B A B), the\n"
        "run-to-run noise is estimated from them (a moderated t-test on the log medians); with\n"
        "one file a side it is the larger of --run-noise and the spread of all benchmarks'\n"
        "ratios. A regression needs new/base above 1 + min-effect AND p < alpha. A benchmark\n"
        "a side flags unstable is reported, not judged.\n"
        "Exit status: 0 nothing regressed, 1 a regression, 2 unusable input.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), pos, 2, &n_pos);
    if (rc >= 0)
        return rc;
    if (n_pos != 2) {
        fprintf(stderr, "attnbench compare: give two sides, BASE.json NEW.json\n");
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
    char first[256], other[256];
    if (!one_machine(base, nb, fresh, nf, first, other, sizeof first))
        printf("warning: the files come from different machines (%s; %s): a ratio mixes the "
               "change with the machine\n", first, other);

    /* The benchmarks of the first base file, then any other base file's, each
     * with its runs on both sides. */
    ab_bench_runs *runs = calloc(AB_MAX_BENCH, sizeof *runs);
    ab_run_comparison *verdicts = calloc(AB_MAX_BENCH, sizeof *verdicts);
    const char **names = calloc(AB_MAX_BENCH, sizeof *names);
    int n = 0, status = AB_EXIT_OK;
    if (!runs || !verdicts || !names) {
        fprintf(stderr, "attnbench compare: out of memory\n");
        status = AB_EXIT_FAIL;
        goto done;
    }
    for (int i = 0; i < nb; i++)
        for (int k = 0; k < base[i].n; k++) {
            const char *name = base[i].set[k].name;
            if (listed(names, n, name) || n == AB_MAX_BENCH)
                continue;
            ab_bench_runs *r = &runs[n];
            r->attnbench = base[i].attnbench;
            r->threads = base[i].set[k].threads;
            r->nb = side_stats(base, nb, name, r->base);
            r->nf = side_stats(fresh, nf, name, r->fresh);
            names[n++] = name;
        }
    /* Only in BASE: listed, not judged (and kept out of the pooled noise). */
    int judged = 0;
    for (int j = 0; j < n; j++) {
        if (runs[j].nf > 0) {
            runs[judged] = runs[j];
            names[judged++] = names[j];
        } else {
            printf("%-64s only in BASE\n", names[j]);
        }
    }
    ab_compare_opts o = { alpha, min_effect, run_noise };
    if (ab_compare_runs(runs, judged, &o, verdicts) != 0) {
        fprintf(stderr, "attnbench compare: unusable times (a median that is not a positive "
                "number)\n");
        status = AB_EXIT_USAGE;
        goto done;
    }
    printf("%-64s %8s %19s %9s %7s  %s\n", "benchmark", "new/base", "95% interval", "p", "runs",
           "verdict");
    int regressions = 0, improvements = 0, unstable = 0, one_run = 0;
    for (int j = 0; j < judged; j++) {
        const ab_run_comparison *c = &verdicts[j];
        const char *verdict = c->unstable ? "unstable: not judged"
                            : c->verdict == AB_REGRESSION ? "REGRESSION"
                            : c->verdict == AB_IMPROVEMENT ? "improvement" : "no change";
        char count[24];
        snprintf(count, sizeof count, "%d/%d", c->runs_base, c->runs_new);
        printf("%-64s %8.3f  [%7.3f, %7.3f] %9.2g %7s  %s\n", names[j], c->ratio, c->lo, c->hi,
               c->p, count, verdict);
        regressions += c->verdict == AB_REGRESSION;
        improvements += c->verdict == AB_IMPROVEMENT;
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
    ab_run_comparison whole;
    if (ab_compare_whole(runs, verdicts, judged, &o, &whole) == 0 && whole.runs_base > 0) {
        printf("%-64s %8.3f  [%7.3f, %7.3f] %9.2g %7s  %s\n", "the whole run (median over benchmarks)", whole.ratio, whole.lo, whole.hi, whole.p, "1/1",
               whole.verdict == AB_REGRESSION ? "REGRESSION"
               : whole.verdict == AB_IMPROVEMENT ? "improvement" : "no change");
        regressions += whole.verdict == AB_REGRESSION;
        improvements += whole.verdict == AB_IMPROVEMENT;
    }
    printf("%d regression%s, %d improvement%s, %d unstable (not judged) of %d (ratio beyond "
           "+-%.0f%% and p < %g; ", regressions, regressions == 1 ? "" : "s", improvements,
           improvements == 1 ? "" : "s", unstable, judged, 100 * min_effect, alpha);
    if (one_run == judged)
        printf("one run a side: run-to-run noise %.1f%%, the larger of --run-noise and the "
               "spread across benchmarks)\n", judged ? 100 * verdicts[0].noise : 100 * run_noise);
    else
        printf("%d and %d runs: run-to-run noise estimated from them)\n", nb, nf);
    status = regressions ? AB_EXIT_FAIL : AB_EXIT_OK;

done:
    free(runs);
    free(verdicts);
    free(names);
    ab_bench_files_free(base, nb);
    ab_bench_files_free(fresh, nf);
    return status;
}
