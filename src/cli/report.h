/* The report of one command: human lines on stderr as it goes, and, with
 * --json, exactly one JSON object on stdout at the end, written with the
 * core's JSON writer (jsonw.h; docs/design.md, Checks and reports). Checks
 * are the core's check type (checks.h), whoever found them. */
#ifndef CDD_REPORT_H
#define CDD_REPORT_H

#include <stdint.h>

#include "cdd/checks.h"
#include "cdd/compat_attr.h"
#include "cdd/deploy.h"

struct cdd_jw;

struct cdd_report;

struct cdd_report *cdd_report_new(const char *command, int json, int quiet);
/* How human text looks: every check (verbose) or passing layers folded;
 * colour codes or none; the shell (enum cdd_shell) fixes are written for. */
void cdd_report_style(struct cdd_report *r, int verbose, int color,
                      int shell);
int cdd_report_verbose(const struct cdd_report *r);
/* s as one word for the report's shell (for commands in human text),
 * malloc'd; s itself when that shell cannot quote it; NULL: no memory. */
char *cdd_report_quote(const struct cdd_report *r, const char *s);
/* Human text (stderr), silenced by --quiet. */
void cdd_say(struct cdd_report *r, const char *fmt, ...)
    CDD_PRINTF(2, 3);
void cdd_report_target(struct cdd_report *r, const char *root);
void cdd_report_changed(struct cdd_report *r, int changed);
/* One check the command itself found (the same type as the core's). */
void cdd_report_check(struct cdd_report *r, const char *name,
                      enum cdd_check_status st, const char *fmt, ...)
    CDD_PRINTF(4, 5);
/* Every check a core operation collected (verify, doctor), in order, with
 * its fix. Human form: the checks of a layer (the name up to '.' or ' ')
 * that passed fold into one line, summary(ud, layer) or a count (NULL
 * summary, or one returning NULL); warnings, failures and skips in full;
 * --verbose: everything. The JSON always has every check. */
void cdd_report_layers(struct cdd_report *r, const struct cdd_checks *c,
                       const char *(*summary)(void *ud, const char *layer),
                       void *ud);
void cdd_report_checks(struct cdd_report *r, const struct cdd_checks *c);
/* Extra top-level members of the JSON object. */
void cdd_report_str(struct cdd_report *r, const char *key, const char *val);
void cdd_report_num(struct cdd_report *r, const char *key, double val);
void cdd_report_bool(struct cdd_report *r, const char *key, int val);
/* A document of the JSON writer (jsonw.h: every container closed, not
 * finished) as a member; doc is consumed. A doc that failed (no memory)
 * or NULL makes the JSON incomplete: it is then not printed (finish). */
void cdd_report_doc(struct cdd_report *r, const char *key,
                    struct cdd_jw *doc);
/* "plan": [{path, action, role, [detail]}]; with human lines unless quiet. */
void cdd_report_plan(struct cdd_report *r, const char *key,
                     const struct cdd_plan *p, int print);
/* A list of strings. */
void cdd_report_strv(struct cdd_report *r, const char *key,
                     const char *const *v, size_t n);
/* Record the failure of the command (from cdd_last_error()). */
void cdd_report_error(struct cdd_report *r, int code);
/* What the user probably needs after that error: "cudnn-deploy: hint: ..."
 * (even with --quiet), and "hint" in the JSON error object. */
void cdd_report_hint(struct cdd_report *r, const char *hint);
/* Print the final output and return the exit code: the error's, else 1 if a
 * check failed, else 0. Frees r. */
int cdd_report_finish(struct cdd_report *r);

#endif
