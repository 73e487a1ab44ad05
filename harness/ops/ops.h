/*
 * ops.h — the ops attnbench measures, as rows of one table (ops.def), and
 * their shapes: the keys a shape takes, its canonical text and label, the
 * work it does (FLOPs, bytes moved) and everything else the harness asks
 * of an op, read from the op's row instead of a switch per question.
 *
 * A shape is written "op=sdpa,B=1,H=12,L=512,Dh=64,mask=causal": keys and
 * values separated by commas, in any order. Each op takes its own keys
 * (its row's `keys`); a key it does not take is refused, so a shape never
 * says more than the op will do. Every op's sizes default to B 1, H 1,
 * Dh 64, L 128, P 128, N 128, layers 1, F 4·D, norm pre, act gelu, mask
 * none, unless its row says otherwise (op=bert: BERT-base's H 12, post-LN,
 * 12 layers). D sets Dh = D/H.
 */
#ifndef AB_OPS_H
#define AB_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "library.h"
#include "internal.h"

typedef enum ab_op {
#define AB_OP_ROW(SYM, name) AB_OP_##SYM,
#include "ops.def"
#undef AB_OP_ROW
    AB_OP_COUNT
} ab_op;

/* Which mask a benchmark or check case uses (the pattern is in workload.c). */
typedef enum ab_mask_kind {
    AB_MASK_NONE,
    AB_MASK_CAUSAL,
    AB_MASK_PADDING,     /* batch b pads its last b·Lk/(2B) keys */
    AB_MASK_PADALL,      /* as padding, and the last batch is all padding */
    AB_MASK_KEEP,        /* random keep mask, one per batch */
    AB_MASK_BIAS,        /* random additive bias, one per batch */
    AB_MASK_ALL,         /* causal + padding + shared keep + shared bias */
    AB_MASK_CAUSAL_BR,   /* causal, bottom-right aligned (decoding: the last Lq positions) */
    AB_MASK_COUNT
} ab_mask_kind;
#define AB_MASKS_ALL ((1u << AB_MASK_COUNT) - 1)

/* The keys of a shape's text, with the kind of value each takes: a size
 * (an integer in [1, 2^30]), a mask, norm (pre|post) or act
 * (gelu|gelu-tanh|relu) name, a finite number (scale), a bit (cross) or a
 * storage type (kv: f32|f16|bf16|i8, how keys and values are stored,
 * contract 0.3). Their order here is the order of error messages and of
 * `attnbench list --json`'s keys. */
#define AB_SHAPE_KEYS(X)                                                                           \
    X(B, SIZE) X(H, SIZE) X(Hkv, SIZE) X(L, SIZE) X(Lq, SIZE) X(Lk, SIZE) X(M, SIZE) X(P, SIZE)    \
    X(N, SIZE) X(layers, SIZE) X(Dh, SIZE) X(D, SIZE) X(F, SIZE) X(mask, MASK) X(norm, NORM)       \
    X(act, ACT) X(scale, NUMBER) X(cross, BIT) X(kv, DTYPE)
typedef enum ab_key {
#define AB_KEY_ENUM(k, kind) AB_KEY_##k,
    AB_SHAPE_KEYS(AB_KEY_ENUM)
#undef AB_KEY_ENUM
    AB_KEY_COUNT,
    /* In a row's text and label lists only: "L" when Lq = Lk, else "Lq"
     * and "Lk" (SDPA, MHA, the encoder layer: one length or two). */
    AB_KEY_LENGTHS = AB_KEY_COUNT,
    AB_KEY_END = -1          /* ends those lists */
} ab_key;
#define AB_KEY_BIT(k) (1u << AB_KEY_##k)

typedef struct ab_shape {
    ab_op op;
    int batch, heads, q_len, kv_len, head_dim;   /* d_model = heads · head_dim */
    int d_ff;                                    /* F: ops with a feed-forward network */
    int cross;                                   /* mha: x_kv distinct from x_q */
    ab_mask_kind mask;
    int norm_first;                              /* norm: the layers */
    attn_activation act;                         /* act: the layers */
    float scale;                                 /* sdpa, mha; 0 = 1/sqrt(Dh) */
    int kv_heads;                                /* sdpa: key/value heads; 0 = heads */
    int steps, layers;                           /* generate: N new tokens, decoder layers;
                                                  * bert: encoder layers */
    attn_dtype kv_type;                          /* kv: how keys and values are stored */
} ab_shape;

/* The deepest stack a shape takes (a workload holds a cache per layer). */
#define AB_MAX_LAYERS 64

/* ---- What the text gave, for a row's resolve ------------------------------------ */

typedef struct ab_shape_keys {
    int v[AB_KEY_COUNT];     /* sizes and the enum keys; the defaults where not given */
    float scale;
    unsigned given;          /* a bit per key the text set (AB_KEY_BIT) */
} ab_shape_keys;

/* ---- The row ---------------------------------------------------------------------- */

struct ab_workload;

