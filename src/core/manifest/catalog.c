/* Loading the release catalog: NVIDIA's redistrib JSONs (read by
 * redistrib.c, every entry) joined with facts.json (the support matrices'
 * facts and the re-spun digests), compiled in or from a folder. The facts
 * file is read here with cJSON, under the same rule as redistrib.c: every
 * part used is checked, with the JSON path in the message. */
#include "cdd/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonparse.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"
#include "cdd/redistrib.h"
#include "cdd/strbuf.h"

#define FILE_MAX (4u << 20) /* one redistrib JSON is ~5 KB */

/* "9.13.0.50" into v[4]: 1 to 4 numbers; -1 when not a version. */
static int parse_version(const char *s, int v[4])
{
    int n = 0;
    memset(v, 0, 4 * sizeof v[0]);
    while (*s && n < 4) {
        long x = 0;
        int d = 0;
        while (*s >= '0' && *s <= '9' && d < 7) {
            x = x * 10 + (*s++ - '0');
            d++;
        }
        if (!d)
            return -1;
        v[n++] = (int)x;
        if (*s == '.')
            s++;
        else
            break;
    }
    return *s ? -1 : n;
}

/* "_cuda11-" / "_cuda13.4-" in a flat entry's file name. */
static void variant_from_name(const char *name, int *major, int *minor,
                              char *buf, size_t len)
{
    const char *p = strstr(name, "_cuda");
    *major = 0;
    *minor = -1;
    buf[0] = '\0';
    if (!p)
        return;
    p += 5;
    int ma = 0, mi = -1, d = 0;
    while (*p >= '0' && *p <= '9' && d < 3) {
        ma = ma * 10 + (*p++ - '0');
        d++;
    }
    if (!d)
        return;
    if (*p == '.' && p[1] >= '0' && p[1] <= '9') {
        mi = 0;
        for (p++, d = 0; *p >= '0' && *p <= '9' && d < 3; p++, d++)
            mi = mi * 10 + (*p - '0');
    }
    *major = ma;
    *minor = mi;
    if (mi >= 0)
        snprintf(buf, len, "cuda%d.%d", ma, mi);
    else
        snprintf(buf, len, "cuda%d", ma);
}

/* A failure of the growth rule (cdd_grow) recorded again with the file
 * named and the rule's words kept. */
static int at_source(int r, const char *source)
{
    return cdd_fail(r, source, 0, "%s", cdd_last_error()->msg);
}

