/* Error codes of the cudnn-deploy core: one list defines each code, its
 * message and the exit code the command-line tool maps it to, so that code,
 * text and documentation cannot drift apart.
 *
 * Core functions return 0 on success and a negative CDD_E_* code on failure.
 * Where a failure happens, the core records the details (file, JSON path,
 * OS error) with cdd_fail(); the command layer reports them once. */
#ifndef CDD_ERROR_H
#define CDD_ERROR_H

#include <stdarg.h>
#include <stddef.h>

/* X(name, exit_code, message) */
#define CDD_ERRORS(X)                                                          \
    X(NOMEM, 4, "out of memory")                                               \
    X(USAGE, 2, "usage error")                                                 \
    X(NOTSUP, 2, "not supported")                                              \
    X(MANIFEST, 3, "invalid manifest")                                         \
    X(ARCHIVE, 3, "archive does not match the manifest")                       \
    X(CORRUPT, 3, "archive is corrupt or truncated")                           \
    X(UNSAFE, 3, "unsafe archive entry")                                       \
    X(CHECKSUM, 3, "checksum mismatch")                                        \
    X(UNPINNED, 3, "archive is not pinned by a sha256")                        \
    X(VERSION, 3, "CUDA version mismatch")                                     \
    X(TARGET, 3, "target refused")                                             \
    X(STATE, 3, "invalid state file")                                          \
    X(MODIFIED, 1, "file changed since install")                               \
    X(CHECK, 1, "a check failed")                                              \
    X(NOTFOUND, 4, "not found")                                                \
    X(IO, 4, "I/O error")                                                      \
    X(PERM, 4, "permission denied")                                            \
    X(NOSPC, 4, "no space left on device")                                     \
    X(BUSY, 4, "file in use")                                                  \
    X(LOCKED, 4, "tree is locked by another process")                          \
    X(NETWORK, 4, "network failure")                                           \
    X(INTERRUPTED, 4, "interrupted")                                           \
    X(FAULT, 4, "injected fault")                                              \
    X(TOOLONG, 3, "name or path too long")

enum cdd_err {
    CDD_OK = 0,
    /* Start far below errno values so a stray -errno is never mistaken. */
    CDD_E_FIRST_VALUE = -1000,
#define CDD_X_ENUM(name, exitc, msg) CDD_E_##name,
    CDD_ERRORS(CDD_X_ENUM)
#undef CDD_X_ENUM
    CDD_E_LAST_VALUE
};

/* Details of the most recent failure in this thread. path and msg are
 * whole (never cut) and never NULL; they belong to the thread's record and
 * stay valid until its next failure is recorded or cleared: to keep them
 * past that (across a roll-back, to another thread), save the record
 * (struct cdd_errsave below). When memory runs out while a failure is
 * recorded, the record still says what failed, cut and marked as such. */
struct cdd_errinfo {
    int code;            /* CDD_E_* */
    int os_err;          /* errno or GetLastError(), 0 if none */
    const char *path;    /* file the failure concerns, may be "" */
    const char *msg;     /* what exactly went wrong, may be "" */
};

/* Record a failure and return code, so callers can write
 * `return cdd_fail(CDD_E_MANIFEST, file, 0, "files[%zu].sha256: ...", i);` */
int cdd_fail(int code, const char *path, int os_err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* cdd_fail() with the arguments as a va_list (for wrappers that add to the
 * record, such as one that releases the names it showed). */
int cdd_vfail(int code, const char *path, int os_err, const char *fmt,
              va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

/* Like cdd_fail() with os_err taken from errno, and the code derived from it
 * (ENOSPC -> NOSPC, EACCES/EPERM/EROFS -> PERM, ENOENT -> NOTFOUND, else IO). */
int cdd_fail_errno(const char *path, int os_err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Keep s (a malloc'd string, e.g. a name rendered for a message) until the
 * next failure of this thread is recorded, then free it; returns s, or a
 * placeholder for NULL (out of memory). For the arguments of the cdd_fail()
 * that follows: a message may name up to four kept strings. */
const char *cdd_err_keep(char *s);

const struct cdd_errinfo *cdd_last_error(void);
void cdd_clear_error(void);

/* The last failure of this thread, saved whole (its own copy of the text)
 * to be reported later: after a roll-back that may fail in its turn, or by
 * another thread (extraction workers report to the thread that started
 * them). A save is a value: copying the struct hands the copy on; release
 * the one that holds it with cdd_error_save_free. A save made while memory
 * runs out keeps the code and says that the details were lost. */
struct cdd_errsave {
    struct cdd_errinfo info;
    int is_errno;
    char *text; /* path and msg, owned */
};
void cdd_error_save(struct cdd_errsave *s);
/* Make s this thread's last failure (a copy: s stays valid and may be
 * restored again); returns its code. A zeroed save restores code 0. */
int cdd_error_restore(const struct cdd_errsave *s);
/* Release s's text; s reads as zeroed afterwards. Accepts a zeroed save. */
void cdd_error_save_free(struct cdd_errsave *s);
/* Release this thread's record and kept strings (a thread's last act;
 * cdd_thread_start's threads call it). */
void cdd_error_thread_end(void);

/* Name ("MANIFEST"), message and exit code for a CDD_E_* code. */
const char *cdd_err_name(int code);
const char *cdd_err_message(int code);
int cdd_err_exit_code(int code);

/* Format the last error as one line: "<path>: <msg>: <os error text>" without
 * the category; the CLI prefixes it. Rendered by cdd_text_one_line, so the
 * untrusted names in it cannot break the line or drive the terminal.
 * Returns buf. */
char *cdd_error_format(char *buf, size_t len);
/* The same line, whole, in an allocated string (free it); NULL when out of
 * memory. */
char *cdd_error_text(void);

/* text as one printable line in buf (cut at a whole character when it does
 * not fit): newline, carriage return and tab as \n \r \t, other C0
 * controls and DEL as \xNN, C1 controls, line/paragraph separators and
 * bidirectional controls as \u{NNNN}, bytes that are not UTF-8 as \xNN;
 * everything else (backslashes included) as it is. Returns buf. */
char *cdd_text_one_line(const char *text, char *buf, size_t len);

/* The operating system's words for an os_err given to cdd_fail(): strerror()
 * on POSIX, the FormatMessage text of a GetLastError() value on Windows
 * (error_posix.c / error_win32.c). Returns buf. */
char *cdd_os_error_text(int os_err, char *buf, size_t len);

/* Cancellation: the CLI's signal handler calls cdd_cancel_request(); long
 * operations poll cdd_cancelled() and fail with CDD_E_INTERRUPTED so that the
 * transaction rolls back before the process exits. Async-signal-safe. */
void cdd_cancel_request(void);
int cdd_cancelled(void);
void cdd_cancel_reset(void);

#endif
