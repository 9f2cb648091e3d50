/* Unit tests of the tree handle (tree.c): beneath-resolution with a link at
 * every position of a path (first component, middle, the folder of the
 * final component, the final component itself), links that stay inside
 * (relative, absolute, with "..") and links that leave (absolute elsewhere,
 * ".." above the root), loops, dangling links, links into .cudnn-deploy and
 * links inside it; reads and every kind of write through them, with a
 * sentinel outside the tree that must never change; the root given as a
 * link; the state folder, lock file and journal as links. Each resolution
 * case runs twice: with the kernel's one-call resolution (openat2) where
 * available, and through the component walk alone.
 *
 * POSIX-only: it makes symlinks with symlink(2). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "txn.h"
#include "fixture.h"
#include "test.h"

static char scratch[1024];
static char root[1200], outside[1200], rootlink[1200];

static void sh(const char *fmt, const char *a, const char *b)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        exit(2);
    }
}

static void put(const char *rel, const char *data)
{
    if (fx_put(root, rel, data) != 0)
        exit(2);
}

static void dir(const char *rel)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    sh("mkdir -p '%s'%s", p, "");
}

static void link_(const char *target, const char *rel)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    if (symlink(target, p) != 0) {
        fprintf(stderr, "cannot link %s: %s\n", p, strerror(errno));
        exit(2);
    }
}

/* The tree every case runs on. */
static void build(void)
{
    const char *base = getenv("CDD_TEST_TMP");
    char abs_in[2048], abs_out[2048];
    snprintf(scratch, sizeof scratch, "%s/tree-%ld",
             base && *base ? base : "/tmp", (long)getpid());
    snprintf(root, sizeof root, "%s/cuda-11.6", scratch);
    snprintf(outside, sizeof outside, "%s/outside", scratch);
    snprintf(rootlink, sizeof rootlink, "%s/cuda", scratch);
    sh("rm -rf '%s' && mkdir -p '%s'", scratch, scratch);
    sh("mkdir -p '%s/sub' && echo sentinel > '%s/sentinel'", outside, outside);
    sh("echo sentinel > '%s/sub/sentinel'%s", outside, "");
    sh("mkdir -p '%s'%s", root, "");
    if (symlink("cuda-11.6", rootlink) != 0)
        exit(2);

    dir("targets/x86_64-linux/lib");
    dir("targets/x86_64-linux/include");
    put("targets/x86_64-linux/lib/libcudart.so", "cudart");
    link_("targets/x86_64-linux/lib", "lib64");         /* real CUDA tree */
    link_("targets/x86_64-linux/include", "include");
    dir("real/deep");
    put("real/f", "f");
    put("real/deep/g", "g");
    link_("real", "inlink");                  /* relative, inside */
    snprintf(abs_in, sizeof abs_in, "%s/real", root);
    link_(abs_in, "abslink");                 /* absolute, inside */
    link_(outside, "outlink");                /* absolute, outside */
    link_("../outside", "uplink");            /* relative, outside by .. */
    link_("real/../real", "dotdot");          /* .. that stays inside */
    dir("a/b");
    link_("../../real", "a/b/back");          /* middle, .. to inside */
    link_("../../../outside", "a/b/away");    /* middle, .. to outside */
    snprintf(abs_out, sizeof abs_out, "%s/sub", outside);
    link_(abs_out, "real/outmid");            /* the folder of the final one */
    link_("deep", "real/deeplink");
    link_("loop2", "loop1");                  /* a loop */
    link_("loop1", "loop2");
    link_("self", "self");
    link_("nowhere", "dangling");
    link_(".cudnn-deploy", "tostate");        /* into the state folder */
    link_("inlink/deep", "chain");            /* a link through a link */
    dir(".cudnn-deploy");
    put(".cudnn-deploy/journal", "x");
    link_("../real", ".cudnn-deploy/backup"); /* inside the state folder */
    dir(".cudnn-deploy/stage-1");
    link_("../../real", ".cudnn-deploy/stage-1/up");
}

