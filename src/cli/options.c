/* Options: described once, typed, in a table (name, type, commands it
 * applies to, where its value goes, help), from which parsing, --help, the
 * man page and the shell completions all come (tools/gendoc.c writes the
 * last two). Each type is parsed and validated by one function here. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/compat_attr.h"
#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/profile.h"
#include "cdd/strbuf.h"
#include "cdd/sbom.h"
#include "cli.h"
#include "shell.h"

#define F(member) offsetof(struct cdd_cmdline, member)
#define NOF CDD_NO_FIELD

const struct cdd_opt_value cdd_level_values[] = {
    {"files", CDD_LEVEL_FILES},
    {"load", CDD_LEVEL_LOAD},
    {"gpu", CDD_LEVEL_GPU},
    {"bench", CDD_LEVEL_BENCH},
    {NULL, 0}};

const struct cdd_opt_value cdd_color_values[] = {
    {"auto", CDD_COLOR_AUTO},
    {"always", CDD_COLOR_ALWAYS},
    {"never", CDD_COLOR_NEVER},
    {NULL, 0}};

/* The names cdd_shell_parse also takes (shell.c), with pwsh. */
const struct cdd_opt_value cdd_shell_values[] = {
    {"sh", CDD_SHELL_SH},
    {"bash", CDD_SHELL_BASH},
    {"zsh", CDD_SHELL_ZSH},
    {"fish", CDD_SHELL_FISH},
    {"powershell", CDD_SHELL_POWERSHELL},
    {"pwsh", CDD_SHELL_POWERSHELL},
    {"cmd", CDD_SHELL_CMD},
    {"cmd-batch", CDD_SHELL_CMD_BATCH},
    {NULL, 0}};

/* images (docs/containers.md) */
const struct cdd_opt_value cdd_profile_values[] = {
    {"full", CDD_PROFILE_FULL},
    {"dev", CDD_PROFILE_DEV},
    {"runtime", CDD_PROFILE_RUNTIME},
    {NULL, 0}};

const struct cdd_opt_value cdd_sbom_format_values[] = {
    {"cyclonedx", CDD_SBOM_CYCLONEDX},
    {"spdx", CDD_SBOM_SPDX},
    {NULL, 0}};

#define TGT (CMD_TARGETED | CMD_VERIFY | CMD_DOCTOR | CMD_ENV | CMD_SBOM)
#define NET (CMD_INSTALL | CMD_FETCH)
/* Download settings, also for bundle (fleet). */
#define DL (NET | CMD_BUNDLE)

