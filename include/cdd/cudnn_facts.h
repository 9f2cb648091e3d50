/* What NVIDIA's releases are, in one place: one row per cuDNN major (its
 * libraries as file names per platform, each sub-library's version-check
 * symbol, the cudnnGetVersion() encoding, the version-mismatch status, the
 * zlibwapi.dll range), the dependencies cuDNN's libraries import and what
 * provides them, the minimum driver per CUDA major, and the one reader of a
 * cuDNN version (cudnn_version.h text, a real file name, a DLL's version
 * resource) that manifest create, verify and doctor share.
 *
 * The manifest stays the authority on what a given archive holds (its
 * verify section lists the libraries and check symbols verify uses); this
 * table supplies the defaults `manifest create` writes there, and what
 * doctor, which has no manifest, looks for.
 *
 * Adding a cuDNN major is one row in cdd_cudnn_majors[] (cudnn_facts.c) and
 * CDD_CUDNN_N_MAJORS here: its file names, check symbols, version base and
 * mismatch status; nothing else in the program names a major. A new CUDA
 * major's minimum driver is one row in the driver table of cudnn_facts.c. */
#ifndef CDD_CUDNN_FACTS_H
#define CDD_CUDNN_FACTS_H

#include <stddef.h>

#define CDD_CUDNN_N_MAJORS 2
#define CDD_CUDNN_MAX_SUBS 10 /* sub-libraries of a major, at most */

struct cdd_cudnn_sublib {
    const char *linux_name;   /* "libcudnn_ops_infer.so.8" */
    const char *windows_name; /* "cudnn_ops_infer64_8.dll" */
    const char *check_symbol; /* "cudnnOpsInferVersionCheck"; NULL: the
                                 library exports none (cuDNN 9's engines and
                                 heuristic): loaded and its dependencies
                                 checked, nothing more */
    int optional;             /* 1: only some releases of the major ship it
                                 (cuDNN 9's engines_tensor_ir, ext): its
                                 absence is no fault */
};

struct cdd_cudnn_major {
    int major;
    const char *linux_main;   /* "libcudnn.so.8": what programs ask for */
    const char *windows_main; /* "cudnn64_8.dll" */
    /* cudnnGetVersion() = major * version_base + minor * 100 + patch. */
    long version_base;        /* 1000 (cuDNN 8), 10000 (cuDNN 9) */
    const char *version_symbol; /* "cudnnGetVersion" */
    const char *cudart_symbol;  /* "cudnnGetCudartVersion" */
    /* What a sub-library's version check returns when it was built for
     * another version of the main library: CUDNN_STATUS_VERSION_MISMATCH. */
    int mismatch_status;      /* 14 (cuDNN 8), 1002 (cuDNN 9) */
    /* Windows: the minors [zlib_from, zlib_to] import zlibwapi.dll; -1 -1
     * none. zlib_unknown: the answer when the minor is not known (1 yes, 0
     * no, -1 cannot tell). */
    int zlib_from, zlib_to, zlib_unknown;
    size_t n_subs;
    struct cdd_cudnn_sublib subs[CDD_CUDNN_MAX_SUBS];
};

extern const struct cdd_cudnn_major cdd_cudnn_majors[CDD_CUDNN_N_MAJORS];

/* The row of a cuDNN major, or NULL when the table has none. */
const struct cdd_cudnn_major *cdd_cudnn_major_facts(int major);

/* The main library's and a sub-library's file name on the platform. */
const char *cdd_cudnn_main_name(const struct cdd_cudnn_major *f, int windows);
const char *cdd_cudnn_sub_name(const struct cdd_cudnn_sublib *s, int windows);

/* ---- cudnnGetVersion()'s encoding ------------------------------------------
 * cuDNN 8: major*1000 + minor*100 + patch (8.9.7 -> 8907); cuDNN 9:
 * major*10000 + minor*100 + patch (9.0.0 -> 90000, 9.14.0 -> 91400). Two
 * numbers of different encodings do not compare: compare the versions
 * (cdd_cudnn_version_cmp). A major outside the table takes the encoding of
 * the nearest major below it (the first row's for those below all). */
