/* ELF: what a shared object needs (DT_NEEDED, DT_RPATH, DT_RUNPATH), what it
 * is called (DT_SONAME) and what it provides (defined dynamic symbols), read
 * the way the dynamic loader reads them: program headers first, section
 * headers only for the symbol table and as a fallback. 32/64-bit, either
 * byte order. Every value from the file is distrusted: each table is checked
 * against the file before it is read and each count against a fixed limit. */
#include "binfmt_int.h"
#include "binrd_int.h"

#include "cdd/error.h"

#include <stdlib.h>
#include <string.h>

#define PT_LOAD 1
#define PT_DYNAMIC 2
#define PN_XNUM 0xffff

#define SHT_STRTAB 3
#define SHT_DYNAMIC 6
#define SHT_DYNSYM 11
#define SHN_UNDEF 0
#define SHN_XINDEX 0xffff
#define SHT_NOBITS 8

#define DT_NULL 0
#define DT_NEEDED 1
#define DT_HASH 4
#define DT_STRTAB 5
#define DT_SYMTAB 6
#define DT_STRSZ 10
#define DT_SONAME 14
#define DT_RPATH 15
#define DT_RUNPATH 29
#define DT_GNU_HASH 0x6ffffef5u

#define EM_386 3
#define EM_PPC64 21
#define EM_ARM 40
#define EM_X86_64 62
#define EM_AARCH64 183

/* Real objects stay orders of magnitude below these; they bound the work a
 * hostile header can ask for. */
#define MAX_PHNUM 65536u
#define MAX_SHNUM 1000000u
#define MAX_SYMBOLS 16000000u
#define MAX_HASH_WORDS 16000000u
#define MAX_DYN 1000000u

struct elf_seg {
    uint64_t off, vaddr, filesz;
};

struct elf {
    struct cdd_binrd *r;
    int is64, be;
    uint64_t phoff, phnum, shoff, shnum, shstrndx;
    unsigned phentsize, shentsize;
    struct elf_seg *loads;
    size_t nloads;
    /* the dynamic table, from PT_DYNAMIC or else SHT_DYNAMIC */
    int have_dyn, dyn_from_sec;
    uint64_t dyn_off, dyn_size;
    uint32_t dyn_link; /* SHT_DYNAMIC's string table section */
    int have_dynsym;
    uint64_t dynsym_off, dynsym_size, dynsym_entsize;
    uint32_t dynsym_link;
    /* values from the dynamic table */
    int have_strtab, have_strsz, have_symtab, have_hash, have_gnu_hash;
    uint64_t strtab, strsz, symtab, hash, gnu_hash;
    /* the dynamic string table as file range */
    int have_str;
    uint64_t str_off, str_end;
};

struct elf_shdr {
    uint32_t name, type, link, info;
    uint64_t offset, size, entsize;
};

static uint16_t ld16(const struct elf *e, const unsigned char *p)
{
    return cdd_ld16(p, e->be);
}
static uint32_t ld32(const struct elf *e, const unsigned char *p)
{
    return cdd_ld32(p, e->be);
}
static uint64_t ldw(const struct elf *e, const unsigned char *p)
{
    return e->is64 ? cdd_ld64(p, e->be) : cdd_ld32(p, e->be);
}

static const char *machine_name(int machine, int be)
{
    switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_386: return "i386";
    case EM_AARCH64: return "aarch64";
    case EM_PPC64: return be ? "ppc64" : "ppc64le";
    case EM_ARM: return "arm";
    default: return "unknown";
    }
}

static int read_shdr(struct elf *e, uint64_t idx, struct elf_shdr *sh)
{
    unsigned char b[64]; /* fixed: bytes of an ELF structure */
    if (idx >= e->shnum)
        return cdd_binrd_corrupt(e->r, "section index %llu is out of range "
                                 "(%llu sections)", (unsigned long long)idx,
                                 (unsigned long long)e->shnum);
    int rc = cdd_binrd_read(e->r, e->shoff + idx * e->shentsize, b,
                            e->is64 ? 64 : 40, "section header table");
    if (rc)
        return rc;
    sh->name = ld32(e, b);
    sh->type = ld32(e, b + 4);
    if (e->is64) {
        sh->offset = ldw(e, b + 24);
        sh->size = ldw(e, b + 32);
        sh->link = ld32(e, b + 40);
        sh->info = ld32(e, b + 44);
        sh->entsize = ldw(e, b + 56);
    } else {
        sh->offset = ldw(e, b + 16);
        sh->size = ldw(e, b + 20);
        sh->link = ld32(e, b + 24);
        sh->info = ld32(e, b + 28);
        sh->entsize = ldw(e, b + 36);
    }
    return 0;
}

