/* ELF side of the binary parsers (binfile.h): a real shared object built by
 * the C compiler at test time, synthetic images in all four class/byte-order
 * combinations with and without section headers and with either hash table,
 * and hostile variants of them: targeted bad fields, every truncation, a few
 * thousand seeded random mutations, and a 1 GB virtual file of which only
 * the tables may be read. */
#include "fixture.h"
#include "test.h"
#include "binfile_check.h"

#include "cdd/binfile.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"

#include <stdint.h>

/* Parsing from memory, and what any input may give (binfile_check.h). */
static int parse_mem(const void *buf, size_t len, struct cdd_bininfo *b)
{
    return bf_parse_mem(buf, len, "image", b);
}
#define acceptable bf_acceptable
#define check_sane bf_check_sane
#define truncations(img, len, what) bf_truncations(img, len, "image", what)

/* ---- synthetic image builder ------------------------------------------- */

#define BASE 0x10000u /* load address, so that addresses differ from offsets */

struct img {
    unsigned char *b;
    size_t len, cap;
    int is64, be;
};

static size_t img_alloc(struct img *m, size_t n, size_t align)
{
    size_t off = (m->len + align - 1) / align * align;
    if (off + n > m->cap) {
        size_t cap = (off + n) * 2;
        unsigned char *b = realloc(m->b, cap);
        if (!b)
            abort();
        memset(b + m->cap, 0, cap - m->cap);
        m->b = b;
        m->cap = cap;
    }
    m->len = off + n;
    return off;
}

static void put(struct img *m, size_t off, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        m->b[off + i] = (unsigned char)(v >> (8 * (m->be ? n - 1 - i : i)));
}
#define P16(m, o, v) put(m, o, v, 2)
#define P32(m, o, v) put(m, o, v, 4)
#define PW(m, o, v) put(m, o, v, (m)->is64 ? 8 : 4)

struct elf_spec {
    int is64, be, sections, hash; /* hash: 0 none, 1 DT_HASH, 2 DT_GNU_HASH */
    const char *soname, *rpath, *runpath;
    const char *const *needed;
    size_t n_needed;
    const char *const *exports;
    size_t n_exports;
};

struct elf_lay {
    size_t phoff, shoff, dynsym, nsyms, dynstr, dynstr_size, hash, dyn, n_dyn;
};

enum { DT_NULL_ = 0, DT_NEEDED_ = 1, DT_HASH_ = 4, DT_STRTAB_ = 5,
       DT_SYMTAB_ = 6, DT_STRSZ_ = 10, DT_SYMENT_ = 11, DT_SONAME_ = 14,
       DT_RPATH_ = 15, DT_DEBUG_ = 21, DT_RUNPATH_ = 29,
       DT_GNU_HASH_ = 0x6ffffef5 };

/* Symbols every image carries besides the spec's exports, to prove the
 * filter: only weak_obj is an export. */
static const struct {
    const char *name;
    unsigned bind, type, vis, shndx;
} extra_syms[] = {
    {"weak_obj", 2, 1, 0, 5},   {"malloc", 1, 2, 0, 0},
    {"hidden_fn", 1, 2, 2, 5},  {"local_fn", 0, 2, 0, 5},
    {"notype_sym", 1, 0, 0, 5},
};
#define N_EXTRA (sizeof extra_syms / sizeof extra_syms[0])

static size_t str_add(struct img *s, const char *str)
{
    size_t n = strlen(str) + 1, off = img_alloc(s, n, 1);
    memcpy(s->b + off, str, n);
    return off;
}

