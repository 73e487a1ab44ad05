/* history.c — the results history in SQLite (history.h); its steps come from
 * steps.c. */
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "atomic_file.h"
#include "history.h"
#include "stats.h"
#include "internal.h"

/* ================================================================================ */
#ifdef ATTN_HAVE_SQLITE
#include <sqlite3.h>

struct ab_history {
    sqlite3 *db;
};

static int exec(sqlite3 *db, const char *sql, char *err, size_t len)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    snprintf(err, len, "%s", msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

static const char SCHEMA[] =
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, machine_id TEXT NOT NULL, "
    "  machine_key TEXT NOT NULL, git_commit TEXT NOT NULL, date TEXT NOT NULL, "
    "  source TEXT NOT NULL, added TEXT NOT NULL, "
    "  UNIQUE (machine_id, git_commit, date, source));"
    "CREATE TABLE results (run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, "
    "  op TEXT NOT NULL, kernel TEXT NOT NULL, shape TEXT NOT NULL, threads INTEGER NOT NULL, "
    "  median_s REAL NOT NULL, min_s REAL NOT NULL, cv REAL NOT NULL, n INTEGER NOT NULL, "
    "  samples TEXT NOT NULL, PRIMARY KEY (run_id, name));"
    "CREATE TABLE steps (machine_id TEXT NOT NULL, name TEXT NOT NULL, "
    "  run_id INTEGER NOT NULL REFERENCES runs(id), git_commit TEXT NOT NULL, "
    "  date TEXT NOT NULL, before_s REAL NOT NULL, after_s REAL NOT NULL, "
    "  PRIMARY KEY (machine_id, name, run_id));"
    "CREATE INDEX results_by_name ON results (name);"
    "PRAGMA user_version = 1;";

/* One integer from a query without parameters; -1 on error. */
static long long query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

ab_history *ab_history_open(const char *path, char *err, size_t len)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    if (ab_mkdirs(dirname(dir), err, len) != 0)
        return NULL;
    ab_history *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    if (sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL)
        != SQLITE_OK) {
        snprintf(err, len, "%s: %s", path, h->db ? sqlite3_errmsg(h->db) : "cannot open");
        ab_history_close(h);
        return NULL;
    }
    /* Concurrent adders wait for each other instead of failing. */
    sqlite3_busy_timeout(h->db, 10000);
    long long version = query_int(h->db, "PRAGMA user_version");
    long long tables = query_int(h->db, "SELECT count(*) FROM sqlite_master");
    if (version < 0 || tables < 0) {
        /* SQLITE_NOTADB and friends: somebody's file, never written over. */
        snprintf(err, len, "%s: not a history database (%s); left as it is", path,
                 sqlite3_errmsg(h->db));
        ab_history_close(h);
        return NULL;
    }
    if (version == 0 && tables == 0) {
        char e[256];
        if (exec(h->db, "BEGIN IMMEDIATE", e, sizeof e) != 0
            || (query_int(h->db, "SELECT count(*) FROM sqlite_master") == 0
                && exec(h->db, SCHEMA, e, sizeof e) != 0)
            || exec(h->db, "COMMIT", e, sizeof e) != 0) {
            snprintf(err, len, "%s: cannot create the history: %s", path, e);
            sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
            ab_history_close(h);
            return NULL;
        }
    } else if (version != AB_HISTORY_SCHEMA) {
        snprintf(err, len, "%s: %s (schema %lld; this attnbench reads schema %d); left as it is",
                 path, version == 0 ? "an SQLite database, but not a history" : "a history of "
                 "another schema", version, AB_HISTORY_SCHEMA);
        ab_history_close(h);
        return NULL;
    }
    return h;
}

void ab_history_close(ab_history *h)
{
    if (!h)
        return;
    sqlite3_close(h->db);
    free(h);
}

/* "op/kernel/shape/threads:N" (attnbench's run names) into its parts; other
 * names leave them empty. */