static int add_release(struct cdd_catalog *c, const char *text, size_t len,
                       const char *source, const char *stem)
{
    struct cdd_redistrib_list l;
    struct cdd_cat_release *rel;
    int r = cdd_redistrib_list_parse(text, len, source, "cudnn", &l);
    if (r)
        return r;
    if ((r = CDD_GROW(c->releases, NULL, c->n + 1, CDD_CAT_MAX_RELEASES,
                      "releases in a catalog")) < 0) {
        r = at_source(r, source);
        goto out;
    }
    rel = &c->releases[c->n++];
    memset(rel, 0, sizeof *rel);
    if (parse_version(l.version, rel->v) < 2) {
        r = cdd_fail(CDD_E_MANIFEST, source, 0,
                     "cudnn.version: '%.40s' is not a version", l.version);
        goto out;
    }
    rel->version = l.version;
    l.version = NULL;
    rel->date = l.date;
    l.date = NULL;
    if (l.label) {
        rel->label = l.label;
        l.label = NULL;
    } else if (!(rel->label = cdd_strdup(stem))) {
        r = cdd_fail(CDD_E_NOMEM, source, 0, NULL);
        goto out;
    }
    if (!(rel->source = cdd_strdup(source)) ||
        (l.n && !(rel->archives = calloc(l.n, sizeof *rel->archives)))) {
        r = cdd_fail(CDD_E_NOMEM, source, 0, NULL);
        goto out;
    }
    for (size_t i = 0; i < l.n; i++) {
        struct cdd_redistrib_item *it = &l.items[i];
        struct cdd_cat_archive *a = &rel->archives[rel->n_archives++];
        char vb[40]; /* fixed: a CUDA variant (cudaN.M) of a file name */
        a->platform = it->platform;
        it->platform = NULL;
        a->relative_path = it->e.relative_path;
        it->e.relative_path = NULL;
        a->filename = cdd_path_basename(a->relative_path);
        variant_from_name(a->filename, &a->cuda_major, &a->cuda_minor, vb,
                          sizeof vb);
        if (it->variant) {
            a->variant = it->variant;
            it->variant = NULL;
            a->cuda_major = atoi(a->variant + 4);
            a->cuda_minor = -1;
        } else if (!(a->variant = cdd_strdup(vb[0] ? vb : "any"))) {
            r = cdd_fail(CDD_E_NOMEM, source, 0, NULL);
            goto out;
        }
        a->has_md5 = it->e.has_md5;
        memcpy(a->md5, it->e.md5, sizeof a->md5);
        if (!(a->digests = calloc(1, sizeof *a->digests)) ||
            !(a->digests[0].source = cdd_strdup(source))) {
            r = cdd_fail(CDD_E_NOMEM, source, 0, NULL);
            goto out;
        }
        a->n_digests = 1;
        memcpy(a->digests[0].sha256, it->e.sha256, CDD_SHA256_LEN);
        a->digests[0].has_size = it->e.has_size;
        a->digests[0].size = it->e.size;
    }
out:
    cdd_redistrib_list_clear(&l);
    return r;
}

/* ---- facts.json ---------------------------------------------------------- */

struct fctx {
    const char *source;
};

static int fbad(const struct fctx *f, const char *jp, const char *what)
{
    return cdd_fail(CDD_E_MANIFEST, f->source, 0, "%s: %s", jp, what);
}

static const char *fstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "12.0-12.9" (or "11.8") into major.lo-hi minors. */
static int cuda_range(const char *s, int major, int *lo, int *hi)
{
    int a[4], b[4], na, nb;
    char buf[32]; /* fixed: a version; a longer one is refused */
    const char *dash = strchr(s, '-');
    if (strlen(s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%.*s", dash ? (int)(dash - s) : (int)strlen(s),
             s);
    na = parse_version(buf, a);
    nb = dash ? parse_version(dash + 1, b) : na;
    if (!dash)
        memcpy(b, a, sizeof b);
    if (na != 2 || nb != 2 || a[0] != major || b[0] != major || a[1] > b[1])
        return -1;
    *lo = a[1];
    *hi = b[1];
    return 0;
}

static int cc_range(const char *s, int *lo, int *hi)
{
    char buf[16]; /* fixed: a version; a longer one is refused */
    const char *dash = strchr(s, '-');
    if (!dash || (size_t)(dash - s) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%.*s", (int)(dash - s), s);
    *lo = cdd_cat_cc_parse(buf);
    *hi = cdd_cat_cc_parse(dash + 1);
    return *lo < 0 || *hi < 0 || *lo > *hi ? -1 : 0;
}

static int read_variant(const struct fctx *f, const cJSON *o, const char *jp,
                        int major, struct cdd_cat_variant *v)
{
    const char *s;
    const cJSON *needs;
    memset(v, 0, sizeof *v);
    v->cuda_major = major;
    v->minor_lo = v->minor_hi = -1;
    if (!cJSON_IsObject(o))
        return fbad(f, jp, "expected an object");
    if ((s = fstr(o, "cuda")) &&
        cuda_range(s, major, &v->minor_lo, &v->minor_hi))
        return fbad(f, jp, "cuda: expected \"<major>.<lo>-<major>.<hi>\"");
    if ((s = fstr(o, "cc")) && cc_range(s, &v->cc_lo, &v->cc_hi))
        return fbad(f, jp, "cc: expected \"<lo>-<hi>\" such as \"5.0-9.0\"");
    needs = cJSON_GetObjectItemCaseSensitive(o, "cc_needs_cuda");
    if (needs) {
        const cJSON *e = needs->child;
        int lo, hi;
        if (!cJSON_IsObject(needs) || !e || e->next || !cJSON_IsString(e) ||
            (v->needs_cc = cdd_cat_cc_parse(e->string)) < 0 ||
            cuda_range(e->valuestring, major, &lo, &hi))
            return fbad(f, jp, "cc_needs_cuda: expected {\"<cc>\": "
                               "\"<major>.<minor>\"}");
        v->needs_minor = lo;
    }
    return 0;
}

static struct cdd_cat_release *by_label(struct cdd_catalog *c,
                                        const char *label)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->releases[i].label, label) == 0)
            return &c->releases[i];
    return NULL;
}

