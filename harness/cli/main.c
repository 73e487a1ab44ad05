/* main.c — `attnbench COMMAND [options]`. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attn.h"
#include "commands.h"

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
 * in order (thread i on core i, the calling thread on core 0, which the
 * harness pins too), but the runtime reads OMP_PROC_BIND and OMP_PLACES only
 * when the program starts. So when the user has not chosen, choose and start
 * again. If exec fails, carry on: threads then run unpinned, and the run's
 * context says so. */
static void pin_openmp_threads(char **argv)
{
    cpu_set_t set;
    char list[64];
    const char *saved = getenv("ATTNBENCH_AFFINITY");
    if (saved) {
        /* Started again: the runtime bound this thread to its first place;
         * give it back the CPUs it started with (the harness binds it). */
        unsigned long long bits = strtoull(saved, NULL, 16);
        CPU_ZERO(&set);
        for (int cpu = 0; cpu < 64; cpu++)
            if (bits >> cpu & 1)
                CPU_SET(cpu, &set);
        sched_setaffinity(0, sizeof set, &set);
        unsetenv("ATTNBENCH_AFFINITY");
        return;
    }
    if (getenv("OMP_PROC_BIND") || sched_getaffinity(0, sizeof set, &set) != 0)
        return;
    unsigned long long bits = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        if (cpu >= 64)
            return;   /* more CPUs than this simple hand-over covers: stay unpinned */
        bits |= 1ull << cpu;
    }
    snprintf(list, sizeof list, "%llx", bits);
    setenv("ATTNBENCH_AFFINITY", list, 1);
    setenv("OMP_PROC_BIND", "close", 1);
    if (!getenv("OMP_PLACES"))
        setenv("OMP_PLACES", "cores", 1);
    execv("/proc/self/exe", argv);
    unsetenv("ATTNBENCH_AFFINITY");   /* exec failed: carry on as we are */
    unsetenv("OMP_PROC_BIND");
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
