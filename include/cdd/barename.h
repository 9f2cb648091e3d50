/* Bare-name loads: cuDNN's main library dlopen()s its sub-libraries
 * (engines, tensor_ir where present) by bare soname on first use, so which
 * file a process gets is the dynamic loader's answer for a dlopen() from
 * that library, not the folder the main library came from. A wheel's
 * cuDNN 9.20 getting a system copy of libcudnn_engines_tensor_ir.so.9 of
 * another version is pytorch/pytorch#188892. docs/verification.md,
 * "Bare-name loads".
 *
 * The order emulated (glibc ld.so, dlopen from the object L):
 *   1. L's DT_RPATH, when L has no DT_RUNPATH ($ORIGIN: L's folder);
 *   2. LD_LIBRARY_PATH;
 *   3. L's DT_RUNPATH;
 *   4. /etc/ld.so.cache, then the default folders (loader.h,
 *      cdd_lib_find_all).
 * What ld.so answers first of all, a library of that soname the process
 * has loaded already (PyTorch preloads some of its wheel's), is the
 * process's and cannot be known here: the detail says so. Windows' loader
 * searches otherwise (docs/windows.md): there the check is a skip. */
#ifndef CDD_BARENAME_H
#define CDD_BARENAME_H

#include <stddef.h>

#include "cdd/checks.h"

/* Where the bare name resolves. All strings malloc'd. */
struct cdd_bare_hit {
    char *path;     /* the file (as found), NULL: nowhere */
    char *real;     /* symlinks resolved */
    const char *how; /* "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH",
                        "ld.so cache or a system folder"; static */
    char *version;  /* its cuDNN version ("9.14.0": the real file's name,
                       else the wheel's dist-info), NULL unknown */
};

/* Resolve name for a dlopen() from the library at loader (absolute). 0,
 * or CDD_E_NOMEM; an unreadable loader is read as one without RPATH. */
int cdd_bare_resolve(const char *loader, const char *name,
                     struct cdd_bare_hit *out);
void cdd_bare_hit_clear(struct cdd_bare_hit *h);

/* The cuDNN version of a library file: from its real file name
 * (libcudnn_ops.so.9.14.0), else from the nvidia_cudnn_cu*.dist-info of
 * the site folder it sits in (site/nvidia/cudnn/lib/...). malloc'd, NULL
 * unknown (or no memory: *oom). */
char *cdd_bare_file_version(const char *path, int *oom);

/* One context: the main library main_lib (absolute) of cuDNN major, whose
 * own sub-libraries are in its folder, expected version version (NULL:
 * the main library's, cdd_bare_file_version). For each sub-library the
 * facts table names (cudnn_facts.h), one check "<prefix> <soname>": pass
 * when the bare name resolves to the copy beside main_lib (or one of the
 * same version), warn when it resolves to a copy of another version or of
 * unknown version elsewhere (with the fix), pass with a note when it
 * resolves nowhere but the copy beside main_lib exists (found only when
 * loaded first). where: "the tree", "Python environment X" for the text.
 * 0 or CDD_E_NOMEM. */
int cdd_bare_check(const char *main_lib, int major, const char *version,
                   const char *where, const char *prefix,
                   struct cdd_checks *out);

#endif
