/* Unit tests of the receipt as untrusted input (receipt.c): written and read
 * back with its backup records (a file's size and sha256, a link's target,
 * an older receipt's bare path); every path of the wrong shape (outside the
 * tree, in .cudnn-deploy, a folder install would not create) and every
 * malformed record refused with CDD_E_STATE naming the receipt and the
 * record; a file's link target, pre-existing mark, modification time and
 * the created folders kept through writing and reading; and the receipt
 * read from a tree (cdd_receipt_load): none there, a good one, one that is
 * a folder; the install profile, its omitted counts and the archive URL
 * kept, a receipt without them read as full, bad ones refused. Runs on every
 * platform (under Wine too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/profile.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/tree.h"
#include "cdd/sys.h"
#include "fixture.h"
#include "test.h"

#define SHA "14e78a26f30ad05810aee663185e2740f1d2dcc93e4497770e2414c6a0f39654"
#define SRC "tree/.cudnn-deploy/receipt.json"

/* A receipt with the given files, backed_up and created_dirs lists and
 * transaction id (JSON fragments). */
static char *receipt(const char *files, const char *backed_up,
                     const char *dirs, const char *txn)
{
    static const char fmt[] =
        "{\"schema_version\":1,\"tool_version\":\"0.1.0\","
        "\"transaction\":\"%s\",\"installed_at\":\"2026-01-01T00:00:00Z\","
        "\"manifest\":{\"name\":\"m\",\"sha256\":\"" SHA "\",\"product\":"
        "\"cudnn\",\"version\":\"8.5.0.96\",\"platform\":\"linux-x86_64\","
        "\"cuda_major\":11},\"target\":{\"kind\":\"cuda\",\"layout\":"
        "\"cuda-linux\",\"cuda_version\":\"11.6\"},\"archive\":{\"filename\":"
        "\"a.tar.xz\",\"sha256\":\"" SHA "\",\"size\":1,\"pinned\":true,"
        "\"pin_source\":\"manifest\"},\"files\":[%s],\"backed_up\":[%s],"
        "\"created_dirs\":[%s]}";
    size_t n = sizeof fmt + strlen(files) + strlen(backed_up) + strlen(dirs) +
               strlen(txn);
    char *s = malloc(n);
    snprintf(s, n, fmt, txn, files, backed_up, dirs);
    return s;
}

#define FILE_OK "{\"path\":\"lib64/libcudnn.so.8.5.0\",\"role\":\"runtime\"," \
                "\"sha256\":\"" SHA "\",\"size\":11}"

static int parse(const char *text, struct cdd_receipt **out)
{
    return cdd_receipt_parse(text, strlen(text), SRC, out);
}

static void test_round_trip(void)
{
    struct cdd_receipt *r = NULL, *back = NULL;
    char *text = receipt(FILE_OK,
                         "{\"path\":\"lib64/libcudnn.so.8.5.0\",\"sha256\":\""
                         SHA "\",\"size\":11},"
                         "{\"path\":\"lib64/libcudnn.so.8\",\"symlink\":"
                         "\"libcudnn.so.8.4.1\"},"
                         "\"include/cudnn.h\"",
                         "\"share/doc/cudnn\"", "20260101T000000Z-1");
    CHECK_INT(parse(text, &r), 0);
    free(text);
    if (!r)
        return;
    CHECK_INT(r->n_backed_up, 3);
    CHECK(r->backed_up_prev[0].type == CDD_FT_FILE &&
          r->backed_up_prev[0].size == 11);
    CHECK(r->backed_up_prev[1].type == CDD_FT_SYMLINK);
    CHECK_STR(r->backed_up_prev[1].target, "libcudnn.so.8.4.1");
    CHECK(r->backed_up_prev[2].type == CDD_FT_NONE); /* unrecorded */
    /* Written and read again: the same records. */
    CHECK_INT(cdd_receipt_to_json(r, &text), 0);
    CHECK_INT(parse(text, &back), 0);
    free(text);
    if (back) {
        CHECK_INT(back->n_backed_up, 3);
        CHECK_STR(back->backed_up[1], "lib64/libcudnn.so.8");
        CHECK_STR(back->backed_up_prev[1].target, "libcudnn.so.8.4.1");
        CHECK(memcmp(back->backed_up_prev[0].sha256,
                     r->backed_up_prev[0].sha256, CDD_SHA256_LEN) == 0);
        CHECK(back->backed_up_prev[2].type == CDD_FT_NONE);
    }
    cdd_receipt_free(back);
    cdd_receipt_free(r);
}

