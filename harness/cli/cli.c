/* cli.c — command-line flags for the attnbench subcommands. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const ab_flag *find_flag(const ab_flag *flags, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0)
            return &flags[i];
    return NULL;
}

static int set_value(const ab_flag *f, const char *text, char *err, size_t err_len)
{
    char *end;
    errno = 0;
    switch (f->kind) {
    case AB_FLAG_INT: {
        long v = ab_strtol_digits(text, &end);
        if (end == text || *end != '\0' || errno == ERANGE || v < f->min || v > f->max) {
            snprintf(err, err_len, "--%s: '%s' is not an integer in [%.0f, %.0f]", f->name, text,
                     f->min, f->max);
            return -1;
        }
        *(int *)f->dest = (int)v;
        return 0;
    }
    case AB_FLAG_DOUBLE: {
        double v = strtod(text, &end);
        if (*text == '\0' || isspace((unsigned char)*text) || *end != '\0' || errno == ERANGE
            || !isfinite(v) || v < f->min
            || v > f->max) {
            snprintf(err, err_len, "--%s: '%s' is not a number in [%g, %g]", f->name, text, f->min,
                     f->max);
            return -1;
        }
        *(double *)f->dest = v;
        return 0;
    }
    case AB_FLAG_STRING:
        if (*text == '\0') {
            snprintf(err, err_len, "--%s: empty value", f->name);
            return -1;
        }
        *(const char **)f->dest = text;
        return 0;
    case AB_FLAG_STRINGS: {
        ab_strings *list = f->dest;
        if (*text == '\0' || list->n == AB_MAX_STRINGS) {
            snprintf(err, err_len, "--%s: %s", f->name,
                     *text ? "given too many times" : "empty value");
            return -1;
        }
        list->v[list->n++] = text;
        return 0;
    }
    case AB_FLAG_BOOL:
        break;
    }
    snprintf(err, err_len, "--%s takes no value", f->name);
    return -1;
}

int ab_cli_parse(int argc, char **argv, const ab_flag *flags, int n_flags,
                 const char **pos, int max_pos, int *n_pos, char *err, size_t err_len)
{
    *n_pos = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
            return AB_CLI_HELP;
        if (strcmp(arg, "--") == 0) {
            for (i++; i < argc; i++) {
                if (*n_pos == max_pos) {
                    snprintf(err, err_len, "unexpected argument '%s'", argv[i]);
                    return AB_CLI_ERROR;
                }
                pos[(*n_pos)++] = argv[i];
            }
            break;
        }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (arg[0] == '-' && arg[1] != '\0') {
                snprintf(err, err_len, "unknown flag '%s'", arg);
                return AB_CLI_ERROR;
            }
            if (*n_pos == max_pos) {
                snprintf(err, err_len, "unexpected argument '%s'", arg);
                return AB_CLI_ERROR;
            }
            pos[(*n_pos)++] = arg;
            continue;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const ab_flag *f = find_flag(flags, n_flags, name, len);
        if (!f) {
            snprintf(err, err_len, "unknown flag '--%.*s'", (int)len, name);
            return AB_CLI_ERROR;
        }
        if (f->kind == AB_FLAG_BOOL) {
            if (eq) {
                snprintf(err, err_len, "--%s takes no value", f->name);
                return AB_CLI_ERROR;
            }
            *(int *)f->dest = 1;
            continue;
        }
        const char *value = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!value) {
            snprintf(err, err_len, "--%s needs a value (%s)", f->name, f->metavar ? f->metavar : "");
            return AB_CLI_ERROR;
        }
        /* `--json --csv` is a forgotten value, not a file named "--csv"
         * (such a name can still be given as --json=--csv). */
        if (!eq && strncmp(value, "--", 2) == 0) {
            snprintf(err, err_len, "--%s needs a value (%s), not the flag %.60s", f->name,
                     f->metavar ? f->metavar : "", value);
            return AB_CLI_ERROR;
        }
        if (set_value(f, value, err, err_len) != 0)
            return AB_CLI_ERROR;
    }
    return AB_CLI_OK;
}

void ab_cli_help(FILE *out, const char *usage, const char *description,
                 const ab_flag *flags, int n_flags)
{
    fprintf(out, "usage: %s\n\n%s\n", usage, description);
    if (n_flags)
        fprintf(out, "\noptions:\n");
    for (int i = 0; i < n_flags; i++) {
        char left[64];
        snprintf(left, sizeof left, "--%s%s%s", flags[i].name, flags[i].metavar ? " " : "",
                 flags[i].metavar ? flags[i].metavar : "");
        fprintf(out, "  %-24s %s\n", left, flags[i].help);
    }
    fprintf(out, "  %-24s %s\n", "--help", "show this help");
}

int ab_cli_command(const char *cmd, const char *usage, const char *description, int argc,
                   char **argv, const ab_flag *flags, int n_flags, const char **pos, int max_pos,
                   int *n_pos)
{
    char err[256];
    switch (ab_cli_parse(argc, argv, flags, n_flags, pos, max_pos, n_pos, err, sizeof err)) {
    case AB_CLI_HELP:
        ab_cli_help(stdout, usage, description, flags, n_flags);
        return 0;
    case AB_CLI_ERROR:
        fprintf(stderr, "attnbench %s: %s (see attnbench %s --help)\n", cmd, err, cmd);
        return 2;
    default:
        return -1;
    }
}

int ab_cli_op(const char *cmd, const char *name, ab_op *op)
{
    if (!name || ab_op_parse(name, op) == 0)
        return 0;
    fprintf(stderr, "attnbench %s: --op: unknown op '%s' (%s)\n", cmd, name, ab_op_list());
    return -1;
}
