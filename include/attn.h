/*
 * attn.h — the public API of libattn (attnbench).
 *
 * Scaled dot-product attention, multi-head attention and a transformer encoder
 * layer in fp32 for inference, computed by interchangeable CPU kernels chosen at
 * run time. The contract is docs/api.md (§1–§2, §7); this header is its exact
 * C form plus version macros and documentation.
 *
 * Conventions that hold for every call:
 *  - Tensors are row-major and contiguous; no SIMD alignment is asked: a float
 *    tensor may be at any multiple of 4 bytes (docs/api.md §2).
 *  - Every argument is checked before any memory is touched. A call that fails
 *    returns a status other than ATTN_OK and writes nothing to its output.
 *    The library never aborts and never prints.
 *  - Fully masked query rows give output rows of zeros (PyTorch gives NaN).
 *  - A context may be used by one thread at a time; distinct contexts are
 *    independent.
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN_VERSION_MAJOR 0
#define ATTN_VERSION_MINOR 3
#define ATTN_VERSION_PATCH 0
#define ATTN_VERSION_STRING "0.3.0"

#if defined(__GNUC__) && defined(ATTN_BUILDING_LIBRARY)
#define ATTN_API __attribute__((visibility("default")))
#else
#define ATTN_API
#endif

/* ---- Status ------------------------------------------------------------- */

typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_INVALID_ARG,  /* NULL where data is needed, size <= 0, D % H != 0, ... */
    ATTN_ERR_NO_MEMORY,
    ATTN_ERR_UNSUPPORTED,  /* kernel unknown, or not runnable on this CPU/OS */
    ATTN_ERR_OVERFLOW,     /* a size product that does not fit in size_t */
    ATTN_ERR_BAD_FILE,     /* a model file that cannot be read, or whose content is
                            * malformed or does not fit the model (attn_bert_load) */
    ATTN_ERR_RANGE         /* contract 0.3: a value its storage type cannot hold (a
                            * finite one past the 16-bit types' largest, a non-finite
                            * one in an int8 row); nothing was written */
} attn_status;

/* A short English description of s; non-empty for every value, including
 * values that are not a status. The text is static: do not free it. */
ATTN_API const char *attn_strerror(attn_status s);

/* The library's version, ATTN_VERSION_STRING as it was built (contract
 * 0.3): a program that loads another build of libattn.so (attnbench run
 * --lib) checks it against its own headers' before calling anything. */
ATTN_API const char *attn_version(void);

/* ---- Masks -------------------------------------------------------------- */

/* Every part is optional; the parts combine by AND. A NULL pointer to
 * attn_mask means no mask. For MHA and the encoder layer the mask applies to
 * every head.
 *  causal       0 none; ATTN_CAUSAL_TOP_LEFT (1): query i attends key j only
 *               when j <= i (torch.tril(ones(Lq, Lk))); ATTN_CAUSAL_BOTTOM_RIGHT
 *               (2): when j <= i + (Lk - Lq), the queries being the last Lq
 *               positions of the sequence (decoding against a cache; torch's
 *               causal_lower_right). Any other value is ATTN_ERR_INVALID_ARG.
 *               Under bottom-right with Lq > Lk the first Lq - Lk rows see no
 *               key and are zeros.
 *  key_padding  [B][Lk]; nonzero = real token, 0 = padding. NOTE: this is the
 *               inverse of torch's key_padding_mask (True = ignore).
 *  keep         [Lq][Lk], or [B][Lq][Lk] when keep_per_batch; nonzero = attend.
 *  bias         [Lq][Lk], or [B][Lq][Lk] when bias_per_batch; added to the
 *               scaled scores (relative-position, ALiBi). A score of -inf from
 *               the bias counts as masked. */
#define ATTN_CAUSAL_TOP_LEFT 1
#define ATTN_CAUSAL_BOTTOM_RIGHT 2

typedef struct attn_mask {
    int causal;
    const uint8_t *key_padding;          /* [B][Lk] or NULL */
    const uint8_t *keep;                 /* [Lq][Lk] or [B][Lq][Lk], or NULL */
    int keep_per_batch;
    const float *bias;                   /* [Lq][Lk] or [B][Lq][Lk], or NULL */
    int bias_per_batch;
} attn_mask;                             /* NULL pointer to attn_mask = no mask */

