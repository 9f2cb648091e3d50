/* The settings that make a target's cuDNN the one programs load (envset.h):
 * which variables, which folders, in the host's separators. */
#include "cdd/envset.h"

#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"

int cdd_env_layout(struct cdd_tree *tree, const struct cdd_target *t,
                   enum cdd_layout_id *layout, int *installed)
{
    struct cdd_receipt *rc = NULL;
    int r = cdd_receipt_load(tree, &rc);
    *installed = 0;
    *layout = cdd_layout_select(t->kind, cdd_platform_host());
    if (r)
        return r;
    for (int i = 0; rc && rc->layout && i < CDD_LAYOUT_COUNT; i++)
        if (strcmp(rc->layout, cdd_layout_name((enum cdd_layout_id)i)) == 0) {
            *layout = (enum cdd_layout_id)i;
            *installed = 1;
        }
    cdd_receipt_free(rc);
    return 0;
}

/* root/rel (rel may be NULL: root), with the host's separators. */
static char *host_path(const char *root, const char *rel, int windows_host)
{
    char *p = rel ? cdd_path_join(root, rel) : strdup(root);
    for (char *s = p; p && windows_host && *s; s++)
        if (*s == '/')
            *s = '\\';
    return p;
}

/* Can the list var take entry as one entry, and a variable the root? A
 * refusal is a usage error when the user typed the folder (--cuda-root,
 * --prefix: exit 2), else the tree's (CUDA_PATH_Vx_y, the default root:
 * exit 3). The destinations' grammars are in fixes.c and shell.c. */
static int check_value(const struct cdd_target *t, const char *var,
                       const char *value, int list, char sep)
{
    const char *why = NULL;
    if (list)
        why = cdd_fix_list_entry_fault(var, value, sep);
    for (const char *p = value; !why && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            why = "it holds a line break or another control character, "
                  "which no shell line or settings file can carry";
    if (!why)
        return 0;
    int typed = t->how && (strcmp(t->how, "--cuda-root") == 0 ||
                           strcmp(t->how, "--prefix") == 0);
    return cdd_fail(typed ? CDD_E_USAGE : CDD_E_TARGET, NULL, 0,
                    "%s cannot go %s %s: %s (the folder from %s)", value,
                    list ? "on" : "into", var, why, t->how ? t->how : "?");
}

int cdd_env_fixes(const struct cdd_target *t, enum cdd_layout_id layout,
                  int windows_host, struct cdd_fixes *out)
{
    char sep = windows_host ? ';' : ':';
    int win_layout = cdd_layout_case_insensitive(layout);
    char *lib = host_path(t->root, cdd_layout_dir(layout, CDD_ROLE_RUNTIME),
                          windows_host);
    char *root = host_path(t->root, NULL, windows_host);
    char *bin = host_path(t->root, "bin", windows_host);
    int r = lib && root && bin ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    /* The loader searches PATH for DLLs on Windows, LD_LIBRARY_PATH for
     * shared objects on Linux; a CUDA tree is also the toolkit its
     * variables name (and its bin holds nvcc). */
    const char *libvar = win_layout ? "PATH" : "LD_LIBRARY_PATH";
    int cuda = t->kind == CDD_TARGET_CUDA;
    if (!r)
        r = check_value(t, libvar, lib, 1, sep);
    if (!r && !win_layout && cuda)
        r = check_value(t, "PATH", bin, 1, sep);
    if (!r && cuda)
        r = check_value(t, "CUDA_PATH", root, 0, sep);
    if (!r)
        r = cdd_fixes_prepend(out, CDD_FIX_SESSION, libvar, lib, sep);
    if (!r && !win_layout && cuda)
        r = cdd_fixes_prepend(out, CDD_FIX_SESSION, "PATH", bin, sep);
    if (!r && cuda)
        r = cdd_fixes_set(out, CDD_FIX_SESSION, "CUDA_PATH", root);
    if (!r && cuda)
        r = cdd_fixes_set(out, CDD_FIX_SESSION, "CUDA_HOME", root);
    free(lib);
    free(root);
    free(bin);
    return r;
}
