/* Filesystem operations the core needs, behind one small interface so that
 * the POSIX and Win32 implementations (fsops_posix.c / fsops_win32.c) are the
 * only places that know the platform. Paths are UTF-8; '/' separates
 * components on every platform (the Win32 layer converts).
 *
 * Every function that changes the filesystem passes through a fault point
 * (cdd_fs_fault_point) so tests can fail, or kill the process at, the n-th
 * mutating operation. All functions return 0 or a negative CDD_E_* code and
 * record the path and OS error with cdd_fail(). */
#ifndef CDD_FSOPS_H
#define CDD_FSOPS_H

#include <stddef.h>
#include <stdint.h>

enum cdd_ftype {
    CDD_FT_NONE = 0, /* does not exist */
    CDD_FT_FILE,
    CDD_FT_DIR,
    CDD_FT_SYMLINK,
    CDD_FT_OTHER
};

struct cdd_stat {
    enum cdd_ftype type;
    uint64_t size;
    int executable; /* POSIX: any x bit */
    int64_t mtime_ns; /* last modification, ns since 1970 (the re-install's
                         metadata check; 0 where unknown) */
};

struct cdd_file;  /* an open file being written */
struct cdd_rfile; /* an open file being read */
struct cdd_lock;

/* lstat(): never follows a final symlink. A missing path is not an error:
 * st->type is CDD_FT_NONE. */
int cdd_fs_lstat(const char *path, struct cdd_stat *st);

/* Create a new regular file exclusively (O_CREAT|O_EXCL|O_NOFOLLOW), mode
 * 0755 if executable else 0644 (POSIX). */
int cdd_fs_create(const char *path, int executable, struct cdd_file **out);
/* Open an existing regular file for appending (resumed downloads); never
 * follows a final symlink. *size receives its current length. */
int cdd_fs_open_append(const char *path, struct cdd_file **out,
                       uint64_t *size);
int cdd_file_write(struct cdd_file *f, const void *buf, size_t len);
/* Reserve space for the final size where the platform can (best effort). */
int cdd_file_preallocate(struct cdd_file *f, uint64_t size);
int cdd_file_sync(struct cdd_file *f);
/* Close, reporting a failed close as a failed write. Accepts NULL. */
int cdd_file_close(struct cdd_file *f);
/* Close without caring about errors (cleanup paths). Accepts NULL. */
void cdd_file_abort(struct cdd_file *f);
/* A file written in full: flush it (so that a rename which follows never
 * publishes unwritten bytes), then close it, reporting either failure; f is
 * closed in every case. (fsops.c) */
int cdd_file_finish(struct cdd_file *f);

int cdd_fs_open_read(const char *path, struct cdd_rfile **out);
/* Read up to len bytes; *got == 0 at end of file. */
int cdd_rfile_read(struct cdd_rfile *f, void *buf, size_t len, size_t *got);
/* Read at an offset (does not move the sequential position). */
int cdd_rfile_pread(struct cdd_rfile *f, uint64_t off, void *buf, size_t len,
                    size_t *got);
int cdd_rfile_size(struct cdd_rfile *f, uint64_t *size);
void cdd_rfile_close(struct cdd_rfile *f);

/* ---- what an open file is (issue 18: one open file from pin to
 * extraction; the cache's entries) ---------------------------------------
 * Read from the handle (fstat / GetFileInformationByHandle), never from a
 * path, which may name another file by now. */
struct cdd_finfo {
    enum cdd_ftype type;
    uint64_t size;
    uint64_t nlink;         /* hard links to the file */
    int owner_known;        /* POSIX 1; Windows 0 (its DACL is what counts,
                               and the handle's share mode) */
    int owner_is_caller;    /* owned by the effective user */
    int owner_is_root;      /* uid 0 */
    long long owner;        /* the uid, for messages */
    int group_writable;     /* g+w with a group other than the caller's
                               effective group (an ACL's mask shows here) */
    int other_writable;     /* o+w */
    int64_t mtime_ns, ctime_ns; /* a write moves both; ctime cannot be set
                                   back by an unprivileged writer */
    uint64_t dev, ino;      /* identity (Windows: volume serial, file index) */
};
int cdd_rfile_info(struct cdd_rfile *f, struct cdd_finfo *fi);
int cdd_file_info(struct cdd_file *f, struct cdd_finfo *fi);
/* The same for a path, never following a final link (folders of the
 * cache); a missing path is type CDD_FT_NONE, not an error. */
