/*
 * kernel.h — the internal kernel interface of libattn.
 *
 * A kernel is a table of primitives (GEMM with a fused epilogue, SDPA on a
 * strided view, LayerNorm). MHA and the encoder layer are composed from these
 * primitives once, in compose.c. The naive kernel fills every slot; another
 * kernel leaves NULL the slots it does not improve and the registry fills them
 * from naive (the BLIS "reference context, then override" habit).
 *
 * Primitives are called only after api.c has checked every argument and the
 * workspace has been allocated, so they cannot fail and return nothing.
 */
#ifndef ATTN_KERNEL_H
#define ATTN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"
#include "dtype.h"

/* ---- CPU features (cpu.c) ------------------------------------------------ */

/* Bits of what a kernel requires and of what the machine offers. On x86 a
 * feature is usable only when the OS also saves its register state. */
enum {
    ATTN_CPU_AVX        = 1u << 0,   /* YMM state */
    ATTN_CPU_AVX2       = 1u << 1,   /* YMM state */
    ATTN_CPU_FMA        = 1u << 2,   /* FMA3, YMM state */
    ATTN_CPU_AVX512F    = 1u << 3,   /* ZMM + opmask state */
    ATTN_CPU_AVX512DQ   = 1u << 4,
    ATTN_CPU_AVX512BW   = 1u << 5,
    ATTN_CPU_AVX512VL   = 1u << 6,
    ATTN_CPU_AVX512BF16 = 1u << 7,
    ATTN_CPU_AMX_TILE   = 1u << 8,   /* tile state (XTILECFG + XTILEDATA) */
    ATTN_CPU_AMX_BF16   = 1u << 9,
    ATTN_CPU_NEON       = 1u << 10,  /* AArch64 Advanced SIMD */
    ATTN_CPU_SVE        = 1u << 11,
    ATTN_CPU_ARM_BF16   = 1u << 12   /* AArch64 BF16: BFDOT, BFMMLA, BFCVT */
};
#define ATTN_CPU_FEATURE_COUNT 13

/* What each ISA kernel requires: its row's requires, written once for the
 * row and for its placeholder on other architectures (kernels.def). */
#define ATTN_REQUIRES_AVX512                                                                       \
    (ATTN_CPU_AVX512F | ATTN_CPU_AVX512BW | ATTN_CPU_AVX512DQ | ATTN_CPU_AVX512VL)
#define ATTN_REQUIRES_AVX2 (ATTN_CPU_AVX | ATTN_CPU_AVX2 | ATTN_CPU_FMA)
#define ATTN_REQUIRES_NEON ATTN_CPU_NEON
#define ATTN_REQUIRES_NEON_BF16 (ATTN_CPU_NEON | ATTN_CPU_ARM_BF16)
#define ATTN_REQUIRES_AVX512_BF16 (ATTN_REQUIRES_AVX512 | ATTN_CPU_AVX512BF16)

typedef struct attn_cpu_info {
    unsigned has;      /* what the CPU reports (CPUID / HWCAP) */
    unsigned usable;   /* what the CPU reports AND the OS saves state for */
    /* attn_cpu_identity's vendor and family, read once, so that a default
     * chosen by the part (decode.h's row_prefetch) costs no CPUID or
     * /proc/cpuinfo read each time a kernel's defaults are filled in. */
    char vendor[16];
    int family;
} attn_cpu_info;

/* Detected once (thread-safe), then cached. */
const attn_cpu_info *attn_cpu(void);
/* Bytes of one instance of the data or unified cache at level 1, 2 or 3, from
 * sysfs (the source hwloc reads too), else sysconf, else a typical size. */
size_t attn_cpu_cache_size(int level);
/* Highest CPU number the library accepts. Linux allows at most 8192
 * (NR_CPUS with MAXSMP); anything far beyond is corrupt, not a CPU. */
