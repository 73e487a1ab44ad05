/*
 * history.h — benchmark results over time, the steps in each series, and
 * the tuned choices a fleet shares: in an SQLite file (the default,
 * results/history.db) or on a PostgreSQL server (a postgresql:// URL) that
 * many machines add to at once. Both stores hold the same schema and give
 * the same answers; sql.h is where they differ.
 *
 * Per added JSON file the history keeps a run: machine (the context's
 * machine_id and machine_key; a file of another program is keyed by its
 * host name), git commit, date (converted to UTC when it has an offset:
 * series are ordered by its text), the SHA-256 of the file's bytes; and per
 * benchmark of the run its median, minimum, CV and the repetition times. A
 * series is one benchmark (run name: op/kernel/shape/threads) on one
 * machine, its runs in date order. Each add is one transaction with the
 * steps of the series it touched, detected again, so readers (`history
 * show`, `history steps`, reports/report.py) never disagree on them.
 *
 * Tables (the contract with reports/report.py; the schema version is meta's
 * row 'schema', and SQLite's PRAGMA user_version too):
 *   meta(name, value)
 *   machines(machine_id, machine_key, first_added, last_added)
 *   runs(id, machine_id, machine_key, git_commit, date, source, added, content_sha256)
 *   results(run_id, name, op, kernel, shape, threads, median_s, min_s, cv, n, samples)
 *     samples: the repetition times in seconds, space-separated
 *   steps(machine_id, name, run_id, git_commit, date, before_s, after_s)
 *     run_id: the first run after the step; before_s / after_s: the medians
 *     of the segments on either side
 *   wisdom(machine_key, records, updated, updated_by)
 *     records: the wisdom text (kernels/wisdom.h) of that machine key
 * A store that is not a history, or one of another schema, is reported and
 * left alone: never rebuilt over.
 *
 * Concurrency: an add first upserts its machine's row, which on PostgreSQL
 * row-locks it to the commit (READ COMMITTED): adds of one machine queue
 * and each sees every run committed before it; adds of different machines
 * run in parallel. SQLite serializes writers (BEGIN IMMEDIATE).
 */
#ifndef AB_HISTORY_H
#define AB_HISTORY_H

#include <stddef.h>
#include <stdio.h>

#include "bench_file.h"
#include "internal.h"
#include "steps.h"

#define AB_HISTORY_SCHEMA 2
#define AB_HISTORY_SCHEMA_TEXT "2"
/* Step detection (steps.h) looks at the last this-many runs of a series. */
#define AB_HISTORY_WINDOW AB_STEPS_WINDOW

typedef struct ab_history ab_history;

/* Opens target — a postgresql:// URL, else an SQLite file (created with its
 * directories when absent) — creating the schema in an empty store. NULL
 * with a one-line reason in err (a URL's password never in it): not a
 * history, another schema, unreachable server, refused login, store not
 * built in. */
ab_history *ab_history_open(const char *target, char *err, size_t len);
/* ab_history_open for commands that only read (history show and steps,
 * tune --pull): a store that holds no history — an SQLite file that is not
 * there, an empty file or database — is an error (*none set), not a new
 * empty history, and is left as it is (a mistyped --db read as "empty",
 * and created the file and its directories; an empty one got a schema). */
ab_history *ab_history_open_existing(const char *target, int *none, char *err, size_t len);
void ab_history_close(ab_history *h);
/* The target as it may be shown (a URL's password redacted). */
const char *ab_history_name(const ab_history *h);

/* Adds the runs of a benchmark file in one transaction and updates the
 * steps of the series it touched. commit overrides the file's git commit
 * when not NULL (CI knows it; other programs do not write one). 0 added,
 * 1 already there (a file of the same bytes: nothing changed), -2 with err
 * when the file itself is refused (text that is not UTF-8, unusable times:
 * the store was not touched, the next file may be added), -1 with err when
 * the store failed (nothing of the file changed either). */
int ab_history_add(ab_history *h, const ab_bench_file *bf, const char *source,
                   const char *commit, double min_effect, char *err, size_t len);

/* Writes the history as text to out: with name NULL, every series grouped by
 * machine (runs, latest median, steps with their commits); else that
 * benchmark's series run by run. machine_id NULL or "all": every machine.
 * 0, or -1 with err. */
int ab_history_show(ab_history *h, const char *name, const char *machine_id, FILE *out,
                    char *err, size_t len);

/* Writes to out the steps found after commit (any unambiguous prefix) on each
 * machine — after that machine's first run at the commit, else after the
 * commit's first run anywhere — slowest first. *n_slower: how many made a
 * series slower; *n_slower_now: how many series are slower now, their
 * steps since taken together (the after of the last over the before of
 * the first) by a factor of at least 1 + min_effect: a regression a later
 * step undid is not one now. 0, or -1 with err (no such commit, an
 * ambiguous prefix). */
int ab_history_steps_since(ab_history *h, const char *commit, double min_effect, FILE *out,
                           int *n_slower, int *n_slower_now, char *err, size_t len);

/* Merges add's records into those the store keeps for machine key key (a
 * bucket's record replaces the stored one, unless that one is of a more
 * thorough search: *n_kept counts those), under a row lock; by: who
 * published (a machine id). *n_stored: the key's records after. 0, or -1
 * with err (nothing changed). */
int ab_history_wisdom_publish(ab_history *h, const char *key, const char *by,
                              const attn_wisdom *add, int *n_stored, int *n_kept, char *err,
                              size_t len);
/* The records stored for machine key key into w (none: w->n 0). Not
 * checked here: whoever uses them verifies them first. 0, or -1 with err. */
int ab_history_wisdom_pull(ab_history *h, const char *key, attn_wisdom *w, char *err,
                           size_t len);

#endif /* AB_HISTORY_H */
