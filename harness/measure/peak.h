/*
 * peak.h — the machine's measured limits: FMA peak FLOP/s per ISA and thread
 * count, memory bandwidth (STREAM triad, and read-only) and the core clock,
 * cached per machine (store/peak_file.h) and checked at the start of each run.
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
 * AArch64. AB_ISA_AVX512_BF16 is the peak of bf16 products (VDPBF16PS:
 * two multiply-adds per fp32 lane), for the rows whose math is bf16. */
typedef enum ab_isa {
    AB_ISA_BASELINE, AB_ISA_AVX2, AB_ISA_AVX512, AB_ISA_AVX512_BF16, AB_ISA_COUNT
} ab_isa;

const char *ab_isa_name(ab_isa isa);
/* 1 when this build has the ISA's micro-benchmark and the machine can run it. */
int ab_isa_available(ab_isa isa);
/* The widest fp32 ISA this machine runs (its peak is the one most kernels
 * use; run --reference's FMA loop). */
ab_isa ab_widest_isa(void);
/* The widest ISA among ATTN_CPU_* requirement bits (a kernel's ISA). */
ab_isa ab_isa_of_requirements(unsigned requires);
/* The ISA whose peak kernel k is held to: its requirements', or, for a
 * kernel that dispatches itself (a library), the widest this machine runs;
 * AB_ISA_COUNT (no peak: % of peak "-") for a bf16 row whose bf16 units no
 * peak here measures (onednn-bf16 on a CPU with bf16 units, neon-bf16). */
struct attn_kernel;
ab_isa ab_isa_of_kernel(const struct attn_kernel *k);

/* The most cores the peaks are measured on; past it, a count takes the
 * figures of this one. */
#define AB_PEAK_MAX_THREADS 256
/* The most thread counts measured (ab_peak_ladder's, up to 256 cores). */
#define AB_PEAK_MAX_COUNTS 24

/* The thread counts the peaks are measured at on `cores` cores (at most
 * AB_PEAK_MAX_THREADS): 1, 2, 3, 4, then counts about √2 apart (6, 8, 12,
 * 16, 24, 32, ...) below cores, then cores itself; into counts (room for
 * AB_PEAK_MAX_COUNTS), ascending. Returns how many. Measuring every count
 * took ~100 s on 16 cores and would take the better part of an hour on
 * 128; a count between two of these takes their linear interpolation. */
int ab_peak_ladder(int cores, int *counts);

typedef struct ab_peaks {
    /* The counts measured are ab_peak_ladder(max_threads)'s (or, from a
     * cache written before the ladder, every count): their figures are
     * > 0, the others 0. Use the ab_peak_* functions, which interpolate. */
    int max_threads;
    double gflops[AB_ISA_COUNT][AB_PEAK_MAX_THREADS + 1]; /* 0 = not available */
    /* The FMA peak's own error, relative: how far the best pass stood above
     * the next best (at least 0.5%, the passes' timing resolution). A
     * figure within this of 100% of peak is at the peak, not above it. */
    double gflops_err[AB_ISA_COUNT][AB_PEAK_MAX_THREADS + 1];
    double triad_gbs[AB_PEAK_MAX_THREADS + 1];           /* GB/s (1e9 bytes) */
    /* Read-only bandwidth: a sum over an array far larger than the last-level
     * cache, the ceiling of what only reads (decoding reads its KV cache). */
    double read_gbs[AB_PEAK_MAX_THREADS + 1];
    double read_err[AB_PEAK_MAX_THREADS + 1];            /* its relative error, as gflops_err */
    double clock_mhz;         /* measured core clock (a chain of dependent adds); 0 unknown */
    /* Under what load the figures were measured: the 1-minute load average
     * before, and the fraction of CPU time the hypervisor stole during the
     * measurement (-1 unknown). A peak measured under load is low, which
     * inflates every % of peak; the start-of-run check catches that. */
    double load_avg, steal;
    int from_cache;                                      /* 1: read from cache_path */
    char cache_path[512];                                /* "" when not cached */
    char measured_at[32];                                /* UTC, ISO 8601 */
    /* The start-of-run check of cached figures (ab_peaks_check):
     * the widest ISA's FMA rate now over the cached one, at 1 thread and at
     * max_threads; 0 when not checked. */
    double check_ratio[2];
    /* And how steady the machine runs now: over 24 passes of 5 ms of that
     * FMA loop on one core, (90th percentile − median) / median. A loop that
     * touches no memory varies only with what else shares the core (another
     * VM on its SMT sibling, the host): seen here 1-2% on a quiet machine,
     * 29% on a busy one. 0 when not checked. cache_noise: the same for
     * reading a buffer of half the last-level cache, which neighbours
     * sharing that cache disturb while the FMA loop runs undisturbed. */
    double noise, cache_noise;
} ab_peaks;

