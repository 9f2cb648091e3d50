/* The decode / hash+write pipeline of xpipe_int.h. The producer fills the
 * slot at `tail`, the consumer works on the slot at `head`; `count` slots
 * are queued or in work. A consumer failure is kept and every later buffer
 * of the entry is dropped, so the producer never blocks on a dead
 * consumer; the failure is reported at the next put or drain. */
#include "xpipe_int.h"

#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/thread.h"

struct cdd_xpipe {
    struct cdd_mutex *mu;
    struct cdd_cond *cv;
    struct cdd_thread *thr;
    unsigned char *mem;
    size_t len[XPIPE_SLOTS];
    size_t head, tail, count;
    int quit;
    struct cdd_sha256 *h;
    struct cdd_file *f;
    int failed;
    struct cdd_errsave err;
};

static int consume(void *arg)
{
    struct cdd_xpipe *p = arg;
    cdd_mutex_lock(p->mu);
    for (;;) {
        while (p->count == 0 && !p->quit)
            cdd_cond_wait(p->cv, p->mu);
        if (p->count == 0)
            break;
        size_t slot = p->head, len = p->len[slot];
        int skip = p->failed;
        struct cdd_sha256 *h = p->h;
        struct cdd_file *f = p->f;
        cdd_mutex_unlock(p->mu);
        int r = 0;
        if (!skip) {
            unsigned char *b = p->mem + slot * XPIPE_BLOCK;
            r = cdd_sha256_update(h, b, len);
            if (!r && f)
                r = cdd_file_write(f, b, len);
        }
        cdd_mutex_lock(p->mu);
        if (r < 0 && !p->failed) {
            p->failed = 1;
            cdd_error_save(&p->err);
        }
        p->head = (p->head + 1) % XPIPE_SLOTS;
        p->count--;
        cdd_cond_broadcast(p->cv);
    }
    cdd_mutex_unlock(p->mu);
    return 0;
}

int cdd_xpipe_new(struct cdd_xpipe **out)
{
    struct cdd_xpipe *p = calloc(1, sizeof *p);
    int r;
    *out = NULL;
    if (!p || !(p->mem = malloc((size_t)XPIPE_SLOTS * XPIPE_BLOCK))) {
        free(p);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    if ((r = cdd_mutex_new(&p->mu)) < 0 || (r = cdd_cond_new(&p->cv)) < 0 ||
        (r = cdd_thread_start(&p->thr, consume, p)) < 0) {
        cdd_cond_free(p->cv);
        cdd_mutex_free(p->mu);
        free(p->mem);
        free(p);
        return r;
    }
    *out = p;
    return 0;
}

void cdd_xpipe_target(struct cdd_xpipe *p, struct cdd_sha256 *h,
                      struct cdd_file *f)
{
    cdd_mutex_lock(p->mu);
    p->h = h;
    p->f = f;
    cdd_mutex_unlock(p->mu);
}

void *cdd_xpipe_get(struct cdd_xpipe *p)
{
    void *b;
    cdd_mutex_lock(p->mu);
    while (p->count == XPIPE_SLOTS)
        cdd_cond_wait(p->cv, p->mu);
    b = p->mem + p->tail * XPIPE_BLOCK;
    cdd_mutex_unlock(p->mu);
    return b;
}

int cdd_xpipe_put(struct cdd_xpipe *p, size_t len)
{
    int r = 0;
    cdd_mutex_lock(p->mu);
    p->len[p->tail] = len;
    p->tail = (p->tail + 1) % XPIPE_SLOTS;
    p->count++;
    cdd_cond_broadcast(p->cv);
    if (p->failed)
        r = cdd_error_restore(&p->err);
    cdd_mutex_unlock(p->mu);
    return r;
}

int cdd_xpipe_drain(struct cdd_xpipe *p, int report)
{
    int r = 0;
    cdd_mutex_lock(p->mu);
    while (p->count > 0)
        cdd_cond_wait(p->cv, p->mu);
    if (p->failed)
        r = report ? cdd_error_restore(&p->err) : p->err.info.code;
    cdd_error_save_free(&p->err);
    p->failed = 0;
    p->h = NULL;
    p->f = NULL;
    cdd_mutex_unlock(p->mu);
    return r;
}

void cdd_xpipe_free(struct cdd_xpipe *p)
{
    if (!p)
        return;
    cdd_mutex_lock(p->mu);
    p->quit = 1;
    cdd_cond_broadcast(p->cv);
    cdd_mutex_unlock(p->mu);
    cdd_thread_join(p->thr);
    cdd_cond_free(p->cv);
    cdd_mutex_free(p->mu);
    free(p->mem);
    cdd_error_save_free(&p->err);
    free(p);
}
