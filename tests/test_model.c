/*
 * test_model.c — attn_bert_load (model/bert_load.c, model/safetensors.c).
 *
 * The test writes its own safetensors files: a tiny BERT whose every tensor
 * holds values that name it (tensor k, element j: k + j/4096 in F32, and
 * ±(k+1)·2^-(j%4) in F16 / BF16, exact in each), so that every pointer of
 * the loaded model is checked to be the right tensor, converted exactly.
 * Then damaged files, one fault each: each is refused with its status and
 * a one-line message that starts with the path and names the tensor, and
 * leaves *model as it was.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

/* ---- a safetensors writer ---------------------------------------------------- */

typedef struct tspec {
    char name[96];
    char dtype[16];                      /* as written; data sized by F32/F16/BF16/I32/I64 */
    int rank;
    long long shape[2];
    int k;                               /* the values' tensor index */
    const char *shape_json;              /* written instead of the shape, or NULL */
    int offsets_given;                   /* write [ob, oe] instead of the real offsets */
    unsigned long long ob, oe;
    const uint16_t *raw16;               /* the first elements' 16-bit patterns, or NULL */
    int n_raw;
} tspec;

enum { MAX_T = 80 };

static size_t elem_size(const char *dtype)
{
    return !strcmp(dtype, "F32") || !strcmp(dtype, "I32") ? 4 : !strcmp(dtype, "I64") ? 8
         : !strcmp(dtype, "F16") || !strcmp(dtype, "BF16") ? 2 : 1;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Value j of tensor k, as the file stores it in dtype: exact in F16/BF16. */
static float value(const char *dtype, int k, long long j)
{
    if (!strcmp(dtype, "F32"))
        return (float)k + (float)j / 4096.0f;
    float v = (float)(k + 1) / (float)(1 << (j % 4));
    return j % 2 ? -v : v;
}

static uint16_t f16_of(float f)           /* normal values that F16 holds exactly */
{
    uint32_t u = f32_bits(f);
    return (uint16_t)((u >> 16 & 0x8000) | ((((u >> 23) & 255) - 112) << 10) | (u >> 13 & 0x3ff));
}

static size_t n_elems(const tspec *t)
{
    size_t n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= (size_t)t->shape[i];
    return n;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> 8 * i);
}

static char header[1 << 20];

/* The file of the tensors t[0, n): members (e.g. "__metadata__") first when
 * given; the first occurrence of from in the header replaced by to; the
 * header padded with spaces so that the data starts skew bytes past a
 * multiple of 8. The caller frees the bytes. */
static unsigned char *build(const tspec *t, int n, const char *members, int skew,
                            const char *from, const char *to, size_t *len)
{
    size_t data = 0, h = 0;
    h += (size_t)snprintf(header + h, sizeof header - h, "{%s%s", members ? members : "",
                          members && n ? "," : "");
    for (int i = 0; i < n; i++) {
        size_t bytes = n_elems(&t[i]) * elem_size(t[i].dtype);
        char shape[64] = "[";
        for (int d = 0; d < t[i].rank; d++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld",
                     d ? "," : "", t[i].shape[d]);
        strcat(shape, "]");
        h += (size_t)snprintf(header + h, sizeof header - h,
                              "%s\"%s\":{\"dtype\":\"%s\",\"shape\":%s,"
                              "\"data_offsets\":[%llu,%llu]}",
                              i ? "," : "", t[i].name, t[i].dtype,
                              t[i].shape_json ? t[i].shape_json : shape,
                              t[i].offsets_given ? t[i].ob : (unsigned long long)data,
                              t[i].offsets_given ? t[i].oe : (unsigned long long)(data + bytes));
        data += bytes;
    }
    h += (size_t)snprintf(header + h, sizeof header - h, "}");
    if (from) {
        char *at = strstr(header, from);
        if (at) {
            size_t a = (size_t)(at - header), lf = strlen(from), lt = strlen(to);
            memmove(header + a + lt, header + a + lf, h - a - lf + 1);
            memcpy(header + a, to, lt);
            h = h - lf + lt;
        }
    }
    while ((8 + h) % 8 != (size_t)skew)
        header[h++] = ' ';
    *len = 8 + h + data;
    unsigned char *out = calloc(1, *len), *p = out + 8 + h;
    put_le(out, h, 8);
    memcpy(out + 8, header, h);
    for (int i = 0; i < n; i++) {
        size_t m = n_elems(&t[i]), es = elem_size(t[i].dtype);
        for (size_t j = 0; j < m; j++, p += es) {
            float v = value(t[i].dtype, t[i].k, (long long)j);
            if (t[i].raw16 && (int)j < t[i].n_raw)
                put_le(p, t[i].raw16[j], 2);
            else if (!strcmp(t[i].dtype, "F32"))
                put_le(p, f32_bits(v), 4);
            else if (!strcmp(t[i].dtype, "F16"))
                put_le(p, f16_of(v), 2);
            else if (!strcmp(t[i].dtype, "BF16"))
                put_le(p, f32_bits(v) >> 16, 2);
            else
                put_le(p, j, (int)es);
        }
    }
    return out;
}

