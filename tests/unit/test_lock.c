/* The tree's lock (cdd_lock_acquire, fsops.c and fsops_posix.c): an
 * open-file-description lock - closing another descriptor of the lock file
 * does not drop it, and a second open of the file in the same process does
 * not get it -, and a holder message that names a live holder or says it
 * does not know (never pid 0, never a stale pid). POSIX only (fork). */
/* F_OFD_SETLK (the raw holder below) is declared only with _GNU_SOURCE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/sys.h"
#include "fixture.h"
#include "test.h"

static char scratch[1024];

static const char *lock_path(const char *name)
{
    static char p[1200];
    if (!scratch[0]) {
        const char *base = getenv("CDD_TEST_TMP");
        snprintf(scratch, sizeof scratch, "%s/lock-%ld",
                 base && *base ? base : "/tmp", (long)getpid());
        if (base && *base)
            mkdir(base, 0755);
        if (mkdir(scratch, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "cannot create %s\n", scratch);
            exit(2);
        }
    }
    snprintf(p, sizeof p, "%s/%s", scratch, name);
    unlink(p);
    return p;
}

/* In a child process: try the lock once; exit 0 when it was held by
 * someone else, 1 when the child got it, 2 on another error. */
static int child_tries(const char *path)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct cdd_lock *l = NULL;
        int r = cdd_lock_acquire(path, 0, NULL, &l);
        cdd_lock_release(l);
        _exit(r == CDD_E_LOCKED ? 0 : r == 0 ? 1 : 2);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void test_closing_another_descriptor_keeps_the_lock(void)
{
    const char *path = lock_path("ofd");
    struct cdd_lock *l = NULL;
    CHECK_INT(cdd_lock_acquire(path, 0, NULL, &l), 0);
    CHECK_INT(child_tries(path), 0);
    /* A classic fcntl lock would be gone after this close. */
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    char buf[32];
    CHECK(read(fd, buf, sizeof buf) > 0); /* our pid is in it */
    CHECK(close(fd) == 0);
    CHECK_INT(child_tries(path), 0);
    cdd_lock_release(l);
    CHECK_INT(child_tries(path), 1);
}

static void test_second_open_in_the_same_process_is_refused(void)
{
    const char *path = lock_path("same");
    struct cdd_lock *a = NULL, *b = NULL;
    long holder = -1;
    CHECK_INT(cdd_lock_acquire(path, 0, NULL, &a), 0);
    CHECK_INT(cdd_lock_acquire(path, 0, &holder, &b), CDD_E_LOCKED);
    CHECK(b == NULL);
    /* The holder is this very process (another open of the file). */
    CHECK_INT(holder, getpid());
    cdd_lock_release(a);
    CHECK_INT(cdd_lock_acquire(path, 0, NULL, &b), 0);
    cdd_lock_release(b);
}

/* A child holds the lock through a raw OFD lock without writing its pid;
 * the file holds `content`. The parent's message must say "unknown" and
 * never the pid in the file. */
static void held_without_pid(const char *name, const char *content,
                             long must_not_name)
{
    const char *path = lock_path(name);
    int up[2], down[2];
    char c = 0;
    CHECK_INT(fx_write_text(path, content), 0);
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        c = fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(2);
        _exit(0);
    }
    CHECK(read(up[0], &c, 1) == 1 && c == 'y');
    struct cdd_lock *l = NULL;
    long holder = -1;
    double t0 = cdd_monotonic();
    CHECK_INT(cdd_lock_acquire(path, 0, &holder, &l), CDD_E_LOCKED);
    double waited = cdd_monotonic() - t0;
    const char *msg = cdd_last_error()->msg;
    CHECK_INT(holder, 0);
    CHECK_MSG(strstr(msg, "unknown") != NULL, "message: %s", msg);
    CHECK_MSG(strstr(msg, "pid 0") == NULL, "message: %s", msg);
    if (must_not_name > 0) {
        char bad[32];
        snprintf(bad, sizeof bad, "%ld", must_not_name);
        CHECK_MSG(strstr(msg, bad) == NULL, "message: %s", msg);
    }
    /* It looked again briefly before saying so - and only briefly. */
    CHECK_MSG(waited >= 0.1 && waited < 3.0, "waited %.3f s", waited);
    c = 'g';
    CHECK(write(down[1], &c, 1) == 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
}

static void test_holder_without_pid_is_unknown(void)
{
    held_without_pid("empty", "", 0);
}

static void test_stale_pid_is_never_named(void)
{
    /* The pid of a process that has exited. */
    fflush(NULL);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    int st;
    CHECK(waitpid(dead, &st, 0) == dead);
    char text[32];
    snprintf(text, sizeof text, "%ld\n", (long)dead);
    held_without_pid("stale", text, (long)dead);
}