/* File offset of a virtual address, through the PT_LOAD segments (the
 * dynamic table holds addresses, not offsets). *end: end of that
 * segment's file data. */
static int map_addr(const struct elf *e, uint64_t addr, uint64_t *off,
                    uint64_t *end)
{
    for (size_t i = 0; i < e->nloads; i++) {
        const struct elf_seg *s = &e->loads[i];
        if (addr >= s->vaddr && addr - s->vaddr < s->filesz) {
            *off = s->off + (addr - s->vaddr);
            *end = s->off + s->filesz;
            return 0;
        }
    }
    return -1;
}

/* The identification and the machine: all cdd_bin_identify() needs. h
 * receives the ELF header. */
static int read_ident(struct elf *e, struct cdd_bininfo *out,
                      unsigned char h[64]) /* fixed: bytes of an ELF structure */
{
    struct cdd_binrd *r = e->r;
    int rc = cdd_binrd_read(r, 0, h, 16, "ELF identification");
    if (rc)
        return rc;
    if (h[4] != 1 && h[4] != 2)
        return cdd_binrd_corrupt(r, "unknown ELF class %u", h[4]);
    if (h[5] != 1 && h[5] != 2)
        return cdd_binrd_corrupt(r, "unknown ELF data encoding %u", h[5]);
    e->is64 = h[4] == 2;
    e->be = h[5] == 2;
    rc = cdd_binrd_read(r, 0, h, e->is64 ? 64 : 52, "ELF header");
    if (rc)
        return rc;
    out->fmt = CDD_BIN_ELF;
    out->is_64 = e->is64;
    out->machine = ld16(e, h + 18);
    out->machine_name = machine_name(out->machine, e->be);
    return 0;
}

static int read_header(struct elf *e, struct cdd_bininfo *out)
{
    struct cdd_binrd *r = e->r;
    unsigned char h[64]; /* fixed: bytes of an ELF structure */
    int rc = read_ident(e, out, h);
    if (rc)
        return rc;
    const unsigned char *q = h + (e->is64 ? 32 : 28);
    e->phoff = ldw(e, q);
    e->shoff = ldw(e, q + (e->is64 ? 8 : 4));
    q += e->is64 ? 22 : 14; /* past e_flags and e_ehsize */
    e->phentsize = ld16(e, q);
    e->phnum = ld16(e, q + 2);
    e->shentsize = ld16(e, q + 4);
    e->shnum = e->shoff ? ld16(e, q + 6) : 0;
    e->shstrndx = ld16(e, q + 8);

    if (e->shoff) {
        if (e->shentsize < (e->is64 ? 64u : 40u))
            return cdd_binrd_corrupt(r, "section header entry size %u is too "
                                     "small", e->shentsize);
        /* Extended numbering: counts that do not fit the ELF header live
         * in section header 0. */
        if (e->shnum == 0 || e->phnum == PN_XNUM) {
            struct elf_shdr sh0;
            uint64_t n = e->shnum;
            e->shnum = 1; /* read_shdr checks the index against it */
            if ((rc = read_shdr(e, 0, &sh0)))
                return rc;
            e->shnum = n ? n : sh0.size;
            if (e->shstrndx == SHN_XINDEX)
                e->shstrndx = sh0.link;
            if (e->phnum == PN_XNUM)
                e->phnum = sh0.info;
        }
        if (e->shnum > MAX_SHNUM)
            return cdd_binrd_corrupt(r, "section count %llu is implausible",
                                     (unsigned long long)e->shnum);
        if (!cdd_binrd_in_file(r, e->shoff, e->shnum * e->shentsize))
            return cdd_binrd_corrupt(r, "section header table (%llu entries "
                                     "at offset 0x%llx) extends past end of "
                                     "file", (unsigned long long)e->shnum,
                                     (unsigned long long)e->shoff);
    }
    if (e->phnum) {
        if (e->phnum > MAX_PHNUM)
            return cdd_binrd_corrupt(r, "program header count %llu is "
                                     "implausible",
                                     (unsigned long long)e->phnum);
        if (e->phentsize < (e->is64 ? 56u : 32u))
            return cdd_binrd_corrupt(r, "program header entry size %u is too "
                                     "small", e->phentsize);
        if (!cdd_binrd_in_file(r, e->phoff, e->phnum * e->phentsize))
            return cdd_binrd_corrupt(r, "program header table (%llu entries "
                                     "at offset 0x%llx) extends past end of "
                                     "file", (unsigned long long)e->phnum,
                                     (unsigned long long)e->phoff);
    }
    return 0;
}

