/* cudnn-deploy verify: resolve the target and run verify (verify_run.c). */
#include "cdd/error.h"
#include "cdd/manifest.h"
#include "cmds.h"
#include "report.h"

int cdd_cmd_verify(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_target t = {0};
    struct cdd_manifest *m = NULL;
    struct cdd_tree *tree = NULL;
    int r = cdd_cli_target(&cl->target, &t, rep);
    if (!r && cl->obtain.manifest)
        r = cdd_cli_manifest_find(cl->obtain.manifest, &m);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (!r)
        r = cdd_cli_verify(rep, &t, tree, m, &cl->verify);
    cdd_tree_close(tree);
    cdd_manifest_free(m);
    cdd_target_clear(&t);
    return r;
}
