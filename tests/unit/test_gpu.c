/* verify's gpu and bench layers (gpu.h) and the library loader (loader.h),
 * end to end without a GPU: a fake driver and a fake cuDNN (tests/fakes/)
 * are built here at run time with the C compiler (or taken from
 * CDD_FAKE_CUDA_LIB / CDD_FAKE_CUDNN_LIB), the driver is found through
 * CUDNN_DEPLOY_DRIVER_LIB or LD_LIBRARY_PATH, and the convolution check,
 * its failure modes (wrong result, cuDNN and CUDA errors, no device, no
 * driver) and a small benchmark are run against them. The fakes count
 * leaked allocations, unreleased contexts and calls of the wrong ABI
 * variant (legacy cuMemAlloc, CUDA 13's cuCtxSynchronize_v2), which must
 * all stay at zero. */
#include "test.h"

#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/gpu.h"
#include "cdd/loader.h"

#include <sys/stat.h>
#include <unistd.h>

static char tmp[1024];
static char fake_cuda[1200];    /* .../driver/libcuda.so.1 -> so.575.51.03 */
static char fake_cudnn[1200];   /* full fake cuDNN */
static char fake_cudnn_min[1200]; /* without math type and algorithm queries */
static struct cdd_lib *cuda_hold; /* keeps the fake's state between tests */

static const char *cc(void)
{
    const char *c = getenv("CC");
    return c && *c ? c : "cc";
}

static void sh(const char *cmd)
{
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        exit(1);
    }
}

/* tests/fakes, from CDD_FAKES_DIR or next to this source file. */
static void fakes_dir(char *out, size_t len)
{
    const char *env = getenv("CDD_FAKES_DIR");
    if (env && *env) {
        snprintf(out, len, "%s", env);
        return;
    }
    char here[1024];
    snprintf(here, sizeof here, "%s", __FILE__);
    char *slash = strrchr(here, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(here, sizeof here, ".");
    if (here[0] == '/') {
        snprintf(out, len, "%s/../fakes", here);
    } else {
        char cwd[1024];
        if (!getcwd(cwd, sizeof cwd))
            exit(1);
        snprintf(out, len, "%s/%s/../fakes", cwd, here);
    }
}

static void setup(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    snprintf(tmp, sizeof tmp, "%s/gpu-%ld", base ? base : "/tmp",
             (long)getpid());
    char cmd[8192], src[2200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s/driver' '%s/bad'",
             tmp, tmp, tmp);
    sh(cmd);
    fakes_dir(src, sizeof src);
    /* The driver as the NVIDIA installer lays it out: the real file named
     * after the release, libcuda.so.1 a link to it. */
    snprintf(fake_cuda, sizeof fake_cuda, "%s/driver/libcuda.so.1", tmp);
    const char *given = getenv("CDD_FAKE_CUDA_LIB");
    if (given && *given)
        snprintf(cmd, sizeof cmd, "cp '%s' '%s/driver/libcuda.so.575.51.03'",
                 given, tmp);
    else
        snprintf(cmd, sizeof cmd,
                 "%s -std=c11 -O1 -shared -fPIC -o "
                 "'%s/driver/libcuda.so.575.51.03' '%s/fake_cuda.c'",
                 cc(), tmp, src);
    sh(cmd);
    snprintf(cmd, sizeof cmd, "ln -s libcuda.so.575.51.03 '%s'", fake_cuda);
    sh(cmd);
    snprintf(fake_cudnn, sizeof fake_cudnn, "%s/libcudnn.so.8", tmp);
    given = getenv("CDD_FAKE_CUDNN_LIB");
    if (given && *given)
        snprintf(cmd, sizeof cmd, "cp '%s' '%s'", given, fake_cudnn);
    else
        snprintf(cmd, sizeof cmd,
                 "%s -std=c11 -O1 -shared -fPIC -o '%s' '%s/fake_cudnn_conv.c'",
                 cc(), fake_cudnn, src);
    sh(cmd);
    snprintf(fake_cudnn_min, sizeof fake_cudnn_min, "%s/min/libcudnn.so.8",
             tmp);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/min' && %s -std=c11 -O1 -shared -fPIC "
             "-DFAKE_CUDNN_MINIMAL -o '%s' '%s/fake_cudnn_conv.c'",
             tmp, cc(), fake_cudnn_min, src);
    sh(cmd);
    /* Not a library, under the driver's name, for the search tests. */
    snprintf(cmd, sizeof cmd, "echo 'not ELF' > '%s/bad/libcuda.so.1'", tmp);
    sh(cmd);
    if (cdd_lib_open(fake_cuda, &cuda_hold) != 0) {
        fprintf(stderr, "cannot load the fake driver\n");
        exit(1);
    }
    setenv("CUDNN_DEPLOY_DRIVER_LIB", fake_cuda, 1);
}

