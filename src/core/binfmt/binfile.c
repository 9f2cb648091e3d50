/* Entry points of the binary parsers (binfile.h): which parser reads a
 * file (dispatch on its magic), the file and memory sources, the sorted
 * export list. Above elf.c and pe.c, which import only the reader
 * (binrd.c); nothing here knows a format beyond its first four bytes. */
#include "binfmt_int.h"
#include "binrd_int.h"

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/platform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- public ------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted and unique so that lookups are a binary search; duplicates are
 * normal in ELF (one name under several symbol versions). */
static void sort_exports(struct cdd_bininfo *b)
{
    if (b->n_exports < 2)
        return;
    qsort(b->exports, b->n_exports, sizeof *b->exports, cmp_str);
    size_t w = 1;
    for (size_t i = 1; i < b->n_exports; i++)
        if (strcmp(b->exports[i], b->exports[w - 1]) != 0)
            b->exports[w++] = b->exports[i];
    b->n_exports = w;
}

/* Dispatch on the magic: the full parse, or the headers only (identify). */
static int dispatch(struct cdd_binrd *r, struct cdd_bininfo *out,
                    int identify)
{
    unsigned char magic[4]; /* fixed: 4 magic bytes */
    int rc;
    if (r->size < 4)
        return cdd_fail(CDD_E_NOTSUP, r->path, 0,
                        "too short to be an ELF or PE file (%llu bytes)",
                        (unsigned long long)r->size);
    if ((rc = cdd_binrd_read(r, 0, magic, 4, "file header")))
        return rc;
    if (memcmp(magic, "\177ELF", 4) == 0)
        return identify ? cdd_elf_identify(r, out) : cdd_elf_parse(r, out);
    if (magic[0] == 'M' && magic[1] == 'Z')
        return identify ? cdd_pe_identify(r, out) : cdd_pe_parse(r, out);
    return cdd_fail(CDD_E_NOTSUP, r->path, 0,
                    "not an ELF or PE file (magic %02x %02x %02x %02x)",
                    magic[0], magic[1], magic[2], magic[3]);
}

int cdd_bin_parse(const struct cdd_binsrc *src, struct cdd_bininfo *out)
{
    struct cdd_binrd r;
    int rc;

    memset(out, 0, sizeof *out);
    cdd_binrd_init(&r, src);
    rc = dispatch(&r, out, 0);
    if (rc)
        goto out;
    sort_exports(out);
    out->arena_ = r.arena;
    r.arena = NULL;
out:
    if (rc) {
        out->arena_ = NULL; /* the strings are r's, freed below */
        cdd_bininfo_clear(out);
    }
    cdd_binrd_fini(&r);
    return rc;
}

int cdd_bin_identify(const struct cdd_binsrc *src, struct cdd_bininfo *out)
{
    struct cdd_binrd r;
    memset(out, 0, sizeof *out);
    cdd_binrd_init(&r, src);
    int rc = dispatch(&r, out, 1);
    if (rc)
        memset(out, 0, sizeof *out);
    cdd_binrd_fini(&r);
    return rc;
}

struct filesrc {
    struct cdd_rfile *f;
    const char *path;
};

static int file_read_at(void *ud, uint64_t off, void *buf, size_t len)
{
    struct filesrc *fs = ud;
    size_t got = 0;
    int rc = cdd_rfile_pread(fs->f, off, buf, len, &got);
    if (rc)
        return rc;
    if (got != len)
        return cdd_fail(CDD_E_IO, fs->path, 0,
                        "file became shorter while being read (end at "
                        "offset %llu)", (unsigned long long)(off + got));
    return 0;
}

int cdd_binsrc_file_open(const char *path, struct cdd_binsrc *src)
{
    struct filesrc *fs = calloc(1, sizeof *fs);
    int rc;
    memset(src, 0, sizeof *src);
    if (!fs)
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    fs->path = path;
    if ((rc = cdd_fs_open_read(path, &fs->f)) != 0 ||
        (rc = cdd_rfile_size(fs->f, &src->size)) != 0) {
        cdd_rfile_close(fs->f);
        free(fs);
        return rc;
    }
    src->ud = fs;
    src->read_at = file_read_at;
    src->name = path;
    return 0;
}

