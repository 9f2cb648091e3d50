/* Unit tests of the receipt as untrusted input (receipt.c): written and read
 * back with its backup records (a file's size and sha256, a link's target,
 * an older receipt's bare path); every path of the wrong shape (outside the
 * tree, in .cudnn-deploy, a folder install would not create) and every
 * malformed record refused with CDD_E_STATE naming the receipt and the
 * record. Pure parsing: runs on every platform (under Wine too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/receipt.h"
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
}

TEST_MAIN(TEST(test_round_trip), TEST(test_refusals))
