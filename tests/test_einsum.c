/*
 * test_einsum.c — the einsum engine of the einsum-* kernels (kernels/einsum/
 * engine.c) on its own: each contraction the kernels use, plus transposed
 * and padded layouts given only by strides, against plain double-precision
 * loops, for every permutation of the loop order, odd extents (1, 3, 7, 17,
 * and widths past the 16-lane dot loop), with 1, 2 and 3 threads — which must
 * agree bitwise. Then the edges: empty extents, scalars, and specs the
 * engine must refuse with an error code, writing nothing. Last, the einsum
 * kernels' SDPA on shapes long enough that it is cut into several query
 * chunks (which the check suite's short shapes never are).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "einsum/engine.h"
#include "kernel.h"
#include "verify.h"
#include "workload.h"

/* ---- Operands laid out by a storage order ------------------------------------------ */

/* Extent of each index letter. */
typedef struct extents { ptrdiff_t of[26]; } extents;

/* The view of an operand with subscript letters `letters`, stored densely in
 * the order `storage` (a permutation of letters, outermost first), with pad
 * extra floats after each run of the innermost storage axis (a row stride
 * larger than the row, like ldx > k). Returns the floats to allocate. */
static size_t lay_out(const char *letters, const char *storage, const extents *e, ptrdiff_t pad,
                      ein_view *v)
{
    memset(v, 0, sizeof *v);
    ptrdiff_t stride = 1;
    size_t total = 1;
    int n = (int)strlen(storage);
    for (int s = n - 1; s >= 0; s--) {
        int pos = (int)(strchr(letters, storage[s]) - letters);
        ptrdiff_t ext = e->of[storage[s] - 'a'];
        v->shape[pos] = ext;
        v->stride[pos] = stride;
        stride *= ext;
        if (s == n - 1)
            stride += pad;
        total = (size_t)stride;
    }
    if (n > 0 && total == 0)
        total = 1;
    return n == 0 ? 1 : total;
}

/* Offset of element idx[] (indexed by letter) in an operand with subscript
 * letters `letters` and view v. */
static ptrdiff_t offset_of(const char *letters, const ein_view *v, const ptrdiff_t *idx)
{
    ptrdiff_t off = 0;
    for (int i = 0; letters[i]; i++)
        off += idx[letters[i] - 'a'] * v->stride[i];
    return off;
}

/* ---- Walking the indices ------------------------------------------------------------ */

/* Steps the indices named by letters to their next combination, the last
 * letter fastest, as loops nested in that order would. After the last one
 * it returns 0, with those indices back at 0 for the next walk. */
static int next_index(ptrdiff_t *idx, const char *letters, const extents *e)
{
    for (int i = (int)strlen(letters) - 1; i >= 0; i--) {
        ptrdiff_t *x = &idx[letters[i] - 'a'];
        if (++*x < e->of[letters[i] - 'a'])
            return 1;
        *x = 0;
    }
    return 0;
}

/* Whether the indices named by letters have any combination (none when an
 * extent is 0; no letters, a scalar, have one). */
static int has_elements(const char *letters, const extents *e)
{
    for (int i = 0; letters[i]; i++)
        if (e->of[letters[i] - 'a'] == 0)
            return 0;
    return 1;
}

/* ---- Orders ------------------------------------------------------------------------ */

/* Next permutation of s in lexicographic order; 0 after the last. */
static int next_permutation(char *s)
{
    int n = (int)strlen(s), i = n - 2;
    while (i >= 0 && s[i] >= s[i + 1])
        i--;
    if (i < 0)
        return 0;
    int j = n - 1;
    while (s[j] <= s[i])
        j--;
    char t = s[i];
    s[i] = s[j];
    s[j] = t;
    for (int l = i + 1, r = n - 1; l < r; l++, r--) {
        t = s[l];
        s[l] = s[r];
        s[r] = t;
    }
    return 1;
}

static int cmp_char(const void *x, const void *y)
{
    return *(const char *)x - *(const char *)y;
}

/* ---- One contraction, every order, 1/2/3 threads ------------------------------------- */

typedef struct contraction {
    const char *what;
    const char *subs;                    /* e.g. "nqhd,nkhd->nhqk" */
    const char *la, *lb, *lo;            /* operand letters */
    const char *sa, *sb, *so;            /* storage orders (layouts) */
    ptrdiff_t pad_a, pad_o;              /* row padding of a and of the output */
    const char *letters;                 /* the distinct indices */
} contraction;

