/* A fake NVIDIA driver library (build it as libcuda.so.1) so that gpu.c runs
 * end to end on machines without a GPU. "Device" memory is host memory, so
 * the fake cuDNN can compute on it; events read the wall clock.
 *
 * It is strict where the real driver is: nothing works before cuInit, cuInit
 * in a child forked after its parent's cuInit fails as the real one does
 * (CUDA_ERROR_NOT_INITIALIZED: the driver does not survive fork), memory
 * and events need a current context, copies must stay inside an allocation,
 * and unknown pointers are rejected. It also exports the traps a careless
 * caller falls into - the legacy-ABI plain cuMemAlloc/cuMemcpy* and CUDA 13's
 * cuCtxSynchronize_v2(CUcontext) - which fail and count a misuse.
 *
 * Environment knobs, read at each call:
 *   FAKE_CUDA_DRIVER_VERSION  cuDriverGetVersion's answer (default 11080)
 *   FAKE_CUDA_NO_DEVICE=1     cuInit returns CUDA_ERROR_NO_DEVICE
 *   FAKE_CUDA_INIT_ERROR=N    cuInit returns N
 *   FAKE_CUDA_INIT_CRASH=1    cuInit dies of SIGSEGV, on Windows an
 *                             access violation (a broken driver)
 *   FAKE_CUDA_INIT_HANG=1     cuInit never returns (a hung driver or GPU)
 *   FAKE_CUDA_OOM=1           cuMemAlloc_v2 returns CUDA_ERROR_OUT_OF_MEMORY
 *   FAKE_CUDA_CC=M.N          the device's compute capability (default 9.0,
 *                             an H200's)
 *   FAKE_CUDA_EVENT_SPEEDUP=F cuEventElapsedTime reports the wall time
 *                             divided by F (default 1): a GPU F times as
 *                             fast as this CPU, for the bench's speed-up
 *                             rule; F < 1 a slower one
 * Test hooks: fake_cuda_live_allocs(), fake_cuda_retain_count(),
 * fake_cuda_misuse().
 *
 * Built as libcuda.so.1 (fakecudnn.py) and, cross-compiled with mingw-w64,
 * as nvcuda.dll (fakecudnn_win.py; no fork there, so no fork check). */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#endif
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef void *CUstream;

#define OK 0
#define E_INVALID_VALUE 1
#define E_OUT_OF_MEMORY 2
#define E_NOT_INITIALIZED 3
#define E_NO_DEVICE 100
#define E_INVALID_DEVICE 101
#define E_INVALID_CONTEXT 201
#define E_INVALID_HANDLE 400
#define E_NOT_READY 600
#define E_UNKNOWN 999

#ifdef _WIN32
#define API __declspec(dllexport)
#else
#define API __attribute__((visibility("default")))
#endif

struct fake_event {
    unsigned magic;
    int recorded;
    double t;
};
#define EVENT_MAGIC 0xE7E7E7E7u

static int inited;
#ifndef _WIN32
static pid_t inited_pid; /* the process that ran cuInit */
#endif

static void sleep_a_second(void)
{
#ifdef _WIN32
    Sleep(1000);
#else
    struct timespec t = {1, 0};
    nanosleep(&t, NULL);
#endif
}
static int retain_count;
static char the_ctx; /* the primary context's identity */
static CUcontext current;
static int misuse;

#define MAX_ALLOCS 1024
static struct {
    char *p;
    size_t n;
} allocs[MAX_ALLOCS];

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static int need_ctx(void)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    return current == &the_ctx ? OK : E_INVALID_CONTEXT;
}

/* The allocation holding [p, p+n), or -1. */
static int find_alloc(CUdeviceptr p, size_t n)
{
    for (int i = 0; i < MAX_ALLOCS; i++) {
        uintptr_t b = (uintptr_t)allocs[i].p;
        if (allocs[i].p && p >= b && p - b <= allocs[i].n &&
            n <= allocs[i].n - (p - b))
            return i;
    }
    return -1;
}

API int fake_cuda_live_allocs(void)
{
    int n = 0;
    for (int i = 0; i < MAX_ALLOCS; i++)
        n += allocs[i].p != NULL;
    return n;
}

API int fake_cuda_retain_count(void)
{
    return retain_count;
}

API int fake_cuda_misuse(void)
{
    return misuse;
}

