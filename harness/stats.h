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

/* A benchmark whose coefficient of variation exceeds this is unstable. */
#define AB_UNSTABLE_CV 0.05

#endif /* AB_STATS_H */
