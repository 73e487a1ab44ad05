/* bench_file.c — Google Benchmark JSON read back (bench_file.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_file.h"
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

static char *read_all(const char *path, char *err, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, len, "%s: cannot open", path);
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
    fclose(f);
    if (!buf)
        snprintf(err, len, "%s: too large or out of memory", path);
    else
        buf[n] = '\0';
    return buf;
}

/* A string member of the context into dst ("" when absent). */
static void context_string(const jv *ctx, const char *key, char *dst, size_t len)
{
    const jv *v = ctx ? jv_get(ctx, key) : NULL;
    snprintf(dst, len, "%s", v && v->type == JV_STRING ? v->string : "");
}

int ab_bench_file_load(const char *path, ab_bench_file *bf, char *err, size_t len)
{
    memset(bf, 0, sizeof *bf);
    char perr[200];
    char *text = read_all(path, err, len);
    if (!text)
        return -1;
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
    }
    bf->set = calloc(AB_MAX_BENCH, sizeof *bf->set);
    int rc = bf->set ? 0 : -1;
    if (rc != 0)
        snprintf(err, len, "%s: out of memory", path);
    for (int i = 0; rc == 0 && i < benchmarks->n; i++) {
        const jv *b = &benchmarks->items[i];
        const jv *type = jv_get(b, "run_type"), *name = jv_get(b, "run_name");
        const jv *time = jv_get(b, "real_time"), *unit = jv_get(b, "time_unit");
        const jv *error = jv_get(b, "error_occurred"), *threads = jv_get(b, "threads");
        if (b->type != JV_OBJECT) {
            snprintf(err, len, "%s: benchmark %d is not an object", path, i);
            rc = -1;
            break;
        }
        if (type && type->type == JV_STRING && strcmp(type->string, "aggregate") == 0)
            continue;
        if (error && error->type == JV_BOOL && error->number != 0)
            continue;
        if (!name || name->type != JV_STRING)
            name = jv_get(b, "name");
        double scale = unit_seconds(unit && unit->type == JV_STRING ? unit->string : NULL);
        if (!name || name->type != JV_STRING || !name->string[0] || !time
            || time->type != JV_NUMBER || scale < 0) {
            snprintf(err, len, "%s: benchmark %d lacks a name, a real_time or a known time_unit",
                     path, i);
            rc = -1;
            break;
        }
        int k = 0;
        while (k < bf->n && strcmp(bf->set[k].name, name->string) != 0)
            k++;
        if (k == bf->n) {
            if (bf->n == AB_MAX_BENCH) {
                snprintf(err, len, "%s: more than %d benchmarks", path, AB_MAX_BENCH);
                rc = -1;
                break;
            }
            snprintf(bf->set[bf->n].name, sizeof bf->set[0].name, "%s", name->string);
            bf->set[bf->n].threads = threads && threads->type == JV_NUMBER
                                     && threads->number >= 1 && threads->number < 1e6
                                   ? (int)threads->number : 0;
            bf->n++;
        }
        if (bf->set[k].n < AB_MAX_REP)
            bf->set[k].t[bf->set[k].n++] = time->number * scale;
    }
    jv_free(root);
    if (rc == 0 && bf->n == 0) {
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
    bf->set = NULL;
    bf->n = 0;
}

int ab_bench_files_load(const char *list, ab_bench_file *bf, char *err, size_t len)
{
    char path[4096];
    const char *p = list;
    memset(bf, 0, sizeof *bf);
    for (int first = 1;; first = 0) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof path) {
            snprintf(err, len, "'%.200s': %s", list, n ? "a path is too long" : "an empty path");
            ab_bench_file_free(bf);
            return -1;
        }
        memcpy(path, p, n);
        path[n] = '\0';
        ab_bench_file one;
        if (ab_bench_file_load(path, &one, err, len) != 0) {
            ab_bench_file_free(bf);
            return -1;
        }
        if (first) {
            *bf = one;
        } else {
            for (int i = 0; i < one.n; i++) {
                int k = 0;
                while (k < bf->n && strcmp(bf->set[k].name, one.set[i].name) != 0)
                    k++;
                if (k == bf->n) {
                    if (bf->n == AB_MAX_BENCH)
                        continue;
                    bf->set[bf->n++] = one.set[i];
                    continue;
                }
                for (int r = 0; r < one.set[i].n && bf->set[k].n < AB_MAX_REP; r++)
                    bf->set[k].t[bf->set[k].n++] = one.set[i].t[r];
            }
            ab_bench_file_free(&one);
        }
        if (p[n] != ',')
            return 0;
        p += n + 1;
    }
}
