/*
 * topology.c — cores and caches of this machine, and pinning threads to cores.
 *
 * With hwloc (ATTN_HAVE_HWLOC), hwloc owns the topology: every figure is read
 * from hwloc's objects — packages and NUMA nodes (object counts), cores and
 * their PUs in hwloc's logical order (the order threads are pinned in), the
 * caches with size, line, associativity, instance count and the cores under
 * each — and binding goes through hwloc_set_cpubind. Nothing is parsed here:
 * hwloc reads sysfs, cpuid or the device tree as the platform needs.
 *
 * Without hwloc (HWLOC=0), or when hwloc cannot load this machine (a library
 * of another major version, a sandbox that hides /sys), a deliberately small
 * fallback that claims nothing it does not know: sched_getaffinity gives the
 * CPUs this thread may use, and sysfs's thread_siblings_list which of them
 * share a core (each CPU a core where it says nothing; the library's own
 * count, attn_cpu_core_firsts); the caches are the library's sizes (attn_cpu_cache_size:
 * sysfs, else sysconf, else typical sizes) with line, ways, instances and
 * sharing unknown (0); packages and NUMA nodes are unknown (0). Its source
 * reads "fallback: sched_getaffinity, ...", and binding uses
 * sched_setaffinity.
 *
 * What the figures mean (hwloc):
 *   - cores / pus / core_cpu: what the calling thread may run on, i.e. its
 *     binding (taskset, numactl, an earlier ab_bind_cores) within what cgroup
 *     cpusets allow;
 *   - packages, numa_nodes and the caches' instances / cores_sharing: the
 *     whole machine, disallowed PUs included, so that e.g. the share of an L3
 *     a core can count on does not depend on how the process was started;
 *   - cache sizes: those seen from the lowest-numbered allowed CPU. They only
 *     differ between cores on hybrid CPUs (P/E cores), where that CPU is
 *     usually a performance core.
 *
 * Library code: it never prints and never aborts; every failure is a -1 with
 * a one-line reason in the caller's buffer. There is no global state, so
 * every function may be called from any thread.
 */
#include "topology.h"

#include <errno.h>
#include <limits.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"   /* attn_cpu_cache_size: the fallback's caches */
#include "text.h"

#ifdef ATTN_HAVE_HWLOC
#include <hwloc.h>
#endif

/* The library's cache sizes (the kernels size their tiles with them): L1
 * data, L2 and L3 taken for unified, as on every CPU the library runs on.
 * Line, ways, instances and sharing stay unknown (0). */
static void library_caches(ab_topology *t)
{
    t->n_caches = 0;
    for (int level = 1; level <= 3; level++) {
        size_t size = attn_cpu_cache_size(level);
        if (size > 0)
            t->caches[t->n_caches++] =
                (ab_cache){ .level = level, .type = level == 1 ? 'd' : 'u', .size = size };
    }
}

/* ---- hwloc ----------------------------------------------------------------------------- */

#ifdef ATTN_HAVE_HWLOC

/* Flags newer than hwloc 2.0, used when the headers have them: never move
 * this thread during discovery (a pinned worker may be asking), and skip
 * what we do not read. */
#if HWLOC_API_VERSION >= 0x00020800
#define AB_HWLOC_NEW_FLAGS \
    (HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING | HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | \
     HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS | HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS)
#else
#define AB_HWLOC_NEW_FLAGS 0ul
#endif

/* Whether hwloc may look at this machine at all. Two reasons not to:
 *   - hwloc promises ABI compatibility only within a major API version;
 *   - when sysfs has no CPU topology (containers and build sandboxes that
 *     hide /sys), hwloc 2.9+ prints "failed to find sysfs cpu topology
 *     directory" on stderr, and a library must not print. hwloc decides by
 *     looking for these two files of cpu0 (checked with hwloc 2.9.0 by
 *     hiding cpu0's topology directory, or all of /sys), so the same test
 *     keeps it quiet; the fallback then takes over. */
