/* A tiny thread wrapper: threads, a mutex and a condition variable, enough
 * for the extraction workers and the decode/write pipeline. The platform is
 * known only to thread_posix.c (pthreads) and thread_win32.c (Win32 threads,
 * SRW locks, condition variables). Objects are heap-allocated so that this
 * header needs no platform type. */
#ifndef CDD_THREAD_H
#define CDD_THREAD_H

struct cdd_thread;
struct cdd_mutex;
struct cdd_cond;

/* Start fn(arg) on a new thread. CDD_E_NOMEM / CDD_E_IO when it cannot. */
int cdd_thread_start(struct cdd_thread **out, int (*fn)(void *), void *arg);
/* Wait for the thread and free it; returns fn's result (0 for NULL). */
int cdd_thread_join(struct cdd_thread *t);

int cdd_mutex_new(struct cdd_mutex **out);
void cdd_mutex_lock(struct cdd_mutex *m);
void cdd_mutex_unlock(struct cdd_mutex *m);
void cdd_mutex_free(struct cdd_mutex *m);

int cdd_cond_new(struct cdd_cond **out);
void cdd_cond_wait(struct cdd_cond *c, struct cdd_mutex *m);
void cdd_cond_broadcast(struct cdd_cond *c);
void cdd_cond_free(struct cdd_cond *c);

/* Processors this process may run on (at least 1): the affinity mask,
 * capped by the cgroup's CPU quota (cdd_cgroup_cpu_limit). */
int cdd_cpu_count(void);
/* The CPU quota of this process's cgroup and its ancestors, as a number of
 * CPUs rounded up; 0 when there is none (or no cgroups: Windows). The roots
 * are "/sys/fs/cgroup" and "/proc/self/cgroup"; they are parameters only so
 * that tests can give a fake cgroup tree. */
int cdd_cgroup_cpu_limit(const char *sysfs_root, const char *proc_cgroup);

#endif
