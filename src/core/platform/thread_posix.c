/* Threads on POSIX: pthreads. See cdd/thread.h. */
#define _GNU_SOURCE
#include "cdd/thread.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include "cdd/error.h"

struct cdd_thread {
    pthread_t t;
    int (*fn)(void *);
    void *arg;
    int result;
};

struct cdd_mutex {
    pthread_mutex_t m;
};

struct cdd_cond {
    pthread_cond_t c;
};

static void *trampoline(void *p)
{
    struct cdd_thread *t = p;
    t->result = t->fn(t->arg);
    return NULL;
}

int cdd_thread_start(struct cdd_thread **out, int (*fn)(void *), void *arg)
{
    struct cdd_thread *t = calloc(1, sizeof *t);
    int e;
    *out = NULL;
    if (!t)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    t->fn = fn;
    t->arg = arg;
    if ((e = pthread_create(&t->t, NULL, trampoline, t)) != 0) {
        free(t);
        return cdd_fail_errno(NULL, e, "cannot start a thread");
    }
    *out = t;
    return 0;
}

int cdd_thread_join(struct cdd_thread *t)
{
    int r;
    if (!t)
        return 0;
    pthread_join(t->t, NULL);
    r = t->result;
    free(t);
    return r;
}

int cdd_mutex_new(struct cdd_mutex **out)
{
    struct cdd_mutex *m = calloc(1, sizeof *m);
    *out = NULL;
    if (!m || pthread_mutex_init(&m->m, NULL) != 0) {
        free(m);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    *out = m;
    return 0;
}

void cdd_mutex_lock(struct cdd_mutex *m)
{
    pthread_mutex_lock(&m->m);
}

void cdd_mutex_unlock(struct cdd_mutex *m)
{
    pthread_mutex_unlock(&m->m);
}

void cdd_mutex_free(struct cdd_mutex *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->m);
    free(m);
}

int cdd_cond_new(struct cdd_cond **out)
{
    struct cdd_cond *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c || pthread_cond_init(&c->c, NULL) != 0) {
        free(c);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    *out = c;
    return 0;
}

void cdd_cond_wait(struct cdd_cond *c, struct cdd_mutex *m)
{
    pthread_cond_wait(&c->c, &m->m);
}

void cdd_cond_broadcast(struct cdd_cond *c)
{
    pthread_cond_broadcast(&c->c);
}

void cdd_cond_free(struct cdd_cond *c)
{
    if (!c)
        return;
    pthread_cond_destroy(&c->c);
    free(c);
}

int cdd_cpu_count(void)
{
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