static unsigned char *build_elf(const struct elf_spec *sp, struct elf_lay *lay,
                                size_t *len)
{
    struct img m = {NULL, 0, 0, sp->is64, sp->be};
    struct img st = {NULL, 0, 0, 0, 0};
    size_t ehsize = sp->is64 ? 64 : 52, phent = sp->is64 ? 56 : 32;
    size_t shent = sp->is64 ? 64 : 40, syment = sp->is64 ? 24 : 16;
    size_t dynent = sp->is64 ? 16 : 8;
    size_t *needed_off = calloc(sp->n_needed + 1, sizeof *needed_off);
    size_t *sym_name = calloc(sp->n_exports + N_EXTRA + 1, sizeof *sym_name);
    size_t soname_off = 0, rpath_off = 0, runpath_off = 0;

    memset(lay, 0, sizeof *lay);
    str_add(&st, "");
    for (size_t i = 0; i < sp->n_needed; i++)
        needed_off[i] = str_add(&st, sp->needed[i]);
    if (sp->soname)
        soname_off = str_add(&st, sp->soname);
    if (sp->rpath)
        rpath_off = str_add(&st, sp->rpath);
    if (sp->runpath)
        runpath_off = str_add(&st, sp->runpath);
    /* names in an order unrelated to the symbols', as linkers leave them */
    for (size_t k = 0; k < sp->n_exports; k++) {
        size_t i = k * 7919 % sp->n_exports;
        if (sp->n_exports % 7919 == 0)
            i = k;
        sym_name[i] = str_add(&st, sp->exports[i]);
    }
    for (size_t i = 0; i < N_EXTRA; i++)
        sym_name[sp->n_exports + i] = str_add(&st, extra_syms[i].name);

    img_alloc(&m, ehsize, 1);
    lay->phoff = img_alloc(&m, 2 * phent, 8);
    /* .dynsym right before .dynstr, as linkers place them */
    lay->nsyms = 1 + sp->n_exports + N_EXTRA;
    lay->dynsym = img_alloc(&m, lay->nsyms * syment, 8);
    for (size_t i = 1; i < lay->nsyms; i++) {
        size_t o = lay->dynsym + i * syment;
        unsigned bind = 1, type = 2, vis = 0, shndx = 5;
        if (i > sp->n_exports) {
            size_t x = i - 1 - sp->n_exports;
            bind = extra_syms[x].bind;
            type = extra_syms[x].type;
            vis = extra_syms[x].vis;
            shndx = extra_syms[x].shndx;
        }
        P32(&m, o, sym_name[i - 1]);
        if (sp->is64) {
            m.b[o + 4] = (unsigned char)(bind << 4 | type);
            m.b[o + 5] = (unsigned char)vis;
            P16(&m, o + 6, shndx);
            put(&m, o + 8, BASE + 0x100 * i, 8);
        } else {
            put(&m, o + 4, BASE + 0x100 * i, 4);
            m.b[o + 12] = (unsigned char)(bind << 4 | type);
            m.b[o + 13] = (unsigned char)vis;
            P16(&m, o + 14, shndx);
        }
    }
    lay->dynstr = img_alloc(&m, st.len, 1);
    lay->dynstr_size = st.len;
    memcpy(m.b + lay->dynstr, st.b, st.len);
    if (sp->hash == 1) {
        lay->hash = img_alloc(&m, 4 * (3 + lay->nsyms), 8);
        P32(&m, lay->hash, 1);
        P32(&m, lay->hash + 4, lay->nsyms);
        P32(&m, lay->hash + 8, lay->nsyms - 1);
    } else if (sp->hash == 2) {
        size_t bloom = sp->is64 ? 8 : 4;
        size_t nchain = lay->nsyms - 1;
        lay->hash = img_alloc(&m, 16 + bloom + 4 + 4 * nchain, 8);
        P32(&m, lay->hash, 1);      /* nbuckets */
        P32(&m, lay->hash + 4, 1);  /* symoffset */
        P32(&m, lay->hash + 8, 1);  /* bloom words */
        P32(&m, lay->hash + 12, 6); /* bloom shift */
        PW(&m, lay->hash + 16, (uint64_t)-1);
        P32(&m, lay->hash + 16 + bloom, 1);
        for (size_t i = 0; i < nchain; i++)
            P32(&m, lay->hash + 20 + bloom + 4 * i,
                (0x1234u * (i + 1)) << 1 | (i + 1 == nchain));
    }

    lay->n_dyn = sp->n_needed + 3 + 6 + 1;
    lay->dyn = img_alloc(&m, lay->n_dyn * dynent, 8);
    size_t d = 0;
#define DYN(tag, val)                                                          \
    do {                                                                       \
        PW(&m, lay->dyn + d * dynent, tag);                                    \
        PW(&m, lay->dyn + d * dynent + dynent / 2, val);                       \
        d++;                                                                   \
    } while (0)
    for (size_t i = 0; i < sp->n_needed; i++)
        DYN(DT_NEEDED_, needed_off[i]);
    if (sp->soname)
        DYN(DT_SONAME_, soname_off);
    if (sp->rpath)
        DYN(DT_RPATH_, rpath_off);
    if (sp->runpath)
        DYN(DT_RUNPATH_, runpath_off);
    DYN(DT_STRTAB_, BASE + lay->dynstr);
    DYN(DT_STRSZ_, lay->dynstr_size);
    DYN(DT_SYMTAB_, BASE + lay->dynsym);
    DYN(DT_SYMENT_, syment);
    if (sp->hash)
        DYN(sp->hash == 1 ? DT_HASH_ : DT_GNU_HASH_, BASE + lay->hash);
    DYN(DT_NULL_, 0);
    lay->n_dyn = d;
#undef DYN

    if (sp->sections) {
        lay->shoff = img_alloc(&m, 4 * shent, 8);
        struct {
            unsigned type, link;
            size_t off, size, entsize;
        } sh[4] = {{0, 0, 0, 0, 0},
                   {3, 0, lay->dynstr, lay->dynstr_size, 0},
                   {11, 1, lay->dynsym, lay->nsyms * syment, syment},
                   {6, 1, lay->dyn, lay->n_dyn * dynent, dynent}};
        for (int i = 1; i < 4; i++) {
            size_t o = lay->shoff + i * shent;
            P32(&m, o + 4, sh[i].type);
            if (sp->is64) {
                put(&m, o + 16, BASE + sh[i].off, 8);
                put(&m, o + 24, sh[i].off, 8);
                put(&m, o + 32, sh[i].size, 8);
                P32(&m, o + 40, sh[i].link);
                put(&m, o + 56, sh[i].entsize, 8);
            } else {
                put(&m, o + 12, BASE + sh[i].off, 4);
                put(&m, o + 16, sh[i].off, 4);
                put(&m, o + 20, sh[i].size, 4);
                P32(&m, o + 24, sh[i].link);
                put(&m, o + 36, sh[i].entsize, 4);
            }
        }
    }

    memcpy(m.b, "\177ELF", 4);
    m.b[4] = sp->is64 ? 2 : 1;
    m.b[5] = sp->be ? 2 : 1;
    m.b[6] = 1;
    P16(&m, 16, 3); /* ET_DYN */
    P16(&m, 18, sp->is64 ? (sp->be ? 21 : 62) : (sp->be ? 20 : 3));
    P32(&m, 20, 1);
    size_t q = sp->is64 ? 32 : 28;
    PW(&m, q, lay->phoff);
    PW(&m, q + (sp->is64 ? 8 : 4), lay->shoff);
    q += sp->is64 ? 20 : 12;
    P16(&m, q, ehsize);
    P16(&m, q + 2, phent);
    P16(&m, q + 4, 2);
    P16(&m, q + 6, sp->sections ? shent : 0);
    P16(&m, q + 8, sp->sections ? 4 : 0);
    for (int i = 0; i < 2; i++) {
        size_t o = lay->phoff + i * phent;
        size_t off = i ? lay->dyn : 0, sz = i ? lay->n_dyn * dynent : m.len;
        P32(&m, o, i ? 2 : 1);
        if (sp->is64) {
            put(&m, o + 8, off, 8);
            put(&m, o + 16, BASE + off, 8);
            put(&m, o + 24, BASE + off, 8);
            put(&m, o + 32, sz, 8);
            put(&m, o + 40, sz, 8);
        } else {
            put(&m, o + 4, off, 4);
            put(&m, o + 8, BASE + off, 4);
            put(&m, o + 12, BASE + off, 4);
            put(&m, o + 16, sz, 4);
            put(&m, o + 20, sz, 4);
        }
    }
    free(st.b);
    free(needed_off);
    free(sym_name);
    *len = m.len;
    return m.b;
}

