/* Environment and host facts on Windows: the UTF-16 environment read as
 * UTF-8, the CUDA installer's default root under %ProgramFiles%, the cache
 * under %LOCALAPPDATA%, absolute paths the way Windows forms them, and
 * whether we run elevated (checked before an install starts, so a user is
 * told to use an elevated prompt before anything happens, not half-way);
 * and for doctor, where Windows keeps CUDA toolkits, Python packages and the
 * Visual C++ runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cdd/state.h"
#include "env_int.h"
#include "win32_int.h"

/* cdd_getenv() returns pointers callers keep: each distinct value is kept
 * for the life of the process (the environment is small and read a few
 * times), under a lock because workers may read it too. */
struct env_val {
    struct env_val *next;
    char *name;
    char *value;
};

static struct env_val *env_cache;
static SRWLOCK env_lock = SRWLOCK_INIT;

const char *cdd_getenv(const char *name)
{
    wchar_t *wn = cdd_w_from_utf8(name, NULL), *wv = NULL;
    char *v = NULL;
    const char *res = NULL;
    if (!wn) {
        cdd_clear_error();
        return NULL;
    }
    DWORD n = GetEnvironmentVariableW(wn, NULL, 0);
    if (n > 1) {
        wv = malloc((size_t)n * sizeof *wv);
        if (wv && GetEnvironmentVariableW(wn, wv, n) == n - 1)
            v = cdd_utf8_from_w(wv, -1);
    }
    free(wn);
    free(wv);
    if (!v || !*v) {
        free(v);
        cdd_clear_error();
        return NULL;
    }
    AcquireSRWLockExclusive(&env_lock);
    for (struct env_val *e = env_cache; e; e = e->next)
        if (strcmp(e->name, name) == 0 && strcmp(e->value, v) == 0) {
            res = e->value;
            break;
        }
    if (!res) {
        struct env_val *e = calloc(1, sizeof *e);
        size_t nl = strlen(name) + 1;
        if (e && (e->name = malloc(nl)) != NULL) {
            memcpy(e->name, name, nl);
            e->value = v;
            v = NULL;
            e->next = env_cache;
            env_cache = e;
            res = e->value;
        } else {
            free(e);
        }
    }
    ReleaseSRWLockExclusive(&env_lock);
    free(v);
    return res;
}

static char *join_fmt(const char *fmt, const char *base, int a, int b)
{
    int n = snprintf(NULL, 0, fmt, base, a, b);
    char *r = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (r)
        snprintf(r, (size_t)n + 1, fmt, base, a, b);
    return r;
}

char *cdd_default_cuda_root(int major, int minor)
{
    /* Where the CUDA installer puts toolkit X.Y (and sets CUDA_PATH_VX_Y).
     * ProgramW6432 first: it is the 64-bit folder even if the variable
     * ProgramFiles was redirected for a 32-bit parent. */
    const char *pf = cdd_getenv("ProgramW6432");
    if (!pf)
        pf = cdd_getenv("ProgramFiles");
    if (!pf)
        pf = "C:\\Program Files";
    return join_fmt("%s\\NVIDIA GPU Computing Toolkit\\CUDA\\v%d.%d", pf, major,
                    minor);
}

char *cdd_absolute_path(const char *path)
{
    wchar_t *w = cdd_w_path(path);
    char *r = w ? cdd_path_from_w(w) : NULL;
    free(w);
    return r;
}

char *cdd_default_cache_dir(void)
{
    const char *base = cdd_getenv("LOCALAPPDATA");
    char *r = NULL;
    if (base)
        r = join_fmt("%s/cudnn-deploy/cache", base, 0, 0);
    else if ((base = cdd_getenv("USERPROFILE")) != NULL)
        r = join_fmt("%s/AppData/Local/cudnn-deploy/cache", base, 0, 0);
    /* One separator style, as every path the core builds. */
    for (char *p = r; p && *p; p++)
        if (*p == '\\')
            *p = '/';
    return r;
}

