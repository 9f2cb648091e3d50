/* Manifest loading: parses the JSON (cJSON is touched here and nowhere else
 * for manifests) and validates it strictly — unknown, missing, duplicate or
 * mistyped keys, unsafe paths, duplicate paths, broken symlink chains, a
 * verify section that disagrees with the version — naming every fault by its
 * JSON path. Also the lookups (by file, by shipped name, roles, platforms).
 * The writer lives in manifest_write.c; docs/manifest.md is the reference. */
#include "cdd/manifest.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonparse.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "cdd/compat.h"

#define MANIFEST_MAX_BYTES (16u * 1024u * 1024u)
/* Bounds checked before cJSON builds a node: real manifests hold a few
 * hundred values at a depth of 4 (docs/manifest.md); five values a file
 * leave room for as many files as an archive may hold entries
 * (CDD_MAX_ENTRIES). 100,000 values cost cJSON under 10 MiB; 8 MB of
 * "[0,0,0,...]" would cost 350 MB. */
#define MANIFEST_MAX_VALUES 100000u
#define MANIFEST_MAX_DEPTH 32u
#define MAX_SAFE_INT 9007199254740991.0 /* 2^53 - 1 */
#define DEFAULT_STEM_PREFIX "cudnn-8.5.0.96-cuda11-"
#define JP_MAX 128

static const char *const role_names[CDD_ROLE_COUNT] = {
    "runtime", "header", "import_lib", "static_lib", "license", "symlink",
    "activation",
};

/* ---- names ---------------------------------------------------------------- */

const char *cdd_role_name(enum cdd_role r)
{
    return (unsigned)r < CDD_ROLE_COUNT ? role_names[r] : NULL;
}

int cdd_role_parse(const char *s, enum cdd_role *out)
{
    for (int i = 0; s && i < CDD_ROLE_COUNT; i++) {
        if (strcmp(s, role_names[i]) == 0) {
            *out = (enum cdd_role)i;
            return 0;
        }
    }
    return -1;
}

/* ---- role of a path by the layout rules ------------------------------------ */

static int ascii_lower(int c)
{
    return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/* Does s start with prefix? Case-insensitive for Windows archives, whose
 * target filesystems ignore case anyway. */
static int has_prefix(const char *s, const char *prefix, int icase)
{
    for (; *prefix; s++, prefix++) {
        if (icase ? ascii_lower((unsigned char)*s) != *prefix : *s != *prefix)
            return 0;
    }
    return 1;
}

static int has_suffix(const char *s, const char *suffix, int icase)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && has_prefix(s + n - k, suffix, icase);
}

/* The part of path after folder 'dir' (with its '/') when what follows is a
 * single component, else NULL. */
static const char *name_in(const char *path, const char *dir, int icase)
{
    size_t n = strlen(dir);
    if (!has_prefix(path, dir, icase) || path[n] != '/')
        return NULL;
    const char *name = path + n + 1;
    return *name && !strchr(name, '/') ? name : NULL;
}

int cdd_role_from_path(enum cdd_platform p, const char *path, int is_symlink,
                       enum cdd_role *out)
{
    const char *n;
    if (!path)
        return -1;
    if (cdd_platform_is_windows(p)) {
        if (is_symlink)
            return -1;
        /* bin/ up to cuDNN 9.22, bin/x64/ from 9.23 on (docs/archives.md,
         * Generations). */
        if (((n = name_in(path, "bin", 1)) ||
             (n = name_in(path, "bin/x64", 1))) &&
            has_suffix(n, ".dll", 1))
            *out = CDD_ROLE_RUNTIME;
        else if ((n = name_in(path, "include", 1)) && has_suffix(n, ".h", 1))
            *out = CDD_ROLE_HEADER;
        else if ((n = name_in(path, "lib/x64", 1)) && has_suffix(n, ".lib", 1))
            *out = CDD_ROLE_IMPORT_LIB;
        else if (!strcmp(path, "LICENSE") || !strcmp(path, "LICENSE.txt"))
            *out = CDD_ROLE_LICENSE;
        else
            return -1;
        return 0;
    }
    if ((unsigned)p >= CDD_PLATFORM_COUNT)
        return -1;
    if ((n = name_in(path, "lib", 0)) &&
        (has_suffix(n, ".so", 0) || (strstr(n, ".so.") && n[0] != '.'))) {
        *out = is_symlink ? CDD_ROLE_SYMLINK : CDD_ROLE_RUNTIME;
        return 0;
    }
    if (is_symlink)
        return -1;
    if ((n = name_in(path, "include", 0)) && has_suffix(n, ".h", 0))
        *out = CDD_ROLE_HEADER;
    else if ((n = name_in(path, "lib", 0)) && has_suffix(n, ".a", 0))
        *out = CDD_ROLE_STATIC_LIB;
    else if (has_prefix(path, "LICENSE", 0) && !strchr(path, '/'))
        *out = CDD_ROLE_LICENSE;
    else
        return -1;
    return 0;
}

/* ---- freeing and lookups ---------------------------------------------------- */

void cdd_manifest_free(struct cdd_manifest *m)
{
    if (!m)
        return;
    free(m->source);
    free(m->name);
    free(m->product);
    free(m->version);
    free(m->archive.filename);
    for (size_t i = 0; i < m->archive.n_urls; i++)
        free(m->archive.urls[i]);
    free(m->archive.urls);
    free(m->redistrib_url);
    for (size_t i = 0; i < m->n_files; i++) {
        free(m->files[i].path);
        free(m->files[i].target);
    }
    free(m->files);
    free(m->verify.library);
    free(m->verify.version_symbol);
    free(m->verify.cudart_symbol);
    for (size_t i = 0; i < m->verify.n_sublibs; i++) {
        free(m->verify.sublibs[i].library);
        free(m->verify.sublibs[i].check_symbol);
    }
    free(m->verify.sublibs);
    for (size_t i = 0; i < m->n_components; i++) {
        struct cdd_mcomponent *k = &m->components[i];
        free(k->name);
        free(k->summary);
        free(k->cuda_majors);
        free(k->cudnn_min);
        free(k->cudnn_max);
        cdd_manifest_free(k->m);
    }
    free(m->components);
    free(m);
}

