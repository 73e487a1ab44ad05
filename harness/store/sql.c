/* sql.c — SQLite and PostgreSQL behind sql.h. */
#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "sql.h"

#ifdef ATTN_HAVE_SQLITE
#include <sqlite3.h>
#endif
#ifdef ATTN_HAVE_POSTGRES
#include <libpq-fe.h>
#endif

struct ab_sql {
    ab_sql_kind kind;
    char name[512];          /* the target, password redacted */
    /* A URL's password as written and percent-decoded (libpq may quote
     * either), to scrub from messages; "" none. */
    char password[2][256];
#ifdef ATTN_HAVE_SQLITE
    sqlite3 *lite;
#endif
#ifdef ATTN_HAVE_POSTGRES
    PGconn *pg;
#endif
};

struct ab_sql_rows {
    ab_sql *db;
    int failed;
    char error[300];
#ifdef ATTN_HAVE_SQLITE
    sqlite3_stmt *st;
#endif
#ifdef ATTN_HAVE_POSTGRES
    PGresult *res;
    int row, n_rows;
#endif
};

int ab_sql_is_url(const char *target)
{
    const char *p = target;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    return p > target && strncmp(p, "://", 3) == 0;
}

static int is_postgres_url(const char *target)
{
    return strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0;
}

/* Where a URL's password is: [*at, *at + *n); 0 when it has none. Both
 * places are looked at: user:PASSWORD@ and a password=PASSWORD parameter. */
static int password_span(const char *url, size_t from, size_t *at, size_t *n)
{
    const char *auth = strstr(url, "://");
    if (!auth)
        return 0;
    auth += 3;
    size_t end = strcspn(auth, "/?#");
    const char *amp = NULL;
    for (size_t i = 0; i < end; i++)
        if (auth[i] == '@')
            amp = auth + i;     /* the last @ ends the user info */
    const char *colon = amp ? memchr(auth, ':', (size_t)(amp - auth)) : NULL;
    if (colon && (size_t)(colon + 1 - url) >= from) {
        *at = (size_t)(colon + 1 - url);
        *n = (size_t)(amp - colon - 1);
        return 1;
    }
    for (const char *q = strchr(auth, '?'); q; q = strchr(q + 1, '&')) {
        if (strncmp(q + 1, "password=", 9) == 0 && (size_t)(q + 10 - url) >= from) {
            *at = (size_t)(q + 10 - url);
            *n = strcspn(q + 10, "&#");
            return 1;
        }
    }
    return 0;
}

void ab_sql_redact(const char *target, char *out, size_t len)
{
    size_t used = 0, from = 0, at, n;
    if (len == 0)
        return;
    out[0] = '\0';
    while (ab_sql_is_url(target) && password_span(target, from, &at, &n)) {
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%.*s***",
                                 (int)(at - from), target + from);
        from = at + n;
    }
    if (used < len)
        snprintf(out + used, len - used, "%s", target + from);
}

/* msg made one line (a server's "ERROR:  x\nDETAIL: y" becomes "x; y"),
 * with the password, wherever it appears, replaced by ***. */
static void say(const ab_sql *db, const char *msg, char *err, size_t len)
{
    char line[600];
    size_t n = 0;
    for (const char *p = msg ? msg : "unknown error"; *p && n + 2 < sizeof line; p++) {
        if (*p == '\n' || *p == '\t') {
            while (p[1] == '\n' || p[1] == '\t' || p[1] == ' ')
                p++;
            if (p[1] && n > 0) {
                line[n++] = ';';
                line[n++] = ' ';
            }
            continue;
        }
        line[n++] = *p;
    }
    while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == ';'))
        n--;
    line[n] = '\0';
    char *s = line;
    if (strncmp(s, "ERROR:  ", 8) == 0)
        s += 8;
    size_t used = 0;
    if (len == 0)
        return;
    err[0] = '\0';
    for (; *s && used + 1 < len; s++) {
        size_t pw = 0;
        for (int k = 0; k < 2 && db && !pw; k++)
            if (db->password[k][0] && strncmp(s, db->password[k], strlen(db->password[k])) == 0)
                pw = strlen(db->password[k]);
        if (pw) {
            used += (size_t)snprintf(err + used, len - used, "***");
            s += pw - 1;
            continue;
        }
        err[used++] = *s;
        err[used] = '\0';
    }
    if (used >= len)
        err[len - 1] = '\0';
}

