/* install: pin check, streaming check + staging, plan against the tree,
 * receipt, transactional commit, log. Nothing reaches the tree unless the
 * whole archive matched the manifest; the transaction (txn.c) makes the move
 * into place all-or-nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cdd/bghash.h"
#include "cdd/binfile.h"
#include "cdd/cudatree.h"
#include "cdd/deploy.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "idcache.h"
#include "cdd/jsonw.h"
#include "cdd/pathsafe.h"
#include "cdd/profile.h"
#include "cdd/receipt.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/thread.h"
#include "cdd/tree.h"
#include "treecheck.h"
#include "txn.h"
#include "component_int.h"
#include "plan_int.h"

struct inst {
    const struct cdd_install_opts *o;
    struct cdd_install_result *res;
    enum cdd_layout_id layout;
    struct cdd_txn *txn;        /* NULL in a dry run */
    struct cdd_tree *tree;
    uint64_t archive_size;
    int jobs;
    uint8_t (*with_sha256)[CDD_SHA256_LEN]; /* each component's archive */
    /* One open file from pin to extraction (issue 18): the archive and each
     * component's, held from the first hash to the last byte unpacked. */
    struct cdd_rfile *af;
    struct cdd_finfo af_at;
    struct cdd_rfile **with_f;
    struct cdd_finfo *with_at;
    struct cdd_idcache ids; /* identity records (tree/idcache.h) */
    int ids_dirty;          /* records renewed: write them back */
};

void cdd_install_result_clear(struct cdd_install_result *r)
{
    if (!r)
        return;
    cdd_plan_clear(&r->plan);
    free(r->txn_id);
    cdd_recovery_clear(&r->recovery);
    cdd_receipt_free(r->receipt);
    memset(r, 0, sizeof *r);
}

/* A staged file's tree path: <stage>/<dest>. */
static char *stage_path(struct inst *c, const char *dest)
{
    return cdd_path_join(cdd_txn_stage_rel(c->txn), dest);
}

/* Map an entry to its destination and record it in the plan, refusing two
 * entries that would land on the same file (case-insensitively: a tree may
 * be used from Windows). */
static int plan_entry(struct inst *c, const struct cdd_xentry *e,
                      struct cdd_plan_item **out)
{
    char *dest = NULL;
    /* A symlink goes beside what it points at (its link_role's folder). */
    int r = cdd_layout_dest(c->layout,
                            e->type == CDD_ENTRY_SYMLINK ? e->link_role
                                                         : e->role,
                            e->path, &dest);
    if (r) {
        /* Out of memory (the joined path) is not a fault of the archive:
         * it keeps its code, and gets its words (a NOMEM carries no
         * message, so the rewrap used to print "entry \"...\": " and
         * exit 3; docs/reliability.md, Memory exhaustion). */
        if (r == CDD_E_NOMEM)
            r = cdd_fail(CDD_E_NOMEM, c->o->archive_path, 0,
                         "entry \"%s\": out of memory", e->raw_path);
        else
            r = cdd_fail(CDD_E_ARCHIVE, c->o->archive_path, 0, "entry \"%s\": %s",
                         e->raw_path, cdd_last_error()->msg);
        goto out;
    }
    struct cdd_plan_item *dup = cdd_plan_find(&c->res->plan, dest, 1);
    if (dup) {
        r = cdd_fail(CDD_E_UNSAFE, c->o->archive_path, 0,
                     "entry \"%s\" would land on %s, like another entry",
                     e->raw_path, dup->path);
        goto out;
    }
    struct cdd_plan_item *it = cdd_plan_add(&c->res->plan, dest);
    if (!it) {
        r = cdd_last_error()->code;
        goto out;
    }
    it->role = e->role;
    /* The profile's one decision (profile.c); the entry is still checked. */
    it->omitted_role = e->type == CDD_ENTRY_SYMLINK ? e->link_role : e->role;
    it->omitted = !cdd_profile_keeps(c->o->profile, it->omitted_role);
    if (e->type == CDD_ENTRY_SYMLINK) {
        it->is_symlink = 1;
        if (!(it->link_target = strdup(e->link_target))) {
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            goto out;
        }
    }
    *out = it;
out:
    free(dest);
    return r;
}

/* The sink is called from several extraction workers at once (files'
 * begin() and end(), each for its own entry); entry() and symlinks' end()
 * come on the calling thread, in archive order, before any worker starts.
 * So the plan is built, with all its allocations, in entry(), and the
 * workers touch only their own item: items[e->index] (one item per entry,
 * in entry order), never the plan's array itself. Staging folders are made
 * in entry() too, so no two workers race to create one. The tree handle is
 * only read (lstat, hash) and used to create files under folders that
 * exist, concurrently. */
static struct cdd_plan_item *item_of(struct inst *c, const struct cdd_xentry *e)
{
    return &c->res->plan.items[e->index];
}

static int sink_entry(void *ud, const struct cdd_xentry *e)
{
    struct inst *c = ud;
    struct cdd_plan_item *it = NULL;
    int r;
    if (c->res->plan.n != e->index)
        return cdd_fail(CDD_E_ARCHIVE, c->o->archive_path, 0,
                        "entry \"%s\": out of order", e->raw_path);
    if ((r = plan_entry(c, e, &it)) < 0 || !c->txn || it->omitted)
        return r;
    char *rel = stage_path(c, it->path);
    if (!rel)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    r = cdd_tree_mkparents(c->tree, rel);
    free(rel);
    return r;
}

