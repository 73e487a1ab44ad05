/* registry.c — the kernel table built from kernels.def. */
#include <string.h>

#include "kernel.h"

#define ATTN_KERNEL_ROW(sym) extern const attn_kernel attn_kernel__##sym;
#define ATTN_KERNEL_ABSENT(sym, kname, bits, kmath)                                                \
    static const attn_kernel attn_kernel__##sym = {                                                \
        .name = kname, .description = "(built for another architecture)",                          \
        .unavailable = "not built for this architecture", .requires = bits, .math = kmath,         \
    };
#define ATTN_KERNEL_NOT_BUILT(sym, kname, why, kmath)                                              \
    static const attn_kernel attn_kernel__##sym = {                                                \
        .name = kname, .description = "(not built)", .unavailable = why, .math = kmath,           \
    };
#include "kernels.def"
#undef ATTN_KERNEL_ROW
#undef ATTN_KERNEL_ABSENT
#undef ATTN_KERNEL_NOT_BUILT

static const attn_kernel *const registry[] = {
#define ATTN_KERNEL_ROW(sym) &attn_kernel__##sym,
#define ATTN_KERNEL_ABSENT(sym, kname, bits, kmath) &attn_kernel__##sym,
#define ATTN_KERNEL_NOT_BUILT(sym, kname, why, kmath) &attn_kernel__##sym,
#include "kernels.def"
#undef ATTN_KERNEL_ROW
#undef ATTN_KERNEL_ABSENT
#undef ATTN_KERNEL_NOT_BUILT
};

int attn_registry_count(void)
{
    return (int)(sizeof registry / sizeof registry[0]);
}

const attn_kernel *attn_registry_get(int i)
{
    return (i >= 0 && i < attn_registry_count()) ? registry[i] : NULL;
}

int attn_registry_index(const attn_kernel *k)
{
    for (int i = 0; i < attn_registry_count(); i++)
        if (registry[i] == k)
            return i;
    return -1;
}

const attn_kernel *attn_registry_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < attn_registry_count(); i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

unsigned attn_registry_missing(const attn_kernel *k)
{
    return k ? k->requires & ~attn_cpu()->usable : 0;
}

int attn_registry_passed_over(const attn_kernel *k, unsigned cpu_has)
{
    return k && (k->auto_passes_over_on & cpu_has) != 0;
}

const attn_kernel *attn_registry_by_features(int bf16)
{
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        if (attn_registry_runnable(k) && (k->math == ATTN_F32 || (bf16 && k->math == ATTN_BF16))
            && !attn_registry_passed_over(k, attn_cpu()->has))
            return k;
    }
    return NULL;
}

int attn_registry_runnable(const attn_kernel *k)
{
    return k && !k->unavailable && attn_registry_missing(k) == 0;
}

void attn_registry_resolve(const attn_kernel *k, attn_kernel *out)
{
    const attn_kernel *ref = &attn_kernel__naive;

    *out = *k;
    /* Each primitive comes with its scratch size: one sizes the other. */
    if (!out->gemm) {
        out->gemm = ref->gemm;
        out->gemm_scratch = ref->gemm_scratch;
    }
    if (!out->sdpa) {
        out->sdpa = ref->sdpa;
        out->sdpa_scratch = ref->sdpa_scratch;
        out->kv_types = ref->kv_types;
    }
    if (!out->layernorm)
        out->layernorm = ref->layernorm;
}
