/* status: read-only comparison of the tree with its receipt. */
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/thread.h"
#include "treecheck.h"
#include "plan_int.h"

void cdd_status_result_clear(struct cdd_status_result *r)
{
    if (!r)
        return;
    cdd_receipt_free(r->receipt);
    cdd_plan_clear(&r->plan);
    memset(r, 0, sizeof *r);
}

int cdd_status(struct cdd_tree *tree, int full_hash, int jobs,
               struct cdd_status_result *res)
{
    memset(res, 0, sizeof *res);
    struct cdd_stat st = {0};
    int r = cdd_tree_has_state(tree)
                ? cdd_tree_lstat(tree, CDD_JOURNAL_FILE, &st)
                : 0;
    if (r)
        return r;
    res->interrupted = st.type != CDD_FT_NONE;
    r = cdd_receipt_load(tree, &res->receipt);
    if (r || !res->receipt)
        return r;
    const struct cdd_receipt *rc = res->receipt;
    /* The comparison (sha256 of every byte with --check) runs on `jobs`
     * threads; the plan is then made in receipt order. */
    enum cdd_action *acts = calloc(rc->n_files ? rc->n_files : 1, sizeof *acts);
    char **details = calloc(rc->n_files ? rc->n_files : 1, sizeof *details);
    if (!acts || !details) {
        free(acts);
        free(details);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    r = cdd_tree_check(tree, rc, full_hash ? CDD_TC_HASH : CDD_TC_SIZE,
                       jobs > 0 ? jobs : cdd_cpu_count(), acts, details);
    for (size_t i = 0; !r && i < rc->n_files; i++) {
        struct cdd_plan_item *it = cdd_plan_add(&res->plan, rc->files[i].path);
        if (!it) {
            r = cdd_last_error()->code;
            break;
        }
        it->role = rc->files[i].role;
        it->action = acts[i];
        it->detail = details[i];
        details[i] = NULL;
        it->is_symlink = rc->files[i].is_symlink;
        it->size = rc->files[i].size;
        if (acts[i] != CDD_ACT_UNCHANGED)
            res->n_bad++;
    }
    for (size_t i = 0; i < rc->n_files; i++)
        free(details[i]);
    free(details);
    free(acts);
    if (r)
        return r;
    return 0;
}
