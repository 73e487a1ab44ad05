/*
 * cmd_explain.c — `attnbench explain`: how one call of each shape shares
 * its work among N threads (explain.h). The table shows each distinct
 * region, with its phases (parts its threads start after a barrier, in
 * the same team, marked +) under it, once, in the order it first ran, with
 * how often it ran; the JSON has every region and phase of the call, in order, with
 * every thread's units.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "explain.h"
#include "json.h"
#include "suites.h"
#include "topology.h"

#define MAX_SHAPES 64

static int same_region(const attn_region *a, const attn_region *b)
{
    return a->n_threads == b->n_threads && a->after_barrier == b->after_barrier
        && strcmp(a->name, b->name) == 0 && strcmp(a->unit, b->unit) == 0
        && memcmp(a->units_per_thread, b->units_per_thread,
                  (size_t)a->n_threads * sizeof *a->units_per_thread) == 0;
}

/* The end of the region starting at i: its phases (after_barrier) follow it. */
static int group_end(const attn_trace *t, int i)
{
    int j = i + 1;
    while (j < t->n && t->regions[j].after_barrier)
        j++;
    return j;
}

/* 1 when the regions starting at a and b are the same with the same phases.
 * A region is shown, counted and timed whole: compared head by head, a
 * pre-LN layer's QKV and first FFN products (both headed by the same
 * "layernorm LxD, in the gemm's region" phase) read as one region of 2
 * calls holding both products' time, the FFN's product a phase of the
 * output product's region. */
static int same_group(const attn_trace *t, int a, int b)
{
    int la = group_end(t, a) - a, lb = group_end(t, b) - b;
    if (la != lb)
        return 0;
    for (int k = 0; k < la; k++)
        if (!same_region(&t->regions[a + k], &t->regions[b + k]))
            return 0;
    return 1;
}

/* times: a measured call's (ab_explain_measure), or NULL for a dry run. */
static void print_call(const char *shape, const char *kernel, int n_threads, const attn_trace *t,
                       const ab_explain_times *times)
{
    int counted, regions = 0;
    double worst = ab_explain_worst(t, &counted);
    for (int i = 0; i < t->n; i++)
        regions += !t->regions[i].after_barrier;
    printf("%s on %s, %d thread%s: %d parallel region%s", shape, kernel, n_threads,
           n_threads == 1 ? "" : "s", regions, regions == 1 ? "" : "s");
    if (regions < t->n)
        printf(", %d phases (+: after a barrier, in the region before it)", t->n);
    printf("\n");
    if (times)
        printf("  measured: the call %.3f ms (median of %d after a warm-up), %.3f ms of it "
               "before the first region; a region's ms run from its fork to the next one's "
               "(serial work after it included), summed over its calls\n",
               1e3 * times->call_s, times->reps, 1e3 * times->before_s);
    if (t->n == 0)
        return;
    printf("  %5s %9s %7s %7s %9s  %s", "calls", "units", "min", "max", "imbalance",
           times ? "       ms      %  " : "");
    printf("%s  [unit]\n", "region");
    for (int i = 0, end; i < t->n; i = end) {
        end = group_end(t, i);
        int seen = 0, calls = 0;
        for (int j = 0; j < i && !seen; j = group_end(t, j))
            seen = same_group(t, j, i);
        if (seen)
            continue;
        double seconds = 0.0;   /* the region's, phases included: the head's */
        for (int j = i; j < t->n; j = group_end(t, j))
            if (same_group(t, j, i)) {
                calls++;
                seconds += times ? times->region_s[j] : 0.0;
            }
        for (int p = i; p < end; p++) {
            const attn_region *r = &t->regions[p];
            long lo = r->units_per_thread[0], hi = lo;
            for (int k = 1; k < r->n_threads; k++) {
                lo = r->units_per_thread[k] < lo ? r->units_per_thread[k] : lo;
                hi = r->units_per_thread[k] > hi ? r->units_per_thread[k] : hi;
            }
            long units = attn_region_units(r);
            printf("  %5d %9ld %7ld %7ld %8.3f%s", calls, units, lo, hi,
                   attn_region_imbalance(r), units < r->n_threads ? "*" : " ");
            if (times && r->after_barrier)
                printf(" %8s %6s  ", "-", "-");
            else if (times)
                printf(" %8.3f %5.1f%%  ", 1e3 * seconds,
                       times->call_s > 0 ? 100.0 * seconds / times->call_s : 0.0);
            printf("  %s%s  [%s]\n", r->after_barrier ? "+ " : "", r->name, r->unit);
        }
    }
    const char *what = regions < t->n ? "phase" : "region";
    if (counted)
        printf("  worst imbalance %.3f over the %d %s%s with at least %d units", worst, counted,
               what, counted == 1 ? "" : "s", n_threads);
    else
        printf("  no %s has %d units or more", what, n_threads);
    printf("%s\n", counted < t->n ? " (* fewer units than threads: some threads idle)" : "");
}

