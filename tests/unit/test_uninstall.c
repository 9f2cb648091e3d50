/* Unit tests of cdd_uninstall() (uninstall.c) on trees installed here by
 * cdd_install() from small archives (deploy_fixture.h): an uninstall plans
 * every file remove and leaves the tree as it was before the install (the
 * folders the install created gone, receipt and manifest copy gone); after
 * an upgrade it restores what the upgrade replaced and the earlier receipt;
 * a file changed since install stops it (CDD_E_MODIFIED, nothing changed)
 * unless forced; a file that was there before the install stays; a dry run
 * plans and touches nothing; a tree without a receipt is left alone, no
 * state created. POSIX only (symlinks). */
#include "deploy_fixture.h"

#define T "uninstall"

static const char SO[] = "\177ELF libcudnn.so.8.5.0\n";
static const char HDR[] = "/* cudnn.h, version one */\n";
static const char HDR2[] = "/* cudnn.h, version two */\n";
static const char LICENSE[] = "Synthetic licence text for the tests.\n";

static const struct df_ent v1[] = {
    {"LICENSE", 'f', LICENSE},
    {"include/cudnn.h", 'f', HDR},
    {"lib/libcudnn.so.8", 'l', "libcudnn.so.8.5.0"},
    {"lib/libcudnn.so.8.5.0", 'f', SO},
};
static const struct df_ent v2[] = {
    {"LICENSE", 'f', LICENSE},
    {"include/cudnn.h", 'f', HDR2},
    {"lib/libcudnn.so.8", 'l', "libcudnn.so.8.5.0"},
    {"lib/libcudnn.so.8.5.0", 'f', SO},
};
#define N (sizeof v1 / sizeof v1[0])

static void install_ok(const char *root, const struct df_fix *fx)
{
    struct cdd_install_result res = {0};
    CHECK_INT(df_install(root, fx, 0, &res), 0);
    CHECK(res.changed);
    cdd_install_result_clear(&res);
}

static void test_back_to_before(void)
{
    struct df_fix fx;
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "plain");
    df_fixture(&fx, df_dir(T, "plain-archive"), v1, N);
    char *before = df_listing(root, 1);
    install_ok(root, &fx);
    CHECK_INT(df_uninstall(root, 0, 0, &res), 0);
    CHECK(res.had_receipt);
    CHECK(res.changed);
    CHECK(res.txn_id != NULL);
    CHECK_STR(res.product_version, "cudnn 8.5.0.96");
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_REMOVE);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8", CDD_ACT_REMOVE);
    CHECK_ACTION(&res.plan, "share/doc/cudnn/LICENSE", CDD_ACT_REMOVE);
    CHECK_INT(res.plan.n, N);
    /* share/doc/cudnn, made by the install, is gone again; lib64/ stays. */
    char *after = df_listing(root, 1);
    CHECK_STR(after, before);
    CHECK(!df_exists(root, "share"));
    CHECK(!df_exists(root, CDD_RECEIPT_FILE));
    CHECK(!df_exists(root, CDD_MANIFEST_COPY));
    CHECK(df_exists(root, "lib64/libcudart.so.11.0"));
    free(after);
    free(before);
    cdd_uninstall_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_restores_the_upgraded(void)
{
    struct df_fix f1, f2;
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "upgrade");
    df_fixture(&f1, df_dir(T, "upgrade-v1"), v1, N);
    df_fixture(&f2, df_dir(T, "upgrade-v2"), v2, N);
    install_ok(root, &f1);
    struct cdd_receipt *r1 = df_receipt(root);
    char *with_v1 = df_listing(root, 1);
    install_ok(root, &f2);
    CHECK_INT(df_uninstall(root, 0, 0, &res), 0);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_RESTORE);
    CHECK_ACTION(&res.plan, CDD_RECEIPT_FILE, CDD_ACT_RESTORE);
    CHECK_ACTION(&res.plan, CDD_MANIFEST_COPY, CDD_ACT_RESTORE);
    /* v1 put it there and v2 found it identical: v1's, it stays. */
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_UNCHANGED);
    char *after = df_listing(root, 1);
    CHECK_STR(after, with_v1);
    free(after);
    free(with_v1);
    char *h = df_read(root, "include/cudnn.h");
    CHECK_MSG(h && strcmp(h, HDR) == 0, "cudnn.h: %s", h ? h : "absent");
    free(h);
    /* The earlier install's receipt is the tree's record again. */
    struct cdd_receipt *back = df_receipt(root);
    CHECK(r1 && back && strcmp(back->txn_id, r1->txn_id) == 0);
    cdd_receipt_free(back);
    cdd_receipt_free(r1);
    cdd_uninstall_result_clear(&res);
    df_fixture_free(&f1);
    df_fixture_free(&f2);
}

