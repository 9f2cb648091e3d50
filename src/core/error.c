/* The error list's tables, the per-thread record of the last failure, and
 * the cancellation flag set from signal handlers. */
#include "cdd/error.h"

#include "cdd/compat_attr.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* Strings kept for the message being made (cdd_err_keep), released once it
 * is recorded. */
#define KEEP_N 4
static _Thread_local char *kept[KEEP_N];
static _Thread_local unsigned n_kept;

const char *cdd_err_keep(char *s)
{
    unsigned k = n_kept++ % KEEP_N;
    free(kept[k]);
    kept[k] = s;
    return s ? s : "(name not shown: out of memory)";
}

static void drop_kept(void)
{
    for (unsigned k = 0; k < KEEP_N; k++) {
        free(kept[k]);
        kept[k] = NULL;
    }
    n_kept = 0;
}

/* The record's text: path and message in one allocated block. When it
 * cannot be allocated, the fallback below holds what fits, marked as cut. */
static _Thread_local char *last_text;
#define FALLBACK_LEN 512
static _Thread_local char fb_path[FALLBACK_LEN]; /* fixed: the out-of-memory fallback, cut and marked */
static _Thread_local char fb_msg[FALLBACK_LEN]; /* fixed: the out-of-memory fallback, cut and marked */

static const char oom_mark[] = " [cut: out of memory while recording it]";

/* Set the record to code, os_err, path and the text fmt makes. Formatted
 * into a fresh block, then swapped in: path and the arguments may be the
 * last failure's own text (a caller adding to the message it is replacing,
 * as a roll-back does), and formatting into the buffer being read garbles
 * it. */
static int vfail(int code, const char *path, int os_err, const char *fmt,
                 va_list ap)
{
    va_list ap2;
    size_t plen = strlen(path ? path : ""), mlen = 0;
    int n = 0;
    char *text = NULL;
    if (fmt) {
        va_copy(ap2, ap);
        n = vsnprintf(NULL, 0, fmt, ap2);
        va_end(ap2);
        mlen = n > 0 ? (size_t)n : 0;
    }
    if (plen < (size_t)-1 / 2 && mlen < (size_t)-1 / 2)
        text = malloc(plen + 1 + mlen + 1);
    if (text) {
        memcpy(text, path ? path : "", plen + 1);
        text[plen + 1] = '\0';
        if (fmt && n > 0)
            vsnprintf(text + plen + 1, mlen + 1, fmt, ap);
        free(last_text);
        last_text = text;
        last.path = text;
        last.msg = text + plen + 1;
    } else {
        /* Out of memory: what fits of each, then the mark, never silent.
         * Made on the stack first, as above. */
        char p[FALLBACK_LEN], m[FALLBACK_LEN]; /* fixed: the fallback's scratch */
        size_t room = sizeof m - sizeof oom_mark;
        snprintf(p, sizeof p, "%s", path ? path : "");
        m[0] = '\0';
        if (fmt)
            vsnprintf(m, room, fmt, ap);
        if (plen >= sizeof p || (fmt && (mlen >= room || n < 0)))
            strcat(m, oom_mark); /* something was cut: say so */
        free(last_text);
        last_text = NULL;
        memcpy(fb_path, p, sizeof p);
        memcpy(fb_msg, m, sizeof m);
        last.path = fb_path;
        last.msg = fb_msg;
    }
    last.code = code;
    last.os_err = os_err;
    drop_kept();
    return code;
}

/* Set the record without touching last_is_errno (restore sets it). */
static int restore_fail(int code, const char *path, int os_err,
                        const char *fmt, ...) CDD_PRINTF(4, 5);
static int restore_fail(int code, const char *path, int os_err,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(code, path, os_err, fmt, ap);
    va_end(ap);
    return code;
}

int cdd_vfail(int code, const char *path, int os_err, const char *fmt,
              va_list ap)
{
    last_is_errno = 0;
    return vfail(code, path, os_err, fmt, ap);
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
    if (!last.path)
        last.path = "";
    if (!last.msg)
        last.msg = "";
    return &last;
}

void cdd_clear_error(void)
{
    free(last_text);
    last_text = NULL;
    last.code = last.os_err = 0;
    last.path = last.msg = "";
}

void cdd_error_thread_end(void)
{
    cdd_clear_error();
    drop_kept();
}

/* ---- one line, whatever the text holds ---------------------------------- */

/* The code point of the UTF-8 sequence at s (*n its length), or -1 for a
 * byte that does not start a valid, shortest-form sequence. */
