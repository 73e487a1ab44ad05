/*
 * counters.c — hardware and software event counters through PAPI.
 *
 * Two back ends share the bookkeeping below: PAPI (ATTN_HAVE_PAPI) and a
 * stub that reports every event as unavailable; after either, the kernel's
 * software events that are still unavailable are opened directly. A Linux perf_event_open()
 * probe, independent of PAPI, explains why hardware events are missing when
 * they are (no PMU in a virtual machine, perf_event_paranoid, seccomp...).
 *
 * Library rules followed here: nothing is printed, nothing aborts, every
 * buffer is bounded, and everything allocated or created (PAPI event sets
 * included) is released by ab_counters_close.
 *
 * Threading: PAPI is initialised once per process (pthread_once). An
 * ab_counters object is not itself thread-safe. With PAPI's perf_event
 * component the kernel counters are opened when events are added, that is
 * in ab_counters_open, for the thread calling it; start and stop only
 * enable and disable them. So open, start and stop should be called from
 * the thread whose work is measured.
 */
#include "counters.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#ifdef ATTN_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

#define WHY_LEN 160  /* == sizeof ((ab_counter_probe *)0)->why */
#define ERR_LEN 200

/* ---- bookkeeping ------------------------------------------------------------ */

typedef struct ab_event {
    char *name;          /* owned copy of the name asked for */
    const char *why;     /* NULL when countable, else static text or why_buf */
    char why_buf[WHY_LEN];
    int pass;            /* the pass counting it, -1 when unavailable */
    int code;            /* PAPI event code */
    int cidx;            /* PAPI component index */
    int fd;              /* a software event opened with perf_event_open, or -1 */
} ab_event;

typedef struct ab_pass {
    int direct;          /* 1: the events' own perf_event_open fds, not a PAPI set */
    int set;             /* PAPI event set */
    int cidx;            /* its component */
    int n;               /* events in the set, in the order added */
    int *idx;            /* idx[k]: the ab_event counted in slot k */
    long long *vals;     /* PAPI_stop writes here, in slot order */
} ab_pass;

struct ab_counters {
    int n;
    ab_event *ev;
    int npass;
    ab_pass *pass;       /* room for n passes: at most one per event */
    int running;         /* the pass being counted, -1 when none */
    int inherit;         /* 1 when every pass counts threads created while counting */
    char inherit_note[WHY_LEN]; /* why not, when inherit is 0 and passes exist */
    char err[ERR_LEN];
};