static const char *const cudnn_needed[] = {"libcublas.so.11",
                                           "libcublasLt.so.11", "libz.so.1",
                                           "libpthread.so.0", "libc.so.6"};
static const char *const cudnn_exports[] = {
    "cudnnGetVersion", "cudnnCreate", "cudnnDestroy",
    "cudnnCnnInferVersionCheck", "cudnnConvolutionForward"};

static struct elf_spec spec_of(int is64, int be, int sections, int hash)
{
    struct elf_spec sp = {is64, be, sections, hash, "libcudnn_cnn_infer.so.8",
                          NULL, "$ORIGIN", cudnn_needed, 5, cudnn_exports, 5};
    if (hash == 1)
        sp.rpath = "/opt/old/lib";
    return sp;
}

static void check_cudnn_like(const struct cdd_bininfo *b, const struct elf_spec *sp)
{
    CHECK_INT(b->fmt, CDD_BIN_ELF);
    CHECK_INT(b->is_64, sp->is64);
    CHECK_STR(b->soname, "libcudnn_cnn_infer.so.8");
    CHECK_INT(b->n_needed, 5);
    for (size_t i = 0; i < 5 && i < b->n_needed; i++)
        CHECK_STR(b->needed[i], cudnn_needed[i]);
    CHECK_STR(b->runpath, "$ORIGIN");
    if (sp->rpath)
        CHECK_STR(b->rpath, sp->rpath);
    else
        CHECK(b->rpath == NULL);
    CHECK_INT(b->n_delay_needed, 0);
    CHECK_INT(b->n_exports, 6);
    for (size_t i = 0; i < 5; i++)
        CHECK_MSG(cdd_bininfo_exports(b, cudnn_exports[i]), "%s",
                  cudnn_exports[i]);
    CHECK(cdd_bininfo_exports(b, "weak_obj"));
    CHECK(!cdd_bininfo_exports(b, "malloc"));
    CHECK(!cdd_bininfo_exports(b, "hidden_fn"));
    CHECK(!cdd_bininfo_exports(b, "local_fn"));
    CHECK(!cdd_bininfo_exports(b, "notype_sym"));
    CHECK(!cdd_bininfo_exports(b, ""));
    check_sane(b);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* Seeded random damage (binfile_check.h) with ELF's telling values. */
static void mutations(const unsigned char *img, size_t len, int rounds)
{
    static const uint32_t nasty[] = {BF_NASTY, 0x10000, 0xfffffff0u, 0x40};
    struct bf_damage d = {"image", nasty, sizeof nasty / sizeof nasty[0], 0,
                          &rng_state};
    bf_mutations(img, len, rounds, &d);
}

/* ---- tests -------------------------------------------------------------- */

static void test_synthetic_variants(void)
{
    for (int v = 0; v < 24; v++) {
        struct elf_spec sp = spec_of(v & 1, (v >> 1) & 1, (v >> 2) & 1, v / 8);
        struct elf_lay lay;
        size_t len;
        unsigned char *img = build_elf(&sp, &lay, &len);
        struct cdd_bininfo b = {0};
        int rc = parse_mem(img, len, &b);
        CHECK_MSG(rc == 0, "variant %d: %s", v, cdd_last_error()->msg);
        if (rc == 0) {
            check_cudnn_like(&b, &sp);
            if (!sp.be)
                CHECK_STR(b.machine_name, sp.is64 ? "x86_64" : "i386");
            else if (sp.is64)
                CHECK_STR(b.machine_name, "ppc64");
        }
        cdd_bininfo_clear(&b);
        free(img);
    }
}

static void test_real_shared_object(void)
{
    const char *cc = getenv("CC");
    const char *dir = fx_scratch("elf");
    char src[1200], so[1200], cmd[4096];
    struct cdd_bininfo b = {0};
    unsigned char *img = NULL;
    size_t len = 0;
    FILE *f;

    CHECK(dir != NULL);
    if (!dir)
        return;
    snprintf(src, sizeof src, "%s/foo.c", dir);
    snprintf(so, sizeof so, "%s/libfoo.so.8", dir);
    f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#include <math.h>\n#include <zlib.h>\n"
          "__attribute__((visibility(\"hidden\"))) int hidden_helper(void)"
          " { return 1; }\n"
          "static int local_helper(void) { return 2; }\n"
          "int cudnnGetVersion(void) { return 8498 + local_helper() +"
          " hidden_helper() - 1 + 1; }\n"
          "const char *cudnnGetErrorString(int s) { (void)s;"
          " return zlibVersion(); }\n"
          "double cudnnTestMath(double x) { return cos(x); }\n"
          "int cudnn_exported_object = 42;\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd,
             "%s -shared -fPIC -o '%s' '%s' -Wl,-soname,libfoo.so.8 "
             "-Wl,--no-as-needed -lz -lm "
             "-Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib' 2>'%s/cc.log'",
             cc && *cc ? cc : "cc", so, src, dir);
    struct cdd_stat st = {CDD_FT_NONE, 0, 0, 0};
    if (system(cmd) != 0 || cdd_fs_lstat(so, &st) != 0 ||
        st.type != CDD_FT_FILE) {
        fprintf(stderr, "  skipped: cannot build a shared object with zlib "
                        "(%s)\n", cc && *cc ? cc : "cc");
        cdd_fs_remove_tree(dir);
        return;
    }
    int rc = cdd_bin_parse_file(so, &b);
    CHECK_MSG(rc == 0, "%s", cdd_last_error()->msg);
    if (rc != 0) {
        cdd_fs_remove_tree(dir);
        return;
    }
    if (b.fmt != CDD_BIN_ELF) {
        fprintf(stderr, "  skipped: the compiler does not make ELF files\n");
        cdd_bininfo_clear(&b);
        cdd_fs_remove_tree(dir);
        return;
    }
    CHECK_STR(b.soname, "libfoo.so.8");
    CHECK_STR(b.runpath, "$ORIGIN/../lib");
    CHECK(b.rpath == NULL);
    CHECK(b.n_needed >= 3);
    if (b.n_needed >= 3) {
        CHECK_STR(b.needed[0], "libz.so.1");
        CHECK_STR(b.needed[1], "libm.so.6");
        int has_libc = 0;
        for (size_t i = 2; i < b.n_needed; i++)
            has_libc |= strcmp(b.needed[i], "libc.so.6") == 0;
        CHECK(has_libc);
    }
    CHECK(cdd_bininfo_exports(&b, "cudnnGetVersion"));
    CHECK(cdd_bininfo_exports(&b, "cudnnGetErrorString"));
    CHECK(cdd_bininfo_exports(&b, "cudnnTestMath"));
    CHECK(cdd_bininfo_exports(&b, "cudnn_exported_object"));
    CHECK(!cdd_bininfo_exports(&b, "hidden_helper"));
    CHECK(!cdd_bininfo_exports(&b, "local_helper"));
    CHECK(!cdd_bininfo_exports(&b, "zlibVersion"));
    CHECK(!cdd_bininfo_exports(&b, "cos"));
    CHECK(!cdd_bininfo_exports(&b, "cudnnCreate"));
    check_sane(&b);
    cdd_bininfo_clear(&b);

    img = fx_read(so, &len);
    CHECK(img != NULL);
    if (img) {
        truncations(img, len, "libfoo.so.8");
        mutations(img, len, 2000);
    }
    free(img);
    cdd_fs_remove_tree(dir);
}

