/* The facts table (cudnn_facts.h): each row's shape, cudnnGetVersion()'s two
 * encodings both ways (never read with the other's base), the one version
 * reader on header text and file names, the zlibwapi.dll range at its
 * edges, the dependency hints and the minimum driver per CUDA major. */
#include "test.h"

#include "cdd/cudnn_facts.h"

static void test_rows(void)
{
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++) {
        const struct cdd_cudnn_major *f = &cdd_cudnn_majors[i];
        char want[64];
        CHECK(cdd_cudnn_major_facts(f->major) == f);
        if (i > 0)
            CHECK(f->major > cdd_cudnn_majors[i - 1].major);
        CHECK(f->n_subs > 0 && f->n_subs <= CDD_CUDNN_MAX_SUBS);
        snprintf(want, sizeof want, "libcudnn.so.%d", f->major);
        CHECK_STR(cdd_cudnn_main_name(f, 0), want);
        snprintf(want, sizeof want, "cudnn64_%d.dll", f->major);
        CHECK_STR(cdd_cudnn_main_name(f, 1), want);
        CHECK_STR(f->version_symbol, "cudnnGetVersion");
        for (size_t k = 0; k < f->n_subs; k++) {
            const struct cdd_cudnn_sublib *s = &f->subs[k];
            const char *ln = cdd_cudnn_sub_name(s, 0);
            const char *wn = cdd_cudnn_sub_name(s, 1);
            size_t n = strlen(ln), m = strlen(wn);
            snprintf(want, sizeof want, ".so.%d", f->major);
            CHECK_MSG(strncmp(ln, "libcudnn_", 9) == 0 &&
                          n > strlen(want) &&
                          strcmp(ln + n - strlen(want), want) == 0,
                      "%s", ln);
            snprintf(want, sizeof want, "64_%d.dll", f->major);
            CHECK_MSG(strncmp(wn, "cudnn_", 6) == 0 && m > strlen(want) &&
                          strcmp(wn + m - strlen(want), want) == 0,
                      "%s", wn);
            /* The same stem on both platforms: "libcudnn_" stem ".so.N"
             * and "cudnn_" stem "64_N.dll" (one-digit majors). */
            CHECK_MSG(n > 14 && m > 14 && n - 14 == m - 14 &&
                          strncmp(ln + 9, wn + 6, m - 14) == 0,
                      "%s / %s", ln, wn);
            /* A real file name of the row reads back as its version. */
            char real[96], v[32];
            snprintf(real, sizeof real, "%s.3.1", ln);
            CHECK_INT(cdd_cudnn_version_from_name(real, f->major, v,
                                                  sizeof v), 0);
            snprintf(want, sizeof want, "%d.3.1", f->major);
            CHECK_STR(v, want);
        }
    }
    CHECK(cdd_cudnn_major_facts(7) == NULL);
    CHECK(cdd_cudnn_major_facts(10) == NULL);
}

static void test_majors_8_and_9(void)
{
    const struct cdd_cudnn_major *e = cdd_cudnn_major_facts(8);
    const struct cdd_cudnn_major *n = cdd_cudnn_major_facts(9);
    CHECK(e && n);
    if (!e || !n)
        return;
    CHECK_INT(e->version_base, 1000);
    CHECK_INT(n->version_base, 10000);
    CHECK_INT(e->mismatch_status, 14);
    CHECK_INT(n->mismatch_status, 1002);
    CHECK_INT(e->n_subs, 6);
    CHECK_INT(n->n_subs, 9);
    /* The newer sub-libraries are optional: 9.20's archives lack them. */
    for (size_t k = 0; k < n->n_subs; k++)
        CHECK_INT(n->subs[k].optional, k >= 7);
    CHECK_STR(n->subs[7].linux_name, "libcudnn_engines_tensor_ir.so.9");
    CHECK_STR(n->subs[8].windows_name, "cudnn_ext64_9.dll");
    CHECK_STR(e->subs[0].linux_name, "libcudnn_ops_infer.so.8");
    CHECK_STR(e->subs[0].windows_name, "cudnn_ops_infer64_8.dll");
    CHECK_STR(e->subs[0].check_symbol, "cudnnOpsInferVersionCheck");
    CHECK_STR(e->subs[5].check_symbol, "cudnnAdvTrainVersionCheck");
    for (size_t k = 0; k < e->n_subs; k++)
        CHECK(e->subs[k].check_symbol != NULL);
    CHECK_STR(n->subs[0].linux_name, "libcudnn_graph.so.9");
    CHECK_STR(n->subs[0].check_symbol, "cudnnGraphVersionCheck");
    CHECK_STR(n->subs[3].check_symbol, "cudnnAdvVersionCheck");
    /* Engines and heuristic export no version check. */
    for (size_t k = 4; k < n->n_subs; k++)
        CHECK(n->subs[k].check_symbol == NULL);
    CHECK_STR(n->subs[6].windows_name, "cudnn_heuristic64_9.dll");
}