static int fake_count(const char *fn)
{
    int (*f)(void) = (int (*)(void))cdd_lib_func(cuda_hold, fn);
    return f ? f() : -1;
}

/* No leaked device memory, no retained context, no wrong ABI variant. */
static void check_fake_clean(void)
{
    CHECK_INT(fake_count("fake_cuda_live_allocs"), 0);
    CHECK_INT(fake_count("fake_cuda_retain_count"), 0);
    CHECK_INT(fake_count("fake_cuda_misuse"), 0);
}

static const char *last_msg(void)
{
    return cdd_last_error()->msg;
}

/* ---- loader ------------------------------------------------------------ */

static void test_lib_open_rules(void)
{
    struct cdd_lib *l = NULL;
    CHECK_INT(cdd_lib_open("libcuda.so.1", &l), CDD_E_USAGE);
    CHECK(l == NULL);
    CHECK_INT(cdd_lib_open("driver/libcuda.so.1", &l), CDD_E_USAGE);
    CHECK_INT(cdd_lib_open("/nonexistent/libfoo.so.1", &l), CDD_E_NOTFOUND);
    /* The loader's own words come back for a file it refuses. */
    char bad[1200];
    snprintf(bad, sizeof bad, "%s/bad/libcuda.so.1", tmp);
    CHECK_INT(cdd_lib_open(bad, &l), CDD_E_CHECK);
    CHECK_MSG(strstr(last_msg(), "libcuda.so.1") != NULL &&
                  (strstr(last_msg(), "ELF") || strstr(last_msg(), "short")),
              "message: %s", last_msg());
    CHECK_INT(cdd_lib_open(fake_cudnn, &l), 0);
    CHECK(cdd_lib_sym(l, "cudnnCreate") != NULL);
    CHECK(cdd_lib_func(l, "cudnnConvolutionForward") != NULL);
    CHECK(cdd_lib_sym(l, "cudnnNoSuchFunction") == NULL);
    CHECK(cdd_lib_func(l, "cudnnNoSuchFunction") == NULL);
    CHECK_STR(cdd_lib_path(l), fake_cudnn);
    cdd_lib_close(l);
    cdd_lib_close(NULL);
}

static void test_driver_override(void)
{
    char *p = NULL;
    CHECK_INT(cdd_driver_library_path(&p), 0);
    CHECK_STR(p, fake_cuda);
    free(p);
    setenv("CUDNN_DEPLOY_DRIVER_LIB", "driver/libcuda.so.1", 1);
    CHECK_INT(cdd_driver_library_path(&p), CDD_E_USAGE);
    setenv("CUDNN_DEPLOY_DRIVER_LIB", "/nonexistent/libcuda.so.1", 1);
    CHECK_INT(cdd_driver_library_path(&p), CDD_E_NOTFOUND);
    CHECK(p == NULL);
    setenv("CUDNN_DEPLOY_DRIVER_LIB", fake_cuda, 1);
}

/* With no override, LD_LIBRARY_PATH comes first, entries ld.so would skip
 * (missing folders, non-ELF files) are skipped, and the path is absolute. */
