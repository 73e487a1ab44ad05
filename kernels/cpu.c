/*
 * cpu.c — what this CPU can run, asked of the CPU and of the OS.
 *
 * A CPUID bit only says the silicon has an instruction set; the OS must also
 * save and restore its registers on a context switch, or using them corrupts
 * state. On x86-64 that is XCR0 (read with XGETBV): YMM needs bits 1–2,
 * AVX-512 needs bits 1–2 and 5–7 (opmask, ZMM_Hi256, Hi16_ZMM), AMX needs
 * bits 17–18 (XTILECFG, XTILEDATA; Linux additionally wants a per-process
 * arch_prctl request before first use). On AArch64 the kernel reports usable
 * features in AT_HWCAP. Detection runs once.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;
    /* The xgetbv mnemonic would need -mxsave on the whole file; the opcode does not. */
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void detect(attn_cpu_info *info)
{
    unsigned a, b, c, d;
    unsigned has = 0;
    int osxsave = 0, f16c = 0;

    if (__get_cpuid(1, &a, &b, &c, &d)) {
        if (c & (1u << 28))
            has |= ATTN_CPU_AVX;
        if (c & (1u << 12))
            has |= ATTN_CPU_FMA;
        osxsave = (c & (1u << 27)) != 0;
        f16c = (c & (1u << 29)) != 0;
    }
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        unsigned max_sub = a;
        /* AVX2 counts with F16C, which the avx2 kernel widens binary16
         * keys and values with: every CPU with AVX2 has it (Intel since
         * Haswell, AMD since Excavator), so no machine loses the kernel,
         * and no machine key changes with a feature of its own. */
        if ((b & (1u << 5)) && f16c)
            has |= ATTN_CPU_AVX2;
        if (b & (1u << 16))
            has |= ATTN_CPU_AVX512F;
        if (b & (1u << 17))
            has |= ATTN_CPU_AVX512DQ;
        if (b & (1u << 30))
            has |= ATTN_CPU_AVX512BW;
        if (b & (1u << 31))
            has |= ATTN_CPU_AVX512VL;
        if (d & (1u << 24))
            has |= ATTN_CPU_AMX_TILE;
        if (d & (1u << 22))
            has |= ATTN_CPU_AMX_BF16;
        if (max_sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5)))
            has |= ATTN_CPU_AVX512BF16;
    }

    const unsigned ymm = ATTN_CPU_AVX | ATTN_CPU_AVX2 | ATTN_CPU_FMA;
    const unsigned zmm = ATTN_CPU_AVX512F | ATTN_CPU_AVX512DQ | ATTN_CPU_AVX512BW
                       | ATTN_CPU_AVX512VL | ATTN_CPU_AVX512BF16;
    const unsigned amx = ATTN_CPU_AMX_TILE | ATTN_CPU_AMX_BF16;
    unsigned usable = 0;
    if (osxsave) {
        uint64_t xcr0 = read_xcr0();
        if ((xcr0 & 0x6) == 0x6)
            usable |= has & ymm;
        if ((xcr0 & 0xe6) == 0xe6)
            usable |= has & zmm;
        if ((xcr0 & 0x60000) == 0x60000)
            usable |= has & amx;
    }
    info->has = has;
    info->usable = usable;
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1 << 14)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif

static void detect(attn_cpu_info *info)
{
    unsigned long hw = getauxval(AT_HWCAP);
    unsigned long hw2 = getauxval(AT_HWCAP2);
    info->has = ((hw & HWCAP_ASIMD) ? ATTN_CPU_NEON : 0) | ((hw & HWCAP_SVE) ? ATTN_CPU_SVE : 0)
              | ((hw2 & HWCAP2_BF16) ? ATTN_CPU_ARM_BF16 : 0);
    info->usable = info->has; /* HWCAP lists only what the kernel enables */
}

#else
static void detect(attn_cpu_info *info)
{
    info->has = 0;
    info->usable = 0;
}
#endif

