/*
 * counters.h — hardware and software event counters through PAPI.
 *
 * Any PAPI preset (PAPI_TOT_CYC) or native event name (perf::TASK-CLOCK) can
 * be asked for. Each event is tried on its own first: one that cannot be
 * counted is kept with the reason and skipped, and the run goes on. The
 * events that can be counted are packed into as few event sets as the
 * hardware allows, and each set is measured in its own pass — never
 * multiplexed silently. Without PAPI (built without ATTN_HAVE_PAPI) every
 * event is unavailable with the reason "PAPI not built in", but for the
 * kernel's software events (perf::TASK-CLOCK, perf::PAGE-FAULTS, ...), which
 * are then opened with perf_event_open directly, as they are when PAPI's
 * perf_event component is disabled.
 *
 * Counting covers the thread that called ab_counters_open (start and stop
 * must be called from it too) and, where the component allows PAPI_INHERIT,
 * threads it creates while counting; ab_counters_describe's summary says
 * which. Threads that already exist (a pool) are not counted.
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

/* How an available event is counted: "PAPI", or "perf_event_open" for a
 * kernel software event that PAPI cannot count here (its perf_event
 * component disabled, or PAPI not built in); NULL when unavailable. */
const char *ab_counters_via(const ab_counters *c, int event);

/* Number of passes needed to count every available event (0 when none is). */
int ab_counters_passes(const ab_counters *c);
/* 1 when the event is counted in the given pass. */
int ab_counters_in_pass(const ab_counters *c, int event, int pass);

/* Start / stop counting the events of one pass around the measured code.
 * ab_counters_stop stores, for each event of the pass, the count since
 * start into values[event] (indexed like ab_counters_name; other entries
 * untouched): values holds ab_counters_count(c) entries. Both return 0 on success, -1 on failure (reason from
 * ab_counters_error). */
int ab_counters_start(ab_counters *c, int pass);
int ab_counters_stop(ab_counters *c, int pass, long long *values);
const char *ab_counters_error(const ab_counters *c);

/* ---- For `attnbench info` ---------------------------------------------------- */

typedef struct ab_counter_probe {
    const char *name;     /* event name */
    int available;        /* 1 when it can be counted here */
    const char *via;      /* then how (ab_counters_via) */
    char why[160];        /* when not: the reason */
} ab_counter_probe;

/* Describes what PAPI offers on this machine:
 *  - summary: one line, e.g. "PAPI 7.0.0.0, perf_event component enabled,
 *    6 hardware counters" or "PAPI not built in";
 *  - diagnosis: when no hardware event can be counted, why, in one or two
 *    lines: no PMU exposed (virtual machine, with the hypervisor vendor when
 *    known), perf_event_paranoid too high (with its value), the perf_event
 *    component disabled (with PAPI's reason), or PAPI not built in. Empty
 *    string when hardware events work.
 *  - probes: the availability of a fixed list of useful events (the presets
 *    PAPI_TOT_CYC, PAPI_TOT_INS, PAPI_FP_OPS, PAPI_SP_OPS, PAPI_VEC_SP,
 *    PAPI_L1_DCM, PAPI_L2_DCM, PAPI_L3_TCM and the software events
 *    perf::TASK-CLOCK, perf::PAGE-FAULTS, perf::CONTEXT-SWITCHES,
 *    perf::CPU-MIGRATIONS), at most max entries; returns how many. */
int ab_counters_describe(char *summary, size_t summary_len, char *diagnosis, size_t diag_len,
                         ab_counter_probe *probes, int max);

#endif /* AB_COUNTERS_H */
