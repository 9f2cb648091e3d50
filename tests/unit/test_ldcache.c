/* The ld.so.cache reader (ldcache.h): synthetic caches in all three formats
 * (new, old+new "compat", old) with entries for several ABIs, hwcaps
 * entries and numeric soname matching; then hostile ones - truncated at
 * every length, huge counts, offsets and strings out of range, unterminated
 * and overlong strings, and thousands of seeded random mutations - which
 * must give CDD_E_CORRUPT or a sane answer, never a crash (run under
 * AddressSanitizer: every image is an exact-size heap copy). Finally the
 * file interface and this machine's own /etc/ld.so.cache. */
#include "fixture.h"
#include "test.h"

#include "cdd/error.h"
#include "ldcache.h"

#include <stdint.h>
#include <unistd.h>

#define X8664 0x0303
#define I386 0x0003
#define X32 0x0803

struct ent {
    int32_t flags;
    const char *key, *val;
    uint64_t hwcap;
};

/* Entries as ldconfig sorts them: hwcaps-specific ones first. */
static const struct ent ents[] = {
    {X8664, "libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", 0},
    {X8664, "libcuda.so.1",
     "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libcuda.so.1",
     (1ull << 62) | 1},
    {X8664, "libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", 0},
    {I386, "libcuda.so.1", "/usr/lib/i386-linux-gnu/libcuda.so.1", 0},
    {X32, "libcuda.so.1", "/usr/libx32/libcuda.so.1", 0},
    {X8664, "libcuda.so.1", "relative/libcuda.so.1", 0},
    {X8664, "libcudnn.so.8", "/usr/local/cuda/lib64/libcudnn.so.8", 0},
};
#define NENTS (sizeof ents / sizeof ents[0])

struct img {
    unsigned char *b;
    size_t len, cap;
};

static size_t grow(struct img *m, size_t n)
{
    size_t at = m->len;
    if (m->len + n > m->cap) {
        m->cap = (m->len + n) * 2 + 64;
        m->b = realloc(m->b, m->cap);
        if (!m->b)
            abort();
    }
    memset(m->b + at, 0, n);
    m->len += n;
    return at;
}

static void put32(struct img *m, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        m->b[at + i] = (unsigned char)(v >> (8 * i));
}

static void put64(struct img *m, size_t at, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        m->b[at + i] = (unsigned char)(v >> (8 * i));
}

static size_t put_str(struct img *m, const char *s)
{
    size_t at = grow(m, strlen(s) + 1);
    memcpy(m->b + at, s, strlen(s) + 1);
    return at;
}

/* A new-format table at m->len; string offsets count from its header. */
static void add_new_table(struct img *m, const struct ent *e, size_t n)
{
    size_t hdr = grow(m, 48);
    memcpy(m->b + hdr, "glibc-ld.so.cache1.1", 20);
    put32(m, hdr + 20, (uint32_t)n);
    m->b[hdr + 28] = 2; /* little-endian */
    size_t tab = grow(m, 24 * n);
    size_t str0 = m->len;
    for (size_t i = 0; i < n; i++) {
        size_t k = put_str(m, e[i].key), v = put_str(m, e[i].val);
        size_t at = tab + 24 * i;
        put32(m, at, (uint32_t)e[i].flags);
        put32(m, at + 4, (uint32_t)(k - hdr));
        put32(m, at + 8, (uint32_t)(v - hdr));
        put64(m, at + 16, e[i].hwcap);
    }
    put32(m, hdr + 24, (uint32_t)(m->len - str0));
}

static struct img build_new(void)
{
    struct img m = {0};
    add_new_table(&m, ents, NENTS);
    return m;
}

/* Old table; with_new appends the new one (compat format). */
static struct img build_old(int with_new)
{
    struct img m = {0};
    grow(&m, 16);
    memcpy(m.b, "ld.so-1.7.0", 11);
    put32(&m, 12, (uint32_t)NENTS);
    size_t tab = grow(&m, 12 * NENTS);
    size_t strbase = m.len;
    if (with_new) {
        grow(&m, (8 - m.len % 8) % 8);
        add_new_table(&m, ents, NENTS);
    }
    for (size_t i = 0; i < NENTS; i++) {
        size_t k = put_str(&m, ents[i].key), v = put_str(&m, ents[i].val);
        put32(&m, tab + 12 * i, (uint32_t)ents[i].flags);
        put32(&m, tab + 12 * i + 4, (uint32_t)(k - strbase));
        put32(&m, tab + 12 * i + 8, (uint32_t)(v - strbase));
    }
    return m;
}

