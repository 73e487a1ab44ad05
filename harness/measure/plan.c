/* plan.c — the common plan of run and tune (plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* "4" or "1,2" → counts[]; -1 with err when a count is not 1..4096. */
static int parse_threads(const char *text, int *counts, int max, char *err, size_t len)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        char *end;
        long v = ab_strtol_digits(p, &end);
        if (end == p || v < 1 || v > 4096 || (*end && *end != ',')) {
            snprintf(err, len, "--threads: '%s' is not a count (1..4096) or a list of them", text);
            return -1;
        }
        if (n == max) {
            snprintf(err, len, "--threads: more than %d counts", max);
            return -1;
        }
        for (int i = 0; i < n; i++)
            if (counts[i] == v) {   /* one benchmark name, timed twice */
                snprintf(err, len, "--threads: %ld given twice", v);
                return -1;
            }
        counts[n++] = (int)v;
        if (!*end)
            return n;
        p = end + 1;
    }
}

int ab_plan_make(ab_plan *p, const char *suite, const char *shape_text, ab_op op, int filter_op,
                 const char *threads_text, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    p->ns = ab_shapes_select(suite, shape_text, op, filter_op, p->shapes, AB_PLAN_MAX_SHAPES,
                             p->suite_times, err, len);
    if (p->ns < 0)
        return -1;
    /* The same shape twice (however spelt) would be one benchmark name
     * timed twice, its results merged under it (list and explain, which
     * time nothing, take any list). */
    for (int a = 0; a < p->ns; a++) {
        char label[160], other[160];
        ab_shape_label(&p->shapes[a], label, sizeof label);
        for (int b = 0; b < a; b++) {
            ab_shape_label(&p->shapes[b], other, sizeof other);
            if (p->shapes[a].op == p->shapes[b].op && strcmp(label, other) == 0) {
                snprintf(err, len, "--shape: %s %s given twice", ab_op_name(p->shapes[a].op),
                         label);
                return -1;
            }
        }
    }
    ab_machine_load(&p->machine);
    p->have_topology = ab_topology_load(&p->topo, p->topology_error,
                                        sizeof p->topology_error) == 0;
    if (!p->have_topology) {
        memset(&p->topo, 0, sizeof p->topo);
        p->topo.cores = p->topo.pus = 1;
    }
    p->nt = 1;
    p->thread_counts[0] = p->topo.cores > 0 ? p->topo.cores : 1;
    if (threads_text) {
        p->nt = parse_threads(threads_text, p->thread_counts, AB_PLAN_MAX_THREADS, err, len);
        if (p->nt < 0)
            return -1;
    }
    for (int i = 0; i < p->nt; i++) {
        if (p->have_topology && p->thread_counts[i] > p->topo.cores) {
            snprintf(err, len, "--threads %d: this process may use %d cores", p->thread_counts[i],
                     p->topo.cores);
            return -1;
        }
        if (p->thread_counts[i] > p->max_threads)
            p->max_threads = p->thread_counts[i];
    }
    return 0;
}