static char dir[] = "/tmp/attn-model-XXXXXX";
static char path[128];

static const char *write_file(const char *name, const unsigned char *bytes, size_t len)
{
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, len, f) == len, "writing %s", path);
    if (f)
        fclose(f);
    return path;
}

/* ---- the tiny BERT ------------------------------------------------------------- */

typedef struct bert_opts {
    const char *dtype;                   /* F32, F16, BF16, or "mixed" (by tensor) */
    const char *prefix;                  /* "" or "bert." */
    int n_layers, V, P, T, D, F;         /* T 0: no token_type_embeddings */
    int pooler, old_ln_names;
} bert_opts;

static const char *const layer_names[16] = {
    "attention.self.query.weight", "attention.self.query.bias", "attention.self.key.weight",
    "attention.self.key.bias", "attention.self.value.weight", "attention.self.value.bias",
    "attention.output.dense.weight", "attention.output.dense.bias",
    "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
    "intermediate.dense.weight", "intermediate.dense.bias", "output.dense.weight",
    "output.dense.bias", "output.LayerNorm.weight", "output.LayerNorm.bias",
};

static int add(tspec *t, int n, const bert_opts *o, const char *name, long long d0, long long d1)
{
    static const char *const mixed[3] = { "F32", "F16", "BF16" };
    memset(&t[n], 0, sizeof t[n]);
    snprintf(t[n].name, sizeof t[n].name, "%s%s", o->prefix, name);
    snprintf(t[n].dtype, sizeof t[n].dtype, "%s",
             strcmp(o->dtype, "mixed") ? o->dtype : mixed[n % 3]);
    t[n].rank = d1 ? 2 : 1;
    t[n].shape[0] = d0;
    t[n].shape[1] = d1;
    t[n].k = n;
    return n + 1;
}

/* The tensors of o into t; their number. The LayerNorms are named gamma /
 * beta when old_ln_names. */
static int make_bert(tspec *t, const bert_opts *o)
{
    int n = 0, D = o->D, F = o->F;
    const char *w = o->old_ln_names ? "gamma" : "weight", *b = o->old_ln_names ? "beta" : "bias";
    char name[96];
    n = add(t, n, o, "embeddings.word_embeddings.weight", o->V, D);
    n = add(t, n, o, "embeddings.position_embeddings.weight", o->P, D);
    if (o->T)
        n = add(t, n, o, "embeddings.token_type_embeddings.weight", o->T, D);
    snprintf(name, sizeof name, "embeddings.LayerNorm.%s", w);
    n = add(t, n, o, name, D, 0);
    snprintf(name, sizeof name, "embeddings.LayerNorm.%s", b);
    n = add(t, n, o, name, D, 0);
    for (int l = 0; l < o->n_layers; l++)
        for (int i = 0; i < 16; i++) {
            const char *s = layer_names[i];
            long long d0 = i == 10 || i == 11 ? F : D;
            long long d1 = i % 2 ? 0 : i == 12 ? F : i == 8 || i == 14 ? 0 : D;
            char base[64];
            snprintf(base, sizeof base, "%s", s);
            if (o->old_ln_names && strstr(base, "LayerNorm"))
                snprintf(strrchr(base, '.') + 1, 8, "%s", i % 2 ? b : w);
            snprintf(name, sizeof name, "encoder.layer.%d.%s", l, base);
            n = add(t, n, o, name, d0, d1);
        }
    if (o->pooler) {
        n = add(t, n, o, "pooler.dense.weight", D, D);
        n = add(t, n, o, "pooler.dense.bias", D, 0);
    }
    return n;
}

static const bert_opts tiny = { "F32", "", 2, 11, 9, 2, 8, 12, 1, 0 };

/* The file of the BERT of o, unchanged. The caller frees the bytes. */
static unsigned char *bert_file(const bert_opts *o, size_t *len)
{
    static tspec t[MAX_T];
    int n = make_bert(t, o);
    return build(t, n, NULL, 0, NULL, NULL, len);
}

/* The BERT of o written as the file name: its path. */
static const char *write_bert(const char *name, const bert_opts *o)
{
    size_t len;
    unsigned char *bytes = bert_file(o, &len);
    const char *file = write_file(name, bytes, len);
    free(bytes);
    return file;
}

