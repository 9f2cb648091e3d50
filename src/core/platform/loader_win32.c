/* Library loading on Windows (see loader.h): LoadLibraryExW by absolute path
 * only, and the Windows DLL search order emulated so that verify and doctor
 * can say which copy a program would pick and which copies it shadows.
 *
 * Loading: LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS
 * resolves the library's own dependencies from its folder, the application
 * folder and System32 -- never the current folder or PATH, which is also how
 * Python 3.8+ loads extension modules' DLLs (PyTorch). When the loader says
 * no, its number is translated (126: a dependency is missing, 127: an entry
 * point is missing, 193: wrong architecture); naming the DLL that is missing
 * for 126 is verify's (loaddiag.c, by import tables), from where this file
 * says a dependency resolves (cdd_lib_dep_find, cdd_lib_find_on_path).
 *
 * Search order emulated for a bare DLL name (LoadLibrary without flags, the
 * standard search; KnownDLLs and API sets aside, which cuDNN never is):
 *   SafeDllSearchMode on (the default):  application folder, System32,
 *     the 16-bit System folder, the Windows folder, current folder, PATH;
 *   SafeDllSearchMode off (registry value 0): the current folder moves to
 *     second place, right after the application folder. */
#include "cdd/loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/hash.h"
#include "cdd/strbuf.h"
#include "win32_int.h"

#include <aclapi.h>
#include <bcrypt.h>
#include <sddl.h>

#define DRIVER_DLL "nvcuda.dll"
#define DRIVER_ENV "CUDNN_DEPLOY_DRIVER_LIB"

struct cdd_lib {
    HMODULE h;
    char *path;
};

static int is_sep(char c)
{
    return c == '/' || c == '\\';
}

