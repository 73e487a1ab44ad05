/*
 * test_properties.c — properties that must hold whatever the numbers, for
 * every runnable kernel:
 *  - attention has no notion of position (seed 000): permuting K and V rows
 *    together leaves unmasked SDPA unchanged, and permuting x_kv rows leaves
 *    cross-attention MHA unchanged;
 *  - causality: with a causal mask, output row i does not change when inputs
 *    after position i change (SDPA, MHA, encoder layer);
 *  - with V = identity, scale 1 and no bias, SDPA returns the attention
 *    probabilities: rows sum to 1, masked keys get exactly 0, and a fully
 *    masked row is all zeros;
 *  - a batch whose keys are all padding gives attention output zero, so MHA
 *    returns exactly b_o there, and the other batches are unaffected;
 *  - the scale rule: 0 means 1/sqrt(Dh);
 *  - in place: MHA and the encoder layer accept y == x;
 *  - the encoder stack is its layers called one after another (bitwise,
 *    in place or not), and its final LayerNorm is a LayerNorm of the
 *    stack's output (checked in double).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct buffers {
    float *p[64];
    int n;
} buffers;

static float *buf(buffers *b, size_t n, uint64_t *seed)
{
    float *p = t_alloc(n, sizeof(float), 0);
    if (seed)
        t_fill(p, n, 1.0f, seed);
    b->p[b->n++] = p;
    return p;
}

static void free_all(buffers *b)
{
    for (int i = 0; i < b->n; i++)
        t_free(b->p[i]);
    b->n = 0;
}

static attn_mha_weights random_weights(buffers *b, int d, uint64_t *seed)
{
    size_t dd = (size_t)d * d;
    attn_mha_weights w = {
        buf(b, dd, seed), buf(b, dd, seed), buf(b, dd, seed), buf(b, dd, seed),
        buf(b, d, seed), buf(b, d, seed), buf(b, d, seed), buf(b, d, seed),
    };
    return w;
}

/* An encoder layer around the attention weights attn: LayerNorm and FFN
 * weights drawn from seed, in the order of the fields. */
static attn_encoder_weights random_layer(buffers *b, attn_mha_weights attn, int d, int f,
                                         uint64_t *seed)
{
    attn_encoder_weights w = {
        .attn = attn, .ln1_gamma = buf(b, d, seed), .ln1_beta = buf(b, d, seed),
        .ln2_gamma = buf(b, d, seed), .ln2_beta = buf(b, d, seed),
        .w_ff1 = buf(b, (size_t)f * d, seed), .b_ff1 = buf(b, f, seed),
        .w_ff2 = buf(b, (size_t)d * f, seed), .b_ff2 = buf(b, d, seed),
    };
    return w;
}

/* ---- position invariance ----------------------------------------------------- */