static int read_phdrs(struct elf *e)
{
    struct cdd_binrd *r = e->r;
    unsigned char b[56]; /* fixed: bytes of an ELF structure */
    for (uint64_t i = 0; i < e->phnum; i++) {
        int rc = cdd_binrd_read(r, e->phoff + i * e->phentsize, b,
                                e->is64 ? 56 : 32, "program header table");
        if (rc)
            return rc;
        uint32_t type = ld32(e, b);
        uint64_t off, vaddr, filesz;
        if (e->is64) {
            off = ldw(e, b + 8);
            vaddr = ldw(e, b + 16);
            filesz = ldw(e, b + 32);
        } else {
            off = ldw(e, b + 4);
            vaddr = ldw(e, b + 8);
            filesz = ldw(e, b + 16);
        }
        if (type == PT_LOAD) {
            /* A library cut short by a failed copy or download shows here
             * first: the loader would map bytes that are not there. */
            if (!cdd_binrd_in_file(r, off, filesz))
                return cdd_binrd_corrupt(r, "loadable segment %llu (offset "
                                         "0x%llx, 0x%llx bytes) extends past "
                                         "end of file: truncated?",
                                         (unsigned long long)i,
                                         (unsigned long long)off,
                                         (unsigned long long)filesz);
            if (vaddr + filesz < vaddr)
                return cdd_binrd_corrupt(r, "loadable segment %llu wraps "
                                         "around the address space",
                                         (unsigned long long)i);
            if (!e->loads && !(e->loads = calloc((size_t)e->phnum,
                                                 sizeof *e->loads)))
                return cdd_fail(CDD_E_NOMEM, r->path, 0, NULL);
            e->loads[e->nloads].off = off;
            e->loads[e->nloads].vaddr = vaddr;
            e->loads[e->nloads].filesz = filesz;
            e->nloads++;
        } else if (type == PT_DYNAMIC && !e->have_dyn) {
            if (!cdd_binrd_in_file(r, off, filesz))
                return cdd_binrd_corrupt(r, "ELF dynamic section (offset "
                                         "0x%llx, 0x%llx bytes) extends past "
                                         "end of file",
                                         (unsigned long long)off,
                                         (unsigned long long)filesz);
            e->have_dyn = 1;
            e->dyn_off = off;
            e->dyn_size = filesz;
        }
    }
    return 0;
}

/* Is section sh the CUDA fatbinary section (".nv_fatbin")? Only the name's
 * bytes inside the section-name table are compared; a table that is not
 * one (absent, NOBITS, outside the file) names nothing. */
static int is_fatbin_section(struct elf *e, const struct elf_shdr *names,
                             const struct elf_shdr *sh, int *yes)
{
    static const char want[] = ".nv_fatbin"; /* with its NUL */
    unsigned char b[sizeof want]; /* fixed: bytes of an ELF structure */
    *yes = 0;
    if (names->type == SHT_NOBITS || sh->name >= names->size ||
        names->size - sh->name < sizeof want ||
        !cdd_binrd_in_file(e->r, names->offset, names->size))
        return 0;
    int rc = cdd_binrd_read(e->r, names->offset + sh->name, b, sizeof b,
                            "section name table");
    if (rc)
        return rc;
    *yes = memcmp(b, want, sizeof want) == 0;
    return 0;
}