/* The micro-benchmarks' version, part of the key the figures are cached
 * under (store/peak_file.h): bump it when one changes, so that figures an
 * earlier build measured are measured again. */
#define AB_PEAK_BENCH_VERSION 5

/* Measures every figure of p (seconds; ~50 s on 16 cores): the FMA peak of
 * each ISA at the ladder's thread counts, the triad and read bandwidths, the core clock,
 * and the load and steal they were measured under. */
void ab_peaks_measure(ab_peaks *p, const ab_topology *t, const ab_machine *m);

/* The cheap check of figures measured earlier (~0.2 s): the widest ISA's
 * FMA rate now, at 1 thread and at max_threads, over p's, and the 1-thread
 * read bandwidth over p's; sets p's check_ratio, noise and cache_noise.
 * Returns 1 when either ran faster than p allows by more than its error (at
 * least 2%): p was measured on a loaded machine. note then gets a line
 * saying so, or, when the machine runs well below p now, one saying it is
 * loaded; otherwise it is left as it was. */
int ab_peaks_check(ab_peaks *p, const ab_topology *t, char *note, size_t note_len);

/* Whether p has figures measured at n threads. */
int ab_peak_measured(const ab_peaks *p, int n_threads);
/* GFLOP/s peak for isa with n threads, 0 if none: the figure measured at
 * n, else the linear interpolation between the measured counts either side
 * of n (beyond max_threads: max_threads'). The other figures alike. */
double ab_peak_gflops(const ab_peaks *p, ab_isa isa, int n_threads);
/* Its relative error (gflops_err), 0 if none: between two measured counts,
 * the larger of theirs. */
double ab_peak_error(const ab_peaks *p, ab_isa isa, int n_threads);
/* Read-only and triad bandwidth, GB/s, at n threads (the nearest measured
 * count), and the read bandwidth's relative error. */
double ab_peak_read_gbs(const ab_peaks *p, int n_threads);
double ab_peak_read_error(const ab_peaks *p, int n_threads);
double ab_peak_triad_gbs(const ab_peaks *p, int n_threads);

/* ---- Micro-benchmarks (exposed for tests) --------------------------------------- */

/* Runs the ISA's FMA loop for iters iterations on the calling thread and
 * returns the FLOPs it performed (0 if the ISA is not available). */
double ab_fma_loop(ab_isa isa, long iters);
/* Measures GFLOP/s of isa with n threads pinned to the first n cores, best
 * of passes of about `seconds` each; *rel_err (may be NULL) gets the
 * relative gap between the best pass and the next. */
double ab_measure_fma(ab_isa isa, const ab_topology *t, int n_threads, double seconds, int passes,
                      double *rel_err);
/* Measures triad bandwidth in GB/s with n threads over arrays of bytes each. */
double ab_measure_triad(const ab_topology *t, int n_threads, size_t bytes);
/* Measures read-only bandwidth in GB/s with n threads summing an array of
 * bytes; *rel_err (may be NULL) as ab_measure_fma's. */
double ab_measure_read(const ab_topology *t, int n_threads, size_t bytes, double *rel_err);
/* The sum of x[0..n), read with the widest vector loads this CPU runs. */
double ab_read_sum(const float *x, size_t n);
/* The core clock in MHz from a chain of dependent integer adds (one cycle
 * each on every x86-64 and AArch64 core); 0 where that does not hold. */
double ab_measure_clock_mhz(void);

#endif /* AB_PEAK_H */