const struct cdd_mcomponent *cdd_manifest_component(const struct cdd_manifest *m,
                                                    const char *name)
{
    for (size_t i = 0; m && name && i < m->n_components; i++)
        if (strcmp(m->components[i].name, name) == 0)
            return &m->components[i];
    return NULL;
}

const struct cdd_mfile *cdd_manifest_file(const struct cdd_manifest *m,
                                          const char *path)
{
    for (size_t i = 0; m && path && i < m->n_files; i++) {
        if (strcmp(m->files[i].path, path) == 0)
            return &m->files[i];
    }
    return NULL;
}

/* ---- error reporting ---------------------------------------------------------- */

struct pctx {
    const char *source;
    struct cdd_manifest *m;
};

/* Fail with "<json path>: <fault>"; the root object is "(root)". */
static int bad(const struct pctx *c, const char *jp, const char *fmt, ...)
    CDD_PRINTF(3, 4);

static int bad(const struct pctx *c, const char *jp, const char *fmt, ...)
{
    struct cdd_sb what;
    cdd_sb_init(&what, CDD_TEXT_MAX, "manifest fault");
    va_list ap;
    va_start(ap, fmt);
    int r = cdd_sb_vaddf(&what, fmt, ap);
    va_end(ap);
    if (!r)
        r = cdd_fail(CDD_E_MANIFEST, c->source, 0, "%s: %s",
                     jp && *jp ? jp : "(root)", cdd_sb_str(&what));
    cdd_sb_free(&what);
    return r;
}

static int nomem(const struct pctx *c)
{
    return cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
}

/* bad() for a rejected value, shown whole: "<what>, got \"<value>\"". */
static int bad_value(const struct pctx *c, const char *jp, const char *what,
                     const char *value)
{
    char *shown = cdd_path_shown(value);
    int r = bad(c, jp, "%s, got \"%s\"", what, CDD_SHOWN(shown));
    free(shown);
    return r;
}

static void jp_key(char *out, const char *jp, const char *key)
{
    /* A JSON path longer than JP_MAX is cut: it only names the fault. */
    if (snprintf(out, JP_MAX, "%s%s%s", jp, *jp ? "." : "", key) >= JP_MAX)
        out[JP_MAX - 1] = '\0';
}

static void jp_index(char *out, const char *jp, size_t i)
{
    if (snprintf(out, JP_MAX, "%s[%zu]", jp, i) >= JP_MAX)
        out[JP_MAX - 1] = '\0';
}

/* ---- typed getters --------------------------------------------------------------- */

/* obj must be an object whose keys are all in 'allowed', none twice. */
static int check_object(const struct pctx *c, const cJSON *obj, const char *jp,
                        const char *const *allowed, size_t n_allowed)
{
    unsigned long seen = 0;
    if (!cJSON_IsObject(obj))
        return bad(c, jp, "expected an object");
    for (const cJSON *it = obj->child; it; it = it->next) {
        size_t k = 0;
        while (k < n_allowed && strcmp(it->string, allowed[k]) != 0)
            k++;
        if (k == n_allowed) {
            char *shown = cdd_path_shown(it->string);
            int r = bad(c, jp, "unknown key \"%s\"", CDD_SHOWN(shown));
            free(shown);
            return r;
        }
        if (seen & (1ul << k))
            return bad(c, jp, "duplicate key \"%s\"", it->string);
        seen |= 1ul << k;
    }
    return 0;
}

/* Child 'key' of obj, required or not; *jp_out gets its JSON path. */
static int get_item(const struct pctx *c, const cJSON *obj, const char *jp,
                    const char *key, int required, const cJSON **out,
                    char *jp_out)
{
    jp_key(jp_out, jp, key);
    *out = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!*out && required)
        return bad(c, jp, "missing key \"%s\"", key);
    return 0;
}

static int dup_string(const struct pctx *c, const char *s, char **out)
{
    *out = strdup(s);
    return *out ? 0 : nomem(c);
}

/* A string (required: must be present). *out stays NULL when absent. */
static int get_string(const struct pctx *c, const cJSON *obj, const char *jp,
                      const char *key, int required, char **out, char *jp_out)
{
    const cJSON *it;
    int r = get_item(c, obj, jp, key, required, &it, jp_out);
    if (r || !it)
        return r;
    if (!cJSON_IsString(it))
        return bad(c, jp_out, "expected a string");
    return dup_string(c, it->valuestring, out);
}

/* A JSON number that is a whole number in [lo, hi]. */
static int whole_in(const cJSON *it, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(it))
        return 0;
    double d = it->valuedouble;
    /* Written so that NaN fails; the cast is safe once d is in range. */
    if (!(d >= lo && d <= hi) || d != (double)(long long)d)
        return 0;
    *out = d;
    return 1;
}

static int get_int(const struct pctx *c, const cJSON *obj, const char *jp,
                   const char *key, int required, long lo, long hi,
                   int *present, long *out)
{
    const cJSON *it;
    char ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    double d;
    int r = get_item(c, obj, jp, key, required, &it, ijp);
    if (present)
        *present = it != NULL;
    if (r || !it)
        return r;
    if (!whole_in(it, (double)lo, (double)hi, &d))
        return bad(c, ijp, "expected an integer from %ld to %ld", lo, hi);
    *out = (long)d;
    return 0;
}

/* Required key, value a size or null. */
static int get_size(const struct pctx *c, const cJSON *obj, const char *jp,
                    int *has, uint64_t *out)
{
    const cJSON *it;
    char ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    double d;
    int r = get_item(c, obj, jp, "size", 1, &it, ijp);
    if (r)
        return r;
    *has = 0;
    if (cJSON_IsNull(it))
        return 0;
    if (!whole_in(it, 0.0, MAX_SAFE_INT, &d))
        return bad(c, ijp, "expected a whole number from 0 to 2^53-1");
    *has = 1;
    *out = (uint64_t)d;
    return 0;
}

