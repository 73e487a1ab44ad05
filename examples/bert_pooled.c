/*
 * bert_pooled.c — a BERT checkpoint end to end through libattn's public API:
 * load the safetensors file, embed a batch of token ids, run the encoder
 * stack with the padding masked, and print each sequence's pooled output,
 * tanh(W_pool · h[CLS] + b_pool) (BERT's pooler, computed here).
 *
 *   bert_pooled MODEL.safetensors [--heads H] IDS [IDS ...]
 *
 * Each IDS is one sequence, comma-separated token ids (no tokenizer here:
 * with bert-base-uncased, "101,7592,2088,102" is [CLS] hello world [SEP]).
 * Shorter sequences are padded to the longest with id 0, and the padding
 * is masked out of attention. Built by `make examples` against the
 * installed library (pkg-config attn).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <attn.h>

#define MAX_BATCH 64
#define MAX_LEN 512

static int parse_ids(const char *text, int32_t *ids, int max)
{
    int n = 0;
    for (const char *p = text; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || n == max || v < 0 || v > INT32_MAX)
            return -1;
        ids[n++] = (int32_t)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

int main(int argc, char **argv)
{
    int heads = 0, batch = 0, len = 0, lens[MAX_BATCH];
    static int32_t ids[MAX_BATCH][MAX_LEN];
    const char *path = argc > 1 ? argv[1] : NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--heads") == 0 && i + 1 < argc) {
            heads = atoi(argv[++i]);
            continue;
        }
        if (batch == MAX_BATCH || (lens[batch] = parse_ids(argv[i], ids[batch], MAX_LEN)) <= 0) {
            fprintf(stderr, "bert_pooled: '%s' is not a list of token ids (at most %d)\n",
                    argv[i], MAX_LEN);
            return 2;
        }
        len = lens[batch] > len ? lens[batch] : len;
        batch++;
    }
    if (!path || batch == 0) {
        fprintf(stderr, "usage: bert_pooled MODEL.safetensors [--heads H] IDS [IDS ...]\n");
        return 2;
    }

    char why[512];
    attn_bert *model = NULL;
    attn_status st = attn_bert_load(&model, path, heads, why, sizeof why);
    if (st != ATTN_OK) {
        fprintf(stderr, "bert_pooled: %s\n", why);
        return 1;
    }
    const int d = model->layer_config.d_model;
    printf("%s: %d layers, D %d, %d heads, vocabulary %d, %d positions\n", path, model->n_layers, d,
           model->layer_config.n_heads, model->embed_config.vocab_size,
           model->embed_config.max_positions);

    /* [B][L] ids, padded with 0; key_padding: nonzero = a real token. */
    int32_t *flat = calloc((size_t)batch * len, sizeof *flat);
    uint8_t *real = calloc((size_t)batch * len, 1);
    float *x = malloc(sizeof(float) * (size_t)batch * len * d);
    attn_ctx *ctx = NULL;
    if (!flat || !real || !x || attn_ctx_create(&ctx, "auto", 0) != ATTN_OK) {
        fprintf(stderr, "bert_pooled: out of memory or no kernel\n");
        return 1;
    }
    for (int b = 0; b < batch; b++)
        for (int l = 0; l < lens[b]; l++) {
            flat[b * len + l] = ids[b][l];
            real[b * len + l] = 1;
        }
    attn_mask mask = { .key_padding = real };
    st = attn_embed(ctx, &model->embed_config, &model->embed, batch, len, flat, NULL, 0, x);
    if (st == ATTN_OK)
        st = attn_encoder(ctx, &model->layer_config, model->n_layers, model->layers, NULL, NULL,
                          batch, len, x, &mask, x);
    if (st != ATTN_OK) {
        /* e.g. an id outside the vocabulary, or a sequence longer than the positions */
        fprintf(stderr, "bert_pooled: %s\n", attn_strerror(st));
        return 1;
    }
    printf("kernel %s\n", attn_ctx_kernel(ctx));

    for (int b = 0; b < batch; b++) {
        const float *cls = x + (size_t)b * len * d;   /* the first token's hidden state */
        printf("sequence %d (%d tokens): pooled", b, lens[b]);
        double norm = 0.0;
        for (int j = 0; j < d; j++) {
            double v = cls[j];
            if (model->pooler_w) {
                v = model->pooler_b[j];
                for (int i = 0; i < d; i++)
                    v += (double)model->pooler_w[(size_t)j * d + i] * cls[i];
                v = tanh(v);
            }
            norm += v * v;
            if (j < 8)
                printf(" %.6f", v);
        }
        printf("%s (norm %.6f)\n", d > 8 ? " ..." : "", sqrt(norm));
    }
    attn_ctx_destroy(ctx);
    attn_bert_free(model);
    free(flat);
    free(real);
    free(x);
    return 0;
}
