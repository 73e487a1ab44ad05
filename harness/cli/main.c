/* main.c — `attnbench COMMAND [options]`. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "attn.h"
#include "commands.h"
#include "topology.h"

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "info", ab_cmd_info, "CPU, ISA features (CPU has / OS enables), topology, measured peaks, counters" },
    { "list", ab_cmd_list, "every kernel, whether it runs here and why not; the suites" },
    { "check", ab_cmd_check, "every runnable kernel against the naive oracle on the check suite" },
    { "run", ab_cmd_run, "benchmark kernels on shapes or suites; table, JSON, CSV" },
    { "compare", ab_cmd_compare, "BASE.json NEW.json: each benchmark judged against run-to-run noise; exit 1 on a regression" },
    { "tune", ab_cmd_tune, "find and store the best kernel and parameters per bucket (wisdom)" },
    { "explain", ab_cmd_explain, "how one call of a shape shares its work among N threads (any N): regions, units, imbalance" },
    { "history", ab_cmd_history, "add results to the SQLite history; show series and their steps" },
};

static void usage(FILE *out)
{
    fprintf(out, "usage: attnbench COMMAND [options]   (attnbench COMMAND --help for its options)\n\n"
                 "attnbench %s: attention and encoder-layer kernels, checked and timed.\n\n"
                 "commands:\n", ATTN_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* The kernels' OpenMP threads are pinned by the OpenMP runtime, one per core
 * in the topology's order (thread i on core i, the calling thread on core 0,
 * which the harness pins too), but the runtime reads OMP_PROC_BIND and
 * OMP_PLACES only when the program starts. So when the user has not chosen,
 * choose and start again. If exec fails, carry on: threads then run
 * unpinned, and the run's context says so.
 *
 * A bound runtime pins this thread to its first place as it starts, before
 * main: every later look at this thread's mask (the topology, the cores a
 * run may use) would see one core. So this thread is given back the union
 * of the places, which are the CPUs it started with (a place list built
 * from the starting mask) or those the user's places name. */
static int widen_to_places(void)
{
    if (omp_get_proc_bind() == omp_proc_bind_false || omp_get_num_places() <= 0)
        return 0;
    /* Sized for any CPU number Linux allows (8192), not cpu_set_t's 1024. */
    const size_t ncpu = 8192, size = CPU_ALLOC_SIZE(ncpu);
    cpu_set_t *set = CPU_ALLOC(ncpu);
    int *ids = NULL, any = 0;
    if (set) {
        CPU_ZERO_S(size, set);
        for (int p = 0; p < omp_get_num_places(); p++) {
            int n = omp_get_place_num_procs(p);
            int *more = n > 0 ? realloc(ids, (size_t)n * sizeof *ids) : NULL;
            if (!more)
                continue;
            ids = more;
            omp_get_place_proc_ids(p, ids);
            for (int i = 0; i < n; i++)
                if (ids[i] >= 0 && (size_t)ids[i] < ncpu) {
                    CPU_SET_S((size_t)ids[i], size, set);
                    any = 1;
                }
        }
        if (any)
            sched_setaffinity(0, size, set);
    }
    free(ids);
    CPU_FREE(set);
    return 1;
}

static void pin_openmp_threads(char **argv)
{
    if (widen_to_places())
        return;
    /* The user's choice wins: any of these set means the user placed the
     * threads (GOMP_CPU_AFFINITY is libgomp's, and LLVM's runtime reads it
     * too; OMP_PLACES set below would override it, KMP_AFFINITY is LLVM's),
     * or chose not to (OMP_PROC_BIND=false). */
    if (getenv("OMP_PROC_BIND") || getenv("GOMP_CPU_AFFINITY") || getenv("KMP_AFFINITY"))
        return;
    /* The user's places, bound close; else one place per core in hwloc's
     * order (ab_omp_places: OMP_PLACES=cores is libgomp's CPU-number order,
     * which splits packages and L3s where the OS numbers them alternately),
     * else, without hwloc, the runtime's cores. */
    int own_places = !getenv("OMP_PLACES");
    if (own_places) {
        /* An environment string may be at most 128 KiB (MAX_ARG_STRLEN). */
        size_t len = 128 * 1024 - 16;
        char *places = malloc(len), why[160];
        if (places && ab_omp_places(places, len, why, sizeof why) > 0)
            setenv("OMP_PLACES", places, 1);
        else
            setenv("OMP_PLACES", "cores", 1);
        free(places);
    }
    setenv("OMP_PROC_BIND", "close", 1);
    execv("/proc/self/exe", argv);
    unsetenv("OMP_PROC_BIND");   /* exec failed: carry on as we are */
    if (own_places)
        unsetenv("OMP_PLACES");
}

int main(int argc, char **argv)
{
    pin_openmp_threads(argv);
    if (argc < 2) {
        usage(stderr);
        return AB_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return AB_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("attnbench %s\n", ATTN_VERSION_STRING);
        return AB_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    /* The names from the table, so the message cannot drift from it. */
    fprintf(stderr, "attnbench: unknown command '%s' (", argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", commands[i].name);
    fprintf(stderr, "; --help)\n");
    return AB_EXIT_USAGE;
}
