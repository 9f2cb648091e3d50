/* The archive reader and the streaming check (archive.c, extract.c) on
 * archives built here with libarchive's write API, checked against manifests
 * filled in by hand: a good tar.xz with symlink chains and a good zip pass;
 * every rejection class of docs/security.md is refused with the right code
 * and a message naming the entry; the size bound stops a decompression bomb;
 * files handed to the sink never leak; entry names come out as the same
 * UTF-8 everywhere. It runs on Windows (under Wine) as well: the archives it
 * writes avoid device names (a file com1.zip would be the serial port), and
 * it writes names the way libarchive's writer keeps them intact there (see
 * write_archive). */
#include "fixture.h"
#include "test.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <wchar.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"
#include "cdd/sys.h"

/* ---- scratch space ----------------------------------------------------------- */

/* A path in the scratch root; the first use does what the CLI does at
 * start-up (a UTF-8 locale where the C library has one). */
static const char *tmp_path(const char *name)
{
    static int init;
    if (!init++)
        CHECK_INT(cdd_archive_init(), 0);
    return fx_tmp(name);
}

/* ---- building archives ---------------------------------------------------------- */

/* One archive entry: type 'f' file, 'd' folder, 'l' symlink, 'h' hard link,
 * 'p' FIFO, 'c' character device. zeros: a file of that many zero bytes. */
struct aent {
    const char *path;
    char type;
    const char *data; /* file contents, or link target */
    uint64_t zeros;
};

#define TOP "cudnn-linux-x86_64-8.5.0.96_cuda11-archive/"
#define WTOP "cudnn-windows-x86_64-8.5.0.96_cuda11-archive/"

static const char RUNTIME[] = "\177ELF fake libcudnn.so.8.5.0 runtime\n";
static const char OPS[] = "\177ELF fake libcudnn_ops_infer.so.8.5.0\n";
static const char HDR[] = "#define CUDNN_MAJOR 8\n";
static const char VHDR[] = "#define CUDNN_MINOR 5\n#define CUDNN_PATCHLEVEL 0\n";
static const char STATIC_A[] = "!<arch>\nfake static library\n";
static const char LICENSE[] = "NVIDIA Software License Agreement (fake)\n";
static const char DLL[] = "MZ fake cudnn64_8.dll\n";
static const char LIB[] = "!<arch>\nfake import library\n";

static uint64_t ent_size(const struct aent *e)
{
    return e->zeros ? e->zeros : e->data ? strlen(e->data) : 0;
}

/* s decoded as UTF-8 (strictly: no overlong forms, no surrogates), as UTF-16
 * where wchar_t has 16 bits; malloc'd. NULL when s is not UTF-8. */
static wchar_t *utf8_to_wide(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    wchar_t *w = malloc((strlen(s) + 1) * sizeof *w), *o = w;
    while (*p) {
        uint32_t c = *p++, min;
        int more = c < 0x80 ? 0 : c >= 0xC2 && c < 0xE0 ? 1
                 : c >= 0xE0 && c < 0xF0 ? 2 : c >= 0xF0 && c < 0xF5 ? 3 : -1;
        if (more < 0)
            goto bad;
        min = more == 1 ? 0x80 : more == 2 ? 0x800 : 0x10000;
        if (more)
            c &= 0x3Fu >> more; /* the lead byte's payload */
        for (int i = 0; i < more; i++, p++) {
            if ((*p & 0xC0) != 0x80)
                goto bad;
            c = c << 6 | (*p & 0x3F);
        }
        if ((more && c < min) || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
            goto bad;
        if (sizeof(wchar_t) == 2 && c >= 0x10000) {
            *o++ = (wchar_t)(0xD800 + ((c - 0x10000) >> 10));
            *o++ = (wchar_t)(0xDC00 + ((c - 0x10000) & 0x3FF));
        } else {
            *o++ = (wchar_t)c;
        }
    }
    *o = 0;
    return w;
bad:
    free(w);
    return NULL;
}

/* Names go in through libarchive's wide form: its narrow form is read in
 * the C runtime's locale, which cannot be UTF-8 with msvcrt.dll on Windows.
 * Names that are not UTF-8 (the hostile ones), and all names when 'bytes'
 * is set, go in as bytes. */
static void set_text(struct archive_entry *ae, const char *s, int bytes,
                     void (*wide)(struct archive_entry *, const wchar_t *),
                     void (*narrow)(struct archive_entry *, const char *))
{
    wchar_t *w = bytes ? NULL : utf8_to_wide(s);
    if (w)
        wide(ae, w);
    else
        narrow(ae, s);
    free(w);
}

static int all_utf8(const struct aent *ents, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *s[2] = {ents[i].path,
                            ents[i].type == 'l' || ents[i].type == 'h'
                                ? ents[i].data : NULL};
        for (int k = 0; k < 2; k++) {
            wchar_t *w = s[k] ? utf8_to_wide(s[k]) : NULL;
            if (s[k] && !w)
                return 0;
            free(w);
        }
    }
    return 1;
}

/* Fill in a ustar header's checksum. */
static void tar_checksum(unsigned char *h)
{
    unsigned sum = 0;
    memset(h + 148, ' ', 8);
    for (size_t i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum); /* then NUL, ' ' */
}

/* libarchive's writer on Windows turns '\\' in names into '/'. A name with
 * a backslash is written with DEL in its place, put back here: in the name
 * fields (name, link name, prefix) of an uncompressed tar's headers, whose
 * checksums are then made again. */
static void tar_put_backslashes(const char *file)
{
    static const size_t field[][2] = {{0, 100}, {157, 257}, {345, 500}};
    size_t len;
    unsigned char *b = fx_read(file, &len);
    for (size_t h = 0; h + 512 <= len; h += 512) {
        if (memcmp(b + h + 257, "ustar", 5) != 0)
            continue;
        for (size_t f = 0; f < 3; f++)
            for (size_t i = h + field[f][0]; i < h + field[f][1]; i++)
                if (b[i] == 0x7f)
                    b[i] = '\\';
        tar_checksum(b + h);
    }
    fx_write(file, b, len);
    free(b);
}

/* Append a ustar header of a regular file or pax record block. */
static void tar_header(unsigned char **b, size_t *len, const char *name,
                       char type, size_t size)
{
    unsigned char *h;
    *b = realloc(*b, *len + 512);
    h = *b + *len;
    memset(h, 0, 512);
    snprintf((char *)h, 100, "%s", name);
    memcpy(h + 100, "0000644", 8);
    memcpy(h + 108, "0000000", 8);
    memcpy(h + 116, "0000000", 8);
    snprintf((char *)h + 124, 12, "%011o", (unsigned)size);
    snprintf((char *)h + 136, 12, "%011o", 1660000000u);
    h[156] = (unsigned char)type;
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    tar_checksum(h);
    *len += 512;
}

/* Append data padded to a whole block. */
static void tar_data(unsigned char **b, size_t *len, const void *d, size_t n)
{
    size_t padded = (n + 511) / 512 * 512;
    *b = realloc(*b, *len + padded);
    memcpy(*b + *len, d, n);
    memset(*b + *len + n, 0, padded - n);
    *len += padded;
}

/* A pax archive made here: regular files, each name in a pax path record
 * (UTF-8, as the standard says) with a stand-in in the ustar header; xz
 * compresses it through libarchive's raw format. libarchive's own pax
 * writer wants each name in the C runtime's narrow form first, which on
 * Windows ("C" locale, msvcrt.dll has no UTF-8 one) holds only Latin-1:
 * it refuses a CJK name there. */
static void write_pax_by_hand(const char *file, int xz,
                              const struct aent *ents, size_t n)
{
    unsigned char *b = NULL;
    size_t len = 0;
    static const unsigned char end[1024];

    for (size_t i = 0; i < n; i++) {
        char rec[1024], stand_in[32];
        size_t body = strlen(" path=\n") + strlen(ents[i].path), total;
        CHECK(ents[i].type == 'f' && ents[i].data);
        /* a record's length counts its own digits */
        for (total = body + 1; (size_t)snprintf(NULL, 0, "%zu", total) + body !=
                               total;)
            total++;
        snprintf(rec, sizeof rec, "%zu path=%s\n", total, ents[i].path);
        snprintf(stand_in, sizeof stand_in, "entry-%zu", i);
        tar_header(&b, &len, "PaxHeader/entry", 'x', total);
        tar_data(&b, &len, rec, total);
        tar_header(&b, &len, stand_in, '0', strlen(ents[i].data));
        tar_data(&b, &len, ents[i].data, strlen(ents[i].data));
    }
    tar_data(&b, &len, end, sizeof end);
    if (!xz) {
        fx_write(file, b, len);
    } else {
        struct archive *a = archive_write_new();
        struct archive_entry *ae = archive_entry_new();
        archive_write_set_format_raw(a);
        archive_write_add_filter_xz(a);
        CHECK_INT(archive_write_open_filename(a, file), ARCHIVE_OK);
        archive_entry_set_pathname(ae, "tar");
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_size(ae, (la_int64_t)len);
        CHECK_INT(archive_write_header(a, ae), ARCHIVE_OK);
        CHECK_INT(archive_write_data(a, b, len), (la_ssize_t)len);
        CHECK_INT(archive_write_close(a), ARCHIVE_OK);
        archive_write_free(a);
        archive_entry_free(ae);
    }
    free(b);
}

/* kind: "tar.xz", "tar.gz", "tar" (pax where needed), "ustar" (names as
 * bytes in the header, as GNU tar writes them), "zip" (deflate),
 * "zip-store". Names are written as UTF-8 (the zip flag set for non-ASCII
 * ones); an archive with a name that is not UTF-8 gets it as bytes (pax:
 * hdrcharset=BINARY), the same on every platform. */
