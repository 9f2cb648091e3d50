/* Reader for glibc's ld.so.cache (see ldcache.h for the formats).
 *
 * The layout, as glibc's dl-cache.h defines it (all fields little-endian on
 * x86-64, read here byte by byte so the host's byte order never matters):
 *
 *   old header (16 bytes): "ld.so-1.7.0", 1 pad byte, u32 nlibs
 *   old entry  (12 bytes): i32 flags, u32 key, u32 value
 *   new header (48 bytes): "glibc-ld.so.cache" "1.1", u32 nlibs,
 *                          u32 len_strings, u8 flags (byte order), 3 pad,
 *                          u32 extension_offset, u32 unused[3]
 *   new entry  (24 bytes): i32 flags, u32 key, u32 value, u32 osversion,
 *                          u64 hwcap
 *
 * key is the soname and value the full path, both offsets of NUL-terminated
 * strings. Nothing is trusted: the entry table must fit in the buffer, each
 * string must start inside it and end (NUL) inside it within a length
 * limit, and only absolute paths are returned. */
#include "ldcache.h"

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/strbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_HDR 16u
#define OLD_ENT 12u
#define NEW_HDR 48u
#define NEW_ENT 24u
/* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64: the one value x86-64 ld.so accepts
 * (_dl_cache_check_flags); i386 (0x0003) and x32 (0x0803) entries share the
 * file on multilib systems and must not be taken for ours. */
#define FLAGS_X8664 0x0303u
/* Byte-order flag of the new header (glibc >= 2.33); 0 means "not set" and
 * is accepted, as glibc does. */
#define ENDIAN_UNSET 0u
#define ENDIAN_LITTLE 2u
#define MAX_STR 4096u /* longest soname or path we accept */

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

/* The NUL-terminated string at base+off, or NULL when it does not start and
 * end inside the buffer within MAX_STR bytes. */
static const char *str_at(const unsigned char *buf, size_t len, uint64_t base,
                          uint32_t off)
{
    uint64_t at = base + off;
    if (at >= len)
        return NULL;
    size_t room = len - (size_t)at;
    if (room > MAX_STR + 1)
        room = MAX_STR + 1;
    if (!memchr(buf + at, '\0', room))
        return NULL;
    return (const char *)buf + at;
}

/* glibc compares sonames with runs of digits taken as numbers
 * (_dl_cache_libcmp), so "libfoo.so.01" finds "libfoo.so.1". Equality under
 * that rule, without converting the runs (no overflow on long digit runs):
 * leading zeros are dropped and the remaining digits compared as text. */
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int soname_equal(const char *a, const char *b)
{
    while (*a && *b) {
        if (is_digit(*a) && is_digit(*b)) {
            while (*a == '0' && is_digit(a[1]))
                a++;
            while (*b == '0' && is_digit(b[1]))
                b++;
            size_t la = 0, lb = 0;
            while (is_digit(a[la]))
                la++;
            while (is_digit(b[lb]))
                lb++;
            if (la != lb || memcmp(a, b, la) != 0)
                return 0;
            a += la;
            b += lb;
        } else {
            if (*a != *b)
                return 0;
            a++;
            b++;
        }
    }
    return *a == *b;
}

struct result {
    char **v;
    size_t n, cap;
};

/* 0, or CDD_E_TOOLONG past CDD_LDCACHE_MAX_PATHS / CDD_E_NOMEM, recorded. */
static int result_add(struct result *r, const char *s)
{
    int rc = CDD_GROW(r->v, &r->cap, r->n + 1, CDD_LDCACHE_MAX_PATHS,
                      "ld.so cache paths for one soname");
    if (rc)
        return rc;
    char *d = cdd_strdup(s);
    if (!d)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    r->v[r->n++] = d;
    return 0;
}

/* Walk one table. ents: offset of the first entry; esz: entry size;
 * strbase: what string offsets count from. */
