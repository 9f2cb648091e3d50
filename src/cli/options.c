/* Options: described once in a table (name, argument, commands it applies
 * to, help), from which both parsing and --help come. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cli.h"

enum opt_id {
    O_JSON, O_QUIET, O_HELP, O_CUDA, O_CUDA_ROOT, O_PREFIX, O_MANIFEST,
    O_ARCHIVE, O_SHA256, O_ALLOW_UNPINNED, O_DRY_RUN, O_FORCE,
    O_LOCK_TIMEOUT, O_NO_VERIFY, O_LEVEL, O_CHECK, O_OUTPUT, O_VERSION, O_CUDA_MAJOR,
    O_URL, O_REDISTRIB, O_CACHE_DIR, O_CACERT, O_CONNECT_TIMEOUT,
    O_LOW_SPEED_TIME, O_LOW_SPEED_LIMIT, O_RETRIES, O_JOBS, O_CHECK_TREE
};

struct opt {
    enum opt_id id;
    const char *lname;
    char sname;
    const char *argname; /* NULL: a flag */
    unsigned commands;
    const char *help;
};

static const struct opt opts[] = {
    {O_CUDA, "cuda", 0, "vX.Y", CMD_TARGETED | CMD_VERIFY | CMD_DOCTOR,
     "CUDA toolkit vX.Y: $CUDA_PATH_VX_Y, else the default root"},
    {O_CUDA_ROOT, "cuda-root", 0, "DIR", CMD_TARGETED | CMD_VERIFY | CMD_DOCTOR,
     "a CUDA toolkit tree"},
    {O_PREFIX, "prefix", 0, "DIR", CMD_TARGETED | CMD_VERIFY | CMD_DOCTOR,
     "a conda environment or other prefix"},
    {O_MANIFEST, "manifest", 'm', "NAME|FILE", CMD_INSTALL | CMD_VERIFY | CMD_FETCH,
     "manifest file, or the name of a shipped one (default: the shipped "
     "cuDNN 8.5.0.96 manifest for this platform)"},
    {O_ARCHIVE, "archive", 'a', "FILE", CMD_INSTALL,
     "the cuDNN archive (.zip or .tar.xz) to install"},
    {O_SHA256, "sha256", 0, "HEX", CMD_INSTALL | CMD_FETCH,
     "pin the archive's sha256 (from NVIDIA's redistrib JSON)"},
    {O_ALLOW_UNPINNED, "allow-unpinned", 0, NULL, CMD_INSTALL | CMD_FETCH,
     "accept an archive nothing pins (recorded in the receipt)"},
    {O_URL, "url", 0, "URL", CMD_INSTALL | CMD_FETCH,
     "download from here (repeatable: tried in order, before the "
     "manifest's URLs); https, or http for a pinned archive"},
    {O_REDISTRIB, "redistrib", 0, "FILE|URL", CMD_INSTALL | CMD_FETCH,
     "NVIDIA's redistrib_<version>.json: the pin when the manifest has "
     "none (default: the manifest's redistrib_url)"},
    {O_CACHE_DIR, "cache-dir", 0, "DIR", CMD_INSTALL | CMD_FETCH,
     "download cache (default: $XDG_CACHE_HOME/cudnn-deploy, else "
     "~/.cache/cudnn-deploy; %LOCALAPPDATA%\\cudnn-deploy\\cache)"},
    {O_CACERT, "cacert", 0, "FILE", CMD_INSTALL | CMD_FETCH,
     "trust the CA certificates in FILE (PEM) instead of the system's, "
     "for a private mirror"},
    {O_CONNECT_TIMEOUT, "connect-timeout", 0, "SECONDS",
     CMD_INSTALL | CMD_FETCH, "give up connecting after this long "
     "(default 30)"},
    {O_LOW_SPEED_LIMIT, "low-speed-limit", 0, "BYTES", CMD_INSTALL | CMD_FETCH,
     "abort a download slower than BYTES per second ... (default 1024)"},
    {O_LOW_SPEED_TIME, "low-speed-time", 0, "SECONDS", CMD_INSTALL | CMD_FETCH,
     "... for this long (default 60)"},
    {O_RETRIES, "retries", 0, "N", CMD_INSTALL | CMD_FETCH,
     "retry transient network failures N times, with back-off (default 4)"},
    {O_DRY_RUN, "dry-run", 'n', NULL, CMD_INSTALL | CMD_UNINSTALL,
     "check everything and print the plan; change nothing"},
    {O_FORCE, "force", 'f', NULL, CMD_INSTALL | CMD_UNINSTALL,
     "install: accept a tree of another or unknown CUDA version; "
     "uninstall: remove files changed since install"},
    {O_LOCK_TIMEOUT, "lock-timeout", 0, "SECONDS", CMD_TARGETED,
     "wait this long for another cudnn-deploy on the same tree (default 0)"},
    {O_LEVEL, "level", 0, "LEVEL", CMD_VERIFY,
     "files, load, gpu or bench (default: gpu when a driver is present, "
     "else load)"},
    {O_NO_VERIFY, "no-verify", 0, NULL, CMD_INSTALL,
     "do not verify after installing"},
    {O_CHECK, "check", 0, NULL, CMD_STATUS,
     "compare sha256 of every file, not only size and type"},
    {O_JOBS, "jobs", 'j', "N", CMD_INSTALL | CMD_STATUS,
     "threads for extraction and hashing (default: one per processor)"},
    {O_CHECK_TREE, "check-tree", 0, NULL, CMD_INSTALL,
     "re-installing the same archive: re-hash the installed files instead "
     "of trusting their size and modification time"},
    {O_OUTPUT, "output", 'o', "FILE", CMD_MANIFEST,
     "manifest create: write here instead of stdout"},
    {O_VERSION, "version", 0, "V", CMD_MANIFEST,
     "manifest create: cuDNN version (default: from cudnn_version.h)"},
    {O_CUDA_MAJOR, "cuda-major", 0, "N", CMD_MANIFEST,
     "manifest create: CUDA major (default: from the file name)"},
    {O_JSON, "json", 0, NULL, CMD_ALL,
     "print one JSON object on stdout (human text stays on stderr)"},
    {O_QUIET, "quiet", 'q', NULL, CMD_ALL, "print nothing but errors"},
    {O_HELP, "help", 'h', NULL, CMD_ALL, "show help"},
};

