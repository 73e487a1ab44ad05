/* cmd_list.c — `attnbench list`: every kernel, whether it runs here and why
 * not; the suites' shapes, as text or as JSON for tools outside C. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"
#include "json.h"
#include "plan.h"
#include "select.h"
#include "suites.h"

static void list_kernels(void)
{
    /* math: what the row's products run in (api.md §9.3); "auto" runs only
     * fp32 rows, "auto-bf16" both. */
    printf("%-14s %-5s %-5s %s\n", "kernel", "runs", "math", "description / why not");
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *k = attn_registry_get(i);
        char why[256];
        ab_kernel_why_not(k, why, sizeof why);
        printf("%-14s %-5s %-5s %s\n", k->name, why[0] ? "no" : "yes",
               k->math == ATTN_BF16 ? "bf16" : "fp32", why[0] ? why : k->description);
        /* The tunable parameters, with this machine's defaults (from its caches). */
        for (int p = 0; p < attn_kernel_param_count(k->name); p++) {
            attn_param_info info;
            if (attn_kernel_param_info(k->name, p, &info) == ATTN_OK)
                printf("%-14s %-5s %-5s   %s = %d  (%d..%d) %s\n", "", "", "", info.name,
                       info.default_value, info.min, info.max, info.help);
        }
    }
}

/* The suites and the check suite, in that order. */
static const ab_suite *suite_at(int i)
{
    return i < ab_suite_count() ? ab_suite_get(i) : ab_check_suite();
}

static void list_suites(void)
{
    for (int i = 0; i < ab_suite_count() + 1; i++) {
        const ab_suite *s = suite_at(i);
        printf("\nsuite %s: %s\n", s->name, s->description);
        for (int j = 0; j < s->n_shapes; j++) {
            char text[256];
            ab_shape_format(&s->shapes[j], text, sizeof text);
            printf("  %-70s %8.3g GFLOP\n", text, ab_shape_flops(&s->shapes[j]) / 1e9);
        }
    }
}

/* ---- JSON (docs/json-format.md) ----------------------------------------------------------- */

static void json_ops(ab_json *j)
{
    ab_json_begin_array(j, "ops");
    for (int i = 0; i < AB_OP_COUNT; i++) {
        const ab_op_row *row = ab_op_row_of((ab_op)i);
        ab_json_begin_object(j, NULL);
        ab_json_string(j, "name", row->name);
        ab_json_string(j, "description", row->description);
        ab_json_begin_array(j, "keys");
        for (int k = 0; k < AB_KEY_COUNT; k++)
            if (ab_op_takes((ab_op)i, (ab_key)k))
                ab_json_string(j, NULL, ab_key_name((ab_key)k));
        ab_json_end_array(j);
        ab_json_begin_array(j, "masks");
        for (int m = 0; m < AB_MASK_COUNT; m++)
            if (row->masks >> m & 1u)
                ab_json_string(j, NULL, ab_mask_name((ab_mask_kind)m));
        ab_json_end_array(j);
        ab_json_end_object(j);
    }
    ab_json_end_array(j);
}

static void json_shape(ab_json *j, const ab_shape *s)
{
    char text[256], label[256];
    ab_key_value v[AB_KEY_COUNT];
    ab_shape_format(s, text, sizeof text);
    ab_shape_label(s, label, sizeof label);
    ab_json_begin_object(j, NULL);
    ab_json_string(j, "shape", text);
    ab_json_string(j, "label", label);
    ab_json_string(j, "op", ab_op_name(s->op));
    ab_json_begin_object(j, "keys");
    for (int i = 0, n = ab_shape_key_values(s, v); i < n; i++)
        if (v[i].text)
            ab_json_string(j, ab_key_name(v[i].key), v[i].text);
        else
            ab_json_number(j, ab_key_name(v[i].key), v[i].number);
    ab_json_end_object(j);
    ab_json_number(j, "flops", ab_shape_flops(s));
    ab_json_number(j, "bytes", ab_shape_bytes(s));
    ab_json_number(j, "pass_bytes", ab_shape_pass_bytes(s));
    ab_json_end_object(j);
}

