/* The release catalog: every compiled-in entry parses and is sane (sha256,
 * size, safe path, platform, CUDA variant, facts), and the selection matrix
 * (CUDA 11.8 / 12.4 / 13.0 x compute capability 5.2 ... 12.0 x driver)
 * over the real catalog, with a reason for every archive that is skipped;
 * plus a test catalog on disk for the re-spin digests and the rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/catalog.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "fixture.h"
#include "test.h"

static void test_builtin_parses(void)
{
    struct cdd_catalog *c = NULL;
    CHECK_INT(cdd_catalog_load(NULL, &c), 0);
    if (!c)
        return;
    CHECK(c->n >= 5);
    for (size_t i = 0; i < c->n; i++) {
        const struct cdd_cat_release *r = &c->releases[i];
        const char *why = NULL;
        CHECK_MSG(r->v[0] == 8 || r->v[0] == 9, "%s", r->version);
        CHECK_MSG(r->has_facts, "%s has no facts", r->label);
        CHECK_MSG(r->layout != NULL, "%s: no layout generation", r->label);
        CHECK_MSG(r->n_archives > 0, "%s: no archives", r->label);
        if (i > 0)
            CHECK_MSG(memcmp(c->releases[i - 1].v, r->v, sizeof r->v) != 0,
                      "%s twice", r->version);
        for (size_t j = 0; j < r->n_archives; j++) {
            const struct cdd_cat_archive *a = &r->archives[j];
            CHECK_MSG(cdd_path_is_safe(a->relative_path, 0, &why), "%s: %s",
                      a->relative_path, why ? why : "");
            CHECK(strncmp(a->relative_path, "cudnn/", 6) == 0);
            CHECK(strstr(a->filename, r->version) != NULL);
            CHECK(strstr(a->relative_path, a->platform) != NULL);
            CHECK_MSG(a->cuda_major >= 10 && a->cuda_major <= 13, "%s",
                      a->relative_path);
            CHECK(a->n_digests >= 1);
            CHECK_MSG(a->digests[0].has_size && a->digests[0].size > 1000000,
                      "%s", a->relative_path);
            /* Each CUDA variant has its support-matrix facts. */
            CHECK_MSG(cdd_cat_variant_of(r, a->cuda_major) != NULL,
                      "%s: no facts for CUDA %d", r->label, a->cuda_major);
        }
        for (size_t k = 0; k < r->n_variants; k++) {
            const struct cdd_cat_variant *v = &r->variants[k];
            CHECK(v->cc_lo > 0 && v->cc_lo <= v->cc_hi);
            CHECK(v->minor_lo >= 0 && v->minor_lo <= v->minor_hi);
            /* cuDNN 9.11 dropped every GPU before Turing. */
            if (r->v[0] == 9 && r->v[1] >= 11)
                CHECK_MSG(v->cc_lo == 75, "%s", r->label);
            else
                CHECK_MSG(v->cc_lo <= 50, "%s", r->label);
        }
    }
    const struct cdd_cat_release *rel = NULL;
    const struct cdd_cat_archive *a = cdd_catalog_by_filename(
        c, "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip", &rel);
    CHECK(a != NULL);
    if (a) {
        char hex[CDD_SHA256_HEX];
        cdd_hex_encode(a->digests[0].sha256, CDD_SHA256_LEN, hex);
        CHECK_STR(hex,
                  "bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b");
        CHECK(a->digests[0].size == 542516637u);
        CHECK_STR(a->md5, "8c0bafe2f2761a9b3bcc5ce78a6fad55");
        CHECK_STR(rel->version, "8.5.0.96");
    }
    CHECK_STR(cdd_catalog_driver_min(c, 12, 0), "525.60.13");
    CHECK_STR(cdd_catalog_driver_min(c, 11, 1), "452.39");
    CHECK(cdd_catalog_driver_min(c, 13, 1) == NULL);
    cdd_catalog_free(c);
}

/* One cell of the matrix: the choice (NULL: none fits) and the verdicts. */
static const struct cdd_cat_verdict *pick(const struct cdd_catalog *c,
                                          int major, int minor, int cc,
                                          const char *driver,
                                          struct cdd_cat_verdict **v,
                                          size_t *n)
{
    static int ccs[1];
    struct cdd_cat_query q = {0};
    ccs[0] = cc;
    q.platform = "linux-x86_64";
    q.cuda_major = major;
    q.cuda_minor = minor;
    q.cc = ccs;
    q.n_cc = 1;
    q.driver = driver;
    *v = NULL;
    *n = 0;
    if (cdd_catalog_match(c, &q, v, n))
        return NULL;
    return cdd_catalog_best(*v, *n);
}