const struct cdd_option cdd_options[] = {
    {"cuda", 0, CDD_OPT_CUDA, "vX.Y", TGT | CMD_RELEASES, F(target.spec.cuda),
     NOF, 0, 0, NULL,
     "CUDA toolkit vX.Y: $CUDA_PATH_VX_Y, else the default root (releases: "
     "the CUDA version to fit)"},
    {"cuda-root", 0, CDD_OPT_DIR, "DIR", TGT | CMD_RELEASES,
     F(target.spec.cuda_root), NOF,
     0, 0, NULL, "a CUDA toolkit tree"},
    {"prefix", 0, CDD_OPT_DIR, "DIR", TGT, F(target.spec.prefix), NOF, 0, 0,
     NULL, "a conda environment or other prefix"},
    {"manifest", 'm', CDD_OPT_FILE, "NAME|FILE",
     CMD_INSTALL | CMD_VERIFY | CMD_FETCH, F(obtain.manifest), NOF, 0, 0, NULL,
     "manifest file, or the name of a shipped one (default: the shipped "
     "cuDNN 8.5.0.96 manifest for this platform)"},
    {"archive", 'a', CDD_OPT_FILE, "FILE", CMD_INSTALL, F(obtain.archive),
     NOF, 0, 0, NULL, "the cuDNN archive (.zip or .tar.xz) to install"},
    {"sha256", 0, CDD_OPT_SHA256, "HEX", NET, F(obtain.sha256),
     F(obtain.has_sha256), 0, 0, NULL,
     "pin the archive's sha256 (from NVIDIA's redistrib JSON)"},
    {"allow-unpinned", 0, CDD_OPT_FLAG, NULL, NET, F(obtain.allow_unpinned),
     NOF, 0, 0, NULL,
     "accept an archive nothing pins (recorded in the receipt)"},
    {"url", 0, CDD_OPT_URL, "URL", NET, F(obtain.urls), NOF, 0, 0, NULL,
     "download from here (repeatable: tried in order, before the "
     "manifest's URLs); https, or http for a pinned archive"},
    {"redistrib", 0, CDD_OPT_FILE, "FILE|URL", NET, F(obtain.redistrib), NOF,
     0, 0, NULL,
     "NVIDIA's redistrib_<version>.json: the pin when the manifest has "
     "none, for a download (default: the manifest's redistrib_url) or a "
     "local --archive"},
    {"platform", 0, CDD_OPT_STRING, "PLATFORM",
     CMD_INSTALL | CMD_RELEASES | CMD_MANIFEST, F(obtain.platform), NOF, 0, 0,
     NULL,
     "NVIDIA's platform name (linux-x86_64, linux-sbsa, linux-aarch64, "
     "windows-x86_64, windows-arm64): needed to provision a tree for another "
     "machine than this host's (releases: 'all' for every platform; "
     "manifest create: when the file name does not say)"},
    /* the release catalog (docs/releases.md) */
    {"cudnn", 0, CDD_OPT_STRING, "VERSION", CMD_INSTALL, F(obtain.cudnn), NOF,
     0, 0, NULL,
     "the newest catalog release matching VERSION (9, 9.13, 9.13.0.50 or "
     "latest) that fits the tree's CUDA, the platform, the driver and every "
     "GPU; pinned by NVIDIA's published sha256"},
    {"gpu-cc", 0, CDD_OPT_LIST, "X.Y", CMD_INSTALL | CMD_RELEASES |
     CMD_VERIFY | CMD_DOCTOR,
     F(obtain.gpu_cc), NOF, 0, 0, NULL,
     "a GPU's compute capability to fit (repeatable; default: every GPU the "
     "driver reports)"},
    {"driver", 0, CDD_OPT_STRING, "VERSION", CMD_INSTALL | CMD_RELEASES |
     CMD_VERIFY | CMD_DOCTOR,
     F(obtain.driver), NOF, 0, 0, NULL,
     "the NVIDIA driver to fit, e.g. 580.65.06 (default: the installed one)"},
    {"catalog", 0, CDD_OPT_DIR, "DIR", CMD_INSTALL | CMD_RELEASES |
     CMD_VERIFY | CMD_DOCTOR,
     F(obtain.catalog), NOF, 0, 0, NULL,
     "read the release catalog from DIR (redistrib_*.json and facts.json) "
     "instead of the built-in one (also $CUDNN_DEPLOY_CATALOG)"},
    {"cache-dir", 0, CDD_OPT_DIR, "DIR", DL, F(obtain.cache_dir), NOF, 0, 0,
     NULL,
     "download cache (default: $XDG_CACHE_HOME/cudnn-deploy, else "
     "~/.cache/cudnn-deploy; %LOCALAPPDATA%\\cudnn-deploy\\cache)"},
    {"cacert", 0, CDD_OPT_FILE, "FILE", DL, F(obtain.cacert), NOF, 0, 0, NULL,
     "trust the CA certificates in FILE (PEM) instead of the system's, "
     "for a private mirror"},
    {"connect-timeout", 0, CDD_OPT_NUMBER, "SECONDS", DL,
     F(obtain.connect_timeout), NOF, 1, 1e9, NULL,
     "give up connecting after this long (default 30)"},
    {"low-speed-limit", 0, CDD_OPT_NUMBER, "BYTES", DL,
     F(obtain.low_speed_limit), NOF, 1, 1e9, NULL,
     "abort a download slower than BYTES per second ... (default 1024)"},
    {"low-speed-time", 0, CDD_OPT_NUMBER, "SECONDS", DL,
     F(obtain.low_speed_time), NOF, 1, 1e9, NULL,
     "... for this long (default 60)"},
    {"retries", 0, CDD_OPT_NUMBER, "N", DL, F(obtain.retries), NOF, 0, 100,
     NULL,
     "retry transient network failures N times, with back-off (default 4)"},
    {"dry-run", 'n', CDD_OPT_FLAG, NULL, CMD_INSTALL | CMD_UNINSTALL,
     F(change.dry_run), NOF, 0, 0, NULL,
     "check everything and print the plan; change nothing"},
    /* One row per command: each help says what --force does there. */
    {"force", 'f', CDD_OPT_FLAG, NULL, CMD_INSTALL,
     F(change.force), NOF, 0, 0, NULL,
     "accept a tree of another or unknown CUDA version"},
    {"force", 'f', CDD_OPT_FLAG, NULL, CMD_UNINSTALL,
     F(change.force), NOF, 0, 0, NULL,
     "remove files changed since install too"},
    {"lock-timeout", 0, CDD_OPT_SECONDS, "SECONDS", CMD_TARGETED | CMD_ENV,
     F(target.lock_timeout), NOF, 0, 1e7, NULL,
     "wait this long for another cudnn-deploy on the same tree (default 0)"},
    {"level", 0, CDD_OPT_ENUM, "LEVEL", CMD_VERIFY, F(verify.level),
     F(verify.level_given), 0, 0, cdd_level_values,
     "files, load, gpu or bench (default: gpu when a driver is present, "
     "else load)"},
    {"gpu-timeout", 0, CDD_OPT_SECONDS, "SECONDS", CMD_INSTALL | CMD_VERIFY,
     F(verify.gpu_timeout), F(verify.gpu_timeout_given), 0, 1e7, NULL,
     "stop the GPU checks, as a failing check, when the driver or cuDNN "
     "makes no progress for this long: a hung driver or GPU (default 300; "
     "0: wait for ever; on Windows, where they run in this process, it "
     "ends with the reason, exit 1)"},
    {"no-verify", 0, CDD_OPT_FLAG, NULL, CMD_INSTALL, F(change.no_verify),
     NOF, 0, 0, NULL, "do not verify after installing"},
    {"check", 0, CDD_OPT_FLAG, NULL, CMD_STATUS, F(change.check), NOF, 0, 0,
     NULL, "compare sha256 of every file, not only size and type"},
    {"jobs", 'j', CDD_OPT_NUMBER, "N", CMD_INSTALL | CMD_STATUS,
     F(change.jobs), NOF, 1, 1024, NULL,
     "threads for extraction and hashing (default: one per processor)"},
    {"no-stream", 0, CDD_OPT_FLAG, NULL, CMD_INSTALL, F(change.no_stream),
     NOF, 0, 0, NULL,
     "download the whole archive first, then install (default: install it "
     "as it downloads; also CUDNN_DEPLOY_NO_STREAM=1)"},
    {"check-tree", 0, CDD_OPT_FLAG, NULL, CMD_INSTALL, F(change.check_tree),
     NOF, 0, 0, NULL,
     "re-installing the same archive: re-hash the installed files instead "
     "of trusting their size and modification time"},
    /* fleet (docs/fleet.md): optional components, bundles */
    {"with", 0, CDD_OPT_LIST, "NAME[=FILE]", CMD_INSTALL, F(change.with), NOF,
     0, 0, NULL,
     "also install the manifest's optional component NAME (zlibwapi), from "
     "FILE or its pinned download (repeatable)"},
    {"manifest", 'm', CDD_OPT_LIST, "NAME|FILE", CMD_BUNDLE,
     F(bundle.manifests), NOF, 0, 0, NULL,
     "bundle: a manifest whose archives go in (repeatable)"},
    {"shell", 0, CDD_OPT_STRING, "SHELL", CMD_ENV, F(env.shell), NOF, 0, 0,
     NULL, "env: the shell the script is for: sh, bash, zsh, fish, "
     "powershell, cmd (typed at the prompt) or cmd-batch (a .bat file) "
     "(default: $SHELL's, PowerShell on Windows)"},
    {"github", 0, CDD_OPT_FLAG, NULL, CMD_ENV, F(env.github), NOF, 0, 0, NULL,
     "env: append to the files $GITHUB_ENV and $GITHUB_PATH name (GitHub "
     "Actions)"},
    {"write-activation", 0, CDD_OPT_FLAG, NULL, CMD_ENV,
     F(env.write_activation), NOF, 0, 0, NULL,
     "env: write a --prefix conda environment's etc/conda/activate.d and "
     "deactivate.d scripts (in its receipt: uninstall removes them)"},
    {"archive", 'a', CDD_OPT_LIST, "FILE", CMD_BUNDLE, F(bundle.archives),
     NOF, 0, 0, NULL,
     "bundle: a local archive to take instead of downloading (matched to "
     "its manifest by file name, checked against its pin; repeatable)"},
    {"output", 'o', CDD_OPT_DIR, "DIR", CMD_BUNDLE, F(bundle.dir), NOF, 0, 0,
     NULL, "bundle: the folder to write (a mirror of NVIDIA's server)"},
    {"output", 'o', CDD_OPT_FILE, "FILE", CMD_MANIFEST, F(create.output), NOF,
     0, 0, NULL, "manifest create: write here instead of stdout"},
    {"version", 0, CDD_OPT_VERSION, "V", CMD_MANIFEST, F(create.version), NOF,
     0, 0, NULL,
     "manifest create: cuDNN version (default: from cudnn_version.h)"},
    {"cuda-major", 0, CDD_OPT_NUMBER, "N", CMD_MANIFEST, F(create.cuda_major),
     NOF, 1, 99, NULL,
     "manifest create: CUDA major (default: from the file name)"},
    /* One meaning per name (issue 21): --shell is env's script; the
     * report's fixes have --fix-shell, and --shell there is its old
     * spelling, kept with a note (deprecated_options below). */
    {"fix-shell", 0, CDD_OPT_ENUM, "SHELL",
     CMD_INSTALL | CMD_VERIFY | CMD_DOCTOR, F(out.shell), F(out.shell_given),
     0, 0, cdd_shell_values,
     "write the report's fixes for this shell: sh, bash, zsh, fish, "
     "powershell (pwsh), cmd (the prompt) or cmd-batch (a .bat file) "
     "(default: $SHELL's; Windows: powershell)"},
    {"shell", 0, CDD_OPT_ENUM, "SHELL", CMD_INSTALL | CMD_VERIFY | CMD_DOCTOR,
     F(out.shell_old), F(out.shell_old_given), 0, 0, cdd_shell_values,
     "deprecated: the old spelling of --fix-shell (--shell is env's)"},
    /* images (docs/containers.md) */
    {"profile", 0, CDD_OPT_ENUM, "PROFILE", CMD_INSTALL, F(change.profile),
     F(change.profile_given), 0, 0, cdd_profile_values,
     "runtime (the libraries only), dev (+ headers and import libraries) "
     "or full (+ static libraries; the default)"},
    {"mtime", 0, CDD_OPT_NUMBER, "SECONDS", CMD_INSTALL, F(change.mtime),
     F(change.mtime_given), 0, 2147483647.0, NULL,
     "give every installed file and its folders this modification time "
     "(seconds since 1970; default: $SOURCE_DATE_EPOCH when set), for "
     "reproducible image layers"},
    {"format", 0, CDD_OPT_ENUM, "FORMAT", CMD_SBOM, F(sbom.format),
     F(sbom.format_given), 0, 0, cdd_sbom_format_values,
     "sbom: cyclonedx (CycloneDX 1.6 JSON, the default) or spdx (SPDX 2.3 "
     "JSON)"},
    {"output", 'o', CDD_OPT_FILE, "FILE", CMD_SBOM, F(sbom.output), NOF, 0,
     0, NULL, "sbom: write here instead of stdout"},
    {"verbose", 'v', CDD_OPT_FLAG, NULL, CMD_GLOBAL, F(out.verbose), NOF, 0, 0,
     NULL, "show every check and every file, not only the summary"},
    {"color", 0, CDD_OPT_ENUM, "WHEN", CMD_GLOBAL, F(out.color),
     F(out.color_given), 0, 0,
     cdd_color_values,
     "auto (on a terminal, unless NO_COLOR is set; never with --json), "
     "always or never"},
    {"json", 0, CDD_OPT_FLAG, NULL, CMD_GLOBAL, F(out.json), NOF, 0, 0, NULL,
     "print one JSON object on stdout (human text stays on stderr)"},
    {"quiet", 'q', CDD_OPT_FLAG, NULL, CMD_GLOBAL, F(out.quiet), NOF, 0, 0,
     NULL, "print nothing but errors"},
    {"help", 'h', CDD_OPT_FLAG, NULL, CMD_GLOBAL, F(out.help), NOF, 0, 0, NULL,
     "show help (also 'cudnn-deploy <command> --help')"},
    {"version", 0, CDD_OPT_FLAG, NULL, CMD_TOOL, F(out.version), NOF, 0, 0,
     NULL, "print the version"},
};

