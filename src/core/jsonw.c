/* The JSON writer (jsonw.h): the calls build a cJSON tree; cJSON prints
 * it, or, for the manifest layout, prints every string, number and key
 * while this file places the brackets, commas and indentation. */
#include "cdd/jsonw.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/error.h"
#include "cdd/strbuf.h"

/* Deeper than any document the tool writes (the manifest nests four). */
#define JW_DEPTH 16

struct cdd_jw {
    cJSON *root;
    cJSON *open[JW_DEPTH]; /* the open containers, innermost last */
    int depth;
    int nomem; /* an allocation failed */
    int bad;   /* a call out of place: a bug of the caller */
};

struct cdd_jw *cdd_jw_new(void)
{
    return calloc(1, sizeof(struct cdd_jw));
}

void cdd_jw_free(struct cdd_jw *w)
{
    if (!w)
        return;
    cJSON_Delete(w->root);
    free(w);
}

static int failed(const struct cdd_jw *w)
{
    return !w || w->nomem || w->bad;
}

/* Put v (owned) where the next value goes; 1 when it is in the tree. */
static int place(struct cdd_jw *w, const char *key, cJSON *v)
{
    if (failed(w)) {
        cJSON_Delete(v);
        return 0;
    }
    if (!v) {
        w->nomem = 1;
        return 0;
    }
    if (w->depth == 0) {
        if (w->root || key) {
            w->bad = 1;
            cJSON_Delete(v);
            return 0;
        }
        w->root = v;
        return 1;
    }
    cJSON *parent = w->open[w->depth - 1];
    if (cJSON_IsObject(parent) ? !key : key != NULL) {
        w->bad = 1;
        cJSON_Delete(v);
        return 0;
    }
    if (key ? !cJSON_AddItemToObject(parent, key, v)
            : !cJSON_AddItemToArray(parent, v)) {
        w->nomem = 1; /* the copy of the key */
        cJSON_Delete(v);
        return 0;
    }
    return 1;
}

static void open_container(struct cdd_jw *w, const char *key, cJSON *c)
{
    if (!place(w, key, c))
        return;
    if (w->depth == JW_DEPTH)
        w->bad = 1;
    else
        w->open[w->depth++] = c;
}

void cdd_jw_object(struct cdd_jw *w, const char *key)
{
    open_container(w, key, cJSON_CreateObject());
}

void cdd_jw_array(struct cdd_jw *w, const char *key)
{
    open_container(w, key, cJSON_CreateArray());
}

void cdd_jw_end(struct cdd_jw *w)
{
    if (failed(w))
        return;
    if (w->depth == 0)
        w->bad = 1;
    else
        w->depth--;
}

