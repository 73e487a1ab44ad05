/*
 * topology.c — cores and caches of this machine, and pinning threads to cores.
 *
 * Three loaders, tried in order by ab_topology_load():
 *   1. hwloc 2.x (only when built with ATTN_HAVE_HWLOC);
 *   2. Linux sysfs (/sys/devices/system/cpu and /sys/devices/system/node),
 *      always compiled so that it can be tested against a fake tree even in
 *      the hwloc build;
 *   3. sysconf(), which knows the number of CPUs and (with glibc) the cache
 *      sizes, but nothing about how hardware threads form cores.
 *
 * What the figures mean, whichever loader produced them:
 *   - cores / pus / core_cpu describe what the calling thread may run on: its
 *     affinity mask (inherited from taskset, numactl, cgroup cpusets, or an
 *     earlier ab_bind_cores) intersected with the online CPUs;
 *   - packages, numa_nodes and the caches' instances / cores_sharing
 *     describe the whole machine (all online CPUs), so that e.g. the share of
 *     an L3 a core can count on does not depend on how the process was
 *     started;
 *   - cache sizes are those seen from the lowest-numbered allowed CPU. They
 *     only differ between cores on hybrid CPUs (P/E cores), where that CPU
 *     is usually a performance core.
 *
 * Library code: it never prints and never aborts; every failure is a -1 with
 * a one-line reason in the caller's buffer. There is no global state, so
 * every function may be called from any thread.
 */
#include "topology.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef ATTN_HAVE_HWLOC
#include <hwloc.h>
#endif


/* Highest CPU number accepted from sysfs. Linux allows at most 8192
 * (NR_CPUS with MAXSMP); anything far beyond is a corrupt file, not a CPU. */
#define AB_CPU_LIMIT 65536
/* Cache descriptions (indexN) read per CPU; real machines have 4 or 5. */
#define AB_RAW_CACHES 32
/* Longest sysfs file read: a shared_cpu_list of thousands of CPUs that share
 * nothing contiguous ("0,2,4,...") stays well below this. */
#define AB_READ_MAX 65536

/* ---- small helpers ------------------------------------------------------------------ */

static void set_err(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
    if (!err || err_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
}

/* Rank of a cache type in the order the caches are listed: d, i, u. */
static int type_rank(char type)
{
    return type == 'd' ? 0 : type == 'i' ? 1 : 2;
}

static int cache_before(const ab_cache *a, const ab_cache *b)
{
    if (a->level != b->level)
        return a->level < b->level;
    return type_rank(a->type) < type_rank(b->type);
}

/* Insertion sort: at most a few dozen entries, and stable, so that of two
 * descriptions of the same cache the first one read wins. */
static void sort_caches(ab_cache *c, int n)
{
    for (int i = 1; i < n; i++) {
        ab_cache x = c[i];
        int j = i;
        while (j > 0 && cache_before(&x, &c[j - 1])) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = x;
    }
}

/* Sorts caches[0..n) into t, dropping duplicate (level, type) pairs and
 * whatever does not fit in AB_MAX_CACHES (the highest levels go first: the
 * ones a kernel's blocking depends on are L1 and L2). */
static void store_caches(ab_topology *t, ab_cache *caches, int n)
{
    sort_caches(caches, n);
    t->n_caches = 0;
    for (int i = 0; i < n && t->n_caches < AB_MAX_CACHES; i++) {
        if (t->n_caches > 0) {
            const ab_cache *prev = &t->caches[t->n_caches - 1];
            if (prev->level == caches[i].level && prev->type == caches[i].type)
                continue;
        }
        t->caches[t->n_caches++] = caches[i];
    }
}

/* The calling thread's affinity mask, in a set large enough for the kernel
 * (sched_getaffinity fails with EINVAL when the set is smaller than the
 * kernel's CPU count, which may exceed CPU_SETSIZE). Free with CPU_FREE. */
static cpu_set_t *get_affinity(size_t *size_out)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    int n = conf > CPU_SETSIZE ? (int)conf : CPU_SETSIZE;
    for (; n <= AB_CPU_LIMIT; n *= 2) {
        cpu_set_t *set = CPU_ALLOC((size_t)n);
        if (!set)
            return NULL;
        size_t size = CPU_ALLOC_SIZE((size_t)n);
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            *size_out = size;
            return set;
        }
        int e = errno;
        CPU_FREE(set);
        if (e != EINVAL)
            break;
    }
    return NULL;
}