static void test_extended_numbering(void)
{
    /* e_shnum 0: the count lives in section header 0's sh_size. */
    struct elf_spec sp = spec_of(1, 0, 1, 0);
    struct elf_lay lay;
    size_t len;
    unsigned char *img = build_elf(&sp, &lay, &len);
    struct img m = {img, len, len, 1, 0};
    struct cdd_bininfo b = {0};
    P16(&m, 60, 0);
    put(&m, lay.shoff + 32, 4, 8);
    CHECK_INT(parse_mem(img, len, &b), 0);
    check_cudnn_like(&b, &sp);
    cdd_bininfo_clear(&b);
    /* ... and e_phnum PN_XNUM takes the count from sh_info. */
    P16(&m, 56, 0xffff);
    P32(&m, lay.shoff + 44, 2);
    CHECK_INT(parse_mem(img, len, &b), 0);
    check_cudnn_like(&b, &sp);
    cdd_bininfo_clear(&b);
    /* a huge extended count runs past the file */
    put(&m, lay.shoff + 32, 0xffffffffffull, 8);
    CHECK_INT(parse_mem(img, len, &b), CDD_E_CORRUPT);
    free(img);
}

/* Set the value of the first dynamic entry with this tag. */
static void dyn_set(struct img *m, const struct elf_lay *lay, uint64_t tag,
                    uint64_t val)
{
    size_t es = m->is64 ? 16 : 8;
    for (size_t i = 0; i < lay->n_dyn; i++) {
        size_t o = lay->dyn + i * es;
        uint64_t t = 0;
        for (size_t k = 0; k < es / 2; k++)
            t |= (uint64_t)m->b[o + k] << (8 * k); /* little-endian images */
        if (t == tag) {
            PW(m, o + es / 2, val);
            return;
        }
    }
    abort();
}

