/* dtype.c — rows of keys and values converted to their storage type and
 * back (dtype.h), and attn_convert_rows (attn.h). */
#include <math.h>

#include "compose.h"

void attn_widen_row(attn_dtype t, const void *row, float scale, int n, float *dst)
{
    switch (t) {
    case ATTN_F16:
        for (int d = 0; d < n; d++)
            dst[d] = attn_f16_to_f32(attn_load_u16(row, d));
        break;
    case ATTN_BF16:
        for (int d = 0; d < n; d++)
            dst[d] = attn_bf16_to_f32(attn_load_u16(row, d));
        break;
    case ATTN_I8:
        for (int d = 0; d < n; d++)
            dst[d] = (float)((const int8_t *)row)[d] * scale;
        break;
    default:
        memcpy(dst, row, (size_t)n * sizeof(float));
        break;
    }
}

void attn_widen_kv(const attn_sdpa_problem *p, int which, int b, int kvh, int rows, float *dst)
{
    const attn_dtype t = which ? p->v_store.type : p->k_store.type;
    for (int j = 0; j < rows; j++) {
        float scale;
        const void *row = attn_kv_row(p, which, b, kvh, j, &scale);
        attn_widen_row(t, row, scale, p->head_dim, dst + (size_t)j * (size_t)p->head_dim);
    }
}

const float *attn_kv_f32_rows(const attn_sdpa_problem *p, int which, int b, int kvh, int rows,
                              float *wide, size_t *ld)
{
    float unused;
    if ((which ? p->v_store.type : p->k_store.type) == ATTN_F32) {
        *ld = which ? p->v_st.row : p->k_st.row;
        return attn_kv_row(p, which, b, kvh, 0, &unused);
    }
    attn_widen_kv(p, which, b, kvh, rows, wide);
    *ld = (size_t)p->head_dim;
    return wide;
}

/* The largest |x| of a row, NaN when the row holds a NaN. */
static float row_max_abs(const float *x, int n)
{
    float m = 0.0f;
    for (int d = 0; d < n; d++) {
        float a = fabsf(x[d]);
        m = a > m || a != a ? a : m;
        if (m != m)
            break;
    }
    return m;
}

attn_status attn_check_rows(attn_dtype t, size_t rows, int n, const float *src, size_t ld)
{
    /* A finite value beyond the 16-bit types' largest is refused, not
     * rounded to infinity; an int8 row needs finite values for its scale.
     * Infinities and NaN are stored as they are in the 16-bit types. */
    const float limit = t == ATTN_F16 ? ATTN_F16_MAX : ATTN_BF16_MAX;
    for (size_t i = 0; i < rows && t != ATTN_F32; i++) {
        const float *x = src + i * ld;
        if (t == ATTN_I8) {
            if (!isfinite(row_max_abs(x, n)))
                return ATTN_ERR_RANGE;
            continue;
        }
        for (int d = 0; d < n; d++)
            if (isfinite(x[d]) && fabsf(x[d]) > limit)
                return ATTN_ERR_RANGE;
    }
    return ATTN_OK;
}

/* One int8 row: scale = max|x| / 127, q = x / scale to nearest (ties to
 * even) in [−127, 127]; an all-zero row has scale 0 and q 0. A row whose
 * largest lies within a rounding of FLT_MAX would widen ±127 · scale to
 * infinity: its scale is one step smaller, so that every q · scale stays
 * finite (and within half a step of x). */
static void store_i8_row(const float *x, int n, int8_t *q, float *scale)
{
    float m = row_max_abs(x, n), s = m / 127.0f;
    if (isinf(127.0f * s))
        s = nextafterf(s, 0.0f);
    for (int d = 0; d < n; d++) {
        float r = s > 0.0f ? rintf(x[d] / s) : 0.0f;
        /* A NaN (only a dry run stores unchecked rows) clamps too: casting
         * it to an integer is undefined behaviour. */
        q[d] = (int8_t)(r > 127.0f ? 127.0f : r >= -127.0f ? r : -127.0f);
    }
    *scale = s;
}

void attn_store_rows(attn_dtype t, size_t rows, int n, const float *src, size_t ld, void *dst,
                     size_t dst_ld, float *scale, size_t scale_ld)
{
    for (size_t i = 0; i < rows; i++) {
        const float *x = src + i * ld;
        char *row = (char *)dst + i * dst_ld * attn_dtype_bytes(t);
        switch (t) {
        case ATTN_F16:
        case ATTN_BF16:
            for (int d = 0; d < n; d++) {
                uint16_t u = t == ATTN_F16 ? attn_f32_to_f16(x[d]) : attn_f32_to_bf16(x[d]);
                memcpy(row + 2 * (size_t)d, &u, sizeof u);
            }
            break;
        case ATTN_I8:
            store_i8_row(x, n, (int8_t *)row, scale + i * scale_ld);
            break;
        default:
            memcpy(row, x, (size_t)n * sizeof(float));
            break;
        }
    }
}

attn_status attn_convert_rows(attn_dtype type, int rows, int head_dim, const float *src,
                              void *dst, float *scale)
{
    if (rows <= 0 || head_dim <= 0 || !src || !dst || attn_dtype_bytes(type) == 0
        || (type == ATTN_I8 && !scale))
        return ATTN_ERR_INVALID_ARG;
    /* src holds rows × head_dim floats: a count past the largest object is
     * an overflow, refused before anything is read (api.md §2). */
    size_t bytes = sizeof(float);
    if (!attn_mul_checked(&bytes, (size_t)rows, ATTN_SIZE_LIMIT)
        || !attn_mul_checked(&bytes, (size_t)head_dim, ATTN_SIZE_LIMIT))
        return ATTN_ERR_OVERFLOW;
    attn_status st = attn_check_rows(type, (size_t)rows, head_dim, src, (size_t)head_dim);
    if (st == ATTN_OK)
        attn_store_rows(type, (size_t)rows, head_dim, src, (size_t)head_dim, dst,
                        (size_t)head_dim, scale, 1);
    return st;
}
