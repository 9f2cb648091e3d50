/* The streaming check of an archive against its manifest (docs/design.md
 * "Archive check", docs/security.md). One pass over the archive, in its own
 * order: each entry's name is validated, its type and size checked, its
 * bytes read at most to its bound plus one (a decompression bomb stops
 * there), hashed while they go to the sink, and compared with the manifest.
 * What needs the whole archive -- missing entries, where each symlink chain
 * ends -- is checked after the last entry; the caller discards whatever the
 * sink wrote unless everything passed. Memory is one 256 KiB buffer plus a
 * small record per entry, whatever the size of the archive (per worker, with
 * several). A zip can be read by several readers at once (opts.jobs): then
 * the first pass reads only the headers and makes every check that needs no
 * data, and workers, each with its own reader on the same file, stream the
 * files assigned to them (the largest first, spread so that each gets about
 * the same number of bytes), skipping the others' entries. An archive read
 * in one stream (tar) can hand hashing and writing to a second thread
 * (opts.pipeline, xpipe.c) while the next block decodes. */
#include "cdd/extract.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"
#include "cdd/layout.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "cdd/thread.h"
#include "xpipe_int.h"

#define XBLOCK (256u * 1024u)

/* A file or symlink seen, for duplicate and symlink checks at the end. */
struct xrec {
    char *path;   /* after strip_components */
    char *target; /* symlinks */
    int is_symlink;
    enum cdd_role place; /* with a manifest: the role whose folder the entry
                            goes to (a symlink's link_role) */
    int chain;    /* check_symlinks: 0 not seen, 1 on the chain being
                     followed, 2 known to end at a regular file */
    size_t next;  /* check_symlinks: the entry this link names */
};

/* Open-addressing table keyed by the case-folded path. A slot is either an
 * entry (rec = index into recs) or a folder some entry lies in (rec = -1):
 * an entry whose path is also a folder of another entry -- a file "lib" and
 * a file "lib/x", or a symlink "lib/l" and a file "lib/l/x" that would be
 * written through it -- is a clash. */
struct xslot {
    char *key; /* folded; NULL: empty */
    long rec;
};

/* A file whose data a worker reads (parallel mode). */
struct xtask {
    size_t header;     /* ordinal of its header in the archive */
    char *raw;         /* its name as stored */
    size_t strip_off;  /* where the stripped path starts in raw */
    enum cdd_role role;
    const struct cdd_mfile *mfile;
    size_t index;      /* cdd_xentry.index */
    uint64_t bytes;    /* expected size: what the assignment balances */
};

struct xstate;

/* One reader and what streaming a file needs: one per thread. */
struct xworker {
    struct xstate *x;
    struct cdd_archive *ar;
    struct cdd_sha256 *h;
    unsigned char *buf;
    struct cdd_xpipe *pipe;  /* hash and write on another thread */
    size_t *mine;            /* parallel: task numbers, in archive order */
    size_t n_mine;
    uint64_t load;
};

struct xstate {
    const char *apath;
    const struct cdd_extract_opts *o;
    const struct cdd_manifest *m;
    const struct cdd_extract_sink *sink;
    struct cdd_archive *ar;
    struct xworker w0;   /* the calling thread's, in one-reader mode */
    unsigned char *seen; /* per manifest file */
    struct xrec *recs;
    size_t n_recs, cap_recs;
    struct xslot *slots;
    size_t n_slots, used_slots;
    size_t n_headers;
    uint64_t bytes_all;   /* of all files so far, against o->max_total */
    size_t name_bytes;    /* of all names so far, against CDD_MAX_NAME_BYTES */
    size_t n_given;      /* next cdd_xentry.index */
    /* parallel mode */
    int parallel;
    struct xtask *tasks;
    size_t n_tasks, cap_tasks;
    struct cdd_mutex *mu; /* the first failure; progress calls */
    atomic_int stop;      /* a worker failed: the others stop */
    int failed;
    struct cdd_errsave err;
    atomic_uint_fast64_t done_bytes;
    uint64_t total_bytes;
};

/* An untrusted name, quoted whole for the cdd_fail() it is an argument of
 * (kept until that message is recorded; a message may name four). */
static const char *q(const char *name)
{
    return cdd_path_q(name);
}

static int nomem(struct xstate *x)
{
    return cdd_fail(CDD_E_NOMEM, x->apath, 0, NULL);
}

/* A failure of the growth rule (cdd_grow), recorded again with the archive
 * named and the rule's words kept. */
static int at_archive(struct xstate *x, int r)
{
    return cdd_fail(r, x->apath, 0, "%s", cdd_last_error()->msg);
}

