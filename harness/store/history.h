/*
 * history.h — benchmark results over time, in an SQLite database, and the
 * steps in each series.
 *
 * The database (default results/history.db) holds, per added JSON file, a
 * run: machine (the context's machine_id and machine_key; a file of another
 * program is keyed by its host name), git commit, date; and per benchmark of
 * the run its median, minimum, CV and the repetition times. A series is one
 * benchmark (run name: op/kernel/shape/threads) on one machine, its runs in
 * date order. After every add, the steps of the series it touched are
 * detected again and stored (table steps), in the same transaction, so
 * readers (`history show`, reports/report.py) never disagree on them.
 *
 * Tables (the contract with reports/report.py; schema version in
 * PRAGMA user_version):
 *   runs(id, machine_id, machine_key, git_commit, date, source, added)
 *   results(run_id, name, op, kernel, shape, threads, median_s, min_s, cv, n, samples)
 *     samples: the repetition times in seconds, space-separated
 *   steps(machine_id, name, run_id, git_commit, date, before_s, after_s)
 *     run_id: the first run after the step; before_s / after_s: the medians
 *     of the segments on either side
 * A file that is not an SQLite database, or one of another schema, is
 * reported and left alone: never rebuilt over.
 */
#ifndef AB_HISTORY_H
#define AB_HISTORY_H

#include <stddef.h>

#include "bench_file.h"
#include "steps.h"

#define AB_HISTORY_SCHEMA 1
/* Step detection (steps.h) looks at the last this-many runs of a series. */
#define AB_HISTORY_WINDOW AB_STEPS_WINDOW

typedef struct ab_history ab_history;

/* Opens (creating when absent) the database at path. NULL with a one-line
 * reason in err: not an SQLite database, another schema, unwritable, or
 * SQLite not built in. */
ab_history *ab_history_open(const char *path, char *err, size_t len);
void ab_history_close(ab_history *h);

/* Adds the runs of a benchmark file in one transaction and updates the
 * steps of the series it touched. commit overrides the file's git commit
 * when not NULL (CI knows it; other programs do not write one). 0 added,
 * 1 already there (same machine, commit, date and source: nothing
 * changed), -1 with err (nothing changed either). */
int ab_history_add(ab_history *h, const ab_bench_file *bf, const char *source,
                   const char *commit, double min_effect, char *err, size_t len);

/* Writes the history as text: with name NULL, one line per series (runs,
 * latest median, steps with their commits); else that benchmark's series
 * run by run, on every machine (or only machine_id's when not NULL). 0, or
 * -1 with err. */
int ab_history_show(ab_history *h, const char *name, const char *machine_id, char *err,
                    size_t len);

#endif /* AB_HISTORY_H */
