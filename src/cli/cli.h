/* The command-line layer: option table, command table, reporting. It parses,
 * calls the core, and reports; all logic lives in the core library. */
#ifndef CDD_CLI_H
#define CDD_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/cudatree.h"
#include "cdd/deploy.h"
#include "cdd/hash.h"
#include "cdd/verify.h"

/* Commands, as bits so each option says where it applies. CMD_TOOL: before
 * the command (cudnn-deploy --version). */
enum {
    CMD_INSTALL = 1 << 0,
    CMD_STATUS = 1 << 1,
    CMD_UNINSTALL = 1 << 2,
    CMD_RECOVER = 1 << 3,
    CMD_MANIFEST = 1 << 4,
    CMD_VERIFY = 1 << 5,
    CMD_DOCTOR = 1 << 6,
    CMD_FETCH = 1 << 7,
    CMD_BUNDLE = 1 << 8,          /* fleet: offline bundles (cmd_bundle.c) */
    CMD_ENV = 1 << 9,             /* fleet: environment (cmd_env.c) */
    CMD_RELEASES = 1 << 10,       /* the release catalog (cmd_releases.c) */
    CMD_SBOM = 1 << 11,           /* images: SBOM of a tree (cmd_sbom.c) */
    CMD_TOOL = 1 << 15,
    CMD_EVERY = 0x0fff,           /* every command */
    CMD_GLOBAL = CMD_EVERY | CMD_TOOL
};

#define CMD_TARGETED (CMD_INSTALL | CMD_STATUS | CMD_UNINSTALL | CMD_RECOVER)

/* What the options say, one struct per concern; the option table writes
 * each value into its field, so every field has exactly one option type. */
struct cdd_opts_output {      /* every command */
    int json, quiet, help;
    int version;              /* cudnn-deploy --version */
    int verbose;              /* every check, the plan */
    int color, color_given;   /* enum cdd_color */
    int shell, shell_given;   /* enum cdd_shell (shell.h) for the fixes */
    int shell_old, shell_old_given; /* the same by its deprecated --shell */
};

/* --color WHEN */
enum cdd_color { CDD_COLOR_AUTO = 0, CDD_COLOR_ALWAYS, CDD_COLOR_NEVER };

struct cdd_opts_target {      /* which tree, and how long to wait for it */
    struct cdd_target_spec spec;
    double lock_timeout;
};

/* A repeatable option's values, in order (CDD_OPT_LIST). */
struct cdd_strlist {
    const char *v[32];
    size_t n;
};

struct cdd_opts_obtain {      /* which manifest and archive, and the pin */
    const char *manifest;
    const char *archive;
    int has_sha256;
    uint8_t sha256[CDD_SHA256_LEN]; /* --sha256, decoded */
    int allow_unpinned;
    const char *urls[16];     /* --url, repeatable, tried in order */
    size_t n_urls;
    const char *redistrib;    /* --redistrib FILE|URL */
    const char *cache_dir;
    const char *cacert;
    long connect_timeout, low_speed_time, low_speed_limit; /* 0: default */
    long retries;             /* -1: default */
    const char *platform;     /* --platform: NVIDIA's name (linux-sbsa) */
    /* the release catalog (docs/releases.md) */
    const char *cudnn;        /* install --cudnn 9|9.13|9.13.0.50|latest */
    const char *catalog;      /* --catalog DIR (else $CUDNN_DEPLOY_CATALOG) */
    const char *driver;       /* --driver 580.65.06 */
    struct cdd_strlist gpu_cc; /* --gpu-cc X.Y, repeatable */
};

struct cdd_opts_change {      /* how install, uninstall and status work */
    int dry_run, force, check, check_tree, no_verify;
    int no_stream;            /* install --no-stream: download, then install */
    long jobs;                /* 0: one per processor */
    struct cdd_strlist with;  /* install --with NAME[=FILE] */
    int profile, profile_given; /* install --profile: enum cdd_profile */
    long mtime;               /* install --mtime SECONDS */
    int mtime_given;
};

struct cdd_opts_sbom {        /* sbom (images, docs/containers.md) */
    int format, format_given; /* enum cdd_sbom_format */
    const char *output;       /* -o FILE, NULL: stdout */
};

struct cdd_opts_env {         /* env (fleet) */
    const char *shell;        /* --shell, NULL: detected */
    int github, write_activation;
};

struct cdd_opts_bundle {      /* bundle (fleet) */
    struct cdd_strlist manifests; /* --manifest, repeatable */
    struct cdd_strlist archives;  /* --archive, repeatable */
    const char *dir;          /* -o DIR */
};