/* ---- parsing ------------------------------------------------------------------------ */

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* A whole decimal integer in [lo, hi], surrounding white space allowed. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    s = skip_space(s);
    if (!isdigit((unsigned char)*s) && !(*s == '-' && isdigit((unsigned char)s[1])))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *skip_space(end) != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    long v;
    if (parse_long(s, lo, hi, &v) != 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* A cache size. The kernel writes "%uK" (KiB: "32K", "1024K", "32768K"), but
 * other sources and future kernels may use M, G, KB, KiB or a space before
 * the unit, so all of those are accepted; a bare number is bytes. */
static int parse_size(const char *s, size_t *out)
{
    s = skip_space(s);
    if (!isdigit((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    const char *u = skip_space(end);
    unsigned long long mult = 1;
    switch (toupper((unsigned char)*u)) {
    case '\0': break;
    case 'K': mult = 1ull << 10; u++; break;
    case 'M': mult = 1ull << 20; u++; break;
    case 'G': mult = 1ull << 30; u++; break;
    case 'B': break;   /* "512B" / "512 B": bytes, the B is checked below */
    default: return -1;
    }
    /* After the multiplier: nothing, "B" or "iB". */
    if (mult > 1 && (*u == 'i' || *u == 'I'))
        u++;
    if (*u == 'B' || *u == 'b')
        u++;
    if (*skip_space(u) != '\0')
        return -1;
    if (v > (unsigned long long)SIZE_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* A Linux CPU list ("0-3,8,10-11"; "" is the empty set). Sets the bits below
 * nbits in bits (may be NULL: only validates) and reports the highest CPU
 * named (-1 for none) in *max_out (may be NULL). Bits at or past nbits are
 * ignored rather than an error: a cache may be shared with CPUs that are not
 * online. */
static int parse_cpulist(const char *s, uint64_t *bits, int nbits, int *max_out)
{
    int max = -1;
    s = skip_space(s);
    while (*s) {
        long a, b;
        char *end;
        if (!isdigit((unsigned char)*s))
            return -1;
        errno = 0;
        a = strtol(s, &end, 10);
        if (errno != 0 || a > AB_CPU_LIMIT)
            return -1;
        s = end;
        b = a;
        if (*s == '-') {
            s++;
            if (!isdigit((unsigned char)*s))
                return -1;
            b = strtol(s, &end, 10);
            if (errno != 0 || b > AB_CPU_LIMIT || b < a)
                return -1;
            s = end;
        }
        if (bits)
            for (long i = a; i <= b && i < nbits; i++)
                bits[i / 64] |= 1ull << (i % 64);
        if (b > max)
            max = (int)b;
        s = skip_space(s);
        if (*s == ',')
            s = skip_space(s + 1);
        else if (*s)
            return -1;
    }
    if (max_out)
        *max_out = max;
    return 0;
}

/* ---- bitmaps -------------------------------------------------------------------------- */

static int bit_get(const uint64_t *b, int i)
{
    return (int)((b[i / 64] >> (i % 64)) & 1u);
}

static void bit_set(uint64_t *b, int i)
{
    b[i / 64] |= 1ull << (i % 64);
}

/* Lowest bit set in both a and b (b may be NULL: a alone), or -1. */
static int bit_first_and(const uint64_t *a, const uint64_t *b, size_t words)
{
    for (size_t w = 0; w < words; w++) {
        uint64_t x = a[w] & (b ? b[w] : ~0ull);
        if (x)
            return (int)(w * 64) + __builtin_ctzll(x);
    }
    return -1;
}

/* ---- the sysfs loader ------------------------------------------------------------------ */

/* What one cache/indexN directory says. */
typedef struct raw_cache {
    int level;
    char type;
    size_t size;
    int line, ways;
    int shared_first;   /* lowest online CPU sharing it; -1 if unknown */
    int sharing_cores;  /* cores (online) sharing it; 0 if unknown (only when asked) */
} raw_cache;

typedef struct sysfs_ctx {
    const char *root;
    char path[PATH_MAX];
    char *buf;           /* AB_READ_MAX bytes: the last file read */
    int ncpu;            /* the arrays below cover CPUs 0 .. ncpu-1 */
    size_t words;        /* 64-bit words of one bitmap */
    uint64_t *online, *allowed, *tmp, *mark;
    int *pkg_id, *die_id, *core_id;
    int *core_first;     /* lowest online CPU of the CPU's core */
    int *pkg_first;      /* lowest online CPU of the CPU's package */
    int *inst_first;     /* [cpu * AB_MAX_CACHES + e]: lowest CPU of its instance of cache e */
    char *err;
    size_t err_len;
} sysfs_ctx;

static int make_path(sysfs_ctx *c, const char *fmt, va_list ap)
{
    int n = snprintf(c->path, sizeof c->path, "%s/", c->root);
    if (n < 0 || (size_t)n >= sizeof c->path)
        return -1;
    int m = vsnprintf(c->path + n, sizeof c->path - (size_t)n, fmt, ap);
    if (m < 0 || (size_t)m >= sizeof c->path - (size_t)n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Reads root/<fmt...> into c->buf without its trailing white space (sysfs
 * files end in a newline). Returns the length, or -1 with errno set. */
static int read_text_v(sysfs_ctx *c, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static int read_text_v(sysfs_ctx *c, const char *fmt, va_list ap)
{
    if (make_path(c, fmt, ap) != 0)
        return -1;
    int fd = open(c->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    for (;;) {
        ssize_t got = read(fd, c->buf + len, AB_READ_MAX - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        len += (size_t)got;
        if (len == AB_READ_MAX - 1) {   /* longer than any sane sysfs file */
            close(fd);
            errno = EFBIG;
            return -1;
        }
    }
    close(fd);
    while (len > 0 && isspace((unsigned char)c->buf[len - 1]))
        len--;
    c->buf[len] = '\0';
    return (int)len;
}

static int read_text(sysfs_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int read_text(sysfs_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = read_text_v(c, fmt, ap);
    va_end(ap);
    return r;
}

/* An integer file in [lo, hi]: 0, or -1 when missing or malformed. */
static int read_int(sysfs_ctx *c, int lo, int hi, int *out, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int read_int(sysfs_ctx *c, int lo, int hi, int *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = read_text_v(c, fmt, ap);
    va_end(ap);
    if (r < 0)
        return -1;
    return parse_int(c->buf, lo, hi, out);
}

static DIR *open_dir(sysfs_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static DIR *open_dir(sysfs_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = make_path(c, fmt, ap);
    va_end(ap);
    return r == 0 ? opendir(c->path) : NULL;
}

/* "prefix<digits>" -> the number, else -1. */
static int numbered_name(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0 || !isdigit((unsigned char)name[n]))
        return -1;
    long v;
    for (const char *p = name + n; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    if (parse_long(name + n, 0, AB_CPU_LIMIT, &v) != 0)
        return -1;
    return (int)v;
}

/* The online CPUs, from cpu/online, else from the cpuN directories (a
 * directory without an "online" file is online: cpu0 often has none because
 * it cannot be unplugged). Allocates every per-CPU array. */
static int sysfs_online(sysfs_ctx *c)
{
    int max = -1;
    int from_list = read_text(c, "devices/system/cpu/online") >= 0 &&
                    parse_cpulist(c->buf, NULL, 0, &max) == 0 && max >= 0;
    DIR *d = NULL;
    if (!from_list) {
        d = open_dir(c, "devices/system/cpu");
        if (!d) {
            set_err(c->err, c->err_len, "cannot read %s: %s", c->path, strerror(errno));
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            int n = numbered_name(e->d_name, "cpu");
            if (n > max)
                max = n;
        }
        if (max < 0) {
            closedir(d);
            set_err(c->err, c->err_len, "no cpuN directory in %s/devices/system/cpu", c->root);
            return -1;
        }
    }
    c->ncpu = max + 1;
    c->words = ((size_t)c->ncpu + 63) / 64;
    size_t n = (size_t)c->ncpu;
    c->online = calloc(c->words, sizeof(uint64_t));
    c->allowed = calloc(c->words, sizeof(uint64_t));
    c->tmp = calloc(c->words, sizeof(uint64_t));
    c->mark = calloc(c->words, sizeof(uint64_t));
    c->pkg_id = calloc(n, sizeof(int));
    c->die_id = calloc(n, sizeof(int));
    c->core_id = calloc(n, sizeof(int));
    c->core_first = calloc(n, sizeof(int));
    c->pkg_first = calloc(n, sizeof(int));
    c->inst_first = calloc(n * AB_MAX_CACHES, sizeof(int));
    if (!c->online || !c->allowed || !c->tmp || !c->mark || !c->pkg_id || !c->die_id ||
        !c->core_id || !c->core_first || !c->pkg_first || !c->inst_first) {
        if (d)
            closedir(d);
        set_err(c->err, c->err_len, "out of memory for %d CPUs", c->ncpu);
        return -1;
    }
    if (from_list) {
        read_text(c, "devices/system/cpu/online");
        parse_cpulist(c->buf, c->online, c->ncpu, NULL);
        return 0;
    }
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int cpu = numbered_name(e->d_name, "cpu");
        int on;
        if (cpu < 0 || cpu >= c->ncpu)
            continue;
        if (read_int(c, 0, 1, &on, "devices/system/cpu/cpu%d/online", cpu) != 0)
            on = 1;   /* no file (or an odd one): cannot be offlined */
        if (on)
            bit_set(c->online, cpu);
    }
    closedir(d);
    return 0;
}

/* Groups CPUs into cores and packages. A core is named by its lowest online
 * CPU: taken from core_cpus_list (Linux 5.x+) or thread_siblings_list
 * (older), else from equal (package, die, core_id) — core_id alone repeats
 * across packages — else every CPU is its own core. */
static void sysfs_cores(sysfs_ctx *c)
{
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        if (!bit_get(c->online, cpu))
            continue;
        /* INT_MIN: not given; CPUs that all lack it then form one group. */
        if (read_int(c, -1, INT_MAX, &c->pkg_id[cpu], "devices/system/cpu/cpu%d/topology/physical_package_id", cpu) != 0)
            c->pkg_id[cpu] = INT_MIN;
        if (read_int(c, -1, INT_MAX, &c->die_id[cpu], "devices/system/cpu/cpu%d/topology/die_id", cpu) != 0)
            c->die_id[cpu] = INT_MIN;
        if (read_int(c, -1, INT_MAX, &c->core_id[cpu], "devices/system/cpu/cpu%d/topology/core_id", cpu) != 0)
            c->core_id[cpu] = INT_MIN;
        c->core_first[cpu] = -1;
        for (int l = 0; l < 2; l++) {
            memset(c->tmp, 0, c->words * sizeof(uint64_t));
            int got = l == 0 ? read_text(c, "devices/system/cpu/cpu%d/topology/core_cpus_list", cpu)
                             : read_text(c, "devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
            if (got < 0 || parse_cpulist(c->buf, c->tmp, c->ncpu, NULL) != 0)
                continue;
            /* A list that does not contain the CPU itself is corrupt. */
            if (!bit_get(c->tmp, cpu))
                continue;
            c->core_first[cpu] = bit_first_and(c->tmp, c->online, c->words);
            break;
        }
    }
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        if (!bit_get(c->online, cpu) || c->core_first[cpu] >= 0)
            continue;
        c->core_first[cpu] = cpu;
        if (c->core_id[cpu] == INT_MIN)
            continue;
        for (int j = 0; j < cpu; j++) {
            if (bit_get(c->online, j) && c->pkg_id[j] == c->pkg_id[cpu] &&
                c->die_id[j] == c->die_id[cpu] && c->core_id[j] == c->core_id[cpu]) {
                c->core_first[cpu] = c->core_first[j];
                break;
            }
        }
    }
}

/* Counts packages and sets pkg_first. Quadratic only in the number of
 * packages, which is small. */
static int sysfs_packages(sysfs_ctx *c)
{
    int npk = 0;
    /* pkg_first doubles as the table of packages seen: the first CPU of
     * package k is the k-th CPU with pkg_first[cpu] == cpu. */
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        if (!bit_get(c->online, cpu))
            continue;
        c->pkg_first[cpu] = cpu;
        for (int j = 0; j < cpu; j++) {
            if (bit_get(c->online, j) && c->pkg_first[j] == j && c->pkg_id[j] == c->pkg_id[cpu]) {
                c->pkg_first[cpu] = j;
                break;
            }
        }
        if (c->pkg_first[cpu] == cpu)
            npk++;
    }
    return npk;
}

static int type_from_name(const char *s)
{
    if (strcmp(s, "Data") == 0)
        return 'd';
    if (strcmp(s, "Instruction") == 0)
        return 'i';
    if (strcmp(s, "Unified") == 0)
        return 'u';
    return 0;   /* e.g. "Unknown": nothing a kernel can use */
}

/* Distinct cores among the online CPUs in c->tmp. */
static int count_cores_in_tmp(sysfs_ctx *c)
{
    int n = 0;
    memset(c->mark, 0, c->words * sizeof(uint64_t));
    for (int i = 0; i < c->ncpu; i++) {
        if (bit_get(c->tmp, i) && bit_get(c->online, i) && !bit_get(c->mark, c->core_first[i])) {
            bit_set(c->mark, c->core_first[i]);
            n++;
        }
    }
    return n;
}

/* The caches of one CPU (cpuN/cache/indexM), in directory order. With full,
 * also sizes, lines, ways and the cores sharing each. Returns how many were
 * read (0 when the directory is missing: some VMs and ARM boards have none). */
static int read_cache_dir(sysfs_ctx *c, int cpu, raw_cache *out, int max, int full)
{
    DIR *d = open_dir(c, "devices/system/cpu/cpu%d/cache", cpu);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL) {
        int idx = numbered_name(e->d_name, "index");
        if (idx < 0)
            continue;
        raw_cache r = { 0 };
        r.shared_first = -1;
        if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx) < 0 ||
            parse_int(c->buf, 1, 9, &r.level) != 0)
            continue;
        if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx) < 0 ||
            (r.type = (char)type_from_name(c->buf)) == 0)
            continue;
        memset(c->tmp, 0, c->words * sizeof(uint64_t));
        if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx) >= 0 &&
            parse_cpulist(c->buf, c->tmp, c->ncpu, NULL) == 0) {
            bit_set(c->tmp, cpu);   /* a CPU always shares its own cache */
            r.shared_first = bit_first_and(c->tmp, c->online, c->words);
            if (full)
                r.sharing_cores = count_cores_in_tmp(c);
        }
        if (full) {
            int sets = 0;
            if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx) < 0 ||
                parse_size(c->buf, &r.size) != 0)
                r.size = 0;   /* unknown, as the header allows */
            if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/coherency_line_size", cpu, idx) < 0 ||
                parse_int(c->buf, 0, 1 << 20, &r.line) != 0)
                r.line = 0;
            if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/ways_of_associativity", cpu, idx) < 0 ||
                parse_int(c->buf, 0, INT_MAX, &r.ways) != 0)
                r.ways = 0;
            if (read_text(c, "devices/system/cpu/cpu%d/cache/index%d/number_of_sets", cpu, idx) < 0 ||
                parse_int(c->buf, 0, INT_MAX, &sets) != 0)
                sets = 0;
            /* One set holding every line is what fully associative means. */
            if (sets == 1 && r.ways > 1)
                r.ways = -1;
        }
        out[n++] = r;
    }
    closedir(d);
    return n;
}

