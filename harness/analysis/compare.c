/* compare.c — the statistics of `attnbench compare` (compare.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "stats.h"

#define MAX_SAMPLES 1000

double ab_normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}


/* The z with P(Z > z) = q, by bisection (monotone, no table needed). */
static double normal_isf(double q)
{
    double lo = -10.0, hi = 10.0;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (ab_normal_sf(mid) > q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* Two-sided Mann–Whitney U p-value for samples x (n) and y (m). */
static double mann_whitney_p(const double *x, int n, const double *y, int m)
{
    int N = n + m;
    double *all = malloc(sizeof *all * (size_t)N);
    if (!all)
        return NAN;
    /* Rank by sorting indices; an index below n is from x. */
    for (int i = 0; i < n; i++)
        all[i] = x[i];
    for (int j = 0; j < m; j++)
        all[n + j] = y[j];
    int *idx = malloc(sizeof *idx * (size_t)N);
    if (!idx) {
        free(all);
        return NAN;
    }
    for (int i = 0; i < N; i++)
        idx[i] = i;
    /* Insertion sort by value: N <= 2000 and this runs once per benchmark. */
    for (int i = 1; i < N; i++) {
        int k = idx[i], j = i - 1;
        while (j >= 0 && all[idx[j]] > all[k]) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = k;
    }
    double rank_sum_x = 0.0, tie_term = 0.0;
    for (int i = 0; i < N;) {
        int j = i;
        while (j + 1 < N && all[idx[j + 1]] == all[idx[i]])
            j++;
        double rank = 0.5 * (i + j) + 1.0;     /* mid-rank of the tie group */
        for (int k = i; k <= j; k++)
            if (idx[k] < n)
                rank_sum_x += rank;
        double t = j - i + 1;
        tie_term += t * t * t - t;
        i = j + 1;
    }
    free(all);
    free(idx);
    double u = rank_sum_x - n * (n + 1) / 2.0, mean = n * (double)m / 2.0;
    double var = n * (double)m / 12.0 * ((N + 1) - tie_term / ((double)N * (N - 1)));
    if (var <= 0.0)
        return 1.0;                             /* every value tied */
    double z = (fabs(u - mean) - 0.5) / sqrt(var);
    if (z < 0.0)
        z = 0.0;
    double p = 2.0 * ab_normal_sf(z);
    return p > 1.0 ? 1.0 : p;
}

int ab_compare_samples(const double *base, int nb, const double *fresh, int nf, double alpha,
                       double min_effect, ab_comparison *c)
{
    if (nb < 1 || nf < 1 || nb > MAX_SAMPLES || nf > MAX_SAMPLES || !(alpha > 0 && alpha < 1))
        return -1;
    for (int i = 0; i < nb; i++)
        if (!(base[i] > 0) || !isfinite(base[i]))
            return -1;
    for (int j = 0; j < nf; j++)
        if (!(fresh[j] > 0) || !isfinite(fresh[j]))
            return -1;
    size_t n = (size_t)nb * (size_t)nf;
    double *d = malloc(sizeof *d * n);
    if (!d)
        return -1;
    for (int i = 0; i < nb; i++)
        for (int j = 0; j < nf; j++)
            d[(size_t)i * nf + j] = log(fresh[j]) - log(base[i]);
    qsort(d, n, sizeof *d, ab_cmp_double);
    double est = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
    /* The k-th smallest and k-th largest pairwise differences bound the
     * interval, k from the normal approximation of U's distribution. */
    double z = normal_isf(alpha / 2.0);
    double k = nb * (double)nf / 2.0 - z * sqrt(nb * (double)nf * (nb + nf + 1) / 12.0);
    /* The floor(k)-th smallest (1-based; index floor(k) - 1): the one past
     * it covered 94.5% at 10 against 10 (a review's simulation). */
    long ki = (long)floor(k) - 1;
    ki = ki < 0 ? 0 : ki > (long)n - 1 ? (long)n - 1 : ki;
    c->ratio = exp(est);
    c->lo = exp(d[ki]);
    c->hi = exp(d[n - 1 - (size_t)ki]);
    free(d);
    c->p = mann_whitney_p(base, nb, fresh, nf);
    c->weak = nb < 9 || nf < 9;
    c->verdict = AB_SAME;
    if (c->p < alpha && c->ratio > 1.0 + min_effect)
        c->verdict = AB_REGRESSION;
    else if (c->p < alpha && c->ratio < 1.0 - min_effect)
        c->verdict = AB_IMPROVEMENT;
    return 0;
}

/* ---- Across runs ---------------------------------------------------------------------- */

/* The continued fraction of the incomplete beta function (modified Lentz). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    d = fabs(d) < tiny ? tiny : d;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m, num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + num / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + num / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < 1e-15)
            break;
    }
    return h;
}

/* The regularized incomplete beta function I_x(a, b). */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_fraction(a, b, x) / a;
    return 1.0 - front * beta_fraction(b, a, 1.0 - x) / b;
}

double ab_student_sf(double t, double df)
{
    if (isinf(df))
        return ab_normal_sf(t);
    double tail = 0.5 * incomplete_beta(0.5 * df, 0.5, df / (df + t * t));
    return t >= 0.0 ? tail : 1.0 - tail;
}

double ab_student_isf(double q, double df)
{
    double lo = 0.0, hi = 1e3;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (ab_student_sf(mid, df) > q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

ab_run_stat ab_run_stat_of(const double *t, int n, int flagged, double precision, double cv,
                           int repetitions)
{
    ab_run_stat r = { NAN, NAN, 0, NAN };
    ab_stats st;
    if (n < 1 || ab_stats_compute(t, n, &st) != 0)
        return r;
    r.median = st.median;
    /* The median's standard error is about 1.2533·σ/√n for a normal sample. */
    if (!isnan(precision))
        r.precision = precision;
    else if (n >= AB_MEDIAN_CI_MIN)
        r.precision = ab_median_precision(t, n);
    else if (n >= 2 && st.median > 0)
        r.se = 1.2533 * st.stddev / st.median / sqrt((double)n);
    else if (n == 1 && !isnan(cv) && repetitions >= 2)
        r.precision = 1.96 * 1.2533 * cv / sqrt((double)repetitions);
    if (!isnan(r.precision))
        r.se = r.precision / 1.96;
    r.unstable = flagged >= 0 ? flagged : r.precision > AB_UNSTABLE_PRECISION;
    return r;
}


const char *ab_verdict_name(ab_verdict_kind v)
{
    return v == AB_REGRESSION    ? "REGRESSION"
           : v == AB_IMPROVEMENT ? "improvement"
           : v == AB_SAME        ? "no change"
                                 : "inconclusive";
}

/* The four answers: a significant change beyond min_effect either way;
 * else "no change" when the row could have seen a change of the
 * threshold, "inconclusive" when it could not (or a side is unstable). */
static ab_verdict_kind judge(int unstable, double p, double alpha, double ratio, double mde,
                             const ab_compare_opts *o)
{
    if (unstable)
        return AB_INCONCLUSIVE;
    if (p < alpha && ratio > 1.0 + o->min_effect)
        return AB_REGRESSION;
    if (p < alpha && ratio < 1.0 - o->min_effect)
        return AB_IMPROVEMENT;
    return mde <= o->threshold ? AB_SAME : AB_INCONCLUSIVE;
}

/* The test of a log ratio d with standard error se on df degrees of
 * freedom (INFINITY: a normal) at level alpha: c's interval, p-value, MDE
 * and verdict (judge(), with c->unstable). c->ratio is the caller's, set
 * before (exp(d), or what d was taken from). */
static void test_ratio(ab_run_comparison *c, double d, double se, double df, double alpha,
                       const ab_compare_opts *o)
{
    double q = isinf(df) ? normal_isf(alpha / 2.0) : ab_student_isf(alpha / 2.0, df);
    c->lo = exp(d - q * se);
    c->hi = exp(d + q * se);
    c->p = se > 0 ? 2.0 * ab_student_sf(fabs(d) / se, df) : (d == 0 ? 1.0 : 0.0);
    c->p = c->p > 1.0 ? 1.0 : c->p;
    double power = isinf(df) ? normal_isf(1.0 - AB_MDE_POWER)
                              : ab_student_isf(1.0 - AB_MDE_POWER, df);
    c->mde = exp((q + power) * se) - 1.0;
    c->verdict = judge(c->unstable, c->p, alpha, c->ratio, c->mde, o);
}

#define PRIOR_DF 4.0          /* the pooled spread counts as this many runs */
#define MIN_CROSS 5           /* benchmarks needed to read a spread across them */

int ab_compare_runs(const ab_bench_runs *b, int n, const ab_compare_opts *o,
                    ab_run_comparison *out)
{
    if (n < 0 || !(o->alpha > 0 && o->alpha < 1) || !(o->min_effect >= 0) || !(o->run_noise >= 0)
        || !(o->threshold >= 0))
        return -1;
    double *diff = malloc(sizeof *diff * (size_t)(n > 0 ? n : 1));
    double *var = malloc(sizeof *var * (size_t)(n > 0 ? n : 1));
    if (!diff || !var) {
        free(diff);
        free(var);
        return -1;
    }
    /* Pass 1: each benchmark's mean log-median difference, the spread of its
     * runs within their sides, and which are judged at all. */
    int n_var = 0, n_diff = 0, n_judged = 0, n_bh = 0;
    double df_sum = 0.0;
    for (int i = 0; i < n; i++) {
        const ab_bench_runs *x = &b[i];
        ab_run_comparison *c = &out[i];
        memset(c, 0, sizeof *c);
        if (x->nb < 1 || x->nf < 1 || x->nb > AB_MAX_RUNS || x->nf > AB_MAX_RUNS)
            goto unusable;
        double mb = 0, mf = 0, ss = 0;
        for (int k = 0; k < x->nb; k++) {
            if (!(x->base[k].median > 0) || !isfinite(x->base[k].median))
                goto unusable;
            mb += log(x->base[k].median) / x->nb;
            c->unstable |= x->base[k].unstable;
        }
        for (int k = 0; k < x->nf; k++) {
            if (!(x->fresh[k].median > 0) || !isfinite(x->fresh[k].median))
                goto unusable;
            mf += log(x->fresh[k].median) / x->nf;
            c->unstable |= x->fresh[k].unstable;
        }
        for (int k = 0; k < x->nb; k++)
            ss += (log(x->base[k].median) - mb) * (log(x->base[k].median) - mb);
        for (int k = 0; k < x->nf; k++)
            ss += (log(x->fresh[k].median) - mf) * (log(x->fresh[k].median) - mf);
        c->runs_base = x->nb;
        c->runs_new = x->nf;
        c->ratio = exp(mf - mb);
        c->noise = ss;                        /* the sum of squares, until pass 2 */
        /* Every benchmark, unstable or not, shows how much this pair of runs
         * moved benchmarks relative to each other. */
        diff[n_diff++] = mf - mb;
        if (c->unstable)
            continue;
        n_judged++;
        if (x->nb + x->nf > 2) {
            var[n_var++] = ss / (x->nb + x->nf - 2);
            df_sum += x->nb + x->nf - 2;
        }
    }
    /* The typical spread between runs of one side (the prior): the median of
     * the benchmarks' variances, each s²·k ~ σ²·χ²_k, over the median of
     * χ²_k / k (Wilson–Hilferty), without which it was ~0.69σ² at k = 2 and
     * the t-tests called A/A rows 2.8% of the time at alpha 1%. And the
     * spread of the differences across benchmarks around their median. */
    double prior = NAN, cross = 0.0;
    if (n_var > 0) {
        double k = df_sum / n_var, c = 1.0 - 2.0 / (9.0 * k);
        prior = ab_median_inplace(var, n_var) / (c * c * c);
    }
    if (n_diff >= MIN_CROSS) {
        double center = ab_median_inplace(diff, n_diff);
        for (int i = 0; i < n_diff; i++)
            diff[i] = fabs(diff[i] - center);
        cross = 1.4826 * ab_median_inplace(diff, n_diff) / sqrt(2.0);   /* per run: a difference of two */
    }
    /* Pass 2: each benchmark's noise, test and verdict; the p-values of the
     * rows with runs a side, for pass 3, in diff's room (its values spent). */
    double *p_runs = diff;
    for (int i = 0; i < n; i++) {
        const ab_bench_runs *x = &b[i];
        ab_run_comparison *c = &out[i];
        double d = log(c->ratio), se, df;
        int df_own = x->nb + x->nf - 2;
        /* Each run's own uncertainty of its median, averaged over the runs
         * of a side (u_b, u_f): what the runs cannot be closer than. */
        double u_b = 0.0, u_f = 0.0;
        for (int k = 0; k < x->nb; k++)
            u_b += isnan(x->base[k].se) ? 0 : x->base[k].se * x->base[k].se / x->nb;
        for (int k = 0; k < x->nf; k++)
            u_f += isnan(x->fresh[k].se) ? 0 : x->fresh[k].se * x->fresh[k].se / x->nf;
        const int by_runs = df_own >= 1 && !isnan(prior);
        if (by_runs) {
            double s2 = (c->noise + PRIOR_DF * prior) / (df_own + PRIOR_DF);
            /* Runs that agree to the last digit (the same file twice) are not
             * a variance of 0: no closer than their own medians are known. */
            s2 = fmax(s2, 0.5 * (u_b + u_f));
            c->noise = sqrt(s2);
            se = c->noise * sqrt(1.0 / x->nb + 1.0 / x->nf);
            df = df_own + PRIOR_DF;
        } else {
            /* Calls shorter than AB_SHORT_CALL shift more between runs (A/A
             * pairs on the 2-vCPU VMs: 8-17% at 14-56 us on one thread;
             * on two, whose short calls wait on the hypervisor waking the
             * other vCPU, 6-23% and now and then 1.9x at 8-37 us; longer
             * calls 2-15%, and up to 48% now and then): the floor grows as
             * 1/sqrt of the call's time below it, on more threads as 1/time. */
            double t = x->base[0].median, floor = o->run_noise;
            if (x->attnbench && t < AB_SHORT_CALL)
                floor *= x->threads > 1 ? AB_SHORT_CALL / t : sqrt(AB_SHORT_CALL / t);
            /* The spread across the benchmarks, where it is above the
             * model, is a measurement: a MAD of n_diff ratios, as sure as
             * a variance on ~0.37·n_diff df (its efficiency), not known
             * exactly. Taken as exact (a normal's critical value), 15%
             * run-to-run noise called 2.6-4.3% of A/A pairs (a review's
             * simulation, 5-50 benchmarks) against alpha 1%. */
            df = INFINITY;
            if (cross > floor) {
                floor = cross;
                df = fmax(1.0, 0.37 * n_diff);
            }
            c->noise = floor;
            se = sqrt(floor * floor * (1.0 / x->nb + 1.0 / x->nf) + u_b + u_f);
        }
        c->se = se;
        c->df = df;
        /* One run a side: the noise is a model, with tails heavier than a
         * normal's (A/A shifts of 4-5 sigma now and then), so the verdicts
         * are family-wise at alpha over the benchmarks judged (Bonferroni).
         * Runs a side: after pass 3. */
        test_ratio(c, d, se, df, n_judged > 1 ? o->alpha / n_judged : o->alpha, o);
        if (by_runs && !c->unstable)
            p_runs[n_bh++] = c->p;
    }
    /* Pass 3, runs a side: a CI gate fails on any one row, and at alpha
     * each, an A/A pair of 50 benchmarks would fail it 40% of the time —
     * while Bonferroni's alpha / m let a 10% slowdown of every benchmark
     * through (a simulation: 26% caught where 97% were at alpha each, runs
     * of 3% noise). Benjamini-Hochberg does both: with nothing changed it
     * calls a row at most alpha of the time (its false discovery rate is
     * then the chance of any call), and a change of many rows lowers every
     * row's bar. Its R rows called are those with p below alpha R / m, so
     * the rows are tested at that level (alpha / m when none), which gives
     * each interval and MDE the level of Benjamini-Yekutieli's
     * false-coverage intervals. */
    if (n_bh > 0) {
        qsort(p_runs, (size_t)n_bh, sizeof *p_runs, ab_cmp_double);
        int called = 0;
        for (int k = 1; k <= n_bh; k++)
            if (p_runs[k - 1] <= o->alpha * k / n_bh)
                called = k;
        double level = o->alpha * (called > 0 ? called : 1) / n_bh;
        for (int i = 0; i < n; i++)   /* the rows of runs a side (pass 2's by_runs) */
            if (isfinite(out[i].df) && out[i].runs_base + out[i].runs_new > 2)
                test_ratio(&out[i], log(out[i].ratio), out[i].se, out[i].df,
                           level * (1.0 + 1e-12), o);
    }
    free(diff);
    free(var);
    return 0;

unusable:
    free(diff);
    free(var);
    return -1;
}

int ab_compare_paired(const double *log_ratios, int n, const ab_compare_opts *o,
                      ab_run_comparison *c)
{
    memset(c, 0, sizeof *c);
    c->ratio = c->lo = c->hi = 1.0;
    c->p = 1.0;
    c->mde = INFINITY;
    c->verdict = AB_INCONCLUSIVE;
    if (n < 0 || !(o->alpha > 0 && o->alpha < 1) || !(o->min_effect >= 0) || !(o->threshold >= 0))
        return -1;
    c->runs_base = c->runs_new = n;
    if (n < 3)
        return 0;
    double mean = 0.0, ss = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(log_ratios[i]))
            return -1;
        mean += log_ratios[i] / n;
    }
    for (int i = 0; i < n; i++)
        ss += (log_ratios[i] - mean) * (log_ratios[i] - mean);
    double df = n - 1, se = sqrt(ss / df / n);
    c->noise = sqrt(ss / df);
    c->ratio = exp(mean);
    test_ratio(c, mean, se, df, o->alpha, o);
    return 0;
}

/* 1 when benchmark x counts in the whole run: attnbench's calls shorter
 * than AB_SHORT_CALL shift together with the machine (whole smoke runs
 * moved by up to 35%). Unstable benchmarks count too: not judged alone,
 * but a summary over many is robust to the few that moved most. */
static int in_whole(const ab_bench_runs *x)
{
    return !x->attnbench || x->base[0].median >= AB_SHORT_CALL;
}

/* Runs a side: each run's mean log time over the benchmarks every run has
 * (its geometric mean), and the sides' means of those set against their
 * spread from run to run — a two-sample t-test on runs, whatever moved
 * them, on nb + nf - 2 df; each run no better known than its benchmarks'
 * own uncertainties allow. Rows judged one by one (Benjamini-Hochberg)
 * missed a 10% slowdown of every benchmark in two runs a side of 3% noise
 * 66% of the time: their pooled evidence did not add up. */
static void whole_of_runs(const ab_bench_runs *b, int n, const ab_compare_opts *o,
                          ab_run_comparison *w)
{
    int nb = 0, nf = 0, m = 0;
    for (int i = 0; i < n; i++) {
        nb = b[i].nb > nb ? b[i].nb : nb;
        nf = b[i].nf > nf ? b[i].nf : nf;
    }
    double gb[AB_MAX_RUNS] = { 0 }, gf[AB_MAX_RUNS] = { 0 }, u = 0.0;
    for (int i = 0; i < n; i++) {
        if (b[i].nb != nb || b[i].nf != nf || !in_whole(&b[i]))
            continue;
        m++;
        for (int k = 0; k < nb; k++) {
            gb[k] += log(b[i].base[k].median);
            u += isnan(b[i].base[k].se) ? 0 : b[i].base[k].se * b[i].base[k].se / (nb + nf);
        }
        for (int k = 0; k < nf; k++) {
            gf[k] += log(b[i].fresh[k].median);
            u += isnan(b[i].fresh[k].se) ? 0 : b[i].fresh[k].se * b[i].fresh[k].se / (nb + nf);
        }
    }
    if (m < AB_WHOLE_MIN || nb + nf < 3)
        return;
    double mb = 0.0, mf = 0.0, ss = 0.0;
    for (int k = 0; k < nb; k++)
        mb += gb[k] / m / nb;
    for (int k = 0; k < nf; k++)
        mf += gf[k] / m / nf;
    for (int k = 0; k < nb; k++)
        ss += (gb[k] / m - mb) * (gb[k] / m - mb);
    for (int k = 0; k < nf; k++)
        ss += (gf[k] / m - mf) * (gf[k] / m - mf);
    double df = nb + nf - 2, s2 = fmax(ss / df, u / ((double)m * m));
    double se = sqrt(s2 * (1.0 / nb + 1.0 / nf));
    w->runs_base = nb;
    w->runs_new = nf;
    w->noise = sqrt(s2);
    w->se = se;
    w->df = df;
    w->ratio = exp(mf - mb);
    test_ratio(w, mf - mb, se, df, o->alpha, o);
}

int ab_compare_whole(const ab_bench_runs *b, const ab_run_comparison *judged, int n,
                     const ab_compare_opts *o, ab_run_comparison *w)
{
    memset(w, 0, sizeof *w);
    w->ratio = w->lo = w->hi = 1.0;
    w->p = 1.0;
    w->mde = INFINITY;
    w->verdict = AB_INCONCLUSIVE;   /* until enough benchmarks say more */
    for (int i = 0; i < n; i++)
        if (b[i].nb != 1 || b[i].nf != 1) {
            whole_of_runs(b, n, o, w);
            return 0;
        }
    double *logs = malloc(sizeof *logs * (size_t)(n > 0 ? n : 1));
    if (!logs)
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (in_whole(&b[i]))
            logs[m++] = log(judged[i].ratio);
    }
    if (m >= AB_WHOLE_MIN) {
        /* Two parts of noise: the shift all benchmarks share (a model,
         * AB_WHOLE_NOISE of the floor, on infinite df), and each one's own,
         * which a median of m averages down (variance π/2·s²/m) and whose s
         * is read off the ratios themselves (on m − 1 df): their MAD from
         * MIN_CROSS benchmarks up, robust to the one that moved alone, else
         * their standard deviation. With the shared part alone, three A/A
         * benchmarks at 1.20, 1.18 and 0.85 were a REGRESSION of the whole
         * run, and 10% noise a benchmark failed 9.5% of such pairs. The two
         * are combined on Welch–Satterthwaite's df. */
        double mean = 0.0, ss = 0.0, s2;
        for (int i = 0; i < m; i++)
            mean += logs[i] / m;
        for (int i = 0; i < m; i++)
            ss += (logs[i] - mean) * (logs[i] - mean);
        double d = ab_median_inplace(logs, m);
        if (m >= MIN_CROSS) {
            for (int i = 0; i < m; i++)
                logs[i] = fabs(logs[i] - d);
            s2 = pow(1.4826 * ab_median_inplace(logs, m), 2);
        } else {
            s2 = ss / (m - 1);
        }
        double shared = pow(AB_WHOLE_NOISE * o->run_noise, 2), own = M_PI / 2.0 * s2 / m;
        double se = sqrt(shared + own);
        double df = own > 0 ? (shared + own) * (shared + own) / (own * own / (m - 1)) : INFINITY;
        df = df < 1e3 ? df : INFINITY;   /* a normal by then; the t's tail fails at 1e60 */
        w->runs_base = w->runs_new = m;
        w->noise = AB_WHOLE_NOISE * o->run_noise;
        w->se = se;
        w->ratio = exp(d);
        test_ratio(w, d, se, df, o->alpha, o);
    }
    free(logs);
    return 0;
}
