/*
 * cmd_compare.c — `attnbench compare BASE.json NEW.json`: pairs benchmarks by
 * name and gives each a verdict (compare.h). Reads Google Benchmark JSON
 * from any program: the per-repetition "iteration" entries are the samples
 * (aggregates are ignored); a file without repetitions gives one sample per
 * benchmark, which can show a change but never prove one.
 * Exit status: 0 nothing regressed, 1 a regression, 2 unusable input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "json_parse.h"

#define MAX_BENCH 4096
#define MAX_REP 1000

typedef struct sample_set {
    char name[256];
    int n;
    double t[MAX_REP];        /* seconds per iteration */
} sample_set;

typedef struct bench_file {
    int n;
    sample_set *set;
} bench_file;

static double unit_seconds(const char *unit)
{
    if (!unit || strcmp(unit, "ns") == 0)
        return 1e-9;
    if (strcmp(unit, "us") == 0)
        return 1e-6;
    if (strcmp(unit, "ms") == 0)
        return 1e-3;
    if (strcmp(unit, "s") == 0)
        return 1.0;
    return -1.0;
}

static char *read_all(const char *path, char *err, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, len, "%s: cannot open", path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            char *bigger = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        snprintf(err, len, "%s: too large or out of memory", path);
    else
        buf[n] = '\0';
    return buf;
}

/* The samples of every benchmark in a Google Benchmark JSON file. */
static int load(const char *path, bench_file *bf, char *err, size_t len)
{
    char perr[200];
    char *text = read_all(path, err, len);
    if (!text)
        return -1;
    jv *root = jv_parse(text, perr, sizeof perr);
    free(text);
    const jv *benchmarks = root ? jv_get(root, "benchmarks") : NULL;
    if (!root || !benchmarks || benchmarks->type != JV_ARRAY) {
        snprintf(err, len, "%s: %s", path, root ? "no \"benchmarks\" array" : perr);
        jv_free(root);
        return -1;
    }
    bf->set = calloc(MAX_BENCH, sizeof *bf->set);
    bf->n = 0;
    int rc = bf->set ? 0 : -1;
    for (int i = 0; rc == 0 && i < benchmarks->n; i++) {
        const jv *b = &benchmarks->items[i];
        const jv *type = jv_get(b, "run_type"), *name = jv_get(b, "run_name");
        const jv *time = jv_get(b, "real_time"), *unit = jv_get(b, "time_unit");
        const jv *error = jv_get(b, "error_occurred");
        if (type && type->type == JV_STRING && strcmp(type->string, "aggregate") == 0)
            continue;
        if (error && error->type == JV_BOOL && error->number != 0)
            continue;
        if (!name || name->type != JV_STRING)
            name = jv_get(b, "name");
        double scale = unit_seconds(unit && unit->type == JV_STRING ? unit->string : NULL);
        if (!name || name->type != JV_STRING || !time || time->type != JV_NUMBER || scale < 0) {
            snprintf(err, len, "%s: benchmark %d lacks a name, a real_time or a known time_unit",
                     path, i);
            rc = -1;
            break;
        }
        int k = 0;
        while (k < bf->n && strcmp(bf->set[k].name, name->string) != 0)
            k++;
        if (k == bf->n) {
            if (bf->n == MAX_BENCH) {
                snprintf(err, len, "%s: more than %d benchmarks", path, MAX_BENCH);
                rc = -1;
                break;
            }
            snprintf(bf->set[bf->n++].name, sizeof bf->set[0].name, "%s", name->string);
        }
        if (bf->set[k].n < MAX_REP)
            bf->set[k].t[bf->set[k].n++] = time->number * scale;
    }
    jv_free(root);
    if (rc == 0 && bf->n == 0) {
        snprintf(err, len, "%s: no benchmarks", path);
        rc = -1;
    }
    return rc;
}

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
        "compare", "attnbench compare BASE.json NEW.json [--alpha P] [--min-effect F]",
        "Pairs the benchmarks of two Google Benchmark JSON files by name and, from their\n"
        "repetitions, gives NEW/BASE (Hodges-Lehmann estimate), its confidence interval and a\n"
        "Mann-Whitney U test. A regression needs a ratio above 1 + min-effect AND p < alpha.\n"
        "Exit status: 0 nothing regressed, 1 a regression, 2 unusable input.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), pos, 2, &n_pos);
    if (rc >= 0)
        return rc;
    if (n_pos != 2) {
        fprintf(stderr, "attnbench compare: give two files, BASE.json NEW.json\n");
        return AB_EXIT_USAGE;
    }
    char err[512];
    bench_file base = { 0, NULL }, fresh = { 0, NULL };
    if (load(pos[0], &base, err, sizeof err) != 0 || load(pos[1], &fresh, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench compare: %s\n", err);
        free(base.set);
        free(fresh.set);
        return AB_EXIT_USAGE;
    }
    printf("%-64s %8s %19s %9s  %s\n", "benchmark", "new/base", "CI", "p", "verdict");
    int regressions = 0, improvements = 0, weak = 0, missing = 0;
    for (int i = 0; i < base.n; i++) {
        const sample_set *b = &base.set[i], *f = NULL;
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
    free(base.set);
    free(fresh.set);
    return regressions ? AB_EXIT_FAIL : AB_EXIT_OK;
}