ab_sql_kind ab_sql_kind_of(const ab_sql *db)
{
    return db->kind;
}

const char *ab_sql_name(const ab_sql *db)
{
    return db->name;
}

static ab_sql *open_sqlite(ab_sql *db, const char *path, char *err, size_t len)
{
#ifdef ATTN_HAVE_SQLITE
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (ab_mkdirs(dirname(dir), err, len) != 0) {
        ab_sql_close(db);
        return NULL;
    }
    if (sqlite3_open_v2(path, &db->lite, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
        != SQLITE_OK) {
        snprintf(err, len, "%s: %s", path, db->lite ? sqlite3_errmsg(db->lite) : "cannot open");
        ab_sql_close(db);
        return NULL;
    }
    /* Concurrent writers wait for each other instead of failing. */
    sqlite3_busy_timeout(db->lite, 30000);
    return db;
#else
    (void)path;
    snprintf(err, len, "attnbench was built without SQLite (install libsqlite3-dev and rebuild)");
    ab_sql_close(db);
    return NULL;
#endif
}

#ifdef ATTN_HAVE_POSTGRES
/* libpq prints a server's notices on stderr by default; the library never
 * prints. */
static void ignore_notice(void *arg, const char *message)
{
    (void)arg, (void)message;
}
#endif

static ab_sql *open_postgres(ab_sql *db, const char *url, char *err, size_t len)
{
#ifdef ATTN_HAVE_POSTGRES
    size_t at, n;
    if (password_span(url, 0, &at, &n)) {
        snprintf(db->password[0], sizeof db->password[0], "%.*s", (int)n, url + at);
        size_t d = 0;
        for (size_t i = 0; i < n && d + 1 < sizeof db->password[1]; i++) {
            unsigned hex;
            if (url[at + i] == '%' && i + 2 < n && sscanf(url + at + i + 1, "%2x", &hex) == 1) {
                db->password[1][d++] = (char)hex;
                i += 2;
            } else {
                db->password[1][d++] = url[at + i];
            }
        }
        db->password[1][d] = '\0';
    }
    /* A server that does not answer is given 10 s unless the URL says
     * otherwise (its parameters come last, so they win). */
    const char *keys[] = { "connect_timeout", "application_name", "dbname", NULL };
    const char *values[] = { "10", "attnbench", url, NULL };
    db->pg = PQconnectdbParams(keys, values, 1);
    if (!db->pg || PQstatus(db->pg) != CONNECTION_OK) {
        char why[400];
        say(db, db->pg ? PQerrorMessage(db->pg) : "out of memory", why, sizeof why);
        snprintf(err, len, "%s: cannot connect: %s", db->name, why);
        ab_sql_close(db);
        return NULL;
    }
    PQsetNoticeProcessor(db->pg, ignore_notice, NULL);
    return db;
#else
    (void)url;
    snprintf(err, len, "%s: attnbench was built without PostgreSQL (install libpq-dev and rebuild)",
             db->name);
    ab_sql_close(db);
    return NULL;
#endif
}

ab_sql *ab_sql_open(const char *target, char *err, size_t len)
{
    ab_sql *db = calloc(1, sizeof *db);
    if (!db) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    ab_sql_redact(target, db->name, sizeof db->name);
    if (is_postgres_url(target)) {
        db->kind = AB_SQL_POSTGRES;
        return open_postgres(db, target, err, len);
    }
    if (ab_sql_is_url(target)) {
        snprintf(err, len, "%s: not a store attnbench knows (give a postgresql:// URL or a file "
                 "path for SQLite)", db->name);
        free(db);
        return NULL;
    }
    db->kind = AB_SQL_SQLITE;
    return open_sqlite(db, target, err, len);
}

void ab_sql_close(ab_sql *db)
{
    if (!db)
        return;
#ifdef ATTN_HAVE_SQLITE
    sqlite3_close(db->lite);
#endif
#ifdef ATTN_HAVE_POSTGRES
    if (db->pg)
        PQfinish(db->pg);
#endif
    free(db);
}

long long ab_sql_exec(ab_sql *db, const char *sql, const ab_sql_arg *args, int n_args,
                      ab_sql_rows **rows, char *err, size_t len)
{
    if (rows)
        *rows = NULL;
    ab_sql_rows *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    r->db = db;
    long long changed = -1;
#ifdef ATTN_HAVE_SQLITE
    if (db->kind == AB_SQL_SQLITE) {
        if (n_args == 0 && !rows) {
            char *msg = NULL;
            if (sqlite3_exec(db->lite, sql, NULL, NULL, &msg) != SQLITE_OK) {
                say(db, msg ? msg : sqlite3_errmsg(db->lite), err, len);
                sqlite3_free(msg);
                free(r);
                return -1;
            }
            free(r);
            return sqlite3_changes(db->lite);
        }
        if (sqlite3_prepare_v2(db->lite, sql, -1, &r->st, NULL) != SQLITE_OK)
            goto lite_error;
        for (int k = 0; k < n_args; k++) {
            char name[16];
            snprintf(name, sizeof name, "$%d", k + 1);
            int at = sqlite3_bind_parameter_index(r->st, name), rc = SQLITE_OK;
            if (at == 0)
                continue;   /* a parameter the statement does not use */
            if (args[k].type == AB_SQL_INT)
                rc = sqlite3_bind_int64(r->st, at, args[k].i);
            else if (args[k].type == AB_SQL_REAL)
                rc = sqlite3_bind_double(r->st, at, args[k].d);
            else if (args[k].text)
                rc = sqlite3_bind_text(r->st, at, args[k].text, -1, SQLITE_TRANSIENT);
            if (rc != SQLITE_OK)
                goto lite_error;
        }
        if (rows) {
            *rows = r;
            return 0;
        }
        int s;
        while ((s = sqlite3_step(r->st)) == SQLITE_ROW)
            ;
        if (s != SQLITE_DONE)
            goto lite_error;
        changed = sqlite3_changes(db->lite);
        sqlite3_finalize(r->st);
        free(r);
        return changed;
    lite_error:
        say(db, sqlite3_errmsg(db->lite), err, len);
        sqlite3_finalize(r->st);
        free(r);
        return -1;
    }
#endif
#ifdef ATTN_HAVE_POSTGRES
    if (db->kind == AB_SQL_POSTGRES) {
        enum { MAX_ARGS = 16 };
        char buf[MAX_ARGS][32];
        const char *values[MAX_ARGS];
        unsigned types[MAX_ARGS];   /* Oid: text 25, int8 20, float8 701 */
        if (n_args > MAX_ARGS) {
            snprintf(err, len, "too many parameters (%d)", n_args);
            free(r);
            return -1;
        }
        for (int k = 0; k < n_args; k++) {
            values[k] = buf[k];
            if (args[k].type == AB_SQL_INT) {
                snprintf(buf[k], sizeof buf[k], "%lld", args[k].i);
                types[k] = 20;
            } else if (args[k].type == AB_SQL_REAL) {
                /* 17 digits: the double comes back bit for bit. */
                snprintf(buf[k], sizeof buf[k], "%.17g", args[k].d);
                types[k] = 701;
            } else {
                values[k] = args[k].text;
                types[k] = 25;
            }
        }
        r->res = n_args == 0 && !rows
                     ? PQexec(db->pg, sql)
                     : PQexecParams(db->pg, sql, n_args, (const Oid *)types, values, NULL, NULL, 0);
        ExecStatusType s = r->res ? PQresultStatus(r->res) : PGRES_FATAL_ERROR;
        if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
            const char *msg = r->res ? PQresultErrorMessage(r->res) : "";
            say(db, msg && msg[0] ? msg : PQerrorMessage(db->pg), err, len);
            PQclear(r->res);
            free(r);
            return -1;
        }
        r->n_rows = PQntuples(r->res);
        r->row = -1;
        changed = s == PGRES_COMMAND_OK ? atoll(PQcmdTuples(r->res)) : 0;
        if (rows) {
            *rows = r;
            return changed;
        }
        PQclear(r->res);
        free(r);
        return changed;
    }
#endif
    (void)sql, (void)args, (void)n_args;
    snprintf(err, len, "no store built in");
    free(r);
    return changed;
}

