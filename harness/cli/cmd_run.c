/*
 * cmd_run.c — `attnbench run`: benchmarks kernels on shapes, prints a table,
 * and writes Google Benchmark JSON and CSV.
 */
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "bench.h"
#include "cli.h"
#include "commands.h"
#include "memory.h"
#include "peak_file.h"
#include "plan.h"
#include "plan_flags.h"
#include "progress.h"
#include "report.h"
#include "select.h"
#include "internal.h"

#define SEED 20261122u
#define MAX_EVENT_NAMES AB_MAX_EVENTS

/* The measured ceilings a result is held to: the FMA peak of its ISA at its
 * thread count (and that peak's error), and the read bandwidth. */
static void set_ceilings(ab_result *r, ab_isa isa, const ab_peaks *peaks)
{
    r->isa = isa;
    r->peak_gflops = peaks ? ab_peak_gflops(peaks, isa, r->threads) : 0.0;
    r->peak_error = peaks ? ab_peak_error(peaks, isa, r->threads) : 0.0;
    r->read_gbs = peaks ? ab_peak_read_gbs(peaks, r->threads) : 0.0;
    r->read_error = peaks ? ab_peak_read_error(peaks, r->threads) : 0.0;
}

/* Which kernel ran and why ("wisdom", "features", "named", "ATTN_KERNEL");
 * for an auto context the kernel may differ from the row it was created
 * as, and the name, ISA and peak of the result follow it. */
static void note_choice(const attn_ctx *ctx, ab_result *r, const ab_peaks *peaks)
{
    const char *source = NULL, *ran = attn_ctx_last_choice(ctx, &source);
    if (!ran)
        return;
    snprintf(r->chosen_by, sizeof r->chosen_by, "%s", source);
    if (strcmp(ran, r->kernel) == 0)
        return;
    const attn_kernel *k = attn_registry_find(ran);
    snprintf(r->kernel, sizeof r->kernel, "%s", ran);
    set_ceilings(r, ab_isa_of_kernel(k), peaks);
    ab_run_name(r->kernel, &r->shape, r->threads, r->run_name, sizeof r->run_name);
}

/* The resident bytes one call on a fresh context adds (its workspace and
 * whatever else it touches), or NaN when it cannot be measured. */
static double call_memory(const char *kernel, int threads, const ab_param_setting *ps, int n_ps,
                          const ab_workload *w)
{
    char err[200];
    attn_ctx *ctx = NULL;
    float *out = ab_alloc_floats(w->out_len, 0);
    double extra = NAN;
    if (out && attn_ctx_create(&ctx, kernel, threads) == ATTN_OK
        && ab_params_apply(&ab_library_self, ctx, ps, n_ps, 0, err, sizeof err) == 0) {
        for (size_t i = 0; i < w->out_len; i++)   /* the output's pages are the caller's */
            out[i] = 0.0f;
        /* Free heap pages go back to the OS first, so that reusing memory an
         * earlier benchmark freed does not hide this call's needs. */
        malloc_trim(0);
        long long before = ab_rss_reset_peak(err, sizeof err) == 0 ? ab_rss_bytes("VmRSS") : -1;
        if (before >= 0 && ab_workload_run(ctx, w, out) == ATTN_OK) {
            long long peak = ab_rss_bytes("VmHWM");
            if (peak >= before)
                extra = (double)(peak - before);
        }
    }
    attn_ctx_destroy(ctx);
    ab_free(out);
    return extra;
}

/* "--threads 2" or "--threads 1,2,4" → counts[]; each in [1, 4096]. */
typedef struct progress_arg {
    const ab_progress *p;
    int first;                     /* the index of the group's first benchmark */
    const ab_bench_member *m;
    int n;
} progress_arg;

static void show_progress(void *arg, int member, int round)
{
    progress_arg *a = arg;
    char detail[64];
    int live = 0;
    for (int i = 0; i < a->n; i++)
        live += a->m[i].live;
    snprintf(detail, sizeof detail, "(round %d, %d of %d sampling)", round + 1, live, a->n);
    ab_progress_show(a->p, a->first + member, a->m[member].r->run_name, detail);
}

static int split_events(char *list, const char **names, int max, char *err, size_t len)
{
    int n = 0;
    for (char *save = NULL, *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (n == max) {
            snprintf(err, len, "--counters: at most %d events", max);
            return -1;
        }
        names[n++] = e;
    }
    return n;
}

/* Writes data to path atomically. In a directory (unique != 0), picks a new
 * name stem-N.ext that no earlier run used, never replacing a file. */
static int publish(const char *data, size_t size, const char *path, int unique, char *written,
                   size_t wlen, char *err, size_t elen)
{
    char name[PATH_MAX];
    for (int attempt = 0; attempt < 1000; attempt++) {
        if (unique) {
            char stamp[32];
            time_t now = time(NULL);
            struct tm tmv;
            gmtime_r(&now, &tmv);
            strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tmv);
            if (ab_mkdirs(path, err, elen) != 0)
                return -1;
            if (attempt == 0)
                snprintf(name, sizeof name, "%s/bench-%s.json", path, stamp);
            else
                snprintf(name, sizeof name, "%s/bench-%s-%d.json", path, stamp, attempt + 1);
        } else {
            snprintf(name, sizeof name, "%s", path);
        }
        ab_atomic_file af;
        if (ab_atomic_open(&af, name, err, elen) != 0)
            return -1;
        fwrite(data, 1, size, af.f);
        int rc = ab_atomic_commit(&af, unique, err, elen);
        if (rc == 0) {
            snprintf(written, wlen, "%s", name);
            return 0;
        }
        if (rc < 0 || !unique)
            return -1;
    }
    return -1;
}

