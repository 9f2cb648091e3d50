/* The bounded string buffer and array (cdd/strbuf.h) and the program's one
 * string copy. Every growth is checked against the maximum fixed at
 * creation; passing it is an error naming the content, never a cut. */
#include "cdd/strbuf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/compat.h"

size_t cdd_path_max(void)
{
    return CDD_HOST_WINDOWS ? CDD_PATH_MAX_WIN32 : CDD_PATH_MAX_POSIX;
}

static int too_long(const char *what, size_t max)
{
    return cdd_fail(CDD_E_TOOLONG, NULL, 0, "%s longer than %zu bytes",
                    what ? what : "text", max);
}

void cdd_sb_init(struct cdd_sb *sb, size_t max, const char *what)
{
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    sb->max = max;
    sb->what = what;
    sb->err = 0;
}

int cdd_sb_reserve(struct cdd_sb *sb, size_t n)
{
    if (n > sb->max || sb->len > sb->max - n)
        return too_long(sb->what, sb->max);
    size_t need = sb->len + n + 1;
    if (need <= sb->cap)
        return 0;
    /* Double, from 64, but never past max + 1. */
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (cap > sb->max + 1)
        cap = sb->max + 1;
    char *b = realloc(sb->buf, cap);
    if (!b)
        return cdd_fail(CDD_E_NOMEM, NULL, 0,
                        "out of memory for the %s (%zu bytes)", sb->what, cap);
    if (!sb->buf)
        b[0] = '\0';
    sb->buf = b;
    sb->cap = cap;
    return 0;
}

