/* Reporting: human text on stderr, one JSON object on stdout with --json.
 * The human form is short by default: a layer whose checks all passed is
 * one line, warnings and failures are shown in full with their fixes
 * rendered for the user's shell (shell.c); --verbose shows every check.
 * Colour only when the caller says so (a terminal, no NO_COLOR, no
 * --json: commands.c decides). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cdd/jsonparse.h"

#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cdd/verify.h"
#include "report.h"
#include "shell.h"

struct cdd_report {
    int json, quiet;
    int verbose, color;
    enum cdd_shell shell;
    int shell_used;       /* a fix was rendered: "shell" goes in the JSON */
    int exit_code;
    int failed_checks;
    cJSON *doc;
    cJSON *checks;
    long json_failures; /* cdd_json_alloc_failures() when it began */
};

struct cdd_report *cdd_report_new(const char *command, int json, int quiet)
{
    struct cdd_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->json = json;
    r->quiet = quiet;
    cdd_json_track();
    r->json_failures = cdd_json_alloc_failures();
    r->doc = cJSON_CreateObject();
    cJSON_AddStringToObject(r->doc, "command", command);
    cJSON_AddBoolToObject(r->doc, "ok", 1);
    cJSON_AddBoolToObject(r->doc, "changed", 0);
    cJSON_AddNumberToObject(r->doc, "exit_code", 0);
    cJSON_AddNullToObject(r->doc, "target");
    r->checks = cJSON_AddArrayToObject(r->doc, "checks");
    return r;
}

void cdd_report_style(struct cdd_report *r, int verbose, int color,
                      int shell)
{
    r->verbose = verbose;
    r->color = color;
    r->shell = (unsigned)shell < CDD_SHELL_COUNT ? (enum cdd_shell)shell
                                                 : CDD_SHELL_SH;
}

int cdd_report_verbose(const struct cdd_report *r)
{
    return r && r->verbose;
}

char *cdd_report_quote(const struct cdd_report *r, const char *s)
{
    char *q = cdd_shell_quote(r->shell, s);
    if (!q) {
        cdd_clear_error();
        q = strdup(s);
    }
    return q;
}

/* SGR codes, used only when r->color. */
#define SGR_RESET "\033[0m"
static const char *status_color(enum cdd_check_status st)
{
    switch (st) {
    case CDD_PASS: return "\033[32m";
    case CDD_WARN: return "\033[33m";
    case CDD_FAIL: return "\033[1;31m";
    default: return "\033[36m";
    }
}

/* Human lines carry names from archives, manifests and trees: each goes to
 * the terminal as one printable line (cdd_text_one_line), after a prefix
 * that is ours (and may hold colour). */
static void put_prefixed(const char *prefix, const char *text)
{
    /* Escaping makes a byte at most 4 ("\xNN"): the whole line fits. */
    size_t cap = strlen(text) * 4 + 1;
    char *line = malloc(cap);
    fprintf(stderr, "%s%s\n", prefix,
            line ? cdd_text_one_line(text, line, cap) : "(out of memory)");
    free(line);
}

/* printf into a malloc'd string (NULL: out of memory or past the bound,
 * recorded). */
static char *vtext(const char *fmt, va_list ap)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, CDD_TEXT_MAX, "report line");
    if (cdd_sb_vaddf(&sb, fmt, ap)) {
        cdd_sb_free(&sb);
        return NULL;
    }
    return cdd_sb_take(&sb);
}

static void put_line(const char *text)
{
    put_prefixed("", text);
}

