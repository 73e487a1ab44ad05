/* example.c — the README's example: self-attention over one 3-token sequence.
 * Built against the installed library by `make check-install`. */
#include <stdio.h>

#include <attn.h>

int main(void)
{
    enum { B = 1, L = 3, D = 4, H = 2 };
    float x[B * L * D] = { 1, 0, 1, 0,   0, 2, 0, 2,   1, 1, 1, 1 };
    float w[D * D] = { 1, 0, 0, 0,   0, 1, 0, 0,   0, 0, 1, 0,   0, 0, 0, 1 }; /* identity */
    float y[B * L * D];
    attn_mha_weights weights = { w, w, w, w, NULL, NULL, NULL, NULL };
    attn_mask causal = { .causal = 1 };

    attn_ctx *ctx;
    attn_status st = attn_ctx_create(&ctx, "auto", 0);
    if (st != ATTN_OK) {
        fprintf(stderr, "attn_ctx_create: %s\n", attn_strerror(st));
        return 1;
    }
    st = attn_mha(ctx, D, H, 0.0f /* 1/sqrt(D/H) */, &weights, B, L, L, x, x, &causal, y);
    if (st != ATTN_OK) {
        fprintf(stderr, "attn_mha: %s\n", attn_strerror(st));
        attn_ctx_destroy(ctx);
        return 1;
    }
    printf("kernel %s\n", attn_ctx_kernel(ctx));
    for (int i = 0; i < L; i++)
        printf("y[%d] = %.4f %.4f %.4f %.4f\n", i, y[i * D], y[i * D + 1], y[i * D + 2], y[i * D + 3]);
    attn_ctx_destroy(ctx);
    return 0;
}