#define ATTN_CPU_LIMIT 65536
/* The CPUs of the calling thread's affinity mask, ascending, in an array the
 * caller frees (*cpus): their count, or -1 with errno set (*cpus NULL). The
 * mask is sized to the kernel's CPU count, past CPU_SETSIZE where there are
 * more. The library's default team and the harness's topology fallback both
 * start from this list. */
int attn_cpu_affinity_cpus(int **cpus);
/* The cores among the n_cpus CPUs of cpus (the calling thread's affinity
 * mask, ascending), each counted once however many of its hardware threads
 * the list holds: a CPU counts unless a lower CPU of the list is its
 * sibling, as cpu_dir/cpuN/topology/thread_siblings_list says (cpu_dir:
 * "/sys/devices/system/cpu", another for the tests). A CPU whose siblings
 * cannot be read counts as a core. At least 1 when n_cpus > 0. */
int attn_cpu_cores_in(const int *cpus, int n_cpus, const char *cpu_dir);
/* The same count, and (firsts not NULL, room for n_cpus) the CPU that
 * stands for each core: its lowest CPU in the list, in the list's order.
 * The topology fallback pins one thread to each of them. */
int attn_cpu_core_firsts(const int *cpus, int n_cpus, const char *cpu_dir, int *firsts);
/* Vendor ("GenuineIntel", "AuthenticAMD"; on AArch64 the MIDR implementer,
 * e.g. "0x41"), family, model and stepping (AArch64: 8, part, revision).
 * Unknown parts are "" and 0. */
void attn_cpu_identity(char *vendor, size_t len, int *family, int *model, int *stepping);
/* The name of one ATTN_CPU_* bit, e.g. "avx512f". */
const char *attn_cpu_feature_name(unsigned bit);
/* The features of this architecture, for listing: 1 when bit belongs to it. */
int attn_cpu_feature_on_arch(unsigned bit);

/* ---- Problems handed to primitives ---------------------------------------- */

/* Strides, in floats, of a [B][H][L][Dh] tensor whose last axis is contiguous.
 * The public SDPA passes {H·L·Dh, L·Dh, Dh}; MHA passes the projections in
 * place as [B][L][H·Dh], i.e. {L·D, Dh, D}: the no-transpose layout of the
 * einsum "nqhd,nkhd->nhqk" (seed 003), so no transpose copy is ever made. */
typedef struct attn_strides { size_t batch, head, row; } attn_strides;

/* Keys or values stored narrower than fp32 (contract 0.3: attn_sdpa_kv,
 * a typed cache): elements of type at data, laid out by the problem's
 * k_st or v_st (counted in elements); an ATTN_I8 row (head_dim values of
 * one token and key/value head) is scaled by scale[b·scale_st.batch +
 * h·scale_st.head + j·scale_st.row]. type ATTN_F32, the zero default: the
 * problem's fp32 k or v instead. */
typedef struct attn_kv_store {
    attn_dtype type;
    const void *data;
    const float *scale;
    attn_strides scale_st;
} attn_kv_store;

typedef struct attn_sdpa_problem {
    int batch, n_heads, q_len, kv_len, head_dim;
    float scale;                       /* resolved: the 0 → 1/sqrt(Dh) rule applied */
    const float *q, *k, *v;            /* k, v: when k_store / v_store are ATTN_F32 */
    float *out;
    /* k_st and v_st step over key/value heads (n_kv_heads of them); a cache
     * read in place has a head stride of its capacity, not of kv_len. */
    attn_strides q_st, k_st, v_st, out_st;
    const attn_mask *mask;             /* NULL when no part of the mask is set */
    int n_kv_heads;                    /* divides n_heads; 0 means n_heads */
    /* Typed keys and values. A kernel reads in place the types its row's
     * kv_types lists; for any other, compose.c widens them to fp32 first,
     * so its primitive sees ATTN_F32 here. */
    attn_kv_store k_store, v_store;
} attn_sdpa_problem;

/* Row j of key/value head kvh of batch b of K (which 0) or V (1), as
 * stored: its first element, and its scale (1 unless ATTN_I8). */