/* Required key, value 64 hex digits or null. */
static int get_sha256(const struct pctx *c, const cJSON *obj, const char *jp,
                      int *has, uint8_t digest[CDD_SHA256_LEN])
{
    const cJSON *it;
    char ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    int r = get_item(c, obj, jp, "sha256", 1, &it, ijp);
    if (r)
        return r;
    *has = 0;
    if (cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsString(it))
        return bad(c, ijp, "expected 64 hex digits or null");
    const char *s = it->valuestring;
    size_t n = 0;
    while (n <= 2 * CDD_SHA256_LEN && s[n] &&
           strchr("0123456789abcdefABCDEF", s[n]))
        n++;
    if (n != 2 * CDD_SHA256_LEN || s[n] ||
        cdd_hex_decode(s, digest, CDD_SHA256_LEN) != 0)
        return bad(c, ijp, "expected 64 hex digits");
    *has = 1;
    return 0;
}

static int is_identifier(const char *s)
{
    size_t n = 0;
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return 0;
    for (; s[n]; n++) {
        char ch = s[n];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
              (ch >= '0' && ch <= '9') || ch == '_'))
            return 0;
    }
    return n <= 255;
}

static int get_identifier(const struct pctx *c, const cJSON *obj,
                          const char *jp, const char *key, int required,
                          char **out)
{
    char ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    int r = get_string(c, obj, jp, key, required, out, ijp);
    if (r || !*out)
        return r;
    if (!is_identifier(*out))
        return bad(c, ijp, "expected a C identifier");
    return 0;
}

/* http:// or https://, a host, printable ASCII without spaces. */
static int is_url(const char *s)
{
    size_t n = 0;
    if (has_prefix(s, "https://", 1))
        n = 8;
    else if (has_prefix(s, "http://", 1))
        n = 7;
    else
        return 0;
    if (!s[n] || s[n] == '/')
        return 0;
    for (; s[n]; n++) {
        if ((unsigned char)s[n] <= 0x20 || (unsigned char)s[n] >= 0x7f)
            return 0;
    }
    return n <= 4096;
}

static int check_url(const struct pctx *c, const char *jp, const char *s)
{
    if (!is_url(s))
        return bad(c, jp, "expected an http:// or https:// URL");
    return 0;
}

/* 3 or 4 dot-separated decimal numbers without leading zeros; the first
 * three are returned (they define the version number). */
static int parse_version(const char *s, long long num[3])
{
    int parts = 0;
    while (1) {
        size_t n = 0;
        long long v = 0;
        while (s[n] >= '0' && s[n] <= '9') {
            v = v * 10 + (s[n] - '0');
            n++;
            if (n > 9)
                return 0;
        }
        if (n == 0 || (n > 1 && s[0] == '0'))
            return 0;
        if (parts < 3)
            num[parts] = v;
        parts++;
        s += n;
        if (*s == '\0')
            break;
        if (*s != '.')
            return 0;
        s++;
    }
    return parts == 3 || parts == 4;
}

/* What cudnnGetVersion() returns for the version v (cudnn_facts.h). */
static long long version_number_of(const long long v[3])
{
    return cdd_cudnn_version_encode(v[0], v[1], v[2]);
}

/* ---- the sections ------------------------------------------------------------------ */

/* The "archive" object of obj (the root, or an optional component at
 * JSON path pjp) into m. */
static int parse_archive_of(const struct pctx *c, const cJSON *root,
                            const char *pjp, struct cdd_manifest *m)
{
    static const char *const keys[] = {"filename", "url", "sha256", "size",
                                       "strip_components"};
    const cJSON *a, *u;
    char jp[JP_MAX], kjp[JP_MAX], ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    const char *why = NULL;
    long strip = 0;
    int r = get_item(c, root, pjp, "archive", 1, &a, jp);
    if (r || (r = check_object(c, a, jp, keys, 5)))
        return r;
    if ((r = get_string(c, a, jp, "filename", 1, &m->archive.filename, kjp)))
        return r;
    if (strchr(m->archive.filename, '/'))
        return bad(c, kjp, "expected a single file name, not a path");
    if (!cdd_path_is_safe(m->archive.filename, 0, &why))
        return bad(c, kjp, "unsafe file name: %s", why ? why : "rejected");

    if ((r = get_item(c, a, jp, "url", 0, &u, kjp)))
        return r;
    if (u && cJSON_IsString(u)) {
        if ((r = check_url(c, kjp, u->valuestring)))
            return r;
        if (!(m->archive.urls = calloc(1, sizeof *m->archive.urls)))
            return nomem(c);
        if ((r = dup_string(c, u->valuestring, &m->archive.urls[0])))
            return r;
        m->archive.n_urls = 1;
    } else if (u) {
        size_t n = (size_t)cJSON_GetArraySize(u), i = 0;
        if (!cJSON_IsArray(u) || n == 0)
            return bad(c, kjp, "expected a URL or a non-empty list of URLs");
        if (!(m->archive.urls = calloc(n, sizeof *m->archive.urls)))
            return nomem(c);
        for (const cJSON *e = u->child; e; e = e->next, i++) {
            jp_index(ijp, kjp, i);
            if (!cJSON_IsString(e))
                return bad(c, ijp, "expected a string");
            if ((r = check_url(c, ijp, e->valuestring)) ||
                (r = dup_string(c, e->valuestring, &m->archive.urls[i])))
                return r;
            m->archive.n_urls = i + 1;
        }
    }
    if ((r = get_sha256(c, a, jp, &m->archive.has_sha256, m->archive.sha256)) ||
        (r = get_size(c, a, jp, &m->archive.has_size, &m->archive.size)) ||
        (r = get_int(c, a, jp, "strip_components", 1, 0, 8, NULL, &strip)))
        return r;
    m->archive.strip_components = (int)strip;
    return 0;
}

static int parse_archive(const struct pctx *c, const cJSON *root)
{
    return parse_archive_of(c, root, "", c->m);
}

