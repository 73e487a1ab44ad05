/* text.c — printf-style formatting into a caller's bounded buffer. */
#include "text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ab_putf(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

void ab_appendf(char *dst, size_t len, const char *fmt, ...)
{
    if (!dst || len == 0)
        return;
    size_t used = strnlen(dst, len);
    if (used >= len - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst + used, len - used, fmt, ap);
    va_end(ap);
}
