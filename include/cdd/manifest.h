/* The manifest: what an archive holds (entries and their roles), where to get
 * it, and what verification expects. Loaded from JSON with strict validation
 * (every fault named by file and JSON path), written back by `manifest
 * create`, and shipped inside the executable. docs/manifest.md is the format's
 * reference. */
#ifndef CDD_MANIFEST_H
#define CDD_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"
#include "cdd/platform.h"

#define CDD_MANIFEST_SCHEMA 1

enum cdd_role {
    CDD_ROLE_RUNTIME = 0, /* shared library (.dll, .so.X.Y.Z) */
    CDD_ROLE_HEADER,      /* .h */
    CDD_ROLE_IMPORT_LIB,  /* .lib (Windows) */
    CDD_ROLE_STATIC_LIB,  /* .a */
    CDD_ROLE_LICENSE,     /* LICENSE */
    CDD_ROLE_SYMLINK,     /* symlink, target in the same folder */
    CDD_ROLE_ACTIVATION,  /* a conda activation script `env --write-activation`
                             wrote (receipts only, never in a manifest) */
    CDD_ROLE_COUNT
};

struct cdd_mfile {
    char *path;           /* inside the archive, after strip_components */
    enum cdd_role role;
    int has_sha256;
    uint8_t sha256[CDD_SHA256_LEN];
    int has_size;
    uint64_t size;
    char *target;         /* symlinks only: plain name in the same folder */
};

struct cdd_msublib {
    char *library;        /* archive path of the sub-library */
    char *check_symbol;   /* e.g. cudnnOpsInferVersionCheck */
};

/* The verify section (optional in the file; present == has_verify). */
struct cdd_mverify {
    long version_number;  /* what cudnnGetVersion() returns: 8500, 91400 */
    char *library;        /* archive path of the main library */
    char *version_symbol; /* "cudnnGetVersion" */
    char *cudart_symbol;  /* "cudnnGetCudartVersion", may be NULL */
    struct cdd_msublib *sublibs;
    size_t n_sublibs;
    long mismatch_status; /* status a check returns on mismatch: 14 / 1002 */
};

/* An optional component (docs/manifest.md, Optional components): a file
 * the cuDNN archive does not ship but its libraries need (zlibwapi.dll for
 * cuDNN 8.3-9.1 on Windows), taken from an archive of its own, pinned by
 * its own sha256. `install --with NAME` adds it to the same transaction and
 * receipt as the cuDNN files. */
struct cdd_mcomponent {
    char *name;           /* identifier: "zlibwapi" */
    char *summary;        /* one line, may be NULL */
    int *cuda_majors;     /* CUDA majors it applies to (the manifest's is
                             among them) */
    size_t n_cuda_majors;
    char *cudnn_min;      /* cuDNN versions it applies to, inclusive, as
                             "8.3" or "9.1" (the manifest's is in range) */
    char *cudnn_max;
    /* Its archive as a manifest of its own: product = name, the parent's
     * platform and CUDA major, archive.* from the component (sha256
     * required), files = the one entry taken (role runtime), files_exact
     * false: the archive's other members are read and checked, not
     * installed. Lets obtain and extract serve it unchanged. */
    struct cdd_manifest *m;
};

struct cdd_manifest {
    char *source;         /* file name or "builtin:<stem>", for messages */
    char *name;           /* stem: cudnn-8.5.0.96-cuda11-linux-x86_64 */
    uint8_t doc_sha256[CDD_SHA256_LEN]; /* of the JSON text as loaded */
    int schema_version;
    char *product;        /* "cudnn" */
    char *version;        /* "8.5.0.96" */
    int cuda_major;
    enum cdd_platform platform;
    struct {
        char *filename;
        char **urls;
        size_t n_urls;
        int has_sha256;
        uint8_t sha256[CDD_SHA256_LEN];
        int has_size;
        uint64_t size;
        int strip_components;
    } archive;
    char *redistrib_url;  /* NVIDIA redistrib_<v>.json, may be NULL */
    int files_exact;      /* default 1 */
    struct cdd_mfile *files;
    size_t n_files;
    int has_verify;
    struct cdd_mverify verify;
    struct cdd_mcomponent *components; /* optional components */
    size_t n_components;
};

/* Parse and validate a manifest from memory. 'source' names it in messages
 * (the file name). On failure returns CDD_E_MANIFEST with a message of the
 * form "<json path>: <fault>" and the source as the error's path. */
int cdd_manifest_parse(const char *text, size_t len, const char *source,
                       struct cdd_manifest **out);
int cdd_manifest_load_file(const char *path, struct cdd_manifest **out);
void cdd_manifest_free(struct cdd_manifest *m);

/* Serialise (pretty JSON, trailing newline). The result parses back to an
 * equal manifest. Caller frees *out. */
int cdd_manifest_to_json(const struct cdd_manifest *m, char **out);
/* The same manifest as a document of the JSON writer (jsonw.h), closed
 * and not finished, for a report to take as a member: 0, or the errors of
 * cdd_manifest_to_json (an incomplete manifest; *out NULL). */
struct cdd_jw;
int cdd_manifest_jw(const struct cdd_manifest *m, struct cdd_jw **out);

/* Find a manifest: an existing file path, or the stem of a shipped one
 * ("cudnn-8.5.0.96-cuda11-linux-x86_64", with or without ".json"). NULL
 * name: the default shipped manifest for the running platform. */
int cdd_manifest_find(const char *name, struct cdd_manifest **out);

/* Shipped manifests compiled into the executable. */
struct cdd_builtin_manifest {
    const char *name;    /* file stem */
    const char *text;
    size_t len;
};
extern const struct cdd_builtin_manifest cdd_builtin_manifests[];
extern const size_t cdd_builtin_manifest_count;

/* Lookups. */
const struct cdd_mcomponent *cdd_manifest_component(const struct cdd_manifest *m,
                                                    const char *name);
const struct cdd_mfile *cdd_manifest_file(const struct cdd_manifest *m,
                                          const char *path);
const char *cdd_role_name(enum cdd_role r);
int cdd_role_parse(const char *s, enum cdd_role *out);
/* Role of an archive path by the layout rules (used for entries of a
 * files_exact:false manifest that the manifest does not list, and by
 * `manifest create`): include/ *.h -> header; lib/ *.a -> static_lib;
 * Windows bin/ *.dll and bin/x64/ *.dll (cuDNN >= 9.23) -> runtime,
 * lib/x64/ *.lib -> import_lib; Linux lib/
 * *.so* -> runtime (or symlink when is_symlink); LICENSE -> license.
 * Returns 0 and *out, or -1 when the path fits no rule. */
int cdd_role_from_path(enum cdd_platform p, const char *path, int is_symlink,
                       enum cdd_role *out);

#endif
