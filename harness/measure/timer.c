/* timer.c — clocks for benchmarking. */
#include <time.h>

#include "timer.h"

static double seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ab_now(void)
{
    return seconds(CLOCK_MONOTONIC);
}

double ab_cpu_now(void)
{
    return seconds(CLOCK_PROCESS_CPUTIME_ID);
}

double ab_thread_cpu_now(void)
{
    return seconds(CLOCK_THREAD_CPUTIME_ID);
}
