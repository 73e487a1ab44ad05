/*
 * api.c — the front door: status texts, the context, kernel selection, and
 * every argument check, made here once before any work.
 *
 * Each entry point runs the same sequence: check arguments (INVALID_ARG),
 * check that every size product fits (OVERFLOW), size and allocate the
 * workspace (NO_MEMORY), and only then compute. So a failing call never
 * touches its output.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compose.h"
#include "split.h"
#include "wisdom.h"

/* A kernel, resolved (every slot filled), with its parameter values. */
typedef struct attn_choice {
    attn_kernel kernel;
    int params[ATTN_MAX_PARAMS];
    int row;                     /* the kernel's registry index: its context state slot */
} attn_choice;

struct attn_ctx {
    attn_choice base;            /* named, ATTN_KERNEL, or the first runnable row */
    const char *base_source;     /* "named", "ATTN_KERNEL" or "features" */
    int n_threads;
    /* An "auto" context: this machine's tuned choices (wisdom.h), each for
     * a bucket of calls at this thread count; used instead of base. */
    int n_tuned;
    attn_choice *tuned;
    attn_bucket *tuned_bucket;
    char wisdom_status[320];     /* what loading the wisdom found */
    const attn_choice *last;     /* the choice of the last call, and why */
    const char *last_source;
    void *workspace;             /* grown on demand, reused across calls */
    size_t workspace_bytes;
    /* Each registry row's state slot (attn_exec.state): the onednn
     * kernel's primitives, for one; indexed as the registry. */
    void **kernel_state;
    /* The weights packed for this context (attn_weights_pack_encoder),
     * newest first; each is the caller's to destroy. */
    attn_packed_weights *packed;
    attn_trace *trace;           /* attn_ctx_create_traced's: every call traced */
};

/* One matrix of a packed set: the caller's weights it stands for (W, or the
 * Q, K and V weights stacked: w[0..2]), its size, and its packed form. */
typedef struct packed_matrix {
    const float *w[3];
    int n, k;
    attn_packed_b b;
} packed_matrix;

struct attn_packed_weights {
    attn_ctx *ctx;               /* NULL once the context is destroyed */
    const char *kernel;          /* the row it was packed for (the registry's name) */
    int n, cap;
    packed_matrix *m;
    float *data;                 /* every matrix's panels, one block */
    attn_packed_weights *next;   /* the context's list */
};

/* ---- Status -------------------------------------------------------------- */

const char *attn_version(void)
{
    return ATTN_VERSION_STRING;
}

const char *attn_strerror(attn_status s)
{
    switch (s) {
    case ATTN_OK: return "success";
    case ATTN_ERR_INVALID_ARG: return "invalid argument";
    case ATTN_ERR_NO_MEMORY: return "out of memory";
    case ATTN_ERR_UNSUPPORTED: return "kernel unknown or not runnable on this machine";
    case ATTN_ERR_OVERFLOW: return "size overflow: a tensor or workspace size does not fit in memory";
    case ATTN_ERR_BAD_FILE: return "model file unreadable, malformed or not matching the model";
    case ATTN_ERR_RANGE: return "a value its storage type cannot hold (beyond a 16-bit type's "
                                "range, or not finite in an int8 row)";
    }
    return "unknown status";
}

/* ---- Kernels ---------------------------------------------------------------- */

int attn_kernel_count(void)
{
    return attn_registry_count();
}

const char *attn_kernel_name(int i)
{
    const attn_kernel *k = attn_registry_get(i);
    return k ? k->name : NULL;
}

int attn_kernel_supported(const char *name)
{
    return attn_registry_runnable(attn_registry_find(name));
}

int attn_kernel_math(const char *name)
{
    const attn_kernel *k = attn_registry_find(name);
    return k ? (int)k->math : -1;
}

/* Whether an auto context of this reach may run row k: "auto" fp32 rows
 * only, "auto-bf16" (bf16 set) fp32 and bf16 rows. */
static int auto_may_run(const attn_kernel *k, int bf16)
{
    return k->math == ATTN_F32 || (bf16 && k->math == ATTN_BF16);
}

/* NULL/"auto" defers to ATTN_KERNEL, then to the first runnable fp32 row
 * of kernels.def (most capable first); "auto-bf16" likewise, to the first
 * runnable row of either math; either passes over a row known to be slower
 * on this CPU (auto_passes_over_on). A name, given or from the environment,
 * must exist and run here: never a silent fallback. *bf16: whether the
 * context is "auto-bf16" (its wisdom may then name bf16 rows). */
static const attn_kernel *select_kernel(const char *name, const char **source, int *bf16)
{
    *source = "named";
    *bf16 = name && strcmp(name, "auto-bf16") == 0;
    if (!name || strcmp(name, "auto") == 0 || *bf16) {
        const char *env = getenv("ATTN_KERNEL");
        name = (env && *env && strcmp(env, "auto") != 0 && strcmp(env, "auto-bf16") != 0) ? env
                                                                                        : NULL;
        *source = name ? "ATTN_KERNEL" : "features";
    }
    if (name) {
        const attn_kernel *k = attn_registry_find(name);
        return attn_registry_runnable(k) ? k : NULL;
    }
    return attn_registry_by_features(*bf16);
}

/* The cores this process may run on (taskset/cgroup aware), at least 1:
 * cores, not hardware threads (attn.h), since two threads of one core
 * share its FMA units and the kernels are bound by them. */
