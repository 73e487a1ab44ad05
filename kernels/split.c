/*
 * split.c — the trace of a call's parallel regions, dry or measured (split.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kernel.h"
#include "split.h"

typedef struct units_plan {
    long n;
    int nt;
} units_plan;

static long units_share(const void *plan, int t)
{
    const units_plan *u = plan;
    long lo, hi;
    attn_split_static(u->n, u->nt, t, &lo, &hi);
    return hi - lo;
}

static int trace_vregion(const attn_exec *ex, long (*share)(const void *, int), const void *plan,
                         const char *unit, const char *name, va_list ap)
{
    attn_trace *tr = ex->trace;
    if (!tr)
        return 0;
    const int skip = !tr->measure;   /* a measured call runs the region */
    const int after_barrier = tr->next_after;   /* attn_trace_next_after: for this one only */
    tr->next_after = 0;
    if (tr->n == tr->cap) {
        int cap = tr->cap ? 2 * tr->cap : 16;
        attn_region *grown = realloc(tr->regions, (size_t)cap * sizeof *grown);
        if (!grown) {
            tr->failed = 1;
            return skip;
        }
        tr->regions = grown;
        tr->cap = cap;
    }
    int nt = ex->n_threads > 0 ? ex->n_threads : 1;
    long *units = malloc((size_t)nt * sizeof *units);
    if (!units) {
        tr->failed = 1;
        return skip;
    }
    for (int t = 0; t < nt; t++)
        units[t] = share(plan, t);
    attn_region *r = &tr->regions[tr->n++];
    vsnprintf(r->name, sizeof r->name, name, ap);
    snprintf(r->unit, sizeof r->unit, "%s", unit);
    r->n_threads = nt;
    r->units_per_thread = units;
    r->after_barrier = after_barrier;
    struct timespec now;   /* last: the bookkeeping above is not the region's */
    clock_gettime(CLOCK_MONOTONIC, &now);
    r->offered_s = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
    return skip;
}

int attn_trace_region(const attn_exec *ex, long (*share)(const void *plan, int t),
                      const void *plan, const char *unit, const char *name, ...)
{
    va_list ap;
    va_start(ap, name);
    int traced = trace_vregion(ex, share, plan, unit, name, ap);
    va_end(ap);
    return traced;
}

int attn_trace_units(const attn_exec *ex, long n, const char *unit, const char *name, ...)
{
    units_plan plan = { n, ex->n_threads > 0 ? ex->n_threads : 1 };
    va_list ap;
    va_start(ap, name);
    int traced = trace_vregion(ex, units_share, &plan, unit, name, ap);
    va_end(ap);
    return traced;
}

void attn_trace_next_after(const attn_exec *ex)
{
    if (ex->trace)
        ex->trace->next_after = 1;
}

int attn_exec_dry(const attn_exec *ex)
{
    return ex->trace && !ex->trace->measure;
}

int attn_exec_scratch_threads(const attn_exec *ex)
{
    return attn_exec_dry(ex) ? 1 : ex->n_threads;
}

long attn_region_units(const attn_region *r)
{
    long sum = 0;
    for (int t = 0; t < r->n_threads; t++)
        sum += r->units_per_thread[t];
    return sum;
}

double attn_region_imbalance(const attn_region *r)
{
    long sum = attn_region_units(r), most = 0;
    for (int t = 0; t < r->n_threads; t++)
        most = r->units_per_thread[t] > most ? r->units_per_thread[t] : most;
    return sum > 0 ? (double)most * r->n_threads / (double)sum : 0.0;
}

void attn_trace_clear(attn_trace *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->regions[i].units_per_thread);
    free(t->regions);
    t->regions = NULL;
    t->n = t->cap = 0;
    t->failed = 0;
    t->next_after = 0;
}
