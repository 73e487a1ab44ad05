/*
 * test_fixtures.c — every runnable kernel against the PyTorch fixtures, with
 * inputs and output 64-byte aligned and then 4 bytes past alignment.
 *
 * The expected values were computed by PyTorch in float64 from the same fp32
 * inputs (tests/gen_fixtures.py); the bound is api.md §4's (harness/measure/verify.h).
 * Ops: sdpa, mha, encoder (one layer), decoder, embed (attn_embed),
 * encoder_stack (attn_encoder) and bert (attn_bert_load of a safetensors file
 * next to the fixture, then attn_embed + attn_encoder + the pooler in double).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "verify.h"
#include "workload.h"

static attn_mask fixture_mask(const fixture *f)
{
    attn_mask m = {
        .causal = fx_int(f, "causal", 0),
        .key_padding = fx_u8(f, "key_padding", NULL),
        .keep = fx_u8(f, "keep", NULL),
        .keep_per_batch = fx_int(f, "keep_per_batch", 0),
        .bias = fx_f32(f, "bias", NULL),
        .bias_per_batch = fx_int(f, "bias_per_batch", 0),
    };
    return m;
}

/* The eight MHA arrays, named w_q … b_o after prefix ("" for mha and the
 * encoder, "sa_" / "ca_" for the decoder's two attentions). */
static attn_mha_weights fixture_mha_weights(const fixture *f, const char *prefix)
{
    static const char *const keys[8] = { "w_q", "w_k", "w_v", "w_o", "b_q", "b_k", "b_v", "b_o" };
    const float *p[8];
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%s", prefix, keys[i]);
        p[i] = fx_f32(f, name, NULL);
    }
    attn_mha_weights w = { p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7] };
    return w;
}

/* An encoder layer's sixteen arrays, named w_q … b_ff2 after prefix ("" for
 * the encoder, "l0_", "l1_", … for the layers of an encoder stack). */
static attn_encoder_weights fixture_encoder_weights(const fixture *f, const char *prefix)
{
    static const char *const keys[8] = { "ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta",
                                         "w_ff1", "b_ff1", "w_ff2", "b_ff2" };
    const float *p[8];
    for (int i = 0; i < 8; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%s", prefix, keys[i]);
        p[i] = fx_f32(f, name, NULL);
    }
    attn_encoder_weights w = {
        .attn = fixture_mha_weights(f, prefix),
        .ln1_gamma = p[0], .ln1_beta = p[1], .ln2_gamma = p[2], .ln2_beta = p[3],
        .w_ff1 = p[4], .b_ff1 = p[5], .w_ff2 = p[6], .b_ff2 = p[7],
    };
    return w;
}

static attn_encoder_config fixture_layer_config(const fixture *f)
{
    attn_encoder_config c = {
        .d_model = fx_int(f, "d_model", 0), .n_heads = fx_int(f, "n_heads", 0),
        .d_ff = fx_int(f, "d_ff", 0), .ln_eps = fx_float(f, "ln_eps", -1.0f),
        .norm_first = fx_int(f, "norm_first", 0),
        .act = (attn_activation)fx_int(f, "act", -1),
    };
    return c;
}

/* How a decoder fixture is run: in one call without a cache; through a
 * cache in uneven chunks (2, 1, then the rest), the memory passed only on
 * the first call; or through a cache that held another sequence and was
 * reset, as a prompt of all but one token and then that token. */
enum { DEC_WHOLE, DEC_CHUNKS, DEC_AFTER_RESET, DEC_MODES };
static const char *const dec_mode_name[DEC_MODES] = { "", " cached in chunks 2,1,rest",
                                                      " cached after a reset" };