static int available_cores(void)
{
    int *cpus, n = attn_cpu_affinity_cpus(&cpus);
    if (n > 0) {
        int cores = attn_cpu_cores_in(cpus, n, "/sys/devices/system/cpu");
        free(cpus);
        return cores;
    }
    free(cpus);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

/* ---- Kernel parameters --------------------------------------------------------- */

static void default_params(const attn_kernel *k, int *values)
{
    for (int i = 0; i < ATTN_MAX_PARAMS; i++)
        values[i] = 0;
    if (k->n_params > 0 && k->default_params)
        k->default_params(values);
}

int attn_kernel_param_count(const char *kernel)
{
    const attn_kernel *k = attn_registry_find(kernel);
    return k ? k->n_params : 0;
}

attn_status attn_kernel_param_info(const char *kernel, int i, attn_param_info *info)
{
    const attn_kernel *k = attn_registry_find(kernel);
    if (!k || !info || i < 0 || i >= k->n_params)
        return ATTN_ERR_INVALID_ARG;
    int values[ATTN_MAX_PARAMS];
    default_params(k, values);
    info->name = k->params[i].name;
    info->help = k->params[i].help;
    info->min = k->params[i].min;
    info->max = k->params[i].max;
    info->default_value = values[i];
    return ATTN_OK;
}

static int param_index(const attn_kernel *k, const char *name)
{
    for (int i = 0; name && i < k->n_params; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return i;
    return -1;
}

/* Parameters set by hand apply to the base choice (an "auto" context's
 * tuned choices keep the values they were tuned with). */
attn_status attn_ctx_set_param(attn_ctx *ctx, const char *name, int value)
{
    int i = ctx ? param_index(&ctx->base.kernel, name) : -1;
    if (i < 0 || value < ctx->base.kernel.params[i].min || value > ctx->base.kernel.params[i].max)
        return ATTN_ERR_INVALID_ARG;
    ctx->base.params[i] = value;
    return ATTN_OK;
}

attn_status attn_ctx_get_param(const attn_ctx *ctx, const char *name, int *value)
{
    int i = ctx ? param_index(&ctx->base.kernel, name) : -1;
    if (i < 0 || !value)
        return ATTN_ERR_INVALID_ARG;
    *value = ctx->base.params[i];
    return ATTN_OK;
}

/* ---- Wisdom --------------------------------------------------------------------- */

/* A record's kernel and parameters as a choice; 0 when the kernel does not
 * run here or a parameter is unknown or out of range (the record is then
 * not used: never trusted blindly). */
/* Row k (runnable) resolved, with its default params. */
static void choice_init(attn_choice *c, const attn_kernel *k)
{
    attn_registry_resolve(k, &c->kernel);
    default_params(&c->kernel, c->params);
    c->row = attn_registry_index(k);
}

static int choice_of_record(const attn_wisdom_record *r, attn_choice *c)
{
    const attn_kernel *k = attn_registry_find(r->kernel);
    /* naive is the oracle, never a choice (tune never stores it; an
     * imported or hand-written record could). */
    if (!attn_registry_runnable(k) || strcmp(k->name, "naive") == 0)
        return 0;
    choice_init(c, k);
    for (int p = 0; p < r->n_params; p++) {
        int i = param_index(&c->kernel, r->param_name[p]);
        if (i < 0 || r->param_value[p] < c->kernel.params[i].min
            || r->param_value[p] > c->kernel.params[i].max)
            return 0;
        c->params[i] = r->param_value[p];
    }
    return 1;
}

/* Loads this machine's tuned choices at this thread count. Failures leave
 * the context untuned and say why in wisdom_status (the library never
 * prints; `attnbench info` shows it). */
static void load_wisdom(attn_ctx *c, int bf16)
{
    char path[4096], err[160], key[320];
    if (attn_wisdom_default_path(path, sizeof path) != 0) {
        snprintf(c->wisdom_status, sizeof c->wisdom_status, "no wisdom path (no HOME)");
        return;
    }
    attn_wisdom *w = malloc(sizeof *w);
    if (!w) {
        snprintf(c->wisdom_status, sizeof c->wisdom_status, "out of memory reading %.120s", path);
        return;
    }
    int rc = attn_wisdom_read(path, w, err, sizeof err);
    if (rc != 0) {
        snprintf(c->wisdom_status, sizeof c->wisdom_status, "%s: %s", rc == -2 ? "none" : "ignored",
                 err);
        free(w);
        return;
    }
    attn_machine_key(key, sizeof key);
    uint64_t me = attn_machine_hash(key);
    int mine = 0, others = 0;
    for (int i = 0; i < w->n; i++)
        w->rec[i].machine == me ? mine++ : others++;
    c->tuned = calloc((size_t)(mine ? mine : 1), sizeof *c->tuned);
    c->tuned_bucket = calloc((size_t)(mine ? mine : 1), sizeof *c->tuned_bucket);
    if (!c->tuned || !c->tuned_bucket) {
        snprintf(c->wisdom_status, sizeof c->wisdom_status, "out of memory reading %.120s", path);
        free(w);
        return;
    }
    int unusable = 0;
    for (int i = 0; i < w->n; i++) {
        const attn_wisdom_record *r = &w->rec[i];
        const attn_kernel *k = attn_registry_find(r->kernel);
        if (r->machine != me || r->bucket.threads != c->n_threads || (k && !auto_may_run(k, bf16)))
            continue;
        /* A bucket tuned in both maths (wisdom.h): "auto-bf16" takes the
         * faster record. An fp32 record alone came from a tune without
         * the bf16 rows (or one they lost, which the record cannot say):
         * it is no evidence against them, so "auto-bf16" keeps its own
         * choice by features there (a plain `tune` made it run avx512
         * where avx512-bf16 is 1.6-1.7x faster). */
        const attn_wisdom_record *other = bf16 ? attn_wisdom_find_other_math(w, r) : NULL;
        if (other && other->time_ns > 0.0 && other->time_ns < r->time_ns)
            continue;
        if (bf16 && k && k->math == ATTN_F32 && !other)
            continue;
        if (!choice_of_record(r, &c->tuned[c->n_tuned])) {
            unusable++;
            continue;
        }
        c->tuned_bucket[c->n_tuned++] = r->bucket;
    }
    snprintf(c->wisdom_status, sizeof c->wisdom_status,
             "%.100s: %d records for this machine (%d at %d threads in use%s), %d of other machines",
             path, mine, c->n_tuned, c->n_threads, unusable ? ", some unusable here" : "", others);
    free(w);
}

/* The choice for one call, its keys and values stored as k_type and
 * v_type: a tuned one for its bucket, else the base. */
static const attn_choice *choose(attn_ctx *ctx, int op, int q_len, int kv_len, int head_dim,
                                 const attn_mask *mask, attn_dtype k_type, attn_dtype v_type)
{
    ctx->last = &ctx->base;
    ctx->last_source = ctx->base_source;
    if (ctx->n_tuned) {
        attn_bucket b;
        attn_bucket_of(&b, op, q_len, kv_len, head_dim, mask, k_type, v_type, ctx->n_threads);
        for (int i = 0; i < ctx->n_tuned; i++)
            if (attn_bucket_equal(&ctx->tuned_bucket[i], &b)) {
                ctx->last = &ctx->tuned[i];
                ctx->last_source = "wisdom";
                break;
            }
    }
    return ctx->last;
}

const char *attn_ctx_wisdom_status(const attn_ctx *ctx)
{
    return ctx ? ctx->wisdom_status : NULL;
}

const char *attn_ctx_last_choice(const attn_ctx *ctx, const char **source)
{
    if (!ctx || !ctx->last)
        return NULL;
    if (source)
        *source = ctx->last_source;
    return ctx->last->kernel.name;
}

/* ---- Context ---------------------------------------------------------------- */

static attn_status ctx_create(attn_ctx **ctx, const char *kernel, int n_threads, attn_trace *trace);

attn_status attn_ctx_create(attn_ctx **ctx, const char *kernel, int n_threads)
{
    return ctx_create(ctx, kernel, n_threads, NULL);
}

attn_status attn_ctx_create_traced(attn_ctx **ctx, const char *kernel, int n_threads,
                                   attn_trace *trace)
{
    return trace && n_threads > 0 && n_threads <= ATTN_MAX_THREADS
               ? ctx_create(ctx, kernel, n_threads, trace)
               : ATTN_ERR_INVALID_ARG;
}

static attn_status ctx_create(attn_ctx **ctx, const char *kernel, int n_threads, attn_trace *trace)
{
    if (!ctx || n_threads < 0 || n_threads > ATTN_MAX_THREADS)
        return ATTN_ERR_INVALID_ARG;
    const char *source;
    int bf16;
    const attn_kernel *k = select_kernel(kernel, &source, &bf16);
    if (!k)
        return ATTN_ERR_UNSUPPORTED;
    attn_ctx *c = calloc(1, sizeof *c);
    void **state = calloc((size_t)attn_registry_count(), sizeof *state);
    if (!c || !state) {
        free(c);
        free(state);
        return ATTN_ERR_NO_MEMORY;
    }
    c->kernel_state = state;
    choice_init(&c->base, k);
    c->base_source = source;
    c->n_threads = n_threads > 0 ? n_threads : available_cores();
    c->trace = trace;
    if (strcmp(source, "features") == 0)
        load_wisdom(c, bf16);
    else
        snprintf(c->wisdom_status, sizeof c->wisdom_status, "not used: the kernel was %s",
                 strcmp(source, "named") == 0 ? "named" : "forced by ATTN_KERNEL");
#ifdef _OPENMP
    /* Start the thread team now, with the caller's CPU affinity, so that no
     * call pays for thread creation (OpenMP keeps the team between calls). */
    if (c->n_threads > 1 && (!trace || trace->measure)) {
        /* A body the compiler cannot drop: an empty region is optimized away. */
        volatile int started = 0;
#pragma omp parallel num_threads(c->n_threads)
        {
#pragma omp atomic
            started++;
        }
        (void)started;
    }
#endif
    *ctx = c;
    return ATTN_OK;
}

void attn_ctx_destroy(attn_ctx *ctx)
{
    if (!ctx)
        return;
    /* Packed weights outlive their context: they are the caller's to
     * destroy, and no longer used by anything. */
    for (attn_packed_weights *p = ctx->packed; p; p = p->next)
        p->ctx = NULL;
    for (int i = 0; ctx->kernel_state && i < attn_registry_count(); i++)
        if (ctx->kernel_state[i])
            attn_registry_get(i)->state_free(ctx->kernel_state[i]);
    free(ctx->kernel_state);
    free(ctx->workspace);
    free(ctx->tuned);
    free(ctx->tuned_bucket);
    free(ctx);
}

const char *attn_ctx_kernel(const attn_ctx *ctx)
{
    return ctx ? ctx->base.kernel.name : NULL;
}

/* Grows the workspace to at least bytes; on failure the old one is kept. */
static attn_status reserve_workspace(attn_ctx *ctx, const attn_choice *c, size_t bytes)
{
    /* A traced call (attn_ctx_create_traced) runs only kernels that
     * describe their split: a dry run of any other would do the work, on
     * the traced threads; a measured one would time regions it cannot see. */
    if (ctx->trace && !c->kernel.explains)
        return ATTN_ERR_UNSUPPORTED;
    if (bytes == SIZE_MAX)
        return ATTN_ERR_OVERFLOW;
    if (bytes <= ctx->workspace_bytes)
        return ATTN_OK;
    void *p = NULL;
    /* bytes <= PTRDIFF_MAX, so rounding up to 64 cannot wrap. */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (posix_memalign(&p, 64, rounded) != 0)
        return ATTN_ERR_NO_MEMORY;
    free(ctx->workspace);
    ctx->workspace = p;
    ctx->workspace_bytes = rounded;
    return ATTN_OK;
}

/* What the primitives see: threads, params, and (once allocated) the workspace. */
static attn_exec exec_of(const attn_ctx *ctx, const attn_choice *c)
{
    attn_exec ex = { ctx->n_threads, c->params, ctx->workspace, ctx->workspace_bytes,
                     c->kernel.data, &ctx->kernel_state[c->row], ctx->packed, ctx->trace, NULL };
    return ex;
}

/* ---- Argument checks ------------------------------------------------------------ */

/* 1 when elem·a·b·c·d bytes fit within ATTN_SIZE_LIMIT and no factor is
 * above ATTN_DIM_LIMIT (all factors > 0). */
static int fits(size_t elem, int a, int b, int c, int d)
{
    size_t n = elem;
    if (a > ATTN_DIM_LIMIT || b > ATTN_DIM_LIMIT || c > ATTN_DIM_LIMIT || d > ATTN_DIM_LIMIT)
        return 0;
    return attn_mul_checked(&n, (size_t)a, ATTN_SIZE_LIMIT)
        && attn_mul_checked(&n, (size_t)b, ATTN_SIZE_LIMIT)
        && attn_mul_checked(&n, (size_t)c, ATTN_SIZE_LIMIT)
        && attn_mul_checked(&n, (size_t)d, ATTN_SIZE_LIMIT);
}

/* causal is 0, top-left or bottom-right (contract 0.2 narrowed "nonzero"). */
static int mask_valid(const attn_mask *m)
{
    return !m || m->causal == 0 || m->causal == ATTN_CAUSAL_TOP_LEFT
        || m->causal == ATTN_CAUSAL_BOTTOM_RIGHT;
}

/* A mask with no part set is the same as no mask. */
static const attn_mask *effective_mask(const attn_mask *m)
{
    return (m && (m->causal || m->key_padding || m->keep || m->bias)) ? m : NULL;
}

/* The parts of a mask that are given are read in full: their sizes must fit. */
static int mask_fits(const attn_mask *m, int batch, int q_len, int kv_len)
{
    if (!m)
        return 1;
    if (m->key_padding && !fits(1, batch, kv_len, 1, 1))
        return 0;
    if (m->keep && !fits(1, m->keep_per_batch ? batch : 1, q_len, kv_len, 1))
        return 0;
    if (m->bias && !fits(sizeof(float), m->bias_per_batch ? batch : 1, q_len, kv_len, 1))
        return 0;
    return 1;
}

static int weights_present(const attn_mha_weights *w)
{
    return w->w_q && w->w_k && w->w_v && w->w_o;
}

static int encoder_weights_present(const attn_encoder_weights *w)
{
    return weights_present(&w->attn) && w->ln1_gamma && w->ln1_beta && w->ln2_gamma
        && w->ln2_beta && w->w_ff1 && w->w_ff2;
}

/* The layer config rules shared by the encoder and decoder layers. */
static int config_valid(const attn_encoder_config *c)
{
    int act = (int)c->act;   /* as int: an out-of-range value may not fit the enum */
    return c->d_model > 0 && c->n_heads > 0 && c->d_ff > 0 && c->d_model % c->n_heads == 0
        && isfinite(c->ln_eps) && c->ln_eps >= 0.0f
        && (act == ATTN_ACT_GELU_ERF || act == ATTN_ACT_GELU_TANH || act == ATTN_ACT_RELU);
}

/* ---- Entry points ------------------------------------------------------------------ */

/* attn_sdpa and attn_sdpa_kv: keys and values are k and v when their
 * stores are ATTN_F32, else the stores' data. */
static attn_status sdpa_call(attn_ctx *ctx, const attn_sdpa_shape *s, const float *q,
                             const float *k, const float *v, const attn_kv_store *ks,
                             const attn_kv_store *vs, const attn_mask *mask, float *out)
{
    if (!ctx || !s || !q || !out)
        return ATTN_ERR_INVALID_ARG;
    if (s->batch <= 0 || s->n_heads <= 0 || s->q_len <= 0 || s->kv_len <= 0 || s->head_dim <= 0
        || !isfinite(s->scale) || !mask_valid(mask))
        return ATTN_ERR_INVALID_ARG;
    /* Contract 0.2: grouped key/value heads and a cache read in place. */
    int kv_heads = s->n_kv_heads ? s->n_kv_heads : s->n_heads;
    int capacity = s->kv_capacity ? s->kv_capacity : s->kv_len;
    if (kv_heads <= 0 || s->n_heads % kv_heads != 0 || capacity < s->kv_len)
        return ATTN_ERR_INVALID_ARG;
    mask = effective_mask(mask);
    if (!fits(sizeof(float), s->batch, s->n_heads, s->q_len, s->head_dim)
        || !fits(sizeof(float), s->batch, kv_heads, capacity, s->head_dim)
        || !mask_fits(mask, s->batch, s->q_len, s->kv_len))
        return ATTN_ERR_OVERFLOW;

    size_t dh = (size_t)s->head_dim, cap = (size_t)capacity;
    attn_strides q_st = { (size_t)s->n_heads * (size_t)s->q_len * dh, (size_t)s->q_len * dh, dh };
    attn_strides kv_st = { (size_t)kv_heads * cap * dh, cap * dh, dh };
    attn_strides scale_st = { (size_t)kv_heads * cap, cap, 1 };
    attn_sdpa_problem p = {
        .batch = s->batch, .n_heads = s->n_heads, .q_len = s->q_len, .kv_len = s->kv_len,
        .head_dim = s->head_dim, .scale = attn_resolve_scale(s->scale, s->head_dim),
        .q = q, .k = k, .v = v, .out = out,
        .q_st = q_st, .k_st = kv_st, .v_st = kv_st, .out_st = q_st, .mask = mask,
        .n_kv_heads = kv_heads, .k_store = *ks, .v_store = *vs,
    };
    p.k_store.scale_st = p.v_store.scale_st = scale_st;
    const attn_choice *c = choose(ctx, ATTN_OP_SDPA, s->q_len, s->kv_len, s->head_dim, mask,
                                   ks->type, vs->type);
    attn_exec ex = exec_of(ctx, c);
    attn_status st = reserve_workspace(ctx, c, attn_sdpa_workspace(&c->kernel, &ex, &p));
    if (st != ATTN_OK)
        return st;
    ex = exec_of(ctx, c);
    attn_sdpa_run(&c->kernel, &ex, &p);
    return ATTN_OK;
}

attn_status attn_sdpa(attn_ctx *ctx, const attn_sdpa_shape *s,
                      const float *q, const float *k, const float *v,
                      const attn_mask *mask, float *out)
{
    const attn_kv_store f32 = { .type = ATTN_F32 };
    if (!k || !v)
        return ATTN_ERR_INVALID_ARG;
    return sdpa_call(ctx, s, q, k, v, &f32, &f32, mask, out);
}

/* A view as the problem's store (ATTN_F32: its data is the fp32 k or v);
 * 0 when it is not one (NULL, no data, an unknown type, int8 unscaled, or
 * fp32 data at an address no float can be at: the kernels read ATTN_F32
 * views as the floats of attn_sdpa, which is undefined behaviour in C
 * there, caught by a review's UBSan build in blocked's GEMM; the narrow
 * types are read bytewise and may be anywhere). */
static int view_store(const attn_kv_view *view, attn_kv_store *s)
{
    if (!view || !view->data || attn_dtype_bytes(view->type) == 0
        || (view->type == ATTN_F32 && (uintptr_t)view->data % sizeof(float) != 0)
        || (view->type == ATTN_I8 && !view->scale))
        return 0;
    attn_kv_store st = { .type = view->type, .data = view->data,
                         .scale = view->type == ATTN_I8 ? view->scale : NULL };
    *s = st;
    return 1;
}

attn_status attn_sdpa_kv(attn_ctx *ctx, const attn_sdpa_shape *s, const float *q,
                         const attn_kv_view *k, const attn_kv_view *v, const attn_mask *mask,
                         float *out)
{
    attn_kv_store ks, vs;
    if (!view_store(k, &ks) || !view_store(v, &vs))
        return ATTN_ERR_INVALID_ARG;
    return sdpa_call(ctx, s, q, ks.type == ATTN_F32 ? ks.data : NULL,
                     vs.type == ATTN_F32 ? vs.data : NULL, &ks, &vs, mask, out);
}

attn_status attn_mha(attn_ctx *ctx, int d_model, int n_heads, float scale,
                     const attn_mha_weights *w, int batch, int q_len, int kv_len,
                     const float *x_q, const float *x_kv, const attn_mask *mask, float *y)
{
    if (!ctx || !w || !weights_present(w) || !x_q || !x_kv || !y)
        return ATTN_ERR_INVALID_ARG;
    if (d_model <= 0 || n_heads <= 0 || batch <= 0 || q_len <= 0 || kv_len <= 0
        || d_model % n_heads != 0 || !isfinite(scale) || !mask_valid(mask))
        return ATTN_ERR_INVALID_ARG;
    mask = effective_mask(mask);
    if (!fits(sizeof(float), d_model, d_model, 1, 1)
        || !fits(sizeof(float), batch, q_len, d_model, 1)
        || !fits(sizeof(float), batch, kv_len, d_model, 1)
        || !mask_fits(mask, batch, q_len, kv_len))
        return ATTN_ERR_OVERFLOW;

    attn_mha_args a = {
        .batch = batch, .q_len = q_len, .kv_len = kv_len, .d_model = d_model,
        .n_heads = n_heads, .scale = attn_resolve_scale(scale, d_model / n_heads),
        .w = w, .x_q = x_q, .x_kv = x_kv, .mask = mask, .y = y,
    };
    const attn_choice *c = choose(ctx, ATTN_OP_MHA, q_len, kv_len, d_model / n_heads, mask,
                                   ATTN_F32, ATTN_F32);
    attn_exec ex = exec_of(ctx, c);
    attn_status st = reserve_workspace(ctx, c, attn_mha_workspace(&c->kernel, &ex, &a));
    if (st != ATTN_OK)
        return st;
    ex = exec_of(ctx, c);
    attn_mha_run(&c->kernel, &ex, &a);
    return ATTN_OK;
}

attn_status attn_encoder_layer(attn_ctx *ctx, const attn_encoder_config *c,
                               const attn_encoder_weights *w, int batch, int seq_len,
                               const float *x, const attn_mask *mask, float *y)
{
    /* A stack of one layer without a final LayerNorm: the same checks, the
     * same buffers (no stream buffer: the layer writes y) and the same run. */
    return attn_encoder(ctx, c, 1, w, NULL, NULL, batch, seq_len, x, mask, y);
}

/* ---- Encoder stack and embeddings ------------------------------------------------ */

attn_status attn_encoder(attn_ctx *ctx, const attn_encoder_config *c, int n_layers,
                         const attn_encoder_weights *layers,
                         const float *final_ln_gamma, const float *final_ln_beta,
                         int batch, int seq_len, const float *x, const attn_mask *mask,
                         float *y)
{
    if (!ctx || !c || !layers || n_layers <= 0 || !x || !y
        || !final_ln_gamma != !final_ln_beta)
        return ATTN_ERR_INVALID_ARG;
    for (int i = 0; i < n_layers; i++)
        if (!encoder_weights_present(&layers[i]))
            return ATTN_ERR_INVALID_ARG;
    if (!config_valid(c) || batch <= 0 || seq_len <= 0 || !mask_valid(mask))
        return ATTN_ERR_INVALID_ARG;
    mask = effective_mask(mask);
    if (!fits(sizeof(float), c->d_model, c->d_model, 1, 1)
        || !fits(sizeof(float), c->d_ff, c->d_model, 1, 1)
        || !fits(sizeof(float), batch, seq_len, c->d_model, 1)
        || !mask_fits(mask, batch, seq_len, seq_len))
        return ATTN_ERR_OVERFLOW;

    attn_stack_args a = {
        .layer = { .c = c, .batch = batch, .seq_len = seq_len, .x = x, .mask = mask, .y = y },
        .n_layers = n_layers, .layers = layers,
        .final_gamma = final_ln_gamma, .final_beta = final_ln_beta,
    };
    /* One choice for the whole stack: its layers are the same shape. */
    const attn_choice *ch = choose(ctx, ATTN_OP_ENCODER, seq_len, seq_len,
                                   c->d_model / c->n_heads, mask, ATTN_F32, ATTN_F32);
    attn_exec ex = exec_of(ctx, ch);
    attn_status st = reserve_workspace(ctx, ch, attn_stack_workspace(&ch->kernel, &ex, &a));
    if (st != ATTN_OK)
        return st;
    ex = exec_of(ctx, ch);
    attn_stack_run(&ch->kernel, &ex, &a);
    return ATTN_OK;
}

/* 1 when every id of the n is in [0, limit). */
static int ids_in_range(const int32_t *ids, size_t n, int limit)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad |= ids[i] < 0 || ids[i] >= limit;
    return !bad;
}

attn_status attn_embed(attn_ctx *ctx, const attn_embedding_config *c,
                       const attn_embedding_weights *w, int batch, int seq_len,
                       const int32_t *ids, const int32_t *type_ids, int position_offset,
                       float *x)
{
    if (!ctx || !c || !w || !ids || !x || !w->token || !w->position
        || !w->ln_gamma != !w->ln_beta)
        return ATTN_ERR_INVALID_ARG;
    if (c->vocab_size <= 0 || c->max_positions <= 0 || c->n_token_types < 0 || c->d_model <= 0
        || !isfinite(c->ln_eps) || c->ln_eps < 0.0f || batch <= 0 || seq_len <= 0
        || (c->n_token_types > 0 && !w->token_type))
        return ATTN_ERR_INVALID_ARG;
    if (position_offset < 0 || position_offset > c->max_positions
        || seq_len > c->max_positions - position_offset)
        return ATTN_ERR_INVALID_ARG;
    if (!fits(sizeof(float), c->vocab_size, c->d_model, 1, 1)
        || !fits(sizeof(float), c->max_positions, c->d_model, 1, 1)
        || !fits(sizeof(float), c->n_token_types > 0 ? c->n_token_types : 1, c->d_model, 1, 1)
        || !fits(sizeof(float), batch, seq_len, c->d_model, 1))
        return ATTN_ERR_OVERFLOW;
    size_t n = (size_t)batch * (size_t)seq_len;
    int types = c->n_token_types > 0 ? c->n_token_types : 1;
    if (!ids_in_range(ids, n, c->vocab_size) || (type_ids && !ids_in_range(type_ids, n, types)))
        return ATTN_ERR_INVALID_ARG;

    attn_embed_args a = {
        .c = c, .w = w, .batch = batch, .seq_len = seq_len, .ids = ids,
        .type_ids = c->n_token_types > 0 ? type_ids : NULL,
        .position_offset = position_offset, .x = x,
    };
    /* Only a LayerNorm: the context's base kernel (tuned buckets are of
     * attention shapes, which an embedding has none of). */
    const attn_choice *ch = &ctx->base;
    ctx->last = ch;
    ctx->last_source = ctx->base_source;
    attn_exec ex = exec_of(ctx, ch);
    attn_status st = reserve_workspace(ctx, ch, attn_embed_workspace(&ch->kernel, &ex, &a));
    if (st != ATTN_OK)
        return st;
    ex = exec_of(ctx, ch);
    attn_embed_run(&ch->kernel, &ex, &a);
    return ATTN_OK;
}

/* ---- KV cache and the decoder layer --------------------------------------------- */

/* 64-byte aligned; bytes checked by the caller. */
static void *alloc_bytes(size_t bytes)
{
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 64) == 0 ? p : NULL;
}

