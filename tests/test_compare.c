/*
 * test_compare.c — the statistics of `attnbench compare` against values
 * worked out independently: the Mann–Whitney p of two separated samples
 * (normal approximation with continuity correction, by hand), the
 * Hodges–Lehmann ratio of constant samples, and the verdict rule (effect
 * size AND significance).
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "compare.h"

/* A run's statistics from a median and its 95% precision. */
#define RUN(median, precision) ((ab_run_stat){ (median), (precision), 0, (precision) / 1.96 })

void test_compare(void)
{
    ab_comparison c;
    t_case("compare: Mann-Whitney p of two separated samples of 5");
    /* U = 0; mean 12.5; variance 5·5·11/12 = 22.917; z = (12.5 − 0.5)/4.787
     * = 2.5067; p = 2·P(Z > 2.5067) = 0.01219. */
    double x[5] = { 1, 2, 3, 4, 5 }, y[5] = { 6, 7, 8, 9, 10 };
    CHECK(ab_compare_samples(x, 5, y, 5, 0.05, 0.05, &c) == 0, "rejected");
    CHECK(fabs(c.p - 0.01219) < 2e-4, "p = %.5f, expected 0.01219", c.p);
    CHECK(c.weak, "5 repetitions should be flagged weak");

    t_case("compare: Hodges-Lehmann ratio and the verdict rule");
    double base[15], slow[15], slight[15];
    for (int i = 0; i < 15; i++) {
        double jitter = 1.0 + 0.004 * ((i * 7) % 5 - 2);     /* ±0.8%, deterministic */
        base[i] = 1e-3 * jitter;
        slow[i] = 1.10e-3 * jitter;
        slight[i] = 1.03e-3 * jitter;
    }
    CHECK(ab_compare_samples(base, 15, slow, 15, 0.01, 0.05, &c) == 0, "rejected");
    CHECK(fabs(c.ratio - 1.10) < 1e-9 && c.lo <= 1.10 && c.hi >= 1.10, "ratio %.6f [%.4f, %.4f]",
          c.ratio, c.lo, c.hi);
    CHECK(c.verdict == AB_REGRESSION && c.p < 0.01 && !c.weak, "10%% slower: verdict %d, p %g",
          c.verdict, c.p);
    CHECK(ab_compare_samples(slow, 15, base, 15, 0.01, 0.05, &c) == 0
          && c.verdict == AB_IMPROVEMENT, "10%% faster: verdict %d", c.verdict);
    CHECK(ab_compare_samples(base, 15, slight, 15, 0.01, 0.05, &c) == 0
          && c.verdict == AB_SAME && c.p < 0.01, "3%% slower (significant, below the effect "
          "size): verdict %d, p %g", c.verdict, c.p);
    CHECK(ab_compare_samples(base, 15, base, 15, 0.01, 0.05, &c) == 0 && c.verdict == AB_SAME
          && fabs(c.ratio - 1.0) < 1e-12 && c.p > 0.5, "identical: ratio %g p %g", c.ratio, c.p);
    /* Large but noisy: 2 samples cannot be significant at 1%. */
    CHECK(ab_compare_samples(base, 2, slow, 2, 0.01, 0.05, &c) == 0 && c.verdict == AB_SAME,
          "2 vs 2 samples declared %d", c.verdict);

    t_case("compare: unusable samples are refused");
    double bad[2] = { 1e-3, 0.0 }, nan_[1] = { NAN };
    CHECK(ab_compare_samples(base, 15, bad, 2, 0.01, 0.05, &c) == -1, "zero time accepted");
    CHECK(ab_compare_samples(nan_, 1, base, 15, 0.01, 0.05, &c) == -1, "NaN accepted");
    CHECK(ab_compare_samples(base, 0, base, 15, 0.01, 0.05, &c) == -1, "empty accepted");

    t_case("compare: Student's t tail against the table");
    /* t(10) = 2.228 leaves 2.5% in the tail; t(1) = 1 leaves 25%; t(4) = 4.604 0.5%. */
    CHECK(fabs(ab_student_sf(2.228, 10) - 0.025) < 2e-4, "t(10) %g", ab_student_sf(2.228, 10));
    CHECK(fabs(ab_student_sf(1.0, 1) - 0.25) < 1e-9, "t(1) %g", ab_student_sf(1.0, 1));
    CHECK(fabs(ab_student_sf(4.604, 4) - 0.005) < 5e-5, "t(4) %g", ab_student_sf(4.604, 4));
    CHECK(fabs(ab_student_sf(-2.228, 10) - 0.975) < 2e-4 && ab_student_sf(0, 3) == 0.5,
          "negative t");

    /* Ten benchmarks: run medians around 1 ms, one run a side or two. */
    ab_bench_runs b[10];
    ab_run_comparison v[10];
    ab_compare_opts o = { 0.01, 0.05, 0.05, AB_DEFAULT_THRESHOLD };
    memset(b, 0, sizeof b);
    for (int i = 0; i < 10; i++) {
        b[i].nb = b[i].nf = 1;
        b[i].base[0] = RUN(1e-3 * (1 + i), 0.01);
        b[i].fresh[0] = RUN(1e-3 * (1 + i), 0.01);
    }
    t_case("compare runs: one run a side, a gross change is caught and nothing else");
    b[3].fresh[0].median *= 1.3;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0, "rejected");
    int fired = 0;
    for (int i = 0; i < 10; i++)
        fired += v[i].verdict == AB_REGRESSION || v[i].verdict == AB_IMPROVEMENT;
    CHECK(v[3].verdict == AB_REGRESSION && fired == 1 && fabs(v[3].ratio - 1.3) < 1e-9
          && v[3].lo > 1.0, "benchmark 3: verdict %d ratio %g [%g, %g]; %d fired",
          v[3].verdict, v[3].ratio, v[3].lo, v[3].hi, fired);
    /* 10% with one run a side is within a 5% run noise: sqrt(2)·5% = 7% per
     * ratio. Not called, and not "no change" either: at alpha 0.01/10 and
     * 80% power the test sees only (3.29 + 0.84)·7.1% = 34%. */
    b[3].fresh[0].median = 1.1 * b[3].base[0].median;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[3].verdict == AB_INCONCLUSIVE
              && v[3].mde > 0.30 && v[3].mde < 0.36 && v[0].verdict == AB_INCONCLUSIVE,
          "10%% one run: %d, MDE %g", v[3].verdict, v[3].mde);

    t_case("compare runs: one run a side, a 30%% slowdown of everything is caught");
    for (int i = 0; i < 10; i++)
        b[i].fresh[0].median = 1.3 * b[i].base[0].median;
    fired = 0;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0, "rejected");
    for (int i = 0; i < 10; i++)
        fired += v[i].verdict == AB_REGRESSION;
    CHECK(fired == 10, "%d of 10 caught", fired);

    t_case("compare runs: the spread across benchmarks widens the noise of one run a side");
    /* Ratios scattered by ±15% (no common shift): a 25% one among them is
     * not called, where the 5% floor alone would call it. */
    const double scatter[10] = { 0.85, 1.15, 0.9, 1.25, 1.1, 0.88, 1.12, 0.95, 1.05, 1.0 };
    for (int i = 0; i < 10; i++)
        b[i].fresh[0].median = scatter[i] * b[i].base[0].median;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[3].verdict == AB_INCONCLUSIVE
              && v[3].noise > 0.05, "verdict %d noise %g", v[3].verdict, v[3].noise);

    t_case("compare runs: two runs a side catch 10%% and leave an A/A alone");
    for (int i = 0; i < 10; i++) {
        b[i].nb = b[i].nf = 2;
        double m = 1e-3 * (1 + i), j = 0.005 * ((i % 3) - 1);   /* run jitter within ±1% */
        b[i].base[0] = RUN(m * (1 + j), 0.01);
        b[i].base[1] = RUN(m * (1 - j + 0.004), 0.01);
        b[i].fresh[0] = RUN(m * (1 - j), 0.01);
        b[i].fresh[1] = RUN(m * (1 + j - 0.004), 0.01);
    }
    fired = 0;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0, "rejected");
    for (int i = 0; i < 10; i++)
        fired += v[i].verdict == AB_REGRESSION || v[i].verdict == AB_IMPROVEMENT;
    CHECK(fired == 0, "A/A: %d fired", fired);
    /* Runs within ±1% of each other: each benchmark could have seen 10%,
     * so it says "no change". */
    for (int i = 0; i < 10; i++)
        CHECK(v[i].verdict == AB_SAME && v[i].mde > 0.0 && v[i].mde <= AB_DEFAULT_THRESHOLD,
              "A/A benchmark %d: verdict %d, MDE %g", i, v[i].verdict, v[i].mde);
    b[6].fresh[0].median *= 1.1;
    b[6].fresh[1].median *= 1.1;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[6].verdict == AB_REGRESSION
          && v[6].runs_base == 2 && v[6].runs_new == 2 && v[6].p < 0.01,
          "10%%, two runs a side: verdict %d ratio %g p %g", v[6].verdict, v[6].ratio, v[6].p);

    t_case("compare runs: an unstable benchmark is reported, not judged");
    b[6].fresh[1].unstable = 1;
    b[6].fresh[0].median *= 2.0;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[6].unstable && v[6].verdict == AB_INCONCLUSIVE
          && v[6].ratio > 1.4, "verdict %d unstable %d ratio %g", v[6].verdict, v[6].unstable,
          v[6].ratio);
    ab_run_stat st = ab_run_stat_of((const double[]){ 1, 1.2, 0.8, 1.1, 0.9, 1.0 }, 6, -1, NAN,
                                    NAN, 0);
    CHECK(st.median == 1 && st.unstable && fabs(st.precision - 0.2) < 1e-12
              && fabs(st.se - 0.2 / 1.96) < 1e-12,
          "a ±20%% median is unstable (precision %g)", st.precision);
    /* Five samples have no 95%% interval of their median ([min, max] covers
     * it 94%% of the time): no precision, so not unstable on a guess, and a
     * normal model's standard error for the noise (sd 0.158). */
    st = ab_run_stat_of((const double[]){ 1, 1.2, 0.8, 1.1, 0.9 }, 5, -1, NAN, NAN, 0);
    CHECK(st.median == 1 && !st.unstable && isnan(st.precision)
              && fabs(st.se - 1.2533 * sqrt(0.025) / sqrt(5.0)) < 1e-9,
          "five samples: unstable %d precision %g se %g", st.unstable, st.precision, st.se);
    st = ab_run_stat_of((const double[]){ 1, 1.2, 0.8 }, 3, 0, NAN, NAN, 0);
    CHECK(!st.unstable, "the file's own flag (stable) was not taken");
    st = ab_run_stat_of((const double[]){ 1e-6 }, 1, -1, NAN, 0.04, 25);
    CHECK(fabs(st.precision - 1.96 * 1.2533 * 0.04 / 5) < 1e-12 && !st.unstable,
          "aggregates: precision %g", st.precision);

    t_case("compare runs: attnbench's short calls get a wider floor, others' do not");
    /* 20 us calls: the floor grows by sqrt(200 / 20) to 15.8%, so 30% with
     * one run a side is within the noise; the same in another program's
     * file (no attnbench context) is judged on the flat 5% floor. */
    for (int i = 0; i < 10; i++) {
        b[i].nb = b[i].nf = 1;
        b[i].base[0] = RUN(20e-6, 0.01);
        b[i].fresh[0] = RUN(i == 4 ? 26e-6 : 20e-6, 0.01);
        b[i].attnbench = 1;
    }
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[4].verdict == AB_INCONCLUSIVE
          && fabs(v[4].noise - 0.05 * sqrt(10.0)) < 1e-9, "attnbench: verdict %d noise %g",
          v[4].verdict, v[4].noise);
    for (int i = 0; i < 10; i++)
        b[i].threads = 2;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[4].verdict == AB_INCONCLUSIVE
          && fabs(v[4].noise - 0.05 * 10.0) < 1e-9, "attnbench, 2 threads: noise %g",
          v[4].noise);
    for (int i = 0; i < 10; i++)
        b[i].attnbench = 0;
    CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[4].verdict == AB_REGRESSION
          && v[4].noise == 0.05, "another program: verdict %d noise %g", v[4].verdict,
          v[4].noise);

    t_case("compare whole run: a slowdown of everything, not one benchmark alone");
    /* Ten benchmarks of 1-10 ms, one run a side, the default 10% floor. */
    ab_compare_opts dflt = { 0.01, 0.05, AB_DEFAULT_RUN_NOISE, AB_DEFAULT_THRESHOLD };
    ab_run_comparison whole;
    for (int i = 0; i < 10; i++) {
        b[i].nb = b[i].nf = 1;
        b[i].attnbench = 1;
        b[i].threads = 1;
        b[i].base[0] = RUN(1e-3 * (1 + i), 0.01);
        b[i].fresh[0] = RUN(1.3e-3 * (1 + i), 0.01);
    }
    int called = 0;
    CHECK(ab_compare_runs(b, 10, &dflt, v) == 0 && ab_compare_whole(b, v, 10, &dflt, &whole) == 0,
          "rejected");
    for (int i = 0; i < 10; i++)
        called += v[i].verdict == AB_REGRESSION;
    CHECK(whole.verdict == AB_REGRESSION && fabs(whole.ratio - 1.3) < 1e-9 && whole.runs_base == 10
          && called == 0, "30%% everywhere: whole %d (%g), %d benchmarks called alone",
          whole.verdict, whole.ratio, called);
    /* One benchmark 48% slower alone (as A/A pairs here showed): the run did
     * not move, and the floor keeps that benchmark from being called. */
    for (int i = 0; i < 10; i++)
        b[i].fresh[0].median = b[i].base[0].median * (i == 7 ? 1.48 : 1.0);
    CHECK(ab_compare_runs(b, 10, &dflt, v) == 0 && ab_compare_whole(b, v, 10, &dflt, &whole) == 0
          && whole.verdict == AB_INCONCLUSIVE && v[7].verdict == AB_INCONCLUSIVE
          && whole.mde > 0.2, "one at 1.48: whole %d (MDE %g), own %d", whole.verdict, whole.mde,
          v[7].verdict);
    /* Short calls (20 us) move together with the machine: not counted. */
    for (int i = 0; i < 10; i++) {
        b[i].base[0].median = 20e-6;
        b[i].fresh[0].median = 26e-6;
    }
    CHECK(ab_compare_runs(b, 10, &dflt, v) == 0 && ab_compare_whole(b, v, 10, &dflt, &whole) == 0
          && whole.runs_base == 0 && whole.verdict == AB_INCONCLUSIVE,
          "short calls counted (%d), verdict %d", whole.runs_base, whole.verdict);

    t_case("compare whole run: benchmarks that disagree widen its noise");
    {
        /* Three benchmarks of one run a side at 1.20, 1.18 and 0.85 (a
         * review's A/A pair): each inconclusive alone, and the median of
         * such scattered ratios is no evidence that the run moved. The same
         * three at 1.30 each are a slowdown of everything. */
        const double r3[3] = { 1.20, 1.18, 0.85 };
        for (int i = 0; i < 3; i++) {
            b[i].base[0] = RUN(1e-3 * (1 + i), NAN);
            b[i].fresh[0] = RUN(r3[i] * 1e-3 * (1 + i), NAN);
        }
        CHECK(ab_compare_runs(b, 3, &dflt, v) == 0 && ab_compare_whole(b, v, 3, &dflt, &whole) == 0
                  && whole.runs_base == 3 && whole.verdict == AB_INCONCLUSIVE && whole.p > 0.05,
              "scattered: whole %d p %g", whole.verdict, whole.p);
        for (int i = 0; i < 3; i++)
            b[i].fresh[0].median = 1.3 * b[i].base[0].median;
        CHECK(ab_compare_runs(b, 3, &dflt, v) == 0 && ab_compare_whole(b, v, 3, &dflt, &whole) == 0
                  && whole.verdict == AB_REGRESSION, "30%% on all three: whole %d p %g",
              whole.verdict, whole.p);
    }

    t_case("compare runs: runs a side are judged family-wise, and a run is no closer than its "
           "median is known");
    {
        /* Ten benchmarks, two runs a side whose medians differ by 2% within
         * each side; one benchmark 7% slower: t = 4.2 on 6 df, p ~ 0.005,
         * called at alpha 1% when judged alone, not among ten unchanged
         * ones (Benjamini-Hochberg: the smallest p must be below alpha /
         * 10), and all ten when all ten are 7% slower (each p below
         * alpha · 10 / 10), where Bonferroni would call none. */
        for (int i = 0; i < 10; i++) {
            b[i].nb = b[i].nf = 2;
            double m = 1e-3 * (1 + i);
            b[i].base[0] = RUN(m * 1.01, 0.002);
            b[i].base[1] = RUN(m * 0.99, 0.002);
            b[i].fresh[0] = RUN(m * 1.01, 0.002);
            b[i].fresh[1] = RUN(m * 0.99, 0.002);
        }
        for (int k = 0; k < 2; k++)
            b[9].fresh[k].median *= 1.07;
        CHECK(ab_compare_runs(&b[9], 1, &o, v) == 0 && v[0].verdict == AB_REGRESSION,
              "7%% alone: verdict %d p %g", v[0].verdict, v[0].p);
        CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[9].p > 0.001 && v[9].p < 0.01
                  && v[9].verdict == AB_INCONCLUSIVE,
              "7%% among ten: verdict %d p %g", v[9].verdict, v[9].p);
        for (int i = 0; i < 9; i++)
            for (int k = 0; k < 2; k++)
                b[i].fresh[k].median *= 1.07;
        int all = 0;
        CHECK(ab_compare_runs(b, 10, &o, v) == 0, "rejected");
        for (int i = 0; i < 10; i++)
            all += v[i].verdict == AB_REGRESSION && v[i].p > 0.001;
        CHECK(all == 10, "7%% on all ten: %d called (p %g)", all, v[0].p);
        for (int i = 0; i < 9; i++)
            for (int k = 0; k < 2; k++)
                b[i].fresh[k].median /= 1.07;
        /* The same file twice a side: its runs agree exactly, yet a 7%
         * change is not known better than the runs' own medians (±0.2%):
         * a finite interval, not p = 0. */
        for (int i = 0; i < 10; i++)
            for (int k = 0; k < 2; k++) {
                b[i].base[k].median = 1e-3 * (1 + i);
                b[i].fresh[k].median = 1e-3 * (1 + i) * (i == 9 ? 1.07 : 1.0);
            }
        CHECK(ab_compare_runs(b, 10, &o, v) == 0 && v[9].p > 0 && v[9].hi > v[9].lo
                  && v[9].noise >= 0.002 / 1.96 * 0.999,
              "identical runs: p %g interval [%g, %g] noise %g", v[9].p, v[9].lo, v[9].hi,
              v[9].noise);
        for (int i = 0; i < 10; i++)
            b[i].nb = b[i].nf = 1;
    }

    t_case("compare whole run, runs a side: the runs' geometric means");
    {
        /* Ten benchmarks, two runs a side, each benchmark's runs 3% apart
         * in a pattern that leaves every run's geometric mean the same: a
         * 10% slowdown of all ten is plain in the runs as a whole, and no
         * slowdown is none. */
        for (int i = 0; i < 10; i++) {
            b[i].nb = b[i].nf = 2;
            b[i].attnbench = 0;
            for (int k = 0; k < 2; k++) {
                double f = (i + k) % 2 ? 1.03 : 0.97;
                b[i].base[k] = RUN(1e-3 * (1 + i) * f, 0.002);
                b[i].fresh[k] = RUN(1.1e-3 * (1 + i) * f, 0.002);
            }
        }
        CHECK(ab_compare_runs(b, 10, &o, v) == 0 && ab_compare_whole(b, v, 10, &o, &whole) == 0
                  && whole.verdict == AB_REGRESSION && whole.runs_base == 2
                  && fabs(whole.ratio - 1.1) < 1e-9,
              "10%% on every benchmark: whole %d ratio %g p %g", whole.verdict, whole.ratio,
              whole.p);
        for (int i = 0; i < 10; i++)
            for (int k = 0; k < 2; k++)
                b[i].fresh[k].median = b[i].base[1 - k].median;
        CHECK(ab_compare_runs(b, 10, &o, v) == 0 && ab_compare_whole(b, v, 10, &o, &whole) == 0
                  && whole.verdict != AB_REGRESSION && whole.verdict != AB_IMPROVEMENT,
              "A/A: whole %d ratio %g", whole.verdict, whole.ratio);
        for (int i = 0; i < 10; i++)
            b[i].nb = b[i].nf = 1;
    }

    t_case("compare paired: builds side by side, judged from per-round log ratios");
    {
        /* 12 rounds, ratios 1.10 +- 1%: a regression, its MDE small. */
        double logs[12];
        ab_run_comparison pc;
        for (int i = 0; i < 12; i++)
            logs[i] = log(1.10) + 0.01 * ((i % 3) - 1);
        CHECK(ab_compare_paired(logs, 12, &o, &pc) == 0 && pc.verdict == AB_REGRESSION
                  && fabs(pc.ratio - 1.10) < 1e-9 && pc.lo > 1.05 && pc.mde < 0.03
                  && pc.runs_base == 12,
              "10%%: verdict %d ratio %g [%g, %g] MDE %g", pc.verdict, pc.ratio, pc.lo, pc.hi,
              pc.mde);
        /* The same spread around 1: no change, since it could have seen 10%. */
        for (int i = 0; i < 12; i++)
            logs[i] = 0.01 * ((i % 3) - 1);
        CHECK(ab_compare_paired(logs, 12, &o, &pc) == 0 && pc.verdict == AB_SAME
                  && pc.lo < 1.0 && pc.hi > 1.0 && pc.mde <= AB_DEFAULT_THRESHOLD,
              "A/A: verdict %d MDE %g", pc.verdict, pc.mde);
        /* A 30% spread round to round: nothing called, and nothing ruled out. */
        for (int i = 0; i < 12; i++)
            logs[i] = 0.3 * ((i % 3) - 1);
        CHECK(ab_compare_paired(logs, 12, &o, &pc) == 0 && pc.verdict == AB_INCONCLUSIVE
                  && pc.mde > AB_DEFAULT_THRESHOLD, "noisy: verdict %d MDE %g", pc.verdict,
              pc.mde);
        /* The MDE is what it says: a true change of the MDE is called. */
        double mde = pc.mde;
        for (int i = 0; i < 12; i++)
            logs[i] = log(1.0 + mde) + 0.3 * ((i % 3) - 1);
        CHECK(ab_compare_paired(logs, 12, &o, &pc) == 0 && pc.verdict == AB_REGRESSION,
              "a change of the MDE (%g) not called: p %g", mde, pc.p);
        CHECK(ab_compare_paired(logs, 2, &o, &pc) == 0 && pc.verdict == AB_INCONCLUSIVE
                  && isinf(pc.mde), "2 rounds: verdict %d", pc.verdict);
        logs[1] = NAN;
        CHECK(ab_compare_paired(logs, 12, &o, &pc) == -1, "a NaN ratio accepted");
    }

    t_case("compare runs: unusable runs are refused");
    b[2].base[0].median = 0.0;
    CHECK(ab_compare_runs(b, 10, &o, v) == -1, "a zero median accepted");
    b[2].base[0].median = 1e-3;
    b[2].nf = 0;
    CHECK(ab_compare_runs(b, 10, &o, v) == -1, "no runs accepted");
}
