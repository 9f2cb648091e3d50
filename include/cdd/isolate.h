/* Code that may crash, run apart: the NVIDIA driver and cuDNN's GPU code
 * are the only code of others the tool calls into, and a fault there
 * (a cuDNN build that does not fit the driver, a broken driver install)
 * must become a finding with its reason, not the death of verify -- or of
 * the install whose closing verify it is.
 *
 * isolate_posix.c forks: the child is this process as it stands, with the
 * libraries already proven and loaded (nothing is loaded again by path),
 * and runs fn(ch, arg), sending its findings back through a pipe as it
 * makes them, so those made before a crash still count. The parent has
 * then never run the driver's cuInit itself, which a forked child needs
 * (CUDA does not survive fork after cuInit).
 *
 * isolate_win32.c has no fork: it starts this program's executable afresh
 * (EXE --cdd-isolated-child ENTRY HANDLE), hands it the request that
 * rebuilds the step's state there (struct cdd_respawn), and the program's
 * main hands such a run to cdd_isolate_child_main, which runs the named
 * entry; the records come back the same way. docs/security.md, "The GPU
 * layer runs apart". */
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
    int signaled;   /* the child was ended by signal `code` (Windows: by
                       the exception whose code is its exit status) */
    int code;       /* its exit status (0: fn returned 0), or the signal */
    int over;       /* it sent more than max bytes and was killed for it */
    int stalled;    /* it sent nothing for stall_ms and was killed for it */
    long stall_ms;  /* the bound it ran under (0: none) */
    struct cdd_sb out; /* every byte it sent (up to max) */
};

/* What a process started afresh needs to run the same step (Windows): the
 * name of an entry of the program's table (cdd_isolate_child_main) and the
 * request, the bytes from which that entry rebuilds fn's arg. */
struct cdd_respawn {
    const char *entry; /* a plain word: [a-z0-9_-], at most 64 bytes */
    const void *req;
    size_t n;          /* at most 16 MiB */
};

/* Run the step apart and wait for it: POSIX fn(ch, arg) in a forked child,
 * Windows again's entry in a fresh process (again NULL there: CDD_E_NOTSUP).
 * res->out holds what it sent (free it with cdd_isolated_free). The
 * child's exit status is 0 when the step returned 0, else 1. A child that
 * sends nothing for stall_ms milliseconds (0: no bound) is killed: a hung
 * driver. The step should send as it makes progress, so the bound is on
 * one step, not on the whole run. Returns 0 when the step ran, however it
 * ended (read res); CDD_E_NOMEM / CDD_E_IO when no child could be
 * started. */
int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     const struct cdd_respawn *again, size_t max,
                     long stall_ms, const char *what,
                     struct cdd_isolated *res);

/* One step a fresh process can run: its name and the function that
 * rebuilds its state from the request and runs it (0: it ran to its end). */
struct cdd_isolate_entry {
    const char *name;
    int (*run)(struct cdd_child *ch, const void *req, size_t n);
};

/* The word that marks a child run on the command line. */
#define CDD_ISOLATE_CHILD_ARG "--cdd-isolated-child"

/* For a program's main, first: when argv is a child run (argv[1] is
 * CDD_ISOLATE_CHILD_ARG; Windows only), run its entry from v and return the
 * process's exit status (0 ran, 1 failed, 2 not a run this program knows);
 * else -1, and the program goes on as itself. */
int cdd_isolate_child_main(int argc, char **argv,
                           const struct cdd_isolate_entry *v, size_t n);

/* Did it end as fn returning 0 (not killed, not over a bound)? */
int cdd_isolated_ok(const struct cdd_isolated *res);

/* How it ended, for a message: "exited with status 1", "was killed by
 * signal 11 (SIGSEGV, a segmentation fault)", "crashed with exception
 * 0xC0000005 (an access violation)", "made no progress for 300 s and was
 * stopped". buf of at least 96 bytes. */
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
