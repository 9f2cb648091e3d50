/* The download cache's layout and its rules: where an entry lives, that a
 * cached file is re-hashed before use (and deleted when it no longer
 * matches), and that a finished download enters the cache by one rename. */
#include "cdd/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"

#define UNPINNED_DIR "unpinned"

int cdd_cache_dir(const char *override, char **out)
{
    *out = override ? cdd_absolute_path(override) : cdd_default_cache_dir();
    if (*out)
        return 0;
    if (override)
        return cdd_fail(CDD_E_NOMEM, override, 0, NULL);
    return cdd_fail(CDD_E_NOTFOUND, NULL, 0,
                    "no folder for the download cache: neither "
                    "XDG_CACHE_HOME nor HOME names one; give --cache-dir DIR");
}

static char *concat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s%s%s", a, b, c);
    return r;
}

void cdd_cache_entry_clear(struct cdd_cache_entry *e)
{
    if (!e)
        return;
    free(e->dir);
    free(e->path);
    free(e->part);
    free(e->lock);
    memset(e, 0, sizeof *e);
}

/* The name becomes a path component in the cache: it must be one safe
 * component (manifests are validated, but this is the last line). */
static int check_filename(const char *filename)
{
    const char *why = NULL;
    if (!filename || strchr(filename, '/') ||
        !cdd_path_is_safe(filename, 0, &why))
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "archive file name '%s' cannot name a cache entry%s%s",
                        filename ? filename : "", why ? ": " : "",
                        why ? why : "");
    return 0;
}

int cdd_cache_entry_init(const char *cache, const uint8_t *sha256,
                         const char *filename, struct cdd_cache_entry *e)
{
    char hex[CDD_SHA256_HEX];
    int r;
    memset(e, 0, sizeof *e);
    if ((r = check_filename(filename)))
        return r;
    if (sha256)
        cdd_hex_encode(sha256, CDD_SHA256_LEN, hex);
    e->dir = cdd_path_join(cache, sha256 ? hex : UNPINNED_DIR);
    e->path = e->dir ? cdd_path_join(e->dir, filename) : NULL;
    e->part = e->path ? concat3(e->path, ".part", "") : NULL;
    e->lock = e->dir ? cdd_path_join(e->dir, ".lock") : NULL;
    if (!e->dir || !e->path || !e->part || !e->lock) {
        r = cdd_fail(CDD_E_NOMEM, cache, 0, NULL);
        goto out;
    }
    r = cdd_fs_mkdirs(e->dir, NULL);
out:
    if (r)
        cdd_cache_entry_clear(e);
    return r;
}

int cdd_cache_lookup(const struct cdd_cache_entry *e,
                     const uint8_t sha256[CDD_SHA256_LEN], int has_size,
                     uint64_t size, int *hit)
{
    struct cdd_stat st;
    uint8_t got[CDD_SHA256_LEN];
    uint64_t got_size = 0;
    int r;
    *hit = 0;
    if ((r = cdd_fs_lstat(e->path, &st)))
        return r;
    if (st.type == CDD_FT_NONE)
        return 0;
    if (st.type == CDD_FT_FILE && (!has_size || st.size == size)) {
        if ((r = cdd_sha256_file(e->path, got, &got_size)))
            return r;
        if (memcmp(got, sha256, CDD_SHA256_LEN) == 0 &&
            (!has_size || got_size == size)) {
            *hit = 1;
            return 0;
        }
    }
    /* Bit rot, a truncated copy, someone's edit: whatever it is, it is not
     * the pinned file, and leaving it would fail every later run too. */
    if (st.type == CDD_FT_DIR)
        return cdd_fs_remove_tree(e->path);
    return cdd_fs_unlink(e->path);
}

int cdd_cache_commit(const char *cache, const char *from,
                     const uint8_t sha256[CDD_SHA256_LEN],
                     const char *filename, char **path_out)
{
    char hex[CDD_SHA256_HEX];
    char *dir = NULL, *dest = NULL;
    int r;
    *path_out = NULL;
    if ((r = check_filename(filename)))
        return r;
    cdd_hex_encode(sha256, CDD_SHA256_LEN, hex);
    dir = cdd_path_join(cache, hex);
    dest = dir ? cdd_path_join(dir, filename) : NULL;
    if (!dest) {
        r = cdd_fail(CDD_E_NOMEM, cache, 0, NULL);
        goto out;
    }
    if ((r = cdd_fs_mkdirs(dir, NULL)) || (r = cdd_fs_rename(from, dest)))
        goto out;
    /* A crash after this point must not lose the rename: the next run
     * would download the whole archive again. */
    if ((r = cdd_fs_sync_dir(dir)))
        goto out;
    *path_out = dest;
    dest = NULL;
out:
    free(dir);
    free(dest);
    return r;
}