/* ---- the table ---------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

static struct xslot *slot_find(struct xstate *x, const char *key)
{
    size_t mask = x->n_slots - 1;
    size_t i = (size_t)hash_str(key) & mask;
    while (x->slots[i].key && strcmp(x->slots[i].key, key) != 0)
        i = (i + 1) & mask;
    return &x->slots[i];
}

static int table_grow(struct xstate *x)
{
    size_t old_n = x->n_slots, n = old_n ? old_n * 2 : 256;
    struct xslot *old = x->slots;
    struct xslot *s = calloc(n, sizeof *s);
    if (!s)
        return nomem(x);
    x->slots = s;
    x->n_slots = n;
    for (size_t i = 0; i < old_n; i++)
        if (old[i].key)
            *slot_find(x, old[i].key) = old[i];
    free(old);
    return 0;
}

/* Insert key (taking ownership) unless present; *slot gets its slot. */
static int table_put(struct xstate *x, char *key, long rec,
                     struct xslot **slot)
{
    struct xslot *s;
    int r;
    if ((x->used_slots + 1) * 2 > x->n_slots && (r = table_grow(x)) < 0) {
        free(key);
        return r;
    }
    s = slot_find(x, key);
    if (s->key) {
        free(key);
    } else {
        s->key = key;
        s->rec = rec;
        x->used_slots++;
    }
    *slot = s;
    return 0;
}

/* Record a file or symlink: refuse an exact or case-insensitive duplicate
 * and any clash between it and the folders of other entries. */
static int record_entry(struct xstate *x, const char *raw, const char *path,
                        const char *target)
{
    char *fold = NULL, *key = NULL;
    struct xslot *s;
    struct xrec *rec;
    long idx = (long)x->n_recs;
    int r = 0;

    if (!(fold = cdd_path_fold(path))) {
        r = nomem(x);
        goto out;
    }
    /* Every folder above the entry: none may be an entry itself. */
    for (char *p = strchr(fold, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        key = strdup(fold);
        *p = '/';
        if (!key) {
            r = nomem(x);
            goto out;
        }
        r = table_put(x, key, -1, &s);
        key = NULL;
        if (r < 0)
            goto out;
        if (s->rec >= 0) {
            r = cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                         "entry \"%s\": lies inside \"%s\", which is a %s "
                         "entry, not a folder",
                         q(raw), q(x->recs[s->rec].path),
                         x->recs[s->rec].is_symlink ? "symlink" : "file");
            goto out;
        }
    }
    /* One record per entry: the archive's bound is the container's. */
    if ((r = CDD_GROW(x->recs, &x->cap_recs, x->n_recs + 1, CDD_MAX_ENTRIES,
                      "entries")) < 0) {
        r = at_archive(x, r);
        goto out;
    }
    r = table_put(x, fold, idx, &s);
    fold = NULL;
    if (r < 0)
        goto out;
    if (s->rec != idx) {
        if (s->rec < 0)
            r = cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                         "entry \"%s\": \"%s\" is also a folder of an "
                         "earlier entry",
                         q(raw), q(path));
        else if (strcmp(x->recs[s->rec].path, path) == 0)
            r = cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                         "entry \"%s\": duplicate of an earlier entry "
                         "(\"%s\" twice)",
                         q(raw), q(path));
        else
            r = cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                         "entry \"%s\": \"%s\" and \"%s\" differ only in "
                         "case (one file on Windows)",
                         q(raw), q(x->recs[s->rec].path), q(path));
        goto out;
    }
    rec = &x->recs[x->n_recs];
    memset(rec, 0, sizeof *rec);
    x->n_recs++;
    rec->is_symlink = target != NULL;
    if (!(rec->path = strdup(path)) ||
        (target && !(rec->target = strdup(target))))
        r = nomem(x);
out:
    free(fold);
    return r;
}

/* Exact lookup of a recorded entry: *out NULL when there is none; an error
 * only for no memory (not "no such entry": malloc-failure trials). */
static int find_rec(struct xstate *x, const char *path,
                    const struct xrec **out)
{
    char *fold;
    struct xslot *s;
    *out = NULL;
    if (!x->n_slots)
        return 0;
    if (!(fold = cdd_path_fold(path)))
        return nomem(x);
    s = slot_find(x, fold);
    if (s->key && s->rec >= 0 && strcmp(x->recs[s->rec].path, path) == 0)
        *out = &x->recs[s->rec];
    free(fold);
    return 0;
}

/* ---- per entry ---------------------------------------------------------------- */

static void progress(struct xstate *x)
{
    if (x->sink && x->sink->progress)
        x->sink->progress(x->sink->ud, cdd_archive_bytes_read(x->ar),
                          cdd_archive_file_size(x->ar));
}

/* Workers: the share of all files' bytes decoded so far, scaled to the
 * archive's size, so the sink sees one measure whatever the mode. */
