/* Code that may crash, on Windows (isolate.h): there is no fork, so fn runs
 * in this process and what it sends is kept in memory; a crash there is
 * still ours. A self-spawned helper that proves and loads the libraries
 * again is the way to isolate it (docs/security.md, "The GPU layer runs
 * apart").
 *
 * The bound on silence is kept by a watchdog thread: fn's sends stamp the
 * time of its last progress, and a run silent for stall_ms calls the
 * program's stall handler, which reports and ends the process -- a thread
 * stuck in the driver cannot be taken out of it. Without a handler (or
 * when the watchdog cannot be started) the run waits, as before. */
#include <stdio.h>
#include <string.h>

#include <windows.h>

#include "cdd/error.h"
#include "cdd/isolate.h"

struct cdd_child {
    struct cdd_isolated *res;
    size_t max;
    volatile LONG64 last; /* GetTickCount64 of the last send */
};

static cdd_stall_handler stall_fn;
static void *stall_arg;

void cdd_isolate_set_stall_handler(cdd_stall_handler h, void *arg)
{
    stall_fn = h;
    stall_arg = arg;
}

void cdd_isolate_exit(int code)
{
    fflush(NULL);
    TerminateProcess(GetCurrentProcess(), (UINT)code);
}

static LONG64 now_ms(void)
{
    return (LONG64)GetTickCount64();
}

int cdd_child_send(struct cdd_child *ch, const void *p, size_t n)
{
    InterlockedExchange64(&ch->last, now_ms());
    if (ch->res->over)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "sent past its bound");
    if (cdd_sb_len(&ch->res->out) + n > ch->max) {
        ch->res->over = 1;
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "sent past its bound");
    }
    return cdd_sb_add(&ch->res->out, p, n);
}

struct watch {
    struct cdd_child *ch;
    HANDLE done;       /* set when fn returns */
    long stall_ms;
    const char *what;
};

static DWORD WINAPI watchdog(LPVOID p)
{
    struct watch *w = p;
    for (;;) {
        LONG64 last = InterlockedCompareExchange64(&w->ch->last, 0, 0);
        LONG64 left = last + w->stall_ms - now_ms();
        if (left <= 0) {
            stall_fn(stall_arg, w->what ? w->what : "the checks",
                     w->stall_ms);
            return 0; /* a handler that returned: the run goes on waiting */
        }
        if (WaitForSingleObject(w->done, (DWORD)(left > 60000 ? 60000 : left))
            == WAIT_OBJECT_0)
            return 0;
    }
}

int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     size_t max, long stall_ms, const char *what,
                     struct cdd_isolated *res)
{
    memset(res, 0, sizeof *res);
    cdd_sb_init(&res->out, max, "what the checks sent");
    struct cdd_child ch = {res, max, now_ms()};
    struct watch w = {&ch, NULL, stall_ms, what};
    HANDLE t = NULL;
    if (stall_ms > 0 && stall_fn) {
        w.done = CreateEventW(NULL, TRUE, FALSE, NULL);
        t = w.done ? CreateThread(NULL, 0, watchdog, &w, 0, NULL) : NULL;
        res->stall_ms = t ? stall_ms : 0;
    }
    res->code = fn(&ch, arg) ? 1 : 0;
    if (t) {
        SetEvent(w.done);
        WaitForSingleObject(t, INFINITE);
        CloseHandle(t);
    }
    if (w.done)
        CloseHandle(w.done);
    cdd_clear_error();
    return 0;
}

int cdd_isolated_ok(const struct cdd_isolated *res)
{
    return !res->over && res->code == 0;
}

const char *cdd_isolated_how(const struct cdd_isolated *res, char *buf,
                             size_t n)
{
    if (res->over)
        snprintf(buf, n, "sent more than its bound and was stopped");
    else
        snprintf(buf, n, "ended with status %d", res->code);
    return buf;
}

void cdd_isolated_free(struct cdd_isolated *res)
{
    cdd_sb_free(&res->out);
}
