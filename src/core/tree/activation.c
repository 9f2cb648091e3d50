/* Conda activation scripts (envset.h, cdd_activation_write): written into a
 * prefix in one transaction together with its receipt, which lists them
 * (role activation) beside the files of the install; the install's own
 * record (transaction id, backups, folders) is kept, so uninstall removes
 * the scripts with the rest and still restores what the install replaced. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/envset.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/hash.h"
#include "cdd/jsonw.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/strbuf.h"
#include "txn.h"
#include "plan_int.h"

static int sha_text(const char *text, uint8_t out[CDD_SHA256_LEN])
{
    struct cdd_sha256 *h = NULL;
    int r = cdd_sha256_new(&h);
    if (!r)
        r = cdd_sha256_update(h, text, strlen(text));
    if (!r)
        r = cdd_sha256_final(h, out);
    cdd_sha256_free(h);
    return r;
}

static struct cdd_rfile_entry *listed(struct cdd_receipt *rc, const char *p)
{
    for (size_t i = 0; i < rc->n_files; i++)
        if (strcmp(rc->files[i].path, p) == 0)
            return &rc->files[i];
    return NULL;
}

/* New, replace or unchanged for each file; refuse what is not ours. */
static int plan_files(struct cdd_tree *tree, struct cdd_receipt *rc,
                      const struct cdd_envfile *files, size_t n,
                      struct cdd_plan *plan)
{
    for (size_t i = 0; i < n; i++) {
        const char *why = NULL;
        struct cdd_stat st;
        struct cdd_plan_item *it;
        uint8_t sha[CDD_SHA256_LEN], have[CDD_SHA256_LEN];
        int r;
        if (!cdd_path_is_safe(files[i].path, 0, &why))
            return cdd_fail(CDD_E_USAGE, files[i].path, 0, "unsafe path: %s",
                            why ? why : "rejected");
        if ((r = sha_text(files[i].text, sha)) ||
            (r = cdd_tree_lstat(tree, files[i].path, &st)))
            return r;
        const struct cdd_rfile_entry *f = listed(rc, files[i].path);
        if (st.type != CDD_FT_NONE &&
            (st.type != CDD_FT_FILE || !f || f->role != CDD_ROLE_ACTIVATION))
            return cdd_fail(CDD_E_TARGET, cdd_tree_root(tree), 0,
                            "%s exists and is not an activation script "
                            "cudnn-deploy wrote; move it away first",
                            files[i].path);
        if (!(it = cdd_plan_add(plan, files[i].path)))
            return cdd_last_error()->code;
        it->role = CDD_ROLE_ACTIVATION;
        it->size = strlen(files[i].text);
        memcpy(it->sha256, sha, CDD_SHA256_LEN);
        it->action = CDD_ACT_NEW;
        if (st.type == CDD_FT_FILE) {
            if ((r = cdd_tree_sha256(tree, files[i].path, have, NULL)))
                return r;
            it->action = memcmp(have, sha, CDD_SHA256_LEN) == 0 &&
                                 st.size == it->size
                             ? CDD_ACT_UNCHANGED
                             : CDD_ACT_REPLACE;
        }
    }
    return 0;
}

static int stage_text(struct cdd_tree *tree, const char *rel,
                      const char *text, int64_t *mtime_ns)
{
    struct cdd_stat st;
    int r = cdd_tree_write_new(tree, rel, text, strlen(text));
    if (!r && mtime_ns && !(r = cdd_tree_lstat(tree, rel, &st)))
        *mtime_ns = st.mtime_ns;
    return r;
}

