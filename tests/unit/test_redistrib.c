/* Unit tests of NVIDIA's redistrib JSON reader: both shapes (with and
 * without the cuda<N> level), picking the platform and CUDA variant, the
 * file-name rule, and a table of faults, each with the JSON path and the
 * words its message must carry. Also the mirror rewriting of URLs. */
#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/obtain.h"
#include "cdd/redistrib.h"
#include "cdd/strbuf.h"

#include "test.h"

#define H1 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H2 "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define M1 "0123456789abcdef0123456789abcdef"

#define W11 "cudnn-windows-x86_64-8.9.7.29_cuda11-archive.zip"
#define W12 "cudnn-windows-x86_64-8.9.7.29_cuda12-archive.zip"
#define L11 "cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz"
#define L12 "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz"
/* NVIDIA's pins for those four (issue 11, from redistrib_8.9.7.json). */
#define S_W11 "5e45478efe71a96329e6c0d2a3a2f79c747c15b2a51fead4b84c89b02cbf1671"
#define S_W12 "94fc17af8e83a26cc5d231ed23981b28c29c3fc2e87b1844ea3f46486f481df5"
#define S_L11 "a3e2509028cecda0117ce5a0f42106346e82e86d390f4bb9475afc976c77402e"
#define S_L12 "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb"

/* The samples below have the real files' shapes (as nixpkgs vendors them):
 * which keys, which nesting, which types. Hashes and sizes are NVIDIA's
 * where the issue quotes them; H1, H2 and M1 stand in for the ones it does
 * not (the reader checks only their form). */

/* redistrib_8.9.7.json: nested (platform -> cuda11 / cuda12 -> entry),
 * release_label "8.9.7", cudnn.version "8.9.7.29", size a string. */
static const char nested[] =
    "{\n"
    "  \"release_date\": \"2023-12-05\",\n"
    "  \"release_label\": \"8.9.7\",\n"
    "  \"release_product\": \"cudnn\",\n"
    "  \"cudnn\": {\n"
    "    \"name\": \"NVIDIA CUDA Deep Neural Network library\",\n"
    "    \"license\": \"cudnn\",\n"
    "    \"license_path\": \"cudnn/LICENSE.txt\",\n"
    "    \"version\": \"8.9.7.29\",\n"
    "    \"linux-x86_64\": {\n"
    "      \"cuda11\": {\"relative_path\": \"cudnn/linux-x86_64/" L11 "\",\n"
    "                 \"sha256\": \"" S_L11 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"860967256\"},\n"
    "      \"cuda12\": {\"relative_path\": \"cudnn/linux-x86_64/" L12 "\",\n"
    "                 \"sha256\": \"" S_L12 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"864984964\"}\n"
    "    },\n"
    "    \"windows-x86_64\": {\n"
    "      \"cuda11\": {\"relative_path\": \"cudnn/windows-x86_64/" W11 "\",\n"
    "                 \"sha256\": \"" S_W11 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"704240064\"},\n"
    "      \"cuda12\": {\"relative_path\": \"cudnn/windows-x86_64/" W12 "\",\n"
    "                 \"sha256\": \"" S_W12 "\", \"md5\": \"" M1 "\",\n"
    "                 \"size\": \"708408517\"}\n"
    "    }\n"
    "  }\n"
    "}\n";

/* redistrib_8.5.0.96.json: flat (platform -> entry), no release_label,
 * md5 and size (a string) present; also linux-ppc64le, linux-sbsa and the
 * cudnn_samples product. */
#define SAMPLES_85                                                            \
    "\"cudnn_samples\": {\"name\": \"NVIDIA cuDNN samples\", \"license\": "    \
    "\"cudnn\", \"version\": \"8.5.0.96\", \"linux-x86_64\": "                 \
    "{\"relative_path\": \"cudnn_samples/linux-x86_64/cudnn_samples-linux-"   \
    "x86_64-8.5.0.96-archive.tar.xz\", \"sha256\": \"" H1 "\", \"md5\": \""   \
    M1 "\", \"size\": \"1000\"}}"
