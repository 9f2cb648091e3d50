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
 * archive can never look like a short, successful one. */
#include "cdd/archive.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <archive.h>
#include <archive_entry.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"

/* libarchive reads the file in blocks of this size (at least 10240). Large
 * blocks mean fewer system calls on archives of hundreds of MB. */
#define READ_BLOCK (256 * 1024)

struct cdd_archive {
    struct archive *a;
    struct archive_entry *cur; /* owned by a; valid until the next header */
    char *path;                /* the archive file, for messages */
    uint64_t file_size;
    int failed;                /* a libarchive call failed: refuse more */
};

static const char *la_msg(struct archive *a)
{
    const char *s = archive_error_string(a);
    return s && *s ? s : "unknown libarchive error";
}

static const char *cur_name(struct cdd_archive *ar, char *buf, size_t len)
{
    const char *p = NULL;
    if (ar->cur) {
        p = archive_entry_pathname_utf8(ar->cur);
        if (!p)
            p = archive_entry_pathname(ar->cur);
    }
    return cdd_path_printable(p ? p : "", buf, len);
}

static int corrupt(struct cdd_archive *ar, const char *what)
{
    char name[512];
    ar->failed = 1;
    if (ar->cur)
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "entry \"%s\": %s: %s",
                        cur_name(ar, name, sizeof name), what, la_msg(ar->a));
    return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "%s: %s", what, la_msg(ar->a));
}

/* Register a filter only when libarchive decodes it itself: on a scratch
 * reader, ARCHIVE_WARN from a support call means "only through an external
 * program". */
static void add_filter(struct archive *a, int (*support)(struct archive *))
{
    struct archive *probe = archive_read_new();
    int ok = probe && support(probe) == ARCHIVE_OK;
    archive_read_free(probe);
    if (ok)
        support(a);
}

int cdd_archive_open(const char *path, struct cdd_archive **out)
{
    struct cdd_archive *ar = NULL;
    struct cdd_rfile *f = NULL;
    int r = 0;

    *out = NULL;
    /* Through fsops first: a missing or unreadable file gets the same
     * NOTFOUND / PERM / IO code as everywhere else, and the size (following
     * a symlink the user named) is what progress is measured against. */
    if ((r = cdd_fs_open_read(path, &f)) < 0)
        goto out;
    ar = calloc(1, sizeof *ar);
    if (!ar || !(ar->path = strdup(path)) || !(ar->a = archive_read_new())) {
        r = cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        goto out;
    }
    if ((r = cdd_rfile_size(f, &ar->file_size)) < 0)
        goto out;
    cdd_rfile_close(f);
    f = NULL;

    if (archive_read_support_format_zip_seekable(ar->a) != ARCHIVE_OK ||
        archive_read_support_format_tar(ar->a) != ARCHIVE_OK) {
        r = cdd_fail(CDD_E_NOTSUP, path, 0, "libarchive lacks zip or tar "
                                            "support: %s", la_msg(ar->a));
        goto out;
    }
    add_filter(ar->a, archive_read_support_filter_gzip);
    add_filter(ar->a, archive_read_support_filter_bzip2);
    add_filter(ar->a, archive_read_support_filter_xz);
    add_filter(ar->a, archive_read_support_filter_zstd);

    /* The narrow-character open takes UTF-8 on Windows too: the executable's
     * application manifest selects the UTF-8 code page. */
    if (archive_read_open_filename(ar->a, path, READ_BLOCK) != ARCHIVE_OK) {
        int e = archive_errno(ar->a);
        /* libarchive reports "not an archive" with an errno too (EILSEQ or
         * EFTYPE); only the errors of opening and reading a file are the
         * environment's fault. */
        if (e == ENOENT || e == ENOTDIR || e == EACCES || e == EPERM ||
            e == EISDIR || e == EIO || e == ENOMEM || e == EMFILE ||
            e == ENFILE)
            r = cdd_fail_errno(path, e, "cannot open archive: %s",
                               la_msg(ar->a));
        else
            r = cdd_fail(CDD_E_CORRUPT, path, 0, "not a readable zip or tar "
                                                 "archive: %s", la_msg(ar->a));
        goto out;
    }
    *out = ar;
    ar = NULL;
out:
    cdd_rfile_close(f);
    cdd_archive_close(ar);
    return r;
}

/* A header warning is accepted only when it concerns character-set
 * conversion for the local locale and a UTF-8 name was still obtained: the
 * name we check is then the name stored. Any other warning (a malformed pax
 * attribute that was ignored, an inconsistent zip header) could mean that
 * another tool reads the entry differently from us, so it is refused. */
static int warning_is_harmless(struct cdd_archive *ar, const char *utf8_name)
{
    const char *m = archive_error_string(ar->a);
    if (!utf8_name || !m)
        return 0;
    return strstr(m, "converted") != NULL &&
           (strstr(m, "Pathname") || strstr(m, "Linkname"));
}

int cdd_archive_next(struct cdd_archive *ar, struct cdd_archive_entry *e)
{
    struct archive_entry *ae = NULL;
    const char *name, *link;
    int r;

    memset(e, 0, sizeof *e);
    if (ar->failed)
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0, "reading after an error");
    ar->cur = NULL;
    r = archive_read_next_header(ar->a, &ae);
    if (r == ARCHIVE_EOF)
        return 1;
    if (r < ARCHIVE_WARN) /* RETRY (damaged header), FAILED, FATAL */
        return corrupt(ar, "bad entry header");
    ar->cur = ae;

    name = archive_entry_pathname_utf8(ae);
    if (r == ARCHIVE_WARN && !warning_is_harmless(ar, name))
        return corrupt(ar, "suspicious entry header");
    /* Where libarchive cannot convert, the stored bytes go to the validator,
     * which rejects anything that is not valid UTF-8. */
    if (!name)
        name = archive_entry_pathname(ae);
    e->path = name ? name : "";

    if (archive_entry_is_encrypted(ae)) {
        char buf[512];
        ar->failed = 1;
        return cdd_fail(CDD_E_CORRUPT, ar->path, 0,
                        "entry \"%s\": encrypted entries are not supported",
                        cur_name(ar, buf, sizeof buf));
    }

    /* A hard link in tar is a header with a link name and (usually) the
     * regular-file type: test it before the type. */
    if (archive_entry_hardlink(ae)) {
        link = archive_entry_hardlink_utf8(ae);
        e->type = CDD_ENTRY_HARDLINK;
        e->link_target = link ? link : archive_entry_hardlink(ae);
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
            link = archive_entry_symlink_utf8(ae);
            e->link_target = link ? link : archive_entry_symlink(ae);
            if (!e->link_target)
                e->link_target = "";
            break;
        default:
            e->type = CDD_ENTRY_OTHER;
        }
    }
    if (archive_entry_size_is_set(ae) && archive_entry_size(ae) >= 0) {
        e->size_known = 1;
        e->size = (uint64_t)archive_entry_size(ae);
    }
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
    /* Any negative result is fatal here, ARCHIVE_WARN included: zip reports
     * a CRC mismatch at the end of an entry as a warning. */
    n = archive_read_data(ar->a, buf, len);
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
    int64_t n = archive_filter_bytes(ar->a, -1);
    if (n < 0)
        return 0;
    /* The seekable zip reader jumps around; never report past the end. */
    return (uint64_t)n > ar->file_size ? ar->file_size : (uint64_t)n;
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
    free(ar->path);
    free(ar);
}