/* Look up in an exact-size heap copy, so ASan sees any overread. */
static int lookup(const unsigned char *b, size_t len, const char *soname,
                  char ***paths, size_t *n)
{
    unsigned char *copy = malloc(len ? len : 1);
    if (len)
        memcpy(copy, b, len);
    int r = cdd_ldcache_lookup_mem(copy, len, "test-cache", soname, paths, n);
    free(copy);
    return r;
}

static void check_answers(const struct img *m, const char *what)
{
    char **p = NULL;
    size_t n = 0;
    CHECK_INT(lookup(m->b, m->len, "libcuda.so.1", &p, &n), 0);
    CHECK_MSG(n == 2, "%s: %zu paths", what, n);
    if (n == 2) {
        /* Cache order; the i386, x32 and relative entries are not ours. */
        CHECK_STR(p[0],
                  "/usr/lib/x86_64-linux-gnu/glibc-hwcaps/x86-64-v3/libcuda.so.1");
        CHECK_STR(p[1], "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    }
    cdd_ldcache_free(p, n);
    /* glibc compares digit runs as numbers. */
    CHECK_INT(lookup(m->b, m->len, "libcuda.so.01", &p, &n), 0);
    CHECK_INT(n, 2);
    cdd_ldcache_free(p, n);
    CHECK_INT(lookup(m->b, m->len, "libcuda.so.10", &p, &n), 0);
    CHECK_INT(n, 0);
    CHECK(p == NULL);
    CHECK_INT(lookup(m->b, m->len, "libcuda.so", &p, &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(lookup(m->b, m->len, "libcuda.so.1.1", &p, &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(lookup(m->b, m->len, "libc.so.6", &p, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1)
        CHECK_STR(p[0], "/lib/x86_64-linux-gnu/libc.so.6");
    cdd_ldcache_free(p, n);
    CHECK_INT(lookup(m->b, m->len, "libnothing.so.1", &p, &n), 0);
    CHECK_INT(n, 0);
    CHECK_INT(lookup(m->b, m->len, "", &p, &n), CDD_E_USAGE);
}

static void test_new_format(void)
{
    struct img m = build_new();
    check_answers(&m, "new");
    free(m.b);
}

static void test_compat_format(void)
{
    struct img m = build_old(1);
    check_answers(&m, "compat");
    /* The new table is the one used: break the old table's strings and the
     * answers must not change. */
    for (size_t i = 0; i < NENTS; i++)
        put32(&m, 16 + 12 * i + 4, 0xfffffff0u);
    check_answers(&m, "compat, old table broken");
    free(m.b);
}

static void test_old_format(void)
{
    struct img m = build_old(0);
    check_answers(&m, "old");
    free(m.b);
}

static void test_not_a_cache(void)
{
    char **p = NULL;
    size_t n = 7;
    const char junk[] = "this is not an ld.so cache at all, not even close....";
    CHECK_INT(lookup((const unsigned char *)junk, sizeof junk, "libc.so.6", &p,
                     &n),
              CDD_E_CORRUPT);
    CHECK(p == NULL);
    CHECK_INT(n, 0);
    CHECK_INT(lookup((const unsigned char *)"", 0, "libc.so.6", &p, &n),
              CDD_E_CORRUPT);
    /* Big-endian caches are not for us. */
    struct img m = build_new();
    m.b[28] = 3;
    CHECK_INT(lookup(m.b, m.len, "libc.so.6", &p, &n), CDD_E_CORRUPT);
    CHECK(strstr(cdd_last_error()->msg, "little-endian") != NULL);
    m.b[28] = 0; /* unset: accepted, as glibc accepts it */
    CHECK_INT(lookup(m.b, m.len, "libc.so.6", &p, &n), 0);
    cdd_ldcache_free(p, n);
    free(m.b);
}

/* Every prefix of the image: a clean answer or CDD_E_CORRUPT. */
static void truncations(const struct img *m, const char *what)
{
    for (size_t len = 0; len <= m->len; len++) {
        char **p = NULL;
        size_t n = 0;
        int r = lookup(m->b, len, "libcuda.so.1", &p, &n);
        CHECK_MSG(r == 0 || r == CDD_E_CORRUPT, "%s truncated at %zu: %d",
                  what, len, r);
        if (r == 0)
            CHECK(n <= 2);
        cdd_ldcache_free(p, n);
    }
}

static void test_truncated(void)
{
    struct img a = build_new(), b = build_old(1), c = build_old(0);
    truncations(&a, "new");
    truncations(&b, "compat");
    truncations(&c, "old");
    free(a.b);
    free(b.b);
    free(c.b);
}

static void test_huge_counts(void)
{
    char **p = NULL;
    size_t n = 0;
    struct img m = build_new();
    put32(&m, 20, 0xffffffffu);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    put32(&m, 20, (uint32_t)NENTS + 1);
    int r = lookup(m.b, m.len, "libcuda.so.1", &p, &n);
    CHECK(r == CDD_E_CORRUPT || (r == 0 && n <= 2));
    cdd_ldcache_free(p, n);
    p = NULL;
    n = 0;
    free(m.b);
    m = build_old(0);
    put32(&m, 12, 0xffffffffu);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    put32(&m, 12, 0x15555555u); /* 12 * n wraps 32 bits */
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    free(m.b);
    m = build_old(1);
    size_t nh = (16 + 12 * NENTS + 7) / 8 * 8;
    put32(&m, nh + 20, 0xffffffffu);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    free(m.b);
}

static void test_bad_offsets(void)
{
    char **p = NULL;
    size_t n = 0;
    struct img m = build_new();
    /* Entry 2 (an x86-64 libcuda.so.1): name offset far outside. */
    put32(&m, 48 + 24 * 2 + 4, 0xfffffff0u);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    CHECK(strstr(cdd_last_error()->msg, "out of range") != NULL);
    free(m.b);
    /* Path offset exactly at the end of the file. */
    m = build_new();
    put32(&m, 48 + 24 * 2 + 8, (uint32_t)m.len);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    /* ... which does not matter for a name that is not looked up. */
    CHECK_INT(lookup(m.b, m.len, "libc.so.6", &p, &n), 0);
    CHECK_INT(n, 1);
    cdd_ldcache_free(p, n);
    free(m.b);
    /* A bad offset in an i386 entry is never followed. */
    m = build_new();
    put32(&m, 48 + 24 * 3 + 4, 0xfffffff0u);
    CHECK_INT(lookup(m.b, m.len, "libcuda.so.1", &p, &n), 0);
    CHECK_INT(n, 2);
    cdd_ldcache_free(p, n);
    free(m.b);
}

static void test_bad_strings(void)
{
    char **p = NULL;
    size_t n = 0;
    /* The last string runs off the end without a NUL. */
    struct img m = build_new();
    m.b[m.len - 1] = 'x';
    int r = lookup(m.b, m.len, "libcudnn.so.8", &p, &n);
    CHECK_INT(r, CDD_E_CORRUPT);
    free(m.b);
    /* A path longer than any real one. */
    static char longp[6000];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    struct ent e[1] = {{X8664, "libcuda.so.1", longp, 0}};
    struct img l = {0};
    add_new_table(&l, e, 1);
    CHECK_INT(lookup(l.b, l.len, "libcuda.so.1", &p, &n), CDD_E_CORRUPT);
    free(l.b);
}

static uint64_t rng = 0x1234567;
static uint32_t rnd32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void mutations(const struct img *m, int rounds)
{
    unsigned char *b = malloc(m->len);
    for (int t = 0; t < rounds; t++) {
        memcpy(b, m->b, m->len);
        int k = 1 + (int)(rnd32() % 8);
        for (int i = 0; i < k; i++) {
            size_t at = rnd32() % m->len;
            switch (rnd32() % 3) {
            case 0:
                b[at] = (unsigned char)rnd32();
                break;
            case 1: /* a large 32-bit value, aligned as fields are */
                at &= ~(size_t)3;
                if (at + 4 <= m->len)
                    for (int j = 0; j < 4; j++)
                        b[at + j] = j == 3 ? 0xff : (unsigned char)rnd32();
                break;
            default:
                b[at] ^= (unsigned char)(1u << (rnd32() % 8));
            }
        }
        size_t len = rnd32() % 4 ? m->len : rnd32() % m->len;
        char **p = NULL;
        size_t n = 0;
        const char *names[] = {"libcuda.so.1", "libc.so.6", "libcudnn.so.8"};
        int r = lookup(b, len, names[t % 3], &p, &n);
        CHECK_MSG(r == 0 || r == CDD_E_CORRUPT, "mutation %d: %d", t, r);
        for (size_t i = 0; i < n; i++)
            CHECK(p[i][0] == '/' && strlen(p[i]) <= 4096);
        cdd_ldcache_free(p, n);
    }
    free(b);
}

static void test_random_mutations(void)
{
    struct img a = build_new(), b = build_old(1), c = build_old(0);
    mutations(&a, 3000);
    mutations(&b, 3000);
    mutations(&c, 3000);
    free(a.b);
    free(b.b);
    free(c.b);
}

static void test_file(void)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/ld.so.cache", fx_scratch("ldcache"));
    struct img m = build_old(1);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(m.b, 1, m.len, f) == m.len);
    CHECK(f && fclose(f) == 0);
    char **p = NULL;
    size_t n = 0;
    CHECK_INT(cdd_ldcache_lookup(path, "libcudnn.so.8", &p, &n), 0);
    CHECK_INT(n, 1);
    if (n == 1)
        CHECK_STR(p[0], "/usr/local/cuda/lib64/libcudnn.so.8");
    cdd_ldcache_free(p, n);
    snprintf(path, sizeof path, "%s/missing.cache", fx_tmp("ldcache"));
    CHECK_INT(cdd_ldcache_lookup(path, "libc.so.6", &p, &n), CDD_E_NOTFOUND);
    free(m.b);
    cdd_ldcache_free(NULL, 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx_tmp("ldcache"));
    CHECK(system(cmd) == 0);
}

/* This machine's cache, where it is an x86-64 glibc system: libc.so.6 is in
 * every such cache, and the path given exists. */
static void test_system_cache(void)
{
#if defined(__x86_64__) && defined(__GLIBC__)
    if (access("/etc/ld.so.cache", R_OK) != 0) {
        fprintf(stderr, "  (no /etc/ld.so.cache here)\n");
        return;
    }
    char **p = NULL;
    size_t n = 0;
    CHECK_INT(cdd_ldcache_lookup("/etc/ld.so.cache", "libc.so.6", &p, &n), 0);
    CHECK(n >= 1);
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(access(p[i], F_OK) == 0, "%s does not exist", p[i]);
    cdd_ldcache_free(p, n);
#endif
}

/* A soname listed CDD_LDCACHE_MAX_PATHS times comes whole; once more is
 * CDD_E_TOOLONG (refused, never a cut list), with nothing returned. */
static void test_paths_bound(void)
{
    size_t n = CDD_LDCACHE_MAX_PATHS + 1;
    struct ent *e = calloc(n, sizeof *e);
    char (*vals)[48] = calloc(n, sizeof *vals);
    CHECK(e && vals);
    if (!e || !vals) {
        free(e);
        free(vals);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(vals[i], sizeof vals[i], "/opt/l%zu/libmany.so.1", i);
        e[i].flags = X8664;
        e[i].key = "libmany.so.1";
        e[i].val = vals[i];
    }
    for (int over = 0; over <= 1; over++) {
        struct img m = {0};
        add_new_table(&m, e, n - 1 + (size_t)over);
        char **p = NULL;
        size_t got = 0;
        cdd_clear_error();
        int r = lookup(m.b, m.len, "libmany.so.1", &p, &got);
        if (!over) {
            CHECK_INT(r, 0);
            CHECK_INT(got, CDD_LDCACHE_MAX_PATHS);
            if (got == CDD_LDCACHE_MAX_PATHS)
                CHECK_STR(p[got - 1], vals[got - 1]);
        } else {
            CHECK_INT(r, CDD_E_TOOLONG);
            CHECK_INT(cdd_last_error()->code, CDD_E_TOOLONG);
            CHECK(p == NULL);
            CHECK_INT(got, 0);
        }
        cdd_ldcache_free(p, got);
        cdd_clear_error();
        free(m.b);
    }
    free(e);
    free(vals);
}

TEST_MAIN(TEST(test_new_format), TEST(test_compat_format),
          TEST(test_old_format), TEST(test_not_a_cache), TEST(test_truncated),
          TEST(test_huge_counts), TEST(test_bad_offsets),
          TEST(test_bad_strings), TEST(test_random_mutations),
          TEST(test_paths_bound), TEST(test_file),
          TEST(test_system_cache))
