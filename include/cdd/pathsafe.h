/* Validation of names that come from archives and manifests. Strict on every
 * OS, because a tree prepared on Linux may be used on Windows: a name that is
 * unsafe anywhere is unsafe everywhere (docs/design.md, Archive check;
 * docs/security.md, The archive checks). */
#ifndef CDD_PATHSAFE_H
#define CDD_PATHSAFE_H

#include <stddef.h>

/* Check one relative path made of '/'-separated components. Rejects: empty
 * names and empty components, absolute paths ('/', '\\', drive letters, UNC),
 * any backslash or ':' (drive letters, NTFS streams), control characters and
 * DEL, the characters < > " | ? *, "." and ".." components, Windows reserved
 * device names (CON, PRN, AUX, NUL, COM0-9, LPT0-9, CONIN$, CONOUT$, CLOCK$,
 * also with an extension or a superscript digit), components ending in '.'
 * or ' ', 8.3 short names ('~' followed by a digit), invalid or overlong UTF-8
 * (also UTF-16 surrogates and code points above U+10FFFF), C1 controls,
 * invisible and bidirectional formatting characters (names that look like
 * other names), look-alikes of '/', '\\', ':' and the fullwidth ASCII block
 * (Windows' "best fit" conversion turns them into the real characters),
 * components longer than CDD_NAME_MAX (255) bytes and paths longer than
 * CDD_PATH_MAX_POSIX (4095) bytes, on every OS (an archive is the same file
 * wherever it is read).
 *
 * A single trailing '/' (directory entries in archives) is accepted when
 * allow_trailing_slash is set. Returns 1 when safe, 0 when not; *why then
 * points to a static phrase such as "contains '..'". */
int cdd_path_is_safe(const char *path, int allow_trailing_slash,
                     const char **why);

/* The length of n bytes of a name as this host's file systems count it
 * against their limit of CDD_NAME_MAX per folder entry: bytes on POSIX,
 * UTF-16 code units on Windows (NTFS stores names as UTF-16). */
size_t cdd_name_units(const char *name, size_t n);

/* Check a symlink target: must be a single safe component (a plain name in
 * the same folder). Returns 1/0 as above. */
int cdd_link_target_is_safe(const char *target, const char **why);

/* Strip n leading components. Returns a pointer into path past them, or NULL
 * when path has n or fewer components (nothing left). */
const char *cdd_path_strip(const char *path, int n);

/* Case-insensitive comparison of whole paths, for the duplicate checks that
 * Windows' case-insensitive filesystems need: every character compared by
 * its Unicode simple case folding (casefold.h); invalid UTF-8 bytes compare
 * as themselves, after every code point. */
int cdd_path_casecmp(const char *a, const char *b);

/* Fold a copy of path the way cdd_path_casecmp() compares (invalid UTF-8 is
 * copied unchanged; the length may change, '/' never moves between
 * components, so the folded basename is the basename's folding), for hashing
 * names in duplicate checks. malloc'd; NULL on out of memory. */
char *cdd_path_fold(const char *path);

/* Render an untrusted name for a message: C-style escapes for '"', '\\',
 * control characters, invalid UTF-8 (\xNN) and invisible or bidirectional
 * formatting characters (\u{202e}), cut with "..." to fit. Always
 * NUL-terminates buf (len > 0). Returns buf. */
char *cdd_path_printable(const char *name, char *buf, size_t len);
/* The same rendering, whole (never cut), malloc'd; NULL on out of memory.
 * CDD_SHOWN(s) is s, or a placeholder where the copy could not be made. */
char *cdd_path_shown(const char *name);
#define CDD_SHOWN(s) ((s) ? (s) : "(name not shown: out of memory)")
/* The same for len raw bytes of an archive's name field, which may hold
 * NULs: each shown as U+2400 (SYMBOL FOR NULL) so the message says where
 * a reader that stops at it would cut. malloc'd; NULL on out of memory. */
char *cdd_path_shown_bytes(const void *name, size_t len);
/* cdd_path_shown / cdd_path_shown_bytes kept for the message the next
 * cdd_fail() records (cdd_err_keep): for its arguments only. */
const char *cdd_path_q(const char *name);
const char *cdd_path_qn(const void *name, size_t len);

/* Last component of a path, after the last '/' or '\\' (pointer into
 * path). */
const char *cdd_path_basename(const char *path);

/* Join a and b with '/', malloc'd; NULL on out of memory. */
char *cdd_path_join(const char *a, const char *b);

/* Is any component of path (either separator) equal, ignoring ASCII case,
 * to "site-packages" or "dist-packages"? */
int cdd_path_in_python_package(const char *path);

/* Is the first component of a tree path the state folder (CDD_STATE_DIR),
 * ignoring ASCII case? On a case-insensitive filesystem ".CUDNN-DEPLOY/x"
 * is the same place. */
int cdd_path_in_state(const char *p);

#endif