static void progress_data(struct xworker *w, size_t got)
{
    struct xstate *x = w->x;
    if (!x->parallel) {
        progress(x);
        return;
    }
    atomic_fetch_add(&x->done_bytes, got);
    if (!x->sink || !x->sink->progress)
        return;
    uint64_t size = cdd_archive_file_size(x->ar);
    uint64_t total = x->total_bytes ? x->total_bytes : 1;
    cdd_mutex_lock(x->mu);
    /* Read the counter under the lock, not the value our own add returned:
     * another worker may have added and reported more in between, and the
     * sink must never see progress go backwards. */
    uint64_t done = atomic_load(&x->done_bytes);
    if (done > total)
        done = total;
    x->sink->progress(x->sink->ud,
                      (uint64_t)((double)size * ((double)done / (double)total)),
                      size);
    cdd_mutex_unlock(x->mu);
}

/* Where a symlink of a manifest's archive goes: beside the entry its chain
 * ends at (xe->link_role). Whether the chain really ends there is known
 * only after the last entry (check_symlinks). */
static int link_place(struct xstate *x, const char *raw,
                      struct cdd_xentry *xe)
{
    int r = cdd_layout_link_role(x->m, xe->path, xe->link_target,
                                 &xe->link_role);
    if (r < -1)
        return r;
    if (r)
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "entry \"%s\": symlink to \"%s\", which no entry "
                        "of the manifest and no layout rule places%s",
                        q(raw), q(xe->link_target),
                        xe->mfile ? "" : " (not in the manifest)");
    return 0;
}

/* The manifest's say on an entry, or the layout rules' for an unlisted one
 * of a pinned, non-exact manifest. Fills xe->role and xe->mfile. */
static int match_entry(struct xstate *x, const char *raw,
                       struct cdd_xentry *xe)
{
    const struct cdd_manifest *m = x->m;
    const struct cdd_mfile *mf;
    int is_symlink = xe->type == CDD_ENTRY_SYMLINK;
    const char *why = NULL;

    if (!m) {
        /* Discovery: a role where the rules give one; the caller decides
         * about the rest. */
        enum cdd_role role = CDD_ROLE_COUNT;
        if (x->o->has_platform &&
            cdd_role_from_path(x->o->platform, xe->path, is_symlink, &role))
            role = CDD_ROLE_COUNT;
        xe->role = is_symlink ? CDD_ROLE_SYMLINK : role;
        if (is_symlink && !cdd_link_target_is_safe(xe->link_target, &why))
            return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                            "entry \"%s\": symlink to \"%s\": %s", q(raw),
                            q(xe->link_target), why);
        return 0;
    }

    mf = cdd_manifest_file(m, xe->path);
    if (mf) {
        int listed_symlink = mf->role == CDD_ROLE_SYMLINK;
        x->seen[mf - m->files] = 1;
        xe->mfile = mf;
        xe->role = mf->role;
        if (is_symlink && !listed_symlink)
            return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                            "entry \"%s\": is a symlink, the manifest lists "
                            "a regular file",
                            q(raw));
        if (!is_symlink && listed_symlink)
            return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                            "entry \"%s\": is a regular file, the manifest "
                            "lists a symlink",
                            q(raw));
        if (is_symlink) {
            /* The manifest loader checks its targets too; the archive's
             * is checked here whatever the manifest says. */
            if (!cdd_link_target_is_safe(xe->link_target, &why))
                return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                                "entry \"%s\": symlink to \"%s\": %s", q(raw),
                                q(xe->link_target), why);
            if (!mf->target || strcmp(mf->target, xe->link_target) != 0)
                return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                                "entry \"%s\": symlink to \"%s\", the "
                                "manifest says \"%s\"",
                                q(raw), q(xe->link_target),
                                q(mf->target ? mf->target : "(none)"));
            return link_place(x, raw, xe);
        }
        return 0;
    }

    /* Unlisted. Only the vendor's own bytes (a pinned archive) may bring
     * entries a non-exact manifest does not name, and only where the layout
     * rules know where they go. */
    if (m->files_exact || !x->o->pinned)
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "unexpected entry %s (not in the manifest)%s",
                        q(xe->path),
                        m->files_exact ? ""
                                       : ", and the archive is not pinned by "
                                         "a sha256");
    if (is_symlink && !cdd_link_target_is_safe(xe->link_target, &why))
        return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                        "entry \"%s\": symlink to \"%s\": %s", q(raw),
                        q(xe->link_target), why);
    /* An optional component's archive: its other members stay out. */
    if (x->o->ignore_unlisted) {
        xe->role = CDD_ROLE_COUNT;
        return 0;
    }
    if (is_symlink) {
        /* Any symlink the rules can place beside what it points at: the
         * .so chains, and e.g. lib*_static_v8.a -> lib*_static.a. */
        xe->role = CDD_ROLE_SYMLINK;
        return link_place(x, raw, xe);
    }
    if (cdd_role_from_path(m->platform, xe->path, 0, &xe->role))
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "unexpected entry %s (not in the manifest), and no "
                        "layout rule places a file %s",
                        q(xe->path), q(cdd_path_basename(xe->path)));
    return 0;
}