/* Expect CDD_E_CORRUPT whose message contains `needle`. */
#define EXPECT_CORRUPT(img, len, needle)                                       \
    do {                                                                       \
        struct cdd_bininfo b_ = {0};                                           \
        int rc_ = parse_mem(img, len, &b_);                                    \
        CHECK_INT(rc_, CDD_E_CORRUPT);                                         \
        CHECK_MSG(rc_ != CDD_E_CORRUPT ||                                      \
                      strstr(cdd_last_error()->msg, needle),                   \
                  "message \"%s\" lacks \"%s\"", cdd_last_error()->msg,        \
                  needle);                                                     \
        CHECK_STR(cdd_last_error()->path, "image");                            \
        cdd_bininfo_clear(&b_);                                                \
    } while (0)

static void test_hostile_fields(void)
{
    for (int sections = 0; sections < 2; sections++) {
        struct elf_spec sp = spec_of(1, 0, sections, 2);
        struct elf_lay lay;
        size_t len;
        unsigned char *orig = build_elf(&sp, &lay, &len);
        unsigned char *img = malloc(len);
        struct img m = {img, len, len, 1, 0};
        struct cdd_bininfo b = {0};

#define RESET() memcpy(img, orig, len)
        RESET();
        P16(&m, 56, 0xfffe); /* e_phnum */
        EXPECT_CORRUPT(img, len, "program header table");
        RESET();
        P16(&m, 54, 1); /* e_phentsize */
        EXPECT_CORRUPT(img, len, "entry size");
        RESET();
        put(&m, 32, 0xfffffffffffffff0ull, 8); /* e_phoff */
        EXPECT_CORRUPT(img, len, "past end of file");
        RESET();
        m.b[4] = 7;
        EXPECT_CORRUPT(img, len, "class");
        RESET();
        m.b[5] = 0;
        EXPECT_CORRUPT(img, len, "encoding");
        /* PT_DYNAMIC larger than the file */
        RESET();
        put(&m, lay.phoff + 56 + 32, 0x7fffffffffffull, 8);
        EXPECT_CORRUPT(img, len, "dynamic section");
        /* PT_LOAD larger than the file: a truncated library */
        RESET();
        put(&m, lay.phoff + 32, len + 1, 8);
        EXPECT_CORRUPT(img, len, "truncated?");
        RESET();
        dyn_set(&m, &lay, DT_NEEDED_, 0xffffff);
        EXPECT_CORRUPT(img, len, "DT_NEEDED");
        RESET();
        dyn_set(&m, &lay, DT_STRSZ_, (uint64_t)-8);
        EXPECT_CORRUPT(img, len, "string table");
        RESET();
        dyn_set(&m, &lay, DT_STRTAB_, 0x7000);
        EXPECT_CORRUPT(img, len, "DT_STRTAB");
        /* the string table ends in the middle of the last name */
        RESET();
        dyn_set(&m, &lay, DT_STRSZ_, lay.dynstr_size - 2);
        dyn_set(&m, &lay, DT_SONAME_, lay.dynstr_size - sizeof "notype_sym");
        EXPECT_CORRUPT(img, len, "NUL-terminated");
        /* a name longer than the limit */
        RESET();
        {
            size_t big = CDD_BIN_MAX_STRING + 100;
            unsigned char *g = calloc(1, len + big + 1);
            memcpy(g, orig, len);
            memset(g + len, 'a', big);
            struct img gm = {g, len + big + 1, len + big + 1, 1, 0};
            put(&gm, lay.phoff + 32, len + big + 1, 8); /* PT_LOAD covers it */
            put(&gm, lay.phoff + 40, len + big + 1, 8);
            dyn_set(&gm, &lay, DT_STRSZ_, len + big + 1 - lay.dynstr);
            dyn_set(&gm, &lay, DT_SONAME_, len - lay.dynstr);
            EXPECT_CORRUPT(g, len + big + 1, "longer than 4096");
            free(g);
        }
        /* no DT_NULL: the table ends with its segment */
        RESET();
        PW(&m, lay.dyn + (lay.n_dyn - 1) * 16, DT_DEBUG_);
        CHECK_INT(parse_mem(img, len, &b), 0);
        cdd_bininfo_clear(&b);
        /* the string table is the dynamic table itself: garbage names, but
         * bounded ones */
        RESET();
        dyn_set(&m, &lay, DT_STRTAB_, BASE + lay.dyn);
        dyn_set(&m, &lay, DT_STRSZ_, lay.n_dyn * 16);
        CHECK(acceptable(parse_mem(img, len, &b)));
        cdd_bininfo_clear(&b);
        if (!sections) {
            /* GNU hash chain without its end marker: the walk goes on
             * into whatever follows */
            RESET();
            for (size_t i = 0; i + 1 < lay.nsyms; i++)
                P32(&m, lay.hash + 28 + 4 * i, 2);
            CHECK(acceptable(parse_mem(img, len, &b)));
            cdd_bininfo_clear(&b);
            RESET();
            P32(&m, lay.hash, 0xffffffffu); /* nbuckets */
            EXPECT_CORRUPT(img, len, "implausible");
            RESET();
            P32(&m, lay.hash + 24, 0x7fffffff); /* bucket past the chains */
            EXPECT_CORRUPT(img, len, "DT_GNU_HASH");
            RESET();
            dyn_set(&m, &lay, DT_SYMTAB_, 3);
            EXPECT_CORRUPT(img, len, "DT_SYMTAB");
        } else {
            RESET();
            P16(&m, 60, 0xffff); /* e_shnum */
            EXPECT_CORRUPT(img, len, "section header table");
            RESET();
            put(&m, 40, 0xffffffffffffff00ull, 8); /* e_shoff */
            EXPECT_CORRUPT(img, len, "section header table");
            RESET();
            put(&m, lay.shoff + 2 * 64 + 56, 1, 8); /* .dynsym sh_entsize */
            EXPECT_CORRUPT(img, len, "entry size");
            RESET();
            P32(&m, lay.shoff + 2 * 64 + 40, 999); /* .dynsym sh_link */
            EXPECT_CORRUPT(img, len, "out of range");
            RESET();
            put(&m, lay.shoff + 2 * 64 + 32, 0xffffffffull * 24, 8);
            EXPECT_CORRUPT(img, len, "implausible");
            RESET();
            put(&m, lay.shoff + 2 * 64 + 32, 1000 * 24, 8);
            EXPECT_CORRUPT(img, len, "past end of file");
            /* a symbol name outside its string table */
            RESET();
            P32(&m, lay.dynsym + 24, 0xfffff);
            EXPECT_CORRUPT(img, len, "outside");
        }
#undef RESET
        free(img);
        free(orig);
    }
}