int cdd_fs_linfo(const char *path, struct cdd_finfo *fi);
/* Another handle on the same open file (dup / DuplicateHandle), for a
 * reader on another thread: it reads the bytes f reads, whatever the path
 * names now. */
int cdd_rfile_dup(struct cdd_rfile *f, struct cdd_rfile **out);
/* The path f was opened as (messages). */
const char *cdd_rfile_path(const struct cdd_rfile *f);
/* A file still arriving (issue 20, cdd/feed.h): reads, preads and the size
 * go through the feed, which waits for bytes not yet written; the handle
 * takes the reference given. Dups share it. */
struct cdd_feed;
void cdd_rfile_set_feed(struct cdd_rfile *f, struct cdd_feed *feed);
struct cdd_feed *cdd_rfile_feed(const struct cdd_rfile *f);
/* A file's identity, from its open handle: what must all stay equal for a
 * digest taken of its bytes to be trusted again without reading them (the
 * unchanged re-install, tree/idcache.h). POSIX: st_dev, st_ino, st_size,
 * st_mtim, st_ctim; Windows: the volume serial number, the file index,
 * the size, LastWriteTime and ChangeTime (GetFileInformationByHandle(Ex)). */
struct cdd_fs_id {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns; /* ns since 1970; 0 where unknown */
};
int cdd_fs_identity(struct cdd_rfile *f, struct cdd_fs_id *id);

/* Rename, replacing an existing file atomically (MoveFileExW with
 * REPLACE_EXISTING|WRITE_THROUGH on Windows, retried on sharing violations). */
int cdd_fs_rename(const char *from, const char *to);
int cdd_fs_unlink(const char *path);
/* Remove an empty directory. */
int cdd_fs_rmdir(const char *path);
/* Create one directory; an existing directory is not an error. */
int cdd_fs_mkdir(const char *path);
/* Create a directory and its missing parents. *created, when not NULL,
 * receives newline-separated paths of the directories this call created,
 * outermost first (caller frees; NULL when none were created). */
int cdd_fs_mkdirs(const char *path, char **created);
int cdd_fs_symlink(const char *target, const char *linkpath);
/* Read a symlink's target into buf (NUL-terminated). */
int cdd_fs_readlink(const char *path, char *buf, size_t len);
/* Flush a directory's entries to stable storage (no-op where meaningless). */
int cdd_fs_sync_dir(const char *path);
/* Canonical absolute path with symlinks resolved; the path must exist.
 * Returns a malloc'd string in *out. */
int cdd_fs_realpath(const char *path, char **out);
/* Remove a tree of files and directories (not following symlinks). A
 * missing path is not an error. (fsops.c, from the primitives) */
int cdd_fs_remove_tree(const char *path);

/* List the names in a directory (not "." or ".."), calling fn for each;
 * fn returning non-zero stops and is returned. */
int cdd_fs_list(const char *dir, int (*fn)(void *ud, const char *name),
                void *ud);

/* Append one line to a file (created 0644 if missing), then sync. */
int cdd_fs_append_line(const char *path, const char *line);

/* Write a whole small file atomically: write to path+".tmp", sync, rename,
 * sync the directory. (fsops.c, cdd_dir_write_atomic in path's folder) */
int cdd_fs_write_atomic(const char *path, const void *buf, size_t len);
/* Read a whole small file (at most max bytes, else CDD_E_STATE). */
int cdd_fs_read_all(const char *path, size_t max, char **out, size_t *len);
/* Read the rest of an open file into a NUL-terminated buffer (at most max
 * bytes, else CDD_E_STATE); shown names the file in messages. (fsops.c) */
int cdd_rfile_read_all(struct cdd_rfile *f, const char *shown, size_t max,
                       char **out, size_t *len);

/* ---- directory handles ----------------------------------------------------
 * The primitives under tree.c's beneath-resolution: a struct cdd_dir is an
 * open folder (a descriptor on POSIX; a handle that forbids renaming or
 * deleting the folder on Windows), and every *_at call names ONE component
 * inside it (no '/'), never following a link in that component. So a path of
 * the tree is resolved once, component by component, and the operation then
 * happens relative to the folder that holds it: nothing is resolved twice.
 * Errors are recorded with the folder's path and the name. */
