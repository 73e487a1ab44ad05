/*
 * test_history.c — harness/store/history.c and sql.c: the step detector on
 * series whose steps are known (flat noise, one outlier, a step, two
 * steps, a step below the minimum effect, a slow drift, a step inside one); then, on each store built in —
 * an SQLite file, and the PostgreSQL database named by $ATTN_TEST_POSTGRES
 * (a database the test may wipe; skipped, saying so, when unset) — the
 * same history tests: runs added in date order from JSON files the test
 * writes, a repeated file skipped whatever its name, the step named by the
 * commit where it happened, `steps since`, hostile benchmark names stored
 * as data, the fleet's wisdom published and pulled, concurrent adders
 * (forked processes) losing nothing and finding the steps one adder finds,
 * and stores that are not a history (garbage, another schema) refused and
 * left as they were. URL passwords are redacted everywhere.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "history.h"

#include <sys/wait.h>

#include "sha256.h"
#include "sql.h"

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

/* A series of n points whose log has noise of spread cv persisting from
 * point to point (AR(1), lag-1 correlation rho: a machine whose state
 * lasts over consecutive CI runs), and factor f from index at on. */
static void series_ar1(double *y, int n, double cv, double rho, int at, double f, uint64_t *seed)
{
    double level = 0.0;
    for (int i = 0; i < n; i++) {
        double u[2];
        for (int k = 0; k < 2; k++) {
            *seed = *seed * 6364136223846793005ULL + 1442695040888963407ULL;
            u[k] = ((double)(*seed >> 11) + 0.5) / 9007199254740992.0;
        }
        double g = sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
        level = i == 0 ? g : rho * level + sqrt(1.0 - rho * rho) * g;
        y[i] = (i >= at ? f : 1.0) * exp(cv * level);
    }
}

/* y times total^(i / (n - 1)): a drift by the factor total over the series. */
static void drift_by(double *y, int n, double total)
{
    for (int i = 0; i < n; i++)
        y[i] *= pow(total, i / (n - 1.0));
}

static void test_detector_persistent_noise(void)
{
    double y[60];
    int at[8];
    uint64_t seed = 2026;
    t_case("history steps: flat series whose noise persists (AR(1) rho 0.7, CV 5%%, 60 runs), "
           "200 seeds: at most 5%% with a step (the differences' noise alone: 24%%)");
    int with_step = 0;
    for (int t = 0; t < 200; t++) {
        series_ar1(y, 60, 0.05, 0.7, 60, 1.0, &seed);
        with_step += ab_steps_detect(y, 60, 0.05, at, NULL, NULL, 8) > 0;
    }
    CHECK(with_step <= 10, "%d of 200 flat series have a step", with_step);

    t_case("history steps: +20%% from run 20 of 40 in independent noise (CV 5%%), 200 seeds: "
           "found there in at least 95%%");
    int found = 0;
    for (int t = 0; t < 200; t++) {
        double before[8], after[8];
        series_ar1(y, 40, 0.05, 0.0, 20, 1.2, &seed);
        int n = ab_steps_detect(y, 40, 0.05, at, before, after, 8);
        int there = 0;
        for (int k = 0; k < n; k++)
            there |= abs(at[k] - 20) <= 2 && after[k] > before[k];
        found += there;
    }
    CHECK(found >= 190, "found in %d of 200", found);
}

/* A slow drift is no step: the fit cuts a ramp into segments whose medians
 * differ by the drift between their centres, and every cut was blamed on
 * the commit that sat there. */
static void test_detector_drift(void)
{
    double y[60], before[8], after[8];
    int at[8];
    uint64_t seed = 77;
    t_case("history steps: a drift of +20%% over 60 runs (CV 2%%), 100 seeds: at most 5%% with a "
           "step (the segments' medians alone: 97%%)");
    int with_step = 0;
    for (int t = 0; t < 100; t++) {
        series_ar1(y, 60, 0.02, 0.0, 60, 1.0, &seed);
        drift_by(y, 60, 1.2);
        with_step += ab_steps_detect(y, 60, 0.05, at, NULL, NULL, 8) > 0;
    }
    CHECK(with_step <= 5, "%d of 100 drifting series have a step", with_step);

    t_case("history steps: +15%% at run 30 inside that drift (CV 1%%), 50 seeds: the one step, "
           "its size without the drift's");
    int wrong = 0, n = 0;
    double ratio = 0.0;
    for (int t = 0; t < 50; t++) {
        series_ar1(y, 60, 0.01, 0.0, 30, 1.15, &seed);
        drift_by(y, 60, 1.2);
        n = ab_steps_detect(y, 60, 0.05, at, before, after, 8);
        ratio = n == 1 ? after[0] / before[0] : 0.0;
        if (n != 1 || abs(at[0] - 30) > 1 || fabs(ratio - 1.15) > 0.03)
            wrong++;
    }
    CHECK(wrong == 0, "%d of 50 series without the one step of 1.15 at 30 (last: %d steps, "
          "at %d, ratio %.3f)", wrong, n, n ? at[0] : -1, ratio);
}

