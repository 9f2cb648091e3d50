/* Reading cuDNN archives with libarchive: the only file that touches it.
 *
 * What is enabled is deliberately narrow: zip through the seekable reader
 * (it trusts the central directory, the table every other zip tool uses,
 * rather than local headers that can disagree with it) and tar (ustar, pax,
 * GNU), compressed with gzip, bzip2, xz or zstd when libarchive has them
 * built in. Filters libarchive would run as an external program are never
 * registered: an installer must not spawn helpers on untrusted input.
 *
 * Every libarchive failure is CDD_E_CORRUPT with libarchive's own words, and
 * after a failure the reader refuses further calls, so a truncated or damaged
 * archive can never look like a short, successful one. The exception is a
 * read of the file that failed: libarchive reads through our handle (src_*),
 * so such a failure is known for what it is (the disk's, exit 4) rather than
 * taken for the short stream libarchive then sees ("truncated input").
 *
 * Entry names come out as the same UTF-8 on every platform: libarchive is
 * told that names without a declared character set are UTF-8, and the name
 * is taken from its wide form (entry_utf8).
 *
 * What libarchive does not check is checked around it, on the raw bytes: a
 * zip's structure by zipcd.c before libarchive opens it, then each entry
 * libarchive yields against the validated central record (zip_match); a
 * tar's headers by tarscan.c, fed the decompressed stream on its way to the
 * tar reader (tar_feed).
 *
 * A tar.xz whose streams hold more than one xz block is decoded by several
 * threads (xzmt.c: liblzma's threaded decoder, bounded by the caller's jobs
 * and a memory limit) instead of libarchive's xz filter, and the decoded tar
 * goes the same way, through the header check to the tar reader (xz_feed).
 * A single-block stream, and every other compression, keeps the raw reader.
 *
 * Deflated zip members are not inflated by libarchive but by inflate.c
 * (inflate_int.h: ISA-L or zlib), from the validated byte range of their
 * central record, through the handle libarchive reads through too (ar->zf,
 * by pread at each reader's own offset); libarchive's seekable reader then
 * skips their data. */
#include "cdd/archive.h"

#include <errno.h>
#include <locale.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <archive.h>
#include <archive_entry.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "tarscan.h"
#include "inflate_int.h"
#include "xzmt_int.h"
#include "zipcd.h"
#include "cdd/compat.h"

/* libarchive reads the file in blocks of this size (at least 10240). Large
 * blocks mean fewer system calls on archives of hundreds of MB. */
#define READ_BLOCK (256 * 1024)

/* A growing buffer for one UTF-8 string. */
struct ubuf {
    char *s;
    size_t cap;
};

struct cdd_archive {
    struct archive *a;
    struct archive_entry *cur; /* owned by a; valid until the next header */
    const char *cur_path;      /* cur's name as UTF-8 (name.s or libarchive's),
                                  NULL when it has none */
    struct ubuf name, link;    /* UTF-8 forms of cur's name and link target */
    char *path;                /* the archive file, for messages */
    uint64_t file_size;
    int failed;                /* a libarchive call failed: refuse more */
    struct cdd_zipcd *zip;     /* a zip's validated records, else NULL */
    size_t zip_next;           /* the record the next entry must match */
    struct cdd_rfile *zf;      /* zip: the file, for inflate.c's reads */
    const struct cdd_zipcd_entry *deflated; /* the current entry, when we
                                  inflate it ourselves (inflate_int.h) */
    struct cdd_inflate *inf;   /* ... its inflater, from the first read */
    uint64_t inflated_in;      /* compressed bytes earlier inflaters read */
    struct archive *raw;       /* tar: the decompressor feeding a */
    struct cdd_tarscan *scan;  /* tar: the raw header check */
    int scan_err;              /* the check (or xz) refused: its error */
    struct cdd_xzmt *xz;       /* tar.xz of several blocks: the threaded
                                  decoder feeding a, instead of raw */
    struct cdd_rfile *rf;      /* what libarchive reads (src_read): zf for a
                                  zip, else owned here */
    uint64_t rpos;             /* ... its position */
    void *rbuf;                /* ... the block it reads into */
    int io_err;                /* a read of the file failed: its error, */
    struct cdd_errsave io_info; /* ... and the record that said so */
};

static const char *la_msg(struct archive *a)
{
    const char *s = archive_error_string(a);
    return s && *s ? s : "unknown libarchive error";
}

/* The current entry's name shown whole, malloc'd (NULL: out of memory;
 * CDD_SHOWN gives a placeholder). */
static char *cur_name(struct cdd_archive *ar)
{
    const char *p = ar->cur ? ar->cur_path : NULL;
    return cdd_path_shown(p ? p : "");
}

/* A read of the file failed earlier (src_read): that error, again, is the
 * one to report, whatever libarchive made of the missing bytes. */
