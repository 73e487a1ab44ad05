/*
 * counters_diagnosis.c — what counting can do on this machine, for
 * `attnbench info`, and why hardware events are missing when they are: a
 * Linux perf_event_open() probe, independent of PAPI, tells a virtual
 * machine without a PMU (naming the hypervisor), perf_event_paranoid, a
 * seccomp filter or a kernel without perf_event apart.
 */
#include "counters_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/perf_event.h>
#endif

#include "machine.h"
#include "text.h"

int ab_perf_event_paranoid(void)
{
    int v = INT_MIN;
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = INT_MIN;
        fclose(f);
    }
    return v;
}

void ab_probe_pmu(ab_pmu_probe *p)
{
    p->paranoid = ab_perf_event_paranoid();
#ifdef __linux__
    /* User space only: what perf_event_paranoid=2 still allows. */
    int fd = ab_perf_event_open(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0 /* this thread */,
                                1 /* exclude_kernel */, 0 /* inherit */);
    if (fd >= 0) {
        close(fd);
        p->err = 0;
    } else {
        p->err = errno;
    }
#else
    p->err = ENOSYS;
#endif
}

void ab_explain_pmu(const ab_pmu_probe *p, const char *papi_vendor, int papi_soft, char *out,
                    size_t len)
{
    char hv[64], sig[64], hv_text[140];
    int virt = ab_hypervisor_name(papi_vendor, hv, sizeof hv, sig, sizeof sig);
    if (virt && strcmp(hv, sig) != 0)
        ab_putf(hv_text, sizeof hv_text, "%s, CPU signature \"%s\"", hv, sig);
    else
        ab_putf(hv_text, sizeof hv_text, "%s", virt ? hv : "");

    switch (p->err) {
    case 0:
        ab_putf(out, len, "the kernel opens hardware counters (perf_event_open works)");
        break;
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        /* The kernel has no hardware PMU driver bound: typical of virtual
         * machines whose hypervisor does not virtualise the PMU. */
        if (virt)
            ab_putf(out, len, "no hardware PMU exposed to this virtual machine (hypervisor: %s)%s",
                    hv_text, papi_soft ? ": only software events such as perf::TASK-CLOCK can be "
                    "counted" : "");
        else
            ab_putf(out, len, "no hardware PMU exposed to this machine (perf_event_open of CPU "
                    "cycles: %s)%s", strerror(p->err),
                    papi_soft ? ": only software events can be counted" : "");
        break;
    case EACCES:
    case EPERM:
        if (p->paranoid > 2 && geteuid() != 0)
            ab_putf(out, len, "perf_event_paranoid=%d forbids performance counters to unprivileged "
                    "users; allow them with `sysctl -w kernel.perf_event_paranoid=2` (or 1), "
                    "or grant CAP_PERFMON", p->paranoid);
        else if (p->paranoid != INT_MIN)
            ab_putf(out, len, "perf_event_open is denied (%s) although perf_event_paranoid=%d "
                    "allows it: a seccomp filter (container) or a security module blocks it",
                    strerror(p->err), p->paranoid);
        else
            ab_putf(out, len, "perf_event_open is denied (%s)", strerror(p->err));
        break;
    case ENOSYS:
        ab_putf(out, len, "the kernel has no perf_event support (perf_event_open: %s)",
                strerror(p->err));
        break;
    default:
        ab_putf(out, len, "perf_event_open of CPU cycles fails: %s", strerror(p->err));
        break;
    }
}

/* The events `attnbench info` tries (counters.h lists them). */
static const char *const PROBE_NAMES[] = {
    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_FP_OPS", "PAPI_SP_OPS",
    "PAPI_VEC_SP", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM",
    "perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",
};
#define N_PROBES ((int)(sizeof PROBE_NAMES / sizeof PROBE_NAMES[0]))

int ab_counters_describe(char *summary, size_t summary_len, char *diagnosis, size_t diag_len,
                         ab_counter_probe *probes, int max)
{
    ab_putf(summary, summary_len, "%s", "");
    ab_putf(diagnosis, diag_len, "%s", "");

    /* Every probe event is tried alone, exactly as a benchmark would. */
    ab_counters *c = ab_counters_open(PROBE_NAMES, N_PROBES);
    ab_papi_describe(c, summary, summary_len, diagnosis, diag_len);
    /* What the counts cover, by way of counting. */
    int papi_passes = 0;
    for (int p = 0; c && p < c->npass; p++)
        papi_passes += c->pass[p].papi;
    if (c && c->direct_pass >= 0)
        ab_appendf(summary, summary_len, ", software events count %s",
                   c->all_threads ? "every thread" : "the calling thread and threads it creates");
    if (papi_passes > 0) {
        if (c->inherit)
            ab_appendf(summary, summary_len, ", PAPI events count the calling thread and threads "
                       "it creates");
        else
            ab_appendf(summary, summary_len, ", PAPI events count the calling thread only (%s)",
                       c->inherit_note);
    }

    int n = 0;
    if (probes)
        for (; n < max && n < N_PROBES; n++) {
            ab_counter_probe *p = &probes[n];
            const char *why = c ? c->ev[n].why : "out of memory";
            p->name = PROBE_NAMES[n];
            p->available = why == NULL;
            p->via = ab_counters_via(c, n);
            p->scope = ab_counters_scope(c, n);
            ab_putf(p->why, sizeof p->why, "%s", why ? why : "");
        }
    ab_counters_close(c);
    return n;
}