static void test_detector(void)
{
    test_detector_persistent_noise();
    test_detector_drift();
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

    t_case("history steps: a step faster by the same factor as a slower one is found alike");
    /* ×1.05 and ÷1.05 are the same change in the fit's log space; the
     * minimum effect was applied to after/before - 1, so 1/1.05 (-4.8%)
     * passed as no step where 1.05 (+5.0%) was one. */
    series(y, 40, 0.002, 20, 1.0 / 1.05, 5);
    n = ab_steps_detect(y, 40, 0.05, at, NULL, NULL, 8);
    CHECK(n == 1 && at[0] == 20, "1/1.05 from run 20: %d steps, at %d", n, n ? at[0] : -1);

    t_case("history steps: the drift between steps: +20%% over 60 runs with a +15%% step at "
           "30 (CV 1%%) reads 1.20; the flat series with a step reads 1");
    uint64_t dseed = 9;
    series_ar1(y, 60, 0.01, 0.0, 30, 1.15, &dseed);
    drift_by(y, 60, 1.2);
    int at30[1] = { 30 };
    double drift = ab_steps_drift(y, 60, at30, 1, 0.05), flat;
    series(y, 45, 0.01, 45, 1.0, 11);
    for (int i = 30; i < 45; i++)
        y[i] *= 1.25;
    int at_flat[1] = { 30 };
    flat = ab_steps_drift(y, 45, at_flat, 1, 0.05);
    CHECK(fabs(drift - 1.2) < 0.02 && flat == 1.0, "drift %.4f (want 1.20), flat %.4f (want 1)",
          drift, flat);

    t_case("history steps: drift claimed only where its whole interval makes 5%%: flat series "
           "(CV 10%%, 40 runs, noise persisting at rho 0.5), 200 seeds, at most 5%% with one "
           "(the estimate alone: 25%%); +20%% over 60 runs at CV 5%%, 100 seeds, at least 60%%");
    int flat_drifts = 0, found_drifts = 0;
    for (int t = 0; t < 200; t++) {
        series_ar1(y, 40, 0.10, 0.5, 40, 1.0, &dseed);
        int k = ab_steps_detect(y, 40, 0.05, at, NULL, NULL, 8);
        flat_drifts += ab_steps_drift(y, 40, at, k, 0.05) != 1.0;
    }
    for (int t = 0; t < 100; t++) {
        series_ar1(y, 60, 0.05, 0.0, 60, 1.0, &dseed);
        drift_by(y, 60, 1.2);
        int k = ab_steps_detect(y, 60, 0.05, at, NULL, NULL, 8);
        double d = ab_steps_drift(y, 60, at, k, 0.05);
        found_drifts += d > 1.1 && d < 1.3;
    }
    CHECK(flat_drifts <= 10 && found_drifts >= 60, "flat: %d of 200 with a drift; drifting: %d "
          "of 100 found", flat_drifts, found_drifts);

    t_case("history steps: too short or unusable series give none");
    double two[2] = { 1.0, 2.0 }, bad[4] = { 1.0, -1.0, 1.0, 1.0 };
    CHECK(ab_steps_detect(two, 2, 0.05, at, NULL, NULL, 8) == 0, "two points");
    CHECK(ab_steps_detect(bad, 4, 0.05, at, NULL, NULL, 8) == 0, "a negative time");
}

/* A benchmark file as attnbench writes one: context with machine, commit
 * and date; 5 repetitions of benchmark name (default: one SDPA) at time t
 * (ns). */
static void write_named(const char *path, const char *machine, const char *commit,
                        const char *date, const char *name, double t)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fprintf(f, "{\"context\": {\"machine_key\": \"vendor=Test id=%s\", \"machine_id\": "
               "\"%s\", \"git_commit\": \"%s\", \"date\": \"%s\"},\n"
               "\"benchmarks\": [", machine, machine, commit, date);
    for (int r = 0; r < 5; r++)
        fprintf(f, "%s{\"name\": \"%s\", \"run_name\": \"%s\", \"run_type\": \"iteration\", "
                   "\"threads\": 1, \"iterations\": 10, \"real_time\": %.1f, \"cpu_time\": %.1f, "
                   "\"time_unit\": \"ns\"}", r ? "," : "", name, name, t * (1 + 0.002 * r), t);
    fprintf(f, "]}\n");
    fclose(f);
}

static const char SERIES[] = "sdpa/avx512/B1_H2_L64_Dh16/threads:1";

static void write_run(const char *path, const char *commit, const char *date, double t)
{
    write_named(path, "00000000000000aa", commit, date, SERIES, t);
}

