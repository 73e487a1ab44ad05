/* select.c — which kernels a command runs, and why a kernel cannot run. */
#include <stdio.h>
#include <string.h>

#include "select.h"

void ab_kernel_why_not(const attn_kernel *k, char *buf, size_t len)
{
    unsigned missing = attn_registry_missing(k), has = attn_cpu()->has;
    size_t used = 0;
    buf[0] = '\0';
    if (k->unavailable) {
        snprintf(buf, len, "%s", k->unavailable);
        return;
    }
    for (unsigned bit = 1; missing && bit < (1u << ATTN_CPU_FEATURE_COUNT); bit <<= 1) {
        if (!(missing & bit))
            continue;
        const char *why = !attn_cpu_feature_on_arch(bit) ? "which this architecture does not have"
                        : (has & bit) ? "which the CPU has but the OS does not enable"
                                      : "which this CPU lacks";
        int n = snprintf(buf + used, len - used, "%sneeds %s, %s", used ? "; " : "",
                         attn_cpu_feature_name(bit), why);
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
}

static const attn_kernel *named(const char *name, const char *origin, char *err, size_t err_len)
{
    const attn_kernel *k = attn_registry_find(name);
    if (!k) {
        char known[256] = "";
        for (int i = 0; i < attn_registry_count(); i++) {
            if (strlen(known) + strlen(attn_registry_get(i)->name) + 3 >= sizeof known)
                break;
            if (i)
                strcat(known, ", ");
            strcat(known, attn_registry_get(i)->name);
        }
        snprintf(err, err_len, "%s: unknown kernel '%s' (known: %s)", origin, name, known);
        return NULL;
    }
    char why[256];
    ab_kernel_why_not(k, why, sizeof why);
    if (why[0]) {
        snprintf(err, err_len, "%s: kernel '%s' cannot run here: %s", origin, name, why);
        return NULL;
    }
    return k;
}

int ab_select_kernels(const char *spec, const char *env, const attn_kernel **out, int max,
                      char *err, size_t err_len)
{
    if (env && !*env)
        env = NULL;
    if (!spec && env && strcmp(env, "auto") != 0) {
        const attn_kernel *k = named(env, "ATTN_KERNEL", err, err_len);
        if (!k)
            return -1;
        out[0] = k;
        return 1;
    }
    if (!spec || strcmp(spec, "all") == 0) {
        int n = 0;
        for (int i = 0; i < attn_registry_count() && n < max; i++)
            if (attn_registry_runnable(attn_registry_get(i)))
                out[n++] = attn_registry_get(i);
        return n;
    }
    if (strcmp(spec, "auto") == 0 || strcmp(spec, "auto-bf16") == 0) {
        /* Ask the library, so "auto" (or "auto-bf16") here is exactly what
         * callers get. */
        attn_ctx *ctx = NULL;
        if (attn_ctx_create(&ctx, spec, 1) != ATTN_OK) {
            if (env && !named(env, "ATTN_KERNEL", err, err_len))
                return -1;
            snprintf(err, err_len, "no kernel can run on this machine");
            return -1;
        }
        out[0] = attn_registry_find(attn_ctx_kernel(ctx));
        attn_ctx_destroy(ctx);
        return 1;
    }
    /* A name, or several separated by commas. */
    char list[512];
    int n = 0;
    if (snprintf(list, sizeof list, "%s", spec) >= (int)sizeof list) {
        snprintf(err, err_len, "--kernel: list too long");
        return -1;
    }
    for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        const attn_kernel *k = named(name, "--kernel", err, err_len);
        if (!k)
            return -1;
        /* Twice would time it twice under one benchmark name (and the
         * summary would call it a tie with itself); past max, a list cut
         * short without a word. */
        for (int i = 0; i < n; i++)
            if (out[i] == k) {
                snprintf(err, err_len, "--kernel: %s named twice", name);
                return -1;
            }
        if (n == max) {
            snprintf(err, err_len, "--kernel: more than %d kernels", max);
            return -1;
        }
        out[n++] = k;
    }
    if (n == 0)
        snprintf(err, err_len, "--kernel: no kernel named");
    return n ? n : -1;
}
