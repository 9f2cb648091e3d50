/* verify's gpu and bench layers: drive the NVIDIA driver API and cuDNN's
 * legacy convolution API through libraries loaded by absolute path
 * (loader.h), with nothing linked at build time and no CUDA or cuDNN header
 * needed. Nothing here prints; results come back in structs and failures
 * through cdd_fail() messages that name the failing call and the CUDA or
 * cuDNN status text ("cudnnConvolutionForward: CUDNN_STATUS_NOT_SUPPORTED").
 *
 * Typical use:
 *     cdd_gpu_env_open(NULL, &g)       CDD_E_NOTFOUND: no driver, skip
 *     cdd_gpu_env_info(g)              driver CUDA version -> cdd_gpu_driver_fit
 *     cdd_gpu_env_device(g, 0)         cuInit, device, primary context
 *     cdd_gpu_conv_check(g, cudnn, &c)
 *     cdd_gpu_bench(g, cudnn, &opts, &b)
 *     cdd_gpu_env_close(g)
 *
 * cuDNN's main library (libcudnn.so.N / cudnn64_N.dll) is a shim that loads
 * its sub-libraries (cnn, ops, engines...) on first use BY BARE NAME, and
 * cuDNN 8 aborts the process when one is not found. The caller should
 * therefore have loaded every sub-library of the same tree by absolute path
 * (the load layer does) and keep them loaded while these functions run: the
 * platform loader then answers the shim's bare-name request with those very
 * copies, by soname, instead of searching. */
#ifndef CDD_GPU_H
#define CDD_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/conv_ref.h"

struct cdd_lib;
struct cdd_gpu_env;

/* Plain data (it crosses from the GPU layer's child process whole): the
 * driver's path is the handle's, cdd_gpu_env_driver_path. */
struct cdd_gpu_info {
    char driver_release[32];  /* "580.65.06" from the library's real file
                                 name (libcuda.so.580.65.06), "" if unknown */
    int driver_cuda_version;  /* cuDriverGetVersion: 13000 = CUDA 13.0 */
    int initialized;          /* cuInit succeeded */
    int device_count;         /* after cdd_gpu_env_device, else 0 */
    int device;               /* ordinal in use, -1 before cdd_gpu_env_device */
    char device_name[256];    /* fixed: cuDeviceGetName's buffer (the driver
                                 cuts its name to fit what it is given) */
    int cc_major, cc_minor;   /* compute capability */
    uint64_t total_mem;       /* bytes, 0 if unknown */
};

/* Load the driver library (driver_path, or cdd_driver_library_path() when
 * NULL), resolve the driver API and read cuDriverGetVersion (which needs no
 * cuInit, so the version is known even when no GPU can be used).
 * Errors: CDD_E_NOTFOUND no driver library (skip the gpu layer);
 * CDD_E_CHECK it would not load or lacks a driver API entry point. */
int cdd_gpu_env_open(const char *driver_path, struct cdd_gpu_env **out);

/* cuInit(0), pick device `ordinal`, read its name, compute capability and
 * memory, retain its primary context and make it current on this thread.
 * Errors: CDD_E_NOTFOUND when cuInit finds no CUDA device (driver installed,
 * no GPU visible: also a reason to skip); CDD_E_USAGE ordinal out of range;
 * CDD_E_CHECK for any other driver failure (the CUDA error name and text,
 * e.g. CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, in the message). */
int cdd_gpu_env_device(struct cdd_gpu_env *g, int ordinal);

const struct cdd_gpu_info *cdd_gpu_env_info(const struct cdd_gpu_env *g);
/* The driver library loaded (whole, owned by g). */
const char *cdd_gpu_env_driver_path(const struct cdd_gpu_env *g);

/* Release the primary context and unload the driver. Accepts NULL. */
void cdd_gpu_env_close(struct cdd_gpu_env *g);

/* ---- driver versus the tree's CUDA ------------------------------------ */

enum cdd_drv_fit {
    CDD_DRV_TOO_OLD = 0,     /* the driver cannot run this CUDA */
    CDD_DRV_NATIVE = 1,      /* the driver's CUDA >= the tree's */
    CDD_DRV_MINOR_COMPAT = 2 /* same major, older minor: runs through CUDA
                                minor-version compatibility (CUDA >= 11),
                                with that feature's limits (no PTX JIT of
                                newer PTX) */
};

