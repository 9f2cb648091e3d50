/* verify's gpu layer, driver side (gpu.h): the NVIDIA driver library
 * loaded by absolute path through the proven-library path, its entry points
 * resolved into struct cu_api, the device query, and the driver against the
 * tree's CUDA version. The convolution check and the benchmark are in
 * gpu_conv.c; what the two share is in gpu_int.h.
 *
 * legacy convolution API, called through function pointers resolved from
 * libraries loaded by absolute path. Portable: the platform lives in
 * loader_*.c; this file declares the few CUDA and cuDNN types it needs
 * itself, so the build needs neither cuda.h nor cudnn.h.
 *
 * ABI notes, checked against cuda.h (12.x/13.0) and cudnn_cnn.h (8.x/9.x):
 *  - cuda.h maps several API names to versioned exports (#define cuMemAlloc
 *    cuMemAlloc_v2): the plain export is the legacy ABI (32-bit device
 *    pointers), so those names are resolved as _v2 first. This is done per
 *    symbol, never as a rule: cuCtxSynchronize_v2 (CUDA 13) takes a
 *    CUcontext and is a different function from cuCtxSynchronize.
 *  - cuEventElapsedTime became cuEventElapsedTime_v2 in CUDA 13 headers with
 *    the same signature; older drivers only have the plain one.
 *  - cuDNN enums are passed as int (they are int-sized on every ABI we
 *    build for); cudnnConvolutionFwdAlgoPerf_t is {algo, status, float time,
 *    size_t memory, determinism, mathType, int reserved[3]}, 48 bytes on
 *    64-bit hosts, the same in cuDNN 7.x, 8.x and 9.x. */
#include "cdd/gpu.h"
#include "gpu_int.h"

#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "loaddiag.h"
#include "cdd/loader.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"
#include "cdd/compat.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* First of the names the library exports; *missing names the first
 * required symbol not found. */
cdd_lib_fn cdd_gpu_resolve(struct cdd_lib *l, const char *a, const char *b,
                          int required, const char **missing)
{
    cdd_lib_fn f = cdd_lib_func(l, a);
    if (!f && b)
        f = cdd_lib_func(l, b);
    if (!f && required && !*missing)
        *missing = a;
    return f;
}