/* {"ops": [...], "suites": [{name, description, shapes}]} with every
 * suite (only op's shapes when filter_op), or, when given is not NULL,
 * {"ops": [...], "shapes": [...]} with its n shapes. */
static void list_json(const ab_shape *given, int n, ab_op op, int filter_op)
{
    ab_json j;
    ab_json_init(&j, stdout);
    ab_json_begin_object(&j, NULL);
    json_ops(&j);
    if (given) {
        ab_json_begin_array(&j, "shapes");
        for (int i = 0; i < n; i++)
            json_shape(&j, &given[i]);
        ab_json_end_array(&j);
    } else {
        ab_json_begin_array(&j, "suites");
        for (int i = 0; i < ab_suite_count() + 1; i++) {
            const ab_suite *s = suite_at(i);
            ab_json_begin_object(&j, NULL);
            ab_json_string(&j, "name", s->name);
            ab_json_string(&j, "description", s->description);
            ab_json_begin_array(&j, "shapes");
            for (int k = 0; k < s->n_shapes; k++)
                if (!filter_op || s->shapes[k].op == op)
                    json_shape(&j, &s->shapes[k]);
            ab_json_end_array(&j);
            ab_json_end_object(&j);
        }
        ab_json_end_array(&j);
    }
    ab_json_end_object(&j);
    fputc('\n', stdout);
}

int ab_cmd_list(int argc, char **argv)
{
    int suites = 0, json = 0, n_pos;
    const char *shape_text = NULL, *op_name = NULL;
    char op_help[160];
    snprintf(op_help, sizeof op_help, "%s: filters the suites, default op of --shape",
             ab_op_list());
    const ab_flag flags[] = {
        { "suites", AB_FLAG_BOOL, &suites, NULL, "also list the benchmark suites and their shapes", 0, 0 },
        { "shape", AB_FLAG_STRING, &shape_text, "SHAPES", "with --json: these shapes (as `run --shape` reads them) instead of the suites", 0, 0 },
        { "op", AB_FLAG_STRING, &op_name, "OP", op_help, 0, 0 },
        { "json", AB_FLAG_BOOL, &json, NULL, "print the ops and the suites' shapes (or --shape's) as JSON, with each shape's keys, FLOPs and bytes, instead", 0, 0 },
    };
    int rc = ab_cli_command("list", "attnbench list [--suites] [--json [--shape SHAPES] [--op OP]]",
                            "Lists every registered kernel, whether it can run on this machine,\n"
                            "and if not, what it is missing; and each kernel's tunable parameters\n"
                            "with their defaults on this machine (set from its cache sizes).\n"
                            "With --json, only the ops (their keys and masks) and the suites'\n"
                            "shapes (or those of --shape): the canonical text, label, every key's\n"
                            "value, FLOPs and bytes, for tools that must agree with attnbench.",
                            argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0,
                            &n_pos);
    if (rc >= 0)
        return rc;
    ab_op op = AB_OP_SDPA;
    if (ab_cli_op("list", op_name, &op) != 0)
        return AB_EXIT_USAGE;
    if ((shape_text || op_name) && !json) {
        fprintf(stderr, "attnbench list: --shape and --op go with --json\n");
        return AB_EXIT_USAGE;
    }
    if (shape_text && suites) {
        fprintf(stderr, "attnbench list: give --suites or --shape, not both\n");
        return AB_EXIT_USAGE;
    }
    if (json) {
        ab_shape given[AB_PLAN_MAX_SHAPES];
        int n = 0;
        char err[512];
        if (shape_text && (n = ab_shapes_select(NULL, shape_text, op, 0, given, AB_PLAN_MAX_SHAPES,
                                                NULL, err, sizeof err)) < 0) {
            fprintf(stderr, "attnbench list: %s\n", err);
            return AB_EXIT_USAGE;
        }
        list_json(shape_text ? given : NULL, n, op, op_name != NULL);
        return fflush(stdout) == 0 && !ferror(stdout) ? AB_EXIT_OK : AB_EXIT_FAIL;
    }
    list_kernels();
    if (suites)
        list_suites();
    return AB_EXIT_OK;
}
