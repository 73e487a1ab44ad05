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
 * pct_peak, flops, bytes, arith_intensity and every counted event.
 */
#ifndef AB_REPORT_H
#define AB_REPORT_H

#include <stdio.h>

#include "bench.h"
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
    int repetitions;
} ab_run_context;

/* One row per result: kernel, op, shape, threads, median time, GFLOP/s,
 * % of peak, CV and a flag for unstable or failed benchmarks. */
void ab_report_table(FILE *out, const ab_result *r, int n);
void ab_report_json(FILE *out, const ab_run_context *c, const ab_result *r, int n);
void ab_report_csv(FILE *out, const ab_run_context *c, const ab_result *r, int n);

/* "812 ns", "3.41 us", "12.8 ms", "1.27 s" */
void ab_format_time(double seconds, char *buf, size_t len);

#endif /* AB_REPORT_H */
