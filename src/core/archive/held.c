/* The archive held open from its pin to its extraction (archive.h, issue
 * 18): who may write it, its hash through the held handle, and whether it
 * changed while it was read. */
#include <stdlib.h>
#include <string.h>

#include "cdd/archive.h"
#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"

static int hold(const char *path, struct cdd_rfile *f, struct cdd_rfile **out,
                struct cdd_finfo *at_open);

int cdd_archive_hold(const char *path, struct cdd_rfile **out,
                     struct cdd_finfo *at_open)
{
    struct cdd_rfile *f = NULL;
    int r;
    *out = NULL;
    if ((r = cdd_fs_open_read(path, &f)) < 0)
        return r;
    return hold(path, f, out, at_open);
}

int cdd_archive_hold_file(struct cdd_rfile *given, struct cdd_rfile **out,
                          struct cdd_finfo *at_open)
{
    struct cdd_rfile *f = NULL;
    int r;
    *out = NULL;
    if ((r = cdd_rfile_dup(given, &f)) < 0)
        return r;
    return hold(cdd_rfile_path(given), f, out, at_open);
}

static int hold(const char *path, struct cdd_rfile *f, struct cdd_rfile **out,
                struct cdd_finfo *at_open)
{
    int r;
    if ((r = cdd_rfile_info(f, at_open)) < 0)
        goto out;
    if (at_open->type != CDD_FT_FILE) {
        r = cdd_fail(CDD_E_UNSAFE, path, 0, "not a regular file: refused");
        goto out;
    }
    /* Another account that can write the file can change its bytes after
     * they were hashed and before they are unpacked (or while they are):
     * the pin would then vouch for bytes nobody installs. */
    if (at_open->owner_known &&
        (at_open->other_writable || at_open->group_writable ||
         (!at_open->owner_is_caller && !at_open->owner_is_root))) {
        const char *who =
            at_open->other_writable   ? "every account may write it (o+w)"
            : at_open->group_writable ? "its group, which is not yours, may "
                                        "write it (g+w)"
                                      : "it belongs to another account";
        r = cdd_fail(CDD_E_UNSAFE, path, 0,
                     "%s (owner uid %lld): that account could change its "
                     "bytes between the pin check and the unpacking, so it "
                     "is not read; copy it to a file only you (or root) can "
                     "write, e.g. install -m 0644 FILE DIR/, and give that",
                     who, at_open->owner);
        goto out;
    }
    *out = f;
    f = NULL;
out:
    cdd_rfile_close(f);
    return r;
}

int cdd_archive_hash(struct cdd_rfile *f, uint8_t digest[32], uint64_t *size)
{
    return cdd_sha256_rfile(f, cdd_rfile_path(f), digest, size);
}

int cdd_archive_unchanged(struct cdd_rfile *f, const struct cdd_finfo *at_open)
{
    struct cdd_finfo now, done;
    int r = cdd_rfile_info(f, &now);
    if (r < 0)
        return r;
    /* A file read while it was downloaded (cdd/feed.h) grew under the
     * reader by design: it must be, now, the file its writer finished --
     * all of it, not written since (the cache's rename moves only its
     * change time, which is therefore not compared). */
    if (cdd_rfile_feed(f)) {
        if ((r = cdd_feed_final_info(cdd_rfile_feed(f), &done)) < 0)
            return r;
        if (now.size != done.size || now.mtime_ns != done.mtime_ns ||
            now.dev != done.dev || now.ino != done.ino)
            return cdd_fail(CDD_E_CHECKSUM, cdd_rfile_path(f), 0,
                            "the file changed after it was downloaded: what "
                            "was hashed may not be what was unpacked, so "
                            "nothing is installed");
        return 0;
    }
    /* The change time moves with the link count too (the path renamed over
     * unlinks the held file; a hard link made or removed elsewhere): that
     * changes no byte, so it counts only while the link count is the one
     * the file had when it was held. */
    if (now.size != at_open->size || now.mtime_ns != at_open->mtime_ns ||
        (now.nlink == at_open->nlink && now.ctime_ns != at_open->ctime_ns))
        return cdd_fail(CDD_E_CHECKSUM, cdd_rfile_path(f), 0,
                        "the file changed while it was read (size %llu -> "
                        "%llu, or its write time): what was hashed may not "
                        "be what was unpacked, so nothing is installed",
                        (unsigned long long)at_open->size,
                        (unsigned long long)now.size);
    return 0;
}