static void write_archive(const char *file, const char *kind,
                          const struct aent *ents, size_t n)
{
    struct archive *a = archive_write_new();
    static char zero[1 << 16];
    int zip = strncmp(kind, "zip", 3) == 0;
    int ustar = strcmp(kind, "ustar") == 0;
    int utf8 = all_utf8(ents, n);
    int backslashes = 0;

    if (zip) {
        archive_write_set_format_zip(a);
        if (strcmp(kind, "zip-store") == 0)
            archive_write_set_options(a, "zip:compression=store");
        if (utf8)
            archive_write_set_options(a, "hdrcharset=UTF-8");
    } else if (ustar) {
        /* Names as bytes: on Windows this writer refuses a name its narrow
         * form cannot hold, whatever the option. */
        archive_write_set_format_ustar(a);
    } else {
        archive_write_set_format_pax_restricted(a);
        if (!utf8)
            archive_write_set_options(a, "hdrcharset=BINARY");
        if (strcmp(kind, "tar.xz") == 0)
            archive_write_add_filter_xz(a);
        else if (strcmp(kind, "tar.gz") == 0)
            archive_write_add_filter_gzip(a);
    }
    if (archive_write_open_filename(a, file) != ARCHIVE_OK) {
        fprintf(stderr, "write %s: %s\n", file, archive_error_string(a));
        exit(2);
    }
    for (size_t i = 0; i < n; i++) {
        const struct aent *e = &ents[i];
        struct archive_entry *ae = archive_entry_new();
        char *path = strdup(e->path);
        if (strchr(path, '\\')) {
            if (strcmp(kind, "tar") != 0 && !ustar) {
                fprintf(stderr, "%s: backslash names only in a plain tar\n",
                        file);
                exit(2);
            }
            for (char *p = path; (p = strchr(p, '\\')) != NULL;)
                *p = 0x7f;
            backslashes = 1;
        }
        set_text(ae, path, ustar, archive_entry_copy_pathname_w,
                 archive_entry_copy_pathname);
        free(path);
        archive_entry_set_mtime(ae, 1660000000, 0);
        switch (e->type) {
        case 'f':
            archive_entry_set_filetype(ae, AE_IFREG);
            archive_entry_set_perm(ae, 0644);
            archive_entry_set_size(ae, (la_int64_t)ent_size(e));
            break;
        case 'd':
            archive_entry_set_filetype(ae, AE_IFDIR);
            archive_entry_set_perm(ae, 0755);
            break;
        case 'l':
            archive_entry_set_filetype(ae, AE_IFLNK);
            archive_entry_set_perm(ae, 0777);
            set_text(ae, e->data, ustar, archive_entry_copy_symlink_w,
                     archive_entry_copy_symlink);
            break;
        case 'h':
            archive_entry_set_filetype(ae, AE_IFREG);
            archive_entry_set_perm(ae, 0644);
            set_text(ae, e->data, ustar, archive_entry_copy_hardlink_w,
                     archive_entry_copy_hardlink);
            archive_entry_set_size(ae, 0);
            break;
        case 'p':
            archive_entry_set_filetype(ae, AE_IFIFO);
            archive_entry_set_perm(ae, 0644);
            break;
        case 'c':
            archive_entry_set_filetype(ae, AE_IFCHR);
            archive_entry_set_perm(ae, 0644);
            archive_entry_set_rdev(ae, 0x0103);
            break;
        }
        if (archive_write_header(a, ae) < ARCHIVE_WARN) {
            fprintf(stderr, "header %s: %s\n", e->path,
                    archive_error_string(a));
            exit(2);
        }
        if (e->type == 'f') {
            if (e->zeros) {
                for (uint64_t left = e->zeros; left;) {
                    size_t k = left < sizeof zero ? (size_t)left : sizeof zero;
                    archive_write_data(a, zero, k);
                    left -= k;
                }
            } else if (e->data) {
                archive_write_data(a, e->data, strlen(e->data));
            }
        }
        archive_entry_free(ae);
    }
    archive_write_close(a);
    archive_write_free(a);
    if (backslashes)
        tar_put_backslashes(file);
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static long find_sig(const unsigned char *b, size_t len, const char *sig,
                     size_t from)
{
    for (size_t i = from; i + 4 <= len; i++)
        if (memcmp(b + i, sig, 4) == 0)
            return (long)i;
    return -1;
}

/* Make a one-entry zip lie about its entry's uncompressed size (local
 * header, data descriptor and central directory all say 'size'). */
static void zip_lie_size(const char *file, uint32_t size)
{
    size_t len;
    unsigned char *b = fx_read(file, &len);
    long loc = find_sig(b, len, "PK\3\4", 0);
    long cen = find_sig(b, len, "PK\1\2", 0);
    long dd = find_sig(b, len, "PK\7\10", (size_t)loc + 4);
    CHECK(loc == 0 && cen > 0);
    put32(b + loc + 22, size);
    put32(b + cen + 24, size);
    if (dd > 0 && dd < cen)
        put32(b + dd + 12, size);
    fx_write(file, b, len);
    free(b);
}

/* Give a zip member other Unix attributes in the central directory (where
 * zip readers take them from): libarchive's writer refuses FIFOs and
 * devices, so hostile types are made this way. */
static void zip_set_unix_mode(const char *file, const char *member,
                              uint32_t mode)
{
    size_t len, nl = strlen(member);
    unsigned char *b = fx_read(file, &len);
    int done = 0;
    for (long at = find_sig(b, len, "PK\1\2", 0); at >= 0;
         at = find_sig(b, len, "PK\1\2", (size_t)at + 4)) {
        size_t name_len = (size_t)b[at + 28] | (size_t)b[at + 29] << 8;
        if (name_len == nl && memcmp(b + at + 46, member, nl) == 0) {
            b[at + 5] = 3; /* made by Unix */
            put32(b + at + 38, mode << 16);
            done = 1;
        }
    }
    CHECK_MSG(done, "%s not found in %s", member, file);
    fx_write(file, b, len);
    free(b);
}

/* ---- manifests by hand ---------------------------------------------------------- */

struct mspec {
    const char *path; /* after stripping */
    enum cdd_role role;
    const char *data; /* contents for sha256 and size; NULL: neither */
    const char *target;
    uint64_t zeros;   /* size of a zero-filled file (no sha256) */
};

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static struct cdd_manifest *mk_manifest(enum cdd_platform p, int strip,
                                        int exact, const struct mspec *f,
                                        size_t n)
{
    struct cdd_manifest *m = calloc(1, sizeof *m);
    m->source = xstrdup("test-manifest.json");
    m->name = xstrdup("test-manifest");
    m->schema_version = CDD_MANIFEST_SCHEMA;
    m->product = xstrdup("cudnn");
    m->version = xstrdup("8.5.0.96");
    m->cuda_major = 11;
    m->platform = p;
    m->archive.filename = xstrdup("test-archive");
    m->archive.strip_components = strip;
    m->files_exact = exact;
    m->files = calloc(n ? n : 1, sizeof *m->files);
    m->n_files = n;
    for (size_t i = 0; i < n; i++) {
        struct cdd_mfile *mf = &m->files[i];
        mf->path = xstrdup(f[i].path);
        mf->role = f[i].role;
        mf->target = xstrdup(f[i].target);
        if (f[i].data) {
            struct cdd_sha256 *h = NULL;
            cdd_sha256_new(&h);
            cdd_sha256_update(h, f[i].data, strlen(f[i].data));
            cdd_sha256_final(h, mf->sha256);
            cdd_sha256_free(h);
            mf->has_sha256 = 1;
            mf->has_size = 1;
            mf->size = strlen(f[i].data);
        } else if (f[i].zeros) {
            mf->has_size = 1;
            mf->size = f[i].zeros;
        }
    }
    return m;
}

/* ---- a recording sink --------------------------------------------------------------- */

#define MAXREC 64

struct tsink {
    const char *outdir; /* write files here ('/' flattened to '_') */
    int fail_begin_at;  /* 1-based; 0: never */
    int fail_end_at;
    int cancel_in_begin;
    int n_begin, n_end;
    int open_files; /* given out in begin, not yet seen by end */
    char path[MAXREC][256];
    enum cdd_entry_type type[MAXREC];
    enum cdd_role role[MAXREC];
    enum cdd_role link_role[MAXREC];
    uint64_t size[MAXREC];
    uint8_t sha[MAXREC][CDD_SHA256_LEN];
    int listed[MAXREC];
    int n_progress;
    uint64_t last_done, last_total;
    int progress_backwards;
};

static int ts_begin(void *ud, const struct cdd_xentry *e,
                    struct cdd_file **out)
{
    struct tsink *t = ud;
    char flat[512];
    int r;
    t->n_begin++;
    if (t->cancel_in_begin)
        cdd_cancel_request();
    if (t->outdir) {
        snprintf(flat, sizeof flat, "%s/%s", t->outdir, e->path);
        for (char *p = flat + strlen(t->outdir) + 1; *p; p++)
            if (*p == '/')
                *p = '_';
        if ((r = cdd_fs_create(flat, 0, out)) < 0)
            return r;
        t->open_files++;
    }
    /* Fail after handing out the file: cdd_extract must abort it. */
    if (t->fail_begin_at && t->n_begin == t->fail_begin_at) {
        if (*out)
            t->open_files--;
        return cdd_fail(CDD_E_IO, "sink", 0, "begin fails on purpose");
    }
    return 0;
}

static int ts_end(void *ud, const struct cdd_xentry *e, struct cdd_file *f)
{
    struct tsink *t = ud;
    int i = t->n_end++;
    int r = 0;
    if (f) {
        t->open_files--;
        r = cdd_file_close(f);
    }
    if (i < MAXREC) {
        snprintf(t->path[i], sizeof t->path[i], "%s", e->path);
        t->type[i] = e->type;
        t->role[i] = e->role;
        t->link_role[i] = e->link_role;
        t->size[i] = e->size;
        t->listed[i] = e->mfile != NULL;
        memcpy(t->sha[i], e->sha256, CDD_SHA256_LEN);
    }
    if (t->fail_end_at && t->n_end == t->fail_end_at)
        return cdd_fail(CDD_E_IO, "sink", 0, "end fails on purpose");
    return r;
}

static void ts_progress(void *ud, uint64_t done, uint64_t total)
{
    struct tsink *t = ud;
    if (done < t->last_done || done > total)
        t->progress_backwards = 1;
    t->n_progress++;
    t->last_done = done;
    t->last_total = total;
}

static int ts_find(const struct tsink *t, const char *path)
{
    for (int i = 0; i < t->n_end && i < MAXREC; i++)
        if (strcmp(t->path[i], path) == 0)
            return i;
    return -1;
}

/* Run cdd_extract and check the code and that the message contains want
 * (when not NULL). Returns the code. */
static int run_x(const char *file, const struct cdd_manifest *m, int pinned,
                 struct tsink *t, int want_code, const char *want_msg)
{
    struct cdd_extract_opts o = {.m = m, .pinned = pinned};
    struct cdd_extract_sink s = {t, ts_begin, ts_end, ts_progress, NULL};
    int r;
    cdd_clear_error();
    r = cdd_extract(file, &o, &s);
    /* Show what a user would read, so the log documents the rejections. */
    if (r)
        fprintf(stderr, "    %s -> %s: %s\n", cdd_path_basename(file),
                cdd_err_name(r), cdd_last_error()->msg);
    CHECK_MSG(r == want_code, "%s: got %s (%s), want %s", file,
              cdd_err_name(r), cdd_last_error()->msg, cdd_err_name(want_code));
    if (r && want_msg)
        CHECK_MSG(strstr(cdd_last_error()->msg, want_msg) != NULL,
                  "message \"%s\" lacks \"%s\"", cdd_last_error()->msg,
                  want_msg);
    if (r && !strstr(cdd_last_error()->msg, "on purpose"))
        CHECK_STR(cdd_last_error()->path, file);
    /* On success every file went back through end(); on failure the one in
     * flight was aborted by cdd_extract (ASan's leak check sees the rest). */
    if (!want_code)
        CHECK_INT(t->open_files, 0);
    return r;
}

/* ---- the good Linux tarball ------------------------------------------------------ */

static const struct aent linux_good[] = {
    {TOP, 'd', NULL, 0},
    {TOP "include/", 'd', NULL, 0},
    {TOP "include/cudnn.h", 'f', HDR, 0},
    {TOP "include/cudnn_version.h", 'f', VHDR, 0},
    {TOP "lib/", 'd', NULL, 0},
    /* links before their targets, as tar often stores them */
    {TOP "lib/libcudnn.so", 'l', "libcudnn.so.8", 0},
    {TOP "lib/libcudnn.so.8", 'l', "libcudnn.so.8.5.0", 0},
    {TOP "lib/libcudnn.so.8.5.0", 'f', RUNTIME, 0},
    {TOP "lib/libcudnn_ops_infer.so.8.5.0", 'f', OPS, 0},
    {TOP "lib/libcudnn_ops_infer.so.8", 'l', "libcudnn_ops_infer.so.8.5.0", 0},
    {TOP "lib/libcudnn_static.a", 'f', STATIC_A, 0},
    {TOP "LICENSE", 'f', LICENSE, 0},
};
#define N_LINUX (sizeof linux_good / sizeof linux_good[0])

static const struct mspec linux_files[] = {
    {"include/cudnn.h", CDD_ROLE_HEADER, HDR, NULL, 0},
    {"include/cudnn_version.h", CDD_ROLE_HEADER, VHDR, NULL, 0},
    {"lib/libcudnn.so", CDD_ROLE_SYMLINK, NULL, "libcudnn.so.8", 0},
    {"lib/libcudnn.so.8", CDD_ROLE_SYMLINK, NULL, "libcudnn.so.8.5.0", 0},
    {"lib/libcudnn.so.8.5.0", CDD_ROLE_RUNTIME, RUNTIME, NULL, 0},
    {"lib/libcudnn_ops_infer.so.8.5.0", CDD_ROLE_RUNTIME, OPS, NULL, 0},
    {"lib/libcudnn_ops_infer.so.8", CDD_ROLE_SYMLINK, NULL,
     "libcudnn_ops_infer.so.8.5.0", 0},
    {"lib/libcudnn_static.a", CDD_ROLE_STATIC_LIB, STATIC_A, NULL, 0},
    {"LICENSE", CDD_ROLE_LICENSE, LICENSE, NULL, 0},
};
#define N_LINUX_FILES (sizeof linux_files / sizeof linux_files[0])

static struct cdd_manifest *linux_manifest(void)
{
    return mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1, linux_files,
                       N_LINUX_FILES);
}

