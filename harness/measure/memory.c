/* memory.c — resident-memory readings for `attnbench run --memory`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "memory.h"

int ab_rss_reset_peak(char *err, size_t err_len)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) {
        snprintf(err, err_len, "/proc/self/clear_refs: %s", strerror(errno));
        return -1;
    }
    int ok = fputs("5", f) >= 0;
    ok &= fclose(f) == 0;
    if (!ok) {
        snprintf(err, err_len, "this kernel cannot reset the peak RSS (clear_refs 5)");
        return -1;
    }
    return 0;
}

long long ab_rss_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t n = strlen(field);
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            if (sscanf(line + n + 1, "%lld", &kib) != 1)
                kib = -1;
            break;
        }
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}