static attn_status run_decoder(attn_ctx *ctx, const fixture *f, int mode, float *out, size_t n_out)
{
    attn_encoder_config c = fixture_layer_config(f);
    attn_decoder_weights w = {
        .self_attn = fixture_mha_weights(f, "sa_"),
        .cross_attn = fixture_mha_weights(f, "ca_"),
        .ln1_gamma = fx_f32(f, "ln1_gamma", NULL), .ln1_beta = fx_f32(f, "ln1_beta", NULL),
        .ln2_gamma = fx_f32(f, "ln2_gamma", NULL), .ln2_beta = fx_f32(f, "ln2_beta", NULL),
        .ln3_gamma = fx_f32(f, "ln3_gamma", NULL), .ln3_beta = fx_f32(f, "ln3_beta", NULL),
        .w_ff1 = fx_f32(f, "w_ff1", NULL), .b_ff1 = fx_f32(f, "b_ff1", NULL),
        .w_ff2 = fx_f32(f, "w_ff2", NULL), .b_ff2 = fx_f32(f, "b_ff2", NULL),
    };
    int b = fx_int(f, "batch", 0), t = fx_int(f, "tgt_len", 0), m = fx_int(f, "mem_len", 0);
    const float *x = fx_f32(f, "x", NULL), *memory = fx_f32(f, "memory", NULL);
    const uint8_t *pad = fx_u8(f, "mem_key_padding", NULL);
    size_t d = (size_t)c.d_model;
    if ((size_t)b * t * d != n_out || t < 4)
        return ATTN_ERR_INVALID_ARG;
    if (mode == DEC_WHOLE)
        return attn_decoder_layer(ctx, &c, &w, b, t, x, m, memory, pad, NULL, out);

    attn_kv_cache *cache = NULL;
    attn_status st = attn_kv_cache_create(&cache, b, c.n_heads, c.d_model / c.n_heads, t + 1);
    float *xc = malloc(sizeof(float) * n_out), *yc = malloc(sizeof(float) * n_out);
    if (st == ATTN_OK && (!xc || !yc))
        st = ATTN_ERR_NO_MEMORY;
    if (st == ATTN_OK && mode == DEC_AFTER_RESET) {
        /* Another sequence first: x's rows scaled, through 3 tokens. */
        for (size_t i = 0; i < (size_t)b * 3 * d; i++)
            xc[i] = 0.5f - x[i];
        st = attn_decoder_layer(ctx, &c, &w, b, 3, xc, m, memory, pad, cache, yc);
        attn_kv_cache_reset(cache);
    }
    int chunks[3] = { 2, 1, t - 3 };
    if (mode == DEC_AFTER_RESET)
        chunks[0] = t - 1, chunks[1] = 1, chunks[2] = 0;
    if (st == ATTN_OK)   /* the memory on the first call only, as a user passes it */
        st = ab_decode_chunks(ctx, &c, 1, &w, &cache, b, t, chunks, 3, x, m, memory, pad, xc, out);
    if (st == ATTN_OK && attn_kv_cache_length(cache) != t)
        st = ATTN_ERR_INVALID_ARG;       /* the cache must hold exactly what was given */
    free(xc);
    free(yc);
    attn_kv_cache_destroy(cache);
    return st;
}

static attn_status run_embed(attn_ctx *ctx, const fixture *f, float *out, size_t n_out)
{
    attn_embedding_config c = {
        .vocab_size = fx_int(f, "vocab_size", 0), .max_positions = fx_int(f, "max_positions", 0),
        .n_token_types = fx_int(f, "n_token_types", 0), .d_model = fx_int(f, "d_model", 0),
        .ln_eps = fx_float(f, "ln_eps", -1.0f),
    };
    attn_embedding_weights w = {
        .token = fx_f32(f, "token", NULL), .position = fx_f32(f, "position", NULL),
        .token_type = fx_f32(f, "token_type", NULL),
        .ln_gamma = fx_f32(f, "ln_gamma", NULL), .ln_beta = fx_f32(f, "ln_beta", NULL),
    };
    int b = fx_int(f, "batch", 0), l = fx_int(f, "seq_len", 0);
    size_t n_ids, n_types;
    const int32_t *ids = fx_i32(f, "ids", &n_ids), *types = fx_i32(f, "type_ids", &n_types);
    size_t rows = (size_t)b * (size_t)l;
    if (rows * (size_t)c.d_model != n_out || n_ids != rows || (types && n_types != rows))
        return ATTN_ERR_INVALID_ARG;
    return attn_embed(ctx, &c, &w, b, l, ids, types, fx_int(f, "position_offset", 0), out);
}

/* How an encoder stack fixture is run: x to y, or in place (y = x). */
enum { STACK_OUT, STACK_IN_PLACE, STACK_MODES };
static const char *const stack_mode_name[STACK_MODES] = { "", " in place" };

#define MAX_STACK 8