/* Sort key of a core: the package, then the instances of the caches from the
 * outermost level in, then the core, each named by its lowest CPU. This is
 * hwloc's topology order (children sorted by their first CPU), so "the first
 * n cores" fill one package and one L3 before the next, whatever the CPU
 * numbering (Intel numbers the second thread of every core after all first
 * threads; some BIOSes alternate packages). */
#define AB_KEYS (AB_MAX_CACHES + 2)
typedef struct core_key {
    int k[AB_KEYS];
    int cpu;
} core_key;

static int cmp_core_key(const void *pa, const void *pb)
{
    const core_key *a = pa, *b = pb;
    for (int i = 0; i < AB_KEYS; i++)
        if (a->k[i] != b->k[i])
            return a->k[i] < b->k[i] ? -1 : 1;
    return (a->cpu > b->cpu) - (a->cpu < b->cpu);
}

static int count_numa(sysfs_ctx *c)
{
    DIR *d = open_dir(c, "devices/system/node");
    if (!d)
        return 1;   /* a kernel without NUMA support: one node */
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (numbered_name(e->d_name, "node") >= 0)
            n++;
    closedir(d);
    return n > 0 ? n : 1;
}

static int sysfs_load(sysfs_ctx *c, ab_topology *t, const cpu_set_t *allowed, size_t allowed_size)
{
    if (sysfs_online(c) != 0)
        return -1;
    if (bit_first_and(c->online, NULL, c->words) < 0) {
        set_err(c->err, c->err_len, "no online CPU in %s/devices/system/cpu", c->root);
        return -1;
    }

    /* The CPUs this thread may use. */
    size_t mine_size = 0;
    cpu_set_t *mine = NULL;
    if (!allowed) {
        mine = get_affinity(&mine_size);
        allowed = mine;
        allowed_size = mine_size;
    }
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        /* Without a mask (sched_getaffinity failed) every online CPU counts. */
        if (bit_get(c->online, cpu) && (!allowed || CPU_ISSET_S((size_t)cpu, allowed_size, allowed)))
            bit_set(c->allowed, cpu);
    }
    if (mine)
        CPU_FREE(mine);
    int ref = bit_first_and(c->allowed, NULL, c->words);
    if (ref < 0) {
        set_err(c->err, c->err_len, "none of the online CPUs is in this thread's affinity mask");
        return -1;
    }

    sysfs_cores(c);
    t->packages = sysfs_packages(c);
    t->numa_nodes = count_numa(c);

    /* Caches, as seen from the reference CPU. */
    raw_cache raw[AB_RAW_CACHES];
    ab_cache caches[AB_RAW_CACHES];
    int nraw = read_cache_dir(c, ref, raw, AB_RAW_CACHES, 1);
    for (int i = 0; i < nraw; i++) {
        caches[i] = (ab_cache){ .level = raw[i].level, .type = raw[i].type, .size = raw[i].size,
                                .line = raw[i].line, .ways = raw[i].ways,
                                .cores_sharing = raw[i].sharing_cores };
    }
    store_caches(t, caches, nraw);

    /* Instances: distinct lowest-sharing-CPUs over all online CPUs. One pass
     * over the CPUs fills inst_first, also used to order the cores. */
    int unknown[AB_MAX_CACHES] = { 0 };
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        if (!bit_get(c->online, cpu))
            continue;
        int *inst = &c->inst_first[(size_t)cpu * AB_MAX_CACHES];
        for (int e = 0; e < AB_MAX_CACHES; e++)
            inst[e] = -1;
        if (t->n_caches == 0)
            continue;
        int nr = read_cache_dir(c, cpu, raw, AB_RAW_CACHES, 0);
        for (int e = 0; e < t->n_caches; e++) {
            for (int r = 0; r < nr; r++) {
                if (raw[r].level == t->caches[e].level && raw[r].type == t->caches[e].type) {
                    inst[e] = raw[r].shared_first;
                    if (inst[e] < 0)
                        unknown[e] = 1;
                    break;
                }
            }
        }
    }
    for (int e = 0; e < t->n_caches; e++) {
        int n = 0;
        memset(c->mark, 0, c->words * sizeof(uint64_t));
        for (int cpu = 0; cpu < c->ncpu; cpu++) {
            int f = bit_get(c->online, cpu) ? c->inst_first[(size_t)cpu * AB_MAX_CACHES + (size_t)e] : -1;
            if (f >= 0 && !bit_get(c->mark, f)) {
                bit_set(c->mark, f);
                n++;
            }
        }
        /* A CPU without a shared_cpu_list makes the count a guess: say unknown. */
        t->caches[e].instances = unknown[e] ? 0 : n;
    }

    /* Cores: one entry per core with an allowed CPU, its lowest allowed CPU. */
    core_key *keys = calloc((size_t)c->ncpu, sizeof *keys);
    if (!keys) {
        set_err(c->err, c->err_len, "out of memory for %d CPUs", c->ncpu);
        return -1;
    }
    int ncores = 0;
    t->pus = 0;
    memset(c->mark, 0, c->words * sizeof(uint64_t));
    for (int cpu = 0; cpu < c->ncpu; cpu++) {
        if (!bit_get(c->allowed, cpu))
            continue;
        t->pus++;
        int cf = c->core_first[cpu];
        if (bit_get(c->mark, cf))
            continue;
        bit_set(c->mark, cf);
        core_key *k = &keys[ncores++];
        int nk = 0;
        k->k[nk++] = c->pkg_first[cpu];
        for (int e = t->n_caches - 1; e >= 0; e--)
            if (t->caches[e].type != 'i' && t->caches[e].level >= 2)
                k->k[nk++] = c->inst_first[(size_t)cpu * AB_MAX_CACHES + (size_t)e];
        k->k[nk++] = cf;
        k->cpu = cpu;
    }
    qsort(keys, (size_t)ncores, sizeof *keys, cmp_core_key);
    t->cores = ncores < AB_MAX_CORES ? ncores : AB_MAX_CORES;
    for (int i = 0; i < t->cores; i++)
        t->core_cpu[i] = keys[i].cpu;
    free(keys);
    snprintf(t->source, sizeof t->source, "sysfs");
    return 0;
}