static void json_call(ab_json *j, const char *shape, const char *kernel, int n_threads,
                      const ab_param_setting *ps, int n_ps,
                      const attn_trace *t, const ab_explain_times *times)
{
    ab_json_begin_object(j, NULL);
    ab_json_string(j, "shape", shape);
    ab_json_string(j, "kernel", kernel);
    ab_json_int(j, "threads", n_threads);
    if (n_ps > 0) {   /* --param: what the kernel was set to */
        ab_json_begin_object(j, "params");
        for (int i = 0; i < n_ps; i++)
            ab_json_int(j, ps[i].name, ps[i].value);
        ab_json_end_object(j);
    }
    if (times) {
        ab_json_int(j, "measured_calls", times->reps);
        ab_json_number(j, "call_seconds", times->call_s);
        ab_json_number(j, "before_first_region_seconds", times->before_s);
    }
    ab_json_begin_array(j, "regions");
    for (int i = 0; i < t->n; i++) {
        const attn_region *r = &t->regions[i];
        ab_json_begin_object(j, NULL);
        ab_json_string(j, "name", r->name);
        ab_json_string(j, "unit", r->unit);
        ab_json_number(j, "imbalance", attn_region_imbalance(r));
        if (r->after_barrier)   /* a phase of the region before it: no fork and join */
            ab_json_bool(j, "after_barrier", 1);
        else if (times)
            ab_json_number(j, "seconds", times->region_s[i]);
        ab_json_begin_array(j, "units_per_thread");
        for (int k = 0; k < r->n_threads; k++)
            ab_json_int(j, NULL, r->units_per_thread[k]);
        ab_json_end_array(j);
        ab_json_end_object(j);
    }
    ab_json_end_array(j);
    ab_json_end_object(j);
}

