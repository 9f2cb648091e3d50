/* Unit tests of the manifest module: a table of bad manifests (a valid text
 * with one thing changed, each with the JSON path and fault the message must
 * name), the shipped manifests, the writer's round trip, finding manifests by
 * name or file, the role-from-path rules and the version number rule. */
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/strbuf.h"
#include "cdd/sys.h"

#include "test.h"

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

#define L_ARCHIVE                                                              \
    "  \"archive\": {\"filename\": \"a.tar.xz\", \"url\": "                    \
    "\"https://example.com/a.tar.xz\", \"sha256\": null, \"size\": null, "     \
    "\"strip_components\": 1},\n"

static const char base_linux[] =
    "{\n"
    "  \"schema_version\": 1,\n"
    "  \"product\": \"cudnn\",\n"
    "  \"version\": \"8.5.0.96\",\n"
    "  \"cuda_major\": 11,\n"
    "  \"platform\": \"linux-x86_64\",\n" L_ARCHIVE
    "  \"files\": [\n"
    "    {\"path\": \"include/cudnn.h\", \"role\": \"header\", \"sha256\": \"" H64
    "\", \"size\": 10},\n"
    "    {\"path\": \"lib/libcudnn.so.8.5.0\", \"role\": \"runtime\", "
    "\"sha256\": null, \"size\": null},\n"
    "    {\"path\": \"lib/libcudnn.so.8\", \"role\": \"symlink\", \"target\": "
    "\"libcudnn.so.8.5.0\"},\n"
    "    {\"path\": \"lib/libcudnn.so\", \"role\": \"symlink\", \"target\": "
    "\"libcudnn.so.8\"},\n"
    "    {\"path\": \"lib/libcudnn_ops_infer.so.8\", \"role\": \"runtime\", "
    "\"sha256\": null, \"size\": null},\n"
    "    {\"path\": \"LICENSE\", \"role\": \"license\", \"sha256\": null, "
    "\"size\": null}\n"
    "  ],\n"
    "  \"verify\": {\"version_number\": 8500, \"library\": "
    "\"lib/libcudnn.so.8\", \"version_symbol\": \"cudnnGetVersion\", "
    "\"sublibraries\": [{\"library\": \"lib/libcudnn_ops_infer.so.8\", "
    "\"check_symbol\": \"cudnnOpsInferVersionCheck\"}]}\n"
    "}\n";

#define W_FILES                                                                \
    "{\"path\": \"bin/cudnn64_8.dll\", \"role\": \"runtime\", \"sha256\": "    \
    "null, \"size\": null}, {\"path\": \"lib/x64/cudnn.lib\", \"role\": "      \
    "\"import_lib\", \"sha256\": null, \"size\": null}"

static const char base_windows[] =
    "{\"schema_version\": 1, \"product\": \"cudnn\", \"version\": \"8.5.0.96\", "
    "\"cuda_major\": 11, \"platform\": \"windows-x86_64\",\n"
    " \"archive\": {\"filename\": \"a.zip\", \"sha256\": \"" H64 "\", "
    "\"size\": 123, \"strip_components\": 1},\n"
    " \"files\": [" W_FILES "]}\n";

/* ---- helpers ------------------------------------------------------------- */

/* base with the first occurrence of 'from' replaced by 'to'; NULL when
 * 'from' does not occur (a broken test case). */
static char *mutate(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (!at)
        return NULL;
    size_t pre = (size_t)(at - base), fl = strlen(from), tl = strlen(to);
    char *s = malloc(strlen(base) - fl + tl + 1);
    if (!s)
        return NULL;
    memcpy(s, base, pre);
    memcpy(s + pre, to, tl);
    strcpy(s + pre + tl, at + fl);
    return s;
}

static struct cdd_manifest *parse_ok(const char *text)
{
    struct cdd_manifest *m = NULL;
    int r = cdd_manifest_parse(text, strlen(text), "t.json", &m);
    CHECK_MSG(r == 0, "parse failed: %s", cdd_last_error()->msg);
    return m;
}

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int manifest_equal(const struct cdd_manifest *a,
                          const struct cdd_manifest *b)
{
    if (a->schema_version != b->schema_version ||
        !str_eq(a->product, b->product) || !str_eq(a->version, b->version) ||
        a->cuda_major != b->cuda_major || a->platform != b->platform ||
        !str_eq(a->archive.filename, b->archive.filename) ||
        a->archive.n_urls != b->archive.n_urls ||
        a->archive.has_sha256 != b->archive.has_sha256 ||
        memcmp(a->archive.sha256, b->archive.sha256, CDD_SHA256_LEN) != 0 ||
        a->archive.has_size != b->archive.has_size ||
        a->archive.size != b->archive.size ||
        a->archive.strip_components != b->archive.strip_components ||
        !str_eq(a->redistrib_url, b->redistrib_url) ||
        a->files_exact != b->files_exact || a->n_files != b->n_files ||
        a->has_verify != b->has_verify)
        return 0;
    for (size_t i = 0; i < a->archive.n_urls; i++)
        if (!str_eq(a->archive.urls[i], b->archive.urls[i]))
            return 0;
    for (size_t i = 0; i < a->n_files; i++) {
        const struct cdd_mfile *x = &a->files[i], *y = &b->files[i];
        if (!str_eq(x->path, y->path) || x->role != y->role ||
            x->has_sha256 != y->has_sha256 ||
            memcmp(x->sha256, y->sha256, CDD_SHA256_LEN) != 0 ||
            x->has_size != y->has_size || x->size != y->size ||
            !str_eq(x->target, y->target))
            return 0;
    }
    if (!a->has_verify)
        return 1;
    const struct cdd_mverify *v = &a->verify, *w = &b->verify;
    if (v->version_number != w->version_number ||
        !str_eq(v->library, w->library) ||
        !str_eq(v->version_symbol, w->version_symbol) ||
        !str_eq(v->cudart_symbol, w->cudart_symbol) ||
        v->mismatch_status != w->mismatch_status ||
        v->n_sublibs != w->n_sublibs)
        return 0;
    for (size_t i = 0; i < v->n_sublibs; i++)
        if (!str_eq(v->sublibs[i].library, w->sublibs[i].library) ||
            !str_eq(v->sublibs[i].check_symbol, w->sublibs[i].check_symbol))
            return 0;
    return 1;
}

/* ---- the table of bad manifests -------------------------------------------- */

struct bad_case {
    int windows;      /* mutate base_windows instead of base_linux */
    const char *from; /* replaced (first occurrence) ... */
    const char *to;   /* ... by this */
    const char *want; /* substring of the message: JSON path and fault */
};

/* An optional component (docs/manifest.md, components), for mutation. */
#define W_COMPONENT                                                            \
    ",\n \"components\": [{\"name\": \"zlibwapi\", \"cuda_majors\": [11], "     \
    "\"cudnn_min\": \"8.3\", \"cudnn_max\": \"9.1\", \"archive\": "              \
    "{\"filename\": \"z.zip\", \"sha256\": \"" H64 "\", \"size\": null, "       \
    "\"strip_components\": 0}, \"entry\": {\"path\": "                         \
    "\"dll_x64/zlibwapi.dll\", \"sha256\": null, \"size\": null}}]"

