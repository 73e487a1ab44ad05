/*
 * plan.h — what `attnbench run` and `attnbench tune` are to do, from the
 * flags they share: the shapes (--shape, or a suite filtered by --op), the
 * thread counts (--threads N or N1,N2,...; by default every core this
 * process may use) and the machine they run on (its identity and
 * topology). One plan, so that the two commands agree: a bucket tuned for
 * N threads is the bucket `run --kernel auto` looks up at its default N.
 */
#ifndef AB_PLAN_H
#define AB_PLAN_H

#include <stddef.h>

#include "machine.h"
#include "suites.h"
#include "topology.h"

#define AB_PLAN_MAX_SHAPES 128
#define AB_PLAN_MAX_THREADS 16

typedef struct ab_plan {
    ab_shape shapes[AB_PLAN_MAX_SHAPES];
    int ns;
    double suite_times[2];         /* the suite's min_time and max_time (0: none) */
    int thread_counts[AB_PLAN_MAX_THREADS];
    int nt;
    int max_threads;               /* the largest of the counts */
    ab_machine machine;
    ab_topology topo;
    /* 0: the topology could not be loaded (why in topology_error): one core
     * is assumed and nothing can be pinned. */
    int have_topology;
    char topology_error[256];
} ab_plan;

/* Fills p: the shapes of shape_text or else of the suite named (NULL: the
 * default suite; only those of op when filter_op), the machine, then the
 * thread counts of threads_text (NULL: the topology's cores), each at most
 * the cores this process may use. 0, or -1 with a usage error in err. */
int ab_plan_make(ab_plan *p, const char *suite, const char *shape_text, ab_op op, int filter_op,
                 const char *threads_text, char *err, size_t len);

#endif /* AB_PLAN_H */