static inline const void *attn_kv_row(const attn_sdpa_problem *p, int which, int b, int kvh,
                                      int j, float *scale)
{
    const attn_kv_store *s = which ? &p->v_store : &p->k_store;
    const attn_strides *st = which ? &p->v_st : &p->k_st;
    size_t at = (size_t)b * st->batch + (size_t)kvh * st->head + (size_t)j * st->row;
    *scale = s->type == ATTN_I8 ? s->scale[(size_t)b * s->scale_st.batch
                                            + (size_t)kvh * s->scale_st.head
                                            + (size_t)j * s->scale_st.row]
                                : 1.0f;
    if (s->type == ATTN_F32)
        return (which ? p->v : p->k) + at;
    return (const char *)s->data + at * attn_dtype_bytes(s->type);
}

/* Every narrow type of keys and values, as a row's kv_types. */
#define ATTN_KV_NARROW (1u << ATTN_F16 | 1u << ATTN_BF16 | 1u << ATTN_I8)

/* Whether p's keys and values are both fp32 (the stores unused). */
static inline int attn_kv_f32(const attn_sdpa_problem *p)
{
    return p->k_store.type == ATTN_F32 && p->v_store.type == ATTN_F32;
}

/* Rows [0, rows) of key/value head kvh of batch b of K (which 0) or V (1),
 * widened to fp32 into dst ([rows][head_dim]) (dtype.c). */
void attn_widen_kv(const attn_sdpa_problem *p, int which, int b, int kvh, int rows, float *dst);
/* The same rows as fp32, as a tiled path packs from them: in place when
 * they are stored fp32 (*ld their row stride), else widened into wide
 * (*ld head_dim). */
const float *attn_kv_f32_rows(const attn_sdpa_problem *p, int which, int b, int kvh, int rows,
                              float *wide, size_t *ld);

/* Key/value heads of p, and the one query head h reads (grouped-query
 * attention: the n_heads / n_kv_heads query heads of a group share it). */
static inline int attn_kv_heads(const attn_sdpa_problem *p)
{
    return p->n_kv_heads > 0 ? p->n_kv_heads : p->n_heads;
}

static inline int attn_kv_head(const attn_sdpa_problem *p, int h)
{
    return h / (p->n_heads / attn_kv_heads(p));
}

/* The activation fused into a GEMM epilogue: an attn_activation or none. */
#define ATTN_ACT_NONE (-1)

/* A weight matrix W (n × k, the [n][k] layout, or parts stacked) packed
 * once by its kernel's pack_weights (attn_weights_pack_encoder): the
 * kernel's own panels, cut into depth blocks of kc. */
typedef struct attn_packed_b {
    const float *data;
    int n, k, kc;
} attn_packed_b;

/* y[i][j] = act(Σ_k x[i][k]·w[j][k] + bias[j]) + residual[i][j]
 * x is [m][k] with row stride ldx, w is [n][k] contiguous (nn.Linear layout),
 * bias [n] or NULL, residual [m][n] with row stride ldy or NULL, y [m][n] with
 * row stride ldy. y overlaps no input (a blocked kernel writes partial sums
 * into y before it reads the residual). */
