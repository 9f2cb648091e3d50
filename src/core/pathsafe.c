/* The name validator that keeps archive entries and manifest paths inside
 * their tree (docs/design.md, Archive check), and the few string helpers on '/'-separated paths
 * that go with it. One rule set for every OS: a tree prepared on Linux may be
 * copied to Windows, so a name unsafe anywhere is unsafe everywhere. Pure
 * string code, no filesystem access. */
#include "cdd/pathsafe.h"

#include "casefold.h"
#include "cdd/error.h"
#include "cdd/platform.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bound on an archive entry's whole name (issue 18): POSIX's path limit
 * on every OS, Windows included. An archive is the same file whichever OS
 * reads it, so its names get one bound; Windows could hold longer paths
 * (CDD_PATH_MAX_WIN32), but an archive whose names pass 4095 bytes could not
 * be unpacked on Linux and is refused everywhere. Each component is bounded
 * by CDD_NAME_MAX. The messages below spell out both numbers. */
#define MAX_PATH_BYTES CDD_PATH_MAX_POSIX
#define MAX_COMPONENT_BYTES CDD_NAME_MAX
#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- UTF-8 ---------------------------------------------------------------- */

/* Decode one UTF-8 sequence at s (strict: RFC 3629 ranges, no overlong forms,
 * no surrogates, nothing above U+10FFFF). Returns its length and *cp, or 0
 * with *err naming the fault. */
static size_t utf8_decode(const unsigned char *s, uint32_t *cp,
                          const char **err)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v;

    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC0) {
        *err = "invalid UTF-8 (stray continuation byte)";
        return 0;
    }
    if (c < 0xC2) {
        *err = "overlong UTF-8 encoding";
        return 0;
    }
    if (c < 0xE0) {
        n = 2;
        v = c & 0x1F;
    } else if (c < 0xF0) {
        n = 3;
        v = c & 0x0F;
    } else if (c < 0xF5) {
        n = 4;
        v = c & 0x07;
    } else {
        *err = "invalid UTF-8 (byte 0xF5-0xFF)";
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *err = "invalid UTF-8 (truncated sequence)";
            return 0;
        }
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((n == 3 && v < 0x800) || (n == 4 && v < 0x10000)) {
        *err = "overlong UTF-8 encoding";
        return 0;
    }
    if (v >= 0xD800 && v <= 0xDFFF) {
        *err = "UTF-16 surrogate encoded in UTF-8";
        return 0;
    }
    if (v > 0x10FFFF) {
        *err = "code point above U+10FFFF";
        return 0;
    }
    *cp = v;
    return n;
}

/* Characters that render as nothing or reorder text: a name holding them can
 * look exactly like another name in a listing or a message. */
static int is_invisible(uint32_t c)
{
    return c == 0x00AD || c == 0x034F || c == 0x061C || c == 0x115F ||
           c == 0x1160 || c == 0x180E || (c >= 0x200B && c <= 0x200F) ||
           (c >= 0x202A && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F) ||
           c == 0x3164 || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF ||
           c == 0xFFA0 || (c >= 0xFFF0 && c <= 0xFFFB) || c == 0xFFFE ||
           c == 0xFFFF || (c >= 0xE0000 && c <= 0xE0FFF);
}

/* Characters that Windows' best-fit conversion to an ANSI code page turns
 * into '/', '\\', ':', '.' or another ASCII character ("WorstFit"): harmless
 * through the UTF-16 APIs we use, but any tool that later touches the tree
 * through narrow APIs would see a different name. */
static int is_lookalike(uint32_t c)
{
    return c == 0x00A5 /* yen: '\\' in cp932 */ ||
           c == 0x20A9 /* won: '\\' in cp949 */ || c == 0x2044 ||
           c == 0x2215 || c == 0x2216 || c == 0x2236 || c == 0x29F5 ||
           c == 0x29F8 || c == 0x29F9 || c == 0xFE13 || c == 0xFE52 ||
           c == 0xFE55 || c == 0xFE68 ||
           (c >= 0xFF01 && c <= 0xFF5E) /* fullwidth ASCII */;
}

/* ---- components ----------------------------------------------------------- */

