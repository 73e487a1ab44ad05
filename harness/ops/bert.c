/* bert.c — op=bert: a BERT end to end, the embeddings (token, position,
 * type, LayerNorm) and a stack of `layers` post-LN GELU encoder layers, on
 * BERT-base's sizes unless told otherwise; random weights, or a
 * checkpoint's (`attnbench run --weights`). */
#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "workload.h"

static int resolve(const ab_shape_keys *k, ab_shape *s, char *err, size_t len)
{
    (void)err, (void)len;
    s->q_len = s->kv_len = k->v[AB_KEY_L];
    return 0;
}

/* The layers' products; the embeddings are gathers. */
static double flops(const ab_shape *s)
{
    return s->layers * ab_encoder_layer_flops(s);
}

/* The ids and type ids (int32), the embedding rows gathered — a token row
 * per position of every sequence, but the L position rows and the 2 type
 * rows once, shared by the batch (counted B times, BERT-base at B 8, L 512
 * was 24 MB, 6%, over) — their LayerNorm, every layer's weights, y. */
static double bytes(const ab_shape *s)
{
    double b = s->batch, lq = s->q_len, d = (double)s->heads * s->head_dim;
    double floats = 2.0 * b * lq + b * lq * d + lq * d + 2.0 * d + 2.0 * d
                  + s->layers * ab_encoder_weight_floats(d, s->d_ff) + b * lq * d;
    return 4.0 * floats + ab_mask_bytes(s);
}

/* op=bert without a file: BERT-base's tables (a vocabulary of 30522, 512
 * positions or L if more, 2 token types) drawn at random, ids uniform over
 * the vocabulary, type 0 for the first half of each sequence and 1 after
 * (a sentence pair). */
#define BERT_VOCAB 30522
#define BERT_POSITIONS 512
static int embeddings(ab_workload *w, size_t misalign, uint64_t *seed)
{
    const ab_shape *s = &w->shape;
    size_t b = (size_t)s->batch, l = (size_t)s->q_len, d = (size_t)s->heads * s->head_dim;
    if (w->model) {
        w->emb_cfg = w->model->embed_config;
        w->emb = w->model->embed;
        w->enc_cfg = w->model->layer_config;
        w->layers = w->model->layers;
    } else {
        attn_embedding_config c = { BERT_VOCAB, s->q_len > BERT_POSITIONS ? s->q_len : BERT_POSITIONS,
                                    2, (int)d, 1e-12f };
        /* The token table is larger than the buffers ab_workload_init
         * sized: it must not wrap around size_t either. */
        if (!((double)BERT_VOCAB * d * sizeof(float) < (double)(PTRDIFF_MAX / 2)))
            return -1;
        w->emb_cfg = c;
        w->enc_cfg.ln_eps = 1e-12f;
        w->emb.token = ab_workload_filled(w, (size_t)c.vocab_size * d, misalign, 0.0, 1.0, seed);
        w->emb.position = ab_workload_filled(w, (size_t)c.max_positions * d, misalign, 0.0, 1.0,
                                             seed);
        w->emb.token_type = ab_workload_filled(w, 2 * d, misalign, 0.0, 1.0, seed);
        w->emb.ln_gamma = ab_workload_filled(w, d, misalign, 1.0, 0.2, seed);
        w->emb.ln_beta = ab_workload_filled(w, d, misalign, 0.0, 0.2, seed);
        w->layers = ab_workload_encoder_stack(w, s->layers, misalign, seed);
        if (!w->emb.token || !w->emb.position || !w->emb.token_type || !w->emb.ln_gamma
            || !w->emb.ln_beta || !w->layers)
            return -1;
    }
    w->ids = ab_workload_take(w, b * l * sizeof(int32_t), misalign);
    w->type_ids = ab_workload_take(w, b * l * sizeof(int32_t), misalign);
    if (!w->ids || !w->type_ids)
        return -1;
    int types = w->emb_cfg.n_token_types;
    for (size_t i = 0; i < b * l; i++) {
        w->ids[i] = (int32_t)(ab_rng_next(seed) % (uint64_t)w->emb_cfg.vocab_size);
        w->type_ids[i] = types > 1 && i % l >= l / 2 ? 1 : 0;
    }
    return 0;
}

static int make(ab_workload *w, uint64_t *seed, size_t misalign)
{
    if (ab_workload_inputs(w, 0, misalign, seed) != 0)
        return -1;
    ab_workload_layer_config(w);
    return embeddings(w, misalign, seed);
}

/* The embeddings, then the stack in place on out. */
static attn_status run(const ab_library *lib, attn_ctx *ctx, const ab_workload *w, float *out)
{
    const ab_shape *s = &w->shape;
    attn_status st = lib->embed(ctx, &w->emb_cfg, &w->emb, s->batch, s->q_len, w->ids,
                                w->type_ids, 0, out);
    return st != ATTN_OK ? st
         : lib->encoder(ctx, &w->enc_cfg, s->layers, w->layers, NULL, NULL, s->batch, s->q_len,
                        out, &w->mask, out);
}

static attn_status pack(const ab_library *lib, attn_ctx *ctx, const ab_workload *w,
                        attn_packed_weights **out)
{
    return lib->weights_pack_encoder(ctx, &w->enc_cfg, w->shape.layers, w->layers, out);
}

const ab_op_row ab_op__bert = {
    .name = "bert",
    .description = "a BERT end to end: embeddings, then `layers` post-LN GELU encoder layers "
                   "(BERT-base's D 768, H 12, F 3072, 12 layers by default)",
    .keys = AB_LAYER_KEYS | AB_KEY_BIT(L) | AB_KEY_BIT(layers),
    .masks = AB_MASKS_PADDING,
    /* BERT-base unless told otherwise: 12 heads (of 64, every op's Dh),
     * post-LN, 12 layers; GELU is every layer's default activation. */
    .own_defaults = AB_KEY_BIT(H) | AB_KEY_BIT(norm) | AB_KEY_BIT(layers),
    .default_of = { [AB_KEY_H] = 12, [AB_KEY_norm] = 0, [AB_KEY_layers] = 12 },
    .text = { AB_KEY_B, AB_KEY_L, AB_KEY_layers, AB_KEY_D, AB_KEY_H, AB_KEY_F, AB_KEY_norm,
              AB_KEY_act, AB_KEY_mask, AB_KEY_END },
    .label = { AB_KEY_B, AB_KEY_D, AB_KEY_H, AB_KEY_L, AB_KEY_layers, AB_KEY_F, AB_KEY_norm,
               AB_KEY_act, AB_KEY_mask, AB_KEY_END },
    .resolve = resolve, .flops = flops, .bytes = bytes, .make = make, .run = run,
    .pack = pack,
    .bucket = { .wisdom_op = ATTN_OP_ENCODER },    /* attn_encoder chooses once for its layers */
    .tolerance = AB_TOL_OUTPUT, .gemms = 1,
    .takes_model = 1,
    /* a call: B sequences of L tokens through the whole model */
    .rate = { "sequences_per_second", "ms_per_sequence", AB_KEY_B },
};
