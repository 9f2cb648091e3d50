/* A fake cuDNN sub-library (libcudnn_ops_infer.so.8, cudnn_cnn64_9.dll ...)
 * exporting its version-check function, for verify's load layer. Built by
 * the tests with:
 *   -DCHECK_SYMBOL=cudnnOpsInferVersionCheck  the export (omit: none)
 *   -DCHECK_STATUS=0                          what it returns (14: mismatch)
 * and linked, for the "missing dependency" case, against a stub whose file
 * is then withheld from the archive.
 *
 * Like cuDNN 9's (seen on 9.14), the version check starts the NVIDIA driver
 * (POSIX: cuInit of the library $CUDNN_DEPLOY_DRIVER_LIB names, when it
 * loads), so that a caller that then forks finds no driver in the child.
 * FAKE_CUDNN_CHECK_CRASH=1 makes it die of SIGSEGV, FAKE_CUDNN_CHECK_HANG=1
 * never return. */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L /* sleep() under -std=c11 */
#endif
#if defined(_WIN32)
#define API __declspec(dllexport)
#else
#define API __attribute__((visibility("default")))
#endif

#ifndef CHECK_STATUS
#define CHECK_STATUS 0
#endif

#ifdef NEEDS_SYMBOL
/* Referenced so the linker keeps the dependency (DT_NEEDED / import). */
extern int NEEDS_SYMBOL(void);
API int fake_sub_uses_dependency(void)
{
    return NEEDS_SYMBOL();
}
#endif

#ifdef CHECK_SYMBOL
#ifndef _WIN32
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void start_driver(void)
{
    const char *lib = getenv("CUDNN_DEPLOY_DRIVER_LIB");
    void *h = lib && *lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*cu_init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit")
                                 : NULL;
    if (cu_init)
        (void)cu_init(0); /* kept loaded, as the real driver stays */
}
#endif

API int CHECK_SYMBOL(void)
{
#ifndef _WIN32
    const char *crash = getenv("FAKE_CUDNN_CHECK_CRASH");
    const char *hang = getenv("FAKE_CUDNN_CHECK_HANG");
    if (crash && *crash == '1')
        raise(SIGSEGV);
    while (hang && *hang == '1')
        sleep(1);
    start_driver();
#endif
    return CHECK_STATUS;
}
#endif

API int fake_sub_marker(void)
{
    return 1;
}
