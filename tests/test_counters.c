/*
 * test_counters.c — harness/measure/counters.c: event availability, passes, and
 * counts checked against independent measures (process and thread CPU
 * time, pages touched, sleeps), for the calling thread and for a team of
 * threads that exists before counting starts, as an OpenMP team does.
 *
 * Software events (perf::TASK-CLOCK...) can be counted on any Linux machine,
 * virtual or not, with PAPI or without; where they cannot, the cases that
 * need them are skipped. Hardware events are checked only for consistency,
 * since CI runs in virtual machines without a PMU.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
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

static double clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double thread_cpu_ns(void)
{
    return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* The CPU time of every thread of the process, those that exited included:
 * what the software events, which count every thread, must agree with. */
static double process_cpu_ns(void)
{
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
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
 * process's CPU time (it counts every thread; other threads of this binary,
 * such as idle OpenMP workers of earlier groups, are in both), and grow with
 * the work. */
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

    t_case("counters: perf::TASK-CLOCK agrees with the process CPU time");
    CHECK(ab_counters_passes(c) == 1, "%d passes for one event", ab_counters_passes(c));
    CHECK(ab_counters_in_pass(c, 0, 0), "the event is not in pass 0");
    long long counted[2] = {0, 0};
    double burnt[2] = {20e6, 60e6};
    for (int run = 0; run < 2 && ab_counters_passes(c) == 1; run++) {
        long long v[1] = {-1};
        double t0 = process_cpu_ns();
        if (ab_counters_start(c, 0) != 0) {
            CHECK(0, "start: %s", ab_counters_error(c));
            break;
        }
        burn(burnt[run]);
        int stopped = ab_counters_stop(c, 0, v);
        double cpu = process_cpu_ns() - t0;
        CHECK(stopped == 0, "stop: %s", ab_counters_error(c));
        counted[run] = v[0];
        CHECK((double)v[0] >= 0.5 * cpu && (double)v[0] <= 2.0 * cpu,
              "task-clock %lld ns for %.0f ns of process CPU time", v[0], cpu);
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

/* A thread created while counting is counted exactly when the event's scope
 * says threads created by the caller are (every scope but "calling
 * thread"); describe's summary says the same. */
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
    const char *scope = ab_counters_scope(c, 0);
    int inherits = scope && strcmp(scope, AB_SCOPE_CALLER) != 0;
    char summary[512];
    ab_counters_describe(summary, sizeof summary, NULL, 0, NULL, 0);

    t_case("counters: threads created while counting (%s)", scope ? scope : "no scope");
    CHECK(scope != NULL, "an available event has no scope");
    CHECK(strstr(summary, "software events count") != NULL,
          "the summary does not say what software events count: '%s'", summary);
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
                  "time: the child was counted although the scope says not", v[0], own);
    }
    ab_counters_close(c);
}

/* ---- a team of threads that exists before counting starts ------------------- */
/* The kernels run on an OpenMP team whose threads are created with the
 * library context, before counting starts; a pthread team waiting on a
 * barrier stands for it here. */

#define TEAM_MAX 4

typedef struct team team;
typedef struct member {
    team *t;
    int i;
} member;

struct team {
    int n;
    pthread_t th[TEAM_MAX];
    member m[TEAM_MAX];
    pthread_barrier_t go, done;
    int quit;           /* read after go: the barrier orders it */
    double burn_ns;     /* each member's work in a round: CPU time to burn... */
    int sleeps;         /* ...or this many 200 us sleeps */
    double cpu[TEAM_MAX]; /* CPU time each member used in the last round */
};

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static void *member_main(void *arg)
{
    member *m = arg;
    team *t = m->t;
    for (;;) {
        pthread_barrier_wait(&t->go);
        if (t->quit)
            break;
        double t0 = thread_cpu_ns();
        if (t->burn_ns > 0)
            burn(t->burn_ns);
        for (int k = 0; k < t->sleeps; k++)
            sleep_us(200);
        t->cpu[m->i] = thread_cpu_ns() - t0;
        pthread_barrier_wait(&t->done);
    }
    return NULL;
}