static void test_needed_limit(void)
{
    static char names[CDD_BIN_MAX_NEEDED + 1][16];
    static const char *ptrs[CDD_BIN_MAX_NEEDED + 1];
    for (int i = 0; i <= CDD_BIN_MAX_NEEDED; i++) {
        snprintf(names[i], sizeof names[i], "lib%d.so", i);
        ptrs[i] = names[i];
    }
    for (int extra = 0; extra < 2; extra++) {
        struct elf_spec sp = {1, 0, 1, 2, "libx.so", NULL, NULL, ptrs,
                              (size_t)CDD_BIN_MAX_NEEDED + extra, NULL, 0};
        struct elf_lay lay;
        size_t len;
        unsigned char *img = build_elf(&sp, &lay, &len);
        struct cdd_bininfo b = {0};
        int rc = parse_mem(img, len, &b);
        if (extra) {
            CHECK_INT(rc, CDD_E_CORRUPT);
            CHECK(strstr(cdd_last_error()->msg, "more than 4096 DT_NEEDED"));
        } else {
            CHECK_INT(rc, 0);
            CHECK_INT(b.n_needed, CDD_BIN_MAX_NEEDED);
            if (b.n_needed == CDD_BIN_MAX_NEEDED)
                CHECK_STR(b.needed[4095], "lib4095.so");
        }
        cdd_bininfo_clear(&b);
        free(img);
    }
}

