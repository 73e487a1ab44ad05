/*
 * test_kvtypes.c — keys and values stored narrower (contract 0.3):
 * attn_convert_rows against an independent rounding (every binary16, ties,
 * subnormals, all-zero int8 rows), its refusals; attn_sdpa_kv on every
 * kernel and type against the oracle on the stored values (grouped heads,
 * a capacity stride, every mask), the oracle's typed reading against
 * attn_sdpa on the values widened here; typed caches through decode steps
 * against one call, and their refusals.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"

static const attn_dtype types[] = { ATTN_F32, ATTN_F16, ATTN_BF16, ATTN_I8 };
static const char *const type_names[] = { "f32", "f16", "bf16", "i8" };

/* ---- An independent rounding, in double ------------------------------------ */

/* The value of binary16 bits h, decoded from the format's definition. */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

/* The binary16 nearest to x (finite, |x| <= 65504), ties to the even
 * mantissa: a search over all 31744 finite non-negative encodings, which
 * are ordered as their values are. */
static uint16_t half_nearest(double x)
{
    double a = fabs(x);
    int lo = 0, hi = 0x7bff;              /* half_value(lo) <= a <= half_value(hi) */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (half_value((uint16_t)mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    double dl = a - half_value((uint16_t)lo), dh = half_value((uint16_t)hi) - a;
    int pick = dl < dh ? lo : dh < dl ? hi : (lo & 1 ? hi : lo);
    if (a >= half_value(0x7bff))
        pick = 0x7bff;
    return (uint16_t)(pick | (signbit(x) ? 0x8000 : 0));
}

/* The bfloat16 nearest to x (finite, within range), ties to even: of the
 * two encodings around it, by distance in double. */
static uint16_t bf16_nearest(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t down = u >> 16, up = down + 1;
    float fd, fu;
    uint32_t bd = down << 16, bu = up << 16;
    memcpy(&fd, &bd, sizeof fd);
    memcpy(&fu, &bu, sizeof fu);
    double dd = fabs((double)x - fd), du = fabs((double)fu - x);
    return (uint16_t)(dd < du ? down : du < dd ? up : (down & 1 ? up : down));
}

/* Floats that probe the roundings: exact values, midpoints between
 * neighbours (ties both ways), the subnormal range, the top of the range,
 * signed zeros, and random ones over many exponents. */
static int probe_values(float *x, int max)
{
    int n = 0;
    uint64_t seed = 7;
    const float fixed[] = { 0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, -65504.0f, 65503.0f, 0x1p-14f,
                            0x1p-24f, 0x1p-25f, 0x1.8p-24f, 0x1p-26f, 0x1p-30f, 3e-8f, 6e-5f,
                            1.00048828125f, 1.000732421875f, 2049.0f, 2051.0f, 1e-3f, 0.1f };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && n < max; i++)
        x[n++] = fixed[i];
    /* Midpoints of neighbouring binary16 values: ties. */
    for (int h = 1; h < 0x7bff && n < max; h += 97) {
        double mid = (half_value((uint16_t)h) + half_value((uint16_t)(h + 1))) / 2.0;
        if ((float)mid == mid)
            x[n++] = (float)mid;
    }
    for (; n < max; n++) {
        float r;
        t_fill(&r, 1, 1.0f, &seed);
        x[n] = ldexpf(r, n % 44 - 30);
    }
    return n;
}

static void test_conversions(void)
{
    enum { N = 4096 };
    static float x[N];
    static uint16_t h[N];
    int n = probe_values(x, N);

    t_case("kvtypes: fp32 to binary16 is the nearest value, ties to even, for %d probes", n);
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 1, n, x, h, NULL), ATTN_OK);
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != half_nearest(x[i]) && bad++ < 3)
            CHECK(0, "%a: 0x%04x, nearest 0x%04x", x[i], h[i], half_nearest(x[i]));
    CHECK(bad == 0, "%d of %d wrong", bad, n);

    t_case("kvtypes: every binary16 widens to its value and converts back to itself");
    bad = 0;
    for (uint32_t b = 0; b < 0x10000; b++) {
        float f = attn_f16_to_f32((uint16_t)b);
        double want = half_value((uint16_t)b);
        int same = isnan(want) ? isnan(f) : (double)f == want && !signbit(f) == !signbit(want);
        uint16_t back = attn_f32_to_f16(f);
        bad += !same || (!isnan(want) && back != b) || (isnan(want) && (back & 0x7c00) != 0x7c00);
    }
    CHECK(bad == 0, "%d encodings do not round-trip", bad);

    t_case("kvtypes: fp32 to bfloat16 is the nearest value, ties to even, for %d probes", n);
    CHECK_STATUS(attn_convert_rows(ATTN_BF16, 1, n, x, h, NULL), ATTN_OK);
    bad = 0;
    for (int i = 0; i < n; i++)
        if (h[i] != bf16_nearest(x[i]) && bad++ < 3)
            CHECK(0, "%a: 0x%04x, nearest 0x%04x", x[i], h[i], bf16_nearest(x[i]));
    CHECK(bad == 0, "%d of %d wrong", bad, n);

    t_case("kvtypes: int8 rows: scale max|x|/127, q nearest (ties even) in [-127, 127], "
           "an all-zero row scale 0");
    enum { ROWS = 6, DH = 37 };
    float rows[ROWS][DH], scale[ROWS];
    int8_t q[ROWS][DH];
    uint64_t seed = 3;
    t_fill(&rows[0][0], sizeof rows / sizeof(float), 2.0f, &seed);
    memset(rows[1], 0, sizeof rows[1]);                  /* all zero */
    for (int d = 0; d < DH; d++)
        rows[2][d] = (float)(d - 18) * 0.5f;             /* q = x / (9/127): many near ties */
    rows[3][5] = -1e-30f;                                /* tiny among O(1) */
    for (int d = 0; d < DH; d++)
        rows[4][d] = 1e-40f * (float)(d % 3);            /* subnormal */
    rows[5][0] = 1e30f;                                   /* huge */
    CHECK_STATUS(attn_convert_rows(ATTN_I8, ROWS, DH, &rows[0][0], q, scale), ATTN_OK);
    for (int r = 0; r < ROWS; r++) {
        float m = 0.0f;
        for (int d = 0; d < DH; d++)
            m = fmaxf(m, fabsf(rows[r][d]));
        CHECK(scale[r] == m / 127.0f, "row %d: scale %g, max|x|/127 %g", r, scale[r], m / 127.0f);
        for (int d = 0; d < DH; d++) {
            double want = m > 0.0f ? nearbyint((double)rows[r][d] / (m / 127.0f)) : 0.0;
            double frac = m > 0.0f ? fabs((double)rows[r][d] / (m / 127.0f)) : 0.0;
            int near_tie = fabs(frac - floor(frac) - 0.5) < 1e-5;
            CHECK(q[r][d] >= -127 && (q[r][d] == want || (near_tie && fabs(q[r][d] - want) <= 1)),
                  "row %d [%d]: %a stored as %d, nearest %g", r, d, rows[r][d], q[r][d], want);
        }
    }
    CHECK(scale[1] == 0.0f && q[1][0] == 0 && q[1][DH - 1] == 0, "all-zero row: scale %g",
          scale[1]);
    CHECK(q[2][0] == -127 && q[2][DH - 1] == 127 && q[2][18] == 0, "the row's ends: %d, %d",
          q[2][0], q[2][DH - 1]);

    t_case("kvtypes: an int8 row whose largest is within a rounding of FLT_MAX widens finite");
    float big[4] = { -FLT_MAX, nextafterf(FLT_MAX, 0.0f), 1.0f, 0.0f };
    int8_t qb[4];
    float sb, wide[4];
    CHECK_STATUS(attn_convert_rows(ATTN_I8, 1, 4, big, qb, &sb), ATTN_OK);
    attn_widen_row(ATTN_I8, qb, sb, 4, wide);
    for (int d = 0; d < 4; d++)
        CHECK(isfinite(wide[d]) && fabs((double)wide[d] - big[d]) <= 0.5 * sb * (1.0 + 1e-6),
              "[%d]: %a stored as %d at scale %a widens to %a", d, big[d], qb[d], sb, wide[d]);

    t_case("kvtypes: values a type cannot hold are refused and nothing is written");
    struct { attn_dtype t; float bad; } refused[] = {
        { ATTN_F16, 65505.0f }, { ATTN_F16, -70000.0f }, { ATTN_F16, 3e38f },
        { ATTN_BF16, 3.4e38f }, { ATTN_I8, NAN }, { ATTN_I8, INFINITY }, { ATTN_I8, -INFINITY },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        float src[2][8] = { { 1, 2, 3, 4, 5, 6, 7, 8 }, { 1, 2, 3, 4, 5, 6, 7, 8 } };
        src[1][3] = refused[i].bad;
        unsigned char dst[64];
        float sc[2] = { -5.0f, -5.0f };
        memset(dst, 0xa5, sizeof dst);
        CHECK_STATUS(attn_convert_rows(refused[i].t, 2, 8, &src[0][0], dst, sc), ATTN_ERR_RANGE);
        int untouched = sc[0] == -5.0f && sc[1] == -5.0f;
        for (size_t b = 0; b < sizeof dst; b++)
            untouched &= dst[b] == 0xa5;
        CHECK(untouched, "%s %g: the output was written", type_names[refused[i].t], refused[i].bad);
    }
    /* The 16-bit types store infinities and NaN as they are. */
    float inf_nan[3] = { INFINITY, -INFINITY, NAN };
    uint16_t s16[3];
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 1, 3, inf_nan, s16, NULL), ATTN_OK);
    CHECK(isinf(attn_f16_to_f32(s16[0])) && attn_f16_to_f32(s16[1]) < 0
          && isnan(attn_f16_to_f32(s16[2])), "f16 inf, -inf, NaN: 0x%04x 0x%04x 0x%04x", s16[0],
          s16[1], s16[2]);
    CHECK_STATUS(attn_convert_rows(ATTN_BF16, 1, 3, inf_nan, s16, NULL), ATTN_OK);
    CHECK(isinf(attn_bf16_to_f32(s16[0])) && isnan(attn_bf16_to_f32(s16[2])), "bf16 inf, NaN");

    t_case("kvtypes: attn_convert_rows refuses bad arguments");
    float one[4] = { 1, 2, 3, 4 }, sc1;
    int8_t q1[4];
    CHECK_STATUS(attn_convert_rows((attn_dtype)9, 1, 4, one, q1, &sc1), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_convert_rows(ATTN_I8, 1, 4, one, q1, NULL), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 0, 4, one, q1, NULL), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 1, -1, one, q1, NULL), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 1, 4, NULL, q1, NULL), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_convert_rows(ATTN_F16, 1, 4, one, NULL, NULL), ATTN_ERR_INVALID_ARG);
    /* rows × head_dim floats past the largest object (PTRDIFF_MAX bytes):
     * ATTN_ERR_OVERFLOW before anything is read, as every other entry
     * point (api.md §2). The first value is one binary16 cannot hold, so
     * that a build which scans src first says RANGE instead of reading on. */
    float past[4] = { 1e6f, 0, 0, 0 };
    CHECK_STATUS(attn_convert_rows(ATTN_F16, INT_MAX, INT_MAX, past, q1, NULL),
                 ATTN_ERR_OVERFLOW);
    CHECK(strlen(attn_strerror(ATTN_ERR_RANGE)) > 0 && strcmp(attn_strerror(ATTN_ERR_RANGE),
                                                            attn_strerror((attn_status)99)) != 0,
          "ATTN_ERR_RANGE has no text of its own");
}