const size_t cdd_option_count = sizeof cdd_options / sizeof cdd_options[0];

/* Old spellings that still work, for the commands named, each with the
 * note the user is shown (cdd_cmdline.deprecated). */
static const struct {
    const char *name;
    unsigned commands;
    const char *note;
} deprecated_options[] = {
    {"shell", CMD_INSTALL | CMD_VERIFY | CMD_DOCTOR,
     "--shell for install, verify and doctor is deprecated: use --fix-shell "
     "(--shell is env's)"},
};

static const char *deprecation_of(const struct cdd_option *o)
{
    for (size_t i = 0;
         i < sizeof deprecated_options / sizeof deprecated_options[0]; i++)
        if (strcmp(o->name, deprecated_options[i].name) == 0 &&
            (o->commands & deprecated_options[i].commands))
            return deprecated_options[i].note;
    return NULL;
}

const char *cdd_opt_value_name(const struct cdd_opt_value *values, int value)
{
    for (const struct cdd_opt_value *e = values; e->name; e++)
        if (e->value == value)
            return e->name;
    return "?";
}

int cdd_option_is_target(const struct cdd_option *o)
{
    return o->field >= F(target.spec) &&
           o->field < F(target.spec) + sizeof(struct cdd_target_spec);
}

void cdd_cmdline_init(struct cdd_cmdline *cl)
{
    memset(cl, 0, sizeof *cl);
    cl->obtain.retries = -1;
}

