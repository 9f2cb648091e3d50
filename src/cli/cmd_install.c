/* cudnn-deploy install */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/fsops.h"
#include "cdd/obtain.h"
#include "cdd/redistrib.h"
#include "cdd/profile.h"
#include "cmds.h"
#include "pick.h"
#include "report.h"

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

/* --with NAME[=FILE]: the manifest's optional component NAME, from FILE or
 * downloaded through the cache against the component's own pin. got[i]
 * holds what a download left (freed by the caller). */
static int components(const struct cdd_cmdline *cl,
                      const struct cdd_manifest *m, struct cdd_report *rep,
                      struct cdd_install_with *with,
                      struct cdd_obtain_result *got, char **names)
{
    const struct cdd_strlist *l = &cl->change.with;
    const struct cdd_opts_obtain *ob = &cl->obtain;
    for (size_t i = 0; i < l->n; i++) {
        const char *eq = strchr(l->v[i], '=');
        size_t len = eq ? (size_t)(eq - l->v[i]) : strlen(l->v[i]);
        if (!(names[i] = malloc(len + 1)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        memcpy(names[i], l->v[i], len);
        names[i][len] = '\0';
        const struct cdd_mcomponent *k = cdd_manifest_component(m, names[i]);
        if (!k) {
            struct cdd_sb have;
            cdd_sb_init(&have, CDD_TEXT_MAX, "list of components");
            int r = 0;
            for (size_t j = 0; !r && j < m->n_components; j++)
                r = cdd_sb_addf(&have, "%s%s", j ? ", " : "",
                                m->components[j].name);
            if (!r)
                r = cdd_fail(CDD_E_USAGE, NULL, 0,
                             "--with %s: the manifest %s declares no such "
                             "optional component (it declares: %s)",
                             names[i], m->name ? m->name : m->source,
                             cdd_sb_len(&have) ? cdd_sb_str(&have) : "none");
            cdd_sb_free(&have);
            return r;
        }
        for (size_t j = 0; j < i; j++)
            if (with[j].c == k)
                return cdd_fail(CDD_E_USAGE, NULL, 0,
                                "--with %s given twice", names[i]);
        with[i].c = k;
        if (eq && eq[1]) {
            with[i].archive_path = eq + 1;
            continue;
        }
        if (cl->change.dry_run) {
            /* Planned, not fetched (issue 18): checked only when cached. */
            struct cdd_obtain_opts po = {.m = k->m, .cache_dir = ob->cache_dir};
            struct cdd_obtain_plan p;
            int r = cdd_obtain_plan(&po, &p);
            if (!r && p.cached && !(got[i].fetch.path = strdup(p.cache_path)))
                r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            if (!r && !p.cached)
                cdd_say(rep, "would download %s (%llu bytes) for component "
                             "%s; dry run: nothing downloaded",
                        p.url ? p.url : k->m->archive.filename,
                        (unsigned long long)p.size, k->name);
            cdd_obtain_plan_clear(&p);
            if (r)
                return r;
            with[i].archive_path = got[i].fetch.path; /* NULL: left out */
            continue;
        }
        cdd_say(rep, "Obtaining %s (component %s)", k->m->archive.filename,
                k->name);
        struct cdd_cli_notes nc = {rep, NULL};
        struct cdd_obtain_opts o = {.m = k->m, .cache_dir = ob->cache_dir,
                                    .net = cdd_cli_net_opts(ob, &nc)};
        int r = cdd_obtain_archive(&o, &got[i]);
        if (r)
            return r;
        with[i].archive_path = got[i].fetch.path;
    }
    return 0;
}

/* A download that matches no digest of its name: say so, with the way to
 * check it against NVIDIA's current JSON. */
static int respin_download(const struct cdd_pick *p)
{
    struct cdd_errsave e; /* the download's failure, kept whole */
    cdd_error_save(&e);
    int r = cdd_fail(CDD_E_CHECKSUM, p->a->filename, 0,
                     "%s. The bytes differ from every release of %s NVIDIA "
                     "is known to have published (%zu digest%s in the "
                     "catalog). NVIDIA may have re-spun it under the same "
                     "name: check it against NVIDIA's current JSON with "
                     "--redistrib %sredistrib_%s.json", e.info.msg,
                     p->a->filename, p->a->n_digests,
                     p->a->n_digests == 1 ? "" : "s", CDD_REDISTRIB_BASE_URL,
                     p->rel->label);
    cdd_error_save_free(&e);
    return r;
}

/* --mtime SECONDS, else SOURCE_DATE_EPOCH (reproducible-builds.org: a
 * whole number of seconds since 1970; anything else is refused, not
 * ignored, so a typo never gives a layer that silently differs). */
static int install_mtime(const struct cdd_cmdline *cl, int *has, int64_t *t)
{
    *has = 0;
    if (cl->change.mtime_given) {
        *has = 1;
        *t = cl->change.mtime;
        return 0;
    }
    const char *e = cdd_getenv("SOURCE_DATE_EPOCH");
    if (!e || !*e)
        return 0;
    char *end = NULL;
    long long v = strtoll(e, &end, 10);
    if (*end || v < 0 || v > 2147483647LL || end == e)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "SOURCE_DATE_EPOCH=%s: expected seconds since 1970 "
                        "(a whole number)", e);
    *has = 1;
    *t = (int64_t)v;
    return 0;
}

/* What the profile left out, in the report and in one line. */
static void report_profile(struct cdd_report *rep, int profile,
                           const size_t *omitted)
{
    size_t n = 0;
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        n += omitted[i];
    cdd_report_str(rep, "profile", cdd_profile_name((enum cdd_profile)profile));
    cdd_report_num(rep, "omitted", (double)n);
    if (n)
        cdd_say(rep, "Profile %s: %zu archive entries checked but left out "
                "(headers, import or static libraries)",
                cdd_profile_name((enum cdd_profile)profile), n);
}

/* CUDNN_DEPLOY_NO_STREAM=1: as --no-stream (docs/fetch.md). */
static int no_stream_env(void)
{
    const char *e = cdd_getenv("CUDNN_DEPLOY_NO_STREAM");
    return e && *e && strcmp(e, "0") != 0;
}

/* The cache path the streamed .part will be renamed to (for messages;
 * the receipt keeps only its file name). */
static char *final_path(struct cdd_rfile *f)
{
    const char *p = cdd_rfile_path(f);
    size_t n = strlen(p);
    if (n > 5 && strcmp(p + n - 5, ".part") == 0)
        n -= 5;
    return cdd_strndup(p, n);
}

/* What install decides before the target is touched (the dispatcher then
 * opens the tree, commands.c): --mtime, --platform, the usage faults, and
 * the manifest (none with --cudnn: the catalog picks it from the tree). */
struct install_prep {
    struct cdd_manifest *m;
    int has_mtime, platform_given;
    int64_t mtime;
    enum cdd_platform platform;
};

void cdd_cmd_install_prep_free(void *prep)
{
    struct install_prep *p = prep;
    if (p)
        cdd_manifest_free(p->m);
    free(p);
}

int cdd_cmd_install_prepare(const struct cdd_cmdline *cl,
                            struct cdd_report *rep, void **prep)
{
    const struct cdd_opts_obtain *ob = &cl->obtain;
    struct install_prep *p = calloc(1, sizeof *p);
    (void)rep;
    *prep = p;
    if (!p)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    p->platform = CDD_PLATFORM_LINUX_X86_64;
    int r = install_mtime(cl, &p->has_mtime, &p->mtime);
    if (!r)
        r = cdd_cli_platform(ob, &p->platform_given, &p->platform);
    if (r)
        return r;
    if (ob->cudnn && ob->manifest)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--cudnn picks a release from the catalog; --manifest "
                        "names one: give one or the other");
    if (!ob->cudnn && (r = cdd_cli_manifest_find(ob->manifest, &p->m)))
        return r;
    if (ob->archive && ob->n_urls)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--url is for downloading; --archive names a file "
                        "already here: give one or the other");
    /* Then the target: a wrong target must not cost a download. */
    return 0;
}

