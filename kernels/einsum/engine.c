/*
 * engine.c — the einsum engine of the einsum-* kernels (see engine.h).
 */
#include <string.h>

#include "engine.h"

/* ---- Parsing ----------------------------------------------------------------- */

/* One operand's letters: a run of [a-z] ended by end (',' or '-' or '\0'). */
static ein_status parse_operand(const char **s, char end, char *letters, int *len)
{
    int n = 0;
    unsigned seen = 0;
    for (; **s && **s != end; (*s)++) {
        char c = **s;
        if (c == ',' || c == '-' || c == '>')
            return EIN_ERR_SYNTAX;
        if (c < 'a' || c > 'z')
            return EIN_ERR_LETTER;
        if (seen & (1u << (c - 'a')))
            return EIN_ERR_REPEAT;
        seen |= 1u << (c - 'a');
        if (n == EIN_MAX_INDICES)
            return EIN_ERR_TOO_MANY;
        letters[n++] = c;
    }
    if (**s != end)
        return EIN_ERR_SYNTAX;
    *len = n;
    return EIN_OK;
}

/* Position of c in letters[0..n), or -1. */
static int find(const char *letters, int n, char c)
{
    for (int i = 0; i < n; i++)
        if (letters[i] == c)
            return i;
    return -1;
}

ein_status ein_plan_init(ein_plan *p, const char *subscripts, const char *order,
                         const ein_view *a, const ein_view *b, const ein_view *out)
{
    if (!p || !subscripts || !order || !a || !b || !out)
        return EIN_ERR_NULL;
    char la[EIN_MAX_INDICES], lb[EIN_MAX_INDICES], lo[EIN_MAX_INDICES];
    int na, nb, no;
    const char *s = subscripts;
    ein_status st;
    if ((st = parse_operand(&s, ',', la, &na)) != EIN_OK)
        return st;
    s++;
    if ((st = parse_operand(&s, '-', lb, &nb)) != EIN_OK)
        return st;
    if (s[1] != '>')
        return EIN_ERR_SYNTAX;
    s += 2;
    if ((st = parse_operand(&s, '\0', lo, &no)) != EIN_OK)
        return st;

    /* The distinct indices are those of the inputs; the output's must be
     * among them (an index only the output has would be a broadcast). */
    char all[2 * EIN_MAX_INDICES];
    int n = 0;
    for (int i = 0; i < na; i++)
        all[n++] = la[i];
    for (int i = 0; i < nb; i++)
        if (find(all, n, lb[i]) < 0)
            all[n++] = lb[i];
    for (int i = 0; i < no; i++)
        if (find(all, n, lo[i]) < 0)
            return EIN_ERR_OUTPUT;
    if (n > EIN_MAX_INDICES)
        return EIN_ERR_TOO_MANY;

    /* The order: each index exactly once, nothing else. */
    size_t olen = strlen(order);
    if (olen != (size_t)n)
        return EIN_ERR_ORDER;
    for (int l = 0; l < n; l++) {
        if (find(all, n, order[l]) < 0 || find(order, l, order[l]) >= 0)
            return EIN_ERR_ORDER;
    }

    /* Extents: every operand that has an index must agree on its extent. */
    memset(p, 0, sizeof *p);
    p->n = n;
    memcpy(p->order, order, (size_t)n);
    p->order[n] = '\0';
    for (int l = 0; l < n; l++) {
        char c = order[l];
        int ia = find(la, na, c), ib = find(lb, nb, c), io = find(lo, no, c);
        const int pos[3] = { ia, ib, io };
        const ein_view *view[3] = { a, b, out };
        ptrdiff_t ext = -1;
        for (int k = 0; k < 3; k++) {
            if (pos[k] < 0)
                continue;                     /* this operand lacks the index */
            ptrdiff_t e = view[k]->shape[pos[k]];
            if (e < 0 || (ext >= 0 && e != ext))
                return EIN_ERR_EXTENT;
            ext = e;
        }
        p->extent[l] = ext;
        p->sa[l] = ia >= 0 ? a->stride[ia] : 0;
        p->sb[l] = ib >= 0 ? b->stride[ib] : 0;
        p->so[l] = io >= 0 ? out->stride[io] : 0;
        p->reduce[l] = io < 0;
        if (ext == 0)
            p->empty = 1;
    }

    /* The innermost loop's kernel. */
    p->inner = EIN_INNER_GENERIC;
    if (n > 0) {
        int l = n - 1;
        if (p->reduce[l] && p->sa[l] == 1 && p->sb[l] == 1) {
            p->inner = EIN_INNER_DOT;
        } else if (!p->reduce[l] && p->so[l] == 1) {
            if (p->sa[l] == 0 && p->sb[l] == 1) {
                p->inner = EIN_INNER_AXPY;
                p->axpy_x_is_b = 1;
            } else if (p->sb[l] == 0 && p->sa[l] == 1) {
                p->inner = EIN_INNER_AXPY;
                p->axpy_x_is_b = 0;
            }
        }
    }
    return EIN_OK;
}