/* The model's pointer for the canonical (new-style) name. */
static const float *pointer_of(const attn_bert *m, const char *name)
{
    if (!strncmp(name, "bert.", 5))
        name += 5;
    const char *ln = strstr(name, "LayerNorm.");
    char canon[96];
    if (ln && (!strcmp(ln + 10, "gamma") || !strcmp(ln + 10, "beta"))) {
        snprintf(canon, sizeof canon, "%.*s%s", (int)(ln + 10 - name), name,
                 ln[10] == 'g' ? "weight" : "bias");
        name = canon;
    }
    static const char *const top[7] = {
        "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
        "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight",
        "embeddings.LayerNorm.bias", "pooler.dense.weight", "pooler.dense.bias",
    };
    const float *top_p[7] = { m->embed.token, m->embed.position, m->embed.token_type,
                              m->embed.ln_gamma, m->embed.ln_beta, m->pooler_w, m->pooler_b };
    for (int i = 0; i < 7; i++)
        if (!strcmp(name, top[i]))
            return top_p[i];
    int l, at;
    if (sscanf(name, "encoder.layer.%d.%n", &l, &at) != 1 || l < 0 || l >= m->n_layers)
        return NULL;
    const attn_encoder_weights *w = &m->layers[l];
    const float *lp[16] = { w->attn.w_q, w->attn.b_q, w->attn.w_k, w->attn.b_k, w->attn.w_v,
                            w->attn.b_v, w->attn.w_o, w->attn.b_o, w->ln1_gamma, w->ln1_beta,
                            w->w_ff1, w->b_ff1, w->w_ff2, w->b_ff2, w->ln2_gamma, w->ln2_beta };
    for (int i = 0; i < 16; i++)
        if (!strcmp(name + at, layer_names[i]))
            return lp[i];
    return NULL;
}

/* Every tensor of t found at its pointer with its values (those of raw16
 * excepted: the caller checks them). */
static void check_values(const attn_bert *m, const tspec *t, int n)
{
    for (int i = 0; i < n; i++) {
        if (t[i].k < 0)                      /* unrelated to BERT */
            continue;
        const float *p = pointer_of(m, t[i].name);
        CHECK(p != NULL, "%s: no pointer", t[i].name);
        if (!p)
            continue;
        CHECK((uintptr_t)p % 4 == 0, "%s: misaligned pointer", t[i].name);
        size_t count = n_elems(&t[i]);
        for (size_t j = (size_t)t[i].n_raw; j < count; j++)
            if (p[j] != value(t[i].dtype, t[i].k, (long long)j)) {
                CHECK(0, "%s (%s) [%zu] = %g, expected %g", t[i].name, t[i].dtype, j, p[j],
                      value(t[i].dtype, t[i].k, (long long)j));
                break;
            }
    }
}

static attn_bert sentinel_model;

/* Loads path; ATTN_OK expected. The model, or NULL. */
static attn_bert *load_ok(const char *file, int n_heads)
{
    attn_bert *m = NULL;
    char err[512] = "";
    attn_status st = attn_bert_load(&m, file, n_heads, err, sizeof err);
    CHECK_STATUS(st, ATTN_OK);
    CHECK(st == ATTN_OK || err[0], "no message");
    if (st != ATTN_OK)
        fprintf(stderr, "  %s\n", err);
    return st == ATTN_OK ? m : NULL;
}

