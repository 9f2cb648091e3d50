/* Unit tests of the transaction engine (txn.c): install-like and
 * uninstall-like commits on trees built at test time (files, symlink chains,
 * nested and symlinked folders), checked against trees built independently
 * by hand; a fault loop that fails every filesystem operation in turn and a
 * kill loop that SIGKILLs the process at every operation (and again during
 * the recovery), each asserting the tree is exactly "before" or exactly
 * "after" with nothing left over; the lock between processes; recover's
 * handling of stray and damaged state.
 *
 * Linux-only test code: it builds and inspects trees with POSIX calls and
 * uses fork() for the kill loop and the lock test. */
#include <dirent.h>
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
#include "cdd/state.h"
#include "cdd/tree.h"
#include "txn.h"
#include "cdd/sys.h"
#include "test.h"

/* ---- scratch trees ---------------------------------------------------- */

static char scratch[1024];

static const char *scratch_dir(void)
{
    if (!scratch[0]) {
        const char *base = getenv("CDD_TEST_TMP");
        char cmd[1200];
        umask(022); /* folder modes are part of the snapshots */
        snprintf(scratch, sizeof scratch, "%s/txn-%ld",
                 base && *base ? base : "/tmp", (long)getpid());
        snprintf(cmd, sizeof cmd, "mkdir -p '%s'", scratch);
        if (system(cmd) != 0) {
            fprintf(stderr, "cannot create %s\n", scratch);
            exit(2);
        }
    }
    return scratch;
}

/* root/rel into buf; a path that does not fit stops the test (a cut path
 * would name another file). */
static void path_in(char *buf, size_t len, const char *root, const char *rel)
{
    int n = snprintf(buf, len, "%s/%s", root, rel);
    if (n < 0 || (size_t)n >= len) {
        fprintf(stderr, "path too long: %s/%s\n", root, rel);
        exit(2);
    }
}

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char sub[4096];
            path_in(sub, sizeof sub, path, de->d_name);
            rm_rf(sub);
        }
        if (d)
            closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

static void mkdir_p(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *s = tmp + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(tmp, 0755);
            *s = '/';
        }
    }
    mkdir(tmp, 0755);
}

static void write_raw(const char *path, const char *data, int mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data)) {
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fchmod(fd, (mode_t)mode);
    close(fd);
}

/* An entry of a tree built by hand: 'd' folder, 'f' file, 'l' symlink. */
struct bitem {
    const char *path;
    char kind;
    const char *data; /* file bytes or link target */
    int mode;
};

static void build_tree(const char *root, const struct bitem *it, size_t n)
{
    char p[4096], parent[4096];
    mkdir_p(root);
    for (size_t i = 0; i < n; i++) {
        path_in(p, sizeof p, root, it[i].path);
        snprintf(parent, sizeof parent, "%s", p);
        *strrchr(parent, '/') = '\0';
        mkdir_p(parent);
        if (it[i].kind == 'd') {
            mkdir(p, 0755);
            chmod(p, (mode_t)it[i].mode);
        } else if (it[i].kind == 'f') {
            write_raw(p, it[i].data, it[i].mode);
        } else if (symlink(it[i].data, p) != 0) {
            fprintf(stderr, "cannot link %s: %s\n", p, strerror(errno));
            exit(2);
        }
    }
}

/* Copy a tree exactly (modes, symlinks), without fsync: loops start each
 * run from a copy of a prepared tree rather than preparing it again. */
static void copy_tree(const char *src, const char *dst)
{
    struct stat sb;
    if (lstat(src, &sb) != 0)
        return;
    if (S_ISLNK(sb.st_mode)) {
        char target[4096];
        ssize_t k = readlink(src, target, sizeof target - 1);
        target[k > 0 ? k : 0] = '\0';
        if (symlink(target, dst) != 0)
            exit(2);
    } else if (S_ISDIR(sb.st_mode)) {
        mkdir(dst, 0700);
        DIR *d = opendir(src);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char a[4096], b[4096];
            path_in(a, sizeof a, src, de->d_name);
            path_in(b, sizeof b, dst, de->d_name);
            copy_tree(a, b);
        }
        if (d)
            closedir(d);
        chmod(dst, sb.st_mode & 07777);
    } else {
        char buf[65536];
        int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT, 0600);
        ssize_t k;
        while (in >= 0 && out >= 0 && (k = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)k) != k)
                exit(2);
        if (in < 0 || out < 0)
            exit(2);
        fchmod(out, sb.st_mode & 07777);
        close(in);
        close(out);
    }
}

/* ---- snapshots ---------------------------------------------------------- */

struct lines {
    char **v;
    size_t n, cap;
};

static void lines_add(struct lines *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every entry under root/rel: path, type, mode and content (file bytes,
 * escaped, or link target). The lock's content (a pid) is left out; skip
 * names a subtree to leave out entirely. */
static void snap_walk(const char *root, const char *rel, const char *skip,
                      struct lines *out)
{
    char dir[4096];
    if (*rel)
        path_in(dir, sizeof dir, root, rel);
    else
        snprintf(dir, sizeof dir, "%s", root);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char crel[4096], abs[4096];
        if (*rel)
            path_in(crel, sizeof crel, rel, de->d_name);
        else
            snprintf(crel, sizeof crel, "%s", de->d_name);
        if (skip && !strcmp(crel, skip))
            continue;
        path_in(abs, sizeof abs, root, crel);
        struct stat sb;
        if (lstat(abs, &sb) != 0)
            continue;
        char content[8192] = "";
        size_t cl = 0;
        char type = '?';
        if (S_ISDIR(sb.st_mode)) {
            type = 'd';
        } else if (S_ISLNK(sb.st_mode)) {
            type = 'l';
            ssize_t k = readlink(abs, content, sizeof content - 1);
            content[k > 0 ? k : 0] = '\0';
        } else if (S_ISREG(sb.st_mode)) {
            type = 'f';
            if (strcmp(crel, CDD_LOCK_FILE) != 0) {
                FILE *f = fopen(abs, "rb");
                int c;
                while (f && (c = fgetc(f)) != EOF && cl + 5 < sizeof content) {
                    if (c >= 0x20 && c < 0x7f && c != '\\')
                        content[cl++] = (char)c;
                    else
                        cl += (size_t)snprintf(content + cl, 5, "\\x%02x", c);
                }
                content[cl] = '\0';
                if (f)
                    fclose(f);
            }
        }
        size_t n = strlen(crel) + strlen(content) + 32;
        char *line = malloc(n);
        snprintf(line, n, "%s %c %04o %s", crel, type,
                 (unsigned)(sb.st_mode & 07777), type == 'l' ? content :
                 type == 'f' ? content : "");
        lines_add(out, line);
        if (type == 'd')
            snap_walk(root, crel, skip, out);
    }
    if (d)
        closedir(d);
}