int ab_sql_next(ab_sql_rows *r)
{
    if (r->failed)
        return -1;
#ifdef ATTN_HAVE_SQLITE
    if (r->db->kind == AB_SQL_SQLITE) {
        int s = sqlite3_step(r->st);
        if (s == SQLITE_ROW)
            return 1;
        if (s == SQLITE_DONE)
            return 0;
        say(r->db, sqlite3_errmsg(r->db->lite), r->error, sizeof r->error);
        r->failed = 1;
        return -1;
    }
#endif
#ifdef ATTN_HAVE_POSTGRES
    if (r->db->kind == AB_SQL_POSTGRES)
        return ++r->row < r->n_rows ? 1 : 0;
#endif
    return 0;
}

const char *ab_sql_text(ab_sql_rows *r, int col)
{
    const char *s = NULL;
#ifdef ATTN_HAVE_SQLITE
    if (r->db->kind == AB_SQL_SQLITE)
        s = (const char *)sqlite3_column_text(r->st, col);
#endif
#ifdef ATTN_HAVE_POSTGRES
    if (r->db->kind == AB_SQL_POSTGRES && r->row >= 0 && r->row < r->n_rows)
        s = PQgetvalue(r->res, r->row, col);
#endif
    (void)col;
    return s ? s : "";
}

