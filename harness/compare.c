/* compare.c — the statistics of `attnbench compare` (compare.h). */
#include <math.h>
#include <stdlib.h>

#include "compare.h"

#define MAX_SAMPLES 1000

double ab_normal_sf(double z)
{
    return 0.5 * erfc(z / sqrt(2.0));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
    qsort(d, n, sizeof *d, cmp_double);
    double est = n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
    /* The k-th smallest and k-th largest pairwise differences bound the
     * interval, k from the normal approximation of U's distribution. */
    double z = normal_isf(alpha / 2.0);
    double k = nb * (double)nf / 2.0 - z * sqrt(nb * (double)nf * (nb + nf + 1) / 12.0);
    long ki = (long)floor(k);
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
