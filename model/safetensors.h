/*
 * safetensors.h — a strict reader of the safetensors format, over a buffer
 * (a mapped file, or a fuzzer's input): an 8-byte little-endian header
 * length N, N bytes of JSON naming each tensor's dtype, shape and byte range,
 * then the data. Internal to libattn (model/bert_load.c, fuzz/fuzz_model.c).
 */
#ifndef ATTN_MODEL_SAFETENSORS_H
#define ATTN_MODEL_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "attn.h"

#define ATTN_ST_MAX_RANK 8
/* The largest header read: the limit of Hugging Face's own reader. */
#define ATTN_ST_MAX_HEADER 100000000u

/* The dtypes of the format, with their sizes in attn_st_dtype_size. */
typedef enum attn_st_dtype {
    ATTN_ST_BOOL, ATTN_ST_U8, ATTN_ST_I8, ATTN_ST_F8_E5M2, ATTN_ST_F8_E4M3,
    ATTN_ST_I16, ATTN_ST_U16, ATTN_ST_F16, ATTN_ST_BF16,
    ATTN_ST_I32, ATTN_ST_U32, ATTN_ST_F32,
    ATTN_ST_I64, ATTN_ST_U64, ATTN_ST_F64
} attn_st_dtype;

typedef struct attn_st_tensor {
    const char *name;                    /* decoded UTF-8, NUL-terminated (\u0000 is refused) */
    attn_st_dtype dtype;
    int rank;
    uint64_t shape[ATTN_ST_MAX_RANK];
    uint64_t n_elements;                 /* product of shape (1 for rank 0) */
    const unsigned char *data;           /* end - begin bytes, inside the buffer */
    size_t n_bytes;
} attn_st_tensor;

typedef struct attn_st_file {
    attn_st_tensor *tensors;             /* [n], sorted by name (distinct names) */
    int n;
    char *names;                         /* storage of the names */
    size_t data_size;                    /* bytes after the header */
} attn_st_file;

/* Parses buf[0, size) into *f. ATTN_OK; or ATTN_ERR_BAD_FILE (a malformed or
 * inconsistent file) / ATTN_ERR_NO_MEMORY, with one line in err naming the
 * tensor where there is one, and *f left empty (attn_safetensors_free of it
 * is a no-op). The tensors point into buf, which must outlive f. */
attn_status attn_safetensors_parse(const void *buf, size_t size, attn_st_file *f,
                                   char *err, size_t err_len);
void attn_safetensors_free(attn_st_file *f);
/* The tensor named name, or NULL. */
const attn_st_tensor *attn_safetensors_find(const attn_st_file *f, const char *name);

const char *attn_st_dtype_name(attn_st_dtype t);
size_t attn_st_dtype_size(attn_st_dtype t);

/* "[2, 3]": t's shape, truncated to len. */
void attn_st_shape_text(const attn_st_tensor *t, char *buf, size_t len);

/* snprintf into err (when err and err_len are given) with the bytes a line
 * must not hold (control characters, from escapes in a name) made '?'. */
void attn_st_error(char *err, size_t err_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* ATTN_MODEL_SAFETENSORS_H */