/* Starts n members, which wait for team_round. Returns 0 or -1. */
static int team_start(team *t, int n)
{
    memset(t, 0, sizeof *t);
    if (pthread_barrier_init(&t->go, NULL, (unsigned)n + 1) != 0)
        return -1;
    if (pthread_barrier_init(&t->done, NULL, (unsigned)n + 1) != 0) {
        pthread_barrier_destroy(&t->go);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        t->m[i].t = t;
        t->m[i].i = i;
        if (pthread_create(&t->th[i], NULL, member_main, &t->m[i]) != 0) {
            /* The barriers count n + 1: the members made cannot be released
             * without the missing ones. Not worth recovering in a test. */
            fprintf(stderr, "team_start: pthread_create failed\n");
            abort();
        }
    }
    t->n = n;
    return 0;
}

/* One round: every member burns or sleeps, the caller waits (asleep). */
static void team_round(team *t, double burn_ns, int sleeps)
{
    t->burn_ns = burn_ns;
    t->sleeps = sleeps;
    pthread_barrier_wait(&t->go);
    pthread_barrier_wait(&t->done);
}

static void team_stop(team *t)
{
    t->quit = 1;
    pthread_barrier_wait(&t->go);
    for (int i = 0; i < t->n; i++)
        pthread_join(t->th[i], NULL);
    pthread_barrier_destroy(&t->go);
    pthread_barrier_destroy(&t->done);
}

/* Entries of a /proc directory, or -1. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Counts perf::TASK-CLOCK over one round of the team burning burn_ns each,
 * and checks it against the process CPU time of the region (within 25%, the
 * VM is noisy) and against one member's share. A round outside those bounds
 * is counted once more before it fails: under the sanitizers, beside other
 * test processes on 2 vCPUs, one round read 105 ms against 81 ms of process
 * CPU time (CI, 2026-11-28); a count that is wrong (a member counted twice,
 * or not at all) is wrong every time. */
static void check_team_round(ab_counters *c, team *t, double burn_ns, const char *what)
{
    char first[200] = "";
    for (int attempt = 0; attempt < 2; attempt++) {
        long long v[1] = {-1};
        double p0 = process_cpu_ns();
        if (ab_counters_start(c, 0) != 0) {
            CHECK(0, "%s: start: %s", what, ab_counters_error(c));
            return;
        }
        team_round(t, burn_ns, 0);
        int stopped = ab_counters_stop(c, 0, v);
        double process = process_cpu_ns() - p0;
        CHECK(stopped == 0, "%s: stop: %s", what, ab_counters_error(c));
        if (stopped != 0)
            return;
        double members = 0.0, most = 0.0;
        for (int i = 0; i < t->n; i++) {
            members += t->cpu[i];
            most = t->cpu[i] > most ? t->cpu[i] : most;
        }
        double task = (double)v[0];
        int ok = task >= 0.75 * process && task <= 1.25 * process && task >= 0.75 * members
              && task >= 1.5 * most;
        if (ok)
            return;
        char now[200];
        snprintf(now, sizeof now,
                 "task-clock %.1f ms, process CPU time %.1f ms, the %d members' %.1f ms (one "
                 "member: %.1f ms)", task / 1e6, process / 1e6, t->n, members / 1e6, most / 1e6);
        if (attempt == 1)
            CHECK(0, "%s: %s; before it, %s", what, now, first);
        snprintf(first, sizeof first, "%s", now);
    }
}