static int add_file(ab_history *h, const char *path, const char *source, char *err, size_t len)
{
    ab_bench_file bf;
    if (ab_bench_file_load(path, &bf, err, len) != 0)
        return -1;
    int r = ab_history_add(h, &bf, source, NULL, 0.05, err, len);
    ab_bench_file_free(&bf);
    return r;
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

/* The steps table as text ("machine name commit ratio" lines, ordered), read
 * as reports/report.py reads it: the tables are the contract. */
static int steps_text(const char *target, char *out, size_t len)
{
    char err[400];
    ab_sql *db = ab_sql_open(target, err, sizeof err);
    ab_sql_rows *r;
    out[0] = '\0';
    if (!db || ab_sql_exec(db, "SELECT machine_id, name, git_commit, after_s / before_s FROM steps "
                           "ORDER BY machine_id, name, date", NULL, 0, &r, err, sizeof err) < 0) {
        snprintf(out, len, "error: %s", err);
        ab_sql_close(db);
        return -1;
    }
    size_t used = 0;
    while (ab_sql_next(r) == 1 && used < len)
        used += (size_t)snprintf(out + used, len - used, "%s %s %s %.4f\n", ab_sql_text(r, 0),
                                 ab_sql_text(r, 1), ab_sql_text(r, 2), ab_sql_real(r, 3));
    ab_sql_rows_free(r, NULL, 0);
    ab_sql_close(db);
    return 0;
}

/* One integer from a query on target; -1 on error. */
static long long count_of(const char *target, const char *sql)
{
    char err[400];
    ab_sql *db = ab_sql_open(target, err, sizeof err);
    long long n = db ? ab_sql_int_of(db, sql, NULL, 0, -1, err, sizeof err) : -1;
    ab_sql_close(db);
    return n;
}

/* The history tests on the store at target (dir: scratch space). */
static void test_store(const char *store, const char *target, const char *dir)
{
    char json[300], err[700];
    snprintf(json, sizeof json, "%s/run.json", dir);

    t_case("history %s: runs added; a repeated file skipped; the step named by its commit", store);
    ab_history *h = ab_history_open(target, err, sizeof err);
    CHECK(h != NULL, "open: %s", err);
    if (!h)
        return;
    int added = 0, step_run = 12, day13 = -1;
    for (int i = 0; i < 20; i++) {
        char commit[16], date[40];
        snprintf(commit, sizeof commit, "c%02d", i);
        /* Added out of date order: the series must be ordered by date. */
        int day = (i * 7) % 20;
        if (day == step_run)
            day13 = i;
        snprintf(date, sizeof date, "2026-11-%02dT10:00:00+0000", day + 1);
        write_run(json, commit, date, day >= step_run ? 1.2e6 : 1.0e6);
        int r = add_file(h, json, "run.json", err, sizeof err);
        CHECK(r == 0, "add %d: %d %s", i, r, err);
        added += r == 0;
        if (i == 3) {
            /* The same bytes under another name, as another machine of the
             * fleet would add them. */
            r = add_file(h, json, "elsewhere/copy.json", err, sizeof err);
            CHECK(r == 1, "the same file twice was not skipped: %d %s", r, err);
        }
    }
    CHECK(added == 20, "%d runs added", added);
    char steps[2000], want[200];
    snprintf(want, sizeof want, "00000000000000aa %s c%02d 1.2000\n", SERIES, day13);
    steps_text(target, steps, sizeof steps);
    CHECK(strcmp(steps, want) == 0, "steps:\n%swant:\n%s", steps, want);

    t_case("history %s: steps since a commit: the slower step after it, none after the step",
           store);
    int slower = -1;
    char since[16];
    snprintf(since, sizeof since, "c%02d", day13);
    FILE *quiet = fopen("/dev/null", "w");
    int now = -1;
    int r1 = ab_history_steps_since(h, "c0", 0.05, quiet, &slower, &now, err,
                                    sizeof err);   /* ambiguous */
    int r2 = ab_history_steps_since(h, "c00", 0.05, quiet, &slower, &now, err, sizeof err);
    int s2 = slower, now2 = now;
    int r3 = ab_history_steps_since(h, since, 0.05, quiet, &slower, &now, err, sizeof err);
    int r4 = ab_history_steps_since(h, "nosuch", 0.05, quiet, &slower, &now, err, sizeof err);
    CHECK(r1 == -1 && r2 == 0 && s2 == 1 && now2 == 1 && r3 == 0 && slower == 0 && now == 0
              && r4 == -1,
          "ambiguous %d; since c00: %d, %d slower, %d now; since the step's commit: %d, %d "
          "slower, %d now; unknown: %d", r1, r2, s2, now2, r3, slower, now, r4);

    t_case("history %s: names with quotes, semicolons and non-ASCII bytes are stored as data",
           store);
    const char *hostile[] = { "sdpa/x'); DROP TABLE runs; --/B1/threads:1",
                              "mha/\\\"q\\\"/L=\xc3\xa9\xe2\x82\xac/threads:2",
                              "op/k/$1 $2 ? :a @b/threads:1" };
    for (int i = 0; i < 3; i++) {
        char commit[16];
        snprintf(commit, sizeof commit, "h%d", i);
        write_named(json, "00000000000000bb", commit, "2026-11-25T10:00:00+0000", hostile[i],
                    1e6);
        CHECK(add_file(h, json, "hostile.json", err, sizeof err) == 0, "add %d: %s", i, err);
    }
    CHECK(count_of(target, "SELECT count(*) FROM runs") == 23
          && count_of(target, "SELECT count(*) FROM results WHERE name = 'sdpa/x''); DROP TABLE "
                              "runs; --/B1/threads:1'") == 1
          && count_of(target, "SELECT count(*) FROM results WHERE name = 'mha/\"q\"/L=\xc3\xa9"
                              "\xe2\x82\xac/threads:2'") == 1
          && count_of(target, "SELECT count(*) FROM results WHERE name = "
                              "'op/k/$1 $2 ? :a @b/threads:1'") == 1,
          "runs %lld; the names not found byte for byte",
          count_of(target, "SELECT count(*) FROM runs"));

    t_case("history %s: steps since a commit: a regression a later step undid is listed, and "
           "is not slower now", store);
    /* Another machine's series, after the others: +20% from r10, back from
     * r25 (÷1.2). */
    for (int i = 0; i < 40; i++) {
        char commit[16], date[40];
        snprintf(commit, sizeof commit, "r%02d", i);
        snprintf(date, sizeof date, "2026-12-%02dT%02d:00:00+0000", 1 + i / 2, i % 2 ? 18 : 6);
        write_named(json, "00000000000000ab", commit, date, "sdpa/revert/B1/threads:1",
                    i >= 10 && i < 25 ? 1.2e6 : 1.0e6);
        CHECK(add_file(h, json, "revert.json", err, sizeof err) == 0, "add r%02d: %s", i, err);
    }
    int rr = ab_history_steps_since(h, "r05", 0.05, quiet, &slower, &now, err, sizeof err);
    int rs = slower, rn = now;
    int rb = ab_history_steps_since(h, "r15", 0.05, quiet, &slower, &now, err, sizeof err);
    CHECK(rr == 0 && rs == 1 && rn == 0 && rb == 0 && slower == 0 && now == 0,
          "since r05: %d, %d slower steps, %d slower now (want 1, 0); since r15: %d, %d, %d "
          "(want 0, 0)", rr, rs, rn, rb, slower, now);
    if (quiet)
        fclose(quiet);

    t_case("history %s: show: a series that drifts +25%% over 30 runs is said to drift and has "
           "no step; the series with a step has no drift", store);
    for (int i = 0; i < 30; i++) {
        char commit[16], date[40];
        snprintf(commit, sizeof commit, "d%02d", i);
        snprintf(date, sizeof date, "2027-01-%02dT10:00:00+0000", 1 + i);
        write_named(json, "00000000000000ac", commit, date, "sdpa/drift/B1/threads:1",
                    1.0e6 * pow(1.25, i / 29.0));
        CHECK(add_file(h, json, "drift.json", err, sizeof err) == 0, "add d%02d: %s", i, err);
    }
    char shown[2][4096] = { "", "" };
    const char *machines[2] = { "00000000000000ac", "00000000000000aa" };
    for (int m = 0; m < 2; m++) {
        FILE *f = tmpfile();
        int r = f ? ab_history_show(h, NULL, machines[m], f, err, sizeof err) : -1;
        if (f) {
            rewind(f);
            size_t got = fread(shown[m], 1, sizeof shown[m] - 1, f);
            shown[m][got] = '\0';
            fclose(f);
        }
        CHECK(r == 0, "show %s: %s", machines[m], err);
    }
    CHECK(strstr(shown[0], " none; drift +25.0% over 30 runs\n") != NULL,
          "the drifting series:\n%s", shown[0]);
    CHECK(strstr(shown[1], "slower +20.0%") != NULL && strstr(shown[1], "drift") == NULL,
          "the series with a step:\n%s", shown[1]);

    t_case("history %s: steps since a commit: a drift since is slower now, without a step to "
           "blame; 3 runs of it are not 5%%", store);
    int d_rc[2], d_slower[2], d_now[2];
    const char *d_since[2] = { "d00", "d26" };
    for (int k = 0; k < 2; k++) {
        FILE *f = tmpfile();
        d_rc[k] = ab_history_steps_since(h, d_since[k], 0.05, f ? f : stdout, &d_slower[k],
                                         &d_now[k], err, sizeof err);
        if (f && k == 0) {
            rewind(f);
            size_t got = fread(shown[0], 1, sizeof shown[0] - 1, f);
            shown[0][got] = '\0';
        }
        if (f)
            fclose(f);
    }
    CHECK(d_rc[0] == 0 && d_slower[0] == 0 && d_now[0] == 1 && d_rc[1] == 0 && d_now[1] == 0
              && strstr(shown[0], "sdpa/drift/B1/threads:1") != NULL
              && strstr(shown[0], "drift +25.0% over the 29 runs since") != NULL
              && strstr(shown[0], "1 series drifting slower, 0 faster; 1 series slower now")
                     != NULL,
          "since d00: %d, %d slower steps, %d slower now; since d26: %d, %d slower now; "
          "the first said:\n%s", d_rc[0], d_slower[0], d_now[0], d_rc[1], d_now[1], shown[0]);

    t_case("history %s: steps since a commit: a series that drifted +30%% before it and is flat "
           "for the 10 runs since does not drift since, and is not slower now", store);
    {
        double fy[40];
        series(fy, 40, 0.01, 40, 1.0, 2);
        for (int i = 0; i < 40; i++) {
            char commit[16], date[40];
            snprintf(commit, sizeof commit, "f%02d", i);
            snprintf(date, sizeof date, "2028-02-%02dT%02d:00:00+0000", 1 + i / 20, i % 20);
            write_named(json, "00000000000000ad", commit, date, "sdpa/drifted/B1/threads:1",
                        1.0e6 * fy[i] * pow(1.3, (i < 30 ? i : 29) / 29.0));
            CHECK(add_file(h, json, "drifted.json", err, sizeof err) == 0, "add f%02d: %s", i, err);
        }
        FILE *f = tmpfile();
        int f_slower = -1, f_now = -1;
        int f_rc = ab_history_steps_since(h, "f29", 0.05, f ? f : stdout, &f_slower, &f_now, err,
                                          sizeof err);
        shown[0][0] = '\0';
        if (f) {
            rewind(f);
            size_t got = fread(shown[0], 1, sizeof shown[0] - 1, f);
            shown[0][got] = '\0';
            fclose(f);
        }
        CHECK(f_rc == 0 && f_slower == 0 && f_now == 0 && strstr(shown[0], "drifting since") == NULL,
              "since f29: %d, %d slower steps, %d slower now; said:\n%s", f_rc, f_slower, f_now,
              shown[0]);
    }

    t_case("history %s: the fleet's wisdom: published under a key, merged, pulled back", store);
    attn_wisdom *w = calloc(1, sizeof *w), *got = calloc(1, sizeof *got);
    if (w && got) {
        attn_wisdom_record rec = { .machine = attn_machine_hash("key-A"),
                                   .bucket = { ATTN_OP_SDPA, 7, 64, ATTN_MASK_CLASS_NONE, 1,
                                               ATTN_F32, ATTN_F32 },
                                   .kernel = "blocked", .time_ns = 1000, .max_err = 0.01,
                                   .level = "measure", .when = "2026-11-26T00:00:00Z" };
        attn_wisdom_put(w, &rec, "key-A");
        int n1 = 0, n2 = 0, n3 = 0, k1 = -1, k2 = -1, k3 = -1;
        int p1 = ab_history_wisdom_publish(h, "key-A", "m1", w, &n1, &k1, err, sizeof err);
        rec.bucket.threads = 2;       /* a second bucket, from a second publisher */
        snprintf(rec.kernel, sizeof rec.kernel, "naive");
        w->n = 0;
        attn_wisdom_put(w, &rec, "key-A");
        int p2 = ab_history_wisdom_publish(h, "key-A", "m2", w, &n2, &k2, err, sizeof err);
        /* An estimate of the first bucket does not replace its measured record. */
        rec.bucket.threads = 1;
        snprintf(rec.kernel, sizeof rec.kernel, "avx2");
        snprintf(rec.level, sizeof rec.level, "estimate");
        w->n = 0;
        attn_wisdom_put(w, &rec, "key-A");
        int p3 = ab_history_wisdom_publish(h, "key-A", "m3", w, &n3, &k3, err, sizeof err);
        int q = ab_history_wisdom_pull(h, "key-A", got, err, sizeof err);
        CHECK(p1 == 0 && p2 == 0 && p3 == 0 && n1 == 1 && n2 == 2 && n3 == 2 && k1 == 0 && k2 == 0
              && k3 == 1 && q == 0 && got->n == 2 && strcmp(got->rec[0].kernel, "blocked") == 0
              && strcmp(got->rec[1].kernel, "naive") == 0,
              "publish %d %d %d (%d, %d, %d stored; %d %d %d kept), pull %d: %d records, the "
              "first %s (%s)", p1, p2, p3, n1, n2, n3, k1, k2, k3, q, got->n,
              got->n ? got->rec[0].kernel : "-", err);
        q = ab_history_wisdom_pull(h, "key-B", got, err, sizeof err);
        CHECK(q == 0 && got->n == 0, "another key: %d, %d records", q, got->n);
    }
    free(w);
    free(got);
    ab_history_close(h);

    t_case("history %s: 4 processes adding at once (2 machines): every run once, and the "
           "steps one adder finds", store);
    /* The reference: the same files added one by one into a fresh SQLite
     * file (when SQLite is built in; else the count alone is checked). */
    char ref[300], files[40][300];
    snprintf(ref, sizeof ref, "%s/ref.db", dir);
    for (int i = 0; i < 40; i++) {
        char commit[16], date[40], machine[20];
        snprintf(files[i], sizeof files[i], "%s/p%02d.json", dir, i);
        snprintf(commit, sizeof commit, "p%02d", i);
        snprintf(machine, sizeof machine, "00000000000000%s", i % 2 ? "c1" : "c2");
        snprintf(date, sizeof date, "2026-10-%02dT%02d:00:00+0000", 1 + i / 2, i % 2);
        write_named(files[i], machine, commit, date, SERIES, i / 2 >= 11 ? 1.3e6 : 1.0e6);
    }
    pid_t kids[4];
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            ab_history *mine = ab_history_open(target, err, sizeof err);
            int bad = !mine;
            /* Each adder takes every file in its own order: all race on
             * the same series and on the same files. */
            for (int i = 0; i < 40 && mine; i++)
                bad |= add_file(mine, files[(i * (2 * k + 1) + 7 * k) % 40], "p.json", err,
                                sizeof err) < 0;
            ab_history_close(mine);
            _exit(bad);
        }
    }
    int failed = 0;
    for (int k = 0; k < 4; k++) {
        int st = 1;
        if (kids[k] > 0)
            waitpid(kids[k], &st, 0);
        failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    long long runs = count_of(target, "SELECT count(*) FROM runs WHERE git_commit LIKE 'p%'");
    long long distinct = count_of(target, "SELECT count(DISTINCT content_sha256) FROM runs");
    CHECK(failed == 0 && runs == 40 && distinct == count_of(target, "SELECT count(*) FROM runs"),
          "%d adders failed; %lld runs of 40; %lld distinct files", failed, runs, distinct);
#ifdef ATTN_HAVE_SQLITE
    ab_history *one = ab_history_open(ref, err, sizeof err);
    for (int i = 0; i < 40 && one; i++)
        add_file(one, files[i], "p.json", err, sizeof err);
    ab_history_close(one);
    char a[4000], b[4000];
    steps_text(target, a, sizeof a);
    steps_text(ref, b, sizeof b);
    /* The first series (machine ...aa) is only in the store under test. */
    char *tail = strstr(a, "00000000000000c1");
    CHECK(tail && strcmp(tail, b) == 0, "steps after concurrent adds:\n%s\none by one:\n%s",
          tail ? tail : a, b);
#endif

    t_case("history %s: dates in other time zones order the series by time, not by their text",
           store);
    /* One machine's runs 2 hours apart, every other one written by a
     * runner on Pacific time (as attnbench writes its local time): the
     * text of 18:00-0800 sorts before 04:00+0000 though it is 02:00 UTC
     * the next day. The step is at run 12, by time. */
    h = ab_history_open(target, err, sizeof err);
    for (int i = 0; i < 20 && h; i++) {
        char commit[16], date[40];
        int hour = 2 * i;     /* UTC hours after 2026-09-01T00:00 */
        snprintf(commit, sizeof commit, "z%02d", i);
        if (i % 2)
            snprintf(date, sizeof date, "2026-0%d-%02dT%02d:00:00-08:00",
                     hour < 8 ? 8 : 9, hour < 8 ? 31 : 1 + (hour - 8) / 24, (hour + 16) % 24);
        else
            snprintf(date, sizeof date, "2026-09-%02dT%02d:00:00+0000", 1 + hour / 24, hour % 24);
        write_named(json, "00000000000000dd", commit, date, SERIES, i >= 12 ? 1.2e6 : 1.0e6);
        int r = add_file(h, json, "tz.json", err, sizeof err);
        CHECK(r == 0, "add %d: %d %s", i, r, err);
    }
    ab_history_close(h);
    char tz[4000];
    steps_text(target, tz, sizeof tz);
    snprintf(want, sizeof want, "00000000000000dd %s z12 1.2000\n", SERIES);
    const char *of_dd = strstr(tz, "00000000000000dd");
    CHECK(of_dd && strcmp(of_dd, want) == 0, "steps:\n%s\nwant:\n%s", of_dd ? of_dd : tz, want);
    CHECK(count_of(target, "SELECT count(*) FROM runs WHERE git_commit = 'z01' AND "
                           "date = '2026-09-01T02:00:00+0000'") == 1,
          "the date of 2026-08-31T18:00:00-08:00 is not stored as its UTC time");
}