static int total_bound(struct xstate *x, const struct cdd_archive_entry *e)
{
    return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                    "entry \"%s\": the files hold more than %llu bytes in "
                    "all, the bound on what this command reads",
                    q(e->path), (unsigned long long)x->o->max_total);
}

/* The checks a file's header allows before a byte is read; limit is the
 * entry's bound, by_total says it is what is left of max_total. */
static int header_checks(struct xstate *x, const struct cdd_archive_entry *e,
                         const struct cdd_mfile *mf, uint64_t limit,
                         int by_total)
{
    if (e->size_known && mf && mf->has_size && e->size != mf->size)
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "entry \"%s\": size %llu bytes, the manifest says %llu",
                        q(e->path), (unsigned long long)e->size,
                        (unsigned long long)mf->size);
    if (e->size_known && e->size > limit && by_total)
        return total_bound(x, e);
    if (e->size_known && e->size > limit)
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "entry \"%s\": size %llu bytes is over the bound of "
                        "%llu for an entry the manifest does not size",
                        q(e->path), (unsigned long long)e->size,
                        (unsigned long long)limit);
    return 0;
}

static int stopped(struct xworker *w, const char *path)
{
    if (cdd_cancelled())
        return cdd_fail(CDD_E_INTERRUPTED, w->x->apath, 0,
                        "interrupted while reading entry \"%s\"", q(path));
    if (atomic_load(&w->x->stop))
        return cdd_fail(CDD_E_INTERRUPTED, w->x->apath, 0,
                        "stopped reading entry \"%s\": another worker failed",
                        q(path));
    return 0;
}

/* Stream one regular file's data: bounded, hashed, written, compared. */
static int file_data(struct xworker *w, const struct cdd_archive_entry *e,
                     struct cdd_xentry *xe)
{
    struct xstate *x = w->x;
    const struct cdd_mfile *mf = xe->mfile;
    int sized = mf && mf->has_size;
    uint64_t limit = sized ? mf->size : CDD_MAX_ENTRY_SIZE;
    uint64_t total = 0;
    struct cdd_file *f = NULL;
    int r, queued = 0, by_total = 0;

    /* What is left of the bound on all files together, when it is
     * tighter than the entry's own (one reader only: see cdd_extract). */
    if (x->o->max_total && x->o->max_total - x->bytes_all < limit) {
        limit = x->o->max_total - x->bytes_all;
        by_total = 1;
    }

    /* Refuse on the header's word before reading a byte. */
    if ((r = header_checks(x, e, mf, limit, by_total)) < 0)
        goto out;
    if ((r = cdd_sha256_reset(w->h)) < 0)
        goto out;
    if (x->sink && x->sink->begin &&
        (r = x->sink->begin(x->sink->ud, xe, &f)) < 0)
        goto out;
    if (w->pipe) {
        cdd_xpipe_target(w->pipe, w->h, f);
        queued = 1;
    }

    for (;;) {
        /* Ask for no more than one byte past the bound: the bomb's bytes
         * beyond that are never decompressed. */
        uint64_t room = limit + 1 - total;
        size_t want = room < XBLOCK ? (size_t)room : XBLOCK;
        size_t got = 0;
        unsigned char *buf = w->pipe ? cdd_xpipe_get(w->pipe) : w->buf;

        if ((r = stopped(w, e->path)) < 0)
            goto out;
        if ((r = cdd_archive_read(w->ar, buf, want, &got)) < 0)
            goto out;
        if (got == 0)
            break;
        total += got;
        if (total > limit) {
            if (by_total)
                r = total_bound(x, e);
            else if (sized)
                r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                             "entry \"%s\": larger than the manifest says "
                             "(more than %llu bytes)",
                             q(e->path), (unsigned long long)limit);
            else
                r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                             "entry \"%s\": larger than %llu bytes, the bound "
                             "for an entry the manifest does not size",
                             q(e->path), (unsigned long long)limit);
            goto out;
        }
        if (w->pipe) {
            if ((r = cdd_xpipe_put(w->pipe, got)) < 0)
                goto out;
        } else {
            if ((r = cdd_sha256_update(w->h, buf, got)) < 0)
                goto out;
            if (f && (r = cdd_file_write(f, buf, got)) < 0)
                goto out;
        }
        progress_data(w, got);
    }
    if (queued) {
        queued = 0;
        if ((r = cdd_xpipe_drain(w->pipe, 1)) < 0)
            goto out;
    }

    if (sized && total < mf->size) {
        r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                     "entry \"%s\": %llu bytes, the manifest says %llu",
                     q(e->path), (unsigned long long)total,
                     (unsigned long long)mf->size);
        goto out;
    }
    /* libarchive stops at the end of the stored data; a header that
     * promised otherwise is a damaged archive. */
    if (e->size_known && total != e->size) {
        r = cdd_fail(CDD_E_CORRUPT, x->apath, 0,
                     "entry \"%s\": %llu bytes of data, its header says %llu",
                     q(e->path), (unsigned long long)total,
                     (unsigned long long)e->size);
        goto out;
    }
    if ((r = cdd_sha256_final(w->h, xe->sha256)) < 0)
        goto out;
    xe->size = total;
    x->bytes_all += total;
    if (mf && mf->has_sha256 &&
        memcmp(mf->sha256, xe->sha256, CDD_SHA256_LEN) != 0) {
        char got_hex[CDD_SHA256_HEX], want_hex[CDD_SHA256_HEX]; /* fixed: sha256 hex */
        cdd_hex_encode(xe->sha256, CDD_SHA256_LEN, got_hex);
        cdd_hex_encode(mf->sha256, CDD_SHA256_LEN, want_hex);
        r = cdd_fail(CDD_E_CHECKSUM, x->apath, 0,
                     "%s: sha256 %s does not match the manifest's %s",
                     q(xe->path), got_hex, want_hex);
        goto out;
    }
    if (x->sink && x->sink->end) {
        struct cdd_file *handed = f;
        f = NULL; /* end() owns it now, whatever it returns */
        r = x->sink->end(x->sink->ud, xe, handed);
    }