static void file_equals(const char *file, const char *want)
{
    size_t len = 0;
    unsigned char *b = fx_read(file, &len);
    CHECK_MSG(b && len == strlen(want) && memcmp(b, want, len) == 0,
              "%s differs", file);
    free(b);
}

static void test_good_tar_xz(void)
{
    const char *file = tmp_path("good.tar.xz");
    const char *out = tmp_path("good-out");
    struct cdd_manifest *m = linux_manifest();
    struct tsink t = {0};
    char got[CDD_SHA256_HEX], want[CDD_SHA256_HEX];
    int i;

    write_archive(file, "tar.xz", linux_good, N_LINUX);
    cdd_fs_remove_tree(out);
    cdd_fs_mkdirs(out, NULL);
    t.outdir = out;
    CHECK_INT(run_x(file, m, 0, &t, 0, NULL), 0);
    CHECK_INT(t.n_end, (int)N_LINUX_FILES);
    CHECK_INT(t.n_begin, 6); /* regular files only */
    CHECK(t.n_progress > 0);
    CHECK(!t.progress_backwards);
    CHECK(t.last_total > 0 && t.last_done <= t.last_total);

    i = ts_find(&t, "lib/libcudnn.so.8.5.0");
    CHECK(i >= 0);
    if (i >= 0) {
        CHECK_INT(t.type[i], CDD_ENTRY_FILE);
        CHECK_INT(t.role[i], CDD_ROLE_RUNTIME);
        CHECK_INT(t.size[i], strlen(RUNTIME));
        CHECK(t.listed[i]);
        cdd_hex_encode(t.sha[i], CDD_SHA256_LEN, got);
        cdd_hex_encode(m->files[4].sha256, CDD_SHA256_LEN, want);
        CHECK_STR(got, want);
    }
    i = ts_find(&t, "lib/libcudnn.so");
    CHECK(i >= 0 && t.type[i] == CDD_ENTRY_SYMLINK &&
          t.role[i] == CDD_ROLE_SYMLINK);
    file_equals(tmp_path("good-out/lib_libcudnn.so.8.5.0"), RUNTIME);
    file_equals(tmp_path("good-out/include_cudnn.h"), HDR);
    file_equals(tmp_path("good-out/LICENSE"), LICENSE);
    cdd_manifest_free(m);
}

/* The same content through gzip and plain tar. */
static void test_good_other_compressions(void)
{
    const char *kinds[] = {"tar.gz", "tar"};
    for (size_t k = 0; k < 2; k++) {
        char name[64];
        struct cdd_manifest *m = linux_manifest();
        struct tsink t = {0};
        snprintf(name, sizeof name, "good-%zu.%s", k, kinds[k]);
        write_archive(tmp_path(name), kinds[k], linux_good, N_LINUX);
        run_x(tmp_path(name), m, 0, &t, 0, NULL);
        CHECK_INT(t.n_end, (int)N_LINUX_FILES);
        cdd_manifest_free(m);
    }
}

/* ---- the good Windows zip --------------------------------------------------------- */

static const struct aent win_good[] = {
    {WTOP, 'd', NULL, 0},
    {WTOP "bin/", 'd', NULL, 0},
    {WTOP "bin/cudnn64_8.dll", 'f', DLL, 0},
    {WTOP "include/", 'd', NULL, 0},
    {WTOP "include/cudnn.h", 'f', HDR, 0},
    {WTOP "lib/", 'd', NULL, 0},
    {WTOP "lib/x64/", 'd', NULL, 0},
    {WTOP "lib/x64/cudnn64_8.lib", 'f', LIB, 0},
    {WTOP "LICENSE", 'f', LICENSE, 0},
};
#define N_WIN (sizeof win_good / sizeof win_good[0])

static const struct mspec win_files[] = {
    {"bin/cudnn64_8.dll", CDD_ROLE_RUNTIME, DLL, NULL, 0},
    {"include/cudnn.h", CDD_ROLE_HEADER, HDR, NULL, 0},
    {"lib/x64/cudnn64_8.lib", CDD_ROLE_IMPORT_LIB, LIB, NULL, 0},
    {"LICENSE", CDD_ROLE_LICENSE, LICENSE, NULL, 0},
};
#define N_WIN_FILES (sizeof win_files / sizeof win_files[0])

static void test_good_zip(void)
{
    const char *file = tmp_path("good.zip");
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         win_files, N_WIN_FILES);
    struct tsink t = {0};
    int i;
    write_archive(file, "zip", win_good, N_WIN);
    run_x(file, m, 0, &t, 0, NULL);
    CHECK_INT(t.n_end, (int)N_WIN_FILES);
    i = ts_find(&t, "lib/x64/cudnn64_8.lib");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_IMPORT_LIB &&
          t.size[i] == strlen(LIB));
    CHECK(t.last_total > 0 && t.last_done <= t.last_total);
    CHECK(!t.progress_backwards);

    /* The same, stored rather than deflated. */
    write_archive(tmp_path("good-store.zip"), "zip-store", win_good, N_WIN);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("good-store.zip"), m, 0, &t, 0, NULL);
    cdd_manifest_free(m);
}

/* Old 8.x zips used "cuda/" as the top folder: stripping one handles it. */
static void test_zip_cuda_top(void)
{
    const struct aent ents[] = {
        {"cuda/bin/cudnn64_8.dll", 'f', DLL, 0},
        {"cuda/include/cudnn.h", 'f', HDR, 0},
        {"cuda/lib/x64/cudnn64_8.lib", 'f', LIB, 0},
        {"cuda/LICENSE", 'f', LICENSE, 0},
    };
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         win_files, N_WIN_FILES);
    struct tsink t = {0};
    write_archive(tmp_path("cuda-top.zip"), "zip", ents, 4);
    run_x(tmp_path("cuda-top.zip"), m, 0, &t, 0, NULL);
    CHECK_INT(t.n_end, 4);
    cdd_manifest_free(m);
}

/* ---- rejections ---------------------------------------------------------------------- */

/* Build an archive of the good Linux entries plus/minus changes, run it
 * against a manifest, and expect a code and message. 'extra' entries are
 * appended; 'drop' names one entry of linux_good to leave out. */
static void expect_linux(const char *name, const char *kind,
                         const struct aent *extra, size_t n_extra,
                         const char *drop, const struct cdd_manifest *m,
                         int pinned, int want, const char *msg)
{
    struct aent ents[64];
    size_t n = 0;
    struct tsink t = {0};
    struct cdd_manifest *own = NULL;
    for (size_t i = 0; i < N_LINUX; i++)
        if (!drop || strcmp(linux_good[i].path, drop) != 0)
            ents[n++] = linux_good[i];
    for (size_t i = 0; i < n_extra; i++)
        ents[n++] = extra[i];
    write_archive(tmp_path(name), kind, ents, n);
    if (!m)
        m = own = linux_manifest();
    run_x(tmp_path(name), m, pinned, &t, want, msg);
    cdd_manifest_free(own);
}

static void test_unsafe_names(void)
{
    static const struct {
        const char *path;
        const char *why;
    } bad[] = {
        {TOP "lib/../../evil", "contains '..'"},
        {"../evil", "contains '..'"},
        {"/etc/evil", "absolute path"},
        {TOP "lib\\..\\..\\evil", "backslash"},
        {TOP "lib/x.dll:stream", "contains ':'"},
        {"C:/evil", "drive letter"},
        {TOP "lib/nul.txt", "reserved"},
        {TOP "lib/COM1", "reserved"},
        {TOP "PROGRA~1/x.h", "8.3"},
        {TOP "lib/evil.", "ends with '.'"},
        {TOP "lib/a\033[2J", "control character"},
        {TOP "lib/a\xed\xa0\x80", "surrogate"},
        {TOP "lib/x\xc0\xaf", "overlong"},
        {TOP "lib/a|b", "forbidden"},
        {TOP "lib//x", "empty component"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct aent e = {bad[i].path, 'f', "x", 0};
        char name[64];
        snprintf(name, sizeof name, "unsafe-%zu.tar", i);
        expect_linux(name, "tar", &e, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                     bad[i].why);
        CHECK(strstr(cdd_last_error()->msg, "unsafe name") != NULL);
    }
    /* the example of the brief, word for word */
    struct aent e = {"cudnn-x/lib/../../evil", 'f', "x", 0};
    expect_linux("unsafe-brief.tar.xz", "tar.xz", &e, 1, NULL, NULL, 0,
                 CDD_E_UNSAFE,
                 "entry \"cudnn-x/lib/../../evil\": unsafe name: contains "
                 "'..'");
    /* and in a zip */
    const struct aent z[] = {{"top/../../evil.dll", 'f', "x", 0}};
    struct tsink t = {0};
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         win_files, N_WIN_FILES);
    write_archive(tmp_path("unsafe.zip"), "zip", z, 1);
    run_x(tmp_path("unsafe.zip"), m, 0, &t, CDD_E_UNSAFE, "contains '..'");
    cdd_manifest_free(m);
}

