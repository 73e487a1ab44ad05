/*
 * peak.h — the machine's measured limits: FMA peak FLOP/s per ISA and thread
 * count, and memory bandwidth (STREAM triad), cached per machine.
 *
 * % of peak in benchmark results is against these measured figures, not
 * datasheet numbers: a VM's clock and a turbo budget are what they are.
 */
#ifndef AB_PEAK_H
#define AB_PEAK_H

#include <stddef.h>

#include "machine.h"
#include "topology.h"

/* The instruction sets a kernel can be built for. "baseline" is what the
 * default build targets: SSE2 on x86-64 (no FMA: multiply and add), NEON on
 * AArch64. */
typedef enum ab_isa { AB_ISA_BASELINE, AB_ISA_AVX2, AB_ISA_AVX512, AB_ISA_COUNT } ab_isa;

const char *ab_isa_name(ab_isa isa);
/* 1 when this build has the ISA's micro-benchmark and the machine can run it. */
int ab_isa_available(ab_isa isa);
/* The widest ISA among ATTN_CPU_* requirement bits (a kernel's ISA). */
ab_isa ab_isa_of_requirements(unsigned requires);

#define AB_PEAK_MAX_THREADS 64

typedef struct ab_peaks {
    int max_threads;                                     /* measured for 1..max_threads */
    double gflops[AB_ISA_COUNT][AB_PEAK_MAX_THREADS + 1]; /* 0 = not available */
    double triad_gbs[AB_PEAK_MAX_THREADS + 1];           /* GB/s (1e9 bytes) */
    int from_cache;                                      /* 1: read from cache_path */
    char cache_path[512];                                /* "" when not cached */
    char measured_at[32];                                /* UTC, ISO 8601 */
} ab_peaks;

/* The peaks for this machine: from the cache when a valid entry exists for
 * the same machine and build (unless refresh), else measured (a few seconds)
 * and stored. note gets a line about what happened to the cache (a damaged
 * or mismatched file is reported and replaced, never trusted); "" when
 * nothing is worth saying. Returns 0, or -1 when measuring failed. */
int ab_peaks_get(ab_peaks *p, const ab_topology *t, const ab_machine *m, int refresh,
                 char *note, size_t note_len);

/* GFLOP/s peak for isa with n threads (the nearest measured count), 0 if none. */
double ab_peak_gflops(const ab_peaks *p, ab_isa isa, int n_threads);

/* ---- Micro-benchmarks (exposed for tests) --------------------------------------- */

/* Runs the ISA's FMA loop for iters iterations on the calling thread and
 * returns the FLOPs it performed (0 if the ISA is not available). */
double ab_fma_loop(ab_isa isa, long iters);
/* Measures GFLOP/s of isa with n threads pinned to the first n cores. */
double ab_measure_fma(ab_isa isa, const ab_topology *t, int n_threads, double seconds);
/* Measures triad bandwidth in GB/s with n threads over arrays of bytes each. */
double ab_measure_triad(const ab_topology *t, int n_threads, size_t bytes);

#endif /* AB_PEAK_H */
