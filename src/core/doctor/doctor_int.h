/* doctor's phases (doctor.h), shared by its three files:
 *   doctor_scan.c   discovery: reads variables, folders and files into a
 *                   struct cdd_dscan (and the result's toolkits, copies and
 *                   driver);
 *   doctor_check.c  the checks and their fixes, computed from a scan alone:
 *                   no file, variable or library is looked at, so they can
 *                   be tested on synthetic scans (tests/unit/
 *                   test_doctor_check.c);
 *   doctor.c        the tables and the orchestration: scan, check, clear.
 * See docs/design.md, "doctor". */
#ifndef CDD_DOCTOR_INT_H
#define CDD_DOCTOR_INT_H

#include <stddef.h>

#include "cdd/compat_attr.h"
#include "cdd/cudnn_facts.h"
#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/receipt.h"
#include "cdd/strbuf.h"

/* ---- tables (doctor.c) --------------------------------------------------- */

/* A cuDNN major's libraries as the loader is asked for them on one
 * platform (the main library loads the others by these names on first
 * use), taken from the facts table (cudnn_facts.h). subs ends with NULL. */
struct cdd_dr_names {
    int major;
    const char *main;
    const char *subs[CDD_CUDNN_MAX_SUBS + 1];
};

#define CDD_DR_MAJORS CDD_CUDNN_N_MAJORS

/* out[CDD_DR_MAJORS] from the facts table, for Windows or Linux names. */
void cdd_dr_names_fill(struct cdd_dr_names *out, int windows);

/* Where Python packages keep cuDNN: PyTorch's bundled copy, and pip's
 * nvidia-cudnn-cuXX package (lib on Linux, bin on Windows). */
struct cdd_dr_pypkg {
    const char *sub;
    const char *label;
};

#define CDD_DR_N_PYPKGS 3
extern const struct cdd_dr_pypkg cdd_dr_py_pkgs[CDD_DR_N_PYPKGS];

/* The Visual C++ runtime DLLs cuDNN imports: cudnn_facts.h's
 * cdd_msvc_runtime (docs/windows.md). */
#define CDD_DR_N_VCRT CDD_MSVC_RUNTIME_N

/* ---- details and bounds (doctor.c, doctor_scan.c) ------------------------ */

/* A check's detail is built piecewise in a struct cdd_sb (cdd/strbuf.h) of
 * at most CDD_DR_TEXT_MAX bytes with cdd_sb_catf: the first failure sticks
 * in the buffer and is read once, when the text is done (cdd_dr_text_ok).
 * The bound is the report's for one detail (cdd_checks_add): a part of a
 * detail cannot be longer than the detail. */
#define CDD_DR_TEXT_MAX CDD_TEXT_MAX
#define CDD_DR_TEXT_INIT(sb) cdd_sb_init((sb), CDD_DR_TEXT_MAX, "doctor detail")

/* Bounds of what the scan holds, from the bounds of what it reads. One
 * environment variable holds at most 128 KiB (Linux: MAX_ARG_STRLEN;
 * Windows: 32767 UTF-16 units, under 98 KiB of UTF-8), so a search list
 * (PATH, LD_LIBRARY_PATH, PYTHONPATH) has at most that many + 1 entries. */
#define CDD_DR_VAR_MAX ((size_t)128 * 1024)
#define CDD_DR_LIST_MAX (CDD_DR_VAR_MAX + 1)
/* CUDA variables looked at (CUDA_PATH, CUDA_PATH_Vx_y, CUDA_HOME): one per
 * CUDA release, a few hundred at most even counting stale ones. */
#define CDD_DR_CUDA_VARS_MAX 4096
/* Toolkits, and variables naming something wrong: one per entry of PATH
 * and LD_LIBRARY_PATH, per CUDA variable, per default folder. */
#define CDD_DR_TOOLKITS_MAX (2 * CDD_DR_LIST_MAX + CDD_DR_CUDA_VARS_MAX + 64)
#define CDD_DR_STALE_MAX CDD_DR_CUDA_VARS_MAX
/* Python site folders: PYTHONPATH's entries, and the interpreter's,
 * the user's and the virtual environment's own few. */
#define CDD_DR_SITES_MAX (CDD_DR_LIST_MAX + 64)
/* conda's copies: a main library per major in each of its two folders
 * (lib, Library/bin); Python packages' copies: one per major in each
 * package folder of each site folder. */
