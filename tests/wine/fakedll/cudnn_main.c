/* Fake cudnn64_8.dll for the Windows tests: loads, and reports 8.5.0 the
 * way the real one does. A hook for the verify tests (which will add the
 * sub-libraries' version checks). */
#include <stddef.h>

__declspec(dllexport) size_t cudnnGetVersion(void)
{
    return 8500;
}

__declspec(dllexport) size_t cudnnGetCudartVersion(void)
{
    return 11060;
}