typedef struct attn_gemm_problem {
    size_t m;                          /* rows: B·L may exceed INT_MAX */
    int n, k;
    const float *x;
    size_t ldx;
    const float *w;
    /* Fused projections, only for kernels whose row says gemm_parts: when
     * w_parts is not NULL, w is unused and row j of W is row j % part_n of
     * w_parts[j / part_n] (the Q, K and V weights stacked, n = 3·part_n). */
    const float *const *w_parts;
    int part_n;
    /* W packed once for this kernel (the context's packed weights), or
     * NULL; a kernel may use it in place of packing W itself, when it was
     * cut at the kc the call runs with. */
    const attn_packed_b *packed;
    const float *bias;
    int act;                           /* ATTN_ACT_NONE or an attn_activation */
    const float *residual;
    float *y;
    size_t ldy;
    /* The hidden activations in bf16, only for a kernel with
     * bf16_hidden_bytes (non-zero for this m and width): y_bf16, when not
     * NULL, receives the finished C rounded to bf16 (nearest even) in the
     * kernel's hidden layout, and y then holds only partial sums (its
     * contents afterwards unspecified); x_bf16, when not NULL, is A in
     * that layout (x and ldx unused), as a gemm of the same m rows and
     * params stored it. A bf16 row rounds every operand of its products to
     * bf16 anyway: a hidden so stored by its producer is the operand the
     * next product would have rounded, in half the bytes and laid out as
     * that product reads it. */
    const uint16_t *x_bf16;
    uint16_t *y_bf16;
    /* LayerNorm of the finished rows in the gemm's own parallel region,
     * after a barrier (one fork and join fewer than a layernorm call),
     * only for a kernel whose row says gemm_layernorm: when ln_out is not
     * NULL, ln_out = LayerNorm(y) row by row (rows of n, both row strides
     * ldy) with ln_gamma, ln_beta ([n]) and ln_eps, as the row's layernorm
     * computes it; ln_out does not overlap y. */
    const float *ln_gamma, *ln_beta;
    float ln_eps;
    float *ln_out;
    /* And before it (pre-LN layers), as gemm_layernorm rows take it: when
     * ln_in is not NULL, the gemm's region first writes x_ln =
     * LayerNorm(ln_in) row by row (rows of k, both row strides ldx; the
     * same ln_gamma, ln_beta, ln_eps) and, after a barrier, multiplies x_ln
     * (x unused). ln_in and ln_out are not both set. */
    const float *ln_in;
    float *x_ln;
} attn_gemm_problem;

/* What a primitive may use while it runs: the thread budget of the context,
 * the kernel's parameter values, the scratch memory the kernel asked for
 * through its gemm_scratch / sdpa_scratch slot (64-byte aligned; layernorm
 * gets none: NULL, 0; the scratch slots, which size it, must not read it),
 * and the data of the kernel's row (attn_kernel.data). */
/* What an SDPA primitive's own scan for values that are not finite found
 * (attn_exec.finite_scan). */
typedef struct attn_finite_scan {
    int done;     /* set by a path that scanned every Q row it read and output row it wrote */
    int found;    /* set (atomically: any thread) when one of them was not finite */
} attn_finite_scan;

typedef struct attn_exec {
    int n_threads;
    const int *params;                 /* values of the kernel's params, in order */
    void *scratch;
    size_t scratch_bytes;
    const void *data;                  /* the row's data, or NULL */
    /* The kernel's slot in the calling context, for what it keeps between
     * calls (a library's primitives, created once per shape): *state is
     * NULL until the kernel sets it; attn_ctx_destroy hands it to the
     * row's state_free. NULL when there is no context (tests, scratch
     * sizing): the kernel then keeps nothing. */
    void **state;
    /* The context's packed weights (api.c: attn_packed_lookup finds a
     * matrix in them), or NULL. */
    const struct attn_packed_weights *packed;
    /* Set only for `attnbench explain` (split.h): every parallel region
     * records its split here and, in a dry run, does no work; in a
     * measured one, when it was offered. */
    struct attn_trace *trace;
    /* Set by attn_sdpa_run (compose.c) around an sdpa call, else NULL. A
     * path that scans, inside its own parallel region, each Q row it reads
     * and output row it writes (the SIMD rows' and blocked's tiled
     * attention, right after each tile) sets done, and found where a value
     * is not finite; one that does not leaves done 0, and attn_sdpa_run
     * scans on one thread. Last: positional initializers leave it NULL. */
    attn_finite_scan *finite_scan;
} attn_exec;