long long ab_sql_int(ab_sql_rows *r, int col)
{
#ifdef ATTN_HAVE_SQLITE
    if (r->db->kind == AB_SQL_SQLITE)
        return sqlite3_column_int64(r->st, col);
#endif
    return atoll(ab_sql_text(r, col));
}

double ab_sql_real(ab_sql_rows *r, int col)
{
#ifdef ATTN_HAVE_SQLITE
    if (r->db->kind == AB_SQL_SQLITE)
        return sqlite3_column_double(r->st, col);
#endif
    /* PostgreSQL writes a float8 in its shortest exact form: strtod gives
     * back the stored double. */
    return strtod(ab_sql_text(r, col), NULL);
}

int ab_sql_rows_free(ab_sql_rows *r, char *err, size_t len)
{
    if (!r)
        return 0;
    int failed = r->failed;
    if (failed && err)
        snprintf(err, len, "%s", r->error);
#ifdef ATTN_HAVE_SQLITE
    if (r->db->kind == AB_SQL_SQLITE)
        sqlite3_finalize(r->st);
#endif
#ifdef ATTN_HAVE_POSTGRES
    if (r->db->kind == AB_SQL_POSTGRES)
        PQclear(r->res);
#endif
    free(r);
    return failed ? -1 : 0;
}

long long ab_sql_int_of(ab_sql *db, const char *sql, const ab_sql_arg *args, int n_args,
                        long long dflt, char *err, size_t len)
{
    ab_sql_rows *r;
    if (ab_sql_exec(db, sql, args, n_args, &r, err, len) < 0)
        return -1;
    int got = ab_sql_next(r);
    long long v = got == 1 ? ab_sql_int(r, 0) : dflt;
    return ab_sql_rows_free(r, err, len) != 0 ? -1 : v;
}

int ab_sql_begin(ab_sql *db, char *err, size_t len)
{
    const char *begin = db->kind == AB_SQL_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN";
    return ab_sql_exec(db, begin, NULL, 0, NULL, err, len) < 0 ? -1 : 0;
}

int ab_sql_commit(ab_sql *db, char *err, size_t len)
{
    return ab_sql_exec(db, "COMMIT", NULL, 0, NULL, err, len) < 0 ? -1 : 0;
}

void ab_sql_rollback(ab_sql *db)
{
    char ignored[64];
    ab_sql_exec(db, "ROLLBACK", NULL, 0, NULL, ignored, sizeof ignored);
}