/* One good file: written, loaded, every pointer and the configs checked. */
static void good_case(const char *what, const bert_opts *o, const char *members, int skew,
                      const tspec *extra, int n_extra)
{
    t_case("model: load %s", what);
    static tspec t[MAX_T];
    int n = make_bert(t, o);
    for (int i = 0; i < n_extra; i++)
        t[n++] = extra[i];
    size_t len;
    unsigned char *bytes = build(t, n, members, skew, NULL, NULL, &len);
    attn_bert *m = load_ok(write_file("good.safetensors", bytes, len), 2);
    free(bytes);
    if (!m)
        return;
    const attn_embedding_config *e = &m->embed_config;
    CHECK(e->vocab_size == o->V && e->max_positions == o->P && e->n_token_types == o->T &&
          e->d_model == o->D && e->ln_eps == 1e-12f, "embedding config %d %d %d %d %g",
          e->vocab_size, e->max_positions, e->n_token_types, e->d_model, (double)e->ln_eps);
    const attn_encoder_config *c = &m->layer_config;
    CHECK(c->d_model == o->D && c->n_heads == 2 && c->d_ff == o->F && c->ln_eps == 1e-12f &&
          c->norm_first == 0 && c->act == ATTN_ACT_GELU_ERF, "layer config %d %d %d %g %d %d",
          c->d_model, c->n_heads, c->d_ff, (double)c->ln_eps, c->norm_first, (int)c->act);
    CHECK(m->n_layers == o->n_layers, "n_layers %d", m->n_layers);
    CHECK((m->embed.token_type != NULL) == (o->T > 0), "token_type %p",
          (const void *)m->embed.token_type);
    CHECK((m->pooler_w != NULL) == (o->pooler != 0) && (m->pooler_b != NULL) == (o->pooler != 0),
          "pooler %p %p", (const void *)m->pooler_w, (const void *)m->pooler_b);
    check_values(m, t, n);
    /* F32 in an aligned file is used in place: the position table follows
     * the token table in the file as in memory (converted tensors are
     * padded to 64 bytes, V·D = 88 floats is not). */
    if (!strcmp(o->dtype, "F32"))
        CHECK((m->embed.position - m->embed.token == (ptrdiff_t)o->V * o->D) == (skew % 4 == 0),
              "F32 tensors %s in place", skew % 4 == 0 ? "not" : "wrongly");
    attn_bert_free(m);
}

/* F16 and BF16 conversion of chosen bit patterns, exactly. */
static void conversion_case(const char *dtype, const uint16_t *in, const uint32_t *want)
{
    t_case("model: %s conversion (subnormals, -0, inf, NaN)", dtype);
    static tspec t[MAX_T];
    bert_opts o = tiny;
    o.dtype = dtype;
    int n = make_bert(t, &o);
    tspec *bias = &t[3 + (o.T > 0)];            /* embeddings.LayerNorm.bias: D = 8 values */
    CHECK(strstr(bias->name, "LayerNorm.bias") != NULL, "%s", bias->name);
    bias->raw16 = in;
    bias->n_raw = 8;
    size_t len;
    unsigned char *bytes = build(t, n, NULL, 0, NULL, NULL, &len);
    attn_bert *m = load_ok(write_file("conv.safetensors", bytes, len), 2);
    free(bytes);
    if (!m)
        return;
    for (int j = 0; j < 8; j++)
        CHECK(f32_bits(m->embed.ln_beta[j]) == want[j], "%s 0x%04x -> 0x%08x, expected 0x%08x",
              dtype, in[j], f32_bits(m->embed.ln_beta[j]), want[j]);
    check_values(m, t, n);
    attn_bert_free(m);
}

/* ---- refused files --------------------------------------------------------------- */

static char last_error[512];

static void expect_fail(const char *what, const char *file, int n_heads, attn_status want,
                        const char *needle)
{
    t_case("model: %s -> %s", what, attn_strerror(want));
    attn_bert *m = &sentinel_model;
    char err[512];
    memset(err, '#', sizeof err);
    attn_status st = attn_bert_load(&m, file, n_heads, err, sizeof err);
    CHECK_STATUS(st, want);
    CHECK(m == &sentinel_model, "*model written by a failing call");
    if (st == ATTN_OK && m != &sentinel_model)
        attn_bert_free(m);
    CHECK(memchr(err, '\0', sizeof err) != NULL, "message not terminated");
    err[sizeof err - 1] = '\0';
    CHECK(!file || !strncmp(err, file, strlen(file)), "message does not start with the path: %s",
          err);
    CHECK(!needle || strstr(err, needle), "message '%s' without '%s'", err, needle);
    CHECK(!strchr(err, '\n'), "message of more than one line");
    snprintf(last_error, sizeof last_error, "%s", err);
    if (getenv("ATTN_TEST_SHOW_ERRORS"))
        printf("  %s\n", err);
}

/* The tiny BERT with one fault: its tensors changed by edit, or the first
 * from in its header replaced by to. Refused as a bad file, with a message
 * that holds needle, and also when given. */
typedef struct fault {
    const char *what, *needle;
    void (*edit)(tspec *t, int *n);
    const char *from, *to, *also;
} fault;

static void damaged(const fault *f)
{
    static tspec t[MAX_T];
    int n = make_bert(t, &tiny);
    if (f->edit)
        f->edit(t, &n);
    size_t len;
    unsigned char *bytes = build(t, n, NULL, 0, f->from, f->to, &len);
    write_file("bad.safetensors", bytes, len);
    free(bytes);
    expect_fail(f->what, path, 2, ATTN_ERR_BAD_FILE, f->needle);
    if (f->also)
        CHECK(strstr(last_error, f->also), "%s", last_error);
}

static tspec *named(tspec *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return &t[0];
}

