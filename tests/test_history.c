/*
 * test_history.c — harness/store/history.c: the step detector on series whose
 * steps are known (flat noise, one outlier, a step, two steps, a drift
 * below the minimum effect), and the database: runs added in date order
 * from JSON files the test writes, a repeated file skipped, the step
 * named by the commit where it happened, and files that are not a history
 * (garbage, another schema) refused and left byte for byte as they were.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "history.h"

#ifdef ATTN_HAVE_SQLITE
#include <sqlite3.h>
#endif

/* A series of n points around level 1 with ±noise (uniform, seeded), and
 * factor f from index at on (at >= n: no step). */
static void series(double *y, int n, double noise, int at, double f, uint64_t seed)
{
    for (int i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        y[i] = (i >= at ? f : 1.0) * (1.0 + noise * u);
    }
}

static void test_detector(void)
{
    double y[200], before[8], after[8];
    int at[8];

    t_case("history steps: flat series with 2%% noise, 50 seeds: no step");
    int false_steps = 0;
    for (uint64_t seed = 1; seed <= 50; seed++) {
        series(y, 40, 0.02, 40, 1.0, seed);
        false_steps += ab_steps_detect(y, 40, 0.05, at, NULL, NULL, 8);
    }
    CHECK(false_steps == 0, "%d steps found in flat series", false_steps);

    t_case("history steps: one outlier (+30%%) is not a step");
    series(y, 30, 0.02, 30, 1.0, 7);
    y[17] *= 1.3;
    int n = ab_steps_detect(y, 30, 0.05, at, NULL, NULL, 8);
    CHECK(n == 0, "%d steps, first at %d", n, n ? at[0] : -1);

    t_case("history steps: +10%% from run 20 of 40 (2%% noise), 20 seeds: found there");
    int wrong = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        series(y, 40, 0.02, 20, 1.10, seed);
        n = ab_steps_detect(y, 40, 0.05, at, before, after, 8);
        if (n != 1 || at[0] != 20 || fabs(after[0] / before[0] - 1.10) > 0.02)
            wrong++;
    }
    CHECK(wrong == 0, "%d of 20 series without the one step at 20 (last: %d steps, at %d)",
          wrong, n, n ? at[0] : -1);

    t_case("history steps: a step 3 runs before the end is found");
    series(y, 25, 0.01, 22, 1.15, 3);
    n = ab_steps_detect(y, 25, 0.05, at, NULL, NULL, 8);
    CHECK(n == 1 && at[0] == 22, "%d steps, first at %d", n, n ? at[0] : -1);

    t_case("history steps: two steps, -20%% at 10 and +25%% at 30");
    series(y, 45, 0.01, 45, 1.0, 11);
    for (int i = 10; i < 45; i++)
        y[i] *= i < 30 ? 0.8 : 1.0;
    n = ab_steps_detect(y, 45, 0.05, at, before, after, 8);
    CHECK(n == 2 && at[0] == 10 && at[1] == 30 && after[0] < before[0] && after[1] > before[1],
          "%d steps at %d, %d", n, n > 0 ? at[0] : -1, n > 1 ? at[1] : -1);

    t_case("history steps: a clean 3%% step is below the 5%% minimum effect");
    series(y, 40, 0.002, 20, 1.03, 5);
    n = ab_steps_detect(y, 40, 0.05, at, NULL, NULL, 8);
    CHECK(n == 0, "%d steps", n);
    n = ab_steps_detect(y, 40, 0.02, at, NULL, NULL, 8);
    CHECK(n == 1 && at[0] == 20, "with a 2%% minimum: %d steps, at %d", n, n ? at[0] : -1);

    t_case("history steps: too short or unusable series give none");
    double two[2] = { 1.0, 2.0 }, bad[4] = { 1.0, -1.0, 1.0, 1.0 };
    CHECK(ab_steps_detect(two, 2, 0.05, at, NULL, NULL, 8) == 0, "two points");
    CHECK(ab_steps_detect(bad, 4, 0.05, at, NULL, NULL, 8) == 0, "a negative time");
}

#ifdef ATTN_HAVE_SQLITE
/* A benchmark file as attnbench writes one: context with machine, commit
 * and date; 5 repetitions of one benchmark at time t (ns). */
static void write_run(const char *path, const char *commit, const char *date, double t)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\"context\": {\"machine_key\": \"vendor=Test family=1\", \"machine_id\": "
               "\"00000000000000aa\", \"git_commit\": \"%s\", \"date\": \"%s\"},\n"
               "\"benchmarks\": [", commit, date);
    for (int r = 0; r < 5; r++)
        fprintf(f, "%s{\"name\": \"sdpa/avx512/B1_H2_L64_Dh16/threads:1\", \"run_name\": "
                   "\"sdpa/avx512/B1_H2_L64_Dh16/threads:1\", \"run_type\": \"iteration\", "
                   "\"threads\": 1, \"iterations\": 10, \"real_time\": %.1f, \"cpu_time\": %.1f, "
                   "\"time_unit\": \"ns\"}", r ? "," : "", t * (1 + 0.002 * r), t);
    fprintf(f, "]}\n");
    fclose(f);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}