int cdd_cmd_install(const struct cdd_cmdline *cl, struct cdd_report *rep,
                    struct cdd_cli_tree *tt)
{
    struct cdd_install_with with[sizeof cl->change.with.v /
                                 sizeof cl->change.with.v[0]];
    struct cdd_obtain_result wgot[sizeof with / sizeof with[0]];
    char *wnames[sizeof with / sizeof with[0]];
    struct install_prep *prep = tt->prep;
    /* Ours from here: freed below (or replaced by the archive's own). */
    struct cdd_manifest *m = prep->m;
    struct cdd_target *t = &tt->target;
    struct cdd_install_result res = {0};
    struct cdd_progress_ui *ui = NULL;
    struct cdd_obtain_result got = {0};
    struct cdd_tree *tree = tt->tree;
    struct cdd_cli_stream *st = NULL;
    struct cdd_rfile *sf = NULL;
    char *spath = NULL;
    int abandoned = 0, streamed = 0;
    const struct cdd_opts_obtain *ob = &cl->obtain;
    const struct cdd_opts_change *ch = &cl->change;
    const char *archive = ob->archive;
    const uint8_t *pin = ob->has_sha256 ? ob->sha256 : NULL;
    struct cdd_pick pick = {0};
    uint8_t catpin[CDD_SHA256_LEN];
    /* The release catalog chooses (docs/releases.md): --cudnn, or no
     * --manifest for a tree that is not CUDA 11 (decided below). */
    int catalog = ob->cudnn != NULL;
    int r = 0, has_mtime = prep->has_mtime;
    int64_t mtime = prep->mtime;
    int platform_given = prep->platform_given;
    enum cdd_platform platform = prep->platform;

