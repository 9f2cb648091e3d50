/* Unit tests of the download cache: where it lives by default, the entry
 * layout <cache>/<sha256>/<filename>, a hit re-hashed, a corrupted entry
 * deleted, a commit by rename, unsafe file names refused, and names and
 * paths past the file system's limits refused as too long before anything
 * is made. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"

#include "fixture.h"
#include "test.h"

static const char *root;

static void sha_of(const char *text, uint8_t d[CDD_SHA256_LEN])
{
    struct cdd_sha256 *h = NULL;
    cdd_sha256_new(&h);
    cdd_sha256_update(h, text, strlen(text));
    cdd_sha256_final(h, d);
    cdd_sha256_free(h);
}

static void test_default_dir(void)
{
    char *d;
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("HOME", "/home/u", 1);
    d = cdd_default_cache_dir();
    CHECK_STR(d, "/x/cache/cudnn-deploy");
    free(d);
    /* A relative XDG_CACHE_HOME is invalid by the spec: ignored. */
    setenv("XDG_CACHE_HOME", "rel/cache", 1);
    d = cdd_default_cache_dir();
    CHECK_STR(d, "/home/u/.cache/cudnn-deploy");
    free(d);
    unsetenv("XDG_CACHE_HOME");
    d = cdd_default_cache_dir();
    CHECK_STR(d, "/home/u/.cache/cudnn-deploy");
    free(d);
    unsetenv("HOME");
    CHECK(cdd_default_cache_dir() == NULL);
    CHECK_INT(cdd_cache_dir(NULL, &d), CDD_E_NOTFOUND);
    CHECK_INT(cdd_cache_dir("/abs/dir", &d), 0);
    CHECK_STR(d, "/abs/dir");
    free(d);
}