static int usage(const char *fmt, ...) CDD_PRINTF(1, 2);

static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cdd_vfail_text(CDD_E_USAGE, NULL, "usage message", fmt, ap);
    va_end(ap);
    return r;
}

/* ---- one parser per type ------------------------------------------------ */

static int parse_double(const struct cdd_option *o, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= o->min && d <= o->max))
        return usage("--%s %s: not a valid number", o->name, v);
    *out = d;
    return 0;
}

static int parse_whole(const struct cdd_option *o, const char *v, long *out)
{
    double d = 0; /* set by parse_double on success (gcc -O3 cannot tell) */
    int r = parse_double(o, v, &d);
    if (r)
        return r;
    if (d != (double)(long)d)
        return usage("--%s %s: expected a whole number", o->name, v);
    *out = (long)d;
    return 0;
}

static int parse_enum(const struct cdd_option *o, const char *v, int *out)
{
    char names[256] = ""; /* fixed: the value names of the option table */
    size_t n = 0;
    for (const struct cdd_opt_value *e = o->values; e->name; e++, n++)
        if (strcmp(v, e->name) == 0) {
            *out = e->value;
            return 0;
        }
    const char *words[32];
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s",
                 i == 0 ? "" : i + 1 == n ? " or " : ", ", o->values[i].name);
        if (i < 32)
            words[i] = o->values[i].name;
    }
    const char *near = cdd_suggest(v, words, n < 32 ? n : 32);
    if (near)
        return usage("--%s %s: expected %s; did you mean '%s'?", o->name, v,
                     names, near);
    return usage("--%s %s: expected %s", o->name, v, names);
}

