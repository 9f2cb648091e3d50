/* Unit tests of the Win32 loader (loader_win32.c) on fake cuDNN DLLs that
 * the Windows suite cross-builds (tests/wine/fakedll/): loading by absolute
 * path, exported functions, the loader's 126/127/193 refusals translated and
 * the missing dependency named, the DLL search-order emulation and the
 * driver override, and a proven load (the bytes hashed first). Built only
 * for Windows; runs under Wine in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "loaddiag.h"
#include "cdd/loader.h"
#include "test.h"
#include "win32_int.h"

static char fake[1024], elsewhere[1024];

/* CMake hands us Unix paths under Wine; a Windows program sees Z:\... */
static int dir_from_env(const char *var, char *out, size_t len)
{
    const char *v = getenv(var);
    if (!v)
        return -1;
    snprintf(out, len, "%s%s", v[0] == '/' ? "Z:" : "", v);
    return 0;
}

static char *in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void test_load_good(void)
{
    char *p = in(fake, "cudnn64_8.dll");
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_lib_open(p, &l), 0);
    CHECK_STR(cdd_lib_path(l), p);
    typedef size_t (*version_fn)(void);
    version_fn f = (version_fn)cdd_lib_func(l, "cudnnGetVersion");
    CHECK(f != NULL);
    if (f)
        CHECK_INT(f(), 8500);
    CHECK(cdd_lib_sym(l, "cudnnGetVersion") != NULL);
    CHECK(cdd_lib_sym(l, "cudnnNoSuchFunction") == NULL);
    CHECK(cdd_lib_func(l, "cudnnNoSuchFunction") == NULL);
    cdd_lib_close(l);
    cdd_lib_close(NULL);
    free(p);
}

static void test_refusals(void)
{
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_lib_open("cudnn64_8.dll", &l), CDD_E_USAGE);
    CHECK_INT(cdd_lib_open("bin/cudnn64_8.dll", &l), CDD_E_USAGE);
    char *p = in(fake, "no_such_library.dll");
    CHECK_INT(cdd_lib_open(p, &l), CDD_E_NOTFOUND);
    CHECK(l == NULL);
    free(p);
}

/* The case users hit: the DLL is there, a DLL it imports is not. */
static void test_126_names_missing_dependency(void)
{
    char *p = in(fake, "cudnn_ops_infer64_8.dll");
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_lib_open_explained(p, &l), CDD_E_CHECK);
    const struct cdd_errinfo *e = cdd_last_error();
    CHECK_INT(e->os_err, 126);
    CHECK_MSG(strstr(e->msg, "depends on") &&
                  strstr(e->msg, "missing zlibwapi.dll (needed by "
                                 "cudnn_ops_infer64_8.dll)"),
              "%s", e->msg);
    CHECK(l == NULL);

    /* On PATH does not count: neither for LOAD_LIBRARY_SEARCH_* nor for
     * Python 3.8+; the message says where the copy is and why it is not
     * used. */
    char old_path[32768];
    DWORD n = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    char *np = malloc(strlen(elsewhere) + n + 2);
    sprintf(np, "%s;%s", elsewhere, n ? old_path : "");
    SetEnvironmentVariableA("PATH", np);
    CHECK_INT(cdd_lib_open_explained(p, &l), CDD_E_CHECK);
    CHECK_MSG(strstr(cdd_last_error()->msg, "a copy is on PATH at") &&
                  strstr(cdd_last_error()->msg, "zlibwapi.dll"),
              "%s", cdd_last_error()->msg);
    SetEnvironmentVariableA("PATH", n ? old_path : NULL);
    free(np);

    /* Beside the library, it is found: the same DLL then loads. */
    char *z = in(fake, "zlibwapi.dll"), *zsrc = in(elsewhere, "zlibwapi.dll");
    wchar_t *wz = cdd_w_path(z), *wsrc = cdd_w_path(zsrc);
    CHECK(CopyFileW(wsrc, wz, FALSE));
    CHECK_INT(cdd_lib_open(p, &l), 0);
    if (l) {
        typedef int (*check_fn)(void);
        check_fn f = (check_fn)cdd_lib_func(l, "cudnnOpsInferVersionCheck");
        CHECK(f && f() == 0);
    }
    cdd_lib_close(l);
    CHECK(DeleteFileW(wz));
    free(wz);
    free(wsrc);
    free(z);
    free(zsrc);
    free(p);
}

