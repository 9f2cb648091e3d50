/* The facts about NVIDIA's releases (cudnn_facts.h): the table of cuDNN
 * majors, the version encoding, the version readers, the dependencies and
 * the minimum driver per CUDA major. Nothing here touches a file. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/cudnn_facts.h"

/* ---- the table --------------------------------------------------------- */

const struct cdd_cudnn_major cdd_cudnn_majors[CDD_CUDNN_N_MAJORS] = {
    {8, "libcudnn.so.8", "cudnn64_8.dll", 1000, "cudnnGetVersion",
     "cudnnGetCudartVersion", 14,
     /* zlibwapi.dll from 8.3 on (docs/windows.md); an 8.x of unknown minor
      * cannot be told. */
     3, INT_MAX, -1, 6,
     {{"libcudnn_ops_infer.so.8", "cudnn_ops_infer64_8.dll",
       "cudnnOpsInferVersionCheck", 0},
      {"libcudnn_ops_train.so.8", "cudnn_ops_train64_8.dll",
       "cudnnOpsTrainVersionCheck", 0},
      {"libcudnn_cnn_infer.so.8", "cudnn_cnn_infer64_8.dll",
       "cudnnCnnInferVersionCheck", 0},
      {"libcudnn_cnn_train.so.8", "cudnn_cnn_train64_8.dll",
       "cudnnCnnTrainVersionCheck", 0},
      {"libcudnn_adv_infer.so.8", "cudnn_adv_infer64_8.dll",
       "cudnnAdvInferVersionCheck", 0},
      {"libcudnn_adv_train.so.8", "cudnn_adv_train64_8.dll",
       "cudnnAdvTrainVersionCheck", 0}}},
    {9, "libcudnn.so.9", "cudnn64_9.dll", 10000, "cudnnGetVersion",
     "cudnnGetCudartVersion", 1002,
     /* zlibwapi.dll up to 9.1; a 9.x of unknown minor is likely >= 9.2.
      * The sub-libraries as the 9.x archives hold them (conda-forge/
      * cudnn-feedstock's recipe tests the first seven, 9.0 to 9.15);
      * engines_tensor_ir and ext came later (9.2x: present in the 9.23 and
      * 9.25 wheels, absent from 9.20's, pytorch/pytorch#188892), so a
      * manifest lists them only when its archive has them
      * (cdd_manifest_fill_verify). Neither exports a version check. */
     0, 1, 0, 9,
     {{"libcudnn_graph.so.9", "cudnn_graph64_9.dll", "cudnnGraphVersionCheck", 0},
      {"libcudnn_ops.so.9", "cudnn_ops64_9.dll", "cudnnOpsVersionCheck", 0},
      {"libcudnn_cnn.so.9", "cudnn_cnn64_9.dll", "cudnnCnnVersionCheck", 0},
      {"libcudnn_adv.so.9", "cudnn_adv64_9.dll", "cudnnAdvVersionCheck", 0},
      {"libcudnn_engines_precompiled.so.9",
       "cudnn_engines_precompiled64_9.dll", NULL, 0},
      {"libcudnn_engines_runtime_compiled.so.9",
       "cudnn_engines_runtime_compiled64_9.dll", NULL, 0},
      {"libcudnn_heuristic.so.9", "cudnn_heuristic64_9.dll", NULL, 0},
      {"libcudnn_engines_tensor_ir.so.9", "cudnn_engines_tensor_ir64_9.dll",
       NULL, 1},
      {"libcudnn_ext.so.9", "cudnn_ext64_9.dll", NULL, 1}}},
};

const struct cdd_cudnn_major *cdd_cudnn_major_facts(int major)
{
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++)
        if (cdd_cudnn_majors[i].major == major)
            return &cdd_cudnn_majors[i];
    return NULL;
}

const char *cdd_cudnn_main_name(const struct cdd_cudnn_major *f, int windows)
{
    return windows ? f->windows_main : f->linux_main;
}

