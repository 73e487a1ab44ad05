/* shape.c — the ops table built from ops.def, and what every op's shapes
 * share: the keys, the parser, the canonical text, the label and the
 * visible pairs. What differs by op is read from its row (ops.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

#define AB_OP_ROW(SYM, name) extern const ab_op_row ab_op__##name;
#include "ops.def"
#undef AB_OP_ROW

static const ab_op_row *const rows[AB_OP_COUNT] = {
#define AB_OP_ROW(SYM, name) [AB_OP_##SYM] = &ab_op__##name,
#include "ops.def"
#undef AB_OP_ROW
};

const ab_op_row *ab_op_row_of(ab_op op)
{
    return (op >= 0 && op < AB_OP_COUNT) ? rows[op] : NULL;
}

const char *ab_op_name(ab_op op)
{
    return (op >= 0 && op < AB_OP_COUNT) ? rows[op]->name : "?";
}

int ab_op_parse(const char *name, ab_op *op)
{
    for (int i = 0; i < AB_OP_COUNT; i++)
        if (strcmp(name, rows[i]->name) == 0) {
            *op = (ab_op)i;
            return 0;
        }
    return -1;
}

static char op_list[32 * AB_OP_COUNT];
static void make_op_list(void)
{
    size_t used = 0;
    for (int i = 0; i < AB_OP_COUNT; i++)
        used += (size_t)snprintf(op_list + used, sizeof op_list - used, "%s%s", i ? ", " : "",
                                 rows[i]->name);
}

const char *ab_op_list(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_op_list);
    return op_list;
}

int ab_op_takes(ab_op op, ab_key k)
{
    return op >= 0 && op < AB_OP_COUNT && k >= 0 && k < AB_KEY_COUNT
        && (rows[op]->keys >> k & 1u);
}

/* ---- Keys --------------------------------------------------------------------------- */

typedef enum key_kind { SIZE, MASK, NORM, ACT, NUMBER, BIT, DTYPE } key_kind;

static const struct {
    const char *name;
    key_kind kind;
} keys[AB_KEY_COUNT] = {
#define AB_KEY_ROW(k, kind_) [AB_KEY_##k] = { #k, kind_ },
    AB_SHAPE_KEYS(AB_KEY_ROW)
#undef AB_KEY_ROW
};

static const char *const mask_names[AB_MASK_COUNT] = {
    "none", "causal", "padding", "padall", "keep", "bias", "all", "causal-br",
};
static const char *const act_names[] = { "gelu", "gelu-tanh", "relu" };
static const char *const norm_names[] = { "post", "pre" };   /* by norm_first */

const char *ab_mask_name(ab_mask_kind m)
{
    return (m >= 0 && m < AB_MASK_COUNT) ? mask_names[m] : "?";
}

const char *ab_key_name(ab_key k)
{
    return (k >= 0 && k < AB_KEY_COUNT) ? keys[k].name : "?";
}

static int lookup(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    return -1;
}

/* Every op's defaults (ops.h); a row's own_defaults override them. F's
 * depends on D and comes later. */
static const int common_default[AB_KEY_COUNT] = {
    [AB_KEY_B] = 1, [AB_KEY_H] = 1, [AB_KEY_Dh] = 64, [AB_KEY_L] = 128, [AB_KEY_P] = 128,
    [AB_KEY_N] = 128, [AB_KEY_layers] = 1, [AB_KEY_norm] = 1, [AB_KEY_act] = ATTN_ACT_GELU_ERF,
    [AB_KEY_mask] = AB_MASK_NONE,
};

