/* steps.c — steps in a series of timings (steps.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "steps.h"

/* Σ|v − median(v)| of a sorted v. */
static double l1_deviation(const double *sorted, int n)
{
    double m = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]), s = 0.0;
    for (int i = 0; i < n; i++)
        s += fabs(sorted[i] - m);
    return s;
}

/* The penalized fit of z[0..n) with noise sigma: writes the segments'
 * starts into starts[], the last first, and returns how many. */
static int fit_segments(const double *z, int n, double sigma, int *starts)
{
    /* A breakpoint costs 4σ·ln n: an outlier alone never pays for two, a
     * shift of a few σ held for a few runs does. The first and the last
     * segment hold two runs at least: one outlier at an end needs only one
     * breakpoint, and a 1.5× run, newest of 20 at CV 3%, was a "step" 56%
     * of the time (a review's simulation). */
    const double gamma = 4.0 * sigma * log((double)n);

    /* best[j]: the cheapest fit of z[0..j); from[j]: where its last segment
     * starts. cost(i, j) by inserting z[i] into the sorted z[i+1..j). */
    double best[AB_STEPS_WINDOW + 1], sorted[AB_STEPS_WINDOW];
    int from[AB_STEPS_WINDOW + 1];
    best[0] = -gamma;   /* the first segment is free */
    for (int j = 1; j <= n; j++) {
        best[j] = INFINITY;
        int len = 0;
        for (int i = j - 1; i >= 0; i--) {
            int k = len++;
            while (k > 0 && sorted[k - 1] > z[i]) {
                sorted[k] = sorted[k - 1];
                k--;
            }
            sorted[k] = z[i];
            if (len == 1 && (i == 0 || j == n) && !(i == 0 && j == n))
                continue;   /* a one-run segment at an end */
            double c = best[i] + l1_deviation(sorted, len) + gamma;
            if (c < best[j]) {
                best[j] = c;
                from[j] = i;
            }
        }
    }
    int ns = 0;
    for (int j = n; j > 0; j = from[j])
        starts[ns++] = from[j];
    return ns;
}

/* The lag-1 autocorrelation of z about its segments' medians (ns starts,
 * the last first), corrected for the bias of short segments' own levels
 * ((1 + 4ρ)/n, as for run's repetitions), or 0 when it is not positive at
 * the one-sided 5% level (1.64/√pairs): independent noise keeps the
 * differences' σ, and the detector its power. */
static double residual_lag1(const double *z, int n, const int *starts, int ns)
{
    double sxx = 0.0, sxy = 0.0;
    int pairs = 0;
    for (int s = ns - 1; s >= 0; s--) {
        int a0 = starts[s], a1 = s > 0 ? starts[s - 1] : n;
        double seg[AB_STEPS_WINDOW], prev = 0.0;
        memcpy(seg, z + a0, sizeof(double) * (size_t)(a1 - a0));
        double m = ab_median_inplace(seg, a1 - a0);
        for (int i = a0; i < a1; i++) {
            double e = z[i] - m;
            sxx += e * e;
            if (i > a0) {
                sxy += prev * e;
                pairs++;
            }
            prev = e;
        }
    }
    if (!(sxx > 0.0) || pairs < 2)
        return 0.0;
    double rho = sxy / sxx;
    rho += (1.0 + 4.0 * rho) / n;
    if (rho < 1.64 / sqrt((double)pairs))
        return 0.0;
    return rho < 0.9 ? rho : 0.9;
}

/* The pairs of points of z within one of the segments [bounds[k],
 * bounds[k + 1]) (nb of them, ascending), none straddling a bound, so that
 * a step does not read as slope: their slopes sorted into pairs (room for
 * n(n - 1)/2 for a series of n), Kendall's S (Σ sign(z_j - z_i)) and its
 * variance at no trend (each segment's n(n - 1)(2n + 5)/18). */
typedef struct {
    int np;
    double kendall, var;
} pair_slopes;

static pair_slopes within_pairs(const double *z, const int *bounds, int nb, double *pairs)
{
    pair_slopes p = { 0, 0.0, 0.0 };
    for (int k = 0; k < nb; k++) {
        int g0 = bounds[k], g1 = bounds[k + 1], len = g1 - g0;
        p.var += len * (len - 1.0) * (2.0 * len + 5.0) / 18.0;
        for (int i = g0; i < g1; i++)
            for (int j = i + 1; j < g1; j++) {
                pairs[p.np++] = (z[j] - z[i]) / (j - i);
                p.kendall += (z[j] > z[i]) - (z[j] < z[i]);
            }
    }
    qsort(pairs, (size_t)p.np, sizeof *pairs, ab_cmp_double);
    return p;
}