static int io_failed(struct cdd_archive *ar)
{
    ar->failed = 1;
    cdd_error_restore(&ar->io_info);
    return ar->io_err;
}

static int corrupt(struct cdd_archive *ar, const char *what)
{
    if (ar->io_err)
        return io_failed(ar);
    ar->failed = 1;
    /* libarchive out of memory: not a damaged archive (malloc trials). */
    if (archive_errno(ar->a) == ENOMEM)
        return cdd_fail(CDD_E_NOMEM, ar->path, 0, "out of memory (%s: %s)", what,
                        la_msg(ar->a));
    if (ar->cur) {
        char *name = cur_name(ar);
        int r = cdd_fail(CDD_E_CORRUPT, ar->path, 0, "entry \"%s\": %s: %s",
                         CDD_SHOWN(name), what, la_msg(ar->a));
        free(name);
        return r;
    }
    return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "%s: %s", what, la_msg(ar->a));
}

/* Register a filter only when libarchive decodes it itself: on a scratch
 * reader, ARCHIVE_WARN from a support call means "only through an external
 * program". */
static int add_filter(struct archive *a, int (*support)(struct archive *),
                      const char *path)
{
    struct archive *probe = archive_read_new();
    if (!probe)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    int ok = support(probe) == ARCHIVE_OK;
    /* Out of memory is not "no such filter": without the filter a good
     * .tar.xz reads as a damaged tar (malloc-failure trials). */
    int nomem = !ok && archive_errno(probe) == ENOMEM;
    archive_read_free(probe);
    if (nomem)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    if (ok && support(a) != ARCHIVE_OK && archive_errno(a) == ENOMEM)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    return 0;
}

/* A libarchive set-up call failed: out of memory, or a libarchive built
 * without what it needs. */
static int setup_failed(struct archive *a, const char *path, const char *what)
{
    if (archive_errno(a) == ENOMEM)
        return cdd_fail(CDD_E_NOMEM, path, 0, "out of memory (%s)", la_msg(a));
    return cdd_fail(CDD_E_NOTSUP, path, 0, "libarchive lacks %s: %s", what,
                    la_msg(a));
}

/* ---- names ---------------------------------------------------------------- */

/* The code point at w[*i] (a UTF-16 pair where wchar_t has 16 bits,
 * Windows; UTF-32 otherwise), *i moved past it; 0x110000 when it is not
 * Unicode (a lone surrogate, a value beyond U+10FFFF). */
static uint32_t wide_at(const wchar_t *w, size_t n, size_t *i)
{
    /* Through uint32_t: a negative 32-bit wchar_t becomes too large. */
    uint32_t c = (uint32_t)w[(*i)++];
    if (sizeof(wchar_t) == 2 && c >= 0xD800 && c <= 0xDBFF && *i < n &&
        (uint32_t)w[*i] >= 0xDC00 && (uint32_t)w[*i] <= 0xDFFF)
        return 0x10000 + ((c - 0xD800) << 10) + ((uint32_t)w[(*i)++] - 0xDC00);
    if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
        return 0x110000;
    return c;
}

/* Encode a wide string as UTF-8 into b. Returns 0, 1 when it is not
 * Unicode, or a CDD_E_* code, recorded: CDD_E_TOOLONG for a name longer
 * than all names of an archive may be (CDD_MAX_NAME_BYTES, its NUL
 * counted as cdd_extract() counts it), CDD_E_NOMEM. */
