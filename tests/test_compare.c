/*
 * test_compare.c — the statistics of `attnbench compare` against values
 * worked out independently: the Mann–Whitney p of two separated samples
 * (normal approximation with continuity correction, by hand), the
 * Hodges–Lehmann ratio of constant samples, and the verdict rule (effect
 * size AND significance).
 */
#include <math.h>

#include "check.h"
#include "compare.h"

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
}
