/* PE side of the binary parsers (binfile.h), on images built in memory: a
 * DLL shaped like cudnn_cnn_infer64_8.dll (imports, exports), PE32 with
 * delay-load imports in both the RVA and the old VA form, and hostile
 * variants: targeted bad fields (huge counts, RVAs outside every section,
 * descriptor tables without a terminator, names without NUL, overlapping
 * sections), every truncation, a few thousand seeded random mutations, and a
 * 1 GB virtual file of which only the tables may be read. */
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
    return bf_parse_mem(buf, len, "image.dll", b);
}
#define acceptable bf_acceptable
#define check_sane bf_check_sane
#define truncations(img, len, what) bf_truncations(img, len, "image.dll", what)

/* ---- image builder ------------------------------------------------------ */

#define TEXT_VA 0x1000u
#define TEXT_RAW 0x400u
#define RDATA_VA 0x2000u
#define RDATA_RAW 0x600u
#define LFANEW 0x80u
#define IMAGE_BASE32 0x10000000u
#define IMAGE_BASE64 0x180000000ull

struct buf {
    unsigned char *b;
    size_t len, cap;
};

static size_t buf_alloc(struct buf *m, size_t n, size_t align)
{
    size_t off = (m->len + align - 1) / align * align;
    if (off + n > m->cap) {
        size_t cap = (off + n) * 2 + 4096;
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

static void put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

struct pe_spec {
    int is64;
    unsigned machine;
    const char *dllname; /* export directory; NULL: none */
    const char *const *imports;
    size_t n_imports;
    const char *const *delay;
    size_t n_delay;
    int delay_va; /* Visual C++ 6 style: addresses instead of RVAs */
    const char *const *exports;
    size_t n_exports;
    size_t pad; /* zero bytes at the end of .rdata, for tests to fill */
};

struct pe_lay {
    size_t opt, dirs, sectab, len;
    uint32_t imp, delay, exp, pad, rdata_raw_size, rdata_vsize;
};

static uint32_t rstr(struct buf *rd, const char *s)
{
    size_t n = strlen(s) + 1, off = buf_alloc(rd, n, 1);
    memcpy(rd->b + off, s, n);
    return RDATA_VA + (uint32_t)off;
}

static size_t off_of(uint32_t rva) { return rva - RDATA_VA + RDATA_RAW; }

static unsigned char *build_pe(const struct pe_spec *sp, struct pe_lay *lay)
{
    struct buf rd = {NULL, 0, 0};
    int ws = sp->is64 ? 8 : 4;
    uint64_t base = sp->is64 ? IMAGE_BASE64 : IMAGE_BASE32;
    memset(lay, 0, sizeof *lay);

    if (sp->n_imports) {
        size_t d = buf_alloc(&rd, (sp->n_imports + 1) * 20, 4);
        lay->imp = RDATA_VA + (uint32_t)d;
        for (size_t i = 0; i < sp->n_imports; i++) {
            uint32_t name = rstr(&rd, sp->imports[i]);
            size_t hn = buf_alloc(&rd, 2, 2);
            rstr(&rd, "SomeFunction");
            size_t it = buf_alloc(&rd, 2 * (size_t)ws, 8);
            size_t iat = buf_alloc(&rd, 2 * (size_t)ws, 8);
            put(rd.b + it, RDATA_VA + hn, ws);
            put(rd.b + iat, RDATA_VA + hn, ws);
            unsigned char *e = rd.b + d + 20 * i;
            put(e, RDATA_VA + it, 4);
            put(e + 12, name, 4);
            put(e + 16, RDATA_VA + iat, 4);
        }
    }
    if (sp->n_delay) {
        size_t d = buf_alloc(&rd, (sp->n_delay + 1) * 32, 4);
        lay->delay = RDATA_VA + (uint32_t)d;
        for (size_t i = 0; i < sp->n_delay; i++) {
            uint32_t name = rstr(&rd, sp->delay[i]);
            size_t slots = buf_alloc(&rd, 5 * (size_t)ws, 8);
            unsigned char *e = rd.b + d + 32 * i;
            uint64_t adj = sp->delay_va ? base : 0;
            put(e, sp->delay_va ? 0 : 1, 4);
            put(e + 4, name + adj, 4);
            put(e + 8, RDATA_VA + slots + adj, 4);
            put(e + 12, RDATA_VA + slots + (size_t)ws + adj, 4);
            put(e + 16, RDATA_VA + slots + 3 * (size_t)ws + adj, 4);
        }
    }
    if (sp->dllname) {
        size_t d = buf_alloc(&rd, 40, 4);
        size_t n = sp->n_exports;
        lay->exp = RDATA_VA + (uint32_t)d;
        uint32_t name = rstr(&rd, sp->dllname);
        size_t funcs = buf_alloc(&rd, 4 * n, 4);
        size_t names = buf_alloc(&rd, 4 * n, 4);
        size_t ords = buf_alloc(&rd, 2 * n, 2);
        /* names in an order unrelated to the name table's */
        for (size_t k = 0; k < n; k++) {
            size_t i = n % 7919 ? k * 7919 % n : k;
            uint32_t name_rva = rstr(&rd, sp->exports[i]); /* may move rd.b */
            put(rd.b + funcs + 4 * i, TEXT_VA + 16 * (i % 16), 4);
            put(rd.b + names + 4 * i, name_rva, 4);
            put(rd.b + ords + 2 * i, i, 2);
        }
        unsigned char *e = rd.b + d;
        put(e + 12, name, 4);
        put(e + 16, 1, 4);
        put(e + 20, n, 4);
        put(e + 24, n, 4);
        put(e + 28, RDATA_VA + funcs, 4);
        put(e + 32, RDATA_VA + names, 4);
        put(e + 36, RDATA_VA + ords, 4);
    }
    if (sp->pad)
        lay->pad = RDATA_VA + (uint32_t)buf_alloc(&rd, sp->pad, 4);
    if (rd.len == 0)
        buf_alloc(&rd, 16, 1);

    uint32_t raw = (uint32_t)((rd.len + 0x1ff) & ~(size_t)0x1ff);
    lay->rdata_raw_size = raw;
    lay->rdata_vsize = (uint32_t)rd.len;
    lay->len = RDATA_RAW + raw;
    unsigned char *img = calloc(1, lay->len);
    memcpy(img + RDATA_RAW, rd.b, rd.len);
    memset(img + TEXT_RAW, 0xcc, 0x200);
    free(rd.b);

    unsigned opt_size = sp->is64 ? 240 : 224, dd = sp->is64 ? 112 : 96;
    img[0] = 'M';
    img[1] = 'Z';
    put(img + 0x3c, LFANEW, 4);
    memcpy(img + LFANEW, "PE\0\0", 4);
    unsigned char *coff = img + LFANEW + 4;
    put(coff, sp->machine, 2);
    put(coff + 2, 2, 2);
    put(coff + 16, opt_size, 2);
    put(coff + 18, 0x2022, 2);
    lay->opt = LFANEW + 24;
    unsigned char *opt = img + lay->opt;
    put(opt, sp->is64 ? 0x20b : 0x10b, 2);
    if (sp->is64)
        put(opt + 24, base, 8);
    else
        put(opt + 28, base, 4);
    put(opt + 32, 0x1000, 4);
    put(opt + 36, 0x200, 4);
    put(opt + 56, RDATA_VA + ((rd.len + 0xfff) & ~(size_t)0xfff), 4);
    put(opt + 60, 0x400, 4);
    put(opt + dd - 4, 16, 4);
    lay->dirs = lay->opt + dd;
    put(img + lay->dirs + 0, lay->exp, 4);
    put(img + lay->dirs + 4, lay->exp ? 40 : 0, 4);
    put(img + lay->dirs + 8, lay->imp, 4);
    put(img + lay->dirs + 12, lay->imp ? (sp->n_imports + 1) * 20 : 0, 4);
    put(img + lay->dirs + 13 * 8, lay->delay, 4);
    put(img + lay->dirs + 13 * 8 + 4, lay->delay ? (sp->n_delay + 1) * 32 : 0, 4);
    lay->sectab = lay->opt + opt_size;
    unsigned char *s = img + lay->sectab;
    memcpy(s, ".text", 5);
    put(s + 8, 0x100, 4);
    put(s + 12, TEXT_VA, 4);
    put(s + 16, 0x200, 4);
    put(s + 20, TEXT_RAW, 4);
    put(s + 36, 0x60000020, 4);
    s += 40;
    memcpy(s, ".rdata", 6);
    put(s + 8, rd.len, 4);
    put(s + 12, RDATA_VA, 4);
    put(s + 16, raw, 4);
    put(s + 20, RDATA_RAW, 4);
    put(s + 36, 0x40000040, 4);
    return img;
}

static const char *const cnn_imports[] = {
    "cudnn_ops_infer64_8.dll", "cublas64_11.dll",  "cublasLt64_11.dll",
    "zlibwapi.dll",            "KERNEL32.dll",     "MSVCP140.dll",
    "VCRUNTIME140.dll",        "VCRUNTIME140_1.dll",
    "api-ms-win-crt-runtime-l1-1-0.dll"};
static const char *const cnn_exports[] = {
    "cudnnCnnInferVersionCheck", "cudnnConvolutionForward",
    "cudnnCreateConvolutionDescriptor",
    "cudnnGetConvolutionForwardAlgorithm_v7", "cudnnSetConvolution2dDescriptor"};
#define N_OF(a) (sizeof a / sizeof a[0])

static struct pe_spec cnn_spec(void)
{
    struct pe_spec sp = {1, 0x8664, "cudnn_cnn_infer64_8.dll", cnn_imports,
                         N_OF(cnn_imports), NULL, 0, 0, cnn_exports,
                         N_OF(cnn_exports), 0};
    return sp;
}

static const char *const delay_names[] = {"zlibwapi.dll", "nvcuda.dll"};
static const char *const k32[] = {"KERNEL32.dll"};

static struct pe_spec delay_spec(int va)
{
    struct pe_spec sp = {0, 0x14c, NULL, k32, 1, delay_names, 2, va, NULL, 0,
                         0};
    return sp;
}

static void check_cnn(const struct cdd_bininfo *b)
{
    CHECK_INT(b->fmt, CDD_BIN_PE);
    CHECK_INT(b->is_64, 1);
    CHECK_INT(b->machine, 0x8664);
    CHECK_STR(b->machine_name, "x86_64");
    CHECK_STR(b->soname, "cudnn_cnn_infer64_8.dll");
    CHECK_INT(b->n_needed, N_OF(cnn_imports));
    for (size_t i = 0; i < N_OF(cnn_imports) && i < b->n_needed; i++)
        CHECK_STR(b->needed[i], cnn_imports[i]);
    CHECK_INT(b->n_delay_needed, 0);
    CHECK(b->rpath == NULL && b->runpath == NULL);
    CHECK_INT(b->n_exports, N_OF(cnn_exports));
    for (size_t i = 0; i < N_OF(cnn_exports); i++)
        CHECK_MSG(cdd_bininfo_exports(b, cnn_exports[i]), "%s",
                  cnn_exports[i]);
    CHECK(!cdd_bininfo_exports(b, "cudnnOpsInferVersionCheck"));
    CHECK(!cdd_bininfo_exports(b, "cudnnGetVersion"));
    check_sane(b);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

/* Seeded random damage (binfile_check.h): most of the structure is in the
 * first 2 KiB and in .rdata's first part, so half the edits aim there. */
static void mutations(const unsigned char *img, size_t len, int rounds)
{
    static const uint32_t nasty[] = {BF_NASTY, 0x2000, 0x2ff0, 0x1100};
    struct bf_damage d = {"image.dll", nasty, N_OF(nasty), 0x800, &rng_state};
    /* Mutations that miss every table must still parse. */
    CHECK(bf_mutations(img, len, rounds, &d) > 0);
}

#define EXPECT_RC(img, len, code, needle)                                      \
    do {                                                                       \
        struct cdd_bininfo b_ = {0};                                           \
        int rc_ = parse_mem(img, len, &b_);                                    \
        CHECK_INT(rc_, code);                                                  \
        CHECK_MSG(rc_ != (code) || strstr(cdd_last_error()->msg, needle),      \
                  "message \"%s\" lacks \"%s\"", cdd_last_error()->msg,        \
                  needle);                                                     \
        cdd_bininfo_clear(&b_);                                                \
    } while (0)
#define EXPECT_CORRUPT(img, len, needle)                                       \
    EXPECT_RC(img, len, CDD_E_CORRUPT, needle)

/* ---- tests -------------------------------------------------------------- */

static void test_cudnn_like_dll(void)
{
    struct pe_spec sp = cnn_spec();
    struct pe_lay lay;
    unsigned char *img = build_pe(&sp, &lay);
    struct cdd_bininfo b = {0};
    CHECK_MSG(parse_mem(img, lay.len, &b) == 0, "%s", cdd_last_error()->msg);
    check_cnn(&b);
    cdd_bininfo_clear(&b);
    free(img);
}

static void test_pe32_delay_imports(void)
{
    for (int va = 0; va < 2; va++) {
        struct pe_spec sp = delay_spec(va);
        struct pe_lay lay;
        unsigned char *img = build_pe(&sp, &lay);
        struct cdd_bininfo b = {0};
        CHECK_MSG(parse_mem(img, lay.len, &b) == 0, "%s",
                  cdd_last_error()->msg);
        CHECK_INT(b.fmt, CDD_BIN_PE);
        CHECK_INT(b.is_64, 0);
        CHECK_STR(b.machine_name, "i386");
        CHECK(b.soname == NULL);
        CHECK_INT(b.n_needed, 1);
        if (b.n_needed == 1)
            CHECK_STR(b.needed[0], "KERNEL32.dll");
        CHECK_INT(b.n_delay_needed, 2);
        if (b.n_delay_needed == 2) {
            CHECK_STR(b.delay_needed[0], "zlibwapi.dll");
            CHECK_STR(b.delay_needed[1], "nvcuda.dll");
        }
        CHECK_INT(b.n_exports, 0);
        cdd_bininfo_clear(&b);
        free(img);
    }
}

struct vsrc {
    const unsigned char *img;
    size_t len;
    uint64_t size, bytes;
};

static int vread(void *ud, uint64_t off, void *buf, size_t len)
{
    struct vsrc *v = ud;
    v->bytes += len;
    if (off > v->size || len > v->size - off)
        return cdd_fail(CDD_E_IO, "virtual", 0, "read past the end");
    memset(buf, 0, len);
    if (off < v->len)
        memcpy(buf, v->img + off, v->len - off < len ? v->len - off : len);
    return 0;
}

static void test_many_exports(void)
{
    /* 200,000 names in reverse order: the lookup must not rely on the
     * file's order. */
    size_t n = 200000;
    char **names = malloc(n * sizeof *names);
    for (size_t i = 0; i < n; i++) {
        names[i] = malloc(32);
        snprintf(names[i], 32, "cudnnFunction%06zu", n - 1 - i);
    }
    struct pe_spec sp = cnn_spec();
    sp.exports = (const char *const *)names;
    sp.n_exports = n;
    struct pe_lay lay;
    unsigned char *img = build_pe(&sp, &lay);
    struct vsrc v = {img, lay.len, lay.len, 0};
    struct cdd_binsrc src = {&v, lay.len, vread, "many.dll"};
    struct cdd_bininfo b = {0};
    CHECK_INT(cdd_bin_parse(&src, &b), 0);
    CHECK_INT(b.n_exports, n);
    /* names are fetched in random order; the bytes read must stay near the
     * file's size */
    CHECK_MSG(v.bytes <= 2 * lay.len, "read %llu bytes of a %zu-byte file",
              (unsigned long long)v.bytes, lay.len);
    CHECK(cdd_bininfo_exports(&b, "cudnnFunction000000"));
    CHECK(cdd_bininfo_exports(&b, "cudnnFunction123456"));
    CHECK(cdd_bininfo_exports(&b, "cudnnFunction199999"));
    CHECK(!cdd_bininfo_exports(&b, "cudnnFunction200000"));
    check_sane(&b);
    cdd_bininfo_clear(&b);
    free(img);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static void test_hostile_headers(void)
{
    struct pe_spec sp = cnn_spec();
    struct pe_lay lay;
    unsigned char *orig = build_pe(&sp, &lay);
    size_t len = lay.len;
    unsigned char *img = malloc(len);
    unsigned char *coff = img + LFANEW + 4, *opt = img + lay.opt;
    unsigned char *sec = img + lay.sectab;
    struct cdd_bininfo b = {0};

#define RESET() memcpy(img, orig, len)
    RESET();
    put(img + 0x3c, 0xfffffff0u, 4);
    EXPECT_CORRUPT(img, len, "PE header");
    RESET();
    put(img + 0x3c, len - 10, 4);
    EXPECT_CORRUPT(img, len, "past end of file");
    RESET();
    img[LFANEW + 1] = 'X';
    EXPECT_RC(img, len, CDD_E_NOTSUP, "PE header");
    RESET();
    put(coff + 2, 0xffff, 2); /* NumberOfSections */
    EXPECT_CORRUPT(img, len, "section table");
    RESET();
    put(coff + 16, 0, 2); /* SizeOfOptionalHeader */
    EXPECT_CORRUPT(img, len, "optional header");
    RESET();
    put(coff + 16, 0x60, 2);
    EXPECT_CORRUPT(img, len, "optional header too small");
    RESET();
    put(coff + 16, 0xffff, 2);
    EXPECT_CORRUPT(img, len, "section table");
    RESET();
    put(opt, 0x999, 2);
    EXPECT_CORRUPT(img, len, "magic");
    RESET();
    put(opt + 108, 0xffffffffu, 4); /* NumberOfRvaAndSizes: clamped */
    CHECK_INT(parse_mem(img, len, &b), 0);
    check_cnn(&b);
    cdd_bininfo_clear(&b);
    RESET();
    put(opt + 108, 1, 4); /* only the export directory counts */
    CHECK_INT(parse_mem(img, len, &b), 0);
    CHECK_INT(b.n_needed, 0);
    CHECK_STR(b.soname, "cudnn_cnn_infer64_8.dll");
    cdd_bininfo_clear(&b);
    RESET();
    put(sec + 40 + 12, TEXT_VA, 4); /* .rdata over .text */
    EXPECT_CORRUPT(img, len, "overlaps");
    RESET();
    put(sec + 40 + 16, lay.rdata_raw_size + 0x200, 4);
    EXPECT_CORRUPT(img, len, "truncated?");
    RESET();
    put(sec + 40 + 20, 0xfffffe00u, 4); /* PointerToRawData */
    EXPECT_CORRUPT(img, len, "past end of file");
    /* a signed DLL whose certificate table is cut off */
    RESET();
    put(img + lay.opt + 112 + 4 * 8, len - 8, 4);
    put(img + lay.opt + 112 + 4 * 8 + 4, 0x2000, 4);
    EXPECT_CORRUPT(img, len, "certificate table");
    RESET();
    put(img + lay.opt + 112 + 4 * 8, len - 8, 4);
    put(img + lay.opt + 112 + 4 * 8 + 4, 8, 4);
    CHECK_INT(parse_mem(img, len, &b), 0);
    cdd_bininfo_clear(&b);
    /* COFF symbol and string tables (MinGW) beyond the end */
    RESET();
    put(coff + 8, len - 4 - 18, 4);
    put(coff + 12, 1, 4);
    put(img + len - 4, 4, 4);
    CHECK_INT(parse_mem(img, len, &b), 0);
    cdd_bininfo_clear(&b);
    put(img + len - 4, 5, 4);
    EXPECT_CORRUPT(img, len, "COFF string table");
    put(coff + 12, 0x10000000, 4);
    EXPECT_CORRUPT(img, len, "COFF symbol table");
#undef RESET
    free(img);
    free(orig);
}

static void test_hostile_tables(void)
{
    struct pe_spec sp = cnn_spec();
    sp.pad = 4096 * 20 + 40;
    struct pe_lay lay;
    unsigned char *orig = build_pe(&sp, &lay);
    size_t len = lay.len;
    unsigned char *img = malloc(len);
    unsigned char *dirs = img + lay.dirs;
    unsigned char *exp = img + off_of(lay.exp);
    unsigned char *imp = img + off_of(lay.imp);
    /* the file data of .rdata ends with its virtual size */
    size_t pad = off_of(lay.pad), end = RDATA_RAW + lay.rdata_vsize;
    struct cdd_bininfo b = {0};

    memcpy(img, orig, len);
    CHECK_INT(parse_mem(img, len, &b), 0);
    check_cnn(&b);
    cdd_bininfo_clear(&b);

#define RESET() memcpy(img, orig, len)
    RESET();
    put(exp + 24, 0xffffffffu, 4); /* NumberOfNames */
    EXPECT_CORRUPT(img, len, "claims 4294967295 names");
    RESET();
    put(exp + 24, CDD_BIN_MAX_EXPORTS + 1, 4);
    EXPECT_CORRUPT(img, len, "claims");
    RESET();
    put(exp + 24, 100000, 4); /* the name table runs out of its section */
    EXPECT_CORRUPT(img, len, "not inside one section");
    RESET();
    put(exp + 32, 0x7ffffff0u, 4); /* AddressOfNames */
    EXPECT_CORRUPT(img, len, "not inside one section");
    RESET();
    put(img + get32(exp + 32) - RDATA_VA + RDATA_RAW, 0x90000, 4);
    EXPECT_CORRUPT(img, len, "export name");
    RESET();
    put(dirs + 8, 0x90000, 4); /* import directory RVA */
    EXPECT_CORRUPT(img, len, "not in any section");
    RESET();
    put(dirs + 0, TEXT_VA + 0x180, 4); /* in .text, but not backed by data */
    EXPECT_CORRUPT(img, len, "not in any section");
    RESET();
    put(imp + 12, 0xfffffff0u, 4); /* a name RVA nowhere */
    EXPECT_CORRUPT(img, len, "import descriptor");
    /* a name running to the end of its section without NUL */
    RESET();
    memset(img + end - 64, 'A', 64);
    put(imp + 20 + 12, RDATA_VA + (uint32_t)(end - 64 - RDATA_RAW), 4);
    EXPECT_CORRUPT(img, len, "NUL-terminated");
    /* a name longer than the limit */
    RESET();
    memset(img + pad, 'B', CDD_BIN_MAX_STRING + 10);
    put(imp + 12, lay.pad, 4);
    EXPECT_CORRUPT(img, len, "longer than 4096");
    /* descriptors chained without terminator to the end of the section */
    RESET();
    for (size_t o = end - 20 * 30; o + 20 <= end; o += 20)
        memcpy(img + o, imp, 20);
    put(dirs + 8, RDATA_VA + (uint32_t)(end - 20 * 30 - RDATA_RAW), 4);
    EXPECT_CORRUPT(img, len, "without terminator");
    /* ... and beyond the limit */
    RESET();
    for (size_t i = 0; i <= 4096; i++)
        memcpy(img + pad + 20 * i, imp, 20);
    put(dirs + 8, lay.pad, 4);
    EXPECT_CORRUPT(img, len, "more than 4096 import descriptors");
    /* exactly the limit is fine */
    RESET();
    for (size_t i = 0; i < 4096; i++)
        memcpy(img + pad + 20 * i, imp, 20);
    put(dirs + 8, lay.pad, 4);
    CHECK_INT(parse_mem(img, len, &b), 0);
    CHECK_INT(b.n_needed, 4096);
    cdd_bininfo_clear(&b);
    /* self-reference and aliasing: bounded garbage, never a crash */
    RESET();
    put(imp + 12, lay.imp, 4);
    CHECK(acceptable(parse_mem(img, len, &b)));
    cdd_bininfo_clear(&b);
    RESET();
    put(dirs + 8, lay.exp, 4);
    put(dirs + 13 * 8, lay.imp, 4);
    CHECK(acceptable(parse_mem(img, len, &b)));
    cdd_bininfo_clear(&b);
    RESET();
    put(dirs + 0, lay.imp, 4);
    CHECK(acceptable(parse_mem(img, len, &b)));
    cdd_bininfo_clear(&b);
#undef RESET
    free(img);
    free(orig);

    /* VC6-style delay descriptor whose address lies below the image base */
    struct pe_spec ds = delay_spec(1);
    orig = build_pe(&ds, &lay);
    put(orig + off_of(lay.delay) + 4, 0x1000, 4);
    EXPECT_CORRUPT(orig, lay.len, "outside the image");
    free(orig);
}

static void test_truncations_and_mutations(void)
{
    struct pe_spec specs[3] = {cnn_spec(), delay_spec(0), delay_spec(1)};
    for (int i = 0; i < 3; i++) {
        struct pe_lay lay;
        unsigned char *img = build_pe(&specs[i], &lay);
        char what[32];
        snprintf(what, sizeof what, "image %d", i);
        truncations(img, lay.len, what);
        mutations(img, lay.len, 1500);
        free(img);
    }
}

static void test_huge_file_reads_little(void)
{
    struct pe_spec sp = cnn_spec();
    struct pe_lay lay;
    unsigned char *img = build_pe(&sp, &lay);
    struct vsrc v = {img, lay.len, 1ull << 30, 0};
    struct cdd_binsrc src = {&v, v.size, vread, "virtual.dll"};
    struct cdd_bininfo b = {0};
    CHECK_INT(cdd_bin_parse(&src, &b), 0);
    check_cnn(&b);
    CHECK_MSG(v.bytes <= 1u << 20, "read %llu bytes",
              (unsigned long long)v.bytes);
    cdd_bininfo_clear(&b);
    free(img);
}

static void test_read_errors_propagate(void)
{
    /* An I/O error from the source is reported as such, not as CORRUPT. */
    struct pe_spec sp = cnn_spec();
    struct pe_lay lay;
    unsigned char *img = build_pe(&sp, &lay);
    struct vsrc v = {img, lay.len, lay.len + 100, 0}; /* claims more */
    struct cdd_binsrc src = {&v, lay.len + 200, vread, "short.dll"};
    struct cdd_bininfo b = {0};
    int rc = cdd_bin_parse(&src, &b);
    CHECK(rc == 0 || rc == CDD_E_IO);
    cdd_bininfo_clear(&b);
    src.size = 1ull << 40;
    CHECK_INT(cdd_bin_parse(&src, &b), CDD_E_IO);
    CHECK(b.needed == NULL && b.soname == NULL);
    free(img);
}

/* A real DLL from a real linker (mingw-w64, when installed): a stand-in
 * for zlibwapi.dll, and a cuDNN-like DLL importing it through its import
 * library. */
static void test_real_mingw_dll(void)
{
    const char *mcc = getenv("MINGW_CC");
    const char *base = getenv("CDD_TEST_TMP");
    char dir[1024], p1[1200], p2[1200], cmd[16384];
    struct cdd_bininfo b = {0};
    size_t len = 0;
    unsigned char *img = NULL;

    if (!mcc || !*mcc)
        mcc = "x86_64-w64-mingw32-gcc";
    snprintf(dir, sizeof dir, "%s/binfile-pe-%ld", base && *base ? base : "/tmp",
             cdd_getpid());
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(p1, sizeof p1, "%s/zlib.c", dir);
    snprintf(p2, sizeof p2, "%s/cnn.c", dir);
    CHECK_INT(fx_write_text(p1, "__declspec(dllexport) const char *zlibVersion(void)"
                             " { return \"1.2.3\"; }\n"), 0);
    CHECK_INT(fx_write_text(p2, "__declspec(dllimport) const char *zlibVersion(void);\n"
                             "__declspec(dllexport) int cudnnCnnInferVersionCheck"
                             "(void) { return zlibVersion()[0]; }\n"
                             "__declspec(dllexport) int cudnnGetVersion(void)"
                             " { return 8500; }\n"
                             "__declspec(dllexport) int cudnn_data = 3;\n"), 0);
    snprintf(cmd, sizeof cmd,
             "%s -shared -o \"%s/zlibwapi.dll\" \"%s\" "
             "-Wl,--out-implib,\"%s/libzlibwapi.dll.a\" 2>\"%s/cc.log\" && "
             "%s -shared -o \"%s/cudnn_cnn_infer64_8.dll\" \"%s\" "
             "\"%s/libzlibwapi.dll.a\" 2>>\"%s/cc.log\"",
             mcc, dir, p1, dir, dir, mcc, dir, p2, dir, dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "  skipped: no mingw-w64 compiler (%s)\n", mcc);
        cdd_fs_remove_tree(dir);
        return;
    }
    snprintf(p2, sizeof p2, "%s/cudnn_cnn_infer64_8.dll", dir);
    CHECK_MSG(cdd_bin_parse_file(p2, &b) == 0, "%s", cdd_last_error()->msg);
    CHECK_INT(b.fmt, CDD_BIN_PE);
    CHECK_INT(b.is_64, 1);
    CHECK_STR(b.machine_name, "x86_64");
    CHECK_STR(b.soname, "cudnn_cnn_infer64_8.dll");
    int has_zlib = 0, has_k32 = 0;
    for (size_t i = 0; i < b.n_needed; i++) {
        has_zlib |= strcmp(b.needed[i], "zlibwapi.dll") == 0;
        has_k32 |= strcmp(b.needed[i], "KERNEL32.dll") == 0;
    }
    CHECK(has_zlib);
    CHECK(has_k32);
    CHECK(cdd_bininfo_exports(&b, "cudnnCnnInferVersionCheck"));
    CHECK(cdd_bininfo_exports(&b, "cudnnGetVersion"));
    CHECK(cdd_bininfo_exports(&b, "cudnn_data"));
    CHECK(!cdd_bininfo_exports(&b, "zlibVersion"));
    check_sane(&b);
    cdd_bininfo_clear(&b);

    snprintf(p1, sizeof p1, "%s/zlibwapi.dll", dir);
    CHECK_INT(cdd_bin_parse_file(p1, &b), 0);
    CHECK_STR(b.soname, "zlibwapi.dll");
    CHECK(cdd_bininfo_exports(&b, "zlibVersion"));
    cdd_bininfo_clear(&b);

    img = fx_read(p2, &len);
    CHECK(img != NULL);
    if (img) {
        truncations(img, len, "cudnn_cnn_infer64_8.dll");
        mutations(img, len, 1000);
    }
    free(img);
    cdd_fs_remove_tree(dir);
}

/* ---- version resource and .nv_fatb ------------------------------------- */

/* Writes a resource tree (RT_VERSION -> 1 -> 0x409 -> VS_VERSIONINFO with
 * file version 8.5.0.96, product version 8.5.0.0) into the pad area and
 * points data directory 2 at it. Offsets of its parts, from the tree's
 * start: root 0, name dir 24, language dir 48, data entry 72, data 88. */
#define RES_SIZE 192
static unsigned char *version_image(struct pe_lay *lay)
{
    struct pe_spec sp = cnn_spec();
    sp.pad = 256;
    unsigned char *img = build_pe(&sp, lay);
    unsigned char *r = img + off_of(lay->pad);
    uint32_t root = lay->pad;
    put(img + lay->dirs + 16, root, 4);
    put(img + lay->dirs + 20, RES_SIZE, 4);
    put(r + 14, 1, 2);                     /* root: one ID entry */
    put(r + 16, 16, 4);                    /* RT_VERSION */
    put(r + 20, 0x80000000u | 24, 4);
    put(r + 24 + 14, 1, 2);
    put(r + 40, 1, 4);
    put(r + 44, 0x80000000u | 48, 4);
    put(r + 48 + 14, 1, 2);
    put(r + 64, 0x409, 4);
    put(r + 68, 72, 4);                    /* a data entry */
    put(r + 72, root + 88, 4);
    put(r + 76, 92, 4);
    unsigned char *v = r + 88;
    put(v, 92, 2);
    put(v + 2, 52, 2);
    static const char key[] = "VS_VERSION_INFO";
    for (size_t k = 0; k < sizeof key; k++)
        put(v + 6 + 2 * k, (unsigned char)key[k], 2);
    put(v + 40, 0xFEEF04BDu, 4);
    put(v + 44, 0x10000, 4);
    put(v + 48, 8u << 16 | 5, 4);
    put(v + 52, 0u << 16 | 96, 4);
    put(v + 56, 8u << 16 | 5, 4);
    put(v + 60, 0, 4);
    return img;
}

static void test_version_resource(void)
{
    struct pe_lay lay;
    unsigned char *img = version_image(&lay), *r = img + off_of(lay.pad);
    unsigned char *copy = malloc(lay.len);
    struct cdd_bininfo b = {0};
    memcpy(copy, img, lay.len);
    CHECK_MSG(parse_mem(img, lay.len, &b) == 0, "%s", cdd_last_error()->msg);
    check_cnn(&b);
    CHECK_INT(b.has_version, 1);
    CHECK_INT(b.file_version[0], 8);
    CHECK_INT(b.file_version[1], 5);
    CHECK_INT(b.file_version[2], 0);
    CHECK_INT(b.file_version[3], 96);
    CHECK_INT(b.product_version[3], 0);
    CHECK_INT(b.has_fatbin, 0);
    cdd_bininfo_clear(&b);
    /* Hostile trees: the DLL still parses, the resource is reported bad. */
    struct {
        size_t at;
        uint64_t v;
        int n;
        int has;
        const char *needle;
    } bad[] = {
        {88 + 40, 0xFEEF04BE, 4, -1, "VS_FIXEDFILEINFO"},  /* signature */
        {88 + 6, 'X', 2, -1, "VS_VERSION_INFO"},           /* key */
        {76, 40, 4, -1, "too small"},                      /* data size */
        {72, 0x7ffff000u, 4, -1, "not in any section"},    /* data RVA */
        {68, 0x80000000u | 0, 4, -1, "directory where data"}, /* loop */
        {44, 72, 4, -1, "data where a directory"},
        {14, 0xffff, 2, -1, "claims"},                     /* huge count */
        {20, 0x80000000u | 5000, 4, -1, "outside the resource"},
        {16, 3, 4, 0, NULL},                               /* RT_ICON only */
    };
    for (size_t i = 0; i < N_OF(bad); i++) {
        memcpy(img, copy, lay.len);
        put(r + bad[i].at, bad[i].v, bad[i].n);
        memset(&b, 0, sizeof b);
        CHECK_MSG(parse_mem(img, lay.len, &b) == 0, "case %zu: %s", i,
                  cdd_last_error()->msg);
        CHECK_MSG(b.has_version == bad[i].has, "case %zu: has_version %d", i,
                  b.has_version);
        CHECK_MSG(!bad[i].needle || strstr(b.version_problem, bad[i].needle),
                  "case %zu: \"%s\" lacks \"%s\"", i, b.version_problem,
                  bad[i].needle ? bad[i].needle : "");
        CHECK_INT(b.n_exports, N_OF(cnn_exports));
        cdd_bininfo_clear(&b);
    }
    /* The resource directory itself outside the image. */
    memcpy(img, copy, lay.len);
    put(img + lay.dirs + 16, 0x900000, 4);
    memset(&b, 0, sizeof b);
    CHECK_INT(parse_mem(img, lay.len, &b), 0);
    CHECK_INT(b.has_version, -1);
    cdd_bininfo_clear(&b);
    memcpy(img, copy, lay.len);
    truncations(img, lay.len, "version resource");
    mutations(img, lay.len, 2000);
    free(copy);
    free(img);
}

static void test_fatbin_section(void)
{
    struct pe_spec sp = cnn_spec();
    struct pe_lay lay;
    unsigned char *img = build_pe(&sp, &lay);
    struct cdd_bininfo b = {0};
    memcpy(img + lay.sectab, ".nv_fatb", 8); /* the .text section, renamed */
    CHECK_INT(parse_mem(img, lay.len, &b), 0);
    CHECK_INT(b.has_fatbin, 1);
    CHECK_INT(b.fatbin_off, TEXT_RAW);
    CHECK_INT(b.fatbin_size, 0x100); /* the virtual size: less than raw */
    cdd_bininfo_clear(&b);
    free(img);
}

static int run_quiet(const char *cmd)
{
    char full[16384];
    snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
    return system(full);
}

/* windres and the mingw linker write a real version resource. */
static void test_real_version_resource(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    const char *mcc = getenv("MINGW_CC");
    char dir[1024], rc_path[1200], cmd[8192], dll[1200];
    struct cdd_bininfo b = {0};
    if (!mcc || !*mcc)
        mcc = "x86_64-w64-mingw32-gcc";
    snprintf(dir, sizeof dir, "%s/binfile-ver-%ld",
             base && *base ? base : "/tmp", cdd_getpid());
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(rc_path, sizeof rc_path, "%s/v.rc", dir);
    CHECK_INT(fx_write_text(rc_path,
                         "1 VERSIONINFO\nFILEVERSION 8,4,1,50\n"
                         "PRODUCTVERSION 8,4,1,0\nBEGIN\nBLOCK "
                         "\"StringFileInfo\"\nBEGIN\nBLOCK \"040904b0\"\n"
                         "BEGIN\nVALUE \"FileVersion\", \"8.4.1.50\"\nEND\n"
                         "END\nEND\n"), 0);
    snprintf(dll, sizeof dll, "%s/cudnn_ops_train64_8.dll", dir);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && x86_64-w64-mingw32-windres v.rc -O coff -o v.o && "
             "echo 'int cudnnOpsTrainVersionCheck(void) { return 0; }' > s.c "
             "&& %s -shared -o '%s' s.c v.o", dir, mcc, dll);
    if (run_quiet(cmd) != 0) {
        fprintf(stderr, "  skipped: no mingw-w64 windres / compiler\n");
        cdd_fs_remove_tree(dir);
        return;
    }
    CHECK_MSG(cdd_bin_parse_file(dll, &b) == 0, "%s", cdd_last_error()->msg);
    CHECK_INT(b.has_version, 1);
    CHECK_INT(b.file_version[0], 8);
    CHECK_INT(b.file_version[1], 4);
    CHECK_INT(b.file_version[2], 1);
    CHECK_INT(b.file_version[3], 50);
    CHECK_INT(b.product_version[3], 0);
    cdd_bininfo_clear(&b);
    cdd_fs_remove_tree(dir);
}

static void test_mz_only(void)
{
    unsigned char dos[128] = {'M', 'Z'};
    struct cdd_bininfo b = {0};
    put(dos + 0x3c, 0x40, 4);
    EXPECT_RC(dos, sizeof dos, CDD_E_NOTSUP, "PE header");
    EXPECT_CORRUPT(dos, 40, "DOS header");
    CHECK_INT(parse_mem("MZ", 2, &b), CDD_E_NOTSUP);
}

TEST_MAIN(TEST(test_cudnn_like_dll), TEST(test_pe32_delay_imports),
          TEST(test_many_exports), TEST(test_hostile_headers),
          TEST(test_hostile_tables), TEST(test_truncations_and_mutations),
          TEST(test_huge_file_reads_little), TEST(test_read_errors_propagate),
          TEST(test_real_mingw_dll), TEST(test_version_resource),
          TEST(test_fatbin_section), TEST(test_real_version_resource),
          TEST(test_mz_only))