int ab_topology_load_sysfs(ab_topology *t, const char *sysfs_root, const cpu_set_t *allowed,
                           size_t allowed_size, char *err, size_t err_len)
{
    if (!t) {
        set_err(err, err_len, "no topology to fill");
        return -1;
    }
    memset(t, 0, sizeof *t);
    set_err(err, err_len, "%s", "");
    sysfs_ctx c = { .root = sysfs_root ? sysfs_root : "/sys", .err = err, .err_len = err_len };
    c.buf = malloc(AB_READ_MAX);
    int r = -1;
    if (!c.buf)
        set_err(err, err_len, "out of memory");
    else
        r = sysfs_load(&c, t, allowed, allowed_size);
    free(c.buf);
    free(c.online);
    free(c.allowed);
    free(c.tmp);
    free(c.mark);
    free(c.pkg_id);
    free(c.die_id);
    free(c.core_id);
    free(c.core_first);
    free(c.pkg_first);
    free(c.inst_first);
    if (r != 0)
        memset(t, 0, sizeof *t);   /* no half-filled answer */
    return r;
}

/* ---- the sysconf loader ---------------------------------------------------------------- */

/* Cache sizes from glibc's sysconf extensions (cpuid on x86; 0 where glibc
 * does not know). Instances and sharing are unknown (0). */
