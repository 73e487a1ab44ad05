/*
 * bert_load.c — attn_bert_load: a Hugging Face BERT checkpoint in the
 * safetensors format, as the weights of attn_embed and attn_encoder.
 *
 * The file is mapped read-only and F32 tensors are used where they lie, so
 * loading copies nothing but what must change form: F16 and BF16 tensors
 * (widened to F32) and F32 tensors that are not 4-byte aligned in the file
 * (the kernels read floats). Those go to one 64-byte-aligned block.
 * Every tensor is found by its name, its dtype and shape checked against the
 * dimensions the first tensors fix (V, P, T, D from the embeddings, F from
 * layer 0's intermediate.dense.weight), before anything is allocated for
 * the conversion.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bert_load.h"
#include "safetensors.h"

typedef struct bert_model {
    attn_bert pub;                       /* first: attn_bert_free casts back */
    attn_encoder_weights *layers;        /* [n_layers] */
    float *converted;                    /* tensors converted or copied on load, one block */
    void *map;                           /* the file's mapping; NULL over a caller's buffer */
    size_t map_size;
} bert_model;

/* Dimensions, by the letter a shape names them with. */
enum { DIM_V, DIM_P, DIM_T, DIM_D, DIM_F, N_DIMS };
static const char dim_letters[] = "VPTDF";

/* A tensor: its name without "bert.", its shape in dimension letters (a
 * rank-1 tensor has no second letter) and the pointer it fills, as an
 * offset into attn_bert (embeddings, pooler) or attn_encoder_weights. */
typedef struct spec { const char *name; char d0, d1; size_t at; } spec;

#define B_AT(f) offsetof(attn_bert, f)
static const spec model_specs[] = {
    { "embeddings.word_embeddings.weight", 'V', 'D', B_AT(embed.token) },
    { "embeddings.position_embeddings.weight", 'P', 'D', B_AT(embed.position) },
    { "embeddings.token_type_embeddings.weight", 'T', 'D', B_AT(embed.token_type) },
    { "embeddings.LayerNorm.weight", 'D', 0, B_AT(embed.ln_gamma) },
    { "embeddings.LayerNorm.bias", 'D', 0, B_AT(embed.ln_beta) },
    { "pooler.dense.weight", 'D', 'D', B_AT(pooler_w) },
    { "pooler.dense.bias", 'D', 0, B_AT(pooler_b) },
};
enum { SPEC_TOKEN_TYPE = 2, SPEC_POOLER_W = 5, SPEC_POOLER_B = 6 };

/* A layer's 16 tensors, after "encoder.layer.N.", in the file's order: F is
 * fixed by intermediate.dense.weight, the first to name it. */
#define L_AT(f) offsetof(attn_encoder_weights, f)
static const spec layer_specs[] = {
    { "attention.self.query.weight", 'D', 'D', L_AT(attn.w_q) },
    { "attention.self.query.bias", 'D', 0, L_AT(attn.b_q) },
    { "attention.self.key.weight", 'D', 'D', L_AT(attn.w_k) },
    { "attention.self.key.bias", 'D', 0, L_AT(attn.b_k) },
    { "attention.self.value.weight", 'D', 'D', L_AT(attn.w_v) },
    { "attention.self.value.bias", 'D', 0, L_AT(attn.b_v) },
    { "attention.output.dense.weight", 'D', 'D', L_AT(attn.w_o) },
    { "attention.output.dense.bias", 'D', 0, L_AT(attn.b_o) },
    { "attention.output.LayerNorm.weight", 'D', 0, L_AT(ln1_gamma) },
    { "attention.output.LayerNorm.bias", 'D', 0, L_AT(ln1_beta) },
    { "intermediate.dense.weight", 'F', 'D', L_AT(w_ff1) },
    { "intermediate.dense.bias", 'F', 0, L_AT(b_ff1) },
    { "output.dense.weight", 'D', 'F', L_AT(w_ff2) },
    { "output.dense.bias", 'D', 0, L_AT(b_ff2) },
    { "output.LayerNorm.weight", 'D', 0, L_AT(ln2_gamma) },
    { "output.LayerNorm.bias", 'D', 0, L_AT(ln2_beta) },
};
#define N_LAYER_SPECS ((int)(sizeof layer_specs / sizeof layer_specs[0]))

