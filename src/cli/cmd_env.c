/* cudnn-deploy env: the settings that make a target's cuDNN the one
 * programs load, for a shell (eval-able), for GitHub Actions (--github), as
 * JSON, or as a conda environment's activation scripts (--write-activation,
 * recorded in the receipt). The settings are data (envset.h, fix.h); each
 * shell's quoting is shell.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/envset.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/jsonw.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"
#include "cmds.h"
#include "report.h"
#include "shell.h"

#define SAVED "_CUDNN_DEPLOY_SAVED_"

/* A script: a line per setting envset.c writes (the library path, PATH,
 * CUDA_PATH, CUDA_HOME), in the activation scripts with the lines that
 * save and restore each, and a form note; a line is a rendered command
 * (CDD_SHELL_TEXT_MAX). */
#define ENV_LINES_MAX 32
#define ENV_TEXT_MAX (ENV_LINES_MAX * (CDD_SHELL_TEXT_MAX + 1) + 4096)

/* A growing string (cdd_grow, up to ENV_TEXT_MAX); its first failure
 * sticks in failed and is read once, when the text is done. */
struct text {
    char *s;
    size_t n, cap;
    int failed; /* CDD_E_TOOLONG, CDD_E_NOMEM, 0 */
};

static void add(struct text *t, const char *s)
{
    size_t k = strlen(s);
    int rc = t->failed ? t->failed
                       : cdd_grow(&t->s, &t->cap, t->n + k + 1, 1,
                                  ENV_TEXT_MAX + 1, "bytes of the script");
    if (rc) {
        t->failed = rc;
        return;
    }
    memcpy(t->s + t->n, s, k + 1);
    t->n += k;
}

/* t's first failure, recorded again when a later one replaced it. */
static int text_error(const struct text *t)
{
    if (t->failed && cdd_last_error()->code != t->failed)
        cdd_fail(t->failed, NULL, 0, NULL);
    return t->failed;
}

/* pattern with every "{}" replaced by name (a variable name: letters,
 * digits, '_'; shell.c refuses others), appended to t. */
static void addv(struct text *t, const char *pattern, const char *name)
{
    for (const char *p = pattern; *p && !t->failed;) {
        const char *q = strstr(p, "{}");
        size_t n = q ? (size_t)(q - p) : strlen(p);
        char *piece = malloc(n + 1);
        if (!piece) {
            t->failed = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            return;
        }
        memcpy(piece, p, n);
        piece[n] = '\0';
        add(t, piece);
        free(piece);
        if (!q)
            break;
        add(t, name);
        p = q + 2;
    }
}

/* Every step rendered for sh, one per line, after the line saying which
 * form the script is when sh has two (cmd: prompt or batch file). */
static int render_all(enum cdd_shell sh, const struct cdd_fixes *f,
                      struct text *t)
{
    if (*cdd_shell_form_note(sh)) {
        add(t, cdd_shell_form_note(sh));
        add(t, "\n");
    }
    for (size_t i = 0; i < f->n; i++) {
        char *line = cdd_shell_render(sh, &f->v[i]);
        if (!line)
            return cdd_last_error()->code ? cdd_last_error()->code
                                          : CDD_E_NOMEM;
        add(t, line);
        add(t, "\n");
        free(line);
    }
    return text_error(t);
}

