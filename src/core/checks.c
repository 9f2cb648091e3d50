/* The check list (checks.h) that verify's layers, doctor's checks and the
 * CLI's report share: named pass/warn/fail/skip findings with a one-line
 * detail each, and the fix (fix.h) a finding carries. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/checks.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"

const char *cdd_check_status_name(enum cdd_check_status s)
{
    static const char *const n[CDD_CHECK_N_STATUS] = {"pass", "warn", "fail",
                                                      "skip"};
    return (unsigned)s < CDD_CHECK_N_STATUS ? n[s] : "?";
}

int cdd_checks_add(struct cdd_checks *c, const char *name,
                   enum cdd_check_status st, const char *fmt, ...)
{
    /* A detail names paths and lists of them: whole, within a bound. */
    struct cdd_sb detail;
    cdd_sb_init(&detail, CDD_TEXT_MAX, "check detail");
    va_list ap;
    va_start(ap, fmt);
    int r = cdd_sb_vaddf(&detail, fmt, ap);
    va_end(ap);
    if (r) {
        /* A check left out for lack of memory: verify must not answer
         * without it (the malloc trials found checks silently missing). */
        cdd_sb_free(&detail);
        c->nomem |= r == CDD_E_NOMEM;
        c->toolong |= r == CDD_E_TOOLONG;
        return r;
    }
    r = CDD_GROW(c->v, &c->cap, c->n + 1, CDD_CHECKS_MAX, "checks");
    if (r) {
        cdd_sb_free(&detail);
        c->nomem |= r == CDD_E_NOMEM;
        c->toolong |= r == CDD_E_TOOLONG;
        return r;
    }
    struct cdd_check *k = &c->v[c->n];
    k->name = cdd_strdup(name);
    k->detail = cdd_sb_take(&detail);
    k->status = st;
    memset(&k->fix, 0, sizeof k->fix);
    if (!k->name || !k->detail) {
        free(k->name);
        free(k->detail);
        c->nomem = 1;
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    c->n++;
    c->n_fail += st == CDD_CHECK_FAIL;
    c->n_warn += st == CDD_CHECK_WARN;
    return 0;
}

void cdd_checks_fix(struct cdd_checks *c, struct cdd_fixes *fix)
{
    struct cdd_fixes *to = c->n ? &c->v[c->n - 1].fix : NULL;
    if (to && !to->n) {
        *to = *fix;
        to->label = NULL;
        memset(fix, 0, sizeof *fix);
        return;
    }
    /* Out of memory here costs the advice, not the finding. */
    if (to)
        (void)cdd_fixes_append(to, fix);
    cdd_fixes_clear(fix);
}

size_t cdd_checks_count(const struct cdd_checks *c, enum cdd_check_status st)
{
    size_t n = 0;
    for (size_t i = 0; c && i < c->n; i++)
        n += c->v[i].status == st;
    return n;
}

void cdd_checks_clear(struct cdd_checks *c)
{
    for (size_t i = 0; c && i < c->n; i++) {
        free(c->v[i].name);
        free(c->v[i].detail);
        cdd_fixes_clear(&c->v[i].fix);
    }
    if (c) {
        free(c->v);
        memset(c, 0, sizeof *c);
    }
}