/* snprintf into a buffer that may be NULL or empty; always terminated. */
static void put(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void put(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

/* Appends to what dst already holds, within len. */
static void append(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    size_t used = strnlen(dst, len);
    if (used >= len - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst + used, len - used, fmt, ap);
    va_end(ap);
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static void set_why(ab_counters *c, int e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_why(ab_counters *c, int e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->ev[e].why_buf, sizeof c->ev[e].why_buf, fmt, ap);
    va_end(ap);
    /* The reason is one line: newlines from PAPI texts become spaces. */
    for (char *p = c->ev[e].why_buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    c->ev[e].why = c->ev[e].why_buf;
    c->ev[e].pass = -1;
}

static const char *const PROBE_NAMES[] = {
    "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_FP_OPS", "PAPI_SP_OPS",
    "PAPI_VEC_SP", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_L3_TCM",
    "perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",
};
#define N_PROBES ((int)(sizeof PROBE_NAMES / sizeof PROBE_NAMES[0]))

/* ---- the machine: hypervisor and perf_event_open probe -------------------------- */

/* Friendly names for the CPUID hypervisor vendor signatures. */
static const char *hypervisor_friendly(const char *vendor)
{
    static const struct { const char *sig, *name; } known[] = {
        {"KVMKVMKVM", "KVM"},         {"Linux KVM Hv", "KVM"},
        {"Microsoft Hv", "Hyper-V"},  {"VMwareVMware", "VMware"},
        {"XenVMMXenVMM", "Xen"},      {"TCGTCGTCGTCG", "QEMU TCG"},
        {"VBoxVBoxVBox", "VirtualBox"}, {"bhyve bhyve", "bhyve"},
        {"lrpepyh  vr", "Parallels"}, {"ACRNACRNACRN", "ACRN"},
        {"QNXQVMBSQG", "QNX hypervisor"}, {"Apple VZ", "Apple Virtualization"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(vendor, known[i].sig) == 0)
            return known[i].name;
    return NULL;
}

/* Trims spaces and NULs the vendor signatures are padded with. */
static void trim(char *s)
{
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\n'))
        s[--n] = '\0';
    size_t lead = strspn(s, " ");
    if (lead)
        memmove(s, s + lead, n - lead + 1);
}

/* Detects the hypervisor we run under: name gets a friendly name ("KVM"),
 * sig its vendor signature ("KVMKVMKVM"), which may be the same. Returns 0
 * when none is detected. papi_vendor is PAPI's virtual_vendor_string when
 * known. */
static int hypervisor_name(const char *papi_vendor, char *name, size_t name_len, char *sig,
                           size_t sig_len)
{
    char vendor[64] = "";

    if (papi_vendor && papi_vendor[0])
        snprintf(vendor, sizeof vendor, "%s", papi_vendor);
#if defined(__x86_64__) || defined(__i386__)
    if (!vendor[0]) {
        /* CPUID.1:ECX bit 31 says a hypervisor is present; leaf 0x40000000
         * then holds its 12-byte vendor signature in EBX, ECX, EDX. Without
         * the bit, that leaf returns unrelated data on bare metal. */
        unsigned a, b, c, d;
        if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31))) {
            __cpuid(0x40000000u, a, b, c, d);
            char s[13];
            memcpy(s, &b, 4);
            memcpy(s + 4, &c, 4);
            memcpy(s + 8, &d, 4);
            s[12] = '\0';
            for (int i = 0; i < 12; i++)  /* stray control bytes: keep one line */
                if (s[i] && (s[i] < 32 || s[i] > 126))
                    s[i] = '?';
            snprintf(vendor, sizeof vendor, "%s", s);
            trim(vendor);
            if (!vendor[0])
                snprintf(vendor, sizeof vendor, "unknown hypervisor");
        }
    }
#endif
    if (!vendor[0]) {
        /* Xen (also on ARM) says so here. */
        FILE *f = fopen("/sys/hypervisor/type", "r");
        if (f) {
            if (!fgets(vendor, sizeof vendor, f))
                vendor[0] = '\0';
            fclose(f);
        }
    }
    trim(vendor);
    if (!vendor[0])
        return 0;
    const char *friendly = hypervisor_friendly(vendor);
    put(name, name_len, "%s", friendly ? friendly : vendor);
    put(sig, sig_len, "%s", vendor);
    return 1;
}

/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN when it cannot be read
 * (no perf_event support in the kernel). */
static int read_paranoid(void)
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

typedef struct pmu_probe {
    int paranoid;  /* perf_event_paranoid, INT_MIN when unreadable */
    int err;       /* 0: a hardware cycles counter opened; else errno */
} pmu_probe;

/* Opens, for the calling thread, the counter every PMU has: CPU cycles in
 * user space (as PAPI's default domain counts), and closes it again. */
static void probe_pmu(pmu_probe *p)
{
    p->paranoid = read_paranoid();
#ifdef __linux__
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;  /* what perf_event_paranoid=2 still allows */
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any cpu */,
                      -1 /* no group */, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL)  /* kernels before 3.14 lack the flag */
        fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0UL);
    if (fd >= 0) {
        close((int)fd);
        p->err = 0;
    } else {
        p->err = errno;
    }
#else
    p->err = ENOSYS;
#endif
}

/* Why hardware counters cannot be opened, from a failed probe. papi_soft:
 * whether PAPI can still count software events (its component is enabled). */
