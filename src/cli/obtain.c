/* The download step that fetch and install (without --archive) share:
 * turn the options into the core's obtain request, show notes and progress,
 * report where the archive came from and what pinned it; and, for install
 * --archive, the same pins for the local file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/jsonw.h"
#include "cdd/manifest.h"
#include "cdd/obtain.h"
#include "cmds.h"
#include "report.h"

static void on_note(void *ud, const char *msg)
{
    struct cdd_cli_notes *n = ud;
    cdd_progress_clear(n->ui);
    cdd_say(n->rep, "  %s", msg);
}

struct cdd_net_opts cdd_cli_net_opts(const struct cdd_opts_obtain *a,
                                     struct cdd_cli_notes *n)
{
    struct cdd_net_opts o = {
        .cacert = a->cacert, .connect_timeout_s = a->connect_timeout,
        .low_speed_limit = a->low_speed_limit,
        .low_speed_time_s = a->low_speed_time, .retries = a->retries,
        .note = on_note, .note_ud = n};
    return o;
}

static char *human_size(uint64_t n, char *buf, size_t len)
{
    if (n >= 1024 * 1024)
        snprintf(buf, len, "%.1f MiB", (double)n / (1024.0 * 1024.0));
    else if (n >= 1024)
        snprintf(buf, len, "%.1f KiB", (double)n / 1024.0);
    else
        snprintf(buf, len, "%llu bytes", (unsigned long long)n);
    return buf;
}

/* The core's obtain request, from the options. */
static struct cdd_obtain_opts obtain_opts(const struct cdd_opts_obtain *a,
                                          const struct cdd_manifest *m,
                                          struct cdd_cli_notes *nc)
{
    struct cdd_obtain_opts o = {
        .m = m, .urls = a->urls, .n_urls = a->n_urls,
        .sha256 = a->has_sha256 ? a->sha256 : NULL, .redistrib = a->redistrib,
        .cache_dir = a->cache_dir, .allow_unpinned = a->allow_unpinned,
        .net = cdd_cli_net_opts(a, nc),
        .progress = cdd_progress_cb, .progress_ud = nc->ui};
    return o;
}

int cdd_cli_obtain_local(const struct cdd_opts_obtain *a,
                         const struct cdd_manifest *m, struct cdd_report *rep,
                         struct cdd_obtain_result *res)
{
    struct cdd_cli_notes nc = {rep, cdd_progress_new(1)};
    struct cdd_obtain_opts o = obtain_opts(a, m, &nc);
    int r = cdd_obtain_local(&o, a->archive, res);
    cdd_progress_free(nc.ui);
    if (res->redistrib_source)
        cdd_report_str(rep, "redistrib", res->redistrib_source);
    return r;
}

static int report_obtained(const struct cdd_manifest *m,
                           struct cdd_report *rep,
                           struct cdd_obtain_result *res, int r);

int cdd_cli_obtain(const struct cdd_opts_obtain *a, int quiet,
                   const struct cdd_manifest *m, struct cdd_report *rep,
                   struct cdd_obtain_result *res)
{
    struct cdd_cli_notes nc = {rep, cdd_progress_new(quiet)};
    struct cdd_obtain_opts o = obtain_opts(a, m, &nc);
    int r = cdd_obtain_archive(&o, res);
    cdd_progress_free(nc.ui);
    return report_obtained(m, rep, res, r);
}

/* ---- install while downloading (issue 20, docs/fetch.md) ---------------
 * The download runs on its own thread; its notes and progress bar are the
 * only output while it runs (the install's own progress is not shown), so
 * the report is touched by one thread at a time: the caller says nothing
 * between start and finish. */
struct cdd_cli_stream {
    struct cdd_cli_notes nc;
    struct cdd_obtain_stream *s;
    const struct cdd_manifest *m;
};

int cdd_cli_stream_start(const struct cdd_opts_obtain *a, int quiet,
                         const struct cdd_manifest *m, struct cdd_report *rep,
                         struct cdd_cli_stream **out)
{
    struct cdd_cli_stream *st = calloc(1, sizeof *st);
    int r;
    *out = NULL;
    if (!st)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    st->nc.rep = rep;
    st->nc.ui = cdd_progress_new(quiet);
    st->m = m;
    struct cdd_obtain_opts o = obtain_opts(a, m, &st->nc);
    if ((r = cdd_obtain_stream_start(&o, &st->s)) < 0) {
        cdd_progress_free(st->nc.ui);
        free(st);
        return r;
    }
    *out = st;
    return 0;
}

int cdd_cli_stream_reader(struct cdd_cli_stream *st, struct cdd_rfile **f)
{
    return cdd_feed_wait_ready(cdd_obtain_stream_feed(st->s), f) ==
           CDD_FEED_READY;
}

const char *cdd_cli_stream_why(struct cdd_cli_stream *st)
{
    return cdd_feed_why(cdd_obtain_stream_feed(st->s));
}

int cdd_cli_stream_finish(struct cdd_cli_stream *st, struct cdd_report *rep,
                          struct cdd_obtain_result *res, int *abandoned)
{
    int r = cdd_obtain_stream_finish(st->s, res, abandoned);
    cdd_progress_free(st->nc.ui);
    r = report_obtained(st->m, rep, res, r);
    free(st);
    return r;
}