#define CDD_DR_CONDA_MAX (CDD_DR_MAJORS * 2)
#define CDD_DR_PY_MAX (CDD_DR_SITES_MAX * CDD_DR_N_PYPKGS * CDD_DR_MAJORS)
/* Copies of cuDNN: each library name of each major in every folder looked
 * at (the two lists' entries, the site folders' packages; conda's two, the
 * target's, the loader's own folders and the ld.so cache's few entries of
 * one name in the 64 more). */
#define CDD_DR_NAMES_PER_DIR (CDD_DR_MAJORS * (1 + CDD_CUDNN_MAX_SUBS))
#define CDD_DR_COPIES_MAX                                                      \
    ((2 * CDD_DR_LIST_MAX + CDD_DR_SITES_MAX * CDD_DR_N_PYPKGS + 64) *        \
     CDD_DR_NAMES_PER_DIR)

/* ---- the scan ------------------------------------------------------------ */

struct cdd_dr_pentry {
    char *dir;     /* absolute, as written */
    char *real;    /* symlinks resolved; NULL for entries naming no fixed
                      folder (empty, $ORIGIN) */
    int toolkit;   /* index into res->toolkits, -1 */
    char *cudnn;   /* "libcudnn.so.8 8.5.0, ..." held here, or NULL */
};

struct cdd_dr_plist {
    const char *var;       /* "PATH", "LD_LIBRARY_PATH"; NULL: not used */
    int set;               /* the variable is set */
    struct cdd_dr_pentry *v;
    size_t n;
};

/* A CUDA variable that names something wrong. */
enum cdd_dr_stale_kind {
    CDD_DR_STALE_NO_FOLDER,     /* CUDA_PATH(_Vx_y)=value names no folder */
    CDD_DR_STALE_WRONG_VERSION, /* CUDA_PATH_Vx_y names another CUDA */
    CDD_DR_STALE_HOME           /* CUDA_HOME names no folder */
};

struct cdd_dr_stale {
    enum cdd_dr_stale_kind kind;
    char *name, *value;
    int want_major, want_minor; /* from the name CUDA_PATH_Vx_y */
    int toolkit;                /* WRONG_VERSION: what it names */
};

/* The loader's copies of one major: the main library, then (only when one
 * was found) each sub-library's first copy. */
struct cdd_dr_search {
    size_t n;          /* copies of the main library, in the loader's order */
    int idx[32];       /* their res->copies indexes (n of them, at most 32) */
    int sub_first[CDD_CUDNN_MAX_SUBS]; /* res->copies index of each
                          sub-library's first copy, -1 when none was found */
};

/* A copy of cuDNN in the conda environment (CONDA_PREFIX). */
struct cdd_dr_conda {
    int m;           /* major index */
    int k;           /* res->copies index */
    char *path;      /* the file */
    int pos;         /* its folder's position on the loader's list, 0 */
    int is_target;   /* the environment is the target */
};

/* A copy of cuDNN in a Python package of a site folder. */
struct cdd_dr_py {
    int m, k;
    size_t pkg;      /* cdd_dr_py_pkgs index */
    char *site, *origin, *dir;
};

/* Where zlibwapi.dll is for one cuDNN copy: beside it, else the first on
 * the host's search path (searched only when the host is Windows). */
struct cdd_dr_zlib {
    int looked;
    char *beside;    /* the file beside the copy, when there */
    char *found;     /* the search path's first, when not beside */
};