static void test_truncations_and_mutations(void)
{
    for (int v = 0; v < 24; v++) {
        struct elf_spec sp = spec_of(v & 1, (v >> 1) & 1, (v >> 2) & 1, v / 8);
        struct elf_lay lay;
        size_t len;
        unsigned char *img = build_elf(&sp, &lay, &len);
        char what[32];
        snprintf(what, sizeof what, "variant %d", v);
        truncations(img, len, what);
        mutations(img, len, 250);
        free(img);
    }
}

/* A 1 GB file (virtual: the image, then zeros): only the tables may be read. */
struct vsrc {
    const unsigned char *img;
    size_t len;
    uint64_t size, bytes, calls, max_end;
};

static int vread(void *ud, uint64_t off, void *buf, size_t len)
{
    struct vsrc *v = ud;
    v->calls++;
    v->bytes += len;
    if (off + len > v->max_end)
        v->max_end = off + len;
    if (off > v->size || len > v->size - off)
        return cdd_fail(CDD_E_IO, "virtual", 0, "read past the end");
    memset(buf, 0, len);
    if (off < v->len)
        memcpy(buf, v->img + off,
               v->len - off < len ? v->len - off : len);
    return 0;
}

static void test_huge_file_reads_little(void)
{
    struct elf_spec sp = spec_of(1, 0, 1, 2);
    struct elf_lay lay;
    size_t len;
    unsigned char *img = build_elf(&sp, &lay, &len);
    struct vsrc v = {img, len, 1ull << 30, 0, 0, 0};
    struct cdd_binsrc src = {&v, v.size, vread, "virtual"};
    struct cdd_bininfo b = {0};
    CHECK_INT(cdd_bin_parse(&src, &b), 0);
    check_cudnn_like(&b, &sp);
    CHECK_MSG(v.bytes <= 1u << 20, "read %llu bytes",
              (unsigned long long)v.bytes);
    CHECK(v.max_end <= v.size);
    cdd_bininfo_clear(&b);
    free(img);
}

