/* Unit tests of NVIDIA's redistrib JSON reader: both shapes (with and
 * without the cuda<N> level), picking the platform and CUDA variant, the
 * file-name rule, and a table of faults, each with the JSON path and the
 * words its message must carry. Also the mirror rewriting of URLs. */
#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/obtain.h"
#include "cdd/redistrib.h"

#include "test.h"

#define H1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define M1 "0123456789abcdef0123456789abcdef"

#define W11 "cudnn-windows-x86_64-8.9.7.29_cuda11-archive.zip"
#define W12 "cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip"
#define L11 "cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz"

/* The new shape, as NVIDIA publishes it for 8.9.7.29 (shortened). */
static const char nested[] =
    "{\n"
    "  \"release_date\": \"2023-12-05\",\n"
    "  \"release_label\": \"8.9.7.29\",\n"
    "  \"release_product\": \"cudnn\",\n"
    "  \"cudnn\": {\n"
    "    \"name\": \"NVIDIA CUDA Deep Neural Network library\",\n"
    "    \"license\": \"cudnn\",\n"
    "    \"license_path\": \"cudnn/LICENSE.txt\",\n"
    "    \"version\": \"8.9.7.29\",\n"
    "    \"cuda_variant\": [\"11\", \"12\"],\n"
    "    \"linux-x86_64\": {\n"
    "      \"cuda11\": {\"relative_path\": \"cudnn/linux-x86_64/" L11 "\",\n"
    "                 \"sha256\": \"" H1 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"704240064\"}\n"
    "    },\n"
    "    \"windows-x86_64\": {\n"
    "      \"cuda11\": {\"relative_path\": \"cudnn/windows-x86_64/" W11 "\",\n"
    "                 \"sha256\": \"" H1 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"704240064\"},\n"
    "      \"cuda12\": {\"relative_path\": \"cudnn/windows-x86_64/" W12 "\",\n"
    "                 \"sha256\": \"" H2 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"12\"}\n"
    "    }\n"
    "  }\n"
    "}\n";

/* The old shape: no cuda level, no md5 or size. */
static const char flat[] =
    "{\"release_label\": \"8.5.0.96\", \"cudnn\": {\"name\": \"cuDNN\", "
    "\"version\": \"8.5.0.96\", \"linux-x86_64\": {\"relative_path\": "
    "\"cudnn/linux-x86_64/cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz\","
    " \"sha256\": \"" H2 "\"}}}";

static struct cdd_redistrib_query query(enum cdd_platform p, int major,
                                        const char *version,
                                        const char *filename)
{
    struct cdd_redistrib_query q = {"cudnn", version, p, major, filename};
    return q;
}

static void test_nested_linux(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, "8.9.7.29", L11);
    uint8_t want[CDD_SHA256_LEN];
    CHECK_INT(cdd_redistrib_parse(nested, sizeof nested - 1, "r.json", &q, &e),
              0);
    CHECK_STR(e.relative_path, "cudnn/linux-x86_64/" L11);
    CHECK(cdd_hex_decode(H1, want, CDD_SHA256_LEN) == 0);
    CHECK(memcmp(e.sha256, want, CDD_SHA256_LEN) == 0);
    CHECK_INT(e.has_size, 1);
    CHECK_INT(e.size, 704240064);
    CHECK_INT(e.nested, 1);
    cdd_redistrib_entry_clear(&e);
    cdd_redistrib_entry_clear(&e); /* twice is harmless */
}

static void test_nested_picks_variant(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_WINDOWS_X86_64, 12, NULL, W12);
    uint8_t want[CDD_SHA256_LEN];
    CHECK_INT(cdd_redistrib_parse(nested, sizeof nested - 1, "r.json", &q, &e),
              0);
    CHECK_STR(e.relative_path, "cudnn/windows-x86_64/" W12);
    CHECK(cdd_hex_decode(H2, want, CDD_SHA256_LEN) == 0);
    CHECK(memcmp(e.sha256, want, CDD_SHA256_LEN) == 0);
    CHECK_INT(e.size, 12);
    cdd_redistrib_entry_clear(&e);
}

static void test_flat(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, "8.5.0.96",
              "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz");
    CHECK_INT(cdd_redistrib_parse(flat, sizeof flat - 1, "r.json", &q, &e), 0);
    CHECK_INT(e.nested, 0);
    CHECK_INT(e.has_size, 0);
    CHECK_STR(e.relative_path, "cudnn/linux-x86_64/"
                               "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz");
    cdd_redistrib_entry_clear(&e);
}

