/* Rendering fixes (cdd/fix.h) as commands a user pastes into a shell: sh
 * (POSIX; also bash and zsh, which differ only in their start-up file),
 * fish, PowerShell and cmd, each value quoted for that shell so that paths
 * holding spaces, quotes, '$', '%', '`', '!', '^' or '&' survive the paste.
 * cmd has two forms, as cmd reads '%' differently in each: typed at the
 * prompt (CDD_SHELL_CMD, "cmd") and in a batch file (CDD_SHELL_CMD_BATCH,
 * "cmd-batch": a .bat or .cmd file, where a literal '%' is "%%").
 * Nothing here prints; every function returns a malloc'd string. */
#ifndef CDD_SHELL_H
#define CDD_SHELL_H

#include "cdd/fix.h"
#include "cdd/strbuf.h"

/* Most bytes of one rendered command: a value of a fix (a path list, at
 * most CDD_TEXT_MAX bytes) quoted, each byte at most 4 (sh's '\''), and
 * quoted again inside the line that appends it to a start-up file. More is
 * CDD_E_TOOLONG, never a cut. */
#define CDD_SHELL_TEXT_MAX (16 * (size_t)CDD_TEXT_MAX + 4096)

enum cdd_shell {
    CDD_SHELL_SH = 0,
    CDD_SHELL_BASH,
    CDD_SHELL_ZSH,
    CDD_SHELL_FISH,
    CDD_SHELL_POWERSHELL,
    CDD_SHELL_CMD,       /* cmd, typed at the prompt */
    CDD_SHELL_CMD_BATCH, /* cmd, in a .bat / .cmd file */
    CDD_SHELL_COUNT
};

/* "sh", "bash", "zsh", "fish", "powershell", "cmd", "cmd-batch". */
const char *cdd_shell_name(enum cdd_shell sh);
/* Is sh one of cmd's two forms? */
int cdd_shell_is_cmd(enum cdd_shell sh);
/* One line saying which form a script for sh is (a comment in that shell's
 * syntax, no newline at the end), or "" for shells with one form: cmd's
 * prompt form and batch form say so, so that neither is pasted into the
 * other (static). */
const char *cdd_shell_form_note(enum cdd_shell sh);
/* A shell named by the user: the names above, "pwsh" (PowerShell) or a path
 * ending in one ("/usr/bin/fish", "C:\...\pwsh.exe"). 0, or CDD_E_USAGE
 * with the fault recorded. */
int cdd_shell_parse(const char *name, enum cdd_shell *out);
/* The default when the user names none: on Windows PowerShell; elsewhere
 * the shell $SHELL names (shell_env, may be NULL) when it is one of ours,
 * else sh. */
enum cdd_shell cdd_shell_detect(int windows, const char *shell_env);

/* s as one word of sh (etc.): unchanged when nothing in it is special to
 * that shell, else quoted. NULL when out of memory or when the shell cannot
 * hold s in a word (cmd: '"', '%', a control character), with the fault
 * recorded. */
char *cdd_shell_quote(enum cdd_shell sh, const char *s);

/* One step as one line (no newline at the end). NULL, with the fault
 * recorded, when this shell cannot express it (CDD_E_NOTSUP: a value cmd
 * cannot quote, a variable name that is not [A-Za-z_][A-Za-z0-9_]*) or when
 * out of memory. */
char *cdd_shell_render(enum cdd_shell sh, const struct cdd_fix *fix);

/* What the user must know beside a step's command: "this shell",
 * "new shells", "as root", "in an elevated PowerShell" ... (static). */
const char *cdd_shell_scope_label(enum cdd_shell sh, const struct cdd_fix *fix);

/* Every step of alternative alt of f on one line, to run in order (joined
 * by " && "; PowerShell "; ", cmd "&& "); NULL as for cdd_shell_render, or when alt has
 * no step. */
char *cdd_shell_render_alt(enum cdd_shell sh, const struct cdd_fixes *f,
                           unsigned alt);

#endif
