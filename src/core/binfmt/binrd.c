/* The bounded binary reader elf.c and pe.c parse through (binrd_int.h): a
 * cached reader over a cdd_binsrc that refuses every range past the end of
 * the file, the string arena, bounded string lists. Nothing here knows a
 * format; binfile.c, above the parsers, picks the parser. */
#include "binrd_int.h"

#include "cdd/error.h"
#include "cdd/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- string arena -------------------------------------------------------
 * Up to a million export names: one allocation each would cost more in
 * malloc overhead than the names themselves, so they are packed in chunks. */

#define ARENA_CHUNK (256u * 1024u)

struct cdd_binarena {
    struct cdd_binarena *next;
    size_t used, cap;
    char data[];
};

static char *arena_alloc(struct cdd_binarena **a, size_t n)
{
    struct cdd_binarena *c = *a;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = *a;
        c->used = 0;
        c->cap = cap;
        *a = c;
    }
    char *p = c->data + c->used;
    c->used += n;
    return p;
}

void cdd_binarena_free(struct cdd_binarena *a)
{
    while (a) {
        struct cdd_binarena *next = a->next;
        free(a);
        a = next;
    }
}

/* ---- reader ------------------------------------------------------------- */

void cdd_binrd_init(struct cdd_binrd *r, const struct cdd_binsrc *src)
{
    memset(r, 0, sizeof *r);
    r->src = src;
    r->path = src->name ? src->name : "";
    r->size = src->size;
}

void cdd_binrd_fini(struct cdd_binrd *r)
{
    for (int i = 0; i < CDD_BINRD_NWIN; i++) {
        free(r->win[i].buf);
        r->win[i].buf = NULL;
    }
    free(r->pin);
    r->pin = NULL;
    cdd_binarena_free(r->arena);
    r->arena = NULL;
}

int cdd_binrd_corrupt(struct cdd_binrd *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cdd_vfail_text(CDD_E_CORRUPT, r->path, "binary fault", fmt, ap);
    va_end(ap);
    return rc;
}

int cdd_binrd_in_file(const struct cdd_binrd *r, uint64_t off, uint64_t len)
{
    return off <= r->size && len <= r->size - off;
}

/* Pointer to [off, off+len), a range the caller has checked lies in the
 * file, inside the pinned table or a cache window; valid until the next
 * read. len must be at most half a window, so that a window starting at off
 * rounded down to 4 KiB always holds the whole range. */
static int rd_peek(struct cdd_binrd *r, uint64_t off, size_t len,
                   const unsigned char **p)
{
    int victim = 0;
    if (r->pin && off >= r->pin_off && off - r->pin_off <= r->pin_len &&
        len <= r->pin_len - (off - r->pin_off)) {
        *p = r->pin + (off - r->pin_off);
        return 0;
    }
    for (int i = 0; i < CDD_BINRD_NWIN; i++) {
        if (r->win[i].len && off >= r->win[i].off &&
            off + len <= r->win[i].off + r->win[i].len) {
            r->win[i].used = ++r->tick;
            *p = r->win[i].buf + (off - r->win[i].off);
            return 0;
        }
        if (r->win[i].used < r->win[victim].used)
            victim = i;
    }
    if (!r->win[victim].buf && !(r->win[victim].buf = malloc(CDD_BINRD_WIN)))
        return cdd_fail(CDD_E_NOMEM, r->path, 0, NULL);
    uint64_t start = off & ~(uint64_t)4095;
    uint64_t wlen = r->size - start < CDD_BINRD_WIN ? r->size - start
                                                    : CDD_BINRD_WIN;
    r->win[victim].len = 0;
    int rc = r->src->read_at(r->src->ud, start, r->win[victim].buf,
                             (size_t)wlen);
    if (rc)
        return rc;
    r->win[victim].off = start;
    r->win[victim].len = (size_t)wlen;
    r->win[victim].used = ++r->tick;
    *p = r->win[victim].buf + (off - start);
    return 0;
}

