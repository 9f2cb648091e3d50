/* The bounds of issue 9 that live outside the archive readers: the
 * symlink-chain check (now linear: every shape of chain it must accept or
 * refuse), the total-bytes bound of discovery (manifest create), and the
 * manifest parser's value and depth counts. Archives are plain tars written
 * by hand at test time. */
#include "test.h"

#include <stdint.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"
#include "cdd/sys.h"

static char tar_path[600];

struct tbuf {
    unsigned char *p;
    size_t n, cap;
};

static void grow(struct tbuf *b, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            exit(2);
    }
}

static void header(struct tbuf *b, const char *name, char t, size_t size,
                   const char *link)
{
    unsigned char *h;
    unsigned sum = 0;
    char num[32];
    grow(b, 512);
    h = b->p + b->n;
    memset(h, 0, 512);
    memcpy(h, name, strlen(name));
    memcpy(h + 100, t == '2' ? "0000777" : "0000644", 7);
    memcpy(h + 108, "0001750", 7);
    memcpy(h + 116, "0001750", 7);
    snprintf(num, sizeof num, "%011llo", (unsigned long long)size);
    memcpy(h + 124, num, 11);
    memcpy(h + 136, "14264336200", 11);
    h[156] = (unsigned char)t;
    if (link)
        memcpy(h + 157, link, strlen(link));
    memcpy(h + 257, "ustar\0" "00", 8);
    memset(h + 148, ' ', 8);
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf(num, sizeof num, "%06o", sum);
    memcpy(h + 148, num, 7);
    b->n += 512;
}

static void add_file(struct tbuf *b, const char *name, size_t size)
{
    size_t pad = (512 - size % 512) % 512;
    header(b, name, '0', size, NULL);
    grow(b, size + pad);
    memset(b->p + b->n, 'x', size);
    memset(b->p + b->n + size, 0, pad);
    b->n += size + pad;
}

static void add_link(struct tbuf *b, const char *name, const char *target)
{
    header(b, name, '2', 0, target);
}

/* Write b (plus the end blocks) and run discovery on it. */
static int discover(struct tbuf *b, uint64_t max_total)
{
    struct cdd_extract_opts o = {.m = NULL, .strip_components = 1};
    FILE *f;
    int r;
    if (!tar_path[0]) {
        const char *base = getenv("CDD_TEST_TMP");
        base = base && *base ? base : "/tmp";
        cdd_fs_mkdirs(base, NULL);
        snprintf(tar_path, sizeof tar_path, "%s/bounds-%ld.tar", base,
                 cdd_getpid());
    }
    grow(b, 1024);
    memset(b->p + b->n, 0, 1024);
    f = fopen(tar_path, "wb");
    if (!f || fwrite(b->p, 1, b->n + 1024, f) != b->n + 1024 || fclose(f))
        exit(2);
    o.max_total = max_total;
    r = cdd_extract(tar_path, &o, NULL);
    if (r)
        fprintf(stderr, "    -> %s: %s\n", cdd_err_name(r),
                cdd_last_error()->msg);
    b->n = 0;
    return r;
}

static struct tbuf B;

static void test_chains_accepted(void)
{
    /* Two chains sharing a tail, a link to a link checked before, links
     * before and after their targets. */
    add_link(&B, "top/lib/a.so", "a.so.8");
    add_link(&B, "top/lib/a.so.8", "a.so.8.5");
    add_file(&B, "top/lib/a.so.8.5", 10);
    add_link(&B, "top/lib/b.so", "a.so");
    add_link(&B, "top/lib/c.so", "b.so");
    add_link(&B, "top/lib/d.so", "a.so.8");
    CHECK_INT(discover(&B, 0), 0);
}

static void test_long_chain(void)
{
    char name[64], target[64];
    for (int i = 0; i < 19000; i++) {
        snprintf(name, sizeof name, "top/lib/l%d.so", i);
        snprintf(target, sizeof target, "l%d.so", i + 1);
        add_link(&B, name, i + 1 < 19000 ? target : "real.so");
    }
    add_file(&B, "top/lib/real.so", 1);
    CHECK_INT(discover(&B, 0), 0);
}