static void test_encode(void)
{
    CHECK_INT(cdd_cudnn_version_encode(8, 5, 0), 8500);
    CHECK_INT(cdd_cudnn_version_encode(8, 9, 7), 8907);
    CHECK_INT(cdd_cudnn_version_encode(9, 0, 0), 90000);
    CHECK_INT(cdd_cudnn_version_encode(9, 1, 0), 90100);
    CHECK_INT(cdd_cudnn_version_encode(9, 14, 0), 91400);
    /* Outside the table: the nearest major's encoding below, else the
     * first's (cuDNN 7 used major*1000 too). */
    CHECK_INT(cdd_cudnn_version_encode(7, 6, 5), 7605);
    CHECK_INT(cdd_cudnn_version_encode(10, 2, 3), 100203);
}

static void test_decode(void)
{
    char b[32];
    int ma = -1, mi = -1, pa = -1;
    CHECK_STR(cdd_cudnn_version_decode(8500, b, sizeof b), "8.5.0");
    /* 8907 read with cuDNN 9's base would be 0.89.7; 91400 with cuDNN 8's
     * 91.4.0. */
    CHECK_STR(cdd_cudnn_version_decode(8907, b, sizeof b), "8.9.7");
    CHECK_STR(cdd_cudnn_version_decode(90000, b, sizeof b), "9.0.0");
    CHECK_STR(cdd_cudnn_version_decode(91400, b, sizeof b), "9.14.0");
    CHECK_STR(cdd_cudnn_version_decode(8000, b, sizeof b), "8.0.0");
    CHECK_STR(cdd_cudnn_version_decode(7605, b, sizeof b), "7.6.5");
    CHECK_INT(cdd_cudnn_version_split(91400, &ma, &mi, &pa), 0);
    CHECK(ma == 9 && mi == 14 && pa == 0);
    CHECK_INT(cdd_cudnn_version_split(-1, &ma, &mi, &pa), -1);
    /* Both ways for every version each encoding can hold. */
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++) {
        const struct cdd_cudnn_major *f = &cdd_cudnn_majors[i];
        int max_minor = (int)(f->version_base / 100) - 1;
        for (int minor = 0; minor <= max_minor; minor++)
            for (int patch = 0; patch < 100; patch += 7) {
                long v = (long)cdd_cudnn_version_encode(f->major, minor,
                                                        patch);
                CHECK_INT(cdd_cudnn_version_split(v, &ma, &mi, &pa), 0);
                CHECK_MSG(ma == f->major && mi == minor && pa == patch,
                          "%ld -> %d.%d.%d", v, ma, mi, pa);
            }
    }
}

static void test_cmp(void)
{
    CHECK(cdd_cudnn_version_cmp(8907, 90000) < 0);  /* 8.9.7 < 9.0.0 */
    CHECK(cdd_cudnn_version_cmp(90000, 91400) < 0); /* 9.0.0 < 9.14.0 */
    CHECK(cdd_cudnn_version_cmp(91400, 8907) > 0);
    CHECK(cdd_cudnn_version_cmp(90200, 90100) > 0);
    CHECK(cdd_cudnn_version_cmp(8500, 8500) == 0);
    CHECK(cdd_cudnn_version_cmp(8907, 8906) > 0);
}

static void test_dotted(void)
{
    long c[4];
    CHECK_INT(cdd_version_dotted("8.5.0.96", c, 4), 4);
    CHECK(c[0] == 8 && c[1] == 5 && c[2] == 0 && c[3] == 96);
    CHECK_INT(cdd_version_dotted("9.14", c, 4), 2);
    CHECK_INT(cdd_version_dotted("", c, 4), 0);
    CHECK_INT(cdd_version_dotted("8..0", c, 4), -1);
    CHECK_INT(cdd_version_dotted("8.", c, 4), -1);
    CHECK_INT(cdd_version_dotted("8.5a", c, 4), -1);
    CHECK_INT(cdd_version_dotted("1.2.3.4.5", c, 4), -1);
    CHECK_INT(cdd_version_dotted("1234567890", c, 4), -1);
}

