/*
 * wisdom_store.h — merging records into the wisdom file (`attnbench tune`,
 * its --import).
 *
 * Under an exclusive lock on "<file>.lock" the file is read again, the new
 * records are merged in (replacing those of the same machine and bucket),
 * and the result is written atomically (atomic_file.h) — so concurrent
 * tuners keep each other's records, and a crash leaves the old file or the
 * new one. A damaged file is not merged into: it is kept as
 * "<file>.damaged" and a new file is started.
 */
#ifndef AB_WISDOM_STORE_H
#define AB_WISDOM_STORE_H

#include <stddef.h>

#include "internal.h"

/* Merges add into the wisdom at path (its directory created if needed);
 * a record of add whose slot holds one of a more thorough level (patient >
 * measure > estimate) is not merged. note: empty, or a line saying that a
 * damaged file was set aside (under <path>.damaged, or .damaged.N when
 * that is taken) and how many records were kept that way. 0, or -1 with a reason
 * in err (the file then unchanged): also when the file at path cannot be
 * read, is not a regular file or is a newer attnbench's, which are not
 * this attnbench's to set aside. */
int ab_wisdom_merge(const char *path, const attn_wisdom *add, char *note, size_t note_len,
                    char *err, size_t len);

/* Whether a merge into path could succeed, asked before a tune spends its
 * budget: the directory is created and must be writable, and a file there
 * must not be one the merge would refuse (unreadable, not a regular file, a
 * newer attnbench's). A damaged file passes: the merge sets it aside. 0, or
 * -1 with the reason in err. */
int ab_wisdom_probe(const char *path, char *err, size_t len);

#endif /* AB_WISDOM_STORE_H */