static void past_end(tspec *t, int *n)
{
    tspec *q = named(t, *n, "encoder.layer.1.attention.self.query.weight");
    q->offsets_given = 1;
    q->ob = 1u << 20;
    q->oe = (1u << 20) + 256;
}

static void begin_after_end(tspec *t, int *n)
{
    tspec *q = named(t, *n, "encoder.layer.0.attention.self.key.bias");
    q->offsets_given = 1;
    q->ob = 64;
    q->oe = 32;
}

static void size_mismatch(tspec *t, int *n)
{
    named(t, *n, "encoder.layer.0.intermediate.dense.bias")->shape_json = "[13]";
}

static void query_d_plus_1(tspec *t, int *n)
{
    named(t, *n, "encoder.layer.1.attention.self.query.weight")->shape[1] = 9;
}

static void drop_value_bias(tspec *t, int *n)
{
    tspec *q = named(t, *n, "encoder.layer.1.attention.self.value.bias");
    memmove(q, q + 1, (size_t)(t + *n - (q + 1)) * sizeof *t);
    --*n;
}

static void layer_gap(tspec *t, int *n)   /* layer 1 renamed 2: layers 0 and 2 */
{
    for (int i = 0; i < *n; i++)
        if (!strncmp(t[i].name, "encoder.layer.1.", 16))
            t[i].name[14] = '2';
}

static void far_layer(tspec *t, int *n)
{
    t[*n] = *named(t, *n, "encoder.layer.0.output.dense.bias");
    snprintf(t[*n].name, sizeof t[*n].name, "encoder.layer.999999999.output.dense.bias");
    ++*n;
}

static void duplicate(tspec *t, int *n)
{
    t[*n] = *named(t, *n, "encoder.layer.0.output.dense.bias");
    ++*n;
}

static void dtype_f8(tspec *t, int *n)
{
    snprintf(named(t, *n, "encoder.layer.0.attention.self.query.weight")->dtype, 16, "F8_E9");
}

static void dtype_i32(tspec *t, int *n)
{
    snprintf(named(t, *n, "encoder.layer.1.attention.self.key.bias")->dtype, 16, "I32");
}

static void negative_dim(tspec *t, int *n)
{
    named(t, *n, "embeddings.LayerNorm.weight")->shape_json = "[-8]";
}

static void half_pooler(tspec *t, int *n)
{
    (void)t;
    --*n;                                    /* pooler.dense.bias, the last */
}

static void both_prefixes(tspec *t, int *n)
{
    t[*n] = *named(t, *n, "embeddings.LayerNorm.weight");
    snprintf(t[*n].name, sizeof t[*n].name, "bert.embeddings.LayerNorm.weight");
    ++*n;
}

static void no_layers(tspec *t, int *n)
{
    for (int i = 0; i < *n; i++)
        if (!strncmp(t[i].name, "encoder.", 8))
            t[i].name[0] = 'x';
}

static const fault faults[] = {
    { "data_offsets past the end",
      "encoder.layer.1.attention.self.query.weight: data_offsets [1048576, 1048832] end "
      "past the data", .edit = past_end },
    { "data_offsets begin > end",
      "encoder.layer.0.attention.self.key.bias: data_offsets [64, 32] begin after end",
      .edit = begin_after_end },
    { "size not shape x dtype", "encoder.layer.0.intermediate.dense.bias: data_offsets [",
      .edit = size_mismatch },
    { "query weight [D][D+1]",
      "encoder.layer.1.attention.self.query.weight: shape [8, 9], expected [D = 8, D = 8]",
      .edit = query_d_plus_1 },
    { "missing tensor", "encoder.layer.1.attention.self.value.bias: missing",
      .edit = drop_value_bias },
    { "layer gap",
      "encoder.layer.1.attention.self.query.weight: missing (the file has encoder.layer.2)",
      .edit = layer_gap },
    { "layer 999999999",
      "encoder.layer.2.attention.self.query.weight: missing (the file has "
      "encoder.layer.999999999)", .edit = far_layer },
    { "no layers", "encoder.layer.0.", .edit = no_layers },
    { "duplicate key", "encoder.layer.0.output.dense.bias: tensor named twice",
      .edit = duplicate },
    { "unknown dtype", "encoder.layer.0.attention.self.query.weight: header byte",
      .edit = dtype_f8, .also = "unknown dtype \"F8_E9\"" },
    { "I32 dtype",
      "encoder.layer.1.attention.self.key.bias: dtype I32, expected F32, F16 or BF16",
      .edit = dtype_i32 },
    { "negative dim", "embeddings.LayerNorm.weight: header byte", .edit = negative_dim },
    { "half a pooler", "pooler.dense.bias: missing", .edit = half_pooler },
    { "a tensor under two names", "embeddings.LayerNorm.weight: given twice",
      .edit = both_prefixes },
    { "unknown field", "unknown field \"stride\"", .from = "\"shape\":[8],",
      .to = "\"shape\":[8],\"stride\":[1]," },
    { "fractional offset", "expected an integer", .from = "[0,", .to = "[0.0," },
    { "trailing comma", "header byte", .from = "}}", .to = "},}" },
    { "metadata not strings", "__metadata__ values must be strings", .from = "{",
      .to = "{\"__metadata__\":{\"a\":1}," },
    { "bad escape", "bad escape", .from = "embeddings.position",
      .to = "embeddings\\x.position" },
    { "lone surrogate", "unpaired surrogate", .from = "embeddings.position",
      .to = "embeddings\\udc00.position" },
    { "invalid UTF-8", "invalid UTF-8", .from = "embeddings.position",
      .to = "embeddings\xc0\xaf.position" },
    { "newline escaped in a name, message one line", "a?b: header byte",
      .from = "\"embeddings.position",
      .to = "\"a\\nb\":{\"dtype\":\"F8\",\"shape\":[],\"data_offsets\":[0,1]},"
            "\"embeddings.position" },
};