static int read_shdrs(struct elf *e, struct cdd_bininfo *out)
{
    int have_dynsec = 0;
    struct elf_shdr dynsec = {0}, names = {0};
    if (e->shstrndx && e->shstrndx < e->shnum) {
        int rc = read_shdr(e, e->shstrndx, &names);
        if (rc)
            return rc;
    }
    for (uint64_t i = 0; i < e->shnum; i++) {
        struct elf_shdr sh;
        int rc = read_shdr(e, i, &sh), fat = 0;
        if (rc)
            return rc;
        if (names.size && !out->has_fatbin && sh.type != SHT_NOBITS &&
            (rc = is_fatbin_section(e, &names, &sh, &fat)))
            return rc;
        if (fat) {
            /* cuobjdump and the CUDA runtime read these bytes; a section
             * that announces more than the file holds was cut short. */
            if (!cdd_binrd_in_file(e->r, sh.offset, sh.size))
                return cdd_binrd_corrupt(e->r, ".nv_fatbin section (offset "
                                         "0x%llx, 0x%llx bytes) extends past "
                                         "end of file: truncated?",
                                         (unsigned long long)sh.offset,
                                         (unsigned long long)sh.size);
            out->has_fatbin = 1;
            out->fatbin_off = sh.offset;
            out->fatbin_size = sh.size;
        }
        if (sh.type == SHT_DYNSYM && !e->have_dynsym) {
            e->have_dynsym = 1;
            e->dynsym_off = sh.offset;
            e->dynsym_size = sh.size;
            e->dynsym_entsize = sh.entsize;
            e->dynsym_link = sh.link;
        } else if (sh.type == SHT_DYNAMIC && !have_dynsec) {
            have_dynsec = 1;
            dynsec = sh;
        }
    }
    if (!e->have_dyn && have_dynsec) {
        if (!cdd_binrd_in_file(e->r, dynsec.offset, dynsec.size))
            return cdd_binrd_corrupt(e->r, "ELF dynamic section (offset "
                                     "0x%llx, 0x%llx bytes) extends past end "
                                     "of file",
                                     (unsigned long long)dynsec.offset,
                                     (unsigned long long)dynsec.size);
        e->have_dyn = 1;
        e->dyn_from_sec = 1;
        e->dyn_off = dynsec.offset;
        e->dyn_size = dynsec.size;
        e->dyn_link = dynsec.link;
    }
    return 0;
}

/* One dynamic entry; 0 with *tag = DT_NULL at the end of the table (a table
 * without DT_NULL ends where its segment ends, as nothing follows it). */
static int dyn_entry(struct elf *e, uint64_t i, uint64_t *tag, uint64_t *val)
{
    unsigned es = e->is64 ? 16 : 8;
    unsigned char b[16]; /* fixed: bytes of an ELF structure */
    if (i >= e->dyn_size / es) {
        *tag = DT_NULL;
        *val = 0;
        return 0;
    }
    if (i >= MAX_DYN)
        return cdd_binrd_corrupt(e->r, "ELF dynamic section has no DT_NULL "
                                 "within %u entries", MAX_DYN);
    int rc = cdd_binrd_read(e->r, e->dyn_off + i * es, b, es,
                            "ELF dynamic section");
    if (rc)
        return rc;
    *tag = ldw(e, b);
    *val = ldw(e, b + es / 2);
    return 0;
}

static int scan_dynamic(struct elf *e)
{
    for (uint64_t i = 0;; i++) {
        uint64_t tag = DT_NULL, val = 0;
        int rc = dyn_entry(e, i, &tag, &val);
        if (rc)
            return rc;
        if (tag == DT_NULL)
            return 0;
        /* The first of each wins, as in the loader. */
        if (tag == DT_STRTAB && !e->have_strtab)
            e->have_strtab = 1, e->strtab = val;
        else if (tag == DT_STRSZ && !e->have_strsz)
            e->have_strsz = 1, e->strsz = val;
        else if (tag == DT_SYMTAB && !e->have_symtab)
            e->have_symtab = 1, e->symtab = val;
        else if (tag == DT_HASH && !e->have_hash)
            e->have_hash = 1, e->hash = val;
        else if (tag == DT_GNU_HASH && !e->have_gnu_hash)
            e->have_gnu_hash = 1, e->gnu_hash = val;
    }
}

