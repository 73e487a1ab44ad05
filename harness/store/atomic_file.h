/*
 * atomic_file.h — files that appear whole or not at all.
 *
 * Data is written to a temporary file in the destination's directory, flushed
 * to disk, and then renamed over the destination (or, with no_clobber, linked
 * to it only when no file of that name exists); then the directory is synced,
 * so that after a crash the name points at the new file, not the old one. A
 * reader never sees half a file, and a failed write leaves the old file as it
 * was. A symbolic link to a file has the file replaced (the link stays); a
 * device, FIFO or socket (/dev/null, /dev/stdout) is written straight
 * through, as there is nothing there to publish whole.
 */
#ifndef AB_ATOMIC_FILE_H
#define AB_ATOMIC_FILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

typedef struct ab_atomic_file {
    FILE *f;                 /* write here */
    char path[PATH_MAX];
    char tmp[PATH_MAX];
} ab_atomic_file;

/* 0 on success; -1 with a reason in err (a directory at path is one). */
int ab_atomic_open(ab_atomic_file *a, const char *path, char *err, size_t err_len);
/* Whether a file could be published at path later, asked before the work
 * that makes it (a run's minutes lost to a typo otherwise): path is not a
 * directory and its directory exists, is one and is writable (or path is
 * a writable device). 0, or -1 with a reason in err. */
int ab_atomic_probe(const char *path, char *err, size_t err_len);
/* Whether directory path could be made (ab_mkdirs) and written in later:
 * the nearest part of it that exists is a writable directory. 0, or -1
 * with a reason in err. */
int ab_dir_probe(const char *path, char *err, size_t err_len);
/* Flushes, syncs and publishes. no_clobber: fail with EEXIST (reported in
 * err, return 1) instead of replacing an existing file. 0 on success, -1 on
 * other failures. The temporary file is removed in every case. */
int ab_atomic_commit(ab_atomic_file *a, int no_clobber, char *err, size_t err_len);
/* Discards everything written. */
void ab_atomic_abort(ab_atomic_file *a);

/* The directory of path: "a/b" for "a/b/c", "." for "c", "/" for "/c". */
void ab_parent_dir(const char *path, char *dir, size_t len);

/* Creates directory path and its parents as needed (like mkdir -p). */
int ab_mkdirs(const char *path, char *err, size_t err_len);

#endif /* AB_ATOMIC_FILE_H */