#define CUDNN_85                                                              \
    "\"cudnn\": {\"name\": \"NVIDIA CUDA Deep Neural Network library\", "      \
    "\"license\": \"cudnn\", \"version\": \"8.5.0.96\", "                      \
    "\"linux-x86_64\": {\"relative_path\": \"cudnn/linux-x86_64/cudnn-linux-" \
    "x86_64-8.5.0.96_cuda11-archive.tar.xz\", \"sha256\": "                   \
    "\"5454a6fd94f008728caae9adad993c4e85ef36302e26bce43bea7d458a5e7b6d\", "  \
    "\"md5\": \"2c7878f9c383117918695e7f98a9aa86\", \"size\": "               \
    "\"692647752\"}, "                                                        \
    "\"linux-ppc64le\": {\"relative_path\": \"cudnn/linux-ppc64le/cudnn-"     \
    "linux-ppc64le-8.5.0.96_cuda11-archive.tar.xz\", \"sha256\": \"" H1      \
    "\", \"md5\": \"" M1 "\", \"size\": \"1\"}, "                             \
    "\"linux-sbsa\": {\"relative_path\": \"cudnn/linux-sbsa/cudnn-linux-"     \
    "sbsa-8.5.0.96_cuda11-archive.tar.xz\", \"sha256\": \"" H2 "\", "         \
    "\"md5\": \"" M1 "\", \"size\": \"2\"}, "                                 \
    "\"windows-x86_64\": {\"relative_path\": \"cudnn/windows-x86_64/cudnn-"   \
    "windows-x86_64-8.5.0.96_cuda11-archive.zip\", \"sha256\": "              \
    "\"bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b\", "  \
    "\"md5\": \"8c0bafe2f2761a9b3bcc5ce78a6fad55\", \"size\": "               \
    "\"542516637\"}}"
static const char flat[] = "{" CUDNN_85 ", " SAMPLES_85 "}";

/* Older flat files lack md5 and size altogether. */
static const char flat_bare[] =
    "{\"cudnn\": {\"name\": \"cuDNN\", "
    "\"version\": \"8.5.0.96\", \"linux-x86_64\": {\"relative_path\": "
    "\"cudnn/linux-x86_64/cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz\","
    " \"sha256\": \"" H2 "\"}}}";

/* redistrib_8.9.7.29.json: flat, and only the cuda12 archives. */
static const char flat_cuda12[] =
    "{\"release_date\": \"2023-12-05\", \"release_label\": \"8.9.7.29\", "
    "\"release_product\": \"cudnn\", \"cudnn\": {\"name\": \"NVIDIA CUDA Deep "
    "Neural Network library\", \"license\": \"cudnn\", \"version\": "
    "\"8.9.7.29\", \"linux-x86_64\": {\"relative_path\": "
    "\"cudnn/linux-x86_64/" L12 "\", \"sha256\": \"" S_L12 "\", \"md5\": \""
    M1 "\", \"size\": \"864984964\"}, \"windows-x86_64\": {\"relative_path\": "
    "\"cudnn/windows-x86_64/" W12 "\", \"sha256\": \"" S_W12 "\", \"md5\": \""
    M1 "\", \"size\": \"708408517\"}}}";

/* redistrib_9.13.0.json: nested with cuda12 / cuda13, and other products
 * beside cudnn: cudnn_jit, and cudnn_samples with a "source" entry. */
#define L913(cu) "cudnn-linux-x86_64-9.13.0.50_" cu "-archive.tar.xz"
static const char nested9[] =
    "{\"release_date\": \"2025-09-04\", \"release_label\": \"9.13.0\", "
    "\"release_product\": \"cudnn\", "
    "\"cudnn\": {\"name\": \"NVIDIA CUDA Deep Neural Network library\", "
    "\"license\": \"cudnn\", \"license_path\": \"cudnn/LICENSE.txt\", "
    "\"version\": \"9.13.0.50\", \"linux-x86_64\": {"
    "\"cuda12\": {\"relative_path\": \"cudnn/linux-x86_64/" L913("cuda12")
    "\", \"sha256\": \"" H1 "\", \"md5\": \"" M1 "\", \"size\": \"11\"}, "
    "\"cuda13\": {\"relative_path\": \"cudnn/linux-x86_64/" L913("cuda13")
    "\", \"sha256\": \"" H2 "\", \"md5\": \"" M1 "\", \"size\": \"13\"}}}, "
    "\"cudnn_jit\": {\"name\": \"NVIDIA cuDNN JIT\", \"license\": \"cudnn\", "
    "\"version\": \"9.13.0.50\", \"linux-x86_64\": {\"cuda13\": "
    "{\"relative_path\": \"cudnn_jit/linux-x86_64/cudnn_jit-linux-x86_64-"
    "9.13.0.50_cuda13-archive.tar.xz\", \"sha256\": \"" H1 "\", \"md5\": \""
    M1 "\", \"size\": \"7\"}}}, "
    "\"cudnn_samples\": {\"name\": \"NVIDIA cuDNN samples\", \"license\": "
    "\"cudnn\", \"version\": \"9.13.0.50\", \"source\": {\"relative_path\": "
    "\"cudnn_samples/source/cudnn_samples-source-9.13.0.50-archive.tar.xz\", "
    "\"sha256\": \"" H2 "\", \"md5\": \"" M1 "\", \"size\": \"5\"}}}";

