/* The fix list (src/core/fixes.c) and its rendering for each shell
 * (src/cli/shell.c): the exact commands, the quoting of values holding
 * spaces, quotes, '$', '%', backticks, '!', '^' and '&', what a shell cannot
 * hold refused, and the default shell. test_shell_eval runs the sh output in
 * real shells. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fix.h"
#include "shell.h"
#include "test.h"

/* A command of CDD_SHELL_TEXT_MAX bytes is whole; one byte more is
 * refused with CDD_E_TOOLONG, not cut (also when it is the quoting that
 * makes it longer). */
static void test_bounds(void)
{
    size_t max = CDD_SHELL_TEXT_MAX;
    char *v = malloc(max + 2);
    if (!v)
        abort();
    memset(v, 'a', max + 1);
    v[max] = '\0';
    cdd_clear_error();
    char *q = cdd_shell_quote(CDD_SHELL_SH, v);
    CHECK(q != NULL);
    CHECK_INT(q ? strlen(q) : 0, max);
    free(q);
    v[max] = 'a';
    v[max + 1] = '\0';
    CHECK(cdd_shell_quote(CDD_SHELL_SH, v) == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "shell command") != NULL);
    /* Each ' becomes '\'' (4 bytes): a quarter of the bound is too much. */
    memset(v, '\'', max / 4 + 1);
    v[max / 4 + 1] = '\0';
    cdd_clear_error();
    CHECK(cdd_shell_quote(CDD_SHELL_SH, v) == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_TOOLONG);
    cdd_clear_error();
    free(v);
}

/* Render the only step of f for sh; the caller frees. */
static char *render1(enum cdd_shell sh, const struct cdd_fixes *f)
{
    cdd_clear_error();
    return cdd_shell_render(sh, &f->v[0]);
}

#define CHECK_RENDER(sh, f, want)                                              \
    do {                                                                       \
        char *got_ = render1(sh, f);                                           \
        CHECK_STR(got_, want);                                                 \
        free(got_);                                                            \
    } while (0)

#define CHECK_QUOTE(sh, in, want)                                              \
    do {                                                                       \
        char *got_ = cdd_shell_quote(sh, in);                                  \
        CHECK_STR(got_, want);                                                 \
        free(got_);                                                            \
    } while (0)

/* Rendering f's only step for sh is refused with CDD_E_NOTSUP. */
#define CHECK_REFUSED(sh, f)                                                   \
    do {                                                                       \
        char *got_ = render1(sh, f);                                           \
        CHECK_MSG(got_ == NULL, "rendered: %s", got_);                         \
        CHECK_INT(cdd_last_error()->code, CDD_E_NOTSUP);                       \
        free(got_);                                                            \
    } while (0)

