/* Layouts: the folders each role lands in, per target kind and platform. */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/layout.h"
#include "cdd/pathsafe.h"

struct layout_def {
    const char *name;
    int case_insensitive;
    const char *dir[CDD_ROLE_COUNT]; /* indexed by enum cdd_role */
};

/* Order of dir[]: runtime, header, import_lib, static_lib, license, symlink
 * (activation scripts have no layout folder: envset.h names their paths) */
static const struct layout_def layouts[CDD_LAYOUT_COUNT] = {
    [CDD_LAYOUT_CUDA_WINDOWS] = {"cuda-windows", 1,
        {"bin", "include", "lib/x64", "lib/x64", "doc/cudnn", NULL}},
    [CDD_LAYOUT_CUDA_LINUX] = {"cuda-linux", 0,
        {"lib64", "include", NULL, "lib64", "share/doc/cudnn", "lib64"}},
    [CDD_LAYOUT_PREFIX_WINDOWS] = {"prefix-windows", 1,
        {"Library/bin", "Library/include", "Library/lib", "Library/lib",
         "Library/share/doc/cudnn", NULL}},
    [CDD_LAYOUT_PREFIX_LINUX] = {"prefix-linux", 0,
        {"lib", "include", NULL, "lib", "share/doc/cudnn", "lib"}},
};

enum cdd_layout_id cdd_layout_select(enum cdd_target_kind kind,
                                     enum cdd_platform platform)
{
    int win = platform == CDD_PLATFORM_WINDOWS_X86_64;
    if (kind == CDD_TARGET_CUDA)
        return win ? CDD_LAYOUT_CUDA_WINDOWS : CDD_LAYOUT_CUDA_LINUX;
    return win ? CDD_LAYOUT_PREFIX_WINDOWS : CDD_LAYOUT_PREFIX_LINUX;
}

const char *cdd_layout_name(enum cdd_layout_id id)
{
    return id < CDD_LAYOUT_COUNT ? layouts[id].name : "unknown";
}

const char *cdd_target_kind_name(enum cdd_target_kind kind)
{
    return kind == CDD_TARGET_CUDA ? "cuda" : "prefix";
}

const char *cdd_layout_dir(enum cdd_layout_id id, enum cdd_role role)
{
    if (id >= CDD_LAYOUT_COUNT || role >= CDD_ROLE_COUNT)
        return NULL;
    return layouts[id].dir[role];
}

int cdd_layout_case_insensitive(enum cdd_layout_id id)
{
    return id < CDD_LAYOUT_COUNT && layouts[id].case_insensitive;
}

int cdd_layout_dest(enum cdd_layout_id id, enum cdd_role role,
                    const char *archive_path, char **out)
{
    const char *dir = cdd_layout_dir(id, role);
    *out = NULL;
    if (!dir)
        return cdd_fail(CDD_E_MANIFEST, NULL, 0,
                        "%s: a %s has no place in a %s layout", archive_path,
                        cdd_role_name(role), cdd_layout_name(id));
    *out = cdd_path_join(dir, cdd_path_basename(archive_path));
    return *out ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}
