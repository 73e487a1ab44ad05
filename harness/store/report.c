/* report.c — tables, Google Benchmark JSON and CSV for benchmark results. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "internal.h"
#include "report.h"

void ab_format_time(double s, char *buf, size_t len)
{
    if (!(s >= 0.0) || !isfinite(s))
        snprintf(buf, len, "-");
    else if (s < 1e-6)
        snprintf(buf, len, "%.0f ns", s * 1e9);
    else if (s < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else if (s < 1.0)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.3g s", s);
}

/* ---- Table ---------------------------------------------------------------------- */

void ab_report_table(FILE *out, const ab_result *r, int n, const ab_topology *topo)
{
    /* The kernel and shape columns fit their longest entries. */
    int kw = 10, sw = 36;
    for (int i = 0; i < n; i++) {
        char label[160];
        ab_shape_label(&r[i].shape, label, sizeof label);
        kw = (int)strlen(r[i].kernel) > kw ? (int)strlen(r[i].kernel) : kw;
        sw = (int)strlen(label) > sw ? (int)strlen(label) : sw;
    }
    fprintf(out, "%-*s %-8s %-*s %3s %10s %6s %9s %7s %6s  %s\n", kw, "kernel", "op", sw, "shape",
            "thr", "median", "+-95%", "GFLOP/s", "%peak", "CV", "");
    for (int i = 0; i < n; i++) {
        char label[160], t[32];
        ab_shape_label(&r[i].shape, label, sizeof label);
        if (r[i].error[0]) {
            fprintf(out, "%-*s %-8s %-*s %3d  FAILED: %s\n", kw, r[i].kernel,
                    ab_op_name(r[i].shape.op), sw, label, r[i].threads, r[i].error);
            continue;
        }
        double med = r[i].real_stats.median, pct = ab_result_pct_peak(&r[i], med);
        ab_format_time(med, t, sizeof t);
        char pct_text[16];
        if (isnan(pct))
            snprintf(pct_text, sizeof pct_text, "-");
        else
            snprintf(pct_text, sizeof pct_text, "%.1f%%", pct);
        char prec_text[16];   /* "-": too few repetitions for a 95% interval */
        if (isnan(r[i].precision))
            snprintf(prec_text, sizeof prec_text, "-");
        else
            snprintf(prec_text, sizeof prec_text, "%.1f%%", 100.0 * r[i].precision);
        fprintf(out, "%-*s %-8s %-*s %3d %10s %6s %9.2f %7s %5.1f%%  %s", kw, r[i].kernel,
                ab_op_name(r[i].shape.op), sw, label, r[i].threads, t, prec_text,
                ab_result_gflops(&r[i], med), pct_text, 100.0 * r[i].real_stats.cv,
                r[i].unstable ? "UNSTABLE" : "");
        int tail = r[i].unstable;
        if (!isnan(r[i].extra_rss)) {
            fprintf(out, "%smemory +%.1f MiB", tail ? "  " : "", r[i].extra_rss / 1048576.0);
            tail = 1;
        }
        /* A memory-bound row (a decoding step) is judged by its bytes. */
        const size_t cache = ab_topology_cache_capacity(topo, r[i].threads);
        const double bw = ab_result_pct_bandwidth(&r[i], med, cache);
        if (!isnan(bw)) {
            fprintf(out, "%s%.1f GB/s, %.0f%% of the read bandwidth (+-%.0f%%)", tail ? "  " : "",
                    r[i].bytes / med / 1e9, bw, 100.0 * ab_result_read_bw_error(&r[i], cache));
            tail = 1;
        }
        /* An op with a rate (generate: tokens; bert: sequences) is reported
         * in it too, as the JSON's rate keys are: "N tokens/s, X ms per
         * token" (api.md §7.6), the words taken from those keys. */
        const ab_op_row *row = ab_op_row_of(r[i].shape.op);
        const char *per_s = row ? row->rate.per_second : NULL;
        const char *ms_per = row ? row->rate.ms_per : NULL;
        const char *cut = per_s ? strstr(per_s, "_per_second") : NULL;
        double units = cut && ms_per ? ab_shape_value(&r[i].shape, row->rate.unit) : 0.0;
        if (units > 0.0 && med > 0.0 && strncmp(ms_per, "ms_per_", 7) == 0)
            fprintf(out, "%s%.4g %.*s/s, %.4g ms per %s", tail ? "  " : "", units / med,
                    (int)(cut - per_s), per_s, 1e3 * med / units, ms_per + 7);
        fputc('\n', out);
    }
}