struct cdd_dscan {
    struct cdd_doctor_result *res; /* toolkits, copies and driver are
                                      written here; the checks add to its
                                      checks */
    struct cdd_fixes fix;    /* the fix the check being written carries
                                (DCHECK hands it over) */
    int err;                 /* the first failure (CDD_E_NOMEM,
                                CDD_E_TOOLONG), 0 */
    struct cdd_errsave err_save; /* its record (cdd_dr_fail) */
    int windows;             /* host */
    char sep;                /* list separator of PATH on this host */
    struct cdd_dr_names names[CDD_DR_MAJORS];
    struct cdd_dr_plist path, libpath;
    struct cdd_dr_plist *lib;  /* what the loader searches: LD_LIBRARY_PATH
                                  on Linux, PATH on Windows */
    struct cdd_dr_stale *stale;
    size_t n_stale;
    /* the driver: 0 loaded (res->driver_*), CDD_E_NOTFOUND none, another
     * code: there but unusable; the error's path and message */
    int driver_rc;
    char *driver_path, *driver_msg; /* malloc'd, whole; NULL: none */
    struct cdd_dr_search search[CDD_DR_MAJORS];
    int winner[CDD_DR_MAJORS];  /* res->copies index of the search winner of
                                   each main library, -1 */
    char *conda_prefix;         /* absolute, NULL when unset */
    struct cdd_dr_conda *conda;
    size_t n_conda;
    struct cdd_dr_py *py;
    size_t n_py;
    /* CUDNN_PATH */
    char *cudnn_path;           /* as set, NULL unset */
    char *cudnn_path_abs;       /* absolute */
    int cudnn_path_is_dir;
    char *cudnn_path_libdir;    /* its folder holding a main library, NULL */
    int cudnn_path_pos;         /* that folder's place on the loader's list */
    /* Windows host: the system folder, the runtime DLLs missing from it */
    char *sysdir;
    int vc_missing[CDD_DR_N_VCRT];
    struct cdd_dr_zlib zlib_winner[CDD_DR_MAJORS], zlib_target[CDD_DR_MAJORS];
    /* the target, and its tree as the caller opened it (doctor.h) */
    const struct cdd_target *t;
    struct cdd_tree *tree;
    int state_bad;
    const char *state_why;
    struct cdd_receipt *rc;
    int rc_bad;              /* a receipt exists but could not be read */
    int rc_state;            /* ... because the state folder is tampered */
    char *rc_why;            /* why, one line (malloc'd; NULL: no memory) */
    int t_windows;           /* the target's platform (receipt, else its
                                layout, else host) */
    char *t_libdir, *t_libdir_real;
    int t_libdir_pos;        /* t_libdir's place on the loader's list, 0 */
    struct cdd_dr_names t_names[CDD_DR_MAJORS];
    int t_copy[CDD_DR_MAJORS]; /* res->copies index of the target's main
                                  library of each major, -1 */
};

/* doctor.c: an empty scan for a host (windows 1: Windows conventions),
 * writing into res, of target t (NULL: none). Allocates nothing. */
void cdd_dscan_init(struct cdd_dscan *s, struct cdd_doctor_result *res,
                    int windows, const struct cdd_target *t);
/* Free what a scan holds (not res). */
void cdd_dscan_clear(struct cdd_dscan *s);

/* doctor_scan.c: look at everything. Problems seen are data in s; only
 * running out of memory sets s->err. */
void cdd_doctor_scan(struct cdd_dscan *s);

/* doctor_check.c: append the checks that s calls for to s->res->checks, in
 * the report's order. Reads nothing but s; sets s->err on CDD_E_NOMEM. */
void cdd_doctor_check(struct cdd_dscan *s);

/* doctor_fit.c: the fit and bare-name checks (they read files: the
 * catalog, device code, the loader's search path), after the others. */
void cdd_doctor_fit(struct cdd_dscan *s, const struct cdd_doctor_opts *o);

/* doctor.c: keep the scan's first failure: c->err gets rc and the thread's
 * record of it is saved, unless an earlier one is kept already (later ones
 * are dropped). rc 0 does nothing. Returns rc. */
int cdd_dr_fail(struct cdd_dscan *c, int rc);
/* cdd_dr_fail for memory that ran out where nothing recorded it. */
void cdd_dr_nomem(struct cdd_dscan *c);
/* Done building text b: 1 when it is whole, else 0 with its first failure
 * kept (cdd_dr_fail). */
int cdd_dr_text_ok(struct cdd_dscan *c, const struct cdd_sb *b);

/* ---- helpers both phases use (strings only, no filesystem access) ------- */

/* Two paths equal (case-insensitively on a Windows host); NULLs differ. */
int cdd_dr_same_path(const struct cdd_dscan *c, const char *a, const char *b);
/* The folder of path ("/lib" -> "/"), malloc'd. */
char *cdd_dr_dir_of(const char *path);
/* 1-based position of the folder (resolved) in the list, 0 when absent. */
int cdd_dr_plist_pos(const struct cdd_dscan *c, const struct cdd_dr_plist *l,
                     const char *real_dir);
/* For "(8.5.0, PATH #2)" and for "cuDNN 8.5.0 at ...". */
const char *cdd_dr_ver_text(const char *v);

#endif
