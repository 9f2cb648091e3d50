/* Unit tests of cdd_install() (install.c) on small archives written here
 * (deploy_fixture.h): a fresh install plans every file new, lands them in
 * the CUDA layout and writes the receipt (hashes, created folders) and the
 * manifest copy; a dry run plans the same and touches nothing; the same
 * archive again changes nothing; an upgrade plans replace / unchanged / new
 * / remove and keeps what it replaced in the backup folder, recorded in the
 * receipt; a file already there with the same bytes is unchanged and marked
 * pre-existing, one with other bytes replaced and backed up; an archive that
 * does not match its pin changes nothing. POSIX only (symlinks). */
#include "deploy_fixture.h"

#define T "install"

static const char SO[] = "\177ELF libcudnn.so.8.5.0 version one\n";
static const char OPS[] = "\177ELF libcudnn_ops_infer.so.8.5.0\n";
static const char HDR[] = "/* cudnn.h, version one */\n";
static const char HDR2[] = "/* cudnn.h, version two */\n";
static const char VHDR[] = "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 5\n";
static const char BACKEND[] = "/* cudnn_backend.h, new in two */\n";
static const char LICENSE[] = "Synthetic licence text for the tests.\n";

static const struct df_ent v1[] = {
    {"LICENSE", 'f', LICENSE},
    {"include/cudnn.h", 'f', HDR},
    {"include/cudnn_version.h", 'f', VHDR},
    {"lib/libcudnn.so", 'l', "libcudnn.so.8"},
    {"lib/libcudnn.so.8", 'l', "libcudnn.so.8.5.0"},
    {"lib/libcudnn.so.8.5.0", 'f', SO},
    {"lib/libcudnn_ops_infer.so.8.5.0", 'f', OPS},
};
#define N1 (sizeof v1 / sizeof v1[0])

/* v1 with cudnn.h changed, cudnn_version.h gone, cudnn_backend.h new. */
static const struct df_ent v2[] = {
    {"LICENSE", 'f', LICENSE},
    {"include/cudnn.h", 'f', HDR2},
    {"include/cudnn_backend.h", 'f', BACKEND},
    {"lib/libcudnn.so", 'l', "libcudnn.so.8"},
    {"lib/libcudnn.so.8", 'l', "libcudnn.so.8.5.0"},
    {"lib/libcudnn.so.8.5.0", 'f', SO},
    {"lib/libcudnn_ops_infer.so.8.5.0", 'f', OPS},
};
#define N2 (sizeof v2 / sizeof v2[0])

static void file_is(const char *root, const char *rel, const char *want)
{
    char *got = df_read(root, rel);
    CHECK_MSG(got && strcmp(got, want) == 0, "%s holds %s", rel,
              got ? got : "nothing");
    free(got);
}

static void link_is(const char *root, const char *rel, const char *want)
{
    char path[2048], got[256];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    ssize_t k = readlink(path, got, sizeof got - 1);
    got[k > 0 ? k : 0] = '\0';
    CHECK_MSG(k > 0 && strcmp(got, want) == 0, "%s -> %s", rel, got);
}

static int mode_of(const char *root, const char *rel)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return lstat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static int receipt_has_dir(const struct cdd_receipt *rc, const char *dir)
{
    for (size_t i = 0; i < rc->n_created_dirs; i++)
        if (strcmp(rc->created_dirs[i], dir) == 0)
            return 1;
    return 0;
}

static ssize_t backed_up_index(const struct cdd_receipt *rc, const char *p)
{
    for (size_t i = 0; i < rc->n_backed_up; i++)
        if (strcmp(rc->backed_up[i], p) == 0)
            return (ssize_t)i;
    return -1;
}