void ab_report_answer(FILE *out, const ab_summary *s, int n)
{
    if (n == 0)
        return;
    int w = 20;
    for (int i = 0; i < n; i++)
        w = (int)strlen(s[i].shape) > w ? (int)strlen(s[i].shape) : w;
    fprintf(out, "\nOn this machine, use (per shape and thread count: the fastest kernel, and how "
            "much slower the runner-up is, with its 95%% interval):\n");
    for (int i = 0; i < n; i++) {
        const ab_summary *x = &s[i];
        /* A bf16 row is named as what it is: not the fp32-exact kernel a
         * reader of "faster" would otherwise take it for. */
        char best[96];
        snprintf(best, sizeof best, "%s%s", x->best,
                 x->best_math == ATTN_BF16 ? " (bf16 products, not fp32-exact)" : "");
        if (isnan(x->ci_low))
            fprintf(out, "  %-*s  %s or %s: too few repetitions to rank (%.3fx)", w, x->shape,
                    best, x->runner_up, x->ratio);
        else if (x->faster)
            fprintf(out, "  %-*s  %s: %.2fx faster than %s [%.3f, %.3f]", w, x->shape, best,
                    x->ratio, x->runner_up, x->ci_low, x->ci_high);
        else
            fprintf(out, "  %-*s  %s or %s: a tie (%.3fx [%.3f, %.3f])", w, x->shape, best,
                    x->runner_up, x->ratio, x->ci_low, x->ci_high);
        fprintf(out, "%s\n", x->unstable ? "; one of them UNSTABLE" : "");
    }
}

void ab_report_builds(FILE *out, const ab_build_pair *b, int n, double alpha)
{
    if (n == 0)
        return;
    int w = 20;
    for (int i = 0; i < n; i++)
        w = (int)strlen(b[i].shape) > w ? (int)strlen(b[i].shape) : w;
    fprintf(out, "\nBuilds side by side (time of BUILD / this build's, from the rounds both ran "
            "in: paired t, alpha %g over %d pair%s; MDE: the change the data see 80%% of the "
            "time):\n", alpha, n, n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
        const ab_run_comparison *c = &b[i].c;
        fprintf(out, "  %-*s  %s@%s / @self  %.3f [%.3f, %.3f]  MDE %.1f%%  %d rounds  %s\n", w,
                b[i].shape, b[i].kernel, b[i].build, c->ratio, c->lo, c->hi, 100.0 * c->mde,
                c->runs_base, ab_verdict_name(c->verdict));
    }
}