static int sysconf_caches(ab_cache *out)
{
    int n = 0;
#ifdef _SC_LEVEL1_DCACHE_SIZE
    static const struct { int level; char type; int size, assoc, line; } q[] = {
        { 1, 'd', _SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL1_DCACHE_ASSOC, _SC_LEVEL1_DCACHE_LINESIZE },
        { 1, 'i', _SC_LEVEL1_ICACHE_SIZE, _SC_LEVEL1_ICACHE_ASSOC, _SC_LEVEL1_ICACHE_LINESIZE },
        { 2, 'u', _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL2_CACHE_ASSOC, _SC_LEVEL2_CACHE_LINESIZE },
        { 3, 'u', _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL3_CACHE_ASSOC, _SC_LEVEL3_CACHE_LINESIZE },
        { 4, 'u', _SC_LEVEL4_CACHE_SIZE, _SC_LEVEL4_CACHE_ASSOC, _SC_LEVEL4_CACHE_LINESIZE },
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        long size = sysconf(q[i].size);
        if (size <= 0)
            continue;
        long assoc = sysconf(q[i].assoc), line = sysconf(q[i].line);
        out[n++] = (ab_cache){ .level = q[i].level, .type = q[i].type, .size = (size_t)size,
                               .line = line > 0 && line <= INT_MAX ? (int)line : 0,
                               .ways = assoc > 0 && assoc <= INT_MAX ? (int)assoc : 0 };
    }
#else
    (void)out;
#endif
    return n;
}