static int hwloc_usable(char *err, size_t err_len)
{
    unsigned run = hwloc_get_api_version();
    if ((run >> 16) != (HWLOC_API_VERSION >> 16)) {
        ab_putf(err, err_len, "hwloc library API %#x does not match the headers' %#x", run,
                (unsigned)HWLOC_API_VERSION);
        return 0;
    }
    if (access("/sys/devices/system/cpu/cpu0/topology/package_cpus", R_OK) != 0 &&
        access("/sys/devices/system/cpu/cpu0/topology/core_siblings", R_OK) != 0) {
        ab_putf(err, err_len, "no CPU topology in /sys (hwloc would complain on stderr)");
        return 0;
    }
    return 1;
}

/* This machine's topology. minimal: for binding, which needs the PUs only
 * (hwloc keeps Machine, PU and NUMA nodes whatever the filter). Even so a
 * load costs a few ms, most of it hwloc opening its plugins again once no
 * other topology exists. */
static int hwloc_open(hwloc_topology_t *topo, int minimal, char *err, size_t err_len)
{
    if (!hwloc_usable(err, err_len))
        return -1;
    if (hwloc_topology_init(topo) != 0) {
        ab_putf(err, err_len, "hwloc_topology_init: %s", strerror(errno));
        return -1;
    }
    /* INCLUDE_DISALLOWED: the whole machine, so that cache instances and
     * sharing do not depend on the cgroup. A library older than the headers
     * rejects the newer flags: then the 2.0 ones alone. */
    unsigned long flags = minimal ? 0ul : HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
    if (hwloc_topology_set_flags(*topo, flags | AB_HWLOC_NEW_FLAGS) != 0)
        hwloc_topology_set_flags(*topo, flags);
    if (minimal) {
        hwloc_topology_set_all_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    } else {
        /* Instruction caches are filtered out by default; `attnbench info`
         * lists them. I/O devices are never needed. */
        hwloc_topology_set_icache_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_ALL);
        hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    if (hwloc_topology_load(*topo) != 0) {
        ab_putf(err, err_len, "hwloc_topology_load: %s", strerror(errno));
        hwloc_topology_destroy(*topo);
        return -1;
    }
    return 0;
}

/* The cache levels in the order they are listed: by level, then d, i, u (an
 * L1 or L2 that is unified has no instruction sibling). */
static const hwloc_obj_type_t cache_types[] = {
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
    HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE,
};
#define AB_CACHE_TYPES ((int)(sizeof cache_types / sizeof cache_types[0]))
_Static_assert(sizeof cache_types / sizeof cache_types[0] <= AB_MAX_CACHES, "caches[] too small");

/* The core of a PU: its Core ancestor, else (platforms where hwloc finds no
 * core level, or a CPU whose sysfs topology directory is missing) the PU
 * itself, so that no usable PU is left out. */
static hwloc_obj_t core_of(hwloc_topology_t topo, hwloc_obj_t pu)
{
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    return core ? core : pu;
}

/* Cores (as core_of counts them) with a PU in set. tmp: scratch. */
static int count_cores(hwloc_topology_t topo, hwloc_const_cpuset_t set, hwloc_bitmap_t tmp)
{
    int n = 0;
    hwloc_bitmap_copy(tmp, set);
    for (int cpu = hwloc_bitmap_first(tmp); cpu >= 0; cpu = hwloc_bitmap_first(tmp)) {
        hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)cpu);
        if (pu)
            hwloc_bitmap_andnot(tmp, tmp, core_of(topo, pu)->cpuset);
        hwloc_bitmap_clr(tmp, (unsigned)cpu);
        n++;
    }
    return n;
}

/* The PUs this process may use into allowed: given, else what cgroups
 * allow narrowed to this thread's binding; within the topology either way.
 * tmp is scratch. */
static void allowed_pus(hwloc_topology_t topo, hwloc_const_cpuset_t given, hwloc_bitmap_t allowed,
                        hwloc_bitmap_t tmp)
{
    if (given) {
        hwloc_bitmap_copy(allowed, given);
    } else {
        hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
        if (hwloc_get_cpubind(topo, tmp, HWLOC_CPUBIND_THREAD) == 0)
            hwloc_bitmap_and(allowed, allowed, tmp);
    }
    hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_topology_cpuset(topo));
}