static void test_fresh(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "fresh");
    df_fixture(&fx, df_dir(T, "fresh-archive"), v1, N1);
    CHECK_INT(df_install(root, &fx, 0, &res), 0);
    CHECK(res.changed);
    CHECK(res.txn_id != NULL);
    CHECK(res.pinned);
    CHECK_STR(cdd_pin_name(res.pin_source), "manifest");
    CHECK_INT(res.layout, CDD_LAYOUT_CUDA_LINUX);
    CHECK_INT(res.plan.n, N1);
    for (size_t i = 0; i < res.plan.n; i++)
        CHECK_MSG(res.plan.items[i].action == CDD_ACT_NEW, "%s: %s",
                  res.plan.items[i].path,
                  cdd_action_name(res.plan.items[i].action));
    /* The layout: lib/ to lib64/, LICENSE to share/doc/cudnn/. */
    file_is(root, "lib64/libcudnn.so.8.5.0", SO);
    file_is(root, "include/cudnn.h", HDR);
    file_is(root, "share/doc/cudnn/LICENSE", LICENSE);
    link_is(root, "lib64/libcudnn.so.8", "libcudnn.so.8.5.0");
    link_is(root, "lib64/libcudnn.so", "libcudnn.so.8");
    CHECK_INT(mode_of(root, "lib64/libcudnn.so.8.5.0"), 0755);
    CHECK_INT(mode_of(root, "include/cudnn.h"), 0644);
    CHECK(df_exists(root, CDD_MANIFEST_COPY));
    CHECK(df_exists(root, CDD_LOG_FILE));
    CHECK(!df_exists(root, CDD_JOURNAL_FILE));

    struct cdd_receipt *rc = df_receipt(root);
    CHECK(rc != NULL);
    if (rc) {
        CHECK_INT(rc->n_files, N1);
        CHECK_STR(rc->txn_id, res.txn_id);
        CHECK_STR(rc->layout, "cuda-linux");
        CHECK_STR(rc->cuda_version, "11.6.2");
        CHECK_STR(rc->pin_source, "manifest");
        CHECK_INT(rc->n_backed_up, 0);
        const struct cdd_rfile_entry *f =
            cdd_receipt_file(rc, "lib64/libcudnn.so.8.5.0");
        CHECK(f && !f->is_symlink && f->size == strlen(SO) && !f->preexisting);
        if (f) {
            char hex[CDD_SHA256_HEX], want[CDD_SHA256_HEX];
            cdd_hex_encode(f->sha256, CDD_SHA256_LEN, hex);
            df_sha_hex(SO, strlen(SO), want);
            CHECK_STR(hex, want);
        }
        f = cdd_receipt_file(rc, "lib64/libcudnn.so.8");
        CHECK(f && f->is_symlink && strcmp(f->link_target,
                                           "libcudnn.so.8.5.0") == 0);
        /* lib64/ and include/ were there; share/doc/cudnn was not. */
        CHECK(receipt_has_dir(rc, "share"));
        CHECK(receipt_has_dir(rc, "share/doc/cudnn"));
        CHECK(!receipt_has_dir(rc, "lib64"));
        CHECK(!receipt_has_dir(rc, "include"));
    }
    cdd_receipt_free(rc);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_dry_run(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "dry");
    df_fixture(&fx, df_dir(T, "dry-archive"), v1, N1);
    char *before = df_listing(root, 0);
    CHECK_INT(df_install(root, &fx, 1, &res), 0);
    CHECK(!res.changed);
    CHECK(res.txn_id == NULL);
    CHECK_INT(res.plan.n, N1);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_NEW);
    CHECK_ACTION(&res.plan, "share/doc/cudnn/LICENSE", CDD_ACT_NEW);
    /* Not even the state folder or its lock. */
    char *after = df_listing(root, 0);
    CHECK_STR(after, before);
    free(after);
    cdd_install_result_clear(&res);

    /* A dry run over an install: plans against it, changes nothing. */
    CHECK_INT(df_install(root, &fx, 0, &res), 0);
    cdd_install_result_clear(&res);
    free(before);
    before = df_listing(root, 0);
    CHECK_INT(df_install(root, &fx, 1, &res), 0);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_UNCHANGED);
    after = df_listing(root, 0);
    CHECK_STR(after, before);
    free(after);
    free(before);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_reinstall_unchanged(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "again");
    df_fixture(&fx, df_dir(T, "again-archive"), v1, N1);
    CHECK_INT(df_install(root, &fx, 0, &res), 0);
    cdd_install_result_clear(&res);
    char *before = df_listing(root, 1);
    struct cdd_receipt *rc1 = df_receipt(root);
    CHECK_INT(df_install(root, &fx, 0, &res), 0);
    CHECK(!res.changed);
    CHECK_INT(res.plan.n, N1);
    for (size_t i = 0; i < res.plan.n; i++)
        CHECK_MSG(res.plan.items[i].action == CDD_ACT_UNCHANGED, "%s: %s",
                  res.plan.items[i].path,
                  cdd_action_name(res.plan.items[i].action));
    char *after = df_listing(root, 1);
    CHECK_STR(after, before);
    struct cdd_receipt *rc2 = df_receipt(root);
    CHECK(rc1 && rc2 && strcmp(rc1->txn_id, rc2->txn_id) == 0);
    cdd_receipt_free(rc1);
    cdd_receipt_free(rc2);
    free(after);
    free(before);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_upgrade(void)
{
    struct df_fix f1, f2;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "upgrade");
    df_fixture(&f1, df_dir(T, "upgrade-v1"), v1, N1);
    df_fixture(&f2, df_dir(T, "upgrade-v2"), v2, N2);
    CHECK_INT(df_install(root, &f1, 0, &res), 0);
    cdd_install_result_clear(&res);

    CHECK_INT(df_install(root, &f2, 0, &res), 0);
    CHECK(res.changed);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_REPLACE);
    CHECK_ACTION(&res.plan, "include/cudnn_backend.h", CDD_ACT_NEW);
    CHECK_ACTION(&res.plan, "include/cudnn_version.h", CDD_ACT_REMOVE);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_UNCHANGED);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8", CDD_ACT_UNCHANGED);
    CHECK_INT(res.plan.n, N2 + 1);
    file_is(root, "include/cudnn.h", HDR2);
    file_is(root, "include/cudnn_backend.h", BACKEND);
    CHECK(!df_exists(root, "include/cudnn_version.h"));

    /* What it replaced and removed is in backup/<txn>/, with the earlier
     * receipt, and recorded (type, size, sha256) in the new receipt. */
    char rel[512];
    snprintf(rel, sizeof rel, "%s/%s/include/cudnn.h", CDD_BACKUP_DIR,
             res.txn_id ? res.txn_id : "?");
    file_is(root, rel, HDR);
    snprintf(rel, sizeof rel, "%s/%s/include/cudnn_version.h", CDD_BACKUP_DIR,
             res.txn_id ? res.txn_id : "?");
    file_is(root, rel, VHDR);
    snprintf(rel, sizeof rel, "%s/%s/%s", CDD_BACKUP_DIR,
             res.txn_id ? res.txn_id : "?", CDD_RECEIPT_FILE);
    CHECK(df_exists(root, rel));
    struct cdd_receipt *rc = df_receipt(root);
    CHECK(rc != NULL);
    if (rc) {
        CHECK_STR(rc->txn_id, res.txn_id);
        CHECK_INT(rc->n_files, N2);
        CHECK(cdd_receipt_file(rc, "include/cudnn_version.h") == NULL);
        ssize_t i = backed_up_index(rc, "include/cudnn.h");
        CHECK(i >= 0);
        if (i >= 0 && rc->backed_up_prev) {
            char hex[CDD_SHA256_HEX], want[CDD_SHA256_HEX];
            CHECK(rc->backed_up_prev[i].type == CDD_FT_FILE);
            CHECK_INT(rc->backed_up_prev[i].size, strlen(HDR));
            cdd_hex_encode(rc->backed_up_prev[i].sha256, CDD_SHA256_LEN, hex);
            df_sha_hex(HDR, strlen(HDR), want);
            CHECK_STR(hex, want);
        }
        CHECK(backed_up_index(rc, "include/cudnn_version.h") >= 0);
        CHECK(backed_up_index(rc, CDD_RECEIPT_FILE) >= 0);
        CHECK(backed_up_index(rc, CDD_MANIFEST_COPY) >= 0);
        CHECK(backed_up_index(rc, "lib64/libcudnn.so.8.5.0") < 0);
    }
    cdd_receipt_free(rc);
    cdd_install_result_clear(&res);
    df_fixture_free(&f1);
    df_fixture_free(&f2);
}

