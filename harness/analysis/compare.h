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

/* AB_SAME is "no change"; AB_INCONCLUSIVE, no significant change but the
 * data could not have seen one of the threshold (ab_run_comparison.mde). */
typedef enum { AB_SAME, AB_REGRESSION, AB_IMPROVEMENT, AB_INCONCLUSIVE } ab_verdict_kind;

/* "no change", "REGRESSION", "improvement", "inconclusive". */
const char *ab_verdict_name(ab_verdict_kind v);

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
/* P(T > t) for Student's T with df degrees of freedom (df > 0). */
double ab_student_sf(double t, double df);
/* The t with P(T > t) = q (q < ½), by bisection of ab_student_sf. */
double ab_student_isf(double q, double df);

/* ---- Across runs ---------------------------------------------------------------------- */
/*
 * Repetitions inside one process share its state (where its memory and
 * code landed, which cores its threads got, what else ran meanwhile), so
 * their spread understates how much two runs of the same binary differ.
 * Benchmarks are therefore judged at the level of runs: each run (file)
 * gives one median per benchmark, and the log ratio new/base is set
 * against the run-to-run noise:
 *  - with two or more runs on a side, that noise is estimated from the
 *    runs themselves: the spread of each benchmark's run medians within its
 *    side, moderated toward the typical spread of all benchmarks of the
 *    comparison (df0 = 4 runs' worth of prior, as limma's moderated t), and
 *    the difference of the sides' mean log medians gets a t-test (the
 *    prior: the median variance over the median of chi2_k / k, so as not
 *    to be biased low; a run's variance no smaller than its own
 *    uncertainty of its median);
 *  - with one run a side, it cannot be: the noise is the larger of the
 *    floor run_noise (this machine kind's A/A calibration, the docs give
 *    it; for calls shorter than AB_SHORT_CALL it grows as 1/sqrt of their
 *    time, and as 1/time on more than one thread, as short calls shift more
 *    and threaded ones most) and the spread of all benchmarks' log
 *    ratios around their median (robust: MAD; a uniform shift leaves it
 *    alone, so a 30% slowdown of everything still shows; unstable benchmarks
 *    count in it too), plus each run's own uncertainty of its median; the
 *    log ratio gets a normal test at alpha over the number of benchmarks
 *    judged (Bonferroni: the noise is a model, with heavy tails); with runs
 *    a side the rows are judged together by Benjamini-Hochberg (a CI gate
 *    fails on any one row: with nothing changed it calls one at most alpha
 *    of the time, yet a change of many lowers every row's bar). One
 *    benchmark alone is then called only for a gross change (about 1.6x at
 *    the default floor: A/A pairs here moved single benchmarks by up to 48%);
 *    a change of the whole run is judged by ab_compare_whole.
 * A benchmark that either side flags unstable (its file says so, or its
 * median is known to no better than ±5%) is reported and not judged.
 */

#define AB_MAX_RUNS 64
#define AB_UNSTABLE_PRECISION 0.05     /* files that do not flag: a median known to ±5% */
#define AB_DEFAULT_RUN_NOISE 0.10
#define AB_SHORT_CALL 200e-6           /* below this, the floor grows (1/sqrt(time), 1/time threaded) */

typedef struct ab_run_stat {
    double median;            /* seconds */
    double precision;         /* relative half-width of its median's 95% interval; NaN unknown */
    int unstable;
    /* The median's relative standard error within its run, NaN unknown:
     * precision / 1.96, or below AB_MEDIAN_CI_MIN repetitions (where no
     * 95% interval exists) 1.2533·sd / (median·sqrt(n)), a normal model's.
     * It adds to a row's noise; only precision can make a row unstable. */
    double se;
} ab_run_stat;

typedef struct ab_bench_runs {
    int nb, nf;
    ab_run_stat base[AB_MAX_RUNS], fresh[AB_MAX_RUNS];
    /* 1 when attnbench wrote the base: its short calls get the floor's
     * growth, which was calibrated on attnbench's own benchmarks (other
     * programs' nanosecond benchmarks batch millions of calls, a different
     * noise). */
    int attnbench;
    int threads;              /* of the benchmark; 0 unknown */
} ab_bench_runs;

/* A row may say "no change" only when its data could have detected a change
 * of this size; a larger MDE makes it "inconclusive". */