static const struct bad_case bad_cases[] = {
    /* fleet: roles only receipts know, and optional components */
    {1, "\"role\": \"runtime\"", "\"role\": \"activation\"",
     "files[0].role: unknown role \"activation\""},
    {1, "]}\n", "]" W_COMPONENT ", \"components\": []}\n",
     "(root): duplicate key \"components\""},
    {1, "]}\n", "], \"components\": {}}\n",
     "components: expected a list of at most 16 components"},
    /* root and scalars */
    {0, "\"schema_version\": 1", "\"schema_version\": 2",
     "schema_version: unsupported schema version 2"},
    {0, "\"schema_version\": 1", "\"schema_version\": \"1\"",
     "schema_version: expected the number 1"},
    {0, "  \"schema_version\": 1,\n", "",
     "(root): missing key \"schema_version\""},
    {0, "\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"foo\": 1,",
     "(root): unknown key \"foo\""},
    {0, "\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"product\": \"cudnn\",",
     "(root): duplicate key \"product\""},
    {0, "\"product\"", "\"Product\"", "(root): unknown key \"Product\""},
    {0, "\"product\": \"cudnn\"", "\"product\": \"cuDNN\"",
     "product: expected \"cudnn\""},
    {0, "\"product\": \"cudnn\"", "\"product\": 1", "product: expected a string"},
    {0, "  \"product\": \"cudnn\",\n", "", "(root): missing key \"product\""},
    {0, "\"8.5.0.96\"", "\"8.5\"", "version: expected 3 or 4 dot-separated"},
    {0, "\"8.5.0.96\"", "\"8.5.0.96.1\"", "version: expected 3 or 4"},
    {0, "\"8.5.0.96\"", "\"8.05.0\"", "version: expected 3 or 4"},
    {0, "\"8.5.0.96\"", "\"8.5.x\"", "version: expected 3 or 4"},
    {0, "\"8.5.0.96\"", "\"8.5.0.1234567890\"", "version: expected 3 or 4"},
    {0, "\"cuda_major\": 11", "\"cuda_major\": 0",
     "cuda_major: expected an integer from 1 to 99"},
    {0, "\"cuda_major\": 11", "\"cuda_major\": 11.5",
     "cuda_major: expected an integer from 1 to 99"},
    {0, "\"cuda_major\": 11", "\"cuda_major\": \"11\"",
     "cuda_major: expected an integer"},
    {0, "\"linux-x86_64\"", "\"macos-arm64\"",
     "platform: unknown platform \"macos-arm64\""},
    {0, "\"linux-x86_64\"", "\"Linux-x86_64\"", "platform: unknown platform"},
    /* A rejected value is shown whole, not cut to 80 bytes with "...". */
#define P40 "pppppppppppppppppppppppppppppppppppppppp"
    {0, "\"linux-x86_64\"", "\"" P40 P40 P40 P40 P40 "\"",
     "platform: unknown platform \"" P40 P40 P40 P40 P40 "\""},
    {0, "\"8.5.0.96\"", "\"" P40 P40 P40 "\"",
     "version: expected 3 or 4 dot-separated decimal numbers, got \"" P40 P40
     P40 "\""},
#undef P40
    /* archive */
    {0, L_ARCHIVE, "", "(root): missing key \"archive\""},
    {0, "\"archive\": {", "\"archive\": [{", "not valid JSON"},
    {0, "\"strip_components\": 1}", "\"strip_components\": 1, \"md5\": \"x\"}",
     "archive: unknown key \"md5\""},
    {0, "\"sha256\": null, \"size\": null, \"strip", "\"size\": null, \"strip",
     "archive: missing key \"sha256\""},
    {0, "\"sha256\": null, \"size\": null, \"strip",
     "\"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\", "
     "\"size\": null, \"strip",
     "archive.sha256: expected 64 hex digits"},
    {0, "\"sha256\": null, \"size\": null, \"strip",
     "\"sha256\": \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\", "
     "\"size\": null, \"strip",
     "archive.sha256: expected 64 hex digits"},
    {0, "\"sha256\": null, \"size\": null, \"strip",
     "\"sha256\": 12, \"size\": null, \"strip",
     "archive.sha256: expected 64 hex digits"},
    {0, "\"size\": null, \"strip", "\"size\": -1, \"strip",
     "archive.size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": null, \"strip", "\"size\": 1.5, \"strip",
     "archive.size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": null, \"strip", "\"size\": 1e300, \"strip",
     "archive.size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": null, \"strip", "\"size\": \"123\", \"strip",
     "archive.size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": null, \"strip", "\"size\": 9007199254740992, \"strip",
     "archive.size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": null, \"strip", "\"size\": true, \"strip",
     "archive.size: expected a whole number"},
    {0, "\"strip_components\": 1", "\"strip_components\": 9",
     "archive.strip_components: expected an integer from 0 to 8"},
    {0, "\"strip_components\": 1", "\"strip_components\": -1",
     "archive.strip_components: expected an integer from 0 to 8"},
    {0, ", \"strip_components\": 1}", "}",
     "archive: missing key \"strip_components\""},
    {0, "\"a.tar.xz\"", "\"dir/a.tar.xz\"",
     "archive.filename: expected a single file name"},
    {0, "\"a.tar.xz\"", "\"..\"", "archive.filename: unsafe file name"},
    {0, "\"a.tar.xz\"", "\"CON\"", "archive.filename: unsafe file name"},
    {0, "\"filename\": \"a.tar.xz\", ", "", "archive: missing key \"filename\""},
    {0, "\"https://example.com/a.tar.xz\"", "\"ftp://example.com/a\"",
     "archive.url: expected an http:// or https:// URL"},
    {0, "\"https://example.com/a.tar.xz\"", "\"https://exa mple.com/a\"",
     "archive.url: expected an http:// or https:// URL"},
    {0, "\"https://example.com/a.tar.xz\"", "[]",
     "archive.url: expected a URL or a non-empty list of URLs"},
    {0, "\"https://example.com/a.tar.xz\"", "{\"a\": 1}",
     "archive.url: expected a URL or a non-empty list of URLs"},
    {0, "\"https://example.com/a.tar.xz\"", "[\"https://a.example/x\", 5]",
     "archive.url[1]: expected a string"},
    {0, "\"https://example.com/a.tar.xz\"", "[\"https://a.example/x\", \"http:/\"]",
     "archive.url[1]: expected an http:// or https:// URL"},
    /* optional root keys */
    {0, "\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"redistrib_url\": 5,",
     "redistrib_url: expected a string"},
    {0, "\"product\": \"cudnn\",",
     "\"product\": \"cudnn\", \"redistrib_url\": \"file:///etc/passwd\",",
     "redistrib_url: expected an http:// or https:// URL"},
    {0, "\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"files_exact\": \"yes\",",
     "files_exact: expected true or false"},
    {0, "\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"files_exact\": null,",
     "files_exact: expected true or false"},
    /* files */
    {1, W_FILES, "", "files: expected a non-empty list of entries"},
    {1, "\"files\": [" W_FILES "]", "\"files\": {\"path\": \"LICENSE\"}",
     "files: expected a non-empty list of entries"},
    {1, W_FILES, "\"bin/cudnn64_8.dll\"", "files[0]: expected an object"},
    {1, "\"files\": [" W_FILES "]", "\"files\": 3",
     "files: expected a non-empty list of entries"},
    {0, "\"lib/libcudnn.so.8.5.0\"", "\"lib/../libcudnn.so.8.5.0\"",
     "files[1].path: unsafe path: "},
    {0, "\"lib/libcudnn.so.8.5.0\"", "\"/lib/libcudnn.so.8.5.0\"",
     "files[1].path: unsafe path: "},
    {0, "\"lib/libcudnn.so.8.5.0\"", "\"lib\\\\libcudnn.so.8.5.0\"",
     "files[1].path: unsafe path: "},
    {0, "\"LICENSE\"", "\"C:LICENSE\"", "files[5].path: unsafe path: "},
    {0, "\"LICENSE\"", "\"lib/aux.h\"", "files[5].path: unsafe path: "},
    {0, "\"LICENSE\"", "\"LICENSE\\u0000x\"", "(root): line "},
    {0, "\"LICENSE\"", "\"\"", "files[5].path: unsafe path: "},
    {0, "\"LICENSE\"", "5", "files[5].path: expected a string"},
    {0, "\"role\": \"license\",", "\"role\": \"license\", \"mode\": 420,",
     "files[5]: unknown key \"mode\""},
    {0, "\"role\": \"license\",", "\"role\": \"license\", \"role\": \"license\",",
     "files[5]: duplicate key \"role\""},
    {0, "\"role\": \"license\", ", "", "files[5]: missing key \"role\""},
    {0, "\"role\": \"license\"", "\"role\": \"exe\"",
     "files[5].role: unknown role \"exe\""},
    {0, "\"role\": \"header\"", "\"role\": \"Header\"",
     "files[0].role: unknown role \"Header\""},
    {0, "\"role\": \"license\"", "\"role\": \"import_lib\"",
     "files[5].role: import_lib is only valid on a Windows platform"},
    {1, "\"role\": \"runtime\", \"sha256\": null, \"size\": null",
     "\"role\": \"symlink\", \"target\": \"x.dll\"",
     "files[0].role: symlink is only valid on a Linux platform"},
    {0, "\"role\": \"symlink\", \"target\": \"libcudnn.so.8.5.0\"",
     "\"role\": \"symlink\", \"target\": \"libcudnn.so.8.5.0\", \"sha256\": null",
     "files[2].sha256: not allowed for a symlink"},
    {0, "\"role\": \"symlink\", \"target\": \"libcudnn.so.8.5.0\"",
     "\"role\": \"symlink\", \"size\": 0, \"target\": \"libcudnn.so.8.5.0\"",
     "files[2].size: not allowed for a symlink"},
    {0, "\"role\": \"symlink\", \"target\": \"libcudnn.so.8.5.0\"",
     "\"role\": \"symlink\"", "files[2]: missing key \"target\""},
    {0, "\"role\": \"license\", \"sha256\": null, \"size\": null",
     "\"role\": \"license\", \"sha256\": null, \"size\": null, \"target\": \"x\"",
     "files[5].target: only allowed for a symlink"},
    {0, "\"role\": \"license\", \"sha256\": null, \"size\": null",
     "\"role\": \"license\", \"sha256\": null", "files[5]: missing key \"size\""},
    {0, "\"role\": \"license\", \"sha256\": null, \"size\": null",
     "\"role\": \"license\", \"size\": null", "files[5]: missing key \"sha256\""},
    {0, "\"" H64 "\"", "\"" H64 "0\"", "files[0].sha256: expected 64 hex digits"},
    {0, "\"" H64 "\"", "\" " H64 "\"", "files[0].sha256: expected 64 hex digits"},
    {0, "\"size\": 10", "\"size\": 1.5",
     "files[0].size: expected a whole number from 0 to 2^53-1"},
    {0, "\"size\": 10", "\"size\": -0.5",
     "files[0].size: expected a whole number from 0 to 2^53-1"},
    {0, "\"LICENSE\"", "\"include/cudnn.h\"",
     "files[5].path: duplicate path \"include/cudnn.h\" (also files[0])"},
    {0, "\"LICENSE\"", "\"Include/CUDNN.h\"",
     "files[5].path: duplicate path \"Include/CUDNN.h\": differs only in case "
     "from files[0]"},
    {0, "\"LICENSE\"", "\"include/sub/cudnn.h\"",
     "files[5].path: \"include/sub/cudnn.h\" has the same file name as files[0] "
     "\"include/cudnn.h\""},
    {0, "\"LICENSE\"", "\"lib/CUDNN.H\"",
     "files[5].path: \"lib/CUDNN.H\" has the same file name as files[0]"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"../libcudnn.so.8.5.0\"",
     "files[2].target: unsafe link target"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"/lib/libcudnn.so\"",
     "files[2].target: unsafe link target"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"libcudnn.so.9\"",
     "files[2].target: \"lib/libcudnn.so.9\" is not listed in the same folder"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"cudnn.h\"",
     "files[2].target: \"lib/cudnn.h\" is not listed in the same folder"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"LIBCUDNN.so.8.5.0\"",
     "files[2].target: \"lib/LIBCUDNN.so.8.5.0\" is not listed"},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"libcudnn.so.8\"",
     "files[2].target: symlink chain loops back to \"lib/libcudnn.so.8\""},
    {0, "\"target\": \"libcudnn.so.8.5.0\"", "\"target\": \"libcudnn.so\"",
     "files[2].target: symlink chain loops back to"},
    /* verify */
    {0, "\"verify\": {", "\"verify\": {\"extra\": 1, ",
     "verify: unknown key \"extra\""},
    {0, "\"version_number\": 8500", "\"version_number\": 8600",
     "verify.version_number: 8600 does not agree with version \"8.5.0.96\" "
     "(expected 8500)"},
    {0, "\"version_number\": 8500", "\"version_number\": 80500",
     "verify.version_number: 80500 does not agree"},
    {0, "\"version_number\": 8500", "\"version_number\": \"8500\"",
     "verify.version_number: expected an integer"},
    {0, "\"version_number\": 8500, ", "", "verify: missing key \"version_number\""},
    {0, "\"library\": \"lib/libcudnn.so.8\"", "\"library\": \"lib/libcudnn.so.9\"",
     "verify.library: \"lib/libcudnn.so.9\" is not listed in files"},
    {0, "\"library\": \"lib/libcudnn.so.8\"", "\"library\": \"include/cudnn.h\"",
     "verify.library: \"include/cudnn.h\" has role header"},
    {0, "\"version_symbol\": \"cudnnGetVersion\"",
     "\"version_symbol\": \"cudnn-GetVersion\"",
     "verify.version_symbol: expected a C identifier"},
    {0, "\"version_symbol\": \"cudnnGetVersion\"", "\"version_symbol\": \"9abc\"",
     "verify.version_symbol: expected a C identifier"},
    {0, "\"version_symbol\": \"cudnnGetVersion\", ", "",
     "verify: missing key \"version_symbol\""},
    {0, "\"version_symbol\": \"cudnnGetVersion\",",
     "\"version_symbol\": \"cudnnGetVersion\", \"cudart_symbol\": 5,",
     "verify.cudart_symbol: expected a string"},
    {0, "\"version_symbol\": \"cudnnGetVersion\",",
     "\"version_symbol\": \"cudnnGetVersion\", \"mismatch_status\": -1,",
     "verify.mismatch_status: expected an integer from 0"},
    {0, ", \"sublibraries\": [{\"library\": \"lib/libcudnn_ops_infer.so.8\", "
        "\"check_symbol\": \"cudnnOpsInferVersionCheck\"}]",
     "", "verify: missing key \"sublibraries\""},
    {0, "\"sublibraries\": [{\"library\": \"lib/libcudnn_ops_infer.so.8\", "
        "\"check_symbol\": \"cudnnOpsInferVersionCheck\"}]",
     "\"sublibraries\": 5", "verify.sublibraries: expected a list"},
    {0, "\"sublibraries\": [{", "\"sublibraries\": [5, {",
     "verify.sublibraries[0]: expected an object"},
    {0, ", \"check_symbol\": \"cudnnOpsInferVersionCheck\"", "",
     "verify.sublibraries[0]: missing key \"check_symbol\""},
    {0, "\"check_symbol\": \"cudnnOpsInferVersionCheck\"",
     "\"check_symbol\": \"cudnnOpsInferVersionCheck\", \"x\": 1",
     "verify.sublibraries[0]: unknown key \"x\""},
    {0, "\"library\": \"lib/libcudnn_ops_infer.so.8\"",
     "\"library\": \"lib/libcudnn_ops_train.so.8\"",
     "verify.sublibraries[0].library: \"lib/libcudnn_ops_train.so.8\" is not "
     "listed in files"},
    {0, "\"library\": \"lib/libcudnn_ops_infer.so.8\"", "\"library\": \"LICENSE\"",
     "verify.sublibraries[0].library: \"LICENSE\" has role license"},
    {0, "\"check_symbol\": \"cudnnOpsInferVersionCheck\"",
     "\"check_symbol\": \"\"", "verify.sublibraries[0].check_symbol: expected a C "
                               "identifier"},
    {0, "\"verify\": {", "\"verify\": {\"sublibraries\": [], ",
     "verify: duplicate key \"sublibraries\""},
    /* syntax */
    {0, "\"LICENSE\", ", "\"LICENSE\",, ", "(root): not valid JSON at line 14"},
    {0, "\"size\": null}\n  ]", "\"size\": null},\n  ]", "(root): not valid JSON"},
    {0, "}\n}\n", "}\n}\n}", "(root): unexpected text after the JSON value"},
    {0, "{\n", "\n", "(root): unexpected text after the JSON value at line 2"},
};