static char *snapshot(const char *root, const char *skip)
{
    struct lines l = {0};
    snap_walk(root, "", skip, &l);
    qsort(l.v, l.n, sizeof *l.v, cmp_str);
    size_t total = 1;
    for (size_t i = 0; i < l.n; i++)
        total += strlen(l.v[i]) + 1;
    char *s = malloc(total), *p = s;
    *p = '\0';
    for (size_t i = 0; i < l.n; i++) {
        p += sprintf(p, "%s\n", l.v[i]);
        free(l.v[i]);
    }
    free(l.v);
    return s;
}

/* Print the first line where two snapshots differ. */
static void show_diff(const char *what, const char *got, const char *want)
{
    const char *g = got, *w = want;
    while (*g && *w) {
        const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
        if (ge - g != we - w || memcmp(g, w, (size_t)(ge - g)) != 0)
            break;
        g = ge + 1;
        w = we + 1;
    }
    fprintf(stderr, "    %s: first difference:\n      got:  %.*s\n      want: %.*s\n",
            what, (int)(strchr(g, '\n') ? strchr(g, '\n') - g : (long)strlen(g)),
            g, (int)(strchr(w, '\n') ? strchr(w, '\n') - w : (long)strlen(w)), w);
}

/* A state of the tree: everything but .cudnn-deploy/backup, plus the backup
 * folder's content (NULL: backup/ must not exist; else backup/ holds exactly
 * one transaction folder with this content). Transaction ids contain the
 * time, so the backup folder's name is not compared. */
struct state_exp {
    char *nobk;
    char *bk;
};

static int backup_matches(const char *root, const char *bk, int verbose)
{
    char dir[4096], one[4096] = "";
    int n = 0;
    path_in(dir, sizeof dir, root, CDD_BACKUP_DIR);
    DIR *d = opendir(dir);
    if (!d)
        return bk == NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
        path_in(one, sizeof one, dir, de->d_name);
    }
    closedir(d);
    if (!bk || n != 1) {
        if (verbose)
            fprintf(stderr, "    backup/ holds %d folders, want %d\n", n,
                    bk ? 1 : -1);
        return 0;
    }
    char *s = snapshot(one, NULL);
    int ok = strcmp(s, bk) == 0;
    if (!ok && verbose)
        show_diff("backup", s, bk);
    free(s);
    return ok;
}

static int state_matches(const char *root, const struct state_exp *e,
                         int verbose)
{
    char *s = snapshot(root, CDD_BACKUP_DIR);
    int ok = strcmp(s, e->nobk) == 0;
    if (!ok && verbose)
        show_diff("tree", s, e->nobk);
    free(s);
    return ok && backup_matches(root, e->bk, verbose);
}

/* ---- the scenario ------------------------------------------------------- */

/* A CUDA-like tree with a symlink chain, a symlinked library folder (as
 * real trees have lib64 -> targets/...), an empty folder with an unusual
 * mode, and state from an earlier run (lock, log). */
static const struct bitem before_items[] = {
    {"bin", 'd', NULL, 0755},
    {"bin/old.dll", 'f', "old dll v1\n", 0755},
    {"bin/obsolete.dll", 'f', "obsolete\x01\xff", 0755},
    {"include", 'd', NULL, 0755},
    {"include/cudnn.h", 'f', "/* old header */\n", 0644},
    {"lib64", 'd', NULL, 0755},
    {"lib64/libcudnn.so.8.0.0", 'f', "old so", 0755},
    {"lib64/libcudnn.so.8", 'l', "libcudnn.so.8.0.0", 0},
    {"lib64/libcudnn.so", 'l', "libcudnn.so.8", 0},
    {"keep", 'd', NULL, 0755},
    {"keep/untouched.txt", 'f', "keep me", 0600},
    {"emptydir", 'd', NULL, 0700},
    {"targets/x86_64-linux/lib/libz.so", 'f', "z", 0644},
    {"lib", 'l', "targets/x86_64-linux/lib", 0},
    {CDD_STATE_DIR, 'd', NULL, 0755},
    {CDD_LOCK_FILE, 'f', "", 0644},
    {CDD_LOG_FILE, 'f', "{\"op\":\"earlier\"}\n", 0644},
    {CDD_RECEIPT_FILE, 'f', "{\"receipt\":0}\n", 0644},
};

/* What the install stages and puts. */
struct sitem {
    const char *dest;
    char kind; /* 'f' file, 'l' symlink */
    const char *data;
    int exec;
};

static const struct sitem install_items[] = {
    {"include/cudnn.h", 'f', "/* cudnn 8.5 */\n", 0},
    {"include/cudnn_version.h", 'f', "#define CUDNN_MAJOR 8\n", 0},
    {"bin/old.dll", 'f', "new dll\n", 1},
    {"lib64/libcudnn.so.8.5.0", 'f', "new so\x00\x01", 1},
    {"lib64/libcudnn.so.8", 'l', "libcudnn.so.8.5.0", 0},
    {"lib64/libcudnn.so", 'l', "libcudnn.so.8", 0},
    {"lib/extra/cudnn.lib", 'f', "lib through a symlinked folder", 0},
    {"new/deep/a/b/file.txt", 'f', "deep", 0},
    {CDD_RECEIPT_FILE, 'f', "{\"receipt\":1}\n", 0},
    {CDD_MANIFEST_COPY, 'f', "{\"manifest\":1}\n", 0},
};
static const char *const install_dels[] = {"bin/obsolete.dll"};

/* What the install's backup folder must hold. */
static const struct bitem backup_items[] = {
    {"bin", 'd', NULL, 0755},
    {"bin/old.dll", 'f', "old dll v1\n", 0755},
    {"bin/obsolete.dll", 'f', "obsolete\x01\xff", 0755},
    {"include", 'd', NULL, 0755},
    {"include/cudnn.h", 'f', "/* old header */\n", 0644},
    {"lib64", 'd', NULL, 0755},
    {"lib64/libcudnn.so.8", 'l', "libcudnn.so.8.0.0", 0},
    {"lib64/libcudnn.so", 'l', "libcudnn.so.8", 0},
    {CDD_STATE_DIR, 'd', NULL, 0755},
    {CDD_RECEIPT_FILE, 'f', "{\"receipt\":0}\n", 0644},
};

/* The uninstall: restore what the install replaced or removed, delete what
 * it added, remove the folders it created (given outermost first on
 * purpose: the engine sorts them). */