/* A JSON path: parent, '.', an untrusted key, whole (never cut). */
static char *key_path(const char *parent, const char *key)
{
    return cdd_aprintf(CDD_TEXT_MAX, "JSON path", "%s.%s", parent,
                       key ? key : "");
}

static int release_facts_at(const struct fctx *f, struct cdd_catalog *c,
                            const cJSON *o, const char *jp)
{
    struct cdd_cat_release *rel = by_label(c, o->string);
    const cJSON *it;
    int r;
    if (!cJSON_IsObject(o))
        return fbad(f, jp, "expected an object");
    if (!rel)
        return 0; /* facts ahead of the data (a trimmed test catalog) */
    rel->has_facts = 1;
    if (!(rel->layout = cdd_strdup(fstr(o, "layout"))) && fstr(o, "layout"))
        return cdd_fail(CDD_E_NOMEM, f->source, 0, NULL);
    if (!(rel->matrix = cdd_strdup(fstr(o, "matrix"))) && fstr(o, "matrix"))
        return cdd_fail(CDD_E_NOMEM, f->source, 0, NULL);
    cJSON_ArrayForEach(it, o)
    {
        char *vjp;
        if (!it->string || strncmp(it->string, "cuda", 4) != 0)
            continue;
        int major = atoi(it->string + 4);
        if (!(vjp = key_path(jp, it->string)))
            return cdd_last_error()->code;
        if (major <= 0 || major > CDD_CAT_MAX_CUDA_MAJORS)
            r = fbad(f, vjp, "expected cuda<major>");
        else if ((r = CDD_GROW(rel->variants, NULL, rel->n_variants + 1,
                               CDD_CAT_MAX_CUDA_MAJORS,
                               "CUDA variants of a release")) < 0)
            r = cdd_fail(r, f->source, 0, "%s: %s", vjp,
                         cdd_last_error()->msg);
        else
            r = read_variant(f, it, vjp, major,
                             &rel->variants[rel->n_variants]);
        free(vjp);
        if (r)
            return r;
        rel->n_variants++;
    }
    return 0;
}

static int read_release_facts(const struct fctx *f, struct cdd_catalog *c,
                              const cJSON *o)
{
    char *jp = key_path("releases", o->string);
    if (!jp)
        return cdd_last_error()->code;
    int r = release_facts_at(f, c, o, jp);
    free(jp);
    return r;
}

static int respins_at(const struct fctx *f, struct cdd_catalog *c,
                      const cJSON *path, const char *jp);

static int read_respins(const struct fctx *f, struct cdd_catalog *c,
                        const cJSON *o)
{
    const cJSON *path;
    cJSON_ArrayForEach(path, o)
    {
        char *jp = key_path("respins", path->string);
        if (!jp)
            return cdd_last_error()->code;
        int r = respins_at(f, c, path, jp);
        free(jp);
        if (r)
            return r;
    }
    return 0;
}