int cdd_sb_add(struct cdd_sb *sb, const void *p, size_t n)
{
    int rc = cdd_sb_reserve(sb, n);
    if (rc)
        return rc;
    if (n)
        memcpy(sb->buf + sb->len, p, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
    return 0;
}

int cdd_sb_adds(struct cdd_sb *sb, const char *s)
{
    return cdd_sb_add(sb, s, strlen(s));
}

int cdd_sb_vaddf(struct cdd_sb *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return cdd_fail(CDD_E_IO, NULL, 0, "%s: cannot format", sb->what);
    int rc = cdd_sb_reserve(sb, (size_t)n);
    if (rc)
        return rc;
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
    return 0;
}

int cdd_sb_addf(struct cdd_sb *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cdd_sb_vaddf(sb, fmt, ap);
    va_end(ap);
    return rc;
}

void cdd_sb_catf(struct cdd_sb *sb, const char *fmt, ...)
{
    va_list ap;
    if (sb->err)
        return;
    va_start(ap, fmt);
    sb->err = cdd_sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

int cdd_sb_error(const struct cdd_sb *sb)
{
    return sb->err;
}

int cdd_sb_set(struct cdd_sb *sb, const char *s)
{
    size_t n = strlen(s);
    if (n > sb->max)
        return too_long(sb->what, sb->max);
    cdd_sb_reset(sb);
    return cdd_sb_add(sb, s, n);
}

int cdd_sb_setf(struct cdd_sb *sb, const char *fmt, ...)
{
    /* Formatted aside first: the arguments may point into sb itself. */
    struct cdd_sb t;
    cdd_sb_init(&t, sb->max, sb->what);
    va_list ap;
    va_start(ap, fmt);
    int rc = cdd_sb_vaddf(&t, fmt, ap);
    va_end(ap);
    if (rc) {
        cdd_sb_free(&t);
        return rc;
    }
    cdd_sb_free(sb);
    *sb = t;
    if (!sb->buf)
        return cdd_sb_reserve(sb, 0);
    return 0;
}

int cdd_sb_join(struct cdd_sb *sb, const char *dir, const char *name)
{
    size_t ld = strlen(dir), ln = strlen(name);
    int sep = ld > 0 && dir[ld - 1] != '/';
    if (ld + ln + (size_t)sep > sb->max)
        return too_long(sb->what, sb->max);
    /* Built aside: dir or name may live in sb's own buffer. */
    struct cdd_sb t;
    cdd_sb_init(&t, sb->max, sb->what);
    int rc = cdd_sb_reserve(&t, ld + ln + (size_t)sep);
    if (rc)
        return rc;
    cdd_sb_add(&t, dir, ld);
    if (sep)
        cdd_sb_add(&t, "/", 1);
    cdd_sb_add(&t, name, ln);
    cdd_sb_free(sb);
    *sb = t;
    return 0;
}

void cdd_sb_reset(struct cdd_sb *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

const char *cdd_sb_str(const struct cdd_sb *sb)
{
    return sb->buf ? sb->buf : "";
}

size_t cdd_sb_len(const struct cdd_sb *sb)
{
    return sb->len;
}

char *cdd_sb_take(struct cdd_sb *sb)
{
    if (!sb->buf && cdd_sb_reserve(sb, 0))
        return NULL;
    char *s = sb->buf;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return s;
}

void cdd_sb_free(struct cdd_sb *sb)
{
    if (!sb)
        return;
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

char *cdd_strdup(const char *s)
{
    return s ? cdd_strndup(s, strlen(s)) : NULL;
}

int cdd_vfail_text(int code, const char *path, const char *what,
                   const char *fmt, va_list ap)
{
    struct cdd_sb msg;
    cdd_sb_init(&msg, CDD_TEXT_MAX, what);
    int r = cdd_sb_vaddf(&msg, fmt, ap);
    if (!r)
        r = cdd_fail(code, path, 0, "%s", cdd_sb_str(&msg));
    cdd_sb_free(&msg);
    return r;
}

int cdd_lines_add(char **list, const char *s, size_t n, size_t max,
                  const char *what)
{
    size_t old = *list ? strlen(*list) : 0;
    int r = CDD_GROW(*list, NULL, old + n + 2, max, what);
    if (r)
        return r;
    memcpy(*list + old, s, n);
    (*list)[old + n] = '\n';
    (*list)[old + n + 1] = '\0';
    return 0;
}

char *cdd_strndup(const char *s, size_t n)
{
    if (!s)
        return NULL;
    size_t l = 0;
    while (l < n && s[l])
        l++;
    char *d = malloc(l + 1);
    if (!d)
        return NULL;
    memcpy(d, s, l);
    d[l] = '\0';
    return d;
}

char *cdd_aprintf(size_t max, const char *what, const char *fmt, ...)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, max, what);
    va_list ap;
    va_start(ap, fmt);
    int rc = cdd_sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    if (rc) {
        cdd_sb_free(&sb);
        return NULL;
    }
    return cdd_sb_take(&sb);
}

/* ---- the bounded array ------------------------------------------------- */

void cdd_vec_init(struct cdd_vec *v, size_t size, size_t max,
                  const char *what)
{
    v->items = NULL;
    v->len = v->cap = 0;
    v->max = max;
    v->size = size;
    v->what = what;
}

int cdd_grow(void *pp, size_t *cap, size_t need, size_t size, size_t max,
             const char *what)
{
    if (!what)
        what = "items";
    if (need > max)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "more than %zu %s", max,
                        what);
    size_t have = cap ? *cap : 0, want = need;
    if (cap) {
        if (need <= have)
            return 0;
        want = have ? have : 8;
        while (want < need)
            want = want > SIZE_MAX / 2 ? need : want * 2;
        if (want > max)
            want = max;
    }
    if (!want)
        return 0;
    if (size && want > SIZE_MAX / size)
        return cdd_fail(CDD_E_NOMEM, NULL, 0,
                        "out of memory for the %s (%zu items)", what, want);
    /* The pointer is read and written through memcpy: pp is any T **. */
    void *old, *p;
    memcpy(&old, pp, sizeof old);
    p = realloc(old, want * size);
    if (!p)
        return cdd_fail(CDD_E_NOMEM, NULL, 0,
                        "out of memory for the %s (%zu items)", what, want);
    memcpy(pp, &p, sizeof p);
    if (cap)
        *cap = want;
    return 0;
}

int cdd_vec_reserve(struct cdd_vec *v, size_t n)
{
    if (n > v->max || v->len > v->max - n)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "more than %zu %s", v->max,
                        v->what ? v->what : "items");
    return cdd_grow(&v->items, &v->cap, v->len + n, v->size, v->max,
                    v->what);
}

int cdd_vec_push(struct cdd_vec *v, const void *item)
{
    int rc = cdd_vec_reserve(v, 1);
    if (rc)
        return rc;
    memcpy((char *)v->items + v->len * v->size, item, v->size);
    v->len++;
    return 0;
}

void *cdd_vec_at(const struct cdd_vec *v, size_t i)
{
    return i < v->len ? (char *)v->items + i * v->size : NULL;
}

void *cdd_vec_take(struct cdd_vec *v, size_t *n)
{
    void *p = v->items;
    if (n)
        *n = v->len;
    v->items = NULL;
    v->len = v->cap = 0;
    return p;
}

void cdd_vec_free(struct cdd_vec *v)
{
    if (!v)
        return;
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}
