/* Internal helpers shared by the Win32 platform files (*_win32.c) and the
 * Windows-only unit tests: UTF-8 <-> UTF-16 conversion at the API boundary,
 * long-path (\\?\) forms, and the translation of GetLastError() values into
 * CDD_E_* codes and messages. Included only by Windows code, so it may use
 * <windows.h> freely. */
#ifndef CDD_WIN32_INT_H
#define CDD_WIN32_INT_H

#include <stddef.h>
#include <wchar.h>

#include <windows.h>

#include "cdd/compat_attr.h"

/* UTF-8 -> UTF-16 (malloc'd), strict: invalid UTF-8 is refused
 * (MB_ERR_INVALID_CHARS) rather than turned into U+FFFD, so two different
 * byte strings never name one file. NULL with the error recorded
 * (CDD_E_USAGE for invalid UTF-8, CDD_E_NOMEM). path names the string in the
 * message. */
wchar_t *cdd_w_from_utf8(const char *s, const char *path);

/* UTF-16 -> UTF-8 (malloc'd), strict (an unpaired surrogate is refused);
 * NULL with the error recorded. len: characters, or -1 for NUL-terminated. */
char *cdd_utf8_from_w(const wchar_t *w, int len);

/* The form every Win32 file call gets: absolute (GetFullPathNameW, which also
 * resolves "." and ".." the way Windows does), '\\'-separated, and prefixed
 * with \\?\ (or \\?\UNC\) so that paths beyond MAX_PATH work whether or not
 * the system has long paths enabled. NULL with the error recorded. */
wchar_t *cdd_w_path(const char *utf8);

/* A UTF-16 path as the core sees it: the \\?\ or \\?\UNC\ prefix removed and
 * '\\' turned into '/' ("C:/Program Files/..."). malloc'd; NULL with the
 * error recorded. */
char *cdd_path_from_w(const wchar_t *w);

/* The CDD_E_* code for a GetLastError() value: not found (2, 3, 15, 53, 67,
 * 123, 161, 267), permission (5, 19, 65, 740, 1314), in use (32, 33, 170,
 * 1224), disk full (39, 112, 1295), out of memory (8, 14); otherwise I/O. */
int cdd_win32_err_code(unsigned long err);

/* Record a failure from a Win32 call: the code from cdd_win32_err_code(),
 * os_err = err, and the message from fmt. For access denied and missing
 * privileges while not elevated, the message gains the advice to run from an
 * elevated prompt when path is under a protected folder (Program Files, the
 * Windows folder, ProgramData). Returns the code. */
int cdd_fail_win32(const char *path, unsigned long err, const char *fmt, ...)
    CDD_PRINTF(3, 4);

/* The advice cdd_fail_win32() adds for err at path: the elevated-prompt
 * hint when err is a permission error, the process is not elevated and path
 * is protected; NULL otherwise. Static text. */
const char *cdd_win32_perm_advice(const char *path, unsigned long err,
                                  int elevated);

/* Is path (UTF-8, either separator) under %ProgramFiles%,
 * %ProgramFiles(x86)%, %ProgramW6432%, %ProgramData% or %SystemRoot%, which
 * only an elevated process may change? */
int cdd_win32_path_is_protected(const char *path);

/* What LoadLibraryExW's error means for a library that exists:
 * 126 -> a dependency is missing, 127 -> an entry point is missing,
 * 193 -> not a 64-bit Windows DLL (wrong architecture or not a DLL),
 * 1114 -> its initialisation failed; NULL for other values. Static text. */
const char *cdd_win32_load_error_meaning(unsigned long err);

#endif
