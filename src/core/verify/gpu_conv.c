/* verify's gpu and bench layers, cuDNN side (gpu.h): cuDNN's legacy
 * convolution API called through function pointers resolved from the
 * library loaded by absolute path, one convolution compared with a CPU
 * reference, and the benchmark. The driver side (loading, device, memory)
 * is gpu_driver.c, shared through gpu_int.h. ABI notes: see gpu_driver.c;
 * cuDNN enums are passed as int (they are int-sized on every ABI we build
 * for); cudnnConvolutionFwdAlgoPerf_t is {algo, status, float time, size_t
 * memory, determinism, mathType, int reserved[3]}, 48 bytes on 64-bit
 * hosts, the same in cuDNN 7.x, 8.x and 9.x. */
#include "cdd/gpu.h"
#include "gpu_int.h"

#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "loaddiag.h"
#include "cdd/loader.h"
#include "cdd/sys.h"
#include "cdd/compat.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- cuDNN legacy API -------------------------------------------------- */

typedef int cudnnStatus_t;
typedef void *cudnnHandle_t;
typedef void *cudnnTensorDescriptor_t;
typedef void *cudnnFilterDescriptor_t;
typedef void *cudnnConvolutionDescriptor_t;

#define CUDNN_STATUS_SUCCESS 0
#define CUDNN_TENSOR_NCHW 0
#define CUDNN_DATA_FLOAT 0
#define CUDNN_DATA_HALF 2
#define CUDNN_CROSS_CORRELATION 1
#define CUDNN_DEFAULT_MATH 0
#define CUDNN_TENSOR_OP_MATH 1
#define CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION 2
#define CUDNN_FMA_MATH 3
#define CUDNN_FWD_ALGO_IMPLICIT_GEMM 0 /* supports every shape, no workspace */
#define MAX_PERF 16

struct dnn_perf { /* cudnnConvolutionFwdAlgoPerf_t */
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
};
_Static_assert(sizeof(size_t) != 8 ||
                   (offsetof(struct dnn_perf, memory) == 16 &&
                    offsetof(struct dnn_perf, mathType) == 28 &&
                    sizeof(struct dnn_perf) == 48),
               "cudnnConvolutionFwdAlgoPerf_t layout");

typedef size_t (*pfn_cudnnGetVersion)(void);
typedef const char *(*pfn_cudnnGetErrorString)(cudnnStatus_t);
typedef cudnnStatus_t (*pfn_cudnnCreate)(cudnnHandle_t *);
typedef cudnnStatus_t (*pfn_cudnnDestroy)(cudnnHandle_t);
typedef cudnnStatus_t (*pfn_cudnnCreateTensorDescriptor)(
    cudnnTensorDescriptor_t *);
typedef cudnnStatus_t (*pfn_cudnnDestroyTensorDescriptor)(
    cudnnTensorDescriptor_t);
typedef cudnnStatus_t (*pfn_cudnnSetTensor4dDescriptor)(
    cudnnTensorDescriptor_t, int format, int dtype, int n, int c, int h, int w);
typedef cudnnStatus_t (*pfn_cudnnCreateFilterDescriptor)(
    cudnnFilterDescriptor_t *);
typedef cudnnStatus_t (*pfn_cudnnDestroyFilterDescriptor)(
    cudnnFilterDescriptor_t);
/* Note the order: data type before format, unlike the tensor call. */
typedef cudnnStatus_t (*pfn_cudnnSetFilter4dDescriptor)(
    cudnnFilterDescriptor_t, int dtype, int format, int k, int c, int h, int w);
typedef cudnnStatus_t (*pfn_cudnnCreateConvolutionDescriptor)(
    cudnnConvolutionDescriptor_t *);
typedef cudnnStatus_t (*pfn_cudnnDestroyConvolutionDescriptor)(
    cudnnConvolutionDescriptor_t);
typedef cudnnStatus_t (*pfn_cudnnSetConvolution2dDescriptor)(
    cudnnConvolutionDescriptor_t, int pad_h, int pad_w, int u, int v,
    int dilation_h, int dilation_w, int mode, int compute_type);
typedef cudnnStatus_t (*pfn_cudnnSetConvolutionMathType)(
    cudnnConvolutionDescriptor_t, int math_type);
typedef cudnnStatus_t (*pfn_cudnnGetConvolution2dForwardOutputDim)(
    cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t,
    cudnnFilterDescriptor_t, int *n, int *c, int *h, int *w);
typedef cudnnStatus_t (*pfn_cudnnGetConvolutionForwardAlgorithmMaxCount)(
    cudnnHandle_t, int *);
typedef cudnnStatus_t (*pfn_cudnnGetConvolutionForwardAlgorithm_v7)(
    cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
    cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int requested,
    int *returned, struct dnn_perf *);
typedef pfn_cudnnGetConvolutionForwardAlgorithm_v7
    pfn_cudnnFindConvolutionForwardAlgorithm;
typedef cudnnStatus_t (*pfn_cudnnGetConvolutionForwardWorkspaceSize)(
    cudnnHandle_t, cudnnTensorDescriptor_t, cudnnFilterDescriptor_t,
    cudnnConvolutionDescriptor_t, cudnnTensorDescriptor_t, int algo, size_t *);
