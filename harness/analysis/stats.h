/* stats.h — summary statistics of repeated measurements. */
#ifndef AB_STATS_H
#define AB_STATS_H

typedef struct ab_stats {
    int n;
    double min, max, median, mean;
    double stddev;   /* sample standard deviation (n − 1); 0 when n == 1 */
    double cv;       /* stddev / mean; 0 when the mean is 0 */
} ab_stats;

/* Summarizes x[0..n-1] (n >= 1; x is not modified). Returns 0, or -1 when
 * n < 1 or n is too large for the internal sort buffer. */
int ab_stats_compute(const double *x, int n, ab_stats *out);

/* qsort's comparison of doubles, ascending (shared by every sort of times). */
int ab_cmp_double(const void *a, const void *b);
/* The median of x[0..n) (n >= 1), sorting x in place. */
double ab_median_inplace(double *x, int n);

/* The distribution-free confidence interval of the median of x[0..n) at
 * level conf (e.g. 0.95): the order statistics x_(k) and x_(n+1-k) for the
 * largest k whose binomial coverage 1 − 2·P(Bin(n, ½) < k) is at least
 * conf, or [min, max] when no k reaches it (n < 6 at 95%). Makes no
 * assumption about the shape of the timing distribution. 0, or -1 for n < 1
 * or n too large. */
int ab_median_ci(const double *x, int n, double conf, double *lo, double *hi);
/* The fewest samples whose [min, max] is a 95% interval of the median
 * (1 − 2^(1−n) ≥ 0.95): below it a run states no interval (bench.c). */
#define AB_MEDIAN_CI_MIN 6

/* The half-width of that 95% interval relative to the median: how well a
 * run knows its median (0.01 = within ±1%). NaN for unusable input. */
double ab_median_precision(const double *x, int n);

/* Repetitions timed one after another are not independent: a machine's
 * drift (seconds of 10-30% on a shared VM) makes each look like the one
 * before, a lag-1 correlation rho of 0.2 a row in the median, up to 0.4
 * (docs/verdicts.md). n such samples know the median about as well as
 * n(1 − rho)/(1 + rho) independent ones (an AR(1) series' effective count),
 * and an interval that counts all n is too narrow: it covered a true median
 * 89% of the time at rho 0.2, 82% at 0.4, where 95% was claimed. */
double ab_effective_count(int n, double rho);
/* ab_median_ci for such samples: the binomial ranks of the effective count,
 * carried to the same quantiles of the n sorted samples, the widest over
 * the counts from there to n (so a larger rho never narrows it; rho 0 is
 * ab_median_ci exactly). -1 as ab_median_ci, or when the effective count is
 * below AB_MEDIAN_CI_MIN: then no interval reaches 95%. */
int ab_median_ci_correlated(const double *x, int n, double conf, double rho, double *lo,
                            double *hi);
/* Its half-width over the median; NaN where it returns -1. */
double ab_median_precision_correlated(const double *x, int n, double rho);

/* The lag-1 correlation of the log times of repetitions, pooled over rows
 * (each row's own mean removed): sums that rows are added to. */
typedef struct ab_lag1 {
    double sxy, sxx;   /* Σ d_t·d_(t+1), Σ d_t² over the rows' deviations */
    double rows, pairs;   /* counts, weighed as the sums are (ab_lag1_age) */
} ab_lag1;
/* Adds the n samples of one row (positive times, in the order timed);
 * rows of fewer than AB_MEDIAN_CI_MIN are left out. */
void ab_lag1_add(ab_lag1 *acc, const double *x, int n);
/* Weighs the rows summed so far by keep (0..1): a drift's weight fades as
 * later rows come (bench.c halves it at every group). */
void ab_lag1_age(ab_lag1 *acc, double keep);
/* Adds the rows summed in from. */
void ab_lag1_merge(ab_lag1 *acc, const ab_lag1 *from);
/* The pooled estimate, corrected for the bias of a row's own mean (about
 * −(1 + 4·rho)/n for n samples: independent rows of 20 read −0.05),
 * shrunk towards 0 by P/(P + AB_LAG1_PRIOR_PAIRS) for its P pairs (ten
 * rows of 7 samples estimate it ±0.24: the first group of a run must not
 * lose its intervals to that), and held to [0, AB_LAG1_MAX]: never
 * narrower than the independent interval. */
double ab_lag1_rho(const ab_lag1 *acc);
#define AB_LAG1_MAX 0.6
#define AB_LAG1_PRIOR_PAIRS 40

#endif /* AB_STATS_H */
