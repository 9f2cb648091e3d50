/* cudnn-deploy verify: resolve the target and run verify (verify_run.c). */
#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/manifest.h"
#include "cmds.h"
#include "pick.h"
#include "report.h"

int cdd_cmd_verify(const struct cdd_cmdline *cl, struct cdd_report *rep)
{
    struct cdd_target t = {0};
    struct cdd_manifest *m = NULL;
    struct cdd_tree *tree = NULL;
    struct cdd_fit_gpus gpus = {0};
    struct cdd_opts_verify vo = cl->verify;
    int r = cdd_cli_fit_gpus(&cl->obtain, &gpus);
    vo.gpus = &gpus;
    vo.catalog = cl->obtain.catalog;
    if (!r)
        r = cdd_cli_target(&cl->target, &t, rep);
    if (!r && cl->obtain.manifest)
        r = cdd_cli_manifest_find(cl->obtain.manifest, &m);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (!r)
        r = cdd_cli_verify(rep, &t, tree, m, &vo);
    cdd_tree_close(tree);
    cdd_manifest_free(m);
    cdd_target_clear(&t);
    cdd_fit_gpus_clear(&gpus);
    return r;
}
