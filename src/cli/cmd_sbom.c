/* cudnn-deploy sbom: the tree's receipt as a CycloneDX or SPDX document
 * (the document itself is built in the core, src/core/tree/sbom.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/receipt.h"
#include "cdd/sbom.h"
#include "cdd/verified.h"
#include "cmds.h"
#include "report.h"

/* Usage faults, before the tree is touched. */
int cdd_cmd_sbom_prepare(const struct cdd_cmdline *cl, struct cdd_report *rep,
                         void **prep)
{
    (void)rep;
    *prep = NULL;
    if (cl->n_positional)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "sbom takes no argument: name the tree with --cuda, "
                        "--cuda-root or --prefix");
    if (cl->out.json && !cl->sbom.output)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "sbom --json needs -o FILE (stdout holds the report)");
    return 0;
}

int cdd_cmd_sbom(const struct cdd_cmdline *cl, struct cdd_report *rep,
                 struct cdd_cli_tree *tt)
{
    struct cdd_tree *tree = tt->tree;
    struct cdd_receipt *rc = NULL;
    struct cdd_verified *v = NULL;
    char *doc = NULL;
    const char *out = cl->sbom.output;
    int r = cdd_receipt_load(tree, &rc);
    if (!r && !rc)
        r = cdd_fail(CDD_E_TARGET, tt->target.root, 0,
                     "nothing installed by cudnn-deploy here (no receipt), "
                     "so there is nothing to describe");
    /* The verify record of this receipt, if any; a damaged one is named
     * and left out (it is never believed, only reported). */
    if (!r && cdd_verified_current(tree, rc, &v) != 0) {
        char *line = cdd_error_text();
        const char *why = line ? line : "out of memory";
        cdd_report_str(rep, "verify_record_ignored", why);
        cdd_say(rep, "warning: the verify record is left out: %s", why);
        free(line);
        cdd_clear_error();
    }
    cdd_report_str(rep, "verify", v ? v->outcome : NULL);
    if (!r)
        r = cdd_sbom_write(rc, v, (enum cdd_sbom_format)cl->sbom.format,
                           &doc);
    if (r)
        goto out;
    if (out) {
        r = cdd_fs_write_atomic(out, doc, strlen(doc));
    } else if (fputs(doc, stdout) == EOF || fflush(stdout) != 0) {
        r = cdd_fail(CDD_E_IO, "<stdout>", 0, "cannot write");
    }
    if (r)
        goto out;
    const char *fmt = cl->sbom.format == CDD_SBOM_SPDX ? "SPDX 2.3"
                                                       : "CycloneDX 1.6";
    cdd_report_str(rep, "format", cl->sbom.format == CDD_SBOM_SPDX
                                      ? "spdx" : "cyclonedx");
    cdd_report_str(rep, "output", out);
    cdd_report_changed(rep, 0);
    cdd_say(rep, "%s SBOM of %s %s (%zu files)%s%s", fmt, rc->product,
            rc->version, rc->n_files, out ? " written to " : "",
            out ? out : "");
out:
    free(doc);
    cdd_verified_free(v);
    cdd_receipt_free(rc);
    return r;
}
