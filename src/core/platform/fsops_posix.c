/* POSIX implementation of the filesystem interface (fsops.h): exclusive
 * no-follow creation, fsync of files and folders, atomic rename,
 * open-file-description locks that name their holder truly. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <stdatomic.h>
#include <sys/syscall.h>
#endif

#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/fsops.h"
#include "cdd/strbuf.h"

#if defined(__linux__)
#include <sys/sysmacros.h> /* major(), minor(): /proc/locks */
#endif

struct cdd_file {
    int fd;
    char *path;
    uint64_t written, flushed; /* bytes written; handed to writeback */
};

/* Writeback is started every WRITEBACK_STEP bytes (Linux): the disk then
 * writes while the archive decodes, instead of all at the closing fsync,
 * and dirty pages never pile up. Only a hint: errors are the fsync's. */
#define WRITEBACK_STEP (UINT64_C(8) << 20)

static void start_writeback(struct cdd_file *f)
{
#if defined(__linux__) && defined(SYNC_FILE_RANGE_WRITE)
    if (f->written - f->flushed >= WRITEBACK_STEP) {
        (void)sync_file_range(f->fd, (off_t)f->flushed,
                              (off_t)(f->written - f->flushed),
                              SYNC_FILE_RANGE_WRITE);
        f->flushed = f->written;
    }
#else
    (void)f;
#endif
}

struct cdd_rfile {
    int fd;
    char *path;
    struct cdd_feed *feed; /* a file still arriving (cdd/feed.h), or NULL */
    uint64_t fpos;         /* the sequential position, with a feed */
};

struct cdd_lock {
    int fd;
};

#define FAULT(op, path)                                                        \
    do {                                                                       \
        int fault_r_ = cdd_fs_fault_point(op, path);                           \
        if (fault_r_)                                                          \
            return fault_r_;                                                   \
    } while (0)

int cdd_fs_lstat(const char *path, struct cdd_stat *st)
{
    struct stat sb;
    memset(st, 0, sizeof *st);
    if (lstat(path, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            st->type = CDD_FT_NONE;
            return 0;
        }
        return cdd_fail_errno(path, errno, "cannot read file status");
    }
    if (S_ISREG(sb.st_mode))
        st->type = CDD_FT_FILE;
    else if (S_ISDIR(sb.st_mode))
        st->type = CDD_FT_DIR;
    else if (S_ISLNK(sb.st_mode))
        st->type = CDD_FT_SYMLINK;
    else
        st->type = CDD_FT_OTHER;
    st->size = (uint64_t)sb.st_size;
    st->executable = (sb.st_mode & 0111) != 0;
    st->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
                   (int64_t)sb.st_mtim.tv_nsec;
    return 0;
}

int cdd_fs_create(const char *path, int executable, struct cdd_file **out)
{
    *out = NULL;
    FAULT("create", path);
    struct cdd_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    f->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 executable ? 0755 : 0644);
    if (f->fd < 0) {
        int e = errno;
        free(f->path);
        free(f);
        return cdd_fail_errno(path, e, "cannot create file");
    }
    /* The umask must not decide the modes of installed files. */
    if (fchmod(f->fd, executable ? 0755 : 0644) != 0) {
        int e = errno;
        cdd_file_abort(f);
        unlink(path);
        return cdd_fail_errno(path, e, "cannot set file mode");
    }
    *out = f;
    return 0;
}

int cdd_fs_open_append(const char *path, struct cdd_file **out,
                       uint64_t *size)
{
    struct stat sb;
    *out = NULL;
    FAULT("append", path);
    struct cdd_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    f->fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f->path);
        free(f);
        return cdd_fail_errno(path, e, "cannot open file for appending");
    }
    if (fstat(f->fd, &sb) != 0) {
        int e = errno;
        cdd_file_abort(f);
        return cdd_fail_errno(path, e, "cannot read file status");
    }
    if (!S_ISREG(sb.st_mode)) {
        cdd_file_abort(f);
        return cdd_fail(CDD_E_IO, path, 0, "not a regular file");
    }
    *size = (uint64_t)sb.st_size;
    *out = f;
    return 0;
}

int cdd_file_write(struct cdd_file *f, const void *buf, size_t len)
{
    const char *p = buf;
    FAULT("write", f->path);
    while (len > 0) {
        ssize_t n = write(f->fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return cdd_fail_errno(f->path, errno, "cannot write");
        }
        p += n;
        len -= (size_t)n;
        f->written += (uint64_t)n;
    }
    start_writeback(f);
    return 0;
}

int cdd_file_preallocate(struct cdd_file *f, uint64_t size)
{
#if defined(__linux__)
    if (size == 0)
        return 0;
    int r = posix_fallocate(f->fd, 0, (off_t)size);
    if (r == ENOSPC)
        return cdd_fail_errno(f->path, r, "cannot reserve %llu bytes",
                              (unsigned long long)size);
#else
    (void)f;
    (void)size;
#endif
    return 0;
}