static int report_obtained(const struct cdd_manifest *m,
                           struct cdd_report *rep,
                           struct cdd_obtain_result *res, int r)
{
    char sz[32], sz2[32]; /* fixed: sizes in bytes */
    if (res->pin_source)
        cdd_report_str(rep, "pin", cdd_pin_name(res->pin_source));
    if (res->redistrib_source)
        cdd_report_str(rep, "redistrib", res->redistrib_source);
    if (r)
        return r;
    const struct cdd_fetch_result *f = &res->fetch;
    cdd_report_str(rep, "path", f->path);
    cdd_report_str(rep, "archive_sha256", res->sha256_hex);
    cdd_report_num(rep, "archive_size", (double)f->size);
    cdd_report_str(rep, "url", f->url);
    cdd_report_bool(rep, "cache_hit", f->cache_hit);
    cdd_report_num(rep, "downloaded_bytes", (double)f->downloaded);
    cdd_report_str(rep, "cache_dir", res->cache_dir);
    if (f->cache_hit)
        cdd_report_check(rep, "download", CDD_CHECK_PASS,
                         "%s found in the cache, sha256 re-checked",
                         m->archive.filename);
    else
        cdd_report_check(rep, "download", CDD_CHECK_PASS,
                         "%s from %s (%s received%s)", m->archive.filename,
                         f->url, human_size(f->downloaded, sz, sizeof sz),
                         f->resumed ? ", resumed" : "");
    cdd_report_check(rep, "pin", res->pinned ? CDD_CHECK_PASS : CDD_CHECK_WARN,
                     "%s, sha256 %s (%s)", human_size(f->size, sz2, sizeof sz2),
                     res->sha256_hex,
                     !res->pinned ? "NOT pinned: --allow-unpinned"
                     : res->pin_source == CDD_PIN_REDISTRIB
                         ? "matches NVIDIA's redistrib JSON"
                     : res->pin_source == CDD_PIN_MANIFEST
                         ? "matches the manifest"
                         : "matches --sha256");
    return 0;
}

int cdd_cli_obtain_plan(const struct cdd_opts_obtain *a,
                        const struct cdd_manifest *m, struct cdd_report *rep,
                        struct cdd_obtain_result *res)
{
    struct cdd_cli_notes nc = {rep, cdd_progress_new(1)};
    struct cdd_obtain_opts o = obtain_opts(a, m, &nc);
    struct cdd_obtain_plan p;
    struct cdd_jw *w = NULL;
    char sz[64]; /* fixed: a size in bytes */
    int r;

    memset(res, 0, sizeof *res);
    r = cdd_obtain_plan(&o, &p);
    cdd_progress_free(nc.ui);
    if (p.redistrib_source)
        cdd_report_str(rep, "redistrib", p.redistrib_source);
    if (r)
        goto out;
    cdd_report_str(rep, "pin", cdd_pin_name(p.pin_source));
    if (p.has_size)
        snprintf(sz, sizeof sz, "%llu bytes", (unsigned long long)p.size);
    else
        snprintf(sz, sizeof sz, "size not pinned");
    /* The stable member the Ansible module and other planners read
     * (docs/fetch.md, "Planning without fetching"). */
    if (!(w = cdd_jw_new())) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    cdd_jw_object(w, NULL);
    if (p.url)
        cdd_jw_str(w, "url", p.url);
    else
        cdd_jw_null(w, "url");
    if (p.has_size)
        cdd_jw_uint(w, "size", p.size);
    else
        cdd_jw_null(w, "size");
    if (p.pinned)
        cdd_jw_str(w, "sha256", p.sha256_hex);
    else
        cdd_jw_null(w, "sha256");
    cdd_jw_str(w, "pin", cdd_pin_name(p.pin_source));
    cdd_jw_bool(w, "cached", p.cached);
    if (p.cache_path)
        cdd_jw_str(w, "path", p.cache_path);
    else
        cdd_jw_null(w, "path");
    cdd_jw_end(w);
    cdd_report_doc(rep, "download", w);
    w = NULL; /* the report's now */
    if (p.cached) {
        cdd_say(rep, "%s is in the cache (%s): the dry run checks it; "
                     "nothing is downloaded",
                m->archive.filename, p.cache_path);
        res->pinned = 1;
        res->pin_source = p.pin_source;
        memcpy(res->fetch.sha256, p.sha256, CDD_SHA256_LEN);
        memcpy(res->sha256_hex, p.sha256_hex, CDD_SHA256_HEX);
        res->fetch.cache_hit = 1;
        res->fetch.size = p.size;
        if (!(res->fetch.path = strdup(p.cache_path)))
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    } else if (p.url) {
        cdd_say(rep, "would download %s (%s); dry run: nothing downloaded, "
                     "the cache untouched",
                p.url, sz);
    } else {
        cdd_say(rep, "would look for %s in the cache at %s (no URL to "
                     "download it from); dry run: nothing downloaded",
                m->archive.filename, p.cache_path ? p.cache_path : "?");
    }
out:
    cdd_jw_free(w);
    cdd_obtain_plan_clear(&p);
    return r;
}