static void test_team(void)
{
    const char *names[] = {"perf::TASK-CLOCK"};
    team t;

    /* 1. The team exists before the counters are opened, like an OpenMP
     *    team created with the library context. */
    if (team_start(&t, 2) != 0) {
        t_case("counters: a team of threads");
        CHECK(0, "pthread_barrier_init failed");
        return;
    }
    ab_counters *c = ab_counters_open(names, 1);
    if (!c || ab_counters_unavailable(c, 0)) {
        if (c)
            t_skip("perf::TASK-CLOCK cannot be counted here: %s", ab_counters_unavailable(c, 0));
        ab_counters_close(c);
        team_stop(&t);
        return;
    }
    t_case("counters: perf::TASK-CLOCK counts a team that existed before counting");
    const char *scope = ab_counters_scope(c, 0);
    CHECK(scope && strcmp(scope, AB_SCOPE_ALL) == 0, "scope of perf::TASK-CLOCK: %s",
          scope ? scope : "(none)");
    check_team_round(c, &t, 40e6, "first round");
    check_team_round(c, &t, 40e6, "second round, counters reused");
    team_stop(&t);

    /* 2. The counters of threads that exited are closed at the next start,
     *    and the count stays right. */
    t_case("counters: the counters of exited threads are closed");
    int fds_before = count_entries("/proc/self/fd");
    long long v[1] = {-1};
    double p0 = process_cpu_ns();
    if (ab_counters_start(c, 0) == 0) {
        burn(20e6);
        CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
        double process = process_cpu_ns() - p0;
        CHECK((double)v[0] >= 0.75 * process && (double)v[0] <= 1.25 * process,
              "task-clock %.1f ms, process CPU time %.1f ms", (double)v[0] / 1e6,
              process / 1e6);
    } else {
        CHECK(0, "start: %s", ab_counters_error(c));
    }
    int fds_after = count_entries("/proc/self/fd");
    CHECK(fds_before - fds_after == 2, "%d descriptors before the team's exit was seen, %d "
          "after: the 2 members' counters were not closed", fds_before, fds_after);
    ab_counters_close(c);

    /* 3. The team is created after the counters were first started: its
     *    threads inherit the counter of the thread that created them, so a
     *    counter of their own at the next start would count them twice. */
    t_case("counters: a team created between two starts is counted once");
    c = ab_counters_open(names, 1);
    if (c && ab_counters_start(c, 0) == 0 && ab_counters_stop(c, 0, v) == 0) {
        if (team_start(&t, 2) == 0) {
            check_team_round(c, &t, 40e6, "team created after a start");
            team_stop(&t);
        } else {
            CHECK(0, "pthread_barrier_init failed");
        }
    } else {
        CHECK(0, "open, start or stop: %s", c ? ab_counters_error(c) : "out of memory");
    }
    ab_counters_close(c);

    /* 4. A member that exits while counting still counts its work. */
    t_case("counters: a thread that exits while counting is counted");
    c = ab_counters_open(names, 1);
    if (c && team_start(&t, 1) == 0) {
        double p1 = process_cpu_ns();
        if (ab_counters_start(c, 0) == 0) {
            team_round(&t, 40e6, 0);
            team_stop(&t);  /* joined: the member has exited */
            CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
            double process = process_cpu_ns() - p1;
            CHECK((double)v[0] >= 0.75 * process && (double)v[0] <= 1.25 * process
                  && (double)v[0] >= 0.75 * t.cpu[0],
                  "task-clock %.1f ms, process CPU time %.1f ms, the exited member's %.1f ms",
                  (double)v[0] / 1e6, process / 1e6, t.cpu[0] / 1e6);
        } else {
            CHECK(0, "start: %s", ab_counters_error(c));
            team_stop(&t);
        }
    } else {
        CHECK(0, "ab_counters_open or team_start failed");
    }
    ab_counters_close(c);
}

/* ---- kernel mode ---------------------------------------------------------------- */

/* Opens a counter of the kernel for this thread, as the diagnosis and the
 * direct back end do, independently of them: sharing their
 * ab_perf_event_open would let a fault in it pass unseen, the back end and
 * this oracle then failing alike. Returns 0 or errno. */
static int perf_open_errno(unsigned type, unsigned long long config)
{
#ifdef __linux__
    struct perf_event_attr attr = {.size = sizeof attr, .type = type, .config = config,
                                   .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1};
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

/* Whether the kernel offers perf_event_open at all: user-mode emulation
 * (qemu-user) answers ENOSYS, and then no event can be counted, in any mode,
 * whatever perf_event_paranoid says about the host. */
static int perf_syscall_missing(void)
{
    return perf_open_errno(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) == ENOSYS;
}

/* Whether this process may count kernel mode: perf_event_paranoid <= 1, or
 * CAP_PERFMON (38) or CAP_SYS_ADMIN (21) in effect. -1 when unknown. */
/* perf_event_paranoid, or INT_MIN when it cannot be read. */
static int perf_paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int paranoid = INT_MIN;
    if (f) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = INT_MIN;
        fclose(f);
    }
    return paranoid;
}

static int may_count_kernel(void)
{
    int paranoid = perf_paranoid();
    FILE *f;
    if (paranoid == INT_MIN)
        return -1;
    if (paranoid <= 1)
        return 1;
    unsigned long long caps = 0;
    int found = 0;
    char line[256];
    f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &caps) == 1)
            found = 1;
    if (f)
        fclose(f);
    if (!found)
        return -1;
    return (caps >> 38 & 1) || (caps >> 21 & 1);
}

