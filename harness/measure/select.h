/*
 * select.h — which kernels a command runs, and why a kernel cannot run.
 */
#ifndef AB_SELECT_H
#define AB_SELECT_H

#include <stddef.h>

#include "internal.h"

/* Why k cannot run here, e.g. "needs avx512f, which this CPU lacks" or
 * "needs avx2, which the CPU has but the OS does not enable"; "" when it can. */
void ab_kernel_why_not(const attn_kernel *k, char *buf, size_t len);

/* Resolves the kernels to run from --kernel (spec; NULL when not given) and
 * the ATTN_KERNEL environment variable (env; NULL or "" when unset):
 *   spec "all"         every kernel that runs here
 *   spec "auto"        the kernel attn_ctx_create would pick
 *   spec NAME[,NAME]   those kernels
 *   spec NULL          the env kernel when set, else every kernel that runs here
 * A named kernel (from spec or env) that is unknown or cannot run here is an
 * error naming what is missing, never skipped. Returns how many kernels were
 * put in out (up to max), or -1 with a one-line message in err. */
int ab_select_kernels(const char *spec, const char *env, const attn_kernel **out, int max,
                      char *err, size_t err_len);

#endif /* AB_SELECT_H */
