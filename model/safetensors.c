/*
 * safetensors.c — the safetensors reader (safetensors.h).
 *
 * The header is parsed by a recursive-descent parser written for exactly
 * this schema: an object of tensor entries, each an object of "dtype" (a
 * string), "shape" (an array of integers) and "data_offsets" (two integers),
 * plus "__metadata__", an object of strings. Nothing else is accepted: a
 * value of the wrong kind (a nested array where an integer belongs, an
 * unknown field) is refused where it starts, so the nesting depth is three
 * by construction and no input can grow the stack. Strings are decoded
 * (escapes, \uXXXX with surrogate pairs) and checked to be UTF-8. Every
 * read is bounded by the header's end; sizes are checked for overflow.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

static const struct { const char *name; unsigned size; } dtypes[] = {
    [ATTN_ST_BOOL] = { "BOOL", 1 },  [ATTN_ST_U8] = { "U8", 1 },   [ATTN_ST_I8] = { "I8", 1 },
    [ATTN_ST_F8_E5M2] = { "F8_E5M2", 1 }, [ATTN_ST_F8_E4M3] = { "F8_E4M3", 1 },
    [ATTN_ST_I16] = { "I16", 2 },    [ATTN_ST_U16] = { "U16", 2 }, [ATTN_ST_F16] = { "F16", 2 },
    [ATTN_ST_BF16] = { "BF16", 2 },  [ATTN_ST_I32] = { "I32", 4 }, [ATTN_ST_U32] = { "U32", 4 },
    [ATTN_ST_F32] = { "F32", 4 },    [ATTN_ST_I64] = { "I64", 8 }, [ATTN_ST_U64] = { "U64", 8 },
    [ATTN_ST_F64] = { "F64", 8 },
};
#define N_DTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

const char *attn_st_dtype_name(attn_st_dtype t)
{
    return (int)t >= 0 && (int)t < N_DTYPES ? dtypes[t].name : "?";
}

size_t attn_st_dtype_size(attn_st_dtype t)
{
    return (int)t >= 0 && (int)t < N_DTYPES ? dtypes[t].size : 0;
}

void attn_st_error(char *err, size_t err_len, const char *fmt, ...)
{
    if (!err || err_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    for (char *c = err; *c; c++)             /* one line, whatever a name holds */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

typedef struct parser {
    const unsigned char *start, *p, *end;   /* the header's JSON */
    char *arena;                            /* decoded strings (never more than the raw text) */
    size_t used;
    const char *tensor;                     /* the entry being read, for messages */
    size_t data_size;
    const unsigned char *data;
    char *err;
    size_t err_len;
} parser;

/* A syntax error at the current byte, in the current tensor's entry if any.
 * Returns ATTN_ERR_BAD_FILE so that callers can `return syntax(...)`. */
static attn_status syntax(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static attn_status syntax(parser *ps, const char *fmt, ...)
{
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t at = (size_t)(ps->p - ps->start);
    if (ps->tensor)
        attn_st_error(ps->err, ps->err_len, "%s: header byte %zu: %s", ps->tensor, at, msg);
    else
        attn_st_error(ps->err, ps->err_len, "header byte %zu: %s", at, msg);
    return ATTN_ERR_BAD_FILE;
}

static int peek(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n'
                               || *ps->p == '\r'))
        ps->p++;
    return ps->p < ps->end ? *ps->p : -1;
}

static attn_status expect(parser *ps, char c)
{
    int got = peek(ps);
    if (got == c) {
        ps->p++;
        return ATTN_OK;
    }
    return got < 0 ? syntax(ps, "header ends where '%c' is expected", c)
                   : syntax(ps, "expected '%c'", c);
}

/* The length of the UTF-8 sequence at p (well-formed: no overlong forms, no
 * surrogates, at most U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (n == 0 || c > 0xf4 || end - p < n)
        return 0;
    for (int i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
        (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *v)
{
    if (end - p < 4)
        return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return -1;
        *v = *v * 16 + (unsigned)d;
    }
    return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
    static const unsigned char lead[5] = { 0, 0, 0xc0, 0xe0, 0xf0 };
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    for (int i = n - 1; i > 0; i--, cp >>= 6)
        o[i] = (char)(0x80 | (cp & 0x3f));
    o[0] = (char)(lead[n] | cp);
    return o + n;
}

/* A string, decoded into the arena at ps->used and NUL-terminated; *out
 * points to it. keep advances the arena past it (names), else the next
 * string reuses the space (field names, dtypes, metadata). */
