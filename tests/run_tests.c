/* run_tests.c — runs every test group; the last line is "N passed, N failed". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

    /* The groups, in order; a second argument such as "threads,concurrency"
     * runs only those (make test-tsan runs the threaded ones under TSan). */
    static const struct { const char *name; void (*run)(void); } groups[] = {
        { "api", test_api }, { "errors", test_errors }, { "golden", test_golden },
        { "fixtures", NULL }, { "properties", test_properties }, { "topology", test_topology },
        { "counters", test_counters }, { "harness", test_harness }, { "vmath", test_vmath },
        { "threads", test_threads }, { "einsum", test_einsum }, { "params", test_params },
        { "wisdom", test_wisdom }, { "tune", test_tune }, { "compare", test_compare },
        { "history", test_history }, { "stress", test_stress },
        { "concurrency", test_concurrency }, { "model", test_model }, { "kvtypes", test_kvtypes },
        { "bf16", test_bf16 }, { "packed", test_packed }, { "explain", test_explain },
    };
    const char *only = argc > 2 ? argv[2] : NULL;
    int ran = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        size_t n = strlen(groups[g].name);
        const char *at = only ? strstr(only, groups[g].name) : NULL;
        if (only && !(at && (at == only || at[-1] == ',') && (at[n] == ',' || at[n] == '\0')))
            continue;
        ran++;
        if (groups[g].run)
            groups[g].run();
        else
            test_fixtures(fixture_dir);
    }
    if (only && ran == 0) {
        fprintf(stderr, "run_tests: no test group in '%s'\n", only);
        return EXIT_FAILURE;
    }
    close_case();

    if (n_skipped)
        printf("%d skipped\n", n_skipped);
    printf("%d passed, %d failed\n", n_passed, n_failed);
    return n_failed == 0 && n_passed > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
