/* Reading NVIDIA's redistrib_<version>.json (both shapes) and picking the
 * one entry a manifest needs. The file is a pin: anything odd about the
 * parts we use is an error naming the JSON path, never a guess. */
#include "cdd/redistrib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/error.h"
#include "cdd/jsonparse.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

struct rctx {
    const char *source;
};

static int bad(const struct rctx *c, const char *jp, const char *fmt,
               const char *arg)
{
    /* fmt is one of this file's formats, with one %s for arg. */
    char *msg = cdd_aprintf(CDD_TEXT_MAX, "redistrib fault", fmt,
                            arg ? arg : "");
    if (!msg)
        return cdd_last_error()->code;
    int r = cdd_fail(CDD_E_MANIFEST, c->source, 0, "%s: %s", jp, msg);
    free(msg);
    return r;
}

/* obj[key], refusing a key given twice: two parsers could pick different
 * copies of a duplicated "sha256", and a pin must mean one thing. */
static int member(const struct rctx *c, const cJSON *obj, const char *jp,
                  const char *key, const cJSON **out, struct cdd_sb *kjp)
{
    const cJSON *found = NULL, *it;
    *out = NULL;
    /* The JSON path of key, whole (keys are the file's, untrusted). */
    int r = cdd_sb_setf(kjp, "%s%s%s", jp, *jp ? "." : "", key);
    if (r)
        return r;
    cJSON_ArrayForEach(it, obj)
    {
        if (it->string && strcmp(it->string, key) == 0) {
            if (found)
                return bad(c, cdd_sb_str(kjp), "duplicate key%s", NULL);
            found = it;
        }
    }
    *out = found;
    return 0;
}

static int get_string(const struct rctx *c, const cJSON *obj, const char *jp,
                      const char *key, int required, const char **out,
                      struct cdd_sb *kjp)
{
    const cJSON *v;
    int r = member(c, obj, jp, key, &v, kjp);
    *out = NULL;
    if (r)
        return r;
    if (!v)
        return required ? bad(c, cdd_sb_str(kjp), "missing%s", NULL) : 0;
    if (!cJSON_IsString(v) || !v->valuestring)
        return bad(c, cdd_sb_str(kjp), "expected a string%s", NULL);
    *out = v->valuestring;
    return 0;
}

static int get_object(const struct rctx *c, const cJSON *obj, const char *jp,
                      const char *key, const char *missing_why,
                      const cJSON **out, struct cdd_sb *kjp)
{
    int r = member(c, obj, jp, key, out, kjp);
    if (r)
        return r;
    if (!*out)
        return bad(c, cdd_sb_str(kjp), "missing%s", missing_why);
    if (!cJSON_IsObject(*out))
        return bad(c, cdd_sb_str(kjp), "expected an object%s", NULL);
    return 0;
}

static int is_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
              (ch >= 'A' && ch <= 'F')))
            return 0;
    }
    return s[n] == '\0';
}

/* "704240064": decimal digits only, no sign, no leading zero (but "0"). */
static int parse_size(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    size_t n = strlen(s);
    if (n == 0 || n > 19 || (s[0] == '0' && n > 1))
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return 0;
}

/* The names of the cuda<N> variants present, for a helpful message. */
static int list_variants(const cJSON *plat, struct cdd_sb *sb)
{
    const cJSON *it;
    int r = 0;
    cJSON_ArrayForEach(it, plat)
    {
        if (!r && it->string && strncmp(it->string, "cuda", 4) == 0)
            r = cdd_sb_addf(sb, "%s%s", cdd_sb_len(sb) ? ", " : "",
                            it->string);
    }
    return r;
}

