/* Fuzz target: the name validator (pathsafe.c), against a second, simple
 * implementation of the same rules written here from their statement
 * (include/cdd/pathsafe.h, docs/design.md "Archive check"), not from the
 * code: the input is decoded whole into code points first (a sequence is
 * valid when it re-encodes to the same bytes), then split at '/', then each
 * component is held against the rules one by one. Both must agree on every
 * input, with and without a trailing '/' allowed, and for link targets.
 *
 * Also the helpers that see the same untrusted names: the printable
 * rendering is one line of valid UTF-8 without control or invisible
 * characters, never longer than its buffer; case folding (duplicate checks)
 * is idempotent, keeps the '/' count, and folds to a name that compares
 * equal to the original. */
#include "fuzz.h"

#include "cdd/pathsafe.h"

/* ---- the reference ------------------------------------------------------ */

#define REF_MAX_PATH 4095 /* whole name, on every OS (pathsafe.h) */
#define REF_MAX_COMPONENT 255

/* The invisible and bidirectional formatting characters, and the
 * look-alikes that Windows' best-fit conversion maps onto ASCII, as ranges
 * (pathsafe.h names both classes; the code points are Unicode's). */
static const uint32_t ref_banned[][2] = {
    {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C}, {0x115F, 0x1160},
    {0x180E, 0x180E}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x206F},
    {0x3164, 0x3164}, {0xFE00, 0xFE0F}, {0xFEFF, 0xFEFF}, {0xFFA0, 0xFFA0},
    {0xFFF0, 0xFFFB}, {0xFFFE, 0xFFFF}, {0xE0000, 0xE0FFF},
    /* look-alikes */
    {0x00A5, 0x00A5}, {0x20A9, 0x20A9}, {0x2044, 0x2044}, {0x2215, 0x2216},
    {0x2236, 0x2236}, {0x29F5, 0x29F5}, {0x29F8, 0x29F9}, {0xFE13, 0xFE13},
    {0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFE68, 0xFE68}, {0xFF01, 0xFF5E},
    /* controls: C0, DEL, C1 */
    {0x00, 0x1F}, {0x7F, 0x9F},
};

static int ref_banned_cp(uint32_t c)
{
    if (c < 0x80 && strchr("\\:<>\"|?*", (int)c) && c != 0)
        return 1;
    for (size_t i = 0; i < sizeof ref_banned / sizeof ref_banned[0]; i++)
        if (c >= ref_banned[i][0] && c <= ref_banned[i][1])
            return 1;
    return 0;
}

static size_t ref_enc_len(uint32_t c)
{
    return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
}

/* Every code point of s (len bytes); 0 when some sequence is not the one
 * valid encoding of a Unicode scalar value. */
static int ref_decode_all(const unsigned char *s, size_t len, uint32_t *cps,
                          size_t *ncp)
{
    *ncp = 0;
    for (size_t i = 0; i < len;) {
        unsigned char b = s[i];
        size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2
                 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0 || i + n > len)
            return 0;
        uint32_t v = n == 1 ? b : b & (0x7Fu >> n);
        for (size_t k = 1; k < n; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return 0;
            v = v << 6 | (s[i + k] & 0x3Fu);
        }
        if (ref_enc_len(v) != n || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
            return 0;
        cps[(*ncp)++] = v;
        i += n;
    }
    return 1;
}

