/*
 * wisdom.c — the tuning store's format, machine key and lookups (wisdom.h).
 *
 *   # attnbench wisdom: written by `attnbench tune`
 *   attnbench-wisdom 1
 *   machine 9f3c...e1 vendor=AuthenticAMD family=25 model=17 stepping=1 usable=avx,...
 *   record 9f3c...e1 sdpa 9 64 causal 1 avx512 mc=168,kc=384 8123.5 9321.0 0.0042 measure 2026-11-22T13:40:00Z
 *
 * Fields of a record: machine hash, op, len_log2, head_dim, mask class,
 * threads, kernel, parameters ("-" for none), time_ns, default_time_ns,
 * max_err, level, time of tuning.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wisdom.h"

#ifndef ATTN_BUILD_OPTFLAGS
#define ATTN_BUILD_OPTFLAGS "unknown"
#endif

static const char *const op_names[ATTN_OP_COUNT] = { "sdpa", "mha", "encoder" };
static const char *const mask_names[] = { "none", "causal", "padded" };

static int lookup(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* ---- Machine key ------------------------------------------------------------------ */

void attn_machine_hardware_key(char *buf, size_t len)
{
    char vendor[16];
    int family, model, stepping;
    attn_cpu_identity(vendor, sizeof vendor, &family, &model, &stepping);
    size_t used = (size_t)snprintf(buf, len, "vendor=%s family=%d model=%d stepping=%d usable=",
                                   vendor, family, model, stepping);
    unsigned usable = attn_cpu()->usable;
    int first = 1;
    for (unsigned bit = 1; bit < (1u << ATTN_CPU_FEATURE_COUNT) && used < len; bit <<= 1)
        if (usable & bit) {
            used += (size_t)snprintf(buf + used, len - used, "%s%s", first ? "" : ",",
                                     attn_cpu_feature_name(bit));
            first = 0;
        }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (used < len)
        snprintf(buf + used, len - used, "%s l1d=%zu l2=%zu l3=%zu cpus=%ld", first ? "-" : "",
                 attn_cpu_cache_size(1), attn_cpu_cache_size(2), attn_cpu_cache_size(3), cores);
    /* The key is one line of a file: no newline may enter it. */
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

void attn_machine_key(char *buf, size_t len)
{
    char full[2048];
    attn_machine_hardware_key(full, sizeof full);
    size_t used = strnlen(full, sizeof full);
    /* The compiler too: another one's code runs at other speeds, and its
     * tuned choices are not this build's (a review: the key named only the
     * version and the flags). Its spaces become '_': one field. */
    snprintf(full + used, sizeof full - used, " version=%s flags=%s cc=", ATTN_VERSION_STRING,
             ATTN_BUILD_OPTFLAGS);
    used = strnlen(full, sizeof full);
    for (const char *c = __VERSION__; *c && used + 1 < sizeof full; c++)
        full[used++] = *c == ' ' ? '_' : *c;
    full[used] = '\0';
    for (char *p = full; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    if (used < len) {
        snprintf(buf, len, "%s", full);
        return;
    }
    /* Too long for buf: its head, then a hash of the whole key. Cut short,
     * the compiler and flags at its end fell off, and two builds shared
     * their records (a gcc and a clang build of long flags, one key). */
    const size_t mark = 22;   /* " key#" and 16 hex digits, and the NUL */
    if (len <= mark) {
        snprintf(buf, len, "%s", "");
        return;
    }
    snprintf(buf, len, "%.*s key#%016" PRIx64, (int)(len - mark), full, attn_machine_hash(full));
}

uint64_t attn_machine_hash(const char *key)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- Buckets ------------------------------------------------------------------------ */

void attn_bucket_of(attn_bucket *b, int op, int q_len, int kv_len, int head_dim,
                    const attn_mask *mask, attn_dtype k_type, attn_dtype v_type, int threads)
{
    int len = q_len > kv_len ? q_len : kv_len, e = 0;
    while (e < 31 && (1L << e) < len)
        e++;
    b->op = op;
    b->len_log2 = e;
    b->head_dim = head_dim;
    b->mask_class = !mask ? ATTN_MASK_CLASS_NONE
                  : (mask->key_padding || mask->keep || mask->bias) ? ATTN_MASK_CLASS_PADDED
                  : mask->causal ? ATTN_MASK_CLASS_CAUSAL : ATTN_MASK_CLASS_NONE;
    b->threads = threads;
    b->k_type = k_type;
    b->v_type = v_type;
    b->decode = (op == ATTN_OP_SDPA || op == ATTN_OP_MHA) && q_len <= ATTN_BUCKET_DECODE_QUERIES
             && kv_len > q_len;
}

/* "f16", or "f16/i8" for keys and values of two types. */
static void kv_format(const attn_bucket *b, char *buf, size_t len)
{
    if (b->k_type == b->v_type)
        snprintf(buf, len, "%s", attn_dtype_name(b->k_type));
    else
        snprintf(buf, len, "%s/%s", attn_dtype_name(b->k_type), attn_dtype_name(b->v_type));
}

/* kv_format's inverse: 0, or -1 for text that names no type. */
static int kv_parse(const char *s, attn_bucket *b)
{
    char k[8];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n >= sizeof k)
        return -1;
    memcpy(k, s, n);
    k[n] = '\0';
    int kt = attn_dtype_of_name(k), vt = slash ? attn_dtype_of_name(slash + 1) : kt;
    if (kt < 0 || vt < 0 || (slash && kt == vt))   /* one spelling per bucket */
        return -1;
    b->k_type = (attn_dtype)kt;
    b->v_type = (attn_dtype)vt;
    return 0;
}

void attn_bucket_format(const attn_bucket *b, char *buf, size_t len)
{
    char kv[16] = "";
    if (b->k_type != ATTN_F32 || b->v_type != ATTN_F32)
        kv_format(b, kv, sizeof kv);
    snprintf(buf, len, "%s%s L<=%ld Dh%d %s %dthr%s%s",
             b->op >= 0 && b->op < ATTN_OP_COUNT ? op_names[b->op] : "?",
             b->decode ? " decode" : "", 1L << b->len_log2, b->head_dim,
             mask_names[b->mask_class], b->threads, *kv ? " kv=" : "", kv);
}

int attn_bucket_equal(const attn_bucket *a, const attn_bucket *b)
{
    return a->op == b->op && a->len_log2 == b->len_log2 && a->head_dim == b->head_dim
        && a->mask_class == b->mask_class && a->threads == b->threads
        && a->k_type == b->k_type && a->v_type == b->v_type && a->decode == b->decode;
}

/* ---- Records --------------------------------------------------------------------------- */

static int register_machine(attn_wisdom *w, uint64_t hash, const char *key)
{
    for (int i = 0; i < w->n_machines; i++)
        if (w->machine_hash[i] == hash)
            return 0;
    if (w->n_machines == (int)(sizeof w->machine_hash / sizeof w->machine_hash[0]))
        return -1;
    w->machine_hash[w->n_machines] = hash;
    snprintf(w->machine_key[w->n_machines], sizeof w->machine_key[0], "%s", key);
    w->n_machines++;
    return 0;
}

/* The math of a record's kernel; an unknown kernel's is taken as fp32. */
static int record_math(const attn_wisdom_record *r)
{
    int m = attn_kernel_math(r->kernel);
    return m < 0 ? ATTN_F32 : m;
}

static int same_slot(const attn_wisdom_record *a, const attn_wisdom_record *b)
{
    return a->machine == b->machine && attn_bucket_equal(&a->bucket, &b->bucket)
        && record_math(a) == record_math(b);
}

const attn_wisdom_record *attn_wisdom_find_other_math(const attn_wisdom *w,
                                                      const attn_wisdom_record *r)
{
    for (int i = 0; i < w->n; i++)
        if (w->rec[i].machine == r->machine && attn_bucket_equal(&w->rec[i].bucket, &r->bucket)
            && record_math(&w->rec[i]) != record_math(r))
            return &w->rec[i];
    return NULL;
}

const attn_wisdom_record *attn_wisdom_find_slot(const attn_wisdom *w,
                                                const attn_wisdom_record *r)
{
    for (int i = 0; i < w->n; i++)
        if (same_slot(&w->rec[i], r))
            return &w->rec[i];
    return NULL;
}

static int level_rank(const char *level)
{
    return strcmp(level, "patient") == 0 ? 2 : strcmp(level, "measure") == 0 ? 1
         : strcmp(level, "estimate") == 0 ? 0 : -1;
}

int attn_wisdom_more_thorough_held(const attn_wisdom *w, const attn_wisdom_record *r)
{
    const attn_wisdom_record *held = attn_wisdom_find_slot(w, r);
    return held && level_rank(held->level) > level_rank(r->level);
}

int attn_wisdom_put(attn_wisdom *w, const attn_wisdom_record *r, const char *machine_key)
{
    if (machine_key && register_machine(w, r->machine, machine_key) != 0)
        return -1;
    const attn_wisdom_record *held = attn_wisdom_find_slot(w, r);
    if (held) {
        w->rec[held - w->rec] = *r;
        return 0;
    }
    if (w->n == ATTN_WISDOM_MAX_RECORDS)
        return -1;
    w->rec[w->n++] = *r;
    return 0;
}

const attn_wisdom_record *attn_wisdom_find(const attn_wisdom *w, uint64_t machine,
                                           const attn_bucket *b)
{
    for (int i = 0; w && i < w->n; i++)
        if (w->rec[i].machine == machine && attn_bucket_equal(&w->rec[i].bucket, b))
            return &w->rec[i];
    return NULL;
}

/* ---- File format ------------------------------------------------------------------------- */

/* A decimal int field within [lo, hi] into *out: 0, or -1 (a value past
 * int once wrapped into another, valid bucket: Dh 4294967304 read as 8). */
static int int_field(const char *text, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_params(char *text, attn_wisdom_record *r)
{
    r->n_params = 0;
    if (strcmp(text, "-") == 0)
        return 0;
    for (char *save = NULL, *item = strtok_r(text, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='), *end;
        if (!eq || eq == item || r->n_params == ATTN_MAX_PARAMS
            || (size_t)(eq - item) >= sizeof r->param_name[0])
            return -1;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || *end || errno || v < -2147483647L || v > 2147483647L)
            return -1;
        memcpy(r->param_name[r->n_params], item, (size_t)(eq - item));
        r->param_name[r->n_params][eq - item] = '\0';
        r->param_value[r->n_params++] = (int)v;
    }
    return 0;
}

/* A record line of the given schema: schema 2 has the keys' and values'
 * storage after the thread count; schema 1, which has none, is fp32. */
static int parse_record(char *line, int schema, attn_wisdom_record *r)
{
    char *f[14], *save = NULL;
    const int fields = schema == 1 ? 13 : 14;
    int n = 0;
    for (char *t = strtok_r(line, " \t", &save); t && n < 14; t = strtok_r(NULL, " \t", &save))
        f[n++] = t;
    if (n != fields || strtok_r(NULL, " \t", &save))
        return -1;
    char *end;
    memset(r, 0, sizeof *r);
    if (schema == 1)
        r->bucket.k_type = r->bucket.v_type = ATTN_F32;
    else {
        if (kv_parse(f[6], &r->bucket) != 0)
            return -1;
        for (int i = 6; i < 13; i++)   /* the fields after it, at schema 1's places */
            f[i] = f[i + 1];
    }
    errno = 0;
    r->machine = strtoull(f[0], &end, 16);
    if (*end || errno)
        return -1;
    /* Schema 3: a decoding step's bucket is its op's name + "-decode". */
    char *suffix = schema >= 3 ? strstr(f[1], "-decode") : NULL;
    if (suffix && strcmp(suffix, "-decode") == 0) {
        *suffix = '\0';
        r->bucket.decode = 1;
    }
    r->bucket.op = lookup(f[1], op_names, ATTN_OP_COUNT);
    if (r->bucket.decode && r->bucket.op != ATTN_OP_SDPA && r->bucket.op != ATTN_OP_MHA)
        return -1;
    if (r->bucket.op < 0 || int_field(f[2], 0, 31, &r->bucket.len_log2) != 0
        || int_field(f[3], 1, INT_MAX, &r->bucket.head_dim) != 0)
        return -1;
    r->bucket.mask_class = lookup(f[4], mask_names, 3);
    if (r->bucket.mask_class < 0 || int_field(f[5], 1, INT_MAX, &r->bucket.threads) != 0)
        return -1;
    if (strlen(f[6]) >= sizeof r->kernel || parse_params(f[7], r) != 0)
        return -1;
    strcpy(r->kernel, f[6]);
    /* Finite: an infinite time or error is no measurement (and "inf" would
     * win or lose every comparison of records). */
    r->time_ns = strtod(f[8], &end);
    if (*end || !(r->time_ns >= 0) || !isfinite(r->time_ns))
        return -1;
    r->default_time_ns = strtod(f[9], &end);
    if (*end || !(r->default_time_ns >= 0) || !isfinite(r->default_time_ns))
        return -1;
    r->max_err = strtod(f[10], &end);
    if (*end || !(r->max_err >= 0) || !isfinite(r->max_err) || strlen(f[11]) >= sizeof r->level
        || strlen(f[12]) >= sizeof r->when)
        return -1;
    strcpy(r->level, f[11]);
    strcpy(r->when, f[12]);
    return 0;
}

int attn_wisdom_parse(FILE *f, attn_wisdom *w, char *err, size_t err_len)
{
    char line[1024];
    int lineno = 0, header = 0, schema = 0;
    memset(w, 0, sizeof *w);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            snprintf(err, err_len, "line %d: too long", lineno);
            return -1;
        }
        if (n == 0 || line[n - 1] != '\n') {
            snprintf(err, err_len, "line %d: truncated (no newline)", lineno);
            return -1;
        }
        line[n - 1] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (!header) {
            char extra;
            if (sscanf(line, "attnbench-wisdom %d %c", &schema, &extra) != 1) {
                snprintf(err, err_len, "line %d: not an attnbench wisdom file", lineno);
                return -1;
            }
            if (schema < 1 || schema > ATTN_WISDOM_SCHEMA) {
                snprintf(err, err_len, "schema %d, this attnbench reads schemas 1 to %d",
                         schema, ATTN_WISDOM_SCHEMA);
                return schema > ATTN_WISDOM_SCHEMA ? -3 : -1;   /* a newer attnbench's */
            }
            header = 1;
            continue;
        }
        if (strncmp(line, "machine ", 8) == 0) {
            char *end;
            errno = 0;
            uint64_t h = strtoull(line + 8, &end, 16);
            /* A key the record would have to cut (machine_key's size) is
             * refused: written back cut, it would fail its own hash. */
            if (end == line + 8 || *end != ' ' || errno || attn_machine_hash(end + 1) != h
                || strlen(end + 1) >= sizeof w->machine_key[0]
                || register_machine(w, h, end + 1) != 0) {
                snprintf(err, err_len, "line %d: bad machine line", lineno);
                return -1;
            }
            continue;
        }
        attn_wisdom_record r;
        if (strncmp(line, "record ", 7) != 0 || parse_record(line + 7, schema, &r) != 0) {
            snprintf(err, err_len, "line %d: not a valid record", lineno);
            return -1;
        }
        int known = 0;
        for (int i = 0; i < w->n_machines; i++)
            known |= w->machine_hash[i] == r.machine;
        if (!known || attn_wisdom_put(w, &r, NULL) != 0) {
            snprintf(err, err_len, "line %d: %s", lineno,
                     known ? "too many records" : "record of an undeclared machine");
            return -1;
        }
    }
    if (ferror(f)) {
        snprintf(err, err_len, "read error: %s", strerror(errno));
        return -3;
    }
    if (!header) {
        snprintf(err, err_len, "empty: no attnbench-wisdom header");
        return -1;
    }
    return 0;
}

