/* Private to src/core/verify/gpu_driver.c and gpu_conv.c (gpu.h is the
 * public contract): the few CUDA driver types and entry points they share,
 * declared here so that the build needs no cuda.h, and the driver
 * environment both files work in. */
#ifndef CDD_VERIFY_GPU_INT_H
#define CDD_VERIFY_GPU_INT_H

#include "cdd/gpu.h"
#include "cdd/loader.h"

#include <stddef.h>


typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef void *CUevent;
typedef void *CUstream;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_NO_DEVICE 100
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_EVENT_DEFAULT 0

typedef CUresult (*pfn_cuInit)(unsigned int);
typedef CUresult (*pfn_cuDriverGetVersion)(int *);
typedef CUresult (*pfn_cuDeviceGetCount)(int *);
typedef CUresult (*pfn_cuDeviceGet)(CUdevice *, int);
typedef CUresult (*pfn_cuDeviceGetName)(char *, int, CUdevice);
typedef CUresult (*pfn_cuDeviceGetAttribute)(int *, int, CUdevice);
typedef CUresult (*pfn_cuDeviceTotalMem)(size_t *, CUdevice);
typedef CUresult (*pfn_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
typedef CUresult (*pfn_cuDevicePrimaryCtxRelease)(CUdevice);
typedef CUresult (*pfn_cuCtxSetCurrent)(CUcontext);
typedef CUresult (*pfn_cuCtxSynchronize)(void);
typedef CUresult (*pfn_cuMemAlloc)(CUdeviceptr *, size_t);
typedef CUresult (*pfn_cuMemFree)(CUdeviceptr);
typedef CUresult (*pfn_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
typedef CUresult (*pfn_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
typedef CUresult (*pfn_cuEventCreate)(CUevent *, unsigned int);
typedef CUresult (*pfn_cuEventRecord)(CUevent, CUstream);
typedef CUresult (*pfn_cuEventSynchronize)(CUevent);
typedef CUresult (*pfn_cuEventElapsedTime)(float *, CUevent, CUevent);
typedef CUresult (*pfn_cuEventDestroy)(CUevent);
typedef CUresult (*pfn_cuGetErrorName)(CUresult, const char **);
typedef CUresult (*pfn_cuGetErrorString)(CUresult, const char **);

struct cu_api {
    pfn_cuInit cuInit;
    pfn_cuDriverGetVersion cuDriverGetVersion;
    pfn_cuDeviceGetCount cuDeviceGetCount;
    pfn_cuDeviceGet cuDeviceGet;
    pfn_cuDeviceGetName cuDeviceGetName;
    pfn_cuDeviceGetAttribute cuDeviceGetAttribute;
    pfn_cuDeviceTotalMem cuDeviceTotalMem; /* optional */
    pfn_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain;
    pfn_cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease;
    pfn_cuCtxSetCurrent cuCtxSetCurrent;
    pfn_cuCtxSynchronize cuCtxSynchronize;
    pfn_cuMemAlloc cuMemAlloc;
    pfn_cuMemFree cuMemFree;
    pfn_cuMemcpyHtoD cuMemcpyHtoD;
    pfn_cuMemcpyDtoH cuMemcpyDtoH;
    pfn_cuEventCreate cuEventCreate;
    pfn_cuEventRecord cuEventRecord;
    pfn_cuEventSynchronize cuEventSynchronize;
    pfn_cuEventElapsedTime cuEventElapsedTime;
    pfn_cuEventDestroy cuEventDestroy;
    pfn_cuGetErrorName cuGetErrorName;     /* optional (CUDA >= 6.0) */
    pfn_cuGetErrorString cuGetErrorString; /* optional */
};

struct cdd_gpu_env {
    struct cdd_lib *lib;
    char *driver_path;        /* the library loaded, malloc'd */
    struct cu_api cu;
    struct cdd_gpu_info info;
    CUdevice dev;
    CUcontext ctx;
    int ctx_retained;
};
/* First of the names a library exports (a, else b); *missing names the
 * first required symbol not found. */
cdd_lib_fn cdd_gpu_resolve(struct cdd_lib *l, const char *a, const char *b,
                           int required, const char **missing);

/* Records a failed driver call (its name, CUDA's error name and text) as
 * code against the driver's path; returns code. */
int cdd_gpu_cu_fail(const struct cdd_gpu_env *g, int code, const char *call,
                    CUresult res);

#endif