const char *cdd_cudnn_sub_name(const struct cdd_cudnn_sublib *s, int windows)
{
    return windows ? s->windows_name : s->linux_name;
}

/* ---- the encoding ------------------------------------------------------ */

/* The row whose encoding a major uses: its own, else the nearest below,
 * else the first. */
static const struct cdd_cudnn_major *encoding_of(long long major)
{
    const struct cdd_cudnn_major *f = &cdd_cudnn_majors[0];
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++)
        if (cdd_cudnn_majors[i].major <= major)
            f = &cdd_cudnn_majors[i];
    return f;
}

long long cdd_cudnn_version_encode(long long major, long long minor,
                                   long long patch)
{
    return major * encoding_of(major)->version_base + minor * 100 + patch;
}

int cdd_cudnn_version_split(long v, int *major, int *minor, int *patch)
{
    if (v < 0)
        return -1;
    /* The last row whose smallest value (major.0.0) v reaches. */
    const struct cdd_cudnn_major *f = &cdd_cudnn_majors[0];
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++)
        if (v >= cdd_cudnn_majors[i].major * cdd_cudnn_majors[i].version_base)
            f = &cdd_cudnn_majors[i];
    long b = f->version_base;
    *major = (int)(v / b);
    *minor = (int)((v % b) / 100);
    *patch = (int)(v % 100);
    return 0;
}

char *cdd_cudnn_version_decode(long v, char *buf, size_t len)
{
    int ma = 0, mi = 0, pa = 0;
    if (cdd_cudnn_version_split(v, &ma, &mi, &pa) != 0)
        snprintf(buf, len, "%ld", v);
    else
        snprintf(buf, len, "%d.%d.%d", ma, mi, pa);
    return buf;
}