static int sentinel_intact(void)
{
    char p[2048];
    struct stat sb;
    int n = 0;
    snprintf(p, sizeof p, "%s/sentinel", outside);
    n += stat(p, &sb) == 0 && sb.st_size == 9;
    snprintf(p, sizeof p, "%s/sub/sentinel", outside);
    n += stat(p, &sb) == 0 && sb.st_size == 9;
    /* Nothing was added beside them. */
    DIR *d = opendir(outside);
    struct dirent *de;
    int entries = 0;
    while (d && (de = readdir(d)) != NULL)
        entries += de->d_name[0] != '.';
    if (d)
        closedir(d);
    snprintf(p, sizeof p, "%s/sub", outside);
    d = opendir(p);
    while (d && (de = readdir(d)) != NULL)
        entries += de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n == 2 && entries == 3;
}

struct lcase {
    const char *rel;
    int want;              /* 0 or a CDD_E_* code */
    enum cdd_ftype type;   /* when 0 */
};

/* A link at every position: the answer lstat gives. */
static const struct lcase lstat_cases[] = {
    {"real/f", 0, CDD_FT_FILE},
    {"inlink/f", 0, CDD_FT_FILE},           /* first, relative inside */
    {"abslink/f", 0, CDD_FT_FILE},          /* first, absolute inside */
    {"dotdot/f", 0, CDD_FT_FILE},           /* .. that stays inside */
    {"a/b/back/f", 0, CDD_FT_FILE},         /* middle, .. inside */
    {"a/b/back/deep/g", 0, CDD_FT_FILE},
    {"real/deeplink/g", 0, CDD_FT_FILE},    /* folder of the final one */
    {"chain/g", 0, CDD_FT_FILE},            /* a link through a link */
    {"lib64/libcudart.so", 0, CDD_FT_FILE}, /* the CUDA tree's own */
    {"include/cudnn.h", 0, CDD_FT_NONE},
    {"inlink", 0, CDD_FT_SYMLINK},          /* final: never followed */
    {"outlink", 0, CDD_FT_SYMLINK},
    {"real/outmid", 0, CDD_FT_SYMLINK},
    {"outlink/sentinel", CDD_E_UNSAFE, 0},  /* first, absolute outside */
    {"uplink/sentinel", CDD_E_UNSAFE, 0},   /* first, .. outside */
    {"a/b/away/sentinel", CDD_E_UNSAFE, 0}, /* middle, .. outside */
    {"real/outmid/sentinel", CDD_E_UNSAFE, 0},
    {"loop1/x", CDD_E_UNSAFE, 0},           /* loops */
    {"self/x", CDD_E_UNSAFE, 0},
    {"dangling/x", 0, CDD_FT_NONE},         /* leads nowhere: nothing */
    {"real/f/x", 0, CDD_FT_NONE},           /* a file on the way */
    {"tostate/journal", CDD_E_UNSAFE, 0},   /* into the state folder */
    {".cudnn-deploy/journal", 0, CDD_FT_FILE},
    {".cudnn-deploy/backup", 0, CDD_FT_SYMLINK},
    {".cudnn-deploy/backup/f", CDD_E_STATE, 0}, /* no link in state */
    {".cudnn-deploy/stage-1/up/f", CDD_E_STATE, 0},
    {"../outside/sentinel", CDD_E_UNSAFE, 0},   /* not a tree path */
    {"/etc/passwd", CDD_E_UNSAFE, 0},
    {"real/./f", CDD_E_UNSAFE, 0},
    {"real//f", CDD_E_UNSAFE, 0},
    {"C:/Windows/win.ini", CDD_E_UNSAFE, 0},
    {"real\\..\\..\\x", CDD_E_UNSAFE, 0},
    {"real/f:stream", CDD_E_UNSAFE, 0},
    {"real/\nf", CDD_E_UNSAFE, 0},
};

static void run_lstat_cases(struct cdd_tree *t, const char *mode)
{
    for (size_t i = 0; i < sizeof lstat_cases / sizeof lstat_cases[0]; i++) {
        const struct lcase *c = &lstat_cases[i];
        struct cdd_stat st;
        int r = cdd_tree_lstat(t, c->rel, &st);
        CHECK_MSG(r == c->want, "%s: lstat %s: %s (%s)", mode, c->rel,
                  cdd_err_name(r), cdd_last_error()->msg);
        if (!r && !c->want)
            CHECK_MSG(st.type == c->type, "%s: lstat %s: type %d, want %d",
                      mode, c->rel, (int)st.type, (int)c->type);
    }
}