int cdd_binrd_read(struct cdd_binrd *r, uint64_t off, void *buf, size_t len,
                   const char *what)
{
    if (!cdd_binrd_in_file(r, off, len))
        return cdd_binrd_corrupt(r, "%s extends past end of file", what);
    if (len == 0)
        return 0;
    if (len > CDD_BINRD_WIN / 2)
        return r->src->read_at(r->src->ud, off, buf, len);
    const unsigned char *p = NULL;
    int rc = rd_peek(r, off, len, &p);
    if (rc)
        return rc;
    memcpy(buf, p, len);
    return 0;
}

int cdd_binrd_pin(struct cdd_binrd *r, uint64_t off, uint64_t len)
{
    free(r->pin);
    r->pin = NULL;
    r->pin_len = 0;
    if (len <= CDD_BINRD_WIN || len > CDD_BINRD_PIN_MAX ||
        !cdd_binrd_in_file(r, off, len))
        return 0;
    unsigned char *buf = malloc((size_t)len);
    if (!buf)
        return 0;
    int rc = r->src->read_at(r->src->ud, off, buf, (size_t)len);
    if (rc) {
        free(buf);
        return rc;
    }
    r->pin = buf;
    r->pin_off = off;
    r->pin_len = (size_t)len;
    return 0;
}

int cdd_binrd_str(struct cdd_binrd *r, uint64_t off, uint64_t end,
                  const char *what, char **out)
{
    *out = NULL;
    if (end > r->size)
        end = r->size;
    if (off >= end)
        return cdd_binrd_corrupt(r, "%s: name at offset 0x%llx lies outside "
                                 "its table", what, (unsigned long long)off);
    uint64_t avail = end - off;
    size_t n = avail > CDD_BIN_MAX_STRING + 1 ? CDD_BIN_MAX_STRING + 1
                                              : (size_t)avail;
    const unsigned char *p = NULL;
    int rc = rd_peek(r, off, n, &p);
    if (rc)
        return rc;
    const unsigned char *nul = memchr(p, 0, n);
    if (!nul) {
        if (n == CDD_BIN_MAX_STRING + 1)
            return cdd_binrd_corrupt(r, "%s: name at offset 0x%llx is longer "
                                     "than %d bytes", what,
                                     (unsigned long long)off,
                                     CDD_BIN_MAX_STRING);
        return cdd_binrd_corrupt(r, "%s: name at offset 0x%llx is not "
                                 "NUL-terminated within its table", what,
                                 (unsigned long long)off);
    }
    size_t len = (size_t)(nul - p);
    if (r->str_bytes + len + 1 > CDD_BIN_MAX_STRBYTES)
        return cdd_binrd_corrupt(r, "%s: names exceed %u MiB in total", what,
                                 (unsigned)(CDD_BIN_MAX_STRBYTES >> 20));
    char *s = arena_alloc(&r->arena, len + 1);
    if (!s)
        return cdd_fail(CDD_E_NOMEM, r->path, 0, NULL);
    memcpy(s, p, len);
    s[len] = '\0';
    r->str_bytes += len + 1;
    *out = s;
    return 0;
}

int cdd_strvec_push(struct cdd_binrd *r, struct cdd_strvec *sv, char *s)
{
    if (sv->n >= sv->max)
        return cdd_binrd_corrupt(r, "more than %llu %s",
                                 (unsigned long long)sv->max, sv->what);
    /* Past the bound the binary is malformed (above); below it the one
     * growth rule applies. */
    int rc = CDD_GROW(sv->v, &sv->cap, sv->n + 1, sv->max, sv->what);
    if (rc)
        return rc;
    sv->v[sv->n++] = s;
    return 0;
}

void cdd_strvec_free(struct cdd_strvec *sv)
{
    if (!sv)
        return;
    free(sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}
