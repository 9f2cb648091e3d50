/* Fake cudnn_ops_infer64_8.dll that imports zlibwapi.dll, as the real 8.3-9.1
 * DLLs do; the tests install it without zlibwapi.dll beside it, which is the
 * "error 126" users hit. */
__declspec(dllimport) int uncompress(unsigned char *dest, unsigned long *len,
                                     const unsigned char *src,
                                     unsigned long srclen);

__declspec(dllexport) int cudnnOpsInferVersionCheck(void)
{
    unsigned long n = 0;
    return uncompress(0, &n, 0, 0) == -2 ? 0 : 14;
}