static int parse_file(const struct pctx *c, const cJSON *e, const char *jp,
                      struct cdd_mfile *f)
{
    static const char *const keys[] = {"path", "role", "sha256", "size",
                                       "target"};
    enum cdd_platform p = c->m->platform;
    char kjp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    const char *why = NULL;
    char *role = NULL;
    int r = check_object(c, e, jp, keys, 5);
    if (r || (r = get_string(c, e, jp, "path", 1, &f->path, kjp)))
        goto out;
    if (!cdd_path_is_safe(f->path, 0, &why)) {
        r = bad(c, kjp, "unsafe path: %s", why ? why : "rejected");
        goto out;
    }
    if ((r = get_string(c, e, jp, "role", 1, &role, kjp)))
        goto out;
    if (cdd_role_parse(role, &f->role) != 0 ||
        f->role == CDD_ROLE_ACTIVATION) {
        char *shown = cdd_path_shown(role);
        r = bad(c, kjp,
                "unknown role \"%s\" (expected runtime, header, import_lib, "
                "static_lib, license or symlink)",
                CDD_SHOWN(shown));
        free(shown);
        goto out;
    }
    if (f->role == CDD_ROLE_IMPORT_LIB && !cdd_platform_is_windows(p)) {
        r = bad(c, kjp, "import_lib is only valid on a Windows platform");
        goto out;
    }
    if (f->role == CDD_ROLE_SYMLINK && cdd_platform_is_windows(p)) {
        r = bad(c, kjp, "symlink is only valid on a Linux platform "
                        "(Windows archives have no symlinks)");
        goto out;
    }
    if (f->role == CDD_ROLE_SYMLINK) {
        if (cJSON_GetObjectItemCaseSensitive(e, "sha256") ||
            cJSON_GetObjectItemCaseSensitive(e, "size")) {
            jp_key(kjp, jp, cJSON_GetObjectItemCaseSensitive(e, "sha256")
                                ? "sha256" : "size");
            r = bad(c, kjp, "not allowed for a symlink");
            goto out;
        }
        if ((r = get_string(c, e, jp, "target", 1, &f->target, kjp)))
            goto out;
        if (!cdd_link_target_is_safe(f->target, &why)) {
            r = bad(c, kjp, "unsafe link target: %s", why ? why : "rejected");
            goto out;
        }
    } else {
        if (cJSON_GetObjectItemCaseSensitive(e, "target")) {
            jp_key(kjp, jp, "target");
            r = bad(c, kjp, "only allowed for a symlink");
            goto out;
        }
        if ((r = get_sha256(c, e, jp, &f->has_sha256, f->sha256)) ||
            (r = get_size(c, e, jp, &f->has_size, &f->size)))
            goto out;
    }
out:
    free(role);
    return r;
}

/* Order for the duplicate check and the target lookups: folded path (as
 * cdd_path_casecmp compares), then original index. */
struct folded {
    char *key;
    size_t index;
};

static int cmp_folded(const void *pa, const void *pb)
{
    const struct folded *a = pa, *b = pb;
    int d = strcmp(a->key, b->key);
    return d ? d : (a->index > b->index) - (a->index < b->index);
}

/* Index of the file whose path is exactly 'path'; valid once no two paths
 * fold to the same key. */
static long find_sorted(const struct cdd_manifest *m, const struct folded *order,
                        const char *path, const char *key)
{
    size_t lo = 0, hi = m->n_files;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = strcmp(key, order[mid].key);
        if (d == 0)
            return strcmp(path, m->files[order[mid].index].path) == 0
                       ? (long)order[mid].index : -1;
        if (d < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return -1;
}

/* In v sorted by (key, index): the duplicate pair whose later member comes
 * first in file order. Returns that member's index (n when none) and the
 * earlier one's in *first. */
static size_t first_dup(const struct folded *v, size_t n, size_t *first)
{
    size_t best = n;
    for (size_t k = 1; k < n; k++) {
        size_t a = v[k - 1].index, b = v[k].index;
        if (strcmp(v[k - 1].key, v[k].key) != 0)
            continue;
        size_t lo = a < b ? a : b, hi = a < b ? b : a;
        if (hi < best) {
            *first = lo;
            best = hi;
        }
    }
    return best;
}

/* No exact or case-insensitive duplicate paths, no two entries with one file
 * name (a layout puts each entry at folder + file name, so they would land
 * on each other); symlink targets exist in the same folder and every chain
 * ends at a non-symlink entry. */
static int check_files_global(const struct pctx *c)
{
    struct cdd_manifest *m = c->m;
    size_t n = m->n_files, dup_a = 0, dup_b;
    struct folded *order = NULL, *bases = NULL; /* bases' keys are not owned */
    long *next = NULL;
    unsigned char *state = NULL;
    char jp[JP_MAX], ejp[JP_MAX], *want = NULL, *key = NULL; /* fixed: JSON paths of the schema's keys */
    int r = 0;
    if (!(order = calloc(n, sizeof *order)) ||
        !(bases = calloc(n, sizeof *bases)) ||
        !(next = malloc(n * sizeof *next)) || !(state = calloc(n, 1))) {
        r = nomem(c);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        order[i].index = i;
        if (!(order[i].key = cdd_path_fold(m->files[i].path))) {
            r = nomem(c);
            goto out;
        }
    }
    qsort(order, n, sizeof *order, cmp_folded);
    dup_b = first_dup(order, n, &dup_a);
    if (dup_b < n) {
        char *pa = cdd_path_shown(m->files[dup_a].path);
        char *pb = cdd_path_shown(m->files[dup_b].path);
        jp_index(ejp, "files", dup_b);
        jp_key(jp, ejp, "path");
        if (!pa || !pb) {
            free(pa);
            free(pb);
            r = nomem(c);
            goto out;
        }
        if (strcmp(m->files[dup_a].path, m->files[dup_b].path) == 0)
            r = bad(c, jp, "duplicate path \"%s\" (also files[%zu])", pb,
                    dup_a);
        else
            r = bad(c, jp,
                    "duplicate path \"%s\": differs only in case from "
                    "files[%zu] \"%s\"",
                    pb, dup_a, pa);
        free(pa);
        free(pb);
        goto out;
    }

    /* Folding never moves a '/', so a folded path's last component is the
     * folded file name. */
    for (size_t i = 0; i < n; i++) {
        bases[i].index = order[i].index;
        bases[i].key = order[i].key +
                       (cdd_path_basename(order[i].key) - order[i].key);
    }
    qsort(bases, n, sizeof *bases, cmp_folded);
    dup_b = first_dup(bases, n, &dup_a);
    if (dup_b < n) {
        char *pa = cdd_path_shown(m->files[dup_a].path);
        char *pb = cdd_path_shown(m->files[dup_b].path);
        jp_index(ejp, "files", dup_b);
        jp_key(jp, ejp, "path");
        if (!pa || !pb) {
            free(pa);
            free(pb);
            r = nomem(c);
            goto out;
        }
        r = bad(c, jp,
                "\"%s\" has the same file name as files[%zu] \"%s\" (both "
                "would install to one place)",
                pb, dup_a, pa);
        free(pa);
        free(pb);
        goto out;
    }

    for (size_t i = 0; i < n; i++) {
        const struct cdd_mfile *f = &m->files[i];
        next[i] = -1;
        if (f->role != CDD_ROLE_SYMLINK)
            continue;
        const char *slash = strrchr(f->path, '/');
        size_t dlen = slash ? (size_t)(slash - f->path) + 1 : 0;
        free(want);
        free(key);
        key = NULL;
        if (!(want = malloc(dlen + strlen(f->target) + 1))) {
            r = nomem(c);
            goto out;
        }
        memcpy(want, f->path, dlen);
        strcpy(want + dlen, f->target);
        if (!(key = cdd_path_fold(want))) {
            r = nomem(c);
            goto out;
        }
        next[i] = find_sorted(m, order, want, key);
        if (next[i] < 0) {
            jp_index(ejp, "files", i);
            jp_key(jp, ejp, "target");
            r = bad(c, jp, "\"%s\" is not listed in the same folder", want);
            goto out;
        }
    }
    /* state: 0 unvisited, 1 on the current walk, 2 known to end at a file. */
    for (size_t i = 0; i < n; i++) {
        long j = (long)i;
        while (j >= 0 && state[j] == 0 && next[j] >= 0) {
            state[j] = 1;
            j = next[j];
        }
        if (j >= 0 && state[j] == 1) {
            jp_index(ejp, "files", i);
            jp_key(jp, ejp, "target");
            r = bad(c, jp, "symlink chain loops back to \"%s\"",
                    m->files[j].path);
            goto out;
        }
        for (j = (long)i; j >= 0 && state[j] != 2; j = next[j])
            state[j] = 2;
    }
out:
    free(key);
    free(want);
    free(state);
    free(next);
    for (size_t i = 0; order && i < n; i++)
        free(order[i].key);
    free(order);
    free(bases);
    return r;
}

static int parse_files(const struct pctx *c, const cJSON *root)
{
    struct cdd_manifest *m = c->m;
    const cJSON *a;
    char jp[JP_MAX], ejp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    int r = get_item(c, root, "", "files", 1, &a, jp);
    if (r)
        return r;
    size_t n = (size_t)cJSON_GetArraySize(a), i = 0;
    if (!cJSON_IsArray(a) || n == 0)
        return bad(c, jp, "expected a non-empty list of entries");
    if (!(m->files = calloc(n, sizeof *m->files)))
        return nomem(c);
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        jp_index(ejp, jp, i);
        m->n_files = i + 1; /* so that free sees what was filled */
        if ((r = parse_file(c, e, ejp, &m->files[i])))
            return r;
    }
    return check_files_global(c);
}

