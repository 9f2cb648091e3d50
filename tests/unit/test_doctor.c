/* doctor's version readers (cudnn_facts.h): the real file name, and the
 * version resource of a DLL found by scanning its bytes. Both must refuse what does
 * not clearly name a version of the expected cuDNN major, rather than guess:
 * doctor prints "version unknown" then, which is honest. The environment
 * scan itself is tested end to end (tests/e2e/test_doctor.py). */
#include "test.h"

#include "cdd/cudnn_facts.h"
#include "cdd/doctor.h"

static void test_from_name(void)
{
    char v[32];
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.0", 8, v, sizeof v),
              0);
    CHECK_STR(v, "8.5.0");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn_ops_infer.so.8.9.7", 8, v,
                                          sizeof v),
              0);
    CHECK_STR(v, "8.9.7");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.9.14.0", 9, v, sizeof v),
              0);
    CHECK_STR(v, "9.14.0");
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5", 8, v, sizeof v),
              0);
    CHECK_STR(v, "8.5");
    /* Only the major: says nothing the soname did not. */
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8", 8, v, sizeof v), -1);
    /* Another major than the soname promised, junk, no .so. */
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.9.1.0", 8, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.0~bak", 8, v,
                                          sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8..0", 8, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.", 8, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.0.1.2", 8, v,
                                          sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("cudnn64_8.dll", 8, v, sizeof v),
              -1);
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.12345678901.0", 8, v,
                                          sizeof v),
              -1);
    /* Too small a buffer: refused, not cut. */
    CHECK_INT(cdd_cudnn_version_from_name("libcudnn.so.8.5.0", 8, v, 5), -1);
}

/* key and value as a version resource's String entry writes them: UTF-16LE,
 * NUL-terminated, value padded to a 32-bit boundary. */
static size_t put_string(unsigned char *b, size_t off, const char *key,
                         const char *val)
{
    for (const char *p = key; *p; p++) {
        b[off++] = (unsigned char)*p;
        b[off++] = 0;
    }
    b[off++] = 0;
    b[off++] = 0;
    while (off % 4) {
        b[off++] = 0;
    }
    for (const char *p = val; *p; p++) {
        b[off++] = (unsigned char)*p;
        b[off++] = 0;
    }
    b[off++] = 0;
    b[off++] = 0;
    return off;
}

static void test_from_resource(void)
{
    unsigned char b[1024];
    char v[32];
    size_t n;
    memset(b, 0xAB, sizeof b);
    n = put_string(b, 101, "CompanyName", "NVIDIA Corporation");
    n = put_string(b, n, "FileVersion", "8.5.0.96");
    CHECK_INT(cdd_cudnn_version_from_resource(b, n, 8, v, sizeof v), 0);
    CHECK_STR(v, "8.5.0.96");
    /* ProductVersion wins over FileVersion, and "8, 9, 7, 29" is read. */
    n = put_string(b, n, "ProductVersion", "8, 9, 7, 29");
    CHECK_INT(cdd_cudnn_version_from_resource(b, n, 8, v, sizeof v), 0);
    CHECK_STR(v, "8.9.7.29");
    /* A version of another major (NVIDIA's driver-style 6.14.x numbers) is
     * no cuDNN version. */
    memset(b, 0, sizeof b);
    n = put_string(b, 3, "FileVersion", "6.14.11.9000");
    CHECK_INT(cdd_cudnn_version_from_resource(b, n, 8, v, sizeof v), -1);
    /* Cut off in the middle of the value, and no value at all. */
    memset(b, 0, sizeof b);
    n = put_string(b, 0, "ProductVersion", "9.1.0");
    CHECK_INT(cdd_cudnn_version_from_resource(b, n - 6, 9, v, sizeof v), -1);
    CHECK_INT(cdd_cudnn_version_from_resource(b, n, 9, v, sizeof v), 0);
    CHECK_STR(v, "9.1.0");
    CHECK_INT(cdd_cudnn_version_from_resource(b, 10, 9, v, sizeof v), -1);
    CHECK_INT(cdd_cudnn_version_from_resource(b, 0, 9, v, sizeof v), -1);
    /* An ASCII "ProductVersion" is not the resource's UTF-16. */
    const char *ascii = "ProductVersion 8.5.0";
    CHECK_INT(cdd_cudnn_version_from_resource((const unsigned char *)ascii,
                                              strlen(ascii), 8, v, sizeof v),
              -1);
}

static void test_where_names(void)
{
    CHECK_STR(cdd_copy_where_name(CDD_COPY_SEARCH), "search path");
    CHECK_STR(cdd_copy_where_name(CDD_COPY_CONDA), "conda");
    CHECK_STR(cdd_copy_where_name(CDD_COPY_PYTHON), "python package");
    CHECK_STR(cdd_copy_where_name(CDD_COPY_TARGET), "target");
}

TEST_MAIN(TEST(test_from_name), TEST(test_from_resource),
          TEST(test_where_names))