/* Renders one report into memory, to be published atomically. */
static int render(int csv, const ab_run_context *c, const ab_result *r, int n, char **data,
                  size_t *size)
{
    FILE *f = open_memstream(data, size);
    if (!f)
        return -1;
    if (csv)
        ab_report_csv(f, c, r, n);
    else
        ab_report_json(f, c, r, n);
    return fclose(f) == 0 ? 0 : -1;
}

/* What a run is to do, from its flags: the kernels, shapes and thread counts,
 * the parameter settings, how to time (bench.h) and where to write; and the
 * machine it runs on. */
typedef struct run_plan {
    ab_plan plan;                  /* shapes, thread counts, machine (plan.h) */
    const attn_kernel *kernels[64];
    int nk;
    ab_param_setting settings[AB_MAX_PARAM_SETTINGS];
    int n_settings;
    int want_auto, memory, refresh, no_peaks;
    ab_bench_opts o;
    const char *json, *json_dir, *csv;
    char event_buf[1024];
    ab_counters *counters;
    attn_bert *model;              /* --weights: op=bert's weights, or NULL (random) */
    /* The builds timed: builds[0] this one, then each --lib's (library.h);
     * n_builds 1 without --lib, when kernels keep their plain names. */
    ab_library builds[1 + AB_MAX_STRINGS];
    int n_builds;
} run_plan;

/* What it did: a result per benchmark timed (or failed), and the facts the
 * report needs. */
typedef struct run_outcome {
    ab_result *results;
    int n, failed, pinned, n_skipped;
    char skipped[8192];
    uint64_t seed;
    ab_peaks peaks;
    int have_peaks;
    ab_lag1 drift;   /* the repetitions' lag-1 correlation, pooled over the run */
} run_outcome;

/* Checks every --param against the selected kernels: a name none has, or
 * a value out of a kernel's range, is a usage error. */
static int check_settings(const run_plan *p, char *err, size_t len)
{
    for (int i = 0; i < p->n_settings; i++) {
        int known = 0;
        for (int ki = 0; ki < p->nk; ki++) {
            int has = ab_param_check(p->kernels[ki], &p->settings[i], err, len);
            if (has < 0)
                return -1;
            known |= has;
        }
        if (!known) {
            snprintf(err, len, "--param %s: none of the kernels has it (attnbench list)",
                     p->settings[i].name);
            return -1;
        }
    }
    return 0;
}

/* --weights: loads the checkpoint into p->model and makes every shape the
 * model's (D, F, layers; H as given, 12 by default), keeping B, L and the
 * mask. Every shape must be op=bert and fit the file's positions. */
static int use_weights(run_plan *p, const char *path, char *err, size_t len)
{
    for (int i = 0; i < p->plan.ns; i++)
        if (!ab_op_row_of(p->plan.shapes[i].op)->takes_model) {
            snprintf(err, len, "--weights is for op=bert (give --op bert)");
            return -1;
        }
    int heads = p->plan.ns ? p->plan.shapes[0].heads : 0;
    char why[512];
    attn_status st = attn_bert_load(&p->model, path, heads, why, sizeof why);
    if (st != ATTN_OK) {
        snprintf(err, len, "--weights: %.480s", why);
        return -1;
    }
    const attn_bert *m = p->model;
    if (m->n_layers > AB_MAX_LAYERS) {
        snprintf(err, len, "--weights: %d layers, more than the %d a shape takes", m->n_layers,
                 AB_MAX_LAYERS);
        return -1;
    }
    for (int i = 0; i < p->plan.ns; i++) {
        ab_shape *s = &p->plan.shapes[i];
        if (s->heads != heads || s->q_len > m->embed_config.max_positions) {
            snprintf(err, len, s->heads != heads ? "--weights: every shape needs the same H"
                     : "--weights: L=%d is more than the file's %d positions", s->q_len,
                     m->embed_config.max_positions);
            return -1;
        }
        s->head_dim = m->layer_config.d_model / heads;
        s->d_ff = m->layer_config.d_ff;
        s->layers = m->n_layers;
        s->norm_first = m->layer_config.norm_first;
        s->act = m->layer_config.act;
    }
    return 0;
}

/* builds[0] this build, then each --lib NAME=PATH loaded (library.h). An
 * op whose workload holds this build's objects cannot run on another. 0,
 * or -1 with a reason. */
static int load_builds(run_plan *p, const ab_strings *libs, char *err, size_t len)
{
    p->builds[0] = ab_library_self;
    p->n_builds = 1;
    for (int i = 0; i < libs->n; i++) {
        char name[32], path[256];
        if (ab_library_parse(libs->v[i], name, sizeof name, path, sizeof path, err, len) != 0)
            return -1;
        for (int j = 1; j < p->n_builds; j++)
            if (strcmp(p->builds[j].name, name) == 0) {
                snprintf(err, len, "--lib %s given twice", name);
                return -1;
            }
        if (ab_library_load(&p->builds[p->n_builds], name, path, err, len) != 0)
            return -1;
        p->n_builds++;
    }
    for (int i = 0; p->n_builds > 1 && i < p->plan.ns; i++) {
        const ab_op_row *row = ab_op_row_of(p->plan.shapes[i].op);
        if (row && row->this_build_only) {
            snprintf(err, len, "--lib: op=%s keeps KV caches this build made, which another "
                     "build's calls must not be given; time it without --lib",
                     ab_op_name(p->plan.shapes[i].op));
            return -1;
        }
    }
    return 0;
}

