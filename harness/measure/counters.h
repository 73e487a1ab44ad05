/*
 * counters.h — hardware and software event counters through PAPI.
 *
 * Any PAPI preset (PAPI_TOT_CYC) or native event name (perf::TASK-CLOCK) can
 * be asked for. Each event is tried on its own first: one that cannot be
 * counted is kept with the reason and skipped, and the run goes on. The
 * events that can be counted are packed into as few event sets as the
 * hardware allows, and each set is measured in its own pass — never
 * multiplexed silently. Without PAPI (built without ATTN_HAVE_PAPI) every
 * event but the kernel's software events is unavailable with the reason
 * "PAPI not built in".
 *
 * The kernel's software events (perf::TASK-CLOCK, perf::PAGE-FAULTS,
 * perf::CONTEXT-SWITCHES... by any of libpfm4's names for them, without
 * qualifiers) are always opened directly with perf_event_open, whether PAPI
 * could count them or not, because that way they count every thread of the
 * process: at each start the threads are listed (/proc/self/task) and each
 * has its own counter, and threads created while counting are counted too
 * (inherit). This is what an OpenMP team needs: its threads exist before
 * counting starts. They count kernel mode where the system allows it (root,
 * CAP_PERFMON, or perf_event_paranoid <= 1); where it allows user space only,
 * the events that only occur in the kernel (context switches, CPU
 * migrations) are unavailable, since they would read 0, and page faults
 * count the faults taken in user mode only.
 *
 * Events counted through PAPI cover the thread that called ab_counters_open
 * (start and stop must be called from it too) and, where the component
 * allows PAPI_INHERIT, the threads it creates afterwards — not a pool that
 * already exists. ab_counters_scope says, for each event, what its counts
 * cover.
 */
#ifndef AB_COUNTERS_H
#define AB_COUNTERS_H

#include <stddef.h>

typedef struct ab_counters ab_counters;

/* Prepares counting of the n named events. Returns NULL only when out of
 * memory; events that cannot be counted are recorded, not fatal. */
ab_counters *ab_counters_open(const char *const *names, int n);
void ab_counters_close(ab_counters *c);

/* All events asked for, in the order given. */
int ab_counters_count(const ab_counters *c);
const char *ab_counters_name(const ab_counters *c, int event);
/* NULL when the event can be counted, else why not (one line, static or
 * owned by c). */
const char *ab_counters_unavailable(const ab_counters *c, int event);

/* How an available event is counted: "perf_event_open" for the kernel's
 * software events, which are always opened directly (see above), or "PAPI";
 * NULL when unavailable. */
const char *ab_counters_via(const ab_counters *c, int event);

/* What the counts of an available event cover, as one of these fixed
 * phrases (NULL when the event is unavailable):
 *  - AB_SCOPE_ALL "all threads": every thread of the process, those that
 *    existed when counting started (an OpenMP team) and those created while
 *    counting, idle ones and the caller's own included, as in the process's
 *    CPU time; the kernel's software events.
 *  - AB_SCOPE_ALL_USER "all threads, user mode only": the same, for page
 *    faults where the system allows user-space counting only (the faults
 *    taken in the kernel, e.g. by read() filling a fresh buffer, are missed).
 *  - AB_SCOPE_CREATED "calling thread and threads it creates": the thread
 *    that called ab_counters_open and the threads it (or they) create after
 *    that; PAPI events where PAPI_INHERIT works, and software events when
 *    /proc/self/task cannot be read.
 *  - AB_SCOPE_CREATED_USER: the same, user mode only (page faults).
 *  - AB_SCOPE_CALLER "calling thread": the thread that called
 *    ab_counters_open only; PAPI events where PAPI_INHERIT is refused (PAPI 7
 *    on a machine without a PMU).
 * PAPI events count in PAPI's domain, user mode by default, unless the
 * name's qualifiers (:k=1) say otherwise. */
#define AB_SCOPE_ALL "all threads"
#define AB_SCOPE_ALL_USER "all threads, user mode only"
#define AB_SCOPE_CREATED "calling thread and threads it creates"
#define AB_SCOPE_CREATED_USER "calling thread and threads it creates, user mode only"
#define AB_SCOPE_CALLER "calling thread"
const char *ab_counters_scope(const ab_counters *c, int event);

/* Number of passes needed to count every available event (0 when none is). */
int ab_counters_passes(const ab_counters *c);
/* 1 when the event is counted in the given pass. */
int ab_counters_in_pass(const ab_counters *c, int event, int pass);

/* Start / stop counting the events of one pass around the measured code.
 * ab_counters_stop stores, for each event of the pass, the count since
 * start into values[event] (indexed like ab_counters_name; other entries
 * untouched): values holds ab_counters_count(c) entries. Both return 0 on
 * success, -1 on failure (reason from ab_counters_error). Starting a pass
 * with software events lists the threads of the process and opens their
 * counters (kept open for the next start), so it costs a few microseconds
 * per thread and event, before counting begins, and holds one descriptor
 * per thread and software event (a start fails with EMFILE beyond the
 * process's limit). */
int ab_counters_start(ab_counters *c, int pass);
int ab_counters_stop(ab_counters *c, int pass, long long *values);
const char *ab_counters_error(const ab_counters *c);

/* ---- For `attnbench info` ---------------------------------------------------- */

typedef struct ab_counter_probe {
    const char *name;     /* event name */
    int available;        /* 1 when it can be counted here */
    const char *via;      /* then how (ab_counters_via) */
    const char *scope;    /* and what the counts cover (ab_counters_scope) */
    char why[160];        /* when not: the reason */
} ab_counter_probe;

/* Describes what PAPI offers on this machine:
 *  - summary: one line, e.g. "PAPI 7.0.0.0, perf_event component enabled,
 *    6 hardware counters, software events count every thread, PAPI events
 *    count the calling thread only (...)" or "PAPI not built in, software
 *    events count every thread": what the counts cover ends it;
 *  - diagnosis: when no hardware event can be counted, why, in one or two
 *    lines: no PMU exposed (virtual machine, with the hypervisor vendor when
 *    known), perf_event_paranoid too high (with its value), the perf_event
 *    component disabled (with PAPI's reason), or PAPI not built in. Empty
 *    string when hardware events work.
 *  - probes: the availability of a fixed list of useful events (the presets
 *    PAPI_TOT_CYC, PAPI_TOT_INS, PAPI_FP_OPS, PAPI_SP_OPS, PAPI_VEC_SP,
 *    PAPI_L1_DCM, PAPI_L2_DCM, PAPI_L3_TCM and the software events
 *    perf::TASK-CLOCK, perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES,
 *    perf::CPU-MIGRATIONS), with the scope of those available, at most max
 *    entries; returns how many. */
int ab_counters_describe(char *summary, size_t summary_len, char *diagnosis, size_t diag_len,
                         ab_counter_probe *probes, int max);

#endif /* AB_COUNTERS_H */
