/* A bounded reader of a zip's structure (see zipcd.h), in the manner of the
 * ELF and PE parsers: every offset and length read from the file is checked
 * against the file and against the structure around it before it is used,
 * and nothing is allocated from a length the file declares beyond the
 * documented caps.
 *
 * The rules are stricter than the format needs: real archives (NVIDIA's,
 * Info-ZIP's, Python's) meet them, and whatever another reader could read
 * differently is refused:
 * - the end record is the last one in the file, and its comment (the only
 *   bytes allowed after it) ends the file exactly; zip64 records, when
 *   present, sit right before it and agree with it;
 * - the central directory ends where the end records begin, and its
 *   records fill it exactly;
 * - the entries (local header, data, data descriptor) tile the file from
 *   offset 0 to the central directory: no byte before the first, between
 *   two, or shared by two (overlapping entries);
 * - each local header repeats its central record: name bytes, flags,
 *   method, and CRC-32 and sizes (or, with bit 3, zeros there and a data
 *   descriptor after the data that repeats them);
 * - an Info-ZIP Unicode Path field (0x7075) carries the CRC-32 of the name
 *   and the very same name;
 * - names are not empty and hold no NUL or control character; no
 *   encryption; one disk. */
#include "zipcd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

_Static_assert(CDD_ZIPCD_MAX_RECORDS == CDD_MAX_ENTRIES &&
                   CDD_ZIPCD_MAX_NAME_BYTES == CDD_MAX_NAME_BYTES,
               "a zip may hold as many records and names as cdd_extract() "
               "takes");

#define EOCD_LEN 22u
#define EOCD_TAIL (65535u + EOCD_LEN) /* end record + longest comment */
#define LOC64_LEN 20u
#define EOCD64_MIN 56u
#define CEN_LEN 46u
#define LOC_LEN 30u
#define SAT16 0xFFFFu
#define SAT32 0xFFFFFFFFu

#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DESCRIPTOR 0x0008u
#define FLAG_STRONG_ENC 0x0040u
#define FLAG_MASKED_CD 0x2000u

#define UNIX_IFMT 0170000u
#define UNIX_IFREG 0100000u
#define UNIX_IFDIR 0040000u
#define UNIX_IFLNK 0120000u

struct cdd_zipcd {
    struct cdd_zipcd_entry *v; /* in local-header order once read */
    size_t n;
    char *names;               /* all names, NUL-separated */
    size_t names_len, names_cap;
    /* A zip still downloading (cdd/feed.h): the local headers are checked
     * as the reader reaches them, in file order (cdd_zipcd_check_through),
     * not all at open, which would wait for the whole download. */
    int lazy;
    size_t checked;            /* entries [0, checked) tile the file */
    uint64_t expect;           /* where entry `checked` must start */
    uint64_t cd_off, size;
};

/* What the reading of one zip needs. */
struct zctx {
    struct cdd_rfile *f;
    const char *path;
    uint64_t size;
    unsigned char *scratch; /* a record's variable part: up to 3 x 64 KiB */
};

