/* stats.c — summary statistics of repeated measurements. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define MAX_SAMPLES 4096

int ab_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double ab_median_inplace(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, ab_cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

int ab_stats_compute(const double *x, int n, ab_stats *out)
{
    double sorted[MAX_SAMPLES];
    if (n < 1 || n > MAX_SAMPLES)
        return -1;
    memcpy(sorted, x, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), ab_cmp_double);

    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / n;
    /* Two passes: subtracting the mean first keeps the variance accurate
     * when the spread is tiny next to the values (timings in ns). */
    double ss = 0.0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);

    out->n = n;
    out->min = sorted[0];
    out->max = sorted[n - 1];
    out->median = (n % 2) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    out->mean = mean;
    out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    out->cv = mean != 0.0 ? out->stddev / fabs(mean) : 0.0;
    return 0;
}

/* P(Bin(n, ½) <= k), summed in doubles (n <= MAX_SAMPLES keeps it exact enough). */
static double binomial_half_cdf(int n, int k)
{
    double term = pow(0.5, n), sum = 0.0;   /* C(n, 0)·2^-n */
    for (int i = 0; i <= k && i <= n; i++) {
        sum += term;
        term *= (double)(n - i) / (double)(i + 1);
    }
    return sum;
}

int ab_median_ci(const double *x, int n, double conf, double *lo, double *hi)
{
    double sorted[MAX_SAMPLES];
    if (n < 1 || n > MAX_SAMPLES || !(conf > 0.0 && conf < 1.0))
        return -1;
    memcpy(sorted, x, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), ab_cmp_double);
    /* k counts from 1: the interval [x_(k), x_(n+1-k)] misses the median
     * with probability 2·P(Bin < k) = 2·P(Bin <= k - 1). */
    int k = 1;
    while (k + 1 <= (n + 1) / 2 && 2.0 * binomial_half_cdf(n, k) <= 1.0 - conf)
        k++;
    *lo = sorted[k - 1];
    *hi = sorted[n - k];
    return 0;
}

double ab_median_precision(const double *x, int n)
{
    ab_stats st;
    double lo, hi;
    if (ab_stats_compute(x, n, &st) != 0 || ab_median_ci(x, n, 0.95, &lo, &hi) != 0
        || !(st.median > 0.0))
        return NAN;
    double below = st.median - lo, above = hi - st.median;
    return (below > above ? below : above) / st.median;
}