static void permutation(attn_ctx *ctx, const char *kn)
{
    enum { B = 2, H = 2, LQ = 5, LK = 7, DH = 6 };
    const int perm[LK] = { 3, 6, 0, 5, 1, 4, 2 };
    uint64_t seed = 7;
    buffers b = { 0 };
    size_t nq = (size_t)B * H * LQ * DH, nk = (size_t)B * H * LK * DH;
    float *q = buf(&b, nq, &seed), *k = buf(&b, nk, &seed), *v = buf(&b, nk, &seed);
    float *pk = buf(&b, nk, NULL), *pv = buf(&b, nk, NULL);
    float *o1 = buf(&b, nq, NULL), *o2 = buf(&b, nq, NULL);

    t_case("property [%s]: permuting K/V rows together leaves SDPA unchanged", kn);
    for (int bh = 0; bh < B * H; bh++)
        for (int j = 0; j < LK; j++) {
            size_t from = ((size_t)bh * LK + perm[j]) * DH, to = ((size_t)bh * LK + j) * DH;
            memcpy(pk + to, k + from, DH * sizeof(float));
            memcpy(pv + to, v + from, DH * sizeof(float));
        }
    attn_sdpa_shape s = { B, H, LQ, LK, DH, 0.0f, 0, 0 };
    CHECK_STATUS(attn_sdpa(ctx, &s, q, k, v, NULL, o1), ATTN_OK);
    CHECK_STATUS(attn_sdpa(ctx, &s, q, pk, pv, NULL, o2), ATTN_OK);
    double err = t_max_diff(o1, o2, nq);
    CHECK(err <= 2e-5, "outputs differ by %.3g", err);

    t_case("property [%s]: permuting x_kv rows leaves cross-attention MHA unchanged", kn);
    enum { D = 8 };
    attn_mha_weights w = random_weights(&b, D, &seed);
    float *xq = buf(&b, (size_t)B * LQ * D, &seed), *xkv = buf(&b, (size_t)B * LK * D, &seed);
    float *pxkv = buf(&b, (size_t)B * LK * D, NULL);
    float *y1 = buf(&b, (size_t)B * LQ * D, NULL), *y2 = buf(&b, (size_t)B * LQ * D, NULL);
    for (int bb = 0; bb < B; bb++)
        for (int j = 0; j < LK; j++)
            memcpy(pxkv + ((size_t)bb * LK + j) * D, xkv + ((size_t)bb * LK + perm[j]) * D,
                   D * sizeof(float));
    CHECK_STATUS(attn_mha(ctx, D, 2, 0.0f, &w, B, LQ, LK, xq, xkv, NULL, y1), ATTN_OK);
    CHECK_STATUS(attn_mha(ctx, D, 2, 0.0f, &w, B, LQ, LK, xq, pxkv, NULL, y2), ATTN_OK);
    err = t_max_diff(y1, y2, (size_t)B * LQ * D);
    CHECK(err <= 1e-4, "outputs differ by %.3g", err);
    free_all(&b);
}

/* ---- causality ------------------------------------------------------------------ */

/* Rows [0, i] of the [rows][width] outputs a and b are bitwise equal: masked
 * positions are excluded exactly, so nothing about them may leak in. */
static int prefix_equal(const float *a, const float *b, int i, size_t width)
{
    return memcmp(a, b, (size_t)(i + 1) * width * sizeof(float)) == 0;
}

static void causality(attn_ctx *ctx, const char *kn)
{
    enum { L = 8, DH = 5, D = 8, F = 12 };
    uint64_t seed = 11;
    buffers b = { 0 };
    attn_mask causal = { .causal = 1 };

    t_case("property [%s]: causal SDPA row i ignores q/k/v after i", kn);
    size_t n = (size_t)L * DH;
    float *q = buf(&b, n, &seed), *k = buf(&b, n, &seed), *v = buf(&b, n, &seed);
    float *q2 = buf(&b, n, NULL), *k2 = buf(&b, n, NULL), *v2 = buf(&b, n, NULL);
    float *o1 = buf(&b, n, NULL), *o2 = buf(&b, n, NULL);
    attn_sdpa_shape s = { 1, 1, L, L, DH, 0.0f, 0, 0 };
    CHECK_STATUS(attn_sdpa(ctx, &s, q, k, v, &causal, o1), ATTN_OK);
    for (int i = 0; i < L - 1; i++) {
        memcpy(q2, q, n * sizeof(float));
        memcpy(k2, k, n * sizeof(float));
        memcpy(v2, v, n * sizeof(float));
        size_t after = (size_t)(i + 1) * DH;
        t_fill(q2 + after, n - after, 3.0f, &seed);
        t_fill(k2 + after, n - after, 3.0f, &seed);
        t_fill(v2 + after, n - after, 3.0f, &seed);
        CHECK_STATUS(attn_sdpa(ctx, &s, q2, k2, v2, &causal, o2), ATTN_OK);
        CHECK(prefix_equal(o1, o2, i, DH), "row <= %d changed", i);
    }

    t_case("property [%s]: causal MHA and encoder row i ignore x after i", kn);
    attn_mha_weights w = random_weights(&b, D, &seed);
    attn_encoder_weights ew = random_layer(&b, w, D, F, &seed);
    size_t nx = (size_t)L * D;
    float *x = buf(&b, nx, &seed), *x2 = buf(&b, nx, NULL);
    float *y1 = buf(&b, nx, NULL), *y2 = buf(&b, nx, NULL);
    float *e1 = buf(&b, nx, NULL), *e2 = buf(&b, nx, NULL);
    attn_encoder_config cfg = { D, 2, F, 1e-5f, 1, ATTN_ACT_GELU_ERF };
    CHECK_STATUS(attn_mha(ctx, D, 2, 0.0f, &w, 1, L, L, x, x, &causal, y1), ATTN_OK);
    CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, 1, L, x, &causal, e1), ATTN_OK);
    for (int i = 0; i < L - 1; i++) {
        memcpy(x2, x, nx * sizeof(float));
        t_fill(x2 + (size_t)(i + 1) * D, nx - (size_t)(i + 1) * D, 3.0f, &seed);
        CHECK_STATUS(attn_mha(ctx, D, 2, 0.0f, &w, 1, L, L, x2, x2, &causal, y2), ATTN_OK);
        CHECK(prefix_equal(y1, y2, i, D), "MHA row <= %d changed", i);
        cfg.norm_first = i % 2; /* both arrangements */
        CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, 1, L, x, &causal, e1), ATTN_OK);
        CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, 1, L, x2, &causal, e2), ATTN_OK);
        CHECK(prefix_equal(e1, e2, i, D), "encoder (norm_first %d) row <= %d changed",
              cfg.norm_first, i);
    }
    free_all(&b);
}

