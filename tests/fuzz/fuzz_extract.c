/* Fuzz target: archive -> staging -> tree, the whole install path
 * (cdd_install(): tarscan/zipcd, libarchive, name checks, layout, staging
 * under .cudnn-deploy, the transaction), run on every input against a small
 * CUDA 11.6 tree in the scratch folder. The input is the archive: a zip is
 * read through a Windows manifest, anything else through a Linux one; both
 * list one header (include/cudnn.h, any bytes), allow unlisted entries
 * (files_exact false) and are pinned with --sha256 to the input's own hash,
 * so every archive that is well formed and safe installs.
 *
 * The tree is hostile too: besides the normal in-tree link (lib64 ->
 * targets/x86_64-linux/lib) it holds links that lead out of it: folders
 * (include/evil, lib64/evil, bin/evil, lib/x64/evil -> the folder beside the
 * tree) and files where the layout puts an archive's files
 * (include/cudnn_evil.h, lib64/libevil.so.1, bin/evil.dll,
 * lib/x64/evil.lib -> the file beside the tree), which an install replaces
 * but must never write through. After each input:
 *   - the sentinel file and the folder beside the tree are exactly as
 *     before, and nothing else appeared beside the tree;
 *   - every link in the tree that we did not plant is a plain name in its
 *     own folder (what the manifest rules allow);
 *   - when install failed, the tree is exactly as before (paths, types,
 *     sizes, link targets), apart from .cudnn-deploy's lock and log, and no
 *     journal or stage folder is left;
 *   - the error code is one install documents, with a one-line message.
 * A tree that changed is built again before the next input.
 * CDD_FUZZ_VERBOSE=1 prints each install's outcome. */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/archive.h"
#include "cdd/cudatree.h"
#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/state.h"
#include "cdd/tree.h"

#define SENTINEL_TEXT "sentinel: nothing may touch this file\n"

static const char manifest_linux[] =
    "{\"schema_version\":1,\"product\":\"cudnn\",\"version\":\"8.5.0.96\","
    "\"cuda_major\":11,\"platform\":\"linux-x86_64\",\"archive\":{"
    "\"filename\":\"fuzz.tar\",\"sha256\":null,\"size\":null,"
    "\"strip_components\":1},\"files_exact\":false,"
    "\"files\":[{\"path\":\"include/cudnn.h\",\"role\":\"header\",\"sha256\":null,"
    "\"size\":null}]}";
static const char manifest_windows[] =
    "{\"schema_version\":1,\"product\":\"cudnn\",\"version\":\"8.5.0.96\","
    "\"cuda_major\":11,\"platform\":\"windows-x86_64\",\"archive\":{"
    "\"filename\":\"fuzz.zip\",\"sha256\":null,\"size\":null,"
    "\"strip_components\":1},\"files_exact\":false,"
    "\"files\":[{\"path\":\"include/cudnn.h\",\"role\":\"header\",\"sha256\":null,"
    "\"size\":null}]}";

static char base[600], tree[700], outside[700], sentinel[700];
static char tar_path[700], zip_path[700];
static struct cdd_manifest *m_linux, *m_windows;
static char *tree_before; /* listing of the fresh tree */

/* ---- filesystem helpers (the harness's own, plain POSIX) ---------------- */

static void must(int ok, const char *what, const char *path)
{
    if (!ok) {
        fprintf(stderr, "fuzz_extract: %s %s: %s\n", what, path,
                strerror(errno));
        abort();
    }
}

static void put_file(const char *root, const char *rel, const char *text)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    fuzz_write_file(p, (const uint8_t *)text, strlen(text));
}

static void put_dir(const char *root, const char *rel)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    must(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir", p);
}

static void put_link(const char *root, const char *rel, const char *target)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    must(symlink(target, p) == 0, "symlink", p);
}

/* The links the fixture plants (make_tree). */
static const char *const planted_names[] = {"evil", "cudnn_evil.h",
                                            "libevil.so.1", "evil.dll",
                                            "evil.lib"};

static int is_planted(const char *name)
{
    for (size_t i = 0; i < sizeof planted_names / sizeof planted_names[0]; i++)
        if (strcmp(name, planted_names[i]) == 0)
            return 1;
    return 0;
}

struct listing {
    char *s;
    size_t len, cap;
};