static void unload_builds(run_plan *p)
{
    for (int i = 1; i < p->n_builds; i++)
        ab_library_unload(&p->builds[i]);
    p->n_builds = 0;
}

/* With $ATTN_WISDOM_DB set, a machine whose wisdom holds none of its own
 * records takes its key's records from the fleet's store first (each
 * checked here: ab_tune_pull), so that "auto" runs the fleet's choices
 * without tuning. A machine with records of its own keeps them. */
static int pull_fleet_wisdom(void)
{
    const char *db = getenv("ATTN_WISDOM_DB");
    char path[PATH_MAX];
    if (!db || !db[0] || attn_wisdom_default_path(path, sizeof path) != 0)
        return AB_EXIT_OK;
    return ab_tune_pull(db, path, 0, 1);
}

/* 1 when paths a and b name one file, made yet or not: "r.json" and
 * "./r.json", or two links to it. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    ab_parent_dir(a, da, sizeof da);
    ab_parent_dir(b, db, sizeof db);
    const char *na = strrchr(a, '/'), *nb = strrchr(b, '/');
    na = na ? na + 1 : a;
    nb = nb ? nb + 1 : b;
    if (!realpath(da, ra) || !realpath(db, rb))
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

/* Parses the flags into p and loads the machine. -1 when the run is to go
 * on, else the exit status (the message printed). */
