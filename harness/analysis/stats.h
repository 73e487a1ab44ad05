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

#endif /* AB_STATS_H */