static void test_entry_layout_and_lookup(void)
{
    struct cdd_cache_entry e;
    uint8_t sha[CDD_SHA256_LEN];
    char hex[CDD_SHA256_HEX], want[2048];
    int hit = -1;
    sha_of("archive bytes", sha);
    cdd_hex_encode(sha, CDD_SHA256_LEN, hex);
    CHECK_INT(cdd_cache_entry_init(root, sha, "a.tar.xz", &e), 0);
    snprintf(want, sizeof want, "%s/%s/a.tar.xz", root, hex);
    CHECK_STR(e.path, want);
    snprintf(want, sizeof want, "%s/%s/a.tar.xz.part", root, hex);
    CHECK_STR(e.part, want);
    /* Missing: a miss, not an error. */
    CHECK_INT(cdd_cache_lookup(&e, sha, 0, 0, &hit), 0);
    CHECK_INT(hit, 0);
    /* Present and right. */
    CHECK_INT(fx_write_text(e.path, "archive bytes"), 0);
    CHECK_INT(cdd_cache_lookup(&e, sha, 1, 13, &hit), 0);
    CHECK_INT(hit, 1);
    /* Present, right hash but another size pin: deleted. */
    CHECK_INT(cdd_cache_lookup(&e, sha, 1, 14, &hit), 0);
    CHECK_INT(hit, 0);
    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(e.path, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    /* Corrupted: deleted so it is fetched again. */
    CHECK_INT(fx_write_text(e.path, "archive bytez"), 0);
    CHECK_INT(cdd_cache_lookup(&e, sha, 0, 0, &hit), 0);
    CHECK_INT(hit, 0);
    CHECK_INT(cdd_fs_lstat(e.path, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    cdd_cache_entry_clear(&e);
}

static void test_unpinned_and_commit(void)
{
    struct cdd_cache_entry e;
    uint8_t sha[CDD_SHA256_LEN];
    char hex[CDD_SHA256_HEX], want[2048], *path = NULL;
    int hit = 0;
    sha_of("unpinned bytes", sha);
    cdd_hex_encode(sha, CDD_SHA256_LEN, hex);
    CHECK_INT(cdd_cache_entry_init(root, NULL, "b.zip", &e), 0);
    snprintf(want, sizeof want, "%s/unpinned/b.zip.part", root);
    CHECK_STR(e.part, want);
    CHECK_INT(fx_write_text(e.part, "unpinned bytes"), 0);
    CHECK_INT(cdd_cache_commit(root, e.part, sha, "b.zip", &path), 0);
    snprintf(want, sizeof want, "%s/%s/b.zip", root, hex);
    CHECK_STR(path, want);
    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(e.part, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    cdd_cache_entry_clear(&e);
    /* Now a pinned lookup finds it. */
    CHECK_INT(cdd_cache_entry_init(root, sha, "b.zip", &e), 0);
    CHECK_INT(cdd_cache_lookup(&e, sha, 0, 0, &hit), 0);
    CHECK_INT(hit, 1);
    cdd_cache_entry_clear(&e);
    free(path);
}

static void test_unsafe_names(void)
{
    static const char *const names[] = {"", "../x.zip", "a/b.zip", "..",
                                        "con.zip", "x\\y.zip"};
    struct cdd_cache_entry e;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK_MSG(cdd_cache_entry_init(root, NULL, names[i], &e) ==
                      CDD_E_USAGE,
                  "'%s' accepted", names[i]);
        CHECK(e.path == NULL);
    }
}

/* name: n bytes of 'a' then ".zip" (n + 4 in all). */
static char *long_name(size_t n)
{
    char *s = malloc(n + 5);
    if (!s)
        exit(2);
    memset(s, 'a', n);
    memcpy(s + n, ".zip", 5);
    return s;
}

static void test_name_and_path_bounds(void)
{
    struct cdd_cache_entry e;
    uint8_t sha[CDD_SHA256_LEN];
    sha_of("bounds", sha);
    /* 250 bytes: its ".part" is 255, what a folder entry holds. */
    char *fits = long_name(246);
    CHECK_INT(cdd_cache_entry_init(root, sha, fits, &e), 0);
    const char *base = e.part + strlen(e.part);
    while (base > e.part && base[-1] != '/' && base[-1] != '\\')
        base--;
    CHECK_INT((int)strlen(base), 255);
    FILE *f = fopen(e.part, "wb"); /* the file system takes it */
    CHECK(f != NULL);
    if (f)
        fclose(f);
    CHECK_INT(cdd_fs_unlink(e.part), 0);
    cdd_cache_entry_clear(&e);
    /* 251: a legal name (under 255) whose ".part" would not be. */
    char *over = long_name(247);
    CHECK_INT(cdd_cache_entry_init(root, sha, over, &e), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, ".part"));
    CHECK(strstr(cdd_last_error()->msg, "at most 250"));
    CHECK(e.path == NULL);
    cdd_clear_error();
    /* A cache folder so deep the entry's path passes the path limit:
     * refused before a folder is made. */
    size_t depth = (size_t)CDD_PATH_MAX / 100 + 1;
    size_t cap = strlen(root) + depth * 101 + 2;
    char *deep = malloc(cap);
    CHECK(deep != NULL);
    if (deep) {
        size_t at = (size_t)snprintf(deep, cap, "%s/deep", root);
        for (size_t i = 0; i < depth; i++) {
            deep[at++] = '/';
            memset(deep + at, 'd', 99);
            at += 99;
        }
        deep[at] = '\0';
        CHECK_INT(cdd_cache_entry_init(deep, sha, "x.zip", &e),
                  CDD_E_TOOLONG);
        CHECK(strstr(cdd_last_error()->msg, "--cache-dir"));
        cdd_clear_error();
        char *made = malloc(strlen(root) + 8);
        if (made) {
            snprintf(made, strlen(root) + 8, "%s/deep", root);
            struct cdd_finfo fi;
            CHECK(cdd_fs_linfo(made, &fi) == 0 && fi.type == CDD_FT_NONE);
            free(made);
        }
        free(deep);
    }
    free(fits);
    free(over);
}

static void test_cleanup(void)
{
    CHECK_INT(cdd_fs_remove_tree(root), 0);
}

int main(int argc, char **argv)
{
    static const struct t_case cases[] = {
        TEST(test_default_dir), TEST(test_entry_layout_and_lookup),
        TEST(test_unpinned_and_commit), TEST(test_unsafe_names),
        TEST(test_name_and_path_bounds), TEST(test_cleanup)};
    root = fx_scratch("cache");
    return t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