/* A loader that found CPUs but no cache (a VM or board without cache
 * directories in sysfs) gets glibc's sizes, and its source says so. */
static void add_sysconf_caches(ab_topology *t)
{
    ab_cache caches[8];
    int n = sysconf_caches(caches);
    if (t->n_caches > 0 || n == 0)
        return;
    store_caches(t, caches, n);
    size_t len = strlen(t->source);
    snprintf(t->source + len, sizeof t->source - len, "+sysconf");
}

int ab_topology_load_sysconf(ab_topology *t, char *err, size_t err_len)
{
    if (!t) {
        set_err(err, err_len, "no topology to fill");
        return -1;
    }
    memset(t, 0, sizeof *t);
    set_err(err, err_len, "%s", "");
    /* Without sysfs nothing says which threads share a core: every allowed
     * CPU is taken for a core, and packages / NUMA nodes are unknown (0). */
    size_t size = 0;
    cpu_set_t *set = get_affinity(&size);
    if (set) {
        for (size_t cpu = 0; cpu < size * 8; cpu++) {
            if (!CPU_ISSET_S(cpu, size, set))
                continue;
            if (t->pus < AB_MAX_CORES)
                t->core_cpu[t->pus] = (int)cpu;
            t->pus++;
        }
        CPU_FREE(set);
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        t->pus = n > 0 && n <= AB_CPU_LIMIT ? (int)n : 0;
        for (int i = 0; i < t->pus && i < AB_MAX_CORES; i++)
            t->core_cpu[i] = i;
    }
    if (t->pus <= 0) {
        memset(t, 0, sizeof *t);
        set_err(err, err_len, "sysconf reports no online CPU");
        return -1;
    }
    t->cores = t->pus < AB_MAX_CORES ? t->pus : AB_MAX_CORES;
    ab_cache caches[8];
    store_caches(t, caches, sysconf_caches(caches));
    snprintf(t->source, sizeof t->source, "sysconf");
    return 0;
}

/* ---- the hwloc loader ------------------------------------------------------------------- */

#ifdef ATTN_HAVE_HWLOC

/* Whether hwloc may be called at all. Two reasons not to:
 *   - hwloc promises ABI compatibility only within a major API version;
 *   - when sysfs has no CPU topology (containers and build sandboxes that
 *     hide /sys), hwloc 2.9+ prints "failed to find sysfs cpu topology
 *     directory" on stderr, and a library must not print. hwloc decides by
 *     looking for these two files of cpu0 (checked with hwloc 2.9.0 by
 *     hiding cpu0's topology directory, or all of /sys), so the same test
 *     keeps it quiet; the sysfs and sysconf paths then take over. */
static int hwloc_usable(char *err, size_t err_len)
{
    unsigned run = hwloc_get_api_version();
    if ((run >> 16) != (HWLOC_API_VERSION >> 16)) {
        set_err(err, err_len, "hwloc library API %#x does not match the headers' %#x", run,
                (unsigned)HWLOC_API_VERSION);
        return 0;
    }
    if (access("/sys/devices/system/cpu/cpu0/topology/package_cpus", R_OK) != 0 &&
        access("/sys/devices/system/cpu/cpu0/topology/core_siblings", R_OK) != 0) {
        set_err(err, err_len, "no CPU topology in /sys (hwloc would complain on stderr)");
        return 0;
    }
    return 1;
}

/* A topology with the given flags, falling back to the 2.0 flags when the
 * library (older than the headers) rejects newer ones. */
static int hwloc_open(hwloc_topology_t *topo, unsigned long flags, unsigned long flags_2_0,
                      int minimal, char *err, size_t err_len)
{
    if (!hwloc_usable(err, err_len))
        return -1;
    if (hwloc_topology_init(topo) != 0) {
        set_err(err, err_len, "hwloc_topology_init: %s", strerror(errno));
        return -1;
    }
    if (hwloc_topology_set_flags(*topo, flags) != 0)
        hwloc_topology_set_flags(*topo, flags_2_0);
    if (minimal) {
        /* Binding needs the PUs only (hwloc keeps Machine, PU and NUMA nodes
         * whatever the filter). Even so a load costs a few ms, most of it
         * hwloc opening its plugins again once no other topology exists. */
        hwloc_topology_set_all_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    } else {
        /* Instruction caches are filtered out by default; sysfs lists them,
         * and the two loaders should agree. I/O devices are never needed. */
        hwloc_topology_set_icache_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_ALL);
        hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    if (hwloc_topology_load(*topo) != 0) {
        set_err(err, err_len, "hwloc_topology_load: %s", strerror(errno));
        hwloc_topology_destroy(*topo);
        return -1;
    }
    return 0;
}