static void split_name(const char *name, char *op, char *kernel, char *shape, size_t len)
{
    op[0] = kernel[0] = shape[0] = '\0';
    const char *a = strchr(name, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    const char *c = b ? strchr(b + 1, '/') : NULL;
    if (!c || strncmp(c, "/threads:", 9) != 0)
        return;
    snprintf(op, len, "%.*s", (int)(a - name), name);
    snprintf(kernel, len, "%.*s", (int)(b - a - 1), a + 1);
    snprintf(shape, len, "%.*s", (int)(c - b - 1), b + 1);
}

/* Recomputes the steps of one series. */
static int update_steps(sqlite3 *db, const char *machine_id, const char *name,
                        double min_effect, char *err, size_t len)
{
    sqlite3_stmt *q = NULL, *del = NULL, *ins = NULL;
    int rc = -1, n = 0;
    long long run[AB_HISTORY_WINDOW];
    char commit[AB_HISTORY_WINDOW][64], date[AB_HISTORY_WINDOW][48];
    double y[AB_HISTORY_WINDOW];
    /* The newest WINDOW runs, oldest first. */
    const char *sql =
        "SELECT * FROM (SELECT r.id, r.git_commit, r.date, x.median_s FROM results x "
        "JOIN runs r ON r.id = x.run_id WHERE r.machine_id = ?1 AND x.name = ?2 "
        "ORDER BY r.date DESC, r.id DESC LIMIT ?3) ORDER BY date, id";
    if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "DELETE FROM steps WHERE machine_id = ?1 AND name = ?2", -1,
                              &del, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "INSERT INTO steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1,
                              &ins, NULL) != SQLITE_OK)
        goto done;
    sqlite3_bind_text(q, 1, machine_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 3, AB_HISTORY_WINDOW);
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW && n < AB_HISTORY_WINDOW) {
        run[n] = sqlite3_column_int64(q, 0);
        snprintf(commit[n], sizeof commit[n], "%s", (const char *)sqlite3_column_text(q, 1));
        snprintf(date[n], sizeof date[n], "%s", (const char *)sqlite3_column_text(q, 2));
        y[n++] = sqlite3_column_double(q, 3);
    }
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        goto done;
    sqlite3_bind_text(del, 1, machine_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(del, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(del) != SQLITE_DONE)
        goto done;
    int at[AB_HISTORY_WINDOW];
    double before[AB_HISTORY_WINDOW], after[AB_HISTORY_WINDOW];
    int ns = ab_steps_detect(y, n, min_effect, at, before, after, AB_HISTORY_WINDOW);
    for (int s = 0; s < ns; s++) {
        sqlite3_reset(ins);
        sqlite3_bind_text(ins, 1, machine_id, -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_int64(ins, 3, run[at[s]]);
        sqlite3_bind_text(ins, 4, commit[at[s]], -1, SQLITE_STATIC);
        sqlite3_bind_text(ins, 5, date[at[s]], -1, SQLITE_STATIC);
        sqlite3_bind_double(ins, 6, before[s]);
        sqlite3_bind_double(ins, 7, after[s]);
        if (sqlite3_step(ins) != SQLITE_DONE)
            goto done;
    }
    rc = 0;
done:
    if (rc != 0)
        snprintf(err, len, "steps of %.120s: %.120s", name, sqlite3_errmsg(db));
    sqlite3_finalize(q);
    sqlite3_finalize(del);
    sqlite3_finalize(ins);
    return rc;
}

int ab_history_add(ab_history *h, const ab_bench_file *bf, const char *source,
                   const char *commit, double min_effect, char *err, size_t len)
{
    /* A file of another program has no machine key: its host stands in. */
    char key[400], id[24], date[48], added[48];
    if (bf->machine_key[0])
        snprintf(key, sizeof key, "%s", bf->machine_key);
    else
        snprintf(key, sizeof key, "host=%s", bf->host[0] ? bf->host : "unknown");
    if (bf->machine_id[0] && bf->machine_key[0])
        snprintf(id, sizeof id, "%s", bf->machine_id);
    else
        snprintf(id, sizeof id, "%016llx", (unsigned long long)attn_machine_hash(key));
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(added, sizeof added, "%Y-%m-%dT%H:%M:%S+0000", &tm);
    snprintf(date, sizeof date, "%s", bf->date[0] ? bf->date : added);
    const char *git = commit ? commit : bf->git_commit[0] ? bf->git_commit : "unknown";

    sqlite3 *db = h->db;
    sqlite3_stmt *run = NULL, *res = NULL;
    char e[256] = "";
    int rc = -1;
    if (exec(db, "BEGIN IMMEDIATE", e, sizeof e) != 0)
        goto done;
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO runs (machine_id, machine_key, git_commit, "
                           "date, source, added) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &run,
                           NULL) != SQLITE_OK
        || sqlite3_prepare_v2(db, "INSERT INTO results VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                              "?10, ?11)", -1, &res, NULL) != SQLITE_OK)
        goto sql_error;
    sqlite3_bind_text(run, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 2, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 3, git, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 4, date, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 5, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(run, 6, added, -1, SQLITE_STATIC);
    if (sqlite3_step(run) != SQLITE_DONE)
        goto sql_error;
    if (sqlite3_changes(db) == 0) {
        rc = 1;   /* this run is already in the history */
        goto done;
    }
    long long run_id = sqlite3_last_insert_rowid(db);
    for (int i = 0; i < bf->n; i++) {
        const ab_sample_set *s = &bf->set[i];
        ab_stats st;
        if (ab_stats_compute(s->t, s->n, &st) != 0 || !(st.min > 0) || !isfinite(st.max)) {
            snprintf(e, sizeof e, "%.200s: unusable times", s->name);
            goto done;
        }
        char op[256], kernel[256], shape[256], samples[AB_MAX_REP * 18];
        split_name(s->name, op, kernel, shape, sizeof op);
        size_t used = 0;
        for (int k = 0; k < s->n && used < sizeof samples; k++)
            used += (size_t)snprintf(samples + used, sizeof samples - used, "%s%.9g", k ? " " : "",
                                     s->t[k]);
        sqlite3_reset(res);
        sqlite3_bind_int64(res, 1, run_id);
        sqlite3_bind_text(res, 2, s->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(res, 3, op, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(res, 4, kernel, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(res, 5, shape, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(res, 6, s->threads);
        sqlite3_bind_double(res, 7, st.median);
        sqlite3_bind_double(res, 8, st.min);
        sqlite3_bind_double(res, 9, st.cv);
        sqlite3_bind_int(res, 10, s->n);
        sqlite3_bind_text(res, 11, samples, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(res) != SQLITE_DONE)
            goto sql_error;
    }
    for (int i = 0; i < bf->n; i++)
        if (update_steps(db, id, bf->set[i].name, min_effect, e, sizeof e) != 0)
            goto done;
    if (exec(db, "COMMIT", e, sizeof e) != 0)
        goto done;
    rc = 0;
    goto finish;
sql_error:
    snprintf(e, sizeof e, "%s", sqlite3_errmsg(db));
done:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    if (rc < 0)
        snprintf(err, len, "%s", e[0] ? e : "failed");
finish:
    sqlite3_finalize(run);
    sqlite3_finalize(res);
    return rc;
}

static void fmt_seconds(double s, char *buf, size_t len)
{
    if (s >= 1.0)
        snprintf(buf, len, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g us", s * 1e6);
}

int ab_history_show(ab_history *h, const char *name, const char *machine_id, char *err,
                    size_t len)
{
    sqlite3_stmt *q = NULL, *steps = NULL;
    int rc = -1;
    const char *series =
        "SELECT r.machine_id, x.name, count(*), "
        "  (SELECT y.median_s FROM results y JOIN runs s ON s.id = y.run_id "
        "   WHERE s.machine_id = r.machine_id AND y.name = x.name "
        "   ORDER BY s.date DESC, s.id DESC LIMIT 1) "
        "FROM results x JOIN runs r ON r.id = x.run_id "
        "WHERE (?1 IS NULL OR r.machine_id = ?1) GROUP BY r.machine_id, x.name "
        "ORDER BY r.machine_id, x.name";
    const char *runs =
        "SELECT r.machine_id, r.date, r.git_commit, x.median_s, x.min_s, x.cv, x.n, "
        "  EXISTS (SELECT 1 FROM steps t WHERE t.run_id = r.id AND t.name = x.name) "
        "FROM results x JOIN runs r ON r.id = x.run_id "
        "WHERE x.name = ?2 AND (?1 IS NULL OR r.machine_id = ?1) "
        "ORDER BY r.machine_id, r.date, r.id";
    if (sqlite3_prepare_v2(h->db, name ? runs : series, -1, &q, NULL) != SQLITE_OK
        || sqlite3_prepare_v2(h->db, "SELECT git_commit, date, before_s, after_s FROM steps "
                              "WHERE machine_id = ?1 AND name = ?2 ORDER BY date", -1, &steps,
                              NULL) != SQLITE_OK)
        goto done;
    if (machine_id)
        sqlite3_bind_text(q, 1, machine_id, -1, SQLITE_STATIC);
    if (name)
        sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
    int r, rows = 0;
    if (name)
        printf("%-16s  %-24s  %-14s %10s %10s %6s %4s\n", "machine", "date", "commit", "median",
               "min", "CV", "reps");
    else
        printf("%-16s  %-64s %5s %10s  %s\n", "machine", "benchmark", "runs", "latest", "steps");
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        rows++;
        const char *mid = (const char *)sqlite3_column_text(q, 0);
        char a[32], b[32];
        if (name) {
            fmt_seconds(sqlite3_column_double(q, 3), a, sizeof a);
            fmt_seconds(sqlite3_column_double(q, 4), b, sizeof b);
            printf("%-16s  %-24s  %-14s %10s %10s %5.1f%% %4d%s\n", mid,
                   (const char *)sqlite3_column_text(q, 1), (const char *)sqlite3_column_text(q, 2),
                   a, b, 100 * sqlite3_column_double(q, 5), sqlite3_column_int(q, 6),
                   sqlite3_column_int(q, 7) ? "  <- step" : "");
            continue;
        }
        const char *bench = (const char *)sqlite3_column_text(q, 1);
        fmt_seconds(sqlite3_column_double(q, 3), a, sizeof a);
        printf("%-16s  %-64s %5d %10s ", mid, bench, sqlite3_column_int(q, 2), a);
        sqlite3_reset(steps);
        sqlite3_bind_text(steps, 1, mid, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(steps, 2, bench, -1, SQLITE_TRANSIENT);
        int any = 0;
        while (sqlite3_step(steps) == SQLITE_ROW) {
            double before = sqlite3_column_double(steps, 2), after = sqlite3_column_double(steps, 3);
            printf(" %s %s %+.1f%% (%s)", any ? "," : "", after > before ? "slower" : "faster",
                   100 * (after / before - 1), (const char *)sqlite3_column_text(steps, 0));
            any = 1;
        }
        printf("%s\n", any ? "" : " none");
    }
    if (r != SQLITE_DONE)
        goto done;
    if (rows == 0)
        printf(name ? "no runs of %s\n" : "the history is empty%s\n", name ? name : "");
    rc = 0;
done:
    if (rc != 0)
        snprintf(err, len, "%s", sqlite3_errmsg(h->db));
    sqlite3_finalize(q);
    sqlite3_finalize(steps);
    return rc;
}

#else /* no SQLite */

static const char NO_SQLITE[] =
    "attnbench was built without SQLite (install libsqlite3-dev and rebuild)";

ab_history *ab_history_open(const char *path, char *err, size_t len)
{
    (void)path;
    snprintf(err, len, "%s", NO_SQLITE);
    return NULL;
}

void ab_history_close(ab_history *h)
{
    (void)h;
}

int ab_history_add(ab_history *h, const ab_bench_file *bf, const char *source,
                   const char *commit, double min_effect, char *err, size_t len)
{
    (void)h, (void)bf, (void)source, (void)commit, (void)min_effect;
    snprintf(err, len, "%s", NO_SQLITE);
    return -1;
}

int ab_history_show(ab_history *h, const char *name, const char *machine_id, char *err,
                    size_t len)
{
    (void)h, (void)name, (void)machine_id;
    snprintf(err, len, "%s", NO_SQLITE);
    return -1;
}

#endif /* ATTN_HAVE_SQLITE */
