/*
 * compare.h — is NEW slower than BASE? Per benchmark, from the repetitions
 * of each (times per iteration):
 *   ratio   the Hodges–Lehmann estimate of NEW/BASE: the median of all
 *           pairwise ratios new_j / base_i (computed on logs);
 *   ci      its distribution-free confidence interval at 1 − alpha, from the
 *           order statistics of those pairwise ratios (the interval that
 *           inverts the Mann–Whitney test);
 *   p       the two-sided Mann–Whitney U test, normal approximation with
 *           continuity and tie corrections.
 * A regression needs both a ratio above 1 + min_effect and p < alpha; an
 * improvement, below 1 − min_effect and p < alpha.
 */
#ifndef AB_COMPARE_H
#define AB_COMPARE_H

typedef enum { AB_SAME, AB_REGRESSION, AB_IMPROVEMENT } ab_verdict_kind;

typedef struct ab_comparison {
    double ratio, lo, hi;     /* estimate and confidence interval of new/base */
    double p;                 /* Mann–Whitney, two-sided */
    int weak;                 /* fewer than 9 repetitions on a side: little power */
    ab_verdict_kind verdict;
} ab_comparison;

/* Compares times base[0..nb) and fresh[0..nf) (nb, nf >= 1, at most
 * 1000 each). 0, or -1 for unusable input (non-positive or non-finite
 * times, sizes out of range). */
int ab_compare_samples(const double *base, int nb, const double *fresh, int nf, double alpha,
                       double min_effect, ab_comparison *c);

/* P(Z > z) for a standard normal Z. */
double ab_normal_sf(double z);

#endif /* AB_COMPARE_H */
