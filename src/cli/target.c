/* The target step every tree command shares: resolve --cuda / --cuda-root /
 * --prefix into a tree, name it in the report, report a recovery that ran. */
#include "cmds.h"
#include "report.h"

int cdd_cli_target(const struct cdd_opts_target *o, struct cdd_target *t,
                   struct cdd_report *rep)
{
    int r = cdd_target_resolve(&o->spec, t);
    if (!r)
        cdd_report_target(rep, t->root);
    return r;
}

int cdd_cli_target_given(const struct cdd_opts_target *o)
{
    return o->spec.cuda || o->spec.cuda_root || o->spec.prefix;
}

void cdd_cli_report_recovery(struct cdd_report *rep,
                             const struct cdd_recovery *rc)
{
    if (!rc->found)
        return;
    cdd_report_check(rep, "recovery", CDD_WARN,
                     "an interrupted transaction (%s) was found and %s",
                     rc->id ? rc->id : "?",
                     rc->rolled_back ? "undone" : "completed");
}