static void test_driver_search(void)
{
    const char *old = getenv("LD_LIBRARY_PATH");
    char *saved = old ? strdup(old) : NULL;
    char llp[4096];
    unsetenv("CUDNN_DEPLOY_DRIVER_LIB");
    snprintf(llp, sizeof llp, "/nonexistent:%s/bad::%s/driver", tmp, tmp);
    setenv("LD_LIBRARY_PATH", llp, 1);
    char *p = NULL;
    CHECK_INT(cdd_driver_library_path(&p), 0);
    CHECK_STR(p, fake_cuda);
    free(p);
    char **all = NULL;
    size_t n = 0;
    CHECK_INT(cdd_lib_find_all("libcuda.so.1", &all, &n), 0);
    CHECK(n >= 1);
    if (n >= 1)
        CHECK_STR(all[0], fake_cuda);
    for (size_t i = 0; i < n; i++)
        CHECK(all[i][0] == '/');
    cdd_lib_paths_free(all, n);
    /* The same folder twice, once by a relative name: listed once. */
    char cwd[1024];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(tmp) == 0);
    snprintf(llp, sizeof llp, "driver;%s/driver", tmp);
    setenv("LD_LIBRARY_PATH", llp, 1);
    CHECK_INT(cdd_lib_find_all("libcuda.so.1", &all, &n), 0);
    CHECK(n >= 1);
    if (n >= 1)
        CHECK_STR(all[0], fake_cuda);
    for (size_t i = 1; i < n; i++)
        CHECK(strstr(all[i], tmp) != all[i]);
    cdd_lib_paths_free(all, n);
    CHECK(chdir(cwd) == 0);
    CHECK_INT(cdd_lib_find_all("lib/libcuda.so.1", &all, &n), CDD_E_USAGE);
    /* No override and nothing on LD_LIBRARY_PATH: either this machine has
     * a real driver (an absolute path to an existing file) or "no driver". */
    unsetenv("LD_LIBRARY_PATH");
    int r = cdd_driver_library_path(&p);
    if (r == 0) {
        CHECK(p[0] == '/' && access(p, F_OK) == 0);
        free(p);
    } else {
        CHECK_INT(r, CDD_E_NOTFOUND);
    }
    if (saved)
        setenv("LD_LIBRARY_PATH", saved, 1);
    free(saved);
    setenv("CUDNN_DEPLOY_DRIVER_LIB", fake_cuda, 1);
}

/* ---- driver ------------------------------------------------------------ */

static void test_no_driver(void)
{
    struct cdd_gpu_env *g = NULL;
    setenv("CUDNN_DEPLOY_DRIVER_LIB", "/nonexistent/libcuda.so.1", 1);
    CHECK_INT(cdd_gpu_env_open(NULL, &g), CDD_E_NOTFOUND);
    CHECK(g == NULL);
    setenv("CUDNN_DEPLOY_DRIVER_LIB", fake_cuda, 1);
    CHECK_INT(cdd_gpu_env_open("/nonexistent/libcuda.so.1", &g),
              CDD_E_NOTFOUND);
    /* A library that is not a driver fails (it is there, but unusable). */
    CHECK_INT(cdd_gpu_env_open(fake_cudnn, &g), CDD_E_CHECK);
    CHECK_MSG(strstr(last_msg(), "cuInit") != NULL, "%s", last_msg());
    cdd_gpu_env_close(NULL);
}

static void test_driver_info(void)
{
    struct cdd_gpu_env *g = NULL;
    setenv("FAKE_CUDA_DRIVER_VERSION", "12040", 1);
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    unsetenv("FAKE_CUDA_DRIVER_VERSION");
    if (!g)
        return;
    const struct cdd_gpu_info *in = cdd_gpu_env_info(g);
    CHECK_INT(in->driver_cuda_version, 12040);
    CHECK_STR(cdd_gpu_env_driver_path(g), fake_cuda);
    CHECK_STR(in->driver_release, "575.51.03");
    CHECK_INT(in->device, -1);
    CHECK_INT(in->initialized, 0);
    CHECK_INT(cdd_gpu_env_device(g, 1), CDD_E_USAGE); /* one device only */
    CHECK_MSG(strstr(last_msg(), "no CUDA device 1 (the driver sees 1)"), "%s",
              last_msg());
    cdd_gpu_env_close(g);
    g = NULL;
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    CHECK_INT(cdd_gpu_env_device(g, 0), 0);
    in = cdd_gpu_env_info(g);
    CHECK_INT(in->initialized, 1);
    CHECK_INT(in->device_count, 1);
    CHECK_INT(in->device, 0);
    CHECK(strstr(in->device_name, "Fake GPU") == in->device_name);
    CHECK_INT(in->cc_major, 9);
    CHECK_INT(in->cc_minor, 0);
    CHECK(in->total_mem == (uint64_t)1 << 30);
    CHECK_INT(in->driver_cuda_version, 11080); /* the fake's default */
    CHECK_INT(fake_count("fake_cuda_retain_count"), 1);
    CHECK_INT(cdd_gpu_env_device(g, 0), CDD_E_USAGE); /* only once */
    cdd_gpu_env_close(g);
    check_fake_clean();
}