static uint32_t le16(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t le32(const unsigned char *p)
{
    return le16(p) | le16(p + 2) << 16;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* CRC-32 (ISO 3309, the zip one), bit by bit: only names go through it. */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* An entry's name for a message (NULs marked, escaped, whole), kept until
 * the cdd_fail() it is an argument of has recorded the message. */
static const char *show(const unsigned char *name, size_t len)
{
    return cdd_path_qn(name, len);
}

/* cdd_fail() on the archive. */
#define zfail(c, code, ...) cdd_fail((code), (c)->path, 0, __VA_ARGS__)

static int corrupt(struct zctx *c, const char *fmt, ...)
    CDD_PRINTF(2, 3);

static int corrupt(struct zctx *c, const char *fmt, ...)
{
    struct cdd_sb msg;
    va_list ap;
    cdd_sb_init(&msg, CDD_TEXT_MAX, "message");
    int r = cdd_sb_adds(&msg, "zip: ");
    va_start(ap, fmt);
    if (!r)
        r = cdd_sb_vaddf(&msg, fmt, ap);
    va_end(ap);
    r = r ? zfail(c, CDD_E_CORRUPT, "zip: corrupt (the details could not "
                                    "be formatted: out of memory)")
          : zfail(c, CDD_E_CORRUPT, "%s", cdd_sb_str(&msg));
    cdd_sb_free(&msg);
    return r;
}

/* Read exactly [off, off + len) of the file; what says which structure, for
 * the message when it does not lie in the file. */
static int rd(struct zctx *c, uint64_t off, void *buf, size_t len,
              const char *what)
{
    size_t got = 0;
    int r;
    if (off > c->size || len > c->size - off)
        return zfail(c, CDD_E_CORRUPT, "zip: %s at offset %llu extends past the end of the "
                        "file",
                        what, (unsigned long long)off);
    if (len == 0)
        return 0;
    if ((r = cdd_rfile_pread(c->f, off, buf, len, &got)) < 0)
        return r;
    if (got != len)
        return zfail(c, CDD_E_CORRUPT, "zip: %s at offset %llu: the file ended early", what,
                        (unsigned long long)off);
    return 0;
}

/* ---- sniffing -------------------------------------------------------------- */

int cdd_zipcd_sniff(struct cdd_rfile *f, const char *path, uint64_t size,
                    int *is_zip)
{
    struct zctx c = {f, path, size, NULL};
    unsigned char head[263], *tail = NULL; /* fixed: the signature bytes sniffed */
    size_t head_len = size < sizeof head ? (size_t)size : sizeof head;
    size_t tail_len;
    int r;

    *is_zip = 0;
    if ((r = rd(&c, 0, head, head_len, "first bytes")) < 0)
        return r;
    if (head_len >= 4 && head[0] == 'P' && head[1] == 'K' &&
        ((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6))) {
        *is_zip = 1;
        return 0;
    }
    /* The signatures of what the tar reader takes: never a zip, whatever
     * their last bytes hold. */
    if ((head_len >= 6 && memcmp(head, "\xFD" "7zXZ\0", 6) == 0) ||
        (head_len >= 2 && head[0] == 0x1F && head[1] == 0x8B) ||
        (head_len >= 3 && memcmp(head, "BZh", 3) == 0) ||
        (head_len >= 4 && memcmp(head, "\x28\xB5\x2F\xFD", 4) == 0) ||
        (head_len >= 262 && memcmp(head + 257, "ustar", 5) == 0))
        return 0;
    if (size < EOCD_LEN)
        return 0;
    tail_len = size < EOCD_TAIL ? (size_t)size : EOCD_TAIL;
    if (!(tail = malloc(tail_len)))
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    if ((r = rd(&c, size - tail_len, tail, tail_len, "end of the file")) == 0)
        for (size_t i = 0; i + 4 <= tail_len; i++)
            if (memcmp(tail + i, "PK\5\6", 4) == 0) {
                *is_zip = 1;
                break;
            }
    free(tail);
    return r;
}

/* ---- the end records --------------------------------------------------------- */

struct eocd {
    uint64_t count, cd_size, cd_off;
    uint64_t records_start; /* where the central directory must end */
};

static int read_end(struct zctx *c, struct eocd *e)
{
    unsigned char *tail = NULL, loc[LOC64_LEN], z[EOCD64_MIN];
    size_t tail_len;
    uint64_t pos = 0, tail_off;
    uint32_t comment, disk, cd_disk, n_disk, n_total, cd_size32, cd_off32;
    int found = 0, r = 0, zip64 = 0;

    if (c->size < EOCD_LEN)
        return corrupt(c, "file of %llu bytes is too small for a zip",
                       (unsigned long long)c->size);
    tail_len = c->size < EOCD_TAIL ? (size_t)c->size : EOCD_TAIL;
    tail_off = c->size - tail_len;
    if (!(tail = malloc(tail_len)))
        return zfail(c, CDD_E_NOMEM, NULL);
    if ((r = rd(c, tail_off, tail, tail_len, "end of central directory")) < 0)
        goto out;
    /* The last signature with a whole record after it, as libarchive and
     * unzip search: one inside a comment would be found first by them. */
    for (size_t i = tail_len - EOCD_LEN + 1; i-- > 0;)
        if (memcmp(tail + i, "PK\5\6", 4) == 0) {
            pos = tail_off + i;
            found = 1;
            break;
        }
    if (!found) {
        r = corrupt(c, "no end of central directory record in the last "
                       "%llu bytes", (unsigned long long)tail_len);
        goto out;
    }
    {
        const unsigned char *p = tail + (pos - tail_off);
        disk = le16(p + 4);
        cd_disk = le16(p + 6);
        n_disk = le16(p + 8);
        n_total = le16(p + 10);
        cd_size32 = le32(p + 12);
        cd_off32 = le32(p + 16);
        comment = le16(p + 20);
    }
    if (pos + EOCD_LEN + comment != c->size) {
        if (pos + EOCD_LEN + comment > c->size)
            r = corrupt(c, "end record's comment (%llu bytes) runs past the "
                           "end of the file", (unsigned long long)comment);
        else
            r = corrupt(c, "%llu bytes after the end of central directory "
                           "record and its %llu-byte comment", (unsigned long long)(c->size - (pos + EOCD_LEN + comment)),
                        (unsigned long long)comment);
        goto out;
    }
    e->count = n_total;
    e->cd_size = cd_size32;
    e->cd_off = cd_off32;
    e->records_start = pos;

    if (pos >= LOC64_LEN) {
        if ((r = rd(c, pos - LOC64_LEN, loc, LOC64_LEN, "zip64 locator")) < 0)
            goto out;
        zip64 = memcmp(loc, "PK\6\7", 4) == 0;
    }
    if (zip64) {
        uint64_t z_off = le64(loc + 8), rec_size;
        if (le32(loc + 4) != 0 || le32(loc + 16) != 1) {
            r = corrupt(c, "zip64 locator: a multi-disk archive (disk "
                           "%llu of %llu)", (unsigned long long)le32(loc + 4),
                        (unsigned long long)le32(loc + 16));
            goto out;
        }
        if ((r = rd(c, z_off, z, EOCD64_MIN, "zip64 end record")) < 0)
            goto out;
        rec_size = le64(z + 4);
        if (memcmp(z, "PK\6\6", 4) != 0 || rec_size < EOCD64_MIN - 12 ||
            rec_size > c->size || z_off + 12 + rec_size != pos - LOC64_LEN) {
            r = corrupt(c, "zip64 end record at offset %llu does not end "
                           "where its locator begins (%llu)", (unsigned long long)z_off,
                        (unsigned long long)(pos - LOC64_LEN));
            goto out;
        }
        if (le32(z + 16) != 0 || le32(z + 20) != 0 ||
            le64(z + 24) != le64(z + 32)) {
            r = corrupt(c, "zip64 end record: a multi-disk archive");
            goto out;
        }
        /* Each field of the classic record is either saturated or the
         * zip64 value itself: two readers must not find two directories. */
        if ((n_total != SAT16 && n_total != le64(z + 32)) ||
            (n_disk != SAT16 && n_disk != le64(z + 24)) ||
            (cd_size32 != SAT32 && cd_size32 != le64(z + 40)) ||
            (cd_off32 != SAT32 && cd_off32 != le64(z + 48)) ||
            (disk != SAT16 && disk != 0) || (cd_disk != SAT16 && cd_disk != 0)) {
            r = corrupt(c, "the end record and the zip64 end record "
                           "disagree (entries %llu / %llu, or the directory's "
                           "size or offset)", (unsigned long long)n_total,
                        (unsigned long long)le64(z + 32));
            goto out;
        }
        e->count = le64(z + 32);
        e->cd_size = le64(z + 40);
        e->cd_off = le64(z + 48);
        e->records_start = z_off;
    } else {
        if (disk != 0 || cd_disk != 0 || n_disk != n_total) {
            r = corrupt(c, "end record: a multi-disk archive (disk %llu, "
                           "%llu entries on it)", (unsigned long long)disk,
                        (unsigned long long)n_disk);
            goto out;
        }
        if (n_total == SAT16 || cd_size32 == SAT32 || cd_off32 == SAT32) {
            r = corrupt(c, "end record: saturated field without a zip64 end "
                           "record");
            goto out;
        }
    }
    if (e->cd_off > e->records_start ||
        e->cd_size > e->records_start - e->cd_off) {
        r = corrupt(c, "central directory (offset %llu, size %llu) runs "
                       "past the end records at %llu",
                    (unsigned long long)e->cd_off,
                    (unsigned long long)e->cd_size,
                    (unsigned long long)e->records_start);
        goto out;
    }
    if (e->cd_size != e->records_start - e->cd_off) {
        /* Bytes put before a zip without adjusting its offsets look so:
         * libarchive and unzip shift every offset to make up for them. */
        r = corrupt(c, "%llu bytes between the central directory (offset "
                       "%llu, size %llu) and the end records, or as many "
                       "added before the zip",
                    (unsigned long long)(e->records_start - e->cd_off -
                                         e->cd_size),
                    (unsigned long long)e->cd_off,
                    (unsigned long long)e->cd_size);
        goto out;
    }
    if (e->count > CDD_ZIPCD_MAX_RECORDS) {
        r = zfail(c, CDD_E_ARCHIVE, "zip: %llu entries, more than the %u allowed",
                     (unsigned long long)e->count, CDD_ZIPCD_MAX_RECORDS);
        goto out;
    }
    if (e->count * CEN_LEN > e->cd_size) {
        r = corrupt(c, "central directory of %llu bytes cannot hold %llu "
                       "records", (unsigned long long)e->cd_size,
                    (unsigned long long)e->count);
        goto out;
    }
out:
    free(tail);
    return r;
}

/* ---- extra fields ---------------------------------------------------------------- */

/* The sizes (and offset) a header carries, before and after zip64. */
struct sizes {
    uint64_t usize, csize, offset;
    uint32_t disk;
    int had_zip64;
};

/* Walk the extra fields of a central (central = 1) or local header of the
 * entry named name: they must fill the area exactly; zip64 replaces the
 * saturated fields in their order (uncompressed size, compressed size, and
 * in a central record the offset and the disk); a Unicode Path field must
 * carry the name's CRC-32 and the name itself. */
static int parse_extra(struct zctx *c, const unsigned char *name,
                       size_t name_len, const unsigned char *x, size_t xlen,
                       int central, struct sizes *s)
{
    const char *where = central ? "central record" : "local header";
    size_t i = 0;
    int seen64 = 0, seen_up = 0;
    int need_u = s->usize == SAT32, need_c = s->csize == SAT32;
    int need_o = central && s->offset == SAT32;
    int need_d = central && s->disk == SAT16;

    while (i < xlen) {
        uint32_t id, len;
        const unsigned char *d;
        if (xlen - i < 4)
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": %s: extra field header cut "
                            "short",
                            show(name, name_len), where);
        id = le16(x + i);
        len = le16(x + i + 2);
        d = x + i + 4;
        if (len > xlen - i - 4)
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": %s: extra field 0x%04x runs "
                            "past the extra area",
                            show(name, name_len), where,
                            (unsigned)id);
        if (id == 0x0001) {
            size_t need = 8u * (size_t)(need_u + need_c + need_o) +
                          4u * (size_t)need_d, o = 0;
            if (seen64++ || len < need || len > 28)
                return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": %s: zip64 extra field "
                                "of %u bytes (or twice) for %zu bytes of "
                                "saturated fields",
                                show(name, name_len), where,
                                (unsigned)len, need);
            if (need_u) {
                s->usize = le64(d + o);
                o += 8;
            }
            if (need_c) {
                s->csize = le64(d + o);
                o += 8;
            }
            if (need_o) {
                s->offset = le64(d + o);
                o += 8;
            }
            if (need_d)
                s->disk = le32(d + o);
            s->had_zip64 = 1;
        } else if (id == 0x7075) {
            if (seen_up++ || len < 5 || d[0] != 1)
                return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": %s: malformed Unicode "
                                "Path field",
                                show(name, name_len), where);
            if (le32(d + 1) != crc32_of(name, name_len))
                return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": %s: the Unicode Path "
                                "field's CRC-32 does not match the name",
                                show(name, name_len), where);
            if (len - 5 != name_len || memcmp(d + 5, name, name_len) != 0) {
                return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": %s: the Unicode Path "
                                "field names \"%s\"",
                                show(name, name_len), where,
                                show(d + 5, len - 5));
            }
        }
        i += 4u + len;
    }
    if ((need_u || need_c || need_o || need_d) && !seen64)
        return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": %s: a saturated size or offset "
                        "without a zip64 extra field",
                        show(name, name_len), where);
    return 0;
}

