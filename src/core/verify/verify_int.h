/* Shared between verify.c (orchestration, files layer), verify_load.c and
 * verify_gpu.c. verify.c calls the two layers; they write to the check list
 * (checks.c) and call nothing of verify.c, so the files import in one
 * direction. */
#ifndef CDD_VERIFY_INT_H
#define CDD_VERIFY_INT_H

#include "cdd/hash.h"
#include "cdd/layout.h"
#include "cdd/loader.h"
#include "cdd/receipt.h"
#include "cdd/verify.h"

/* One library the manifest's verify section names, as installed. */
struct vlib {
    const char *archive_path;  /* manifest path */
    char *installed;           /* absolute path in the tree */
    char *name;                /* basename: what programs ask the loader for */
    const char *check_symbol;  /* sub-libraries; NULL for the main one */
    struct cdd_lib *handle;    /* loaded, or NULL */
    int is_main;
    char *rel;                 /* tree path (as installed) */
    char *copy;                /* the proven private copy, loaded; or NULL */
    uint8_t sha[CDD_SHA256_LEN]; /* the copy's bytes, as proven */
    char *skip;                /* why it is not loaded (malloc'd), or NULL */
};

struct vctx {
    const struct cdd_verify_opts *o;
    struct cdd_verify_result *res;
    const struct cdd_manifest *m;
    const struct cdd_receipt *rc; /* may be NULL */
    enum cdd_layout_id layout;
    struct cdd_tree *tree;        /* every file check goes through it */
    const char *root;             /* its canonical path: messages, and
                                     loading a library by absolute path */
    struct vlib *libs;            /* [0] is the main library */
    size_t n_libs;
    int host_can_load;            /* manifest platform == host platform */
    /* Tree paths the files layer found missing or changed: a library that
     * is one of them (or reached through one) is never loaded. */
    char **changed;
    size_t n_changed;
    char *private_dir;            /* the proven copies' folder, or NULL */
    /* Folders examined for StrictModes (treetrust.c): real path, and the
     * problem (NULL: safe). */
    char **trust_dir;
    char **trust_problem;
    size_t n_trust;
    /* Libraries loaded from the tree beside ours ($ORIGIN, a DLL's own
     * folder), before ours, from trusted folders only. */
    struct cdd_lib **tree_deps;
    size_t n_tree_deps;
    /* What was loaded, in order: a library of ours (lib its index, path
     * its proven copy) or one of the tree beside it (lib -1), so that a
     * step started afresh (apart.c, Windows) loads the same again. */
    struct vload {
        int lib;
        char *path;
    } *loaded;
    size_t n_loaded;
    /* In a step's child process (apart.c): the channel to the parent, how
     * many checks have been sent through it, and whether the GPU layer's
     * results go with them. NULL in the parent, and where the step runs
     * in-process. */
    struct cdd_child *child;
    size_t n_sent;
    int child_gpu;
};

#define VCHECK(c, name, st, ...)                                               \
    cdd_checks_add(&(c)->res->checks, name, st, __VA_ARGS__)

int cdd_verify_load_layer(struct vctx *c);

/* libproof.c: prove l's bytes: the file the receipt (else the manifest)
 * records for it, reached through the recorded symlink chain, opened once
 * beneath the tree, hashed while copied into c->private_dir (created on
 * first use). 0 with l->copy set when the hash matched; 0 with l->skip set
 * (and no copy) when it did not or could not be proven; an error only for
 * no memory or no private folder. */
int cdd_verify_prove(struct vctx *c, struct vlib *l);
/* Is rel one of the paths the files layer found changed? */
int cdd_verify_is_changed(const struct vctx *c, const char *rel);
/* Remove the private copies and their folder (after every close). */
void cdd_verify_copies_remove(struct vctx *c);

/* treetrust.c: StrictModes. The tree root, every folder above it and every
 * library folder: one load.trust check each that another account can
 * write (warn, with the fix), or one pass. */
void cdd_verify_trust_checks(struct vctx *c);
/* 1 when folder dir or one above it can be changed by an account we do not
 * trust, or could not be examined (no memory: checks.nomem set; refused
 * all the same), with *why "DIR is why" (malloc'd; NULL without memory);
 * 0 when only trusted accounts can change them. */
int cdd_verify_dir_problem(struct vctx *c, const char *dir, char **why);
void cdd_verify_trust_clear(struct vctx *c);
/* driver: the driver library's path, or NULL with why_none saying why. */
void cdd_verify_gpu_layer(struct vctx *c, int bench, const char *driver,
                          const char *why_none);

/* apart.c: cdd_verify_gpu_layer run apart (isolate.h), its checks and
 * results merged into c->res; a child that dies or hangs is a failing check
 * named after the stage it was in, after the checks it had made. */
void cdd_verify_gpu_apart(struct vctx *c, int bench, const char *driver,
                          const char *why_none);
/* apart.c: the load layer's sub-library version checks
 * (cdd_verify_sub_checks), apart the same way (cuDNN 9's start the driver,
 * which a forked child could then not start again). */
void cdd_verify_run_apart_checks(struct vctx *c);
/* verify_load.c: each sub-library's version check, from the loaded ones. */
void cdd_verify_sub_checks(struct vctx *c);
/* verify_load.c: note what was just loaded (cdd_verify_loaded_add; lib -1:
 * one of the tree's), for a step started afresh; 0 or CDD_E_NOMEM. */
int cdd_verify_loaded_add(struct vctx *c, int lib, const char *path);
/* fit.c: the GPU listing as a step started afresh (isolate.h). */
int cdd_fit_probe_entry(struct cdd_child *ch, const void *req, size_t n);
/* Called by a step run apart as each stage begins (stage: the name of the
 * check it makes, "gpu.conv"): in the child, sends the checks (and the GPU
 * layer's results) so far and the stage's name; nothing in the parent. */
void cdd_verify_stage(struct vctx *c, const char *stage);

/* verify_fit.c: gpu.fit (every GPU against the installed release) and
 * load.barename (the sub-libraries cuDNN loads by bare name). 0 or
 * CDD_E_NOMEM. */
int cdd_verify_fit_layer(struct vctx *c);
int cdd_verify_barename_layer(struct vctx *c);

#endif