/* $ATTN_TEST_POSTGRES's database emptied of the history's tables. */
static int wipe_postgres(const char *url, char *err, size_t len)
{
    ab_sql *db = ab_sql_open(url, err, len);
    int rc = db && ab_sql_exec(db, "DROP TABLE IF EXISTS steps, results, runs, machines, wisdom, "
                               "meta, t CASCADE", NULL, 0, NULL, err, len) >= 0 ? 0 : -1;
    ab_sql_close(db);
    return rc;
}

static void test_refusals_sqlite(const char *dir)
{
    char bad[300], other[300], err[700];
    t_case("history sqlite: a file that is not a database is refused and left as it was");
    snprintf(bad, sizeof bad, "%s/bad.db", dir);
    FILE *f = fopen(bad, "w");
    if (f) {
        fputs("this is not SQLite\n", f);
        fclose(f);
    }
    ab_history *h = ab_history_open(bad, err, sizeof err);
    CHECK(!h && strstr(err, "not a history") && file_size(bad) == 19, "open: %s, size %ld",
          h ? "opened" : err, file_size(bad));
    ab_history_close(h);

    t_case("history sqlite: a history of another schema (1, the last one) is refused, untouched");
    snprintf(other, sizeof other, "%s/other.db", dir);
    ab_sql *db = ab_sql_open(other, err, sizeof err);
    int made = db && ab_sql_exec(db, "CREATE TABLE runs(x); PRAGMA user_version = 1;", NULL, 0,
                                 NULL, err, sizeof err) >= 0;
    ab_sql_close(db);
    long size = file_size(other);
    h = made ? ab_history_open(other, err, sizeof err) : NULL;
    CHECK(made && !h && strstr(err, "schema 1") && file_size(other) == size, "open: %s",
          h ? "opened" : err);
    ab_history_close(h);
}