static void test_header(void)
{
    int ma, mi, pa;
    char v[32];
    const char *h8 = "/* cudnn_version.h */\n"
                     "#ifndef CUDNN_VERSION_H_\n"
                     "#define CUDNN_MAJOR 8\n"
                     "#define CUDNN_MINOR 9\n"
                     "#define CUDNN_PATCHLEVEL 7\n"
                     "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + "
                     "CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n";
    CHECK_INT(cdd_cudnn_version_from_header(h8, &ma, &mi, &pa), 0);
    CHECK(ma == 8 && mi == 9 && pa == 7);
    /* Tabs, indentation, a mention in a comment and a use in an expression
     * before the definition, a longer name sharing the prefix. */
    const char *h9 = "/* CUDNN_MAJOR is the major version */\n"
                     "#define CUDNN_VERSION (CUDNN_MAJOR * 10000)\n"
                     "#define CUDNN_MAJOR_OLD 7\n"
                     "  #define\tCUDNN_MAJOR\t9\n"
                     "#define CUDNN_MINOR    14\n"
                     "\t#define CUDNN_PATCHLEVEL 0\n";
    CHECK_INT(cdd_cudnn_version_from_header(h9, &ma, &mi, &pa), 0);
    CHECK(ma == 9 && mi == 14 && pa == 0);
    CHECK_INT(cdd_cudnn_version_from_header_text(h9, 9, v, sizeof v), 0);
    CHECK_STR(v, "9.14.0");
    /* Held to the library's major: a cuDNN 9 header says nothing about a
     * cuDNN 8 library. */
    CHECK_INT(cdd_cudnn_version_from_header_text(h9, 8, v, sizeof v), -1);
    CHECK_INT(cdd_cudnn_version_from_header_text(h8, 8, v, sizeof v), 0);
    CHECK_STR(v, "8.9.7");
    CHECK_INT(cdd_cudnn_version_from_header_text(h8, 8, v, 5), -1);
    /* Missing, not a number, out of range, not a definition. */
    CHECK_INT(cdd_cudnn_version_from_header("#define CUDNN_MAJOR 8\n"
                                            "#define CUDNN_MINOR 9\n",
                                            &ma, &mi, &pa), -1);
    CHECK_INT(cdd_cudnn_version_from_header("#define CUDNN_MAJOR X\n"
                                            "#define CUDNN_MINOR 9\n"
                                            "#define CUDNN_PATCHLEVEL 7\n",
                                            &ma, &mi, &pa), -1);
    CHECK_INT(cdd_cudnn_version_from_header("#define CUDNN_MAJOR 1000\n"
                                            "#define CUDNN_MINOR 9\n"
                                            "#define CUDNN_PATCHLEVEL 7\n",
                                            &ma, &mi, &pa), -1);
    CHECK_INT(cdd_cudnn_version_from_header("int CUDNN_MAJOR 8;\n"
                                            "#define CUDNN_MINOR 9\n"
                                            "#define CUDNN_PATCHLEVEL 7\n",
                                            &ma, &mi, &pa), -1);
    CHECK_INT(cdd_cudnn_version_from_header("", &ma, &mi, &pa), -1);
}

static void test_file_names(void)
{
    char v[32];
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.0", 8, v, sizeof v),
              0);
    CHECK_STR(v, "8.5.0");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn_graph.so.9.14.0", 9, v,
                                          sizeof v), 0);
    CHECK_STR(v, "9.14.0");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn_adv.so.9.1.0.70", 9, v,
                                          sizeof v), 0);
    CHECK_STR(v, "9.1.0.70");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.9.0.0", 8, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.9", 9, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so", 9, v, sizeof v), -1);
    CHECK_INT(cdd_cudnn_version_from_name("cudnn64_9.dll", 9, v, sizeof v),
              -1);
}

