/* verify's proof of the bytes it loads (issue 18). Hashing a path and then
 * loading the path lets a writer swap the file in between; so each library
 * is opened once, beneath the tree handle, and read once: the bytes read
 * are hashed and written to a private copy at the same time, the digest is
 * compared with the one recorded (the receipt's, else the manifest's), and
 * only the copy is loaded. Nobody else can write the copy (a fresh 0700
 * folder; on Windows a protected DACL), so what the loader maps is what was
 * hashed. The copy keeps the installed file name (the soname / DLL name):
 * glibc and Windows answer a later request for that name with the module
 * already loaded, which is how cuDNN's own loads of its sub-libraries by
 * bare name end at the proven copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/pathsafe.h"
#include "cdd/tree.h"
#include "verify_int.h"

#define MAX_HOPS 16
#define COPY_BUF (256u * 1024u)

int cdd_verify_is_changed(const struct vctx *c, const char *rel)
{
    for (size_t i = 0; i < c->n_changed; i++)
        if (strcmp(c->changed[i], rel) == 0)
            return 1;
    return 0;
}

static int set_skip(struct vlib *l, const char *fmt, const char *arg)
{
    size_t len = strlen(fmt) + (arg ? strlen(arg) : 0) + 1;
    free(l->skip);
    if (!(l->skip = malloc(len)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    snprintf(l->skip, len, fmt, arg ? arg : "");
    return 0;
}

/* The folder part of a tree path plus name ("lib64/x" + "y" -> "lib64/y"):
 * a recorded link target is a plain name in its link's folder. */
static char *sibling(const char *rel, const char *name)
{
    const char *slash = strrchr(rel, '/');
    size_t keep = slash ? (size_t)(slash - rel) + 1 : 0;
    size_t len = keep + strlen(name) + 1;
    char *s = malloc(len);
    if (s) {
        memcpy(s, rel, keep);
        memcpy(s + keep, name, len - keep);
    }
    return s;
}

static int plain_name(const char *t)
{
    return t && *t && !strchr(t, '/') && !strchr(t, '\\') &&
           strcmp(t, ".") != 0 && strcmp(t, "..") != 0;
}

/* Where the recorded chain of l ends and what its bytes must hash to.
 * 0 with *real (malloc'd tree path) and sha when recorded; 0 with *real
 * NULL and l->skip set when not. */
