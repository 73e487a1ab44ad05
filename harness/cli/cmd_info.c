/*
 * cmd_info.c — `attnbench info`: what this machine is and can do, and where
 * each figure came from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "cli.h"
#include "commands.h"
#include "counters.h"
#include "internal.h"
#include "machine.h"
#include "peak_file.h"
#include "select.h"
#include "topology.h"

static void print_size(size_t bytes, char *buf, size_t len)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024)
        snprintf(buf, len, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, len, "%zu B", bytes);
}

static void print_machine(const ab_machine *m)
{
    printf("attnbench %s (commit %s; %s; flags %s; %s build)\n", ATTN_VERSION_STRING,
           ab_build_commit(), ab_build_compiler(), ab_build_flags(), ab_build_type());
    printf("CPU         %s (%s, family %d model %d stepping %d), %d online CPUs\n",
           m->model[0] ? m->model : "unknown", m->vendor[0] ? m->vendor : "unknown vendor",
           m->family, m->model_id, m->stepping, m->online_cpus);
    printf("Hypervisor  %s\n", m->hypervisor[0] ? m->hypervisor : "none reported (bare metal?)");
    if (m->emulated[0])
        printf("Emulated    yes, %s: timings and peaks mean nothing here\n", m->emulated);
    printf("OS          %s\n", m->os);
    /* /proc/cpuinfo's "cpu MHz" is often the nominal clock in a VM; the
     * measured one is shown with the peaks below. */
    if (m->mhz > 0)
        printf("Clock       %.0f MHz by /proc/cpuinfo (nominal in a VM; the measured clock is "
               "with the peaks); ", m->mhz);
    else
        printf("Clock       not in /proc/cpuinfo; ");
    printf("cpufreq governor: %s\n", m->governor[0] ? m->governor : "not exposed");
    if (m->loadavg[0] >= 0)
        printf("Load        %.2f %.2f %.2f\n", m->loadavg[0], m->loadavg[1], m->loadavg[2]);

    printf("\nISA feature    CPU has  OS enables\n");
    for (unsigned bit = 1; bit < (1u << ATTN_CPU_FEATURE_COUNT); bit <<= 1) {
        if (!attn_cpu_feature_on_arch(bit))
            continue;
        printf("  %-12s %-8s %s\n", attn_cpu_feature_name(bit), (m->has & bit) ? "yes" : "no",
               (m->usable & bit) ? "yes" : (m->has & bit) ? "NO (state not saved by the OS)" : "-");
    }
}

static void print_topology(const ab_topology *t)
{
    printf("\nTopology (%s): %d package%s, %d NUMA node%s, %d cores, %d hardware threads\n",
           t->source, t->packages, t->packages == 1 ? "" : "s", t->numa_nodes,
           t->numa_nodes == 1 ? "" : "s", t->cores, t->pus);
    for (int i = 0; i < t->n_caches; i++) {
        const ab_cache *c = &t->caches[i];
        char size[32], line[32] = "", ways[32] = "";
        print_size(c->size, size, sizeof size);
        if (c->line > 0)
            snprintf(line, sizeof line, ", %d B lines", c->line);
        if (c->ways > 0)
            snprintf(ways, sizeof ways, ", %d-way", c->ways);
        else if (c->ways < 0)
            snprintf(ways, sizeof ways, ", fully associative");
        printf("  L%d%c  %9s x %d", c->level, c->type == 'u' ? ' ' : c->type, size, c->instances);
        if (c->cores_sharing > 0)
            printf(" (one per %d core%s)", c->cores_sharing, c->cores_sharing == 1 ? "" : "s");
        printf("%s%s\n", line, ways);
    }
}

static const char *bind_name(omp_proc_bind_t bind)
{
    return bind == omp_proc_bind_close    ? "close"
           : bind == omp_proc_bind_spread ? "spread"
           : bind == omp_proc_bind_master ? "master"
                                          : "true";
}

/* Place p of the runtime as "{a,b}" into buf (len ≥ 16; cut short with
 * "..." when its CPUs do not fit). Returns its first CPU, or -1. */
static int place_text(int p, char *buf, size_t len)
{
    int n = omp_get_place_num_procs(p), ids[64], first = -1;
    size_t used = 0;
    buf[0] = '\0';
    if (n <= 0 || n > (int)(sizeof ids / sizeof *ids)) {
        snprintf(buf, len, "{%d CPUs}", n);
        return -1;
    }
    omp_get_place_proc_ids(p, ids);
    for (int i = 0; i < n; i++) {
        first = i == 0 || ids[i] < first ? ids[i] : first;
        int w = snprintf(buf + used, len - used, "%s%d", i ? "," : "{", ids[i]);
        if (w < 0 || (size_t)w + 4 >= len - used) {   /* room kept for "...}" */
            snprintf(buf + used, len - used, "...");
            break;
        }
        used += (size_t)w;
    }
    if (strlen(buf) + 2 <= len)
        strcat(buf, "}");
    return first;
}

