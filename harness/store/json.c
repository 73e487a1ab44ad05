/* json.c — a small streaming JSON writer. */
#include <math.h>

#include "json.h"

void ab_json_init(ab_json *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->count[0] = 0;
}

void ab_json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* Separator, newline and indentation before a value, then its key. */
static void begin_value(ab_json *j, const char *key)
{
    if (j->count[j->depth]++ > 0)
        fputc(',', j->out);
    if (j->depth > 0) {
        fputc('\n', j->out);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->out);
    }
    if (key) {
        ab_json_write_string(j->out, key);
        fputs(": ", j->out);
    }
}

static void open_scope(ab_json *j, const char *key, char c)
{
    begin_value(j, key);
    fputc(c, j->out);
    if (j->depth + 1 < AB_JSON_MAX_DEPTH)
        j->count[++j->depth] = 0;
}

static void close_scope(ab_json *j, char c)
{
    int had_values = j->count[j->depth] > 0;
    if (j->depth > 0)
        j->depth--;
    if (had_values) {
        fputc('\n', j->out);
        for (int i = 0; i < j->depth; i++)
            fputs("  ", j->out);
    }
    fputc(c, j->out);
    if (j->depth == 0)
        fputc('\n', j->out);
}

void ab_json_begin_object(ab_json *j, const char *key) { open_scope(j, key, '{'); }
void ab_json_end_object(ab_json *j) { close_scope(j, '}'); }
void ab_json_begin_array(ab_json *j, const char *key) { open_scope(j, key, '['); }
void ab_json_end_array(ab_json *j) { close_scope(j, ']'); }

void ab_json_string(ab_json *j, const char *key, const char *value)
{
    begin_value(j, key);
    if (value)
        ab_json_write_string(j->out, value);
    else
        fputs("null", j->out);
}

void ab_json_number(ab_json *j, const char *key, double value)
{
    begin_value(j, key);
    if (isfinite(value))
        fprintf(j->out, "%.10g", value);
    else
        fputs("null", j->out);
}

void ab_json_int(ab_json *j, const char *key, long long value)
{
    begin_value(j, key);
    fprintf(j->out, "%lld", value);
}

void ab_json_bool(ab_json *j, const char *key, int value)
{
    begin_value(j, key);
    fputs(value ? "true" : "false", j->out);
}
