/* The fatbinary walker (fatbin.h) on sections built in memory: cuDNN-like
 * containers (SASS for several architectures, PTX with its ISA version,
 * padding between containers, an entry of another kind), hostile variants
 * (bad magic, every truncation, sizes that leave their container or the
 * section, huge and zero header sizes, an implausible architecture, more
 * distinct codes than the limit), seeded random mutations; the description
 * and CUDA's compatibility rules (cdd_fatbin_fit); and a real ELF shared
 * object given a .nv_fatbin section with objcopy, when cc and objcopy are
 * installed. */
#include "test.h"

#include "cdd/binfile.h"
#include "cdd/error.h"
#include "cdd/fatbin.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"

#include <stdint.h>

struct buf {
    unsigned char *b;
    size_t len, cap;
};

static void grow(struct buf *m, size_t n)
{
    if (m->len + n > m->cap) {
        size_t cap = (m->len + n) * 2 + 256;
        unsigned char *b = realloc(m->b, cap);
        if (!b)
            abort();
        m->b = b;
        m->cap = cap;
    }
}

static void put(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static size_t append_zero(struct buf *m, size_t n)
{
    grow(m, n);
    memset(m->b + m->len, 0, n);
    m->len += n;
    return m->len - n;
}

/* Starts a container; returns its offset (finish with end_container). */
static size_t begin_container(struct buf *m)
{
    size_t at = append_zero(m, 16);
    put(m->b + at, CDD_FATBIN_MAGIC, 4);
    put(m->b + at + 4, 1, 2);
    put(m->b + at + 6, 16, 2);
    return at;
}

static void end_container(struct buf *m, size_t at)
{
    put(m->b + at + 8, m->len - at - 16, 8);
}

/* One entry: a 64-byte header (72 for PTX, as nvcc writes) and payload. */
static size_t add_entry(struct buf *m, int kind, unsigned arch,
                        unsigned major, unsigned minor, size_t payload,
                        uint64_t flags)
{
    size_t hs = kind == CDD_FATBIN_KIND_PTX ? 72 : 64;
    size_t at = append_zero(m, hs + payload);
    unsigned char *h = m->b + at;
    put(h, (uint64_t)kind, 2);
    put(h + 2, 0x101, 2);
    put(h + 4, hs, 4);
    put(h + 8, payload, 8);
    put(h + 24, minor, 2);
    put(h + 26, major, 2);
    put(h + 28, arch, 4);
    put(h + 40, flags | 0x11, 8); /* 64-bit, Linux */
    memset(h + hs, 0xab, payload);
    return at;
}

/* A cuDNN 9-like section: two containers and padding between them. */
static struct buf cudnn_like(void)
{
    struct buf m = {NULL, 0, 0};
    size_t c = begin_container(&m);
    add_entry(&m, CDD_FATBIN_KIND_SASS, 80, 1, 7, 104, 0);
    add_entry(&m, CDD_FATBIN_KIND_SASS, 90, 1, 8, 40, 0);
    add_entry(&m, CDD_FATBIN_KIND_PTX, 90, 8, 4, 56, 0x2000);
    end_container(&m, c);
    append_zero(&m, 24); /* padding, as the linker aligns containers */
    c = begin_container(&m);
    add_entry(&m, CDD_FATBIN_KIND_SASS, 75, 1, 7, 8, 0);
    add_entry(&m, CDD_FATBIN_KIND_SASS, 80, 1, 7, 8, 0);
    add_entry(&m, 8, 80, 0, 0, 16, 0); /* another kind: counted, skipped */
    end_container(&m, c);
    append_zero(&m, 32);
    return m;
}

static int scan_mem(const void *b, size_t len, struct cdd_fatbin_info *fi)
{
    struct cdd_binsrc src;
    cdd_binsrc_mem(&src, b, len, "mem.so");
    return cdd_fatbin_scan(&src, 0, len, fi);
}

#define EXPECT_CORRUPT(b, len, needle)                                         \
    do {                                                                       \
        struct cdd_fatbin_info fi_;                                            \
        int rc_ = scan_mem(b, len, &fi_);                                      \
        CHECK_INT(rc_, CDD_E_CORRUPT);                                         \
        CHECK_MSG(rc_ != CDD_E_CORRUPT ||                                      \
                      strstr(cdd_last_error()->msg, needle),                   \
                  "message \"%s\" lacks \"%s\"", cdd_last_error()->msg,        \
                  needle);                                                     \
        CHECK_INT(fi_.n_codes, 0);                                             \
        cdd_clear_error();                                                     \
    } while (0)

static void test_cudnn_like_section(void)
{
    struct buf m = cudnn_like();
    struct cdd_fatbin_info fi;
    char d[256];
    CHECK_MSG(scan_mem(m.b, m.len, &fi) == 0, "%s", cdd_last_error()->msg);
    CHECK_INT(fi.n_containers, 2);
    CHECK_INT(fi.n_entries, 6);
    CHECK_INT(fi.n_other, 1);
    CHECK_INT(fi.n_compressed, 1);
    CHECK_INT(fi.n_codes, 4);
    CHECK_STR(cdd_fatbin_describe(&fi, d, sizeof d),
              "SASS sm_75, sm_80, sm_90; PTX compute_90 (ISA 8.4)");
    CHECK_INT(fi.codes[1].arch, 80);
    CHECK_INT(fi.codes[1].count, 2);
    /* A section that starts with padding, and an empty one. */
    struct buf p = {NULL, 0, 0};
    append_zero(&p, 32);
    grow(&p, m.len);
    memcpy(p.b + p.len, m.b, m.len);
    p.len += m.len;
    CHECK_INT(scan_mem(p.b, p.len, &fi), 0);
    CHECK_INT(fi.n_entries, 6);
    CHECK_INT(scan_mem(p.b, 32, &fi), 0);
    CHECK_INT(fi.n_containers, 0);
    CHECK_STR(cdd_fatbin_describe(&fi, d, sizeof d), "no GPU code");
    /* A truncated description stays a terminated string. */
    scan_mem(m.b, m.len, &fi);
    cdd_fatbin_describe(&fi, d, 12);
    CHECK_INT(strlen(d), 11);
    free(p.b);
    free(m.b);
}

static void test_hostile(void)
{
    struct buf m = cudnn_like();
    unsigned char *img = malloc(m.len);
    size_t e1 = 16, e2 = 16 + 64 + 104; /* first and second entry */
#define RESET() memcpy(img, m.b, m.len)
    RESET();
    put(img, 0xBA55ED51u, 4);
    EXPECT_CORRUPT(img, m.len, "bad magic");
    RESET();
    put(img + 8, (uint64_t)-1, 8); /* entries' size: huge */
    EXPECT_CORRUPT(img, m.len, "past the section's end");
    RESET();
    put(img + 6, 0xffff, 2); /* container header size: huge */
    EXPECT_CORRUPT(img, m.len, "past the section's end");
    RESET();
    put(img + 6, 4, 2); /* container header size: less than its fields */
    EXPECT_CORRUPT(img, m.len, "header size 4");
    RESET();
    put(img + e1 + 8, (uint64_t)-64, 8); /* payload: wraps around */
    EXPECT_CORRUPT(img, m.len, "extend past its container's end");
    RESET();
    put(img + e1 + 8, 1000, 8); /* payload overlaps the next container */
    EXPECT_CORRUPT(img, m.len, "extend past its container's end");
    RESET();
    put(img + e1 + 4, 0, 4); /* header size 0: would never advance */
    EXPECT_CORRUPT(img, m.len, "header size 0");
    RESET();
    put(img + e2 + 4, 0x7fffffffu, 4);
    EXPECT_CORRUPT(img, m.len, "implausible");
    RESET();
    put(img + e1 + 28, 0xffffffffu, 4);
    EXPECT_CORRUPT(img, m.len, "architecture");
    RESET();
    put(img + 8, 64 + 104 + 20, 8); /* container ends inside an entry header */
    EXPECT_CORRUPT(img, m.len, "cut by the container's end");
    RESET();
    img[m.len - 21] = 1; /* garbage in the trailing padding */
    EXPECT_CORRUPT(img, m.len, "bad magic");
    /* Every truncation fails cleanly or stops at padding. */
    RESET();
    for (size_t n = 0; n < m.len; n++) {
        struct cdd_fatbin_info fi;
        int rc = scan_mem(img, n, &fi);
        CHECK_MSG(rc == 0 || rc == CDD_E_CORRUPT, "length %zu: rc %d", n, rc);
        cdd_clear_error();
    }
    /* A section announced past the end of the file. */
    struct cdd_binsrc src;
    struct cdd_fatbin_info fi;
    cdd_binsrc_mem(&src, img, m.len, "mem.so");
    CHECK_INT(cdd_fatbin_scan(&src, 8, m.len, &fi), CDD_E_CORRUPT);
    CHECK_INT(cdd_fatbin_scan(&src, (uint64_t)-8, 16, &fi), CDD_E_CORRUPT);
    cdd_clear_error();
    /* Seeded random mutations of the headers: never a crash, never a
     * result with more entries than bytes allow. */
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 20000; round++) {
        RESET();
        for (int k = 0; k < 3; k++) {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            size_t at = (size_t)(s % 256) % m.len;
            img[at] = (unsigned char)(s >> 32);
        }
        int rc = scan_mem(img, m.len, &fi);
        CHECK(rc == 0 || rc == CDD_E_CORRUPT);
        CHECK(fi.n_entries <= m.len / 48);
        cdd_clear_error();
    }
#undef RESET
    free(img);
    free(m.b);
}

