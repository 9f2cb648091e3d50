/* The receipt (.cudnn-deploy/receipt.json) and the deploy log
 * (.cudnn-deploy/log.jsonl): a tree's own record of what cudnn-deploy put
 * into it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/journal.h"
#include "cdd/jsonparse.h"
#include "cdd/jsonw.h"
#include "cdd/pathsafe.h"
#include "cdd/profile.h"
#include "cdd/receipt.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "cdd/sys.h"

#define RECEIPT_SCHEMA 1

void cdd_iso_time(char *buf, size_t len)
{
    time_t t = (time_t)cdd_now();
    struct tm tm;
#if defined(__STDC_LIB_EXT1__)
    gmtime_s(&t, &tm);
#else
    struct tm *p = gmtime(&t);
    tm = *p;
#endif
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cdd_receipt_free(struct cdd_receipt *r)
{
    cdd_receipt_clear(r);
    free(r);
}

void cdd_receipt_clear(struct cdd_receipt *r)
{
    if (!r)
        return;
    free(r->tool_version);
    free(r->txn_id);
    free(r->installed_at);
    free(r->manifest_name);
    free(r->product);
    free(r->version);
    free(r->platform);
    free(r->layout);
    free(r->target_kind);
    free(r->cuda_version);
    free(r->archive_filename);
    free(r->pin_source);
    free(r->archive_url);
    for (size_t i = 0; i < r->n_files; i++) {
        free(r->files[i].path);
        free(r->files[i].link_target);
    }
    free(r->files);
    for (size_t i = 0; i < r->n_backed_up; i++) {
        free(r->backed_up[i]);
        if (r->backed_up_prev)
            cdd_jprev_clear(&r->backed_up_prev[i]);
    }
    free(r->backed_up);
    free(r->backed_up_prev);
    for (size_t i = 0; i < r->n_created_dirs; i++)
        free(r->created_dirs[i]);
    free(r->created_dirs);
    for (size_t i = 0; i < r->n_components; i++) {
        free(r->components[i].name);
        free(r->components[i].archive_filename);
    }
    free(r->components);
    free(r->selection);
    memset(r, 0, sizeof *r);
}

const struct cdd_rfile_entry *cdd_receipt_file(const struct cdd_receipt *r,
                                               const char *path)
{
    for (size_t i = 0; r && i < r->n_files; i++)
        if (strcmp(r->files[i].path, path) == 0)
            return &r->files[i];
    return NULL;
}

/* ---- writing ------------------------------------------------------------- */

static void put_hex(struct cdd_jw *w, const char *key, const uint8_t *sha)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    cdd_hex_encode(sha, CDD_SHA256_LEN, hex);
    cdd_jw_str(w, key, hex);
}