void ab_report_unstable(FILE *out, const ab_result *r, int n, const ab_bench_opts *o,
                        const double *loadavg, const ab_peaks *peaks)
{
    int unstable = 0, timed = 0, by_time = 0, by_count = 0;
    for (int i = 0; i < n; i++) {
        timed += !r[i].error[0];
        if (r[i].error[0] || !r[i].unstable)
            continue;
        unstable++;
        if (o->max_time > 0.0 && r[i].timed >= o->max_time)
            by_time++;
        else if (r[i].reps >= ab_bench_rep_cap(o))
            by_count++;
    }
    if (!unstable)
        return;
    /* What stopped them: the time cap, the repetition cap, or the
     * precision asked, when it is looser than the flag's (a group's rows
     * end only at a cap or with their interval holding under its final
     * drift, bench.h). */
    fprintf(out, "note: %d of %d benchmarks UNSTABLE: their median is not known to +-%.3g%% "
            "(95%%) when they stopped (", unstable, timed, 100.0 * o->unstable_above);
    const char *sep = "";
    if (by_time)
        fprintf(out, "%d after --max-time's %.3g s of repetitions", by_time, o->max_time), sep = ", ";
    if (by_count)
        fprintf(out, "%s%d at --max-repetitions %d", sep, by_count, ab_bench_rep_cap(o)), sep = ", ";
    if (unstable - by_time - by_count)
        fprintf(out, "%s%d at --precision %.3g%%, looser than that", sep,
                unstable - by_time - by_count, 100.0 * o->precision);
    if (loadavg && loadavg[0] >= 0)
        fprintf(out, "; load average %.2f at the start", loadavg[0]);
    if (peaks && peaks->noise > 0)
        fprintf(out, "; 5 ms passes of an FMA loop varied by %.0f%%, of a read of the shared "
                "cache by %.0f%%%s", 100.0 * peaks->noise, 100.0 * peaks->cache_noise,
                peaks->noise > 0.05 || peaks->cache_noise > 0.05
                ? ": the machine itself is busy" : "");
    fputc(')', out);
    fprintf(out, ". To settle them: a longer --max-time%s, fewer threads (--threads 1 is the least "
            "disturbed on a shared machine), or a quieter machine. attnbench compare reports "
            "them without judging them.\n", by_count ? " and a higher --max-repetitions" : "");
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_context(ab_json *j, const ab_run_context *c)
{
    const ab_machine *m = c->machine;
    const ab_topology *t = c->topology;
    char date[64], features[256] = "";
    time_t now = time(NULL);
    struct tm tmv;
    localtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S%z", &tmv);
    for (unsigned bit = 1; bit < (1u << ATTN_CPU_FEATURE_COUNT); bit <<= 1)
        if ((m->usable & bit) && strlen(features) + 16 < sizeof features) {
            if (features[0])
                strcat(features, ",");
            strcat(features, attn_cpu_feature_name(bit));
        }

    ab_json_begin_object(j, "context");
    /* The fields Google Benchmark writes, in its names and units. */
    ab_json_string(j, "date", date);
    ab_json_string(j, "host_name", m->hostname);
    ab_json_string(j, "executable", c->executable);
    ab_json_int(j, "num_cpus", m->online_cpus);
    /* Only a measured clock: /proc/cpuinfo's is the nominal one in a VM. */
    if (c->peaks && c->peaks->clock_mhz > 0)
        ab_json_int(j, "mhz_per_cpu", (long long)llround(c->peaks->clock_mhz));
    ab_json_bool(j, "cpu_scaling_enabled", m->governor[0] && strcmp(m->governor, "performance") != 0);
    ab_json_begin_array(j, "caches");
    for (int i = 0; i < t->n_caches; i++) {
        const ab_cache *ca = &t->caches[i];
        ab_json_begin_object(j, NULL);
        ab_json_string(j, "type", ca->type == 'd' ? "Data" : ca->type == 'i' ? "Instruction"
                                                                             : "Unified");
        ab_json_int(j, "level", ca->level);
        ab_json_int(j, "size", (long long)ca->size);
        ab_json_int(j, "num_sharing", ca->cores_sharing);
        ab_json_end_object(j);
    }
    ab_json_end_array(j);
    ab_json_begin_array(j, "load_avg");
    for (int i = 0; i < 3; i++)
        ab_json_number(j, NULL, m->loadavg[i]);
    ab_json_end_array(j);
    ab_json_string(j, "library_build_type", ab_build_type());

    /* attnbench's own context. */
    ab_json_string(j, "attnbench_version", ATTN_VERSION_STRING);
    ab_json_string(j, "cpu_vendor", m->vendor);
    ab_json_string(j, "cpu_model", m->model);
    ab_json_string(j, "hypervisor", m->hypervisor);
    ab_json_string(j, "emulated", m->emulated);
    ab_json_string(j, "os", m->os);
    ab_json_string(j, "isa_usable", features);
    ab_json_string(j, "cpufreq_governor", m->governor);
    ab_json_int(j, "physical_cores", t->cores);
    ab_json_string(j, "topology_source", t->source);
    ab_json_int(j, "threads", c->threads);
    ab_json_bool(j, "threads_pinned", c->pinned);
    ab_json_string(j, "omp_proc_bind", getenv("OMP_PROC_BIND"));
    ab_json_string(j, "omp_places", getenv("OMP_PLACES"));
    ab_json_number(j, "min_time", c->min_time);
    ab_json_int(j, "repetitions", c->repetitions);
    ab_json_int(j, "max_repetitions", c->max_repetitions);
    ab_json_number(j, "precision", c->precision);
    ab_json_number(j, "unstable_above", c->unstable_above);
    ab_json_number(j, "max_time", c->max_time);
    ab_json_string(j, "timing", "side by side: per shape, rounds of one repetition of every "
                   "kernel and thread count, in a shuffled order");
    char seed[24];
    snprintf(seed, sizeof seed, "%016llx", (unsigned long long)c->seed);
    ab_json_string(j, "shuffle_seed", seed);
    /* The machine's label across runs and commits (kernels/wisdom.h). */
    char key[320], id[20];
    attn_machine_hardware_key(key, sizeof key);
    snprintf(id, sizeof id, "%016llx", (unsigned long long)attn_machine_hash(key));
    ab_json_string(j, "machine_key", key);
    ab_json_string(j, "machine_id", id);
    ab_json_string(j, "git_commit", ab_build_commit());
    ab_json_string(j, "compiler", ab_build_compiler());
    ab_json_string(j, "build_flags", ab_build_flags());
    if (c->peaks) {
        ab_json_begin_object(j, "peak_gflops");
        for (int i = 0; i < AB_ISA_COUNT; i++) {
            double g = ab_peak_gflops(c->peaks, (ab_isa)i, c->threads);
            if (g > 0)
                ab_json_number(j, ab_isa_name((ab_isa)i), g);
        }
        ab_json_end_object(j);
        ab_json_begin_object(j, "peak_error");
        for (int i = 0; i < AB_ISA_COUNT; i++)
            if (ab_peak_gflops(c->peaks, (ab_isa)i, c->threads) > 0)
                ab_json_number(j, ab_isa_name((ab_isa)i), ab_peak_error(c->peaks, (ab_isa)i,
                                                                        c->threads));
        ab_json_end_object(j);
        ab_json_number(j, "triad_gbs", ab_peak_triad_gbs(c->peaks, c->threads));
        ab_json_number(j, "read_gbs", ab_peak_read_gbs(c->peaks, c->threads));
        ab_json_string(j, "peaks_measured_at", c->peaks->measured_at);
        ab_json_number(j, "peaks_load_avg", c->peaks->load_avg);
        ab_json_number(j, "peaks_steal", c->peaks->steal);
        if (c->peaks->noise > 0) {
            ab_json_number(j, "machine_noise", c->peaks->noise);
            ab_json_number(j, "machine_cache_noise", c->peaks->cache_noise);
        }
        if (c->peaks->check_ratio[0] > 0) {
            /* The start-of-run check: the FMA rate now over the peak, 1 and all threads. */
            ab_json_begin_array(j, "peaks_check");
            ab_json_number(j, NULL, c->peaks->check_ratio[0]);
            ab_json_number(j, NULL, c->peaks->check_ratio[1]);
            ab_json_end_array(j);
        }
    }
    if (c->counters) {
        ab_json_int(j, "counter_passes", ab_counters_passes(c->counters));
        /* What each counted event covers: every thread of the process, or
         * only the one that called the kernel (counters.h). */
        ab_json_begin_object(j, "counters_scope");
        for (int e = 0; e < ab_counters_count(c->counters); e++)
            if (ab_counters_scope(c->counters, e))
                ab_json_string(j, ab_counters_name(c->counters, e),
                               ab_counters_scope(c->counters, e));
        ab_json_end_object(j);
        ab_json_begin_array(j, "counters_unavailable");
        for (int e = 0; e < ab_counters_count(c->counters); e++) {
            const char *why = ab_counters_unavailable(c->counters, e);
            if (!why)
                continue;
            ab_json_begin_object(j, NULL);
            ab_json_string(j, "name", ab_counters_name(c->counters, e));
            ab_json_string(j, "reason", why);
            ab_json_end_object(j);
        }
        ab_json_end_array(j);
    }
    ab_json_end_object(j);
}

/* The counters of one entry, from a time per iteration and event values. */
static void json_counters(ab_json *j, const ab_run_context *c, const ab_result *r, double seconds,
                          const double *events)
{
    ab_json_number(j, "GFLOPS", ab_result_gflops(r, seconds));
    ab_json_number(j, "pct_peak", ab_result_pct_peak(r, seconds));
    ab_json_number(j, "flops", r->flops);
    ab_json_number(j, "bytes", r->bytes);
    ab_json_number(j, "arith_intensity", r->bytes > 0 ? r->flops / r->bytes : NAN);
    ab_json_number(j, "GBps", seconds > 0 ? r->bytes / seconds / 1e9 : NAN);
    /* held to DRAM's read bandwidth only beyond what its threads' caches hold */
    size_t cache = ab_topology_cache_capacity(c->topology, r->threads);
    ab_json_number(j, "pct_read_bw", ab_result_pct_bandwidth(r, seconds, cache));
    ab_json_number(j, "read_bw_error", ab_result_read_bw_error(r, cache));
    ab_json_number(j, "peak_gflops", r->peak_gflops > 0 ? r->peak_gflops : NAN);
    ab_json_number(j, "peak_error", r->peak_gflops > 0 ? r->peak_error : NAN);
    const ab_op_row *row = ab_op_row_of(r->shape.op);
    if (row && row->rate.per_second && seconds > 0) {
        /* the op's units of work per call (ops.h): its tokens, sequences */
        double units = ab_shape_value(&r->shape, row->rate.unit);
        ab_json_number(j, row->rate.per_second, units / seconds);
        ab_json_number(j, row->rate.ms_per, 1e3 * seconds / units);
    }
    if (!isnan(r->extra_rss))
        ab_json_number(j, "extra_rss_bytes", r->extra_rss);
    for (int e = 0; c->counters && e < r->n_events; e++)
        if (!ab_counters_unavailable(c->counters, e))
            ab_json_number(j, ab_counters_name(c->counters, e), events[e]);
}

static void json_entry_head(ab_json *j, const ab_result *r, int family, const char *name,
                            const char *run_type)
{
    ab_json_string(j, "name", name);
    ab_json_int(j, "family_index", family);
    ab_json_int(j, "per_family_instance_index", 0);
    ab_json_string(j, "run_name", r->run_name);
    ab_json_string(j, "run_type", run_type);
    ab_json_int(j, "repetitions", r->reps);
    ab_json_int(j, "threads", r->threads);
}

/* run --reference: the medians of the reference loops' times in the rounds
 * of r's repetitions (ns), and r's time in those units — the median over
 * its repetitions of real / the round's reference (docs/verdicts.md). */
static void json_reference(ab_json *j, const ab_result *r)
{
    if (r->reps < 1 || !(r->ref_compute[0] > 0.0) || !(r->ref_read[0] > 0.0))
        return;
    double c[AB_MAX_REPS], d[AB_MAX_REPS], per_c[AB_MAX_REPS], per_d[AB_MAX_REPS];
    for (int i = 0; i < r->reps; i++) {
        c[i] = r->ref_compute[i];
        d[i] = r->ref_read[i];
        per_c[i] = r->real[i] / c[i];
        per_d[i] = r->real[i] / d[i];
    }
    ab_json_number(j, "reference_compute_time", ab_median_inplace(c, r->reps) * 1e9);
    ab_json_number(j, "reference_read_time", ab_median_inplace(d, r->reps) * 1e9);
    ab_json_number(j, "real_time_per_compute_reference", ab_median_inplace(per_c, r->reps));
    ab_json_number(j, "real_time_per_read_reference", ab_median_inplace(per_d, r->reps));
}

static void json_result(ab_json *j, const ab_run_context *c, const ab_result *r, int family)
{
    char shape[256];
    ab_shape_format(&r->shape, shape, sizeof shape);
    if (r->error[0]) {
        /* As Google Benchmark writes a failed benchmark: the time fields are
         * there (zero), so its tools (compare.py) read the file. */
        ab_json_begin_object(j, NULL);
        json_entry_head(j, r, family, r->run_name, "iteration");
        ab_json_int(j, "repetition_index", 0);
        ab_json_bool(j, "error_occurred", 1);
        ab_json_string(j, "error_message", r->error);
        ab_json_int(j, "iterations", 0);
        ab_json_number(j, "real_time", 0.0);
        ab_json_number(j, "cpu_time", 0.0);
        ab_json_string(j, "time_unit", "ns");
        ab_json_string(j, "kernel", r->kernel);
        ab_json_string(j, "shape", shape);
        ab_json_end_object(j);
        return;
    }
    double ev[AB_MAX_EVENTS];
    for (int rep = 0; rep < r->reps; rep++) {
        ab_json_begin_object(j, NULL);
        json_entry_head(j, r, family, r->run_name, "iteration");
        ab_json_int(j, "repetition_index", rep);
        /* The round it was timed in: repetitions of one round ran side by
         * side (compare pairs builds by it). */
        ab_json_int(j, "round", r->round[rep]);
        ab_json_int(j, "iterations", r->iterations);
        ab_json_number(j, "real_time", r->real[rep] * 1e9);
        ab_json_number(j, "cpu_time", r->cpu[rep] * 1e9);
        ab_json_string(j, "time_unit", "ns");
        for (int e = 0; e < r->n_events; e++)
            ev[e] = r->events[e][rep];
        json_counters(j, c, r, r->real[rep], ev);
        ab_json_string(j, "kernel", r->kernel);
        ab_json_string(j, "chosen_by", r->chosen_by);
        ab_json_string(j, "shape", shape);
        ab_json_end_object(j);
    }

    /* Aggregates: the time-valued ones carry counters computed from that time
     * (events: the same statistic of the per-repetition values). */
    static const char *const names[] = { "mean", "median", "stddev", "cv", "min" };
    for (int a = 0; a < 5; a++) {
        char name[300];
        snprintf(name, sizeof name, "%s_%s", r->run_name, names[a]);
        const ab_stats *rs = &r->real_stats, *cs = &r->cpu_stats;
        double real = 0, cpu = 0;
        switch (a) {
        case 0: real = rs->mean; cpu = cs->mean; break;
        case 1: real = rs->median; cpu = cs->median; break;
        case 2: real = rs->stddev; cpu = cs->stddev; break;
        case 3: real = rs->cv; cpu = cs->cv; break;
        case 4: real = rs->min; cpu = cs->min; break;
        }
        ab_json_begin_object(j, NULL);
        json_entry_head(j, r, family, name, "aggregate");
        ab_json_string(j, "aggregate_name", names[a]);
        ab_json_string(j, "aggregate_unit", a == 3 ? "percentage" : "time");
        ab_json_int(j, "iterations", r->iterations);
        /* Google Benchmark writes cv as a fraction in the time fields. */
        ab_json_number(j, "real_time", a == 3 ? real : real * 1e9);
        ab_json_number(j, "cpu_time", a == 3 ? cpu : cpu * 1e9);
        ab_json_string(j, "time_unit", "ns");
        if (a != 2 && a != 3) {
            for (int e = 0; e < r->n_events; e++) {
                ab_stats es;
                ev[e] = ab_stats_compute(r->events[e], r->reps, &es) == 0
                      ? (a == 0 ? es.mean : a == 1 ? es.median : es.min) : NAN;
            }
            json_counters(j, c, r, real, ev);
        }
        ab_json_bool(j, "unstable", r->unstable);
        /* How well this run knows its median: the 95% interval (ns) and its
         * relative half-width. */
        ab_json_number(j, "median_ci_low", r->median_lo * 1e9);
        ab_json_number(j, "median_ci_high", r->median_hi * 1e9);
        ab_json_number(j, "median_precision", r->precision);
        /* The lag-1 correlation of repetitions that interval allowed for. */
        ab_json_number(j, "median_ci_rho", r->rho);
        if (a == 1)
            json_reference(j, r);
        ab_json_string(j, "kernel", r->kernel);
        ab_json_string(j, "chosen_by", r->chosen_by);
        ab_json_string(j, "shape", shape);
        ab_json_end_object(j);
    }
}

void ab_report_json(FILE *out, const ab_run_context *c, const ab_result *r, int n)
{
    ab_json j;
    ab_json_init(&j, out);
    ab_json_begin_object(&j, NULL);
    json_context(&j, c);
    ab_json_begin_array(&j, "benchmarks");
    for (int i = 0; i < n; i++)
        json_result(&j, c, &r[i], i);
    ab_json_end_array(&j);
    /* The answer (summary.h); Google Benchmark's tools ignore this key. */
    ab_json_begin_array(&j, "summary");
    for (int i = 0; i < c->n_summary; i++) {
        const ab_summary *x = &c->summary[i];
        ab_json_begin_object(&j, NULL);
        ab_json_string(&j, "op", ab_op_name(x->op));
        ab_json_string(&j, "shape", x->shape);
        ab_json_int(&j, "threads", x->threads);
        ab_json_string(&j, "best", x->best);
        ab_json_string(&j, "best_math", attn_dtype_name(x->best_math));
        ab_json_string(&j, "runner_up", x->runner_up);
        ab_json_number(&j, "ratio", x->ratio);
        ab_json_number(&j, "ci_low", x->ci_low);
        ab_json_number(&j, "ci_high", x->ci_high);
        ab_json_string(&j, "verdict", ab_summary_verdict(x));
        ab_json_int(&j, "kernels", x->n_kernels);
        ab_json_int(&j, "paired_rounds", x->paired);
        ab_json_bool(&j, "unstable", x->unstable);
        ab_json_end_object(&j);
    }
    ab_json_end_array(&j);
    /* run --lib: each other build's kernel against this build's (summary.h). */
    if (c->n_builds > 0) {
        ab_json_begin_array(&j, "builds");
        for (int i = 0; i < c->n_builds; i++) {
            const ab_build_pair *b = &c->builds[i];
            ab_json_begin_object(&j, NULL);
            ab_json_string(&j, "shape", b->shape);
            ab_json_int(&j, "threads", b->threads);
            ab_json_string(&j, "kernel", b->kernel);
            ab_json_string(&j, "build", b->build);
            ab_json_number(&j, "ratio", b->c.ratio);
            ab_json_number(&j, "ci_low", b->c.lo);
            ab_json_number(&j, "ci_high", b->c.hi);
            ab_json_number(&j, "mde", b->c.mde);
            ab_json_number(&j, "p", b->c.p);
            ab_json_int(&j, "paired_rounds", b->c.runs_base);
            ab_json_string(&j, "verdict", ab_verdict_name(b->c.verdict));
            ab_json_end_object(&j);
        }
        ab_json_end_array(&j);
    }
    ab_json_end_object(&j);
}

/* ---- CSV --------------------------------------------------------------------------- */

/* Fields are quoted when they hold a comma or a quote (RFC 4180). */
static void csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', out);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', out);
            fputc(*s, out);
        }
        fputc('"', out);
    } else {
        fputs(s, out);
    }
}