struct bad {
    const char *files, *backed_up, *dirs, *txn;
    const char *record; /* what the message must name */
};

static const struct bad bads[] = {
    /* files */
    {"{\"path\":\"../etc/passwd\",\"role\":\"runtime\",\"sha256\":\"" SHA
     "\",\"size\":1}", "", "", "T-1", "files[0]"},
    {"{\"path\":\"/etc/passwd\",\"role\":\"runtime\",\"sha256\":\"" SHA
     "\",\"size\":1}", "", "", "T-1", "files[0]"},
    {FILE_OK ",{\"path\":\".cudnn-deploy/journal\",\"role\":\"runtime\","
     "\"sha256\":\"" SHA "\",\"size\":1}", "", "", "T-1", "files[1]"},
    {"{\"path\":\"a\\\\b\",\"role\":\"runtime\",\"sha256\":\"" SHA
     "\",\"size\":1}", "", "", "T-1", "files[0]"},
    /* backed_up */
    {FILE_OK, "\".cudnn-deploy/lock\"", "", "T-1", "backed_up[0]"},
    {FILE_OK, "\"../x\"", "", "T-1", "backed_up[0]"},
    {FILE_OK, "\"ok/x\",{\"path\":\"C:/x\",\"sha256\":\"" SHA "\",\"size\":1}",
     "", "T-1", "backed_up[1]"},
    {FILE_OK, "{\"path\":\"x\",\"symlink\":\"\"}", "", "T-1", "backed_up[0]"},
    {FILE_OK, "{\"path\":\"x\",\"symlink\":7}", "", "T-1", "backed_up[0]"},
    {FILE_OK, "{\"path\":\"x\",\"sha256\":\"abc\",\"size\":1}", "", "T-1",
     "sha256"},
    {FILE_OK, "{\"path\":\"x\",\"sha256\":\"" SHA "\"}", "", "T-1", "size"},
    {FILE_OK, "{\"sha256\":\"" SHA "\",\"size\":1}", "", "T-1",
     "backed_up[0]"},
    {FILE_OK, "7", "", "T-1", "backed_up[0]"},
    /* created_dirs */
    {FILE_OK, "", "\".cudnn-deploy\"", "T-1", "created_dirs[0]"},
    {FILE_OK, "", "\"lib64\",\"../..\"", "T-1", "created_dirs[1]"},
    /* the transaction id names the backup folder */
    {FILE_OK, "", "", "../../x", "transaction"},
    {FILE_OK, "", "", "a/b", "transaction"},
};

