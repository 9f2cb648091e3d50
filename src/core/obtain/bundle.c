/* Offline bundles (bundle.h, docs/fleet.md): obtain each manifest's archive
 * and its optional components' through the cache, copy them into a folder
 * laid out like NVIDIA's server, and write the pinned manifests and the
 * redistrib index beside them. */
#include "cdd/bundle.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/compat.h"
#include "cdd/fsops.h"
#include "cdd/jsonw.h"
#include "cdd/obtain.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

#define COPY_BUF (1u << 20)

/* Bounds of a bundle (passing one: CDD_E_TOOLONG, never a cut). Its files:
 * per manifest its archive, its optional components' (at most 16,
 * manifest.c), the manifest itself and at most one index, for as many
 * manifests as a command line gives (32, cli.h's lists) with room to spare.
 * A manifest's URLs: at most one per JSON value (manifest.c takes 100,000)
 * and the bundle's own, put first. */
#define COMPONENTS_MAX 16u
#define MANIFESTS_MAX 1024u
#define FILES_MAX (MANIFESTS_MAX * (COMPONENTS_MAX + 3u))
#define URLS_MAX (100000u + 1u)

void cdd_bundle_result_clear(struct cdd_bundle_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].what);
        free(r->items[i].path);
    }
    free(r->items);
    memset(r, 0, sizeof *r);
}

/* NULL: the failure is recorded. */
static struct cdd_bundle_item *item_add(struct cdd_bundle_result *res,
                                        const char *what, const char *path)
{
    if (CDD_GROW(res->items, NULL, res->n + 1, FILES_MAX,
                 "files in a bundle") < 0)
        return NULL;
    struct cdd_bundle_item *it = &res->items[res->n];
    memset(it, 0, sizeof *it);
    it->what = strdup(what);
    it->path = strdup(path);
    if (!it->what || !it->path) {
        free(it->what);
        free(it->path);
        cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return NULL;
    }
    res->n++;
    return it;
}

/* Names in the bundle are allocated to their length, never cut (issue 18:
 * a 245-byte archive name in a folder was cut at 255 bytes, the index then
 * naming a file that does not exist). Each component may hold up to
 * NAME_MAX_BYTES bytes, a whole path (with the bundle folder) up to the
 * platform's limit; anything longer is refused, saying which name. */
#define NAME_MAX_BYTES 255u
#define PATH_MAX_BYTES (CDD_HOST_WINDOWS ? 32767u : 4095u)

static int check_bounds(const char *dir, const char *rel)
{
    size_t total = strlen(dir) + 1 + strlen(rel);
    for (const char *c = rel; *c;) {
        size_t n = strcspn(c, "/");
        if (n > NAME_MAX_BYTES)
            return cdd_fail(CDD_E_USAGE, rel, 0,
                            "a name of %llu bytes in the bundle: names are "
                            "limited to %u bytes per component",
                            (unsigned long long)n, NAME_MAX_BYTES);
        c += n;
        if (*c == '/')
            c++;
    }
    if (total > PATH_MAX_BYTES)
        return cdd_fail(CDD_E_USAGE, rel, 0,
                        "the path in the bundle would be %llu bytes: the "
                        "limit here is %u; give -o a shorter folder",
                        (unsigned long long)total, PATH_MAX_BYTES);
    return 0;
}

/* A bundle-relative name, joined from parts ("a", "/", "b", ..., NULL),
 * allocated, and checked against the bounds (dir NULL: a label, not
 * checked); NULL with the error recorded. */
static char *rel_of(const char *dir, ...)
{
    va_list ap;
    size_t len = 0;
    const char *part;
    va_start(ap, dir);
    while ((part = va_arg(ap, const char *)))
        len += strlen(part);
    va_end(ap);
    char *r = malloc(len + 1), *o = r;
    if (!r) {
        cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return NULL;
    }
    va_start(ap, dir);
    while ((part = va_arg(ap, const char *))) {
        size_t n = strlen(part);
        memcpy(o, part, n);
        o += n;
    }
    va_end(ap);
    *o = '\0';
    if (dir && check_bounds(dir, r)) {
        free(r);
        return NULL;
    }
    return r;
}