/* ---- central records ----------------------------------------------------------- */

static int check_name(struct zctx *c, const unsigned char *name, size_t len)
{
    if (len == 0)
        return zfail(c, CDD_E_UNSAFE, "zip: an entry with an empty name");
    for (size_t i = 0; i < len; i++) {
        if (name[i] == 0)
            return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": name: a NUL byte at %zu "
                            "(readers that stop there see another name)",
                            show(name, len), i);
        if (name[i] < 0x20 || name[i] == 0x7F)
            return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": name: control character "
                            "0x%02x",
                            show(name, len),
                            (unsigned)name[i]);
    }
    return 0;
}

static enum cdd_entry_type type_of(uint16_t made_by, uint32_t ext,
                                   const unsigned char *name, size_t len)
{
    uint32_t mode = ext >> 16;
    /* libarchive reads the Unix mode only from archives made on Unix. */
    if ((made_by >> 8) == 3 && (mode & UNIX_IFMT) != 0) {
        switch (mode & UNIX_IFMT) {
        case UNIX_IFREG:
            return CDD_ENTRY_FILE;
        case UNIX_IFDIR:
            return CDD_ENTRY_DIR;
        case UNIX_IFLNK:
            return CDD_ENTRY_SYMLINK;
        default:
            return CDD_ENTRY_OTHER;
        }
    }
    if ((ext & 0x10u) || name[len - 1] == '/')
        return CDD_ENTRY_DIR;
    return CDD_ENTRY_FILE;
}