/* Many distinct codes: the limit holds; many entries of one code: fine. */
static void test_limits(void)
{
    struct buf m = {NULL, 0, 0};
    struct cdd_fatbin_info fi;
    size_t c = begin_container(&m);
    for (unsigned a = 0; a <= CDD_FATBIN_MAX_CODES; a++)
        add_entry(&m, CDD_FATBIN_KIND_SASS, 10 + a, 1, 7, 0, 0);
    end_container(&m, c);
    EXPECT_CORRUPT(m.b, m.len, "distinct architectures");
    m.len = 0;
    c = begin_container(&m);
    for (unsigned i = 0; i < 5000; i++)
        add_entry(&m, CDD_FATBIN_KIND_SASS, 80, 1, 7, 0, 0);
    end_container(&m, c);
    CHECK_INT(scan_mem(m.b, m.len, &fi), 0);
    CHECK_INT(fi.n_entries, 5000);
    CHECK_INT(fi.n_codes, 1);
    CHECK_INT(fi.codes[0].count, 5000);
    free(m.b);
}

static struct cdd_fatbin_info codes(const char *spec)
{
    /* "s80 s86 s90a s100f p90" -> SASS sm_80, sm_86, sm_90a, sm_100f, PTX
     * compute_90; the suffixes as nvcc 13.0 flags them */
    struct buf m = {NULL, 0, 0};
    struct cdd_fatbin_info fi;
    size_t c = begin_container(&m);
    for (const char *p = spec; *p;) {
        int kind = *p == 's' ? CDD_FATBIN_KIND_SASS : CDD_FATBIN_KIND_PTX;
        unsigned arch = (unsigned)strtoul(p + 1, (char **)&p, 10);
        uint64_t flags = 0;
        if (*p == 'a' || *p == 'f')
            flags = *p++ == 'a' ? 0x100000 : 0x200000;
        add_entry(&m, kind, arch, 8, 0, 4, flags | 0x1000000);
        while (*p == ' ')
            p++;
    }
    end_container(&m, c);
    if (scan_mem(m.b, m.len, &fi) != 0)
        memset(&fi, 0, sizeof fi);
    free(m.b);
    return fi;
}

