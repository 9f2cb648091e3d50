/* UTF-8 inside, UTF-16 at the Win32 API boundary: the conversions, and the
 * long-path form (\\?\C:\... / \\?\UNC\server\share\...) that every file call
 * in the Win32 layer uses, so trees deeper than MAX_PATH (260) work even where
 * the system-wide long-path setting is off. */
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "cdd/error.h"
#include "win32_int.h"

wchar_t *cdd_w_from_utf8(const char *s, const char *path)
{
    if (!s) {
        cdd_fail(CDD_E_USAGE, path, 0, "no path given");
        return NULL;
    }
    if (!*s) {
        wchar_t *w = calloc(1, sizeof *w);
        if (!w)
            cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        return w;
    }
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    if (n <= 0) {
        cdd_fail(CDD_E_USAGE, path, 0, "not valid UTF-8");
        return NULL;
    }
    wchar_t *w = malloc((size_t)n * sizeof *w);
    if (!w) {
        cdd_fail(CDD_E_NOMEM, path, 0, NULL);
        return NULL;
    }
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
        free(w);
        cdd_fail(CDD_E_USAGE, path, 0, "not valid UTF-8");
        return NULL;
    }
    return w;
}

char *cdd_utf8_from_w(const wchar_t *w, int len)
{
    if (len == 0 || (len < 0 && !*w)) {
        char *s = calloc(1, 1);
        if (!s)
            cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return s;
    }
    int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, len, NULL, 0,
                                NULL, NULL);
    if (n <= 0) {
        cdd_fail(CDD_E_IO, NULL, (int)GetLastError(),
                 "a name that is not valid UTF-16 (unpaired surrogate)");
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return NULL;
    }
    WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, len, s, n, NULL,
                        NULL);
    s[n] = '\0'; /* len >= 0 gives no terminator; -1 already has one */
    return s;
}

static int starts(const wchar_t *w, const wchar_t *prefix)
{
    return wcsncmp(w, prefix, wcslen(prefix)) == 0;
}

wchar_t *cdd_w_path(const char *utf8)
{
    wchar_t *w = cdd_w_from_utf8(utf8, utf8), *full = NULL, *out = NULL;
    if (!w)
        return NULL;
    if (!*w) {
        free(w);
        cdd_fail(CDD_E_NOTFOUND, utf8, 0, "empty path");
        return NULL;
    }
    for (wchar_t *p = w; *p; p++)
        if (*p == L'/')
            *p = L'\\';
    /* Already in a device or long form: the caller meant it literally. */
    if (starts(w, L"\\\\?\\") || starts(w, L"\\\\.\\"))
        return w;
    DWORD n = GetFullPathNameW(w, 0, NULL, NULL);
    if (n == 0) {
        cdd_fail_win32(utf8, GetLastError(), "not a usable path");
        goto out;
    }
    full = malloc(((size_t)n + 1) * sizeof *full);
    if (!full) {
        cdd_fail(CDD_E_NOMEM, utf8, 0, NULL);
        goto out;
    }
    DWORD m = GetFullPathNameW(w, n + 1, full, NULL);
    if (m == 0 || m > n) {
        cdd_fail_win32(utf8, m ? ERROR_INSUFFICIENT_BUFFER : GetLastError(),
                       "not a usable path");
        goto out;
    }
    /* A trailing separator (but not a drive's root) would make some calls
     * (CreateDirectoryW, MoveFileExW) treat the name differently. */
    if (m > 3 && full[m - 1] == L'\\')
        full[--m] = L'\0';
    int unc = full[0] == L'\\' && full[1] == L'\\';
    if (unc && (starts(full, L"\\\\?\\") || starts(full, L"\\\\.\\"))) {
        out = full;
        full = NULL;
        goto out;
    }
    const wchar_t *pre = unc ? L"\\\\?\\UNC\\" : L"\\\\?\\";
    const wchar_t *rest = unc ? full + 2 : full;
    size_t len = wcslen(pre) + wcslen(rest) + 1;
    out = malloc(len * sizeof *out);
    if (!out) {
        cdd_fail(CDD_E_NOMEM, utf8, 0, NULL);
        goto out;
    }
    wcscpy(out, pre);
    wcscat(out, rest);
out:
    free(w);
    free(full);
    return out;
}

char *cdd_path_from_w(const wchar_t *w)
{
    char *s;
    if (starts(w, L"\\\\?\\UNC\\")) {
        char *t = cdd_utf8_from_w(w + 8, -1); /* "server\\share\\..." */
        s = t ? malloc(strlen(t) + 3) : NULL;
        if (s) {
            s[0] = s[1] = '/';
            strcpy(s + 2, t);
        } else if (t) {
            cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        free(t);
    } else if (starts(w, L"\\\\?\\")) {
        s = cdd_utf8_from_w(w + 4, -1);
    } else {
        s = cdd_utf8_from_w(w, -1);
    }
    if (s)
        for (char *p = s; *p; p++)
            if (*p == '\\')
                *p = '/';
    return s;
}