/* Flags newer than hwloc 2.0, given as numbers where the headers may lack the
 * names: never move this thread during discovery (a pinned worker may be
 * asking), and skip what we do not read. */
#if HWLOC_API_VERSION >= 0x00020800
#define AB_HWLOC_NEW_FLAGS \
    (HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING | HWLOC_TOPOLOGY_FLAG_NO_DISTANCES | \
     HWLOC_TOPOLOGY_FLAG_NO_MEMATTRS | HWLOC_TOPOLOGY_FLAG_NO_CPUKINDS)
#else
#define AB_HWLOC_NEW_FLAGS 0ul
#endif

static const hwloc_obj_type_t cache_types[] = {
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE,
    HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2ICACHE, HWLOC_OBJ_L3ICACHE,
};

static int hwloc_fill(hwloc_topology_t topo, ab_topology *t, hwloc_bitmap_t allowed,
                      hwloc_bitmap_t tmp, char *err, size_t err_len)
{
    /* Allowed: what cgroups allow, narrowed to this thread's binding. The
     * topology itself includes disallowed PUs (INCLUDE_DISALLOWED) so that
     * cache instances and sharing describe the machine, as sysfs does. */
    hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    if (hwloc_get_cpubind(topo, tmp, HWLOC_CPUBIND_THREAD) == 0)
        hwloc_bitmap_and(allowed, allowed, tmp);
    hwloc_bitmap_and(allowed, allowed, hwloc_topology_get_topology_cpuset(topo));
    int ref = hwloc_bitmap_first(allowed);
    if (ref < 0) {
        set_err(err, err_len, "none of hwloc's PUs is in this thread's affinity mask");
        return -1;
    }
    t->pus = hwloc_bitmap_weight(allowed);
    int npk = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
    t->packages = npk > 0 ? npk : 1;   /* some platforms report no package */
    int nnuma = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t->numa_nodes = nnuma > 0 ? nnuma : 1;

    /* Cores in logical (topology) order; PUs stand in for cores on platforms
     * where hwloc finds no core level. */
    hwloc_obj_type_t core_type =
        hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    t->cores = 0;
    for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, core_type, NULL);
         o && t->cores < AB_MAX_CORES; o = hwloc_get_next_obj_by_type(topo, core_type, o)) {
        hwloc_bitmap_and(tmp, o->cpuset, allowed);
        int first = hwloc_bitmap_first(tmp);   /* the first thread we may use */
        if (first >= 0)
            t->core_cpu[t->cores++] = first;
    }
    /* An allowed PU under no core (hwloc leaves out the core when sysfs
     * lacks that CPU's topology directory) would otherwise be unusable:
     * count it as a core of its own, as the sysfs loader does. */
    if (core_type == HWLOC_OBJ_CORE) {
        hwloc_bitmap_copy(tmp, allowed);
        for (hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, NULL); o;
             o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o))
            hwloc_bitmap_andnot(tmp, tmp, o->cpuset);
        for (int cpu = hwloc_bitmap_first(tmp); cpu >= 0 && t->cores < AB_MAX_CORES;
             cpu = hwloc_bitmap_next(tmp, cpu))
            t->core_cpu[t->cores++] = cpu;
    }
    if (t->cores == 0) {
        set_err(err, err_len, "hwloc lists no core with an allowed PU");
        return -1;
    }

    ab_cache caches[sizeof cache_types / sizeof cache_types[0]];
    int n = 0;
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)ref);
    for (size_t i = 0; i < sizeof cache_types / sizeof cache_types[0]; i++) {
        int inst = hwloc_get_nbobjs_by_type(topo, cache_types[i]);
        if (inst <= 0)
            continue;
        hwloc_obj_t o = pu ? hwloc_get_ancestor_obj_by_type(topo, cache_types[i], pu) : NULL;
        if (!o)   /* the reference CPU has none of this level: any instance */
            o = hwloc_get_obj_by_type(topo, cache_types[i], 0);
        if (!o || !o->attr)
            continue;
        const struct hwloc_cache_attr_s *a = &o->attr->cache;
        char type = a->type == HWLOC_OBJ_CACHE_DATA ? 'd'
                  : a->type == HWLOC_OBJ_CACHE_INSTRUCTION ? 'i' : 'u';
        int sharing = hwloc_get_nbobjs_inside_cpuset_by_type(topo, o->cpuset, core_type);
        caches[n++] = (ab_cache){
            .level = (int)a->depth, .type = type, .size = (size_t)a->size,
            .line = a->linesize <= INT_MAX ? (int)a->linesize : 0,
            .ways = a->associativity, .instances = inst,
            .cores_sharing = sharing > 0 ? sharing : 0,
        };
    }
    store_caches(t, caches, n);

    /* The version of the library that ran, not of the headers. */
    const char *ver = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo), "hwlocVersion");
    if (ver)
        snprintf(t->source, sizeof t->source, "hwloc %s", ver);
    else
        snprintf(t->source, sizeof t->source, "hwloc %u.%u", hwloc_get_api_version() >> 16,
                 (hwloc_get_api_version() >> 8) & 0xffu);
    return 0;
}

int ab_topology_load_hwloc(ab_topology *t, char *err, size_t err_len)
{
    if (!t) {
        set_err(err, err_len, "no topology to fill");
        return -1;
    }
    memset(t, 0, sizeof *t);
    set_err(err, err_len, "%s", "");
    hwloc_topology_t topo;
    unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
    if (hwloc_open(&topo, flags | AB_HWLOC_NEW_FLAGS, flags, 0, err, err_len) != 0)
        return -1;
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), tmp = hwloc_bitmap_alloc();
    int r = -1;
    if (!allowed || !tmp)
        set_err(err, err_len, "out of memory");
    else
        r = hwloc_fill(topo, t, allowed, tmp, err, err_len);
    hwloc_bitmap_free(allowed);
    hwloc_bitmap_free(tmp);
    hwloc_topology_destroy(topo);
    if (r != 0)
        memset(t, 0, sizeof *t);
    return r;
}

