/* The CUDA fatbinary walker (fatbin.h): containers and entry headers of a
 * library's .nv_fatbin / .nv_fatb section, read through the bounded reader
 * of binrd_int.h. Every size is checked against its container and the
 * container against the section before anything is read at the offset it
 * gives, and every walk advances by at least one header, bounded by
 * CDD_FATBIN_MAX_ENTRIES, so a hostile library gives CDD_E_CORRUPT with the
 * place, never an endless loop or a read outside the section. */
#include "cdd/fatbin.h"

#include "binrd_int.h"

#include "cdd/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTAINER_HDR 16u
#define ENTRY_HDR_MIN 48u            /* through the flags */
#define ENTRY_HDR_MAX (64u * 1024u)  /* real ones: 64 (ELF), 72+ (PTX) */
#define FLAG_COMPRESSED 0x2000u
#define FLAG_ARCH_SPECIFIC 0x100000u   /* sm_90a */
#define FLAG_FAMILY_SPECIFIC 0x200000u /* sm_100f */
#define ZERO_SCAN 4096u

/* Headers lie far apart (payloads of megabytes between them): read each
 * directly, past the reader's 64 KiB windows, which would fetch a window
 * per header. The range is checked first, as cdd_binrd_read does. */
static int hdr_read(struct cdd_binrd *r, uint64_t off, void *buf, size_t len,
                    const char *what)
{
    if (!cdd_binrd_in_file(r, off, len))
        return cdd_binrd_corrupt(r, "%s extends past end of file", what);
    return r->src->read_at(r->src->ud, off, buf, len);
}

/* Order of codes: SASS before PTX, then arch, variant, version. */
static int code_cmp(const struct cdd_fatbin_code *a, int kind, unsigned arch,
                    char variant, unsigned major, unsigned minor)
{
    int ak = a->kind == CDD_FATBIN_KIND_SASS ? 0 : 1;
    int bk = kind == CDD_FATBIN_KIND_SASS ? 0 : 1;
    if (ak != bk)
        return ak < bk ? -1 : 1;
    if (a->arch != arch)
        return a->arch < arch ? -1 : 1;
    if (a->variant != variant)
        return a->variant < variant ? -1 : 1;
    if (a->major != major)
        return a->major < major ? -1 : 1;
    if (a->minor != minor)
        return a->minor < minor ? -1 : 1;
    return 0;
}

static int add_code(struct cdd_binrd *r, struct cdd_fatbin_info *fi, int kind,
                    unsigned arch, char variant, unsigned major,
                    unsigned minor, size_t count)
{
    size_t i = 0;
    for (; i < fi->n_codes; i++) {
        int d = code_cmp(&fi->codes[i], kind, arch, variant, major, minor);
        if (d == 0) {
            fi->codes[i].count += count;
            return 0;
        }
        if (d > 0)
            break;
    }
    if (fi->n_codes >= CDD_FATBIN_MAX_CODES) {
        if (r)
            return cdd_binrd_corrupt(r, "fatbinary: more than %d distinct "
                                     "architectures", CDD_FATBIN_MAX_CODES);
        return cdd_fail(CDD_E_CORRUPT, NULL, 0, "fatbinary: more than %d "
                        "distinct architectures", CDD_FATBIN_MAX_CODES);
    }
    memmove(&fi->codes[i + 1], &fi->codes[i],
            (fi->n_codes - i) * sizeof fi->codes[0]);
    fi->codes[i] = (struct cdd_fatbin_code){kind, arch, variant, major, minor,
                                            count};
    fi->n_codes++;
    return 0;
}