/* Every sleep of a thread is a context switch, which the kernel counts in
 * kernel mode: perf::CONTEXT-SWITCHES must see them (the calling thread's
 * and the team's), or be unavailable with the reason. */
static void test_context_switches(void)
{
    const char *names[] = {"perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS", "cs"};
    ab_counters *c = ab_counters_open(names, 3);
    if (!c) {
        t_case("counters: perf::CONTEXT-SWITCHES");
        CHECK(0, "ab_counters_open returned NULL");
        return;
    }
    if (perf_syscall_missing()) {
        t_skip("perf::CONTEXT-SWITCHES: this kernel (or emulator) has no perf_event_open: %s",
               ab_counters_unavailable(c, 0) ? ab_counters_unavailable(c, 0) : "");
        ab_counters_close(c);
        return;
    }
    int allowed = may_count_kernel();
    const char *why = ab_counters_unavailable(c, 0);
    t_case("counters: perf::CONTEXT-SWITCHES counts kernel mode or is refused (%s)",
           why ? "refused" : "counted");
    if (allowed >= 0)
        CHECK(allowed ? why == NULL : why != NULL, "this process %s count kernel mode, yet "
              "perf::CONTEXT-SWITCHES is %s", allowed ? "may" : "may not",
              why ? why : "available");
    for (int e = 0; e < 2; e++) {
        const char *w = ab_counters_unavailable(c, e);
        if (w)
            CHECK(strstr(w, "happen in the kernel") && strstr(w, "read 0"),
                  "%s unavailable, but not for the reason expected: %s", names[e], w);
        else
            CHECK(ab_counters_scope(c, e) && strcmp(ab_counters_scope(c, e), AB_SCOPE_ALL) == 0,
                  "%s: scope %s", names[e], ab_counters_scope(c, e));
    }
    /* "cs" is libpfm4's short name for the same event, opened the same way. */
    CHECK((ab_counters_unavailable(c, 2) == NULL) == (why == NULL),
          "perf::CONTEXT-SWITCHES %s but cs %s", why ? "unavailable" : "available",
          ab_counters_unavailable(c, 2) ? ab_counters_unavailable(c, 2) : "available");
    if (why) {
        ab_counters_close(c);
        return;
    }
    CHECK(strcmp(ab_counters_via(c, 2), "perf_event_open") == 0, "cs counted through %s",
          ab_counters_via(c, 2));

    team t;
    if (team_start(&t, 2) != 0) {
        CHECK(0, "pthread_barrier_init failed");
        ab_counters_close(c);
        return;
    }
    const int n = 40;  /* sleeps of the calling thread and of each member */
    long long v[3] = {-1, -1, -1};
    if (ab_counters_start(c, 0) == 0) {
        for (int k = 0; k < n; k++)
            sleep_us(200);
        team_round(&t, 0.0, n);
        CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
        /* The caller's n sleeps, each member's n, and the barrier waits. */
        CHECK(v[0] >= 3 * n / 2, "%lld context switches for %d sleeps of 3 threads", v[0], n);
        CHECK(v[2] >= 3 * n / 2, "cs: %lld context switches for %d sleeps of 3 threads", v[2],
              n);
        CHECK(v[1] >= 0, "CPU migrations: %lld", v[1]);
    } else {
        CHECK(0, "start: %s", ab_counters_error(c));
    }
    team_stop(&t);
    ab_counters_close(c);
}

/* Writes a failure line into buf (which collects them). */
static void note(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 2 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used - 1, fmt, ap);
    va_end(ap);
    strcat(buf, "\n");
}

/* What an unprivileged process sees where perf_event_paranoid allows user
 * space only: run in a child that drops root (only root can run it here;
 * elsewhere test_context_switches checks this process as it is). */
