/* PE (Windows DLL/EXE): which DLLs an image imports (the import table and
 * the delay-load table, what `dumpbin /dependents` prints), its own name,
 * its export names, its version resource (VS_FIXEDFILEINFO) and where its
 * CUDA fatbinaries lie (section .nv_fatb). Every RVA is translated through a section table that is
 * first checked the way the Windows loader checks it (ascending, not
 * overlapping, raw data inside the file), and every table walk is bounded by
 * a fixed limit, so a hostile or truncated DLL gives CDD_E_CORRUPT with the
 * reason, never an endless loop or a read outside the file. */
#include "binfmt_int.h"
#include "binrd_int.h"

#include "cdd/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_FILE_MACHINE_I386 0x014c
#define IMAGE_FILE_MACHINE_ARM 0x01c0
#define IMAGE_FILE_MACHINE_ARMNT 0x01c4
#define IMAGE_FILE_MACHINE_AMD64 0x8664
#define IMAGE_FILE_MACHINE_ARM64 0xaa64

#define DIR_EXPORT 0
#define DIR_IMPORT 1
#define DIR_RESOURCE 2
#define DIR_SECURITY 4
#define DIR_DELAY_IMPORT 13

struct pe_sec {
    uint64_t va, vsize; /* in memory */
    uint64_t raw_off, backed; /* file data behind [va, va + backed) */
};

struct pe {
    struct cdd_binrd *r;
    uint64_t image_base;
    uint64_t size_of_headers;
    struct pe_sec *secs;
    size_t nsecs;
    uint32_t dir_rva[16], dir_size[16];
};

static const char *machine_name(int machine)
{
    switch (machine) {
    case IMAGE_FILE_MACHINE_AMD64: return "x86_64";
    case IMAGE_FILE_MACHINE_I386: return "i386";
    case IMAGE_FILE_MACHINE_ARM64: return "aarch64";
    case IMAGE_FILE_MACHINE_ARM:
    case IMAGE_FILE_MACHINE_ARMNT: return "arm";
    default: return "unknown";
    }
}

static uint16_t ld16(const unsigned char *p) { return cdd_ld16(p, 0); }
static uint32_t ld32(const unsigned char *p) { return cdd_ld32(p, 0); }

/* File range behind [rva, rva + len): inside one section's raw data, or
 * inside the headers. *end: where that file data ends. */