struct cdd_opts_verify {
    int level_given;
    enum cdd_vlevel level;
    double gpu_timeout;       /* --gpu-timeout SECONDS (0 given: no bound) */
    int gpu_timeout_given;
    /* GPU fit (fit.h), set by the command from --gpu-cc / --catalog: the
     * GPUs to fit (NULL: the driver's), the catalog folder (NULL: built-in) */
    const struct cdd_fit_gpus *gpus;
    const char *catalog;
};

struct cdd_opts_create {      /* manifest create */
    const char *output;
    const char *version;
    long cuda_major;          /* 0: from the file name */
};

struct cdd_cmdline {
    struct cdd_opts_output out;
    struct cdd_opts_target target;
    struct cdd_opts_obtain obtain;
    struct cdd_opts_change change;
    struct cdd_opts_verify verify;
    struct cdd_opts_create create;
    struct cdd_opts_bundle bundle;
    struct cdd_opts_env env;
    struct cdd_opts_sbom sbom;
    const char *positional[4];
    size_t n_positional;
    const char *deprecated;   /* a deprecated spelling was used: the note */
};

/* The option types: each is parsed and validated by one function of
 * options.c, and tells the completions what to offer. */
enum cdd_opt_type {
    CDD_OPT_FLAG,     /* int set to 1 */
    CDD_OPT_STRING,   /* const char *, not empty */
    CDD_OPT_FILE,     /* const char *, a file (a manifest name also) */
    CDD_OPT_DIR,      /* const char *, a folder */
    CDD_OPT_URL,      /* appended to obtain.urls (repeatable) */
    CDD_OPT_NUMBER,   /* long, a whole number in [min, max] */
    CDD_OPT_SECONDS,  /* double in [min, max] */
    CDD_OPT_ENUM,     /* an int-sized enum, one of values[] */
    CDD_OPT_CUDA,     /* const char *, a CUDA version vX.Y */
    CDD_OPT_VERSION,  /* const char *, a dotted version N.N.N[.N] */
    CDD_OPT_SHA256,   /* uint8_t[CDD_SHA256_LEN] from 64 hex digits */
    CDD_OPT_LIST      /* appended to a struct cdd_strlist (repeatable) */
};

struct cdd_opt_value {
    const char *name;
    int value;
};

struct cdd_option {
    const char *name;        /* long name, without -- */
    char short_name;         /* 0: none */
    enum cdd_opt_type type;
    const char *argname;     /* what --help shows for the value */
    unsigned commands;       /* CMD_* bits */
    size_t field;            /* offsetof(struct cdd_cmdline, ...) */
    size_t given;            /* int field set when given, or CDD_NO_FIELD */
    double min, max;         /* NUMBER, SECONDS */
    const struct cdd_opt_value *values; /* ENUM, {NULL, 0} ended */
    const char *help;
};

#define CDD_NO_FIELD ((size_t)-1)

/* The values of --level (enum cdd_vlevel), --color and --shell, and a
 * value's name. */
extern const struct cdd_opt_value cdd_level_values[];
extern const struct cdd_opt_value cdd_color_values[];
extern const struct cdd_opt_value cdd_shell_values[];
const char *cdd_opt_value_name(const struct cdd_opt_value *values, int value);

extern const struct cdd_option cdd_options[];
extern const size_t cdd_option_count;

/* The options that name the target (for the help's "Targets" section). */
int cdd_option_is_target(const struct cdd_option *o);

struct cdd_report;

/* What a command does with its target tree (docs/design.md, Commands and
 * the tree handle). The dispatcher, not the command, resolves the target,
 * opens the tree once and closes it (apk-tools' applet .open_flags). */
enum cdd_tree_access {
    CDD_TREE_NONE,  /* no tree, or trees of its own finding (releases, ...) */
    CDD_TREE_READ,  /* the target, opened; never locked */
    /* The target if one is given, opened to be looked at: one whose state
     * folder does not pass is opened by its root alone and the reason is
     * handed over (tt->state_bad, state_why), never a refusal (doctor). */
    CDD_TREE_LOOK,
    CDD_TREE_WRITE  /* the target, opened; locked as the row's lock says */
};
enum cdd_tree_lock_at {
    CDD_LOCK_NEVER,   /* NONE and READ rows */
    /* The dispatcher takes the lock (--lock-timeout; not with --dry-run;
     * a tree with no state folder is left unlocked) and with it recovers
     * an interrupted transaction before the command runs; the recovery is
     * reported as a warning (uninstall). */
    CDD_LOCK_AT_OPEN,
    /* The same, the recovery being the command's own result (recover). */
    CDD_LOCK_RECOVER,
    /* The engine takes it on the handle once its input has passed, with
     * --lock-timeout (install: a busy tree does not hold up the archive
     * check; env only with --write-activation). */
    CDD_LOCK_IN_ENGINE
};

