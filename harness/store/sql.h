/*
 * sql.h — the one SQL interface the results history (history.h) and the
 * shared wisdom use, over SQLite (a file: the embedded default) or
 * PostgreSQL through libpq (a postgresql:// or postgres:// URL: one server
 * for a fleet). Everything store-specific lives in sql.c; the statements
 * callers give are the SQL both stores accept, with parameters written $1,
 * $2, ... and bound by number — never pasted into the text, so a benchmark
 * name with quotes or semicolons is stored as data.
 *
 * A PostgreSQL URL's password never leaves this file: ab_sql_name() is the
 * target with the password replaced by ***, and every error message is
 * scrubbed of it too.
 */
#ifndef AB_SQL_H
#define AB_SQL_H

#include <stddef.h>

typedef enum { AB_SQL_SQLITE, AB_SQL_POSTGRES } ab_sql_kind;

typedef struct ab_sql ab_sql;
typedef struct ab_sql_rows ab_sql_rows;

/* One parameter of a statement: text, a 64-bit integer or a double (a NULL
 * text binds SQL NULL). */
typedef struct ab_sql_arg {
    enum { AB_SQL_TEXT, AB_SQL_INT, AB_SQL_REAL } type;
    const char *text;
    long long i;
    double d;
} ab_sql_arg;

#define AB_SQL_T(s) ((ab_sql_arg){ .type = AB_SQL_TEXT, .text = (s) })
#define AB_SQL_I(v) ((ab_sql_arg){ .type = AB_SQL_INT, .i = (v) })
#define AB_SQL_R(v) ((ab_sql_arg){ .type = AB_SQL_REAL, .d = (v) })

/* 1 when target is a URL (scheme://...): such a target never names a file. */
int ab_sql_is_url(const char *target);

/* target with a URL's password replaced by *** (the text to show). */
void ab_sql_redact(const char *target, char *out, size_t len);

/* Opens target: a postgresql:// or postgres:// URL (a connection to the
 * server), else an SQLite file (created with its directories when
 * absent). NULL with a one-line reason in err: another URL scheme, a store
 * not built in, a server that is down or refuses the login. */
ab_sql *ab_sql_open(const char *target, char *err, size_t len);
void ab_sql_close(ab_sql *db);
ab_sql_kind ab_sql_kind_of(const ab_sql *db);
/* The target as it may be shown (password redacted). */
const char *ab_sql_name(const ab_sql *db);

/* Runs one statement (or, with n_args 0 and rows NULL, a script of
 * several). With rows not NULL, *rows gets its result to walk with
 * ab_sql_next (free it with ab_sql_rows_free). The number of rows it
 * changed (0 for a query), or -1 with a one-line reason in err. */
long long ab_sql_exec(ab_sql *db, const char *sql, const ab_sql_arg *args, int n_args,
                      ab_sql_rows **rows, char *err, size_t len);

/* The next row: 1, 0 when there is none, -1 on an error (said by
 * ab_sql_rows_free). */
int ab_sql_next(ab_sql_rows *r);
/* Column col of the current row: its text ("" for NULL), as an integer or
 * as a double. */
const char *ab_sql_text(ab_sql_rows *r, int col);
long long ab_sql_int(ab_sql_rows *r, int col);
double ab_sql_real(ab_sql_rows *r, int col);
/* Frees r: 0, or -1 with err when walking it failed. */
int ab_sql_rows_free(ab_sql_rows *r, char *err, size_t len);

/* The first integer of a query's first row; -1 with err on error, else
 * dflt when it returns no row. */
long long ab_sql_int_of(ab_sql *db, const char *sql, const ab_sql_arg *args, int n_args,
                        long long dflt, char *err, size_t len);

/* A transaction that writes. SQLite takes its write lock at once (BEGIN
 * IMMEDIATE: writers queue on the busy timeout instead of failing at
 * commit); PostgreSQL begins at READ COMMITTED and its writers queue on the
 * row locks they take. 0, or -1 with err. */
int ab_sql_begin(ab_sql *db, char *err, size_t len);
int ab_sql_commit(ab_sql *db, char *err, size_t len);
/* Best effort: a connection that is gone has nothing to roll back. */
void ab_sql_rollback(ab_sql *db);

#endif /* AB_SQL_H */