int cdd_file_sync(struct cdd_file *f)
{
    FAULT("fsync", f->path);
    if (fsync(f->fd) != 0)
        return cdd_fail_errno(f->path, errno, "cannot flush to disk");
    return 0;
}

int cdd_file_close(struct cdd_file *f)
{
    int r = 0;
    if (!f)
        return 0;
    if (close(f->fd) != 0)
        r = cdd_fail_errno(f->path, errno, "cannot close (data may be lost)");
    free(f->path);
    free(f);
    return r;
}

void cdd_file_abort(struct cdd_file *f)
{
    if (!f)
        return;
    close(f->fd);
    free(f->path);
    free(f);
}

int cdd_fs_open_read(const char *path, struct cdd_rfile **out)
{
    *out = NULL;
    struct cdd_rfile *f = calloc(1, sizeof *f);
    if (!f || !(f->path = strdup(path))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
     * writer, forever (strict9, issue 9: --archive and --manifest naming a
     * FIFO hung). It has no effect on regular files. */
    f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f->fd < 0) {
        int e = errno;
        free(f->path);
        free(f);
        return cdd_fail_errno(path, e, "cannot open");
    }
    {
        struct stat sb;
        int e = fstat(f->fd, &sb) != 0 ? errno : 0;
        /* Only what is read as data: a FIFO, device or socket is refused at
         * once (a folder is left to the read, which fails with EISDIR). */
        if (e || !(S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode))) {
            close(f->fd);
            free(f->path);
            free(f);
            if (e)
                return cdd_fail_errno(path, e, "cannot read file status");
            return cdd_fail(CDD_E_UNSAFE, path, 0,
                            "not a regular file (a FIFO, device or socket): "
                            "refused");
        }
    }
    *out = f;
    return 0;
}

static int raw_pread(struct cdd_rfile *f, uint64_t off, void *buf,
                     size_t len, size_t *got);

int cdd_rfile_read(struct cdd_rfile *f, void *buf, size_t len, size_t *got)
{
    if (f->feed) {
        int r = cdd_feed_pread(f->feed, f, raw_pread, f->fpos, buf, len, got);
        if (!r)
            f->fpos += *got;
        return r;
    }
    for (;;) {
        ssize_t n = read(f->fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cdd_fail_errno(f->path, errno, "cannot read");
        *got = (size_t)n;
        return 0;
    }
}

int cdd_rfile_pread(struct cdd_rfile *f, uint64_t off, void *buf, size_t len,
                    size_t *got)
{
    if (f->feed)
        return cdd_feed_pread(f->feed, f, raw_pread, off, buf, len, got);
    return raw_pread(f, off, buf, len, got);
}

static int raw_pread(struct cdd_rfile *f, uint64_t off, void *buf,
                     size_t len, size_t *got)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(f->fd, (char *)buf + done, len - done,
                          (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cdd_fail_errno(f->path, errno, "cannot read");
        if (n == 0)
            break;
        done += (size_t)n;
    }
    *got = done;
    return 0;
}

int cdd_rfile_size(struct cdd_rfile *f, uint64_t *size)
{
    struct stat sb;
    if (f->feed) {
        *size = cdd_feed_size(f->feed);
        return 0;
    }
    if (fstat(f->fd, &sb) != 0)
        return cdd_fail_errno(f->path, errno, "cannot read file status");
    *size = (uint64_t)sb.st_size;
    return 0;
}

int cdd_fs_identity(struct cdd_rfile *f, struct cdd_fs_id *id)
{
    struct stat sb;
    if (fstat(f->fd, &sb) != 0)
        return cdd_fail_errno(f->path, errno, "cannot read file status");
    id->dev = (uint64_t)sb.st_dev;
    id->ino = (uint64_t)sb.st_ino;
    id->size = (uint64_t)sb.st_size;
    id->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000 +
                   (int64_t)sb.st_mtim.tv_nsec;
    id->ctime_ns = (int64_t)sb.st_ctim.tv_sec * 1000000000 +
                   (int64_t)sb.st_ctim.tv_nsec;
    return 0;
}

void cdd_rfile_close(struct cdd_rfile *f)
{
    if (!f)
        return;
    close(f->fd);
    cdd_feed_unref(f->feed);
    free(f->path);
    free(f);
}

void cdd_rfile_set_feed(struct cdd_rfile *f, struct cdd_feed *feed)
{
    f->feed = feed;
    f->fpos = 0;
}

struct cdd_feed *cdd_rfile_feed(const struct cdd_rfile *f)
{
    return f->feed;
}

/* ---- what an open file is (fsops.h, struct cdd_finfo) ------------------ */

static void finfo_from(const struct stat *sb, struct cdd_finfo *fi)
{
    memset(fi, 0, sizeof *fi);
    fi->type = S_ISREG(sb->st_mode)   ? CDD_FT_FILE
               : S_ISDIR(sb->st_mode) ? CDD_FT_DIR
               : S_ISLNK(sb->st_mode) ? CDD_FT_SYMLINK
                                      : CDD_FT_OTHER;
    fi->size = (uint64_t)sb->st_size;
    fi->nlink = (uint64_t)sb->st_nlink;
    fi->owner_known = 1;
    fi->owner = (long long)sb->st_uid;
    fi->owner_is_caller = sb->st_uid == geteuid();
    fi->owner_is_root = sb->st_uid == 0;
    fi->group_writable = (sb->st_mode & S_IWGRP) && sb->st_gid != getegid();
    fi->other_writable = (sb->st_mode & S_IWOTH) != 0;
    fi->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
                   (int64_t)sb->st_mtim.tv_nsec;
    fi->ctime_ns = (int64_t)sb->st_ctim.tv_sec * 1000000000 +
                   (int64_t)sb->st_ctim.tv_nsec;
    fi->dev = (uint64_t)sb->st_dev;
    fi->ino = (uint64_t)sb->st_ino;
}

static int fd_info(int fd, const char *path, struct cdd_finfo *fi)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return cdd_fail_errno(path, errno, "cannot read file status");
    finfo_from(&sb, fi);
    return 0;
}