int cdd_cudnn_version_cmp(long a, long b)
{
    int x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
    cdd_cudnn_version_split(a < 0 ? 0 : a, &x[0], &x[1], &x[2]);
    cdd_cudnn_version_split(b < 0 ? 0 : b, &y[0], &y[1], &y[2]);
    for (int i = 0; i < 3; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* ---- the readers ------------------------------------------------------- */

int cdd_version_dotted(const char *s, long *comp, int max)
{
    int n = 0;
    while (*s) {
        if (n == max || !isdigit((unsigned char)*s))
            return -1;
        long v = 0;
        int digits = 0;
        while (isdigit((unsigned char)*s) && digits < 9) {
            v = v * 10 + (*s++ - '0');
            digits++;
        }
        if (isdigit((unsigned char)*s))
            return -1;
        comp[n++] = v;
        if (*s == '.') {
            s++;
            if (!*s)
                return -1;
        } else if (*s) {
            return -1;
        }
    }
    return n;
}

static int format_version(const long *comp, int n, int major, char *buf,
                          size_t len)
{
    char t[96]; /* fixed: four numbers */
    if (n < 2 || comp[0] != major)
        return -1;
    if (n == 2)
        snprintf(t, sizeof t, "%ld.%ld", comp[0], comp[1]);
    else if (n == 3)
        snprintf(t, sizeof t, "%ld.%ld.%ld", comp[0], comp[1], comp[2]);
    else
        snprintf(t, sizeof t, "%ld.%ld.%ld.%ld", comp[0], comp[1], comp[2],
                 comp[3]);
    if (strlen(t) >= len)
        return -1;
    memcpy(buf, t, strlen(t) + 1);
    return 0;
}

int cdd_cudnn_version_from_name(const char *file_name, int major, char *buf,
                                size_t len)
{
    long comp[4];
    const char *p = strstr(file_name, ".so.");
    if (!p)
        return -1;
    int n = cdd_version_dotted(p + 4, comp, 4);
    return format_version(comp, n, major, buf, len);
}

/* The value after UTF-16LE key "\0" in a version resource's String table. */
static int resource_value(const unsigned char *d, size_t n, const char *key,
                          int major, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + 2 * (kl + 1) <= n; i++) {
        size_t k;
        for (k = 0; k < kl; k++)
            if (d[i + 2 * k] != (unsigned char)key[k] || d[i + 2 * k + 1])
                break;
        if (k < kl || d[i + 2 * kl] || d[i + 2 * kl + 1])
            continue;
        /* The value starts at the next 32-bit boundary of the String
         * structure: skip up to two zero padding characters. */
        size_t j = i + 2 * (kl + 1);
        for (int pad = 0; pad < 2 && j + 1 < n && !d[j] && !d[j + 1]; pad++)
            j += 2;
        char v[40]; /* fixed: a version string, bounded by the loop */
        size_t m = 0;
        while (j + 1 < n && m < sizeof v - 1 && !d[j + 1] &&
               (isdigit(d[j]) || d[j] == '.' || d[j] == ',' || d[j] == ' ')) {
            /* Some resources write "8, 5, 0, 96". */
            if (d[j] != ' ')
                v[m++] = d[j] == ',' ? '.' : (char)d[j];
            j += 2;
        }
        v[m] = '\0';
        /* Only a value whose end is in sight: one cut by the end of the
         * buffer (a chunk boundary) would read as a shorter version. */
        if (j + 1 >= n || d[j] || d[j + 1])
            continue;
        long comp[4];
        int nc = cdd_version_dotted(v, comp, 4);
        if (format_version(comp, nc, major, buf, len) == 0)
            return 0;
    }
    return -1;
}

int cdd_cudnn_version_from_resource(const unsigned char *data, size_t n,
                                    int major, char *buf, size_t len)
{
    if (resource_value(data, n, "ProductVersion", major, buf, len) == 0)
        return 0;
    return resource_value(data, n, "FileVersion", major, buf, len);
}

int cdd_cudnn_version_from_header(const char *text, int *major, int *minor,
                                  int *patch)
{
    static const char *const names[] = {"CUDNN_MAJOR", "CUDNN_MINOR",
                                        "CUDNN_PATCHLEVEL"};
    int *out[] = {major, minor, patch};
    for (size_t k = 0; k < 3; k++) {
        const char *p = text;
        size_t nl = strlen(names[k]);
        *out[k] = -1;
        while ((p = strstr(p, names[k])) != NULL) {
            const char *d = p;
            p += nl;
            /* Only "#define NAME <digits>", not CUDNN_MAJOR in other text. */
            const char *q = d;
            while (q > text && (q[-1] == ' ' || q[-1] == '\t'))
                q--;
            if (q - text < 7 || strncmp(q - 7, "#define", 7) != 0)
                continue;
            if (*p != ' ' && *p != '\t')
                continue;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!isdigit((unsigned char)*p))
                continue;
            *out[k] = (int)strtol(p, NULL, 10);
            break;
        }
        if (*out[k] < 0 || *out[k] > 999)
            return -1;
    }
    return 0;
}

int cdd_cudnn_version_from_header_text(const char *text, int major,
                                       char *buf, size_t len)
{
    int hv[3];
    if (cdd_cudnn_version_from_header(text, &hv[0], &hv[1], &hv[2]) != 0)
        return -1;
    long v[3] = {hv[0], hv[1], hv[2]};
    return format_version(v, 3, major, buf, len);
}

/* ---- dependencies ------------------------------------------------------ */

int cdd_cudnn_needs_zlibwapi(const char *version, int major)
{
    long v[4];
    char b[40]; /* fixed: a version (a longer one is none) */
    const struct cdd_cudnn_major *f;
    snprintf(b, sizeof b, "%s", version ? version : "");
    if (cdd_version_dotted(b, v, 4) < 2) {
        f = cdd_cudnn_major_facts(major);
        return f ? f->zlib_unknown : 0;
    }
    f = cdd_cudnn_major_facts((int)v[0]);
    return f && f->zlib_from >= 0 && v[1] >= f->zlib_from &&
           v[1] <= f->zlib_to;
}