static int ref_reserved(const char *comp, size_t len)
{
    static const char *const names[] = {"con", "prn", "aux", "nul", "conin$",
                                        "conout$", "clock$"};
    static const char *const sup[] = {"\xc2\xb9", "\xc2\xb2", "\xc2\xb3"};
    char base[REF_MAX_COMPONENT + 1];
    size_t n = 0;
    /* The name before the first dot, trailing spaces dropped, lower case. */
    while (n < len && comp[n] != '.') {
        char c = comp[n];
        base[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    while (n > 0 && base[n - 1] == ' ')
        n--;
    base[n] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(base, names[i]) == 0)
            return 1;
    if (strncmp(base, "com", 3) == 0 || strncmp(base, "lpt", 3) == 0) {
        const char *d = base + 3;
        if (d[0] >= '0' && d[0] <= '9' && d[1] == '\0')
            return 1;
        for (size_t i = 0; i < 3; i++)
            if (strcmp(d, sup[i]) == 0)
                return 1;
    }
    return 0;
}

static int ref_component_ok(const char *c, size_t len)
{
    if (len == 0 || len > REF_MAX_COMPONENT)
        return 0;
    if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
        return 0;
    if (c[len - 1] == '.' || c[len - 1] == ' ')
        return 0;
    for (size_t i = 1; i < len; i++)
        if (c[i - 1] == '~' && c[i] >= '0' && c[i] <= '9')
            return 0;
    return !ref_reserved(c, len);
}

static uint32_t ref_cps[REF_MAX_PATH + 1];

static int ref_path_ok(const char *p, int allow_trailing_slash)
{
    size_t len = strlen(p), ncp;
    if (len == 0 || len > REF_MAX_PATH)
        return 0;
    if (!ref_decode_all((const unsigned char *)p, len, ref_cps, &ncp))
        return 0;
    for (size_t i = 0; i < ncp; i++)
        if (ref_banned_cp(ref_cps[i]))
            return 0;
    /* '/' at the start is an absolute path: its first component is empty. */
    if (allow_trailing_slash && len > 1 && p[len - 1] == '/')
        len--;
    size_t start = 0;
    for (size_t i = 0; i <= len; i++)
        if (i == len || p[i] == '/') {
            if (!ref_component_ok(p + start, i - start))
                return 0;
            start = i + 1;
        }
    return 1;
}

static int ref_link_ok(const char *t)
{
    return ref_path_ok(t, 0) && !strchr(t, '/');
}

/* ---- properties of the helpers ------------------------------------------ */

static void check_printable(const char *s)
{
    static const size_t sizes[] = {1, 2, 4, 5, 17, 80, 4200};
    static char buf[4200];
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k], len, ncp;
        memset(buf, 'Z', sizeof buf);
        cdd_path_printable(s, buf, n);
        len = strnlen(buf, n);
        FUZZ_ASSERT(len < n, "no NUL within %zu bytes", n);
        static uint32_t cps[4200];
        FUZZ_ASSERT(ref_decode_all((const unsigned char *)buf, len, cps, &ncp),
                    "rendering is not valid UTF-8");
        for (size_t i = 0; i < ncp; i++) {
            uint32_t c = cps[i];
            FUZZ_ASSERT(c >= 0x20 && !(c >= 0x7F && c <= 0x9F),
                        "control U+%04X in the rendering", (unsigned)c);
            /* Invisible characters are escaped; look-alikes may show. */
            int invisible = 0;
            for (size_t r = 0; r < 15; r++)
                if (c >= ref_banned[r][0] && c <= ref_banned[r][1])
                    invisible = 1;
            FUZZ_ASSERT(!invisible, "invisible U+%04X in the rendering",
                        (unsigned)c);
        }
    }
}

static size_t count_slashes(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '/';
    return n;
}

static void check_fold(const char *s)
{
    char *f = cdd_path_fold(s), *ff = NULL;
    FUZZ_ASSERT(f != NULL, "cdd_path_fold: out of memory");
    ff = cdd_path_fold(f);
    FUZZ_ASSERT(ff != NULL, "cdd_path_fold: out of memory");
    FUZZ_ASSERT(strcmp(f, ff) == 0, "folding is not idempotent");
    FUZZ_ASSERT(count_slashes(f) == count_slashes(s), "folding moved a '/'");
    FUZZ_ASSERT(cdd_path_casecmp(s, s) == 0, "a name differs from itself");
    FUZZ_ASSERT(cdd_path_casecmp(s, f) == 0 && cdd_path_casecmp(f, s) == 0,
                "a name differs from its folding");
    /* Equal foldings, equal names; and the order is antisymmetric. */
    int c1 = cdd_path_casecmp(s, "include/CUDNN.h");
    int c2 = cdd_path_casecmp("include/CUDNN.h", s);
    FUZZ_ASSERT((c1 > 0) - (c1 < 0) == -((c2 > 0) - (c2 < 0)),
                "comparison is not antisymmetric");
    free(f);
    free(ff);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_strdup(data, size);
    const char *why = NULL;
    for (int trail = 0; trail <= 1; trail++) {
        int got = cdd_path_is_safe(s, trail, &why);
        int want = ref_path_ok(s, trail);
        FUZZ_ASSERT(got == want,
                    "cdd_path_is_safe(allow_trailing_slash=%d) says %d, the "
                    "reference %d (%s)", trail, got, want, why ? why : "-");
        FUZZ_ASSERT(got ? why == NULL : why != NULL && *why,
                    "reason %s for verdict %d", why ? why : "(none)", got);
    }
    int got = cdd_link_target_is_safe(s, &why);
    FUZZ_ASSERT(got == ref_link_ok(s), "cdd_link_target_is_safe says %d", got);
    const char *st = cdd_path_strip(s, 1);
    FUZZ_ASSERT(!st || (st > s && st[-1] == '/' && *st &&
                        !memchr(s, '/', (size_t)(st - 1 - s))),
                "cdd_path_strip(1) is not past the first '/'");
    check_printable(s);
    check_fold(s);
    free(s);
    return 0;
}
