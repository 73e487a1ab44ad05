/* timer.h — clocks for benchmarking. */
#ifndef AB_TIMER_H
#define AB_TIMER_H

/* Seconds on the monotonic clock: never steps back, unaffected by NTP jumps. */
double ab_now(void);
/* CPU seconds used by the whole process (every thread). */
double ab_cpu_now(void);
/* CPU seconds used by the calling thread alone. */
double ab_thread_cpu_now(void);

#endif /* AB_TIMER_H */
