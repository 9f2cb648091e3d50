/* cudnn-deploy fetch: download and check a manifest's archive into the
 * cache (obtain.c), and print where it is. */
#include <stdio.h>

#include "cdd/error.h"
#include "cdd/manifest.h"
#include "cdd/obtain.h"
#include "cmds.h"
#include "report.h"

int cdd_cmd_fetch(const struct cdd_cmdline *cl, struct cdd_report *rep,
                  struct cdd_cli_tree *tt)
{
    (void)tt; /* CDD_TREE_NONE */
    struct cdd_manifest *m = NULL;
    struct cdd_obtain_result res = {0};
    int r;

    if ((r = cdd_cli_manifest_find(cl->obtain.manifest, &m)))
        goto out;
    cdd_report_str(rep, "manifest", m->name ? m->name : m->source);
    cdd_say(rep, "Fetching %s (cuDNN %s, CUDA %d, %s)", m->archive.filename,
            m->version, m->cuda_major, cdd_platform_name(m->platform));
    if ((r = cdd_cli_obtain(&cl->obtain, cl->out.quiet, m, rep, &res)))
        goto out;
    /* The path is this command's answer, so it is printed even with
     * --quiet; with --json it is the "path" member instead. */
    if (!cl->out.json)
        printf("%s\n", res.fetch.path);
out:
    cdd_obtain_result_clear(&res);
    cdd_manifest_free(m);
    return r;
}
