/* Unit tests of the tree handle on Windows (tree.c over fsops_win32.c's
 * directory handles), built only for Windows and run under Wine in CI:
 * operations on tree paths land beneath the root, the root and state
 * folder cannot be renamed away while the tree is open (their handles deny
 * FILE_SHARE_DELETE), the final-path check, case-insensitive lookup of an
 * existing destination, and the state file refusals. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/state.h"
#include "cdd/tree.h"
#include "txn.h"
#include "fixture.h"
#include "test.h"
#include "win32_int.h"

static int move_w(const char *from, const char *to)
{
    wchar_t *a = cdd_w_path(from), *b = cdd_w_path(to);
    int ok = a && b && MoveFileExW(a, b, 0);
    free(a);
    free(b);
    return ok;
}

static void test_operations(void)
{
    char root[1100], p[1200];
    struct cdd_tree *t = NULL;
    struct cdd_stat st;
    char *text = NULL, *created = NULL;
    snprintf(root, sizeof root, "%s", fx_scratch("tree-win32/ops"));
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK(!cdd_tree_has_state(t));
    CHECK_INT(cdd_tree_mkdirs(t, "lib/x64", &created), 0);
    CHECK_STR(created, "lib\nlib/x64\n");
    free(created);
    CHECK_INT(fx_tree_put(t, "lib/x64/cudnn.lib", "lib"), 0);
    CHECK_INT(cdd_tree_rename(t, "lib/x64/cudnn.lib", "lib/cudnn.lib"), 0);
    CHECK_INT(cdd_tree_read_all(t, "lib/cudnn.lib", 100, &text, NULL), 0);
    CHECK_STR(text, "lib");
    free(text);
    CHECK_INT(cdd_tree_lstat(t, "lib/x64/cudnn.lib", &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    CHECK_INT(cdd_tree_lstat(t, "nodir/x", &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    /* Not tree paths. */
    CHECK_INT(cdd_tree_lstat(t, "../x", &st), CDD_E_UNSAFE);
    CHECK_INT(cdd_tree_lstat(t, "C:/Windows/win.ini", &st), CDD_E_UNSAFE);
    CHECK_INT(fx_tree_put(t, "lib/../../escape", "x"), CDD_E_UNSAFE);
    CHECK_INT(cdd_tree_remove_tree(t, "lib"), 0);
    CHECK_INT(cdd_tree_lstat(t, "lib", &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
    cdd_tree_close(t);
    snprintf(p, sizeof p, "%s/../escape", root);
    CHECK_INT(cdd_fs_lstat(p, &st), 0);
    CHECK_INT(st.type, CDD_FT_NONE);
}

static void test_state_held(void)
{
    char root[1100], p[1200], q[1200];
    struct cdd_tree *t = NULL;
    struct cdd_recovery rec;
    int locked = 0;
    snprintf(root, sizeof root, "%s", fx_scratch("tree-win32/state"));
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK_INT(cdd_txn_lock(t, 0, 1, &locked, &rec), 0);
    CHECK_INT(locked, 1);
    CHECK(cdd_tree_has_state(t));
    /* While the tree is open, its state folder stays where it is: another
     * program cannot swap it for a junction to elsewhere. */
    snprintf(p, sizeof p, "%s/" CDD_STATE_DIR, root);
    snprintf(q, sizeof q, "%s/moved", root);
    CHECK_MSG(!move_w(p, q), "the state folder was renamed while held");
    cdd_recovery_clear(&rec);
    cdd_tree_close(t);
    CHECK(move_w(p, q)); /* and can be once the tree is closed */
    CHECK(move_w(q, p));
    /* A state folder that is a file: invalid state, exit 3. */
    CHECK_INT(cdd_fs_remove_tree(p), 0);
    CHECK_INT(cdd_fs_write_atomic(p, "x", 1), 0);
    CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
    CHECK(t == NULL);
}

static void test_find_case(void)
{
    char root[1100];
    struct cdd_tree *t = NULL;
    char *found = NULL;
    snprintf(root, sizeof root, "%s", fx_scratch("tree-win32/case"));
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK_INT(cdd_tree_mkdirs(t, "bin", NULL), 0);
    CHECK_INT(fx_tree_put(t, "bin/CUDNN64_8.DLL", "old"), 0);
    CHECK_INT(cdd_tree_find_case(t, "bin", "cudnn64_8.dll", &found), 0);
    CHECK_STR(found, "CUDNN64_8.DLL");
    free(found);
    /* NTFS (and Wine) find it by either name: install replaces it. */
    struct cdd_stat st;
    CHECK_INT(cdd_tree_lstat(t, "bin/cudnn64_8.dll", &st), 0);
    CHECK_INT(st.type, CDD_FT_FILE);
    cdd_tree_close(t);
}

TEST_MAIN(TEST(test_operations), TEST(test_state_held), TEST(test_find_case))
