/*
 * tune.h — the tuner behind `attnbench tune`: for one bucket of calls (the
 * shape that stands for it, and a thread count), the fastest kernel and
 * parameters that pass the oracle check.
 *
 * Candidates are every runnable kernel but naive with its default
 * parameters, then, per level:
 *   estimate  no timing: the feature-priority kernel with its defaults;
 *   measure   a coarse grid: each parameter of the best kernels at ½× and 2×
 *             its default, one at a time;
 *   patient   measure, then coordinate descent around the best (×½, ×¾, ×1¼,
 *             ×2 on each parameter in turn) until no step helps.
 * Each candidate is first checked against naive on a reduced shape of the
 * bucket (same op, head width and mask; length cut to 67) — a wrong one is
 * never timed nor stored. Candidates are timed interleaved: each round
 * times one calibrated batch of every live candidate, so a drift of the
 * machine hits all of them alike; the median over rounds decides.
 */
#ifndef AB_TUNE_H
#define AB_TUNE_H

#include "suites.h"
#include "internal.h"

typedef enum { AB_TUNE_ESTIMATE, AB_TUNE_MEASURE, AB_TUNE_PATIENT } ab_tune_level;

typedef struct ab_candidate {
    const attn_kernel *kernel;
    int params[ATTN_MAX_PARAMS];
    double max_err;              /* of the check, as a fraction of the bound */
    double times[64];            /* seconds per call, one per round */
    int n_times;
    double median;               /* of times; +inf until timed */
    attn_status run_status;      /* of ab_tune_time: not ATTN_OK when it could not run */
    /* Of ab_tune_time: a call's seconds as estimated on a cut shape, when
     * that left the candidate out unwarmed as far too slow; else 0. */
    double estimate;
} ab_candidate;

struct ab_tune_opts;

/* How candidates are checked and timed. The tuner uses the real check
 * against naive and ab_tune_time unless the options name a probe: the tests
 * give it a cost model, so that the search itself is tested exactly,
 * without the noise of timing on a shared machine. */
typedef struct ab_tune_probe {
    /* 1 when c passes; sets c->max_err. */
    int (*check)(void *arg, ab_candidate *c, const ab_shape *s, int threads);
    /* As ab_tune_time. */
    int (*time)(void *arg, ab_candidate *c, int n, const ab_shape *s,
                const struct ab_tune_opts *o);
    /* The clock the deadline is read on, as ab_now(). */
    double (*now)(void *arg);
    void *arg;
} ab_tune_probe;

typedef struct ab_tune_opts {
    ab_tune_level level;
    int threads;
    int rounds;                  /* interleaved rounds per comparison */
    double min_time;             /* seconds per timed batch */
    double deadline;             /* ab_now() (or probe->now()) value at which to stop (0: none) */
    /* Called with (arg, done, total, best so far or NULL); NULL for none. */
    void (*progress)(void *arg, int done, int total, const ab_candidate *best);
    void *progress_arg;
    const ab_tune_probe *probe;  /* NULL: the real check and timing */
    /* 1: the bf16 rows compete beside the fp32 ones, from "auto-bf16"'s
     * choice (the records "auto-bf16" contexts use); 0: fp32 rows only. */
    int bf16;
    /* 1: a candidate that fails the check or cannot run is counted in the
     * result, not said on stderr (the tests' cost models fail some on
     * purpose, and CI's log read as if something had broken). */
    int quiet;
} ab_tune_opts;

typedef struct ab_tune_result {
    ab_candidate best;
    ab_candidate base;           /* the untuned (feature-priority) choice */
    int checked, rejected, timed;
    /* Left out unchecked and untimed: a variant whose dry run recorded the
     * regions of the candidate it varies (same code, same tiles). */
    int same;
    int failed;                  /* passed the check, then could not be timed */
    char failure[120];           /* the first of them: "kernel: reason" */
    int out_of_time;             /* the deadline cut the search short */
    char error[200];             /* non-empty: nothing could be chosen */
} ab_tune_result;

/* Tunes the bucket of shape s. 0, or -1 with r->error. */
int ab_tune_shape(const ab_shape *s, const ab_tune_opts *o, ab_tune_result *r);

/* Times the candidates interleaved (o->rounds rounds) on shape s, filling
 * their times and medians. A candidate whose context, packing or call
 * fails is left untimed (median +inf) with that status in its run_status;
 * so is one over 10x slower a call than the fastest (its estimate set when
 * that was estimated, not timed); the others are timed. 0, or -1 when the
 * shape's inputs or the timer's buffers cannot be allocated. */
int ab_tune_time(ab_candidate *c, int n, const ab_shape *s, const ab_tune_opts *o);

/* Whether b runs what a runs on s at threads: it varies a only in
 * parameters whose whole effect a dry run shows (attn_param.traced), on a
 * row whose regions all report, and their dry runs (explain.h) record the
 * same regions. The search leaves such a neighbour out, unchecked and
 * untimed (ab_tune_result.same). */
int ab_tune_same_run(const ab_candidate *a, const ab_candidate *b, const ab_shape *s, int threads);

/* How a pick compares with an exhaustive neighbourhood search: every
 * runnable kernel but naive at its defaults and at ½× and 2× of each
 * parameter (each value of a few-valued one), checked, timed interleaved
 * with the pick; then the pick and the fastest of them head to head. On
 * return pick and winner hold the head-to-head times. 0, or -1. */
int ab_tune_evaluate(const ab_shape *s, const ab_tune_opts *o, ab_candidate *pick,
                     ab_candidate *winner, int *n_candidates);

/* The wisdom record of a result for shape s (bucket, kernel, parameter
 * names and values, times, max error, level, now). */
void ab_tune_record(const ab_tune_result *r, const ab_shape *s, const ab_tune_opts *o,
                    uint64_t machine, attn_wisdom_record *rec);

/* The calls that check a record of bucket b (its length cut to the
 * check's): its op, head width, mask kind and storage; a typed encoder
 * bucket (a decoder layer's typed cache) as a decoder layer on that cache;
 * keys and values of two types once on each. Returns how many (1 or 2), or
 * 0 with why for a bucket this attnbench does not know. */
int ab_tune_check_calls(const attn_bucket *b, ab_shape calls[2], char *why, size_t len);

/* Whether a record made elsewhere (another machine of the same key, the
 * fleet's store) can be trusted here: its kernel runs on this CPU, takes
 * the record's parameters and passes the tuner's check against naive on a
 * call of the record's bucket. 1 passes; 0 with why. *max_err: the check's
 * error as a fraction of the bound (+inf when not checked). */
int ab_tune_verify_record(const attn_wisdom_record *rec, double *max_err, char *why, size_t len);

#endif /* AB_TUNE_H */