static attn_status run_stack(attn_ctx *ctx, const fixture *f, const attn_mask *mask, int mode,
                             float *out, size_t n_out)
{
    attn_encoder_config c = fixture_layer_config(f);
    int n_layers = fx_int(f, "n_layers", 0), b = fx_int(f, "batch", 0), l = fx_int(f, "seq_len", 0);
    attn_encoder_weights layers[MAX_STACK];
    if (n_layers < 1 || n_layers > MAX_STACK || (size_t)b * l * c.d_model != n_out)
        return ATTN_ERR_INVALID_ARG;
    for (int i = 0; i < n_layers; i++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "l%d_", i);
        layers[i] = fixture_encoder_weights(f, prefix);
        if (!layers[i].attn.w_q || !layers[i].w_ff2)    /* a fixture without layer i */
            return ATTN_ERR_INVALID_ARG;
    }
    const float *x = fx_f32(f, "x", NULL);
    if (!x)
        return ATTN_ERR_INVALID_ARG;
    if (mode == STACK_IN_PLACE) {
        memcpy(out, x, n_out * sizeof(float));
        x = out;
    }
    return attn_encoder(ctx, &c, n_layers, layers, fx_f32(f, "final_ln_gamma", NULL),
                        fx_f32(f, "final_ln_beta", NULL), b, l, x, mask, out);
}

/* The tiny BERT: attn_bert_load of the fixture's file (in dir), its config
 * checked against the fixture's sizes, then attn_embed + attn_encoder with
 * the key padding into out (the last hidden state), and the pooler
 * tanh(W·h[b][0] + b) in double, checked here against expected_pooled. */
/* The cosine between the pooler's output for hidden state h0 (token 0) and
 * the reference's ref, in double. */
static double pooled_cosine(const attn_bert *m, const float *h0, const double *ref, int d)
{
    double dot = 0.0, nn = 0.0, nr = 0.0;
    for (int j = 0; j < d; j++) {
        double acc = m->pooler_b[j];
        for (int k = 0; k < d; k++)
            acc += (double)m->pooler_w[(size_t)j * d + k] * h0[k];
        double y = tanh(acc);
        dot += y * ref[j];
        nn += y * y;
        nr += ref[j] * ref[j];
    }
    return nn > 0.0 && nr > 0.0 ? dot / sqrt(nn * nr) : 0.0;
}

static attn_status run_bert(attn_ctx *ctx, const fixture *f, const char *dir,
                            const attn_mask *mask, float *out, size_t n_out)
{
    const char *file = fx_str(f, "file");
    int b = fx_int(f, "batch", 0), l = fx_int(f, "seq_len", 0), d = fx_int(f, "d_model", 0);
    size_t n_ids, n_types, n_pooled;
    const int32_t *ids = fx_i32(f, "ids", &n_ids), *types = fx_i32(f, "type_ids", &n_types);
    const double *pooled_ref = fx_f64(f, "expected_pooled", &n_pooled);
    size_t rows = (size_t)b * (size_t)l;
    if (!file || !pooled_ref || rows * (size_t)d != n_out || n_ids != rows || n_types != rows
        || n_pooled != (size_t)b * (size_t)d)
        return ATTN_ERR_INVALID_ARG;

    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, file);
    attn_bert *m = NULL;
    attn_status st = attn_bert_load(&m, path, fx_int(f, "n_heads", 0), err, sizeof err);
    CHECK(st == ATTN_OK && m, "attn_bert_load: %s (%s)", attn_strerror(st), err);
    if (st != ATTN_OK || !m)
        return st != ATTN_OK ? st : ATTN_ERR_INVALID_ARG;
    const attn_embedding_config *ec = &m->embed_config;
    const attn_encoder_config *lc = &m->layer_config;
    CHECK(ec->vocab_size == fx_int(f, "vocab_size", -1)
          && ec->max_positions == fx_int(f, "max_positions", -1)
          && ec->n_token_types == fx_int(f, "n_token_types", -1) && ec->d_model == d
          && lc->d_model == d && lc->n_heads == fx_int(f, "n_heads", -1)
          && lc->d_ff == fx_int(f, "d_ff", -1) && m->n_layers == fx_int(f, "n_layers", -1),
          "loaded config V %d P %d T %d D %d/%d H %d F %d layers %d differs from the fixture's",
          ec->vocab_size, ec->max_positions, ec->n_token_types, ec->d_model, lc->d_model,
          lc->n_heads, lc->d_ff, m->n_layers);
    CHECK(lc->norm_first == 0 && lc->act == ATTN_ACT_GELU_ERF && lc->ln_eps == 1e-12f
          && ec->ln_eps == 1e-12f && m->embed.ln_gamma && m->embed.token_type,
          "not BERT's post-LN GELU (erf), eps 1e-12 layers with embedding LN and token types");
    CHECK(m->pooler_w && m->pooler_b, "no pooler");

    float *x = malloc(n_out * sizeof(float));
    st = x ? ATTN_OK : ATTN_ERR_NO_MEMORY;
    if (st == ATTN_OK && (ec->d_model != d || !m->pooler_w || !m->pooler_b))
        st = ATTN_ERR_INVALID_ARG;
    if (st == ATTN_OK)
        st = attn_embed(ctx, ec, &m->embed, b, l, ids, types, 0, x);
    if (st == ATTN_OK)
        st = attn_encoder(ctx, lc, m->n_layers, m->layers, NULL, NULL, b, l, x, mask, out);
    if (st == ATTN_OK) {
        double err_max = 0.0;
        for (int bi = 0; bi < b; bi++) {
            const float *h0 = out + (size_t)bi * l * d;          /* token 0 ([CLS]) */
            for (int j = 0; j < d; j++) {
                double acc = m->pooler_b[j];
                for (int k = 0; k < d; k++)
                    acc += (double)m->pooler_w[(size_t)j * d + k] * h0[k];
                double e = fabs(tanh(acc) - pooled_ref[(size_t)bi * d + j]);
                if (!(e <= err_max))
                    err_max = isnan(e) ? INFINITY : e;
            }
        }
        double tol = ab_tolerance(AB_OP_MHA, t_max_abs_f64(pooled_ref, n_pooled), 0.0);
        if (attn_kernel_math(attn_ctx_kernel(ctx)) == ATTN_BF16) {
            /* A bf16 row (api.md §9.3): each sequence's pooled output points
             * where fp32's does, cosine ≥ 0.999. */
            for (int bi = 0; bi < b; bi++) {
                double cos = pooled_cosine(m, out + (size_t)bi * l * d,
                                           pooled_ref + (size_t)bi * d, d);
                CHECK(cos >= 0.999, "sequence %d: pooled output's cosine to fp32 %.6f < 0.999",
                      bi, cos);
            }
        } else {
            CHECK(err_max <= tol, "pooled output: max error %.3g exceeds %.3g", err_max, tol);
        }
    }
    free(x);
    attn_bert_free(m);
    return st;
}