int cdd_receipt_to_json(const struct cdd_receipt *r, char **out)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_int(w, "schema_version", RECEIPT_SCHEMA);
    cdd_jw_str(w, "tool_version", r->tool_version);
    cdd_jw_str(w, "transaction", r->txn_id);
    cdd_jw_str(w, "installed_at", r->installed_at);
    cdd_jw_object(w, "manifest");
    cdd_jw_str(w, "name", r->manifest_name);
    put_hex(w, "sha256", r->manifest_sha256);
    cdd_jw_str(w, "product", r->product);
    cdd_jw_str(w, "version", r->version);
    cdd_jw_str(w, "platform", r->platform);
    cdd_jw_int(w, "cuda_major", r->cuda_major);
    cdd_jw_end(w);
    cdd_jw_object(w, "target");
    cdd_jw_str(w, "kind", r->target_kind);
    cdd_jw_str(w, "layout", r->layout);
    cdd_jw_str(w, "cuda_version", r->cuda_version);
    cdd_jw_end(w);
    cdd_jw_object(w, "archive");
    cdd_jw_str(w, "filename", r->archive_filename);
    put_hex(w, "sha256", r->archive_sha256);
    cdd_jw_uint(w, "size", r->archive_size);
    cdd_jw_bool(w, "pinned", r->archive_pinned);
    cdd_jw_str(w, "pin_source", r->pin_source);
    if (r->archive_url)
        cdd_jw_str(w, "url", r->archive_url);
    cdd_jw_end(w);
    if (r->selection)
        cdd_jw_str(w, "selection", r->selection);
    cdd_jw_str(w, "profile", cdd_profile_name((enum cdd_profile)r->profile));
    size_t n_omitted = 0;
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        n_omitted += r->omitted[i];
    if (n_omitted) {
        cdd_jw_object(w, "omitted");
        for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
            if (r->omitted[i])
                cdd_jw_uint(w, cdd_role_name((enum cdd_role)i), r->omitted[i]);
        cdd_jw_end(w);
    }
    if (r->n_components) {
        cdd_jw_array(w, "components");
        for (size_t i = 0; i < r->n_components; i++) {
            cdd_jw_object(w, NULL);
            cdd_jw_str(w, "name", r->components[i].name);
            cdd_jw_str(w, "filename", r->components[i].archive_filename);
            put_hex(w, "sha256", r->components[i].archive_sha256);
            cdd_jw_end(w);
        }
        cdd_jw_end(w);
    }
    cdd_jw_array(w, "files");
    for (size_t i = 0; i < r->n_files; i++) {
        const struct cdd_rfile_entry *f = &r->files[i];
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "path", f->path);
        cdd_jw_str(w, "role", cdd_role_name(f->role));
        if (f->is_symlink) {
            cdd_jw_str(w, "symlink", f->link_target);
        } else {
            put_hex(w, "sha256", f->sha256);
            cdd_jw_uint(w, "size", f->size);
            /* A string, as the receipt has always had it (readers that
             * take numbers as doubles would round nanoseconds). */
            if (f->mtime_ns > 0) {
                char ns[24]; /* fixed: a 64-bit number */
                snprintf(ns, sizeof ns, "%lld", (long long)f->mtime_ns);
                cdd_jw_str(w, "mtime_ns", ns);
            }
        }
        if (f->preexisting)
            cdd_jw_bool(w, "preexisting", 1);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    cdd_jw_array(w, "backed_up");
    for (size_t i = 0; i < r->n_backed_up; i++) {
        const struct cdd_jprev *pv =
            r->backed_up_prev ? &r->backed_up_prev[i] : NULL;
        if (!pv || pv->type == CDD_FT_NONE) {
            cdd_jw_str(w, NULL, r->backed_up[i]);
            continue;
        }
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "path", r->backed_up[i]);
        if (pv->type == CDD_FT_SYMLINK) {
            cdd_jw_str(w, "symlink", pv->target);
        } else {
            put_hex(w, "sha256", pv->sha256);
            cdd_jw_uint(w, "size", pv->size);
        }
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    cdd_jw_array(w, "created_dirs");
    for (size_t i = 0; i < r->n_created_dirs; i++)
        cdd_jw_str(w, NULL, r->created_dirs[i]);
    cdd_jw_end(w);
    cdd_jw_end(w);
    return cdd_jw_finish(w, CDD_JW_PRETTY, out);
}

/* ---- reading -------------------------------------------------------------
 * The receipt is our own file, but a person or a disk may have damaged it:
 * every field is checked and a fault is named, never trusted blindly. */

struct rd {
    const char *source;
    int err;
};

static int bad(struct rd *c, const char *what)
{
    if (!c->err)
        c->err = cdd_fail(CDD_E_STATE, c->source, 0, "%s", what);
    return c->err;
}

/* Out of memory is the machine's fault, not a damaged receipt (exit 4). */
static int nomem(struct rd *c)
{
    if (!c->err)
        c->err = cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
    return c->err;
}

/* bad() with a message built whole (keys, indexes, a field's message). */
static int badf(struct rd *c, const char *fmt, ...) CDD_PRINTF(2, 3);
static int badf(struct rd *c, const char *fmt, ...)
{
    struct cdd_sb msg;
    va_list ap;
    int r;
    if (c->err)
        return c->err;
    cdd_sb_init(&msg, CDD_TEXT_MAX, "receipt message");
    va_start(ap, fmt);
    r = cdd_sb_vaddf(&msg, fmt, ap);
    va_end(ap);
    if (r)
        c->err = r;
    else
        bad(c, cdd_sb_str(&msg));
    cdd_sb_free(&msg);
    return c->err;
}

