/* Optional components (docs/manifest.md, Optional components): the one file
 * an install takes from a component's own archive — zlibwapi.dll from the
 * zlib 1.2.3 DLL zip for cuDNN 8.3-9.1 on Windows. The archive is checked
 * against the component's pin before its entry is staged; the staged
 * library's machine type is checked (a 32-bit zlibwapi.dll beside a 64-bit
 * cuDNN is Windows' error 193); the plan item then joins the archive's own,
 * so the transaction, receipt and uninstall treat it like any file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/archive.h"
#include "cdd/strbuf.h"
#include "cdd/binfile.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/hash.h"
#include "cdd/pathsafe.h"
#include "component_int.h"
#include "plan_int.h"

struct comp {
    struct cdd_tree *tree;
    const char *stage;          /* NULL: dry run */
    enum cdd_layout_id layout;
    const struct cdd_install_with *w;
    struct cdd_plan *plan;
    size_t item;                /* index of the entry's plan item */
    int have_item;
};

/* The component's library must be of the parent manifest's platform and
 * machine: the same header readers as verify (binfile.h), strict (a file
 * that is no library at all is refused too). */
int cdd_component_machine_check(struct cdd_rfile *f, enum cdd_platform p,
                                const char *shown)
{
    return cdd_bin_machine_check(f, p, shown, 1);
}

static char *staged_rel(struct comp *c, const char *dest)
{
    return cdd_path_join(c->stage, dest);
}

static int sink_entry(void *ud, const struct cdd_xentry *e)
{
    struct comp *c = ud;
    char *dest = NULL, *rel = NULL;
    int r;
    if (!e->mfile)
        return 0; /* another member of the component's archive */
    if ((r = cdd_layout_dest(c->layout, CDD_ROLE_RUNTIME, e->path, &dest)))
        goto out;
    const struct cdd_plan_item *dup = cdd_plan_find(c->plan, dest, 1);
    if (dup) {
        r = cdd_fail(CDD_E_ARCHIVE, c->w->archive_path, 0,
                     "component %s: \"%s\" would land on %s, which the cuDNN "
                     "archive installs",
                     c->w->c->name, e->path, dup->path);
        goto out;
    }
    struct cdd_plan_item *it = cdd_plan_add(c->plan, dest);
    if (!it) {
        r = cdd_last_error()->code;
        goto out;
    }
    it->role = CDD_ROLE_RUNTIME;
    c->item = (size_t)(it - c->plan->items);
    c->have_item = 1;
    if (c->stage) {
        rel = staged_rel(c, dest);
        r = rel ? cdd_tree_mkparents(c->tree, rel) : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
out:
    free(rel);
    free(dest);
    return r;
}

static int sink_begin(void *ud, const struct cdd_xentry *e,
                      struct cdd_file **out)
{
    struct comp *c = ud;
    if (!e->mfile || !c->stage)
        return 0;
    char *rel = staged_rel(c, c->plan->items[c->item].path);
    int r = rel ? cdd_tree_create(c->tree, rel, 1, out)
                : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(rel);
    return r;
}

static int sink_end(void *ud, const struct cdd_xentry *e, struct cdd_file *f)
{
    struct comp *c = ud;
    struct cdd_rfile *rf = NULL;
    struct cdd_stat st;
    char *rel = NULL;
    int r = 0;
    if (!e->mfile)
        return 0;
    struct cdd_plan_item *it = &c->plan->items[c->item];
    if (f) {
        if ((r = cdd_file_finish(f)))
            return r;
        if (!(rel = staged_rel(c, it->path)))
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        r = cdd_tree_open_read(c->tree, rel, &rf);
        if (!r)
            r = cdd_component_machine_check(rf, c->w->c->m->platform,
                                            c->w->archive_path);
        if (r == CDD_E_ARCHIVE) {
            char *why = cdd_strdup(cdd_last_error()->msg);
            r = why ? cdd_fail(CDD_E_ARCHIVE, c->w->archive_path, 0,
                               "component %s: %s: %s", c->w->c->name, e->path,
                               why)
                    : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            free(why);
        }
        cdd_rfile_close(rf);
        if (!r && !(r = cdd_tree_lstat(c->tree, rel, &st)))
            it->mtime_ns = st.mtime_ns;
        free(rel);
    }
    it->size = e->size;
    memcpy(it->sha256, e->sha256, CDD_SHA256_LEN);
    return r;
}

int cdd_component_pin_check(const struct cdd_install_with *w,
                            struct cdd_rfile *f,
                            uint8_t sha256[CDD_SHA256_LEN])
{
    const struct cdd_manifest *sm = w->c->m;
    char got[CDD_SHA256_HEX], want[CDD_SHA256_HEX]; /* fixed: sha256 hex */
    uint64_t size = 0;
    int r = cdd_archive_hash(f, sha256, &size);
    if (r)
        return r;
    if (sm->archive.has_size && sm->archive.size != size)
        return cdd_fail(CDD_E_CHECKSUM, w->archive_path, 0,
                        "component %s: size %llu bytes, but the manifest "
                        "says %llu",
                        w->c->name, (unsigned long long)size,
                        (unsigned long long)sm->archive.size);
    if (memcmp(sm->archive.sha256, sha256, CDD_SHA256_LEN) != 0) {
        cdd_hex_encode(sha256, CDD_SHA256_LEN, got);
        cdd_hex_encode(sm->archive.sha256, CDD_SHA256_LEN, want);
        return cdd_fail(CDD_E_CHECKSUM, w->archive_path, 0,
                        "component %s: sha256 %s does not match the "
                        "manifest's pin %s",
                        w->c->name, got, want);
    }
    return 0;
}

int cdd_component_stage(struct cdd_tree *tree, const char *stage,
                        enum cdd_layout_id layout,
                        const struct cdd_install_with *w,
                        struct cdd_rfile *f, const struct cdd_finfo *at_open,
                        struct cdd_plan *plan)
{
    struct comp c = {.tree = tree, .stage = stage, .layout = layout,
                     .w = w, .plan = plan};
    uint8_t sha[CDD_SHA256_LEN];
    /* The pin again, and the extraction, through the one handle that
     * check_components hashed (issue 18): never the path a second time. */
    int r = cdd_component_pin_check(w, f, sha);
    if (r)
        return r;
    /* One small archive: one thread, its other members read and dropped. */
    struct cdd_extract_opts xo = {.m = w->c->m, .pinned = 1, .jobs = 1,
                                  .ignore_unlisted = 1, .file = f};
    struct cdd_extract_sink sink = {.ud = &c, .begin = sink_begin,
                                    .end = sink_end, .entry = sink_entry};
    r = cdd_extract(w->archive_path, &xo, &sink);
    if (!r && !c.have_item) /* cdd_extract() reports a missing entry */
        r = cdd_fail(CDD_E_ARCHIVE, w->archive_path, 0,
                     "component %s: no entry %s", w->c->name,
                     w->c->m->files[0].path);
    if (!r)
        r = cdd_archive_unchanged(f, at_open);
    return r;
}