static void explain_pmu(const pmu_probe *p, const char *papi_vendor, int papi_soft, char *out,
                        size_t len)
{
    char hv[64], sig[64], hv_text[140];
    int virt = hypervisor_name(papi_vendor, hv, sizeof hv, sig, sizeof sig);
    if (virt && strcmp(hv, sig) != 0)
        put(hv_text, sizeof hv_text, "%s, CPU signature \"%s\"", hv, sig);
    else
        put(hv_text, sizeof hv_text, "%s", virt ? hv : "");

    switch (p->err) {
    case 0:
        put(out, len, "the kernel opens hardware counters (perf_event_open works)");
        break;
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        /* The kernel has no hardware PMU driver bound: typical of virtual
         * machines whose hypervisor does not virtualise the PMU. */
        if (virt)
            put(out, len, "no hardware PMU exposed to this virtual machine (hypervisor: %s)%s",
                hv_text, papi_soft ? ": only software events such as perf::TASK-CLOCK can be "
                "counted" : "");
        else
            put(out, len, "no hardware PMU exposed to this machine (perf_event_open of CPU "
                "cycles: %s)%s", strerror(p->err),
                papi_soft ? ": only software events can be counted" : "");
        break;
    case EACCES:
    case EPERM:
        if (p->paranoid > 2 && geteuid() != 0)
            put(out, len, "perf_event_paranoid=%d forbids performance counters to unprivileged "
                "users; allow them with `sysctl -w kernel.perf_event_paranoid=2` (or 1), "
                "or grant CAP_PERFMON", p->paranoid);
        else if (p->paranoid != INT_MIN)
            put(out, len, "perf_event_open is denied (%s) although perf_event_paranoid=%d allows "
                "it: a seccomp filter (container) or a security module blocks it",
                strerror(p->err), p->paranoid);
        else
            put(out, len, "perf_event_open is denied (%s)", strerror(p->err));
        break;
    case ENOSYS:
        put(out, len, "the kernel has no perf_event support (perf_event_open: %s)",
            strerror(p->err));
        break;
    default:
        put(out, len, "perf_event_open of CPU cycles fails: %s", strerror(p->err));
        break;
    }
}

/* ---- allocation, shared by both back ends ----------------------------------- */

static ab_counters *alloc_counters(const char *const *names, int n)
{
    if (!names || n < 0)
        n = 0;
    ab_counters *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->running = -1;
    c->n = n;
    size_t slots = n > 0 ? (size_t)n : 1;
    c->ev = calloc(slots, sizeof *c->ev);
    c->pass = calloc(slots, sizeof *c->pass);
    if (!c->ev || !c->pass) {
        free(c->ev);
        free(c->pass);
        free(c);
        return NULL;
    }
    for (int e = 0; e < n; e++) {
        c->ev[e].pass = -1;
        c->ev[e].fd = -1;
        c->ev[e].name = dup_string(names[e] ? names[e] : "");
        if (!c->ev[e].name) {
            for (int k = 0; k < e; k++)
                free(c->ev[k].name);
            free(c->ev);
            free(c->pass);
            free(c);
            return NULL;
        }
    }
    return c;
}

static void free_counters(ab_counters *c)
{
    for (int e = 0; e < c->n; e++)
        if (c->ev[e].fd >= 0)
            close(c->ev[e].fd);
    for (int p = 0; p < c->npass; p++) {
        free(c->pass[p].idx);
        free(c->pass[p].vals);
    }
    for (int e = 0; e < c->n; e++)
        free(c->ev[e].name);
    free(c->pass);
    free(c->ev);
    free(c);
}

/* ---- software events straight from the kernel -------------------------------- */
/* PAPI reaches the kernel's software events through its perf_event
 * component. When that component is disabled (libpfm4 knows no PMU of this
 * CPU: seen on a Zen 5 KVM guest) or PAPI is not built in, the same events
 * are opened here with perf_event_open. They need no PMU and are never
 * scarce, so all of them share one pass; like PAPI's they count user space
 * and the threads created while counting (inherit). */
