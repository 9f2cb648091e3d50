/* The raw tar header check (see tarscan.h). A small state machine over the
 * stream: 512-byte headers, the bodies of GNU long names and pax headers,
 * which it reads, and the data of members, which it only counts. It never
 * holds more than one header and one pax header (at most
 * CDD_TARSCAN_PAX_MAX bytes). */
#include "tarscan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

#define BLOCK 512u

enum st {
    ST_HEADER,   /* collecting a header block */
    ST_SKIP,     /* member data or padding: counted, not read */
    ST_LONGNAME, /* the body of a GNU 'L' or 'K' member */
    ST_PAX,      /* the body of a pax 'x' header */
    ST_DONE,     /* after the end-of-archive block: the tar reader stops */
    ST_FAILED
};

struct cdd_tarscan {
    char *path;
    enum st st;
    unsigned char hdr[BLOCK]; /* fixed: one tar header block */
    size_t hlen;
    uint64_t left, pad; /* body bytes left, then padding to skip */
    char kind;          /* 'L' or 'K' in ST_LONGNAME */
    int long_nul;       /* the long name's terminating NUL was seen */
    struct cdd_sb long_name; /* the long name so far, raw, for messages */
    unsigned char *pax;
    size_t pax_len, pax_want;
    int have_size;      /* a pax "size" record for the next member */
    uint64_t size;
    /* What the extension headers before the next member said: how many of
     * each ('L', 'K', 'x'), and whether the long name or the pax path they
     * give it ends in '/' (then the tar reader takes it for a folder). */
    int n_long, n_longlink, n_pax, have_path;
    int long_slash, path_slash;
    unsigned char long_last;
    int err;
};