/* A series past the 256-run window keeps the steps of its older runs.
 * The runs past the first 30 are written straight into the store (one
 * transaction), so that only the last add fits the window. */
static void test_window_sqlite(const char *dir)
{
    char path[300], json[300], err[700];
    t_case("history sqlite: a step of a run before the 256-run window is kept");
    snprintf(path, sizeof path, "%s/window.db", dir);
    snprintf(json, sizeof json, "%s/window.json", dir);
    ab_history *h = ab_history_open(path, err, sizeof err);
    for (int i = 0; i < 30 && h; i++) {
        char commit[16], date[40];
        snprintf(commit, sizeof commit, "w%03d", i);
        snprintf(date, sizeof date, "2025-01-01T%02d:%02d:00+0000", i / 60, i % 60);
        write_named(json, "00000000000000dd", commit, date, "sdpa/w/B1/threads:1",
                    i >= 10 ? 1.2e6 : 1.0e6);
        add_file(h, json, "w.json", err, sizeof err);
    }
    ab_history_close(h);
    long long before = count_of(path, "SELECT count(*) FROM steps WHERE git_commit = 'w010'");
    ab_sql *db = ab_sql_open(path, err, sizeof err);
    int ok = db && ab_sql_begin(db, err, sizeof err) == 0;
    for (int i = 30; ok && i < 300; i++) {
        char date[40], sha[24], commit[16];
        snprintf(date, sizeof date, "2025-01-02T%02d:%02d:00+0000", i / 60, i % 60);
        snprintf(sha, sizeof sha, "bulk%d", i);
        snprintf(commit, sizeof commit, "w%03d", i);
        const ab_sql_arg run[] = { AB_SQL_T(commit), AB_SQL_T(date), AB_SQL_T(sha) };
        ok = ab_sql_exec(db, "INSERT INTO runs (machine_id, machine_key, git_commit, date, source, "
                             "added, content_sha256) SELECT machine_id, machine_key, $1, $2, "
                             "'bulk', $2, $3 FROM machines WHERE machine_id = '00000000000000dd'",
                         run, 3, NULL, err, sizeof err) >= 0
          && ab_sql_exec(db, "INSERT INTO results SELECT (SELECT max(id) FROM runs), name, op, "
                             "kernel, shape, threads, median_s, min_s, cv, n, samples FROM "
                             "results WHERE run_id = (SELECT max(id) FROM runs "
                             "WHERE git_commit = 'w029')", NULL, 0, NULL, err, sizeof err) >= 0;
    }
    ok = ok && ab_sql_commit(db, err, sizeof err) == 0;
    ab_sql_close(db);
    h = ok ? ab_history_open(path, err, sizeof err) : NULL;
    write_named(json, "00000000000000dd", "w300", "2025-01-03T00:00:00+0000",
                "sdpa/w/B1/threads:1", 1.2e6);
    int added = h ? add_file(h, json, "w.json", err, sizeof err) : -1;
    ab_history_close(h);
    long long after = count_of(path, "SELECT count(*) FROM steps WHERE git_commit = 'w010'");
    CHECK(ok && added == 0 && before == 1 && after == 1,
          "bulk %d, add %d (%s); the step at w010: %lld before, %lld after", ok, added, err,
          before, after);
}