/* The rows of n elements of type t (and, for ATTN_I8, their scales) of one
 * of the cache's tensors. 0 when out of memory. */
static int alloc_typed(attn_dtype t, size_t rows, size_t n, void **data, float **scale)
{
    *data = alloc_bytes(rows * n * attn_dtype_bytes(t));
    *scale = t == ATTN_I8 ? alloc_bytes(rows * sizeof(float)) : NULL;
    return *data && (t != ATTN_I8 || *scale);
}

attn_status attn_kv_cache_create_typed(attn_kv_cache **cache, int batch, int n_heads,
                                       int head_dim, int capacity, attn_dtype k_type,
                                       attn_dtype v_type)
{
    if (!cache || batch <= 0 || n_heads <= 0 || head_dim <= 0 || capacity <= 0
        || attn_dtype_bytes(k_type) == 0 || attn_dtype_bytes(v_type) == 0)
        return ATTN_ERR_INVALID_ARG;
    if (!fits(sizeof(float), batch, n_heads, capacity, head_dim))
        return ATTN_ERR_OVERFLOW;
    size_t rows = (size_t)batch * (size_t)n_heads * (size_t)capacity;
    attn_kv_cache *c = calloc(1, sizeof *c);
    if (!c || !alloc_typed(k_type, rows, (size_t)head_dim, &c->k, &c->k_scale)
        || !alloc_typed(v_type, rows, (size_t)head_dim, &c->v, &c->v_scale)) {
        attn_kv_cache_destroy(c);
        return ATTN_ERR_NO_MEMORY;
    }
    c->batch = batch;
    c->n_heads = n_heads;
    c->head_dim = head_dim;
    c->capacity = capacity;
    c->k_type = k_type;
    c->v_type = v_type;
    *cache = c;
    return ATTN_OK;
}