static attn_status string(parser *ps, const char **out, int keep)
{
    attn_status st = expect(ps, '"');
    if (st)
        return st;
    char *o = ps->arena + ps->used, *begin = o;
    for (;;) {
        if (ps->p >= ps->end)
            return syntax(ps, "unterminated string");
        unsigned c = *ps->p;
        if (c == '"')
            break;
        if (c < 0x20)
            return syntax(ps, "control character 0x%02x in a string", c);
        if (c >= 0x80) {
            int n = utf8_len(ps->p, ps->end);
            if (n == 0)
                return syntax(ps, "invalid UTF-8 in a string");
            memcpy(o, ps->p, (size_t)n);
            o += n;
            ps->p += n;
            continue;
        }
        ps->p++;
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        if (ps->p >= ps->end)
            return syntax(ps, "unterminated string");
        c = *ps->p++;
        const char *simple = strchr("\"\\/bfnrt", (int)c);
        if (c != 0 && simple) {
            *o++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        unsigned cp, lo;
        if (c != 'u' || hex4(ps->p, ps->end, &cp) != 0)
            return syntax(ps, "bad escape in a string");
        ps->p += 4;
        if (cp >= 0xd800 && cp < 0xdc00) {        /* a high surrogate: its low half must follow */
            if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
                hex4(ps->p + 2, ps->end, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
                return syntax(ps, "unpaired surrogate in a string");
            ps->p += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
            return syntax(ps, "unpaired surrogate in a string");
        } else if (cp == 0) {
            return syntax(ps, "\\u0000 in a string");   /* names are C strings */
        }
        o = put_utf8(o, cp);
    }
    ps->p++;                                  /* the closing quote */
    *o++ = '\0';
    *out = begin;
    if (keep)
        ps->used += (size_t)(o - begin);
    return ATTN_OK;
}

/* A JSON integer (no fraction, no exponent) into *v, its sign in *negative. */
static attn_status integer(parser *ps, uint64_t *v, int *negative)
{
    int c = peek(ps);
    *negative = c == '-';
    if (*negative)
        ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
        return syntax(ps, "expected an integer");
    *v = 0;
    const unsigned char *first = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        unsigned d = (unsigned)(*ps->p - '0');
        if (*v > (UINT64_MAX - d) / 10)
            return syntax(ps, "integer too large");
        *v = *v * 10 + d;
        ps->p++;
    }
    if (*first == '0' && ps->p - first > 1)
        return syntax(ps, "integer with a leading zero");
    if (ps->p < ps->end && (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E'))
        return syntax(ps, "expected an integer, not a fraction or an exponent");
    return ATTN_OK;
}

/* "[a, b, ...]" of non-negative integers, at most max of them. */
static attn_status int_array(parser *ps, const char *field, uint64_t *v, int max, int *n)
{
    attn_status st = expect(ps, '[');
    *n = 0;
    if (st || peek(ps) == ']')
        return st ? st : expect(ps, ']');
    for (;;) {
        int negative;
        if (*n == max)
            return syntax(ps, "\"%s\" has more than %d values", field, max);
        if ((st = integer(ps, &v[*n], &negative)) != ATTN_OK)
            return st;
        if (negative && v[*n] != 0)
            return syntax(ps, "negative value in \"%s\"", field);
        ++*n;
        if (peek(ps) != ',')
            return expect(ps, ']');
        ps->p++;
    }
}

void attn_st_shape_text(const attn_st_tensor *t, char *buf, size_t len)
{
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < t->rank && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%llu", i ? ", " : "",
                              (unsigned long long)t->shape[i]);
    if (k < len)
        snprintf(buf + k, len - k, "]");
}

/* A tensor's entry {"dtype": ..., "shape": [...], "data_offsets": [b, e]},
 * checked against the data region. */
static attn_status tensor_entry(parser *ps, attn_st_tensor *t)
{
    enum { DTYPE = 1, SHAPE = 2, OFFSETS = 4 };
    int seen = 0, n;
    uint64_t off[2];
    attn_status st = expect(ps, '{');
    if (st)
        return st;
    while (peek(ps) != '}') {
        const char *key, *value;
        if ((st = string(ps, &key, 0)) || (st = expect(ps, ':')))
            return st;
        int field = !strcmp(key, "dtype") ? DTYPE : !strcmp(key, "shape") ? SHAPE
                  : !strcmp(key, "data_offsets") ? OFFSETS : 0;
        if (field == 0)
            return syntax(ps, "unknown field \"%s\"", key);
        if (seen & field)
            return syntax(ps, "\"%s\" given twice", key);
        seen |= field;
        if (field == DTYPE) {
            if ((st = string(ps, &value, 0)))
                return st;
            int d = 0;
            while (d < N_DTYPES && strcmp(dtypes[d].name, value))
                d++;
            if (d == N_DTYPES)
                return syntax(ps, "unknown dtype \"%s\"", value);
            t->dtype = (attn_st_dtype)d;
        } else if (field == SHAPE) {
            if ((st = int_array(ps, "shape", t->shape, ATTN_ST_MAX_RANK, &t->rank)))
                return st;
        } else {
            if ((st = int_array(ps, "data_offsets", off, 2, &n)))
                return st;
            if (n != 2)
                return syntax(ps, "\"data_offsets\" needs 2 values, not %d", n);
        }
        if (peek(ps) != ',')
            break;
        ps->p++;
        if (peek(ps) == '}')
            return syntax(ps, "expected a field name");   /* no trailing comma */
    }
    if ((st = expect(ps, '}')))
        return st;
    if (seen != (DTYPE | SHAPE | OFFSETS))
        return syntax(ps, "entry without \"%s\"", !(seen & DTYPE) ? "dtype"
                          : !(seen & SHAPE) ? "shape" : "data_offsets");

    /* The entry against the data: sizes in overflow-checked arithmetic. */
    char shape[200];
    attn_st_shape_text(t, shape, sizeof shape);
    uint64_t count = 1, size = attn_st_dtype_size(t->dtype);
    for (int i = 0; i < t->rank; i++) {
        if (t->shape[i] != 0 && count > UINT64_MAX / t->shape[i]) {
            attn_st_error(ps->err, ps->err_len, "%s: shape %s overflows", ps->tensor, shape);
            return ATTN_ERR_BAD_FILE;
        }
        count *= t->shape[i];
    }
    t->n_elements = count;
    const char *name = ps->tensor;
    if (off[0] > off[1]) {
        attn_st_error(ps->err, ps->err_len, "%s: data_offsets [%llu, %llu] begin after end",
                      name, (unsigned long long)off[0], (unsigned long long)off[1]);
        return ATTN_ERR_BAD_FILE;
    }
    if (off[1] > ps->data_size) {
        attn_st_error(ps->err, ps->err_len,
                      "%s: data_offsets [%llu, %llu] end past the data (%zu bytes)", name,
                      (unsigned long long)off[0], (unsigned long long)off[1], ps->data_size);
        return ATTN_ERR_BAD_FILE;
    }
    if (count > UINT64_MAX / size) {
        attn_st_error(ps->err, ps->err_len, "%s: shape %s of %s overflows", name, shape,
                      dtypes[t->dtype].name);
        return ATTN_ERR_BAD_FILE;
    }
    if (off[1] - off[0] != count * size) {
        attn_st_error(ps->err, ps->err_len, "%s: data_offsets [%llu, %llu] hold %llu bytes, "
                      "but shape %s of %s needs %llu", name, (unsigned long long)off[0],
                      (unsigned long long)off[1], (unsigned long long)(off[1] - off[0]), shape,
                      dtypes[t->dtype].name, (unsigned long long)(count * size));
        return ATTN_ERR_BAD_FILE;
    }
    t->data = ps->data + off[0];
    t->n_bytes = (size_t)(off[1] - off[0]);
    return ATTN_OK;
}

/* "__metadata__": an object of strings, read and dropped. */
static attn_status metadata(parser *ps)
{
    const char *s;
    attn_status st = expect(ps, '{');
    if (st || peek(ps) == '}')
        return st ? st : expect(ps, '}');
    for (;;) {
        if ((st = string(ps, &s, 0)) || (st = expect(ps, ':')))
            return st;
        if (peek(ps) != '"')
            return syntax(ps, "__metadata__ values must be strings");
        if ((st = string(ps, &s, 0)))
            return st;
        if (peek(ps) != ',')
            return expect(ps, '}');
        ps->p++;
    }
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const attn_st_tensor *)a)->name, ((const attn_st_tensor *)b)->name);
}

