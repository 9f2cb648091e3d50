/* The target step every tree command shares: resolve --cuda / --cuda-root /
 * --prefix into a tree, name it in the report (with a warning when the tree
 * is of another CUDA version than --cuda asked for), report a recovery that
 * ran. */
#include "cdd/error.h"
#include "cmds.h"
#include "report.h"

/* The target named in the report (also one that exists but could not be
 * opened), and a version other than --cuda asked for said. */
static int target_named(struct cdd_target *t, struct cdd_report *rep, int r)
{
    if (t->root)
        cdd_report_target(rep, t->root);
    if (r)
        return r;
    /* CUDA_PATH_V11_6 left over from an upgrade, or a default root that is
     * a link to another toolkit: the tree is not what --cuda asked for.
     * The major-version refusal (install) stays with cdd_target_check. */
    if (cdd_target_version_differs(t))
        cdd_report_check(rep, "target.version", CDD_CHECK_WARN,
                         "--cuda v%d.%d: %s names %s, which is CUDA %d.%d "
                         "by its %s",
                         t->asked_major, t->asked_minor, t->how, t->root,
                         t->version.major, t->version.minor,
                         t->version.source);
    return 0;
}

int cdd_cli_target(const struct cdd_opts_target *o, struct cdd_target *t,
                   struct cdd_report *rep, struct cdd_tree **tree)
{
    return target_named(t, rep, tree ? cdd_target_open(&o->spec, t, tree)
                                     : cdd_target_resolve(&o->spec, t));
}

int cdd_cli_target_look(const struct cdd_opts_target *o,
                        struct cdd_cli_tree *tt, struct cdd_report *rep)
{
    return target_named(&tt->target, rep,
                        cdd_target_open_look(&o->spec, &tt->target, &tt->tree,
                                             &tt->state_bad, &tt->state_why));
}

int cdd_cli_platform(const struct cdd_opts_obtain *o, int *given,
                     enum cdd_platform *p)
{
    *given = o->platform != NULL;
    *p = cdd_platform_host();
    if (!o->platform || cdd_platform_parse(o->platform, p) == 0)
        return 0;
    return cdd_fail(CDD_E_USAGE, NULL, 0,
                    "--platform %s: unknown platform (one of %s)",
                    o->platform, cdd_platform_names());
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
    cdd_report_check(rep, "recovery", CDD_CHECK_WARN,
                     "an interrupted transaction (%s) was found and %s",
                     rc->id ? rc->id : "?",
                     rc->rolled_back ? "undone" : "completed");
}