/* Issue 18 from the attacker's side: the bounds on a name, in a tar (pax
 * names) and a zip. One component of 255 bytes is a name like any other (a
 * listed file of that name is extracted); 256 bytes is refused, and the
 * message names the entry whole, not cut. A whole entry name of 4095 bytes
 * (CDD_PATH_MAX_POSIX, the bound of pathsafe.c on every OS) is taken as
 * safe and gets as far as the manifest check (it is not listed); 4096 is
 * refused as too long. */
static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        exit(2);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c);
    char *s = malloc(n + 1);
    if (!s)
        exit(2);
    snprintf(s, n + 1, "%s%s%s", a, b, c);
    return s;
}

/* A path of exactly len bytes: top, then components of 200 'p's (and a
 * shorter last one) separated by '/'. */
static char *path_of(const char *top, size_t len)
{
    char *s = malloc(len + 1);
    size_t o = strlen(top), k = 0;
    if (!s || o >= len)
        exit(2);
    memcpy(s, top, o);
    while (o < len) {
        if (k == 200 && len - o > 1) {
            s[o++] = '/';
            k = 0;
        } else {
            s[o++] = 'p';
            k++;
        }
    }
    s[len] = '\0';
    return s;
}

static void test_name_bounds(void)
{
    char *c255 = repeat('a', 255), *c256 = repeat('b', 256);
    for (int zip = 0; zip < 2; zip++) {
        const char *top = zip ? WTOP : TOP, *kind = zip ? "zip" : "tar";
        const struct aent *good = zip ? win_good : linux_good;
        size_t n_good = zip ? N_WIN : N_LINUX;
        const struct mspec *files = zip ? win_files : linux_files;
        size_t n_files = zip ? N_WIN_FILES : N_LINUX_FILES;
        enum cdd_platform pl = zip ? CDD_PLATFORM_WINDOWS_X86_64
                                   : CDD_PLATFORM_LINUX_X86_64;
        struct aent ents[64];
        struct mspec ms[64];
        struct tsink t = {0};
        char arch[64];
        memcpy(ents, good, n_good * sizeof *ents);
        memcpy(ms, files, n_files * sizeof *ms);

        /* 255 bytes in one component: listed, extracted whole. */
        char *rel = cat3("include/", c255, "");
        char *full = cat3(top, rel, "");
        ents[n_good] = (struct aent){full, 'f', HDR, 0};
        ms[n_files] = (struct mspec){rel, CDD_ROLE_HEADER, HDR, NULL, 0};
        struct cdd_manifest *m = mk_manifest(pl, 1, 1, ms, n_files + 1);
        snprintf(arch, sizeof arch, "name255.%s", kind);
        write_archive(tmp_path(arch), kind, ents, n_good + 1);
        run_x(tmp_path(arch), m, 0, &t, 0, NULL);
        CHECK_INT(t.n_end, (int)n_files + 1); /* the manifest is exact */
        cdd_manifest_free(m);
        free(full);
        free(rel);

        /* 256 bytes: refused, the entry named whole in the message. */
        full = cat3(top, "include/", c256);
        ents[n_good] = (struct aent){full, 'f', HDR, 0};
        m = mk_manifest(pl, 1, 1, files, n_files);
        snprintf(arch, sizeof arch, "name256.%s", kind);
        write_archive(tmp_path(arch), kind, ents, n_good + 1);
        memset(&t, 0, sizeof t);
        run_x(tmp_path(arch), m, 0, &t, CDD_E_UNSAFE,
              "component longer than 255 bytes");
        CHECK_MSG(strstr(cdd_last_error()->msg, full) != NULL,
                  "the message does not name \"%s\" whole", full);
        free(full);

        /* A whole name of 4095 bytes passes the name check (and is then
         * not in the manifest); 4096 bytes is refused for its length. */
        static const struct {
            size_t len;
            int want;
            const char *msg;
        } paths[] = {{4095, CDD_E_ARCHIVE, "not in the manifest"},
                     {4096, CDD_E_UNSAFE, "path longer than 4095 bytes"}};
        for (size_t k = 0; k < 2; k++) {
            full = path_of(top, paths[k].len);
            ents[n_good] = (struct aent){full, 'f', HDR, 0};
            snprintf(arch, sizeof arch, "path%zu.%s", paths[k].len, kind);
            write_archive(tmp_path(arch), kind, ents, n_good + 1);
            memset(&t, 0, sizeof t);
            run_x(tmp_path(arch), m, 0, &t, paths[k].want, paths[k].msg);
            CHECK_MSG(strstr(cdd_last_error()->msg, full + strlen(top)),
                      "the message does not name the %zu-byte path whole",
                      paths[k].len);
            free(full);
        }
        cdd_manifest_free(m);
    }
    free(c255);
    free(c256);
}

static void test_hardlink_and_devices(void)
{
    struct aent h = {TOP "lib/libcudnn_hard.so", 'h',
                     TOP "lib/libcudnn.so.8.5.0", 0};
    struct aent h2 = {TOP "lib/evil", 'h', "/etc/passwd", 0};
    struct aent p = {TOP "lib/fifo", 'p', NULL, 0};
    struct aent c = {TOP "lib/tty", 'c', NULL, 0};
    expect_linux("hardlink.tar.xz", "tar.xz", &h, 1, NULL, NULL, 0,
                 CDD_E_UNSAFE, "hard link");
    expect_linux("hardlink-out.tar", "tar", &h2, 1, NULL, NULL, 1,
                 CDD_E_UNSAFE, "hard link");
    expect_linux("fifo.tar.xz", "tar.xz", &p, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                 "device or FIFO");
    expect_linux("chardev.tar", "tar", &c, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                 "device or FIFO");

    /* In a zip, Unix attributes carry the type. libarchive's zip reader
     * shows a FIFO as a regular file; the reader must still see a FIFO. */
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 0,
                                         win_files, N_WIN_FILES);
    static const uint32_t modes[] = {0010644 /* FIFO */, 0020644 /* chr */,
                                     0060644 /* blk */, 0140644 /* sock */};
    for (int k = 0; k < 4; k++) {
        struct aent z[N_WIN + 1];
        struct tsink t = {0};
        char name[32];
        memcpy(z, win_good, sizeof win_good);
        z[N_WIN] = (struct aent){WTOP "bin/cudnn_ops_infer64_8.dll", 'f',
                                 "", 0};
        snprintf(name, sizeof name, "special-%d.zip", k);
        write_archive(tmp_path(name), "zip", z, N_WIN + 1);
        zip_set_unix_mode(tmp_path(name), z[N_WIN].path, modes[k]);
        run_x(tmp_path(name), m, 1, &t, CDD_E_UNSAFE, "device or FIFO");
        /* discovery (manifest create) too */
        struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
        CHECK_INT(cdd_extract(tmp_path(name), &o, NULL), CDD_E_UNSAFE);
    }
    cdd_manifest_free(m);
}

static void test_symlinks(void)
{
    struct cdd_manifest *m;

    /* undeclared symlink, exact manifest */
    struct aent und = {TOP "lib/libcudnn_ops.so", 'l', "libcudnn.so.8.5.0", 0};
    expect_linux("sym-undeclared.tar.xz", "tar.xz", &und, 1, NULL, NULL, 1,
                 CDD_E_ARCHIVE, "unexpected entry lib/libcudnn_ops.so");

    /* declared target differs from the archive's */
    struct aent tgt[] = {{TOP "lib/libcudnn.so", 'l', "libcudnn_ops_infer.so.8.5.0", 0}};
    expect_linux("sym-target.tar.xz", "tar.xz", tgt, 1, TOP "lib/libcudnn.so",
                 NULL, 0, CDD_E_ARCHIVE, "the manifest says");

    /* a symlink pointing into another folder, even when the manifest
     * (made by hand, bypassing the loader) declares it */
    struct mspec fs[N_LINUX_FILES];
    memcpy(fs, linux_files, sizeof fs);
    fs[2].target = "../include/cudnn.h";
    m = mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1, fs, N_LINUX_FILES);
    struct aent other[] = {{TOP "lib/libcudnn.so", 'l', "../include/cudnn.h", 0}};
    expect_linux("sym-otherdir.tar.xz", "tar.xz", other, 1,
                 TOP "lib/libcudnn.so", m, 0, CDD_E_UNSAFE, "symlink to");
    cdd_manifest_free(m);

    /* absolute and sub-folder targets */
    fs[2].target = "/usr/lib/x86_64-linux-gnu/libcudnn.so.8";
    m = mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1, fs, N_LINUX_FILES);
    struct aent abs[] = {{TOP "lib/libcudnn.so", 'l',
                          "/usr/lib/x86_64-linux-gnu/libcudnn.so.8", 0}};
    expect_linux("sym-abs.tar", "tar", abs, 1, TOP "lib/libcudnn.so", m, 0,
                 CDD_E_UNSAFE, "absolute path");
    cdd_manifest_free(m);
    fs[2].target = "sub/libcudnn.so.8";
    m = mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1, fs, N_LINUX_FILES);
    struct aent sub[] = {{TOP "lib/libcudnn.so", 'l', "sub/libcudnn.so.8", 0}};
    expect_linux("sym-sub.tar", "tar", sub, 1, TOP "lib/libcudnn.so", m, 0,
                 CDD_E_UNSAFE, "same folder");
    cdd_manifest_free(m);

    /* symlink where the manifest lists a regular file, and the reverse */
    struct aent asfile[] = {{TOP "LICENSE", 'l', "libcudnn.so.8.5.0", 0}};
    expect_linux("sym-for-file.tar", "tar", asfile, 1, TOP "LICENSE", NULL, 0,
                 CDD_E_ARCHIVE, "is a symlink, the manifest lists a regular");
    struct aent fileforsym[] = {{TOP "lib/libcudnn.so", 'f', RUNTIME, 0}};
    expect_linux("file-for-sym.tar", "tar", fileforsym, 1,
                 TOP "lib/libcudnn.so", NULL, 0, CDD_E_ARCHIVE,
                 "is a regular file, the manifest lists a symlink");

    /* dangling: the chain's end is missing from the archive (declared) */
    fs[2].target = "libcudnn.so.7";
    m = mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1, fs, N_LINUX_FILES);
    struct aent dang[] = {{TOP "lib/libcudnn.so", 'l', "libcudnn.so.7", 0}};
    expect_linux("sym-dangling.tar.xz", "tar.xz", dang, 1,
                 TOP "lib/libcudnn.so", m, 0, CDD_E_ARCHIVE,
                 "which is not an entry of the archive");
    cdd_manifest_free(m);
}

/* A non-exact, pinned manifest lets unlisted symlinks in by the layout
 * rules; their targets are checked the same way. */
