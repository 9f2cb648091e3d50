/* One function per command, each in its own cmd_<name>.c, and the steps
 * several commands share (target.c, obtain.c, verify_run.c). */
#ifndef CDD_CMDS_H
#define CDD_CMDS_H

#include "cli.h"

/* Tree rows (cli.h, enum cdd_tree_access) get the tree the dispatcher
 * opened in tt; the others tt NULL. A row's prepare runs before the target
 * is touched (prep_free frees what it made). */
int cdd_cmd_install_prepare(const struct cdd_cmdline *cl,
                            struct cdd_report *rep, void **prep);
void cdd_cmd_install_prep_free(void *prep);
int cdd_cmd_install(const struct cdd_cmdline *cl, struct cdd_report *rep,
                    struct cdd_cli_tree *tt);
int cdd_cmd_status(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt);
int cdd_cmd_uninstall(const struct cdd_cmdline *cl, struct cdd_report *rep,
                      struct cdd_cli_tree *tt);
int cdd_cmd_recover(const struct cdd_cmdline *cl, struct cdd_report *rep,
                    struct cdd_cli_tree *tt);
int cdd_cmd_verify_prepare(const struct cdd_cmdline *cl,
                           struct cdd_report *rep, void **prep);
void cdd_cmd_verify_prep_free(void *prep);
int cdd_cmd_verify(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt);
int cdd_cmd_manifest(const struct cdd_cmdline *cl, struct cdd_report *rep,
                     struct cdd_cli_tree *tt);
int cdd_cmd_fetch(const struct cdd_cmdline *cl, struct cdd_report *rep,
                  struct cdd_cli_tree *tt);
int cdd_cmd_doctor(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt);
/* fleet (docs/fleet.md) */
int cdd_cmd_bundle(const struct cdd_cmdline *cl, struct cdd_report *rep,
                   struct cdd_cli_tree *tt);
int cdd_cmd_env_prepare(const struct cdd_cmdline *cl, struct cdd_report *rep,
                        void **prep);
int cdd_cmd_env(const struct cdd_cmdline *cl, struct cdd_report *rep,
                struct cdd_cli_tree *tt);
/* the release catalog (docs/releases.md) */
int cdd_cmd_releases(const struct cdd_cmdline *cl, struct cdd_report *rep,
                     struct cdd_cli_tree *tt);
/* images (docs/containers.md) */
int cdd_cmd_sbom_prepare(const struct cdd_cmdline *cl, struct cdd_report *rep,
                         void **prep);
int cdd_cmd_sbom(const struct cdd_cmdline *cl, struct cdd_report *rep,
                 struct cdd_cli_tree *tt);

/* Whether human text gets colour (--color, NO_COLOR, TERM=dumb, a terminal,
 * never with --json), and the shell fixes are written for (--shell, else
 * detected: shell.h), as enum cdd_shell (commands.c). */
int cdd_cli_color(const struct cdd_opts_output *o);
int cdd_cli_shell(const struct cdd_opts_output *o);

/* A hint for the error code a command returned (the error it recorded
 * still current), malloc'd for the caller to free, or NULL: none, or out
 * of memory, which may replace the recorded error (hints.c). */
char *cdd_cli_hint(const struct cdd_cmdline *cl,
                   const struct cdd_command *cmd, int code);

/* Resolve the target options, open the tree into *tree (NULL: opened only
 * to read its version, then closed), name the target in the report
 * (target.c): the dispatcher's, for tree rows; doctor and releases, whose
 * target is optional, call it themselves with tree NULL. */
int cdd_cli_target(const struct cdd_opts_target *o, struct cdd_target *t,
                   struct cdd_report *rep, struct cdd_tree **tree);
/* The same for a CDD_TREE_LOOK row: into tt, a tree whose state does not
 * pass opened by its root alone with the reason (cdd_target_open_look). */
struct cdd_cli_tree;
int cdd_cli_target_look(const struct cdd_opts_target *o,
                        struct cdd_cli_tree *tt, struct cdd_report *rep);
/* --platform, parsed (target.c): *given 0 and the host's platform when
 * absent; an unknown name is CDD_E_USAGE listing the names. */