/* ---- Context and kernels ------------------------------------------------ */

typedef struct attn_ctx attn_ctx;        /* owns kernel choice, threads, workspace */

/* The most threads a context takes: OpenMP's runtime exits the process when
 * it cannot start a team, so absurd counts are refused instead. */
#define ATTN_MAX_THREADS 4096

/* kernel: a registered name, or NULL / "auto": the best for this machine
 * (tuned choice when one is stored, else by CPU features). With NULL/"auto",
 * a non-empty environment variable ATTN_KERNEL names the kernel instead.
 * n_threads 0 = all online cores.
 * Returns ATTN_ERR_INVALID_ARG for a NULL ctx or n_threads outside
 * 0..ATTN_MAX_THREADS, and
 * ATTN_ERR_UNSUPPORTED (creating nothing) for a kernel that is unknown or
 * cannot run here. */
ATTN_API attn_status attn_ctx_create(attn_ctx **ctx, const char *kernel, int n_threads);
ATTN_API void        attn_ctx_destroy(attn_ctx *ctx);     /* NULL is a no-op */
ATTN_API const char *attn_ctx_kernel(const attn_ctx *ctx); /* name actually used; NULL for NULL */

ATTN_API int         attn_kernel_count(void);
ATTN_API const char *attn_kernel_name(int i);         /* NULL outside [0, count) */
ATTN_API int         attn_kernel_supported(const char *name); /* 1 runnable here, 0 not */
/* The math of a kernel's products (contract 0.3): ATTN_F32, or ATTN_BF16
 * for a row that rounds the operands of its matrix products (projections,
 * FFN, Q·Kᵀ, P·V) to bf16 and accumulates in fp32, with everything else in
 * fp32 (docs/api.md §9.3). -1 for an unknown name. "auto" runs only fp32
 * rows; "auto-bf16" the best row of either math (the tuner's wisdom, else
 * the first row of the table this CPU runs). */
ATTN_API int         attn_kernel_math(const char *name);

/* Kernel parameters: tile sizes and the like. Each kernel lists its own
 * (`attnbench list` shows them); defaults come from this machine's caches,
 * and attn_ctx_set_param (or the tuner) overrides them per context. A kernel
 * without parameters has a count of 0. */
typedef struct attn_param_info {
    const char *name;                    /* "kc" */
    const char *help;                    /* one line */
    int min, max;                        /* accepted range, inclusive */
    int default_value;                   /* on this machine */
} attn_param_info;

ATTN_API int         attn_kernel_param_count(const char *kernel);  /* 0 for unknown names */
ATTN_API attn_status attn_kernel_param_info(const char *kernel, int i, attn_param_info *info);
/* ATTN_ERR_INVALID_ARG for a NULL context, a name the context's kernel does
 * not have, or a value outside the range; the context is then unchanged. */
ATTN_API attn_status attn_ctx_set_param(attn_ctx *ctx, const char *name, int value);
ATTN_API attn_status attn_ctx_get_param(const attn_ctx *ctx, const char *name, int *value);

/* ---- Scaled dot-product attention --------------------------------------- */

/* scale 0.0f means 1/sqrt(head_dim); any other finite value is used as is.
 * n_kv_heads (Hkv, contract 0.2): 0 means n_heads; otherwise 1 <= Hkv and
 *   n_heads % Hkv == 0 (grouped-query attention; Hkv 1: multi-query): query
 *   head h reads key/value head h / (n_heads / Hkv).
 * kv_capacity (contract 0.2): 0 means kv_len; otherwise >= kv_len: k and v
 *   hold kv_capacity rows per (batch, head), of which the first kv_len are
 *   read (a cache filled up to kv_len, read in place; the other rows are
 *   never touched). The mask keeps its [B][Lk] / [Lq][Lk] shapes.
 * New fields are appended, so an initializer of contract 0.1 still means
 * what it meant. */