/* ---- Innermost loops ----------------------------------------------------------- */

/* Σ a[j]·b[j] over j < n in sixteen lanes (four SSE or two AVX registers
 * once vectorized), lanes combined pairwise, then the tail: a fixed order
 * for a given n, whatever the thread count. The unroll pragmas make GCC
 * keep the lanes in registers at -O2 and vectorize them (SLP). */
#define EIN_LANES 16
static inline float dot_unit(const float *a, const float *b, ptrdiff_t n)
{
    float lane[EIN_LANES] = { 0 };
    ptrdiff_t j = 0;
    for (; j + EIN_LANES <= n; j += EIN_LANES) {
#pragma GCC unroll 16
        for (int u = 0; u < EIN_LANES; u++)
            lane[u] += a[j + u] * b[j + u];
    }
#pragma GCC unroll 16
    for (int u = 0; u < 8; u++)
        lane[u] += lane[u + 8];
#pragma GCC unroll 16
    for (int u = 0; u < 4; u++)
        lane[u] += lane[u + 4];
    float sum = (lane[0] + lane[2]) + (lane[1] + lane[3]);
    for (; j < n; j++)
        sum += a[j] * b[j];
    return sum;
}

/* o[j] += s·x[j]: no reduction, so the vector form is exact per element;
 * omp simd tells the compiler o and x do not overlap (engine.h's contract). */
static inline void axpy_unit(float *o, float s, const float *x, ptrdiff_t n)
{
#pragma omp simd
    for (ptrdiff_t j = 0; j < n; j++)
        o[j] += s * x[j];
}

/* Four axpys into the same o: o[j] += s[0]·x0[j], then s[1]·x1[j], ... —
 * per element the very operations of four axpy_unit calls in a row (so the
 * same bits), with o loaded and stored once instead of four times. */
static inline void axpy4_unit(float *o, const float *s, const float *x0, const float *x1,
                              const float *x2, const float *x3, ptrdiff_t n)
{
    const float s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3];
#pragma omp simd
    for (ptrdiff_t j = 0; j < n; j++) {
        float t = o[j];
        t += s0 * x0[j];
        t += s1 * x1[j];
        t += s2 * x2[j];
        t += s3 * x3[j];
        o[j] = t;
    }
}

/* The axpy leaf: m axpys of length n, o moving by mo, the scalar by ms and
 * the vector by mx. When level n-2 is a reduction index, o stays put
 * (mo == 0): then four steps are fused (unroll-and-jam), which keeps the
 * order of every element's sum. */
static void axpy_leaf(float *o, ptrdiff_t mo, float alpha, const float *s, ptrdiff_t ms,
                      const float *x, ptrdiff_t mx, ptrdiff_t m, ptrdiff_t n)
{
    ptrdiff_t i = 0;
    if (mo == 0) {
        for (; i + 4 <= m; i += 4) {
            const float c[4] = { alpha * s[i * ms], alpha * s[(i + 1) * ms],
                                 alpha * s[(i + 2) * ms], alpha * s[(i + 3) * ms] };
            axpy4_unit(o, c, x + i * mx, x + (i + 1) * mx, x + (i + 2) * mx, x + (i + 3) * mx, n);
        }
    }
    for (; i < m; i++)
        axpy_unit(o + i * mo, alpha * s[i * ms], x + i * mx, n);
}

/* The last two loop levels: level n-2 (when there is one) around the
 * specialised level n-1. */
static void leaf2(const ein_plan *p, int l, float alpha, const float *a, const float *b,
                  float *o)
{
    const int in = p->n - 1;
    ptrdiff_t n = p->extent[in], sa = p->sa[in], sb = p->sb[in], so = p->so[in];
    ptrdiff_t m = 1, ma = 0, mb = 0, mo = 0;
    if (l < in) {                                  /* l == in - 1 */
        m = p->extent[l];
        ma = p->sa[l];
        mb = p->sb[l];
        mo = p->so[l];
    }
    switch (p->inner) {
    case EIN_INNER_DOT:
        for (ptrdiff_t i = 0; i < m; i++)
            o[i * mo] += alpha * dot_unit(a + i * ma, b + i * mb, n);
        break;
    case EIN_INNER_AXPY:
        if (p->axpy_x_is_b)
            axpy_leaf(o, mo, alpha, a, ma, b, mb, m, n);
        else
            axpy_leaf(o, mo, alpha, b, mb, a, ma, m, n);
        break;
    default:
        if (p->reduce[in]) {
            for (ptrdiff_t i = 0; i < m; i++) {
                const float *ai = a + i * ma, *bi = b + i * mb;
                float acc = 0.0f;
                for (ptrdiff_t j = 0; j < n; j++)
                    acc += ai[j * sa] * bi[j * sb];
                o[i * mo] += alpha * acc;
            }
        } else {
            for (ptrdiff_t i = 0; i < m; i++) {
                const float *ai = a + i * ma, *bi = b + i * mb;
                float *oi = o + i * mo;
                for (ptrdiff_t j = 0; j < n; j++)
                    oi[j * so] += alpha * ai[j * sa] * bi[j * sb];
            }
        }
        break;
    }
}