void cdd_say(struct cdd_report *r, const char *fmt, ...)
{
    if (r && r->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *text = vtext(fmt, ap);
    va_end(ap);
    put_line(text ? text : cdd_last_error()->msg);
    free(text);
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

/* "  pass  name: detail", the status word coloured when r->color. */
static void status_line(struct cdd_report *r, enum cdd_check_status st,
                        const char *name, const char *detail)
{
    char prefix[64]; /* fixed: colour codes and a status word */
    if (r->color)
        snprintf(prefix, sizeof prefix, "  %s%-4s" SGR_RESET "  ",
                 status_color(st), status_name(st));
    else
        snprintf(prefix, sizeof prefix, "  %-4s  ", status_name(st));
    char *text = cdd_aprintf(CDD_TEXT_MAX, "report line", "%s: %s", name,
                             detail);
    put_prefixed(prefix, text ? text : cdd_last_error()->msg);
    free(text);
}

static cJSON *fix_steps_json(const struct cdd_fixes *f, unsigned alt)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < f->n; i++) {
        const struct cdd_fix *x = &f->v[i];
        if (x->alt != alt)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kind", cdd_fix_kind_name(x->kind));
        cJSON_AddStringToObject(o, "scope", cdd_fix_scope_name(x->scope));
        cJSON_AddStringToObject(o, x->kind == CDD_FIX_WRITE  ? "path"
                                   : x->kind == CDD_FIX_RUN ? "program"
                                                            : "variable",
                                x->name);
        if (x->value)
            cJSON_AddStringToObject(o, x->kind == CDD_FIX_WRITE ? "text"
                                                                : "value",
                                    x->value);
        if (x->kind == CDD_FIX_PREPEND) {
            char sep[2] = {x->sep, '\0'}; /* fixed: a separator */
            cJSON_AddStringToObject(o, "separator", sep);
        }
        if (x->kind == CDD_FIX_RUN) {
            cJSON *args = cJSON_AddArrayToObject(o, "args");
            for (size_t k = 0; args && k < x->n_args; k++)
                cJSON_AddItemToArray(args, cJSON_CreateString(x->args[k]));
        }
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

/* The fix of a check: "fixes" in its JSON object (each alternative with its
 * command for the user's shell and its steps as data), and, when show,
 * one line per alternative under the check. */
static void report_fix(struct cdd_report *r, cJSON *check,
                       const struct cdd_fixes *f, int show)
{
    unsigned n = cdd_fixes_alternatives(f);
    if (!n)
        return;
    cJSON *arr = cJSON_AddArrayToObject(check, "fixes");
    r->shell_used = 1;
    for (unsigned alt = 0; alt < n; alt++) {
        const struct cdd_fix *first = NULL;
        for (size_t i = 0; i < f->n && !first; i++)
            if (f->v[i].alt == alt)
                first = &f->v[i];
        if (!first)
            continue;
        const char *where = cdd_shell_scope_label(r->shell, first);
        if (!*where)
            where = first->scope == CDD_FIX_SYSTEM ? "system-wide" : "";
        cdd_clear_error();
        char *cmd = cdd_shell_render_alt(r->shell, f, alt);
        const struct cdd_errinfo *e = cdd_last_error();
        size_t wcap = 4 * (strlen(e->path) + strlen(e->msg)) + 2048;
        char *why = cmd ? NULL : malloc(wcap);
        if (why)
            cdd_error_format(why, wcap);
        cJSON *o = cJSON_CreateObject();
        if (first->label)
            cJSON_AddStringToObject(o, "label", first->label);
        cJSON_AddStringToObject(o, "where", where);
        if (cmd)
            cJSON_AddStringToObject(o, "command", cmd);
        else
            cJSON_AddStringToObject(o, "unavailable",
                                    why ? why : "out of memory");
        cJSON_AddItemToObject(o, "steps", fix_steps_json(f, alt));
        cJSON_AddItemToArray(arr, o);
        if (show) {
            char *text = cdd_aprintf(
                CDD_TEXT_MAX, "report line", "fix%s%s%s%s%s: %s%s",
                first->label ? ", " : "", first->label ? first->label : "",
                *where ? " (" : "", where, *where ? ")" : "",
                cmd ? cmd : why ? why : "out of memory",
                cmd ? "" : " (try --fix-shell with another shell)");
            put_prefixed(r->color ? "        \033[1m>\033[0m " : "        > ",
                         text ? text : cdd_last_error()->msg);
            free(text);
        }
        free(why);
        free(cmd);
    }
    cdd_clear_error();
}

void cdd_report_check(struct cdd_report *r, const char *name,
                      enum cdd_check_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *detail = vtext(fmt, ap);
    va_end(ap);
    if (!detail && !(detail = cdd_strdup(cdd_last_error()->msg)))
        return;
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", name);
    cJSON_AddStringToObject(c, "status", status_name(st));
    cJSON_AddStringToObject(c, "detail", detail);
    cJSON_AddItemToArray(r->checks, c);
    if (st == CDD_FAIL)
        r->failed_checks++;
    /* Failures are shown even with --quiet: they are what the user needs. */
    if (!r->quiet || st == CDD_FAIL)
        status_line(r, st, name, detail);
    free(detail);
}

static enum cdd_check_status map_status(enum cdd_cstatus s)
{
    static const enum cdd_check_status map[] = {CDD_PASS, CDD_WARN, CDD_FAIL,
                                                CDD_SKIP};
    return (unsigned)s < 4 ? map[s] : CDD_SKIP;
}

/* The layer of a check: its name up to the first '.' or ' ' ("load" of
 * "load.search libcudnn.so.8", "path" of "path PATH"). */
static size_t layer_len(const char *name)
{
    return strcspn(name, ". ");
}

static int same_layer(const char *a, const char *b)
{
    size_t n = layer_len(a);
    return n == layer_len(b) && strncmp(a, b, n) == 0;
}

/* One check into the JSON array, and its human lines when show. */
static void one_check(struct cdd_report *r, const struct cdd_check *k,
                      int show)
{
    enum cdd_check_status st = map_status(k->status);
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "name", k->name);
    cJSON_AddStringToObject(c, "status", status_name(st));
    cJSON_AddStringToObject(c, "detail", k->detail);
    cJSON_AddItemToArray(r->checks, c);
    if (st == CDD_FAIL)
        r->failed_checks++;
    show = show && (!r->quiet || st == CDD_FAIL);
    if (show)
        status_line(r, st, k->name, k->detail);
    report_fix(r, c, &k->fix, show && st != CDD_PASS);
}

void cdd_report_layers(struct cdd_report *r, const struct cdd_checks *c,
                       const char *(*summary)(void *ud, const char *layer),
                       void *ud)
{
    for (size_t i = 0; i < c->n;) {
        size_t end = i, n_pass = 0;
        while (end < c->n && same_layer(c->v[i].name, c->v[end].name))
            n_pass += c->v[end++].status == CDD_CHECK_PASS;
        /* Passing checks of a layer fold into one line, unless verbose or
         * the layer is a single check (shown as it is). */
        int fold = !r->verbose && n_pass > 1;
        for (size_t k = i; k < end; k++)
            one_check(r, &c->v[k], !fold || c->v[k].status != CDD_CHECK_PASS);
        if (fold && !r->quiet) {
            char *layer = cdd_strndup(c->v[i].name, layer_len(c->v[i].name));
            const char *sum = summary && layer ? summary(ud, layer) : NULL;
            char *text = sum && n_pass == end - i
                             ? cdd_strdup(sum)
                             : cdd_aprintf(64, "count", "%zu %schecks passed",
                                           n_pass,
                                           n_pass == end - i ? "" : "other ");
            if (layer && text)
                status_line(r, CDD_PASS, layer, text);
            free(layer);
            free(text);
        }
        i = end;
    }
}

void cdd_report_checks(struct cdd_report *r, const struct cdd_checks *c)
{
    cdd_report_layers(r, c, NULL, NULL);
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
            char *text = cdd_aprintf(CDD_TEXT_MAX, "report line",
                                     "  %-9s %s%s%s",
                                     cdd_action_name(it->action), it->path,
                                     it->detail ? ": " : "",
                                     it->detail ? it->detail : "");
            put_line(text ? text : cdd_last_error()->msg);
            free(text);
        }
    }
    set(r, key, a);
}

