/*
 * library.c — this build's and other builds' libattn as tables of calls
 * (library.h).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "library.h"

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