#endif /* ATTN_HAVE_HWLOC */

/* ---- the interface ----------------------------------------------------------------------- */

int ab_topology_load(ab_topology *t, char *err, size_t err_len)
{
    if (!t) {
        set_err(err, err_len, "no topology to fill");
        return -1;
    }
    char why_hwloc[160] = "not built with hwloc";
#ifdef ATTN_HAVE_HWLOC
    if (ab_topology_load_hwloc(t, why_hwloc, sizeof why_hwloc) == 0) {
        add_sysconf_caches(t);
        set_err(err, err_len, "%s", "");
        return 0;
    }
#endif
    char why_sysfs[160];
    if (ab_topology_load_sysfs(t, NULL, NULL, 0, why_sysfs, sizeof why_sysfs) == 0) {
        add_sysconf_caches(t);
        set_err(err, err_len, "%s", "");
        return 0;
    }
    char why_sysconf[160];
    if (ab_topology_load_sysconf(t, why_sysconf, sizeof why_sysconf) == 0) {
        set_err(err, err_len, "%s", "");
        return 0;
    }
    set_err(err, err_len, "no topology: hwloc: %s; sysfs: %s; sysconf: %s", why_hwloc, why_sysfs,
            why_sysconf);
    return -1;
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

/* Binds the calling thread to the given CPUs with sched_setaffinity. */
static int bind_sched(const int *cpus, int n, int max, char *err, size_t err_len)
{
    cpu_set_t *set = CPU_ALLOC((size_t)max + 1);
    if (!set) {
        set_err(err, err_len, "out of memory");
        return -1;
    }
    size_t size = CPU_ALLOC_SIZE((size_t)max + 1);
    CPU_ZERO_S(size, set);
    for (int i = 0; i < n; i++)
        CPU_SET_S((size_t)cpus[i], size, set);
    /* pid 0 is the calling thread (Linux affinity is per thread). */
    int r = sched_setaffinity(0, size, set);
    int e = errno;
    CPU_FREE(set);
    if (r != 0) {
        set_err(err, err_len, "sched_setaffinity to CPU %d%s: %s", cpus[0],
                n > 1 ? " and others" : "", strerror(e));
        return -1;
    }
    return 0;
}

#ifdef ATTN_HAVE_HWLOC
/* The same with hwloc_set_cpubind. A minimal topology (PUs only) is loaded
 * per call rather than kept: no global state to share between threads or to
 * leak at exit. */
static int bind_hwloc(const int *cpus, int n, char *err, size_t err_len)
{
    hwloc_topology_t topo;
    unsigned long flags = 0;
    if (hwloc_open(&topo, flags | AB_HWLOC_NEW_FLAGS, flags, 1, err, err_len) != 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int r = -1;
    if (!set) {
        set_err(err, err_len, "out of memory");
    } else {
        for (int i = 0; i < n; i++)
            hwloc_bitmap_set(set, (unsigned)cpus[i]);
        /* THREAD: this thread only, so that other threads keep their own
         * binding; threads it creates later inherit it. */
        r = hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_THREAD);
        if (r != 0)
            set_err(err, err_len, "hwloc_set_cpubind to CPU %d%s: %s", cpus[0],
                    n > 1 ? " and others" : "", strerror(errno));
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return r == 0 ? 0 : -1;
}
#endif

/* Binds the calling thread to the given CPUs: hwloc when built with it and
 * usable here, else sched_setaffinity (the same system call underneath). */
static int bind_cpus(const int *cpus, int n, char *err, size_t err_len)
{
    int max = -1;
    for (int i = 0; i < n; i++) {
        if (cpus[i] < 0 || cpus[i] >= AB_CPU_LIMIT) {
            set_err(err, err_len, "invalid CPU number %d in the topology", cpus[i]);
            return -1;
        }
        if (cpus[i] > max)
            max = cpus[i];
    }
#ifdef ATTN_HAVE_HWLOC
    char why[160];
    if (hwloc_usable(why, sizeof why))
        return bind_hwloc(cpus, n, err, err_len);
#endif
    return bind_sched(cpus, n, max, err, err_len);
}

int ab_bind_cores(const ab_topology *t, int n, char *err, size_t err_len)
{
    if (!t || t->cores <= 0 || t->cores > AB_MAX_CORES) {
        set_err(err, err_len, "no cores in the topology");
        return -1;
    }
    if (n <= 0 || n > t->cores)
        n = t->cores;
    if (bind_cpus(t->core_cpu, n, err, err_len) != 0)
        return -1;
    set_err(err, err_len, "%s", "");
    return n;
}

int ab_pin_to_core(const ab_topology *t, int core, char *err, size_t err_len)
{
    if (!t || t->cores <= 0 || t->cores > AB_MAX_CORES) {
        set_err(err, err_len, "no cores in the topology");
        return -1;
    }
    if (core < 0 || core >= t->cores) {
        set_err(err, err_len, "core %d out of range: %d core%s (0..%d)", core, t->cores,
                t->cores == 1 ? "" : "s", t->cores - 1);
        return -1;
    }
    if (bind_cpus(&t->core_cpu[core], 1, err, err_len) != 0)
        return -1;
    set_err(err, err_len, "%s", "");
    return 0;
}
