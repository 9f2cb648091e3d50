/* SBOMs from the receipt (sbom.h): CycloneDX 1.6 and SPDX 2.3 JSON, both
 * written with the one JSON writer (jsonw.c). Nothing here reads the clock
 * or a random source: every value comes from the receipt, so one tree gives
 * one document, byte for byte. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/jsonw.h"
#include "cdd/profile.h"
#include "cdd/sbom.h"
#include "cdd/strbuf.h"

#define SUPPLIER "NVIDIA Corporation"
#define LICENSE_REF "LicenseRef-NVIDIA-cuDNN"

struct ctx {
    const struct cdd_receipt *r;
    const struct cdd_verified *v; /* the verify record of this receipt, or
                                     NULL: nothing is said of verification */
    char digest[CDD_SHA256_HEX]; /* fixed: sha256 hex of the receipt */
    char uuid[40];               /* fixed: a UUID, from digest */
    char archive_hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    char variant[16];            /* fixed: "cuda" and an int */
    int nomem;                   /* a formatted value could not be made */
};

/* A formatted string value, allocated (paths have no fixed bound). */
static void jw_fmt(struct ctx *c, struct cdd_jw *w, const char *key,
                   const char *fmt, ...) CDD_PRINTF(4, 5);

static void jw_fmt(struct ctx *c, struct cdd_jw *w, const char *key,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!s) {
        c->nomem = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    cdd_jw_str(w, key, s);
    free(s);
}

/* A UUID in the shape of RFC 4122's name-based version 5 (version and
 * variant bits set, as the RFC that CycloneDX's serialNumber cites asks),
 * its other bits taken from the receipt's sha256 instead of SHA-1. */
static void make_uuid(const char *hex, char *out)
{
    char h[33]; /* fixed: 32 hex digits */
    memcpy(h, hex, 32);
    h[32] = '\0';
    h[12] = '5';
    static const char variant[] = "89ab";
    int v = (h[16] >= 'a' ? h[16] - 'a' + 10 : h[16] - '0') & 3;
    h[16] = variant[v];
    snprintf(out, 40, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16,
             h + 20);
}

static int ctx_init(struct ctx *c, const struct cdd_receipt *r)
{
    uint8_t d[CDD_SHA256_LEN];
    memset(c, 0, sizeof *c);
    c->r = r;
    /* The receipt as cudnn-deploy writes it (the same records hash the
     * same, whatever whitespace the file on disk has), less its
     * transaction id: that names the tree's backup folder, not what was
     * installed, so two installs of one archive with one --mtime into
     * fresh trees describe themselves in the same bytes (an image layer
     * that carries its SBOM stays reproducible, docs/containers.md). */
    struct cdd_receipt copy = *r;
    copy.txn_id = NULL;
    int rc = cdd_receipt_digest(&copy, d);
    if (rc)
        return rc;
    cdd_hex_encode(d, CDD_SHA256_LEN, c->digest);
    make_uuid(c->digest, c->uuid);
    cdd_hex_encode(r->archive_sha256, CDD_SHA256_LEN, c->archive_hex);
    snprintf(c->variant, sizeof c->variant, "cuda%d", r->cuda_major);
    return 0;
}

/* The file a symlink's chain ends at (links name a file in their own
 * folder), or NULL past 40 links or out of the receipt. */
static const struct cdd_rfile_entry *link_end(const struct cdd_receipt *r,
                                              const struct cdd_rfile_entry *f)
{
    for (int hops = 0; f && f->is_symlink && hops < 40; hops++) {
        const char *slash = strrchr(f->path, '/');
        size_t dl = slash ? (size_t)(slash - f->path) + 1 : 0;
        size_t tl = strlen(f->link_target);
        char *p = malloc(dl + tl + 1);
        if (!p)
            return NULL;
        memcpy(p, f->path, dl);
        memcpy(p + dl, f->link_target, tl + 1);
        f = cdd_receipt_file(r, p);
        free(p);
    }
    return f && !f->is_symlink ? f : NULL;
}

