/* Threads on POSIX: pthreads. See cdd/thread.h. */
#define _GNU_SOURCE
#include "cdd/thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    cdd_error_thread_end(); /* the thread's error record and kept names */
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
        /* EAGAIN: "insufficient resources", which is what glibc answers
         * when it cannot allocate the new thread's memory (the
         * malloc-failure trials): exit 4 saying so, not an I/O error. */
        if (e == EAGAIN)
            return cdd_fail(CDD_E_NOMEM, NULL, e, "cannot start a thread: "
                                                 "out of memory (or the "
                                                 "thread limit reached)");
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

/* ---- the cgroup's CPU quota ------------------------------------------------
 * A container limited to 2 CPUs by quota (docker --cpus=2, Kubernetes
 * limits) still sees every host CPU in its affinity mask; workers beyond the
 * quota only get throttled. The quota is read from the cgroup files: v2
 * cpu.max ("max 100000" or "<quota> <period>"), v1 cpu.cfs_quota_us (-1:
 * none) and cpu.cfs_period_us, at the process's cgroup and every ancestor
 * (a parent's limit binds its children), the smallest one winning. */

static char *join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* The first line of a small file, NUL-terminated and without its newline. */
static char *read_line(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t cap = 0;
    if (!f)
        return NULL;
    ssize_t n = getline(&buf, &cap, f);
    fclose(f);
    if (n <= 0 || n > 4096) {
        free(buf);
        return NULL;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return buf;
}

static long long read_ll(const char *path, int *ok)
{
    char *s = read_line(path), *end;
    long long v = 0;
    *ok = 0;
    if (s) {
        errno = 0;
        v = strtoll(s, &end, 10);
        *ok = !errno && end != s && *end == '\0';
    }
    free(s);
    return v;
}

/* CPUs a quota allows, rounded up; 0 for none or nonsense. */
static int quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long n = (quota + period - 1) / period;
    return n > 4096 ? 4096 : (int)n;
}

/* The quota set in one cgroup folder (0: none). */
static int level_limit(const char *dir, int v2)
{
    int lim = 0, ok, ok2;
    if (v2) {
        char *p = join3(dir, "/cpu.max", ""), *line = p ? read_line(p) : NULL;
        long long q, per;
        char *end;
        if (line && strncmp(line, "max", 3) != 0) {
            errno = 0;
            q = strtoll(line, &end, 10);
            if (!errno && end != line && *end == ' ') {
                per = strtoll(end + 1, &end, 10);
                if (!errno && *end == '\0')
                    lim = quota_cpus(q, per);
            }
        }
        free(line);
        free(p);
        return lim;
    }
    char *pq = join3(dir, "/cpu.cfs_quota_us", "");
    char *pp = join3(dir, "/cpu.cfs_period_us", "");
    if (pq && pp) {
        long long q = read_ll(pq, &ok), per = read_ll(pp, &ok2);
        if (ok && ok2)
            lim = quota_cpus(q, per);
    }
    free(pq);
    free(pp);
    return lim;
}

static int min_limit(int a, int b)
{
    return !a ? b : !b ? a : a < b ? a : b;
}

/* From mount/cg up to mount, the smallest quota. A cgroup path that is not
 * under the mount (v1 in a container without a cgroup namespace shows the
 * host's path, while the mount is the container's own cgroup) counts as
 * the mount itself. */
static int walk_up(const char *mount, const char *cg, int v2)
{
    struct stat sb;
    char *dir = join3(mount, cg[0] == '/' ? "" : "/", cg);
    int lim = 0;
    if (!dir)
        return 0;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        dir[strlen(mount)] = '\0';
    for (;;) {
        lim = min_limit(lim, level_limit(dir, v2));
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= strlen(mount) || !slash ||
            (size_t)(slash - dir) < strlen(mount))
            break;
        *slash = '\0';
    }
    free(dir);
    return lim;
}

/* Is name one of the comma-separated controllers? */
static int has_controller(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *s = list; s && *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, name, n) == 0)
            return 1;
        s = e ? e + 1 : NULL;
    }
    return 0;
}

int cdd_cgroup_cpu_limit(const char *sysfs_root, const char *proc_cgroup)
{
    FILE *f = fopen(proc_cgroup, "r");
    char *line = NULL;
    size_t cap = 0;
    int lim = 0;
    if (!f)
        return 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        /* hierarchy-id:controllers:path */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        if (strcmp(line, "0") == 0 && !*ctrls) {
            lim = min_limit(lim, walk_up(sysfs_root, path, 1));
        } else if (has_controller(ctrls, "cpu")) {
            /* v1: mounted under the controllers' names ("cpu,cpuacct"),
             * often also as "cpu". */
            char *m = join3(sysfs_root, "/", ctrls);
            char *m2 = join3(sysfs_root, "/cpu", "");
            struct stat sb;
            const char *mount = m && stat(m, &sb) == 0 ? m : m2;
            if (mount)
                lim = min_limit(lim, walk_up(mount, path, 0));
            free(m);
            free(m2);
        }
    }
    free(line);
    fclose(f);
    return lim;
}

int cdd_cpu_count(void)
{
    int n = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        n = CPU_COUNT(&set);
#endif
    if (n <= 0) {
        long k = sysconf(_SC_NPROCESSORS_ONLN);
        n = k > 0 ? (int)k : 1;
    }
    int q = cdd_cgroup_cpu_limit("/sys/fs/cgroup", "/proc/self/cgroup");
    return q > 0 && q < n ? q : n;
}