static void test_zlibwapi(void)
{
    CHECK_INT(cdd_cudnn_needs_zlibwapi("8.2.4", 8), 0);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("8.3.0", 8), 1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("8.3", 8), 1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("8.9.7.29", 8), 1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("9.0.0", 9), 1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("9.1.1", 9), 1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("9.2.0", 9), 0);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("9.14.0", 9), 0);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("7.6.5", 7), 0);
    /* Unknown minor: cuDNN 8 cannot be told, a 9 is likely >= 9.2. */
    CHECK_INT(cdd_cudnn_needs_zlibwapi("", 8), -1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi(NULL, 8), -1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("8", 8), -1);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("", 9), 0);
    CHECK_INT(cdd_cudnn_needs_zlibwapi("", 7), 0);
    /* The range the messages print is the table's. */
    char range[32] = "", first[16] = "", last[16] = "";
    for (size_t i = 0; i < CDD_CUDNN_N_MAJORS; i++) {
        const struct cdd_cudnn_major *f = &cdd_cudnn_majors[i];
        if (f->zlib_from < 0)
            continue;
        if (!first[0])
            snprintf(first, sizeof first, "%d.%d", f->major, f->zlib_from);
        snprintf(last, sizeof last, "%d.%d", f->major, f->zlib_to);
    }
    snprintf(range, sizeof range, "%s to %s", first, last);
    CHECK_STR(range, CDD_CUDNN_ZLIBWAPI_RANGE);
    const char *h = cdd_dependency_hint("ZLIBWAPI.DLL");
    CHECK(h && strstr(h, CDD_CUDNN_ZLIBWAPI_RANGE));
}

static void test_hints(void)
{
    const char *h;
    h = cdd_dependency_hint("cublasLt64_12.dll");
    CHECK(h && strncmp(h, "cuBLASLt", 8) == 0);
    h = cdd_dependency_hint("cublas64_11.dll");
    CHECK(h && strncmp(h, "cuBLAS ", 7) == 0);
    h = cdd_dependency_hint("libcublasLt.so.12");
    CHECK(h && strncmp(h, "cuBLASLt", 8) == 0);
    h = cdd_dependency_hint("libcublas.so.11");
    CHECK(h && strncmp(h, "cuBLAS ", 7) == 0);
    h = cdd_dependency_hint("libz.so.1");
    CHECK(h && strstr(h, "zlib1g"));
    for (size_t i = 0; i < CDD_MSVC_RUNTIME_N; i++) {
        h = cdd_dependency_hint(cdd_msvc_runtime[i]);
        CHECK_MSG(h && strstr(h, "Visual C++"), "%s", cdd_msvc_runtime[i]);
    }
    h = cdd_dependency_hint("cudnn_ops64_9.dll");
    CHECK(h && strstr(h, "whole archive"));
    CHECK(cdd_dependency_hint("libfoo.so.1") == NULL);
}

static void test_cuda_versions(void)
{
    CHECK_INT(cdd_cuda_version_major(11080), 11);
    CHECK_INT(cdd_cuda_version_minor(11080), 8);
    CHECK_INT(cdd_cuda_version_major(13000), 13);
    CHECK_INT(cdd_cuda_version_minor(13000), 0);
    CHECK_INT(cdd_cuda_version_major(12090), 12);
    CHECK_INT(cdd_cuda_version_minor(12090), 9);
}

static void test_min_driver(void)
{
    CHECK_STR(cdd_cuda_min_driver(11, 0), "450.80.02");
    CHECK_STR(cdd_cuda_min_driver(11, 1), "452.39");
    CHECK_STR(cdd_cuda_min_driver(12, 0), "525.60.13");
    CHECK_STR(cdd_cuda_min_driver(12, 1), "527.41");
    CHECK_STR(cdd_cuda_min_driver(13, 0), "580");
    CHECK_STR(cdd_cuda_min_driver(13, 1), "580");
    CHECK(cdd_cuda_min_driver(10, 0) == NULL);
    CHECK(cdd_cuda_min_driver(10, 1) == NULL);
    CHECK(cdd_cuda_min_driver(14, 0) == NULL);
    CHECK(cdd_cuda_min_driver(0, 0) == NULL);
}

TEST_MAIN(TEST(test_rows), TEST(test_majors_8_and_9), TEST(test_encode),
          TEST(test_decode), TEST(test_cmp), TEST(test_dotted),
          TEST(test_header), TEST(test_file_names), TEST(test_zlibwapi),
          TEST(test_hints), TEST(test_cuda_versions),
          TEST(test_min_driver))
