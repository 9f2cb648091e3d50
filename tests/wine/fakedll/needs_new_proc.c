/* Fake cudnn_cnn_infer64_8.dll that imports a function only the newer
 * version of its dependency exports (error 127 beside the older one). */
__declspec(dllimport) int cdd_fake_new_function(void);

__declspec(dllexport) int cudnnCnnInferVersionCheck(void)
{
    return cdd_fake_new_function() == 2 ? 0 : 14;
}
