/* The archive hash on a thread of its own (cdd/bghash.h). */
#include "cdd/bghash.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/idrec.h"
#include "cdd/thread.h"

#define BG_BLOCK (256u * 1024u)

struct cdd_bghash {
    char *path;
    struct cdd_rfile *held; /* a duplicate of the caller's handle, or NULL */
    struct cdd_thread *thr;
    atomic_int stop;
    uint64_t size;
    struct cdd_idrec rec; /* digest, and the identity the file held meanwhile */
    struct cdd_errsave err;
};

static int hash_file(void *arg)
{
    struct cdd_bghash *b = arg;
    struct cdd_rfile *f = NULL;
    struct cdd_sha256 *h = NULL;
    unsigned char *buf = NULL;
    int r;

    if ((r = cdd_sha256_new(&h)) < 0)
        goto out;
    if (!(buf = malloc(BG_BLOCK))) {
        r = cdd_fail(CDD_E_NOMEM, b->path, 0, NULL);
        goto out;
    }
    if (b->held) {
        f = b->held; /* read by pread: the caller's offset is its own */
        b->held = NULL;
    } else if ((r = cdd_fs_open_read(b->path, &f)) < 0) {
        goto out;
    }
    /* The identity around the read, on the same handle (tree/idcache.h):
     * the unchanged re-install may trust this digest again while it holds. */
    b->rec.seen_ns = cdd_idcache_now_ns();
    if ((r = cdd_fs_identity(f, &b->rec.id)) < 0)
        goto out;
    for (;;) {
        size_t got = 0;
        if (cdd_cancelled() || atomic_load(&b->stop)) {
            r = cdd_fail(CDD_E_INTERRUPTED, b->path, 0,
                         "interrupted while hashing");
            goto out;
        }
        if ((r = cdd_rfile_pread(f, b->size, buf, BG_BLOCK, &got)) < 0)
            goto out;
        if (got == 0)
            break;
        if ((r = cdd_sha256_update(h, buf, got)) < 0)
            goto out;
        b->size += got;
    }
    r = cdd_sha256_final(h, b->rec.sha256);
    struct cdd_fs_id after;
    if (!r && (r = cdd_fs_identity(f, &after)) == 0)
        b->rec.valid = memcmp(&after, &b->rec.id, sizeof after) == 0 &&
                       after.size == b->size;
out:
    if (r < 0)
        cdd_error_save(&b->err);
    cdd_rfile_close(f);
    cdd_sha256_free(h);
    free(buf);
    return r;
}

static int start(const char *path, struct cdd_rfile *held,
                 struct cdd_bghash **out)
{
    struct cdd_bghash *b = calloc(1, sizeof *b);
    int r;
    *out = NULL;
    if (!b || !(b->path = strdup(path))) {
        free(b);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    if (held && (r = cdd_rfile_dup(held, &b->held)) < 0) {
        free(b->path);
        free(b);
        return r;
    }
    atomic_init(&b->stop, 0);
    if ((r = cdd_thread_start(&b->thr, hash_file, b)) < 0) {
        cdd_rfile_close(b->held);
        free(b->path);
        free(b);
        return r;
    }
    *out = b;
    return 0;
}

int cdd_bghash_start(const char *path, struct cdd_bghash **out)
{
    return start(path, NULL, out);
}

int cdd_bghash_start_file(struct cdd_rfile *f, struct cdd_bghash **out)
{
    return start(cdd_rfile_path(f), f, out);
}

int cdd_bghash_finish(struct cdd_bghash *b, uint8_t digest[CDD_SHA256_LEN],
                      uint64_t *size)
{
    struct cdd_idrec rec;
    int r = cdd_bghash_finish_rec(b, &rec, size);
    if (!r)
        memcpy(digest, rec.sha256, CDD_SHA256_LEN);
    return r;
}

int cdd_bghash_finish_rec(struct cdd_bghash *b, struct cdd_idrec *rec,
                          uint64_t *size)
{
    int r = cdd_thread_join(b->thr);
    if (r < 0) {
        r = cdd_error_restore(&b->err);
    } else {
        *rec = b->rec;
        if (size)
            *size = b->size;
    }
    free(b->path);
    cdd_error_save_free(&b->err);
    free(b);
    return r;
}

void cdd_bghash_cancel(struct cdd_bghash *b)
{
    if (!b)
        return;
    atomic_store(&b->stop, 1);
    (void)cdd_thread_join(b->thr);
    free(b->path);
    cdd_error_save_free(&b->err);
    free(b);
}
