/*
 * peak_file.c — the peaks' cache file (peak_file.h): a line-based text file
 * per machine key, written atomically.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "internal.h"
#include "peak_file.h"

/* Everything the figures depend on: the machine's key (the one the wisdom
 * and the results are labelled by: CPU identity, usable features, caches,
 * CPU count), the peak loops' version and the build; a change in any part
 * re-measures. */
static void machine_key(char *key, size_t len)
{
    attn_machine_hardware_key(key, len);
    size_t used = strnlen(key, len);
    if (used + 1 < len)
        snprintf(key + used, len - used, " peaks=v%d compiler=%s build=%s",
                 AB_PEAK_BENCH_VERSION, ab_build_compiler(), ab_build_type());
}

/* $ATTNBENCH_CACHE_DIR (the tests point it at a scratch directory), else
 * attnbench's cache directory. */
static int cache_dir(char *out, size_t len)
{
    const char *d = getenv("ATTNBENCH_CACHE_DIR");
    if (d && *d) {
        int n = snprintf(out, len, "%s", d);
        return n > 0 && (size_t)n < len ? 0 : -1;
    }
    return attn_cache_dir(out, len);
}

/* A positive, finite figure. */
static int figure(double v)
{
    return v > 0.0 && isfinite(v);
}

/* Reads a cache file; 0 when valid for key, else -1 with the reason. The
 * format is line-based: "fma ISA N GFLOPS ERR", "triad N GBS", "read N GBS ERR",
 * "clock_mhz X", "load LOAD STEAL", "measured_at TIME", framed by the
 * header, the key and "end". */
static int cache_read(const char *path, const char *key, ab_peaks *p, char *why, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, len, "%s", errno == ENOENT ? "" : strerror(errno));
        return -1;
    }
    char line[1024], name[32];
    int ok = 0, version = 0, threads = 0, have_key = 0;
    memset(p->gflops, 0, sizeof p->gflops);
    memset(p->gflops_err, 0, sizeof p->gflops_err);
    memset(p->triad_gbs, 0, sizeof p->triad_gbs);
    memset(p->read_gbs, 0, sizeof p->read_gbs);
    memset(p->read_err, 0, sizeof p->read_err);
    p->clock_mhz = 0.0;
    p->load_avg = p->steal = -1.0;
    p->measured_at[0] = '\0';
    snprintf(why, len, "damaged (unreadable header)");
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        double v, e;
        int n, bad = 0;
        if (sscanf(line, "attnbench-peaks %d", &version) == 1)
            continue;
        if (strncmp(line, "key ", 4) == 0) {
            if (strcmp(line + 4, key) != 0) {
                snprintf(why, len, "recorded for another machine or build");
                break;
            }
            have_key = 1;
        } else if (sscanf(line, "measured_at %31s", p->measured_at) == 1) {
        } else if (sscanf(line, "threads %d", &threads) == 1) {
            bad = threads < 1 || threads > AB_PEAK_MAX_THREADS;
        } else if (sscanf(line, "fma %31s %d %lf %lf", name, &n, &v, &e) == 4) {
            int isa = -1;
            for (int i = 0; i < AB_ISA_COUNT; i++)
                if (strcmp(name, ab_isa_name((ab_isa)i)) == 0)
                    isa = i;
            bad = isa < 0 || n < 1 || n > AB_PEAK_MAX_THREADS || !figure(v) || !figure(e) || e > 1;
            if (!bad) {
                p->gflops[isa][n] = v;
                p->gflops_err[isa][n] = e;
            }
        } else if (sscanf(line, "triad %d %lf", &n, &v) == 2) {
            bad = n < 1 || n > AB_PEAK_MAX_THREADS || !figure(v);
            if (!bad)
                p->triad_gbs[n] = v;
        } else if (sscanf(line, "read %d %lf %lf", &n, &v, &e) == 3) {
            bad = n < 1 || n > AB_PEAK_MAX_THREADS || !figure(v) || !figure(e) || e > 1;
            if (!bad) {
                p->read_gbs[n] = v;
                p->read_err[n] = e;
            }
        } else if (sscanf(line, "clock_mhz %lf", &v) == 1) {
            bad = !(v >= 0.0) || !isfinite(v);
            p->clock_mhz = bad ? 0.0 : v;
        } else if (sscanf(line, "load %lf %lf", &v, &e) == 2) {
            bad = !isfinite(v) || !isfinite(e);
            p->load_avg = v;
            p->steal = e;
        } else if (strcmp(line, "end") == 0) {
            ok = version == 1 && have_key && threads >= 1 && p->gflops[AB_ISA_BASELINE][1] > 0
              && p->triad_gbs[1] > 0 && p->read_gbs[1] > 0;
            if (!ok)
                snprintf(why, len, "damaged (incomplete)");
            break;
        } else {
            snprintf(why, len, "damaged (unknown line '%.40s')", line);
            break;
        }
        if (bad) {
            snprintf(why, len, "damaged (bad line '%.60s')", line);
            break;
        }
    }
    fclose(f);
    if (ok)
        p->max_threads = threads;
    return ok ? 0 : -1;
}