static long utf8_at(const unsigned char *s, size_t *n)
{
    static const unsigned char need[] = {2, 3, 4};
    static const long min[] = {0x80, 0x800, 0x10000};
    unsigned char c = s[0];
    int k = c >= 0xC2 && c <= 0xDF ? 0 : (c & 0xF0) == 0xE0 ? 1
                                        : c >= 0xF0 && c <= 0xF4 ? 2 : -1;
    *n = 1;
    if (c < 0x80)
        return c;
    if (k < 0)
        return -1;
    long cp = c & (0x3F >> (k + 1));
    for (int i = 1; i < need[k]; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return -1;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return -1;
    *n = need[k];
    return cp;
}

/* Characters a terminal would act on rather than show: C0 and C1 controls,
 * DEL, the Unicode line and paragraph separators, bidirectional overrides
 * and isolates (which reorder what follows them on the line). */
static int acts_on_terminal(long cp)
{
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) ||
           cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F ||
           cp == 0x061C;
}

char *cdd_text_one_line(const char *text, char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t o = 0;
    if (len == 0)
        return buf;
    while (*s) {
        char tmp[16]; /* fixed: one rendered character */
        size_t n;
        long cp = utf8_at(s, &n);
        if (cp < 0)
            snprintf(tmp, sizeof tmp, "\\x%02x", s[0]);
        else if (cp == '\n')
            snprintf(tmp, sizeof tmp, "\\n");
        else if (cp == '\r')
            snprintf(tmp, sizeof tmp, "\\r");
        else if (cp == '\t')
            snprintf(tmp, sizeof tmp, "\\t");
        else if (cp < 0x80 && acts_on_terminal(cp))
            snprintf(tmp, sizeof tmp, "\\x%02lx", cp);
        else if (acts_on_terminal(cp))
            snprintf(tmp, sizeof tmp, "\\u{%04lx}", cp);
        else {
            memcpy(tmp, s, n);
            tmp[n] = '\0';
        }
        size_t tn = strlen(tmp);
        if (o + tn + 1 > len)
            break; /* cut at a character, never inside an escape */
        memcpy(buf + o, tmp, tn);
        o += tn;
        s += n;
    }
    buf[o] = '\0';
    return buf;
}

/* The whole line, raw: "<path>: <msg> (<OS text>)"; NULL when out of
 * memory. */
static char *error_raw(void)
{
    const struct cdd_errinfo *e = cdd_last_error();
    char os[512]; /* fixed: the OS error text */
    const char *m = e->msg[0] ? e->msg : cdd_err_message(e->code);
    const char *ot = "";
    if (e->os_err && e->code != CDD_E_FAULT)
        ot = last_is_errno ? strerror(e->os_err)
                           : cdd_os_error_text(e->os_err, os, sizeof os);
    size_t n = strlen(e->path) + strlen(m) + strlen(ot) + 8;
    char *raw = malloc(n);
    if (!raw)
        return NULL;
    snprintf(raw, n, "%s%s%s%s%s%s", e->path, e->path[0] ? ": " : "", m,
             ot[0] ? " (" : "", ot, ot[0] ? ")" : "");
    return raw;
}

char *cdd_error_format(char *buf, size_t len)
{
    /* Built raw, then rendered on one line: the path and the message carry
     * names from archives, manifests, trees and their state, any of which
     * may hold a newline or an escape sequence. */
    char *raw = error_raw();
    if (!raw) {
        const struct cdd_errinfo *e = cdd_last_error();
        return cdd_text_one_line(e->msg[0] ? e->msg : cdd_err_message(e->code),
                                 buf, len);
    }
    cdd_text_one_line(raw, buf, len);
    free(raw);
    return buf;
}

char *cdd_error_text(void)
{
    /* The whole record, each byte escaped to at most 4 (\xNN, or 10 for
     * \u{NNNN} of a 3-byte character). */
    char *raw = error_raw();
    if (!raw)
        return NULL;
    size_t cap = 4 * strlen(raw) + 1;
    char *buf = malloc(cap);
    if (buf)
        cdd_text_one_line(raw, buf, cap);
    free(raw);
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
    const struct cdd_errinfo *e = cdd_last_error();
    size_t pl = strlen(e->path), ml = strlen(e->msg);
    s->info = *e;
    s->is_errno = last_is_errno;
    s->text = malloc(pl + 1 + ml + 1);
    if (s->text) {
        memcpy(s->text, e->path, pl + 1);
        memcpy(s->text + pl + 1, e->msg, ml + 1);
        s->info.path = s->text;
        s->info.msg = s->text + pl + 1;
    } else {
        s->info.path = "";
        s->info.msg = "the details of this error were lost: out of memory";
    }
}

int cdd_error_restore(const struct cdd_errsave *s)
{
    int code = s->info.code;
    if (!code && !s->info.msg) {
        cdd_clear_error();
        return 0;
    }
    last_is_errno = s->is_errno;
    restore_fail(code, s->info.path ? s->info.path : "", s->info.os_err,
                 "%s", s->info.msg ? s->info.msg : "");
    return code;
}

void cdd_error_save_free(struct cdd_errsave *s)
{
    if (!s)
        return;
    free(s->text);
    memset(s, 0, sizeof *s);
}