#define N_OPTS (sizeof opts / sizeof opts[0])

static const struct opt *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (strlen(opts[i].lname) == len && strncmp(opts[i].lname, name, len) == 0)
            return &opts[i];
    return NULL;
}

static const struct opt *find_short(char c)
{
    for (size_t i = 0; i < N_OPTS; i++)
        if (opts[i].sname && opts[i].sname == c)
            return &opts[i];
    return NULL;
}

static int usage(const char *fmt, const char *a, const char *b)
{
    return cdd_fail(CDD_E_USAGE, NULL, 0, fmt, a, b);
}

static int parse_number(const char *opt, const char *v, double lo, double hi,
                        double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= lo && d <= hi))
        return usage("--%s %s: not a valid number", opt, v);
    *out = d;
    return 0;
}

static int apply(const struct opt *o, const char *val, struct cdd_args *a)
{
    double d = 0;
    int r = 0;
    switch (o->id) {
    case O_JSON: a->json = 1; break;
    case O_QUIET: a->quiet = 1; break;
    case O_HELP: a->help = 1; break;
    case O_CUDA: a->target.cuda = val; break;
    case O_CUDA_ROOT: a->target.cuda_root = val; break;
    case O_PREFIX: a->target.prefix = val; break;
    case O_MANIFEST: a->manifest = val; break;
    case O_ARCHIVE: a->archive = val; break;
    case O_SHA256:
        a->sha256 = val;
        if (strlen(val) != 64 || strspn(val, "0123456789abcdefABCDEF") != 64)
            r = usage("--sha256 %s: expected 64 hex digits%s", val, "");
        break;
    case O_ALLOW_UNPINNED: a->allow_unpinned = 1; break;
    case O_DRY_RUN: a->dry_run = 1; break;
    case O_FORCE: a->force = 1; break;
    case O_NO_VERIFY: a->no_verify = 1; break;
    case O_LEVEL:
        if (strcmp(val, "files") == 0)
            a->level = 0;
        else if (strcmp(val, "load") == 0)
            a->level = 1;
        else if (strcmp(val, "gpu") == 0)
            a->level = 2;
        else if (strcmp(val, "bench") == 0)
            a->level = 3;
        else
            r = usage("--level %s: expected files, load, gpu or bench%s", val,
                      "");
        break;
    case O_CHECK: a->check = 1; break;
    case O_CHECK_TREE: a->check_tree = 1; break;
    case O_JOBS:
        r = parse_number(o->lname, val, 1, 1024, &d);
        if (!r && d != (int)d)
            r = usage("--%s %s: expected a whole number", o->lname, val);
        a->jobs = (int)d;
        break;
    case O_OUTPUT: a->output = val; break;
    case O_VERSION: a->version = val; break;
    case O_LOCK_TIMEOUT:
        r = parse_number(o->lname, val, 0, 1e7, &a->lock_timeout);
        break;
    case O_URL:
        if (a->n_urls >= sizeof a->urls / sizeof a->urls[0])
            return usage("too many --url options (at most %s)%s", "16", "");
        a->urls[a->n_urls++] = val;
        break;
    case O_REDISTRIB: a->redistrib = val; break;
    case O_CACHE_DIR: a->cache_dir = val; break;
    case O_CACERT: a->cacert = val; break;
    case O_CONNECT_TIMEOUT:
    case O_LOW_SPEED_TIME:
    case O_LOW_SPEED_LIMIT:
    case O_RETRIES:
        r = parse_number(o->lname, val, o->id == O_RETRIES ? 0 : 1, 1e9, &d);
        if (!r && d != (long)d)
            r = usage("--%s %s: expected a whole number", o->lname, val);
        if (r)
            break;
        if (o->id == O_CONNECT_TIMEOUT)
            a->connect_timeout = (long)d;
        else if (o->id == O_LOW_SPEED_TIME)
            a->low_speed_time = (long)d;
        else if (o->id == O_LOW_SPEED_LIMIT)
            a->low_speed_limit = (long)d;
        else if (d > 100)
            r = usage("--%s %s: at most 100", o->lname, val);
        else
            a->retries = (int)d;
        break;
    case O_CUDA_MAJOR:
        r = parse_number(o->lname, val, 1, 99, &d);
        if (!r && d != (int)d)
            r = usage("--%s %s: expected a whole number", o->lname, val);
        a->cuda_major = (int)d;
        break;
    }
    return r;
}