struct cdd_dir;

/* Open a folder by path, following links (the root of a tree, resolved once
 * at open). *real, when not NULL, receives its canonical absolute path. */
int cdd_dir_open_path(const char *path, struct cdd_dir **out, char **real);
/* The one atomic write of a small file (fsops.c): name+".tmp" in d
 * (a leftover of a killed run replaced), written, synced, closed, renamed
 * over name, then d synced; on failure the .tmp is gone and name as it
 * was. */
int cdd_dir_write_atomic(struct cdd_dir *d, const char *name,
                         const void *buf, size_t len);
/* Open the folder name inside d without following a link: a link or a
 * non-folder there is CDD_E_UNSAFE (callers lstat first to tell why).
 * path (may be NULL) is how messages name the new handle. */
int cdd_dir_open_at(struct cdd_dir *d, const char *name, const char *path,
                    struct cdd_dir **out);
/* Where the kernel can do it alone (Linux openat2), open the folder rel
 * (several components) beneath d: links are followed only while they stay
 * beneath d, or none at all with no_links. Returns 0 with *out, 1 when this
 * platform or kernel cannot decide (then the caller walks component by
 * component with cdd_dir_open_at, which also explains failures), or an
 * error. */
int cdd_dir_open_beneath(struct cdd_dir *d, const char *rel, int no_links,
                         const char *path, struct cdd_dir **out);
/* Tests: turn the kernel's one-call resolution off (0) or back on (1), so
 * that every case runs through the component walk too. */
void cdd_dir_fast_path(int on);
/* Is the open folder d still the folder whose canonical path is root_real
 * or one beneath it? 1 yes, 0 no (Windows: GetFinalPathNameByHandleW; POSIX:
 * always 1, the descriptor walk cannot leave it). */
int cdd_dir_is_beneath(struct cdd_dir *d, const char *root_real);
/* Is the entry name inside parent (not followed) the folder d holds? 1 yes,
 * 0 no (it was replaced, or is a link, or is gone). Windows: always 1, a
 * held folder cannot be renamed or deleted. */
int cdd_dir_same_at(struct cdd_dir *parent, const char *name,
                    struct cdd_dir *d);
void cdd_dir_close(struct cdd_dir *d);
/* The path the handle was opened as (for messages). */
const char *cdd_dir_path(const struct cdd_dir *d);

int cdd_dir_lstat(struct cdd_dir *d, const char *name, struct cdd_stat *st);
int cdd_dir_readlink(struct cdd_dir *d, const char *name, char *buf,
                     size_t len);
int cdd_dir_create(struct cdd_dir *d, const char *name, int executable,
                   struct cdd_file **out);
/* Open a regular file for reading; a link or anything else is refused. */
int cdd_dir_open_read(struct cdd_dir *d, const char *name,
                      struct cdd_rfile **out);
int cdd_dir_rename(struct cdd_dir *from_dir, const char *from,
                   struct cdd_dir *to_dir, const char *to);
int cdd_dir_unlink(struct cdd_dir *d, const char *name);
/* A leftover of a killed run: no fault point, errors ignored. */
void cdd_dir_unlink_quiet(struct cdd_dir *d, const char *name);
int cdd_dir_rmdir(struct cdd_dir *d, const char *name);
/* Create one folder; an existing folder (not a link) is not an error. */
int cdd_dir_mkdir(struct cdd_dir *d, const char *name);
int cdd_dir_symlink(const char *target, struct cdd_dir *d, const char *name);
/* Set the modification (and access) time of name in d to sec seconds since
 * 1970, never following a link (a symlink gets its own time); "." is d
 * itself (install --mtime, docs/containers.md). */
int cdd_dir_set_mtime(struct cdd_dir *d, const char *name, int64_t sec);
int cdd_dir_sync(struct cdd_dir *d);
int cdd_dir_list(struct cdd_dir *d, int (*fn)(void *ud, const char *name),
                 void *ud);
/* cdd_fs_append_line inside d. */
int cdd_dir_append_line(struct cdd_dir *d, const char *name,
                        const char *line);

