/*
 * test_topology.c — harness/measure/topology.c: hwloc's path on synthetic and XML
 * topologies (multi-socket, SMT, several L3s, hybrid) with answers worked out
 * by hand from their descriptions, the fallback, the load on this machine,
 * and thread binding.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "kernel.h"
#include "topology.h"

#ifdef ATTN_HAVE_HWLOC
#include <hwloc.h>
#endif

/* CPU sets in the tests cover this many CPUs: more than Linux supports, so
 * sched_getaffinity never fails for a set too small. */
#define T_CPUS 8192

/* ---- helpers --------------------------------------------------------------------------- */

static cpu_set_t *set_new(void)
{
    cpu_set_t *s = CPU_ALLOC(T_CPUS);
    if (s)
        CPU_ZERO_S(CPU_ALLOC_SIZE(T_CPUS), s);
    return s;
}

static cpu_set_t *get_mask(void)
{
    cpu_set_t *s = set_new();
    if (s && sched_getaffinity(0, CPU_ALLOC_SIZE(T_CPUS), s) != 0) {
        CPU_FREE(s);
        return NULL;
    }
    return s;
}

static int mask_count(const cpu_set_t *s)
{
    return CPU_COUNT_S(CPU_ALLOC_SIZE(T_CPUS), s);
}

static int mask_has(const cpu_set_t *s, int cpu)
{
    return cpu >= 0 && cpu < T_CPUS && CPU_ISSET_S((size_t)cpu, CPU_ALLOC_SIZE(T_CPUS), s);
}

static void check_cache(const ab_topology *t, int i, int level, char type, size_t size, int line,
                        int ways, int instances, int cores_sharing)
{
    if (i >= t->n_caches) {
        CHECK(0, "cache %d missing (%d caches)", i, t->n_caches);
        return;
    }
    const ab_cache *c = &t->caches[i];
    CHECK(c->level == level && c->type == type && c->size == size && c->line == line &&
              c->ways == ways && c->instances == instances && c->cores_sharing == cores_sharing,
          "cache %d: L%d%c size %zu line %d ways %d instances %d sharing %d; expected "
          "L%d%c size %zu line %d ways %d instances %d sharing %d",
          i, c->level, c->type, c->size, c->line, c->ways, c->instances, c->cores_sharing,
          level, type, size, line, ways, instances, cores_sharing);
}

/* What must hold for any load on this machine. */
static void check_real(const ab_topology *t)
{
    CHECK(t->source[0] != '\0', "empty source");
    CHECK(t->cores >= 1 && t->cores <= AB_MAX_CORES, "cores %d", t->cores);
    CHECK(t->pus >= t->cores, "pus %d < cores %d", t->pus, t->cores);
    CHECK(t->n_caches >= 0 && t->n_caches <= AB_MAX_CACHES, "n_caches %d", t->n_caches);
    size_t l1 = ab_topology_cache_size(t, 1);
    CHECK(l1 > 0, "no L1 data cache size (source %s)", t->source);
    for (int i = 0; i < t->n_caches && i < AB_MAX_CACHES; i++) {
        const ab_cache *c = &t->caches[i];
        CHECK(c->level >= 1 && c->level <= 5, "cache %d: level %d", i, c->level);
        CHECK(c->type == 'd' || c->type == 'i' || c->type == 'u', "cache %d: type %d", i, c->type);
        CHECK(c->line >= 0 && c->ways >= -1 && c->instances >= 0 && c->cores_sharing >= 0,
              "cache %d: line %d ways %d instances %d sharing %d", i, c->line, c->ways,
              c->instances, c->cores_sharing);
        if (i > 0) {
            const ab_cache *p = &t->caches[i - 1];
            int rank_p = p->type == 'd' ? 0 : p->type == 'i' ? 1 : 2;
            int rank_c = c->type == 'd' ? 0 : c->type == 'i' ? 1 : 2;
            CHECK(p->level < c->level || (p->level == c->level && rank_p < rank_c),
                  "caches %d (L%d%c) and %d (L%d%c) out of order", i - 1, p->level, p->type, i,
                  c->level, c->type);
        }
        if (c->level == 1 && c->type == 'd')
            CHECK(c->size == l1, "ab_topology_cache_size(1) %zu, L1d %zu", l1, c->size);
    }
    cpu_set_t *mask = get_mask();
    CHECK(mask != NULL, "sched_getaffinity: %s", strerror(errno));
    for (int i = 0; i < t->cores && i < AB_MAX_CORES; i++) {
        CHECK(t->core_cpu[i] >= 0 && t->core_cpu[i] < T_CPUS, "core_cpu[%d] = %d", i, t->core_cpu[i]);
        if (mask)
            CHECK(mask_has(mask, t->core_cpu[i]), "core_cpu[%d] = %d not in the affinity mask", i,
                  t->core_cpu[i]);
        for (int j = 0; j < i; j++)
            CHECK(t->core_cpu[i] != t->core_cpu[j], "core_cpu[%d] = core_cpu[%d] = %d", i, j,
                  t->core_cpu[i]);
    }
    if (mask) {
        /* pus counts the CPUs this thread may use; with no restriction that
         * is every online CPU. */
        int allowed = mask_count(mask);
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        CHECK(t->pus == allowed, "pus %d, affinity mask has %d CPUs", t->pus, allowed);
        if (allowed == online)
            CHECK(t->pus == online, "pus %d, sysconf says %ld online", t->pus, online);
        CPU_FREE(mask);
    }
}

