/* Fixes as data: what a finding (verify, doctor) or `env` tells the user to
 * change, as steps the command layer renders for the user's shell
 * (src/cli/shell.c: sh, fish, PowerShell, cmd), quoted there. The core builds
 * these and never prints them, so the same problem gets the same fix in
 * every command and every shell.
 *
 * A fix list holds one or more alternatives (e.g. "this shell" or
 * "system-wide"), each one or more steps to run in order: every step carries
 * the number of the alternative it belongs to (cdd_fixes_or starts the next
 * one). */
#ifndef CDD_FIX_H
#define CDD_FIX_H

#include <stddef.h>

enum cdd_fix_kind {
    CDD_FIX_SET,      /* variable name = value */
    CDD_FIX_PREPEND,  /* value (one folder, or several joined by sep) first
                         in the path-list variable name */
    CDD_FIX_WRITE,    /* the file name holds value (lines split at '\n') */
    CDD_FIX_RUN       /* run the program name with args */
};

/* Where a step acts. SET / PREPEND: this shell, the user's settings (kept
 * for new shells), or the machine's. WRITE / RUN: SYSTEM says the step needs
 * root or Administrator rights; the others need none. */
enum cdd_fix_scope { CDD_FIX_SESSION = 0, CDD_FIX_USER, CDD_FIX_SYSTEM };

#define CDD_FIX_ARGS_MAX 6

struct cdd_fix {
    enum cdd_fix_kind kind;
    enum cdd_fix_scope scope;
    unsigned alt;       /* which alternative of its list, from 0 */
    char *name;         /* variable, file or program */
    char *value;        /* SET, PREPEND, WRITE; NULL for RUN */
    char sep;           /* PREPEND: the list's separator, ':' or ';' */
    char *args[CDD_FIX_ARGS_MAX]; /* RUN: the arguments, n_args of them */
    size_t n_args;
};

struct cdd_fixes {
    struct cdd_fix *v;
    size_t n, cap;
    unsigned alt;       /* the alternative new steps join */
};

/* Append one step to the current alternative; 0 or CDD_E_NOMEM (fixes.c). */
int cdd_fixes_set(struct cdd_fixes *f, enum cdd_fix_scope scope,
                  const char *var, const char *value);
int cdd_fixes_prepend(struct cdd_fixes *f, enum cdd_fix_scope scope,
                      const char *var, const char *entry, char sep);
int cdd_fixes_write(struct cdd_fixes *f, enum cdd_fix_scope scope,
                    const char *path, const char *text);
/* argv: the program, then its arguments (at most CDD_FIX_ARGS_MAX), NULL
 * ended; CDD_E_USAGE when there are more. */
int cdd_fixes_run(struct cdd_fixes *f, enum cdd_fix_scope scope,
                  const char *const *argv);
/* Later steps form the next alternative (nothing when the current one is
 * still empty). */
void cdd_fixes_or(struct cdd_fixes *f);
/* Appends every step of src, keeping its alternatives apart from dst's. */
int cdd_fixes_append(struct cdd_fixes *dst, const struct cdd_fixes *src);
/* How many alternatives the list holds. */
unsigned cdd_fixes_alternatives(const struct cdd_fixes *f);
void cdd_fixes_clear(struct cdd_fixes *f);

const char *cdd_fix_kind_name(enum cdd_fix_kind k);   /* "set", ... */
const char *cdd_fix_scope_name(enum cdd_fix_scope s); /* "session", ... */

#endif