static void test_lstat_positions(void)
{
    struct cdd_tree *t = NULL;
    CHECK_INT(cdd_tree_open(root, &t), 0);
    cdd_dir_fast_path(1);
    run_lstat_cases(t, "openat2");
    cdd_dir_fast_path(0);
    run_lstat_cases(t, "walk");
    cdd_dir_fast_path(1);
    cdd_tree_close(t);
    CHECK(sentinel_intact());
}

static void test_canon(void)
{
    struct cdd_tree *t = NULL;
    char *c = NULL;
    size_t missing = 9;
    CHECK_INT(cdd_tree_open(root, &t), 0);
    for (int pass = 0; pass < 2; pass++) {
        cdd_dir_fast_path(pass == 0);
        CHECK_INT(cdd_tree_canon(t, "inlink/f", &c, &missing), 0);
        CHECK_STR(c, "real/f");
        CHECK_INT(missing, 0);
        free(c);
        CHECK_INT(cdd_tree_canon(t, "abslink/deep/g", &c, &missing), 0);
        CHECK_STR(c, "real/deep/g");
        free(c);
        CHECK_INT(cdd_tree_canon(t, "a/b/back/f", &c, &missing), 0);
        CHECK_STR(c, "real/f");
        free(c);
        CHECK_INT(cdd_tree_canon(t, "lib64/new/sub/libx.so", &c, &missing), 0);
        CHECK_STR(c, "targets/x86_64-linux/lib/new/sub/libx.so");
        CHECK_INT(missing, 2);
        free(c);
        CHECK_INT(cdd_tree_canon(t, "outlink/new/x", &c, &missing),
                  CDD_E_UNSAFE);
        CHECK_INT(cdd_tree_canon(t, "dangling/x", &c, &missing), CDD_E_TARGET);
        CHECK_INT(cdd_tree_canon(t, "real/f/x", &c, &missing), CDD_E_TARGET);
        CHECK(c == NULL);
    }
    cdd_dir_fast_path(1);
    cdd_tree_close(t);
}

static int file_is(const char *rel, const char *data)
{
    return fx_file_is(fx_path(root, rel), data);
}

/* Writes, renames, folder creation and removal through links. */
static void test_writes(void)
{
    struct cdd_tree *t = NULL;
    char *created = NULL;
    CHECK_INT(cdd_tree_open(root, &t), 0);
    for (int pass = 0; pass < 2; pass++) {
        const char *mode = pass ? "walk" : "openat2";
        cdd_dir_fast_path(pass == 0);
        /* Inside: lands in the link's target. */
        CHECK_INT(fx_tree_put(t, "lib64/libcudnn.so.8", "new"), 0);
        CHECK(file_is("targets/x86_64-linux/lib/libcudnn.so.8", "new"));
        CHECK_INT(cdd_tree_rename(t, "lib64/libcudnn.so.8",
                                  "include/moved"), 0);
        CHECK(file_is("targets/x86_64-linux/include/moved", "new"));
        CHECK_INT(cdd_tree_unlink(t, "include/moved"), 0);
        CHECK_INT(cdd_tree_mkdirs(t, "lib64/n1/n2", &created), 0);
        CHECK_STR(created, "lib64/n1\nlib64/n1/n2\n");
        free(created);
        created = NULL;
        CHECK_INT(cdd_tree_rmdir(t, "lib64/n1/n2"), 0);
        CHECK_INT(cdd_tree_remove_tree(t, "targets/x86_64-linux/lib/n1"), 0);

        /* Outside: refused at every position, nothing written there. */
        static const char *const out[] = {
            "outlink/evil", "uplink/evil", "a/b/away/evil",
            "real/outmid/evil", "outlink/new/evil", "tostate/evil",
            ".cudnn-deploy/backup/evil",
        };
        for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
            int r = fx_tree_put(t, out[i], "x");
            CHECK_MSG(r == CDD_E_UNSAFE || r == CDD_E_STATE, "%s: create %s: %s",
                      mode, out[i], cdd_err_name(r));
            r = cdd_tree_mkdirs(t, out[i], NULL);
            CHECK_MSG(r == CDD_E_UNSAFE || r == CDD_E_STATE, "%s: mkdirs %s: %s",
                      mode, out[i], cdd_err_name(r));
            r = cdd_tree_rename(t, "real/f", out[i]);
            CHECK_MSG(r == CDD_E_UNSAFE || r == CDD_E_STATE, "%s: rename %s: %s",
                      mode, out[i], cdd_err_name(r));
            r = cdd_tree_symlink(t, "x", out[i]);
            CHECK_MSG(r == CDD_E_UNSAFE || r == CDD_E_STATE, "%s: symlink %s: %s",
                      mode, out[i], cdd_err_name(r));
        }
        CHECK_INT(cdd_tree_unlink(t, "outlink/sentinel"), CDD_E_UNSAFE);
        CHECK_INT(cdd_tree_remove_tree(t, "real/outmid/sentinel"),
                  CDD_E_UNSAFE);
        CHECK_INT(cdd_tree_rename(t, "uplink/sentinel", "real/stolen"),
                  CDD_E_UNSAFE);
        char *text = NULL;
        CHECK_INT(cdd_tree_read_all(t, "outlink/sentinel", 100, &text, NULL),
                  CDD_E_UNSAFE);
        CHECK(text == NULL);
        /* A final link is read as itself, never opened through. */
        CHECK_INT(cdd_tree_read_all(t, "inlink", 100, &text, NULL),
                  CDD_E_UNSAFE);
        /* A dangling link on the way: nothing is created at its target. */
        CHECK_INT(fx_tree_put(t, "dangling/x", "x"), CDD_E_TARGET);
        CHECK_INT(cdd_tree_mkdirs(t, "dangling/x", NULL), CDD_E_TARGET);
        char np[2048];
        snprintf(np, sizeof np, "%s/nowhere", root);
        CHECK(access(np, F_OK) != 0);
        CHECK(sentinel_intact());
    }
    cdd_dir_fast_path(1);
    /* Removing a link removes the link, not what it leads to. */
    CHECK_INT(cdd_tree_remove_tree(t, "outlink"), 0);
    CHECK(sentinel_intact());
    link_(outside, "outlink");
    cdd_tree_close(t);
}

