/* Unit tests of the Windows error translation (error_win32.c), built only
 * for Windows and run under Wine in CI. What Wine cannot provoke -- a disk
 * that fills up (112), a protected folder that refuses a non-elevated user
 * (5), the loader's 126/127/193 for real NVIDIA DLLs -- is checked here at the
 * translation level: the GetLastError() value in, the CDD_E_* code and the
 * words the user reads out. A real sharing violation (32) is provoked too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "test.h"
#include "win32_int.h"

static void test_codes(void)
{
    CHECK_INT(cdd_win32_err_code(ERROR_FILE_NOT_FOUND), CDD_E_NOTFOUND);
    CHECK_INT(cdd_win32_err_code(ERROR_PATH_NOT_FOUND), CDD_E_NOTFOUND);
    CHECK_INT(cdd_win32_err_code(ERROR_INVALID_NAME), CDD_E_NOTFOUND);
    CHECK_INT(cdd_win32_err_code(5), CDD_E_PERM);     /* access denied */
    CHECK_INT(cdd_win32_err_code(1314), CDD_E_PERM);  /* privilege not held */
    CHECK_INT(cdd_win32_err_code(740), CDD_E_PERM);   /* elevation required */
    CHECK_INT(cdd_win32_err_code(32), CDD_E_BUSY);    /* sharing violation */
    CHECK_INT(cdd_win32_err_code(33), CDD_E_BUSY);    /* lock violation */
    CHECK_INT(cdd_win32_err_code(1224), CDD_E_BUSY);  /* user-mapped file */
    CHECK_INT(cdd_win32_err_code(112), CDD_E_NOSPC);  /* disk full */
    CHECK_INT(cdd_win32_err_code(39), CDD_E_NOSPC);   /* handle disk full */
    CHECK_INT(cdd_win32_err_code(1295), CDD_E_NOSPC); /* quota */
    CHECK_INT(cdd_win32_err_code(8), CDD_E_NOMEM);
    CHECK_INT(cdd_win32_err_code(ERROR_CRC), CDD_E_IO);
    CHECK_INT(cdd_win32_err_code(126), CDD_E_IO); /* loader errors: own text */
}

/* The exit codes users and CI see for these (README: 4 = environment). */
static void test_exit_codes(void)
{
    CHECK_INT(cdd_err_exit_code(cdd_win32_err_code(112)), 4);
    CHECK_INT(cdd_err_exit_code(cdd_win32_err_code(32)), 4);
    CHECK_INT(cdd_err_exit_code(cdd_win32_err_code(5)), 4);
}

static void test_load_meanings(void)
{
    const char *m = cdd_win32_load_error_meaning(126);
    CHECK(m && strstr(m, "depends on") && strstr(m, "126"));
    m = cdd_win32_load_error_meaning(127);
    CHECK(m && strstr(m, "function") && strstr(m, "127"));
    m = cdd_win32_load_error_meaning(193);
    CHECK(m && strstr(m, "architecture") && strstr(m, "193"));
    m = cdd_win32_load_error_meaning(1114);
    CHECK(m && strstr(m, "initialisation"));
    CHECK(cdd_win32_load_error_meaning(0) == NULL);
    CHECK(cdd_win32_load_error_meaning(5) == NULL);
}

static void test_fail_and_format(void)
{
    char buf[2048];
    int r = cdd_fail_win32("C:/x/bin/cudnn64_8.dll", 112, "cannot write");
    CHECK_INT(r, CDD_E_NOSPC);
    CHECK_INT(cdd_last_error()->os_err, 112);
    cdd_error_format(buf, sizeof buf);
    CHECK_MSG(strstr(buf, "C:/x/bin/cudnn64_8.dll: cannot write (") &&
                  strstr(buf, "error 112)"),
              "%s", buf);
    /* The system's words, never strerror() of a Windows number. */
    CHECK_MSG(!strstr(buf, "Unknown error"), "%s", buf);

    /* An errno from portable code still gets strerror()'s words. */
    cdd_fail_errno("a.zip", 2, "cannot open archive");
    cdd_error_format(buf, sizeof buf);
    CHECK_MSG(strstr(buf, "a.zip: cannot open archive (") &&
                  !strstr(buf, "error 2)"),
              "%s", buf);

    char os[256];
    cdd_os_error_text(5, os, sizeof os);
    CHECK_MSG(strstr(os, "error 5") && strlen(os) > 9, "%s", os);
    CHECK_MSG(os[0] != '\0' && !strchr(os, '\r') && !strchr(os, '\n'), "%s",
              os);
    cdd_os_error_text(0x7ffffff0, os, sizeof os); /* no such message */
    CHECK_STR(os, "Windows error 2147483632");
}