static void test_loops_refused(void)
{
    /* A loop reached from a chain: a -> b -> c -> b. */
    add_link(&B, "top/lib/a.so", "b.so");
    add_link(&B, "top/lib/b.so", "c.so");
    add_link(&B, "top/lib/c.so", "b.so");
    CHECK_INT(discover(&B, 0), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "loops") != NULL);
    /* A link to itself, after a good chain. */
    add_file(&B, "top/lib/x.so.1", 1);
    add_link(&B, "top/lib/x.so", "x.so.1");
    add_link(&B, "top/lib/self.so", "self.so");
    CHECK_INT(discover(&B, 0), CDD_E_UNSAFE);
    CHECK(strstr(cdd_last_error()->msg, "self.so") != NULL);
}

static void test_dangling_refused(void)
{
    /* The end of a chain whose start was checked through another link. */
    add_link(&B, "top/lib/a.so", "b.so");
    add_link(&B, "top/lib/c.so", "a.so");
    add_link(&B, "top/lib/b.so", "gone.so");
    CHECK_INT(discover(&B, 0), CDD_E_ARCHIVE);
    CHECK(strstr(cdd_last_error()->msg, "gone.so") != NULL);
}

static void test_total_bound(void)
{
    add_file(&B, "top/lib/a", 1000);
    add_file(&B, "top/lib/b", 1000);
    add_file(&B, "top/lib/c", 1000);
    CHECK_INT(discover(&B, 3000), 0);
    add_file(&B, "top/lib/a", 1000);
    add_file(&B, "top/lib/b", 1000);
    add_file(&B, "top/lib/c", 1000);
    CHECK_INT(discover(&B, 2999), CDD_E_ARCHIVE);
    CHECK(strstr(cdd_last_error()->msg, "in all") != NULL);
    CHECK(strstr(cdd_last_error()->msg, "top/lib/c") != NULL);
}

static int parse(const char *text)
{
    struct cdd_manifest *m = NULL;
    int r = cdd_manifest_parse(text, strlen(text), "m.json", &m);
    cdd_manifest_free(m);
    return r;
}

static void test_manifest_counts(void)
{
    size_t n = 100001;
    char *big = malloc(2 * n + 2), *deep = malloc(70);
    CHECK(big && deep);
    if (!big || !deep)
        return;
    /* [0,0,...]: n zeros make n + 1 values. */
    big[0] = '[';
    for (size_t i = 0; i < n; i++) {
        big[1 + 2 * i] = '0';
        big[2 + 2 * i] = i + 1 < n ? ',' : ']';
    }
    big[2 * n + 1] = '\0';
    CHECK_INT(parse(big), CDD_E_MANIFEST);
    CHECK(strstr(cdd_last_error()->msg, "JSON values") != NULL);
    /* Commas and brackets inside strings count for nothing. */
    CHECK_INT(parse("{\"product\": \"[[[[,,,,{{{{\\\"]]]\"}"), CDD_E_MANIFEST);
    CHECK(strstr(cdd_last_error()->msg, "JSON values") == NULL);
    memset(deep, '[', 33);
    memset(deep + 33, ']', 33);
    deep[66] = '\0';
    CHECK_INT(parse(deep), CDD_E_MANIFEST);
    CHECK(strstr(cdd_last_error()->msg, "nested deeper") != NULL);
    free(big);
    free(deep);
}

static void cleanup(void)
{
    cdd_fs_unlink(tar_path);
    free(B.p);
}

TEST_MAIN(TEST(test_chains_accepted), TEST(test_long_chain),
          TEST(test_loops_refused), TEST(test_dangling_refused),
          TEST(test_total_bound), TEST(test_manifest_counts), TEST(cleanup))
