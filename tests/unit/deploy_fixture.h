/* What the install and uninstall unit tests stand on, made at test time:
 * a scratch folder, a CUDA 11.6 tree (version.json, lib64/, include/), a
 * small cuDNN-shaped Linux tar.xz written with libarchive's writer (as
 * test_archive_extract.c does), its exact manifest parsed from JSON text
 * (pinned to the archive's sha256 and size), and a listing of a tree to
 * compare before and after. POSIX only (symlinks, modes). */
#ifndef CDD_DEPLOY_FIXTURE_H
#define CDD_DEPLOY_FIXTURE_H

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/cudatree.h"
#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/manifest.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/tree.h"
#include "cdd/sys.h"
#include "fixture.h"
#include "test.h"

#define DF_TOP "cudnn-linux-x86_64-8.5.0.96_cuda11-archive"

/* One archive member below DF_TOP: 'f' file (data), 'l' symlink (data is
 * the target). */
struct df_ent {
    const char *path;
    char type;
    const char *data;
};

/* A fresh folder <scratch root>/<test>/<name>. */
static inline const char *df_dir(const char *test, const char *name)
{
    return fx_scratch(fx_path(test, name));
}

static inline void df_put(const char *root, const char *rel, const char *data)
{
    CHECK_INT(fx_put(root, rel, data), 0);
}

/* root/rel's bytes (malloc'd, NUL-terminated), or NULL when absent. */
static inline char *df_read(const char *root, const char *rel)
{
    return (char *)fx_read(fx_path(root, rel), NULL);
}

static inline int df_exists(const char *root, const char *rel)
{
    char path[4200];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    return lstat(path, &st) == 0;
}

/* A CUDA 11.6 tree as the installer leaves it (the parts install reads). */
static inline const char *df_cuda_tree(const char *test, const char *name)
{
    const char *root = df_dir(test, name);
    df_put(root, "version.json",
           "{\"cuda\":{\"name\":\"CUDA SDK\",\"version\":\"11.6.2\"}}\n");
    df_put(root, "include/cuda.h", "#define CUDA_VERSION 11060\n");
    df_put(root, "lib64/libcudart.so.11.0", "\177ELF cudart\n");
    return root;
}

static inline void df_sha_hex(const char *data, size_t len,
                              char hex[CDD_SHA256_HEX])
{
    uint8_t d[CDD_SHA256_LEN];
    struct cdd_sha256 *h = NULL;
    cdd_sha256_new(&h);
    cdd_sha256_update(h, data, len);
    cdd_sha256_final(h, d);
    cdd_sha256_free(h);
    cdd_hex_encode(d, CDD_SHA256_LEN, hex);
}

/* ---- listing a tree ---------------------------------------------------- */

/* Every path under root (relative) with its type and, for files, mode and
 * sha256 prefix, for links, the target, one per line, sorted within each
 * folder; appended to *out. skip_state: leave out .cudnn-deploy/lock and
 * .cudnn-deploy/log.jsonl (they stay once made), and .cudnn-deploy and its
 * backup folder when nothing else is in them. */
