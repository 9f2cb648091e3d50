/* Layouts: the folders each role lands in, per target kind and platform,
 * and where a symlink goes: beside the entry its chain of links ends at (a
 * link's target is a plain name in its own folder, so it keeps working only
 * there), whatever folder that entry's role has. */
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

/* Order of dir[]: runtime, header, import_lib, static_lib, license, symlink.
 * The symlink column is NULL everywhere: a symlink is placed by the role of
 * what it points at (cdd_layout_link_role), never by a folder of its own.
 * Activation scripts have no layout folder either: envset.h names their
 * paths. */
static const struct layout_def layouts[CDD_LAYOUT_COUNT] = {
    [CDD_LAYOUT_CUDA_WINDOWS] = {"cuda-windows", 1,
        {"bin", "include", "lib/x64", "lib/x64", "doc/cudnn", NULL}},
    [CDD_LAYOUT_CUDA_LINUX] = {"cuda-linux", 0,
        {"lib64", "include", NULL, "lib64", "share/doc/cudnn", NULL}},
    [CDD_LAYOUT_PREFIX_WINDOWS] = {"prefix-windows", 1,
        {"Library/bin", "Library/include", "Library/lib", "Library/lib",
         "Library/share/doc/cudnn", NULL}},
    [CDD_LAYOUT_PREFIX_LINUX] = {"prefix-linux", 0,
        {"lib", "include", NULL, "lib", "share/doc/cudnn", NULL}},
    [CDD_LAYOUT_CUDA_WINDOWS_X64] = {"cuda-windows-x64", 1,
        {"bin/x64", "include", "lib/x64", "lib/x64", "doc/cudnn", NULL}},
};

enum cdd_layout_id cdd_layout_select(enum cdd_target_kind kind,
                                     enum cdd_platform platform)
{
    int win = cdd_platform_is_windows(platform);
    if (kind == CDD_TARGET_CUDA)
        return win ? CDD_LAYOUT_CUDA_WINDOWS : CDD_LAYOUT_CUDA_LINUX;
    return win ? CDD_LAYOUT_PREFIX_WINDOWS : CDD_LAYOUT_PREFIX_LINUX;
}

const char *cdd_layout_name(enum cdd_layout_id id)
{
    return id < CDD_LAYOUT_COUNT ? layouts[id].name : "unknown";
}

int cdd_layout_parse(const char *name, enum cdd_layout_id *out)
{
    for (int i = 0; name && i < CDD_LAYOUT_COUNT; i++)
        if (strcmp(name, layouts[i].name) == 0) {
            *out = (enum cdd_layout_id)i;
            return 0;
        }
    return -1;
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

/* dir(path) + name, malloc'd: a link's target lies in the link's folder. */
static char *beside(const char *path, const char *name)
{
    size_t dlen = (size_t)(cdd_path_basename(path) - path);
    char *r = malloc(dlen + strlen(name) + 1);
    if (r) {
        memcpy(r, path, dlen);
        strcpy(r + dlen, name);
    }
    return r;
}

int cdd_layout_link_role(const struct cdd_manifest *m, const char *path,
                         const char *target, enum cdd_role *out)
{
    char *cur = NULL;
    int r = -1;
    /* Windows archives have no symlinks (manifest.c refuses listed ones). */
    if (!m || !path || !target || cdd_platform_is_windows(m->platform))
        return -1;
    if (!(cur = beside(path, target)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    /* A chain longer than the manifest's list has looped. */
    for (size_t steps = 0; steps <= m->n_files; steps++) {
        const struct cdd_mfile *f = cdd_manifest_file(m, cur);
        if (!f) {
            /* Unlisted: the path rules place it as the file it must end
             * up being (a chain through unlisted links is checked against
             * this placement once the whole archive is seen, extract.c). */
            r = cdd_role_from_path(m->platform, cur, 0, out) == 0 ? 0 : -1;
            break;
        }
        if (f->role != CDD_ROLE_SYMLINK) {
            *out = f->role;
            r = 0;
            break;
        }
        char *next = f->target ? beside(f->path, f->target) : NULL;
        free(cur);
        if (!(cur = next)) {
            r = f->target ? cdd_fail(CDD_E_NOMEM, NULL, 0, NULL) : -1;
            break;
        }
    }
    free(cur);
    return r;
}

int cdd_layout_entry_dest(enum cdd_layout_id id, const struct cdd_manifest *m,
                          enum cdd_role role, const char *archive_path,
                          const char *target, char **out)
{
    enum cdd_role place = role;
    *out = NULL;
    if (role == CDD_ROLE_SYMLINK) {
        int r = cdd_layout_link_role(m, archive_path, target, &place);
        if (r < -1)
            return r;
        if (r)
            return cdd_fail(CDD_E_MANIFEST, NULL, 0,
                            "%s: a symlink to \"%s\", which no entry of the "
                            "manifest and no layout rule places",
                            archive_path, target ? target : "");
    }
    return cdd_layout_dest(id, place, archive_path, out);
}