/* Wine's loader binds an import it cannot find to a stub that fails only
 * when called, so under Wine the 127 case loads; real Windows refuses it. */
static int under_wine(void)
{
    HMODULE nt = GetModuleHandleW(L"ntdll.dll");
    return nt && GetProcAddress(nt, "wine_get_version") != NULL;
}

static void test_127_and_193(void)
{
    struct cdd_lib *l = NULL;
    char *p = in(fake, "cudnn_cnn_infer64_8.dll");
    if (under_wine()) {
        CHECK_INT(cdd_lib_open(p, &l), 0);
        cdd_lib_close(l);
        l = NULL;
    } else {
        CHECK_INT(cdd_lib_open(p, &l), CDD_E_CHECK);
        CHECK_INT(cdd_last_error()->os_err, 127);
        CHECK_MSG(strstr(cdd_last_error()->msg, "function it imports"), "%s",
                  cdd_last_error()->msg);
    }
    free(p);

    /* Not a DLL at all: the loader says 193, we say what it is. */
    p = in(fake, "not_a_dll.dll");
    CHECK_INT(cdd_fs_write_atomic(p, "this is text, not a PE image\n", 29), 0);
    CHECK_INT(cdd_lib_open(p, &l), CDD_E_CHECK);
    CHECK_INT(cdd_last_error()->os_err, 193);
    CHECK_MSG(strstr(cdd_last_error()->msg, "architecture"), "%s",
              cdd_last_error()->msg);
    CHECK_INT(cdd_fs_unlink(p), 0);
    free(p);
}

/* Every copy in the loader's order, each file once; PATH comes last. */
static void test_search_order(void)
{
    char **v = NULL;
    size_t n = 0;
    char *shadow = in(elsewhere, "cudnn64_8.dll"), *src = in(fake, "cudnn64_8.dll");
    wchar_t *ws = cdd_w_path(shadow), *wsrc = cdd_w_path(src);
    CHECK(CopyFileW(wsrc, ws, FALSE));
    char old_path[32768];
    DWORD on = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    char np[4096];
    /* elsewhere first, fake twice (one copy, listed once). */
    snprintf(np, sizeof np, "%s;%s;%s", elsewhere, fake, fake);
    SetEnvironmentVariableA("PATH", np);
    CHECK_INT(cdd_lib_find_all("cudnn64_8.dll", &v, &n), 0);
    CHECK_INT(n, 2);
    if (n == 2) {
        CHECK_MSG(strstr(v[0], "fake-dlls-elsewhere/cudnn64_8.dll"), "%s", v[0]);
        CHECK_MSG(strstr(v[1], "fake-dlls/cudnn64_8.dll"), "%s", v[1]);
        CHECK(!strchr(v[0], '\\') && !strchr(v[1], '\\'));
    }
    cdd_lib_paths_free(v, n);
    /* Windows' own DLLs are found in System32, before PATH. */
    CHECK_INT(cdd_lib_find_all("kernel32.dll", &v, &n), 0);
    CHECK(n >= 1 && n > 0 && strstr(v[0], "ystem32/kernel32.dll"));
    cdd_lib_paths_free(v, n);
    CHECK_INT(cdd_lib_find_all("bin/x.dll", &v, &n), CDD_E_USAGE);
    SetEnvironmentVariableA("PATH", on ? old_path : NULL);
    DeleteFileW(ws);
    free(ws);
    free(wsrc);
    free(shadow);
    free(src);
}

/* A DLL mapped by a running program (here: ourselves) cannot be replaced
 * or deleted -- Windows says "access denied", not "sharing violation" -- but
 * may be renamed: the transaction moves it to the backup and puts the new
 * one in place. The refusal is reported as "in use", not as a permission
 * problem. */