/* A tensor found, and the pointer it is to fill. */
typedef struct use { const attn_st_tensor *t; const float **dst; } use;

typedef struct loader {
    attn_st_file file;
    long long dims[N_DIMS];              /* 0 until a tensor fixes it */
    use *uses;
    int n_uses;
    char *err;
    size_t err_len;
} loader;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_LITTLE_ENDIAN 0
#else
#define HOST_LITTLE_ENDIAN 1
#endif

/* The file's tensor for canonical name: as is or with "bert.", and for a
 * LayerNorm also under TensorFlow's old names gamma / beta. NULL when none;
 * two spellings of one tensor in a file are an error (*st). */
static const attn_st_tensor *find(loader *ld, const char *name, attn_status *st)
{
    size_t len = strlen(name);
    const char *old = len >= 16 && !strcmp(name + len - 16, "LayerNorm.weight") ? "gamma"
                    : len >= 14 && !strcmp(name + len - 14, "LayerNorm.bias") ? "beta" : NULL;
    int stem = (int)len - (old ? (old[0] == 'g' ? 6 : 4) : 0);
    const attn_st_tensor *found = NULL;
    for (int k = 0; k < 4; k++) {            /* bit 0: the old name; bit 1: "bert." */
        char alt[160];
        if ((k & 1) && !old)
            continue;
        snprintf(alt, sizeof alt, "%s%.*s%s", k & 2 ? "bert." : "", stem, name,
                 k & 1 ? old : name + stem);
        const attn_st_tensor *t = attn_safetensors_find(&ld->file, alt);
        if (t && found) {
            attn_st_error(ld->err, ld->err_len, "%s: given twice, as %s and %s", name,
                          found->name, t->name);
            *st = ATTN_ERR_BAD_FILE;
            return NULL;
        }
        found = found ? found : t;
    }
    return found;
}

/* Checks t's dtype and shape against s (fixing the dimensions not yet
 * known) and records it to fill dst. */
static attn_status take(loader *ld, const spec *s, const attn_st_tensor *t, const float **dst)
{
    if (t->dtype != ATTN_ST_F32 && t->dtype != ATTN_ST_F16 && t->dtype != ATTN_ST_BF16) {
        attn_st_error(ld->err, ld->err_len, "%s: dtype %s, expected F32, F16 or BF16", t->name,
                      attn_st_dtype_name(t->dtype));
        return ATTN_ERR_BAD_FILE;
    }
    char want[2] = { s->d0, s->d1 };
    int rank = s->d1 ? 2 : 1, ok = t->rank == rank;
    for (int i = 0; i < rank && ok; i++) {
        int d = (int)(strchr(dim_letters, want[i]) - dim_letters);
        if (ld->dims[d] == 0 && t->shape[i] >= 1 && t->shape[i] <= INT_MAX)
            ld->dims[d] = (long long)t->shape[i];
        ok = ld->dims[d] != 0 && t->shape[i] == (uint64_t)ld->dims[d];
    }
    if (!ok) {
        char got[200], exp[64] = "";
        attn_st_shape_text(t, got, sizeof got);
        for (int i = 0; i < rank; i++) {
            long long d = ld->dims[strchr(dim_letters, want[i]) - dim_letters];
            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), d ? "%s%c = %lld" : "%s%c >= 1",
                     i ? ", " : "", want[i], d);
        }
        attn_st_error(ld->err, ld->err_len, "%s: shape %s, expected [%s]", t->name, got, exp);
        return ATTN_ERR_BAD_FILE;
    }
    ld->uses[ld->n_uses++] = (use){ t, dst };
    return ATTN_OK;
}