static void test_live_unrelated_pid_is_never_named(void)
{
    /* A live process that does not have the lock file open (as when a
     * stale pid has been reused). */
    fflush(NULL);
    pid_t other = fork();
    if (other == 0) {
        pause();
        _exit(0);
    }
    char text[32];
    snprintf(text, sizeof text, "%ld\n", (long)other);
    held_without_pid("unrelated", text, (long)other);
    kill(other, SIGKILL);
    int st;
    CHECK(waitpid(other, &st, 0) == other);
}

static void test_holder_that_wrote_its_pid_is_named(void)
{
    const char *path = lock_path("named");
    int up[2], down[2];
    char c = 0;
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct cdd_lock *l = NULL;
        c = cdd_lock_acquire(path, 0, NULL, &l) == 0 ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(2);
        cdd_lock_release(l);
        _exit(0);
    }
    CHECK(read(up[0], &c, 1) == 1 && c == 'y');
    struct cdd_lock *l = NULL;
    long holder = 0;
    CHECK_INT(cdd_lock_acquire(path, 0, &holder, &l), CDD_E_LOCKED);
    CHECK_INT(holder, pid);
    char want[32];
    snprintf(want, sizeof want, "pid %ld", (long)pid);
    CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL, "message: %s",
              cdd_last_error()->msg);
    c = 'g';
    CHECK(write(down[1], &c, 1) == 1);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
}

static void test_lock_file_link_is_not_followed(void)
{
    char target[1200];
    snprintf(target, sizeof target, "%s", lock_path("target"));
    CHECK_INT(fx_write_text(target, "precious\n"), 0);
    const char *path = lock_path("link");
    CHECK(symlink(target, path) == 0);
    struct cdd_lock *l = NULL;
    CHECK(cdd_lock_acquire(path, 0, NULL, &l) != 0);
    CHECK(l == NULL);
    char buf[32] = {0};
    int fd = open(target, O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf - 1) == 9);
    if (fd >= 0)
        close(fd);
    CHECK_STR(buf, "precious\n");
}

/* The lock opened inside a held folder (cdd_lock_acquire_at, the tree's
 * lock): the same lock as by path (they conflict), and a link planted as
 * the lock file is tampered state, never opened: the file it leads to is
 * neither created nor written. */
static void test_lock_at_in_a_held_folder(void)
{
    struct cdd_dir *d = NULL;
    struct cdd_lock *a = NULL, *b = NULL;
    char target[1200], missing[1200], dirp[1200];
    struct stat sb;
    lock_path("x");
    snprintf(dirp, sizeof dirp, "%s/held", scratch);
    CHECK(mkdir(dirp, 0755) == 0 || errno == EEXIST);
    CHECK_INT(cdd_dir_open_path(dirp, &d, NULL), 0);
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), 0);
    char path[1300];
    snprintf(path, sizeof path, "%s/lock", dirp);
    CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode));
    long holder = -1;
    CHECK_INT(cdd_lock_acquire(path, 0, &holder, &b), CDD_E_LOCKED);
    CHECK(strstr(cdd_last_error()->path, "held/lock") != NULL);
    cdd_lock_release(a);
    CHECK(unlink(path) == 0);

    snprintf(target, sizeof target, "%s", lock_path("at-target"));
    CHECK_INT(fx_write_text(target, "precious\n"), 0);
    CHECK(symlink(target, path) == 0);
    a = NULL;
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), CDD_E_STATE);
    CHECK(a == NULL);
    CHECK(strstr(cdd_last_error()->msg, "link") != NULL);
    char buf[32] = {0};
    int fd = open(target, O_RDONLY);
    CHECK(fd >= 0 && read(fd, buf, sizeof buf - 1) == 9);
    if (fd >= 0)
        close(fd);
    CHECK_STR(buf, "precious\n");
    CHECK(unlink(path) == 0);

    snprintf(missing, sizeof missing, "%s", lock_path("at-missing"));
    CHECK(symlink(missing, path) == 0);
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), CDD_E_STATE);
    CHECK(lstat(missing, &sb) != 0 && errno == ENOENT);
    CHECK(unlink(path) == 0);

    CHECK(mkdir(path, 0755) == 0);
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), CDD_E_STATE);
    CHECK(rmdir(path) == 0);
    CHECK(mkfifo(path, 0644) == 0);
    CHECK_INT(cdd_lock_acquire_at(d, "lock", 0, NULL, &a), CDD_E_STATE);
    CHECK(unlink(path) == 0);
    cdd_dir_close(d);
    CHECK(rmdir(dirp) == 0);
}

TEST_MAIN(TEST(test_closing_another_descriptor_keeps_the_lock),
          TEST(test_second_open_in_the_same_process_is_refused),
          TEST(test_holder_without_pid_is_unknown),
          TEST(test_stale_pid_is_never_named),
          TEST(test_live_unrelated_pid_is_never_named),
          TEST(test_holder_that_wrote_its_pid_is_named),
          TEST(test_lock_file_link_is_not_followed),
          TEST(test_lock_at_in_a_held_folder))
