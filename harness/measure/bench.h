/*
 * bench.h — timing benchmarks (a kernel on a shape, at a thread count) the
 * way a performance engineer can trust: monotonic clock, warm-up,
 * iterations calibrated so that each repetition (a batch of calls) lasts at
 * least min_time, counters read per repetition and reported per iteration.
 *
 * The benchmarks that compare with each other — every kernel and thread
 * count on one shape — are timed side by side: in rounds, each round one
 * repetition of every benchmark still sampling, in an order shuffled anew
 * every round (as Google Benchmark's random interleaving), so that a drift
 * of the machine hits all of them alike and no kernel always runs on the
 * caches another left. Repetitions adapt, as pyperf and nanobench do: a
 * benchmark keeps sampling until the 95% confidence interval of its median
 * lies within ±precision of it (and it has at least `repetitions`
 * samples), or until its timed batches have used max_time seconds, or
 * max_repetitions. A benchmark that stopped with its median known no better
 * than ±unstable_above is unstable.
 */
#ifndef AB_BENCH_H
#define AB_BENCH_H

#include <stdint.h>

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
    int repetitions;          /* at least this many (and exactly this many when precision is 0) */
    int max_repetitions;      /* at most this many (<= AB_MAX_REPS) */
    double precision;         /* target relative half-width of the median's 95% CI; 0: fixed */
    double unstable_above;    /* a half-width above this at the end is unstable (0: never) */
    double max_time;          /* seconds of timed repetitions per benchmark; 0: no cap */
    ab_counters *counters;    /* NULL: none */
    /* > 0: when the warm-up call takes longer than this many seconds, the
     * benchmark is not timed (ab_bench_prepare returns 1); keeps `--kernel
     * all` from spending minutes on the deliberately slow kernels (run
     * also skips, untried, a shape that grows one so skipped). */
    double max_call_time;
    /* > 0 (run --reference): every round first times two reference loops on
     * the calling thread, an FMA loop in registers (~1 ms) and a read of a
     * buffer of this many bytes, and each repetition keeps its round's two
     * times — the "calibrated units" a row's time can be divided by
     * (docs/verdicts.md says what they did to the spread). */
    size_t reference_bytes;
    /* The run's repetitions' lag-1 correlation (stats.h), pooled over the
     * groups timed before this one, each group's weight halved at every
     * later one; ab_bench_rounds adds each group's rows when it ends. A
     * group's intervals assume the correlation of these rows and its own
     * so far. NULL: its own only. */
    ab_lag1 *drift;
} ab_bench_opts;

typedef struct ab_result {
    char kernel[64];          /* the row's name, or "<row>@<build>" beside other builds */
    ab_shape shape;
    int threads;
    char run_name[256];       /* "<op>/<kernel>/<shape label>/threads:<n>" */
    long iterations;          /* per repetition */
    int reps;
    double real[AB_MAX_REPS]; /* seconds per iteration, wall clock */
    double cpu[AB_MAX_REPS];  /* CPU seconds per iteration: the process's, the caller's at 1 thread */
    int round[AB_MAX_REPS];   /* the round each repetition was timed in (pairs side by side) */
    /* Seconds of the reference loops timed in that round (ab_bench_opts'
     * reference_bytes); 0: not timed. */
    double ref_compute[AB_MAX_REPS], ref_read[AB_MAX_REPS];
    double timed;             /* seconds spent in timed repetitions */
    int n_events;             /* = ab_counters_count(counters) */
    double events[AB_MAX_EVENTS][AB_MAX_REPS];   /* per iteration; NaN if not counted */
    ab_stats real_stats, cpu_stats;
    double median_lo, median_hi;   /* the 95% confidence interval of the real-time median */
    double precision;         /* its relative half-width (ab_median_precision_correlated) */
    double rho;               /* the lag-1 correlation of repetitions that interval allowed for */
    double flops, bytes;      /* per iteration (ab_shape_flops / _bytes) */
    ab_isa isa;               /* of the kernel */
    double peak_gflops;       /* measured peak for isa and threads; 0 unknown */
    double peak_error;        /* that peak's relative error */
    double read_gbs;          /* measured read-only bandwidth at these threads; 0 unknown */
    double read_error;        /* its relative error */
    int unstable;             /* stopped with precision above unstable_above */
    double extra_rss;         /* bytes of resident memory one call adds (--memory); NaN: not measured */
    char chosen_by[16];       /* why this kernel ran: wisdom, features, named, ATTN_KERNEL */
    /* The build whose calls run it (library.h): NULL is this one; with
     * run --lib, kernel is "NAME@BUILD". */
    const ab_library *lib;
    char error[200];          /* non-empty: the benchmark did not run */
} ab_result;