static int add_name(struct zctx *c, struct cdd_zipcd *z,
                    const unsigned char *name, size_t len, size_t *at)
{
    /* The names' bound is the container's (len is under 64 KiB: no
     * overflow). */
    int r = cdd_grow(&z->names, &z->names_cap, z->names_len + len + 1, 1,
                     CDD_ZIPCD_MAX_NAME_BYTES, "bytes of entry names in all");
    if (r < 0)
        return zfail(c, r, "zip: %s", cdd_last_error()->msg);
    memcpy(z->names + z->names_len, name, len);
    z->names[z->names_len + len] = '\0';
    *at = z->names_len;
    z->names_len += len + 1;
    return 0;
}

static int read_central(struct zctx *c, const struct eocd *e,
                        struct cdd_zipcd *z, size_t *name_at)
{
    uint64_t pos = e->cd_off, end = e->cd_off + e->cd_size;
    unsigned char h[CEN_LEN]; /* fixed: a central record's fixed part */
    int r;

    if (e->count && !(z->v = calloc((size_t)e->count, sizeof *z->v)))
        return zfail(c, CDD_E_NOMEM, NULL);
    for (uint64_t i = 0; i < e->count; i++) {
        struct cdd_zipcd_entry *ze = &z->v[z->n];
        struct sizes s;
        uint32_t nlen, xlen, clen;
        const unsigned char *name;
        size_t at = 0;

        if (end - pos < CEN_LEN)
            return corrupt(c, "central record %llu lies past the central "
                              "directory's size (%llu bytes)", (unsigned long long)i,
                           (unsigned long long)e->cd_size);
        if ((r = rd(c, pos, h, CEN_LEN, "central record")) < 0)
            return r;
        if (memcmp(h, "PK\1\2", 4) != 0)
            return corrupt(c, "central record %llu at offset %llu: bad "
                              "signature", (unsigned long long)i,
                           (unsigned long long)pos);
        nlen = le16(h + 28);
        xlen = le16(h + 30);
        clen = le16(h + 32);
        if (end - pos - CEN_LEN < (uint64_t)nlen + xlen + clen)
            return corrupt(c, "central record %llu runs past the central "
                              "directory (offset %llu)", (unsigned long long)i,
                           (unsigned long long)pos);
        if ((r = rd(c, pos + CEN_LEN, c->scratch, nlen + xlen,
                    "central record's name")) < 0)
            return r;
        name = c->scratch;
        if ((r = check_name(c, name, nlen)) < 0)
            return r;
        ze->made_by = (uint16_t)le16(h + 4);
        ze->flags = (uint16_t)le16(h + 8);
        ze->method = (uint16_t)le16(h + 10);
        ze->crc32 = le32(h + 16);
        ze->external_attr = le32(h + 38);
        ze->central_index = (size_t)i;
        if (ze->flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENC | FLAG_MASKED_CD))
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": flags: encrypted entries are "
                            "not supported",
                            show(name, nlen));
        s.csize = le32(h + 20);
        s.usize = le32(h + 24);
        s.disk = le16(h + 34);
        s.offset = le32(h + 42);
        s.had_zip64 = 0;
        if ((r = parse_extra(c, name, nlen, c->scratch + nlen, xlen, 1, &s)) <
            0)
            return r;
        if (s.disk != 0)
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": disk number %u (one disk "
                            "only)",
                            show(name, nlen),
                            (unsigned)s.disk);
        if (ze->method == 0 && s.csize != s.usize)
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": stored, but compressed size "
                            "%llu differs from size %llu",
                            show(name, nlen),
                            (unsigned long long)s.csize,
                            (unsigned long long)s.usize);
        ze->csize = s.csize;
        ze->usize = s.usize;
        ze->local_offset = s.offset;
        ze->type = type_of(ze->made_by, ze->external_attr, name, nlen);
        /* A folder is a name ending in '/', and nothing else is: readers
         * decide by either. A folder carries no bytes. */
        if ((ze->type == CDD_ENTRY_DIR) != (name[nlen - 1] == '/'))
            return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": external attributes: %s, but "
                            "the name %s with '/'",
                            show(name, nlen),
                            ze->type == CDD_ENTRY_DIR ? "a folder"
                                                      : "not a folder",
                            ze->type == CDD_ENTRY_DIR ? "does not end"
                                                      : "ends");
        if (ze->type == CDD_ENTRY_DIR && (ze->usize || ze->csize > 2))
            return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": a folder with %llu bytes of "
                            "data",
                            show(name, nlen),
                            (unsigned long long)ze->usize);
        if ((r = add_name(c, z, name, nlen, &at)) < 0)
            return r;
        name_at[z->n] = at; /* the arena may still move */
        ze->name_len = nlen;
        z->n++;
        pos += CEN_LEN + (uint64_t)nlen + xlen + clen;
    }
    if (pos != end)
        return corrupt(c, "%llu bytes of the central directory after its "
                          "last record", (unsigned long long)(end - pos));
    for (size_t i = 0; i < z->n; i++)
        z->v[i].name = z->names + name_at[i];
    return 0;
}