out:
    /* The consumer must be done with f before it is thrown away. */
    if (queued)
        (void)cdd_xpipe_drain(w->pipe, 0);
    cdd_file_abort(f);
    return r;
}

/* Parallel mode, first pass: note a file for the workers. */
static int add_task(struct xstate *x, const struct cdd_archive_entry *e,
                    const struct cdd_xentry *xe)
{
    struct xtask *t;
    int r;
    if ((r = header_checks(x, e, xe->mfile,
                           xe->mfile && xe->mfile->has_size
                               ? xe->mfile->size
                               : CDD_MAX_ENTRY_SIZE,
                           0)) < 0)
        return r;
    if ((r = CDD_GROW(x->tasks, &x->cap_tasks, x->n_tasks + 1,
                      CDD_MAX_ENTRIES, "entries")) < 0)
        return at_archive(x, r);
    t = &x->tasks[x->n_tasks];
    memset(t, 0, sizeof *t);
    if (!(t->raw = strdup(e->path)))
        return nomem(x);
    x->n_tasks++;
    t->header = x->n_headers - 1;
    t->strip_off = (size_t)(xe->path - e->path);
    t->role = xe->role;
    t->mfile = xe->mfile;
    t->index = xe->index;
    t->bytes = xe->mfile && xe->mfile->has_size ? xe->mfile->size
               : e->size_known                  ? e->size
                                                : 0;
    x->total_bytes += t->bytes;
    return 0;
}

static int one_entry(struct xstate *x, const struct cdd_archive_entry *e,
                     int strip)
{
    struct cdd_xentry xe;
    const char *why = NULL, *path;
    int r;

    if (!cdd_path_is_safe(e->path, e->type == CDD_ENTRY_DIR, &why))
        return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                        "entry \"%s\": unsafe name: %s", q(e->path), why);
    if (e->type == CDD_ENTRY_HARDLINK)
        return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                        "entry \"%s\": hard link (to \"%s\") is not allowed",
                        q(e->path), q(e->link_target ? e->link_target : ""));
    if (e->type == CDD_ENTRY_OTHER)
        return cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                        "entry \"%s\": device or FIFO (neither a file, a "
                        "folder nor a symlink) is not allowed",
                        q(e->path));

    path = cdd_path_strip(e->path, strip);
    if (!path) {
        /* The top folder itself is expected; anything else up there would
         * have nowhere to go. */
        if (e->type == CDD_ENTRY_DIR)
            return 0;
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "unexpected entry \"%s\": a %s above the %d top "
                        "folder(s) the manifest strips",
                        q(e->path),
                        e->type == CDD_ENTRY_SYMLINK ? "symlink" : "file",
                        strip);
    }
    /* Folders are made for the files in them; their entries (modes, times)
     * carry nothing we use. */
    if (e->type == CDD_ENTRY_DIR)
        return 0;

    memset(&xe, 0, sizeof xe);
    xe.raw_path = e->path;
    xe.path = path;
    xe.type = e->type;
    xe.role = CDD_ROLE_COUNT;
    xe.link_target = e->type == CDD_ENTRY_SYMLINK ? e->link_target : NULL;

    if ((r = record_entry(x, e->path, path, xe.link_target)) < 0)
        return r;
    if ((r = match_entry(x, e->path, &xe)) < 0)
        return r;
    x->recs[x->n_recs - 1].place =
        e->type == CDD_ENTRY_SYMLINK ? xe.link_role : xe.role;
    xe.index = x->n_given++;
    if (x->sink && x->sink->entry && (r = x->sink->entry(x->sink->ud, &xe)) < 0)
        return r;
    if (e->type == CDD_ENTRY_FILE)
        return x->parallel ? add_task(x, e, &xe) : file_data(&x->w0, e, &xe);
    if (x->sink && x->sink->end)
        return x->sink->end(x->sink->ud, &xe, NULL);
    return 0;
}

