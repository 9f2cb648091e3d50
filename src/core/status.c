/* status: read-only comparison of the tree with its receipt. */
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "plan_int.h"

void cdd_status_result_clear(struct cdd_status_result *r)
{
    if (!r)
        return;
    cdd_receipt_free(r->receipt);
    cdd_plan_clear(&r->plan);
    memset(r, 0, sizeof *r);
}

int cdd_status(struct cdd_tree *tree, int full_hash,
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
    for (size_t i = 0; i < rc->n_files; i++) {
        enum cdd_action a;
        char *detail = NULL;
        r = cdd_check_installed(tree, &rc->files[i], full_hash, &a, &detail);
        if (r)
            return r;
        struct cdd_plan_item *it = cdd_plan_add(&res->plan, rc->files[i].path);
        if (!it) {
            free(detail);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        it->role = rc->files[i].role;
        it->action = a;
        it->detail = detail;
        it->is_symlink = rc->files[i].is_symlink;
        it->size = rc->files[i].size;
        if (a != CDD_ACT_UNCHANGED)
            res->n_bad++;
    }
    return 0;
}