static int empty_value(const struct opt *o, const char *v)
{
    if (v && *v)
        return 0;
    return usage("--%s needs a value (%s)", o->lname, o->argname);
}

int cdd_args_parse(const struct cdd_command *cmd, int argc, char **argv,
                   int first, struct cdd_args *a)
{
    unsigned bit = cmd ? cmd->bit : CMD_ALL;
    int only_positional = 0;
    for (int i = first; i < argc; i++) {
        const char *s = argv[i];
        const struct opt *o = NULL;
        const char *val = NULL;
        if (only_positional || s[0] != '-' || s[1] == '\0') {
            if (!cmd)
                return usage("unexpected argument '%s'%s", s, "");
            if ((int)a->n_positional >= cmd->max_positional ||
                a->n_positional >= sizeof a->positional / sizeof a->positional[0])
                return usage("unexpected argument '%s' for '%s'", s, cmd->name);
            a->positional[a->n_positional++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (s[1] == '-') {
            const char *eq = strchr(s + 2, '=');
            size_t len = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);
            o = find_long(s + 2, len);
            if (!o)
                return usage("unknown option '%s'%s", s, "");
            if (eq) {
                if (!o->argname)
                    return usage("option '--%s' takes no value%s", o->lname, "");
                val = eq + 1;
            }
        } else {
            if (s[2] != '\0')
                return usage("unknown option '%s' (one short option at a time)%s",
                             s, "");
            o = find_short(s[1]);
            if (!o)
                return usage("unknown option '%s'%s", s, "");
        }
        if (!(o->commands & bit))
            return usage("option '--%s' does not apply to '%s'", o->lname,
                         cmd ? cmd->name : "cudnn-deploy");
        if (o->argname && !val) {
            if (i + 1 >= argc)
                return usage("option '--%s' needs a value (%s)", o->lname,
                             o->argname);
            val = argv[++i];
        }
        if (o->argname && empty_value(o, val))
            return CDD_E_USAGE;
        int r = apply(o, val, a);
        if (r)
            return r;
    }
    return 0;
}

static void print_opts(unsigned bit)
{
    for (size_t i = 0; i < N_OPTS; i++) {
        const struct opt *o = &opts[i];
        if (!(o->commands & bit) || (bit != CMD_ALL && o->commands == CMD_ALL))
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%c%s--%s%s%s", o->sname ? "-" : "",
                 o->sname ? o->sname : ' ', o->sname ? ", " : "  ", o->lname,
                 o->argname ? " " : "", o->argname ? o->argname : "");
        printf("  %-28s %s\n", left + (o->sname ? 0 : 1), o->help);
    }
}