static void test_symlinks_unlisted(void)
{
    struct cdd_manifest *m = linux_manifest();
    m->files_exact = 0;

    struct aent loop[] = {{TOP "lib/libcudnn_a.so", 'l', "libcudnn_b.so", 0},
                          {TOP "lib/libcudnn_b.so", 'l', "libcudnn_a.so", 0}};
    expect_linux("sym-loop.tar", "tar", loop, 2, NULL, m, 1, CDD_E_UNSAFE,
                 "loops");
    struct aent self[] = {{TOP "lib/libcudnn_s.so", 'l', "libcudnn_s.so", 0}};
    expect_linux("sym-self.tar", "tar", self, 1, NULL, m, 1, CDD_E_UNSAFE,
                 "loops");
    struct aent out[] = {{TOP "lib/libcudnn_x.so", 'l', "../../../etc/passwd", 0}};
    expect_linux("sym-unlisted-out.tar", "tar", out, 1, NULL, m, 1,
                 CDD_E_UNSAFE, "contains '..'");
    struct aent dangle[] = {{TOP "lib/libcudnn_y.so", 'l', "libcudnn_gone.so", 0}};
    expect_linux("sym-unlisted-dangle.tar", "tar", dangle, 1, NULL, m, 1,
                 CDD_E_ARCHIVE, "not an entry of the archive");
    /* a link whose target exists only in another folder */
    struct aent elsewhere[] = {{TOP "lib/libcudnn_z.so", 'l', "cudnn.h", 0}};
    expect_linux("sym-elsewhere.tar", "tar", elsewhere, 1, NULL, m, 1,
                 CDD_E_ARCHIVE, "no entry of the manifest and no layout "
                                "rule places");
    /* a symlink, then a file written "through" it */
    struct aent through[] = {{TOP "lib/libcudnn_d.so", 'l', "libcudnn.so.8.5.0", 0},
                             {TOP "lib/libcudnn_d.so/x.so", 'f', "x", 0}};
    expect_linux("sym-through.tar", "tar", through, 2, NULL, m, 1,
                 CDD_E_UNSAFE, "not a folder");
    /* a good unlisted chain passes */
    struct aent good[] = {{TOP "lib/libcudnn_cnn_infer.so", 'l', "libcudnn_cnn_infer.so.8", 0},
                          {TOP "lib/libcudnn_cnn_infer.so.8", 'l', "libcudnn_cnn_infer.so.8.5.0", 0},
                          {TOP "lib/libcudnn_cnn_infer.so.8.5.0", 'f', "cnn", 0}};
    expect_linux("sym-unlisted-good.tar.xz", "tar.xz", good, 3, NULL, m, 1, 0,
                 NULL);
    cdd_manifest_free(m);
}

static void test_unexpected_missing(void)
{
    struct aent extra = {TOP "lib/libevil.so.1", 'f', "evil", 0};
    expect_linux("unexpected.tar.xz", "tar.xz", &extra, 1, NULL, NULL, 0,
                 CDD_E_ARCHIVE,
                 "unexpected entry lib/libevil.so.1 (not in the manifest)");
    expect_linux("missing.tar.xz", "tar.xz", NULL, 0,
                 TOP "include/cudnn_version.h", NULL, 0, CDD_E_ARCHIVE,
                 "missing entry include/cudnn_version.h");
    /* a symlink's target missing makes the target missing */
    expect_linux("missing-target.tar.xz", "tar.xz", NULL, 0,
                 TOP "lib/libcudnn.so.8.5.0", NULL, 0, CDD_E_ARCHIVE,
                 "missing entry lib/libcudnn.so.8.5.0");
    /* a file above the stripped top folder */
    struct aent top = {"README", 'f', "hi", 0};
    expect_linux("above-top.tar", "tar", &top, 1, NULL, NULL, 0,
                 CDD_E_ARCHIVE, "above the 1 top folder");
    /* an empty archive misses everything */
    struct tsink t = {0};
    struct cdd_manifest *m = linux_manifest();
    write_archive(tmp_path("empty.tar"), "tar", NULL, 0);
    run_x(tmp_path("empty.tar"), m, 0, &t, CDD_E_ARCHIVE, "missing entry");
    cdd_manifest_free(m);
}

static void test_duplicates(void)
{
    struct aent dup = {TOP "include/cudnn.h", 'f', HDR, 0};
    expect_linux("dup.tar.xz", "tar.xz", &dup, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                 "duplicate");
    struct aent cdup = {TOP "include/CUDNN.h", 'f', HDR, 0};
    expect_linux("casedup.tar.xz", "tar.xz", &cdup, 1, NULL, NULL, 0,
                 CDD_E_UNSAFE, "differ only in case");
    /* duplicates created by stripping different top folders */
    struct aent tdup = {"other-top/include/cudnn.h", 'f', HDR, 0};
    expect_linux("topdup.tar", "tar", &tdup, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                 "duplicate");
    /* a file and a folder of the same name */
    struct aent clash = {TOP "LICENSE/x.h", 'f', HDR, 0};
    expect_linux("fileclash.tar", "tar", &clash, 1, NULL, NULL, 0,
                 CDD_E_UNSAFE, "not a folder");
    /* duplicate in a zip */
    const struct aent z[] = {{"t/LICENSE", 'f', LICENSE, 0},
                             {"t/license", 'f', LICENSE, 0}};
    struct tsink t = {0};
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         win_files, N_WIN_FILES);
    write_archive(tmp_path("casedup.zip"), "zip", z, 2);
    run_x(tmp_path("casedup.zip"), m, 0, &t, CDD_E_UNSAFE, "differ only in case");
    cdd_manifest_free(m);
}

static void test_sizes_and_hashes(void)
{
    struct aent bigger[] = {{TOP "include/cudnn.h", 'f', "#define CUDNN_MAJOR 8\n\n", 0}};
    expect_linux("bigger.tar.xz", "tar.xz", bigger, 1, TOP "include/cudnn.h",
                 NULL, 0, CDD_E_ARCHIVE, "the manifest says 22");
    struct aent smaller[] = {{TOP "include/cudnn.h", 'f', "#define", 0}};
    expect_linux("smaller.tar.xz", "tar.xz", smaller, 1, TOP "include/cudnn.h",
                 NULL, 0, CDD_E_ARCHIVE, "size 7 bytes, the manifest says 22");
    /* same size, different bytes */
    struct aent other[] = {{TOP "include/cudnn.h", 'f', "#define CUDNN_MAJOR 9\n", 0}};
    expect_linux("sha.tar.xz", "tar.xz", other, 1, TOP "include/cudnn.h", NULL,
                 0, CDD_E_CHECKSUM, "include/cudnn.h: sha256 ");
    CHECK(strstr(cdd_last_error()->msg, "does not match the manifest's") !=
          NULL);
    /* the expected hash is named in the message */
    {
        struct cdd_manifest *m = linux_manifest();
        char want[CDD_SHA256_HEX];
        cdd_hex_encode(m->files[0].sha256, CDD_SHA256_LEN, want);
        CHECK(strstr(cdd_last_error()->msg, want) != NULL);
        cdd_manifest_free(m);
    }
}

/* A zip whose headers say 300 KiB and whose data inflates to 64 MiB of
 * zeros: the header check passes, so the inflater (inflate_int.h) stops it
 * at the central directory's size -- the zip lies about itself, which is
 * corruption -- with nothing beyond it written. The manifest's bound, the
 * second line of defence, stops the same bomb in a tar.xz below. */
static void test_bomb(void)
{
    const char *file = tmp_path("bomb.zip");
    const char *out = tmp_path("bomb-out");
    const struct aent z[] = {{"t/bin/cudnn64_8.dll", 'f', NULL, 64u << 20}};
    const struct mspec f[] = {{"bin/cudnn64_8.dll", CDD_ROLE_RUNTIME, NULL,
                               NULL, 300 * 1024}};
    struct cdd_manifest *m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         f, 1);
    struct tsink t = {0};
    struct stat st;
    size_t len = 0;
    unsigned char *b;

    write_archive(file, "zip", z, 1);
    b = fx_read(file, &len);
    free(b);
    CHECK_MSG(len < (1u << 20), "bomb is %zu bytes", len);
    zip_lie_size(file, 300 * 1024);

    cdd_fs_remove_tree(out);
    cdd_fs_mkdirs(out, NULL);
    t.outdir = out;
    run_x(file, m, 0, &t, CDD_E_CORRUPT,
          "inflates to more than the central directory's size");
    /* written: whole blocks within the bound, never past it */
    CHECK(stat(tmp_path("bomb-out/bin_cudnn64_8.dll"), &st) == 0);
    CHECK_MSG(st.st_size > 0 && st.st_size <= 300 * 1024,
              "wrote %lld bytes", (long long)st.st_size);
    cdd_manifest_free(m);

    /* 1 KiB in the manifest, honest headers: refused before any data */
    const struct mspec f1[] = {{"bin/cudnn64_8.dll", CDD_ROLE_RUNTIME, NULL,
                                NULL, 1024}};
    m = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1, f1, 1);
    write_archive(tmp_path("bomb-honest.zip"), "zip", z, 1);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("bomb-honest.zip"), m, 0, &t, CDD_E_ARCHIVE,
          "the manifest says 1024");
    CHECK_INT(t.n_begin, 0);
    /* lying to 1 KiB: stops after 1 KiB, at the record's size */
    zip_lie_size(tmp_path("bomb-honest.zip"), 1024);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("bomb-honest.zip"), m, 0, &t, CDD_E_CORRUPT,
          "inflates to more than the central directory's size");
    cdd_manifest_free(m);

    /* and in a tar.xz: 64 MiB of zeros against 1 KiB */
    struct aent tz = {TOP "lib/libcudnn_bomb.so.8", 'f', NULL, 64u << 20};
    const struct mspec fb[] = {{"lib/libcudnn_bomb.so.8", CDD_ROLE_RUNTIME,
                                NULL, NULL, 1024}};
    struct cdd_manifest *mb = linux_manifest();
    /* append the bomb's row to the Linux manifest */
    struct cdd_manifest *one = mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 1,
                                           fb, 1);
    mb->files = realloc(mb->files, (mb->n_files + 1) * sizeof *mb->files);
    mb->files[mb->n_files++] = one->files[0];
    one->n_files = 0;
    cdd_manifest_free(one);
    expect_linux("bomb.tar.xz", "tar.xz", &tz, 1, NULL, mb, 0, CDD_E_ARCHIVE,
                 "the manifest says 1024");
    cdd_manifest_free(mb);
}