static int hwloc_fill(hwloc_topology_t topo, ab_topology *t, hwloc_const_cpuset_t given,
                      hwloc_bitmap_t allowed, hwloc_bitmap_t tmp, char *err, size_t err_len)
{
    allowed_pus(topo, given, allowed, tmp);
    int ref = hwloc_bitmap_first(allowed);
    if (ref < 0) {
        ab_putf(err, err_len, "none of hwloc's PUs is in this thread's affinity mask");
        return -1;
    }
    t->pus = hwloc_bitmap_weight(allowed);
    int npk = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t->packages = npk > 0 ? npk : 1;   /* some platforms report no package */
    int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t->numa_nodes = nnuma > 0 ? nnuma : 1;

    /* Cores in hwloc's logical order: siblings sorted by their first PU, so
     * "the first n cores" fill one package and one L3 before the next,
     * whatever the OS numbering (Intel numbers the second thread of every
     * core after all first threads; some BIOSes alternate packages). A core
     * enters at its lowest allowed PU. */
    for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, NULL);
         pu && t->cores < AB_MAX_CORES; pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) {
        hwloc_bitmap_and(tmp, core_of(topo, pu)->cpuset, allowed);
        if (hwloc_bitmap_first(tmp) == (int)pu->os_index)
            t->core_cpu[t->cores++] = (int)pu->os_index;
    }

    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)ref);
    for (int i = 0; i < AB_CACHE_TYPES; i++) {
        int inst = hwloc_get_nbobjs_by_type(topo, cache_types[i]);
        if (inst <= 0)
            continue;
        hwloc_obj_t o = pu ? hwloc_get_ancestor_obj_by_type(topo, cache_types[i], pu) : NULL;
        if (!o)   /* the reference CPU has none of this level: any instance */
            o = hwloc_get_obj_by_type(topo, cache_types[i], 0);
        if (!o || !o->attr)
            continue;
        const struct hwloc_cache_attr_s *a = &o->attr->cache;
        t->caches[t->n_caches++] = (ab_cache){
            .level = (int)a->depth,
            .type = a->type == HWLOC_OBJ_CACHE_DATA ? 'd'
                    : a->type == HWLOC_OBJ_CACHE_INSTRUCTION ? 'i' : 'u',
            .size = (size_t)a->size,
            .line = a->linesize <= INT_MAX ? (int)a->linesize : 0,
            .ways = a->associativity,   /* hwloc's -1 is fully associative too */
            .instances = inst,
            .cores_sharing = count_cores(topo, o->cpuset, tmp),
        };
    }

    /* The version of the library that ran, not of the headers. */
    const char *ver = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "hwlocVersion");
    if (ver)
        snprintf(t->source, sizeof t->source, "hwloc %s", ver);
    else
        snprintf(t->source, sizeof t->source, "hwloc %u.%u", hwloc_get_api_version() >> 16,
                 (hwloc_get_api_version() >> 8) & 0xffu);
    return 0;
}

int ab_topology_from_hwloc(ab_topology *t, struct hwloc_topology *topo,
                           const struct hwloc_bitmap_s *allowed, char *err, size_t err_len)
{
    if (!t || !topo) {
        ab_putf(err, err_len, "no topology to fill or to read");
        return -1;
    }
    memset(t, 0, sizeof *t);
    ab_putf(err, err_len, "%s", "");
    hwloc_bitmap_t mine = hwloc_bitmap_alloc(), tmp = hwloc_bitmap_alloc();
    int r = -1;
    if (!mine || !tmp)
        ab_putf(err, err_len, "out of memory");
    else
        r = hwloc_fill(topo, t, allowed, mine, tmp, err, err_len);
    hwloc_bitmap_free(mine);
    hwloc_bitmap_free(tmp);
    if (r != 0)
        memset(t, 0, sizeof *t);   /* no half-filled answer */
    return r;
}