/* Exclusive lock on a lock file (created if missing; deleted only by
 * cdd_lock_unlink_at, while held).
 * timeout_s < 0: wait forever; 0: fail at once with CDD_E_LOCKED naming the
 * holder's pid in the message (and *holder_pid when not NULL) when it is
 * known to be a live process, else saying the holder is unknown (*holder_pid
 * 0). An open-file-description lock on Linux, LockFileEx on Windows, so
 * closing another descriptor of the file never drops it. */
int cdd_lock_acquire(const char *path, double timeout_s, long *holder_pid,
                     struct cdd_lock **out);
/* The same on the lock file name inside the open folder d (a tree's state
 * folder): opened relative to d's handle, never through a path, so a folder
 * swapped or linked in after d was opened cannot make it create or lock a
 * file elsewhere. A link (or anything but a regular file) there is not
 * opened: CDD_E_STATE. */
int cdd_lock_acquire_at(struct cdd_dir *d, const char *name, double timeout_s,
                        long *holder_pid, struct cdd_lock **out);
void cdd_lock_release(struct cdd_lock *l);
/* Is the file l locks still the one named name in d (not unlinked, not
 * replaced)? A lock taken on a file whose name was removed while we waited
 * locks nothing anyone else will see: the caller opens the name again. */
int cdd_lock_is_at(struct cdd_lock *l, struct cdd_dir *d, const char *name);
/* Remove name from d while holding l, only when it names l's own file:
 * others who open the name later create a new file and lock that, and
 * those already waiting on the old file see cdd_lock_is_at fail. 0, or an
 * error leaving it there (Windows: CDD_E_NOTSUP, never removed, since a
 * file deleted while open stays delete-pending and refuses new opens). */
int cdd_lock_unlink_at(struct cdd_lock *l, struct cdd_dir *d,
                       const char *name);
/* Was the open folder d removed (no name left: link count 0)? */
int cdd_dir_removed(struct cdd_dir *d);
/* Does this platform remove a lock file (cdd_lock_unlink_at)? */
int cdd_lock_can_unlink(void);
/* The platform half of the lock (cdd_lock_acquire, in fsops.c, waits):
 * open/create the lock file (by path, or by name inside d); try once (0
 * taken, 1 held by another - in *holder its pid when the file names a live
 * process that can hold it, else 0 -, or an error); write our pid into it. */
int cdd_lockfile_open(const char *path, struct cdd_lock **out);
int cdd_lockfile_open_at(struct cdd_dir *d, const char *name,
                         struct cdd_lock **out);
int cdd_lockfile_try(struct cdd_lock *l, const char *path, long *holder);
void cdd_lockfile_note_pid(struct cdd_lock *l);

/* Remove a leftover file of a killed run: no fault point, errors ignored. */
void cdd_fs_unlink_quiet(const char *path);
/* The folder part of a path ("." when none; keeps a root such as "/" or
 * "C:/"), malloc'd. */
char *cdd_fs_dirname(const char *path);

/* ---- fault injection (test builds only) ----------------------------------
 * Compiled in only when the build is configured with -DCDD_FAULT_INJECTION=ON
 * (the test suite's builds; docs/design.md, "Test builds"). Without it the
 * fault point is an inline no-op, cdd_fs_fault_from_env() reads nothing and
 * fsops_fault.c is not built: a release binary has no hook at all.
 *
 * cdd_fs_fault_set(n, mode): the n-th mutating operation from now fails with
 * CDD_E_FAULT (mode 0) or kills the process with SIGKILL / TerminateProcess
 * (mode 1). n == 0 disables. The environment variable
 * CUDNN_DEPLOY_TEST_FAULT="fail:N" or "kill:N" sets it at start-up
 * (cdd_fs_fault_from_env). cdd_fs_fault_count() tells how many mutating
 * operations ran since the last cdd_fs_fault_set(). */
#ifdef CDD_FAULT_INJECTION
void cdd_fs_fault_set(long n, int mode);
long cdd_fs_fault_count(void);
void cdd_fs_fault_from_env(void);
/* Called by every mutating operation; returns 0 or CDD_E_FAULT. */
int cdd_fs_fault_point(const char *op, const char *path);
#else
static inline void cdd_fs_fault_from_env(void)
{
}

static inline int cdd_fs_fault_point(const char *op, const char *path)
{
    (void)op;
    (void)path;
    return 0;
}
#endif

#endif
