/* Target trees: resolve --cuda / --cuda-root / --prefix to a directory, read
 * a CUDA tree's version, and apply the refusals (wrong major, no version,
 * inside a Python package). */
#ifndef CDD_CUDATREE_H
#define CDD_CUDATREE_H

#include "cdd/layout.h"

struct cdd_target_spec {
    const char *cuda;      /* "v11.6" or "11.6" */
    const char *cuda_root; /* a CUDA tree */
    const char *prefix;    /* a conda env / prefix */
};

struct cdd_cuda_version {
    int known;
    int major, minor, patch; /* patch -1 when not given */
    char source[32];         /* "version.json", "version.txt", "cuda.h" */
};

struct cdd_target {
    enum cdd_target_kind kind;
    char *root;          /* as resolved (absolute) */
    char *how;           /* "CUDA_PATH_V11_6", "default root", "--cuda-root" */
    struct cdd_cuda_version version; /* CUDA kind only */
    /* --cuda vX.Y: the version asked for (asked 0 otherwise). The tree a
     * CUDA_PATH_Vx_y or default root names may be of another version. */
    int asked, asked_major, asked_minor;
};

/* Does the tree say (version.json / version.txt / cuda.h) that it is of
 * another CUDA version than --cuda asked for? 0 when nothing was asked or
 * the tree's version is unknown. */
int cdd_target_version_differs(const struct cdd_target *t);

/* Resolve exactly one of the spec's fields (else CDD_E_USAGE). The tree must
 * exist and be a directory (else CDD_E_NOTFOUND, naming where it looked and
 * why: "CUDA_PATH_V11_6 is not set and /usr/local/cuda-11.6 does not exist").
 * Reads the version of a CUDA tree. Environment is read through cdd_getenv.
 * cdd_target_resolve opens the tree's root only for that (cdd_tree_open_root:
 * its state folder is not looked at) and closes it again: a command that
 * goes on to work on the tree uses cdd_target_open and keeps the handle in
 * *tree
 * (cdd_tree_open's errors; out->root still names the tree then, so the
 * report can; cdd_target_clear out either way). */
struct cdd_tree;
int cdd_target_open(const struct cdd_target_spec *spec,
                    struct cdd_target *out, struct cdd_tree **tree);
int cdd_target_resolve(const struct cdd_target_spec *spec,
                       struct cdd_target *out);
/* As cdd_target_open, for a command that diagnoses (doctor): a tree whose
 * state folder does not pass (CDD_E_STATE) is opened by its root alone
 * (cdd_tree_open_root) and *state_why says why, one line (malloc'd; NULL
 * when it passed, or no memory for the words: then *state_bad is still
 * set). Other errors as cdd_target_open. */
int cdd_target_open_look(const struct cdd_target_spec *spec,
                         struct cdd_target *out, struct cdd_tree **tree,
                         int *state_bad, char **state_why);
void cdd_target_clear(struct cdd_target *t);

/* The platform whose layout a tree has, by what is in it when nothing
 * records it (a receipt does): Windows for lib/x64, bin/nvcc.exe, a cuDNN
 * DLL in bin or a conda Library folder; Linux for lib64, targets/
 * x86_64-linux, bin/nvcc or a cuDNN .so in lib, looked at through the
 * tree's handle. 0 and *out when the signs agree, -1 when there are none or
 * both kinds. */
int cdd_target_layout_platform(struct cdd_tree *tree, enum cdd_platform *out);

/* The layout an archive of manifest m gets in target t, decided from the
 * tree, never from the host. A Windows CUDA tree takes cuDNN's DLLs where
 * its own cudart64_*.dll lives: bin/x64 (CUDA 13's toolkit) or bin (CUDA 12
 * and older); a tree with neither gets its CUDA major's default (bin/x64
 * from CUDA 13 on, else bin). *why (static text) says which rule decided,
 * for the report. Other targets: cdd_layout_select. The tree (t's, opened)
 * is read through its handle. */
enum cdd_layout_id cdd_target_choose_layout(const struct cdd_target *t,
                                            struct cdd_tree *tree,
                                            const struct cdd_manifest *m,
                                            const char **why);

/* Is a manifest of platform p for another machine than this host's, and
 * so installable only when the user named p with --platform (given: the
 * option was used, asked its value)? 0, or CDD_E_USAGE with the reason:
 * --platform naming another platform than the manifest's, or a foreign
 * machine without it. A Windows archive on a Linux host of the same
 * machine (and the reverse) needs nothing: layouts follow the manifest. */
int cdd_target_check_platform(enum cdd_platform p, int given,
                              enum cdd_platform asked);

/* Parse "v11.6", "11.6" (also "V11.6"): 0 or CDD_E_USAGE. */
int cdd_cuda_arg_parse(const char *s, int *major, int *minor);

/* Read version.json, else version.txt, else CUDA_VERSION in include/cuda.h,
 * through the tree (a link to one of them is followed only inside it).
 * v->known == 0 when none says anything (not an error). CDD_E_STATE when a
 * file exists but cannot be understood. */
int cdd_cuda_version_read(struct cdd_tree *tree, struct cdd_cuda_version *v);

/* Parsers, exposed for unit tests. 0 or -1 (parse_json: CDD_E_NOMEM when
 * the JSON could not be parsed for lack of memory). */
int cdd_cuda_version_parse_json(const char *text, size_t len,
                                struct cdd_cuda_version *v);
int cdd_cuda_version_parse_txt(const char *text, struct cdd_cuda_version *v);
int cdd_cuda_version_parse_header(const char *text,
                                  struct cdd_cuda_version *v);

/* The refusals before an install: inside site-packages/dist-packages
 * (CDD_E_TARGET; the name given, or the tree's canonical root, which tree
 * resolved when it was opened); CUDA tree whose major differs from
 * cuda_major (CDD_E_VERSION naming both) or whose version is unknown
 * (CDD_E_VERSION), both waived by force. */
int cdd_target_check(const struct cdd_target *t, const struct cdd_tree *tree,
                     int cuda_major, int force);

#endif
