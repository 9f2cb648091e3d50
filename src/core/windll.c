/* The Windows Python DLL-search advice (windll.h). */
#include "cdd/windll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *cdd_windll_python_fix(const char *dir)
{
    static const char fmt[] =
        "Python 3.8+ does not search PATH for the DLLs of torch, "
        "onnxruntime or ctranslate2: in Python, before importing them, run "
        "os.add_dll_directory(r\"%s\") and load each cudnn*.dll there by "
        "full path with ctypes.CDLL (onnxruntime >= 1.21: "
        "onnxruntime.preload_dlls(directory=r\"%s\")); PATH still serves "
        "programs that are not Python and TensorFlow <= 2.10 "
        "(docs/windows.md)";
    size_t len = sizeof fmt + 2 * strlen(dir);
    char *s = malloc(len);
    if (s)
        snprintf(s, len, fmt, dir, dir);
    return s;
}
