/*
 * text.h — printf-style formatting into a caller's bounded buffer, for the
 * one-line reasons and summaries the harness's library-style code (counters,
 * topology) hands back instead of printing.
 */
#ifndef AB_TEXT_H
#define AB_TEXT_H

#include <stddef.h>

/* snprintf into dst, which may be NULL or of length 0 (then nothing is
 * written: a caller may not want the text); otherwise always terminated. */
void ab_putf(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same, appended to the text dst already holds; nothing when it is full. */
void ab_appendf(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* AB_TEXT_H */