typedef struct attn_sdpa_shape {
    int batch, n_heads, q_len, kv_len, head_dim;
    float scale;
    int n_kv_heads;
    int kv_capacity;
} attn_sdpa_shape;

/* out = softmax(q·kᵀ·scale + bias, masked)·v for every (batch, head).
 * q [B][H][Lq][Dh], k and v [B][Hkv][kv_capacity][Dh], out [B][H][Lq][Dh].
 * out must not overlap q, k, v or the mask. */
ATTN_API attn_status attn_sdpa(attn_ctx *ctx, const attn_sdpa_shape *s,
                               const float *q, const float *k, const float *v,
                               const attn_mask *mask, float *out);

/* ---- Keys and values stored narrower (contract 0.3) ----------------------- */

/* How keys and values are stored:
 *  ATTN_F32   fp32, as every other tensor.
 *  ATTN_F16   IEEE binary16; ATTN_BF16 the top 16 bits of a binary32. From
 *             fp32 both round to nearest, ties to even; a finite value
 *             beyond the type's largest (binary16: |x| > 65504; bfloat16:
 *             |x| > 3.38953139e38) is ATTN_ERR_RANGE, never an infinity.
 *             Infinities and NaN are stored as they are.
 *  ATTN_I8    symmetric int8 with one fp32 scale per row of head_dim values
 *             (one token of one key/value head): scale = max|x| / 127,
 *             q = x / scale to the nearest integer (ties to even) in
 *             [-127, 127]; an all-zero row has scale 0 (one whose largest
 *             is within a rounding of FLT_MAX, the next smaller scale, so
 *             that 127 * scale stays finite); a row holding a non-finite
 *             value is ATTN_ERR_RANGE.
 * The value stored is the one read back: the 16-bit value widened, or
 * q · scale rounded once to fp32. Every result on typed keys and values is
 * defined on those stored values. */
typedef enum attn_dtype { ATTN_F32 = 0, ATTN_F16, ATTN_BF16, ATTN_I8 } attn_dtype;

/* Converts rows × head_dim fp32 values (src, contiguous) to type at dst
 * (rows × head_dim elements of it); for ATTN_I8 scale[rows] receives each
 * row's scale (may be NULL otherwise). ATTN_ERR_INVALID_ARG for a NULL
 * pointer, a size <= 0 or an unknown type; ATTN_ERR_OVERFLOW when
 * rows × head_dim floats exceed the largest object; ATTN_ERR_RANGE, with
 * nothing written, when a value cannot be stored as above. */
ATTN_API attn_status attn_convert_rows(attn_dtype type, int rows, int head_dim,
                                       const float *src, void *dst, float *scale);

/* Keys or values as stored: [B][Hkv][kv_capacity][Dh] elements of type at
 * data; for ATTN_I8 also scale, [B][Hkv][kv_capacity] (NULL otherwise). */
typedef struct attn_kv_view {
    attn_dtype type;
    const void *data;
    const float *scale;
} attn_kv_view;

/* attn_sdpa on keys and values stored as k and v say (their types may
 * differ): every rule of attn_sdpa (masks, grouped heads, the capacity
 * stride), on the stored values; q, the scores, the softmax and out stay
 * fp32. Both views ATTN_F32 is attn_sdpa. ATTN_ERR_INVALID_ARG as for
 * attn_sdpa, and for a NULL view or data, an unknown type, or an ATTN_I8
 * view without scale. */
ATTN_API attn_status attn_sdpa_kv(attn_ctx *ctx, const attn_sdpa_shape *s, const float *q,
                                  const attn_kv_view *k, const attn_kv_view *v,
                                  const attn_mask *mask, float *out);

/* ---- Multi-head attention ----------------------------------------------- */

typedef struct attn_mha_weights {
    const float *w_q, *w_k, *w_v, *w_o;  /* [D][D] each, nn.Linear layout [out][in] */
    const float *b_q, *b_k, *b_v, *b_o;  /* [D] or NULL */
} attn_mha_weights;

