/*
 * json_parse.h — a strict RFC 8259 JSON parser: `attnbench compare` reads
 * benchmark files with it, and the tests check the JSON the harness writes
 * with it — code that shares nothing with the writer (json.c).
 */
#ifndef ATTN_TEST_JSON_PARSE_H
#define ATTN_TEST_JSON_PARSE_H

#include <stddef.h>

typedef enum jv_type { JV_NULL, JV_BOOL, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT } jv_type;

typedef struct jv {
    jv_type type;
    double number;          /* JV_NUMBER; JV_BOOL: 0 or 1 */
    char *string;           /* JV_STRING (decoded, UTF-8) */
    int n;                  /* JV_ARRAY / JV_OBJECT: number of items */
    struct jv *items;       /* values */
    char **keys;            /* JV_OBJECT: keys, parallel to items */
} jv;

/* Parses the whole text (only whitespace may follow the value). NULL with a
 * message in err (offset included) on any syntax error. */
jv *jv_parse(const char *text, char *err, size_t err_len);
void jv_free(jv *v);
/* The member named key of an object, or NULL. */
const jv *jv_get(const jv *obj, const char *key);

#endif /* ATTN_TEST_JSON_PARSE_H */