void cdd_report_error(struct cdd_report *r, int code)
{
    const struct cdd_errinfo *e = cdd_last_error();
    /* The whole record, each byte escaped to at most 4, and the OS text. */
    size_t cap = 4 * (strlen(e->path) + strlen(e->msg)) + 2048;
    char *msg = malloc(cap);
    if (!msg)
        msg = cdd_strdup("out of memory");
    else if (e->code == code)
        cdd_error_format(msg, cap);
    else
        snprintf(msg, cap, "%s", cdd_err_message(code));
    if (!msg)
        return;
    r->exit_code = cdd_err_exit_code(code);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "code", cdd_err_name(code));
    cJSON_AddStringToObject(o, "message", msg);
    set(r, "error", o);
    /* One line, always, even with --quiet: an error must never be silent. */
    if (r->color)
        fprintf(stderr, "cudnn-deploy: \033[1;31merror:\033[0m %s\n", msg);
    else
        fprintf(stderr, "cudnn-deploy: error: %s\n", msg);
    if (code == CDD_E_USAGE) {
        cJSON *cmd = cJSON_GetObjectItemCaseSensitive(r->doc, "command");
        const char *name = cJSON_IsString(cmd) ? cmd->valuestring : "";
        if (*name && strcmp(name, "cudnn-deploy") != 0)
            fprintf(stderr, "Try 'cudnn-deploy %s --help' for more "
                            "information.\n", name);
        else
            fprintf(stderr, "Try 'cudnn-deploy --help' for more "
                            "information.\n");
    }
    free(msg);
}

void cdd_report_hint(struct cdd_report *r, const char *hint)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(r->doc, "error");
    if (e)
        cJSON_AddStringToObject(e, "hint", hint);
    put_prefixed(r->color ? "cudnn-deploy: \033[1mhint:\033[0m "
                          : "cudnn-deploy: hint: ",
                 hint);
}

int cdd_report_finish(struct cdd_report *r)
{
    int code = r->exit_code ? r->exit_code : r->failed_checks ? 1 : 0;
    set(r, "ok", cJSON_CreateBool(code == 0));
    if (r->shell_used)
        set(r, "shell", cJSON_CreateString(cdd_shell_name(r->shell)));
    set(r, "exit_code", cJSON_CreateNumber(code));
    if (r->json) {
        char *text = cJSON_Print(r->doc);
        if (text && cdd_json_alloc_failures() == r->json_failures) {
            fputs(text, stdout);
            fputc('\n', stdout);
        } else if (!r->exit_code) {
            /* A document that lost a part for lack of memory (cJSON drops
             * what it cannot allocate without a word) is not printed: a CI
             * reading it would take a missing check for a passing one. One
             * error line instead (none when an error was reported: the
             * lost part is that error's). Exit 4: out of memory. */
            fprintf(stderr, "cudnn-deploy: error: out of memory: the --json "
                            "report is incomplete (the command itself ended "
                            "with exit %d)\n", code);
            code = 4;
        }
        cJSON_free(text);
    }
    if (fflush(stdout) != 0 && code == 0)
        code = 4;
    cJSON_Delete(r->doc);
    free(r);
    return code;
}
