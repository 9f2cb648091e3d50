/* One function per command, each in its own cmd_<name>.c. */
#ifndef CDD_CMDS_H
#define CDD_CMDS_H

#include "cli.h"

int cdd_cmd_install(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_status(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_uninstall(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_recover(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_verify(const struct cdd_args *a, struct cdd_report *rep);
/* Run verify on a tree and put its checks in the report (install uses it
 * too). level -1: the default. */
int cdd_cli_verify(struct cdd_report *rep, const struct cdd_target *t,
                   struct cdd_tree *tree,
                   const struct cdd_manifest *m, int level);
int cdd_cmd_manifest(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_fetch(const struct cdd_args *a, struct cdd_report *rep);
int cdd_cmd_doctor(const struct cdd_args *a, struct cdd_report *rep);

/* Obtain the manifest's archive through the cache (cmd_fetch.c), reporting
 * what was used; install calls it when no --archive is given. */
struct cdd_obtain_result;
int cdd_cli_obtain(const struct cdd_args *a, const struct cdd_manifest *m,
                   struct cdd_report *rep, struct cdd_obtain_result *res);

/* Shared by the commands that act on a tree: report a recovery that ran. */
void cdd_cli_report_recovery(struct cdd_report *rep,
                             const struct cdd_recovery *rc);

#endif
