/* A file that is still arriving (cdd/feed.h). */
#include "cdd/feed.h"

#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/thread.h"

struct cdd_feed {
    struct cdd_mutex *mu;
    struct cdd_cond *cv;
    int refs;
    uint64_t size;
    uint64_t have;             /* the .part holds [0, have) */
    unsigned char *tail;       /* [tail_off, size) in memory, or NULL */
    uint64_t tail_off;
    enum cdd_feed_state state;
    int failed, abandoned, complete;
    const char *why;
    struct cdd_errsave err;
    struct cdd_finfo done_info;
    struct cdd_rfile *reader;  /* the published handle, without a feed */
};

int cdd_feed_new(struct cdd_feed **out)
{
    struct cdd_feed *f = calloc(1, sizeof *f);
    *out = NULL;
    if (!f)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (cdd_mutex_new(&f->mu) < 0 || cdd_cond_new(&f->cv) < 0) {
        cdd_mutex_free(f->mu);
        free(f);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    f->refs = 1;
    f->why = "";
    *out = f;
    return 0;
}

struct cdd_feed *cdd_feed_ref(struct cdd_feed *f)
{
    cdd_mutex_lock(f->mu);
    f->refs++;
    cdd_mutex_unlock(f->mu);
    return f;
}

void cdd_feed_unref(struct cdd_feed *f)
{
    if (!f)
        return;
    cdd_mutex_lock(f->mu);
    int last = --f->refs == 0;
    cdd_mutex_unlock(f->mu);
    if (!last)
        return;
    cdd_rfile_close(f->reader);
    free(f->tail);
    cdd_error_save_free(&f->err);
    cdd_cond_free(f->cv);
    cdd_mutex_free(f->mu);
    free(f);
}

uint64_t cdd_feed_size(const struct cdd_feed *f)
{
    return f->size;
}

void cdd_feed_set_size(struct cdd_feed *f, uint64_t size)
{
    cdd_mutex_lock(f->mu);
    f->size = size;
    cdd_mutex_unlock(f->mu);
}

void cdd_feed_settle(struct cdd_feed *f)
{
    cdd_mutex_lock(f->mu);
    if (f->state == CDD_FEED_PENDING) {
        f->state = CDD_FEED_NO_STREAM;
        if (!*f->why)
            f->why = "the download did not offer its file";
    }
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
}

int cdd_feed_set_tail(struct cdd_feed *f, uint64_t off, const void *buf,
                      size_t len)
{
    if (off > f->size || len != f->size - off)
        return cdd_fail(CDD_E_IO, NULL, 0, "tail not at the end");
    unsigned char *t = malloc(len ? len : 1);
    if (!t)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    memcpy(t, buf, len);
    cdd_mutex_lock(f->mu);
    free(f->tail);
    f->tail = t;
    f->tail_off = off;
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
    return 0;
}

void cdd_feed_publish(struct cdd_feed *f, struct cdd_rfile *reader)
{
    cdd_mutex_lock(f->mu);
    if (f->state == CDD_FEED_PENDING && !f->reader) {
        f->reader = reader;
        reader = NULL;
        f->state = CDD_FEED_READY;
    }
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
    cdd_rfile_close(reader);
}

void cdd_feed_advance(struct cdd_feed *f, uint64_t have)
{
    cdd_mutex_lock(f->mu);
    if (have > f->have)
        f->have = have > f->size ? f->size : have;
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
}

void cdd_feed_complete(struct cdd_feed *f, const struct cdd_finfo *fi)
{
    cdd_mutex_lock(f->mu);
    f->done_info = *fi;
    f->complete = 1;
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
}

/* Record that reading must stop: the first failure's error e is kept
 * (handed on: freed with the feed; a later one is dropped), why replaces
 * the reason when not NULL, a feed still PENDING becomes pending_to, and
 * every waiter wakes to see it. */
static void record_failure(struct cdd_feed *f, struct cdd_errsave *e,
                           const char *why, enum cdd_feed_state pending_to,
                           int abandon)
{
    cdd_mutex_lock(f->mu);
    if (!f->failed) {
        f->err = *e;
        f->failed = 1;
    } else {
        cdd_error_save_free(e);
    }
    if (why)
        f->why = why;
    f->abandoned |= abandon;
    if (f->state == CDD_FEED_PENDING)
        f->state = pending_to;
    cdd_cond_broadcast(f->cv);
    cdd_mutex_unlock(f->mu);
}

void cdd_feed_fail(struct cdd_feed *f)
{
    struct cdd_errsave e;
    cdd_error_save(&e);
    record_failure(f, &e, NULL, CDD_FEED_FAILED, 0);
}

static void stop_reading(struct cdd_feed *f, const char *why,
                         enum cdd_feed_state pending_to, int abandon)
{
    struct cdd_errsave keep, e;
    cdd_error_save(&keep);
    cdd_fail(CDD_E_NETWORK, NULL, 0, "%s", why);
    cdd_error_save(&e);
    /* The writer's own last error stays its own. */
    (void)cdd_error_restore(&keep);
    cdd_error_save_free(&keep);
    record_failure(f, &e, why, pending_to, abandon);
}

void cdd_feed_abandon(struct cdd_feed *f, const char *why)
{
    stop_reading(f, why, CDD_FEED_NO_STREAM, 1);
}

void cdd_feed_no_stream(struct cdd_feed *f, const char *why)
{
    stop_reading(f, why, CDD_FEED_NO_STREAM, 1);
}

enum cdd_feed_state cdd_feed_wait_ready(struct cdd_feed *f,
                                        struct cdd_rfile **reader)
{
    enum cdd_feed_state st;
    *reader = NULL;
    cdd_mutex_lock(f->mu);
    while (f->state == CDD_FEED_PENDING)
        cdd_cond_wait(f->cv, f->mu);
    st = f->state;
    if (st == CDD_FEED_READY) {
        if (cdd_rfile_dup(f->reader, reader) < 0) {
            st = CDD_FEED_NO_STREAM;
            f->why = "cannot open another reader of the download";
        } else {
            f->refs++;
            cdd_rfile_set_feed(*reader, f);
        }
    }
    cdd_mutex_unlock(f->mu);
    return st;
}

int cdd_feed_abandoned(struct cdd_feed *f)
{
    cdd_mutex_lock(f->mu);
    int a = f->abandoned;
    cdd_mutex_unlock(f->mu);
    return a;
}

const char *cdd_feed_why(struct cdd_feed *f)
{
    cdd_mutex_lock(f->mu);
    const char *w = f->why;
    cdd_mutex_unlock(f->mu);
    return w;
}

int cdd_feed_final_info(struct cdd_feed *f, struct cdd_finfo *fi)
{
    cdd_mutex_lock(f->mu);
    while (!f->complete && !f->failed)
        cdd_cond_wait(f->cv, f->mu);
    int ok = f->complete;
    if (ok)
        *fi = f->done_info;
    struct cdd_errsave e = f->err;
    cdd_mutex_unlock(f->mu);
    return ok ? 0 : cdd_error_restore(&e);
}

int cdd_feed_pread(struct cdd_feed *feed, struct cdd_rfile *f,
                   cdd_feed_raw_pread raw, uint64_t off, void *buf,
                   size_t len, size_t *got)
{
    size_t done = 0;
    int r = 0;
    *got = 0;
    while (done < len) {
        uint64_t pos = off + done;
        size_t n;
        cdd_mutex_lock(feed->mu);
        while (!feed->failed && pos < feed->size && pos >= feed->have &&
               !(feed->tail && pos >= feed->tail_off))
            cdd_cond_wait(feed->cv, feed->mu);
        if (feed->failed && !(pos < feed->have)) {
            struct cdd_errsave e = feed->err;
            cdd_mutex_unlock(feed->mu);
            return cdd_error_restore(&e);
        }
        if (pos >= feed->size) {
            cdd_mutex_unlock(feed->mu);
            break;
        }
        if (pos < feed->have) {
            uint64_t avail = feed->have - pos;
            n = len - done < avail ? len - done : (size_t)avail;
            cdd_mutex_unlock(feed->mu);
            size_t g = 0;
            if ((r = raw(f, pos, (char *)buf + done, n, &g)) < 0)
                return r;
            if (g != n)
                return cdd_fail(CDD_E_IO, cdd_rfile_path(f), 0,
                                "the download's file is shorter than what "
                                "was written to it");
        } else {
            uint64_t avail = feed->size - pos;
            n = len - done < avail ? len - done : (size_t)avail;
            memcpy((char *)buf + done, feed->tail + (pos - feed->tail_off),
                   n);
            cdd_mutex_unlock(feed->mu);
        }
        done += n;
    }
    *got = done;
    return 0;
}
