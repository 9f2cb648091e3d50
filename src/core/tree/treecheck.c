/* The tree against its receipt, in parallel (tree/treecheck.h). Workers take
 * the next file from a shared counter, largest files being no different:
 * the receipt's order is archive order, and hashing is bound by reading. */
#include "treecheck.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "idcache.h"
#include "cdd/pathsafe.h"
#include "cdd/thread.h"
#include "cdd/tree.h"

#define MAX_CHECKERS 16

struct tcheck {
    struct cdd_tree *tree;
    const struct cdd_receipt *rc;
    enum cdd_tree_check_mode mode;
    enum cdd_action *acts;
    char **details;
    const struct cdd_idcache *ids; /* CDD_TC_IDENT: may be NULL (hash all) */
    struct cdd_idrec *fresh;       /* CDD_TC_IDENT: identities seen hashing */
    atomic_size_t next;
    atomic_int stop;
    struct cdd_mutex *mu;
    int failed;
    struct cdd_errsave err;
};

/* The receipt's modification time still on the file: the re-install's
 * proof, short of hashing, that nobody rewrote it since. */
static int same_mtime(struct cdd_tree *tree, const struct cdd_rfile_entry *f,
                      int *same)
{
    struct cdd_stat st;
    int r = cdd_tree_lstat(tree, f->path, &st);
    *same = !r && f->mtime_ns > 0 && st.mtime_ns == f->mtime_ns;
    return r;
}

/* A file of the right type and size: an identity record that vouches for
 * the receipt's digest (tree/idcache.h) spares the read; otherwise its bytes
 * are hashed on the handle whose identity is recorded for the next run. */
static int check_ident(struct tcheck *t, size_t i)
{
    const struct cdd_rfile_entry *f = &t->rc->files[i];
    struct cdd_rfile *rf = NULL;
    struct cdd_fs_id now;
    uint64_t size = 0;
    int r = cdd_tree_open_read(t->tree, f->path, &rf);
    if (!r)
        r = cdd_fs_identity(rf, &now);
    if (!r && cdd_idrec_vouches(cdd_idcache_find(t->ids, f->path), &now,
                                f->sha256))
        goto out;
    struct cdd_idrec *rec = &t->fresh[i];
    if (!r)
        r = cdd_idrec_hash(rf, f->path, rec, &size);
    if (!r && (size != f->size ||
               memcmp(rec->sha256, f->sha256, CDD_SHA256_LEN) != 0)) {
        t->acts[i] = CDD_ACT_MODIFIED;
        rec->valid = 0;
    }
out:
    cdd_rfile_close(rf);
    return r;
}

static int check_one(struct tcheck *t, size_t i)
{
    const struct cdd_rfile_entry *f = &t->rc->files[i];
    char **d = t->details ? &t->details[i] : NULL;
    int r = cdd_check_installed(t->tree, f, t->mode == CDD_TC_HASH,
                                &t->acts[i], d);
    if (!r && t->mode == CDD_TC_IDENT && !f->is_symlink &&
        t->acts[i] == CDD_ACT_UNCHANGED)
        return check_ident(t, i);
    if (!r && t->mode == CDD_TC_META && !f->is_symlink &&
        t->acts[i] == CDD_ACT_UNCHANGED) {
        int same;
        if ((r = same_mtime(t->tree, f, &same)) == 0 && !same)
            t->acts[i] = CDD_ACT_MODIFIED;
    }
    return r;
}

static int checker(void *arg)
{
    struct tcheck *t = arg;
    int r = 0;
    for (;;) {
        size_t i = atomic_fetch_add(&t->next, 1);
        if (i >= t->rc->n_files || atomic_load(&t->stop))
            break;
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, cdd_tree_root(t->tree), 0,
                         "interrupted while checking the tree");
        } else {
            r = check_one(t, i);
        }
        if (r < 0) {
            cdd_mutex_lock(t->mu);
            if (!t->failed) {
                t->failed = 1;
                cdd_error_save(&t->err);
            }
            atomic_store(&t->stop, 1);
            cdd_mutex_unlock(t->mu);
            break;
        }
    }
    return r;
}

static int run_check(struct tcheck *t, int jobs);

int cdd_tree_check(struct cdd_tree *tree, const struct cdd_receipt *rc,
                   enum cdd_tree_check_mode mode, int jobs,
                   enum cdd_action *acts, char **details)
{
    struct tcheck t;
    memset(&t, 0, sizeof t);
    t.tree = tree;
    t.rc = rc;
    t.mode = mode == CDD_TC_IDENT ? CDD_TC_HASH : mode;
    t.acts = acts;
    t.details = details;
    return run_check(&t, jobs);
}

int cdd_tree_check_ident(struct cdd_tree *tree, const struct cdd_receipt *rc,
                         const struct cdd_idcache *ids, int jobs,
                         enum cdd_action *acts, struct cdd_idrec *fresh)
{
    struct tcheck t;
    memset(&t, 0, sizeof t);
    t.tree = tree;
    t.rc = rc;
    t.mode = CDD_TC_IDENT;
    t.acts = acts;
    t.ids = ids;
    t.fresh = fresh;
    memset(fresh, 0, rc->n_files * sizeof *fresh);
    return run_check(&t, jobs);
}

static int run_check(struct tcheck *t, int jobs)
{
    const struct cdd_receipt *rc = t->rc;
    char **details = t->details;
    struct cdd_thread *thr[MAX_CHECKERS] = {0};
    size_t n = jobs < 1 ? 1 : (size_t)jobs;
    int r;

    atomic_init(&t->next, 0);
    atomic_init(&t->stop, 0);
    if (details)
        memset(details, 0, rc->n_files * sizeof *details);
    if (n > MAX_CHECKERS)
        n = MAX_CHECKERS;
    if (n > rc->n_files)
        n = rc->n_files ? rc->n_files : 1;
    if ((r = cdd_mutex_new(&t->mu)) < 0)
        return r;
    for (size_t k = 1; k < n; k++)
        if (cdd_thread_start(&thr[k], checker, t) < 0) {
            /* Fewer threads: the counter hands their files to the others. */
            cdd_clear_error();
            break;
        }
    (void)checker(t);
    for (size_t k = 1; k < n; k++)
        (void)cdd_thread_join(thr[k]);
    cdd_mutex_free(t->mu);
    if (t->failed) {
        r = cdd_error_restore(&t->err);
        cdd_error_save_free(&t->err);
        for (size_t i = 0; details && i < rc->n_files; i++) {
            free(details[i]);
            details[i] = NULL;
        }
    }
    return r;
}