static void test_selection_matrix(void)
{
    static const int cudas[][2] = {{11, 8}, {12, 4}, {13, 0}};
    static const int ccs[] = {52, 61, 75, 86, 90, 120};
    /* New enough for every CUDA major; old for all but 11. */
    static const char *const drivers[] = {"580.65.06", "470.57.02"};
    struct cdd_catalog *c = NULL;
    CHECK_INT(cdd_catalog_load(NULL, &c), 0);
    if (!c)
        return;
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < sizeof ccs / sizeof ccs[0]; j++)
            for (size_t d = 0; d < 2; d++) {
                struct cdd_cat_verdict *v;
                size_t n;
                int ma = cudas[i][0], mi = cudas[i][1], cc = ccs[j];
                const struct cdd_cat_verdict *b =
                    pick(c, ma, mi, cc, drivers[d], &v, &n);
                for (size_t k = 0; k < n; k++) {
                    /* The reason for every skip, and only true ones. */
                    if (v[k].why)
                        CHECK_MSG(v[k].detail && *v[k].detail,
                                  "%s %s: skipped without a reason",
                                  v[k].rel->version, v[k].a->variant);
                    if (v[k].why & CDD_CAT_GPU)
                        CHECK(strstr(v[k].detail, "GPU sm_") != NULL);
                    if (v[k].why & CDD_CAT_DRIVER)
                        CHECK(strstr(v[k].detail, drivers[d]) != NULL);
                    if (!v[k].why && strcmp(v[k].a->platform,
                                            "linux-x86_64") == 0)
                        CHECK(v[k].a->cuda_major == ma);
                }
                int expect_none =
                    (d == 1 && ma >= 12) ||         /* driver too old */
                    (ma == 11 && cc >= 100) ||      /* no Blackwell on 11 */
                    (ma == 12 && mi < 8 && cc >= 100) || /* needs 12.8 */
                    (ma == 13 && cc < 75);          /* 13: Turing+ only */
                CHECK_MSG((b == NULL) == expect_none,
                          "CUDA %d.%d sm_%d driver %s: %s", ma, mi, cc,
                          drivers[d], b ? b->rel->version : "none fits");
                if (b) {
                    CHECK(b->a->cuda_major == ma);
                    CHECK_STR(b->a->platform, "linux-x86_64");
                    /* Maxwell / Pascal: a release before 9.11. */
                    if (cc < 75)
                        CHECK_MSG(b->rel->v[0] < 9 || b->rel->v[1] < 11,
                                  "sm_%d got %s", cc, b->rel->version);
                    /* The newest that fits: nothing newer fits. */
                    for (size_t k = 0; k < n && &v[k] != b; k++)
                        if (strcmp(v[k].a->platform, "linux-x86_64") == 0 &&
                            v[k].rel != b->rel)
                            CHECK_MSG(v[k].why != 0, "%s also fits",
                                      v[k].rel->version);
                }
                cdd_cat_verdicts_free(v, n);
            }
    cdd_catalog_free(c);
}