/* The length of a result's kernel name before its "@BUILD" (run --lib),
 * the whole name when it has none. */
size_t ab_kernel_base_len(const char *kernel);

/* The name of a benchmark run (also used in JSON and CSV). */
void ab_run_name(const char *kernel, const ab_shape *s, int threads, char *buf, size_t len);

/* How long one call of a shape will take, in seconds, extrapolated by
 * work from the same call on a cut shape: one batch and one layer, its
 * sequence lengths cut so that it does at most a 32nd of the work and 1
 * GFLOP (two calls of it: a warm-up and a timed one). The cut shape's
 * inputs are made at the first estimate and kept for the next ones: made
 * anew for each, an encoder's (its weights, 7 M floats) took 70 ms, over
 * twice a BERT-base B 1 L 128 layer's call, for every candidate a tune
 * estimated and every row of a run. */
typedef struct ab_call_probe {
    ab_shape shape;     /* the shape estimated */
    ab_workload w;      /* the cut shape's inputs (made == 1) */
    float *out;
    double scale;       /* the shape's work over the cut shape's */
    int made;           /* 0 not yet, 1 made, -1 nothing to probe (small) or out of memory */
} ab_call_probe;
void ab_call_probe_init(ab_call_probe *p, const ab_shape *s);
/* The estimate for a call of p's shape on ctx; 0 when the shape is small
 * (up to 1e8 FLOPs) or the probe fails. */
double ab_call_probe_estimate(ab_call_probe *p, const ab_library *lib, attn_ctx *ctx);
void ab_call_probe_free(ab_call_probe *p);

/* 1 when a call estimated (not made) to take seconds is over limit
 * beyond the estimate's error: over twice it (a made call is judged
 * against the limit itself). */
int ab_estimate_over(double seconds, double limit);

/* 1 when a call estimated (not made) to take seconds is skipped under
 * o->max_call_time (ab_estimate_over it). */
int ab_bench_estimate_skips(const ab_bench_opts *o, double seconds);

/* Gets r ready to time: names it, counts its work, makes the warm-up call
 * and calibrates the iterations per repetition. r->kernel, r->shape,
 * r->threads, r->isa and the peak fields must be set by the caller. out
 * holds the workload's output. Returns 0; 1 when skipped by max_call_time
 * (the warm-up time in r->real[0], or for a call of much work, estimated
 * from a smaller shape before making it, on probe: r->shape's, shared by
 * the rows of that shape; NULL, one made for this row); or -1 with
 * r->error. */
int ab_bench_prepare(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r,
                     float *out, ab_call_probe *probe);
/* Times one more repetition of r (one pass per counter event set), tagged
 * with round. 0, or -1 with r->error. */
int ab_bench_repeat(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r,
                    float *out, int round);
/* The most repetitions a benchmark takes under o (max_repetitions, held to
 * AB_MAX_REPS). */
int ab_bench_rep_cap(const ab_bench_opts *o);
/* 1 when r has sampled enough: its precision reached (after the minimum
 * repetitions), or its time or repetition cap. rho: the lag-1 correlation
 * of repetitions its interval allows for (ab_lag1_rho). */