static int map_rva(const struct pe *p, uint64_t rva, uint64_t len,
                   uint64_t *off, uint64_t *end)
{
    size_t lo = 0, hi = p->nsecs;
    while (lo < hi) { /* first section with va > rva */
        size_t mid = lo + (hi - lo) / 2;
        if (p->secs[mid].va <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0) {
        const struct pe_sec *s = &p->secs[lo - 1];
        uint64_t d = rva - s->va;
        if (d < s->backed && len <= s->backed - d) {
            *off = s->raw_off + d;
            *end = s->raw_off + s->backed;
            return 0;
        }
    }
    if (rva < p->size_of_headers && len <= p->size_of_headers - rva &&
        (p->nsecs == 0 || rva + len <= p->secs[0].va)) {
        *off = rva;
        *end = p->size_of_headers;
        return 0;
    }
    return -1;
}

static int rva_str(struct pe *p, uint64_t rva, const char *what, char **out)
{
    uint64_t off, end;
    if (map_rva(p, rva, 1, &off, &end))
        return cdd_binrd_corrupt(p->r, "%s: name RVA 0x%llx is not in any "
                                 "section's file data", what,
                                 (unsigned long long)rva);
    return cdd_binrd_str(p->r, off, end, what, out);
}

static int read_rva(struct pe *p, uint64_t rva, void *buf, size_t len,
                    const char *what)
{
    uint64_t off, end;
    if (map_rva(p, rva, len, &off, &end))
        return cdd_binrd_corrupt(p->r, "%s at RVA 0x%llx is not in any "
                                 "section's file data", what,
                                 (unsigned long long)rva);
    return cdd_binrd_read(p->r, off, buf, len, what);
}

/* What lies behind the last section: the certificate table (Authenticode;
 * NVIDIA's DLLs are signed) and, in MinGW builds, the COFF symbol and string
 * tables. The loader ignores both, but a file that lacks bytes its headers
 * announce was cut short, and verify should say so rather than trust it. */
static int check_trailer(struct pe *p, uint64_t symtab, uint64_t nsyms)
{
    struct cdd_binrd *r = p->r;
    /* the security directory holds a file offset, not an RVA */
    uint64_t cert = p->dir_rva[DIR_SECURITY], cert_size = p->dir_size[DIR_SECURITY];
    if (cert && !cdd_binrd_in_file(r, cert, cert_size))
        return cdd_binrd_corrupt(r, "certificate table (offset 0x%llx, 0x%llx "
                                 "bytes) extends past end of file: truncated?",
                                 (unsigned long long)cert,
                                 (unsigned long long)cert_size);
    if (symtab) {
        unsigned char b[4]; /* fixed: bytes of a PE structure */
        uint64_t strtab = symtab + nsyms * 18;
        int rc = cdd_binrd_read(r, strtab, b, 4, "COFF symbol table");
        if (rc)
            return rc;
        if (!cdd_binrd_in_file(r, strtab, ld32(b)))
            return cdd_binrd_corrupt(r, "COFF string table (offset 0x%llx, "
                                     "0x%x bytes) extends past end of file: "
                                     "truncated?", (unsigned long long)strtab,
                                     ld32(b));
    }
    return 0;
}

/* The DOS and COFF headers: all cdd_bin_identify() needs. b receives the
 * COFF header, *pe_off where it lies. */
static int read_coff(struct cdd_binrd *r, unsigned char b[240], /* fixed: bytes of a PE structure */
                     uint64_t *pe_off, struct cdd_bininfo *out)
{
    int rc;
    if ((rc = cdd_binrd_read(r, 0, b, 64, "DOS header")))
        return rc;
    *pe_off = ld32(b + 0x3c);
    if ((rc = cdd_binrd_read(r, *pe_off, b, 24, "PE header")))
        return rc;
    if (memcmp(b, "PE\0\0", 4) != 0)
        return cdd_fail(CDD_E_NOTSUP, r->path, 0,
                        "MZ executable without a PE header (a DOS program?)");
    out->fmt = CDD_BIN_PE;
    out->machine = ld16(b + 4);
    out->machine_name = machine_name(out->machine);
    return 0;
}

int cdd_pe_identify(struct cdd_binrd *r, struct cdd_bininfo *out)
{
    unsigned char b[240]; /* fixed: bytes of a PE structure */
    uint64_t pe_off;
    return read_coff(r, b, &pe_off, out);
}

static int read_headers(struct pe *p, struct cdd_bininfo *out)
{
    struct cdd_binrd *r = p->r;
    unsigned char b[240]; /* fixed: bytes of a PE structure */
    uint64_t pe_off;
    int rc;

    if ((rc = read_coff(r, b, &pe_off, out)))
        return rc;
    unsigned nsecs = ld16(b + 6);
    uint64_t symtab = ld32(b + 12), nsyms = ld32(b + 16);
    unsigned opt_size = ld16(b + 20);

    uint64_t opt_off = pe_off + 24;
    if (opt_size < 2)
        return cdd_binrd_corrupt(r, "PE optional header missing (size %u)",
                                 opt_size);
    size_t want = opt_size < sizeof b ? opt_size : sizeof b;
    if ((rc = cdd_binrd_read(r, opt_off, b, want, "PE optional header")))
        return rc;
    unsigned magic = ld16(b);
    unsigned dd_off;
    if (magic == 0x20b) {
        out->is_64 = 1;
        dd_off = 112;
    } else if (magic == 0x10b) {
        dd_off = 96;
    } else {
        return cdd_binrd_corrupt(r, "unknown PE optional header magic 0x%x",
                                 magic);
    }
    if (want < dd_off)
        return cdd_binrd_corrupt(r, "PE optional header too small (%u bytes)",
                                 opt_size);
    p->image_base = out->is_64 ? cdd_ld64(b + 24, 0) : ld32(b + 28);
    p->size_of_headers = ld32(b + 60);
    uint32_t ndirs = ld32(b + dd_off - 4);
    if (ndirs > 16)
        ndirs = 16;
    if (ndirs > (want - dd_off) / 8)
        ndirs = (uint32_t)((want - dd_off) / 8);
    for (uint32_t i = 0; i < ndirs; i++) {
        p->dir_rva[i] = ld32(b + dd_off + 8 * i);
        p->dir_size[i] = ld32(b + dd_off + 8 * i + 4);
    }

    uint64_t sec_off = opt_off + opt_size;
    if (!cdd_binrd_in_file(r, sec_off, (uint64_t)nsecs * 40))
        return cdd_binrd_corrupt(r, "PE section table (%u entries) extends "
                                 "past end of file", nsecs);
    if (nsecs && !(p->secs = calloc(nsecs, sizeof *p->secs)))
        return cdd_fail(CDD_E_NOMEM, r->path, 0, NULL);
    for (unsigned i = 0; i < nsecs; i++) {
        struct pe_sec *s = &p->secs[i];
        if ((rc = cdd_binrd_read(r, sec_off + 40u * i, b, 40,
                                 "PE section table")))
            return rc;
        uint64_t vsize = ld32(b + 8), raw_size = ld32(b + 16);
        s->va = ld32(b + 12);
        s->raw_off = ld32(b + 20);
        s->vsize = vsize ? vsize : raw_size;
        s->backed = s->raw_off ? (raw_size < s->vsize ? raw_size : s->vsize)
                               : 0;
        /* A DLL cut short by a failed copy or download shows here first;
         * the Windows loader refuses it too. */
        if (s->raw_off && !cdd_binrd_in_file(r, s->raw_off, raw_size))
            return cdd_binrd_corrupt(r, "PE section %u (raw data at 0x%llx, "
                                     "0x%llx bytes) extends past end of "
                                     "file: truncated?", i,
                                     (unsigned long long)s->raw_off,
                                     (unsigned long long)raw_size);
        /* nvcc's section for the fatbinaries; the name is cut to the 8
         * bytes a PE section name holds (".nv_fatbin" -> ".nv_fatb"). */
        if (!out->has_fatbin && memcmp(b, ".nv_fatb", 8) == 0 && s->raw_off) {
            out->has_fatbin = 1;
            out->fatbin_off = s->raw_off;
            out->fatbin_size = s->backed;
        }
        /* The loader requires ascending, non-overlapping sections; RVA
         * lookups rely on it. */
        if (i > 0 && s->va < p->secs[i - 1].va + p->secs[i - 1].vsize)
            return cdd_binrd_corrupt(r, "PE section %u (RVA 0x%llx) overlaps "
                                     "or precedes section %u", i,
                                     (unsigned long long)s->va, i - 1);
    }
    p->nsecs = nsecs;
    return check_trailer(p, symtab, nsyms);
}

/* The two import tables differ in their directory, the size of a
 * descriptor and where its name and end mark lie. */
struct import_kind {
    int dir;              /* DIR_IMPORT or DIR_DELAY_IMPORT */
    unsigned size;        /* bytes of one descriptor */
    int delay;            /* delay-load: attributes at 0, name at 4 */
    const char *what;     /* one descriptor, in messages */
    const char *set_what; /* the whole list, for its bound */
};

static const struct import_kind IMPORTS = {DIR_IMPORT, 20, 0,
                                           "import descriptor",
                                           "import descriptors"};
static const struct import_kind DELAY_IMPORTS = {
    DIR_DELAY_IMPORT, 32, 1, "delay-load descriptor",
    "delay-load import descriptors"};

/* The DLL names of one import table, in order. */
static int read_import_table(struct pe *p, const struct import_kind *k,
                             char ***names, size_t *n_names)
{
    struct cdd_strvec v = {NULL, 0, 0, CDD_BIN_MAX_NEEDED, k->set_what};
    int rc = 0;
    for (uint64_t i = 0; p->dir_rva[k->dir]; i++) {
        unsigned char d[32]; /* fixed: bytes of a PE structure */
        char *s = NULL;
        uint64_t rva = p->dir_rva[k->dir] + (uint64_t)k->size * i, off, end;
        uint64_t name;
        /* The loader ignores the directory size and walks to an empty
         * descriptor; so do we, bounded by the table's section. */
        if (map_rva(p, rva, k->size, &off, &end)) {
            rc = cdd_binrd_corrupt(p->r, "%s %llu (RVA 0x%llx) is not in "
                                   "any section's file data: table without "
                                   "terminator?", k->what,
                                   (unsigned long long)i,
                                   (unsigned long long)rva);
            break;
        }
        if ((rc = cdd_binrd_read(p->r, off, d, k->size, k->what)))
            break;
        if (!k->delay) {
            uint32_t iat = ld32(d + 16);
            name = ld32(d + 12);
            if (name == 0 || iat == 0) /* as the loader decides the end */
                break;
        } else {
            uint32_t attrs = ld32(d);
            name = ld32(d + 4);
            if (name == 0)
                break;
            /* Visual C++ 6 wrote virtual addresses; attribute bit 0 marks
             * the RVA form every later linker writes. */
            if (!(attrs & 1)) {
                if (name < p->image_base ||
                    name - p->image_base > 0xffffffffu) {
                    rc = cdd_binrd_corrupt(p->r, "%s %llu: name address "
                                           "0x%llx is outside the image",
                                           k->what, (unsigned long long)i,
                                           (unsigned long long)name);
                    break;
                }
                name -= p->image_base;
            }
        }
        if ((rc = rva_str(p, name, k->what, &s)) ||
            (rc = cdd_strvec_push(p->r, &v, s)))
            break;
    }
    if (rc) {
        cdd_strvec_free(&v);
        return rc;
    }
    *names = v.v;
    *n_names = v.n;
    return 0;
}

static int read_imports(struct pe *p, struct cdd_bininfo *out)
{
    return read_import_table(p, &IMPORTS, &out->needed, &out->n_needed);
}

static int read_delay_imports(struct pe *p, struct cdd_bininfo *out)
{
    return read_import_table(p, &DELAY_IMPORTS, &out->delay_needed,
                             &out->n_delay_needed);
}

/* Export names lie together; reading their whole span once beats fetching
 * each through the windows. A span that is not one section's data is left
 * to the windows (and to the per-name checks). */
static int pin_names(struct pe *p, uint64_t names_off, uint32_t n)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    uint64_t off, end;
    int rc;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char b[4]; /* fixed: bytes of a PE structure */
        if ((rc = cdd_binrd_read(p->r, names_off + 4ull * i, b, 4,
                                 "export name table")))
            return rc;
        uint32_t v = ld32(b);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (map_rva(p, lo, 1, &off, &end))
        return 0;
    uint64_t span = (uint64_t)hi - lo + CDD_BIN_MAX_STRING + 1;
    if (span > end - off)
        span = end - off;
    return cdd_binrd_pin(p->r, off, span);
}

