/* progress.c — a status line on a terminal, nothing elsewhere. */
#include <stdio.h>
#include <unistd.h>

#include "progress.h"

void ab_progress_init(ab_progress *p, int total)
{
    p->enabled = isatty(STDERR_FILENO);
    p->total = total;
}

void ab_progress_show(const ab_progress *p, int index, const char *what, const char *detail)
{
    if (!p->enabled)
        return;
    /* \r and erase-to-end-of-line: the line is rewritten in place. */
    fprintf(stderr, "\r\033[K[%d/%d] %s %s", index + 1, p->total, what, detail ? detail : "");
    fflush(stderr);
}

void ab_progress_clear(const ab_progress *p)
{
    if (p->enabled) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}