/* How many threads' slices of scratch a primitive sizes and lays its scratch
 * out for (its scratch slot and the primitive itself, the same way):
 * ex->n_threads, but 1 in a dry run (split.h), which runs none of its
 * parallel regions, so no thread touches a slice of its own; a dry run of
 * 4096 threads would otherwise allocate 4096 slices (10 GB for a BERT-base
 * layer at L 512). Only the code inside a region may index a slice by its
 * thread. */
int attn_exec_scratch_threads(const attn_exec *ex);

/* A tunable parameter of a kernel (tile sizes). */
#define ATTN_MAX_PARAMS 16
/* The largest decode_rows (kernels/frame/decode.h): the most query rows per
 * key/value head a call on the decode path can have. */
#define ATTN_DECODE_ROWS_MAX 64
typedef struct attn_param {
    const char *name;
    const char *help;
    int min, max;
    int gemm_only;                     /* 1: only the gemm reads it (SDPA alone does not) */
    /* 1: only the decode path reads it (taken by an attention call of at
     * most ATTN_DECODE_ROWS_MAX query rows per key/value head): a shape
     * whose calls all have more never does. */
    int decode_only;
    /* 1: all it changes shows in a dry run's regions (split.h): a path
     * switch, a tile of attention, the thread split. Two of its values
     * whose dry runs record the same regions run the same code on the same
     * tiles (the tuner times one of them), so a region that reads it must
     * name what it chose (the attention's key tile, the products' ways). */
    int traced;
    /* 1: a path switch — compared with a size of the problem (one path
     * below it, another from it up), so its min and its max each mean "this
     * path always": the tuner tries both beside its scaled neighbours, or
     * scaling alone would rarely cross the problem's size. */
    int threshold;
} attn_param;

typedef void (*attn_gemm_fn)(const attn_exec *ex, const attn_gemm_problem *p);
typedef void (*attn_sdpa_fn)(const attn_exec *ex, const attn_sdpa_problem *p);
/* Scratch bytes a gemm of this size needs with ex's threads (per-thread
 * slices: attn_exec_scratch_threads), params and data (packing buffers);
 * SIZE_MAX when that size does not fit in size_t. */
typedef size_t (*attn_gemm_scratch_fn)(const attn_exec *ex, size_t m, int n, int k);
/* Scratch bytes attn_sdpa_fn needs for p with ex's threads (per-thread
 * slices: attn_exec_scratch_threads), params and data; SIZE_MAX when that
 * size does not fit in size_t. */
typedef size_t (*attn_sdpa_scratch_fn)(const attn_exec *ex, const attn_sdpa_problem *p);
/* y[i] = (x[i] − mean)/sqrt(var + eps)·gamma + beta over rows of width d;
 * biased variance. x and y are [m][d] contiguous and do not overlap. */
typedef void (*attn_layernorm_fn)(const attn_exec *ex, size_t m, int d, const float *x,
                                  const float *gamma, const float *beta, float eps, float *y);

/* Where a kernel's loops go from whole tiles to a tail or from one path to
 * another, for the shapes that must straddle each (harness/measure/suites.c:
 * ab_edge_shapes, run by `attnbench check` and tests/test_params.c, as
 * XNNPACK re-expands each micro-kernel's tile into its tests). Sizes that
 * are parameters (mc, kc, nc, bq, bk, stream_from, decode_rows) are read
 * from the params by name; this holds the fixed ones. 0: no such tile. */
typedef struct attn_geometry {
    int mr, nr;                        /* GEMM register tile: rows x columns of C */
    int skinny_rows;                   /* GEMM: B read in place, once, up to this many rows */
    /* Attention's micro-tile, query rows x keys: bq and bk are cut into
     * these (the SIMD kernels round them down to them), and P·V's columns
     * (Dh) into panels of attn_keys. */
    int attn_rows, attn_keys;
    int lanes;                         /* floats per vector of its row loops (their tails) */
    int decode_split;                  /* decode path (decode_rows): keys per split-KV task */
    /* Decode path: query rows register-blocked together (the rest one at
     * a time), and the widest head a single row keeps in registers. */
    int decode_row_group, decode_row_width;
} attn_geometry;