static void test_modified_refused_then_forced(void)
{
    struct df_fix fx;
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "modified");
    df_fixture(&fx, df_dir(T, "modified-archive"), v1, N);
    install_ok(root, &fx);
    df_put(root, "include/cudnn.h", "/* edited by hand */\n");
    char *before = df_listing(root, 1);
    CHECK_INT(df_uninstall(root, 0, 0, &res), CDD_E_MODIFIED);
    CHECK(strstr(cdd_last_error()->msg, "include/cudnn.h") != NULL);
    CHECK(!res.changed);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_MODIFIED);
    char *after = df_listing(root, 1);
    CHECK_STR(after, before);
    free(after);
    cdd_uninstall_result_clear(&res);

    CHECK_INT(df_uninstall(root, 1, 0, &res), 0);
    CHECK(res.changed);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_REMOVE);
    CHECK(!df_exists(root, "include/cudnn.h"));
    CHECK(!df_exists(root, CDD_RECEIPT_FILE));
    free(before);
    cdd_uninstall_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_preexisting_stays(void)
{
    struct df_fix fx;
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "preexisting");
    df_fixture(&fx, df_dir(T, "preexisting-archive"), v1, N);
    df_put(root, "include/cudnn.h", HDR); /* the same bytes, by hand */
    install_ok(root, &fx);
    CHECK_INT(df_uninstall(root, 0, 0, &res), 0);
    CHECK_ACTION(&res.plan, "include/cudnn.h", CDD_ACT_UNCHANGED);
    char *h = df_read(root, "include/cudnn.h");
    CHECK_MSG(h && strcmp(h, HDR) == 0, "cudnn.h: %s", h ? h : "absent");
    free(h);
    CHECK(!df_exists(root, "lib64/libcudnn.so.8.5.0"));
    cdd_uninstall_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_dry_run(void)
{
    struct df_fix fx;
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "dry");
    df_fixture(&fx, df_dir(T, "dry-archive"), v1, N);
    install_ok(root, &fx);
    char *before = df_listing(root, 0);
    CHECK_INT(df_uninstall(root, 0, 1, &res), 0);
    CHECK(!res.changed);
    CHECK(res.txn_id == NULL);
    CHECK_ACTION(&res.plan, "lib64/libcudnn.so.8.5.0", CDD_ACT_REMOVE);
    char *after = df_listing(root, 0);
    CHECK_STR(after, before);
    free(after);
    free(before);
    cdd_uninstall_result_clear(&res);
    df_fixture_free(&fx);
}

static void test_nothing_installed(void)
{
    struct cdd_uninstall_result res = {0};
    const char *root = df_cuda_tree(T, "empty");
    char *before = df_listing(root, 0);
    CHECK_INT(df_uninstall(root, 0, 0, &res), 0);
    CHECK(!res.had_receipt);
    CHECK(!res.changed);
    CHECK_INT(res.plan.n, 0);
    /* Not even a state folder. */
    char *after = df_listing(root, 0);
    CHECK_STR(after, before);
    free(after);
    free(before);
    cdd_uninstall_result_clear(&res);
}

TEST_MAIN(TEST(test_back_to_before), TEST(test_restores_the_upgraded),
          TEST(test_modified_refused_then_forced), TEST(test_preexisting_stays),
          TEST(test_dry_run), TEST(test_nothing_installed))