static attn_status header(parser *ps, attn_st_file *f)
{
    int cap = 0, have_metadata = 0;
    attn_status st = expect(ps, '{');
    if (st)
        return st;
    if (peek(ps) == '}')
        ps->p++;
    else
        for (;;) {
            const char *name;
            if ((st = string(ps, &name, 1)) || (st = expect(ps, ':')))
                return st;
            if (!strcmp(name, "__metadata__")) {
                if (have_metadata++)
                    return syntax(ps, "__metadata__ given twice");
                if ((st = metadata(ps)))
                    return st;
            } else {
                if (f->n == cap) {
                    int new_cap = cap ? 2 * cap : 64;   /* n < header bytes / 30: no overflow */
                    void *grown = realloc(f->tensors, (size_t)new_cap * sizeof *f->tensors);
                    if (!grown) {
                        attn_st_error(ps->err, ps->err_len, "out of memory");
                        return ATTN_ERR_NO_MEMORY;
                    }
                    f->tensors = grown;
                    cap = new_cap;
                }
                attn_st_tensor *t = &f->tensors[f->n];
                memset(t, 0, sizeof *t);
                t->name = name;
                ps->tensor = name;
                if ((st = tensor_entry(ps, t)))
                    return st;
                ps->tensor = NULL;
                f->n++;
            }
            if (peek(ps) != ',') {
                if ((st = expect(ps, '}')))
                    return st;
                break;
            }
            ps->p++;
        }
    if (peek(ps) >= 0)                        /* padding may only be whitespace */
        return syntax(ps, "bytes after the header's object");
    if (f->n > 1)
        qsort(f->tensors, (size_t)f->n, sizeof *f->tensors, by_name);
    for (int i = 1; i < f->n; i++)
        if (!strcmp(f->tensors[i - 1].name, f->tensors[i].name)) {
            attn_st_error(ps->err, ps->err_len, "%s: tensor named twice", f->tensors[i].name);
            return ATTN_ERR_BAD_FILE;
        }
    return ATTN_OK;
}