static const char *const uninstall_restores[] = {
    "include/cudnn.h", "bin/old.dll", "lib64/libcudnn.so.8",
    "lib64/libcudnn.so", "bin/obsolete.dll", CDD_RECEIPT_FILE,
};
static const char *const uninstall_dels[] = {
    "include/cudnn_version.h", "lib64/libcudnn.so.8.5.0",
    "lib/extra/cudnn.lib", "new/deep/a/b/file.txt", CDD_MANIFEST_COPY,
};
static const char *const uninstall_rmdirs[] = {
    "new", "new/deep", "new/deep/a", "new/deep/a/b", "lib/extra",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct spec {
    const char *kind;
    const struct sitem *stage;
    size_t nstage;
    const char *const *dels;
    size_t ndels;
    const char *const *restores; /* from backup/<from_id>/<p> to <p> */
    size_t nrestores;
    const char *const *rmdirs;
    size_t nrmdirs;
    int purge;
};

static const struct spec install_spec = {
    "install", install_items, N(install_items), install_dels, N(install_dels),
    NULL, 0, NULL, 0, 0,
};
static const struct spec uninstall_spec = {
    "uninstall", NULL, 0, uninstall_dels, N(uninstall_dels),
    uninstall_restores, N(uninstall_restores), uninstall_rmdirs,
    N(uninstall_rmdirs), 1,
};

/* The tree at root with its state folder and lock (created when missing),
 * as the commands take it but without the recovery (the tests drive that):
 * what cdd_state_lock was before the tree handle. */
static int state_lock(const char *root, double timeout, int *created,
                      struct cdd_tree **out)
{
    struct cdd_tree *t = NULL;
    *out = NULL;
    int r = cdd_tree_open(root, &t);
    if (!r)
        r = cdd_tree_lock_state(t, timeout, 1, created);
    if (r)
        cdd_tree_close(t);
    else
        *out = t;
    return r;
}

/* Write one staged file the way install does (through the tree, so the
 * fault injector counts these operations too). */
static int stage_item(struct cdd_txn *t, const struct sitem *it)
{
    char rel[2048];
    struct cdd_tree *tree = cdd_txn_tree(t);
    snprintf(rel, sizeof rel, "%s/%s", cdd_txn_stage_rel(t), it->dest);
    char *dir = strdup(rel);
    *strrchr(dir, '/') = '\0';
    struct cdd_file *f = NULL;
    int r = cdd_tree_mkdirs(tree, dir, NULL);
    if (!r && it->kind == 'l') {
        r = cdd_tree_symlink(tree, it->data, rel);
    } else if (!r) {
        size_t len = strlen(it->data);
        if (it->data == install_items[3].data)
            len = 8; /* carries a NUL byte */
        r = cdd_tree_create(tree, rel, it->exec, &f);
        if (!r)
            r = cdd_file_write(f, it->data, len);
        if (!r)
            r = cdd_file_sync(f);
        if (!r) {
            r = cdd_file_close(f);
            f = NULL;
        }
        cdd_file_abort(f);
    }
    if (!r)
        r = cdd_txn_put(t, rel, it->dest);
    free(dir);
    return r;
}

/* One whole run as a command would do it: lock, recover, begin, stage,
 * queue, commit (or abort on a failure before commit), unlock. */
static int run_txn(const char *root, const struct spec *sp, const char *from_id,
                   char **id_out)
{
    struct cdd_tree *lock = NULL;
    struct cdd_txn *t = NULL;
    int found = 0, rb = 0, created = 0;
    int r = state_lock(root, 0, &created, &lock);
    if (!r)
        r = cdd_txn_recover(lock, &found, &rb, NULL);
    if (!r)
        r = cdd_txn_begin(lock, sp->kind, &t);
    if (!r && id_out)
        *id_out = strdup(cdd_txn_id(t));
    for (size_t i = 0; !r && i < sp->nstage; i++)
        r = stage_item(t, &sp->stage[i]);
    for (size_t i = 0; !r && i < sp->nrestores; i++) {
        char src[2048];
        snprintf(src, sizeof src, "%s/%s/%s", CDD_BACKUP_DIR, from_id,
                 sp->restores[i]);
        r = cdd_txn_put(t, src, sp->restores[i]);
    }
    for (size_t i = 0; !r && i < sp->ndels; i++)
        r = cdd_txn_del(t, sp->dels[i]);
    for (size_t i = 0; !r && i < sp->nrmdirs; i++)
        r = cdd_txn_rmdir(t, sp->rmdirs[i]);
    if (t) {
        if (r)
            cdd_txn_abort(t);
        else
            r = cdd_txn_commit(t, sp->purge);
    }
    cdd_tree_close(lock);
    return r;
}

/* Build the expected "after install" tree by hand, independently of the
 * engine, and the expected backup. */
static struct state_exp S0, S1; /* before install, after install */

static void expect_states(void)
{
    char dir[2048], p[4096];
    if (S0.nobk)
        return;
    snprintf(dir, sizeof dir, "%s/expect-before", scratch_dir());
    rm_rf(dir);
    build_tree(dir, before_items, N(before_items));
    S0.nobk = snapshot(dir, CDD_BACKUP_DIR);
    S0.bk = NULL;

    snprintf(dir, sizeof dir, "%s/expect-after", scratch_dir());
    rm_rf(dir);
    build_tree(dir, before_items, N(before_items));
    for (size_t i = 0; i < N(install_items); i++) {
        const struct sitem *it = &install_items[i];
        path_in(p, sizeof p, dir, it->dest);
        unlink(p);
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", p);
        *strrchr(parent, '/') = '\0';
        mkdir_p(parent);
        if (it->kind == 'l') {
            if (symlink(it->data, p) != 0)
                exit(2);
        } else {
            int fd = open(p, O_WRONLY | O_CREAT, it->exec ? 0755 : 0644);
            size_t len = i == 3 ? 8 : strlen(it->data);
            if (fd < 0 || write(fd, it->data, len) != (ssize_t)len)
                exit(2);
            close(fd);
        }
    }
    path_in(p, sizeof p, dir, "bin/obsolete.dll");
    unlink(p);
    S1.nobk = snapshot(dir, CDD_BACKUP_DIR);

    snprintf(dir, sizeof dir, "%s/expect-backup", scratch_dir());
    rm_rf(dir);
    build_tree(dir, backup_items, N(backup_items));
    S1.bk = snapshot(dir, NULL);
}

static void fresh_tree(char *root, size_t len, const char *name)
{
    snprintf(root, len, "%s/%s", scratch_dir(), name);
    rm_rf(root);
    build_tree(root, before_items, N(before_items));
}

/* The id of the install whose backup the uninstall restores from. */
static char *only_backup_id(const char *root)
{
    char dir[4096];
    path_in(dir, sizeof dir, root, CDD_BACKUP_DIR);
    DIR *d = opendir(dir);
    struct dirent *de;
    char *id = NULL;
    while (d && (de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            id = strdup(de->d_name);
    if (d)
        closedir(d);
    return id;
}

static int recover_now(const char *root, int *found, int *rb)
{
    struct cdd_tree *lock = NULL;
    int f = 0, b = 0;
    int r = state_lock(root, 0, NULL, &lock);
    if (!r)
        r = cdd_txn_recover(lock, &f, &b, NULL);
    cdd_tree_close(lock);
    if (found)
        *found = f;
    if (rb)
        *rb = b;
    return r;
}

/* ---- plain commits ------------------------------------------------------ */

static void test_install_commit(void)
{
    char root[2048];
    char *id = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "install");
    CHECK(state_matches(root, &S0, 1));
    int r = run_txn(root, &install_spec, NULL, &id);
    CHECK_MSG(r == 0, "%s", cdd_last_error()->msg);
    CHECK(state_matches(root, &S1, 1));
    char *bk = only_backup_id(root);
    CHECK_STR(bk, id);
    /* The symlinked folder was written through, inside the tree. */
    char p[4096];
    path_in(p, sizeof p, root, "targets/x86_64-linux/lib/extra/cudnn.lib");
    CHECK(access(p, F_OK) == 0);
    int found = 1;
    CHECK_INT(recover_now(root, &found, NULL), 0);
    CHECK_INT(found, 0);
    free(bk);
    free(id);
}

static void test_uninstall_commit(void)
{
    char root[2048];
    char *id = NULL, *id2 = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "uninstall");
    CHECK_INT(run_txn(root, &install_spec, NULL, &id), 0);
    CHECK(state_matches(root, &S1, 0));
    int r = run_txn(root, &uninstall_spec, id, &id2);
    CHECK_MSG(r == 0, "%s", cdd_last_error()->msg);
    /* Same process, likely the same second: the ids must still differ. */
    CHECK(id && id2 && strcmp(id, id2) != 0);
    /* Exactly as before the install: backups restored and pruned, the
     * uninstall's own backup purged, created folders gone. */
    char *s = snapshot(root, NULL);
    CHECK(strcmp(s, S0.nobk) == 0);
    if (strcmp(s, S0.nobk) != 0)
        show_diff("tree", s, S0.nobk);
    free(s);
    free(id);
    free(id2);
}

static void test_empty_and_missing(void)
{
    char root[2048];
    struct cdd_tree *lock = NULL;
    struct cdd_txn *t = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "empty");
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    /* Deleting files that are gone and removing missing folders changes
     * nothing and writes no journal. */
    CHECK_INT(cdd_txn_begin(lock, "uninstall", &t), 0);
    CHECK_INT(cdd_txn_del(t, "no/such/file"), 0);
    CHECK_INT(cdd_txn_del(t, "bin/nothing.dll"), 0);
    CHECK_INT(cdd_txn_rmdir(t, "nodir"), 0);
    CHECK_INT(cdd_txn_rmdir(t, "keep"), 0); /* not empty: stays */
    CHECK_INT(cdd_txn_count(t), 4);
    CHECK_INT(cdd_txn_commit(t, 1), 0);
    CHECK(state_matches(root, &S0, 1));
    /* An empty folder is removed, and its mode comes back on roll-back. */
    CHECK_INT(cdd_txn_begin(lock, "uninstall", &t), 0);
    CHECK_INT(cdd_txn_rmdir(t, "emptydir"), 0);
    CHECK_INT(cdd_txn_commit(t, 1), 0);
    char p[4096];
    path_in(p, sizeof p, root, "emptydir");
    CHECK(access(p, F_OK) != 0);
    cdd_tree_close(lock);
}