/* y = Concat_h(SDPA(x_q·W_qᵀ + b_q, x_kv·W_kᵀ + b_k, x_kv·W_vᵀ + b_v))·W_oᵀ + b_o
 * x_q [B][Lq][D], x_kv [B][Lk][D] (self-attention: pass x_q again, Lq = Lk),
 * y [B][Lq][D]. scale as in attn_sdpa_shape, with head_dim = D / H.
 * y may be the same pointer as x_q and/or x_kv (in place); no other overlap. */
ATTN_API attn_status attn_mha(attn_ctx *ctx, int d_model, int n_heads, float scale,
                              const attn_mha_weights *w, int batch, int q_len, int kv_len,
                              const float *x_q, const float *x_kv, const attn_mask *mask, float *y);

/* ---- Transformer encoder layer ------------------------------------------ */

typedef enum attn_activation { ATTN_ACT_GELU_ERF = 0, ATTN_ACT_GELU_TANH, ATTN_ACT_RELU } attn_activation;

typedef struct attn_encoder_config {
    int d_model, n_heads, d_ff;
    float ln_eps;                        /* >= 0 and finite */
    int norm_first;                      /* 1 pre-LN, 0 post-LN */
    attn_activation act;
} attn_encoder_config;

typedef struct attn_encoder_weights {
    attn_mha_weights attn;
    const float *ln1_gamma, *ln1_beta, *ln2_gamma, *ln2_beta;  /* [D], required */
    const float *w_ff1, *b_ff1;          /* [F][D], [F] (b_ff1 may be NULL) */
    const float *w_ff2, *b_ff2;          /* [D][F], [D] (b_ff2 may be NULL) */
} attn_encoder_weights;

/* Weights packed once (contract 0.3). attn_weights_pack_encoder converts and
 * lays out the matrices of n_layers encoder layers (Q, K, V, O, W1, W2) the
 * way ctx's kernel multiplies them — panels for its GEMM, bf16 pairs for a
 * bf16 row — so that its calls neither convert nor repack them. Every later
 * call on ctx whose weights are these (the same pointers, as
 * attn_encoder_layer and attn_encoder pass them; a BERT is attn_embed, then
 * attn_encoder) reads the packed form; the results are the same as without
 * it, bit for bit. The fp32 weights must stay alive and unchanged while
 * packed (pack again after changing them). A kernel that reads weights as
 * they are (naive, einsum, openblas, onednn) packs nothing and runs as
 * before; a call that runs another kernel or tile size (an "auto" context's
 * tuned choice) ignores the packed form. Packing uses memory of the order of
 * the fp32 weights'. attn_weights_destroy frees the set (NULL is a no-op);
 * it may come before or after attn_ctx_destroy. Errors: INVALID_ARG (as for
 * attn_encoder), OVERFLOW, NO_MEMORY; *out is written only on success.
 */
typedef struct attn_packed_weights attn_packed_weights;
ATTN_API attn_status attn_weights_pack_encoder(attn_ctx *ctx, const attn_encoder_config *c,
                                               int n_layers, const attn_encoder_weights *layers,
                                               attn_packed_weights **out);
ATTN_API void        attn_weights_destroy(attn_packed_weights *p);

/* Pre-LN:  x = x + MHA(LN1(x));  y = x + FFN(LN2(x))
 * Post-LN: x = LN1(x + MHA(x));  y = LN2(x + FFN(x))
 * FFN(x) = act(x·W1ᵀ + b1)·W2ᵀ + b2. Self-attention with default scale.
 * x and y are [B][L][D]; y may be the same pointer as x (in place). */
ATTN_API attn_status attn_encoder_layer(attn_ctx *ctx, const attn_encoder_config *c,
                                        const attn_encoder_weights *w, int batch, int seq_len,
                                        const float *x, const attn_mask *mask, float *y);

/* ---- KV cache and the decoder layer (contract 0.2) ------------------------ */

/* One per decoder layer: the self-attention keys and values of every token
 * decoded so far ([B][H][capacity][D/H] each), and the cross-attention keys
 * and values of the encoder memory, projected on the first call after
 * create or reset and reused until the next reset. capacity counts target
 * tokens; the memory's projections are sized by the first call's mem_len,
 * which that call fixes until the next reset. Used by one thread at a time. */
typedef struct attn_kv_cache attn_kv_cache;

