/*
 * library.c — this build's and other builds' libattn as tables of calls
 * (library.h).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "kernel.h"
#include "library.h"
#include "ops.h"

const ab_library ab_library_self = {
    .name = "self",
#define AB_LIBRARY_SELF(f) .f = attn_##f,
    AB_LIBRARY_CALLS(AB_LIBRARY_SELF)
#undef AB_LIBRARY_SELF
};

/* The length of "0.3" in "0.3.1": the version up to its second dot. */
static size_t major_minor(const char *v)
{
    const char *dot = strchr(v, '.'), *second = dot ? strchr(dot + 1, '.') : NULL;
    return second ? (size_t)(second - v) : strlen(v);
}

int ab_library_load(ab_library *lib, const char *name, const char *path, char *err, size_t len)
{
    memset(lib, 0, sizeof *lib);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        snprintf(err, len, "--lib %s=%s: cannot load it: %s", name, path, why ? why : "?");
        return -1;
    }
    snprintf(lib->name, sizeof lib->name, "%s", name);
    snprintf(lib->path, sizeof lib->path, "%s", path);
    lib->handle = h;
    const char *missing = NULL;
#define AB_LIBRARY_SYM(f)                                                                   \
    if (!missing && !(*(void **)&lib->f = dlsym(h, "attn_" #f)))                            \
        missing = "attn_" #f;
    AB_LIBRARY_CALLS(AB_LIBRARY_SYM)
#undef AB_LIBRARY_SYM
    if (missing) {
        snprintf(err, len, "--lib %s=%s: no %s (a library older than contract %s, or not "
                 "libattn)", name, path, missing, ATTN_VERSION_STRING);
        ab_library_unload(lib);
        return -1;
    }
    const char *v = lib->version();
    size_t mm = major_minor(ATTN_VERSION_STRING);
    if (!v || major_minor(v) != mm || strncmp(v, ATTN_VERSION_STRING, mm) != 0) {
        snprintf(err, len, "--lib %s=%s: API version %s, this build's is %s: its calls would be "
                 "given other structs", name, path, v ? v : "(none)", ATTN_VERSION_STRING);
        ab_library_unload(lib);
        return -1;
    }
    return 0;
}

void ab_library_unload(ab_library *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    memset(lib, 0, sizeof *lib);
}

int ab_library_parse(const char *text, char *name, size_t name_len, char *path, size_t path_len,
                     char *err, size_t len)
{
    const char *eq = strchr(text, '=');
    size_t n = eq ? (size_t)(eq - text) : 0;
    int ok = eq && n > 0 && n < name_len && n < 32 && eq[1] != '\0' && strlen(eq + 1) < path_len;
    for (size_t i = 0; ok && i < n; i++)
        ok = isalnum((unsigned char)text[i]) || text[i] == '-' || text[i] == '_';
    if (!ok || (n == 4 && strncmp(text, "self", 4) == 0)) {
        snprintf(err, len, "--lib '%s': expected NAME=PATH (NAME of letters, digits, '-' and '_', "
                 "not 'self')", text);
        return -1;
    }
    memcpy(name, text, n);
    name[n] = '\0';
    snprintf(path, path_len, "%s", eq + 1);
    return 0;
}

int ab_params_parse(const char *text, ab_param_setting *out, int max, char *err, size_t len)
{
    char buf[512];
    int n = 0;
    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf) {
        snprintf(err, len, "--param: too long");
        return -1;
    }
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end = NULL;
        long v = eq ? ab_strtol_digits(eq + 1, &end) : 0;
        if (!eq || eq == item || (size_t)(eq - item) >= sizeof out[0].name || end == eq + 1 || *end
            || v < INT_MIN || v > INT_MAX) {
            snprintf(err, len, "--param: '%.60s' is not NAME=INTEGER", item);
            return -1;
        }
        if (n == max) {
            snprintf(err, len, "--param: more than %d settings", max);
            return -1;
        }
        memcpy(out[n].name, item, (size_t)(eq - item));
        out[n].name[eq - item] = '\0';
        for (int i = 0; i < n; i++)   /* which one would hold is no answer */
            if (strcmp(out[i].name, out[n].name) == 0) {
                snprintf(err, len, "--param: %s given twice", out[n].name);
                return -1;
            }
        out[n++].value = (int)v;
    }
    return n;
}

int ab_param_check(const attn_kernel *k, const ab_param_setting *ps, char *err, size_t len)
{
    for (int j = 0; j < k->n_params; j++) {
        const attn_param *kp = &k->params[j];
        if (strcmp(kp->name, ps->name) != 0)
            continue;
        if (ps->value >= kp->min && ps->value <= kp->max)
            return 1;
        snprintf(err, len, "--param %.31s=%d: %.40s takes %d..%d", kp->name, ps->value, k->name,
                 kp->min, kp->max);
        return -1;
    }
    snprintf(err, len, "--param %.31s: kernel %.40s has no such parameter (attnbench list)",
             ps->name, k->name);
    return 0;
}

int ab_params_apply(const ab_library *lib, attn_ctx *ctx, const ab_param_setting *ps, int n,
                    int strict, char *err, size_t len)
{
    for (int i = 0; i < n; i++) {
        int unused;
        if (lib->ctx_get_param(ctx, ps[i].name, &unused) != ATTN_OK) {
            if (!strict)
                continue;                   /* another kernel's parameter */
            snprintf(err, len, "--param %.31s: kernel %.40s has no such parameter (attnbench list)",
                     ps[i].name, lib->ctx_kernel(ctx));
            return -1;
        }
        if (lib->ctx_set_param(ctx, ps[i].name, ps[i].value) != ATTN_OK) {
            snprintf(err, len, "--param %.31s=%d: out of range for %.40s", ps[i].name, ps[i].value,
                     lib->ctx_kernel(ctx));
            return -1;
        }
    }
    return 0;
}