static void test_refusals(void)
{
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        const struct bad *b = &bads[i];
        struct cdd_receipt *r = NULL;
        char *text = receipt(b->files, b->backed_up, b->dirs, b->txn);
        int rc = parse(text, &r);
        free(text);
        CHECK_MSG(rc == CDD_E_STATE, "case %zu: %s", i, cdd_err_name(rc));
        CHECK(r == NULL);
        if (rc == CDD_E_STATE) {
            CHECK_MSG(strcmp(cdd_last_error()->path, SRC) == 0, "case %zu: %s",
                      i, cdd_last_error()->path);
            CHECK_MSG(strstr(cdd_last_error()->msg, b->record) != NULL,
                      "case %zu: \"%s\" does not name %s", i,
                      cdd_last_error()->msg, b->record);
        }
        cdd_receipt_free(r);
    }
    /* Numbers beyond an int (found by fuzz_receipt: UBSan float-cast
     * overflow before the fix) are refused, not cast. */
    static const char *const huge[][2] = {
        {"\"schema_version\":1,", "\"schema_version\":8933093716,"},
        {"\"cuda_major\":11}", "\"cuda_major\":1e15}"},
    };
    for (size_t i = 0; i < 2; i++) {
        char *text = receipt(FILE_OK, "", "", "20260101T000000Z-1");
        struct cdd_receipt *ok = NULL;
        CHECK_INT(parse(text, &ok), 0); /* as written, it is a receipt */
        cdd_receipt_free(ok);
        char *at = strstr(text, huge[i][0]);
        CHECK(at != NULL);
        if (!at) {
            free(text);
            continue;
        }
        size_t n = strlen(text) + 32;
        char *t2 = malloc(n);
        snprintf(t2, n, "%.*s%s%s", (int)(at - text), text, huge[i][1],
                 at + strlen(huge[i][0]));
        struct cdd_receipt *r = NULL;
        CHECK_MSG(parse(t2, &r) == CDD_E_STATE, "huge %zu", i);
        CHECK(r == NULL);
        cdd_receipt_free(r);
        free(t2);
        free(text);
    }
}

/* Every field of a file record, and the created folders, survive writing
 * and reading; cdd_receipt_file() finds records by their exact path. */
static void test_file_records(void)
{
    struct cdd_receipt *r = NULL, *back = NULL;
    char *text = receipt(
        FILE_OK ",{\"path\":\"lib64/libcudnn.so.8\",\"role\":\"symlink\","
        "\"symlink\":\"libcudnn.so.8.5.0\"},{\"path\":\"include/cudnn.h\","
        "\"role\":\"header\",\"sha256\":\"" SHA "\",\"size\":5,"
        "\"mtime_ns\":\"1660000000123456789\",\"preexisting\":true}",
        "", "\"share\",\"share/doc\",\"share/doc/cudnn\"",
        "20260101T000000Z-2");
    CHECK_INT(parse(text, &r), 0);
    free(text);
    if (!r)
        return;
    CHECK_INT(cdd_receipt_to_json(r, &text), 0);
    CHECK_INT(parse(text, &back), 0);
    free(text);
    for (int pass = 0; pass < 2; pass++) {
        const struct cdd_receipt *x = pass ? back : r;
        if (!x)
            break;
        CHECK_INT(x->n_files, 3);
        const struct cdd_rfile_entry *so =
            cdd_receipt_file(x, "lib64/libcudnn.so.8.5.0");
        const struct cdd_rfile_entry *ln =
            cdd_receipt_file(x, "lib64/libcudnn.so.8");
        const struct cdd_rfile_entry *h =
            cdd_receipt_file(x, "include/cudnn.h");
        CHECK(so && !so->is_symlink && so->size == 11 && !so->preexisting &&
              so->role == CDD_ROLE_RUNTIME);
        CHECK(ln && ln->is_symlink && ln->role == CDD_ROLE_SYMLINK);
        CHECK_STR(ln ? ln->link_target : NULL, "libcudnn.so.8.5.0");
        CHECK(h && h->preexisting && h->size == 5);
        CHECK(h && h->mtime_ns == 1660000000123456789LL);
        CHECK(cdd_receipt_file(x, "include/CUDNN.h") == NULL);
        CHECK(cdd_receipt_file(x, "lib64") == NULL);
        CHECK_INT(x->n_created_dirs, 3);
        CHECK_STR(x->n_created_dirs == 3 ? x->created_dirs[2] : NULL,
                  "share/doc/cudnn");
        CHECK_STR(x->txn_id, "20260101T000000Z-2");
    }
    cdd_receipt_free(back);
    cdd_receipt_free(r);
}

