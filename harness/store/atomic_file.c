/* atomic_file.c — files that appear whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

/* What is at path, links followed: AT_NONE (nothing: a new file), AT_FILE
 * (a regular file; *real its resolved path when path is a link), AT_STREAM
 * (a device, FIFO or socket: /dev/null, /dev/stdout), or -1 said in err (a
 * directory — rename over one said "Device or resource busy" — or a link
 * to nothing). */
enum { AT_NONE, AT_FILE, AT_STREAM };
static int what_is_at(const char *path, char *real, size_t real_len, char *err, size_t err_len)
{
    struct stat st, lst;
    snprintf(real, real_len, "%s", path);
    if (stat(path, &st) != 0) {
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
            snprintf(err, err_len, "%s: a symbolic link to nothing", path);
            return -1;
        }
        return AT_NONE;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s is a directory", path);
        return -1;
    }
    if (!S_ISREG(st.st_mode))
        return AT_STREAM;
    /* A link to a file: the file is replaced, not the link by a copy. */
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char buf[PATH_MAX];
        if (!realpath(path, buf) || snprintf(real, real_len, "%s", buf) >= (int)real_len) {
            snprintf(err, err_len, "%s: cannot resolve the link: %s", path, strerror(errno));
            return -1;
        }
    }
    return AT_FILE;
}

/* 0 when dir (path's, for the message) is a directory this process may
 * write in; else -1 said in err. */
static int writable_dir(const char *path, const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s: %s is not a directory", path, dir);
        return -1;
    }
    if (access(dir, W_OK) != 0) {
        snprintf(err, err_len, "%s: cannot write in %s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int ab_atomic_probe(const char *path, char *err, size_t err_len)
{
    char dir[PATH_MAX], real[PATH_MAX];
    int at = what_is_at(path, real, sizeof real, err, err_len);
    if (at < 0)
        return -1;
    if (at == AT_STREAM) {
        if (access(path, W_OK) != 0) {
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    ab_parent_dir(real, dir, sizeof dir);
    return writable_dir(path, dir, err, err_len);
}

int ab_dir_probe(const char *path, char *err, size_t err_len)
{
    char dir[PATH_MAX];
    struct stat st;
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        snprintf(err, err_len, "%s: path too long", path);
        return -1;
    }
    /* The nearest part that exists must be a directory we may write in. */
    while (stat(dir, &st) != 0) {
        char up[PATH_MAX];
        int why = errno;   /* stat's, before anything else may set it */
        ab_parent_dir(dir, up, sizeof up);
        if (why != ENOENT || strcmp(up, dir) == 0) {
            snprintf(err, err_len, "%s: %s", dir, strerror(why));
            return -1;
        }
        snprintf(dir, sizeof dir, "%s", up);
    }
    return writable_dir(path, dir, err, err_len);
}

int ab_atomic_open(ab_atomic_file *a, const char *path, char *err, size_t err_len)
{
    a->f = NULL;
    char real[PATH_MAX];
    int at = what_is_at(path, real, sizeof real, err, err_len);
    if (at < 0)
        return -1;
    if (at == AT_STREAM) {
        /* Nothing to publish atomically: written straight through, and the
         * device stays a device (renamed over, /dev/null became a file). */
        a->tmp[0] = '\0';
        snprintf(a->path, sizeof a->path, "%s", path);
        a->f = fopen(path, "w");
        if (!a->f) {
            snprintf(err, err_len, "%s: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (snprintf(a->path, sizeof a->path, "%s", real) >= (int)sizeof a->path
        || snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", real) >= (int)sizeof a->tmp) {
        snprintf(err, err_len, "%s: path too long", path);
        return -1;
    }
    int fd = mkstemp(a->tmp);
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot create a temporary file: %s", path, strerror(errno));
        return -1;
    }
    /* mkstemp makes the file 0600; results are ordinary files. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    a->f = fdopen(fd, "w");
    if (!a->f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(a->tmp);
        return -1;
    }
    return 0;
}

void ab_atomic_abort(ab_atomic_file *a)
{
    if (a->f) {
        fclose(a->f);
        a->f = NULL;
        if (a->tmp[0])
            unlink(a->tmp);
    }
}

void ab_parent_dir(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else if (slash == path)
        snprintf(dir, len, "/");
    else
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* The rename (or link) is a change of the directory: until the directory
 * itself reaches the disk, a crash can bring back the old name. 0, or -1
 * with errno; a file system that cannot sync directories (EINVAL) is not
 * an error — there is nothing more to do there. */
static int sync_parent_dir(const char *path)
{
    char dir[PATH_MAX];
    ab_parent_dir(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd) != 0 && errno != EINVAL ? -1 : 0;
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int ab_atomic_commit(ab_atomic_file *a, int no_clobber, char *err, size_t err_len)
{
    if (!a->tmp[0]) {   /* a device, FIFO or socket: only flushed */
        int failed = ferror(a->f) || fflush(a->f) != 0;
        int saved = errno;
        failed |= fclose(a->f) != 0;
        a->f = NULL;
        if (failed)
            snprintf(err, err_len, "%s: write failed: %s", a->path, strerror(saved ? saved : errno));
        return failed ? -1 : 0;
    }
    int failed = ferror(a->f) || fflush(a->f) != 0 || fsync(fileno(a->f)) != 0;
    int saved = errno;
    failed |= fclose(a->f) != 0;
    a->f = NULL;
    if (failed) {
        snprintf(err, err_len, "%s: write failed: %s", a->path, strerror(saved ? saved : errno));
        unlink(a->tmp);
        return -1;
    }
    if (no_clobber) {
        /* link() fails with EEXIST instead of replacing: no race with
         * another writer choosing the same name. */
        int rc = link(a->tmp, a->path);
        saved = errno;
        unlink(a->tmp);
        if (rc != 0) {
            snprintf(err, err_len, "%s: %s", a->path, strerror(saved));
            return saved == EEXIST ? 1 : -1;
        }
    } else if (rename(a->tmp, a->path) != 0) {
        snprintf(err, err_len, "%s: %s", a->path, strerror(errno));
        unlink(a->tmp);
        return -1;
    }
    if (sync_parent_dir(a->path) != 0) {
        snprintf(err, err_len, "%s: written, but its directory could not be synced: %s",
                 a->path, strerror(errno));
        return -1;
    }
    return 0;
}

int ab_mkdirs(const char *path, char *err, size_t err_len)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        snprintf(err, err_len, "%s: path too long", path);
        return -1;
    }
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                snprintf(err, err_len, "%s: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    return 0;
}
