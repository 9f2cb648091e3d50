/* Win32 implementation of the filesystem interface (fsops.h). Paths arrive
 * as '/'-separated UTF-8 and leave as \\?\ UTF-16 (wstr_win32.c), so non-ASCII
 * names and trees deeper than MAX_PATH work on every Windows.
 *
 * What differs from POSIX, and how it is handled:
 * - Files in use: Windows refuses to replace or delete a file another process
 *   holds open without FILE_SHARE_DELETE (ERROR_SHARING_VIOLATION) or a DLL
 *   mapped by a running program (ERROR_ACCESS_DENIED). Renames and deletes
 *   are retried for about two seconds (antivirus scanners and indexers hold
 *   files briefly), then reported as CDD_E_BUSY "in use", naming the file, so
 *   the transaction rolls back instead of leaving a half-installed tree.
 * - Access denied under Program Files: CDD_E_PERM with the advice to run from
 *   an elevated prompt (error_win32.c).
 * - Reparse points (symlinks, junctions) are never followed when creating,
 *   appending, listing or removing; lstat reports name surrogates as
 *   CDD_FT_SYMLINK so the transaction's "never write through a link out of
 *   the tree" check sees them.
 * - Directory entries need no fsync on NTFS (its metadata is journaled) and
 *   cannot be flushed without administrator rights, so cdd_fs_sync_dir() only
 *   passes the fault point; renames use MOVEFILE_WRITE_THROUGH instead.
 * - Locks: LockFileEx on a byte far beyond the end of the lock file, so the
 *   holder's pid at offset 0 stays readable (Windows locks are mandatory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/strbuf.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "win32_int.h"

#include <winioctl.h> /* FSCTL_GET_REPARSE_POINT */

#ifndef ERROR_DIRECTORY_NOT_SUPPORTED
#define ERROR_DIRECTORY_NOT_SUPPORTED 336L
#endif

struct cdd_file {
    HANDLE h;
    char *path;
};

struct cdd_rfile {
    HANDLE h;
    uint64_t pos; /* sequential position; pread leaves it alone */
    char *path;
    struct cdd_feed *feed; /* a file still arriving (cdd/feed.h), or NULL */
};

struct cdd_lock {
    HANDLE h;
};

/* How long a file in use is waited for before giving up. */
#define BUSY_RETRY_MS 2000
#define BUSY_STEP_MS 50

/* The byte locked by cdd_lock_acquire: far past any content, so readers of
 * the pid are never blocked by the mandatory lock. */
#define LOCK_OFFSET_HIGH 0x40000000u

#define FAULT(op, path)                                                        \
    do {                                                                       \
        int fault_r_ = cdd_fs_fault_point(op, path);                           \
        if (fault_r_)                                                          \
            return fault_r_;                                                   \
    } while (0)

/* ---- status ------------------------------------------------------------- */

/* Attributes and, for reparse points, the tag, without following the final
 * component. 0, or the GetLastError() value. */
static DWORD attrs_of(const wchar_t *w, WIN32_FILE_ATTRIBUTE_DATA *ad,
                      DWORD *tag)
{
    *tag = 0;
    if (!GetFileAttributesExW(w, GetFileExInfoStandard, ad))
        return GetLastError();
    if (ad->dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) {
        WIN32_FIND_DATAW fd;
        HANDLE fh = FindFirstFileExW(w, FindExInfoBasic, &fd,
                                     FindExSearchNameMatch, NULL, 0);
        if (fh != INVALID_HANDLE_VALUE) {
            *tag = fd.dwReserved0;
            FindClose(fh);
        } else {
            *tag = IO_REPARSE_TAG_SYMLINK; /* unknown: assume the worst */
        }
    }
    return 0;
}

static int is_not_found(DWORD e)
{
    return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ||
           e == ERROR_INVALID_NAME || e == ERROR_DIRECTORY ||
           e == ERROR_BAD_NETPATH || e == ERROR_BAD_NET_NAME ||
           e == ERROR_INVALID_DRIVE;
}

/* Symlinks and junctions redirect a name elsewhere ("name surrogates"); other
 * reparse points (deduplication, cloud placeholders) are ordinary files. */
static int is_link_tag(DWORD tag)
{
    return tag != 0 && IsReparseTagNameSurrogate(tag);
}

int cdd_fs_lstat(const char *path, struct cdd_stat *st)
{
    WIN32_FILE_ATTRIBUTE_DATA ad;
    DWORD tag;
    memset(st, 0, sizeof *st);
    wchar_t *w = cdd_w_path(path);
    if (!w) {
        /* A name Windows cannot even form does not exist. */
        int code = cdd_last_error()->code;
        if (code == CDD_E_NOTFOUND || code == CDD_E_USAGE) {
            cdd_clear_error();
            return 0;
        }
        return code;
    }
    DWORD e = attrs_of(w, &ad, &tag);
    free(w);
    if (e) {
        if (is_not_found(e))
            return 0;
        return cdd_fail_win32(path, e, "cannot read file status");
    }
    if (is_link_tag(tag))
        st->type = CDD_FT_SYMLINK;
    else if (ad.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
        st->type = CDD_FT_DIR;
    else if (ad.dwFileAttributes & FILE_ATTRIBUTE_DEVICE)
        st->type = CDD_FT_OTHER;
    else
        st->type = CDD_FT_FILE;
    st->size = ((uint64_t)ad.nFileSizeHigh << 32) | ad.nFileSizeLow;
    st->executable = 0; /* no execute bit: Windows decides by extension */
    /* FILETIME: 100 ns units since 1601. */
    st->mtime_ns = ((int64_t)(((uint64_t)ad.ftLastWriteTime.dwHighDateTime
                               << 32) |
                              ad.ftLastWriteTime.dwLowDateTime) -
                    INT64_C(116444736000000000)) *
                   100;
    return 0;
}

/* ---- writing ------------------------------------------------------------ */

static int new_file(const char *path, struct cdd_file **out)
{
    struct cdd_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = cdd_strdup(path))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    f->h = INVALID_HANDLE_VALUE;
    *out = f;
    return 0;
}

/* A new cdd_file on path opened for writing with the CreateFileW
 * disposition given (CREATE_NEW or OPEN_EXISTING), never through a final
 * link; readers may look, nobody may delete or write it while we write. */
static int open_for_write(const char *path, DWORD disposition,
                          const char *what, struct cdd_file **out)
{
    struct cdd_file *f = NULL;
    int r = new_file(path, &f);
    if (r)
        return r;
    wchar_t *w = cdd_w_path(path);
    if (!w) {
        cdd_file_abort(f);
        return cdd_last_error()->code;
    }
    f->h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ, NULL, disposition,
                       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                       NULL);
    DWORD e = GetLastError();
    free(w);
    if (f->h == INVALID_HANDLE_VALUE) {
        cdd_file_abort(f);
        return cdd_fail_win32(path, e, what);
    }
    *out = f;
    return 0;
}

int cdd_fs_create(const char *path, int executable, struct cdd_file **out)
{
    (void)executable;
    *out = NULL;
    FAULT("create", path);
    /* CREATE_NEW fails on any existing name, a symlink or junction included
     * (the O_EXCL|O_NOFOLLOW of POSIX). */
    return open_for_write(path, CREATE_NEW, "cannot create file", out);
}

/* A handle opened on an existing name must be a plain file, not a link we
 * would write through nor a folder. */
static int check_plain_file(HANDLE h, const char *path, uint64_t *size)
{
    BY_HANDLE_FILE_INFORMATION bi;
    if (!GetFileInformationByHandle(h, &bi))
        return cdd_fail_win32(path, GetLastError(), "cannot read file status");
    if (bi.dwFileAttributes &
        (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY))
        return cdd_fail(CDD_E_IO, path, 0, "not a regular file");
    if (size)
        *size = ((uint64_t)bi.nFileSizeHigh << 32) | bi.nFileSizeLow;
    return 0;
}

