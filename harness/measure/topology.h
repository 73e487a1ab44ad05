/*
 * topology.h — cores and caches of this machine, and pinning threads to cores.
 *
 * From hwloc when the harness is built with it (ATTN_HAVE_HWLOC); else, or
 * when hwloc cannot load this machine, from a small fallback
 * (sched_getaffinity and the library's cache sizes) that says so in source.
 * The source used is always reported, so a figure can be traced to where it
 * came from.
 */
#ifndef AB_TOPOLOGY_H
#define AB_TOPOLOGY_H

#include <stddef.h>

#define AB_MAX_CACHES 8
#define AB_MAX_CORES 1024

typedef struct ab_cache {
    int level;          /* 1, 2, 3, ... */
    char type;          /* 'd' data, 'i' instruction, 'u' unified */
    size_t size;        /* bytes, one instance */
    int line;           /* line size in bytes, 0 if unknown */
    int ways;           /* associativity, 0 if unknown, -1 fully associative */
    int instances;      /* how many of this cache the machine has, 0 if unknown */
    int cores_sharing;  /* physical cores sharing one instance, 0 if unknown */
} ab_cache;

/* cores, pus and core_cpu cover only the CPUs the calling thread may run on
 * (its affinity mask: a load after ab_bind_cores sees the bound cores only).
 * packages, numa_nodes and the caches' instances / cores_sharing describe the
 * whole machine; 0 means unknown (the fallback). Cache sizes are those of the
 * first allowed core (they differ only on hybrid CPUs). */
typedef struct ab_topology {
    /* "hwloc 2.9.0" ("hwloc 2.9.0+library caches" when hwloc saw no cache),
     * or "fallback: sched_getaffinity, no hwloc" (", hwloc failed" in a
     * build with hwloc that could not load this machine). */
    char source[64];
    int packages;       /* sockets */
    int numa_nodes;
    int cores;          /* physical cores, at most AB_MAX_CORES */
    int pus;            /* hardware threads (logical CPUs), not capped */
    int n_caches;       /* ordered by level, then d, i, u */
    ab_cache caches[AB_MAX_CACHES];
    /* OS index (as used by sched_setaffinity) of the lowest allowed hardware
     * thread of each physical core, in topology order: core_cpu[0 .. cores-1]. */
    int core_cpu[AB_MAX_CORES];
} ab_topology;

/* Fills t. Returns 0 on success; on failure -1 with a one-line reason in err.
 * Never prints. Cheap enough to call once per command. */
int ab_topology_load(ab_topology *t, char *err, size_t err_len);

/* Size in bytes of one instance of the data or unified cache at level
 * (1, 2, 3), or 0 when there is none / it is unknown. */
size_t ab_topology_cache_size(const ab_topology *t, int level);

/* Bytes that the data and unified caches of every level can hold at once
 * for a run on n_threads cores: each level's size times the instances those
 * cores can reach (at most one per thread, at most the machine's). Where
 * hwloc gave no instance count, levels 1-2 count as private to a core and
 * deeper levels as one shared instance. An upper bound: a working set read
 * again and again that is not larger than this may be served by the caches,
 * and one that is larger still may be in part, since replacement policies
 * that resist thrashing (AMD's L3) keep some of a cyclic stream resident. */
size_t ab_topology_cache_capacity(const ab_topology *t, int n_threads);

/* Restricts the calling thread (and so every thread it creates afterwards)
 * to the first n physical cores, one hardware thread each. With n <= 0 or
 * n > cores, uses all cores. Returns the number of cores bound, or -1 with a
 * reason in err. Uses hwloc_set_cpubind when built with hwloc, else
 * sched_setaffinity. */
int ab_bind_cores(const ab_topology *t, int n, char *err, size_t err_len);

/* Pins the calling thread to one core: core_cpu[core]. 0 on success, -1
 * with a reason in err. */
int ab_pin_to_core(const ab_topology *t, int core, char *err, size_t err_len);
/* Pins the calling thread where the kernels' OpenMP team counts it: with a
 * bound runtime, on the runtime's first place (a user's places may start
 * elsewhere than the topology's first core); else on core 0. 0, or -1 with
 * a reason in err. */
int ab_pin_main_thread(const ab_topology *t, char *err, size_t err_len);

/* OMP_PLACES for one thread per core in the topology's order (the order of
 * core_cpu, one package and one last-level cache before the next): one
 * place per core the calling thread may use, "{0,64},{1,65},...", each with
 * that core's allowed hardware threads. OMP_PLACES=cores has the same places
 * in libgomp's order, by CPU number, which splits packages and L3s where
 * the OS numbers them alternately. Returns the number of places, or -1 with
 * a reason in err (no hwloc, hwloc cannot load this machine, buf too small:
 * then buf is ""). Never prints. */
int ab_omp_places(char *buf, size_t len, char *err, size_t err_len);

/* ---- For the tests: the two ways ab_topology_load fills t ---- */

/* The fallback: the CPUs of the calling thread's affinity mask, a core's
 * hardware threads counted once as sysfs's sibling lists say (core_cpu: its
 * lowest CPU; every CPU a core where sysfs says nothing), packages and NUMA
 * nodes unknown (0), caches from attn_cpu_cache_size. _in reads the sibling
 * lists under cpu_dir (a fake tree, for the tests) instead of
 * /sys/devices/system/cpu. */
int ab_topology_load_fallback(ab_topology *t, char *err, size_t err_len);
int ab_topology_load_fallback_in(ab_topology *t, const char *cpu_dir, char *err, size_t err_len);

#ifdef ATTN_HAVE_HWLOC
struct hwloc_topology;   /* hwloc_topology_t */
struct hwloc_bitmap_s;   /* hwloc_const_cpuset_t */
/* Fills t from an already loaded hwloc topology (e.g. a synthetic or XML
 * one), as ab_topology_load does from this machine's. allowed: the PUs (OS
 * indexes) the caller may use; NULL: the topology's allowed cpuset narrowed
 * to the calling thread's binding. Does not supplement missing caches. */
int ab_topology_from_hwloc(ab_topology *t, struct hwloc_topology *topo,
                           const struct hwloc_bitmap_s *allowed, char *err, size_t err_len);
/* ab_omp_places from an already loaded topology; allowed as above. */
int ab_omp_places_from_hwloc(struct hwloc_topology *topo, const struct hwloc_bitmap_s *allowed,
                             char *buf, size_t len, char *err, size_t err_len);
#endif

#endif /* AB_TOPOLOGY_H */