/* The receipt read from a tree: none (0, NULL), a good one, and a folder
 * where the receipt should be (CDD_E_STATE naming it, whether the tree
 * refuses it when opened or when the receipt is read). */
static void test_load_from_tree(void)
{
    struct cdd_tree *tree = NULL;
    struct cdd_receipt *r = NULL;
    char path[2048];
    const char *root = fx_scratch("none");
    CHECK_INT(cdd_tree_open(root, &tree), 0);
    if (tree) {
        r = (struct cdd_receipt *)1;
        CHECK_INT(cdd_receipt_load(tree, &r), 0);
        CHECK(r == NULL);
        cdd_tree_close(tree);
        tree = NULL;
    }

    root = fx_scratch("good");
    snprintf(path, sizeof path, "%s/%s", root, CDD_STATE_DIR);
    CHECK_INT(cdd_fs_mkdirs(path, NULL), 0);
    char *text = receipt(FILE_OK, "", "", "20260101T000000Z-3");
    CHECK_INT(fx_put(root, CDD_RECEIPT_FILE, text), 0);
    free(text);
    CHECK_INT(cdd_tree_open(root, &tree), 0);
    if (tree) {
        CHECK_INT(cdd_receipt_load(tree, &r), 0);
        CHECK(r && r->n_files == 1);
        CHECK_STR(r ? r->txn_id : NULL, "20260101T000000Z-3");
        cdd_receipt_free(r);
        r = NULL;
        cdd_tree_close(tree);
        tree = NULL;
    }

    root = fx_scratch("folder");
    snprintf(path, sizeof path, "%s/%s", root, CDD_RECEIPT_FILE);
    CHECK_INT(cdd_fs_mkdirs(path, NULL), 0);
    int rc = cdd_tree_open(root, &tree);
    if (!rc)
        rc = cdd_receipt_load(tree, &r);
    CHECK_INT(rc, CDD_E_STATE);
    CHECK(r == NULL);
    if (rc == CDD_E_STATE)
        CHECK_MSG(strstr(cdd_last_error()->path, "receipt.json") != NULL,
                  "%s", cdd_last_error()->path);
    cdd_tree_close(tree);
}

/* The receipt text with one more member (a JSON fragment) at its end. */
static char *with_member(const char *text, const char *member)
{
    size_t len = strlen(text), n = len + strlen(member) + 2;
    const char *end = strrchr(text, '}');
    char *s = malloc(n);
    if (!s || !end)
        return s ? (free(s), NULL) : NULL;
    snprintf(s, n, "%.*s,%s}", (int)(end - text), text, member);
    return s;
}

static void test_profile(void)
{
    struct cdd_receipt *r = NULL, *back = NULL;
    char *text = receipt(FILE_OK, "", "", "T-1"), *t2 = NULL;
    CHECK_INT(parse(text, &r), 0);
    if (!r) {
        free(text);
        return;
    }
    /* Receipts of earlier versions: no key, the full profile. */
    CHECK_INT(r->profile, CDD_PROFILE_FULL);
    CHECK(r->archive_url == NULL);
    r->profile = CDD_PROFILE_RUNTIME;
    r->omitted[CDD_ROLE_HEADER] = 9;
    r->omitted[CDD_ROLE_STATIC_LIB] = 6;
    r->archive_url = strdup("https://example.invalid/a.tar.xz");
    CHECK_INT(cdd_receipt_to_json(r, &t2), 0);
    CHECK_INT(parse(t2, &back), 0);
    if (back) {
        CHECK_INT(back->profile, CDD_PROFILE_RUNTIME);
        CHECK_INT(back->omitted[CDD_ROLE_HEADER], 9);
        CHECK_INT(back->omitted[CDD_ROLE_STATIC_LIB], 6);
        CHECK_INT(back->omitted[CDD_ROLE_RUNTIME], 0);
        CHECK_STR(back->archive_url, "https://example.invalid/a.tar.xz");
    }
    cdd_receipt_free(back);
    /* A profile or omitted record of the wrong kind is refused. */
    static const char *const bad[] = {
        "\"profile\":\"tiny\"", "\"profile\":7",
        "\"omitted\":{\"nonsense\":9}", "\"omitted\":{\"header\":-1}",
        "\"omitted\":[9]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *v = with_member(text, bad[i]);
        back = NULL;
        CHECK(v != NULL);
        if (v) {
            CHECK_MSG(parse(v, &back) == CDD_E_STATE, "case %zu: %s", i,
                      bad[i]);
            CHECK(back == NULL);
        }
        cdd_receipt_free(back);
        free(v);
    }
    free(t2);
    free(text);
    cdd_receipt_free(r);
}