static void test_root_and_state(void)
{
    struct cdd_tree *t = NULL;
    char p[2048], q[2048];
    /* The root given as a link is resolved once, at open. */
    CHECK_INT(cdd_tree_open(rootlink, &t), 0);
    CHECK_STR(cdd_tree_root(t), root);
    struct cdd_stat st;
    CHECK_INT(cdd_tree_lstat(t, "lib64/libcudart.so", &st), 0);
    CHECK_INT(st.type, CDD_FT_FILE);
    /* An absolute link through the root's link name leads elsewhere as far
     * as the resolved root is concerned: refused, not guessed at. */
    cdd_tree_close(t);

    /* A symlinked .cudnn-deploy, lock or journal is tampered state. */
    snprintf(p, sizeof p, "%s/" CDD_STATE_DIR, root);
    snprintf(q, sizeof q, "%s/state-elsewhere", scratch);
    CHECK(rename(p, q) == 0);
    CHECK(symlink(q, p) == 0);
    CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
    CHECK(strstr(cdd_last_error()->path, CDD_STATE_DIR) != NULL);
    CHECK(unlink(p) == 0);
    CHECK(rename(q, p) == 0);

    /* The lock file as a link: refused when the tree is opened; planted
     * after the open, refused by the lock. */
    snprintf(p, sizeof p, "%s/" CDD_LOCK_FILE, root);
    snprintf(q, sizeof q, "%s/sentinel", outside);
    CHECK(symlink(q, p) == 0);
    CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
    CHECK(t == NULL);
    CHECK(strstr(cdd_last_error()->path, CDD_LOCK_FILE) != NULL);
    CHECK(strstr(cdd_last_error()->msg, "is a link (to ") != NULL);
    CHECK(unlink(p) == 0);
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK(symlink(q, p) == 0);
    struct cdd_recovery rec;
    int locked = 1;
    CHECK_INT(cdd_txn_lock(t, 0, 1, &locked, &rec), CDD_E_STATE);
    CHECK_INT(locked, 0);
    cdd_tree_close(t);
    CHECK(unlink(p) == 0);

    /* The journal, receipt, manifest copy and log as links, or folders:
     * each refused at the open, naming it. */
    static const char *const state_files[] = {
        CDD_JOURNAL_FILE, CDD_RECEIPT_FILE, CDD_MANIFEST_COPY, CDD_LOG_FILE};
    for (size_t i = 0; i < sizeof state_files / sizeof state_files[0]; i++) {
        char saved[2048];
        snprintf(p, sizeof p, "%s/%s", root, state_files[i]);
        snprintf(saved, sizeof saved, "%s/saved-state-file", scratch);
        int had = rename(p, saved) == 0;
        CHECK(symlink(q, p) == 0);
        t = NULL;
        CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
        CHECK(t == NULL);
        CHECK(strstr(cdd_last_error()->path, state_files[i]) != NULL);
        CHECK(unlink(p) == 0);
        CHECK(mkdir(p, 0755) == 0);
        CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
        CHECK(strstr(cdd_last_error()->msg, "a folder") != NULL);
        CHECK(rmdir(p) == 0);
        if (had)
            CHECK(rename(saved, p) == 0);
    }
    CHECK(sentinel_intact());

    /* Without a journal, the linked backup folder of the fixture is
     * refused at the open, naming it (status and verify never read it);
     * with one (above), recovery is left to name the record. */
    char bk[2048];
    snprintf(p, sizeof p, "%s/" CDD_JOURNAL_FILE, root);
    snprintf(bk, sizeof bk, "%s/" CDD_BACKUP_DIR, root);
    (void)unlink(p); /* the earlier tests' journal, if any */
    t = NULL;
    CHECK_INT(cdd_tree_open(root, &t), CDD_E_STATE);
    CHECK(t == NULL);
    CHECK(strstr(cdd_last_error()->path, CDD_BACKUP_DIR) != NULL);
    CHECK(strstr(cdd_last_error()->msg, "not a folder") != NULL);
    CHECK(unlink(bk) == 0);

    /* The journal as a link planted after the open: the recovery refuses
     * it, exit 3. */
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK(symlink(q, p) == 0);
    CHECK_INT(cdd_txn_lock(t, 0, 1, &locked, &rec), CDD_E_STATE);
    CHECK(strstr(cdd_last_error()->path, CDD_JOURNAL_FILE) != NULL);
    cdd_recovery_clear(&rec);
    cdd_tree_close(t);
    /* The tree's own lock never looks at the journal (recovery is the
     * transaction layer's, txn.h): it locks; cdd_txn_lock on a lock
     * already held recovers nothing a second time. */
    CHECK(unlink(p) == 0);
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK(symlink(q, p) == 0);
    CHECK_INT(cdd_tree_lock(t, 0, 1, &locked), 0);
    CHECK_INT(locked, 1);
    CHECK(cdd_tree_locked(t));
    locked = 0;
    CHECK_INT(cdd_txn_lock(t, 0, 1, &locked, &rec), 0);
    CHECK_INT(locked, 1);
    CHECK_INT(rec.found, 0);
    cdd_tree_unlock(t);
    CHECK_INT(cdd_txn_lock(t, 0, 1, &locked, &rec), CDD_E_STATE);
    cdd_recovery_clear(&rec);
    cdd_tree_close(t);
    CHECK(unlink(p) == 0);
    CHECK(sentinel_intact());

    /* A tree without state: a read-only open creates nothing; the lock of
     * a command that does not create state takes nothing. */
    snprintf(p, sizeof p, "%s/bare", scratch);
    sh("mkdir -p '%s'%s", p, "");
    CHECK_INT(cdd_tree_open(p, &t), 0);
    CHECK(!cdd_tree_has_state(t));
    CHECK_INT(cdd_txn_lock(t, 0, 0, &locked, &rec), 0);
    CHECK_INT(locked, 0);
    cdd_tree_close(t);
    snprintf(q, sizeof q, "%s/bare/" CDD_STATE_DIR, scratch);
    CHECK(access(q, F_OK) != 0);
}