/* Which bound ab_tolerance applies to the op's output (verify.h). */
typedef enum ab_tolerance_scale {
    AB_TOL_OUTPUT,        /* 1e-4 · max(1, max|y_ref|) */
    AB_TOL_VALUES         /* 2e-5 · max(1, max|V|) */
} ab_tolerance_scale;

typedef struct ab_op_row {
    const char *name;
    const char *description;          /* one line: what a call of it is */
    unsigned keys;                    /* AB_KEY_BIT of each key its shapes take */
    unsigned masks;                   /* 1 << ab_mask_kind of each mask it takes */
    /* Defaults of its own where they differ from every op's (the top of
     * this file): the keys in own_defaults take their value from
     * default_of, e.g. op=bert's [AB_KEY_H] = 12. */
    unsigned own_defaults;
    int default_of[AB_KEY_COUNT];
    /* The keys of its canonical text and of its label, in order, each
     * ended by AB_KEY_END. Hkv, cross, scale and kv appear only when set
     * (not 0: kv not f32), a label's mask only when there is one. */
    ab_key text[16], label[16];
    /* The op's own rules, after the keys were read and the common ones
     * applied (sizes, D, Hkv, layers, the mask set): the lengths (q_len,
     * kv_len from L, Lq, Lk, M or P) and anything else only it requires.
     * 0, or -1 with a reason in err ("shape: ..."). */
    int (*resolve)(const ab_shape_keys *k, ab_shape *s, char *err, size_t len);
    /* FLOPs of one call: 2 per multiply-add of the matrix products, over
     * the visible (query, key) pairs only (ab_visible_pairs). */
    double (*flops)(const ab_shape *s);
    /* Bytes one call must move at least: read every input and weight
     * once, write the output once (fp32; masks at their own width). */
    double (*bytes)(const ab_shape *s);
    /* Bytes one pass over the data touches, when it is not `bytes` (NULL):
     * op=generate's one step. */
    double (*pass_bytes)(const ab_shape *s);
    /* Allocates and fills the op's inputs into w (w->shape set; ab_alloc'd
     * through workload.h's helpers, from *seed), but the mask, which
     * ab_workload_init makes for every op. 0, or -1 when out of memory. */
    int (*make)(struct ab_workload *w, uint64_t *seed, size_t misalign);
    /* One call of the op on ctx, a context of library lib (this build's or
     * a --lib one's, library.h), writing w->out_len floats to out. */
    attn_status (*run)(const ab_library *lib, attn_ctx *ctx, const struct ab_workload *w,
                       float *out);
    /* The op's weights packed once for ctx (attn_weights_pack_encoder), as
     * a deployment packs them before its calls; NULL: none to pack. */
    attn_status (*pack)(const ab_library *lib, attn_ctx *ctx, const struct ab_workload *w,
                        attn_packed_weights **out);
    /* 1: its workload holds objects this build made (KV caches), which
     * another build's calls must not be given: `run --lib` times it on this
     * build only. */
    int this_build_only;
    /* The wisdom's bucket api.c looks up for this call (ab_shape_bucket):
     * wisdom_op's (wisdom.h's ATTN_OP_*) by the lengths, head width and
     * mask class, or by_sequence: a decoder layer's, by the encoder's
     * bucket of its self-attention's whole length (the cache's tokens and
     * the new ones, q_len + steps), without a mask class. */
    struct { int wisdom_op, by_sequence; } bucket;
    ab_tolerance_scale tolerance;
    /* Its calls run GEMMs: a kernel's gemm-only parameters matter. */
    int gemms;
    /* It runs a model whose weights `attnbench run --weights` may load. */
    int takes_model;
    /* A rate per unit of work beside the time (report.c's JSON):
     * per_second units over the call's time and ms_per its inverse in ms,
     * the units being the value of key `unit` (NULL name: none). */
    struct { const char *per_second, *ms_per; ab_key unit; } rate;
} ab_op_row;

/* The row of op (NULL when op is not one). */
const ab_op_row *ab_op_row_of(ab_op op);

/* ---- Ops and shapes ---------------------------------------------------------------- */

const char *ab_op_name(ab_op op);
int ab_op_parse(const char *name, ab_op *op);           /* 0 ok, -1 unknown */
/* The op names, ", "-separated, in the table's order: "sdpa, mha, ...". */
const char *ab_op_list(void);
/* Whether op's shapes take key k. */
int ab_op_takes(ab_op op, ab_key k);
const char *ab_mask_name(ab_mask_kind m);
const char *ab_key_name(ab_key k);

/* strtol(s, end, 10) when s starts with a digit, or '-' and a digit; else
 * 0 with *end = s. strtol alone skips leading space and takes '+': sizes,
 * counts and flags refuse " 1" and "+1". The caller clears errno first. */
long ab_strtol_digits(const char *s, char **end);

/* Parses a shape's text (see the top of this file); op defaults to
 * default_op. Returns 0, or -1 with a reason in err. */
int ab_shape_parse(const char *text, ab_op default_op, ab_shape *s, char *err, size_t err_len);
/* The canonical text of s, accepted by ab_shape_parse: round-trips. */
void ab_shape_format(const ab_shape *s, char *buf, size_t len);
/* A compact name for benchmark names: "B1_H12_L512_Dh64_causal". */
void ab_shape_label(const ab_shape *s, char *buf, size_t len);