/* A path as install writes it into this list (uninstall acts on them):
 * files and created folders in the tree, never in .cudnn-deploy; backups
 * the tree paths or the two state files install replaces. */
static int path_fits(const char *key, const char *p)
{
    if (strcmp(key, "backed_up") == 0)
        return cdd_jdest_ok(p);
    return cdd_jdir_ok(p);
}

static int bad_record(struct rd *c, const char *key, size_t i,
                      const char *why)
{
    return badf(c, "%s[%zu]: %s", key, i, why);
}

static void get_hex(struct rd *c, const cJSON *o, const char *key,
                    uint8_t *sha);
static double get_num(struct rd *c, const cJSON *o, const char *key);

/* backed_up: a path (receipts of earlier versions: unrecorded, restored only
 * as a regular file) or {"path", "size" + "sha256" | "symlink"}. */
static int get_backups(struct rd *c, const cJSON *o, struct cdd_receipt *r)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "backed_up"), *e;
    if (!cJSON_IsArray(arr))
        return bad(c, "backed_up: expected a list");
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    r->backed_up = calloc(cnt ? cnt : 1, sizeof *r->backed_up);
    r->backed_up_prev = calloc(cnt ? cnt : 1, sizeof *r->backed_up_prev);
    if (!r->backed_up || !r->backed_up_prev)
        return nomem(c);
    cJSON_ArrayForEach(e, arr) {
        size_t i = r->n_backed_up;
        const cJSON *pth = cJSON_IsObject(e)
                               ? cJSON_GetObjectItemCaseSensitive(e, "path")
                               : e;
        if (!cJSON_IsString(pth) || !path_fits("backed_up", pth->valuestring))
            return bad_record(c, "backed_up", i,
                              "not a path install backs up");
        if (!(r->backed_up[i] = strdup(pth->valuestring)))
            return nomem(c);
        r->n_backed_up++;
        if (!cJSON_IsObject(e))
            continue;
        struct cdd_jprev *pv = &r->backed_up_prev[i];
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(e, "symlink");
        if (lt) {
            if (!cJSON_IsString(lt) || !*lt->valuestring)
                return bad_record(c, "backed_up", i, "bad symlink target");
            pv->type = CDD_FT_SYMLINK;
            if (!(pv->target = strdup(lt->valuestring)))
                return nomem(c);
        } else {
            pv->type = CDD_FT_FILE;
            get_hex(c, e, "sha256", pv->sha256);
            pv->size = (uint64_t)get_num(c, e, "size");
            if (c->err)
                return c->err;
        }
    }
    return 0;
}

static char *get_str(struct rd *c, const cJSON *o, const char *key,
                     int nullable);

/* components (optional): [{"name", "filename", "sha256"}]. */
static int get_components(struct rd *c, const cJSON *o, struct cdd_receipt *r)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "components"), *e;
    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr))
        return bad(c, "components: expected a list");
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    if (!(r->components = calloc(cnt ? cnt : 1, sizeof *r->components)))
        return nomem(c);
    cJSON_ArrayForEach(e, arr) {
        struct cdd_rcomponent *k = &r->components[r->n_components++];
        if (!cJSON_IsObject(e))
            return bad_record(c, "components", r->n_components - 1,
                              "expected an object");
        k->name = get_str(c, e, "name", 0);
        k->archive_filename = get_str(c, e, "filename", 0);
        get_hex(c, e, "sha256", k->archive_sha256);
        if (c->err)
            return c->err;
    }
    return 0;
}

/* A list of safe relative paths (uninstall acts on them). */
static int get_paths(struct rd *c, const cJSON *o, const char *key,
                     char ***out, size_t *n)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, key), *e;
    if (!cJSON_IsArray(arr))
        return badf(c, "%s: expected a list", key);
    size_t cnt = (size_t)cJSON_GetArraySize(arr);
    *out = calloc(cnt ? cnt : 1, sizeof **out);
    if (!*out)
        return nomem(c);
    cJSON_ArrayForEach(e, arr) {
        if (!cJSON_IsString(e) || !path_fits(key, e->valuestring))
            return bad_record(c, key, *n, "not a path install writes");
        if (!((*out)[(*n)++] = strdup(e->valuestring)))
            return nomem(c);
    }
    return 0;
}