static int sink_begin(void *ud, const struct cdd_xentry *e,
                      struct cdd_file **out)
{
    struct inst *c = ud;
    struct cdd_plan_item *it = item_of(c, e);
    int r;
    if (!c->txn || it->omitted)
        return 0;
    /* A re-install writes nothing for a file the tree already holds: when
     * the manifest pins its bytes and the installed copy hashes to them,
     * the entry is only streamed through the check. */
    if (e->mfile && e->mfile->has_sha256 && e->mfile->has_size) {
        struct cdd_stat st;
        uint8_t got[CDD_SHA256_LEN];
        int same = cdd_tree_lstat(c->tree, it->path, &st) == 0 &&
                   st.type == CDD_FT_FILE && st.size == e->mfile->size &&
                   cdd_tree_sha256(c->tree, it->path, got, NULL) == 0 &&
                   memcmp(got, e->mfile->sha256, CDD_SHA256_LEN) == 0;
        cdd_clear_error();
        if (same) {
            it->in_place = 1;
            return 0;
        }
    }
    char *rel = stage_path(c, it->path);
    if (!rel)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    r = cdd_tree_create(c->tree, rel, e->role == CDD_ROLE_RUNTIME, out);
    if (!r && e->mfile && e->mfile->has_size)
        r = cdd_file_preallocate(*out, e->mfile->size);
    free(rel);
    return r;
}

/* The modification time a file will have in the tree (rename keeps it),
 * for the receipt: the unchanged re-install compares it. */
static int note_mtime(struct inst *c, const char *rel, int64_t *mtime_ns)
{
    struct cdd_stat st;
    int r = rel ? cdd_tree_lstat(c->tree, rel, &st)
                : cdd_fail(CDD_E_NOMEM, 0, 0, 0);
    *mtime_ns = r ? 0 : st.mtime_ns;
    return r;
}

static int staged_machine_check(struct inst *c, const char *rel,
                                const char *shown)
{
    struct cdd_rfile *rf = NULL;
    int r = rel ? cdd_tree_open_read(c->tree, rel, &rf)
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (!r)
        r = cdd_bin_machine_check(rf, c->o->m->platform, shown, 0);
    cdd_rfile_close(rf);
    return r;
}

static int sink_end(void *ud, const struct cdd_xentry *e, struct cdd_file *f)
{
    struct inst *c = ud;
    struct cdd_plan_item *it = item_of(c, e);
    int r = 0;
    if (e->type == CDD_ENTRY_SYMLINK) {
        if (!c->txn || it->omitted)
            return 0;
        char *rel = stage_path(c, it->path);
        if (!rel)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        r = cdd_tree_symlink(c->tree, e->link_target, rel);
        if (!r && c->o->has_mtime)
            r = cdd_tree_set_mtime(c->tree, rel, c->o->mtime);
        free(rel);
        return r;
    }
    if (f) {
        /* Each worker flushes its own files: the fsyncs run in parallel,
         * all before the commit. */
        if ((r = cdd_file_finish(f)))
            return r;
        char *rel = stage_path(c, it->path);
        /* --mtime: set on the staged copy, so the commit's rename brings
         * the file in with its final time. */
        if (rel && c->o->has_mtime &&
            (r = cdd_tree_set_mtime(c->tree, rel, c->o->mtime)) < 0) {
            free(rel);
            return r;
        }
        r = note_mtime(c, rel, &it->mtime_ns);
        /* A runtime library must be of the manifest's platform and machine
         * (an AArch64 .so in an x86-64 archive, an ARM64 DLL in an x64
         * zip): read back from the stage through the tree handle. */
        if (!r && e->role == CDD_ROLE_RUNTIME)
            r = staged_machine_check(c, rel, e->path);
        free(rel);
        if (r)
            return r;
    }
    it->size = e->size;
    memcpy(it->sha256, e->sha256, CDD_SHA256_LEN);
    return 0;
}

static void sink_progress(void *ud, uint64_t done, uint64_t total)
{
    struct inst *c = ud;
    if (c->o->progress)
        c->o->progress(c->o->progress_ud, "check", done, total);
}

static int check_unpinned(struct inst *c);

/* Whether anything pins the archive's bytes, and a --sha256 that is no
 * sha256 refused, before any work: the extraction runs while the archive is
 * hashed, and is told the archive is pinned if a pin exists (check_pins
 * refuses the install afterwards if the pin does not match). */
static int pin_expected(struct inst *c, int *pinned)
{
    *pinned = c->o->m->archive.has_sha256 || c->o->sha256;
    return *pinned ? 0 : check_unpinned(c);
}

/* Pins, in order: the manifest's archive sha256, --sha256; without either,
 * a manifest that hashes every file still vouches for every byte. The
 * archive's hash (res->archive_sha256, archive_size) is already computed. */
