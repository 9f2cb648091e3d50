/* Bounded containers: a string buffer and an array whose maximum is fixed
 * when they are created (the bound of the input they hold), after curl's
 * dynbuf. They grow on demand up to that maximum; an append that would pass
 * it fails with CDD_E_TOOLONG naming what was too long, and never cuts. */
#ifndef CDD_STRBUF_H
#define CDD_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

#include "cdd/compat_attr.h"

/* Bounds, in bytes without the terminating NUL. A name (one path
 * component) is at most 255 bytes everywhere we run. A path is bounded by
 * the platform: PATH_MAX (4096 with its NUL) on POSIX; on Windows 32767
 * UTF-16 units with the \\?\ prefix, each up to 3 bytes of UTF-8. */
#define CDD_NAME_MAX 255
#define CDD_PATH_MAX_POSIX 4095
#define CDD_PATH_MAX_WIN32 (32767 * 3)
/* The bound of the platform the program is built for (one of the two). */
#define CDD_PATH_MAX cdd_path_max()
size_t cdd_path_max(void);
/* A message or a line of a report built from a few paths and names. */
#define CDD_TEXT_MAX (8 * (size_t)CDD_PATH_MAX_WIN32 + 65536)

struct cdd_sb {
    char *buf;        /* NUL-terminated when not NULL; may hold NULs */
    size_t len;       /* bytes held, without the terminating NUL */
    size_t cap;       /* bytes allocated */
    size_t max;       /* most bytes it may hold */
    const char *what; /* named in the error ("path", "file name") */
    int err;          /* the first failure of cdd_sb_catf (sticky), or 0 */
};

/* The same as a static initializer: struct cdd_sb b = CDD_SB_INIT(max, what). */
#define CDD_SB_INIT(max, what) {NULL, 0, 0, (max), (what), 0}

/* An empty buffer that may hold up to max bytes; what (a static string)
 * names its content in the error when an append would pass max. Allocates
 * nothing: a buffer that is never appended to need not be freed. */
void cdd_sb_init(struct cdd_sb *sb, size_t max, const char *what);

/* Append n bytes (may hold NULs) / a C string / printf output. On failure
 * (CDD_E_TOOLONG, CDD_E_NOMEM) the content is left as it was. */
int cdd_sb_add(struct cdd_sb *sb, const void *p, size_t n);
int cdd_sb_adds(struct cdd_sb *sb, const char *s);
int cdd_sb_addf(struct cdd_sb *sb, const char *fmt, ...) CDD_PRINTF(2, 3);
int cdd_sb_vaddf(struct cdd_sb *sb, const char *fmt, va_list ap)
    CDD_PRINTF(2, 0);
/* Append printf output unless an earlier cdd_sb_catf on sb failed; the
 * first failure sticks in sb->err (read it with cdd_sb_error), so a text
 * built from many pieces is checked once, at the end. */
void cdd_sb_catf(struct cdd_sb *sb, const char *fmt, ...) CDD_PRINTF(2, 3);
int cdd_sb_error(const struct cdd_sb *sb);
/* Room for n more bytes without another allocation. */
int cdd_sb_reserve(struct cdd_sb *sb, size_t n);
/* Set the content to s / printf output (the bound still applies). */
int cdd_sb_set(struct cdd_sb *sb, const char *s);
int cdd_sb_setf(struct cdd_sb *sb, const char *fmt, ...) CDD_PRINTF(2, 3);
/* Join: dir, a '/' unless dir is empty or ends with one, then name. */
int cdd_sb_join(struct cdd_sb *sb, const char *dir, const char *name);
/* Back to empty, keeping the allocation. */
void cdd_sb_reset(struct cdd_sb *sb);
/* The content ("" when nothing was added). Valid until the next call. */
const char *cdd_sb_str(const struct cdd_sb *sb);
size_t cdd_sb_len(const struct cdd_sb *sb);
/* The content as a malloc'd string the caller frees (NULL: out of memory,
 * recorded); the buffer is empty afterwards. */
char *cdd_sb_take(struct cdd_sb *sb);
/* Release; accepts a buffer that was only initialised. */
void cdd_sb_free(struct cdd_sb *sb);

/* One malloc'd copy of s (NULL for NULL or out of memory: the one
 * str_dup of the program). */
char *cdd_strdup(const char *s);
/* The first n bytes of s, NUL-terminated. */
char *cdd_strndup(const char *s, size_t n);
/* cdd_vfail (error.h) with the message made first within CDD_TEXT_MAX, so
 * that one quoting untrusted input stays bounded: past that, the failure
 * is TOOLONG naming what. Returns the code recorded. */
int cdd_vfail_text(int code, const char *path, const char *what,
                   const char *fmt, va_list ap) CDD_PRINTF(4, 0);
/* A malloc'd printf result bounded by max bytes (NULL: error recorded). */
char *cdd_aprintf(size_t max, const char *what, const char *fmt, ...)
    CDD_PRINTF(3, 4);

/* The one growth rule of the program (every array grows through it, no
 * hand-written realloc loop elsewhere; tests/gen_buffers.py checks that).
 * pp is the address of an array pointer (T **, passed as void *), *cap its
 * capacity in items; afterwards it holds room for at least need items of
 * size bytes, doubling, never more than max. cap may be NULL for an array
 * kept exactly at its length (no capacity field): it is then resized to
 * need items. Fails with CDD_E_TOOLONG naming what when need passes max,
 * CDD_E_NOMEM when memory runs out; on failure *pp and *cap are as they
 * were. */
int cdd_grow(void *pp, size_t *cap, size_t need, size_t size, size_t max,
             const char *what);
/* The same for an array a (a T * lvalue): room for need items. */
#define CDD_GROW(a, capp, need, max, what) \
    cdd_grow(&(a), (capp), (need), sizeof *(a), (max), (what))

/* Append the first n bytes of s and a newline to *list, a malloc'd
 * newline-separated list (NULL: empty) of at most max bytes with its NUL;
 * 0, or CDD_E_TOOLONG (naming what) / CDD_E_NOMEM recorded with *list
 * unchanged. The lists of folders a mkdirs created. */
int cdd_lines_add(char **list, const char *s, size_t n, size_t max,
                  const char *what);

/* An array of items of one size, up to max items. */
struct cdd_vec {
    void *items;
    size_t len, cap, max, size;
    const char *what;
};

void cdd_vec_init(struct cdd_vec *v, size_t size, size_t max,
                  const char *what);
/* Room for n more items. */
int cdd_vec_reserve(struct cdd_vec *v, size_t n);
/* Append a copy of item (size bytes). */
int cdd_vec_push(struct cdd_vec *v, const void *item);
/* The i-th item, NULL past the end. */
void *cdd_vec_at(const struct cdd_vec *v, size_t i);
/* The items as a malloc'd array the caller frees (NULL when empty); *n
 * gets the count; the vector is empty afterwards. */
void *cdd_vec_take(struct cdd_vec *v, size_t *n);
void cdd_vec_free(struct cdd_vec *v);

#endif