int cdd_rfile_info(struct cdd_rfile *f, struct cdd_finfo *fi)
{
    return fd_info(f->fd, f->path, fi);
}

int cdd_file_info(struct cdd_file *f, struct cdd_finfo *fi)
{
    return fd_info(f->fd, f->path, fi);
}

int cdd_fs_linfo(const char *path, struct cdd_finfo *fi)
{
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        memset(fi, 0, sizeof *fi);
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return cdd_fail_errno(path, errno, "cannot read file status");
    }
    finfo_from(&sb, fi);
    return 0;
}

int cdd_rfile_dup(struct cdd_rfile *f, struct cdd_rfile **out)
{
    struct cdd_rfile *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d || !(d->path = strdup(f->path))) {
        free(d);
        return cdd_fail(CDD_E_NOMEM, f->path, 0, NULL);
    }
    d->fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
    if (d->fd < 0) {
        int e = errno;
        free(d->path);
        free(d);
        return cdd_fail_errno(f->path, e, "cannot open another reader");
    }
    if (f->feed)
        d->feed = cdd_feed_ref(f->feed);
    *out = d;
    return 0;
}

const char *cdd_rfile_path(const struct cdd_rfile *f)
{
    return f->path;
}

int cdd_fs_rename(const char *from, const char *to)
{
    FAULT("rename", to);
    if (rename(from, to) != 0) {
        int e = errno;
        return cdd_fail_errno(to, e, "cannot move %s into place", from);
    }
    return 0;
}

int cdd_fs_unlink(const char *path)
{
    FAULT("unlink", path);
    if (unlink(path) != 0)
        return cdd_fail_errno(path, errno, "cannot remove");
    return 0;
}

int cdd_fs_rmdir(const char *path)
{
    FAULT("rmdir", path);
    if (rmdir(path) != 0)
        return cdd_fail_errno(path, errno, "cannot remove folder");
    return 0;
}

int cdd_fs_mkdir(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    FAULT("mkdir", path);
    if (mkdir(path, 0755) != 0) {
        int e = errno;
        if (e == EEXIST && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
            return 0;
        return cdd_fail_errno(path, e, "cannot create folder");
    }
    return 0;
}

/* The most bytes mkdirs' list of created folders can need for a path of len
 * bytes: every prefix ending before a separator (at most len / 2 + 1 of
 * them), each with its newline, and the NUL. */
#define CREATED_LIST_MAX(len) (((len) / 2 + 1) * ((len) + 1) + 1)

int cdd_fs_mkdirs(const char *path, char **created)
{
    int r = 0;
    char *p = strdup(path);
    if (created)
        *created = NULL;
    if (!p)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    /* Walk down from the top so parents come first. */
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        struct stat sb;
        if (stat(p, &sb) != 0) {
            if (errno != ENOENT) {
                r = cdd_fail_errno(p, errno, "cannot read folder status");
                goto out;
            }
            r = cdd_fs_mkdir(p);
            if (r)
                goto out;
            if (created &&
                (r = cdd_lines_add(created, p, strlen(p), CREATED_LIST_MAX(len),
                                   "list of created folders")) != 0)
                goto out;
        } else if (!S_ISDIR(sb.st_mode)) {
            r = cdd_fail(CDD_E_IO, p, ENOTDIR, "exists and is not a folder");
            goto out;
        }
        *s = c;
        if (c == '\0')
            break;
    }
out:
    free(p);
    return r;
}

int cdd_fs_symlink(const char *target, const char *linkpath)
{
    FAULT("symlink", linkpath);
    if (symlink(target, linkpath) != 0)
        return cdd_fail_errno(linkpath, errno, "cannot create symlink");
    return 0;
}