/* ---- refusals ----------------------------------------------------------- */

static void test_validation(void)
{
    char root[2048];
    struct cdd_tree *lock = NULL;
    struct cdd_txn *t = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "validate");
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_begin(lock, "install", &t), 0);
    char src[512], own_bk[512];
    snprintf(src, sizeof src, "%s/x", cdd_txn_stage_rel(t));
    snprintf(own_bk, sizeof own_bk, "%s/%s/x", CDD_BACKUP_DIR, cdd_txn_id(t));
    static const char *const bad_dest[] = {
        "", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "a/",
        "a\tb", "a\nb", "a\\b", "c:x", ".cudnn-deploy/journal",
        ".cudnn-deploy/lock", ".CUDNN-DEPLOY/receipt.json", ".cudnn-deploy",
        ".cudnn-deploy/backup/x",
    };
    for (size_t i = 0; i < N(bad_dest); i++) {
        CHECK_MSG(cdd_txn_put(t, src, bad_dest[i]) == CDD_E_UNSAFE, "put %s",
                  bad_dest[i]);
        CHECK_MSG(cdd_txn_del(t, bad_dest[i]) == CDD_E_UNSAFE, "del %s",
                  bad_dest[i]);
    }
    static const char *const bad_src[] = {
        "bin/old.dll", ".cudnn-deploy/lock", ".cudnn-deploy/stage-other/x",
        ".cudnn-deploy/backup", ".cudnn-deploy/backup/id", "../x",
    };
    for (size_t i = 0; i < N(bad_src); i++)
        CHECK_MSG(cdd_txn_put(t, bad_src[i], "x") == CDD_E_UNSAFE, "src %s",
                  bad_src[i]);
    CHECK_INT(cdd_txn_put(t, own_bk, "x"), CDD_E_UNSAFE);
    CHECK_INT(cdd_txn_rmdir(t, ".cudnn-deploy/backup"), CDD_E_UNSAFE);
    /* Each path once. */
    CHECK_INT(cdd_txn_put(t, src, "bin/new.dll"), 0);
    CHECK_INT(cdd_txn_put(t, src, "bin/other.dll"), CDD_E_UNSAFE);
    CHECK_INT(cdd_txn_del(t, "bin/new.dll"), CDD_E_UNSAFE);
    /* A refused call claims nothing. */
    char src2[512];
    snprintf(src2, sizeof src2, "%s/y", cdd_txn_stage_rel(t));
    CHECK_INT(cdd_txn_put(t, src2, "bin/other.dll"), 0);
    CHECK_INT(cdd_txn_put(t, ".cudnn-deploy/backup/old/y", CDD_RECEIPT_FILE), 0);
    CHECK_INT(cdd_txn_count(t), 3);
    cdd_txn_abort(t);
    cdd_tree_close(lock);
    CHECK(state_matches(root, &S0, 1));
}

