/* Unit tests of the download cache: where it lives by default, the entry
 * layout <cache>/<sha256>/<filename>, a hit re-hashed, a corrupted entry
 * deleted, a commit by rename, unsafe file names refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
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

static void test_cleanup(void)
{
    CHECK_INT(cdd_fs_remove_tree(root), 0);
}

int main(int argc, char **argv)
{
    static const struct t_case cases[] = {
        TEST(test_default_dir), TEST(test_entry_layout_and_lookup),
        TEST(test_unpinned_and_commit), TEST(test_unsafe_names),
        TEST(test_cleanup)};
    root = fx_scratch("cache");
    return t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