/* A verify library: listed in files as a runtime library or symlink. */
static int check_library(const struct pctx *c, const char *jp, const char *lib)
{
    const struct cdd_mfile *f = cdd_manifest_file(c->m, lib);
    if (!f) {
        char *shown = cdd_path_shown(lib);
        int r = shown ? bad(c, jp, "\"%s\" is not listed in files", shown)
                      : nomem(c);
        free(shown);
        return r;
    }
    if (f->role != CDD_ROLE_RUNTIME && f->role != CDD_ROLE_SYMLINK)
        return bad(c, jp, "\"%s\" has role %s, expected runtime or symlink",
                   lib, cdd_role_name(f->role));
    return 0;
}

static int parse_verify(const struct pctx *c, const cJSON *root)
{
    static const char *const keys[] = {"version_number", "library",
                                       "version_symbol", "cudart_symbol",
                                       "mismatch_status", "sublibraries"};
    static const char *const skeys[] = {"library", "check_symbol"};
    struct cdd_manifest *m = c->m;
    struct cdd_mverify *v = &m->verify;
    const cJSON *o, *subs;
    char jp[JP_MAX], kjp[JP_MAX], sjp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    long long ver[3] = {0, 0, 0};
    int r, present = 0;
    if ((r = get_item(c, root, "", "verify", 0, &o, jp)) || !o)
        return r;
    if ((r = check_object(c, o, jp, keys, 6)))
        return r;
    m->has_verify = 1;
    if ((r = get_int(c, o, jp, "version_number", 1, 1, 2147483647L, NULL,
                     &v->version_number)))
        return r;
    parse_version(m->version, ver);
    if (v->version_number != version_number_of(ver)) {
        jp_key(kjp, jp, "version_number");
        return bad(c, kjp, "%ld does not agree with version \"%s\" (expected %lld)",
                   v->version_number, m->version, version_number_of(ver));
    }
    if ((r = get_string(c, o, jp, "library", 1, &v->library, kjp)) ||
        (r = check_library(c, kjp, v->library)) ||
        (r = get_identifier(c, o, jp, "version_symbol", 1, &v->version_symbol)) ||
        (r = get_identifier(c, o, jp, "cudart_symbol", 0, &v->cudart_symbol)) ||
        (r = get_int(c, o, jp, "mismatch_status", 0, 0, 2147483647L, &present,
                     &v->mismatch_status)))
        return r;
    if (!present)
        v->mismatch_status = ver[0] >= 9 ? 1002 : 14;

    if ((r = get_item(c, o, jp, "sublibraries", 1, &subs, kjp)))
        return r;
    if (!cJSON_IsArray(subs))
        return bad(c, kjp, "expected a list");
    size_t n = (size_t)cJSON_GetArraySize(subs), i = 0;
    if (n && !(v->sublibs = calloc(n, sizeof *v->sublibs)))
        return nomem(c);
    for (const cJSON *e = subs->child; e; e = e->next, i++) {
        struct cdd_msublib *s = &v->sublibs[i];
        char ljp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
        jp_index(sjp, kjp, i);
        v->n_sublibs = i + 1;
        if ((r = check_object(c, e, sjp, skeys, 2)) ||
            (r = get_string(c, e, sjp, "library", 1, &s->library, ljp)) ||
            (r = check_library(c, ljp, s->library)))
            return r;
        /* null: a sub-library with no version-check export (cuDNN 9's
         * engine and heuristic libraries): loaded, not version-checked. */
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(e, "check_symbol");
        if (cJSON_IsNull(cs))
            continue;
        if ((r = get_identifier(c, e, sjp, "check_symbol", 1, &s->check_symbol)))
            return r;
    }
    return 0;
}

