/* The release catalog: every cuDNN release NVIDIA has published a
 * redistrib_<label>.json for (manifests/catalog/, compiled in), each
 * archive's platform, CUDA variant, relative path, size and every sha256
 * published for that name, plus per release what the support matrix says
 * (facts.json: CUDA minors, compute capabilities, minimum driver per CUDA
 * major, layout generation). docs/releases.md describes the data and the
 * selection rules.
 *
 *   cdd_catalog_load(NULL, &c)            the compiled-in catalog
 *   cdd_catalog_match(c, &q, &v, &n)      a verdict for every archive
 *   cdd_catalog_best(v, n)                the newest that fits, or NULL
 *
 * Platforms are NVIDIA's strings ("linux-sbsa"): the catalog lists every
 * platform NVIDIA does; only where a manifest is made is a platform mapped
 * to enum cdd_platform. */
#ifndef CDD_CATALOG_H
#define CDD_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"
#include "cdd/manifest.h"

/* CUDNN_DEPLOY_CATALOG=DIR (or --catalog DIR) replaces the compiled-in
 * catalog with the redistrib_*.json and facts.json in DIR (tests, and
 * provisioning with a newer catalog than the binary's). */
#define CDD_CATALOG_ENV "CUDNN_DEPLOY_CATALOG"

/* Bounds of a catalog (passing one: CDD_E_TOOLONG naming it, never a
 * cut). NVIDIA has published some 60 cuDNN releases, one
 * redistrib_<label>.json each; CUDA majors are 1 to 99 ("cuda<major>"
 * keys of facts.json); one archive name has been re-spun once so far. */
#define CDD_CAT_MAX_RELEASES 1024   /* redistrib_*.json in one catalog */
#define CDD_CAT_MAX_CUDA_MAJORS 99  /* variants of a release; drivers */
#define CDD_CAT_MAX_DIGESTS 64      /* sha256s published for one name */

/* One sha256 published for an archive's name: [0] is the one in NVIDIA's
 * current JSON; any others are earlier re-spins (facts.json "respins"). */
struct cdd_cat_digest {
    uint8_t sha256[CDD_SHA256_LEN];
    int has_size;
    uint64_t size;
    char *source;            /* where the digest is published */
};

struct cdd_cat_archive {
    char *platform;          /* NVIDIA's name: "linux-x86_64" */
    char *variant;           /* "cuda12", or from a flat entry's file name:
                                "cuda11", "cuda13.4" */
    int cuda_major;          /* 0: unknown */
    int cuda_minor;          /* the least tree minor it is built for (13.4:
                                4), -1: any */
    char *relative_path;
    const char *filename;    /* the last part of relative_path */
    int has_md5;
    char md5[33];
    struct cdd_cat_digest *digests;
    size_t n_digests;
};

/* What the support matrix says for one CUDA variant of a release. */
struct cdd_cat_variant {
    int cuda_major;
    int minor_lo, minor_hi;  /* CUDA minors listed; -1: unknown */
    int cc_lo, cc_hi;        /* compute capabilities, x10 (75 = 7.5);
                                0: unknown */
    int needs_cc, needs_minor; /* a GPU of cc >= needs_cc needs a tree of
                                  minor >= needs_minor (Blackwell with
                                  CUDA 12.8); 0: no such rule */
};

/* Minimum driver per CUDA major (the same for every release). */
struct cdd_cat_driver {
    int cuda_major;
    char *linux_min;         /* "525.60.13"; NULL: not published */
    char *windows_min;
};

struct cdd_cat_release {
    char *version;           /* "9.13.0.50" */
    int v[4];
    char *label;             /* "9.13.0" (release_label, else the file's) */
    char *date;              /* may be NULL */
    char *source;            /* "builtin:redistrib_9.13.0.json" or a path */
    int has_facts;
    char *layout;            /* layout generation, NULL: unknown */
    char *matrix;            /* the support matrix the facts come from */
    struct cdd_cat_variant *variants;
    size_t n_variants;
    struct cdd_cat_archive *archives;
    size_t n_archives;
};

struct cdd_catalog {
    char *source;            /* "builtin" or the folder */
    struct cdd_cat_release *releases; /* newest first */
    size_t n;
    struct cdd_cat_driver *drivers;
    size_t n_drivers;
};