static void test_corrupt(void)
{
    size_t len;
    unsigned char *b;
    struct tsink t = {0};
    struct cdd_manifest *m = linux_manifest();

    /* truncated tar.xz, at several points */
    struct aent big = {TOP "lib/libcudnn_big.so.8", 'f', NULL, 4u << 20};
    struct aent ents[N_LINUX + 1];
    memcpy(ents, linux_good, sizeof linux_good);
    ents[N_LINUX] = big;
    write_archive(tmp_path("full.tar.xz"), "tar.xz", ents, N_LINUX + 1);
    b = fx_read(tmp_path("full.tar.xz"), &len);
    m->files_exact = 0;
    for (int cut = 1; cut <= 4; cut++) {
        fx_write(tmp_path("trunc.tar.xz"), b, len - (size_t)cut * len / 5);
        memset(&t, 0, sizeof t);
        run_x(tmp_path("trunc.tar.xz"), m, 1, &t, CDD_E_CORRUPT, NULL);
    }
    /* just the last few bytes (xz index/footer) missing */
    fx_write(tmp_path("trunc2.tar.xz"), b, len - 12);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("trunc2.tar.xz"), m, 1, &t, CDD_E_CORRUPT, NULL);
    free(b);

    /* a plain tar cut in the middle of an entry's data */
    write_archive(tmp_path("full.tar"), "tar", ents, N_LINUX + 1);
    b = fx_read(tmp_path("full.tar"), &len);
    fx_write(tmp_path("trunc.tar"), b, len - (2u << 20));
    memset(&t, 0, sizeof t);
    run_x(tmp_path("trunc.tar"), m, 1, &t, CDD_E_CORRUPT, "Truncated");
    free(b);

    /* a tar header with a damaged checksum */
    write_archive(tmp_path("hdr.tar"), "tar", linux_good, N_LINUX);
    b = fx_read(tmp_path("hdr.tar"), &len);
    b[512 * 2 + 10] ^= 0x55; /* in include/cudnn.h's header: its name */
    fx_write(tmp_path("hdr.tar"), b, len);
    free(b);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("hdr.tar"), m, 1, &t, CDD_E_CORRUPT, NULL);
    cdd_manifest_free(m);

    /* a pax header libarchive would ignore as malformed: another tool may
     * read that entry under another name, so the warning is refused */
    {
        char longname[200];
        long at;
        /* a 120-byte last component does not fit ustar's 100-byte name */
        snprintf(longname, sizeof longname, "%sinclude/%s.h", TOP,
                 "cudnn_a_very_long_header_name_that_needs_a_pax_path_record_"
                 "because_ustar_holds_only_one_hundred_bytes_in_its_name_field");
        struct aent ln[] = {{longname, 'f', "x", 0}};
        write_archive(tmp_path("pax.tar"), "tar", ln, 1);
        b = fx_read(tmp_path("pax.tar"), &len);
        at = -1;
        for (size_t i = 0; i + 6 <= len && at < 0; i++)
            if (memcmp(b + i, " path=", 6) == 0)
                at = (long)i;
        CHECK(at > 2);
        if (at > 2) {
            long d = at;
            while (d > 0 && b[d - 1] >= '0' && b[d - 1] <= '9')
                d--;
            b[d] = '9'; /* record length now runs past the header */
        }
        fx_write(tmp_path("pax.tar"), b, len);
        free(b);
        struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
        CHECK_INT(cdd_extract(tmp_path("pax.tar"), &o, NULL), CDD_E_CORRUPT);
        fprintf(stderr, "    pax.tar -> %s\n", cdd_last_error()->msg);
    }

    /* zip: stored entry with one byte flipped -> CRC */
    struct cdd_manifest *w = mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 1,
                                         win_files, N_WIN_FILES);
    write_archive(tmp_path("crc.zip"), "zip-store", win_good, N_WIN);
    b = fx_read(tmp_path("crc.zip"), &len);
    for (size_t i = 0; i + 6 < len; i++)
        if (memcmp(b + i, "NVIDIA", 6) == 0) {
            b[i] = 'X';
            break;
        }
    fx_write(tmp_path("crc.zip"), b, len);
    free(b);
    memset(&t, 0, sizeof t);
    /* the manifest has no sha256 for it: only the CRC can catch it */
    w->files[3].has_sha256 = 0;
    run_x(tmp_path("crc.zip"), w, 0, &t, CDD_E_CORRUPT, "CRC");

    /* zip cut short: no central directory */
    write_archive(tmp_path("cut.zip"), "zip", win_good, N_WIN);
    b = fx_read(tmp_path("cut.zip"), &len);
    fx_write(tmp_path("cut.zip"), b, len / 2);
    free(b);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("cut.zip"), w, 0, &t, CDD_E_CORRUPT, NULL);

    /* not an archive at all, and no file */
    fx_write(tmp_path("garbage.zip"), (const unsigned char *)"hello, not a zip\n",
          17);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("garbage.zip"), w, 0, &t, CDD_E_CORRUPT, NULL);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("does-not-exist.zip"), w, 0, &t, CDD_E_NOTFOUND, NULL);
    cdd_manifest_free(w);
}

/* files_exact false: unlisted entries only from a pinned archive, only where
 * a layout rule places them. */
static void test_pinned_unlisted(void)
{
    struct cdd_manifest *m = linux_manifest();
    struct aent extra[] = {
        {TOP "include/cudnn_ops_infer_v8.h", 'f', "ops header", 0},
        {TOP "lib/libcudnn_cnn_train.so.8.5.0", 'f', "cnn train", 0},
        {TOP "lib/libcudnn_cnn_train.so.8", 'l', "libcudnn_cnn_train.so.8.5.0", 0},
        {TOP "lib/libcudnn_cnn_train_static.a", 'f', "static", 0},
    };
    struct aent ents[N_LINUX + 4];
    struct tsink t = {0};
    int i;

    m->files_exact = 0;
    memcpy(ents, linux_good, sizeof linux_good);
    memcpy(ents + N_LINUX, extra, sizeof extra);
    write_archive(tmp_path("unlisted.tar.xz"), "tar.xz", ents, N_LINUX + 4);

    /* unpinned: refused */
    run_x(tmp_path("unlisted.tar.xz"), m, 0, &t, CDD_E_ARCHIVE,
          "unexpected entry include/cudnn_ops_infer_v8.h");
    CHECK(strstr(cdd_last_error()->msg, "not pinned") != NULL);
    /* pinned: accepted with roles by the layout rules */
    memset(&t, 0, sizeof t);
    run_x(tmp_path("unlisted.tar.xz"), m, 1, &t, 0, NULL);
    CHECK_INT(t.n_end, (int)N_LINUX_FILES + 4);
    i = ts_find(&t, "include/cudnn_ops_infer_v8.h");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_HEADER && !t.listed[i]);
    i = ts_find(&t, "lib/libcudnn_cnn_train.so.8.5.0");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_RUNTIME && t.size[i] == 9);
    i = ts_find(&t, "lib/libcudnn_cnn_train.so.8");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_SYMLINK);
    i = ts_find(&t, "lib/libcudnn_cnn_train_static.a");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_STATIC_LIB);

    /* pinned, but no rule fits */
    struct aent odd = {TOP "bin/setup.exe", 'f', "MZ", 0};
    expect_linux("unlisted-norule.tar", "tar", &odd, 1, NULL, m, 1,
                 CDD_E_ARCHIVE, "no layout rule");
    /* pinned with an exact manifest: still refused */
    m->files_exact = 1;
    memset(&t, 0, sizeof t);
    run_x(tmp_path("unlisted.tar.xz"), m, 1, &t, CDD_E_ARCHIVE,
          "unexpected entry");
    /* missing listed entries are still missing in non-exact mode */
    m->files_exact = 0;
    expect_linux("unlisted-missing.tar", "tar", NULL, 0, TOP "LICENSE", m, 1,
                 CDD_E_ARCHIVE, "missing entry LICENSE");
    cdd_manifest_free(m);
}

/* The real 8.x shape: `_v8` header twins and lib*_static_v8.a, as files
 * or as symlinks to a file of their folder, listed or not. A symlink is
 * placed by what it points at (link_role), whatever its own name says. */
static void test_v8_shape(void)
{
    struct cdd_manifest *m = linux_manifest();
    struct aent extra[] = {
        /* unlisted links to listed files */
        {TOP "lib/libcudnn_static_v8.a", 'l', "libcudnn_static.a", 0},
        {TOP "include/cudnn_v8.h", 'l', "cudnn.h", 0},
        /* unlisted link to an unlisted file, the link first */
        {TOP "lib/libcudnn_ops_infer_static_v8.a", 'l',
         "libcudnn_ops_infer_static.a", 0},
        {TOP "lib/libcudnn_ops_infer_static.a", 'f', "ops static", 0},
        /* a _v8 twin as a file */
        {TOP "include/cudnn_version_v8.h", 'f', VHDR, 0},
    };
    struct aent ents[N_LINUX + 5];
    struct tsink t = {0};
    int i;

    m->files_exact = 0;
    memcpy(ents, linux_good, sizeof linux_good);
    memcpy(ents + N_LINUX, extra, sizeof extra);
    write_archive(tmp_path("v8.tar.xz"), "tar.xz", ents, N_LINUX + 5);
    /* unpinned: the unlisted entries are refused */
    run_x(tmp_path("v8.tar.xz"), m, 0, &t, CDD_E_ARCHIVE, "not pinned");
    memset(&t, 0, sizeof t);
    CHECK_INT(run_x(tmp_path("v8.tar.xz"), m, 1, &t, 0, NULL), 0);
    CHECK_INT(t.n_end, (int)N_LINUX_FILES + 5);
    i = ts_find(&t, "lib/libcudnn_static_v8.a");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_SYMLINK &&
          t.link_role[i] == CDD_ROLE_STATIC_LIB && !t.listed[i]);
    i = ts_find(&t, "include/cudnn_v8.h");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_SYMLINK &&
          t.link_role[i] == CDD_ROLE_HEADER);
    i = ts_find(&t, "lib/libcudnn_ops_infer_static_v8.a");
    CHECK(i >= 0 && t.link_role[i] == CDD_ROLE_STATIC_LIB);
    i = ts_find(&t, "include/cudnn_version_v8.h");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_HEADER);
    /* the .so links are placed as the runtime they end at */
    i = ts_find(&t, "lib/libcudnn.so");
    CHECK(i >= 0 && t.link_role[i] == CDD_ROLE_RUNTIME && t.listed[i]);

    /* a twin link whose target is not there dangles */
    struct aent dangle[] = {{TOP "include/cudnn_gone_v8.h", 'l',
                             "cudnn_gone.h", 0}};
    expect_linux("v8-dangle.tar", "tar", dangle, 1, NULL, m, 1, CDD_E_ARCHIVE,
                 "not an entry of the archive");
    /* a link the rules cannot place by its target's name */
    struct aent norule[] = {{TOP "include/cudnn_x.h", 'l', "README", 0},
                            {TOP "include/README", 'f', "hi", 0}};
    expect_linux("v8-norule.tar", "tar", norule, 2, NULL, m, 1, CDD_E_ARCHIVE,
                 "no layout rule places");
    /* a chain through an unlisted link whose name says runtime but which
     * ends at a header: the first link would land apart from its end */
    static const struct mspec odd_files[] = {
        {"lib/cudnn_extra.h", CDD_ROLE_HEADER, "x", NULL, 0},
    };
    struct cdd_manifest *m2 =
        mk_manifest(CDD_PLATFORM_LINUX_X86_64, 1, 0, odd_files, 1);
    struct aent apart[] = {
        {TOP "lib/libq.so", 'l', "libq.so.1", 0},
        {TOP "lib/libq.so.1", 'l', "cudnn_extra.h", 0},
        {TOP "lib/cudnn_extra.h", 'f', "x", 0},
    };
    write_archive(tmp_path("v8-apart.tar"), "tar", apart, 3);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("v8-apart.tar"), m2, 1, &t, CDD_E_ARCHIVE,
          "would not land beside its target");
    cdd_manifest_free(m2);
    /* Windows archives have no symlinks, listed or not */
    static const struct mspec win_dll[] = {
        {"bin/cudnn64_8.dll", CDD_ROLE_RUNTIME, "dll", NULL, 0},
    };
    struct cdd_manifest *mw =
        mk_manifest(CDD_PLATFORM_WINDOWS_X86_64, 1, 0, win_dll, 1);
    struct aent wl[] = {{TOP "bin/cudnn64_8.dll", 'f', "dll", 0},
                        {TOP "bin/cudnn.dll", 'l', "cudnn64_8.dll", 0}};
    write_archive(tmp_path("win-link.tar"), "tar", wl, 2);
    memset(&t, 0, sizeof t);
    run_x(tmp_path("win-link.tar"), mw, 1, &t, CDD_E_ARCHIVE,
          "no layout rule places");
    cdd_manifest_free(mw);
    cdd_manifest_free(m);
}

