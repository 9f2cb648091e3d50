/* The streaming check of an archive against its manifest (BRIEF §2 step 4,
 * §6). One pass over the archive, in its own order: each entry's name is
 * validated, its type and size checked, its bytes read at most to its bound
 * plus one (a decompression bomb stops there), hashed while they go to the
 * sink, and compared with the manifest. What needs the whole archive --
 * missing entries, where each symlink chain ends -- is checked after the last
 * entry; the caller discards whatever the sink wrote unless everything
 * passed. Memory is one 256 KiB buffer plus a small record per entry,
 * whatever the size of the archive. */
#include "cdd/extract.h"

#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/hash.h"
#include "cdd/pathsafe.h"

#define XBLOCK (256u * 1024u)

/* A file or symlink seen, for duplicate and symlink checks at the end. */
struct xrec {
    char *path;   /* after strip_components */
    char *target; /* symlinks */
    int is_symlink;
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

struct xstate {
    const char *apath;
    const struct cdd_extract_opts *o;
    const struct cdd_manifest *m;
    const struct cdd_extract_sink *sink;
    struct cdd_archive *ar;
    struct cdd_sha256 *h;
    unsigned char *buf;
    unsigned char *seen; /* per manifest file */
    struct xrec *recs;
    size_t n_recs, cap_recs;
    struct xslot *slots;
    size_t n_slots, used_slots;
    size_t n_headers;
    uint64_t bytes_all;   /* of all files so far, against o->max_total */
    size_t name_bytes;    /* of all names so far, against CDD_MAX_NAME_BYTES */
};

/* Quote an untrusted name into one of a few rotating buffers, so a message
 * can name two entries. */
static const char *q(const char *name)
{
    static _Thread_local char bufs[3][320];
    static _Thread_local int next;
    char *b = bufs[next];
    next = (next + 1) % 3;
    return cdd_path_printable(name, b, sizeof bufs[0]);
}

static int nomem(struct xstate *x)
{
    return cdd_fail(CDD_E_NOMEM, x->apath, 0, NULL);
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
    if (x->n_recs == x->cap_recs) {
        size_t n = x->cap_recs ? x->cap_recs * 2 : 64;
        struct xrec *nr = realloc(x->recs, n * sizeof *nr);
        if (!nr) {
            r = nomem(x);
            goto out;
        }
        x->recs = nr;
        x->cap_recs = n;
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

/* Exact lookup of a recorded entry. */
static const struct xrec *find_rec(struct xstate *x, const char *path)
{
    char *fold;
    struct xslot *s;
    const struct xrec *rec = NULL;
    if (!x->n_slots || !(fold = cdd_path_fold(path)))
        return NULL;
    s = slot_find(x, fold);
    if (s->key && s->rec >= 0 && strcmp(x->recs[s->rec].path, path) == 0)
        rec = &x->recs[s->rec];
    free(fold);
    return rec;
}

/* ---- per entry ---------------------------------------------------------------- */

static void progress(struct xstate *x)
{
    if (x->sink && x->sink->progress)
        x->sink->progress(x->sink->ud, cdd_archive_bytes_read(x->ar),
                          cdd_archive_file_size(x->ar));
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
    if (cdd_role_from_path(m->platform, xe->path, is_symlink, &xe->role))
        return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                        "unexpected entry %s (not in the manifest), and no "
                        "layout rule places %s %s",
                        q(xe->path), is_symlink ? "a symlink" : "a file",
                        q(cdd_path_basename(xe->path)));
    return 0;
}

static int total_bound(struct xstate *x, const struct cdd_archive_entry *e)
{
    return cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                    "entry \"%s\": the files hold more than %llu bytes in "
                    "all, the bound on what this command reads",
                    q(e->path), (unsigned long long)x->o->max_total);
}

/* Stream one regular file's data: bounded, hashed, written, compared. */
static int file_data(struct xstate *x, const struct cdd_archive_entry *e,
                     struct cdd_xentry *xe)
{
    const struct cdd_mfile *mf = xe->mfile;
    int sized = mf && mf->has_size;
    uint64_t limit = sized ? mf->size : CDD_MAX_ENTRY_SIZE;
    uint64_t total = 0;
    struct cdd_file *f = NULL;
    int r, by_total = 0;

    /* What is left of the bound on all files together, when it is
     * tighter than the entry's own. */
    if (x->o->max_total && x->o->max_total - x->bytes_all < limit) {
        limit = x->o->max_total - x->bytes_all;
        by_total = 1;
    }

    /* Refuse on the header's word before reading a byte. */
    if (e->size_known && sized && e->size != mf->size) {
        r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                     "entry \"%s\": size %llu bytes, the manifest says %llu",
                     q(e->path), (unsigned long long)e->size,
                     (unsigned long long)mf->size);
        goto out;
    }
    if (e->size_known && e->size > limit && by_total) {
        r = total_bound(x, e);
        goto out;
    }
    if (e->size_known && e->size > limit) {
        r = cdd_fail(CDD_E_ARCHIVE, x->apath, 0,
                     "entry \"%s\": size %llu bytes is over the bound of %llu "
                     "for an entry the manifest does not size",
                     q(e->path), (unsigned long long)e->size,
                     (unsigned long long)limit);
        goto out;
    }

    if ((r = cdd_sha256_reset(x->h)) < 0)
        goto out;
    if (x->sink && x->sink->begin &&
        (r = x->sink->begin(x->sink->ud, xe, &f)) < 0)
        goto out;

    for (;;) {
        /* Ask for no more than one byte past the bound: the bomb's bytes
         * beyond that are never decompressed. */
        uint64_t room = limit + 1 - total;
        size_t want = room < XBLOCK ? (size_t)room : XBLOCK;
        size_t got = 0;

        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, x->apath, 0,
                         "interrupted while reading entry \"%s\"",
                         q(e->path));
            goto out;
        }
        if ((r = cdd_archive_read(x->ar, x->buf, want, &got)) < 0)
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
        if ((r = cdd_sha256_update(x->h, x->buf, got)) < 0)
            goto out;
        if (f && (r = cdd_file_write(f, x->buf, got)) < 0)
            goto out;
        progress(x);
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
    if ((r = cdd_sha256_final(x->h, xe->sha256)) < 0)
        goto out;
    xe->size = total;
    x->bytes_all += total;
    if (mf && mf->has_sha256 &&
        memcmp(mf->sha256, xe->sha256, CDD_SHA256_LEN) != 0) {
        char got_hex[CDD_SHA256_HEX], want_hex[CDD_SHA256_HEX];
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
    cdd_file_abort(f);
    return r;
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
    if (e->type == CDD_ENTRY_FILE)
        return file_data(x, e, &xe);
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
            next = find_rec(x, full);
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
    strip = x.m ? x.m->archive.strip_components : o->strip_components;

    if ((r = cdd_sha256_new(&x.h)) < 0)
        goto out;
    if (!(x.buf = malloc(XBLOCK)) ||
        (x.m && x.m->n_files && !(x.seen = calloc(x.m->n_files, 1)))) {
        r = nomem(&x);
        goto out;
    }
    if ((r = cdd_archive_open(archive_path, &x.ar)) < 0)
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
        progress(&x);
    }
    r = check_missing(&x);
    if (!r)
        r = check_symlinks(&x);
out:
    cdd_archive_close(x.ar);
    cdd_sha256_free(x.h);
    free(x.buf);
    free(x.seen);
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