static void test_no_device(void)
{
    struct cdd_gpu_env *g = NULL;
    setenv("FAKE_CUDA_NO_DEVICE", "1", 1);
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    if (g) {
        /* The version is known although no GPU can be used. */
        CHECK_INT(cdd_gpu_env_info(g)->driver_cuda_version, 11080);
        CHECK_INT(cdd_gpu_env_device(g, 0), CDD_E_NOTFOUND);
        CHECK_MSG(strstr(last_msg(), "cuInit") &&
                      strstr(last_msg(), "CUDA_ERROR_NO_DEVICE"),
                  "%s", last_msg());
    }
    unsetenv("FAKE_CUDA_NO_DEVICE");
    cdd_gpu_env_close(g);
    g = NULL;
    setenv("FAKE_CUDA_INIT_ERROR", "803", 1);
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    if (g) {
        CHECK_INT(cdd_gpu_env_device(g, 0), CDD_E_CHECK);
        CHECK_MSG(strstr(last_msg(), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
                  "%s", last_msg());
    }
    unsetenv("FAKE_CUDA_INIT_ERROR");
    cdd_gpu_env_close(g);
    check_fake_clean();
}

static void test_driver_fit(void)
{
    char b[16];
    CHECK_STR(cdd_cuda_version_str(13000, b, sizeof b), "13.0");
    CHECK_STR(cdd_cuda_version_str(11080, b, sizeof b), "11.8");
    CHECK_STR(cdd_cuda_version_str(12040, b, sizeof b), "12.4");
    CHECK_STR(cdd_cuda_min_driver(11, 0), "450.80.02");
    CHECK_STR(cdd_cuda_min_driver(11, 1), "452.39");
    CHECK_STR(cdd_cuda_min_driver(12, 0), "525.60.13");
    CHECK_STR(cdd_cuda_min_driver(12, 1), "527.41");
    CHECK_STR(cdd_cuda_min_driver(13, 0), "580");
    CHECK(cdd_cuda_min_driver(10, 0) == NULL);
    CHECK(cdd_driver_release_cmp("580", "580.65.06") < 0);
    CHECK(cdd_driver_release_cmp("580.65.06", "580") > 0);
    CHECK(cdd_driver_release_cmp("450.80.02", "450.80.2") == 0);
    CHECK(cdd_driver_release_cmp("525.60.13", "450.80.02") > 0);
    CHECK(cdd_driver_release_cmp("450.36.06", "450.80.02") < 0);
    CHECK(cdd_driver_release_cmp("", "") == 0);
    /* Newer major or same-or-newer minor: native. */
    CHECK_INT(cdd_gpu_driver_fit(13000, NULL, 11, 6), CDD_DRV_NATIVE);
    CHECK_INT(cdd_gpu_driver_fit(13000, NULL, 13, 0), CDD_DRV_NATIVE);
    CHECK_INT(cdd_gpu_driver_fit(11080, NULL, 11, 6), CDD_DRV_NATIVE);
    /* Older major: too old. */
    CHECK_INT(cdd_gpu_driver_fit(11080, NULL, 12, 0), CDD_DRV_TOO_OLD);
    CHECK_INT(cdd_gpu_driver_fit(12090, "575.51.03", 13, 0), CDD_DRV_TOO_OLD);
    /* Same major, older minor: minor-version compatibility (CUDA >= 11),
     * unless the release is known to be below the family's minimum. */
    CHECK_INT(cdd_gpu_driver_fit(11000, NULL, 11, 6), CDD_DRV_MINOR_COMPAT);
    CHECK_INT(cdd_gpu_driver_fit(11000, "450.80.02", 11, 6),
              CDD_DRV_MINOR_COMPAT);
    CHECK_INT(cdd_gpu_driver_fit(11000, "450.36.06", 11, 6), CDD_DRV_TOO_OLD);
    CHECK_INT(cdd_gpu_driver_fit(10010, NULL, 10, 2), CDD_DRV_TOO_OLD);
    CHECK_INT(cdd_gpu_driver_fit(0, NULL, 11, 6), CDD_DRV_TOO_OLD);
    CHECK_STR(cdd_cudnn_algo_name(1), "IMPLICIT_PRECOMP_GEMM");
    CHECK_STR(cdd_cudnn_algo_name(42), "unknown");
    CHECK_STR(cdd_cudnn_math_name(3), "FMA_MATH");
}

/* ---- convolution check --------------------------------------------------- */

static struct cdd_gpu_env *open_device(void)
{
    struct cdd_gpu_env *g = NULL;
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    if (g && cdd_gpu_env_device(g, 0) != 0) {
        CHECK_MSG(0, "device: %s", last_msg());
        cdd_gpu_env_close(g);
        g = NULL;
    }
    return g;
}

static int fake_dnn_count(struct cdd_lib *l, const char *fn)
{
    int (*f)(void) = (int (*)(void))cdd_lib_func(l, fn);
    return f ? f() : -2;
}

static void test_conv_check_pass(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_conv_result res;
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        int r = cdd_gpu_conv_check(g, dnn, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.ran, 1);
        CHECK_INT(res.pass, 1);
        CHECK_MSG(res.max_rel_err < 1e-5, "error %g", res.max_rel_err);
        CHECK(res.tolerance == 1e-3);
        /* The heuristic's first FMA entry: precomputed GEMM, workspace. */
        CHECK_INT(res.algo, 1);
        CHECK_INT(res.math_type, 3);
        CHECK_INT(res.workspace, 4096);
        CHECK_INT(res.cudnn_version, 8500);
        CHECK_INT(res.out_n, 1);
        CHECK_INT(res.out_c, 16);
        CHECK_INT(res.out_h, 32);
        CHECK_INT(res.out_w, 32);
        /* It ran with FMA math: TF32 never touched the check. */
        CHECK_INT(fake_dnn_count(dnn, "fake_cudnn_last_math"), 3);
    }
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

static void test_conv_check_corrupt(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_conv_result res;
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    setenv("FAKE_CUDNN_CONV_CORRUPT", "1", 1);
    if (g && dnn) {
        CHECK_INT(cdd_gpu_conv_check(g, dnn, &res), CDD_E_CHECK);
        CHECK_INT(res.ran, 1);
        CHECK_INT(res.pass, 0);
        CHECK(res.max_rel_err > 1e-3);
        CHECK(res.max_abs_err > 0.4 && res.max_abs_err < 0.6);
        CHECK_INT(res.worst_index, 16 * 32 * 32 / 2);
        CHECK_MSG(strstr(last_msg(), "differs from the CPU reference") &&
                      strstr(last_msg(), "k=8 y=0 x=0"),
                  "%s", last_msg());
    }
    unsetenv("FAKE_CUDNN_CONV_CORRUPT");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* A cuDNN without cudnnSetConvolutionMathType and algorithm queries:
 * default math reported, IMPLICIT_GEMM used. */
static void test_conv_check_minimal(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_conv_result res;
    CHECK_INT(cdd_lib_open(fake_cudnn_min, &dnn), 0);
    CHECK(cdd_lib_sym(dnn, "cudnnSetConvolutionMathType") == NULL);
    if (g && dnn) {
        int r = cdd_gpu_conv_check(g, dnn, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.pass, 1);
        CHECK_INT(res.math_type, -1);
        CHECK_INT(res.algo, 0);
        CHECK_INT(res.workspace, 0);
    }
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* The first-ranked algorithm fails at run time: the next one is used. */
static void test_conv_check_fallback(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_conv_result res;
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    setenv("FAKE_CUDNN_FAIL_ALGO", "1", 1);
    if (g && dnn) {
        int r = cdd_gpu_conv_check(g, dnn, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.pass, 1);
        CHECK_INT(res.algo, 0);
        CHECK_INT(res.workspace, 0);
    }
    unsetenv("FAKE_CUDNN_FAIL_ALGO");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    /* With the minimal library only IMPLICIT_GEMM is tried; when it fails,
     * its failure is reported. */
    g = open_device();
    dnn = NULL;
    CHECK_INT(cdd_lib_open(fake_cudnn_min, &dnn), 0);
    setenv("FAKE_CUDNN_FAIL_ALGO", "0", 1);
    if (g && dnn) {
        CHECK_INT(cdd_gpu_conv_check(g, dnn, &res), CDD_E_CHECK);
        CHECK_INT(res.ran, 0);
        CHECK_MSG(strstr(last_msg(), "cudnnConvolutionForward(IMPLICIT_GEMM)") &&
                      strstr(last_msg(), "CUDNN_STATUS_NOT_SUPPORTED"),
                  "%s", last_msg());
    }
    unsetenv("FAKE_CUDNN_FAIL_ALGO");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

static void test_conv_check_errors(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_conv_result res;
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        setenv("FAKE_CUDNN_CREATE_STATUS", "4", 1);
        CHECK_INT(cdd_gpu_conv_check(g, dnn, &res), CDD_E_CHECK);
        CHECK_MSG(strstr(last_msg(), "cudnnCreate failed") &&
                      strstr(last_msg(), "CUDNN_STATUS_INTERNAL_ERROR"),
                  "%s", last_msg());
        CHECK_STR(cdd_last_error()->path, fake_cudnn);
        unsetenv("FAKE_CUDNN_CREATE_STATUS");
        setenv("FAKE_CUDA_OOM", "1", 1);
        CHECK_INT(cdd_gpu_conv_check(g, dnn, &res), CDD_E_CHECK);
        CHECK_MSG(strstr(last_msg(), "cuMemAlloc") &&
                      strstr(last_msg(), "CUDA_ERROR_OUT_OF_MEMORY") &&
                      strstr(last_msg(), "out of memory"),
                  "%s", last_msg());
        unsetenv("FAKE_CUDA_OOM");
        /* A library that is not cuDNN. */
        CHECK_INT(cdd_gpu_conv_check(g, cuda_hold, &res), CDD_E_CHECK);
        CHECK_MSG(strstr(last_msg(), "does not export cudnnCreate"), "%s",
                  last_msg());
        CHECK_INT(cdd_gpu_conv_check(g, NULL, &res), CDD_E_USAGE);
    }
    cdd_gpu_env_close(g);
    /* No device opened. */
    g = NULL;
    CHECK_INT(cdd_gpu_env_open(NULL, &g), 0);
    if (g && dnn)
        CHECK_INT(cdd_gpu_conv_check(g, dnn, &res), CDD_E_USAGE);
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* ---- benchmark ----------------------------------------------------------- */

static void small_bench(struct cdd_gpu_bench_opts *o)
{
    cdd_gpu_bench_defaults(o);
    o->shape = (struct cdd_conv_shape){2, 3, 24, 20, 8, 5, 5, 2, 2, 2, 2};
    o->warmup = 1;
    o->gpu_runs = 5;
    o->cpu_runs = 2;
}

static void test_bench_defaults(void)
{
    struct cdd_gpu_bench_opts o;
    cdd_gpu_bench_defaults(&o);
    int oh, ow;
    CHECK_INT(cdd_conv_out_dims(&o.shape, &oh, &ow), 0);
    CHECK_INT(o.shape.n, 8);
    CHECK_INT(o.shape.k, 64);
    CHECK_INT(oh, 112);
    CHECK_INT(ow, 112);
    CHECK(cdd_conv_flops(&o.shape) == 1888223232.0);
    CHECK(o.gpu_runs >= 10);
    CHECK_INT(o.math, CDD_BENCH_FP32);
    CHECK(o.min_speedup == 5.0);
    CHECK_STR(cdd_bench_math_name(CDD_BENCH_TF32), "TF32");
    CHECK_STR(cdd_bench_math_name(CDD_BENCH_FP16), "FP16");
    /* TF32: a layer with 64 input channels, about the same work, so the
     * CPU reference costs the same; FP16 and FP32: the first layer. */
    cdd_gpu_bench_defaults_for(&o, CDD_BENCH_TF32);
    CHECK_INT(o.math, CDD_BENCH_TF32);
    CHECK_INT(o.shape.c, 64);
    CHECK_INT(cdd_conv_out_dims(&o.shape, &oh, &ow), 0);
    CHECK_INT(oh, 56);
    CHECK(cdd_conv_flops(&o.shape) == 1849688064.0);
    for (int m = CDD_BENCH_FP32; m <= CDD_BENCH_FP16; m += 2) {
        cdd_gpu_bench_defaults_for(&o, m);
        CHECK_INT(o.math, m);
        CHECK_INT(o.shape.c, 3);
    }
}

static void test_bench_small(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_bench_opts o;
    struct cdd_gpu_bench_result res;
    small_bench(&o);
    /* The fake GPU is this CPU: report its event times as a fast GPU's. */
    setenv("FAKE_CUDA_EVENT_SPEEDUP", "1000", 1);
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        int r = cdd_gpu_bench(g, dnn, &o, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.ran, 1);
        CHECK_INT(res.pass, 1);
        CHECK_INT(res.accurate, 1);
        CHECK_INT(res.fast, 1);
        CHECK_INT(res.math, CDD_BENCH_FP32);
        CHECK_INT(res.out_h, 12);
        CHECK_INT(res.out_w, 10);
        CHECK(res.flops == 2.0 * 2 * 8 * 12 * 10 * 3 * 5 * 5);
        CHECK_INT(res.gpu_runs, 5);
        CHECK_INT(res.cpu_runs, 2);
        CHECK(res.gpu_ms >= 0 && res.gpu_ms_min <= res.gpu_ms &&
              res.gpu_ms <= res.gpu_ms_max);
        CHECK(res.cpu_ms >= 0 && res.cpu_ms_min <= res.cpu_ms);
        CHECK(res.max_rel_err < 1e-5);
        CHECK(res.tolerance == 1e-3);
        CHECK_INT(res.math_type, 3);
        CHECK_INT(res.algo, 1);
        CHECK_INT(fake_dnn_count(dnn, "fake_cudnn_last_math"), 3);
        if (res.gpu_ms > 0 && res.cpu_ms > 0) {
            CHECK(res.gpu_tflops > 0 && res.cpu_gflops > 0);
            double s = res.cpu_ms / res.gpu_ms;
            CHECK(res.speedup > s * 0.999 && res.speedup < s * 1.001);
        }
    }
    unsetenv("FAKE_CUDA_EVENT_SPEEDUP");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* TF32 allowed: the tensor-op algorithm ranked first is taken, its
 * rounding shows in the error, and the looser tolerance applies. */
static void test_bench_tf32(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_bench_opts o;
    struct cdd_gpu_bench_result res;
    small_bench(&o);
    o.math = CDD_BENCH_TF32;
    setenv("FAKE_CUDA_EVENT_SPEEDUP", "1000", 1);
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        int r = cdd_gpu_bench(g, dnn, &o, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.pass, 1);
        CHECK_INT(res.math, CDD_BENCH_TF32);
        CHECK_INT(res.math_type, 1);
        CHECK_INT(fake_dnn_count(dnn, "fake_cudnn_last_math"), 1);
        CHECK(res.tolerance == 1e-2);
        CHECK_MSG(res.max_rel_err > 1e-6 && res.max_rel_err < 2e-3,
                  "TF32 error %g", res.max_rel_err);
    }
    unsetenv("FAKE_CUDA_EVENT_SPEEDUP");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* FP16: binary16 tensors on the device (the fake reads and writes them as
 * such and refuses mixed data types), tensor-op math, the output's binary16
 * rounding visible in the error but far within the tolerance; a wrong
 * element still fails. */
static void test_bench_fp16(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_bench_opts o;
    struct cdd_gpu_bench_result res;
    small_bench(&o);
    o.math = CDD_BENCH_FP16;
    setenv("FAKE_CUDA_EVENT_SPEEDUP", "1000", 1);
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        int r = cdd_gpu_bench(g, dnn, &o, &res);
        CHECK_MSG(r == 0, "%s", last_msg());
        CHECK_INT(res.pass, 1);
        CHECK_INT(res.math, CDD_BENCH_FP16);
        CHECK_INT(res.math_type, 1);
        CHECK_INT(fake_dnn_count(dnn, "fake_cudnn_last_math"), 1);
        CHECK(res.tolerance == CDD_CONV_FP16_TOL);
        CHECK_MSG(res.max_rel_err > 1e-5 && res.max_rel_err < 2e-3,
                  "FP16 error %g", res.max_rel_err);
        CHECK(res.gpu_tflops > 0);
        setenv("FAKE_CUDNN_CONV_CORRUPT", "1", 1);
        CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_CHECK);
        CHECK_INT(res.accurate, 0);
        CHECK_INT(res.pass, 0);
        CHECK(strstr(last_msg(), "benchmark (FP16)") != NULL);
        unsetenv("FAKE_CUDNN_CONV_CORRUPT");
        o.math = 7;
        CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_USAGE);
    }
    unsetenv("FAKE_CUDA_EVENT_SPEEDUP");
    cdd_clear_error();
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

/* The 5x rule: a "GPU" no faster than the CPU fails the bench, with the
 * numbers; with no minimum the same run passes. */
static void test_bench_too_slow(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_bench_opts o;
    struct cdd_gpu_bench_result res;
    small_bench(&o);
    setenv("FAKE_CUDA_EVENT_SPEEDUP", "0.01", 1); /* 100 times slower */
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        for (int m = 0; m < CDD_BENCH_N_MATH; m++) {
            o.math = m;
            CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_CHECK);
            CHECK_INT(res.ran, 1);
            CHECK_INT(res.accurate, 1);
            CHECK_INT(res.fast, 0);
            CHECK_INT(res.pass, 0);
            CHECK(res.speedup < 5.0);
            CHECK_MSG(strstr(last_msg(), "below the 5x") &&
                          strstr(last_msg(), cdd_bench_math_name(m)),
                      "%s", last_msg());
        }
        o.math = CDD_BENCH_FP32;
        o.min_speedup = 0;
        CHECK_MSG(cdd_gpu_bench(g, dnn, &o, &res) == 0, "%s", last_msg());
        CHECK_INT(res.pass, 1);
    }
    unsetenv("FAKE_CUDA_EVENT_SPEEDUP");
    cdd_clear_error();
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

static void test_bench_failures(void)
{
    struct cdd_gpu_env *g = open_device();
    struct cdd_lib *dnn = NULL;
    struct cdd_gpu_bench_opts o;
    struct cdd_gpu_bench_result res;
    small_bench(&o);
    setenv("FAKE_CUDA_EVENT_SPEEDUP", "1000", 1);
    CHECK_INT(cdd_lib_open(fake_cudnn, &dnn), 0);
    if (g && dnn) {
        setenv("FAKE_CUDNN_CONV_CORRUPT", "1", 1);
        CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_CHECK);
        CHECK_INT(res.ran, 1);
        CHECK_INT(res.pass, 0);
        CHECK(strstr(last_msg(), "benchmark") != NULL);
        unsetenv("FAKE_CUDNN_CONV_CORRUPT");
        o.shape.r = 99; /* filter larger than the padded input */
        CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_USAGE);
        small_bench(&o);
        cdd_cancel_request();
        CHECK_INT(cdd_gpu_bench(g, dnn, &o, &res), CDD_E_INTERRUPTED);
        cdd_cancel_reset();
    }
    unsetenv("FAKE_CUDA_EVENT_SPEEDUP");
    cdd_gpu_env_close(g);
    cdd_lib_close(dnn);
    check_fake_clean();
}

static void test_teardown(void)
{
    check_fake_clean();
    cdd_lib_close(cuda_hold);
    cuda_hold = NULL;
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK(system(cmd) == 0);
}

static void test_setup(void)
{
    setup();
}

TEST_MAIN(TEST(test_setup), TEST(test_lib_open_rules),
          TEST(test_driver_override), TEST(test_driver_search),
          TEST(test_no_driver), TEST(test_driver_info), TEST(test_no_device),
          TEST(test_driver_fit), TEST(test_conv_check_pass),
          TEST(test_conv_check_corrupt), TEST(test_conv_check_minimal),
          TEST(test_conv_check_fallback), TEST(test_conv_check_errors),
          TEST(test_bench_defaults), TEST(test_bench_small),
          TEST(test_bench_tf32), TEST(test_bench_fp16),
          TEST(test_bench_too_slow), TEST(test_bench_failures),
          TEST(test_teardown))