int cdd_tarscan_new(const char *path, struct cdd_tarscan **out)
{
    struct cdd_tarscan *s = calloc(1, sizeof *s);
    *out = NULL;
    if (!s || !(s->path = strdup(path ? path : ""))) {
        free(s);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    cdd_sb_init(&s->long_name, CDD_TARSCAN_PAX_MAX, "GNU long name");
    *out = s;
    return 0;
}

void cdd_tarscan_free(struct cdd_tarscan *s)
{
    if (!s)
        return;
    free(s->pax);
    free(s->path);
    cdd_sb_free(&s->long_name);
    free(s);
}

static int fail(struct cdd_tarscan *s, int code, const char *fmt, ...)
    CDD_PRINTF(3, 4);

static int fail(struct cdd_tarscan *s, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    s->st = ST_FAILED;
    s->err = cdd_vfail(code, s->path, 0, fmt, ap);
    va_end(ap);
    return s->err;
}

/* The header's own name field (up to its first NUL), escaped. */
static const char *hname(struct cdd_tarscan *s)
{
    const void *nul = memchr(s->hdr, 0, 100);
    return cdd_path_qn(s->hdr,
                    nul ? (size_t)((const unsigned char *)nul - s->hdr)
                        : 100);
}

/* A numeric field as libarchive reads it: base-256 when the high bit of the
 * first byte is set, else octal after leading blanks. Returns 0, or -1 for
 * a negative or oversized value. */
static int num_field(const unsigned char *p, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    size_t i = 0;
    if (p[0] & 0x80) {
        if (p[0] & 0x40)
            return -1; /* negative */
        x = p[0] & 0x3F;
        for (i = 1; i < n; i++) {
            if (x >> 54)
                return -1;
            x = x << 8 | p[i];
        }
        *v = x;
        return 0;
    }
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    for (; i < n && p[i] >= '0' && p[i] <= '7'; i++) {
        if (x >> 60)
            return -1;
        x = x << 3 | (uint64_t)(p[i] - '0');
    }
    *v = x;
    return 0;
}

static int checksum_ok(const unsigned char *h)
{
    uint64_t want;
    long sum_u = 0, sum_s = 0;
    if (num_field(h + 148, 8, &want) < 0)
        return 0;
    for (size_t i = 0; i < BLOCK; i++) {
        unsigned char b = (i >= 148 && i < 156) ? ' ' : h[i];
        sum_u += b;
        sum_s += (signed char)b;
    }
    return (uint64_t)sum_u == want || (sum_s >= 0 && (uint64_t)sum_s == want);
}

/* Bytes after the first NUL of a name field must be NUL too: a reader that
 * does not stop at the NUL would see another name. */
static int field_clean(const unsigned char *p, size_t n)
{
    const unsigned char *z = memchr(p, 0, n);
    if (!z)
        return 1;
    for (; z < p + n; z++)
        if (*z)
            return 0;
    return 1;
}

static uint64_t padding(uint64_t size)
{
    return (BLOCK - size % BLOCK) % BLOCK;
}

static int is_zero_block(const unsigned char *h)
{
    for (size_t i = 0; i < BLOCK; i++)
        if (h[i])
            return 0;
    return 1;
}

/* Skip n body bytes and then pad, or go straight on to the next header. */
static void skip(struct cdd_tarscan *s, uint64_t n, uint64_t pad)
{
    s->left = n + pad;
    s->pad = 0;
    s->st = s->left ? ST_SKIP : ST_HEADER;
}

/* A member header consumes what the extension headers before it said. */
static void ext_reset(struct cdd_tarscan *s)
{
    s->have_size = 0;
    s->n_long = s->n_longlink = s->n_pax = s->have_path = 0;
    s->long_slash = s->path_slash = 0;
}

static int header(struct cdd_tarscan *s)
{
    const unsigned char *h = s->hdr;
    uint64_t size;
    char t = (char)h[156];
    /* As libarchive tells them apart: GNU ("ustar  \0") keeps other
     * fields where ustar ("ustar...") has the name's prefix. */
    int ustar = memcmp(h + 257, "ustar", 5) == 0 &&
                memcmp(h + 257, "ustar  \0", 8) != 0;

    s->hlen = 0;
    if (is_zero_block(h)) {
        s->st = ST_DONE;
        return 0;
    }
    if (!checksum_ok(h))
        return fail(s, CDD_E_CORRUPT,
                    "tar: header of \"%s\": bad checksum", hname(s));
    if (num_field(h + 124, 12, &size) < 0)
        return fail(s, CDD_E_CORRUPT, "tar: member \"%s\": invalid size",
                    hname(s));
    if (!field_clean(h, 100) || !field_clean(h + 157, 100) ||
        (ustar && !field_clean(h + 345, 155)))
        return fail(s, CDD_E_UNSAFE,
                    "tar: member \"%s\": bytes after the NUL that ends a name "
                    "field",
                    hname(s));
    /* A GNU header of any type carries a sparse map (386), its extension
     * flag (482) and a real size (483): the tar reader reads them whatever
     * the type, builds the map, and pads the data with zeros to the real
     * size. Sparse by another name: refused. */
    if (memcmp(h + 257, "ustar  \0", 8) == 0 &&
        (h[386] != 0 || h[482] != 0 || h[483] != 0))
        return fail(s, CDD_E_UNSAFE,
                    "tar: member \"%s\": GNU sparse map or real size in its "
                    "header (sparse members are not allowed)",
                    hname(s));
    switch (t) {
    case 'L':
    case 'K':
        /* The tar reader applies one of two long names and ignores the
         * other; which one is its business: refused. */
        if ((t == 'L' ? s->n_long++ : s->n_longlink++) > 0)
            return fail(s, CDD_E_CORRUPT,
                        "tar: two GNU long %ss for one member (before "
                        "\"%s\")",
                        t == 'L' ? "name" : "link name",
                        hname(s));
        if (size > CDD_TARSCAN_PAX_MAX)
            return fail(s, CDD_E_CORRUPT,
                        "tar: a GNU long %s of more than 1 MiB (before "
                        "\"%s\")",
                        t == 'L' ? "name" : "link name", hname(s));
        s->kind = t;
        s->long_nul = 0;
        s->long_last = 0;
        cdd_sb_reset(&s->long_name);
        s->left = size;
        s->pad = padding(size);
        s->st = size ? ST_LONGNAME : ST_HEADER;
        if (!size)
            skip(s, 0, s->pad);
        return 0;
    case 'x':
        if (s->n_pax++ > 0)
            return fail(s, CDD_E_CORRUPT,
                        "tar: two pax headers for one member (before "
                        "\"%s\")",
                        hname(s));
        if (size > CDD_TARSCAN_PAX_MAX)
            return fail(s, CDD_E_CORRUPT,
                        "tar: pax header \"%s\" larger than 1 MiB",
                        hname(s));
        free(s->pax);
        s->pax = NULL;
        s->pax_len = 0;
        s->pax_want = (size_t)size;
        if (size && !(s->pax = malloc((size_t)size))) {
            s->st = ST_FAILED;
            return s->err = cdd_fail(CDD_E_NOMEM, s->path, 0, NULL);
        }
        s->pad = padding(size);
        s->st = size ? ST_PAX : ST_HEADER;
        if (!size)
            skip(s, 0, s->pad);
        return 0;
    case 'g': /* global pax header: the tar reader reads and ignores it */
        skip(s, size, padding(size));
        return 0;
    case 'S':
        return fail(s, CDD_E_UNSAFE,
                    "tar: member \"%s\": GNU sparse members are not "
                    "allowed",
                    hname(s));
    case '0':
    case '\0':
    case '7': {
        int slash;
        if (s->have_size)
            size = s->size;
        if (s->have_path && s->n_long)
            return fail(s, CDD_E_CORRUPT,
                        "tar: member \"%s\": both a GNU long name and a pax "
                        "path",
                        hname(s));
        if (s->have_path)
            slash = s->path_slash;
        else if (s->n_long)
            slash = s->long_slash;
        else {
            /* ustar joins prefix, '/' and name: an empty name after a
             * prefix ends in '/' too. */
            const unsigned char *z = memchr(h, 0, 100);
            size_t nlen = z ? (size_t)(z - h) : 100;
            slash = nlen ? h[nlen - 1] == '/' : ustar && h[345] != 0;
        }
        /* A regular member whose name ends in '/' is a folder to the tar
         * reader, which then skips none of its "data": the two would part
         * ways there. */
        if (slash && size)
            return fail(s, CDD_E_CORRUPT,
                        "tar: member \"%s\": a folder (its name ends in '/') "
                        "with a size",
                        hname(s));
        ext_reset(s);
        skip(s, size, padding(size));
        return 0;
    }
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
        if (s->have_size)
            size = s->size;
        ext_reset(s);
        /* The tar reader ignores the size of these types, or not (hard
         * links): any size could make two readers find different
         * headers. */
        if (size)
            return fail(s, CDD_E_CORRUPT,
                        "tar: member \"%s\": a size on a member that carries "
                        "no data",
                        hname(s));
        s->st = ST_HEADER;
        return 0;
    default: {
        char tb[2] = {t, '\0'}; /* fixed: one type character */
        return fail(s, CDD_E_CORRUPT,
                    "tar: member \"%s\": type '%s' is not read", hname(s),
                    tb);
    }
    }
}

/* A pax value that names a file: no NUL (the tar reader stops there, other
 * readers do not), no control character. */
static int pax_name(struct cdd_tarscan *s, const char *key,
                    const unsigned char *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (v[i] == 0)
            return fail(s, CDD_E_UNSAFE,
                        "tar: pax %s \"%s\": holds a NUL byte (readers that "
                        "stop there see another name)",
                        key, cdd_path_qn(v, n));
        if (v[i] < 0x20 || v[i] == 0x7F)
            return fail(s, CDD_E_UNSAFE,
                        "tar: pax %s \"%s\": holds a control character",
                        key, cdd_path_qn(v, n));
    }
    return 0;
}