/* The reference, plain loops in double: ref[o] = init[o] + alpha·Σ a·b and
 * absref[o] = |init[o]| + |alpha|·Σ|a·b| (for the error bound) at each output
 * offset o of vo. The loops run over the output's letters in their order and,
 * inside, sum over the letters the output lacks (the contracted ones). */
static void reference(const contraction *c, const extents *e, double alpha, const float *a,
                      const ein_view *va, const float *b, const ein_view *vb, const float *init,
                      const ein_view *vo, double *ref, double *absref)
{
    char summed[EIN_MAX_INDICES + 1];
    int n = 0;
    for (const char *l = c->letters; *l; l++)
        if (!strchr(c->lo, *l))
            summed[n++] = *l;
    summed[n] = '\0';
    if (!has_elements(c->lo, e))
        return;
    ptrdiff_t idx[26] = { 0 };
    do {
        double s = 0.0, sa = 0.0;
        if (has_elements(summed, e)) {
            do {
                double t = (double)a[offset_of(c->la, va, idx)] * b[offset_of(c->lb, vb, idx)];
                s += t;
                sa += fabs(t);
            } while (next_index(idx, summed, e));
        }
        ptrdiff_t o = offset_of(c->lo, vo, idx);
        ref[o] = init[o] + alpha * s;
        absref[o] = fabs(init[o]) + fabs(alpha) * sa;
    } while (next_index(idx, c->lo, e));
}

static void run_contraction(const contraction *c, const extents *e, size_t misalign,
                            uint64_t seed)
{
    ein_view va, vb, vo;
    size_t na = lay_out(c->la, c->sa, e, c->pad_a, &va);
    size_t nb = lay_out(c->lb, c->sb, e, 0, &vb);
    size_t no = lay_out(c->lo, c->so, e, c->pad_o, &vo);
    float *a = t_alloc(na, sizeof(float), misalign), *b = t_alloc(nb, sizeof(float), misalign);
    float *init = t_alloc(no, sizeof(float), 0), *out = t_alloc(no, sizeof(float), misalign);
    float *first = t_alloc(no, sizeof(float), 0);
    double *ref = calloc(no, sizeof(double)), *absref = calloc(no, sizeof(double));
    if (!a || !b || !init || !out || !first || !ref || !absref) {
        CHECK(0, "out of memory");
        goto done;
    }
    uint64_t state = seed;
    t_fill(a, na, 1.0f, &state);
    t_fill(b, nb, 1.0f, &state);
    t_fill(init, no, 1.0f, &state);   /* out += ...: start from non-zero values */
    const float alpha = 0.75f;
    /* Padding between rows must keep its value: the reference says so. */
    for (size_t i = 0; i < no; i++) {
        ref[i] = init[i];
        absref[i] = fabs(init[i]);
    }
    reference(c, e, alpha, a, &va, b, &vb, init, &vo, ref, absref);

    char order[EIN_MAX_INDICES + 1];
    snprintf(order, sizeof order, "%s", c->letters);
    qsort(order, strlen(order), 1, cmp_char);
    int orders = 0, bad = 0;
    do {
        ein_plan plan;
        ein_status st = ein_plan_init(&plan, c->subs, order, &va, &vb, &vo);
        CHECK(st == EIN_OK, "%s order %s: %s", c->subs, order, ein_strerror(st));
        if (st != EIN_OK)
            continue;
        for (int t = 1; t <= 3; t++) {
            memcpy(out, init, no * sizeof(float));
            ein_plan_run(&plan, alpha, a, b, out, t);
            if (t == 1) {
                memcpy(first, out, no * sizeof(float));
                double worst = 0.0;
                for (size_t i = 0; i < no; i++) {
                    double err = fabs((double)out[i] - ref[i]);
                    double tol = 1e-5 * (1.0 + absref[i]);
                    if (!(err <= tol) && err / tol > worst)
                        worst = err / tol;
                }
                if (worst > 0.0 && bad++ < 3)
                    CHECK(0, "%s order %s: error %.3g times the bound", c->subs, order, worst);
            } else if (memcmp(out, first, no * sizeof(float)) != 0 && bad++ < 3) {
                CHECK(0, "%s order %s: %d threads not bitwise equal to 1", c->subs, order, t);
            }
        }
        orders++;
    } while (next_permutation(order));
    int want = 1;
    for (int i = 2; i <= (int)strlen(c->letters); i++)
        want *= i;
    CHECK(orders == want, "%d orders run, expected %d", orders, want);
done:
    t_free(a);
    t_free(b);
    t_free(init);
    t_free(out);
    t_free(first);
    free(ref);
    free(absref);
}