int cdd_fs_open_append(const char *path, struct cdd_file **out,
                       uint64_t *size)
{
    struct cdd_file *f = NULL;
    *out = NULL;
    FAULT("append", path);
    int r = open_for_write(path, OPEN_EXISTING,
                           "cannot open file for appending", &f);
    if (r)
        return r;
    r = check_plain_file(f->h, path, size);
    LARGE_INTEGER zero = {0};
    if (!r && !SetFilePointerEx(f->h, zero, NULL, FILE_END))
        r = cdd_fail_win32(path, GetLastError(), "cannot seek to the end");
    if (r) {
        cdd_file_abort(f);
        return r;
    }
    *out = f;
    return 0;
}

static int write_all(HANDLE h, const void *buf, size_t len, const char *path)
{
    const char *p = buf;
    while (len > 0) {
        DWORD chunk = len > (1u << 30) ? (1u << 30) : (DWORD)len, n = 0;
        if (!WriteFile(h, p, chunk, &n, NULL))
            return cdd_fail_win32(path, GetLastError(), "cannot write");
        if (n == 0)
            return cdd_fail_win32(path, ERROR_DISK_FULL, "cannot write");
        p += n;
        len -= n;
    }
    return 0;
}

int cdd_file_write(struct cdd_file *f, const void *buf, size_t len)
{
    FAULT("write", f->path);
    return write_all(f->h, buf, len, f->path);
}

int cdd_file_preallocate(struct cdd_file *f, uint64_t size)
{
    if (size == 0)
        return 0;
    /* Reserving the clusters up front makes a full disk fail here, before
     * any byte is written, and keeps large DLLs unfragmented. Only a full
     * disk is an error: elsewhere (FAT, network shares, Wine) the call may
     * simply be unsupported. */
    FILE_ALLOCATION_INFO ai;
    ai.AllocationSize.QuadPart = (LONGLONG)size;
    if (!SetFileInformationByHandle(f->h, FileAllocationInfo, &ai, sizeof ai)) {
        DWORD e = GetLastError();
        if (cdd_win32_err_code(e) == CDD_E_NOSPC)
            return cdd_fail_win32(f->path, e, "cannot reserve %llu bytes",
                                  (unsigned long long)size);
    }
    return 0;
}

int cdd_file_sync(struct cdd_file *f)
{
    FAULT("fsync", f->path);
    if (!FlushFileBuffers(f->h))
        return cdd_fail_win32(f->path, GetLastError(), "cannot flush to disk");
    return 0;
}

int cdd_file_close(struct cdd_file *f)
{
    int r = 0;
    if (!f)
        return 0;
    if (f->h != INVALID_HANDLE_VALUE && !CloseHandle(f->h))
        r = cdd_fail_win32(f->path, GetLastError(),
                           "cannot close (data may be lost)");
    free(f->path);
    free(f);
    return r;
}

void cdd_file_abort(struct cdd_file *f)
{
    if (!f)
        return;
    if (f->h != INVALID_HANDLE_VALUE)
        CloseHandle(f->h);
    free(f->path);
    free(f);
}

/* ---- what an open file is (fsops.h, struct cdd_finfo; issue 18) --------
 * Owners are not compared here: on Windows the DACL decides who may write,
 * and the readers' handles share writing (see cdd_fs_open_read), so a change
 * in place is caught by its change time (FILE_BASIC_INFO.ChangeTime, which a
 * writer without SeRestorePrivilege-level access cannot set back) and its
 * write time. */
static int64_t ft_ns(uint64_t t)
{
    return ((int64_t)t - INT64_C(116444736000000000)) * 100;
}