int cdd_is_elevated(void)
{
    HANDLE tok = NULL;
    TOKEN_ELEVATION el = {0};
    DWORD n = 0;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
        return 0;
    BOOL ok = GetTokenInformation(tok, TokenElevation, &el, sizeof el, &n);
    CloseHandle(tok);
    return ok && el.TokenIsElevated;
}

/* Would this process be allowed to add files and folders to dir? Asked of
 * the folder's security descriptor with our own token (AccessCheck), so
 * nothing is written to find out. -1 when it cannot be told. */
static int can_add_to(const wchar_t *dir)
{
    const SECURITY_INFORMATION si = OWNER_SECURITY_INFORMATION |
                                    GROUP_SECURITY_INFORMATION |
                                    DACL_SECURITY_INFORMATION;
    DWORD need = 0;
    int res = -1;
    HANDLE tok = NULL, imp = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    GetFileSecurityW(dir, si, NULL, 0, &need);
    if (need == 0 || !(sd = malloc(need)) ||
        !GetFileSecurityW(dir, si, sd, need, &need))
        goto out;
    if (!OpenProcessToken(GetCurrentProcess(),
                          TOKEN_QUERY | TOKEN_DUPLICATE, &tok) ||
        !DuplicateToken(tok, SecurityImpersonation, &imp))
        goto out;
    GENERIC_MAPPING map = {FILE_GENERIC_READ, FILE_GENERIC_WRITE,
                           FILE_GENERIC_EXECUTE, FILE_ALL_ACCESS};
    DWORD want = FILE_ADD_FILE | FILE_ADD_SUBDIRECTORY, granted = 0;
    BOOL status = FALSE;
    PRIVILEGE_SET ps;
    DWORD pslen = sizeof ps;
    MapGenericMask(&want, &map);
    if (AccessCheck(sd, imp, want, &map, &ps, &pslen, &granted, &status))
        res = status ? 1 : 0;
out:
    if (imp)
        CloseHandle(imp);
    if (tok)
        CloseHandle(tok);
    free(sd);
    return res;
}

int cdd_check_write_access(const char *root, const char *first)
{
    if (cdd_is_elevated())
        return 0;
    wchar_t *w = cdd_w_path(first);
    if (!w) {
        cdd_clear_error();
        return 0; /* the operation itself will say what is wrong */
    }
    int ok = can_add_to(w);
    free(w);
    if (ok != 0)
        return 0;
    if (cdd_win32_path_is_protected(root))
        return cdd_fail(CDD_E_PERM, root, (int)ERROR_ACCESS_DENIED,
                        "only an administrator can change this folder: run "
                        "cudnn-deploy from an elevated prompt (right-click "
                        "Command Prompt or PowerShell, 'Run as "
                        "administrator')");
    return cdd_fail(CDD_E_PERM, root, (int)ERROR_ACCESS_DENIED,
                    "this account may not change this folder: run from an "
                    "elevated prompt or as the folder's owner");
}

/* ---- what doctor looks at ------------------------------------------------ */

static int ascii_ieq_prefix(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++) {
        char a = *s, b = *prefix;
        if (a >= 'a' && a <= 'z')
            a = (char)(a - 'a' + 'A');
        if (b >= 'a' && b <= 'z')
            b = (char)(b - 'a' + 'A');
        if (a != b)
            return 0;
    }
    return 1;
}

