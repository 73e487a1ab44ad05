/*
 * suites.h — the named suites of shapes, and each kernel's edge shapes.
 * What a shape is (its op, keys, text, FLOPs and bytes) is ops.h's.
 */
#ifndef AB_SUITES_H
#define AB_SUITES_H

#include <stddef.h>

#include "attn.h"
#include "ops.h"

/* ---- Suites ---------------------------------------------------------------- */

typedef struct ab_suite {
    const char *name;
    const char *description;
    const ab_shape *shapes;
    int n_shapes;
    /* `attnbench run`'s --min-time and --max-time for this suite (0: the
     * defaults): a suite of tiny shapes meant to take seconds samples less. */
    double min_time, max_time;
} ab_suite;

const ab_suite *ab_suite_find(const char *name);
int ab_suite_count(void);
const ab_suite *ab_suite_get(int i);
/* What a command is to run (run, tune): the shapes of shape_text (';'
 * separates several; op the default op of each) or of the suite named
 * (NULL: "default"; both given is an error), of op only when filter_op,
 * into out; more than max is an error, never a list cut short. The suite's
 * own min_time / max_time (0: none) go to *suite_times when not NULL. The
 * count, or -1 with a reason in err (an unknown suite's lists the
 * suites). */
int ab_shapes_select(const char *suite_name, const char *shape_text, ab_op op, int filter_op,
                     ab_shape *out, int max, double suite_times[2], char *err, size_t len);

/* The shapes of `attnbench check` (edge shapes, every mask kind); each
 * kernel's own tile edges come from ab_edge_shapes. */
const ab_suite *ab_check_suite(void);

/* ---- Edge shapes of one kernel -------------------------------------------------- */

struct attn_kernel;

/* The most shapes ab_edge_shapes makes for a kernel, and the FLOPs of the
 * largest (ab_shape_flops): each runs in milliseconds on the naive oracle. */
#define AB_MAX_EDGE_SHAPES 128
#define AB_EDGE_FLOPS 5e7

/* The shapes at the edges of kernel k's own tiles, from its row (its
 * geometry) and its params (values in the order of k->params; NULL: the
 * defaults of this machine), as XNNPACK re-expands each micro-kernel's tile
 * into its tests: GEMM rows and widths at mr and nr − 1, itself and + 1,
 * depths around kc, rows around mc, widths around nc, rows around the
 * skinny path's; attention's query rows around its micro-tile and bq, keys
 * around its key micro-tile, kc, bk and stream_from, head dims around the
 * tile, the vector and kc; query rows per key/value head at decode_rows and
 * decode_rows + 1 (own, grouped and multi-query heads) and keys around the
 * decode path's split. Masks, activations and norms vary from shape to
 * shape; shapes over AB_EDGE_FLOPS are left out. Writes at most max shapes
 * to out and returns how many (0 for a kernel without geometry: naive). */
int ab_edge_shapes(const struct attn_kernel *k, const int *params, ab_shape *out, int max);


#endif /* AB_SUITES_H */