typedef struct attn_kernel {
    const char *name;                  /* stable, lowercase: registry, CLI, JSON */
    const char *description;           /* one line for `attnbench list` */
    /* Non-NULL only in the placeholder row of a kernel built for another
     * architecture (kernels.def): why it cannot run. Such a row has no
     * primitives and is never runnable. */
    const char *unavailable;
    unsigned requires;                 /* ATTN_CPU_* bits that must be usable */
    /* ATTN_CPU_* bits of CPUs on which this row, though it runs, is known
     * to be slower than a row below it: where the CPU has any of them,
     * "auto"/"auto-bf16" pass over it when choosing by features (named,
     * or chosen by the tuner's wisdom, it still runs). 0: none. */
    unsigned auto_passes_over_on;
    /* The math of its products (attn_kernel_math): ATTN_F32 (the zero
     * default), or ATTN_BF16: the operands of every matrix product
     * (projections, FFN, Q·Kᵀ, P·V) rounded to bf16, fp32 accumulation;
     * everything else fp32. "auto" runs only ATTN_F32 rows. */
    attn_dtype math;
    int parallel;                      /* 1: uses the context's threads; 0: one thread */
    int gemm_parts;                    /* 1: gemm takes w_parts (fused QKV projection) */
    int gemm_layernorm;                /* 1: gemm takes ln_out (LayerNorm in its region) */
    /* 1: the kernel chooses its instruction set at run time itself (a
     * library such as OpenBLAS), whatever requires says: its % of peak is
     * held to the widest ISA this machine runs. */
    int own_isa_dispatch;
    /* 1: its sums are split differently with the thread count (a library
     * choosing its own reduction split, as oneDNN does), so results at two
     * thread counts agree within the tolerance but not bitwise. 0 (the
     * default, every kernel of attnbench's): each output element is reduced
     * by one thread in a fixed order, whatever the count. */
    int threads_reorder_sums;
    /* 1: every parallel region its calls run reports its split to a trace
     * (split.h), so `attnbench explain` can show it; 0: a library's own
     * threading or loops not yet described, which explain refuses. */
    int explains;
    const attn_param *params;          /* n_params tunables, or NULL */
    int n_params;
    /* Fills the default value of each param for this machine (from
     * attn_cpu_cache_size); NULL when n_params is 0. */
    void (*default_params)(int *values);
    attn_gemm_fn gemm;                 /* NULL: naive's gemm and gemm_scratch */
    attn_gemm_scratch_fn gemm_scratch; /* NULL: needs none */
    attn_sdpa_fn sdpa;                 /* NULL: naive's sdpa and sdpa_scratch */
    attn_sdpa_scratch_fn sdpa_scratch;
    /* 1 << attn_dtype of each narrow type of keys and values its sdpa
     * reads in place (attn_kv_store); the others are widened to fp32 for
     * it by compose.c, in its time. A kernel whose sdpa slot the registry
     * fills from naive gets naive's kv_types with it. */
    unsigned kv_types;                 /* e.g. ATTN_KV_NARROW: every type */
    attn_layernorm_fn layernorm;
    /* The bytes of an m × n hidden in bf16 (attn_gemm_problem y_bf16,
     * x_bf16) with ex's params, or 0 when its gemm takes none for that
     * shape. NULL: never (the hidden stays fp32). */
    size_t (*bf16_hidden_bytes)(const attn_exec *ex, size_t m, int n);
    /* Weights packed once (attn_weights_pack_encoder): the floats W (n × k)
     * takes packed with ex's params, and its packing into dst (described
     * in *out), which the kernel's gemm then reads through p->packed.
     * NULL: the kernel packs (or reads) W on every call. */
    size_t (*packed_floats)(const attn_exec *ex, int n, int k);
    void (*pack_weights)(const attn_exec *ex, const attn_gemm_problem *p, float *dst,
                         attn_packed_b *out);
    /* Frees what the kernel kept in a context's state slot (attn_exec.state);
     * NULL: it keeps nothing there. */
    void (*state_free)(void *state);
    /* Handed to every primitive as attn_exec.data: what tells apart rows
     * that share their functions (the einsum-* family's loop orders). */
    const void *data;
    attn_geometry geometry;
} attn_kernel;

