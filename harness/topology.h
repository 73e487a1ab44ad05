/*
 * topology.h — cores and caches of this machine, and pinning threads to cores.
 *
 * From hwloc when the harness is built with it (ATTN_HAVE_HWLOC), else from
 * Linux sysfs (/sys/devices/system/cpu) with sysconf as the last resort. The
 * source used is always reported, so a figure can be traced to where it came
 * from.
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
    int instances;      /* how many of this cache the machine has */
    int cores_sharing;  /* physical cores sharing one instance, 0 if unknown */
} ab_cache;

/* cores, pus and core_cpu cover only the CPUs the calling thread may run on
 * (its affinity mask: a load after ab_bind_cores sees the bound cores only).
 * packages, numa_nodes and the caches' instances / cores_sharing describe the
 * whole machine; 0 means unknown (the sysconf fallback). Cache sizes are
 * those of the first allowed core (they differ only on hybrid CPUs). */
typedef struct ab_topology {
    char source[64];    /* "hwloc 2.9.0", "sysfs" or "sysconf" (+sysconf: caches from sysconf) */
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

/* Restricts the calling thread (and so every thread it creates afterwards)
 * to the first n physical cores, one hardware thread each. With n <= 0 or
 * n > cores, uses all cores. Returns the number of cores bound, or -1 with a
 * reason in err. Uses hwloc_set_cpubind when built with hwloc, else
 * sched_setaffinity. */
int ab_bind_cores(const ab_topology *t, int n, char *err, size_t err_len);

/* Pins the calling thread to one core: core_cpu[core]. 0 on success, -1
 * with a reason in err. */
int ab_pin_to_core(const ab_topology *t, int core, char *err, size_t err_len);

/* ---- The loaders ab_topology_load chooses from, exposed for the tests ---- */

#include <sched.h>

/* sysfs_root plays the part of /sys (NULL: "/sys"); allowed / allowed_size
 * (bytes, as CPU_ALLOC_SIZE) is the set of usable CPUs (NULL: the calling
 * thread's affinity mask). */
int ab_topology_load_sysfs(ab_topology *t, const char *sysfs_root, const cpu_set_t *allowed,
                           size_t allowed_size, char *err, size_t err_len);
int ab_topology_load_sysconf(ab_topology *t, char *err, size_t err_len);
#ifdef ATTN_HAVE_HWLOC
int ab_topology_load_hwloc(ab_topology *t, char *err, size_t err_len);
#endif

#endif /* AB_TOPOLOGY_H */