#define FIT(spec, maj, min, want, want_arch)                                   \
    do {                                                                       \
        struct cdd_fatbin_info fi_ = codes(spec);                              \
        unsigned a_ = 99;                                                      \
        CHECK_INT(cdd_fatbin_fit(&fi_, maj, min, &a_), want);                  \
        CHECK_INT(a_, want_arch);                                              \
    } while (0)

static void test_compatibility_rules(void)
{
    /* SASS: same major, minor at most the device's. */
    FIT("s80", 8, 0, CDD_ARCH_SASS, 80);
    FIT("s80", 8, 6, CDD_ARCH_SASS, 80);
    FIT("s80 s86", 8, 9, CDD_ARCH_SASS, 86);
    FIT("s86", 8, 0, CDD_ARCH_NONE, 0);      /* newer minor */
    FIT("s80", 9, 0, CDD_ARCH_NONE, 0);      /* the sm_80-only case */
    FIT("s90", 8, 6, CDD_ARCH_NONE, 0);      /* newer major */
    FIT("s75 s80 s90", 10, 0, CDD_ARCH_NONE, 0);
    FIT("s100 s120", 12, 0, CDD_ARCH_SASS, 120);
    FIT("s120", 10, 0, CDD_ARCH_NONE, 0);
    /* PTX: any device at or above its virtual architecture, via JIT. */
    FIT("s80 p80", 9, 0, CDD_ARCH_PTX_JIT, 80);
    FIT("s75 p75 p90", 12, 0, CDD_ARCH_PTX_JIT, 90);
    FIT("p90", 8, 6, CDD_ARCH_NONE, 0);      /* PTX newer than the device */
    FIT("s90 p90", 9, 0, CDD_ARCH_SASS, 90); /* SASS wins over JIT */
    FIT("", 9, 0, CDD_ARCH_NO_CODE, 0);
    /* Arch-specific: exactly its compute capability. */
    FIT("s90a", 9, 0, CDD_ARCH_SASS, 90);
    FIT("s90a", 9, 1, CDD_ARCH_NONE, 0);
    FIT("s100a", 10, 3, CDD_ARCH_NONE, 0);
    FIT("s100a s100f", 10, 3, CDD_ARCH_SASS, 100); /* the family's runs */
    FIT("s100f", 10, 0, CDD_ARCH_SASS, 100);
    FIT("s100f", 12, 0, CDD_ARCH_NONE, 0);
}

