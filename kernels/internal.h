/*
 * internal.h — what code outside the library (the attnbench harness, the
 * tests, the fuzz targets) may use of libattn beyond include/attn.h: the
 * kernel table and its rows (kernel.h: registry, parameters, geometry, CPU
 * features and cache sizes), the thread split and its dry-run trace
 * (split.h: attnbench explain) and the wisdom (wisdom.h: the file format,
 * the machine's key and hash, buckets, the cache directory). The harness
 * includes this header, never the kernels' own headers, so this is the
 * boundary between the library and the instrument that measures it.
 *
 * These symbols are hidden in libattn.so (-fvisibility=hidden): the harness
 * and the tests link libattn.a. They are not part of the contract
 * (docs/api.md) and may change with any commit.
 */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "kernel.h"
#include "split.h"
#include "wisdom.h"

#endif /* ATTN_INTERNAL_H */