void cdd_jw_str(struct cdd_jw *w, const char *key, const char *s)
{
    place(w, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

/* Integers as raw digits: cJSON keeps numbers as doubles, which lose
 * 64-bit sizes past 2^53; for smaller ones the digits are what cJSON would
 * print. */
void cdd_jw_int(struct cdd_jw *w, const char *key, long long v)
{
    char d[32]; /* fixed: a number */
    snprintf(d, sizeof d, "%lld", v);
    place(w, key, cJSON_CreateRaw(d));
}

void cdd_jw_uint(struct cdd_jw *w, const char *key, uint64_t v)
{
    char d[32]; /* fixed: a number */
    snprintf(d, sizeof d, "%" PRIu64, v);
    place(w, key, cJSON_CreateRaw(d));
}

void cdd_jw_num(struct cdd_jw *w, const char *key, double v)
{
    place(w, key, cJSON_CreateNumber(v));
}

void cdd_jw_bool(struct cdd_jw *w, const char *key, int v)
{
    place(w, key, cJSON_CreateBool(v));
}

void cdd_jw_null(struct cdd_jw *w, const char *key)
{
    place(w, key, cJSON_CreateNull());
}

void cdd_jw_doc(struct cdd_jw *w, const char *key, struct cdd_jw *doc)
{
    if (!doc)
        return;
    cJSON *v = doc->root;
    doc->root = NULL;
    if (w && !failed(w)) {
        w->nomem = doc->nomem;
        w->bad = doc->bad || doc->depth != 0 || (!doc->nomem && !v);
    }
    free(doc);
    place(w, key, v);
}

/* ---- the manifest layout -------------------------------------------------- */

/* The most bytes a manifest-style text may hold: four times what the
 * manifest reader takes (16 MiB, manifest.c), room for an SBOM of the largest
 * archive. A document past it fails with CDD_E_TOOLONG, never cut. */
#define MANIFEST_TEXT_MAX ((size_t)64 << 20)

struct sbuf {
    struct cdd_sb sb;
    int err; /* the first failure (sticky), recorded */
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (!b->err)
        b->err = cdd_sb_add(&b->sb, s, n);
}

static void sb_puts(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

/* A string, number, true, false or null, as cJSON prints it. */
static void sb_leaf(struct sbuf *b, const cJSON *v)
{
    char *t = cJSON_PrintUnformatted(v);
    if (!t) {
        if (!b->err)
            b->err = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return;
    }
    sb_puts(b, t);
    cJSON_free(t);
}

static void sb_key(struct sbuf *b, const char *key)
{
    cJSON *k = cJSON_CreateStringReference(key);
    if (!k) {
        if (!b->err)
            b->err = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        return;
    }
    sb_leaf(b, k);
    cJSON_Delete(k);
    sb_puts(b, ": ");
}

static void sb_indent(struct sbuf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        sb_puts(b, "  ");
}

static void sb_value(struct sbuf *b, const cJSON *v, int depth, int one_line)
{
    int obj = cJSON_IsObject(v);
    if (!obj && !cJSON_IsArray(v)) {
        sb_leaf(b, v);
        return;
    }
    sb_puts(b, obj ? "{" : "[");
    for (const cJSON *c = v->child; c; c = c->next) {
        if (one_line) {
            if (c != v->child)
                sb_puts(b, ", ");
        } else {
            sb_puts(b, c != v->child ? ",\n" : "\n");
            sb_indent(b, depth + 1);
        }
        if (obj)
            sb_key(b, c->string);
        /* An object inside a list: one line (a file entry, a library). */
        sb_value(b, c, depth + 1, one_line || (!obj && cJSON_IsObject(c)));
    }
    if (!one_line && v->child) {
        sb_puts(b, "\n");
        sb_indent(b, depth);
    }
    sb_puts(b, obj ? "}" : "]");
}

/* root as manifest-style text in *out; 0 or the error, recorded. */
static int manifest_text(const cJSON *root, char **out)
{
    struct sbuf b;
    cdd_sb_init(&b.sb, MANIFEST_TEXT_MAX, "JSON document");
    b.err = 0;
    sb_value(&b, root, 0, 0);
    sb_puts(&b, "\n");
    if (!b.err && !(*out = cdd_sb_take(&b.sb)))
        b.err = CDD_E_NOMEM; /* recorded by cdd_sb_take */
    cdd_sb_free(&b.sb);
    return b.err;
}

/* cJSON's text into a malloc'd copy (cJSON may allocate with its own
 * hooks), with a newline after it when nl. */
static char *own_copy(char *t, int nl)
{
    if (!t)
        return NULL;
    size_t n = strlen(t);
    char *c = malloc(n + 2);
    if (c) {
        memcpy(c, t, n);
        if (nl)
            c[n++] = '\n';
        c[n] = '\0';
    }
    cJSON_free(t);
    return c;
}

int cdd_jw_finish(struct cdd_jw *w, enum cdd_jw_style style, char **out)
{
    int r = 0;
    *out = NULL;
    if (!w || w->nomem) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    if (w->bad || w->depth || !w->root) {
        r = cdd_fail(CDD_E_IO, NULL, 0,
                     "JSON writer: an unbalanced document (a bug)");
        goto out;
    }
    switch (style) {
    case CDD_JW_LINE:
        *out = own_copy(cJSON_PrintUnformatted(w->root), 0);
        break;
    case CDD_JW_PRETTY:
        *out = own_copy(cJSON_Print(w->root), 1);
        break;
    case CDD_JW_MANIFEST:
        r = manifest_text(w->root, out);
        break;
    }
    if (!r && !*out)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
out:
    cdd_jw_free(w);
    return r;
}