static int scan_table(const unsigned char *buf, size_t len, const char *name,
                      uint64_t ents, uint32_t nlibs, uint32_t esz,
                      uint64_t strbase, const char *soname, struct result *res)
{
    if (ents + (uint64_t)nlibs * esz > len)
        return cdd_fail(CDD_E_CORRUPT, name, 0,
                        "ld.so cache: %u entries do not fit in %zu bytes",
                        (unsigned)nlibs, len);
    for (uint32_t i = 0; i < nlibs; i++) {
        const unsigned char *e = buf + ents + (uint64_t)i * esz;
        if (rd32(e) != FLAGS_X8664)
            continue;
        const char *key = str_at(buf, len, strbase, rd32(e + 4));
        if (!key)
            return cdd_fail(CDD_E_CORRUPT, name, 0,
                            "ld.so cache: entry %u: name offset %u out of "
                            "range",
                            (unsigned)i, (unsigned)rd32(e + 4));
        if (!soname_equal(soname, key))
            continue;
        const char *val = str_at(buf, len, strbase, rd32(e + 8));
        if (!val)
            return cdd_fail(CDD_E_CORRUPT, name, 0,
                            "ld.so cache: entry %u: path offset %u out of "
                            "range",
                            (unsigned)i, (unsigned)rd32(e + 8));
        /* ldconfig only writes absolute paths; anything else is not a path
         * the loader could open, and must never reach a load call. */
        if (val[0] != '/')
            continue;
        int r = result_add(res, val);
        if (r == CDD_E_TOOLONG)
            return cdd_fail(r, name, 0, "ld.so cache: more than %u paths for %s",
                            (unsigned)CDD_LDCACHE_MAX_PATHS, soname);
        if (r)
            return r;
    }
    return 0;
}

static int check_endian(const unsigned char *hdr, const char *name)
{
    unsigned e = hdr[28] & 3u;
    if (e != ENDIAN_UNSET && e != ENDIAN_LITTLE)
        return cdd_fail(CDD_E_CORRUPT, name, 0,
                        "ld.so cache: not a little-endian cache (byte-order "
                        "flag %u)",
                        e);
    return 0;
}

int cdd_ldcache_lookup_mem(const void *vbuf, size_t len, const char *name,
                           const char *soname, char ***paths, size_t *n)
{
    const unsigned char *buf = vbuf;
    struct result res = {0};
    int r;
    *paths = NULL;
    *n = 0;
    if (!name)
        name = "ld.so.cache";
    if (!soname || !*soname)
        return cdd_fail(CDD_E_USAGE, name, 0, "empty library name");

    if (len >= NEW_HDR && memcmp(buf, NEW_MAGIC, sizeof NEW_MAGIC - 1) == 0) {
        r = check_endian(buf, name);
        if (!r)
            r = scan_table(buf, len, name, NEW_HDR, rd32(buf + 20), NEW_ENT, 0,
                           soname, &res);
    } else if (len >= OLD_HDR &&
               memcmp(buf, OLD_MAGIC, sizeof OLD_MAGIC - 1) == 0) {
        uint32_t nold = rd32(buf + 12);
        uint64_t end_old = OLD_HDR + (uint64_t)nold * OLD_ENT;
        /* The new table follows the old one at the next 8-byte boundary
         * (ALIGN_CACHE: the alignment of struct cache_file_new). */
        uint64_t nh = (end_old + 7) & ~(uint64_t)7;
        if (end_old > len)
            r = cdd_fail(CDD_E_CORRUPT, name, 0,
                         "ld.so cache: %u entries do not fit in %zu bytes",
                         (unsigned)nold, len);
        else if (nh + NEW_HDR <= len &&
                 memcmp(buf + nh, NEW_MAGIC, sizeof NEW_MAGIC - 1) == 0) {
            r = check_endian(buf + nh, name);
            if (!r)
                r = scan_table(buf, len, name, nh + NEW_HDR,
                               rd32(buf + nh + 20), NEW_ENT, nh, soname, &res);
        } else {
            r = scan_table(buf, len, name, OLD_HDR, nold, OLD_ENT, end_old,
                           soname, &res);
        }
    } else {
        r = cdd_fail(CDD_E_CORRUPT, name, 0,
                     "not an ld.so cache (unknown header)");
    }
    if (r) {
        cdd_ldcache_free(res.v, res.n);
        return r;
    }
    *paths = res.v;
    *n = res.n;
    return 0;
}

int cdd_ldcache_lookup(const char *cache_path, const char *soname,
                       char ***paths, size_t *n)
{
    char *buf = NULL;
    size_t len = 0;
    *paths = NULL;
    *n = 0;
    int r = cdd_fs_read_all(cache_path, CDD_LDCACHE_MAX_SIZE, &buf, &len);
    if (r == CDD_E_STATE) /* read_all's "too large" */
        r = cdd_fail(CDD_E_CORRUPT, cache_path, 0,
                     "ld.so cache larger than %u bytes",
                     (unsigned)CDD_LDCACHE_MAX_SIZE);
    if (!r)
        r = cdd_ldcache_lookup_mem(buf, len, cache_path, soname, paths, n);
    free(buf);
    return r;
}

void cdd_ldcache_free(char **paths, size_t n)
{
    if (!paths)
        return;
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