/* Load the catalog from dir (NULL: $CUDNN_DEPLOY_CATALOG, else the
 * compiled-in one). Every entry must parse (sha256 64 hex digits, size
 * decimal, relative path safe): else CDD_E_MANIFEST naming the file and
 * the JSON path. A release without facts is kept (has_facts 0: the GPU and
 * CUDA-minor checks then say they are unknown). */
int cdd_catalog_load(const char *dir, struct cdd_catalog **out);
/* The compiled-in files (scripts/embed_manifests.cmake): "facts" and
 * "redistrib_<label>" stems. */
extern const struct cdd_builtin_manifest cdd_builtin_catalog[];
extern const size_t cdd_builtin_catalog_count;
void cdd_catalog_free(struct cdd_catalog *c);

/* The release whose version is exactly version, or NULL. */
const struct cdd_cat_release *cdd_catalog_release(const struct cdd_catalog *c,
                                                  const char *version);
/* The variant facts of r for cuda_major, or NULL. */
const struct cdd_cat_variant *cdd_cat_variant_of(const struct cdd_cat_release *r,
                                                 int cuda_major);
/* The minimum driver for cuda_major on a windows-* (windows != 0) or other
 * platform, or NULL when not known. */
const char *cdd_catalog_driver_min(const struct cdd_catalog *c, int cuda_major,
                                   int windows);
/* Archives of every release whose file name is name (for re-spins and for
 * an archive given by file), or NULL; *rel its release. */
const struct cdd_cat_archive *cdd_catalog_by_filename(
    const struct cdd_catalog *c, const char *name,
    const struct cdd_cat_release **rel);
/* Does sha256 match one of a's digests? Its index, or -1. */
int cdd_cat_digest_index(const struct cdd_cat_archive *a,
                         const uint8_t *sha256);

/* ---- selection (catalog_select.c) ------------------------------------- */

/* What to fit. Every field may be left out (NULL / 0 / -1): not checked. */
struct cdd_cat_query {
    const char *want;        /* "9", "9.13", "9.13.0", "9.13.0.50",
                                "latest" (or NULL): any */
    const char *platform;    /* NVIDIA's name */
    int cuda_major;          /* the tree's; 0: any */
    int cuda_minor;          /* -1: unknown */
    const int *cc;           /* every GPU's compute capability x10 */
    size_t n_cc;
    const char *driver;      /* "580.65.06"; NULL: not checked */
};

/* Why an archive does not fit; CDD_CAT_FITS when it does. A verdict names
 * every reason that applies, in this order. */
enum cdd_cat_why {
    CDD_CAT_FITS = 0,
    CDD_CAT_VERSION = 1 << 0,  /* not the version asked for */
    CDD_CAT_PLATFORM = 1 << 1,
    CDD_CAT_CUDA = 1 << 2,     /* CUDA major, or a minor below the range */
    CDD_CAT_GPU = 1 << 3,      /* a GPU outside the compute capabilities */
    CDD_CAT_DRIVER = 1 << 4    /* driver older than the minimum */
};

struct cdd_cat_verdict {
    const struct cdd_cat_release *rel;
    const struct cdd_cat_archive *a;
    unsigned why;            /* CDD_CAT_* bits; 0: fits */
    char *detail;            /* the reasons, or for a fit what was checked
                                and what was not ("no facts: GPU not
                                checked"); malloc'd */
};

/* One verdict per archive of every release, newest release first. */
int cdd_catalog_match(const struct cdd_catalog *c,
                      const struct cdd_cat_query *q,
                      struct cdd_cat_verdict **out, size_t *n);
/* The first fit (the newest release; within it, the archive built for the
 * highest CUDA minor that fits), or NULL. */
const struct cdd_cat_verdict *cdd_catalog_best(const struct cdd_cat_verdict *v,
                                               size_t n);
void cdd_cat_verdicts_free(struct cdd_cat_verdict *v, size_t n);
/* The names of a why bit ("cuda", "gpu"...), for JSON. */
const char *cdd_cat_why_name(unsigned bit);

/* "9", "9.13", "9.13.0.50" or "latest": 0, else CDD_E_USAGE. */
int cdd_cat_want_check(const char *want);
/* Compare dotted numeric versions ("525.60.13" vs "580.65.06"): <0, 0, >0. */
int cdd_cat_vercmp(const char *a, const char *b);
/* "8.6" -> 86; -1 when not a compute capability. */
int cdd_cat_cc_parse(const char *s);

#endif
