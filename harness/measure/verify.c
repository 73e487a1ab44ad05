/* verify.c — api.md §4's correctness bound. */
#include <math.h>

#include "verify.h"

double ab_tolerance(ab_op op, double max_abs_ref, double max_abs_v)
{
    const ab_op_row *row = ab_op_row_of(op);
    if (row && row->tolerance == AB_TOL_VALUES)
        return 2e-5 * fmax(1.0, max_abs_v);
    return 1e-4 * fmax(1.0, max_abs_ref);
}

/* max|y − ref| and max|ref| (a NaN or infinity in y: +inf). */
static double max_err_of(const float *y, const float *ref, size_t n, double *max_ref_out)
{
    double err = 0.0, max_ref = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - (double)ref[i]);
        if (!(d <= err))          /* also catches NaN */
            err = isnan(d) ? INFINITY : d;
        if (fabs((double)ref[i]) > max_ref)
            max_ref = fabs((double)ref[i]);
    }
    *max_ref_out = max_ref;
    return err;
}

ab_verdict ab_verify(ab_op op, const float *y, const float *ref, size_t n, double max_abs_v)
{
    double max_ref, err = max_err_of(y, ref, n, &max_ref);
    ab_verdict v = { err, ab_tolerance(op, max_ref, max_abs_v), 0 };
    v.ok = v.max_err <= v.tol;
    return v;
}

ab_verdict ab_verify_kernel(const char *kernel, ab_op op, const float *y, const float *ref,
                            size_t n, double max_abs_v)
{
    if (attn_kernel_math(kernel) != ATTN_BF16)
        return ab_verify(op, y, ref, n, max_abs_v);
    double max_ref, err = max_err_of(y, ref, n, &max_ref);
    ab_verdict v = { err, AB_BF16_BOUND * fmax(1.0, max_ref), 0 };
    v.ok = v.max_err <= v.tol;
    return v;
}
