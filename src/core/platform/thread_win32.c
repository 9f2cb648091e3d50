/* Threads on Windows: CreateThread, SRW locks, condition variables. See
 * cdd/thread.h. */
#include "cdd/thread.h"

#include <stdlib.h>
#include <windows.h>

#include "cdd/error.h"

struct cdd_thread {
    HANDLE h;
    int (*fn)(void *);
    void *arg;
    int result;
};

struct cdd_mutex {
    SRWLOCK l;
};

struct cdd_cond {
    CONDITION_VARIABLE c;
};

static DWORD WINAPI trampoline(LPVOID p)
{
    struct cdd_thread *t = p;
    t->result = t->fn(t->arg);
    cdd_error_thread_end(); /* the thread's error record and kept names */
    return 0;
}

int cdd_thread_start(struct cdd_thread **out, int (*fn)(void *), void *arg)
{
    struct cdd_thread *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    t->fn = fn;
    t->arg = arg;
    if (!(t->h = CreateThread(NULL, 0, trampoline, t, 0, NULL))) {
        int e = (int)GetLastError();
        free(t);
        return cdd_fail(CDD_E_IO, NULL, e, "cannot start a thread");
    }
    *out = t;
    return 0;
}

int cdd_thread_join(struct cdd_thread *t)
{
    int r;
    if (!t)
        return 0;
    WaitForSingleObject(t->h, INFINITE);
    CloseHandle(t->h);
    r = t->result;
    free(t);
    return r;
}

int cdd_mutex_new(struct cdd_mutex **out)
{
    struct cdd_mutex *m = calloc(1, sizeof *m);
    *out = m;
    if (!m)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    InitializeSRWLock(&m->l);
    return 0;
}

void cdd_mutex_lock(struct cdd_mutex *m)
{
    AcquireSRWLockExclusive(&m->l);
}

void cdd_mutex_unlock(struct cdd_mutex *m)
{
    ReleaseSRWLockExclusive(&m->l);
}

void cdd_mutex_free(struct cdd_mutex *m)
{
    free(m);
}

int cdd_cond_new(struct cdd_cond **out)
{
    struct cdd_cond *c = calloc(1, sizeof *c);
    *out = c;
    if (!c)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    InitializeConditionVariable(&c->c);
    return 0;
}

void cdd_cond_wait(struct cdd_cond *c, struct cdd_mutex *m)
{
    SleepConditionVariableSRW(&c->c, &m->l, INFINITE, 0);
}

void cdd_cond_broadcast(struct cdd_cond *c)
{
    WakeAllConditionVariable(&c->c);
}

void cdd_cond_free(struct cdd_cond *c)
{
    free(c);
}

/* No cgroups on Windows (a job object's CPU rate control is not read). */
int cdd_cgroup_cpu_limit(const char *sysfs_root, const char *proc_cgroup)
{
    (void)sysfs_root;
    (void)proc_cgroup;
    return 0;
}

int cdd_cpu_count(void)
{
    DWORD_PTR proc = 0, sys = 0;
    int n = 0;
    if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
        for (; proc; proc &= proc - 1)
            n++;
    if (n <= 0) {
        SYSTEM_INFO si;
        GetSystemInfo(&si);
        n = (int)si.dwNumberOfProcessors;
    }
    return n > 0 ? n : 1;
}
