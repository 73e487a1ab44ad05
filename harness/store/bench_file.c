/* bench_file.c — Google Benchmark JSON read back (bench_file.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_file.h"
#include "sha256.h"
#include "json_parse.h"

static double unit_seconds(const char *unit)
{
    if (!unit || strcmp(unit, "ns") == 0)
        return 1e-9;
    if (strcmp(unit, "us") == 0)
        return 1e-6;
    if (strcmp(unit, "ms") == 0)
        return 1e-3;
    if (strcmp(unit, "s") == 0)
        return 1.0;
    return -1.0;
}

/* The file's bytes, NUL-ended, their count in *n_out; NULL with err. */
static char *read_all(const char *path, size_t *n_out, char *err, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {   /* read as "an empty file" */
        snprintf(err, len, "%s is a directory", path);
        fclose(f);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += r;
        if (n + 1 == cap) {
            char *bigger = cap < ((size_t)1 << 30) ? realloc(buf, cap * 2) : NULL;
            if (!bigger)
                free(buf);
            buf = bigger;
            cap *= 2;
        }
    }
    int failed = ferror(f);   /* an I/O error is no end of file */
    int saved = errno;
    fclose(f);
    if (buf && failed) {
        snprintf(err, len, "%s: read failed: %s", path, strerror(saved));
        free(buf);
        return NULL;
    }
    if (!buf)
        snprintf(err, len, "%s: too large or out of memory", path);
    else
        buf[n] = '\0';
    *n_out = n;
    return buf;
}

/* A string member of the context into dst ("" when absent). */
static void context_string(const jv *ctx, const char *key, char *dst, size_t len)
{
    const jv *v = ctx ? jv_get(ctx, key) : NULL;
    snprintf(dst, len, "%s", v && v->type == JV_STRING ? v->string : "");
}