static void test_refusals_postgres(const char *url)
{
    char err[700];
    t_case("history postgres: a database with a 'runs' table of its own is not created over");
    ab_sql *db = ab_sql_open(url, err, sizeof err);
    int made = db && ab_sql_exec(db, "CREATE TABLE runs (x INTEGER); INSERT INTO runs VALUES (7);",
                                 NULL, 0, NULL, err, sizeof err) >= 0;
    ab_sql_close(db);
    ab_history *h = made ? ab_history_open(url, err, sizeof err) : NULL;
    CHECK(made && !h && strstr(err, "not a history") && count_of(url, "SELECT x FROM runs") == 7,
          "open: %s", h ? "opened" : err);
    ab_history_close(h);
    wipe_postgres(url, err, sizeof err);

    t_case("history postgres: a history of another schema is refused, untouched");
    db = ab_sql_open(url, err, sizeof err);
    made = db && ab_sql_exec(db, "CREATE TABLE meta (name TEXT, value TEXT);"
                             "INSERT INTO meta VALUES ('schema', '7');", NULL, 0, NULL, err,
                             sizeof err) >= 0;
    ab_sql_close(db);
    h = made ? ab_history_open(url, err, sizeof err) : NULL;
    CHECK(made && !h && strstr(err, "schema 7")
          && count_of(url, "SELECT count(*) FROM information_schema.tables WHERE table_schema = "
                           "current_schema()") == 1, "open: %s", h ? "opened" : err);
    ab_history_close(h);
    wipe_postgres(url, err, sizeof err);

    t_case("history postgres: a refused login says so without the password");
    char wrong[600];
    const char *at = strchr(url + 13, '@');
    snprintf(wrong, sizeof wrong, "postgresql://nosuchuser:Sup3r-s3cret@%s", at ? at + 1 : "");
    h = ab_history_open(wrong, err, sizeof err);
    CHECK(!h && !strstr(err, "Sup3r-s3cret") && strstr(err, "***") && !strchr(err, '\n'),
          "open: %s", h ? "opened" : err);
    ab_history_close(h);
}