int cdd_fs_readlink(const char *path, char *buf, size_t len)
{
    ssize_t n = readlink(path, buf, len - 1);
    if (n < 0)
        return cdd_fail_errno(path, errno, "cannot read symlink");
    if ((size_t)n >= len - 1)
        return cdd_fail(CDD_E_IO, path, 0, "symlink target too long");
    buf[n] = '\0';
    return 0;
}

int cdd_fs_sync_dir(const char *path)
{
    FAULT("fsync-dir", path);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cdd_fail_errno(path, errno, "cannot open folder");
    int r = 0;
    if (fsync(fd) != 0 && errno != EINVAL)
        r = cdd_fail_errno(path, errno, "cannot flush folder to disk");
    close(fd);
    return r;
}

int cdd_fs_realpath(const char *path, char **out)
{
    char *r = realpath(path, NULL);
    if (!r)
        return cdd_fail_errno(path, errno, "cannot resolve path");
    *out = r;
    return 0;
}

/* Hand each name of an open folder stream but . and .. to fn, then close
 * the stream; shown names the folder in a failure. */
static int list_stream(DIR *d, const char *shown,
                       int (*fn)(void *ud, const char *name), void *ud)
{
    int r = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        r = fn(ud, de->d_name);
        if (r)
            break;
        errno = 0;
    }
    if (!r && errno != 0)
        r = cdd_fail_errno(shown, errno, "cannot list folder");
    closedir(d);
    return r;
}

int cdd_fs_list(const char *dir, int (*fn)(void *ud, const char *name),
                void *ud)
{
    DIR *d = opendir(dir);
    if (!d)
        return cdd_fail_errno(dir, errno, "cannot list folder");
    return list_stream(d, dir, fn, ud);
}

static int append_fd(int fd, const char *path, const char *line);

int cdd_fs_append_line(const char *path, const char *line)
{
    FAULT("append", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                  0644);
    if (fd < 0)
        return cdd_fail_errno(path, errno, "cannot open for appending");
    return append_fd(fd, path, line);
}

/* ---- directory handles (fsops.h) ------------------------------------------ */

struct cdd_dir {
    int fd;
    char *path;
};

/* "<folder>/<name>" for messages and the fault injector; NULL on no memory
 * (messages then name the folder). */