/* cJSON turns "\u0000" into a terminator and silently truncates the
 * string; refuse such text instead. Called on text cJSON accepted. */
static int check_no_nul_escape(const struct pctx *c, const char *t, size_t len)
{
    int in_str = 0, line = 1;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '\n')
            line++;
        if (!in_str) {
            in_str = t[i] == '"';
        } else if (t[i] == '"') {
            in_str = 0;
        } else if (t[i] == '\\' && i + 1 < len) {
            if (t[i + 1] == 'u' && i + 5 < len &&
                memcmp(t + i + 2, "0000", 4) == 0)
                return bad(c, "", "line %d: a string contains \\u0000", line);
            i++;
        }
    }
    return 0;
}

static void position_of(const char *t, const char *at, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (; t < at; t++) {
        if (*t == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* ---- optional components (docs/manifest.md, Optional components) ------------------ */

/* "8.3", "9.1" or a full version: 2 to 4 dot-separated decimal numbers;
 * num[2] is 0 when only two are given. */
static int parse_short_version(const char *s, long long num[3])
{
    char buf[40]; /* fixed: a version of at most 20 bytes and ".0" */
    if (parse_version(s, num))
        return 1;
    if (strlen(s) > 20)
        return 0;
    snprintf(buf, sizeof buf, "%s.0", s);
    return parse_version(buf, num);
}

/* -1, 0, 1 comparing a and b on major, minor (and patch when full). */
static int version_cmp(const long long a[3], const long long b[3], int parts)
{
    for (int i = 0; i < parts; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int parse_component_range(const struct pctx *c, const cJSON *o,
                                 const char *jp, struct cdd_mcomponent *k)
{
    const cJSON *cm, *e;
    char kjp[JP_MAX], ijp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    long long mine[3], lo[3], hi[3];
    size_t i = 0;
    int found = 0;
    int r = get_item(c, o, jp, "cuda_majors", 1, &cm, kjp);
    if (r)
        return r;
    size_t n = (size_t)cJSON_GetArraySize(cm);
    if (!cJSON_IsArray(cm) || n == 0 || n > 16)
        return bad(c, kjp, "expected a list of 1 to 16 CUDA majors");
    if (!(k->cuda_majors = calloc(n, sizeof *k->cuda_majors)))
        return nomem(c);
    cJSON_ArrayForEach(e, cm) {
        double d;
        jp_index(ijp, kjp, i);
        if (!whole_in(e, 1, 99, &d))
            return bad(c, ijp, "expected an integer from 1 to 99");
        k->cuda_majors[i++] = (int)d;
        found |= (int)d == c->m->cuda_major;
    }
    k->n_cuda_majors = n;
    if (!found)
        return bad(c, kjp, "does not include this manifest's cuda_major %d",
                   c->m->cuda_major);
    if ((r = get_string(c, o, jp, "cudnn_min", 1, &k->cudnn_min, kjp)))
        return r;
    if (!parse_short_version(k->cudnn_min, lo))
        return bad_value(c, kjp, "expected a version such as \"8.3\"",
                         k->cudnn_min);
    if ((r = get_string(c, o, jp, "cudnn_max", 1, &k->cudnn_max, ijp)))
        return r;
    if (!parse_short_version(k->cudnn_max, hi))
        return bad_value(c, ijp, "expected a version such as \"9.1\"",
                         k->cudnn_max);
    if (!parse_version(c->m->version, mine))
        return bad(c, "version", "not a version");
    /* A bound given as "9.1" covers every 9.1.x. */
    if (version_cmp(mine, lo, 3) < 0 || version_cmp(mine, hi, 2) > 0)
        return bad(c, jp, "applies to cuDNN %s to %s, not to this manifest's "
                          "%s",
                   k->cudnn_min, k->cudnn_max, c->m->version);
    return 0;
}

/* The component's own manifest: its archive, and the one entry taken. */
static int parse_component_entry(const struct pctx *c, const cJSON *o,
                                 const char *jp, struct cdd_mcomponent *k)
{
    static const char *const ekeys[] = {"path", "sha256", "size"};
    const struct cdd_manifest *pm = c->m;
    struct cdd_manifest *sm;
    const cJSON *e;
    char kjp[JP_MAX]; /* fixed: a JSON path of the schema's keys */
    char *src;
    const char *why = NULL;
    int r;
    if (!(sm = k->m = calloc(1, sizeof *sm)))
        return nomem(c);
    src = cdd_aprintf(CDD_TEXT_MAX, "manifest source", "%s (component %s)",
                      pm->source, k->name);
    if (!src)
        return cdd_last_error()->code;
    sm->source = src;
    if (!(sm->name = strdup(k->name)) ||
        !(sm->product = strdup(k->name)) ||
        !(sm->version = strdup(pm->version)) ||
        !(sm->files = calloc(1, sizeof *sm->files)))
        return nomem(c);
    memcpy(sm->doc_sha256, pm->doc_sha256, CDD_SHA256_LEN);
    sm->schema_version = pm->schema_version;
    sm->cuda_major = pm->cuda_major;
    sm->platform = pm->platform;
    sm->files_exact = 0;
    if ((r = parse_archive_of(c, o, jp, sm)))
        return r;
    if (!sm->archive.has_sha256) {
        jp_key(kjp, jp, "archive.sha256");
        return bad(c, kjp, "a component's archive must be pinned by its "
                           "sha256");
    }
    if ((r = get_item(c, o, jp, "entry", 1, &e, kjp)) ||
        (r = check_object(c, e, kjp, ekeys, 3)))
        return r;
    struct cdd_mfile *f = &sm->files[0];
    sm->n_files = 1;
    f->role = CDD_ROLE_RUNTIME;
    char pjp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    snprintf(pjp, sizeof pjp, "%s", kjp);
    if ((r = get_string(c, e, pjp, "path", 1, &f->path, kjp)))
        return r;
    if (!cdd_path_is_safe(f->path, 0, &why))
        return bad(c, kjp, "unsafe path: %s", why ? why : "rejected");
    if ((r = get_sha256(c, e, pjp, &f->has_sha256, f->sha256)) ||
        (r = get_size(c, e, pjp, &f->has_size, &f->size)))
        return r;
    /* Its file must not land on one of the archive's own. */
    for (size_t i = 0; i < pm->n_files; i++) {
        if (pm->files[i].role != CDD_ROLE_RUNTIME &&
            pm->files[i].role != CDD_ROLE_SYMLINK)
            continue;
        if (cdd_path_casecmp(cdd_path_basename(pm->files[i].path),
                             cdd_path_basename(f->path)) == 0)
            return bad(c, kjp, "the archive itself ships %s",
                       pm->files[i].path);
    }
    return 0;
}

static int parse_components(const struct pctx *c, const cJSON *root)
{
    static const char *const keys[] = {"name", "summary", "cuda_majors",
                                       "cudnn_min", "cudnn_max", "archive",
                                       "entry"};
    struct cdd_manifest *m = c->m;
    const cJSON *arr, *o;
    char jp[JP_MAX], ijp[JP_MAX], kjp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    size_t i = 0;
    int r = get_item(c, root, "", "components", 0, &arr, jp);
    if (r || !arr)
        return r;
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (!cJSON_IsArray(arr) || n > 16)
        return bad(c, jp, "expected a list of at most 16 components");
    if (!(m->components = calloc(n ? n : 1, sizeof *m->components)))
        return nomem(c);
    cJSON_ArrayForEach(o, arr) {
        struct cdd_mcomponent *k = &m->components[i];
        jp_index(ijp, jp, i++);
        m->n_components = i;
        if ((r = check_object(c, o, ijp, keys, 7)) ||
            (r = get_identifier(c, o, ijp, "name", 1, &k->name)) ||
            (r = get_string(c, o, ijp, "summary", 0, &k->summary, kjp)))
            return r;
        for (size_t j = 0; j + 1 < i; j++)
            if (strcmp(m->components[j].name, k->name) == 0) {
                jp_key(kjp, ijp, "name");
                return bad(c, kjp, "a second component named \"%s\"",
                           k->name);
            }
        if ((r = parse_component_range(c, o, ijp, k)) ||
            (r = parse_component_entry(c, o, ijp, k)))
            return r;
    }
    return 0;
}

static int parse_root(const struct pctx *c, const cJSON *root)
{
    static const char *const keys[] = {"schema_version", "product", "version",
                                       "cuda_major", "platform", "archive",
                                       "redistrib_url", "files_exact",
                                       "files", "verify", "components"};
    struct cdd_manifest *m = c->m;
    const cJSON *it;
    char jp[JP_MAX]; /* fixed: JSON paths of the schema's keys */
    char *s = NULL;
    long v = 0;
    long long ver[3];
    int r;
    if (!cJSON_IsObject(root))
        return bad(c, "", "expected an object");
    /* The schema version first: a newer file has keys this one does not know. */
    if ((r = get_item(c, root, "", "schema_version", 1, &it, jp)))
        return r;
    if (!cJSON_IsNumber(it))
        return bad(c, jp, "expected the number %d", CDD_MANIFEST_SCHEMA);
    if (it->valuedouble != CDD_MANIFEST_SCHEMA)
        return bad(c, jp, "unsupported schema version %g (this program reads %d)",
                   it->valuedouble, CDD_MANIFEST_SCHEMA);
    m->schema_version = CDD_MANIFEST_SCHEMA;
    if ((r = check_object(c, root, "", keys, 11)))
        return r;

    if ((r = get_string(c, root, "", "product", 1, &m->product, jp)))
        return r;
    if (strcmp(m->product, "cudnn") != 0)
        return bad(c, jp, "expected \"cudnn\"");
    if ((r = get_string(c, root, "", "version", 1, &m->version, jp)))
        return r;
    if (!parse_version(m->version, ver))
        return bad_value(c, jp, "expected 3 or 4 dot-separated decimal numbers",
                         m->version);
    if ((r = get_int(c, root, "", "cuda_major", 1, 1, 99, NULL, &v)))
        return r;
    m->cuda_major = (int)v;
    if ((r = get_string(c, root, "", "platform", 1, &s, jp)))
        return r;
    if (cdd_platform_parse(s, &m->platform) != 0) {
        char *shown = cdd_path_shown(s);
        r = bad(c, jp,
                "unknown platform \"%s\" (expected one of %s)",
                CDD_SHOWN(shown), cdd_platform_names());
        free(shown);
    }
    free(s);
    if (r || (r = parse_archive(c, root)))
        return r;
    if ((r = get_string(c, root, "", "redistrib_url", 0, &m->redistrib_url, jp)))
        return r;
    if (m->redistrib_url && (r = check_url(c, jp, m->redistrib_url)))
        return r;
    if ((r = get_item(c, root, "", "files_exact", 0, &it, jp)))
        return r;
    m->files_exact = 1;
    if (it && !cJSON_IsBool(it))
        return bad(c, jp, "expected true or false");
    if (it)
        m->files_exact = cJSON_IsTrue(it);
    if ((r = parse_files(c, root)) || (r = parse_verify(c, root)))
        return r;
    return parse_components(c, root);
}

/* Name of a manifest from its file name: the last component without
 * ".json". */
static char *stem_of(const char *path)
{
    const char *base = path;
    for (const char *p = path; *p; p++) {
        if (*p == '/' || *p == '\\')
            base = p + 1;
    }
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0)
        n -= 5;
    return cdd_strndup(base, n);
}

/* Count the values cJSON would make of text (at most 1 + commas + opening
 * brackets, strings skipped) and their nesting, without allocating: a
 * document over the bounds is refused before it is parsed. Malformed JSON
 * is left to the parser, which names the position. */
static int check_size_bounds(const struct pctx *c, const char *text,
                             size_t len)
{
    size_t values = 1, depth = 0, max_depth = 0;
    int in_string = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (in_string) {
            if (ch == '\\')
                i++;
            else if (ch == '"')
                in_string = 0;
            continue;
        }
        switch (ch) {
        case '"':
            in_string = 1;
            break;
        case '[':
        case '{':
            values++;
            if (++depth > max_depth)
                max_depth = depth;
            break;
        case ']':
        case '}':
            if (depth)
                depth--;
            break;
        case ',':
            values++;
            break;
        default:
            break;
        }
        if (values > MANIFEST_MAX_VALUES)
            return bad(c, "", "more than %u JSON values (a manifest holds a "
                              "few hundred)",
                       MANIFEST_MAX_VALUES);
        if (max_depth > MANIFEST_MAX_DEPTH)
            return bad(c, "", "nested deeper than %u levels",
                       MANIFEST_MAX_DEPTH);
    }
    return 0;
}

static int parse_named(const char *text, size_t len, const char *source,
                       const char *name, struct cdd_manifest **out)
{
    struct cdd_manifest *m = NULL;
    struct cdd_sha256 *h = NULL;
    cJSON *root = NULL;
    char *copy = NULL;
    const char *end = NULL;
    struct pctx c = {source ? source : "(manifest)", NULL};
    int r;
    *out = NULL;
    if (!(m = calloc(1, sizeof *m)) || !(copy = malloc(len + 1))) {
        r = nomem(&c);
        goto out;
    }
    c.m = m;
    if (!(m->source = strdup(c.source)) ||
        !(m->name = name ? strdup(name) : stem_of(c.source))) {
        r = nomem(&c);
        goto out;
    }
    if ((r = cdd_sha256_new(&h)) || (r = cdd_sha256_update(h, text, len)) ||
        (r = cdd_sha256_final(h, m->doc_sha256)))
        goto out;
    if (memchr(text, '\0', len)) {
        r = bad(&c, "", "not valid JSON: contains a NUL byte");
        goto out;
    }
    if ((r = check_size_bounds(&c, text, len)) < 0)
        goto out;
    /* cJSON gets its own terminated copy: 'text' need not end in NUL. */
    memcpy(copy, text, len);
    copy[len] = '\0';
    int nomem_parse = 0;
    root = cdd_json_parse(copy, len, &end, 0, &nomem_parse);
    if (nomem_parse) {
        r = nomem(&c);
        goto out;
    }
    if (root && end)
        end += strspn(end, " \t\r\n");
    if (!root || !end || end != copy + len) {
        int line, col;
        position_of(copy, end ? end : copy, &line, &col);
        r = bad(&c, "", "%s at line %d, column %d",
                root ? "unexpected text after the JSON value"
                     : "not valid JSON", line, col);
        goto out;
    }
    if ((r = check_no_nul_escape(&c, copy, len)) || (r = parse_root(&c, root)))
        goto out;
    *out = m;
    m = NULL;
out:
    cJSON_Delete(root);
    cdd_sha256_free(h);
    free(copy);
    cdd_manifest_free(m);
    return r;
}

int cdd_manifest_parse(const char *text, size_t len, const char *source,
                       struct cdd_manifest **out)
{
    return parse_named(text, len, source, NULL, out);
}

int cdd_manifest_load_file(const char *path, struct cdd_manifest **out)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int r = cdd_fs_read_all(path, MANIFEST_MAX_BYTES, &text, &len);
    if (r == CDD_E_STATE)
        r = cdd_fail(CDD_E_MANIFEST, path, 0,
                     "(root): larger than %u bytes", MANIFEST_MAX_BYTES);
    if (r == CDD_E_UNSAFE) /* a FIFO or device (fsops): the manifest's fault */
        r = cdd_fail(CDD_E_MANIFEST, path, 0,
                     "(root): not a regular file (a FIFO, device or socket)");
    if (r == 0)
        r = parse_named(text, len, path, NULL, out);
    free(text);
    return r;
}

/* ---- finding a manifest by name ------------------------------------------------------- */

static int load_builtin(const struct cdd_builtin_manifest *b,
                        struct cdd_manifest **out)
{
    char source[256]; /* fixed: builtin: and a builtin manifest's name */
    snprintf(source, sizeof source, "builtin:%s", b->name);
    return parse_named(b->text, b->len, source, b->name, out);
}

int cdd_manifest_find(const char *name, struct cdd_manifest **out)
{
    char *stem = NULL;
    struct cdd_sb names;
    struct cdd_stat st;
    size_t n;
    int r = 0;
    *out = NULL;
    if (!name) {
        stem = cdd_aprintf(CDD_NAME_MAX, "manifest name", "%s%s",
                           DEFAULT_STEM_PREFIX,
                           cdd_platform_name(cdd_platform_host()));
    } else {
        n = strlen(name);
        int json = n > 5 && strcmp(name + n - 5, ".json") == 0;
        if (strchr(name, '/') || strchr(name, '\\'))
            return cdd_manifest_load_file(name, out);
        if (json && cdd_fs_lstat(name, &st) == 0 && st.type != CDD_FT_NONE)
            return cdd_manifest_load_file(name, out);
        if (json)
            n -= 5;
        /* A longer name is no shipped manifest's: refused, not cut. */
        if (n > CDD_NAME_MAX)
            return cdd_fail(CDD_E_TOOLONG, name, 0,
                            "manifest name longer than %d bytes",
                            CDD_NAME_MAX);
        stem = cdd_strndup(name, n);
        if (!stem)
            return cdd_fail(CDD_E_NOMEM, name, 0, NULL);
    }
    if (!stem)
        return cdd_last_error()->code;
    for (size_t i = 0; i < cdd_builtin_manifest_count; i++) {
        if (strcmp(cdd_builtin_manifests[i].name, stem) == 0) {
            r = load_builtin(&cdd_builtin_manifests[i], out);
            free(stem);
            return r;
        }
    }
    cdd_sb_init(&names, CDD_TEXT_MAX, "list of shipped manifests");
    for (size_t i = 0; !r && i < cdd_builtin_manifest_count; i++)
        r = cdd_sb_addf(&names, "%s%s", i ? ", " : "",
                        cdd_builtin_manifests[i].name);
    if (!r)
        r = cdd_fail(CDD_E_NOTFOUND, name ? name : stem, 0,
                     "no such manifest file or shipped manifest; shipped: %s",
                     cdd_builtin_manifest_count ? cdd_sb_str(&names)
                                                : "(none)");
    cdd_sb_free(&names);
    free(stem);
    return r;
}
