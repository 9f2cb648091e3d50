/* The threaded xz path (src/core/archive/xzmt.c, through archive.c): a tar
 * made here is compressed by the xz tool at test time into a multi-block
 * stream (xz -T2 --block-size) and a single-block one. The block count is
 * read from the index; the threaded decoder yields the tar's exact bytes;
 * the archive reader on the multi-block file takes the threaded path and
 * yields the same entries and bytes as libarchive's filter on both files;
 * a damaged block is refused with CDD_E_CORRUPT, the code the
 * single-threaded path gives the same file, and a truncated file (no index)
 * goes the single-threaded way and is refused there. POSIX only (the xz and
 * tar tools); skipped where the build has no threaded decoder. */
#include "fixture.h"
#include "test.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "xzmt_int.h"

static char root[512];
static int have_tools;

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

static const char *path_of(const char *name)
{
    static char buf[4][700];
    static int next;
    char *b = buf[next];
    next = (next + 1) % 4;
    snprintf(b, sizeof buf[0], "%s/%s", root, name);
    return b;
}

/* Bytes compressible like a GPU library's (runs of a few patterns mixed
 * with noise), so that xz makes blocks of realistic ratio. */
static void write_payload(const char *path, size_t n, uint32_t seed)
{
    FILE *f = fopen(path, "wb");
    uint32_t x = seed;
    CHECK(f != NULL);
    if (!f)
        return;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        unsigned char c = (x >> 24) & 0x0F ? (unsigned char)("ELF\x7f\x00\x01sm_90"[i % 10])
                                           : (unsigned char)(x >> 16);
        fputc(c, f);
    }
    fclose(f);
}

static void setup(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    snprintf(root, sizeof root, "%s/xzmt-%ld", base && *base ? base : "/tmp",
             (long)getpid());
    cdd_archive_init();
    cdd_fs_remove_tree(root);
    if (cdd_fs_mkdirs(path_of("src/lib"), NULL) != 0) {
        fprintf(stderr, "cannot create %s\n", root);
        exit(2);
    }
    have_tools = CDD_TEST_XZMT && system("xz --version >/dev/null 2>&1") == 0 &&
                 system("tar --version >/dev/null 2>&1") == 0;
    if (!have_tools)
        return;
    write_payload(path_of("src/lib/libbig.so.1"), 3u << 20, 1);
    write_payload(path_of("src/lib/libmid.so.1"), 1u << 20, 2);
    write_payload(path_of("src/LICENSE"), 4000, 3);
    CHECK(sh("cd '%s' && tar -cf '%s' LICENSE lib", path_of("src"),
             path_of("a.tar")) == 0);
    CHECK(sh("xz -T2 --block-size=256KiB -c '%s' > '%s'", path_of("a.tar"),
             path_of("multi.tar.xz")) == 0);
    CHECK(sh("xz -T1 -c '%s' > '%s'", path_of("a.tar"),
             path_of("single.tar.xz")) == 0);
}

static uint64_t blocks_of(const char *path)
{
    struct cdd_rfile *f = NULL;
    uint64_t size = 0, n;
    if (cdd_fs_open_read(path, &f) < 0)
        return UINT64_MAX;
    CHECK_INT(cdd_rfile_size(f, &size), 0);
    n = cdd_xzmt_blocks(f, size);
    cdd_rfile_close(f);
    return n;
}

static void test_blocks_counted(void)
{
    if (!have_tools)
        return;
    CHECK(blocks_of(path_of("multi.tar.xz")) > 10);
    CHECK_INT(blocks_of(path_of("single.tar.xz")), 1);
    CHECK_INT(blocks_of(path_of("a.tar")), 0);
    /* No index, no count: the single-threaded path will say what is wrong. */
    CHECK(sh("head -c 100000 '%s' > '%s'", path_of("multi.tar.xz"),
             path_of("cut.tar.xz")) == 0);
    CHECK_INT(blocks_of(path_of("cut.tar.xz")), 0);
}

/* Everything xzmt decodes from path with `threads` threads, or NULL with
 * *err set. */
static unsigned char *decode_all(const char *path, unsigned threads,
                                 size_t *n, int *err)
{
    struct cdd_rfile *f = NULL;
    struct cdd_xzmt *x = NULL;
    unsigned char *out = NULL;
    size_t cap = 0;
    int r;
    *n = 0;
    *err = 0;
    if ((r = cdd_fs_open_read(path, &f)) < 0 ||
        (r = cdd_xzmt_open(f, path, threads, &x)) < 0) {
        *err = r;
        cdd_rfile_close(f);
        return NULL;
    }
    for (;;) {
        const void *b;
        size_t len;
        if ((r = cdd_xzmt_read(x, &b, &len)) < 0) {
            *err = r;
            break;
        }
        if (!len)
            break;
        if (*n + len > cap) {
            cap = (*n + len) * 2;
            out = realloc(out, cap);
        }
        memcpy(out + *n, b, len);
        *n += len;
    }
    CHECK(cdd_xzmt_consumed(x) > 0);
    cdd_xzmt_free(x);
    cdd_rfile_close(f);
    if (*err) {
        free(out);
        return NULL;
    }
    return out;
}

static void test_decodes_the_exact_tar(void)
{
    size_t want_n = 0, got_n = 0;
    unsigned char *want, *got;
    int err = 0;
    if (!have_tools)
        return;
    want = fx_read(path_of("a.tar"), &want_n);
    for (unsigned t = 1; t <= 4; t *= 2) {
        got = decode_all(path_of("multi.tar.xz"), t, &got_n, &err);
        CHECK_INT(err, 0);
        CHECK_INT(got_n, want_n);
        CHECK(got && want && memcmp(got, want, want_n) == 0);
        free(got);
    }
    free(want);
}