double ab_shape_value(const ab_shape *s, ab_key k)
{
    switch (k) {
    case AB_KEY_B:      return s->batch;
    case AB_KEY_H:      return s->heads;
    case AB_KEY_Hkv:    return ab_shape_kv_heads(s);
    case AB_KEY_L:
    case AB_KEY_Lq:
    case AB_KEY_P:      return s->q_len;
    case AB_KEY_Lk:
    case AB_KEY_M:      return s->kv_len;
    case AB_KEY_N:      return s->steps;
    case AB_KEY_layers: return s->layers;
    case AB_KEY_Dh:     return s->head_dim;
    case AB_KEY_D:      return (double)s->heads * s->head_dim;
    case AB_KEY_F:      return s->d_ff;
    case AB_KEY_mask:   return s->mask;
    case AB_KEY_norm:   return s->norm_first;
    case AB_KEY_act:    return s->act;
    case AB_KEY_scale:  return s->scale;
    case AB_KEY_cross:  return s->cross;
    case AB_KEY_kv:     return s->kv_type;
    default:            return 0.0;
    }
}

/* The name of an enum key's value (NULL for the numeric kinds). */
static const char *key_text(const ab_shape *s, ab_key k)
{
    switch (keys[k].kind) {
    case MASK: return ab_mask_name(s->mask);
    case NORM: return norm_names[s->norm_first != 0];
    case ACT:  return s->act >= 0 && s->act < 3 ? act_names[s->act] : "?";
    case DTYPE: return attn_dtype_name(s->kv_type);
    default:   return NULL;
    }
}

/* ---- Parsing -------------------------------------------------------------------------- */

/* "op=X takes no K (its keys: ...)" and the unknown-key message name the keys. */
static void list_keys(unsigned set, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < AB_KEY_COUNT && used < len; k++)
        if (set >> k & 1u)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? " " : "", keys[k].name);
}

static void list_masks(unsigned set, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int m = 0; m < AB_MASK_COUNT && used < len; m++)
        if (set >> m & 1u)
            used += (size_t)snprintf(out + used, len - used, "%s%s", used ? ", " : "",
                                     mask_names[m]);
}

long ab_strtol_digits(const char *s, char **end)
{
    if (!isdigit((unsigned char)s[s[0] == '-'])) {
        *end = (char *)s;
        return 0;
    }
    return strtol(s, end, 10);
}

/* Reads value v of key k into *out. 0, or -1 with a reason. */
static int read_value(ab_key k, const char *v, ab_shape_keys *out, char *err, size_t err_len)
{
    const char *name = keys[k].name;
    char *end;
    int i;
    switch (keys[k].kind) {
    case SIZE: {
        errno = 0;
        long x = ab_strtol_digits(v, &end);
        if (end == v || *end != '\0' || errno == ERANGE || x < 1
            || x > (1L << 30)) {
            snprintf(err, err_len, "shape: %s=%s is not a size in [1, 2^30]", name, v);
            return -1;
        }
        out->v[k] = (int)x;
        return 0;
    }
    case MASK:
        if ((i = lookup(v, mask_names, AB_MASK_COUNT)) < 0) {
            snprintf(err, err_len, "shape: unknown mask '%s' (none, causal, causal-br, padding, "
                     "padall, keep, bias, all)", v);
            return -1;
        }
        break;
    case NORM:
        if ((i = lookup(v, norm_names, 2)) < 0) {
            snprintf(err, err_len, "shape: norm must be pre or post, not '%s'", v);
            return -1;
        }
        break;
    case ACT:
        if ((i = lookup(v, act_names, 3)) < 0) {
            snprintf(err, err_len, "shape: unknown act '%s' (gelu, gelu-tanh, relu)", v);
            return -1;
        }
        break;
    case DTYPE:
        if ((i = attn_dtype_of_name(v)) < 0) {
            snprintf(err, err_len, "shape: unknown %s '%s' (f32, f16, bf16, i8)", name, v);
            return -1;
        }
        break;
    case NUMBER:
        out->scale = strtof(v, &end);
        if (*end != '\0' || !isfinite(out->scale)) {
            snprintf(err, err_len, "shape: %s=%s is not a finite number", name, v);
            return -1;
        }
        return 0;
    case BIT:
    default:
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
            snprintf(err, err_len, "shape: %s must be 0 or 1", name);
            return -1;
        }
        i = v[0] == '1';
        break;
    }
    out->v[k] = i;
    return 0;
}

