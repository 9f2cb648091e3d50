/* The zip structure check (zipcd.c): a small zip writer builds each
 * malformed variant at test time -- a good archive with one thing changed
 * -- and the check must refuse it with the right code, naming the entry and
 * the field; the good ones (descriptors, zip64, Unicode Path, comments)
 * must pass, and what libarchive then yields must match the records. */
#include "fixture.h"
#include "test.h"

#include <stdint.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "zipcd.h"
#include "cdd/sys.h"

/* ---- scratch ----------------------------------------------------------------- */

/* A path in the scratch root; the first use sets the locale as the CLI does. */
static const char *tmp_path(const char *name)
{
    static int init;
    if (!init++)
        CHECK_INT(cdd_archive_init(), 0);
    return fx_tmp(name);
}

/* ---- a zip writer that can lie -------------------------------------------- */

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
    if (!n)
        return;
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 1024;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            exit(2);
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void put16(struct buf *b, uint32_t v)
{
    unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    put(b, x, 2);
}

static void put32(struct buf *b, uint32_t v)
{
    put16(b, v & 0xFFFF);
    put16(b, v >> 16);
}

static void put64(struct buf *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b, (uint32_t)(v >> 32));
}

static uint32_t crc32_of(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* One member, stored. Everything not set is what an honest writer puts. */
struct zent {
    const char *name;
    size_t nlen;              /* 0: strlen(name) */
    const char *lname;        /* local header's name; NULL: name */
    size_t lnlen;
    const char *data;
    uint16_t made_by;         /* 0: 20 (MS-DOS, zip 2.0) */
    uint32_t ext;             /* external attributes */
    uint16_t flags;
    uint16_t lflags_xor, lmethod_xor;
    uint32_t lcrc_xor, lsize_add;
    int desc;                 /* bit 3: 1 with signature, 2 without */
    uint32_t desc_crc_xor, desc_size_add;
    const char *upath;        /* Unicode Path field (central and local) */
    uint32_t upath_crc_xor;
    int zip64;                /* sizes and offset through zip64 fields */
    int point_at;             /* > 0: no local header; the central record
                                 points at entry point_at (1-based) */
};

struct zopt {
    const char *prefix;       /* junk before the first local header */
    int adjust;               /* offsets include the prefix (SFX style) */
    const char *suffix;       /* junk after the end record */
    const char *comment;      /* the end record's comment */
    int comment_len_add;      /* the declared comment length lies */
    int count_add;            /* the declared entry count lies */
    int cd_off_add;           /* the declared directory offset lies */
    int eocd64;               /* zip64 end record and locator */
    int eocd64_count_add;     /* ... whose count disagrees */
    const char *between;      /* junk between the entries and the directory */
    int reverse_cd;           /* central records in the opposite order */
};

static size_t nlen_of(const struct zent *e)
{
    return e->nlen ? e->nlen : strlen(e->name);
}

static void extra_upath(struct buf *b, const struct zent *e)
{
    size_t ul = strlen(e->upath);
    put16(b, 0x7075);
    put16(b, (uint32_t)(5 + ul));
    put(b, "\1", 1);
    put32(b, crc32_of(e->name, nlen_of(e)) ^ e->upath_crc_xor);
    put(b, e->upath, ul);
}

static void write_zip(const char *file, const struct zent *ents, size_t n,
                      const struct zopt *o)
{
    static const struct zopt none;
    struct buf b = {0}, cd = {0};
    uint64_t off[128]; /* fixed: entries of a test zip (test_names_bound: 65) */
    size_t base = 0;
    FILE *f;

    if (n > sizeof off / sizeof off[0])
        exit(2);
    if (!o)
        o = &none;
    if (o->prefix) {
        put(&b, o->prefix, strlen(o->prefix));
        base = o->adjust ? 0 : b.n;
    }
    for (size_t i = 0; i < n; i++) {
        const struct zent *e = &ents[i];
        size_t len = strlen(e->data), nl = nlen_of(e);
        const char *ln = e->lname ? e->lname : e->name;
        size_t lnl = !e->lname ? nl : e->lnlen ? e->lnlen : strlen(e->lname);
        uint32_t crc = crc32_of(e->data, len);
        uint16_t flags = e->flags | (e->desc ? 8 : 0);
        struct buf x = {0};
        off[i] = b.n - base;
        if (e->point_at)
            continue;
        if (e->zip64) {
            put16(&x, 1);
            put16(&x, 16);
            put64(&x, e->desc ? 0 : len);
            put64(&x, e->desc ? 0 : len);
        }
        if (e->upath)
            extra_upath(&x, e);
        put32(&b, 0x04034b50);
        put16(&b, e->zip64 ? 45 : 20);
        put16(&b, flags ^ e->lflags_xor);
        put16(&b, 0 ^ e->lmethod_xor);
        put32(&b, 0);
        put32(&b, e->desc ? 0 : crc ^ e->lcrc_xor);
        put32(&b, e->zip64 ? 0xFFFFFFFFu : e->desc ? 0 : (uint32_t)len + e->lsize_add);
        put32(&b, e->zip64 ? 0xFFFFFFFFu : e->desc ? 0 : (uint32_t)len + e->lsize_add);
        put16(&b, (uint32_t)lnl);
        put16(&b, (uint32_t)x.n);
        put(&b, ln, lnl);
        put(&b, x.p, x.n);
        put(&b, e->data, len);
        if (e->desc) {
            if (e->desc == 1)
                put32(&b, 0x08074b50);
            put32(&b, crc ^ e->desc_crc_xor);
            if (e->zip64) {
                put64(&b, len + e->desc_size_add);
                put64(&b, len + e->desc_size_add);
            } else {
                put32(&b, (uint32_t)len + e->desc_size_add);
                put32(&b, (uint32_t)len + e->desc_size_add);
            }
        }
        free(x.p);
    }
    if (o->between)
        put(&b, o->between, strlen(o->between));
    for (size_t k = 0; k < n; k++) {
        size_t i = o->reverse_cd ? n - 1 - k : k;
        const struct zent *e = &ents[i];
        const struct zent *d = e->point_at ? &ents[e->point_at - 1] : e;
        size_t len = strlen(d->data), nl = nlen_of(e);
        uint64_t lo = off[e->point_at ? (size_t)e->point_at - 1 : i];
        struct buf x = {0};
        if (e->zip64) {
            put16(&x, 1);
            put16(&x, 24);
            put64(&x, len);
            put64(&x, len);
            put64(&x, lo);
        }
        if (e->upath)
            extra_upath(&x, e);
        put32(&cd, 0x02014b50);
        put16(&cd, e->made_by ? e->made_by : 20);
        put16(&cd, e->zip64 ? 45 : 20);
        put16(&cd, d->flags | (d->desc ? 8 : 0));
        put16(&cd, 0);
        put32(&cd, 0);
        put32(&cd, crc32_of(d->data, len));
        put32(&cd, e->zip64 ? 0xFFFFFFFFu : (uint32_t)len);
        put32(&cd, e->zip64 ? 0xFFFFFFFFu : (uint32_t)len);
        put16(&cd, (uint32_t)nl);
        put16(&cd, (uint32_t)x.n);
        put16(&cd, 0);
        put16(&cd, 0);
        put16(&cd, 0);
        put32(&cd, e->ext);
        put32(&cd, e->zip64 ? 0xFFFFFFFFu : (uint32_t)lo);
        put(&cd, e->name, nl);
        put(&cd, x.p, x.n);
        free(x.p);
    }
    {
        uint64_t cd_off = b.n - base, cd_size = cd.n;
        uint32_t clen = o->comment ? (uint32_t)strlen(o->comment) : 0;
        put(&b, cd.p, cd.n);
        if (o->eocd64) {
            uint64_t z = b.n - base;
            put32(&b, 0x06064b50);
            put64(&b, 44);
            put16(&b, 45);
            put16(&b, 45);
            put32(&b, 0);
            put32(&b, 0);
            put64(&b, n + o->eocd64_count_add);
            put64(&b, n + o->eocd64_count_add);
            put64(&b, cd_size);
            put64(&b, cd_off + o->cd_off_add);
            put32(&b, 0x07064b50);
            put32(&b, 0);
            put64(&b, z);
            put32(&b, 1);
        }
        put32(&b, 0x06054b50);
        put16(&b, 0);
        put16(&b, 0);
        put16(&b, o->eocd64 ? 0xFFFF : (uint32_t)(n + o->count_add));
        put16(&b, o->eocd64 ? 0xFFFF : (uint32_t)(n + o->count_add));
        put32(&b, (uint32_t)cd_size);
        put32(&b, o->eocd64 ? 0xFFFFFFFFu : (uint32_t)(cd_off + o->cd_off_add));
        put16(&b, clen + o->comment_len_add);
        if (o->comment)
            put(&b, o->comment, clen);
    }
    if (o->suffix)
        put(&b, o->suffix, strlen(o->suffix));
    f = fopen(file, "wb");
    if (!f || fwrite(b.p, 1, b.n, f) != b.n || fclose(f) != 0)
        exit(2);
    free(b.p);
    free(cd.p);
}

/* ---- running the check --------------------------------------------------------- */

/* Read the zip written to name; returns the code, *z (when wanted) the
 * records. */
static int zread(const char *name, struct cdd_zipcd **z)
{
    struct cdd_rfile *f = NULL;
    struct cdd_zipcd *tmp = NULL;
    uint64_t size = 0;
    int r = cdd_fs_open_read(tmp_path(name), &f);
    if (!r)
        r = cdd_rfile_size(f, &size);
    if (!r)
        r = cdd_zipcd_read(f, tmp_path(name), size, &tmp);
    cdd_rfile_close(f);
    if (r)
        fprintf(stderr, "    %s -> %s: %s\n", name, cdd_err_name(r),
                cdd_last_error()->msg);
    if (z)
        *z = tmp;
    else
        cdd_zipcd_free(tmp);
    return r;
}

/* The zip is refused with code, and the message holds every word given. */
static void refused(const char *name, int code, const char *w1,
                    const char *w2)
{
    int r = zread(name, NULL);
    CHECK_MSG(r == code, "%s: %s, expected %s", name, cdd_err_name(r),
              cdd_err_name(code));
    if (w1)
        CHECK_MSG(strstr(cdd_last_error()->msg, w1) != NULL, "%s: no \"%s\"",
                  name, w1);
    if (w2)
        CHECK_MSG(strstr(cdd_last_error()->msg, w2) != NULL, "%s: no \"%s\"",
                  name, w2);
}

#define A "top/include/a.h"
#define B "top/include/b.h"
#define C "top/lib/c.lib"

/* ---- tests ------------------------------------------------------------------------ */

static void test_good_zip(void)
{
    const struct zent e[] = {
        {.name = "top/", .data = "", .ext = 0x10},
        {.name = A, .data = "alpha\n"},
        {.name = B, .data = "bravo bravo\n", .desc = 1},
        {.name = C, .data = "charlie", .desc = 2},
    };
    const struct zopt o = {.comment = "made by the test"};
    struct cdd_zipcd *z = NULL;
    write_zip(tmp_path("good.zip"), e, 4, &o);
    CHECK_INT(zread("good.zip", &z), 0);
    CHECK_INT(cdd_zipcd_count(z), 4);
    for (size_t i = 0; i < cdd_zipcd_count(z); i++) {
        const struct cdd_zipcd_entry *ze = cdd_zipcd_get(z, i);
        CHECK_STR(ze->name, e[i].name);
        CHECK_INT(ze->usize, strlen(e[i].data));
        CHECK_INT(ze->central_index, i);
        CHECK_INT(ze->type, i == 0 ? CDD_ENTRY_DIR : CDD_ENTRY_FILE);
        CHECK_INT(ze->crc32, crc32_of(e[i].data, strlen(e[i].data)));
        if (i + 1 < cdd_zipcd_count(z))
            CHECK_INT(ze->end_offset, cdd_zipcd_get(z, i + 1)->local_offset);
    }
    CHECK(cdd_zipcd_get(z, 4) == NULL);
    {
        /* A worker's copy: the same records, its own names. */
        struct cdd_zipcd *d = NULL;
        CHECK_INT(z ? cdd_zipcd_dup(z, &d) : -1, 0);
        CHECK_INT(cdd_zipcd_count(d), 4);
        for (size_t i = 0; d && i < 4; i++) {
            CHECK_STR(cdd_zipcd_get(d, i)->name, e[i].name);
            CHECK(cdd_zipcd_get(d, i)->name != cdd_zipcd_get(z, i)->name);
            CHECK_INT(cdd_zipcd_get(d, i)->local_offset,
                      cdd_zipcd_get(z, i)->local_offset);
        }
        cdd_zipcd_free(z);
        z = NULL;
        CHECK_STR(d ? cdd_zipcd_get(d, 3)->name : NULL, C);
        cdd_zipcd_free(d);
    }
    cdd_zipcd_free(z);
}

static void test_good_zip64_and_unicode_path(void)
{
    const struct zent e[] = {
        {.name = A, .data = "alpha\n", .zip64 = 1},
        {.name = B, .data = "bravo\n", .zip64 = 1, .desc = 1},
        {.name = "top/include/caf\xc3\xa9.h", .data = "cafe",
         .upath = "top/include/caf\xc3\xa9.h"},
    };
    const struct zopt o = {.eocd64 = 1};
    write_zip(tmp_path("zip64.zip"), e, 3, &o);
    CHECK_INT(zread("zip64.zip", NULL), 0);
}

/* Central records in another order than the local headers: the records
 * come in file order, which is the order libarchive yields them in. */
static void test_central_order_differs(void)
{
    const struct zent e[] = {
        {.name = A, .data = "alpha\n"},
        {.name = B, .data = "bravo\n"},
        {.name = C, .data = "charlie\n"},
    };
    const struct zopt o = {.reverse_cd = 1};
    struct cdd_zipcd *z = NULL;
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry ae;
    write_zip(tmp_path("reversed.zip"), e, 3, &o);
    CHECK_INT(zread("reversed.zip", &z), 0);
    for (size_t i = 0; i < 3 && z; i++) {
        CHECK_STR(cdd_zipcd_get(z, i)->name, e[i].name);
        CHECK_INT(cdd_zipcd_get(z, i)->central_index, 2 - i);
    }
    cdd_zipcd_free(z);
    CHECK_INT(cdd_archive_open(tmp_path("reversed.zip"), &a), 0);
    for (size_t i = 0; i < 3 && a; i++) {
        CHECK_INT(cdd_archive_next(a, &ae), 0);
        CHECK_STR(ae.path, e[i].name);
    }
    CHECK_INT(a ? cdd_archive_next(a, &ae) : -1, 1);
    cdd_archive_close(a);
}

/* Through libarchive: the entries it yields match the records; a FIFO's
 * Unix mode makes it CDD_ENTRY_OTHER, whatever libarchive says. */
static void test_archive_matches_records(void)
{
    const struct zent e[] = {
        {.name = "top/", .data = "", .ext = 0x10},
        {.name = A, .data = "alpha\n"},
        {.name = B, .data = "", .made_by = 0x0314, .ext = 0010644u << 16},
        {.name = "top/lib/l.so", .data = "c.lib", .made_by = 0x0314,
         .ext = 0120777u << 16},
    };
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry ae;
    write_zip(tmp_path("match.zip"), e, 4, NULL);
    CHECK_INT(cdd_archive_open(tmp_path("match.zip"), &a), 0);
    if (!a)
        return;
    CHECK_INT(cdd_zipcd_count(cdd_archive_zipcd(a)), 4);
    CHECK_INT(cdd_archive_next(a, &ae), 0);
    CHECK_INT(ae.type, CDD_ENTRY_DIR);
    CHECK_INT(cdd_archive_next(a, &ae), 0);
    CHECK_STR(ae.path, A);
    CHECK_INT(ae.type, CDD_ENTRY_FILE);
    CHECK_INT(cdd_archive_next(a, &ae), 0);
    CHECK_STR(ae.path, B);
    CHECK_INT(ae.type, CDD_ENTRY_OTHER);
    CHECK_INT(cdd_archive_next(a, &ae), 0);
    CHECK_INT(ae.type, CDD_ENTRY_SYMLINK);
    CHECK_STR(ae.link_target, "c.lib");
    CHECK_INT(cdd_archive_next(a, &ae), 1);
    cdd_archive_close(a);
}

static void test_local_name_differs(void)
{
    /* The classic: unzip and Explorer write the central name, libarchive
     * took the local one. */
    const struct zent e[] = {
        {.name = A, .data = "alpha\n"},
        {.name = "top/bin/../../../outside/evil.dll", .lname = "top/bin/x.dll",
         .data = "MZ"},
    };
    write_zip(tmp_path("lname.zip"), e, 2, NULL);
    refused("lname.zip", CDD_E_UNSAFE, "outside/evil.dll", "local header");
}

static void test_overlapping_entries(void)
{
    const struct zent same[] = {
        {.name = A, .data = "alpha\n"},
        {.name = "top/bin/evil.dll", .data = "", .point_at = 1},
    };
    write_zip(tmp_path("overlap.zip"), same, 2, NULL);
    refused("overlap.zip", CDD_E_CORRUPT, "overlapping", "evil.dll");
}

static void test_unicode_path_disagrees(void)
{
    const struct zent other[] = {
        {.name = A, .data = "alpha\n", .upath = "top/../../outside/a.h"},
    };
    const struct zent badcrc[] = {
        {.name = A, .data = "alpha\n", .upath = A, .upath_crc_xor = 1},
    };
    write_zip(tmp_path("upath.zip"), other, 1, NULL);
    refused("upath.zip", CDD_E_UNSAFE, "Unicode Path", "outside/a.h");
    write_zip(tmp_path("upath-crc.zip"), badcrc, 1, NULL);
    refused("upath-crc.zip", CDD_E_UNSAFE, "Unicode Path", "CRC-32");
}

static void test_lying_descriptors(void)
{
    const struct zent crc[] = {
        {.name = A, .data = "alpha\n", .desc = 1, .desc_crc_xor = 0x1234},
    };
    const struct zent size[] = {
        {.name = A, .data = "alpha\n", .desc = 2, .desc_size_add = 3},
    };
    const struct zent size64[] = {
        {.name = A, .data = "alpha\n", .desc = 1, .zip64 = 1,
         .desc_size_add = 1},
    };
    write_zip(tmp_path("desc-crc.zip"), crc, 1, NULL);
    refused("desc-crc.zip", CDD_E_CORRUPT, "data descriptor", "CRC-32");
    write_zip(tmp_path("desc-size.zip"), size, 1, NULL);
    refused("desc-size.zip", CDD_E_CORRUPT, "data descriptor", "size");
    write_zip(tmp_path("desc-size64.zip"), size64, 1, NULL);
    refused("desc-size64.zip", CDD_E_CORRUPT, "data descriptor", "size");
}

static void test_local_fields_differ(void)
{
    struct zent e = {.name = A, .data = "alpha\n"};
    e.lcrc_xor = 0x10;
    write_zip(tmp_path("lcrc.zip"), &e, 1, NULL);
    refused("lcrc.zip", CDD_E_CORRUPT, "local header", "CRC-32");
    e.lcrc_xor = 0;
    e.lsize_add = 1;
    write_zip(tmp_path("lsize.zip"), &e, 1, NULL);
    refused("lsize.zip", CDD_E_CORRUPT, "local header", "size");
    e.lsize_add = 0;
    e.lflags_xor = 0x0800;
    write_zip(tmp_path("lflags.zip"), &e, 1, NULL);
    refused("lflags.zip", CDD_E_CORRUPT, "local header", "flags");
    e.lflags_xor = 0;
    e.lmethod_xor = 8;
    write_zip(tmp_path("lmethod.zip"), &e, 1, NULL);
    refused("lmethod.zip", CDD_E_CORRUPT, "local header", "method");
}

static void test_junk_around(void)
{
    const struct zent e[] = {{.name = A, .data = "alpha\n"}};
    struct zopt o = {.prefix = "#!/bin/sh\nexit 0\n"};
    write_zip(tmp_path("junk-before.zip"), e, 1, &o);
    refused("junk-before.zip", CDD_E_CORRUPT, NULL, NULL);
    o.adjust = 1; /* self-extractor style: offsets count the stub */
    write_zip(tmp_path("junk-before-adj.zip"), e, 1, &o);
    refused("junk-before-adj.zip", CDD_E_CORRUPT, "before the first local",
            NULL);
    memset(&o, 0, sizeof o);
    o.suffix = "trailing junk";
    write_zip(tmp_path("junk-after.zip"), e, 1, &o);
    refused("junk-after.zip", CDD_E_CORRUPT, "after the end of central", NULL);
    o.suffix = NULL;
    o.between = "hidden bytes";
    write_zip(tmp_path("junk-between.zip"), e, 1, &o);
    refused("junk-between.zip", CDD_E_CORRUPT, "between the last entry", NULL);
    memset(&o, 0, sizeof o);
    o.comment = "a comment";
    o.comment_len_add = -2;
    write_zip(tmp_path("comment-short.zip"), e, 1, &o);
    refused("comment-short.zip", CDD_E_CORRUPT, "after the end of central",
            NULL);
    o.comment_len_add = 5;
    write_zip(tmp_path("comment-long.zip"), e, 1, &o);
    refused("comment-long.zip", CDD_E_CORRUPT, "comment", NULL);
}

static void test_directory_fields_lie(void)
{
    const struct zent e[] = {{.name = A, .data = "alpha\n"},
                             {.name = B, .data = "bravo\n"}};
    struct zopt o = {.count_add = -1};
    write_zip(tmp_path("count.zip"), e, 2, &o);
    refused("count.zip", CDD_E_CORRUPT, NULL, NULL);
    o.count_add = 1;
    write_zip(tmp_path("count2.zip"), e, 2, &o);
    refused("count2.zip", CDD_E_CORRUPT, NULL, NULL);
    memset(&o, 0, sizeof o);
    o.cd_off_add = -4;
    write_zip(tmp_path("cdoff.zip"), e, 2, &o);
    refused("cdoff.zip", CDD_E_CORRUPT, "central directory", NULL);
    /* More records than any archive may hold: refused before a byte of
     * the directory is read or a record allocated. */
    memset(&o, 0, sizeof o);
    o.eocd64 = 1;
    o.eocd64_count_add = (int)CDD_ZIPCD_MAX_RECORDS;
    write_zip(tmp_path("many.zip"), e, 2, &o);
    refused("many.zip", CDD_E_ARCHIVE, "more than", NULL);
    memset(&o, 0, sizeof o);
    o.eocd64 = 1;
    o.eocd64_count_add = 1;
    write_zip(tmp_path("eocd64.zip"), e, 2, &o);
    refused("eocd64.zip", CDD_E_CORRUPT, NULL, NULL);
}

static void test_names(void)
{
    const struct zent nul[] = {
        {.name = "top/include/a.h\0/../../x", .nlen = 24,
         .lname = "top/include/a.h\0/../../x", .lnlen = 24, .data = "a"},
    };
    const struct zent ctl[] = {{.name = "top/include/a\x1b[2J.h", .data = "a"}};
    const struct zent del[] = {{.name = "top/include/a\x7f.h", .data = "a"}};
    write_zip(tmp_path("nul-name.zip"), nul, 1, NULL);
    refused("nul-name.zip", CDD_E_UNSAFE, "NUL", "a.h\xe2\x90\x80/");
    write_zip(tmp_path("ctl.zip"), ctl, 1, NULL);
    refused("ctl.zip", CDD_E_UNSAFE, "control character", NULL);
    write_zip(tmp_path("del.zip"), del, 1, NULL);
    refused("del.zip", CDD_E_UNSAFE, "control character 0x7f", NULL);
}

/* Names of more bytes in all than an archive may hold are refused with the
 * bound named (issue 22: the bound is the names' container's), and up to
 * it taken. Names of 65,000 bytes: 64 of them fit, 65 do not. */
static void test_names_bound(void)
{
    enum { NLEN = 65000 };
    static char names[65][NLEN + 1];
    struct zent e[65];
    memset(e, 0, sizeof e);
    for (int i = 0; i < 65; i++) {
        char *n = names[i];
        memset(n, 'x', NLEN);
        for (size_t k = 204; k < NLEN; k += 200)
            n[k] = '/';
        memcpy(n, "top/", 4);
        snprintf(n + NLEN - 6, 7, "/a%02d.h", i);
        e[i].name = n;
        e[i].data = "a";
    }
    write_zip(tmp_path("names-max.zip"), e, 64, NULL);
    CHECK_INT(zread("names-max.zip", NULL), 0);
    write_zip(tmp_path("names-over.zip"), e, 65, NULL);
    refused("names-over.zip", CDD_E_TOOLONG,
            "zip: more than 4194304 bytes of entry names in all", NULL);
    CHECK(strstr(cdd_last_error()->path, "names-over.zip") != NULL);
}

static void test_encrypted_and_types(void)
{
    const struct zent enc[] = {{.name = A, .data = "alpha\n", .flags = 1}};
    const struct zent dir[] = {{.name = "top/d", .data = "", .ext = 0x10}};
    const struct zent notdir[] = {
        {.name = "top/d/", .data = "", .made_by = 0x0314,
         .ext = 0100644u << 16}};
    write_zip(tmp_path("enc.zip"), enc, 1, NULL);
    refused("enc.zip", CDD_E_CORRUPT, "encrypted", NULL);
    write_zip(tmp_path("dir.zip"), dir, 1, NULL);
    refused("dir.zip", CDD_E_UNSAFE, "a folder", NULL);
    write_zip(tmp_path("notdir.zip"), notdir, 1, NULL);
    refused("notdir.zip", CDD_E_UNSAFE, "not a folder", NULL);
}

/* A decomposed name: libarchive composes it (NFC), other readers keep the
 * bytes; the two names differ, so it is refused. */
static void test_nfd_name_refused(void)
{
    const struct zent e[] = {{.name = "top/include/cafe\xcc\x81.h",
                              .data = "x", .flags = 0x0800}};
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry ae;
    int r;
    write_zip(tmp_path("nfd.zip"), e, 1, NULL);
    CHECK_INT(zread("nfd.zip", NULL), 0);
    CHECK_INT(cdd_archive_open(tmp_path("nfd.zip"), &a), 0);
    r = a ? cdd_archive_next(a, &ae) : -1;
    CHECK_MSG(r == CDD_E_UNSAFE, "%d: %s", r, cdd_last_error()->msg);
    cdd_archive_close(a);
}

/* Not a zip: a tar.xz whose last bytes hold an end-record signature is
 * still read as a tar. */
static void test_sniff(void)
{
    static const unsigned char xz[] = {0xFD, '7', 'z', 'X', 'Z', 0, 'P', 'K',
                                       5,    6,   0,   0,   0,   0, 0,   0,
                                       0,    0,   0,   0,   0,   0, 0,   0,
                                       0,    0,   0,   0};
    const struct zent e[] = {{.name = A, .data = "alpha\n"}};
    const struct zopt o = {.prefix = "MZ stub"};
    struct cdd_rfile *f = NULL;
    uint64_t size = 0;
    int is_zip = -1;
    FILE *out = fopen(tmp_path("sig.tar.xz"), "wb");
    CHECK(out && fwrite(xz, 1, sizeof xz, out) == sizeof xz);
    CHECK(out && fclose(out) == 0);
    CHECK_INT(cdd_fs_open_read(tmp_path("sig.tar.xz"), &f), 0);
    CHECK_INT(cdd_rfile_size(f, &size), 0);
    CHECK_INT(cdd_zipcd_sniff(f, "sig.tar.xz", size, &is_zip), 0);
    CHECK_INT(is_zip, 0);
    cdd_rfile_close(f);
    write_zip(tmp_path("stub.zip"), e, 1, &o);
    CHECK_INT(cdd_fs_open_read(tmp_path("stub.zip"), &f), 0);
    CHECK_INT(cdd_rfile_size(f, &size), 0);
    CHECK_INT(cdd_zipcd_sniff(f, "stub.zip", size, &is_zip), 0);
    CHECK_INT(is_zip, 1);
    cdd_rfile_close(f);
}

/* Every byte of a good zip changed, one at a time, and runs of random
 * changes (a fixed seed): the check either accepts or refuses with one of
 * its codes, and never reads outside what it holds (run under ASan to see
 * that). */
static void test_mutations(void)
{
    const struct zent e[] = {
        {.name = "top/", .data = "", .ext = 0x10},
        {.name = A, .data = "alpha\n", .upath = A},
        {.name = B, .data = "bravo bravo\n", .desc = 1, .zip64 = 1},
        {.name = C, .data = "charlie", .desc = 2},
    };
    const struct zopt o = {.comment = "c", .eocd64 = 1};
    unsigned char *good = NULL, *bad = NULL;
    long n = 0;
    uint32_t seed = 12345;
    FILE *f;
    write_zip(tmp_path("mut-good.zip"), e, 4, &o);
    f = fopen(tmp_path("mut-good.zip"), "rb");
    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 ||
        fseek(f, 0, SEEK_SET) || !(good = malloc((size_t)n)) ||
        !(bad = malloc((size_t)n)) || fread(good, 1, (size_t)n, f) != (size_t)n) {
        CHECK(0);
        goto out;
    }
    for (long i = 0; i < n + 300; i++) {
        int r;
        memcpy(bad, good, (size_t)n);
        if (i < n) {
            bad[i] ^= 0xFF;
        } else {
            for (int k = 0; k < 4; k++) {
                seed = seed * 1103515245u + 12345u;
                bad[(seed >> 8) % (uint32_t)n] = (unsigned char)(seed >> 24);
            }
        }
        {
            FILE *w = fopen(tmp_path("mut.zip"), "wb");
            CHECK(w && fwrite(bad, 1, (size_t)n, w) == (size_t)n);
            CHECK(w && fclose(w) == 0);
        }
        {
            struct cdd_rfile *rf = NULL;
            struct cdd_zipcd *z = NULL;
            uint64_t size = 0;
            r = cdd_fs_open_read(tmp_path("mut.zip"), &rf);
            if (!r)
                r = cdd_rfile_size(rf, &size);
            if (!r)
                r = cdd_zipcd_read(rf, "mut.zip", size, &z);
            cdd_rfile_close(rf);
            cdd_zipcd_free(z);
        }
        CHECK_MSG(r == 0 || r == CDD_E_CORRUPT || r == CDD_E_UNSAFE ||
                      r == CDD_E_ARCHIVE,
                  "mutation %ld: %s", i, cdd_err_name(r));
    }
out:
    if (f)
        fclose(f);
    free(good);
    free(bad);
}

TEST_MAIN(TEST(test_good_zip), TEST(test_mutations), TEST(test_good_zip64_and_unicode_path),
          TEST(test_archive_matches_records), TEST(test_central_order_differs),
          TEST(test_local_name_differs),
          TEST(test_overlapping_entries), TEST(test_unicode_path_disagrees),
          TEST(test_lying_descriptors), TEST(test_local_fields_differ),
          TEST(test_junk_around), TEST(test_directory_fields_lie),
          TEST(test_names), TEST(test_names_bound), TEST(test_encrypted_and_types),
          TEST(test_nfd_name_refused), TEST(test_sniff))
