/* verify: prove that the cuDNN in a tree is intact, that the loader finds and
 * loads it with all its dependencies, that its versions agree, and that it
 * computes a convolution on the GPU correctly. Four layers, each reported
 * even when an earlier one failed, as far as it can still run:
 *   files  every installed file present and unchanged (receipt hashes)
 *   load   search order, dependencies (without loading), loading by absolute
 *          path, version functions
 *   gpu    driver vs CUDA version, handle, one convolution vs a CPU reference
 *   bench  ResNet-50's first layer timed on the GPU (FP32, TF32 and FP16
 *          tensor-op math) and on the CPU; below a 5x speed-up it fails
 * The core collects checks; the command layer prints them. */
#ifndef CDD_VERIFY_H
#define CDD_VERIFY_H

#include <stddef.h>

#include "cdd/checks.h"
#include "cdd/cudatree.h"
#include "cdd/gpu.h"
#include "cdd/manifest.h"

enum cdd_vlevel {
    CDD_LEVEL_FILES = 0,
    CDD_LEVEL_LOAD,
    CDD_LEVEL_GPU,
    CDD_LEVEL_BENCH
};

struct cdd_tree;
struct cdd_receipt;
struct cdd_fit_gpus;
struct cdd_fit_result;
struct cdd_verify_opts {
    const struct cdd_target *target;
    struct cdd_tree *tree;        /* the target's tree, opened by the caller */
    /* NULL: the manifest recorded at install (.cudnn-deploy/manifest.json),
     * else the default shipped one for this platform. */
    const struct cdd_manifest *m;
    int level;        /* enum cdd_vlevel, or -1: gpu when a driver is
                         present, else load */
    const struct cdd_gpu_bench_opts *bench; /* NULL: defaults (its math is
                                               ignored: all three run) */
    /* The hashes to prove the files and libraries against. NULL: the
     * receipt in the tree. install's closing verify hands the receipt it
     * has just written (or, for an unchanged re-install, the one its plan
     * matched with the archive's own hashes), so that neither a swapped
     * library nor an edited receipt.json between the two is believed. */
    const struct cdd_receipt *receipt;
    /* GPU fit (fit.h): the GPUs to fit (--gpu-cc), NULL: every GPU the
     * driver reports; the catalog to name releases from (NULL: the
     * compiled-in one, or $CUDNN_DEPLOY_CATALOG). */
    const struct cdd_fit_gpus *gpus;
    const char *catalog_dir;
    /* The GPU checks (and the GPU probe) are stopped when the driver or
     * cuDNN makes no progress for this many seconds -- a hung driver or
     * GPU -- which is a failing check (--gpu-timeout). 0: the default,
     * CDD_GPU_TIMEOUT_DEFAULT; below 0: no bound. They run in a child
     * process (isolate.h), which is killed at the bound. */
    double gpu_timeout;
};

/* Seconds: long enough for a first cuInit on a machine of many GPUs and
 * for the driver compiling cuDNN's PTX for a GPU it has no code for (a
 * minute or more); a hung driver still ends within minutes, not never. */
#define CDD_GPU_TIMEOUT_DEFAULT 300

/* The bound in milliseconds for isolate.h (0: none), from a gpu_timeout
 * value as above. */
long cdd_gpu_timeout_ms(double gpu_timeout);

struct cdd_verify_result {
    struct cdd_checks checks;
    int level;                 /* the level that ran */
    char *manifest_name;       /* which manifest was used */
    long cudnn_version;        /* cudnnGetVersion(), 0 if not called */
    int have_gpu;
    struct cdd_gpu_info gpu;
    int conv_ran;
    struct cdd_gpu_conv_result conv;
    int bench_ran;
    struct cdd_gpu_bench_result bench; /* FP32, = bench_math[CDD_BENCH_FP32] */
    /* Every precision of the bench (enum cdd_bench_math): FP32, TF32, FP16. */
    int bench_math_ran[CDD_BENCH_N_MATH];
    struct cdd_gpu_bench_result bench_math[CDD_BENCH_N_MATH];
    /* GPU fit (gpu.fit): ran, its status and findings */
    int fit_ran;
    enum cdd_check_status fit_status;
    struct cdd_fit_result *fit;   /* malloc'd (fit.h), or NULL */
};

/* Runs the layers; returns 0 when it could run at all (checks that fail are
 * in res->checks), or an error that prevented any checking (target,
 * manifest, receipt unreadable). */
int cdd_verify(const struct cdd_verify_opts *o, struct cdd_verify_result *res);
void cdd_verify_result_clear(struct cdd_verify_result *r);

/* For the program's main, first (isolate.h): when this run is one of
 * verify's steps started afresh in a process of its own (Windows: the GPU
 * layer, the sub-libraries' version checks, the GPU listing), run it and
 * return the exit status; else -1. */
int cdd_verify_child_main(int argc, char **argv);

#endif
