/* atomic_file.c — files that appear whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"

/* -1, said in err, when path is a directory (rename over one said "Device
 * or resource busy"). */
static int refuse_directory(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s is a directory", path);
        return -1;
    }
    return 0;
}

int ab_atomic_probe(const char *path, char *err, size_t err_len)
{
    char dir[PATH_MAX];
    if (refuse_directory(path, err, err_len) != 0)
        return -1;
    ab_parent_dir(path, dir, sizeof dir);
    if (access(dir, W_OK) != 0) {
        snprintf(err, err_len, "%s: cannot write in %s: %s", path, dir, strerror(errno));
        return -1;
    }
    return 0;
}

int ab_atomic_open(ab_atomic_file *a, const char *path, char *err, size_t err_len)
{
    a->f = NULL;
    if (refuse_directory(path, err, err_len) != 0)
        return -1;
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path
        || snprintf(a->tmp, sizeof a->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof a->tmp) {
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