static int ascii_ieq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x + 32);
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y + 32);
        if (x != y)
            return 0;
    }
    return 1;
}

/* Windows opens a device instead of a file for these names whatever the
 * folder and whatever follows the first dot ("nul.txt", "COM1.tar.gz"); the
 * name before the dot is compared without trailing spaces ("CON .h"). The
 * superscript digits ¹²³ count as digits for COM and LPT. */
static int is_reserved_device(const char *comp, size_t len)
{
    static const char *const plain[] = {"con", "prn", "aux", "nul",
                                        "conin$", "conout$", "clock$"};
    size_t n = 0;
    while (n < len && comp[n] != '.')
        n++;
    while (n > 0 && comp[n - 1] == ' ')
        n--;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (n == strlen(plain[i]) && ascii_ieq(comp, plain[i], n))
            return 1;
    if (n >= 4 && (ascii_ieq(comp, "com", 3) || ascii_ieq(comp, "lpt", 3))) {
        const unsigned char *d = (const unsigned char *)comp + 3;
        if (n == 4 && d[0] >= '0' && d[0] <= '9')
            return 1;
        /* U+00B9, U+00B2, U+00B3 */
        if (n == 5 && d[0] == 0xC2 &&
            (d[1] == 0xB9 || d[1] == 0xB2 || d[1] == 0xB3))
            return 1;
    }
    return 0;
}

static const char *check_component(const char *comp, size_t len)
{
    if (len == 0)
        return "empty component ('//' or a leading or trailing '/')";
    if (len == 1 && comp[0] == '.')
        return "contains a '.' component";
    if (len == 2 && comp[0] == '.' && comp[1] == '.')
        return "contains '..'";
    if (len > MAX_COMPONENT_BYTES)
        return "component longer than " STR(CDD_NAME_MAX) " bytes";
    if (comp[len - 1] == '.')
        return "component ends with '.' (Windows drops it)";
    if (comp[len - 1] == ' ')
        return "component ends with a space (Windows drops it)";
    if (is_reserved_device(comp, len))
        return "Windows reserved device name";
    for (size_t i = 0; i + 1 < len; i++)
        if (comp[i] == '~' && comp[i + 1] >= '0' && comp[i + 1] <= '9')
            return "looks like an 8.3 short name ('~' and a digit)";
    return NULL;
}

/* ---- validation ------------------------------------------------------------ */

static int unsafe(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return 0;
}

