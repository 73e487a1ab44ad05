/*
 * fuzz_cli.c — libFuzzer target: the command line of attnbench.
 *
 * The input is an argument vector (arguments separated by NUL bytes). It
 * goes through the flag parser with a table of every flag kind
 * (harness/cli/cli.c), the --shape parser (harness/measure/suites.c), the --kernel
 * selection (harness/measure/select.c) and `attnbench list` and `compare` (which
 * only parse and read files: compare may name fuzz-a.json and fuzz-b.json,
 * written at the first call, so that it reaches its statistics). Commands
 * that benchmark are left out: their cost grows with the sizes asked for.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "select.h"
#include "suites.h"

enum { MAX_ARGS = 16 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Two small results files in the working directory, 9 repetitions each. */
static void write_inputs(void)
{
    static int written;
    for (int f = 0; !written && f < 2; f++) {
        FILE *out = fopen(f ? "fuzz-b.json" : "fuzz-a.json", "w");
        if (!out)
            return;
        fputs("{\"context\": {}, \"benchmarks\": [", out);
        for (int r = 0; r < 9; r++)
            fprintf(out, "%s{\"name\": \"x\", \"run_name\": \"x\", \"run_type\": \"iteration\", "
                    "\"real_time\": %d, \"time_unit\": \"ms\"}", r ? ", " : "", 10 + r + 3 * f);
        fputs("]}\n", out);
        fclose(out);
    }
    written = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    write_inputs();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *argv[MAX_ARGS + 1];
    int argc = 0;
    for (size_t i = 0; i <= size && argc < MAX_ARGS;) {
        argv[argc++] = text + i;
        i += strlen(text + i) + 1;
    }
    argv[argc] = NULL;

    int threads = 0, quiet = 0;
    double min_time = 0.0;
    const char *name = NULL, *pos[4];
    const ab_flag flags[] = {
        { "threads", AB_FLAG_INT, &threads, "N", "", 1, 64 },
        { "min-time", AB_FLAG_DOUBLE, &min_time, "S", "", 0, 100 },
        { "name", AB_FLAG_STRING, &name, "X", "", 0, 0 },
        { "quiet", AB_FLAG_BOOL, &quiet, NULL, "", 0, 0 },
    };
    int n_pos = 0;
    char err[512];
    ab_cli_parse(argc, argv, flags, 4, pos, 4, &n_pos, err, sizeof err);

    for (int i = 0; i < argc; i++) {
        ab_shape s;
        ab_shape_parse(argv[i], AB_OP_SDPA, &s, err, sizeof err);
        const attn_kernel *k[64];
        ab_select_kernels(argv[i], NULL, k, 64, err, sizeof err);
    }
    if (argc > 0 && strcmp(argv[0], "list") == 0)
        ab_cmd_list(argc - 1, argv + 1);
    if (argc > 0 && strcmp(argv[0], "compare") == 0 && argc <= 6) {
        /* Only files under the fuzzer's own names: never /dev/zero and the like. */
        int ok = 1;
        for (int i = 1; i < argc; i++)
            ok &= argv[i][0] == '-' || strncmp(argv[i], "fuzz-", 5) == 0;
        if (ok)
            ab_cmd_compare(argc - 1, argv + 1);
    }
    free(text);
    return 0;
}