/* Appends "{a,b}" (a place: the allowed PUs of one core) to buf at *used. */
static int put_place(char *buf, size_t len, size_t *used, hwloc_const_cpuset_t pus)
{
    int first = 1;
    for (int cpu = hwloc_bitmap_first(pus); cpu >= 0; cpu = hwloc_bitmap_next(pus, cpu)) {
        int w = snprintf(buf + *used, len - *used, "%s%s%d", first && *used ? "," : "",
                         first ? "{" : ",", cpu);
        if (w < 0 || (size_t)w >= len - *used)
            return -1;
        *used += (size_t)w;
        first = 0;
    }
    int w = snprintf(buf + *used, len - *used, "}");
    if (w < 0 || (size_t)w >= len - *used)
        return -1;
    *used += (size_t)w;
    return 0;
}

int ab_omp_places_from_hwloc(struct hwloc_topology *topo, const struct hwloc_bitmap_s *given,
                             char *buf, size_t len, char *err, size_t err_len)
{
    if (!topo || !buf || len == 0) {
        ab_putf(err, err_len, "no topology to read or no room for the places");
        return -1;
    }
    buf[0] = '\0';
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), tmp = hwloc_bitmap_alloc();
    int r = -1, n = 0;
    size_t used = 0;
    if (!allowed || !tmp) {
        ab_putf(err, err_len, "out of memory");
        goto done;
    }
    allowed_pus(topo, given, allowed, tmp);
    /* The cores in the order hwloc_fill lists them (core_cpu), each with
     * all its allowed PUs, as OMP_PLACES=cores has them: only the order
     * differs, libgomp's being by CPU number. */
    for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, NULL);
         pu && n < AB_MAX_CORES; pu = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, pu)) {
        hwloc_bitmap_and(tmp, core_of(topo, pu)->cpuset, allowed);
        if (hwloc_bitmap_first(tmp) != (int)pu->os_index)
            continue;
        if (put_place(buf, len, &used, tmp) != 0) {
            ab_putf(err, err_len, "the places of %d cores and more do not fit in %zu bytes", n + 1,
                    len);
            buf[0] = '\0';
            goto done;
        }
        n++;
    }
    if (n == 0)
        ab_putf(err, err_len, "none of hwloc's PUs is in this thread's affinity mask");
    else
        r = n;
done:
    hwloc_bitmap_free(allowed);
    hwloc_bitmap_free(tmp);
    return r;
}

#endif /* ATTN_HAVE_HWLOC */

/* ---- the fallback ------------------------------------------------------------------------ */

int ab_topology_load_fallback_in(ab_topology *t, const char *cpu_dir, char *err, size_t err_len)
{
    if (!t || !cpu_dir) {
        ab_putf(err, err_len, "no topology to fill");
        return -1;
    }
    int *cpus, pus = attn_cpu_affinity_cpus(&cpus);
    if (pus < 0) {
        ab_putf(err, err_len, "sched_getaffinity: %s", strerror(errno));
        return -1;
    }
    int *firsts = malloc((size_t)(pus > 0 ? pus : 1) * sizeof *firsts);
    if (!firsts) {
        ab_putf(err, err_len, "out of memory");
        free(cpus);
        return -1;
    }
    /* A core's hardware threads counted once, by sysfs's sibling lists
     * (what the library's own default team counts): with SMT, one thread
     * per hardware thread would put two on a core's FMA units while other
     * cores idle. Where sysfs says nothing, every CPU is taken for a core. */
    int cores = attn_cpu_core_firsts(cpus, pus, cpu_dir, firsts);
    memset(t, 0, sizeof *t);
    ab_putf(err, err_len, "%s", "");
    t->pus = pus;
    t->cores = cores < AB_MAX_CORES ? cores : AB_MAX_CORES;
    memcpy(t->core_cpu, firsts, (size_t)t->cores * sizeof *firsts);
    free(firsts);
    free(cpus);
    library_caches(t);
#ifdef ATTN_HAVE_HWLOC
    snprintf(t->source, sizeof t->source, "fallback: sched_getaffinity, hwloc failed");
#else
    snprintf(t->source, sizeof t->source, "fallback: sched_getaffinity, no hwloc");
#endif
    return 0;
}

