/* One identity record (cdd/idrec.h): a file's digest next to the identity
 * it had while it was hashed, and the rule for when that still vouches for
 * its bytes. The archive's background hash takes one while it checks the
 * archive; the tree's identity cache (tree/idcache.c) keeps them. */
#include "cdd/idrec.h"

#include <string.h>

#include "cdd/archive.h"
#include "cdd/sys.h"

int64_t cdd_idcache_now_ns(void)
{
    return (int64_t)(cdd_now() * 1e9);
}

int cdd_idrec_vouches(const struct cdd_idrec *rec, const struct cdd_fs_id *now,
                      const uint8_t sha[CDD_SHA256_LEN])
{
    if (!rec || !rec->valid || memcmp(rec->sha256, sha, CDD_SHA256_LEN) != 0)
        return 0;
    const struct cdd_fs_id *was = &rec->id;
    if (was->dev != now->dev || was->ino != now->ino ||
        was->size != now->size || was->mtime_ns != now->mtime_ns ||
        was->ctime_ns != now->ctime_ns)
        return 0;
    if (was->mtime_ns <= 0 || was->ctime_ns <= 0)
        return 0;
    int64_t last = was->mtime_ns > was->ctime_ns ? was->mtime_ns
                                                 : was->ctime_ns;
    /* Racy: the identity was taken too soon after the last change for a
     * further change in the same tick to have shown in it. */
    return rec->seen_ns - last >= CDD_IDCACHE_RACY_NS;
}

static int same_id(const struct cdd_fs_id *a, const struct cdd_fs_id *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns;
}

int cdd_idrec_hash(struct cdd_rfile *f, const char *shown,
                   struct cdd_idrec *rec, uint64_t *size)
{
    struct cdd_fs_id after;
    memset(rec, 0, sizeof *rec);
    /* The time first: a change after it, in the same tick as the identity
     * read next, makes the record racy rather than wrong. */
    rec->seen_ns = cdd_idcache_now_ns();
    int r = cdd_fs_identity(f, &rec->id);
    if (!r)
        r = cdd_archive_hash(f, rec->sha256, size); /* pread: a held
                                                       handle's offset stays */
    if (!r)
        r = cdd_fs_identity(f, &after);
    if (!r)
        rec->valid = same_id(&rec->id, &after) && *size == after.size;
    return r;
}
