/*
 * machine.h — what the machine and the build are, for `info` and for the
 * context recorded with every benchmark run.
 */
#ifndef AB_MACHINE_H
#define AB_MACHINE_H

#include <stddef.h>

typedef struct ab_machine {
    char vendor[16];          /* "GenuineIntel", "AuthenticAMD", "ARM", ... */
    char model[96];           /* brand string */
    int family, model_id, stepping;
    char hypervisor[16];      /* CPUID hypervisor vendor ("KVMKVMKVM"), empty on bare metal */
    unsigned has, usable;     /* ATTN_CPU_* bits (kernels/cpu.c) */
    int online_cpus;
    double mhz;               /* current clock from /proc/cpuinfo, 0 if unknown */
    char governor[32];        /* cpufreq scaling governor, "" if not exposed */
    double loadavg[3];        /* -1 if unknown */
    char hostname[64];
    char os[256];             /* uname: sysname release machine */
    char emulated[160];       /* why we think we run under user-mode emulation (qemu); "" if not */
} ab_machine;

void ab_machine_load(ab_machine *m);

/* Names the hypervisor we run under, for messages. known: its vendor
 * signature where the caller has one (PAPI's virtual vendor string), else
 * NULL or "" to detect it: CPUID's signature on x86 (the one ab_machine
 * records, made printable), else /sys/hypervisor/type (Xen, also on ARM).
 * Stores the signature, trimmed ("KVMKVMKVM"), in sig and its common name
 * ("KVM"; the signature itself when not known) in name; either may be NULL.
 * Returns 0, storing nothing, when no hypervisor is detected. */
int ab_hypervisor_name(const char *known, char *name, size_t name_len, char *sig, size_t sig_len);

/* The build of this binary (generated at build time). */
const char *ab_build_commit(void);     /* git commit, "-dirty" if modified; "unknown" */
const char *ab_build_compiler(void);
const char *ab_build_flags(void);
const char *ab_build_type(void);       /* "release" or "sanitize" */

#endif /* AB_MACHINE_H */