static int parse_version(const struct cdd_option *o, const char *v)
{
    /* Two to four dot-separated numbers: 8.5.0.96, 9.1.0. */
    long comp[4]; /* fixed: a version's parts */
    if (cdd_version_dotted(v, comp, 4) >= 2)
        return 0;
    return usage("--%s %s: expected a version like 8.5.0.96", o->name, v);
}

static int parse_sha256(const struct cdd_option *o, const char *v,
                        uint8_t *out)
{
    if (strlen(v) != 2 * CDD_SHA256_LEN ||
        cdd_hex_decode(v, out, CDD_SHA256_LEN) != 0)
        return usage("--%s %s: expected 64 hex digits", o->name, v);
    return 0;
}

/* The value v of o into cl, by o's type. */
static int apply(const struct cdd_option *o, const char *v,
                 struct cdd_cmdline *cl)
{
    char *field = (char *)cl + o->field;
    int r = 0;
    switch (o->type) {
    case CDD_OPT_FLAG:
        *(int *)field = 1;
        break;
    case CDD_OPT_STRING:
    case CDD_OPT_FILE:
    case CDD_OPT_DIR:
        *(const char **)field = v;
        break;
    case CDD_OPT_URL: {
        struct cdd_opts_obtain *ob = &cl->obtain;
        if (ob->n_urls >= sizeof ob->urls / sizeof ob->urls[0])
            return usage("too many --%s options (at most %zu)", o->name,
                         sizeof ob->urls / sizeof ob->urls[0]);
        ob->urls[ob->n_urls++] = v;
        break;
    }
    case CDD_OPT_NUMBER:
        r = parse_whole(o, v, (long *)field);
        break;
    case CDD_OPT_SECONDS:
        r = parse_double(o, v, (double *)field);
        break;
    case CDD_OPT_ENUM: {
        int e = 0;
        r = parse_enum(o, v, &e);
        if (!r)
            memcpy(field, &e, sizeof e); /* an int-sized enum (cli.h) */
        break;
    }
    case CDD_OPT_CUDA: {
        int major, minor;
        r = cdd_cuda_arg_parse(v, &major, &minor);
        if (!r)
            *(const char **)field = v;
        break;
    }
    case CDD_OPT_VERSION:
        r = parse_version(o, v);
        if (!r)
            *(const char **)field = v;
        break;
    case CDD_OPT_SHA256:
        r = parse_sha256(o, v, (uint8_t *)field);
        break;
    case CDD_OPT_LIST: {
        struct cdd_strlist *l = (struct cdd_strlist *)field;
        if (l->n >= sizeof l->v / sizeof l->v[0])
            return usage("too many --%s options (at most %zu)", o->name,
                         sizeof l->v / sizeof l->v[0]);
        l->v[l->n++] = v;
        break;
    }
    }
    if (!r && o->given != CDD_NO_FIELD)
        *(int *)((char *)cl + o->given) = 1;
    return r;
}

