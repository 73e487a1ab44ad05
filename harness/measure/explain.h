/*
 * explain.h — `attnbench explain`: the parallel regions of one call of a
 * shape, as a kernel runs them with N threads (any N), from the kernel's
 * own partition code: the call runs as a dry run (split.h), in which every
 * parallel region records each thread's units of work and does none.
 */
#ifndef AB_EXPLAIN_H
#define AB_EXPLAIN_H

#include <stddef.h>

#include "internal.h"
#include "ops.h"

/* The regions of one call of s on kernel (a row name or "auto"/"auto-bf16"; NULL:
 * "auto") at n_threads, into trace (emptied first); the row that ran in
 * kernel_out. Returns 0, or -1 with a reason in err (a kernel that does not
 * describe its split, an unknown one, out of memory). */
int ab_explain_shape(const ab_shape *s, const char *kernel, int n_threads, attn_trace *trace,
                     char *kernel_out, size_t kernel_len, char *err, size_t err_len);
/* The same on inputs already made (ab_workload_init): several kernels and
 * thread counts on one shape make its inputs once. */
int ab_explain_workload(const struct ab_workload *w, const char *kernel, int n_threads,
                        attn_trace *trace, char *kernel_out, size_t kernel_len, char *err,
                        size_t err_len);

/* The worst imbalance among the regions with at least as many units as
 * threads (those with fewer leave threads idle whatever the split), and how
 * many such regions there are; 0 when none. */
double ab_explain_worst(const attn_trace *trace, int *n_counted);

#endif /* AB_EXPLAIN_H */