static void prop(struct cdd_jw *w, const char *name, const char *value)
{
    if (!value)
        return;
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "name", name);
    cdd_jw_str(w, "value", value);
    cdd_jw_end(w);
}

static void prop_u(struct cdd_jw *w, const char *name, unsigned long long v)
{
    char buf[24]; /* fixed: a 64-bit number */
    snprintf(buf, sizeof buf, "%llu", v);
    prop(w, name, buf);
}

static void sha_list(struct cdd_jw *w, const char *key, const char *alg_key,
                     const char *alg, const char *val_key, const char *hex)
{
    cdd_jw_array(w, key);
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, alg_key, alg);
    cdd_jw_str(w, val_key, hex);
    cdd_jw_end(w);
    cdd_jw_end(w);
}

/* ---- CycloneDX 1.6 -------------------------------------------------------- */

static void cdx_tool(struct cdd_jw *w, const struct cdd_receipt *r)
{
    cdd_jw_object(w, "tools");
    cdd_jw_array(w, "components");
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "type", "application");
    cdd_jw_str(w, "name", "cudnn-deploy");
    cdd_jw_str(w, "version", r->tool_version ? r->tool_version : "unknown");
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_end(w);
}

/* "pass: 7 passed, 0 warnings, 0 failed, 1 skipped" (allocated). */
static char *layer_text(const struct cdd_vlayer *l)
{
    const char *fmt = "%s: %llu passed, %llu warnings, %llu failed, "
                      "%llu skipped";
    int n = snprintf(NULL, 0, fmt, l->outcome,
                     (unsigned long long)l->passed,
                     (unsigned long long)l->warned,
                     (unsigned long long)l->failed,
                     (unsigned long long)l->skipped);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        snprintf(s, (size_t)n + 1, fmt, l->outcome,
                 (unsigned long long)l->passed,
                 (unsigned long long)l->warned,
                 (unsigned long long)l->failed,
                 (unsigned long long)l->skipped);
    return s;
}

/* The verify record (verified.h), when it is this receipt's: the outcome,
 * the level, each layer's counts, the tool that ran it. Not its time: the
 * document stays a function of what is installed and what was proved. */
static void cdx_verify(struct cdd_jw *w, struct ctx *c)
{
    const struct cdd_verified *v = c->v;
    if (!v)
        return;
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    cdd_hex_encode(v->receipt_sha256, CDD_SHA256_LEN, hex);
    prop(w, "cudnn-deploy:verify.outcome", v->outcome);
    prop(w, "cudnn-deploy:verify.level", v->level);
    prop(w, "cudnn-deploy:verify.manifest", v->manifest_name);
    prop(w, "cudnn-deploy:verify.tool_version", v->tool_version);
    prop(w, "cudnn-deploy:verify.receipt_sha256", hex);
    for (size_t i = 0; i < v->n_layers; i++) {
        /* The layer's name comes from the verify record: whole. */
        char *name = cdd_aprintf(CDD_TEXT_MAX, "SBOM property name",
                                 "cudnn-deploy:verify.%s", v->layers[i].name);
        char *text = layer_text(&v->layers[i]);
        if (!text || !name)
            c->nomem = 1;
        else
            prop(w, name, text);
        free(name);
        free(text);
    }
}

/* SPDX: one clause of the package comment ("" without a record). */
static char *spdx_verify(struct ctx *c)
{
    const struct cdd_verified *v = c->v;
    if (!v)
        return strdup("");
    size_t n = 128 + strlen(v->outcome) + strlen(v->level) +
               strlen(v->tool_version) + strlen(v->manifest_name);
    for (size_t i = 0; i < v->n_layers; i++)
        n += strlen(v->layers[i].name) + strlen(v->layers[i].outcome) + 4;
    char *s = malloc(n);
    if (!s)
        return NULL;
    size_t at = (size_t)snprintf(s, n, "; verified by cudnn-deploy %s "
                                       "(level %s, manifest %s): %s (",
                                 v->tool_version, v->level, v->manifest_name,
                                 v->outcome);
    for (size_t i = 0; i < v->n_layers && at < n; i++)
        at += (size_t)snprintf(s + at, n - at, "%s%s %s", i ? ", " : "",
                               v->layers[i].name, v->layers[i].outcome);
    if (at < n)
        snprintf(s + at, n - at, ")");
    return s;
}

