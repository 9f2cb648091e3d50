/* Plans: the per-file list of what an operation does or found, shared by
 * install, uninstall and status, and the comparison of a listed file with
 * what is in the tree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "plan_int.h"

const char *cdd_action_name(enum cdd_action a)
{
    static const char *const names[] = {"new",     "replace", "unchanged",
                                        "remove",  "restore", "missing",
                                        "modified"};
    return (size_t)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

void cdd_plan_item_clear(struct cdd_plan_item *it)
{
    free(it->path);
    free(it->link_target);
    free(it->detail);
    free(it->on_disk);
    free(it->staged);
    cdd_jprev_clear(&it->prev);
    memset(it, 0, sizeof *it);
}

void cdd_plan_clear(struct cdd_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        cdd_plan_item_clear(&p->items[i]);
    free(p->items);
    memset(p, 0, sizeof *p);
}

struct cdd_plan_item *cdd_plan_add(struct cdd_plan *p, const char *path)
{
    if (CDD_GROW(p->items, &p->cap, p->n + 1, CDD_PLAN_MAX_ITEMS,
                 "plan items"))
        return NULL;
    struct cdd_plan_item *it = &p->items[p->n];
    memset(it, 0, sizeof *it);
    if (!(it->path = strdup(path))) {
        cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return NULL;
    }
    p->n++;
    return it;
}

struct cdd_plan_item *cdd_plan_find(struct cdd_plan *p, const char *path,
                                    int case_insensitive)
{
    for (size_t i = 0; i < p->n; i++) {
        int same = case_insensitive ? cdd_path_casecmp(p->items[i].path, path)
                                    : strcmp(p->items[i].path, path);
        if (same == 0)
            return &p->items[i];
    }
    return NULL;
}

int cdd_tree_compare(struct cdd_tree *tree, const char *rel, int is_symlink,
                     const char *link_target, uint64_t size,
                     const uint8_t *sha, int full_hash, enum cdd_action *act,
                     char **detail)
{
    struct cdd_stat st;
    struct cdd_sb why;
    char *target = NULL;
    cdd_sb_init(&why, CDD_TEXT_MAX, "difference");
    int r;
    *act = CDD_ACT_UNCHANGED;
    if (detail)
        *detail = NULL;
    r = cdd_tree_lstat(tree, rel, &st);
    if (r)
        goto out;
    if (st.type == CDD_FT_NONE) {
        *act = CDD_ACT_MISSING;
        r = cdd_sb_setf(&why, "missing");
    } else if (is_symlink) {
        if (st.type != CDD_FT_SYMLINK) {
            *act = CDD_ACT_MODIFIED;
            r = cdd_sb_setf(&why, "is no longer a symlink");
        } else if ((r = cdd_tree_readlink_dup(tree, rel, &target)) != 0) {
            goto out;
        } else if (strcmp(target, link_target) != 0) {
            *act = CDD_ACT_MODIFIED;
            r = cdd_sb_setf(&why, "points to %s instead of %s",
                     target, link_target);
        }
    } else if (st.type != CDD_FT_FILE) {
        *act = CDD_ACT_MODIFIED;
        r = cdd_sb_setf(&why, "is no longer a regular file");
    } else if (st.size != size) {
        *act = CDD_ACT_MODIFIED;
        r = cdd_sb_setf(&why, "size %llu, expected %llu",
                 (unsigned long long)st.size, (unsigned long long)size);
    } else if (full_hash) {
        uint8_t got[CDD_SHA256_LEN];
        r = cdd_tree_sha256(tree, rel, got, NULL);
        if (r)
            goto out;
        if (memcmp(got, sha, CDD_SHA256_LEN) != 0) {
            char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
            cdd_hex_encode(got, CDD_SHA256_LEN, hex);
            *act = CDD_ACT_MODIFIED;
            r = cdd_sb_setf(&why, "sha256 %s differs", hex);
        }
    }
    if (!r && detail && cdd_sb_len(&why) && !(*detail = cdd_sb_take(&why)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
out:
    cdd_sb_free(&why);
    free(target);
    return r;
}

int cdd_check_installed(struct cdd_tree *tree, const struct cdd_rfile_entry *f,
                        int full_hash, enum cdd_action *action, char **detail)
{
    return cdd_tree_compare(tree, f->path, f->is_symlink, f->link_target,
                            f->size, f->sha256, full_hash, action, detail);
}
