/* POSIX implementation of the filesystem interface (fsops.h): exclusive
 * no-follow creation, fsync of files and folders, atomic rename, fcntl locks
 * that name their holder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sync_file_range (perf9: early writeback) */
#endif
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

#include "cdd/error.h"
#include "cdd/fsops.h"

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
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd < 0) {
        int e = errno;
        free(f->path);
        free(f);
        return cdd_fail_errno(path, e, "cannot open");
    }
    *out = f;
    return 0;
}

int cdd_rfile_read(struct cdd_rfile *f, void *buf, size_t len, size_t *got)
{
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
    if (fstat(f->fd, &sb) != 0)
        return cdd_fail_errno(f->path, errno, "cannot read file status");
    *size = (uint64_t)sb.st_size;
    return 0;
}

void cdd_rfile_close(struct cdd_rfile *f)
{
    if (!f)
        return;
    close(f->fd);
    free(f->path);
    free(f);
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

static int append_str(char **buf, const char *s)
{
    size_t old = *buf ? strlen(*buf) : 0, add = strlen(s);
    char *n = realloc(*buf, old + add + 2);
    if (!n)
        return -1;
    memcpy(n + old, s, add);
    n[old + add] = '\n';
    n[old + add + 1] = '\0';
    *buf = n;
    return 0;
}

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
            if (created && append_str(created, p) != 0) {
                r = cdd_fail(CDD_E_NOMEM, p, 0, NULL);
                goto out;
            }
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

int cdd_fs_list(const char *dir, int (*fn)(void *ud, const char *name),
                void *ud)
{
    DIR *d = opendir(dir);
    if (!d)
        return cdd_fail_errno(dir, errno, "cannot list folder");
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
        r = cdd_fail_errno(dir, errno, "cannot list folder");
    closedir(d);
    return r;
}

int cdd_fs_append_line(const char *path, const char *line)
{
    FAULT("append", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                  0644);
    if (fd < 0)
        return cdd_fail_errno(path, errno, "cannot open for appending");
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

/* Open-file-description locks where the kernel has them: a classic fcntl
 * lock is dropped when the process closes ANY descriptor of the file (for
 * instance one opened to read the holder's pid), an OFD lock only when its
 * own descriptor closes. */
#if defined(F_OFD_SETLK)
#define CDD_SETLK F_OFD_SETLK
#else
#define CDD_SETLK F_SETLK
#endif

static long read_holder(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
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

int cdd_lockfile_try(struct cdd_lock *l, const char *path, long *holder)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(l->fd, CDD_SETLK, &fl) == 0)
        return 0;
    if (errno != EACCES && errno != EAGAIN)
        return cdd_fail_errno(path, errno, "cannot lock");
    *holder = read_holder(l->fd);
    return 1;
}

void cdd_lockfile_note_pid(struct cdd_lock *l)
{
    char line[32];
    int n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    if (ftruncate(l->fd, 0) == 0 && pwrite(l->fd, line, (size_t)n, 0) < 0) {
        /* Not fatal: the lock holds; a waiter's message lacks our pid. */
    }
}

void cdd_lock_release(struct cdd_lock *l)
{
    if (!l)
        return;
    close(l->fd); /* drops the fcntl lock */
    free(l);
}

long cdd_getpid(void)
{
    return (long)getpid();
}

int cdd_isatty(int fd)
{
    return isatty(fd);
}

double cdd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double cdd_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cdd_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
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

void cdd_kill_self(void)
{
    raise(SIGKILL);
    _exit(137);
}
