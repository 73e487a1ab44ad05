/*
 * counters_perf.c — the kernel's software events, opened directly with
 * perf_event_open: one counter per thread of the process.
 *
 * The kernel's software events need no PMU and are never scarce, so they
 * are opened here with perf_event_open rather than through PAPI, even where
 * PAPI's perf_event component could count them (where it is disabled — libpfm4
 * knows no PMU of this CPU, seen on a Zen 5 KVM guest — or PAPI is not built
 * in, nothing else could). The reason is threads: PAPI ties an event set to
 * the thread that adds its events, and PAPI 7 refuses PAPI_INHERIT on a
 * machine without a PMU, so through PAPI an OpenMP team created before
 * counting starts is not counted at all. Here every thread of the process
 * gets its own counter (see ab_perf_start), and all of them join the first
 * pass, since they cost no hardware counter. They count every thread
 * whichever thread starts them.
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
 * occur in the kernel are unavailable rather than listed and reading 0.
 */
#include "counters_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifdef __linux__
#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#endif

#include "text.h"

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

int ab_perf_software_event(const char *name, const char **quals)
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

const char *ab_perf_kernel_only(int sw)
{
    return sw >= 0 && SOFTWARE_EVENTS[sw].mode == SW_KERNEL ? SOFTWARE_EVENTS[sw].what : NULL;
}

const char *ab_perf_scope(const ab_counters *c, int e)
{
    const ab_event *ev = &c->ev[e];
    /* The clocks count the same in user space only; page faults do not. */
    int user_only = ev->exclude_kernel && SOFTWARE_EVENTS[ev->sw].mode == SW_FAULTS;
    if (c->all_threads)
        return user_only ? AB_SCOPE_ALL_USER : AB_SCOPE_ALL;
    return user_only ? AB_SCOPE_CREATED_USER : AB_SCOPE_CREATED;
}

#ifdef __linux__

int ab_perf_event_open(unsigned type, unsigned long long config, pid_t tid, int exclude_kernel,
                       int inherit)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.inherit = inherit ? 1 : 0;
    attr.exclude_kernel = exclude_kernel ? 1 : 0;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && errno == EINVAL) {
        /* Kernels before 3.14 lack the flag. */
        fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0UL);
        if (fd >= 0)
            (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    }
    return (int)fd;
}

/* A disabled counter of software event config for thread tid (0: the
 * calling thread), inherited by the threads it creates; -1 with errno.
 * Threads created while counting (or between a stop and the next start) are
 * counted through the counter of the thread that created them; the kernel
 * adds their counts to it, even after they exit. */
static int perf_open_sw(unsigned long long config, pid_t tid, int exclude_kernel)
{
    return ab_perf_event_open(PERF_TYPE_SOFTWARE, config, tid, exclude_kernel, 1);
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
    int paranoid = ab_perf_event_paranoid();
    if (paranoid != INT_MIN)
        ab_counters_set_why(c, e, "%s happen in the kernel, and perf_event_paranoid=%d lets this "
                            "process count user space only (needs <= 1 or CAP_PERFMON), so it "
                            "would read 0", what, paranoid);
    else
        ab_counters_set_why(c, e, "%s happen in the kernel, and the kernel lets this process "
                            "count user space only, so it would read 0", what);
}

#endif /* __linux__ */

void ab_perf_close(ab_counters *c)
{
    for (int e = 0; e < c->n; e++) {
        for (int i = 0; i < c->ev[e].nthr; i++)
            close(c->ev[e].thr[i].fd);
        c->ev[e].nthr = 0;
    }
}

/* Each software event asked for (without qualifiers) is opened once for the
 * calling thread, in kernel mode where permitted, to learn whether it can
 * be counted and in which mode. */
void ab_perf_open(ab_counters *c)
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
            if (ab_perf_kernel_only(ev->sw)) {
                set_why_kernel_only(c, e, ab_perf_kernel_only(ev->sw));
                continue;
            }
            exclude_kernel = 1;
            fd = perf_open_sw(sw->config, 0, 1);
        }
        if (fd < 0) {
            int err = errno;
            if ((err == EACCES || err == EPERM) && ab_perf_event_paranoid() != INT_MIN)
                ab_counters_set_why(c, e, "perf_event_open: %s (perf_event_paranoid=%d)",
                                    strerror(err), ab_perf_event_paranoid());
            else
                ab_counters_set_why(c, e, "perf_event_open: %s", strerror(err));
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
            ab_counters_set_why(c, e, "perf_event_open: not on this system");
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
int ab_perf_start(ab_counters *c, int pass)
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
        ab_perf_close(c);
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
                ab_perf_close(c);
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
int ab_perf_stop(ab_counters *c, int pass, long long *values)
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