/* ---- after the last entry ------------------------------------------------------ */

/* Every symlink must name an entry of this archive in its own folder, and
 * following links from it must reach a regular file: a dangling link or a
 * loop installs something that does not load. Linear in the number of
 * entries: each link is followed once, and a chain that reaches a link
 * already known to end well stops there (5,000 chained links once took
 * seconds, the entry cap half an hour). */
static int check_symlinks(struct xstate *x)
{
    char *full = NULL;
    int r = 0;

    for (size_t i = 0; i < x->n_recs && !r; i++) {
        size_t cur = i;
        if (!x->recs[i].is_symlink || x->recs[i].chain == 2)
            continue;
        /* Follow the chain until a regular file, a link known to be good,
         * or a link of this very chain (a loop). */
        while (x->recs[cur].is_symlink && x->recs[cur].chain == 0) {
            const struct xrec *rec = &x->recs[cur];
            const char *base = cdd_path_basename(rec->path);
            size_t dirlen = (size_t)(base - rec->path);
            const struct xrec *next;

            free(full);
            if (!(full = malloc(dirlen + strlen(rec->target) + 1))) {
                r = nomem(x);
                break;
            }
            memcpy(full, rec->path, dirlen);
            strcpy(full + dirlen, rec->target);
            if ((r = find_rec(x, full, &next)) < 0)
                break;
            if (!next) {
                r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                             "symlink %s points to \"%s\", which is not an "
                             "entry of the archive",
                             q(rec->path), q(rec->target));
                break;
            }
            x->recs[cur].chain = 1;
            x->recs[cur].next = (size_t)(next - x->recs);
            cur = x->recs[cur].next;
        }
        if (r)
            break;
        if (x->recs[cur].is_symlink && x->recs[cur].chain == 1) {
            r = cdd_fail(CDD_E_UNSAFE, x->apath, 0,
                         "symlink %s: the chain of links loops",
                         q(x->recs[i].path));
            break;
        }
        /* Each link was placed (link_place) by the name it points at; a
         * chain through unlisted links must still end at an entry of that
         * role, or a link would land apart from its target. */
        for (size_t c = i; x->m && !r && x->recs[c].is_symlink &&
                           x->recs[c].chain == 1;
             c = x->recs[c].next)
            if (x->recs[c].place != x->recs[cur].place)
                r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                             "symlink %s is placed as a %s, but its chain "
                             "ends at %s, a %s: the link would not land "
                             "beside its target",
                             q(x->recs[c].path),
                             cdd_role_name(x->recs[c].place),
                             q(x->recs[cur].path),
                             cdd_role_name(x->recs[cur].place));
        if (r)
            break;
        for (size_t c = i; x->recs[c].is_symlink && x->recs[c].chain == 1;
             c = x->recs[c].next)
            x->recs[c].chain = 2;
    }
    free(full);
    return r;
}

static int check_missing(struct xstate *x)
{
    for (size_t i = 0; x->m && i < x->m->n_files; i++)
        if (!x->seen[i])
            return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                            "missing entry %s (the manifest lists it)",
                            q(x->m->files[i].path));
    return 0;
}

/* ---- workers ------------------------------------------------------------------ */

/* Bound on the workers, whatever --jobs says: each holds a reader and a
 * buffer (about 0.6 MiB), and 16 keep the peak RSS under 32 MiB
 * (docs/performance.md); 31 entries, half the bytes in one, give more
 * workers nothing to do anyway. */
#define MAX_WORKERS 16

static int worker_init(struct xworker *w, struct xstate *x)
{
    int r;
    w->x = x;
    if ((r = cdd_sha256_new(&w->h)) < 0)
        return r;
    if (!(w->buf = malloc(XBLOCK)))
        return nomem(x);
    return 0;
}

static void worker_clear(struct xworker *w)
{
    cdd_xpipe_free(w->pipe);
    cdd_sha256_free(w->h);
    free(w->buf);
    free(w->mine);
    memset(w, 0, sizeof *w);
}

static void note_failure(struct xstate *x)
{
    cdd_mutex_lock(x->mu);
    if (!x->failed) {
        x->failed = 1;
        cdd_error_save(&x->err);
    }
    atomic_store(&x->stop, 1);
    cdd_mutex_unlock(x->mu);
}

