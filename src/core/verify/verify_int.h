/* Shared between verify.c (orchestration, files layer), verify_load.c and
 * verify_gpu.c. verify.c calls the two layers; they write to the check list
 * (checks.c) and call nothing of verify.c, so the files import in one
 * direction. */
#ifndef CDD_VERIFY_INT_H
#define CDD_VERIFY_INT_H

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
};

#define VCHECK(c, name, st, ...)                                               \
    cdd_checks_add(&(c)->res->checks, name, st, __VA_ARGS__)

int cdd_verify_load_layer(struct vctx *c);
/* driver: the driver library's path, or NULL with why_none saying why. */
void cdd_verify_gpu_layer(struct vctx *c, int bench, const char *driver,
                          const char *why_none);

#endif