static extents ext5(const char *letters, const int *values)
{
    extents e;
    memset(&e, 0, sizeof e);
    for (int i = 0; letters[i]; i++)
        e.of[letters[i] - 'a'] = values[i];
    return e;
}

static void test_contractions(void)
{
    static const contraction cs[] = {
        { "gemm, nn.Linear W, x with ldx > k", "mk,nk->mn", "mk", "nk", "mn",
          "mk", "nk", "mn", 5, 0, "mkn" },
        { "gemm, W given transposed ([k][n] storage) by strides, padded y", "mk,nk->mn",
          "mk", "nk", "mn", "mk", "kn", "mn", 0, 3, "mkn" },
        { "gemm, column-major x and y", "mk,nk->mn", "mk", "nk", "mn",
          "km", "nk", "nm", 0, 0, "mkn" },
        { "scores on [N][L][H][Dh] (seed 003)", "nqhd,nkhd->nhqk", "nqhd", "nkhd", "nhqk",
          "nqhd", "nkhd", "nhqk", 0, 0, "nqhdk" },
        { "scores on [B][H][L][Dh] (seed 001)", "nqhd,nkhd->nhqk", "nqhd", "nkhd", "nhqk",
          "nhqd", "nhkd", "nhqk", 0, 0, "nqhdk" },
        { "scores, K transposed to [N][H][Dh][L]", "nqhd,nkhd->nhqk", "nqhd", "nkhd", "nhqk",
          "nqhd", "nhdk", "nhqk", 0, 0, "nqhdk" },
        { "PV on [N][L][H][Dh], probabilities [N][H][Lq][Lk]", "nhqk,nkhd->nqhd",
          "nhqk", "nkhd", "nqhd", "nhqk", "nkhd", "nqhd", 0, 0, "nhqkd" },
        { "PV, V transposed, output [N][H][L][Dh] with padded rows", "nhqk,nkhd->nqhd",
          "nhqk", "nkhd", "nqhd", "nhqk", "nhdk", "nhqd", 0, 2, "nhqkd" },
    };
    /* Extents for m, n, k (gemm), or for the contraction's letters in the
     * order of its `letters`: odd sizes, 1s, and widths past 16 (the dot's
     * lane loop, with a tail) and past 4 (the fused axpys, with a rest). */
    static const int gemm_ext[][3] = {
        { 1, 1, 1 }, { 3, 7, 17 }, { 17, 3, 7 }, { 7, 17, 3 }, { 5, 9, 33 }, { 2, 35, 19 },
    };
    static const int five_ext[][5] = {
        { 1, 1, 1, 1, 1 }, { 1, 3, 7, 17, 3 }, { 3, 7, 17, 1, 3 }, { 7, 1, 3, 7, 17 },
        { 2, 17, 1, 3, 7 }, { 1, 5, 2, 9, 33 }, { 2, 3, 3, 18, 21 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        const contraction *c = &cs[i];
        int is_gemm = strlen(c->letters) == 3;
        size_t n_ext = is_gemm ? sizeof gemm_ext / sizeof gemm_ext[0]
                               : sizeof five_ext / sizeof five_ext[0];
        t_case("einsum engine: %s \"%s\", every loop order, threads 1/2/3", c->what, c->subs);
        for (size_t x = 0; x < n_ext; x++) {
            extents e = ext5(c->letters, is_gemm ? gemm_ext[x] : five_ext[x]);
            run_contraction(c, &e, x % 2 ? 4 : 0, 1000 + 17 * i + x);
        }
    }
}

/* ---- Which innermost loop the engine picks ------------------------------------------ */

static void test_inner_kinds(void)
{
    t_case("einsum engine: innermost loop is a dot, an axpy or generic as the strides say");
    extents e;
    memset(&e, 0, sizeof e);
    e.of['m' - 'a'] = 4;
    e.of['n' - 'a'] = 5;
    e.of['k' - 'a'] = 6;
    ein_view x, w, y, wt;
    lay_out("mk", "mk", &e, 0, &x);
    lay_out("nk", "nk", &e, 0, &w);
    lay_out("nk", "kn", &e, 0, &wt);
    lay_out("mn", "mn", &e, 0, &y);
    static const struct { const char *order; int transposed; ein_inner want; } cases[] = {
        { "mnk", 0, EIN_INNER_DOT },     { "nmk", 0, EIN_INNER_DOT },
        { "mkn", 0, EIN_INNER_GENERIC }, { "kmn", 0, EIN_INNER_GENERIC },
        { "mkn", 1, EIN_INNER_AXPY },    { "kmn", 1, EIN_INNER_AXPY },
        { "mnk", 1, EIN_INNER_GENERIC }, { "knm", 0, EIN_INNER_GENERIC },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ein_plan p;
        ein_status st = ein_plan_init(&p, "mk,nk->mn", cases[i].order, &x,
                                      cases[i].transposed ? &wt : &w, &y);
        CHECK(st == EIN_OK && p.inner == cases[i].want, "order %s (W %s): status %d, inner %d, "
              "expected %d", cases[i].order, cases[i].transposed ? "[k][n]" : "[n][k]", (int)st,
              (int)p.inner, (int)cases[i].want);
    }
}

/* ---- Edges: empty extents, scalars, a full contraction ------------------------------- */

static void test_edges(void)
{
    t_case("einsum engine: an extent of 0 adds nothing; scalars; full contraction to a scalar");
    float a[40], b[40], out[40];
    for (int i = 0; i < 40; i++) {
        a[i] = (float)(i % 7) - 3.0f;
        b[i] = (float)(i % 5) - 2.0f;
        out[i] = 1.5f;
    }
    ein_view va = { { 4, 0 }, { 1, 4 } }, vb = { { 3, 0 }, { 1, 3 } }, vo = { { 4, 3 }, { 3, 1 } };
    ein_status st = ein_contract("mk,nk->mn", "mnk", 1.0f, a, &va, b, &vb, out, &vo, 2);
    CHECK(st == EIN_OK, "k = 0: %s", ein_strerror(st));
    for (int i = 0; i < 40; i++)
        CHECK(out[i] == 1.5f, "k = 0 changed out[%d] to %g", i, (double)out[i]);
    va.shape[0] = 0;
    vo.shape[0] = 0;
    va.shape[1] = vb.shape[1] = 2;
    st = ein_contract("mk,nk->mn", "kmn", 1.0f, a, &va, b, &vb, out, &vo, 3);
    CHECK(st == EIN_OK && out[0] == 1.5f, "m = 0: %s, out[0] %g", ein_strerror(st),
          (double)out[0]);

    ein_view none = { { 0 }, { 0 } };
    out[0] = 2.0f;
    st = ein_contract(",->", "", 0.5f, &a[5], &none, &b[4], &none, out, &none, 2);
    CHECK(st == EIN_OK && out[0] == 2.0f + 0.5f * a[5] * b[4], "scalar product: %s, %g",
          ein_strerror(st), (double)out[0]);

    /* Σ_i a[i]·b[i] over 37 elements (dot lanes and a tail), into a scalar,
     * with 1 and 3 threads (no output loop: the engine runs serially). */
    ein_view v37 = { { 37 }, { 1 } };
    double want = 0.0;
    for (int i = 0; i < 37; i++)
        want += (double)a[i] * b[i];
    for (int t = 1; t <= 3; t += 2) {
        out[0] = 0.0f;
        st = ein_contract("i,i->", "i", 1.0f, a, &v37, b, &v37, out, &none, t);
        CHECK(st == EIN_OK && fabs(out[0] - want) < 1e-4, "full dot with %d threads: %s, %g vs %g",
              t, ein_strerror(st), (double)out[0], want);
    }

    /* An index only one input has is summed over on its own: "ik,i->i". */
    ein_view vik = { { 3, 5 }, { 5, 1 } }, vi = { { 3 }, { 1 } };
    float o3[3] = { 0, 0, 0 };
    st = ein_contract("ik,i->i", "ik", 1.0f, a, &vik, b, &vi, o3, &vi, 2);
    int ok = st == EIN_OK;
    for (int i = 0; i < 3; i++) {
        double s = 0.0;
        for (int k = 0; k < 5; k++)
            s += (double)a[i * 5 + k] * b[i];
        ok = ok && fabs(o3[i] - s) < 1e-5;
    }
    CHECK(ok, "ik,i->i: %s", ein_strerror(st));

    /* Negative strides: the reversed rows of x. */
    ein_view xr = { { 4, 3 }, { -3, 1 } }, w = { { 2, 3 }, { 3, 1 } }, y = { { 4, 2 }, { 2, 1 } };
    float yv[8] = { 0 };
    st = ein_contract("mk,nk->mn", "mnk", 1.0f, a + 9, &xr, b, &w, yv, &y, 2);
    ok = st == EIN_OK;
    for (int m = 0; m < 4; m++)
        for (int n = 0; n < 2; n++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++)
                s += (double)a[9 - 3 * m + k] * b[3 * n + k];
            ok = ok && fabs(yv[m * 2 + n] - s) < 1e-5;
        }
    CHECK(ok, "negative strides: %s", ein_strerror(st));
}

