/* Reporting: human text on stderr, one JSON object on stdout with --json,
 * written with the core's JSON writer (jsonw.h; no cJSON here, no text
 * parsed back: docs/design.md, Checks and reports). The human form is
 * short by default: a layer whose checks all passed is one line, warnings
 * and failures are shown in full with their fixes
 * rendered for the user's shell (shell.c); --verbose shows every check.
 * Colour only when the caller says so (a terminal, no NO_COLOR, no
 * --json: commands.c decides). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/checks.h"
#include "cdd/error.h"
#include "cdd/jsonw.h"
#include "cdd/strbuf.h"
#include "report.h"
#include "shell.h"

/* One top-level member of the JSON object: its key and its value, a
 * document of the core's JSON writer (jsonw.h). The members keep the order
 * they were first set in; setting a key again replaces its value in place
 * (ok, changed, exit_code and target sit first, whenever they are known). */
struct member {
    char *key;
    struct cdd_jw *val;
    struct member *next;
};

struct cdd_report {
    int json, quiet;
    int verbose, color;
    enum cdd_shell shell;
    int shell_used;       /* a fix was rendered: "shell" goes in the JSON */
    int exit_code;
    int failed_checks;
    /* A member could not be kept (no memory): the JSON is incomplete and
     * is not printed (cdd_report_finish). */
    int nomem;
    char *command;
    struct member *first, *last;
    /* Still open, closed by cdd_report_finish: the "checks" list and the
     * "error" object (a hint may follow the error). Owned by their
     * members; NULL once replaced. */
    struct cdd_jw *checks;
    struct cdd_jw *error;
};

/* Set member key to val (consumed); 0, or -1 when it could not be kept. */
static int set(struct cdd_report *r, const char *key, struct cdd_jw *val)
{
    if (!val) {
        r->nomem = 1;
        return -1;
    }
    for (struct member *m = r->first; m; m = m->next) {
        if (strcmp(m->key, key) != 0)
            continue;
        if (m->val == r->checks)
            r->checks = NULL;
        if (m->val == r->error)
            r->error = NULL;
        cdd_jw_free(m->val);
        m->val = val;
        return 0;
    }
    struct member *m = calloc(1, sizeof *m);
    if (!m || !(m->key = cdd_strdup(key))) {
        cdd_clear_error();
        free(m);
        cdd_jw_free(val);
        r->nomem = 1;
        return -1;
    }
    m->val = val;
    if (r->last)
        r->last->next = m;
    else
        r->first = m;
    r->last = m;
    return 0;
}

/* A string written only when there is one (a name from a table that has
 * none for an out-of-range value): the member or element is left out. */
static void str_if(struct cdd_jw *w, const char *key, const char *s)
{
    if (s)
        cdd_jw_str(w, key, s);
}

/* One-value documents for set(). */
static struct cdd_jw *v_str(const char *s)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_str(w, NULL, s);
    return w;
}

static struct cdd_jw *v_bool(int b)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_bool(w, NULL, b);
    return w;
}

static struct cdd_jw *v_num(double d)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_num(w, NULL, d);
    return w;
}

static struct cdd_jw *v_int(long long v)
{
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_int(w, NULL, v);
    return w;
}