/* A file of the given header text and data length (zeros). */
static const char *raw_file(const char *text, uint64_t header_len, size_t data_len)
{
    size_t h = strlen(text), len = 8 + h + data_len;
    unsigned char *bytes = calloc(1, len);
    put_le(bytes, header_len, 8);
    memcpy(bytes + 8, text, h);
    write_file("raw.safetensors", bytes, len);
    free(bytes);
    return path;
}

static void refused_files(void)
{
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        damaged(&faults[i]);

    /* Deep nesting where a tensor, an integer and metadata belong. */
    static char deep[40100];
    size_t k = 0;
    deep[k++] = '{';
    k += (size_t)sprintf(deep + k, "\"x\":{\"dtype\":\"F32\",\"shape\":");
    for (int i = 0; i < 20000; i++)
        deep[k++] = '[';
    for (int i = 0; i < 20000; i++)
        deep[k++] = ']';
    deep[k++] = '}';
    deep[k++] = '}';
    deep[k] = '\0';
    expect_fail("nested too deep", raw_file(deep, k, 0), 2, ATTN_ERR_BAD_FILE,
                "x: header byte 29: expected an integer");
    memset(deep, '[', 20000);
    deep[20000] = '\0';
    expect_fail("nested arrays, no object", raw_file(deep, 20000, 0), 2, ATTN_ERR_BAD_FILE,
                "header byte 0: expected '{'");
    memset(deep, '{', 20000);
    expect_fail("nested objects", raw_file(deep, 20000, 0), 2, ATTN_ERR_BAD_FILE,
                "header byte 1: expected '\"'");

    const char *text[][2] = {
        { "hello world", "expected '{'" },
        { "[1, 2, 3]", "expected '{'" },
        { "{\"a\": 1}", "a: header byte 6: expected '{'" },
        { "{\"unterminated", "unterminated string" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}} x", "bytes after" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}", "header ends" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", "a: header byte 32: entry without "
                                                     "\"data_offsets\"" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1,2,3,4,5,6,7,8,9],\"data_offsets\":[0,4]}}",
          "more than 8 values" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
          "\"data_offsets\":[0,4]}}", "a: shape [4294967296, 4294967296, 4294967296] "
                                      "overflows" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999],\"data_offsets\":[0,4]}}",
          "integer too large" },
        { "{}", "embeddings.word_embeddings.weight: missing" },
        { "{\"__metadata__\":{\"format\":\"pt\"},\"__metadata__\":{}}",
          "__metadata__ given twice" },
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++) {
        char what[96];
        snprintf(what, sizeof what, "header '%.40s'", text[i][0]);
        expect_fail(what, raw_file(text[i][0], strlen(text[i][0]), 4), 2, ATTN_ERR_BAD_FILE,
                    text[i][1]);
    }
    expect_fail("header length past the file", raw_file("{}", 2 + 4 + 1, 4), 2,
                ATTN_ERR_BAD_FILE, "header length 7 past the end of the file (14 bytes)");
    expect_fail("header length 2^63", raw_file("{}", 1ull << 63, 4), 2, ATTN_ERR_BAD_FILE,
                "header length 9223372036854775808 past the end");
    expect_fail("header length one short", raw_file("{}", 1, 0), 2, ATTN_ERR_BAD_FILE,
                "header ends where");

    expect_fail("empty file", raw_file("", 0, 0) /* 8 bytes */, 2, ATTN_ERR_BAD_FILE,
                "header ends where '{' is expected");
    write_file("empty.safetensors", (const unsigned char *)"", 0);
    expect_fail("0-byte file", path, 2, ATTN_ERR_BAD_FILE, "0 bytes, shorter than");
    expect_fail("no such file", "/nonexistent/attn/model.safetensors", 2, ATTN_ERR_BAD_FILE,
                "cannot open: No such file or directory");
    expect_fail("a directory", dir, 2, ATTN_ERR_BAD_FILE, "not a regular file");

    /* Bad arguments, on a good file. */
    const char *good = write_bert("args.safetensors", &tiny);
    expect_fail("n_heads 3 with D = 8", good, 3, ATTN_ERR_INVALID_ARG,
                "n_heads 3 does not divide D = 8");
    expect_fail("n_heads 0 with D = 8", good, 0, ATTN_ERR_INVALID_ARG, "not a multiple of 64");
    expect_fail("n_heads -1", good, -1, ATTN_ERR_INVALID_ARG, NULL);
    expect_fail("NULL path", NULL, 2, ATTN_ERR_INVALID_ARG, "(null path): path is NULL");
    t_case("model: NULL model -> %s", attn_strerror(ATTN_ERR_INVALID_ARG));
    char err[64];
    CHECK_STATUS(attn_bert_load(NULL, good, 2, err, sizeof err), ATTN_ERR_INVALID_ARG);
    CHECK(!strncmp(err, good, strlen(good) < 63 ? strlen(good) : 63), "%s", err);
    t_case("model: no error buffer, a small one");
    attn_bert *m = &sentinel_model;
    CHECK_STATUS(attn_bert_load(&m, "/nonexistent", 2, NULL, 100), ATTN_ERR_BAD_FILE);
    CHECK_STATUS(attn_bert_load(&m, "/nonexistent", 2, err, 0), ATTN_ERR_BAD_FILE);
    CHECK_STATUS(attn_bert_load(&m, "/nonexistent", 2, err, 5), ATTN_ERR_BAD_FILE);
    CHECK(!strcmp(err, "/non"), "'%s'", err);
    CHECK(m == &sentinel_model, "*model written");
    attn_bert_free(NULL);
}

