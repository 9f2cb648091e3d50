/* GPU fit (verify's gpu.fit, doctor's "fit" checks): does the installed
 * cuDNN carry code for every GPU of this machine, and if not, which
 * catalog release would. docs/verification.md, "GPU fit".
 *
 * What the release supports comes, in this order, from
 *  - the catalog (catalog.h): the installed version's support-matrix facts
 *    for the tree's CUDA major, judged by the same selection function as
 *    `install --cudnn` (cdd_catalog_match), one GPU at a time;
 *  - else the libraries' own device code (fatbin.h, cdd_fatbin_fit): SASS
 *    for the GPU passes, PTX only is a warning (JIT), neither fails;
 *  - else nothing is known: the check is skipped, saying so.
 * A GPU that does not fit names the newest catalog release that fits this
 * tree's CUDA, the platform, the driver and every GPU (cdd_catalog_match +
 * cdd_catalog_best, exactly what `install --cudnn latest` would choose).
 *
 * The core never prints: one check is appended to a check list. */
#ifndef CDD_FIT_H
#define CDD_FIT_H

#include <stddef.h>

#include "cdd/fatbin.h"
#include "cdd/checks.h"

struct cdd_catalog;

struct cdd_fit_gpu {
    int cc;      /* compute capability x10 (90: 9.0) */
    char *name;  /* "NVIDIA H200", or NULL (--gpu-cc) */
};

/* The GPUs to fit: --gpu-cc (given), else every device the driver
 * reports. */
struct cdd_fit_gpus {
    struct cdd_fit_gpu *v;
    size_t n;
    int given;       /* from --gpu-cc */
    char *driver;    /* the driver's release ("580.65.06"), NULL unknown */
    char *note;      /* why none could be read (no driver, no device), or
                        NULL */
    int crashed;     /* the probe's process died (the note says how) */
    double timeout;  /* in: the bound on the driver's silence, as verify's
                        gpu_timeout (0: the default) */
};

/* Fill g from the driver (read-only: cuInit, each device's name and
 * compute capability; nothing runs on a GPU), keeping g->v when g->given.
 * A driver that is missing or has no device is no error: g->note says so.
 * 0 or CDD_E_NOMEM. */
int cdd_fit_gpus_probe(struct cdd_fit_gpus *g);
/* Add a --gpu-cc value ("8.6"): 0, CDD_E_USAGE or CDD_E_NOMEM. */
int cdd_fit_gpus_add_cc(struct cdd_fit_gpus *g, const char *cc);
void cdd_fit_gpus_clear(struct cdd_fit_gpus *g);

struct cdd_fit_query {
    const char *version;   /* the installed cuDNN ("9.13.0.50"; a shorter
                              "9.13.0" matches the newest such release);
                              NULL: unknown */
    const char *platform;  /* NVIDIA's name ("linux-x86_64") */
    int cuda_major;        /* the tree's CUDA; 0 unknown */
    int cuda_minor;        /* -1 unknown */
    const struct cdd_fit_gpus *gpus;
    const struct cdd_fatbin_info *code; /* the libraries' device code,
                                           merged; NULL: not read */
    const char *catalog_dir;            /* NULL: $CUDNN_DEPLOY_CATALOG,
                                           else the compiled-in one */
};

struct cdd_fit_result {
    int compared;          /* at least one GPU was judged */
    size_t n_unfit;        /* GPUs the release cannot run on */
    const char *basis;     /* "catalog", "device code" or "unknown" */
    char *supports;        /* what the release supports, or NULL */
    char *newest;          /* the newest catalog release that fits, or
                              NULL */
    char *newest_variant;  /* its CUDA variant ("cuda12") */
};

/* Judge q and append one check named name to out. 0, or CDD_E_NOMEM (a
 * catalog that does not load is a warning in the check, not an error). */
int cdd_fit_check(const struct cdd_fit_query *q, const char *name,
                  struct cdd_checks *out, struct cdd_fit_result *res);
void cdd_fit_result_clear(struct cdd_fit_result *r);

#endif
