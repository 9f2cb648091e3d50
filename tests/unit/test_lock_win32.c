/* The lock's holder message on Windows (fsops_win32.c, fsops.c): the pid in
 * the lock file is named only when it is a running process; an empty file
 * or the pid of a process that does not exist gives "unknown", never pid 0
 * or the stale number. Built only for Windows, run under Wine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "test.h"

static char path[1200];

static const char *lock_path(const char *name)
{
    const char *tmp = getenv("CDD_TEST_TMP");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s%s/lock-win32",
             tmp && tmp[0] == '/' ? "Z:" : "", tmp ? tmp : "C:/cdd-test-tmp");
    CHECK_INT(cdd_fs_mkdirs(dir, NULL), 0);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cdd_fs_unlink_quiet(path);
    return path;
}

/* Replace the lock file's content through another handle, as another
 * process (or a stale earlier run) would have left it. */
static void set_content(const char *p, const char *text)
{
    FILE *f = fopen(p, "r+b");
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    CHECK(fclose(f) == 0);
}

/* Hold the lock, make the file say `content`, and check what a second
 * acquisition says: want_pid > 0 must be named, 0 must give "unknown". */
static void check_holder(const char *name, const char *content,
                         long want_pid, const char *must_not_name)
{
    const char *p = lock_path(name);
    struct cdd_lock *l1 = NULL, *l2 = NULL;
    long holder = -1;
    CHECK_INT(cdd_lock_acquire(p, 0, NULL, &l1), 0);
    if (content) {
        /* An empty file: cut it through our own handle's truncation. */
        FILE *f = fopen(p, content[0] ? "r+b" : "wb");
        CHECK(f != NULL);
        if (f)
            CHECK(fclose(f) == 0);
        if (content[0])
            set_content(p, content);
    }
    CHECK_INT(cdd_lock_acquire(p, 0, &holder, &l2), CDD_E_LOCKED);
    CHECK(l2 == NULL);
    const char *msg = cdd_last_error()->msg;
    CHECK_INT(holder, want_pid);
    CHECK_MSG(strstr(msg, "pid 0") == NULL, "message: %s", msg);
    if (want_pid > 0) {
        char want[32];
        snprintf(want, sizeof want, "pid %ld", want_pid);
        CHECK_MSG(strstr(msg, want) != NULL, "message: %s", msg);
    } else {
        CHECK_MSG(strstr(msg, "unknown") != NULL, "message: %s", msg);
    }
    if (must_not_name)
        CHECK_MSG(strstr(msg, must_not_name) == NULL, "message: %s", msg);
    cdd_lock_release(l1);
}

static void test_running_holder_is_named(void)
{
    check_holder("named", NULL, cdd_getpid(), NULL);
}

static void test_empty_lock_file_is_unknown(void)
{
    check_holder("empty", "", 0, NULL);
}

static void test_pid_of_no_process_is_never_named(void)
{
    /* Windows pids are multiples of 4: 999997 is no process. */
    check_holder("stale", "999997\n", 0, "999997");
}

static void test_garbage_is_unknown(void)
{
    check_holder("garbage", "12x\n", 0, "12");
}

/* The tree's lock, opened by name inside a held folder
 * (cdd_lock_acquire_at): the same lock as by path, and a folder planted as
 * the lock file is tampered state, not an I/O error. */
static void test_lock_at_in_a_held_folder(void)
{
    char dirp[1200], lp[1300];
    struct cdd_dir *d = NULL;
    struct cdd_lock *a = NULL, *b = NULL;
    long holder = -1;
    snprintf(dirp, sizeof dirp, "%s", lock_path("held"));
    CHECK_INT(cdd_fs_mkdirs(dirp, NULL), 0);
    snprintf(lp, sizeof lp, "%s/lock", dirp);
    cdd_fs_unlink_quiet(lp);
    CHECK_INT(cdd_dir_open_path(dirp, &d, NULL), 0);
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), 0);
    struct cdd_stat st;
    CHECK_INT(cdd_fs_lstat(lp, &st), 0);
    CHECK_INT(st.type, CDD_FT_FILE);
    CHECK_INT(cdd_lock_acquire(lp, 0, &holder, &b), CDD_E_LOCKED);
    CHECK_INT(holder, cdd_getpid());
    cdd_lock_release(a);
    CHECK_INT(cdd_lock_acquire(lp, 0, NULL, &b), 0);
    cdd_lock_release(b);
    cdd_fs_unlink_quiet(lp);
    CHECK_INT(cdd_fs_mkdirs(lp, NULL), 0);
    a = NULL;
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), CDD_E_STATE);
    CHECK(a == NULL);
    CHECK(strstr(cdd_last_error()->msg, "folder") != NULL);
    CHECK_INT(cdd_fs_rmdir(lp), 0);
    cdd_dir_close(d);
}

TEST_MAIN(TEST(test_running_holder_is_named),
          TEST(test_empty_lock_file_is_unknown),
          TEST(test_pid_of_no_process_is_never_named),
          TEST(test_garbage_is_unknown),
          TEST(test_lock_at_in_a_held_folder))