/* manifest create: no manifest, all safety checks, roles by the rules. */
static void test_discovery(void)
{
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1,
                                 .has_platform = 1,
                                 .platform = CDD_PLATFORM_LINUX_X86_64};
    struct tsink t = {0};
    struct cdd_extract_sink s = {&t, ts_begin, ts_end, ts_progress, NULL};
    struct aent ents[N_LINUX + 2];
    int i;

    write_archive(tmp_path("disc.tar.xz"), "tar.xz", linux_good, N_LINUX);
    CHECK_INT(cdd_extract(tmp_path("disc.tar.xz"), &o, &s), 0);
    CHECK_INT(t.n_end, (int)N_LINUX_FILES);
    i = ts_find(&t, "lib/libcudnn.so.8.5.0");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_RUNTIME && !t.listed[i] &&
          t.size[i] == strlen(RUNTIME));
    i = ts_find(&t, "lib/libcudnn.so");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_SYMLINK);

    /* an entry no rule places: role unknown, still passed on */
    memcpy(ents, linux_good, sizeof linux_good);
    ents[N_LINUX] = (struct aent){TOP "README.md", 'f', "readme", 0};
    write_archive(tmp_path("disc2.tar"), "tar", ents, N_LINUX + 1);
    memset(&t, 0, sizeof t);
    CHECK_INT(cdd_extract(tmp_path("disc2.tar"), &o, &s), 0);
    i = ts_find(&t, "README.md");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_COUNT);
    /* without a platform no file gets a role */
    o.has_platform = 0;
    memset(&t, 0, sizeof t);
    CHECK_INT(cdd_extract(tmp_path("disc2.tar"), &o, &s), 0);
    i = ts_find(&t, "include/cudnn.h");
    CHECK(i >= 0 && t.role[i] == CDD_ROLE_COUNT);

    /* unsafe archives are refused in discovery too */
    ents[N_LINUX] = (struct aent){TOP "lib/h", 'h', TOP "LICENSE", 0};
    write_archive(tmp_path("disc3.tar"), "tar", ents, N_LINUX + 1);
    memset(&t, 0, sizeof t);
    CHECK_INT(cdd_extract(tmp_path("disc3.tar"), &o, &s), CDD_E_UNSAFE);
    ents[N_LINUX] = (struct aent){TOP "lib/l", 'l', "../../x", 0};
    write_archive(tmp_path("disc4.tar"), "tar", ents, N_LINUX + 1);
    CHECK_INT(cdd_extract(tmp_path("disc4.tar"), &o, &s), CDD_E_UNSAFE);
    ents[N_LINUX] = (struct aent){TOP "lib/L", 'l', "libcudnn.so.8.5.0", 0};
    ents[N_LINUX + 1] = (struct aent){TOP "lib/l", 'f', "x", 0};
    write_archive(tmp_path("disc5.tar"), "tar", ents, N_LINUX + 2);
    CHECK_INT(cdd_extract(tmp_path("disc5.tar"), &o, &s), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "differ only in case") != NULL);
    /* a folder first, then a file of its name (case-insensitively) */
    ents[N_LINUX] = (struct aent){TOP "include/sub/a.h", 'f', "a", 0};
    ents[N_LINUX + 1] = (struct aent){TOP "include/SUB", 'f', "x", 0};
    write_archive(tmp_path("disc6.tar"), "tar", ents, N_LINUX + 2);
    CHECK_INT(cdd_extract(tmp_path("disc6.tar"), &o, &s), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "also a folder") != NULL);
    CHECK_INT(t.open_files, 0);
}

/* Non-ASCII names (UTF-8 in pax records, in ustar headers, under zip's
 * UTF-8 flag) arrive as the same UTF-8 on every platform, whatever the
 * process locale (the tests run in "C"; msvcrt.dll has no UTF-8 locale):
 * Latin, CJK, Cyrillic, one outside the BMP (a surrogate pair in Windows'
 * wide form), and a decomposed one, which libarchive composes (NFC) -- in
 * tar only: in a zip, the composed name would differ from the central
 * directory's bytes, which other readers use as they are, so it is refused
 * (test_zipcd.c, test_nfd_name_refused). */
static void test_unicode_names(void)
{
    static const char *kinds[] = {"pax.xz", "pax", "zip", "ustar"};
    const struct aent ents[] = {
        {"top/include/caf\xc3\xa9.h", 'f', "e", 0},
        {"top/include/\xe6\x95\xb0\xe6\x8d\xae.h", 'f', "cn", 0},
        {"top/include/\xd0\xb4\xd0\xbe\xd0\xbc.h", 'f', "ru", 0},
        {"top/include/Zo\xc3\xab.h", 'f', "zoe", 0},
        {"top/include/\xf0\x9f\x93\x90.h", 'f', "ruler", 0},
        {"top/include/nfd-cafe\xcc\x81.h", 'f', "nfd", 0},
    };
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1,
                                 .has_platform = 1,
                                 .platform = CDD_PLATFORM_LINUX_X86_64};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char name[64];
        struct tsink t = {0};
        struct cdd_extract_sink s = {&t, ts_begin, ts_end, NULL, NULL};
        int zip = strcmp(kinds[k], "zip") == 0;
        snprintf(name, sizeof name, "unicode.%s", kinds[k]);
        if (strncmp(kinds[k], "pax", 3) == 0)
            write_pax_by_hand(tmp_path(name), kinds[k][3] == '.', ents, 6);
        else
            write_archive(tmp_path(name), kinds[k], ents, zip ? 5 : 6);
        CHECK_MSG(cdd_extract(tmp_path(name), &o, &s) == 0, "%s: %s", name,
                  cdd_last_error()->msg);
        CHECK_MSG(ts_find(&t, "include/caf\xc3\xa9.h") >= 0, "%s", name);
        CHECK(ts_find(&t, "include/\xe6\x95\xb0\xe6\x8d\xae.h") >= 0);
        CHECK(ts_find(&t, "include/\xd0\xb4\xd0\xbe\xd0\xbc.h") >= 0);
        CHECK_MSG(ts_find(&t, "include/Zo\xc3\xab.h") >= 0, "%s", name);
        CHECK_MSG(ts_find(&t, "include/\xf0\x9f\x93\x90.h") >= 0, "%s", name);
        CHECK_MSG(zip || ts_find(&t, "include/nfd-caf\xc3\xa9.h") >= 0, "%s",
                  name);
        CHECK(t.n_end == (zip ? 5 : 6) && t.role[0] == CDD_ROLE_HEADER);
    }
}

/* Replace every 'from' in a file by 'to' (as long); returns the count. */
static int patch_bytes(const char *file, const char *from, const char *to)
{
    size_t len, n = strlen(from);
    unsigned char *b = fx_read(file, &len);
    int count = 0;
    for (size_t i = 0; i + n <= len; i++)
        if (memcmp(b + i, from, n) == 0) {
            memcpy(b + i, to, n);
            count++;
        }
    fx_write(file, b, len);
    free(b);
    return count;
}

/* Clear the UTF-8 flag (bit 11) in every local and central header. */
static void zip_clear_utf8_flag(const char *file)
{
    size_t len;
    unsigned char *b = fx_read(file, &len);
    int n = 0;
    for (long at = find_sig(b, len, "PK\3\4", 0); at >= 0;
         at = find_sig(b, len, "PK\3\4", (size_t)at + 4), n++)
        b[at + 7] &= (unsigned char)~0x08;
    for (long at = find_sig(b, len, "PK\1\2", 0); at >= 0;
         at = find_sig(b, len, "PK\1\2", (size_t)at + 4), n++)
        b[at + 9] &= (unsigned char)~0x08;
    CHECK(n >= 2);
    fx_write(file, b, len);
    free(b);
}

/* Zip names without the UTF-8 flag are read as UTF-8 (what Debian's zip
 * writes), not as the CP437 of the specification: such a name comes out
 * as written, and CP437 bytes, which are not UTF-8, are refused rather than
 * turned into another name. */
static void test_zip_unflagged_names(void)
{
    const struct aent z[] = {{"top/include/Zo\xc3\xab.h", 'f', "x", 0}};
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
    struct tsink t = {0};
    struct cdd_extract_sink s = {&t, ts_begin, ts_end, NULL, NULL};
    const char *file = tmp_path("unflagged.zip");

    write_archive(file, "zip", z, 1);
    zip_clear_utf8_flag(file);
    CHECK_MSG(cdd_extract(file, &o, &s) == 0, "%s", cdd_last_error()->msg);
    CHECK(ts_find(&t, "include/Zo\xc3\xab.h") >= 0);

    /* "Zo\x89_.h": 0x89 is CP437's e-diaeresis */
    CHECK(patch_bytes(file, "Zo\xc3\xab", "Zo\x89_") >= 2);
    CHECK_INT(cdd_extract(file, &o, NULL), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "not valid UTF-8") != NULL);
    fprintf(stderr, "    unflagged cp437 -> %s\n", cdd_last_error()->msg);
}

/* A tar name that is not UTF-8 (Latin-1 bytes, in a ustar header or a pax
 * record marked BINARY) is refused on every platform: libarchive drops it
 * (ustar) or keeps the stored bytes (pax), which are checked as they are.
 * On Windows their wide form would read them as Latin-1: a valid name that
 * other platforms never see. */
