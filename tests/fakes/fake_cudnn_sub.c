/* A fake cuDNN sub-library (libcudnn_ops_infer.so.8, cudnn_cnn64_9.dll ...)
 * exporting its version-check function, for verify's load layer. Built by
 * the tests with:
 *   -DCHECK_SYMBOL=cudnnOpsInferVersionCheck  the export (omit: none)
 *   -DCHECK_STATUS=0                          what it returns (14: mismatch)
 * and linked, for the "missing dependency" case, against a stub whose file
 * is then withheld from the archive. */
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
API int CHECK_SYMBOL(void)
{
    return CHECK_STATUS;
}
#endif

API int fake_sub_marker(void)
{
    return 1;
}