static attn_cpu_info cpu_info;
static size_t cache_bytes[4];          /* [level], data or unified, one instance */
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* "32K", "1024K", "8M" as sysfs writes them. */
static size_t parse_cache_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    if (*end == 'K')
        v <<= 10;
    else if (*end == 'M')
        v <<= 20;
    else if (*end == 'G')
        v <<= 30;
    return (size_t)v;
}

static void read_file(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)len, f))
        buf[0] = '\0';
    fclose(f);
}

/* 1 when the cpulist text ("0,64", "0-1", "5") names a CPU below cpu that
 * is one of the n CPUs of cpus (ascending). */
static int lower_sibling_listed(const char *list, int cpu, const int *cpus, int n)
{
    const char *s = list;
    while (*s >= '0' && *s <= '9') {
        char *end;
        long lo = strtol(s, &end, 10), hi = lo;
        if (*end == '-') {
            s = end + 1;
            hi = strtol(s, &end, 10);
            if (end == s)
                return 0;
        }
        for (int i = 0; i < n && cpus[i] < cpu; i++)
            if (cpus[i] >= lo && cpus[i] <= hi)
                return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int attn_cpu_core_firsts(const int *cpus, int n_cpus, const char *cpu_dir, int *firsts)
{
    int cores = 0;
    for (int i = 0; i < n_cpus; i++) {
        char path[512], list[1024];
        snprintf(path, sizeof path, "%s/cpu%d/topology/thread_siblings_list", cpu_dir, cpus[i]);
        read_file(path, list, sizeof list);
        if (lower_sibling_listed(list, cpus[i], cpus, n_cpus))
            continue;
        if (firsts)
            firsts[cores] = cpus[i];
        cores++;
    }
    return cores;
}

int attn_cpu_affinity_cpus(int **cpus)
{
    *cpus = NULL;
    /* sched_getaffinity fails with EINVAL while the set is smaller than the
     * kernel's CPU count, which may exceed CPU_SETSIZE (1024): the set grows
     * until it holds them. */
    for (int limit = CPU_SETSIZE; limit <= ATTN_CPU_LIMIT; limit *= 2) {
        size_t size = CPU_ALLOC_SIZE(limit);
        cpu_set_t *set = CPU_ALLOC(limit);
        if (!set) {
            errno = ENOMEM;
            return -1;
        }
        if (sched_getaffinity(0, size, set) != 0) {
            int e = errno;
            CPU_FREE(set);
            if (e == EINVAL)
                continue;
            errno = e;
            return -1;
        }
        int n = CPU_COUNT_S(size, set), k = 0;
        int *list = malloc((size_t)(n > 0 ? n : 1) * sizeof *list);
        if (!list) {
            CPU_FREE(set);
            errno = ENOMEM;
            return -1;
        }
        for (int cpu = 0; cpu < limit && k < n; cpu++)
            if (CPU_ISSET_S((size_t)cpu, size, set))
                list[k++] = cpu;
        CPU_FREE(set);
        *cpus = list;
        return k;
    }
    errno = EINVAL;
    return -1;
}

int attn_cpu_cores_in(const int *cpus, int n_cpus, const char *cpu_dir)
{
    /* At least 1 when n_cpus > 0: the list's lowest CPU has no lower
     * sibling in it. */
    return attn_cpu_core_firsts(cpus, n_cpus, cpu_dir, NULL);
}

/* sysfs first (the data hwloc reads), then sysconf, then typical sizes. The
 * kernels only need them to size tiles, so a guess is safe. */
static void detect_caches(void)
{
    for (int idx = 0; idx < 16; idx++) {
        char path[128], level[16], type[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        read_file(path, level, sizeof level);
        if (!level[0])
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
        read_file(path, type, sizeof type);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        read_file(path, size, sizeof size);
        int l = atoi(level);
        if (l >= 1 && l <= 3 && strncmp(type, "Instruction", 11) != 0)
            cache_bytes[l] = parse_cache_size(size);
    }
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const int names[4] = { 0, _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE };
    for (int l = 1; l <= 3; l++) {
        long v = cache_bytes[l] ? 0 : sysconf(names[l]);
        if (v > 0)
            cache_bytes[l] = (size_t)v;
    }
#endif
    const size_t typical[4] = { 0, 32 << 10, 1 << 20, 8 << 20 };
    for (int l = 1; l <= 3; l++)
        if (cache_bytes[l] == 0)
            cache_bytes[l] = typical[l];
}

static void detect_once(void)
{
    int model, stepping;
    detect(&cpu_info);
    attn_cpu_identity(cpu_info.vendor, sizeof cpu_info.vendor, &cpu_info.family, &model,
                      &stepping);
    detect_caches();
}

const attn_cpu_info *attn_cpu(void)
{
    pthread_once(&cpu_once, detect_once);
    return &cpu_info;
}

size_t attn_cpu_cache_size(int level)
{
    pthread_once(&cpu_once, detect_once);
    return (level >= 1 && level <= 3) ? cache_bytes[level] : 0;
}

#if defined(__x86_64__) || defined(__i386__)
void attn_cpu_identity(char *vendor, size_t len, int *family, int *model, int *stepping)
{
    unsigned a, b, c, d;
    char v[13] = "";
    *family = *model = *stepping = 0;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(v, &b, 4);
        memcpy(v + 4, &d, 4);
        memcpy(v + 8, &c, 4);
        v[12] = '\0';
    }
    snprintf(vendor, len, "%s", v);
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        unsigned base_family = (a >> 8) & 0xf, base_model = (a >> 4) & 0xf;
        *family = (int)(base_family == 0xf ? base_family + ((a >> 20) & 0xff) : base_family);
        *model = (int)((base_family == 0x6 || base_family == 0xf)
                           ? (((a >> 16) & 0xf) << 4) | base_model : base_model);
        *stepping = (int)(a & 0xf);
    }
}
#else
/* The first "key : value" of /proc/cpuinfo as an integer (base 0), or 0. */
static long cpuinfo_long(const char *key)
{
    char line[256];
    long v = 0;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0 && strchr(line, ':')) {
            v = strtol(strchr(line, ':') + 1, NULL, 0);
            break;
        }
    fclose(f);
    return v;
}