/* ---- hwloc: synthetic and XML topologies --------------------------------------------------- */

#ifdef ATTN_HAVE_HWLOC

/* A topology from a synthetic description, or from an XML file of
 * tests/topology/ (path relative to this source file, i.e. the repository
 * root, where the tests run). Instruction caches kept, as ab_topology_load
 * keeps them. NULL on failure (a failed CHECK). */
static hwloc_topology_t load_topo(const char *synthetic, const char *xml_name)
{
    hwloc_topology_t topo;
    char path[512];
    if (hwloc_topology_init(&topo) != 0) {
        CHECK(0, "hwloc_topology_init: %s", strerror(errno));
        return NULL;
    }
    int r;
    if (synthetic) {
        r = hwloc_topology_set_synthetic(topo, synthetic);
    } else {
        const char *slash = strrchr(__FILE__, '/');
        int dir = slash ? (int)(slash - __FILE__) : 0;
        snprintf(path, sizeof path, "%.*s%stopology/%s", dir, __FILE__, slash ? "/" : "", xml_name);
        r = access(path, R_OK) == 0 ? hwloc_topology_set_xml(topo, path) : -1;
    }
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (r != 0 || hwloc_topology_load(topo) != 0) {
        CHECK(0, "loading %s: %s", synthetic ? synthetic : path, strerror(errno));
        hwloc_topology_destroy(topo);
        return NULL;
    }
    return topo;
}

/* t from topo with the PUs listed (ended by -1) allowed; none listed: all. */
static int from_topo(ab_topology *t, hwloc_topology_t topo, int first, ...)
{
    char err[256] = "unchanged";
    hwloc_bitmap_t allowed = NULL;
    if (first >= 0) {
        allowed = hwloc_bitmap_alloc();
        va_list ap;
        va_start(ap, first);
        for (int c = first; c >= 0; c = va_arg(ap, int))
            hwloc_bitmap_set(allowed, (unsigned)c);
        va_end(ap);
    } else {
        allowed = hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
    }
    int r = ab_topology_from_hwloc(t, topo, allowed, err, sizeof err);
    CHECK(r == 0, "ab_topology_from_hwloc: %s", err);
    CHECK(r != 0 || err[0] == '\0', "err not cleared on success: %s", err);
    if (r == 0)
        CHECK(strncmp(t->source, "hwloc ", 6) == 0, "source \"%s\"", t->source);
    hwloc_bitmap_free(allowed);
    return r;
}

/* t's counts, and its cores: core_cpu[0 .. cores) against the expected
 * list core_cpus. */
static void check_layout(const ab_topology *t, int packages, int numa_nodes, int pus,
                         int n_caches, const int *core_cpus, int cores)
{
    CHECK(t->packages == packages && t->numa_nodes == numa_nodes && t->pus == pus &&
              t->n_caches == n_caches,
          "packages %d, NUMA nodes %d, pus %d, caches %d; expected %d, %d, %d, %d", t->packages,
          t->numa_nodes, t->pus, t->n_caches, packages, numa_nodes, pus, n_caches);
    CHECK(t->cores == cores, "%d cores, expected %d", t->cores, cores);
    for (int i = 0; i < cores && i < t->cores; i++)
        CHECK(t->core_cpu[i] == core_cpus[i], "core_cpu[%d] = %d, expected %d", i,
              t->core_cpu[i], core_cpus[i]);
}

/* ab_omp_places_from_hwloc on topo with allowed (NULL: its whole cpuset):
 * want, in n places. */
static void check_places(hwloc_topology_t topo, hwloc_const_bitmap_t allowed, const char *want,
                         int n)
{
    char buf[256], err[160] = "";
    hwloc_bitmap_t all = allowed ? NULL : hwloc_bitmap_dup(hwloc_topology_get_topology_cpuset(topo));
    int r = ab_omp_places_from_hwloc(topo, allowed ? allowed : all, buf, sizeof buf, err,
                                     sizeof err);
    CHECK(r == n && strcmp(buf, want) == 0, "places \"%s\" (%d), want \"%s\" (%d): %s", buf, r,
          want, n, err);
    hwloc_bitmap_free(all);
}

