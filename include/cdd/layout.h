/* Layouts: where each role of a manifest lands in a target of a given kind.
 * The layout follows the manifest's platform, not the host, so a Windows
 * archive installed from Linux gives a Windows-layout tree. */
#ifndef CDD_LAYOUT_H
#define CDD_LAYOUT_H

#include "cdd/manifest.h"

enum cdd_target_kind {
    CDD_TARGET_CUDA = 0, /* a CUDA toolkit tree */
    CDD_TARGET_PREFIX    /* a conda environment or plain prefix */
};

enum cdd_layout_id {
    CDD_LAYOUT_CUDA_WINDOWS = 0, /* bin, include, lib/x64 */
    CDD_LAYOUT_CUDA_LINUX,       /* include, lib64 */
    CDD_LAYOUT_PREFIX_WINDOWS,   /* Library/bin, Library/include, Library/lib */
    CDD_LAYOUT_PREFIX_LINUX,     /* include, lib */
    /* A CUDA 13 Windows tree, whose toolkit keeps its DLLs (cudart64_13.dll)
     * in bin/x64: cuDNN's DLLs go beside them (docs/archives.md). */
    CDD_LAYOUT_CUDA_WINDOWS_X64, /* bin/x64, include, lib/x64 */
    CDD_LAYOUT_COUNT
};

/* The default layout of a target kind for a platform (a CUDA tree's DLL
 * folder is decided by cdd_target_choose_layout, cudatree.h). */
enum cdd_layout_id cdd_layout_select(enum cdd_target_kind kind,
                                     enum cdd_platform platform);
const char *cdd_layout_name(enum cdd_layout_id id);
/* The layout of a name cdd_layout_name gives (a receipt's): 0 or -1. */
int cdd_layout_parse(const char *name, enum cdd_layout_id *out);
const char *cdd_target_kind_name(enum cdd_target_kind kind);

/* Folder (relative to the target root, '/'-separated) for a role, or NULL
 * when the layout has no place for that role (e.g. import_lib on Linux). */
const char *cdd_layout_dir(enum cdd_layout_id id, enum cdd_role role);

/* Destination of an archive entry: layout folder + the entry's basename,
 * malloc'd in *out. CDD_E_MANIFEST when the role has no place. */
int cdd_layout_dest(enum cdd_layout_id id, enum cdd_role role,
                    const char *archive_path, char **out);

/* The role whose folder a symlink at archive path 'path' (pointing at
 * 'target', a plain name in its folder) is placed in: the role of the entry
 * its chain of links ends at, so that the link lands beside its target.
 * Each name on the chain is looked up in m's files (a listed symlink is
 * followed); a name m does not list gets the role the path rules of m's
 * platform give it as a file (cdd_role_from_path). Returns 0 and *out, -1
 * when nothing places it (no rule fits, a loop, a Windows archive), or
 * CDD_E_NOMEM. */
int cdd_layout_link_role(const struct cdd_manifest *m, const char *path,
                         const char *target, enum cdd_role *out);

/* Destination of an entry of m, whatever its role: cdd_layout_dest, with a
 * symlink (role CDD_ROLE_SYMLINK, 'target' its target) placed by
 * cdd_layout_link_role. CDD_E_MANIFEST when nothing places it. */
int cdd_layout_entry_dest(enum cdd_layout_id id, const struct cdd_manifest *m,
                          enum cdd_role role, const char *archive_path,
                          const char *target, char **out);

/* Is the layout's filesystem case-insensitive (Windows layouts)? */
int cdd_layout_case_insensitive(enum cdd_layout_id id);

#endif
