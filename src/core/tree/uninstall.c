/* uninstall: remove exactly what the receipt lists, bring back what that
 * install replaced (its files and the earlier receipt), in one transaction;
 * and recover, which finishes or undoes an interrupted transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonw.h"
#include "cdd/pathsafe.h"
#include "idcache.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/tree.h"
#include "txn.h"
#include "plan_int.h"

void cdd_uninstall_result_clear(struct cdd_uninstall_result *r)
{
    if (!r)
        return;
    cdd_plan_clear(&r->plan);
    free(r->product_version);
    free(r->txn_id);
    cdd_recovery_clear(&r->recovery);
    memset(r, 0, sizeof *r);
}

static int exists(struct cdd_tree *tree, const char *rel, int *yes)
{
    struct cdd_stat st;
    int r = cdd_tree_lstat(tree, rel, &st);
    *yes = !r && st.type != CDD_FT_NONE;
    return r;
}

/* A backup that would come back: it must be what the receipt recorded (a
 * regular file of the recorded size and sha256, or a link with the
 * recorded target; an unrecorded one, from an older receipt, only a regular
 * file). Anything else is tampered state: CDD_E_STATE naming the receipt
 * and the record, before anything changes. */
static int check_backup(struct cdd_tree *tree, const struct cdd_receipt *rc,
                        size_t i, const char *src)
{
    static const struct cdd_jprev none = {0};
    const struct cdd_jprev *pv =
        rc->backed_up_prev ? &rc->backed_up_prev[i] : &none;
    struct cdd_stat st;
    char why[160] = ""; /* fixed: the reasons below name no path */
    int r = cdd_tree_lstat(tree, src, &st);
    if (r)
        return r;
    enum cdd_ftype want = pv->type == CDD_FT_NONE ? CDD_FT_FILE : pv->type;
    if (st.type != want) {
        snprintf(why, sizeof why, "recorded as a %s, found a %s",
                 want == CDD_FT_SYMLINK ? "link" : "regular file",
                 st.type == CDD_FT_SYMLINK ? "link"
                 : st.type == CDD_FT_FILE  ? "regular file"
                 : st.type == CDD_FT_DIR   ? "folder"
                                           : "special file");
    } else if (want == CDD_FT_SYMLINK) {
        char *target = NULL;
        r = cdd_tree_readlink_dup(tree, src, &target);
        if (r)
            return r;
        if (strcmp(target, pv->target) != 0)
            snprintf(why, sizeof why, "the link's target differs from the "
                                      "recorded one");
        free(target);
    } else if (pv->type == CDD_FT_FILE) {
        uint8_t got[CDD_SHA256_LEN];
        uint64_t size = 0;
        if (st.size != pv->size)
            snprintf(why, sizeof why, "size %llu, recorded %llu",
                     (unsigned long long)st.size,
                     (unsigned long long)pv->size);
        else if ((r = cdd_tree_sha256(tree, src, got, &size)) != 0)
            return r;
        else if (memcmp(got, pv->sha256, CDD_SHA256_LEN) != 0)
            snprintf(why, sizeof why, "its sha256 differs from the recorded "
                                      "one");
    }
    if (!why[0])
        return 0;
    char *receipt = cdd_tree_abs(tree, CDD_RECEIPT_FILE);
    r = cdd_fail(CDD_E_STATE, receipt ? receipt : CDD_RECEIPT_FILE, 0,
                 "backed_up[%zu]: %s is not what was recorded (%s); nothing "
                 "was changed",
                 i, src, why);
    free(receipt);
    return r;
}

static int is_backed_up(const struct cdd_receipt *rc, const char *path)
{
    for (size_t i = 0; i < rc->n_backed_up; i++)
        if (strcmp(rc->backed_up[i], path) == 0)
            return 1;
    return 0;
}

static char *backup_rel(const struct cdd_receipt *rc, const char *path)
{
    size_t n = strlen(CDD_BACKUP_DIR) + strlen(rc->txn_id) + strlen(path) + 3;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s/%s", CDD_BACKUP_DIR, rc->txn_id, path);
    return p;
}

