/* Code that may crash, run in a forked child (isolate.h). No exec: the
 * child is this process with everything already loaded and proven; it
 * writes what fn sends into a pipe and leaves with _exit (no atexit
 * handlers, no stdio buffers flushed twice). Called with no other thread
 * running (verify's threads have all been joined by then). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cdd/error.h"
#include "cdd/isolate.h"

struct cdd_child {
    int fd;
};

int cdd_child_send(struct cdd_child *ch, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        ssize_t w = write(ch->fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return cdd_fail_errno(NULL, errno, "cannot send to the parent");
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Read everything the child sends, up to max; past it, or after stall_ms
 * with nothing sent (0: no bound), kill the child. */
static int collect(int fd, pid_t pid, size_t max, long stall_ms,
                   struct cdd_isolated *res)
{
    char buf[16384]; /* fixed: a read's chunk */
    long last = now_ms();
    for (;;) {
        if (stall_ms > 0) {
            long left = last + stall_ms - now_ms();
            struct pollfd pf = {.fd = fd, .events = POLLIN};
            int k = left > 0 ? poll(&pf, 1, left > 60000 ? 60000 : (int)left)
                             : 0;
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return cdd_fail_errno(NULL, errno, "cannot wait for the "
                                                   "child process");
            if (k == 0) {
                if (now_ms() - last < stall_ms)
                    continue; /* a wait of at most a minute ended */
                res->stalled = 1;
                kill(pid, SIGKILL);
                return 0;
            }
        }
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return cdd_fail_errno(NULL, errno, "cannot read from the child "
                                               "process");
        if (n == 0)
            return 0;
        last = now_ms();
        if (cdd_sb_len(&res->out) + (size_t)n > max) {
            res->over = 1;
            kill(pid, SIGKILL);
            return 0;
        }
        int r = cdd_sb_add(&res->out, buf, (size_t)n);
        if (r) {
            kill(pid, SIGKILL);
            return r;
        }
    }
}

int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     const struct cdd_respawn *again, size_t max,
                     long stall_ms, const char *what,
                     struct cdd_isolated *res)
{
    (void)again; /* the forked child has fn's state as it stands */
    (void)what;
    int p[2];
    memset(res, 0, sizeof *res);
    res->stall_ms = stall_ms > 0 ? stall_ms : 0;
    cdd_sb_init(&res->out, max, "what the child process sent");
    if (pipe(p) != 0)
        return cdd_fail_errno(NULL, errno, "cannot make a pipe for the "
                                           "child process");
    /* Flushed now, or the child's copy of a half-written stdio buffer
     * could reach the output too (it leaves by _exit, but be sure). */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        if (e == ENOMEM || e == EAGAIN)
            return cdd_fail(CDD_E_NOMEM, NULL, e, "cannot start a child "
                                                 "process: out of memory (or "
                                                 "the process limit reached)");
        return cdd_fail_errno(NULL, e, "cannot start a child process");
    }
    if (pid == 0) {
        struct cdd_child ch = {p[1]};
        close(p[0]);
        /* A fault ends the child by its signal, which the parent names:
         * no handler inherited (a sanitizer's would exit 1 instead). */
        static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
            signal(fatal[i], SIG_DFL);
        int r = fn(&ch, arg);
        _exit(r ? 1 : 0);
    }
    close(p[1]);
    int r = collect(p[0], pid, max, res->stall_ms, res);
    close(p[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            if (!r)
                r = cdd_fail_errno(NULL, errno, "cannot wait for the child "
                                                "process");
            return r;
        }
    }
    if (WIFSIGNALED(st)) {
        res->signaled = 1;
        res->code = WTERMSIG(st);
    } else {
        res->code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    return r;
}

int cdd_isolated_ok(const struct cdd_isolated *res)
{
    return !res->signaled && !res->over && !res->stalled && res->code == 0;
}

static const char *signal_words(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV, a segmentation fault";
    case SIGBUS: return "SIGBUS, a bus error";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGFPE: return "SIGFPE, an arithmetic fault";
    case SIGABRT: return "SIGABRT, an abort";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "a signal";
    }
}

const char *cdd_isolated_how(const struct cdd_isolated *res, char *buf,
                             size_t n)
{
    if (res->over)
        snprintf(buf, n, "sent more than its bound and was stopped");
    else if (res->stalled)
        snprintf(buf, n, "made no progress for %g s and was stopped",
                 (double)res->stall_ms / 1000.0);
    else if (res->signaled)
        snprintf(buf, n, "was killed by signal %d (%s)", res->code,
                 signal_words(res->code));
    else
        snprintf(buf, n, "exited with status %d", res->code);
    return buf;
}

void cdd_isolated_free(struct cdd_isolated *res)
{
    cdd_sb_free(&res->out);
}

int cdd_isolate_child_main(int argc, char **argv,
                           const struct cdd_isolate_entry *v, size_t n)
{
    (void)argc; /* a forked child never starts afresh: no such run here */
    (void)argv;
    (void)v;
    (void)n;
    return -1;
}
