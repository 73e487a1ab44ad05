/* cmd_list.c — `attnbench list`: every kernel, whether it runs here and why not. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "select.h"
#include "suites.h"

int ab_cmd_list(int argc, char **argv)
{
    int suites = 0, n_pos;
    const ab_flag flags[] = {
        { "suites", AB_FLAG_BOOL, &suites, NULL, "also list the benchmark suites and their shapes", 0, 0 },
    };
    int rc = ab_cli_command("list", "attnbench list [--suites]",
                            "Lists every registered kernel, whether it can run on this machine,\n"
                            "and if not, what it is missing; and each kernel's tunable parameters\n"
                            "with their defaults on this machine (set from its cache sizes).", argc, argv, flags, 1, NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;

    printf("%-14s %-5s %s\n", "kernel", "runs", "description / why not");
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        char why[256];
        ab_kernel_why_not(k, why, sizeof why);
        printf("%-14s %-5s %s\n", k->name, why[0] ? "no" : "yes", why[0] ? why : k->description);
        /* The tunable parameters, with this machine's defaults (from its caches). */
        for (int p = 0; p < attn_kernel_param_count(k->name); p++) {
            attn_param_info info;
            if (attn_kernel_param_info(k->name, p, &info) == ATTN_OK)
                printf("%-14s %-5s   %s = %d  (%d..%d) %s\n", "", "", info.name,
                       info.default_value, info.min, info.max, info.help);
        }
    }
    if (suites) {
        for (int i = 0; i < ab_suite_count() + 1; i++) {
            const ab_suite *s = i < ab_suite_count() ? ab_suite_get(i) : ab_check_suite();
            printf("\nsuite %s: %s\n", s->name, s->description);
            for (int j = 0; j < s->n_shapes; j++) {
                char text[256];
                ab_shape_format(&s->shapes[j], text, sizeof text);
                printf("  %-70s %8.3g GFLOP\n", text, ab_shape_flops(&s->shapes[j]) / 1e9);
            }
        }
    }
    return AB_EXIT_OK;
}