static void test_tar_undecodable_name(void)
{
    const struct aent ents[] = {{"top/include/Zo\xeb.h", 'f', "x", 0}};
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
    const char *kinds[] = {"ustar", "tar"};
    for (int k = 0; k < 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "latin1.%s", kinds[k]);
        write_archive(tmp_path(name), kinds[k], ents, 1);
        CHECK_INT(cdd_extract(tmp_path(name), &o, NULL), CDD_E_UNSAFE);
        CHECK_MSG(strstr(cdd_last_error()->msg, "UTF-8") != NULL,
                  "%s: %s", name, cdd_last_error()->msg);
        fprintf(stderr, "    %s -> %s\n", name, cdd_last_error()->msg);
    }
}

/* A zip member name flagged UTF-8: a reserved name spelt with a
 * superscript digit (COM¹, which Windows treats as COM1) is seen as such,
 * and bytes that are not UTF-8 are refused as an unsafe name, not passed on
 * mangled. The archive's own file name is harmless: a file named com1.zip
 * would be the device COM1 on Windows. */
static void test_zip_utf8_flag(void)
{
    const struct aent z[] = {{"top/bin/COM\xc2\xb9.dll", 'f', "x", 0}};
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
    const char *file = tmp_path("reserved-name.zip");
    size_t len;
    unsigned char *b;
    int n = 0;

    write_archive(file, "zip", z, 1);
    CHECK_INT(cdd_extract(file, &o, NULL), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "reserved") != NULL);
    fprintf(stderr, "    reserved-name.zip -> %s\n", cdd_last_error()->msg);

    /* make the name overlong UTF-8 (C0 AF is '/') in every header */
    b = fx_read(file, &len);
    for (size_t i = 0; i + 2 <= len; i++)
        if (b[i] == 0xc2 && b[i + 1] == 0xb9) {
            b[i] = 0xc0;
            b[i + 1] = 0xaf;
            n++;
        }
    CHECK(n >= 2);
    fx_write(tmp_path("overlong.zip"), b, len);
    free(b);
    CHECK_INT(cdd_extract(tmp_path("overlong.zip"), &o, NULL), CDD_E_UNSAFE);
    fprintf(stderr, "    overlong.zip -> %s\n", cdd_last_error()->msg);
}

/* The sink's failures end the run at once and leak nothing. */
static void test_sink_failures(void)
{
    const char *file = tmp_path("sinkfail.tar.xz");
    const char *out = tmp_path("sinkfail-out");
    struct cdd_manifest *m = linux_manifest();
    struct tsink t = {0};

    write_archive(file, "tar.xz", linux_good, N_LINUX);
    cdd_fs_remove_tree(out);
    cdd_fs_mkdirs(out, NULL);
    t.outdir = out;
    t.fail_begin_at = 2;
    run_x(file, m, 0, &t, CDD_E_IO, "begin fails on purpose");
    CHECK_INT(t.n_begin, 2);
    CHECK_INT(t.n_end, 1);
    CHECK_INT(t.open_files, 0);

    cdd_fs_remove_tree(out);
    cdd_fs_mkdirs(out, NULL);
    memset(&t, 0, sizeof t);
    t.outdir = out;
    t.fail_end_at = 3;
    run_x(file, m, 0, &t, CDD_E_IO, "end fails on purpose");
    CHECK_INT(t.n_end, 3);

    /* cancellation (Ctrl-C) between blocks */
    cdd_fs_remove_tree(out);
    cdd_fs_mkdirs(out, NULL);
    memset(&t, 0, sizeof t);
    t.outdir = out;
    t.cancel_in_begin = 1;
    run_x(file, m, 0, &t, CDD_E_INTERRUPTED, "interrupted");
    CHECK_INT(t.n_begin, 1);
    CHECK_INT(t.open_files, 1); /* handed out, then aborted by cdd_extract */
    cdd_cancel_reset();
    cdd_manifest_free(m);

    /* no sink at all: a pure check */
    struct cdd_manifest *m2 = linux_manifest();
    struct cdd_extract_opts o = {.m = m2};
    CHECK_INT(cdd_extract(file, &o, NULL), 0);
    struct cdd_extract_sink empty = {0};
    CHECK_INT(cdd_extract(file, &o, &empty), 0);
    cdd_manifest_free(m2);
}

/* archive.c on its own: types, sizes, link targets, format names. */
static void test_archive_reader(void)
{
    static const struct aent ents[] = {
        {"top/", 'd', NULL, 0},
        {"top/f", 'f', "12345", 0},
        {"top/l", 'l', "f", 0},
        {"top/h", 'h', "top/f", 0},
        {"top/p", 'p', NULL, 0},
    };
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry e;
    char buf[16];
    size_t got = 0;

    write_archive(tmp_path("reader.tar.gz"), "tar.gz", ents, 5);
    CHECK_INT(cdd_archive_open(tmp_path("reader.tar.gz"), &a), 0);
    if (!a)
        return;
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_STR(e.path, "top/");
    CHECK_INT(e.type, CDD_ENTRY_DIR);
    CHECK(strstr(cdd_archive_format(a), "tar") != NULL ||
          strstr(cdd_archive_format(a), "pax") != NULL);
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_FILE);
    CHECK(e.size_known && e.size == 5);
    CHECK_INT(cdd_archive_read(a, buf, 3, &got), 0);
    CHECK_INT(got, 3);
    CHECK_INT(cdd_archive_read(a, buf + 3, sizeof buf - 3, &got), 0);
    CHECK_INT(got, 2);
    CHECK(memcmp(buf, "12345", 5) == 0);
    CHECK_INT(cdd_archive_read(a, buf, sizeof buf, &got), 0);
    CHECK_INT(got, 0);
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_SYMLINK);
    CHECK_STR(e.link_target, "f");
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_HARDLINK);
    CHECK_STR(e.link_target, "top/f");
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_OTHER);
    CHECK_INT(cdd_archive_next(a, &e), 1);
    CHECK(cdd_archive_bytes_read(a) <= cdd_archive_file_size(a));
    cdd_archive_close(a);
    cdd_archive_close(NULL);

    /* zip symlinks come through as symlinks */
    write_archive(tmp_path("reader.zip"), "zip", ents, 3);
    a = NULL;
    CHECK_INT(cdd_archive_open(tmp_path("reader.zip"), &a), 0);
    if (!a)
        return;
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_MSG(strstr(cdd_archive_format(a), "ZIP") != NULL, "format %s",
              cdd_archive_format(a));
    CHECK_INT(e.type, CDD_ENTRY_DIR);
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_FILE);
    CHECK_INT(cdd_archive_next(a, &e), 0);
    CHECK_INT(e.type, CDD_ENTRY_SYMLINK);
    CHECK_STR(e.link_target, "f");
    CHECK_INT(cdd_archive_next(a, &e), 1);
    cdd_archive_close(a);
}

/* Names in messages are escaped: an entry cannot write to the terminal. */
static void test_message_escaping(void)
{
    struct aent e = {TOP "lib/\033]0;pwned\007", 'f', "x", 0};
    expect_linux("escape.tar", "tar", &e, 1, NULL, NULL, 0, CDD_E_UNSAFE,
                 "\\x1b]0;pwned\\x07");
    CHECK(strchr(cdd_last_error()->msg, '\033') == NULL);
}

static void test_sha256_file(void)
{
    uint8_t d[CDD_SHA256_LEN];
    char hex[CDD_SHA256_HEX];
    uint64_t size = 0;
    uint8_t back[CDD_SHA256_LEN];
    fx_write(tmp_path("abc.txt"), (const unsigned char *)"abc", 3);
    CHECK_INT(cdd_sha256_file(tmp_path("abc.txt"), d, &size), 0);
    cdd_hex_encode(d, CDD_SHA256_LEN, hex);
    CHECK_STR(hex,
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK_INT(size, 3);
    CHECK_INT(cdd_hex_decode(hex, back, CDD_SHA256_LEN), 0);
    CHECK(memcmp(back, d, CDD_SHA256_LEN) == 0);
    CHECK_INT(cdd_hex_decode("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD",
                             back, CDD_SHA256_LEN), 0);
    CHECK(memcmp(back, d, CDD_SHA256_LEN) == 0);
    CHECK_INT(cdd_hex_decode("ba78", back, CDD_SHA256_LEN), -1);
    CHECK_INT(cdd_hex_decode("zz", back, 1), -1);
    CHECK_INT(cdd_hex_decode("abc", back, 1), -1);
    /* empty file */
    fx_write(tmp_path("empty.txt"), (const unsigned char *)"", 0);
    CHECK_INT(cdd_sha256_file(tmp_path("empty.txt"), d, NULL), 0);
    cdd_hex_encode(d, CDD_SHA256_LEN, hex);
    CHECK_STR(hex,
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK_INT(cdd_sha256_file(tmp_path("nope.txt"), d, NULL), CDD_E_NOTFOUND);
    /* a file larger than one block, hashed in pieces, equals one update */
    {
        unsigned char *big = malloc(600 * 1024);
        struct cdd_sha256 *h = NULL;
        uint8_t d2[CDD_SHA256_LEN];
        for (size_t i = 0; i < 600 * 1024; i++)
            big[i] = (unsigned char)(i * 7);
        fx_write(tmp_path("big.bin"), big, 600 * 1024);
        CHECK_INT(cdd_sha256_file(tmp_path("big.bin"), d, &size), 0);
        CHECK_INT(size, 600 * 1024);
        cdd_sha256_new(&h);
        cdd_sha256_update(h, big, 600 * 1024);
        cdd_sha256_final(h, d2);
        CHECK(memcmp(d, d2, CDD_SHA256_LEN) == 0);
        /* reuse after reset */
        cdd_sha256_reset(h);
        cdd_sha256_update(h, "abc", 3);
        cdd_sha256_final(h, d2);
        cdd_hex_encode(d2, CDD_SHA256_LEN, hex);
        CHECK_STR(hex,
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        cdd_sha256_free(h);
        cdd_sha256_free(NULL);
        free(big);
    }
}

static void test_cleanup(void)
{
    /* leave nothing behind unless asked to keep it */
    if (!getenv("CDD_TEST_KEEP"))
        CHECK_INT(cdd_fs_remove_tree(fx_root()), 0);
}

TEST_MAIN(TEST(test_sha256_file), TEST(test_archive_reader),
          TEST(test_good_tar_xz), TEST(test_good_other_compressions),
          TEST(test_good_zip), TEST(test_zip_cuda_top),
          TEST(test_unsafe_names), TEST(test_name_bounds),
          TEST(test_hardlink_and_devices),
          TEST(test_symlinks), TEST(test_symlinks_unlisted),
          TEST(test_unexpected_missing), TEST(test_duplicates),
          TEST(test_sizes_and_hashes), TEST(test_bomb), TEST(test_corrupt),
          TEST(test_pinned_unlisted), TEST(test_v8_shape),
          TEST(test_discovery),
          TEST(test_unicode_names), TEST(test_zip_unflagged_names),
          TEST(test_tar_undecodable_name), TEST(test_zip_utf8_flag),
          TEST(test_sink_failures), TEST(test_message_escaping),
          TEST(test_cleanup))