/* The median of the sorted pairs' slopes: the Theil-Sen estimate. */
static double theil_sen(const double *sorted, int np)
{
    return np % 2 ? sorted[np / 2] : 0.5 * (sorted[np / 2 - 1] + sorted[np / 2]);
}

/* The levels of log z on either side of the boundary between segment s
 * and segment s - 1 (starts[], ns segments, the last first), at the
 * boundary itself: each side's median of z less the trend inside the two
 * segments on either side (within_pairs), where those pairs show one
 * (Mann-Kendall, two-sided 5%); else 0, so a flat series keeps its
 * segments' medians, whose difference is the less noisy estimate of a
 * step. A series that drifts is cut into segments by the fit, and their
 * medians differ by the drift between their centres (a 10% drift over 256
 * runs at CV 5% had a "step" in 67% of series); at the boundary the
 * drift's levels meet, and only a step is left. */
static void boundary_levels(const double *z, int n, const int *starts, int ns, int s,
                            double *pairs, double *left, double *right)
{
    int a0 = starts[s], b = starts[s - 1], b1 = s >= 2 ? starts[s - 2] : n;
    int bounds[5], nb = 0, g = s + 1 < ns ? s + 1 : s;
    for (; g >= s - 2 && g >= 0; g--)
        bounds[nb++] = starts[g];
    bounds[nb] = g >= 0 ? starts[g] : n;   /* the end of the last: the next one's start */
    /* The trend only where the pairs show one (Mann-Kendall, two-sided
     * 5%); 0 without room for the pairs. */
    double slope = 0.0, side[AB_STEPS_WINDOW];
    if (pairs) {
        pair_slopes p = within_pairs(z, bounds, nb, pairs);
        if (p.np > 0 && fabs(p.kendall) > 1.96 * sqrt(p.var))
            slope = theil_sen(pairs, p.np);
    }
    double t0 = b - 0.5;
    for (int i = a0; i < b; i++)
        side[i - a0] = z[i] - slope * (i - t0);
    *left = ab_median_inplace(side, b - a0);
    for (int i = b; i < b1; i++)
        side[i - b] = z[i] - slope * (i - t0);
    *right = ab_median_inplace(side, b1 - b);
}

/* log y[0..n), or -1 where a point is not a positive finite number. */
static int log_series(const double *y, int n, double *z)
{
    for (int i = 0; i < n; i++) {
        if (!(y[i] > 0) || !isfinite(y[i]))
            return -1;
        z[i] = log(y[i]);
    }
    return 0;
}

double ab_steps_drift(const double *y, int n, const int *at, int n_at, double min_effect)
{
    double z[AB_STEPS_WINDOW];
    int bounds[AB_STEPS_WINDOW + 2], nb = 0;
    if (n < 3 || n > AB_STEPS_WINDOW || n_at < 0 || n_at > n || log_series(y, n, z) != 0)
        return 1.0;
    bounds[nb++] = 0;
    for (int k = 0; k < n_at; k++)
        if (at[k] > bounds[nb - 1] && at[k] < n)
            bounds[nb++] = at[k];
    bounds[nb] = n;
    double *pairs = malloc(sizeof(double) * (size_t)n * (size_t)(n - 1) / 2);
    if (!pairs)
        return 1.0;
    pair_slopes p = within_pairs(z, bounds, nb, pairs);
    double slope = p.np > 0 ? theil_sen(pairs, p.np) : 0.0;
    /* Noise that persists from run to run makes a flat series wander, and
     * Kendall's S spreads wider than its variance at independence says
     * (flat series with lag-1 correlation 0.5 showed a "drift" in 17-25%
     * of them): the variance is widened by (1 + rho)/(1 - rho), rho the
     * residuals' lag-1 correlation about the segments' levels and the
     * trend (the effective sample size's correction). */
    double sxx = 0.0, sxy = 0.0;
    for (int k = 0; k < nb; k++) {
        double side[AB_STEPS_WINDOW];
        int g0 = bounds[k], g1 = bounds[k + 1];
        for (int i = g0; i < g1; i++)
            side[i - g0] = z[i] - slope * i;
        double level = ab_median_inplace(side, g1 - g0), prev = 0.0;
        for (int i = g0; i < g1; i++) {
            double e = z[i] - slope * i - level;
            sxx += e * e;
            sxy += i > g0 ? prev * e : 0.0;
            prev = e;
        }
    }
    double rho = sxx > 0.0 ? sxy / sxx + 4.0 / n : 0.0;   /* less its bias at short n */
    rho = rho > 0.0 ? (rho < 0.9 ? rho : 0.9) : 0.0;
    double var = p.var * (1.0 + rho) / (1.0 - rho);
    /* The slope's distribution-free 95% interval (Sen): the pairs' slopes
     * ranked (N -/+ 1.96 sqrt(var))/2 from the lowest. The drift counts
     * only when all of that interval makes min_effect or more either way
     * over the series: a chance trend in a short noisy series (CV 10%, 20
     * runs) spans many percent, and an estimate alone, judged at 5%, said
     * "drift" in 4-5% of flat series. */
    double c = 1.96 * sqrt(var);
    int lo = (int)floor((p.np - c) / 2.0), hi = (int)ceil((p.np + c) / 2.0) - 1;
    double least = 0.0;
    if (lo >= 0 && hi < p.np && hi >= lo) {
        if (pairs[lo] > 0.0)
            least = pairs[lo];
        else if (pairs[hi] < 0.0)
            least = -pairs[hi];
    }
    free(pairs);
    return least * (n - 1) >= log1p(min_effect) * (1 - 1e-12) ? exp(slope * (n - 1)) : 1.0;
}