static void test_unprivileged(void)
{
    int paranoid = perf_paranoid();
    if (perf_syscall_missing()) {
        t_skip("counters without privileges: this kernel (or emulator) has no perf_event_open");
        return;
    }
    if (geteuid() != 0 || paranoid == INT_MIN || paranoid > 2) {
        t_skip("counters without privileges: needs root to drop it, and perf_event_paranoid "
               "<= 2 (it is %d)", paranoid);
        return;
    }
    t_case("counters: without privileges, at perf_event_paranoid=%d", paranoid);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        CHECK(0, "pipe: %s", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        CHECK(0, "fork: %s", strerror(errno));
        close(pipefd[0]);
        close(pipefd[1]);
        return;
    }
    if (pid == 0) {
        char out[2048] = "";
        close(pipefd[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0) {
            note(out, sizeof out, "cannot become nobody: %s", strerror(errno));
        } else {
            const char *names[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS",
                                   "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS"};
            ab_counters *c = ab_counters_open(names, 4);
            int user_only = paranoid >= 2;
            if (!c) {
                note(out, sizeof out, "ab_counters_open returned NULL");
            } else {
                const char *scope = ab_counters_scope(c, 0);
                if (!scope || strcmp(scope, AB_SCOPE_ALL) != 0)
                    note(out, sizeof out, "perf::TASK-CLOCK: %s, scope %s",
                         ab_counters_unavailable(c, 0) ? ab_counters_unavailable(c, 0)
                                                       : "available",
                         scope ? scope : "(none)");
                scope = ab_counters_scope(c, 1);
                const char *want = user_only ? AB_SCOPE_ALL_USER : AB_SCOPE_ALL;
                if (!scope || strcmp(scope, want) != 0)
                    note(out, sizeof out, "perf::PAGE-FAULTS: scope %s, expected %s",
                         scope ? scope : "(none)", want);
                for (int e = 2; e < 4; e++) {
                    const char *why = ab_counters_unavailable(c, e);
                    if (user_only && !(why && strstr(why, "happen in the kernel")
                                       && strstr(why, "perf_event_paranoid=2")))
                        note(out, sizeof out, "%s with user space only: %s", names[e],
                             why ? why : "available, so it would read 0");
                    if (!user_only && why)
                        note(out, sizeof out, "%s at paranoid %d: %s", names[e], paranoid, why);
                }
                long long v[4] = {-1, -1, -1, -1};
                if (ab_counters_start(c, 0) != 0) {
                    note(out, sizeof out, "start: %s", ab_counters_error(c));
                } else {
                    burn(10e6);
                    if (ab_counters_stop(c, 0, v) != 0 || v[0] < 5000000)
                        note(out, sizeof out, "stop: %s, task-clock %lld ns for 10 ms",
                             ab_counters_error(c), v[0]);
                }
                ab_counters_close(c);
            }
        }
        ssize_t w = write(pipefd[1], out, strlen(out));
        (void)w;
        close(pipefd[1]);
        _exit(0);  /* no atexit handlers, no leak report of the parent's memory */
    }
    close(pipefd[1]);
    char got[2048];
    size_t used = 0;
    ssize_t r;
    while (used < sizeof got - 1 && (r = read(pipefd[0], got + used, sizeof got - 1 - used)) > 0)
        used += (size_t)r;
    got[used] = '\0';
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the unprivileged child failed "
          "(status %d)", status);
    CHECK(used == 0, "as nobody:\n%s", got);
}