struct cdd_report *cdd_report_new(const char *command, int json, int quiet)
{
    struct cdd_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->json = json;
    r->quiet = quiet;
    r->command = command ? cdd_strdup(command) : NULL;
    if (command && !r->command) {
        cdd_clear_error();
        r->nomem = 1;
    }
    if (command)
        set(r, "command", v_str(command));
    set(r, "ok", v_bool(1));
    set(r, "changed", v_bool(0));
    set(r, "exit_code", v_int(0));
    set(r, "target", v_str(NULL));
    struct cdd_jw *checks = cdd_jw_new();
    cdd_jw_array(checks, NULL);
    if (set(r, "checks", checks) == 0)
        r->checks = checks;
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
    case CDD_CHECK_PASS: return "\033[32m";
    case CDD_CHECK_WARN: return "\033[33m";
    case CDD_CHECK_FAIL: return "\033[1;31m";
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

void cdd_report_target(struct cdd_report *r, const char *root)
{
    set(r, "target", v_str(root));
}

void cdd_report_changed(struct cdd_report *r, int changed)
{
    set(r, "changed", v_bool(changed));
}

void cdd_report_str(struct cdd_report *r, const char *key, const char *val)
{
    set(r, key, v_str(val));
}

void cdd_report_num(struct cdd_report *r, const char *key, double val)
{
    set(r, key, v_num(val));
}

void cdd_report_bool(struct cdd_report *r, const char *key, int val)
{
    set(r, key, v_bool(val));
}

void cdd_report_doc(struct cdd_report *r, const char *key, struct cdd_jw *doc)
{
    set(r, key, doc);
}

void cdd_report_strv(struct cdd_report *r, const char *key,
                     const char *const *v, size_t n)
{
    struct cdd_jw *a = cdd_jw_new();
    cdd_jw_array(a, NULL);
    for (size_t i = 0; i < n; i++)
        str_if(a, NULL, v[i]);
    cdd_jw_end(a);
    set(r, key, a);
}

/* The word of a status; one outside the enum reads as skip. */
static enum cdd_check_status known(enum cdd_check_status st)
{
    return (unsigned)st < CDD_CHECK_N_STATUS ? st : CDD_CHECK_SKIP;
}

static const char *status_name(enum cdd_check_status st)
{
    return cdd_check_status_name(known(st));
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

/* The steps of one alternative of a fix, as data: "steps": [...]. */
static void fix_steps(struct cdd_jw *w, const struct cdd_fixes *f,
                      unsigned alt)
{
    cdd_jw_array(w, "steps");
    for (size_t i = 0; i < f->n; i++) {
        const struct cdd_fix *x = &f->v[i];
        if (x->alt != alt)
            continue;
        cdd_jw_object(w, NULL);
        str_if(w, "kind", cdd_fix_kind_name(x->kind));
        str_if(w, "scope", cdd_fix_scope_name(x->scope));
        str_if(w, x->kind == CDD_FIX_WRITE  ? "path"
                  : x->kind == CDD_FIX_RUN ? "program"
                                           : "variable",
               x->name);
        if (x->value)
            cdd_jw_str(w, x->kind == CDD_FIX_WRITE ? "text" : "value",
                       x->value);
        if (x->kind == CDD_FIX_PREPEND) {
            char sep[2] = {x->sep, '\0'}; /* fixed: a separator */
            cdd_jw_str(w, "separator", sep);
        }
        if (x->kind == CDD_FIX_RUN) {
            cdd_jw_array(w, "args");
            for (size_t k = 0; k < x->n_args; k++)
                str_if(w, NULL, x->args[k]);
            cdd_jw_end(w);
        }
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
}

/* The fix of a check: "fixes" in its JSON object (the open object of w;
 * each alternative with its command for the user's shell and its steps as
 * data), and, when show, one line per alternative under the check. */
static void report_fix(struct cdd_report *r, struct cdd_jw *w,
                       const struct cdd_fixes *f, int show)
{
    unsigned n = cdd_fixes_alternatives(f);
    if (!n)
        return;
    cdd_jw_array(w, "fixes");
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
        cdd_jw_object(w, NULL);
        str_if(w, "label", first->label);
        cdd_jw_str(w, "where", where);
        if (cmd)
            cdd_jw_str(w, "command", cmd);
        else
            cdd_jw_str(w, "unavailable", why ? why : "out of memory");
        fix_steps(w, f, alt);
        cdd_jw_end(w);
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
    cdd_jw_end(w);
    cdd_clear_error();
}

/* One check: its object in the "checks" list (name, status, detail, and
 * its fixes when fix has any) and, when show, its human lines. The one
 * path of cdd_report_check and of the checks a core operation collected. */
static void put_check(struct cdd_report *r, const char *name,
                      enum cdd_check_status st, const char *detail,
                      const struct cdd_fixes *fix, int show)
{
    struct cdd_jw *w = r->checks;
    st = known(st);
    cdd_jw_object(w, NULL);
    str_if(w, "name", name);
    cdd_jw_str(w, "status", status_name(st));
    str_if(w, "detail", detail);
    if (st == CDD_CHECK_FAIL)
        r->failed_checks++;
    /* Failures are shown even with --quiet: they are what the user needs. */
    show = show && (!r->quiet || st == CDD_CHECK_FAIL);
    if (show)
        status_line(r, st, name, detail);
    if (fix)
        report_fix(r, w, fix, show && st != CDD_CHECK_PASS);
    cdd_jw_end(w);
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
    put_check(r, name, st, detail, NULL, 1);
    free(detail);
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
        for (size_t k = i; k < end; k++) {
            const struct cdd_check *x = &c->v[k];
            put_check(r, x->name, x->status, x->detail, &x->fix,
                      !fold || x->status != CDD_CHECK_PASS);
        }
        if (fold && !r->quiet) {
            char *layer = cdd_strndup(c->v[i].name, layer_len(c->v[i].name));
            const char *sum = summary && layer ? summary(ud, layer) : NULL;
            char *text = sum && n_pass == end - i
                             ? cdd_strdup(sum)
                             : cdd_aprintf(64, "count", "%zu %schecks passed",
                                           n_pass,
                                           n_pass == end - i ? "" : "other ");
            if (layer && text)
                status_line(r, CDD_CHECK_PASS, layer, text);
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
    struct cdd_jw *w = cdd_jw_new();
    cdd_jw_array(w, NULL);
    for (size_t i = 0; i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        cdd_jw_object(w, NULL);
        str_if(w, "path", it->path);
        str_if(w, "action", cdd_action_name(it->action));
        str_if(w, "role", cdd_role_name(it->role));
        if (it->is_symlink && it->link_target)
            cdd_jw_str(w, "symlink", it->link_target);
        if (it->detail)
            cdd_jw_str(w, "detail", it->detail);
        cdd_jw_end(w);
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
    cdd_jw_end(w);
    set(r, key, w);
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
    /* Left open: a hint may follow (cdd_report_hint). */
    struct cdd_jw *o = cdd_jw_new();
    cdd_jw_object(o, NULL);
    str_if(o, "code", cdd_err_name(code));
    cdd_jw_str(o, "message", msg);
    if (set(r, "error", o) == 0)
        r->error = o;
    /* One line, always, even with --quiet: an error must never be silent. */
    if (r->color)
        fprintf(stderr, "cudnn-deploy: \033[1;31merror:\033[0m %s\n", msg);
    else
        fprintf(stderr, "cudnn-deploy: error: %s\n", msg);
    if (code == CDD_E_USAGE) {
        const char *name = r->command ? r->command : "";
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
    if (r->error)
        cdd_jw_str(r->error, "hint", hint);
    put_prefixed(r->color ? "cudnn-deploy: \033[1mhint:\033[0m "
                          : "cudnn-deploy: hint: ",
                 hint);
}

/* The members as one JSON object (cJSON's indented layout and a newline,
 * as every release wrote it); NULL when the report is incomplete: a member
 * lost for lack of memory, or a member document that failed. Consumes the
 * members. */
static char *report_text(struct cdd_report *r)
{
    cdd_jw_end(r->checks);
    cdd_jw_end(r->error);
    r->checks = r->error = NULL;
    struct cdd_jw *doc = cdd_jw_new();
    cdd_jw_object(doc, NULL);
    for (struct member *m = r->first; m; m = m->next) {
        cdd_jw_doc(doc, m->key, m->val);
        m->val = NULL;
    }
    cdd_jw_end(doc);
    char *text = NULL;
    if (cdd_jw_finish(doc, CDD_JW_PRETTY, &text) != 0 || r->nomem) {
        cdd_clear_error();
        free(text);
        return NULL;
    }
    return text;
}

static void report_free(struct cdd_report *r)
{
    for (struct member *m = r->first, *next; m; m = next) {
        next = m->next;
        free(m->key);
        cdd_jw_free(m->val);
        free(m);
    }
    free(r->command);
    free(r);
}

int cdd_report_finish(struct cdd_report *r)
{
    int code = r->exit_code ? r->exit_code : r->failed_checks ? 1 : 0;
    set(r, "ok", v_bool(code == 0));
    if (r->shell_used)
        set(r, "shell", v_str(cdd_shell_name(r->shell)));
    set(r, "exit_code", v_int(code));
    if (r->json) {
        char *text = report_text(r);
        if (text) {
            fputs(text, stdout);
        } else if (!r->exit_code) {
            /* A document that lost a part for lack of memory is not
             * printed: a CI reading it would take a missing check for a
             * passing one. One error line instead (none when an error was
             * reported: the lost part is that error's). Exit 4: out of
             * memory. */
            fprintf(stderr, "cudnn-deploy: error: out of memory: the --json "
                            "report is incomplete (the command itself ended "
                            "with exit %d)\n", code);
            code = 4;
        }
        free(text);
    }
    if (fflush(stdout) != 0 && code == 0)
        code = 4;
    report_free(r);
    return code;
}