static const struct { const char *name; unsigned long long config; } SOFTWARE_EVENTS[] = {
#ifdef __linux__
    {"perf::TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
    {"perf::CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK},
    {"perf::PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
    {"perf::MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"perf::MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"perf::CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"perf::CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
#endif
    {NULL, 0},
};

/* Opens the software events among the unavailable ones of c, into one
 * direct pass. An event that cannot be opened keeps its reason, with the
 * kernel's answer appended. */
static void direct_open(ab_counters *c)
{
#ifdef __linux__
    ab_pass *ps = NULL;
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        int k = 0;
        while (SOFTWARE_EVENTS[k].name && strcasecmp(SOFTWARE_EVENTS[k].name, ev->name) != 0)
            k++;
        if (!ev->why || !SOFTWARE_EVENTS[k].name)
            continue;
        if (!ps) {
            ps = &c->pass[c->npass];
            ps->idx = calloc((size_t)c->n, sizeof *ps->idx);
            if (!ps->idx) {
                set_why(c, e, "out of memory");
                return;
            }
            ps->direct = 1;
            c->npass++;
        }
        struct perf_event_attr attr;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_SOFTWARE;
        attr.config = SOFTWARE_EVENTS[k].config;
        attr.disabled = 1;
        attr.inherit = 1;
        attr.exclude_kernel = 1;  /* PAPI's default domain; allowed at paranoid 2 */
        attr.exclude_hv = 1;
        long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            char before[WHY_LEN];
            put(before, sizeof before, "%s", ev->why);
            set_why(c, e, "%s; perf_event_open: %s", before, strerror(errno));
            continue;
        }
        ev->fd = (int)fd;
        ev->why = NULL;
        ev->pass = (int)(ps - c->pass);
        ps->idx[ps->n++] = e;
    }
    if (ps && ps->n == 0) {
        free(ps->idx);
        memset(ps, 0, sizeof *ps);
        c->npass--;
    } else if (ps) {
        c->inherit = c->npass == 1 ? 1 : c->inherit;
    }
#else
    (void)c;
#endif
}

static int direct_start(ab_counters *c, int pass)
{
#ifdef __linux__
    const ab_pass *ps = &c->pass[pass];
    for (int k = 0; k < ps->n; k++) {
        int fd = c->ev[ps->idx[k]].fd;
        if (ioctl(fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
            put(c->err, sizeof c->err, "perf_event_open counters (pass %d): %s", pass,
                strerror(errno));
            return -1;
        }
    }
    return 0;
#else
    put(c->err, sizeof c->err, "pass %d: no perf_event_open here", pass);
    return -1;
#endif
}

static int direct_stop(ab_counters *c, int pass, long long *values)
{
#ifdef __linux__
    const ab_pass *ps = &c->pass[pass];
    int rc = 0;
    for (int k = 0; k < ps->n; k++)
        (void)ioctl(c->ev[ps->idx[k]].fd, PERF_EVENT_IOC_DISABLE, 0);
    for (int k = 0; k < ps->n; k++) {
        uint64_t v = 0;
        if (read(c->ev[ps->idx[k]].fd, &v, sizeof v) != (ssize_t)sizeof v) {
            put(c->err, sizeof c->err, "reading %s: %s", c->ev[ps->idx[k]].name,
                strerror(errno));
            rc = -1;
        } else if (values) {
            values[ps->idx[k]] = (long long)v;
        }
    }
    return rc;
#else
    (void)values;
    put(c->err, sizeof c->err, "pass %d: no perf_event_open here", pass);
    return -1;
#endif
}

/* ================================================================================ */
#ifdef ATTN_HAVE_PAPI

static pthread_once_t papi_once = PTHREAD_ONCE_INIT;
static int papi_ok;                 /* PAPI_library_init succeeded */
static char papi_init_error[WHY_LEN];

static const char *papi_text(int code)
{
    const char *s = PAPI_strerror(code);  /* NULL for codes it does not know */
    return s ? s : "unknown PAPI error";
}

static unsigned long papi_thread_id(void)
{
    return (unsigned long)pthread_self();
}

static void papi_init_once(void)
{
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        if (v > 0)
            put(papi_init_error, sizeof papi_init_error,
                "PAPI_library_init: the library (%d.%d) does not match the headers (%d.%d)",
                PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
                PAPI_VERSION_MAJOR(PAPI_VER_CURRENT), PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
        else
            put(papi_init_error, sizeof papi_init_error, "PAPI_library_init failed: %s",
                papi_text(v));
        return;
    }
    /* PAPI prints its internal errors on stderr unless its error level is
     * PAPI_QUIET. That is its default, but the application may have changed
     * it, and this library never prints. Two windows stay open: during
     * PAPI_library_init PAPI raises the level to PAPI_VERB_ECONT itself (a
     * component failing to initialise may then print), and PAPI_VERBOSE in
     * the environment overrides the level (an explicit request). Neither
     * prints anything on a machine where PAPI initialises normally. */
    (void)PAPI_set_debug(PAPI_QUIET);
    /* Per-thread PAPI state, so that several threads may each count their
     * own event sets. Without it PAPI still works for one thread at a time,
     * so a failure is not fatal. */
    (void)PAPI_thread_init(papi_thread_id);
    papi_ok = 1;
}

static int papi_ready(void)
{
    pthread_once(&papi_once, papi_init_once);
    return papi_ok;
}

static void papi_free_set(int *set)
{
    if (*set == PAPI_NULL)
        return;
    int state = 0;
    if (PAPI_state(*set, &state) == PAPI_OK && (state & PAPI_RUNNING))
        (void)PAPI_stop(*set, NULL);
    (void)PAPI_cleanup_eventset(*set);
    (void)PAPI_destroy_eventset(set);
    *set = PAPI_NULL;
}

/* A new empty event set bound to component cidx, with PAPI_INHERIT when
 * the component offers it. *inherit tells whether that worked; when not,
 * note says why (counting then covers the calling thread only). */
static int papi_new_set(int cidx, int *set, int *inherit, char *note, size_t note_len)
{
    *set = PAPI_NULL;
    *inherit = 0;
    int r = PAPI_create_eventset(set);
    if (r != PAPI_OK) {
        *set = PAPI_NULL;
        return r;
    }
    /* Options such as PAPI_INHERIT need to know the component, and must be
     * set while the set is empty. */
    r = PAPI_assign_eventset_component(*set, cidx);
    if (r != PAPI_OK) {
        papi_free_set(set);
        return r;
    }
    const PAPI_component_info_t *info = PAPI_get_component_info(cidx);
    if (info && info->inherit) {
        PAPI_option_t opt;
        memset(&opt, 0, sizeof opt);
        opt.inherit.eventset = *set;
        opt.inherit.inherit = PAPI_INHERIT_ALL;
        r = PAPI_set_opt(PAPI_INHERIT, &opt);
        if (r == PAPI_OK)
            *inherit = 1;
        else
            /* PAPI 7's perf_event component checks the permission with a
             * hardware event, so it refuses on machines without a PMU even
             * for software events. Counting goes on without it. */
            put(note, note_len, "%s refuses PAPI_INHERIT: %s", info->name, papi_text(r));
    } else {
        put(note, note_len, "%s cannot inherit counters", info ? info->name : "the component");
    }
    return PAPI_OK;
}

/* Why an event that PAPI knows cannot be counted alone. */
static void papi_reason(ab_counters *c, int e, const char *step, int r, pmu_probe *pmu,
                        int *pmu_done)
{
    switch (r) {
    case PAPI_ENOEVNT:
        if (!*pmu_done) {
            probe_pmu(pmu);
            *pmu_done = 1;
        }
        if (pmu->err == ENOENT || pmu->err == EOPNOTSUPP || pmu->err == ENODEV)
            set_why(c, e, "event does not exist on this CPU: no hardware PMU is exposed here "
                    "(PAPI: %s)", papi_text(r));
        else
            set_why(c, e, "event does not exist on this CPU (PAPI: %s)", papi_text(r));
        break;
    case PAPI_EPERM:
        set_why(c, e, "not permitted, perf_event_paranoid=%d (PAPI: %s)", read_paranoid(),
                papi_text(r));
        break;
    case PAPI_ECNFLCT:
    case PAPI_ECOUNT:
        set_why(c, e, "cannot be scheduled even alone (PAPI: %s)", papi_text(r));
        break;
    default:
        set_why(c, e, "%s failed: %s", step, papi_text(r));
        break;
    }
}

/* Tries the event alone in its own set: added, started and stopped. */
static int papi_try_alone(int code, int cidx, const char **step)
{
    int set, inherit;
    char note[WHY_LEN];
    *step = "PAPI_create_eventset";
    int r = papi_new_set(cidx, &set, &inherit, note, sizeof note);
    if (r != PAPI_OK)
        return r;
    *step = "PAPI_add_event";
    r = PAPI_add_event(set, code);
    if (r == PAPI_OK) {
        /* perf_event opens the kernel counters on add, but other components
         * may fail only when started. PAPI_EISRUN means another set of this
         * component runs in this thread: the add result is all we learn. */
        *step = "PAPI_start";
        r = PAPI_start(set);
        if (r == PAPI_OK) {
            long long v[PAPI_MAX_INFO_TERMS];  /* a derived preset is still one value */
            (void)PAPI_stop(set, v);
        } else if (r == PAPI_EISRUN) {
            r = PAPI_OK;
        }
    }
    papi_free_set(&set);
    return r;
}

/* Puts the countable event e into the first pass of its component that
 * takes it, else into a new pass. Returns 0, or -1 with the reason set. */
static int papi_place(ab_counters *c, int e)
{
    ab_event *ev = &c->ev[e];
    int r = PAPI_OK;
    for (int p = 0; p < c->npass; p++) {
        ab_pass *ps = &c->pass[p];
        if (ps->cidx != ev->cidx)
            continue;
        r = PAPI_add_event(ps->set, ev->code);
        if (r == PAPI_OK) {
            ps->idx[ps->n++] = e;
            ev->pass = p;
            return 0;
        }
        /* PAPI_ECNFLCT / PAPI_ECOUNT: the counters of this set are taken.
         * The event counted alone, so any other refusal is also a conflict
         * with this set's events: try the next set. A refused add leaves
         * the set as it was. */
    }

    ab_pass *ps = &c->pass[c->npass];
    int inherit;
    char note[WHY_LEN] = "";
    r = papi_new_set(ev->cidx, &ps->set, &inherit, note, sizeof note);
    if (r != PAPI_OK) {
        set_why(c, e, "PAPI_create_eventset failed: %s", papi_text(r));
        return -1;
    }
    ps->idx = calloc((size_t)c->n, sizeof *ps->idx);
    ps->vals = calloc((size_t)c->n, sizeof *ps->vals);
    if (!ps->idx || !ps->vals) {
        free(ps->idx);
        free(ps->vals);
        ps->idx = NULL;
        ps->vals = NULL;
        papi_free_set(&ps->set);
        set_why(c, e, "out of memory");
        return -1;
    }
    r = PAPI_add_event(ps->set, ev->code);
    if (r != PAPI_OK) {
        /* Counted alone a moment ago: PAPI changed its mind. */
        free(ps->idx);
        free(ps->vals);
        ps->idx = NULL;
        ps->vals = NULL;
        papi_free_set(&ps->set);
        set_why(c, e, "PAPI_add_event failed in a new set: %s", papi_text(r));
        return -1;
    }
    ps->cidx = ev->cidx;
    ps->n = 1;
    ps->idx[0] = e;
    ev->pass = c->npass;
    if (c->npass == 0)
        c->inherit = inherit;
    else
        c->inherit = c->inherit && inherit;
    if (!inherit && !c->inherit_note[0])
        put(c->inherit_note, sizeof c->inherit_note, "%s", note);
    c->npass++;
    return 0;
}

static void backend_open(ab_counters *c)
{
    if (!papi_ready()) {
        for (int e = 0; e < c->n; e++)
            set_why(c, e, "%s", papi_init_error);
        return;
    }

    pmu_probe pmu;
    int pmu_done = 0;
    char *ok = calloc((size_t)(c->n > 0 ? c->n : 1), 1);
    if (!ok) {
        for (int e = 0; e < c->n; e++)
            set_why(c, e, "out of memory");
        return;
    }

    /* 1. Each event alone: what fails here is unavailable, with a reason. */
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (!ev->name[0]) {
            set_why(c, e, "empty event name");
            continue;
        }
        int code = PAPI_NULL;
        int r = PAPI_event_name_to_code(ev->name, &code);
        if (r == PAPI_ENOEVNT || r == PAPI_ENOSUPP) {
            /* PAPI 7 answers PAPI_ENOSUPP for names no component knows. */
            set_why(c, e, "unknown event: no PAPI preset or native event of an enabled "
                    "component has this name");
            continue;
        }
        if (r != PAPI_OK) {
            set_why(c, e, "PAPI_event_name_to_code failed: %s", papi_text(r));
            continue;
        }
        int cidx = PAPI_get_event_component(code);
        if (cidx < 0) {
            set_why(c, e, "PAPI_get_event_component failed: %s", papi_text(cidx));
            continue;
        }
        const char *step = "";
        r = papi_try_alone(code, cidx, &step);
        if (r != PAPI_OK) {
            papi_reason(c, e, step, r, &pmu, &pmu_done);
            continue;
        }
        ev->code = code;
        ev->cidx = cidx;
        ok[e] = 1;
    }

    /* 2. Pack the countable events greedily, in the order asked for. A set
     *    is never multiplexed (no PAPI_set_multiplex): when it is full the
     *    event goes to a new set, which is one more pass. */
    for (int e = 0; e < c->n; e++)
        if (ok[e])
            (void)papi_place(c, e);
    free(ok);
}

static void backend_close(ab_counters *c)
{
    for (int p = 0; p < c->npass; p++)
        if (!c->pass[p].direct)
            papi_free_set(&c->pass[p].set);  /* stops a running set first */
    c->running = -1;
}

static int backend_start(ab_counters *c, int pass)
{
    int r = PAPI_start(c->pass[pass].set);
    if (r != PAPI_OK) {
        put(c->err, sizeof c->err, "PAPI_start (pass %d) failed: %s", pass, papi_text(r));
        return -1;
    }
    return 0;
}

static int backend_stop(ab_counters *c, int pass, long long *values)
{
    ab_pass *ps = &c->pass[pass];
    int r = PAPI_stop(ps->set, ps->vals);
    if (r != PAPI_OK) {
        put(c->err, sizeof c->err, "PAPI_stop (pass %d) failed: %s", pass, papi_text(r));
        return -1;
    }
    if (values)
        for (int k = 0; k < ps->n; k++)
            values[ps->idx[k]] = ps->vals[k];
    return 0;
}

/* Summary and diagnosis from PAPI's view plus the probe list's results. */
static void backend_describe(const ab_counters *probe, char *summary, size_t summary_len,
                             char *diagnosis, size_t diag_len)
{
    put(diagnosis, diag_len, "%s", "");
    if (!papi_ready()) {
        put(summary, summary_len, "PAPI %d.%d.%d.%d (headers), not initialised",
            PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
            PAPI_VERSION_REVISION(PAPI_VERSION), PAPI_VERSION_INCREMENT(PAPI_VERSION));
        put(diagnosis, diag_len, "%s", papi_init_error);
        return;
    }

    int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);
    if (v <= 0)
        v = PAPI_VERSION;
    put(summary, summary_len, "PAPI %d.%d.%d.%d", PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
        PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));

    /* Hardware counting works when the cycle or instruction preset does
     * (PROBE_NAMES starts with PAPI_TOT_CYC, PAPI_TOT_INS). */
    int hw_ok = probe && (probe->ev[0].why == NULL || probe->ev[1].why == NULL);
    const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
    const char *papi_vendor = hw && hw->virtualized ? hw->virtual_vendor_string : NULL;
    int cidx = PAPI_get_component_index("perf_event");
    const PAPI_component_info_t *info = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
    if (!info)
        append(summary, summary_len, ", no perf_event component");
    else if (info->disabled)
        append(summary, summary_len, ", perf_event component disabled");
    else if (hw_ok)
        append(summary, summary_len, ", perf_event component enabled, %d hardware counters",
               info->num_cntrs);
    else
        /* PAPI still reports its table's counter count (6 on AMD) then. */
        append(summary, summary_len, ", perf_event component enabled, software events only");
    char hv[64], sig[64];
    if (hypervisor_name(papi_vendor, hv, sizeof hv, sig, sizeof sig))
        append(summary, summary_len, ", %s virtual machine", hv);

    if (hw_ok)
        return;
    if (!info) {
        put(diagnosis, diag_len, "PAPI was built without its perf_event component");
        return;
    }
    pmu_probe pmu;
    probe_pmu(&pmu);
    if (info->disabled) {
        /* PAPI's reason alone ("libpfm4 no default PMU found") names the
         * symptom; the kernel's answer names the cause (a VM without a PMU,
         * a CPU libpfm4 does not know, perf_event_paranoid). With the
         * component disabled even PAPI's software events are gone. */
        char cause[400];
        if (pmu.err == 0)
            put(cause, sizeof cause, "the kernel opens hardware counters, so libpfm4 does not "
                "know this CPU");
        else
            explain_pmu(&pmu, papi_vendor, 0, cause, sizeof cause);
        put(diagnosis, diag_len, "PAPI's perf_event component is disabled (%s), so no event "
            "can be counted through PAPI; %s",
            info->disabled_reason[0] ? info->disabled_reason : papi_text(info->disabled), cause);
        return;
    }
    if (pmu.err == 0)
        /* The kernel counts cycles but PAPI does not map its presets here
         * (e.g. libpfm4 does not know this CPU). */
        put(diagnosis, diag_len, "the kernel opens hardware counters but PAPI cannot count "
            "PAPI_TOT_CYC: %s", probe ? probe->ev[0].why : "out of memory");
    else
        explain_pmu(&pmu, papi_vendor, 1, diagnosis, diag_len);
}