static int handle_info(HANDLE h, const char *path, struct cdd_finfo *fi)
{
    BY_HANDLE_FILE_INFORMATION bi;
    FILE_BASIC_INFO basic;
    memset(fi, 0, sizeof *fi);
    if (!GetFileInformationByHandle(h, &bi))
        return cdd_fail_win32(path, GetLastError(), "cannot read file status");
    fi->type = (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
                   ? CDD_FT_SYMLINK
               : (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ? CDD_FT_DIR
                                                                   : CDD_FT_FILE;
    fi->size = ((uint64_t)bi.nFileSizeHigh << 32) | bi.nFileSizeLow;
    fi->nlink = bi.nNumberOfLinks;
    fi->owner_is_caller = 1; /* owner_known 0: not compared */
    fi->mtime_ns = ft_ns(((uint64_t)bi.ftLastWriteTime.dwHighDateTime << 32) |
                         bi.ftLastWriteTime.dwLowDateTime);
    if (GetFileInformationByHandleEx(h, FileBasicInfo, &basic, sizeof basic))
        fi->ctime_ns = ft_ns((uint64_t)basic.ChangeTime.QuadPart);
    fi->dev = bi.dwVolumeSerialNumber;
    fi->ino = ((uint64_t)bi.nFileIndexHigh << 32) | bi.nFileIndexLow;
    return 0;
}

int cdd_rfile_info(struct cdd_rfile *f, struct cdd_finfo *fi)
{
    return handle_info(f->h, f->path, fi);
}

int cdd_file_info(struct cdd_file *f, struct cdd_finfo *fi)
{
    return handle_info(f->h, f->path, fi);
}

int cdd_fs_linfo(const char *path, struct cdd_finfo *fi)
{
    memset(fi, 0, sizeof *fi);
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS |
                               FILE_FLAG_OPEN_REPARSE_POINT,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return is_not_found(e) ? 0
                               : cdd_fail_win32(path, e,
                                                "cannot read file status");
    int r = handle_info(h, path, fi);
    CloseHandle(h);
    return r;
}

int cdd_rfile_dup(struct cdd_rfile *f, struct cdd_rfile **out)
{
    struct cdd_rfile *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d || !(d->path = cdd_strdup(f->path))) {
        free(d);
        return cdd_fail(CDD_E_NOMEM, f->path, 0, NULL);
    }
    if (!DuplicateHandle(GetCurrentProcess(), f->h, GetCurrentProcess(),
                         &d->h, 0, FALSE, DUPLICATE_SAME_ACCESS)) {
        DWORD e = GetLastError();
        free(d->path);
        free(d);
        return cdd_fail_win32(f->path, e, "cannot open another reader");
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

/* ---- reading ------------------------------------------------------------ */

int cdd_fs_open_read(const char *path, struct cdd_rfile **out)
{
    *out = NULL;
    struct cdd_rfile *f = calloc(1, sizeof *f);
    if (!f || !(f->path = cdd_strdup(path))) {
        free(f);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    wchar_t *w = cdd_w_path(path);
    if (!w) {
        free(f->path);
        free(f);
        return cdd_last_error()->code;
    }
    /* Share everything, as reading on POSIX never conflicts: a DLL that a
     * running program has loaded, a lock file its holder keeps open for
     * writing, a log being appended to can all be read, and our reading
     * never keeps a transaction from moving the file. */
    f->h = CreateFileW(w, GENERIC_READ,
                       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       NULL, OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN, NULL);
    DWORD e = GetLastError();
    free(w);
    if (f->h == INVALID_HANDLE_VALUE) {
        free(f->path);
        free(f);
        return cdd_fail_win32(path, e, "cannot open");
    }
    /* Only disk files (strict9, issue 9): a named pipe or a device would
     * block the first read or never end. */
    if (GetFileType(f->h) != FILE_TYPE_DISK) {
        CloseHandle(f->h);
        free(f->path);
        free(f);
        return cdd_fail(CDD_E_UNSAFE, path, 0,
                        "not a regular file (a pipe or device): refused");
    }
    *out = f;
    return 0;
}

/* Positioned read: an OVERLAPPED offset on a synchronous handle, so neither
 * read depends on (or disturbs) a shared file pointer. */
static int read_at(struct cdd_rfile *f, uint64_t off, void *buf, size_t len,
                   size_t *got)
{
    DWORD chunk = len > (1u << 30) ? (1u << 30) : (DWORD)len, n = 0;
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.Offset = (DWORD)off;
    ov.OffsetHigh = (DWORD)(off >> 32);
    *got = 0;
    if (!ReadFile(f->h, buf, chunk, &n, &ov)) {
        DWORD e = GetLastError();
        if (e == ERROR_HANDLE_EOF)
            return 0;
        return cdd_fail_win32(f->path, e, "cannot read");
    }
    *got = n;
    return 0;
}

static int raw_pread(struct cdd_rfile *f, uint64_t off, void *buf,
                     size_t len, size_t *got);

int cdd_rfile_read(struct cdd_rfile *f, void *buf, size_t len, size_t *got)
{
    int r = f->feed ? cdd_feed_pread(f->feed, f, raw_pread, f->pos, buf, len,
                                     got)
                    : read_at(f, f->pos, buf, len, got);
    if (!r)
        f->pos += *got;
    return r;
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
        size_t n;
        int r = read_at(f, off + done, (char *)buf + done, len - done, &n);
        if (r)
            return r;
        if (n == 0)
            break;
        done += n;
    }
    *got = done;
    return 0;
}

int cdd_rfile_size(struct cdd_rfile *f, uint64_t *size)
{
    LARGE_INTEGER li;
    if (f->feed) {
        *size = cdd_feed_size(f->feed);
        return 0;
    }
    if (!GetFileSizeEx(f->h, &li))
        return cdd_fail_win32(f->path, GetLastError(),
                              "cannot read file status");
    *size = (uint64_t)li.QuadPart;
    return 0;
}

/* LARGE_INTEGER / FILETIME: 100 ns units since 1601; 0 stays unknown. */
static int64_t win_time_ns(int64_t t)
{
    return t ? (t - INT64_C(116444736000000000)) * 100 : 0;
}

int cdd_fs_identity(struct cdd_rfile *f, struct cdd_fs_id *id)
{
    BY_HANDLE_FILE_INFORMATION bh;
    FILE_BASIC_INFO bi;
    if (!GetFileInformationByHandle(f->h, &bh) ||
        !GetFileInformationByHandleEx(f->h, FileBasicInfo, &bi, sizeof bi))
        return cdd_fail_win32(f->path, GetLastError(),
                              "cannot read file status");
    id->dev = bh.dwVolumeSerialNumber;
    id->ino = ((uint64_t)bh.nFileIndexHigh << 32) | bh.nFileIndexLow;
    id->size = ((uint64_t)bh.nFileSizeHigh << 32) | bh.nFileSizeLow;
    id->mtime_ns = win_time_ns(bi.LastWriteTime.QuadPart);
    id->ctime_ns = win_time_ns(bi.ChangeTime.QuadPart);
    return 0;
}

void cdd_rfile_close(struct cdd_rfile *f)
{
    if (!f)
        return;
    CloseHandle(f->h);
    cdd_feed_unref(f->feed);
    free(f->path);
    free(f);
}

void cdd_rfile_set_feed(struct cdd_rfile *f, struct cdd_feed *feed)
{
    f->feed = feed;
    f->pos = 0;
}

struct cdd_feed *cdd_rfile_feed(const struct cdd_rfile *f)
{
    return f->feed;
}

/* ---- files in use ------------------------------------------------------- */

/* Worth waiting for: a sharing or lock violation, or access denied, which is
 * also what replacing or deleting a loaded DLL gives. */
static int maybe_busy(DWORD e)
{
    return e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION ||
           e == ERROR_ACCESS_DENIED || e == ERROR_USER_MAPPED_FILE;
}

/* After the retries: is w held by someone (CDD_E_BUSY), or do we lack the
 * right (CDD_E_PERM)? Opening it for DELETE tells: a sharing violation means
 * a handle without FILE_SHARE_DELETE is open; success while the operation was
 * denied means it is mapped (a DLL or EXE of a running program), unless it is
 * read-only. */
static int classify_denied(const wchar_t *w, const char *path, DWORD e,
                           const char *what)
{
    if (e == ERROR_SHARING_VIOLATION || e == ERROR_LOCK_VIOLATION ||
        e == ERROR_USER_MAPPED_FILE)
        return cdd_fail(CDD_E_BUSY, path, (int)e,
                        "cannot %s: the file is in use by another program "
                        "(close it, e.g. a Python session that loaded "
                        "cuDNN, and run again)",
                        what);
    DWORD a = GetFileAttributesW(w);
    if (a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_READONLY))
        return cdd_fail(CDD_E_PERM, path, (int)e,
                        "cannot %s: the file is read-only", what);

    HANDLE h = CreateFileW(w, DELETE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT |
                               FILE_FLAG_BACKUP_SEMANTICS,
                           NULL);
    DWORD e2 = GetLastError();
    if (h != INVALID_HANDLE_VALUE) {
        CloseHandle(h);
        return cdd_fail(CDD_E_BUSY, path, (int)e,
                        "cannot %s: the file is in use (loaded by a running "
                        "program; close it and run again)",
                        what);
    }
    if (e2 == ERROR_SHARING_VIOLATION)
        return cdd_fail(CDD_E_BUSY, path, (int)e2,
                        "cannot %s: the file is in use by another program",
                        what);
    return cdd_fail_win32(path, e, "cannot %s", what);
}

int cdd_fs_rename(const char *from, const char *to)
{
    FAULT("rename", to);
    wchar_t *wf = cdd_w_path(from), *wt = wf ? cdd_w_path(to) : NULL;
    int r = 0;
    if (!wf || !wt) {
        r = cdd_last_error()->code;
        goto out;
    }
    double deadline = cdd_monotonic() + BUSY_RETRY_MS / 1000.0;
    for (;;) {
        if (MoveFileExW(wf, wt,
                        MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
            break;
        DWORD e = GetLastError();
        DWORD at = GetFileAttributesW(wt);
        if (e == ERROR_ACCESS_DENIED && at != INVALID_FILE_ATTRIBUTES &&
            (at & FILE_ATTRIBUTE_DIRECTORY) &&
            !(at & FILE_ATTRIBUTE_REPARSE_POINT)) {
            /* Windows never renames over a folder (POSIX would over an
             * empty one): not a file in use, no point in waiting. */
            r = cdd_fail(CDD_E_IO, to, (int)e,
                         "cannot move %s here: a folder has that name", from);
            break;
        }
        if (!maybe_busy(e) || cdd_monotonic() >= deadline || cdd_cancelled()) {
            /* Which end is held? Ours (from) is in the stage or backup; the
             * destination is what a user's program may hold. */
            if (!maybe_busy(e))
                r = cdd_fail_win32(to, e, "cannot move %s into place", from);
            else if (at != INVALID_FILE_ATTRIBUTES)
                r = classify_denied(wt, to, e, "replace it");
            else
                r = classify_denied(wf, from, e, "move it");
            break;
        }
        Sleep(BUSY_STEP_MS);
    }
out:
    free(wf);
    free(wt);
    return r;
}

/* Delete a file, or a link of either kind (a directory symlink or junction is
 * removed with RemoveDirectoryW, never followed). Read-only files are
 * deleted too, as POSIX unlink() ignores the mode. */
static DWORD delete_name(const wchar_t *w)
{
    DWORD a = GetFileAttributesW(w);
    if (a == INVALID_FILE_ATTRIBUTES)
        return GetLastError();
    if ((a & FILE_ATTRIBUTE_DIRECTORY) && (a & FILE_ATTRIBUTE_REPARSE_POINT))
        return RemoveDirectoryW(w) ? 0 : GetLastError();
    if (a & FILE_ATTRIBUTE_DIRECTORY)
        return ERROR_DIRECTORY_NOT_SUPPORTED;
    if (DeleteFileW(w))
        return 0;
    DWORD e = GetLastError();
    if (e == ERROR_ACCESS_DENIED && (a & FILE_ATTRIBUTE_READONLY) &&
        SetFileAttributesW(w, a & ~(DWORD)FILE_ATTRIBUTE_READONLY)) {
        if (DeleteFileW(w))
            return 0;
        e = GetLastError();
        SetFileAttributesW(w, a);
    }
    return e;
}

int cdd_fs_unlink(const char *path)
{
    FAULT("unlink", path);
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    int r = 0;
    double deadline = cdd_monotonic() + BUSY_RETRY_MS / 1000.0;
    for (;;) {
        DWORD e = delete_name(w);
        if (!e)
            break;
        if (!maybe_busy(e) || cdd_monotonic() >= deadline || cdd_cancelled()) {
            r = maybe_busy(e) ? classify_denied(w, path, e, "remove it")
                : e == ERROR_DIRECTORY_NOT_SUPPORTED
                    ? cdd_fail(CDD_E_IO, path, (int)e,
                               "cannot remove: is a folder")
                    : cdd_fail_win32(path, e, "cannot remove");
            break;
        }
        Sleep(BUSY_STEP_MS);
    }
    free(w);
    return r;
}

int cdd_fs_rmdir(const char *path)
{
    FAULT("rmdir", path);
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    int r = 0;
    double deadline = cdd_monotonic() + BUSY_RETRY_MS / 1000.0;
    /* A folder a program (Explorer, a shell) has as its current folder, or
     * whose just-deleted files are still held, refuses briefly. */
    while (!RemoveDirectoryW(w)) {
        DWORD e = GetLastError();
        if (!maybe_busy(e) || cdd_monotonic() >= deadline || cdd_cancelled()) {
            r = e == ERROR_DIR_NOT_EMPTY
                    ? cdd_fail(CDD_E_IO, path, (int)e,
                               "cannot remove folder: not empty")
                : maybe_busy(e) ? classify_denied(w, path, e, "remove the folder")
                                : cdd_fail_win32(path, e,
                                                 "cannot remove folder");
            break;
        }
        Sleep(BUSY_STEP_MS);
    }
    free(w);
    return r;
}

/* ---- folders ------------------------------------------------------------ */

static int is_dir_w(const wchar_t *w)
{
    DWORD a = GetFileAttributesW(w);
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

int cdd_fs_mkdir(const char *path)
{
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    int r = 0;
    if (is_dir_w(w))
        goto out;
    r = cdd_fs_fault_point("mkdir", path);
    if (r)
        goto out;
    if (!CreateDirectoryW(w, NULL)) {
        DWORD e = GetLastError();
        if (e == ERROR_ALREADY_EXISTS && is_dir_w(w))
            goto out;
        r = e == ERROR_ALREADY_EXISTS
                ? cdd_fail(CDD_E_IO, path, (int)e,
                           "cannot create folder: a file has that name")
                : cdd_fail_win32(path, e, "cannot create folder");
    }
out:
    free(w);
    return r;
}

/* The most bytes mkdirs' list of created folders can need for a path of len
 * bytes: every prefix ending before a separator (at most len / 2 + 1 of
 * them), each with its newline, and the NUL. */
#define CREATED_LIST_MAX(len) (((len) / 2 + 1) * ((len) + 1) + 1)

static int is_sep(char c)
{
    return c == '/' || c == '\\';
}

/* Length of the part of path that is a root and never created: "C:/",
 * "//server/share/", "/" (the current drive's root), or 0 (relative). */
static size_t root_len(const char *p)
{
    if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
        p[1] == ':')
        return is_sep(p[2]) ? 3 : 2;
    if (is_sep(p[0]) && is_sep(p[1])) {
        size_t i = 2;
        for (int part = 0; part < 2; part++) {
            while (p[i] && !is_sep(p[i]))
                i++;
            if (p[i])
                i++;
        }
        return i;
    }
    return is_sep(p[0]) ? 1 : 0;
}

int cdd_fs_mkdirs(const char *path, char **created)
{
    int r = 0;
    char *p = cdd_strdup(path);
    if (created)
        *created = NULL;
    if (!p)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    size_t len = strlen(p), skip = root_len(p);
    while (len > skip && is_sep(p[len - 1]))
        p[--len] = '\0';
    /* Walk down from the top so parents come first. */
    for (char *s = p + skip; len > skip; s++) {
        if (*s && !is_sep(*s))
            continue;
        char c = *s;
        *s = '\0';
        struct cdd_stat st;
        r = cdd_fs_lstat(p, &st);
        if (r)
            goto out;
        if (st.type == CDD_FT_NONE) {
            r = cdd_fs_mkdir(p);
            if (r)
                goto out;
            if (created &&
                (r = cdd_lines_add(created, p, strlen(p), CREATED_LIST_MAX(len),
                                   "list of created folders")) != 0)
                goto out;
        } else if (st.type != CDD_FT_DIR && st.type != CDD_FT_SYMLINK) {
            r = cdd_fail(CDD_E_IO, p, 0, "exists and is not a folder");
            goto out;
        } else if (st.type == CDD_FT_SYMLINK) {
            /* As POSIX stat() would: a link is fine if it leads to a folder. */
            wchar_t *w = cdd_w_path(p);
            int ok = w && is_dir_w(w);
            free(w);
            if (!ok) {
                r = cdd_fail(CDD_E_IO, p, 0, "exists and is not a folder");
                goto out;
            }
        }
        *s = c;
        if (c == '\0')
            break;
    }
out:
    free(p);
    return r;
}

/* ---- links -------------------------------------------------------------- */

#ifndef SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE
#define SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE 0x2
#endif

int cdd_fs_symlink(const char *target, const char *linkpath)
{
    FAULT("symlink", linkpath);
    /* The target stays relative (a name in the same folder, as pathsafe
     * requires): only the separators change. */
    wchar_t *wt = cdd_w_from_utf8(target, linkpath);
    wchar_t *wl = wt ? cdd_w_path(linkpath) : NULL;
    int r = 0;
    if (!wt || !wl) {
        r = cdd_last_error()->code;
        goto out;
    }
    for (wchar_t *p = wt; *p; p++)
        if (*p == L'/')
            *p = L'\\';
    /* Unprivileged creation works in Developer Mode (Windows 10 1703+);
     * older systems reject the flag itself, so try once without it. */
    if (!CreateSymbolicLinkW(wl, wt,
                             SYMBOLIC_LINK_FLAG_ALLOW_UNPRIVILEGED_CREATE)) {
        DWORD e = GetLastError();
        if (e == ERROR_INVALID_PARAMETER && CreateSymbolicLinkW(wl, wt, 0))
            goto out;
        if (e == ERROR_INVALID_PARAMETER)
            e = GetLastError();
        r = e == ERROR_PRIVILEGE_NOT_HELD
                ? cdd_fail(CDD_E_PERM, linkpath, (int)e,
                           "cannot create symbolic link: Windows allows it "
                           "only in Developer Mode or from an elevated "
                           "prompt (Windows cuDNN archives have no links; "
                           "this is a Linux archive)")
                : cdd_fail_win32(linkpath, e, "cannot create symlink");
        goto out;
    }
    /* Trust, but check: some implementations (Wine's, for one) report
     * success without creating anything, and a missing link would be a
     * missing library after a "successful" install. */
    DWORD a = GetFileAttributesW(wl);
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_REPARSE_POINT))
        r = cdd_fail(CDD_E_NOTSUP, linkpath, 0,
                     "cannot create symbolic link: the system reported "
                     "success but created none (symbolic links are not "
                     "supported here; Windows cuDNN archives have none)");
out:
    free(wt);
    free(wl);
    return r;
}

/* The reparse buffer of symlinks and junctions (ntifs.h, not in the SDK
 * headers user-mode programs get). */
struct reparse_buf {
    ULONG tag;
    USHORT data_len;
    USHORT reserved;
    USHORT subst_off, subst_len, print_off, print_len;
    union {
        struct {
            ULONG flags;
            WCHAR path[1]; /* fixed: the open-ended name of a reparse buffer */
        } link;
        struct {
            WCHAR path[1]; /* fixed: the open-ended name of a reparse buffer */
        } mount;
    } u;
};

int cdd_fs_readlink(const char *path, char *buf, size_t len)
{
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT |
                               FILE_FLAG_BACKUP_SEMANTICS,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return cdd_fail_win32(path, e, "cannot read symlink");
    union {
        struct reparse_buf rb;
        BYTE raw[MAXIMUM_REPARSE_DATA_BUFFER_SIZE];
    } u;
    DWORD got = 0;
    BOOL ok = DeviceIoControl(h, FSCTL_GET_REPARSE_POINT, NULL, 0, &u,
                              sizeof u, &got, NULL);
    e = GetLastError();
    CloseHandle(h);
    if (!ok)
        return cdd_fail_win32(path, e, "cannot read symlink");
    const WCHAR *base;
    USHORT off, n;
    if (u.rb.tag == IO_REPARSE_TAG_SYMLINK) {
        base = u.rb.u.link.path;
    } else if (u.rb.tag == IO_REPARSE_TAG_MOUNT_POINT) {
        base = u.rb.u.mount.path;
    } else {
        return cdd_fail(CDD_E_IO, path, 0, "not a symbolic link");
    }
    /* The print name is the target as given; the substitute name carries
     * the \??\ prefix for absolute targets. */
    if (u.rb.print_len > 0) {
        off = u.rb.print_off;
        n = u.rb.print_len;
    } else {
        off = u.rb.subst_off;
        n = u.rb.subst_len;
    }
    if ((size_t)((const BYTE *)base - u.raw) + off + n > got)
        return cdd_fail(CDD_E_IO, path, 0, "malformed symlink data");
    const WCHAR *t = (const WCHAR *)((const BYTE *)base + off);
    int nc = n / (int)sizeof(WCHAR);
    if (nc >= 4 && wcsncmp(t, L"\\??\\", 4) == 0) {
        t += 4;
        nc -= 4;
    }
    char *s = cdd_utf8_from_w(t, nc);
    if (!s)
        return cdd_last_error()->code;
    for (char *p = s; *p; p++)
        if (*p == '\\')
            *p = '/';
    int r = 0;
    if (strlen(s) + 1 > len)
        r = cdd_fail(CDD_E_IO, path, 0, "symlink target too long");
    else
        memcpy(buf, s, strlen(s) + 1);
    free(s);
    return r;
}

int cdd_fs_sync_dir(const char *path)
{
    /* NTFS journals its metadata and the renames were WRITE_THROUGH;
     * flushing a folder handle needs administrator rights. The fault point
     * stays so fault-injection runs count the same steps on every OS. */
    FAULT("fsync-dir", path);
    return 0;
}

/* ntdll's NtQueryObject, looked up at run time so that the .exe imports no
 * DLL beyond those scripts/windows.sh allows. */
typedef LONG(WINAPI *nt_query_object_fn)(HANDLE, int, void *, ULONG, ULONG *);
#define NT_OBJECT_NAME_INFORMATION 1
#define NT_BUFFER_OVERFLOW ((LONG)0x80000005L)
#define NT_INFO_LENGTH_MISMATCH ((LONG)0xC0000004L)
#define NT_BUFFER_TOO_SMALL ((LONG)0xC0000023L)
/* Where a name may grow to: UNICODE_STRING counts bytes in a USHORT. */
#define NT_NAME_MAX_BYTES (64u * 1024u + 64u)

struct nt_name_info { /* OBJECT_NAME_INFORMATION: one UNICODE_STRING */
    USHORT len, max;
    WCHAR *buf;
};

/* The handle's object name ("\??\C:\..." or "\Device\HarddiskVolume2\..."),
 * the buffer sized from the system's answer; NULL when it cannot be had. */
static wchar_t *nt_object_name(HANDLE h)
{
    HMODULE nt = GetModuleHandleW(L"ntdll.dll");
    FARPROC f = nt ? GetProcAddress(nt, "NtQueryObject") : NULL;
    nt_query_object_fn query;
    if (!f)
        return NULL;
    memcpy(&query, &f, sizeof query);
    ULONG cap = 1024;
    for (int tries = 0; tries < 8 && cap <= NT_NAME_MAX_BYTES; tries++) {
        ULONG need = 0;
        struct nt_name_info *info = malloc(cap);
        if (!info)
            return NULL;
        LONG st = query(h, NT_OBJECT_NAME_INFORMATION, info, cap, &need);
        if (st >= 0 && info->buf) {
            size_t n = info->len / sizeof(WCHAR);
            wchar_t *w = malloc((n + 1) * sizeof *w);
            if (w) {
                memcpy(w, info->buf, n * sizeof *w);
                w[n] = L'\0';
            }
            free(info);
            return w;
        }
        free(info);
        if (st != NT_BUFFER_OVERFLOW && st != NT_INFO_LENGTH_MISMATCH &&
            st != NT_BUFFER_TOO_SMALL)
            return NULL;
        cap = need > cap ? need + (ULONG)sizeof(WCHAR) : cap * 2;
    }
    return NULL;
}

/* "\\?\X:" + rest for an NT name under the device that drive X: stands
 * for; NULL when no drive letter names that device. */
static wchar_t *dos_name_of_device_path(const wchar_t *nt)
{
    DWORD drives = GetLogicalDrives();
    for (int i = 0; i < 26; i++) {
        if (!(drives & (1u << i)))
            continue;
        wchar_t drive[3] = {(wchar_t)(L'A' + i), L':', L'\0'}; /* fixed: a drive letter */
        wchar_t *target = NULL;
        DWORD got = 0;
        for (DWORD cap = 128; cap <= 32768 && !got; cap *= 2) {
            free(target);
            if (!(target = malloc((size_t)cap * sizeof *target)))
                return NULL;
            got = QueryDosDeviceW(drive, target, cap);
            if (!got && GetLastError() != ERROR_INSUFFICIENT_BUFFER)
                break;
        }
        size_t tn = got ? wcslen(target) : 0;
        if (tn && wcsncmp(nt, target, tn) == 0 && nt[tn] == L'\\') {
            size_t rest = wcslen(nt + tn);
            wchar_t *w = malloc((6 + rest + 1) * sizeof *w);
            if (w) {
                memcpy(w, L"\\\\?\\", 4 * sizeof *w);
                w[4] = drive[0];
                w[5] = L':';
                memcpy(w + 6, nt + tn, (rest + 1) * sizeof *w);
            }
            free(target);
            return w;
        }
        free(target);
    }
    return NULL;
}

/* The handle's path in \\?\ form from its NT object name, for when
 * GetFinalPathNameByHandleW cannot give it: Wine's (8.0 and others) holds
 * the name in a buffer of MAX_PATH characters inside the call and fails
 * with ERROR_MORE_DATA (234) for a longer path, whatever buffer the caller
 * passes. */
static wchar_t *final_path_nt(HANDLE h)
{
    wchar_t *nt = nt_object_name(h);
    wchar_t *w = NULL;
    if (!nt)
        return NULL;
    if (wcsncmp(nt, L"\\??\\", 4) == 0) {
        /* The DOS devices folder: "\??\C:\..." is "\\?\C:\...". */
        w = nt;
        w[1] = L'\\';
        return w;
    }
    w = dos_name_of_device_path(nt);
    free(nt);
    return w;
}

/* The path the handle's file really has (links and junctions resolved, the
 * case stored on disk), as UTF-8; NULL with the error set. The buffer is
 * sized from the first call's answer, and asked for again when the name grew
 * in between (a rename); where the call itself cannot give the name, the
 * handle's NT object name stands in (final_path_nt). */
/* UTF-16 units a resolved path may take with its terminator: the 32767 of a
 * \\?\ path, the longest Windows gives. */
#define FINAL_PATH_MAX_W 32768

static char *final_path(HANDLE h, const char *shown)
{
    wchar_t *fw = NULL;
    int ok = 0;
    DWORD need = GetFinalPathNameByHandleW(h, NULL, 0, VOLUME_NAME_DOS);
    DWORD e = need ? 0 : GetLastError();
    for (int tries = 0; need && tries < 4; tries++) {
        if (CDD_GROW(fw, NULL, (size_t)need + 1, FINAL_PATH_MAX_W,
                     "resolved path")) {
            free(fw);
            return NULL;
        }
        DWORD got = GetFinalPathNameByHandleW(h, fw, need + 1, VOLUME_NAME_DOS);
        if (got && got <= need) { /* the length without the terminator */
            ok = 1;
            break;
        }
        if (!got) {
            e = GetLastError();
            break;
        }
        need = got; /* it grew: the size it needs now */
    }
    if (!ok) {
        free(fw);
        fw = final_path_nt(h);
    }
    char *out = NULL;
    if (!fw)
        cdd_fail_win32(shown, e ? e : ERROR_MORE_DATA, "cannot resolve path");
    else
        out = cdd_path_from_w(fw);
    free(fw);
    return out;
}

int cdd_fs_realpath(const char *path, char **out)
{
    *out = NULL;
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    /* Opening follows links and junctions: the final path is where the
     * name really leads, in the case stored on disk. */
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return cdd_fail_win32(path, e, "cannot resolve path");
    *out = final_path(h, path);
    CloseHandle(h);
    return *out ? 0 : cdd_last_error()->code;
}

/* ---- listing and removal ------------------------------------------------ */

int cdd_fs_list(const char *dir, int (*fn)(void *ud, const char *name),
                void *ud)
{
    size_t n = strlen(dir);
    char *pat = malloc(n + 3);
    if (!pat)
        return cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
    memcpy(pat, dir, n);
    memcpy(pat + n, "/*", 3);
    wchar_t *w = cdd_w_path(pat);
    free(pat);
    if (!w)
        return cdd_last_error()->code;
    WIN32_FIND_DATAW fd;
    HANDLE fh = FindFirstFileExW(w, FindExInfoBasic, &fd,
                                 FindExSearchNameMatch, NULL,
                                 FIND_FIRST_EX_LARGE_FETCH);
    DWORD e = GetLastError();
    free(w);
    if (fh == INVALID_HANDLE_VALUE) {
        if (e == ERROR_FILE_NOT_FOUND) /* no entries at all */
            return 0;
        return cdd_fail_win32(dir, e, "cannot list folder");
    }
    int r = 0;
    do {
        if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
            continue;
        char *name = cdd_utf8_from_w(fd.cFileName, -1);
        if (!name) {
            r = cdd_fail(CDD_E_IO, dir, 0,
                         "holds a name that is not valid Unicode");
            break;
        }
        r = fn(ud, name);
        free(name);
        if (r)
            break;
    } while (FindNextFileW(fh, &fd));
    if (!r && (e = GetLastError()) != ERROR_NO_MORE_FILES)
        r = cdd_fail_win32(dir, e, "cannot list folder");
    FindClose(fh);
    return r;
}

/* ---- small files -------------------------------------------------------- */

int cdd_fs_append_line(const char *path, const char *line)
{
    FAULT("append", path);
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    /* FILE_APPEND_DATA without FILE_WRITE_DATA: every write lands at the
     * end, even with another appender (O_APPEND). */
    HANDLE h = CreateFileW(w, FILE_APPEND_DATA | SYNCHRONIZE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_ALWAYS,
                           FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return cdd_fail_win32(path, e, "cannot open for appending");
    int r = check_plain_file(h, path, NULL);
    size_t len = strlen(line);
    char *buf = r ? NULL : malloc(len + 1);
    if (!r && !buf)
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    if (!r) {
        memcpy(buf, line, len);
        buf[len] = '\n';
        /* One WriteFile so concurrent readers never see half a line. */
        r = write_all(h, buf, len + 1, path);
    }
    free(buf);
    if (!r && !FlushFileBuffers(h))
        r = cdd_fail_win32(path, GetLastError(), "cannot flush to disk");
    if (!CloseHandle(h) && !r)
        r = cdd_fail_win32(path, GetLastError(), "cannot close");
    return r;
}

char *cdd_fs_dirname(const char *path)
{
    const char *s = NULL;
    for (const char *p = path; *p; p++)
        if (is_sep(*p))
            s = p;
    if (!s)
        return cdd_strdup(".");
    size_t n = (size_t)(s - path);
    if (n < root_len(path))
        n = root_len(path);
    return cdd_strndup(path, n);
}

/* A leftover without a fault point: not a step of the operation, only the
 * clean-up of a killed earlier one. */
void cdd_fs_unlink_quiet(const char *path)
{
    wchar_t *w = cdd_w_path(path);
    if (w)
        delete_name(w);
    free(w);
    cdd_clear_error();
}

/* ---- directory handles (fsops.h) -------------------------------------------
 * A folder handle opened without FILE_SHARE_DELETE: while we hold it, the
 * folder cannot be renamed, moved or deleted (nor any folder above it,
 * which Windows refuses to rename while something inside is open), so the
 * final path read from the handle keeps naming it, and the *_at calls below
 * act on "<final path>/<name>" with the path functions above, none of
 * which follows a link in the final component. Each folder is opened with
 * FILE_FLAG_OPEN_REPARSE_POINT (a junction or symlink is seen, never
 * entered) and its final path must stay beneath the tree's root
 * (cdd_dir_is_beneath, checked by tree.c at every step). */

struct cdd_dir {
    HANDLE h;
    char *path; /* the final path of h: "C:/..." */
};

static char *dir_join(const struct cdd_dir *d, const char *name)
{
    size_t a = strlen(d->path), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) {
        cdd_fail(CDD_E_NOMEM, d->path, 0, NULL);
        return NULL;
    }
    memcpy(p, d->path, a);
    size_t k = a;
    if (!(a && d->path[a - 1] == '/'))
        p[k++] = '/';
    memcpy(p + k, name, b + 1);
    return p;
}

/* Open a folder handle on path; follow: whether a final link is entered. */
static int dir_open(const char *path, const char *shown, int follow,
                    struct cdd_dir **out)
{
    *out = NULL;
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    HANDLE h = CreateFileW(w, FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES |
                                  SYNCHRONIZE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING,
                           FILE_FLAG_BACKUP_SEMANTICS |
                               (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT),
                           NULL);
    DWORD e = GetLastError();
    if (h == INVALID_HANDLE_VALUE) {
        free(w);
        if (is_not_found(e))
            return cdd_fail(CDD_E_NOTFOUND, shown, 0, "no such folder");
        return cdd_fail_win32(shown, e, "cannot open folder");
    }
    BY_HANDLE_FILE_INFORMATION bi;
    int r = 0;
    if (!GetFileInformationByHandle(h, &bi)) {
        r = cdd_fail_win32(shown, GetLastError(), "cannot read folder status");
    } else if (!(bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)) {
        r = cdd_fail(CDD_E_UNSAFE, shown, 0, "is not a folder");
    } else if (!follow && (bi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
        WIN32_FILE_ATTRIBUTE_DATA ad;
        DWORD tag = 0;
        if (attrs_of(w, &ad, &tag) != 0 || is_link_tag(tag))
            r = cdd_fail(CDD_E_UNSAFE, shown, 0,
                         "is a link or junction; not followed");
    }
    free(w);
    struct cdd_dir *d = NULL;
    if (!r && (!(d = calloc(1, sizeof *d)) ||
               !(d->path = final_path(h, shown)))) {
        r = d ? cdd_last_error()->code : cdd_fail(CDD_E_NOMEM, shown, 0, NULL);
        free(d);
        d = NULL;
    }
    if (r) {
        CloseHandle(h);
        return r;
    }
    d->h = h;
    *out = d;
    return 0;
}

int cdd_dir_open_path(const char *path, struct cdd_dir **out, char **real)
{
    if (real)
        *real = NULL;
    int r = dir_open(path, path, 1, out);
    if (!r && real && !(*real = cdd_strdup((*out)->path))) {
        cdd_dir_close(*out);
        *out = NULL;
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    return r;
}

int cdd_dir_open_at(struct cdd_dir *d, const char *name, const char *path,
                    struct cdd_dir **out)
{
    *out = NULL;
    char *p = strcmp(name, ".") == 0 ? cdd_strdup(d->path) : dir_join(d, name);
    if (!p)
        return cdd_fail(CDD_E_NOMEM, d->path, 0, NULL);
    int r = dir_open(p, path ? path : p, 0, out);
    free(p);
    return r;
}

int cdd_dir_open_beneath(struct cdd_dir *d, const char *rel, int no_links,
                         const char *path, struct cdd_dir **out)
{
    (void)d;
    (void)rel;
    (void)no_links;
    (void)path;
    *out = NULL;
    return 1; /* no kernel help: tree.c walks, handle by handle */
}

void cdd_dir_fast_path(int on)
{
    (void)on; /* there is no fast path here */
}

static int fold_eq(char a, char b)
{
    if (a >= 'A' && a <= 'Z')
        a = (char)(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z')
        b = (char)(b - 'A' + 'a');
    return a == b;
}

int cdd_dir_is_beneath(struct cdd_dir *d, const char *root_real)
{
    char *now = final_path(d->h, d->path);
    int ok = 0;
    if (now) {
        size_t n = strlen(root_real);
        while (n > 0 && root_real[n - 1] == '/')
            n--;
        ok = 1;
        for (size_t i = 0; i < n && ok; i++)
            ok = now[i] && fold_eq(now[i], root_real[i]);
        ok = ok && (now[n] == '\0' || now[n] == '/');
    }
    free(now);
    cdd_clear_error();
    return ok;
}

int cdd_dir_same_at(struct cdd_dir *parent, const char *name,
                    struct cdd_dir *d)
{
    (void)parent;
    (void)name;
    (void)d;
    return 1; /* held without FILE_SHARE_DELETE: it cannot have moved */
}

void cdd_dir_close(struct cdd_dir *d)
{
    if (!d)
        return;
    CloseHandle(d->h);
    free(d->path);
    free(d);
}

int cdd_lock_is_at(struct cdd_lock *l, struct cdd_dir *d, const char *name)
{
    (void)l;
    (void)d;
    (void)name;
    return 1; /* never removed on Windows (cdd_lock_unlink_at) */
}

int cdd_lock_can_unlink(void)
{
    return 0;
}

int cdd_dir_removed(struct cdd_dir *d)
{
    (void)d;
    return 0; /* held without FILE_SHARE_DELETE: it cannot be removed */
}

int cdd_lock_unlink_at(struct cdd_lock *l, struct cdd_dir *d,
                       const char *name)
{
    (void)l;
    (void)d;
    return cdd_fail(CDD_E_NOTSUP, name, 0,
                    "the lock file stays on Windows (a file deleted while "
                    "others hold it open refuses new opens)");
}

const char *cdd_dir_path(const struct cdd_dir *d)
{
    return d->path;
}

int cdd_dir_lstat(struct cdd_dir *d, const char *name, struct cdd_stat *st)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_lstat(p, st) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_readlink(struct cdd_dir *d, const char *name, char *buf,
                     size_t len)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_readlink(p, buf, len) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_create(struct cdd_dir *d, const char *name, int executable,
                   struct cdd_file **out)
{
    *out = NULL;
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_create(p, executable, out) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_open_read(struct cdd_dir *d, const char *name,
                      struct cdd_rfile **out)
{
    *out = NULL;
    char *p = dir_join(d, name);
    if (!p)
        return cdd_last_error()->code;
    struct cdd_rfile *f = calloc(1, sizeof *f);
    wchar_t *w = f ? cdd_w_path(p) : NULL;
    int r = 0;
    if (!f) {
        r = cdd_fail(CDD_E_NOMEM, p, 0, NULL);
    } else if (!w) {
        r = cdd_last_error()->code;
    } else {
        /* As cdd_fs_open_read, but a link is opened as itself (and then
         * refused), never followed. */
        f->h = CreateFileW(w, GENERIC_READ,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_SEQUENTIAL_SCAN |
                               FILE_FLAG_OPEN_REPARSE_POINT,
                           NULL);
        if (f->h == INVALID_HANDLE_VALUE)
            r = cdd_fail_win32(p, GetLastError(), "cannot open");
        else if (check_plain_file(f->h, p, NULL) != 0)
            r = cdd_fail(CDD_E_UNSAFE, p, 0,
                         "is not a regular file (a link is not followed)");
        if (r && f->h != INVALID_HANDLE_VALUE)
            CloseHandle(f->h);
    }
    free(w);
    if (!r) {
        f->path = p;
        *out = f;
        return 0;
    }
    free(f);
    free(p);
    return r;
}

int cdd_dir_rename(struct cdd_dir *from_dir, const char *from,
                   struct cdd_dir *to_dir, const char *to)
{
    char *a = dir_join(from_dir, from), *b = a ? dir_join(to_dir, to) : NULL;
    int r = a && b ? cdd_fs_rename(a, b) : cdd_last_error()->code;
    free(a);
    free(b);
    return r;
}

int cdd_dir_unlink(struct cdd_dir *d, const char *name)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_unlink(p) : cdd_last_error()->code;
    free(p);
    return r;
}

void cdd_dir_unlink_quiet(struct cdd_dir *d, const char *name)
{
    char *p = dir_join(d, name);
    if (p)
        cdd_fs_unlink_quiet(p);
    free(p);
    cdd_clear_error();
}

int cdd_dir_rmdir(struct cdd_dir *d, const char *name)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_rmdir(p) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_mkdir(struct cdd_dir *d, const char *name)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_mkdir(p) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_symlink(const char *target, struct cdd_dir *d, const char *name)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_symlink(target, p) : cdd_last_error()->code;
    free(p);
    return r;
}

int cdd_dir_set_mtime(struct cdd_dir *d, const char *name, int64_t sec)
{
    char *p = strcmp(name, ".") == 0 ? cdd_strdup(d->path) : dir_join(d, name);
    if (!p)
        return cdd_last_error()->code;
    int r = cdd_fs_fault_point("mtime", p);
    wchar_t *w = r ? NULL : cdd_w_path(p);
    if (!w) {
        free(p);
        return r ? r : cdd_last_error()->code;
    }
    /* The link itself, never its target (FILE_FLAG_OPEN_REPARSE_POINT). */
    HANDLE h = CreateFileW(w, FILE_WRITE_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING,
                           FILE_FLAG_OPEN_REPARSE_POINT |
                               FILE_FLAG_BACKUP_SEMANTICS,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE) {
        r = cdd_fail_win32(p, e, "cannot set the modification time");
    } else {
        /* FILETIME: 100 ns units since 1601. */
        uint64_t t = (uint64_t)(sec * INT64_C(10000000) +
                                INT64_C(116444736000000000));
        FILETIME ft = {(DWORD)t, (DWORD)(t >> 32)};
        if (!SetFileTime(h, NULL, &ft, &ft))
            r = cdd_fail_win32(p, GetLastError(),
                               "cannot set the modification time");
        CloseHandle(h);
    }
    free(p);
    return r;
}

int cdd_dir_sync(struct cdd_dir *d)
{
    return cdd_fs_sync_dir(d->path);
}

int cdd_dir_list(struct cdd_dir *d, int (*fn)(void *ud, const char *name),
                 void *ud)
{
    return cdd_fs_list(d->path, fn, ud);
}

int cdd_dir_append_line(struct cdd_dir *d, const char *name,
                        const char *line)
{
    char *p = dir_join(d, name);
    int r = p ? cdd_fs_append_line(p, line) : cdd_last_error()->code;
    free(p);
    return r;
}

/* ---- the lock ----------------------------------------------------------- */

/* The pid written in the lock file, or 0 when it holds none (the winner has
 * not written it yet, or a damaged file). */
static long read_holder(HANDLE h)
{
    char buf[32]; /* fixed: a pid */
    DWORD n = 0;
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    if (!ReadFile(h, buf, sizeof buf - 1, &n, &ov))
        return 0;
    buf[n] = '\0';
    char *end = NULL;
    long pid = strtol(buf, &end, 10); /* an overflow names no process */
    if (end == buf || (*end != '\n' && *end != '\0') || pid <= 0)
        return 0;
    return pid;
}

/* Is pid a running process? One that has exited cannot be opened, or is
 * signalled; access denied means it exists (another user's). */
static int process_alive(DWORD pid)
{
    HANDLE p = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE,
                           FALSE, pid);
    if (!p)
        return GetLastError() == ERROR_ACCESS_DENIED;
    int alive = WaitForSingleObject(p, 0) == WAIT_TIMEOUT;
    CloseHandle(p);
    return alive;
}

/* Who holds the lock, as far as can be known: the pid in the file when it
 * names a running process, else 0 ("unknown") - never the
 * stale pid of a process that has exited. */
static long lock_holder(HANDLE h)
{
    long pid = read_holder(h);
    if (pid <= 0 || !process_alive((DWORD)pid))
        return 0;
    return pid;
}

int cdd_lockfile_open(const char *path, struct cdd_lock **out)
{
    *out = NULL;
    wchar_t *w = cdd_w_path(path);
    if (!w)
        return cdd_last_error()->code;
    /* Everyone may open the file (to read the holder's pid); only the
     * LockFileEx byte says who holds the lock. */
    HANDLE h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_ALWAYS,
                           FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                           NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return cdd_fail_win32(path, e, "cannot open lock file");
    int r = check_plain_file(h, path, NULL);
    struct cdd_lock *l = r ? NULL : malloc(sizeof *l);
    if (!r && !l)
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    if (r) {
        CloseHandle(h);
        return r;
    }
    l->h = h;
    *out = l;
    return 0;
}

int cdd_lockfile_open_at(struct cdd_dir *d, const char *name,
                         struct cdd_lock **out)
{
    *out = NULL;
    char *p = dir_join(d, name);
    if (!p)
        return cdd_last_error()->code;
    wchar_t *w = cdd_w_path(p);
    int r = w ? 0 : cdd_last_error()->code;
    HANDLE h = INVALID_HANDLE_VALUE;
    if (!r) {
        /* The folder d is held without FILE_SHARE_DELETE, so the name is
         * looked up in that very folder; a reparse point there is opened as
         * itself (FILE_FLAG_OPEN_REPARSE_POINT) and refused, never entered.
         * As cdd_lockfile_open otherwise. */
        h = CreateFileW(w, GENERIC_READ | GENERIC_WRITE,
                        FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                        NULL, OPEN_ALWAYS,
                        FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT,
                        NULL);
        DWORD e = GetLastError();
        WIN32_FILE_ATTRIBUTE_DATA ad;
        DWORD tag = 0;
        /* A folder (or a link to one) cannot be opened as a file at all:
         * the same answer as when it is opened and looked at. */
        if (h == INVALID_HANDLE_VALUE && attrs_of(w, &ad, &tag) == 0 &&
            (ad.dwFileAttributes &
             (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY)))
            r = cdd_fail(CDD_E_STATE, p, 0,
                         (ad.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)
                             ? "is a link, not a regular file; a lock file "
                               "that is a link is not opened"
                             : "is a folder, not a regular file");
        else if (h == INVALID_HANDLE_VALUE)
            r = cdd_fail_win32(p, e, "cannot open lock file");
    }
    BY_HANDLE_FILE_INFORMATION bi;
    if (!r && !GetFileInformationByHandle(h, &bi))
        r = cdd_fail_win32(p, GetLastError(), "cannot read file status");
    if (!r && (bi.dwFileAttributes &
               (FILE_ATTRIBUTE_REPARSE_POINT | FILE_ATTRIBUTE_DIRECTORY)))
        r = cdd_fail(CDD_E_STATE, p, 0,
                     (bi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY)
                         ? "is a folder, not a regular file"
                         : "is a link, not a regular file; a lock file that "
                           "is a link is not opened");
    /* And it is in d, by the system's own account of the handle. */
    if (!r) {
        char *fin = final_path(h, p);
        size_t n = strlen(d->path);
        int in = fin != NULL;
        for (size_t i = 0; in && i < n; i++)
            in = fin[i] && fold_eq(fin[i], d->path[i]);
        in = in && (n && d->path[n - 1] == '/' ? 1 : fin[n] == '/');
        if (!fin)
            r = cdd_last_error()->code;
        else if (!in)
            r = cdd_fail(CDD_E_STATE, p, 0,
                         "resolves outside its folder; not used as a lock");
        free(fin);
    }
    struct cdd_lock *l = r ? NULL : malloc(sizeof *l);
    if (!r && !l)
        r = cdd_fail(CDD_E_NOMEM, p, 0, NULL);
    free(w);
    free(p);
    if (r) {
        if (h != INVALID_HANDLE_VALUE)
            CloseHandle(h);
        return r;
    }
    l->h = h;
    *out = l;
    return 0;
}

int cdd_lockfile_try(struct cdd_lock *l, const char *path, long *holder)
{
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.OffsetHigh = LOCK_OFFSET_HIGH;
    if (LockFileEx(l->h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
                   0, 1, 0, &ov))
        return 0;
    DWORD e = GetLastError();
    if (e != ERROR_LOCK_VIOLATION && e != ERROR_IO_PENDING)
        return cdd_fail_win32(path, e, "cannot lock");
    *holder = lock_holder(l->h);
    return 1;
}

void cdd_lockfile_note_pid(struct cdd_lock *l)
{
    char line[32]; /* fixed: a pid */
    int n = snprintf(line, sizeof line, "%ld\n", cdd_getpid());
    LARGE_INTEGER len;
    DWORD wrote = 0;
    OVERLAPPED ov0;
    memset(&ov0, 0, sizeof ov0);
    len.QuadPart = n;
    /* Written over the old pid, then cut to length: a reader never sees an
     * empty file once a pid was there, and stops at the newline. Best
     * effort: the lock holds; a waiter says the holder is unknown. */
    if (WriteFile(l->h, line, (DWORD)n, &wrote, &ov0) && wrote == (DWORD)n &&
        SetFilePointerEx(l->h, len, NULL, FILE_BEGIN))
        SetEndOfFile(l->h);
}

void cdd_lock_release(struct cdd_lock *l)
{
    if (!l)
        return;
    /* Unlock explicitly: a lock left to CloseHandle is released "when the
     * system gets to it", which a waiting process would notice. */
    OVERLAPPED ov;
    memset(&ov, 0, sizeof ov);
    ov.OffsetHigh = LOCK_OFFSET_HIGH;
    UnlockFileEx(l->h, 0, 1, 0, &ov);
    CloseHandle(l->h);
    free(l);
}






