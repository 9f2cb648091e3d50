/* cudnn-deploy status */
#include <stdio.h>
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/profile.h"
#include "cdd/receipt.h"
#include "cdd/verified.h"
#include "cmds.h"
#include "report.h"

int cdd_cmd_status(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt)
{
    const struct cdd_target *t = &tt->target;
    struct cdd_tree *tree = tt->tree;
    struct cdd_status_result st = {0};
    int r = cdd_status(tree, cl->change.check, (int)cl->change.jobs, &st);
    if (r)
        goto out;
    if (st.interrupted)
        cdd_report_check(rep, "transaction", CDD_CHECK_FAIL,
                         "an install or uninstall was interrupted; run "
                         "'cudnn-deploy recover' on this tree");
    cdd_report_bool(rep, "installed", st.receipt != NULL);
    if (!st.receipt) {
        cdd_say(rep, "Nothing installed by cudnn-deploy in %s", t->root);
        goto out;
    }
    const struct cdd_receipt *rc = st.receipt;
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    cdd_hex_encode(rc->archive_sha256, CDD_SHA256_LEN, hex);
    cdd_report_str(rep, "product", rc->product);
    cdd_report_str(rep, "version", rc->version);
    cdd_report_str(rep, "platform", rc->platform);
    cdd_report_str(rep, "layout", rc->layout);
    cdd_report_num(rep, "cuda_major", rc->cuda_major);
    cdd_report_str(rep, "cuda_version", rc->cuda_version);
    cdd_report_str(rep, "installed_at", rc->installed_at);
    cdd_report_str(rep, "transaction", rc->txn_id);
    cdd_report_str(rep, "archive", rc->archive_filename);
    cdd_report_str(rep, "archive_sha256", hex);
    cdd_report_bool(rep, "archive_pinned", rc->archive_pinned);
    cdd_say(rep, "%s %s (%s, CUDA %d) in %s", rc->product, rc->version,
            rc->platform, rc->cuda_major, t->root);
    cdd_say(rep, "  installed %s by cudnn-deploy %s, transaction %s",
            rc->installed_at ? rc->installed_at : "?",
            rc->tool_version ? rc->tool_version : "?", rc->txn_id);
    cdd_say(rep, "  archive %s, sha256 %s%s",
            rc->archive_filename ? rc->archive_filename : "?", hex,
            rc->archive_pinned ? "" : " (was not pinned)");
    cdd_say(rep, "  %zu files, %zu backed up", rc->n_files, rc->n_backed_up);
    /* What the profile left out was never installed: not missing. */
    size_t n_omitted = 0;
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        n_omitted += rc->omitted[i];
    cdd_report_str(rep, "profile",
                   cdd_profile_name((enum cdd_profile)rc->profile));
    cdd_report_num(rep, "omitted", (double)n_omitted);
    if (n_omitted)
        cdd_say(rep, "  profile %s: %zu archive entries left out by design",
                cdd_profile_name((enum cdd_profile)rc->profile), n_omitted);
    /* The last recorded verify of this receipt (verified.h), reported as
     * it was recorded; a record of another receipt says nothing. */
    struct cdd_verified *v = NULL;
    if (cdd_verified_current(tree, rc, &v) != 0) {
        char *line = cdd_error_text();
        cdd_report_str(rep, "verify_record_ignored",
                       line ? line : "out of memory");
        free(line);
        cdd_clear_error();
    } else if (v) {
        cdd_report_doc(rep, "verified", cdd_verified_jw(v));
        cdd_say(rep, "  verified %s by cudnn-deploy %s: %s (level %s)",
                v->verified_at, v->tool_version, v->outcome, v->level);
    } else {
        cdd_clear_error();
    }
    cdd_verified_free(v);
    cdd_report_plan(rep, "files", &st.plan, 0);
    for (size_t i = 0; i < st.plan.n; i++) {
        const struct cdd_plan_item *it = &st.plan.items[i];
        if (it->action != CDD_ACT_UNCHANGED)
            cdd_report_check(rep, it->path, CDD_CHECK_FAIL, "%s",
                             it->detail ? it->detail
                                        : cdd_action_name(it->action));
    }
    if (st.n_bad == 0)
        cdd_report_check(rep, "files", CDD_CHECK_PASS,
                         "all %zu files match the receipt (%s)", rc->n_files,
                         cl->change.check ? "size and sha256" : "size and type; "
                                                        "--check for sha256");
    else
        cdd_report_check(rep, "files", CDD_CHECK_FAIL,
                         "%zu of %zu files differ from the receipt", st.n_bad,
                         rc->n_files);
out:
    cdd_status_result_clear(&st);
    return r;
}