#define CU_NEED(field, a, b)                                                   \
    (g->cu.field = (pfn_##field)cdd_gpu_resolve(g->lib, a, b, 1, &missing))
#define CU_MAYBE(field, a, b)                                                  \
    (g->cu.field = (pfn_##field)cdd_gpu_resolve(g->lib, a, b, 0, &missing))

int cdd_gpu_cu_fail(const struct cdd_gpu_env *g, int code, const char *call,
                   CUresult res)
{
    const char *name = NULL, *text = NULL;
    if (g->cu.cuGetErrorName && g->cu.cuGetErrorName(res, &name) != 0)
        name = NULL;
    if (g->cu.cuGetErrorString && g->cu.cuGetErrorString(res, &text) != 0)
        text = NULL;
    return cdd_fail(code, g->driver_path, 0, "%s failed: %s (%d)%s%s",
                    call, name ? name : "CUDA error", res, text ? ": " : "",
                    text ? text : "");
}

/* "580.65.06" from ".../libcuda.so.580.65.06": the Linux driver installs
 * its library under its release number and libcuda.so.1 links to it. Only
 * a dotted number is taken ("libcuda.so.1" itself says nothing). */
static void driver_release_from_path(const char *path, char *out, size_t len)
{
    char *real = NULL;
    out[0] = '\0';
    if (cdd_fs_realpath(path, &real) != 0) {
        cdd_clear_error();
        return;
    }
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    const char *v = strstr(base, ".so.");
    if (v) {
        v += 4;
        size_t n = strspn(v, "0123456789.");
        if (n == strlen(v) && n > 0 && n < len && strchr(v, '.') &&
            v[0] != '.' && v[n - 1] != '.')
            memcpy(out, v, n + 1);
    }
    free(real);
}

int cdd_gpu_env_open(const char *driver_path, struct cdd_gpu_env **out)
{
    struct cdd_gpu_env *g = NULL;
    char *found = NULL;
    const char *missing = NULL;
    int r;
    *out = NULL;
    if (!driver_path) {
        if ((r = cdd_driver_library_path(&found)) != 0)
            return r;
        driver_path = found;
    }
    if (!(g = calloc(1, sizeof *g))) {
        r = cdd_fail(CDD_E_NOMEM, driver_path, 0, NULL);
        goto out;
    }
    g->info.device = -1;
    if (!(g->driver_path = cdd_strdup(driver_path))) {
        r = cdd_last_error()->code;
        goto out;
    }
    if ((r = cdd_lib_open_explained(driver_path, &g->lib)) != 0)
        goto out;
    CU_NEED(cuInit, "cuInit", NULL);
    CU_NEED(cuDriverGetVersion, "cuDriverGetVersion", NULL);
    CU_NEED(cuDeviceGetCount, "cuDeviceGetCount", NULL);
    CU_NEED(cuDeviceGet, "cuDeviceGet", NULL);
    CU_NEED(cuDeviceGetName, "cuDeviceGetName", NULL);
    CU_NEED(cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL);
    CU_MAYBE(cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL);
    CU_NEED(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
    CU_NEED(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2",
            "cuDevicePrimaryCtxRelease");
    CU_NEED(cuCtxSetCurrent, "cuCtxSetCurrent", NULL);
    CU_NEED(cuCtxSynchronize, "cuCtxSynchronize", NULL); /* not _v2: see top */
    CU_NEED(cuMemAlloc, "cuMemAlloc_v2", NULL);
    CU_NEED(cuMemFree, "cuMemFree_v2", NULL);
    CU_NEED(cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL);
    CU_NEED(cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL);
    CU_NEED(cuEventCreate, "cuEventCreate", NULL);
    CU_NEED(cuEventRecord, "cuEventRecord", NULL);
    CU_NEED(cuEventSynchronize, "cuEventSynchronize", NULL);
    CU_NEED(cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    CU_NEED(cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    CU_MAYBE(cuGetErrorName, "cuGetErrorName", NULL);
    CU_MAYBE(cuGetErrorString, "cuGetErrorString", NULL);
    if (missing) {
        r = cdd_fail(CDD_E_CHECK, driver_path, 0,
                     "not a usable NVIDIA driver library: it does not export "
                     "%s",
                     missing);
        goto out;
    }
    /* cuDriverGetVersion works before cuInit, so the version can be reported
     * even when cuInit fails (no GPU, kernel module mismatch). */
    CUresult cr = g->cu.cuDriverGetVersion(&g->info.driver_cuda_version);
    if (cr != CUDA_SUCCESS) {
        r = cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDriverGetVersion", cr);
        goto out;
    }
    driver_release_from_path(driver_path, g->info.driver_release,
                             sizeof g->info.driver_release);
    *out = g;
    g = NULL;
    r = 0;
out:
    cdd_gpu_env_close(g);
    free(found);
    return r;
}

int cdd_gpu_env_device(struct cdd_gpu_env *g, int ordinal)
{
    CUresult cr;
    if (g->ctx_retained)
        return cdd_fail(CDD_E_USAGE, g->driver_path, 0,
                        "a device is already open");
    if ((cr = g->cu.cuInit(0)) != CUDA_SUCCESS) {
        /* A driver with no visible GPU (a build agent, a container started
         * without GPUs) is a reason to skip, not a broken install. */
        if (cr == CUDA_ERROR_NO_DEVICE)
            return cdd_gpu_cu_fail(g, CDD_E_NOTFOUND, "cuInit", cr);
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuInit", cr);
    }
    g->info.initialized = 1;
    if ((cr = g->cu.cuDeviceGetCount(&g->info.device_count)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDeviceGetCount", cr);
    if (g->info.device_count <= 0)
        return cdd_fail(CDD_E_NOTFOUND, g->driver_path, 0,
                        "the driver sees no CUDA device");
    if (ordinal < 0 || ordinal >= g->info.device_count)
        return cdd_fail(CDD_E_USAGE, g->driver_path, 0,
                        "no CUDA device %d (the driver sees %d)", ordinal,
                        g->info.device_count);
    if ((cr = g->cu.cuDeviceGet(&g->dev, ordinal)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDeviceGet", cr);
    char name[256] = ""; /* fixed: cuDeviceGetName's name, as the API gives it */
    if ((cr = g->cu.cuDeviceGetName(name, (int)sizeof name - 1, g->dev)) !=
        CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDeviceGetName", cr);
    name[sizeof name - 1] = '\0';
    snprintf(g->info.device_name, sizeof g->info.device_name, "%s", name);
    if ((cr = g->cu.cuDeviceGetAttribute(
             &g->info.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
             g->dev)) != CUDA_SUCCESS ||
        (cr = g->cu.cuDeviceGetAttribute(
             &g->info.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
             g->dev)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDeviceGetAttribute", cr);
    size_t mem = 0;
    if (g->cu.cuDeviceTotalMem &&
        g->cu.cuDeviceTotalMem(&mem, g->dev) == CUDA_SUCCESS)
        g->info.total_mem = mem;
    /* The primary context is the one the CUDA runtime inside cuDNN uses, so
     * memory we allocate through the driver API is valid for cuDNN. */
    if ((cr = g->cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuDevicePrimaryCtxRetain", cr);
    g->ctx_retained = 1;
    g->info.device = ordinal;
    if ((cr = g->cu.cuCtxSetCurrent(g->ctx)) != CUDA_SUCCESS)
        return cdd_gpu_cu_fail(g, CDD_E_CHECK, "cuCtxSetCurrent", cr);
    return 0;
}

const char *cdd_gpu_env_driver_path(const struct cdd_gpu_env *g)
{
    return g ? g->driver_path : NULL;
}

const struct cdd_gpu_info *cdd_gpu_env_info(const struct cdd_gpu_env *g)
{
    return &g->info;
}

void cdd_gpu_env_close(struct cdd_gpu_env *g)
{
    if (!g)
        return;
    if (g->ctx_retained) {
        g->cu.cuCtxSetCurrent(NULL);
        g->cu.cuDevicePrimaryCtxRelease(g->dev);
    }
    cdd_lib_close(g->lib);
    free(g->driver_path);
    free(g);
}

/* ---- driver versus CUDA ------------------------------------------------ */

int cdd_driver_release_cmp(const char *a, const char *b)
{
    a = a ? a : "";
    b = b ? b : "";
    while (*a || *b) {
        unsigned long va = 0, vb = 0;
        while (*a >= '0' && *a <= '9' && va < 100000000ul)
            va = va * 10 + (unsigned long)(*a++ - '0');
        while (*b >= '0' && *b <= '9' && vb < 100000000ul)
            vb = vb * 10 + (unsigned long)(*b++ - '0');
        if (va != vb)
            return va < vb ? -1 : 1;
        /* Skip to the next component; anything but digits separates. */
        while (*a && (*a < '0' || *a > '9'))
            a++;
        while (*b && (*b < '0' || *b > '9'))
            b++;
    }
    return 0;
}

enum cdd_drv_fit cdd_gpu_driver_fit(int driver_cuda_version,
                                    const char *driver_release, int tree_major,
                                    int tree_minor)
{
    int dmaj = cdd_cuda_version_major(driver_cuda_version);
    int dmin = cdd_cuda_version_minor(driver_cuda_version);
    if (driver_cuda_version <= 0 || tree_major <= 0 || dmaj < tree_major)
        return CDD_DRV_TOO_OLD;
    if (dmaj > tree_major || dmin >= tree_minor)
        return CDD_DRV_NATIVE;
    /* Same major, older minor: only CUDA 11 and later run there, and only
     * from the family's minimum driver on. */
    const char *min = cdd_cuda_min_driver(tree_major, CDD_HOST_WINDOWS);
    if (!min)
        return CDD_DRV_TOO_OLD;
    if (driver_release && *driver_release &&
        cdd_driver_release_cmp(driver_release, min) < 0)
        return CDD_DRV_TOO_OLD;
    return CDD_DRV_MINOR_COMPAT;
}

char *cdd_cuda_version_str(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", cdd_cuda_version_major(v),
             cdd_cuda_version_minor(v));
    return buf;
}