attn_status attn_kv_cache_create(attn_kv_cache **cache, int batch, int n_heads, int head_dim,
                                 int capacity)
{
    return attn_kv_cache_create_typed(cache, batch, n_heads, head_dim, capacity, ATTN_F32,
                                      ATTN_F32);
}

static void free_memory_projections(attn_kv_cache *c)
{
    free(c->mem_k);
    free(c->mem_v);
    free(c->mem_k_scale);
    free(c->mem_v_scale);
}

void attn_kv_cache_destroy(attn_kv_cache *cache)
{
    if (!cache)
        return;
    free(cache->k);
    free(cache->v);
    free(cache->k_scale);
    free(cache->v_scale);
    free_memory_projections(cache);
    free(cache);
}

int attn_kv_cache_length(const attn_kv_cache *cache)
{
    return cache ? cache->length : -1;
}

void attn_kv_cache_reset(attn_kv_cache *cache)
{
    if (cache)
        cache->length = cache->mem_len = 0;
}

/* Room for the memory's projections (rows = B·mem_len·H rows of Dh each)
 * before a call that makes them; on failure the cache is as it was. */
static attn_status cache_reserve_memory(attn_kv_cache *c, size_t rows)
{
    if (rows <= c->mem_rows)
        return ATTN_OK;
    attn_kv_cache fresh = *c;
    fresh.mem_k = fresh.mem_v = NULL;
    fresh.mem_k_scale = fresh.mem_v_scale = NULL;
    if (!alloc_typed(c->k_type, rows, (size_t)c->head_dim, &fresh.mem_k, &fresh.mem_k_scale)
        || !alloc_typed(c->v_type, rows, (size_t)c->head_dim, &fresh.mem_v, &fresh.mem_v_scale)) {
        free_memory_projections(&fresh);
        return ATTN_ERR_NO_MEMORY;
    }
    free_memory_projections(c);
    *c = fresh;
    c->mem_rows = rows;
    return ATTN_OK;
}