/* Commit refuses before touching anything; the stage goes. */
static void refuse_case(const char *dest, int want, void (*prep)(const char *))
{
    char root[2048];
    struct cdd_tree *lock = NULL;
    struct cdd_txn *t = NULL;
    fresh_tree(root, sizeof root, "refuse");
    if (prep)
        prep(root);
    char *before = snapshot(root, NULL);
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_begin(lock, "install", &t), 0);
    struct sitem it = {dest, 'f', "data", 0};
    CHECK_INT(stage_item(t, &it), 0);
    int r = cdd_txn_commit(t, 0);
    CHECK_MSG(r == want, "%s: got %s (%s)", dest, cdd_err_name(r),
              cdd_last_error()->msg);
    cdd_tree_close(lock);
    char *after = snapshot(root, NULL);
    CHECK_MSG(strcmp(before, after) == 0, "%s: tree changed", dest);
    free(before);
    free(after);
}

static void prep_outlink(const char *root)
{
    char p[4096];
    path_in(p, sizeof p, root, "out");
    CHECK(symlink("/tmp", p) == 0);
    path_in(p, sizeof p, root, "up");
    CHECK(symlink("..", p) == 0);
}

static void test_refusals(void)
{
    expect_states();
    refuse_case("keep", CDD_E_TARGET, NULL);          /* a folder */
    refuse_case("emptydir", CDD_E_TARGET, NULL);      /* an empty one too */
    refuse_case("keep/untouched.txt/x", CDD_E_TARGET, NULL); /* file above */
    refuse_case("out/evil", CDD_E_UNSAFE, prep_outlink);
    refuse_case("up/evil", CDD_E_UNSAFE, prep_outlink);
    refuse_case("out/new/evil", CDD_E_UNSAFE, prep_outlink);

    /* Two names of one file (through the symlinked folder). */
    char root[2048];
    struct cdd_tree *lock = NULL;
    struct cdd_txn *t = NULL;
    fresh_tree(root, sizeof root, "refuse");
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_begin(lock, "install", &t), 0);
    struct sitem a = {"lib/libz.so", 'f', "a", 0};
    struct sitem b = {"targets/x86_64-linux/lib/libz.so", 'f', "b", 0};
    CHECK_INT(stage_item(t, &a), 0);
    CHECK_INT(stage_item(t, &b), 0);
    CHECK_INT(cdd_txn_commit(t, 0), CDD_E_TARGET);
    /* A file and a folder of one name. */
    CHECK_INT(cdd_txn_begin(lock, "install", &t), 0);
    struct sitem c = {"newthing", 'f', "a", 0};
    char src[4096];
    CHECK_INT(stage_item(t, &c), 0);
    snprintf(src, sizeof src, "%s/%s/inside", root, cdd_txn_stage_rel(t));
    write_raw(src, "b", 0644);
    snprintf(src, sizeof src, "%s/inside", cdd_txn_stage_rel(t));
    CHECK_INT(cdd_txn_put(t, src, "newthing/inside"), 0);
    CHECK_INT(cdd_txn_commit(t, 0), CDD_E_TARGET);
    cdd_tree_close(lock);
    CHECK(state_matches(root, &S0, 1));
}

static void test_cancel(void)
{
    char root[2048];
    expect_states();
    fresh_tree(root, sizeof root, "cancel");
    cdd_cancel_request();
    int r = run_txn(root, &install_spec, NULL, NULL);
    cdd_cancel_reset();
    CHECK_INT(r, CDD_E_INTERRUPTED);
    CHECK(state_matches(root, &S0, 1));
}

/* The tree a run of sp starts from: "before" for the install, a finished
 * install for the uninstall. Built once per loop; each run gets a copy. */
struct start {
    char tmpl[2048];
    char *from; /* the install's id, whose backup the uninstall restores */
};

static void start_init(struct start *st, const char *name,
                       const struct spec *sp)
{
    snprintf(st->tmpl, sizeof st->tmpl, "%s/%s-start", scratch_dir(), name);
    rm_rf(st->tmpl);
    build_tree(st->tmpl, before_items, N(before_items));
    st->from = NULL;
    if (sp == &uninstall_spec)
        CHECK_INT(run_txn(st->tmpl, &install_spec, NULL, &st->from), 0);
}

static void start_copy(const char *tmpl, char *root, size_t len,
                       const char *name)
{
    snprintf(root, len, "%s/%s", scratch_dir(), name);
    rm_rf(root);
    copy_tree(tmpl, root);
}

/* ---- fault loop --------------------------------------------------------- */

/* Fail the n-th filesystem operation of a whole run, for n = 1, 2, ...
 * until a run completes without reaching n. A failed run must leave the
 * tree exactly "before"; a run whose fault hit the clean-up after the
 * commit point succeeds, and recover then completes "after". */
static long fault_loop(const char *name, const struct spec *sp,
                       const struct state_exp *before,
                       const struct state_exp *after)
{
    char root[2048];
    struct start st;
    long n;
    double t0 = cdd_monotonic();
    start_init(&st, name, sp);
    for (n = 1; n < 100000; n++) {
        start_copy(st.tmpl, root, sizeof root, name);
        cdd_fs_fault_set(n, 0);
        int r = run_txn(root, sp, st.from, NULL);
        int fired = cdd_fs_fault_count() >= n;
        cdd_fs_fault_set(0, 0);
        if (r) {
            CHECK_MSG(fired && r == CDD_E_FAULT, "n=%ld: %s: %s", n,
                      cdd_err_name(r), cdd_last_error()->msg);
            CHECK_MSG(state_matches(root, before, 1), "n=%ld (%s): not before",
                      n, cdd_last_error()->msg);
        } else if (fired) {
            int found = 0;
            CHECK_INT(recover_now(root, &found, NULL), 0);
            CHECK_MSG(state_matches(root, after, 1),
                      "n=%ld: clean-up fault, not after", n);
        } else {
            CHECK_MSG(state_matches(root, after, 1), "n=%ld: not after", n);
            break;
        }
        if (t_cur_failed)
            break;
    }
    free(st.from);
    fprintf(stderr, "  %s fault loop: %ld runs, %.1f s\n", name, n,
            cdd_monotonic() - t0);
    return n;
}

static void test_fault_loop_install(void)
{
    expect_states();
    CHECK(fault_loop("fault-install", &install_spec, &S0, &S1) > 50);
}

static void test_fault_loop_uninstall(void)
{
    expect_states();
    CHECK(fault_loop("fault-uninstall", &uninstall_spec, &S1, &S0) > 30);
}