/* ---- local headers and descriptors --------------------------------------------- */

static int by_offset(const void *a, const void *b)
{
    const struct cdd_zipcd_entry *x = a, *y = b;
    if (x->local_offset != y->local_offset)
        return x->local_offset < y->local_offset ? -1 : 1;
    return x->central_index < y->central_index ? -1 : 1;
}

static int field_differs(struct zctx *c, const struct cdd_zipcd_entry *ze,
                         const char *where, const char *field,
                         unsigned long long got, unsigned long long want)
{
    int hex = strcmp(field, "CRC-32") == 0 || strcmp(field, "flags") == 0;
    return zfail(c, CDD_E_CORRUPT, hex ? "zip: entry \"%s\": %s: %s 0x%llx, the central "
                          "directory says 0x%llx"
                        : "zip: entry \"%s\": %s: %s %llu, the central "
                          "directory says %llu",
                    show((const unsigned char *)ze->name, ze->name_len),
                    where, field, got, want);
}

/* With bit 3, the CRC-32 and sizes follow the data, with or without the
 * optional signature, in 8-byte fields when the local header has zip64
 * sizes. Either form must repeat the central record. */
static int check_descriptor(struct zctx *c, struct cdd_zipcd_entry *ze,
                            uint64_t data_end, uint64_t limit, int wide)
{
    unsigned char d[24]; /* fixed: the largest data descriptor */
    size_t w = wide ? 8 : 4, room;
    const char *where = "data descriptor";
    int r;

    room = limit - data_end < sizeof d ? (size_t)(limit - data_end) : sizeof d;
    if ((r = rd(c, data_end, d, room, "data descriptor")) < 0)
        return r;
    /* Both forms are tried: a descriptor without signature whose CRC-32
     * happens to read "PK\7\10" is still a descriptor. */
    for (int sig = 1; sig >= 0; sig--) {
        size_t o = sig ? 4 : 0, len = o + 4 + 2 * w;
        if (len > room || (sig && memcmp(d, "PK\7\10", 4) != 0))
            continue;
        if (le32(d + o) == ze->crc32 &&
            (wide ? le64(d + o + 4) : le32(d + o + 4)) == ze->csize &&
            (wide ? le64(d + o + 4 + w) : le32(d + o + 4 + w)) == ze->usize) {
            ze->end_offset = data_end + len;
            return 0;
        }
    }
    /* Neither: name the first field that lies, in the form that is there
     * (with its signature when the signature is). */
    {
        size_t o = memcmp(d, "PK\7\10", 4) == 0 && room >= 4 + 4 + 2 * w
                       ? 4 : 0;
        uint64_t cs, us;
        if (o + 4 + 2 * w > room)
            return field_differs(c, ze, where,
                                 "length (bytes before the next entry)",
                                 room, o + 4 + 2 * w);
        cs = wide ? le64(d + o + 4) : le32(d + o + 4);
        us = wide ? le64(d + o + 4 + w) : le32(d + o + 4 + w);
        if (le32(d + o) != ze->crc32)
            return field_differs(c, ze, where, "CRC-32", le32(d + o),
                                 ze->crc32);
        if (cs != ze->csize)
            return field_differs(c, ze, where, "compressed size", cs,
                                 ze->csize);
        return field_differs(c, ze, where, "size", us, ze->usize);
    }
}