static int decoder_weights_present(const attn_decoder_weights *w)
{
    return weights_present(&w->self_attn) && weights_present(&w->cross_attn)
        && w->ln1_gamma && w->ln1_beta && w->ln2_gamma && w->ln2_beta && w->ln3_gamma
        && w->ln3_beta && w->w_ff1 && w->w_ff2;
}

attn_status attn_decoder_layer(attn_ctx *ctx, const attn_encoder_config *c,
                               const attn_decoder_weights *w, int batch, int tgt_len,
                               const float *x, int mem_len, const float *memory,
                               const uint8_t *mem_key_padding, attn_kv_cache *cache, float *y)
{
    if (!ctx || !c || !w || !decoder_weights_present(w) || !x || !y || !config_valid(c)
        || batch <= 0 || tgt_len <= 0 || mem_len <= 0)
        return ATTN_ERR_INVALID_ARG;
    int need_memory = !cache || cache->length == 0;
    if (need_memory && !memory)
        return ATTN_ERR_INVALID_ARG;
    if (cache && (cache->batch != batch || cache->n_heads != c->n_heads
                  || cache->head_dim != c->d_model / c->n_heads
                  || tgt_len > cache->capacity - cache->length
                  || (cache->length > 0 && cache->mem_len != mem_len)))
        return ATTN_ERR_INVALID_ARG;
    if (!fits(sizeof(float), c->d_model, c->d_model, 1, 1)
        || !fits(sizeof(float), c->d_ff, c->d_model, 1, 1)
        || !fits(3 * sizeof(float), batch, tgt_len, c->d_model, 1)
        || !fits(sizeof(float), batch, mem_len, c->d_model, 1))
        return ATTN_ERR_OVERFLOW;

    attn_decoder_args a = {
        .c = c, .w = w, .batch = batch, .tgt_len = tgt_len, .mem_len = mem_len,
        .x = x, .memory = memory, .mem_key_padding = mem_key_padding, .cache = cache, .y = y,
    };
    /* The encoder's bucket: a decoder layer is the same gemms and LayerNorms
     * around two attentions (wisdom has no decoder bucket yet), with its
     * cache's storage. */
    int kv_len = (cache ? cache->length : 0) + tgt_len;
    const attn_choice *ch = choose(ctx, ATTN_OP_ENCODER, tgt_len, kv_len,
                                   c->d_model / c->n_heads, NULL,
                                   cache ? cache->k_type : ATTN_F32,
                                   cache ? cache->v_type : ATTN_F32);
    attn_exec ex = exec_of(ctx, ch);
    attn_status st = reserve_workspace(ctx, ch, attn_decoder_workspace(&ch->kernel, &ex, &a));
    if (st == ATTN_OK && cache && need_memory)
        st = cache_reserve_memory(cache, (size_t)batch * (size_t)mem_len * (size_t)c->n_heads);
    if (st != ATTN_OK)
        return st;
    ex = exec_of(ctx, ch);
    return attn_decoder_run(&ch->kernel, &ex, &a);
}