/* Finds the tensor of s and takes it to fill its pointer in base (NULL:
 * only the check that it is there); a missing one is an error when
 * required, why added to the message. */
static attn_status need(loader *ld, const spec *s, const char *name, void *base, int required,
                        const char *why)
{
    attn_status st = ATTN_OK;
    const attn_st_tensor *t = find(ld, name, &st);
    if (st)
        return st;
    if (!t) {
        if (required)
            attn_st_error(ld->err, ld->err_len, "%s: missing%s", name, why);
        return required ? ATTN_ERR_BAD_FILE : ATTN_OK;
    }
    return base ? take(ld, s, t, (const float **)(void *)((char *)base + s->at)) : ATTN_OK;
}

/* The number of layers the names imply: 1 + the largest N of a tensor
 * "encoder.layer.N.*" (N in decimal without leading zeros, below 10^9). */
static int layer_count(const attn_st_file *f)
{
    int n = 0;
    for (int i = 0; i < f->n; i++) {
        const char *s = f->tensors[i].name;
        s += strncmp(s, "bert.", 5) ? 0 : 5;
        if (strncmp(s, "encoder.layer.", 14))
            continue;
        s += 14;
        int k = 0, digits = 0;
        while (s[digits] >= '0' && s[digits] <= '9' && digits < 9)
            k = k * 10 + (s[digits++] - '0');
        if (digits == 0 || s[digits] != '.' || (s[0] == '0' && digits > 1))
            continue;
        n = k + 1 > n ? k + 1 : n;
    }
    return n;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* IEEE half to single, exactly: subnormals normalized, inf and NaN kept
 * (with the NaN's payload). */
static float f16_to_f32(unsigned h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 0x3ff;
    if (exp == 31)
        return from_bits(sign | 0x7f800000u | man << 13);
    if (exp != 0)
        return from_bits(sign | (exp + 112) << 23 | man << 13);
    if (man == 0)
        return from_bits(sign);
    exp = 113;                             /* 2^-14 · 0.man: shift the leading 1 into place */
    while (!(man & 0x400)) {
        man <<= 1;
        exp--;
    }
    return from_bits(sign | exp << 23 | (man & 0x3ff) << 13);
}

/* t's elements as floats into out (little-endian in the file); one loop
 * per dtype, so that each is a plain pass over the tensor. */
static void convert(const attn_st_tensor *t, float *out)
{
    const unsigned char *p = t->data;
    uint64_t n = t->n_elements;
    if (t->dtype == ATTN_ST_F16)
        for (uint64_t i = 0; i < n; i++)
            out[i] = f16_to_f32((unsigned)p[2 * i] | (unsigned)p[2 * i + 1] << 8);
    else if (t->dtype == ATTN_ST_BF16)
        for (uint64_t i = 0; i < n; i++)
            out[i] = from_bits(((uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8) << 16);
    else
        for (uint64_t i = 0; i < n; i++)
            out[i] = from_bits((uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
                               (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24);
}

static int in_place(const attn_st_tensor *t)
{
    return HOST_LITTLE_ENDIAN && t->dtype == ATTN_ST_F32 && (uintptr_t)t->data % 4 == 0;
}

static void free_model(bert_model *m)
{
    if (!m)
        return;
    free(m->layers);
    free(m->converted);
    if (m->map)
        munmap(m->map, m->map_size);
    free(m);
}

/* The name of layer l's tensor i, into buf[96]. */
static const char *layer_name(char *buf, int l, int i)
{
    snprintf(buf, 96, "encoder.layer.%d.%s", l, layer_specs[i].name);
    return buf;
}

static attn_status map_tensors(loader *ld, bert_model *m, int n_heads)
{
    attn_status st = ATTN_OK;
    char name[96];
    /* Every required tensor present, before allocating for them (a name
     * "encoder.layer.999999999.x" is then a missing layer, not a request
     * for a billion of them). */
    for (int i = 0; i < SPEC_POOLER_W; i++)
        if (i != SPEC_TOKEN_TYPE && (st = need(ld, &model_specs[i], model_specs[i].name, NULL, 1,
                                               "")))
            return st;
    int n_layers = layer_count(&ld->file);
    if (n_layers == 0) {
        attn_st_error(ld->err, ld->err_len, "%s: missing (no encoder layer)",
                      layer_name(name, 0, 0));
        return ATTN_ERR_BAD_FILE;
    }
    for (int l = 0; l < n_layers; l++)
        for (int i = 0; i < N_LAYER_SPECS; i++) {
            char why[64] = "";
            if (l < n_layers - 1)
                snprintf(why, sizeof why, " (the file has encoder.layer.%d)", n_layers - 1);
            if ((st = need(ld, &layer_specs[i], layer_name(name, l, i), NULL, 1, why)))
                return st;
        }
    m->layers = calloc((size_t)n_layers, sizeof *m->layers);
    ld->uses = malloc(((size_t)n_layers * N_LAYER_SPECS + 8) * sizeof *ld->uses);
    if (!m->layers || !ld->uses) {
        attn_st_error(ld->err, ld->err_len, "out of memory");
        return ATTN_ERR_NO_MEMORY;
    }
    for (int i = 0; i < SPEC_POOLER_W; i++)
        if ((st = need(ld, &model_specs[i], model_specs[i].name, &m->pub, i != SPEC_TOKEN_TYPE,
                       "")))
            return st;
    /* The pooler: both tensors or neither. */
    int pooler = find(ld, model_specs[SPEC_POOLER_W].name, &st) != NULL;
    pooler += !st && find(ld, model_specs[SPEC_POOLER_B].name, &st) != NULL;
    for (int i = SPEC_POOLER_W; i <= SPEC_POOLER_B && pooler && !st; i++)
        st = need(ld, &model_specs[i], model_specs[i].name, &m->pub, 1,
                  i == SPEC_POOLER_W ? " (pooler.dense.bias is present)"
                                     : " (pooler.dense.weight is present)");
    for (int l = 0; l < n_layers && !st; l++)
        for (int i = 0; i < N_LAYER_SPECS && !st; i++)
            st = need(ld, &layer_specs[i], layer_name(name, l, i), &m->layers[l], 1, "");
    if (st)
        return st;

    int d = (int)ld->dims[DIM_D];
    if (n_heads == 0 && d % 64 != 0) {
        attn_st_error(ld->err, ld->err_len, "n_heads 0 means D / 64, but D = %d is not a "
                      "multiple of 64: give n_heads", d);
        return ATTN_ERR_INVALID_ARG;
    }
    n_heads = n_heads ? n_heads : d / 64;
    if (d % n_heads != 0) {
        attn_st_error(ld->err, ld->err_len, "n_heads %d does not divide D = %d", n_heads, d);
        return ATTN_ERR_INVALID_ARG;
    }

    /* The tensors that cannot be used in place, into one block. */
    size_t total = 0;
    for (int i = 0; i < ld->n_uses; i++) {
        const attn_st_tensor *t = ld->uses[i].t;
        if (in_place(t))
            continue;
        /* n_elements < 2^62 (the file holds them): no overflow here. */
        uint64_t bytes = (t->n_elements * 4 + 63) / 64 * 64;
        if (bytes > SIZE_MAX - total) {
            attn_st_error(ld->err, ld->err_len, "%s: converted tensors too large", t->name);
            return ATTN_ERR_NO_MEMORY;
        }
        total += (size_t)bytes;
    }
    if (total && !(m->converted = aligned_alloc(64, total))) {
        attn_st_error(ld->err, ld->err_len, "out of memory (%zu bytes for converted tensors)",
                      total);
        return ATTN_ERR_NO_MEMORY;
    }
    float *next = m->converted;
    for (int i = 0; i < ld->n_uses; i++) {
        const attn_st_tensor *t = ld->uses[i].t;
        if (in_place(t)) {
            *ld->uses[i].dst = (const float *)(const void *)t->data;
            continue;
        }
        convert(t, next);
        *ld->uses[i].dst = next;
        next += (t->n_elements + 15) / 16 * 16;
    }

    attn_bert *b = &m->pub;
    b->embed_config = (attn_embedding_config){ (int)ld->dims[DIM_V], (int)ld->dims[DIM_P],
                                               (int)ld->dims[DIM_T], d, 1e-12f };
    b->layer_config = (attn_encoder_config){ d, n_heads, (int)ld->dims[DIM_F], 1e-12f, 0,
                                             ATTN_ACT_GELU_ERF };
    b->n_layers = n_layers;
    b->layers = m->layers;
    return ATTN_OK;
}

attn_status attn_bert_from_buffer(attn_bert **model, const void *buf, size_t size, int n_heads,
                                  char *err, size_t err_len)
{
    if (!model || n_heads < 0) {
        attn_st_error(err, err_len, !model ? "model is NULL" : "n_heads %d < 0", n_heads);
        return ATTN_ERR_INVALID_ARG;
    }
    loader ld = { .err = err, .err_len = err_len };
    attn_status st = attn_safetensors_parse(buf, size, &ld.file, err, err_len);
    if (st)
        return st;
    bert_model *m = calloc(1, sizeof *m);
    st = m ? map_tensors(&ld, m, n_heads) : ATTN_ERR_NO_MEMORY;
    if (!m)
        attn_st_error(err, err_len, "out of memory");
    free(ld.uses);
    attn_safetensors_free(&ld.file);
    if (st) {
        free_model(m);
        return st;
    }
    *model = &m->pub;
    return ATTN_OK;
}

attn_status attn_bert_load(attn_bert **model, const char *path, int n_heads, char *error,
                           size_t error_len)
{
    char msg[512];
    attn_status st = ATTN_ERR_INVALID_ARG;
    void *map = NULL;
    size_t size = 0;
    if (!model || !path || n_heads < 0) {
        snprintf(msg, sizeof msg, "%s", !model ? "model is NULL" : !path ? "path is NULL"
                                                                       : "n_heads < 0");
        goto fail;
    }
    st = ATTN_ERR_BAD_FILE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
        goto fail;
    }
    struct stat sb;
    int stat_failed = fstat(fd, &sb) != 0;
    if (stat_failed || !S_ISREG(sb.st_mode) || (uintmax_t)sb.st_size > SIZE_MAX) {
        snprintf(msg, sizeof msg, "%s", stat_failed ? strerror(errno)
                 : !S_ISREG(sb.st_mode) ? "not a regular file" : "too large to map");
        close(fd);
        goto fail;
    }
    size = (size_t)sb.st_size;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            st = errno == ENOMEM ? ATTN_ERR_NO_MEMORY : ATTN_ERR_BAD_FILE;
            snprintf(msg, sizeof msg, "cannot map: %s", strerror(errno));
            close(fd);
            map = NULL;
            goto fail;
        }
        madvise(map, size, MADV_WILLNEED);   /* the weights are all read soon; only a hint */
    }
    close(fd);                              /* the mapping stays */
    attn_bert *b = NULL;
    st = attn_bert_from_buffer(&b, map, size, n_heads, msg, sizeof msg);
    if (st)
        goto fail;
    ((bert_model *)(void *)b)->map = map;
    ((bert_model *)(void *)b)->map_size = size;
    *model = b;
    return ATTN_OK;
fail:
    if (map)
        munmap(map, size);
    attn_st_error(error, error_len, "%s: %s", path ? path : "(null path)", msg);
    return st;
}

void attn_bert_free(attn_bert *model)
{
    free_model((bert_model *)(void *)model);
}
