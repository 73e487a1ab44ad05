/*
 * summary.h — the answer of a run: for every (op, shape, thread count) on
 * which two or more kernels were timed, the best kernel (the lowest median
 * time), the runner-up, and how sure the ranking is — the ratio runner-up /
 * best with its 95% confidence interval, "faster" when the interval lies
 * above 1, else "tie".
 *
 * The kernels of a shape are timed side by side, in rounds (bench.h), so
 * the ratio is taken round by round: each round the two ran in gives one
 * ratio, and the drift of the machine between rounds cancels out of it.
 * The median of those ratios and its distribution-free interval (the order
 * statistics, stats.h) are the estimate. With fewer than 6 shared rounds
 * (results from elsewhere) the two samples are compared unpaired, by the
 * Hodges–Lehmann ratio and its Mann–Whitney interval (compare.h).
 */
#ifndef AB_SUMMARY_H
#define AB_SUMMARY_H

#include "bench.h"
#include "compare.h"

typedef struct ab_summary {
    ab_op op;
    char shape[160];          /* the benchmark name without the kernel: "<op>/<label>" */
    int threads;
    char best[64], runner_up[64];
    int n_kernels;            /* how many were compared */
    double ratio, ci_low, ci_high;   /* runner-up time / best time */
    int paired;               /* rounds the ratio was taken over; 0: unpaired */
    int faster;               /* ci_low > 1: "faster", else "tie" */
    int unstable;             /* the best or the runner-up is flagged unstable */
    /* The best's products: ATTN_BF16 for a bf16 row (contract 0.3 §9.3),
     * which `auto` never runs; the answer says so rather than recommend
     * reduced precision as if it were a faster fp32 kernel. */
    attn_dtype best_math;
} ab_summary;

/* Fills out[0..max) from the n results (those without an error), one per
 * (shape, thread count) in the order they first appear. Returns how many. */
int ab_summarize(const ab_result *r, int n, ab_summary *out, int max);

/* run --lib: a kernel of another build against the same kernel of this
 * one, on one shape and thread count, from the rounds both ran in
 * (compare.h: ab_compare_paired). */
typedef struct ab_build_pair {
    char shape[160];          /* the benchmark name without the kernel */
    int threads;
    char kernel[32];          /* the kernel, without its "@build" */
    char build[32];           /* the other build's NAME */
    ab_run_comparison c;      /* its time / this build's: ratio, interval, MDE, verdict */
} ab_build_pair;

/* Fills out[0..max) with every result of another build (r->lib set) that
 * has a counterpart of this build, judged at o (its alpha divided among the
 * pairs). Returns how many. */
int ab_summarize_builds(const ab_result *r, int n, const ab_compare_opts *o, ab_build_pair *out,
                        int max);

/* "faster" or "tie". */
const char *ab_summary_verdict(const ab_summary *s);

#endif /* AB_SUMMARY_H */