/* Every truncation of a small file is refused. */
static void truncations(void)
{
    t_case("model: every truncation of a small file -> %s", attn_strerror(ATTN_ERR_BAD_FILE));
    bert_opts o = { "F32", "bert.", 1, 3, 2, 1, 4, 4, 1, 0 };
    size_t len;
    unsigned char *bytes = bert_file(&o, &len);
    attn_bert *m = load_ok(write_file("small.safetensors", bytes, len), 1);
    attn_bert_free(m);
    int failures = 0;
    for (size_t cut = 0; cut < len && failures < 3; cut++) {
        write_file("cut.safetensors", bytes, cut);
        attn_bert *got = &sentinel_model;
        char err[256] = "";
        attn_status st = attn_bert_load(&got, path, 1, err, sizeof err);
        if (st != ATTN_ERR_BAD_FILE || got != &sentinel_model || strncmp(err, path, strlen(path))) {
            CHECK(0, "cut at %zu of %zu: status %d, model %s, '%s'", cut, len, (int)st,
                  got == &sentinel_model ? "untouched" : "written", err);
            failures++;
        }
    }
    free(bytes);
}

/* The loaded model runs: embeddings, then the layers; the output finite. */
static void runs(void)
{
    t_case("model: a loaded model runs attn_embed and attn_encoder");
    bert_opts o = tiny;
    o.dtype = "mixed";
    attn_bert *m = load_ok(write_bert("run.safetensors", &o), 2);
    attn_ctx *ctx = NULL;
    if (!m || attn_ctx_create(&ctx, NULL, 1) != ATTN_OK) {
        CHECK(0, "setup");
        attn_bert_free(m);
        return;
    }
    enum { B = 2, L = 5 };
    const int32_t ids[B * L] = { 1, 5, 7, 10, 0, 2, 3, 4, 9, 8 };
    const int32_t types[B * L] = { 0, 0, 1, 1, 1, 0, 1, 0, 1, 0 };
    float x[B * L * 8], y[B * L * 8];
    attn_status st = attn_embed(ctx, &m->embed_config, &m->embed, B, L, ids, types, 0, x);
    if (st == ATTN_OK)
        st = attn_encoder(ctx, &m->layer_config, m->n_layers, m->layers, NULL, NULL, B, L, x,
                          NULL, y);
    if (st != ATTN_OK) {
        t_skip("model: attn_embed / attn_encoder: %s", attn_strerror(st));
    } else {
        int finite = 1;
        for (int i = 0; i < B * L * 8; i++)
            finite &= isfinite(y[i]) != 0;
        CHECK(finite, "output not finite");
    }
    attn_ctx_destroy(ctx);
    attn_bert_free(m);
}