API CUresult cuInit(unsigned int flags)
{
    if (flags != 0)
        return E_INVALID_VALUE;
    if (env_int("FAKE_CUDA_NO_DEVICE", 0))
        return E_NO_DEVICE;
    if (env_int("FAKE_CUDA_INIT_CRASH", 0))
#ifdef _WIN32
        *(volatile int *)(uintptr_t)8 = 1; /* an access violation */
#else
        raise(SIGSEGV);
#endif
    while (env_int("FAKE_CUDA_INIT_HANG", 0))
        sleep_a_second();
    int e = env_int("FAKE_CUDA_INIT_ERROR", 0);
    if (e)
        return e;
#ifndef _WIN32
    if (inited && inited_pid != getpid())
        return 3; /* CUDA_ERROR_NOT_INITIALIZED: a fork after cuInit */
    inited_pid = getpid();
#endif
    inited = 1;
    return OK;
}

API CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return E_INVALID_VALUE;
    *v = env_int("FAKE_CUDA_DRIVER_VERSION", 11080);
    return OK;
}

API CUresult cuDeviceGetCount(int *n)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!n)
        return E_INVALID_VALUE;
    *n = 1;
    return OK;
}

API CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!d)
        return E_INVALID_VALUE;
    if (ordinal != 0)
        return E_INVALID_DEVICE;
    *d = 0;
    return OK;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    static const char n[] = "Fake GPU (tests/fakes/fake_cuda.c)";
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!name || len <= 0)
        return E_INVALID_VALUE;
    if (d != 0)
        return E_INVALID_DEVICE;
    size_t k = strlen(n) < (size_t)len - 1 ? strlen(n) : (size_t)len - 1;
    memcpy(name, n, k);
    name[k] = '\0';
    return OK;
}

API CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!v || d != 0)
        return E_INVALID_VALUE;
    switch (attr) {
    case 75: /* COMPUTE_CAPABILITY_MAJOR */
    case 76: { /* COMPUTE_CAPABILITY_MINOR */
        const char *cc = getenv("FAKE_CUDA_CC");
        int major = 9, minor = 0;
        if (cc && *cc) {
            major = atoi(cc);
            const char *dot = strchr(cc, '.');
            minor = dot ? atoi(dot + 1) : 0;
        }
        *v = attr == 75 ? major : minor;
        return OK;
    }
    default:
        return E_INVALID_VALUE;
    }
}

API CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice d)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!major || !minor || d != 0)
        return E_INVALID_VALUE;
    cuDeviceGetAttribute(major, 75, d);
    cuDeviceGetAttribute(minor, 76, d);
    return OK;
}

API CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!bytes || d != 0)
        return E_INVALID_VALUE;
    *bytes = (size_t)1 << 30;
    return OK;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (!ctx || d != 0)
        return E_INVALID_VALUE;
    retain_count++;
    *ctx = &the_ctx;
    return OK;
}

static CUresult release(CUdevice d)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (d != 0 || retain_count <= 0)
        return E_INVALID_CONTEXT;
    retain_count--;
    return OK;
}

API CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    return release(d);
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    return release(d);
}

API CUresult cuCtxSetCurrent(CUcontext ctx)
{
    if (!inited)
        return E_NOT_INITIALIZED;
    if (ctx && (ctx != &the_ctx || retain_count <= 0))
        return E_INVALID_CONTEXT;
    current = ctx;
    return OK;
}

API CUresult cuCtxSynchronize(void)
{
    return need_ctx();
}

/* CUDA 13's cuCtxSynchronize_v2(CUcontext) is not the _v2 of the call
 * above: a caller that takes it for one passes no context. */
API CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
    (void)ctx;
    misuse++;
    return E_INVALID_CONTEXT;
}

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
    int e = need_ctx();
    if (e)
        return e;
    if (!p || n == 0)
        return E_INVALID_VALUE;
    if (env_int("FAKE_CUDA_OOM", 0))
        return E_OUT_OF_MEMORY;
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (!allocs[i].p) {
            if (!(allocs[i].p = malloc(n)))
                return E_OUT_OF_MEMORY;
            allocs[i].n = n;
            *p = (CUdeviceptr)(uintptr_t)allocs[i].p;
            return OK;
        }
    }
    return E_OUT_OF_MEMORY;
}