const char *const cdd_msvc_runtime[CDD_MSVC_RUNTIME_N] = {
    "msvcp140.dll", "vcruntime140.dll", "vcruntime140_1.dll"};

struct hint {
    const char *prefix; /* lower-case name prefix */
    const char *what;
};

static const struct hint hints[] = {
    {"zlibwapi", "zlib for Windows (zlibwapi.dll, the ZLIB_WINAPI build), "
                 "which cuDNN " CDD_CUDNN_ZLIBWAPI_RANGE " need and NVIDIA "
                 "does not ship in the archive: put a 64-bit zlibwapi.dll in "
                 "the CUDA tree's bin folder (cudnn-deploy install --with "
                 "zlibwapi takes the pinned one)"},
    {"cublaslt64_", "cuBLASLt of the CUDA toolkit: its bin folder must be on "
                    "PATH"},
    {"cublas64_", "cuBLAS of the CUDA toolkit: its bin folder must be on PATH"},
    {"libcublaslt.so", "cuBLASLt of the CUDA toolkit: its lib64 folder must "
                       "be on LD_LIBRARY_PATH or in /etc/ld.so.conf.d"},
    {"libcublas.so", "cuBLAS of the CUDA toolkit: its lib64 folder must be on "
                     "LD_LIBRARY_PATH or in /etc/ld.so.conf.d"},
    {"cudart64_", "the CUDA runtime of the CUDA toolkit (bin folder on PATH)"},
    {"libcudart.so", "the CUDA runtime of the CUDA toolkit (lib64 on the "
                     "library path)"},
    {"nvrtc", "NVRTC of the CUDA toolkit (on the library path)"},
    {"libnvrtc", "NVRTC of the CUDA toolkit (on the library path)"},
    {"msvcp140", "the Microsoft Visual C++ 2015-2022 Redistributable (x64)"},
    {"vcruntime140", "the Microsoft Visual C++ 2015-2022 Redistributable "
                     "(x64)"},
    {"nvcuda.dll", "the NVIDIA display driver"},
    {"libcuda.so", "the NVIDIA driver"},
    {"libz.so", "zlib (Debian/Ubuntu: apt install zlib1g)"},
    {"libstdc++.so", "the GNU C++ runtime (apt install libstdc++6)"},
};

const char *cdd_dependency_hint(const char *name)
{
    char low[64]; /* fixed: compared with the known names, all shorter */
    size_t i;
    for (i = 0; i < sizeof low - 1 && name[i]; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    for (size_t k = 0; k < sizeof hints / sizeof hints[0]; k++)
        if (strncmp(low, hints[k].prefix, strlen(hints[k].prefix)) == 0)
            return hints[k].what;
    if (strncmp(low, "libcudnn", 8) == 0 || strncmp(low, "cudnn", 5) == 0)
        return "another library of this cuDNN: install the whole archive";
    return NULL;
}

/* ---- CUDA -------------------------------------------------------------- */

int cdd_cuda_version_major(long v)
{
    return (int)(v / 1000);
}

int cdd_cuda_version_minor(long v)
{
    return (int)((v % 1000) / 10);
}

/* ---- the driver -------------------------------------------------------- */

/* NVIDIA's "minimum required driver version for CUDA minor version
 * compatibility" table (CUDA Toolkit release notes; CUDA Compatibility
 * guide). */
static const struct {
    int cuda_major;
    const char *linux_min, *windows_min;
} min_drivers[] = {
    {11, "450.80.02", "452.39"},
    {12, "525.60.13", "527.41"},
    {13, "580", "580"},
};

const char *cdd_cuda_min_driver(int cuda_major, int windows)
{
    for (size_t i = 0; i < sizeof min_drivers / sizeof min_drivers[0]; i++)
        if (min_drivers[i].cuda_major == cuda_major)
            return windows ? min_drivers[i].windows_min
                           : min_drivers[i].linux_min;
    return NULL;
}
