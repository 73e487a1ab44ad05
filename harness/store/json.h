/*
 * json.h — a small streaming JSON writer (pretty-printed, 2-space indent).
 *
 * Keys are given with each value inside objects and NULL inside arrays.
 * Strings are escaped per RFC 8259; non-finite numbers become null, since
 * JSON has no NaN or infinity.
 */
#ifndef AB_JSON_H
#define AB_JSON_H

#include <stdio.h>

#define AB_JSON_MAX_DEPTH 16

typedef struct ab_json {
    FILE *out;
    int depth;
    int count[AB_JSON_MAX_DEPTH];   /* values written at each level */
} ab_json;

void ab_json_init(ab_json *j, FILE *out);
void ab_json_begin_object(ab_json *j, const char *key);
void ab_json_end_object(ab_json *j);
void ab_json_begin_array(ab_json *j, const char *key);
void ab_json_end_array(ab_json *j);
void ab_json_string(ab_json *j, const char *key, const char *value);  /* NULL → null */
void ab_json_number(ab_json *j, const char *key, double value);
void ab_json_int(ab_json *j, const char *key, long long value);
void ab_json_bool(ab_json *j, const char *key, int value);

/* Writes s as a JSON string literal (with quotes) to out. */
void ab_json_write_string(FILE *out, const char *s);

#endif /* AB_JSON_H */