static int read_exports(struct pe *p, struct cdd_bininfo *out)
{
    struct cdd_strvec v = {NULL, 0, 0, CDD_BIN_MAX_EXPORTS, "export names"};
    unsigned char d[40]; /* fixed: bytes of a PE structure */
    uint64_t names_off, names_end;
    int rc;

    if (!p->dir_rva[DIR_EXPORT])
        return 0;
    if ((rc = read_rva(p, p->dir_rva[DIR_EXPORT], d, 40, "export directory")))
        return rc;
    uint32_t name = ld32(d + 12), n = ld32(d + 24), names = ld32(d + 32);
    if (name && (rc = rva_str(p, name, "export directory", &out->soname)))
        return rc;
    if (n > CDD_BIN_MAX_EXPORTS)
        return cdd_binrd_corrupt(p->r, "export directory claims %u names "
                                 "(more than %u)", n, CDD_BIN_MAX_EXPORTS);
    if (n && map_rva(p, names, 4ull * n, &names_off, &names_end))
        return cdd_binrd_corrupt(p->r, "export name table (%u entries at RVA "
                                 "0x%x) is not inside one section's file "
                                 "data", n, names);
    if (n > 64 && (rc = pin_names(p, names_off, n)))
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        unsigned char b[4]; /* fixed: bytes of a PE structure */
        char *s = NULL;
        if ((rc = cdd_binrd_read(p->r, names_off + 4ull * i, b, 4,
                                 "export name table")) ||
            (rc = rva_str(p, ld32(b), "export name", &s)) ||
            (rc = cdd_strvec_push(p->r, &v, s)))
            break;
    }
    if (rc) {
        cdd_strvec_free(&v);
        return rc;
    }
    out->exports = v.v;
    out->n_exports = v.n;
    return 0;
}

