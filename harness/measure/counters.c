/*
 * counters.c — the ab_counters front: the events asked for, their passes and
 * reasons, and the dispatch of each event to one of two back ends. The
 * kernel's software events named without qualifiers are opened directly
 * with perf_event_open, one counter per thread of the process
 * (counters_perf.c), because PAPI does not count a thread pool that exists
 * before counting starts; every other event goes through PAPI
 * (counters_papi.c), or is refused where PAPI is not built in. Why hardware
 * events are missing, and what `attnbench info` says of counting, is
 * counters_diagnosis.c's.
 *
 * Library rules followed here: nothing is printed, nothing aborts, every
 * buffer is bounded, and everything allocated or created (PAPI event sets
 * included) is released by ab_counters_close.
 *
 * Threading: an ab_counters object is not itself thread-safe. Open, start
 * and stop should be called from the thread whose work is measured, as the
 * PAPI back end requires; the directly opened software events count every
 * thread whichever thread starts them.
 */
#include "counters_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

void ab_counters_set_why(ab_counters *c, int e, const char *fmt, ...)
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

static void free_counters(ab_counters *c)
{
    ab_perf_close(c);
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
        c->ev[e].sw = ab_perf_software_event(c->ev[e].name, &quals);
        c->ev[e].direct = c->ev[e].sw >= 0 && quals[0] == '\0';
    }
    ab_papi_open(c);
    ab_perf_open(c);
    return c;
}

void ab_counters_close(ab_counters *c)
{
    if (!c)
        return;
    ab_papi_close(c);
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
    return ab_perf_scope(c, event);
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
    if (ab_perf_start(c, pass) != 0)
        return -1;
    if (ab_papi_start(c, pass) != 0) {
        (void)ab_perf_stop(c, pass, NULL);
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
    int papi = ab_papi_stop(c, pass, values);
    char papi_err[ERR_LEN];
    ab_putf(papi_err, sizeof papi_err, "%s", c->err);
    int direct = ab_perf_stop(c, pass, values);
    if (papi != 0)  /* the first failure is the one to report */
        ab_putf(c->err, sizeof c->err, "%s", papi_err);
    return papi != 0 || direct != 0 ? -1 : 0;
}

const char *ab_counters_error(const ab_counters *c)
{
    return c ? c->err : "no counters";
}