/* The re-spun digests of one archive, path its relative path. */
static int respins_at(const struct fctx *f, struct cdd_catalog *c,
                      const cJSON *path, const char *jp)
{
    const cJSON *d;
    {
        struct cdd_cat_archive *a = NULL;
        for (size_t i = 0; i < c->n && !a; i++)
            for (size_t j = 0; j < c->releases[i].n_archives; j++)
                if (strcmp(c->releases[i].archives[j].relative_path,
                           path->string) == 0)
                    a = &c->releases[i].archives[j];
        if (!cJSON_IsArray(path))
            return fbad(f, jp, "expected a list");
        if (!a)
            return 0;
        cJSON_ArrayForEach(d, path)
        {
            const char *sha = fstr(d, "sha256"), *size = fstr(d, "size");
            const char *src = fstr(d, "source");
            struct cdd_cat_digest g = {{0}, 0, 0, NULL};
            if (!sha || strlen(sha) != 64 ||
                cdd_hex_decode(sha, g.sha256, CDD_SHA256_LEN))
                return fbad(f, jp, "sha256: expected 64 hex digits");
            if (size) {
                char *end;
                g.size = strtoull(size, &end, 10);
                if (!*size || *end || size[0] == '-')
                    return fbad(f, jp, "size: expected decimal digits");
                g.has_size = 1;
            }
            if (!src)
                return fbad(f, jp, "source: every re-spun digest says where "
                                   "it was published");
            if (cdd_cat_digest_index(a, g.sha256) >= 0)
                continue;
            int r = CDD_GROW(a->digests, NULL, a->n_digests + 1,
                             CDD_CAT_MAX_DIGESTS,
                             "sha256s published for one archive");
            if (r < 0)
                return cdd_fail(r, f->source, 0, "%s: %s", jp,
                                cdd_last_error()->msg);
            if (!(g.source = strdup(src)))
                return cdd_fail(CDD_E_NOMEM, f->source, 0, NULL);
            a->digests[a->n_digests++] = g;
        }
    }
    return 0;
}

static int read_drivers(const struct fctx *f, struct cdd_catalog *c,
                        const cJSON *o)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        int major = strncmp(it->string, "cuda", 4) == 0 ? atoi(it->string + 4)
                                                        : 0;
        if (major <= 0 || !cJSON_IsObject(it)) {
            char *jp = key_path("drivers", it->string);
            int r = jp ? fbad(f, jp, "expected cuda<major>: {linux, windows}")
                       : cdd_last_error()->code;
            free(jp);
            return r;
        }
        int r = CDD_GROW(c->drivers, NULL, c->n_drivers + 1,
                         CDD_CAT_MAX_CUDA_MAJORS, "CUDA majors in drivers");
        if (r < 0)
            return at_source(r, f->source);
        struct cdd_cat_driver *d = &c->drivers[c->n_drivers++];
        d->cuda_major = major;
        d->linux_min = cdd_strdup(fstr(it, "linux"));
        d->windows_min = cdd_strdup(fstr(it, "windows"));
    }
    return 0;
}

static int add_facts(struct cdd_catalog *c, const char *text, size_t len,
                     const char *source)
{
    struct fctx f = {source};
    cJSON *root = NULL;
    const cJSON *o, *it;
    int r = 0;
    if (memchr(text, '\0', len))
        return fbad(&f, "(root)", "not valid JSON (a NUL byte inside)");
    char *copy = malloc(len + 1);
    if (!copy)
        return cdd_fail(CDD_E_NOMEM, source, 0, NULL);
    memcpy(copy, text, len);
    copy[len] = '\0';
    int parse_nomem = 0;
    root = cdd_json_parse(copy, len + 1, NULL, 1, &parse_nomem);
    free(copy);
    if (parse_nomem)
        return cdd_fail(CDD_E_NOMEM, source, 0, NULL);
    if (!cJSON_IsObject(root)) {
        r = fbad(&f, "(root)", "not a JSON object");
        goto out;
    }
    if ((o = cJSON_GetObjectItemCaseSensitive(root, "drivers")) &&
        (r = read_drivers(&f, c, o)))
        goto out;
    o = cJSON_GetObjectItemCaseSensitive(root, "releases");
    cJSON_ArrayForEach(it, o)
    {
        if ((r = read_release_facts(&f, c, it)))
            goto out;
    }
    if ((o = cJSON_GetObjectItemCaseSensitive(root, "respins")) &&
        (r = read_respins(&f, c, o)))
        goto out;
out:
    cJSON_Delete(root);
    return r;
}