/* The set called name, added (with threads) when new; NULL when full. */
static ab_sample_set *set_of(ab_bench_file *bf, const char *name, const jv *threads)
{
    for (int k = 0; k < bf->n; k++)
        if (strcmp(bf->set[k].name, name) == 0)
            return &bf->set[k];
    if (bf->n == AB_MAX_BENCH)
        return NULL;
    ab_sample_set *s = &bf->set[bf->n++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->threads = threads && threads->type == JV_NUMBER && threads->number >= 1
                 && threads->number < 1e6 ? (int)threads->number : 0;
    s->cv = NAN;
    s->precision = NAN;
    s->unstable = -1;
    return s;
}

/* A finite, non-negative number member, or NaN. */
static double number_of(const jv *o, const char *key)
{
    const jv *v = jv_get(o, key);
    return v && v->type == JV_NUMBER && v->number >= 0 && v->number < 1e300 ? v->number : NAN;
}

/* The aggregates read, per benchmark, until the file is read: the
 * central value (rank 2 median, 1 mean) and the mean and stddev for a cv. */
typedef struct aggregates {
    double central, mean, stddev;
    int central_rank;
} aggregates;

/* NAME_<aggregate> of an older writer: the length of NAME when name ends
 * in "_" agg, else 0. */
static size_t suffixed(const char *name, const char *agg)
{
    size_t n = strlen(name), a = strlen(agg);
    return n > a + 1 && strcmp(name + n - a, agg) == 0 && name[n - a - 1] == '_' ? n - a - 1 : 0;
}

/* Records name as a benchmark without usable times (once; the first reason
 * kept). 0, or -1 when the list is full. */
static int mark_bad(ab_bench_file *bf, const char *name, int failed, const char *path, char *err,
                    size_t len)
{
    for (int k = 0; k < bf->n_bad; k++)
        if (strcmp(bf->bad[k].name, name) == 0)
            return 0;
    if (bf->n_bad == AB_MAX_BENCH) {
        snprintf(err, len, "%s: more than %d benchmarks", path, AB_MAX_BENCH);
        return -1;
    }
    snprintf(bf->bad[bf->n_bad].name, sizeof bf->bad[0].name, "%s", name);
    bf->bad[bf->n_bad++].failed = failed;
    return 0;
}

/* What an aggregate entry (of kind agg) says of its benchmark: the median
 * (else mean) as the sample of a file without repetitions, the cv (else
 * stddev and mean), the repetitions, and attnbench's stability fields. */
static int read_aggregate(ab_bench_file *bf, const jv *b, const char *agg, const char *path,
                          aggregates *ag, char *err, size_t len)
{
    const jv *name = jv_get(b, "run_name");
    char base[256];
    if (name && name->type == JV_STRING && name->string[0]) {
        snprintf(base, sizeof base, "%s", name->string);
    } else {
        /* Older writers give only "NAME_median": strip the aggregate's suffix. */
        const jv *full = jv_get(b, "name");
        size_t n = full && full->type == JV_STRING ? suffixed(full->string, agg) : 0;
        if (!n)
            return 0;
        snprintf(base, sizeof base, "%.*s", (int)n, full->string);
    }
    ab_sample_set *s = set_of(bf, base, jv_get(b, "threads"));
    if (!s) {
        snprintf(err, len, "%s: more than %d benchmarks", path, AB_MAX_BENCH);
        return -1;
    }
    int k = (int)(s - bf->set);
    double reps = number_of(b, "repetitions"), time = number_of(b, "real_time");
    const jv *unit = jv_get(b, "time_unit"), *unstable = jv_get(b, "unstable");
    if (reps >= 1 && reps < 1e9)
        s->repetitions = (int)reps;
    if (unstable && unstable->type == JV_BOOL)
        s->unstable = unstable->number != 0;
    if (!isnan(number_of(b, "median_precision")))
        s->precision = number_of(b, "median_precision");
    if (strcmp(agg, "cv") == 0 && !isnan(time)) {
        s->cv = time;                          /* Google Benchmark: a fraction in the time field */
        return 0;
    }
    double scale = unit_seconds(unit && unit->type == JV_STRING ? unit->string : NULL);
    if (strcmp(agg, "stddev") == 0 && !isnan(time) && scale > 0)
        ag[k].stddev = time * scale;
    if (strcmp(agg, "mean") == 0 && time > 0 && scale > 0)
        ag[k].mean = time * scale;
    int rank = strcmp(agg, "median") == 0 ? 2 : strcmp(agg, "mean") == 0 ? 1 : 0;
    /* A median or mean given that is not a positive number makes the
     * benchmark unusable, named by compare as a repetition's bad time is
     * (dropped unsaid, it read as "only in BASE" and passed). */
    if (rank > 0 && !isnan(time) && scale > 0 && !(time * scale > 0 && isfinite(time * scale)))
        return mark_bad(bf, base, 0, path, err, len);
    if (rank > ag[k].central_rank && time > 0 && scale > 0) {
        ag[k].central = time * scale;
        ag[k].central_rank = rank;
    }
    return 0;
}

/* Older Google Benchmark (no "run_type"): the aggregate an entry named
 * NAME_mean, _median, _stddev or _cv is after the benchmark NAME read
 * before it; NULL for a benchmark's own entry. */
static const char *old_aggregate(const ab_bench_file *bf, const char *name)
{
    static const char *const kinds[] = { "mean", "median", "stddev", "cv" };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = suffixed(name, kinds[i]);
        for (int k = 0; n && k < bf->n; k++)
            if (strlen(bf->set[k].name) == n && strncmp(bf->set[k].name, name, n) == 0)
                return kinds[i];
    }
    return NULL;
}