static void test_bad_manifests(void)
{
    size_t n = sizeof bad_cases / sizeof bad_cases[0], ran = 0;
    for (size_t i = 0; i < n; i++) {
        const struct bad_case *bc = &bad_cases[i];
        struct cdd_manifest *m = NULL;
        char *text = mutate(bc->windows ? base_windows : base_linux, bc->from,
                            bc->to);
        CHECK_MSG(text != NULL, "case %zu: \"%s\" not in the base text", i,
                  bc->from);
        if (!text)
            continue;
        cdd_clear_error();
        int r = cdd_manifest_parse(text, strlen(text), "bad.json", &m);
        const struct cdd_errinfo *e = cdd_last_error();
        CHECK_MSG(r == CDD_E_MANIFEST, "case %zu (want \"%s\"): r=%d", i,
                  bc->want, r);
        CHECK_MSG(m == NULL, "case %zu: manifest returned on failure", i);
        CHECK_MSG(strstr(e->msg, bc->want) != NULL,
                  "case %zu: message \"%s\" lacks \"%s\"", i, e->msg, bc->want);
        CHECK_STR(e->path, "bad.json");
        cdd_manifest_free(m);
        free(text);
        ran++;
    }
    CHECK_MSG(ran >= 40, "only %zu bad manifests", ran);
}