static void cdx_archive(struct cdd_jw *w, struct ctx *c)
{
    const struct cdd_receipt *r = c->r;
    cdd_jw_object(w, "component");
    cdd_jw_str(w, "type", "library");
    cdd_jw_str(w, "bom-ref", "cudnn");
    cdd_jw_object(w, "supplier");
    cdd_jw_str(w, "name", SUPPLIER);
    cdd_jw_end(w);
    cdd_jw_str(w, "name", r->product);
    cdd_jw_str(w, "version", r->version);
    cdd_jw_str(w, "description", "NVIDIA cuDNN, installed by cudnn-deploy");
    sha_list(w, "hashes", "alg", "SHA-256", "content", c->archive_hex);
    cdd_jw_array(w, "licenses");
    cdd_jw_object(w, NULL);
    cdd_jw_object(w, "license");
    cdd_jw_str(w, "name", CDD_SBOM_LICENSE_NAME);
    cdd_jw_str(w, "url", CDD_SBOM_LICENSE_URL);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_end(w);
    if (r->archive_url) {
        cdd_jw_array(w, "externalReferences");
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "type", "distribution");
        cdd_jw_str(w, "url", r->archive_url);
        sha_list(w, "hashes", "alg", "SHA-256", "content", c->archive_hex);
        cdd_jw_end(w);
        cdd_jw_end(w);
    }
    cdd_jw_array(w, "properties");
    prop(w, "cudnn-deploy:platform", r->platform);
    prop(w, "cudnn-deploy:cuda_variant", c->variant);
    prop(w, "cudnn-deploy:archive.filename", r->archive_filename);
    prop_u(w, "cudnn-deploy:archive.size", r->archive_size);
    prop(w, "cudnn-deploy:archive.pinned", r->archive_pinned ? "true"
                                                             : "false");
    prop(w, "cudnn-deploy:archive.pin_source", r->pin_source);
    prop(w, "cudnn-deploy:manifest", r->manifest_name);
    prop(w, "cudnn-deploy:profile",
         cdd_profile_name((enum cdd_profile)r->profile));
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        if (r->omitted[i]) {
            char name[64]; /* fixed: a prefix and one of our role names */
            snprintf(name, sizeof name, "cudnn-deploy:omitted.%s",
                     cdd_role_name((enum cdd_role)i));
            prop_u(w, name, r->omitted[i]);
        }
    prop(w, "cudnn-deploy:target.kind", r->target_kind);
    prop(w, "cudnn-deploy:target.layout", r->layout);
    prop(w, "cudnn-deploy:target.cuda_version", r->cuda_version);
    cdx_verify(w, c);
    cdd_jw_end(w);
    cdd_jw_end(w);
}

static void cdx_file(struct cdd_jw *w, struct ctx *c,
                     const struct cdd_rfile_entry *f)
{
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "type", "file");
    jw_fmt(c, w, "bom-ref", "file:%s", f->path);
    cdd_jw_str(w, "name", f->path);
    if (!f->is_symlink) {
        char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        cdd_hex_encode(f->sha256, CDD_SHA256_LEN, hex);
        sha_list(w, "hashes", "alg", "SHA-256", "content", hex);
    }
    cdd_jw_array(w, "properties");
    prop(w, "cudnn-deploy:role", cdd_role_name(f->role));
    if (f->is_symlink)
        prop(w, "cudnn-deploy:symlink", f->link_target);
    else
        prop_u(w, "cudnn-deploy:size", f->size);
    if (f->preexisting)
        prop(w, "cudnn-deploy:preexisting", "true");
    cdd_jw_end(w);
    cdd_jw_end(w);
}

