/* The identity records that let an unchanged re-install trust a digest
 * again without reading the bytes (.cudnn-deploy/identity): for the archive
 * and for each installed file, the sha256 of its bytes next to the identity
 * the file had while they were hashed (cdd_fs_id: device, inode, size,
 * mtime and ctime in ns) and when that identity was taken.
 *
 * A record vouches for a file only while every field of the identity is
 * unchanged and the record is not "racy" (git's rule): a record taken less
 * than CDD_IDCACHE_RACY_NS after the file's mtime or ctime could miss a
 * change made within the same timestamp tick (coarse kernel clocks, FAT's
 * 2 s, a file server's clock), so it is never trusted and the bytes are
 * hashed again. Rewriting bytes changes the ctime whatever is done to the
 * mtime afterwards (utime sets the ctime to now), so a changed byte is
 * never hidden by the identity.
 *
 * The file is state like any other (docs/security.md): malformed content is
 * ignored as a whole (the records are only a cache; losing them costs a
 * hash), and a record is used only for the receipt path it names and only
 * when it names the digest the receipt (or the pin) expects. */
#ifndef CDD_IDCACHE_H
#define CDD_IDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/idrec.h"

#define CDD_IDCACHE_FILE ".cudnn-deploy/identity"
#define CDD_IDCACHE_MAX_BYTES (8u << 20)

struct cdd_idcache {
    struct cdd_idrec archive;
    struct cdd_idrec *files;
    size_t n, cap;
};

struct cdd_tree;
struct cdd_rfile;

/* Read the tree's records; a missing, unreadable or malformed file gives
 * an empty cache (never an error but out of memory). */
int cdd_idcache_load(struct cdd_tree *t, struct cdd_idcache *c);
/* Write them atomically (the caller holds the tree's lock). */
int cdd_idcache_save(struct cdd_tree *t, const struct cdd_idcache *c);
void cdd_idcache_clear(struct cdd_idcache *c);

const struct cdd_idrec *cdd_idcache_find(const struct cdd_idcache *c,
                                         const char *path);
/* Add or replace the record for rec->path (copied). */
int cdd_idcache_put(struct cdd_idcache *c, const struct cdd_idrec *rec);

#endif
