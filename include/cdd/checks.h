/* The check type: one named finding (pass, warn, fail or skip) with a
 * one-line detail and the fix (fix.h) it carries, and the list a core
 * operation collects them in. verify's layers, doctor, the tree's verify
 * record (verified.c) and the CLI's report all use this one type, so it
 * sits in the base of the core library (docs/design.md, Checks and
 * reports). */
#ifndef CDD_CHECKS_H
#define CDD_CHECKS_H

#include <stddef.h>

#include "cdd/compat_attr.h"
#include "cdd/fix.h"

/* The outcome of a check, in the order of its JSON word (pass, warn, fail,
 * skip: cdd_check_status_name). */
enum cdd_check_status {
    CDD_CHECK_PASS = 0,
    CDD_CHECK_WARN,
    CDD_CHECK_FAIL,
    CDD_CHECK_SKIP
};
#define CDD_CHECK_N_STATUS 4

/* Checks in one list: verify makes a few per manifest entry (an archive has
 * at most CDD_MAX_ENTRIES, 20000: extract.h) and per copy or dependency it
 * finds, doctor a few per folder it looks at. Past this cdd_checks_add
 * fails with CDD_E_TOOLONG, and the list is incomplete. */
#define CDD_CHECKS_MAX 100000

struct cdd_check {
    char *name;     /* "files", "load.search libcudnn.so.8", "gpu.conv" */
    enum cdd_check_status status;
    char *detail;   /* what a person needs: what, where, what to do */
    struct cdd_fixes fix; /* the commands that fix it (fix.h), maybe none */
};

struct cdd_checks {
    struct cdd_check *v;
    size_t n, cap;
    size_t n_fail, n_warn;
    /* An allocation failed while checking (a check could not be recorded,
     * or could not be done): the list is incomplete, and the command must
     * say out of memory rather than report it (malloc trials). */
    int nomem;
    /* A check was refused past a bound (its detail past CDD_TEXT_MAX, the
     * list past CDD_CHECKS_MAX): the list is incomplete too, and a command
     * that answers with it says so (CDD_E_TOOLONG) instead. */
    int toolong;
};

/* "pass", "warn", "fail", "skip"; "?" for a value outside the enum. */
const char *cdd_check_status_name(enum cdd_check_status s);
/* Append a check (printf-style detail, bounded by CDD_TEXT_MAX). 0, or
 * CDD_E_NOMEM (c->nomem set) / CDD_E_TOOLONG (c->toolong set: the detail
 * past CDD_TEXT_MAX, the list past CDD_CHECKS_MAX), recorded. */
int cdd_checks_add(struct cdd_checks *c, const char *name,
                   enum cdd_check_status st, const char *fmt, ...)
    CDD_PRINTF(4, 5);
/* The fix of the check added last: fix's steps move there (fix is left
 * empty, also when there is no check). */
void cdd_checks_fix(struct cdd_checks *c, struct cdd_fixes *fix);
/* How many checks have status st. */
size_t cdd_checks_count(const struct cdd_checks *c, enum cdd_check_status st);
/* Free every check; c is empty again (NULL is fine). */
void cdd_checks_clear(struct cdd_checks *c);

#endif
