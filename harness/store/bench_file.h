/*
 * bench_file.h — a Google Benchmark JSON file (attnbench's, or any other
 * program's) read back: per benchmark, the times of its repetitions (the
 * "iteration" entries; a file without repetitions gives one sample per
 * benchmark, and a file of aggregates only its median), what its aggregates
 * say of the spread, and what the context says of the machine and the
 * build. `attnbench compare` and `attnbench history add`
 * read their input with it.
 */
#ifndef AB_BENCH_FILE_H
#define AB_BENCH_FILE_H

#include <stddef.h>

#define AB_MAX_BENCH 4096
#define AB_MAX_REP 1000

typedef struct ab_sample_set {
    char name[256];           /* run_name (else name) */
    int threads;              /* "threads", 0 when absent */
    int n;
    double t[AB_MAX_REP];     /* seconds per iteration */
    int round[AB_MAX_REP];    /* attnbench's "round" of each (run side by side); -1 absent */
    /* A file of aggregates only (Google Benchmark's
     * --benchmark_report_aggregates_only) gives one sample, its median (else
     * its mean), and what its other aggregates say of the spread. */
    int aggregates_only;
    int repetitions;          /* as the aggregates declare them; 0 unknown */
    double cv;                /* the "cv" aggregate (a fraction); NaN unknown */
    /* What the file says of how well it knows the median: "unstable" and
     * "median_precision" (attnbench's aggregates); -1 / NaN when it says
     * nothing. */
    int unstable;
    double precision;
} ab_sample_set;

/* A benchmark the file has no usable times of: it failed there (Google
 * Benchmark's "error_occurred"), or a time is not a positive number. */
typedef struct ab_bad_bench {
    char name[256];
    int failed;               /* 1 error_occurred, 0 a time <= 0 (or not finite) */
} ab_bad_bench;

typedef struct ab_bench_file {
    int n;
    ab_sample_set *set;       /* the benchmarks with usable times */
    int n_bad;
    ab_bad_bench *bad;        /* the others, each once, not in set */
    /* From the context; "" when absent (other programs write only some). */
    char machine_key[320], machine_id[24], git_commit[72], date[48], host[128], cpu_model[96];
    int attnbench;            /* the context names an attnbench version: attnbench wrote it */
    char content_sha256[65];  /* of the file's bytes: the history knows a file it holds by it */
} ab_bench_file;

/* Reads path. 0, or -1 with a one-line reason in err (the file is unusable:
 * unreadable, not JSON, no "benchmarks", an entry without a name, a time or
 * a known unit, a name longer than 255 bytes). Entries without "run_type"
 * (Google Benchmark before 1.5) named NAME_mean, _median, _stddev or _cv
 * after a benchmark NAME are read as its aggregates; a file of aggregates
 * without "cv" takes stddev / mean for it. */
int ab_bench_file_load(const char *path, ab_bench_file *bf, char *err, size_t len);
void ab_bench_file_free(ab_bench_file *bf);

/* Reads a comma-separated list of files, each on its own (a run each):
 * *files gets *n loaded files (free each, then the array, with
 * ab_bench_files_free). 0, or -1 with err (nothing to free). */
int ab_bench_files_load(const char *list, ab_bench_file **files, int *n, char *err, size_t len);
void ab_bench_files_free(ab_bench_file *files, int n);

/* The benchmark called name in bf, NULL when absent. */
const ab_sample_set *ab_bench_file_find(const ab_bench_file *bf, const char *name);

#endif /* AB_BENCH_FILE_H */