/* ---- probabilities ---------------------------------------------------------------- */

static void identity_values(attn_ctx *ctx, const char *kn)
{
    enum { B = 2, LQ = 4, LK = 6 };
    uint64_t seed = 13;
    buffers b = { 0 };
    float *q = buf(&b, (size_t)B * LQ * LK, &seed), *k = buf(&b, (size_t)B * LK * LK, &seed);
    float *v = buf(&b, (size_t)B * LK * LK, NULL), *o = buf(&b, (size_t)B * LQ * LK, NULL);
    for (int bb = 0; bb < B; bb++)
        for (int j = 0; j < LK; j++)
            v[((size_t)bb * LK + j) * LK + j] = 1.0f;
    /* Row 2 of batch 1 sees no key; batch 0 cannot see key 4 (padding). */
    uint8_t keep[B][LQ][LK], pad[B][LK];
    memset(keep, 1, sizeof keep);
    memset(pad, 1, sizeof pad);
    memset(keep[1][2], 0, LK);
    keep[0][1][0] = 0;
    pad[0][4] = 0;
    attn_mask mask = { .key_padding = &pad[0][0], .keep = &keep[0][0][0], .keep_per_batch = 1 };
    attn_sdpa_shape s = { B, 1, LQ, LK, LK, 1.0f, 0, 0 };

    t_case("property [%s]: SDPA with V = I gives probability rows; masked keys get 0", kn);
    CHECK_STATUS(attn_sdpa(ctx, &s, q, k, v, &mask, o), ATTN_OK);
    for (int bb = 0; bb < B; bb++)
        for (int i = 0; i < LQ; i++) {
            const float *row = o + ((size_t)bb * LQ + i) * LK;
            double sum = 0;
            for (int j = 0; j < LK; j++) {
                int masked = !keep[bb][i][j] || !pad[bb][j];
                CHECK(row[j] >= 0.0f, "b%d row %d key %d negative", bb, i, j);
                if (masked)
                    CHECK(row[j] == 0.0f, "b%d row %d masked key %d got %g", bb, i, j, row[j]);
                sum += row[j];
            }
            double want = (bb == 1 && i == 2) ? 0.0 : 1.0;
            CHECK(fabs(sum - want) <= 1e-5, "b%d row %d sums to %.9g, not %g", bb, i, sum, want);
        }
    free_all(&b);
}

/* ---- padding ------------------------------------------------------------------------ */

