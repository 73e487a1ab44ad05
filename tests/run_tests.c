/* run_tests.c — runs every test group; the last line is "N passed, N failed".
 * usage: run_tests [FIXTURE_DIR [GROUP,...]] [--jobs N] */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int n_passed, n_failed, n_skipped;
static int case_open, case_failed;
static char case_name[256];

static void close_case(void)
{
    if (!case_open)
        return;
    if (case_failed)
        n_failed++;
    else
        n_passed++;
    case_open = 0;
}

void t_case(const char *fmt, ...)
{
    close_case();
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(case_name, sizeof case_name, fmt, ap);
    va_end(ap);
    case_open = 1;
    case_failed = 0;
}

void t_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s (%s:%d): ", case_open ? case_name : "(no case)", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (case_open)
        case_failed = 1;
    else
        n_failed++;
}

void t_skip(const char *fmt, ...)
{
    va_list ap;
    printf("skip: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    n_skipped++;
}

typedef struct group {
    const char *name;
    void (*run)(void);   /* NULL: the fixtures, from the fixture folder */
} group;

static void run_group(const group *g, const char *fixture_dir)
{
    if (g->run)
        g->run();
    else
        test_fixtures(fixture_dir);
}

/* What a group's process counted, in memory shared with the parent. */
typedef struct group_counts {
    int passed, failed, skipped, finished;
} group_counts;

/* Runs the n groups in up to jobs processes at once, each group in one of
 * its own (the groups share nothing: each test makes its own files, and a
 * crash is its group's failure, not the run's end). Each group's output is
 * kept and printed whole, in the groups' order. Adds to the counts. On 2
 * cores the groups that use one thread run beside the others: make test's
 * unit tests under qemu took a few minutes one group at a time. */
static void run_forked(const group *groups, int n, int jobs, const char *fixture_dir)
{
    group_counts *counts = mmap(NULL, (size_t)n * sizeof *counts, PROT_READ | PROT_WRITE,
                                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    FILE **out = calloc((size_t)n, sizeof *out);
    pid_t *pid = calloc((size_t)n, sizeof *pid);
    int *status = calloc((size_t)n, sizeof *status);
    if (counts == MAP_FAILED || !out || !pid || !status) {
        fprintf(stderr, "run_tests: out of memory for --jobs; one group at a time\n");
        for (int g = 0; g < n; g++)
            run_group(&groups[g], fixture_dir);
        close_case();
        goto done;
    }
    /* The kernels this machine cannot run, said and counted once, here:
     * each group's process inherits "said" (t_kernels asks the CPU, no
     * thread is started before the forks). */
    const char *names[64];
    t_kernels(names, 64);
    int next = 0, running = 0, printed = 0;
    while (printed < n) {
        while (running < jobs && next < n) {
            int g = next++;
            out[g] = tmpfile();
            fflush(stdout);
            fflush(stderr);
            pid[g] = out[g] ? fork() : -1;
            if (pid[g] == 0) {
                n_passed = n_failed = n_skipped = 0;   /* the parent's, so far */
                dup2(fileno(out[g]), STDOUT_FILENO);
                dup2(fileno(out[g]), STDERR_FILENO);
                setvbuf(stdout, NULL, _IOLBF, 0);   /* in order with stderr's lines */
                run_group(&groups[g], fixture_dir);
                close_case();
                counts[g] = (group_counts){ n_passed, n_failed, n_skipped, 1 };
                fflush(stdout);
                free(out);            /* the parent's, copied: LeakSanitizer would */
                free(pid);            /* count them as this group's leaks */
                free(status);
                exit(EXIT_SUCCESS);   /* not _exit: LeakSanitizer checks at exit */
            }
            if (pid[g] > 0)
                running++;
        }
        if (running > 0) {
            int st;
            pid_t done = wait(&st);
            for (int g = 0; g < next; g++)
                if (pid[g] > 0 && (pid[g] == done || (done < 0 && errno == ECHILD))) {
                    status[g] = done < 0 ? 255 << 8 : st;   /* lost: "exited 255" */
                    pid[g] = 0;
                    running--;
                }
        }
        /* Print every group finished in order from the first not printed. */
        while (printed < next && pid[printed] <= 0) {
            int g = printed++;
            if (out[g]) {
                char buf[4096];
                size_t got;
                rewind(out[g]);
                while ((got = fread(buf, 1, sizeof buf, out[g])) > 0)
                    fwrite(buf, 1, got, stdout);
                fclose(out[g]);
            }
            n_passed += counts[g].passed;
            n_failed += counts[g].failed;
            n_skipped += counts[g].skipped;
            if (!out[g] || pid[g] < 0) {
                printf("FAIL group %s: no process for it (tmpfile or fork failed)\n",
                       groups[g].name);
                n_failed++;
            } else if (!counts[g].finished || !WIFEXITED(status[g])
                       || WEXITSTATUS(status[g]) != 0) {
                if (WIFSIGNALED(status[g]))
                    printf("FAIL group %s: killed by signal %d\n", groups[g].name,
                           WTERMSIG(status[g]));
                else
                    printf("FAIL group %s: exited %d%s\n", groups[g].name,
                           WIFEXITED(status[g]) ? WEXITSTATUS(status[g]) : -1,
                           counts[g].finished ? " after its tests" : " before its end");
                n_failed++;
            }
        }
    }
done:
    if (counts != MAP_FAILED)
        munmap(counts, (size_t)n * sizeof *counts);
    free(out);
    free(pid);
    free(status);
}

int main(int argc, char **argv)
{
    /* --jobs N, wherever it stands; the rest are the positional arguments. */
    int jobs = 1;
    const char *pos[2] = { "tests/fixtures", NULL };
    for (int i = 1, np = 0; i < argc; i++) {
        if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) {
            char *end;
            long j = strtol(argv[++i], &end, 10);
            if (*end || j < 1 || j > 64) {
                fprintf(stderr, "run_tests: --jobs takes 1..64, not '%s'\n", argv[i]);
                return EXIT_FAILURE;
            }
            jobs = (int)j;
        } else if (np < 2) {
            pos[np++] = argv[i];
        } else {
            fprintf(stderr, "usage: run_tests [FIXTURE_DIR [GROUP,...]] [--jobs N]\n");
            return EXIT_FAILURE;
        }
    }
    const char *fixture_dir = pos[0], *only = pos[1];
    /* Hermetic: "auto" contexts must not pick up the user's tuning. */
    setenv("ATTN_WISDOM", "/nonexistent/attnbench-tests/wisdom", 1);

    /* The groups, in order, the longest first (with --jobs, the others run
     * beside them); a second argument such as "threads,concurrency" runs
     * only those (make test-tsan runs the threaded ones under TSan). */
    static const group groups[] = {
        { "long", test_long }, { "stress", test_stress }, { "threads", test_threads },
        { "harness", test_harness }, { "explain", test_explain }, { "einsum", test_einsum },
        { "packed", test_packed }, { "fixtures", NULL }, { "tune", test_tune },
        { "kvtypes", test_kvtypes }, { "params", test_params }, { "history", test_history },
        { "api", test_api },
        { "errors", test_errors }, { "golden", test_golden }, { "properties", test_properties },
        { "topology", test_topology }, { "counters", test_counters }, { "vmath", test_vmath },
        { "wisdom", test_wisdom }, { "compare", test_compare }, { "concurrency", test_concurrency },
        { "model", test_model }, { "bf16", test_bf16 },
    };
    enum { N_GROUPS = sizeof groups / sizeof groups[0] };
    group chosen[N_GROUPS];
    int n = 0;
    for (int g = 0; g < N_GROUPS; g++) {
        size_t len = strlen(groups[g].name);
        const char *at = only ? strstr(only, groups[g].name) : NULL;
        if (!only || (at && (at == only || at[-1] == ',') && (at[len] == ',' || at[len] == '\0')))
            chosen[n++] = groups[g];
    }
    if (only && n == 0) {
        fprintf(stderr, "run_tests: no test group in '%s'\n", only);
        return EXIT_FAILURE;
    }
    if (jobs > 1 && n > 1) {
        run_forked(chosen, n, jobs, fixture_dir);
    } else {
        for (int g = 0; g < n; g++)
            run_group(&chosen[g], fixture_dir);
        close_case();
    }

    if (n_skipped)
        printf("%d skipped\n", n_skipped);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed == 0 && n_passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