void ab_report_csv(FILE *out, const ab_run_context *c, const ab_result *r, int n)
{
    fputs("name,kernel,op,shape,threads,iterations,repetitions,median_ns,mean_ns,min_ns,"
          "stddev_ns,cv,unstable,gflops,pct_peak,flops,bytes,arith_intensity", out);
    int n_events = c->counters ? ab_counters_count(c->counters) : 0;
    for (int e = 0; e < n_events; e++) {
        fputc(',', out);
        csv_field(out, ab_counters_name(c->counters, e));
    }
    fputs(",error\n", out);
    for (int i = 0; i < n; i++) {
        const ab_result *x = &r[i];
        char shape[256];
        ab_shape_format(&x->shape, shape, sizeof shape);
        csv_field(out, x->run_name);
        fputc(',', out);
        csv_field(out, x->kernel);
        fprintf(out, ",%s,", ab_op_name(x->shape.op));
        csv_field(out, shape);
        const ab_stats *s = &x->real_stats;
        if (x->error[0]) {
            fprintf(out, ",%d,,,,,,,,,,,,,", x->threads);
            for (int e = 0; e < n_events; e++)
                fputc(',', out);
            fputc(',', out);
            csv_field(out, x->error);
            fputc('\n', out);
            continue;
        }
        fprintf(out, ",%d,%ld,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,%.6g,%.6g,%.6g", x->threads,
                x->iterations, x->reps, s->median * 1e9, s->mean * 1e9, s->min * 1e9,
                s->stddev * 1e9, s->cv, x->unstable, ab_result_gflops(x, s->median),
                ab_result_pct_peak(x, s->median), x->flops, x->bytes,
                x->bytes > 0 ? x->flops / x->bytes : 0.0);
        for (int e = 0; e < n_events; e++) {
            ab_stats es;
            if (e < x->n_events && !ab_counters_unavailable(c->counters, e)
                && ab_stats_compute(x->events[e], x->reps, &es) == 0 && !isnan(es.median))
                fprintf(out, ",%.6g", es.median);
            else
                fputc(',', out);
        }
        fputs(",\n", out);
    }
}
