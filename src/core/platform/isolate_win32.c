/* Code that may crash, on Windows (isolate.h): there is no fork, so fn runs
 * in this process and what it sends is kept in memory; a crash there is
 * still ours. A self-spawned helper that proves and loads the libraries
 * again is the way to isolate it (docs/security.md, "The GPU layer runs
 * apart"). The bound on a silent child (stall_ms) is not kept: a hung
 * driver hangs verify here. */
#include <stdio.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/isolate.h"

struct cdd_child {
    struct cdd_isolated *res;
    size_t max;
};

int cdd_child_send(struct cdd_child *ch, const void *p, size_t n)
{
    if (ch->res->over)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "sent past its bound");
    if (cdd_sb_len(&ch->res->out) + n > ch->max) {
        ch->res->over = 1;
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "sent past its bound");
    }
    return cdd_sb_add(&ch->res->out, p, n);
}

int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     size_t max, long stall_ms, struct cdd_isolated *res)
{
    (void)stall_ms;
    memset(res, 0, sizeof *res);
    cdd_sb_init(&res->out, max, "what the checks sent");
    struct cdd_child ch = {res, max};
    res->code = fn(&ch, arg) ? 1 : 0;
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
