/* A fake cuDNN (build it as libcudnn.so.8) implementing the legacy
 * convolution API on the CPU, on the "device" memory of fake_cuda.c (which
 * is host memory), so that verify's gpu and bench layers run end to end
 * without a GPU. It is an independent implementation: float accumulation in
 * filter order as a GPU kernel would, true convolution (flipped filter) for
 * CUDNN_CONVOLUTION and cross-correlation for CUDNN_CROSS_CORRELATION, and
 * TF32 rounding of the inputs when an algorithm runs with tensor-op math on
 * FP32 data, and FP16 (binary16) tensors - x, w and y all CUDNN_DATA_HALF,
 * accumulated in float, y rounded to binary16 - so a caller that gets the
 * mode, the layout, the data type or the math type wrong sees the
 * difference.
 *
 * Algorithms offered (ranked as listed): with DEFAULT or TENSOR_OP math, a
 * tensor-op IMPLICIT_PRECOMP_GEMM first (what Ampere and later offer for FP32); then
 * IMPLICIT_PRECOMP_GEMM with the descriptor's math, which needs 4096 bytes of
 * workspace, and IMPLICIT_GEMM (none); WINOGRAD is listed as not supported.
 *
 * Environment knobs, read at each call:
 *   FAKE_CUDNN_CONV_CORRUPT=1   perturb one output element
 *   FAKE_CUDNN_CONV_CRASH=1     cudnnConvolutionForward dies of SIGSEGV,
 *                               on Windows an access violation (a cuDNN
 *                               that does not fit the driver)
 *   FAKE_CUDNN_CONV_HANG=1      cudnnConvolutionForward never returns (a
 *                               hung GPU)
 *   FAKE_CUDNN_CREATE_STATUS=N  cudnnCreate returns N
 *   FAKE_CUDNN_FAIL_ALGO=A      cudnnConvolutionForward(algo A) returns
 *                               CUDNN_STATUS_NOT_SUPPORTED
 *   FAKE_CUDNN_VERSION          cudnnGetVersion's answer (default 8500,
 *                               or -DFAKE_CUDNN_DEFAULT_VERSION=N)
 *   FAKE_CUDNN_CUDART           cudnnGetCudartVersion's (default 11060)
 * Built with -DFAKE_CUDNN_MINIMAL it lacks cudnnSetConvolutionMathType and
 * every algorithm query (cuDNN 7-era exports), so callers must fall back.
 * Test hooks: fake_cudnn_last_math(), fake_cudnn_last_algo(). */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L /* sleep() under -std=c11 */
#endif
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

typedef int cudnnStatus_t;

#define API __attribute__((visibility("default")))

#define S_SUCCESS 0
#define S_NOT_INITIALIZED 1
#define S_ALLOC_FAILED 2
#define S_BAD_PARAM 3
#define S_INTERNAL_ERROR 4
#define S_NOT_SUPPORTED 9

#define HANDLE_MAGIC 0x484e444cu
#define TENSOR_MAGIC 0x54454e53u
#define FILTER_MAGIC 0x46494c54u
#define CONV_MAGIC 0x434f4e56u

struct handle {
    unsigned magic;
};
struct tensor {
    unsigned magic;
    int set, n, c, h, w, dtype;
};
struct filter {
    unsigned magic;
    int set, k, c, h, w, dtype;
};

#define DT_FLOAT 0
#define DT_HALF 2
struct conv {
    unsigned magic;
    int set, pad_h, pad_w, u, v, mode, math;
};

struct perf { /* cudnnConvolutionFwdAlgoPerf_t */
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    int determinism;
    int mathType;
    int reserved[3];
};

static int last_math = -1, last_algo = -1;

API int fake_cudnn_last_math(void)
{
    return last_math;
}

API int fake_cudnn_last_algo(void)
{
    return last_algo;
}

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

#ifndef FAKE_CUDNN_DEFAULT_VERSION
#define FAKE_CUDNN_DEFAULT_VERSION 8500
#endif

API size_t cudnnGetVersion(void)
{
    return (size_t)env_int("FAKE_CUDNN_VERSION", FAKE_CUDNN_DEFAULT_VERSION);
}

API size_t cudnnGetCudartVersion(void)
{
    return (size_t)env_int("FAKE_CUDNN_CUDART", 11060);
}

API const char *cudnnGetErrorString(cudnnStatus_t s)
{
    switch (s) {
    case S_SUCCESS:
        return "CUDNN_STATUS_SUCCESS";
    case S_NOT_INITIALIZED:
        return "CUDNN_STATUS_NOT_INITIALIZED";
    case S_ALLOC_FAILED:
        return "CUDNN_STATUS_ALLOC_FAILED";
    case S_BAD_PARAM:
        return "CUDNN_STATUS_BAD_PARAM";
    case S_INTERNAL_ERROR:
        return "CUDNN_STATUS_INTERNAL_ERROR";
    case S_NOT_SUPPORTED:
        return "CUDNN_STATUS_NOT_SUPPORTED";
    default:
        return "CUDNN_STATUS_UNKNOWN";
    }
}

