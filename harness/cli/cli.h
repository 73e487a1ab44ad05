/*
 * cli.h — command-line flags for the attnbench subcommands.
 *
 * Each subcommand declares a table of flags; ab_cli_parse fills them and
 * collects positional arguments. Flags are `--name value` or `--name=value`;
 * numbers are parsed strictly (the whole text, within the flag's range).
 */
#ifndef AB_CLI_H
#define AB_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "ops.h"

typedef enum ab_flag_kind {
    AB_FLAG_BOOL,      /* present or not; takes no value */
    AB_FLAG_INT,
    AB_FLAG_DOUBLE,
    AB_FLAG_STRING,
    AB_FLAG_STRINGS    /* repeatable: each value appended to an ab_strings */
} ab_flag_kind;

#define AB_MAX_STRINGS 8
typedef struct ab_strings {
    const char *v[AB_MAX_STRINGS];
    int n;
} ab_strings;

typedef struct ab_flag {
    const char *name;      /* without the dashes: "threads" */
    ab_flag_kind kind;
    void *dest;            /* int *, double *, const char ** or ab_strings * */
    const char *metavar;   /* "N", "FILE"; NULL for booleans */
    const char *help;
    double min, max;       /* range for numbers (inclusive) */
} ab_flag;

enum { AB_CLI_OK = 0, AB_CLI_HELP = 1, AB_CLI_ERROR = -1 };

/* Parses argv[0..argc-1] (argv[0] is the first argument, not the program).
 * Positional arguments go to pos (up to max_pos; more is an error) and
 * their number to *n_pos. Returns AB_CLI_OK, AB_CLI_HELP for --help/-h, or
 * AB_CLI_ERROR with a one-line message in err. */
int ab_cli_parse(int argc, char **argv, const ab_flag *flags, int n_flags,
                 const char **pos, int max_pos, int *n_pos, char *err, size_t err_len);

/* Prints "usage: ...", the description, and one line per flag. */
void ab_cli_help(FILE *out, const char *usage, const char *description,
                 const ab_flag *flags, int n_flags);


/* Parses a subcommand's arguments: prints the help (stdout) for --help, or
 * "attnbench CMD: message" (stderr) for a bad flag. Returns -1 when the
 * command should go on, else the exit status (0 after help, 2 on error). */
int ab_cli_command(const char *cmd, const char *usage, const char *description, int argc,
                   char **argv, const ab_flag *flags, int n_flags, const char **pos, int max_pos,
                   int *n_pos);

/* An --op value (NULL: none given, *op left as it is): 0, or -1 after
 * "attnbench CMD: --op: unknown op 'X' (the ops)" on stderr. */
int ab_cli_op(const char *cmd, const char *name, ab_op *op);

#endif /* AB_CLI_H */