/* The entries of the container whose entries occupy [pos, end). */
static int walk_entries(struct cdd_binrd *r, uint64_t pos, uint64_t end,
                        uint64_t cont, struct cdd_fatbin_info *fi)
{
    int rc;
    while (pos < end) {
        unsigned char h[ENTRY_HDR_MIN]; /* fixed: bytes of a fatbin header */
        if (end - pos < ENTRY_HDR_MIN)
            return cdd_binrd_corrupt(r, "fatbinary container at 0x%llx: "
                                     "entry header at 0x%llx is cut by the "
                                     "container's end (%llu bytes left)",
                                     (unsigned long long)cont,
                                     (unsigned long long)pos,
                                     (unsigned long long)(end - pos));
        if (fi->n_entries >= CDD_FATBIN_MAX_ENTRIES)
            return cdd_binrd_corrupt(r, "fatbinary: more than %u entries",
                                     CDD_FATBIN_MAX_ENTRIES);
        if ((rc = hdr_read(r, pos, h, sizeof h, "fatbinary entry header")))
            return rc;
        unsigned kind = cdd_ld16(h, 0);
        uint32_t hsize = cdd_ld32(h + 4, 0);
        uint64_t psize = cdd_ld64(h + 8, 0);
        unsigned minor = cdd_ld16(h + 24, 0), major = cdd_ld16(h + 26, 0);
        uint32_t arch = cdd_ld32(h + 28, 0);
        uint64_t flags = cdd_ld64(h + 40, 0);
        if (hsize < ENTRY_HDR_MIN || hsize > ENTRY_HDR_MAX)
            return cdd_binrd_corrupt(r, "fatbinary entry at 0x%llx: header "
                                     "size %u is implausible",
                                     (unsigned long long)pos, hsize);
        if (hsize > end - pos || psize > end - pos - hsize)
            return cdd_binrd_corrupt(r, "fatbinary entry at 0x%llx: header "
                                     "(%u bytes) and payload (%llu bytes) "
                                     "extend past its container's end at "
                                     "0x%llx", (unsigned long long)pos, hsize,
                                     (unsigned long long)psize,
                                     (unsigned long long)end);
        if (arch > 10000)
            return cdd_binrd_corrupt(r, "fatbinary entry at 0x%llx: "
                                     "architecture %u is implausible",
                                     (unsigned long long)pos, arch);
        fi->n_entries++;
        if (flags & FLAG_COMPRESSED)
            fi->n_compressed++;
        if (kind == CDD_FATBIN_KIND_SASS)
            rc = add_code(r, fi, CDD_FATBIN_KIND_SASS, arch,
                          (flags & FLAG_ARCH_SPECIFIC)     ? 'a'
                          : (flags & FLAG_FAMILY_SPECIFIC) ? 'f'
                                                           : 0,
                          0, 0, 1);
        else if (kind == CDD_FATBIN_KIND_PTX)
            rc = add_code(r, fi, CDD_FATBIN_KIND_PTX, arch, 0, major, minor,
                          1);
        else
            fi->n_other++;
        if (rc)
            return rc;
        pos += hsize + psize; /* >= ENTRY_HDR_MIN: always advances */
    }
    return 0;
}

/* Offset of the first non-zero byte at or after pos (8-aligned from the
 * section's start), or end: the padding between containers. */
static int skip_zeros(struct cdd_binrd *r, uint64_t base, uint64_t pos,
                      uint64_t end, uint64_t *next)
{
    unsigned char b[ZERO_SCAN]; /* fixed: bytes of a fatbin header */
    while (pos < end) {
        size_t n = end - pos < sizeof b ? (size_t)(end - pos) : sizeof b;
        int rc = hdr_read(r, pos, b, n, "fatbinary section");
        if (rc)
            return rc;
        size_t i = 0;
        while (i < n && b[i] == 0)
            i++;
        if (i < n) {
            uint64_t at = pos + i;
            *next = base + ((at - base) & ~(uint64_t)7);
            return 0;
        }
        pos += n;
    }
    *next = end;
    return 0;
}

static int scan(struct cdd_binrd *r, uint64_t off, uint64_t size,
                struct cdd_fatbin_info *out)
{
    uint64_t pos = off, end = off + size;
    int rc;
    if (!cdd_binrd_in_file(r, off, size))
        return cdd_binrd_corrupt(r, "fatbinary section (offset 0x%llx, %llu "
                                 "bytes) extends past end of file",
                                 (unsigned long long)off,
                                 (unsigned long long)size);
    while (pos < end) {
        unsigned char h[CONTAINER_HDR]; /* fixed: bytes of a fatbin header */
        if ((rc = skip_zeros(r, off, pos, end, &pos)))
            return rc;
        if (pos >= end)
            break;
        if (end - pos < CONTAINER_HDR)
            return cdd_binrd_corrupt(r, "fatbinary container header at "
                                     "0x%llx is cut by the section's end",
                                     (unsigned long long)pos);
        if ((rc = hdr_read(r, pos, h, sizeof h, "fatbinary header")))
            return rc;
        uint32_t magic = cdd_ld32(h, 0);
        unsigned hsize = cdd_ld16(h + 6, 0);
        uint64_t fsize = cdd_ld64(h + 8, 0);
        if (magic != CDD_FATBIN_MAGIC)
            return cdd_binrd_corrupt(r, "fatbinary at 0x%llx: bad magic "
                                     "0x%08x (expected 0x%08x)",
                                     (unsigned long long)pos, magic,
                                     CDD_FATBIN_MAGIC);
        if (hsize < CONTAINER_HDR)
            return cdd_binrd_corrupt(r, "fatbinary at 0x%llx: header size "
                                     "%u is implausible",
                                     (unsigned long long)pos, hsize);
        if (hsize > end - pos ||
            fsize > end - pos - hsize)
            return cdd_binrd_corrupt(r, "fatbinary at 0x%llx: header (%u "
                                     "bytes) and entries (%llu bytes) extend "
                                     "past the section's end at 0x%llx",
                                     (unsigned long long)pos, hsize,
                                     (unsigned long long)fsize,
                                     (unsigned long long)end);
        out->n_containers++;
        if ((rc = walk_entries(r, pos + hsize, pos + hsize + fsize, pos, out)))
            return rc;
        pos += hsize + fsize; /* >= 16: always advances */
    }
    return 0;
}

