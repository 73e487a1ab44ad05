/* stats.c — summary statistics of repeated measurements. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#define MAX_SAMPLES 4096

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int ab_stats_compute(const double *x, int n, ab_stats *out)
{
    double sorted[MAX_SAMPLES];
    if (n < 1 || n > MAX_SAMPLES)
        return -1;
    memcpy(sorted, x, sizeof(double) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(double), by_value);

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
