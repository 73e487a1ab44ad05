/*
 * fixture.h — reader for the PyTorch fixtures (tests/fixtures, one .fix file per case) written
 * by tests/gen_fixtures.py. One case per file; records are
 *   op NAME | int NAME V | float NAME V | str NAME WORD | f32 NAME N v… | u8 NAME N v… |
 *   i32 NAME N v… | f64 NAME N v… | end
 * (str: one word without white space, up to 255 characters, e.g. a file name;
 * i32: integers in [-2^31, 2^31), e.g. token ids).
 */
#ifndef ATTN_TEST_FIXTURE_H
#define ATTN_TEST_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fixture fixture;

/* Loads path, placing every f32, u8 and i32 array misalign bytes past a
 * 64-byte boundary (to test unaligned inputs). NULL and a message in err on
 * failure. */
fixture *fx_load(const char *path, size_t misalign, char *err, size_t err_len);
void fx_free(fixture *f);

const char *fx_op(const fixture *f);
/* A missing int or float record gives def. */
int fx_int(const fixture *f, const char *name, int def);
float fx_float(const fixture *f, const char *name, float def);
/* A missing str record gives NULL. */
const char *fx_str(const fixture *f, const char *name);
/* Arrays: NULL when the record is absent; *n (if n) gets the element count. */
const float *fx_f32(const fixture *f, const char *name, size_t *n);
const uint8_t *fx_u8(const fixture *f, const char *name, size_t *n);
const int32_t *fx_i32(const fixture *f, const char *name, size_t *n);
const double *fx_f64(const fixture *f, const char *name, size_t *n);

#endif /* ATTN_TEST_FIXTURE_H */