/* s's value of key k, a number (mask, norm, act: the index of the name). */
double ab_shape_value(const ab_shape *s, ab_key k);

/* One key's value in a shape, as `attnbench list --json` gives it. */
typedef struct ab_key_value {
    ab_key key;
    const char *text;        /* mask, norm, act: the name; else NULL */
    double number;           /* the others */
} ab_key_value;
/* Every key op s takes, with its value in s (resolved: defaults applied,
 * Hkv = H when the heads are not grouped, D = H·Dh), in AB_SHAPE_KEYS's
 * order; L only when it is one length (Lq = Lk, or an op without Lq).
 * Returns how many were written (at most AB_KEY_COUNT). */
int ab_shape_key_values(const ab_shape *s, ab_key_value out[AB_KEY_COUNT]);

/* The causal alignment of the shape's mask: 0 none, ATTN_CAUSAL_TOP_LEFT or
 * ATTN_CAUSAL_BOTTOM_RIGHT. */
int ab_shape_causal(const ab_shape *s);
/* Key/value heads: kv_heads, or heads when it is 0. */
int ab_shape_kv_heads(const ab_shape *s);
/* 1 when big is small grown: the same op, mask and every setting that is
 * not a size, and each size (batch, heads, key/value heads, lengths, Dh, F,
 * steps, layers) at least small's. A call of big then does all of a call
 * of small's work and more: it is taken to last at least as long. */
int ab_shape_covers(const ab_shape *big, const ab_shape *small);
/* The (query, key) pairs a call must compute per batch and head: Lq·Lk, or
 * under a causal mask only the visible ones, Σᵢ clamp(i + 1 + shift, 0, Lk)
 * with shift 0 (top-left) or Lk − Lq (bottom-right). Masks whose pattern is
 * data (padding, keep, bias) count in full: which pairs they hide is not
 * known from the shape. */
double ab_visible_pairs(const ab_shape *s);
/* Bytes of the mask parts a call reads: padding per key; keep and bias per
 * visible pair (a causal kernel never looks at the hidden ones). */
double ab_mask_bytes(const ab_shape *s);
/* Bytes of one stored row of keys or values (Dh elements of the shape's
 * kv type, and an int8 row's scale). */
double ab_kv_row_bytes(const ab_shape *s);

/* The row's flops, bytes and pass_bytes (docs/json-format.md). The
 * formulas are those of the anchors, so GFLOP/s compare; a causal kernel
 * that skips the hidden half is not credited with it, so a % of peak can
 * never pass 100 by counting work that was not done. pass_bytes: when it
 * is well above the last-level cache, the bytes cannot be served from it
 * (bench.h). */
double ab_shape_flops(const ab_shape *s);
double ab_shape_bytes(const ab_shape *s);
double ab_shape_pass_bytes(const ab_shape *s);
/* The wisdom's bucket of one call of s at threads (the row's bucket). */
void ab_shape_bucket(const ab_shape *s, int threads, attn_bucket *b);

/* ---- For the rows ---------------------------------------------------------------------- */

/* The keys of every op made of transformer layers: the sizes, F, norm,
 * act and the mask; each adds its lengths. */
#define AB_LAYER_KEYS                                                                              \
    (AB_KEY_BIT(B) | AB_KEY_BIT(H) | AB_KEY_BIT(Dh) | AB_KEY_BIT(D) | AB_KEY_BIT(F)                \
     | AB_KEY_BIT(norm) | AB_KEY_BIT(act) | AB_KEY_BIT(mask))
/* The masks of the ops whose keys are a memory's or a sequence's padding. */
#define AB_MASKS_PADDING ((1u << AB_MASK_NONE) | (1u << AB_MASK_PADDING))

/* Lq and Lk from L, Lq and Lk (Lq or L; Lk, else Lq when given, else L):
 * the lengths of sdpa, mha and the encoder layer. */
void ab_lengths_from_keys(const ab_shape_keys *k, ab_shape *s);

/* Work of one encoder layer (self-attention over s's visible pairs, then
 * the FFN) and the floats of its weights, biases and LayerNorms: op=encoder
 * is one, op=bert a stack. */
double ab_encoder_layer_flops(const ab_shape *s);
double ab_encoder_weight_floats(double d, double f);
/* One decoder layer over lq target tokens (causal) and lk memory tokens;
 * the floats of its weights, biases and LayerNorms: all of them, or
 * (memory_kv 0) those a call reads once the memory's keys and values are in
 * the cache (not the cross-attention's K and V projections). */
double ab_decoder_layer_flops(double b, double lq, double lk, double d, double f);
double ab_decoder_weight_floats(double d, double f, int memory_kv);
/* Bytes of `rows` rows of a decoder layer's cache, as stored (kv): per
 * batch and head, a key's and a value's row of Dh each (ab_kv_row_bytes). */
double ab_decoder_cache_bytes(const ab_shape *s, double rows);

#endif /* AB_OPS_H */