static void test_many_exports(void)
{
    /* Names in reverse order and a string table far larger than a cache
     * window: the lookup must not rely on file order, and the symbols'
     * random jumps into the names must not multiply the bytes read. */
    size_t n = 30000;
    char **names = malloc(n * sizeof *names);
    for (size_t i = 0; i < n; i++) {
        names[i] = malloc(40);
        snprintf(names[i], 40, "_ZN5cudnn7backend8Function%06zuEv", n - 1 - i);
    }
    for (int sections = 0; sections < 2; sections++) {
        struct elf_spec sp = spec_of(1, 0, sections, 2);
        struct elf_lay lay;
        size_t len;
        sp.exports = (const char *const *)names;
        sp.n_exports = n;
        unsigned char *img = build_elf(&sp, &lay, &len);
        struct vsrc v = {img, len, len, 0, 0, 0};
        struct cdd_binsrc src = {&v, len, vread, "many"};
        struct cdd_bininfo b = {0};
        CHECK_INT(cdd_bin_parse(&src, &b), 0);
        CHECK_INT(b.n_exports, n + 1);
        CHECK(cdd_bininfo_exports(&b, "_ZN5cudnn7backend8Function000000Ev"));
        CHECK(cdd_bininfo_exports(&b, "_ZN5cudnn7backend8Function029999Ev"));
        CHECK(!cdd_bininfo_exports(&b, "_ZN5cudnn7backend8Function030000Ev"));
        CHECK_MSG(v.bytes <= 2 * len, "read %llu bytes of a %zu-byte file",
                  (unsigned long long)v.bytes, len);
        check_sane(&b);
        cdd_bininfo_clear(&b);
        free(img);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void test_not_elf_and_clear(void)
{
    struct cdd_bininfo b = {0};
    CHECK_INT(parse_mem("", 0, &b), CDD_E_NOTSUP);
    CHECK_INT(parse_mem("#!/bin/sh\necho hi\n", 18, &b), CDD_E_NOTSUP);
    CHECK_INT(parse_mem("\177ELF", 4, &b), CDD_E_CORRUPT);
    CHECK_INT(cdd_bin_parse_file("/nonexistent/libcudnn.so.8", &b),
              CDD_E_NOTFOUND);
    CHECK(b.needed == NULL && b.soname == NULL && b.n_exports == 0);
    cdd_bininfo_clear(&b);
    cdd_bininfo_clear(NULL);
    CHECK(!cdd_bininfo_exports(&b, "x"));
    CHECK(!cdd_bininfo_exports(NULL, "x"));
}

TEST_MAIN(TEST(test_synthetic_variants), TEST(test_real_shared_object),
          TEST(test_extended_numbering), TEST(test_hostile_fields),
          TEST(test_needed_limit), TEST(test_truncations_and_mutations),
          TEST(test_huge_file_reads_little), TEST(test_many_exports),
          TEST(test_not_elf_and_clear))
