/* NVIDIA's redistrib_<version>.json: the index NVIDIA publishes beside its
 * redistributable archives, with each archive's relative path, sha256 and
 * size. It pins an archive when the manifest does not. Two shapes exist:
 *
 *   new: {"cudnn": {"version": "8.9.7.29", "linux-x86_64": {"cuda11":
 *         {"relative_path": ..., "sha256": ..., "md5": ..., "size": "123"}}}}
 *   old: {"cudnn": {"linux-x86_64": {"relative_path": ..., "sha256": ...}}}
 *
 * (size is a string; the old shape may lack md5 and size.) Parsing is
 * strict about the parts used: a wrong type or a bad hash is an error naming
 * the file and the JSON path; keys we do not use are ignored, as NVIDIA adds
 * some over time. cJSON is used here for this format. */
#ifndef CDD_REDISTRIB_H
#define CDD_REDISTRIB_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/hash.h"
#include "cdd/manifest.h"

/* Where NVIDIA's relative paths start. */
#define CDD_REDISTRIB_BASE_URL \
    "https://developer.download.nvidia.com/compute/cudnn/redist/"

/* What to pick from the file: the manifest's product, version, platform,
 * CUDA major and archive file name. */
struct cdd_redistrib_query {
    const char *product;     /* "cudnn": the top-level key */
    const char *version;     /* checked against <product>.version; may be NULL */
    enum cdd_platform platform;
    int cuda_major;          /* picks "cuda<major>" in the new shape */
    const char *filename;    /* the relative path must end in this name */
};

struct cdd_redistrib_entry {
    char *relative_path;
    uint8_t sha256[CDD_SHA256_LEN];
    int has_size;
    uint64_t size;
    int nested;              /* 1: new (cuda<major>) shape, 0: old shape */
    int has_md5;
    char md5[33];            /* 32 hex digits, when has_md5 */
};

/* Parse text (len bytes) and pick the entry for q. source names the file
 * (path or URL) in messages. Errors: CDD_E_MANIFEST with
 * "<json path>: <fault>" and source as the error's path. */
int cdd_redistrib_parse(const char *text, size_t len, const char *source,
                        const struct cdd_redistrib_query *q,
                        struct cdd_redistrib_entry *out);
void cdd_redistrib_entry_clear(struct cdd_redistrib_entry *e);

/* Every archive of one product in the file (the release catalog): each
 * platform's flat entry and each of its cuda<N> variants, in file order.
 * Same strictness as cdd_redistrib_parse for every entry; more than
 * CDD_REDISTRIB_MAX_ARCHIVES is CDD_E_TOOLONG (NVIDIA's files hold about
 * ten: five platforms, two CUDA variants each). */
#define CDD_REDISTRIB_MAX_ARCHIVES 1024
struct cdd_redistrib_item {
    char *platform;          /* NVIDIA's name: "linux-sbsa", "windows-arm64" */
    char *variant;           /* "cuda12"; NULL for a flat entry */
    struct cdd_redistrib_entry e;
};

struct cdd_redistrib_list {
    char *version;           /* <product>.version: "9.13.0.50" (required) */
    char *label;             /* release_label, NULL when absent */
    char *date;              /* release_date, NULL when absent */
    struct cdd_redistrib_item *items;
    size_t n;
};

int cdd_redistrib_list_parse(const char *text, size_t len, const char *source,
                             const char *product,
                             struct cdd_redistrib_list *out);
void cdd_redistrib_list_clear(struct cdd_redistrib_list *l);

#endif
