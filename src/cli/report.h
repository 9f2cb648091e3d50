/* The report of one command: human lines on stderr as it goes, and, with
 * --json, exactly one JSON object on stdout at the end (docs/design.md,
 * Report). The only
 * CLI file that uses cJSON. */
#ifndef CDD_REPORT_H
#define CDD_REPORT_H

#include <stdint.h>

#include "cdd/compat_attr.h"
#include "cdd/deploy.h"

enum cdd_check_status { CDD_PASS, CDD_WARN, CDD_FAIL, CDD_SKIP };

struct cdd_report;

struct cdd_report *cdd_report_new(const char *command, int json, int quiet);
/* Human text (stderr), silenced by --quiet. */
void cdd_say(struct cdd_report *r, const char *fmt, ...)
    CDD_PRINTF(2, 3);
void cdd_report_target(struct cdd_report *r, const char *root);
void cdd_report_changed(struct cdd_report *r, int changed);
void cdd_report_check(struct cdd_report *r, const char *name,
                      enum cdd_check_status st, const char *fmt, ...)
    CDD_PRINTF(4, 5);
/* Every check a core operation collected (verify, doctor), in order. */
struct cdd_checks;
void cdd_report_checks(struct cdd_report *r, const struct cdd_checks *c);
/* Extra top-level members of the JSON object. */
void cdd_report_str(struct cdd_report *r, const char *key, const char *val);
void cdd_report_num(struct cdd_report *r, const char *key, double val);
void cdd_report_bool(struct cdd_report *r, const char *key, int val);
/* A JSON document text (e.g. a manifest) as a member. */
void cdd_report_json_text(struct cdd_report *r, const char *key,
                          const char *text);
/* "plan": [{path, action, role, [detail]}]; with human lines unless quiet. */
void cdd_report_plan(struct cdd_report *r, const char *key,
                     const struct cdd_plan *p, int print);
/* A list of strings. */
void cdd_report_strv(struct cdd_report *r, const char *key,
                     const char *const *v, size_t n);
/* Record the failure of the command (from cdd_last_error()). */
void cdd_report_error(struct cdd_report *r, int code);
/* Print the final output and return the exit code: the error's, else 1 if a
 * check failed, else 0. Frees r. */
int cdd_report_finish(struct cdd_report *r);

#endif