/* Whether the n bytes at key are the keyword kw. */
static int key_is(const char *key, size_t n, const char *kw)
{
    return n == strlen(kw) && memcmp(key, kw, n) == 0;
}

/* Records "<len> <key>=<value>\n", as the tar reader parses them. */
static int pax_records(struct cdd_tarscan *s)
{
    const unsigned char *p = s->pax, *end = s->pax + s->pax_len;
    while (p < end) {
        const unsigned char *sp, *eq, *rec_end;
        uint64_t len = 0;
        const char *key;
        size_t klen;
        for (sp = p; sp < end && *sp >= '0' && *sp <= '9'; sp++) {
            if (len > CDD_TARSCAN_PAX_MAX)
                break;
            len = len * 10 + (uint64_t)(*sp - '0');
        }
        if (sp == p || sp >= end || *sp != ' ' || len > (uint64_t)(end - p) ||
            len < (uint64_t)(sp - p) + 3 || p[len - 1] != '\n')
            return fail(s, CDD_E_CORRUPT, "tar: malformed pax record");
        rec_end = p + len - 1;
        eq = memchr(sp + 1, '=', (size_t)(rec_end - (sp + 1)));
        if (!eq)
            return fail(s, CDD_E_CORRUPT, "tar: pax record without '='");
        key = (const char *)(sp + 1);
        klen = (size_t)(eq - (sp + 1));
        if (memchr(key, 0, klen))
            return fail(s, CDD_E_CORRUPT, "tar: pax key with a NUL byte");
        /* Sparse in all its spellings: GNU's, Solaris' holes, and
         * SCHILY.realsize, with which the tar reader pads a member's few
         * stored bytes with zeros up to any size (a bomb, and a file other
         * readers extract short). */
        if ((klen >= 11 && memcmp(key, "GNU.sparse.", 11) == 0) ||
            key_is(key, klen, "SCHILY.realsize") ||
            key_is(key, klen, "SUN.holesdata"))
            return fail(s, CDD_E_UNSAFE,
                        "tar: pax record \"%s\": sparse members are not "
                        "allowed",
                        cdd_path_qn(key, klen));
        if (key_is(key, klen, "path") || key_is(key, klen, "linkpath")) {
            size_t vlen = (size_t)(rec_end - (eq + 1));
            int is_path = key[0] == 'p';
            int r = pax_name(s, is_path ? "path" : "linkpath", eq + 1, vlen);
            if (r < 0)
                return r;
            if (is_path) {
                s->have_path = 1;
                s->path_slash = vlen && eq[vlen] == '/';
            }
        } else if (key_is(key, klen, "size")) {
            uint64_t v = 0;
            const unsigned char *q = eq + 1;
            if (q == rec_end)
                return fail(s, CDD_E_CORRUPT, "tar: empty pax size");
            for (; q < rec_end; q++) {
                if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
                    return fail(s, CDD_E_CORRUPT,
                                "tar: pax size is not a number");
                v = v * 10 + (uint64_t)(*q - '0');
            }
            s->have_size = 1;
            s->size = v;
        }
        p += len;
    }
    return 0;
}