int ab_topology_load_fallback(ab_topology *t, char *err, size_t err_len)
{
    return ab_topology_load_fallback_in(t, "/sys/devices/system/cpu", err, err_len);
}

/* ---- the interface ----------------------------------------------------------------------- */

int ab_topology_load(ab_topology *t, char *err, size_t err_len)
{
    if (!t) {
        ab_putf(err, err_len, "no topology to fill");
        return -1;
    }
#ifdef ATTN_HAVE_HWLOC
    hwloc_topology_t topo;
    char why[160];
    int r = hwloc_open(&topo, 0, why, sizeof why);
    if (r == 0) {
        r = ab_topology_from_hwloc(t, topo, NULL, why, sizeof why);
        hwloc_topology_destroy(topo);
    }
    if (r == 0) {
        /* A VM or board whose caches hwloc cannot see: the library's sizes,
         * and the source says so. */
        if (t->n_caches == 0) {
            library_caches(t);
            size_t len = strlen(t->source);
            snprintf(t->source + len, sizeof t->source - len, "+library caches");
        }
        ab_putf(err, err_len, "%s", "");
        return 0;
    }
#endif
    return ab_topology_load_fallback(t, err, err_len);
}

int ab_omp_places(char *buf, size_t len, char *err, size_t err_len)
{
    if (buf && len)
        buf[0] = '\0';
    ab_putf(err, err_len, "%s", "");
#ifdef ATTN_HAVE_HWLOC
    hwloc_topology_t topo;
    /* Cores are needed, caches are not. */
    if (hwloc_usable(err, err_len) && hwloc_topology_init(&topo) == 0) {
        hwloc_topology_set_flags(topo, AB_HWLOC_NEW_FLAGS);
        hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PACKAGE, HWLOC_TYPE_FILTER_KEEP_ALL);
        int r = -1;
        if (hwloc_topology_load(topo) != 0)
            ab_putf(err, err_len, "hwloc_topology_load: %s", strerror(errno));
        else if (!hwloc_topology_is_thissystem(topo))
            /* HWLOC_SYNTHETIC or HWLOC_XMLFILE set: another machine's CPUs. */
            ab_putf(err, err_len, "hwloc's topology is not this machine's");
        else
            r = ab_omp_places_from_hwloc(topo, NULL, buf, len, err, err_len);
        hwloc_topology_destroy(topo);
        return r;
    }
    if (err && err_len && !err[0])
        ab_putf(err, err_len, "hwloc_topology_init: %s", strerror(errno));
    return -1;
#else
    ab_putf(err, err_len, "built without hwloc: which CPUs share a core is not known here");
    return -1;
#endif
}

size_t ab_topology_cache_size(const ab_topology *t, int level)
{
    if (!t)
        return 0;
    int n = t->n_caches < AB_MAX_CACHES ? t->n_caches : AB_MAX_CACHES;
    for (int i = 0; i < n; i++)   /* data sorts before unified: it wins at L1 */
        if (t->caches[i].level == level && (t->caches[i].type == 'd' || t->caches[i].type == 'u'))
            return t->caches[i].size;
    return 0;
}

size_t ab_topology_cache_capacity(const ab_topology *t, int n_threads)
{
    if (!t)
        return 0;
    int threads = n_threads > 1 ? n_threads : 1;
    int n = t->n_caches < AB_MAX_CACHES ? t->n_caches : AB_MAX_CACHES;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        const ab_cache *c = &t->caches[i];
        if (c->type != 'd' && c->type != 'u')
            continue;
        int reach = c->instances > 0 ? (c->instances < threads ? c->instances : threads)
                    : c->level <= 2 ? threads : 1;
        total += c->size * (size_t)reach;
    }
    return total;
}

/* Binds the calling thread to the given CPUs: with hwloc_set_cpubind when
 * hwloc can load this machine, else sched_setaffinity (the same system call
 * underneath). THREAD / pid 0: this thread only, so that other threads keep
 * their own binding; threads it creates later inherit it. hwloc's topology
 * is loaded per call rather than kept: no global state to share between
 * threads or to leak at exit. */
