/* The rendered fixes run in real shells (POSIX hosts): each kind of step,
 * for a folder whose name holds spaces, both quotes, '$', a backtick command,
 * '%', '!', '^', '&', '#', '*', '~', a backslash and non-ASCII letters,
 * pasted into sh (dash where installed), an interactive bash (history
 * expansion on, as when a user pastes) and, where installed, zsh and fish
 * (scripts/install-deps.sh installs them; a missing one is skipped, said on
 * stderr); the shell's resulting variable or file must be exactly what the
 * fix says. The system-wide library fix's file is then read by ldconfig
 * itself (-f FILE -C a private cache): exactly the intended folder is
 * registered. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdd/fix.h"
#include "shell.h"
#include "test.h"

static char tmp[1024];
static char hostile[2048]; /* a folder under tmp */
static const char hostile_name[] =
    "My CUDA/it's $HOME `echo pwned` \"q\" %PATH% !x ^& #c *~\\b "
    "\xc3\xa9\xe6\x97\xa5";

static int have_prog(const char *p)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", p);
    return system(cmd) == 0;
}

/* The program of each shell we can run here, or NULL (said once). */
static const char *shell_prog(enum cdd_shell sh)
{
    static const char *const progs[CDD_SHELL_COUNT] = {"sh", "bash", "zsh",
                                                       "fish"};
    static int said[CDD_SHELL_COUNT];
    const char *p = (unsigned)sh < CDD_SHELL_COUNT ? progs[sh] : NULL;
    if (!p)
        return NULL;
    /* sh: dash, the strictest POSIX shell at hand, where installed. */
    if (sh == CDD_SHELL_SH && have_prog("dash"))
        return "dash";
    if (have_prog(p))
        return p;
    if (!said[sh]++)
        fprintf(stderr, "  skip %s: not installed (scripts/install-deps.sh "
                        "installs it)\n", p);
    return NULL;
}

/* Run script in shell sh (fed on stdin, as a paste is; bash interactive)
 * with var set to val (NULL: unset) and HOME=tmp; its stdout into out. The
 * shell's exit status, or -1. */