static int entry_at(const struct rctx *c, const cJSON *e, const char *jp,
                    const struct cdd_redistrib_query *q,
                    struct cdd_redistrib_entry *out, struct cdd_sb *kjp)
{
    const char *rel, *sha, *md5, *size, *why = NULL;
    int r;
    if ((r = get_string(c, e, jp, "relative_path", 1, &rel, kjp)))
        return r;
    if (!cdd_path_is_safe(rel, 0, &why))
        return bad(c, cdd_sb_str(kjp), "not a safe relative path: %s", why);
    /* The pin is for one file: if the entry names another (a renamed
     * archive, a variant mix-up), its sha256 says nothing about ours. */
    if (q->filename && strcmp(cdd_path_basename(rel), q->filename) != 0) {
        char *msg = cdd_aprintf(CDD_TEXT_MAX, "redistrib fault",
                                "names %s, but the manifest's archive is %s",
                                cdd_path_basename(rel), q->filename);
        r = msg ? bad(c, cdd_sb_str(kjp), "%s", msg) : cdd_last_error()->code;
        free(msg);
        return r;
    }
    if ((r = get_string(c, e, jp, "sha256", 1, &sha, kjp)))
        return r;
    if (strlen(sha) != 64 || !is_hex(sha, 64) ||
        cdd_hex_decode(sha, out->sha256, CDD_SHA256_LEN))
        return bad(c, cdd_sb_str(kjp), "expected 64 hex digits%s", NULL);
    if ((r = get_string(c, e, jp, "md5", 0, &md5, kjp)))
        return r;
    if (md5 && (strlen(md5) != 32 || !is_hex(md5, 32)))
        return bad(c, cdd_sb_str(kjp), "expected 32 hex digits%s", NULL);
    if (md5) {
        memcpy(out->md5, md5, 33);
        out->has_md5 = 1;
    }
    if ((r = get_string(c, e, jp, "size", 0, &size, kjp)))
        return r;
    if (size) {
        if (parse_size(size, &out->size))
            return bad(c, cdd_sb_str(kjp),
                       "expected a size in decimal digits%s", NULL);
        out->has_size = 1;
    }
    if (!(out->relative_path = strdup(rel)))
        return cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
    return 0;
}

static int read_entry(const struct rctx *c, const cJSON *e, const char *jp,
                      const struct cdd_redistrib_query *q,
                      struct cdd_redistrib_entry *out)
{
    struct cdd_sb kjp;
    cdd_sb_init(&kjp, CDD_TEXT_MAX, "JSON path");
    int r = entry_at(c, e, jp, q, out, &kjp);
    cdd_sb_free(&kjp);
    return r;
}

/* text as a JSON object (*root, freed by the caller with cJSON_Delete). */
static int parse_root(const struct rctx *c, const char *text, size_t len,
                      cJSON **root)
{
    const char *end = NULL;
    char *copy;
    *root = NULL;
    /* cJSON rejects trailing text only when it can see the terminating
     * NUL; a NUL inside would hide what follows it. */
    if (memchr(text, '\0', len))
        return cdd_fail(CDD_E_MANIFEST, c->source, 0,
                        "not valid JSON (a NUL byte inside)");
    if (!(copy = malloc(len + 1)))
        return cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
    memcpy(copy, text, len);
    copy[len] = '\0';
    int parse_nomem = 0;
    *root = cdd_json_parse(copy, len + 1, &end, 1, &parse_nomem);
    if (parse_nomem) {
        free(copy);
        return cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
    }
    if (!*root) {
        size_t off = end && end >= copy && end <= copy + len
                         ? (size_t)(end - copy) : 0;
        free(copy);
        return cdd_fail(CDD_E_MANIFEST, c->source, 0,
                        "not valid JSON (near byte %zu)", off);
    }
    free(copy);
    if (!cJSON_IsObject(*root))
        return bad(c, "(root)", "expected a JSON object%s", NULL);
    return 0;
}

static int dup_opt(const struct rctx *c, const char *s, char **out)
{
    *out = NULL;
    if (s && !(*out = strdup(s)))
        return cdd_fail(CDD_E_NOMEM, c->source, 0, NULL);
    return 0;
}