static char *at_path(const struct cdd_dir *d, const char *name)
{
    size_t a = strlen(d->path), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p)
        return NULL;
    memcpy(p, d->path, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

static int new_dir(int fd, const char *path, struct cdd_dir **out)
{
    struct cdd_dir *d = malloc(sizeof *d);
    if (!d || !(d->path = strdup(path ? path : "."))) {
        free(d);
        close(fd);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    d->fd = fd;
    *out = d;
    return 0;
}

int cdd_dir_open_path(const char *path, struct cdd_dir **out, char **real)
{
    *out = NULL;
    if (real)
        *real = NULL;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return cdd_fail_errno(path, errno, "cannot open folder");
    char *rp = NULL;
#if defined(__linux__)
    /* The folder the descriptor holds, not a second resolution of path. */
    char proc[64]; /* fixed: /proc/self/fd/ and an int */
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    /* The kernel gives the whole path, longer than PATH_MAX for a deep
     * folder: read it into a buffer doubled until it fits. */
    for (size_t cap = 256; !rp && cap <= CDD_TEXT_MAX; cap *= 2) {
        char *buf = malloc(cap);
        if (!buf)
            break;
        ssize_t n = readlink(proc, buf, cap - 1);
        if (n > 0 && (size_t)n < cap - 1 && buf[0] == '/') {
            buf[n] = '\0';
            rp = buf;
        } else {
            free(buf);
            if (n <= 0 || (size_t)n < cap - 1)
                break;
        }
    }
#endif
    if (!rp)
        rp = realpath(path, NULL);
    if (!rp) {
        int e = errno;
        close(fd);
        return cdd_fail_errno(path, e ? e : ENOMEM, "cannot resolve path");
    }
    int r = new_dir(fd, rp, out);
    if (!r && real)
        *real = rp;
    else
        free(rp);
    return r;
}

int cdd_dir_open_at(struct cdd_dir *d, const char *name, const char *path,
                    struct cdd_dir **out)
{
    char *p = path ? NULL : at_path(d, name);
    const char *shown = path ? path : p ? p : d->path;
    int r;
    *out = NULL;
    int fd = openat(d->fd, name,
                    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ELOOP || e == ENOTDIR)
            r = cdd_fail(CDD_E_UNSAFE, shown, e,
                         "is a link or not a folder; not followed");
        else if (e == ENOENT)
            r = cdd_fail(CDD_E_NOTFOUND, shown, e, "no such folder");
        else
            r = cdd_fail_errno(shown, e, "cannot open folder");
    } else {
        r = new_dir(fd, shown, out);
    }
    free(p);
    return r;
}

#if defined(__linux__)
/* openat2(2), by number: the C library may not wrap it. */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
struct cdd_open_how {
    uint64_t flags, mode, resolve;
};
#define CDD_RESOLVE_NO_MAGICLINKS 0x02
#define CDD_RESOLVE_NO_SYMLINKS 0x04
#define CDD_RESOLVE_BENEATH 0x08
static atomic_int openat2_missing;
static atomic_int openat2_off;
#endif

void cdd_dir_fast_path(int on)
{
#if defined(__linux__)
    atomic_store(&openat2_off, !on);
#else
    (void)on;
#endif
}

int cdd_dir_open_beneath(struct cdd_dir *d, const char *rel, int no_links,
                         const char *path, struct cdd_dir **out)
{
    *out = NULL;
#if defined(__linux__)
    if (atomic_load(&openat2_missing) || atomic_load(&openat2_off))
        return 1;
    struct cdd_open_how how = {
        .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
        .resolve = CDD_RESOLVE_BENEATH | CDD_RESOLVE_NO_MAGICLINKS |
                   (no_links ? CDD_RESOLVE_NO_SYMLINKS : 0)};
    long fd = syscall(SYS_openat2, d->fd, rel, &how, sizeof how);
    if (fd < 0) {
        if (errno == ENOSYS)
            atomic_store(&openat2_missing, 1);
        /* Every refusal (EXDEV: a link leaves, or an absolute link the
         * walk may still find inside; ELOOP; ENOENT...) is decided, and
         * explained, by the component walk. */
        return 1;
    }
    return new_dir((int)fd, path, out);
#else
    (void)d;
    (void)rel;
    (void)no_links;
    (void)path;
    return 1;
#endif
}

int cdd_dir_is_beneath(struct cdd_dir *d, const char *root_real)
{
    (void)d;
    (void)root_real;
    return 1;
}

int cdd_dir_same_at(struct cdd_dir *parent, const char *name,
                    struct cdd_dir *d)
{
    struct stat a, b;
    if (fstatat(parent->fd, name, &a, AT_SYMLINK_NOFOLLOW) != 0 ||
        fstat(d->fd, &b) != 0)
        return 0;
    return S_ISDIR(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void cdd_dir_close(struct cdd_dir *d)
{
    if (!d)
        return;
    close(d->fd);
    free(d->path);
    free(d);
}

const char *cdd_dir_path(const struct cdd_dir *d)
{
    return d->path;
}

static void fill_stat(const struct stat *sb, struct cdd_stat *st)
{
    if (S_ISREG(sb->st_mode))
        st->type = CDD_FT_FILE;
    else if (S_ISDIR(sb->st_mode))
        st->type = CDD_FT_DIR;
    else if (S_ISLNK(sb->st_mode))
        st->type = CDD_FT_SYMLINK;
    else
        st->type = CDD_FT_OTHER;
    st->size = (uint64_t)sb->st_size;
    st->executable = (sb->st_mode & 0111) != 0;
    st->mtime_ns = (int64_t)sb->st_mtim.tv_sec * 1000000000 +
                   (int64_t)sb->st_mtim.tv_nsec;
}

int cdd_dir_lstat(struct cdd_dir *d, const char *name, struct cdd_stat *st)
{
    struct stat sb;
    memset(st, 0, sizeof *st);
    if (fstatat(d->fd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR) {
            st->type = CDD_FT_NONE;
            return 0;
        }
        char *p = at_path(d, name);
        int r = cdd_fail_errno(p ? p : d->path, e, "cannot read file status");
        free(p);
        return r;
    }
    fill_stat(&sb, st);
    return 0;
}

int cdd_dir_readlink(struct cdd_dir *d, const char *name, char *buf,
                     size_t len)
{
    ssize_t n = readlinkat(d->fd, name, buf, len - 1);
    int r = 0;
    if (n < 0 || (size_t)n >= len - 1) {
        int e = errno;
        char *p = at_path(d, name);
        r = n < 0 ? cdd_fail_errno(p ? p : d->path, e, "cannot read symlink")
                  : cdd_fail(CDD_E_IO, p ? p : d->path, 0,
                             "symlink target too long");
        free(p);
        return r;
    }
    buf[n] = '\0';
    return 0;
}

int cdd_dir_create(struct cdd_dir *d, const char *name, int executable,
                   struct cdd_file **out)
{
    *out = NULL;
    struct cdd_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = at_path(d, name))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, d->path, 0, NULL);
    }
    int r = cdd_fs_fault_point("create", f->path);
    if (r) {
        free(f->path);
        free(f);
        return r;
    }
    f->fd = openat(d->fd, name,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                   executable ? 0755 : 0644);
    if (f->fd < 0) {
        r = cdd_fail_errno(f->path, errno, "cannot create file");
        free(f->path);
        free(f);
        return r;
    }
    if (fchmod(f->fd, executable ? 0755 : 0644) != 0) {
        int e = errno;
        unlinkat(d->fd, name, 0);
        r = cdd_fail_errno(f->path, e, "cannot set file mode");
        cdd_file_abort(f);
        return r;
    }
    *out = f;
    return 0;
}

