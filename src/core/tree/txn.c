/* The transaction engine (txn.h): moves staged files into a tree under a
 * journal so that a failure, a crash or a kill at any point leaves the tree
 * exactly as before or exactly as after, and cdd_txn_recover() can tell which
 * and finish the job. The place it works on is the tree (tree.c): every path
 * here is a tree path, resolved beneath the root there; the journal's text
 * is journal.c's.
 *
 * Commit, step by step (every change goes through tree.c's operations, so
 * the fault injector can fail or kill each one):
 *   1. plan: which destinations exist (and what they are: type, size and
 *      sha256, or link target - recorded, so a restore brings back only
 *      that), which folders must be created;
 *   2. journal: the whole plan ending with an "E" line, written to
 *      journal.tmp, synced, renamed to journal, .cudnn-deploy synced;
 *   3. create the missing folders; for each operation move the file it
 *      replaces or deletes to backup/<id>/<dest>, then the new one into
 *      place; remove the folders asked for when they are empty;
 *   4. sync every folder touched;
 *   5. append "C" to the journal and sync it: THE commit point;
 *   6. clean up: the stage, the backup (purged, or removed when empty),
 *      emptied folders of older backups used as sources, the journal.
 * Any failure before 5 rolls back. After 5 the transaction stands: a
 * clean-up that fails still returns success (the tree is "after") and
 * leaves the journal for the next recover to finish.
 *
 * Roll-back reads the state of the disk rather than a log of the steps
 * done, so an interrupted roll-back is simply run again:
 *   R (reverse): folder missing -> create it again;
 *   P (reverse): src missing and dest present -> dest back to src (the
 *                new file leaves, and a restored backup returns to its
 *                place); then backup/<id>/<dest> present -> back to dest;
 *   D (reverse): backup/<id>/<dest> present -> back to dest;
 *   then the created folders (M, reverse) when empty, backup/<id>, sync,
 *   the journal, and only then the stage: while the journal exists the
 *   stage is whole, so "src missing" always means "moved into dest".
 * Before any of it, every backup that would come back is checked against
 * the journal's record of it (type and size; and sha256 when the journal
 * was read from disk): a backup that is not what was recorded is tampered
 * state, CDD_E_STATE, and nothing is touched.
 *
 * This file uses only tree.h, journal.h and standard C, so it is the same
 * code on every platform. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/journal.h"
#include "cdd/pathsafe.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"
#include "txn.h"
#include "cdd/sys.h"

#define JOURNAL_MAX ((size_t)256 << 20)
/* Paths one transaction names (dests, sources, their folders, the
 * expectations on dests): its journal holds at most 4 records per entry of
 * a package (journal.c), each naming a dest and maybe a source. */
#define TXN_MAX_PATHS (8 * (size_t)CDD_MAX_ENTRIES)
#define STAGE_DIR_PREFIX CDD_STATE_DIR "/" CDD_STAGE_PREFIX
#define BACKUP_PREFIX CDD_BACKUP_DIR "/"

/* ---- small strings ---------------------------------------------------- */


/* a + sep + b, malloc'd. */
static char *str_cat3(const char *a, const char *sep, const char *b)
{
    size_t la = strlen(a), ls = strlen(sep), lb = strlen(b);
    char *d = malloc(la + ls + lb + 1);
    if (!d)
        return NULL;
    memcpy(d, a, la);
    memcpy(d + la, sep, ls);
    memcpy(d + la + ls, b, lb + 1);
    return d;
}