static int wide_to_utf8(const wchar_t *w, struct ubuf *b)
{
    size_t n = wcslen(w), o = 0, len = 0;
    char *s;
    int r;

    /* Measured first, so the buffer grows to the name, not a guess. */
    for (size_t i = 0; i < n;) {
        uint32_t c = wide_at(w, n, &i);
        if (c > 0x10FFFF)
            return 1;
        len += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
        if (len >= CDD_MAX_NAME_BYTES)
            break; /* refused just below: no need to read on */
    }
    if ((r = cdd_grow(&b->s, &b->cap, len + 1, 1, CDD_MAX_NAME_BYTES,
                      "bytes of an entry name")) < 0)
        return r;
    s = b->s;
    for (size_t i = 0; i < n;) {
        uint32_t c = wide_at(w, n, &i);
        if (c < 0x80) {
            s[o++] = (char)c;
        } else if (c < 0x800) {
            s[o++] = (char)(0xC0 | c >> 6);
            s[o++] = (char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            s[o++] = (char)(0xE0 | c >> 12);
            s[o++] = (char)(0x80 | (c >> 6 & 0x3F));
            s[o++] = (char)(0x80 | (c & 0x3F));
        } else {
            s[o++] = (char)(0xF0 | c >> 18);
            s[o++] = (char)(0x80 | (c >> 12 & 0x3F));
            s[o++] = (char)(0x80 | (c >> 6 & 0x3F));
            s[o++] = (char)(0x80 | (c & 0x3F));
        }
    }
    s[o] = '\0';
    return 0;
}

/* A name of the current entry (its path or a link target) as UTF-8 in *out,
 * NULL when libarchive holds none.
 *
 * libarchive decodes each name from the archive's character set (UTF-8 here,
 * see cdd_archive_open) and keeps the result in the C library's multibyte
 * form on POSIX, in wide form on Windows. Its narrow forms go through the C
 * runtime's locale, which msvcrt.dll cannot make UTF-8: there they come out
 * empty or as mojibake. The wide form is exact on both (on POSIX the C
 * library makes it from the UTF-8 form), so it is the one read.
 *
 * The narrow form is taken instead when the name has no wide form, and when
 * 'undecoded': after a failed conversion tar keeps the stored bytes, whose
 * wide form would be a guess (on Windows, the bytes read as Latin-1: a
 * different name from the one Linux sees). The name check refuses stored
 * bytes unless they are valid UTF-8. */
static int entry_utf8(struct cdd_archive *ar, struct ubuf *b,
                      const wchar_t *(*wide)(struct archive_entry *),
                      const char *(*narrow)(struct archive_entry *),
                      int undecoded, const char **out)
{
    const wchar_t *w = undecoded ? NULL : wide(ar->cur);
    int r;

    *out = NULL;
    if (w) {
        if ((r = wide_to_utf8(w, b)) < 0) {
            ar->failed = 1;
            /* The archive named, the rule's words kept. */
            return cdd_fail(r, ar->path, 0, "%s", cdd_last_error()->msg);
        }
        if (r == 0) {
            *out = b->s;
            return 0;
        }
    }
    *out = narrow(ar->cur);
    return 0;
}

/* ---- locale --------------------------------------------------------------- */

static int ascii_icontains(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++) {
        size_t i = 0;
        while (i < n && s[i] &&
               (s[i] | 0x20) == (needle[i] | 0x20))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

static int ctype_is_utf8(void)
{
    const char *cur = setlocale(LC_CTYPE, NULL);
    return cur && (ascii_icontains(cur, "utf-8") || ascii_icontains(cur, "utf8"));
}

int cdd_archive_init(void)
{
    /* glibc and musl know "C.UTF-8"; the Windows UCRT spells it ".UTF-8". */
    static const char *const names[] = {"C.UTF-8", "C.utf8", ".UTF-8",
                                        "en_US.UTF-8", "UTF-8"};
    if (ctype_is_utf8())
        return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (setlocale(LC_CTYPE, names[i]) && ctype_is_utf8())
            return 0;
    /* Windows' libarchive decodes names with the system's code-page
     * functions and keeps them wide, and the wide form is the one read
     * (entry_utf8): nothing depends on the C runtime's locale there, and
     * msvcrt.dll has no UTF-8 locale to select. */
    if (CDD_HOST_WINDOWS)
        return 0;
    return cdd_fail(CDD_E_NOTSUP, NULL, 0,
                    "no UTF-8 character type locale: archive entries with "
                    "non-ASCII names will be refused");
}

/* ---- zip: libarchive's entries against the validated central directory --- */

static const char *type_word(enum cdd_entry_type t)
{
    switch (t) {
    case CDD_ENTRY_FILE:
        return "regular file";
    case CDD_ENTRY_DIR:
        return "folder";
    case CDD_ENTRY_SYMLINK:
        return "symlink";
    case CDD_ENTRY_HARDLINK:
        return "hard link";
    default:
        return "device or FIFO";
    }
}

/* libarchive's seekable reader yields the entries in the order of their
 * local headers, which is the order of ar->zip: the i-th entry it yields
 * must be the i-th record, with the same name, type and size. A record it
 * skipped (it drops a second record at an offset already seen) or an entry
 * it made up shows here. A member whose Unix mode says FIFO, device or
 * socket (libarchive reads it as a regular file) becomes CDD_ENTRY_OTHER. */
static void end_inflate(struct cdd_archive *ar);

static int zip_match(struct cdd_archive *ar, struct cdd_archive_entry *e)
{
    const struct cdd_zipcd_entry *ze = cdd_zipcd_get(ar->zip, ar->zip_next);
    ar->failed = 1; /* until it matches */
    /* A zip still downloading: its local headers up to this one. */
    int zr = ze ? cdd_zipcd_check_through(ar->zip, ar->zf, ar->path,
                                          ar->zip_next + 1)
                : 0;
    if (zr < 0)
        return zr;
    if (!ze)
        return cdd_fail(CDD_E_UNSAFE, ar->path, 0,
                        "zip: libarchive yields entry \"%s\" beyond the %zu "
                        "records of the central directory",
                        cdd_path_q(e->path),
                        cdd_zipcd_count(ar->zip));
    ar->zip_next++;
    if (strcmp(e->path, ze->name) != 0)
        return cdd_fail(CDD_E_UNSAFE, ar->path, 0,
                        "zip: entry \"%s\": libarchive reads it as \"%s\" "
                        "(a name other readers do not see)",
                        cdd_path_q(ze->name),
                        cdd_path_q(e->path));
    if (ze->type == CDD_ENTRY_OTHER) {
        e->type = CDD_ENTRY_OTHER;
    } else if (ze->type != e->type) {
        return cdd_fail(CDD_E_UNSAFE, ar->path, 0,
                        "zip: entry \"%s\": libarchive reads a %s, the "
                        "central directory says a %s",
                        cdd_path_q(ze->name),
                        type_word(e->type), type_word(ze->type));
    } else if (e->type == CDD_ENTRY_FILE &&
               (!e->size_known || e->size != ze->usize)) {
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0,
                        "zip: entry \"%s\": libarchive reads a size of "
                        "%llu, the central directory says %llu",
                        cdd_path_q(ze->name),
                        (unsigned long long)e->size,
                        (unsigned long long)ze->usize);
    }
    /* Deflated data is ours to inflate (inflate_int.h says why); stored
     * members and everything else stay libarchive's. */
    if (e->type == CDD_ENTRY_FILE && ze->method == 8)
        ar->deflated = ze;
    ar->failed = 0;
    return 0;
}

static void end_inflate(struct cdd_archive *ar)
{
    ar->inflated_in += cdd_inflate_consumed(ar->inf);
    cdd_inflate_free(ar->inf);
    ar->inf = NULL;
    ar->deflated = NULL;
}

const struct cdd_zipcd *cdd_archive_zipcd(const struct cdd_archive *ar)
{
    return ar ? ar->zip : NULL;
}

/* ---- tar: one decompression, two readers ------------------------------------ */

/* A decoded block on its way to the tar reader, shown to the raw header
 * check first (tarscan.h). */
static la_ssize_t scan_block(struct cdd_archive *ar, struct archive *a,
                             const void *buf, size_t size)
{
    int r = cdd_tarscan_feed(ar->scan, buf, size);
    if (r < 0) {
        ar->scan_err = r;
        archive_set_error(a, EINVAL, "refused by the tar header check");
        return -1;
    }
    return (la_ssize_t)size;
}

/* The tar reader's input: the next block of the decompressed stream, shown
 * to the raw header check first (tarscan.h). The block stays valid until the
 * next call, as libarchive requires: it is the raw reader's own buffer. */
static la_ssize_t tar_feed(struct archive *a, void *ud, const void **buf)
{
    struct cdd_archive *ar = ud;
    size_t size = 0;
    la_int64_t off = 0;
    int r = archive_read_data_block(ar->raw, buf, &size, &off);

    if (r == ARCHIVE_EOF)
        return 0;
    if (r != ARCHIVE_OK) {
        archive_set_error(a, archive_errno(ar->raw), "%s", la_msg(ar->raw));
        return -1;
    }
    return scan_block(ar, a, *buf, size);
}

/* The same for a tar.xz decoded by xzmt.c: its error (a damaged block, a
 * failed read) is recorded like the header check's and reported for what
 * it is (scan_refused), not as the tar reader's "read error". */
static la_ssize_t xz_feed(struct archive *a, void *ud, const void **buf)
{
    struct cdd_archive *ar = ud;
    size_t size = 0;
    int r = cdd_xzmt_read(ar->xz, buf, &size);

    if (r < 0) {
        ar->scan_err = r;
        archive_set_error(a, EIO, "%s", cdd_last_error()->msg);
        return -1;
    }
    if (size == 0)
        return 0;
    return scan_block(ar, a, *buf, size);
}

/* The scanner refused a block: its error, recorded when it refused, is the
 * one to report, not the tar reader's "read error". */
static int scan_refused(struct cdd_archive *ar)
{
    ar->failed = 1;
    return ar->scan_err;
}

/* ---- the reader ----------------------------------------------------------------- */

/* ---- the file, as libarchive reads it ----------------------------------------- */

/* libarchive reads the archive through these callbacks, never opening it
 * itself: preads at our own position through the handle open_reader opened
 * (fsops), so a failed read is recorded with its OS error (io_err), and the
 * zip's handle serves libarchive and inflate.c alike. */
static la_ssize_t src_read(struct archive *a, void *ud, const void **buf)
{
    struct cdd_archive *ar = ud;
    size_t got = 0;
    int r = ar->io_err ? ar->io_err
                       : cdd_rfile_pread(ar->rf, ar->rpos, ar->rbuf, READ_BLOCK,
                                         &got);
    if (r < 0) {
        if (!ar->io_err) {
            ar->io_err = r;
            cdd_error_save(&ar->io_info);
        }
        archive_set_error(a, EIO, "%s", ar->io_info.info.msg);
        return -1;
    }
    ar->rpos += got;
    *buf = ar->rbuf;
    return (la_ssize_t)got;
}

static la_int64_t src_seek(struct archive *a, void *ud, la_int64_t off,
                           int whence)
{
    struct cdd_archive *ar = ud;
    int64_t base = whence == SEEK_SET   ? 0
                   : whence == SEEK_CUR ? (int64_t)ar->rpos
                                        : (int64_t)ar->file_size;
    if (off < -base) {
        archive_set_error(a, EINVAL, "seek before the start of the file");
        return ARCHIVE_FATAL;
    }
    ar->rpos = (uint64_t)(base + off);
    return (la_int64_t)ar->rpos;
}

static la_int64_t src_skip(struct archive *a, void *ud, la_int64_t n)
{
    struct cdd_archive *ar = ud;
    uint64_t left = ar->file_size > ar->rpos ? ar->file_size - ar->rpos : 0;
    (void)a;
    if (n <= 0)
        return 0;
    if ((uint64_t)n > left)
        n = (la_int64_t)left;
    ar->rpos += (uint64_t)n;
    return n;
}

/* Open reader a on ar's file; only a zip's reader seeks. */
static int src_open(struct cdd_archive *ar, struct archive *a, int seekable)
{
    if (archive_read_set_callback_data(a, ar) != ARCHIVE_OK ||
        archive_read_set_read_callback(a, src_read) != ARCHIVE_OK ||
        archive_read_set_skip_callback(a, src_skip) != ARCHIVE_OK ||
        (seekable &&
         archive_read_set_seek_callback(a, src_seek) != ARCHIVE_OK))
        return ARCHIVE_FATAL;
    return archive_read_open1(a);
}

/* archive_read_open() with each step checked: libarchive 3.6's ignores a
 * failure of its archive_read_set_callback_data() (an allocation) and
 * opens a reader without its client data, which then crashes inside
 * libarchive (the malloc trials of libarchive's own allocations). */
static int feed_open(struct archive *a, void *ud, archive_read_callback *feed)
{
    if (archive_read_set_callback_data(a, ud) != ARCHIVE_OK ||
        archive_read_set_read_callback(a, feed) != ARCHIVE_OK)
        return ARCHIVE_FATAL;
    return archive_read_open1(a);
}

/* libarchive's open failed: the file could not be read, the environment's
 * fault, or not an archive. */
static int open_failed(struct cdd_archive *ar, struct archive *a,
                       const char *path)
{
    int e = archive_errno(a);
    const char *said = archive_error_string(a);
    if (ar->io_err)
        return io_failed(ar);
    /* A failure with neither errno nor message: libarchive 3.6's
     * archive_read_open1 returns ARCHIVE_FATAL silently only where it
     * could not allocate (its filter record); every other failure of the
     * open says why. Out of memory, not a damaged archive (the malloc
     * trials of libarchive's own allocations, docs/reliability.md). */
    if (e == 0 && (!said || !*said))
        return cdd_fail(CDD_E_NOMEM, path, 0,
                        "out of memory (libarchive, opening the archive)");
    /* libarchive reports "not an archive" with an errno too (EILSEQ or
     * EFTYPE); only the errors of opening and reading a file are the
     * environment's fault. */
    if (e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM ||
        e == EISDIR || e == EIO || e == ENOMEM || e == EMFILE || e == ENFILE)
        return cdd_fail_errno(path, e, "cannot open archive: %s", la_msg(a));
    return cdd_fail(CDD_E_CORRUPT, path, 0,
                    "cannot be read as a zip or tar archive: %s", la_msg(a));
}

static int open_reader(const char *path, const struct cdd_archive *like,
                       struct cdd_rfile *held, unsigned threads,
                       struct cdd_archive **out);

int cdd_archive_open(const char *path, struct cdd_archive **out)
{
    return open_reader(path, NULL, NULL, 0, out);
}

int cdd_archive_open_file(struct cdd_rfile *f, struct cdd_archive **out)
{
    return open_reader(cdd_rfile_path(f), NULL, f, 0, out);
}

int cdd_archive_open_mt(const char *path, struct cdd_rfile *f,
                        unsigned threads, struct cdd_archive **out)
{
    return open_reader(f ? cdd_rfile_path(f) : path, NULL, f, threads, out);
}

unsigned cdd_archive_xz_threads(const struct cdd_archive *ar)
{
    return ar ? cdd_xzmt_threads(ar->xz) : 0;
}

/* A worker's reader reads the open file the first reader reads (a
 * duplicate of its handle), never the path again: the path may name
 * another file by now (issue 18). */
int cdd_archive_open_like(const struct cdd_archive *like,
                          struct cdd_archive **out)
{
    return open_reader(like->path, like, like->rf, 0, out);
}

int cdd_archive_is_zip(const struct cdd_archive *ar)
{
    return ar->zip != NULL;
}

/* like: another reader of the same zip (a worker's) takes a copy of the
 * central directory it validated instead of reading it again; its entries
 * are matched one to one against that copy (zip_match) like the first
 * reader's. */
static int open_reader(const char *path, const struct cdd_archive *like,
                       struct cdd_rfile *held, unsigned threads,
                       struct cdd_archive **out)
{
    struct cdd_archive *ar = NULL;
    struct cdd_rfile *f = NULL;
    int r = 0, is_zip = 0;
    uint64_t xz_blocks = 0;

    *out = NULL;
    /* Programs that never called cdd_archive_init() get it here, once. */
    {
        static atomic_flag tried = ATOMIC_FLAG_INIT;
        if (!atomic_flag_test_and_set(&tried))
            (void)cdd_archive_init(); /* without it, only ASCII names pass */
    }
    /* Through fsops first: a missing or unreadable file gets the same
     * NOTFOUND / PERM / IO code as everywhere else, and the size (following
     * a symlink the user named) is what progress is measured against. */
    if ((r = held ? cdd_rfile_dup(held, &f) : cdd_fs_open_read(path, &f)) < 0)
        goto out;
    ar = calloc(1, sizeof *ar);
    if (!ar || !(ar->path = strdup(path)) || !(ar->a = archive_read_new())) {
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        goto out;
    }
    /* A zip is read through our own validation of its structure first
     * (zipcd.h), and only as a zip; anything else only as a tar. */
    if (like && like->zip) {
        is_zip = 1;
        if ((r = cdd_rfile_size(f, &ar->file_size)) < 0 ||
            (r = cdd_zipcd_dup(like->zip, &ar->zip)) < 0)
            goto out;
    } else if ((r = cdd_rfile_size(f, &ar->file_size)) < 0 ||
               (r = cdd_zipcd_sniff(f, path, ar->file_size, &is_zip)) < 0 ||
               (is_zip &&
                (r = cdd_zipcd_read(f, path, ar->file_size, &ar->zip)) < 0)) {
        goto out;
    }
    /* libarchive reads through f (src_read); for a zip so do inflate.c's
     * reads of the deflated members (zf). */
    ar->rf = f;
    if (is_zip)
        ar->zf = f;
    f = NULL;
    if (!(ar->rbuf = malloc(READ_BLOCK))) {
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        goto out;
    }

    if (is_zip ? archive_read_support_format_zip_seekable(ar->a) != ARCHIVE_OK
               : archive_read_support_format_tar(ar->a) != ARCHIVE_OK) {
        r = setup_failed(ar->a, path, "zip or tar support");
        goto out;
    }
    /* Names whose character set the archive does not declare are UTF-8:
     * ustar and GNU tar names, pax names marked hdrcharset=BINARY, and zip
     * names without the UTF-8 flag (zip's Unicode path field and pax path
     * records are UTF-8 anyway). For tar that is what every current tool
     * writes. For zip the specification says CP437, but writers disagree
     * with it (Debian's Info-ZIP zip stores UTF-8 bytes without the flag):
     * read as CP437, such a name would silently become another name
     * ("Zo\xc3\xab.h" -> "Zo├½.h"), while read as UTF-8, a real CP437 name
     * is almost never valid UTF-8 and is refused. Refusing is the safe way
     * to be wrong. Every name then goes through libarchive's own converter
     * (which refuses invalid UTF-8 and composes to NFC) and comes out the
     * same on every platform; without the option libarchive would use the
     * C runtime's locale, and on Windows the ANSI or OEM code page. A zip
     * name the converter changes (decomposed accents) then differs from the
     * central directory's bytes and is refused by zip_match(). */
    if (archive_read_set_options(ar->a, "hdrcharset=UTF-8") != ARCHIVE_OK) {
        if (archive_errno(ar->a) == ENOMEM)
            r = cdd_fail(CDD_E_NOMEM, path, 0, "out of memory (%s)",
                         la_msg(ar->a));
        else
            r = cdd_fail(CDD_E_NOTSUP, path, 0, "libarchive cannot decode UTF-8 "
                                            "entry names: %s", la_msg(ar->a));
        goto out;
    }

    if (is_zip) {
        /* The narrow-character open takes UTF-8 on Windows too: the
         * executable's application manifest selects the UTF-8 code page. */
        if (src_open(ar, ar->a, 1) != ARCHIVE_OK) {
            r = open_failed(ar, ar->a, path);
            goto out;
        }
    } else {
        /* A tar is decompressed once, by a raw reader, whose blocks go
         * through the raw header check (tarscan.h) on their way to the tar
         * reader: the check sees the very bytes the reader parses, which is
         * the only sound way to find what libarchive's tar reader cuts at a
         * NUL (GNU long names, pax paths) and to refuse sparse members
         * before their maps are built. */
        struct archive_entry *re = NULL;
        if ((r = cdd_tarscan_new(path, &ar->scan)) < 0)
            goto out;
        /* Several xz blocks and several jobs: the threaded decoder, one
         * thread per block in flight, at most one per job (xzmt_int.h). */
        if (threads > 1 &&
            (cdd_xzmt_streaming(ar->rf) ||
             (xz_blocks = cdd_xzmt_blocks(ar->rf, ar->file_size)) > 1)) {
            /* (a download in progress: blocks unknown, every job) */
            unsigned t = xz_blocks && xz_blocks < threads
                             ? (unsigned)xz_blocks
                             : threads;
            if ((r = cdd_xzmt_open(ar->rf, path, t, &ar->xz)) < 0)
                goto out;
            if (feed_open(ar->a, ar, xz_feed) !=
                ARCHIVE_OK) {
                r = ar->scan_err ? ar->scan_err
                                 : open_failed(ar, ar->a, path);
                goto out;
            }
            *out = ar;
            ar = NULL;
            goto out;
        }
        if (!(ar->raw = archive_read_new())) {
            r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
            goto out;
        }
        if (archive_read_support_format_raw(ar->raw) != ARCHIVE_OK) {
            r = setup_failed(ar->raw, path, "raw support");
            goto out;
        }
        if ((r = add_filter(ar->raw, archive_read_support_filter_gzip, path)) ||
            (r = add_filter(ar->raw, archive_read_support_filter_bzip2, path)) ||
            (r = add_filter(ar->raw, archive_read_support_filter_xz, path)) ||
            (r = add_filter(ar->raw, archive_read_support_filter_zstd, path)))
            goto out;
        if (src_open(ar, ar->raw, 0) != ARCHIVE_OK) {
            r = open_failed(ar, ar->raw, path);
            goto out;
        }
        if (archive_read_next_header(ar->raw, &re) != ARCHIVE_OK) {
            r = open_failed(ar, ar->raw, path);
            goto out;
        }
        if (feed_open(ar->a, ar, tar_feed) != ARCHIVE_OK) {
            r = ar->scan_err ? ar->scan_err : open_failed(ar, ar->a, path);
            goto out;
        }
    }
    *out = ar;
    ar = NULL;
out:
    cdd_rfile_close(f);
    cdd_archive_close(ar);
    return r;
}

/* A header warning is accepted only when it concerns character-set
 * conversion, of the name or of the owner names (which we never use), and a
 * name was still obtained (the stored bytes, see entry_utf8): the name we
 * check is then the name we use. A link name that cannot be converted is
 * refused: a hard link whose name is lost would look like an empty regular
 * file. Any other warning (a malformed pax attribute that was ignored, an
 * inconsistent zip header) could mean that another tool reads the entry
 * differently from us, so it is refused. */
static int warning_is_harmless(struct cdd_archive *ar, const char *utf8_name)
{
    const char *m = archive_error_string(ar->a);
    if (!utf8_name || !m)
        return 0;
    return strstr(m, "converted") != NULL &&
           (strstr(m, "Pathname") || strstr(m, "Uname") ||
            strstr(m, "Gname"));
}

int cdd_archive_next(struct cdd_archive *ar, struct cdd_archive_entry *e)
{
    struct archive_entry *ae = NULL;
    const char *name, *link;
    int r, rc, undecoded;

    memset(e, 0, sizeof *e);
    if (ar->failed)
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "reading after an error");
    ar->cur = NULL;
    ar->cur_path = NULL;
    end_inflate(ar);
    r = archive_read_next_header(ar->a, &ae);
    if (ar->scan_err)
        return scan_refused(ar);
    if (r == ARCHIVE_EOF) {
        int zr = ar->zip ? cdd_zipcd_check_through(
                               ar->zip, ar->zf, ar->path,
                               cdd_zipcd_count(ar->zip))
                         : 0;
        if (zr < 0) {
            ar->failed = 1;
            return zr;
        }
        if (ar->zip && ar->zip_next != cdd_zipcd_count(ar->zip)) {
            ar->failed = 1;
            return cdd_fail(CDD_E_CORRUPT, ar->path, 0,
                            "zip: libarchive yields %zu entries, the central "
                            "directory holds %zu",
                            ar->zip_next, cdd_zipcd_count(ar->zip));
        }
        return 1;
    }
    /* Only OK and WARN carry an entry. RETRY (a damaged header bsdtar would
     * skip) sits numerically between them, so test by value, not order. */
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
        return corrupt(ar, "bad entry header");
    ar->cur = ae;

    /* A character-set warning: some field could not be decoded. The message
     * names only the last one, so any field may hold stored bytes. */
    undecoded = r == ARCHIVE_WARN && strstr(la_msg(ar->a), "converted");
    if ((rc = entry_utf8(ar, &ar->name, archive_entry_pathname_w,
                         archive_entry_pathname, undecoded, &name)) < 0)
        return rc;
    ar->cur_path = name;
    if (undecoded && !name) {
        /* The stored name is not valid UTF-8 (declared, as by zip's flag
         * and pax, or assumed, see cdd_archive_open): no name we could
         * check, so no entry. */
        ar->failed = 1;
        return cdd_fail(CDD_E_UNSAFE, ar->path, 0,
                        "unsafe name: not valid UTF-8 (libarchive: %s)",
                        la_msg(ar->a));
    }
    if (r == ARCHIVE_WARN && !warning_is_harmless(ar, name))
        return corrupt(ar, "suspicious entry header");
    e->path = name ? name : "";

    if (archive_entry_is_encrypted(ae)) {
        char *shown = cur_name(ar);
        ar->failed = 1;
        r = cdd_fail(CDD_E_CORRUPT, ar->path, 0,
                     "entry \"%s\": encrypted entries are not supported",
                     CDD_SHOWN(shown));
        free(shown);
        return r;
    }

    /* A hard link in tar is a header with a link name and (usually) the
     * regular-file type: test it before the type, in both forms (on Windows
     * the narrow one is lost for names outside the C locale), so that one
     * never passes for an empty file. */
    if (archive_entry_hardlink_w(ae) || archive_entry_hardlink(ae)) {
        if ((rc = entry_utf8(ar, &ar->link, archive_entry_hardlink_w,
                             archive_entry_hardlink, undecoded, &link)) < 0)
            return rc;
        e->type = CDD_ENTRY_HARDLINK;
        e->link_target = link ? link : "";
    } else {
        switch (archive_entry_filetype(ae)) {
        case AE_IFREG:
            e->type = CDD_ENTRY_FILE;
            break;
        case AE_IFDIR:
            e->type = CDD_ENTRY_DIR;
            break;
        case AE_IFLNK:
            e->type = CDD_ENTRY_SYMLINK;
            if ((rc = entry_utf8(ar, &ar->link, archive_entry_symlink_w,
                                 archive_entry_symlink, undecoded,
                                 &link)) < 0)
                return rc;
            e->link_target = link ? link : "";
            break;
        default:
            e->type = CDD_ENTRY_OTHER;
        }
    }
    if (archive_entry_size_is_set(ae) && archive_entry_size(ae) >= 0) {
        e->size_known = 1;
        e->size = (uint64_t)archive_entry_size(ae);
    }
    if (ar->zip)
        return zip_match(ar, e);
    return 0;
}