/* The old shape has no variant level, so only the file name can tell that
 * the entry is the archive we want. */
static void test_flat_other_file(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 12, NULL,
              "cudnn-linux-x86_64-8.5.0.96_cuda12-archive.tar.xz");
    CHECK_INT(cdd_redistrib_parse(flat, sizeof flat - 1, "r.json", &q, &e),
              CDD_E_MANIFEST);
    const struct cdd_errinfo *err = cdd_last_error();
    CHECK_STR(err->path, "r.json");
    CHECK_MSG(strstr(err->msg, "cudnn.linux-x86_64.relative_path: names "
                               "cudnn-linux-x86_64-8.5.0.96_cuda11") != NULL,
              "%s", err->msg);
    CHECK(e.relative_path == NULL);
}

/* A valid document with one thing changed, and what the message says. */
struct bad_case {
    const char *from, *to;
    const char *want; /* substring of "<json path>: <fault>" */
};

static const struct bad_case bad_cases[] = {
    {"\"sha256\": \"" H1 "\", \"md5\"", "\"sha256\": \"" M1 "\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected 64 hex digits"},
    {"\"sha256\": \"" H1 "\", \"md5\"",
     "\"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected 64 hex digits"},
    {"\"sha256\": \"" H1 "\", \"md5\"", "\"sha256\": 12, \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected a string"},
    {"\"sha256\": \"" H1 "\", \"md5\"", "\"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: missing"},
    {"\"sha256\": \"" H1 "\", \"md5\"",
     "\"sha256\": \"" H1 "\", \"sha256\": \"" H2 "\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: duplicate key"},
    {"\"size\": \"704240064\"}\n    },", "\"size\": 704240064}\n    },",
     "cudnn.linux-x86_64.cuda11.size: expected a string"},
    {"\"size\": \"704240064\"}\n    },", "\"size\": \"7042x0064\"}\n    },",
     "cudnn.linux-x86_64.cuda11.size: expected a size in decimal digits"},
    {"\"size\": \"704240064\"}\n    },", "\"size\": \"-1\"}\n    },",
     "cudnn.linux-x86_64.cuda11.size: expected a size"},
    {"\"md5\": \"" M1 "\",\n                 \"size\": \"704240064\"}\n    },",
     "\"md5\": \"abc\",\n                 \"size\": \"704240064\"}\n    },",
     "cudnn.linux-x86_64.cuda11.md5: expected 32 hex digits"},
    {"\"relative_path\": \"cudnn/linux-x86_64/",
     "\"relative_path\": \"../linux-x86_64/",
     "cudnn.linux-x86_64.cuda11.relative_path: not a safe relative path"},
    {"\"relative_path\": \"cudnn/linux-x86_64/",
     "\"relative_path\": \"/cudnn/linux-x86_64/",
     "cudnn.linux-x86_64.cuda11.relative_path: not a safe relative path"},
    {"\"relative_path\": \"cudnn/linux-x86_64/" L11 "\"",
     "\"relative_path\": [\"x\"]",
     "cudnn.linux-x86_64.cuda11.relative_path: expected a string"},
    {"\"cuda11\": {\"relative_path\": \"cudnn/linux",
     "\"cuda12\": {\"relative_path\": \"cudnn/linux",
     "cudnn.linux-x86_64.cuda11: missing (no archive for CUDA 11; this file "
     "has cuda12)"},
    {"\"cuda11\": {\"relative_path\": \"cudnn/linux", "\"cuda11\": [{\"relative_path\": \"cudnn/linux",
     "not valid JSON"},
    {"\"linux-x86_64\": {", "\"linux-aarch64\": {",
     "cudnn.linux-x86_64: missing (no archive for this platform)"},
    {"\"linux-x86_64\": {\n      \"cuda11\": {\"relative_path\"",
     "\"linux-x86_64\": \"x\", \"y\": {\n      \"cuda11\": {\"relative_path\"",
     "cudnn.linux-x86_64: expected an object"},
    {"\"version\": \"8.9.7.29\"", "\"version\": \"8.9.6.50\"",
     "cudnn.version: 8.9.6.50, but the manifest is for 8.9.7.29"},
    {"\"version\": \"8.9.7.29\"", "\"version\": 8",
     "cudnn.version: expected a string"},
    {"\"release_label\": \"8.9.7.29\"", "\"release_label\": 8",
     "release_label: expected a string"},
    {"\"cudnn\": {\n    \"name\"", "\"cudnn-x\": {\n    \"name\"",
     "cudnn: missing"},
    {"\"cudnn\": {\n    \"name\"", "\"cudnn\": 3, \"z\": {\n    \"name\"",
     "cudnn: expected an object"},
};