/* ================================================================================ */
#else /* no PAPI */

static const char NOT_BUILT_IN[] = "PAPI not built in (libpapi-dev was not found at build time)";

static void backend_open(ab_counters *c)
{
    for (int e = 0; e < c->n; e++)
        set_why(c, e, "%s", NOT_BUILT_IN);
}

static void backend_close(ab_counters *c)
{
    (void)c;
}

/* Never called: there are no passes. */
static int backend_start(ab_counters *c, int pass)
{
    put(c->err, sizeof c->err, "pass %d: %s", pass, NOT_BUILT_IN);
    return -1;
}

static int backend_stop(ab_counters *c, int pass, long long *values)
{
    (void)values;
    put(c->err, sizeof c->err, "pass %d: %s", pass, NOT_BUILT_IN);
    return -1;
}

static void backend_describe(const ab_counters *probe, char *summary, size_t summary_len,
                             char *diagnosis, size_t diag_len)
{
    (void)probe;
    put(summary, summary_len, "PAPI not built in");
    put(diagnosis, diag_len, "%s", NOT_BUILT_IN);
    /* Whether installing PAPI would bring hardware counters is worth
     * knowing: say so when the kernel has none to offer either. */
    pmu_probe pmu;
    probe_pmu(&pmu);
    if (pmu.err != 0) {
        char why[WHY_LEN * 2];
        explain_pmu(&pmu, NULL, 1, why, sizeof why);
        append(diagnosis, diag_len, "; besides, %s", why);
    }
}