static int cdx_write(struct ctx *c, char **out)
{
    const struct cdd_receipt *r = c->r;
    char serial[64]; /* fixed: "urn:uuid:" and a UUID */
    snprintf(serial, sizeof serial, "urn:uuid:%s", c->uuid);
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "$schema", "http://cyclonedx.org/schema/bom-1.6.schema.json");
    cdd_jw_str(w, "bomFormat", "CycloneDX");
    cdd_jw_str(w, "specVersion", "1.6");
    cdd_jw_str(w, "serialNumber", serial);
    cdd_jw_int(w, "version", 1);
    cdd_jw_object(w, "metadata");
    if (r->installed_at)
        cdd_jw_str(w, "timestamp", r->installed_at);
    cdx_tool(w, r);
    cdx_archive(w, c);
    cdd_jw_end(w);
    cdd_jw_array(w, "components");
    for (size_t i = 0; i < r->n_components; i++) {
        const struct cdd_rcomponent *k = &r->components[i];
        char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        cdd_hex_encode(k->archive_sha256, CDD_SHA256_LEN, hex);
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "type", "library");
        jw_fmt(c, w, "bom-ref", "component:%s", k->name);
        cdd_jw_str(w, "name", k->name);
        cdd_jw_str(w, "scope", "optional");
        sha_list(w, "hashes", "alg", "SHA-256", "content", hex);
        cdd_jw_array(w, "properties");
        prop(w, "cudnn-deploy:archive.filename", k->archive_filename);
        prop(w, "cudnn-deploy:optional_component", "true");
        cdd_jw_end(w);
        cdd_jw_end(w);
    }
    for (size_t i = 0; i < r->n_files; i++)
        cdx_file(w, c, &r->files[i]);
    cdd_jw_end(w);
    cdd_jw_array(w, "dependencies");
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "ref", "cudnn");
    cdd_jw_array(w, "dependsOn");
    for (size_t i = 0; i < r->n_components; i++)
        jw_fmt(c, w, NULL, "component:%s", r->components[i].name);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_end(w);
    return cdd_jw_finish(w, CDD_JW_MANIFEST, out);
}

/* ---- SPDX 2.3 --------------------------------------------------------------- */

static void spdx_rel(struct cdd_jw *w, const char *a, const char *type,
                     const char *b)
{
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "spdxElementId", a);
    cdd_jw_str(w, "relationshipType", type);
    cdd_jw_str(w, "relatedSpdxElement", b);
    cdd_jw_end(w);
}

