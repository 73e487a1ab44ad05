/*
 * cmd_compare.c — `attnbench compare BASE.json NEW.json`: pairs benchmarks by
 * name and gives each a verdict (compare.h). Reads Google Benchmark JSON
 * from any program (bench_file.h); a file without repetitions gives one
 * sample per benchmark, which can show a change but never prove one.
 * Exit status: 0 nothing regressed, 1 a regression, 2 unusable input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "bench_file.h"
#include "compare.h"

int ab_cmd_compare(int argc, char **argv)
{
    double alpha = 0.01, min_effect = 0.05;
    const char *pos[2];
    int n_pos;
    const ab_flag flags[] = {
        { "alpha", AB_FLAG_DOUBLE, &alpha, "P", "significance level of the Mann-Whitney test (default 0.01)", 1e-9, 0.5 },
        { "min-effect", AB_FLAG_DOUBLE, &min_effect, "F", "smallest change that counts, as a fraction (default 0.05)", 0, 10 },
    };
    int rc = ab_cli_command(
        "compare", "attnbench compare BASE.json[,..] NEW.json[,..] [--alpha P] [--min-effect F]",
        "Pairs the benchmarks of two Google Benchmark JSON files by name and, from their\n"
        "repetitions, gives NEW/BASE (Hodges-Lehmann estimate), its confidence interval and a\n"
        "Mann-Whitney U test. A regression needs a ratio above 1 + min-effect AND p < alpha.\n"
        "BASE and NEW may each be a comma-separated list of files (interleaved runs of one\n"
        "build): their repetitions are pooled.\n"
        "Exit status: 0 nothing regressed, 1 a regression, 2 unusable input.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), pos, 2, &n_pos);
    if (rc >= 0)
        return rc;
    if (n_pos != 2) {
        fprintf(stderr, "attnbench compare: give two files, BASE.json NEW.json\n");
        return AB_EXIT_USAGE;
    }
    char err[512];
    ab_bench_file base, fresh;
    memset(&fresh, 0, sizeof fresh);
    if (ab_bench_files_load(pos[0], &base, err, sizeof err) != 0
        || ab_bench_files_load(pos[1], &fresh, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench compare: %s\n", err);
        ab_bench_file_free(&base);
        return AB_EXIT_USAGE;
    }
    printf("%-64s %8s %19s %9s  %s\n", "benchmark", "new/base", "CI", "p", "verdict");
    int regressions = 0, improvements = 0, weak = 0, missing = 0;
    for (int i = 0; i < base.n; i++) {
        const ab_sample_set *b = &base.set[i], *f = NULL;
        for (int j = 0; j < fresh.n && !f; j++)
            if (strcmp(fresh.set[j].name, b->name) == 0)
                f = &fresh.set[j];
        if (!f) {
            printf("%-64s only in BASE\n", b->name);
            missing++;
            continue;
        }
        ab_comparison c;
        if (ab_compare_samples(b->t, b->n, f->t, f->n, alpha, min_effect, &c) != 0) {
            printf("%-64s unusable times\n", b->name);
            continue;
        }
        const char *verdict = c.verdict == AB_REGRESSION ? "REGRESSION"
                            : c.verdict == AB_IMPROVEMENT ? "improvement" : "no change";
        printf("%-64s %8.3f  [%7.3f, %7.3f] %9.2g  %s%s\n", b->name, c.ratio, c.lo, c.hi, c.p,
               verdict, c.weak ? " (weak: < 9 repetitions)" : "");
        regressions += c.verdict == AB_REGRESSION;
        improvements += c.verdict == AB_IMPROVEMENT;
        weak += c.weak;
    }
    for (int j = 0; j < fresh.n; j++) {
        int found = 0;
        for (int i = 0; i < base.n && !found; i++)
            found = strcmp(fresh.set[j].name, base.set[i].name) == 0;
        if (!found)
            printf("%-64s only in NEW\n", fresh.set[j].name);
    }
    printf("%d regression%s, %d improvement%s (ratio beyond ±%.0f%% and p < %g)%s\n", regressions,
           regressions == 1 ? "" : "s", improvements, improvements == 1 ? "" : "s",
           100 * min_effect, alpha,
           weak ? "; some had fewer than 9 repetitions: the test has little power there" : "");
    (void)missing;
    ab_bench_file_free(&base);
    ab_bench_file_free(&fresh);
    return regressions ? AB_EXIT_FAIL : AB_EXIT_OK;
}