static void test_variants_described(void)
{
    struct cdd_fatbin_info fi = codes("s90a s90 s100f s100a s100 p90");
    char d[160];
    CHECK_INT(fi.n_codes, 6);
    CHECK_STR(cdd_fatbin_describe(&fi, d, sizeof d),
              "SASS sm_90, sm_90a, sm_100, sm_100a, sm_100f; PTX compute_90 "
              "(ISA 8.0)");
}

static void test_merge(void)
{
    struct cdd_fatbin_info a = codes("s80 p80"), b = codes("s80 s90 p90");
    char d[128];
    CHECK_INT(cdd_fatbin_merge(&a, &b), 0);
    CHECK_STR(cdd_fatbin_describe(&a, d, sizeof d),
              "SASS sm_80, sm_90; PTX compute_80 (ISA 8.0), compute_90 (ISA "
              "8.0)");
    CHECK_INT(a.codes[0].count, 2);
    CHECK_INT(a.n_entries, 5);
}

static int run_quiet(const char *cmd)
{
    char full[8192];
    snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
    return system(full);
}

/* A real shared object with the section added by binutils: the ELF side
 * finds .nv_fatbin by name among the real linker's sections. */
static void test_real_elf_section(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    char dir[1024], cmd[6000], so[1200], fb[1200], src[1200];
    struct cdd_fatbin_info fi;
    int has = -1;
    snprintf(dir, sizeof dir, "%s/fatbin-%ld", base && *base ? base : "/tmp",
             cdd_getpid());
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(src, sizeof src, "%s/lib.c", dir);
    snprintf(so, sizeof so, "%s/libfake.so", dir);
    snprintf(fb, sizeof fb, "%s/sm80.fatbin", dir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("int cudnnFakeKernelHost(void) { return 80; }\n", f);
    fclose(f);
    struct buf m = {NULL, 0, 0};
    size_t c = begin_container(&m);
    add_entry(&m, CDD_FATBIN_KIND_SASS, 80, 1, 7, 200, 0);
    end_container(&m, c);
    f = fopen(fb, "wb");
    CHECK(f && fwrite(m.b, 1, m.len, f) == m.len);
    if (f)
        fclose(f);
    free(m.b);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o '%s' '%s'", so, src);
    if (run_quiet(cmd) != 0) {
        fprintf(stderr, "  skipped: no C compiler\n");
        cdd_fs_remove_tree(dir);
        return;
    }
    CHECK_INT(cdd_fatbin_scan_file(so, &has, &fi), 0);
    CHECK_INT(has, 0);
    snprintf(cmd, sizeof cmd,
             "objcopy --add-section .nv_fatbin='%s' --set-section-flags "
             ".nv_fatbin=alloc,readonly '%s'", fb, so);
    if (run_quiet(cmd) != 0) {
        fprintf(stderr, "  skipped: no objcopy\n");
        cdd_fs_remove_tree(dir);
        return;
    }
    CHECK_MSG(cdd_fatbin_scan_file(so, &has, &fi) == 0, "%s",
              cdd_last_error()->msg);
    CHECK_INT(has, 1);
    CHECK_INT(fi.n_entries, 1);
    CHECK_INT(fi.n_codes, 1);
    CHECK_INT(fi.codes[0].kind, CDD_FATBIN_KIND_SASS);
    CHECK_INT(fi.codes[0].arch, 80);
    struct cdd_bininfo bi;
    CHECK_INT(cdd_bin_parse_file(so, &bi), 0);
    CHECK(cdd_bininfo_exports(&bi, "cudnnFakeKernelHost"));
    CHECK(bi.has_fatbin);
    cdd_bininfo_clear(&bi);
    cdd_fs_remove_tree(dir);
}

/* A library nvcc built, when CUDA's compiler is installed (CDD_NVCC, else
 * /usr/local/cuda/bin/nvcc): the real toolchain's containers, entry headers
 * and arch-specific flag, for the code requested and nothing else. */
static void test_real_nvcc_library(void)
{
    const char *nvcc = getenv("CDD_NVCC");
    const char *base = getenv("CDD_TEST_TMP");
    char dir[1024], cmd[8000], so[1200];
    struct cdd_fatbin_info fi;
    int has = 0;
    if (!nvcc || !*nvcc)
        nvcc = "/usr/local/cuda/bin/nvcc";
    snprintf(dir, sizeof dir, "%s/fatbin-nvcc-%ld",
             base && *base ? base : "/tmp", cdd_getpid());
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(so, sizeof so, "%s/libk.so", dir);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf '__global__ void k(float *x) { x[0] *= 2; }\\n"
             "extern \"C\" void launch(float *x) { k<<<1, 1>>>(x); }\\n' "
             "> k.cu && '%s' -shared -Xcompiler -fPIC "
             "-gencode arch=compute_80,code=sm_80 "
             "-gencode arch=compute_90a,code=sm_90a "
             "-gencode arch=compute_90,code=compute_90 -o libk.so k.cu",
             dir, nvcc);
    if (run_quiet(cmd) != 0) {
        fprintf(stderr, "  skipped: no working nvcc (%s)\n", nvcc);
        cdd_fs_remove_tree(dir);
        return;
    }
    CHECK_MSG(cdd_fatbin_scan_file(so, &has, &fi) == 0, "%s",
              cdd_last_error()->msg);
    CHECK_INT(has, 1);
    CHECK_INT(fi.n_other, 0);
    CHECK_INT(fi.n_codes, 3);
    if (fi.n_codes == 3) {
        CHECK(fi.codes[0].kind == CDD_FATBIN_KIND_SASS &&
              fi.codes[0].arch == 80 && !fi.codes[0].variant);
        CHECK(fi.codes[1].kind == CDD_FATBIN_KIND_SASS &&
              fi.codes[1].arch == 90 && fi.codes[1].variant == 'a');
        CHECK(fi.codes[2].kind == CDD_FATBIN_KIND_PTX &&
              fi.codes[2].arch == 90 && fi.codes[2].major >= 8);
    }
    unsigned arch = 0;
    CHECK_INT(cdd_fatbin_fit(&fi, 9, 0, &arch), CDD_ARCH_SASS);
    CHECK_INT(cdd_fatbin_fit(&fi, 10, 0, &arch), CDD_ARCH_PTX_JIT);
    CHECK_INT(cdd_fatbin_fit(&fi, 7, 5, &arch), CDD_ARCH_NONE);
    cdd_fs_remove_tree(dir);
}

TEST_MAIN(TEST(test_cudnn_like_section), TEST(test_hostile),
          TEST(test_limits), TEST(test_compatibility_rules),
          TEST(test_variants_described), TEST(test_merge),
          TEST(test_real_elf_section), TEST(test_real_nvcc_library))