static int check_local(struct zctx *c, struct cdd_zipcd_entry *ze,
                       uint64_t limit)
{
    unsigned char h[LOC_LEN]; /* fixed: a local header's fixed part */
    const char *where = "local header";
    struct sizes s;
    uint32_t nlen, xlen, crc;
    uint64_t data_end;
    int r;

    if ((r = rd(c, ze->local_offset, h, LOC_LEN, "local header")) < 0)
        return r;
    if (memcmp(h, "PK\3\4", 4) != 0)
        return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": no local header at offset %llu",
                        show((const unsigned char *)ze->name, ze->name_len),
                        (unsigned long long)ze->local_offset);
    nlen = le16(h + 26);
    xlen = le16(h + 28);
    if ((r = rd(c, ze->local_offset + LOC_LEN, c->scratch, nlen + xlen,
                "local header's name")) < 0)
        return r;
    if (nlen != ze->name_len || memcmp(c->scratch, ze->name, nlen) != 0)
        return zfail(c, CDD_E_UNSAFE, "zip: entry \"%s\": local header: name \"%s\" "
                        "differs from the central directory's",
                        show((const unsigned char *)ze->name, ze->name_len),
                        show(c->scratch, nlen));
    if (le16(h + 6) != ze->flags)
        return field_differs(c, ze, where, "flags", le16(h + 6), ze->flags);
    if (le16(h + 8) != ze->method)
        return field_differs(c, ze, where, "method", le16(h + 8), ze->method);
    crc = le32(h + 14);
    s.csize = le32(h + 18);
    s.usize = le32(h + 22);
    s.offset = 0;
    s.disk = 0;
    s.had_zip64 = 0;
    if ((r = parse_extra(c, c->scratch, nlen, c->scratch + nlen, xlen, 0,
                         &s)) < 0)
        return r;
    ze->data_offset = ze->local_offset + LOC_LEN + nlen + xlen;
    if (ze->data_offset > limit || ze->csize > limit - ze->data_offset)
        return zfail(c, CDD_E_CORRUPT, "zip: entry \"%s\": its %llu bytes of data run into "
                        "the central directory",
                        show((const unsigned char *)ze->name, ze->name_len),
                        (unsigned long long)ze->csize);
    data_end = ze->data_offset + ze->csize;
    if (!(ze->flags & FLAG_DESCRIPTOR)) {
        if (crc != ze->crc32)
            return field_differs(c, ze, where, "CRC-32", crc, ze->crc32);
        if (s.csize != ze->csize)
            return field_differs(c, ze, where, "compressed size", s.csize,
                                 ze->csize);
        if (s.usize != ze->usize)
            return field_differs(c, ze, where, "size", s.usize, ze->usize);
        ze->end_offset = data_end;
        return 0;
    }
    /* Bit 3: the writer did not know them yet; zero is what it writes. */
    if (crc != 0 && crc != ze->crc32)
        return field_differs(c, ze, where, "CRC-32", crc, ze->crc32);
    if (s.csize != 0 && s.csize != ze->csize)
        return field_differs(c, ze, where, "compressed size", s.csize,
                             ze->csize);
    if (s.usize != 0 && s.usize != ze->usize)
        return field_differs(c, ze, where, "size", s.usize, ze->usize);
    return check_descriptor(c, ze, data_end, limit, s.had_zip64);
}

