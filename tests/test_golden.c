/*
 * test_golden.c — the illustrated worked example of self-attention (the
 * project's seed 002: Alammar-style, step by step): three 4-wide inputs, the given key, query and
 * value weights ([in][out], used as x @ W), scale 1.0, one head.
 *
 * Expected output, derived by hand. The seed gives
 *   Q = [[1,0,2],[2,2,2],[2,1,3]], K = [[0,1,1],[4,4,0],[2,3,1]],
 *   V = [[1,2,3],[2,8,0],[2,6,3]], scores Q·Kᵀ = [[2,4,4],[4,16,12],[4,12,10]].
 * The exact softmax of row r is e^{s_j}/Σ e^{s_j}, so
 *   out1 = (V1 + e²·(V2 + V3)) / (1 + 2e²)
 *   out2 = (V1 + e¹²·V2 + e⁸·V3) / (1 + e¹² + e⁸)
 *   out3 = (V1 + e⁸·V2 + e⁶·V3) / (1 + e⁸ + e⁶)
 * evaluated in float64 (Python's math.exp) and printed with 17 digits; PyTorch
 * in float64 (`tests/gen_fixtures.py --seed002`) agrees to within 1e-15. The seed's
 * own printed result [2.0, 7.0, 1.5] is from softmax rounded to one decimal
 * and is NOT the expected answer.
 */
#include <string.h>

#include "check.h"

static const double expected[3][3] = {
    { 1.9366210616669621, 6.6831053083348113, 1.5950684074995563 },
    { 1.9999939663351451, 7.9639915951322147, 0.053976405312549595 },
    { 1.9997046127769651, 7.7598922546577853, 0.35838929467511527 },
};

static const float x[3][4] = { { 1, 0, 1, 0 }, { 0, 2, 0, 2 }, { 1, 1, 1, 1 } };
static const float w_key[4][3] = { { 0, 0, 1 }, { 1, 1, 0 }, { 0, 1, 0 }, { 1, 1, 0 } };
static const float w_query[4][3] = { { 1, 0, 1 }, { 1, 0, 0 }, { 0, 0, 1 }, { 0, 1, 1 } };
static const float w_value[4][3] = { { 0, 2, 0 }, { 0, 3, 0 }, { 1, 0, 3 }, { 1, 1, 0 } };

/* out = x @ w: small integers, so exact in float. */
static void project(const float w[4][3], float out[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            out[i][j] = 0;
            for (int t = 0; t < 4; t++)
                out[i][j] += x[i][t] * w[t][j];
        }
}

/* The seed's [in=4][out=3] weight as an nn.Linear [out=4][in=4] weight whose
 * fourth output is zero, so that a d_model = 4 MHA computes the seed's
 * 3-wide projections (the zero column adds nothing to any dot product). */
static void as_linear(const float w[4][3], float out[4][4])
{
    memset(out, 0, sizeof(float) * 16);
    for (int o = 0; o < 3; o++)
        for (int i = 0; i < 4; i++)
            out[o][i] = w[i][o];
}

static double max_error(const float *y, int stride)
{
    double err = 0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = y[i * stride + j] - expected[i][j];
            d = d < 0 ? -d : d;
            if (!(d <= err))
                err = d; /* NaN becomes the error */
        }
    return err;
}

/* Runs in the case "seed 002 worked example, SDPA scale 1", opened by
 * test_golden with the context. */
static void worked_example(attn_ctx *ctx, const char *kernel)
{
    float q[3][3], k[3][3], v[3][3];
    project(w_query, q);
    project(w_key, k);
    project(w_value, v);
    attn_sdpa_shape s = { 1, 1, 3, 3, 3, 1.0f, 0, 0 };
    float out[3][3];
    CHECK_STATUS(attn_sdpa(ctx, &s, &q[0][0], &k[0][0], &v[0][0], NULL, &out[0][0]), ATTN_OK);
    /* api.md §4 SDPA bound: 2e-5·max(1, max|V|) with max|V| = 8. */
    double err = max_error(&out[0][0], 3);
    CHECK(err <= 2e-5 * 8, "max error %.3g", err);

    t_case("seed 002 worked example through MHA (d_model 4, 1 head, W_o = I) [%s]", kernel);
    float wq[4][4], wk[4][4], wv[4][4], wo[4][4] = { { 1 }, { 0, 1 }, { 0, 0, 1 }, { 0, 0, 0, 1 } };
    as_linear(w_query, wq);
    as_linear(w_key, wk);
    as_linear(w_value, wv);
    attn_mha_weights w = { &wq[0][0], &wk[0][0], &wv[0][0], &wo[0][0], NULL, NULL, NULL, NULL };
    float y[3][4];
    CHECK_STATUS(attn_mha(ctx, 4, 1, 1.0f, &w, 1, 3, 3, &x[0][0], &x[0][0], NULL, &y[0][0]),
                 ATTN_OK);
    err = max_error(&y[0][0], 4);
    CHECK(err <= 1e-4 * 8, "max error %.3g", err);
    CHECK(y[0][3] == 0 && y[1][3] == 0 && y[2][3] == 0, "padding column not zero");
}

void test_golden(void)
{
    t_each_context("seed 002 worked example, SDPA scale 1 [%s]", 1, worked_example);
}