/* The dynamic string table as a file range: from DT_STRTAB/DT_STRSZ, or,
 * when the address is not loadable, from the dynamic section's link. */
static int locate_dynstr(struct elf *e)
{
    struct cdd_binrd *r = e->r;
    uint64_t off, end;
    if (e->have_strtab && map_addr(e, e->strtab, &off, &end) == 0) {
        if (e->have_strsz) {
            if (!cdd_binrd_in_file(r, off, e->strsz))
                return cdd_binrd_corrupt(r, "dynamic string table (offset "
                                         "0x%llx, 0x%llx bytes) extends past "
                                         "end of file",
                                         (unsigned long long)off,
                                         (unsigned long long)e->strsz);
            end = off + e->strsz;
        }
    } else if (e->dyn_from_sec && e->dyn_link) {
        struct elf_shdr sh;
        int rc = read_shdr(e, e->dyn_link, &sh);
        if (rc)
            return rc;
        if (sh.type != SHT_STRTAB || !cdd_binrd_in_file(r, sh.offset, sh.size))
            return cdd_binrd_corrupt(r, "dynamic section links to section "
                                     "%u, which is not a string table in the "
                                     "file", e->dyn_link);
        off = sh.offset;
        end = sh.offset + sh.size;
    } else if (e->have_strtab) {
        return cdd_binrd_corrupt(r, "DT_STRTAB address 0x%llx is not in any "
                                 "loadable segment",
                                 (unsigned long long)e->strtab);
    } else {
        return 0; /* checked by users */
    }
    e->have_str = 1;
    e->str_off = off;
    e->str_end = end;
    return 0;
}

static int dynstr(struct elf *e, uint64_t val, const char *what, char **out)
{
    if (!e->have_str)
        return cdd_binrd_corrupt(e->r, "%s present but no dynamic string "
                                 "table (DT_STRTAB)", what);
    if (val >= e->str_end - e->str_off)
        return cdd_binrd_corrupt(e->r, "%s: name offset 0x%llx is outside the "
                                 "dynamic string table", what,
                                 (unsigned long long)val);
    return cdd_binrd_str(e->r, e->str_off + val, e->str_end, what, out);
}

static int collect_dynamic(struct elf *e, struct cdd_bininfo *out)
{
    struct cdd_strvec needed = {NULL, 0, 0, CDD_BIN_MAX_NEEDED,
                                "DT_NEEDED entries"};
    int rc = 0;
    for (uint64_t i = 0;; i++) {
        uint64_t tag = DT_NULL, val = 0;
        char *s = NULL;
        rc = dyn_entry(e, i, &tag, &val);
        if (rc || tag == DT_NULL)
            break;
        if (tag == DT_NEEDED) {
            rc = dynstr(e, val, "DT_NEEDED", &s);
            if (!rc)
                rc = cdd_strvec_push(e->r, &needed, s);
        } else if (tag == DT_SONAME && !out->soname) {
            rc = dynstr(e, val, "DT_SONAME", &out->soname);
        } else if (tag == DT_RPATH && !out->rpath) {
            rc = dynstr(e, val, "DT_RPATH", &out->rpath);
        } else if (tag == DT_RUNPATH && !out->runpath) {
            rc = dynstr(e, val, "DT_RUNPATH", &out->runpath);
        }
        if (rc)
            break;
    }
    if (rc) {
        cdd_strvec_free(&needed);
        return rc;
    }
    out->needed = needed.v;
    out->n_needed = needed.n;
    return 0;
}

static int rd32_at(struct elf *e, uint64_t off, const char *what,
                   uint32_t *v)
{
    unsigned char b[4]; /* fixed: bytes of an ELF structure */
    int rc = cdd_binrd_read(e->r, off, b, 4, what);
    if (!rc)
        *v = ld32(e, b);
    return rc;
}

/* Without section headers the symbol count is only implied: DT_HASH says it
 * (nchain); DT_GNU_HASH needs the highest hashed index and a walk to the end
 * of its chain. */
