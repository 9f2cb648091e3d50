/* cudnn-deploy install */
#include <stdio.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/obtain.h"
#include "cmds.h"
#include "report.h"

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

static void summarise(struct cdd_report *rep, const struct cdd_plan *p,
                      int dry_run, int changed, const char *txn)
{
    size_t n[7] = {0};
    for (size_t i = 0; i < p->n; i++)
        n[p->items[i].action]++;
    if (!dry_run && !changed) {
        cdd_say(rep, "Already installed: all %zu files match; nothing changed.",
                n[CDD_ACT_UNCHANGED]);
        return;
    }
    cdd_say(rep, "%s %zu new, %zu replaced, %zu removed, %zu unchanged%s%s%s",
            dry_run ? "Would install:" : "Installed:", n[CDD_ACT_NEW],
            n[CDD_ACT_REPLACE], n[CDD_ACT_REMOVE], n[CDD_ACT_UNCHANGED],
            txn ? " (transaction " : "", txn ? txn : "", txn ? ")" : "");
}

int cdd_cmd_install(const struct cdd_args *a, struct cdd_report *rep)
{
    struct cdd_manifest *m = NULL;
    struct cdd_target t = {0};
    struct cdd_install_result res = {0};
    struct cdd_progress_ui *ui = NULL;
    struct cdd_obtain_result got = {0};
    struct cdd_tree *tree = NULL;
    const char *archive = a->archive, *pin_hex = a->sha256;
    int r;

    r = cdd_manifest_find(a->manifest, &m);
    if (r)
        goto out;
    if (a->archive && (a->n_urls || a->redistrib)) {
        r = cdd_fail(CDD_E_USAGE, NULL, 0,
                     "--url and --redistrib are for downloading; --archive "
                     "names a file already here: give one or the other");
        goto out;
    }
    /* The target first: a wrong target must not cost a download. */
    r = cdd_cli_target(a, &t, rep);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (r)
        goto out;
    if (!archive) {
        cdd_say(rep, "Obtaining %s", m->archive.filename);
        r = cdd_cli_obtain(a, m, rep, &got);
        if (r)
            goto out;
        /* The install checks the cached file against the same pin again
         * (and records where the pin came from). */
        archive = got.fetch.path;
        pin_hex = got.pinned ? got.sha256_hex : NULL;
    }
    cdd_report_str(rep, "manifest", m->name ? m->name : m->source);
    cdd_say(rep, "%s cuDNN %s (CUDA %d, %s) into %s", 
            a->dry_run ? "Checking" : "Installing", m->version, m->cuda_major,
            cdd_platform_name(m->platform), t.root);
    if (t.version.known)
        cdd_say(rep, "Target: CUDA %d.%d (from %s), found by %s",
                t.version.major, t.version.minor, t.version.source, t.how);

    ui = cdd_progress_new(a->quiet);
    struct cdd_install_opts o = {
        .m = m, .target = &t, .tree = tree, .archive_path = archive,
        .sha256_hex = pin_hex,
        .sha256_source = got.pinned && strcmp(got.pin_source, "redistrib") == 0
                             ? "redistrib" : NULL,
        .allow_unpinned = a->allow_unpinned,
        .dry_run = a->dry_run, .force = a->force,
        .lock_timeout = a->lock_timeout,
        .jobs = a->jobs, .check_tree = a->check_tree,
        .progress = cdd_progress_cb, .progress_ud = ui};
    r = cdd_install(&o, &res);
    cdd_progress_free(ui);
    ui = NULL;
    cdd_cli_report_recovery(rep, &res.recovery);
    if (res.pin_source) {
        char hex[CDD_SHA256_HEX];
        cdd_hex_encode(res.archive_sha256, CDD_SHA256_LEN, hex);
        cdd_report_str(rep, "archive_sha256", hex);
        cdd_report_str(rep, "pin", res.pin_source);
        cdd_report_check(rep, "archive", CDD_PASS, "%s, sha256 %s (%s)",
                         archive, hex,
                         strcmp(res.pin_source, "unpinned") == 0
                             ? "NOT pinned: --allow-unpinned"
                         : strcmp(res.pin_source, "per-file") == 0
                             ? "every file hashed by the manifest"
                             : res.pinned ? "matches the pin" : "");
    }
    cdd_report_str(rep, "layout", cdd_layout_name(res.layout));
    cdd_report_bool(rep, "dry_run", a->dry_run);
    if (r)
        goto out;
    cdd_report_str(rep, "transaction", res.txn_id);
    cdd_report_plan(rep, "plan", &res.plan, a->dry_run || res.changed);
    cdd_report_changed(rep, res.changed);
    summarise(rep, &res.plan, a->dry_run, res.changed, res.txn_id);
    /* The truth about the result: files stay installed if it fails (exit 1
     * through the failed checks). */
    if (!a->dry_run && !a->no_verify)
        r = cdd_cli_verify(rep, &t, tree, m, -1);
out:
    cdd_progress_free(ui);
    cdd_obtain_result_clear(&got);
    cdd_install_result_clear(&res);
    cdd_tree_close(tree);
    cdd_target_clear(&t);
    cdd_manifest_free(m);
    return r;
}
