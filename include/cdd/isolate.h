/* Code that may crash, run apart: the NVIDIA driver and cuDNN's GPU code
 * are the only code of others the tool calls into, and a fault there
 * (a cuDNN build that does not fit the driver, a broken driver install)
 * must become a finding with its reason, not the death of verify -- or of
 * the install whose closing verify it is.
 *
 * isolate_posix.c forks: the child is this process as it stands, with the
 * libraries already proven and loaded (nothing is loaded again by path),
 * and sends its findings back through a pipe as it makes them, so those
 * made before a crash still count. The parent has then never run the
 * driver's cuInit itself, which a forked child needs (CUDA does not
 * survive fork after cuInit). isolate_win32.c has no fork and runs fn in
 * this process (docs/security.md, "The GPU layer runs apart"); a watchdog
 * thread keeps the bound on silence there by calling the program's stall
 * handler, which must end the process: the stuck call cannot be left. */
#ifndef CDD_ISOLATE_H
#define CDD_ISOLATE_H

#include <stddef.h>

#include "cdd/strbuf.h"

/* The channel fn sends through (opaque). */
struct cdd_child;

/* In fn: hand n bytes to the parent now. 0, or an error when the parent
 * is gone or the channel failed (fn should then stop). */
int cdd_child_send(struct cdd_child *ch, const void *p, size_t n);

struct cdd_isolated {
    int isolated;   /* 1: fn ran in a child process; 0: in this one */
    int signaled;   /* the child was ended by signal `code` */
    int code;       /* its exit status (0: fn returned 0), or the signal */
    int over;       /* it sent more than max bytes and was killed for it */
    int stalled;    /* it sent nothing for stall_ms and was killed for it */
    long stall_ms;  /* the bound it ran under (0: none) */
    struct cdd_sb out; /* every byte it sent (up to max) */
};

/* Run fn(ch, arg) apart and wait for it; res->out holds what it sent
 * (free it with cdd_isolated_free). The child's exit status is 0 when fn
 * returned 0, else 1. A child that sends nothing for stall_ms
 * milliseconds (0: no bound) is killed: a hung driver. fn should send as
 * it makes progress, so the bound is on one step, not on the whole run.
 * what names it for the stall handler ("the GPU checks"). Returns 0 when
 * fn ran, however it ended (read res); CDD_E_NOMEM / CDD_E_IO when no
 * child could be started. In-process (Windows) a run silent for stall_ms
 * calls the stall handler (below) from a watchdog thread; without one it
 * waits. */
int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     size_t max, long stall_ms, const char *what,
                     struct cdd_isolated *res);

/* The program's answer to a run in this process that made no progress
 * for stall_ms (Windows): called from the watchdog thread while fn is
 * stuck; it reports and ends the process (cdd_isolate_exit), since
 * nothing can take the stuck thread out of the driver. Never called where
 * fn runs in a child (POSIX kills the child instead). */
typedef void (*cdd_stall_handler)(void *arg, const char *what, long stall_ms);
void cdd_isolate_set_stall_handler(cdd_stall_handler h, void *arg);

/* For a stall handler only: end this process now with status code, stdio
 * flushed, no exit handlers or DLL detach code run (the stuck thread holds
 * what it holds). */
void cdd_isolate_exit(int code);

/* Did it end as fn returning 0 (not killed, not over a bound)? */
int cdd_isolated_ok(const struct cdd_isolated *res);

/* How it ended, for a message: "exited with status 1", "was killed by
 * signal 11 (SIGSEGV, a segmentation fault)", "sent nothing for 300 s and
 * was stopped". buf of at least 96 bytes. */
const char *cdd_isolated_how(const struct cdd_isolated *res, char *buf,
                             size_t n);

void cdd_isolated_free(struct cdd_isolated *res);

/* Records (isolate.c): what a child sends, framed as a type byte, a 4-byte
 * length and the payload, so the parent can tell a whole record from one
 * cut by a crash. */
int cdd_child_send_rec(struct cdd_child *ch, char type, const void *p,
                       size_t n);
/* The next whole record of res->out from *pos: 1 with *type, *p, *n set
 * and *pos moved past it; 0 at the end, or at a record the child did not
 * finish (a crash mid-send). */
int cdd_isolated_next(const struct cdd_isolated *res, size_t *pos,
                      char *type, const char **p, size_t *n);

#endif