static void spdx_package(struct cdd_jw *w, struct ctx *c)
{
    const struct cdd_receipt *r = c->r;
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "SPDXID", "SPDXRef-Package-cudnn");
    cdd_jw_str(w, "name", r->product);
    cdd_jw_str(w, "versionInfo", r->version);
    cdd_jw_str(w, "supplier", "Organization: " SUPPLIER);
    cdd_jw_str(w, "downloadLocation",
               r->archive_url ? r->archive_url : "NOASSERTION");
    if (r->archive_filename)
        cdd_jw_str(w, "packageFileName", r->archive_filename);
    /* The installed files are listed (and hashed) below, but an SPDX 2.3
     * verification code needs SHA-1s the receipt does not hold. */
    cdd_jw_bool(w, "filesAnalyzed", 0);
    sha_list(w, "checksums", "algorithm", "SHA256", "checksumValue",
             c->archive_hex);
    cdd_jw_str(w, "licenseConcluded", LICENSE_REF);
    cdd_jw_str(w, "licenseDeclared", LICENSE_REF);
    cdd_jw_str(w, "copyrightText", "NOASSERTION");
    cdd_jw_str(w, "primaryPackagePurpose", "LIBRARY");
    cdd_jw_array(w, "externalRefs");
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "referenceCategory", "PACKAGE-MANAGER");
    cdd_jw_str(w, "referenceType", "purl");
    jw_fmt(c, w, "referenceLocator", "pkg:generic/nvidia/%s@%s?platform=%s&cuda=%d",
           r->product, r->version, r->platform, r->cuda_major);
    cdd_jw_end(w);
    cdd_jw_end(w);
    size_t n_omitted = 0;
    for (size_t i = 0; i < CDD_ROLE_COUNT; i++)
        n_omitted += r->omitted[i];
    char *verified = spdx_verify(c);
    if (!verified)
        c->nomem = 1;
    jw_fmt(c, w, "comment",
             "platform %s, CUDA variant %s, archive pinned: %s (%s); "
             "installed by cudnn-deploy with profile %s (%zu archive entries "
             "left out) into a %s tree (layout %s, CUDA %s)%s",
             r->platform, c->variant, r->archive_pinned ? "yes" : "no",
             r->pin_source ? r->pin_source : "?",
             cdd_profile_name((enum cdd_profile)r->profile), n_omitted,
             r->target_kind, r->layout,
             r->cuda_version ? r->cuda_version : "unknown",
             verified ? verified : "");
    free(verified);
    cdd_jw_end(w);
    for (size_t i = 0; i < r->n_components; i++) {
        const struct cdd_rcomponent *k = &r->components[i];
        char id[128], hex[CDD_SHA256_HEX]; /* fixed: an id number, hex */
        snprintf(id, sizeof id, "SPDXRef-Component-%zu", i + 1);
        cdd_hex_encode(k->archive_sha256, CDD_SHA256_LEN, hex);
        cdd_jw_object(w, NULL);
        cdd_jw_str(w, "SPDXID", id);
        cdd_jw_str(w, "name", k->name);
        cdd_jw_str(w, "downloadLocation", "NOASSERTION");
        cdd_jw_str(w, "packageFileName", k->archive_filename);
        cdd_jw_bool(w, "filesAnalyzed", 0);
        sha_list(w, "checksums", "algorithm", "SHA256", "checksumValue", hex);
        cdd_jw_str(w, "licenseConcluded", "NOASSERTION");
        cdd_jw_str(w, "licenseDeclared", "NOASSERTION");
        cdd_jw_str(w, "copyrightText", "NOASSERTION");
        cdd_jw_str(w, "comment", "optional component (install --with)");
        cdd_jw_end(w);
    }
}

static void spdx_file(struct cdd_jw *w, struct ctx *c, size_t i)
{
    const struct cdd_rfile_entry *f = &c->r->files[i];
    const struct cdd_rfile_entry *end = link_end(c->r, f);
    char id[48], hex[CDD_SHA256_HEX]; /* fixed: an id number, sha256 hex */
    snprintf(id, sizeof id, "SPDXRef-File-%zu", i + 1);
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "SPDXID", id);
    jw_fmt(c, w, "fileName", "./%s", f->path);
    cdd_jw_array(w, "fileTypes");
    cdd_jw_str(w, NULL, f->role == CDD_ROLE_HEADER    ? "SOURCE"
                        : f->role == CDD_ROLE_LICENSE ? "TEXT"
                                                      : "BINARY");
    cdd_jw_end(w);
    /* A symlink is hashed as what reading it gives: the file its chain ends
     * at (an SPDX file needs a checksum); the comment says so. */
    if (end) {
        cdd_hex_encode(end->sha256, CDD_SHA256_LEN, hex);
        sha_list(w, "checksums", "algorithm", "SHA256", "checksumValue", hex);
    } else {
        cdd_jw_array(w, "checksums");
        cdd_jw_end(w); /* an unresolved link: invalid on purpose, never
                          silently hashed as something else */
    }
    cdd_jw_str(w, "licenseConcluded", LICENSE_REF);
    cdd_jw_str(w, "copyrightText", "NOASSERTION");
    if (f->is_symlink)
        jw_fmt(c, w, "comment", "role %s; symlink to %s",
               cdd_role_name(f->role), f->link_target);
    else
        jw_fmt(c, w, "comment", "role %s; %llu bytes",
               cdd_role_name(f->role), (unsigned long long)f->size);
    cdd_jw_end(w);
}