/* batch, n_heads, head_dim (D / H of the decoder layer) and capacity > 0,
 * else ATTN_ERR_INVALID_ARG; ATTN_ERR_OVERFLOW / ATTN_ERR_NO_MEMORY when the
 * storage does not fit or cannot be had. *cache is set only on success. */
ATTN_API attn_status attn_kv_cache_create(attn_kv_cache **cache, int batch, int n_heads,
                                          int head_dim, int capacity);
/* Contract 0.3: a cache whose keys are stored as k_type and values as
 * v_type (attn_dtype), the memory's projections too; attn_kv_cache_create
 * is this with ATTN_F32, ATTN_F32. An unknown type is ATTN_ERR_INVALID_ARG.
 * A decoder call whose new keys or values (or memory projections) a type
 * cannot hold is ATTN_ERR_RANGE: it writes nothing and leaves the cache as
 * it was. */
ATTN_API attn_status attn_kv_cache_create_typed(attn_kv_cache **cache, int batch, int n_heads,
                                                int head_dim, int capacity, attn_dtype k_type,
                                                attn_dtype v_type);
ATTN_API void        attn_kv_cache_destroy(attn_kv_cache *cache);       /* NULL: no-op */
ATTN_API int         attn_kv_cache_length(const attn_kv_cache *cache);  /* tokens; -1 for NULL */
/* Length 0, the memory projections forgotten; the allocation is kept.
 * NULL: no-op. */
ATTN_API void        attn_kv_cache_reset(attn_kv_cache *cache);

typedef struct attn_decoder_weights {
    attn_mha_weights self_attn, cross_attn;
    const float *ln1_gamma, *ln1_beta, *ln2_gamma, *ln2_beta, *ln3_gamma, *ln3_beta; /* [D] */
    const float *w_ff1, *b_ff1;          /* [F][D], [F] (b_ff1 may be NULL) */
    const float *w_ff2, *b_ff2;          /* [D][F], [D] (b_ff2 may be NULL) */
} attn_decoder_weights;

/* Pre-LN (norm_first 1):
 *   x = x + SelfMHA(LN1(x), causal); x = x + CrossMHA(LN2(x), memory); y = x + FFN(LN3(x))
 * Post-LN (norm_first 0, the original Transformer):
 *   x = LN1(x + SelfMHA(x, causal)); x = LN2(x + CrossMHA(x, memory)); y = LN3(x + FFN(x))
 * Both attentions use the default scale 1/sqrt(D/H).
 * cache NULL: the tgt_len tokens attend to each other causally (top-left),
 *   as torch's nn.TransformerDecoderLayer(batch_first=True) in eval() with
 *   the causal tgt_mask; memory is required.
 * cache of length p: the tokens are positions p .. p+tgt_len-1; their keys
 *   and values are appended and they attend to positions 0 .. p+i
 *   (bottom-right). A prompt in one call and then one token per call give,
 *   row for row, what one call without a cache gives on the whole sequence.
 *   With p > 0 the stored memory projections are used (memory may be NULL;
 *   if given it is not read), but mem_len must match them.
 * mem_key_padding: [B][mem_len], nonzero = real token (read on every call,
 *   not stored), or NULL. x, memory and y are [B][tgt_len][D],
 *   [B][mem_len][D] and [B][tgt_len][D]; y may be x.
 * A refused call (ATTN_ERR_INVALID_ARG: a NULL required pointer, a bad
 * config, a cache whose batch, heads, head width, remaining capacity or
 * (length > 0) mem_len do not match) writes nothing and leaves the cache
 * as it was. */
ATTN_API attn_status attn_decoder_layer(attn_ctx *ctx, const attn_encoder_config *c,
                                        const attn_decoder_weights *w, int batch, int tgt_len,
                                        const float *x, int mem_len, const float *memory,
                                        const uint8_t *mem_key_padding, attn_kv_cache *cache,
                                        float *y);

/* ---- Embeddings and the encoder stack (contract 0.2, seed 004) ---------- */

typedef struct attn_embedding_config {
    int vocab_size, max_positions, n_token_types, d_model;
    float ln_eps;                        /* >= 0 and finite */
} attn_embedding_config;