#define AB_DEFAULT_THRESHOLD 0.10
/* The power the MDE is computed at: the change the test calls 80% of the time. */
#define AB_MDE_POWER 0.80

typedef struct ab_compare_opts {
    double alpha, min_effect;
    double run_noise;         /* floor of the run-to-run σ of log time, one run a side */
    double threshold;         /* the MDE a "no change" needs (AB_DEFAULT_THRESHOLD) */
} ab_compare_opts;

typedef struct ab_run_comparison {
    double ratio, lo, hi;     /* exp of the mean log-median difference, and its interval */
    /* The minimal detectable effect: the slowdown (a fraction) this row's
     * test calls with AB_MDE_POWER at its level, exp((q + z_power)·se) − 1. */
    double mde;
    double p;
    double noise;             /* the run-level σ of log time used */
    double se;                /* the standard error of log(ratio) tested */
    double df;                /* its degrees of freedom (INFINITY: a normal) */
    int runs_base, runs_new;
    int unstable;             /* flagged on a side: reported, not judged */
    ab_verdict_kind verdict;  /* AB_INCONCLUSIVE when unstable */
} ab_run_comparison;

/* The run statistics of one benchmark's samples in one file: the median,
 * its precision (the file's, else ab_median_precision from at least
 * AB_MEDIAN_CI_MIN samples, else from cv and repetitions for a file of
 * aggregates; NaN for 2-5 samples: the [min, max] of so few covers the
 * median less than 95% of the time, and taken as a 95% interval it made
 * nearly every row of another program's 3-repetition file unstable, so
 * never judged), its se, and unstable as the file flags it, else when the
 * precision is worse than AB_UNSTABLE_PRECISION. */
ab_run_stat ab_run_stat_of(const double *t, int n, int flagged, double precision, double cv,
                           int repetitions);

/* Judges the n benchmarks b[0..n) together (the pooled noise needs them
 * all). 0, or -1 for unusable input (a benchmark without runs on a side, a
 * non-positive or non-finite median, options out of range). */
int ab_compare_runs(const ab_bench_runs *b, int n, const ab_compare_opts *o,
                    ab_run_comparison *out);

/* Whether the run as a whole moved. With runs a side: each run's mean log
 * time over the benchmarks every run has, the sides' means of those in a
 * t-test on the runs (nb + nf - 2 df). With one run a side: the median log
 * ratio over the benchmarks (unstable ones too) whose calls take at least
 * AB_SHORT_CALL (attnbench's short ones shift together with the machine:
 * whole smoke runs moved by up to 35%), at least
 * AB_WHOLE_MIN of them, against AB_WHOLE_NOISE of the floor (A/A pairs
 * here: whole-run shifts within -12%..+5% at those sizes while single
 * benchmarks moved 48%) plus the benchmarks' own scatter around their
 * median (read off the ratios, on m - 1 df).
 * A median is robust to the one benchmark that moved alone, so this is
 * what catches a slowdown of everything. w->verdict is AB_INCONCLUSIVE
 * (w->runs_base 0) when there are too few benchmarks. Its MDE at the
 * default floor is 23%: one run a side never says "no change" at 10%.
 * 0, or -1 as ab_compare_runs. */
#define AB_WHOLE_MIN 3
#define AB_WHOLE_NOISE 0.6
int ab_compare_whole(const ab_bench_runs *b, const ab_run_comparison *judged, int n,
                     const ab_compare_opts *o, ab_run_comparison *w);

/* ---- Within one run: two builds side by side ------------------------------------------- */
/*
 * run --lib times a kernel of two builds in the same rounds: each round
 * gives one ratio other/self, and the machine's drift between rounds
 * cancels out of it (as in the summary's ranking). The log ratios get a
 * paired t-test: their mean d, standard error s/sqrt(n), n − 1 degrees of
 * freedom; ratio exp(d) with its interval at 1 − alpha, the MDE and the
 * verdict as ab_compare_runs gives them (o->alpha: the caller divides it
 * by the number of pairs judged together, Bonferroni). At least 3 rounds;
 * fewer give AB_INCONCLUSIVE with an infinite MDE.
 */
int ab_compare_paired(const double *log_ratios, int n, const ab_compare_opts *o,
                      ab_run_comparison *c);

#endif /* AB_COMPARE_H */
