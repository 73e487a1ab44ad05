/*
 * counters_papi.c — the events counted through PAPI: presets (PAPI_TOT_CYC)
 * and native names, every event but the kernel's software events named
 * without qualifiers (counters_perf.c). Each event is tried alone first; the
 * countable ones are packed into as few event sets as the hardware allows,
 * one pass each, never multiplexed. Without PAPI (built without
 * ATTN_HAVE_PAPI) the same entry points refuse every such event as not
 * built in.
 *
 * Threading: PAPI is initialised once per process (pthread_once). With
 * PAPI's perf_event component the kernel counters are opened when events
 * are added, that is in ab_counters_open, for the thread calling it; start
 * and stop only enable and disable them. So open, start and stop should be
 * called from the thread whose work is measured.
 */
#include "counters_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"
#include "text.h"

#ifdef ATTN_HAVE_PAPI
#include <papi.h>
#include <pthread.h>

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
static void papi_reason(ab_counters *c, int e, const char *step, int r, ab_pmu_probe *pmu,
                        int *pmu_done)
{
    switch (r) {
    case PAPI_ENOEVNT:
        if (!*pmu_done) {
            ab_probe_pmu(pmu);
            *pmu_done = 1;
        }
        if (pmu->err == ENOENT || pmu->err == EOPNOTSUPP || pmu->err == ENODEV)
            ab_counters_set_why(c, e, "event does not exist on this CPU: no hardware PMU is "
                                "exposed here (PAPI: %s)", papi_text(r));
        else
            ab_counters_set_why(c, e, "event does not exist on this CPU (PAPI: %s)", papi_text(r));
        break;
    case PAPI_EPERM:
        ab_counters_set_why(c, e, "not permitted, perf_event_paranoid=%d (PAPI: %s)",
                            ab_perf_event_paranoid(), papi_text(r));
        break;
    case PAPI_ECNFLCT:
    case PAPI_ECOUNT:
        ab_counters_set_why(c, e, "cannot be scheduled even alone (PAPI: %s)", papi_text(r));
        break;
    default:
        ab_counters_set_why(c, e, "%s failed: %s", step, papi_text(r));
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
        ab_counters_set_why(c, e, "PAPI_create_eventset failed: %s", papi_text(r));
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
        ab_counters_set_why(c, e, "out of memory");
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
        ab_counters_set_why(c, e, "PAPI_add_event failed in a new set: %s", papi_text(r));
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

void ab_papi_open(ab_counters *c)
{
    int wanted = 0;
    for (int e = 0; e < c->n; e++)
        wanted += !c->ev[e].direct;
    if (wanted == 0)
        return;  /* software events only: PAPI need not even be initialised */
    if (!papi_ready()) {
        for (int e = 0; e < c->n; e++)
            if (!c->ev[e].direct)
                ab_counters_set_why(c, e, "%s", papi_init_error);
        return;
    }

    ab_pmu_probe pmu;
    int pmu_done = 0;
    char *ok = calloc((size_t)(c->n > 0 ? c->n : 1), 1);
    if (!ok) {
        for (int e = 0; e < c->n; e++)
            ab_counters_set_why(c, e, "out of memory");
        return;
    }

    /* 1. Each event alone: what fails here is unavailable, with a reason. */
    for (int e = 0; e < c->n; e++) {
        ab_event *ev = &c->ev[e];
        if (ev->direct)
            continue;
        if (!ev->name[0]) {
            ab_counters_set_why(c, e, "empty event name");
            continue;
        }
        /* A software event reaches PAPI only with libpfm4 qualifiers. PAPI
         * counts in user mode by default, and PAPI 7's perf_event component
         * refuses PAPI_DOM_ALL on a set (it checks with a hardware event,
         * absent without a PMU), so an event that only occurs in the
         * kernel counts only when its qualifiers ask for kernel mode. */
        const char *quals;
        const char *what = ab_perf_kernel_only(ab_perf_software_event(ev->name, &quals));
        if (what && !quals_ask_kernel(quals)) {
            ab_counters_set_why(c, e, "%s happen in the kernel, and PAPI counts this name in "
                                "user mode only, so it would read 0: add :k=1, or drop the "
                                "qualifiers", what);
            continue;
        }
        int code = PAPI_NULL;
        int r = PAPI_event_name_to_code(ev->name, &code);
        if (r == PAPI_ENOEVNT || r == PAPI_ENOSUPP) {
            /* PAPI 7 answers PAPI_ENOSUPP for names no component knows. */
            ab_counters_set_why(c, e, "unknown event: no PAPI preset or native event of an enabled "
                                "component has this name");
            continue;
        }
        if (r != PAPI_OK) {
            ab_counters_set_why(c, e, "PAPI_event_name_to_code failed: %s", papi_text(r));
            continue;
        }
        int cidx = PAPI_get_event_component(code);
        if (cidx < 0) {
            ab_counters_set_why(c, e, "PAPI_get_event_component failed: %s", papi_text(cidx));
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

void ab_papi_close(ab_counters *c)
{
    for (int p = 0; p < c->npass; p++)
        if (c->pass[p].papi)
            papi_free_set(&c->pass[p].set);  /* stops a running set first */
    c->running = -1;
}

int ab_papi_start(ab_counters *c, int pass)
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

int ab_papi_stop(ab_counters *c, int pass, long long *values)
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
void ab_papi_describe(const ab_counters *probe, char *summary, size_t summary_len,
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
     * (the probe list, PROBE_NAMES in counters_diagnosis.c, starts with
     * PAPI_TOT_CYC, PAPI_TOT_INS). */
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
    ab_pmu_probe pmu;
    ab_probe_pmu(&pmu);
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
            ab_explain_pmu(&pmu, papi_vendor, 0, cause, sizeof cause);
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
        ab_explain_pmu(&pmu, papi_vendor, 1, diagnosis, diag_len);
}

#else /* no PAPI */

static const char NOT_BUILT_IN[] = "PAPI not built in (libpapi-dev was not found at build time)";

void ab_papi_open(ab_counters *c)
{
    for (int e = 0; e < c->n; e++)
        if (!c->ev[e].direct)
            ab_counters_set_why(c, e, "%s", NOT_BUILT_IN);
}

void ab_papi_close(ab_counters *c)
{
    (void)c;
}

/* The only pass is the direct events': nothing for PAPI to do. */
int ab_papi_start(ab_counters *c, int pass)
{
    (void)c;
    (void)pass;
    return 0;
}

int ab_papi_stop(ab_counters *c, int pass, long long *values)
{
    (void)c;
    (void)pass;
    (void)values;
    return 0;
}

void ab_papi_describe(const ab_counters *probe, char *summary, size_t summary_len,
                      char *diagnosis, size_t diag_len)
{
    (void)probe;
    ab_putf(summary, summary_len, "PAPI not built in");
    ab_putf(diagnosis, diag_len, "%s", NOT_BUILT_IN);
    /* Whether installing PAPI would bring hardware counters is worth
     * knowing: say so when the kernel has none to offer either. */
    ab_pmu_probe pmu;
    ab_probe_pmu(&pmu);
    if (pmu.err != 0) {
        char why[WHY_LEN * 2];
        ab_explain_pmu(&pmu, NULL, 1, why, sizeof why);
        ab_appendf(diagnosis, diag_len, "; besides, %s", why);
    }
}

#endif /* ATTN_HAVE_PAPI */