static int gnu_hash_count(struct elf *e, uint64_t *count)
{
    struct cdd_binrd *r = e->r;
    const char *what = "DT_GNU_HASH table";
    uint64_t off, end;
    uint32_t nbuckets, symoffset, bloom, maxidx = 0;
    int rc;
    if (map_addr(e, e->gnu_hash, &off, &end))
        return cdd_binrd_corrupt(r, "DT_GNU_HASH address 0x%llx is not in any "
                                 "loadable segment",
                                 (unsigned long long)e->gnu_hash);
    if ((rc = rd32_at(e, off, what, &nbuckets)) ||
        (rc = rd32_at(e, off + 4, what, &symoffset)) ||
        (rc = rd32_at(e, off + 8, what, &bloom)))
        return rc;
    if (nbuckets > MAX_HASH_WORDS || bloom > MAX_HASH_WORDS)
        return cdd_binrd_corrupt(r, "DT_GNU_HASH table sizes (%u buckets, "
                                 "%u bloom words) are implausible", nbuckets,
                                 bloom);
    uint64_t buckets = off + 16 + (uint64_t)bloom * (e->is64 ? 8 : 4);
    uint64_t chains = buckets + (uint64_t)nbuckets * 4;
    if (!cdd_binrd_in_file(r, buckets, (uint64_t)nbuckets * 4))
        return cdd_binrd_corrupt(r, "DT_GNU_HASH buckets extend past end of "
                                 "file");
    for (uint32_t i = 0; i < nbuckets; i++) {
        uint32_t v;
        if ((rc = rd32_at(e, buckets + (uint64_t)i * 4, what, &v)))
            return rc;
        if (v > maxidx)
            maxidx = v;
    }
    if (maxidx == 0) {
        *count = symoffset;
        return 0;
    }
    if (maxidx < symoffset)
        return cdd_binrd_corrupt(r, "DT_GNU_HASH bucket points below its "
                                 "first hashed symbol (%u < %u)", maxidx,
                                 symoffset);
    for (uint64_t i = maxidx;; i++) {
        uint32_t v;
        if (i >= MAX_SYMBOLS)
            return cdd_binrd_corrupt(r, "DT_GNU_HASH chain does not end "
                                     "within %u symbols", MAX_SYMBOLS);
        if ((rc = rd32_at(e, chains + (i - symoffset) * 4, what, &v)))
            return rc;
        if (v & 1) {
            *count = i + 1;
            return 0;
        }
    }
}

static int keep_symbol(const unsigned char *st_info_other, uint16_t shndx)
{
    unsigned bind = st_info_other[0] >> 4, type = st_info_other[0] & 0xf;
    unsigned vis = st_info_other[1] & 3;
    if (shndx == SHN_UNDEF)
        return 0;
    if (bind != 1 && bind != 2 && bind != 10) /* GLOBAL, WEAK, GNU_UNIQUE */
        return 0;
    if (type != 1 && type != 2 && type != 5 && type != 10)
        return 0; /* OBJECT, FUNC, COMMON, GNU_IFUNC */
    return vis == 0 || vis == 3; /* DEFAULT, PROTECTED */
}