static int spdx_write(struct ctx *c, char **out)
{
    const struct cdd_receipt *r = c->r;
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "spdxVersion", "SPDX-2.3");
    cdd_jw_str(w, "dataLicense", "CC0-1.0");
    cdd_jw_str(w, "SPDXID", "SPDXRef-DOCUMENT");
    jw_fmt(c, w, "name", "%s-%s-%s-%s", r->product, r->version, c->variant,
           r->platform);
    jw_fmt(c, w, "documentNamespace",
           "https://spdx.org/spdxdocs/cudnn-deploy/%s-%s-%s-%s-%s",
           r->product, r->version, c->variant, r->platform, c->uuid);
    cdd_jw_object(w, "creationInfo");
    cdd_jw_str(w, "created",
               r->installed_at ? r->installed_at : "1970-01-01T00:00:00Z");
    cdd_jw_array(w, "creators");
    jw_fmt(c, w, NULL, "Tool: cudnn-deploy-%s",
           r->tool_version ? r->tool_version : "unknown");
    cdd_jw_str(w, NULL, "Organization: " SUPPLIER);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_array(w, "documentDescribes");
    cdd_jw_str(w, NULL, "SPDXRef-Package-cudnn");
    cdd_jw_end(w);
    cdd_jw_array(w, "packages");
    spdx_package(w, c);
    cdd_jw_end(w);
    cdd_jw_array(w, "files");
    for (size_t i = 0; i < r->n_files; i++)
        spdx_file(w, c, i);
    cdd_jw_end(w);
    cdd_jw_array(w, "hasExtractedLicensingInfos");
    cdd_jw_object(w, NULL);
    cdd_jw_str(w, "licenseId", LICENSE_REF);
    cdd_jw_str(w, "name", CDD_SBOM_LICENSE_NAME);
    cdd_jw_str(w, "extractedText",
               "The cuDNN archive's LICENSE file: " CDD_SBOM_LICENSE_NAME);
    cdd_jw_array(w, "seeAlsos");
    cdd_jw_str(w, NULL, CDD_SBOM_LICENSE_URL);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_end(w);
    cdd_jw_array(w, "relationships");
    spdx_rel(w, "SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-cudnn");
    for (size_t i = 0; i < r->n_files; i++) {
        char id[48]; /* fixed: a prefix and a number */
        snprintf(id, sizeof id, "SPDXRef-File-%zu", i + 1);
        spdx_rel(w, "SPDXRef-Package-cudnn", "CONTAINS", id);
    }
    for (size_t i = 0; i < r->n_components; i++) {
        char id[128]; /* fixed: a prefix and a number */
        snprintf(id, sizeof id, "SPDXRef-Component-%zu", i + 1);
        spdx_rel(w, id, "OPTIONAL_DEPENDENCY_OF", "SPDXRef-Package-cudnn");
    }
    cdd_jw_end(w);
    cdd_jw_end(w);
    return cdd_jw_finish(w, CDD_JW_MANIFEST, out);
}

int cdd_sbom_write(const struct cdd_receipt *r, const struct cdd_verified *v,
                   enum cdd_sbom_format format, char **out)
{
    struct ctx c;
    *out = NULL;
    int rc = ctx_init(&c, r);
    c.v = v;
    if (rc)
        return rc;
    rc = format == CDD_SBOM_SPDX ? spdx_write(&c, out) : cdx_write(&c, out);
    if (!rc && c.nomem) {
        free(*out);
        *out = NULL;
        rc = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    return rc;
}