/* One worker: its own reader walks the headers and streams the entries
 * assigned to it; the seekable zip reader jumps over the others' data.
 * Each entry is the one the first pass checked: same position, same name,
 * same type, or the file changed under us. */
static int work(void *arg)
{
    struct xworker *w = arg;
    struct xstate *x = w->x;
    struct cdd_archive_entry e;
    size_t header = 0, next = 0;
    int r;

    if ((r = cdd_archive_open_like(x->ar, &w->ar)) < 0)
        goto out;
    while (next < w->n_mine) {
        const struct xtask *t = &x->tasks[w->mine[next]];
        struct cdd_xentry xe;
        if ((r = stopped(w, t->raw)) < 0)
            goto out;
        if ((r = cdd_archive_next(w->ar, &e)) < 0)
            goto out;
        if (r == 1) {
            r = cdd_fail(CDD_E_CORRUPT, x->apath, 0,
                         "entry \"%s\": not found when read again (did the "
                         "file change while being read?)",
                         q(t->raw));
            goto out;
        }
        if (header++ != t->header)
            continue;
        next++;
        if (e.type != CDD_ENTRY_FILE || strcmp(e.path, t->raw) != 0) {
            r = cdd_fail(CDD_E_CORRUPT, x->apath, 0,
                         "entry \"%s\": another entry (\"%s\") is there when "
                         "read again (did the file change while being read?)",
                         q(t->raw), q(e.path));
            goto out;
        }
        memset(&xe, 0, sizeof xe);
        xe.raw_path = e.path;
        xe.path = e.path + t->strip_off;
        xe.type = CDD_ENTRY_FILE;
        xe.role = t->role;
        xe.mfile = t->mfile;
        xe.index = t->index;
        if ((r = file_data(w, &e, &xe)) < 0)
            goto out;
    }
    r = 0;
out:
    if (r < 0)
        note_failure(x);
    cdd_archive_close(w->ar);
    w->ar = NULL;
    return r;
}

/* Largest first, each to the worker with the fewest bytes so far: the
 * largest entry starts at once and the others fill in around it. */
static int cmp_task_size(const void *a, const void *b, void *ctx)
{
    const struct xtask *t = ctx;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (t[i].bytes != t[j].bytes)
        return t[i].bytes > t[j].bytes ? -1 : 1;
    return i < j ? -1 : i > j;
}