static void test_replace_loaded_dll(void)
{
    char *dir = in(fake, "loaded"), *dll = in(dir, "cudnn64_8.dll");
    char *src = in(fake, "cudnn64_8.dll"), *newf = in(dir, "new.dll");
    char *moved = in(dir, "backup.dll");
    cdd_fs_remove_tree(dir);
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    wchar_t *wsrc = cdd_w_path(src), *wdll = cdd_w_path(dll);
    CHECK(CopyFileW(wsrc, wdll, FALSE));
    CHECK_INT(cdd_fs_write_atomic(newf, "new", 3), 0);
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_lib_open(dll, &l), 0);
    int r = cdd_fs_rename(newf, dll);
    fprintf(stderr, "    replace a loaded DLL -> %s: %s\n", cdd_err_name(r),
            cdd_last_error()->msg);
    CHECK_INT(r, CDD_E_BUSY);
    CHECK_MSG(strstr(cdd_last_error()->msg, "in use"), "%s",
              cdd_last_error()->msg);
    r = cdd_fs_unlink(dll);
    CHECK_INT(r, CDD_E_BUSY);
    /* Moving it aside works while it is loaded. */
    CHECK_INT(cdd_fs_rename(dll, moved), 0);
    CHECK_INT(cdd_fs_rename(newf, dll), 0);
    cdd_lib_close(l);
    CHECK_INT(cdd_fs_remove_tree(dir), 0);
    free(wsrc);
    free(wdll);
    free(moved);
    free(newf);
    free(src);
    free(dll);
    free(dir);
}

/* A step started afresh loads our proven copies again only when their
 * bytes still hash to what was proven (cdd_lib_open_proven). */
static void test_open_proven(void)
{
    char *p = in(fake, "cudnn64_8.dll");
    uint8_t sha[CDD_SHA256_LEN];
    uint64_t size = 0;
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_sha256_file(p, sha, &size), 0);
    CHECK_INT(cdd_lib_open_proven(p, sha, &l), 0);
    CHECK(l && cdd_lib_func(l, "cudnnGetVersion") != NULL);
    cdd_lib_close(l);
    l = NULL;
    sha[0] ^= 1;
    CHECK_INT(cdd_lib_open_proven(p, sha, &l), CDD_E_CHECK);
    CHECK(l == NULL);
    CHECK_MSG(strstr(cdd_last_error()->msg, "no longer the one proven"), "%s",
              cdd_last_error()->msg);
    cdd_clear_error();
    free(p);
}

static void test_driver_override(void)
{
    char *out = NULL;
    char *p = in(fake, "cudnn64_8.dll");
    SetEnvironmentVariableA("CUDNN_DEPLOY_DRIVER_LIB", p);
    CHECK_INT(cdd_driver_library_path(&out), 0);
    CHECK_STR(out, p);
    free(out);
    SetEnvironmentVariableA("CUDNN_DEPLOY_DRIVER_LIB", "nvcuda.dll");
    CHECK_INT(cdd_driver_library_path(&out), CDD_E_USAGE);
    SetEnvironmentVariableA("CUDNN_DEPLOY_DRIVER_LIB", NULL);
    /* Without an NVIDIA driver (Wine has none): not found, not a crash. */
    int r = cdd_driver_library_path(&out);
    CHECK(r == 0 || r == CDD_E_NOTFOUND);
    free(out);
    free(p);
}

int main(int argc, char **argv)
{
    static const struct t_case cases[] = {
        TEST(test_load_good), TEST(test_refusals),
        TEST(test_126_names_missing_dependency), TEST(test_127_and_193),
        TEST(test_search_order), TEST(test_replace_loaded_dll),
        TEST(test_driver_override), TEST(test_open_proven)};
    if (dir_from_env("CDD_FAKE_DLLS", fake, sizeof fake) ||
        dir_from_env("CDD_FAKE_DLLS_ELSEWHERE", elsewhere, sizeof elsewhere)) {
        fprintf(stderr, "CDD_FAKE_DLLS / CDD_FAKE_DLLS_ELSEWHERE not set "
                        "(the Windows suite sets them)\n");
        return 1;
    }
    return t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