/* name, NUL, data of every entry the reader yields, in order. */
static unsigned char *read_entries(const char *path, unsigned threads,
                                   unsigned *xz_threads, size_t *n, int *err)
{
    struct cdd_archive *a = NULL;
    struct cdd_archive_entry e;
    unsigned char *out = NULL, buf[65536];
    size_t cap = 0;
    int r;
    *n = 0;
    *err = 0;
    *xz_threads = 0;
    if ((r = cdd_archive_open_mt(path, NULL, threads, &a)) < 0) {
        *err = r;
        return NULL;
    }
    *xz_threads = cdd_archive_xz_threads(a);
    while ((r = cdd_archive_next(a, &e)) == 0) {
        size_t len = strlen(e.path) + 1, got;
        for (;;) {
            if (*n + len + sizeof buf > cap) {
                cap = (*n + len + sizeof buf) * 2;
                out = realloc(out, cap);
            }
            memcpy(out + *n, len ? e.path : "", len);
            *n += len;
            len = 0;
            if ((r = cdd_archive_read(a, buf, sizeof buf, &got)) < 0 || !got)
                break;
            memcpy(out + *n, buf, got);
            *n += got;
        }
        if (r < 0)
            break;
    }
    if (r < 0)
        *err = r;
    cdd_archive_close(a);
    return out;
}

static void test_reader_takes_the_threaded_path(void)
{
    size_t n_mt = 0, n_st = 0, n_single = 0;
    unsigned t_mt = 0, t_st = 0, t_single = 0;
    int e1 = 0, e2 = 0, e3 = 0;
    unsigned char *mt, *st, *single;
    if (!have_tools)
        return;
    mt = read_entries(path_of("multi.tar.xz"), 4, &t_mt, &n_mt, &e1);
    st = read_entries(path_of("multi.tar.xz"), 1, &t_st, &n_st, &e2);
    single = read_entries(path_of("single.tar.xz"), 4, &t_single, &n_single,
                          &e3);
    CHECK_INT(e1, 0);
    CHECK_INT(e2, 0);
    CHECK_INT(e3, 0);
    CHECK_INT(t_mt, 4);     /* bounded by the jobs asked for */
    CHECK_INT(t_st, 0);     /* one job: libarchive's filter */
    CHECK_INT(t_single, 0); /* one block: libarchive's filter */
    CHECK(n_mt > (4u << 20));
    CHECK_INT(n_mt, n_st);
    CHECK_INT(n_mt, n_single);
    CHECK(mt && st && memcmp(mt, st, n_mt) == 0);
    CHECK(mt && single && memcmp(mt, single, n_mt) == 0);
    free(mt);
    free(st);
    free(single);
}

/* Damage one byte of path's copy at `at` (a fraction of the size). */
static void damage(const char *from, const char *to, double at)
{
    size_t n = 0;
    unsigned char *b = fx_read(from, &n);
    FILE *f = fopen(to, "wb");
    CHECK(b && f && n > 0);
    if (!b || !f)
        return;
    b[(size_t)(n * at)] ^= 0x55;
    fwrite(b, 1, n, f);
    fclose(f);
    free(b);
}

static void test_damage_is_refused(void)
{
    static const double at[] = {0.3, 0.5, 0.8};
    if (!have_tools)
        return;
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        size_t n = 0;
        unsigned t = 0;
        int err = 0, err_st = 0;
        unsigned char *b;
        damage(path_of("multi.tar.xz"), path_of("bad.tar.xz"), at[i]);
        /* The index is intact: the threaded path is taken ... */
        CHECK(blocks_of(path_of("bad.tar.xz")) > 10);
        b = decode_all(path_of("bad.tar.xz"), 4, &n, &err);
        CHECK(b == NULL);
        CHECK_INT(err, CDD_E_CORRUPT);
        CHECK(strstr(cdd_last_error()->msg, "xz (4 threads)") != NULL);
        free(b);
        /* ... and the reader refuses the archive with the code libarchive's
         * filter gives the same file. */
        b = read_entries(path_of("bad.tar.xz"), 4, &t, &n, &err);
        CHECK_INT(err, CDD_E_CORRUPT);
        /* (at the open already when the damage is in the first blocks the
         * decoder runs) */
        CHECK_MSG(strstr(cdd_last_error()->msg, "xz (4 threads)") != NULL,
                  "%s", cdd_last_error()->msg);
        free(b);
        b = read_entries(path_of("bad.tar.xz"), 1, &t, &n, &err_st);
        CHECK_INT(err_st, CDD_E_CORRUPT);
        CHECK_INT(cdd_err_exit_code(err), cdd_err_exit_code(err_st));
        free(b);
    }
}

static void test_truncated_is_refused(void)
{
    size_t n = 0;
    unsigned t = 0;
    int err = 0;
    unsigned char *b;
    if (!have_tools)
        return;
    /* Blocks missing from the end: no index, so libarchive's path. */
    b = read_entries(path_of("cut.tar.xz"), 4, &t, &n, &err);
    CHECK_INT(t, 0);
    CHECK_INT(err, CDD_E_CORRUPT);
    free(b);
}

int main(int argc, char **argv)
{
    static const struct t_case cases[] = {
        TEST(test_blocks_counted),
        TEST(test_decodes_the_exact_tar),
        TEST(test_reader_takes_the_threaded_path),
        TEST(test_damage_is_refused),
        TEST(test_truncated_is_refused),
    };
    int r;
    setup();
    if (!have_tools)
        fprintf(stderr, "skip: no threaded xz decoder, or no xz or tar tool\n");
    r = t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
    cdd_fs_remove_tree(root);
    return r;
}