/* ---- Registry (registry.c, driven by kernels.def) -------------------------- */

int attn_registry_count(void);
const attn_kernel *attn_registry_get(int i);
const attn_kernel *attn_registry_find(const char *name);
/* The index of row k (a pointer the registry gave), or -1. */
int attn_registry_index(const attn_kernel *k);
/* 1 when every bit k->requires is usable on this machine. */
int attn_registry_runnable(const attn_kernel *k);
/* The bits of k->requires that are not usable here (0 when runnable). */
unsigned attn_registry_missing(const attn_kernel *k);
/* 1 when a choice by features passes over k on a CPU with the ATTN_CPU_*
 * bits cpu_has (k->auto_passes_over_on). */
int attn_registry_passed_over(const attn_kernel *k, unsigned cpu_has);
/* The row an "auto" context (bf16: "auto-bf16") chooses by features alone,
 * without ATTN_KERNEL or wisdom: the first runnable row of its math not
 * passed over on this CPU; NULL when none runs. */
const attn_kernel *attn_registry_by_features(int bf16);
/* Copies k and fills its empty slots from the naive kernel. */
void attn_registry_resolve(const attn_kernel *k, attn_kernel *out);
/* The oracle (naive/naive.c): the registry fills empty slots from it, and
 * compose.c runs its SDPA on inputs that are not finite. */
extern const attn_kernel attn_kernel__naive;

/* ---- Mask access shared by every kernel ------------------------------------ */

/* Number of keys query row i (of q_len) may see before the
 * key_padding/keep/bias parts apply: the keys 0 .. visible-1. Top-left
 * causal: row i sees keys 0..i; bottom-right: 0..i + (kv_len − q_len), so
 * with q_len > kv_len the first rows see none (0). */
static inline int attn_mask_visible_keys(const attn_mask *m, int i, int q_len, int kv_len)
{
    if (!m || !m->causal)
        return kv_len;
    long last = (long)i + (m->causal == ATTN_CAUSAL_BOTTOM_RIGHT ? (long)kv_len - q_len : 0);
    return last < 0 ? 0 : last + 1 < kv_len ? (int)last + 1 : kv_len;
}

static inline const uint8_t *attn_mask_padding_row(const attn_mask *m, int b, int kv_len)
{
    return (m && m->key_padding) ? m->key_padding + (size_t)b * (size_t)kv_len : NULL;
}

static inline const uint8_t *attn_mask_keep_row(const attn_mask *m, int b, int i,
                                                int q_len, int kv_len)
{
    if (!m || !m->keep)
        return NULL;
    size_t row = (m->keep_per_batch ? (size_t)b * (size_t)q_len : 0) + (size_t)i;
    return m->keep + row * (size_t)kv_len;
}

static inline const float *attn_mask_bias_row(const attn_mask *m, int b, int i,
                                              int q_len, int kv_len)
{
    if (!m || !m->bias)
        return NULL;
    size_t row = (m->bias_per_batch ? (size_t)b * (size_t)q_len : 0) + (size_t)i;
    return m->bias + row * (size_t)kv_len;
}

/* ---- Checked size arithmetic ------------------------------------------------ */

/* *acc *= n; returns 0 (leaving *acc unspecified) when the product would
 * exceed limit. */
static inline int attn_mul_checked(size_t *acc, size_t n, size_t limit)
{
    if (n != 0 && *acc > limit / n)
        return 0;
    *acc *= n;
    return 1;
}

static inline int attn_add_checked(size_t *acc, size_t n, size_t limit)
{
    if (n > limit || *acc > limit - n)
        return 0;
    *acc += n;
    return 1;
}

#endif /* ATTN_KERNEL_H */
