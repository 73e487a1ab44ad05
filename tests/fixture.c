/* fixture.c — reads the .fix text format described in fixture.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

enum kind { K_INT, K_FLOAT, K_F32, K_U8, K_I32, K_F64, K_STR };

/* The word that starts a record of each kind. */
static const char *const kind_words[] = {
    [K_INT] = "int", [K_FLOAT] = "float", [K_F32] = "f32", [K_U8] = "u8",
    [K_I32] = "i32", [K_F64] = "f64", [K_STR] = "str",
};

/* The kind of record that word starts; -1 for none. */
static int kind_of(const char *word)
{
    for (int k = 0; k < (int)(sizeof kind_words / sizeof kind_words[0]); k++)
        if (strcmp(word, kind_words[k]) == 0)
            return k;
    return -1;
}

typedef struct record {
    char name[32];
    enum kind kind;
    size_t n;
    double scalar;        /* K_INT, K_FLOAT */
    void *data;           /* K_F32, K_U8, K_I32: t_alloc'd; K_F64, K_STR: malloc'd */
} record;

#define MAX_RECORDS 128   /* an encoder stack of 3 layers has 16 arrays per layer */

struct fixture {
    char op[16];
    int n;
    record r[MAX_RECORDS];
};

void fx_free(fixture *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n; i++) {
        if (f->r[i].kind == K_F64 || f->r[i].kind == K_STR)
            free(f->r[i].data);
        else
            t_free(f->r[i].data);
    }
    free(f);
}

static int read_number(FILE *fp, double *v)
{
    char tok[64];
    if (fscanf(fp, "%63s", tok) != 1)
        return 0;
    char *end;
    errno = 0;
    *v = strtod(tok, &end);
    return *end == '\0' && errno != ERANGE;
}

static int load_array(FILE *fp, record *r, size_t misalign)
{
    size_t elem = r->kind == K_F32 ? sizeof(float) : r->kind == K_U8 ? 1
                : r->kind == K_I32 ? sizeof(int32_t) : sizeof(double);
    r->data = r->kind == K_F64 ? malloc(r->n * elem + 1) : t_alloc(r->n, elem, misalign);
    if (!r->data)
        return 0;
    for (size_t i = 0; i < r->n; i++) {
        double v;
        if (!read_number(fp, &v))
            return 0;
        if (r->kind == K_F32)
            ((float *)r->data)[i] = (float)v;   /* %.9g of a float: exact */
        else if (r->kind == K_U8)
            ((uint8_t *)r->data)[i] = (uint8_t)v;
        else if (r->kind == K_I32) {
            if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != (double)(int32_t)v)
                return 0;                       /* not an int32 */
            ((int32_t *)r->data)[i] = (int32_t)v;
        }
        else
            ((double *)r->data)[i] = v;
    }
    return 1;
}

fixture *fx_load(const char *path, size_t misalign, char *err, size_t err_len)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fixture *f = calloc(1, sizeof *f);
    char word[32];
    int ended = 0;
    while (f && !ended && fscanf(fp, "%31s", word) == 1) {
        if (word[0] == '#') {
            int c;
            while ((c = fgetc(fp)) != EOF && c != '\n')
                ;
            continue;
        }
        if (strcmp(word, "end") == 0) {
            ended = 1;
            break;
        }
        if (strcmp(word, "op") == 0) {
            if (fscanf(fp, "%15s", f->op) != 1)
                break;
            continue;
        }
        if (f->n == MAX_RECORDS)
            break;
        int kind = kind_of(word);
        if (kind < 0)
            break;
        record *r = &f->r[f->n];
        r->kind = (enum kind)kind;
        if (fscanf(fp, "%31s", r->name) != 1)
            break;
        f->n++;
        if (r->kind == K_INT || r->kind == K_FLOAT) {
            if (!read_number(fp, &r->scalar))
                break;
        } else if (r->kind == K_STR) {
            char value[256];
            if (fscanf(fp, "%255s", value) != 1 || !(r->data = strdup(value)))
                break;
        } else {
            double n;
            if (!read_number(fp, &n) || n < 1 || n > 1e8)
                break;
            r->n = (size_t)n;
            if (!load_array(fp, r, misalign))
                break;
        }
    }
    fclose(fp);
    if (!f || !ended || !f->op[0]) {
        snprintf(err, err_len, "%s: malformed fixture (no 'op', bad record or no 'end')", path);
        fx_free(f);
        return NULL;
    }
    return f;
}

static const record *find(const fixture *f, const char *name, enum kind kind)
{
    for (int i = 0; i < f->n; i++)
        if (f->r[i].kind == kind && strcmp(f->r[i].name, name) == 0)
            return &f->r[i];
    return NULL;
}

const char *fx_str(const fixture *f, const char *name)
{
    const record *r = find(f, name, K_STR);
    return r ? (const char *)r->data : NULL;
}

const char *fx_op(const fixture *f)
{
    return f->op;
}

int fx_int(const fixture *f, const char *name, int def)
{
    const record *r = find(f, name, K_INT);
    return r ? (int)r->scalar : def;
}

float fx_float(const fixture *f, const char *name, float def)
{
    const record *r = find(f, name, K_FLOAT);
    return r ? (float)r->scalar : def;
}

static const void *array(const fixture *f, const char *name, enum kind kind, size_t *n)
{
    const record *r = find(f, name, kind);
    if (n)
        *n = r ? r->n : 0;
    return r ? r->data : NULL;
}

const float *fx_f32(const fixture *f, const char *name, size_t *n)
{
    return array(f, name, K_F32, n);
}

const uint8_t *fx_u8(const fixture *f, const char *name, size_t *n)
{
    return array(f, name, K_U8, n);
}

const int32_t *fx_i32(const fixture *f, const char *name, size_t *n)
{
    return array(f, name, K_I32, n);
}

const double *fx_f64(const fixture *f, const char *name, size_t *n)
{
    return array(f, name, K_F64, n);
}