/* Runs the fixture's op on ctx into out (n_out elements). Returns the status,
 * and in *tol the absolute error bound for this case. */
static attn_status run_fixture(attn_ctx *ctx, const fixture *f, const char *dir, int mode,
                               float *out, size_t n_out, double *tol)
{
    const char *op = fx_op(f);
    attn_mask mask = fixture_mask(f);
    size_t n_exp;
    const double *expected = fx_f64(f, "expected", &n_exp);
    *tol = ab_tolerance(AB_OP_MHA, t_max_abs_f64(expected, n_exp), 0.0);

    if (strcmp(op, "sdpa") == 0) {
        attn_sdpa_shape s = {
            fx_int(f, "batch", 0), fx_int(f, "n_heads", 0), fx_int(f, "q_len", 0),
            fx_int(f, "kv_len", 0), fx_int(f, "head_dim", 0), fx_float(f, "scale", 0.0f),
            fx_int(f, "n_kv_heads", 0), fx_int(f, "kv_capacity", 0),
        };
        size_t n_v;
        const float *v = fx_f32(f, "v", &n_v);
        *tol = ab_tolerance(AB_OP_SDPA, 0.0, t_max_abs(v, n_v));
        if ((size_t)s.batch * s.n_heads * s.q_len * s.head_dim != n_out)
            return ATTN_ERR_INVALID_ARG;
        return attn_sdpa(ctx, &s, fx_f32(f, "q", NULL), fx_f32(f, "k", NULL), v, &mask, out);
    }
    if (strcmp(op, "mha") == 0) {
        attn_mha_weights w = fixture_mha_weights(f, "");
        const float *x_q = fx_f32(f, "x_q", NULL);
        const float *x_kv = fx_int(f, "self", 0) ? x_q : fx_f32(f, "x_kv", NULL);
        int d = fx_int(f, "d_model", 0), b = fx_int(f, "batch", 0), lq = fx_int(f, "q_len", 0);
        if ((size_t)b * lq * d != n_out)
            return ATTN_ERR_INVALID_ARG;
        return attn_mha(ctx, d, fx_int(f, "n_heads", 0), fx_float(f, "scale", 0.0f), &w, b, lq,
                        fx_int(f, "kv_len", 0), x_q, x_kv, &mask, out);
    }
    if (strcmp(op, "decoder") == 0)
        return run_decoder(ctx, f, mode, out, n_out);
    if (strcmp(op, "encoder") == 0) {
        attn_encoder_config c = fixture_layer_config(f);
        attn_encoder_weights w = fixture_encoder_weights(f, "");
        int b = fx_int(f, "batch", 0), l = fx_int(f, "seq_len", 0);
        if ((size_t)b * l * c.d_model != n_out)
            return ATTN_ERR_INVALID_ARG;
        return attn_encoder_layer(ctx, &c, &w, b, l, fx_f32(f, "x", NULL), &mask, out);
    }
    if (strcmp(op, "embed") == 0)
        return run_embed(ctx, f, out, n_out);
    if (strcmp(op, "encoder_stack") == 0)
        return run_stack(ctx, f, &mask, mode, out, n_out);
    if (strcmp(op, "bert") == 0)
        return run_bert(ctx, f, dir, &mask, out, n_out);
    return ATTN_ERR_UNSUPPORTED;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .fix files of dir, sorted; NULL-terminated, caller frees. */
static char **list_fixtures(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".fix") != 0)
            continue;
        names = realloc(names, sizeof *names * (size_t)(n + 1));
        names[n++] = strdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (n)
        qsort(names, (size_t)n, sizeof *names, by_name);
    *count = n;
    return names;
}