static int list_add(const struct rctx *c, struct cdd_redistrib_list *l,
                    const cJSON *e, const char *jp, const char *platform,
                    const char *variant)
{
    struct cdd_redistrib_query q = {0};
    struct cdd_redistrib_item *it;
    int r;
    /* The list keeps no capacity: exact size (about ten items). */
    if ((r = CDD_GROW(l->items, NULL, l->n + 1, CDD_REDISTRIB_MAX_ARCHIVES,
                      "archives in one redistrib JSON")) < 0)
        return cdd_fail(r, c->source, 0, "%s: %s", jp, cdd_last_error()->msg);
    it = &l->items[l->n];
    memset(it, 0, sizeof *it);
    if ((r = read_entry(c, e, jp, &q, &it->e)))
        return r;
    l->n++;
    if ((r = dup_opt(c, platform, &it->platform)) ||
        (r = dup_opt(c, variant, &it->variant)))
        return r;
    return 0;
}

int cdd_redistrib_list_parse(const char *text, size_t len, const char *source,
                             const char *product,
                             struct cdd_redistrib_list *out)
{
    struct rctx c = {source};
    cJSON *root = NULL;
    const cJSON *prod, *plat, *v;
    const char *s;
    struct cdd_sb jp, kjp, vjp, ejp; /* JSON paths */
    int r;

    cdd_sb_init(&jp, CDD_TEXT_MAX, "JSON path");
    cdd_sb_init(&kjp, CDD_TEXT_MAX, "JSON path");
    cdd_sb_init(&vjp, CDD_TEXT_MAX, "JSON path");
    cdd_sb_init(&ejp, CDD_TEXT_MAX, "JSON path");
    memset(out, 0, sizeof *out);
    if ((r = parse_root(&c, text, len, &root)))
        goto out;
    if ((r = get_string(&c, root, "", "release_label", 0, &s, &kjp)) ||
        (r = dup_opt(&c, s, &out->label)))
        goto out;
    if ((r = get_string(&c, root, "", "release_date", 0, &s, &kjp)) ||
        (r = dup_opt(&c, s, &out->date)))
        goto out;
    if ((r = get_object(&c, root, "", product,
                        " (this file lists no such product)", &prod, &jp)))
        goto out;
    if ((r = get_string(&c, prod, cdd_sb_str(&jp), "version", 1, &s,
                        &kjp)) ||
        (r = dup_opt(&c, s, &out->version)))
        goto out;
    cJSON_ArrayForEach(plat, prod)
    {
        const cJSON *var, *dup;
        /* name, license, cuda_variant...: not platforms. */
        if (!cJSON_IsObject(plat) || !plat->string)
            continue;
        /* A platform given twice would make two readers differ. */
        if ((r = member(&c, prod, cdd_sb_str(&jp), plat->string, &dup,
                        &kjp)))
            goto out;
        if ((r = member(&c, plat, cdd_sb_str(&kjp), "relative_path", &v,
                        &vjp)))
            goto out;
        if (v && (r = list_add(&c, out, plat, cdd_sb_str(&kjp), plat->string,
                               NULL)))
            goto out;
        cJSON_ArrayForEach(var, plat)
        {
            if (!var->string || strncmp(var->string, "cuda", 4) != 0 ||
                strcmp(var->string, "cuda_variant") == 0)
                continue;
            if ((r = member(&c, plat, cdd_sb_str(&kjp), var->string, &dup,
                            &ejp)))
                goto out;
            if (!cJSON_IsObject(var)) {
                r = bad(&c, cdd_sb_str(&ejp), "expected an object%s", NULL);
                goto out;
            }
            if ((r = list_add(&c, out, var, cdd_sb_str(&ejp), plat->string,
                              var->string)))
                goto out;
        }
    }
out:
    if (r)
        cdd_redistrib_list_clear(out);
    cJSON_Delete(root);
    cdd_sb_free(&jp);
    cdd_sb_free(&kjp);
    cdd_sb_free(&vjp);
    cdd_sb_free(&ejp);
    return r;
}

void cdd_redistrib_list_clear(struct cdd_redistrib_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->items[i].platform);
        free(l->items[i].variant);
        cdd_redistrib_entry_clear(&l->items[i].e);
    }
    free(l->items);
    free(l->version);
    free(l->label);
    free(l->date);
    memset(l, 0, sizeof *l);
}