static char *get_str(struct rd *c, const cJSON *o, const char *key,
                     int nullable)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (nullable && (!v || cJSON_IsNull(v)))
        return NULL;
    if (!cJSON_IsString(v)) {
        badf(c, "%s: expected a string", key);
        return NULL;
    }
    char *s = strdup(v->valuestring);
    if (!s)
        nomem(c);
    return s;
}

static double get_num(struct rd *c, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 ||
        v->valuedouble > 9007199254740991.0) {
        badf(c, "%s: expected a number", key);
        return 0;
    }
    return v->valuedouble;
}

static void get_hex(struct rd *c, const cJSON *o, const char *key,
                    uint8_t *sha)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) != 64 ||
        cdd_hex_decode(v->valuestring, sha, CDD_SHA256_LEN) != 0) {
        badf(c, "%s: expected 64 hex digits", key);
    }
}

/* profile (optional: full) and omitted (optional): {"<role>": count}. */
static void get_profile(struct rd *c, const cJSON *o, struct cdd_receipt *r)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "profile");
    const cJSON *om = cJSON_GetObjectItemCaseSensitive(o, "omitted"), *e;
    enum cdd_profile prof = CDD_PROFILE_FULL;
    if (p && (!cJSON_IsString(p) ||
              cdd_profile_parse(p->valuestring, &prof) != 0))
        bad(c, "profile: expected runtime, dev or full");
    r->profile = (int)prof;
    if (!om)
        return;
    if (!cJSON_IsObject(om)) {
        bad(c, "omitted: expected an object");
        return;
    }
    cJSON_ArrayForEach(e, om) {
        enum cdd_role role;
        if (cdd_role_parse(e->string, &role) != 0) {
            bad(c, "omitted: unknown role");
            return;
        }
        r->omitted[role] = (size_t)get_num(c, om, e->string);
    }
}