/* ---- SDPA on stored keys and values ------------------------------------------ */

/* Keys or values converted to t: the stored elements and scales, and the
 * stored values widened here (for attn_sdpa on the oracle). */
typedef struct stored {
    void *data;
    float *scale;
    float *values;
    attn_kv_view view;
} stored;

/* The value of element e of a stored array, decoded here from the formats'
 * definitions (not dtype.h's). */
static float stored_value(attn_dtype t, const void *data, const float *scale, size_t e, int dh)
{
    uint16_t h = 0;                      /* the data sits at an odd address */
    if (t == ATTN_F16 || t == ATTN_BF16)
        memcpy(&h, (const char *)data + 2 * e, sizeof h);
    switch (t) {
    case ATTN_F16:  return (float)half_value(h);
    case ATTN_BF16: {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case ATTN_I8:   return (float)((const int8_t *)data)[e] * scale[e / (size_t)dh];
    default:        return ((const float *)data)[e];
    }
}

static int store(stored *s, attn_dtype t, const float *x, size_t rows, int dh)
{
    size_t n = rows * (size_t)dh;
    s->data = t_alloc(n, attn_dtype_bytes(t), t == ATTN_F32 ? 4 : 3);   /* 16-bit rows at odd addresses */
    s->scale = t_alloc(rows, sizeof(float), 0);
    s->values = t_alloc(n, sizeof(float), 0);
    if (!s->data || !s->scale || !s->values)
        return -1;
    attn_status st = attn_convert_rows(t, (int)rows, dh, x, s->data, s->scale);
    CHECK_STATUS(st, ATTN_OK);
    for (size_t e = 0; e < n; e++)
        s->values[e] = stored_value(t, s->data, s->scale, e, dh);
    attn_kv_view v = { t, s->data, t == ATTN_I8 ? s->scale : NULL };
    s->view = v;
    return st == ATTN_OK ? 0 : -1;
}

static void unstore(stored *s)
{
    t_free(s->data);
    t_free(s->scale);
    t_free(s->values);
}

/* One shape of the typed check: B, H, Hkv, Lq, Lk, capacity, Dh, mask. */
typedef struct kv_case {
    int b, h, hkv, lq, lk, cap, dh;
    attn_mask mask;
} kv_case;

/* The other prefetch style of a single query row in registers (the
 * decode path's row_prefetch, where the kernel has it) gives out, bit for
 * bit: it moves the prefetches and their distance (2x or 4x the keys for
 * narrow rows, up to a split's end), never a sum. */
static void check_row_prefetch(attn_ctx *ctx, const char *kernel, const attn_sdpa_shape *sh,
                               const float *q, const attn_kv_view *k, const attn_kv_view *v,
                               const attn_mask *m, const float *out, size_t nq)
{
    int style;
    if (attn_ctx_get_param(ctx, "row_prefetch", &style) != ATTN_OK)
        return;
    float *other = t_alloc(nq, sizeof(float), 0);
    CHECK_STATUS(attn_ctx_set_param(ctx, "row_prefetch", !style), ATTN_OK);
    CHECK_STATUS(attn_sdpa_kv(ctx, sh, q, k, v, m, other), ATTN_OK);
    CHECK(memcmp(other, out, nq * sizeof(float)) == 0,
          "%s: row_prefetch %d differs from %d by %g", kernel, !style, style,
          t_max_diff(other, out, nq));
    CHECK_STATUS(attn_ctx_set_param(ctx, "row_prefetch", style), ATTN_OK);
    t_free(other);
}

/* Key padding of every key but each fifth, for B ≤ 2 and Lk ≤ 300. */
static uint8_t pad_rows[2 * 300];

static void check_kv_case(const kv_case *c)
{
    const char *kernels[64];
    int nk = t_kernels(kernels, 64);
    size_t nq = (size_t)c->b * c->h * c->lq * c->dh, rows = (size_t)c->b * c->hkv * c->cap;
    float *q = t_alloc(nq, sizeof(float), 4), *k = t_alloc(rows * c->dh, sizeof(float), 0);
    float *v = t_alloc(rows * c->dh, sizeof(float), 0);
    float *ref = t_alloc(nq, sizeof(float), 0), *want = t_alloc(nq, sizeof(float), 0);
    float *out = t_alloc(nq, sizeof(float), 8);
    uint64_t seed = (uint64_t)c->lk * 31 + (uint64_t)c->dh;
    t_fill(q, nq, 1.0f, &seed);
    t_fill(k, rows * c->dh, 2.0f, &seed);
    t_fill(v, rows * c->dh, 3.0f, &seed);
    attn_sdpa_shape sh = { c->b, c->h, c->lq, c->lk, c->dh, 0.0f, c->hkv, c->cap };
    const attn_mask *m = &c->mask;
    for (size_t ti = 1; ti < sizeof types / sizeof types[0]; ti++) {
        /* keys of each narrow type, values of another (f16 with bf16, ...) */
        attn_dtype kt = types[ti], vt = types[ti % 3 + 1];
        stored sk, sv;
        t_case("kvtypes: sdpa K %s V %s, B%d H%d Hkv%d Lq%d Lk%d cap %d Dh%d causal %d: every "
               "kernel against the oracle on the stored values", type_names[kt], type_names[vt],
               c->b, c->h, c->hkv, c->lq, c->lk, c->cap, c->dh, m->causal);
        if (store(&sk, kt, k, rows, c->dh) != 0 || store(&sv, vt, v, rows, c->dh) != 0) {
            CHECK(0, "no memory");
            continue;
        }
        attn_ctx *oracle;
        CHECK_STATUS(attn_ctx_create(&oracle, "naive", 1), ATTN_OK);
        /* The oracle reads the stored values as attn_sdpa reads them widened. */
        CHECK_STATUS(attn_sdpa(oracle, &sh, q, sk.values, sv.values, m, want), ATTN_OK);
        CHECK_STATUS(attn_sdpa_kv(oracle, &sh, q, &sk.view, &sv.view, m, ref), ATTN_OK);
        CHECK(memcmp(ref, want, nq * sizeof(float)) == 0,
              "naive on the stored values differs from naive on them widened by %g",
              t_max_diff(ref, want, nq));
        attn_ctx_destroy(oracle);
        double tol = 2e-5 * fmax(1.0, t_max_abs(sv.values, rows * c->dh));
        for (int i = 0; i < nk; i++) {
            attn_ctx *ctx;
            if (attn_ctx_create(&ctx, kernels[i], 2) != ATTN_OK)
                continue;
            attn_status st = attn_sdpa_kv(ctx, &sh, q, &sk.view, &sv.view, m, out);
            double err = t_max_diff(out, ref, nq);
            CHECK(st == ATTN_OK && err <= tol, "%s: status %d, error %g > %g", kernels[i], st, err,
                  tol);
            check_row_prefetch(ctx, kernels[i], &sh, q, &sk.view, &sv.view, m, out, nq);
            attn_ctx_destroy(ctx);
        }
        unstore(&sk);
        unstore(&sv);
    }
    /* Both views fp32: attn_sdpa itself, bit for bit. */
    t_case("kvtypes: sdpa with fp32 views is attn_sdpa, B%d H%d Hkv%d Lq%d Lk%d", c->b, c->h,
           c->hkv, c->lq, c->lk);
    attn_kv_view fk = { ATTN_F32, k, NULL }, fv = { ATTN_F32, v, NULL };
    for (int i = 0; i < nk; i++) {
        attn_ctx *ctx;
        if (attn_ctx_create(&ctx, kernels[i], 2) != ATTN_OK)
            continue;
        CHECK_STATUS(attn_sdpa(ctx, &sh, q, k, v, m, want), ATTN_OK);
        CHECK_STATUS(attn_sdpa_kv(ctx, &sh, q, &fk, &fv, m, out), ATTN_OK);
        CHECK(memcmp(out, want, nq * sizeof(float)) == 0, "%s differs", kernels[i]);
        attn_ctx_destroy(ctx);
    }
    t_free(q), t_free(k), t_free(v), t_free(ref), t_free(want), t_free(out);
}

static void test_sdpa_kv(void)
{
    for (size_t i = 0; i < sizeof pad_rows; i++)
        pad_rows[i] = i % 5 != 0;
    const kv_case cases[] = {
        /* decoding steps: one query row, Hkv = H and grouped, a capacity stride */
        { 1, 4, 4, 1, 300, 320, 64, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        { 2, 8, 2, 1, 1025, 1100, 128, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        { 1, 4, 1, 3, 77, 77, 16, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        /* one row in registers (8 vectors: Dh 128 on AVX-512, 32 on the
         * portable target), past a split's end and a page's */
        { 1, 2, 2, 1, 1100, 1100, 128, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        { 1, 2, 2, 1, 700, 720, 32, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        /* heads whose width ends in a vector tail: one row (in registers
         * or not), a group of rows, a block of keys cut by a split */
        { 1, 2, 2, 1, 600, 600, 33, { .causal = ATTN_CAUSAL_BOTTOM_RIGHT } },
        { 1, 2, 2, 1, 70, 80, 20, { 0 } },
        { 2, 8, 2, 1, 131, 131, 37, { .key_padding = pad_rows } },
        /* odd widths and the tiled path, every mask part */
        { 2, 2, 2, 33, 40, 40, 17, { .causal = ATTN_CAUSAL_TOP_LEFT } },
        { 2, 6, 3, 20, 33, 35, 8, { .key_padding = pad_rows } },
        { 1, 2, 2, 70, 70, 70, 33, { 0 } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_kv_case(&cases[i]);

    t_case("kvtypes: attn_sdpa_kv refuses bad views and writes nothing");
    attn_ctx *ctx;
    CHECK_STATUS(attn_ctx_create(&ctx, "naive", 1), ATTN_OK);
    float q[8] = { 0 }, k[8] = { 0 }, out[8] = { 7, 7, 7, 7, 7, 7, 7, 7 };
    int8_t k8[8] = { 0 };
    attn_sdpa_shape sh = { 1, 1, 1, 2, 4, 0.0f, 0, 0 };
    attn_kv_view good = { ATTN_F32, k, NULL }, none = { ATTN_F16, NULL, NULL };
    attn_kv_view unknown = { (attn_dtype)7, k, NULL }, unscaled = { ATTN_I8, k8, NULL };
    /* fp32 where no float can be: a byte off (16-bit rows may be; store()
     * puts them at odd addresses). */
    attn_kv_view odd32 = { ATTN_F32, (const char *)k + 1, NULL };
    const attn_kv_view *bad[] = { NULL, &none, &unknown, &unscaled, &odd32 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_STATUS(attn_sdpa_kv(ctx, &sh, q, bad[i], &good, NULL, out), ATTN_ERR_INVALID_ARG);
        CHECK_STATUS(attn_sdpa_kv(ctx, &sh, q, &good, bad[i], NULL, out), ATTN_ERR_INVALID_ARG);
    }
    CHECK_STATUS(attn_sdpa_kv(ctx, &sh, NULL, &good, &good, NULL, out), ATTN_ERR_INVALID_ARG);
    CHECK(out[0] == 7 && out[7] == 7, "a refused call wrote its output");
    attn_ctx_destroy(ctx);
}

/* ---- Typed caches ----------------------------------------------------------------- */

enum { D = 32, NH = 4, F = 48, MEM = 9, B = 2, LEN = 11 };

typedef struct layer {
    attn_decoder_weights w;
    float *all;
} layer;

static int make_layer(layer *l, uint64_t seed)
{
    const size_t sizes[] = { D * D, D * D, D * D, D * D, D, D, D, D,   /* self */
                             D * D, D * D, D * D, D * D, D, D, D, D,   /* cross */
                             D, D, D, D, D, D, (size_t)F * D, F, (size_t)D * F, D };
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += sizes[i];
    l->all = t_alloc(total, sizeof(float), 0);
    if (!l->all)
        return -1;
    t_fill(l->all, total, 0.3f, &seed);
    const float **slot[] = {
        &l->w.self_attn.w_q, &l->w.self_attn.w_k, &l->w.self_attn.w_v, &l->w.self_attn.w_o,
        &l->w.self_attn.b_q, &l->w.self_attn.b_k, &l->w.self_attn.b_v, &l->w.self_attn.b_o,
        &l->w.cross_attn.w_q, &l->w.cross_attn.w_k, &l->w.cross_attn.w_v, &l->w.cross_attn.w_o,
        &l->w.cross_attn.b_q, &l->w.cross_attn.b_k, &l->w.cross_attn.b_v, &l->w.cross_attn.b_o,
        &l->w.ln1_gamma, &l->w.ln1_beta, &l->w.ln2_gamma, &l->w.ln2_beta, &l->w.ln3_gamma,
        &l->w.ln3_beta, &l->w.w_ff1, &l->w.b_ff1, &l->w.w_ff2, &l->w.b_ff2,
    };
    float *at = l->all;
    for (size_t i = 0; i < sizeof slot / sizeof slot[0]; i++) {
        *slot[i] = at;
        at += sizes[i];
    }
    return 0;
}

/* The target decoded token by token (after a prompt of 3) through a cache
 * of keys of type kt and values of type vt, into y ([B][LEN][D]). */
static attn_status decode_steps_kv(attn_ctx *ctx, const attn_encoder_config *c, const layer *l,
                                   attn_dtype kt, attn_dtype vt, const float *x, const float *mem,
                                   float *y)
{
    attn_kv_cache *cache;
    attn_status st = attn_kv_cache_create_typed(&cache, B, NH, D / NH, LEN, kt, vt);
    float chunk[B * LEN * D];
    for (int p = 0, n = 3; st == ATTN_OK && p < LEN; p += n, n = 1) {
        for (int b = 0; b < B; b++)
            memcpy(chunk + (size_t)b * n * D, x + ((size_t)b * LEN + p) * D, sizeof(float) * n * D);
        st = attn_decoder_layer(ctx, c, &l->w, B, n, chunk, MEM, mem, NULL, cache, chunk);
        for (int b = 0; b < B && st == ATTN_OK; b++)
            memcpy(y + ((size_t)b * LEN + p) * D, chunk + (size_t)b * n * D, sizeof(float) * n * D);
    }
    attn_kv_cache_destroy(cache);
    return st;
}

static attn_status decode_steps(attn_ctx *ctx, const attn_encoder_config *c, const layer *l,
                                attn_dtype t, const float *x, const float *mem, float *y)
{
    return decode_steps_kv(ctx, c, l, t, t, x, mem, y);
}

/* On every kernel: the target decoded token by token through a cache of kt
 * keys and vt values equals one call over it (naive: bit for bit; the
 * others within the layer bound), and is not all zeros. */
static void check_steps_are_one_call(const attn_encoder_config *c, const layer *l, attn_dtype kt,
                                     attn_dtype vt, const float *x, const float *mem)
{
    static float steps[B * LEN * D], whole[B * LEN * D];
    const size_t n = sizeof whole / sizeof(float);
    const char *kernels[64];
    int nk = t_kernels(kernels, 64);
    for (int i = 0; i < nk; i++) {
        attn_ctx *ctx;
        if (attn_ctx_create(&ctx, kernels[i], 2) != ATTN_OK)
            continue;
        attn_kv_cache *cache;
        CHECK_STATUS(attn_kv_cache_create_typed(&cache, B, NH, D / NH, LEN, kt, vt), ATTN_OK);
        CHECK_STATUS(attn_decoder_layer(ctx, c, &l->w, B, LEN, x, MEM, mem, NULL, cache, whole),
                     ATTN_OK);
        attn_kv_cache_destroy(cache);
        CHECK_STATUS(decode_steps_kv(ctx, c, l, kt, vt, x, mem, steps), ATTN_OK);
        double err = t_max_diff(steps, whole, n);
        double tol = strcmp(kernels[i], "naive") == 0 ? 0.0 : 1e-4 * fmax(1.0, t_max_abs(whole, n));
        CHECK(err <= tol && t_max_abs(whole, n) > 0, "%s: steps differ from one call by %g > %g",
              kernels[i], err, tol);
        attn_ctx_destroy(ctx);
    }
}

/* Keys and values of different types, one of them fp32: the cross
 * attention read the fp32 side from a NULL pointer (a review; the self
 * attention did not), every kernel on its first call. */
static void test_mixed_cache(void)
{
    layer l;
    if (make_layer(&l, 12) != 0)
        return;
    const attn_encoder_config c = { D, NH, F, 1e-5f, 1, ATTN_ACT_GELU_ERF };
    static float x[B * LEN * D], mem[B * MEM * D];
    uint64_t seed = 6;
    t_fill(x, sizeof x / sizeof(float), 1.0f, &seed);
    t_fill(mem, sizeof mem / sizeof(float), 1.0f, &seed);
    const attn_dtype pairs[][2] = { { ATTN_F32, ATTN_F16 }, { ATTN_I8, ATTN_F32 },
                                    { ATTN_F32, ATTN_BF16 }, { ATTN_BF16, ATTN_I8 } };
    for (size_t pi = 0; pi < sizeof pairs / sizeof pairs[0]; pi++) {
        attn_dtype kt = pairs[pi][0], vt = pairs[pi][1];
        t_case("kvtypes: a cache of %s keys and %s values, token by token and in one call, every "
               "kernel", type_names[kt], type_names[vt]);
        check_steps_are_one_call(&c, &l, kt, vt, x, mem);
    }
    t_free(l.all);
}

static void test_typed_cache(void)
{
    layer l;
    if (make_layer(&l, 11) != 0)
        return;
    const attn_encoder_config c = { D, NH, F, 1e-5f, 1, ATTN_ACT_GELU_ERF };
    static float x[B * LEN * D], mem[B * MEM * D], steps[B * LEN * D], f32[B * LEN * D];
    uint64_t seed = 5;
    t_fill(x, sizeof x / sizeof(float), 1.0f, &seed);
    t_fill(mem, sizeof mem / sizeof(float), 1.0f, &seed);
    for (size_t ti = 1; ti < sizeof types / sizeof types[0]; ti++) {
        attn_dtype t = types[ti];
        t_case("kvtypes: a %s cache token by token is one call over the sequence, every kernel "
               "(naive: bit for bit)", type_names[t]);
        check_steps_are_one_call(&c, &l, t, t, x, mem);

        t_case("kvtypes: a %s cache against an fp32 one: the stored values' error", type_names[t]);
        attn_ctx *ctx;
        CHECK_STATUS(attn_ctx_create(&ctx, "naive", 1), ATTN_OK);
        CHECK_STATUS(decode_steps(ctx, &c, &l, ATTN_F32, x, mem, f32), ATTN_OK);
        CHECK_STATUS(decode_steps(ctx, &c, &l, t, x, mem, steps), ATTN_OK);
        double rel = t_max_diff(steps, f32, sizeof f32 / sizeof(float))
                   / t_max_abs(f32, sizeof f32 / sizeof(float));
        /* binary16 keeps 11 bits, bfloat16 8, int8 about 7 of a row's largest */
        double bound = t == ATTN_F16 ? 5e-3 : t == ATTN_BF16 ? 3e-2 : 5e-2;
        CHECK(rel > 0.0 && rel <= bound, "relative error %g, expected in (0, %g]", rel, bound);
        attn_ctx_destroy(ctx);
    }

    t_case("kvtypes: a value the cache's type cannot hold refuses the call: y and the cache "
           "unchanged, the next call as if it had not happened");
    attn_ctx *ctx;
    CHECK_STATUS(attn_ctx_create(&ctx, "auto", 1), ATTN_OK);
    static float huge[B * LEN * D], y[B * LEN * D], y2[B * LEN * D];
    for (size_t i = 0; i < sizeof huge / sizeof(float); i++)
        huge[i] = x[i] * 1e6f;                     /* projections past binary16's range */
    /* Post-LN: the self-attention projects x itself (pre-LN would project
     * its LayerNorm), and the memory is projected as it is. */
    const attn_encoder_config post = { D, NH, F, 1e-5f, 0, ATTN_ACT_RELU };
    for (int where = 0; where < 2; where++) {     /* the new keys; the memory's */
        attn_kv_cache *cache, *fresh;
        CHECK_STATUS(attn_kv_cache_create_typed(&cache, B, NH, D / NH, LEN, ATTN_F16, ATTN_I8),
                     ATTN_OK);
        for (size_t i = 0; i < sizeof y / sizeof(float); i++)
            y[i] = -3.0f;
        CHECK_STATUS(attn_decoder_layer(ctx, &post, &l.w, B, 2, where ? x : huge, MEM,
                                        where ? huge : mem, NULL, cache, y),
                     ATTN_ERR_RANGE);
        CHECK(y[0] == -3.0f && y[B * 2 * D - 1] == -3.0f && attn_kv_cache_length(cache) == 0,
              "refused (%s): y %g, cache length %d", where ? "memory" : "keys", y[0],
              attn_kv_cache_length(cache));
        /* The cache still works, and as a fresh one does. */
        CHECK_STATUS(attn_decoder_layer(ctx, &post, &l.w, B, 2, x, MEM, mem, NULL, cache, y),
                     ATTN_OK);
        CHECK_STATUS(attn_kv_cache_create_typed(&fresh, B, NH, D / NH, LEN, ATTN_F16, ATTN_I8),
                     ATTN_OK);
        CHECK_STATUS(attn_decoder_layer(ctx, &post, &l.w, B, 2, x, MEM, mem, NULL, fresh, y2),
                     ATTN_OK);
        CHECK(memcmp(y, y2, sizeof(float) * B * 2 * D) == 0 && attn_kv_cache_length(cache) == 2,
              "after a refusal the cache does not behave as a fresh one");
        attn_kv_cache_destroy(cache);
        attn_kv_cache_destroy(fresh);
    }
    attn_kv_cache *bad = NULL;
    CHECK_STATUS(attn_kv_cache_create_typed(&bad, B, NH, D / NH, LEN, (attn_dtype)4, ATTN_F32),
                 ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_kv_cache_create_typed(&bad, B, NH, D / NH, LEN, ATTN_F32, (attn_dtype)-1),
                 ATTN_ERR_INVALID_ARG);
    CHECK(bad == NULL, "a refused create set the cache");
    attn_ctx_destroy(ctx);
    t_free(l.all);
}

void test_kvtypes(void)
{
    test_conversions();
    test_sdpa_kv();
    test_typed_cache();
    test_mixed_cache();
}
