/* cudnn-deploy uninstall */
#include <stdio.h>
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/state.h"
#include "cmds.h"
#include "report.h"

/* Which files changed since install, and what the user can do. */
static void refusal(struct cdd_report *rep, const struct cdd_plan *p,
                    const struct cdd_target *t)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->items[i].action == CDD_ACT_MODIFIED;
    cdd_say(rep, "Nothing was removed: %zu file%s changed since install:", n,
            n == 1 ? "" : "s");
    for (size_t i = 0; i < p->n; i++)
        if (p->items[i].action == CDD_ACT_MODIFIED)
            cdd_say(rep, "  changed   %s%s%s", p->items[i].path,
                    p->items[i].detail ? ": " : "",
                    p->items[i].detail ? p->items[i].detail : "");
    const char *opt = t->kind == CDD_TARGET_PREFIX ? "--prefix" : "--cuda-root";
    char *q = cdd_report_quote(rep, t->root);
    cdd_say(rep, "To keep them, move them out of the tree first, then "
            "uninstall again; to delete them with the rest: "
            "cudnn-deploy uninstall %s %s --force", opt, q ? q : t->root);
    free(q);
}

int cdd_cmd_uninstall(const struct cdd_cmdline *cl, struct cdd_report *rep,
                      struct cdd_cli_tree *tt)
{
    const struct cdd_target *t = &tt->target;
    struct cdd_uninstall_result res = {0};
    int r;
    /* Locked by the dispatcher (CDD_LOCK_AT_OPEN), which reported the
     * recovery; the engine takes the held lock as its own. */
    struct cdd_uninstall_opts o = {.target = t, .tree = tt->tree,
                                   .force = cl->change.force,
                                   .dry_run = cl->change.dry_run,
                                   .lock_timeout = cl->target.lock_timeout};
    /* The core decides first (nothing is removed when it refuses); the
     * human text then says what was decided: a refusal names the changed
     * files and the ways out, not the plan it did not carry out. */
    r = cdd_uninstall(&o, &res);
    cdd_cli_report_recovery(rep, &res.recovery); /* found only unlocked */
    cdd_report_plan(rep, "plan", &res.plan,
                    !r && (cl->change.dry_run || cdd_report_verbose(rep)));
    if (r == CDD_E_MODIFIED)
        refusal(rep, &res.plan, t);
    if (r)
        goto out;
    cdd_report_changed(rep, res.changed);
    cdd_report_str(rep, "transaction", res.txn_id);
    if (!res.had_receipt)
        cdd_say(rep, "Nothing to uninstall: no receipt in %s", t->root);
    else {
        size_t n[7] = {0};
        for (size_t i = 0; i < res.plan.n; i++)
            n[res.plan.items[i].action]++;
        cdd_say(rep, "%s %s from %s: %zu removed, %zu restored, %zu kept "
                "(there before the install)",
                cl->change.dry_run ? "Would uninstall" : "Uninstalled",
                res.product_version ? res.product_version : "cuDNN", t->root,
                n[CDD_ACT_REMOVE], n[CDD_ACT_RESTORE], n[CDD_ACT_UNCHANGED]);
        cdd_report_bool(rep, "state_removed", res.state_removed);
        /* Success stays one line; the detail with --verbose. */
        if (res.state_removed && cdd_report_verbose(rep))
            cdd_say(rep, "The tree holds nothing of cudnn-deploy's any more: "
                    "its state folder %s went too.", CDD_STATE_DIR);
    }
out:
    cdd_uninstall_result_clear(&res);
    return r;
}
