/* Fixes rendered for a shell (shell.h). Each destination's grammar, as far
 * as it decides what a value must look like, and how a value is written:
 *
 *   sh, bash, zsh  Inside '...' every byte is literal except ' itself (no
 *                  escape exists there): ' is written '\''. bash's history
 *                  expansion ('!') and zsh's do not act inside '...'.
 *                  Written: '...' with ' as '\''.
 *   fish           Inside '...' only \\ and \' are escapes; everything
 *                  else is literal. Written: '...' with \ and ' escaped.
 *   PowerShell     Inside '...' every character is literal except a single
 *                  quote, which is doubled; U+2018..U+201B count as single
 *                  quotes. Written: '...' with every quote doubled.
 *                  (Checked against strings only: no pwsh to run here.)
 *   cmd, prompt    A line is read once: %NAME% expands (an unknown name is
 *   ("cmd")        left as it is), then ^ escapes the next character and
 *                  "..." makes &|<>^() plain. '%' cannot be escaped: a value
 *                  holding '%' or '"' is written unquoted, every special
 *                  character behind a caret and a caret after each '%' so
 *                  that no %NAME% matches ("%^PATH%" stays "%PATH%").
 *   cmd, batch     As the prompt, except that an unknown %NAME% expands to
 *   ("cmd-batch")  nothing and "%%" is a literal '%' (also inside "...").
 *                  Written: quoted, each '%' as "%%"; a value holding '"'
 *                  unquoted with carets, each '%' as "%%". The conda
 *                  activation .bat is this form.
 * A list entry (PATH, LD_LIBRARY_PATH) is checked where the fix is built
 * (fixes.c): no shell can quote a list separator out of a list.
 * Values with control characters are refused: a pasted command must not
 * carry a newline or an escape sequence. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "shell.h"

/* ---- a growable string ---------------------------------------------------- */

/* The one string buffer (strbuf.h), bounded by CDD_SHELL_TEXT_MAX (shell.h);
 * the first failure sticks in its err, so a text built from many pieces is
 * checked once. */
#define SHELL_SB CDD_SB_INIT(CDD_SHELL_TEXT_MAX, "shell command")

static void sb_addn(struct cdd_sb *b, const char *s, size_t n)
{
    if (!b->err)
        b->err = cdd_sb_add(b, s, n);
}

static void sb_add(struct cdd_sb *b, const char *s) { sb_addn(b, s, strlen(s)); }
static void sb_addc(struct cdd_sb *b, char c) { sb_addn(b, &c, 1); }

/* The string built, or NULL with the fault recorded. */
static char *sb_take(struct cdd_sb *b)
{
    if (b->err) {
        int code = b->err;
        cdd_sb_free(b);
        /* The record may be a later one's: at least the code. */
        if (cdd_last_error()->code != code)
            cdd_fail(code, NULL, 0, NULL);
        return NULL;
    }
    return cdd_sb_take(b);
}

/* ---- names ----------------------------------------------------------------- */

static const char *const shell_names[CDD_SHELL_COUNT] = {
    "sh", "bash", "zsh", "fish", "powershell", "cmd", "cmd-batch"};

const char *cdd_shell_name(enum cdd_shell sh)
{
    return (unsigned)sh < CDD_SHELL_COUNT ? shell_names[sh] : "?";
}

int cdd_shell_is_cmd(enum cdd_shell sh)
{
    return sh == CDD_SHELL_CMD || sh == CDD_SHELL_CMD_BATCH;
}

const char *cdd_shell_form_note(enum cdd_shell sh)
{
    /* No '%', '&', '|', '<', '>' in these: rem lines are still read. */
    if (sh == CDD_SHELL_CMD)
        return "rem cudnn-deploy: the cmd prompt form, to paste at the "
               "prompt; for a .bat file use --shell cmd-batch";
    if (sh == CDD_SHELL_CMD_BATCH)
        return "@rem cudnn-deploy: the batch-file form, for a .bat or .cmd "
               "file; at the prompt use --shell cmd";
    return "";
}