static void print_exit_codes(void)
{
    printf("\nExit codes:\n"
           "  0  success\n"
           "  1  a check found a problem (verify, doctor, status; install whose "
           "verify failed)\n"
           "  2  usage error\n"
           "  3  rejected input (manifest, archive, checksum, unsafe entry, "
           "version mismatch)\n"
           "  4  environment or I/O failure (tree not found, permission, disk "
           "full, lock held, network)\n");
}

void cdd_help_print(const struct cdd_command *cmd)
{
    if (cmd) {
        printf("Usage: cudnn-deploy %s %s\n\n%s\n\n%s\n\nOptions:\n",
               cmd->name, cmd->usage, cmd->summary, cmd->description);
        print_opts(cmd->bit);
        printf("\nGlobal options:\n");
        for (size_t i = 0; i < N_OPTS; i++)
            if (opts[i].commands == CMD_ALL)
                printf("  %s%c%s--%-20s %s\n", opts[i].sname ? "-" : " ",
                       opts[i].sname ? opts[i].sname : ' ',
                       opts[i].sname ? ", " : "  ", opts[i].lname,
                       opts[i].help);
        print_exit_codes();
        return;
    }
    printf("Usage: cudnn-deploy [--json] [--quiet] <command> [options]\n\n"
           "Installs NVIDIA cuDNN from its official archives into CUDA "
           "toolkit trees,\nchecked at every step, undoable, and verified.\n\n"
           "Commands:\n");
    for (size_t i = 0; i < cdd_command_count; i++)
        printf("  %-10s %s\n", cdd_commands[i].name, cdd_commands[i].summary);
    printf("\nTargets (one of):\n"
           "  --cuda vX.Y        $CUDA_PATH_VX_Y, else the default root of "
           "CUDA X.Y\n"
           "  --cuda-root DIR    a CUDA toolkit tree\n"
           "  --prefix DIR       a conda environment or other prefix\n"
           "\nGlobal options:\n"
           "  --json             one JSON object on stdout\n"
           "  -q, --quiet        print nothing but errors\n"
           "  -h, --help         help (also 'cudnn-deploy <command> --help')\n"
           "  --version          print the version\n");
    print_exit_codes();
}
