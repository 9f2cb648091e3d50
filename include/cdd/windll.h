/* The fix for cuDNN DLLs that Python >= 3.8 cannot find on Windows.
 *
 * Python 3.8 stopped searching PATH for the DLLs an extension module
 * imports (it loads extensions with LOAD_LIBRARY_SEARCH_DEFAULT_DIRS: the
 * module's folder, System32 and folders added with os.add_dll_directory).
 * What the packages that load cuDNN really do (docs/windows.md, "Python
 * 3.8 and later", with the sources):
 *  - torch: os.add_dll_directory(torch\lib and the environment's
 *    Library\bin), then LoadLibraryExW of every torch\lib\*.dll by full
 *    path (torch/__init__.py, _load_dll_libraries);
 *  - onnxruntime-gpu: preloads cudnn*.dll and the CUDA DLLs of
 *    site-packages\nvidia by full path under os.add_dll_directory
 *    (onnxruntime/__init__.py), and from 1.21 on
 *    onnxruntime.preload_dlls(directory=...);
 *  - ctranslate2: os.add_dll_directory(its package folder) and
 *    ctypes.CDLL of every DLL there (python/ctranslate2/__init__.py);
 *    cuDNN is found only if it is there or already loaded;
 *  - TensorFlow <= 2.10 (its last native Windows GPU build): loads
 *    cudnn64_8.dll by name at run time (its dso_loader), which does
 *    search PATH.
 * What works for all of them: before the import, os.add_dll_directory of
 * cuDNN's DLL folder and ctypes.CDLL of each cudnn*.dll by full path (a
 * DLL already loaded is what a later load by bare name gets). */
#ifndef CDD_WINDLL_H
#define CDD_WINDLL_H

/* The advice for cuDNN's DLL folder dir (as shown to the user), one
 * sentence group: malloc'd, NULL when out of memory. */
char *cdd_windll_python_fix(const char *dir);

#endif
