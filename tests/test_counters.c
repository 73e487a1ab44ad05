/*
 * test_counters.c — harness/counters.c: event availability, passes, and
 * counts checked against independent measures (thread CPU time, pages
 * touched).
 *
 * Software events (perf::TASK-CLOCK...) can be counted on any Linux machine
 * with PAPI, virtual or not; where they cannot, the cases that need them
 * are skipped. Hardware events are checked only for consistency, since CI
 * runs in virtual machines without a PMU.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

#include "check.h"
#include "counters.h"

#define N_PROBES 12  /* the fixed list of ab_counters_describe */

/* Cases that hold with or without PAPI. */
static void test_api_edges(void)
{
    t_case("counters: empty request and out-of-range arguments");
    ab_counters *c = ab_counters_open(NULL, 0);
    CHECK(c != NULL, "ab_counters_open(NULL, 0) returned NULL");
    if (c) {
        CHECK(ab_counters_count(c) == 0, "count %d", ab_counters_count(c));
        CHECK(ab_counters_passes(c) == 0, "passes %d", ab_counters_passes(c));
        CHECK(ab_counters_name(c, 0) == NULL, "name of event 0 of none");
        CHECK(ab_counters_in_pass(c, 0, 0) == 0, "event 0 in pass 0 of none");
        CHECK(ab_counters_start(c, 0) == -1, "started pass 0 of none");
        CHECK(ab_counters_error(c)[0] != '\0', "no error after a failed start");
        long long v[1] = {-7};
        CHECK(ab_counters_stop(c, 0, v) == -1 && v[0] == -7, "stopped pass 0 of none");
        ab_counters_close(c);
    }
    ab_counters_close(NULL);  /* must be harmless */

    const char *names[] = {"NO_SUCH_EVENT", ""};
    c = ab_counters_open(names, 2);
    CHECK(c != NULL, "ab_counters_open returned NULL");
    if (c) {
        CHECK(ab_counters_count(c) == 2, "count %d", ab_counters_count(c));
        for (int e = 0; e < 2; e++) {
            const char *why = ab_counters_unavailable(c, e);
            CHECK(why && why[0], "event %d '%s' has no reason to be unavailable", e, names[e]);
        }
        CHECK(ab_counters_name(c, -1) == NULL && ab_counters_name(c, 2) == NULL,
              "names out of range");
        CHECK(ab_counters_passes(c) == 0, "%d passes for nothing countable",
              ab_counters_passes(c));
        CHECK(ab_counters_in_pass(c, 0, -1) == 0 && ab_counters_in_pass(c, 5, 0) == 0,
              "in_pass out of range");
        ab_counters_close(c);
    }

    t_case("counters: describe respects max and tolerates missing buffers");
    ab_counter_probe probes[3];
    memset(probes, 0, sizeof probes);
    int n = ab_counters_describe(NULL, 0, NULL, 0, probes, 2);
    CHECK(n == 2, "describe with max 2 returned %d", n);
    CHECK(probes[2].name == NULL, "describe wrote past max");
    CHECK(probes[0].name && strcmp(probes[0].name, "PAPI_TOT_CYC") == 0, "first probe %s",
          probes[0].name ? probes[0].name : "(null)");
    n = ab_counters_describe(NULL, 0, NULL, 0, NULL, 5);
    CHECK(n == 0, "describe without probes returned %d", n);
    char tiny[4];
    ab_counters_describe(tiny, sizeof tiny, NULL, 0, NULL, 0);
    CHECK(strlen(tiny) < sizeof tiny, "summary overran a tiny buffer");
}