int ab_cmd_explain(int argc, char **argv)
{
    const char *shape_text = NULL, *kernel = NULL, *json_path = NULL, *params_text = NULL;
    int threads = 0, measure = 0, n_pos;
    const ab_flag flags[] = {
        { "shape", AB_FLAG_STRING, &shape_text, "SHAPES", "the shapes, as for run (';' between)", 0, 0 },
        { "kernel", AB_FLAG_STRING, &kernel, "K", "a kernel name, auto or auto-bf16 (default: auto, or ATTN_KERNEL)", 0, 0 },
        { "threads", AB_FLAG_INT, &threads, "N", "threads to split for: 1 to 4096, whatever this machine has (with --measure, at most its cores)", 1, 4096 },
        { "json", AB_FLAG_STRING, &json_path, "FILE", "also write the regions as JSON", 0, 0 },
        { "measure", AB_FLAG_INT, &measure, "R", "run the call R times after a warm-up on N threads of this machine and give each region's median time", 1, 100000 },
        { "param", AB_FLAG_STRING, &params_text, "K=V,..", "set the kernel's parameters (attnbench list shows them), as run's --param: e.g. split, mc, bq", 0, 0 },
    };
    int rc = ab_cli_command("explain",
                            "attnbench explain --shape SHAPES --threads N [--kernel K] [--param K=V,..] [--measure R] [--json FILE]",
                            "Shows how one call of each shape shares its work among N threads:\n"
                            "every parallel region the kernel runs, its unit of work, how many\n"
                            "units each thread gets, and the imbalance (largest share over the\n"
                            "mean). The call is a dry run of the kernel's own code (its partition\n"
                            "functions, no arithmetic), so any N can be read on any machine.\n"
                            "Regions handed out dynamically (attention tiles, decode splits) are\n"
                            "shown as equal units would be dealt. Exit 1 when a kernel cannot\n"
                            "describe its split (a library's own threading).\n"
                            "With --measure R the call runs, R times after a warm-up, on N of\n"
                            "this machine's cores, and each region's median time is shown:\n"
                            "from its fork to the next region's, so the serial work after a\n"
                            "region counts in it (where the time goes at N threads).\n"
                            "With --param the kernel's parameters are set first, so a split or\n"
                            "blocking can be read, or timed region by region, against another.",
                            argc, argv, flags, 6, NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;
    if (!shape_text || threads < 1) {
        fprintf(stderr, "attnbench explain: --shape and --threads are required\n");
        return AB_EXIT_USAGE;
    }
    if (!kernel)
        kernel = getenv("ATTN_KERNEL") && *getenv("ATTN_KERNEL") ? getenv("ATTN_KERNEL") : "auto";
    const attn_kernel *row = attn_registry_find(kernel);
    if (!row && strcmp(kernel, "auto") != 0 && strcmp(kernel, "auto-bf16") != 0) {
        fprintf(stderr, "attnbench explain: unknown kernel '%s' (attnbench list)\n", kernel);
        return AB_EXIT_USAGE;
    }
    if (row && !attn_registry_runnable(row)) {
        /* Its dry run is its own code, which this CPU cannot execute. */
        fprintf(stderr, "attnbench explain: kernel %s cannot run on this machine\n", kernel);
        return AB_EXIT_FAIL;
    }
    char err[512];
    ab_param_setting settings[AB_MAX_PARAM_SETTINGS];
    int n_settings = params_text ? ab_params_parse(params_text, settings, AB_MAX_PARAM_SETTINGS,
                                                   err, sizeof err)
                                 : 0;
    for (int i = 0; row && i < n_settings; i++)   /* auto's kernel is checked when it is made */
        if (ab_param_check(row, &settings[i], err, sizeof err) <= 0)
            n_settings = -1;
    if (n_settings < 0) {
        fprintf(stderr, "attnbench explain: %s\n", err);
        return AB_EXIT_USAGE;
    }
    ab_shape *shapes = malloc(MAX_SHAPES * sizeof *shapes);
    if (!shapes) {
        fprintf(stderr, "attnbench explain: out of memory\n");
        return AB_EXIT_FAIL;
    }
    int ns = ab_shapes_select(NULL, shape_text, AB_OP_SDPA, 0, shapes, MAX_SHAPES, NULL, err,
                              sizeof err);
    if (ns < 0) {
        fprintf(stderr, "attnbench explain: %s\n", err);
        free(shapes);
        return AB_EXIT_USAGE;
    }
    ab_topology topo;
    const int have_topo = measure && ab_topology_load(&topo, err, sizeof err) == 0;
    if (measure && !have_topo)   /* as run says it */
        fprintf(stderr, "attnbench explain: topology unavailable (%s); threads are not pinned\n",
                err);
    if (have_topo && threads > topo.cores) {   /* a usage error, as run's --threads */
        fprintf(stderr, "attnbench explain: --threads %d --measure: this machine has %d cores "
                "(a dry run, without --measure, takes any count)\n", threads, topo.cores);
        free(shapes);
        return AB_EXIT_USAGE;
    }
    ab_atomic_file file;
    ab_json j;
    if (json_path) {
        if (ab_atomic_open(&file, json_path, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench explain: %s\n", err);
            free(shapes);
            return AB_EXIT_FAIL;
        }
        ab_json_init(&j, file.f);
        ab_json_begin_object(&j, NULL);
        ab_json_begin_array(&j, "calls");
    }
    int failed = 0;
    attn_trace trace = { 0 };
    for (int i = 0; i < ns && !failed; i++) {
        char text[512], ran[64];
        ab_shape_format(&shapes[i], text, sizeof text);
        ab_explain_times times = { .reps = measure, .topo = have_topo ? &topo : NULL };
        ab_explain_times *timed = measure ? &times : NULL;
        if (ab_explain_shape(&shapes[i], kernel, threads, settings, n_settings, &trace, timed, ran,
                             sizeof ran, err, sizeof err) != 0) {
            fprintf(stderr, "attnbench explain: %s: %s\n", text, err);
            failed = 1;
            break;
        }
        char shown[640];   /* the kernel, and what --param set on it */
        snprintf(shown, sizeof shown, "%s%s%.500s", ran, params_text ? " --param " : "",
                 params_text ? params_text : "");
        print_call(text, shown, threads, &trace, timed);
        if (json_path)
            json_call(&j, text, ran, threads, settings, n_settings, &trace, timed);
        free(times.region_s);
    }
    attn_trace_clear(&trace);
    free(shapes);
    if (json_path) {
        if (failed) {
            ab_atomic_abort(&file);
        } else {
            ab_json_end_array(&j);
            ab_json_end_object(&j);
            fputc('\n', file.f);
            if (ab_atomic_commit(&file, 0, err, sizeof err) != 0) {
                fprintf(stderr, "attnbench explain: %s\n", err);
                return AB_EXIT_FAIL;
            }
        }
    }
    return failed ? AB_EXIT_FAIL : AB_EXIT_OK;
}