static void test_files_already_there(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "there");
    df_fixture(&fx, df_dir(T, "there-archive"), v1, N1);
    df_put(root, "include/cudnn.h", HDR);                 /* same bytes */
    df_put(root, "include/cudnn_version.h", "/* hand copy */\n"); /* other */
    CHECK_INT(df_install(root, &fx, 0, &res), 0);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_UNCHANGED);
    CHECK_ACTION(&res.plan, "include/cudnn_version.h", CDD_ACT_REPLACE);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_NEW);
    file_is(root, "include/cudnn_version.h", VHDR);
    char rel[512];
    snprintf(rel, sizeof rel, "%s/%s/include/cudnn_version.h", CDD_BACKUP_DIR,
             res.txn_id ? res.txn_id : "?");
    file_is(root, rel, "/* hand copy */\n");
    struct cdd_receipt *rc = df_receipt(root);
    CHECK(rc != NULL);
    if (rc) {
        const struct cdd_rfile_entry *same =
            cdd_receipt_file(rc, "include/cudnn.h");
        const struct cdd_rfile_entry *other =
            cdd_receipt_file(rc, "include/cudnn_version.h");
        CHECK(same && same->preexisting);
        CHECK(other && !other->preexisting);
        CHECK(backed_up_index(rc, "include/cudnn_version.h") >= 0);
        CHECK(backed_up_index(rc, "include/cudnn.h") < 0);
    }
    cdd_receipt_free(rc);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_pin_mismatch(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "pin");
    df_fixture(&fx, df_dir(T, "pin-archive"), v1, N1);
    /* The manifest pins other bytes than the archive has. */
    fx.m->archive.sha256[0] ^= 0x5a;
    char *before = df_listing(root, 1);
    CHECK_INT(df_install(root, &fx, 0, &res), CDD_E_CHECKSUM);
    CHECK(strstr(cdd_last_error()->msg, "does not match") != NULL);
    CHECK(!res.changed);
    char *after = df_listing(root, 1);
    CHECK_STR(after, before);
    free(after);
    free(before);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_wrong_cuda_major(void)
{
    struct df_fix fx;
    struct cdd_install_result res = {0};
    const char *root = df_cuda_tree(T, "major");
    df_put(root, "version.json", "{\"cuda\":{\"version\":\"12.2.0\"}}\n");
    df_fixture(&fx, df_dir(T, "major-archive"), v1, N1);
    char *before = df_listing(root, 0);
    CHECK_INT(df_install(root, &fx, 0, &res), CDD_E_VERSION);
    char *after = df_listing(root, 0);
    CHECK_STR(after, before);
    free(after);
    free(before);
    cdd_install_result_clear(&res);
    df_fixture_free(&fx);
}

TEST_MAIN(TEST(test_fresh), TEST(test_dry_run),
          TEST(test_reinstall_unchanged), TEST(test_upgrade),
          TEST(test_files_already_there), TEST(test_pin_mismatch),
          TEST(test_wrong_cuda_major))