static void test_fix_list(void)
{
    struct cdd_fixes f = {0};
    CHECK_INT(cdd_fixes_alternatives(&f), 0);
    cdd_fixes_or(&f); /* nothing to close yet */
    CHECK_INT(cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", "/a", ':'), 0);
    cdd_fixes_or(&f);
    cdd_fixes_or(&f); /* an empty alternative is not opened twice */
    CHECK_INT(cdd_fixes_write(&f, CDD_FIX_SYSTEM, "/etc/x.conf", "l1\nl2"), 0);
    const char *argv[] = {"ldconfig", NULL};
    CHECK_INT(cdd_fixes_run(&f, CDD_FIX_SYSTEM, argv), 0);
    CHECK_INT(f.n, 3);
    CHECK_INT(f.v[0].alt, 0);
    CHECK_INT(f.v[1].alt, 1);
    CHECK_INT(f.v[2].alt, 1);
    CHECK_INT(cdd_fixes_alternatives(&f), 2);
    CHECK_STR(cdd_fix_kind_name(f.v[1].kind), "write");
    CHECK_STR(cdd_fix_scope_name(f.v[2].scope), "system");

    const char *many[] = {"p", "1", "2", "3", "4", "5", "6", "7", NULL};
    CHECK_INT(cdd_fixes_run(&f, CDD_FIX_SESSION, many), CDD_E_USAGE);
    CHECK_INT(f.n, 3);

    struct cdd_fixes g = {0};
    CHECK_INT(cdd_fixes_set(&g, CDD_FIX_SESSION, "X", "1"), 0);
    CHECK_INT(cdd_fixes_append(&g, &f), 0);
    CHECK_INT(g.n, 4);
    CHECK_INT(cdd_fixes_alternatives(&g), 3);
    CHECK_STR(g.v[3].name, "ldconfig");
    CHECK_INT(g.v[3].alt, 2);
    cdd_fixes_clear(&g);
    cdd_fixes_clear(&f);
    CHECK_INT(f.n, 0);
    cdd_fixes_clear(NULL);
}

static void test_names_and_detection(void)
{
    enum cdd_shell sh = CDD_SHELL_COUNT;
    CHECK_INT(cdd_shell_parse("fish", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_FISH);
    CHECK_INT(cdd_shell_parse("pwsh", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_POWERSHELL);
    CHECK_INT(cdd_shell_parse("C:\\Windows\\System32\\CMD.EXE", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_CMD);
    CHECK_INT(cdd_shell_parse("/bin/dash", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_SH);
    CHECK_INT(cdd_shell_parse("tcsh", &sh), CDD_E_USAGE);
    CHECK(strstr(cdd_last_error()->msg, "tcsh") != NULL);
    CHECK_INT(cdd_shell_parse("", &sh), CDD_E_USAGE);
    for (int i = 0; i < CDD_SHELL_COUNT; i++) {
        CHECK_INT(cdd_shell_parse(cdd_shell_name((enum cdd_shell)i), &sh), 0);
        CHECK_INT(sh, i);
    }

    CHECK_INT(cdd_shell_detect(1, "/usr/bin/bash"), CDD_SHELL_POWERSHELL);
    CHECK_INT(cdd_shell_detect(1, NULL), CDD_SHELL_POWERSHELL);
    CHECK_INT(cdd_shell_detect(0, "/usr/bin/zsh"), CDD_SHELL_ZSH);
    CHECK_INT(cdd_shell_detect(0, "/usr/local/bin/fish"), CDD_SHELL_FISH);
    CHECK_INT(cdd_shell_detect(0, "/bin/bash"), CDD_SHELL_BASH);
    CHECK_INT(cdd_shell_detect(0, "/bin/tcsh"), CDD_SHELL_SH);
    CHECK_INT(cdd_shell_detect(0, NULL), CDD_SHELL_SH);
    CHECK_INT(cdd_shell_detect(0, ""), CDD_SHELL_SH);
}

static void test_quote(void)
{
    CHECK_QUOTE(CDD_SHELL_SH, "/usr/local/cuda-11.6/lib64",
                "/usr/local/cuda-11.6/lib64");
    CHECK_QUOTE(CDD_SHELL_SH, "", "''");
    CHECK_QUOTE(CDD_SHELL_SH, "My CUDA", "'My CUDA'");
    CHECK_QUOTE(CDD_SHELL_SH, "it's $HOME `id` \"q\" !x",
                "'it'\\''s $HOME `id` \"q\" !x'");
    CHECK_QUOTE(CDD_SHELL_BASH, "~/x", "'~/x'");
    CHECK_QUOTE(CDD_SHELL_FISH, "it's a\\b", "'it\\'s a\\\\b'");
    CHECK_QUOTE(CDD_SHELL_FISH, "50%", "'50%'");
    CHECK_QUOTE(CDD_SHELL_POWERSHELL, "C:\\CUDA\\bin", "C:\\CUDA\\bin");
    CHECK_QUOTE(CDD_SHELL_POWERSHELL, "-x", "'-x'");
    CHECK_QUOTE(CDD_SHELL_POWERSHELL, "it's $env:X `n",
                "'it''s $env:X `n'");
    /* U+2019 is a quote to PowerShell: doubled like '. */
    CHECK_QUOTE(CDD_SHELL_POWERSHELL, "it\xe2\x80\x99s", "'it\xe2\x80\x99\xe2\x80\x99s'");
    CHECK_QUOTE(CDD_SHELL_CMD, "C:\\CUDA\\bin", "C:\\CUDA\\bin");
    CHECK_QUOTE(CDD_SHELL_CMD, "C:\\Program Files\\A&B (x86)\\",
                "\"C:\\Program Files\\A&B (x86)\\\\\"");
    CHECK_QUOTE(CDD_SHELL_CMD, "a^b!", "\"a^b!\"");

    cdd_clear_error();
    CHECK(cdd_shell_quote(CDD_SHELL_CMD, "50%") == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_NOTSUP);
    CHECK(cdd_shell_quote(CDD_SHELL_CMD, "a\"b") == NULL);
    for (int i = 0; i < CDD_SHELL_COUNT; i++) {
        cdd_clear_error();
        CHECK(cdd_shell_quote((enum cdd_shell)i, "a\nb") == NULL);
        CHECK(cdd_shell_quote((enum cdd_shell)i, "a\x1b[31m") == NULL);
        CHECK_INT(cdd_last_error()->code, CDD_E_NOTSUP);
    }
}

static void test_set_and_prepend(void)
{
    struct cdd_fixes f = {0};
    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "LD_LIBRARY_PATH",
                      "/opt/My CUDA/v11.6/lib64", ':');
    CHECK_RENDER(CDD_SHELL_SH, &f,
                 "export LD_LIBRARY_PATH='/opt/My CUDA/v11.6/lib64'"
                 "\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"");
    CHECK_RENDER(CDD_SHELL_FISH, &f,
                 "set -gx LD_LIBRARY_PATH '/opt/My CUDA/v11.6/lib64' "
                 "$LD_LIBRARY_PATH");
    CHECK_RENDER(CDD_SHELL_POWERSHELL, &f,
                 "$env:LD_LIBRARY_PATH = '/opt/My CUDA/v11.6/lib64' + "
                 "$(if ($env:LD_LIBRARY_PATH) { ':' + $env:LD_LIBRARY_PATH })");
    f.v[0].scope = CDD_FIX_USER;
    CHECK_RENDER(CDD_SHELL_BASH, &f,
                 "printf '%s\\n' 'export LD_LIBRARY_PATH='\\''/opt/My "
                 "CUDA/v11.6/lib64'\\''\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"'"
                 " >> ~/.bashrc");
    f.v[0].scope = CDD_FIX_SYSTEM;
    CHECK_RENDER(CDD_SHELL_SH, &f,
                 "printf '%s\\n' 'export LD_LIBRARY_PATH='\\''/opt/My "
                 "CUDA/v11.6/lib64'\\''\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"'"
                 " | sudo tee -a /etc/profile.d/cudnn-deploy.sh >/dev/null");
    cdd_fixes_clear(&f);

    /* A Windows PATH entry with the characters cmd and PowerShell treat
     * specially. */
    const char *win = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\"
                      "CUDA\\v11.6 & it's ^(new)!\\bin";
    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", win, ';');
    CHECK_RENDER(CDD_SHELL_CMD, &f,
                 "set \"PATH=C:\\Program Files\\NVIDIA GPU Computing Toolkit\\"
                 "CUDA\\v11.6 & it's ^(new)!\\bin;%PATH%\"");
    CHECK_RENDER(CDD_SHELL_POWERSHELL, &f,
                 "$env:PATH = 'C:\\Program Files\\NVIDIA GPU Computing "
                 "Toolkit\\CUDA\\v11.6 & it''s ^(new)!\\bin' + $(if ($env:PATH) "
                 "{ ';' + $env:PATH })");
    f.v[0].scope = CDD_FIX_SYSTEM;
    CHECK_RENDER(CDD_SHELL_POWERSHELL, &f,
                 "[Environment]::SetEnvironmentVariable('PATH', 'C:\\Program "
                 "Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.6 & it''s "
                 "^(new)!\\bin' + $(if ($p = [Environment]::"
                 "GetEnvironmentVariable('PATH', 'Machine')) { ';' + $p }), "
                 "'Machine')");
    CHECK_RENDER(CDD_SHELL_CMD, &f,
                 "powershell -NoProfile -Command \"[Environment]::"
                 "SetEnvironmentVariable('PATH', 'C:\\Program Files\\NVIDIA GPU "
                 "Computing Toolkit\\CUDA\\v11.6 & it''s ^(new)!\\bin' + $(if "
                 "($p = [Environment]::GetEnvironmentVariable('PATH', "
                 "'Machine')) { ';' + $p }), 'Machine')\"");
    f.v[0].scope = CDD_FIX_USER;
    CHECK_RENDER(CDD_SHELL_FISH, &f,
                 "fish_add_path --move 'C:\\\\Program Files\\\\NVIDIA GPU "
                 "Computing Toolkit\\\\CUDA\\\\v11.6 & it\\'s ^(new)!\\\\bin'");
    cdd_fixes_clear(&f);

    /* '%' in a cmd value: written without quotes, carets keeping every
     * %NAME% from expanding. */
    cdd_fixes_set(&f, CDD_FIX_SESSION, "CUDNN_X", "C:\\a%PATH%b&\"c\"");
    CHECK_RENDER(CDD_SHELL_CMD, &f, "set CUDNN_X=C:\\a%^PATH%^b^&^\"c^\"");
    CHECK_RENDER(CDD_SHELL_SH, &f, "export CUDNN_X='C:\\a%PATH%b&\"c\"'");
    f.v[0].scope = CDD_FIX_USER;
    CHECK_REFUSED(CDD_SHELL_CMD, &f); /* setx cannot take it */
    cdd_fixes_clear(&f);

    cdd_fixes_set(&f, CDD_FIX_USER, "CUDA_PATH", "C:\\CUDA\\v11.6\\");
    CHECK_RENDER(CDD_SHELL_CMD, &f, "setx CUDA_PATH C:\\CUDA\\v11.6\\");
    CHECK_RENDER(CDD_SHELL_FISH, &f, "set -Ux CUDA_PATH 'C:\\\\CUDA\\\\v11.6\\\\'");
    CHECK_RENDER(CDD_SHELL_POWERSHELL, &f,
                 "[Environment]::SetEnvironmentVariable('CUDA_PATH', "
                 "'C:\\CUDA\\v11.6\\', 'User')");
    f.v[0].scope = CDD_FIX_SYSTEM;
    free(f.v[0].value);
    f.v[0].value = strdup("C:\\My CUDA\\");
    CHECK_RENDER(CDD_SHELL_CMD, &f, "setx CUDA_PATH \"C:\\My CUDA\\\\\" /M");
    CHECK_RENDER(CDD_SHELL_FISH, &f,
                 "printf '%s\\n' 'set -gx CUDA_PATH \\'C:\\\\\\\\My CUDA\\\\\\\\\\'' | "
                 "sudo tee -a /etc/fish/conf.d/cudnn-deploy.fish >/dev/null");
    cdd_fixes_clear(&f);

    /* fish needs --path for a list whose name does not end in PATH. */
    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "CUDNN_DIRS", "/a b", ':');
    CHECK_RENDER(CDD_SHELL_FISH, &f, "set -gx --path CUDNN_DIRS '/a b' $CUDNN_DIRS");
    cdd_fixes_clear(&f);
}

static void test_write_and_run(void)
{
    struct cdd_fixes f = {0};
    cdd_fixes_write(&f, CDD_FIX_SYSTEM, "/etc/ld.so.conf.d/cudnn.conf",
                    "/opt/My CUDA/lib64\n/opt/b");
    const char *argv[] = {"ldconfig", NULL};
    cdd_fixes_run(&f, CDD_FIX_SYSTEM, argv);
    char *all = cdd_shell_render_alt(CDD_SHELL_SH, &f, 0);
    CHECK_STR(all, "printf '%s\\n' '/opt/My CUDA/lib64' /opt/b | sudo tee "
                   "/etc/ld.so.conf.d/cudnn.conf >/dev/null && sudo ldconfig");
    free(all);
    all = cdd_shell_render_alt(CDD_SHELL_FISH, &f, 0);
    CHECK_STR(all, "printf '%s\\n' '/opt/My CUDA/lib64' /opt/b | sudo tee "
                   "/etc/ld.so.conf.d/cudnn.conf >/dev/null && sudo ldconfig");
    free(all);
    all = cdd_shell_render_alt(CDD_SHELL_POWERSHELL, &f, 0);
    CHECK_STR(all, "Set-Content -LiteralPath '/etc/ld.so.conf.d/cudnn.conf' "
                   "-Value '/opt/My CUDA/lib64', '/opt/b'; & 'ldconfig'");
    free(all);
    cdd_clear_error();
    CHECK(cdd_shell_render_alt(CDD_SHELL_SH, &f, 1) == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_NOTSUP);
    CHECK_STR(cdd_shell_scope_label(CDD_SHELL_POWERSHELL, &f.v[0]),
              "in an elevated PowerShell");
    CHECK_STR(cdd_shell_scope_label(CDD_SHELL_SH, &f.v[0]), "");
    cdd_fixes_clear(&f);

    cdd_fixes_write(&f, CDD_FIX_SESSION, "C:\\My Dir\\a.cfg",
                    "x=1 & y\n\n/? 100%OS% (z)");
    CHECK_RENDER(CDD_SHELL_CMD, &f,
                 ">\"C:\\My Dir\\a.cfg\" echo(x=1 ^& y& >>\"C:\\My Dir\\a.cfg\" "
                 "echo(& >>\"C:\\My Dir\\a.cfg\" echo(/? 100%^OS%^ ^(z^)");
    CHECK_RENDER(CDD_SHELL_SH, &f,
                 "printf '%s\\n' 'x=1 & y' '' '/? 100%OS% (z)' > 'C:\\My "
                 "Dir\\a.cfg'");
    cdd_fixes_clear(&f);

    cdd_fixes_write(&f, CDD_FIX_SESSION, "/tmp/empty", "");
    CHECK_RENDER(CDD_SHELL_SH, &f, "printf '%s\\n' '' > /tmp/empty");
    CHECK_RENDER(CDD_SHELL_CMD, &f, "type nul >/tmp/empty");
    cdd_fixes_clear(&f);

    const char *run[] = {"/opt/My Tool/x", "--a=b", "it's", NULL};
    cdd_fixes_run(&f, CDD_FIX_SESSION, run);
    CHECK_RENDER(CDD_SHELL_SH, &f, "'/opt/My Tool/x' --a=b 'it'\\''s'");
    CHECK_RENDER(CDD_SHELL_POWERSHELL, &f, "& '/opt/My Tool/x' '--a=b' 'it''s'");
    CHECK_RENDER(CDD_SHELL_CMD, &f, "\"/opt/My Tool/x\" \"--a=b\" \"it's\"");
    cdd_fixes_clear(&f);
}

static void test_refusals(void)
{
    struct cdd_fixes f = {0};
    cdd_fixes_set(&f, CDD_FIX_SESSION, "BAD NAME", "x");
    for (int i = 0; i < CDD_SHELL_COUNT; i++)
        CHECK_REFUSED((enum cdd_shell)i, &f);
    cdd_fixes_clear(&f);
    cdd_fixes_set(&f, CDD_FIX_SESSION, "X", "line1\nline2");
    for (int i = 0; i < CDD_SHELL_COUNT; i++)
        CHECK_REFUSED((enum cdd_shell)i, &f);
    cdd_fixes_clear(&f);
    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", "/a", ',');
    CHECK_REFUSED(CDD_SHELL_SH, &f);
    cdd_fixes_clear(&f);
    cdd_fixes_write(&f, CDD_FIX_SESSION, "C:\\100%\\x", "a");
    CHECK_REFUSED(CDD_SHELL_CMD, &f);
    cdd_fixes_clear(&f);
    cdd_fixes_write(&f, CDD_FIX_SESSION, "/x", "a\x1b]0;t\x07");
    for (int i = 0; i < CDD_SHELL_COUNT; i++)
        CHECK_REFUSED((enum cdd_shell)i, &f);
    cdd_fixes_clear(&f);
}

/* cmd's two forms: at the prompt a '%' is kept by carets; in a batch file
 * (the conda .bat, a script saved from env) it is "%%", quoted or not. */
static void test_cmd_batch_form(void)
{
    struct cdd_fixes f = {0};
    enum cdd_shell sh;
    CHECK_INT(cdd_shell_parse("cmd-batch", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_CMD_BATCH);
    CHECK_INT(cdd_shell_parse("C:\\x\\script.BAT", &sh), CDD_E_USAGE);
    CHECK_INT(cdd_shell_parse("bat", &sh), 0);
    CHECK_INT(sh, CDD_SHELL_CMD_BATCH);
    CHECK_STR(cdd_shell_name(CDD_SHELL_CMD_BATCH), "cmd-batch");
    CHECK(cdd_shell_is_cmd(CDD_SHELL_CMD_BATCH) && cdd_shell_is_cmd(CDD_SHELL_CMD));
    CHECK(!cdd_shell_is_cmd(CDD_SHELL_POWERSHELL));
    CHECK(strstr(cdd_shell_form_note(CDD_SHELL_CMD), "prompt form") != NULL);
    CHECK(strstr(cdd_shell_form_note(CDD_SHELL_CMD_BATCH), "batch-file form") !=
          NULL);
    CHECK_STR(cdd_shell_form_note(CDD_SHELL_SH), "");
    /* Neither note may hold what cmd would act on in a rem line. */
    CHECK(strpbrk(cdd_shell_form_note(CDD_SHELL_CMD), "%&|<>^") == NULL);
    CHECK(strpbrk(cdd_shell_form_note(CDD_SHELL_CMD_BATCH), "%&|<>^") == NULL);

    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", "C:\\50% & (x86)\\bin", ';');
    CHECK_RENDER(CDD_SHELL_CMD, &f,
                 "set PATH=C:\\50%^ ^& ^(x86^)\\bin;%PATH%");
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f,
                 "set \"PATH=C:\\50%% & (x86)\\bin;%PATH%\"");
    /* Kept for new windows: setx cannot take '%' at the prompt; in a batch
     * file PowerShell edits the list, each '%' doubled for cmd. */
    f.v[0].scope = CDD_FIX_USER;
    CHECK_REFUSED(CDD_SHELL_CMD, &f);
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f,
                 "powershell -NoProfile -Command \"[Environment]::"
                 "SetEnvironmentVariable('PATH', 'C:\\50%% & (x86)\\bin' + "
                 "$(if ($p = [Environment]::GetEnvironmentVariable('PATH', "
                 "'User')) { ';' + $p }), 'User')\"");
    CHECK_STR(cdd_shell_scope_label(CDD_SHELL_CMD_BATCH, &f.v[0]),
              "your account, new windows (a .bat file)");
    cdd_fixes_clear(&f);

    /* A '"' too: unquoted with carets, '%' still doubled. */
    cdd_fixes_set(&f, CDD_FIX_SESSION, "CUDNN_X", "a%PATH%\"b&");
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f, "set CUDNN_X=a%%PATH%%^\"b^&");
    f.v[0].scope = CDD_FIX_USER;
    CHECK_REFUSED(CDD_SHELL_CMD_BATCH, &f); /* setx cannot take '"' */
    cdd_fixes_clear(&f);
    cdd_fixes_set(&f, CDD_FIX_SYSTEM, "CUDA_PATH", "C:\\100%\\");
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f, "setx CUDA_PATH \"C:\\100%%\\\\\" /M");
    cdd_fixes_clear(&f);

    /* A list that may be unset: no empty entry when it is. */
    cdd_fixes_prepend(&f, CDD_FIX_SESSION, "LD_LIBRARY_PATH", "/opt/50% (x)",
                      ':');
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f,
                 "if defined LD_LIBRARY_PATH (set \"LD_LIBRARY_PATH=/opt/50%% "
                 "(x):%LD_LIBRARY_PATH%\") else set \"LD_LIBRARY_PATH=/opt/50%% "
                 "(x)\"");
    cdd_fixes_clear(&f);

    /* Written files and programs run. */
    cdd_fixes_write(&f, CDD_FIX_SESSION, "C:\\100%\\a.cfg", "x %OS% y");
    CHECK_RENDER(CDD_SHELL_CMD_BATCH, &f,
                 ">\"C:\\100%%\\a.cfg\" echo(x %%OS%% y");
    CHECK_REFUSED(CDD_SHELL_CMD, &f);
    cdd_fixes_clear(&f);
}

