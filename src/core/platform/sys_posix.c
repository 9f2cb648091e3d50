/* The process on POSIX (sys.h): SIGINT/SIGTERM/SIGHUP request cancellation
 * instead of killing the process, so that a transaction in progress rolls
 * back before the tool exits; the process id, the clocks, sleeping, and the
 * fault injector's hard kill. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cdd/error.h"
#include "cdd/sys.h"

static void on_signal(int sig)
{
    (void)sig;
    cdd_cancel_request();
}

void cdd_cancel_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A closed stdout (| head) must become a write error, not a death. */
    signal(SIGPIPE, SIG_IGN);
}

long cdd_getpid(void)
{
    return (long)getpid();
}

int cdd_isatty(int fd)
{
    return isatty(fd);
}

double cdd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

double cdd_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cdd_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void cdd_kill_self(void)
{
    raise(SIGKILL);
    _exit(137);
}

int cdd_random_bytes(void *buf, size_t n)
{
    /* /dev/urandom: everywhere POSIX, unlike getrandom(2) or getentropy. */
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    if (fd < 0)
        return cdd_fail_errno("/dev/urandom", errno, "cannot open");
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            close(fd);
            return cdd_fail_errno("/dev/urandom", e, "cannot read");
        }
        got += (size_t)r;
    }
    close(fd);
    return 0;
}