long long cdd_cudnn_version_encode(long long major, long long minor,
                                   long long patch);
/* Split a cudnnGetVersion() value; returns 0, or -1 for v < 0. */
int cdd_cudnn_version_split(long v, int *major, int *minor, int *patch);
/* "8.5.0" from 8500 or 91400 into buf; returns buf. */
char *cdd_cudnn_version_decode(long v, char *buf, size_t len);
/* <0, 0, >0 as the versions a and b (cudnnGetVersion() values) compare. */
int cdd_cudnn_version_cmp(long a, long b);

/* ---- reading a version ------------------------------------------------- */

/* Where an archive (and a CUDA or cuDNN tree) keeps the version header. */
#define CDD_CUDNN_VERSION_HEADER "include/cudnn_version.h"

/* Up to max numeric components of "8.5.0.96" into comp: the count, or -1
 * when s is not digits separated by single dots (empty parts, a trailing
 * dot, other characters, a component over 9 digits). */
int cdd_version_dotted(const char *s, long *comp, int max);

/* CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL from cudnn_version.h text
 * (only "#define NAME <digits>" lines count). 0, or -1 when one is missing
 * or over 999. */
int cdd_cudnn_version_from_header(const char *text, int *major, int *minor,
                                  int *patch);

/* The following write "8.5.0" into buf and return 0, or -1 when the input
 * says nothing usable. major: the version the library's name promises
 * (libcudnn.so.8 -> 8); a source that disagrees is not believed. */
/* "libcudnn.so.8.5.0", "libcudnn_ops_infer.so.8.5.0" (at least X.Y). */
int cdd_cudnn_version_from_name(const char *file_name, int major, char *buf,
                                size_t len);
/* Header text, held to major. */
int cdd_cudnn_version_from_header_text(const char *text, int major,
                                       char *buf, size_t len);
/* The ProductVersion or FileVersion string of a PE version resource found
 * in data (UTF-16LE "ProductVersion\0" + value), as X.Y.Z[.B]. */
int cdd_cudnn_version_from_resource(const unsigned char *data, size_t n,
                                    int major, char *buf, size_t len);

/* ---- dependencies ------------------------------------------------------ */

/* The cuDNN versions that import zlibwapi.dll on Windows, for messages;
 * the same range as the table's zlib_from / zlib_to. */
#define CDD_CUDNN_ZLIBWAPI_RANGE "8.3 to 9.1"

/* Does cuDNN of version ("8.5.0", "9.1", "" unknown) import zlibwapi.dll
 * on Windows? major: the library's major, for an unknown version. 1 yes,
 * 0 no, -1 cannot tell. */
int cdd_cudnn_needs_zlibwapi(const char *version, int major);

/* The Visual C++ runtime DLLs cuDNN's Windows libraries import. */
#define CDD_MSVC_RUNTIME_N 3
extern const char *const cdd_msvc_runtime[CDD_MSVC_RUNTIME_N];

/* What provides a commonly missing dependency ("zlibwapi.dll" -> "zlib for
 * Windows ...", "libcublasLt.so.12" -> cuBLASLt of the CUDA toolkit), or
 * NULL. cuBLAS and cuBLASLt carry the CUDA major in their names
 * (cublas64_12.dll, libcublas.so.12): the toolkit of that major. */
const char *cdd_dependency_hint(const char *name);

/* ---- CUDA -------------------------------------------------------------- */

/* CUDA's version numbers (CUDA_VERSION in cuda.h, cuDriverGetVersion(),
 * cudnnGetCudartVersion()): major*1000 + minor*10 (11080 is CUDA 11.8). */
int cdd_cuda_version_major(long v);
int cdd_cuda_version_minor(long v);

/* The oldest driver release that runs a CUDA major's minor versions
 * (NVIDIA's minor-version compatibility table): 11 -> "450.80.02" (Linux)
 * / "452.39" (Windows); 12 -> "525.60.13" / "527.41"; 13 -> "580". NULL
 * for majors without minor-version compatibility (10 and older). */
const char *cdd_cuda_min_driver(int cuda_major, int windows);

#endif