static int bind_cpus(const int *cpus, int n, char *err, size_t err_len)
{
    int max = -1;
    for (int i = 0; i < n; i++) {
        if (cpus[i] < 0 || cpus[i] >= ATTN_CPU_LIMIT) {
            ab_putf(err, err_len, "invalid CPU number %d in the topology", cpus[i]);
            return -1;
        }
        max = cpus[i] > max ? cpus[i] : max;
    }
#ifdef ATTN_HAVE_HWLOC
    hwloc_topology_t topo;
    char why[160];
    if (hwloc_open(&topo, 1, why, sizeof why) == 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int r = -1, e = ENOMEM;
        for (int i = 0; set && i < n; i++)
            hwloc_bitmap_set(set, (unsigned)cpus[i]);
        if (set) {
            r = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
            e = errno;
        }
        hwloc_bitmap_free(set);
        hwloc_topology_destroy(topo);
        if (r != 0)
            ab_putf(err, err_len, "hwloc_set_cpubind to CPU %d%s: %s", cpus[0],
                    n > 1 ? " and others" : "", strerror(e));
        return r == 0 ? 0 : -1;
    }
#endif
    cpu_set_t *set = CPU_ALLOC((size_t)max + 1);
    if (!set) {
        ab_putf(err, err_len, "out of memory");
        return -1;
    }
    size_t size = CPU_ALLOC_SIZE((size_t)max + 1);
    CPU_ZERO_S(size, set);
    for (int i = 0; i < n; i++)
        CPU_SET_S((size_t)cpus[i], size, set);
    int r = sched_setaffinity(0, size, set);
    int e = errno;
    CPU_FREE(set);
    if (r != 0)
        ab_putf(err, err_len, "sched_setaffinity to CPU %d%s: %s", cpus[0],
                n > 1 ? " and others" : "", strerror(e));
    return r == 0 ? 0 : -1;
}

int ab_bind_cores(const ab_topology *t, int n, char *err, size_t err_len)
{
    if (!t || t->cores <= 0 || t->cores > AB_MAX_CORES) {
        ab_putf(err, err_len, "no cores in the topology");
        return -1;
    }
    if (n <= 0 || n > t->cores)
        n = t->cores;
    if (bind_cpus(t->core_cpu, n, err, err_len) != 0)
        return -1;
    ab_putf(err, err_len, "%s", "");
    return n;
}

int ab_pin_main_thread(const ab_topology *t, char *err, size_t err_len)
{
    /* A bound runtime counts this thread (OpenMP thread 0) at its first
     * place and puts thread i at place i: pinned anywhere else, it would
     * sit on another thread's place, as under a user's GOMP_CPU_AFFINITY=1,0
     * (both threads on CPU 0, CPU 1 idle: 2.8 -> 8 ms a call). attnbench's
     * own places start at the topology's first core, as core 0 does. */
    int n = omp_get_proc_bind() != omp_proc_bind_false && omp_get_num_places() > 0
                ? omp_get_place_num_procs(0) : 0;
    if (n > 0 && n <= AB_MAX_CORES) {
        int cpus[AB_MAX_CORES];
        omp_get_place_proc_ids(0, cpus);
        if (bind_cpus(cpus, n, err, err_len) != 0)
            return -1;
        ab_putf(err, err_len, "%s", "");
        return 0;
    }
    return ab_pin_to_core(t, 0, err, err_len);
}

int ab_pin_to_core(const ab_topology *t, int core, char *err, size_t err_len)
{
    if (!t || t->cores <= 0 || t->cores > AB_MAX_CORES) {
        ab_putf(err, err_len, "no cores in the topology");
        return -1;
    }
    if (core < 0 || core >= t->cores) {
        ab_putf(err, err_len, "core %d out of range: %d core%s (0..%d)", core, t->cores,
                t->cores == 1 ? "" : "s", t->cores - 1);
        return -1;
    }
    if (bind_cpus(&t->core_cpu[core], 1, err, err_len) != 0)
        return -1;
    ab_putf(err, err_len, "%s", "");
    return 0;
}
