/* The error list's tables, the per-thread record of the last failure, and
 * the cancellation flag set from signal handlers. */
#include "cdd/error.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local struct cdd_errinfo last;
/* Whether last.os_err came through cdd_fail_errno() (an errno value) or
 * cdd_fail() (the platform's native code: errno on POSIX, GetLastError() in
 * the Win32 layer); on Windows the two number spaces differ. */
static _Thread_local int last_is_errno;

struct errdef {
    const char *name;
    int exit_code;
    const char *msg;
};

static const struct errdef defs[] = {
#define CDD_X_DEF(name, exitc, msg) {#name, exitc, msg},
    CDD_ERRORS(CDD_X_DEF)
#undef CDD_X_DEF
};

static const struct errdef *def_of(int code)
{
    if (code <= CDD_E_FIRST_VALUE || code >= CDD_E_LAST_VALUE)
        return NULL;
    return &defs[code - CDD_E_FIRST_VALUE - 1];
}

const char *cdd_err_name(int code)
{
    const struct errdef *d = def_of(code);
    return code == 0 ? "OK" : d ? d->name : "UNKNOWN";
}

const char *cdd_err_message(int code)
{
    const struct errdef *d = def_of(code);
    return code == 0 ? "success" : d ? d->msg : "unknown error";
}

int cdd_err_exit_code(int code)
{
    const struct errdef *d = def_of(code);
    return code == 0 ? 0 : d ? d->exit_code : 4;
}

static int vfail(int code, const char *path, int os_err, const char *fmt,
                 va_list ap)
{
    last.code = code;
    last.os_err = os_err;
    snprintf(last.path, sizeof last.path, "%s", path ? path : "");
    if (fmt)
        vsnprintf(last.msg, sizeof last.msg, fmt, ap);
    else
        last.msg[0] = '\0';
    return code;
}

int cdd_fail(int code, const char *path, int os_err, const char *fmt, ...)
{
    va_list ap;
    last_is_errno = 0;
    va_start(ap, fmt);
    vfail(code, path, os_err, fmt, ap);
    va_end(ap);
    return code;
}

int cdd_fail_errno(const char *path, int os_err, const char *fmt, ...)
{
    int code;
    switch (os_err) {
    case ENOSPC:
#ifdef EDQUOT
    case EDQUOT:
#endif
        code = CDD_E_NOSPC;
        break;
    case EACCES:
    case EPERM:
    case EROFS:
        code = CDD_E_PERM;
        break;
    case ENOENT:
    case ENOTDIR:
        code = CDD_E_NOTFOUND;
        break;
    case ENOMEM:
        code = CDD_E_NOMEM;
        break;
    case EBUSY:
    case ETXTBSY:
        code = CDD_E_BUSY;
        break;
    default:
        code = CDD_E_IO;
    }
    va_list ap;
    last_is_errno = 1;
    va_start(ap, fmt);
    vfail(code, path, os_err, fmt, ap);
    va_end(ap);
    return code;
}

const struct cdd_errinfo *cdd_last_error(void)
{
    return &last;
}

void cdd_clear_error(void)
{
    memset(&last, 0, sizeof last);
}

char *cdd_error_format(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    if (last.path[0])
        n += (size_t)snprintf(buf + n, len - n, "%s: ", last.path);
    if (n < len) {
        const char *m = last.msg[0] ? last.msg : cdd_err_message(last.code);
        n += (size_t)snprintf(buf + n, len - n, "%s", m);
    }
    if (n < len && last.os_err && last.code != CDD_E_FAULT) {
        char os[512];
        snprintf(buf + n, len - n, " (%s)",
                 last_is_errno ? strerror(last.os_err)
                               : cdd_os_error_text(last.os_err, os, sizeof os));
    }
    return buf;
}

static volatile sig_atomic_t cancel_flag;

void cdd_cancel_request(void)
{
    cancel_flag = 1;
}

int cdd_cancelled(void)
{
    return cancel_flag != 0;
}

void cdd_cancel_reset(void)
{
    cancel_flag = 0;
}

/* Threads: a worker's failure is recorded in its own thread; the caller
 * takes it over with these two so that it is reported exactly as made. */
void cdd_error_save(struct cdd_errsave *s)
{
    s->info = last;
    s->is_errno = last_is_errno;
}

int cdd_error_restore(const struct cdd_errsave *s)
{
    last = s->info;
    last_is_errno = s->is_errno;
    return last.code;
}