/* What the dispatcher hands a tree row's run: the resolved target, the open
 * tree (closed by the dispatcher), the lock and the recovery it ran
 * (CDD_LOCK_AT_OPEN, CDD_LOCK_RECOVER), and what the row's prepare made
 * before the tree was touched. A CDD_TREE_NONE row gets NULL (and has no
 * prepare: it finds its trees itself, if any). */
struct cdd_cli_tree {
    struct cdd_target target;
    struct cdd_tree *tree;  /* CDD_TREE_LOOK: NULL when no target given */
    int state_bad;          /* CDD_TREE_LOOK: its state did not pass, */
    char *state_why;        /* why (malloc'd; NULL: no memory) */
    struct cdd_recovery recovery;
    int locked;
    void *prep; /* the row's prepare's, freed with its prep_free */
};

struct cdd_command {
    const char *name;
    unsigned bit;
    const char *usage;   /* after "cudnn-deploy <name> " */
    const char *summary;
    const char *description;
    int max_positional;
    const char *const *subcommands; /* NULL-ended, or NULL */
    enum cdd_tree_access tree;
    enum cdd_tree_lock_at lock;
    /* Optional: what must be decided before the target is touched (usage
     * faults, the manifest), *prep for run (tt->prep), freed by prep_free
     * whether or not run ran. A CDD_E_* code, or 0. */
    int (*prepare)(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   void **prep);
    void (*prep_free)(void *prep);
    /* Returns a CDD_E_* code (0 on success); checks that fail are recorded
     * in the report and make the exit code 1. tt: the tree (see above),
     * NULL for a CDD_TREE_NONE row. */
    int (*run)(const struct cdd_cmdline *cl, struct cdd_report *rep,
               struct cdd_cli_tree *tt);
};

extern const struct cdd_command cdd_commands[];
extern const size_t cdd_command_count;

int cdd_cli_main(int argc, char **argv);

/* The defaults of every option. */
void cdd_cmdline_init(struct cdd_cmdline *cl);

/* Parses argv[first..] into cl for cmd (NULL: the options before the
 * command, up to the first word that is not an option, whose index goes to
 * *next). Returns 0, or CDD_E_USAGE with the fault recorded (an unknown
 * name with the nearest known one suggested). */
int cdd_cmdline_parse(const struct cdd_command *cmd, int argc, char **argv,
                      int first, struct cdd_cmdline *cl, int *next);
/* The whole command line, options anywhere (before the command too: those
 * of the tool, then the command's): *cmd the command (NULL: none given),
 * *help_for set for `help [COMMAND]` (the tool's help: *cmd NULL). 0 or
 * CDD_E_USAGE. */
int cdd_cmdline_parse_all(int argc, char **argv, struct cdd_cmdline *cl,
                          const struct cdd_command **cmd, int *help);
/* The command named name, or NULL. */
const struct cdd_command *cdd_command_find(const char *name);
/* Of the NULL-ended names[], the one nearest to word (edit distance, at
 * most a third of its length, at least 1, at most 3), or NULL. */
const char *cdd_suggest(const char *word, const char *const *names, size_t n);
/* cdd_manifest_find for a name from the command line: a name that is no
 * file and no shipped manifest is a usage error (CDD_E_USAGE) with the
 * nearest shipped name ("did you mean ...?"). */
struct cdd_manifest;
int cdd_cli_manifest_find(const char *name, struct cdd_manifest **out);

/* The meaning of each exit code, for the help and the man page; the error
 * codes that map to it come from CDD_ERRORS. */
const char *cdd_exit_code_meaning(int exit_code);
#define CDD_EXIT_CODE_MAX 4
/* Whether an error row exists only for the tests (the fault hook's
 * "injected fault"): left out of a release build's help and the man page. */
int cdd_error_is_test_only(int code);

/* What the tool is for, two lines (the help and the man page). */
extern const char cdd_tool_description[];

void cdd_help_print(const struct cdd_command *cmd); /* NULL: tool help */
/* "-q, --quiet" / "--level LEVEL": the option as --help shows it. */
void cdd_option_synopsis(const struct cdd_option *o, char *buf, size_t len);

/* Progress display for the core's callbacks (progress.c). */
struct cdd_progress_ui;
struct cdd_progress_ui *cdd_progress_new(int quiet);
void cdd_progress_cb(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
void cdd_progress_free(struct cdd_progress_ui *p);
/* Erase a drawn bar so that a message can be printed (NULL: nothing). */
void cdd_progress_clear(struct cdd_progress_ui *p);

#endif