static void test_versions(void)
{
    CHECK(cdd_cat_vercmp("580.65.06", "525.60.13") > 0);
    CHECK(cdd_cat_vercmp("470.57.02", "525.60.13") < 0);
    CHECK(cdd_cat_vercmp("525.60.13", "525.60.13") == 0);
    CHECK(cdd_cat_vercmp("525.60", "525.60.13") < 0);
    CHECK(cdd_cat_vercmp("1000.1", "999.99") > 0);
    CHECK_INT(cdd_cat_cc_parse("8.6"), 86);
    CHECK_INT(cdd_cat_cc_parse("12.0"), 120);
    CHECK_INT(cdd_cat_cc_parse("86"), -1);
    CHECK_INT(cdd_cat_cc_parse("8.6.1"), -1);
    CHECK_INT(cdd_cat_want_check("9"), 0);
    CHECK_INT(cdd_cat_want_check("9.13.0.50"), 0);
    CHECK_INT(cdd_cat_want_check("latest"), 0);
    CHECK_INT(cdd_cat_want_check("9.x"), CDD_E_USAGE);
    CHECK_INT(cdd_cat_want_check("9.13.0.50.1"), CDD_E_USAGE);
    CHECK_INT(cdd_cat_want_check(""), CDD_E_USAGE);
}

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static void test_dir_catalog_and_respins(void)
{
    const char *d = fx_scratch("respin");
    struct cdd_catalog *c = NULL;
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json",
        "{\"release_label\": \"9.8.0\", \"cudnn\": {\"version\": \"9.8.0.87\","
        " \"linux-sbsa\": {\"cuda12\": {\"relative_path\": "
        "\"cudnn/linux-sbsa/cudnn-linux-sbsa-9.8.0.87_cuda12-archive.tar.xz\","
        " \"sha256\": \"" SHA_A "\", \"size\": \"100\"}},"
        " \"windows-arm64\": {\"relative_path\": "
        "\"cudnn/windows-arm64/cudnn-windows-arm64-9.8.0.87_cuda13.4-archive.zip\","
        " \"sha256\": \"" SHA_A "\", \"size\": \"7\"}}}"), 0);
    CHECK_INT(fx_put(d, "facts.json",
        "{\"releases\": {\"9.8.0\": {\"layout\": \"cudnn9\", \"cuda12\": "
        "{\"cuda\": \"12.0-12.8\", \"cc\": \"5.0-12.0\", \"cc_needs_cuda\": "
        "{\"10.0\": \"12.8\"}}}}, \"respins\": {"
        "\"cudnn/linux-sbsa/cudnn-linux-sbsa-9.8.0.87_cuda12-archive.tar.xz\":"
        " [{\"sha256\": \"" SHA_B "\", \"size\": \"101\", \"source\": \"t\"}]}}"), 0);
    CHECK_INT(cdd_catalog_load(d, &c), 0);
    if (c) {
        const struct cdd_cat_release *r = NULL;
        const struct cdd_cat_archive *a = cdd_catalog_by_filename(
            c, "cudnn-linux-sbsa-9.8.0.87_cuda12-archive.tar.xz", &r);
        uint8_t b[CDD_SHA256_LEN];
        CHECK(a != NULL);
        if (a) {
            CHECK_INT(a->n_digests, 2);
            cdd_hex_decode(SHA_B, b, CDD_SHA256_LEN);
            CHECK_INT(cdd_cat_digest_index(a, b), 1);
            CHECK(a->digests[1].size == 101);
        }
        a = cdd_catalog_by_filename(
            c, "cudnn-windows-arm64-9.8.0.87_cuda13.4-archive.zip", NULL);
        CHECK(a && a->cuda_major == 13 && a->cuda_minor == 4);
        if (a)
            CHECK_STR(a->variant, "cuda13.4");
        /* Blackwell with CUDA 12.4 under this release's facts. */
        int cc = 120;
        struct cdd_cat_query q = {.platform = "linux-sbsa", .cuda_major = 12,
                                  .cuda_minor = 4, .cc = &cc, .n_cc = 1};
        struct cdd_cat_verdict *v;
        size_t n;
        CHECK_INT(cdd_catalog_match(c, &q, &v, &n), 0);
        CHECK(cdd_catalog_best(v, n) == NULL);
        CHECK(n >= 1 && v[0].why == CDD_CAT_GPU &&
              strstr(v[0].detail, "needs CUDA 12.8") != NULL);
        cdd_cat_verdicts_free(v, n);
        q.cuda_minor = 8;
        CHECK_INT(cdd_catalog_match(c, &q, &v, &n), 0);
        CHECK(cdd_catalog_best(v, n) != NULL);
        cdd_cat_verdicts_free(v, n);
        cdd_catalog_free(c);
    }
    /* A bad digest is refused, naming the file and the JSON path. */
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json",
        "{\"cudnn\": {\"version\": \"9.8.0.87\", \"linux-sbsa\": {\"cuda12\": "
        "{\"relative_path\": \"cudnn/x.tar.xz\", \"sha256\": \"abc\"}}}}"), 0);
    CHECK_INT(cdd_catalog_load(d, &c), CDD_E_MANIFEST);
    CHECK(strstr(cdd_last_error()->msg, "cudnn.linux-sbsa.cuda12.sha256") !=
          NULL);
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json",
        "{\"cudnn\": {\"version\": \"9.8.0.87\", \"linux-sbsa\": {\"cuda12\": "
        "{\"relative_path\": \"../x.tar.xz\", \"sha256\": \"" SHA_A "\"}}}}"), 0);
    CHECK_INT(cdd_catalog_load(d, &c), CDD_E_MANIFEST);
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json",
        "{\"cudnn\": {\"version\": \"9.8.0.87\", \"linux-sbsa\": {\"cuda12\": "
        "{\"relative_path\": \"cudnn/x.tar.xz\", \"sha256\": \"" SHA_A "\", "
        "\"size\": \"-5\"}}}}"), 0);
    CHECK_INT(cdd_catalog_load(d, &c), CDD_E_MANIFEST);
    cdd_fs_remove_tree(d);
}