static int cache_write(const char *dir, const char *path, const char *key, const ab_peaks *p,
                       char *err, size_t len)
{
    ab_atomic_file af;
    if (ab_mkdirs(dir, err, len) != 0 || ab_atomic_open(&af, path, err, len) != 0)
        return -1;
    fprintf(af.f, "attnbench-peaks 1\nkey %s\nmeasured_at %s\nthreads %d\n", key, p->measured_at,
            p->max_threads);
    fprintf(af.f, "load %.3f %.4f\nclock_mhz %.0f\n", p->load_avg, p->steal, p->clock_mhz);
    for (int i = 0; i < AB_ISA_COUNT; i++)
        for (int n = 1; n <= p->max_threads; n++)
            if (p->gflops[i][n] > 0)
                fprintf(af.f, "fma %s %d %.6g %.4g\n", ab_isa_name((ab_isa)i), n, p->gflops[i][n],
                        p->gflops_err[i][n]);
    for (int n = 1; n <= p->max_threads; n++) {
        if (p->triad_gbs[n] > 0)
            fprintf(af.f, "triad %d %.6g\n", n, p->triad_gbs[n]);
        if (p->read_gbs[n] > 0)
            fprintf(af.f, "read %d %.6g %.4g\n", n, p->read_gbs[n], p->read_err[n]);
    }
    fprintf(af.f, "end\n");
    return ab_atomic_commit(&af, 0, err, len) == 0 ? 0 : -1;
}

int ab_peaks_get(ab_peaks *p, const ab_topology *t, const ab_machine *m, int refresh, int check,
                 char *note, size_t note_len)
{
    char key[768], dir[400], why[600];
    memset(p, 0, sizeof *p);
    note[0] = '\0';
    machine_key(key, sizeof key);
    int have_dir = cache_dir(dir, sizeof dir) == 0;
    if (have_dir)
        snprintf(p->cache_path, sizeof p->cache_path, "%s/peaks-%016llx.txt", dir,
                 (unsigned long long)attn_machine_hash(key));

    if (have_dir && !refresh) {
        if (cache_read(p->cache_path, key, p, why, sizeof why) == 0) {
            p->from_cache = 1;
            if (!check || ab_peaks_check(p, t, note, note_len) == 0)
                return 0;
            p->from_cache = 0;
        } else if (why[0]) {
            snprintf(note, note_len, "peak cache %s: %s; re-measured", p->cache_path, why);
        }
    }
    char path[sizeof p->cache_path];
    snprintf(path, sizeof path, "%s", p->cache_path);
    double checked[2] = { p->check_ratio[0], p->check_ratio[1] }, noise = p->noise;
    double cache_noise = p->cache_noise;
    memset(p, 0, sizeof *p);
    snprintf(p->cache_path, sizeof p->cache_path, "%s", path);
    p->check_ratio[0] = checked[0];
    p->check_ratio[1] = checked[1];
    p->noise = noise;
    p->cache_noise = cache_noise;
    ab_peaks_measure(p, t, m);
    if (p->gflops[AB_ISA_BASELINE][1] <= 0.0 || p->triad_gbs[1] <= 0.0 || p->read_gbs[1] <= 0.0)
        return -1;
    if (check && p->noise == 0.0) {
        /* The machine's steadiness, which the check measures, is wanted
         * with fresh figures too. */
        char ignored[8];
        ab_peaks_check(p, t, ignored, sizeof ignored);
    }
    if (!have_dir) {
        snprintf(note, note_len, "no cache directory (set ATTNBENCH_CACHE_DIR or HOME); "
                 "peaks not cached");
        p->cache_path[0] = '\0';
    } else if (cache_write(dir, p->cache_path, key, p, why, sizeof why) != 0) {
        snprintf(note, note_len, "could not cache peaks: %s", why);
        p->cache_path[0] = '\0';
    }
    return 0;
}
