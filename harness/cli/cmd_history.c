/*
 * cmd_history.c — `attnbench history add FILE.json...` and `attnbench
 * history show [--benchmark NAME]`: the results history (history.h).
 * The database: --db, else $ATTN_HISTORY_DB, else results/history.db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "history.h"

#define MAX_FILES 256

/* The --db flag of both subcommands, declared once. */
#define DB_FLAG(dest)                                                                              \
    { "db", AB_FLAG_STRING, (dest), "FILE",                                                        \
      "the history database (default: $ATTN_HISTORY_DB, else results/history.db)", 0, 0 }

/* Opens the database of --db (db_flag), else $ATTN_HISTORY_DB, else
 * results/history.db; NULL, said on stderr for "attnbench cmd", when it
 * cannot be opened. */
static ab_history *open_db(const char *cmd, const char *db_flag)
{
    const char *env = getenv("ATTN_HISTORY_DB");
    char err[512];
    ab_history *h = ab_history_open(db_flag ? db_flag : env && env[0] ? env : "results/history.db",
                                    err, sizeof err);
    if (!h)
        fprintf(stderr, "attnbench %s: %s\n", cmd, err);
    return h;
}

static int history_add(int argc, char **argv)
{
    const char *db = NULL, *commit = NULL, *pos[MAX_FILES];
    double min_effect = 0.05;
    int n_pos;
    const ab_flag flags[] = {
        DB_FLAG(&db),
        { "commit", AB_FLAG_STRING, &commit, "SHA", "the git commit of these results (default: the file's)", 0, 0 },
        { "min-effect", AB_FLAG_DOUBLE, &min_effect, "F", "smallest step that counts, as a fraction (default 0.05)", 0, 10 },
    };
    int rc = ab_cli_command(
        "history add", "attnbench history add FILE.json... [--db FILE] [--commit SHA] [--min-effect F]",
        "Adds benchmark results (attnbench's JSON, or any Google Benchmark JSON) to the history,\n"
        "one transaction per file, keyed by machine, git commit and date; then finds the steps\n"
        "of every series the file touched. A file already added is skipped.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), pos, MAX_FILES, &n_pos);
    if (rc >= 0)
        return rc;
    if (n_pos == 0) {
        fprintf(stderr, "attnbench history add: give at least one JSON file\n");
        return AB_EXIT_USAGE;
    }
    ab_history *h = open_db("history add", db);
    if (!h)
        return AB_EXIT_USAGE;
    char err[512];
    int status = AB_EXIT_OK;
    for (int i = 0; i < n_pos; i++) {
        ab_bench_file bf;
        if (ab_bench_file_load(pos[i], &bf, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench history add: %s\n", err);
            status = AB_EXIT_USAGE;
            continue;
        }
        int r = ab_history_add(h, &bf, pos[i], commit, min_effect, err, sizeof err);
        if (r < 0) {
            fprintf(stderr, "attnbench history add: %s: %s (nothing of it was added)\n", pos[i], err);
            status = AB_EXIT_FAIL;
        } else {
            printf("%s: %s (%d benchmarks)\n", pos[i], r == 1 ? "already in the history" : "added",
                   bf.n);
        }
        ab_bench_file_free(&bf);
    }
    ab_history_close(h);
    return status;
}

static int history_show(int argc, char **argv)
{
    const char *db = NULL, *name = NULL, *machine = NULL;
    int n_pos;
    const ab_flag flags[] = {
        DB_FLAG(&db),
        { "benchmark", AB_FLAG_STRING, &name, "NAME", "show this benchmark run by run", 0, 0 },
        { "machine", AB_FLAG_STRING, &machine, "ID", "only this machine (its machine_id)", 0, 0 },
    };
    int rc = ab_cli_command(
        "history show", "attnbench history show [--benchmark NAME] [--machine ID] [--db FILE]",
        "Lists every series (machine x benchmark) with its runs, latest median and steps, each\n"
        "named by the commit where it happened; with --benchmark, that series run by run.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;
    ab_history *h = open_db("history show", db);
    if (!h)
        return AB_EXIT_USAGE;
    char err[512];
    rc = ab_history_show(h, name, machine, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "attnbench history show: %s\n", err);
    ab_history_close(h);
    return rc != 0 ? AB_EXIT_FAIL : AB_EXIT_OK;
}

int ab_cmd_history(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "add") == 0)
        return history_add(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "show") == 0)
        return history_show(argc - 1, argv + 1);
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: attnbench history add FILE.json... | attnbench history show\n"
               "The results history: see `attnbench history add --help` and "
               "`attnbench history show --help`.\n");
        return AB_EXIT_OK;
    }
    fprintf(stderr, "attnbench history: give add or show (see attnbench history --help)\n");
    return AB_EXIT_USAGE;
}
