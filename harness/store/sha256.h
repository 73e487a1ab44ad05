/*
 * sha256.h — SHA-256 (FIPS 180-4) of a buffer, as 64 hex digits: the
 * content hash by which the results history knows a file it already holds,
 * whoever added it and under whatever name.
 */
#ifndef AB_SHA256_H
#define AB_SHA256_H

#include <stddef.h>

void ab_sha256_hex(const void *data, size_t n, char hex[65]);

#endif /* AB_SHA256_H */
