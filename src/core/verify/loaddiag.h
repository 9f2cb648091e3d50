/* Why the platform loader refused a library, in more words than its own.
 *
 * The loader's message for Windows error 126 names the library asked for,
 * which misleads users into thinking cudnn_cnn_infer64_8.dll is missing when
 * it is zlibwapi.dll. Reading import tables is verify's (binfile.h), so the
 * explanation is made here, from where the platform loader says each import
 * resolves (loader.h: cdd_lib_dep_find, cdd_lib_find_on_path). */
#ifndef CDD_LOADDIAG_H
#define CDD_LOADDIAG_H

struct cdd_lib;

/* cdd_lib_open(), and when the loader refused the library (CDD_E_CHECK):
 * Windows 126 appends the imports that cannot be found, walked a few levels
 * deep (each with the library needing it, and a copy on PATH the loader does
 * not look at), or that every import was found; 193 appends the file's
 * machine and format. The error keeps its code, path and os_err. */
int cdd_lib_open_explained(const char *abs_path, struct cdd_lib **out);

#endif
