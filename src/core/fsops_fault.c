/* Fault injection for the filesystem layer: tests make the n-th mutating
 * operation fail (or kill the process there) to prove that every step of a
 * transaction can be undone. Shared by the POSIX and Win32 layers. Built
 * only with -DCDD_FAULT_INJECTION=ON (fsops.h): a release binary has none of
 * it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"

#ifndef CDD_FAULT_INJECTION
#error "fsops_fault.c is built only with CDD_FAULT_INJECTION"
#endif

static atomic_long fault_at;    /* 0: off */
static atomic_long fault_count; /* mutating operations seen */
static int fault_mode;          /* 0 fail, 1 kill */

void cdd_fs_fault_set(long n, int mode)
{
    atomic_store(&fault_count, 0);
    fault_mode = mode;
    atomic_store(&fault_at, n);
}

long cdd_fs_fault_count(void)
{
    return atomic_load(&fault_count);
}

void cdd_fs_fault_from_env(void)
{
    const char *v = getenv("CUDNN_DEPLOY_TEST_FAULT");
    if (!v || !*v)
        return;
    int mode = -1;
    if (strncmp(v, "fail:", 5) == 0)
        mode = 0;
    else if (strncmp(v, "kill:", 5) == 0)
        mode = 1;
    if (mode < 0)
        return;
    long n = strtol(v + 5, NULL, 10);
    if (n > 0)
        cdd_fs_fault_set(n, mode);
}

int cdd_fs_fault_point(const char *op, const char *path)
{
    long at = atomic_load(&fault_at);
    long n = atomic_fetch_add(&fault_count, 1) + 1;
    if (at <= 0 || n != at)
        return 0;
    if (fault_mode == 1) {
        /* Say where, when asked (CUDNN_DEPLOY_TEST_FAULT_MARK names a file
         * to append one line to): a harness can then tell a process that
         * reached its kill from one that never got there, whatever the
         * platform makes of the kill itself (Wine's TerminateProcess can
         * hang or report another status: docs/windows.md). Not a printed
         * line: the core does not print. */
        const char *mark = getenv("CUDNN_DEPLOY_TEST_FAULT_MARK");
        FILE *f = mark && *mark ? fopen(mark, "a") : NULL;
        if (f) {
            fprintf(f, "kill %ld %s %s\n", n, op, path ? path : "");
            fclose(f);
        }
        /* Die the hard way, as a power cut or `kill -9` would. */
        fflush(NULL);
        cdd_kill_self();
    }
    return cdd_fail(CDD_E_FAULT, path, 0, "injected fault at %s (operation %ld)",
                    op, n);
}