static void all_padding(attn_ctx *ctx, const char *kn)
{
    enum { B = 2, L = 5, D = 6, H = 3, F = 10 };
    uint64_t seed = 17;
    buffers b = { 0 };
    attn_mha_weights w = random_weights(&b, D, &seed);
    size_t nx = (size_t)B * L * D;
    float *x = buf(&b, nx, &seed), *y = buf(&b, nx, NULL), *y0 = buf(&b, nx, NULL);
    uint8_t pad[B][L] = { { 1, 1, 1, 0, 0 }, { 0, 0, 0, 0, 0 } };
    attn_mask mask = { .key_padding = &pad[0][0] };

    t_case("property [%s]: an all-padding batch gives MHA output b_o, no NaN", kn);
    CHECK_STATUS(attn_mha(ctx, D, H, 0.0f, &w, B, L, L, x, x, &mask, y), ATTN_OK);
    for (int i = 0; i < L; i++)
        for (int j = 0; j < D; j++)
            CHECK(y[((size_t)L + i) * D + j] == w.b_o[j], "row %d col %d: %g != b_o %g", i, j,
                  y[((size_t)L + i) * D + j], w.b_o[j]);

    t_case("property [%s]: an all-padding batch does not change the other batch", kn);
    CHECK_STATUS(attn_mha(ctx, D, H, 0.0f, &w, 1, L, L, x, x, &mask, y0), ATTN_OK);
    CHECK(t_max_diff(y, y0, (size_t)L * D) <= 1e-6, "batch 0 changed");

    t_case("property [%s]: encoder layer with an all-padding batch is finite", kn);
    attn_encoder_weights ew = random_layer(&b, w, D, F, &seed);
    for (int nf = 0; nf <= 1; nf++) {
        attn_encoder_config cfg = { D, H, F, 1e-12f, nf, ATTN_ACT_GELU_TANH };
        CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, B, L, x, &mask, y), ATTN_OK);
        for (size_t i = 0; i < nx; i++)
            CHECK(isfinite(y[i]), "norm_first %d element %zu is %g", nf, i, y[i]);
    }
    free_all(&b);
}

/* ---- scale rule and in-place calls --------------------------------------------------- */

static void scale_and_in_place(attn_ctx *ctx, const char *kn)
{
    enum { B = 1, H = 2, L = 4, DH = 9, D = H * DH, F = 7 };
    uint64_t seed = 19;
    buffers b = { 0 };
    size_t n = (size_t)B * H * L * DH;
    float *q = buf(&b, n, &seed), *k = buf(&b, n, &seed), *v = buf(&b, n, &seed);
    float *o1 = buf(&b, n, NULL), *o2 = buf(&b, n, NULL);

    t_case("property [%s]: scale 0 is 1/sqrt(head_dim), and scale matters", kn);
    attn_sdpa_shape s0 = { B, H, L, L, DH, 0.0f, 0, 0 }, s3 = { B, H, L, L, DH, 1.0f / 3.0f, 0, 0 };
    CHECK_STATUS(attn_sdpa(ctx, &s0, q, k, v, NULL, o1), ATTN_OK);
    CHECK_STATUS(attn_sdpa(ctx, &s3, q, k, v, NULL, o2), ATTN_OK);
    CHECK(t_max_diff(o1, o2, n) <= 1e-6, "scale 0 differs from 1/3 for head_dim 9");
    s3.scale = 1.0f;
    CHECK_STATUS(attn_sdpa(ctx, &s3, q, k, v, NULL, o2), ATTN_OK);
    CHECK(t_max_diff(o1, o2, n) > 1e-4, "scale 1 gives the same as 1/3");

    t_case("property [%s]: MHA and encoder layer in place (y == x) match out of place", kn);
    attn_mha_weights w = random_weights(&b, D, &seed);
    attn_encoder_weights ew = random_layer(&b, w, D, F, &seed);
    size_t nx = (size_t)B * L * D;
    float *x = buf(&b, nx, &seed), *xi = buf(&b, nx, NULL), *y = buf(&b, nx, NULL);
    memcpy(xi, x, nx * sizeof(float));
    CHECK_STATUS(attn_mha(ctx, D, H, 0.0f, &w, B, L, L, x, x, NULL, y), ATTN_OK);
    CHECK_STATUS(attn_mha(ctx, D, H, 0.0f, &w, B, L, L, xi, xi, NULL, xi), ATTN_OK);
    CHECK(memcmp(y, xi, nx * sizeof(float)) == 0, "MHA in place differs");
    for (int nf = 0; nf <= 1; nf++) {
        attn_encoder_config cfg = { D, H, F, 1e-5f, nf, ATTN_ACT_RELU };
        memcpy(xi, x, nx * sizeof(float));
        CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, B, L, x, NULL, y), ATTN_OK);
        CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &ew, B, L, xi, NULL, xi), ATTN_OK);
        CHECK(memcmp(y, xi, nx * sizeof(float)) == 0, "encoder (norm_first %d) in place differs",
              nf);
    }
    free_all(&b);
}