attn_status attn_safetensors_parse(const void *buf, size_t size, attn_st_file *f,
                                   char *err, size_t err_len)
{
    const unsigned char *b = buf;
    memset(f, 0, sizeof *f);
    if (!b || size < 8) {
        attn_st_error(err, err_len, "%zu bytes, shorter than the 8-byte header length", size);
        return ATTN_ERR_BAD_FILE;
    }
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | b[i];
    if (n > size - 8) {
        attn_st_error(err, err_len, "header length %llu past the end of the file (%zu bytes)",
                      (unsigned long long)n, size);
        return ATTN_ERR_BAD_FILE;
    }
    if (n > ATTN_ST_MAX_HEADER) {
        attn_st_error(err, err_len, "header length %llu over the limit of %u bytes",
                      (unsigned long long)n, ATTN_ST_MAX_HEADER);
        return ATTN_ERR_BAD_FILE;
    }
    parser ps = { .start = b + 8, .p = b + 8, .end = b + 8 + n, .data = b + 8 + n,
                  .data_size = size - 8 - (size_t)n, .err = err, .err_len = err_len };
    /* A decoded string is shorter than its text with the quotes, so the
     * header's length bounds the arena. */
    ps.arena = malloc((size_t)n + 1);
    if (!ps.arena) {
        attn_st_error(err, err_len, "out of memory");
        return ATTN_ERR_NO_MEMORY;
    }
    attn_status st = header(&ps, f);
    f->names = ps.arena;
    f->data_size = ps.data_size;
    if (st != ATTN_OK)
        attn_safetensors_free(f);
    return st;
}

void attn_safetensors_free(attn_st_file *f)
{
    if (!f)
        return;
    free(f->tensors);
    free(f->names);
    memset(f, 0, sizeof *f);
}

const attn_st_tensor *attn_safetensors_find(const attn_st_file *f, const char *name)
{
    if (!f || f->n == 0)
        return NULL;
    attn_st_tensor key;
    key.name = name;
    return bsearch(&key, f->tensors, (size_t)f->n, sizeof *f->tensors, by_name);
}