/* Names and paths at their bounds, through the handle (issue 22): a
 * 255-byte name (the most a folder entry holds) is written, found, read
 * and removed in both walk modes; a 256-byte name and a tree path past
 * the platform's limit are refused with a message saying which bound,
 * never cut to another name. */
static void test_name_and_path_bounds(void)
{
    struct cdd_tree *t = NULL;
    char name[CDD_NAME_MAX + 2];
    char rel[CDD_NAME_MAX + 16];
    CHECK_INT(cdd_tree_open(root, &t), 0);
    for (int pass = 0; pass < 2; pass++) {
        cdd_dir_fast_path(pass == 0);
        memset(name, 'n', CDD_NAME_MAX);
        name[CDD_NAME_MAX] = '\0';
        snprintf(rel, sizeof rel, "real/%s", name);
        CHECK_INT(fx_tree_put(t, rel, "edge"), 0);
        struct cdd_stat st;
        CHECK_INT(cdd_tree_lstat(t, rel, &st), 0);
        CHECK(st.type == CDD_FT_FILE);
        char *text = NULL;
        size_t len = 0;
        CHECK_INT(cdd_tree_read_all(t, rel, 64, &text, &len), 0);
        CHECK(len == 4 && memcmp(text, "edge", 4) == 0);
        free(text);
        CHECK_INT(cdd_tree_unlink(t, rel), 0);

        name[CDD_NAME_MAX] = 'n';
        name[CDD_NAME_MAX + 1] = '\0';
        snprintf(rel, sizeof rel, "real/%s", name);
        int r = fx_tree_put(t, rel, "x");
        CHECK_MSG(r == CDD_E_TOOLONG, "a 256-byte name: %s %s",
                  cdd_err_name(r), cdd_last_error()->msg);
        CHECK_MSG(strstr(cdd_last_error()->msg, "256 bytes") != NULL &&
                      strstr(cdd_last_error()->msg, "255") != NULL,
                  "256-byte name: %s", cdd_last_error()->msg);
        cdd_clear_error();
        CHECK_INT(cdd_tree_lstat(t, "real", &st), 0);
    }
    /* A tree path longer than the platform's path limit. */
    struct cdd_sb deep;
    cdd_sb_init(&deep, 2 * (size_t)CDD_PATH_MAX_POSIX + 64, "path");
    while (cdd_sb_len(&deep) <= (size_t)CDD_PATH_MAX_POSIX + 1)
        CHECK_INT(cdd_sb_adds(&deep, "real/dddddddddddddddddddd/"), 0);
    CHECK_INT(cdd_sb_adds(&deep, "f"), 0);
    int r = fx_tree_put(t, cdd_sb_str(&deep), "x");
    CHECK_MSG(r == CDD_E_TOOLONG, "a path past the limit: %s %s",
              cdd_err_name(r), cdd_last_error()->msg);
    CHECK_MSG(strstr(cdd_last_error()->msg, "longer than the") != NULL,
              "the refusal names the length: %s", cdd_last_error()->msg);
    cdd_clear_error();
    cdd_sb_free(&deep);
    cdd_dir_fast_path(1);
    cdd_tree_close(t);
}