/* ---- loading --------------------------------------------------------------- */

static int newest_first(const void *pa, const void *pb)
{
    const struct cdd_cat_release *a = pa, *b = pb;
    for (int i = 0; i < 4; i++)
        if (a->v[i] != b->v[i])
            return a->v[i] > b->v[i] ? -1 : 1;
    return strcmp(a->label, b->label);
}

/* "redistrib_9.13.0.json" -> "9.13.0"; NULL when not such a name. */
static int redistrib_stem(const char *name, char *stem, size_t len)
{
    size_t n = strlen(name);
    if (n <= 15 || strncmp(name, "redistrib_", 10) != 0 ||
        strcmp(name + n - 5, ".json") != 0 || n - 15 >= len)
        return 0;
    snprintf(stem, len, "%.*s", (int)(n - 15), name + 10);
    return 1;
}

struct dirlist {
    const char *dir;
    char **names;
    size_t n;
};

static int collect(void *ud, const char *name)
{
    struct dirlist *d = ud;
    char stem[64]; /* fixed: a release label; longer names are not catalog files */
    if (!redistrib_stem(name, stem, sizeof stem) &&
        strcmp(name, "facts.json") != 0)
        return 0;
    /* The releases' bound, and facts.json. */
    int r = CDD_GROW(d->names, NULL, d->n + 1, CDD_CAT_MAX_RELEASES + 1,
                     "catalog files (redistrib_*.json, facts.json)");
    if (r < 0)
        return at_source(r, d->dir);
    if (!(d->names[d->n] = strdup(name)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    d->n++;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(struct cdd_catalog *c, const char *dir)
{
    struct dirlist d = {dir, NULL, 0};
    char *facts = NULL;
    size_t facts_len = 0;
    char *facts_path = NULL;
    int r = cdd_fs_list(dir, collect, &d);
    if (!r && d.n == 0)
        r = cdd_fail(CDD_E_NOTFOUND, dir, 0,
                     "no redistrib_*.json in this catalog folder");
    if (!r)
        qsort(d.names, d.n, sizeof *d.names, by_name);
    for (size_t i = 0; !r && i < d.n; i++) {
        char stem[64], *path, *text = NULL; /* fixed: a release label; longer names are not catalog files */
        size_t len = 0, pl = strlen(dir) + strlen(d.names[i]) + 2;
        if (!(path = malloc(pl))) {
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            break;
        }
        snprintf(path, pl, "%s/%s", dir, d.names[i]);
        r = cdd_fs_read_all(path, FILE_MAX, &text, &len);
        if (!r && redistrib_stem(d.names[i], stem, sizeof stem))
            r = add_release(c, text, len, path, stem);
        if (!r && strcmp(d.names[i], "facts.json") == 0) {
            facts = text;
            facts_len = len;
            facts_path = path;
            text = NULL;
            path = NULL;
        }
        free(text);
        free(path);
    }
    if (!r) {
        qsort(c->releases, c->n, sizeof *c->releases, newest_first);
        if (facts)
            r = add_facts(c, facts, facts_len, facts_path);
    }
    for (size_t i = 0; i < d.n; i++)
        free(d.names[i]);
    free(d.names);
    free(facts);
    free(facts_path);
    return r;
}

static int load_builtin(struct cdd_catalog *c)
{
    const struct cdd_builtin_manifest *facts = NULL;
    char source[96], stem[64]; /* fixed: builtin: and a builtin table name */
    int r = 0;
    for (size_t i = 0; !r && i < cdd_builtin_catalog_count; i++) {
        const struct cdd_builtin_manifest *b = &cdd_builtin_catalog[i];
        char name[80]; /* fixed: a builtin table name */
        snprintf(name, sizeof name, "%s.json", b->name);
        snprintf(source, sizeof source, "builtin:%s", name);
        if (strcmp(b->name, "facts") == 0)
            facts = b;
        else if (redistrib_stem(name, stem, sizeof stem))
            r = add_release(c, b->text, b->len, source, stem);
    }
    if (!r) {
        qsort(c->releases, c->n, sizeof *c->releases, newest_first);
        if (facts)
            r = add_facts(c, facts->text, facts->len, "builtin:facts.json");
    }
    return r;
}

int cdd_catalog_load(const char *dir, struct cdd_catalog **out)
{
    struct cdd_catalog *c = calloc(1, sizeof *c);
    int r;
    *out = NULL;
    if (!c)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!dir) {
        const char *env = cdd_getenv(CDD_CATALOG_ENV);
        if (env && *env)
            dir = env;
    }
    c->source = cdd_strdup(dir ? dir : "builtin");
    if (!c->source)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    else
        r = dir ? load_dir(c, dir) : load_builtin(c);
    if (r) {
        cdd_catalog_free(c);
        return r;
    }
    *out = c;
    return 0;
}

void cdd_catalog_free(struct cdd_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        struct cdd_cat_release *rel = &c->releases[i];
        for (size_t j = 0; j < rel->n_archives; j++) {
            struct cdd_cat_archive *a = &rel->archives[j];
            for (size_t k = 0; k < a->n_digests; k++)
                free(a->digests[k].source);
            free(a->digests);
            free(a->platform);
            free(a->variant);
            free(a->relative_path);
        }
        free(rel->archives);
        free(rel->variants);
        free(rel->version);
        free(rel->label);
        free(rel->date);
        free(rel->source);
        free(rel->layout);
        free(rel->matrix);
    }
    for (size_t i = 0; i < c->n_drivers; i++) {
        free(c->drivers[i].linux_min);
        free(c->drivers[i].windows_min);
    }
    free(c->drivers);
    free(c->releases);
    free(c->source);
    free(c);
}

const struct cdd_cat_release *cdd_catalog_release(const struct cdd_catalog *c,
                                                  const char *version)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->releases[i].version, version) == 0)
            return &c->releases[i];
    return NULL;
}