static int check_pins(struct inst *c)
{
    const struct cdd_manifest *m = c->o->m;
    struct cdd_install_result *res = c->res;
    char got[CDD_SHA256_HEX], want[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    cdd_hex_encode(res->archive_sha256, CDD_SHA256_LEN, got);
    if (m->archive.has_size && m->archive.size != res->archive_size)
        return cdd_fail(CDD_E_CHECKSUM, c->o->archive_path, 0,
                        "size %llu bytes, but the manifest %s says %llu",
                        (unsigned long long)res->archive_size, m->source,
                        (unsigned long long)m->archive.size);
    if (m->archive.has_sha256) {
        cdd_hex_encode(m->archive.sha256, CDD_SHA256_LEN, want);
        if (memcmp(m->archive.sha256, res->archive_sha256, CDD_SHA256_LEN))
            return cdd_fail(CDD_E_CHECKSUM, c->o->archive_path, 0,
                            "sha256 %s does not match %s's pin %s", got,
                            m->source, want);
        res->pinned = 1;
        res->pin_source = CDD_PIN_MANIFEST;
    }
    if (c->o->sha256) {
        cdd_hex_encode(c->o->sha256, CDD_SHA256_LEN, want);
        if (memcmp(c->o->sha256, res->archive_sha256, CDD_SHA256_LEN))
            return cdd_fail(CDD_E_CHECKSUM, c->o->archive_path, 0,
                            "sha256 %s does not match --sha256 %s", got,
                            want);
        if (!res->pinned) {
            res->pinned = 1;
            res->pin_source = c->o->sha256_source ? c->o->sha256_source
                                                  : CDD_PIN_OPTION;
        }
    }
    if (res->pinned)
        return 0;
    return check_unpinned(c);
}

/* Nothing pins the archive: only a manifest that hashes every file, or
 * --allow-unpinned, lets it in. */
static int check_unpinned(struct inst *c)
{
    const struct cdd_manifest *m = c->o->m;
    struct cdd_install_result *res = c->res;
    int all_hashed = m->files_exact;
    for (size_t i = 0; all_hashed && i < m->n_files; i++)
        if (m->files[i].role != CDD_ROLE_SYMLINK && !m->files[i].has_sha256)
            all_hashed = 0;
    if (all_hashed) {
        res->pin_source = CDD_PIN_PER_FILE;
        return 0;
    }
    if (c->o->allow_unpinned) {
        res->pin_source = CDD_PIN_UNPINNED;
        return 0;
    }
    return cdd_fail(CDD_E_UNPINNED, c->o->archive_path, 0,
                    "%s has no sha256 for this archive, so its bytes cannot "
                    "be verified; give --sha256 HEX (NVIDIA publishes it in "
                    "redistrib_%s.json) or, accepting the risk, "
                    "--allow-unpinned",
                    m->source, m->version);
}

static int is_windows_layout(enum cdd_layout_id l)
{
    return cdd_layout_case_insensitive(l);
}

/* What a file that goes to backup is now (for the journal and receipt: a
 * restore brings back only that). */
static int record_prev(struct inst *c, const char *rel, struct cdd_jprev *pv)
{
    struct cdd_stat st;
    int r = cdd_tree_lstat(c->tree, rel, &st);
    memset(pv, 0, sizeof *pv);
    if (r || st.type == CDD_FT_NONE)
        return r;
    if (st.type == CDD_FT_SYMLINK) {
        r = cdd_tree_readlink_dup(c->tree, rel, &pv->target);
        if (!r)
            pv->type = CDD_FT_SYMLINK;
        return r;
    }
    if (st.type != CDD_FT_FILE)
        return 0;
    r = cdd_tree_sha256(c->tree, rel, pv->sha256, &pv->size);
    if (!r)
        pv->type = CDD_FT_FILE;
    return r;
}

/* On a Windows layout, a destination the tree holds under another case
 * (bin/CUDNN64_8.DLL for bin/cudnn64_8.dll) is the file to replace: NTFS
 * would open it by either name. A case-insensitive filesystem already finds
 * it by the manifest's name; on a case-sensitive one (a tree prepared on
 * Linux) the variant is looked up here. *on_disk: its tree path, or NULL. */
static int find_case_variant(struct inst *c, const char *rel, char **on_disk)
{
    *on_disk = NULL;
    if (!is_windows_layout(c->layout))
        return 0;
    const char *slash = strrchr(rel, '/');
    char *dir = strdup(rel), *found = NULL;
    if (!dir)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    dir[slash ? (size_t)(slash - rel) : 0] = '\0';
    int r = cdd_tree_find_case(c->tree, dir, slash ? slash + 1 : rel, &found);
    if (!r && found && strcmp(found, slash ? slash + 1 : rel) != 0) {
        *on_disk = *dir ? cdd_path_join(dir, found) : strdup(found);
        if (!*on_disk)
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    free(found);
    free(dir);
    return r;
}

/* On a Windows layout, folders of the destination that the tree holds
 * under another case (BIN for bin) are the folders to install into: NTFS
 * would open them by either name. On a case-insensitive filesystem they are
 * found by the manifest's name already; on a case-sensitive one each
 * missing folder is looked up by listing its parent, and the item's path
 * takes the tree's spelling (the staged copy keeps the manifest's). */
static int fold_case_dirs(struct inst *c, struct cdd_plan_item *it)
{
    if (!is_windows_layout(c->layout) || !strchr(it->path, '/'))
        return 0;
    char *disk = strdup(it->path);
    int r = disk ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (char *s = disk ? strchr(disk, '/') : NULL; !r && s;
         s = strchr(s + 1, '/')) {
        struct cdd_stat st;
        *s = '\0';
        r = cdd_tree_lstat(c->tree, disk, &st);
        if (!r && st.type == CDD_FT_NONE) {
            char *slash = strrchr(disk, '/'), *found = NULL;
            const char *name = slash ? slash + 1 : disk;
            if (slash)
                *slash = '\0';
            r = cdd_tree_find_case(c->tree, slash ? disk : "", name, &found);
            if (slash)
                *slash = '/';
            /* Same length in bytes is not given by case folding: only a
             * variant of equal length is spliced in place. */
            if (!r && found && strlen(found) == strlen(name))
                memcpy((char *)name, found, strlen(found));
            free(found);
        }
        *s = '/';
    }
    if (!r && strcmp(disk, it->path) != 0) {
        it->staged = it->path;
        it->path = disk;
        disk = NULL;
    }
    free(disk);
    return r;
}

/* Decide new / replace / unchanged for every entry, and plan the removal
 * of files an earlier install put here that this one does not bring. */
static int plan_against_tree(struct inst *c, const struct cdd_receipt *prev)
{
    struct cdd_plan *p = &c->res->plan;
    size_t n = p->n;
    for (size_t i = 0; i < n; i++) {
        struct cdd_plan_item *it = &p->items[i];
        struct cdd_stat st;
        int r = fold_case_dirs(c, it);
        if (!r)
            r = cdd_tree_lstat(c->tree, it->path, &st);
        if (r)
            return r;
        if (st.type == CDD_FT_DIR || st.type == CDD_FT_OTHER)
            return cdd_fail(CDD_E_TARGET, cdd_tree_root(c->tree), 0,
                            "%s exists and is not a file; remove it first",
                            it->path);
        if (it->in_place) {
            it->action = CDD_ACT_UNCHANGED;
            continue;
        }
        if (st.type == CDD_FT_NONE) {
            r = find_case_variant(c, it->path, &it->on_disk);
            if (r)
                return r;
            if (it->on_disk) {
                /* Replaced and backed up under its own name; the new file
                 * takes the manifest's (docs: README, case variants). */
                it->action = CDD_ACT_REPLACE;
                r = record_prev(c, it->on_disk, &it->prev);
                if (!r && it->prev.type == CDD_FT_NONE)
                    r = cdd_fail(CDD_E_TARGET, cdd_tree_root(c->tree), 0,
                                 "%s exists and is not a file; remove it "
                                 "first", it->on_disk);
                if (r)
                    return r;
                continue;
            }
        }
        /* What is there, recorded once (hashed once): it decides new,
         * replace or unchanged, and is the backup's record if replaced. */
        if (st.type == CDD_FT_NONE) {
            it->action = CDD_ACT_NEW;
            continue;
        }
        r = record_prev(c, it->path, &it->prev);
        if (r)
            return r;
        int same = it->is_symlink
                       ? it->prev.type == CDD_FT_SYMLINK &&
                             strcmp(it->prev.target, it->link_target) == 0
                       : it->prev.type == CDD_FT_FILE &&
                             it->prev.size == it->size &&
                             memcmp(it->prev.sha256, it->sha256,
                                    CDD_SHA256_LEN) == 0;
        it->action = same ? CDD_ACT_UNCHANGED : CDD_ACT_REPLACE;
        if (same)
            cdd_jprev_clear(&it->prev);
    }
    for (size_t i = 0; prev && i < prev->n_files; i++) {
        const struct cdd_rfile_entry *f = &prev->files[i];
        if (cdd_plan_find(p, f->path, 0))
            continue;
        struct cdd_stat st;
        int r = cdd_tree_lstat(c->tree, f->path, &st);
        if (r)
            return r;
        if (st.type == CDD_FT_NONE)
            continue;
        struct cdd_plan_item *it = cdd_plan_add(p, f->path);
        if (!it)
            return cdd_last_error()->code;
        it->role = f->role;
        it->action = CDD_ACT_REMOVE;
        it->is_symlink = f->is_symlink;
        if (f->is_symlink && !(it->link_target = strdup(f->link_target)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        if ((r = record_prev(c, f->path, &it->prev)) != 0)
            return r;
    }
    return 0;
}

/* Add s to a receipt list once; a list holds paths of one package, so no
 * more than CDD_MAX_ENTRIES of them. */
static int strv_add(char ***v, size_t *n, const char *s, const char *what)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*v)[i], s) == 0)
            return 0;
    int r = cdd_grow(v, NULL, *n + 1, sizeof **v, CDD_MAX_ENTRIES, what);
    if (r)
        return r;
    if (!((*v)[*n] = strdup(s)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    (*n)++;
    return 0;
}

/* A backed-up path with its record. */
static int backup_add(struct cdd_receipt *rc, const char *path,
                      const struct cdd_jprev *pv)
{
    size_t n = rc->n_backed_up;
    int r = strv_add(&rc->backed_up, &rc->n_backed_up, path,
                     "receipt backups");
    if (r || rc->n_backed_up == n)
        return r;
    if ((r = CDD_GROW(rc->backed_up_prev, NULL, rc->n_backed_up,
                      CDD_MAX_ENTRIES, "receipt backups"))) {
        free(rc->backed_up[n]);
        rc->n_backed_up = n;
        return r;
    }
    struct cdd_jprev *v = rc->backed_up_prev;
    memset(&v[n], 0, sizeof v[n]);
    return pv ? (cdd_jprev_copy(&v[n], pv) ? cdd_fail(CDD_E_NOMEM, 0, 0, 0)
                                           : 0)
              : 0;
}

/* Folders the commit will create, outermost first (uninstall removes them
 * again when they end up empty). */
static int note_missing_dirs(struct inst *c, const char *rel,
                             struct cdd_receipt *rc)
{
    char *d = strdup(rel);
    int r = 0;
    if (!d)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (char *s = strchr(d, '/'); s && !r; s = strchr(s + 1, '/')) {
        *s = '\0';
        struct cdd_stat st;
        r = cdd_tree_lstat(c->tree, d, &st);
        if (!r && st.type == CDD_FT_NONE)
            r = strv_add(&rc->created_dirs, &rc->n_created_dirs, d,
                         "receipt folders");
        *s = '/';
    }
    free(d);
    return r;
}

/* The optional components taken (install --with), with the hash of the
 * archive each came from. */
static int receipt_components(struct inst *c, struct cdd_receipt *rc)
{
    const struct cdd_install_opts *o = c->o;
    if (!o->n_with)
        return 0;
    if (!(rc->components = calloc(o->n_with, sizeof *rc->components)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < o->n_with; i++) {
        struct cdd_rcomponent *k = &rc->components[rc->n_components++];
        k->name = strdup(o->with[i].c->name);
        k->archive_filename =
            strdup(cdd_path_basename(o->with[i].archive_path));
        memcpy(k->archive_sha256, c->with_sha256[i], CDD_SHA256_LEN);
        if (!k->name || !k->archive_filename)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    return 0;
}

/* The receipt names the same components, from the same archives. */
static int same_components(const struct inst *c,
                           const struct cdd_receipt *prev)
{
    if (prev->n_components != c->o->n_with)
        return 0;
    for (size_t i = 0; i < c->o->n_with; i++)
        if (strcmp(prev->components[i].name, c->o->with[i].c->name) != 0 ||
            memcmp(prev->components[i].archive_sha256, c->with_sha256[i],
                   CDD_SHA256_LEN) != 0)
            return 0;
    return 1;
}

/* Hash every component's archive against its pin (before the unchanged
 * re-install compares them with the receipt's). */
static int check_components(struct inst *c)
{
    for (size_t i = 0; i < c->o->n_with; i++) {
        int r = cdd_archive_hold(c->o->with[i].archive_path, &c->with_f[i],
                                 &c->with_at[i]);
        if (!r)
            r = cdd_component_pin_check(&c->o->with[i], c->with_f[i],
                                        c->with_sha256[i]);
        if (r)
            return r;
    }
    return 0;
}

static int build_receipt(struct inst *c, struct cdd_receipt *rc,
                         const struct cdd_receipt *prev)
{
    const struct cdd_manifest *m = c->o->m;
    const struct cdd_plan *p = &c->res->plan;
    char when[32], ver[32]; /* fixed: an ISO time, a version of 3 ints */
    int r;
    cdd_iso_time(when, sizeof when);
    /* --mtime / SOURCE_DATE_EPOCH is the time of the build: the receipt
     * (and the SBOM made from it) says that, not the clock. */
    if (c->o->has_mtime) {
        time_t t = (time_t)c->o->mtime;
        struct tm *tm = gmtime(&t);
        if (tm)
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", tm);
    }
    rc->schema_version = 1;
    rc->tool_version = strdup(CDD_VERSION_STRING);
    rc->txn_id = strdup(cdd_txn_id(c->txn));
    rc->installed_at = strdup(when);
    rc->manifest_name = strdup(m->name ? m->name : m->source);
    memcpy(rc->manifest_sha256, m->doc_sha256, CDD_SHA256_LEN);
    rc->product = strdup(m->product);
    rc->version = strdup(m->version);
    rc->platform = strdup(cdd_platform_name(m->platform));
    rc->cuda_major = m->cuda_major;
    rc->layout = strdup(cdd_layout_name(c->layout));
    rc->target_kind = strdup(cdd_target_kind_name(c->o->target->kind));
    if (c->o->target->version.known) {
        const struct cdd_cuda_version *v = &c->o->target->version;
        if (v->patch >= 0)
            snprintf(ver, sizeof ver, "%d.%d.%d", v->major, v->minor, v->patch);
        else
            snprintf(ver, sizeof ver, "%d.%d", v->major, v->minor);
        rc->cuda_version = strdup(ver);
    }
    rc->archive_filename = strdup(cdd_path_basename(c->o->archive_path));
    memcpy(rc->archive_sha256, c->res->archive_sha256, CDD_SHA256_LEN);
    rc->archive_size = c->res->archive_size;
    rc->archive_pinned = c->res->pinned;
    rc->pin_source = strdup(cdd_pin_name(c->res->pin_source));
    if (c->o->selection && !(rc->selection = strdup(c->o->selection)))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    rc->profile = c->o->profile;
    memcpy(rc->omitted, c->res->omitted, sizeof rc->omitted);
    if (m->archive.n_urls && !(rc->archive_url = strdup(m->archive.urls[0])))
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if ((r = receipt_components(c, rc)) < 0)
        return r;
    if (!rc->tool_version || !rc->txn_id || !rc->installed_at ||
        !rc->manifest_name || !rc->product || !rc->version || !rc->platform ||
        !rc->layout || !rc->target_kind || !rc->archive_filename ||
        !rc->pin_source)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    rc->files = calloc(p->n ? p->n : 1, sizeof *rc->files);
    if (!rc->files)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (size_t i = 0; i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        if (it->action == CDD_ACT_REPLACE || it->action == CDD_ACT_REMOVE) {
            r = backup_add(rc, it->on_disk ? it->on_disk : it->path,
                           &it->prev);
            if (r)
                return r;
        }
        if (it->action == CDD_ACT_REMOVE)
            continue;
        if (it->action == CDD_ACT_NEW) {
            r = note_missing_dirs(c, it->path, rc);
            if (r)
                return r;
        }
        struct cdd_rfile_entry *f = &rc->files[rc->n_files++];
        f->path = strdup(it->path);
        f->role = it->role;
        f->is_symlink = it->is_symlink;
        f->preexisting = it->action == CDD_ACT_UNCHANGED;
        f->size = it->size;
        f->mtime_ns = it->mtime_ns;
        /* The tree's own copy stays: its time is the one to match. */
        if (!it->is_symlink && it->action == CDD_ACT_UNCHANGED &&
            (r = note_mtime(c, it->path, &f->mtime_ns)) < 0)
            return r;
        /* --mtime: what every file has once the install ends (set_times). */
        if (!it->is_symlink && c->o->has_mtime)
            f->mtime_ns = c->o->mtime * INT64_C(1000000000);
        memcpy(f->sha256, it->sha256, CDD_SHA256_LEN);
        if (!f->path || (it->is_symlink && !(f->link_target =
                                                 strdup(it->link_target))))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    /* The previous receipt and manifest copy are replaced too: back them up
     * so uninstall brings the earlier install's record back with its files. */
    if (prev) {
        const char *state[] = {CDD_RECEIPT_FILE, CDD_MANIFEST_COPY};
        for (size_t i = 0; i < 2; i++) {
            struct cdd_jprev pv;
            r = record_prev(c, state[i], &pv);
            if (!r)
                r = backup_add(rc, state[i], pv.type ? &pv : NULL);
            cdd_jprev_clear(&pv);
            if (r)
                return r;
        }
    }
    return 0;
}

/* Is the tree already exactly what this install would make it? */
static int same_as_before(const struct inst *c, const struct cdd_receipt *prev)
{
    const struct cdd_plan *p = &c->res->plan;
    if (!prev || memcmp(prev->archive_sha256, c->res->archive_sha256,
                        CDD_SHA256_LEN) != 0 ||
        memcmp(prev->manifest_sha256, c->o->m->doc_sha256, CDD_SHA256_LEN) != 0 ||
        strcmp(prev->layout, cdd_layout_name(c->layout)) != 0 ||
        prev->profile != c->o->profile ||
        prev->n_files != p->n || !same_components(c, prev))
        return 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->items[i].action != CDD_ACT_UNCHANGED ||
            !cdd_receipt_file(prev, p->items[i].path))
            return 0;
    return 1;
}

static int stage_text(struct inst *c, const char *dest, const char *text)
{
    char *abs = stage_path(c, dest);
    int r = abs ? cdd_tree_write_new(c->tree, abs, text, strlen(text))
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(abs);
    return r;
}

static int queue_commit(struct inst *c, const struct cdd_receipt *prev)
{
    struct cdd_receipt rc = {0};
    char *rtext = NULL, *mtext = NULL;
    struct cdd_plan *p = &c->res->plan;
    int r = build_receipt(c, &rc, prev);
    if (!r)
        r = cdd_receipt_to_json(&rc, &rtext);
    if (!r)
        r = cdd_manifest_to_json(c->o->m, &mtext);
    if (!r)
        r = stage_text(c, CDD_RECEIPT_FILE, rtext);
    if (!r)
        r = stage_text(c, CDD_MANIFEST_COPY, mtext);
    for (size_t i = 0; !r && i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        if (it->action == CDD_ACT_REMOVE) {
            r = cdd_txn_del(c->txn, it->path);
            if (!r && it->prev.type)
                r = cdd_txn_expect(c->txn, it->path, &it->prev);
        } else if (it->action == CDD_ACT_UNCHANGED && it->in_place) {
            /* never staged */
        } else if (it->action == CDD_ACT_UNCHANGED) {
            /* Identical bytes are already in place: drop the staged copy. */
            char *abs = stage_path(c, it->staged ? it->staged : it->path);
            r = abs ? cdd_tree_unlink(c->tree, abs)
                    : cdd_fail(CDD_E_NOMEM, 0, 0, 0);
            free(abs);
        } else {
            char *src = stage_path(c, it->staged ? it->staged : it->path);
            /* A case variant goes to backup under its own name. */
            if (it->on_disk) {
                r = cdd_txn_del(c->txn, it->on_disk);
                if (!r)
                    r = cdd_txn_expect(c->txn, it->on_disk, &it->prev);
            }
            if (!r)
                r = src ? cdd_txn_put(c->txn, src, it->path)
                        : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            if (!r && !it->on_disk && it->prev.type)
                r = cdd_txn_expect(c->txn, it->path, &it->prev);
            free(src);
        }
    }
    const char *state[] = {CDD_RECEIPT_FILE, CDD_MANIFEST_COPY};
    for (size_t i = 0; !r && i < 2; i++) {
        char *src = cdd_path_join(cdd_txn_stage_rel(c->txn), state[i]);
        r = src ? cdd_txn_put(c->txn, src, state[i])
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        free(src);
    }
    free(rtext);
    free(mtext);
    /* Kept for the closing verify: the hashes this install wrote. */
    if (!r && (c->res->receipt = malloc(sizeof rc)) != NULL) {
        memcpy(c->res->receipt, &rc, sizeof rc);
        memset(&rc, 0, sizeof rc);
    }
    cdd_receipt_clear(&rc);
    return r;
}

/* An unchanged re-install: the previous receipt, but every file's size and
 * hash as this install's plan has them (from the archive), so the closing
 * verify does not take them from the tree's receipt.json. */
static void keep_receipt_unchanged(struct inst *c, struct cdd_receipt *prev)
{
    const struct cdd_plan *p = &c->res->plan;
    for (size_t i = 0; i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        for (size_t k = 0; k < prev->n_files; k++) {
            struct cdd_rfile_entry *f = &prev->files[k];
            if (strcmp(f->path, it->path) != 0 || it->is_symlink ||
                it->in_place || f->is_symlink)
                continue;
            f->size = it->size;
            memcpy(f->sha256, it->sha256, CDD_SHA256_LEN);
        }
    }
    c->res->receipt = prev;
}

static void log_install(struct inst *c)
{
    char hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    size_t n_new = 0, n_rep = 0, n_rm = 0;
    for (size_t i = 0; i < c->res->plan.n; i++) {
        enum cdd_action a = c->res->plan.items[i].action;
        n_new += a == CDD_ACT_NEW;
        n_rep += a == CDD_ACT_REPLACE;
        n_rm += a == CDD_ACT_REMOVE;
    }
    cdd_hex_encode(c->res->archive_sha256, CDD_SHA256_LEN, hex);
    struct cdd_jw *d = cdd_jw_new();
    cdd_jw_object(d, NULL);
    cdd_jw_str(d, "product", c->o->m->product);
    cdd_jw_str(d, "version", c->o->m->version);
    cdd_jw_str(d, "archive_sha256", hex);
    cdd_jw_uint(d, "new", n_new);
    cdd_jw_uint(d, "replaced", n_rep);
    cdd_jw_uint(d, "removed", n_rm);
    cdd_jw_end(d);
    /* The install is committed; a log that cannot be written must not undo
     * it. The receipt remains the authoritative record. */
    cdd_log_append(c->tree, "install", c->res->txn_id, d);
}

/* install --mtime, last, once the tree holds its files: the installed
 * files the commit did not bring (already in place) and every folder that
 * holds an installed file, up to the root, get the time too (a rename into
 * a folder changes the folder's), so two installs of one archive into fresh
 * trees pack into identical layers (docs/containers.md). The state folder
 * is not touched: it is not part of the layer. */
static int set_times(struct inst *c)
{
    const struct cdd_plan *p = &c->res->plan;
    int r = 0;
    for (size_t i = 0; !r && i < p->n; i++) {
        const struct cdd_plan_item *it = &p->items[i];
        if (it->action == CDD_ACT_UNCHANGED)
            r = cdd_tree_set_mtime(c->tree, it->path, c->o->mtime);
        /* A removed file's folders changed too (another profile left it
         * out): the ones still there get the time. */
        char *dir = strdup(it->path);
        if (!dir)
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        for (char *s = dir ? strrchr(dir, '/') : NULL; !r && s;
             s = strrchr(dir, '/')) {
            struct cdd_stat st;
            *s = '\0';
            r = cdd_tree_lstat(c->tree, dir, &st);
            if (!r && st.type != CDD_FT_NONE)
                r = cdd_tree_set_mtime(c->tree, dir, c->o->mtime);
        }
        free(dir);
    }
    if (!r)
        r = cdd_tree_set_mtime(c->tree, "", c->o->mtime);
    return r;
}

/* The unchanged re-install: the receipt says this very archive, read
 * through this manifest into this layout, made the tree, and every file it
 * lists still has its type and size and either an identity record that
 * vouches for its bytes (tree/idcache.h: device, inode, size, mtime, ctime,
 * not racy) or, hashed again, its sha256 (always with --check-tree). Then
 * nothing is extracted or staged. Files hashed here get a fresh record. */
static int unchanged_tree(struct inst *c, const struct cdd_receipt *prev,
                          int *same)
{
    enum cdd_action *acts = NULL;
    struct cdd_idrec *fresh = NULL;
    int r = 0;
    *same = 0;
    if (!prev || !prev->layout ||
        memcmp(prev->manifest_sha256, c->o->m->doc_sha256, CDD_SHA256_LEN) ||
        strcmp(prev->layout, cdd_layout_name(c->layout)) != 0 ||
        prev->profile != c->o->profile || !same_components(c, prev))
        return 0;
    size_t n = prev->n_files ? prev->n_files : 1;
    if (!(acts = calloc(n, sizeof *acts)) || !(fresh = calloc(n, sizeof *fresh))) {
        free(acts);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    r = cdd_tree_check_ident(c->tree, prev, c->o->check_tree ? NULL : &c->ids,
                             c->jobs, acts, fresh);
    *same = !r;
    for (size_t i = 0; !r && i < prev->n_files; i++)
        if (acts[i] != CDD_ACT_UNCHANGED)
            *same = 0;
    for (size_t i = 0; !r && *same && i < prev->n_files; i++) {
        /* A racy record would never vouch: not worth a write. */
        if (!cdd_idrec_vouches(&fresh[i], &fresh[i].id, fresh[i].sha256))
            continue;
        fresh[i].path = prev->files[i].path; /* copied by put */
        r = cdd_idcache_put(&c->ids, &fresh[i]);
        c->ids_dirty = 1;
    }
    free(fresh);
    free(acts);
    return r;
}

/* The archive's digest on the unchanged re-install: its identity record
 * vouches for the receipt's digest (not with --check-tree), or its bytes
 * are hashed and the record renewed. Either way check_pins then compares
 * the digest with the pins. Trusting the record reads no byte of the
 * archive, and nothing is installed from it: any change to the tree takes
 * the full path, which hashes every byte. */
static int archive_digest(struct inst *c, const struct cdd_receipt *prev)
{
    /* The handle held from pin to extraction (issue 18), never the path. */
    struct cdd_rfile *f = c->af;
    struct cdd_fs_id now;
    struct cdd_idrec rec;
    int r = cdd_fs_identity(f, &now);
    if (!r && !c->o->check_tree &&
        cdd_idrec_vouches(&c->ids.archive, &now, prev->archive_sha256)) {
        memcpy(c->res->archive_sha256, prev->archive_sha256, CDD_SHA256_LEN);
        c->res->archive_size = now.size;
        goto out;
    }
    if (!r && c->o->progress)
        c->o->progress(c->o->progress_ud, "hash", 0, 0);
    if (!r)
        r = cdd_idrec_hash(f, c->o->archive_path, &rec, &c->res->archive_size);
    if (!r) {
        memcpy(c->res->archive_sha256, rec.sha256, CDD_SHA256_LEN);
        if (cdd_idrec_vouches(&rec, &rec.id, rec.sha256)) {
            c->ids.archive = rec;
            c->ids_dirty = 1;
        }
    }
out:
    return r;
}

/* After a commit (or a full pass that changed nothing): the archive's
 * record, and the file records still true of the plan. Best effort: the
 * records are a cache, and a failure to write them costs a hash next time. */
static void save_ids(struct inst *c, const struct cdd_idrec *arch)
{
    struct cdd_idcache keep = {0};
    int r = 0, any = 0;
    if (arch && cdd_idrec_vouches(arch, &arch->id, arch->sha256))
        keep.archive = *arch;
    else if (!arch)
        keep.archive = c->ids.archive;
    for (size_t i = 0; !r && i < c->res->plan.n; i++) {
        const struct cdd_plan_item *it = &c->res->plan.items[i];
        const struct cdd_idrec *old = cdd_idcache_find(&c->ids, it->path);
        if (old && it->action == CDD_ACT_UNCHANGED && !it->is_symlink &&
            memcmp(old->sha256, it->sha256, CDD_SHA256_LEN) == 0)
            r = cdd_idcache_put(&keep, old);
    }
    /* Nothing to keep and nothing kept before: no file to write. */
    any = keep.archive.valid || keep.n || c->ids.archive.valid || c->ids.n;
    if (!r && any)
        r = cdd_idcache_save(c->tree, &keep);
    cdd_clear_error();
    keep.archive.path = NULL;
    cdd_idcache_clear(&keep);
}

/* The no-op's plan: every receipt file, unchanged. */
static int plan_from_receipt(struct inst *c, const struct cdd_receipt *prev)
{
    for (size_t i = 0; i < prev->n_files; i++) {
        const struct cdd_rfile_entry *f = &prev->files[i];
        struct cdd_plan_item *it = cdd_plan_add(&c->res->plan, f->path);
        if (!it)
            return cdd_last_error()->code;
        it->role = f->role;
        it->action = CDD_ACT_UNCHANGED;
        it->is_symlink = f->is_symlink;
        it->size = f->size;
        it->mtime_ns = f->mtime_ns;
        memcpy(it->sha256, f->sha256, CDD_SHA256_LEN);
        if (f->is_symlink && !(it->link_target = strdup(f->link_target)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    return 0;
}

int cdd_install(const struct cdd_install_opts *o, struct cdd_install_result *res)
{
    struct inst c = {0};
    struct cdd_receipt *prev = NULL;
    struct cdd_bghash *bg = NULL;
    struct cdd_idrec arch_rec = {0};
    int r, pinned = 0, hashed = 0, same = 0;
    memset(res, 0, sizeof *res);
    c.o = o;
    c.res = res;
    c.tree = o->tree;
    c.layout = cdd_target_choose_layout(o->target, o->tree, o->m,
                                       &res->layout_why);
    c.jobs = o->jobs > 0 ? o->jobs : cdd_cpu_count();
    res->layout = c.layout;

    r = cdd_target_check_platform(o->m->platform, o->platform_given,
                                  o->platform);
    if (!r)
        r = cdd_target_check(o->target, o->tree, o->m->cuda_major, o->force);
    /* A tree only an administrator may change is said so now, before the
     * archive is read, not when the first file fails to move. */
    if (!r && !o->dry_run)
        r = cdd_tree_check_access(c.tree);
    if (!r)
        r = pin_expected(&c, &pinned);
    if (!r && o->n_with &&
        (!(c.with_sha256 = calloc(o->n_with, sizeof *c.with_sha256)) ||
         !(c.with_f = calloc(o->n_with, sizeof *c.with_f)) ||
         !(c.with_at = calloc(o->n_with, sizeof *c.with_at))))
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    /* The archive is opened once, here; its pin, size and extraction all
     * read this handle (a path renamed over later changes nothing). */
    if (!r)
        r = o->archive_file
                ? cdd_archive_hold_file(o->archive_file, &c.af, &c.af_at)
                : cdd_archive_hold(o->archive_path, &c.af, &c.af_at);
    /* A component's archive that is not the pinned one fails the install
     * before anything is staged. */
    if (!r)
        r = check_components(&c);
    if (r)
        goto out;

    if (!o->dry_run) {
        r = cdd_txn_lock(c.tree, o->lock_timeout, 1, NULL, &res->recovery);
        if (r)
            goto out;
    }
    r = cdd_receipt_load(c.tree, &prev);
    if (!r && !o->dry_run)
        r = cdd_idcache_load(c.tree, &c.ids);
    if (r)
        goto out;

    /* The tree looks like what this archive made: hash the archive (alone,
     * nothing else to overlap with) and, if it is that archive, stop. */
    if (!o->dry_run && (r = unchanged_tree(&c, prev, &same)) < 0)
        goto out;
    if (same) {
        r = archive_digest(&c, prev);
        if (!r)
            r = check_pins(&c);
        if (r)
            goto out;
        hashed = 1;
        if (memcmp(prev->archive_sha256, res->archive_sha256,
                   CDD_SHA256_LEN) == 0) {
            r = plan_from_receipt(&c, prev);
            res->changed = 0;
            if (!r && c.ids_dirty)
                save_ids(&c, NULL);
            goto out;
        }
    }

    if (!o->dry_run) {
        r = cdd_txn_begin(c.tree, "install", &c.txn);
        if (r)
            goto out;
        if (!(res->txn_id = strdup(cdd_txn_id(c.txn)))) {
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            goto out;
        }
    }
    /* The archive's hash is read on its own thread while the extraction
     * checks and stages; nothing is committed before it matched. */
    if (!hashed && (r = cdd_bghash_start_file(c.af, &bg)) < 0)
        goto out;

    struct cdd_extract_opts xo = {.m = o->m, .pinned = pinned,
                                  .jobs = c.jobs, .pipeline = c.jobs > 1,
                                  .file = c.af};
    struct cdd_extract_sink sink = {.ud = &c, .begin = sink_begin,
                                    .end = sink_end,
                                    .progress = sink_progress,
                                    .entry = sink_entry};
    r = cdd_extract(o->archive_path, &xo, &sink);
    if (bg) {
        /* A wrong archive is refused as such, whatever the extraction of
         * its bytes said. */
        struct cdd_errsave xerr;
        cdd_error_save(&xerr);
        int hr = cdd_bghash_finish_rec(bg, &arch_rec, &res->archive_size);
        if (!hr)
            memcpy(res->archive_sha256, arch_rec.sha256, CDD_SHA256_LEN);
        bg = NULL;
        if (!hr)
            hr = check_pins(&c);
        if (hr)
            r = hr;
        else if (r)
            cdd_error_restore(&xerr);
        cdd_error_save_free(&xerr);
    }
    /* Changed in place while hashed and unpacked (a writer with its own
     * handle): the two reads may have seen different bytes. */
    if (!r)
        r = cdd_archive_unchanged(c.af, &c.af_at);
    if (!r)
        cdd_profile_drop(&res->plan, res->omitted);
    /* Optional components join the plan after the archive's own files. */
    for (size_t i = 0; !r && i < o->n_with; i++)
        r = cdd_component_stage(c.tree, c.txn ? cdd_txn_stage_rel(c.txn)
                                              : NULL,
                                c.layout, &o->with[i], c.with_f[i],
                                &c.with_at[i], &res->plan);
    if (!r)
        r = plan_against_tree(&c, prev);
    if (r || o->dry_run)
        goto out;

    if (same_as_before(&c, prev)) {
        res->changed = 0;
        save_ids(&c, &arch_rec);
        keep_receipt_unchanged(&c, prev);
        prev = NULL;
        goto out;
    }
    r = queue_commit(&c, prev);
    if (r)
        goto out;
    if (o->progress)
        o->progress(o->progress_ud, "commit", 0, cdd_txn_count(c.txn));
    r = cdd_txn_commit(c.txn, 0);
    c.txn = NULL; /* freed by commit, whatever the outcome */
    if (r)
        goto out;
    res->changed = 1;
    log_install(&c);
    if (o->has_mtime)
        r = set_times(&c);
    save_ids(&c, &arch_rec);
out:
    cdd_bghash_cancel(bg);
    if (c.txn)
        cdd_txn_abort(c.txn);
    /* The verify that follows reads the tree: others may change it again. */
    cdd_tree_unlock(c.tree);
    cdd_receipt_free(prev);
    cdd_idcache_clear(&c.ids);
    free(c.with_sha256);
    for (size_t i = 0; c.with_f && i < o->n_with; i++)
        cdd_rfile_close(c.with_f[i]);
    free(c.with_f);
    free(c.with_at);
    cdd_rfile_close(c.af);
    return r;
}