/* How the kernels' threads are placed, as the OpenMP runtime has it (not
 * as the environment reads: OMP_PROC_BIND=true alone binds, and a user's
 * places need not follow the topology). main.c's own placement is one
 * place per core in the topology's order, bound close: thread i on the
 * i-th core, one package and one last-level cache filled before the next. */
static void print_placement(const ab_topology *t)
{
    omp_proc_bind_t bind = omp_get_proc_bind();
    int n_places = omp_get_num_places();
    printf("\nThreads     ");
    if (bind == omp_proc_bind_false || n_places <= 0) {
        printf("OpenMP, not bound: the OS places them\n");
        return;
    }
    char text[256];
    int in_order = bind == omp_proc_bind_close && n_places <= t->cores;
    for (int p = 0; p < n_places; p++) {
        int first = place_text(p, text, sizeof text);
        in_order &= first >= 0 && first == t->core_cpu[p];
    }
    place_text(0, text, sizeof text);
    printf("OpenMP, bound %s to %d place%s (the first %s)", bind_name(bind), n_places,
           n_places == 1 ? "" : "s", text);
    if (!in_order) {
        printf(": not one per core in the topology's order below (a placement of the user's)\n");
    } else {
        printf(": thread i on the i-th core below");
        const ab_cache *llc = NULL;
        for (int i = 0; i < t->n_caches; i++)
            if (t->caches[i].type != 'i' && t->caches[i].level >= 2)
                llc = &t->caches[i];
        if (llc && llc->cores_sharing > 0 && llc->instances > 1)
            printf(", so N threads share ceil(N / %d) of the %d L%d caches", llc->cores_sharing,
                   llc->instances, llc->level);
        if (t->numa_nodes > 1)
            printf(" (and fill one NUMA node's cores before the next)");
        printf("\n");
    }
    printf("  cores in order (first CPU of each):");
    for (int i = 0; i < t->cores && i < 32; i++)
        printf(" %d", t->core_cpu[i]);
    printf("%s\n", t->cores > 32 ? " ..." : "");
    /* api.c allocates the workspace without touching it and kernel thread
     * t packs into slice t, at one stride for all of a call's products
     * (docs/threads.md, with its limits). */
    printf("  the context's workspace is not zeroed: each thread's packing slice is first "
           "touched by that thread\n");
}

static void print_peaks(const ab_topology *t, const ab_machine *m, int refresh)
{
    ab_peaks p;
    char note[600];
    int rc = ab_peaks_get(&p, t, m, refresh, 1, note, sizeof note);
    printf("\nMeasured peaks (%s", p.measured_at);
    if (p.load_avg >= 0)
        printf(", load %.2f", p.load_avg);
    if (p.steal >= 0)
        printf(", %.1f%% stolen by the hypervisor while measuring", 100.0 * p.steal);
    if (p.from_cache)
        printf(", from the cache %s; --refresh-peaks re-measures", p.cache_path);
    else if (p.cache_path[0])
        printf(", measured now and cached in %s", p.cache_path);
    else
        printf(", measured now");
    printf(")\n");
    if (note[0])
        printf("  note: %s\n", note);
    if (rc != 0) {
        printf("  measurement failed\n");
        return;
    }
    /* The counts measured (ab_peak_ladder's); the others interpolate. */
    int counts[AB_PEAK_MAX_THREADS], nc = 0;
    for (int n = 1; n <= p.max_threads; n++)
        if (ab_peak_measured(&p, n))
            counts[nc++] = n;
    printf("  %-16s", "threads");
    for (int c = 0; c < nc; c++)
        printf(" %9d", counts[c]);
    printf("\n");
    for (int i = 0; i < AB_ISA_COUNT; i++) {
        if (!ab_isa_available((ab_isa)i))
            continue;
        char label[32];
        snprintf(label, sizeof label, "%s GFLOP/s", ab_isa_name((ab_isa)i));
        printf("  %-16s", label);
        for (int c = 0; c < nc; c++)
            printf(" %9.1f", p.gflops[i][counts[c]]);
        printf("   (within");
        for (int c = 0; c < nc; c++)
            printf(" %.1f%%", 100.0 * p.gflops_err[i][counts[c]]);
        printf(")\n");
    }
    printf("  %-16s", "triad GB/s");
    for (int c = 0; c < nc; c++)
        printf(" %9.1f", p.triad_gbs[counts[c]]);
    printf("\n  %-16s", "read GB/s");
    for (int c = 0; c < nc; c++)
        printf(" %9.1f", p.read_gbs[counts[c]]);
    printf("\n");
    if (nc < p.max_threads)
        printf("  (measured at these counts; a count between two takes their linear "
               "interpolation)\n");
    if (p.check_ratio[0] > 0)
        printf("  checked now: the FMA peak runs at %.3fx / %.3fx of the cached figure at 1 / %d "
               "threads\n", p.check_ratio[0], p.check_ratio[1], p.max_threads);
    if (p.clock_mhz > 0)
        printf("  clock %.0f MHz, measured (a chain of dependent adds, one per cycle)\n",
               p.clock_mhz);
}