int cdd_receipt_parse(const char *text, size_t len, const char *source,
                      struct cdd_receipt **out)
{
    struct rd c = {source, 0};
    struct cdd_receipt *r = NULL;
    int parse_nomem = 0;
    cJSON *o = cdd_json_parse(text, len, NULL, 0, &parse_nomem);
    *out = NULL;
    if (parse_nomem) {
        nomem(&c);
        goto out;
    }
    if (!cJSON_IsObject(o)) {
        bad(&c, "not a JSON object (the receipt is damaged)");
        goto out;
    }
    r = calloc(1, sizeof *r);
    if (!r) {
        nomem(&c);
        goto out;
    }
    /* Compared as a double: a huge value must not reach an int cast
     * (undefined behaviour; found by fuzz_receipt). */
    double schema = get_num(&c, o, "schema_version");
    r->schema_version = schema == RECEIPT_SCHEMA ? RECEIPT_SCHEMA : -1;
    if (!c.err && schema != RECEIPT_SCHEMA) {
        bad(&c, "schema_version: written by a newer cudnn-deploy");
        goto out;
    }
    r->tool_version = get_str(&c, o, "tool_version", 1);
    r->txn_id = get_str(&c, o, "transaction", 0);
    r->installed_at = get_str(&c, o, "installed_at", 1);
    if (r->txn_id && !cdd_jid_ok(r->txn_id))
        bad(&c, "transaction: not a valid id");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "manifest");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "target");
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "archive");
    if (!cJSON_IsObject(m) || !cJSON_IsObject(t) || !cJSON_IsObject(a)) {
        bad(&c, "manifest, target and archive must be objects");
        goto out;
    }
    r->manifest_name = get_str(&c, m, "name", 0);
    get_hex(&c, m, "sha256", r->manifest_sha256);
    r->product = get_str(&c, m, "product", 0);
    r->version = get_str(&c, m, "version", 0);
    r->platform = get_str(&c, m, "platform", 0);
    double cuda_major = get_num(&c, m, "cuda_major");
    if (cuda_major > 999)
        bad(&c, "manifest.cuda_major: not a CUDA major version");
    else
        r->cuda_major = (int)cuda_major;
    r->target_kind = get_str(&c, t, "kind", 0);
    r->layout = get_str(&c, t, "layout", 0);
    r->cuda_version = get_str(&c, t, "cuda_version", 1);
    r->archive_filename = get_str(&c, a, "filename", 1);
    get_hex(&c, a, "sha256", r->archive_sha256);
    r->archive_size = (uint64_t)get_num(&c, a, "size");
    r->archive_pinned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "pinned"));
    r->pin_source = get_str(&c, a, "pin_source", 1);
    r->selection = get_str(&c, o, "selection", 1);
    r->archive_url = get_str(&c, a, "url", 1);
    get_profile(&c, o, r);
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(o, "files");
    if (!cJSON_IsArray(files)) {
        bad(&c, "files: expected a list");
        goto out;
    }
    if (get_backups(&c, o, r) ||
        get_paths(&c, o, "created_dirs", &r->created_dirs,
                  &r->n_created_dirs) ||
        get_components(&c, o, r))
        goto out;
    size_t nf = (size_t)cJSON_GetArraySize(files);
    r->files = calloc(nf ? nf : 1, sizeof *r->files);
    if (!r->files) {
        nomem(&c);
        goto out;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, files) {
        struct cdd_rfile_entry *f = &r->files[r->n_files++];
        if (!cJSON_IsObject(e)) {
            bad(&c, "files: expected objects");
            goto out;
        }
        f->path = get_str(&c, e, "path", 0);
        char *role = get_str(&c, e, "role", 0);
        if (role && cdd_role_parse(role, &f->role) != 0)
            bad(&c, "files: unknown role");
        free(role);
        if (c.err)
            goto out;
        /* Receipt paths are deleted by uninstall: they must stay inside,
         * and out of the state folder. */
        if (!cdd_jdir_ok(f->path)) {
            bad_record(&c, "files", r->n_files - 1,
                       "not a path install writes");
            goto out;
        }
        f->preexisting =
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "preexisting"));
        if (cJSON_GetObjectItemCaseSensitive(e, "symlink")) {
            f->is_symlink = 1;
            f->link_target = get_str(&c, e, "symlink", 0);
        } else {
            get_hex(&c, e, "sha256", f->sha256);
            f->size = (uint64_t)get_num(&c, e, "size");
            /* Optional (older receipts have none: 0, never "unchanged"). */
            const cJSON *mt = cJSON_GetObjectItemCaseSensitive(e, "mtime_ns");
            if (cJSON_IsString(mt)) {
                char *end = NULL;
                long long v = strtoll(mt->valuestring, &end, 10);
                if (end == mt->valuestring || *end || v <= 0)
                    bad(&c, "files: mtime_ns: expected a positive integer");
                else
                    f->mtime_ns = (int64_t)v;
            } else if (mt) {
                bad(&c, "files: mtime_ns: expected a string of digits");
            }
        }
        if (c.err)
            goto out;
    }
out:
    cJSON_Delete(o);
    if (c.err) {
        cdd_receipt_free(r);
        return c.err;
    }
    *out = r;
    return 0;
}

/* A state file of the tree into *text (NULL: there is none), at most max
 * bytes; *path (malloc'd) names it in messages. A link or anything but a
 * regular file is CDD_E_STATE. */