/* ---- Invalid specs ---------------------------------------------------------------- */

static void test_invalid(void)
{
    t_case("einsum engine: invalid specs are refused with an error code, nothing written");
    float a[64], b[64], out[64];
    for (int i = 0; i < 64; i++)
        a[i] = b[i] = out[i] = 1.0f;
    ein_view v2 = { { 2, 2 }, { 2, 1 } };
    static const struct { const char *subs, *order; ein_status want; } cases[] = {
        { "mk,nk-mn", "mnk", EIN_ERR_SYNTAX },    { "mk,nk>mn", "mnk", EIN_ERR_SYNTAX },
        { "mkn->mn", "mnk", EIN_ERR_SYNTAX },     { "mknk->mn", "mnk", EIN_ERR_REPEAT },
        { "mk;nk->mn", "mnk", EIN_ERR_LETTER },
        { "mk,nk->mn,", "mnk", EIN_ERR_SYNTAX },  { "mk,nk,mn", "mnk", EIN_ERR_SYNTAX },
        { "mk,nk->m>n", "mnk", EIN_ERR_SYNTAX },  { "", "", EIN_ERR_SYNTAX },
        { "Mk,nk->Mn", "Mnk", EIN_ERR_LETTER },   { "m1,n1->mn", "mn1", EIN_ERR_LETTER },
        { "m k,nk->mn", "mnk", EIN_ERR_LETTER },  { "mm,nk->mn", "mnk", EIN_ERR_REPEAT },
        { "mk,kk->mk", "mk", EIN_ERR_REPEAT },    { "mk,nk->mnn", "mnk", EIN_ERR_REPEAT },
        { "mk,nk->mz", "mnkz", EIN_ERR_OUTPUT },  { "mk,nk->mn", "mn", EIN_ERR_ORDER },
        { "mk,nk->mn", "mnkk", EIN_ERR_ORDER },   { "mk,nk->mn", "mnz", EIN_ERR_ORDER },
        { "mk,nk->mn", "mnK", EIN_ERR_ORDER },    { "mk,nk->mn", "mkk", EIN_ERR_ORDER },
        { "abcde,fghij->a", "abcdefghij", EIN_ERR_TOO_MANY },
        { "abcdefghi,a->a", "abcdefghi", EIN_ERR_TOO_MANY },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ein_status st = ein_contract(cases[i].subs, cases[i].order, 1.0f, a, &v2, b, &v2, out,
                                     &v2, 2);
        CHECK(st == cases[i].want, "\"%s\" order \"%s\": %d (%s), expected %d (%s)",
              cases[i].subs, cases[i].order, (int)st, ein_strerror(st), (int)cases[i].want,
              ein_strerror(cases[i].want));
    }

    /* Extents: k is 2 in x and 3 in W; a negative extent. */
    ein_view x = { { 2, 2 }, { 2, 1 } }, w = { { 2, 3 }, { 3, 1 } }, y = { { 2, 2 }, { 2, 1 } };
    ein_status st = ein_contract("mk,nk->mn", "mnk", 1.0f, a, &x, b, &w, out, &y, 1);
    CHECK(st == EIN_ERR_EXTENT, "mismatched k: %s", ein_strerror(st));
    w.shape[1] = 2;
    y.shape[1] = 3;
    st = ein_contract("mk,nk->mn", "mnk", 1.0f, a, &x, b, &w, out, &y, 1);
    CHECK(st == EIN_ERR_EXTENT, "output n differs from W's: %s", ein_strerror(st));
    y.shape[1] = 2;
    x.shape[0] = y.shape[0] = -1;
    st = ein_contract("mk,nk->mn", "mnk", 1.0f, a, &x, b, &w, out, &y, 1);
    CHECK(st == EIN_ERR_EXTENT, "negative extent: %s", ein_strerror(st));
    x.shape[0] = y.shape[0] = 2;

    /* NULLs. */
    CHECK(ein_contract(NULL, "mnk", 1.0f, a, &x, b, &w, out, &y, 1) == EIN_ERR_NULL, "NULL subs");
    CHECK(ein_contract("mk,nk->mn", NULL, 1.0f, a, &x, b, &w, out, &y, 1) == EIN_ERR_NULL,
          "NULL order");
    CHECK(ein_contract("mk,nk->mn", "mnk", 1.0f, a, NULL, b, &w, out, &y, 1) == EIN_ERR_NULL,
          "NULL view");
    CHECK(ein_contract("mk,nk->mn", "mnk", 1.0f, a, &x, NULL, &w, out, &y, 1) == EIN_ERR_NULL,
          "NULL data");
    CHECK(ein_plan_init(NULL, "mk,nk->mn", "mnk", &x, &w, &y) == EIN_ERR_NULL, "NULL plan");

    for (int i = 0; i < 64; i++)
        if (out[i] != 1.0f) {
            CHECK(0, "a refused call wrote out[%d] = %g", i, (double)out[i]);
            break;
        }

    for (int s = -1; s <= (int)EIN_ERR_EXTENT + 1; s++) {
        const char *text = ein_strerror((ein_status)s);
        CHECK(text && text[0], "ein_strerror(%d) is empty", s);
    }
}