void test_fixtures(const char *dir)
{
    int n_files;
    char **files = list_fixtures(dir, &n_files);
    /* The fp32 rows, then the bf16 rows held to theirs (api.md §9.3). */
    const char *kernels[64];
    int n_kernels = t_kernels(kernels, 64);
    n_kernels += t_bf16_kernels(kernels + n_kernels, 64 - n_kernels);
    static const char *const prefixes[] = { "sdpa_", "mha_", "encoder_", "decoder_", "embed_",
                                            "encoder_stack_", "bert_" };
    enum { N_PREFIXES = sizeof prefixes / sizeof prefixes[0] };
    int seen_op[N_PREFIXES] = { 0 };

    t_case("fixtures: %s holds fixtures for sdpa, mha, encoder, decoder, embed, encoder_stack"
           " and bert", dir);
    for (int i = 0; i < n_files; i++) {
        int p = N_PREFIXES;              /* the longest prefix that matches */
        for (int j = 0; j < N_PREFIXES; j++)
            if (strncmp(files[i], prefixes[j], strlen(prefixes[j])) == 0
                && (p == N_PREFIXES || strlen(prefixes[j]) > strlen(prefixes[p])))
                p = j;
        if (p < N_PREFIXES)
            seen_op[p] = 1;
    }
    int seen_all = 1;
    for (int j = 0; j < N_PREFIXES; j++)
        seen_all &= seen_op[j];
    CHECK(seen_all, "%d fixture files; run from the repository root", n_files);

    for (int i = 0; i < n_files; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        int dec = strncmp(files[i], "decoder_", 8) == 0;
        int stack = strncmp(files[i], "encoder_stack_", 14) == 0;
        int modes = dec ? DEC_MODES : stack ? STACK_MODES : 1;
        for (int ki = 0; ki < n_kernels; ki++)
        for (int mode = 0; mode < modes; mode++) {
            for (size_t misalign = 0; misalign <= 4; misalign += 4) {
                t_case("fixture %s [%s]%s%s", files[i], kernels[ki], misalign ? " unaligned" : "",
                       dec ? dec_mode_name[mode] : stack ? stack_mode_name[mode] : "");
                char err[512];
                fixture *f = fx_load(path, misalign, err, sizeof err);
                CHECK(f != NULL, "%s", err);
                if (!f)
                    continue;
                size_t n;
                const double *expected = fx_f64(f, "expected", &n);
                CHECK(expected != NULL, "no 'expected' record");
                attn_ctx *ctx = NULL;
                CHECK_STATUS(attn_ctx_create(&ctx, kernels[ki], 0), ATTN_OK);
                float *out = t_alloc(n, sizeof(float), misalign);
                if (ctx && expected && out) {
                    for (size_t j = 0; j < n; j++)
                        out[j] = NAN;  /* an element the kernel forgets stays NaN and fails */
                    double tol;
                    attn_status st = run_fixture(ctx, f, dir, mode, out, n, &tol);
                    tol = t_bound_of(kernels[ki], tol, t_max_abs_f64(expected, n));
                    CHECK_STATUS(st, ATTN_OK);
                    if (st == ATTN_OK) {
                        double err_max = t_max_diff_f64(out, expected, n);
                        CHECK(err_max <= tol, "max error %.3g exceeds %.3g", err_max, tol);
                    }
                }
                t_free(out);
                attn_ctx_destroy(ctx);
                fx_free(f);
            }
        }
        free(files[i]);
    }
    free(files);
}
