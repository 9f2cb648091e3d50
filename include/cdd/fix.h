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
/* Steps in one fix list: a finding's fix is a few steps per alternative
 * (envset.c: four for one tree); a list that gathers them (cdd_fixes_append)
 * stays far below this. Past it an append fails with CDD_E_TOOLONG. */
#define CDD_FIX_STEPS_MAX 1024

struct cdd_fix {
    enum cdd_fix_kind kind;
    enum cdd_fix_scope scope;
    unsigned alt;       /* which alternative of its list, from 0 */
    char *name;         /* variable, file or program */
    char *value;        /* SET, PREPEND, WRITE; NULL for RUN */
    char sep;           /* PREPEND: the list's separator, ':' or ';' */
    char *args[CDD_FIX_ARGS_MAX]; /* RUN: the arguments, n_args of them */
    size_t n_args;
    char *label;        /* what its alternative achieves ("to use CUDA
                           11.6"), or NULL; the first step's counts */
};

struct cdd_fixes {
    struct cdd_fix *v;
    size_t n, cap;
    unsigned alt;       /* the alternative new steps join */
    const char *label;  /* given to new steps (cdd_fixes_label) */
};

/* Append one step to the current alternative; 0, CDD_E_NOMEM, or
 * CDD_E_TOOLONG past CDD_FIX_STEPS_MAX (fixes.c). */
int cdd_fixes_set(struct cdd_fixes *f, enum cdd_fix_scope scope,
                  const char *var, const char *value);
/* entry: one folder; CDD_E_TARGET, with the reason, when the list cannot
 * hold it as one entry (cdd_fix_list_entry_fault). */
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
/* Steps added from now on carry label (NULL: none); f keeps a pointer,
 * each step a copy. */
void cdd_fixes_label(struct cdd_fixes *f, const char *label);
/* Appends every step of src, keeping its alternatives apart from dst's. */
int cdd_fixes_append(struct cdd_fixes *dst, const struct cdd_fixes *src);
/* How many alternatives the list holds. */
unsigned cdd_fixes_alternatives(const struct cdd_fixes *f);
void cdd_fixes_clear(struct cdd_fixes *f);

/* Why entry cannot be one entry of the path list var separated by sep (a
 * separator in it; LD_LIBRARY_PATH: ';' too; empty; a control character),
 * or NULL when it can (static text; the grammar is in fixes.c). */
const char *cdd_fix_list_entry_fault(const char *var, const char *entry,
                                     char sep);
/* Why dir cannot be a line of /etc/ld.so.conf.d ('#', a control character,
 * white space at its end, not absolute), or NULL. */
const char *cdd_fix_ldconf_fault(const char *dir);

/* The advice both verify and doctor give, so that they agree:
 * cdd_fixes_path_first: dirs (joined by the host's separator) first on the
 * list var: this shell, or kept (Windows: the machine's Path, which comes
 * before the user's; POSIX: the user's start-up file).
 * (dirs as read from the list itself: not checked again.)
 * cdd_fixes_libdir: the library folder dir searched by the loader: Windows
 * as above on PATH; POSIX LD_LIBRARY_PATH in this shell, or system-wide
 * /etc/ld.so.conf.d/cudnn.conf and ldconfig; an alternative dir cannot be
 * written in is left out, and CDD_E_TARGET when it fits none.
 * Windows paths get backslashes. 0 or CDD_E_NOMEM. */
int cdd_fixes_path_first(struct cdd_fixes *f, int windows, const char *var,
                         const char *dirs);
int cdd_fixes_libdir(struct cdd_fixes *f, int windows, const char *dir);

const char *cdd_fix_kind_name(enum cdd_fix_kind k);   /* "set", ... */
const char *cdd_fix_scope_name(enum cdd_fix_scope s); /* "session", ... */

#endif