/* Can a driver whose cuDriverGetVersion is driver_cuda_version run code
 * built with CUDA tree_major.tree_minor? driver_release ("525.60.13", or
 * NULL/"" when unknown) refines the minor-compatibility case: a release
 * below cdd_cuda_min_driver() (cudnn_facts.h) is TOO_OLD. */
enum cdd_drv_fit cdd_gpu_driver_fit(int driver_cuda_version,
                                    const char *driver_release, int tree_major,
                                    int tree_minor);

/* 13000 -> "13.0", 11080 -> "11.8". Returns buf. */
char *cdd_cuda_version_str(int v, char *buf, size_t len);

/* Compare dotted releases numerically: <0, 0, >0 ("580" < "580.65.06"). */
int cdd_driver_release_cmp(const char *a, const char *b);

/* ---- cuDNN ------------------------------------------------------------- */

/* cuDNN enum names for reports: "IMPLICIT_PRECOMP_GEMM", "FMA_MATH"... */
const char *cdd_cudnn_algo_name(int algo);
const char *cdd_cudnn_math_name(int math_type);

#define CDD_CONV_CHECK_TOL 1e-3 /* FP32 (FMA) math */
#define CDD_CONV_TF32_TOL 1e-2  /* when TF32 tensor cores were allowed */
/* FP16 data: inputs are rounded to binary16 before both sides convolve
 * them, so the error is cuDNN's accumulation and the binary16 rounding of
 * each output (2^-11 relative to |y| <= the compare scale), well below. */
#define CDD_CONV_FP16_TOL 1e-2

struct cdd_gpu_conv_result {
    int ran;                /* a result was computed and compared */
    int pass;               /* max_rel_err <= tolerance */
    double max_rel_err;     /* cdd_conv_compare's measure */
    double max_abs_err;
    size_t worst_index;     /* NCHW index of the worst element */
    double tolerance;
    int algo;               /* cudnnConvolutionFwdAlgo_t that ran */
    int math_type;          /* cudnnMathType_t set on the descriptor:
                               3 FMA_MATH normally; -1 when the library has
                               no cudnnSetConvolutionMathType (default math) */
    size_t workspace;       /* bytes */
    size_t cudnn_version;   /* cudnnGetVersion(), 0 if not exported */
    int out_n, out_c, out_h, out_w; /* as cuDNN computed them */
};

/* One small convolution (NCHW float, input 1x3x32x32, filter 16x3x3x3,
 * pad 1, stride 1, fixed-seed data in [-1, 1)) on device memory allocated
 * through the driver API, compared with cdd_conv_ref_forward. Math type
 * FMA_MATH where cudnnSetConvolutionMathType exists, so TF32 tensor cores
 * (Ampere and later) cannot blur a 1e-3 check. The algorithm is cuDNN's
 * heuristic choice (cudnnGetConvolutionForwardAlgorithm_v7, else
 * cudnnFindConvolutionForwardAlgorithm), falling back to IMPLICIT_GEMM.
 * Needs cdd_gpu_env_device. res is filled as far as it got.
 * Errors: CDD_E_CHECK when a call fails or the result is wrong (res->ran
 * set, res->pass 0, message with the error and where); CDD_E_USAGE no device
 * opened; CDD_E_NOMEM. */
int cdd_gpu_conv_check(struct cdd_gpu_env *g, struct cdd_lib *cudnn,
                       struct cdd_gpu_conv_result *res);

/* The benchmark's precisions. */
enum cdd_bench_math {
    CDD_BENCH_FP32 = 0, /* FP32 data, FMA_MATH: CUDA cores only;
                           tolerance CDD_CONV_CHECK_TOL */
    CDD_BENCH_TF32,     /* FP32 data, TENSOR_OP_MATH: TF32 tensor cores on
                           compute capability >= 8.0 (FP32 math before);
                           tolerance CDD_CONV_TF32_TOL */
    CDD_BENCH_FP16      /* FP16 (binary16) data, FP32 accumulation
                           (compute type FLOAT), TENSOR_OP_MATH: FP16 tensor
                           cores on >= 7.0; tolerance CDD_CONV_FP16_TOL */
};
#define CDD_BENCH_N_MATH 3
/* Names for reports: "FP32", "TF32", "FP16". */
const char *cdd_bench_math_name(int math);

