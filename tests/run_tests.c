/* run_tests.c — runs every test group; the last line is "N passed, N failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

int main(int argc, char **argv)
{
    const char *fixture_dir = argc > 1 ? argv[1] : "tests/fixtures";
    /* Hermetic: "auto" contexts must not pick up the user's tuning. */
    setenv("ATTN_WISDOM", "/nonexistent/attnbench-tests/wisdom", 1);

    test_api();
    test_errors();
    test_golden();
    test_fixtures(fixture_dir);
    test_properties();
    test_topology();
    test_counters();
    test_harness();
    test_vmath();
    test_threads();
    test_einsum();
    test_params();
    test_wisdom();
    test_tune();
    test_compare();
    test_history();
    test_stress();
    close_case();

    if (n_skipped)
        printf("%d skipped\n", n_skipped);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed == 0 && n_passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