static void test_synthetic(ab_topology *t)
{
    hwloc_topology_t topo;

    /* 2 packages x 4 cores x 2 threads, hwloc's default numbering: core k
     * (k = 0..7) has PUs 2k and 2k+1; package p has cores 4p..4p+3. No
     * caches, one NUMA node (what a synthetic topology has when none is
     * named). */
    t_case("topology: hwloc synthetic 'package:2 core:4 pu:2'");
    if ((topo = load_topo("package:2 core:4 pu:2", NULL)) != NULL) {
        if (from_topo(t, topo, -1) == 0) {
            check_layout(t, 2, 1, 16, 0, (const int[]){ 0, 2, 4, 6, 8, 10, 12, 14 }, 8);
            CHECK(ab_topology_cache_size(t, 1) == 0, "L1 %zu without caches",
                  ab_topology_cache_size(t, 1));
        }
        /* PUs 1, 3 (second threads of cores 0, 1), 8 and 9 (both of core
         * 4: it enters at 8) and 15 (core 7): 4 cores, 5 PUs; the packages
         * still count the whole machine. */
        t_case("topology: hwloc synthetic 'package:2 core:4 pu:2', PUs {1,3,8,9,15} allowed");
        if (from_topo(t, topo, 1, 3, 8, 9, 15, -1) == 0) {
            check_layout(t, 2, 1, 5, 0, (const int[]){ 1, 3, 8, 15 }, 4);
        }
        t_case("topology: hwloc synthetic, no allowed PU fails");
        char err[256] = "";
        hwloc_bitmap_t none = hwloc_bitmap_alloc();
        hwloc_bitmap_set(none, 99);   /* not a PU of the topology */
        t->cores = 7;
        int r = ab_topology_from_hwloc(t, topo, none, err, sizeof err);
        CHECK(r == -1 && err[0] != '\0', "returned %d, err \"%s\"", r, err);
        CHECK(t->cores == 0, "cores %d left in a failed load", t->cores);
        hwloc_bitmap_free(none);
        hwloc_topology_destroy(topo);
    }

    /* Intel's numbering: 2 packages x 4 cores x 2 threads where the second
     * thread of every core is numbered after all first threads: logical PUs
     * in order get OS indexes 0,8, 1,9, ..., 7,15, so core k has PUs k and
     * k+8, package 0 has PUs 0-3 and 8-11. Caches: one 16 MiB L3 per
     * package (4 cores each), 1 MiB L2, 48 KiB L1d and 32 KiB L1i per core;
     * synthetic caches have 64 B lines and unknown associativity. */
    t_case("topology: hwloc synthetic, SMT siblings numbered Intel's way, caches");
    topo = load_topo("package:2 l3:1(size=16MiB) core:4 l2:1(size=1MiB) l1d:1(size=48KiB) "
                     "l1i:1(size=32KiB) pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)",
                     NULL);
    if (topo) {
        if (from_topo(t, topo, -1) == 0) {
            /* One thread per core, the first 4 cores in package 0. */
            check_layout(t, 2, 1, 16, 4, (const int[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, 8);
            check_cache(t, 0, 1, 'd', 48 << 10, 64, 0, 8, 1);
            check_cache(t, 1, 1, 'i', 32 << 10, 64, 0, 8, 1);
            check_cache(t, 2, 2, 'u', 1 << 20, 64, 0, 8, 1);
            check_cache(t, 3, 3, 'u', 16 << 20, 64, 0, 2, 4);
            CHECK(ab_topology_cache_size(t, 1) == 48 << 10 &&
                      ab_topology_cache_size(t, 2) == 1 << 20 &&
                      ab_topology_cache_size(t, 3) == 16 << 20 &&
                      ab_topology_cache_size(t, 4) == 0 && ab_topology_cache_size(t, 0) == 0,
                  "cache sizes by level: %zu %zu %zu %zu %zu", ab_topology_cache_size(t, 0),
                  ab_topology_cache_size(t, 1), ab_topology_cache_size(t, 2),
                  ab_topology_cache_size(t, 3), ab_topology_cache_size(t, 4));
            /* What n threads' caches hold: per level, one instance per
             * thread up to the machine's count (L3: 2), data and unified
             * only (not L1i). */
            size_t core = (48 << 10) + (1 << 20);
            CHECK(ab_topology_cache_capacity(t, 1) == core + (16 << 20)
                      && ab_topology_cache_capacity(t, 0) == core + (16 << 20)
                      && ab_topology_cache_capacity(t, 2) == 2 * core + (32 << 20)
                      && ab_topology_cache_capacity(t, 16) == 8 * core + (32 << 20),
                  "capacity at 1, 0, 2, 16 threads: %zu %zu %zu %zu",
                  ab_topology_cache_capacity(t, 1), ab_topology_cache_capacity(t, 0),
                  ab_topology_cache_capacity(t, 2), ab_topology_cache_capacity(t, 16));
        }
        t_case("topology: hwloc synthetic, Intel numbering, second threads {8..15} allowed");
        if (from_topo(t, topo, 8, 9, 10, 11, 12, 13, 14, 15, -1) == 0) {
            check_layout(t, 2, 1, 8, 4, (const int[]){ 8, 9, 10, 11, 12, 13, 14, 15 }, 8);
        }
        /* Core 4 = PUs {4, 12}: enters at 4; core 5 = {5, 13}: only 13. */
        t_case("topology: hwloc synthetic, Intel numbering, PUs {4,12,13} allowed");
        if (from_topo(t, topo, 4, 12, 13, -1) == 0) {
            check_layout(t, 2, 1, 3, 4, (const int[]){ 4, 13 }, 2);
            check_cache(t, 3, 3, 'u', 16 << 20, 64, 0, 2, 4);   /* the machine's, unchanged */
        }
        hwloc_topology_destroy(topo);
    }

    /* AMD EPYC-like, NPS2: 2 packages, each 2 NUMA nodes, each 2 L3s
     * (32 MiB, one per CCX) of 4 cores x 2 threads with a 512 KiB L2 per
     * core. Totals: 4 NUMA nodes, 8 L3s, 32 cores, 64 PUs; core k has PUs
     * 2k, 2k+1, and L3 j covers cores 4j..4j+3. */
    t_case("topology: hwloc synthetic, 2 packages x 2 NUMA nodes x 2 L3s");
    topo = load_topo("package:2 numa:2 l3:2(size=32MiB) core:4 l2:1(size=512KiB) pu:2", NULL);
    if (topo) {
        if (from_topo(t, topo, -1) == 0) {
            int want[32];
            for (int k = 0; k < 32; k++)
                want[k] = 2 * k;
            check_layout(t, 2, 4, 64, 2, want, 32);
            check_cache(t, 0, 2, 'u', 512 << 10, 64, 0, 32, 1);
            check_cache(t, 1, 3, 'u', 32 << 20, 64, 0, 8, 4);
        }
        /* The PUs of L3 #5 (cores 20-23: PUs 40-47) and PU 9 (core 4, L3
         * #1): the first allowed PU is 9, and its L3 is the same size. */
        t_case("topology: hwloc synthetic, NPS2, PUs {9, 40..47} allowed");
        if (from_topo(t, topo, 9, 40, 41, 42, 43, 44, 45, 46, 47, -1) == 0) {
            check_layout(t, 2, 4, 9, 2, (const int[]){ 9, 40, 42, 44, 46 }, 5);
            check_cache(t, 1, 3, 'u', 32 << 20, 64, 0, 8, 4);
        }
        hwloc_topology_destroy(topo);
    }

    /* Packages numbered alternately (some BIOSes): logical PUs get OS
     * indexes 0, 2, 1, 3, so package 0 = CPUs {0, 2}, package 1 = {1, 3}.
     * Topology order fills package 0 first: 0, 2, 1, 3. */
    t_case("topology: hwloc synthetic, packages numbered alternately");
    if ((topo = load_topo("package:2 core:2 pu:1(indexes=0,2,1,3)", NULL)) != NULL) {
        if (from_topo(t, topo, -1) == 0) {
            check_layout(t, 2, 1, 4, 0, (const int[]){ 0, 2, 1, 3 }, 4);
        }
        hwloc_topology_destroy(topo);
    }

    /* OMP_PLACES in the topology's order (ab_omp_places), what attnbench
     * binds its threads with: libgomp's OMP_PLACES=cores orders the cores
     * by CPU number, {0},{1},{2},{3} here, so threads 0 and 1 ran in
     * different packages while `info` showed them in one. */
    t_case("topology: OMP_PLACES in topology order, packages numbered alternately");
    if ((topo = load_topo("package:2 core:2 pu:1(indexes=0,2,1,3)", NULL)) != NULL) {
        check_places(topo, NULL, "{0},{2},{1},{3}", 4);
        hwloc_topology_destroy(topo);
    }
    t_case("topology: OMP_PLACES in topology order, SMT siblings numbered Intel's way");
    if ((topo = load_topo("package:1 core:4 pu:2(indexes=0,4,1,5,2,6,3,7)", NULL)) != NULL) {
        check_places(topo, NULL, "{0,4},{1,5},{2,6},{3,7}", 4);
        hwloc_bitmap_t some = hwloc_bitmap_alloc();
        if (some) {   /* a core enters with its allowed PUs only */
            hwloc_bitmap_set(some, 5);
            hwloc_bitmap_set(some, 2);
            hwloc_bitmap_set(some, 6);
            check_places(topo, some, "{5},{2,6}", 2);
            hwloc_bitmap_zero(some);
            char buf[64], err[160] = "";
            CHECK(ab_omp_places_from_hwloc(topo, some, buf, sizeof buf, err, sizeof err) == -1
                      && err[0] && buf[0] == '\0',
                  "no allowed PU: places \"%s\", err \"%s\"", buf, err);
            hwloc_bitmap_free(some);
        }
        char small[12], err[160] = "";   /* "{0,4},{1,5}" and no more */
        CHECK(ab_omp_places_from_hwloc(topo, NULL, small, sizeof small, err, sizeof err) == -1
                  && err[0] && small[0] == '\0',
              "places that do not fit: \"%s\", err \"%s\"", small, err);
        hwloc_topology_destroy(topo);
    }
    t_case("topology: OMP_PLACES in topology order, NPS2, PUs {9, 40..47} allowed");
    topo = load_topo("package:2 numa:2 l3:2(size=32MiB) core:4 l2:1(size=512KiB) pu:2", NULL);
    if (topo) {
        hwloc_bitmap_t some = hwloc_bitmap_alloc();
        if (some) {
            hwloc_bitmap_set(some, 9);
            hwloc_bitmap_set_range(some, 40, 47);
            check_places(topo, some, "{9},{40,41},{42,43},{44,45},{46,47}", 5);
            hwloc_bitmap_free(some);
        }
        hwloc_topology_destroy(topo);
    }

    /* No core level (some platforms): each PU counts as a core, also in the
     * sharing of the two L2s (2 PUs each). */
    t_case("topology: hwloc synthetic without cores");
    if ((topo = load_topo("package:1 l2:2(size=1MiB) pu:2", NULL)) != NULL) {
        if (from_topo(t, topo, -1) == 0) {
            check_layout(t, 1, 1, 4, 1, (const int[]){ 0, 1, 2, 3 }, 4);
            check_cache(t, 0, 2, 'u', 1 << 20, 64, 0, 2, 2);
        }
        hwloc_topology_destroy(topo);
    }
}

static void test_xml(ab_topology *t)
{
    hwloc_topology_t topo;

    /* tests/topology/hybrid.xml, a made-up CPU shaped like Intel's Alder
     * Lake: 1 package, 1 NUMA node, a 12 MiB 12-way L3 for all;
     *   P-cores 0 (PUs 0,1) and 1 (PUs 2,3): each a 1.25 MiB 10-way L2,
     *     a 48 KiB 12-way L1d and a 32 KiB 8-way L1i;
     *   E-cores with PUs 4, 5, 6, 7: one 2 MiB 16-way L2 for the four, each
     *     a 32 KiB 8-way L1d and a 64 KiB 8-way L1i;
     * 64 B lines everywhere. 6 cores, 8 PUs; 6 L1d, 6 L1i, 3 L2, 1 L3. */
    t_case("topology: hwloc XML, hybrid CPU seen from a P-core");
    if ((topo = load_topo(NULL, "hybrid.xml")) != NULL) {
        if (from_topo(t, topo, -1) == 0) {
            check_layout(t, 1, 1, 8, 4, (const int[]){ 0, 2, 4, 5, 6, 7 }, 6);
            check_cache(t, 0, 1, 'd', 48 << 10, 64, 12, 6, 1);
            check_cache(t, 1, 1, 'i', 32 << 10, 64, 8, 6, 1);
            check_cache(t, 2, 2, 'u', 1280 << 10, 64, 10, 3, 1);
            check_cache(t, 3, 3, 'u', 12 << 20, 64, 12, 1, 6);
        }
        /* Only the E-cores allowed: their caches (seen from PU 4). */
        t_case("topology: hwloc XML, hybrid CPU, E-cores {4..7} allowed");
        if (from_topo(t, topo, 4, 5, 6, 7, -1) == 0) {
            check_layout(t, 1, 1, 4, 4, (const int[]){ 4, 5, 6, 7 }, 4);
            check_cache(t, 0, 1, 'd', 32 << 10, 64, 8, 6, 1);
            check_cache(t, 1, 1, 'i', 64 << 10, 64, 8, 6, 1);
            check_cache(t, 2, 2, 'u', 2 << 20, 64, 16, 3, 4);
            check_cache(t, 3, 3, 'u', 12 << 20, 64, 12, 1, 6);
        }
        hwloc_topology_destroy(topo);
    }

    /* tests/topology/odd.xml: no package; a core with PUs 0 and 1 under a
     * fully associative 512 KiB L2 with 128 B lines; PU 2 under no core and
     * no cache; the root names hwloc version "9.8.7-test". */
    t_case("topology: hwloc XML, no package, a PU under no core, fully associative L2");
    if ((topo = load_topo(NULL, "odd.xml")) != NULL) {
        if (from_topo(t, topo, -1) == 0) {
            CHECK(strcmp(t->source, "hwloc 9.8.7-test") == 0, "source \"%s\"", t->source);
            check_layout(t, 1, 1, 3, 1, (const int[]){ 0, 2 }, 2);
            check_cache(t, 0, 2, 'u', 512 << 10, 128, -1, 1, 1);
            CHECK(ab_topology_cache_size(t, 1) == 0 && ab_topology_cache_size(t, 2) == 512 << 10,
                  "L1 %zu, L2 %zu", ab_topology_cache_size(t, 1), ab_topology_cache_size(t, 2));
        }
        /* PU 2 alone: it has no L2, so the machine's (only) one is listed. */
        t_case("topology: hwloc XML, odd machine, PU {2} allowed");
        if (from_topo(t, topo, 2, -1) == 0) {
            check_layout(t, 1, 1, 1, 1, (const int[]){ 2 }, 1);
            check_cache(t, 0, 2, 'u', 512 << 10, 128, -1, 1, 1);
        }
        hwloc_topology_destroy(topo);
    }

    t_case("topology: ab_topology_from_hwloc without a topology fails");
    char err[256] = "";
    CHECK(ab_topology_from_hwloc(t, NULL, NULL, err, sizeof err) == -1 && err[0] != '\0',
          "no topology: err \"%s\"", err);
    CHECK(ab_topology_from_hwloc(NULL, NULL, NULL, NULL, 0) == -1, "NULL everything succeeded");
}

#endif /* ATTN_HAVE_HWLOC */

/* ---- this machine: the load, the fallback ------------------------------------------------- */

#ifdef ATTN_HAVE_HWLOC
/* Whether this machine's sysfs describes its CPUs (sandboxes and some
 * containers hide it). These are the files topology.c requires before it
 * lets hwloc look. */
static int sysfs_has_topology(void)
{
    return access("/sys/devices/system/cpu/cpu0/topology/package_cpus", R_OK) == 0 ||
           access("/sys/devices/system/cpu/cpu0/topology/core_siblings", R_OK) == 0;
}
#endif

static void test_real_machine(ab_topology *t)
{
    char err[256] = "unchanged";
    t_case("topology: ab_topology_load on this machine");
    int r = ab_topology_load(t, err, sizeof err);
    CHECK(r == 0, "ab_topology_load failed: %s", err);
    if (r != 0)
        return;
    CHECK(err[0] == '\0', "err not cleared on success: %s", err);
#ifdef ATTN_HAVE_HWLOC
    const char *want = sysfs_has_topology() ? "hwloc " : "fallback: sched_getaffinity, hwloc";
#else
    const char *want = "fallback: sched_getaffinity, no hwloc";
#endif
    CHECK(strncmp(t->source, want, strlen(want)) == 0, "source \"%s\", expected \"%s...\"",
          t->source, want);
    if (strncmp(t->source, "hwloc ", 6) == 0)   /* the fallback cannot count them: 0 */
        CHECK(t->packages >= 1 && t->numa_nodes >= 1, "packages %d, NUMA nodes %d", t->packages,
              t->numa_nodes);
    check_real(t);
    CHECK(ab_topology_load(NULL, err, sizeof err) == -1, "ab_topology_load(NULL) succeeded");
}

/* The fallback's promise: the affinity mask's CPUs, the cores among them
 * in ascending order (each CPU a core here, where no two CPUs of the mask
 * are siblings: test_cores_in's fake trees test the counting); packages and
 * NUMA nodes unknown; the library's L1d, L2 and L3 sizes with nothing else
 * claimed; a source that says fallback. */
static void check_fallback(const ab_topology *t, const cpu_set_t *mask)
{
    CHECK(strncmp(t->source, "fallback: sched_getaffinity, ", 29) == 0, "source \"%s\"",
          t->source);
#ifndef ATTN_HAVE_HWLOC
    CHECK(strcmp(t->source, "fallback: sched_getaffinity, no hwloc") == 0, "source \"%s\"",
          t->source);
#endif
    CHECK(t->packages == 0 && t->numa_nodes == 0, "packages %d, NUMA nodes %d: not unknown (0)",
          t->packages, t->numa_nodes);
    int n = 0;
    int smt = 0;   /* some CPU of the mask has siblings */
    for (int cpu = 0; cpu < T_CPUS; cpu++) {
        if (!mask_has(mask, cpu))
            continue;
        char path[96], list[256] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list",
                 cpu);
        FILE *f = fopen(path, "r");
        if (f) {
            smt |= fgets(list, sizeof list, f) && strcspn(list, ",-") < strlen(list);
            fclose(f);
        }
        if (n < t->cores && !smt)
            CHECK(t->core_cpu[n] == cpu, "core_cpu[%d] = %d, expected CPU %d", n, t->core_cpu[n],
                  cpu);
        n++;
    }
    CHECK(t->pus == n && (smt ? t->cores >= 1 && t->cores <= n : t->cores == n),
          "pus %d, cores %d; the mask has %d CPUs%s", t->pus, t->cores, n,
          smt ? ", some of them siblings" : "");
    CHECK(t->n_caches == 3, "%d caches, expected 3", t->n_caches);
    check_cache(t, 0, 1, 'd', attn_cpu_cache_size(1), 0, 0, 0, 0);
    check_cache(t, 1, 2, 'u', attn_cpu_cache_size(2), 0, 0, 0, 0);
    check_cache(t, 2, 3, 'u', attn_cpu_cache_size(3), 0, 0, 0, 0);
    /* Instances unknown: L1 and L2 one per thread, L3 one in all. */
    size_t core = attn_cpu_cache_size(1) + attn_cpu_cache_size(2);
    CHECK(ab_topology_cache_capacity(t, 3) == 3 * core + attn_cpu_cache_size(3),
          "capacity at 3 threads %zu, expected %zu", ab_topology_cache_capacity(t, 3),
          3 * core + attn_cpu_cache_size(3));
}

static void test_fallback(ab_topology *t)
{
    char err[256] = "unchanged";
    t_case("topology: fallback on this machine");
    cpu_set_t *saved = get_mask();
    CHECK(saved != NULL, "sched_getaffinity: %s", strerror(errno));
    if (!saved)
        return;
    int r = ab_topology_load_fallback(t, err, sizeof err);
    CHECK(r == 0 && err[0] == '\0', "returned %d, err \"%s\"", r, err);
    if (r == 0) {
        check_fallback(t, saved);
        check_real(t);
    }

    /* Restricted to one CPU (the highest allowed): one core, that CPU. */
    t_case("topology: fallback under an affinity mask of one CPU");
    cpu_set_t *one = set_new();
    int last = -1;
    for (int cpu = 0; cpu < T_CPUS; cpu++)
        if (mask_has(saved, cpu))
            last = cpu;
    if (one && last >= 0) {
        CPU_SET_S((size_t)last, CPU_ALLOC_SIZE(T_CPUS), one);
        CHECK(sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), one) == 0, "sched_setaffinity: %s",
              strerror(errno));
        r = ab_topology_load_fallback(t, err, sizeof err);
        CHECK(r == 0, "failed: %s", err);
        if (r == 0) {
            check_fallback(t, one);
            CHECK(t->cores == 1 && t->core_cpu[0] == last, "cores %d, core_cpu[0] %d; expected "
                  "1, %d", t->cores, t->core_cpu[0], last);
        }
        CHECK(sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), saved) == 0, "restoring the mask: %s",
              strerror(errno));
    }
    CPU_FREE(one);
    CPU_FREE(saved);
    CHECK(ab_topology_load_fallback(NULL, err, sizeof err) == -1, "fallback into NULL succeeded");
}

