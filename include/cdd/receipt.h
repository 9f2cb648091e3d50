/* The receipt (.cudnn-deploy/receipt.json): what an install put into a tree,
 * with hashes, so that status, verify and uninstall know exactly what is
 * ours. Also the deploy log (.cudnn-deploy/log.jsonl), one JSON line per
 * change. */
#ifndef CDD_RECEIPT_H
#define CDD_RECEIPT_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"
#include "cdd/journal.h"
#include "cdd/manifest.h"
#include "cdd/state.h"


struct cdd_rfile_entry {
    char *path;            /* relative to the root */
    enum cdd_role role;
    int is_symlink;
    char *link_target;     /* symlinks */
    uint64_t size;         /* files */
    uint8_t sha256[CDD_SHA256_LEN];
    int preexisting;       /* identical file was already there: uninstall
                              leaves it, as it was before the install */
    int64_t mtime_ns;      /* files: modification time once installed (0:
                              unknown); the unchanged re-install compares
                              type, size and this */
};

/* An optional component the install took a file from (install --with). */
struct cdd_rcomponent {
    char *name;
    char *archive_filename;
    uint8_t archive_sha256[CDD_SHA256_LEN];
};

struct cdd_receipt {
    int schema_version;
    char *tool_version;
    char *txn_id;          /* also the backup folder's name */
    char *installed_at;    /* ISO 8601 UTC */
    char *manifest_name;
    uint8_t manifest_sha256[CDD_SHA256_LEN];
    char *product, *version, *platform;
    int cuda_major;
    char *layout;
    char *target_kind;
    char *cuda_version;    /* tree version at install, may be NULL */
    char *archive_filename;
    uint8_t archive_sha256[CDD_SHA256_LEN];
    uint64_t archive_size;
    int archive_pinned;
    char *pin_source;      /* "manifest", "--sha256", "unpinned" */
    struct cdd_rfile_entry *files;
    size_t n_files;
    char **backed_up;      /* dest paths moved to backup/<txn_id>/ */
    struct cdd_jprev *backed_up_prev; /* what each was (type CDD_FT_NONE:
                              not recorded, restored only as a regular
                              file); NULL or n_backed_up entries */
    size_t n_backed_up;
    char **created_dirs;   /* folders this install created, outermost
                              first: uninstall removes them when empty */
    size_t n_created_dirs;
    int profile;           /* enum cdd_profile; receipts without the key:
                              full */
    size_t omitted[CDD_ROLE_COUNT]; /* archive entries the profile left out,
                              by role (not installed, so never missing) */
    char *archive_url;     /* where the archive is published (the first
                              source obtain would try), may be NULL */
    struct cdd_rcomponent *components; /* optional components installed
                              (their files are in files[]); receipts
                              without the key: none */
    size_t n_components;
    char *selection;       /* why this release (install --cudnn, the
                              catalog's choice); NULL: not chosen, and in
                              receipts written before it existed */
};

struct cdd_tree;
/* Read .cudnn-deploy/receipt.json of the tree. *out NULL (and 0 returned)
 * when there is none; CDD_E_STATE when it cannot be understood, is not a
 * regular file, or names a path install would not write (the message names
 * the record: "files[3]: ..."). */
int cdd_receipt_load(struct cdd_tree *tree, struct cdd_receipt **out);
int cdd_receipt_parse(const char *text, size_t len, const char *source,
                      struct cdd_receipt **out);
int cdd_receipt_to_json(const struct cdd_receipt *r, char **out);
void cdd_receipt_free(struct cdd_receipt *r);
/* Free what r holds, not r itself (for a receipt on the stack). */
void cdd_receipt_clear(struct cdd_receipt *r);
const struct cdd_rfile_entry *cdd_receipt_file(const struct cdd_receipt *r,
                                               const char *path);

/* Append one line to the log:
 * {"time":..., "op":..., "transaction":..., "pid":..., "detail":...}
 * (detail: an object built with the JSON writer, jsonw.h, consumed; NULL for
 * none). */
struct cdd_jw;
int cdd_log_append(struct cdd_tree *tree, const char *op, const char *txn_id,
                   struct cdd_jw *detail);

/* The receipt's digest: sha256 of its canonical text (cdd_receipt_to_json),
 * so the same records give the same digest whatever whitespace the file on
 * disk has. The verify record names the receipt it proved by it. */
int cdd_receipt_digest(const struct cdd_receipt *r,
                       uint8_t out[CDD_SHA256_LEN]);

/* ---- the verify record (.cudnn-deploy/verified.json) -----------------------
 * What the last verify that could write the tree found (verified.h makes
 * and writes it). Read with the receipt's distrust: bounded, every field
 * checked, a fault named; it is only ever reported, never believed for
 * anything else (no check is skipped because a record says it passed). */
struct cdd_vlayer {
    char *name;            /* files, load, gpu, bench */
    char *outcome;         /* pass, warn, fail, skip */
    uint64_t passed, warned, failed, skipped;
};

struct cdd_verified {
    char *verified_at;     /* ISO 8601 UTC */
    char *tool_version;
    char *manifest_name;
    char *level;           /* the level that ran */
    char *outcome;         /* pass, warn, fail: the worst of the layers */
    uint8_t receipt_sha256[CDD_SHA256_LEN]; /* cdd_receipt_digest of the
                              receipt the files were proved against */
    struct cdd_vlayer *layers;
    size_t n_layers;
};

#define CDD_VERIFIED_MAX (64u << 10) /* bytes: a record is well under 2 KiB */

int cdd_verified_to_json(const struct cdd_verified *v, char **out);
/* The same record as a document of the JSON writer (jsonw.h), closed and
 * not finished, for a report to take as a member; NULL: no memory. */
struct cdd_jw *cdd_verified_jw(const struct cdd_verified *v);
int cdd_verified_parse(const char *text, size_t len, const char *source,
                       struct cdd_verified **out);
/* .cudnn-deploy/verified.json: *out NULL (0 returned) when there is none;
 * CDD_E_STATE (naming the field) when it cannot be understood, is larger
 * than CDD_VERIFIED_MAX or is not a regular file. */
int cdd_verified_load(struct cdd_tree *tree, struct cdd_verified **out);
void cdd_verified_free(struct cdd_verified *v);

/* ISO 8601 UTC time of now into buf (at least 21 bytes). */
void cdd_iso_time(char *buf, size_t len);

#endif