int ab_bench_file_load(const char *path, ab_bench_file *bf, char *err, size_t len)
{
    memset(bf, 0, sizeof *bf);
    char perr[200];
    size_t n_bytes = 0;
    char *text = read_all(path, &n_bytes, err, len);
    if (!text)
        return -1;
    /* JSON text holds no NUL byte: the parser would stop at one, and the
     * content hash once did too, so files differing after it were one. */
    size_t text_len = strlen(text);
    if (n_bytes == 0 || text_len != n_bytes) {
        if (n_bytes == 0)
            snprintf(err, len, "%s: an empty file, not a benchmark file", path);
        else
            snprintf(err, len, "%s: a NUL byte at offset %zu: not JSON text", path, text_len);
        free(text);
        return -1;
    }
    ab_sha256_hex(text, n_bytes, bf->content_sha256);
    jv *root = jv_parse(text, perr, sizeof perr);
    free(text);
    const jv *benchmarks = root && root->type == JV_OBJECT ? jv_get(root, "benchmarks") : NULL;
    if (!benchmarks || benchmarks->type != JV_ARRAY) {
        snprintf(err, len, "%s: %s", path, root ? "no \"benchmarks\" array" : perr);
        jv_free(root);
        return -1;
    }
    const jv *ctx = jv_get(root, "context");
    if (ctx && ctx->type == JV_OBJECT) {
        context_string(ctx, "machine_key", bf->machine_key, sizeof bf->machine_key);
        context_string(ctx, "machine_id", bf->machine_id, sizeof bf->machine_id);
        context_string(ctx, "git_commit", bf->git_commit, sizeof bf->git_commit);
        context_string(ctx, "date", bf->date, sizeof bf->date);
        context_string(ctx, "host_name", bf->host, sizeof bf->host);
        context_string(ctx, "cpu_model", bf->cpu_model, sizeof bf->cpu_model);
        bf->attnbench = jv_get(ctx, "attnbench_version") != NULL;
    }
    bf->set = calloc(AB_MAX_BENCH, sizeof *bf->set);
    bf->bad = calloc(AB_MAX_BENCH, sizeof *bf->bad);
    aggregates *ag = calloc(AB_MAX_BENCH, sizeof *ag);
    int rc = bf->set && bf->bad && ag ? 0 : -1;
    for (int k = 0; ag && k < AB_MAX_BENCH; k++)
        ag[k].mean = ag[k].stddev = NAN;
    if (rc != 0)
        snprintf(err, len, "%s: out of memory", path);
    for (int i = 0; rc == 0 && i < benchmarks->n; i++) {
        const jv *b = &benchmarks->items[i];
        if (b->type != JV_OBJECT) {
            snprintf(err, len, "%s: benchmark %d is not an object", path, i);
            rc = -1;
            break;
        }
        const jv *type = jv_get(b, "run_type"), *name = jv_get(b, "run_name");
        const jv *time = jv_get(b, "real_time"), *unit = jv_get(b, "time_unit");
        const jv *error = jv_get(b, "error_occurred"), *agg = jv_get(b, "aggregate_name");
        const int aggregate = type && type->type == JV_STRING
                           && strcmp(type->string, "aggregate") == 0;
        if (!name || name->type != JV_STRING)
            name = jv_get(b, "name");
        if (name && name->type == JV_STRING && strlen(name->string) >= sizeof bf->set[0].name) {
            /* Cut short, two names could become one benchmark. */
            snprintf(err, len, "%s: benchmark %d: a name longer than %zu bytes", path, i,
                     sizeof bf->set[0].name - 1);
            rc = -1;
            break;
        }
        if (error && error->type == JV_BOOL && error->number != 0) {
            if (name && name->type == JV_STRING && name->string[0] && !aggregate)
                rc = mark_bad(bf, name->string, 1, path, err, len);
            continue;
        }
        if (aggregate) {
            if (agg && agg->type == JV_STRING)   /* else an aggregate of a kind we do not read */
                rc = read_aggregate(bf, b, agg->string, path, ag, err, len);
            continue;
        }
        const char *old_agg = !type && name && name->type == JV_STRING
                              ? old_aggregate(bf, name->string) : NULL;
        if (old_agg) {
            rc = read_aggregate(bf, b, old_agg, path, ag, err, len);
            continue;
        }
        double scale = unit_seconds(unit && unit->type == JV_STRING ? unit->string : NULL);
        if (!name || name->type != JV_STRING || !name->string[0] || !time
            || time->type != JV_NUMBER || scale < 0) {
            snprintf(err, len, "%s: benchmark %d lacks a name, a real_time or a known time_unit",
                     path, i);
            rc = -1;
            break;
        }
        /* Scaled: a subnormal time in ns is 0 s. */
        if (!(time->number * scale > 0) || !isfinite(time->number * scale)) {
            rc = mark_bad(bf, name->string, 0, path, err, len);   /* named by compare, the rest judged */
            continue;
        }
        ab_sample_set *s = set_of(bf, name->string, jv_get(b, "threads"));
        if (!s) {
            snprintf(err, len, "%s: more than %d benchmarks", path, AB_MAX_BENCH);
            rc = -1;
            break;
        }
        if (s->n < AB_MAX_REP) {
            const jv *round = jv_get(b, "round");
            s->round[s->n] = round && round->type == JV_NUMBER && round->number >= 0
                                     && round->number < 1e9 ? (int)round->number : -1;
            s->t[s->n++] = time->number * scale;
        }
    }
    /* Benchmarks seen only through their aggregates: their central value is
     * the one sample (and stddev / mean their cv when no cv was given); one
     * with neither, or with a bad time, is dropped. */
    int kept = 0;
    for (int k = 0; rc == 0 && k < bf->n; k++) {
        ab_sample_set *s = &bf->set[k];
        if (s->n == 0 && ag[k].central_rank > 0) {
            s->round[s->n] = -1;
            s->t[s->n++] = ag[k].central;
            s->aggregates_only = 1;
        }
        if (isnan(s->cv) && ag[k].mean > 0 && !isnan(ag[k].stddev))
            s->cv = ag[k].stddev / ag[k].mean;
        int bad = 0;
        for (int j = 0; j < bf->n_bad && !bad; j++)
            bad = !bf->bad[j].failed && strcmp(bf->bad[j].name, s->name) == 0;
        if (s->n > 0 && !bad)
            bf->set[kept++] = *s;
    }
    if (rc == 0)
        bf->n = kept;
    jv_free(root);
    free(ag);
    if (rc == 0 && bf->n == 0 && bf->n_bad == 0) {
        snprintf(err, len, "%s: no benchmarks", path);
        rc = -1;
    }
    if (rc != 0)
        ab_bench_file_free(bf);
    return rc;
}