int cdd_dir_open_read(struct cdd_dir *d, const char *name,
                      struct cdd_rfile **out)
{
    struct stat sb;
    int r = 0;
    *out = NULL;
    struct cdd_rfile *f = calloc(1, sizeof *f);
    if (!f || !(f->path = at_path(d, name))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, d->path, 0, NULL);
    }
    /* O_NONBLOCK: a FIFO planted in the tree must not hang the open. */
    f->fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        r = e == ELOOP ? cdd_fail(CDD_E_UNSAFE, f->path, e,
                                  "is a symlink; not followed")
                       : cdd_fail_errno(f->path, e, "cannot open");
    } else if (fstat(f->fd, &sb) != 0) {
        r = cdd_fail_errno(f->path, errno, "cannot read file status");
    } else if (!S_ISREG(sb.st_mode)) {
        r = cdd_fail(CDD_E_UNSAFE, f->path, 0, "is not a regular file");
    } else {
        int fl = fcntl(f->fd, F_GETFL);
        if (fl < 0 || fcntl(f->fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
            r = cdd_fail_errno(f->path, errno, "cannot open");
    }
    if (r) {
        if (f->fd >= 0)
            close(f->fd);
        free(f->path);
        free(f);
        return r;
    }
    *out = f;
    return 0;
}

int cdd_dir_rename(struct cdd_dir *from_dir, const char *from,
                   struct cdd_dir *to_dir, const char *to)
{
    char *pf = at_path(from_dir, from), *pt = at_path(to_dir, to);
    int r = 0;
    if (!pf || !pt) {
        r = cdd_fail(CDD_E_NOMEM, to_dir->path, 0, NULL);
        goto out;
    }
    r = cdd_fs_fault_point("rename", pt);
    if (!r && renameat(from_dir->fd, from, to_dir->fd, to) != 0)
        r = cdd_fail_errno(pt, errno, "cannot move %s into place", pf);
out:
    free(pf);
    free(pt);
    return r;
}

static int unlink_at(struct cdd_dir *d, const char *name, int flags,
                     const char *op, const char *what)
{
    char *p = at_path(d, name);
    int r = cdd_fs_fault_point(op, p ? p : d->path);
    if (!r && unlinkat(d->fd, name, flags) != 0)
        r = cdd_fail_errno(p ? p : d->path, errno, "%s", what);
    free(p);
    return r;
}

int cdd_dir_unlink(struct cdd_dir *d, const char *name)
{
    return unlink_at(d, name, 0, "unlink", "cannot remove");
}

void cdd_dir_unlink_quiet(struct cdd_dir *d, const char *name)
{
    unlinkat(d->fd, name, 0);
}

int cdd_dir_rmdir(struct cdd_dir *d, const char *name)
{
    return unlink_at(d, name, AT_REMOVEDIR, "rmdir", "cannot remove folder");
}

int cdd_dir_mkdir(struct cdd_dir *d, const char *name)
{
    struct stat sb;
    if (fstatat(d->fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(sb.st_mode))
        return 0;
    char *p = at_path(d, name);
    int r = cdd_fs_fault_point("mkdir", p ? p : d->path);
    if (!r && mkdirat(d->fd, name, 0755) != 0) {
        int e = errno;
        if (!(e == EEXIST &&
              fstatat(d->fd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
              S_ISDIR(sb.st_mode)))
            r = cdd_fail_errno(p ? p : d->path, e, "cannot create folder");
    }
    free(p);
    return r;
}

int cdd_dir_symlink(const char *target, struct cdd_dir *d, const char *name)
{
    char *p = at_path(d, name);
    int r = cdd_fs_fault_point("symlink", p ? p : d->path);
    if (!r && symlinkat(target, d->fd, name) != 0)
        r = cdd_fail_errno(p ? p : d->path, errno, "cannot create symlink");
    free(p);
    return r;
}

int cdd_dir_set_mtime(struct cdd_dir *d, const char *name, int64_t sec)
{
    struct timespec ts[2];
    char *p = at_path(d, name);
    int r = cdd_fs_fault_point("mtime", p ? p : d->path);
    ts[0].tv_sec = ts[1].tv_sec = (time_t)sec;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    if (!r && utimensat(d->fd, name, ts, AT_SYMLINK_NOFOLLOW) != 0)
        r = cdd_fail_errno(p ? p : d->path, errno,
                           "cannot set the modification time");
    free(p);
    return r;
}

int cdd_dir_sync(struct cdd_dir *d)
{
    int r = cdd_fs_fault_point("fsync-dir", d->path);
    if (!r && fsync(d->fd) != 0 && errno != EINVAL)
        r = cdd_fail_errno(d->path, errno, "cannot flush folder to disk");
    return r;
}

int cdd_dir_list(struct cdd_dir *d, int (*fn)(void *ud, const char *name),
                 void *ud)
{
    int fd = openat(d->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dh) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return cdd_fail_errno(d->path, e, "cannot list folder");
    }
    return list_stream(dh, d->path, fn, ud);
}

static int append_fd(int fd, const char *path, const char *line)
{
    size_t len = strlen(line);
    char *buf = malloc(len + 1);
    if (!buf) {
        close(fd);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    memcpy(buf, line, len);
    buf[len] = '\n';
    /* One write() so concurrent readers never see half a line. */
    ssize_t n = write(fd, buf, len + 1);
    int e = errno;
    free(buf);
    if (n != (ssize_t)(len + 1)) {
        close(fd);
        return cdd_fail_errno(path, n < 0 ? e : ENOSPC, "cannot append");
    }
    if (fsync(fd) != 0) {
        e = errno;
        close(fd);
        return cdd_fail_errno(path, e, "cannot flush to disk");
    }
    if (close(fd) != 0)
        return cdd_fail_errno(path, errno, "cannot close");
    return 0;
}

int cdd_dir_append_line(struct cdd_dir *d, const char *name,
                        const char *line)
{
    char *p = at_path(d, name);
    const char *shown = p ? p : d->path;
    int r = cdd_fs_fault_point("append", shown);
    if (!r) {
        int fd = openat(d->fd, name,
                        O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                        0644);
        r = fd < 0 ? cdd_fail_errno(shown, errno, "cannot open for appending")
                   : append_fd(fd, shown, line);
    }
    free(p);
    return r;
}

/* Open-file-description locks where the kernel has them: a classic fcntl
 * lock is dropped when the process closes ANY descriptor of the file (for
 * instance one opened to read the holder's pid), an OFD lock only when its
 * own descriptor closes, and two OFD locks conflict even within one
 * process. glibc declares F_OFD_SETLK only with _GNU_SOURCE, which the
 * build defines for this file (CMakeLists.txt); on Linux the build fails
 * rather than quietly falling back to the classic lock. Other systems
 * without OFD locks keep F_SETLK. */
#if defined(__linux__) && !defined(F_OFD_SETLK)
#error "F_OFD_SETLK is not declared: build fsops_posix.c with _GNU_SOURCE"
#endif
#if defined(F_OFD_SETLK)
#define CDD_SETLK F_OFD_SETLK
#else
#define CDD_SETLK F_SETLK
#endif

/* The pid written in the lock file, or 0 when it holds none (the winner has
 * not written it yet, or a damaged file). */
static long read_holder(int fd)
{
    char buf[32]; /* fixed: a pid */
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    long pid = strtol(buf, &end, 10);
    if (errno || end == buf || (*end != '\n' && *end != '\0') || pid <= 0 ||
        pid > INT_MAX)
        return 0;
    return pid;
}

/* The holder of a classic (POSIX) lock on the file (dev, ino) as the kernel
 * lists it in /proc/locks, or 0: OFD locks are listed with pid -1, waiters
 * with "->", and systems without /proc list nothing. */
static long proc_locks_holder(dev_t dev, ino_t ino)
{
#if defined(__linux__)
    FILE *f = fopen("/proc/locks", "re");
    char line[256]; /* fixed: a /proc/locks line: numbers and a kind */
    long found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f)) {
        /* "1: POSIX  ADVISORY  WRITE 4242 08:02:131074 0 EOF" */
        char kind[16]; /* fixed: a lock kind word (%15s) */
        long pid;
        unsigned maj, min;
        unsigned long long inode;
        if (strstr(line, "->"))
            continue;
        if (sscanf(line, "%*d: %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj,
                   &min, &inode) != 5)
            continue;
        if (strcmp(kind, "POSIX") == 0 && pid > 0 && pid != (long)getpid() &&
            (ino_t)inode == ino && maj == (unsigned)major(dev) &&
            min == (unsigned)minor(dev))
            found = pid;
    }
    fclose(f);
    return found;
#else
    (void)dev;
    (void)ino;
    return 0;
#endif
}

/* Does process pid exist and have the file (dev, ino) open? 1 yes, 0 no,
 * -1 it exists but its descriptors cannot be read (no /proc, or another
 * user's process when we are not root). */
static int has_file_open(long pid, dev_t dev, ino_t ino)
{
    char dir[64]; /* fixed: /proc/, a pid, /fd */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    snprintf(dir, sizeof dir, "/proc/%ld/fd", pid);
    DIR *d = opendir(dir);
    if (!d) {
        struct stat self;
        if (errno == ENOENT && stat("/proc/self/fd", &self) == 0)
            return 0; /* /proc works, so the process has just gone */
        return -1;
    }
    int yes = 0;
    struct dirent *e;
    while (!yes && (e = readdir(d)) != NULL) {
        struct stat sb;
        if (e->d_name[0] == '.')
            continue;
        if (fstatat(dirfd(d), e->d_name, &sb, 0) == 0 && sb.st_dev == dev &&
            sb.st_ino == ino)
            yes = 1;
    }
    closedir(d);
    return yes;
}

/* Who holds the lock, as far as can be known: the kernel's word for a
 * classic lock; else the pid in the file when that process is alive and has
 * the file open (or is alive and its descriptors cannot be read); else 0,
 * "unknown" - never the stale pid of a process that exited, nor an
 * unrelated process that reuses its number. */
static long lock_holder(int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return 0;
    long pid = proc_locks_holder(sb.st_dev, sb.st_ino);
    if (pid)
        return pid;
    pid = read_holder(fd);
    if (pid <= 0)
        return 0;
    return has_file_open(pid, sb.st_dev, sb.st_ino) != 0 ? pid : 0;
}

int cdd_lockfile_open(const char *path, struct cdd_lock **out)
{
    *out = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return cdd_fail_errno(path, errno, "cannot open lock file");
    struct cdd_lock *l = malloc(sizeof *l);
    if (!l) {
        close(fd);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    l->fd = fd;
    *out = l;
    return 0;
}

int cdd_lockfile_open_at(struct cdd_dir *d, const char *name,
                         struct cdd_lock **out)
{
    char *p = at_path(d, name);
    const char *shown = p ? p : d->path;
    struct stat sb;
    int r = 0;
    *out = NULL;
    /* Relative to the held folder, the name not followed; O_NONBLOCK so a
     * FIFO planted there cannot hang the open (no effect on a file). */
    int fd = openat(d->fd, name,
                    O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                    0644);
    if (fd < 0 && errno == ELOOP)
        r = cdd_fail(CDD_E_STATE, shown, 0,
                     "is a link, not a regular file; a lock file that is a "
                     "link is not opened");
    else if (fd < 0 && errno == EISDIR)
        r = cdd_fail(CDD_E_STATE, shown, 0, "is a folder, not a regular file");
    else if (fd < 0)
        r = cdd_fail_errno(shown, errno, "cannot open lock file");
    else if (fstat(fd, &sb) != 0)
        r = cdd_fail_errno(shown, errno, "cannot read file status");
    else if (!S_ISREG(sb.st_mode))
        r = cdd_fail(CDD_E_STATE, shown, 0, "is not a regular file");
    struct cdd_lock *l = r ? NULL : malloc(sizeof *l);
    if (!r && !l)
        r = cdd_fail(CDD_E_NOMEM, shown, 0, NULL);
    free(p);
    if (r) {
        if (fd >= 0)
            close(fd);
        return r;
    }
    l->fd = fd;
    *out = l;
    return 0;
}

int cdd_lockfile_try(struct cdd_lock *l, const char *path, long *holder)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(l->fd, CDD_SETLK, &fl) == 0)
        return 0;
    if (errno != EACCES && errno != EAGAIN)
        return cdd_fail_errno(path, errno, "cannot lock");
    *holder = lock_holder(l->fd);
    return 1;
}

