/*
 * cmd_history.c — `attnbench history add FILE.json...`, `attnbench history
 * show [--benchmark NAME] [--machine ID|all]` and `attnbench history steps
 * --since COMMIT`: the results history (history.h). The store: --db, else
 * $ATTN_HISTORY_DB, else results/history.db; a postgresql:// URL names a
 * server, anything else an SQLite file. Every failure of the store exits 2
 * with one line on stderr, a URL's password never in it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "history.h"

#define MAX_FILES 8192    /* files one add takes (a fleet's backlog: thousands) */

/* The --db flag of both subcommands, declared once. */
#define DB_FLAG(dest)                                                                              \
    { "db", AB_FLAG_STRING, (dest), "FILE|URL",                                                    \
      "the history: an SQLite file or a postgresql:// URL (default: $ATTN_HISTORY_DB, else "      \
      "results/history.db)", 0, 0 }

/* The store of --db (db_flag), else $ATTN_HISTORY_DB, else
 * results/history.db. */
static const char *db_target(const char *db_flag)
{
    const char *env = getenv("ATTN_HISTORY_DB");
    return db_flag ? db_flag : env && env[0] ? env : "results/history.db";
}

/* Opens the store of db_target(db_flag) (only an existing one when
 * reading); NULL, said on stderr for "attnbench cmd", when it cannot be
 * opened. */
static ab_history *open_db(const char *cmd, const char *db_flag, int reading)
{
    char err[700];
    const char *target = db_target(db_flag);
    int none;
    ab_history *h = reading ? ab_history_open_existing(target, &none, err, sizeof err)
                            : ab_history_open(target, err, sizeof err);
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
    ab_history *h = open_db("history add", db, 0);
    if (!h)
        return AB_EXIT_USAGE;
    char err[700];
    int status = AB_EXIT_OK;
    for (int i = 0; i < n_pos; i++) {
        ab_bench_file bf;
        if (ab_bench_file_load(pos[i], &bf, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench history add: %s\n", err);
            status = AB_EXIT_USAGE;
            continue;
        }
        if (bf.n == 0) {   /* every benchmark failed, or has a time that is not positive */
            fprintf(stderr, "attnbench history add: %s: no benchmark with usable times\n", pos[i]);
            ab_bench_file_free(&bf);
            status = AB_EXIT_USAGE;
            continue;
        }
        int r = ab_history_add(h, &bf, pos[i], commit, min_effect, err, sizeof err);
        if (r == -2) {
            /* The file, not the store: skipped like one that does not
             * parse, and the rest still added. */
            fprintf(stderr, "attnbench history add: %s: %s (not added)\n", pos[i], err);
            status = AB_EXIT_USAGE;
        } else if (r < 0) {
            /* The store failed: the files after this one are not tried,
             * and the user is told which were left. */
            fprintf(stderr, "attnbench history add: %s: %s: %s (nothing of it was added",
                    ab_history_name(h), pos[i], err);
            if (i + 1 < n_pos)
                fprintf(stderr, "; the %d file%s after it not tried", n_pos - i - 1,
                        n_pos - i - 1 == 1 ? "" : "s");
            fprintf(stderr, ")\n");
            ab_bench_file_free(&bf);
            status = AB_EXIT_USAGE;
            break;
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
        { "machine", AB_FLAG_STRING, &machine, "ID", "only this machine (its machine_id); all: every machine (the default)", 0, 0 },
    };
    int rc = ab_cli_command(
        "history show", "attnbench history show [--benchmark NAME] [--machine ID|all] [--db FILE|URL]",
        "Lists every series (benchmark x machine), machine by machine, with its runs, latest\n"
        "median and steps, each named by the commit where it happened, and a slow drift between\n"
        "the steps where it reaches 5% over the series (no commit is blamed for a drift); with\n"
        "--benchmark, that series run by run.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;
    ab_history *h = open_db("history show", db, 1);
    if (!h)
        return AB_EXIT_USAGE;
    char err[700];
    rc = ab_history_show(h, name, machine, stdout, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "attnbench history show: %s: %s\n", ab_history_name(h), err);
    ab_history_close(h);
    return rc != 0 ? AB_EXIT_USAGE : AB_EXIT_OK;
}

static int history_steps(int argc, char **argv)
{
    const char *db = NULL, *since = NULL;
    double min_effect = 0.05;
    int n_pos;
    const ab_flag flags[] = {
        DB_FLAG(&db),
        { "since", AB_FLAG_STRING, &since, "COMMIT", "the commit to look from (any unambiguous prefix)", 0, 0 },
        { "min-effect", AB_FLAG_DOUBLE, &min_effect, "F", "how much slower a series must be now to fail, as a fraction (default 0.05)", 0, 10 },
    };
    int rc = ab_cli_command(
        "history steps", "attnbench history steps --since COMMIT [--db FILE|URL] [--min-effect F]",
        "Which machines got slower (or faster) since COMMIT, on what: every step found after\n"
        "each machine's first run at COMMIT (a machine that never ran it: after COMMIT's first\n"
        "run anywhere), machine by machine, slowest first; then the series that drift (a slow\n"
        "change over many runs, no one commit to blame) by at least --min-effect over their runs\n"
        "since. Exit 1 when a series is slower now: its steps and drift since, taken together,\n"
        "slower by at least --min-effect (a regression a later step undid is listed, and does\n"
        "not fail).",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;
    if (!since || !since[0]) {
        fprintf(stderr, "attnbench history steps: give --since COMMIT\n");
        return AB_EXIT_USAGE;
    }
    ab_history *h = open_db("history steps", db, 1);
    if (!h)
        return AB_EXIT_USAGE;
    char err[700];
    int slower = 0, slower_now = 0;
    rc = ab_history_steps_since(h, since, min_effect, stdout, &slower, &slower_now, err,
                                sizeof err);
    if (rc != 0)
        fprintf(stderr, "attnbench history steps: %s\n", err);
    ab_history_close(h);
    return rc != 0 ? AB_EXIT_USAGE : slower_now ? AB_EXIT_FAIL : AB_EXIT_OK;
}

int ab_cmd_history(int argc, char **argv)
{
    if (argc >= 1 && strcmp(argv[0], "add") == 0)
        return history_add(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "show") == 0)
        return history_show(argc - 1, argv + 1);
    if (argc >= 1 && strcmp(argv[0], "steps") == 0)
        return history_steps(argc - 1, argv + 1);
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("usage: attnbench history add FILE.json... | attnbench history show |\n"
               "       attnbench history steps --since COMMIT\n"
               "The results history, in an SQLite file or on a PostgreSQL server (--db URL): see\n"
               "`attnbench history add --help`, `history show --help` and `history steps --help`.\n");
        return AB_EXIT_OK;
    }
    fprintf(stderr, "attnbench history: give add, show or steps (see attnbench history --help)\n");
    return AB_EXIT_USAGE;
}