typedef cudnnStatus_t (*pfn_cudnnConvolutionForward)(
    cudnnHandle_t, const void *alpha, cudnnTensorDescriptor_t, const void *x,
    cudnnFilterDescriptor_t, const void *w, cudnnConvolutionDescriptor_t,
    int algo, void *workspace, size_t workspace_size, const void *beta,
    cudnnTensorDescriptor_t, void *y);

struct dnn_api {
    pfn_cudnnGetVersion cudnnGetVersion;         /* optional */
    pfn_cudnnGetErrorString cudnnGetErrorString; /* optional */
    pfn_cudnnCreate cudnnCreate;
    pfn_cudnnDestroy cudnnDestroy;
    pfn_cudnnCreateTensorDescriptor cudnnCreateTensorDescriptor;
    pfn_cudnnDestroyTensorDescriptor cudnnDestroyTensorDescriptor;
    pfn_cudnnSetTensor4dDescriptor cudnnSetTensor4dDescriptor;
    pfn_cudnnCreateFilterDescriptor cudnnCreateFilterDescriptor;
    pfn_cudnnDestroyFilterDescriptor cudnnDestroyFilterDescriptor;
    pfn_cudnnSetFilter4dDescriptor cudnnSetFilter4dDescriptor;
    pfn_cudnnCreateConvolutionDescriptor cudnnCreateConvolutionDescriptor;
    pfn_cudnnDestroyConvolutionDescriptor cudnnDestroyConvolutionDescriptor;
    pfn_cudnnSetConvolution2dDescriptor cudnnSetConvolution2dDescriptor;
    pfn_cudnnSetConvolutionMathType cudnnSetConvolutionMathType; /* opt. */
    pfn_cudnnGetConvolution2dForwardOutputDim
        cudnnGetConvolution2dForwardOutputDim;
    pfn_cudnnGetConvolutionForwardAlgorithmMaxCount
        cudnnGetConvolutionForwardAlgorithmMaxCount; /* optional */
    pfn_cudnnGetConvolutionForwardAlgorithm_v7
        cudnnGetConvolutionForwardAlgorithm_v7; /* optional */
    pfn_cudnnFindConvolutionForwardAlgorithm
        cudnnFindConvolutionForwardAlgorithm; /* optional */
    pfn_cudnnGetConvolutionForwardWorkspaceSize
        cudnnGetConvolutionForwardWorkspaceSize;
    pfn_cudnnConvolutionForward cudnnConvolutionForward;
};

const char *cdd_cudnn_algo_name(int algo)
{
    static const char *const names[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
        "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED",
    };
    if (algo >= 0 && algo < (int)(sizeof names / sizeof names[0]))
        return names[algo];
    return "unknown";
}

const char *cdd_cudnn_math_name(int math_type)
{
    switch (math_type) {
    case -1:
        return "default (no math type API)";
    case CUDNN_DEFAULT_MATH:
        return "DEFAULT_MATH";
    case CUDNN_TENSOR_OP_MATH:
        return "TENSOR_OP_MATH";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
        return "TENSOR_OP_MATH_ALLOW_CONVERSION";
    case CUDNN_FMA_MATH:
        return "FMA_MATH";
    default:
        return "unknown";
    }
}

/* One convolution set up on the device: handle, descriptors, buffers and
 * the algorithm chosen. Shared by the check and the benchmark. */
struct conv_run {
    struct cdd_gpu_env *g;
    struct dnn_api dnn;
    const char *lib_path;
    struct cdd_conv_shape s;
    int oh, ow;
    size_t nx, nw, ny;
    int tc;     /* tensor-op math wanted (TF32, FP16) */
    int dtype;  /* CUDNN_DATA_FLOAT or CUDNN_DATA_HALF */
    size_t esize; /* bytes per element on the device */
    cudnnHandle_t h;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    CUdeviceptr dx, dw, dy, dws;
    size_t ws_size;
    int algo;
    int math; /* set on the descriptor; -1 when there is no math type API */
};

static const char *dnn_errstr(const struct conv_run *cr, cudnnStatus_t st)
{
    const char *s = NULL;
    if (cr->dnn.cudnnGetErrorString)
        s = cr->dnn.cudnnGetErrorString(st);
    return s && *s ? s : "cuDNN error";
}

static int dnn_fail(const struct conv_run *cr, const char *call,
                    cudnnStatus_t st)
{
    return cdd_fail(CDD_E_CHECK, cr->lib_path, 0, "%s failed: %s (status %d)",
                    call, dnn_errstr(cr, st), st);
}