typedef struct attn_embedding_weights {
    const float *token;                  /* [vocab_size][D] */
    const float *position;               /* [max_positions][D] (learned positions) */
    const float *token_type;             /* [n_token_types][D]; unread when n_token_types is 0 */
    const float *ln_gamma, *ln_beta;     /* [D], or both NULL: no LayerNorm */
} attn_embedding_weights;

/* x[b][l] = LN(token[ids[b][l]] + position[position_offset + l]
 *              + token_type[type_ids[b][l]])
 * (the type term absent when n_token_types is 0; no LN when ln_gamma and
 * ln_beta are both NULL). ids and type_ids are [B][L]; type_ids NULL means
 * type 0. ATTN_ERR_INVALID_ARG, with nothing written, for an id outside
 * [0, vocab_size), a type id outside [0, max(n_token_types, 1)), a
 * negative position_offset, position_offset + seq_len > max_positions,
 * n_token_types > 0 with token_type NULL, or exactly one of ln_gamma /
 * ln_beta NULL. x must not overlap the weights or the ids. */
ATTN_API attn_status attn_embed(attn_ctx *ctx, const attn_embedding_config *c,
                                const attn_embedding_weights *w, int batch, int seq_len,
                                const int32_t *ids, const int32_t *type_ids,
                                int position_offset, float *x);

/* n_layers (>= 1) applications of attn_encoder_layer, layer i with
 * layers[i], all with the same config and mask, then LayerNorm (eps
 * c->ln_eps) when final_ln_gamma and final_ln_beta are given: torch's
 * nn.TransformerEncoder(layer, n_layers, norm). Exactly one of the two
 * NULL is ATTN_ERR_INVALID_ARG. The layers run in place on the context's
 * workspace and y; y may be x. */
ATTN_API attn_status attn_encoder(attn_ctx *ctx, const attn_encoder_config *c, int n_layers,
                                  const attn_encoder_weights *layers,
                                  const float *final_ln_gamma, const float *final_ln_beta,
                                  int batch, int seq_len, const float *x, const attn_mask *mask,
                                  float *y);

/* ---- A BERT checkpoint from a safetensors file ----------------------------- */

/* A BERT encoder's weights, as the calls above take them. The embeddings
 * and the post-LN layers (GELU, erf form) point into the file, mapped
 * read-only, or into buffers of the tensors converted on load (F16, BF16).
 * n_heads is not in the file: the caller gives it (0: D / 64, BERT's head
 * width); ln_eps is BERT's 1e-12. */
typedef struct attn_bert {
    attn_embedding_config embed_config;
    attn_embedding_weights embed;
    attn_encoder_config layer_config;
    int n_layers;
    const attn_encoder_weights *layers;  /* [n_layers] */
    const float *pooler_w, *pooler_b;    /* [D][D], [D]; both NULL when the file has none */
} attn_bert;

/* Loads the BERT checkpoint at path: an 8-byte little-endian header length,
 * a JSON header (tensor names, dtypes F32 / F16 / BF16, shapes, data
 * offsets), then the data. Names are Hugging Face's
 * (embeddings.word_embeddings.weight, encoder.layer.N.attention.self.
 * query.weight, ...), with or without a "bert." prefix; other tensors (a
 * task head) are ignored. On failure *model is untouched and error (when
 * not NULL) holds a line naming the file's problem and the tensor:
 * ATTN_ERR_BAD_FILE for an unreadable, truncated, malformed or mismatched
 * file, ATTN_ERR_INVALID_ARG for a NULL model or path, a negative n_heads,
 * one that does not divide D, or 0 with D not a multiple of 64,
 * ATTN_ERR_NO_MEMORY. The weights stay valid until attn_bert_free; a
 * loaded model is read-only, so contexts on several threads may share it. */
ATTN_API attn_status attn_bert_load(attn_bert **model, const char *path, int n_heads,
                                    char *error, size_t error_len);
ATTN_API void        attn_bert_free(attn_bert *model);   /* NULL is a no-op */

#ifdef __cplusplus
}
#endif

#endif /* ATTN_H */