/* ---- the encoder stack is its layers ------------------------------------------ */

static void stack_is_its_layers(attn_ctx *ctx, const char *kn)
{
    enum { B = 2, H = 2, L = 5, DH = 6, D = H * DH, F = 20, N = 3 };
    uint64_t seed = 23;
    buffers b = { 0 };
    attn_encoder_weights layers[N];
    for (int i = 0; i < N; i++)
        layers[i] = random_layer(&b, random_weights(&b, D, &seed), D, F, &seed);
    size_t nx = (size_t)B * L * D;
    float *x = buf(&b, nx, &seed), *y = buf(&b, nx, NULL), *ref = buf(&b, nx, NULL);
    float *yi = buf(&b, nx, NULL);
    uint8_t pad[B * L] = { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 };
    attn_mask mask = { .key_padding = pad };
    for (int nf = 0; nf <= 1; nf++) {
        t_case("property [%s]: encoder stack (norm_first %d) = its layers one by one", kn, nf);
        attn_encoder_config cfg = { D, H, F, 1e-5f, nf, ATTN_ACT_GELU_TANH };
        memcpy(ref, x, nx * sizeof(float));
        for (int i = 0; i < N; i++)
            CHECK_STATUS(attn_encoder_layer(ctx, &cfg, &layers[i], B, L, ref, &mask, ref), ATTN_OK);
        CHECK_STATUS(attn_encoder(ctx, &cfg, N, layers, NULL, NULL, B, L, x, &mask, y), ATTN_OK);
        CHECK(memcmp(y, ref, nx * sizeof(float)) == 0, "stack differs from its layers");
        memcpy(yi, x, nx * sizeof(float));
        CHECK_STATUS(attn_encoder(ctx, &cfg, N, layers, NULL, NULL, B, L, yi, &mask, yi), ATTN_OK);
        CHECK(memcmp(yi, ref, nx * sizeof(float)) == 0, "stack in place differs");
        /* Two layers then the third: the stack resumes from any layer. */
        CHECK_STATUS(attn_encoder(ctx, &cfg, 2, layers, NULL, NULL, B, L, x, &mask, yi), ATTN_OK);
        CHECK_STATUS(attn_encoder(ctx, &cfg, 1, layers + 2, NULL, NULL, B, L, yi, &mask, yi),
                     ATTN_OK);
        CHECK(memcmp(yi, ref, nx * sizeof(float)) == 0, "2 + 1 layers differ from 3");
    }

    t_case("property [%s]: encoder stack's final LayerNorm (gamma, beta) = an affine LN of the "
           "stack", kn);
    attn_encoder_config cfg = { D, H, F, 1e-5f, 1, ATTN_ACT_RELU };
    float *gamma = buf(&b, D, &seed), *beta = buf(&b, D, &seed);
    CHECK_STATUS(attn_encoder(ctx, &cfg, N, layers, NULL, NULL, B, L, x, &mask, ref), ATTN_OK);
    CHECK_STATUS(attn_encoder(ctx, &cfg, N, layers, gamma, beta, B, L, x, &mask, y), ATTN_OK);
    double worst = 0.0;
    for (size_t r = 0; r < (size_t)B * L; r++) {
        const float *in = ref + r * D;
        double mean, var;
        t_mean_var(in, D, &mean, &var);
        double inv = 1.0 / sqrt(var + 1e-5);
        for (int j = 0; j < D; j++) {
            double want = (in[j] - mean) * inv * gamma[j] + beta[j];
            double e = fabs(y[r * D + j] - want) / (1.0 + fabs(want));
            worst = e > worst ? e : worst;
        }
    }
    CHECK(worst <= 1e-5, "final LayerNorm off by %.3g", worst);
    free_all(&b);
}

static void properties(attn_ctx *ctx, const char *kn)
{
    permutation(ctx, kn);
    causality(ctx, kn);
    identity_values(ctx, kn);
    all_padding(ctx, kn);
    scale_and_in_place(ctx, kn);
    stack_is_its_layers(ctx, kn);
}

void test_properties(void)
{
    t_each_context("properties [%s]: context", 0, properties);
}
