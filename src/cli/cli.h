/* The command-line layer: option table, command table, reporting. It parses,
 * calls the core, and reports; all logic lives in the core library. */
#ifndef CDD_CLI_H
#define CDD_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/cudatree.h"
#include "cdd/deploy.h"

/* Commands, as bits so each option says where it applies. */
enum {
    CMD_INSTALL = 1 << 0,
    CMD_STATUS = 1 << 1,
    CMD_UNINSTALL = 1 << 2,
    CMD_RECOVER = 1 << 3,
    CMD_MANIFEST = 1 << 4,
    CMD_VERIFY = 1 << 5,
    CMD_DOCTOR = 1 << 6,
    CMD_FETCH = 1 << 7,
    CMD_ALL = 0xffff
};

#define CMD_TARGETED (CMD_INSTALL | CMD_STATUS | CMD_UNINSTALL | CMD_RECOVER)

/* Everything any command can be given; the option table fills it. */
struct cdd_args {
    int json, quiet, help;
    struct cdd_target_spec target;
    const char *manifest;
    const char *archive;
    const char *sha256;
    const char *output;       /* manifest create -o */
    const char *version;      /* manifest create --version */
    int cuda_major;           /* manifest create --cuda-major, 0 = detect */
    int allow_unpinned, dry_run, force, check, no_verify;
    int check_tree;           /* install --check-tree */
    int jobs;                 /* --jobs; 0: one per processor */
    int level;                /* verify --level; -1 = default */
    double lock_timeout;
    /* Downloads (install without --archive, fetch). */
    const char *urls[16];     /* --url, repeatable, tried in order */
    size_t n_urls;
    const char *redistrib;    /* --redistrib FILE|URL */
    const char *cache_dir;    /* --cache-dir */
    const char *cacert;       /* --cacert */
    long connect_timeout, low_speed_time, low_speed_limit; /* 0: default */
    int retries;              /* --retries; -1: default */
    const char *positional[4];
    size_t n_positional;
};

struct cdd_report;

struct cdd_command {
    const char *name;
    unsigned bit;
    const char *usage;   /* after "cudnn-deploy <name> " */
    const char *summary;
    const char *description;
    int max_positional;
    /* Returns a CDD_E_* code (0 on success); checks that fail are recorded
     * in the report and make the exit code 1. */
    int (*run)(const struct cdd_args *a, struct cdd_report *rep);
};

extern const struct cdd_command cdd_commands[];
extern const size_t cdd_command_count;

int cdd_cli_main(int argc, char **argv);

/* Options (options.c). Parses argv after the command name into a; returns
 * 0, or CDD_E_USAGE with the fault recorded. */
int cdd_args_parse(const struct cdd_command *cmd, int argc, char **argv,
                   int first, struct cdd_args *a);
void cdd_help_print(const struct cdd_command *cmd); /* NULL: tool help */

/* Resolve the target options and name the target in the report. */
int cdd_cli_target(const struct cdd_args *a, struct cdd_target *t,
                   struct cdd_report *rep);

/* Progress display for the core's callbacks (progress.c). */
struct cdd_progress_ui;
struct cdd_progress_ui *cdd_progress_new(int quiet);
void cdd_progress_cb(void *ud, const char *phase, uint64_t done,
                     uint64_t total);
void cdd_progress_free(struct cdd_progress_ui *p);
/* Erase a drawn bar so that a message can be printed (NULL: nothing). */
void cdd_progress_clear(struct cdd_progress_ui *p);

#endif