static int collect_exports(struct elf *e, struct cdd_bininfo *out)
{
    struct cdd_binrd *r = e->r;
    struct cdd_strvec ex = {NULL, 0, 0, CDD_BIN_MAX_EXPORTS,
                            "exported symbols"};
    uint64_t sym_off = 0, count = 0, entsize = e->is64 ? 24 : 16;
    uint64_t str_off = 0, str_end = 0;
    int rc = 0;

    if (e->have_dynsym) {
        struct elf_shdr strsh;
        if (e->dynsym_entsize != 0 &&
            (e->dynsym_entsize < entsize || e->dynsym_entsize > 4096))
            return cdd_binrd_corrupt(r, "dynamic symbol entry size %llu is "
                                     "invalid",
                                     (unsigned long long)e->dynsym_entsize);
        if (e->dynsym_entsize)
            entsize = e->dynsym_entsize;
        sym_off = e->dynsym_off;
        count = e->dynsym_size / entsize;
        if ((rc = read_shdr(e, e->dynsym_link, &strsh)))
            return rc;
        if (!cdd_binrd_in_file(r, strsh.offset, strsh.size))
            return cdd_binrd_corrupt(r, "dynamic symbol string table (offset "
                                     "0x%llx, 0x%llx bytes) extends past end "
                                     "of file",
                                     (unsigned long long)strsh.offset,
                                     (unsigned long long)strsh.size);
        str_off = strsh.offset;
        str_end = strsh.offset + strsh.size;
    } else if (e->have_symtab) {
        uint64_t end;
        if (map_addr(e, e->symtab, &sym_off, &end))
            return cdd_binrd_corrupt(r, "DT_SYMTAB address 0x%llx is not in "
                                     "any loadable segment",
                                     (unsigned long long)e->symtab);
        if (!e->have_str)
            return cdd_binrd_corrupt(r, "DT_SYMTAB present but no dynamic "
                                     "string table (DT_STRTAB)");
        str_off = e->str_off;
        str_end = e->str_end;
        if (e->have_hash) {
            uint64_t hoff;
            uint32_t nchain;
            if (map_addr(e, e->hash, &hoff, &end))
                return cdd_binrd_corrupt(r, "DT_HASH address 0x%llx is not "
                                         "in any loadable segment",
                                         (unsigned long long)e->hash);
            if ((rc = rd32_at(e, hoff + 4, "DT_HASH table", &nchain)))
                return rc;
            count = nchain;
        } else if (e->have_gnu_hash) {
            if ((rc = gnu_hash_count(e, &count)))
                return rc;
        } else if (e->str_off > sym_off) {
            /* Linkers place .dynstr right after .dynsym. */
            count = (e->str_off - sym_off) / entsize;
        } else {
            return 0;
        }
    } else {
        return 0;
    }

    if (count > MAX_SYMBOLS)
        return cdd_binrd_corrupt(r, "dynamic symbol count %llu is "
                                 "implausible", (unsigned long long)count);
    if (!cdd_binrd_in_file(r, sym_off, count * entsize))
        return cdd_binrd_corrupt(r, "dynamic symbol table (%llu entries at "
                                 "offset 0x%llx) extends past end of file",
                                 (unsigned long long)count,
                                 (unsigned long long)sym_off);
    if ((rc = cdd_binrd_pin(r, str_off, str_end - str_off)))
        return rc;
    for (uint64_t i = 1; i < count; i++) { /* 0 is the null symbol */
        unsigned char b[24]; /* fixed: bytes of an ELF structure */
        uint32_t name;
        uint16_t shndx;
        char *s = NULL;
        rc = cdd_binrd_read(r, sym_off + i * entsize, b, (size_t)(e->is64 ? 24 : 16),
                            "dynamic symbol table");
        if (rc)
            break;
        name = ld32(e, b);
        shndx = ld16(e, b + (e->is64 ? 6 : 14));
        if (!keep_symbol(b + (e->is64 ? 4 : 12), shndx) || name == 0)
            continue;
        if (name >= str_end - str_off) {
            rc = cdd_binrd_corrupt(r, "dynamic symbol %llu: name offset "
                                   "0x%x is outside its string table",
                                   (unsigned long long)i, name);
            break;
        }
        rc = cdd_binrd_str(r, str_off + name, str_end, "dynamic symbol", &s);
        if (!rc)
            rc = cdd_strvec_push(r, &ex, s);
        if (rc)
            break;
    }
    if (rc) {
        cdd_strvec_free(&ex);
        return rc;
    }
    out->exports = ex.v;
    out->n_exports = ex.n;
    return 0;
}

int cdd_elf_identify(struct cdd_binrd *r, struct cdd_bininfo *out)
{
    struct elf e;
    unsigned char h[64]; /* fixed: bytes of an ELF structure */
    memset(&e, 0, sizeof e);
    e.r = r;
    return read_ident(&e, out, h);
}

int cdd_elf_parse(struct cdd_binrd *r, struct cdd_bininfo *out)
{
    struct elf e;
    int rc;

    memset(&e, 0, sizeof e);
    e.r = r;
    if ((rc = read_header(&e, out)) || (rc = read_phdrs(&e)) ||
        (rc = read_shdrs(&e, out)))
        goto out;
    if (!e.have_dyn)
        goto out; /* static executable or object file: needs nothing */
    if ((rc = scan_dynamic(&e)) || (rc = locate_dynstr(&e)) ||
        (rc = collect_dynamic(&e, out)) || (rc = collect_exports(&e, out)))
        goto out;
out:
    free(e.loads);
    return rc;
}