static inline void df_walk(const char *root, const char *rel,
                           int skip_state, char **out, size_t *len)
{
    char path[4200];
    struct dirent **names = NULL;
    snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
    int n = scandir(path, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *nm = names[i]->d_name;
        char sub[2048], line[4096], full[4200], target[1024];
        struct stat st;
        snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", nm);
        snprintf(full, sizeof full, "%s/%s", root, sub);
        if (!strcmp(nm, ".") || !strcmp(nm, "..") || lstat(full, &st) != 0 ||
            (skip_state && (!strcmp(sub, CDD_LOCK_FILE) ||
                            !strcmp(sub, CDD_LOG_FILE)))) {
            free(names[i]);
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            ssize_t k = readlink(full, target, sizeof target - 1);
            target[k > 0 ? k : 0] = '\0';
            snprintf(line, sizeof line, "%s -> %s\n", sub, target);
        } else if (S_ISDIR(st.st_mode)) {
            snprintf(line, sizeof line, "%s/\n", sub);
        } else {
            char *b = df_read(root, sub), hex[CDD_SHA256_HEX];
            df_sha_hex(b ? b : "", b ? strlen(b) : 0, hex);
            snprintf(line, sizeof line, "%s %o %.16s\n", sub,
                     (unsigned)(st.st_mode & 07777), hex);
            free(b);
        }
        size_t at = *len;
        if (!(*out = realloc(*out, *len + strlen(line) + 1)))
            exit(2);
        memcpy(*out + *len, line, strlen(line) + 1);
        *len += strlen(line);
        if (S_ISDIR(st.st_mode)) {
            size_t before = *len;
            df_walk(root, sub, skip_state, out, len);
            if (skip_state && *len == before &&
                (!strcmp(sub, CDD_STATE_DIR) || !strcmp(sub, CDD_BACKUP_DIR))) {
                *len = at;
                (*out)[at] = '\0';
            }
        }
        free(names[i]);
    }
    free(names);
}

static inline char *df_listing(const char *root, int skip_state)
{
    char *out = calloc(1, 1);
    size_t len = 0;
    df_walk(root, "", skip_state, &out, &len);
    return out;
}

/* ---- the archive and its manifest ---------------------------------------- */

