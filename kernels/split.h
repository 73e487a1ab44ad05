/*
 * split.h — how a parallel region deals its units of work out to threads,
 * and the trace that lets `attnbench explain` show it.
 *
 * Every parallel region of the kernels that describe their split (a row's
 * `explains`) computes each thread's share with the functions here, and
 * first offers the region to the call's trace (attn_exec.trace): when a
 * trace is set the call is a dry run, in which each region records, for
 * every thread of ex->n_threads, how many units it gets (from the same
 * partition code the region runs with), and then does no work. So the
 * split a 64-core machine will run can be read on a 2-core one.
 *
 * Dynamic regions (schedule(dynamic, 1): attention tiles, decode splits,
 * whose cost differs under a causal mask) have no fixed share; they are
 * recorded as equal-cost units would be dealt, the static split below.
 */
#ifndef ATTN_SPLIT_H
#define ATTN_SPLIT_H

#include <stddef.h>

#include "attn.h"

/* Units [*lo, *hi) of n that thread t of nt gets: contiguous blocks whose
 * sizes differ by at most one, the larger ones last. */
static inline void attn_split_static(long n, int nt, int t, long *lo, long *hi)
{
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}

/* Work that is `items` items (heads) of `parts` parts each (query rows in
 * groups of a register tile's), each item cut into `chunks` runs of parts
 * (attn_split_static): task t is item t / chunks, run t % chunks. */
typedef struct attn_chunked {
    long items, parts;
    int chunks, nt;
} attn_chunked;

/* Parts [*lo, *hi) of task t's item. */
static inline void attn_chunk_parts(const attn_chunked *c, long t, long *lo, long *hi)
{
    attn_split_static(c->parts, c->chunks, (int)(t % c->chunks), lo, hi);
}

/* Task number i of a dynamic schedule over items × chunks tasks (task t =
 * item · chunks + chunk), when a later chunk costs more (a causal mask:
 * later query rows see more keys): every item's last chunk first, then the
 * ones before, so that the longest tasks are not the last handed out. A
 * model of 16-64 threads on causal SDPA at H 12, L 2048 put the imbalance
 * of the first-to-last order at 1.33-1.42, and 1.04-1.11 in this one. */
static inline long attn_task_longest_first(long i, long items, int chunks)
{
    return i % items * chunks + (chunks - 1 - i / items);
}

/* The parts thread t gets when the tasks are dealt out as attn_split_static
 * deals them (a dynamic schedule deals equal tasks about so). */
static inline long attn_chunked_share(const void *plan, int t)
{
    const attn_chunked *c = plan;
    long lo, hi, parts = 0;
    attn_split_static(c->items * c->chunks, c->nt, t, &lo, &hi);
    for (long task = lo; task < hi; task++) {
        long p0, p1;
        attn_chunk_parts(c, task, &p0, &p1);
        parts += p1 - p0;
    }
    return parts;
}

/* The chunks per item for nt threads: from about 2 tasks per thread up
 * (each chunk repacks its head's keys and values), the fewest whose parts
 * deal out within 10%, else the most balanced up to 4 times as many. 12
 * heads of 43 row groups (L 512) on 64 threads in 11 chunks were 132
 * tasks, 3 for some threads and 2 for others (1.45); in 16, each thread
 * gets 8 or 9 groups (1.12). */
static inline attn_chunked attn_split_chunks(long items, long parts, int nt)
{
    nt = nt > 0 ? nt : 1;
    attn_chunked best = { items, parts, 1, nt };
    if (items <= 0 || parts <= 1 || nt == 1)
        return best;
    long first = (2L * nt + items - 1) / items;
    first = first < parts ? first : parts;
    double best_im = 1e300;
    for (long c = first; c <= parts && c <= 4 * first; c++) {
        attn_chunked at = { items, parts, (int)c, nt };
        long most = 0;
        for (int t = 0; t < nt; t++) {
            long u = attn_chunked_share(&at, t);
            most = u > most ? u : most;
        }
        double im = (double)most * nt / ((double)items * (double)parts);
        if (im < best_im - 1e-9)
            best_im = im, best = at;
        if (im <= 1.1)
            break;
    }
    return best;
}

/* One parallel region of a traced call. */
typedef struct attn_region {
    char name[128];         /* what runs: "gemm 512x2304x768", "attention" ... */
    char unit[96];          /* what one unit of work is */
    int n_threads;
    long *units_per_thread; /* n_threads of them */
    /* 1: a phase of the region recorded before it, which runs after a
     * barrier in the same team (no fork and join of its own). */
    int after_barrier;
    double offered_s;       /* a measured trace's: when it was offered (monotonic s) */
} attn_region;

/* The regions of one traced call, in the order they ran. */
typedef struct attn_trace {
    attn_region *regions;
    int n, cap;
    int failed;             /* 1: out of memory; regions may be missing */
    int next_after;         /* attn_trace_next_after: the next one is a phase */
    /* Set by the caller (attn_trace_clear keeps it). 0: every call is a
     * dry run. 1: the calls run, and each region records when it was
     * offered, just before its fork, so the time from one region's offer
     * to the next's is that region with the serial work after it. */
    int measure;
} attn_trace;

struct attn_exec;

/* Offers a region to ex's trace: with none, returns 0 (run the region).
 * With one, records it — thread t's units are share(plan, t) for t in
 * [0, ex->n_threads) — and returns 1: the caller skips the work; 0 with a
 * measured trace (the region runs). A region offers itself right before
 * its fork, not together with later ones, so that a measured trace times
 * it. name and unit are printf formats. */
int attn_trace_region(const struct attn_exec *ex, long (*share)(const void *plan, int t),
                      const void *plan, const char *unit, const char *name, ...)
    __attribute__((format(printf, 5, 6)));

/* attn_trace_region for a region of n units split by attn_split_static. */
int attn_trace_units(const struct attn_exec *ex, long n, const char *unit, const char *name, ...)
    __attribute__((format(printf, 4, 5)));

/* The next region ex's trace records, however offered, is a phase of the
 * one before it: its threads go on to it after a barrier, in the same team
 * (no-op without a trace). */
void attn_trace_next_after(const struct attn_exec *ex);

/* 1 when ex's calls are dry runs (a trace that does not measure): no
 * values are computed, so none can be checked. */
int attn_exec_dry(const struct attn_exec *ex);

/* The largest share over the mean (1 when every thread gets as many;
 * n_threads when one gets all); 0 for a region with no units. */
double attn_region_imbalance(const attn_region *r);
long attn_region_units(const attn_region *r);

/* A context whose every call is recorded into trace, with the kernel (a
 * row name, "auto", ...) at n_threads (> 0): a dry run at any count (no
 * thread team is started), or, when trace->measure is set, the call itself
 * on a team of n_threads. A call whose kernel does not describe its split (the
 * row's `explains`) fails with ATTN_ERR_UNSUPPORTED; attn_ctx_last_choice
 * names it. Destroy with attn_ctx_destroy; the trace stays the caller's. */
attn_status attn_ctx_create_traced(attn_ctx **ctx, const char *kernel, int n_threads,
                                   attn_trace *trace);

/* Frees what the trace recorded and empties it (the struct stays). */
void attn_trace_clear(attn_trace *t);

#endif /* ATTN_SPLIT_H */