/* Entries [from, to), in file order, must tile the file from *expect on;
 * with to == n, up to cd_off exactly. */
static int check_tiles(struct zctx *c, struct cdd_zipcd *z, size_t from,
                       size_t to, uint64_t *expect_io, uint64_t cd_off)
{
    uint64_t expect = *expect_io;
    int r;
    for (size_t i = from; i < to; i++) {
        struct cdd_zipcd_entry *ze = &z->v[i];
        /* Names are rendered only for a message: this runs per entry. */
#define ZNAME(e) show((const unsigned char *)(e)->name, (e)->name_len)
        if (ze->local_offset != expect) {
            if (i == 0)
                return zfail(c, CDD_E_CORRUPT,
                             "zip: %llu bytes before the first local header "
                             "(entry \"%s\")",
                             (unsigned long long)ze->local_offset, ZNAME(ze));
            if (ze->local_offset < expect)
                return zfail(c, CDD_E_CORRUPT,
                             "zip: entry \"%s\": local header offset %llu "
                             "lies inside entry \"%s\" (overlapping "
                             "entries)",
                             ZNAME(ze), (unsigned long long)ze->local_offset,
                             ZNAME(&z->v[i - 1]));
            return zfail(c, CDD_E_CORRUPT,
                         "zip: %llu bytes between entry \"%s\" and entry "
                         "\"%s\"",
                         (unsigned long long)(ze->local_offset - expect),
                         ZNAME(&z->v[i - 1]), ZNAME(ze));
        }
        if (ze->local_offset >= cd_off)
            return zfail(c, CDD_E_CORRUPT,
                         "zip: entry \"%s\": local header offset %llu lies "
                         "in the central directory",
                         ZNAME(ze), (unsigned long long)ze->local_offset);
#undef ZNAME
        if ((r = check_local(c, ze, cd_off)) < 0)
            return r;
        expect = ze->end_offset;
        *expect_io = expect;
    }
    if (to == z->n && expect != cd_off)
        return zfail(c, CDD_E_CORRUPT, "zip: %llu bytes between the last entry and the "
                        "central directory",
                        (unsigned long long)(cd_off - expect));
    return 0;
}