API cudnnStatus_t cudnnCreate(struct handle **h)
{
    int st = env_int("FAKE_CUDNN_CREATE_STATUS", 0);
    if (st)
        return st;
    if (!h)
        return S_BAD_PARAM;
    if (!(*h = calloc(1, sizeof **h)))
        return S_ALLOC_FAILED;
    (*h)->magic = HANDLE_MAGIC;
    return S_SUCCESS;
}

API cudnnStatus_t cudnnDestroy(struct handle *h)
{
    if (!h || h->magic != HANDLE_MAGIC)
        return S_BAD_PARAM;
    h->magic = 0;
    free(h);
    return S_SUCCESS;
}

#define CREATE_DESTROY(Name, type, MAGIC)                                      \
    API cudnnStatus_t cudnnCreate##Name(struct type **d)                       \
    {                                                                          \
        if (!d)                                                                \
            return S_BAD_PARAM;                                                \
        if (!(*d = calloc(1, sizeof **d)))                                     \
            return S_ALLOC_FAILED;                                             \
        (*d)->magic = MAGIC;                                                   \
        return S_SUCCESS;                                                      \
    }                                                                          \
    API cudnnStatus_t cudnnDestroy##Name(struct type *d)                       \
    {                                                                          \
        if (!d || d->magic != MAGIC)                                           \
            return S_BAD_PARAM;                                                \
        d->magic = 0;                                                          \
        free(d);                                                               \
        return S_SUCCESS;                                                      \
    }

CREATE_DESTROY(TensorDescriptor, tensor, TENSOR_MAGIC)
CREATE_DESTROY(FilterDescriptor, filter, FILTER_MAGIC)
CREATE_DESTROY(ConvolutionDescriptor, conv, CONV_MAGIC)

API cudnnStatus_t cudnnSetTensor4dDescriptor(struct tensor *t, int format,
                                             int dtype, int n, int c, int h,
                                             int w)
{
    if (!t || t->magic != TENSOR_MAGIC || format != 0 /* NCHW */ ||
        (dtype != DT_FLOAT && dtype != DT_HALF) || n <= 0 || c <= 0 ||
        h <= 0 || w <= 0)
        return S_BAD_PARAM;
    t->dtype = dtype;
    t->n = n;
    t->c = c;
    t->h = h;
    t->w = w;
    t->set = 1;
    return S_SUCCESS;
}

/* Data type first, then format: the real argument order. */
API cudnnStatus_t cudnnSetFilter4dDescriptor(struct filter *f, int dtype,
                                             int format, int k, int c, int h,
                                             int w)
{
    if (!f || f->magic != FILTER_MAGIC ||
        (dtype != DT_FLOAT && dtype != DT_HALF) || format != 0 || k <= 0 ||
        c <= 0 || h <= 0 || w <= 0)
        return S_BAD_PARAM;
    f->dtype = dtype;
    f->k = k;
    f->c = c;
    f->h = h;
    f->w = w;
    f->set = 1;
    return S_SUCCESS;
}

API cudnnStatus_t cudnnSetConvolution2dDescriptor(struct conv *cd, int pad_h,
                                                  int pad_w, int u, int v,
                                                  int dil_h, int dil_w,
                                                  int mode, int ctype)
{
    if (!cd || cd->magic != CONV_MAGIC || pad_h < 0 || pad_w < 0 || u <= 0 ||
        v <= 0 || (mode != 0 && mode != 1) || ctype != 0)
        return S_BAD_PARAM;
    if (dil_h != 1 || dil_w != 1)
        return S_NOT_SUPPORTED;
    cd->pad_h = pad_h;
    cd->pad_w = pad_w;
    cd->u = u;
    cd->v = v;
    cd->mode = mode;
    cd->set = 1;
    return S_SUCCESS;
}

#ifndef FAKE_CUDNN_MINIMAL
API cudnnStatus_t cudnnSetConvolutionMathType(struct conv *cd, int math)
{
    if (!cd || cd->magic != CONV_MAGIC || math < 0 || math > 3)
        return S_BAD_PARAM;
    cd->math = math;
    return S_SUCCESS;
}
#endif

static int valid(const struct tensor *x, const struct filter *f,
                 const struct conv *cd)
{
    return x && x->magic == TENSOR_MAGIC && x->set && f &&
           f->magic == FILTER_MAGIC && f->set && cd && cd->magic == CONV_MAGIC &&
           cd->set && x->c == f->c && x->dtype == f->dtype &&
           f->h <= x->h + 2 * cd->pad_h &&
           f->w <= x->w + 2 * cd->pad_w;
}

API cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(
    const struct conv *cd, const struct tensor *x, const struct filter *f,
    int *n, int *c, int *h, int *w)
{
    if (!valid(x, f, cd) || !n || !c || !h || !w)
        return S_BAD_PARAM;
    *n = x->n;
    *c = f->k;
    *h = (x->h + 2 * cd->pad_h - f->h) / cd->u + 1;
    *w = (x->w + 2 * cd->pad_w - f->w) / cd->v + 1;
    return S_SUCCESS;
}

static int y_matches(const struct tensor *x, const struct filter *f,
                     const struct conv *cd, const struct tensor *y)
{
    int n, c, h, w;
    if (cudnnGetConvolution2dForwardOutputDim(cd, x, f, &n, &c, &h, &w) != 0)
        return 0;
    return y && y->magic == TENSOR_MAGIC && y->set && y->n == n && y->c == c &&
           y->h == h && y->w == w && y->dtype == x->dtype;
}

static size_t workspace_of(int algo)
{
    return algo == 1 ? 4096 : 0;
}

#ifndef FAKE_CUDNN_MINIMAL
API cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(
    struct handle *h, int *count)
{
    if (!h || h->magic != HANDLE_MAGIC || !count)
        return S_BAD_PARAM;
    *count = 8;
    return S_SUCCESS;
}

static cudnnStatus_t rank(struct handle *h, const struct tensor *x,
                          const struct filter *f, const struct conv *cd,
                          const struct tensor *y, int want, int *got,
                          struct perf *p)
{
    if (!h || h->magic != HANDLE_MAGIC || !valid(x, f, cd) ||
        !y_matches(x, f, cd, y) || want <= 0 || !got || !p)
        return S_BAD_PARAM;
    struct perf all[4];
    int n = 0;
    memset(all, 0, sizeof all);
    if (cd->math == 0 || cd->math == 1) { /* tensor-op (TF32, FP16) first */
        all[n].algo = 1;
        all[n].memory = workspace_of(1);
        all[n].time = 0.01f;
        all[n++].mathType = 1;
    }
    all[n].algo = 1;
    all[n].memory = workspace_of(1);
    all[n].time = 0.02f;
    all[n++].mathType = cd->math;
    all[n].algo = 0;
    all[n].time = 0.03f;
    all[n++].mathType = cd->math;
    all[n].algo = 6; /* WINOGRAD */
    all[n].status = S_NOT_SUPPORTED;
    all[n].time = -1;
    all[n++].mathType = cd->math;
    *got = n < want ? n : want;
    memcpy(p, all, (size_t)*got * sizeof *p);
    return S_SUCCESS;
}

API cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    struct handle *h, const struct tensor *x, const struct filter *f,
    const struct conv *cd, const struct tensor *y, int want, int *got,
    struct perf *p)
{
    return rank(h, x, f, cd, y, want, got, p);
}

API cudnnStatus_t cudnnFindConvolutionForwardAlgorithm(
    struct handle *h, const struct tensor *x, const struct filter *f,
    const struct conv *cd, const struct tensor *y, int want, int *got,
    struct perf *p)
{
    return rank(h, x, f, cd, y, want, got, p);
}
#endif

API cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    struct handle *h, const struct tensor *x, const struct filter *f,
    const struct conv *cd, const struct tensor *y, int algo, size_t *size)
{
    if (!h || h->magic != HANDLE_MAGIC || !valid(x, f, cd) ||
        !y_matches(x, f, cd, y) || !size)
        return S_BAD_PARAM;
    if (algo != 0 && algo != 1)
        return S_NOT_SUPPORTED;
    *size = workspace_of(algo);
    return S_SUCCESS;
}

/* binary16 <-> float, written independently of the tool's converter:
 * through the exponent and mantissa fields, round half to even. */
static float from_half(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0)
        v = (float)m / 1024.0f / 16384.0f; /* m * 2^-24 */
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else {
        v = 1.0f + (float)m / 1024.0f;
        for (; e > 15; e--)
            v *= 2.0f;
        for (; e < 15; e++)
            v *= 0.5f;
    }
    return (h & 0x8000) ? -v : v;
}