/* Decide, for every receipt file, remove or restore; refuse files changed
 * since install unless forced. */
static int plan_uninstall(struct cdd_tree *root, const struct cdd_receipt *rc,
                          int force, struct cdd_plan *plan, size_t *n_modified)
{
    int r = 0;
    *n_modified = 0;
    for (size_t i = 0; i < rc->n_files && !r; i++) {
        const struct cdd_rfile_entry *f = &rc->files[i];
        enum cdd_action a;
        char *detail = NULL;
        if (f->preexisting) {
            /* It was there, identical, before the install: it stays. */
            struct cdd_plan_item *it = cdd_plan_add(plan, f->path);
            if (!it)
                return cdd_last_error()->code;
            it->role = f->role;
            it->action = CDD_ACT_UNCHANGED;
            continue;
        }
        r = cdd_check_installed(root, f, 1, &a, &detail);
        if (r)
            break;
        struct cdd_plan_item *it = cdd_plan_add(plan, f->path);
        if (!it) {
            free(detail);
            return cdd_last_error()->code;
        }
        it->role = f->role;
        it->detail = detail;
        if (a == CDD_ACT_MODIFIED && !force)
            (*n_modified)++;
        it->action = a == CDD_ACT_MISSING ? CDD_ACT_MISSING
                     : a == CDD_ACT_MODIFIED && !force ? CDD_ACT_MODIFIED
                                                       : CDD_ACT_REMOVE;
    }
    /* What the install replaced comes back, receipt and manifest included. */
    for (size_t i = 0; i < rc->n_backed_up && !r; i++) {
        const char *path = rc->backed_up[i];
        char *src = backup_rel(rc, path);
        int there = 0;
        r = src ? exists(root, src, &there) : cdd_fail(CDD_E_NOMEM, 0, 0, 0);
        if (!r && there)
            r = check_backup(root, rc, i, src);
        free(src);
        if (r || !there)
            continue;
        struct cdd_plan_item *it = cdd_plan_find(plan, path, 0);
        if (!it && !(it = cdd_plan_add(plan, path)))
            return cdd_last_error()->code;
        if (it->action != CDD_ACT_MODIFIED)
            it->action = CDD_ACT_RESTORE;
    }
    return r;
}

static int queue_uninstall(struct cdd_txn *t, struct cdd_tree *root,
                           const struct cdd_receipt *rc,
                           const struct cdd_plan *plan)
{
    int r = 0;
    for (size_t i = 0; i < plan->n && !r; i++) {
        const struct cdd_plan_item *it = &plan->items[i];
        if (it->action == CDD_ACT_REMOVE) {
            /* Checked moments ago against the receipt's sha256: the
             * journal records that for its backup, not a second hash. */
            const struct cdd_rfile_entry *f = cdd_receipt_file(rc, it->path);
            r = cdd_txn_del(t, it->path);
            if (!r && f && !f->is_symlink) {
                struct cdd_jprev pv = {CDD_FT_FILE, f->size, {0}, NULL};
                memcpy(pv.sha256, f->sha256, CDD_SHA256_LEN);
                r = cdd_txn_expect(t, it->path, &pv);
            }
        } else if (it->action == CDD_ACT_RESTORE) {
            char *src = backup_rel(rc, it->path);
            r = src ? cdd_txn_put(t, src, it->path)
                    : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            free(src);
        }
    }
    /* With no earlier receipt to restore, the tree stops describing an
     * install: remove the receipt and manifest copy in the same commit. */
    const char *state[] = {CDD_RECEIPT_FILE, CDD_MANIFEST_COPY};
    for (size_t i = 0; i < 2 && !r; i++) {
        int there = 0;
        if (is_backed_up(rc, state[i]))
            continue;
        r = exists(root, state[i], &there);
        if (!r && there)
            r = cdd_txn_del(t, state[i]);
    }
    /* Folders the install created go too when this leaves them empty,
     * innermost first, in the same commit. */
    for (size_t i = rc->n_created_dirs; i-- > 0 && !r;)
        r = cdd_txn_rmdir(t, rc->created_dirs[i]);
    return r;
}

