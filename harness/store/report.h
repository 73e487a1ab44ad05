/*
 * report.h — benchmark results as a terminal table, Google Benchmark JSON,
 * and CSV.
 *
 * The JSON follows the Google Benchmark output schema so that tools which
 * read it (compare.py and friends) read ours: a "context" object and a
 * "benchmarks" array holding, per benchmark, one "iteration" entry per
 * repetition and "aggregate" entries (mean, median, stddev, cv, min), with
 * name, run_name, run_type, repetitions, repetition_index, threads,
 * iterations, real_time, cpu_time, time_unit ("ns") and counters: GFLOPS,
 * pct_peak, flops, bytes, arith_intensity, GBps, pct_read_bw, the ceiling
 * (peak_gflops, peak_error) and every counted event; a failed benchmark is
 * an entry with error_occurred, error_message and zero times, as Google
 * Benchmark writes one. A top-level "summary" array holds the answer
 * (summary.h), which Google Benchmark's tools ignore.
 */
#ifndef AB_REPORT_H
#define AB_REPORT_H

#include <stdio.h>

#include "bench.h"
#include "summary.h"
#include "counters.h"
#include "machine.h"
#include "peak.h"
#include "topology.h"

typedef struct ab_run_context {
    const ab_machine *machine;
    const ab_topology *topology;
    const ab_peaks *peaks;        /* NULL when not measured */
    const ab_counters *counters;  /* NULL when none asked */
    const char *executable;
    int threads;
    int pinned;                   /* threads bound to cores */
    double min_time;
    int repetitions, max_repetitions;
    double precision, max_time;   /* the adaptive sampling's target and cap (bench.h) */
    double unstable_above;        /* and the flag's threshold */
    uint64_t seed;                /* of the shuffled rounds */
    const ab_summary *summary;    /* the answer (summary.h), n_summary entries */
    int n_summary;
    const ab_build_pair *builds;  /* run --lib: other builds against this one, n_builds */
    int n_builds;
} ab_run_context;

/* One row per result: kernel, op, shape, threads, median time, GFLOP/s,
 * % of peak, CV and a flag for unstable or failed benchmarks; then, for a
 * row held to the read bandwidth (a pass that the caches of its threads
 * cannot hold: ab_result_pct_bandwidth, topo's caches; topo may be NULL),
 * its GB/s and their share of that bandwidth, with the share's error. */
void ab_report_table(FILE *out, const ab_result *r, int n, const ab_topology *topo);
/* After the table: per shape and thread count, the kernel to use, in words. */
void ab_report_answer(FILE *out, const ab_summary *s, int n);
/* run --lib: each kernel of another build against this build's, in words. */
void ab_report_builds(FILE *out, const ab_build_pair *b, int n, double alpha);
/* A note on the unstable rows (under o's settings), with what stopped
 * them, what to do about them and how busy the machine was (peak.h's
 * noise and cache_noise; peaks may be NULL); nothing when none is. */
void ab_report_unstable(FILE *out, const ab_result *r, int n, const ab_bench_opts *o,
                        const double *loadavg, const ab_peaks *peaks);
void ab_report_json(FILE *out, const ab_run_context *c, const ab_result *r, int n);
void ab_report_csv(FILE *out, const ab_run_context *c, const ab_result *r, int n);

/* "812 ns", "3.41 us", "12.8 ms", "1.27 s" */
void ab_format_time(double seconds, char *buf, size_t len);

#endif /* AB_REPORT_H */