int cdd_env_each(const char *prefix,
                 int (*fn)(void *ud, const char *name, const char *value),
                 void *ud)
{
    wchar_t *block = GetEnvironmentStringsW();
    int r = 0;
    if (!block)
        return 0;
    for (const wchar_t *e = block; *e && !r; e += wcslen(e) + 1) {
        /* "=C:=C:\dir" entries are the per-drive current folders. */
        if (*e == L'=')
            continue;
        char *kv = cdd_utf8_from_w(e, -1);
        char *eq = kv ? strchr(kv, '=') : NULL;
        if (!kv) {
            cdd_clear_error(); /* an unpaired surrogate: not ours to read */
            continue;
        }
        if (eq && eq[1]) {
            *eq = '\0';
            if (ascii_ieq_prefix(kv, prefix))
                r = fn(ud, kv, eq + 1);
        }
        free(kv);
    }
    FreeEnvironmentStringsW(block);
    return r;
}

static int is_dir(const char *path)
{
    wchar_t *w = cdd_w_path(path);
    DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    free(w);
    cdd_clear_error();
    return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One separator style, as every path the core builds; values from the
 * environment come with backslashes. */
static void slashes(char *p)
{
    for (; p && *p; p++)
        if (*p == '\\')
            *p = '/';
}

/* Call fn for dir/NAME/tail for every folder NAME in dir that starts with
 * prefix (case-insensitively, as Windows matches), in name order, when that
 * folder exists (tail "" means dir/NAME itself). */
static int glob_dirs(const char *dir, const char *prefix, const char *tail,
                     const char *origin,
                     int (*fn)(void *ud, const char *path, const char *origin),
                     void *ud)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    size_t plen = strlen(dir) + strlen(prefix) + 3;
    char *pat = malloc(plen);
    wchar_t *wpat = NULL;
    HANDLE h = INVALID_HANDLE_VALUE;
    WIN32_FIND_DATAW fd;
    if (!pat)
        return cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
    snprintf(pat, plen, "%s/%s*", dir, prefix);
    wpat = cdd_w_path(pat);
    if (wpat)
        h = FindFirstFileExW(wpat, FindExInfoBasic, &fd,
                             FindExSearchLimitToDirectories, NULL, 0);
    if (h == INVALID_HANDLE_VALUE) {
        cdd_clear_error(); /* absent: nothing there */
        goto out;
    }
    do {
        if (!(fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ||
            wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
            continue;
        r = CDD_GROW(names, &cap, n + 1, CDD_ENV_GLOB_MAX,
                     "folders matching one wildcard");
        if (r)
            goto out;
        if (!(names[n] = cdd_utf8_from_w(fd.cFileName, -1))) {
            cdd_clear_error();
            continue;
        }
        n++;
    } while (FindNextFileW(h, &fd));
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !r; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + strlen(tail) + 3;
        char *p = malloc(len);
        if (!p) {
            r = cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
            break;
        }
        snprintf(p, len, "%s/%s%s%s", dir, names[i], *tail ? "/" : "", tail);
        slashes(p);
        if (is_dir(p))
            r = fn(ud, p, origin);
        free(p);
    }
out:
    if (h != INVALID_HANDLE_VALUE)
        FindClose(h);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(wpat);
    free(pat);
    return r;
}

/* The 64-bit Program Files folder, '/'-separated (malloc'd). */
static char *program_files(void)
{
    const char *pf = cdd_getenv("ProgramW6432");
    if (!pf)
        pf = cdd_getenv("ProgramFiles");
    if (!pf)
        pf = "C:\\Program Files";
    char *r = join_fmt("%s", pf, 0, 0);
    slashes(r);
    return r;
}

int cdd_default_cuda_roots(int (*fn)(void *ud, const char *path,
                                     const char *origin),
                           void *ud)
{
    /* The CUDA installer puts toolkit X.Y into ...\CUDA\vX.Y (and sets
     * CUDA_PATH_VX_Y, which doctor reads separately). */
    char *pf = program_files(), *base = NULL;
    int r = 0;
    if (!pf)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    base = join_fmt("%s/NVIDIA GPU Computing Toolkit/CUDA", pf, 0, 0);
    if (!base)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    else
        r = glob_dirs(base, "v", "", "default root", fn, ud);
    free(base);
    free(pf);
    return r;
}

static int site_under(const char *prefix_var, const char *origin,
                      int (*fn)(void *ud, const char *path, const char *origin),
                      void *ud)
{
    /* venv and conda on Windows: <prefix>\Lib\site-packages. */
    const char *base = cdd_getenv(prefix_var);
    char *p = base ? join_fmt("%s/Lib/site-packages", base, 0, 0) : NULL;
    slashes(p);
    int r = p && is_dir(p) ? fn(ud, p, origin) : 0;
    free(p);
    return r;
}

static int is_file(const char *path)
{
    wchar_t *w = cdd_w_path(path);
    DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
    free(w);
    cdd_clear_error();
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

/* The python.exe a console would run: its prefix's site folder. A venv or
 * conda environment is often used through PATH alone, without VIRTUAL_ENV
 * or CONDA_PREFIX. python.org and conda: <prefix>\python.exe; a venv:
 * <prefix>\Scripts\python.exe. */
static int site_of_path_python(int (*fn)(void *ud, const char *path,
                                         const char *origin),
                               void *ud)
{
    const char *path = cdd_getenv("PATH");
    for (const char *p = path; p;) {
        size_t len = strcspn(p, ";");
        char *dir = len > 0 ? cdd_strndup(p, len) : NULL;
        if (len > 0 && !dir)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        if (dir) {
            slashes(dir);
            char *exe = join_fmt("%s/python.exe", dir, 0, 0);
            int found = exe && is_file(exe);
            free(exe);
            if (found) {
                char *slash = strrchr(dir, '/');
                if (slash && strlen(slash) == 8 &&
                    ascii_ieq_prefix(slash, "/Scripts"))
                    *slash = '\0';
                char *site = join_fmt("%s/Lib/site-packages", dir, 0, 0);
                int r = site && is_dir(site) ? fn(ud, site, "python on PATH")
                                             : 0;
                free(site);
                free(dir);
                return r;
            }
        }
        free(dir);
        if (!p[len])
            break;
        p += len + 1;
    }
    return 0;
}

int cdd_python_site_dirs(int (*fn)(void *ud, const char *path,
                                   const char *origin),
                         void *ud)
{
    int r = cdd_pythonpath_each(fn, ud, is_dir);
    if (!r)
        r = site_under("VIRTUAL_ENV", "VIRTUAL_ENV", fn, ud);
    if (!r)
        r = site_under("CONDA_PREFIX", "CONDA_PREFIX", fn, ud);
    if (!r)
        r = site_of_path_python(fn, ud);
    /* `pip install --user`: %APPDATA%\Python\Python3N\site-packages. */
    const char *app = cdd_getenv("APPDATA");
    char *dir = NULL;
    if (!r && app && (dir = join_fmt("%s/Python", app, 0, 0)) != NULL)
        r = glob_dirs(dir, "Python3", "site-packages", "user site", fn, ud);
    free(dir);
    dir = NULL;
    /* python.org installs: per user under %LOCALAPPDATA%\Programs\Python,
     * for all users under %ProgramFiles%. */
    const char *local = cdd_getenv("LOCALAPPDATA");
    if (!r && local &&
        (dir = join_fmt("%s/Programs/Python", local, 0, 0)) != NULL)
        r = glob_dirs(dir, "Python3", "Lib/site-packages", "system", fn, ud);
    free(dir);
    dir = NULL;
    if (!r && (dir = program_files()) != NULL)
        r = glob_dirs(dir, "Python3", "Lib/site-packages", "system", fn, ud);
    free(dir);
    return r;
}

char *cdd_system_dir(void)
{
    wchar_t buf[MAX_PATH + 1]; /* fixed: the system folder (< MAX_PATH) */
    UINT n = GetSystemDirectoryW(buf, MAX_PATH);
    if (n == 0 || n >= MAX_PATH)
        return NULL;
    char *r = cdd_path_from_w(buf);
    if (!r)
        cdd_clear_error();
    return r;
}