static uint16_t to_half(float f)
{
    uint16_t sign = f < 0 ? 0x8000 : 0;
    double a = f < 0 ? -(double)f : (double)f;
    if (a != a)
        return 0x7e00;
    if (a >= 65520.0)
        return sign | 0x7c00;
    if (a < 6.103515625e-05) { /* subnormal: units of 2^-24 */
        double q = a * 16777216.0, r = q - (double)(long)q;
        long n = (long)q;
        if (r > 0.5 || (r == 0.5 && (n & 1)))
            n++;
        return (uint16_t)(sign | n);
    }
    int e = 15;
    while (a >= 2.0) {
        a *= 0.5;
        e++;
    }
    while (a < 1.0) {
        a *= 2.0;
        e--;
    }
    double q = (a - 1.0) * 1024.0, r = q - (double)(long)q;
    long m = (long)q;
    if (r > 0.5 || (r == 0.5 && (m & 1)))
        m++;
    if (m == 1024) {
        m = 0;
        e++;
    }
    if (e >= 31)
        return sign | 0x7c00;
    return (uint16_t)(sign | e << 10 | m);
}

/* Round to TF32: 10 explicit mantissa bits, round to nearest. */
static float tf32(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = (u + 0x1000u) & ~0x1fffu;
    memcpy(&v, &u, sizeof v);
    return v;
}

API cudnnStatus_t cudnnConvolutionForward(
    struct handle *h, const void *alpha, const struct tensor *xd,
    const void *xv, const struct filter *fd, const void *wv,
    const struct conv *cd, int algo, void *ws, size_t ws_size,
    const void *beta, const struct tensor *yd, void *yv)
{
    if (!h || h->magic != HANDLE_MAGIC || !valid(xd, fd, cd) ||
        !y_matches(xd, fd, cd, yd) || !alpha || !beta || !xv || !wv || !yv)
        return S_BAD_PARAM;
    if (algo != 0 && algo != 1)
        return S_NOT_SUPPORTED;
    if (env_int("FAKE_CUDNN_FAIL_ALGO", -1) == algo)
        return S_NOT_SUPPORTED;
    if (env_int("FAKE_CUDNN_CONV_CRASH", 0))
#ifdef _WIN32
        *(volatile int *)(uintptr_t)8 = 1; /* an access violation */
#else
        raise(SIGSEGV);
#endif
    while (env_int("FAKE_CUDNN_CONV_HANG", 0)) {
#ifdef _WIN32
        Sleep(1000);
#else
        sleep(1);
#endif
    }
    if (ws_size < workspace_of(algo) || (workspace_of(algo) && !ws))
        return S_BAD_PARAM;
    last_math = cd->math;
    last_algo = algo;
    const int half = xd->dtype == DT_HALF;
    const float a = *(const float *)alpha, b = *(const float *)beta;
    /* TF32 rounding applies to FP32 data only; binary16 inputs are exact in
     * the tensor cores' products. */
    const int tensor_op = !half && (cd->math == 1 || cd->math == 2);
    const int N = xd->n, C = xd->c, H = xd->h, W = xd->w;
    const int K = fd->k, R = fd->h, S = fd->w, OH = yd->h, OW = yd->w;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    float acc = 0;
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < R; r++)
                            for (int s = 0; s < S; s++) {
                                int ih = oh * cd->u - cd->pad_h + r;
                                int iw = ow * cd->v - cd->pad_w + s;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                /* CUDNN_CONVOLUTION (0) flips the filter. */
                                int fr = cd->mode == 0 ? R - 1 - r : r;
                                int fs = cd->mode == 0 ? S - 1 - s : s;
                                size_t xi = ((size_t)(n * C + c) * H + ih) * W + iw;
                                size_t wi = ((size_t)(k * C + c) * R + fr) * S + fs;
                                float xval = half ? from_half(((const uint16_t *)xv)[xi])
                                                  : ((const float *)xv)[xi];
                                float wval = half ? from_half(((const uint16_t *)wv)[wi])
                                                  : ((const float *)wv)[wi];
                                if (tensor_op) {
                                    xval = tf32(xval);
                                    wval = tf32(wval);
                                }
                                acc += xval * wval;
                            }
                    size_t i = (((size_t)n * K + k) * OH + oh) * OW + ow;
                    /* beta == 0: y is not read (it may hold NaN). */
                    if (half) {
                        uint16_t *yh = yv;
                        float old = b == 0 ? 0 : from_half(yh[i]);
                        yh[i] = to_half(b == 0 ? a * acc : a * acc + b * old);
                    } else {
                        float *y = yv;
                        y[i] = b == 0 ? a * acc : a * acc + b * y[i];
                    }
                }
    if (env_int("FAKE_CUDNN_CONV_CORRUPT", 0)) {
        size_t total = (size_t)N * K * OH * OW;
        if (half)
            ((uint16_t *)yv)[total / 2] =
                to_half(from_half(((uint16_t *)yv)[total / 2]) + 0.5f);
        else
            ((float *)yv)[total / 2] += 0.5f;
    }
    return S_SUCCESS;
}
