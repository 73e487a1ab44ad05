/* json_parse.c — a strict recursive-descent JSON parser (compare, and the tests). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_parse.h"

/* Arrays and objects nest at most this deep: value() and composite() call
 * each other, so a file of 100000 '[' overflowed the stack (the results
 * files attnbench reads nest 4 deep). */
#define JSON_MAX_DEPTH 256

typedef struct parser {
    const char *s;
    size_t i;
    char *err;
    size_t err_len;
    int failed;
    int depth;
} parser;

static void fail(parser *p, const char *what)
{
    if (!p->failed)
        snprintf(p->err, p->err_len, "%s at offset %zu", what, p->i);
    p->failed = 1;
}

static void ws(parser *p)
{
    while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')
        p->i++;
}

static void value(parser *p, jv *v);

static void put_utf8(char *out, size_t *n, unsigned cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xc0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xe0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*n)++] = (char)(0xf0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* The 4 hex digits of a \u escape (p->i at the first); -1 if they are not. */
static long hex4(parser *p)
{
    long cp = 0;
    for (int k = 0; k < 4; k++) {
        char h = p->s[p->i];
        if (!isxdigit((unsigned char)h))
            return -1;
        p->i++;
        cp = cp * 16 + (isdigit((unsigned char)h) ? h - '0' : tolower((unsigned char)h) - 'a' + 10);
    }
    return cp;
}

static char *string(parser *p)
{
    if (p->s[p->i] != '"') {
        fail(p, "expected a string");
        return NULL;
    }
    p->i++;
    /* The decoded text is never longer than the raw one up to the closing
     * quote (measured here: a strlen of the rest of the input for every
     * string made loading a 2 MB results file quadratic, 1.7 s). */
    size_t raw = 0;
    for (const char *q = p->s + p->i; q[raw] && q[raw] != '"'; raw++)
        if (q[raw] == '\\' && q[raw + 1])
            raw++;
    char *out = malloc(raw + 1);
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t n = 0;
    for (;;) {
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '\0' || c < 0x20) {
            fail(p, c ? "control character in a string" : "unterminated string");
            free(out);
            return NULL;
        }
        p->i++;
        if (c == '"')
            break;
        if (c != '\\') {
            out[n++] = (char)c;
            continue;
        }
        char e = p->s[p->i++];
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            /* A character past U+FFFF is a pair of escapes, high surrogate
             * then low (RFC 8259 §7), 12 characters for its 4 UTF-8 bytes;
             * a surrogate alone is no character and has no UTF-8. */
            long cp = hex4(p);
            if (cp >= 0xd800 && cp < 0xdc00) {
                long lo = p->s[p->i] == '\\' && p->s[p->i + 1] == 'u' ? (p->i += 2, hex4(p)) : -2;
                cp = lo >= 0xdc00 && lo < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
                     : lo == -1                  ? -1
                                                 : -2;
            } else if (cp >= 0xdc00 && cp < 0xe000) {
                cp = -2;
            } else if (cp == 0) {
                cp = -3;   /* in a C string it would end the name: two names could become one */
            }
            if (cp < 0) {
                fail(p, cp == -1   ? "bad \\u escape"
                        : cp == -3 ? "a \\u0000 in a string"
                                   : "a \\u escape of half a surrogate pair");
                free(out);
                return NULL;
            }
            put_utf8(out, &n, (unsigned)cp);
            break;
        }
        default:
            fail(p, "bad escape");
            free(out);
            return NULL;
        }
    }
    out[n] = '\0';
    return out;
}

static void number(parser *p, jv *v)
{
    size_t start = p->i;
    if (p->s[p->i] == '-')
        p->i++;
    if (p->s[p->i] == '0')
        p->i++;
    else if (isdigit((unsigned char)p->s[p->i]))
        while (isdigit((unsigned char)p->s[p->i]))
            p->i++;
    else {
        fail(p, "bad number");
        return;
    }
    if (p->s[p->i] == '.') {
        p->i++;
        if (!isdigit((unsigned char)p->s[p->i])) {
            fail(p, "bad fraction");
            return;
        }
        while (isdigit((unsigned char)p->s[p->i]))
            p->i++;
    }
    if (p->s[p->i] == 'e' || p->s[p->i] == 'E') {
        p->i++;
        if (p->s[p->i] == '+' || p->s[p->i] == '-')
            p->i++;
        if (!isdigit((unsigned char)p->s[p->i])) {
            fail(p, "bad exponent");
            return;
        }
        while (isdigit((unsigned char)p->s[p->i]))
            p->i++;
    }
    v->type = JV_NUMBER;
    v->number = strtod(p->s + start, NULL);
}

static void push(jv *v, jv *item, char *key)
{
    v->items = realloc(v->items, sizeof *v->items * (size_t)(v->n + 1));
    v->items[v->n] = *item;
    if (v->type == JV_OBJECT) {
        v->keys = realloc(v->keys, sizeof *v->keys * (size_t)(v->n + 1));
        v->keys[v->n] = key;
    }
    v->n++;
}

static void composite_items(parser *p, jv *v, char close);

static void composite(parser *p, jv *v, char close)
{
    if (p->depth == JSON_MAX_DEPTH) {
        fail(p, "arrays and objects nested more than 256 deep");
        return;
    }
    p->depth++;
    composite_items(p, v, close);
    p->depth--;
}

static void composite_items(parser *p, jv *v, char close)
{
    p->i++;
    ws(p);
    if (p->s[p->i] == close) {
        p->i++;
        return;
    }
    for (;;) {
        char *key = NULL;
        ws(p);
        if (close == '}') {
            key = string(p);
            if (!key)
                return;
            ws(p);
            if (p->s[p->i] != ':') {
                free(key);
                fail(p, "expected ':'");
                return;
            }
            p->i++;
        }
        jv item = { 0 };
        value(p, &item);
        push(v, &item, key);
        if (p->failed)
            return;
        ws(p);
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == close) {
            p->i++;
            return;
        }
        fail(p, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        return;
    }
}

static void value(parser *p, jv *v)
{
    ws(p);
    char c = p->s[p->i];
    if (c == '{') {
        v->type = JV_OBJECT;
        composite(p, v, '}');
    } else if (c == '[') {
        v->type = JV_ARRAY;
        composite(p, v, ']');
    } else if (c == '"') {
        v->type = JV_STRING;
        v->string = string(p);
    } else if (strncmp(p->s + p->i, "true", 4) == 0) {
        v->type = JV_BOOL, v->number = 1, p->i += 4;
    } else if (strncmp(p->s + p->i, "false", 5) == 0) {
        v->type = JV_BOOL, v->number = 0, p->i += 5;
    } else if (strncmp(p->s + p->i, "null", 4) == 0) {
        v->type = JV_NULL, p->i += 4;
    } else {
        number(p, v);
    }
}

static void release(jv *v)
{
    for (int i = 0; i < v->n; i++) {
        release(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void jv_free(jv *v)
{
    if (v) {
        release(v);
        free(v);
    }
}

jv *jv_parse(const char *text, char *err, size_t err_len)
{
    parser p = { text, 0, err, err_len, 0, 0 };
    jv *v = calloc(1, sizeof *v);
    value(&p, v);
    ws(&p);
    if (!p.failed && p.s[p.i] != '\0')
        fail(&p, "trailing text");
    if (p.failed) {
        jv_free(v);
        return NULL;
    }
    return v;
}

const jv *jv_get(const jv *obj, const char *key)
{
    if (!obj || obj->type != JV_OBJECT)
        return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}
