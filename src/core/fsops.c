/* Filesystem operations built only from the platform primitives of
 * fsops_posix.c / fsops_win32.c, so each platform file holds what differs
 * and nothing else: removing a tree, writing a small file atomically,
 * reading a small file whole, waiting for the tree's lock. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"

struct rm_ctx {
    const char *dir;
};

static int rm_one(void *ud, const char *name)
{
    struct rm_ctx *c = ud;
    size_t n = strlen(c->dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        return cdd_fail(CDD_E_NOMEM, c->dir, 0, NULL);
    snprintf(p, n, "%s/%s", c->dir, name);
    int r = cdd_fs_remove_tree(p);
    free(p);
    return r;
}

int cdd_fs_remove_tree(const char *path)
{
    struct cdd_stat st;
    int r = cdd_fs_lstat(path, &st);
    if (r || st.type == CDD_FT_NONE)
        return r;
    if (st.type != CDD_FT_DIR)
        return cdd_fs_unlink(path); /* links: removed, never followed */
    struct rm_ctx c = {path};
    r = cdd_fs_list(path, rm_one, &c);
    if (r)
        return r;
    return cdd_fs_rmdir(path);
}

int cdd_file_finish(struct cdd_file *f)
{
    int r = cdd_file_sync(f);
    if (r) {
        cdd_file_abort(f);
        return r;
    }
    return cdd_file_close(f);
}

int cdd_dir_write_atomic(struct cdd_dir *d, const char *name,
                         const void *buf, size_t len)
{
    struct cdd_file *f = NULL;
    char *tmp = cdd_aprintf(CDD_NAME_MAX + 5, "temporary file name", "%s.tmp",
                            name);
    if (!tmp)
        return cdd_last_error()->code;
    cdd_dir_unlink_quiet(d, tmp); /* a leftover of a killed run */
    int r = cdd_dir_create(d, tmp, 0, &f);
    if (r)
        goto out;
    r = cdd_file_write(f, buf, len);
    if (r)
        cdd_file_abort(f);
    else
        r = cdd_file_finish(f);
    if (!r)
        r = cdd_dir_rename(d, tmp, d, name);
    if (r) {
        struct cdd_errsave e;
        cdd_error_save(&e);
        cdd_dir_unlink_quiet(d, tmp);
        cdd_error_restore(&e);
        cdd_error_save_free(&e);
        goto out;
    }
    r = cdd_dir_sync(d);
out:
    free(tmp);
    return r;
}

int cdd_fs_write_atomic(const char *path, const void *buf, size_t len)
{
    struct cdd_dir *d = NULL;
    char *dir = cdd_fs_dirname(path);
    int r = dir ? cdd_dir_open_path(dir, &d, NULL)
                : cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    if (!r)
        r = cdd_dir_write_atomic(d, cdd_path_basename(path), buf, len);
    cdd_dir_close(d);
    free(dir);
    return r;
}

/* Bytes read_all asks for at a time (at least). */
#define READ_CHUNK 65536

int cdd_rfile_read_all(struct cdd_rfile *f, const char *shown, size_t max,
                       char **out, size_t *len)
{
    char *buf = NULL;
    size_t used = 0, cap = 0;
    int r = 0;
    *out = NULL;
    /* Room for max bytes, one more to see that the file is larger, and the
     * NUL: the bound of the buffer is the caller's bound of the file. */
    if (max > SIZE_MAX - 2)
        max = SIZE_MAX - 2;
    for (;;) {
        if (cap - used < READ_CHUNK + 1) {
            size_t want = max + 1 - used < READ_CHUNK ? max + 1
                                                      : used + READ_CHUNK;
            r = cdd_grow(&buf, &cap, want + 1, 1, max + 2, "file contents");
            if (r)
                goto out;
        }
        size_t got = 0;
        r = cdd_rfile_read(f, buf + used, cap - 1 - used, &got);
        if (r)
            goto out;
        if (got == 0)
            break;
        used += got;
        if (used > max) {
            r = cdd_fail(CDD_E_STATE, shown, 0, "larger than %zu bytes", max);
            goto out;
        }
    }
    buf[used] = '\0';
    *out = buf;
    buf = NULL;
    if (len)
        *len = used;
out:
    free(buf);
    return r;
}

int cdd_fs_read_all(const char *path, size_t max, char **out, size_t *len)
{
    struct cdd_rfile *f = NULL;
    *out = NULL;
    int r = cdd_fs_open_read(path, &f);
    if (!r)
        r = cdd_rfile_read_all(f, path, max, out, len);
    cdd_rfile_close(f);
    return r;
}

/* How often, and how long apart, a loser that does not know the holder
 * looks again before it says so: the winner writes its pid just after it
 * takes the lock. */
#define HOLDER_RETRIES 10
#define HOLDER_RETRY_MS 20

/* Wait for the lock on the open lock file l (path: for messages); l is
 * released on failure. */
static int lock_wait(struct cdd_lock *l, const char *path, double timeout_s,
                     long *holder_pid, struct cdd_lock **out)
{
    long holder = 0;
    int retries = 0, r;
    double deadline = cdd_monotonic() + (timeout_s < 0 ? 1e18 : timeout_s);
    while ((r = cdd_lockfile_try(l, path, &holder)) == 1) {
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, path, 0,
                         "interrupted while waiting for the lock");
            break;
        }
        if (cdd_monotonic() >= deadline) {
            /* The platform half names a holder only when it is a live
             * process that has the lock file (never pid 0, never a stale
             * pid); an unknown one may be a winner about to write its pid. */
            if (holder <= 0 && retries++ < HOLDER_RETRIES) {
                cdd_sleep_ms(HOLDER_RETRY_MS);
                continue;
            }
            if (holder_pid)
                *holder_pid = holder > 0 ? holder : 0;
            if (holder > 0)
                r = cdd_fail(CDD_E_LOCKED, path, 0,
                             "locked by another cudnn-deploy (pid %ld); wait "
                             "for it or use --lock-timeout",
                             holder);
            else
                r = cdd_fail(CDD_E_LOCKED, path, 0,
                             "locked by an unknown process (the lock file "
                             "names no live holder); wait for it or use "
                             "--lock-timeout");
            break;
        }
        cdd_sleep_ms(100);
    }
    if (r) {
        cdd_lock_release(l);
        return r;
    }
    /* The pid in the file is for the message a waiting process prints; the
     * kernel's lock is the truth. */
    cdd_lockfile_note_pid(l);
    *out = l;
    return 0;
}

int cdd_lock_acquire(const char *path, double timeout_s, long *holder_pid,
                     struct cdd_lock **out)
{
    struct cdd_lock *l = NULL;
    *out = NULL;
    int r = cdd_fs_fault_point("lock", path);
    if (!r)
        r = cdd_lockfile_open(path, &l);
    return r ? r : lock_wait(l, path, timeout_s, holder_pid, out);
}

int cdd_lock_acquire_at(struct cdd_dir *d, const char *name, double timeout_s,
                        long *holder_pid, struct cdd_lock **out)
{
    struct cdd_lock *l = NULL;
    const char *dir = cdd_dir_path(d);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    int r;
    *out = NULL;
    if (!path)
        return cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
    snprintf(path, n, "%s/%s", dir, name);
    r = cdd_fs_fault_point("lock", path);
    if (!r)
        r = cdd_lockfile_open_at(d, name, &l);
    if (!r)
        r = lock_wait(l, path, timeout_s, holder_pid, out);
    free(path);
    return r;
}