/* The last component of a path (either separator), without ".exe". */
static void shell_base(const char *name, char *buf, size_t len)
{
    const char *b = name;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    snprintf(buf, len, "%s", b);
    size_t n = strlen(buf);
    if (n > 4 && (!strcmp(buf + n - 4, ".exe") || !strcmp(buf + n - 4, ".EXE")))
        buf[n - 4] = '\0';
    for (char *p = buf; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
}

static int shell_lookup(const char *name, enum cdd_shell *out)
{
    char b[64]; /* fixed: compared with the known shell names, all shorter */
    shell_base(name, b, sizeof b);
    for (int i = 0; i < CDD_SHELL_COUNT; i++)
        if (!strcmp(b, shell_names[i])) {
            *out = (enum cdd_shell)i;
            return 0;
        }
    if (!strcmp(b, "bat") || !strcmp(b, "batch")) {
        *out = CDD_SHELL_CMD_BATCH;
        return 0;
    }
    if (!strcmp(b, "pwsh")) {
        *out = CDD_SHELL_POWERSHELL;
        return 0;
    }
    /* Shells that take POSIX sh syntax. */
    if (!strcmp(b, "dash") || !strcmp(b, "ash") || !strcmp(b, "ksh") ||
        !strcmp(b, "mksh") || !strcmp(b, "busybox")) {
        *out = CDD_SHELL_SH;
        return 0;
    }
    return -1;
}

int cdd_shell_parse(const char *name, enum cdd_shell *out)
{
    if (name && *name && shell_lookup(name, out) == 0)
        return 0;
    return cdd_fail(CDD_E_USAGE, NULL, 0,
                    "unknown shell '%s' (sh, bash, zsh, fish, powershell, cmd, "
                    "cmd-batch)",
                    name ? name : "");
}

enum cdd_shell cdd_shell_detect(int windows, const char *shell_env)
{
    enum cdd_shell sh;
    if (windows)
        return CDD_SHELL_POWERSHELL;
    if (shell_env && *shell_env && shell_lookup(shell_env, &sh) == 0)
        return sh;
    return CDD_SHELL_SH;
}

/* ---- quoting ----------------------------------------------------------------- */

static int is_posix_family(enum cdd_shell sh)
{
    return sh == CDD_SHELL_SH || sh == CDD_SHELL_BASH || sh == CDD_SHELL_ZSH;
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int refuse(enum cdd_shell sh, const char *what, const char *s)
{
    return cdd_fail(CDD_E_NOTSUP, NULL, 0, "%s cannot be written for %s: %s",
                    s, cdd_shell_name(sh), what);
}

/* Characters no shell of ours treats specially in a bare word. */
static int plain_char(enum cdd_shell sh, char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9'))
        return 1;
    switch (sh) {
    case CDD_SHELL_SH:
    case CDD_SHELL_BASH:
    case CDD_SHELL_ZSH:
        return strchr("_@%+=:,./-", c) != NULL;
    case CDD_SHELL_FISH:
        return strchr("_@+=:,./-", c) != NULL;
    case CDD_SHELL_POWERSHELL:
        return strchr("_./:\\", c) != NULL;
    case CDD_SHELL_CMD:
    case CDD_SHELL_CMD_BATCH:
        return strchr("_@+:./\\-", c) != NULL;
    default:
        return 0;
    }
}

/* Length of a PowerShell single-quote character at s (0: none). */
static size_t ps_quote_char(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    if (*u == '\'')
        return 1;
    if (u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0x98 && u[2] <= 0x9b)
        return 3; /* U+2018..U+201B */
    return 0;
}

/* s as a quoted PowerShell string (always quoted: values in expressions). */
static void ps_str(struct cdd_sb *b, const char *s)
{
    sb_addc(b, '\'');
    while (*s) {
        size_t q = ps_quote_char(s);
        if (q) {
            sb_addn(b, s, q);
            sb_addn(b, s, q);
            s += q;
        } else {
            sb_addc(b, *s++);
        }
    }
    sb_addc(b, '\'');
}

/* s as it goes between cmd's quotes: each '%' doubled in a batch file (the
 * prompt form never gets here with one). */
static void cmd_pct(struct cdd_sb *b, enum cdd_shell sh, const char *s)
{
    for (; *s; s++) {
        if (*s == '%' && sh == CDD_SHELL_CMD_BATCH)
            sb_addc(b, '%');
        sb_addc(b, *s);
    }
}

/* s as one word; 0, or -1 when this shell cannot hold it (fault recorded). */
static int quote_into(struct cdd_sb *b, enum cdd_shell sh, const char *s)
{
    if (has_control(s))
        return refuse(sh, "it holds a control character", s), -1;
    int plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = plain_char(sh, *p);
    if (sh == CDD_SHELL_POWERSHELL && *s == '-')
        plain = 0;
    if (plain) {
        sb_add(b, s);
        return 0;
    }
    switch (sh) {
    case CDD_SHELL_SH:
    case CDD_SHELL_BASH:
    case CDD_SHELL_ZSH:
        sb_addc(b, '\'');
        for (; *s; s++) {
            if (*s == '\'')
                sb_add(b, "'\\''");
            else
                sb_addc(b, *s);
        }
        sb_addc(b, '\'');
        return 0;
    case CDD_SHELL_FISH:
        sb_addc(b, '\'');
        for (; *s; s++) {
            if (*s == '\'' || *s == '\\')
                sb_addc(b, '\\');
            sb_addc(b, *s);
        }
        sb_addc(b, '\'');
        return 0;
    case CDD_SHELL_POWERSHELL:
        ps_str(b, s);
        return 0;
    case CDD_SHELL_CMD:
    case CDD_SHELL_CMD_BATCH: {
        if (strchr(s, '"'))
            return refuse(sh, "a quoted word cannot hold '\"'", s), -1;
        if (sh == CDD_SHELL_CMD && strchr(s, '%'))
            return refuse(sh, "a quoted word at the prompt cannot hold '%' "
                              "(a .bat file can: the cmd-batch form)", s), -1;
        /* Programs split their command line by the C runtime's rules: inside
         * quotes, backslashes before the closing quote are doubled. */
        size_t n = strlen(s), bs = 0;
        while (bs < n && s[n - 1 - bs] == '\\')
            bs++;
        sb_addc(b, '"');
        cmd_pct(b, sh, s);
        for (size_t i = 0; i < bs; i++)
            sb_addc(b, '\\');
        sb_addc(b, '"');
        return 0;
    }
    default:
        return refuse(sh, "unknown shell", s), -1;
    }
}

char *cdd_shell_quote(enum cdd_shell sh, const char *s)
{
    struct cdd_sb b = SHELL_SB;
    if (quote_into(&b, sh, s ? s : "")) {
        cdd_sb_free(&b);
        return NULL;
    }
    return sb_take(&b);
}

/* cmd, outside quotes: every special character behind a caret. At the
 * prompt the character after a '%' too, so that no %NAME% expands (the
 * prompt leaves an unknown %NAME% as it is, and the caret then goes away);
 * in a batch file each '%' doubled instead. */
static void cmd_carets(struct cdd_sb *b, enum cdd_shell sh, const char *s)
{
    int after_pct = 0;
    for (; *s; s++) {
        if (sh == CDD_SHELL_CMD_BATCH && *s == '%') {
            sb_add(b, "%%");
            continue;
        }
        if (after_pct || strchr("&|<>^()\"!", *s))
            sb_addc(b, '^');
        after_pct = *s == '%';
        sb_addc(b, *s);
    }
}

/* ---- steps --------------------------------------------------------------------- */

static int valid_var(const char *v)
{
    if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') || *v == '_'))
        return 0;
    for (v++; *v; v++)
        if (!((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z') ||
              (*v >= '0' && *v <= '9') || *v == '_'))
            return 0;
    return 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* The start-up file where a shell of the sh family reads settings. */
static const char *sh_rc(enum cdd_shell sh)
{
    return sh == CDD_SHELL_BASH ? "~/.bashrc"
           : sh == CDD_SHELL_ZSH ? "~/.zshrc"
                                 : "~/.profile";
}

/* sh family and fish: append line to file (as root when sudo). */
static int append_line(struct cdd_sb *b, enum cdd_shell sh, const char *line,
                       const char *file, int sudo)
{
    sb_add(b, "printf '%s\\n' ");
    if (quote_into(b, sh, line))
        return -1;
    if (sudo) {
        sb_add(b, " | sudo tee -a ");
        sb_add(b, file);
        sb_add(b, " >/dev/null");
    } else {
        sb_add(b, " >> ");
        sb_add(b, file);
    }
    return 0;
}

static int render_posix_var(struct cdd_sb *b, enum cdd_shell sh,
                            const struct cdd_fix *f)
{
    struct cdd_sb line = SHELL_SB;
    int rc = -1;
    sb_add(&line, "export ");
    sb_add(&line, f->name);
    sb_addc(&line, '=');
    if (quote_into(&line, sh, f->value))
        goto out;
    if (f->kind == CDD_FIX_PREPEND) {
        /* The separator only when the list was set: an empty entry would
         * put the current folder on it. */
        sb_add(&line, "\"${");
        sb_add(&line, f->name);
        sb_add(&line, ":+");
        sb_addc(&line, f->sep);
        sb_addc(&line, '$');
        sb_add(&line, f->name);
        sb_add(&line, "}\"");
    }
    if (line.err)
        goto out;
    if (f->scope == CDD_FIX_SESSION)
        sb_add(b, cdd_sb_str(&line));
    else if (f->scope == CDD_FIX_USER)
        rc = append_line(b, sh, cdd_sb_str(&line), sh_rc(sh), 0);
    else
        rc = append_line(b, sh, cdd_sb_str(&line), "/etc/profile.d/cudnn-deploy.sh", 1);
    if (f->scope == CDD_FIX_SESSION)
        rc = 0;
out:
    cdd_sb_free(&line);
    return rc;
}

static int render_fish_var(struct cdd_sb *b, const struct cdd_fix *f)
{
    const enum cdd_shell sh = CDD_SHELL_FISH;
    struct cdd_sb line = SHELL_SB;
    int rc = -1;
    if (f->kind == CDD_FIX_PREPEND && f->scope == CDD_FIX_USER &&
        !strcmp(f->name, "PATH")) {
        /* fish keeps the user's own PATH entries in fish_user_paths. */
        sb_add(b, "fish_add_path --move");
        const char *p = f->value;
        while (1) {
            const char *e = strchr(p, f->sep);
            size_t n = e ? (size_t)(e - p) : strlen(p);
            char *one = cdd_strndup(p, n);
            if (!one)
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL), -1;
            sb_addc(b, ' ');
            rc = quote_into(b, sh, one);
            free(one);
            if (rc || !e)
                return rc;
            p = e + 1;
        }
    }
    sb_add(&line, f->scope == CDD_FIX_USER ? "set -Ux " : "set -gx ");
    /* fish splits and joins variables named *PATH at ':' by itself; others
     * need --path (fish 3.2). */
    if (f->kind == CDD_FIX_PREPEND && !ends_with(f->name, "PATH"))
        sb_add(&line, "--path ");
    sb_add(&line, f->name);
    sb_addc(&line, ' ');
    if (quote_into(&line, sh, f->value))
        goto out;
    if (f->kind == CDD_FIX_PREPEND) {
        sb_add(&line, " $");
        sb_add(&line, f->name);
    }
    if (line.err)
        goto out;
    if (f->scope == CDD_FIX_SYSTEM)
        rc = append_line(b, sh, cdd_sb_str(&line), "/etc/fish/conf.d/cudnn-deploy.fish",
                         1);
    else {
        sb_add(b, cdd_sb_str(&line));
        rc = 0;
    }
out:
    cdd_sb_free(&line);
    return rc;
}

static const char *ps_target(const struct cdd_fix *f)
{
    return f->scope == CDD_FIX_SYSTEM ? "'Machine'" : "'User'";
}

static void render_ps_var(struct cdd_sb *b, const struct cdd_fix *f)
{
    char sep[2] = {f->sep, '\0'}; /* fixed: a separator */
    if (f->scope == CDD_FIX_SESSION) {
        sb_add(b, "$env:");
        sb_add(b, f->name);
        sb_add(b, " = ");
        ps_str(b, f->value);
        if (f->kind == CDD_FIX_PREPEND) {
            sb_add(b, " + $(if ($env:");
            sb_add(b, f->name);
            sb_add(b, ") { ");
            ps_str(b, sep);
            sb_add(b, " + $env:");
            sb_add(b, f->name);
            sb_add(b, " })");
        }
        return;
    }
    sb_add(b, "[Environment]::SetEnvironmentVariable(");
    ps_str(b, f->name);
    sb_add(b, ", ");
    ps_str(b, f->value);
    if (f->kind == CDD_FIX_PREPEND) {
        sb_add(b, " + $(if ($p = [Environment]::GetEnvironmentVariable(");
        ps_str(b, f->name);
        sb_add(b, ", ");
        sb_add(b, ps_target(f));
        sb_add(b, ")) { ");
        ps_str(b, sep);
        sb_add(b, " + $p })");
    }
    sb_add(b, ", ");
    sb_add(b, ps_target(f));
    sb_addc(b, ')');
}

/* Equal but for ASCII case (cmd's variable names). */
static int ci_equal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a >= 'a' && *a <= 'z' ? (char)(*a - 32) : *a;
        char y = *b >= 'a' && *b <= 'z' ? (char)(*b - 32) : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* set "NAME=value" (with_old: the old value after the separator). */
static void cmd_quoted_set(struct cdd_sb *b, enum cdd_shell sh,
                           const struct cdd_fix *f, int with_old)
{
    sb_add(b, "set \"");
    sb_add(b, f->name);
    sb_addc(b, '=');
    cmd_pct(b, sh, f->value);
    if (with_old) {
        sb_addc(b, f->sep);
        sb_addc(b, '%');
        sb_add(b, f->name);
        sb_addc(b, '%');
    }
    sb_addc(b, '"');
}

static int render_cmd_var(struct cdd_sb *b, enum cdd_shell sh,
                          const struct cdd_fix *f)
{
    int batch = sh == CDD_SHELL_CMD_BATCH;
    int quote = !strchr(f->value, '"') && (batch || !strchr(f->value, '%'));
    if (f->scope == CDD_FIX_SESSION && quote &&
        f->kind == CDD_FIX_PREPEND && !ci_equal(f->name, "PATH")) {
        /* A list that may be unset (PATH always is set): "%NAME%" would be
         * nothing in a batch file, leaving an empty entry (the current
         * folder), and stay "%NAME%" at the prompt. The old value expands
         * inside the quotes, so its ')' cannot end the block. */
        sb_add(b, "if defined ");
        sb_add(b, f->name);
        sb_add(b, " (");
        cmd_quoted_set(b, sh, f, 1);
        sb_add(b, ") else ");
        cmd_quoted_set(b, sh, f, 0);
        return 0;
    }
    if (f->scope == CDD_FIX_SESSION && quote) {
        /* Quoted: also keeps a '&' in the expanded old value plain. */
        cmd_quoted_set(b, sh, f, f->kind == CDD_FIX_PREPEND);
        return 0;
    }
    if (f->scope == CDD_FIX_SESSION) {
        sb_add(b, "set ");
        sb_add(b, f->name);
        sb_addc(b, '=');
        cmd_carets(b, sh, f->value);
        if (f->kind == CDD_FIX_PREPEND) {
            sb_addc(b, f->sep);
            sb_addc(b, '%');
            sb_add(b, f->name);
            sb_addc(b, '%');
        }
        return 0;
    }
    if (!quote)
        return refuse(sh, batch ? "setx cannot be given '\"'"
                                : "setx at the prompt cannot be given '\"' or "
                                  "'%' (a .bat file can take '%': the "
                                  "cmd-batch form)",
                      f->value),
               -1;
    if (f->kind == CDD_FIX_SET) {
        sb_add(b, "setx ");
        sb_add(b, f->name);
        sb_addc(b, ' ');
        if (quote_into(b, sh, f->value))
            return -1;
        if (f->scope == CDD_FIX_SYSTEM)
            sb_add(b, " /M");
        return 0;
    }
    /* setx would write the joined user and machine Path into one of them
     * (and cut it at 1024 characters): let PowerShell edit the one list. */
    struct cdd_sb ps = SHELL_SB;
    render_ps_var(&ps, f);
    sb_add(b, "powershell -NoProfile -Command \"");
    if (ps.buf)
        cmd_pct(b, sh, ps.buf);
    sb_addc(b, '"');
    if (ps.err && !b->err)
        b->err = ps.err;
    cdd_sb_free(&ps);
    return 0;
}

/* The lines of a WRITE step's text, for the renderers to walk. */
static int each_line(const char *text, int (*fn)(void *, const char *, size_t),
                     void *ud)
{
    const char *p = text;
    size_t i = 0;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char *line = cdd_strndup(p, n);
        if (!line)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL), -1;
        int rc = fn(ud, line, i++);
        free(line);
        if (rc)
            return rc;
        p = e ? e + 1 : p + n;
    }
    return 0;
}

struct line_ctx {
    struct cdd_sb *b;
    enum cdd_shell sh;
    const char *path; /* cmd: the quoted file */
};

static int line_word(void *ud, const char *line, size_t i)
{
    struct line_ctx *c = ud;
    if (c->sh == CDD_SHELL_POWERSHELL) {
        if (has_control(line))
            return refuse(c->sh, "it holds a control character", line), -1;
        sb_add(c->b, i ? ", " : " -Value ");
        ps_str(c->b, line);
        return 0;
    }
    sb_addc(c->b, ' ');
    return quote_into(c->b, c->sh, line);
}

static int line_cmd(void *ud, const char *line, size_t i)
{
    struct line_ctx *c = ud;
    if (has_control(line))
        return refuse(c->sh, "it holds a control character", line), -1;
    /* No space before "&": echo would print it. */
    sb_add(c->b, i ? "& >>" : ">");
    sb_add(c->b, c->path);
    /* "echo(" prints any text, also an empty one or one starting "/?". */
    sb_add(c->b, " echo(");
    cmd_carets(c->b, c->sh, line);
    return 0;
}

static int render_write(struct cdd_sb *b, enum cdd_shell sh,
                        const struct cdd_fix *f)
{
    struct line_ctx c = {b, sh, NULL};
    int rc;
    if (sh == CDD_SHELL_POWERSHELL) {
        sb_add(b, "Set-Content -LiteralPath ");
        ps_str(b, f->name);
        if (!*f->value)
            sb_add(b, " -Value ''");
        return each_line(f->value, line_word, &c);
    }
    if (cdd_shell_is_cmd(sh)) {
        struct cdd_sb q = SHELL_SB;
        if (quote_into(&q, sh, f->name)) {
            cdd_sb_free(&q);
            return -1;
        }
        if (!(c.path = sb_take(&q)))
            return -1;
        if (!*f->value) {
            sb_add(b, "type nul >");
            sb_add(b, c.path);
            rc = 0;
        } else {
            rc = each_line(f->value, line_cmd, &c);
        }
        free((char *)c.path);
        return rc;
    }
    sb_add(b, "printf '%s\\n'");
    if (!*f->value)
        sb_add(b, " ''");
    if ((rc = each_line(f->value, line_word, &c)))
        return rc;
    sb_add(b, f->scope == CDD_FIX_SYSTEM ? " | sudo tee " : " > ");
    if (quote_into(b, sh, f->name))
        return -1;
    if (f->scope == CDD_FIX_SYSTEM)
        sb_add(b, " >/dev/null");
    return 0;
}

static int render_run(struct cdd_sb *b, enum cdd_shell sh,
                      const struct cdd_fix *f)
{
    if (sh == CDD_SHELL_POWERSHELL) {
        sb_add(b, "& ");
        ps_str(b, f->name);
    } else {
        if (f->scope == CDD_FIX_SYSTEM &&
            (is_posix_family(sh) || sh == CDD_SHELL_FISH))
            sb_add(b, "sudo ");
        if (quote_into(b, sh, f->name))
            return -1;
    }
    for (size_t i = 0; i < f->n_args; i++) {
        sb_addc(b, ' ');
        if (sh == CDD_SHELL_POWERSHELL) {
            if (has_control(f->args[i]))
                return refuse(sh, "it holds a control character", f->args[i]),
                       -1;
            ps_str(b, f->args[i]);
        } else if (quote_into(b, sh, f->args[i])) {
            return -1;
        }
    }
    return 0;
}

char *cdd_shell_render(enum cdd_shell sh, const struct cdd_fix *f)
{
    struct cdd_sb b = SHELL_SB;
    int rc = -1;
    if ((unsigned)sh >= CDD_SHELL_COUNT) {
        refuse(sh, "unknown shell", f->name);
        goto fail;
    }
    switch (f->kind) {
    case CDD_FIX_SET:
    case CDD_FIX_PREPEND:
        if (!valid_var(f->name)) {
            refuse(sh, "not a variable name", f->name);
            goto fail;
        }
        if (has_control(f->value)) {
            refuse(sh, "it holds a control character", f->value);
            goto fail;
        }
        if (f->kind == CDD_FIX_PREPEND && f->sep != ':' && f->sep != ';') {
            refuse(sh, "a path list is separated by ':' or ';'", f->name);
            goto fail;
        }
        if (is_posix_family(sh))
            rc = render_posix_var(&b, sh, f);
        else if (sh == CDD_SHELL_FISH)
            rc = render_fish_var(&b, f);
        else if (sh == CDD_SHELL_POWERSHELL)
            render_ps_var(&b, f), rc = 0;
        else
            rc = render_cmd_var(&b, sh, f);
        break;
    case CDD_FIX_WRITE:
        rc = render_write(&b, sh, f);
        break;
    case CDD_FIX_RUN:
        rc = render_run(&b, sh, f);
        break;
    }
    if (rc)
        goto fail;
    return sb_take(&b);
fail:
    cdd_sb_free(&b);
    return NULL;
}

const char *cdd_shell_scope_label(enum cdd_shell sh, const struct cdd_fix *f)
{
    int cmd = cdd_shell_is_cmd(sh), batch = sh == CDD_SHELL_CMD_BATCH;
    int win = sh == CDD_SHELL_POWERSHELL || cmd;
    if (f->kind == CDD_FIX_WRITE || f->kind == CDD_FIX_RUN) {
        if (f->scope != CDD_FIX_SYSTEM || !win)
            return batch ? "in a .bat file" : "";
        return batch ? "in a .bat file, run as Administrator"
               : cmd ? "in an elevated Command Prompt"
                     : "in an elevated PowerShell";
    }
    switch (f->scope) {
    case CDD_FIX_SESSION:
        return batch ? "a .bat file, for its console"
               : cmd ? "this console, at the prompt"
                     : "this shell";
    case CDD_FIX_USER:
        return batch ? "your account, new windows (a .bat file)"
               : win ? "your account, new windows"
                     : "new shells";
    case CDD_FIX_SYSTEM:
        return batch ? "every user, a .bat file run as Administrator"
               : cmd ? "every user, in an elevated Command Prompt"
               : win ? "every user, in an elevated PowerShell"
                     : "every user, new login shells";
    }
    return "";
}

char *cdd_shell_render_alt(enum cdd_shell sh, const struct cdd_fixes *f,
                           unsigned alt)
{
    struct cdd_sb b = SHELL_SB;
    /* Windows PowerShell 5.1 has no '&&'; cmd would give an unquoted
     * value (set X=a^%b) the space before it. */
    const char *join = sh == CDD_SHELL_POWERSHELL ? "; "
                       : cdd_shell_is_cmd(sh)      ? "&& "
                                                  : " && ";
    int any = 0;
    for (size_t i = 0; f && i < f->n; i++) {
        if (f->v[i].alt != alt)
            continue;
        char *one = cdd_shell_render(sh, &f->v[i]);
        if (!one) {
            cdd_sb_free(&b);
            return NULL;
        }
        if (any)
            sb_add(&b, join);
        sb_add(&b, one);
        free(one);
        any = 1;
    }
    if (!any) {
        cdd_sb_free(&b);
        cdd_fail(CDD_E_NOTSUP, NULL, 0, "no fix in alternative %u", alt);
        return NULL;
    }
    return sb_take(&b);
}