void attn_cpu_identity(char *vendor, size_t len, int *family, int *model, int *stepping)
{
    snprintf(vendor, len, "0x%lx", cpuinfo_long("CPU implementer"));
    *family = (int)cpuinfo_long("CPU architecture");
    *model = (int)cpuinfo_long("CPU part");
    *stepping = (int)cpuinfo_long("CPU revision");
}
#endif

const char *attn_cpu_feature_name(unsigned bit)
{
    switch (bit) {
    case ATTN_CPU_AVX: return "avx";
    case ATTN_CPU_AVX2: return "avx2";
    case ATTN_CPU_FMA: return "fma";
    case ATTN_CPU_AVX512F: return "avx512f";
    case ATTN_CPU_AVX512DQ: return "avx512dq";
    case ATTN_CPU_AVX512BW: return "avx512bw";
    case ATTN_CPU_AVX512VL: return "avx512vl";
    case ATTN_CPU_AVX512BF16: return "avx512_bf16";
    case ATTN_CPU_AMX_TILE: return "amx_tile";
    case ATTN_CPU_AMX_BF16: return "amx_bf16";
    case ATTN_CPU_NEON: return "neon";
    case ATTN_CPU_SVE: return "sve";
    case ATTN_CPU_ARM_BF16: return "bf16";
    default: return "unknown";
    }
}

int attn_cpu_feature_on_arch(unsigned bit)
{
#if defined(__x86_64__) || defined(__i386__)
    return bit <= ATTN_CPU_AMX_BF16;
#elif defined(__aarch64__)
    return bit == ATTN_CPU_NEON || bit == ATTN_CPU_SVE || bit == ATTN_CPU_ARM_BF16;
#else
    (void)bit;
    return 0;
#endif
}