/* Levels l .. n-1, serially. */
static void nest(const ein_plan *p, int l, float alpha, const float *a, const float *b, float *o)
{
    if (l >= p->n - 2) {
        leaf2(p, l, alpha, a, b, o);
        return;
    }
    for (ptrdiff_t i = 0; i < p->extent[l]; i++)
        nest(p, l + 1, alpha, a + i * p->sa[l], b + i * p->sb[l], o + i * p->so[l]);
}

/* ---- Threads ------------------------------------------------------------------ */

/* Levels [first, first+count) are the flattened parallel group: iteration it
 * (row-major over their extents) moves the pointers, then the rest runs. */
static void group_iteration(const ein_plan *p, int first, int count, ptrdiff_t it, float alpha,
                            const float *a, const float *b, float *o)
{
    for (int l = first + count - 1; l >= first; l--) {
        ptrdiff_t i = it % p->extent[l];
        it /= p->extent[l];
        a += i * p->sa[l];
        b += i * p->sb[l];
        o += i * p->so[l];
    }
    nest(p, first + count, alpha, a, b, o);
}

/* The reduction prefix [l, first) as an odometer run by every thread, with
 * the group shared out at each step. Called inside a parallel region. */
static void prefix(const ein_plan *p, int l, int first, int count, ptrdiff_t iters, float alpha,
                   const float *a, const float *b, float *o)
{
    if (l == first) {
        /* NOTE: schedule(static) without a chunk, same count at every step:
         * OpenMP then gives each thread the same iterations every time,
         * which nowait relies on (no element is touched by two threads). */
#pragma omp for schedule(static) nowait
        for (ptrdiff_t it = 0; it < iters; it++)
            group_iteration(p, first, count, it, alpha, a, b, o);
        return;
    }
    for (ptrdiff_t i = 0; i < p->extent[l]; i++)
        prefix(p, l + 1, first, count, iters, alpha, a + i * p->sa[l], b + i * p->sb[l],
               o + i * p->so[l]);
}

void ein_plan_run(const ein_plan *p, float alpha, const float *a, const float *b, float *out,
                  int n_threads)
{
    if (p->empty)
        return;
    if (p->n == 0) {                          /* scalar times scalar */
        out[0] += alpha * a[0] * b[0];
        return;
    }
    /* The parallel group: after the leading reduction loops, consecutive
     * output loops (never the innermost, which stays one vector loop) until
     * there are about eight iterations per thread. */
    int first = 0, count = 0;
    ptrdiff_t iters = 1;
    while (first < p->n && p->reduce[first])
        first++;
    if (n_threads > 1) {
        while (first + count < p->n - 1 && !p->reduce[first + count]
               && iters < 8 * (ptrdiff_t)n_threads) {
            iters *= p->extent[first + count];
            count++;
        }
    }
    if (count == 0 || iters < 2) {
        nest(p, 0, alpha, a, b, out);
        return;
    }
    int threads = iters < n_threads ? (int)iters : n_threads;
#pragma omp parallel num_threads(threads)
    prefix(p, 0, first, count, iters, alpha, a, b, out);
}

ein_status ein_contract(const char *subscripts, const char *order, float alpha,
                        const float *a, const ein_view *va, const float *b, const ein_view *vb,
                        float *out, const ein_view *vo, int n_threads)
{
    ein_plan p;
    ein_status st = ein_plan_init(&p, subscripts, order, va, vb, vo);
    if (st != EIN_OK)
        return st;
    if (!p.empty && (!a || !b || !out))
        return EIN_ERR_NULL;
    ein_plan_run(&p, alpha, a, b, out, n_threads);
    return EIN_OK;
}

const char *ein_strerror(ein_status s)
{
    switch (s) {
    case EIN_OK: return "ok";
    case EIN_ERR_NULL: return "a NULL spec, view or data pointer";
    case EIN_ERR_SYNTAX: return "subscripts are not of the form \"ab,cd->ef\"";
    case EIN_ERR_LETTER: return "an index is not a lowercase letter";
    case EIN_ERR_REPEAT: return "an index is repeated within one operand";
    case EIN_ERR_OUTPUT: return "an output index appears in neither input";
    case EIN_ERR_TOO_MANY: return "too many distinct indices";
    case EIN_ERR_ORDER: return "the loop order is not a permutation of the indices";
    case EIN_ERR_EXTENT: return "an extent is negative or differs between operands";
    }
    return "unknown einsum status";
}
