/* Obtaining a manifest's archive when no --archive is given: which sha256
 * pins it (manifest, --sha256, NVIDIA's redistrib JSON), where it may come
 * from (--url, the manifest's URLs, the redistrib's path, all through
 * CUDNN_DEPLOY_MIRROR), then the cache and the downloader. The rule that
 * nothing unpinned is downloaded without --allow-unpinned lives here. */
#include "cdd/obtain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/redistrib.h"
#include "cdd/strbuf.h"
#include "cdd/thread.h"

/* Real redistrib files are a few KB. */
#define REDISTRIB_MAX_BYTES (4u * 1024u * 1024u)

const char *cdd_pin_name(enum cdd_pin p)
{
    switch (p) {
    case CDD_PIN_NONE: return NULL;
    case CDD_PIN_MANIFEST: return "manifest";
    case CDD_PIN_OPTION: return "--sha256";
    case CDD_PIN_REDISTRIB: return "redistrib";
    case CDD_PIN_PER_FILE: return "per-file";
    case CDD_PIN_UNPINNED: return "unpinned";
    }
    return NULL;
}

static int starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int is_url(const char *s)
{
    return starts_with(s, "https://") || starts_with(s, "http://") ||
           starts_with(s, "HTTPS://") || starts_with(s, "HTTP://");
}

char *cdd_mirror_url(const char *url, const char *mirror)
{
    size_t plen = strlen(CDD_NVIDIA_PREFIX);
    if (!mirror || !starts_with(url, CDD_NVIDIA_PREFIX))
        return strdup(url);
    size_t mlen = strlen(mirror);
    int slash = mlen && mirror[mlen - 1] == '/';
    size_t n = mlen + 1 + strlen(url + plen) + 1;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s%s%s", mirror, slash ? "" : "/", url + plen);
    return r;
}

/* A growing list of URLs without duplicates, the sources of one archive:
 * the --url entries (a command line gives at most 32), the manifest's (at
 * most one per JSON value: manifest.c takes 100,000) and the redistrib
 * index's. More is CDD_E_TOOLONG. */
#define OPTION_URLS_MAX 1024u
#define MANIFEST_URLS_MAX 100000u
#define URLS_MAX (OPTION_URLS_MAX + MANIFEST_URLS_MAX + 1u)

struct urls {
    char **v;
    size_t n, cap;
};

static int urls_add(struct urls *u, char *url /* taken */)
{
    if (!url)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < u->n; i++) {
        if (strcmp(u->v[i], url) == 0) {
            free(url);
            return 0;
        }
    }
    int r = CDD_GROW(u->v, &u->cap, u->n + 1, URLS_MAX, "URLs of an archive");
    if (r < 0) {
        free(url);
        return r;
    }
    u->v[u->n++] = url;
    return 0;
}

static void urls_free(struct urls *u)
{
    for (size_t i = 0; i < u->n; i++)
        free(u->v[i]);
    free(u->v);
}

/* The redistrib base for relative paths: the folder the JSON came from,
 * else NVIDIA's (through the mirror). */
static char *redistrib_base(const char *source, int from_url,
                            const char *mirror)
{
    if (from_url) {
        const char *q = strpbrk(source, "?#");
        size_t n = q ? (size_t)(q - source) : strlen(source);
        while (n && source[n - 1] != '/')
            n--;
        char *r = malloc(n + 1);
        if (r) {
            memcpy(r, source, n);
            r[n] = '\0';
        }
        return r;
    }
    return cdd_mirror_url(CDD_REDISTRIB_BASE_URL, mirror);
}