static double thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keeps the CPU busy for about ns of this thread's CPU time. */
static void burn(double ns)
{
    volatile double x = 1.0;
    double end = thread_cpu_ns() + ns;
    while (thread_cpu_ns() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1e-9;
}

/* The pass counting event e, or -1; also counts the passes claiming it. */
static int pass_of(const ab_counters *c, int e, int *claims)
{
    int found = -1;
    *claims = 0;
    for (int p = 0; p < ab_counters_passes(c); p++)
        if (ab_counters_in_pass(c, e, p)) {
            found = p;
            ++*claims;
        }
    return found;
}

/* Runs every pass around fn(arg); values of unavailable events stay as the
 * caller set them. Returns 0 when every start and stop succeeded. */
static int count_all_passes(ab_counters *c, long long *values, void (*fn)(void *), void *arg)
{
    for (int p = 0; p < ab_counters_passes(c); p++) {
        if (ab_counters_start(c, p) != 0) {
            CHECK(0, "start pass %d: %s", p, ab_counters_error(c));
            return -1;
        }
        fn(arg);
        if (ab_counters_stop(c, p, values) != 0) {
            CHECK(0, "stop pass %d: %s", p, ab_counters_error(c));
            return -1;
        }
    }
    return 0;
}

static void burn_20ms(void *arg)
{
    (void)arg;
    burn(20e6);
}

/* perf::TASK-CLOCK counts nanoseconds on the CPU: it must agree with the
 * thread's CPU time, and grow with the work. */
static void test_task_clock(void)
{
    const char *names[] = {"perf::TASK-CLOCK"};
    ab_counters *c = ab_counters_open(names, 1);
    if (!c) {
        t_case("counters: perf::TASK-CLOCK");
        CHECK(0, "ab_counters_open returned NULL");
        return;
    }
    if (ab_counters_unavailable(c, 0)) {
        t_skip("perf::TASK-CLOCK cannot be counted here: %s", ab_counters_unavailable(c, 0));
        ab_counters_close(c);
        return;
    }

    t_case("counters: perf::TASK-CLOCK agrees with the thread CPU time");
    CHECK(ab_counters_passes(c) == 1, "%d passes for one event", ab_counters_passes(c));
    CHECK(ab_counters_in_pass(c, 0, 0), "the event is not in pass 0");
    long long counted[2] = {0, 0};
    double burnt[2] = {20e6, 60e6};
    for (int run = 0; run < 2 && ab_counters_passes(c) == 1; run++) {
        long long v[1] = {-1};
        double t0 = thread_cpu_ns();
        if (ab_counters_start(c, 0) != 0) {
            CHECK(0, "start: %s", ab_counters_error(c));
            break;
        }
        burn(burnt[run]);
        int stopped = ab_counters_stop(c, 0, v);
        double cpu = thread_cpu_ns() - t0;
        CHECK(stopped == 0, "stop: %s", ab_counters_error(c));
        counted[run] = v[0];
        CHECK((double)v[0] >= 0.5 * cpu && (double)v[0] <= 2.0 * cpu,
              "task-clock %lld ns for %.0f ns of thread CPU time", v[0], cpu);
    }
    CHECK(counted[1] > counted[0], "a 60 ms burn counted %lld ns, a 20 ms one %lld ns",
          counted[1], counted[0]);

    /* A start right after a stop begins from zero again. */
    long long v[1] = {-1};
    if (ab_counters_start(c, 0) == 0) {
        CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
        CHECK(v[0] >= 0 && v[0] < counted[0], "an empty interval counted %lld ns", v[0]);
    } else {
        CHECK(0, "restart: %s", ab_counters_error(c));
    }
    CHECK(ab_counters_start(c, 1) == -1, "started pass 1 of 1");
    CHECK(ab_counters_stop(c, 0, v) == -1, "stopped a pass that is not counting");
    ab_counters_close(c);
}

typedef struct touch_arg {
    unsigned char *buf;
    size_t pages, page;
} touch_arg;

static void touch_pages(void *p)
{
    touch_arg *a = p;
    for (size_t i = 0; i < a->pages; i++)
        ((volatile unsigned char *)a->buf)[i * a->page] = (unsigned char)i;
}

/* Writing once to each of N fresh anonymous pages faults each one in. */
static void test_page_faults(void)
{
    const char *names[] = {"perf::PAGE-FAULTS"};
    ab_counters *c = ab_counters_open(names, 1);
    if (!c || ab_counters_unavailable(c, 0)) {
        if (c)
            t_skip("perf::PAGE-FAULTS cannot be counted here: %s", ab_counters_unavailable(c, 0));
        else {
            t_case("counters: perf::PAGE-FAULTS");
            CHECK(0, "ab_counters_open returned NULL");
        }
        ab_counters_close(c);
        return;
    }

    t_case("counters: perf::PAGE-FAULTS counts pages touched");
    long sz = sysconf(_SC_PAGESIZE);
    touch_arg a = {NULL, 512, sz > 0 ? (size_t)sz : 4096};
    void *m = mmap(NULL, a.pages * a.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
    if (m != MAP_FAILED) {
        a.buf = m;
#ifdef MADV_NOHUGEPAGE
        /* One transparent huge page would serve many touches with one fault. */
        (void)madvise(m, a.pages * a.page, MADV_NOHUGEPAGE);
#endif
        long long v[1] = {-1};
        if (count_all_passes(c, v, touch_pages, &a) == 0)
            CHECK(v[0] >= (long long)a.pages / 2 && v[0] < 100 * (long long)a.pages,
                  "%lld page faults for %zu fresh pages", v[0], a.pages);
        munmap(m, a.pages * a.page);
    }
    ab_counters_close(c);
}

/* Unavailable events are reported with a reason and do not stop the others. */
static void test_mixed(void)
{
    const char *names[] = {"perf::TASK-CLOCK", "NO_SUCH_EVENT", "PAPI_TOT_CYC",
                           "perf::PAGE-FAULTS"};
    const int n = 4;
    ab_counters *c = ab_counters_open(names, n);
    if (!c) {
        t_case("counters: mixed request");
        CHECK(0, "ab_counters_open returned NULL");
        return;
    }
    if (ab_counters_unavailable(c, 0) || ab_counters_unavailable(c, 3)) {
        t_skip("software events cannot be counted here: %s",
               ab_counters_unavailable(c, 0) ? ab_counters_unavailable(c, 0)
                                            : ab_counters_unavailable(c, 3));
        ab_counters_close(c);
        return;
    }

    t_case("counters: unavailable events in a mixed request");
    CHECK(ab_counters_count(c) == n, "count %d", ab_counters_count(c));
    for (int e = 0; e < n && e < ab_counters_count(c); e++)
        CHECK(strcmp(ab_counters_name(c, e), names[e]) == 0, "event %d is %s, asked %s", e,
              ab_counters_name(c, e), names[e]);
    const char *why = ab_counters_unavailable(c, 1);
    CHECK(why && why[0], "NO_SUCH_EVENT is not reported unavailable with a reason");
    CHECK(why && strchr(why, '\n') == NULL, "the reason is not one line: %s", why);
    /* PAPI_TOT_CYC is unavailable without a PMU (CI's virtual machines),
     * countable on bare metal: either way the answer must be consistent. */
    int cyc_ok = ab_counters_unavailable(c, 2) == NULL;
    if (!cyc_ok) {
        why = ab_counters_unavailable(c, 2);
        CHECK(why[0] != '\0', "PAPI_TOT_CYC is unavailable with an empty reason");
    }
    for (int e = 0; e < n; e++) {
        int claims;
        int p = pass_of(c, e, &claims);
        int available = ab_counters_unavailable(c, e) == NULL;
        CHECK(available ? claims == 1 : claims == 0, "%s is in %d passes (%s)", names[e], claims,
              available ? "available" : "unavailable");
        (void)p;
    }

    long long values[4] = {-1, -1, -1, -1};
    if (count_all_passes(c, values, burn_20ms, NULL) == 0) {
        CHECK(values[0] > 1000000, "perf::TASK-CLOCK counted %lld ns for 20 ms", values[0]);
        CHECK(values[1] == -1, "the value of NO_SUCH_EVENT was written: %lld", values[1]);
        if (cyc_ok)
            CHECK(values[2] > 0, "PAPI_TOT_CYC counted %lld cycles for 20 ms", values[2]);
        else
            CHECK(values[2] == -1, "the value of unavailable PAPI_TOT_CYC was written: %lld",
                  values[2]);
        CHECK(values[3] >= 0, "perf::PAGE-FAULTS counted %lld", values[3]);
    }
    ab_counters_close(c);
}

/* Every available event is counted in exactly one pass, and every pass runs.
 * Nine software events exceed what PAPI puts in one perf_event set (seven
 * with PAPI 7), and a duplicate cannot share a set with itself: both make
 * more passes here. */
static void test_passes(void)
{
    const char *three[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES"};
    ab_counters *c = ab_counters_open(three, 3);
    if (!c || ab_counters_unavailable(c, 0)) {
        if (c)
            t_skip("perf::TASK-CLOCK cannot be counted here: %s", ab_counters_unavailable(c, 0));
        ab_counters_close(c);
        return;
    }
    t_case("counters: passes for three software events");
    CHECK(ab_counters_passes(c) >= 1, "%d passes", ab_counters_passes(c));
    for (int e = 0; e < 3; e++) {
        int claims;
        (void)pass_of(c, e, &claims);
        CHECK(claims == (ab_counters_unavailable(c, e) ? 0 : 1), "%s is in %d passes", three[e],
              claims);
    }
    CHECK(!ab_counters_in_pass(c, 0, ab_counters_passes(c)), "in a pass past the last");
    ab_counters_close(c);

    const char *many[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES",
                          "perf::CPU-MIGRATIONS", "perf::MINOR-FAULTS", "perf::MAJOR-FAULTS",
                          "perf::CPU-CLOCK", "perf::CS", "perf::FAULTS", "perf::TASK-CLOCK"};
    const int n = (int)(sizeof many / sizeof many[0]);
    c = ab_counters_open(many, n);
    if (!c)
        return;
    t_case("counters: more events than one set holds are split into passes");
    int available = 0, in_passes = 0;
    for (int e = 0; e < n; e++) {
        int claims;
        (void)pass_of(c, e, &claims);
        int ok = ab_counters_unavailable(c, e) == NULL;
        available += ok;
        in_passes += claims;
        CHECK(claims == (ok ? 1 : 0), "%s (event %d) is in %d passes", many[e], e, claims);
    }
    CHECK(in_passes == available, "%d events in passes, %d available", in_passes, available);
    /* Through PAPI a set holds few events and no duplicate: two passes or
     * more. Opened directly, each event has its own counter: one pass. */
    int direct = ab_counters_via(c, 0) && strcmp(ab_counters_via(c, 0), "perf_event_open") == 0;
    CHECK(ab_counters_unavailable(c, n - 1) == NULL
          && (direct ? ab_counters_passes(c) == 1 : ab_counters_passes(c) >= 2),
          "the duplicate perf::TASK-CLOCK: %s, %d passes (counted through %s)",
          ab_counters_unavailable(c, n - 1) ? ab_counters_unavailable(c, n - 1) : "available",
          ab_counters_passes(c), direct ? "perf_event_open" : "PAPI");
    long long values[16];
    for (int e = 0; e < n; e++)
        values[e] = -1;
    if (count_all_passes(c, values, burn_20ms, NULL) == 0)
        for (int e = 0; e < n; e++) {
            if (ab_counters_unavailable(c, e))
                CHECK(values[e] == -1, "unavailable %s written", many[e]);
            else
                CHECK(values[e] >= 0, "%s counted %lld", many[e], values[e]);
        }
    CHECK(values[0] > 1000000 && values[n - 1] > 1000000,
          "task-clock %lld and %lld ns in different passes of 20 ms each", values[0],
          values[n - 1]);
    ab_counters_close(c);
}

static void *child_burn(void *arg)
{
    burn(*(const double *)arg);
    return NULL;
}

/* A thread created while counting is counted exactly when describe says
 * counts include such threads (PAPI_INHERIT, refused by PAPI 7 on machines
 * without a PMU). */
static void test_child_thread(void)
{
    const char *names[] = {"perf::TASK-CLOCK"};
    ab_counters *c = ab_counters_open(names, 1);
    if (!c || ab_counters_unavailable(c, 0)) {
        if (c)
            t_skip("perf::TASK-CLOCK cannot be counted here: %s", ab_counters_unavailable(c, 0));
        ab_counters_close(c);
        return;
    }
    char summary[512];
    ab_counters_describe(summary, sizeof summary, NULL, 0, NULL, 0);
    int inherits = strstr(summary, "counts include threads created while counting") != NULL;
    int refused = strstr(summary, "threads created while counting are NOT counted") != NULL;

    t_case("counters: threads created while counting (%s)", inherits ? "inherited" : "not inherited");
    CHECK(inherits != refused, "the summary does not say whether new threads are counted: '%s'",
          summary);
    double child_ns = 40e6;
    long long v[1] = {-1};
    pthread_t t;
    double t0 = thread_cpu_ns();
    if (ab_counters_start(c, 0) != 0) {
        CHECK(0, "start: %s", ab_counters_error(c));
    } else {
        int made = pthread_create(&t, NULL, child_burn, &child_ns) == 0;
        if (made)
            pthread_join(t, NULL);
        CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
        double own = thread_cpu_ns() - t0;
        CHECK(made, "pthread_create failed");
        if (made && inherits)
            CHECK((double)v[0] >= own + 0.5 * child_ns, "task-clock %lld ns: the child's %.0f ns "
                  "are missing (own %.0f ns)", v[0], child_ns, own);
        else if (made)
            CHECK((double)v[0] <= 2.0 * own + 5e6, "task-clock %lld ns for %.0f ns of own CPU "
                  "time: the child was counted although the summary says not", v[0], own);
    }
    ab_counters_close(c);
}

/* Opens a counter of the kernel for this thread, as the diagnosis and the
 * direct back end do, independently of them. Returns 0 or errno. */
static int perf_open_errno(unsigned type, unsigned long long config)
{
#ifdef __linux__
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0UL);
    if (fd < 0)
        return errno;
    close((int)fd);
    return 0;
#else
    (void)type;
    (void)config;
    return ENOSYS;
#endif
}

#ifdef ATTN_HAVE_PAPI

static int find(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static int hw_cycles_errno(void)
{
    return perf_open_errno(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
}

static void test_describe(void)
{
    char summary[512], diag[512];
    ab_counter_probe probes[N_PROBES + 4];
    memset(probes, 0, sizeof probes);
    summary[0] = diag[0] = 'x';

    t_case("counters: describe");
    int n = ab_counters_describe(summary, sizeof summary, diag, sizeof diag, probes,
                                 N_PROBES + 4);
    CHECK(n == N_PROBES, "describe returned %d probes, expected %d", n, N_PROBES);
    CHECK(summary[0] != '\0' && strstr(summary, "PAPI") != NULL, "summary: '%s'", summary);
    CHECK(strchr(summary, '\n') == NULL, "summary is not one line: '%s'", summary);

    const char *names[N_PROBES];
    for (int i = 0; i < n && i < N_PROBES; i++) {
        names[i] = probes[i].name ? probes[i].name : "";
        CHECK(probes[i].available ? probes[i].why[0] == '\0' : probes[i].why[0] != '\0',
              "probe %s: available %d, why '%s'", names[i], probes[i].available, probes[i].why);
    }
    if (n != N_PROBES)
        return;
    int cyc = find(names, n, "PAPI_TOT_CYC"), ins = find(names, n, "PAPI_TOT_INS");
    int clk = find(names, n, "perf::TASK-CLOCK");
    CHECK(cyc >= 0 && ins >= 0 && clk >= 0, "probe list lacks PAPI_TOT_CYC, PAPI_TOT_INS or "
          "perf::TASK-CLOCK");
    if (cyc < 0 || ins < 0 || clk < 0)
        return;

    /* Agrees with what ab_counters_open says of the same event. */
    const char *one[] = {"perf::TASK-CLOCK"};
    ab_counters *c = ab_counters_open(one, 1);
    if (c && !ab_counters_unavailable(c, 0))
        CHECK(probes[clk].available, "perf::TASK-CLOCK counts but describe says: %s",
              probes[clk].why);
    else if (c)
        t_skip("perf::TASK-CLOCK cannot be counted here: %s", ab_counters_unavailable(c, 0));
    ab_counters_close(c);

    /* The diagnosis is empty exactly when hardware events work. */
    if (probes[cyc].available) {
        CHECK(diag[0] == '\0', "PAPI_TOT_CYC counts, yet the diagnosis says '%s'", diag);
    } else if (!probes[ins].available) {
        CHECK(diag[0] != '\0', "no hardware event counts and the diagnosis is empty");
        int err = hw_cycles_errno();
        if (err == ENOENT || err == EOPNOTSUPP || err == ENODEV)
            /* The kernel itself has no PMU: the diagnosis must say so. */
            CHECK(strstr(diag, "PMU") != NULL, "the kernel has no hardware PMU (%s), the "
                  "diagnosis says '%s'", strerror(err), diag);
        if (err == EACCES || err == EPERM)
            CHECK(strstr(diag, "perf_event_paranoid") != NULL, "perf_event_open is denied, "
                  "the diagnosis says '%s'", diag);
        if ((err == ENOENT || err == EOPNOTSUPP || err == ENODEV) &&
            (access("/sys/hypervisor/type", F_OK) == 0 || strstr(summary, "virtual machine")))
            CHECK(strstr(diag, "virtual machine") != NULL, "a VM without a PMU, the diagnosis "
                  "says '%s'", diag);
    }
}

#else /* no PAPI */

static void test_not_built_in(void)
{
    t_case("counters: without PAPI only the kernel's software events count");
    const char *names[] = {"perf::TASK-CLOCK", "PAPI_TOT_CYC"};
    ab_counters *c = ab_counters_open(names, 2);
    CHECK(c != NULL, "ab_counters_open returned NULL");
    if (!c)
        return;
    CHECK(ab_counters_count(c) == 2, "count %d", ab_counters_count(c));
    for (int e = 0; e < 2; e++)
        CHECK(strcmp(ab_counters_name(c, e), names[e]) == 0, "name %s", ab_counters_name(c, e));
    const char *why = ab_counters_unavailable(c, 1);
    CHECK(why && strstr(why, "not built in"), "PAPI_TOT_CYC: '%s'", why ? why : "(available)");
    /* perf::TASK-CLOCK counts exactly when the kernel opens a task clock. */
    int kernel_ok = perf_open_errno(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) == 0;
    why = ab_counters_unavailable(c, 0);
    const char *via = ab_counters_via(c, 0);
    if (kernel_ok)
        CHECK(!why && via && strcmp(via, "perf_event_open") == 0 && ab_counters_passes(c) == 1
              && ab_counters_in_pass(c, 0, 0) && !ab_counters_in_pass(c, 1, 0),
              "perf::TASK-CLOCK: '%s' via %s, %d passes", why ? why : "available",
              via ? via : "-", ab_counters_passes(c));
    else
        CHECK(why && strstr(why, "not built in") && strstr(why, "perf_event_open")
              && ab_counters_passes(c) == 0, "perf::TASK-CLOCK: '%s', %d passes",
              why ? why : "available", ab_counters_passes(c));
    ab_counters_close(c);

    t_case("counters: describe without PAPI");
    char summary[256], diag[512];
    ab_counter_probe probes[N_PROBES];
    int n = ab_counters_describe(summary, sizeof summary, diag, sizeof diag, probes, N_PROBES);
    CHECK(strstr(summary, "not built in") != NULL, "summary: '%s'", summary);
    CHECK(strstr(diag, "not built in") != NULL, "diagnosis: '%s'", diag);
    CHECK(n == N_PROBES, "%d probes", n);
    for (int i = 0; i < n; i++) {
        int software = strncmp(probes[i].name, "perf::", 6) == 0;
        if (!software || !kernel_ok)
            CHECK(!probes[i].available && strstr(probes[i].why, "not built in"),
                  "probe %s: %d '%s'", probes[i].name, probes[i].available, probes[i].why);
        else
            CHECK(probes[i].available && strcmp(probes[i].via, "perf_event_open") == 0,
                  "probe %s: %d '%s'", probes[i].name, probes[i].available, probes[i].why);
    }
}

#endif

void test_counters(void)
{
    test_api_edges();
    /* Software events count with PAPI or, where PAPI cannot, directly. */
    test_task_clock();
    test_page_faults();
    test_mixed();
    test_passes();
    test_child_thread();
#ifdef ATTN_HAVE_PAPI
    test_describe();
#else
    test_not_built_in();
#endif
}
