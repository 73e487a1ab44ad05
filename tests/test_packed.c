/*
 * test_packed.c — weights packed once (attn_weights_pack_encoder): on every
 * kernel an encoder stack reads the packed form (weights changed after
 * packing give the old weights' output on a kernel that packs, the new
 * ones' on one that does not), gives bit for bit the output of the same
 * call unpacked, and stops reading it once destroyed; the set outlives its
 * context; bad arguments are refused and write nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "internal.h"

enum { B = 2, L = 150, D = 64, H = 4, F = 96, LAYERS = 2 };   /* B·L rows: past stream_rows */
#define N_OUT ((size_t)B * L * D)
#define MATRIX_FLOATS (4 * (size_t)D * D + 2 * (size_t)F * D)   /* of a layer */


/* Weights of LAYERS layers in one buffer: Q, K, V, O, W1, W2, biases and
 * LayerNorm parameters, uniform in ±0.2 (gammas around 1). */
static float *make_layers(attn_encoder_weights *w, uint64_t *seed)
{
    const size_t per = 4 * (size_t)D * D + 2 * (size_t)F * D + 9 * (size_t)D + F;
    float *all = malloc(LAYERS * per * sizeof(float));
    if (!all)
        return NULL;
    t_fill(all, LAYERS * per, 0.2f, seed);
    for (int l = 0; l < LAYERS; l++) {
        float *p = all + l * per;
        attn_encoder_weights *e = &w[l];
        const float **mats[] = { &e->attn.w_q, &e->attn.w_k, &e->attn.w_v, &e->attn.w_o };
        for (int i = 0; i < 4; i++, p += (size_t)D * D)
            *mats[i] = p;
        e->w_ff1 = p;
        p += (size_t)F * D;
        e->w_ff2 = p;
        p += (size_t)F * D;
        const float **vecs[] = { &e->attn.b_q, &e->attn.b_k, &e->attn.b_v, &e->attn.b_o,
                                 &e->ln1_beta, &e->ln2_beta, &e->b_ff2 };
        for (int i = 0; i < 7; i++, p += D)
            *vecs[i] = p;
        for (int i = 0; i < 2 * D; i++)
            p[i] += 1.0f;
        e->ln1_gamma = p;
        e->ln2_gamma = p + D;
        p += 2 * D;
        e->b_ff1 = p;
    }
    return all;
}

static attn_status stack(attn_ctx *ctx, const attn_encoder_config *c,
                         const attn_encoder_weights *w, const float *x, float *y)
{
    return attn_encoder(ctx, c, LAYERS, w, NULL, NULL, B, L, x, NULL, y);
}

static void check_kernel(const char *kn, const attn_encoder_config *c, attn_encoder_weights *w,
                         float *weights, size_t n_weights, const float *x)
{
    t_case("packed weights [%s]: the same output bit for bit, read from the packed form", kn);
    attn_ctx *ctx = NULL;
    attn_packed_weights *pw = NULL;
    float *y0 = malloc(N_OUT * sizeof(float)), *y1 = malloc(N_OUT * sizeof(float));
    float *y2 = malloc(N_OUT * sizeof(float)), *saved = malloc(n_weights * sizeof(float));
    CHECK_STATUS(attn_ctx_create(&ctx, kn, 2), ATTN_OK);
    if (!ctx || !y0 || !y1 || !y2 || !saved)
        goto out;
    CHECK_STATUS(stack(ctx, c, w, x, y0), ATTN_OK);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, c, LAYERS, w, &pw), ATTN_OK);
    CHECK_STATUS(stack(ctx, c, w, x, y1), ATTN_OK);
    CHECK(memcmp(y0, y1, N_OUT * sizeof(float)) == 0, "packed differs: max %g",
          t_max_diff(y0, y1, N_OUT));
    /* The weights changed under the packed set (which the contract forbids,
     * and only this test does): a kernel that packs still computes with the
     * old ones; one that does not, with the new. */
    memcpy(saved, weights, n_weights * sizeof(float));
    for (int l = 0; l < LAYERS; l++)   /* the matrices only: they lead each layer's floats */
        for (size_t i = 0; i < MATRIX_FLOATS; i++)
            weights[l * (n_weights / LAYERS) + i] *= 0.5f;
    CHECK_STATUS(stack(ctx, c, w, x, y2), ATTN_OK);
    const attn_kernel *k = attn_registry_find(kn);
    int same = memcmp(y0, y2, N_OUT * sizeof(float)) == 0;
    CHECK(same == (k->pack_weights != NULL), "%s: with the weights changed the output %s",
          k->pack_weights ? "packs" : "packs nothing", same ? "stayed" : "changed");
    t_case("packed weights [%s]: destroyed, the calls read the weights again", kn);
    attn_weights_destroy(pw);
    pw = NULL;
    CHECK_STATUS(stack(ctx, c, w, x, y1), ATTN_OK);
    CHECK(memcmp(y1, y0, N_OUT * sizeof(float)) != 0, "still the old weights' output");
    memcpy(weights, saved, n_weights * sizeof(float));
out:
    attn_weights_destroy(pw);
    attn_ctx_destroy(ctx);
    free(y0);
    free(y1);
    free(y2);
    free(saved);
}

void test_packed(void)
{
    uint64_t seed = 11;
    attn_encoder_config c = { D, H, F, 1e-5f, 0, ATTN_ACT_GELU_ERF };
    attn_encoder_weights w[LAYERS];
    memset(w, 0, sizeof w);
    float *weights = make_layers(w, &seed);
    float *x = malloc(N_OUT * sizeof(float));
    if (!weights || !x) {
        free(weights);
        free(x);
        return;
    }
    t_fill(x, N_OUT, 1.0f, &seed);
    const size_t per = 4 * (size_t)D * D + 2 * (size_t)F * D + 9 * (size_t)D + F;
    for (int i = 0; i < attn_kernel_count(); i++) {
        const char *kn = attn_kernel_name(i);
        if (attn_kernel_supported(kn) && strcmp(kn, "naive") != 0)
            check_kernel(kn, &c, w, weights, LAYERS * per, x);
    }

    t_case("packed weights: a set outlives its context; bad arguments write nothing");
    attn_ctx *ctx = NULL;
    attn_packed_weights *pw = NULL, *sentinel = (attn_packed_weights *)&seed;
    CHECK_STATUS(attn_ctx_create(&ctx, "blocked", 1), ATTN_OK);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, &c, LAYERS, w, &pw), ATTN_OK);
    attn_ctx_destroy(ctx);
    attn_weights_destroy(pw);   /* after its context: no use of it (valgrind, ASan) */
    attn_weights_destroy(NULL);
    CHECK_STATUS(attn_ctx_create(&ctx, "blocked", 1), ATTN_OK);
    pw = sentinel;
    attn_encoder_weights broken = w[0];
    broken.w_ff2 = NULL;
    attn_encoder_config bad = c;
    bad.n_heads = 5;   /* does not divide D */
    CHECK_STATUS(attn_weights_pack_encoder(NULL, &c, 1, w, &pw), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, &c, 0, w, &pw), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, &c, 1, &broken, &pw), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, &bad, 1, w, &pw), ATTN_ERR_INVALID_ARG);
    CHECK_STATUS(attn_weights_pack_encoder(ctx, &c, 1, w, NULL), ATTN_ERR_INVALID_ARG);
    CHECK(pw == sentinel, "*out written on failure");
    attn_ctx_destroy(ctx);
    free(weights);
    free(x);
}
