/*
 * engine.h — a small einsum engine: one two-input contraction, executed as
 * nested loops in an explicit order.
 *
 *   out[o] += alpha · Σ_{r} a[ia] · b[ib]
 *
 * The contraction is named by subscripts such as "nqhd,nkhd->nhqk": one
 * lowercase letter per axis of each operand; an index that the output lacks
 * is summed over (a reduction index). The caller also names the loop order,
 * a permutation of every distinct index (e.g. "nhqkd": d innermost), and
 * gives each operand as a base pointer plus a view: the extent and the stride
 * (in floats, any sign) of each of its axes, in the order of its subscript
 * letters. Any layout — contiguous, transposed, the [B][L][H·Dh] projections
 * seen as [B][L][H][Dh] — is therefore just strides: the engine never copies.
 *
 * The output is accumulated into: the caller zeroes or pre-fills it. It must
 * not overlap either input (the inputs may overlap each other).
 *
 * Execution. The loops run in the given order. The innermost loop is
 * specialised so that the compiler vectorizes it:
 *   - dot:  the innermost index is a reduction index and both inputs have
 *           unit stride along it: a contiguous dot product, summed in
 *           sixteen register lanes, then added to the output element once;
 *   - axpy: the innermost index is an output index with unit output stride,
 *           one input has unit stride along it and the other does not depend
 *           on it: out[j] += (alpha·s)·x[j]; when the loop around it is a
 *           reduction index (the same output row at every step), four
 *           steps are fused so the row is loaded and stored once per four
 *           (unroll-and-jam; each element sees the same operations);
 *   - generic: anything else, a scalar strided loop (reductions are still
 *           summed in a local first).
 * Threads (OpenMP): the loops before the first output index of the order
 * (reduction indices, if the order starts with any) are run by every thread;
 * the run of output-index loops that follows is flattened and shared out by
 * a static schedule, taking as many of them as needed for about eight
 * iterations per thread. A reduction index is never split between threads,
 * and a static schedule gives a thread the same share at every step of the
 * outer reduction loops, so each output element is reduced by one thread, in
 * the order of the loops: results are bitwise identical for any thread count.
 *
 * Errors. The engine validates what it is given (letters, repeats, output
 * indices, the order, extents that must agree) and returns an ein_status;
 * it never prints or aborts. The kernels call it with fixed, valid specs.
 */
#ifndef ATTN_EINSUM_ENGINE_H
#define ATTN_EINSUM_ENGINE_H

#include <stddef.h>

/* At most this many distinct indices in one contraction. */
#define EIN_MAX_INDICES 8

typedef enum ein_status {
    EIN_OK = 0,
    EIN_ERR_NULL,       /* a NULL spec string, view or data pointer */
    EIN_ERR_SYNTAX,     /* not "<a>,<b>-><out>" */
    EIN_ERR_LETTER,     /* an index that is not a lowercase letter a-z */
    EIN_ERR_REPEAT,     /* an index repeated within one operand (no diagonals) */
    EIN_ERR_OUTPUT,     /* an output index that neither input has */
    EIN_ERR_TOO_MANY,   /* more than EIN_MAX_INDICES distinct indices */
    EIN_ERR_ORDER,      /* the loop order is not a permutation of the indices */
    EIN_ERR_EXTENT      /* a negative extent, or one index with two extents */
} ein_status;

/* Extent and stride (in floats) of each axis of an operand, in the order of
 * the operand's subscript letters. Entries past its last letter are unused. */
typedef struct ein_view {
    ptrdiff_t shape[EIN_MAX_INDICES];
    ptrdiff_t stride[EIN_MAX_INDICES];
} ein_view;

/* How the innermost loop runs (for tests and for reports). */
typedef enum ein_inner {
    EIN_INNER_DOT,
    EIN_INNER_AXPY,
    EIN_INNER_GENERIC
} ein_inner;

/* A validated contraction: per loop level, in the order of execution, its
 * extent and the stride of each operand along it (0 when the operand does
 * not have the index). Plain data: build once, run many times on different
 * base pointers (e.g. one (b, h) block after another). */
typedef struct ein_plan {
    int n;                                  /* loop levels = distinct indices */
    char order[EIN_MAX_INDICES + 1];
    ptrdiff_t extent[EIN_MAX_INDICES];
    ptrdiff_t sa[EIN_MAX_INDICES], sb[EIN_MAX_INDICES], so[EIN_MAX_INDICES];
    unsigned char reduce[EIN_MAX_INDICES];  /* 1: absent from the output */
    ein_inner inner;
    int axpy_x_is_b;                        /* axpy: 1 when b is the vector */
    int empty;                              /* some extent is 0: nothing to add */
} ein_plan;

/* Parses and checks subscripts and order against the three views. */
ein_status ein_plan_init(ein_plan *p, const char *subscripts, const char *order,
                         const ein_view *a, const ein_view *b, const ein_view *out);

/* out += alpha · contraction(a, b) with up to n_threads OpenMP threads. */
void ein_plan_run(const ein_plan *p, float alpha, const float *a, const float *b, float *out,
                  int n_threads);

/* ein_plan_init then ein_plan_run; nothing is written unless EIN_OK. */
ein_status ein_contract(const char *subscripts, const char *order, float alpha,
                        const float *a, const ein_view *va, const float *b, const ein_view *vb,
                        float *out, const ein_view *vo, int n_threads);

/* A short English text for every value, including non-statuses. */
const char *ein_strerror(ein_status s);

#endif /* ATTN_EINSUM_ENGINE_H */