int cdd_cli_platform(const struct cdd_opts_obtain *o, int *given,
                     enum cdd_platform *p);
/* Whether a target option was given at all (doctor's is optional). */
int cdd_cli_target_given(const struct cdd_opts_target *o);
/* Shared by the commands that act on a tree: report a recovery that ran. */
void cdd_cli_report_recovery(struct cdd_report *rep,
                             const struct cdd_recovery *rc);

/* The core's network notes ("retrying in 2 s") said between progress bars
 * (obtain.c): the note callback of cdd_net_opts, its ud a cdd_cli_notes. */
struct cdd_progress_ui;
struct cdd_net_opts;
struct cdd_cli_notes {
    struct cdd_report *rep;
    struct cdd_progress_ui *ui;
};
/* The network options from the obtain options, notes to n (obtain.c;
 * fetch, install, bundle). */
struct cdd_net_opts cdd_cli_net_opts(const struct cdd_opts_obtain *o,
                                     struct cdd_cli_notes *n);

/* Obtain the manifest's archive through the cache, reporting what was used
 * (obtain.c); fetch, and install without --archive. */
struct cdd_obtain_result;
int cdd_cli_obtain(const struct cdd_opts_obtain *o, int quiet,
                   const struct cdd_manifest *m, struct cdd_report *rep,
                   struct cdd_obtain_result *res);
/* install --archive: the pin of the local file (manifest, --sha256,
 * --redistrib) and its size checked at once (obtain.c). */
int cdd_cli_obtain_local(const struct cdd_opts_obtain *o,
                         const struct cdd_manifest *m, struct cdd_report *rep,
                         struct cdd_obtain_result *res);

/* install --dry-run without --archive: plan the download without it
 * (obtain.c; issue 18). Says "would download URL (N bytes)" and sets the
 * report's "download" member ({url, size, sha256, pin, cached, path});
 * when the pinned file is already in the cache, res->fetch.path names it
 * (read-only) so the dry run can check it, else res->fetch.path is NULL. */
int cdd_cli_obtain_plan(const struct cdd_opts_obtain *o,
                        const struct cdd_manifest *m, struct cdd_report *rep,
                        struct cdd_obtain_result *res);

/* install while downloading (obtain.c, issue 20, docs/fetch.md): the
 * download on a thread of its own; _reader waits until the cache's .part
 * can be read as it arrives (1, *f a new handle) or will not be streamed
 * (0: _why says why; install from what _finish obtains). Nothing may touch
 * the report between _start and _finish, which joins the download and
 * reports it as cdd_cli_obtain does. */
struct cdd_cli_stream;
struct cdd_rfile;
int cdd_cli_stream_start(const struct cdd_opts_obtain *o, int quiet,
                         const struct cdd_manifest *m, struct cdd_report *rep,
                         struct cdd_cli_stream **out);
int cdd_cli_stream_reader(struct cdd_cli_stream *st, struct cdd_rfile **f);
const char *cdd_cli_stream_why(struct cdd_cli_stream *st);
int cdd_cli_stream_finish(struct cdd_cli_stream *st, struct cdd_report *rep,
                          struct cdd_obtain_result *res, int *abandoned);

/* Run verify on a tree and put its checks in the report (verify_run.c);
 * verify, and install at its end. o NULL: the default level. */
/* --gpu-timeout as cdd_verify_opts.gpu_timeout takes it: 0 (the default)
 * when not given, below 0 for a given 0 (no bound). */
double cdd_cli_gpu_timeout(const struct cdd_opts_verify *vo);
int cdd_cli_verify(struct cdd_report *rep, const struct cdd_target *t,
                   struct cdd_tree *tree, const struct cdd_manifest *m,
                   const struct cdd_opts_verify *o);
/* The same, proving the tree against rc (install's own receipt: see
 * cdd_install_result.receipt); rc NULL: the tree's receipt. */
struct cdd_receipt;
int cdd_cli_verify_receipt(struct cdd_report *rep, const struct cdd_target *t,
                           struct cdd_tree *tree, const struct cdd_manifest *m,
                           const struct cdd_opts_verify *o,
                           const struct cdd_receipt *rc);

#endif