/* The entries, in file order, must tile [0, cd_off). */
static int check_layout(struct zctx *c, const struct eocd *e,
                        struct cdd_zipcd *z)
{
    uint64_t expect = 0;
    if (z->n > 1)
        qsort(z->v, z->n, sizeof *z->v, by_offset);
    z->cd_off = e->cd_off;
    z->size = c->size;
    if (z->lazy)
        return 0;
    z->checked = z->n;
    return check_tiles(c, z, 0, z->n, &expect, e->cd_off);
}

int cdd_zipcd_check_through(struct cdd_zipcd *z, struct cdd_rfile *f,
                            const char *path, size_t upto)
{
    struct zctx c = {f, path, z->size, NULL};
    int r;
    if (upto > z->n)
        upto = z->n;
    if (!z->lazy || upto <= z->checked)
        return 0;
    if (!(c.scratch = malloc(2u * 65535u + 1u)))
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    r = check_tiles(&c, z, z->checked, upto, &z->expect, z->cd_off);
    free(c.scratch);
    if (!r)
        z->checked = upto;
    return r;
}

/* ---- interface ------------------------------------------------------------------- */

int cdd_zipcd_read(struct cdd_rfile *f, const char *path, uint64_t size,
                   struct cdd_zipcd **out)
{
    struct zctx c = {f, path, size, NULL};
    struct cdd_zipcd *z = NULL;
    size_t *name_at = NULL; /* each record's name in the arena */
    struct eocd e;
    int r;

    *out = NULL;
    memset(&e, 0, sizeof e);
    if (!(z = calloc(1, sizeof *z)) ||
        !(c.scratch = malloc(2u * 65535u + 1u))) {
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        goto out;
    }
    z->lazy = cdd_rfile_feed(f) != NULL;
    if ((r = read_end(&c, &e)) < 0)
        goto out;
    if (e.count && !(name_at = malloc((size_t)e.count * sizeof *name_at))) {
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        goto out;
    }
    if ((r = read_central(&c, &e, z, name_at)) < 0 ||
        (r = check_layout(&c, &e, z)) < 0)
        goto out;
    *out = z;
    z = NULL;
out:
    free(c.scratch);
    free(name_at);
    cdd_zipcd_free(z);
    return r;
}

size_t cdd_zipcd_count(const struct cdd_zipcd *z)
{
    return z ? z->n : 0;
}

const struct cdd_zipcd_entry *cdd_zipcd_get(const struct cdd_zipcd *z,
                                            size_t i)
{
    return z && i < z->n ? &z->v[i] : NULL;
}

int cdd_zipcd_dup(const struct cdd_zipcd *z, struct cdd_zipcd **out)
{
    struct cdd_zipcd *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if ((z->n && !(c->v = malloc(z->n * sizeof *c->v))) ||
        (z->names_len && !(c->names = malloc(z->names_len)))) {
        cdd_zipcd_free(c);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    if (z->n)
        memcpy(c->v, z->v, z->n * sizeof *c->v);
    if (z->names_len)
        memcpy(c->names, z->names, z->names_len);
    c->n = z->n;
    c->names_len = c->names_cap = z->names_len;
    c->lazy = z->lazy;
    c->checked = z->checked;
    c->expect = z->expect;
    c->cd_off = z->cd_off;
    c->size = z->size;
    for (size_t i = 0; i < c->n; i++)
        c->v[i].name = c->names + (z->v[i].name - z->names);
    *out = c;
    return 0;
}

void cdd_zipcd_free(struct cdd_zipcd *z)
{
    if (!z)
        return;
    free(z->v);
    free(z->names);
    free(z);
}