static void add(struct listing *l, const char *line)
{
    size_t n = strlen(line);
    if (l->len + n + 1 > l->cap) {
        l->cap = (l->len + n + 1) * 2;
        if (!(l->s = realloc(l->s, l->cap)))
            abort();
    }
    memcpy(l->s + l->len, line, n + 1);
    l->len += n;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every path under root/rel, sorted: type, size, link target. skip_state:
 * leave .cudnn-deploy out (checked on its own). planted: links we made.
 * links_ok: set to 0 when a link not planted is not a plain name. */
static void walk(const char *root, const char *rel, int skip_state,
                 struct listing *l, int *links_ok)
{
    char dir[2400];
    snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap && !(names = realloc(names, (cap = cap * 2 + 16) *
                                                     sizeof *names)))
            abort();
        if (!(names[n++] = strdup(de->d_name)))
            abort();
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_names);
    for (size_t i = 0; i < n; i++) {
        char sub[2400], full[4800], line[6000], target[1024];
        struct stat st;
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        if ((skip_state && !strcmp(sub, CDD_STATE_DIR)) || lstat(full, &st)) {
            free(names[i]);
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            ssize_t k = readlink(full, target, sizeof target - 1);
            target[k > 0 ? k : 0] = '\0';
            int planted = is_planted(names[i]) || !strcmp(sub, "lib64");
            if (!planted && strchr(target, '/'))
                *links_ok = 0;
            snprintf(line, sizeof line, "%s -> %s\n", sub, target);
            add(l, line);
        } else if (S_ISDIR(st.st_mode)) {
            snprintf(line, sizeof line, "%s/\n", sub);
            add(l, line);
            walk(root, sub, skip_state, l, links_ok);
        } else {
            snprintf(line, sizeof line, "%s %s %lld\n", sub,
                     S_ISREG(st.st_mode) ? "file" : "other",
                     (long long)st.st_size);
            add(l, line);
        }
        free(names[i]);
    }
    free(names);
}

static char *listing_of(const char *root, int skip_state, int *links_ok)
{
    struct listing l = {NULL, 0, 0};
    int ok = 1;
    add(&l, "");
    walk(root, "", skip_state, &l, &ok);
    if (links_ok)
        *links_ok = ok;
    return l.s;
}

static char *read_text(const char *path)
{
    char *s = NULL;
    size_t len = 0;
    if (cdd_fs_read_all(path, 1 << 20, &s, &len) != 0) {
        cdd_clear_error();
        return NULL;
    }
    return s;
}

/* ---- the fixture --------------------------------------------------------- */

static void make_tree(void)
{
    char keep[800];
    snprintf(keep, sizeof keep, "%s/keep.h", outside);
    cdd_fs_remove_tree(tree);
    cdd_clear_error();
    must(mkdir(tree, 0755) == 0, "mkdir", tree);
    put_file(tree, "version.json",
             "{\"cuda\":{\"name\":\"CUDA SDK\",\"version\":\"11.6.2\"}}\n");
    put_dir(tree, "include");
    put_file(tree, "include/cuda.h", "#define CUDA_VERSION 11060\n");
    put_link(tree, "include/evil", outside);
    put_link(tree, "include/cudnn_evil.h", keep);
    put_dir(tree, "targets");
    put_dir(tree, "targets/x86_64-linux");
    put_dir(tree, "targets/x86_64-linux/lib");
    put_file(tree, "targets/x86_64-linux/lib/libcudart.so.11.0", "ELF\n");
    put_link(tree, "targets/x86_64-linux/lib/evil", outside);
    put_link(tree, "targets/x86_64-linux/lib/libevil.so.1", keep);
    put_link(tree, "lib64", "targets/x86_64-linux/lib");
    put_dir(tree, "bin");
    put_link(tree, "bin/evil", outside);
    put_link(tree, "bin/evil.dll", keep);
    put_dir(tree, "lib");
    put_dir(tree, "lib/x64");
    put_link(tree, "lib/x64/evil", outside);
    put_link(tree, "lib/x64/evil.lib", keep);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    snprintf(base, sizeof base, "%s/extract", fuzz_scratch());
    snprintf(tree, sizeof tree, "%s/tree", base);
    snprintf(outside, sizeof outside, "%s/outside", base);
    snprintf(sentinel, sizeof sentinel, "%s/sentinel", base);
    snprintf(tar_path, sizeof tar_path, "%s/fuzz.tar", fuzz_scratch());
    snprintf(zip_path, sizeof zip_path, "%s/fuzz.zip", fuzz_scratch());
    cdd_fs_remove_tree(base);
    must(mkdir(base, 0755) == 0, "mkdir", base);
    must(mkdir(outside, 0755) == 0, "mkdir", outside);
    put_file(outside, "keep.h", "outside the tree\n");
    put_file(base, "sentinel", SENTINEL_TEXT);
    make_tree();
    tree_before = listing_of(tree, 1, NULL);
    if (cdd_archive_init() != 0 ||
        cdd_manifest_parse(manifest_linux, strlen(manifest_linux), "linux.json",
                           &m_linux) != 0 ||
        cdd_manifest_parse(manifest_windows, strlen(manifest_windows),
                           "windows.json", &m_windows) != 0) {
        fprintf(stderr, "fuzz_extract: set-up: %s\n", cdd_last_error()->msg);
        abort();
    }
    return 0;
}