/* The enums written through an int (CDD_OPT_ENUM). */
_Static_assert(sizeof(enum cdd_vlevel) == sizeof(int),
               "--level is written as an int");
_Static_assert(sizeof(enum cdd_shell) == sizeof(int),
               "--shell is written as an int");

/* ---- the command line --------------------------------------------------- */

/* The option spelled name (len bytes; NULL: the short option c) among the
 * options of bit, else of fallback (0: none); *other: one of that name
 * exists but is for other commands. */
static const struct cdd_option *find_opt(const char *name, size_t len,
                                         char c, unsigned bit,
                                         unsigned fallback, int *other)
{
    const struct cdd_option *second = NULL;
    for (size_t i = 0; i < cdd_option_count; i++) {
        const struct cdd_option *o = &cdd_options[i];
        if (name ? strlen(o->name) != len || strncmp(o->name, name, len) != 0
                 : o->short_name != c)
            continue;
        if (o->commands & bit)
            return o;
        if (o->commands & fallback) {
            if (!second)
                second = o;
        } else {
            *other = 1;
        }
    }
    return second;
}

/* "unknown option '--lvel'", with the nearest option of bits. */
static int unknown_option(const char *s, unsigned bits)
{
    const char *names[128];
    char buf[128][40]; /* fixed: option names from the table, all shorter */
    size_t n = 0;
    size_t len = strcspn(s, "=");
    char *word = cdd_strndup(s, len);
    if (!word)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < cdd_option_count && n < 128; i++) {
        if (!(cdd_options[i].commands & bits))
            continue;
        snprintf(buf[n], sizeof buf[n], "--%s", cdd_options[i].name);
        names[n] = buf[n];
        n++;
    }
    const char *near = cdd_suggest(word, names, n);
    int r = near ? usage("unknown option '%s'; did you mean '%s'?", word, near)
                 : usage("unknown option '%s'", word);
    free(word);
    return r;
}

static int takes_value(const struct cdd_option *o)
{
    return o->type != CDD_OPT_FLAG;
}

/* argv[first..last) into cl: options of bit (else of fallback), and, with a
 * cmd, its positional arguments; without one, stop at the first word that
 * is not an option (its index into *next). */