static int run_in(enum cdd_shell sh, const char *script, const char *var,
                  const char *val, char *out, size_t len)
{
    int in[2], o[2];
    const char *prog = shell_prog(sh);
    if (!prog || pipe(in) || pipe(o))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(o[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        close(in[1]);
        close(o[0]);
        if (val)
            setenv(var, val, 1);
        else
            unsetenv(var);
        setenv("HOME", tmp, 1);
        if (sh == CDD_SHELL_BASH)
            execlp(prog, prog, "--norc", "--noprofile", "-i", (char *)NULL);
        else if (sh == CDD_SHELL_FISH)
            execlp(prog, prog, "--no-config", (char *)NULL);
        else if (sh == CDD_SHELL_ZSH)
            execlp(prog, prog, "-f", (char *)NULL);
        else
            execlp(prog, prog, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(o[1]);
    size_t sl = strlen(script);
    if (write(in[1], script, sl) != (ssize_t)sl || write(in[1], "\n", 1) != 1)
        fprintf(stderr, "  short write to %s\n", prog);
    close(in[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(o[0], out + n, len - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(o[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The step rendered for sh, then a line printing var's value. */
static char *script_for(enum cdd_shell sh, const struct cdd_fix *f,
                        const char *var)
{
    char *cmd = cdd_shell_render(sh, f);
    if (!cmd)
        return NULL;
    size_t n = strlen(cmd) + 2 * strlen(var) + 64;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s\nprintf '[%%s]' \"$%s\"", cmd, var);
    free(cmd);
    return s;
}

static void setup(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    snprintf(tmp, sizeof tmp, "%s/shell-eval-%ld", base ? base : "/tmp",
             (long)getpid());
    snprintf(hostile, sizeof hostile, "%s/%s", tmp, hostile_name);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/My CUDA'", tmp, tmp);
    if (system(cmd) != 0 || (mkdir(hostile, 0700) && errno != EEXIST))
        fprintf(stderr, "  setup of %s failed\n", hostile);
}

static void test_prepend_session(void)
{
    struct cdd_fixes f = {0};
    CHECK_INT(cdd_fixes_prepend(&f, CDD_FIX_SESSION, "LD_LIBRARY_PATH",
                                hostile, ':'),
              0);
    char want[4096], out[8192];
    int ran = 0;
    for (int i = 0; i < CDD_SHELL_POWERSHELL; i++) {
        enum cdd_shell sh = (enum cdd_shell)i;
        if (!shell_prog(sh))
            continue;
        char *s = script_for(sh, &f.v[0], "LD_LIBRARY_PATH");
        CHECK(s != NULL);
        if (!s)
            continue;
        /* Unset: the entry alone, no empty entry (the current folder). */
        CHECK_INT(run_in(sh, s, "LD_LIBRARY_PATH", NULL, out, sizeof out), 0);
        snprintf(want, sizeof want, "[%s]", hostile);
        CHECK_MSG(strcmp(out, want) == 0, "%s: %s", cdd_shell_name(sh), out);
        /* Set: the entry first. */
        CHECK_INT(run_in(sh, s, "LD_LIBRARY_PATH", "/old:/x y", out, sizeof out), 0);
        snprintf(want, sizeof want, "[%s:/old:/x y]", hostile);
        CHECK_MSG(strcmp(out, want) == 0, "%s: %s", cdd_shell_name(sh), out);
        free(s);
        ran++;
    }
    CHECK(ran >= 2); /* sh and bash are always there */
    cdd_fixes_clear(&f);
}

static void test_set_and_user_scope(void)
{
    struct cdd_fixes f = {0};
    CHECK_INT(cdd_fixes_set(&f, CDD_FIX_SESSION, "CUDNN_X", hostile), 0);
    char want[4096], out[8192];
    snprintf(want, sizeof want, "[%s]", hostile);
    for (int i = 0; i < CDD_SHELL_POWERSHELL; i++) {
        enum cdd_shell sh = (enum cdd_shell)i;
        if (!shell_prog(sh))
            continue;
        char *s = script_for(sh, &f.v[0], "CUDNN_X");
        CHECK(s != NULL);
        CHECK_INT(run_in(sh, s ? s : "", "CUDNN_X", "old", out, sizeof out), 0);
        CHECK_MSG(strcmp(out, want) == 0, "%s: %s", cdd_shell_name(sh), out);
        free(s);
    }

    /* "To keep it": the line goes into the start-up file that a new sh
     * (~/.profile, HOME is tmp) reads. */
    f.v[0].scope = CDD_FIX_USER;
    char *cmd = cdd_shell_render(CDD_SHELL_SH, &f.v[0]);
    CHECK(cmd != NULL);
    CHECK_INT(run_in(CDD_SHELL_SH, cmd ? cmd : "", "CUDNN_X", NULL, out,
                     sizeof out), 0);
    CHECK_INT(run_in(CDD_SHELL_SH, ". ~/.profile; printf '[%s]' \"$CUDNN_X\"",
                     "CUDNN_X", NULL, out, sizeof out), 0);
    CHECK_MSG(strcmp(out, want) == 0, "%s", out);
    free(cmd);
    cdd_fixes_clear(&f);
}

static void test_write_and_run(void)
{
    struct cdd_fixes f = {0};
    char file[4096], text[8192], out[8192];
    snprintf(file, sizeof file, "%s/ld.so.conf", hostile);
    snprintf(text, sizeof text, "%s\n/second line 'q' $x\n", hostile);
    CHECK_INT(cdd_fixes_write(&f, CDD_FIX_SESSION, file, text), 0);
    const char *argv[] = {"cat", file, NULL};
    CHECK_INT(cdd_fixes_run(&f, CDD_FIX_SESSION, argv), 0);
    for (int i = 0; i < CDD_SHELL_POWERSHELL; i++) {
        enum cdd_shell sh = (enum cdd_shell)i;
        if (!shell_prog(sh))
            continue;
        unlink(file);
        char *s = cdd_shell_render_alt(sh, &f, 0);
        CHECK(s != NULL);
        CHECK_INT(run_in(sh, s ? s : "", "X", NULL, out, sizeof out), 0);
        CHECK_MSG(strcmp(out, text) == 0, "%s: %s", cdd_shell_name(sh), out);
        free(s);
    }
    cdd_fixes_clear(&f);
}

/* A SET value is no list: ':' and ';' are plain in it, as everything else
 * but a control character. */
static void test_set_value_with_separators(void)
{
    struct cdd_fixes f = {0};
    char val[4096], want[4200], out[8192];
    snprintf(val, sizeof val, "%s:/x;y", hostile);
    CHECK_INT(cdd_fixes_set(&f, CDD_FIX_SESSION, "CUDA_PATH", val), 0);
    snprintf(want, sizeof want, "[%s]", val);
    for (int i = 0; i < CDD_SHELL_POWERSHELL; i++) {
        enum cdd_shell sh = (enum cdd_shell)i;
        if (!shell_prog(sh))
            continue;
        char *s = script_for(sh, &f.v[0], "CUDA_PATH");
        CHECK(s != NULL);
        CHECK_INT(run_in(sh, s ? s : "", "CUDA_PATH", NULL, out, sizeof out),
                  0);
        CHECK_MSG(strcmp(out, want) == 0, "%s: %s", cdd_shell_name(sh), out);
        free(s);
    }
    cdd_fixes_clear(&f);
}

/* The path of ldconfig, or NULL. */
static const char *ldconfig_prog(void)
{
    static const char *const c[] = {"/sbin/ldconfig", "/usr/sbin/ldconfig"};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        if (access(c[i], X_OK) == 0)
            return c[i];
    return NULL;
}

/* cdd_fixes_libdir's system-wide file, written by each shell (to a file
 * of ours instead of /etc/ld.so.conf.d, without sudo), then given to
 * ldconfig: the folders it registers from that file are exactly dir, and
 * its cache maps the library there. */
static void test_ldconf_read_by_ldconfig(void)
{
    const char *ldc = ldconfig_prog();
    if (!ldc || !have_prog("cc")) {
        fprintf(stderr, "  skip: no ldconfig or no cc to build a library\n");
        return;
    }
    /* Everything ld.so.conf takes plainly: ':' and ';' too (no '#', no
     * white space at the end: fixes.c refuses those). */
    char dir[4096], lib[4200], conf[1100], cache[1100], cmd[8192];
    snprintf(dir, sizeof dir, "%s/ld dir: it's $x `y` \"q\" %%P%% !^&;"
                              "\xc3\xa9", tmp);
    snprintf(lib, sizeof lib, "%s/libcddprobe.so.1", dir);
    snprintf(conf, sizeof conf, "%s/cudnn.conf", tmp);
    snprintf(cache, sizeof cache, "%s/ld.so.cache", tmp);
    CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -Wl,-soname,libcddprobe.so.1 "
             "-x c /dev/null -o '%s/probe.so' 2>/dev/null", tmp);
    CHECK_INT(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "%s/probe.so", tmp);
    CHECK(rename(cmd, lib) == 0);

    struct cdd_fixes f = {0};
    CHECK_INT(cdd_fixes_libdir(&f, 0, dir), 0);
    struct cdd_fix *w = NULL;
    for (size_t i = 0; i < f.n; i++)
        if (f.v[i].kind == CDD_FIX_WRITE)
            w = &f.v[i];
    CHECK(w != NULL);
    if (!w) {
        cdd_fixes_clear(&f);
        return;
    }
    free(w->name);
    w->name = strdup(conf);
    w->scope = CDD_FIX_SESSION;
    for (int i = 0; i < CDD_SHELL_POWERSHELL; i++) {
        enum cdd_shell sh = (enum cdd_shell)i;
        char out[8192];
        if (!shell_prog(sh))
            continue;
        unlink(conf);
        unlink(cache);
        char *s = cdd_shell_render(sh, w);
        CHECK(s != NULL);
        CHECK_INT(run_in(sh, s ? s : "", "X", NULL, out, sizeof out), 0);
        free(s);
        /* -X: no links changed anywhere; -C: our cache, not the system's. */
        snprintf(cmd, sizeof cmd, "%s -X -v -f '%s' -C '%s' 2>/dev/null", ldc,
                 conf, cache);
        FILE *p = popen(cmd, "r");
        CHECK(p != NULL);
        int from_conf = 0, exact = 0;
        char line[8192], tag[1200];
        snprintf(tag, sizeof tag, ": (from %s:", conf);
        while (p && fgets(line, sizeof line, p)) {
            char *at = strstr(line, tag);
            if (!at)
                continue;
            from_conf++;
            *at = '\0';
            exact += strcmp(line, dir) == 0;
            CHECK_MSG(strcmp(line, dir) == 0, "%s registered %s",
                      cdd_shell_name(sh), line);
        }
        if (p)
            pclose(p);
        CHECK_MSG(from_conf == 1 && exact == 1, "%s: %d folders from the file",
                  cdd_shell_name(sh), from_conf);
        snprintf(cmd, sizeof cmd, "%s -p -C '%s' 2>/dev/null", ldc, cache);
        int mapped = 0;
        char want[4300];
        snprintf(want, sizeof want, "=> %s\n", lib);
        if ((p = popen(cmd, "r"))) {
            while (fgets(line, sizeof line, p))
                if (strstr(line, "libcddprobe.so.1 ") &&
                    strlen(line) >= strlen(want) &&
                    !strcmp(line + strlen(line) - strlen(want), want))
                    mapped++;
            pclose(p);
        }
        CHECK_MSG(mapped == 1, "%s: libcddprobe.so.1 not mapped to %s",
                  cdd_shell_name(sh), lib);
    }
    cdd_fixes_clear(&f);
}

static void cleanup(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "  could not remove %s\n", tmp);
}

TEST_MAIN(TEST(setup), TEST(test_prepend_session),
          TEST(test_set_and_user_scope), TEST(test_write_and_run),
          TEST(test_set_value_with_separators),
          TEST(test_ldconf_read_by_ldconfig), TEST(cleanup))