API CUresult cuMemFree_v2(CUdeviceptr p)
{
    int e = need_ctx();
    if (e)
        return e;
    for (int i = 0; i < MAX_ALLOCS; i++) {
        if (allocs[i].p && (uintptr_t)allocs[i].p == p) {
            free(allocs[i].p);
            allocs[i].p = NULL;
            return OK;
        }
    }
    return E_INVALID_VALUE;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    int e = need_ctx();
    if (e)
        return e;
    if (!src || find_alloc(dst, n) < 0)
        return E_INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, n);
    return OK;
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
    int e = need_ctx();
    if (e)
        return e;
    if (!dst || find_alloc(src, n) < 0)
        return E_INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return OK;
}

/* The legacy (CUDA < 3.2) ABI with 32-bit device pointers, still exported by
 * real drivers: resolving these instead of the _v2 names is a bug. */
API CUresult cuMemAlloc(unsigned int *p, unsigned int n)
{
    (void)p;
    (void)n;
    misuse++;
    return E_UNKNOWN;
}

API CUresult cuMemFree(unsigned int p)
{
    (void)p;
    misuse++;
    return E_UNKNOWN;
}

API CUresult cuMemcpyHtoD(unsigned int dst, const void *src, unsigned int n)
{
    (void)dst;
    (void)src;
    (void)n;
    misuse++;
    return E_UNKNOWN;
}

API CUresult cuMemcpyDtoH(void *dst, unsigned int src, unsigned int n)
{
    (void)dst;
    (void)src;
    (void)n;
    misuse++;
    return E_UNKNOWN;
}

static double now(void)
{
#ifdef _WIN32
    LARGE_INTEGER f, c;
    QueryPerformanceFrequency(&f);
    QueryPerformanceCounter(&c);
    return (double)c.QuadPart / (double)f.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
#endif
}

static struct fake_event *event_of(void *e)
{
    struct fake_event *ev = e;
    return ev && ev->magic == EVENT_MAGIC ? ev : NULL;
}

API CUresult cuEventCreate(void **e, unsigned int flags)
{
    int r = need_ctx();
    if (r)
        return r;
    if (!e || flags != 0)
        return E_INVALID_VALUE;
    struct fake_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        return E_OUT_OF_MEMORY;
    ev->magic = EVENT_MAGIC;
    *e = ev;
    return OK;
}

API CUresult cuEventRecord(void *e, CUstream s)
{
    int r = need_ctx();
    if (r)
        return r;
    struct fake_event *ev = event_of(e);
    if (!ev || s != NULL)
        return E_INVALID_HANDLE;
    ev->t = now();
    ev->recorded = 1;
    return OK;
}

API CUresult cuEventSynchronize(void *e)
{
    int r = need_ctx();
    if (r)
        return r;
    struct fake_event *ev = event_of(e);
    if (!ev)
        return E_INVALID_HANDLE;
    return OK;
}

API CUresult cuEventElapsedTime(float *ms, void *a, void *b)
{
    int r = need_ctx();
    if (r)
        return r;
    struct fake_event *ea = event_of(a), *eb = event_of(b);
    if (!ms || !ea || !eb)
        return E_INVALID_HANDLE;
    if (!ea->recorded || !eb->recorded)
        return E_NOT_READY;
    const char *f = getenv("FAKE_CUDA_EVENT_SPEEDUP");
    double speedup = f && *f ? atof(f) : 1.0;
    if (speedup <= 0)
        speedup = 1.0;
    *ms = (float)((eb->t - ea->t) * 1e3 / speedup);
    return OK;
}

API CUresult cuEventElapsedTime_v2(float *ms, void *a, void *b)
{
    return cuEventElapsedTime(ms, a, b);
}

API CUresult cuEventDestroy(void *e)
{
    struct fake_event *ev = event_of(e);
    if (!ev)
        return E_INVALID_HANDLE;
    ev->magic = 0;
    free(ev);
    return OK;
}

API CUresult cuEventDestroy_v2(void *e)
{
    return cuEventDestroy(e);
}

static const struct {
    int code;
    const char *name, *text;
} errs[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {E_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {E_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {E_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {E_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {E_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {E_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {E_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {E_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination"},
    {E_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

API CUresult cuGetErrorName(CUresult e, const char **s)
{
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        if (errs[i].code == e) {
            *s = errs[i].name;
            return OK;
        }
    }
    *s = NULL;
    return E_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult e, const char **s)
{
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        if (errs[i].code == e) {
            *s = errs[i].text;
            return OK;
        }
    }
    *s = NULL;
    return E_INVALID_VALUE;
}