/* The variables as JSON: {"NAME": {"set"|"prepend": value}}. */
static int vars_json(const struct cdd_fixes *f, struct cdd_jw **out)
{
    struct cdd_jw *w = cdd_jw_new();
    *out = w;
    cdd_jw_object(w, NULL);
    for (size_t i = 0; i < f->n; i++) {
        cdd_jw_object(w, f->v[i].name);
        cdd_jw_str(w, cdd_fix_kind_name(f->v[i].kind), f->v[i].value);
        cdd_jw_end(w);
    }
    cdd_jw_end(w);
    /* A failure inside w shows when the report is finished (exit 4). */
    return w ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* GitHub Actions. The runner reads the two files so (actions/runner's
 * SetEnvFileCommand / AddPathFileCommand; docs "Workflow commands",
 * "Multiline strings"):
 *   GITHUB_ENV   lines (a line ends at "\n"; "\r\n" and a lone "\r" end one
 *                too); an empty line is skipped. A line whose first '='
 *                comes before any "<<" is NAME=VALUE, VALUE the rest of the
 *                line. Else NAME<<DELIM starts a value: the following lines,
 *                joined by "\n", up to the first line that is exactly DELIM.
 *                So a value holding "\n" written as NAME=VALUE would make
 *                its second line a variable of its own (BASH_ENV=...): such
 *                a value goes in the NAME<<DELIM form, DELIM random and
 *                absent from the value. A "\r" cannot come back out of
 *                either form as it went in: refused.
 *   GITHUB_PATH  one folder per line, each put first on PATH; no form holds
 *                a line break: refused.
 * Other lists get their current value appended here, as the runner has no
 * file for them. */

/* Why v cannot go into GITHUB_ENV at all (NULL: it can, in some form). */
static const char *genv_fault(const char *v)
{
    return strchr(v, '\r') ? "it holds a carriage return, which the runner "
                             "reads as a line break"
                           : NULL;
}

/* A delimiter found in neither name nor value: "CUDNN_DEPLOY_EOF_" and 32
 * random hex digits (a fresh draw while one is found). */
static int heredoc_delim(const char *value, char out[64]) /* fixed: a random heredoc delimiter */
{
    for (int tries = 0; tries < 16; tries++) {
        unsigned char rnd[16]; /* fixed: random bytes */
        int r = cdd_random_bytes(rnd, sizeof rnd);
        if (r)
            return r;
        int n = snprintf(out, 64, "CUDNN_DEPLOY_EOF_");
        for (size_t i = 0; i < sizeof rnd; i++)
            n += snprintf(out + n, (size_t)(64 - n), "%02x", rnd[i]);
        if (!strstr(value, out))
            return 0;
    }
    return cdd_fail(CDD_E_IO, NULL, 0, "no delimiter absent from the value");
}

/* name's value as GITHUB_ENV text (lines ending "\n"), malloc'd in *out. */
static int genv_text(const char *name, const char *value, char **out)
{
    char delim[64]; /* fixed: a random heredoc delimiter */
    const char *why = genv_fault(value);
    int r;
    *out = NULL;
    if (why)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "%s cannot go into GITHUB_ENV: %s", name, why);
    size_t len = strlen(name) + strlen(value) + 2 * sizeof delim + 8;
    if (!(*out = malloc(len)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!strchr(value, '\n')) {
        snprintf(*out, len, "%s=%s\n", name, value);
        return 0;
    }
    if ((r = heredoc_delim(value, delim))) {
        free(*out);
        *out = NULL;
        return r;
    }
    snprintf(*out, len, "%s<<%s\n%s\n%s\n", name, delim, value, delim);
    return 0;
}

static int github(const struct cdd_fixes *f, struct cdd_report *rep)
{
    const char *genv = cdd_getenv("GITHUB_ENV");
    const char *gpath = cdd_getenv("GITHUB_PATH");
    if (!genv || !*genv || !gpath || !*gpath)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--github needs GITHUB_ENV and GITHUB_PATH (set by "
                        "GitHub Actions in every step)");
    for (size_t i = 0; i < f->n; i++) {
        const struct cdd_fix *x = &f->v[i];
        char *value = NULL, *text = NULL;
        int r;
        /* The tree's values were checked where they were built (envset.c:
         * no control character); this is the last word. */
        if (strchr(x->value, '\n') || strchr(x->value, '\r'))
            return cdd_fail(CDD_E_TARGET, x->value, 0,
                            "a folder with a line break cannot go into "
                            "GITHUB_ENV or GITHUB_PATH");
        if (x->kind == CDD_FIX_PREPEND && strcmp(x->name, "PATH") == 0) {
            r = cdd_fs_append_line(gpath, x->value);
            if (!r)
                cdd_say(rep, "GITHUB_PATH: %s", x->value);
            if (r)
                return r;
            continue;
        }
        const char *old = x->kind == CDD_FIX_PREPEND ? cdd_getenv(x->name)
                                                      : NULL;
        size_t len = strlen(x->value) + (old ? strlen(old) : 0) + 2;
        if (!(value = malloc(len)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        snprintf(value, len, "%s%s%s", x->value,
                 old && *old ? (char[]){x->sep, '\0'} : "",
                 old && *old ? old : "");
        r = genv_text(x->name, value, &text);
        if (!r) {
            /* cdd_fs_append_line adds the last "\n" itself. */
            text[strlen(text) - 1] = '\0';
            r = cdd_fs_append_line(genv, text);
        }
        if (!r && strchr(value, '\n'))
            cdd_say(rep, "GITHUB_ENV: %s, a value of several lines (as "
                         "NAME<<DELIMITER)", x->name);
        else if (!r)
            cdd_say(rep, "GITHUB_ENV: %s", text);
        free(value);
        free(text);
        if (r)
            return r;
    }
    return 0;
}

/* Activation and deactivation scripts of a conda environment for the
 * shells conda runs them in: sh and fish on Linux, cmd and PowerShell on
 * Windows. Each saves what it changes and the other puts it back. */
struct ascript {
    const char *ext;
    enum cdd_shell sh;
};

static int activation_texts(const struct cdd_fixes *f, const struct ascript *a,
                            struct text *on, struct text *off)
{
    const char *head = "%s cudnn-deploy: this environment's cuDNN first; "
                       "written by `cudnn-deploy env --write-activation`, "
                       "removed by `cudnn-deploy uninstall`%s\n";
    const char *c = cdd_shell_is_cmd(a->sh) ? "@REM" : "#";
    char h[256]; /* fixed: a constant header line and a comment word */
    snprintf(h, sizeof h, head, c, "");
    if (cdd_shell_is_cmd(a->sh))
        add(on, "@echo off\n"), add(off, "@echo off\n");
    add(on, h);
    add(off, h);
    for (size_t i = 0; i < f->n; i++) {
        const char *v = f->v[i].name;
        switch (a->sh) {
        case CDD_SHELL_FISH:
            addv(on, "if set -q {}; set -gx " SAVED "{} ${}; end\n", v);
            addv(off, "if set -q " SAVED "{}; set -gx {} $" SAVED "{}; "
                      "set -e " SAVED "{}; else; set -e {}; end\n", v);
            break;
        case CDD_SHELL_CMD_BATCH:
            addv(on, "if defined {} set \"" SAVED "{}=%{}%\"\n", v);
            addv(off, "set \"{}=\"\nif defined " SAVED "{} set \"{}=%"
                      SAVED "{}%\"\n", v);
            addv(off, "set \"" SAVED "{}=\"\n", v);
            break;
        case CDD_SHELL_POWERSHELL:
            addv(on, "if (Test-Path Env:{}) { $env:" SAVED "{} = $env:{} }\n",
                 v);
            addv(off, "if (Test-Path Env:" SAVED "{}) { $env:{} = $env:"
                      SAVED "{}; Remove-Item Env:" SAVED "{} } else { "
                      "Remove-Item Env:{} -ErrorAction SilentlyContinue }\n",
                 v);
            break;
        default:
            addv(on, "if [ -n \"${{}+x}\" ]; then export " SAVED "{}=\"${}\"; "
                     "fi\n", v);
            addv(off, "if [ -n \"${" SAVED "{}+x}\" ]; then export {}=\"$"
                      SAVED "{}\"; unset " SAVED "{}; else unset {}; fi\n", v);
            break;
        }
    }
    return render_all(a->sh, f, on);
}

static int write_activation(const struct cdd_cmdline *cl,
                            const struct cdd_target *t, struct cdd_tree *tree,
                            enum cdd_layout_id layout,
                            const struct cdd_fixes *f, struct cdd_report *rep)
{
    static const struct ascript lin[] = {{"sh", CDD_SHELL_SH},
                                         {"fish", CDD_SHELL_FISH}};
    /* conda runs the .bat with call: the batch form ('%' as "%%"). */
    static const struct ascript win[] = {{"bat", CDD_SHELL_CMD_BATCH},
                                         {"ps1", CDD_SHELL_POWERSHELL}};
    int windows = layout == CDD_LAYOUT_PREFIX_WINDOWS;
    const struct ascript *as = windows ? win : lin;
    struct text texts[4] = {{0}};
    char paths[4][128]; /* fixed: constant activation script paths */
    struct cdd_envfile files[4];
    struct cdd_plan plan = {0};
    int r = 0, changed = 0;
    if (t->kind != CDD_TARGET_PREFIX)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "--write-activation is for a conda environment: give "
                        "--prefix DIR");
    for (size_t i = 0; !r && i < 2; i++) {
        snprintf(paths[2 * i], sizeof paths[0], "%s/cudnn-deploy.%s",
                 CDD_CONDA_ACTIVATE_DIR, as[i].ext);
        snprintf(paths[2 * i + 1], sizeof paths[0], "%s/cudnn-deploy.%s",
                 CDD_CONDA_DEACTIVATE_DIR, as[i].ext);
        r = activation_texts(f, &as[i], &texts[2 * i], &texts[2 * i + 1]);
    }
    for (size_t i = 0; !r && i < 4; i++) {
        r = text_error(&texts[i]);
        files[i].path = paths[i];
        files[i].text = texts[i].s;
    }
    if (!r)
        r = cdd_activation_write(tree, cl->target.lock_timeout, files, 4, 0,
                                 &plan, &changed);
    cdd_report_plan(rep, "plan", &plan, !r && changed);
    if (!r) {
        cdd_report_changed(rep, changed);
        cdd_say(rep, changed ? "Activation scripts written into %s/etc/conda"
                             : "Activation scripts in %s/etc/conda are "
                               "current",
                t->root);
    }
    cdd_plan_clear(&plan);
    for (size_t i = 0; i < 4; i++)
        free(texts[i].s);
    return r;
}

/* --shell, before the target is touched (run parses it again: no I/O). */
int cdd_cmd_env_prepare(const struct cdd_cmdline *cl, struct cdd_report *rep,
                        void **prep)
{
    enum cdd_shell sh;
    (void)rep;
    *prep = NULL;
    return cl->env.shell ? cdd_shell_parse(cl->env.shell, &sh) : 0;
}

int cdd_cmd_env(const struct cdd_cmdline *cl, struct cdd_report *rep,
                struct cdd_cli_tree *tt)
{
    const struct cdd_opts_env *e = &cl->env;
    const struct cdd_target *t = &tt->target;
    struct cdd_tree *tree = tt->tree;
    struct cdd_fixes fx = {0};
    struct text script = {0};
    struct cdd_jw *vars = NULL;
    enum cdd_layout_id layout;
    enum cdd_shell sh;
    int installed = 0;
    int windows = cdd_platform_is_windows(cdd_platform_host());
    int r = 0;

    if (e->shell)
        r = cdd_shell_parse(e->shell, &sh);
    else
        sh = cdd_shell_detect(windows, cdd_getenv("SHELL"));
    if (!r)
        r = cdd_env_layout(tree, t, &layout, &installed);
    if (!r)
        r = cdd_env_fixes(t, layout, windows, &fx);
    if (!r)
        r = render_all(sh, &fx, &script);
    if (!r)
        r = vars_json(&fx, &vars);
    if (r)
        goto out;
    cdd_report_str(rep, "shell", cdd_shell_name(sh));
    cdd_report_str(rep, "layout", cdd_layout_name(layout));
    cdd_report_doc(rep, "variables", vars);
    vars = NULL;
    cdd_report_str(rep, "script", script.s ? script.s : "");
    cdd_report_check(rep, "env.installed",
                     installed ? CDD_CHECK_PASS : CDD_CHECK_WARN,
                     installed ? "%s holds a cudnn-deploy install (%s layout)"
                               : "%s holds no cudnn-deploy install: the "
                                 "settings are for its %s layout",
                     t->root, cdd_layout_name(layout));
    if (e->github && (r = github(&fx, rep)) < 0)
        goto out;
    if (e->write_activation) {
        /* The scripts run where the layout's platform is: a Windows
         * prefix's in cmd and PowerShell, with ';' and '\\'. */
        struct cdd_fixes afx = {0};
        r = cdd_env_fixes(t, layout, layout == CDD_LAYOUT_PREFIX_WINDOWS,
                          &afx);
        if (!r)
            r = write_activation(cl, t, tree, layout, &afx, rep);
        cdd_fixes_clear(&afx);
        if (r)
            goto out;
    }
    if (!e->write_activation)
        cdd_report_changed(rep, 0);
    /* The settings themselves on stdout, to eval: only when nothing else
     * was asked for (--json keeps stdout for its one object). */
    if (!cl->out.json && !e->github && !e->write_activation)
        fputs(script.s ? script.s : "", stdout);
out:
    cdd_jw_free(vars);
    free(script.s);
    cdd_fixes_clear(&fx);
    return r;
}
