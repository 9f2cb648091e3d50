/* cudnn-deploy verify: run verify (verify_run.c) on the tree the dispatcher
 * opened; the GPUs to judge fit against are found before the tree is. */
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/manifest.h"
#include "cmds.h"
#include "pick.h"
#include "report.h"

int cdd_cmd_verify_prepare(const struct cdd_cmdline *cl,
                           struct cdd_report *rep, void **prep)
{
    struct cdd_fit_gpus *gpus = calloc(1, sizeof *gpus);
    (void)rep;
    *prep = gpus;
    if (!gpus)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    gpus->timeout = cdd_cli_gpu_timeout(&cl->verify);
    return cdd_cli_fit_gpus(&cl->obtain, gpus);
}

void cdd_cmd_verify_prep_free(void *prep)
{
    cdd_fit_gpus_clear(prep);
    free(prep);
}

int cdd_cmd_verify(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt)
{
    struct cdd_manifest *m = NULL;
    struct cdd_opts_verify vo = cl->verify;
    int r = 0;
    vo.gpus = tt->prep;
    vo.catalog = cl->obtain.catalog;
    if (cl->obtain.manifest)
        r = cdd_cli_manifest_find(cl->obtain.manifest, &m);
    if (!r)
        r = cdd_cli_verify(rep, &tt->target, tt->tree, m, &vo);
    cdd_manifest_free(m);
    return r;
}