static void test_binding(const ab_topology *t)
{
    char err[256];
    t_case("topology: binding");
    cpu_set_t *saved = get_mask();
    CHECK(saved != NULL, "sched_getaffinity: %s", strerror(errno));
    if (!saved || t->cores < 1)
        return;

    int r = ab_bind_cores(t, 1, err, sizeof err);
    CHECK(r == 1, "ab_bind_cores(1) returned %d: %s", r, err);
    cpu_set_t *now = get_mask();
    if (now) {
        CHECK(mask_count(now) == 1 && mask_has(now, t->core_cpu[0]),
              "after ab_bind_cores(1): %d CPUs in the mask, CPU %d %s", mask_count(now),
              t->core_cpu[0], mask_has(now, t->core_cpu[0]) ? "in it" : "not in it");
        CPU_FREE(now);
    }
    /* The affinity mask is respected: a new load sees only that core. */
    ab_topology *b = malloc(sizeof *b);
    if (b && ab_topology_load(b, err, sizeof err) == 0)
        CHECK(b->cores == 1 && b->pus == 1 && b->core_cpu[0] == t->core_cpu[0],
              "load while bound to CPU %d: %d cores, %d pus, core_cpu[0] %d", t->core_cpu[0],
              b->cores, b->pus, b->core_cpu[0]);
    else
        CHECK(0, "load while bound failed: %s", b ? err : "out of memory");
    free(b);

    r = ab_bind_cores(t, 0, err, sizeof err);
    CHECK(r == t->cores, "ab_bind_cores(0) returned %d, expected %d: %s", r, t->cores, err);
    now = get_mask();
    if (now) {
        CHECK(mask_count(now) == t->cores, "after ab_bind_cores(0): %d CPUs, expected %d",
              mask_count(now), t->cores);
        for (int i = 0; i < t->cores; i++)
            CHECK(mask_has(now, t->core_cpu[i]), "CPU %d of core %d not in the mask",
                  t->core_cpu[i], i);
        CPU_FREE(now);
    }

    for (int k = 0; k < t->cores && k < 64; k++) {
        r = ab_pin_to_core(t, k, err, sizeof err);
        CHECK(r == 0, "ab_pin_to_core(%d): %s", k, err);
        now = get_mask();
        if (now) {
            CHECK(mask_count(now) == 1 && mask_has(now, t->core_cpu[k]),
                  "after ab_pin_to_core(%d): %d CPUs, CPU %d %s", k, mask_count(now),
                  t->core_cpu[k], mask_has(now, t->core_cpu[k]) ? "in it" : "not in it");
            CPU_FREE(now);
        }
        /* Linux moves the thread before sched_setaffinity returns. */
        CHECK(sched_getcpu() == t->core_cpu[k], "pinned to CPU %d, running on %d",
              t->core_cpu[k], sched_getcpu());
    }

    strcpy(err, "");
    r = ab_pin_to_core(t, t->cores, err, sizeof err);
    CHECK(r == -1 && err[0] != '\0', "ab_pin_to_core(%d of %d cores) returned %d, err \"%s\"",
          t->cores, t->cores, r, err);
    strcpy(err, "");
    r = ab_pin_to_core(t, -1, err, sizeof err);
    CHECK(r == -1 && err[0] != '\0', "ab_pin_to_core(-1) returned %d, err \"%s\"", r, err);
    ab_topology empty;
    memset(&empty, 0, sizeof empty);
    CHECK(ab_bind_cores(&empty, 1, err, sizeof err) == -1, "binding an empty topology succeeded");
    CHECK(ab_bind_cores(NULL, 1, NULL, 0) == -1, "ab_bind_cores(NULL) succeeded");
    CHECK(ab_topology_cache_size(NULL, 1) == 0, "cache size of NULL");
    CHECK(ab_topology_cache_capacity(NULL, 1) == 0, "cache capacity of NULL");

    /* Later tests must run with the mask this one started with. */
    CHECK(sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), saved) == 0, "restoring the mask: %s",
          strerror(errno));
    now = get_mask();
    if (now) {
        CHECK(CPU_EQUAL_S(CPU_ALLOC_SIZE(T_CPUS), now, saved), "mask not restored");
        CPU_FREE(now);
    }
    CPU_FREE(saved);
}