int cdd_redistrib_parse(const char *text, size_t len, const char *source,
                        const struct cdd_redistrib_query *q,
                        struct cdd_redistrib_entry *out)
{
    struct rctx c = {source};
    cJSON *root = NULL;
    const cJSON *prod, *plat, *entry, *v;
    const char *s, *pname = cdd_platform_name(q->platform);
    struct cdd_sb jp, kjp, have; /* JSON paths; the variants present */
    char variant[16]; /* fixed: "cuda" and an int */
    int r;

    cdd_sb_init(&jp, CDD_TEXT_MAX, "JSON path");
    cdd_sb_init(&kjp, CDD_TEXT_MAX, "JSON path");
    cdd_sb_init(&have, CDD_TEXT_MAX, "list of CUDA variants");
    memset(out, 0, sizeof *out);
    if (!pname) {
        r = cdd_fail(CDD_E_USAGE, source, 0, "unknown platform");
        goto out;
    }
    if ((r = parse_root(&c, text, len, &root)))
        goto out;
    if ((r = get_string(&c, root, "", "release_label", 0, &s, &kjp)))
        goto out;
    if ((r = get_object(&c, root, "", q->product,
                        " (this file lists no such product)", &prod, &jp)))
        goto out;
    if ((r = get_string(&c, prod, cdd_sb_str(&jp), "version", 0, &s, &kjp)))
        goto out;
    if (s && q->version && strcmp(s, q->version) != 0) {
        char *msg = cdd_aprintf(CDD_TEXT_MAX, "redistrib fault",
                                "%s, but the manifest is for %s", s,
                                q->version);
        r = msg ? bad(&c, cdd_sb_str(&kjp), "%s", msg)
                : cdd_last_error()->code;
        free(msg);
        goto out;
    }
    if ((r = cdd_sb_set(&kjp, cdd_sb_str(&jp))) ||
        (r = get_object(&c, prod, cdd_sb_str(&kjp), pname,
                        " (no archive for this platform)", &plat, &jp)))
        goto out;
    /* Old shape: the platform object is the entry itself. */
    if ((r = member(&c, plat, cdd_sb_str(&jp), "relative_path", &v, &kjp)))
        goto out;
    if (v) {
        r = read_entry(&c, plat, cdd_sb_str(&jp), q, out);
        goto out;
    }
    snprintf(variant, sizeof variant, "cuda%d", q->cuda_major);
    if ((r = cdd_sb_set(&kjp, cdd_sb_str(&jp))) ||
        (r = member(&c, plat, cdd_sb_str(&kjp), variant, &entry, &jp)))
        goto out;
    if (!entry) {
        char *msg = NULL;
        if (!(r = list_variants(plat, &have)) &&
            (msg = cdd_aprintf(CDD_TEXT_MAX, "redistrib fault",
                               "missing (no archive for CUDA %d%s%s)",
                               q->cuda_major,
                               cdd_sb_len(&have) ? "; this file has " : "",
                               cdd_sb_str(&have))))
            r = bad(&c, cdd_sb_str(&jp), "%s", msg);
        else if (!r)
            r = cdd_last_error()->code;
        free(msg);
        goto out;
    }
    if (!cJSON_IsObject(entry)) {
        r = bad(&c, cdd_sb_str(&jp), "expected an object%s", NULL);
        goto out;
    }
    out->nested = 1;
    r = read_entry(&c, entry, cdd_sb_str(&jp), q, out);
out:
    if (r)
        cdd_redistrib_entry_clear(out);
    cJSON_Delete(root);
    cdd_sb_free(&jp);
    cdd_sb_free(&kjp);
    cdd_sb_free(&have);
    return r;
}

void cdd_redistrib_entry_clear(struct cdd_redistrib_entry *e)
{
    if (!e)
        return;
    free(e->relative_path);
    memset(e, 0, sizeof *e);
}