/* ---- kill loop ---------------------------------------------------------- */

/* Run f in a child process that the fault injector kills at its n-th
 * filesystem operation. Returns 1 when the child was killed, 0 when it
 * finished (then *child_rc is its result), -1 on a harness error. */
static int run_killed(long n, int (*f)(void *), void *ud, int *child_rc)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        cdd_fs_fault_set(n, 1);
        int r = f(ud);
        _exit(r == 0 ? 0 : 1);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
        return 1;
    if (WIFEXITED(st)) {
        *child_rc = WEXITSTATUS(st);
        return 0;
    }
    return -1;
}

struct kill_ctx {
    const char *root;
    const struct spec *sp;
    const char *from;
};

static int do_txn(void *ud)
{
    struct kill_ctx *k = ud;
    return run_txn(k->root, k->sp, k->from, NULL);
}

static int do_recover(void *ud)
{
    struct kill_ctx *k = ud;
    return recover_now(k->root, NULL, NULL);
}

static int journal_present(const char *root)
{
    char p[4096];
    path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
    return access(p, F_OK) == 0;
}

/* Kill the run at its n-th operation for n = 1, 2, ... until it completes;
 * after each kill, recover in this process and require exactly "before" or
 * exactly "after". Then, for a spread of the kill points that left a
 * journal (the first and last, those on either side of the commit point,
 * some between), kill the recovery too at each of its operations k in turn
 * and recover again: the result must be the same as with one recovery. */
#define MAX_KILL_POINTS 4096
#define NESTED_POINTS 8

static void kill_loop(const char *name, const struct spec *sp,
                      const struct state_exp *before,
                      const struct state_exp *after)
{
    static long jn[MAX_KILL_POINTS];   /* kill points that left a journal */
    static int jafter[MAX_KILL_POINTS]; /* ... and rolled forward */
    char root[2048], killed_tmpl[2048];
    struct start st;
    long n, nj = 0, nested = 0, n_before = 0, n_after = 0;
    double t0 = cdd_monotonic();
    start_init(&st, name, sp);
    snprintf(killed_tmpl, sizeof killed_tmpl, "%s/%s-killed", scratch_dir(),
             name);
    for (n = 1; n < MAX_KILL_POINTS; n++) {
        int rc = -1;
        start_copy(st.tmpl, root, sizeof root, name);
        struct kill_ctx kc = {root, sp, st.from};
        int killed = run_killed(n, do_txn, &kc, &rc);
        if (killed < 0) {
            CHECK_MSG(0, "n=%ld: harness error", n);
            break;
        }
        if (!killed) {
            CHECK_MSG(rc == 0, "n=%ld: run failed without a fault", n);
            CHECK_MSG(state_matches(root, after, 1), "n=%ld: not after", n);
            break;
        }
        int had_journal = journal_present(root);
        CHECK_INT(recover_now(root, NULL, NULL), 0);
        int is_before = state_matches(root, before, 0);
        int is_after = !is_before && state_matches(root, after, 0);
        n_before += is_before;
        n_after += is_after;
        if (!is_before && !is_after) {
            fprintf(stderr, "  n=%ld: neither before nor after\n", n);
            state_matches(root, before, 1);
            state_matches(root, after, 1);
            CHECK(0);
            break;
        }
        if (had_journal) {
            jn[nj] = n;
            jafter[nj++] = is_after;
        }
    }

    /* Pick the kill points whose recovery is killed in turn. */
    long pick[NESTED_POINTS + 4];
    size_t np = 0;
    for (long i = 0; nj && i < NESTED_POINTS; i++)
        pick[np++] = i * (nj - 1) / (NESTED_POINTS - 1);
    for (long i = 1; i < nj; i++)
        if (jafter[i] != jafter[i - 1]) {
            pick[np++] = i - 1;
            pick[np++] = i;
        }
    for (size_t pi = 0; pi < np && !t_cur_failed; pi++) {
        long idx = pick[pi], kn = jn[idx];
        int dup = 0;
        for (size_t q = 0; q < pi; q++)
            dup |= pick[q] == idx;
        if (dup)
            continue;
        const struct state_exp *want = jafter[idx] ? after : before;
        int rc = -1;
        /* The state the kill at kn leaves, kept to start each k from. */
        start_copy(st.tmpl, root, sizeof root, name);
        struct kill_ctx kc = {root, sp, st.from};
        if (run_killed(kn, do_txn, &kc, &rc) != 1) {
            CHECK_MSG(0, "n=%ld: the run was not killed again", kn);
            break;
        }
        rm_rf(killed_tmpl);
        copy_tree(root, killed_tmpl);
        for (long k = 1; k < MAX_KILL_POINTS && !t_cur_failed; k++) {
            start_copy(killed_tmpl, root, sizeof root, name);
            int again = run_killed(k, do_recover, &kc, &rc);
            nested++;
            CHECK_INT(recover_now(root, NULL, NULL), 0);
            if (!state_matches(root, want, 0)) {
                fprintf(stderr, "  n=%ld k=%ld: recovery killed and redone "
                        "gives a different result\n", kn, k);
                state_matches(root, want, 1);
                CHECK(0);
            }
            if (again == 0) {
                CHECK_MSG(rc == 0, "n=%ld k=%ld: recover failed", kn, k);
                break;
            }
        }
    }
    fprintf(stderr,
            "  %s kill loop: %ld kill points (%ld -> before, %ld -> after, "
            "%ld with a journal), %ld killed recoveries, %.1f s\n",
            name, n, n_before, n_after, nj, nested, cdd_monotonic() - t0);
    free(st.from);
    CHECK(n_before > 0 && n_after > 0);
}

static void test_kill_loop_install(void)
{
    expect_states();
    kill_loop("kill-install", &install_spec, &S0, &S1);
}

static void test_kill_loop_uninstall(void)
{
    expect_states();
    kill_loop("kill-uninstall", &uninstall_spec, &S1, &S0);
}

/* ---- lock --------------------------------------------------------------- */

