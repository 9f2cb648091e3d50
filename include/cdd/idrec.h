/* An identity record: the sha256 of a file's bytes next to the identity
 * the file had while they were hashed (cdd_fs_id: device, inode, size,
 * mtime and ctime in ns) and when that identity was taken. The rule for
 * trusting one again, git's racy rule included, is tree/idcache.h's head
 * comment; the records of a tree are kept by the tree stage (idcache.h),
 * the archive's is taken by the archive stage while it checks it. */
#ifndef CDD_IDREC_H
#define CDD_IDREC_H

#include <stdint.h>

#include "cdd/fsops.h"
#include "cdd/hash.h"

/* Records younger than this after the file's last change are racy. */
#define CDD_IDCACHE_RACY_NS INT64_C(2000000000)

struct cdd_idrec {
    int valid;
    char *path; /* tree path; NULL for the archive */
    uint8_t sha256[CDD_SHA256_LEN];
    struct cdd_fs_id id;
    int64_t seen_ns; /* wall clock when the identity was first taken */
};

struct cdd_rfile;

/* Does rec vouch that the file whose identity is now holds bytes with the
 * digest sha? 1 yes, 0 no (no record, any field changed, racy, unknown
 * times, another digest). */
int cdd_idrec_vouches(const struct cdd_idrec *rec, const struct cdd_fs_id *now,
                      const uint8_t sha[CDD_SHA256_LEN]);

/* Hash the open file f from its start, taking its identity before and
 * after; *rec (path left NULL) is filled with the digest, and is valid only
 * when the identity did not change while hashing. *size: bytes read. */
int cdd_idrec_hash(struct cdd_rfile *f, const char *shown,
                   struct cdd_idrec *rec, uint64_t *size);

/* Wall clock in ns since 1970 (sys.h's clock). */
int64_t cdd_idcache_now_ns(void);

#endif