/* An untrusted key in a facts file is named whole in the error, not cut to
 * the 60 or 300 bytes the JSON path once had room for. */
static void test_long_keys_whole(void)
{
    const char *d = fx_scratch("longkey");
    struct cdd_catalog *c = NULL;
    char key[400], facts[1200];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    memcpy(key, "cuda", 4); /* a driver key that is no cuda<major> */
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json",
        "{\"release_label\": \"9.8.0\", \"cudnn\": {\"version\": \"9.8.0.87\","
        " \"linux-sbsa\": {\"cuda12\": {\"relative_path\": "
        "\"cudnn/linux-sbsa/cudnn-linux-sbsa-9.8.0.87_cuda12-archive.tar.xz\","
        " \"sha256\": \"" SHA_A "\", \"size\": \"100\"}}}}"), 0);
    const char *forms[] = {"{\"drivers\": {\"%s\": 1}}",
                           "{\"respins\": {\"%s\": 1}}",
                           "{\"releases\": {\"%s\": 1}}"};
    const char *parents[] = {"drivers.", "respins.", "releases."};
    for (size_t i = 0; i < 3; i++) {
        char want[sizeof key + 16];
        snprintf(facts, sizeof facts, forms[i], key);
        CHECK_INT(fx_put(d, "facts.json", facts), 0);
        snprintf(want, sizeof want, "%s%s: ", parents[i], key);
        CHECK_INT(cdd_catalog_load(d, &c), CDD_E_MANIFEST);
        CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL, "%zu: %s", i,
                  cdd_last_error()->msg);
    }
    cdd_fs_remove_tree(d);
}

#define ONE_ARCHIVE(v)                                                       \
    "{\"cudnn\": {\"version\": \"" v "\", \"linux-sbsa\": {\"cuda12\": "     \
    "{\"relative_path\": \"cudnn/linux-sbsa/cudnn-linux-sbsa-" v             \
    "_cuda12-archive.tar.xz\", \"sha256\": \"" SHA_A "\"}}}}"

/* A facts.json of the text in t under the one-release catalog in d. */
static int load_facts(const char *d, struct cdd_sb *t, struct cdd_catalog **c)
{
    CHECK_INT(cdd_sb_error(t), 0);
    CHECK_INT(fx_put(d, "facts.json", cdd_sb_str(t)), 0);
    cdd_sb_free(t);
    *c = NULL;
    int r = cdd_catalog_load(d, c);
    cdd_catalog_free(*c);
    *c = NULL;
    return r;
}

/* Each bound of a catalog (issue 22) taken at its maximum and refused one
 * past it, cleanly: CDD_E_TOOLONG naming what and the file, no cut. */
