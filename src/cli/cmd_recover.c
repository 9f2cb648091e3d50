/* cudnn-deploy recover */
#include "cdd/error.h"
#include "cmds.h"
#include "report.h"

int cdd_cmd_recover(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_target t = {0};
    struct cdd_recovery rc = {0};
    struct cdd_tree *tree = NULL;
    int r = cdd_cli_target(&cl->target, &t, rep);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (!r)
        r = cdd_recover(tree, cl->target.lock_timeout, &rc);
    if (!r) {
        cdd_report_changed(rep, rc.found);
        cdd_report_bool(rep, "found", rc.found);
        if (rc.found) {
            cdd_report_str(rep, "transaction", rc.id);
            cdd_report_str(rep, "result", rc.rolled_back ? "rolled back"
                                                         : "completed");
            cdd_say(rep, "Interrupted transaction %s %s; the tree is as %s it.",
                    rc.id ? rc.id : "?",
                    rc.rolled_back ? "undone" : "completed",
                    rc.rolled_back ? "before" : "after");
        } else {
            cdd_say(rep, "Nothing to recover in %s", t.root);
        }
    }
    cdd_recovery_clear(&rc);
    cdd_tree_close(tree);
    cdd_target_clear(&t);
    return r;
}
