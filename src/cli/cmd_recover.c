/* cudnn-deploy recover: the dispatcher's write open takes the lock, and with
 * it runs the recovery (commands.c, CDD_LOCK_RECOVER); this says what it
 * found and records it. */
#include "cdd/error.h"
#include "cmds.h"
#include "report.h"

int cdd_cmd_recover(const struct cdd_cmdline *cl, struct cdd_report *rep,
                    struct cdd_cli_tree *tt)
{
    const struct cdd_recovery *rc = &tt->recovery;
    (void)cl;
    cdd_recover_record(tt->tree, rc);
    cdd_report_changed(rep, rc->found);
    cdd_report_bool(rep, "found", rc->found);
    if (rc->found) {
        cdd_report_str(rep, "transaction", rc->id);
        cdd_report_str(rep, "result", rc->rolled_back ? "rolled back"
                                                      : "completed");
        cdd_say(rep, "Interrupted transaction %s %s; the tree is as %s it.",
                rc->id ? rc->id : "?",
                rc->rolled_back ? "undone" : "completed",
                rc->rolled_back ? "before" : "after");
    } else {
        cdd_say(rep, "Nothing to recover in %s", tt->target.root);
    }
    return 0;
}
