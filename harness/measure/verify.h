/*
 * verify.h — api.md §4's correctness bound, in one place for the tests,
 * `attnbench check` and the tuner.
 *
 * A kernel's output y passes against the oracle's y_ref when
 *   max|y − y_ref| ≤ 1e-4 · max(1, max|y_ref|)      (MHA, encoder layer)
 *   max|y − y_ref| ≤ 2e-5 · max(1, max|V|)          (SDPA)
 * A NaN anywhere fails. A kernel whose products run in bf16 (its math,
 * api.md §9.3) is held to
 *   max|y − y_ref| ≤ 3e-2 · max(1, max|y_ref|)      (every op)
 */
#ifndef AB_VERIFY_H
#define AB_VERIFY_H

#include <stddef.h>

#include "ops.h"

double ab_tolerance(ab_op op, double max_abs_ref, double max_abs_v);

typedef struct ab_verdict {
    double max_err;   /* +inf when a NaN or inf appears where the reference is finite */
    double tol;
    int ok;
} ab_verdict;

/* Compares n outputs against the reference (fp32 from the oracle). */
ab_verdict ab_verify(ab_op op, const float *y, const float *ref, size_t n, double max_abs_v);

/* The bound of the bf16 rows, relative to the output's scale. */
#define AB_BF16_BOUND 3e-2

/* ab_verify for kernel's output on shape s: its math's bound (the bf16 one
 * for a bf16 row, else ab_verify's); a decoder layer or a generation whose
 * cache stores another type than fp32 gets a quarter of that type's step
 * (relative to max(1, max|y_ref|)) on top: each kernel stores its own
 * projections, and an ulp between them and the oracle's can round a stored
 * value the other way. */
ab_verdict ab_verify_kernel(const char *kernel, const ab_shape *s, const float *y,
                            const float *ref, size_t n, double max_abs_v);

#endif /* AB_VERIFY_H */