/* The folder part of a path ("a/b/c" -> "a/b"; "c" -> "", the root). */
static char *parent_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return cdd_strndup(path, s ? (size_t)(s - path) : 0);
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int nomem(void)
{
    return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* A set of strings that remembers insertion order, so that what is done for
 * each member (folder syncs) happens in the same order on every run: the
 * fault injector numbers operations, and tests rely on that being stable. */
struct strset {
    char **items;
    size_t n, cap;
    size_t *slots; /* index + 1 into items; 0 = empty */
    size_t nslots;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static size_t *strset_find(const struct strset *s, const char *k)
{
    if (!s->nslots)
        return NULL;
    size_t mask = s->nslots - 1, h = (size_t)str_hash(k) & mask;
    while (s->slots[h]) {
        if (strcmp(s->items[s->slots[h] - 1], k) == 0)
            return &s->slots[h];
        h = (h + 1) & mask;
    }
    return &s->slots[h];
}

static int strset_has(const struct strset *s, const char *k)
{
    size_t *slot = strset_find(s, k);
    return slot && *slot;
}

/* Add a copy of k; *added (optional) tells whether it was new. */
static int strset_add(struct strset *s, const char *k, int *added)
{
    if (added)
        *added = 0;
    if ((s->n + 1) * 2 > s->nslots) {
        size_t ns = s->nslots ? s->nslots * 2 : 64;
        size_t *slots = calloc(ns, sizeof *slots);
        if (!slots)
            return nomem();
        free(s->slots);
        s->slots = slots;
        s->nslots = ns;
        for (size_t i = 0; i < s->n; i++)
            *strset_find(s, s->items[i]) = i + 1;
    }
    size_t *slot = strset_find(s, k);
    if (*slot)
        return 0;
    int r = CDD_GROW(s->items, &s->cap, s->n + 1, TXN_MAX_PATHS,
                     "transaction paths");
    if (r)
        return r;
    if (!(s->items[s->n] = cdd_strdup(k)))
        return nomem();
    *slot = ++s->n;
    if (added)
        *added = 1;
    return 0;
}

static void strset_free(struct strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->items[i]);
    free(s->items);
    free(s->slots);
    memset(s, 0, sizeof *s);
}

/* ---- the plan ----------------------------------------------------------- */

/* What commit and recover share: enough to roll forward or back. */
struct txn_plan {
    struct cdd_tree *tree;
    struct cdd_journal j;
    int from_disk; /* read back by recover: check backups' sha256 too */
};

/* A caller's record of what a dest holds (cdd_txn_expect). */
struct expect {
    char *dest;
    struct cdd_jprev prev;
};

struct cdd_txn {
    struct txn_plan p;
    char *stage_rel;
    struct strset names; /* "d:<dest>", "s:<src>", used once each */
    struct expect *exp;
    size_t n_exp;
};

static void plan_clear(struct txn_plan *p)
{
    cdd_journal_clear(&p->j);
    memset(p, 0, sizeof *p);
}

static void txn_free(struct cdd_txn *t)
{
    if (!t)
        return;
    plan_clear(&t->p);
    free(t->stage_rel);
    strset_free(&t->names);
    for (size_t i = 0; i < t->n_exp; i++) {
        free(t->exp[i].dest);
        cdd_jprev_clear(&t->exp[i].prev);
    }
    free(t->exp);
    free(t);
}

static char *stage_rel_of(const char *id)
{
    return str_cat3(STAGE_DIR_PREFIX, "", id);
}

static char *backup_id_rel(const struct txn_plan *p)
{
    return str_cat3(BACKUP_PREFIX, "", p->j.id);
}

/* backup/<id>/<dest>, relative to the root. */
static char *backup_rel(const struct txn_plan *p, const char *dest)
{
    char *b = backup_id_rel(p);
    char *r = b ? str_cat3(b, "/", dest) : NULL;
    free(b);
    return r;
}

static int type_of(const struct txn_plan *p, const char *rel,
                   enum cdd_ftype *type)
{
    struct cdd_stat st;
    int r = cdd_tree_lstat(p->tree, rel, &st);
    *type = r ? CDD_FT_NONE : st.type;
    return r;
}

static int stop_at_first(void *ud, const char *name)
{
    (void)ud;
    (void)name;
    return 1;
}

/* Remove a folder if it exists and is empty; anything else is left alone.
 * Emptiness is checked first rather than inferred from rmdir's error, which
 * differs between platforms. */
static int rmdir_if_empty(const struct txn_plan *p, const char *rel)
{
    enum cdd_ftype type;
    int r = type_of(p, rel, &type);
    if (r || type != CDD_FT_DIR)
        return r;
    r = cdd_tree_list(p->tree, rel, stop_at_first, NULL);
    if (r == 1)
        return 0;
    if (r)
        return r;
    return cdd_tree_rmdir(p->tree, rel);
}

static int unlink_if_present(const struct txn_plan *p, const char *rel)
{
    enum cdd_ftype type;
    int r = type_of(p, rel, &type);
    if (r || type == CDD_FT_NONE)
        return r;
    return cdd_tree_remove_tree(p->tree, rel);
}

/* Sync each folder of the set that still exists ("" is the root). */
static int sync_dirs(const struct txn_plan *p, const struct strset *dirs)
{
    for (size_t i = 0; i < dirs->n; i++) {
        enum cdd_ftype type = CDD_FT_DIR;
        int r = *dirs->items[i] ? type_of(p, dirs->items[i], &type) : 0;
        if (!r && type == CDD_FT_DIR)
            r = cdd_tree_sync_dir(p->tree, dirs->items[i]);
        if (r)
            return r;
    }
    return 0;
}

/* Add the folder that holds rel to the set of folders to sync. */
static int add_parent(struct strset *dirs, const char *rel)
{
    char *d = parent_of(rel);
    if (!d)
        return nomem();
    int r = strset_add(dirs, d, NULL);
    free(d);
    return r;
}

/* ---- begin / queue ------------------------------------------------------ */

/* Days since 1970-01-01 to a civil date (proleptic Gregorian), so the id
 * needs neither gmtime_r nor gmtime_s. */
static void civil_from_days(long long z, int *y, int *m, int *d)
{
    z += 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static void make_base_id(char *buf, size_t len)
{
    long long secs = (long long)cdd_now();
    long long days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    int y, m, d;
    civil_from_days(days, &y, &m, &d);
    snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ-%ld", y, m, d,
             (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60),
             cdd_getpid());
}

int cdd_txn_begin(struct cdd_tree *tree, const char *kind,
                  struct cdd_txn **out)
{
    struct cdd_txn *t = NULL;
    char *backup = NULL;
    char base[64], id[80]; /* fixed: a time, a pid and a counter */
    int r = 0;
    *out = NULL;
    if (!cdd_jkind_ok(kind))
        return cdd_fail(CDD_E_USAGE, NULL, 0, "bad transaction kind");
    if (!cdd_tree_locked(tree) || !cdd_tree_has_state(tree))
        return cdd_fail(CDD_E_STATE, cdd_tree_root(tree), 0,
                        "take the tree's lock before a transaction");
    if (!(t = calloc(1, sizeof *t)) || !(t->p.j.kind = cdd_strdup(kind))) {
        free(t);
        return nomem();
    }
    t->p.tree = tree;

    /* Two transactions of one process within a second share time and pid;
     * the counter keeps their stage and backup folders apart. */
    make_base_id(base, sizeof base);
    for (unsigned k = 1;; k++) {
        if (k == 1)
            snprintf(id, sizeof id, "%s", base);
        else
            snprintf(id, sizeof id, "%s-%u", base, k);
        free(t->stage_rel);
        free(backup);
        backup = NULL;
        if (!(t->stage_rel = stage_rel_of(id)) ||
            !(backup = str_cat3(BACKUP_PREFIX, "", id))) {
            r = nomem();
            goto out;
        }
        enum cdd_ftype t1, t2;
        r = type_of(&t->p, t->stage_rel, &t1);
        if (!r)
            r = type_of(&t->p, backup, &t2);
        if (r)
            goto out;
        if (t1 == CDD_FT_NONE && t2 == CDD_FT_NONE)
            break;
        if (k >= 1000) {
            r = cdd_fail(CDD_E_STATE, t->stage_rel, 0,
                         "cannot find a free transaction id");
            goto out;
        }
    }
    if (!(t->p.j.id = cdd_strdup(id))) {
        r = nomem();
        goto out;
    }
    r = cdd_tree_mkdir(tree, t->stage_rel);
out:
    free(backup);
    if (r)
        txn_free(t);
    else
        *out = t;
    return r;
}

const char *cdd_txn_id(const struct cdd_txn *t)
{
    return t->p.j.id;
}

const char *cdd_txn_stage_rel(const struct cdd_txn *t)
{
    return t->stage_rel;
}

struct cdd_tree *cdd_txn_tree(const struct cdd_txn *t)
{
    return t->p.tree;
}

size_t cdd_txn_count(const struct cdd_txn *t)
{
    return t->p.j.nops;
}

/* Each name may be used once: a second put to one dest would back up the
 * first one's new file, and roll-back could not tell them apart. Both names
 * are checked before either is taken, so a refused call leaves no trace. */
static int claim(struct cdd_txn *t, const char *dest, const char *src)
{
    char *kd = str_cat3("d:", "", dest);
    char *ks = src ? str_cat3("s:", "", src) : NULL;
    int r = 0;
    if (!kd || (src && !ks))
        r = nomem();
    else if (strset_has(&t->names, kd))
        r = cdd_fail(CDD_E_UNSAFE, dest, 0, "named twice in one transaction");
    else if (ks && strset_has(&t->names, ks))
        r = cdd_fail(CDD_E_UNSAFE, src, 0, "named twice in one transaction");
    if (!r)
        r = strset_add(&t->names, kd, NULL);
    if (!r && ks)
        r = strset_add(&t->names, ks, NULL);
    free(kd);
    free(ks);
    return r;
}

int cdd_txn_put(struct cdd_txn *t, const char *src_rel, const char *dest_rel)
{
    if (!cdd_jdest_ok(dest_rel))
        return cdd_fail(CDD_E_UNSAFE, dest_rel, 0,
                        "not a path the transaction may write");
    if (!cdd_jsrc_ok(src_rel, t->p.j.id))
        return cdd_fail(CDD_E_UNSAFE, src_rel, 0,
                        "not a staged file or an earlier backup");
    int r = claim(t, dest_rel, src_rel);
    if (!r)
        r = cdd_journal_push(&t->p.j, 'P', src_rel, dest_rel, NULL);
    return r;
}

int cdd_txn_del(struct cdd_txn *t, const char *dest_rel)
{
    if (!cdd_jdest_ok(dest_rel))
        return cdd_fail(CDD_E_UNSAFE, dest_rel, 0,
                        "not a path the transaction may remove");
    int r = claim(t, dest_rel, NULL);
    if (!r)
        r = cdd_journal_push(&t->p.j, 'D', NULL, dest_rel, NULL);
    return r;
}

int cdd_txn_rmdir(struct cdd_txn *t, const char *dir_rel)
{
    if (!cdd_jdir_ok(dir_rel))
        return cdd_fail(CDD_E_UNSAFE, dir_rel, 0,
                        "not a folder the transaction may remove");
    int r = claim(t, dir_rel, NULL);
    if (!r)
        r = cdd_journal_push(&t->p.j, 'R', NULL, dir_rel, NULL);
    return r;
}

int cdd_txn_expect(struct cdd_txn *t, const char *dest_rel,
                   const struct cdd_jprev *prev)
{
    int r = CDD_GROW(t->exp, NULL, t->n_exp + 1, TXN_MAX_PATHS,
                     "transaction expectations");
    if (r)
        return r;
    struct expect *e = &t->exp[t->n_exp];
    memset(e, 0, sizeof *e);
    if (!(e->dest = cdd_strdup(dest_rel)) || cdd_jprev_copy(&e->prev, prev)) {
        free(e->dest);
        return nomem();
    }
    t->n_exp++;
    return 0;
}

/* ---- commit: planning --------------------------------------------------- */

/* What dest holds now, for the journal: type and size (and the caller's
 * sha256 when it says the same), else hashed here. */
static int record_prev(struct cdd_txn *t, const char *dest,
                       const struct cdd_stat *st, struct cdd_jprev *prev)
{
    memset(prev, 0, sizeof *prev);
    prev->type = st->type;
    if (st->type == CDD_FT_SYMLINK)
        return cdd_tree_readlink_dup(t->p.tree, dest, &prev->target);
    prev->size = st->size;
    for (size_t i = 0; i < t->n_exp; i++) {
        const struct cdd_jprev *e = &t->exp[i].prev;
        if (strcmp(t->exp[i].dest, dest) == 0 && e->type == CDD_FT_FILE &&
            e->size == st->size) {
            memcpy(prev->sha256, e->sha256, CDD_SHA256_LEN);
            return 0;
        }
    }
    uint64_t size = 0;
    int r = cdd_tree_sha256(t->p.tree, dest, prev->sha256, &size);
    if (!r && size != st->size)
        r = cdd_fail(CDD_E_IO, dest, 0, "changed while it was read");
    return r;
}

static int deeper_first(const void *a, const void *b)
{
    const struct cdd_jop *x = a, *y = b;
    size_t dx = 0, dy = 0;
    for (const char *c = x->dest; *c; c++)
        dx += *c == '/';
    for (const char *c = y->dest; *c; c++)
        dy += *c == '/';
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Folders of rel (its parents) that do not exist yet: the last n_missing,
 * outermost first. */
static int add_missing_dirs(struct txn_plan *p, const char *rel,
                            size_t n_missing)
{
    size_t n_parents = 0;
    for (const char *c = rel; *c; c++)
        n_parents += *c == '/';
    size_t first = n_parents - n_missing, k = 0;
    int r = 0;
    char *pre = cdd_strdup(rel);
    if (!pre)
        return nomem();
    for (size_t i = 0; pre[i] && !r; i++) {
        if (pre[i] != '/')
            continue;
        if (k++ >= first) {
            pre[i] = '\0';
            r = cdd_journal_add_mdir(&p->j, pre);
            pre[i] = '/';
        }
    }
    free(pre);
    return r;
}

/* Look at the tree and decide what commit will do: which dests exist (they
 * go to backup, recorded), which folders must be created, which deletes and
 * folder removals apply. Refuses plans that would replace a folder with a
 * file, write through a link out of the tree, or reach one file by two
 * names. Sorts folder removals last, deepest first. */
static int plan_commit(struct cdd_txn *t)
{
    struct strset canon = {0};
    struct txn_plan *p = &t->p;
    char *cn = NULL;
    int r = 0;
    for (size_t i = 0; i < p->j.n_mdirs; i++)
        free(p->j.mdirs[i]);
    p->j.n_mdirs = 0;
    for (size_t i = 0; i < p->j.nops && !r; i++) {
        struct cdd_jop *op = &p->j.ops[i];
        struct cdd_stat st = {0};
        size_t missing = 0;
        int added = 0;
        free(cn);
        cn = NULL;
        if (op->type == 'R') {
            /* Only a folder that is there (not a link) is removed, and
             * never through a link out of the tree. */
            r = cdd_tree_canon(p->tree, op->dest, &cn, &missing);
            if (!r && !missing)
                r = cdd_tree_lstat(p->tree, op->dest, &st);
            op->journaled = !missing && st.type == CDD_FT_DIR;
            continue;
        }
        if (op->type == 'P') {
            enum cdd_ftype type;
            r = type_of(p, op->src, &type);
            if (!r && type == CDD_FT_NONE)
                r = cdd_fail(CDD_E_NOTFOUND, op->src, 0,
                             "staged file is missing");
            else if (!r && type != CDD_FT_FILE && type != CDD_FT_SYMLINK)
                r = cdd_fail(CDD_E_STATE, op->src, 0,
                             "is neither a file nor a symlink");
            if (r)
                break;
        }
        r = cdd_tree_canon(p->tree, op->dest, &cn, &missing);
        if (!r && missing && op->type == 'P')
            r = add_missing_dirs(p, op->dest, missing);
        if (r)
            break;
        if (!missing && (r = cdd_tree_lstat(p->tree, op->dest, &st)) != 0)
            break;
        if (st.type == CDD_FT_DIR || st.type == CDD_FT_OTHER) {
            char *abs = cdd_tree_abs(p->tree, op->dest);
            r = cdd_fail(CDD_E_TARGET, abs ? abs : op->dest, 0,
                         st.type == CDD_FT_DIR
                             ? "is a folder; refusing to replace it"
                             : "is not a regular file or symlink");
            free(abs);
            break;
        }
        cdd_jprev_clear(&op->prev);
        op->has_prev = st.type != CDD_FT_NONE;
        if (op->type == 'D') /* a file that is already gone needs no delete */
            op->journaled = op->has_prev;
        if (op->has_prev && (r = record_prev(t, op->dest, &st, &op->prev)))
            break;
        r = strset_add(&canon, cn, &added);
        if (!r && !added) {
            char *abs = cdd_tree_abs(p->tree, op->dest);
            r = cdd_fail(CDD_E_TARGET, abs ? abs : op->dest, 0,
                         "is reached by two names in one transaction "
                         "(through a symlinked folder)");
            free(abs);
        }
    }
    /* A folder to create that is also a file to put: refuse, or the put
     * would fail half-way. */
    for (size_t i = 0; !r && i < p->j.n_mdirs; i++) {
        char *key = str_cat3("d:", "", p->j.mdirs[i]);
        if (!key)
            r = nomem();
        else if (strset_has(&t->names, key))
            r = cdd_fail(CDD_E_TARGET, p->j.mdirs[i], 0,
                         "is both a file and a folder in one transaction");
        free(key);
    }
    if (!r) {
        /* Removals of folders come last (they must be empty by then) and
         * deepest first (a parent empties when its child goes). */
        size_t k = 0, n = p->j.nops;
        struct cdd_jop *sorted = malloc((n ? n : 1) * sizeof *sorted);
        if (!sorted) {
            r = nomem();
        } else {
            for (size_t i = 0; i < n; i++)
                if (p->j.ops[i].type != 'R')
                    sorted[k++] = p->j.ops[i];
            size_t first_r = k;
            for (size_t i = 0; i < n; i++)
                if (p->j.ops[i].type == 'R')
                    sorted[k++] = p->j.ops[i];
            qsort(sorted + first_r, k - first_r, sizeof *sorted, deeper_first);
            memcpy(p->j.ops, sorted, n * sizeof *sorted);
            free(sorted);
        }
    }
    free(cn);
    strset_free(&canon);
    return r;
}

/* ---- commit: doing ------------------------------------------------------ */

/* Move dest to backup/<id>/<dest>, creating the folders the backup needs,
 * and note every folder whose entries changed. */
static int move_to_backup(const struct txn_plan *p, const char *dest,
                          struct strset *syncs)
{
    char *bk_rel = backup_rel(p, dest);
    char *bk_dir = bk_rel ? parent_of(bk_rel) : NULL;
    int r;
    if (!bk_dir) {
        r = nomem();
        goto out;
    }
    r = cdd_tree_mkdirs(p->tree, bk_dir, NULL);
    /* Each backup folder from .cudnn-deploy down may be new, and the last
     * one gains the file: sync them all (a set: once per commit each). */
    for (char *s = bk_rel; !r && (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        r = strset_add(syncs, bk_rel, NULL);
        *s = '/';
    }
    if (!r)
        r = cdd_tree_rename(p->tree, dest, bk_rel);
    if (!r)
        r = add_parent(syncs, dest);
out:
    free(bk_rel);
    free(bk_dir);
    return r;
}

static int apply_op(const struct txn_plan *p, const struct cdd_jop *op,
                    struct strset *syncs)
{
    int r = 0;
    switch (op->type) {
    case 'P':
        if (op->has_prev)
            r = move_to_backup(p, op->dest, syncs);
        if (!r)
            r = cdd_tree_rename(p->tree, op->src, op->dest);
        if (!r)
            r = add_parent(syncs, op->src);
        if (!r)
            r = add_parent(syncs, op->dest);
        break;
    case 'D':
        r = move_to_backup(p, op->dest, syncs);
        break;
    case 'R':
        r = rmdir_if_empty(p, op->dest);
        if (!r)
            r = add_parent(syncs, op->dest);
        break;
    }
    return r;
}

/* Remove the folders that held src in an earlier backup once they are
 * empty, up to and including backup/ itself: an uninstall that restores
 * every file leaves no trace of the install. Missing folders are skipped
 * (an earlier, interrupted clean-up removed them). */
static int prune_backup_parents(const struct txn_plan *p, const char *src)
{
    char *rel = parent_of(src);
    int r = 0;
    if (!rel)
        return nomem();
    while (!r && strcmp(rel, CDD_STATE_DIR) != 0 &&
           has_prefix(rel, CDD_STATE_DIR "/")) {
        enum cdd_ftype type;
        r = type_of(p, rel, &type);
        if (!r && type == CDD_FT_DIR) {
            r = cdd_tree_list(p->tree, rel, stop_at_first, NULL);
            if (r == 1) {
                r = 0;
                break;
            }
            if (!r)
                r = cdd_tree_rmdir(p->tree, rel);
        }
        char *up = parent_of(rel);
        free(rel);
        rel = up;
        if (!rel)
            r = nomem();
    }
    free(rel);
    return r;
}

/* After the commit point: remove what the transaction no longer needs.
 * Every step is a removal that tolerates "already gone", so recover can run
 * it again after a crash; the journal goes last. */
static int txn_finish(const struct txn_plan *p)
{
    char *stage = stage_rel_of(p->j.id);
    char *bk = backup_id_rel(p);
    int r;
    if (!stage || !bk) {
        r = nomem();
        goto out;
    }
    r = cdd_tree_remove_tree(p->tree, stage);
    for (size_t i = 0; !r && i < p->j.nops; i++)
        if (p->j.ops[i].type == 'P' && has_prefix(p->j.ops[i].src, BACKUP_PREFIX))
            r = prune_backup_parents(p, p->j.ops[i].src);
    if (!r)
        r = p->j.purge ? cdd_tree_remove_tree(p->tree, bk)
                       : rmdir_if_empty(p, bk);
    if (!r)
        r = rmdir_if_empty(p, CDD_BACKUP_DIR);
    /* What was removed must stay removed before the journal that would
     * redo it goes. */
    if (!r) {
        enum cdd_ftype type;
        r = type_of(p, CDD_BACKUP_DIR, &type);
        if (!r && type == CDD_FT_DIR)
            r = cdd_tree_sync_dir(p->tree, CDD_BACKUP_DIR);
    }
    if (!r)
        r = cdd_tree_sync_dir(p->tree, CDD_STATE_DIR);
    if (!r)
        r = unlink_if_present(p, CDD_JOURNAL_FILE);
    if (!r)
        r = cdd_tree_sync_dir(p->tree, CDD_STATE_DIR);
out:
    free(stage);
    free(bk);
    return r;
}

/* Is the backup of op, which is there, what the journal recorded? 0, or
 * CDD_E_STATE naming the journal and the record. */
static int check_backup(const struct txn_plan *p, const struct cdd_jop *op,
                        const char *bkf)
{
    struct cdd_stat st;
    char why[160] = ""; /* fixed: the reasons below name no path */
    int r = cdd_tree_lstat(p->tree, bkf, &st);
    if (r)
        return r;
    if (!op->has_prev) {
        snprintf(why, sizeof why, "no backup was recorded for it");
    } else if (st.type != op->prev.type) {
        snprintf(why, sizeof why, "recorded as a %s, found a %s",
                 op->prev.type == CDD_FT_SYMLINK ? "link" : "file",
                 st.type == CDD_FT_SYMLINK ? "link"
                 : st.type == CDD_FT_FILE  ? "file"
                 : st.type == CDD_FT_DIR   ? "folder"
                                           : "special file");
    } else if (st.type == CDD_FT_SYMLINK) {
        char *target = NULL;
        r = cdd_tree_readlink_dup(p->tree, bkf, &target);
        if (r)
            return r;
        if (strcmp(target, op->prev.target) != 0)
            snprintf(why, sizeof why, "the link's target differs from the "
                                      "recorded one");
        free(target);
    } else if (st.size != op->prev.size) {
        snprintf(why, sizeof why, "size %llu, recorded %llu",
                 (unsigned long long)st.size,
                 (unsigned long long)op->prev.size);
    } else if (p->from_disk) {
        uint8_t got[CDD_SHA256_LEN];
        r = cdd_tree_sha256(p->tree, bkf, got, NULL);
        if (r)
            return r;
        if (memcmp(got, op->prev.sha256, CDD_SHA256_LEN) != 0)
            snprintf(why, sizeof why, "its sha256 differs from the recorded "
                                      "one");
    }
    if (!why[0])
        return 0;
    char *journal = cdd_tree_abs(p->tree, CDD_JOURNAL_FILE);
    char *shown = cdd_path_shown(op->dest);
    r = cdd_fail(CDD_E_STATE, journal ? journal : CDD_JOURNAL_FILE, 0,
                 "record %c %s: its backup %s is not what was recorded (%s); "
                 "nothing was changed: inspect the tree and remove the "
                 "journal",
                 op->type, CDD_SHOWN(shown), bkf, why);
    free(shown);
    free(journal);
    return r;
}

/* Before a roll-back touches anything: every backup it would bring back is
 * what was recorded. */
static int check_backups(const struct txn_plan *p)
{
    int r = 0;
    for (size_t i = 0; !r && i < p->j.nops; i++) {
        const struct cdd_jop *op = &p->j.ops[i];
        enum cdd_ftype type;
        if (op->type == 'R' || !op->journaled)
            continue;
        char *bkf = backup_rel(p, op->dest);
        if (!bkf)
            return nomem();
        r = type_of(p, bkf, &type);
        if (!r && type != CDD_FT_NONE)
            r = check_backup(p, op, bkf);
        free(bkf);
    }
    return r;
}

/* A path a journal's record names, checked: it resolves beneath the root
 * without a link that leaves the tree or leads into .cudnn-deploy, and
 * (tree.c's rule for state paths) through no link at all inside
 * .cudnn-deploy. A fault is tampered state naming the journal, the record
 * (its line and kind) and what is wrong where. */
static int check_one_path(const struct txn_plan *p, const char *journal,
                          const struct cdd_jop *op, size_t line, char kind,
                          const char *path)
{
    char *canon = NULL;
    int r = cdd_tree_canon(p->tree, path, &canon, NULL);
    free(canon);
    if (r == CDD_E_TARGET) { /* a missing or odd folder: not ours */
        cdd_clear_error();
        return 0;
    }
    if (r == CDD_E_UNSAFE || r == CDD_E_STATE) {
        /* op given: path is the backup of op's destination. */
        struct cdd_errinfo e = *cdd_last_error();
        char *shown = cdd_path_shown(op ? op->dest : path);
        char *bshown = op ? cdd_path_shown(path) : NULL;
        r = cdd_fail(CDD_E_STATE, journal, 0,
                     "line %zu: record %c %s%s%s: %s: %s; nothing was "
                     "changed: inspect the tree and remove the journal",
                     line, kind, CDD_SHOWN(shown),
                     op ? ": its backup " : "", op ? CDD_SHOWN(bshown) : "",
                     e.path, e.msg);
        free(shown);
        free(bshown);
    }
    return r;
}

/* A folder of the state the recovery moves files from or removes (the
 * stage, backup, backup/<id>): a real folder or missing. A link there is
 * tampered state even when it is only to be removed: none is ever
 * expected. Named with the journal's header, which gives the id. */
static int check_state_folder(const struct txn_plan *p, const char *journal,
                              const char *rel, const char *what)
{
    struct cdd_stat st;
    char *target = NULL, *shown = NULL;
    int r = cdd_tree_lstat(p->tree, rel, &st);
    if (r == CDD_E_UNSAFE || r == CDD_E_STATE) {
        struct cdd_errinfo e = *cdd_last_error();
        return cdd_fail(CDD_E_STATE, journal, 0,
                        "line 1: transaction %s: its %s %s: %s: %s; nothing "
                        "was changed: inspect the tree and remove the journal",
                        p->j.id, what, rel, e.path, e.msg);
    }
    if (r || st.type == CDD_FT_NONE || st.type == CDD_FT_DIR)
        return r;
    if (st.type == CDD_FT_SYMLINK &&
        cdd_tree_readlink_dup(p->tree, rel, &target) == 0)
        shown = cdd_path_shown(target);
    cdd_clear_error();
    r = cdd_fail(CDD_E_STATE, journal, 0,
                 "line 1: transaction %s: its %s %s is %s%s%s%s, not a "
                 "folder; nothing in %s is followed; nothing was changed: "
                 "inspect the tree and remove the journal",
                 p->j.id, what, rel,
                 st.type == CDD_FT_SYMLINK ? "a link"
                 : st.type == CDD_FT_FILE  ? "a file"
                                           : "a special file",
                 shown ? " (to " : "", shown ? shown : "", shown ? ")" : "",
                 CDD_STATE_DIR);
    free(target);
    free(shown);
    return r;
}

/* Before a recovery acts on a journal read from disk (a whole plan or not):
 * every path its records name - sources, destinations, the backup path of
 * each moved or deleted file, folders - passes check_one_path, and the
 * stage and backup folders it will use pass check_state_folder. A record
 * that fails is tampered state, refused before anything moves (the walk
 * would refuse the single operation anyway, but only after the records
 * before it were acted on). */
static int check_paths(const struct txn_plan *p, const char *journal)
{
    int r = 0;
    for (size_t i = 0; !r && i < p->j.n_mdirs; i++)
        r = check_one_path(p, journal, NULL, p->j.mdir_lines[i], 'M',
                           p->j.mdirs[i]);
    for (size_t i = 0; !r && i < p->j.nops; i++) {
        const struct cdd_jop *op = &p->j.ops[i];
        if (op->type == 'P')
            r = check_one_path(p, journal, NULL, op->line, 'P', op->src);
        if (!r)
            r = check_one_path(p, journal, NULL, op->line, op->type,
                               op->dest);
        if (!r && op->type != 'R') {
            char *bkf = backup_rel(p, op->dest);
            r = bkf ? check_one_path(p, journal, op, op->line, op->type, bkf)
                    : nomem();
            free(bkf);
        }
    }
    char *stage = r ? NULL : stage_rel_of(p->j.id);
    char *bk = r ? NULL : backup_id_rel(p);
    if (!r && (!stage || !bk))
        r = nomem();
    if (!r)
        r = check_state_folder(p, journal, stage, "stage");
    if (!r)
        r = check_state_folder(p, journal, CDD_BACKUP_DIR, "backup folder");
    if (!r)
        r = check_state_folder(p, journal, bk, "backup folder");
    free(stage);
    free(bk);
    return r;
}

/* Undo whatever part of the plan is on disk (see the top of the file).
 * Stops at the first failure with the journal kept, so that recover can
 * finish; nothing the journal still needs is removed before the moves are
 * all undone. */
static int txn_rollback(const struct txn_plan *p)
{
    struct strset syncs = {0};
    char *stage = stage_rel_of(p->j.id);
    char *bk = backup_id_rel(p);
    char *bkf = NULL;
    int r = 0;
    if (!stage || !bk) {
        r = nomem();
        goto out;
    }
    r = check_backups(p);
    /* Folders the commit removed come back first (outermost first), so
     * that files deleted from them have somewhere to return to. Only
     * folders that existed are journaled, so a missing one was removed. */
    for (size_t i = p->j.nops; !r && i-- > 0;) {
        const struct cdd_jop *op = &p->j.ops[i];
        if (op->type != 'R' || !op->journaled)
            continue;
        enum cdd_ftype type;
        r = type_of(p, op->dest, &type);
        if (!r && type == CDD_FT_NONE)
            r = cdd_tree_mkdir(p->tree, op->dest);
        if (!r)
            r = add_parent(&syncs, op->dest);
    }
    for (size_t i = p->j.nops; !r && i-- > 0;) {
        const struct cdd_jop *op = &p->j.ops[i];
        enum cdd_ftype st_src = CDD_FT_NONE, st_dest, st_bk;
        if (op->type == 'R' || !op->journaled)
            continue;
        free(bkf);
        if (!(bkf = backup_rel(p, op->dest))) {
            r = nomem();
            break;
        }
        if (op->type == 'P') {
            r = type_of(p, op->src, &st_src);
            if (!r)
                r = type_of(p, op->dest, &st_dest);
            if (!r && st_src == CDD_FT_NONE && st_dest != CDD_FT_NONE)
                r = cdd_tree_rename(p->tree, op->dest, op->src);
            if (!r)
                r = add_parent(&syncs, op->src);
        }
        if (!r)
            r = type_of(p, bkf, &st_bk);
        if (!r && st_bk != CDD_FT_NONE)
            r = cdd_tree_rename(p->tree, bkf, op->dest);
        if (!r)
            r = add_parent(&syncs, op->dest);
    }
    for (size_t i = p->j.n_mdirs; !r && i-- > 0;) {
        r = rmdir_if_empty(p, p->j.mdirs[i]);
        if (!r)
            r = add_parent(&syncs, p->j.mdirs[i]);
    }
    if (!r)
        r = cdd_tree_remove_tree(p->tree, bk);
    if (!r)
        r = rmdir_if_empty(p, CDD_BACKUP_DIR);
    if (!r)
        r = strset_add(&syncs, CDD_STATE_DIR, NULL);
    /* The undone moves must be on disk before the journal that would redo
     * the undo goes away. */
    if (!r)
        r = sync_dirs(p, &syncs);
    if (!r)
        r = unlink_if_present(p, CDD_JOURNAL_FILE);
    if (!r)
        r = unlink_if_present(p, CDD_JOURNAL_FILE ".tmp");
    if (!r)
        r = cdd_tree_sync_dir(p->tree, CDD_STATE_DIR);
    /* Only now: while the journal existed, "src missing" had to mean
     * "moved into dest". */
    if (!r)
        r = cdd_tree_remove_tree(p->tree, stage);
out:
    strset_free(&syncs);
    free(stage);
    free(bk);
    free(bkf);
    return r;
}

/* Roll back after a failure and return the original error, noting in its
 * message when the roll-back could not finish. */
static int fail_and_rollback(const struct txn_plan *p, int err)
{
    struct cdd_errsave e = {0}; /* the failure, kept across the roll-back */
    if (cdd_last_error()->code == err)
        cdd_error_save(&e);
    const char *path = e.info.path ? e.info.path : "";
    const char *msg = e.info.msg ? e.info.msg : "";
    int rb = txn_rollback(p);
    if (!rb)
        rb = cdd_fail(err, path, e.info.os_err, "%s", msg);
    else
        rb = cdd_fail(err, path, e.info.os_err,
                      "%s%sthe roll-back did not finish (%s); run "
                      "`cudnn-deploy recover` to complete it",
                      msg, msg[0] ? "; " : "", cdd_last_error()->msg);
    cdd_error_save_free(&e);
    return rb;
}

int cdd_txn_commit(struct cdd_txn *t, int purge_backup)
{
    struct strset syncs = {0};
    char *jtext = NULL;
    size_t jlen = 0;
    struct txn_plan *p;
    int r = 0;
    if (!t)
        return cdd_fail(CDD_E_USAGE, NULL, 0, "no transaction");
    p = &t->p;
    p->j.purge = purge_backup != 0;
    r = plan_commit(t);
    if (!r && cdd_cancelled())
        r = cdd_fail(CDD_E_INTERRUPTED, cdd_tree_root(p->tree), 0,
                     "interrupted before the commit");
    if (r)
        goto no_journal;
    size_t n_journaled = 0;
    for (size_t i = 0; i < p->j.nops; i++)
        n_journaled += p->j.ops[i].journaled != 0;
    if (n_journaled == 0 && p->j.n_mdirs == 0) {
        /* Nothing to change (say, deletes of files already gone). */
        if (cdd_tree_remove_tree(p->tree, t->stage_rel) != 0)
            cdd_clear_error(); /* a stray stage for the next recover */
        goto out;
    }
    r = cdd_journal_format(&p->j, &jtext, &jlen);
    if (r)
        goto no_journal;

    /* From here on a journal may be on disk: every failure goes through
     * the roll-back, which copes with any prefix of the steps. */
    r = cdd_tree_write_atomic(p->tree, CDD_JOURNAL_FILE, jtext, jlen);
    for (size_t i = 0; !r && i < p->j.n_mdirs; i++) {
        r = cdd_tree_mkdir(p->tree, p->j.mdirs[i]);
        if (!r)
            r = add_parent(&syncs, p->j.mdirs[i]);
    }
    for (size_t i = 0; !r && i < p->j.nops; i++) {
        if (!p->j.ops[i].journaled)
            continue;
        if (cdd_cancelled())
            r = cdd_fail(CDD_E_INTERRUPTED, cdd_tree_root(p->tree), 0,
                         "interrupted during the commit");
        else
            r = apply_op(p, &p->j.ops[i], &syncs);
    }
    if (!r)
        r = sync_dirs(p, &syncs);
    if (!r && cdd_cancelled())
        r = cdd_fail(CDD_E_INTERRUPTED, cdd_tree_root(p->tree), 0,
                     "interrupted during the commit");
    if (r) {
        r = fail_and_rollback(p, r);
        goto out;
    }

    r = cdd_tree_append_line(p->tree, CDD_JOURNAL_FILE, "C");
    if (r) {
        /* Was part of "C" written before the failure? Put the journal back
         * as it was, so the roll-back cannot be mistaken for a commit by a
         * later recover; if even that fails, leave both to recover, which
         * finds the tree wholly "after" and reads whichever record is
         * there. */
        struct cdd_errsave e; /* kept across the journal's rewrite */
        cdd_error_save(&e);
        if (cdd_tree_write_atomic(p->tree, CDD_JOURNAL_FILE, jtext, jlen) != 0) {
            r = cdd_fail(r, e.info.path, e.info.os_err,
                         "%s; the commit record may be incomplete: run "
                         "`cudnn-deploy recover` to settle it", e.info.msg);
            cdd_error_save_free(&e);
            goto out;
        }
        cdd_fail(r, e.info.path, e.info.os_err, "%s", e.info.msg);
        cdd_error_save_free(&e);
        r = fail_and_rollback(p, r);
        goto out;
    }
    /* Committed. A failed clean-up is tried once more (every step tolerates
     * "already done"); if it still fails, the stage, backup or journal wait
     * for the next recover, which rolls forward: the tree is "after". */
    if (txn_finish(p) != 0 && txn_finish(p) != 0)
        cdd_clear_error();
    goto out;

no_journal: {
        struct cdd_errsave e; /* kept across the stage's removal */
        cdd_error_save(&e);
        cdd_tree_remove_tree(p->tree, t->stage_rel);
        cdd_error_restore(&e);
        cdd_error_save_free(&e);
    }
out:
    strset_free(&syncs);
    free(jtext);
    txn_free(t);
    return r;
}

void cdd_txn_abort(struct cdd_txn *t)
{
    if (!t)
        return;
    /* Keep the caller's error: abort follows a failure. A stage that
     * cannot be removed is a stray for the next recover. */
    struct cdd_errsave e;
    cdd_error_save(&e);
    cdd_tree_remove_tree(t->p.tree, t->stage_rel);
    cdd_error_restore(&e);
    cdd_error_save_free(&e);
    txn_free(t);
}

/* ---- recover ------------------------------------------------------------ */

struct sweep {
    struct strset names;
};

static int sweep_one(void *ud, const char *name)
{
    struct sweep *w = ud;
    size_t n = strlen(name);
    /* Only names we could have made: anything else planted here is not
     * ours to remove (nor a reason to stop every later command). */
    if (!cdd_jpath_ok(name))
        return 0;
    if (has_prefix(name, CDD_STAGE_PREFIX) ||
        (n > 4 && strcmp(name + n - 4, ".tmp") == 0))
        return strset_add(&w->names, name, NULL);
    return 0;
}

int cdd_txn_recover(struct cdd_tree *tree, int *found, int *rolled_back,
                    char **id)
{
    struct txn_plan p = {0};
    struct sweep w = {{0}};
    char *text = NULL, *stage = NULL, *journal_abs = NULL;
    char *stray_id = NULL;
    enum cdd_ftype type;
    int r, had_journal = 0;
    *found = 0;
    *rolled_back = 0;
    if (id)
        *id = NULL;
    p.tree = tree;
    p.from_disk = 1;
    if (!cdd_tree_has_state(tree))
        return 0;
    if (!(journal_abs = cdd_tree_abs(tree, CDD_JOURNAL_FILE))) {
        r = nomem();
        goto out;
    }
    r = type_of(&p, CDD_JOURNAL_FILE, &type);
    if (r)
        goto out;
    if (type != CDD_FT_NONE) {
        had_journal = 1;
        if (type != CDD_FT_FILE)
            r = cdd_fail(CDD_E_STATE, journal_abs, 0,
                         "is not a regular file (a link is not accepted)");
        if (!r)
            r = cdd_tree_read_all(tree, CDD_JOURNAL_FILE, JOURNAL_MAX, &text,
                                  NULL);
        if (r == CDD_E_UNSAFE) /* swapped for a link after the lstat */
            r = cdd_fail(CDD_E_STATE, journal_abs, 0,
                         "is not a regular file (a link is not accepted)");
        if (!r)
            r = cdd_journal_parse(journal_abs, text, &p.j);
        if (!r)
            r = check_paths(&p, journal_abs);
        if (r)
            goto out;
        *found = 1;
        if (!p.j.acted) {
            stage = stage_rel_of(p.j.id);
            r = stage ? cdd_tree_unlink(tree, CDD_JOURNAL_FILE) : nomem();
            if (!r)
                r = cdd_tree_sync_dir(tree, CDD_STATE_DIR);
            if (!r)
                r = cdd_tree_remove_tree(tree, stage);
            *rolled_back = 1;
        } else if (p.j.committed) {
            r = txn_finish(&p);
        } else {
            r = txn_rollback(&p);
            *rolled_back = 1;
        }
        if (r)
            goto out;
    }
    /* Stages of transactions killed before their journal, and *.tmp files
     * of interrupted atomic writes: nothing in the tree refers to them.
     * Listed first, removed after, so the listing sees a stable folder. */
    r = cdd_tree_list(tree, CDD_STATE_DIR, sweep_one, &w);
    /* A link among them was never ours (no link is made or followed in
     * .cudnn-deploy): tampered state, refused before any is removed. */
    for (size_t i = 0; !r && i < w.names.n; i++) {
        char *a = str_cat3(CDD_STATE_DIR, "/", w.names.items[i]);
        r = a ? type_of(&p, a, &type) : nomem();
        if (!r && type == CDD_FT_SYMLINK) {
            char *abs = cdd_tree_abs(tree, a);
            r = cdd_fail(CDD_E_STATE, abs ? abs : a, 0,
                         "is a link, left by no run of cudnn-deploy; nothing "
                         "in %s is followed: inspect the tree",
                         CDD_STATE_DIR);
            free(abs);
        }
        free(a);
    }
    for (size_t i = 0; !r && i < w.names.n; i++) {
        const char *name = w.names.items[i];
        char *a = str_cat3(CDD_STATE_DIR, "/", name);
        r = a ? cdd_tree_remove_tree(tree, a) : nomem();
        free(a);
        if (!r && has_prefix(name, CDD_STAGE_PREFIX) && !had_journal) {
            /* An install killed while staging: it never changed the tree,
             * which is as good as rolled back. */
            *found = 1;
            *rolled_back = 1;
            if (!stray_id && !(stray_id = cdd_strdup(name + strlen(CDD_STAGE_PREFIX))))
                r = nomem();
        }
    }
    if (!r && w.names.n)
        r = cdd_tree_sync_dir(tree, CDD_STATE_DIR);
    if (!r && id && (p.j.id || stray_id)) {
        if (p.j.id) {
            *id = p.j.id;
            p.j.id = NULL;
        } else {
            *id = stray_id;
            stray_id = NULL;
        }
    }
out:
    plan_clear(&p);
    strset_free(&w.names);
    free(text);
    free(stage);
    free(stray_id);
    free(journal_abs);
    return r;
}