static void print_counters(void)
{
    char summary[256], diagnosis[512];
    ab_counter_probe probes[32];
    int n = ab_counters_describe(summary, sizeof summary, diagnosis, sizeof diagnosis, probes, 32);
    printf("\nCounters    %s\n", summary);
    if (diagnosis[0])
        printf("  no hardware counters: %s\n", diagnosis);
    for (int i = 0; i < n; i++) {
        if (probes[i].available)
            printf("  %-26s available through %s, counts %s\n", probes[i].name, probes[i].via,
                   probes[i].scope);
        else
            printf("  %-26s unavailable: %s\n", probes[i].name, probes[i].why);
    }
}

/* What `attnbench tune` stored for this machine, and which bucket an auto
 * context would run with which kernel. */
static void print_wisdom(void)
{
    char path[4096], err[256], key[320];
    printf("Wisdom      ");
    if (attn_wisdom_default_path(path, sizeof path) != 0) {
        printf("no path (set ATTN_WISDOM or HOME)\n");
        return;
    }
    attn_wisdom *w = malloc(sizeof *w);
    if (!w) {
        printf("out of memory\n");
        return;
    }
    int rc = attn_wisdom_read(path, w, err, sizeof err);
    if (rc == -2) {
        printf("none yet at %s (`attnbench tune` writes it); auto uses CPU features\n", path);
    } else if (rc != 0) {
        printf("IGNORED, %s; auto uses CPU features\n", err);
    } else {
        attn_machine_key(key, sizeof key);
        uint64_t me = attn_machine_hash(key);
        int mine = 0;
        for (int i = 0; i < w->n; i++)
            mine += w->rec[i].machine == me;
        printf("%s: %d records for this machine, %d of other machines (kept, not applied)\n",
               path, mine, w->n - mine);
        for (int i = 0; i < w->n; i++) {
            const attn_wisdom_record *r = &w->rec[i];
            if (r->machine != me)
                continue;
            char bucket[80];
            attn_bucket_format(&r->bucket, bucket, sizeof bucket);
            printf("  %-34s -> %-8s (%s, %.2fx the untuned time, %s)\n", bucket, r->kernel,
                   r->level, r->time_ns > 0 && r->default_time_ns > 0 ? r->default_time_ns / r->time_ns
                                                                       : 1.0, r->when);
        }
    }
    free(w);
}

int ab_cmd_info(int argc, char **argv)
{
    int refresh = 0, no_peaks = 0, n_pos;
    const ab_flag flags[] = {
        { "refresh-peaks", AB_FLAG_BOOL, &refresh, NULL, "re-measure the peaks instead of using the cache", 0, 0 },
        { "no-peaks", AB_FLAG_BOOL, &no_peaks, NULL, "skip the peak measurements", 0, 0 },
    };
    int rc = ab_cli_command("info", "attnbench info [--refresh-peaks] [--no-peaks]",
                            "Shows the CPU, its ISA features (what the CPU has and what the OS\n"
                            "enables), cores and caches, the measured FMA peak per ISA and thread\n"
                            "count and the triad memory bandwidth (cached per machine), which\n"
                            "counter events are available and why not, and the kernel \"auto\" picks.",
                            argc, argv, flags, 2, NULL, 0, &n_pos);
    if (rc >= 0)
        return rc;

    ab_machine m;
    ab_machine_load(&m);
    print_machine(&m);

    ab_topology t;
    char err[256];
    if (ab_topology_load(&t, err, sizeof err) != 0) {
        printf("\nTopology: unavailable: %s\n", err);
        memset(&t, 0, sizeof t);   /* measure the peaks on one unpinned thread */
        t.cores = t.pus = 1;
    } else {
        print_topology(&t);
        print_placement(&t);
    }
    if (!no_peaks)
        print_peaks(&t, &m, refresh);
    print_counters();

    const attn_kernel *k[1];
    printf("\nKernel      ");
    if (ab_select_kernels("auto", NULL, k, 1, err, sizeof err) == 1)
        printf("\"auto\" picks %s (fp32)", k[0]->name);
    else
        printf("%s", err);
    if (ab_select_kernels("auto-bf16", NULL, k, 1, err, sizeof err) == 1)
        printf("; \"auto-bf16\" picks %s (%s)", k[0]->name,
               k[0]->math == ATTN_BF16 ? "bf16" : "fp32");
    else
        printf("; auto-bf16: %s", err);
    for (int i = 0; i < attn_registry_count(); i++) {
        const attn_kernel *r = attn_registry_get(i);
        if (attn_registry_runnable(r) && attn_registry_passed_over(r, attn_cpu()->has))
            printf("; both pass over %s, which runs here but is slower on this CPU "
                   "(docs/kernels.md)", r->name);
    }
    printf("\n");
    print_wisdom();
    return AB_EXIT_OK;
}