/* ---- Weights packed once ----------------------------------------------------------- */

const attn_packed_b *attn_packed_lookup(const attn_exec *ex, const char *kernel,
                                        const float *w0, const float *w1, const float *w2, int n,
                                        int k)
{
    for (const attn_packed_weights *p = ex->packed; p; p = p->next) {
        if (p->kernel != kernel)   /* the registry's name: one pointer per row */
            continue;
        for (int i = 0; i < p->n; i++) {
            const packed_matrix *m = &p->m[i];
            if (m->w[0] == w0 && m->w[1] == w1 && m->w[2] == w2 && m->n == n && m->k == k)
                return &m->b;
        }
    }
    return NULL;
}

/* Adds matrix (w0..w2: W, or the stacked Q, K and V weights) to p's list,
 * unless it is there already (layers may share weights). */
static int packed_add(attn_packed_weights *p, const float *w0, const float *w1, const float *w2,
                      int n, int k)
{
    for (int i = 0; i < p->n; i++)
        if (p->m[i].w[0] == w0 && p->m[i].w[1] == w1 && p->m[i].w[2] == w2 && p->m[i].n == n
            && p->m[i].k == k)
            return 0;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        packed_matrix *m = realloc(p->m, (size_t)cap * sizeof *m);
        if (!m)
            return -1;
        p->m = m;
        p->cap = cap;
    }
    p->m[p->n++] = (packed_matrix){ .w = { w0, w1, w2 }, .n = n, .k = k };
    return 0;
}

