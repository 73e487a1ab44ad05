/*
 * counters.c — hardware and software event counters through PAPI.
 *
 * Two back ends share the bookkeeping below: PAPI (ATTN_HAVE_PAPI) and a
 * stub that reports every event as unavailable. The kernel's software events
 * bypass both: they are opened directly with perf_event_open, one counter
 * per thread of the process, because neither back end counts a thread pool
 * that exists before counting starts. A Linux perf_event_open() probe,
 * independent of PAPI, explains why hardware events are missing when they
 * are (no PMU in a virtual machine, perf_event_paranoid, seccomp...).
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
 * the thread whose work is measured. The directly opened software events
 * count every thread whichever thread starts them.
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
#include <sys/types.h>
#include <unistd.h>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#ifdef ATTN_HAVE_PAPI
#include <papi.h>
#include <pthread.h>
#endif

#include "machine.h"
#include "text.h"

#define WHY_LEN 160  /* == sizeof ((ab_counter_probe *)0)->why */
#define ERR_LEN 200

/* ---- bookkeeping ------------------------------------------------------------ */

/* One thread's counter of a directly opened software event. */
typedef struct ab_thread_fd {
    pid_t tid;
    int fd;
} ab_thread_fd;

typedef struct ab_event {
    char *name;          /* owned copy of the name asked for */
    const char *why;     /* NULL when countable, else static text or why_buf */
    char why_buf[WHY_LEN];
    int pass;            /* the pass counting it, -1 when unavailable */
    int code;            /* PAPI event code */
    int cidx;            /* PAPI component index */
    /* A kernel software event opened with perf_event_open (direct = 1):
     * sw indexes SOFTWARE_EVENTS; exclude_kernel is 1 when the kernel lets
     * this process count user space only; thr holds one counter per thread,
     * every direct event of c holding the same threads in the same order. */
    int direct;
    int sw;
    int exclude_kernel;
    ab_thread_fd *thr;
    int nthr, thr_cap;
} ab_event;

typedef struct ab_pass {
    int papi;            /* 1 when the pass has a PAPI event set */
    int set;             /* that set */
    int cidx;            /* its component */
    int inherit;         /* 1 when the set counts threads the caller creates */
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
    int direct_pass;     /* the pass that also counts the direct events, -1 when none */
    int all_threads;     /* 1 when /proc/self/task lists the threads to count */
    int inherit;         /* 1 when every PAPI pass counts threads created while counting */
    char inherit_note[WHY_LEN]; /* why not, when inherit is 0 and PAPI passes exist */
    char err[ERR_LEN];
};

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

/* ---- the machine: perf_event_open probe ------------------------------------------ */

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

#ifdef __linux__
/* A disabled counter of event config of type, the hypervisor excluded. */
static struct perf_event_attr perf_attr_of(unsigned type, unsigned long long config)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.exclude_hv = 1;
    return attr;
}

/* perf_event_open of attr for thread tid (0: the calling thread) on any
 * CPU, alone in its group, close-on-exec; -1 with errno. */
