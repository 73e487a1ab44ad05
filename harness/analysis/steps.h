/*
 * steps.h — steps in a series of timings: where a benchmark got slower or
 * faster over its runs, told apart from the series' own noise. Used by the
 * results history (history.c) after every add; no storage here.
 */
#ifndef AB_STEPS_H
#define AB_STEPS_H

/* The longest series looked at. */
#define AB_STEPS_WINDOW 256

/* Steps in a series y[0..n) (positive values in time order): the series is
 * fitted with a piecewise-constant function of log y, minimizing the sum of
 * absolute deviations plus a penalty per breakpoint (asv's model; the
 * penalty scales with the series' own noise, a robust estimate from the
 * differences of consecutive points, widened when the residuals show it
 * persists from point to point); a breakpoint is a step when the levels
 * on its two sides, at the breakpoint, differ by a factor of at least
 * 1 + min_effect either way (0.05: 5% slower, or faster by 1/1.05). A
 * side's level is its median, less a trend where the segments around the
 * breakpoint show one, so that a slow drift cut into segments is no step.
 * Writes the index of the first point after each step into at[] (at most
 * max) and the levels before and after into before[] / after[] (either
 * may be NULL); returns how many. n <= AB_STEPS_WINDOW. */
int ab_steps_detect(const double *y, int n, double min_effect, int *at, double *before,
                    double *after, int max);

/* The drift of y[0..n) between its steps (at[0..n_at): the first point
 * after each, ascending, as ab_steps_detect writes them), as the factor it
 * makes from the first point to the last (1.10: 10% slower over the
 * series): the trend of log y from pairs of points no step separates
 * (Theil-Sen), where the whole of its 95% interval (Sen's, widened for
 * noise that persists from point to point) makes a factor of at least
 * 1 + min_effect either way. Else 1, as with fewer than 3 points or an
 * unusable one. */
double ab_steps_drift(const double *y, int n, const int *at, int n_at, double min_effect);

#endif /* AB_STEPS_H */
