/* The download cache: finished archives live at <cache>/<sha256>/<filename>,
 * so a file is found by the pin that vouches for it and two versions with
 * the same name never collide. A download in progress is
 * <cache>/<sha256>/<filename>.part (<cache>/unpinned/ when nothing pins it)
 * and becomes the finished file by a rename only after its sha256 matched.
 * A cached file is re-hashed before every use: the cache is a convenience,
 * never a source of trust. */
#ifndef CDD_CACHE_H
#define CDD_CACHE_H

#include <stdint.h>

#include "cdd/hash.h"

/* Paths of one cache entry (all malloc'd). */
struct cdd_cache_entry {
    char *dir;  /* <cache>/<sha256 hex>, or <cache>/unpinned */
    char *path; /* dir/<filename>: the finished file (pinned entries) */
    char *part; /* dir/<filename>.part: the download in progress */
    char *lock; /* dir/.lock: one downloader per entry at a time */
};

/* The cache folder: override (made absolute) when not NULL, else the
 * platform default (cdd_default_cache_dir). Not created here. */
int cdd_cache_dir(const char *override, char **out);

/* Fill e for filename (one safe path component) under cache; sha256 NULL
 * means the unpinned area. Creates the entry's folder. */
int cdd_cache_entry_init(const char *cache, const uint8_t *sha256,
                         const char *filename, struct cdd_cache_entry *e);
void cdd_cache_entry_clear(struct cdd_cache_entry *e);

/* Is e->path there and does it still hash to sha256 (and have size, when
 * has_size)? *hit = 1 then. A file that no longer matches is deleted (a
 * corrupted entry must not be found again) and *hit = 0. */
int cdd_cache_lookup(const struct cdd_cache_entry *e,
                     const uint8_t sha256[CDD_SHA256_LEN], int has_size,
                     uint64_t size, int *hit);

/* The cache may be shared with other accounts: nothing in it is followed
 * or trusted (issue 18). An entry's folder must be a folder, not a link,
 * owned by the caller and writable by nobody else: else CDD_E_UNSAFE with
 * the reason (cdd_cache_entry_init checks it). A .part or a finished file
 * must be a regular file of the caller's with exactly one link: anything
 * else is removed (the name only: a hard link's other file is never
 * touched), and *present = 0 so that it is downloaded again; CDD_E_UNSAFE
 * when it cannot be removed. *present = 1: a usable file is there. */
struct cdd_file;
struct cdd_finfo;
int cdd_cache_check_dir(const char *dir);
int cdd_cache_vet_file(const char *path, int *present);
/* The same rule on a handle just opened (f on path; fi gets what it is). */
int cdd_cache_check_open(struct cdd_file *f, const char *path,
                         struct cdd_finfo *fi);

/* Move a verified file (a .part) into place as <cache>/<sha256>/<filename>
 * and make the rename durable. *path_out (malloc'd) names the result. */
int cdd_cache_commit(const char *cache, const char *from,
                     const uint8_t sha256[CDD_SHA256_LEN],
                     const char *filename, char **path_out);

#endif