static int plan_of(int argc, char **argv, run_plan *p)
{
    const char *kernel = NULL, *op_name = NULL, *shape_text = NULL, *suite_name = NULL;
    const char *counters_text = NULL, *json = NULL, *json_dir = NULL, *csv = NULL;
    const char *threads_text = NULL, *params_text = NULL, *weights = NULL;
    int reps = AB_DEFAULT_REPETITIONS, max_reps = AB_MAX_REPS, refresh = 0, memory = 0;
    int no_peaks = 0, iterations = 0, reference = 0, n_pos;
    ab_strings libs = { { NULL }, 0 };
    char op_help[160];
    snprintf(op_help, sizeof op_help, "%s: filters the suite, default op of --shape", ab_op_list());
    /* -1: the default, which depends on --kernel (max_call) or the suite (the times). */
    double min_time = -1.0, max_time = -1.0, precision = -1.0, max_call = -1.0;
    double unstable_above = AB_DEFAULT_UNSTABLE_ABOVE;
    const ab_flag flags[] = {
        { "kernel", AB_FLAG_STRING, &kernel, "K", "kernel name(s) K1,K2, auto, or all (default: all, or ATTN_KERNEL)", 0, 0 },
        { "op", AB_FLAG_STRING, &op_name, "OP", op_help, 0, 0 },
        AB_PLAN_FLAG_SHAPE(&shape_text),
        AB_PLAN_FLAG_SUITE(&suite_name),
        AB_PLAN_FLAG_THREADS(&threads_text),
        { "repetitions", AB_FLAG_INT, &reps, "R", "repetitions per benchmark, at least (default 7; exactly, with --precision 0)", 1, AB_MAX_REPS },
        { "max-repetitions", AB_FLAG_INT, &max_reps, "R", "repetitions per benchmark, at most (default 100)", 1, AB_MAX_REPS },
        { "precision", AB_FLAG_DOUBLE, &precision, "P", "sample until the median's 95% interval is within +-P of it (default 0.02; 0 with --iterations); 0: fixed repetitions", 0, 1 },
        { "unstable-above", AB_FLAG_DOUBLE, &unstable_above, "U", "flag UNSTABLE a median known no better than +-U when sampling stops (default 0.05)", 0, 1 },
        { "max-time", AB_FLAG_DOUBLE, &max_time, "S", "seconds of timed repetitions per benchmark, at most; 0: no limit but --max-repetitions (default 2; smoke 0.1)", 0, 36000 },
        { "min-time", AB_FLAG_DOUBLE, &min_time, "S", "seconds each repetition lasts at least (default 0.05; smoke 0.005)", 1e-4, 3600 },
        { "max-call-time", AB_FLAG_DOUBLE, &max_call, "S", "skip a benchmark whose warm-up call takes over S seconds; 0: never (default: 0.5 with --kernel all, else 0)", 0, 3600 },
        { "counters", AB_FLAG_STRING, &counters_text, "LIST", "PAPI events, e.g. perf::TASK-CLOCK,PAPI_TOT_CYC", 0, 0 },
        { "json", AB_FLAG_STRING, &json, "FILE", "write Google Benchmark JSON to FILE (atomically)", 0, 0 },
        { "json-dir", AB_FLAG_STRING, &json_dir, "DIR", "write the JSON to a new file in DIR, never replacing one", 0, 0 },
        { "csv", AB_FLAG_STRING, &csv, "FILE", "write CSV to FILE (atomically)", 0, 0 },
        { "param", AB_FLAG_STRING, &params_text, "K=V,..", "set kernel parameters (attnbench list shows them) on each kernel that has them", 0, 0 },
        { "memory", AB_FLAG_BOOL, &memory, NULL, "also measure the resident memory one call adds (peak RSS of a fresh context)", 0, 0 },
        { "refresh-peaks", AB_FLAG_BOOL, &refresh, NULL, "re-measure the machine peaks first", 0, 0 },
        { "no-peaks", AB_FLAG_BOOL, &no_peaks, NULL, "neither measure nor read the peaks (no % of peak; e.g. under valgrind)", 0, 0 },
        { "weights", AB_FLAG_STRING, &weights, "FILE", "op=bert: the weights of a BERT checkpoint (safetensors) instead of random ones; D, H, F and layers are the file's", 0, 0 },
        { "iterations", AB_FLAG_INT, &iterations, "N", "exactly N calls per repetition, not calibrated to --min-time (for counting instructions)", 1, 1000000000 },
        { "reference", AB_FLAG_BOOL, &reference, NULL, "also time an FMA loop and a read of twice the last-level cache in every round; the JSON gives each row's time in those units too", 0, 0 },
        { "lib", AB_FLAG_STRINGS, &libs, "NAME=PATH", "also time each kernel of another build's libattn.so, as K@NAME beside K@self, in the same rounds (repeatable)", 0, 0 },
    };
    int rc = ab_cli_command(
        "run",
        "attnbench run [--kernel K|all] [--op OP] [--shape SHAPES|--suite NAME] [--threads N[,N2..]]\n"
        "                     [--repetitions R] [--precision P] [--max-time S] [--min-time S]\n"
        "                     [--counters LIST] [--json FILE] [--json-dir DIR] [--csv FILE]",
        "Times kernels on shapes. Per shape, every kernel at every thread count is warmed up\n"
        "and calibrated (--min-time per repetition), then timed side by side: rounds of one\n"
        "repetition each, in a shuffled order, until each median is known to +-P (95%) or its\n"
        "--max-time is spent; one still worse than +-U is flagged UNSTABLE. Reports the median\n"
        "and its interval, GFLOP/s and % of the measured peak of the kernel's ISA at this\n"
        "thread count, then per shape and thread count the best kernel, the runner-up and\n"
        "their ratio with its interval (\"faster\" or \"tie\"). Threads are pinned to cores.\n"
        "With --kernel all, a benchmark whose warm-up call takes over 0.5 s (the naive oracle,\n"
        "the slow einsum orders on large shapes) is skipped and listed; naming the kernels\n"
        "(--kernel naive,einsum-bhqk) times everything.",
        argc, argv, flags, (int)(sizeof flags / sizeof flags[0]), NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;

    char err[512];
    ab_op op = AB_OP_SDPA;
    if (ab_cli_op("run", op_name, &op) != 0)
        return AB_EXIT_USAGE;
    if (json && json_dir) {
        fprintf(stderr, "attnbench run: give --json or --json-dir, not both\n");
        return AB_EXIT_USAGE;
    }
    /* Where the results go is checked now, not after the run (--json-dir
     * is made when written). */
    for (int fmt = 0; fmt < 2; fmt++) {
        const char *out_path = fmt == 0 ? json : csv;
        if (out_path && ab_atomic_probe(out_path, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench run: %s\n", err);
            return AB_EXIT_USAGE;
        }
    }
    if (json_dir && ab_dir_probe(json_dir, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench run: --json-dir %s\n", err);
        return AB_EXIT_USAGE;
    }
    if (json && csv && same_file(json, csv)) {
        fprintf(stderr, "attnbench run: --json and --csv name the same file (%s): one would "
                "overwrite the other\n", json);
        return AB_EXIT_USAGE;
    }
    p->nk = ab_select_kernels(kernel, getenv("ATTN_KERNEL"), p->kernels, 64, err, sizeof err);
    if (p->nk < 0) {
        fprintf(stderr, "attnbench run: %s\n", err);
        return AB_EXIT_USAGE;
    }
    if (params_text) {
        p->n_settings = ab_params_parse(params_text, p->settings, AB_MAX_PARAM_SETTINGS, err, sizeof err);
        if (p->n_settings < 0 || check_settings(p, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench run: %s\n", err);
            return AB_EXIT_USAGE;
        }
    }
    p->want_auto = kernel && strcmp(kernel, "auto") == 0;
    if (p->want_auto && pull_fleet_wisdom() != AB_EXIT_OK)
        return AB_EXIT_USAGE;
    /* Named kernels are timed on every shape; "all" skips very slow calls. */
    if (max_call < 0.0)
        max_call = !kernel || strcmp(kernel, "all") == 0 ? 0.5 : 0.0;

    if (ab_plan_make(&p->plan, suite_name, shape_text, op, op_name != NULL, threads_text, err,
                     sizeof err) != 0) {
        fprintf(stderr, "attnbench run: %s\n", err);
        return AB_EXIT_USAGE;
    }
    if (weights && use_weights(p, weights, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench run: %s\n", err);
        return AB_EXIT_USAGE;
    }
    if (load_builds(p, &libs, err, sizeof err) != 0) {
        fprintf(stderr, "attnbench run: %s\n", err);
        return AB_EXIT_USAGE;
    }
    if (!p->plan.have_topology)
        fprintf(stderr, "attnbench run: topology unavailable (%s); threads are not pinned\n",
                p->plan.topology_error);
    if (min_time < 0.0 && p->plan.suite_times[0] > 0.0)
        min_time = p->plan.suite_times[0];
    if (max_time < 0.0 && p->plan.suite_times[1] > 0.0)
        max_time = p->plan.suite_times[1];
    min_time = min_time < 0.0 ? AB_DEFAULT_MIN_TIME : min_time;
    /* --iterations fixes the work of a repetition (instruction counts), and
     * then the number of repetitions too, unless a precision is asked. */
    if (precision < 0.0)
        precision = iterations > 0 ? 0.0 : AB_DEFAULT_PRECISION;
    max_time = max_time < 0.0 ? AB_DEFAULT_MAX_TIME : max_time;
    if (max_reps < reps) {
        fprintf(stderr, "attnbench run: --max-repetitions %d is below --repetitions %d\n",
                max_reps, reps);
        return AB_EXIT_USAGE;
    }

    if (counters_text) {
        const char *names[MAX_EVENT_NAMES];
        snprintf(p->event_buf, sizeof p->event_buf, "%s", counters_text);
        int ne = split_events(p->event_buf, names, MAX_EVENT_NAMES, err, sizeof err);
        if (ne <= 0) {
            fprintf(stderr, "attnbench run: %s\n", ne < 0 ? err : "--counters: no event given");
            return AB_EXIT_USAGE;
        }
        p->counters = ab_counters_open(names, ne);
        if (!p->counters) {
            fprintf(stderr, "attnbench run: out of memory\n");
            return AB_EXIT_FAIL;
        }
        for (int e = 0; e < ne; e++)
            if (ab_counters_unavailable(p->counters, e))
                fprintf(stderr, "attnbench run: counter %s unavailable: %s; continuing without it\n",
                        ab_counters_name(p->counters, e), ab_counters_unavailable(p->counters, e));
        if (ab_counters_passes(p->counters) > 1)
            fprintf(stderr, "attnbench run: the counters need %d passes; each repetition runs "
                    "once per pass (no multiplexing)\n", ab_counters_passes(p->counters));
    }

    p->memory = memory;
    p->refresh = refresh;
    p->no_peaks = no_peaks;
    p->json = json;
    p->json_dir = json_dir;
    p->csv = csv;
    p->o = (ab_bench_opts){ .min_time = min_time, .iterations = iterations, .repetitions = reps,
                            .max_repetitions = max_reps, .precision = precision,
                            .unstable_above = unstable_above, .max_time = max_time,
                            .counters = p->counters, .max_call_time = max_call };
    if (reference) {   /* twice the last-level cache, at least 64 MiB: a read from memory */
        size_t llc = p->plan.have_topology ? ab_topology_cache_size(&p->plan.topo, 3) : 0;
        p->o.reference_bytes = 2 * llc > ((size_t)64 << 20) ? 2 * llc : (size_t)64 << 20;
    }
    return -1;
}

/* What a benchmark's context is made from: the build, the kernel ("auto"
 * for --kernel auto), its threads, on a shape's workload. */
typedef struct member_setup {
    const run_plan *p;
    const ab_workload *w;
    const ab_library *lib;
    const char *kernel;
    int n_threads;
    int *pinned;              /* cleared when pinning fails */
} member_setup;

/* A context of m's build for its kernel and threads, pinned (its threads
 * inherit the N-core mask; then this thread takes core 0 for itself), with
 * the --param settings, and the workload's weights packed for it. 0, or -1
 * with a reason in err (nothing left open). */
static int open_member(const member_setup *m, attn_ctx **ctx, attn_packed_weights **packed,
                       char *err, size_t len)
{
    const ab_topology *topo = &m->p->plan.topo;
    char perr[256];
    *ctx = NULL;
    *packed = NULL;
    /* Bound wherever the topology knows the cores (it once asked for known
     * caches too: a fallback topology without cache sizes ran unpinned while
     * the run said pinned). */
    if (topo->cores > 0 && ab_bind_cores(topo, m->n_threads, perr, sizeof perr) < 0)
        *m->pinned = 0;
    attn_status st = m->lib->ctx_create(ctx, m->kernel, m->n_threads);
    if (topo->cores > 0 && ab_pin_main_thread(topo, perr, sizeof perr) != 0)
        *m->pinned = 0;
    if (st != ATTN_OK) {
        snprintf(err, len, "%s", attn_strerror(st));
        return -1;
    }
    if (ab_params_apply(m->lib, *ctx, m->p->settings, m->p->n_settings, 0, err, len) != 0) {
        m->lib->ctx_destroy(*ctx);
        *ctx = NULL;
        return -1;
    }
    st = ab_workload_pack_in(m->lib, *ctx, m->w, packed);
    if (st != ATTN_OK) {
        snprintf(err, len, "packing the weights: %s", attn_strerror(st));
        m->lib->ctx_destroy(*ctx);
        *ctx = NULL;
        return -1;
    }
    return 0;
}

/* ab_bench_member.recreate: the member's context made anew. */
static int recreate_member(ab_bench_member *x, void *arg)
{
    const member_setup *m = arg;
    m->lib->weights_destroy(x->packed);
    m->lib->ctx_destroy(x->ctx);
    x->packed = NULL;
    return open_member(m, &x->ctx, &x->packed, x->r->error, sizeof x->r->error);
}

/* A row skipped for its call's time (max_call_time) by a probe or its
 * warm-up call. */
typedef struct slow_row {
    int kernel, build, threads;
    ab_shape shape;
    double seconds;
} slow_row;

/* How long a call of s on kernel ki of build bi at threads must at least
 * take by the word of the slow rows whose shapes s covers (ab_shape_covers):
 * the longest of their times, divided by the threads added (as if they
 * scaled perfectly); 0 when it covers none. *estimate: that time scaled up
 * by s's work, what the skipped list says. Larger shapes of a kernel too
 * slow on a small one are skipped on its word: a probe of each took a 32nd
 * of its work, minutes for the einsum rows of the BERT suite. */
static double slow_bound(const slow_row *slow, int n_slow, int ki, int bi, int threads,
                         const ab_shape *s, double *estimate)
{
    double bound = 0.0;
    for (int i = 0; i < n_slow; i++) {
        const slow_row *a = &slow[i];
        if (a->kernel != ki || a->build != bi || !ab_shape_covers(s, &a->shape))
            continue;
        double b = a->seconds * (threads > a->threads ? (double)a->threads / threads : 1.0);
        if (b > bound) {
            double fa = ab_shape_flops(&a->shape), fs = ab_shape_flops(s);
            bound = b;
            *estimate = fa > 0.0 && fs > fa ? b * fs / fa : b;
        }
    }
    return bound;
}

/* Times p: the peaks, then one shape at a time — its inputs once, then
 * every kernel at every thread count on them, side by side (bench.h). 0, or
 * AB_EXIT_FAIL when out of memory. */
static int execute(const run_plan *p, run_outcome *out)
{
    const ab_topology *topo = &p->plan.topo;
    char note[600] = "";
    if (!p->refresh && !p->no_peaks && isatty(2))
        fprintf(stderr, "attnbench run: reading (or once measuring) the machine peaks...\r");
    out->have_peaks = !p->no_peaks
                      && ab_peaks_get(&out->peaks, topo, &p->plan.machine, p->refresh, 1, note,
                                      sizeof note) == 0;
    if (note[0])
        fprintf(stderr, "attnbench run: %s\n", note);
    const ab_peaks *peaks = out->have_peaks ? &out->peaks : NULL;

    const int nk = p->nk, ns = p->plan.ns, nt = p->plan.nt, nb = p->n_builds;
    const int per_shape = nk * nt * nb;
    out->results = calloc((size_t)(per_shape * ns), sizeof *out->results);
    ab_bench_member *members = calloc((size_t)per_shape, sizeof *members);
    member_setup *setups = calloc((size_t)per_shape, sizeof *setups);
    slow_row *slow = calloc((size_t)(per_shape * ns), sizeof *slow);
    int n_slow = 0;
    if (!out->results || !members || !setups || !slow) {
        fprintf(stderr, "attnbench run: out of memory\n");
        free(members);
        free(setups);
        free(slow);
        return AB_EXIT_FAIL;
    }
    /* Pinned: the calling thread by the harness, the kernels' OpenMP threads
     * by the runtime (main.c sets OMP_PROC_BIND unless the user did). */
    const char *bind = getenv("OMP_PROC_BIND");
    out->pinned = bind && strcmp(bind, "false") != 0 && strcmp(bind, "FALSE") != 0;
    /* The order of every round is shuffled from this seed (recorded in the JSON). */
    out->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    uint64_t rng = out->seed;
    /* The repetitions' drift is pooled over the run's groups (bench.h). */
    ab_bench_opts timing = p->o;
    timing.drift = &out->drift;
    int wisdom_warned = 0, n = 0;
    ab_progress progress;
    ab_progress_init(&progress, per_shape * ns);
    for (int si = 0; si < ns; si++) {
        const ab_shape *s = &p->plan.shapes[si];
        ab_workload w;
        int first = n, nm = 0;
        /* Made for the first row not skipped on the slow rows' word (for
         * none when all are: BERT at B 8, L 512 is 1.3 GB to fill). */
        int have_inputs = -1;
        float *buf = NULL;
        ab_call_probe probe;   /* --max-call-time's estimates, on inputs made once a shape */
        ab_call_probe_init(&probe, s);
        for (int ki = 0; ki < nk; ki++) {
            for (int ti = 0; ti < nt; ti++) {
                for (int bi = 0; bi < nb; bi++) {
                    const attn_kernel *k = p->kernels[ki];
                    /* A single-threaded kernel runs, is reported and is held to
                     * the peak as 1 thread, once whatever the thread counts asked. */
                    if (!k->parallel && ti > 0)
                        continue;
                    int n_threads = k->parallel ? p->plan.thread_counts[ti] : 1;
                    const ab_library *lib = &p->builds[bi];
                    ab_result *r = &out->results[n++];
                    /* Beside other builds, each kernel is named by its build. */
                    /* Whole: a name cut to 20 + 1 + 11 bytes once made two
                     * builds of long names one row (their rounds judged as
                     * one pair, an injected slowdown lost). Row names are
                     * under 32 bytes, build names too (ab_library_parse). */
                    if (nb > 1)
                        snprintf(r->kernel, sizeof r->kernel, "%s@%s", k->name, lib->name);
                    else
                        snprintf(r->kernel, sizeof r->kernel, "%s", k->name);
                    r->shape = *s;
                    r->threads = n_threads;
                    r->lib = bi > 0 ? lib : NULL;
                    set_ceilings(r, ab_isa_of_kernel(k), peaks);
                    ab_run_name(r->kernel, s, r->threads, r->run_name, sizeof r->run_name);
                    member_setup *m = &setups[nm];
                    *m = (member_setup){ p, &w, lib, p->want_auto ? "auto" : k->name, n_threads,
                                         &out->pinned };
                    ab_progress_show(&progress, n - 1, r->run_name, "(warm-up)");
                    attn_ctx *ctx = NULL;
                    attn_packed_weights *packed = NULL;
                    int prc = -1;
                    double estimate = 0.0;
                    if (ab_bench_estimate_skips(
                            &p->o, slow_bound(slow, n_slow, ki, bi, n_threads, s, &estimate))) {
                        r->real[0] = estimate;
                        prc = 1;
                    } else {
                        if (have_inputs < 0) {
                            have_inputs = ab_workload_init_model(&w, s, p->model, SEED, 0) == 0;
                            buf = have_inputs ? ab_alloc_floats(w.out_len, 0) : NULL;
                        }
                        if (!have_inputs)
                            snprintf(r->error, sizeof r->error, "out of memory for the inputs");
                        else if (!buf)
                            snprintf(r->error, sizeof r->error, "out of memory for the output");
                        else if (open_member(m, &ctx, &packed, r->error, sizeof r->error) == 0
                                 && (prc = ab_bench_prepare(ctx, &w, &p->o, r, buf, &probe)) == 1)
                            slow[n_slow++] = (slow_row){ ki, bi, n_threads, *s, r->real[0] };
                    }
                    if (ctx && bi == 0 && p->want_auto && !wisdom_warned
                        && strncmp(attn_ctx_wisdom_status(ctx), "ignored", 7) == 0) {
                        /* One line, once: the library itself never prints. */
                        fprintf(stderr, "attnbench run: wisdom %s; auto uses CPU features\n",
                                attn_ctx_wisdom_status(ctx));
                        wisdom_warned = 1;
                    }
                    if (prc == 1) {
                        size_t used = strlen(out->skipped);
                        snprintf(out->skipped + used, sizeof out->skipped - used, "%s  %s (%.2g s)",
                                 out->n_skipped ? "\n" : "", r->run_name, r->real[0]);
                        out->n_skipped++;
                    }
                    if (prc == 0) {
                        members[nm] = (ab_bench_member){ .ctx = ctx, .packed = packed, .r = r };
                        if (nb > 1)   /* builds compared: contexts averaged over */
                            members[nm].recreate = recreate_member, members[nm].recreate_arg = m;
                        nm++;
                    } else {
                        lib->weights_destroy(packed);
                        lib->ctx_destroy(ctx);
                        if (prc == 1)
                            memset(&out->results[--n], 0, sizeof *r);
                        else
                            out->failed++;
                    }
                }
            }
        }
        ab_call_probe_free(&probe);   /* not held through the timing */
        progress_arg pa = { &progress, first, members, nm };
        if (nm > 0 && ab_bench_rounds(members, nm, &w, &timing, &rng, show_progress, &pa) != 0) {
            fprintf(stderr, "attnbench run: out of memory\n");
            out->failed++;
        }
        for (int i = 0; i < nm; i++) {
            ab_result *r = members[i].r;
            const ab_library *lib = setups[i].lib;
            out->failed += r->error[0] != 0;
            if (nb == 1)   /* what ran and why: this build's context only says */
                note_choice(members[i].ctx, r, peaks);
            if (p->memory && !r->error[0] && nb == 1)
                r->extra_rss = call_memory(p->want_auto ? "auto" : r->kernel, r->threads,
                                           p->settings, p->n_settings, &w);
            lib->weights_destroy(members[i].packed);
            lib->ctx_destroy(members[i].ctx);
        }
        ab_free(buf);
        if (have_inputs == 1)
            ab_workload_free(&w);
    }
    ab_progress_clear(&progress);
    out->n = n;
    free(members);
    free(setups);
    free(slow);
    return 0;
}

/* Prints the table, the notes and the answer, and writes the files. 0, or
 * 1 when a file could not be written. */
static int publish_outcome(const run_plan *p, const run_outcome *out)
{
    const ab_result *results = out->results;
    const int n = out->n;
    const ab_peaks *peaks = out->have_peaks ? &out->peaks : NULL;
    ab_report_table(stdout, results, n, &p->plan.topo);
    ab_summary *summary = calloc((size_t)(n > 0 ? n : 1), sizeof *summary);
    int n_summary = summary ? ab_summarize(results, n, summary, n) : 0;
    ab_report_unstable(stdout, results, n, &p->o, p->plan.machine.loadavg, peaks);
    /* The correlations the rows' intervals allowed for (each group's own,
     * bench.h), when any did. */
    double rho_lo = 1.0, rho_hi = 0.0;
    for (int i = 0; i < n; i++)
        if (!results[i].error[0] && results[i].reps > 0) {
            rho_lo = results[i].rho < rho_lo ? results[i].rho : rho_lo;
            rho_hi = results[i].rho > rho_hi ? results[i].rho : rho_hi;
        }
    if (rho_hi > 0.0) {
        char range[32];
        snprintf(range, sizeof range, rho_lo < rho_hi ? "%.2f to %.2f" : "%.2f", rho_lo, rho_hi);
        printf("note: the machine drifted: a repetition's time correlated with the next one's "
               "(lag 1, pooled over the run's rows, the latest weighing most) at %s, so each +- "
               "counts n repetitions as n(1-rho)/(1+rho) = %.2gn%s independent ones\n", range,
               ab_effective_count(1, rho_hi), rho_lo < rho_hi ? " or more" : "");
    }
    if (out->n_skipped)
        printf("note: %d benchmark%s skipped, one call taking over %.2g s; name the kernel "
               "(--kernel K) to time %s:\n%s\n", out->n_skipped, out->n_skipped == 1 ? "" : "s",
               p->o.max_call_time, out->n_skipped == 1 ? "it" : "them", out->skipped);
    if (p->want_auto) {
        int tuned = 0;
        for (int i = 0; i < n; i++)
            tuned += strcmp(results[i].chosen_by, "wisdom") == 0;
        printf("note: --kernel auto: %d of %d benchmarks ran the kernel the wisdom chose, the "
               "others the CPU-feature default (attnbench info lists the wisdom)\n", tuned, n);
    }
    for (int e = 0; p->counters && e < ab_counters_count(p->counters); e++)
        if (ab_counters_scope(p->counters, e))
            printf("note: counter %s counts %s (values per iteration in the JSON and CSV)\n",
                   ab_counters_name(p->counters, e), ab_counters_scope(p->counters, e));
    if (!out->pinned)
        printf("note: threads could not be pinned to cores\n");
    if (p->plan.machine.emulated[0])
        printf("note: EMULATED (%s): these timings say nothing about the target CPU\n",
               p->plan.machine.emulated);
    if (peaks) {
        printf("peaks: %s (%s", peaks->from_cache ? "cached" : "measured now", peaks->measured_at);
        if (peaks->from_cache)
            printf("; checked now: the FMA loop runs at %.3fx / %.3fx of it at 1 / %d threads",
                   peaks->check_ratio[0], peaks->check_ratio[1], peaks->max_threads);
        printf("); %% of peak is against the kernel's ISA at the threads it uses\n");
    }
    ab_report_answer(stdout, summary, n_summary);
    /* run --lib: each other build's kernels against this build's, paired by
     * round, at compare's defaults (alpha 0.01 over the pairs). */
    const ab_compare_opts judge = { 0.01, 0.05, AB_DEFAULT_RUN_NOISE, AB_DEFAULT_THRESHOLD };
    ab_build_pair *builds = p->n_builds > 1 ? calloc((size_t)(n > 0 ? n : 1), sizeof *builds) : NULL;
    int n_pairs = builds ? ab_summarize_builds(results, n, &judge, builds, n) : 0;
    ab_report_builds(stdout, builds, n_pairs, judge.alpha);

    ab_run_context ctxinfo = {
        .machine = &p->plan.machine, .topology = &p->plan.topo, .peaks = peaks, .counters = p->counters,
        .executable = "attnbench", .threads = p->plan.max_threads, .pinned = out->pinned,
        .min_time = p->o.min_time, .repetitions = p->o.repetitions,
        .max_repetitions = p->o.max_repetitions, .precision = p->o.precision,
        .max_time = p->o.max_time, .unstable_above = p->o.unstable_above, .seed = out->seed,
        .summary = summary,
        .n_summary = n_summary, .builds = builds, .n_builds = n_pairs,
    };
    int io_failed = 0;
    for (int fmt = 0; fmt < 2; fmt++) {
        const char *path = fmt == 0 ? (p->json ? p->json : p->json_dir) : p->csv;
        if (!path)
            continue;
        /* A run none of whose benchmarks gave a time (every one failed, or
         * was skipped as too slow) does not replace an earlier file: a
         * baseline would be lost to a list of errors, or to nothing. A new
         * file, or one in --json-dir, records them. */
        if (out->failed >= n && !(fmt == 0 && p->json_dir) && access(path, F_OK) == 0) {
            fprintf(stderr, "attnbench run: %s: %s not replaced\n",
                    n > 0 ? "every benchmark failed" : "no benchmark was timed", path);
            io_failed = 1;
            continue;
        }
        char *data = NULL, written[PATH_MAX], err[512];
        size_t size = 0;
        snprintf(err, sizeof err, "out of memory rendering the report");
        if (render(fmt == 1, &ctxinfo, results, n, &data, &size) != 0
            || publish(data, size, path, fmt == 0 && p->json_dir, written, sizeof written, err,
                       sizeof err) != 0) {
            fprintf(stderr, "attnbench run: %s\n", err);
            io_failed = 1;
        } else {
            printf("wrote %s\n", written);
        }
        free(data);
    }
    free(summary);
    free(builds);
    return io_failed;
}

/* parse and plan → execute → publish. */
int ab_cmd_run(int argc, char **argv)
{
    run_plan *p = calloc(1, sizeof *p);
    run_outcome *out = calloc(1, sizeof *out);
    int rc = !p || !out ? AB_EXIT_FAIL : plan_of(argc, argv, p);
    if (rc < 0) {
        rc = execute(p, out);
        if (rc == 0) {
            /* Nothing timed (every benchmark skipped as too slow) is no
             * result: a script must not take it for one. */
            if (out->n == 0)
                fprintf(stderr, "attnbench run: no benchmark was timed\n");
            rc = publish_outcome(p, out) || out->failed || out->n == 0 ? AB_EXIT_FAIL : AB_EXIT_OK;
        }
    }
    if (!p || !out)
        fprintf(stderr, "attnbench run: out of memory\n");
    if (p) {
        ab_counters_close(p->counters);
        attn_bert_free(p->model);
        unload_builds(p);
    }
    if (out)
        free(out->results);
    free(p);
    free(out);
    return rc;
}