#define DNN_NEED(field)                                                        \
    (cr->dnn.field =                                                           \
         (pfn_##field)cdd_gpu_resolve(cudnn, #field, NULL, 1, &missing))
#define DNN_MAYBE(field)                                                       \
    (cr->dnn.field =                                                           \
         (pfn_##field)cdd_gpu_resolve(cudnn, #field, NULL, 0, &missing))

static int dnn_resolve(struct conv_run *cr, struct cdd_lib *cudnn)
{
    const char *missing = NULL;
    DNN_MAYBE(cudnnGetVersion);
    DNN_MAYBE(cudnnGetErrorString);
    DNN_NEED(cudnnCreate);
    DNN_NEED(cudnnDestroy);
    DNN_NEED(cudnnCreateTensorDescriptor);
    DNN_NEED(cudnnDestroyTensorDescriptor);
    DNN_NEED(cudnnSetTensor4dDescriptor);
    DNN_NEED(cudnnCreateFilterDescriptor);
    DNN_NEED(cudnnDestroyFilterDescriptor);
    DNN_NEED(cudnnSetFilter4dDescriptor);
    DNN_NEED(cudnnCreateConvolutionDescriptor);
    DNN_NEED(cudnnDestroyConvolutionDescriptor);
    DNN_NEED(cudnnSetConvolution2dDescriptor);
    DNN_MAYBE(cudnnSetConvolutionMathType);
    DNN_NEED(cudnnGetConvolution2dForwardOutputDim);
    DNN_MAYBE(cudnnGetConvolutionForwardAlgorithmMaxCount);
    DNN_MAYBE(cudnnGetConvolutionForwardAlgorithm_v7);
    DNN_MAYBE(cudnnFindConvolutionForwardAlgorithm);
    DNN_NEED(cudnnGetConvolutionForwardWorkspaceSize);
    DNN_NEED(cudnnConvolutionForward);
    if (missing)
        return cdd_fail(CDD_E_CHECK, cr->lib_path, 0,
                        "the cuDNN library does not export %s", missing);
    return 0;
}

static void dev_free(struct cdd_gpu_env *g, CUdeviceptr *p)
{
    if (*p)
        g->cu.cuMemFree(*p);
    *p = 0;
}

static void run_teardown(struct conv_run *cr)
{
    struct cdd_gpu_env *g = cr->g;
    if (cr->h && g)
        g->cu.cuCtxSynchronize(); /* nothing may still use the buffers */
    if (g) {
        dev_free(g, &cr->dws);
        dev_free(g, &cr->dy);
        dev_free(g, &cr->dw);
        dev_free(g, &cr->dx);
    }
    if (cr->cd)
        cr->dnn.cudnnDestroyConvolutionDescriptor(cr->cd);
    if (cr->wd)
        cr->dnn.cudnnDestroyFilterDescriptor(cr->wd);
    if (cr->yd)
        cr->dnn.cudnnDestroyTensorDescriptor(cr->yd);
    if (cr->xd)
        cr->dnn.cudnnDestroyTensorDescriptor(cr->xd);
    if (cr->h)
        cr->dnn.cudnnDestroy(cr->h);
    cr->cd = cr->wd = cr->yd = cr->xd = cr->h = NULL;
}

static int dev_alloc(struct cdd_gpu_env *g, CUdeviceptr *p, size_t bytes,
                     const char *what)
{
    CUresult res = g->cu.cuMemAlloc(p, bytes ? bytes : 1);
    if (res != CUDA_SUCCESS) {
        *p = 0;
        char call[96]; /* fixed: a size and a constant buffer name */
        snprintf(call, sizeof call, "cuMemAlloc(%zu bytes for %s)", bytes,
                 what);
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, call, res);
    }
    return 0;
}

static void *dptr(CUdeviceptr p)
{
    return (void *)(uintptr_t)p;
}

/* y is filled with this before the convolution, so that an output cuDNN
 * never wrote cannot pass. Finite on purpose: with beta = 0 cuDNN does not
 * read y, but an engine that computed beta * y literally would turn a NaN
 * fill into a false failure. */
#define SENTINEL 1.0e6f
#define SENTINEL_HALF 3.0e4f /* binary16 tops out at 65504 */

/* Everything up to, not including, the choice of algorithm: handle,
 * descriptors (with the math type), device buffers holding x and w, and y
 * filled with SENTINEL. */
/* Host floats to the device in the run's data type. */
static int upload(struct conv_run *cr, CUdeviceptr to, const float *v,
                  size_t n)
{
    void *buf = (void *)v;
    uint16_t *h = NULL;
    if (cr->dtype == CUDNN_DATA_HALF) {
        if (!(h = malloc(n * sizeof *h)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        for (size_t i = 0; i < n; i++)
            h[i] = cdd_half_from_float(v[i]);
        buf = h;
    }
    CUresult res = cr->g->cu.cuMemcpyHtoD(to, buf, n * cr->esize);
    free(h);
    if (res != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(cr->g, CDD_E_CHECK, "cuMemcpyHtoD", res);
    return 0;
}

/* y from the device, as floats. */
static int download_y(struct conv_run *cr, float *y)
{
    uint16_t *h = NULL;
    void *buf = y;
    if (cr->dtype == CUDNN_DATA_HALF) {
        if (!(h = malloc(cr->ny * sizeof *h)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        buf = h;
    }
    CUresult res = cr->g->cu.cuMemcpyDtoH(buf, cr->dy, cr->ny * cr->esize);
    if (res == CUDA_SUCCESS && h)
        for (size_t i = 0; i < cr->ny; i++)
            y[i] = cdd_half_to_float(h[i]);
    free(h);
    if (res != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(cr->g, CDD_E_CHECK, "cuMemcpyDtoH", res);
    return 0;
}

static int run_setup(struct conv_run *cr, struct cdd_gpu_env *g,
                     struct cdd_lib *cudnn, const struct cdd_conv_shape *s,
                     int mode, const float *x, const float *w)
{
    cudnnStatus_t st;
    CUresult res;
    float *fill = NULL;
    int r;
    cr->g = g;
    cr->s = *s;
    cr->tc = mode != CDD_BENCH_FP32;
    cr->dtype = mode == CDD_BENCH_FP16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
    cr->esize = mode == CDD_BENCH_FP16 ? 2 : sizeof(float);
    cr->lib_path = cdd_lib_path(cudnn);
    if ((r = cdd_conv_out_dims(s, &cr->oh, &cr->ow)) != 0)
        return r;
    cr->nx = cdd_conv_x_count(s);
    cr->nw = cdd_conv_w_count(s);
    cr->ny = cdd_conv_y_count(s);
    if ((r = dnn_resolve(cr, cudnn)) != 0)
        return r;
    /* The context may have been made current on another thread. */
    if ((res = g->cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuCtxSetCurrent", res);
    if ((st = cr->dnn.cudnnCreate(&cr->h)) != CUDNN_STATUS_SUCCESS) {
        cr->h = NULL;
        return dnn_fail(cr, "cudnnCreate", st);
    }
    if ((st = cr->dnn.cudnnCreateTensorDescriptor(&cr->xd)) != 0 ||
        (st = cr->dnn.cudnnCreateTensorDescriptor(&cr->yd)) != 0)
        return dnn_fail(cr, "cudnnCreateTensorDescriptor", st);
    if ((st = cr->dnn.cudnnCreateFilterDescriptor(&cr->wd)) != 0)
        return dnn_fail(cr, "cudnnCreateFilterDescriptor", st);
    if ((st = cr->dnn.cudnnCreateConvolutionDescriptor(&cr->cd)) != 0)
        return dnn_fail(cr, "cudnnCreateConvolutionDescriptor", st);
    if ((st = cr->dnn.cudnnSetTensor4dDescriptor(cr->xd, CUDNN_TENSOR_NCHW,
                                                 cr->dtype, s->n, s->c,
                                                 s->h, s->w)) != 0)
        return dnn_fail(cr, "cudnnSetTensor4dDescriptor(x)", st);
    if ((st = cr->dnn.cudnnSetFilter4dDescriptor(cr->wd, cr->dtype,
                                                 CUDNN_TENSOR_NCHW, s->k, s->c,
                                                 s->r, s->s)) != 0)
        return dnn_fail(cr, "cudnnSetFilter4dDescriptor", st);
    if ((st = cr->dnn.cudnnSetConvolution2dDescriptor(
             cr->cd, s->pad_h, s->pad_w, s->stride_h, s->stride_w, 1, 1,
             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) != 0)
        return dnn_fail(cr, "cudnnSetConvolution2dDescriptor", st);
    /* FMA_MATH (cuDNN >= 8.0) keeps TF32 tensor cores out: on Ampere and
     * later DEFAULT_MATH lets cuDNN round FP32 inputs to TF32 (10-bit
     * mantissa), which would make a 1e-3 check test the rounding instead of
     * the library. TENSOR_OP_MATH asks for the tensor cores: TF32 on FP32
     * data, FP16 on half data (accumulating in the FLOAT compute type set
     * above). */
    cr->math = -1;
    if (cr->dnn.cudnnSetConvolutionMathType) {
        int want = cr->tc ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
        if ((st = cr->dnn.cudnnSetConvolutionMathType(cr->cd, want)) != 0)
            return dnn_fail(cr, "cudnnSetConvolutionMathType", st);
        cr->math = want;
    }
    int n, c, h, wd;
    if ((st = cr->dnn.cudnnGetConvolution2dForwardOutputDim(
             cr->cd, cr->xd, cr->wd, &n, &c, &h, &wd)) != 0)
        return dnn_fail(cr, "cudnnGetConvolution2dForwardOutputDim", st);
    if (n != s->n || c != s->k || h != cr->oh || wd != cr->ow)
        return cdd_fail(CDD_E_CHECK, cr->lib_path, 0,
                        "cudnnGetConvolution2dForwardOutputDim gives "
                        "%dx%dx%dx%d, expected %dx%dx%dx%d",
                        n, c, h, wd, s->n, s->k, cr->oh, cr->ow);
    if ((st = cr->dnn.cudnnSetTensor4dDescriptor(cr->yd, CUDNN_TENSOR_NCHW,
                                                 cr->dtype, n, c, h,
                                                 wd)) != 0)
        return dnn_fail(cr, "cudnnSetTensor4dDescriptor(y)", st);
    if ((r = dev_alloc(g, &cr->dx, cr->nx * cr->esize, "input")) ||
        (r = dev_alloc(g, &cr->dw, cr->nw * cr->esize, "filter")) ||
        (r = dev_alloc(g, &cr->dy, cr->ny * cr->esize, "output")))
        return r;
    if ((r = upload(cr, cr->dx, x, cr->nx)) || (r = upload(cr, cr->dw, w, cr->nw)))
        return r;
    if (!(fill = malloc(cr->ny * sizeof(float))))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < cr->ny; i++)
        fill[i] = cr->dtype == CUDNN_DATA_HALF ? SENTINEL_HALF : SENTINEL;
    r = upload(cr, cr->dy, fill, cr->ny);
    free(fill);
    return r;
}

static int run_forward(struct conv_run *cr)
{
    const float alpha = 1.0f, beta = 0.0f;
    cudnnStatus_t st = cr->dnn.cudnnConvolutionForward(
        cr->h, &alpha, cr->xd, dptr(cr->dx), cr->wd, dptr(cr->dw), cr->cd,
        cr->algo, cr->ws_size ? dptr(cr->dws) : NULL, cr->ws_size, &beta,
        cr->yd, dptr(cr->dy));
    if (st != CUDNN_STATUS_SUCCESS) {
        char call[96]; /* fixed: an API call and an algorithm name */
        snprintf(call, sizeof call, "cudnnConvolutionForward(%s)",
                 cdd_cudnn_algo_name(cr->algo));
        return dnn_fail(cr, call, st);
    }
    return 0;
}

/* Wait for the device and surface an asynchronous kernel failure with the
 * call it belongs to. */
static int run_sync(struct conv_run *cr)
{
    CUresult res = cr->g->cu.cuCtxSynchronize();
    if (res != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(cr->g, CDD_E_CHECK,
                       "cuCtxSynchronize after cudnnConvolutionForward", res);
    return 0;
}

static int tf32_math(int m)
{
    return m == CUDNN_TENSOR_OP_MATH ||
           m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/* Try the algorithm: set its math type, size and allocate its workspace,
 * run it once. 0 when it ran. */
static int run_try(struct conv_run *cr, int algo, int math)
{
    struct cdd_gpu_env *g = cr->g;
    cudnnStatus_t st;
    int r;
    dev_free(g, &cr->dws);
    cr->ws_size = 0;
    cr->algo = algo;
    /* With TF32 allowed, cuDNN wants the math type its perf result was
     * measured with set before the call; with FMA only, the descriptor
     * stays at FMA_MATH whatever the perf result says. */
    if (cr->tc && cr->dnn.cudnnSetConvolutionMathType && math >= 0 &&
        math != cr->math) {
        if ((st = cr->dnn.cudnnSetConvolutionMathType(cr->cd, math)) != 0)
            return dnn_fail(cr, "cudnnSetConvolutionMathType", st);
        cr->math = math;
    }
    size_t ws = 0;
    if ((st = cr->dnn.cudnnGetConvolutionForwardWorkspaceSize(
             cr->h, cr->xd, cr->wd, cr->cd, cr->yd, algo, &ws)) != 0) {
        char call[96]; /* fixed: an API call and an algorithm name */
        snprintf(call, sizeof call, "cudnnGetConvolutionForwardWorkspaceSize(%s)",
                 cdd_cudnn_algo_name(algo));
        return dnn_fail(cr, call, st);
    }
    if (ws && (r = dev_alloc(g, &cr->dws, ws, "workspace")) != 0)
        return r;
    cr->ws_size = ws;
    if ((r = run_forward(cr)) != 0)
        return r;
    return run_sync(cr);
}

/* Choose and run an algorithm: cuDNN's ranking (use_find: measured by
 * cudnnFindConvolutionForwardAlgorithm; else the heuristic _v7 query; each
 * standing in for the other where one is missing), skipping failed entries and, unless TF32 is
 * allowed, tensor-op ones; then IMPLICIT_GEMM, which supports every shape
 * without workspace. The first that runs is kept. */
static int run_choose(struct conv_run *cr, int use_find)
{
    struct dnn_perf perf[MAX_PERF];
    int cand[MAX_PERF + 1], cmath[MAX_PERF + 1], nc = 0, got = 0;
    cudnnStatus_t st = 0;
    const char *how = NULL;
    pfn_cudnnGetConvolutionForwardAlgorithm_v7 rank = NULL;
    if (use_find && cr->dnn.cudnnFindConvolutionForwardAlgorithm) {
        rank = cr->dnn.cudnnFindConvolutionForwardAlgorithm;
        how = "cudnnFindConvolutionForwardAlgorithm";
    } else if (cr->dnn.cudnnGetConvolutionForwardAlgorithm_v7) {
        rank = cr->dnn.cudnnGetConvolutionForwardAlgorithm_v7;
        how = "cudnnGetConvolutionForwardAlgorithm_v7";
    } else if (cr->dnn.cudnnFindConvolutionForwardAlgorithm) {
        rank = cr->dnn.cudnnFindConvolutionForwardAlgorithm;
        how = "cudnnFindConvolutionForwardAlgorithm";
    }
    if (rank) {
        int want = MAX_PERF, maxc = 0;
        if (cr->dnn.cudnnGetConvolutionForwardAlgorithmMaxCount &&
            cr->dnn.cudnnGetConvolutionForwardAlgorithmMaxCount(cr->h,
                                                                &maxc) == 0 &&
            maxc > 0 && maxc < want)
            want = maxc;
        memset(perf, 0, sizeof perf);
        st = rank(cr->h, cr->xd, cr->wd, cr->cd, cr->yd, want, &got, perf);
        if (st != CUDNN_STATUS_SUCCESS)
            return dnn_fail(cr, how, st);
        if (got < 0 || got > want)
            got = 0;
    }
    for (int i = 0; i < got; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS)
            continue;
        if (!cr->tc && tf32_math(perf[i].mathType))
            continue;
        cand[nc] = perf[i].algo;
        cmath[nc++] = perf[i].mathType;
    }
    int have_gemm = 0;
    for (int i = 0; i < nc; i++)
        have_gemm |= cand[i] == CUDNN_FWD_ALGO_IMPLICIT_GEMM;
    if (!have_gemm) {
        cand[nc] = CUDNN_FWD_ALGO_IMPLICIT_GEMM;
        cmath[nc++] = cr->tc ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    }
    int r = 0;
    for (int i = 0; i < nc; i++) {
        if (cdd_cancelled())
            return cdd_fail(CDD_E_INTERRUPTED, NULL, 0, NULL);
        if ((r = run_try(cr, cand[i], cmath[i])) == 0)
            return 0;
    }
    /* Every candidate failed: the last failure says why. */
    return r;
}

/* Fixed-seed data in [-1, 1): splitmix64, so every run and every platform
 * convolves the same numbers. */
static void fill_random(float *v, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        v[i] = (float)((double)(z >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
    }
}

/* The compare scale: conv(|x|, |w|), see cdd_conv_compare. */
static int ref_scale(const struct cdd_conv_shape *s, const float *x,
                     const float *w, float *scale)
{
    size_t nx = cdd_conv_x_count(s), nw = cdd_conv_w_count(s);
    float *ax = malloc(nx * sizeof *ax), *aw = malloc(nw * sizeof *aw);
    int r;
    if (!ax || !aw) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    for (size_t i = 0; i < nx; i++)
        ax[i] = x[i] < 0 ? -x[i] : x[i];
    for (size_t i = 0; i < nw; i++)
        aw[i] = w[i] < 0 ? -w[i] : w[i];
    r = cdd_conv_ref_forward(s, ax, aw, scale);
out:
    free(ax);
    free(aw);
    return r;
}

static int need_device(struct cdd_gpu_env *g, struct cdd_lib *cudnn)
{
    if (!g || !g->ctx_retained)
        return cdd_fail(CDD_E_USAGE, NULL, 0,
                        "no CUDA device opened (cdd_gpu_env_device)");
    if (!cudnn)
        return cdd_fail(CDD_E_USAGE, NULL, 0, "no cuDNN library given");
    return 0;
}

static int mismatch(const char *what, const struct conv_run *cr, double err,
                    double tol, size_t worst, const float *got,
                    const float *ref)
{
    size_t plane = (size_t)cr->oh * (size_t)cr->ow;
    size_t chw = (size_t)cr->s.k * plane;
    return cdd_fail(CDD_E_CHECK, cr->lib_path, 0,
                    "%s: cuDNN result differs from the CPU reference: max "
                    "relative error %.3g > %.0e (algorithm %s, %s); worst at "
                    "n=%zu k=%zu y=%zu x=%zu: GPU %.9g, CPU %.9g",
                    what, err, tol, cdd_cudnn_algo_name(cr->algo),
                    cdd_cudnn_math_name(cr->math), worst / chw,
                    worst % chw / plane, worst % plane / (size_t)cr->ow,
                    worst % (size_t)cr->ow, (double)got[worst],
                    (double)ref[worst]);
}

int cdd_gpu_conv_check(struct cdd_gpu_env *g, struct cdd_lib *cudnn,
                       struct cdd_gpu_conv_result *res)
{
    static const struct cdd_conv_shape shape = {
        .n = 1, .c = 3, .h = 32, .w = 32, .k = 16, .r = 3, .s = 3,
        .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1,
    };
    struct conv_run cr = {0};
    float *x = NULL, *w = NULL, *y = NULL, *ref = NULL, *scale = NULL;
    int r;
    memset(res, 0, sizeof *res);
    res->tolerance = CDD_CONV_CHECK_TOL;
    res->math_type = -1;
    if ((r = need_device(g, cudnn)) != 0)
        return r;
    size_t nx = cdd_conv_x_count(&shape), nw = cdd_conv_w_count(&shape),
           ny = cdd_conv_y_count(&shape);
    x = malloc(nx * sizeof *x);
    w = malloc(nw * sizeof *w);
    y = malloc(ny * sizeof *y);
    ref = malloc(ny * sizeof *ref);
    scale = malloc(ny * sizeof *scale);
    if (!x || !w || !y || !ref || !scale) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    fill_random(x, nx, 1);
    fill_random(w, nw, 2);
    r = run_setup(&cr, g, cudnn, &shape, CDD_BENCH_FP32, x, w);
    if (cr.dnn.cudnnGetVersion)
        res->cudnn_version = cr.dnn.cudnnGetVersion();
    res->math_type = cr.math;
    if (r)
        goto out;
    res->out_n = shape.n;
    res->out_c = shape.k;
    res->out_h = cr.oh;
    res->out_w = cr.ow;
    if ((r = run_choose(&cr, 0)) != 0)
        goto out;
    res->algo = cr.algo;
    res->math_type = cr.math;
    res->workspace = cr.ws_size;
    CUresult cres = g->cu.cuMemcpyDtoH(y, cr.dy, ny * sizeof *y);
    if (cres != CUDA_SUCCESS) {
        r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuMemcpyDtoH", cres);
        goto out;
    }
    if ((r = cdd_conv_ref_forward(&shape, x, w, ref)) != 0 ||
        (r = ref_scale(&shape, x, w, scale)) != 0)
        goto out;
    cdd_conv_compare(y, ref, scale, ny, &res->max_rel_err, &res->max_abs_err,
                     &res->worst_index);
    res->ran = 1;
    res->pass = res->max_rel_err <= res->tolerance;
    if (!res->pass)
        r = mismatch("convolution check", &cr, res->max_rel_err,
                     res->tolerance, res->worst_index, y, ref);
out:
    run_teardown(&cr);
    free(x);
    free(w);
    free(y);
    free(ref);
    free(scale);
    return r;
}

void cdd_gpu_bench_defaults(struct cdd_gpu_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    o->shape = (struct cdd_conv_shape){
        .n = 8, .c = 3, .h = 224, .w = 224, .k = 64, .r = 7, .s = 7,
        .pad_h = 3, .pad_w = 3, .stride_h = 2, .stride_w = 2,
    };
    o->warmup = 3;
    o->gpu_runs = 20;
    o->cpu_runs = 3;
    o->math = CDD_BENCH_FP32;
    o->min_speedup = CDD_BENCH_MIN_SPEEDUP;
}

void cdd_gpu_bench_defaults_for(struct cdd_gpu_bench_opts *o, int math)
{
    cdd_gpu_bench_defaults(o);
    o->math = math;
    if (math == CDD_BENCH_TF32)
        o->shape = (struct cdd_conv_shape){
            .n = 8, .c = 64, .h = 56, .w = 56, .k = 64, .r = 3, .s = 3,
            .pad_h = 1, .pad_w = 1, .stride_h = 1, .stride_w = 1,
        };
}

const char *cdd_bench_math_name(int math)
{
    switch (math) {
    case CDD_BENCH_FP32: return "FP32";
    case CDD_BENCH_TF32: return "TF32";
    case CDD_BENCH_FP16: return "FP16";
    default: return "unknown";
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts t. */
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int cdd_gpu_bench(struct cdd_gpu_env *g, struct cdd_lib *cudnn,
                  const struct cdd_gpu_bench_opts *opts,
                  struct cdd_gpu_bench_result *res)
{
    struct conv_run cr = {0};
    float *x = NULL, *w = NULL, *y = NULL, *ref = NULL, *scale = NULL;
    double *gt = NULL, *ct = NULL;
    CUevent *ev = NULL;
    int nev = 0;
    CUresult cres;
    int r;
    memset(res, 0, sizeof *res);
    res->shape = opts->shape;
    res->math = opts->math;
    res->math_type = -1;
    res->min_speedup = opts->min_speedup;
    res->tolerance = opts->math == CDD_BENCH_TF32   ? CDD_CONV_TF32_TOL
                     : opts->math == CDD_BENCH_FP16 ? CDD_CONV_FP16_TOL
                                                    : CDD_CONV_CHECK_TOL;
    if (opts->math < 0 || opts->math >= CDD_BENCH_N_MATH)
        return cdd_fail(CDD_E_USAGE, NULL, 0, "unknown benchmark math %d",
                        opts->math);
    if ((r = need_device(g, cudnn)) != 0)
        return r;
    if ((r = cdd_conv_out_dims(&opts->shape, &res->out_h, &res->out_w)) != 0)
        return r;
    const int gpu_runs = opts->gpu_runs > 0 ? opts->gpu_runs : 1;
    const int cpu_runs = opts->cpu_runs > 0 ? opts->cpu_runs : 1;
    const int warmup = opts->warmup > 0 ? opts->warmup : 0;
    size_t nx = cdd_conv_x_count(&opts->shape),
           nw = cdd_conv_w_count(&opts->shape),
           ny = cdd_conv_y_count(&opts->shape);
    res->flops = cdd_conv_flops(&opts->shape);
    x = malloc(nx * sizeof *x);
    w = malloc(nw * sizeof *w);
    y = malloc(ny * sizeof *y);
    ref = malloc(ny * sizeof *ref);
    scale = malloc(ny * sizeof *scale);
    gt = malloc((size_t)gpu_runs * sizeof *gt);
    ct = malloc((size_t)cpu_runs * sizeof *ct);
    if (!x || !w || !y || !ref || !scale || !gt || !ct) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, "benchmark buffers");
        goto out;
    }
    fill_random(x, nx, 3);
    fill_random(w, nw, 4);
    /* FP16: both sides convolve the same binary16 values, so the compare
     * measures cuDNN, not the rounding of its inputs. */
    if (opts->math == CDD_BENCH_FP16) {
        for (size_t i = 0; i < nx; i++)
            x[i] = cdd_half_to_float(cdd_half_from_float(x[i]));
        for (size_t i = 0; i < nw; i++)
            w[i] = cdd_half_to_float(cdd_half_from_float(w[i]));
    }

    /* GPU first: a failing library then fails fast, before the CPU runs. */
    r = run_setup(&cr, g, cudnn, &opts->shape, opts->math, x, w);
    res->math_type = cr.math;
    if (r || (r = run_choose(&cr, 1)) != 0)
        goto out;
    res->algo = cr.algo;
    res->math_type = cr.math;
    res->workspace = cr.ws_size;
    for (int i = 0; i < warmup; i++)
        if ((r = run_forward(&cr)) != 0)
            goto out;
    if ((r = run_sync(&cr)) != 0)
        goto out;
    /* A start and a stop event per run, all queued before waiting on any:
     * the host then stays ahead of the GPU, so a run's time is its kernels'
     * time and not the host's launch overhead (cuDNN 9 builds an execution
     * plan behind each legacy call). Events go on the legacy default stream
     * (0), the stream a cuDNN handle uses until cudnnSetStream. */
    if (!(ev = calloc((size_t)gpu_runs * 2, sizeof *ev))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    for (nev = 0; nev < gpu_runs * 2; nev++) {
        if ((cres = g->cu.cuEventCreate(&ev[nev], CU_EVENT_DEFAULT)) != 0) {
            r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuEventCreate", cres);
            goto out;
        }
    }
    for (int i = 0; i < gpu_runs; i++) {
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, NULL, 0, NULL);
            goto out;
        }
        if ((cres = g->cu.cuEventRecord(ev[2 * i], NULL)) != 0) {
            r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuEventRecord", cres);
            goto out;
        }
        if ((r = run_forward(&cr)) != 0)
            goto out;
        if ((cres = g->cu.cuEventRecord(ev[2 * i + 1], NULL)) != 0) {
            r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuEventRecord", cres);
            goto out;
        }
    }
    if ((cres = g->cu.cuEventSynchronize(ev[2 * gpu_runs - 1])) != 0) {
        r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuEventSynchronize", cres);
        goto out;
    }
    for (int i = 0; i < gpu_runs; i++) {
        float ms = 0;
        if ((cres = g->cu.cuEventElapsedTime(&ms, ev[2 * i],
                                             ev[2 * i + 1])) != 0) {
            r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuEventElapsedTime", cres);
            goto out;
        }
        gt[i] = ms;
    }
    if ((r = run_sync(&cr)) != 0 || (r = download_y(&cr, y)) != 0)
        goto out;
    res->gpu_runs = gpu_runs;
    res->gpu_ms = median(gt, gpu_runs);
    res->gpu_ms_min = gt[0];
    res->gpu_ms_max = gt[gpu_runs - 1];

    for (int i = 0; i < cpu_runs; i++) {
        double t0 = cdd_monotonic();
        if ((r = cdd_conv_ref_forward(&opts->shape, x, w, ref)) != 0)
            goto out;
        ct[i] = (cdd_monotonic() - t0) * 1e3;
    }
    res->cpu_runs = cpu_runs;
    res->cpu_ms = median(ct, cpu_runs);
    res->cpu_ms_min = ct[0];

    /* Guard the divisions against a clock too coarse to see a tiny run. */
    if (res->gpu_ms > 0)
        res->gpu_tflops = res->flops / (res->gpu_ms * 1e-3) / 1e12;
    if (res->cpu_ms > 0)
        res->cpu_gflops = res->flops / (res->cpu_ms * 1e-3) / 1e9;
    if (res->gpu_ms > 0)
        res->speedup = res->cpu_ms / res->gpu_ms;

    if ((r = ref_scale(&opts->shape, x, w, scale)) != 0)
        goto out;
    size_t worst = 0;
    cdd_conv_compare(y, ref, scale, ny, &res->max_rel_err, &res->max_abs_err,
                     &worst);
    res->ran = 1;
    res->accurate = res->max_rel_err <= res->tolerance;
    res->fast = opts->min_speedup <= 0 || res->speedup >= opts->min_speedup;
    res->pass = res->accurate && res->fast;
    char what[48]; /* fixed: a constant word and a math mode */
    snprintf(what, sizeof what, "benchmark (%s)",
             cdd_bench_math_name(opts->math));
    if (!res->accurate)
        r = mismatch(what, &cr, res->max_rel_err, res->tolerance, worst, y,
                     ref);
    else if (!res->fast)
        r = cdd_fail(CDD_E_CHECK, cr.lib_path, 0,
                     "benchmark (%s): GPU %.3f ms against the CPU reference's "
                     "%.1f ms is a speed-up of %.1fx, below the %.0fx that "
                     "shows cuDNN really running on the GPU (algorithm %s, "
                     "%s)", cdd_bench_math_name(opts->math), res->gpu_ms,
                     res->cpu_ms, res->speedup, opts->min_speedup,
                     cdd_cudnn_algo_name(cr.algo),
                     cdd_cudnn_math_name(cr.math));
out:
    for (int i = 0; i < nev; i++)
        if (ev[i])
            g->cu.cuEventDestroy(ev[i]);
    free(ev);
    run_teardown(&cr);
    free(x);
    free(w);
    free(y);
    free(ref);
    free(scale);
    free(gt);
    free(ct);
    return r;
}