/* ---- The kernels: SDPA over several query chunks ---------------------------------- */

static void test_kernel_chunks(void)
{
    /* sdpa.c keeps 65536 scores per (batch, head): with Lk of 1100-2100 a
     * chunk holds 31-59 query rows, so these run 2-21 chunks, the last one
     * short, and with a causal mask each chunk's own key range. */
    static const char *const shapes[] = {
        "op=sdpa,B=2,H=3,Lq=70,Lk=2048,Dh=8,mask=all",
        "op=sdpa,B=1,H=2,Lq=1200,Lk=1100,Dh=5,mask=causal",
        "op=sdpa,B=3,H=1,Lq=100,Lk=1500,Dh=16,mask=padall",
        "op=mha,B=1,Lq=40,Lk=2100,D=16,H=2,cross=1,mask=keep",
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        char err[256];
        ab_workload w;
        if (t_workload(&w, shapes[s], 31 + s, 4, err, sizeof err) != 0) {
            t_case("einsum kernels: %s", shapes[s]);
            CHECK(0, "setup: %s", err);
            continue;
        }
        float *ref = t_run_kernel("naive", 1, &w);
        for (int i = 0; ref && i < attn_registry_count(); i++) {
            const attn_kernel *k = attn_registry_get(i);
            if (strncmp(k->name, "einsum-", 7) != 0)
                continue;
            t_case("einsum kernels: %s in several query chunks [%s], 1 and 3 threads", shapes[s],
                   k->name);
            float *one = t_run_kernel(k->name, 1, &w), *three = t_run_kernel(k->name, 3, &w);
            if (one && three) {
                ab_verdict v = ab_verify(w.shape.op, one, ref, w.out_len, w.max_abs_v);
                CHECK(v.ok, "error %.3g, bound %.3g", v.max_err, v.tol);
                CHECK(memcmp(one, three, w.out_len * sizeof(float)) == 0,
                      "3 threads not bitwise equal to 1");
            }
            ab_free(one);
            ab_free(three);
        }
        ab_free(ref);
        ab_workload_free(&w);
    }
}

void test_einsum(void)
{
    test_contractions();
    test_inner_kinds();
    test_edges();
    test_invalid();
    test_kernel_chunks();
}