/* The fallback topology over the fake tree, restricted to CPUs 0 and 1
 * (where this machine has them): its cores and their CPUs as the tree's
 * sibling lists say. */
static void check_fallback_in(const char *dir, int layout, int want_cores)
{
    cpu_set_t *saved = get_mask(), *two = set_new();
    ab_topology *t = malloc(sizeof *t);
    if (saved && two && t && mask_has(saved, 0) && mask_has(saved, 1)) {
        CPU_SET_S(0, CPU_ALLOC_SIZE(T_CPUS), two);
        CPU_SET_S(1, CPU_ALLOC_SIZE(T_CPUS), two);
        char err[256];
        int r = -1;
        if (sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), two) == 0)
            r = ab_topology_load_fallback_in(t, dir, err, sizeof err);
        else
            snprintf(err, sizeof err, "sched_setaffinity: %s", strerror(errno));
        CHECK(r == 0, "layout %d: the fallback failed: %s", layout, err);
        if (r == 0) {
            CHECK(t->pus == 2 && t->cores == want_cores, "layout %d: pus %d, cores %d; want 2, %d",
                  layout, t->pus, t->cores, want_cores);
            for (int c = 0; c < t->cores && c < want_cores; c++)
                CHECK(t->core_cpu[c] == c, "layout %d: core %d on CPU %d, want %d", layout, c,
                      t->core_cpu[c], c);
        }
        CHECK(sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), saved) == 0, "restoring the mask: %s",
              strerror(errno));
    } else if (saved && two && t) {
        t_skip("topology: fallback over a fake sysfs: needs CPUs 0 and 1");
    }
    free(t);
    CPU_FREE(two);
    CPU_FREE(saved);
}