    prep->m = NULL;
    memset(with, 0, sizeof with);
    memset(wgot, 0, sizeof wgot);
    memset(wnames, 0, sizeof wnames);
    if (!catalog && !ob->manifest && !ob->archive && t->version.known &&
        t->version.major != 11) {
        cdd_say(rep, "No --manifest: the shipped default is for CUDA 11; for "
                "this CUDA %d tree the default is the newest catalog release "
                "that fits", t->version.major);
        cdd_manifest_free(m);
        m = NULL;
        catalog = 1;
    }
    if (catalog) {
        if ((r = cdd_cli_pick(cl, t, rep, &pick)))
            goto out;
        m = pick.pin; /* until the archive's own manifest replaces it */
    }
    /* Install while downloading (issue 20, docs/fetch.md): a download the
     * manifest or --sha256 pins, size included, streams through the checks
     * into the stage as it arrives; the commit waits for its sha256. The
     * catalog reads the archive's own entries first, so it downloads
     * first; so do --no-stream and CUDNN_DEPLOY_NO_STREAM=1. */
    int stream = !archive && !ch->dry_run && !catalog && !ch->no_stream &&
                 !no_stream_env() &&
                 (m->archive.has_sha256 || ob->has_sha256) &&
                 m->archive.has_size;
    if (!archive && ch->dry_run) {
        /* A dry run never downloads nor touches the cache (issue 18): it
         * says what it would download, and checks the archive only when
         * the pinned file is already in the cache. */
        r = cdd_cli_obtain_plan(ob, m, rep, &got);
        if (!r && !got.fetch.path) {
            cdd_report_bool(rep, "dry_run", 1);
            cdd_report_changed(rep, 1);
            goto out;
        }
    } else if (!archive && !stream) {
        cdd_say(rep, "Obtaining %s", m->archive.filename);
        r = cdd_cli_obtain(ob, cl->out.quiet, m, rep, &got);
    } else if (!archive) {
        /* Downloaded below, while the install reads it. */
    } else {
        /* The same pins for a file already here (--redistrib included),
         * and a wrong size refused before the file is read. */
        r = cdd_cli_obtain_local(ob, m, rep, &got);
    }
    if (r == CDD_E_CHECKSUM && catalog && !ob->redistrib && !ob->archive &&
        !ob->has_sha256)
        r = respin_download(&pick);
    if (r)
        goto out;
    if (catalog) {
        /* No hand-written manifest: the archive's own entries, read under
         * the install's rules, bound to the catalog's pin. */
        m = NULL;
        r = cdd_cli_pick_manifest(&pick, got.fetch.path,
                                  got.pinned &&
                                      got.pin_source == CDD_PIN_REDISTRIB,
                                  got.fetch.sha256,
                                  ob->has_sha256 ? ob->sha256 : NULL, rep, &m,
                                  catpin);
        if (r)
            goto out;
        memcpy(got.fetch.sha256, catpin, CDD_SHA256_LEN);
        got.pinned = 1;
    }
    /* The install checks the file against the same pin again (and records
     * where the pin came from). */
    archive = got.fetch.path;
    pin = got.pinned ? got.fetch.sha256 : NULL;
    if (stream)
        pin = ob->has_sha256 ? ob->sha256 : NULL; /* the manifest's: its own */
    if ((r = components(cl, m, rep, with, wgot, wnames)) < 0)
        goto out;
    /* A dry run checks the components it has (given, or cached). */
    size_t n_with = 0;
    for (size_t i = 0; i < ch->with.n; i++)
        if (with[i].archive_path)
            with[n_with++] = with[i];
    cdd_report_str(rep, "manifest", m->name ? m->name : m->source);
    cdd_say(rep, "%s cuDNN %s (CUDA %d, %s) into %s", 
            ch->dry_run ? "Checking" : "Installing", m->version, m->cuda_major,
            cdd_platform_name(m->platform), t->root);
    if (t->version.known)
        cdd_say(rep, "Target: CUDA %d.%d (from %s), found by %s",
                t->version.major, t->version.minor, t->version.source, t->how);

