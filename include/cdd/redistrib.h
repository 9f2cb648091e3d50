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
};

/* Parse text (len bytes) and pick the entry for q. source names the file
 * (path or URL) in messages. Errors: CDD_E_MANIFEST with
 * "<json path>: <fault>" and source as the error's path. */
int cdd_redistrib_parse(const char *text, size_t len, const char *source,
                        const struct cdd_redistrib_query *q,
                        struct cdd_redistrib_entry *out);
void cdd_redistrib_entry_clear(struct cdd_redistrib_entry *e);

#endif