int cdd_path_is_safe(const char *path, int allow_trailing_slash,
                     const char **why)
{
    const unsigned char *s = (const unsigned char *)path;
    size_t len, i;

    if (why)
        *why = NULL;
    if (!path || !*path)
        return unsafe(why, "empty name");
    len = strlen(path);
    if (len > MAX_PATH_BYTES)
        return unsafe(why, "path longer than " STR(CDD_PATH_MAX_POSIX)
                           " bytes (the bound of an archive entry's name on "
                           "every OS)");

    /* The shape of the start first, so the message says what was meant. */
    if ((s[0] == '/' || s[0] == '\\') && (s[1] == '/' || s[1] == '\\'))
        return unsafe(why, "UNC or device path ('//' or '\\\\')");
    if (s[0] == '/' || s[0] == '\\')
        return unsafe(why, "absolute path");
    if (((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z') && s[1] == ':')
        return unsafe(why, "drive letter");

    for (i = 0; i < len;) {
        unsigned char c = s[i];
        uint32_t cp;
        const char *err = NULL;
        size_t n;

        if (c == '\\')
            return unsafe(why, "contains a backslash");
        if (c == ':')
            return unsafe(why, "contains ':' (drive letter or NTFS stream)");
        if (c < 0x20)
            return unsafe(why, "contains a control character");
        if (c == 0x7F)
            return unsafe(why, "contains DEL");
        if (c == '<' || c == '>' || c == '"' || c == '|' || c == '?' ||
            c == '*')
            return unsafe(why, "contains one of < > \" | ? * (forbidden on "
                               "Windows)");
        n = utf8_decode(s + i, &cp, &err);
        if (n == 0)
            return unsafe(why, err);
        if (cp >= 0x80 && cp <= 0x9F)
            return unsafe(why, "contains a C1 control character");
        if (is_invisible(cp))
            return unsafe(why, "contains an invisible or bidirectional "
                               "formatting character");
        if (is_lookalike(cp))
            return unsafe(why, "contains a look-alike of an ASCII character "
                               "(fullwidth form, '/', '\\' or ':')");
        i += n;
    }

    /* Components. A directory entry may end in one '/'. */
    if (allow_trailing_slash && len > 1 && path[len - 1] == '/')
        len--;
    for (i = 0;;) {
        size_t start = i;
        const char *r;
        while (i < len && path[i] != '/')
            i++;
        r = check_component(path + start, i - start);
        if (r)
            return unsafe(why, r);
        if (i >= len)
            break;
        i++; /* past '/'; a '/' at the very end leaves an empty component */
    }
    return 1;
}

int cdd_link_target_is_safe(const char *target, const char **why)
{
    if (!cdd_path_is_safe(target, 0, why))
        return 0;
    /* A link may only name a sibling: anything with a folder in it could
     * leave the folder, or reach through another link. */
    if (strchr(target, '/'))
        return unsafe(why, "symlink target is not a plain name in the same "
                           "folder");
    return 1;
}

/* ---- helpers ---------------------------------------------------------------- */

const char *cdd_path_strip(const char *path, int n)
{
    const char *p = path;
    if (!p)
        return NULL;
    for (int k = 0; k < n; k++) {
        const char *slash = strchr(p, '/');
        if (!slash)
            return NULL;
        p = slash + 1;
    }
    return *p ? p : NULL;
}

/* Decode leniently for comparison: a byte that starts no valid sequence
 * stands for itself (offset above any code point so it never equals one). */
static size_t next_folded(const unsigned char *s, uint32_t *out)
{
    uint32_t cp;
    const char *err;
    size_t n = utf8_decode(s, &cp, &err);
    if (n == 0) {
        *out = 0x110000u + s[0];
        return 1;
    }
    *out = cdd_casefold_cp(cp);
    return n;
}

int cdd_path_casecmp(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a;
    const unsigned char *y = (const unsigned char *)b;
    while (*x && *y) {
        uint32_t cx, cy;
        x += next_folded(x, &cx);
        y += next_folded(y, &cy);
        if (cx != cy)
            return cx < cy ? -1 : 1;
    }
    return *x ? 1 : *y ? -1 : 0;
}

static size_t utf8_put(uint32_t c, unsigned char *o)
{
    if (c < 0x80) {
        o[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (unsigned char)(0xC0 | (c >> 6));
        o[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (c >> 12));
        o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (c >> 18));
    o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

char *cdd_path_fold(const char *path)
{
    /* Folding can lengthen a character's encoding (U+023A, 2 bytes, folds to
     * U+2C65, 3 bytes) but never beyond 3/2 of it; ASCII stays ASCII. */
    size_t len = strlen(path);
    char *out = malloc(len + len / 2 + 4);
    const unsigned char *s = (const unsigned char *)path;
    unsigned char *o = (unsigned char *)out;
    if (!out)
        return NULL;
    while (*s) {
        uint32_t cp;
        const char *err;
        size_t n = utf8_decode(s, &cp, &err);
        if (n == 0) {
            *o++ = *s++;
            continue;
        }
        o += utf8_put(cdd_casefold_cp(cp), o);
        s += n;
    }
    *o = '\0';
    return out;
}

/* One character of a printable rendering into tmp (at most 11 bytes);
 * returns the input bytes it consumed. */
static size_t render_char(const unsigned char *s, char tmp[16]) /* fixed: one rendered character */
{
    uint32_t cp;
    const char *err;
    size_t n = utf8_decode(s, &cp, &err);

    if (n == 0) {
        snprintf(tmp, 16, "\\x%02x", s[0]);
        return 1;
    }
    if (cp == '"' || cp == '\\')
        snprintf(tmp, 16, "\\%c", (char)cp);
    else if (cp == '\n')
        snprintf(tmp, 16, "\\n");
    else if (cp == '\t')
        snprintf(tmp, 16, "\\t");
    else if (cp < 0x20 || cp == 0x7F)
        snprintf(tmp, 16, "\\x%02x", (unsigned)cp);
    else if ((cp >= 0x80 && cp <= 0x9F) || is_invisible(cp))
        snprintf(tmp, 16, "\\u{%04x}", (unsigned)cp);
    else {
        memcpy(tmp, s, n);
        tmp[n] = '\0';
    }
    return n;
}

char *cdd_path_printable(const char *name, char *buf, size_t len)
{
    const unsigned char *s = (const unsigned char *)(name ? name : "(null)");
    const unsigned char *p;
    size_t o = 0, total = 0, reserve;
    char tmp[16]; /* fixed: one rendered character */

    if (len == 0)
        return buf;
    for (p = s; *p;) {
        p += render_char(p, tmp);
        total += strlen(tmp);
    }
    /* When it will not all fit, keep room for "..." so the cut shows. */
    reserve = total + 1 <= len ? 0 : len >= 4 ? 3 : 0;
    for (p = s; *p;) {
        size_t n = render_char(p, tmp), tn = strlen(tmp);
        if (o + tn + 1 + reserve > len)
            break;
        memcpy(buf + o, tmp, tn);
        o += tn;
        p += n;
    }
    if (*p && reserve) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

char *cdd_path_shown(const char *name)
{
    const unsigned char *s = (const unsigned char *)(name ? name : "(null)");
    char tmp[16]; /* fixed: one rendered character, at most 11 bytes */
    size_t total = 0;
    for (const unsigned char *p = s; *p;) {
        p += render_char(p, tmp);
        total += strlen(tmp);
    }
    char *out = malloc(total + 1);
    if (!out)
        return NULL;
    return cdd_path_printable(name, out, total + 1);
}

char *cdd_path_shown_bytes(const void *name, size_t len)
{
    const unsigned char *b = name;
    size_t nuls = 0, o = 0;
    for (size_t i = 0; i < len; i++)
        nuls += b[i] == 0;
    if (len > SIZE_MAX / 4)
        return NULL;
    char *raw = malloc(len + 2 * nuls + 1);
    if (!raw)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (b[i] == 0) {
            memcpy(raw + o, "\xE2\x90\x80", 3); /* U+2400 */
            o += 3;
        } else {
            raw[o++] = (char)b[i];
        }
    }
    raw[o] = '\0';
    char *out = cdd_path_shown(raw);
    free(raw);
    return out;
}

const char *cdd_path_q(const char *name)
{
    return cdd_err_keep(cdd_path_shown(name));
}

const char *cdd_path_qn(const void *name, size_t len)
{
    return cdd_err_keep(cdd_path_shown_bytes(name, len));
}

const char *cdd_path_basename(const char *path)
{
    /* Both separators: a user's Windows path (Z:\dir\x.zip) reaches the
     * core as given; archive entry names never hold a backslash. */
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    return base;
}

char *cdd_path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int sep = la > 0 && a[la - 1] != '/';
    char *out = malloc(la + (size_t)sep + lb + 1);
    if (!out)
        return NULL;
    memcpy(out, a, la);
    if (sep)
        out[la] = '/';
    memcpy(out + la + (size_t)sep, b, lb + 1);
    return out;
}

int cdd_path_in_python_package(const char *path)
{
    const char *p = path;
    while (*p) {
        size_t n = strcspn(p, "/\\");
        if ((n == 13 && ascii_ieq(p, "site-packages", 13)) ||
            (n == 13 && ascii_ieq(p, "dist-packages", 13)))
            return 1;
        p += n;
        if (*p)
            p++;
    }
    return 0;
}

int cdd_path_in_state(const char *p)
{
    size_t n = strlen(CDD_STATE_DIR);
    return ascii_ieq(p, CDD_STATE_DIR, n) && (p[n] == '/' || p[n] == '\0');
}

size_t cdd_name_units(const char *name, size_t n)
{
    if (!cdd_platform_is_windows(cdd_platform_host()))
        return n;
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if ((c & 0xc0) != 0x80) /* a lead byte starts a character */
            u += c >= 0xf0 ? 2 : 1; /* past U+FFFF: a surrogate pair */
    }
    return u;
}