static void test_find_case(void)
{
    struct cdd_tree *t = NULL;
    char *found = NULL;
    dir("bin");
    put("bin/CUDNN64_8.DLL", "old");
    put("bin/other.dll", "o");
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK_INT(cdd_tree_find_case(t, "bin", "cudnn64_8.dll", &found), 0);
    CHECK_STR(found, "CUDNN64_8.DLL");
    free(found);
    CHECK_INT(cdd_tree_find_case(t, "bin", "other.dll", &found), 0);
    CHECK_STR(found, "other.dll");
    free(found);
    CHECK_INT(cdd_tree_find_case(t, "bin", "absent.dll", &found), 0);
    CHECK(found == NULL);
    /* Full Unicode simple case folding (casefold.c), not ASCII only. */
    put("bin/\xc3\x84RGER\xd0\x96.DLL", "u"); /* ÄRGERЖ.DLL */
    CHECK_INT(cdd_tree_find_case(t, "bin", "\xc3\xa4rger\xd0\xb6.dll", &found),
              0);
    CHECK_STR(found, "\xc3\x84RGER\xd0\x96.DLL");
    free(found);
    CHECK_INT(cdd_tree_find_case(t, "nodir", "x", &found), 0);
    CHECK(found == NULL);
    CHECK_INT(cdd_tree_find_case(t, "outlink", "sentinel", &found),
              CDD_E_UNSAFE);
    cdd_tree_close(t);
}

static void test_cleanup(void)
{
    if (t_failed_checks == 0)
        sh("rm -rf '%s'%s", scratch, "");
}

static void test_setup(void)
{
    build();
}