int cdd_fatbin_scan(const struct cdd_binsrc *src, uint64_t off, uint64_t size,
                    struct cdd_fatbin_info *out)
{
    struct cdd_binrd r;
    memset(out, 0, sizeof *out);
    cdd_binrd_init(&r, src);
    int rc = scan(&r, off, size, out);
    cdd_binrd_fini(&r);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

int cdd_fatbin_scan_file(const char *path, int *has,
                         struct cdd_fatbin_info *out)
{
    struct cdd_bininfo bi;
    struct cdd_binsrc src = {0};
    int rc;
    *has = 0;
    memset(out, 0, sizeof *out);
    if ((rc = cdd_bin_parse_file(path, &bi)) != 0)
        return rc;
    if (!bi.has_fatbin)
        goto out;
    *has = 1;
    if ((rc = cdd_binsrc_file_open(path, &src)) != 0)
        goto out;
    rc = cdd_fatbin_scan(&src, bi.fatbin_off, bi.fatbin_size, out);
out:
    cdd_binsrc_file_close(&src);
    cdd_bininfo_clear(&bi);
    return rc;
}

int cdd_fatbin_merge(struct cdd_fatbin_info *a,
                     const struct cdd_fatbin_info *b)
{
    for (size_t i = 0; i < b->n_codes; i++) {
        const struct cdd_fatbin_code *c = &b->codes[i];
        int rc = add_code(NULL, a, c->kind, c->arch, c->variant, c->major,
                          c->minor, c->count);
        if (rc)
            return rc;
    }
    a->n_containers += b->n_containers;
    a->n_entries += b->n_entries;
    a->n_other += b->n_other;
    a->n_compressed += b->n_compressed;
    return 0;
}

char *cdd_fatbin_describe(const struct cdd_fatbin_info *fi, char *buf,
                          size_t len)
{
    size_t u = 0;
    int kind = 0;
    if (len)
        buf[0] = '\0';
    for (size_t i = 0; i < fi->n_codes && u + 1 < len; i++) {
        const struct cdd_fatbin_code *c = &fi->codes[i];
        const char *sep = kind == c->kind ? ", " : u ? "; " : "";
        int n;
        if (c->kind == CDD_FATBIN_KIND_SASS)
            n = snprintf(buf + u, len - u, "%s%ssm_%u%s", sep,
                         kind != c->kind ? "SASS " : "", c->arch,
                         c->variant == 'a' ? "a" : c->variant == 'f' ? "f"
                                                                    : "");
        else
            n = snprintf(buf + u, len - u, "%s%scompute_%u (ISA %u.%u)", sep,
                         kind != c->kind ? "PTX " : "", c->arch, c->major,
                         c->minor);
        kind = c->kind;
        if (n < 0)
            break;
        u += (size_t)n < len - u ? (size_t)n : len - u - 1;
    }
    if (!fi->n_codes && len)
        snprintf(buf, len, "no GPU code");
    return buf;
}

enum cdd_arch_fit cdd_fatbin_fit(const struct cdd_fatbin_info *fi,
                                 int cc_major, int cc_minor, unsigned *arch)
{
    unsigned dev = (unsigned)(cc_major * 10 + cc_minor);
    unsigned sass = 0, ptx = 0;
    int any = 0;
    *arch = 0;
    for (size_t i = 0; i < fi->n_codes; i++) {
        const struct cdd_fatbin_code *c = &fi->codes[i];
        any = 1;
        if (c->kind == CDD_FATBIN_KIND_SASS) {
            /* Same major, minor at most the device's; an arch-specific
             * cubin only on exactly its compute capability. */
            int runs = c->variant == 'a'
                           ? c->arch == dev
                           : (int)(c->arch / 10) == cc_major &&
                                 (int)(c->arch % 10) <= cc_minor;
            if (runs && c->arch >= sass)
                sass = c->arch;
        } else if (c->arch <= dev && c->arch >= ptx) {
            ptx = c->arch;
        }
    }
    if (!any)
        return CDD_ARCH_NO_CODE;
    if (sass) {
        *arch = sass;
        return CDD_ARCH_SASS;
    }
    if (ptx) {
        *arch = ptx;
        return CDD_ARCH_PTX_JIT;
    }
    return CDD_ARCH_NONE;
}