/* dir/rel, with the folders made. */
static char *dest_path(const char *dir, const char *rel)
{
    char *p = cdd_path_join(dir, rel), *parent = p ? cdd_fs_dirname(p) : NULL;
    int r = p && parent ? cdd_fs_mkdirs(parent, NULL)
                        : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(parent);
    if (r) {
        free(p);
        return NULL;
    }
    return p;
}

/* Copy src to dest (through dest.part, renamed at the end), hashing the
 * bytes as they are written: they must be the pinned ones. */
static int copy_pinned(const char *src, const char *dest,
                       const uint8_t pin[CDD_SHA256_LEN], uint64_t *size)
{
    struct cdd_rfile *in = NULL;
    struct cdd_file *out = NULL;
    struct cdd_sha256 *h = NULL;
    struct cdd_stat st;
    uint8_t got[CDD_SHA256_LEN];
    char *part = NULL, *buf = NULL;
    size_t n = 0;
    int r;
    *size = 0;
    size_t len = strlen(dest) + 6;
    if (!(part = malloc(len)) || !(buf = malloc(COPY_BUF))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    snprintf(part, len, "%s.part", dest);
    if ((r = cdd_fs_lstat(part, &st)) ||
        (st.type != CDD_FT_NONE && (r = cdd_fs_unlink(part))) ||
        (r = cdd_sha256_new(&h)) || (r = cdd_fs_open_read(src, &in)) ||
        (r = cdd_fs_create(part, 0, &out)))
        goto out;
    while (!(r = cdd_rfile_read(in, buf, COPY_BUF, &n)) && n) {
        if ((r = cdd_file_write(out, buf, n)) ||
            (r = cdd_sha256_update(h, buf, n)))
            goto out;
        *size += n;
    }
    if (r || (r = cdd_sha256_final(h, got)))
        goto out;
    if (memcmp(got, pin, CDD_SHA256_LEN) != 0) {
        r = cdd_fail(CDD_E_CHECKSUM, src, 0,
                     "changed while copied into the bundle (sha256 no longer "
                     "matches its pin)");
        goto out;
    }
    r = cdd_file_finish(out);
    out = NULL;
    if (r || (r = cdd_fs_rename(part, dest)))
        goto out;
    char *parent = cdd_fs_dirname(dest);
    r = parent ? cdd_fs_sync_dir(parent) : cdd_fail(CDD_E_NOMEM, 0, 0, 0);
    free(parent);
out:
    cdd_file_abort(out);
    if (r && part)
        cdd_fs_unlink(part);
    cdd_rfile_close(in);
    cdd_sha256_free(h);
    free(part);
    free(buf);
    return r;
}

/* The --archive files named like m's archive, as file:// URLs: obtain then
 * checks them against the pin like any source. */
static int local_sources(const struct cdd_bundle_opts *o,
                         const struct cdd_manifest *m, char ***urls,
                         size_t *n)
{
    *urls = calloc(o->n_archives + 1, sizeof **urls);
    *n = 0;
    if (!*urls)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < o->n_archives; i++) {
        if (strcmp(cdd_path_basename(o->archives[i]),
                   m->archive.filename) != 0)
            continue;
        char *abs = cdd_absolute_path(o->archives[i]);
        size_t len = abs ? strlen(abs) + 9 : 0;
        char *u = abs ? malloc(len) : NULL;
        if (!u) {
            free(abs);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
        /* file:// + /abs/path, or file:/// + C:/path. */
        for (char *p = abs; *p; p++)
            if (*p == '\\')
                *p = '/';
        snprintf(u, len, "file://%s%s", abs[0] == '/' ? "" : "/", abs);
        free(abs);
        (*urls)[(*n)++] = u;
    }
    return 0;
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* Put url first among m's archive URLs (unless already there). */
static int url_first(struct cdd_manifest *m, const char *url)
{
    for (size_t i = 0; i < m->archive.n_urls; i++)
        if (strcmp(m->archive.urls[i], url) == 0)
            return 0;
    int r = CDD_GROW(m->archive.urls, NULL, m->archive.n_urls + 1, URLS_MAX,
                     "URLs of an archive");
    if (r < 0)
        return cdd_fail(r, m->source, 0, "%s", cdd_last_error()->msg);
    char **v = m->archive.urls;
    memmove(v + 1, v, m->archive.n_urls * sizeof *v);
    if (!(v[0] = strdup(url))) {
        memmove(v, v + 1, m->archive.n_urls * sizeof *v);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    m->archive.n_urls++;
    return 0;
}

/* Obtain m's archive (pinned) and copy it to DIR/rel; m then carries the
 * pin and the bundle's URL. */
static int bundle_archive(const struct cdd_bundle_opts *o,
                          struct cdd_manifest *m, const char *rel,
                          const char *what, struct cdd_bundle_result *res)
{
    struct cdd_obtain_result got = {0};
    char **urls = NULL, *dest = NULL, *url = NULL;
    size_t n_urls = 0;
    uint64_t size = 0;
    int r = local_sources(o, m, &urls, &n_urls);
    if (r)
        goto out;
    struct cdd_obtain_opts oo = {
        .m = m, .urls = (const char *const *)urls, .n_urls = n_urls,
        .cache_dir = o->cache_dir, .net = o->net, .progress = o->progress,
        .progress_ud = o->progress_ud};
    if ((r = cdd_obtain_archive(&oo, &got)))
        goto out;
    if (!got.pinned) {
        r = cdd_fail(CDD_E_UNPINNED, m->source, 0,
                     "a bundle holds pinned archives only");
        goto out;
    }
    if (!(dest = dest_path(o->dir, rel))) {
        r = cdd_last_error()->code ? cdd_last_error()->code : CDD_E_NOMEM;
        goto out;
    }
    if ((r = copy_pinned(got.fetch.path, dest, got.fetch.sha256, &size)))
        goto out;
    struct cdd_bundle_item *it = item_add(res, what, rel);
    if (!it) {
        r = cdd_last_error()->code;
        goto out;
    }
    memcpy(it->sha256, got.fetch.sha256, CDD_SHA256_LEN);
    it->size = size;
    it->cache_hit = got.fetch.cache_hit;
    m->archive.has_sha256 = 1;
    memcpy(m->archive.sha256, got.fetch.sha256, CDD_SHA256_LEN);
    m->archive.has_size = 1;
    m->archive.size = size;
    size_t len = strlen(CDD_NVIDIA_PREFIX) + strlen(rel) + 1;
    if (!(url = malloc(len))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    snprintf(url, len, "%s%s", CDD_NVIDIA_PREFIX, rel);
    r = url_first(m, url);
out:
    cdd_obtain_result_clear(&got);
    strv_free(urls, n_urls);
    free(dest);
    free(url);
    return r;
}

static int write_text(const char *dir, const char *rel, const char *text,
                      const char *what, struct cdd_bundle_result *res)
{
    char *dest = dest_path(dir, rel);
    int r = dest ? cdd_fs_write_atomic(dest, text, strlen(text))
                 : (cdd_last_error()->code ? cdd_last_error()->code
                                           : CDD_E_NOMEM);
    free(dest);
    if (!r && !item_add(res, what, rel))
        r = cdd_last_error()->code;
    return r;
}

/* redistrib_<version>.json in NVIDIA's nested shape, one entry per bundled
 * manifest of that version (redistrib.h). */
static int write_redistrib(const struct cdd_bundle_opts *o,
                           struct cdd_manifest *const *ms, size_t n,
                           size_t first, struct cdd_bundle_result *res)
{
    const char *version = ms[first]->version;
    char hex[CDD_SHA256_HEX], size[32]; /* fixed: sha256 hex, a number */
    char *text = NULL, *rel = NULL;
    int r = 0;
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "release_label", version);
    cdd_jw_object(w, "cudnn");
    cdd_jw_str(w, "name", "NVIDIA CUDA Deep Neural Network library");
    cdd_jw_str(w, "license", "cudnn");
    cdd_jw_str(w, "version", version);
    for (int p = 0; p < CDD_PLATFORM_COUNT; p++) {
        int open = 0;
        for (size_t i = first; i < n; i++) {
            const struct cdd_manifest *m = ms[i];
            if (strcmp(m->version, version) != 0 || (int)m->platform != p)
                continue;
            if (!open)
                cdd_jw_object(w, cdd_platform_name(m->platform));
            open = 1;
            char key[16]; /* fixed: "cuda" and an int */
            snprintf(key, sizeof key, "cuda%d", m->cuda_major);
            free(rel);
            if (!(rel = rel_of(o->dir, "cudnn/redist/cudnn/",
                               cdd_platform_name(m->platform), "/",
                               m->archive.filename, (char *)NULL))) {
                r = cdd_last_error()->code;
                break;
            }
            cdd_hex_encode(m->archive.sha256, CDD_SHA256_LEN, hex);
            snprintf(size, sizeof size, "%llu",
                     (unsigned long long)m->archive.size);
            cdd_jw_object(w, key);
            /* relative to the redist folder, as NVIDIA's index says */
            cdd_jw_str(w, "relative_path", rel + strlen("cudnn/redist/"));
            cdd_jw_str(w, "sha256", hex);
            cdd_jw_str(w, "size", size);
            cdd_jw_end(w);
        }
        if (open)
            cdd_jw_end(w);
        if (r)
            break;
    }
    cdd_jw_end(w);
    cdd_jw_end(w);
    free(rel);
    rel = NULL;
    if (r) {
        cdd_jw_free(w);
        return r;
    }
    r = cdd_jw_finish(w, CDD_JW_PRETTY, &text);
    if (!r && !(rel = rel_of(o->dir, "cudnn/redist/redistrib_", version,
                             ".json", (char *)NULL)))
        r = cdd_last_error()->code;
    if (!r)
        r = write_text(o->dir, rel, text, "redistrib", res);
    free(rel);
    free(text);
    return r;
}

int cdd_bundle_write(const struct cdd_bundle_opts *o,
                     struct cdd_manifest *const *ms, size_t n,
                     struct cdd_bundle_result *res)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    char *text = NULL, *rel = NULL, *what = NULL;
    int r = 0;
    memset(res, 0, sizeof *res);
    if (!n)
        return cdd_fail(CDD_E_USAGE, NULL, 0, "no manifest to bundle");
    for (size_t i = 0; i < n; i++) {
        const char *why = NULL;
        if (!cdd_path_is_safe(ms[i]->name, 0, &why) ||
            strchr(ms[i]->name, '/'))
            return cdd_fail(CDD_E_USAGE, ms[i]->source, 0,
                            "the manifest's name \"%s\" cannot be a file "
                            "name in the bundle", ms[i]->name);
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(ms[i]->name, ms[j]->name) == 0)
                return cdd_fail(CDD_E_USAGE, ms[i]->source, 0,
                                "the manifest %s is given twice",
                                ms[i]->name);
    if ((r = cdd_fs_mkdirs(o->dir, NULL)))
        return r;
    for (size_t i = 0; !r && i < n; i++) {
        struct cdd_manifest *m = ms[i];
        if (!(rel = rel_of(o->dir, "cudnn/redist/cudnn/",
                           cdd_platform_name(m->platform), "/",
                           m->archive.filename, (char *)NULL)))
            return cdd_last_error()->code;
        r = bundle_archive(o, m, rel, m->name, res);
        free(rel);
        rel = NULL;
        for (size_t k = 0; !r && k < m->n_components; k++) {
            struct cdd_mcomponent *c = &m->components[k];
            cdd_hex_encode(c->m->archive.sha256, CDD_SHA256_LEN, hex);
            rel = rel_of(o->dir, CDD_BUNDLE_COMPONENTS, "/", hex, "/",
                         c->m->archive.filename, (char *)NULL);
            what = rel_of(NULL, m->name, " component ", c->name, (char *)NULL);
            r = rel && what ? bundle_archive(o, c->m, rel, what, res)
                            : cdd_last_error()->code;
            free(rel);
            free(what);
            rel = what = NULL;
        }
    }
    /* The manifests, now pinned and pointing at the bundle first. */
    for (size_t i = 0; !r && i < n; i++) {
        if (!(rel = rel_of(o->dir, CDD_BUNDLE_MANIFESTS, "/", ms[i]->name,
                           ".json", (char *)NULL)))
            return cdd_last_error()->code;
        if (!(r = cdd_manifest_to_json(ms[i], &text)))
            r = write_text(o->dir, rel, text, ms[i]->name, res);
        free(text);
        free(rel);
        text = rel = NULL;
    }
    /* One index per version, as NVIDIA publishes them. */
    for (size_t i = 0; !r && i < n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(ms[j]->version, ms[i]->version) == 0;
        if (!seen)
            r = write_redistrib(o, ms, n, i, res);
    }
    return r;
}