/* What an install may fail with on a hostile archive or tree. */
static int documented(int r)
{
    return r == CDD_E_ARCHIVE || r == CDD_E_UNSAFE || r == CDD_E_CORRUPT ||
           r == CDD_E_CHECKSUM || r == CDD_E_NOMEM || r == CDD_E_STATE ||
           r == CDD_E_NOTSUP;
}

static void check_outside(void)
{
    char *s = read_text(sentinel), *k = NULL;
    char keep[800];
    FUZZ_ASSERT(s && strcmp(s, SENTINEL_TEXT) == 0, "the sentinel changed");
    free(s);
    snprintf(keep, sizeof keep, "%s/keep.h", outside);
    k = read_text(keep);
    FUZZ_ASSERT(k && strcmp(k, "outside the tree\n") == 0,
                "the file outside the tree changed");
    free(k);
    char *around = listing_of(outside, 0, NULL);
    FUZZ_ASSERT(strcmp(around, "keep.h file 17\n") == 0,
                "something was written outside the tree:\n%s", around);
    free(around);
    DIR *d = opendir(base);
    struct dirent *de;
    FUZZ_ASSERT(d, "base folder");
    while ((de = readdir(d)) != NULL)
        FUZZ_ASSERT(!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
                        !strcmp(de->d_name, "tree") ||
                        !strcmp(de->d_name, "outside") ||
                        !strcmp(de->d_name, "sentinel"),
                    "new file beside the tree: %s", de->d_name);
    closedir(d);
}

/* After a failure: no journal, no stage folder. */
static void check_state_clean(void)
{
    char p[800];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", tree, CDD_JOURNAL_FILE);
    FUZZ_ASSERT(lstat(p, &st) != 0, "a failed install left its journal");
    snprintf(p, sizeof p, "%s/%s", tree, CDD_STATE_DIR);
    DIR *d = opendir(p);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        FUZZ_ASSERT(strncmp(de->d_name, "stage-", 6) != 0,
                    "a failed install left %s", de->d_name);
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int is_zip = size >= 2 && data[0] == 'P' && data[1] == 'K';
    const char *path = is_zip ? zip_path : tar_path;
    uint8_t pin[CDD_SHA256_LEN];
    struct cdd_sha256 *h = NULL;
    struct cdd_target_spec spec = {.cuda_root = tree};
    struct cdd_target t = {0};
    struct cdd_tree *tr = NULL;
    struct cdd_install_result res;
    memset(&res, 0, sizeof res);

    fuzz_write_file(path, data, size);
    FUZZ_ASSERT(cdd_sha256_new(&h) == 0, "sha256");
    cdd_sha256_update(h, data, size);
    cdd_sha256_final(h, pin);
    cdd_sha256_free(h);

    int r = cdd_target_resolve(&spec, &t);
    FUZZ_ASSERT(r == 0, "target: %s", cdd_last_error()->msg);
    r = cdd_tree_open(t.root, &tr);
    FUZZ_ASSERT(r == 0, "tree: %s", cdd_last_error()->msg);
    struct cdd_install_opts o = {
        .m = is_zip ? m_windows : m_linux, .target = &t, .tree = tr,
        .archive_path = path, .sha256 = pin, .sha256_source = CDD_PIN_OPTION,
        .jobs = 1 + (pin[0] & 1)};
    r = cdd_install(&o, &res);
    if (getenv("CDD_FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz_extract: %s: install: %d %s\n",
                is_zip ? "zip" : "tar", r, r ? cdd_last_error()->msg : "");
    if (r) {
        const char *msg = cdd_last_error()->msg;
        FUZZ_ASSERT(documented(r), "install failed with %d (%s)", r,
                    msg ? msg : "");
        fuzz_check_error();
    }
    cdd_clear_error();
    cdd_install_result_clear(&res);
    cdd_tree_close(tr);
    cdd_target_clear(&t);

    check_outside();
    int links_ok = 1;
    char *now = listing_of(tree, 1, &links_ok);
    FUZZ_ASSERT(links_ok, "a link in the tree leads elsewhere:\n%s", now);
    if (r) {
        FUZZ_ASSERT(strcmp(now, tree_before) == 0,
                    "a failed install changed the tree:\n%s\nwas:\n%s", now,
                    tree_before);
        check_state_clean();
    }
    if (strcmp(now, tree_before) != 0 || !r)
        make_tree();
    free(now);
    return 0;
}