#endif /* ATTN_HAVE_PAPI */
/* ================================================================================ */

ab_counters *ab_counters_open(const char *const *names, int n)
{
    ab_counters *c = alloc_counters(names, n);
    if (!c)
        return NULL;
    backend_open(c);
    direct_open(c);
    return c;
}

void ab_counters_close(ab_counters *c)
{
    if (!c)
        return;
    backend_close(c);
    free_counters(c);
}

int ab_counters_count(const ab_counters *c)
{
    return c ? c->n : 0;
}

const char *ab_counters_name(const ab_counters *c, int event)
{
    if (!c || event < 0 || event >= c->n)
        return NULL;
    return c->ev[event].name;
}

const char *ab_counters_unavailable(const ab_counters *c, int event)
{
    if (!c || event < 0 || event >= c->n)
        return "no such event";
    return c->ev[event].why;
}

const char *ab_counters_via(const ab_counters *c, int event)
{
    if (!c || event < 0 || event >= c->n || c->ev[event].why)
        return NULL;
    return c->ev[event].fd >= 0 ? "perf_event_open" : "PAPI";
}

int ab_counters_passes(const ab_counters *c)
{
    return c ? c->npass : 0;
}

int ab_counters_in_pass(const ab_counters *c, int event, int pass)
{
    if (!c || event < 0 || event >= c->n || pass < 0 || pass >= c->npass)
        return 0;
    return c->ev[event].why == NULL && c->ev[event].pass == pass;
}