/* The verify record (cdd_verified_*): written and read back, and every
 * damaged field refused with CDD_E_STATE naming it. */
static void test_verified_record(void)
{
    struct cdd_vlayer layers[2] = {
        {"files", "pass", 3, 0, 0, 0}, {"load", "fail", 5, 1, 2, 1}};
    struct cdd_verified v = {"2026-12-02T01:00:00Z", "0.9.0", "m.json",
                             "load", "fail", {0}, layers, 2};
    memset(v.receipt_sha256, 0xab, sizeof v.receipt_sha256);
    char *text = NULL;
    struct cdd_verified *back = NULL;
    CHECK_INT(cdd_verified_to_json(&v, &text), 0);
    CHECK_INT(cdd_verified_parse(text, strlen(text), "v.json", &back), 0);
    if (back) {
        CHECK_STR(back->outcome, "fail");
        CHECK_STR(back->level, "load");
        CHECK_INT((int)back->n_layers, 2);
        CHECK_STR(back->layers[1].name, "load");
        CHECK_INT((int)back->layers[1].failed, 2);
        CHECK(memcmp(back->receipt_sha256, v.receipt_sha256, 32) == 0);
    }
    cdd_verified_free(back);
    static const struct { const char *from, *to, *names; } bad[] = {
        {"\"outcome\":\t\"fail\"", "\"outcome\": \"great\"", "outcome"},
        {"\"level\":\t\"load\"", "\"level\": 7", "level"},
        {"\"schema_version\":\t1", "\"schema_version\": 2", "schema_version"},
        {"\"passed\":\t3", "\"passed\": -3", "layers[0]: passed"},
        {"\"name\":\t\"files\"", "\"name\": \"disk\"", "layers[0]: name"},
        {"\"tool_version\":\t\"0.9.0\"", "\"tool_version\": \"\"",
         "tool_version"},
    };
    for (size_t i = 0; text && i < sizeof bad / sizeof *bad; i++) {
        /* cJSON's layout: a tab after each key's colon. */
        char *at = strstr(text, bad[i].from);
        CHECK_MSG(at != NULL, "case %zu: %s not in the record", i,
                  bad[i].from);
        if (!at)
            continue;
        size_t n = strlen(text) + strlen(bad[i].to) + 1;
        char *t = malloc(n);
        size_t pre = (size_t)(at - text);
        memcpy(t, text, pre);
        snprintf(t + pre, n - pre, "%s%s", bad[i].to,
                 at + strlen(bad[i].from));
        back = NULL;
        CHECK_INT(cdd_verified_parse(t, strlen(t), "v.json", &back),
                  CDD_E_STATE);
        CHECK(back == NULL);
        CHECK_MSG(strstr(cdd_last_error()->msg, bad[i].names) != NULL,
                  "case %zu: %s", i, cdd_last_error()->msg);
        cdd_clear_error();
        free(t);
    }
    CHECK_INT(cdd_verified_parse("[]", 2, "v.json", &back), CDD_E_STATE);
    cdd_clear_error();
    free(text);
}

TEST_MAIN(TEST(test_round_trip), TEST(test_refusals), TEST(test_file_records),
          TEST(test_load_from_tree), TEST(test_profile),
          TEST(test_verified_record))