static void test_urls(void)
{
    t_case("sql: URL passwords are redacted; a URL is never taken for a path");
    char out[300], err[400];
    ab_sql_redact("postgresql://postgres:PASSWORD@127.0.0.1:1/none", out, sizeof out);
    CHECK(strcmp(out, "postgresql://postgres:***@127.0.0.1:1/none") == 0, "%s", out);
    ab_sql_redact("postgres://u@h/db?sslmode=require&password=p%40ss&x=1", out, sizeof out);
    CHECK(strcmp(out, "postgres://u@h/db?sslmode=require&password=***&x=1") == 0, "%s", out);
    ab_sql_redact("postgresql://a:b:c@d@host/db", out, sizeof out);
    CHECK(strcmp(out, "postgresql://a:***@host/db") == 0, "%s", out);
    ab_sql_redact("results/history.db", out, sizeof out);
    CHECK(strcmp(out, "results/history.db") == 0, "%s", out);
    CHECK(ab_sql_is_url("postgresql://x") && ab_sql_is_url("mysql://x") && !ab_sql_is_url("a/b.db")
          && !ab_sql_is_url("://x"), "is_url");
    char dir[] = "/tmp/attnbench-url-XXXXXX";
    if (!mkdtemp(dir))
        return;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd) || chdir(dir) != 0)
        return;
    ab_history *h = ab_history_open("mysql://u:hunter2@host/db", err, sizeof err);
    CHECK(!h && !strstr(err, "hunter2") && strstr(err, "not a store"), "open: %s",
          h ? "opened" : err);
    ab_history_close(h);
#ifndef ATTN_HAVE_POSTGRES
    h = ab_history_open("postgresql://u:hunter2@127.0.0.1:1/none", err, sizeof err);
    CHECK(!h && !strstr(err, "hunter2") && strstr(err, "without PostgreSQL"), "open: %s",
          h ? "opened" : err);
    ab_history_close(h);