int ab_bench_done(const ab_result *r, const ab_bench_opts *o, double rho);
/* Summarizes the repetitions: statistics, the median's interval (allowing
 * for rho), unstable. */
void ab_bench_finish(ab_result *r, const ab_bench_opts *o, double rho);

/* One benchmark of a side-by-side group. */
typedef struct ab_bench_member {
    attn_ctx *ctx;
    ab_result *r;
    int live;                 /* still sampling (set by ab_bench_rounds) */
    /* The workload's weights packed for ctx (ab_workload_pack), or NULL;
     * ab_bench_rounds packs them again from each round's copy of the inputs. */
    attn_packed_weights *packed;
    /* When set, called before every AB_RECREATE_ROUNDS-th round to destroy
     * the member's context (and packed weights) and make them anew: two
     * contexts of one kernel have run 3-6% apart for a whole process (where
     * their workspace landed), which a comparison of builds must average
     * over. 0, or -1 with the member's error set. */
    int (*recreate)(struct ab_bench_member *m, void *arg);
    void *recreate_arg;
} ab_bench_member;
#define AB_RECREATE_ROUNDS 3

/* Called after every repetition of a round: (arg, member index, round). */
typedef void (*ab_bench_progress)(void *arg, int member, int round);

/* Times the prepared members (ab_bench_prepare returned 0 for each) on the
 * workload side by side: rounds in shuffled order (rng) until every member
 * is done, then finishes each. A member whose call fails keeps its error
 * and leaves the rounds. 0, or -1 when out of memory. */
int ab_bench_rounds(ab_bench_member *m, int n, const ab_workload *w, const ab_bench_opts *o,
                    uint64_t *rng, ab_bench_progress progress, void *progress_arg);

/* One benchmark alone: prepare, then rounds of one. Returns as
 * ab_bench_prepare (0, 1 skipped, -1 with r->error). */
int ab_bench_run(attn_ctx *ctx, const ab_workload *w, const ab_bench_opts *o, ab_result *r);

/* Derived figures of a time per iteration (seconds). */
double ab_result_gflops(const ab_result *r, double seconds);
double ab_result_pct_peak(const ab_result *r, double seconds);   /* NaN without a peak */
/* Bytes per second as a % of the read-only (DRAM) bandwidth, for a call
 * whose compulsory bytes of one pass (ab_shape_pass_bytes) are at least
 * twice what the caches its threads reach can hold (cache bytes:
 * ab_topology_cache_capacity); NaN otherwise, or without a bandwidth. */
double ab_result_pct_bandwidth(const ab_result *r, double seconds, size_t cache);
/* The relative error of that ceiling: the bandwidth's measured error plus
 * the most the caches can add. A pass of P bytes of which up to C stay
 * resident reads at least P - C from DRAM, so its GB/s can reach
 * P / (P - C) of the bandwidth: the error adds C / (P - C) (at most 1 under
 * the 2x rule; AMD's L3 kept enough of a 64 MiB stream to read at 137%).
 * NaN where there is no pct_read_bw. */
double ab_result_read_bw_error(const ab_result *r, size_t cache);

/* `attnbench run`'s defaults. Sampling aims at a median known to ±2% (the
 * 95% interval's relative half-width) and a benchmark still worse than ±5%
 * when it stops is unstable: on the shared 2-vCPU VMs, whose shared cache
 * alone varies by 5-10% between 5 ms passes when neighbours are busy, a
 * ±2% flag would mark most rows while ±5% still ranks and compares them.
 * Short repetitions make many samples in the time one long one would take,
 * and the rounds see the drift of the machine at a finer grain. */
#define AB_DEFAULT_PRECISION 0.02
#define AB_DEFAULT_UNSTABLE_ABOVE 0.05
#define AB_DEFAULT_REPETITIONS 7
#define AB_DEFAULT_MIN_TIME 0.05
#define AB_DEFAULT_MAX_TIME 2.0

#endif /* AB_BENCH_H */