static int long_byte(struct cdd_tarscan *s, unsigned char b)
{
    const char *what = s->kind == 'L' ? "name" : "link name";
    /* The name so far, raw, for the message (shown with NULs marked). */
    int r = cdd_sb_add(&s->long_name, &b, 1);
    if (r < 0) {
        s->st = ST_FAILED;
        return s->err = r;
    }
    if (s->long_nul && b)
        return fail(s, CDD_E_UNSAFE,
                    "tar: GNU long %s \"%s\": bytes after a NUL (readers "
                    "that stop there see another name)",
                    what, cdd_path_qn(cdd_sb_str(&s->long_name), cdd_sb_len(&s->long_name)));
    if (!b) {
        if (!s->long_nul && s->kind == 'L')
            s->long_slash = s->long_last == '/';
        s->long_nul = 1;
    } else if (b < 0x20 || b == 0x7F) {
        return fail(s, CDD_E_UNSAFE,
                    "tar: GNU long %s \"%s\": holds a control character", what,
                    cdd_path_qn(cdd_sb_str(&s->long_name), cdd_sb_len(&s->long_name)));
    } else {
        s->long_last = b;
    }
    return 0;
}

int cdd_tarscan_feed(struct cdd_tarscan *s, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    int r;

    /* Every call after a failure fails, an empty one too. */
    if (s->st == ST_FAILED)
        return s->err;
    while (len > 0) {
        size_t n;
        switch (s->st) {
        case ST_FAILED:
            return s->err;
        case ST_DONE:
            return 0;
        case ST_HEADER:
            n = BLOCK - s->hlen < len ? BLOCK - s->hlen : len;
            memcpy(s->hdr + s->hlen, p, n);
            s->hlen += n;
            if (s->hlen == BLOCK && (r = header(s)) < 0)
                return r;
            break;
        case ST_SKIP:
            n = s->left < len ? (size_t)s->left : len;
            s->left -= n;
            if (!s->left)
                s->st = ST_HEADER;
            break;
        case ST_LONGNAME:
            n = s->left < len ? (size_t)s->left : len;
            for (size_t i = 0; i < n; i++)
                if ((r = long_byte(s, p[i])) < 0)
                    return r;
            s->left -= n;
            if (!s->left) {
                /* A long name without its NUL ends at the body's end. */
                if (!s->long_nul && s->kind == 'L')
                    s->long_slash = s->long_last == '/';
                skip(s, 0, s->pad);
            }
            break;
        case ST_PAX:
            n = s->pax_want - s->pax_len < len ? s->pax_want - s->pax_len
                                               : len;
            memcpy(s->pax + s->pax_len, p, n);
            s->pax_len += n;
            if (s->pax_len == s->pax_want) {
                if ((r = pax_records(s)) < 0)
                    return r;
                free(s->pax);
                s->pax = NULL;
                skip(s, 0, s->pad);
            }
            break;
        default:
            return 0;
        }
        p += n;
        len -= n;
    }
    return 0;
}
