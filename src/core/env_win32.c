/* Environment and host facts on Windows: the UTF-16 environment read as
 * UTF-8, the CUDA installer's default root under %ProgramFiles%, the cache
 * under %LOCALAPPDATA%, absolute paths the way Windows forms them, and
 * whether we run elevated (checked before an install starts, so a user is
 * told to use an elevated prompt before anything happens, not half-way). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/state.h"
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

int cdd_check_write_access(const char *root)
{
    if (cdd_is_elevated())
        return 0;
    /* The first write goes into the tree's state folder, or creates it:
     * ask about that one. */
    size_t n = strlen(root) + sizeof "/" CDD_STATE_DIR;
    char *state = malloc(n);
    wchar_t *w = NULL;
    if (state) {
        snprintf(state, n, "%s/%s", root, CDD_STATE_DIR);
        w = cdd_w_path(state);
        DWORD a = w ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
        if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) {
            free(w);
            w = cdd_w_path(root);
        }
    }
    free(state);
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