static void set_env(const wchar_t *name, const wchar_t *value)
{
    SetEnvironmentVariableW(name, value);
}

static void test_elevation_advice(void)
{
    set_env(L"ProgramFiles", L"C:\\Program Files");
    set_env(L"ProgramW6432", L"C:\\Program Files");
    const char *in_pf =
        "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.6/bin";
    CHECK(cdd_win32_path_is_protected(in_pf));
    CHECK(cdd_win32_path_is_protected("c:\\PROGRAM FILES\\x")); /* any case */
    CHECK(cdd_win32_path_is_protected("//?/C:/Program Files/x"));
    CHECK(!cdd_win32_path_is_protected("C:/Program Files (x86)x/y"));
    CHECK(!cdd_win32_path_is_protected("C:/Program FilesX/y"));
    CHECK(!cdd_win32_path_is_protected("D:/cuda/v11.6"));

    const char *a = cdd_win32_perm_advice(in_pf, 5, 0);
    CHECK(a && strstr(a, "elevated prompt") && strstr(a, "administrator"));
    CHECK(cdd_win32_perm_advice(in_pf, 5, 1) == NULL);   /* elevated */
    CHECK(cdd_win32_perm_advice(in_pf, 1314, 0) != NULL);
    CHECK(cdd_win32_perm_advice(in_pf, 32, 0) == NULL);  /* in use, not perm */
    CHECK(cdd_win32_perm_advice(in_pf, 19, 0) == NULL);  /* write-protected */
    CHECK(cdd_win32_perm_advice("D:/cuda/v11.6", 5, 0) == NULL);

    /* Through cdd_fail_win32: PERM either way, advice only when it helps. */
    int r = cdd_fail_win32(in_pf, 5, "cannot create folder");
    CHECK_INT(r, CDD_E_PERM);
    if (!cdd_is_elevated())
        CHECK_MSG(strstr(cdd_last_error()->msg, "elevated prompt"), "%s",
                  cdd_last_error()->msg);
    r = cdd_fail_win32("D:/cuda/v11.6", 5, "cannot create folder");
    CHECK_INT(r, CDD_E_PERM);
    CHECK_STR(cdd_last_error()->msg, "cannot create folder");
}

/* The default locations follow the environment the CUDA installer and
 * Windows set. */
static void test_defaults(void)
{
    set_env(L"ProgramW6432", L"D:\\Prog Files");
    char *root = cdd_default_cuda_root(11, 6);
    CHECK_STR(root, "D:\\Prog Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.6");
    free(root);
    set_env(L"ProgramW6432", NULL);
    set_env(L"ProgramFiles", L"C:\\Program Files");
    root = cdd_default_cuda_root(12, 1);
    CHECK_STR(root, "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.1");
    free(root);

    set_env(L"LOCALAPPDATA", L"C:\\Users\\J\u00f6rg\\AppData\\Local");
    char *cache = cdd_default_cache_dir();
    CHECK_STR(cache, "C:/Users/J\xc3\xb6rg/AppData/Local/cudnn-deploy/cache");
    free(cache);

    set_env(L"CDD_TEST_VAR", L"Gr\u00fc\u00dfe \u65e5\u672c");
    CHECK_STR(cdd_getenv("CDD_TEST_VAR"),
              "Gr\xc3\xbc\xc3\x9f" "e \xe6\x97\xa5\xe6\x9c\xac");
    set_env(L"CDD_TEST_VAR", L"");
    CHECK(cdd_getenv("CDD_TEST_VAR") == NULL);
}

