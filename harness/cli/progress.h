/*
 * progress.h — one status line on stderr for long runs, only when stderr is
 * a terminal: silent in CI logs and pipes.
 */
#ifndef AB_PROGRESS_H
#define AB_PROGRESS_H

typedef struct ab_progress {
    int enabled;
    int total;
} ab_progress;

void ab_progress_init(ab_progress *p, int total);
/* Rewrites the line: "[index/total] what detail". */
void ab_progress_show(const ab_progress *p, int index, const char *what, const char *detail);
void ab_progress_clear(const ab_progress *p);

#endif /* AB_PROGRESS_H */
