/* Windows error translation: GetLastError() values into CDD_E_* codes, the
 * system's own message text (in UTF-8) for the one-line error, the advice to
 * use an elevated prompt when a protected folder refuses us, and what the
 * loader's 126/127/193 really mean. Pure functions where possible, so the
 * unit tests can check every translation without provoking the failures
 * (Wine cannot show real elevation or a DLL held by another process). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "win32_int.h"

/* Not in every SDK's winerror.h (MinGW's lacks them). */
#ifndef ERROR_ELEVATION_REQUIRED
#define ERROR_ELEVATION_REQUIRED 740L
#endif
#ifndef ERROR_DISK_QUOTA_EXCEEDED
#define ERROR_DISK_QUOTA_EXCEEDED 1295L
#endif

int cdd_win32_err_code(unsigned long err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND:      /* 2 */
    case ERROR_PATH_NOT_FOUND:      /* 3 */
    case ERROR_INVALID_DRIVE:       /* 15 */
    case ERROR_BAD_NETPATH:         /* 53 */
    case ERROR_BAD_NET_NAME:        /* 67 */
    case ERROR_INVALID_NAME:        /* 123 */
    case ERROR_BAD_PATHNAME:        /* 161 */
    case ERROR_DIRECTORY:           /* 267 */
        return CDD_E_NOTFOUND;
    case ERROR_ACCESS_DENIED:       /* 5 */
    case ERROR_WRITE_PROTECT:       /* 19 */
    case ERROR_NETWORK_ACCESS_DENIED: /* 65 */
    case ERROR_ELEVATION_REQUIRED:  /* 740 */
    case ERROR_PRIVILEGE_NOT_HELD:  /* 1314 */
        return CDD_E_PERM;
    case ERROR_SHARING_VIOLATION:   /* 32 */
    case ERROR_LOCK_VIOLATION:      /* 33 */
    case ERROR_BUSY:                /* 170 */
    case ERROR_USER_MAPPED_FILE:    /* 1224 */
        return CDD_E_BUSY;
    case ERROR_HANDLE_DISK_FULL:    /* 39 */
    case ERROR_DISK_FULL:           /* 112 */
    case ERROR_DISK_QUOTA_EXCEEDED: /* 1295 */
        return CDD_E_NOSPC;
    case ERROR_NOT_ENOUGH_MEMORY:   /* 8 */
    case ERROR_OUTOFMEMORY:         /* 14 */
        return CDD_E_NOMEM;
    default:
        return CDD_E_IO;
    }
}

/* Is path equal to or below dir? Case-insensitive (ASCII and, through
 * CompareStringOrdinal, the rest), either separator. */
static int under(const char *path, const char *dir)
{
    wchar_t *wp = cdd_w_from_utf8(path, NULL), *wd = cdd_w_from_utf8(dir, NULL);
    int r = 0;
    if (wp && wd) {
        size_t nd = wcslen(wd);
        while (nd > 0 && (wd[nd - 1] == L'\\' || wd[nd - 1] == L'/'))
            nd--;
        if (nd > 0 && wcslen(wp) >= nd) {
            for (wchar_t *p = wp; *p; p++)
                if (*p == L'/')
                    *p = L'\\';
            for (size_t i = 0; i < nd; i++)
                if (wd[i] == L'/')
                    wd[i] = L'\\';
            r = CompareStringOrdinal(wp, (int)nd, wd, (int)nd, TRUE) ==
                    CSTR_EQUAL &&
                (wp[nd] == L'\0' || wp[nd] == L'\\');
        }
    }
    free(wp);
    free(wd);
    cdd_clear_error(); /* a name we cannot convert is simply not "under" */
    return r;
}