/* attn_cpu_affinity_cpus: the mask's CPUs, ascending, each once; then the
 * mask narrowed to its highest CPU alone (restored after). */
static void test_affinity_cpus(void)
{
    t_case("topology: the affinity mask's CPU list (the default team's and the fallback's)");
    cpu_set_t *saved = get_mask(), *one = set_new();
    int *cpus = NULL, n = attn_cpu_affinity_cpus(&cpus);
    CHECK(saved && one, "sched_getaffinity or out of memory");
    CHECK(n > 0 && cpus, "attn_cpu_affinity_cpus: %d, %s", n, strerror(errno));
    if (!saved || !one || n <= 0 || !cpus) {
        free(cpus);
        CPU_FREE(one);
        CPU_FREE(saved);
        return;
    }
    int k = 0, last = -1;
    for (int cpu = 0; cpu < T_CPUS; cpu++)
        if (mask_has(saved, cpu)) {
            CHECK(k < n && cpus[k] == cpu, "CPU %d of the mask: list entry %d is %d", cpu, k,
                  k < n ? cpus[k] : -1);
            k++;
            last = cpu;
        }
    CHECK(k == n, "the mask has %d CPUs, the list %d", k, n);
    free(cpus);
    CPU_SET_S((size_t)last, CPU_ALLOC_SIZE(T_CPUS), one);
    if (sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), one) == 0) {
        n = attn_cpu_affinity_cpus(&cpus);
        CHECK(n == 1 && cpus[0] == last, "mask of CPU %d alone: %d CPUs, the first %d", last, n,
              n > 0 ? cpus[0] : -1);
        free(cpus);
        CHECK(sched_setaffinity(0, CPU_ALLOC_SIZE(T_CPUS), saved) == 0, "restoring the mask: %s",
              strerror(errno));
    } else {
        CHECK(0, "sched_setaffinity to CPU %d: %s", last, strerror(errno));
    }
    CPU_FREE(one);
    CPU_FREE(saved);
}