static void test_bad_whole_texts(void)
{
    static const char *const texts[][2] = {
        {"[]", "(root): expected an object"},
        {"", "(root): not valid JSON"},
        {"   ", "(root): not valid JSON"},
        {"null", "(root): expected an object"},
        {"{}", "(root): missing key \"schema_version\""},
        {"{\"schema_version\": 1}", "(root): missing key \"product\""},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        struct cdd_manifest *m = NULL;
        int r = cdd_manifest_parse(texts[i][0], strlen(texts[i][0]), "w.json", &m);
        CHECK_INT(r, CDD_E_MANIFEST);
        CHECK_MSG(strstr(cdd_last_error()->msg, texts[i][1]) != NULL,
                  "text %zu: \"%s\" lacks \"%s\"", i, cdd_last_error()->msg,
                  texts[i][1]);
        cdd_manifest_free(m);
    }
    /* An embedded NUL byte is refused, not silently cut off. */
    static const char nul_text[] = "{\"schema_version\": 1}\0garbage";
    struct cdd_manifest *m = NULL;
    CHECK_INT(cdd_manifest_parse(nul_text, sizeof nul_text - 1, "n.json", &m),
              CDD_E_MANIFEST);
    CHECK(strstr(cdd_last_error()->msg, "NUL") != NULL);
}

/* ---- good manifests ------------------------------------------------------------ */

static void test_base_parses(void)
{
    struct cdd_manifest *m = NULL;
    uint8_t want[CDD_SHA256_LEN];
    int r = cdd_manifest_parse(base_linux, strlen(base_linux),
                               "some/dir/base.json", &m);
    CHECK_MSG(r == 0, "%s", cdd_last_error()->msg);
    if (!m)
        return;
    CHECK_STR(m->source, "some/dir/base.json");
    CHECK_STR(m->name, "base");
    CHECK_INT(m->schema_version, 1);
    CHECK_STR(m->product, "cudnn");
    CHECK_STR(m->version, "8.5.0.96");
    CHECK_INT(m->cuda_major, 11);
    CHECK_INT(m->platform, CDD_PLATFORM_LINUX_X86_64);
    CHECK_STR(m->archive.filename, "a.tar.xz");
    CHECK_INT(m->archive.n_urls, 1);
    CHECK_STR(m->archive.urls[0], "https://example.com/a.tar.xz");
    CHECK_INT(m->archive.has_sha256, 0);
    CHECK_INT(m->archive.has_size, 0);
    CHECK_INT(m->archive.strip_components, 1);
    CHECK(m->redistrib_url == NULL);
    CHECK_INT(m->files_exact, 1);
    CHECK_INT(m->n_files, 6);
    CHECK_INT(m->files[0].role, CDD_ROLE_HEADER);
    CHECK_INT(m->files[0].has_sha256, 1);
    CHECK_INT(cdd_hex_decode(H64, want, CDD_SHA256_LEN), 0);
    CHECK(memcmp(m->files[0].sha256, want, CDD_SHA256_LEN) == 0);
    CHECK_INT(m->files[0].has_size, 1);
    CHECK_INT(m->files[0].size, 10);
    CHECK(m->files[0].target == NULL);
    CHECK_INT(m->files[2].role, CDD_ROLE_SYMLINK);
    CHECK_STR(m->files[2].target, "libcudnn.so.8.5.0");
    CHECK_INT(m->files[5].role, CDD_ROLE_LICENSE);
    CHECK_INT(m->has_verify, 1);
    CHECK_INT(m->verify.version_number, 8500);
    CHECK_STR(m->verify.library, "lib/libcudnn.so.8");
    CHECK_STR(m->verify.version_symbol, "cudnnGetVersion");
    CHECK(m->verify.cudart_symbol == NULL);
    CHECK_INT(m->verify.mismatch_status, 14); /* cuDNN 8 default */
    CHECK_INT(m->verify.n_sublibs, 1);
    CHECK_STR(m->verify.sublibs[0].check_symbol, "cudnnOpsInferVersionCheck");
    /* doc_sha256 is the hash of the text as given. */
    struct cdd_sha256 *h = NULL;
    uint8_t d[CDD_SHA256_LEN];
    CHECK_INT(cdd_sha256_new(&h), 0);
    CHECK_INT(cdd_sha256_update(h, base_linux, strlen(base_linux)), 0);
    CHECK_INT(cdd_sha256_final(h, d), 0);
    cdd_sha256_free(h);
    CHECK(memcmp(d, m->doc_sha256, CDD_SHA256_LEN) == 0);
    /* Lookups. */
    CHECK(cdd_manifest_file(m, "lib/libcudnn.so") == &m->files[3]);
    CHECK(cdd_manifest_file(m, "LIB/libcudnn.so") == NULL);
    CHECK(cdd_manifest_file(m, "nope") == NULL);
    cdd_manifest_free(m);

    m = parse_ok(base_windows);
    if (m) {
        CHECK_INT(m->platform, CDD_PLATFORM_WINDOWS_X86_64);
        CHECK_INT(m->archive.n_urls, 0);
        CHECK_INT(m->archive.has_size, 1);
        CHECK_INT(m->archive.size, 123);
        CHECK_INT(m->files[1].role, CDD_ROLE_IMPORT_LIB);
        CHECK_INT(m->has_verify, 0);
        CHECK_STR(m->name, "t");
    }
    cdd_manifest_free(m);
    cdd_manifest_free(NULL);
}

