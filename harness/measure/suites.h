/*
 * suites.h — benchmark shapes, the named suites, and the work a shape does
 * (FLOPs and minimum bytes moved).
 */
#ifndef AB_SUITES_H
#define AB_SUITES_H

#include <stddef.h>

#include "attn.h"

/* decoder (contract 0.2): one decoder layer without a cache; its kv_len is
 * the memory's length M, its self-attention causal over q_len.
 * generate: token-by-token generation through a stack of `layers` decoder
 * layers with KV caches: a prompt of q_len (P) tokens in one call, then
 * `steps` (N) calls of one token each, over a memory of kv_len (M). */
typedef enum ab_op {
    AB_OP_SDPA, AB_OP_MHA, AB_OP_ENCODER, AB_OP_DECODER, AB_OP_GENERATE, AB_OP_BERT, AB_OP_COUNT
} ab_op;
/* The op names for messages, next to the enum so that they change together. */
#define AB_OP_LIST "sdpa, mha, encoder, decoder, generate, bert"

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

typedef struct ab_shape {
    ab_op op;
    int batch, heads, q_len, kv_len, head_dim;   /* d_model = heads · head_dim */
    int d_ff;                                    /* encoder, decoder */
    int cross;                                   /* mha: x_kv distinct from x_q */
    ab_mask_kind mask;
    int norm_first;                              /* encoder, decoder */
    attn_activation act;                         /* encoder, decoder */
    float scale;                                 /* sdpa / mha; 0 = 1/sqrt(Dh) */
    int kv_heads;                                /* sdpa: key/value heads; 0 = heads */
    int steps, layers;                           /* generate: N new tokens, decoder layers;
                                                  * bert: encoder layers */
} ab_shape;

/* The deepest stack op=generate takes (its workload holds a cache per layer). */
#define AB_MAX_LAYERS 64

/* The ops built of decoder layers (their shapes take M, F, norm and act). */
int ab_op_is_decoder(ab_op op);
/* Ops whose shapes carry a layer's fields (F, norm, act). */
int ab_op_is_layer(ab_op op);

const char *ab_op_name(ab_op op);
int ab_op_parse(const char *name, ab_op *op);           /* 0 ok, -1 unknown */
const char *ab_mask_name(ab_mask_kind m);

/* Parses "B=1,H=12,L=512,Dh=64,mask=causal" (keys: op, B, H, Hkv, L, Lq,
 * Lk, M, P, N, layers, Dh, D, F, mask, norm=pre|post, act=gelu|gelu-tanh|relu,
 * scale, cross=0|1; Hkv, SDPA only, divides H; M, the decoder's memory
 * length, default L (generate: P); the decoder and generate take mask none
 * or padding, of the memory; generate takes P (prompt, default 128), N (new
 * tokens, default 128) and layers (default 1) instead of L; bert takes L,
 * layers (default 12) and mask none or padding, with BERT-base's D 768,
 * H 12, post-LN and GELU as its defaults).
 * op defaults to default_op; D sets head_dim = D/H. Unset sizes take
 * defaults (B=1, H=1, Dh=64, L=128, F=4·D). Returns 0, or -1 with a reason. */
int ab_shape_parse(const char *text, ab_op default_op, ab_shape *s, char *err, size_t err_len);
/* The canonical text of s, accepted by ab_shape_parse: round-trips. */
void ab_shape_format(const ab_shape *s, char *buf, size_t len);
/* A compact name for benchmark names: "B1_H12_L512_Dh64_causal". */
void ab_shape_label(const ab_shape *s, char *buf, size_t len);

/* The causal alignment of the shape's mask: 0 none, ATTN_CAUSAL_TOP_LEFT or
 * ATTN_CAUSAL_BOTTOM_RIGHT. */
int ab_shape_causal(const ab_shape *s);
/* Key/value heads: kv_heads, or heads when it is 0. */
int ab_shape_kv_heads(const ab_shape *s);
/* The (query, key) pairs a call must compute per batch and head: Lq·Lk, or
 * under a causal mask only the visible ones, Σᵢ clamp(i + 1 + shift, 0, Lk)
 * with shift 0 (top-left) or Lk − Lq (bottom-right). Masks whose pattern is
 * data (padding, keep, bias) count in full: which pairs they hide is not
 * known from the shape. */
double ab_visible_pairs(const ab_shape *s);