int cdd_archive_read(struct cdd_archive *ar, void *buf, size_t len,
                     size_t *got)
{
    la_ssize_t n;

    *got = 0;
    if (ar->failed)
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "reading after an error");
    if (!ar->cur)
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "no current entry");
    if (ar->deflated) {
        int r;
        if (!ar->inf &&
            (r = cdd_inflate_open(ar->zf, ar->path, ar->deflated,
                                  &ar->inf)) < 0)
            return r;
        if ((r = cdd_inflate_read(ar->inf, buf, len, got)) < 0)
            ar->failed = 1;
        return r;
    }
    /* Any negative result is fatal here, ARCHIVE_WARN included: zip reports
     * a CRC mismatch at the end of an entry as a warning. */
    n = archive_read_data(ar->a, buf, len);
    if (ar->scan_err)
        return scan_refused(ar);
    if (n < 0)
        return corrupt(ar, "cannot read data");
    *got = (size_t)n;
    return 0;
}

const char *cdd_archive_format(struct cdd_archive *ar)
{
    const char *s = ar ? archive_format_name(ar->a) : NULL;
    return s ? s : "unknown";
}

uint64_t cdd_archive_bytes_read(struct cdd_archive *ar)
{
    /* For tar, the compressed bytes are the raw reader's (or the xz
     * decoder's). */
    int64_t n = ar->xz ? (int64_t)cdd_xzmt_consumed(ar->xz)
                       : archive_filter_bytes(ar->raw ? ar->raw : ar->a, -1);
    uint64_t total = (n < 0 ? 0 : (uint64_t)n) + ar->inflated_in +
                     cdd_inflate_consumed(ar->inf);
    /* The seekable zip reader jumps around; never report past the end. */
    return total > ar->file_size ? ar->file_size : total;
}

uint64_t cdd_archive_file_size(struct cdd_archive *ar)
{
    return ar->file_size;
}

void cdd_archive_close(struct cdd_archive *ar)
{
    if (!ar)
        return;
    if (ar->a)
        archive_read_free(ar->a);
    if (ar->raw)
        archive_read_free(ar->raw);
    cdd_tarscan_free(ar->scan);
    cdd_xzmt_free(ar->xz);
    cdd_inflate_free(ar->inf);
    if (ar->rf != ar->zf)
        cdd_rfile_close(ar->rf);
    cdd_rfile_close(ar->zf);
    free(ar->rbuf);
    cdd_zipcd_free(ar->zip);
    free(ar->name.s);
    free(ar->link.s);
    free(ar->path);
    cdd_error_save_free(&ar->io_info);
    free(ar);
}