/* The lock is opened inside the state folder the tree holds, by name, never
 * by path: a .cudnn-deploy swapped for a link to outside after the open
 * creates no lock file outside (open("<root>/.cudnn-deploy/lock") would
 * follow the new link), and the lock taken in the folder that moved away is
 * not used: tampered state. */
static void test_lock_through_swapped_state(void)
{
    struct cdd_tree *t = NULL;
    struct stat sb;
    char p[2048], moved[2048], lock[2100], out_lock[2048];
    snprintf(p, sizeof p, "%s/" CDD_STATE_DIR, root);
    snprintf(moved, sizeof moved, "%s/real/moved-state", root);
    snprintf(lock, sizeof lock, "%s/" CDD_LOCK_FILE, root);
    snprintf(out_lock, sizeof out_lock, "%s/lock", outside);
    (void)unlink(lock); /* so that the lock must create its file */
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK(rename(p, moved) == 0);
    CHECK(symlink(outside, p) == 0);
    CHECK_INT(cdd_tree_lock_state(t, 0, 0, NULL), CDD_E_STATE);
    CHECK(strstr(cdd_last_error()->path, CDD_STATE_DIR) != NULL);
    CHECK(!cdd_tree_locked(t));
    CHECK(lstat(out_lock, &sb) != 0 && errno == ENOENT);
    CHECK(sentinel_intact());
    /* The file was made in the folder held, wherever that is now. */
    snprintf(lock, sizeof lock, "%s/lock", moved);
    CHECK(lstat(lock, &sb) == 0 && S_ISREG(sb.st_mode));
    cdd_tree_close(t);
    CHECK(unlink(p) == 0);
    CHECK(rename(moved, p) == 0);

    /* Not swapped: the lock is taken, in the tree's own state folder. */
    CHECK_INT(cdd_tree_open(root, &t), 0);
    CHECK_INT(cdd_tree_lock_state(t, 0, 0, NULL), 0);
    CHECK(cdd_tree_locked(t));
    cdd_tree_close(t);
    CHECK(lstat(out_lock, &sb) != 0 && errno == ENOENT);
}

/* The state folder opened, then removed by an emptying uninstall before the
 * lock is taken (a removed folder takes no new lock file): the lock starts
 * again from the names. A command that does not create state then takes
 * nothing (the tree has none), one that does makes a fresh folder and locks
 * it. The clean-clone run's racing installs and uninstalls once failed here
 * with "cannot open lock file" (exit 4). */
static void test_lock_in_removed_state(void)
{
    struct cdd_tree *t = NULL;
    struct stat sb;
    int locked = -1;
    char tree[1100], st[1200], lock[1300];
    snprintf(tree, sizeof tree, "%s/emptied", scratch);
    snprintf(st, sizeof st, "%s/" CDD_STATE_DIR, tree);
    snprintf(lock, sizeof lock, "%s/" CDD_LOCK_FILE, tree);
    sh("rm -rf '%s'%s", tree, "");
    sh("mkdir -p '%s'%s", st, "");
    CHECK_INT(cdd_tree_open(tree, &t), 0);
    CHECK(cdd_tree_has_state(t));
    CHECK(rmdir(st) == 0);
    CHECK_INT(cdd_tree_lock(t, 0, 0, &locked), 0);
    CHECK_INT(locked, 0);
    CHECK(!cdd_tree_locked(t));
    CHECK(lstat(st, &sb) != 0 && errno == ENOENT);
    cdd_tree_close(t);

    sh("mkdir -p '%s'%s", st, "");
    CHECK_INT(cdd_tree_open(tree, &t), 0);
    CHECK(rmdir(st) == 0);
    locked = -1;
    CHECK_INT(cdd_tree_lock(t, 0, 1, &locked), 0);
    CHECK_INT(locked, 1);
    CHECK(cdd_tree_locked(t));
    CHECK(lstat(lock, &sb) == 0 && S_ISREG(sb.st_mode));
    cdd_tree_close(t);
}

TEST_MAIN(TEST(test_setup), TEST(test_lstat_positions), TEST(test_canon),
          TEST(test_writes), TEST(test_root_and_state),
          TEST(test_lock_through_swapped_state),
          TEST(test_lock_in_removed_state), TEST(test_name_and_path_bounds),
          TEST(test_find_case),
          TEST(test_cleanup))