    if (stream) {
        cdd_say(rep, "Obtaining %s (installed as it downloads)",
                m->archive.filename);
        if ((r = cdd_cli_stream_start(ob, cl->out.quiet, m, rep, &st)) < 0)
            goto out;
        if (cdd_cli_stream_reader(st, &sf)) {
            if (!(spath = final_path(sf))) {
                r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
                goto out;
            }
            archive = spath;
            streamed = 1;
        } else {
            /* Not streamed (in the cache already, a server without Range
             * for a zip, ...): the download first, as before. */
            const char *why = cdd_cli_stream_why(st);
            r = cdd_cli_stream_finish(st, rep, &got, &abandoned);
            st = NULL;
            if (!r && !got.fetch.cache_hit && cdd_report_verbose(rep))
                cdd_say(rep, "Not installed while downloading: %s", why);
            if (r)
                goto out;
            archive = got.fetch.path;
        }
    }
    ui = cdd_progress_new(cl->out.quiet);
    struct cdd_install_opts o = {
        .m = m, .target = t, .tree = tree, .archive_path = archive,
        .archive_file = sf,
        .sha256 = pin,
        .sha256_source = got.pinned && got.pin_source == CDD_PIN_REDISTRIB
                             ? CDD_PIN_REDISTRIB : CDD_PIN_NONE,
        .allow_unpinned = ob->allow_unpinned,
        .dry_run = ch->dry_run, .force = ch->force,
        .lock_timeout = cl->target.lock_timeout,
        .jobs = (int)ch->jobs, .check_tree = ch->check_tree,
        .with = with, .n_with = n_with,
        .progress = cdd_progress_cb, .progress_ud = ui,
        .selection = pick.selection,
        .profile = ch->profile, .has_mtime = has_mtime, .mtime = mtime,
        .platform_given = platform_given, .platform = platform};
    if (sf)
        o.progress = NULL; /* the download's bar is the one shown */
    r = cdd_install(&o, &res);
    if (st) {
        /* The download's own outcome decides first: a network fault is
         * the download's exit code, wrong bytes exit 3 (the stage is gone:
         * nothing was committed without the pin's sha256). */
        struct cdd_errsave ierr;
        cdd_error_save(&ierr);
        int rd = cdd_cli_stream_finish(st, rep, &got, &abandoned);
        st = NULL;
        cdd_rfile_close(sf);
        sf = NULL;
        if (rd && !r) {
            /* Installed, checked against the pin by the install itself;
             * only the cache's copy is missing. */
            cdd_say(rep, "The archive was installed but not kept in the "
                         "cache: %s", cdd_last_error()->msg);
            cdd_clear_error();
        } else if (rd) {
            r = rd;
        } else if (r && abandoned) {
            /* The download started the file again, so the bytes read were
             * not the file's any more: install from the cache, as if
             * downloaded first. */
            if (cdd_report_verbose(rep))
                cdd_say(rep, "Installed from the cache after the download: "
                             "%s", ierr.info.msg);
            cdd_install_result_clear(&res);
            o.archive_path = archive = got.fetch.path;
            o.archive_file = NULL;
            o.progress = cdd_progress_cb;
            streamed = 0;
            r = cdd_install(&o, &res);
        } else if (r) {
            cdd_error_restore(&ierr);
        }
        cdd_error_save_free(&ierr);
        if (got.fetch.path)
            archive = got.fetch.path;
    }
    cdd_progress_free(ui);
    ui = NULL;
    cdd_cli_report_recovery(rep, &res.recovery);
    if (res.pin_source) {
        char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        cdd_hex_encode(res.archive_sha256, CDD_SHA256_LEN, hex);
        cdd_report_str(rep, "archive_sha256", hex);
        cdd_report_str(rep, "pin", cdd_pin_name(res.pin_source));
        cdd_report_check(rep, "archive", CDD_CHECK_PASS, "%s, sha256 %s (%s)",
                         archive, hex,
                         res.pin_source == CDD_PIN_UNPINNED
                             ? "NOT pinned: --allow-unpinned"
                         : res.pin_source == CDD_PIN_PER_FILE
                             ? "every file hashed by the manifest"
                             : res.pinned ? "matches the pin" : "");
    }
    cdd_report_str(rep, "layout", cdd_layout_name(res.layout));
    if (!r)
        report_profile(rep, ch->profile, res.omitted);
    if (res.layout_why) {
        cdd_report_str(rep, "layout_reason", res.layout_why);
        /* A choice made from the tree (Windows: where its cudart lives)
         * is said; the plain default only with --verbose. */
        if (cl->out.verbose || cdd_platform_is_windows(m->platform))
            cdd_say(rep, "Layout: %s (%s)", cdd_layout_name(res.layout),
                    res.layout_why);
    }
    cdd_report_bool(rep, "dry_run", ch->dry_run);
    /* Installed from the .part as it arrived (docs/fetch.md). */
    cdd_report_bool(rep, "streamed", streamed);
    for (size_t i = 0; !r && i < n_with; i++)
        cdd_report_check(rep, "component", CDD_CHECK_PASS,
                         "%s from %s, sha256 matches the manifest's pin%s",
                         with[i].c->name, with[i].archive_path,
                         ch->dry_run ? "" : ", machine type checked");
    if (r)
        goto out;
    cdd_report_str(rep, "transaction", res.txn_id);
    /* Every file only when asked (--verbose) or when nothing is done
     * (--dry-run): the summary line counts them. */
    cdd_report_plan(rep, "plan", &res.plan,
                    ch->dry_run || (res.changed && cdd_report_verbose(rep)));
    cdd_report_changed(rep, res.changed);
    summarise(rep, &res.plan, ch->dry_run, res.changed, res.txn_id);
    /* The truth about the result: files stay installed if it fails (exit 1
     * through the failed checks). */
    if (!ch->dry_run && !ch->no_verify)
        r = cdd_cli_verify_receipt(rep, t, tree, m, &cl->verify,
                                   res.receipt);
out:
    for (size_t i = 0; i < ch->with.n; i++) {
        cdd_obtain_result_clear(&wgot[i]);
        free(wnames[i]);
    }
    cdd_progress_free(ui);
    if (st) {
        struct cdd_errsave e;
        cdd_error_save(&e);
        (void)cdd_cli_stream_finish(st, rep, &got, &abandoned);
        cdd_error_restore(&e);
        cdd_error_save_free(&e);
    }
    cdd_rfile_close(sf);
    free(spath);
    cdd_obtain_result_clear(&got);
    cdd_install_result_clear(&res);
    if (m != pick.pin)
        cdd_manifest_free(m);
    cdd_pick_clear(&pick);
    return r;
}