static void test_lock(void)
{
    char root[2048];
    int up[2], down[2];
    char c;
    snprintf(root, sizeof root, "%s/lock", scratch_dir());
    rm_rf(root);
    mkdir_p(root);
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct cdd_tree *l = NULL;
        int created = 0;
        int r = state_lock(root, 0, &created, &l);
        c = r == 0 && created ? 'y' : 'n';
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
            _exit(2);
        cdd_sleep_ms(300);
        cdd_tree_close(l);
        _exit(0);
    }
    CHECK(read(up[0], &c, 1) == 1 && c == 'y');
    struct cdd_tree *l = NULL;
    int created = 1;
    int r = state_lock(root, 0, &created, &l);
    CHECK_INT(r, CDD_E_LOCKED);
    CHECK_INT(created, 0);
    char want[64];
    snprintf(want, sizeof want, "pid %ld", (long)pid);
    CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL, "message: %s",
              cdd_last_error()->msg);
    /* With a timeout, the lock comes once the holder lets go. */
    c = 'g';
    CHECK(write(down[1], &c, 1) == 1);
    double t0 = cdd_monotonic();
    r = state_lock(root, 5.0, &created, &l);
    CHECK_INT(r, 0);
    CHECK(cdd_monotonic() - t0 >= 0.1);
    cdd_tree_close(l);
    int st;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
          WEXITSTATUS(st) == 0);
    close(up[0]);
    close(up[1]);
    close(down[0]);
    close(down[1]);
    /* A state path that is not a folder is refused, never replaced. */
    char p[4096];
    snprintf(root, sizeof root, "%s/lock2", scratch_dir());
    rm_rf(root);
    mkdir_p(root);
    path_in(p, sizeof p, root, CDD_STATE_DIR);
    write_raw(p, "x", 0644);
    CHECK_INT(state_lock(root, 0, NULL, &l), CDD_E_STATE);
}

/* ---- recover ------------------------------------------------------------ */

static void test_recover_clean(void)
{
    char root[2048], p[4096];
    int found = 1, rb = 1;
    char *id = (char *)"x";
    expect_states();
    /* No state folder: nothing, and nothing created. */
    snprintf(root, sizeof root, "%s/bare", scratch_dir());
    rm_rf(root);
    mkdir_p(root);
    struct cdd_tree *bare = NULL;
    CHECK_INT(cdd_tree_open(root, &bare), 0);
    CHECK_INT(cdd_txn_recover(bare, &found, &rb, &id), 0);
    cdd_tree_close(bare);
    CHECK_INT(found, 0);
    CHECK_INT(rb, 0);
    CHECK(id == NULL);
    path_in(p, sizeof p, root, CDD_STATE_DIR);
    CHECK(access(p, F_OK) != 0);
    /* A clean tree with state. */
    fresh_tree(root, sizeof root, "clean");
    found = 1;
    CHECK_INT(recover_now(root, &found, NULL), 0);
    CHECK_INT(found, 0);
    CHECK(state_matches(root, &S0, 1));
}

static void test_recover_strays(void)
{
    char root[2048], p[4096];
    int found = 0, rb = 0;
    char *id = NULL;
    struct cdd_tree *lock = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "strays");
    path_in(p, sizeof p, root, CDD_STATE_DIR "/stage-20260101T000000Z-1/lib64");
    mkdir_p(p);
    path_in(p, sizeof p, root,
            CDD_STATE_DIR "/stage-20260101T000000Z-1/lib64/libcudnn.so.8");
    write_raw(p, "partial", 0644);
    path_in(p, sizeof p, root, CDD_STATE_DIR "/receipt.json.tmp");
    write_raw(p, "{", 0644);
    path_in(p, sizeof p, root, CDD_STATE_DIR "/journal.tmp");
    write_raw(p, "cudnn-deploy-jour", 0644);
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_recover(lock, &found, &rb, &id), 0);
    CHECK_INT(found, 1);
    CHECK_INT(rb, 1);
    CHECK_STR(id, "20260101T000000Z-1");
    free(id);
    id = NULL;
    CHECK(state_matches(root, &S0, 1));

    /* A journal whose plan never got its end line: never acted on. */
    path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
    write_raw(p, "cudnn-deploy-journal 2 20260101T000000Z-2 install "
                 "keep-backup\nP\t.cudnn-deploy/stage-20260101T000000Z-2/a\ta\n",
              0644);
    path_in(p, sizeof p, root, CDD_STATE_DIR "/stage-20260101T000000Z-2");
    mkdir_p(p);
    CHECK_INT(cdd_txn_recover(lock, &found, &rb, &id), 0);
    CHECK_INT(found, 1);
    CHECK_STR(id, "20260101T000000Z-2");
    free(id);
    id = NULL;
    CHECK(state_matches(root, &S0, 1));

    /* Damaged journals are refused, naming the file, and left alone. */
    static const char *const bad[] = {
        "garbage\n",
        "cudnn-deploy-journal 1 X install keep-backup\nE\n",
        "cudnn-deploy-journal 3 X install keep-backup\nE\n",
        "cudnn-deploy-journal 2 ../x install keep-backup\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\nP\t/etc/passwd\tx\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\n"
        "P\t.cudnn-deploy/stage-X/a\t../../a\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\nD\t.cudnn-deploy/lock\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\nM\t.cudnn-deploy/x\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\nQ\tx\nE\n",
        "cudnn-deploy-journal 2 X install keep-backup\nE\nD\tx\n",
        "cudnn-deploy-journal 2 X install keep-backup\nE\nC\nC\n",
        "cudnn-deploy-journal 2 X install keep-backup\nR\t.cudnn-deploy\nE\n",
    };
    for (size_t i = 0; i < N(bad); i++) {
        path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
        write_raw(p, bad[i], 0644);
        int r = cdd_txn_recover(lock, &found, &rb, &id);
        CHECK_MSG(r == CDD_E_STATE, "journal %zu: %s", i, cdd_err_name(r));
        CHECK_MSG(strstr(cdd_last_error()->path, "journal") != NULL,
                  "journal %zu: path %s", i, cdd_last_error()->path);
        CHECK(access(p, F_OK) == 0);
        free(id);
        id = NULL;
    }
    unlink(p);
    cdd_tree_close(lock);
    CHECK(state_matches(root, &S0, 1));
}

/* A planted journal whose records reach through a folder that is a link
 * out of the tree (or into the state folder): refused before anything
 * moves, the journal kept, inside and outside unchanged. */