/* Read the redistrib JSON (file or https URL) and pick our entry. */
static int load_redistrib(const struct cdd_obtain_opts *o, const char *mirror,
                          struct cdd_obtain_result *res,
                          struct cdd_redistrib_entry *ent, char **base)
{
    const struct cdd_manifest *m = o->m;
    char *text = NULL;
    size_t len = 0;
    int r, from_url;
    const char *src = o->redistrib;
    if (src) {
        res->redistrib_source = strdup(src);
    } else {
        res->redistrib_source = cdd_mirror_url(m->redistrib_url, mirror);
    }
    if (!res->redistrib_source)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    src = res->redistrib_source;
    from_url = is_url(src);
    /* fleet: file:///DIR/... (a bundle in a folder, docs/fleet.md) is read
     * as the local file; relative paths resolve beside it, as for a URL. */
    int from_file_url = starts_with(src, "file:///");
    if (from_url)
        r = cdd_fetch_document(src, &o->net, REDISTRIB_MAX_BYTES, &text, &len);
    else
        r = cdd_fs_read_all(from_file_url ? src + 7 : src,
                            REDISTRIB_MAX_BYTES, &text, &len);
    from_url |= from_file_url;
    if (r)
        goto out;
    struct cdd_redistrib_query q = {
        .product = m->product, .version = m->version,
        .platform = m->platform, .cuda_major = m->cuda_major,
        .filename = m->archive.filename};
    if ((r = cdd_redistrib_parse(text, len, src, &q, ent)))
        goto out;
    if (!(*base = redistrib_base(src, from_url, mirror)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
out:
    free(text);
    return r;
}


static char *join_url(const char *base, const char *rel)
{
    size_t n = strlen(base) + strlen(rel) + 1;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s%s", base, rel);
    return r;
}

/* The pin for the manifest's archive, in order: the manifest's sha256,
 * --sha256 (which must agree with it), NVIDIA's redistrib JSON -- read only
 * when nothing else pins it and use_redistrib says it may be (--redistrib,
 * or for a download the manifest's redistrib_url). The pinned size comes
 * from the manifest or the redistrib entry (which must agree). *redist_url:
 * where the redistrib entry says the archive is, or NULL. */
struct pin {
    uint8_t sha256[CDD_SHA256_LEN];
    int pinned, has_size;
    uint64_t size;
};

static int decide_pin(const struct cdd_obtain_opts *o, const char *mirror,
                      int use_redistrib, struct cdd_obtain_result *res,
                      struct pin *p, char **redist_url)
{
    const struct cdd_manifest *m = o->m;
    struct cdd_redistrib_entry ent = {0};
    char *base = NULL;
    int r = 0;

    *redist_url = NULL;
    memset(p, 0, sizeof *p);
    p->has_size = m->archive.has_size;
    p->size = m->archive.size;
    if (m->archive.has_sha256) {
        memcpy(p->sha256, m->archive.sha256, CDD_SHA256_LEN);
        p->pinned = 1;
        res->pin_source = CDD_PIN_MANIFEST;
    }
    if (o->sha256) {
        if (p->pinned && memcmp(o->sha256, p->sha256, CDD_SHA256_LEN) != 0) {
            char given[CDD_SHA256_HEX]; /* fixed: sha256 hex */
            cdd_hex_encode(o->sha256, CDD_SHA256_LEN, given);
            r = cdd_fail(CDD_E_CHECKSUM, m->source, 0,
                         "--sha256 %s contradicts the manifest's archive "
                         "sha256; nothing was downloaded or read",
                         given);
            goto out;
        }
        if (!p->pinned) {
            memcpy(p->sha256, o->sha256, CDD_SHA256_LEN);
            p->pinned = 1;
            res->pin_source = CDD_PIN_OPTION;
        }
    }
    if (p->pinned || !use_redistrib || (!o->redistrib && !m->redistrib_url))
        goto out;
    if ((r = load_redistrib(o, mirror, res, &ent, &base)))
        goto out;
    memcpy(p->sha256, ent.sha256, CDD_SHA256_LEN);
    p->pinned = 1;
    res->pin_source = CDD_PIN_REDISTRIB;
    if (ent.has_size) {
        if (p->has_size && p->size != ent.size) {
            r = cdd_fail(CDD_E_CHECKSUM, res->redistrib_source, 0,
                         "size %llu contradicts the manifest's %llu",
                         (unsigned long long)ent.size,
                         (unsigned long long)p->size);
            goto out;
        }
        p->has_size = 1;
        p->size = ent.size;
    }
    if (!(*redist_url = join_url(base, ent.relative_path)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
out:
    free(base);
    cdd_redistrib_entry_clear(&ent);
    return r;
}

/* Keep what pinned a failed attempt (worth reporting), clear the rest. */
static void clear_but_pin(struct cdd_obtain_result *res)
{
    enum cdd_pin ps = res->pin_source;
    char *rs = res->redistrib_source;
    res->redistrib_source = NULL;
    cdd_obtain_result_clear(res);
    res->pin_source = ps;
    res->redistrib_source = rs;
}

int cdd_obtain_local(const struct cdd_obtain_opts *o, const char *archive,
                     struct cdd_obtain_result *res)
{
    struct pin p;
    struct cdd_rfile *f = NULL;
    uint64_t fsize = 0;
    char *unused_url = NULL;
    int r;

    memset(res, 0, sizeof *res);
    /* No network for a file already here unless --redistrib names it. */
    if ((r = decide_pin(o, cdd_getenv(CDD_MIRROR_ENV), o->redistrib != NULL,
                        res, &p, &unused_url)))
        goto out;
    /* Opened as install will open it (symlinks the user named followed;
     * a FIFO or device refused at once). */
    if ((r = cdd_fs_open_read(archive, &f)) || (r = cdd_rfile_size(f, &fsize)))
        goto out;
    /* A file of another size is another file: say so before a byte of it
     * is read (install would hash all of it first). */
    if (p.has_size && fsize != p.size) {
        r = cdd_fail(CDD_E_CHECKSUM, archive, 0,
                     "%llu bytes, but %s pins %llu: not the file the pin "
                     "names (wrong file)",
                     (unsigned long long)fsize,
                     res->pin_source == CDD_PIN_REDISTRIB
                         ? "the redistrib JSON"
                         : "the manifest",
                     (unsigned long long)p.size);
        goto out;
    }
    res->pinned = p.pinned;
    if (p.pinned) {
        memcpy(res->fetch.sha256, p.sha256, CDD_SHA256_LEN);
        cdd_hex_encode(p.sha256, CDD_SHA256_LEN, res->sha256_hex);
    }
    res->fetch.size = fsize;
    if (!(res->fetch.path = strdup(archive)))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
out:
    cdd_rfile_close(f);
    free(unused_url);
    if (r)
        clear_but_pin(res);
    return r;
}

/* The sources, in order (explicit --url entries taken as given), and the
 * rules on them: plain http only under a pin, some URL unless a pin may
 * find the file in the cache. *redist_url is taken. */
static int gather_sources(const struct cdd_obtain_opts *o, const char *mirror,
                          int pinned, char **redist_url, struct urls *urls)
{
    const struct cdd_manifest *m = o->m;
    int r;
    for (size_t i = 0; i < o->n_urls; i++)
        if ((r = urls_add(urls, strdup(o->urls[i]))))
            return r;
    for (size_t i = 0; i < m->archive.n_urls; i++)
        if ((r = urls_add(urls, cdd_mirror_url(m->archive.urls[i], mirror))))
            return r;
    if (*redist_url) {
        r = urls_add(urls, *redist_url);
        *redist_url = NULL;
        if (r)
            return r;
    }
    for (size_t i = 0; !pinned && i < urls->n; i++)
        if (cdd_url_is_http(urls->v[i]))
            return cdd_fail(CDD_E_UNPINNED, urls->v[i], 0,
                            "plain http is used only for a download that a "
                            "sha256 pins");
    if (urls->n == 0 && !pinned)
        return cdd_fail(CDD_E_USAGE, m->source, 0,
                        "no URL for %s: give --url URL, or the archive "
                        "itself with --archive FILE",
                        m->archive.filename);
    return 0;
}

static int unpinned_refused(const struct cdd_manifest *m)
{
    return cdd_fail(CDD_E_UNPINNED, m->source, 0,
                    "nothing pins the sha256 of %s, so a download could "
                    "not be verified; give --sha256 HEX or --redistrib "
                    "FILE|URL (NVIDIA's redistrib_%s.json), or, accepting "
                    "the risk, --allow-unpinned",
                    m->archive.filename, m->version);
}

int cdd_obtain_plan(const struct cdd_obtain_opts *o, struct cdd_obtain_plan *p)
{
    const struct cdd_manifest *m = o->m;
    const char *mirror = cdd_getenv(CDD_MIRROR_ENV);
    struct cdd_obtain_result res;
    struct urls urls = {0};
    char *redist_url = NULL, *cache = NULL;
    struct pin pin;
    int r;

    memset(p, 0, sizeof *p);
    memset(&res, 0, sizeof res);
    if ((r = decide_pin(o, mirror, 1, &res, &pin, &redist_url)))
        goto out;
    p->redistrib_source = res.redistrib_source;
    res.redistrib_source = NULL;
    p->pinned = pin.pinned;
    p->pin_source = pin.pinned ? res.pin_source : CDD_PIN_UNPINNED;
    p->has_size = pin.has_size;
    p->size = pin.size;
    if (!pin.pinned && !o->allow_unpinned) {
        r = unpinned_refused(m);
        goto out;
    }
    if ((r = gather_sources(o, mirror, pin.pinned, &redist_url, &urls)) ||
        (r = cdd_cache_dir(o->cache_dir, &cache)))
        goto out;
    p->n_urls = urls.n;
    if (urls.n && !(p->url = strdup(urls.v[0]))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    if (pin.pinned) {
        memcpy(p->sha256, pin.sha256, CDD_SHA256_LEN);
        cdd_hex_encode(pin.sha256, CDD_SHA256_LEN, p->sha256_hex);
        char *dir = cdd_path_join(cache, p->sha256_hex);
        p->cache_path = dir ? cdd_path_join(dir, m->archive.filename) : NULL;
        free(dir);
        if (!p->cache_path) {
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            goto out;
        }
        /* Looked at, never changed: the same rules as a real lookup
         * (cache.h), minus the removal of what fails them. */
        struct cdd_finfo fi;
        if ((r = cdd_fs_linfo(p->cache_path, &fi)))
            goto out;
        p->cached = fi.type == CDD_FT_FILE && fi.nlink == 1 &&
                    (!fi.owner_known || fi.owner_is_caller) &&
                    (!pin.has_size || fi.size == pin.size);
    }
out:
    urls_free(&urls);
    free(redist_url);
    free(cache);
    cdd_obtain_result_clear(&res);
    if (r) {
        char *rs = p->redistrib_source;
        p->redistrib_source = NULL;
        cdd_obtain_plan_clear(p);
        p->redistrib_source = rs;
    }
    return r;
}

void cdd_obtain_plan_clear(struct cdd_obtain_plan *p)
{
    if (!p)
        return;
    free(p->url);
    free(p->cache_path);
    free(p->redistrib_source);
    memset(p, 0, sizeof *p);
}

int cdd_obtain_archive(const struct cdd_obtain_opts *o,
                       struct cdd_obtain_result *res)
{
    const struct cdd_manifest *m = o->m;
    const char *mirror = cdd_getenv(CDD_MIRROR_ENV);
    struct urls urls = {0};
    char *redist_url = NULL;
    struct pin p;
    int r = 0;

    memset(res, 0, sizeof *res);
    if ((r = decide_pin(o, mirror, 1, res, &p, &redist_url)))
        goto out;
    int pinned = p.pinned, has_size = p.has_size;
    uint64_t size = p.size;
    uint8_t *pin = p.sha256;
    if (!pinned && !o->allow_unpinned) {
        r = unpinned_refused(m);
        goto out;
    }
    res->pinned = pinned;
    if (!pinned)
        res->pin_source = CDD_PIN_UNPINNED;
    if ((r = gather_sources(o, mirror, pinned, &redist_url, &urls)) ||
        (r = cdd_cache_dir(o->cache_dir, &res->cache_dir)))
        goto out;
    struct cdd_fetch_opts fo = {
        .urls = (const char *const *)urls.v, .n_urls = urls.n,
        .cache_dir = res->cache_dir, .filename = m->archive.filename,
        .sha256 = pinned ? pin : NULL, .has_size = has_size, .size = size,
        .net = o->net, .progress = o->progress,
        .progress_ud = o->progress_ud, .feed = o->feed,
        .feed_tail = o->feed_tail};
    if ((r = cdd_fetch_archive(&fo, &res->fetch)))
        goto out;
    cdd_hex_encode(res->fetch.sha256, CDD_SHA256_LEN, res->sha256_hex);
out:
    urls_free(&urls);
    free(redist_url);
    if (r)
        clear_but_pin(res); /* what pinned the attempt is worth reporting */
    return r;
}

void cdd_obtain_result_clear(struct cdd_obtain_result *r)
{
    if (!r)
        return;
    cdd_fetch_result_clear(&r->fetch);
    free(r->redistrib_source);
    free(r->cache_dir);
    memset(r, 0, sizeof *r);
}

/* ---- install while downloading ----------------------------------------- */

struct cdd_obtain_stream {
    struct cdd_thread *thr;
    struct cdd_obtain_opts o;
    struct cdd_obtain_result res;
    struct cdd_errsave err;
    int r;
};

static int ends_with_ci(const char *s, const char *suf)
{
    size_t n = strlen(s), k = strlen(suf);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++) {
        char a = s[n - k + i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a + 32);
        if (a != suf[i])
            return 0;
    }
    return 1;
}

static int stream_main(void *arg)
{
    struct cdd_obtain_stream *s = arg;
    s->r = cdd_obtain_archive(&s->o, &s->res);
    if (s->r)
        cdd_error_save(&s->err);
    /* Whatever happened, the one waiting for a reader stops waiting. */
    cdd_feed_settle(s->o.feed);
    return 0;
}

int cdd_obtain_stream_start(const struct cdd_obtain_opts *o,
                            struct cdd_obtain_stream **out)
{
    struct cdd_obtain_stream *s = calloc(1, sizeof *s);
    int r;
    *out = NULL;
    if (!s)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    s->o = *o;
    if ((r = cdd_feed_new(&s->o.feed)) < 0) {
        free(s);
        return r;
    }
    s->o.feed_tail = o->m->archive.filename &&
                             ends_with_ci(o->m->archive.filename, ".zip")
                         ? CDD_STREAM_ZIP_TAIL
                         : 0;
    if ((r = cdd_thread_start(&s->thr, stream_main, s)) < 0) {
        cdd_feed_unref(s->o.feed);
        free(s);
        return r;
    }
    *out = s;
    return 0;
}

struct cdd_feed *cdd_obtain_stream_feed(struct cdd_obtain_stream *s)
{
    return s->o.feed;
}

int cdd_obtain_stream_finish(struct cdd_obtain_stream *s,
                             struct cdd_obtain_result *res, int *abandoned)
{
    int r = cdd_thread_join(s->thr);
    *abandoned = cdd_feed_abandoned(s->o.feed);
    if (r >= 0) {
        r = s->r;
        if (r)
            (void)cdd_error_restore(&s->err);
    }
    cdd_error_save_free(&s->err);
    *res = s->res;
    cdd_feed_unref(s->o.feed);
    free(s);
    return r;
}