/* Values a destination cannot hold are refused where the fix is built
 * (fixes.c), whatever the shell: the list separator inside an entry, and
 * what ld.so.conf reads as something else. */
static void test_destination_refusals(void)
{
    struct cdd_fixes f = {0};
    CHECK(cdd_fix_list_entry_fault("PATH", "/opt/a:b/bin", ':') != NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "/opt/a;b/bin", ':') == NULL);
    CHECK(cdd_fix_list_entry_fault("LD_LIBRARY_PATH", "/opt/a;b", ':') != NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "C:\\a;b", ';') != NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "C:\\a", ';') == NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "", ':') != NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "/a\nb", ':') != NULL);
    CHECK(cdd_fix_list_entry_fault("PATH", "/a b#'$`\"%!^& \xc3\xa9", ':') ==
          NULL);
    CHECK(cdd_fix_ldconf_fault("/opt/c#d/lib") != NULL);
    CHECK(cdd_fix_ldconf_fault("/opt/e f /lib") == NULL);
    CHECK(cdd_fix_ldconf_fault("/opt/e f ") != NULL);
    CHECK(cdd_fix_ldconf_fault("/opt/x\ninclude /etc/evil") != NULL);
    CHECK(cdd_fix_ldconf_fault("opt/relative") != NULL);
    CHECK(cdd_fix_ldconf_fault("/opt/a:b;c") == NULL); /* plain there */

    cdd_clear_error();
    CHECK_INT(cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", "/x:/tmp/evil",
                                ':'),
              CDD_E_TARGET);
    CHECK(strstr(cdd_last_error()->msg, "separator") != NULL);
    CHECK_INT(f.n, 0);

    /* A library folder with ':': only the system-wide alternative. */
    CHECK_INT(cdd_fixes_libdir(&f, 0, "/opt/a:b/lib64"), 0);
    CHECK_INT(f.n, 2);
    CHECK_INT(f.v[0].kind, CDD_FIX_WRITE);
    CHECK_STR(f.v[0].value, "/opt/a:b/lib64");
    cdd_fixes_clear(&f);
    /* With '#': only LD_LIBRARY_PATH. */
    CHECK_INT(cdd_fixes_libdir(&f, 0, "/opt/c#d/lib64"), 0);
    CHECK_INT(f.n, 1);
    CHECK_INT(f.v[0].kind, CDD_FIX_PREPEND);
    cdd_fixes_clear(&f);
    /* Both: no fix, and the reasons. */
    CHECK_INT(cdd_fixes_libdir(&f, 0, "/opt/a:b#c"), CDD_E_TARGET);
    CHECK(strstr(cdd_last_error()->msg, "comment") != NULL);
    CHECK_INT(f.n, 0);
    CHECK_INT(cdd_fixes_libdir(&f, 1, "C:\\a;b\\bin"), CDD_E_TARGET);
    cdd_fixes_clear(&f);

    /* A list as read back (doctor): several entries, kept as they are. */
    CHECK_INT(cdd_fixes_path_first(&f, 0, "PATH", "/a:/b"), 0);
    struct cdd_fixes g = {0};
    CHECK_INT(cdd_fixes_append(&g, &f), 0);
    CHECK_INT(g.n, 2);
    cdd_fixes_clear(&f);
    cdd_fixes_clear(&g);
}

TEST_MAIN(TEST(test_fix_list), TEST(test_names_and_detection),
          TEST(test_quote), TEST(test_set_and_prepend),
          TEST(test_write_and_run), TEST(test_refusals),
          TEST(test_cmd_batch_form), TEST(test_destination_refusals),
          TEST(test_bounds))