void ab_bench_file_free(ab_bench_file *bf)
{
    free(bf->set);
    free(bf->bad);
    bf->set = NULL;
    bf->bad = NULL;
    bf->n = bf->n_bad = 0;
}

const ab_sample_set *ab_bench_file_find(const ab_bench_file *bf, const char *name)
{
    for (int i = 0; i < bf->n; i++)
        if (strcmp(bf->set[i].name, name) == 0)
            return &bf->set[i];
    return NULL;
}

int ab_bench_files_load(const char *list, ab_bench_file **files, int *n, char *err, size_t len)
{
    char path[4096];
    const char *p = list;
    int count = 1;
    for (const char *c = list; *c; c++)
        count += *c == ',';
    ab_bench_file *f = calloc((size_t)count, sizeof *f);
    if (!f) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    for (int i = 0; i < count; i++) {
        size_t m = strcspn(p, ",");
        if (m == 0 || m >= sizeof path) {
            snprintf(err, len, "'%.200s': %s", list, m ? "a path is too long" : "an empty path");
            ab_bench_files_free(f, i);
            return -1;
        }
        memcpy(path, p, m);
        path[m] = '\0';
        if (ab_bench_file_load(path, &f[i], err, len) != 0) {
            ab_bench_files_free(f, i);
            return -1;
        }
        p += m + 1;
    }
    *files = f;
    *n = count;
    return 0;
}

void ab_bench_files_free(ab_bench_file *files, int n)
{
    for (int i = 0; i < n; i++)
        ab_bench_file_free(&files[i]);
    free(files);
}
