/* history.c — the results history and the fleet's wisdom (history.h) in
 * either store of sql.h; its steps come from steps.c. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "history.h"
#include "sql.h"
#include "stats.h"

struct ab_history {
    ab_sql *db;
};

/* The schema, in the SQL both stores take; %s is the run id's type (SQLite's
 * rowid alias, PostgreSQL's identity column). The steps of a series live
 * beside its runs so that readers never compute them differently. */
static const char SCHEMA[] =
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE machines (machine_id TEXT PRIMARY KEY, machine_key TEXT NOT NULL, "
    "  first_added TEXT NOT NULL, last_added TEXT NOT NULL);"
    "CREATE TABLE runs (id %s, "
    "  machine_id TEXT NOT NULL REFERENCES machines(machine_id), machine_key TEXT NOT NULL, "
    "  git_commit TEXT NOT NULL, date TEXT NOT NULL, source TEXT NOT NULL, added TEXT NOT NULL, "
    "  content_sha256 TEXT NOT NULL UNIQUE);"
    "CREATE TABLE results (run_id BIGINT NOT NULL REFERENCES runs(id), name TEXT NOT NULL, "
    "  op TEXT NOT NULL, kernel TEXT NOT NULL, shape TEXT NOT NULL, threads INTEGER NOT NULL, "
    "  median_s DOUBLE PRECISION NOT NULL, min_s DOUBLE PRECISION NOT NULL, "
    "  cv DOUBLE PRECISION NOT NULL, n INTEGER NOT NULL, samples TEXT NOT NULL, "
    "  PRIMARY KEY (run_id, name));"
    "CREATE TABLE steps (machine_id TEXT NOT NULL, name TEXT NOT NULL, "
    "  run_id BIGINT NOT NULL REFERENCES runs(id), git_commit TEXT NOT NULL, "
    "  date TEXT NOT NULL, before_s DOUBLE PRECISION NOT NULL, after_s DOUBLE PRECISION NOT NULL, "
    "  PRIMARY KEY (machine_id, name, run_id));"
    "CREATE TABLE wisdom (machine_key TEXT PRIMARY KEY, records TEXT NOT NULL, "
    "  updated TEXT NOT NULL, updated_by TEXT NOT NULL);"
    "CREATE INDEX results_by_name ON results (name);"
    "CREATE INDEX runs_by_machine ON runs (machine_id, date);"
    "INSERT INTO meta VALUES ('schema', '" AB_HISTORY_SCHEMA_TEXT "');";

/* The tables of the schema: a PostgreSQL database that has any of them
 * without meta's version is somebody else's, never created over. */
static const char OUR_TABLES[] =
    "'meta', 'machines', 'runs', 'results', 'steps', 'wisdom'";

static void now_iso(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%S+0000", &tm);
}

/* The schema version of the store: 0 when it holds nothing at all, -2 when
 * it holds something that is not a history (said in err), -1 on error. */
static long long schema_of(ab_sql *db, char *err, size_t len)
{
    if (ab_sql_kind_of(db) == AB_SQL_SQLITE) {
        /* PRAGMA user_version: schema 1 had no meta table. */
        long long version = ab_sql_int_of(db, "PRAGMA user_version", NULL, 0, 0, err, len);
        long long tables = version < 0 ? -1
                           : ab_sql_int_of(db, "SELECT count(*) FROM sqlite_master", NULL, 0, 0,
                                           err, len);
        if (version < 0 || tables < 0) {
            char why[300];
            snprintf(why, sizeof why, "%s", err);
            snprintf(err, len, "not a history database (%s)", why);
            return -2;
        }
        if (version == 0 && tables > 0) {
            snprintf(err, len, "an SQLite database, but not a history");
            return -2;
        }
        return version;
    }
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT count(*), sum(CASE WHEN table_name = 'meta' THEN 1 ELSE 0 "
             "END) FROM information_schema.tables WHERE table_schema = current_schema() AND "
             "table_name IN (%s)", OUR_TABLES);
    ab_sql_rows *r;
    if (ab_sql_exec(db, sql, NULL, 0, &r, err, len) < 0)
        return -1;
    long long ours = 0, meta = 0;
    if (ab_sql_next(r) == 1) {
        ours = ab_sql_int(r, 0);
        meta = ab_sql_int(r, 1);
    }
    if (ab_sql_rows_free(r, err, len) != 0)
        return -1;
    if (ours == 0)
        return 0;
    if (!meta) {
        snprintf(err, len, "has tables named like a history's (%s) but no meta table: not a "
                 "history", OUR_TABLES);
        return -2;
    }
    long long v = ab_sql_int_of(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'schema'",
                                NULL, 0, -1, err, len);
    if (v == -1 && !err[0])
        snprintf(err, len, "its meta table names no schema: not a history");
    return v < 0 ? -2 : v;
}

/* Creates the schema in an empty store, once however many open it at the
 * same moment: SQLite's BEGIN IMMEDIATE lets one in at a time; on
 * PostgreSQL a transaction-scoped advisory lock does, and the one that
 * comes second finds the tables made. */
static int create_schema(ab_sql *db, char *err, size_t len)
{
    int pg = ab_sql_kind_of(db) == AB_SQL_POSTGRES;
    char ddl[2 * sizeof SCHEMA + 200], text[2 * sizeof SCHEMA];
    /* PostgreSQL's text columns compare byte by byte, as SQLite's do: the
     * series are ordered by their date text, and a database's own
     * collation (en_US.UTF-8 skips punctuation) must not reorder them. */
    size_t n = 0;
    for (const char *p = SCHEMA; *p; p++) {
        text[n++] = *p;
        if (pg && strncmp(p, " TEXT", 5) == 0) {
            n += (size_t)snprintf(text + n, sizeof text - n, "TEXT COLLATE \"C\"");
            p += 4;
        }
    }
    text[n] = '\0';
    snprintf(ddl, sizeof ddl, text,
             pg ? "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY");
    if (!pg)
        strcat(ddl, "PRAGMA user_version = " AB_HISTORY_SCHEMA_TEXT ";");
    if (ab_sql_begin(db, err, len) != 0)
        return -1;
    /* The lock's key: any number of attnbench's own. */
    if (pg && ab_sql_exec(db, "SELECT pg_advisory_xact_lock(478998668661)", NULL, 0, NULL, err,
                          len) < 0)
        goto fail;
    long long v = schema_of(db, err, len);
    if (v < 0)
        goto fail;
    if (v == 0 && ab_sql_exec(db, ddl, NULL, 0, NULL, err, len) < 0)
        goto fail;
    if (ab_sql_commit(db, err, len) == 0)
        return 0;
fail:
    ab_sql_rollback(db);
    return -1;
}

/* ab_history_open, or with create 0 ab_history_open_existing's store:
 * *none set when it holds no history (no schema: an empty file or
 * database, which is then left as it is). */
static ab_history *open_store(const char *target, int create, int *none, char *err, size_t len)
{
    ab_sql *db = ab_sql_open(target, err, len);
    if (!db)
        return NULL;
    char why[400] = "";
    long long version = schema_of(db, why, sizeof why);
    if (version == 0 && !create) {
        *none = 1;
        snprintf(err, len, "%s: no history there (history add creates one)", ab_sql_name(db));
        ab_sql_close(db);
        return NULL;
    }
    if (version == 0) {
        if (create_schema(db, why, sizeof why) != 0) {
            snprintf(err, len, "%s: cannot create the history: %s", ab_sql_name(db), why);
            ab_sql_close(db);
            return NULL;
        }
        version = AB_HISTORY_SCHEMA;
    }
    if (version == -1) {
        snprintf(err, len, "%s: %s", ab_sql_name(db), why);
    } else if (version == -2) {
        snprintf(err, len, "%s: %s; left as it is", ab_sql_name(db), why);
    } else if (version != AB_HISTORY_SCHEMA) {
        snprintf(err, len, "%s: a history of another schema (schema %lld; this attnbench reads "
                 "schema %d); left as it is", ab_sql_name(db), version, AB_HISTORY_SCHEMA);
    } else {
        ab_history *h = calloc(1, sizeof *h);
        if (h) {
            h->db = db;
            return h;
        }
        snprintf(err, len, "out of memory");
    }
    ab_sql_close(db);
    return NULL;
}

ab_history *ab_history_open(const char *target, char *err, size_t len)
{
    int none = 0;
    return open_store(target, 1, &none, err, len);
}

ab_history *ab_history_open_existing(const char *target, int *none, char *err, size_t len)
{
    *none = 0;
    /* Before opening: SQLite would create the file (and ab_sql_open its
     * directories). */
    if (!ab_sql_is_url(target) && access(target, F_OK) != 0) {
        *none = 1;
        snprintf(err, len, "%.400s: no history there (history add creates one)", target);
        return NULL;
    }
    return open_store(target, 0, none, err, len);
}

void ab_history_close(ab_history *h)
{
    if (!h)
        return;
    ab_sql_close(h->db);
    free(h);
}

const char *ab_history_name(const ab_history *h)
{
    return ab_sql_name(h->db);
}

/* The n digits at p as a number, or -1 when any is not a digit. */
static int digits(const char *p, int n)
{
    int v = 0;
    for (int k = 0; k < n; k++) {
        if (!isdigit((unsigned char)p[k]))
            return -1;
        v = 10 * v + (p[k] - '0');
    }
    return v;
}

/* An ISO 8601 date with its UTC offset ("2026-11-23T01:50:42+0100", with
 * "+01:00", "Z", a space for the T or fractional seconds as Google
 * Benchmark and other writers vary) as the same moment in UTC,
 * "2026-11-23T00:50:42+0000", into out; -1 (out untouched) for anything
 * else. The series are ordered by the date's text: attnbench writes its
 * local time, so without this the runs of machines in other time zones (one
 * machine id: identical runners of a fleet) or across a change to summer
 * time would be ordered by their clocks' readings, not by when they ran. */
static int utc_date(const char *in, char *out, size_t len)
{
    if (strlen(in) < 19)
        return -1;
    int year = digits(in, 4), mon = in[4] == '-' ? digits(in + 5, 2) : -1;
    int day = in[7] == '-' ? digits(in + 8, 2) : -1;
    int hour = in[10] == 'T' || in[10] == ' ' ? digits(in + 11, 2) : -1;
    int min = in[13] == ':' ? digits(in + 14, 2) : -1, sec = in[16] == ':' ? digits(in + 17, 2) : -1;
    if (year < 0 || mon < 1 || mon > 12 || day < 1 || day > 31 || hour < 0 || hour > 23
        || min < 0 || min > 59 || sec < 0 || sec > 60)
        return -1;
    const char *p = in + 19;
    if (*p == '.' && isdigit((unsigned char)p[1]))
        for (p++; isdigit((unsigned char)*p); p++)
            ;
    long offset = 0;    /* seconds east of UTC */
    if (p[0] == 'Z' && !p[1]) {
        offset = 0;
    } else if (p[0] == '+' || p[0] == '-') {
        int oh = digits(p + 1, 2), om = digits(p + 3 + (p[3] == ':'), 2);
        if (oh < 0 || oh > 23 || om < 0 || om > 59 || p[5 + (p[3] == ':')] != '\0')
            return -1;
        offset = (p[0] == '-' ? -1 : 1) * (oh * 3600L + om * 60L);
    } else {
        return -1;      /* no offset: a local time of somewhere unknown, kept as written */
    }
    struct tm tm = { .tm_year = year - 1900, .tm_mon = mon - 1, .tm_mday = day,
                     .tm_hour = hour, .tm_min = min, .tm_sec = sec };
    time_t t = timegm(&tm) - offset;
    if (!gmtime_r(&t, &tm) || strftime(out, len, "%Y-%m-%dT%H:%M:%S+0000", &tm) == 0)
        return -1;
    return 0;
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

/* A series' newest AB_HISTORY_WINDOW runs, oldest first: the window its
 * steps and drift are found in. Commit ids of 40 hex digits (SHA-1) or 64
 * (SHA-256), whole. */
typedef struct {
    int n;
    long long run[AB_HISTORY_WINDOW];
    char commit[AB_HISTORY_WINDOW][72], date[AB_HISTORY_WINDOW][48];
    double y[AB_HISTORY_WINDOW];
} series_window;

static int load_window(ab_sql *db, const char *machine_id, const char *name, series_window *w,
                       char *err, size_t len)
{
    const ab_sql_arg key[] = { AB_SQL_T(machine_id), AB_SQL_T(name), AB_SQL_I(AB_HISTORY_WINDOW) };
    ab_sql_rows *r;
    w->n = 0;   /* empty, whatever fails */
    if (ab_sql_exec(db, "SELECT * FROM (SELECT r.id, r.git_commit, r.date, x.median_s "
                    "FROM results x JOIN runs r ON r.id = x.run_id "
                    "WHERE r.machine_id = $1 AND x.name = $2 "
                    "ORDER BY r.date DESC, r.id DESC LIMIT $3) AS newest ORDER BY date, id",
                    key, 3, &r, err, len) < 0)
        return -1;
    while (w->n < AB_HISTORY_WINDOW && ab_sql_next(r) == 1) {
        int i = w->n++;
        w->run[i] = ab_sql_int(r, 0);
        snprintf(w->commit[i], sizeof w->commit[i], "%s", ab_sql_text(r, 1));
        snprintf(w->date[i], sizeof w->date[i], "%s", ab_sql_text(r, 2));
        w->y[i] = ab_sql_real(r, 3);
    }
    return ab_sql_rows_free(r, err, len);
}

/* Recomputes the steps of one series from its newest WINDOW runs. */
static int update_steps(ab_sql *db, const char *machine_id, const char *name, double min_effect,
                        char *err, size_t len)
{
    series_window *w = malloc(sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int rc = load_window(db, machine_id, name, w, err, len);
    /* Only the window's steps are found again: those of runs before it
     * stay as they were found (all of them were deleted, so a series past
     * 256 runs lost its old steps and `steps --since` an old commit missed
     * them). */
    const ab_sql_arg since[] = { AB_SQL_T(machine_id), AB_SQL_T(name),
                                 AB_SQL_T(w->n > 0 ? w->date[0] : "") };
    if (rc == 0
        && ab_sql_exec(db, "DELETE FROM steps WHERE machine_id = $1 AND name = $2 AND date >= $3",
                       since, 3, NULL, err, len) < 0)
        rc = -1;
    int at[AB_HISTORY_WINDOW];
    double before[AB_HISTORY_WINDOW], after[AB_HISTORY_WINDOW];
    int ns = rc == 0 ? ab_steps_detect(w->y, w->n, min_effect, at, before, after,
                                       AB_HISTORY_WINDOW) : 0;
    for (int s = 0; s < ns && rc == 0; s++) {
        const ab_sql_arg step[] = { AB_SQL_T(machine_id), AB_SQL_T(name), AB_SQL_I(w->run[at[s]]),
                                    AB_SQL_T(w->commit[at[s]]), AB_SQL_T(w->date[at[s]]),
                                    AB_SQL_R(before[s]), AB_SQL_R(after[s]) };
        if (ab_sql_exec(db, "INSERT INTO steps VALUES ($1, $2, $3, $4, $5, $6, $7)", step, 7,
                        NULL, err, len) < 0)
            rc = -1;
    }
    free(w);
    return rc;
}

/* 1 when s is valid UTF-8 (RFC 3629: no overlong forms, surrogates or
 * code points past U+10FFFF). PostgreSQL refuses anything else; SQLite
 * would store it, so both refuse it here and give the same answer. */
static int utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : (*p & 0xE0) == 0xC0 ? 1 : (*p & 0xF0) == 0xE0 ? 2
              : (*p & 0xF8) == 0xF0 ? 3 : -1;
        if (n < 0 || (n == 1 && *p < 0xC2))
            return 0;
        unsigned cp = n == 0 ? *p : *p & (0x3F >> n);
        for (int k = 1; k <= n; k++) {
            if ((p[k] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (p[k] & 0x3F);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
            || (n == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        p += n + 1;
    }
    return 1;
}

/* What of bf the store would refuse, checked before the store is touched:
 * text stored as it is must be UTF-8, and every benchmark needs times the
 * statistics take. One line naming the first refusal, -1; else 0. */
static int check_file(const ab_bench_file *bf, const char *key, const char *commit, char *err,
                      size_t len)
{
    const char *what = !utf8_valid(key) ? "its machine key" : !utf8_valid(commit) ? "its commit"
                     : !utf8_valid(bf->date) ? "its date" : NULL;
    for (int i = 0; !what && i < bf->n; i++)
        if (!utf8_valid(bf->set[i].name))
            what = "a benchmark name";
    if (what) {
        snprintf(err, len, "%s is not UTF-8 (JSON text must be)", what);
        return -1;
    }
    for (int i = 0; i < bf->n; i++) {
        ab_stats st;
        const ab_sample_set *s = &bf->set[i];
        if (ab_stats_compute(s->t, s->n, &st) != 0 || !(st.min > 0) || !isfinite(st.max)) {
            snprintf(err, len, "%.200s: unusable times", s->name);
            return -1;
        }
    }
    return 0;
}

/* The results of bf into run run_id. */
static int add_results(ab_sql *db, long long run_id, const ab_bench_file *bf, char *err,
                       size_t len)
{
    for (int i = 0; i < bf->n; i++) {
        const ab_sample_set *s = &bf->set[i];
        ab_stats st;
        if (ab_stats_compute(s->t, s->n, &st) != 0 || !(st.min > 0) || !isfinite(st.max)) {
            snprintf(err, len, "%.200s: unusable times", s->name);
            return -1;
        }
        char op[256], kernel[256], shape[256], samples[AB_MAX_REP * 18];
        split_name(s->name, op, kernel, shape, sizeof op);
        size_t used = 0;
        samples[0] = '\0';
        for (int k = 0; k < s->n && used < sizeof samples; k++)
            used += (size_t)snprintf(samples + used, sizeof samples - used, "%s%.9g", k ? " " : "",
                                     s->t[k]);
        const ab_sql_arg row[] = { AB_SQL_I(run_id), AB_SQL_T(s->name), AB_SQL_T(op),
                                   AB_SQL_T(kernel), AB_SQL_T(shape), AB_SQL_I(s->threads),
                                   AB_SQL_R(st.median), AB_SQL_R(st.min), AB_SQL_R(st.cv),
                                   AB_SQL_I(s->n), AB_SQL_T(samples) };
        if (ab_sql_exec(db, "INSERT INTO results VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                        "$10, $11)", row, 11, NULL, err, len) < 0)
            return -1;
    }
    return 0;
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
    now_iso(added, sizeof added);
    if (!bf->date[0] || utc_date(bf->date, date, sizeof date) != 0)
        snprintf(date, sizeof date, "%s", bf->date[0] ? bf->date : added);
    const char *git = commit ? commit : bf->git_commit[0] ? bf->git_commit : "unknown";
    /* The file's path is only a note: a name that is not UTF-8 (a path
     * may be any bytes) is kept with '?' for its odd bytes. */
    char where[512];
    snprintf(where, sizeof where, "%s", source);
    if (!utf8_valid(where))
        for (unsigned char *c = (unsigned char *)where; *c; c++)
            if (*c >= 0x80)
                *c = '?';
    if (check_file(bf, key, git, err, len) != 0)
        return -2;

    ab_sql *db = h->db;
    if (ab_sql_begin(db, err, len) != 0)
        return -1;
    /* The machine's row, upserted first, is the lock that orders adds: on
     * PostgreSQL the upsert holds its row lock to the commit, so the adds
     * of one machine queue here (those of other machines go on) and each
     * computes its steps from every run committed before it. */
    const ab_sql_arg machine[] = { AB_SQL_T(id), AB_SQL_T(key), AB_SQL_T(added) };
    ab_sql_rows *r = NULL;
    if (ab_sql_exec(db, "INSERT INTO machines VALUES ($1, $2, $3, $3) ON CONFLICT (machine_id) "
                    "DO UPDATE SET last_added = excluded.last_added", machine, 3, NULL, err,
                    len) < 0)
        goto fail;
    /* A file already held (the same bytes, whoever added it under whatever
     * name) adds nothing. */
    const ab_sql_arg run[] = { AB_SQL_T(id), AB_SQL_T(key), AB_SQL_T(git), AB_SQL_T(date),
                               AB_SQL_T(where), AB_SQL_T(added), AB_SQL_T(bf->content_sha256) };
    if (ab_sql_exec(db, "INSERT INTO runs (machine_id, machine_key, git_commit, date, source, "
                    "added, content_sha256) VALUES ($1, $2, $3, $4, $5, $6, $7) "
                    "ON CONFLICT (content_sha256) DO NOTHING RETURNING id", run, 7, &r, err,
                    len) < 0)
        goto fail;
    int fresh = ab_sql_next(r);
    long long run_id = fresh == 1 ? ab_sql_int(r, 0) : -1;
    if (ab_sql_rows_free(r, err, len) != 0)
        goto fail;
    if (fresh != 1) {
        ab_sql_rollback(db);
        return 1;
    }
    if (add_results(db, run_id, bf, err, len) != 0)
        goto fail;
    for (int i = 0; i < bf->n; i++)
        if (update_steps(db, id, bf->set[i].name, min_effect, err, len) != 0)
            goto fail;
    if (ab_sql_commit(db, err, len) == 0)
        return 0;
fail:
    ab_sql_rollback(db);
    return -1;
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

/* A step as text: "slower +20.0% (COMMIT)". */
static void fmt_step(double before, double after, const char *commit, char *buf, size_t len)
{
    snprintf(buf, len, "%s %+.1f%% (%s)", after > before ? "slower" : "faster",
             100 * (after / before - 1), commit);
}

/* The smallest drift over a series' window that show mentions: the
 * default minimum effect of a step. */
#define AB_HISTORY_DRIFT_SHOWN 0.05

/* The drift of one series between its steps (ab_steps_drift) over its
 * window's runs dated after `after` (NULL: the whole window), from the
 * last run before them to the newest, the trend found in those runs
 * alone, where it makes min_effect or more: the factor, *runs the runs
 * dated after (the whole window's with NULL). 1 where there is none; -1
 * with err when the store failed. w: scratch. */
static double series_drift(ab_sql *db, const char *machine_id, const char *name,
                           const char *after, double min_effect, series_window *w, int *runs,
                           char *err, size_t len)
{
    *runs = 0;
    if (load_window(db, machine_id, name, w, err, len) != 0)
        return -1.0;
    const ab_sql_arg series[] = { AB_SQL_T(machine_id), AB_SQL_T(name) };
    ab_sql_rows *st;
    if (ab_sql_exec(db, "SELECT run_id FROM steps WHERE machine_id = $1 AND name = $2", series, 2,
                    &st, err, len) < 0)
        return -1.0;
    int at[AB_HISTORY_WINDOW], n_at = 0;
    memset(at, 0, sizeof at);   /* at[k]: 1 when the window's run k is a step's */
    while (ab_sql_next(st) == 1)
        for (int k = 0; k < w->n; k++)
            at[k] |= w->run[k] == ab_sql_int(st, 0);
    if (ab_sql_rows_free(st, err, len) != 0)
        return -1.0;
    for (int k = 0; k < w->n; k++)   /* now the steps' runs, ascending */
        if (at[k])
            at[n_at++] = k;
    int first = 0;   /* the window's first run dated after `after` */
    while (after && first < w->n && strcmp(w->date[first], after) <= 0)
        first++;
    *runs = w->n - first;
    /* The trend is the one of those runs and the run before them, not of
     * the whole window: a series that drifted before `after` and has been
     * flat since was said to drift since (its window's slope times the
     * runs since), and failed the gate. The steps' runs renumbered from
     * there; a step at the run before is no bound inside them. */
    int start = first > 0 ? first - 1 : 0, k = 0;
    for (int s = 0; s < n_at; s++)
        if (at[s] > start)
            at[k++] = at[s] - start;
    return ab_steps_drift(w->y + start, w->n - start, at, k, min_effect);
}

/* One line per series of the machine(s): runs, latest median, steps, and
 * a drift between them (series_drift) of 5% or more over the window. */
static int show_series(ab_sql *db, const char *machine_id, FILE *out, char *err, size_t len)
{
    const ab_sql_arg which[] = { AB_SQL_T(machine_id) };
    ab_sql_rows *q, *st;
    if (ab_sql_exec(db,
                    "SELECT r.machine_id, m.machine_key, x.name, count(*), "
                    "  (SELECT y.median_s FROM results y JOIN runs s ON s.id = y.run_id "
                    "   WHERE s.machine_id = r.machine_id AND y.name = x.name "
                    "   ORDER BY s.date DESC, s.id DESC LIMIT 1), "
                    "  (SELECT count(DISTINCT u.id) FROM runs u WHERE u.machine_id = r.machine_id) "
                    "FROM results x JOIN runs r ON r.id = x.run_id "
                    "JOIN machines m ON m.machine_id = r.machine_id "
                    "WHERE ($1 IS NULL OR r.machine_id = $1) "
                    "GROUP BY r.machine_id, m.machine_key, x.name ORDER BY r.machine_id, x.name",
                    which, 1, &q, err, len) < 0)
        return -1;
    char last[64] = "";
    int rows = 0, rc = 0;
    series_window *w = malloc(sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        rc = -1;
    }
    while (rc == 0 && ab_sql_next(q) == 1) {
        rows++;
        const char *mid = ab_sql_text(q, 0), *bench = ab_sql_text(q, 2);
        if (strcmp(mid, last) != 0) {
            fprintf(out, "%smachine %s (%lld runs): %s\n", rows > 1 ? "\n" : "", mid,
                   ab_sql_int(q, 5), ab_sql_text(q, 1));
            fprintf(out, "  %-64s %5s %10s  %s\n", "benchmark", "runs", "latest", "steps");
            snprintf(last, sizeof last, "%s", mid);
        }
        char a[32];
        fmt_seconds(ab_sql_real(q, 4), a, sizeof a);
        fprintf(out, "  %-64s %5lld %10s ", bench, ab_sql_int(q, 3), a);
        const ab_sql_arg series[] = { AB_SQL_T(mid), AB_SQL_T(bench) };
        rc = ab_sql_exec(db, "SELECT git_commit, before_s, after_s FROM steps "
                         "WHERE machine_id = $1 AND name = $2 ORDER BY date", series, 2, &st, err,
                         len) < 0 ? -1 : 0;
        int any = 0, runs;
        while (rc == 0 && ab_sql_next(st) == 1) {
            char s[160];
            fmt_step(ab_sql_real(st, 1), ab_sql_real(st, 2), ab_sql_text(st, 0), s, sizeof s);
            fprintf(out, "%s %s", any ? "," : "", s);
            any = 1;
        }
        if (rc == 0)
            rc = ab_sql_rows_free(st, err, len);
        fprintf(out, "%s", any ? "" : " none");
        /* A slow drift is no step (steps.h); said here, with its size over
         * the window, where it reaches the default minimum effect. */
        double drift = rc == 0 ? series_drift(db, mid, bench, NULL, AB_HISTORY_DRIFT_SHOWN, w,
                                              &runs, err, len) : 1.0;
        rc = drift < 0.0 ? -1 : rc;
        if (drift > 0.0 && drift != 1.0)
            fprintf(out, "; drift %+.1f%% over %d runs", 100 * (drift - 1), runs);
        fprintf(out, "\n");
    }
    free(w);
    if (ab_sql_rows_free(q, rc == 0 ? err : NULL, len) != 0)
        rc = -1;
    if (rc == 0 && rows == 0)
        fprintf(out, machine_id ? "no runs of machine %s\n" : "the history is empty\n", machine_id);
    return rc;
}

/* One benchmark's series run by run. */
static int show_runs(ab_sql *db, const char *name, const char *machine_id, FILE *out, char *err,
                     size_t len)
{
    const ab_sql_arg which[] = { AB_SQL_T(machine_id), AB_SQL_T(name) };
    ab_sql_rows *q;
    if (ab_sql_exec(db,
                    "SELECT r.machine_id, r.date, r.git_commit, x.median_s, x.min_s, x.cv, x.n, "
                    "  CASE WHEN EXISTS (SELECT 1 FROM steps t WHERE t.run_id = r.id "
                    "                    AND t.name = x.name) THEN 1 ELSE 0 END "
                    "FROM results x JOIN runs r ON r.id = x.run_id "
                    "WHERE x.name = $2 AND ($1 IS NULL OR r.machine_id = $1) "
                    "ORDER BY r.machine_id, r.date, r.id", which, 2, &q, err, len) < 0)
        return -1;
    fprintf(out, "%-16s  %-24s  %-14s %10s %10s %6s %4s\n", "machine", "date", "commit", "median",
           "min", "CV", "reps");
    int rows = 0;
    while (ab_sql_next(q) == 1) {
        rows++;
        char a[32], b[32];
        fmt_seconds(ab_sql_real(q, 3), a, sizeof a);
        fmt_seconds(ab_sql_real(q, 4), b, sizeof b);
        fprintf(out, "%-16s  %-24s  %-14s %10s %10s %5.1f%% %4lld%s\n", ab_sql_text(q, 0),
               ab_sql_text(q, 1), ab_sql_text(q, 2), a, b, 100 * ab_sql_real(q, 5),
               ab_sql_int(q, 6), ab_sql_int(q, 7) ? "  <- step" : "");
    }
    if (ab_sql_rows_free(q, err, len) != 0)
        return -1;
    if (rows == 0)
        fprintf(out, "no runs of %s\n", name);
    return 0;
}

int ab_history_show(ab_history *h, const char *name, const char *machine_id, FILE *out,
                    char *err, size_t len)
{
    if (machine_id && strcmp(machine_id, "all") == 0)
        machine_id = NULL;
    return name ? show_runs(h->db, name, machine_id, out, err, len)
                : show_series(h->db, machine_id, out, err, len);
}

/* The series that drift since a commit (series_drift over their runs
 * since), each with its factor; `used` marks those series_slower_now has
 * taken with their steps. */
typedef struct {
    char machine[64];
    char *name;
    double factor;
    int runs, used;
} series_drift_since;

typedef struct {
    series_drift_since *at;
    int n, cap;
} drift_list;

static void drift_list_free(drift_list *d)
{
    for (int i = 0; i < d->n; i++)
        free(d->at[i].name);
    free(d->at);
}

/* The drift of the series of machine on name since (1 where none), marked
 * as taken. */
static double drift_take(drift_list *d, const char *machine, const char *name)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->at[i].machine, machine) == 0 && strcmp(d->at[i].name, name) == 0) {
            d->at[i].used = 1;
            return d->at[i].factor;
        }
    return 1.0;
}

/* SQL for the date a machine's runs count "since" the commit (match: the
 * commit test on runs' git_commit): its first run at the commit, else (a
 * machine that never ran it) the commit's first run anywhere. alias: the
 * outer table whose machine_id it is for. */
static void since_date_sql(char *buf, size_t len, const char *alias, const char *match)
{
    snprintf(buf, len,
             "COALESCE((SELECT min(date) FROM runs WHERE machine_id = %s.machine_id AND %s), "
             "(SELECT min(date) FROM runs WHERE %s))", alias, match, match);
}

/* Every series with runs since the commit ($1, match), and the drift of
 * those that drift by min_effect or more over their runs since, into d.
 * -1 with err. */
static int drifts_since(ab_sql *db, const char *match, const ab_sql_arg *c, double min_effect,
                        drift_list *d, char *err, size_t len)
{
    char since[400], sql[1000];
    since_date_sql(since, sizeof since, "r", match);
    snprintf(sql, sizeof sql,
             "SELECT DISTINCT r.machine_id, x.name, %s FROM results x "
             "JOIN runs r ON r.id = x.run_id WHERE r.date > %s ORDER BY 1, 2", since, since);
    ab_sql_rows *q;
    if (ab_sql_exec(db, sql, c, 1, &q, err, len) < 0)
        return -1;
    series_window *w = malloc(sizeof *w);
    int rc = w ? 0 : -1;
    if (!w)
        snprintf(err, len, "out of memory");
    while (rc == 0 && ab_sql_next(q) == 1) {
        int runs;
        double f = series_drift(db, ab_sql_text(q, 0), ab_sql_text(q, 1), ab_sql_text(q, 2),
                                min_effect, w, &runs, err, len);
        if (f < 0.0) {
            rc = -1;
        } else if (f != 1.0) {
            if (d->n == d->cap) {
                int cap = d->cap ? 2 * d->cap : 16;
                series_drift_since *grown = realloc(d->at, (size_t)cap * sizeof *grown);
                if (!grown) {
                    snprintf(err, len, "out of memory");
                    rc = -1;
                    break;
                }
                d->at = grown;
                d->cap = cap;
            }
            series_drift_since *e = &d->at[d->n];
            snprintf(e->machine, sizeof e->machine, "%s", ab_sql_text(q, 0));
            e->name = strdup(ab_sql_text(q, 1));
            e->factor = f;
            e->runs = runs;
            e->used = 0;
            if (!e->name) {
                snprintf(err, len, "out of memory");
                rc = -1;
            } else {
                d->n++;
            }
        }
    }
    free(w);
    if (ab_sql_rows_free(q, rc == 0 ? err : NULL, len) != 0)
        rc = -1;
    return rc;
}

/* The series (machine, benchmark) slower now than at the commit (the WHERE
 * of ab_history_steps_since on the steps, match its commit test): the
 * after of a series' last step since over the before of its first, times
 * its drift since (d), at least 1 + min_effect; a series with a drift and
 * no step since, by its drift alone. A regression undone by a later step
 * is not one now. -1 with err. */
static int series_slower_now(ab_sql *db, const char *where, const ab_sql_arg *c,
                             double min_effect, drift_list *d, int *n_series, char *err,
                             size_t len)
{
    char sql[900];
    snprintf(sql, sizeof sql,
             "SELECT s.machine_id, s.name, s.before_s, s.after_s FROM steps s %s "
             "ORDER BY s.machine_id, s.name, s.date", where);
    ab_sql_rows *q;
    if (ab_sql_exec(db, sql, c, 1, &q, err, len) < 0)
        return -1;
    const double slower = (1.0 + min_effect) * (1 - 1e-12);
    char machine[64] = "", name[512] = "";
    double first_before = 0.0, last_after = 0.0;
    int any = 0;
    *n_series = 0;
    for (;;) {
        int more = ab_sql_next(q) == 1;
        int same = more && strcmp(ab_sql_text(q, 0), machine) == 0
                && strcmp(ab_sql_text(q, 1), name) == 0;
        if (any && !same)
            *n_series += last_after / first_before * drift_take(d, machine, name) >= slower;
        if (!more)
            break;
        if (!same) {
            snprintf(machine, sizeof machine, "%s", ab_sql_text(q, 0));
            snprintf(name, sizeof name, "%s", ab_sql_text(q, 1));
            first_before = ab_sql_real(q, 2);
            any = 1;
        }
        last_after = ab_sql_real(q, 3);
    }
    for (int i = 0; i < d->n; i++)
        *n_series += !d->at[i].used && d->at[i].factor >= slower;
    return ab_sql_rows_free(q, err, len) != 0 ? -1 : 0;
}

int ab_history_steps_since(ab_history *h, const char *commit, double min_effect, FILE *out,
                           int *n_slower, int *n_slower_now, char *err, size_t len)
{
    ab_sql *db = h->db;
    *n_slower = *n_slower_now = 0;
    /* The commit by any unambiguous prefix (substr, not LIKE: a prefix is
     * data, never a pattern). */
    const ab_sql_arg c[] = { AB_SQL_T(commit) };
    const char *match = "substr(git_commit, 1, length($1)) = $1";
    char sql[1200];
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT git_commit) FROM runs WHERE %s", match);
    long long n = ab_sql_int_of(db, sql, c, 1, 0, err, len);
    if (n < 0)
        return -1;
    if (n != 1) {
        snprintf(err, len, n == 0 ? "no run at commit %.64s in %s"
                                  : "commit %.64s is ambiguous in %s (give more of it)",
                 commit, ab_sql_name(db));
        return -1;
    }
    char since[400], where[420];
    since_date_sql(since, sizeof since, "s", match);
    snprintf(where, sizeof where, "WHERE s.date > %s", since);
    drift_list d = { NULL, 0, 0 };
    if (drifts_since(db, match, c, min_effect, &d, err, len) != 0
        || series_slower_now(db, where, c, min_effect, &d, n_slower_now, err, len) != 0) {
        drift_list_free(&d);
        return -1;
    }
    snprintf(sql, sizeof sql,
             "SELECT s.machine_id, m.machine_key, s.name, s.git_commit, s.date, s.before_s, "
             "  s.after_s FROM steps s JOIN machines m ON m.machine_id = s.machine_id %s "
             "ORDER BY s.machine_id, s.after_s / s.before_s DESC, s.name", where);
    ab_sql_rows *q;
    if (ab_sql_exec(db, sql, c, 1, &q, err, len) < 0) {
        drift_list_free(&d);
        return -1;
    }
    char last[64] = "";
    int rows = 0, machines_slower = 0, machine_slower = 0;
    while (ab_sql_next(q) == 1) {
        const char *mid = ab_sql_text(q, 0);
        double before = ab_sql_real(q, 5), after = ab_sql_real(q, 6);
        if (strcmp(mid, last) != 0) {
            fprintf(out, "%smachine %s: %s\n", rows ? "\n" : "", mid, ab_sql_text(q, 1));
            snprintf(last, sizeof last, "%s", mid);
            machine_slower = 0;
        }
        rows++;
        if (after > before) {
            ++*n_slower;
            machines_slower += !machine_slower;
            machine_slower = 1;
        }
        char a[32], b[32], s[160];
        fmt_seconds(before, a, sizeof a);
        fmt_seconds(after, b, sizeof b);
        fmt_step(before, after, ab_sql_text(q, 3), s, sizeof s);
        fprintf(out, "  %-64s %s, %s -> %s, %s\n", ab_sql_text(q, 2), s, a, b, ab_sql_text(q, 4));
    }
    if (ab_sql_rows_free(q, err, len) != 0) {
        drift_list_free(&d);
        return -1;
    }
    if (rows)
        fprintf(out, "\n");
    /* Drifts: slow changes over many runs, with no one commit to blame. */
    int drifting_slower = 0;
    for (int i = 0; i < d.n; i++) {
        if (i == 0)
            fprintf(out, "drifting since %s (no one commit to blame):\n", commit);
        fprintf(out, "  %-64s drift %+.1f%% over the %d runs since (machine %s)\n", d.at[i].name,
                100 * (d.at[i].factor - 1), d.at[i].runs, d.at[i].machine);
        drifting_slower += d.at[i].factor > 1.0;
    }
    if (d.n)
        fprintf(out, "\n");
    fprintf(out, "since %s: %d slower step%s on %d machine%s, %d faster; %d series drifting "
                 "slower, %d faster; %d series slower now (by %.3g%% or more over their steps "
                 "and drift since)\n", commit, *n_slower, *n_slower == 1 ? "" : "s",
           machines_slower, machines_slower == 1 ? "" : "s", rows - *n_slower, drifting_slower,
           d.n - drifting_slower, *n_slower_now, 100.0 * min_effect);
    drift_list_free(&d);
    return 0;
}

/* ---- The fleet's wisdom ---------------------------------------------------------------- */

/* w as wisdom text (malloc'ed), NULL when out of memory. */
static char *wisdom_text(const attn_wisdom *w)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return NULL;
    int bad = attn_wisdom_write(f, w) != 0;
    if (fclose(f) != 0 || bad) {
        free(text);
        return NULL;
    }
    return text;
}

/* The records stored under key into w (none: w empty). 0, or -1 with err. */
static int wisdom_get(ab_sql *db, const char *key, attn_wisdom *w, char *err, size_t len)
{
    memset(w, 0, sizeof *w);
    const ab_sql_arg k[] = { AB_SQL_T(key) };
    ab_sql_rows *r;
    if (ab_sql_exec(db, "SELECT records FROM wisdom WHERE machine_key = $1", k, 1, &r, err,
                    len) < 0)
        return -1;
    int rc = 0;
    if (ab_sql_next(r) == 1 && ab_sql_text(r, 0)[0]) {
        const char *text = ab_sql_text(r, 0);
        FILE *f = fmemopen((void *)text, strlen(text), "r");
        char why[300];
        if (!f || attn_wisdom_parse(f, w, why, sizeof why) != 0) {
            snprintf(err, len, "the records stored for this machine key are damaged: %s",
                     f ? why : "out of memory");
            rc = -1;
        }
        if (f)
            fclose(f);
    }
    return ab_sql_rows_free(r, rc ? NULL : err, len) != 0 ? -1 : rc;
}

int ab_history_wisdom_publish(ab_history *h, const char *key, const char *by,
                              const attn_wisdom *add, int *n_stored, int *n_kept, char *err,
                              size_t len)
{
    ab_sql *db = h->db;
    char when[48];
    now_iso(when, sizeof when);
    attn_wisdom *w = malloc(sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    char *text = NULL;
    if (ab_sql_begin(db, err, len) != 0) {
        free(w);
        return -1;
    }
    /* The key's row, upserted first, locks it to the commit: publishers of
     * one key merge one after the other, none losing another's records. */
    const ab_sql_arg row[] = { AB_SQL_T(key), AB_SQL_T(when), AB_SQL_T(by) };
    if (ab_sql_exec(db, "INSERT INTO wisdom VALUES ($1, '', $2, $3) ON CONFLICT (machine_key) "
                    "DO UPDATE SET updated = excluded.updated", row, 3, NULL, err, len) < 0
        || wisdom_get(db, key, w, err, len) != 0)
        goto fail;
    /* A quicker search never replaces a more thorough one's record, as in
     * a local merge: an estimate once replaced the fleet's measured pick. */
    *n_kept = 0;
    for (int i = 0; i < add->n; i++)
        if (attn_wisdom_more_thorough_held(w, &add->rec[i]))
            (*n_kept)++;
        else if (attn_wisdom_put(w, &add->rec[i], key) != 0) {
            snprintf(err, len, "too many records for one machine key");
            goto fail;
        }
    text = wisdom_text(w);
    const ab_sql_arg put[] = { AB_SQL_T(key), AB_SQL_T(text), AB_SQL_T(when), AB_SQL_T(by) };
    if (!text) {
        snprintf(err, len, "out of memory");
        goto fail;
    }
    if (ab_sql_exec(db, "UPDATE wisdom SET records = $2, updated = $3, updated_by = $4 "
                    "WHERE machine_key = $1", put, 4, NULL, err, len) < 0
        || ab_sql_commit(db, err, len) != 0)
        goto fail;
    *n_stored = w->n;
    free(text);
    free(w);
    return 0;
fail:
    ab_sql_rollback(db);
    free(text);
    free(w);
    return -1;
}

int ab_history_wisdom_pull(ab_history *h, const char *key, attn_wisdom *w, char *err, size_t len)
{
    return wisdom_get(h->db, key, w, err, len);
}
