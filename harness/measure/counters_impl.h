/*
 * counters_impl.h — what the files of ab_counters share, private to them:
 *  - counters.c: the bookkeeping below and the public ab_counters_* front,
 *    which hands each event to one of two back ends;
 *  - counters_perf.c: the kernel's software events, opened directly with
 *    perf_event_open, one counter per thread of the process;
 *  - counters_papi.c: every other event, through PAPI (or, without
 *    ATTN_HAVE_PAPI, refused as not built in);
 *  - counters_diagnosis.c: why hardware counters are missing (the PMU probe,
 *    perf_event_paranoid, the hypervisor) and ab_counters_describe.
 */
#ifndef AB_COUNTERS_IMPL_H
#define AB_COUNTERS_IMPL_H

#include <stddef.h>
#include <sys/types.h>

#include "counters.h"

#define WHY_LEN 160  /* == sizeof ((ab_counter_probe *)0)->why */
#define ERR_LEN 200

/* ---- bookkeeping (counters.c) ------------------------------------------------ */

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
     * sw indexes the software events of counters_perf.c; exclude_kernel is 1
     * when the kernel lets this process count user space only; thr holds one
     * counter per thread, every direct event of c holding the same threads
     * in the same order. */
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

/* Marks event e unavailable, with the formatted reason made one line. */
void ab_counters_set_why(ab_counters *c, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- the kernel's software events (counters_perf.c) ---------------------------- */

/* The software event a name means, "perf::NAME" or "NAME" in any case: its
 * index among the software events, or -1. *quals points at the libpfm4
 * qualifiers that follow the name (":u=1:k=0"), or at the empty string. */
int ab_perf_software_event(const char *name, const char **quals);
/* For software event sw that only occurs in the kernel, what it counts
 * ("context switches"), for reasons; NULL for the others and for -1. */
const char *ab_perf_kernel_only(int sw);
/* What the counts of available direct event e cover (an AB_SCOPE_*). */
const char *ab_perf_scope(const ab_counters *c, int e);

/* A counter of event config of type for thread tid (0: the calling thread)
 * on any CPU, disabled, the hypervisor excluded, close-on-exec; inherited by
 * the threads tid creates when inherit is 1 (Linux only). Returns the
 * descriptor, or -1 with errno. */
int ab_perf_event_open(unsigned type, unsigned long long config, pid_t tid, int exclude_kernel,
                       int inherit);

/* Checks that the direct events can be opened and puts the countable ones
 * in the first pass (a new one when PAPI has none); the counters themselves
 * are opened per thread by ab_perf_start. */
void ab_perf_open(ab_counters *c);
/* Around pass, when it is c->direct_pass (else they do nothing): start
 * counting every thread, and stop, storing each event's sum over the
 * threads into values (when not NULL). 0, or -1 with c->err set. */
int ab_perf_start(ab_counters *c, int pass);
int ab_perf_stop(ab_counters *c, int pass, long long *values);
/* Closes every thread's counter (the lists' memory stays). */
void ab_perf_close(ab_counters *c);

/* ---- PAPI (counters_papi.c) ------------------------------------------------------ */

/* Tries each event that is not direct, and packs the countable ones into
 * passes, one PAPI event set each; the others get their reason. */
void ab_papi_open(ab_counters *c);
/* Releases the event sets (a running one is stopped first). */
void ab_papi_close(ab_counters *c);
/* Around pass, when it has a PAPI set: 0, or -1 with c->err set. */
int ab_papi_start(ab_counters *c, int pass);
int ab_papi_stop(ab_counters *c, int pass, long long *values);
/* Summary and diagnosis from PAPI's view, probe being the probe list opened
 * (NULL when out of memory). */
void ab_papi_describe(const ab_counters *probe, char *summary, size_t summary_len,
                      char *diagnosis, size_t diag_len);

/* ---- why hardware counters are missing (counters_diagnosis.c) ----------------------- */

/* /proc/sys/kernel/perf_event_paranoid, or INT_MIN when it cannot be read
 * (no perf_event support in the kernel). */
int ab_perf_event_paranoid(void);

typedef struct ab_pmu_probe {
    int paranoid;  /* perf_event_paranoid, INT_MIN when unreadable */
    int err;       /* 0: a hardware cycles counter opened; else errno */
} ab_pmu_probe;

/* Opens, for the calling thread, the counter every PMU has: CPU cycles in
 * user space (as PAPI's default domain counts), and closes it again. */
void ab_probe_pmu(ab_pmu_probe *p);
/* Why hardware counters cannot be opened, from a failed probe, in one line.
 * papi_vendor: PAPI's virtual vendor string, when known; papi_soft: whether
 * PAPI can still count software events (its component is enabled). */
void ab_explain_pmu(const ab_pmu_probe *p, const char *papi_vendor, int papi_soft, char *out,
                    size_t len);

#endif /* AB_COUNTERS_IMPL_H */
