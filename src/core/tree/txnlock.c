/* Taking a tree's lock for a change, and the recovery that must follow it
 * (deploy.h, cdd_txn_lock): the tree (tree.c) only locks, the transaction
 * engine (txn.c) only recovers; this file joins the two, so that each
 * dependency points one way (txn -> tree, never tree -> txn). */
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/tree.h"
#include "txn.h"

void cdd_recovery_clear(struct cdd_recovery *r)
{
    if (!r)
        return;
    free(r->id);
    memset(r, 0, sizeof *r);
}

int cdd_txn_lock(struct cdd_tree *tree, double timeout_s, int create_state,
                 int *locked, struct cdd_recovery *rec)
{
    int held = cdd_tree_locked(tree), r;
    if (locked)
        *locked = 0;
    if (rec)
        memset(rec, 0, sizeof *rec);
    if (!held) {
        int now = 0;
        r = cdd_tree_lock(tree, timeout_s, create_state, &now);
        if (r || !now)
            return r;
    }
    if (locked)
        *locked = 1;
    if (held)
        return 0; /* recovered when it was taken, under this same lock */
    struct cdd_recovery tmp = {0};
    r = cdd_txn_recover(tree, &tmp.found, &tmp.rolled_back, &tmp.id);
    if (rec)
        *rec = tmp;
    else
        cdd_recovery_clear(&tmp);
    return r;
}
