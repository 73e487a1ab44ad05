/* main.c — `attnbench COMMAND [options]`. */
#include <stdio.h>
#include <string.h>

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
};

static void usage(FILE *out)
{
    fprintf(out, "usage: attnbench COMMAND [options]   (attnbench COMMAND --help for its options)\n\n"
                 "attnbench %s: attention and encoder-layer kernels, checked and timed.\n\n"
                 "commands:\n", ATTN_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
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
    fprintf(stderr, "attnbench: unknown command '%s' (info, list, check, run; --help)\n", argv[1]);
    return AB_EXIT_USAGE;
}