int attn_wisdom_read(const char *path, attn_wisdom *w, char *err, size_t err_len)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        int missing = !f && errno == ENOENT;
        snprintf(err, err_len, "%s: %s", path, !f ? strerror(errno) : "not a regular file");
        memset(w, 0, sizeof *w);
        if (f)
            fclose(f);
        return missing ? -2 : -3;
    }
    int rc = attn_wisdom_parse(f, w, err, err_len);
    fclose(f);
    return rc;
}

int attn_wisdom_write(FILE *f, const attn_wisdom *w)
{
    fprintf(f, "# attnbench wisdom: written by `attnbench tune`; records of other machines are\n"
               "# kept but never applied. Fields: machine op (-decode: a decoding step's\n"
               "# bucket) len_log2 head_dim mask threads\n"
               "# kv (keys/values stored: f32, f16, bf16, i8; k/v when they differ) kernel\n"
               "# params time_ns default_time_ns max_err level tuned_at\n"
               "attnbench-wisdom %d\n", ATTN_WISDOM_SCHEMA);
    for (int m = 0; m < w->n_machines; m++)
        fprintf(f, "machine %016" PRIx64 " %s\n", w->machine_hash[m], w->machine_key[m]);
    for (int i = 0; i < w->n; i++) {
        const attn_wisdom_record *r = &w->rec[i];
        char kv[16];
        kv_format(&r->bucket, kv, sizeof kv);
        fprintf(f, "record %016" PRIx64 " %s%s %d %d %s %d %s %s ", r->machine,
                op_names[r->bucket.op], r->bucket.decode ? "-decode" : "",
                r->bucket.len_log2, r->bucket.head_dim,
                mask_names[r->bucket.mask_class], r->bucket.threads, kv, r->kernel);
        for (int p = 0; p < r->n_params; p++)
            fprintf(f, "%s%s=%d", p ? "," : "", r->param_name[p], r->param_value[p]);
        fprintf(f, "%s %.6g %.6g %.6g %s %s\n", r->n_params ? "" : "-", r->time_ns,
                r->default_time_ns, r->max_err, r->level, r->when);
    }
    return ferror(f) ? -1 : 0;
}

int attn_cache_dir(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (xdg && *xdg)
        n = snprintf(buf, len, "%s/attnbench", xdg);
    else if (home && *home)
        n = snprintf(buf, len, "%s/.cache/attnbench", home);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

int attn_wisdom_default_path(char *buf, size_t len)
{
    const char *env = getenv("ATTN_WISDOM");
    char dir[PATH_MAX];
    int n;
    if (env && *env)
        n = snprintf(buf, len, "%s", env);
    else if (attn_cache_dir(dir, sizeof dir) == 0)
        n = snprintf(buf, len, "%s/wisdom", dir);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}