#endif /* ATTN_HAVE_SQLITE */

static void test_database(void)
{
    char dir[] = "/tmp/attnbench-history-XXXXXX";
    if (!mkdtemp(dir)) {
        t_case("history: temporary directory");
        CHECK(0, "mkdtemp");
        return;
    }
    char db[256], json[256], err[512];
    snprintf(db, sizeof db, "%s/sub/history.db", dir);
    snprintf(json, sizeof json, "%s/run.json", dir);
    ab_history *h = ab_history_open(db, err, sizeof err);
#ifndef ATTN_HAVE_SQLITE
    t_case("history: without SQLite the history says so");
    CHECK(!h && strstr(err, "without SQLite"), "open: %s", h ? "opened" : err);
    rmdir(dir);
#else
    t_case("history: runs added; a repeated file skipped; the step named by its commit");
    CHECK(h != NULL, "open %s: %s", db, err);
    if (!h)
        return;
    int added = 0, step_run = 12;
    for (int i = 0; i < 20; i++) {
        char commit[16], date[40];
        snprintf(commit, sizeof commit, "c%02d", i);
        /* Added out of date order: the series must be ordered by date. */
        int day = (i * 7) % 20;
        snprintf(date, sizeof date, "2026-11-%02dT10:00:00+0000", day + 1);
        write_run(json, commit, date, day >= step_run ? 1.2e6 : 1.0e6);
        ab_bench_file bf;
        if (ab_bench_file_load(json, &bf, err, sizeof err) != 0) {
            CHECK(0, "load: %s", err);
            break;
        }
        int r = ab_history_add(h, &bf, "run.json", NULL, 0.05, err, sizeof err);
        CHECK(r == 0, "add %d: %d %s", i, r, err);
        added += r == 0;
        if (i == 3)
            CHECK(ab_history_add(h, &bf, "run.json", NULL, 0.05, err, sizeof err) == 1,
                  "the same run twice was not skipped");
        ab_bench_file_free(&bf);
    }
    CHECK(added == 20, "%d runs added", added);
    ab_history_close(h);
    /* The stored step, read back as reports/report.py reads it (the tables
     * are the contract): named by the commit of the first run after the
     * step, the one dated day 13. */
    int day13 = -1;
    for (int i = 0; i < 20; i++)
        if ((i * 7) % 20 == step_run)
            day13 = i;
    sqlite3 *raw = NULL;
    sqlite3_stmt *st = NULL;
    char want[16];
    snprintf(want, sizeof want, "c%02d", day13);
    if (sqlite3_open_v2(db, &raw, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK
        && sqlite3_prepare_v2(raw, "SELECT git_commit, after_s / before_s, "
                              "(SELECT count(*) FROM steps) FROM steps", -1, &st, NULL) == SQLITE_OK
        && sqlite3_step(st) == SQLITE_ROW)
        CHECK(strcmp((const char *)sqlite3_column_text(st, 0), want) == 0
              && fabs(sqlite3_column_double(st, 1) - 1.2) < 0.01 && sqlite3_column_int(st, 2) == 1,
              "step at %s, ratio %.3f, %d steps; want one at %s, 1.2",
              (const char *)sqlite3_column_text(st, 0), sqlite3_column_double(st, 1),
              sqlite3_column_int(st, 2), want);
    else
        CHECK(0, "no step stored: %s", raw ? sqlite3_errmsg(raw) : "cannot open");
    sqlite3_finalize(st);
    sqlite3_close(raw);

    t_case("history: a file that is not a database is refused and left as it was");
    char bad[256];
    snprintf(bad, sizeof bad, "%s/bad.db", dir);
    FILE *f = fopen(bad, "w");
    if (f) {
        fputs("this is not SQLite\n", f);
        fclose(f);
    }
    h = ab_history_open(bad, err, sizeof err);
    CHECK(!h && strstr(err, "not a history") && file_size(bad) == 19, "open: %s, size %ld",
          h ? "opened" : err, file_size(bad));
    ab_history_close(h);

    t_case("history: a history of another schema is refused and left as it was");
    char other[256];
    snprintf(other, sizeof other, "%s/other.db", dir);
    raw = NULL;
    if (sqlite3_open(other, &raw) == SQLITE_OK
        && sqlite3_exec(raw, "CREATE TABLE t(x); PRAGMA user_version = 7;", NULL, NULL, NULL)
           == SQLITE_OK) {
        sqlite3_close(raw);
        long size = file_size(other);
        h = ab_history_open(other, err, sizeof err);
        CHECK(!h && strstr(err, "schema 7") && file_size(other) == size, "open: %s",
              h ? "opened" : err);
        ab_history_close(h);
    } else {
        sqlite3_close(raw);
        CHECK(0, "could not make a database of another schema");
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        t_skip("history: could not remove %s", dir);
#endif /* ATTN_HAVE_SQLITE */
}

void test_history(void)
{
    test_detector();
    test_database();
}