#endif
    /* Nothing was made in the working directory (the URL is no path). */
    int empty = chdir(cwd) == 0 && rmdir(dir) == 0;
    CHECK(empty, "a URL left files behind in %s", dir);
}

/* The content hash, on the examples of FIPS 180-2's appendix B and the
 * empty message (the one- and two-block paddings). */
static void test_sha256(void)
{
    t_case("history: SHA-256 of the FIPS 180-2 examples");
    static const char *const msg[] = {
        "", "abc", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq" };
    static const char *const want[] = {
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" };
    for (int i = 0; i < 3; i++) {
        char hex[65];
        ab_sha256_hex(msg[i], strlen(msg[i]), hex);
        CHECK(strcmp(hex, want[i]) == 0, "'%s': %s", msg[i], hex);
    }
    static char million[1000000];
    memset(million, 'a', sizeof million);
    char hex[65];
    ab_sha256_hex(million, sizeof million, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0,
          "a million 'a': %s", hex);
}

/* Benchmark files at the edges of what the loader takes (a review): the
 * whole of a SHA-256 commit id, no NUL bytes (the hash stopped at one), an
 * empty file named as such, a time that underflows to 0 s refused. */
static void test_bench_file_edges(const char *dir)
{
    char path[300], err[400];
    ab_bench_file bf;
    snprintf(path, sizeof path, "%s/edge.json", dir);

    t_case("history: a file's 64-hex commit id is kept whole");
    char commit[65];
    for (int i = 0; i < 64; i++)
        commit[i] = "0123456789abcdef"[i % 16];
    commit[64] = '\0';
    write_named(path, "00000000000000ee", commit, "2026-11-01T10:00:00+0000", "sdpa/e/B1/threads:1",
                1e6);
    int r = ab_bench_file_load(path, &bf, err, sizeof err);
    CHECK(r == 0 && strcmp(bf.git_commit, commit) == 0, "load %d (%s): commit %s", r, err,
          r == 0 ? bf.git_commit : "");
    if (r == 0)
        ab_bench_file_free(&bf);

    t_case("history: an empty file and one with a NUL byte are refused, each said plainly");
    FILE *f = fopen(path, "wb");
    if (f)
        fclose(f);
    r = ab_bench_file_load(path, &bf, err, sizeof err);
    CHECK(r == -1 && strstr(err, "empty"), "empty: %d (%s)", r, err);
    f = fopen(path, "wb");
    if (f) {
        fwrite("{\"benchmarks\": []}\0garbage", 1, 27, f);
        fclose(f);
    }
    r = ab_bench_file_load(path, &bf, err, sizeof err);
    CHECK(r == -1 && strstr(err, "NUL byte at offset 18"), "NUL: %d (%s)", r, err);

    t_case("history: a time that underflows to 0 s is not a usable time");
    f = fopen(path, "w");
    if (f) {
        fprintf(f, "{\"benchmarks\": [{\"name\": \"sdpa/e/B1/threads:1\", \"run_type\": "
                   "\"iteration\", \"iterations\": 10, \"real_time\": 1e-320, \"cpu_time\": 1, "
                   "\"time_unit\": \"ns\"}]}");
        fclose(f);
    }
    r = ab_bench_file_load(path, &bf, err, sizeof err);
    CHECK(r == 0 && bf.n == 0 && bf.n_bad == 1, "load %d (%s): %d usable, %d not", r, err,
          r == 0 ? bf.n : -1, r == 0 ? bf.n_bad : -1);
    if (r == 0)
        ab_bench_file_free(&bf);
    remove(path);
}

static void test_database(void)
{
    test_sha256();
    test_urls();
    char dir[] = "/tmp/attnbench-history-XXXXXX";
    if (!mkdtemp(dir)) {
        t_case("history: temporary directory");
        CHECK(0, "mkdtemp");
        return;
    }
    test_bench_file_edges(dir);
    char db[300], err[700];
    snprintf(db, sizeof db, "%s/sub/history.db", dir);
#ifndef ATTN_HAVE_SQLITE
    t_case("history: without SQLite the history says so");
    ab_history *h = ab_history_open(db, err, sizeof err);
    CHECK(!h && strstr(err, "without SQLite"), "open: %s", h ? "opened" : err);
#else
    test_store("sqlite", db, dir);
    test_refusals_sqlite(dir);
    test_window_sqlite(dir);
#endif
    const char *pg = getenv("ATTN_TEST_POSTGRES");
#ifdef ATTN_HAVE_POSTGRES
    if (pg && pg[0]) {
        if (wipe_postgres(pg, err, sizeof err) != 0) {
            t_case("history postgres: $ATTN_TEST_POSTGRES can be reached");
            CHECK(0, "%s", err);
        } else {
            test_store("postgres", pg, dir);
            wipe_postgres(pg, err, sizeof err);
            test_refusals_postgres(pg);
        }
    } else {
        t_skip("history postgres: ATTN_TEST_POSTGRES is not set (a postgresql:// URL of a "
               "database the tests may wipe)");
    }
#else
    t_skip("history postgres: attnbench was built without PostgreSQL (libpq-dev)%s",
           pg && pg[0] ? ", though ATTN_TEST_POSTGRES is set" : "");
#endif
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        t_skip("history: could not remove %s", dir);
}

void test_history(void)
{
    test_detector();
    test_database();
}