static struct cdd_redistrib_query query(enum cdd_platform p, int major,
                                        const char *version,
                                        const char *filename)
{
    struct cdd_redistrib_query q = {"cudnn", version, p, major, filename};
    return q;
}

static int sha_is(const struct cdd_redistrib_entry *e, const char *hex)
{
    uint8_t want[CDD_SHA256_LEN];
    return cdd_hex_decode(hex, want, CDD_SHA256_LEN) == 0 &&
           memcmp(e->sha256, want, CDD_SHA256_LEN) == 0;
}

static void test_nested_linux(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, "8.9.7.29", L11);
    CHECK_INT(cdd_redistrib_parse(nested, sizeof nested - 1, "r.json", &q, &e),
              0);
    CHECK_STR(e.relative_path, "cudnn/linux-x86_64/" L11);
    CHECK(sha_is(&e, S_L11));
    CHECK_INT(e.has_size, 1);
    CHECK(e.size == 860967256u); /* Linux cuda11; 704240064 is Windows' */
    CHECK_INT(e.nested, 1);
    cdd_redistrib_entry_clear(&e);
    cdd_redistrib_entry_clear(&e); /* twice is harmless */
}

static void test_nested_picks_variant(void)
{
    static const struct {
        enum cdd_platform p;
        int cuda;
        const char *file, *sha;
        uint64_t size;
    } want[] = {
        {CDD_PLATFORM_WINDOWS_X86_64, 11, W11, S_W11, 704240064u},
        {CDD_PLATFORM_WINDOWS_X86_64, 12, W12, S_W12, 708408517u},
        {CDD_PLATFORM_LINUX_X86_64, 11, L11, S_L11, 860967256u},
        {CDD_PLATFORM_LINUX_X86_64, 12, L12, S_L12, 864984964u},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct cdd_redistrib_entry e;
        struct cdd_redistrib_query q =
            query(want[i].p, want[i].cuda, "8.9.7.29", want[i].file);
        CHECK_INT(cdd_redistrib_parse(nested, sizeof nested - 1, "r.json", &q,
                                      &e), 0);
        CHECK(e.relative_path && strstr(e.relative_path, want[i].file));
        CHECK(sha_is(&e, want[i].sha));
        CHECK(e.size == want[i].size);
        cdd_redistrib_entry_clear(&e);
    }
}

/* The 8.5.0.96 file: flat, no release_label, md5 and a string size; the
 * other platforms and the samples product are passed over. */
static void test_flat(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, "8.5.0.96",
              "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz");
    CHECK_INT(cdd_redistrib_parse(flat, sizeof flat - 1, "r.json", &q, &e), 0);
    CHECK_INT(e.nested, 0);
    CHECK_INT(e.has_size, 1);
    CHECK(e.size == 692647752u);
    CHECK(sha_is(&e, "5454a6fd94f008728caae9adad993c4e85ef36302e26bce43bea7d458a5e7b6d"));
    CHECK_STR(e.relative_path, "cudnn/linux-x86_64/"
                               "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz");
    cdd_redistrib_entry_clear(&e);
    q = query(CDD_PLATFORM_WINDOWS_X86_64, 11, "8.5.0.96",
              "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip");
    CHECK_INT(cdd_redistrib_parse(flat, sizeof flat - 1, "r.json", &q, &e), 0);
    CHECK(sha_is(&e, "bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b"));
    CHECK(e.size == 542516637u);
    cdd_redistrib_entry_clear(&e);
    /* the samples product inside the cudnn object reads the same */
    static const char inside[] =
        "{\"cudnn\": {\"version\": \"8.5.0.96\", " SAMPLES_85 ", "
        "\"linux-x86_64\": {\"relative_path\": \"cudnn/linux-x86_64/"
        "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz\", \"sha256\": \""
        H1 "\", \"size\": \"3\"}}}";
    q = query(CDD_PLATFORM_LINUX_X86_64, 11, "8.5.0.96",
              "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz");
    CHECK_INT(cdd_redistrib_parse(inside, sizeof inside - 1, "r.json", &q, &e),
              0);
    CHECK_INT(e.size, 3);
    cdd_redistrib_entry_clear(&e);
    /* and the oldest files, without md5 and size */
    CHECK_INT(cdd_redistrib_parse(flat_bare, sizeof flat_bare - 1, "r.json",
                                  &q, &e), 0);
    CHECK_INT(e.has_size, 0);
    CHECK(sha_is(&e, H2));
    cdd_redistrib_entry_clear(&e);
}