int cdd_win32_path_is_protected(const char *path)
{
    static const char *const vars[] = {"ProgramFiles", "ProgramFiles(x86)",
                                       "ProgramW6432", "ProgramData",
                                       "SystemRoot"};
    if (!path)
        return 0;
    /* Our own paths may carry the long-path prefix. */
    if (strncmp(path, "\\\\?\\", 4) == 0 || strncmp(path, "//?/", 4) == 0)
        path += 4;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *d = cdd_getenv(vars[i]);
        if (d && under(path, d))
            return 1;
    }
    return 0;
}

const char *cdd_win32_perm_advice(const char *path, unsigned long err,
                                  int elevated)
{
    if (cdd_win32_err_code(err) != CDD_E_PERM || err == ERROR_WRITE_PROTECT ||
        elevated || !cdd_win32_path_is_protected(path))
        return NULL;
    return "this folder can only be changed by an administrator; run from an "
           "elevated prompt (right-click Command Prompt or PowerShell, 'Run "
           "as administrator')";
}

int cdd_fail_win32(const char *path, unsigned long err, const char *fmt, ...)
{
    struct cdd_sb msg;
    cdd_sb_init(&msg, CDD_TEXT_MAX, "error message");
    int code = cdd_win32_err_code(err);
    va_list ap;
    va_start(ap, fmt);
    int r = cdd_sb_vaddf(&msg, fmt ? fmt : "", ap);
    va_end(ap);
    if (r)
        return r;
    const char *advice =
        code == CDD_E_PERM ? cdd_win32_perm_advice(path, err, cdd_is_elevated())
                           : NULL;
    if (advice)
        r = cdd_fail(code, path, (int)err, "%s: %s",
                     cdd_sb_len(&msg) ? cdd_sb_str(&msg) : "access denied",
                     advice);
    else
        r = cdd_fail(code, path, (int)err, "%s", cdd_sb_str(&msg));
    cdd_sb_free(&msg);
    return r;
}

const char *cdd_win32_load_error_meaning(unsigned long err)
{
    switch (err) {
    case ERROR_MOD_NOT_FOUND: /* 126 */
        return "the library exists but a DLL it depends on cannot be found "
               "(Windows reports this as \"module not found\", error 126)";
    case ERROR_PROC_NOT_FOUND: /* 127 */
        return "a function it imports is missing from one of its DLLs: a "
               "dependency of another version was found first (error 127)";
    case ERROR_BAD_EXE_FORMAT: /* 193 */
        return "not a DLL this 64-bit process can load: built for another "
               "architecture (32-bit?) or not a Windows DLL at all (error 193)";
    case ERROR_DLL_INIT_FAILED: /* 1114 */
        return "the DLL was found but its initialisation failed (error 1114)";
    default:
        return NULL;
    }
}

char *cdd_os_error_text(int os_err, char *buf, size_t len)
{
    wchar_t *w = NULL;
    char text[512]; /* fixed: a system message, cut like the caller's buf */
    int n8 = 0;
    DWORD n = FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER |
                                 FORMAT_MESSAGE_FROM_SYSTEM |
                                 FORMAT_MESSAGE_IGNORE_INSERTS,
                             NULL, (DWORD)os_err, 0, (LPWSTR)&w, 0, NULL);
    if (n > 0 && w) {
        /* System messages end in ".\r\n": the one-line format wants neither. */
        while (n > 0 && (w[n - 1] == L'\r' || w[n - 1] == L'\n' ||
                         w[n - 1] == L' ' || w[n - 1] == L'.'))
            w[--n] = L'\0';
        /* Converted here rather than through cdd_utf8_from_w(): this runs
         * while the last error is being formatted and must not record one. */
        n8 = WideCharToMultiByte(CP_UTF8, 0, w, (int)n, text,
                                 (int)sizeof text - 1, NULL, NULL);
    }
    if (w)
        LocalFree(w);
    if (n8 > 0) {
        text[n8] = '\0';
        snprintf(buf, len, "%s, error %d", text, os_err);
    } else {
        snprintf(buf, len, "Windows error %d", os_err);
    }
    return buf;
}