void cdd_lockfile_note_pid(struct cdd_lock *l)
{
    char line[32]; /* fixed: a pid */
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    /* Written over the old pid, then cut to length: a reader never sees an
     * empty file once a pid was there, and stops at the newline. */
    if (pwrite(l->fd, line, (size_t)n, 0) != n || ftruncate(l->fd, n) != 0) {
        /* Not fatal: the lock holds; a waiter says the holder is unknown. */
    }
}

void cdd_lock_release(struct cdd_lock *l)
{
    if (!l)
        return;
    close(l->fd); /* drops the fcntl lock */
    free(l);
}






int cdd_lock_is_at(struct cdd_lock *l, struct cdd_dir *d, const char *name)
{
    struct stat a, b;
    if (fstatat(d->fd, name, &a, AT_SYMLINK_NOFOLLOW) != 0 ||
        fstat(l->fd, &b) != 0)
        return 0;
    return S_ISREG(a.st_mode) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int cdd_lock_can_unlink(void)
{
    return 1;
}

int cdd_dir_removed(struct cdd_dir *d)
{
    struct stat sb;
    return fstat(d->fd, &sb) == 0 && sb.st_nlink == 0;
}

int cdd_lock_unlink_at(struct cdd_lock *l, struct cdd_dir *d,
                       const char *name)
{
    if (!cdd_lock_is_at(l, d, name)) {
        char *p = at_path(d, name);
        int r = cdd_fail(CDD_E_STATE, p ? p : name, 0,
                         "is not the lock file held; left as it is");
        free(p);
        return r;
    }
    return cdd_dir_unlink(d, name);
}

void cdd_fs_unlink_quiet(const char *path)
{
    unlink(path);
}

char *cdd_fs_dirname(const char *path)
{
    const char *s = strrchr(path, '/');
    if (!s)
        return strdup(".");
    if (s == path)
        return strdup("/");
    return strndup(path, (size_t)(s - path));
}