static inline void df_tar_xz(const char *file, const struct df_ent *e,
                             size_t n)
{
    struct archive *a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_xz(a);
    if (archive_write_open_filename(a, file) != ARCHIVE_OK) {
        fprintf(stderr, "write %s: %s\n", file, archive_error_string(a));
        exit(2);
    }
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *ae = archive_entry_new();
        char name[1024];
        snprintf(name, sizeof name, "%s/%s", DF_TOP, e[i].path);
        archive_entry_copy_pathname(ae, name);
        archive_entry_set_mtime(ae, 1660000000, 0);
        if (e[i].type == 'l') {
            archive_entry_set_filetype(ae, AE_IFLNK);
            archive_entry_set_perm(ae, 0777);
            archive_entry_copy_symlink(ae, e[i].data);
        } else {
            archive_entry_set_filetype(ae, AE_IFREG);
            archive_entry_set_perm(ae, 0644);
            archive_entry_set_size(ae, (la_int64_t)strlen(e[i].data));
        }
        CHECK_INT(archive_write_header(a, ae), ARCHIVE_OK);
        if (e[i].type == 'f')
            CHECK_INT(archive_write_data(a, e[i].data, strlen(e[i].data)),
                      (la_ssize_t)strlen(e[i].data));
        archive_entry_free(ae);
    }
    CHECK_INT(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

static inline const char *df_role(const char *path, char type)
{
    if (type == 'l')
        return "symlink";
    if (strncmp(path, "include/", 8) == 0)
        return "header";
    if (strcmp(path, "LICENSE") == 0)
        return "license";
    return strstr(path, ".a") && !strstr(path, ".so") ? "static_lib"
                                                       : "runtime";
}

/* A pinned archive (folder/<DF_TOP>.tar.xz) and its exact manifest. */
struct df_fix {
    char archive[1024];
    struct cdd_manifest *m;
};

static inline void df_fixture(struct df_fix *fx, const char *folder,
                              const struct df_ent *e, size_t n)
{
    size_t cap = 4096 + n * 512, len = 0;
    char *json = malloc(cap), hex[CDD_SHA256_HEX];
    uint8_t d[CDD_SHA256_LEN];
    uint64_t size = 0;
    snprintf(fx->archive, sizeof fx->archive, "%s/%s.tar.xz", folder, DF_TOP);
    df_tar_xz(fx->archive, e, n);
    CHECK_INT(cdd_sha256_file(fx->archive, d, &size), 0);
    cdd_hex_encode(d, CDD_SHA256_LEN, hex);
    len += (size_t)snprintf(json + len, cap - len,
        "{\"schema_version\":1,\"product\":\"cudnn\",\"version\":\"8.5.0.96\","
        "\"cuda_major\":11,\"platform\":\"linux-x86_64\",\"archive\":{"
        "\"filename\":\"%s.tar.xz\",\"sha256\":\"%s\",\"size\":%llu,"
        "\"strip_components\":1},\"files\":[",
        DF_TOP, hex, (unsigned long long)size);
    for (size_t i = 0; i < n; i++) {
        char fhex[CDD_SHA256_HEX];
        if (e[i].type == 'l') {
            len += (size_t)snprintf(json + len, cap - len,
                "%s{\"path\":\"%s\",\"role\":\"symlink\",\"target\":\"%s\"}",
                i ? "," : "", e[i].path, e[i].data);
            continue;
        }
        df_sha_hex(e[i].data, strlen(e[i].data), fhex);
        len += (size_t)snprintf(json + len, cap - len,
            "%s{\"path\":\"%s\",\"role\":\"%s\",\"sha256\":\"%s\","
            "\"size\":%zu}", i ? "," : "", e[i].path,
            df_role(e[i].path, e[i].type), fhex, strlen(e[i].data));
    }
    snprintf(json + len, cap - len, "]}");
    fx->m = NULL;
    CHECK_INT(cdd_manifest_parse(json, strlen(json), "test-manifest.json",
                                 &fx->m), 0);
    if (!fx->m) {
        fprintf(stderr, "manifest: %s\n", cdd_last_error()->msg);
        exit(2);
    }
    free(json);
}

static inline void df_fixture_free(struct df_fix *fx)
{
    cdd_manifest_free(fx->m);
    fx->m = NULL;
}

/* ---- running install and uninstall --------------------------------------- */

static inline int df_install(const char *root, const struct df_fix *fx,
                             int dry_run, struct cdd_install_result *res)
{
    struct cdd_target_spec spec = {.cuda_root = root};
    struct cdd_target t = {0};
    struct cdd_tree *tree = NULL;
    int r = cdd_target_resolve(&spec, &t);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (!r) {
        struct cdd_install_opts o = {.m = fx->m, .target = &t, .tree = tree,
                                     .archive_path = fx->archive,
                                     .dry_run = dry_run, .jobs = 2};
        r = cdd_install(&o, res);
    }
    cdd_tree_close(tree);
    cdd_target_clear(&t);
    return r;
}

static inline int df_uninstall(const char *root, int force, int dry_run,
                               struct cdd_uninstall_result *res)
{
    struct cdd_target_spec spec = {.cuda_root = root};
    struct cdd_target t = {0};
    struct cdd_tree *tree = NULL;
    int r = cdd_target_resolve(&spec, &t);
    if (!r)
        r = cdd_tree_open(t.root, &tree);
    if (!r) {
        struct cdd_uninstall_opts o = {.target = &t, .tree = tree,
                                       .force = force, .dry_run = dry_run};
        r = cdd_uninstall(&o, res);
    }
    cdd_tree_close(tree);
    cdd_target_clear(&t);
    return r;
}

/* The receipt of the tree at root (NULL when none). */
static inline struct cdd_receipt *df_receipt(const char *root)
{
    struct cdd_tree *tree = NULL;
    struct cdd_receipt *rc = NULL;
    CHECK_INT(cdd_tree_open(root, &tree), 0);
    if (tree)
        CHECK_INT(cdd_receipt_load(tree, &rc), 0);
    cdd_tree_close(tree);
    return rc;
}

/* The action planned for path, or -1 when the plan has no such item. */
static inline int df_action(const struct cdd_plan *p, const char *path)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->items[i].path, path) == 0)
            return (int)p->items[i].action;
    return -1;
}

#define CHECK_ACTION(plan, path, act)                                          \
    CHECK_MSG(df_action(plan, path) == (int)(act), "%s: %s, expected %s",      \
              path,                                                            \
              df_action(plan, path) < 0                                        \
                  ? "not planned"                                              \
                  : cdd_action_name((enum cdd_action)df_action(plan, path)),   \
              cdd_action_name(act))

#endif