static int read_state(struct cdd_tree *tree, const char *rel, size_t max,
                      char **path, char **text, size_t *len)
{
    struct cdd_stat st;
    int r;
    *text = NULL;
    *len = 0;
    if (!(*path = cdd_tree_abs(tree, rel)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!cdd_tree_has_state(tree))
        return 0;
    r = cdd_tree_lstat(tree, rel, &st);
    if (r || st.type == CDD_FT_NONE)
        return r;
    if (st.type != CDD_FT_FILE)
        return cdd_fail(CDD_E_STATE, *path, 0,
                        "not a regular file (a link is not accepted)");
    r = cdd_tree_read_all(tree, rel, max, text, len);
    if (r == CDD_E_UNSAFE)
        r = cdd_fail(CDD_E_STATE, *path, 0,
                     "not a regular file (a link is not accepted)");
    return r;
}

int cdd_receipt_load(struct cdd_tree *tree, struct cdd_receipt **out)
{
    char *path = NULL, *text = NULL;
    size_t len = 0;
    *out = NULL;
    int r = read_state(tree, CDD_RECEIPT_FILE, 64u << 20, &path, &text, &len);
    if (!r && text)
        r = cdd_receipt_parse(text, len, path, out);
    free(text);
    free(path);
    return r;
}

int cdd_receipt_digest(const struct cdd_receipt *r,
                       uint8_t out[CDD_SHA256_LEN])
{
    char *text = NULL;
    struct cdd_sha256 *h = NULL;
    int rc = cdd_receipt_to_json(r, &text);
    if (!rc)
        rc = cdd_sha256_new(&h);
    if (!rc)
        rc = cdd_sha256_update(h, text, strlen(text));
    if (!rc)
        rc = cdd_sha256_final(h, out);
    cdd_sha256_free(h);
    free(text);
    return rc;
}

/* ---- the verify record ------------------------------------------------------ */

#define VERIFIED_SCHEMA 1

void cdd_verified_free(struct cdd_verified *v)
{
    if (!v)
        return;
    free(v->verified_at);
    free(v->tool_version);
    free(v->manifest_name);
    free(v->level);
    free(v->outcome);
    for (size_t i = 0; i < v->n_layers; i++) {
        free(v->layers[i].name);
        free(v->layers[i].outcome);
    }
    free(v->layers);
    free(v);
}

struct cdd_jw *cdd_verified_jw(const struct cdd_verified *v)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_int(w, "schema_version", VERIFIED_SCHEMA);
    cdd_jw_str(w, "verified_at", v->verified_at);
    cdd_jw_str(w, "tool_version", v->tool_version);
    put_hex(w, "receipt_sha256", v->receipt_sha256);
    cdd_jw_str(w, "manifest", v->manifest_name);
    cdd_jw_str(w, "level", v->level);
    cdd_jw_str(w, "outcome", v->outcome);
    cdd_jw_array(w, "layers");
    for (size_t i = 0; i < v->n_layers; i++) {
        const struct cdd_vlayer *l = &v->layers[i];
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "name", l->name);
        cdd_jw_str(w, "outcome", l->outcome);
        cdd_jw_uint(w, "passed", l->passed);
        cdd_jw_uint(w, "warnings", l->warned);
        cdd_jw_uint(w, "failed", l->failed);
        cdd_jw_uint(w, "skipped", l->skipped);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    cdd_jw_end(w);
    return w;
}

int cdd_verified_to_json(const struct cdd_verified *v, char **out)
{
    return cdd_jw_finish(cdd_verified_jw(v), CDD_JW_PRETTY, out);
}

/* A short word from a closed set (an outcome, a layer, a level): a record
 * that names anything else is damaged, and nothing it says is shown. */
static char *get_word(struct rd *c, const cJSON *o, const char *key,
                      const char *const *allowed)
{
    char *s = get_str(c, o, key, 0);
    for (size_t i = 0; s && allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0)
            return s;
    if (s) {
        badf(c, "%s: not one of the values cudnn-deploy writes", key);
    }
    free(s);
    return NULL;
}

/* Free text of the record (a version, a manifest name, a time) stays
 * short and printable: it reaches reports and SBOMs. */
static char *get_text(struct rd *c, const cJSON *o, const char *key)
{
    char *s = get_str(c, o, key, 0);
    size_t n = s ? strlen(s) : 0;
    int ok = s && n > 0 && n <= 256;
    for (size_t i = 0; ok && i < n; i++)
        ok = (unsigned char)s[i] >= 0x20 && s[i] != 0x7f;
    if (s && !ok) {
        badf(c, "%s: expected 1 to 256 printable characters", key);
        free(s);
        return NULL;
    }
    return s;
}

