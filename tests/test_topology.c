/*
 * test_topology.c — harness/topology.c: the loaders on this machine, the
 * sysfs parser against fake trees with known answers, and thread binding.
 */
#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "topology.h"

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

/* A set of the CPUs listed, ended by -1. */
static cpu_set_t *set_of(int first, ...)
{
    cpu_set_t *s = set_new();
    if (!s)
        return NULL;
    va_list ap;
    va_start(ap, first);
    for (int c = first; c >= 0; c = va_arg(ap, int))
        CPU_SET_S((size_t)c, CPU_ALLOC_SIZE(T_CPUS), s);
    va_end(ap);
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

/* Writes root/rel (creating its directories) with the formatted text. */
static int put(const char *root, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int put(const char *root, const char *rel, const char *fmt, ...)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", root, rel) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p; p++) {   /* mkdir -p of the parent */
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    return fclose(f) == 0 ? 0 : -1;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const char *root)
{
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* One cache/indexN directory of a fake CPU. */
static int put_cache(const char *root, int cpu, int index, int level, const char *type,
                     const char *size, int line, int ways, int sets, const char *shared)
{
    char rel[256];
    int bad = 0;
#define PUT_CACHE_FILE(name, ...)                                                           \
    do {                                                                                     \
        snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cache/index%d/%s", cpu, index, name); \
        bad |= put(root, rel, __VA_ARGS__);                                                  \
    } while (0)
    PUT_CACHE_FILE("level", "%d\n", level);
    PUT_CACHE_FILE("type", "%s\n", type);
    PUT_CACHE_FILE("size", "%s\n", size);
    PUT_CACHE_FILE("coherency_line_size", "%d\n", line);
    PUT_CACHE_FILE("ways_of_associativity", "%d\n", ways);
    PUT_CACHE_FILE("number_of_sets", "%d\n", sets);
    PUT_CACHE_FILE("shared_cpu_list", "%s\n", shared);
#undef PUT_CACHE_FILE
    return bad;
}

static int put_cpu_file(const char *root, int cpu, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put_cpu_file(const char *root, int cpu, const char *name, const char *fmt, ...)
{
    char rel[256], text[256];
    snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/%s", cpu, name);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return put(root, rel, "%s", text);
}

/* Tree A, the brief's machine: 4 CPUs as 2 cores x 2 threads, numbered the
 * Intel way (core 0 = CPUs 0 and 2, core 1 = CPUs 1 and 3); L1d and L1i 32K,
 * L2 1M per core, L3 8M shared by both cores; one NUMA node. */
static int make_tree_a(const char *root)
{
    static const char *const sib[4] = { "0,2", "1,3", "0,2", "1,3" };
    int bad = put(root, "devices/system/cpu/online", "0-3\n");
    bad |= put(root, "devices/system/cpu/possible", "0-3\n");
    bad |= put(root, "devices/system/node/node0/cpulist", "0-3\n");
    bad |= put(root, "devices/system/node/online", "0\n");
    for (int cpu = 0; cpu < 4; cpu++) {
        bad |= put_cpu_file(root, cpu, "topology/physical_package_id", "0\n");
        bad |= put_cpu_file(root, cpu, "topology/die_id", "0\n");
        bad |= put_cpu_file(root, cpu, "topology/core_id", "%d\n", cpu % 2);
        bad |= put_cpu_file(root, cpu, "topology/core_cpus_list", "%s\n", sib[cpu]);
        bad |= put_cpu_file(root, cpu, "topology/thread_siblings_list", "%s\n", sib[cpu]);
        bad |= put_cache(root, cpu, 0, 1, "Data", "32K", 64, 8, 64, sib[cpu]);
        bad |= put_cache(root, cpu, 1, 1, "Instruction", "32K", 64, 8, 64, sib[cpu]);
        bad |= put_cache(root, cpu, 2, 2, "Unified", "1024K", 64, 8, 2048, sib[cpu]);
        bad |= put_cache(root, cpu, 3, 3, "Unified", "8192K", 64, 16, 8192, "0-3");
    }
    return bad;
}

/* Tree B, the fallbacks: two packages numbered alternately (package 0 = CPUs
 * 0 and 2, package 1 = CPUs 1 and 3), no SMT; no cpu/online file (cpu0 has
 * no online file, CPUs 1-3 say 1, cpu4 is offline); no sibling lists, and
 * core_id 0 and 1 in both packages; caches listed out of order, with other
 * size spellings, a fully associative L1i, and an "Unknown" cache to skip;
 * L3 32M per package; two NUMA nodes. */
static int make_tree_b(const char *root)
{
    static const char *const self[4] = { "0", "1", "2", "3" };
    static const char *const pkg_cpus[2] = { "0,2", "1,3" };
    int bad = 0;
    for (int cpu = 0; cpu < 4; cpu++) {
        if (cpu > 0)
            bad |= put_cpu_file(root, cpu, "online", "1\n");
        bad |= put_cpu_file(root, cpu, "topology/physical_package_id", "%d\n", cpu % 2);
        bad |= put_cpu_file(root, cpu, "topology/core_id", "%d\n", cpu / 2);
        bad |= put_cache(root, cpu, 0, 2, "Unified", "2 MiB", 64, 16, 2048, self[cpu]);
        bad |= put_cache(root, cpu, 1, 1, "Instruction", "32K", 64, 512, 1, self[cpu]);
        bad |= put_cache(root, cpu, 2, 3, "Unified", "32M", 64, 16, 32768, pkg_cpus[cpu % 2]);
        bad |= put_cache(root, cpu, 3, 1, "Data", "48K", 64, 12, 64, self[cpu]);
        bad |= put_cache(root, cpu, 4, 4, "Unknown", "64M", 64, 16, 65536, "0-3");
    }
    bad |= put_cpu_file(root, 4, "online", "0\n");
    bad |= put(root, "devices/system/node/node0/cpulist", "0,2\n");
    bad |= put(root, "devices/system/node/node1/cpulist", "1,3\n");
    return bad;
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

/* What must hold for any loader on this machine. */
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

/* ---- the cases ---------------------------------------------------------------------------- */

/* Whether this machine's sysfs describes its CPUs (sandboxes and some
 * containers hide it; then only the sysconf path can work). These are the
 * files topology.c requires before it lets hwloc look. */
static int sysfs_has_topology(void)
{
    return access("/sys/devices/system/cpu/online", R_OK) == 0 &&
           (access("/sys/devices/system/cpu/cpu0/topology/package_cpus", R_OK) == 0 ||
            access("/sys/devices/system/cpu/cpu0/topology/core_siblings", R_OK) == 0);
}

static void test_real_machine(ab_topology *t)
{
    char err[256] = "unchanged";
    int have_sysfs = sysfs_has_topology();
    t_case("topology: ab_topology_load on this machine");
    int r = ab_topology_load(t, err, sizeof err);
    CHECK(r == 0, "ab_topology_load failed: %s", err);
    if (r != 0)
        return;
    CHECK(err[0] == '\0', "err not cleared on success: %s", err);
#ifdef ATTN_HAVE_HWLOC
    const char *want = have_sysfs ? "hwloc " : "sysconf";
#else
    const char *want = have_sysfs ? "sysfs" : "sysconf";
#endif
    CHECK(strncmp(t->source, want, strlen(want)) == 0, "source \"%s\", expected \"%s...\"",
          t->source, want);
    if (strcmp(t->source, "sysconf") != 0)   /* sysconf cannot count them: 0 */
        CHECK(t->packages >= 1 && t->numa_nodes >= 1, "packages %d, NUMA nodes %d", t->packages,
              t->numa_nodes);
    check_real(t);

    t_case("topology: sysfs loader on this machine's /sys");
    ab_topology *s = malloc(sizeof *s);
    CHECK(s != NULL, "out of memory");
    if (!s)
        return;
    if (!have_sysfs) {
        t_skip("topology: no CPU topology in /sys here: sysfs and hwloc loaders not compared");
    } else {
        r = ab_topology_load_sysfs(s, NULL, NULL, 0, err, sizeof err);
        CHECK(r == 0, "sysfs loader failed: %s", err);
        if (r == 0) {
            CHECK(strcmp(s->source, "sysfs") == 0, "source \"%s\"", s->source);
            CHECK(s->packages >= 1 && s->numa_nodes >= 1, "packages %d, NUMA nodes %d",
                  s->packages, s->numa_nodes);
            check_real(s);
        }
#ifdef ATTN_HAVE_HWLOC
        t_case("topology: hwloc and sysfs agree on this machine");
        ab_topology *h = malloc(sizeof *h);
        int rh = h ? ab_topology_load_hwloc(h, err, sizeof err) : -1;
        CHECK(rh == 0, "hwloc loader failed: %s", h ? err : "out of memory");
        if (r == 0 && rh == 0) {
            CHECK(h->cores == s->cores && h->pus == s->pus && h->packages == s->packages &&
                      h->numa_nodes == s->numa_nodes,
                  "hwloc: %d cores, %d PUs, %d packages, %d nodes; sysfs: %d, %d, %d, %d",
                  h->cores, h->pus, h->packages, h->numa_nodes, s->cores, s->pus, s->packages,
                  s->numa_nodes);
            for (int i = 0; i < h->cores && i < s->cores; i++)
                CHECK(h->core_cpu[i] == s->core_cpu[i], "core %d: CPU %d (hwloc), %d (sysfs)", i,
                      h->core_cpu[i], s->core_cpu[i]);
            CHECK(h->n_caches == s->n_caches, "%d caches (hwloc), %d (sysfs)", h->n_caches,
                  s->n_caches);
            for (int i = 0; i < h->n_caches && i < s->n_caches; i++) {
                const ab_cache *a = &h->caches[i], *b = &s->caches[i];
                CHECK(a->level == b->level && a->type == b->type && a->size == b->size &&
                          a->line == b->line && a->ways == b->ways &&
                          a->instances == b->instances && a->cores_sharing == b->cores_sharing,
                      "cache %d: hwloc L%d%c %zu/%d/%d x%d shared by %d; "
                      "sysfs L%d%c %zu/%d/%d x%d shared by %d",
                      i, a->level, a->type, a->size, a->line, a->ways, a->instances,
                      a->cores_sharing, b->level, b->type, b->size, b->line, b->ways,
                      b->instances, b->cores_sharing);
            }
            for (int level = 1; level <= 4; level++)
                CHECK(ab_topology_cache_size(h, level) == ab_topology_cache_size(s, level),
                      "L%d: %zu (hwloc), %zu (sysfs)", level, ab_topology_cache_size(h, level),
                      ab_topology_cache_size(s, level));
        }
        free(h);
#endif
    }
    free(s);

    t_case("topology: sysconf loader on this machine");
    ab_topology c;
    r = ab_topology_load_sysconf(&c, err, sizeof err);
    CHECK(r == 0, "sysconf loader failed: %s", err);
    if (r == 0) {
        CHECK(strcmp(c.source, "sysconf") == 0, "source \"%s\"", c.source);
        CHECK(c.cores == c.pus, "cores %d, pus %d (sysconf cannot tell threads apart)", c.cores,
              c.pus);
#ifdef _SC_LEVEL1_DCACHE_SIZE
        long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
        if (l1 > 0) {
            check_real(&c);
            CHECK(ab_topology_cache_size(&c, 1) == (size_t)l1, "L1d %zu, sysconf %ld",
                  ab_topology_cache_size(&c, 1), l1);
        }
#endif
    }
}

static void test_fake_trees(void)
{
    char root[] = "/tmp/ab_topology_XXXXXX";
    char err[256];
    ab_topology t;
    t_case("topology: fake sysfs trees can be built");
    if (!mkdtemp(root)) {
        CHECK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char a[sizeof root + 8], b[sizeof root + 8], c[sizeof root + 8], d[sizeof root + 8];
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/b", root);
    snprintf(c, sizeof c, "%s/c", root);
    snprintf(d, sizeof d, "%s/d", root);
    CHECK(make_tree_a(a) == 0 && make_tree_b(b) == 0, "writing the trees: %s", strerror(errno));
    /* Tree C: CPUs without topology or cache directories, and no node dir. */
    CHECK(put(c, "devices/system/cpu/online", "0-1\n") == 0 &&
              put(c, "devices/system/cpu/cpu0/uevent", "\n") == 0 &&
              put(c, "devices/system/cpu/cpu1/uevent", "\n") == 0,
          "writing tree C");
    /* Tree D: a corrupt online list and no cpuN directory. */
    CHECK(put(d, "devices/system/cpu/online", "zero-three\n") == 0, "writing tree D");
    cpu_set_t *all = set_of(0, 1, 2, 3, 4, -1);
    cpu_set_t *some = set_of(1, 2, 3, -1);
    cpu_set_t *one = set_of(2, -1);
    cpu_set_t *none = set_of(7, -1);
    size_t sz = CPU_ALLOC_SIZE(T_CPUS);
    CHECK(all && some && one && none, "out of memory");
    if (!all || !some || !one || !none)
        goto out;

    t_case("topology: fake sysfs, 2 cores x 2 threads");
    int r = ab_topology_load_sysfs(&t, a, all, sz, err, sizeof err);
    CHECK(r == 0, "failed: %s", err);
    if (r == 0) {
        CHECK(strcmp(t.source, "sysfs") == 0, "source \"%s\"", t.source);
        CHECK(t.packages == 1 && t.numa_nodes == 1 && t.cores == 2 && t.pus == 4,
              "packages %d, NUMA nodes %d, cores %d, pus %d; expected 1, 1, 2, 4", t.packages,
              t.numa_nodes, t.cores, t.pus);
        CHECK(t.core_cpu[0] == 0 && t.core_cpu[1] == 1, "core_cpu %d %d, expected 0 1",
              t.core_cpu[0], t.core_cpu[1]);
        CHECK(t.n_caches == 4, "%d caches, expected 4", t.n_caches);
        check_cache(&t, 0, 1, 'd', 32 << 10, 64, 8, 2, 1);
        check_cache(&t, 1, 1, 'i', 32 << 10, 64, 8, 2, 1);
        check_cache(&t, 2, 2, 'u', 1 << 20, 64, 8, 2, 1);
        check_cache(&t, 3, 3, 'u', 8 << 20, 64, 16, 1, 2);
        CHECK(ab_topology_cache_size(&t, 1) == 32 << 10 && ab_topology_cache_size(&t, 2) == 1 << 20 &&
                  ab_topology_cache_size(&t, 3) == 8 << 20 && ab_topology_cache_size(&t, 4) == 0 &&
                  ab_topology_cache_size(&t, 0) == 0,
              "cache sizes by level: %zu %zu %zu %zu %zu", ab_topology_cache_size(&t, 0),
              ab_topology_cache_size(&t, 1), ab_topology_cache_size(&t, 2),
              ab_topology_cache_size(&t, 3), ab_topology_cache_size(&t, 4));
    }

    t_case("topology: fake sysfs, affinity mask {1,2,3}");
    r = ab_topology_load_sysfs(&t, a, some, sz, err, sizeof err);
    CHECK(r == 0, "failed: %s", err);
    if (r == 0) {
        /* Core 0 is now reached through CPU 2, its only allowed thread; it
         * still comes first, and the machine's caches are unchanged. */
        CHECK(t.cores == 2 && t.pus == 3, "cores %d, pus %d; expected 2, 3", t.cores, t.pus);
        CHECK(t.core_cpu[0] == 2 && t.core_cpu[1] == 1, "core_cpu %d %d, expected 2 1",
              t.core_cpu[0], t.core_cpu[1]);
        check_cache(&t, 3, 3, 'u', 8 << 20, 64, 16, 1, 2);
    }

    t_case("topology: fake sysfs, affinity mask {2}");
    r = ab_topology_load_sysfs(&t, a, one, sz, err, sizeof err);
    CHECK(r == 0, "failed: %s", err);
    if (r == 0)
        CHECK(t.cores == 1 && t.pus == 1 && t.core_cpu[0] == 2,
              "cores %d, pus %d, core_cpu[0] %d; expected 1, 1, 2", t.cores, t.pus, t.core_cpu[0]);

    t_case("topology: fake sysfs, affinity mask without an online CPU fails");
    strcpy(err, "");
    t.cores = 99;
    r = ab_topology_load_sysfs(&t, a, none, sz, err, sizeof err);
    CHECK(r == -1 && err[0] != '\0', "returned %d, err \"%s\"", r, err);
    CHECK(t.cores == 0, "cores %d left in a failed load", t.cores);

    t_case("topology: fake sysfs, 2 packages numbered alternately, fallbacks");
    r = ab_topology_load_sysfs(&t, b, all, sz, err, sizeof err);
    CHECK(r == 0, "failed: %s", err);
    if (r == 0) {
        /* cpu4 is offline although allowed; core_id repeats per package. */
        CHECK(t.packages == 2 && t.numa_nodes == 2 && t.cores == 4 && t.pus == 4,
              "packages %d, NUMA nodes %d, cores %d, pus %d; expected 2, 2, 4, 4", t.packages,
              t.numa_nodes, t.cores, t.pus);
        /* Topology order fills package 0 first. */
        CHECK(t.core_cpu[0] == 0 && t.core_cpu[1] == 2 && t.core_cpu[2] == 1 && t.core_cpu[3] == 3,
              "core_cpu %d %d %d %d, expected 0 2 1 3", t.core_cpu[0], t.core_cpu[1],
              t.core_cpu[2], t.core_cpu[3]);
        CHECK(t.n_caches == 4, "%d caches, expected 4 (the Unknown one skipped)", t.n_caches);
        check_cache(&t, 0, 1, 'd', 48 << 10, 64, 12, 4, 1);
        check_cache(&t, 1, 1, 'i', 32 << 10, 64, -1, 4, 1);   /* one set: fully associative */
        check_cache(&t, 2, 2, 'u', 2 << 20, 64, 16, 4, 1);
        check_cache(&t, 3, 3, 'u', 32 << 20, 64, 16, 2, 2);
    }

    t_case("topology: fake sysfs without topology, cache and node directories");
    r = ab_topology_load_sysfs(&t, c, all, sz, err, sizeof err);
    CHECK(r == 0, "failed: %s", err);
    if (r == 0)
        CHECK(t.cores == 2 && t.pus == 2 && t.packages == 1 && t.numa_nodes == 1 &&
                  t.n_caches == 0 && t.core_cpu[0] == 0 && t.core_cpu[1] == 1,
              "cores %d pus %d packages %d nodes %d caches %d core_cpu %d %d", t.cores, t.pus,
              t.packages, t.numa_nodes, t.n_caches, t.core_cpu[0], t.core_cpu[1]);

    t_case("topology: unreadable or corrupt sysfs fails with a reason");
    strcpy(err, "");
    r = ab_topology_load_sysfs(&t, d, all, sz, err, sizeof err);
    CHECK(r == -1 && err[0] != '\0', "corrupt tree: returned %d, err \"%s\"", r, err);
    strcpy(err, "");
    r = ab_topology_load_sysfs(&t, "/nonexistent/ab_topology", all, sz, err, sizeof err);
    CHECK(r == -1 && err[0] != '\0', "missing tree: returned %d, err \"%s\"", r, err);
    r = ab_topology_load_sysfs(&t, "/nonexistent/ab_topology", all, sz, NULL, 0);
    CHECK(r == -1, "missing tree, no err buffer: returned %d", r);
    CHECK(ab_topology_load(NULL, err, sizeof err) == -1, "ab_topology_load(NULL) succeeded");

out:
    CPU_FREE(all);
    CPU_FREE(some);
    CPU_FREE(one);
    CPU_FREE(none);
    rm_tree(root);
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

void test_topology(void)
{
    ab_topology *t = malloc(sizeof *t);   /* 4 KiB of core_cpu: not on the stack */
    t_case("topology: allocation");
    CHECK(t != NULL, "out of memory");
    if (!t)
        return;
    test_real_machine(t);
    test_fake_trees();
    if (t->cores >= 1)
        test_binding(t);
    free(t);
}