static int add_dir(struct cdd_receipt *rc, const char *d)
{
    for (size_t i = 0; i < rc->n_created_dirs; i++)
        if (strcmp(rc->created_dirs[i], d) == 0)
            return 0;
    /* A created folder is a prefix of an entry: no more of them than
     * entries in a package. */
    int r = CDD_GROW(rc->created_dirs, NULL, rc->n_created_dirs + 1,
                     CDD_MAX_ENTRIES, "receipt folders");
    if (r)
        return r;
    if (!(rc->created_dirs[rc->n_created_dirs] = strdup(d)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    rc->n_created_dirs++;
    return 0;
}

/* The folders of rel the commit will create, outermost first: uninstall
 * removes them again when they end up empty. */
static int note_new_dirs(struct cdd_tree *tree, struct cdd_receipt *rc,
                         const char *rel)
{
    char *d = strdup(rel);
    int r = d ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (char *s = d ? strchr(d, '/') : NULL; !r && s; s = strchr(s + 1, '/')) {
        struct cdd_stat st;
        *s = '\0';
        r = cdd_tree_lstat(tree, d, &st);
        if (!r && st.type == CDD_FT_NONE)
            r = add_dir(rc, d);
        *s = '/';
    }
    free(d);
    return r;
}

/* The receipt with the scripts in it (entries updated or appended). */
static int receipt_with(struct cdd_tree *tree, struct cdd_receipt *rc,
                        const struct cdd_plan *plan, const int64_t *mtimes)
{
    size_t add = 0;
    for (size_t i = 0; i < plan->n; i++)
        add += !listed(rc, plan->items[i].path);
    int r0 = CDD_GROW(rc->files, NULL, rc->n_files + add + 1,
                      CDD_MAX_ENTRIES, "receipt files");
    if (r0)
        return r0;
    for (size_t i = 0; i < plan->n; i++) {
        const struct cdd_plan_item *it = &plan->items[i];
        struct cdd_rfile_entry *f = listed(rc, it->path);
        int r;
        if (it->action == CDD_ACT_UNCHANGED)
            continue;
        if (!f) {
            if ((r = note_new_dirs(tree, rc, it->path)))
                return r;
            f = &rc->files[rc->n_files++];
            memset(f, 0, sizeof *f);
            if (!(f->path = strdup(it->path)))
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        f->role = CDD_ROLE_ACTIVATION;
        f->size = it->size;
        f->mtime_ns = mtimes[i];
        memcpy(f->sha256, it->sha256, CDD_SHA256_LEN);
    }
    return 0;
}

int cdd_activation_write(struct cdd_tree *tree, double lock_timeout,
                         const struct cdd_envfile *files, size_t n,
                         int dry_run, struct cdd_plan *plan, int *changed)
{
    struct cdd_receipt *rc = NULL;
    struct cdd_recovery rec = {0};
    struct cdd_txn *txn = NULL;
    int64_t *mtimes = NULL;
    char *rtext = NULL, *src = NULL;
    int r = 0, todo = 0;
    *changed = 0;
    if (!dry_run && (r = cdd_txn_lock(tree, lock_timeout, 0, NULL, &rec)))
        goto out;
    if ((r = cdd_receipt_load(tree, &rc)))
        goto out;
    if (!rc) {
        r = cdd_fail(CDD_E_TARGET, cdd_tree_root(tree), 0,
                     "nothing is installed here: install first (the scripts "
                     "are recorded in the install's receipt)");
        goto out;
    }
    if ((r = plan_files(tree, rc, files, n, plan)))
        goto out;
    for (size_t i = 0; i < plan->n; i++)
        todo |= plan->items[i].action != CDD_ACT_UNCHANGED;
    if (dry_run || !todo)
        goto out;
    if (!(mtimes = calloc(n ? n : 1, sizeof *mtimes))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    if ((r = cdd_txn_begin(tree, "activation", &txn)))
        goto out;
    for (size_t i = 0; !r && i < n; i++) {
        if (plan->items[i].action == CDD_ACT_UNCHANGED)
            continue;
        free(src);
        src = cdd_path_join(cdd_txn_stage_rel(txn), files[i].path);
        r = src ? stage_text(tree, src, files[i].text, &mtimes[i])
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        if (!r)
            r = cdd_txn_put(txn, src, files[i].path);
    }
    if (!r)
        r = receipt_with(tree, rc, plan, mtimes);
    if (!r)
        r = cdd_receipt_to_json(rc, &rtext);
    free(src);
    src = r ? NULL : cdd_path_join(cdd_txn_stage_rel(txn), CDD_RECEIPT_FILE);
    if (!r && !src)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!r)
        r = stage_text(tree, src, rtext, NULL);
    if (!r)
        r = cdd_txn_put(txn, src, CDD_RECEIPT_FILE);
    if (r)
        goto out;
    /* What the scripts replaced needs no keeping: uninstall removes them,
     * and the install's own backups are another transaction's. */
    r = cdd_txn_commit(txn, 1);
    txn = NULL;
    if (r)
        goto out;
    *changed = 1;
    struct cdd_jw *d = cdd_jw_new();
    cdd_jw_object(d, NULL);
    cdd_jw_uint(d, "files", n);
    cdd_jw_end(d);
    cdd_log_append(tree, "activation", rc->txn_id, d);
out:
    if (txn)
        cdd_txn_abort(txn);
    if (!dry_run)
        cdd_tree_unlock(tree);
    cdd_recovery_clear(&rec);
    cdd_receipt_free(rc);
    free(rtext);
    free(src);
    free(mtimes);
    return r;
}
