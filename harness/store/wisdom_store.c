/*
 * wisdom_store.c — writing the wisdom file so that concurrent writers keep
 * each other's records (wisdom_store.h). The file format is the library's
 * (kernels/wisdom.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "atomic_file.h"
#include "wisdom_store.h"

/* How thorough a record's search was: patient > measure > estimate. */
int ab_wisdom_merge(const char *path, const attn_wisdom *add, char *note, size_t note_len,
                    char *err, size_t len)
{
    char dir[PATH_MAX], lock_path[PATH_MAX + 8];
    if (note_len)
        note[0] = '\0';
    snprintf(dir, sizeof dir, "%s", path);
    if (ab_mkdirs(dirname(dir), err, len) != 0)
        return -1;
    snprintf(lock_path, sizeof lock_path, "%.*s.lock", PATH_MAX - 1, path);
    int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock < 0 || flock(lock, LOCK_EX) != 0) {
        snprintf(err, len, "cannot lock %.400s", lock_path);
        if (lock >= 0)
            close(lock);
        return -1;
    }
    attn_wisdom *w = malloc(sizeof *w);
    int rc = -1;
    char why[200];
    if (!w) {
        snprintf(err, len, "out of memory");
    } else {
        int r = attn_wisdom_read(path, w, why, sizeof why);
        rc = 0;
        if (r == -3) {   /* unreadable, not a file, or a newer attnbench's: left as it is */
            snprintf(err, len, "%.400s (left as it is)", why);
            rc = -1;
        } else if (r == -1) {
            /* Set aside under a name no earlier damaged file holds (the
             * lock is held, so no other tune takes it meanwhile). */
            char kept[PATH_MAX + 32];
            int k = 0;
            do
                snprintf(kept, sizeof kept, k ? "%.*s.damaged.%d" : "%.*s.damaged", PATH_MAX - 1,
                         path, k);
            while (access(kept, F_OK) == 0 && ++k < 1000);
            if (k == 1000 || rename(path, kept) != 0) {
                snprintf(err, len, "%.400s is not valid wisdom (%s) and could not be set aside: "
                         "%s", path, why, k == 1000 ? "1000 damaged copies already" : strerror(errno));
                rc = -1;
            } else {
                snprintf(note, note_len, "%.400s was not valid wisdom (%s); kept as %.400s, "
                         "starting a new file", path, why, kept);
                memset(w, 0, sizeof *w);
            }
        }
        /* A quicker search never replaces a more thorough one's record
         * (`--level estimate` times nothing: it wrote over measured
         * choices); a patient or measured record is replaced by its like. */
        int kept = 0;
        for (int i = 0; i < add->n && rc == 0; i++) {
            const char *key = "";
            for (int m = 0; m < add->n_machines; m++)
                if (add->machine_hash[m] == add->rec[i].machine)
                    key = add->machine_key[m];
            if (attn_wisdom_more_thorough_held(w, &add->rec[i]))
                kept++;
            else if (attn_wisdom_put(w, &add->rec[i], key) != 0) {
                snprintf(err, len, "the wisdom file is full");
                rc = -1;
            }
        }
        if (kept && note_len) {
            size_t used = strlen(note);
            snprintf(note + used, note_len - used,
                     "%s%d record%s of a more thorough tune kept (not replaced by this one's, "
                     "of a quicker level)", used ? "; " : "", kept, kept == 1 ? "" : "s");
        }
        ab_atomic_file af;
        if (rc == 0 && ab_atomic_open(&af, path, err, len) != 0) {
            rc = -1;
        } else if (rc == 0) {
            /* Its write error is the stream's, which the commit reports
             * (removing the temporary file). */
            attn_wisdom_write(af.f, w);
            rc = ab_atomic_commit(&af, 0, err, len) != 0 ? -1 : 0;
        }
    }
    free(w);
    flock(lock, LOCK_UN);
    close(lock);
    return rc;
}

int ab_wisdom_probe(const char *path, char *err, size_t len)
{
    char dir[PATH_MAX], why[200];
    snprintf(dir, sizeof dir, "%s", path);
    if (ab_mkdirs(dirname(dir), err, len) != 0 || ab_atomic_probe(path, err, len) != 0)
        return -1;
    attn_wisdom *w = malloc(sizeof *w);
    if (!w) {
        snprintf(err, len, "out of memory");
        return -1;
    }
    int r = attn_wisdom_read(path, w, why, sizeof why);
    free(w);
    if (r == -3) {
        snprintf(err, len, "%.400s (left as it is)", why);
        return -1;
    }
    return 0;
}
