/*
 * cpu.c — what this CPU can run, asked of the CPU and of the OS.
 *
 * A CPUID bit only says the silicon has an instruction set; the OS must also
 * save and restore its registers on a context switch, or using them corrupts
 * state. On x86-64 that is XCR0 (read with XGETBV): YMM needs bits 1–2,
 * AVX-512 needs bits 1–2 and 5–7 (opmask, ZMM_Hi256, Hi16_ZMM). On AArch64 the
 * kernel reports usable features in AT_HWCAP. Detection runs once.
 */
#include <pthread.h>

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
    int osxsave = 0;

    if (__get_cpuid(1, &a, &b, &c, &d)) {
        if (c & (1u << 12))
            has |= ATTN_CPU_FMA;
        osxsave = (c & (1u << 27)) != 0;
    }
    if (__get_cpuid_max(0, NULL) >= 7 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        if (b & (1u << 5))
            has |= ATTN_CPU_AVX2;
        if (b & (1u << 16))
            has |= ATTN_CPU_AVX512F;
    }

    unsigned usable = 0;
    if (osxsave) {
        uint64_t xcr0 = read_xcr0();
        if ((xcr0 & 0x6) == 0x6)
            usable |= has & (ATTN_CPU_AVX2 | ATTN_CPU_FMA);
        if ((xcr0 & 0xe6) == 0xe6)
            usable |= has & ATTN_CPU_AVX512F;
    }
    info->has = has;
    info->usable = usable;
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif

static void detect(attn_cpu_info *info)
{
    unsigned long hw = getauxval(AT_HWCAP);
    info->has = (hw & HWCAP_ASIMD) ? ATTN_CPU_NEON : 0;
    info->usable = info->has;
}

#else
static void detect(attn_cpu_info *info)
{
    info->has = 0;
    info->usable = 0;
}
#endif

static attn_cpu_info cpu_info;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static void detect_once(void)
{
    detect(&cpu_info);
}

const attn_cpu_info *attn_cpu(void)
{
    pthread_once(&cpu_once, detect_once);
    return &cpu_info;
}

const char *attn_cpu_feature_name(unsigned bit)
{
    switch (bit) {
    case ATTN_CPU_AVX2: return "avx2";
    case ATTN_CPU_FMA: return "fma";
    case ATTN_CPU_AVX512F: return "avx512f";
    case ATTN_CPU_NEON: return "neon";
    default: return "unknown";
    }
}