/* UTF-8 <-> UTF-16 at the boundary is strict both ways. */
static void test_conversions(void)
{
    wchar_t *w = cdd_w_from_utf8("caf\xc3\xa9", NULL);
    CHECK(w && wcscmp(w, L"caf\u00e9") == 0);
    free(w);
    CHECK(cdd_w_from_utf8("bad \xff name", "x") == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_USAGE);
    CHECK(cdd_w_from_utf8("\xc0\xaf", "x") == NULL); /* overlong '/' */

    wchar_t lone[] = {L'a', 0xD800, L'b', 0};
    CHECK(cdd_utf8_from_w(lone, -1) == NULL);

    w = cdd_w_path("C:/a/b/../c/");
    CHECK(w && wcscmp(w, L"\\\\?\\C:\\a\\c") == 0);
    free(w);
    w = cdd_w_path("//server/share/d");
    CHECK(w && wcscmp(w, L"\\\\?\\UNC\\server\\share\\d") == 0);
    free(w);
    char *s = cdd_path_from_w(L"\\\\?\\UNC\\server\\share\\d");
    CHECK_STR(s, "//server/share/d");
    free(s);
    s = cdd_path_from_w(L"\\\\?\\C:\\Program Files\\x");
    CHECK_STR(s, "C:/Program Files/x");
    free(s);
}

/* A real sharing violation: a program holds the destination open without
 * FILE_SHARE_DELETE. The rename is retried (about 2 s) and then reported
 * as in use, naming the file. */
static void test_in_use(void)
{
    char dir[1024], a[1100], b[1100];
    const char *tmp = getenv("CDD_TEST_TMP");
    snprintf(dir, sizeof dir, "%s%s/errors-win32", tmp && tmp[0] == '/' ? "Z:" : "",
             tmp ? tmp : "C:/cdd-test-tmp");
    cdd_fs_remove_tree(dir);
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(a, sizeof a, "%s/new.dll", dir);
    snprintf(b, sizeof b, "%s/cudnn64_8.dll", dir);
    CHECK_INT(cdd_fs_write_atomic(a, "new", 3), 0);
    CHECK_INT(cdd_fs_write_atomic(b, "old", 3), 0);
    wchar_t *wb = cdd_w_path(b);
    HANDLE h = CreateFileW(wb, GENERIC_READ, FILE_SHARE_READ, NULL,
                           OPEN_EXISTING, 0, NULL);
    CHECK(h != INVALID_HANDLE_VALUE);
    double t0 = cdd_monotonic();
    int r = cdd_fs_rename(a, b);
    double waited = cdd_monotonic() - t0;
    CHECK_INT(r, CDD_E_BUSY);
    CHECK_MSG(strstr(cdd_last_error()->msg, "in use"), "%s",
              cdd_last_error()->msg);
    CHECK_STR(cdd_last_error()->path, b);
    CHECK_MSG(waited >= 1.5, "gave up after %.2f s", waited);
    r = cdd_fs_unlink(b);
    CHECK_INT(r, CDD_E_BUSY);
    CloseHandle(h);
    /* Released: the same rename now succeeds and replaces. */
    CHECK_INT(cdd_fs_rename(a, b), 0);
    char *text = NULL;
    size_t len = 0;
    CHECK_INT(cdd_fs_read_all(b, 100, &text, &len), 0);
    CHECK(text && len == 3 && memcmp(text, "new", 3) == 0);
    free(text);
    free(wb);
    CHECK_INT(cdd_fs_remove_tree(dir), 0);
}

TEST_MAIN(TEST(test_codes), TEST(test_exit_codes), TEST(test_load_meanings),
          TEST(test_fail_and_format), TEST(test_elevation_advice),
          TEST(test_defaults), TEST(test_conversions), TEST(test_in_use))