static int assign(struct xstate *x, struct xworker *w, size_t n_w)
{
    size_t *order = malloc((x->n_tasks ? x->n_tasks : 1) * sizeof *order);
    if (!order)
        return nomem(x);
    for (size_t i = 0; i < x->n_tasks; i++)
        order[i] = i;
    /* Insertion sort: the entry count is bounded and qsort has no context
     * argument everywhere. */
    for (size_t i = 1; i < x->n_tasks; i++)
        for (size_t j = i; j > 0 && cmp_task_size(&order[j], &order[j - 1],
                                                  x->tasks) < 0;
             j--) {
            size_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    for (size_t k = 0; k < n_w; k++)
        if (!(w[k].mine = malloc(x->n_tasks * sizeof *w[k].mine))) {
            free(order);
            return nomem(x);
        }
    for (size_t i = 0; i < x->n_tasks; i++) {
        size_t best = 0;
        for (size_t k = 1; k < n_w; k++)
            if (w[k].load < w[best].load)
                best = k;
        w[best].mine[w[best].n_mine++] = order[i];
        w[best].load += x->tasks[order[i]].bytes;
    }
    free(order);
    /* Each worker walks the archive once: its entries in archive order. */
    for (size_t k = 0; k < n_w; k++)
        for (size_t i = 1; i < w[k].n_mine; i++)
            for (size_t j = i; j > 0 && w[k].mine[j] < w[k].mine[j - 1]; j--) {
                size_t tmp = w[k].mine[j];
                w[k].mine[j] = w[k].mine[j - 1];
                w[k].mine[j - 1] = tmp;
            }
    return 0;
}

static int run_workers(struct xstate *x)
{
    size_t n_w = (size_t)x->o->jobs;
    struct xworker *w = NULL;
    struct cdd_thread **thr = NULL;
    int r = 0;

    if (n_w > MAX_WORKERS)
        n_w = MAX_WORKERS;
    if (n_w > x->n_tasks)
        n_w = x->n_tasks;
    if (n_w == 0)
        return 0;
    if (!(w = calloc(n_w, sizeof *w)) || !(thr = calloc(n_w, sizeof *thr))) {
        r = nomem(x);
        goto out;
    }
    for (size_t k = 0; k < n_w && !r; k++)
        r = worker_init(&w[k], x);
    if (!r)
        r = assign(x, w, n_w);
    /* A worker that carries far more than its share (the one holding the
     * largest entry, when there are cores to spare) hashes and writes on a
     * thread of its own, so its inflating alone is the critical path. */
    for (size_t k = 0; !r && x->o->pipeline && (size_t)x->o->jobs > 2 &&
                       k < n_w;
         k++)
        if (w[k].load > 2 * (x->total_bytes / n_w))
            r = cdd_xpipe_new(&w[k].pipe);
    if (r)
        goto out;
    /* Workers 1.. on threads of their own, worker 0 on this one. */
    for (size_t k = 1; k < n_w; k++)
        if ((r = cdd_thread_start(&thr[k], work, &w[k])) < 0) {
            note_failure(x);
            break;
        }
    if (!r)
        (void)work(&w[0]);
    for (size_t k = 1; k < n_w; k++)
        (void)cdd_thread_join(thr[k]);
    if (x->failed)
        r = cdd_error_restore(&x->err);
    cdd_error_save_free(&x->err);
out:
    for (size_t k = 0; w && k < n_w; k++)
        worker_clear(&w[k]);
    free(w);
    free(thr);
    return r;
}

/* ---- driver -------------------------------------------------------------------- */

int cdd_extract(const char *archive_path, const struct cdd_extract_opts *o,
                const struct cdd_extract_sink *sink)
{
    struct xstate x;
    struct cdd_archive_entry e;
    int strip, r;

    memset(&x, 0, sizeof x);
    x.apath = archive_path;
    x.o = o;
    x.m = o->m;
    x.sink = sink;
    atomic_init(&x.stop, 0);
    atomic_init(&x.done_bytes, 0);
    strip = x.m ? x.m->archive.strip_components : o->strip_components;

    if ((r = worker_init(&x.w0, &x)) < 0)
        goto out;
    if (x.m && x.m->n_files && !(x.seen = calloc(x.m->n_files, 1))) {
        r = nomem(&x);
        goto out;
    }
    /* A tar.xz of several blocks decodes on up to `jobs` threads (one
     * still downloading: on the threaded decoder from its first block,
     * xzmt_int.h). */
    if ((r = cdd_archive_open_mt(archive_path, o->file,
                                 o->jobs > 0 ? (unsigned)o->jobs : 1,
                                 &x.ar)) < 0)
        goto out;
    x.w0.ar = x.ar;
    /* Several readers only on a zip, and only without a bound on all
     * files together (manifest create's), which one reader counts. */
    x.parallel = o->jobs > 1 && !o->max_total && cdd_archive_is_zip(x.ar);
    /* A zip still downloading (cdd/feed.h, issue 20) is read in one pass in
     * file order: the header pass would wait for every member's local
     * header, i.e. for nearly the whole download, before any data. */
    if (o->file && cdd_rfile_feed(o->file))
        x.parallel = 0;
    if (x.parallel && (r = cdd_mutex_new(&x.mu)) < 0)
        goto out;
    if (!x.parallel && o->pipeline && (r = cdd_xpipe_new(&x.w0.pipe)) < 0)
        goto out;

    for (;;) {
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, archive_path, 0,
                         "interrupted while checking the archive");
            goto out;
        }
        r = cdd_archive_next(x.ar, &e);
        if (r < 0)
            goto out;
        if (r == 1)
            break;
        if (++x.n_headers > CDD_MAX_ENTRIES) {
            r = cdd_fail(CDD_E_ARCHIVE, archive_path, 0,
                         "more than %d entries", CDD_MAX_ENTRIES);
            goto out;
        }
        x.name_bytes += strlen(e.path) + 1;
        if (x.name_bytes > CDD_MAX_NAME_BYTES) {
            r = cdd_fail(CDD_E_ARCHIVE, archive_path, 0,
                         "entry names longer than %u bytes in all",
                         CDD_MAX_NAME_BYTES);
            goto out;
        }
        if ((r = one_entry(&x, &e, strip)) < 0)
            goto out;
        /* Parallel: the header pass reads little; progress is the
         * workers' decoding. */
        if (!x.parallel)
            progress(&x);
    }
    r = check_missing(&x);
    if (!r)
        r = check_symlinks(&x);
    /* Parallel: everything the headers tell is checked; now the data. */
    if (!r && x.parallel)
        r = run_workers(&x);
out:
    cdd_archive_close(x.ar);
    x.w0.ar = NULL;
    worker_clear(&x.w0);
    cdd_mutex_free(x.mu);
    free(x.seen);
    for (size_t i = 0; i < x.n_tasks; i++)
        free(x.tasks[i].raw);
    free(x.tasks);
    for (size_t i = 0; i < x.n_recs; i++) {
        free(x.recs[i].path);
        free(x.recs[i].target);
    }
    free(x.recs);
    for (size_t i = 0; i < x.n_slots; i++)
        free(x.slots[i].key);
    free(x.slots);
    return r;
}