/* The matrices of one encoder layer as the composition multiplies them:
 * the Q, K and V weights stacked when the kernel takes them so (gemm_parts),
 * else each; W_o; W1; W2. */
static int packed_add_layer(attn_packed_weights *p, const attn_kernel *k, int d, int f,
                            const attn_encoder_weights *w)
{
    const attn_mha_weights *a = &w->attn;
    int rc = k->gemm_parts ? packed_add(p, a->w_q, a->w_k, a->w_v, 3 * d, d)
           : packed_add(p, a->w_q, NULL, NULL, d, d) | packed_add(p, a->w_k, NULL, NULL, d, d)
                 | packed_add(p, a->w_v, NULL, NULL, d, d);
    return rc | packed_add(p, a->w_o, NULL, NULL, d, d) | packed_add(p, w->w_ff1, NULL, NULL, f, d)
         | packed_add(p, w->w_ff2, NULL, NULL, d, f);
}

void attn_weights_destroy(attn_packed_weights *p)
{
    if (!p)
        return;
    if (p->ctx)
        for (attn_packed_weights **at = &p->ctx->packed; *at; at = &(*at)->next)
            if (*at == p) {
                *at = p->next;
                break;
            }
    free(p->m);
    free(p->data);
    free(p);
}

attn_status attn_weights_pack_encoder(attn_ctx *ctx, const attn_encoder_config *c, int n_layers,
                                      const attn_encoder_weights *layers,
                                      attn_packed_weights **out)
{
    if (!ctx || !c || !layers || n_layers <= 0 || !out || !config_valid(c))
        return ATTN_ERR_INVALID_ARG;
    for (int i = 0; i < n_layers; i++)
        if (!encoder_weights_present(&layers[i]))
            return ATTN_ERR_INVALID_ARG;
    if (!fits(sizeof(float), c->d_model, c->d_model, 3, 1)
        || !fits(sizeof(float), c->d_ff, c->d_model, 1, 1))
        return ATTN_ERR_OVERFLOW;
    const attn_kernel *k = &ctx->base.kernel;
    attn_packed_weights *p = calloc(1, sizeof *p);
    if (!p)
        return ATTN_ERR_NO_MEMORY;
    p->kernel = attn_registry_get(ctx->base.row)->name;
    attn_exec ex = exec_of(ctx, &ctx->base);
    ex.packed = NULL;
    size_t floats = 0;
    attn_status st = ATTN_OK;
    /* A kernel that reads the weights as they are packs nothing: its set
     * is empty, and its calls run as before. */
    for (int i = 0; k->pack_weights && i < n_layers; i++)
        if (packed_add_layer(p, k, c->d_model, c->d_ff, &layers[i]) != 0)
            st = ATTN_ERR_NO_MEMORY;
    for (int i = 0; st == ATTN_OK && i < p->n; i++) {
        size_t f = k->packed_floats(&ex, p->m[i].n, p->m[i].k);
        if (f == SIZE_MAX || !attn_add_checked(&floats, (f + 15) / 16 * 16, ATTN_SIZE_LIMIT / 4))
            st = ATTN_ERR_OVERFLOW;
    }
    void *data = NULL;
    if (st == ATTN_OK && floats && posix_memalign(&data, 64, floats * sizeof(float)) != 0)
        st = ATTN_ERR_NO_MEMORY;
    if (st != ATTN_OK) {
        attn_weights_destroy(p);
        return st;
    }
    p->data = data;
    size_t at = 0;
    for (int i = 0; i < p->n; i++) {
        packed_matrix *m = &p->m[i];
        const float *const parts[3] = { m->w[0], m->w[1], m->w[2] };
        attn_gemm_problem g = { .n = m->n, .k = m->k, .w = m->w[0] };
        if (m->w[1]) {
            g.w_parts = parts;
            g.part_n = m->n / 3;
        }
        k->pack_weights(&ex, &g, p->data + at, &m->b);
        at += (k->packed_floats(&ex, m->n, m->k) + 15) / 16 * 16;
    }
    p->ctx = ctx;
    p->next = ctx->packed;
    ctx->packed = p;
    *out = p;
    return ATTN_OK;
}