/* The scope of each kind of event, and none for unavailable ones. */
static void test_scope(void)
{
    const char *names[] = {"perf::TASK-CLOCK", "NO_SUCH_EVENT", "PAPI_TOT_CYC", "TASK-CLOCK"};
    ab_counters *c = ab_counters_open(names, 4);
    t_case("counters: ab_counters_scope");
    CHECK(c != NULL, "ab_counters_open returned NULL");
    if (!c)
        return;
    CHECK(ab_counters_scope(c, 1) == NULL, "an unknown event has a scope: %s",
          ab_counters_scope(c, 1));
    CHECK(ab_counters_scope(c, -1) == NULL && ab_counters_scope(c, 4) == NULL
          && ab_counters_scope(NULL, 0) == NULL, "scopes out of range");
    for (int e = 0; e < 4; e += 3)
        if (!ab_counters_unavailable(c, e))
            CHECK(ab_counters_scope(c, e) && strcmp(ab_counters_scope(c, e), AB_SCOPE_ALL) == 0
                  && strcmp(ab_counters_via(c, e), "perf_event_open") == 0,
                  "%s: scope %s via %s", names[e], ab_counters_scope(c, e),
                  ab_counters_via(c, e));
    /* Through PAPI (with a PMU): the calling thread, and the threads it
     * creates where PAPI_INHERIT works. */
    if (!ab_counters_unavailable(c, 2)) {
        const char *s = ab_counters_scope(c, 2);
        CHECK(s && (strcmp(s, AB_SCOPE_CALLER) == 0 || strcmp(s, AB_SCOPE_CREATED) == 0)
              && strcmp(ab_counters_via(c, 2), "PAPI") == 0, "PAPI_TOT_CYC: scope %s via %s",
              s ? s : "(none)", ab_counters_via(c, 2));
    } else {
        CHECK(ab_counters_scope(c, 2) == NULL, "unavailable PAPI_TOT_CYC has a scope");
    }
    ab_counters_close(c);
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

/* A software event named with libpfm4 qualifiers goes to PAPI, which counts
 * user mode by default: one that only occurs in the kernel is refused
 * unless the qualifiers ask for kernel mode, and then it counts. */
static void test_papi_qualifiers(void)
{
    const char *names[] = {"perf::CS:u=1", "perf::CONTEXT-SWITCHES:k=1"};
    ab_counters *c = ab_counters_open(names, 2);
    t_case("counters: qualified software events through PAPI");
    CHECK(c != NULL, "ab_counters_open returned NULL");
    if (!c)
        return;
    const char *why = ab_counters_unavailable(c, 0);
    CHECK(why && strstr(why, "happen in the kernel") && strstr(why, ":k=1"),
          "perf::CS:u=1 would read 0, yet: %s", why ? why : "available");
    why = ab_counters_unavailable(c, 1);
    if (why) {
        /* PAPI's perf_event component may be disabled, or kernel mode not
         * permitted: PAPI's own reason then. */
        CHECK(why[0] != '\0', "empty reason");
        t_skip("perf::CONTEXT-SWITCHES:k=1 through PAPI: %s", why);
        ab_counters_close(c);
        return;
    }
    const char *scope = ab_counters_scope(c, 1);
    CHECK(strcmp(ab_counters_via(c, 1), "PAPI") == 0 && scope
          && (strcmp(scope, AB_SCOPE_CALLER) == 0 || strcmp(scope, AB_SCOPE_CREATED) == 0),
          "perf::CONTEXT-SWITCHES:k=1 via %s, scope %s", ab_counters_via(c, 1),
          scope ? scope : "(none)");
    long long v[2] = {-1, -1};
    const int n = 40;
    if (ab_counters_start(c, 0) == 0) {
        for (int k = 0; k < n; k++)
            sleep_us(200);
        CHECK(ab_counters_stop(c, 0, v) == 0, "stop: %s", ab_counters_error(c));
        CHECK(v[1] >= n / 2, "perf::CONTEXT-SWITCHES:k=1 counted %lld for %d sleeps", v[1], n);
        CHECK(v[0] == -1, "the value of refused perf::CS:u=1 was written: %lld", v[0]);
    } else {
        CHECK(0, "start: %s", ab_counters_error(c));
    }
    ab_counters_close(c);
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
        CHECK(probes[i].available ? probes[i].scope != NULL : probes[i].scope == NULL,
              "probe %s: available %d, scope %s", names[i], probes[i].available,
              probes[i].scope ? probes[i].scope : "(none)");
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
        CHECK(why && strstr(why, "perf_event_open") && ab_counters_passes(c) == 0,
              "perf::TASK-CLOCK: '%s', %d passes", why ? why : "available",
              ab_counters_passes(c));
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
        if (!software)
            CHECK(!probes[i].available && strstr(probes[i].why, "not built in"),
                  "probe %s: %d '%s'", probes[i].name, probes[i].available, probes[i].why);
        else if (!kernel_ok)
            CHECK(!probes[i].available && strstr(probes[i].why, "perf_event_open"),
                  "probe %s: %d '%s'", probes[i].name, probes[i].available, probes[i].why);
        else if (probes[i].available)
            CHECK(strcmp(probes[i].via, "perf_event_open") == 0 && probes[i].scope,
                  "probe %s: via %s, scope %s", probes[i].name, probes[i].via,
                  probes[i].scope ? probes[i].scope : "(none)");
        else
            /* Context switches and migrations may be refused: they only
             * occur in the kernel, which may allow user space only. */
            CHECK(strstr(probes[i].why, "happen in the kernel"), "probe %s unavailable: '%s'",
                  probes[i].name, probes[i].why);
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
    test_team();
    test_context_switches();
    test_unprivileged();
    test_scope();
#ifdef ATTN_HAVE_PAPI
    test_papi_qualifiers();
    test_describe();
#else
    test_not_built_in();
#endif
}
