/* cudnn-deploy bundle: an offline mirror of NVIDIA's server for a fleet
 * (bundle.h, docs/fleet.md). */
#include <stdio.h>
#include <stdlib.h>

#include "cdd/bundle.h"
#include "cdd/error.h"
#include "cdd/manifest.h"
#include "cmds.h"
#include "report.h"


int cdd_cmd_bundle(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt)
{
    (void)tt; /* CDD_TREE_NONE */
    const struct cdd_opts_bundle *b = &cl->bundle;
    const struct cdd_opts_obtain *ob = &cl->obtain;
    struct cdd_manifest *ms[sizeof b->manifests.v / sizeof b->manifests.v[0]];
    struct cdd_bundle_result res = {0};
    struct cdd_cli_notes nc = {rep, NULL};
    size_t n = 0;
    int r = 0;

    if (!b->dir) {
        r = cdd_fail(CDD_E_USAGE, NULL, 0,
                     "bundle needs -o DIR, the folder to write");
        goto out;
    }
    if (!b->manifests.n) {
        r = cdd_fail(CDD_E_USAGE, NULL, 0,
                     "bundle needs at least one --manifest NAME|FILE");
        goto out;
    }
    for (; n < b->manifests.n; n++)
        if ((r = cdd_cli_manifest_find(b->manifests.v[n], &ms[n])) < 0)
            goto out;
    nc.ui = cdd_progress_new(cl->out.quiet);
    struct cdd_bundle_opts o = {
        .dir = b->dir, .cache_dir = ob->cache_dir,
        .archives = b->archives.v, .n_archives = b->archives.n,
        .net = cdd_cli_net_opts(ob, &nc),
        .progress = cdd_progress_cb, .progress_ud = nc.ui};
    cdd_say(rep, "Bundling %zu manifest%s into %s", n, n == 1 ? "" : "s",
            b->dir);
    r = cdd_bundle_write(&o, ms, n, &res);
    cdd_progress_free(nc.ui);
    nc.ui = NULL;
    cdd_report_str(rep, "bundle", b->dir);
    if (r)
        goto out;
    const char *paths[64];
    size_t np = 0;
    for (size_t i = 0; i < res.n; i++) {
        const struct cdd_bundle_item *it = &res.items[i];
        char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        if (np < sizeof paths / sizeof paths[0])
            paths[np++] = it->path;
        if (!it->size) {
            cdd_say(rep, "  %s", it->path);
            continue;
        }
        cdd_hex_encode(it->sha256, CDD_SHA256_LEN, hex);
        cdd_report_check(rep, "bundle.archive", CDD_CHECK_PASS,
                         "%s: %s (%llu bytes, sha256 %s%s)", it->what,
                         it->path, (unsigned long long)it->size, hex,
                         it->cache_hit ? ", from the cache" : "");
    }
    cdd_report_strv(rep, "files", paths, np);
    cdd_report_changed(rep, 1);
    cdd_say(rep, "Serve %s with any static HTTP server and set "
                 "CUDNN_DEPLOY_MIRROR=http://HOST/ (or file://%s) on the "
                 "fleet; install with --manifest %s/%s/<name>.json",
            b->dir, b->dir, b->dir, CDD_BUNDLE_MANIFESTS);
out:
    cdd_progress_free(nc.ui);
    cdd_bundle_result_clear(&res);
    for (size_t i = 0; i < n; i++)
        cdd_manifest_free(ms[i]);
    return r;
}
