/* Reporting: human text on stderr, one JSON object on stdout with --json. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/error.h"
#include "cdd/verify.h"
#include "report.h"

struct cdd_report {
    int json, quiet;
    int exit_code;
    int failed_checks;
    cJSON *doc;
    cJSON *checks;
};

struct cdd_report *cdd_report_new(const char *command, int json, int quiet)
{
    struct cdd_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->json = json;
    r->quiet = quiet;
    r->doc = cJSON_CreateObject();
    cJSON_AddStringToObject(r->doc, "command", command);
    cJSON_AddBoolToObject(r->doc, "ok", 1);
    cJSON_AddBoolToObject(r->doc, "changed", 0);
    cJSON_AddNumberToObject(r->doc, "exit_code", 0);
    cJSON_AddNullToObject(r->doc, "target");
    r->checks = cJSON_AddArrayToObject(r->doc, "checks");
    return r;
}

/* Human lines carry names from archives, manifests and trees: each goes to
 * the terminal as one printable line (cdd_text_one_line). */
static void put_line(const char *text)
{
    char line[8192];
    fprintf(stderr, "%s\n", cdd_text_one_line(text, line, sizeof line));
}

void cdd_say(struct cdd_report *r, const char *fmt, ...)
{
    char text[4096];
    if (r && r->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    put_line(text);
}

static void set(struct cdd_report *r, const char *key, cJSON *v)
{
    if (!v)
        return;
    if (cJSON_GetObjectItemCaseSensitive(r->doc, key))
        cJSON_ReplaceItemInObjectCaseSensitive(r->doc, key, v);
    else
        cJSON_AddItemToObject(r->doc, key, v);
}

void cdd_report_target(struct cdd_report *r, const char *root)
{
    set(r, "target", root ? cJSON_CreateString(root) : cJSON_CreateNull());
}

void cdd_report_changed(struct cdd_report *r, int changed)
{
    set(r, "changed", cJSON_CreateBool(changed));
}

void cdd_report_str(struct cdd_report *r, const char *key, const char *val)
{
    set(r, key, val ? cJSON_CreateString(val) : cJSON_CreateNull());
}

void cdd_report_num(struct cdd_report *r, const char *key, double val)
{
    set(r, key, cJSON_CreateNumber(val));
}

void cdd_report_bool(struct cdd_report *r, const char *key, int val)
{
    set(r, key, cJSON_CreateBool(val));
}

void cdd_report_json_text(struct cdd_report *r, const char *key,
                          const char *text)
{
    cJSON *v = cJSON_Parse(text);
    set(r, key, v ? v : cJSON_CreateNull());
}

void cdd_report_strv(struct cdd_report *r, const char *key,
                     const char *const *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(v[i]));
    set(r, key, a);
}

static const char *status_name(enum cdd_check_status st)
{
    switch (st) {
    case CDD_PASS:
        return "pass";
    case CDD_WARN:
        return "warn";
    case CDD_FAIL:
        return "fail";
    default:
        return "skip";
    }
}

void cdd_report_check(struct cdd_report *r, const char *name,
                      enum cdd_check_status st, const char *fmt, ...)
{
    char detail[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "status", status_name(st));
    cJSON_AddStringToObject(c, "detail", detail);
    cJSON_AddItemToArray(r->checks, c);
    if (st == CDD_FAIL)
        r->failed_checks++;
    /* Failures are shown even with --quiet: they are what the user needs. */
    if (!r->quiet || st == CDD_FAIL) {
        char text[2200];
        snprintf(text, sizeof text, "  %-4s  %s: %s", status_name(st), name,
                 detail);
        put_line(text);
    }
}

void cdd_report_checks(struct cdd_report *r, const struct cdd_checks *c)
{
    static const enum cdd_check_status map[] = {CDD_PASS, CDD_WARN, CDD_FAIL,
                                                CDD_SKIP};
    for (size_t i = 0; i < c->n; i++)
        cdd_report_check(r, c->v[i].name,
                         (unsigned)c->v[i].status < 4 ? map[c->v[i].status]
                                                      : CDD_SKIP,
                         "%s", c->v[i].detail);
}

void cdd_report_plan(struct cdd_report *r, const char *key,
                     const struct cdd_plan *p, int print)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", it->path);
        cJSON_AddStringToObject(o, "action", cdd_action_name(it->action));
        cJSON_AddStringToObject(o, "role", cdd_role_name(it->role));
        if (it->is_symlink && it->link_target)
            cJSON_AddStringToObject(o, "symlink", it->link_target);
        if (it->detail)
            cJSON_AddStringToObject(o, "detail", it->detail);
        cJSON_AddItemToArray(a, o);
        if (print && !r->quiet) {
            char text[4096];
            snprintf(text, sizeof text, "  %-9s %s%s%s",
                     cdd_action_name(it->action), it->path,
                     it->detail ? ": " : "", it->detail ? it->detail : "");
            put_line(text);
        }
    }
    set(r, key, a);
}

void cdd_report_error(struct cdd_report *r, int code)
{
    char msg[3072];
    const struct cdd_errinfo *e = cdd_last_error();
    if (e->code == code)
        cdd_error_format(msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "%s", cdd_err_message(code));
    r->exit_code = cdd_err_exit_code(code);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", cdd_err_name(code));
    cJSON_AddStringToObject(o, "message", msg);
    set(r, "error", o);
    /* One line, always, even with --quiet: an error must never be silent. */
    fprintf(stderr, "cudnn-deploy: error: %s\n", msg);
    if (code == CDD_E_USAGE)
        fprintf(stderr, "Try 'cudnn-deploy --help' for more information.\n");
}

int cdd_report_finish(struct cdd_report *r)
{
    int code = r->exit_code ? r->exit_code : r->failed_checks ? 1 : 0;
    set(r, "ok", cJSON_CreateBool(code == 0));
    set(r, "exit_code", cJSON_CreateNumber(code));
    if (r->json) {
        char *text = cJSON_Print(r->doc);
        if (text) {
            fputs(text, stdout);
            fputc('\n', stdout);
            cJSON_free(text);
        }
    }
    if (fflush(stdout) != 0 && code == 0)
        code = 4;
    cJSON_Delete(r->doc);
    free(r);
    return code;
}