static void test_bounds_refused(void)
{
    const char *d = fx_scratch("bounds");
    struct cdd_catalog *c = NULL;
    struct cdd_sb t;
    char name[64], text[512];
    /* Releases: the maximum loads, one more is refused. */
    for (int i = 0; i <= CDD_CAT_MAX_RELEASES; i++) {
        snprintf(name, sizeof name, "redistrib_9.0.%d.json", i);
        snprintf(text, sizeof text,
                 "{\"cudnn\": {\"version\": \"9.0.%d.1\", \"linux-sbsa\": "
                 "{\"cuda12\": {\"relative_path\": \"cudnn/linux-sbsa/"
                 "cudnn-linux-sbsa-9.0.%d.1_cuda12-archive.tar.xz\", "
                 "\"sha256\": \"" SHA_A "\"}}}}", i, i);
        if (i == CDD_CAT_MAX_RELEASES) {
            CHECK_INT(cdd_catalog_load(d, &c), 0);
            CHECK(c && c->n == CDD_CAT_MAX_RELEASES);
            cdd_catalog_free(c);
            c = NULL;
        }
        CHECK_INT(fx_put(d, name, text), 0);
    }
    CHECK_INT(cdd_catalog_load(d, &c), CDD_E_TOOLONG);
    CHECK(c == NULL);
    CHECK_MSG(strstr(cdd_last_error()->msg, "more than 1024 releases") != NULL,
              "%s", cdd_last_error()->msg);
    CHECK(strstr(cdd_last_error()->path, "redistrib_9.0.") != NULL);
    cdd_fs_remove_tree(d);

    /* Facts under one release. */
    d = fx_scratch("bounds-facts");
    CHECK_INT(fx_put(d, "redistrib_9.8.0.json", ONE_ARCHIVE("9.8.0.87")), 0);
    /* A CUDA variant key more than there are CUDA majors. */
    for (int extra = 0; extra <= 1; extra++) {
        cdd_sb_init(&t, (size_t)1 << 20, "facts");
        cdd_sb_catf(&t, "{\"releases\": {\"9.8.0\": {\"layout\": \"cudnn9\"");
        for (int i = 0; i < CDD_CAT_MAX_CUDA_MAJORS + extra; i++)
            cdd_sb_catf(&t, ", \"cuda12\": {}");
        cdd_sb_catf(&t, "}}}");
        CHECK_INT(load_facts(d, &t, &c), extra ? CDD_E_TOOLONG : 0);
    }
    CHECK_MSG(strstr(cdd_last_error()->msg,
                     "releases.9.8.0.cuda12: more than 99 CUDA variants") !=
                  NULL,
              "%s", cdd_last_error()->msg);
    CHECK(strstr(cdd_last_error()->path, "facts.json") != NULL);
    /* A driver entry more than there are CUDA majors. */
    for (int extra = 0; extra <= 1; extra++) {
        cdd_sb_init(&t, (size_t)1 << 20, "facts");
        cdd_sb_catf(&t, "{\"drivers\": {");
        for (int i = 0; i < CDD_CAT_MAX_CUDA_MAJORS + extra; i++)
            cdd_sb_catf(&t, "%s\"cuda%d\": {\"linux\": \"1\"}", i ? ", " : "",
                        i % 99 + 1);
        cdd_sb_catf(&t, "}}");
        CHECK_INT(load_facts(d, &t, &c), extra ? CDD_E_TOOLONG : 0);
    }
    CHECK_MSG(strstr(cdd_last_error()->msg, "more than 99 CUDA majors") !=
                  NULL,
              "%s", cdd_last_error()->msg);
    /* Re-spun digests: with the published one, at most the maximum. */
    for (int extra = 0; extra <= 1; extra++) {
        cdd_sb_init(&t, (size_t)1 << 20, "facts");
        cdd_sb_catf(&t, "{\"respins\": {\"cudnn/linux-sbsa/cudnn-linux-sbsa-"
                        "9.8.0.87_cuda12-archive.tar.xz\": [");
        for (int i = 0; i < CDD_CAT_MAX_DIGESTS - 1 + extra; i++)
            cdd_sb_catf(&t, "%s{\"sha256\": \"%064d\", \"source\": \"t\"}",
                        i ? ", " : "", i + 1);
        cdd_sb_catf(&t, "]}}");
        CHECK_INT(load_facts(d, &t, &c), extra ? CDD_E_TOOLONG : 0);
    }
    CHECK_MSG(strstr(cdd_last_error()->msg,
                     "respins.cudnn/linux-sbsa/cudnn-linux-sbsa-9.8.0.87_"
                     "cuda12-archive.tar.xz: more than 64 sha256s") != NULL,
              "%s", cdd_last_error()->msg);
    cdd_fs_remove_tree(d);
}

TEST_MAIN(TEST(test_builtin_parses), TEST(test_selection_matrix),
          TEST(test_versions), TEST(test_dir_catalog_and_respins),
          TEST(test_long_keys_whole), TEST(test_bounds_refused))