/* The next "key=value" item of the comma-separated text at *at (NULL at
 * the end), split in place. 0, or -1 with a reason when it is not one. */
static int next_item(char **at, char **key, char **value, char *err, size_t err_len)
{
    char *item = *at;
    while (*item == ',')
        item++;
    if (*item == '\0') {
        *key = NULL;
        return 0;
    }
    char *comma = strchr(item, ',');
    *at = comma ? comma + 1 : item + strlen(item);
    if (comma)
        *comma = '\0';
    char *eq = strchr(item, '=');
    if (!eq || eq == item || eq[1] == '\0') {
        snprintf(err, err_len, "shape: '%s' is not key=value", item);
        return -1;
    }
    *eq = '\0';
    *key = item;
    *value = eq + 1;
    return 0;
}

/* Reads the text's keys into k: op first (it says which keys the rest may
 * be), then every other key, each checked against the op's row. */
static int read_keys(const char *text, ab_op *op, ab_shape_keys *k, char *err, size_t err_len)
{
    char buf[512], *at, *key, *value;
    if (strlen(text) >= sizeof buf) {
        snprintf(err, err_len, "shape: text too long");
        return -1;
    }
    int ops = 0;
    for (int pass = 0; pass < 2; pass++) {
        int rc;
        strcpy(buf, text);
        for (at = buf; (rc = next_item(&at, &key, &value, err, err_len)) == 0 && key;) {
            if (strcmp(key, "op") == 0) {
                if (pass == 0 && ++ops > 1) {
                    snprintf(err, err_len, "shape: op given twice");
                    return -1;
                }
                if (pass == 0 && ab_op_parse(value, op) != 0) {
                    snprintf(err, err_len, "shape: unknown op '%s' (%s)", value, ab_op_list());
                    return -1;
                }
                continue;
            }
            if (pass == 0)
                continue;
            int i = 0;
            while (i < AB_KEY_COUNT && strcmp(key, keys[i].name) != 0)
                i++;
            char names[128];
            if (i == AB_KEY_COUNT) {
                list_keys((1u << AB_KEY_COUNT) - 1, names, sizeof names);
                snprintf(err, err_len, "shape: unknown key '%s' (op %s)", key, names);
                return -1;
            }
            if (!ab_op_takes(*op, (ab_key)i)) {
                list_keys(ab_op_row_of(*op)->keys, names, sizeof names);
                snprintf(err, err_len, "shape: op=%s takes no %s (its keys: %s)", ab_op_name(*op),
                         key, names);
                return -1;
            }
            if (k->given >> i & 1u) {   /* "B=1,B=2": which one was meant? */
                snprintf(err, err_len, "shape: %s given twice", key);
                return -1;
            }
            if (read_value((ab_key)i, value, k, err, err_len) != 0)
                return -1;
            k->given |= 1u << i;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

int ab_shape_parse(const char *text, ab_op default_op, ab_shape *s, char *err, size_t err_len)
{
    ab_op op = default_op;
    ab_shape_keys k = { .given = 0 };
    if (!ab_op_row_of(op)) {
        snprintf(err, err_len, "shape: no such op");
        return -1;
    }
    if (read_keys(text, &op, &k, err, err_len) != 0)
        return -1;
    const ab_op_row *row = ab_op_row_of(op);
    for (int i = 0; i < AB_KEY_COUNT; i++)
        if (!(k.given >> i & 1u))
            k.v[i] = row->own_defaults >> i & 1u ? row->default_of[i] : common_default[i];

    int h = k.v[AB_KEY_H], dh = k.v[AB_KEY_Dh];
    char names[128];
    if (!(row->masks >> k.v[AB_KEY_mask] & 1u)) {
        list_masks(row->masks, names, sizeof names);
        snprintf(err, err_len, "shape: op=%s takes mask %s, not '%s'", row->name, names,
                 mask_names[k.v[AB_KEY_mask]]);
        return -1;
    }
    if (k.given & AB_KEY_BIT(D)) {
        if (k.v[AB_KEY_D] % h != 0) {
            snprintf(err, err_len, "shape: D=%d is not a multiple of H=%d", k.v[AB_KEY_D], h);
            return -1;
        }
        dh = k.v[AB_KEY_D] / h;
    }
    /* D = H·Dh and the default F = 4·D must be sizes too (an int each).
     * An op without F is held to the same bound, so that one D is valid
     * for every op: a shape's text may change its op and nothing else. */
    int default_f = !(k.given & AB_KEY_BIT(F));
    if ((long long)h * dh > (1LL << 30) || (default_f && 4LL * h * dh > (1LL << 30))) {
        snprintf(err, err_len, "shape: H·Dh = %lld%s is larger than 2^30", (long long)h * dh,
                 default_f ? " (times 4: the default F)" : "");
        return -1;
    }
    if ((k.given & AB_KEY_BIT(Hkv)) && h % k.v[AB_KEY_Hkv] != 0) {
        snprintf(err, err_len, "shape: Hkv=%d does not divide H=%d", k.v[AB_KEY_Hkv], h);
        return -1;
    }
    if (k.v[AB_KEY_layers] > AB_MAX_LAYERS) {
        snprintf(err, err_len, "shape: layers=%d is more than %d", k.v[AB_KEY_layers],
                 AB_MAX_LAYERS);
        return -1;
    }
    /* The fields every op fills alike; a key the op does not take leaves
     * its field 0, so that shapes of one op compare equal field by field. */
    ab_shape r = { .op = op, .batch = k.v[AB_KEY_B], .heads = h, .head_dim = dh,
                   .mask = (ab_mask_kind)k.v[AB_KEY_mask] };
    const unsigned takes = row->keys;
    if (takes & AB_KEY_BIT(Hkv))
        r.kv_heads = (k.given & AB_KEY_BIT(Hkv)) && k.v[AB_KEY_Hkv] != h ? k.v[AB_KEY_Hkv] : 0;
    if (takes & AB_KEY_BIT(F))
        r.d_ff = default_f ? 4 * h * dh : k.v[AB_KEY_F];
    if (takes & AB_KEY_BIT(norm))
        r.norm_first = k.v[AB_KEY_norm];
    if (takes & AB_KEY_BIT(act))
        r.act = (attn_activation)k.v[AB_KEY_act];
    if (takes & AB_KEY_BIT(scale))
        r.scale = k.scale;
    if (takes & AB_KEY_BIT(N))
        r.steps = k.v[AB_KEY_N];
    if (takes & AB_KEY_BIT(layers))
        r.layers = k.v[AB_KEY_layers];
    if (takes & AB_KEY_BIT(kv))
        r.kv_type = (attn_dtype)k.v[AB_KEY_kv];
    if (row->resolve(&k, &r, err, err_len) != 0)
        return -1;
    *s = r;
    return 0;
}

void ab_lengths_from_keys(const ab_shape_keys *k, ab_shape *s)
{
    int lq_given = (k->given & AB_KEY_BIT(Lq)) != 0;
    s->q_len = lq_given ? k->v[AB_KEY_Lq] : k->v[AB_KEY_L];
    s->kv_len = k->given & AB_KEY_BIT(Lk) ? k->v[AB_KEY_Lk] : lq_given ? s->q_len : k->v[AB_KEY_L];
}

/* ---- Text, label and values ------------------------------------------------------------- */

/* Appends to buf as snprintf does, never past len. */
static void put(char *buf, size_t len, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    *used = n < 0 ? len : *used + (size_t)n;
}

/* Whether key k is written in s's text or label: Hkv, cross and scale only
 * when set, and (in_label) the mask only when there is one. */
static int shown(const ab_shape *s, ab_key k, int in_label)
{
    switch (k) {
    case AB_KEY_Hkv:   return s->kv_heads != 0;
    case AB_KEY_cross: return s->cross != 0;
    case AB_KEY_scale: return s->scale != 0.0f;
    case AB_KEY_kv:    return s->kv_type != ATTN_F32;
    case AB_KEY_mask:  return !in_label || s->mask != AB_MASK_NONE;
    default:           return 1;
    }
}

/* One key as the text writes it ("Dh=64", "mask=causal") or the label
 * ("Dh64", "causal", "cross", "kvf16": a storage type is named with its
 * key, as "f16" alone would not say of what), after sep. */
static void put_key(const ab_shape *s, ab_key k, int in_label, const char *sep, char *buf,
                    size_t len, size_t *used)
{
    const char *name = keys[k].name, *text = key_text(s, k);
    if (text && in_label)
        put(buf, len, used, "%s%s%s", sep, keys[k].kind == DTYPE ? name : "", text);
    else if (text)
        put(buf, len, used, "%s%s=%s", sep, name, text);
    else if (k == AB_KEY_scale)
        put(buf, len, used, in_label ? "%s%s%g" : "%s%s=%.9g", sep, name, s->scale);
    else if (k == AB_KEY_cross && in_label)
        put(buf, len, used, "%s%s", sep, name);
    else
        put(buf, len, used, in_label ? "%s%s%.0f" : "%s%s=%.0f", sep, name, ab_shape_value(s, k));
}

/* The row's text or label list, each shown key after a separator (the
 * first after `first`). */
static void put_keys(const ab_shape *s, const ab_key *list, int in_label, const char *first,
                     char *buf, size_t len, size_t *used)
{
    const char *sep = first, *next = in_label ? "_" : ",";
    for (int i = 0; list[i] != AB_KEY_END; i++) {
        ab_key k = list[i];
        if (k == AB_KEY_LENGTHS) {
            put_key(s, s->q_len == s->kv_len ? AB_KEY_L : AB_KEY_Lq, in_label, sep, buf, len, used);
            if (s->q_len != s->kv_len)
                put_key(s, AB_KEY_Lk, in_label, next, buf, len, used);
        } else if (shown(s, k, in_label)) {
            put_key(s, k, in_label, sep, buf, len, used);
        } else {
            continue;
        }
        sep = next;
    }
}

void ab_shape_format(const ab_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    put(buf, len, &used, "op=%s", ab_op_name(s->op));
    if (ab_op_row_of(s->op))
        put_keys(s, ab_op_row_of(s->op)->text, 0, ",", buf, len, &used);
}

void ab_shape_label(const ab_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    if (ab_op_row_of(s->op))
        put_keys(s, ab_op_row_of(s->op)->label, 1, "", buf, len, &used);
}

int ab_shape_key_values(const ab_shape *s, ab_key_value out[AB_KEY_COUNT])
{
    int n = 0;
    for (int k = 0; k < AB_KEY_COUNT; k++) {
        if (!ab_op_takes(s->op, (ab_key)k))
            continue;
        if (k == AB_KEY_L && ab_op_takes(s->op, AB_KEY_Lq) && s->q_len != s->kv_len)
            continue;   /* two lengths: Lq and Lk say them */
        ab_key_value kv = { (ab_key)k, key_text(s, (ab_key)k), ab_shape_value(s, (ab_key)k) };
        out[n++] = kv;
    }
    return n;
}

/* ---- Work --------------------------------------------------------------------------------- */

int ab_shape_causal(const ab_shape *s)
{
    return s->mask == AB_MASK_CAUSAL || s->mask == AB_MASK_ALL ? ATTN_CAUSAL_TOP_LEFT
         : s->mask == AB_MASK_CAUSAL_BR ? ATTN_CAUSAL_BOTTOM_RIGHT : 0;
}

int ab_shape_kv_heads(const ab_shape *s)
{
    return s->kv_heads > 0 ? s->kv_heads : s->heads;
}

int ab_shape_covers(const ab_shape *big, const ab_shape *small)
{
    const ab_shape *b = big, *s = small;
    if (b->op != s->op || b->cross != s->cross || b->mask != s->mask
        || b->norm_first != s->norm_first || b->act != s->act || b->scale != s->scale
        || b->kv_type != s->kv_type)
        return 0;
    return b->batch >= s->batch && b->heads >= s->heads
           && ab_shape_kv_heads(b) >= ab_shape_kv_heads(s) && b->q_len >= s->q_len
           && b->kv_len >= s->kv_len && b->head_dim >= s->head_dim && b->d_ff >= s->d_ff
           && b->steps >= s->steps && b->layers >= s->layers;
}

double ab_visible_pairs(const ab_shape *s)
{
    double lq = s->q_len, lk = s->kv_len;
    int causal = ab_shape_causal(s);
    if (!causal)
        return lq * lk;
    /* Row i sees min(i + 1 + shift, Lk) keys, none while that is <= 0:
     * skip the rows that see none, then a triangle 1, 2, ... up to the
     * first row that sees all Lk, then full rows. */
    double shift = causal == ATTN_CAUSAL_BOTTOM_RIGHT ? lk - lq : 0.0;
    double first = shift < 0.0 ? -shift : 0.0;          /* rows before it see nothing */
    double start = first + 1.0 + shift;                  /* keys seen by row `first` */
    double tri = fmin(lk - start + 1.0, lq - first);     /* rows until one sees all Lk */
    tri = tri > 0.0 ? tri : 0.0;
    double pairs = tri * start + tri * (tri - 1.0) / 2.0;
    return pairs + (lq - first - tri) * lk;
}

double ab_mask_bytes(const ab_shape *s)
{
    double b = s->batch, lk = s->kv_len, pairs = ab_visible_pairs(s);
    switch (s->mask) {
    case AB_MASK_PADDING:
    case AB_MASK_PADALL:
        return b * lk;
    case AB_MASK_KEEP:
        return b * pairs;
    case AB_MASK_BIAS:
        return 4.0 * b * pairs;
    case AB_MASK_ALL:
        return b * lk + pairs + 4.0 * pairs;
    default:
        return 0.0;
    }
}

double ab_kv_row_bytes(const ab_shape *s)
{
    return (double)s->head_dim * (double)attn_dtype_bytes(s->kv_type)
         + (s->kv_type == ATTN_I8 ? sizeof(float) : 0.0);
}

double ab_shape_flops(const ab_shape *s)
{
    const ab_op_row *row = ab_op_row_of(s->op);
    return row ? row->flops(s) : 0.0;
}

double ab_shape_bytes(const ab_shape *s)
{
    const ab_op_row *row = ab_op_row_of(s->op);
    return row ? row->bytes(s) : 0.0;
}

double ab_shape_pass_bytes(const ab_shape *s)
{
    const ab_op_row *row = ab_op_row_of(s->op);
    return !row ? 0.0 : row->pass_bytes ? row->pass_bytes(s) : row->bytes(s);
}

void ab_shape_bucket(const ab_shape *s, int threads, attn_bucket *b)
{
    const ab_op_row *row = ab_op_row_of(s->op);
    if (row->bucket.by_sequence) {
        int len = s->q_len + s->steps;
        attn_bucket_of(b, row->bucket.wisdom_op, len, len, s->head_dim, NULL, s->kv_type,
                       s->kv_type, threads);   /* its cache's storage */
        return;
    }
    /* Only which parts of a mask are set matters to the bucket. */
    attn_mask causal = { .causal = 1 }, padded = { .key_padding = (const uint8_t *)"" };
    const attn_mask *m = s->mask == AB_MASK_NONE ? NULL
                       : s->mask == AB_MASK_CAUSAL || s->mask == AB_MASK_CAUSAL_BR ? &causal
                       : &padded;
    attn_bucket_of(b, row->bucket.wisdom_op, s->q_len, s->kv_len, s->head_dim, m, s->kv_type,
                   s->kv_type, threads);
}
