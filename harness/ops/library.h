/*
 * library.h — the calls of libattn that the harness times, as a table:
 * this build's (ab_library_self), or another build's libattn.so loaded
 * with dlopen (`attnbench run --lib NAME=PATH`), so that two builds run
 * side by side in one process, in the same shuffled rounds, on the same
 * inputs (docs/verdicts.md: in-process A/B).
 *
 * A loaded library is opened RTLD_LOCAL: its symbols stay out of the global
 * scope, and since the attnbench executable exports none of its own (the
 * static libattn.a), every call the loaded library makes to its own API
 * resolves within it. It shares the process's OpenMP runtime (one thread
 * pool for both builds; a separate namespace per build, dlmopen, would
 * give each its own and need a second C runtime, which the sanitizers
 * refuse).
 */
#ifndef AB_LIBRARY_H
#define AB_LIBRARY_H

#include <stddef.h>

#include "attn.h"

/* Every entry point the ops' run and pack hooks and the bench call. */
#define AB_LIBRARY_CALLS(X)                                                                 \
    X(version) X(ctx_create) X(ctx_destroy) X(ctx_kernel) X(ctx_set_param)                  \
    X(ctx_get_param) X(sdpa) X(sdpa_kv) X(mha) X(encoder_layer) X(encoder) X(embed)         \
    X(decoder_layer) X(weights_pack_encoder) X(weights_destroy)

typedef struct ab_library {
    char name[32];           /* "self", or --lib's NAME */
    char path[256];          /* "" for self */
    void *handle;            /* dlopen's; NULL for self */
#define AB_LIBRARY_FIELD(f) __typeof__(attn_##f) *f;
    AB_LIBRARY_CALLS(AB_LIBRARY_FIELD)
#undef AB_LIBRARY_FIELD
} ab_library;

/* This build's library, linked in. */
extern const ab_library ab_library_self;

/* Loads PATH as library NAME: every call of the table found, and its
 * attn_version() of this build's major and minor version (the structs the
 * calls take are those of one contract version). 0, or -1 with a reason in
 * err (the library is then not loaded). */
int ab_library_load(ab_library *lib, const char *name, const char *path, char *err, size_t len);
void ab_library_unload(ab_library *lib);

/* "NAME=PATH" into name and path: 0, or -1 with a reason. NAME is letters,
 * digits, '-' and '_', not "self". */
int ab_library_parse(const char *text, char *name, size_t name_len, char *path, size_t path_len,
                     char *err, size_t len);

/* A kernel parameter set by name (`--param NAME=V,..` of run and explain). */
#define AB_MAX_PARAM_SETTINGS 16
typedef struct ab_param_setting {
    char name[32];
    int value;
} ab_param_setting;

/* "kc=256,bq=48" into out[0..max): the count, or -1 with a reason (not
 * NAME=INTEGER, a name of 32 bytes or more, more than max). Whether each
 * name belongs to a kernel is the caller's to check. */
int ab_params_parse(const char *text, ab_param_setting *out, int max, char *err, size_t len);

/* Whether kernel row k (kernel.h's attn_kernel) has the setting's
 * parameter: 1, in its range; 0, no such parameter, or -1, out of its
 * range, each with the reason in err. */
struct attn_kernel;
int ab_param_check(const struct attn_kernel *k, const ab_param_setting *ps, char *err,
                   size_t len);

/* Sets on ctx, through lib, every setting its kernel has; one it lacks is
 * skipped (one --param list serves several kernels), or with strict an
 * error. 0, or -1 with a reason (also a value out of the parameter's
 * range). */
int ab_params_apply(const ab_library *lib, attn_ctx *ctx, const ab_param_setting *ps, int n,
                    int strict, char *err, size_t len);

#endif /* AB_LIBRARY_H */