/* ---- version resource ---------------------------------------------------
 * The resource directory is a tree of fixed depth: type (RT_VERSION = 16),
 * name, language; the leaf is a data entry pointing at VS_VERSIONINFO, whose
 * Value is VS_FIXEDFILEINFO (signature 0xFEEF04BD). Offsets inside the tree
 * are relative to the directory's start; each level is read once, its entry
 * count bounded by the table's own file data, so neither a loop nor a long
 * walk can be built. */

#define RT_VERSION 16
#define RES_MAX_ENTRIES 65536u
#define VS_FIXED_SIGNATURE 0xFEEF04BDu

/* The entry of directory `dir_off` (offset inside the resource tree) whose
 * ID is `id`, or the first ID entry when id < 0. *found 0: none. */
static int res_lookup(struct pe *p, uint64_t root, uint64_t rsize,
                      uint64_t dir_off, long id, uint32_t *target, int *found)
{
    unsigned char d[16]; /* fixed: bytes of a PE structure */
    int rc;
    *found = 0;
    if (dir_off > rsize || rsize - dir_off < 16)
        return cdd_binrd_corrupt(p->r, "resource directory at offset 0x%llx "
                                 "lies outside the resource data",
                                 (unsigned long long)dir_off);
    if ((rc = read_rva(p, root + dir_off, d, 16, "resource directory")))
        return rc;
    uint64_t named = ld16(d + 12), ids = ld16(d + 14);
    if (named + ids > RES_MAX_ENTRIES ||
        (named + ids) * 8 > rsize - dir_off - 16)
        return cdd_binrd_corrupt(p->r, "resource directory at offset 0x%llx "
                                 "claims %llu entries, more than its data "
                                 "holds", (unsigned long long)dir_off,
                                 (unsigned long long)(named + ids));
    /* Named entries come first; RT_VERSION and its children are IDs. */
    for (uint64_t i = named; i < named + ids; i++) {
        unsigned char e[8]; /* fixed: bytes of a PE structure */
        if ((rc = read_rva(p, root + dir_off + 16 + 8 * i, e, 8,
                           "resource directory entry")))
            return rc;
        if (id < 0 || ld32(e) == (uint32_t)id) {
            *target = ld32(e + 4);
            *found = 1;
            return 0;
        }
    }
    return 0;
}

