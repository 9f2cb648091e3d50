/* Streaming check of an archive against a manifest: every entry's name is
 * validated, matched to the manifest, bounded by its declared size (so a
 * decompression bomb stops at size + 1), hashed as it streams, and handed to
 * a sink that may write it (staging) or not (dry run). Nothing is accepted
 * unless the whole archive passes: the caller throws away what the sink wrote
 * when cdd_extract() fails. */
#ifndef CDD_EXTRACT_H
#define CDD_EXTRACT_H

#include <stdint.h>

#include "cdd/archive.h"
#include "cdd/fsops.h"
#include "cdd/manifest.h"

/* Hard bound for an entry whose size nothing declares. */
#define CDD_MAX_ENTRY_SIZE (UINT64_C(8) << 30)

struct cdd_xentry {
    const char *raw_path;      /* as stored in the archive */
    const char *path;          /* after strip_components */
    enum cdd_entry_type type;  /* FILE or SYMLINK (directories not passed) */
    enum cdd_role role;        /* from the manifest, else by the layout rules */
    const struct cdd_mfile *mfile; /* NULL when the manifest does not list it */
    const char *link_target;   /* symlinks */
    uint64_t size;             /* files: bytes read (valid in end()) */
    uint8_t sha256[CDD_SHA256_LEN]; /* files: valid in end() */
};

struct cdd_extract_sink {
    void *ud;
    /* Before a file's data: set *out to a file to write the bytes to, or
     * leave it NULL to only hash. Optional. */
    int (*begin)(void *ud, const struct cdd_xentry *e, struct cdd_file **out);
    /* After a file passed its checks (size, sha256 known) or a symlink
     * passed. The sink owns the file from begin() and must close it. */
    int (*end)(void *ud, const struct cdd_xentry *e, struct cdd_file *f);
    /* Progress in archive bytes consumed. Optional. */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
};

struct cdd_extract_opts {
    const struct cdd_manifest *m; /* NULL: discovery (manifest create):
                                     names and types still checked, no
                                     matching, strip = strip_components */
    int strip_components;         /* used only when m == NULL */
    int pinned;                   /* archive sha256 matched a pin: unlisted
                                     entries allowed when !m->files_exact */
};

/* Stream the whole archive. Errors: CDD_E_UNSAFE (name, link, type),
 * CDD_E_ARCHIVE (unexpected / missing / duplicate entry, size), CDD_E_CHECKSUM
 * (entry sha256), CDD_E_CORRUPT (libarchive), or the sink's error. The
 * message names the entry. */
int cdd_extract(const char *archive_path, const struct cdd_extract_opts *o,
                const struct cdd_extract_sink *sink);

#endif