static void test_accepted_variants(void)
{
    static const char *const v[][2] = {
        /* upper-case hex is accepted (stored as bytes, written lower-case) */
        {"\"" H64 "\"",
         "\"0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\""},
        {"\"size\": 10", "\"size\": 9007199254740991"},
        {"\"size\": 10", "\"size\": 0"},
        {"\"size\": 10", "\"size\": 1.0e3"},
        {"\"strip_components\": 1", "\"strip_components\": 0"},
        {"\"strip_components\": 1", "\"strip_components\": 8"},
        {"\"8.5.0.96\"", "\"8.5.0\""},
        {"\"https://example.com/a.tar.xz\"",
         "[\"https://a.example/x\", \"HTTP://b.example/y\"]"},
        {"\"product\": \"cudnn\",", "\"product\": \"cudnn\", \"files_exact\": false,"},
        {"\"sublibraries\": [{\"library\": \"lib/libcudnn_ops_infer.so.8\", "
         "\"check_symbol\": \"cudnnOpsInferVersionCheck\"}]",
         "\"sublibraries\": []"},
        {"\"library\": \"lib/libcudnn.so.8\"", "\"library\": \"lib/libcudnn.so.8.5.0\""},
        {"\"version_symbol\": \"cudnnGetVersion\",",
         "\"version_symbol\": \"cudnnGetVersion\", \"cudart_symbol\": "
         "\"cudnnGetCudartVersion\", \"mismatch_status\": 14,"},
        {"{\n", "\xef\xbb\xbf{\n"}, /* UTF-8 byte order mark */
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *text = mutate(base_linux, v[i][0], v[i][1]);
        struct cdd_manifest *m = NULL;
        CHECK_MSG(text != NULL, "variant %zu: base text lacks the pattern", i);
        if (!text)
            continue;
        int r = cdd_manifest_parse(text, strlen(text), "v.json", &m);
        CHECK_MSG(r == 0, "variant %zu: %s", i, cdd_last_error()->msg);
        cdd_manifest_free(m);
        free(text);
    }
}

/* version_number must follow the encoding of the version's major. */
static void test_version_number(void)
{
    static const struct {
        const char *version;
        const char *number;
        int ok;
        long mismatch;
    } t[] = {
        {"8.5.0.96", "8500", 1, 14},     {"8.5.0.96", "85000", 0, 0},
        {"8.9.7.29", "8907", 1, 14},     {"9.14.0.64", "91400", 1, 1002},
        {"9.14.0.64", "9140", 0, 0},     {"9.1.1", "90101", 1, 1002},
        {"7.6.5.32", "7605", 1, 14},     {"10.0.0", "100000", 1, 1002},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char ver[64], num[64];
        snprintf(ver, sizeof ver, "\"%s\"", t[i].version);
        snprintf(num, sizeof num, "\"version_number\": %s", t[i].number);
        char *a = mutate(base_linux, "\"8.5.0.96\"", ver);
        char *b = a ? mutate(a, "\"version_number\": 8500", num) : NULL;
        struct cdd_manifest *m = NULL;
        CHECK(b != NULL);
        int r = b ? cdd_manifest_parse(b, strlen(b), "v.json", &m) : -1;
        if (t[i].ok) {
            CHECK_MSG(r == 0, "%s/%s: %s", t[i].version, t[i].number,
                      cdd_last_error()->msg);
            if (m)
                CHECK_INT(m->verify.mismatch_status, t[i].mismatch);
        } else {
            CHECK_MSG(r == CDD_E_MANIFEST &&
                          strstr(cdd_last_error()->msg, "does not agree"),
                      "%s/%s accepted", t[i].version, t[i].number);
        }
        cdd_manifest_free(m);
        free(a);
        free(b);
    }
}

/* ---- shipped manifests ------------------------------------------------------------ */

static void count_roles(const struct cdd_manifest *m, size_t counts[CDD_ROLE_COUNT])
{
    memset(counts, 0, CDD_ROLE_COUNT * sizeof counts[0]);
    for (size_t i = 0; i < m->n_files; i++)
        counts[m->files[i].role]++;
}

