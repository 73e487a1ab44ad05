/*
 * memory.h — how much resident memory one call needs, from the kernel's
 * point of view: the peak RSS a fresh context reaches during one call,
 * minus the RSS before it (inputs and outputs already allocated and
 * touched). Linux: /proc/self/clear_refs resets the peak (VmHWM) and
 * /proc/self/status reports it.
 */
#ifndef AB_MEMORY_H
#define AB_MEMORY_H

#include <stddef.h>

/* Resets the process's peak RSS to its current RSS. 0, or -1 with a reason
 * (no /proc, or a kernel without clear_refs "5"). */
int ab_rss_reset_peak(char *err, size_t err_len);

/* The process's current ("VmRSS") or peak ("VmHWM") resident bytes; -1 when
 * unreadable. */
long long ab_rss_bytes(const char *field);

#endif /* AB_MEMORY_H */
