/* A reader for glibc's /etc/ld.so.cache, the table through which the Linux
 * dynamic loader finds a library by its soname when LD_LIBRARY_PATH does
 * not have it. We read it ourselves so that verify and doctor can say which
 * file the loader would pick, and so the driver library can be loaded by the
 * absolute path the cache names rather than by bare name.
 *
 * Formats understood (all the ones glibc's ld.so reads):
 *  - new only:  "glibc-ld.so.cache1.1" header, 24-byte entries; string
 *    offsets count from the start of the file (glibc >= 2.32 default);
 *  - compat:    the old "ld.so-1.7.0" table followed, 8-byte aligned, by a
 *    complete new-format table whose string offsets count from its own
 *    header (older glibc default); the new table is used;
 *  - old only:  "ld.so-1.7.0" with 12-byte entries, strings after the table.
 * Only x86-64 entries (flags 0x0303, the only ones an x86-64 ld.so accepts)
 * are returned.
 *
 * The file is treated as hostile: every count, offset and string is checked
 * against the buffer; a malformed cache is CDD_E_CORRUPT, never a crash. */
#ifndef CDD_LDCACHE_H
#define CDD_LDCACHE_H

#include <stddef.h>

/* Largest cache file we read; real ones are tens to hundreds of KiB. */
#define CDD_LDCACHE_MAX_SIZE (64u << 20)
/* Most paths one soname may have: ldconfig lists a library once per folder
 * and glibc-hwcaps subdirectory holding it, a handful on real systems. A
 * cache listing more is refused (CDD_E_TOOLONG), not cut. */
#define CDD_LDCACHE_MAX_PATHS 4096

/* Every path the cache at cache_path lists for soname (x86-64 entries, cache
 * order: the loader takes the first whose hwcaps the CPU supports, and
 * entries for glibc-hwcaps subdirectories come first). *paths is a malloc'd
 * array of malloc'd strings, free with cdd_ldcache_free(); *n is 0 when the
 * cache has no entry. Errors: CDD_E_NOTFOUND (no cache file), CDD_E_CORRUPT
 * (not a cache, or malformed), CDD_E_TOOLONG (more than
 * CDD_LDCACHE_MAX_PATHS paths), CDD_E_IO, CDD_E_NOMEM. */
int cdd_ldcache_lookup(const char *cache_path, const char *soname,
                       char ***paths, size_t *n);

/* The same on a cache image in memory; name is used in error messages. */
int cdd_ldcache_lookup_mem(const void *buf, size_t len, const char *name,
                           const char *soname, char ***paths, size_t *n);

/* Free a result. Accepts NULL. */
void cdd_ldcache_free(char **paths, size_t n);

#endif