void test_model(void)
{
    if (!mkdtemp(dir)) {
        t_case("model: mkdtemp");
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    bert_opts o = tiny;
    good_case("F32", &o, NULL, 0, NULL, 0);
    o.prefix = "bert.";
    good_case("F32, bert. prefix", &o, NULL, 0, NULL, 0);
    good_case("F32, misaligned data (copied)", &o, NULL, 2, NULL, 0);
    /* Unrelated tensors, some named almost like a layer's. */
    static const char *const unrelated[][2] = {
        { "cls.predictions.bias", "F32" }, { "bert.embeddings.position_ids", "I64" },
        { "encoder.layer.4294967296.attention.self.query.weight", "F32" },
        { "encoder.layer.01.attention.self.query.weight", "U8" },
        { "encoder.layer.2", "F32" }, { "encoder.layer.x.y", "F32" },
    };
    enum { N_UNRELATED = sizeof unrelated / sizeof unrelated[0] };
    tspec extra[N_UNRELATED];
    memset(extra, 0, sizeof extra);
    for (int i = 0; i < N_UNRELATED; i++) {
        snprintf(extra[i].name, sizeof extra[i].name, "%s", unrelated[i][0]);
        snprintf(extra[i].dtype, sizeof extra[i].dtype, "%s", unrelated[i][1]);
        extra[i].rank = 2;
        extra[i].shape[0] = 1;
        extra[i].shape[1] = 9;
        extra[i].k = -1;
    }
    good_case("F32, __metadata__, unrelated tensors", &o,
              "\"__metadata__\":{\"format\":\"pt\","
              "\"caf\\u00e9 \\ud83d\\ude00\":\"\\\"x\\\"\"}", 0, extra, N_UNRELATED);
    o.prefix = "";
    o.T = 0;
    o.pooler = 0;
    good_case("F32, no token types, no pooler", &o, NULL, 0, NULL, 0);
    o = tiny;
    o.old_ln_names = 1;
    good_case("F32, LayerNorm gamma / beta", &o, NULL, 0, NULL, 0);
    o = tiny;
    o.dtype = "F16";
    good_case("F16", &o, NULL, 0, NULL, 0);
    o.dtype = "BF16";
    o.prefix = "bert.";
    good_case("BF16, bert. prefix", &o, NULL, 0, NULL, 0);
    o.dtype = "mixed";
    o.n_layers = 3;
    good_case("F32 / F16 / BF16 mixed, 3 layers", &o, NULL, 0, NULL, 0);

    static const uint16_t f16_in[8] = { 0x0001, 0x03ff, 0x8000, 0x7c00, 0x7e00, 0x3c00, 0xfbff,
                                        0x8001 };
    static const uint32_t f16_want[8] = { 0x33800000, 0x387fc000, 0x80000000, 0x7f800000,
                                          0x7fc00000, 0x3f800000, 0xc77fe000, 0xb3800000 };
    conversion_case("F16", f16_in, f16_want);
    static const uint16_t bf16_in[8] = { 0x0001, 0x8000, 0x7f80, 0x7fc1, 0x3f80, 0xc2f7, 0x0080,
                                         0xff80 };
    static const uint32_t bf16_want[8] = { 0x00010000, 0x80000000, 0x7f800000, 0x7fc10000,
                                           0x3f800000, 0xc2f70000, 0x00800000, 0xff800000 };
    conversion_case("BF16", bf16_in, bf16_want);

    t_case("model: n_heads 0 with D = 64 -> 1 head");
    bert_opts wide = { "BF16", "", 1, 2, 2, 0, 64, 4, 0, 0 };
    attn_bert *m = load_ok(write_bert("wide.safetensors", &wide), 0);
    CHECK(m && m->layer_config.n_heads == 1 && m->layer_config.d_model == 64, "n_heads %d",
          m ? m->layer_config.n_heads : -1);
    attn_bert_free(m);

    refused_files();
    truncations();
    runs();

    static const char *const files[] = { "good", "conv", "bad", "raw", "empty", "args", "small",
                                         "cut", "run", "wide" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[i]);
        unlink(path);
    }
    if (rmdir(dir) != 0) {
        t_case("model: temporary directory removed");
        CHECK(0, "rmdir %s: %s", dir, strerror(errno));
    }
}