int cdd_verified_parse(const char *text, size_t len, const char *source,
                       struct cdd_verified **out)
{
    static const char *const outcomes[] = {"pass", "warn", "fail", "skip",
                                           NULL};
    static const char *const layers[] = {"files", "load", "gpu", "bench",
                                         NULL};
    static const char *const levels[] = {"files", "load", "gpu", "bench",
                                         NULL};
    struct rd c = {source, 0};
    struct cdd_verified *v = NULL;
    cJSON *o = cJSON_ParseWithLength(text, len);
    *out = NULL;
    if (!cJSON_IsObject(o)) {
        bad(&c, "not a JSON object (the verify record is damaged)");
        goto out;
    }
    if (!(v = calloc(1, sizeof *v))) {
        bad(&c, "out of memory");
        goto out;
    }
    double schema = get_num(&c, o, "schema_version");
    if (!c.err && schema != VERIFIED_SCHEMA) {
        bad(&c, "schema_version: not one this cudnn-deploy writes");
        goto out;
    }
    v->verified_at = get_text(&c, o, "verified_at");
    v->tool_version = get_text(&c, o, "tool_version");
    get_hex(&c, o, "receipt_sha256", v->receipt_sha256);
    v->manifest_name = get_text(&c, o, "manifest");
    v->level = get_word(&c, o, "level", levels);
    v->outcome = get_word(&c, o, "outcome", outcomes);
    const cJSON *ls = cJSON_GetObjectItemCaseSensitive(o, "layers"), *e;
    if (!c.err && (!cJSON_IsArray(ls) || cJSON_GetArraySize(ls) > 4))
        bad(&c, "layers: expected a list of at most 4 layers");
    if (c.err)
        goto out;
    size_t n = (size_t)cJSON_GetArraySize(ls);
    if (!(v->layers = calloc(n ? n : 1, sizeof *v->layers))) {
        bad(&c, "out of memory");
        goto out;
    }
    cJSON_ArrayForEach(e, ls) {
        struct cdd_vlayer *l = &v->layers[v->n_layers++];
        if (!cJSON_IsObject(e)) {
            bad_record(&c, "layers", v->n_layers - 1, "expected an object");
            goto out;
        }
        l->name = get_word(&c, e, "name", layers);
        l->outcome = get_word(&c, e, "outcome", outcomes);
        l->passed = (uint64_t)get_num(&c, e, "passed");
        l->warned = (uint64_t)get_num(&c, e, "warnings");
        l->failed = (uint64_t)get_num(&c, e, "failed");
        l->skipped = (uint64_t)get_num(&c, e, "skipped");
        if (c.err) {
            /* Say which layer: the field's own message is kept. */
            char *field = cdd_strdup(cdd_last_error()->msg);
            c.err = 0;
            if (field)
                badf(&c, "layers[%zu]: %s", v->n_layers - 1, field);
            else
                nomem(&c);
            free(field);
            goto out;
        }
    }
out:
    cJSON_Delete(o);
    if (c.err) {
        cdd_verified_free(v);
        return c.err;
    }
    *out = v;
    return 0;
}

int cdd_verified_load(struct cdd_tree *tree, struct cdd_verified **out)
{
    char *path = NULL, *text = NULL;
    size_t len = 0;
    *out = NULL;
    int r = read_state(tree, CDD_VERIFIED_FILE, CDD_VERIFIED_MAX, &path,
                       &text, &len);
    if (!r && text)
        r = cdd_verified_parse(text, len, path, out);
    free(text);
    free(path);
    return r;
}

int cdd_log_append(struct cdd_tree *tree, const char *op, const char *txn_id,
                   struct cdd_jw *detail)
{
    char when[32]; /* fixed: an ISO 8601 time */
    char *line = NULL;
    cdd_iso_time(when, sizeof when);
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "time", when);
    cdd_jw_str(w, "op", op);
    cdd_jw_str(w, "transaction", txn_id);
    cdd_jw_int(w, "pid", (long long)cdd_getpid());
    cdd_jw_doc(w, "detail", detail);
    cdd_jw_end(w);
    int r = cdd_jw_finish(w, CDD_JW_LINE, &line);
    if (!r)
        r = cdd_tree_append_line(tree, CDD_LOG_FILE, line);
    free(line);
    return r;
}