const struct cdd_cat_variant *cdd_cat_variant_of(const struct cdd_cat_release *r,
                                                 int cuda_major)
{
    for (size_t i = 0; i < r->n_variants; i++)
        if (r->variants[i].cuda_major == cuda_major)
            return &r->variants[i];
    return NULL;
}

const char *cdd_catalog_driver_min(const struct cdd_catalog *c, int cuda_major,
                                   int windows)
{
    for (size_t i = 0; i < c->n_drivers; i++)
        if (c->drivers[i].cuda_major == cuda_major)
            return windows ? c->drivers[i].windows_min
                           : c->drivers[i].linux_min;
    return NULL;
}

const struct cdd_cat_archive *cdd_catalog_by_filename(
    const struct cdd_catalog *c, const char *name,
    const struct cdd_cat_release **rel)
{
    for (size_t i = 0; i < c->n; i++)
        for (size_t j = 0; j < c->releases[i].n_archives; j++)
            if (strcmp(c->releases[i].archives[j].filename, name) == 0) {
                if (rel)
                    *rel = &c->releases[i];
                return &c->releases[i].archives[j];
            }
    return NULL;
}

int cdd_cat_digest_index(const struct cdd_cat_archive *a,
                         const uint8_t *sha256)
{
    for (size_t i = 0; i < a->n_digests; i++)
        if (memcmp(a->digests[i].sha256, sha256, CDD_SHA256_LEN) == 0)
            return (int)i;
    return -1;
}