int cdd_uninstall(const struct cdd_uninstall_opts *o,
                  struct cdd_uninstall_result *res)
{
    struct cdd_receipt *rc = NULL;
    struct cdd_txn *t = NULL;
    struct cdd_tree *root = o->tree;
    const char *shown = cdd_tree_root(root);
    int r, locked = 0;
    size_t n_modified = 0;
    memset(res, 0, sizeof *res);

    if (!o->dry_run) {
        /* A tree with no state has nothing of ours: no state is created. */
        r = cdd_txn_lock(root, o->lock_timeout, 0, &locked, &res->recovery);
        if (r || !locked)
            goto out;
    }
    r = cdd_receipt_load(root, &rc);
    if (r || !rc)
        goto out;
    res->had_receipt = 1;
    size_t n = strlen(rc->product) + strlen(rc->version) + 2;
    if ((res->product_version = malloc(n)) != NULL)
        snprintf(res->product_version, n, "%s %s", rc->product, rc->version);
    r = plan_uninstall(root, rc, o->force, &res->plan, &n_modified);
    if (r)
        goto out;
    if (n_modified) {
        const struct cdd_plan_item *first = NULL;
        for (size_t i = 0; i < res->plan.n && !first; i++)
            if (res->plan.items[i].action == CDD_ACT_MODIFIED)
                first = &res->plan.items[i];
        r = cdd_fail(CDD_E_MODIFIED, shown, 0,
                     "%zu file(s) changed since install (first: %s: %s); "
                     "nothing was removed; use --force to remove them anyway",
                     n_modified, first->path,
                     first->detail ? first->detail : "changed");
        goto out;
    }
    if (o->dry_run)
        goto out;
    r = cdd_txn_begin(root, "uninstall", &t);
    if (!r)
        r = queue_uninstall(t, root, rc, &res->plan);
    if (!r && !(res->txn_id = strdup(cdd_txn_id(t))))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (r)
        goto out;
    r = cdd_txn_commit(t, 1);
    t = NULL;
    if (r)
        goto out;
    res->changed = 1;
    /* The identity records (tree/idcache.h) describe files that are gone:
     * removed after the commit, best effort (a record left over vouches for
     * nothing: it must match the receipt's path and digest). */
    if (cdd_tree_unlink(root, CDD_IDCACHE_FILE) != 0)
        cdd_clear_error();
    /* So does the verify record: it names a receipt by digest, so it could
     * never describe the restored one, but nothing stale stays. */
    if (cdd_tree_unlink(root, CDD_VERIFIED_FILE) != 0)
        cdd_clear_error();
    struct cdd_jw *d = cdd_jw_new();
    cdd_jw_object(d, NULL);
    cdd_jw_str(d, "product", rc->product);
    cdd_jw_str(d, "version", rc->version);
    cdd_jw_str(d, "install", rc->txn_id);
    cdd_jw_end(d);
    cdd_log_append(root, "uninstall", res->txn_id, d);
    /* No receipt came back: the tree holds nothing of ours, and the state
     * folder goes when only our leftovers are in it (tree.h). */
    int had_prev = is_backed_up(rc, CDD_RECEIPT_FILE);
    if (!had_prev && cdd_tree_remove_state(root, &res->state_removed) != 0)
        cdd_clear_error(); /* the uninstall itself is done */
out:
    if (t)
        cdd_txn_abort(t);
    cdd_receipt_free(rc);
    return r;
}

void cdd_recover_record(struct cdd_tree *tree, const struct cdd_recovery *res)
{
    if (!res->found || !cdd_tree_locked(tree))
        return;
    struct cdd_jw *d = cdd_jw_new();
    cdd_jw_object(d, NULL);
    cdd_jw_str(d, "result", res->rolled_back ? "rolled back" : "completed");
    cdd_jw_end(d);
    cdd_log_append(tree, "recover", res->id, d);
}