static int perf_open_attr(struct perf_event_attr *attr, pid_t tid)
{
    long fd = syscall(SYS_perf_event_open, attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL) {
        /* Kernels before 3.14 lack the flag. */
        fd = syscall(SYS_perf_event_open, attr, tid, -1, -1, 0UL);
        if (fd >= 0)
            (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    return (int)fd;
}
#endif

/* Opens, for the calling thread, the counter every PMU has: CPU cycles in
 * user space (as PAPI's default domain counts), and closes it again. */
static void probe_pmu(pmu_probe *p)
{
    p->paranoid = read_paranoid();
#ifdef __linux__
    struct perf_event_attr attr = perf_attr_of(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
    attr.exclude_kernel = 1;  /* what perf_event_paranoid=2 still allows */
    int fd = perf_open_attr(&attr, 0 /* this thread */);
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

/* ---- allocation, shared by both back ends ----------------------------------- */

static ab_counters *alloc_counters(const char *const *names, int n)
{
    if (!names || n < 0)
        n = 0;
    ab_counters *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->running = -1;
    c->direct_pass = -1;
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
        c->ev[e].sw = -1;
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

static void direct_close_all(ab_counters *c);

static void free_counters(ab_counters *c)
{
    direct_close_all(c);
    for (int e = 0; e < c->n; e++)
        free(c->ev[e].thr);
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
/* The kernel's software events need no PMU and are never scarce, so they
 * are opened here with perf_event_open rather than through PAPI, even where
 * PAPI's perf_event component could count them (where it is disabled — libpfm4
 * knows no PMU of this CPU, seen on a Zen 5 KVM guest — or PAPI is not built
 * in, nothing else could). The reason is threads: PAPI ties an event set to
 * the thread that adds its events, and PAPI 7 refuses PAPI_INHERIT on a
 * machine without a PMU, so through PAPI an OpenMP team created before
 * counting starts is not counted at all. Here every thread of the process
 * gets its own counter (see direct_start), and all of them join the first
 * pass, since they cost no hardware counter.
 *
 * Kernel mode: context switches and CPU migrations are counted in the
 * scheduler, that is always in kernel mode, so with exclude_kernel=1 they
 * read 0 (measured: 72 and 20 against 0 and 0 over the same region). Page
 * faults are counted in the mode the fault was taken in: those taken in the
 * kernel (a read() into a fresh buffer) are lost with exclude_kernel=1
 * (measured: 523 against 265). The clocks count time whatever the mode. So
 * every event asks for kernel mode first; where the kernel refuses it
 * (EACCES: perf_event_paranoid >= 2 without CAP_PERFMON or CAP_SYS_ADMIN),
 * the clocks and faults fall back to user space, and the events that only
 * occur in the kernel are unavailable rather than listed and reading 0. */

enum {
    SW_TIME,    /* a clock: counts the same in any mode */
    SW_FAULTS,  /* occurs in both modes: user space only undercounts */
    SW_KERNEL,  /* occurs in kernel mode only: user space only reads 0 */
};

/* libpfm4's names for the software events (perf::NAME), each with its
 * PERF_COUNT_SW_* alias. */
static const struct sw_event {
    const char *name;
    unsigned long long config;
    int mode;
    const char *what;  /* for reasons: "context switches happen in the kernel" */
} SOFTWARE_EVENTS[] = {
#ifdef __linux__
    {"TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK, SW_TIME, NULL},
    {"PERF_COUNT_SW_TASK_CLOCK", PERF_COUNT_SW_TASK_CLOCK, SW_TIME, NULL},
    {"CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK, SW_TIME, NULL},
    {"PERF_COUNT_SW_CPU_CLOCK", PERF_COUNT_SW_CPU_CLOCK, SW_TIME, NULL},
    {"PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS, SW_FAULTS, NULL},
    {"FAULTS", PERF_COUNT_SW_PAGE_FAULTS, SW_FAULTS, NULL},
    {"PERF_COUNT_SW_PAGE_FAULTS", PERF_COUNT_SW_PAGE_FAULTS, SW_FAULTS, NULL},
    {"MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN, SW_FAULTS, NULL},
    {"PERF_COUNT_SW_PAGE_FAULTS_MIN", PERF_COUNT_SW_PAGE_FAULTS_MIN, SW_FAULTS, NULL},
    {"MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ, SW_FAULTS, NULL},
    {"PERF_COUNT_SW_PAGE_FAULTS_MAJ", PERF_COUNT_SW_PAGE_FAULTS_MAJ, SW_FAULTS, NULL},
    {"CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES, SW_KERNEL, "context switches"},
    {"CS", PERF_COUNT_SW_CONTEXT_SWITCHES, SW_KERNEL, "context switches"},
    {"PERF_COUNT_SW_CONTEXT_SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES, SW_KERNEL,
     "context switches"},
    {"CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS, SW_KERNEL, "CPU migrations"},
    {"MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS, SW_KERNEL, "CPU migrations"},
    {"PERF_COUNT_SW_CPU_MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS, SW_KERNEL, "CPU migrations"},
    /* PERF_COUNT_SW_CGROUP_SWITCHES (Linux 5.13) is an enumerator, not a
     * macro, so older headers cannot be told apart: its value is spelt out.
     * An older kernel answers EINVAL, which becomes the reason. */
    {"CGROUP-SWITCHES", 11, SW_KERNEL, "cgroup switches"},
    {"PERF_COUNT_SW_CGROUP_SWITCHES", 11, SW_KERNEL, "cgroup switches"},
#endif
    {NULL, 0, 0, NULL},
};

/* The software event a name means, "perf::NAME" or "NAME" in any case: its
 * index in SOFTWARE_EVENTS, or -1. *quals points at the libpfm4 qualifiers
 * that follow the name (":u=1:k=0"), or at the empty string. */
static int software_event(const char *name, const char **quals)
{
    const char *base = strncasecmp(name, "perf::", 6) == 0 ? name + 6 : name;
    size_t len = strcspn(base, ":");
    *quals = base + len;
    for (int k = 0; SOFTWARE_EVENTS[k].name; k++)
        if (strlen(SOFTWARE_EVENTS[k].name) == len
            && strncasecmp(SOFTWARE_EVENTS[k].name, base, len) == 0)
            return k;
    return -1;
}

/* "context switches happen in the kernel" and so on, for event sw. */
static const char *kernel_only_what(int sw)
{
    return sw >= 0 && SOFTWARE_EVENTS[sw].mode == SW_KERNEL ? SOFTWARE_EVENTS[sw].what : NULL;
}

#ifdef __linux__

/* A disabled counter of software event config for thread tid (0: the
 * calling thread), inherited by the threads it creates; -1 with errno. */
static int perf_open_sw(unsigned long long config, pid_t tid, int exclude_kernel)
{
    struct perf_event_attr attr = perf_attr_of(PERF_TYPE_SOFTWARE, config);
    /* Threads created while counting (or between a stop and the next start)
     * are counted through the counter of the thread that created them; the
     * kernel adds their counts to it, even after they exit. */
    attr.inherit = 1;
    attr.exclude_kernel = exclude_kernel ? 1 : 0;
    return perf_open_attr(&attr, tid);
}

/* The threads of this process now, malloc'd, their number in *n; NULL when
 * /proc/self/task cannot be read or memory runs out (errno says which). */
static pid_t *list_threads(int *n)
{
    *n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return NULL;
    int cap = 16, k = 0;
    pid_t *tids = malloc((size_t)cap * sizeof *tids);
    struct dirent *de;
    while (tids && (de = readdir(d)) != NULL) {
        char *end;
        long v = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end != '\0' || v <= 0)
            continue;  /* "." and ".." */
        if (k == cap) {
            pid_t *more = realloc(tids, (size_t)cap * 2 * sizeof *tids);
            if (!more) {
                free(tids);
                tids = NULL;
                errno = ENOMEM;
                break;
            }
            tids = more;
            cap *= 2;
        }
        tids[k++] = (pid_t)v;
    }
    closedir(d);
    *n = k;
    return tids;
}

static int has_tid(const pid_t *tids, int n, pid_t tid)
{
    for (int i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

/* The first direct event: its threads are every direct event's. */
static ab_event *first_direct(ab_counters *c)
{
    for (int e = 0; e < c->n; e++)
        if (c->ev[e].direct && !c->ev[e].why)
            return &c->ev[e];
    return NULL;
}

/* Closes the counters of the thread in slot i of every direct event. */
static void direct_drop_thread(ab_counters *c, int i)
{
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (!ev->direct || ev->why || i >= ev->nthr)
            continue;
        close(ev->thr[i].fd);
        ev->thr[i] = ev->thr[--ev->nthr];  /* the same swap in every event keeps them aligned */
    }
}

/* Opens the counters of thread tid for every direct event, appended to
 * their lists. Returns 0, or an errno (and none is kept): ESRCH when the
 * thread has exited meanwhile. */
static int direct_add_thread(ab_counters *c, pid_t tid)
{
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (!ev->direct || ev->why)
            continue;
        int err = 0;
        if (ev->nthr == ev->thr_cap) {
            int cap = ev->thr_cap ? 2 * ev->thr_cap : 8;
            ab_thread_fd *more = realloc(ev->thr, (size_t)cap * sizeof *more);
            if (more) {
                ev->thr = more;
                ev->thr_cap = cap;
            } else {
                err = ENOMEM;
            }
        }
        int fd = err ? -1 : perf_open_sw(SOFTWARE_EVENTS[ev->sw].config, tid, ev->exclude_kernel);
        if (fd < 0) {
            err = err ? err : errno;
            /* Undo this thread in the events before this one. */
            for (int k = 0; k < e; k++) {
                ab_event *done = &c->ev[k];
                if (done->direct && !done->why && done->nthr > 0
                    && done->thr[done->nthr - 1].tid == tid)
                    close(done->thr[--done->nthr].fd);
            }
            return err;
        }
        ev->thr[ev->nthr].tid = tid;
        ev->thr[ev->nthr].fd = fd;
        ev->nthr++;
    }
    return 0;
}

/* Why event e, which only occurs in the kernel, cannot be counted here. */
static void set_why_kernel_only(ab_counters *c, int e, const char *what)
{
    int paranoid = read_paranoid();
    if (paranoid != INT_MIN)
        set_why(c, e, "%s happen in the kernel, and perf_event_paranoid=%d lets this process "
                "count user space only (needs <= 1 or CAP_PERFMON), so it would read 0", what,
                paranoid);
    else
        set_why(c, e, "%s happen in the kernel, and the kernel lets this process count user "
                "space only, so it would read 0", what);
}

#endif /* __linux__ */

static void direct_close_all(ab_counters *c)
{
    for (int e = 0; e < c->n; e++) {
        for (int i = 0; i < c->ev[e].nthr; i++)
            close(c->ev[e].thr[i].fd);
        c->ev[e].nthr = 0;
    }
}

/* Checks that each software event asked for (without qualifiers) can be
 * opened, in kernel mode where permitted, and puts the countable ones in
 * the first pass (a new one when PAPI has none). The counters themselves
 * are opened per thread by direct_start. */
static void direct_open(ab_counters *c)
{
#ifdef __linux__
    int in_pass = 0;
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (!ev->direct || ev->why)
            continue;
        const struct sw_event *sw = &SOFTWARE_EVENTS[ev->sw];
        int exclude_kernel = 0;
        int fd = perf_open_sw(sw->config, 0, 0);
        if (fd < 0 && (errno == EACCES || errno == EPERM)) {
            if (kernel_only_what(ev->sw)) {
                set_why_kernel_only(c, e, kernel_only_what(ev->sw));
                continue;
            }
            exclude_kernel = 1;
            fd = perf_open_sw(sw->config, 0, 1);
        }
        if (fd < 0) {
            int err = errno;
            if ((err == EACCES || err == EPERM) && read_paranoid() != INT_MIN)
                set_why(c, e, "perf_event_open: %s (perf_event_paranoid=%d)", strerror(err),
                        read_paranoid());
            else
                set_why(c, e, "perf_event_open: %s", strerror(err));
            continue;
        }
        close(fd);
        ev->exclude_kernel = exclude_kernel;
        if (c->npass == 0) {
            memset(&c->pass[0], 0, sizeof c->pass[0]);
            c->npass = 1;
        }
        ev->pass = 0;
        in_pass = 1;
    }
    if (in_pass) {
        c->direct_pass = 0;
        /* Without /proc the threads cannot be listed: then the calling
         * thread's counter and inheritance cover what they can. */
        DIR *d = opendir("/proc/self/task");
        c->all_threads = d != NULL;
        if (d)
            closedir(d);
    }
#else
    for (int e = 0; e < c->n; e++)
        if (c->ev[e].direct && !c->ev[e].why)
            set_why(c, e, "perf_event_open: not on this system");
#endif
}

/* Lists the threads and makes sure each has one counter per direct event,
 * then resets and enables them all. Each thread must be counted exactly
 * once: a counter with inherit also counts the threads its thread creates
 * from then on, so a thread created since the counters were opened is
 * already counted by its creator's, and a counter of its own would count it
 * twice. Such a thread shows as one not in the table; then every counter is
 * closed (which ends the inherited ones) and reopened, one per thread
 * listed. Otherwise the counters are reused, and those of threads that have
 * exited are closed: none of them can still feed an inherited counter,
 * since a live thread it created would have shown as new. One race is left:
 * a thread created while the threads are being listed, by a thread whose
 * counter is not open yet, is not counted until the next start lists it. */
static int direct_start(ab_counters *c, int pass)
{
#ifdef __linux__
    if (pass != c->direct_pass)
        return 0;
    ab_event *first = first_direct(c);
    if (!first)
        return 0;
    int n = 0;
    pid_t *now = NULL;
    if (c->all_threads) {
        now = list_threads(&n);
        if (!now) {
            ab_putf(c->err, sizeof c->err, "cannot list the threads in /proc/self/task: %s",
                    strerror(errno));
            return -1;
        }
    } else {
        now = malloc(sizeof *now);
        if (!now) {
            ab_putf(c->err, sizeof c->err, "out of memory");
            return -1;
        }
        now[0] = (pid_t)syscall(SYS_gettid);
        n = 1;
    }

    int fresh = first->nthr == 0;
    for (int i = 0; i < n && !fresh; i++) {
        int known = 0;
        for (int k = 0; k < first->nthr && !known; k++)
            known = first->thr[k].tid == now[i];
        fresh = !known;
    }
    if (fresh) {
        direct_close_all(c);
        for (int i = 0; i < n; i++) {
            int err = direct_add_thread(c, now[i]);
            if (err == ESRCH)
                continue;  /* it exited after the listing: nothing to count */
            if (err) {
                if (err == EMFILE || err == ENFILE)
                    ab_putf(c->err, sizeof c->err, "perf_event_open for thread %d of %d: %s (one "
                            "descriptor per thread and software event; raise ulimit -n)",
                            (int)now[i], n, strerror(err));
                else
                    ab_putf(c->err, sizeof c->err, "perf_event_open for thread %d: %s", (int)now[i],
                            strerror(err));
                direct_close_all(c);
                free(now);
                return -1;
            }
        }
    } else {
        for (int k = first->nthr - 1; k >= 0; k--)
            if (!has_tid(now, n, first->thr[k].tid))
                direct_drop_thread(c, k);
    }
    free(now);

    /* Reset everything first, then enable in a tight loop, so that the
     * threads' counters start as close together as they can. */
    for (int pick = 0; pick < 2; pick++)
        for (int e = 0; e < c->n; e++) {
            ab_event *ev = &c->ev[e];
            if (!ev->direct || ev->why)
                continue;
            for (int i = 0; i < ev->nthr; i++)
                if (ioctl(ev->thr[i].fd, pick ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_RESET, 0)
                    != 0) {
                    ab_putf(c->err, sizeof c->err, "perf_event_open counter of %s, thread %d: %s",
                            ev->name, (int)ev->thr[i].tid, strerror(errno));
                    for (int k = 0; k < c->n; k++)
                        for (int j = 0; c->ev[k].direct && j < c->ev[k].nthr; j++)
                            (void)ioctl(c->ev[k].thr[j].fd, PERF_EVENT_IOC_DISABLE, 0);
                    return -1;
                }
        }
    return 0;
#else
    (void)c;
    (void)pass;
    return 0;
#endif
}

/* Disables every thread's counter, then stores each event's sum over its
 * threads. A thread that exited while counting still reads what it
 * counted. */
static int direct_stop(ab_counters *c, int pass, long long *values)
{
#ifdef __linux__
    if (pass != c->direct_pass)
        return 0;
    int rc = 0;
    for (int e = 0; e < c->n; e++)
        for (int i = 0; c->ev[e].direct && i < c->ev[e].nthr; i++)
            (void)ioctl(c->ev[e].thr[i].fd, PERF_EVENT_IOC_DISABLE, 0);
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (!ev->direct || ev->why)
            continue;
        uint64_t sum = 0;
        int ok = 1;
        for (int i = 0; i < ev->nthr; i++) {
            uint64_t v = 0;
            if (read(ev->thr[i].fd, &v, sizeof v) != (ssize_t)sizeof v) {
                ab_putf(c->err, sizeof c->err, "reading %s of thread %d: %s", ev->name,
                        (int)ev->thr[i].tid, strerror(errno));
                ok = 0;
                rc = -1;
                break;
            }
            sum += v;
        }
        if (ok && values)
            values[e] = (long long)sum;
    }
    return rc;
#else
    (void)c;
    (void)pass;
    (void)values;
    return 0;
#endif
}

/* ================================================================================ */
#ifdef ATTN_HAVE_PAPI

static pthread_once_t papi_once = PTHREAD_ONCE_INIT;
static int papi_ok;                 /* PAPI_library_init succeeded */
static char papi_init_error[WHY_LEN];

/* Whether libpfm4 qualifiers (":u=1:k=1") ask for kernel mode: ":k" or
 * ":k=1", the last one said counting. */
static int quals_ask_kernel(const char *quals)
{
    int kernel = 0;
    while (*quals == ':') {
        quals++;
        size_t len = strcspn(quals, ":");
        if ((len == 1 || len == 3) && (quals[0] == 'k' || quals[0] == 'K'))
            kernel = len == 1 || strncmp(quals + 1, "=1", 2) == 0;
        quals += len;
    }
    return kernel;
}

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
            ab_putf(papi_init_error, sizeof papi_init_error,
                    "PAPI_library_init: the library (%d.%d) does not match the headers (%d.%d)",
                    PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
                    PAPI_VERSION_MAJOR(PAPI_VER_CURRENT), PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
        else
            ab_putf(papi_init_error, sizeof papi_init_error, "PAPI_library_init failed: %s",
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
            ab_putf(note, note_len, "%s refuses PAPI_INHERIT: %s", info->name, papi_text(r));
    } else {
        ab_putf(note, note_len, "%s cannot inherit counters", info ? info->name : "the component");
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
    ps->papi = 1;
    ps->cidx = ev->cidx;
    ps->inherit = inherit;
    ps->n = 1;
    ps->idx[0] = e;
    ev->pass = c->npass;
    if (c->npass == 0)
        c->inherit = inherit;
    else
        c->inherit = c->inherit && inherit;
    if (!inherit && !c->inherit_note[0])
        ab_putf(c->inherit_note, sizeof c->inherit_note, "%s", note);
    c->npass++;
    return 0;
}

static void backend_open(ab_counters *c)
{
    int wanted = 0;
    for (int e = 0; e < c->n; e++)
        wanted += !c->ev[e].direct;
    if (wanted == 0)
        return;  /* software events only: PAPI need not even be initialised */
    if (!papi_ready()) {
        for (int e = 0; e < c->n; e++)
            if (!c->ev[e].direct)
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
        if (ev->direct)
            continue;
        if (!ev->name[0]) {
            set_why(c, e, "empty event name");
            continue;
        }
        /* A software event reaches PAPI only with libpfm4 qualifiers. PAPI
         * counts in user mode by default, and PAPI 7's perf_event component
         * refuses PAPI_DOM_ALL on a set (it checks with a hardware event,
         * absent without a PMU), so an event that only occurs in the
         * kernel counts only when its qualifiers ask for kernel mode. */
        const char *quals;
        const char *what = kernel_only_what(software_event(ev->name, &quals));
        if (what && !quals_ask_kernel(quals)) {
            set_why(c, e, "%s happen in the kernel, and PAPI counts this name in user mode "
                    "only, so it would read 0: add :k=1, or drop the qualifiers", what);
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
        if (c->pass[p].papi)
            papi_free_set(&c->pass[p].set);  /* stops a running set first */
    c->running = -1;
}

static int backend_start(ab_counters *c, int pass)
{
    if (!c->pass[pass].papi)
        return 0;
    int r = PAPI_start(c->pass[pass].set);
    if (r != PAPI_OK) {
        ab_putf(c->err, sizeof c->err, "PAPI_start (pass %d) failed: %s", pass, papi_text(r));
        return -1;
    }
    return 0;
}

static int backend_stop(ab_counters *c, int pass, long long *values)
{
    ab_pass *ps = &c->pass[pass];
    if (!ps->papi)
        return 0;
    int r = PAPI_stop(ps->set, ps->vals);
    if (r != PAPI_OK) {
        ab_putf(c->err, sizeof c->err, "PAPI_stop (pass %d) failed: %s", pass, papi_text(r));
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
    ab_putf(diagnosis, diag_len, "%s", "");
    if (!papi_ready()) {
        ab_putf(summary, summary_len, "PAPI %d.%d.%d.%d (headers), not initialised",
                PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
                PAPI_VERSION_REVISION(PAPI_VERSION), PAPI_VERSION_INCREMENT(PAPI_VERSION));
        ab_putf(diagnosis, diag_len, "%s", papi_init_error);
        return;
    }

    int v = PAPI_get_opt(PAPI_LIB_VERSION, NULL);
    if (v <= 0)
        v = PAPI_VERSION;
    ab_putf(summary, summary_len, "PAPI %d.%d.%d.%d", PAPI_VERSION_MAJOR(v), PAPI_VERSION_MINOR(v),
            PAPI_VERSION_REVISION(v), PAPI_VERSION_INCREMENT(v));

    /* Hardware counting works when the cycle or instruction preset does
     * (PROBE_NAMES starts with PAPI_TOT_CYC, PAPI_TOT_INS). */
    int hw_ok = probe && (probe->ev[0].why == NULL || probe->ev[1].why == NULL);
    const PAPI_hw_info_t *hw = PAPI_get_hardware_info();
    const char *papi_vendor = hw && hw->virtualized ? hw->virtual_vendor_string : NULL;
    int cidx = PAPI_get_component_index("perf_event");
    const PAPI_component_info_t *info = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
    if (!info)
        ab_appendf(summary, summary_len, ", no perf_event component");
    else if (info->disabled)
        ab_appendf(summary, summary_len, ", perf_event component disabled");
    else if (hw_ok)
        ab_appendf(summary, summary_len, ", perf_event component enabled, %d hardware counters",
                   info->num_cntrs);
    else
        /* PAPI still reports its table's counter count (6 on AMD) then. */
        ab_appendf(summary, summary_len, ", perf_event component enabled, software events only");
    char hv[64], sig[64];
    if (ab_hypervisor_name(papi_vendor, hv, sizeof hv, sig, sizeof sig))
        ab_appendf(summary, summary_len, ", %s virtual machine", hv);

    if (hw_ok)
        return;
    if (!info) {
        ab_putf(diagnosis, diag_len, "PAPI was built without its perf_event component");
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
            ab_putf(cause, sizeof cause, "the kernel opens hardware counters, so libpfm4 does not "
                    "know this CPU");
        else
            explain_pmu(&pmu, papi_vendor, 0, cause, sizeof cause);
        ab_putf(diagnosis, diag_len, "PAPI's perf_event component is disabled (%s), so no event "
                "can be counted through PAPI; %s",
                info->disabled_reason[0] ? info->disabled_reason : papi_text(info->disabled),
                cause);
        return;
    }
    if (pmu.err == 0)
        /* The kernel counts cycles but PAPI does not map its presets here
         * (e.g. libpfm4 does not know this CPU). */
        ab_putf(diagnosis, diag_len, "the kernel opens hardware counters but PAPI cannot count "
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
        if (!c->ev[e].direct)
            set_why(c, e, "%s", NOT_BUILT_IN);
}

static void backend_close(ab_counters *c)
{
    (void)c;
}

/* The only pass is the direct events': nothing for PAPI to do. */
static int backend_start(ab_counters *c, int pass)
{
    (void)c;
    (void)pass;
    return 0;
}

static int backend_stop(ab_counters *c, int pass, long long *values)
{
    (void)c;
    (void)pass;
    (void)values;
    return 0;
}

static void backend_describe(const ab_counters *probe, char *summary, size_t summary_len,
                             char *diagnosis, size_t diag_len)
{
    (void)probe;
    ab_putf(summary, summary_len, "PAPI not built in");
    ab_putf(diagnosis, diag_len, "%s", NOT_BUILT_IN);
    /* Whether installing PAPI would bring hardware counters is worth
     * knowing: say so when the kernel has none to offer either. */
    pmu_probe pmu;
    probe_pmu(&pmu);
    if (pmu.err != 0) {
        char why[WHY_LEN * 2];
        explain_pmu(&pmu, NULL, 1, why, sizeof why);
        ab_appendf(diagnosis, diag_len, "; besides, %s", why);
    }
}

#endif /* ATTN_HAVE_PAPI */
/* ================================================================================ */

ab_counters *ab_counters_open(const char *const *names, int n)
{
    ab_counters *c = alloc_counters(names, n);
    if (!c)
        return NULL;
    /* The kernel's software events, named without qualifiers, are opened
     * directly; everything else goes to PAPI, which goes first so that the
     * direct events can join its first pass. */
    for (int e = 0; e < c->n; e++) {
        const char *quals;
        c->ev[e].sw = software_event(c->ev[e].name, &quals);
        c->ev[e].direct = c->ev[e].sw >= 0 && quals[0] == '\0';
    }
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
    return c->ev[event].direct ? "perf_event_open" : "PAPI";
}

const char *ab_counters_scope(const ab_counters *c, int event)
{
    if (!c || event < 0 || event >= c->n || c->ev[event].why)
        return NULL;
    const ab_event *ev = &c->ev[event];
    if (!ev->direct)
        return c->pass[ev->pass].inherit ? AB_SCOPE_CREATED : AB_SCOPE_CALLER;
    /* The clocks count the same in user space only; page faults do not. */
    int user_only = ev->exclude_kernel && SOFTWARE_EVENTS[ev->sw].mode == SW_FAULTS;
    if (c->all_threads)
        return user_only ? AB_SCOPE_ALL_USER : AB_SCOPE_ALL;
    return user_only ? AB_SCOPE_CREATED_USER : AB_SCOPE_CREATED;
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
            ab_putf(c->err, sizeof c->err, "no pass %d: no event can be counted", pass);
        else
            ab_putf(c->err, sizeof c->err, "no pass %d: there are %d", pass, c->npass);
        return -1;
    }
    if (c->running >= 0) {
        ab_putf(c->err, sizeof c->err, "cannot start pass %d: pass %d is still counting", pass,
                c->running);
        return -1;
    }
    /* PAPI's set starts last and stops first, so that the direct events'
     * bookkeeping is not in its counts. */
    if (direct_start(c, pass) != 0)
        return -1;
    if (backend_start(c, pass) != 0) {
        (void)direct_stop(c, pass, NULL);
        return -1;
    }
    c->running = pass;
    return 0;
}

int ab_counters_stop(ab_counters *c, int pass, long long *values)
{
    if (!c)
        return -1;
    if (pass < 0 || pass >= c->npass || c->running != pass) {
        ab_putf(c->err, sizeof c->err, "cannot stop pass %d: it is not counting", pass);
        return -1;
    }
    c->running = -1;  /* whatever PAPI_stop says, the pass is over */
    int papi = backend_stop(c, pass, values);
    char papi_err[ERR_LEN];
    ab_putf(papi_err, sizeof papi_err, "%s", c->err);
    int direct = direct_stop(c, pass, values);
    if (papi != 0)  /* the first failure is the one to report */
        ab_putf(c->err, sizeof c->err, "%s", papi_err);
    return papi != 0 || direct != 0 ? -1 : 0;
}

const char *ab_counters_error(const ab_counters *c)
{
    return c ? c->err : "no counters";
}

int ab_counters_describe(char *summary, size_t summary_len, char *diagnosis, size_t diag_len,
                         ab_counter_probe *probes, int max)
{
    ab_putf(summary, summary_len, "%s", "");
    ab_putf(diagnosis, diag_len, "%s", "");

    /* Every probe event is tried alone, exactly as a benchmark would. */
    ab_counters *c = ab_counters_open(PROBE_NAMES, N_PROBES);
    backend_describe(c, summary, summary_len, diagnosis, diag_len);
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