int ab_steps_detect(const double *y, int n, double min_effect, int *at, double *before,
                    double *after, int max)
{
    if (n < 3 || n > AB_STEPS_WINDOW)
        return 0;
    double z[AB_STEPS_WINDOW], d[AB_STEPS_WINDOW];
    if (log_series(y, n, z) != 0)
        return 0;
    /* The noise: a robust spread of consecutive differences (most of them
     * are noise even when the series has steps), divided by √2 since each
     * difference holds two points' noise. Floored at 0.1%. */
    for (int i = 1; i < n; i++)
        d[i - 1] = z[i] - z[i - 1];
    double md = ab_median_inplace(d, n - 1);
    for (int i = 0; i < n - 1; i++)
        d[i] = fabs(d[i] - md);
    double sigma0 = 1.4826 * ab_median_inplace(d, n - 1) / sqrt(2.0);
    sigma0 = sigma0 > 1e-3 ? sigma0 : 1e-3;
    int starts[AB_STEPS_WINDOW + 1], ns = fit_segments(z, n, sigma0, starts);
    /* Noise that persists from run to run (a machine's state over a day of
     * CI runs: lag-1 correlation ρ) makes differences read σ·√(1 − ρ), and
     * its slow wander was cut into steps: flat AR(1) series of CV 5-10%
     * had a step in 16-32% of them at ρ 0.7, 1-5% at 0.5. So the residuals'
     * ρ about the fit inflates σ to σ/(1 − ρ) — between the marginal spread
     * and the long-run one a segment's level has — and the series is fitted
     * again (twice at most, as the new fit moves ρ): 0.2-9% at ρ 0.7, at
     * most 3.3% at 0.5, while steps in independent noise are found as
     * often (a 10% step at CV 5% in 40 runs: 40.3% against 41.1%; 20% at
     * CV 10%: 34.8% against 36.0%; 1000 series each, docs). */
    double sigma = sigma0;
    for (int pass = 0; pass < 2; pass++) {
        double wide = sigma0 / (1.0 - residual_lag1(z, n, starts, ns));
        if (!(wide > sigma * 1.0001))
            break;
        sigma = wide;
        ns = fit_segments(z, n, sigma, starts);
    }
    /* Room for the pairs inside the segments around a breakpoint (at most
     * all pairs of the series), where there is one; without it the slope
     * is taken as 0. */
    double *pairs = ns > 1 ? malloc(sizeof(double) * (size_t)n * (size_t)(n - 1) / 2) : NULL;
    int found = 0;
    for (int s = ns - 1; s > 0; s--) {   /* boundaries in time order */
        int a1 = starts[s - 1];
        double lz, rz;
        boundary_levels(z, n, starts, ns, s, pairs, &lz, &rz);
        /* In log terms, as the fit sees it: a step faster by the factor
         * 1 + min_effect counts as one slower by it does (rm / lm - 1
         * took -4.8% for below a 5% minimum and +5.0% for above). Less a
         * rounding's worth, so that exactly 1.05 over 1 still counts. */
        if (fabs(rz - lz) < log1p(min_effect) * (1 - 1e-12) || found == max)
            continue;
        at[found] = a1;
        if (before)
            before[found] = exp(lz);
        if (after)
            after[found] = exp(rz);
        found++;
    }
    free(pairs);
    return found;
}
