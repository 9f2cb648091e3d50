/* Manifest writer: serialises a struct cdd_manifest to the canonical text of
 * docs/manifest.md — keys in schema order, two-space indentation, one line
 * per file entry — so that `manifest create` output diffs well and
 * parse(to_json(m)) equals m. The text is laid out by the JSON writer
 * (jsonw.h, CDD_JW_MANIFEST). */
#include "cdd/manifest.h"

#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/jsonw.h"

static void sha_or_null(struct cdd_jw *w, const char *key, int has,
                        const uint8_t d[CDD_SHA256_LEN])
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    if (!has) {
        cdd_jw_null(w, key);
        return;
    }
    cdd_hex_encode(d, CDD_SHA256_LEN, hex);
    cdd_jw_str(w, key, hex);
}

static void size_or_null(struct cdd_jw *w, int has, uint64_t size)
{
    if (has)
        cdd_jw_uint(w, "size", size);
    else
        cdd_jw_null(w, "size");
}

static void write_verify(struct cdd_jw *w, const struct cdd_mverify *v)
{
    cdd_jw_object(w, "verify");
    cdd_jw_int(w, "version_number", v->version_number);
    cdd_jw_str(w, "library", v->library ? v->library : "");
    cdd_jw_str(w, "version_symbol", v->version_symbol ? v->version_symbol : "");
    if (v->cudart_symbol)
        cdd_jw_str(w, "cudart_symbol", v->cudart_symbol);
    cdd_jw_int(w, "mismatch_status", v->mismatch_status);
    cdd_jw_array(w, "sublibraries");
    for (size_t i = 0; i < v->n_sublibs; i++) {
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "library",
                   v->sublibs[i].library ? v->sublibs[i].library : "");
        cdd_jw_str(w, "check_symbol", v->sublibs[i].check_symbol);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    cdd_jw_end(w);
}

/* Optional components, in the order and shape parse_components() reads. */
static void write_components(struct cdd_jw *w, const struct cdd_manifest *m)
{
    cdd_jw_array(w, "components");
    for (size_t i = 0; i < m->n_components; i++) {
        const struct cdd_mcomponent *k = &m->components[i];
        const struct cdd_manifest *sm = k->m;
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "name", k->name);
        if (k->summary)
            cdd_jw_str(w, "summary", k->summary);
        cdd_jw_array(w, "cuda_majors");
        for (size_t j = 0; j < k->n_cuda_majors; j++)
            cdd_jw_int(w, NULL, k->cuda_majors[j]);
        cdd_jw_end(w);
        cdd_jw_str(w, "cudnn_min", k->cudnn_min);
        cdd_jw_str(w, "cudnn_max", k->cudnn_max);
        cdd_jw_object(w, "archive");
        cdd_jw_str(w, "filename", sm->archive.filename);
        if (sm->archive.n_urls) {
            cdd_jw_array(w, "url");
            for (size_t j = 0; j < sm->archive.n_urls; j++)
                cdd_jw_str(w, NULL, sm->archive.urls[j]);
            cdd_jw_end(w);
        }
        sha_or_null(w, "sha256", sm->archive.has_sha256, sm->archive.sha256);
        size_or_null(w, sm->archive.has_size, sm->archive.size);
        cdd_jw_int(w, "strip_components", sm->archive.strip_components);
        cdd_jw_end(w);
        cdd_jw_object(w, "entry");
        cdd_jw_str(w, "path", sm->files[0].path);
        sha_or_null(w, "sha256", sm->files[0].has_sha256, sm->files[0].sha256);
        size_or_null(w, sm->files[0].has_size, sm->files[0].size);
        cdd_jw_end(w);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
}

int cdd_manifest_jw(const struct cdd_manifest *m, struct cdd_jw **out)
{
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

    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_int(w, "schema_version", m->schema_version);
    cdd_jw_str(w, "product", m->product);
    cdd_jw_str(w, "version", m->version);
    cdd_jw_int(w, "cuda_major", m->cuda_major);
    cdd_jw_str(w, "platform", cdd_platform_name(m->platform));

    cdd_jw_object(w, "archive");
    cdd_jw_str(w, "filename", m->archive.filename);
    if (m->archive.n_urls) {
        cdd_jw_array(w, "url");
        for (size_t i = 0; i < m->archive.n_urls; i++)
            cdd_jw_str(w, NULL, m->archive.urls[i]);
        cdd_jw_end(w);
    }
    sha_or_null(w, "sha256", m->archive.has_sha256, m->archive.sha256);
    size_or_null(w, m->archive.has_size, m->archive.size);
    cdd_jw_int(w, "strip_components", m->archive.strip_components);
    cdd_jw_end(w);

    if (m->redistrib_url)
        cdd_jw_str(w, "redistrib_url", m->redistrib_url);
    cdd_jw_bool(w, "files_exact", m->files_exact);

    cdd_jw_array(w, "files");
    for (size_t i = 0; i < m->n_files; i++) {
        const struct cdd_mfile *f = &m->files[i];
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "path", f->path);
        cdd_jw_str(w, "role", cdd_role_name(f->role));
        if (f->role == CDD_ROLE_SYMLINK) {
            cdd_jw_str(w, "target", f->target);
        } else {
            sha_or_null(w, "sha256", f->has_sha256, f->sha256);
            size_or_null(w, f->has_size, f->size);
        }
        cdd_jw_end(w);
    }
    cdd_jw_end(w);

    if (m->has_verify)
        write_verify(w, &m->verify);
    if (m->n_components)
        write_components(w, m);
    cdd_jw_end(w);
    *out = w;
    return 0;
}

int cdd_manifest_to_json(const struct cdd_manifest *m, char **out)
{
    struct cdd_jw *w = NULL;
    *out = NULL;
    int r = cdd_manifest_jw(m, &w);
    if (!r)
        r = cdd_jw_finish(w, CDD_JW_MANIFEST, out);
    if (r == CDD_E_NOMEM)
        return cdd_fail(CDD_E_NOMEM, m && m->source ? m->source : "(manifest)",
                        0, NULL);
    return r;
}
