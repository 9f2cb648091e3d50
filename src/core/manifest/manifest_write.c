/* Manifest writer: serialises a struct cdd_manifest to the canonical text of
 * docs/manifest.md — keys in schema order, two-space indentation, one line
 * per file entry — so that `manifest create` output diffs well and
 * parse(to_json(m)) equals m. Needs no JSON library: it only writes. */
#include "cdd/manifest.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"

struct sbuf {
    char *p;
    size_t len, cap;
    int nomem;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
    if (b->nomem)
        return;
    if (b->cap - b->len <= n) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= n)
            cap *= 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->nomem = 1;
            return;
        }
        b->p = np;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
    CDD_PRINTF(2, 3);

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    char tmp[128];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        b->nomem = 1; /* only short numeric fragments go through here */
    else
        sb_add(b, tmp, (size_t)n);
}

/* A JSON string: escapes quote, backslash and control characters; other
 * bytes (UTF-8) pass through. */
static void sb_str(struct sbuf *b, const char *s)
{
    sb_add(b, "\"", 1);
    for (const char *run = s;; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        sb_add(b, run, (size_t)(s - run));
        if (!ch)
            break;
        if (ch == '"' || ch == '\\') {
            char e[2] = {'\\', (char)ch};
            sb_add(b, e, 2);
        } else if (ch == '\n') {
            sb_puts(b, "\\n");
        } else if (ch == '\t') {
            sb_puts(b, "\\t");
        } else {
            sb_printf(b, "\\u%04x", ch);
        }
        run = s + 1;
    }
    sb_add(b, "\"", 1);
}

/* "key": "value" with the given indentation and separator after it. */
static void kv_str(struct sbuf *b, const char *indent, const char *key,
                   const char *val, const char *after)
{
    sb_puts(b, indent);
    sb_str(b, key);
    sb_puts(b, ": ");
    sb_str(b, val);
    sb_puts(b, after);
}

static void kv_sha(struct sbuf *b, const char *key, int has,
                   const uint8_t d[CDD_SHA256_LEN], const char *after)
{
    char hex[CDD_SHA256_HEX];
    sb_printf(b, "\"%s\": ", key);
    if (has) {
        cdd_hex_encode(d, CDD_SHA256_LEN, hex);
        sb_str(b, hex);
    } else {
        sb_puts(b, "null");
    }
    sb_puts(b, after);
}

static void kv_size(struct sbuf *b, int has, uint64_t size, const char *after)
{
    if (has)
        sb_printf(b, "\"size\": %" PRIu64, size);
    else
        sb_puts(b, "\"size\": null");
    sb_puts(b, after);
}

int cdd_manifest_to_json(const struct cdd_manifest *m, char **out)
{
    struct sbuf b = {NULL, 0, 0, 0};
    const char *src = m && m->source ? m->source : "(manifest)";
    *out = NULL;
    if (!m || !m->product || !m->version || !m->archive.filename ||
        !cdd_platform_name(m->platform))
        return cdd_fail(CDD_E_MANIFEST, src, 0,
                        "(root): cannot write an incomplete manifest");
    for (size_t i = 0; i < m->n_files; i++) {
        const struct cdd_mfile *f = &m->files[i];
        if (!f->path || !cdd_role_name(f->role) ||
            (f->role == CDD_ROLE_SYMLINK && !f->target))
            return cdd_fail(CDD_E_MANIFEST, src, 0,
                            "files[%zu]: cannot write an incomplete entry", i);
    }

    sb_printf(&b, "{\n  \"schema_version\": %d,\n", m->schema_version);
    kv_str(&b, "  ", "product", m->product, ",\n");
    kv_str(&b, "  ", "version", m->version, ",\n");
    sb_printf(&b, "  \"cuda_major\": %d,\n", m->cuda_major);
    kv_str(&b, "  ", "platform", cdd_platform_name(m->platform), ",\n");

    sb_puts(&b, "  \"archive\": {\n");
    kv_str(&b, "    ", "filename", m->archive.filename, ",\n");
    if (m->archive.n_urls) {
        sb_puts(&b, "    \"url\": [\n");
        for (size_t i = 0; i < m->archive.n_urls; i++) {
            sb_puts(&b, "      ");
            sb_str(&b, m->archive.urls[i]);
            sb_puts(&b, i + 1 < m->archive.n_urls ? ",\n" : "\n");
        }
        sb_puts(&b, "    ],\n");
    }
    sb_puts(&b, "    ");
    kv_sha(&b, "sha256", m->archive.has_sha256, m->archive.sha256, ",\n    ");
    kv_size(&b, m->archive.has_size, m->archive.size, ",\n");
    sb_printf(&b, "    \"strip_components\": %d\n  },\n",
              m->archive.strip_components);

    if (m->redistrib_url)
        kv_str(&b, "  ", "redistrib_url", m->redistrib_url, ",\n");
    sb_printf(&b, "  \"files_exact\": %s,\n", m->files_exact ? "true" : "false");

    sb_puts(&b, "  \"files\": [\n");
    for (size_t i = 0; i < m->n_files; i++) {
        const struct cdd_mfile *f = &m->files[i];
        sb_puts(&b, "    {");
        kv_str(&b, "", "path", f->path, ", ");
        kv_str(&b, "", "role", cdd_role_name(f->role), ", ");
        if (f->role == CDD_ROLE_SYMLINK) {
            kv_str(&b, "", "target", f->target, "}");
        } else {
            kv_sha(&b, "sha256", f->has_sha256, f->sha256, ", ");
            kv_size(&b, f->has_size, f->size, "}");
        }
        sb_puts(&b, i + 1 < m->n_files ? ",\n" : "\n");
    }
    sb_puts(&b, m->has_verify ? "  ],\n" : "  ]\n");

    if (m->has_verify) {
        const struct cdd_mverify *v = &m->verify;
        sb_printf(&b, "  \"verify\": {\n    \"version_number\": %ld,\n",
                  v->version_number);
        kv_str(&b, "    ", "library", v->library ? v->library : "", ",\n");
        kv_str(&b, "    ", "version_symbol",
               v->version_symbol ? v->version_symbol : "", ",\n");
        if (v->cudart_symbol)
            kv_str(&b, "    ", "cudart_symbol", v->cudart_symbol, ",\n");
        sb_printf(&b, "    \"mismatch_status\": %ld,\n", v->mismatch_status);
        if (v->n_sublibs == 0) {
            sb_puts(&b, "    \"sublibraries\": []\n");
        } else {
            sb_puts(&b, "    \"sublibraries\": [\n");
            for (size_t i = 0; i < v->n_sublibs; i++) {
                sb_puts(&b, "      {");
                kv_str(&b, "", "library",
                       v->sublibs[i].library ? v->sublibs[i].library : "", ", ");
                if (v->sublibs[i].check_symbol)
                    kv_str(&b, "", "check_symbol", v->sublibs[i].check_symbol,
                           i + 1 < v->n_sublibs ? "},\n" : "}\n");
                else
                    sb_printf(&b, "\"check_symbol\": null%s",
                              i + 1 < v->n_sublibs ? "},\n" : "}\n");
            }
            sb_puts(&b, "    ]\n");
        }
        sb_puts(&b, "  }\n");
    }
    sb_puts(&b, "}\n");

    if (b.nomem) {
        free(b.p);
        return cdd_fail(CDD_E_NOMEM, src, 0, NULL);
    }
    *out = b.p;
    return 0;
}