void cdd_binsrc_file_close(struct cdd_binsrc *src)
{
    struct filesrc *fs = src ? src->ud : NULL;
    if (!fs)
        return;
    cdd_rfile_close(fs->f);
    free(fs);
    memset(src, 0, sizeof *src);
}

int cdd_bin_parse_file(const char *path, struct cdd_bininfo *out)
{
    struct cdd_binsrc src;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = cdd_binsrc_file_open(path, &src)) != 0)
        return rc;
    rc = cdd_bin_parse(&src, out);
    cdd_binsrc_file_close(&src);
    return rc;
}

/* The reader checks every range against size before calling, and size is
 * the buffer's length, so no check is repeated here. */
static int mem_read_at(void *ud, uint64_t off, void *buf, size_t len)
{
    memcpy(buf, (const unsigned char *)ud + off, len);
    return 0;
}

void cdd_binsrc_mem(struct cdd_binsrc *src, const void *buf, size_t len,
                    const char *name)
{
    src->ud = (void *)buf;
    src->size = len;
    src->read_at = mem_read_at;
    src->name = name;
}

int cdd_bininfo_exports(const struct cdd_bininfo *b, const char *symbol)
{
    if (!b || !symbol || !b->n_exports)
        return 0;
    return bsearch(&symbol, b->exports, b->n_exports, sizeof *b->exports,
                   cmp_str) != NULL;
}

void cdd_bininfo_clear(struct cdd_bininfo *b)
{
    if (!b)
        return;
    free(b->needed);
    free(b->delay_needed);
    free(b->exports);
    cdd_binarena_free(b->arena_);
    memset(b, 0, sizeof *b);
}

int cdd_bin_machine_check(struct cdd_rfile *f, enum cdd_platform p,
                          const char *shown, int strict)
{
    struct filesrc fs = {f, shown};
    struct cdd_binsrc src = {&fs, 0, file_read_at, shown};
    struct cdd_bininfo bi;
    int win = cdd_platform_is_windows(p);
    enum cdd_machine want = cdd_platform_machine(p);
    int rc = cdd_rfile_size(f, &src.size);
    if (rc)
        return rc;
    rc = cdd_bin_identify(&src, &bi);
    if ((rc == CDD_E_NOTSUP || rc == CDD_E_CORRUPT) && !strict) {
        cdd_clear_error();
        return 0;
    }
    if (rc == CDD_E_NOTSUP || rc == CDD_E_CORRUPT) {
        char *why = strdup(cdd_last_error()->msg);
        cdd_clear_error();
        rc = cdd_fail(CDD_E_ARCHIVE, shown, 0, "not %s (%s)",
                      win ? "a Windows DLL" : "an ELF shared library",
                      why ? why : "unreadable headers");
        free(why);
        return rc;
    }
    if (rc)
        return rc;
    int fmt_ok = bi.fmt == (win ? CDD_BIN_PE : CDD_BIN_ELF);
    int want_m = win ? cdd_machine_pe(want) : cdd_machine_elf(want);
    if (fmt_ok && bi.machine == want_m && (win || bi.is_64))
        return 0;
    if (!fmt_ok)
        return cdd_fail(CDD_E_ARCHIVE, shown, 0,
                        "a%s %s file, but the platform %s needs %s",
                        bi.fmt == CDD_BIN_PE ? " PE" : "n ELF",
                        bi.fmt == CDD_BIN_PE ? "(Windows)" : "(Linux)",
                        cdd_platform_name(p),
                        win ? "Windows DLLs" : "ELF shared libraries");
    char mach[48]; /* fixed: a machine number */
    snprintf(mach, sizeof mach, win ? "PE machine 0x%04x" : "ELF e_machine %u",
             (unsigned)bi.machine);
    return cdd_fail(CDD_E_ARCHIVE, shown, 0,
                    "a library for %s%s (%s), but the platform %s is %s: %s",
                    win && bi.machine == 0x014c ? "x86" : bi.machine_name,
                    (win && bi.machine == 0x014c) || (!win && !bi.is_64)
                        ? " (32-bit)" : "",
                    mach, cdd_platform_name(p), cdd_machine_name(want),
                    win ? "Windows would refuse to load it with error 193 "
                          "(\"%1 is not a valid Win32 application\")"
                        : "the loader would refuse it (wrong ELF class or "
                          "machine)");
}