/* Below this speed-up over the single-threaded CPU reference, cuDNN is not
 * really running on a GPU (the rule of thumb users apply to the manual
 * check). */
#define CDD_BENCH_MIN_SPEEDUP 5.0

struct cdd_gpu_bench_opts {
    struct cdd_conv_shape shape;
    int warmup;     /* untimed runs first */
    int gpu_runs;   /* timed with driver events, median taken (>= 1) */
    int cpu_runs;   /* CPU reference runs timed, median taken (>= 1) */
    int math;       /* enum cdd_bench_math */
    double min_speedup; /* fail below this speed-up; 0: no minimum */
};

/* ResNet-50's first layer: 8x3x224x224, 64x3x7x7, stride 2, pad 3
 * (-> 8x64x112x112, 1.89 GFLOP); warm-up 3, 20 GPU runs, 3 CPU runs,
 * FP32 (FMA) math, minimum speed-up CDD_BENCH_MIN_SPEEDUP. */
void cdd_gpu_bench_defaults(struct cdd_gpu_bench_opts *o);
/* The defaults for one precision: FP32 and FP16 as above; TF32 a layer
 * its tensor cores take -- ResNet-50's res2 3x3 convolution, 8x64x56x56,
 * 64x64x3x3, stride 1, pad 1 (-> 8x64x56x56, 1.85 GFLOP, so the CPU
 * reference costs the same). Measured on the H200 machine with cuDNN 9.14
 * (docs/verification.md): for TF32 the first layer (3 input channels) ran
 * with DEFAULT_MATH although TENSOR_OP_MATH was asked for, the res2 layer
 * with TENSOR_OP_MATH (27.9 and 29.7 TFLOP/s in two runs). For FP16,
 * cuDNN's own choice (the fastest algorithm its search measured) varies
 * from run to run on either layer: the first layer ran once with
 * TENSOR_OP_MATH (32.3 TFLOP/s) and once with DEFAULT_MATH (18.6), so the
 * report names the math that ran rather than assume it. */
void cdd_gpu_bench_defaults_for(struct cdd_gpu_bench_opts *o, int math);

struct cdd_gpu_bench_result {
    int math;                   /* enum cdd_bench_math that ran */
    struct cdd_conv_shape shape;
    int out_h, out_w;
    double flops;               /* per forward pass */
    int algo, math_type;        /* as in cdd_gpu_conv_result */
    size_t workspace;
    int gpu_runs, cpu_runs;
    double gpu_ms, gpu_ms_min, gpu_ms_max; /* median, fastest, slowest */
    double cpu_ms, cpu_ms_min;  /* median, fastest; single-threaded */
    double gpu_tflops;          /* flops / median GPU time */
    double cpu_gflops;          /* flops / median CPU time */
    double speedup;             /* cpu_ms / gpu_ms */
    int ran;                    /* output compared with the CPU result */
    int accurate;               /* max_rel_err <= tolerance */
    int fast;                   /* speedup >= min_speedup */
    int pass;                   /* accurate and fast */
    double max_rel_err, max_abs_err, tolerance, min_speedup;
};

/* Time cuDNN's fastest algorithm for opts->shape in opts->math
 * (cudnnFindConvolutionForwardAlgorithm; among FMA-math algorithms for
 * FP32, tensor-op ones allowed otherwise) against the tool's CPU reference
 * on the same inputs (rounded to binary16 first for FP16), and check the GPU
 * output against the CPU's, then the speed-up against opts->min_speedup.
 * Polls cdd_cancelled() between runs. Errors as cdd_gpu_conv_check (a wrong
 * result, or a speed-up below the minimum, is CDD_E_CHECK with res filled),
 * plus CDD_E_USAGE for an invalid shape or math and CDD_E_INTERRUPTED. */
int cdd_gpu_bench(struct cdd_gpu_env *g, struct cdd_lib *cudnn,
                  const struct cdd_gpu_bench_opts *opts,
                  struct cdd_gpu_bench_result *res);

#endif