int ab_counters_start(ab_counters *c, int pass)
{
    if (!c)
        return -1;
    if (pass < 0 || pass >= c->npass) {
        if (c->npass == 0)
            put(c->err, sizeof c->err, "no pass %d: no event can be counted", pass);
        else
            put(c->err, sizeof c->err, "no pass %d: there are %d", pass, c->npass);
        return -1;
    }
    if (c->running >= 0) {
        put(c->err, sizeof c->err, "cannot start pass %d: pass %d is still counting", pass,
            c->running);
        return -1;
    }
    if ((c->pass[pass].direct ? direct_start(c, pass) : backend_start(c, pass)) != 0)
        return -1;
    c->running = pass;
    return 0;
}

int ab_counters_stop(ab_counters *c, int pass, long long *values)
{
    if (!c)
        return -1;
    if (pass < 0 || pass >= c->npass || c->running != pass) {
        put(c->err, sizeof c->err, "cannot stop pass %d: it is not counting", pass);
        return -1;
    }
    c->running = -1;  /* whatever PAPI_stop says, the pass is over */
    return c->pass[pass].direct ? direct_stop(c, pass, values) : backend_stop(c, pass, values);
}

const char *ab_counters_error(const ab_counters *c)
{
    return c ? c->err : "no counters";
}

int ab_counters_describe(char *summary, size_t summary_len, char *diagnosis, size_t diag_len,
                         ab_counter_probe *probes, int max)
{
    put(summary, summary_len, "%s", "");
    put(diagnosis, diag_len, "%s", "");

    /* Every probe event is tried alone, exactly as a benchmark would. */
    ab_counters *c = ab_counters_open(PROBE_NAMES, N_PROBES);
    backend_describe(c, summary, summary_len, diagnosis, diag_len);
    if (c && c->npass > 0) {
        if (c->inherit)
            append(summary, summary_len, ", counts include threads created while counting");
        else
            append(summary, summary_len, ", threads created while counting are NOT counted (%s)",
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
            put(p->why, sizeof p->why, "%s", why ? why : "");
        }
    ab_counters_close(c);
    return n;
}