/* attn_ctx_create's default team (api.c available_cores) and the topology
 * fallback count cores, not hardware threads, from a sysfs tree: here a
 * fake one of 4 CPUs. */
static void test_cores_in(void)
{
    t_case("topology: the library's default threads are cores, hardware threads of one core "
           "counted once (sysfs siblings)");
    char dir[] = "/tmp/ab_cpus_XXXXXX", path[160];
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    /* Intel's numbering (a core's threads n apart: 0,2 and 1,3), then
     * AMD's (adjacent: 0-1 and 2-3); cpu3's file missing the second time. */
    static const char *const layouts[2][4] = { { "0,2", "1,3", "0,2", "1,3" },
                                               { "0-1", "0-1", "2-3", NULL } };
    static const struct {
        int cpus[4], n, want[2];
    } cases[] = {
        { { 0, 1, 2, 3 }, 4, { 2, 3 } },  /* cpu3 unreadable the second time: a core */
        { { 0, 2 }, 2, { 1, 2 } },        /* one core's two threads; two cores */
        { { 2, 3 }, 2, { 2, 2 } },        /* siblings outside the mask: each counts */
        { { 0, 1 }, 2, { 2, 1 } },
        { { 3 }, 1, { 1, 1 } },
    };
    for (int l = 0; l < 2; l++) {
        for (int c = 0; c < 4; c++) {
            snprintf(path, sizeof path, "%s/cpu%d", dir, c);
            mkdir(path, 0700);
            snprintf(path, sizeof path, "%s/cpu%d/topology", dir, c);
            mkdir(path, 0700);
            snprintf(path, sizeof path, "%s/cpu%d/topology/thread_siblings_list", dir, c);
            remove(path);
            FILE *f = layouts[l][c] ? fopen(path, "w") : NULL;
            if (f) {
                fprintf(f, "%s\n", layouts[l][c]);
                fclose(f);
            }
        }
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
            int got = attn_cpu_cores_in(cases[i].cpus, cases[i].n, dir);
            CHECK(got == cases[i].want[l], "layout %d, case %zu: %d cores, want %d", l, i, got,
                  cases[i].want[l]);
        }
        /* CPUs 0 and 1: two cores in Intel's numbering, one in AMD's. */
        check_fallback_in(dir, l, l == 0 ? 2 : 1);
    }
    /* No sysfs at all: every CPU a core. */
    static const int three[] = { 0, 1, 2 };
    CHECK(attn_cpu_cores_in(three, 3, "/nonexistent") == 3, "no sysfs: not 3 cores");
    for (int c = 0; c < 4; c++) {
        snprintf(path, sizeof path, "%s/cpu%d/topology/thread_siblings_list", dir, c);
        remove(path);
        snprintf(path, sizeof path, "%s/cpu%d/topology", dir, c);
        rmdir(path);
        snprintf(path, sizeof path, "%s/cpu%d", dir, c);
        rmdir(path);
    }
    rmdir(dir);
}

void test_topology(void)
{
    test_affinity_cpus();
    test_cores_in();
    ab_topology *t = malloc(sizeof *t);   /* 4 KiB of core_cpu: not on the stack */
    ab_topology *s = malloc(sizeof *s);
    t_case("topology: allocation");
    CHECK(t != NULL && s != NULL, "out of memory");
    if (t && s) {
#ifdef ATTN_HAVE_HWLOC
        test_synthetic(s);
        test_xml(s);
#else
        t_skip("topology: built without hwloc: synthetic and XML topologies not tested");
#endif
        test_fallback(s);
        test_real_machine(t);
        if (t->cores >= 1)
            test_binding(t);
    }
    free(s);
    free(t);
}