/* redistrib_8.9.7.29.json lists only cuda12: a cuda12 manifest takes it;
 * a cuda11 one is told the entry names another archive (the flat shape has
 * no variant level: only the file name tells). */
static void test_flat_cuda12_only(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 12, "8.9.7.29", L12);
    CHECK_INT(cdd_redistrib_parse(flat_cuda12, sizeof flat_cuda12 - 1,
                                  "redistrib_8.9.7.29.json", &q, &e), 0);
    CHECK(sha_is(&e, S_L12));
    CHECK(e.size == 864984964u);
    CHECK_INT(e.nested, 0);
    cdd_redistrib_entry_clear(&e);
    q = query(CDD_PLATFORM_WINDOWS_X86_64, 11, "8.9.7.29", W11);
    CHECK_INT(cdd_redistrib_parse(flat_cuda12, sizeof flat_cuda12 - 1,
                                  "redistrib_8.9.7.29.json", &q, &e),
              CDD_E_MANIFEST);
    CHECK_MSG(strstr(cdd_last_error()->msg, "names " W12 ", but the "
                                            "manifest's archive is " W11),
              "%s", cdd_last_error()->msg);
    CHECK(e.relative_path == NULL);
}

/* redistrib_9.13.0.json: cuda12 / cuda13, other products beside cudnn. */
static void test_nested_9(void)
{
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 13, "9.13.0.50", L913("cuda13"));
    CHECK_INT(cdd_redistrib_parse(nested9, sizeof nested9 - 1, "r.json", &q,
                                  &e), 0);
    CHECK(sha_is(&e, H2));
    CHECK_INT(e.size, 13);
    CHECK_INT(e.nested, 1);
    cdd_redistrib_entry_clear(&e);
    q = query(CDD_PLATFORM_LINUX_X86_64, 11, NULL, L913("cuda11"));
    CHECK_INT(cdd_redistrib_parse(nested9, sizeof nested9 - 1, "r.json", &q,
                                  &e), CDD_E_MANIFEST);
    CHECK_MSG(strstr(cdd_last_error()->msg,
                     "no archive for CUDA 11; this file has cuda12, cuda13"),
              "%s", cdd_last_error()->msg);
    /* the other products are read by their own key */
    struct cdd_redistrib_query jq = {
        "cudnn_jit", "9.13.0.50", CDD_PLATFORM_LINUX_X86_64, 13,
        "cudnn_jit-linux-x86_64-9.13.0.50_cuda13-archive.tar.xz"};
    CHECK_INT(cdd_redistrib_parse(nested9, sizeof nested9 - 1, "r.json", &jq,
                                  &e), 0);
    CHECK_INT(e.size, 7);
    cdd_redistrib_entry_clear(&e);
    /* a product without our platform says so */
    struct cdd_redistrib_query sq = {"cudnn_samples", NULL,
                                     CDD_PLATFORM_LINUX_X86_64, 13, NULL};
    CHECK_INT(cdd_redistrib_parse(nested9, sizeof nested9 - 1, "r.json", &sq,
                                  &e), CDD_E_MANIFEST);
    CHECK_MSG(strstr(cdd_last_error()->msg, "cudnn_samples.linux-x86_64: "
                                            "missing"),
              "%s", cdd_last_error()->msg);
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
    {"\"sha256\": \"" S_L11 "\", \"md5\"", "\"sha256\": \"" M1 "\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected 64 hex digits"},
    {"\"sha256\": \"" S_L11 "\", \"md5\"",
     "\"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected 64 hex digits"},
    {"\"sha256\": \"" S_L11 "\", \"md5\"", "\"sha256\": 12, \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: expected a string"},
    {"\"sha256\": \"" S_L11 "\", \"md5\"", "\"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: missing"},
    {"\"sha256\": \"" S_L11 "\", \"md5\"",
     "\"sha256\": \"" S_L11 "\", \"sha256\": \"" H2 "\", \"md5\"",
     "cudnn.linux-x86_64.cuda11.sha256: duplicate key"},
    {"\"size\": \"860967256\"},\n      \"cuda12", "\"size\": 860967256},\n      \"cuda12",
     "cudnn.linux-x86_64.cuda11.size: expected a string"},
    {"\"size\": \"860967256\"},\n      \"cuda12", "\"size\": \"8609x7256\"},\n      \"cuda12",
     "cudnn.linux-x86_64.cuda11.size: expected a size in decimal digits"},
    {"\"size\": \"860967256\"},\n      \"cuda12", "\"size\": \"-1\"},\n      \"cuda12",
     "cudnn.linux-x86_64.cuda11.size: expected a size"},
    {"\"md5\": \"" M1 "\",\n                 \"size\": \"860967256\"},\n      \"cuda12",
     "\"md5\": \"abc\",\n                 \"size\": \"860967256\"},\n      \"cuda12",
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
     "\"cuda10\": {\"relative_path\": \"cudnn/linux",
     "cudnn.linux-x86_64.cuda11: missing (no archive for CUDA 11; this file "
     "has cuda10, cuda12)"},
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
    {"\"release_label\": \"8.9.7\"", "\"release_label\": 8",
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
    char *text = replaced(nested, "\"sha256\": \"" S_L11 "\", \"md5\"",
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

/* The file's own keys are named whole in the error: the list of variants
 * it has and the JSON path, not cut to 200 or 160 bytes. */
static void test_long_keys_whole(void)
{
    char key[301], text[800], want[700];
    memset(key, 'x', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    memcpy(key, "cuda", 4);
    snprintf(text, sizeof text,
             "{\"cudnn\": {\"linux-x86_64\": {\"%s\": {}, \"cuda12\": {}}}}",
             key);
    struct cdd_redistrib_entry e;
    struct cdd_redistrib_query q =
        query(CDD_PLATFORM_LINUX_X86_64, 11, NULL, NULL);
    CHECK_INT(cdd_redistrib_parse(text, strlen(text), "r.json", &q, &e),
              CDD_E_MANIFEST);
    snprintf(want, sizeof want, "this file has %s, cuda12)", key);
    CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL, "%s",
              cdd_last_error()->msg);
    /* A product key past the old 160-byte path, in the list reader. */
    snprintf(text, sizeof text,
             "{\"cudnn\": {\"version\": \"9.1.0\", \"%s\": "
             "{\"relative_path\": 1}}}", key + 4);
    struct cdd_redistrib_list l;
    CHECK_INT(cdd_redistrib_list_parse(text, strlen(text), "r.json", "cudnn",
                                       &l),
              CDD_E_MANIFEST);
    snprintf(want, sizeof want, "cudnn.%s.relative_path: expected a string",
             key + 4);
    CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL, "%s",
              cdd_last_error()->msg);
}

/* One archive more than a redistrib JSON may list is refused, naming the
 * bound and the entry (issue 22); the bound itself is taken. */
static void test_archives_bound(void)
{
    for (int extra = 0; extra <= 1; extra++) {
        struct cdd_sb t;
        struct cdd_redistrib_list l;
        cdd_sb_init(&t, (size_t)1 << 24, "test JSON");
        cdd_sb_catf(&t, "{\"cudnn\": {\"version\": \"9.1.0\"");
        for (int i = 0; i < CDD_REDISTRIB_MAX_ARCHIVES + extra; i++)
            cdd_sb_catf(&t, ", \"p%04d\": {\"relative_path\": "
                            "\"cudnn/p%04d/a.zip\", \"sha256\": \"%064d\"}",
                        i, i, i + 1);
        cdd_sb_catf(&t, "}}");
        CHECK_INT(cdd_sb_error(&t), 0);
        int r = cdd_redistrib_list_parse(cdd_sb_str(&t), cdd_sb_len(&t),
                                         "r.json", "cudnn", &l);
        if (!extra) {
            CHECK_INT(r, 0);
            CHECK_INT(l.n, CDD_REDISTRIB_MAX_ARCHIVES);
            cdd_redistrib_list_clear(&l);
        } else {
            CHECK_INT(r, CDD_E_TOOLONG);
            CHECK_STR(cdd_last_error()->path, "r.json");
            CHECK_MSG(strstr(cdd_last_error()->msg,
                             "cudnn.p1024: more than 1024 archives") != NULL,
                      "%s", cdd_last_error()->msg);
        }
        cdd_sb_free(&t);
    }
}

TEST_MAIN(TEST(test_nested_linux), TEST(test_nested_picks_variant),
          TEST(test_flat), TEST(test_flat_cuda12_only), TEST(test_nested_9),
          TEST(test_flat_other_file), TEST(test_bad_cases),
          TEST(test_not_json), TEST(test_error_line), TEST(test_mirror_url),
          TEST(test_long_keys_whole), TEST(test_archives_bound))