static void test_recover_through_links(void)
{
    char root[2048], p[4096], out[2048];
    int found = 0, rb = 0;
    struct cdd_tree *lock = NULL;
    expect_states();
    fresh_tree(root, sizeof root, "planted");
    snprintf(out, sizeof out, "%s/planted-outside", scratch_dir());
    rm_rf(out);
    mkdir_p(out);
    path_in(p, sizeof p, out, "evil");
    write_raw(p, "outside", 0644);
    path_in(p, sizeof p, out, "dir");
    mkdir_p(p);
    path_in(p, sizeof p, root, "out");
    CHECK(symlink(out, p) == 0);
    path_in(p, sizeof p, root, "tostate");
    CHECK(symlink(CDD_STATE_DIR, p) == 0);
    path_in(p, sizeof p, root, CDD_STATE_DIR "/stage-X");
    mkdir_p(p);
    static const char *const planted[] = {
        "P\t.cudnn-deploy/stage-X/a\tout/evil\n",
        "D\tbin/old.dll\tf:11:14e78a26f30ad05810aee663185e2740f1d2dcc93e4497"
        "770e2414c6a0f39654\nD\tout/evil\tf:7:14e78a26f30ad05810aee663185e27"
        "40f1d2dcc93e4497770e2414c6a0f39654\n",
        "M\tout/newdir\n",
        "R\tout/dir\n",
        "R\ttostate/backup\n",
    };
    for (size_t i = 0; i < N(planted); i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "cudnn-deploy-journal 2 X install keep-backup\n%sE\n",
                 planted[i]);
        path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
        write_raw(p, text, 0644);
        char *before = snapshot(root, NULL), *obefore = snapshot(out, NULL);
        CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
        int r = cdd_txn_recover(lock, &found, &rb, NULL);
        CHECK_MSG(r == CDD_E_STATE, "planted %zu: %s", i, cdd_err_name(r));
        CHECK_MSG(strstr(cdd_last_error()->path, "journal") != NULL,
                  "planted %zu: %s", i, cdd_last_error()->path);
        cdd_tree_close(lock);
        char *after = snapshot(root, NULL), *oafter = snapshot(out, NULL);
        CHECK_MSG(strcmp(before, after) == 0, "planted %zu: tree changed", i);
        CHECK_MSG(strcmp(obefore, oafter) == 0, "planted %zu: outside changed",
                  i);
        free(before);
        free(after);
        free(obefore);
        free(oafter);
    }
}

/* A committed journal whose clean-up never ran rolls forward; an
 * uncommitted one rolls back. Checked on hand-made journals, so that the
 * format itself is pinned down. */
static void handmade_mid_commit(char *root, size_t len)
{
    char p[4096], from[4096], to[4096];
    /* State as after the moves of a commit: the old dll in backup, the new
     * one in place, its stage folder still there. */
    fresh_tree(root, len, "handmade");
    path_in(p, sizeof p, root, CDD_STATE_DIR "/stage-T-1/bin");
    mkdir_p(p);
    path_in(p, sizeof p, root, CDD_STATE_DIR "/backup/T-1/bin");
    mkdir_p(p);
    path_in(from, sizeof from, root, "bin/old.dll");
    path_in(to, sizeof to, root, CDD_STATE_DIR "/backup/T-1/bin/old.dll");
    CHECK(rename(from, to) == 0);
    write_raw(from, "new", 0644);
}

static const char handmade_plan[] =
    "cudnn-deploy-journal 2 T-1 install keep-backup\n"
    "P\t.cudnn-deploy/stage-T-1/bin/old.dll\tbin/old.dll\t"
    "f:11:14e78a26f30ad05810aee663185e2740f1d2dcc93e4497770e2414c6a0f39654\n"
    "E\n";

static void test_recover_handmade(void)
{
    char root[2048], p[4096], stage[4096];
    int found = 0, rb = 0;
    struct cdd_tree *lock = NULL;
    expect_states();

    handmade_mid_commit(root, sizeof root);
    path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
    write_raw(p, handmade_plan, 0644);
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_recover(lock, &found, &rb, NULL), 0);
    CHECK_INT(found, 1);
    CHECK_INT(rb, 1);
    CHECK(state_matches(root, &S0, 1));
    cdd_tree_close(lock);

    handmade_mid_commit(root, sizeof root);
    path_in(stage, sizeof stage, root, CDD_STATE_DIR "/stage-T-1");
    rm_rf(stage); /* not needed forward; keeps "want" exact */
    char *want = snapshot(root, NULL);
    char text[1024];
    snprintf(text, sizeof text, "%sC\n", handmade_plan);
    write_raw(p, text, 0644);
    mkdir_p(stage);
    CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
    CHECK_INT(cdd_txn_recover(lock, &found, &rb, NULL), 0);
    CHECK_INT(found, 1);
    CHECK_INT(rb, 0);
    char *got = snapshot(root, NULL);
    CHECK(strcmp(got, want) == 0);
    if (strcmp(got, want) != 0)
        show_diff("tree", got, want);
    CHECK(strstr(got, ".cudnn-deploy/backup/T-1/bin/old.dll f 0755 old dll") !=
          NULL);
    cdd_tree_close(lock);
    free(want);
    free(got);

    /* A backup that is not what the journal recorded (other bytes of the
     * same size; a link) is tampered state: refused, nothing touched, the
     * journal kept. */
    static const char *const swaps[] = {"f", "l"};
    for (size_t i = 0; i < N(swaps); i++) {
        handmade_mid_commit(root, sizeof root);
        path_in(p, sizeof p, root, CDD_JOURNAL_FILE);
        write_raw(p, handmade_plan, 0644);
        char bk[4096];
        path_in(bk, sizeof bk, root, CDD_STATE_DIR "/backup/T-1/bin/old.dll");
        unlink(bk);
        if (swaps[i][0] == 'f')
            write_raw(bk, "old dll v2\n", 0755);
        else
            CHECK(symlink("/etc/passwd", bk) == 0);
        char *before = snapshot(root, NULL);
        CHECK_INT(state_lock(root, 0, NULL, &lock), 0);
        int r = cdd_txn_recover(lock, &found, &rb, NULL);
        CHECK_MSG(r == CDD_E_STATE, "swap %s: %s", swaps[i], cdd_err_name(r));
        CHECK(strstr(cdd_last_error()->path, "journal") != NULL);
        CHECK(strstr(cdd_last_error()->msg, "bin/old.dll") != NULL);
        cdd_tree_close(lock);
        char *after = snapshot(root, NULL);
        CHECK(strcmp(before, after) == 0);
        if (strcmp(before, after) != 0)
            show_diff("tree", after, before);
        free(before);
        free(after);
    }
}

/* Last: remove the scratch trees, unless something failed (then they are
 * kept to look at). */
static void test_cleanup(void)
{
    if (t_failed_checks == 0)
        rm_rf(scratch_dir());
}

TEST_MAIN(TEST(test_install_commit), TEST(test_uninstall_commit),
          TEST(test_empty_and_missing), TEST(test_validation),
          TEST(test_refusals), TEST(test_cancel), TEST(test_lock),
          TEST(test_recover_clean), TEST(test_recover_strays),
          TEST(test_recover_handmade), TEST(test_recover_through_links),
          TEST(test_fault_loop_install),
          TEST(test_fault_loop_uninstall), TEST(test_kill_loop_install),
          TEST(test_kill_loop_uninstall),
          TEST(test_cleanup))