static int recorded(struct vctx *c, struct vlib *l, char **real,
                    uint8_t sha[CDD_SHA256_LEN], uint64_t *size)
{
    char *cur = strdup(l->rel);
    *real = NULL;
    if (!cur)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (c->rc) {
        for (int hop = 0; hop < MAX_HOPS; hop++) {
            const struct cdd_rfile_entry *e = cdd_receipt_file(c->rc, cur);
            if (cdd_verify_is_changed(c, cur)) {
                free(cur);
                return set_skip(l, "changed since install, not loaded", NULL);
            }
            if (!e) {
                int r = set_skip(l, "%s is not in the receipt: its bytes "
                                    "cannot be proven, not loaded", cur);
                free(cur);
                return r;
            }
            if (!e->is_symlink) {
                memcpy(sha, e->sha256, CDD_SHA256_LEN);
                *size = e->size;
                *real = cur;
                return 0;
            }
            if (!plain_name(e->link_target))
                break;
            char *next = sibling(cur, e->link_target);
            free(cur);
            if (!(cur = next))
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        free(cur);
        return set_skip(l, "its recorded symlink chain does not end at a "
                           "file: not loaded", NULL);
    }
    /* No receipt: the manifest, by archive path, then the file's tree
     * path from the layout. */
    free(cur);
    char *ap = strdup(l->archive_path);
    if (!ap)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (int hop = 0; hop < MAX_HOPS; hop++) {
        const struct cdd_mfile *f = cdd_manifest_file(c->m, ap);
        if (!f)
            break;
        if (f->role == CDD_ROLE_SYMLINK) {
            if (!plain_name(f->target))
                break;
            char *next = sibling(ap, f->target);
            free(ap);
            if (!(ap = next))
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            continue;
        }
        char *dest = NULL;
        int r = cdd_layout_entry_dest(c->layout, c->m, f->role, f->path,
                                      f->target, &dest);
        free(ap);
        if (r)
            return r;
        if (cdd_verify_is_changed(c, dest)) {
            free(dest);
            return set_skip(l, "not as the manifest says, not loaded", NULL);
        }
        if (!f->has_sha256) {
            r = set_skip(l, "neither a receipt nor the manifest records the "
                            "sha256 of %s: its bytes cannot be proven, not "
                            "loaded", dest);
            free(dest);
            return r;
        }
        memcpy(sha, f->sha256, CDD_SHA256_LEN);
        *size = f->has_size ? f->size : UINT64_MAX;
        *real = dest;
        return 0;
    }
    free(ap);
    return set_skip(l, "the manifest does not lead from it to a file: not "
                       "loaded", NULL);
}

/* Read rf to its end into a new file at path, hashing what was read; more
 * than limit bytes is a changed file (and stops the copy). */
static int copy_hashing(struct cdd_rfile *rf, const char *path,
                        uint64_t limit, uint8_t digest[CDD_SHA256_LEN],
                        uint64_t *total, int *too_long)
{
    struct cdd_sha256 *h = NULL;
    struct cdd_file *out = NULL;
    unsigned char *buf = malloc(COPY_BUF);
    int r = buf ? cdd_sha256_new(&h) : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    *total = 0;
    *too_long = 0;
    if (!r)
        r = cdd_fs_create(path, 1, &out);
    while (!r) {
        size_t got = 0;
        if ((r = cdd_rfile_read(rf, buf, COPY_BUF, &got)) != 0 || got == 0)
            break;
        *total += got;
        if (limit != UINT64_MAX && *total > limit) {
            *too_long = 1;
            break;
        }
        r = cdd_sha256_update(h, buf, got);
        if (!r)
            r = cdd_file_write(out, buf, got);
    }
    if (!r)
        r = cdd_sha256_final(h, digest);
    if (out) {
        if (r || *too_long)
            cdd_file_abort(out);
        else
            r = cdd_file_close(out);
    }
    cdd_sha256_free(h);
    free(buf);
    return r;
}

int cdd_verify_prove(struct vctx *c, struct vlib *l)
{
    char *real = NULL, *copy = NULL;
    struct cdd_rfile *rf = NULL;
    uint8_t want[CDD_SHA256_LEN], got[CDD_SHA256_LEN];
    uint64_t size = 0, total = 0;
    int too_long = 0;
    int r = recorded(c, l, &real, want, &size);
    if (r || !real)
        return r;
    if (!c->private_dir && (r = cdd_lib_private_dir(&c->private_dir)) != 0)
        goto out;
    if (!(copy = cdd_path_join(c->private_dir, l->name))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    /* Opened beneath the tree: no link followed out, none at the end (the
     * chain was walked by the record, not by the tree's links). */
    if ((r = cdd_tree_open_read(c->tree, real, &rf)) != 0) {
        if (r == CDD_E_NOMEM) /* not a file we could not open */
            goto out;
        r = set_skip(l, "cannot be opened beneath the tree (%s): not loaded",
                     cdd_last_error()->msg);
        cdd_clear_error();
        goto out;
    }
    r = copy_hashing(rf, copy, size, got, &total, &too_long);
    if (r) {
        /* The tree's file could not be read, or the copy not written: the
         * library is not loaded; only a full private folder is an error
         * worth stopping for, and it says so. */
        if (r == CDD_E_NOMEM)
            goto out;
        r = set_skip(l, "could not be copied for loading (%s): not loaded",
                     cdd_last_error()->msg);
        cdd_clear_error();
        cdd_fs_unlink_quiet(copy);
        goto out;
    }
    if (too_long || (size != UINT64_MAX && total != size) ||
        memcmp(got, want, CDD_SHA256_LEN) != 0) {
        cdd_fs_unlink_quiet(copy);
        r = set_skip(l, "changed since install, not loaded (%s's sha256 is "
                        "not the recorded one)", real);
        goto out;
    }
    l->copy = copy;
    memcpy(l->sha, got, CDD_SHA256_LEN);
    copy = NULL;
out:
    cdd_rfile_close(rf);
    free(copy);
    free(real);
    return r;
}

void cdd_verify_copies_remove(struct vctx *c)
{
    if (!c->private_dir)
        return;
    /* Only after every library was closed: Windows keeps a loaded DLL's
     * file from being deleted. */
    int r = cdd_fs_remove_tree(c->private_dir);
    /* Out of memory half-way (the walk allocates its paths): once more, so
     * that a passing shortage leaves no copy behind (malloc trials). */
    if (r == CDD_E_NOMEM)
        r = cdd_fs_remove_tree(c->private_dir);
    if (r)
        cdd_clear_error();
    free(c->private_dir);
    c->private_dir = NULL;
}