/* FLOPs of one call: the work the operation needs, counting the
 * multiply-adds of the matrix products (2 per multiply-add) over the
 * visible pairs only (P = ab_visible_pairs):
 *   SDPA    4·B·H·P·Dh
 *   MHA     B·(4·Lq·D² + 4·Lk·D² + 4·P·D)   (self, unmasked: 8·L·D² + 4·L²·D)
 *   encoder MHA(self) + 4·B·L·D·F
 *   decoder B·(8·L·D² + 4·L(L+1)/2·D + 4·L·D² + 4·M·D² + 4·L·M·D + 4·L·D·F):
 *           causal self-attention, cross-attention over M, the FFN
 *   generate layers × decoder(L = P + N): a cache makes token by token the
 *           same products as one call over the whole sequence
 * Unmasked, these are the formulas of the anchors, so GFLOP/s compare;
 * a causal kernel that skips the hidden half is not credited with it, so a
 * % of peak can never pass 100 by counting work that was not done. */
double ab_shape_flops(const ab_shape *s);
/* Bytes a call must move at least: read every input and weight once,
 * write the output once (fp32; masks at their own width, keep and bias
 * over the visible pairs; K and V of the key/value heads only, and of the
 * keys some query sees: under a top-left causal mask with Lq < Lk the
 * first Lq). generate: the prompt's call as a decoder's, then every step
 * its layers' weights again and the keys and values it attends to. */
double ab_shape_bytes(const ab_shape *s);
/* Bytes one pass over the data touches: ab_shape_bytes, but for generate
 * one step's (every layer's weights and caches). When it is well above the
 * last-level cache, the bytes cannot be served from it (bench.h). */
double ab_shape_pass_bytes(const ab_shape *s);

/* ---- Suites ---------------------------------------------------------------- */

typedef struct ab_suite {
    const char *name;
    const char *description;
    const ab_shape *shapes;
    int n_shapes;
    /* `attnbench run`'s --min-time and --max-time for this suite (0: the
     * defaults): a suite of tiny shapes meant to take seconds samples less. */
    double min_time, max_time;
} ab_suite;

const ab_suite *ab_suite_find(const char *name);
int ab_suite_count(void);
const ab_suite *ab_suite_get(int i);
/* What a command is to run (run, tune): the shapes of shape_text (';'
 * separates several; op the default op of each) or of the suite named
 * (NULL: "default"; both given is an error), of op only when filter_op; at most max into out. The
 * suite's own min_time / max_time (0: none) go to *suite_times when not
 * NULL. The count, or -1 with a reason in err (an unknown suite's lists the
 * suites). */
int ab_shapes_select(const char *suite_name, const char *shape_text, ab_op op, int filter_op,
                     ab_shape *out, int max, double suite_times[2], char *err, size_t len);

/* The shapes of `attnbench check` (edge shapes, every mask kind); each
 * kernel's own tile edges come from ab_edge_shapes. */
const ab_suite *ab_check_suite(void);

/* ---- Edge shapes of one kernel -------------------------------------------------- */

struct attn_kernel;

/* The most shapes ab_edge_shapes makes for a kernel, and the FLOPs of the
 * largest (ab_shape_flops): each runs in milliseconds on the naive oracle. */
#define AB_MAX_EDGE_SHAPES 128
#define AB_EDGE_FLOPS 5e7

/* The shapes at the edges of kernel k's own tiles, from its row (its
 * geometry) and its params (values in the order of k->params; NULL: the
 * defaults of this machine), as XNNPACK re-expands each micro-kernel's tile
 * into its tests: GEMM rows and widths at mr and nr − 1, itself and + 1,
 * depths around kc, rows around mc, widths around nc, rows around the
 * skinny path's; attention's query rows around its micro-tile and bq, keys
 * around its key micro-tile, kc, bk and stream_from, head dims around the
 * tile, the vector and kc; query rows per key/value head at decode_rows and
 * decode_rows + 1 (own, grouped and multi-query heads) and keys around the
 * decode path's split. Masks, activations and norms vary from shape to
 * shape; shapes over AB_EDGE_FLOPS are left out. Writes at most max shapes
 * to out and returns how many (0 for a kernel without geometry: naive). */
int ab_edge_shapes(const struct attn_kernel *k, const int *params, ab_shape *out, int max);


#endif /* AB_SUITES_H */
