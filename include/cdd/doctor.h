/* doctor: diagnose the CUDA / cuDNN environment of this host, with or
 * without a target tree. It answers the questions behind the failures users
 * meet (docs/design.md, What users trip over): which CUDA toolkits exist and which one PATH reaches
 * first, every copy of cuDNN the loader could pick and which one wins, the
 * conda and Python package copies that programs load instead, variables the
 * loader ignores (CUDNN_PATH), the driver, and on Windows the DLLs cuDNN
 * needs beside itself (Visual C++ runtime, zlibwapi.dll). Each finding is a
 * check whose detail says what to do.
 *
 * Nothing is loaded but the driver (for its version): cuDNN versions are
 * read from the files (the real file name libcudnn.so.8.5.0, a
 * cudnn_version.h in ../include, or a DLL's version resource). The core
 * collects; the command layer prints. */
#ifndef CDD_DOCTOR_H
#define CDD_DOCTOR_H

#include <stddef.h>

#include "cdd/checks.h"
#include "cdd/cudatree.h"
#include "cdd/verify.h"

struct cdd_doctor_toolkit {
    char *root;        /* absolute, as found */
    char *real;        /* symlinks resolved: one tree reached two ways is
                          one toolkit */
    char *found_by;    /* "CUDA_PATH_V11_6, default root, PATH" */
    struct cdd_cuda_version version;
    int path_pos;      /* 1-based PATH position of its first entry, 0 none */
    int lib_path_pos;  /* the same in LD_LIBRARY_PATH (Linux), 0 none */
};

enum cdd_copy_where {
    CDD_COPY_SEARCH = 0, /* on the loader's search path */
    CDD_COPY_CONDA,      /* $CONDA_PREFIX/lib or Library\bin */
    CDD_COPY_PYTHON,     /* a Python package (torch/lib, nvidia/cudnn) */
    CDD_COPY_TARGET      /* in the target's library folder, not searched */
};

struct cdd_doctor_copy {
    char *name;          /* "libcudnn.so.8", "cudnn64_8.dll" */
    char *path;          /* where it was found */
    char *real;          /* symlinks resolved */
    char version[32];    /* "8.5.0", "" when unknown */
    const char *version_from; /* "file name", "cudnn_version.h",
                                 "version resource", "" */
    enum cdd_copy_where where;
    char *origin;        /* "LD_LIBRARY_PATH #2", "system folder",
                            "CONDA_PREFIX", "torch (VIRTUAL_ENV)" */
    int order;           /* 1-based in the loader's order; 0 off the path */
    int is_main;         /* the main library (not a sub-library) */
};

struct cdd_doctor_result {
    struct cdd_checks checks;
    struct cdd_doctor_toolkit *toolkits;
    size_t n_toolkits;
    struct cdd_doctor_copy *copies;
    size_t n_copies;
    int have_driver;          /* the driver library loaded */
    char *driver_path;        /* the driver library, malloc'd; NULL none */
    char driver_release[32];  /* "580.65.06", "" unknown */
    int driver_cuda_version;  /* 13000 = CUDA 13.0, 0 unknown */
};

struct cdd_fit_gpus;
struct cdd_tree;
struct cdd_doctor_opts {
    const struct cdd_target *target; /* NULL: the host only */
    /* The target's tree, opened by the caller (cdd_target_open_look): its
     * receipt is read through it, unless its state did not pass
     * (state_bad: then opened by its root alone, state_why saying why). */
    struct cdd_tree *tree;
    int state_bad;
    const char *state_why;
    /* GPU fit (fit.h): the GPUs (NULL: the driver's), the catalog folder
     * (NULL: the compiled-in one) */
    const struct cdd_fit_gpus *gpus;
    const char *catalog_dir;
};

/* Look at everything and fill res. Returns 0 when it could look at all
 * (problems are checks in res), or CDD_E_NOMEM. */
int cdd_doctor(const struct cdd_doctor_opts *o, struct cdd_doctor_result *res);
void cdd_doctor_result_clear(struct cdd_doctor_result *r);

const char *cdd_copy_where_name(enum cdd_copy_where w);

#endif