static char *replaced(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (!at)
        return NULL;
    size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    if (!r)
        return NULL;
    snprintf(r, n, "%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
    return r;
}

static void test_bad_cases(void)
{
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, "8.9.7.29", L11);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *b = &bad_cases[i];
        struct cdd_redistrib_entry e;
        char *text = replaced(nested, b->from, b->to);
        CHECK_MSG(text != NULL, "case %zu: '%s' not in the base text", i,
                  b->from);
        if (!text)
            continue;
        cdd_clear_error();
        int r = cdd_redistrib_parse(text, strlen(text),
                                    "redistrib_8.9.7.29.json", &q, &e);
        const struct cdd_errinfo *err = cdd_last_error();
        CHECK_MSG(r == CDD_E_MANIFEST, "case %zu (%s): returned %d", i,
                  b->want, r);
        CHECK_MSG(strcmp(err->path, "redistrib_8.9.7.29.json") == 0,
                  "case %zu: path '%s'", i, err->path);
        CHECK_MSG(strstr(err->msg, b->want) != NULL,
                  "case %zu: message '%s' lacks '%s'", i, err->msg, b->want);
        CHECK(e.relative_path == NULL);
        free(text);
    }
}

static void test_not_json(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, NULL, L11);
    static const char *const texts[] = {"", "<html>404</html>", "[1,2]",
                                        "{\"cudnn\": {}} trailing"};
    static const char *const want[] = {"not valid JSON", "not valid JSON",
                                       "(root): expected a JSON object",
                                       "not valid JSON"};
    for (size_t i = 0; i < 4; i++) {
        int r = cdd_redistrib_parse(texts[i], strlen(texts[i]), "x.json", &q,
                                    &e);
        CHECK_INT(r, CDD_E_MANIFEST);
        CHECK_MSG(strstr(cdd_last_error()->msg, want[i]) != NULL,
                  "text %zu: '%s'", i, cdd_last_error()->msg);
    }
}

static void test_error_line(void)
{
    /* The one line the user sees names the file, the JSON path and the
     * fault, as the example. */
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, NULL, L11);
    char *text = replaced(nested, "\"sha256\": \"" H1 "\", \"md5\"",
                          "\"sha256\": \"abc\", \"md5\"");
    char line[2048];
    CHECK(text != NULL);
    CHECK_INT(cdd_redistrib_parse(text, strlen(text),
                                  "redistrib_8.9.7.29.json", &q, &e),
              CDD_E_MANIFEST);
    CHECK_STR(cdd_error_format(line, sizeof line),
              "redistrib_8.9.7.29.json: cudnn.linux-x86_64.cuda11.sha256: "
              "expected 64 hex digits");
    free(text);
}

static void test_mirror_url(void)
{
    char *u;
    u = cdd_mirror_url("https://developer.download.nvidia.com/compute/cudnn/"
                       "redist/x.zip",
                       "http://mirror.local/nv");
    CHECK_STR(u, "http://mirror.local/nv/cudnn/redist/x.zip");
    free(u);
    u = cdd_mirror_url("https://developer.download.nvidia.com/compute/cudnn/"
                       "redist/x.zip",
                       "https://m/");
    CHECK_STR(u, "https://m/cudnn/redist/x.zip");
    free(u);
    u = cdd_mirror_url("https://example.com/compute/x.zip", "https://m/");
    CHECK_STR(u, "https://example.com/compute/x.zip");
    free(u);
    u = cdd_mirror_url("https://developer.download.nvidia.com/compute/a",
                       NULL);
    CHECK_STR(u, "https://developer.download.nvidia.com/compute/a");
    free(u);
}

TEST_MAIN(TEST(test_nested_linux), TEST(test_nested_picks_variant),
          TEST(test_flat), TEST(test_flat_other_file), TEST(test_bad_cases),
          TEST(test_not_json), TEST(test_error_line), TEST(test_mirror_url))
