/*
 * bench.h — timing one benchmark (a kernel on a shape) the way a performance
 * engineer can trust: monotonic clock, warm-up, iterations calibrated so that
 * each repetition lasts at least min_time, R repetitions summarized, counters
 * read per repetition and reported per iteration.
 */
#ifndef AB_BENCH_H
#define AB_BENCH_H

#include "attn.h"
#include "counters.h"
#include "peak.h"
#include "stats.h"
#include "suites.h"
#include "workload.h"

#define AB_MAX_REPS 100
#define AB_MAX_EVENTS 16

typedef struct ab_bench_opts {
    double min_time;          /* seconds per repetition, at least */
    long iterations;          /* > 0: this many per repetition, not calibrated (counting
                               * instructions needs the same work every run) */
    int repetitions;
    ab_counters *counters;    /* NULL: none */
    /* > 0: when the warm-up call takes longer than this many seconds, the
     * benchmark is not timed (ab_bench_run returns 1); keeps `--kernel all`
     * from spending minutes on the deliberately slow kernels. */
    double max_call_time;
    /* Called before each repetition (rep < reps) and once after the last
     * (rep == reps); NULL for none. */
    void (*progress)(void *arg, int rep, int reps);
    void *progress_arg;
} ab_bench_opts;

typedef struct ab_result {
    char kernel[32];
    ab_shape shape;
    int threads;
    char run_name[256];       /* "<op>/<kernel>/<shape label>/threads:<n>" */
    long iterations;          /* per repetition */
    int reps;
    double real[AB_MAX_REPS]; /* seconds per iteration, wall clock */
    double cpu[AB_MAX_REPS];  /* CPU seconds per iteration, all threads */
    int n_events;             /* = ab_counters_count(counters) */
    double events[AB_MAX_EVENTS][AB_MAX_REPS];   /* per iteration; NaN if not counted */
    ab_stats real_stats, cpu_stats;
    double flops, bytes;      /* per iteration (ab_shape_flops / _bytes) */
    ab_isa isa;               /* of the kernel */
    double peak_gflops;       /* measured peak for isa and threads; 0 unknown */
    int unstable;             /* real-time CV above AB_UNSTABLE_CV */
    double extra_rss;         /* bytes of resident memory one call adds (--memory); NaN: not measured */
    char chosen_by[16];       /* why this kernel ran: wisdom, features, named, ATTN_KERNEL */
    char error[200];          /* non-empty: the benchmark did not run */
} ab_result;

/* The name of a benchmark run (also used in JSON and CSV). */
void ab_run_name(const char *kernel, const ab_shape *s, int threads, char *buf, size_t len);

/* Runs the benchmark; r->kernel, r->shape, r->threads, r->isa and
 * r->peak_gflops must be set by the caller. Returns 0; 1 when skipped by
 * max_call_time (the warm-up time in r->real[0]); or -1 with r->error. */
int ab_bench_run(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r);

/* Derived figures of a time per iteration (seconds). */
double ab_result_gflops(const ab_result *r, double seconds);
double ab_result_pct_peak(const ab_result *r, double seconds);   /* NaN without a peak */

#endif /* AB_BENCH_H */
