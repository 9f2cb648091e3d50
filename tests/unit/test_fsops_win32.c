/* Unit tests of the Win32 filesystem layer (fsops_win32.c) and the CNG
 * SHA-256 backend, built only for Windows and run under Wine in CI: long
 * paths, non-ASCII names, exclusive creation, atomic replace, the lock and
 * its holder's pid, links, listing and removal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/sys.h"
#include "fixture.h"
#include "test.h"
#include "win32_int.h"

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", a, b);
    return p;
}

static int put(const char *path, const char *text)
{
    return cdd_fs_write_atomic(path, text, strlen(text));
}

static void test_create_write_read(void)
{
    const char *d = fx_scratch("fsops-win32/create");
    char *p = join(d, "f.bin");
    struct cdd_file *f = NULL;
    CHECK_INT(cdd_fs_create(p, 1, &f), 0);
    CHECK_INT(cdd_file_preallocate(f, 11), 0);
    CHECK_INT(cdd_file_write(f, "hello world", 11), 0);
    CHECK_INT(cdd_file_sync(f), 0);
    CHECK_INT(cdd_file_close(f), 0);
    /* Exclusive: a second create of the same name fails, nothing changes. */
    f = NULL;
    CHECK(cdd_fs_create(p, 0, &f) != 0);
    CHECK(f == NULL);

    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(p, &st), 0);
    CHECK_INT(st.type, CDD_FT_FILE);
    CHECK_INT(st.size, 11);

    struct cdd_rfile *rf = NULL;
    char buf[32];
    size_t got = 0;
    uint64_t size = 0;
    CHECK_INT(cdd_fs_open_read(p, &rf), 0);
    CHECK_INT(cdd_rfile_size(rf, &size), 0);
    CHECK_INT(size, 11);
    CHECK_INT(cdd_rfile_pread(rf, 6, buf, 5, &got), 0);
    CHECK(got == 5 && memcmp(buf, "world", 5) == 0);
    /* pread does not move the sequential position. */
    CHECK_INT(cdd_rfile_read(rf, buf, 5, &got), 0);
    CHECK(got == 5 && memcmp(buf, "hello", 5) == 0);
    CHECK_INT(cdd_rfile_read(rf, buf, sizeof buf, &got), 0);
    CHECK_INT(got, 6);
    CHECK_INT(cdd_rfile_read(rf, buf, sizeof buf, &got), 0);
    CHECK_INT(got, 0);
    cdd_rfile_close(rf);

    /* Appending resumes at the end. */
    CHECK_INT(cdd_fs_open_append(p, &f, &size), 0);
    CHECK_INT(size, 11);
    CHECK_INT(cdd_file_write(f, "!", 1), 0);
    CHECK_INT(cdd_file_close(f), 0);
    char *text = NULL;
    size_t len;
    CHECK_INT(cdd_fs_read_all(p, 100, &text, &len), 0);
    CHECK_STR(text, "hello world!");
    free(text);
    CHECK_INT(cdd_fs_read_all(p, 5, &text, &len), CDD_E_STATE);

    /* Missing files: lstat says none; opening says not found. */
    char *missing = join(d, "nope/x");
    CHECK_INT(cdd_fs_lstat(missing, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    CHECK_INT(cdd_fs_open_read(missing, &rf), CDD_E_NOTFOUND);
    free(missing);
    free(p);
}

static void test_rename_replace(void)
{
    const char *d = fx_scratch("fsops-win32/rename");
    char *a = join(d, "a"), *b = join(d, "b");
    CHECK_INT(put(a, "new"), 0);
    CHECK_INT(put(b, "old"), 0);
    CHECK_INT(cdd_fs_rename(a, b), 0);
    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(a, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    char *text = NULL;
    CHECK_INT(cdd_fs_read_all(b, 100, &text, NULL), 0);
    CHECK_STR(text, "new");
    free(text);
    /* No leftover of write_atomic's temporary. */
    char *tmp = join(d, "b.tmp");
    CHECK_INT(cdd_fs_lstat(tmp, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    /* Windows never renames over a folder: said at once, not as "in use". */
    char *dir = join(d, "dir");
    CHECK_INT(cdd_fs_mkdir(dir), 0);
    CHECK_INT(put(a, "x"), 0);
    double t0 = cdd_monotonic();
    CHECK_INT(cdd_fs_rename(a, dir), CDD_E_IO);
    CHECK(strstr(cdd_last_error()->msg, "a folder has that name") != NULL);
    CHECK(cdd_monotonic() - t0 < 1.0);
    CHECK_INT(cdd_fs_unlink(a), 0);
    CHECK_INT(cdd_fs_rmdir(dir), 0);
    free(dir);
    /* A read-only file is removed as POSIX unlink would. */
    wchar_t *wb = cdd_w_path(b);
    CHECK(SetFileAttributesW(wb, FILE_ATTRIBUTE_READONLY));
    CHECK_INT(cdd_fs_unlink(b), 0);
    CHECK_INT(cdd_fs_lstat(b, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    free(wb);
    free(tmp);
    free(a);
    free(b);
}

struct names {
    char *v[16];
    int n;
};

static int collect(void *ud, const char *name)
{
    struct names *s = ud;
    if (s->n < 16)
        s->v[s->n++] = _strdup(name);
    return 0;
}

static int has(const struct names *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->v[i], name) == 0)
            return 1;
    return 0;
}

/* Non-ASCII names survive the trip to UTF-16 and back, and a path far
 * beyond MAX_PATH works through the \\?\ form. */
static void test_unicode_and_long_paths(void)
{
    const char *d = fx_scratch("fsops-win32/unicode");
    const char *uname = "Gr\xc3\xbc\xc3\x9f" "e \xe6\x97\xa5\xe6\x9c\xac "
                        "\xd0\xaf\xe2\x9c\x93"; /* "Grüße 日本 Я✓" */
    char *u = join(d, uname);
    CHECK_INT(cdd_fs_mkdir(u), 0);
    char *f = join(u, "cudnn.h");
    CHECK_INT(put(f, "x"), 0);
    struct names s = {{0}, 0};
    CHECK_INT(cdd_fs_list(d, collect, &s), 0);
    CHECK_INT(s.n, 1);
    CHECK(has(&s, uname));
    for (int i = 0; i < s.n; i++)
        free(s.v[i]);

    /* The same folder seen by Windows itself. */
    wchar_t *w = cdd_w_path(f);
    CHECK(w && wcsstr(w, L"Gr\u00fc\u00dfe \u65e5\u672c \u042f\u2713") != NULL);
    CHECK(GetFileAttributesW(w) != INVALID_FILE_ATTRIBUTES);
    free(w);

    char *real = NULL;
    CHECK_INT(cdd_fs_realpath(f, &real), 0);
    CHECK_MSG(real && strstr(real, uname) && !strchr(real, '\\') &&
                  real[1] == ':',
              "%s", real ? real : "(null)");
    free(real);

    /* ~400 characters deep. */
    char deep[2048];
    snprintf(deep, sizeof deep, "%s", d);
    for (int i = 0; i < 8; i++)
        strncat(deep, "/a-rather-long-folder-name-to-pass-max-path-x",
                sizeof deep - strlen(deep) - 1);
    CHECK(strlen(deep) > 400);
    char *created = NULL;
    CHECK_INT(cdd_fs_mkdirs(deep, &created), 0);
    CHECK(created && strstr(created, "a-rather-long"));
    free(created);
    char *lf = join(deep, "cudnn_ops_infer64_8.dll");
    CHECK_INT(put(lf, "deep"), 0);
    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(lf, &st), 0);
    CHECK_INT(st.type, CDD_FT_FILE);
    uint8_t dg[CDD_SHA256_LEN];
    uint64_t size = 0;
    CHECK_INT(cdd_sha256_file(lf, dg, &size), 0);
    CHECK_INT(size, 4);
    /* Resolving it: Wine's GetFinalPathNameByHandleW fails with error 234
     * (ERROR_MORE_DATA) past MAX_PATH whatever buffer it is given, and the
     * uninstall's roll-back in such a tree stopped there. */
    char *lreal = NULL;
    CHECK_INT(cdd_fs_realpath(lf, &lreal), 0);
    CHECK_MSG(lreal && strlen(lreal) > 400 && !strchr(lreal, '\\') &&
                  lreal[1] == ':' &&
                  strstr(lreal, "/cudnn_ops_infer64_8.dll") != NULL,
              "%s", lreal ? lreal : cdd_last_error()->msg);
    free(lreal);
    struct cdd_dir *dd = NULL;
    char *dreal = NULL;
    CHECK_INT(cdd_dir_open_path(deep, &dd, &dreal), 0);
    CHECK(dreal && strlen(dreal) > 400);
    cdd_dir_close(dd);
    free(dreal);
    CHECK_INT(cdd_fs_remove_tree(d), 0);
    CHECK_INT(cdd_fs_lstat(d, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    free(lf);
    free(f);
    free(u);
}

static void test_mkdirs_and_rmdir(void)
{
    const char *d = fx_scratch("fsops-win32/dirs");
    char *p = join(d, "bin/x64/deeper");
    char *created = NULL;
    CHECK_INT(cdd_fs_mkdirs(p, &created), 0);
    CHECK(created && strstr(created, "/bin\n") && strstr(created, "/deeper\n"));
    free(created);
    CHECK_INT(cdd_fs_mkdirs(p, &created), 0);
    CHECK(created == NULL);
    CHECK_INT(cdd_fs_mkdir(p), 0); /* existing: fine */
    char *file = join(d, "bin/x64/f");
    CHECK_INT(put(file, "x"), 0);
    char *under_file = join(file, "sub");
    CHECK(cdd_fs_mkdirs(under_file, NULL) != 0);
    char *x64 = join(d, "bin/x64");
    CHECK(cdd_fs_rmdir(x64) != 0); /* not empty */
    CHECK_INT(cdd_fs_rmdir(p), 0);
    CHECK_INT(cdd_fs_unlink(file), 0);
    CHECK_INT(cdd_fs_rmdir(x64), 0);
    free(x64);
    free(under_file);
    free(file);
    free(p);
}

static void test_lock(void)
{
    const char *d = fx_scratch("fsops-win32/lock");
    char *p = join(d, "lock");
    struct cdd_lock *l1 = NULL, *l2 = NULL;
    long holder = -1;
    CHECK_INT(cdd_lock_acquire(p, 0, NULL, &l1), 0);
    /* The holder's pid is readable while the lock is held (the locked byte
     * lies beyond the file's content). */
    char *text = NULL;
    CHECK_INT(cdd_fs_read_all(p, 100, &text, NULL), 0);
    CHECK(text && strtol(text, NULL, 10) == cdd_getpid());
    free(text);
    double t0 = cdd_monotonic();
    CHECK_INT(cdd_lock_acquire(p, 0.3, &holder, &l2), CDD_E_LOCKED);
    CHECK(cdd_monotonic() - t0 >= 0.25);
    CHECK_INT(holder, cdd_getpid());
    CHECK(strstr(cdd_last_error()->msg, "another cudnn-deploy (pid "));
    cdd_lock_release(l1);
    CHECK_INT(cdd_lock_acquire(p, 0, NULL, &l2), 0);
    cdd_lock_release(l2);
    free(p);
}

static void test_append_line(void)
{
    const char *d = fx_scratch("fsops-win32/append");
    char *p = join(d, "log.jsonl");
    CHECK_INT(cdd_fs_append_line(p, "{\"a\":1}"), 0);
    CHECK_INT(cdd_fs_append_line(p, "{\"b\":2}"), 0);
    char *text = NULL;
    CHECK_INT(cdd_fs_read_all(p, 100, &text, NULL), 0);
    CHECK_STR(text, "{\"a\":1}\n{\"b\":2}\n");
    free(text);
    free(p);
}

/* Symlinks need Developer Mode or elevation on Windows; either they work and
 * read back, or creating one fails with a clear error -- never silently. */
static void test_symlink(void)
{
    const char *d = fx_scratch("fsops-win32/links");
    char *t = join(d, "libcudnn.so.8.5.0"), *l = join(d, "libcudnn.so.8");
    CHECK_INT(put(t, "x"), 0);
    int r = cdd_fs_symlink("libcudnn.so.8.5.0", l);
    if (r == 0) {
        struct cdd_stat st;
        char buf[256];
        CHECK_INT(cdd_fs_lstat(l, &st), 0);
        CHECK_INT(st.type, CDD_FT_SYMLINK);
        CHECK_INT(cdd_fs_readlink(l, buf, sizeof buf), 0);
        CHECK_STR(buf, "libcudnn.so.8.5.0");
        CHECK_INT(cdd_fs_unlink(l), 0); /* the link, not its target */
        CHECK_INT(cdd_fs_lstat(t, &st), 0);
        CHECK_INT(st.type, CDD_FT_FILE);
    } else {
        CHECK(r == CDD_E_PERM || r == CDD_E_IO || r == CDD_E_NOTSUP);
        CHECK(cdd_last_error()->msg[0] != '\0');
    }
    free(t);
    free(l);
}

static void test_paths_and_time(void)
{
    char *abs = cdd_absolute_path("some/rel");
    CHECK_MSG(abs && abs[1] == ':' && abs[2] == '/' && !strchr(abs, '\\') &&
                  strstr(abs, "/some/rel"),
              "%s", abs ? abs : "(null)");
    free(abs);
    abs = cdd_absolute_path("C:\\x\\..\\y");
    CHECK_STR(abs, "C:/y");
    free(abs);
    CHECK(cdd_now() > 1.6e9);
    double t = cdd_monotonic();
    cdd_sleep_ms(20);
    CHECK(cdd_monotonic() - t >= 0.015);
    CHECK(cdd_getpid() == (long)GetCurrentProcessId());
}

static void hex_of(const char *s, size_t n, int repeat, char *hex)
{
    struct cdd_sha256 *h = NULL;
    uint8_t d[CDD_SHA256_LEN];
    CHECK_INT(cdd_sha256_new(&h), 0);
    for (int i = 0; i < repeat; i++)
        CHECK_INT(cdd_sha256_update(h, s, n), 0);
    CHECK_INT(cdd_sha256_final(h, d), 0);
    cdd_hex_encode(d, sizeof d, hex);
    /* Reset gives a fresh digest. */
    CHECK_INT(cdd_sha256_reset(h), 0);
    CHECK_INT(cdd_sha256_final(h, d), 0);
    char e[CDD_SHA256_HEX];
    cdd_hex_encode(d, sizeof d, e);
    CHECK_STR(e,
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    cdd_sha256_free(h);
}

static void test_sha256_cng(void)
{
    char hex[CDD_SHA256_HEX];
    hex_of("abc", 3, 1, hex);
    CHECK_STR(hex,
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    static char a[1000];
    memset(a, 'a', sizeof a);
    hex_of(a, sizeof a, 1000, hex); /* one million 'a' */
    CHECK_STR(hex,
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_MAIN(TEST(test_create_write_read), TEST(test_rename_replace),
          TEST(test_unicode_and_long_paths), TEST(test_mkdirs_and_rmdir),
          TEST(test_lock), TEST(test_append_line), TEST(test_symlink),
          TEST(test_paths_and_time), TEST(test_sha256_cng))
