/*
 * explain.h — `attnbench explain`: the parallel regions of one call of a
 * shape, as a kernel runs them with N threads (any N), from the kernel's
 * own partition code: the call runs as a dry run (split.h), in which every
 * parallel region records each thread's units of work and does none; or,
 * measured, runs for real and records when each region began.
 */
#ifndef AB_EXPLAIN_H
#define AB_EXPLAIN_H

#include <stddef.h>

#include "internal.h"
#include "library.h"
#include "ops.h"

/* The regions of one call of s on kernel (a row name or "auto"/"auto-bf16"; NULL:
 * "auto") at n_threads with the n_ps parameter settings ps (`--param`;
 * each must be one of the kernel's), into trace (emptied first): a dry
 * run, or with times the measured calls of ab_explain_measure; the row
 * that ran in kernel_out. Returns 0, or -1 with a reason in err (a kernel
 * that does not describe its split, an unknown one or parameter, a value
 * out of range, out of memory). */
struct ab_explain_times;
int ab_explain_shape(const ab_shape *s, const char *kernel, int n_threads,
                     const ab_param_setting *ps, int n_ps, attn_trace *trace,
                     struct ab_explain_times *times, char *kernel_out, size_t kernel_len,
                     char *err, size_t err_len);
/* The same (a dry run) on inputs already made (ab_workload_init): several
 * kernels, thread counts or parameter settings on one shape make its
 * inputs once. */
int ab_explain_workload(const struct ab_workload *w, const char *kernel, int n_threads,
                        const ab_param_setting *ps, int n_ps, attn_trace *trace,
                        char *kernel_out, size_t kernel_len, char *err, size_t err_len);

/* What ab_explain_measure gives: the medians over reps calls of the call,
 * of the time before its first region, and of each region's time (from
 * its offer, right before its fork, to the next region's offer or the
 * call's end: the serial work after a region counts in it; a phase is
 * inside its region and gets 0). */
typedef struct ab_explain_times {
    int reps;              /* set by the caller: calls timed after a warm-up */
    /* Set by the caller: the threads go on its first n_threads cores, the
     * calling thread on core 0, as `run` places them (loaded once, before
     * any pinning narrows what a load sees); NULL: not pinned. */
    const struct ab_topology *topo;
    double call_s, before_s;
    double *region_s;      /* trace->n of them; the caller frees */
} ab_explain_times;

/* The call itself, on a team of n_threads (at most times->topo's cores:
 * more would time the OS's sharing), times->reps times
 * after a warm-up: its regions in trace (the last call's: every call must
 * run the same ones) and their times in *times. 0, or -1 with err. */
int ab_explain_measure(const struct ab_workload *w, const char *kernel, int n_threads,
                       attn_trace *trace, ab_explain_times *times, char *kernel_out,
                       size_t kernel_len, char *err, size_t err_len);

/* The worst imbalance among the regions with at least as many units as
 * threads (those with fewer leave threads idle whatever the split), and how
 * many such regions there are; 0 when none. */
double ab_explain_worst(const attn_trace *trace, int *n_counted);

#endif /* AB_EXPLAIN_H */