static int parse_range(const struct cdd_command *cmd, unsigned bit,
                       unsigned fallback, int last, char **argv, int first,
                       struct cdd_cmdline *cl, int *next)
{
    const char *where = cmd ? cmd->name : "cudnn-deploy";
    int only_positional = 0;
    int i;
    for (i = first; i < last; i++) {
        const char *s = argv[i];
        const struct cdd_option *o = NULL;
        const char *val = NULL;
        int other = 0;
        if (only_positional || s[0] != '-' || s[1] == '\0') {
            if (!cmd)
                break; /* the command */
            if ((int)cl->n_positional >= cmd->max_positional ||
                cl->n_positional >=
                    sizeof cl->positional / sizeof cl->positional[0])
                return usage("unexpected argument '%s' for '%s'", s,
                             cmd->name);
            cl->positional[cl->n_positional++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0 && cmd) {
            only_positional = 1;
            continue;
        }
        if (s[1] == '-') {
            const char *eq = strchr(s + 2, '=');
            size_t len = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);
            o = find_opt(s + 2, len, 0, bit, fallback, &other);
            if (o && eq) {
                if (!takes_value(o))
                    return usage("option '--%s' takes no value", o->name);
                val = eq + 1;
            }
        } else {
            if (s[2] != '\0')
                return usage("unknown option '%s' (one short option at a "
                             "time)", s);
            o = find_opt(NULL, 0, s[1], bit, fallback, &other);
        }
        if (!o && other)
            return usage("option '%s' does not apply to '%s'", s, where);
        if (!o)
            return unknown_option(s, bit | fallback);
        if (takes_value(o) && !val) {
            if (i + 1 >= last)
                return usage("option '--%s' needs a value (%s)", o->name,
                             o->argname);
            val = argv[++i];
        }
        if (takes_value(o) && !*val)
            return usage("--%s needs a value (%s)", o->name, o->argname);
        int r = apply(o, val, cl);
        if (r)
            return r;
        if (deprecation_of(o))
            cl->deprecated = deprecation_of(o);
    }
    if (next)
        *next = i;
    return 0;
}

int cdd_cmdline_parse(const struct cdd_command *cmd, int argc, char **argv,
                      int first, struct cdd_cmdline *cl, int *next)
{
    return parse_range(cmd, cmd ? cmd->bit : CMD_TOOL, 0, argc, argv, first,
                       cl, next);
}

/* Index of the command word: the first word that is neither an option nor
 * an option's value (argc: none). */
static int command_index(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int other = 0;
        const struct cdd_option *o = NULL;
        if (strcmp(s, "--") == 0)
            return i + 1;
        if (s[0] != '-' || s[1] == '\0')
            return i;
        if (s[1] == '-') {
            if (strchr(s, '='))
                continue;
            o = find_opt(s + 2, strlen(s + 2), 0, CMD_TOOL, CMD_EVERY, &other);
        } else if (s[2] == '\0') {
            o = find_opt(NULL, 0, s[1], CMD_TOOL, CMD_EVERY, &other);
        }
        if (o && takes_value(o))
            i++;
    }
    return argc;
}

static const char *const help_word = "help";

/* "unknown command 'verfy'", with the nearest command. */
static int unknown_command(const char *word)
{
    const char *names[33];
    size_t n = 0;
    for (size_t i = 0; i < cdd_command_count && n < 32; i++)
        names[n++] = cdd_commands[i].name;
    names[n++] = help_word;
    const char *near = cdd_suggest(word, names, n);
    if (near)
        return usage("unknown command '%s'; did you mean '%s'?", word, near);
    return usage("unknown command '%s'", word);
}

int cdd_cmdline_parse_all(int argc, char **argv, struct cdd_cmdline *cl,
                          const struct cdd_command **cmdp, int *help)
{
    int ci = command_index(argc, argv), r;
    const struct cdd_command *cmd = NULL;
    *cmdp = NULL;
    *help = 0;
    if (ci < argc && strcmp(argv[ci], help_word) == 0) {
        *help = 1;
        if ((r = parse_range(NULL, CMD_TOOL, CMD_EVERY, ci, argv, 1, cl,
                             NULL)))
            return r;
        for (int i = ci + 1; i < argc; i++) {
            if (argv[i][0] == '-')
                continue; /* help --json verify: the options do not matter */
            if (*cmdp)
                return usage("'help' takes one command, not also '%s'",
                             argv[i]);
            if (!(*cmdp = cdd_command_find(argv[i])))
                return unknown_command(argv[i]);
        }
        return 0;
    }
    if (ci < argc && !(cmd = cdd_command_find(argv[ci]))) {
        /* The tool's options still count (--json: the error as JSON). */
        (void)parse_range(NULL, CMD_TOOL, CMD_EVERY, ci, argv, 1, cl, NULL);
        return unknown_command(argv[ci]);
    }
    /* Before the command: the tool's options, then the command's. */
    if ((r = parse_range(NULL, CMD_TOOL, cmd ? cmd->bit : 0, ci, argv, 1, cl,
                         NULL)))
        return r;
    *cmdp = cmd;
    if (!cmd)
        return 0;
    return parse_range(cmd, cmd->bit, 0, argc, argv, ci + 1, cl, NULL);
}