static int is_absolute(const char *p)
{
    if (!p)
        return 0;
    if (((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) &&
        p[1] == ':' && is_sep(p[2]))
        return 1;
    return is_sep(p[0]) && is_sep(p[1]); /* UNC or \\?\ */
}

/* The form LoadLibraryExW gets: plain backslashed absolute path when it
 * fits MAX_PATH (the loader's support of \\?\ varies across versions), the
 * long form otherwise. */
static wchar_t *load_path(const char *abs_path)
{
    wchar_t *w = cdd_w_path(abs_path);
    if (!w || wcslen(w) >= MAX_PATH + 4 || wcsncmp(w, L"\\\\?\\", 4) != 0)
        return w;
    if (wcsncmp(w, L"\\\\?\\UNC\\", 8) == 0) {
        memmove(w + 2, w + 8, (wcslen(w + 8) + 1) * sizeof *w);
        return w; /* \\server\share\... */
    }
    memmove(w, w + 4, (wcslen(w + 4) + 1) * sizeof *w);
    return w;
}

/* ---- search order ------------------------------------------------------- */

struct dirs {
    char *v[8];
    size_t n;
};

static void dirs_add_w(struct dirs *d, const wchar_t *w)
{
    if (d->n < sizeof d->v / sizeof d->v[0] && w && *w) {
        char *s = cdd_path_from_w(w);
        if (s)
            d->v[d->n++] = s;
        else
            cdd_clear_error();
    }
}

static void dirs_free(struct dirs *d)
{
    for (size_t i = 0; i < d->n; i++)
        free(d->v[i]);
    d->n = 0;
}

static int safe_search_mode(void)
{
    DWORD v = 1, n = sizeof v;
    /* Absent means on (the default since Windows XP SP2). */
    if (RegGetValueW(HKEY_LOCAL_MACHINE,
                     L"System\\CurrentControlSet\\Control\\Session Manager",
                     L"SafeDllSearchMode", RRF_RT_REG_DWORD, NULL, &v,
                     &n) != ERROR_SUCCESS)
        return 1;
    return v != 0;
}

/* The folders before PATH, in the loader's order. */
/* The current folder, as long as it is (long-path aware), into d. */
static void add_cwd(struct dirs *d)
{
    DWORD need = GetCurrentDirectoryW(0, NULL);
    wchar_t *cwd = need ? malloc((size_t)need * sizeof *cwd) : NULL;
    DWORD n = cwd ? GetCurrentDirectoryW(need, cwd) : 0;
    if (n > 0 && n < need)
        dirs_add_w(d, cwd);
    free(cwd);
}

static void fixed_dirs(struct dirs *d, int with_cwd)
{
    wchar_t buf[MAX_PATH + 1]; /* fixed: the system folders (< MAX_PATH) */
    wchar_t *exe = NULL;
    DWORD n;
    /* The application folder: our own executable's (the program that would
     * load cuDNN -- python.exe, say -- has its own; verify says so). */
    for (DWORD cap = MAX_PATH; cap <= 32768; cap *= 2) {
        free(exe);
        exe = malloc(cap * sizeof *exe);
        if (!exe)
            break;
        n = GetModuleFileNameW(NULL, exe, cap);
        if (n > 0 && n < cap) {
            wchar_t *s = wcsrchr(exe, L'\\');
            if (s)
                *s = L'\0';
            dirs_add_w(d, exe);
            break;
        }
    }
    free(exe);
    int safe = safe_search_mode();
    if (with_cwd && !safe)
        add_cwd(d);
    if ((n = GetSystemDirectoryW(buf, MAX_PATH)) > 0 && n < MAX_PATH)
        dirs_add_w(d, buf);
    if ((n = GetWindowsDirectoryW(buf, MAX_PATH - 8)) > 0 && n < MAX_PATH - 8) {
        wchar_t sys16[MAX_PATH + 1]; /* fixed: the Windows folder + System */
        wcscpy(sys16, buf);
        wcscat(sys16, L"\\System");
        dirs_add_w(d, sys16);
        dirs_add_w(d, buf);
    }
    if (with_cwd && safe)
        add_cwd(d);
}

struct found {
    char **v;
    size_t n, cap, id_cap;
    BY_HANDLE_FILE_INFORMATION *id;
    int first_only;
};

/* A regular file (after links), identified by volume and file index so that
 * one file reached through two folders is listed once. */
static int file_id(const char *path, BY_HANDLE_FILE_INFORMATION *bi)
{
    wchar_t *w = cdd_w_path(path);
    if (!w) {
        cdd_clear_error();
        return 0;
    }
    HANDLE h = CreateFileW(w, FILE_READ_ATTRIBUTES,
                           FILE_SHARE_READ | FILE_SHARE_WRITE |
                               FILE_SHARE_DELETE,
                           NULL, OPEN_EXISTING, 0, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return 0;
    int ok = GetFileInformationByHandle(h, bi) &&
             !(bi->dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY);
    CloseHandle(h);
    return ok;
}

static int consider(struct found *f, const char *dir, const char *name)
{
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    BY_HANDLE_FILE_INFORMATION bi;
    if (!p)
        return CDD_E_NOMEM;
    snprintf(p, len, "%s%s%s", dir,
             dir[0] && is_sep(dir[strlen(dir) - 1]) ? "" : "/", name);
    if (!file_id(p, &bi)) {
        free(p);
        return 0;
    }
    for (size_t i = 0; i < f->n; i++)
        if (f->id[i].dwVolumeSerialNumber == bi.dwVolumeSerialNumber &&
            f->id[i].nFileIndexHigh == bi.nFileIndexHigh &&
            f->id[i].nFileIndexLow == bi.nFileIndexLow) {
            free(p);
            return 0;
        }
    int r = CDD_GROW(f->v, &f->cap, f->n + 1, CDD_LIB_COPIES_MAX, "copies");
    if (!r)
        r = CDD_GROW(f->id, &f->id_cap, f->n + 1, CDD_LIB_COPIES_MAX,
                     "copies");
    if (r) {
        free(p);
        return r;
    }
    /* The core's own path style: '/' separators throughout. */
    for (char *s = p; *s; s++)
        if (*s == '\\')
            *s = '/';
    f->v[f->n] = p;
    f->id[f->n] = bi;
    f->n++;
    return 0;
}

static int done(const struct found *f)
{
    return f->first_only && f->n > 0;
}

static int search_path_var(struct found *f, const char *name)
{
    const char *path = cdd_getenv("PATH");
    if (!path)
        return 0;
    for (const char *p = path;;) {
        size_t len = strcspn(p, ";");
        if (len > 0) {
            char *dir = malloc(len + 1);
            if (!dir)
                return CDD_E_NOMEM;
            memcpy(dir, p, len);
            dir[len] = '\0';
            /* "C:\Program Files\x" may be quoted in PATH; the loader strips
             * nothing, but users write it and mean the folder. */
            if (len >= 2 && dir[0] == '"' && dir[len - 1] == '"') {
                memmove(dir, dir + 1, len - 2);
                dir[len - 2] = '\0';
            }
            char *abs = dir[0] ? cdd_absolute_path(dir) : NULL;
            int r = abs ? consider(f, abs, name) : 0;
            free(abs);
            free(dir);
            cdd_clear_error();
            if (r || done(f))
                return r;
        }
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int search(const char *name, int first_only, char ***paths, size_t *n)
{
    struct found f = {0};
    struct dirs d = {{0}, 0};
    int r = 0;
    f.first_only = first_only;
    *paths = NULL;
    *n = 0;
    if (!name || !*name || strchr(name, '/') || strchr(name, '\\') ||
        strchr(name, ':'))
        return cdd_fail(CDD_E_USAGE, name, 0,
                        "a library name without folders is expected");
    fixed_dirs(&d, 1);
    for (size_t i = 0; !r && !done(&f) && i < d.n; i++)
        r = consider(&f, d.v[i], name);
    dirs_free(&d);
    if (!r && !done(&f))
        r = search_path_var(&f, name);
    free(f.id);
    if (r) {
        cdd_lib_paths_free(f.v, f.n);
        return cdd_lib_search_fail(r, name);
    }
    *paths = f.v;
    *n = f.n;
    return 0;
}

int cdd_lib_find_all(const char *soname, char ***paths, size_t *n)
{
    return search(soname, 0, paths, n);
}

int cdd_driver_library_path(char **out)
{
    *out = NULL;
    const char *over = cdd_getenv(DRIVER_ENV);
    if (over) {
        BY_HANDLE_FILE_INFORMATION bi;
        if (!is_absolute(over))
            return cdd_fail(CDD_E_USAGE, over, 0,
                            DRIVER_ENV " must be an absolute path");
        if (!file_id(over, &bi))
            return cdd_fail(CDD_E_NOTFOUND, over, 0,
                            "no driver library here (named by " DRIVER_ENV
                            ")");
        if (!(*out = cdd_strdup(over)))
            return cdd_fail(CDD_E_NOMEM, over, 0, NULL);
        return 0;
    }
    char **paths = NULL;
    size_t n = 0;
    int r = search(DRIVER_DLL, 1, &paths, &n);
    if (r)
        return r;
    if (n == 0) {
        cdd_lib_paths_free(paths, n);
        return cdd_fail(CDD_E_NOTFOUND, DRIVER_DLL, 0,
                        "no NVIDIA driver: nvcuda.dll is not in System32, "
                        "the Windows folder or on PATH");
    }
    *out = paths[0];
    paths[0] = NULL;
    cdd_lib_paths_free(paths, n);
    return 0;
}

/* ---- where a dependency resolves (verify's 126 diagnosis) --------------- */

/* The folders LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | _DEFAULT_DIRS search for
 * abs_path's imports: its own folder, the application folder, System32 (last). */
static void dep_dirs(const char *abs_path, struct dirs *where)
{
    char *dir = cdd_strdup(abs_path);
    if (dir) {
        char *s = strrchr(dir, '/');
        char *t = strrchr(dir, '\\');
        if (t > s)
            s = t;
        if (s)
            *s = '\0';
        where->v[where->n++] = dir;
    }
    struct dirs d = {{0}, 0};
    fixed_dirs(&d, 0);
    if (d.n > 0) {
        where->v[where->n++] = d.v[0];
        d.v[0] = NULL;
    }
    if (d.n > 1) {
        where->v[where->n++] = d.v[1];
        d.v[1] = NULL;
    }
    dirs_free(&d);
}

int cdd_lib_dep_find(const char *abs_path, const char *name, char **out,
                     int *in_system)
{
    struct dirs where = {{0}, 0};
    struct found f = {0};
    int r = 0;
    *out = NULL;
    *in_system = 0;
    f.first_only = 1;
    dep_dirs(abs_path, &where);
    for (size_t i = 0; i < where.n && f.n == 0; i++)
        if ((r = consider(&f, where.v[i], name)) != 0)
            break;
    free(f.id);
    if (f.n) {
        *out = f.v[0];
        /* Windows' own DLLs resolve their own imports. */
        *in_system = where.n >= 2 &&
                     _strnicmp(*out, where.v[where.n - 1],
                               strlen(where.v[where.n - 1])) == 0;
    }
    free(f.v);
    dirs_free(&where);
    return r ? cdd_lib_search_fail(r, name) : 0;
}

int cdd_lib_find_on_path(const char *name, char **out)
{
    struct found f = {0};
    f.first_only = 1;
    int r = search_path_var(&f, name);
    free(f.id);
    *out = f.n ? f.v[0] : NULL;
    free(f.v);
    return r ? cdd_lib_search_fail(r, name) : 0;
}

/* ---- loading ------------------------------------------------------------ */

int cdd_lib_open(const char *abs_path, struct cdd_lib **out)
{
    struct cdd_lib *l = NULL;
    *out = NULL;
    if (!is_absolute(abs_path))
        return cdd_fail(CDD_E_USAGE, abs_path, 0,
                        "refusing to load a library by a relative or bare "
                        "name: an absolute path is required");
    BY_HANDLE_FILE_INFORMATION bi;
    if (!file_id(abs_path, &bi))
        return cdd_fail(CDD_E_NOTFOUND, abs_path, ERROR_FILE_NOT_FOUND,
                        "no such library");
    wchar_t *w = load_path(abs_path);
    if (!w)
        return cdd_last_error()->code;
    l = calloc(1, sizeof *l);
    if (!l || !(l->path = cdd_strdup(abs_path))) {
        free(l);
        free(w);
        return cdd_fail(CDD_E_NOMEM, abs_path, 0, NULL);
    }
    /* A DLL that fails must give an error code, never a dialog box. */
    DWORD old_mode = 0;
    SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX,
                       &old_mode);
    l->h = LoadLibraryExW(w, NULL,
                          LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR |
                              LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
    DWORD e = GetLastError();
    SetThreadErrorMode(old_mode, NULL);
    free(w);
    if (!l->h) {
        /* verify (loaddiag.c) adds why for 126 and 193, by import tables. */
        const char *meaning = cdd_win32_load_error_meaning(e);
        int r = cdd_fail(CDD_E_CHECK, abs_path, (int)e, "cannot load: %s",
                         meaning ? meaning : "the Windows loader refused it");
        free(l->path);
        free(l);
        return r;
    }
    *out = l;
    return 0;
}

void *cdd_lib_sym(struct cdd_lib *l, const char *name)
{
    if (!l || !l->h || !name)
        return NULL;
    FARPROC f = GetProcAddress(l->h, name);
    void *p;
    /* Windows guarantees code and data pointers have one representation;
     * copying it avoids the ISO C cast between them. */
    _Static_assert(sizeof f == sizeof p, "function and data pointers differ");
    memcpy(&p, &f, sizeof p);
    return p;
}

cdd_lib_fn cdd_lib_func(struct cdd_lib *l, const char *name)
{
    if (!l || !l->h || !name)
        return NULL;
    return (cdd_lib_fn)(void (*)(void))GetProcAddress(l->h, name);
}

const char *cdd_lib_path(const struct cdd_lib *l)
{
    return l ? l->path : NULL;
}

void cdd_lib_close(struct cdd_lib *l)
{
    if (!l)
        return;
    if (l->h)
        FreeLibrary(l->h);
    free(l->path);
    free(l);
}

/* Held open for reading only, sharing read alone: nobody may write, rename
 * or delete the file until the loader has mapped it, and what it maps is
 * what was hashed. */
int cdd_lib_open_proven(const char *abs_path,
                        const uint8_t sha[CDD_SHA256_LEN],
                        struct cdd_lib **out)
{
    *out = NULL;
    wchar_t *w = cdd_w_path(abs_path);
    if (!w)
        return cdd_last_error()->code;
    HANDLE h = CreateFileW(w, GENERIC_READ, FILE_SHARE_READ, NULL,
                           OPEN_EXISTING, FILE_FLAG_SEQUENTIAL_SCAN, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return cdd_fail_win32(abs_path, GetLastError(),
                              "cannot open the library to prove its bytes");
    struct cdd_sha256 *hs = NULL;
    enum { CHUNK = 256 * 1024 };
    unsigned char *buf = malloc(CHUNK);
    uint8_t got[CDD_SHA256_LEN];
    int r = buf ? cdd_sha256_new(&hs) : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    while (!r) {
        DWORD n = 0;
        if (!ReadFile(h, buf, CHUNK, &n, NULL)) {
            r = cdd_fail_win32(abs_path, GetLastError(), "cannot read the "
                               "library to prove its bytes");
            break;
        }
        if (n == 0)
            break;
        r = cdd_sha256_update(hs, buf, n);
    }
    if (!r)
        r = cdd_sha256_final(hs, got);
    if (!r && memcmp(got, sha, CDD_SHA256_LEN) != 0)
        r = cdd_fail(CDD_E_CHECK, abs_path, 0, "its sha256 is no longer the "
                     "one proven: not loaded");
    if (!r)
        r = cdd_lib_open(abs_path, out);
    cdd_sha256_free(hs);
    free(buf);
    CloseHandle(h);
    return r;
}

/* ---- proven copies: the private folder -------------------------------- */

/* Owner, SYSTEM and Administrators: full control, inherited by the copies;
 * "P": the temporary folder's own ACEs are not inherited. */
#define PRIVATE_SDDL L"D:P(A;OICI;FA;;;OW)(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"

int cdd_lib_private_dir(char **out)
{
    wchar_t tmp[MAX_PATH + 1]; /* fixed: GetTempPathW's documented bound */
    *out = NULL;
    DWORD n = GetTempPathW(MAX_PATH + 1, tmp);
    if (n == 0 || n > MAX_PATH)
        return cdd_fail_win32(NULL, GetLastError(),
                              "cannot find the temporary folder");
    PSECURITY_DESCRIPTOR sd = NULL;
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(
            PRIVATE_SDDL, SDDL_REVISION_1, &sd, NULL))
        return cdd_fail_win32(NULL, GetLastError(),
                              "cannot build the private folder's DACL");
    SECURITY_ATTRIBUTES sa = {sizeof sa, sd, FALSE};
    int r = 1; /* no outcome yet */
    for (int attempt = 0; attempt < 16 && r == 1; attempt++) {
        unsigned char rnd[8]; /* fixed: random bytes */
        wchar_t name[MAX_PATH + 64]; /* fixed: the temp folder, random hex */
        if (BCryptGenRandom(NULL, rnd, sizeof rnd,
                            BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) {
            r = cdd_fail(CDD_E_IO, NULL, 0, "no random numbers");
            break;
        }
        _snwprintf(name, sizeof name / sizeof name[0] - 1,
                   L"%lscudnn-deploy-load.%02x%02x%02x%02x%02x%02x%02x%02x",
                   tmp, rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5],
                   rnd[6], rnd[7]);
        name[sizeof name / sizeof name[0] - 1] = L'\0';
        /* CreateDirectoryW fails on an existing name: a folder someone
         * prepared is never taken. */
        if (CreateDirectoryW(name, &sa)) {
            *out = cdd_path_from_w(name);
            r = *out ? 0 : cdd_last_error()->code;
        } else if (GetLastError() != ERROR_ALREADY_EXISTS) {
            r = cdd_fail_win32(NULL, GetLastError(), "cannot create a private "
                               "folder for the libraries to load");
        }
    }
    LocalFree(sd);
    if (r == 1)
        r = cdd_fail(CDD_E_IO, NULL, 0, "no free name for a private folder");
    return r;
}

/* ---- StrictModes: the folder's DACL ------------------------------------ */

/* Principals that are the system itself: what they may write is not a
 * less trusted account's. */
static int sid_trusted(PSID sid, PSID me)
{
    static const WELL_KNOWN_SID_TYPE ok[] = {
        WinLocalSystemSid, WinBuiltinAdministratorsSid, WinCreatorOwnerSid};
    if (me && EqualSid(sid, me))
        return 1;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (IsWellKnownSid(sid, ok[i]))
            return 1;
    /* NT SERVICE\TrustedInstaller: S-1-5-80-956008885-3418522649-
     * 1831038044-1853292631-2271478464. */
    wchar_t *s = NULL;
    int ti = 0;
    if (ConvertSidToStringSidW(sid, &s)) {
        ti = wcscmp(s, L"S-1-5-80-956008885-3418522649-1831038044-"
                       L"1853292631-2271478464") == 0;
        LocalFree(s);
    }
    return ti;
}

static PSID current_user_sid(void)
{
    HANDLE tok = NULL;
    DWORD len = 0;
    PSID sid = NULL;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return NULL;
    GetTokenInformation(tok, TokenUser, NULL, 0, &len);
    TOKEN_USER *tu = len ? malloc(len) : NULL;
    if (tu && GetTokenInformation(tok, TokenUser, tu, len, &len)) {
        DWORD n = GetLengthSid(tu->User.Sid);
        if ((sid = malloc(n)) != NULL && !CopySid(n, sid, tu->User.Sid)) {
            free(sid);
            sid = NULL;
        }
    }
    free(tu);
    CloseHandle(tok);
    return sid;
}

/* "DOMAIN\name (S-1-...)" or the SID alone; malloc'd UTF-8. */
static char *sid_describe(PSID sid, char **sid_text)
{
    wchar_t name[256], dom[256], *s = NULL; /* fixed: Windows' UNLEN, DNLEN */
    DWORD nl = 256, dl = 256;
    SID_NAME_USE use;
    char *out = NULL, *u_sid = NULL, *u_name = NULL;
    *sid_text = NULL;
    if (ConvertSidToStringSidW(sid, &s)) {
        u_sid = cdd_utf8_from_w(s, -1);
        LocalFree(s);
    }
    if (LookupAccountSidW(NULL, sid, name, &nl, dom, &dl, &use)) {
        wchar_t full[520]; /* fixed: a domain, a backslash, a name */
        _snwprintf(full, 519, L"%ls%ls%ls", dom, dom[0] ? L"\\" : L"", name);
        full[519] = L'\0';
        u_name = cdd_utf8_from_w(full, -1);
    }
    cdd_clear_error();
    size_t len = (u_name ? strlen(u_name) : 0) + (u_sid ? strlen(u_sid) : 0) +
                 8;
    if ((out = malloc(len)) != NULL)
        snprintf(out, len, "%s%s%s%s", u_name ? u_name : "",
                 u_name ? " (" : "", u_sid ? u_sid : "?", u_name ? ")" : "");
    free(u_name);
    *sid_text = u_sid;
    return out;
}

/* Is dir the Windows folder or below it (System32)? Whoever can write
 * there owns the machine already: trusted without reading its DACL (and
 * Wine's synthesized DACLs there say nothing about a real system). */
static int in_windows_dir(const char *dir)
{
    wchar_t buf[MAX_PATH + 1]; /* fixed: the Windows folder (< MAX_PATH) */
    UINT n = GetWindowsDirectoryW(buf, MAX_PATH);
    if (n == 0 || n >= MAX_PATH)
        return 0;
    char *win = cdd_utf8_from_w(buf, -1);
    if (!win) {
        cdd_clear_error();
        return 0;
    }
    size_t len = strlen(win);
    int in = 1;
    for (size_t i = 0; i < len && in; i++) {
        char a = dir[i], b = win[i];
        if (a == '\\')
            a = '/';
        if (b == '\\')
            b = '/';
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z')
            b = (char)(b - 'A' + 'a');
        in = a == b;
    }
    in = in && (dir[len] == '\0' || dir[len] == '/' || dir[len] == '\\');
    free(win);
    return in;
}

int cdd_lib_dir_trust(const char *dir, int leaf, char **problem,
                      struct cdd_fixes *fix)
{
    PSECURITY_DESCRIPTOR sd = NULL;
    PACL dacl = NULL;
    PSID owner = NULL, me = NULL;
    int r = 0;
    *problem = NULL;
    if (in_windows_dir(dir))
        return 0;
    me = current_user_sid();
    wchar_t *w = cdd_w_path(dir);
    if (!w) {
        free(me);
        return cdd_last_error()->code;
    }
    DWORD e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT,
                                    OWNER_SECURITY_INFORMATION |
                                        DACL_SECURITY_INFORMATION,
                                    &owner, NULL, &dacl, NULL, &sd);
    free(w);
    if (e != ERROR_SUCCESS) {
        char msg[64]; /* fixed: a constant text and a number */
        snprintf(msg, sizeof msg, "its permissions cannot be read (error %lu)",
                 (unsigned long)e);
        free(me);
        return (*problem = cdd_strdup(msg)) ? 0
                                         : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    /* Rights that let someone plant or swap code below dir. In the folder
     * that holds the library: adding a file or folder, deleting an entry,
     * the DACL or owner, and the folder itself (DELETE renames it). Above:
     * only what renames or replaces an entry, or the folder itself
     * (FILE_ADD_SUBDIRECTORY on C:\ for Users is normal and harmless). */
    ACCESS_MASK bad = FILE_DELETE_CHILD | WRITE_DAC | WRITE_OWNER | DELETE |
                      GENERIC_WRITE | GENERIC_ALL;
    if (leaf)
        bad |= FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY;
    struct cdd_sb buf;
    cdd_sb_init(&buf, CDD_TEXT_MAX, "permission problems");
    size_t used = 0;
    if (owner && !sid_trusted(owner, me)) {
        char *st = NULL, *who = sid_describe(owner, &st);
        if (cdd_sb_addf(&buf, "owned by %s", who ? who : "another account"))
            r = cdd_last_error()->code;
        used = cdd_sb_len(&buf);
        free(who);
        free(st);
        const char *argv[] = {"icacls", dir, "/setowner", "*S-1-5-32-544",
                              NULL};
        if (fix && !r)
            r = cdd_fixes_run(fix, CDD_FIX_SYSTEM, argv);
    }
    if (!dacl) {
        /* A NULL DACL grants everyone everything. */
        if (cdd_sb_addf(&buf, "%sno DACL: every account may write",
                        used ? ", " : ""))
            r = cdd_last_error()->code;
        used = cdd_sb_len(&buf);
    }
    for (DWORD i = 0; dacl && i < dacl->AceCount; i++) {
        ACE_HEADER *h = NULL;
        if (!GetAce(dacl, i, (void **)&h) ||
            h->AceType != ACCESS_ALLOWED_ACE_TYPE ||
            (h->AceFlags & INHERIT_ONLY_ACE))
            continue;
        ACCESS_ALLOWED_ACE *a = (ACCESS_ALLOWED_ACE *)h;
        PSID sid = (PSID)&a->SidStart;
        if (!(a->Mask & bad) || sid_trusted(sid, me))
            continue;
        char *st = NULL, *who = sid_describe(sid, &st);
        if (cdd_sb_addf(&buf, "%s%s may write (access mask 0x%lx)",
                        used ? ", " : "", who ? who : "an account",
                        (unsigned long)a->Mask) && !r)
            r = cdd_last_error()->code;
        used = cdd_sb_len(&buf);
        if (fix && !r && st) {
            /* Inherited ACEs cannot be removed: copy them first. */
            char *grant = cdd_aprintf(CDD_TEXT_MAX, "SID", "*%s", st);
            const char *inh[] = {"icacls", dir, "/inheritance:d", NULL};
            const char *rm[] = {"icacls", dir, "/remove:g", grant, NULL};
            if (!grant)
                r = cdd_last_error()->code;
            if (!r && (h->AceFlags & INHERITED_ACE))
                r = cdd_fixes_run(fix, CDD_FIX_SYSTEM, inh);
            if (!r)
                r = cdd_fixes_run(fix, CDD_FIX_SYSTEM, rm);
            free(grant);
        }
        free(who);
        free(st);
    }
    LocalFree(sd);
    free(me);
    if (!r && used && !(*problem = cdd_sb_take(&buf)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    cdd_sb_free(&buf);
    return r;
}
