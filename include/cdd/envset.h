/* The environment of a target (`cudnn-deploy env`, docs/fleet.md): the
 * settings that make the target's cuDNN the one programs load — its library
 * folder first on PATH (Windows layouts) or LD_LIBRARY_PATH (Linux), and for
 * a CUDA tree CUDA_PATH and CUDA_HOME — as fixes (fix.h) the command layer
 * renders for a shell, and the conda activation scripts of a prefix, written
 * into the tree in one transaction and recorded in its receipt. */
#ifndef CDD_ENVSET_H
#define CDD_ENVSET_H

#include <stddef.h>

#include "cdd/cudatree.h"
#include "cdd/deploy.h"
#include "cdd/fix.h"
#include "cdd/layout.h"
#include "cdd/tree.h"

/* Where conda runs activation scripts, relative to the environment. */
#define CDD_CONDA_ACTIVATE_DIR "etc/conda/activate.d"
#define CDD_CONDA_DEACTIVATE_DIR "etc/conda/deactivate.d"

/* The target's layout: the receipt's when something is installed
 * (*installed = 1), else the one an install from this host's platform would
 * use. */
int cdd_env_layout(struct cdd_tree *tree, const struct cdd_target *t,
                   enum cdd_layout_id *layout, int *installed);

/* Append the settings for target t of layout to out, as session-scope
 * steps of one alternative. Paths use the host's separators (windows_host:
 * '\' and ';'). */
int cdd_env_fixes(const struct cdd_target *t, enum cdd_layout_id layout,
                  int windows_host, struct cdd_fixes *out);

/* A script to write: its tree path and text. */
struct cdd_envfile {
    const char *path;
    const char *text;
};

/* Write the activation scripts into the prefix tree in one transaction and
 * add them to its receipt (role activation), so that uninstall removes them
 * and status and verify check them. Something must be installed
 * (CDD_E_TARGET otherwise); a file of that name the tree holds that the
 * receipt does not list as an activation script is refused, not replaced.
 * plan gets one item per file (new, replace, unchanged); *changed when the
 * tree changed. dry_run: plan only. */
int cdd_activation_write(struct cdd_tree *tree, double lock_timeout,
                         const struct cdd_envfile *files, size_t n,
                         int dry_run, struct cdd_plan *plan, int *changed);

#endif
