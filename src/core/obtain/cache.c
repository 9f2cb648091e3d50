/* The download cache's layout and its rules: where an entry lives, that a
 * cached file is re-hashed before use (and deleted when it no longer
 * matches), and that a finished download enters the cache by one rename. */
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

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

/* The entry's names and paths fit the file system, the download's ".part"
 * beside the file included: refused as too long before anything is made
 * (never cut, never left to the OS as "cannot create"). */
static int check_bounds(const char *filename, const struct cdd_cache_entry *e)
{
    static const char part[] = ".part";
    size_t units = cdd_name_units(filename, strlen(filename));
    if (units + sizeof part - 1 > CDD_NAME_MAX) {
        char *shown = cdd_path_shown(filename);
        int r = cdd_fail(CDD_E_TOOLONG, NULL, 0,
                         "archive file name \"%s\" is %zu %s long: its "
                         "download's \"%s\" file would pass the %d a folder "
                         "entry holds (at most %zu for an archive's name)",
                         CDD_SHOWN(shown), units,
                         CDD_HOST_WINDOWS ? "UTF-16 units" : "bytes", part,
                         CDD_NAME_MAX,
                         (size_t)CDD_NAME_MAX - (sizeof part - 1));
        free(shown);
        return r;
    }
    size_t total = strlen(e->part);
    if (total > (size_t)CDD_PATH_MAX)
        return cdd_fail(CDD_E_TOOLONG, e->dir, 0,
                        "the download cache's entry path would be %zu bytes, "
                        "longer than the %zu a path may have here; give "
                        "--cache-dir a shorter folder", total,
                        (size_t)CDD_PATH_MAX);
    return 0;
}

int cdd_cache_entry_init(const char *cache, const uint8_t *sha256,
                         const char *filename, struct cdd_cache_entry *e)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
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
    if ((r = check_bounds(filename, e)) != 0)
        goto out;
    if (!(r = cdd_fs_mkdirs(e->dir, NULL)))
        r = cdd_cache_check_dir(e->dir);
out:
    if (r)
        cdd_cache_entry_clear(e);
    return r;
}

/* ---- what the cache holds is checked like a tree's state folder ----------
 * The cache may be shared with other accounts (docs/fetch.md): an entry's
 * folder is used only when it is a folder (no link followed) that the
 * caller owns and nobody else can write; a file in it only when it is a
 * regular file of the caller's with one link. */
static const char *finfo_fault(const struct cdd_finfo *fi, int folder)
{
    if (fi->type == CDD_FT_SYMLINK)
        return "a link (never followed in the cache)";
    if (fi->type != (folder ? CDD_FT_DIR : CDD_FT_FILE))
        return folder ? "not a folder" : "not a regular file";
    if (fi->owner_known && !fi->owner_is_caller)
        return "owned by another account";
    if (folder && (fi->other_writable || fi->group_writable))
        return "writable by other accounts";
    if (!folder && fi->nlink != 1)
        return "a file with more than one hard link (another name for a "
               "file elsewhere)";
    return NULL;
}

int cdd_cache_check_dir(const char *dir)
{
    struct cdd_finfo fi;
    int r = cdd_fs_linfo(dir, &fi);
    const char *why;
    if (r)
        return r;
    if (!(why = finfo_fault(&fi, 1)))
        return 0;
    return cdd_fail(CDD_E_UNSAFE, dir, 0,
                    "cache folder is %s (owner uid %lld): not used; remove "
                    "it, or give --cache-dir a folder of your own",
                    why, fi.owner);
}

int cdd_cache_vet_file(const char *path, int *present)
{
    struct cdd_finfo fi;
    const char *why;
    int r;
    *present = 0;
    if ((r = cdd_fs_linfo(path, &fi)))
        return r;
    if (fi.type == CDD_FT_NONE)
        return 0;
    if (!(why = finfo_fault(&fi, 0))) {
        *present = 1;
        return 0;
    }
    /* Ours to remove (the folder is the caller's, checked above): the name
     * goes, whatever it names; the file elsewhere is not touched. */
    r = fi.type == CDD_FT_DIR ? cdd_fs_remove_tree(path) : cdd_fs_unlink(path);
    if (!r)
        return 0;
    return cdd_fail(CDD_E_UNSAFE, path, 0,
                    "cache entry is %s (owner uid %lld), and it cannot be "
                    "removed (%s): not used; remove it, or give --cache-dir "
                    "a folder of your own",
                    why, fi.owner, cdd_last_error()->msg);
}

int cdd_cache_check_open(struct cdd_file *f, const char *path,
                         struct cdd_finfo *fi)
{
    const char *why;
    int r = cdd_file_info(f, fi);
    if (r)
        return r;
    if (!(why = finfo_fault(fi, 0)))
        return 0;
    return cdd_fail(CDD_E_UNSAFE, path, 0,
                    "cache entry became %s while it was opened: not used",
                    why);
}

int cdd_cache_lookup(const struct cdd_cache_entry *e,
                     const uint8_t sha256[CDD_SHA256_LEN], int has_size,
                     uint64_t size, int *hit)
{
    struct cdd_stat st;
    uint8_t got[CDD_SHA256_LEN];
    uint64_t got_size = 0;
    int r;
    int present = 0;
    *hit = 0;
    /* A link, a hard link, another account's file: removed, not hashed. */
    if ((r = cdd_cache_vet_file(e->path, &present)) || !present)
        return r;
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
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
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
