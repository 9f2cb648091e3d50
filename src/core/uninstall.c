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
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/txn.h"
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

static int exists(const char *root, const char *rel, int *yes)
{
    char *abs = cdd_path_join(root, rel);
    struct cdd_stat st;
    int r = abs ? cdd_fs_lstat(abs, &st) : cdd_fail(CDD_E_NOMEM, 0, 0, 0);
    free(abs);
    *yes = !r && st.type != CDD_FT_NONE;
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
static int plan_uninstall(const char *root, const struct cdd_receipt *rc,
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
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
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
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
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
        free(src);
        if (r || !there)
            continue;
        struct cdd_plan_item *it = cdd_plan_find(plan, path, 0);
        if (!it && !(it = cdd_plan_add(plan, path)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        if (it->action != CDD_ACT_MODIFIED)
            it->action = CDD_ACT_RESTORE;
    }
    return r;
}

static int queue_uninstall(struct cdd_txn *t, const char *root,
                           const struct cdd_receipt *rc,
                           const struct cdd_plan *plan)
{
    int r = 0;
    for (size_t i = 0; i < plan->n && !r; i++) {
        const struct cdd_plan_item *it = &plan->items[i];
        if (it->action == CDD_ACT_REMOVE) {
            r = cdd_txn_del(t, it->path);
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
    struct cdd_lock *lock = NULL;
    struct cdd_receipt *rc = NULL;
    struct cdd_txn *t = NULL;
    const char *root = o->target->root;
    int r, created = 0;
    size_t n_modified = 0;
    memset(res, 0, sizeof *res);

    if (!o->dry_run) {
        r = cdd_check_write_access(root);
        if (r)
            goto out;
        r = cdd_state_lock(root, o->lock_timeout, &created, &lock);
        if (r)
            goto out;
        r = cdd_txn_recover(root, &res->recovery.found,
                            &res->recovery.rolled_back, &res->recovery.id);
        if (r)
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
        r = cdd_fail(CDD_E_MODIFIED, root, 0,
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
    char detail[256];
    snprintf(detail, sizeof detail,
             "{\"product\":\"%s\",\"version\":\"%s\",\"install\":\"%s\"}",
             rc->product, rc->version, rc->txn_id);
    cdd_log_append(root, "uninstall", res->txn_id, detail);
out:
    if (t)
        cdd_txn_abort(t);
    cdd_lock_release(lock);
    cdd_receipt_free(rc);
    return r;
}

int cdd_recover(const struct cdd_target *t, double lock_timeout,
                struct cdd_recovery *res)
{
    struct cdd_lock *lock = NULL;
    char *state = cdd_path_join(t->root, CDD_STATE_DIR);
    struct cdd_stat st;
    int r, created = 0;
    memset(res, 0, sizeof *res);
    if (!state)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    /* A tree we never touched has nothing to recover: don't create state. */
    r = cdd_fs_lstat(state, &st);
    free(state);
    if (r || st.type == CDD_FT_NONE)
        return r;
    r = cdd_check_write_access(t->root);
    if (!r)
        r = cdd_state_lock(t->root, lock_timeout, &created, &lock);
    if (!r)
        r = cdd_txn_recover(t->root, &res->found, &res->rolled_back, &res->id);
    if (!r && res->found) {
        char detail[64];
        snprintf(detail, sizeof detail, "{\"result\":\"%s\"}",
                 res->rolled_back ? "rolled back" : "completed");
        cdd_log_append(t->root, "recover", res->id, detail);
    }
    cdd_lock_release(lock);
    return r;
}