/* cuDNN 8.9.7.29, the pins of NVIDIA's redistrib_8.9.7.json. */
static void test_shipped_897(void)
{
    static const struct {
        const char *name, *sha;
        uint64_t size;
        int cuda, windows;
    } want[] = {
        {"cudnn-8.9.7.29-cuda11-windows-x86_64",
         "5e45478efe71a96329e6c0d2a3a2f79c747c15b2a51fead4b84c89b02cbf1671",
         704240064u, 11, 1},
        {"cudnn-8.9.7.29-cuda12-windows-x86_64",
         "94fc17af8e83a26cc5d231ed23981b28c29c3fc2e87b1844ea3f46486f481df5",
         708408517u, 12, 1},
        {"cudnn-8.9.7.29-cuda11-linux-x86_64",
         "a3e2509028cecda0117ce5a0f42106346e82e86d390f4bb9475afc976c77402e",
         860967256u, 11, 0},
        {"cudnn-8.9.7.29-cuda12-linux-x86_64",
         "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb",
         864984964u, 12, 0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        struct cdd_manifest *m = NULL;
        uint8_t sha[CDD_SHA256_LEN];
        size_t c[CDD_ROLE_COUNT];
        char fname[128];
        CHECK_INT(cdd_manifest_find(want[k].name, &m), 0);
        if (!m)
            continue;
        snprintf(fname, sizeof fname, "cudnn-%s-8.9.7.29_cuda%d-archive.%s",
                 want[k].windows ? "windows-x86_64" : "linux-x86_64",
                 want[k].cuda, want[k].windows ? "zip" : "tar.xz");
        CHECK_STR(m->archive.filename, fname);
        CHECK_INT(m->cuda_major, want[k].cuda);
        CHECK_INT(m->platform, want[k].windows ? CDD_PLATFORM_WINDOWS_X86_64
                                               : CDD_PLATFORM_LINUX_X86_64);
        CHECK_INT(m->archive.has_sha256, 1);
        CHECK_INT(cdd_hex_decode(want[k].sha, sha, CDD_SHA256_LEN), 0);
        CHECK(memcmp(m->archive.sha256, sha, CDD_SHA256_LEN) == 0);
        CHECK_INT(m->archive.has_size, 1);
        CHECK(m->archive.size == want[k].size);
        CHECK_INT(m->archive.strip_components, 1);
        /* Only what public sources show is listed: the rest comes in
         * under the pin by the layout rules. */
        CHECK_INT(m->files_exact, 0);
        CHECK_INT(m->verify.version_number, 8907);
        CHECK_INT(m->verify.mismatch_status, 14);
        CHECK_INT(m->verify.n_sublibs, 6);
        count_roles(m, c);
        CHECK_INT(c[CDD_ROLE_RUNTIME], 7);
        if (want[k].windows) {
            CHECK_INT(m->n_files, 7);
            CHECK_STR(m->verify.library, "bin/cudnn64_8.dll");
        } else {
            CHECK_INT(m->n_files, 31);
            CHECK_INT(c[CDD_ROLE_HEADER], 9);
            CHECK_INT(c[CDD_ROLE_SYMLINK], 14);
            CHECK_INT(c[CDD_ROLE_LICENSE], 1);
            CHECK_STR(m->verify.library, "lib/libcudnn.so.8");
            CHECK(cdd_manifest_file(m, "lib/libcudnn_cnn_train.so.8.9.7") != NULL);
        }
        for (size_t i = 0; i < m->n_files; i++) {
            enum cdd_role r;
            int link = m->files[i].role == CDD_ROLE_SYMLINK;
            CHECK_INT(cdd_role_from_path(m->platform, m->files[i].path, link, &r), 0);
            CHECK_INT(r, m->files[i].role);
            CHECK_INT(m->files[i].has_sha256, 0);
        }
        cdd_manifest_free(m);
    }
}

static void test_shipped(void)
{
    struct cdd_manifest *w = NULL, *l = NULL;
    size_t c[CDD_ROLE_COUNT];
    uint8_t want[CDD_SHA256_LEN];
    CHECK_INT(cdd_builtin_manifest_count, 7);
    CHECK(cdd_builtin_manifests[cdd_builtin_manifest_count].name == NULL);
    /* Every shipped manifest loads; the cuDNN 9 template has its layout. */
    for (size_t i = 0; i < cdd_builtin_manifest_count; i++) {
        struct cdd_manifest *b = NULL;
        CHECK_INT(cdd_manifest_find(cdd_builtin_manifests[i].name, &b), 0);
        cdd_manifest_free(b);
    }
    struct cdd_manifest *n9 = NULL;
    CHECK_INT(cdd_manifest_find("cudnn-9.14.0.64-cuda13-linux-x86_64", &n9), 0);
    if (n9) {
        size_t loadonly = 0;
        CHECK_INT(n9->n_files, 32);
        CHECK_INT(n9->files_exact, 0);
        CHECK_INT(n9->archive.has_sha256, 0);
        CHECK_INT(n9->verify.version_number, 91400);
        CHECK_INT(n9->verify.mismatch_status, 1002);
        CHECK_INT(n9->verify.n_sublibs, 7);
        for (size_t i = 0; i < n9->verify.n_sublibs; i++)
            loadonly += n9->verify.sublibs[i].check_symbol == NULL;
        CHECK_INT(loadonly, 3);
        cdd_manifest_free(n9);
    }
    CHECK_INT(cdd_manifest_find("cudnn-8.5.0.96-cuda11-windows-x86_64", &w), 0);
    CHECK_INT(cdd_manifest_find("cudnn-8.5.0.96-cuda11-linux-x86_64", &l), 0);
    if (!w || !l) {
        cdd_manifest_free(w);
        cdd_manifest_free(l);
        return;
    }
    CHECK_STR(w->source, "builtin:cudnn-8.5.0.96-cuda11-windows-x86_64");
    CHECK_STR(w->name, "cudnn-8.5.0.96-cuda11-windows-x86_64");
    CHECK_INT(w->n_files, 31);
    CHECK_INT(w->platform, CDD_PLATFORM_WINDOWS_X86_64);
    CHECK_INT(w->files_exact, 1);
    /* NVIDIA's pin from redistrib_8.5.0.96.json: installs with no flag. */
    CHECK_INT(w->archive.has_sha256, 1);
    CHECK_INT(cdd_hex_decode("bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b",
                             want, CDD_SHA256_LEN), 0);
    CHECK(memcmp(w->archive.sha256, want, CDD_SHA256_LEN) == 0);
    CHECK_INT(w->archive.has_size, 1);
    CHECK(w->archive.size == 542516637u); /* 517.38 MiB */
    CHECK_STR(w->archive.filename, "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip");
    count_roles(w, c);
    CHECK_INT(c[CDD_ROLE_RUNTIME], 7);
    CHECK_INT(c[CDD_ROLE_HEADER], 9);
    CHECK_INT(c[CDD_ROLE_IMPORT_LIB], 14);
    CHECK_INT(c[CDD_ROLE_LICENSE], 1);
    CHECK_INT(w->verify.n_sublibs, 6);
    CHECK_STR(w->verify.library, "bin/cudnn64_8.dll");
    CHECK_INT(w->verify.version_number, 8500);
    CHECK_INT(w->verify.mismatch_status, 14);
    /* Its optional component: zlibwapi, pinned, one entry, as a manifest
     * of its own that obtain and extract read unchanged. */
    CHECK_INT(w->n_components, 1);
    if (w->n_components == 1) {
        const struct cdd_mcomponent *z = cdd_manifest_component(w, "zlibwapi");
        CHECK(z == &w->components[0]);
        CHECK(cdd_manifest_component(w, "cublas") == NULL);
        CHECK_STR(z->cudnn_min, "8.3");
        CHECK_STR(z->cudnn_max, "9.1");
        CHECK_INT(z->n_cuda_majors, 3);
        CHECK_INT(z->m->archive.has_sha256, 1);
        CHECK_STR(z->m->archive.filename, "zlib123dllx64.zip");
        CHECK_INT(z->m->n_files, 1);
        CHECK_STR(z->m->files[0].path, "dll_x64/zlibwapi.dll");
        CHECK_INT(z->m->files[0].role, CDD_ROLE_RUNTIME);
        CHECK_INT(z->m->files_exact, 0);
        CHECK_INT(z->m->platform, CDD_PLATFORM_WINDOWS_X86_64);
        CHECK_INT(z->m->cuda_major, 11);
    }
    CHECK_INT(l->n_components, 0);
    for (size_t i = 0; i < w->n_files; i++) {
        enum cdd_role r;
        CHECK_INT(w->files[i].has_sha256, 0);
        CHECK_INT(cdd_role_from_path(w->platform, w->files[i].path, 0, &r), 0);
        CHECK_INT(r, w->files[i].role);
    }

    CHECK_INT(l->n_files, 31);
    CHECK_INT(l->platform, CDD_PLATFORM_LINUX_X86_64);
    CHECK_INT(l->files_exact, 0);
    CHECK_INT(l->archive.has_sha256, 1);
    CHECK_INT(cdd_hex_decode("5454a6fd94f008728caae9adad993c4e85ef36302e26bce43bea7d458a5e7b6d",
                             want, CDD_SHA256_LEN), 0);
    CHECK(memcmp(l->archive.sha256, want, CDD_SHA256_LEN) == 0);
    CHECK_INT(l->archive.has_size, 1);
    CHECK(l->archive.size == 692647752u);
    count_roles(l, c);
    CHECK_INT(c[CDD_ROLE_RUNTIME], 7);
    CHECK_INT(c[CDD_ROLE_HEADER], 9);
    CHECK_INT(c[CDD_ROLE_SYMLINK], 14);
    CHECK_INT(c[CDD_ROLE_LICENSE], 1);
    CHECK_STR(l->verify.library, "lib/libcudnn.so.8");
    CHECK_STR(l->verify.sublibs[5].library, "lib/libcudnn_adv_train.so.8");
    CHECK_STR(l->verify.sublibs[5].check_symbol, "cudnnAdvTrainVersionCheck");
    for (size_t i = 0; i < l->n_files; i++) {
        enum cdd_role r;
        int link = l->files[i].role == CDD_ROLE_SYMLINK;
        CHECK_INT(cdd_role_from_path(l->platform, l->files[i].path, link, &r), 0);
        CHECK_INT(r, l->files[i].role);
    }
    cdd_manifest_free(w);
    cdd_manifest_free(l);
    test_shipped_897();

    /* The shipped files are in canonical form: the writer reproduces them
     * byte for byte. */
    for (size_t i = 0; i < cdd_builtin_manifest_count; i++) {
        const struct cdd_builtin_manifest *b = &cdd_builtin_manifests[i];
        struct cdd_manifest *m = NULL;
        char *text = NULL;
        CHECK_INT(cdd_manifest_parse(b->text, b->len, b->name, &m), 0);
        if (m)
            CHECK_INT(cdd_manifest_to_json(m, &text), 0);
        CHECK_MSG(text && strlen(text) == b->len &&
                      memcmp(text, b->text, b->len) == 0,
                  "%s is not in canonical form", b->name);
        free(text);
        cdd_manifest_free(m);
    }
}

/* ---- writer ------------------------------------------------------------------------ */

static void round_trip(const char *text)
{
    struct cdd_manifest *a = parse_ok(text), *b = NULL;
    char *j1 = NULL, *j2 = NULL;
    if (!a)
        return;
    CHECK_INT(cdd_manifest_to_json(a, &j1), 0);
    if (j1) {
        CHECK(strlen(j1) > 0 && j1[strlen(j1) - 1] == '\n');
        CHECK_MSG(cdd_manifest_parse(j1, strlen(j1), "rt.json", &b) == 0, "%s\n%s",
                  cdd_last_error()->msg, j1);
    }
    if (b) {
        CHECK(manifest_equal(a, b));
        CHECK_INT(cdd_manifest_to_json(b, &j2), 0);
        CHECK(j2 && strcmp(j1, j2) == 0);
    }
    free(j1);
    free(j2);
    cdd_manifest_free(a);
    cdd_manifest_free(b);
}

static void test_round_trip(void)
{
    round_trip(base_linux);
    round_trip(base_windows);
    char *t = mutate(base_linux, "\"https://example.com/a.tar.xz\"",
                     "[\"https://e.example/a\\\"b\\\\c\", \"https://f.example/\"]");
    char *u = t ? mutate(t, "\"product\": \"cudnn\",",
                         "\"product\": \"cudnn\", \"files_exact\": false, "
                         "\"redistrib_url\": \"https://e.example/r.json\",")
                : NULL;
    char *v = u ? mutate(u, "\"size\": 10", "\"size\": 9007199254740991") : NULL;
    char *w = v ? mutate(v, "\"LICENSE\"", "\"include/caf\\u00e9.h\"") : NULL;
    CHECK(w != NULL);
    if (w)
        round_trip(w);
    free(t);
    free(u);
    free(v);
    free(w);

    struct cdd_manifest *m = parse_ok(base_linux);
    char *j = NULL;
    if (m) {
        CHECK_INT(cdd_manifest_to_json(m, &j), 0);
        /* Key order as in docs/manifest.md; hashes written lower-case. */
        const char *p1 = j ? strstr(j, "\"schema_version\"") : NULL;
        const char *p2 = j ? strstr(j, "\"archive\"") : NULL;
        const char *p3 = j ? strstr(j, "\"files\"") : NULL;
        const char *p4 = j ? strstr(j, "\"verify\"") : NULL;
        CHECK(p1 && p2 && p3 && p4 && p1 < p2 && p2 < p3 && p3 < p4);
        CHECK(j && strstr(j, "\n  \"archive\": {\n    \"filename\"") != NULL);
        CHECK(j && strstr(j, H64) != NULL);
        CHECK(j && strstr(j, "\"mismatch_status\": 14") != NULL);
    }
    free(j);
    cdd_manifest_free(m);
}

/* ---- finding and loading ----------------------------------------------------------------- */

static void test_find(void)
{
    struct cdd_manifest *m = NULL;
    CHECK_INT(cdd_manifest_find("cudnn-8.5.0.96-cuda11-linux-x86_64.json", &m), 0);
    CHECK(m && strcmp(m->name, "cudnn-8.5.0.96-cuda11-linux-x86_64") == 0);
    cdd_manifest_free(m);
    m = NULL;

    CHECK_INT(cdd_manifest_find(NULL, &m), 0);
    CHECK(m && m->platform == cdd_platform_host());
    CHECK(m && strcmp(m->version, "8.5.0.96") == 0 && m->cuda_major == 11);
    cdd_manifest_free(m);
    m = NULL;

    CHECK_INT(cdd_manifest_find("cudnn-9.9.9-cuda99-linux-x86_64", &m), CDD_E_NOTFOUND);
    CHECK(m == NULL);
    CHECK_STR(cdd_last_error()->path, "cudnn-9.9.9-cuda99-linux-x86_64");
    CHECK(strstr(cdd_last_error()->msg, "cudnn-8.5.0.96-cuda11-linux-x86_64") != NULL);
    CHECK(strstr(cdd_last_error()->msg, "cudnn-8.5.0.96-cuda11-windows-x86_64") != NULL);
    /* A path that does not exist is a missing file, not a builtin. */
    CHECK_INT(cdd_manifest_find("no/such/dir/cudnn-8.5.0.96-cuda11-linux-x86_64.json",
                                &m), CDD_E_NOTFOUND);
    CHECK(m == NULL);
    /* A name past CDD_NAME_MAX is refused as too long, not cut and looked
     * up; one at the bound is merely not found. */
    char longname[CDD_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    CHECK_INT(cdd_manifest_find(longname, &m), CDD_E_TOOLONG);
    CHECK(m == NULL);
    longname[CDD_NAME_MAX] = '\0';
    CHECK_INT(cdd_manifest_find(longname, &m), CDD_E_NOTFOUND);
    CHECK(m == NULL);
}

static void test_load_file(void)
{
    const char *dir = getenv("CDD_TEST_TMP");
    char path[1024], rel[1100];
    struct cdd_manifest *m = NULL;
    if (!dir || !*dir)
        dir = "/tmp";
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(path, sizeof path, "%s/test-manifest-%ld.json", dir, cdd_getpid());
    CHECK_INT(cdd_fs_write_atomic(path, base_linux, strlen(base_linux)), 0);

    CHECK_INT(cdd_manifest_load_file(path, &m), 0);
    CHECK(m && strcmp(m->source, path) == 0);
    CHECK(m && strncmp(m->name, "test-manifest-", 14) == 0 &&
          !strstr(m->name, ".json") && !strchr(m->name, '/'));
    cdd_manifest_free(m);
    m = NULL;

    /* find: a path is loaded as a file */
    CHECK_INT(cdd_manifest_find(path, &m), 0);
    CHECK(m && strcmp(m->source, path) == 0 && m->n_files == 6);
    cdd_manifest_free(m);
    m = NULL;

    /* A bad file is reported with its name as the error's path. */
    char *bad = mutate(base_linux, "\"size\": 10", "\"size\": -1");
    CHECK_INT(cdd_fs_write_atomic(path, bad, strlen(bad)), 0);
    CHECK_INT(cdd_manifest_load_file(path, &m), CDD_E_MANIFEST);
    CHECK_STR(cdd_last_error()->path, path);
    CHECK(strstr(cdd_last_error()->msg, "files[0].size: expected a whole number") != NULL);
    free(bad);
    CHECK_INT(cdd_fs_unlink(path), 0);

    CHECK_INT(cdd_manifest_load_file(path, &m), CDD_E_NOTFOUND);
    CHECK(m == NULL);
    snprintf(rel, sizeof rel, "%s/missing.json", dir);
    CHECK_INT(cdd_manifest_find(rel, &m), CDD_E_NOTFOUND);
}

/* ---- names and rules ---------------------------------------------------------------------- */

static void test_names(void)
{
    enum cdd_role r;
    enum cdd_platform p;
    for (int i = 0; i < CDD_ROLE_COUNT; i++) {
        CHECK_INT(cdd_role_parse(cdd_role_name((enum cdd_role)i), &r), 0);
        CHECK_INT(r, i);
    }
    CHECK_STR(cdd_role_name(CDD_ROLE_IMPORT_LIB), "import_lib");
    CHECK(cdd_role_name(CDD_ROLE_COUNT) == NULL);
    CHECK_INT(cdd_role_parse("Runtime", &r), -1);
    CHECK_INT(cdd_role_parse("", &r), -1);
    for (int i = 0; i < CDD_PLATFORM_COUNT; i++) {
        CHECK_INT(cdd_platform_parse(cdd_platform_name((enum cdd_platform)i), &p), 0);
        CHECK_INT(p, i);
    }
    CHECK_STR(cdd_platform_name(CDD_PLATFORM_LINUX_X86_64), "linux-x86_64");
    CHECK(cdd_platform_name(CDD_PLATFORM_COUNT) == NULL);
    CHECK_INT(cdd_platform_parse("win64", &p), -1);
    CHECK(cdd_platform_host() == CDD_PLATFORM_WINDOWS_X86_64 ||
          cdd_platform_host() == CDD_PLATFORM_LINUX_X86_64);
}

static void test_role_from_path(void)
{
    static const struct {
        enum cdd_platform p;
        const char *path;
        int link;
        int role; /* -1: no rule fits */
    } t[] = {
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/cudnn64_8.dll", 0, CDD_ROLE_RUNTIME},
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/zlibwapi.DLL", 0, CDD_ROLE_RUNTIME},
        {CDD_PLATFORM_WINDOWS_X86_64, "include/cudnn.h", 0, CDD_ROLE_HEADER},
        {CDD_PLATFORM_WINDOWS_X86_64, "lib/x64/cudnn.lib", 0, CDD_ROLE_IMPORT_LIB},
        {CDD_PLATFORM_WINDOWS_X86_64, "LICENSE", 0, CDD_ROLE_LICENSE},
        {CDD_PLATFORM_WINDOWS_X86_64, "LICENSE.txt", 0, CDD_ROLE_LICENSE},
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/cudnn64_8.dll", 1, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/sub/x.dll", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/.dll", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "bin/readme.txt", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "lib/cudnn.lib", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "lib/x64/cudnn.a", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "include/cudnn.hpp", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "x/LICENSE", 0, -1},
        {CDD_PLATFORM_WINDOWS_X86_64, "cudnn64_8.dll", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "include/cudnn.h", 0, CDD_ROLE_HEADER},
        {CDD_PLATFORM_LINUX_X86_64, "include/cudnn_v8.h", 0, CDD_ROLE_HEADER},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn_static.a", 0, CDD_ROLE_STATIC_LIB},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn.so.8.5.0", 0, CDD_ROLE_RUNTIME},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn.so.8", 1, CDD_ROLE_SYMLINK},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn.so", 1, CDD_ROLE_SYMLINK},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn.so", 0, CDD_ROLE_RUNTIME},
        {CDD_PLATFORM_LINUX_X86_64, "LICENSE", 0, CDD_ROLE_LICENSE},
        {CDD_PLATFORM_LINUX_X86_64, "LICENSE.txt", 0, CDD_ROLE_LICENSE},
        {CDD_PLATFORM_LINUX_X86_64, "include/cudnn.h", 1, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn_static.a", 1, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib/.so", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib/libcudnn.sox", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib64/libcudnn.so.8", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib/x/libcudnn.so.8", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "Include/cudnn.h", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "bin/cudnn64_8.dll", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "lib/x64/cudnn.lib", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "doc/LICENSE", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "README", 0, -1},
        {CDD_PLATFORM_LINUX_X86_64, "include", 0, -1},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        enum cdd_role r = CDD_ROLE_COUNT;
        int got = cdd_role_from_path(t[i].p, t[i].path, t[i].link, &r);
        if (t[i].role < 0)
            CHECK_MSG(got == -1, "%s (link %d): got role %d", t[i].path,
                      t[i].link, (int)r);
        else
            CHECK_MSG(got == 0 && (int)r == t[i].role, "%s (link %d): got %d/%d",
                      t[i].path, t[i].link, got, (int)r);
    }
    enum cdd_role r;
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_COUNT, "include/cudnn.h", 0, &r), -1);
    CHECK_INT(cdd_role_from_path(CDD_PLATFORM_LINUX_X86_64, NULL, 0, &r), -1);
}

TEST_MAIN(TEST(test_bad_manifests), TEST(test_bad_whole_texts),
          TEST(test_base_parses), TEST(test_accepted_variants),
          TEST(test_version_number), TEST(test_shipped), TEST(test_round_trip),
          TEST(test_find), TEST(test_load_file), TEST(test_names),
          TEST(test_role_from_path))
