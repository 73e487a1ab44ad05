/*
 * fuzz_model.c — libFuzzer target: the safetensors reader and the BERT
 * mapping of attn_bert_load (model/), on the input as a file's bytes.
 *
 * The reader's tensors must lie inside the input, sized as their shape and
 * dtype say, sorted and found by their names; every byte is read (ASan
 * checks the bounds). A model that loads must be consistent with its
 * configs, and every float of every tensor pointer is read as the kernels
 * would read it. A refusal must leave one terminated line and the model
 * untouched. n_heads is 1 (any D), or 0 (D / 64) for inputs of odd size.
 * Any inconsistency traps.
 */
#include <stdint.h>
#include <string.h>

#include "../model/bert_load.h"
#include "../model/safetensors.h"

static volatile float sink;
static volatile unsigned char byte_sink;

static void check_message(const char *err, size_t len)
{
    if (!memchr(err, '\0', len) || err[0] == '\0' || strchr(err, '\n'))
        __builtin_trap();
}

static void reader(const uint8_t *data, size_t size)
{
    attn_st_file f;
    char err[256];
    memset(err, 'x', sizeof err);
    if (attn_safetensors_parse(data, size, &f, err, sizeof err) != ATTN_OK) {
        check_message(err, sizeof err);
        if (f.n != 0 || f.tensors || f.names)
            __builtin_trap();
        return;
    }
    unsigned char acc = 0;
    for (int i = 0; i < f.n; i++) {
        const attn_st_tensor *t = &f.tensors[i];
        if (t->data < data || t->n_bytes > size ||
            t->data - data > (ptrdiff_t)(size - t->n_bytes) ||
            t->n_bytes != t->n_elements * attn_st_dtype_size(t->dtype) ||
            t->rank > ATTN_ST_MAX_RANK ||
            (i > 0 && strcmp(f.tensors[i - 1].name, t->name) >= 0) ||
            attn_safetensors_find(&f, t->name) != t)
            __builtin_trap();
        for (size_t j = 0; j < t->n_bytes; j++)
            acc ^= t->data[j];
    }
    byte_sink = acc;
    attn_safetensors_free(&f);
}

static void read_floats(const float *p, long long n)
{
    float acc = 0;
    for (long long i = 0; i < n; i++)
        acc += p[i];
    sink = acc;
}

static void mapping(const uint8_t *data, size_t size)
{
    static attn_bert sentinel;
    attn_bert *m = &sentinel;
    char err[256];
    memset(err, 'x', sizeof err);
    if (attn_bert_from_buffer(&m, data, size, size % 2 ? 0 : 1, err, sizeof err) != ATTN_OK) {
        check_message(err, sizeof err);
        if (m != &sentinel)
            __builtin_trap();
        return;
    }
    const attn_embedding_config *e = &m->embed_config;
    const attn_encoder_config *c = &m->layer_config;
    long long D = e->d_model, F = c->d_ff;
    if (D < 1 || e->vocab_size < 1 || e->max_positions < 1 || e->n_token_types < 0 ||
        c->d_model != D || c->n_heads < 1 || D % c->n_heads || F < 1 || m->n_layers < 1 ||
        (e->n_token_types > 0) != (m->embed.token_type != NULL) ||
        (m->pooler_w != NULL) != (m->pooler_b != NULL))
        __builtin_trap();
    read_floats(m->embed.token, e->vocab_size * D);
    read_floats(m->embed.position, e->max_positions * D);
    if (e->n_token_types)
        read_floats(m->embed.token_type, e->n_token_types * D);
    read_floats(m->embed.ln_gamma, D);
    read_floats(m->embed.ln_beta, D);
    if (m->pooler_w) {
        read_floats(m->pooler_w, D * D);
        read_floats(m->pooler_b, D);
    }
    for (int l = 0; l < m->n_layers; l++) {
        const attn_encoder_weights *w = &m->layers[l];
        const float *dd[4] = { w->attn.w_q, w->attn.w_k, w->attn.w_v, w->attn.w_o };
        const float *d[9] = { w->attn.b_q, w->attn.b_k, w->attn.b_v, w->attn.b_o, w->ln1_gamma,
                              w->ln1_beta, w->ln2_gamma, w->ln2_beta, w->b_ff2 };
        for (int i = 0; i < 4; i++)
            read_floats(dd[i], D * D);
        for (int i = 0; i < 9; i++)
            read_floats(d[i], D);
        read_floats(w->w_ff1, F * D);
        read_floats(w->b_ff1, F);
        read_floats(w->w_ff2, D * F);
    }
    attn_bert_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader(data, size);
    mapping(data, size);
    return 0;
}
