/* verify: the orchestration of the four layers (the load layer in
 * verify_load.c, the GPU layer in verify_gpu.c, both below this file; the
 * check list they write to in checks.c) and the files layer (every installed file present and unchanged, symlink chains
 * intact, stray cuDNN files from another version). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/error.h"
#include "cdd/fit.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "verify_int.h"

void cdd_verify_result_clear(struct cdd_verify_result *r)
{
    if (!r)
        return;
    cdd_checks_clear(&r->checks);
    free(r->manifest_name);
    if (r->fit)
        cdd_fit_result_clear(r->fit);
    free(r->fit);
    memset(r, 0, sizeof *r);
}

/* ---- files layer ---------------------------------------------------------- */

#define MAX_FILE_FAILS 25

static int is_cudnn_name(const char *name)
{
    char low[16]; /* fixed: a prefix, compared with "libcudnn" */
    size_t i;
    for (i = 0; i < sizeof low - 1 && name[i]; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    return strncmp(low, "cudnn", 5) == 0 || strncmp(low, "libcudnn", 8) == 0;
}

struct stray_ctx {
    struct vctx *c;
    const char *dir_rel;
    char **known;
    size_t n_known;
    size_t found;
    struct cdd_sb list;
};

static int stray_one(void *ud, const char *name)
{
    struct stray_ctx *s = ud;
    if (!is_cudnn_name(name))
        return 0;
    char *rel = cdd_path_join(s->dir_rel, name);
    if (!rel)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    int known = 0;
    for (size_t i = 0; i < s->n_known && !known; i++)
        known = strcmp(s->known[i], rel) == 0;
    free(rel);
    if (known)
        return 0;
    /* The name is whatever someone put in the tree: escaped, so it can
     * neither break the line nor drive a terminal (nor hide as another
     * name behind bidirectional controls). */
    char *shown = cdd_path_shown(name);
    int r = shown ? cdd_sb_addf(&s->list, "%s%s", s->found ? ", " : "", shown)
                  : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(shown);
    s->found++;
    return r;
}

/* Files named cudnn* beside ours that we did not install: the classic mixed
 * versions (an older cudnn_ops_infer64_8.dll left behind). */
static void check_strays(struct vctx *c, char **known, size_t n_known)
{
    char **dirs = NULL;
    size_t n_dirs = 0;
    for (size_t i = 0; i < n_known; i++) {
        char *d = strdup(known[i]);
        char *slash = d ? strrchr(d, '/') : NULL;
        if (!slash) {
            free(d);
            continue;
        }
        *slash = '\0';
        int seen = 0;
        for (size_t k = 0; k < n_dirs && !seen; k++)
            seen = strcmp(dirs[k], d) == 0;
        /* A folder per installed file at most. */
        if (!seen && CDD_GROW(dirs, NULL, n_dirs + 1, n_known,
                              "folders of installed files") == 0) {
            dirs[n_dirs++] = d;
        } else {
            free(d); /* seen, or no memory: that folder is not looked at */
        }
    }
    size_t total = 0;
    for (size_t k = 0; k < n_dirs; k++) {
        struct stray_ctx s = {c, dirs[k], known, n_known, 0, {0}};
        cdd_sb_init(&s.list, CDD_TEXT_MAX, "list of stray files");
        if (cdd_tree_list(c->tree, dirs[k], stray_one, &s) == 0 && s.found) {
            VCHECK(c, "files.strays", CDD_CHECK_WARN,
                   "%zu cuDNN file(s) in %s/ that this install did not put "
                   "there: %s. Files of another cuDNN version beside these "
                   "are a classic cause of load failures and version "
                   "mismatches; remove them unless something else needs them",
                   s.found, dirs[k], cdd_sb_str(&s.list));
            total += s.found;
        }
        cdd_sb_free(&s.list);
        free(dirs[k]);
    }
    free(dirs);
    cdd_clear_error();
    if (total == 0)
        VCHECK(c, "files.strays", CDD_CHECK_PASS,
               "no cuDNN files from another version beside ours");
}

/* A symlink chain must end, inside its folder, at a regular file. */
static void check_chain(struct vctx *c, const char *rel, size_t *bad)
{
    struct cdd_sb cur;
    char *target = NULL;
    cdd_sb_init(&cur, CDD_PATH_MAX, "symlink chain path");
    int r = cdd_sb_set(&cur, rel);
    for (int hops = 0; !r && hops < 16; hops++) {
        struct cdd_stat st;
        free(target);
        target = NULL;
        r = cdd_tree_lstat(c->tree, cdd_sb_str(&cur), &st);
        if (!r && st.type == CDD_FT_SYMLINK)
            r = cdd_tree_readlink_dup(c->tree, cdd_sb_str(&cur), &target);
        if (r == CDD_E_NOMEM) {
            c->res->checks.nomem = 1; /* not a broken chain */
            goto out;
        }
        if (r || st.type == CDD_FT_NONE) {
            (*bad)++;
            VCHECK(c, "files.chain", CDD_CHECK_FAIL,
                   "%s: the symlink chain is broken at %s", rel,
                   cdd_sb_str(&cur));
            goto out;
        }
        if (st.type == CDD_FT_FILE)
            goto out;
        if (st.type != CDD_FT_SYMLINK || strchr(target, '/')) {
            (*bad)++;
            VCHECK(c, "files.chain", CDD_CHECK_FAIL,
                   "%s: %s is not a symlink within its folder", rel,
                   cdd_sb_str(&cur));
            goto out;
        }
        const char *s = cdd_sb_str(&cur), *slash = strrchr(s, '/');
        struct cdd_sb next;
        cdd_sb_init(&next, CDD_PATH_MAX, "symlink chain path");
        r = cdd_sb_add(&next, s, slash ? (size_t)(slash - s) + 1 : 0);
        if (!r)
            r = cdd_sb_adds(&next, target);
        cdd_sb_free(&cur);
        cur = next;
    }
    if (r == CDD_E_NOMEM) {
        /* The next link's path could not be built: not a broken chain
         * (the malloc trials: "1 of 11 files missing or changed"). */
        c->res->checks.nomem = 1;
        goto out;
    }
    (*bad)++;
    if (r)
        VCHECK(c, "files.chain", CDD_CHECK_FAIL, "%s: %s", rel,
               cdd_last_error()->msg);
    else
        VCHECK(c, "files.chain", CDD_CHECK_FAIL, "%s: symlink loop", rel);
out:
    cdd_sb_free(&cur);
    free(target);
}

/* Remember a tree path the files layer found missing or changed: the load
 * layer never loads it. */
/* At most one per file the files layer checks: the receipt's, else the
 * manifest's. */
static size_t changed_max(const struct vctx *c)
{
    return c->rc ? c->rc->n_files : c->m->n_files;
}

static void note_changed(struct vctx *c, const char *rel)
{
    if (CDD_GROW(c->changed, NULL, c->n_changed + 1, changed_max(c),
                 "changed files") != 0) {
        cdd_clear_error();
        return; /* the library is still hashed before it is loaded */
    }
    if ((c->changed[c->n_changed] = strdup(rel)) != NULL)
        c->n_changed++;
}

/* *nothing: no receipt, and not one of the manifest's files is there (the
 * caller then says so once, instead of a failure per file and library). */
static int files_layer(struct vctx *c, int *nothing)
{
    size_t bad = 0, n = 0, shown = 0, missing = 0;
    *nothing = 0;
    char **known = NULL;
    int r = 0;
    if (c->rc) {
        n = c->rc->n_files;
        known = calloc(n ? n : 1, sizeof *known);
        if (!known)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        for (size_t i = 0; i < n; i++) {
            const struct cdd_rfile_entry *f = &c->rc->files[i];
            enum cdd_action a;
            char *detail = NULL;
            known[i] = f->path;
            r = cdd_check_installed(c->tree, f, 1, &a, &detail);
            if (r)
                goto out;
            size_t bad_before = bad;
            if (a != CDD_ACT_UNCHANGED) {
                bad++;
                if (shown++ < MAX_FILE_FAILS)
                    VCHECK(c, "files.changed", CDD_CHECK_FAIL,
                           "%s: %s since install", f->path,
                           detail ? detail : cdd_action_name(a));
            } else if (f->is_symlink) {
                check_chain(c, f->path, &bad);
            }
            if (bad != bad_before)
                note_changed(c, f->path);
            free(detail);
        }
    } else {
        /* No receipt: check what the manifest says should be there. */
        n = c->m->n_files;
        known = calloc(n ? n : 1, sizeof *known);
        if (!known)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        for (size_t i = 0; i < n; i++) {
            const struct cdd_mfile *f = &c->m->files[i];
            char *dest = NULL;
            enum cdd_action a;
            char *detail = NULL;
            r = cdd_layout_entry_dest(c->layout, c->m, f->role, f->path,
                                      f->target, &dest);
            if (r)
                goto out;
            known[i] = dest;
            int sym = f->role == CDD_ROLE_SYMLINK;
            if (sym || f->has_size) {
                r = cdd_tree_compare(c->tree, dest, sym, f->target, f->size,
                                     f->sha256, f->has_sha256, &a, &detail);
            } else {
                /* Nothing to compare with: presence is all we can check. */
                struct cdd_stat st;
                r = cdd_tree_lstat(c->tree, dest, &st);
                a = !r && st.type == CDD_FT_FILE ? CDD_ACT_UNCHANGED
                                                 : CDD_ACT_MISSING;
            }
            missing += a == CDD_ACT_MISSING;
            size_t bad_before = bad;
            if (a != CDD_ACT_UNCHANGED) {
                bad++;
                if (shown++ < MAX_FILE_FAILS)
                    VCHECK(c, "files.manifest", CDD_CHECK_FAIL, "%s: %s",
                           dest, detail ? detail : cdd_action_name(a));
            } else if (sym) {
                check_chain(c, dest, &bad);
            }
            if (bad != bad_before)
                note_changed(c, dest);
            free(detail);
        }
    }
    if (!c->rc && n > 0 && missing == n) {
        *nothing = 1;
        goto out;
    }
    if (shown > MAX_FILE_FAILS)
        VCHECK(c, "files.changed", CDD_CHECK_FAIL, "... and %zu more",
               shown - MAX_FILE_FAILS);
    if (bad == 0)
        VCHECK(c, "files", CDD_CHECK_PASS, "all %zu files present and %s", n,
               c->rc ? "unchanged since install (sha256)"
                     : "as the manifest says (no receipt: not installed by "
                       "cudnn-deploy)");
    else
        VCHECK(c, "files", CDD_CHECK_FAIL,
               "%zu of %zu files missing or changed%s", bad, n,
               c->rc ? "; reinstall to repair (cudnn-deploy install ...)" : "");
    check_strays(c, known, n);
out:
    if (!c->rc)
        for (size_t i = 0; known && i < n; i++)
            free(known[i]);
    free(known);
    return r;
}

/* ---- orchestration -------------------------------------------------------- */

static int load_recorded_manifest(struct cdd_tree *tree,
                                  struct cdd_manifest **out)
{
    char *p = cdd_tree_abs(tree, CDD_MANIFEST_COPY), *text = NULL;
    struct cdd_stat st = {0};
    size_t len = 0;
    int r = p ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    *out = NULL;
    if (!r && cdd_tree_has_state(tree))
        r = cdd_tree_lstat(tree, CDD_MANIFEST_COPY, &st);
    if (!r && st.type == CDD_FT_FILE)
        r = cdd_tree_read_all(tree, CDD_MANIFEST_COPY, 64u << 20, &text, &len);
    if (!r && text)
        r = cdd_manifest_parse(text, len, p, out);
    free(text);
    free(p);
    return r;
}

static int resolve_libs(struct vctx *c)
{
    const struct cdd_mverify *v = &c->m->verify;
    c->libs = calloc(v->n_sublibs + 1, sizeof *c->libs);
    if (!c->libs)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i <= v->n_sublibs; i++) {
        struct vlib *l = &c->libs[i];
        l->archive_path = i == 0 ? v->library : v->sublibs[i - 1].library;
        l->check_symbol = i == 0 ? NULL : v->sublibs[i - 1].check_symbol;
        l->is_main = i == 0;
        const struct cdd_mfile *f = cdd_manifest_file(c->m, l->archive_path);
        char *dest = NULL;
        int r = cdd_layout_entry_dest(c->layout, c->m,
                                      f ? f->role : CDD_ROLE_RUNTIME,
                                      l->archive_path, f ? f->target : NULL,
                                      &dest);
        if (r)
            return r;
        /* The loader takes an absolute path; the files layer has resolved
         * every folder on the way beneath the root already. */
        l->installed = cdd_tree_abs(c->tree, dest);
        l->name = strdup(cdd_path_basename(dest));
        l->rel = dest;
        c->n_libs++;
        if (!l->installed || !l->name)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    return 0;
}

static void free_libs(struct vctx *c)
{
    /* Sub-libraries first: the main library may still reference them; then
     * what was loaded for them from the tree. The private copies go once
     * nothing of them is loaded. */
    for (size_t i = c->n_libs; i-- > 0;)
        cdd_lib_close(c->libs[i].handle);
    for (size_t i = c->n_tree_deps; i-- > 0;)
        cdd_lib_close(c->tree_deps[i]);
    free(c->tree_deps);
    for (size_t i = 0; i < c->n_loaded; i++)
        free(c->loaded[i].path);
    free(c->loaded);
    cdd_verify_copies_remove(c);
    for (size_t i = 0; i < c->n_libs; i++) {
        free(c->libs[i].installed);
        free(c->libs[i].name);
        free(c->libs[i].rel);
        free(c->libs[i].copy);
        free(c->libs[i].skip);
    }
    free(c->libs);
    for (size_t i = 0; i < c->n_changed; i++)
        free(c->changed[i]);
    free(c->changed);
    cdd_verify_trust_clear(c);
}

int cdd_verify(const struct cdd_verify_opts *o, struct cdd_verify_result *res)
{
    struct vctx c = {0};
    struct cdd_manifest *recorded = NULL;
    struct cdd_receipt *rc = NULL;
    char *driver = NULL;
    int r = 0;
    memset(res, 0, sizeof *res);
    c.o = o;
    c.res = res;
    c.tree = o->tree;
    c.root = cdd_tree_root(o->tree);

    if (!o->receipt)
        r = cdd_receipt_load(c.tree, &rc);
    if (!r && !o->m)
        r = load_recorded_manifest(c.tree, &recorded);
    if (r)
        goto out;
    c.rc = o->receipt ? o->receipt : rc;
    c.m = o->m ? o->m : recorded;
    if (!c.m) {
        r = cdd_fail(CDD_E_NOTFOUND, c.root, 0,
                     "nothing installed by cudnn-deploy here (no receipt); "
                     "give --manifest NAME|FILE to check against a manifest");
        goto out;
    }
    /* The copy in .cudnn-deploy is named manifest.json; the receipt knows
     * the name it was installed under. */
    res->manifest_name = strdup(!o->m && c.rc && c.rc->manifest_name
                                    ? c.rc->manifest_name
                                    : c.m->name ? c.m->name : c.m->source);
    c.layout = cdd_layout_select(o->target->kind, c.m->platform);
    /* The receipt says where install put the files (bin or bin/x64). */
    if (rc && rc->layout)
        (void)cdd_layout_parse(rc->layout, &c.layout);
    c.host_can_load = c.m->platform == cdd_platform_host();

    /* Default level: gpu when a driver is there to use, else load. */
    char why_none[1024] = ""; /* fixed: an error record's message (same size) */
    int have_driver = cdd_driver_library_path(&driver) == 0;
    if (!have_driver)
        snprintf(why_none, sizeof why_none, "%s", cdd_last_error()->msg);
    cdd_clear_error();
    res->level = o->level >= 0 ? o->level
                               : have_driver ? CDD_LEVEL_GPU : CDD_LEVEL_LOAD;

    int nothing = 0;
    r = files_layer(&c, &nothing);
    if (!r && nothing) {
        cdd_checks_clear(&res->checks);
        VCHECK(&c, "files", CDD_CHECK_FAIL,
               "nothing installed: none of the %zu files of %s is in the "
               "tree, and there is no receipt (install it with cudnn-deploy "
               "install)", c.m->n_files, res->manifest_name);
        goto out;
    }
    if (r || res->level < CDD_LEVEL_LOAD)
        goto out;
    if (!c.m->has_verify) {
        VCHECK(&c, "load", CDD_CHECK_SKIP,
               "manifest %s has no verify section (which libraries, which "
               "version): nothing to load", res->manifest_name);
        goto out;
    }
    r = resolve_libs(&c);
    if (!r)
        r = cdd_verify_load_layer(&c);
    if (!r)
        r = cdd_verify_barename_layer(&c);
    if (!r)
        r = cdd_verify_fit_layer(&c);
    /* The default level without a driver still says that the gpu layer
     * did not run, and why (a skip, not a failure). */
    if (!r && o->level < 0 && !have_driver)
        cdd_verify_gpu_layer(&c, 0, NULL, why_none);
    if (r || res->level < CDD_LEVEL_GPU)
        goto out;
    /* Apart (apart.c): a driver or cuDNN that crashes is a finding. */
    cdd_verify_gpu_apart(&c, res->level >= CDD_LEVEL_BENCH,
                         have_driver ? driver : NULL, why_none);
out:
    free_libs(&c);
    free(driver);
    cdd_receipt_free(rc);
    cdd_manifest_free(recorded);
    /* A check that could not be done or recorded for lack of memory: the
     * findings are incomplete, so none are reported as the answer. */
    if (!r && res->checks.nomem)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, "out of memory while verifying: "
                                          "the checks are incomplete");
    else if (!r && res->checks.toolong)
        r = cdd_fail(CDD_E_TOOLONG, NULL, 0,
                     "a check did not fit (more than %d checks, or a detail "
                     "longer than %zu bytes): the checks are incomplete",
                     CDD_CHECKS_MAX, (size_t)CDD_TEXT_MAX);
    return r;
}
