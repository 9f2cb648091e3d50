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
    enum cdd_role role;        /* from the manifest, else by the layout rules
                                  (CDD_ROLE_COUNT: none, discovery only) */
    const struct cdd_mfile *mfile; /* NULL when the manifest does not list it */
    const char *link_target;   /* symlinks */
    enum cdd_role link_role;   /* symlinks, with a manifest: the role of the
                                  entry the chain ends at, whose folder the
                                  link is placed in (cdd_layout_link_role) */
    uint64_t size;             /* files: bytes read (valid in end()) */
    uint8_t sha256[CDD_SHA256_LEN]; /* files: valid in end() */
    size_t index;              /* 0, 1, 2... over the files and symlinks in
                                  archive order: the same for an entry in
                                  every callback, whatever thread calls */
};

/* Who owns the file: a non-NULL *out from begin() belongs to cdd_extract()
 * from then on, until it is handed to end(). If begin() fails, or a check or
 * a write fails before end(), cdd_extract() aborts it (cdd_file_abort) and
 * calls nothing further. end() owns the file it is given whatever it
 * returns: it must close it (or abort it on its own failure). The caller then
 * removes whatever files the sink created. */
struct cdd_extract_sink {
    void *ud;
    /* Before a file's data (regular files only): set *out to a file to write
     * the bytes to, or leave it NULL to only hash. Optional. */
    int (*begin)(void *ud, const struct cdd_xentry *e, struct cdd_file **out);
    /* After a file passed its checks (size, sha256 known) or a symlink
     * passed its own (symlinks get no begin()). Optional. Symlink chains are
     * checked only after the last entry, so a sink may see a symlink before
     * its target; nothing counts until cdd_extract() returns 0. */
    int (*end)(void *ud, const struct cdd_xentry *e, struct cdd_file *f);
    /* Progress: bytes of the archive file consumed so far (approximate for
     * zip, whose reader seeks; with several workers, the share of the data
     * decoded, scaled to the file's size) against the archive file's size;
     * called after each header and each data block, never from two threads
     * at once. Optional. */
    void (*progress)(void *ud, uint64_t done, uint64_t total);
    /* Every file and symlink, in archive order, on the thread that called
     * cdd_extract(), once its name and manifest checks passed and before
     * its begin() or end(). Optional. */
    int (*entry)(void *ud, const struct cdd_xentry *e);
};

struct cdd_extract_opts {
    const struct cdd_manifest *m; /* NULL: discovery (manifest create):
                                     names, types, duplicates, symlinks and
                                     the size bound still checked, no
                                     matching, strip = strip_components */
    int strip_components;         /* used only when m == NULL */
    int pinned;                   /* archive sha256 matched a pin: unlisted
                                     entries allowed when !m->files_exact */
    /* Discovery only: the platform whose layout rules give files their role
     * (cdd_role_from_path). Without it (has_platform 0), or when no rule
     * fits, a file's role is CDD_ROLE_COUNT ("unknown") and the caller
     * decides; a symlink's is always CDD_ROLE_SYMLINK. */
    int has_platform;
    enum cdd_platform platform;
    /* Bound on the bytes of all files together (0: none beyond each
     * entry's): `manifest create` has no manifest to bound them by. Over
     * it: CDD_E_ARCHIVE. */
    uint64_t max_total;
    /* Threads. jobs > 1 on a zip: the headers are checked first, on the
     * calling thread, then up to `jobs` workers, each with its own reader,
     * read the files' data, the largest first; begin() and end() of files
     * are then called from the workers, concurrently for different entries
     * (entry() and symlinks' end() stay on the calling thread). On the
     * first failure the other workers stop and that failure is the one
     * returned. pipeline: on an archive read by one thread (tar, or zip
     * with jobs <= 1), hash and write on a second thread while the next
     * block decodes; with workers and jobs > 2, the same for a worker that
     * carries more than twice its share of the bytes (the one holding the
     * largest entry). 0 and 1: everything on the calling thread. */
    int jobs;
    int pipeline;
    /* An optional component's archive (manifest.h, struct cdd_mcomponent):
     * with pinned and a non-exact manifest, entries it does not list are
     * checked (names, types, bounds) and read, but given no role
     * (CDD_ROLE_COUNT) instead of the layout rules' place: only the listed
     * entry is installed. */
    int ignore_unlisted;
    /* The archive, held open by the caller (cdd_archive_hold): read through
     * it, and through duplicates of it for the workers, never by path
     * (issue 18). NULL: archive_path is opened here. */
    struct cdd_rfile *file;
};

/* Bounds on the number of entries (directories included) and on their
 * names' bytes in all: the per-entry bookkeeping for duplicate and symlink
 * checks must stay small too (peak RSS under 64 MiB whatever the archive;
 * real cuDNN archives have under 100 entries and 10 KB of names). A
 * manifest cannot list more files either (at most 100,000 JSON values, five
 * a file). Over them: CDD_E_ARCHIVE, except a zip whose central directory
 * holds more than the name bound (CDD_E_TOOLONG, the container's; exit 3
 * all the same). */
#define CDD_MAX_ENTRIES 20000
#define CDD_MAX_NAME_BYTES (4u * 1024u * 1024u)

/* Stream the whole archive. Errors: CDD_E_UNSAFE (name, hard link, device,
 * symlink target, duplicate or case-duplicate, file/folder clash, symlink
 * loop), CDD_E_ARCHIVE (unexpected / missing entry, type or size differing
 * from the manifest, entry over its bound, dangling symlink, too many
 * entries), CDD_E_CHECKSUM (entry sha256), CDD_E_CORRUPT (libarchive),
 * CDD_E_INTERRUPTED (cdd_cancelled()), or the sink's error. The error's path
 * is the archive; the message names the entry. */
int cdd_extract(const char *archive_path, const struct cdd_extract_opts *o,
                const struct cdd_extract_sink *sink);

#endif