static int read_version(struct pe *p, struct cdd_bininfo *out)
{
    uint64_t root = p->dir_rva[DIR_RESOURCE], rsize = p->dir_size[DIR_RESOURCE];
    uint64_t off, end;
    uint32_t t = 0;
    int rc, found;
    if (!root || !rsize)
        return 0;
    /* The resource tree must be file data of one section. */
    if (map_rva(p, root, 1, &off, &end))
        return cdd_binrd_corrupt(p->r, "resource directory (RVA 0x%llx) is "
                                 "not in any section's file data",
                                 (unsigned long long)root);
    if (rsize > end - off)
        rsize = end - off;
    /* type -> name -> language: the first two levels must be directories,
     * the third a data entry (high bit clear). */
    uint64_t dir = 0;
    for (int level = 0; level < 3; level++) {
        if ((rc = res_lookup(p, root, rsize, dir, level == 0 ? RT_VERSION : -1,
                             &t, &found)))
            return rc;
        if (!found)
            return 0;
        int is_dir = (t & 0x80000000u) != 0;
        if (is_dir != (level < 2))
            return cdd_binrd_corrupt(p->r, "version resource: level %d entry "
                                     "is %s", level,
                                     is_dir ? "a directory where data was "
                                              "expected"
                                            : "data where a directory was "
                                              "expected");
        dir = t & 0x7fffffffu;
    }
    unsigned char de[16], v[92]; /* fixed: bytes of a PE structure */
    if (dir > rsize || rsize - dir < 16)
        return cdd_binrd_corrupt(p->r, "version resource data entry at "
                                 "offset 0x%llx lies outside the resource "
                                 "data", (unsigned long long)dir);
    if ((rc = read_rva(p, root + dir, de, 16, "resource data entry")))
        return rc;
    uint32_t data = ld32(de), size = ld32(de + 4);
    /* VS_VERSIONINFO: wLength, wValueLength, wType, L"VS_VERSION_INFO",
     * padding to 32 bits, then the 52-byte VS_FIXEDFILEINFO at 40. */
    if (size < sizeof v)
        return cdd_binrd_corrupt(p->r, "version resource is %u bytes, too "
                                 "small for VS_FIXEDFILEINFO", size);
    if ((rc = read_rva(p, data, v, sizeof v, "version resource")))
        return rc;
    static const char key[] = "VS_VERSION_INFO";
    for (size_t k = 0; k < sizeof key; k++)
        if (v[6 + 2 * k] != (unsigned char)key[k] || v[7 + 2 * k])
            return cdd_binrd_corrupt(p->r, "version resource does not start "
                                     "with VS_VERSION_INFO");
    if (ld16(v + 2) < 52 || ld32(v + 40) != VS_FIXED_SIGNATURE)
        return cdd_binrd_corrupt(p->r, "version resource has no "
                                 "VS_FIXEDFILEINFO (signature 0x%x)",
                                 ld32(v + 40));
    uint32_t fms = ld32(v + 48), fls = ld32(v + 52);
    uint32_t pms = ld32(v + 56), pls = ld32(v + 60);
    out->file_version[0] = fms >> 16;
    out->file_version[1] = fms & 0xffff;
    out->file_version[2] = fls >> 16;
    out->file_version[3] = fls & 0xffff;
    out->product_version[0] = pms >> 16;
    out->product_version[1] = pms & 0xffff;
    out->product_version[2] = pls >> 16;
    out->product_version[3] = pls & 0xffff;
    out->has_version = 1;
    return 0;
}

int cdd_pe_parse(struct cdd_binrd *r, struct cdd_bininfo *out)
{
    struct pe p;
    int rc;

    memset(&p, 0, sizeof p);
    p.r = r;
    if ((rc = read_headers(&p, out)) || (rc = read_imports(&p, out)) ||
        (rc = read_delay_imports(&p, out)) || (rc = read_exports(&p, out)))
        goto out;
    /* The loader never reads the version resource: a malformed one is
     * reported as such, not as a DLL that cannot load. */
    if ((rc = read_version(&p, out)) == CDD_E_CORRUPT) {
        out->has_version = -1;
        memset(out->file_version, 0, sizeof out->file_version);
        memset(out->product_version, 0, sizeof out->product_version);
        snprintf(out->version_problem, sizeof out->version_problem, "%.*s",
                 (int)sizeof out->version_problem - 1, cdd_last_error()->msg);
        cdd_clear_error();
        rc = 0;
    }
out:
    free(p.secs);
    return rc;
}
