/* The transaction engine (txn.h): moves staged files into a tree under a
 * journal so that a failure, a crash or a kill at any point leaves the tree
 * exactly as before or exactly as after, and cdd_txn_recover() can tell which
 * and finish the job. Also the tree's lock (cdd_state_lock).
 *
 * Commit, step by step (every change goes through fsops.h, so the fault
 * injector can fail or kill each one):
 *   1. plan: which destinations exist, which folders must be created;
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
 * Journal (one record a line, tab-separated; paths relative to the root):
 *   cudnn-deploy-journal 1 <id> <kind> <purge-backup|keep-backup>
 *   M <dir>          folder the transaction creates (outermost first)
 *   P <src> <dest>   move src to dest (an existing dest goes to backup)
 *   D <dest>         move dest to backup
 *   R <dir>          remove dir if it is empty after the moves
 *   E                end of plan: nothing changes before this is on disk
 *   C                commit record
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
 *
 * This file uses only fsops.h and standard C, so it is the same code on
 * every platform. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/state.h"
#include "cdd/txn.h"

#define JOURNAL_MAGIC "cudnn-deploy-journal"
#define JOURNAL_MAX ((size_t)256 << 20)
#define STAGE_DIR_PREFIX CDD_STATE_DIR "/" CDD_STAGE_PREFIX
#define BACKUP_PREFIX CDD_BACKUP_DIR "/"

/* ---- small strings ---------------------------------------------------- */

static char *str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

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

/* The folder part of a path ("a/b/c" -> "a/b"; "c" -> ""). */
static char *parent_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (size_t)(s - path) : 0;
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static int has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int nomem(void)
{
    return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* A growing text buffer (the journal). */
struct sbuf {
    char *p;
    size_t len, cap;
};

static int sbuf_add(struct sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return nomem();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
    return 0;
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
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        char **items = realloc(s->items, cap * sizeof *items);
        if (!items)
            return nomem();
        s->items = items;
        s->cap = cap;
    }
    if (!(s->items[s->n] = str_dup(k)))
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

/* ---- paths -------------------------------------------------------------- */

/* A relative, '/'-separated path that cannot leave the root and fits on a
 * journal line: no empty, "." or ".." components, no control characters,
 * no '\\' or ':' (separators and drive letters on Windows). */
static int rel_ok(const char *p)
{
    if (!p || !*p || *p == '/')
        return 0;
    const char *c = p;
    for (;;) {
        const char *e = c;
        while (*e && *e != '/') {
            unsigned char ch = (unsigned char)*e;
            if (ch < 0x20 || ch == 0x7f || ch == '\\' || ch == ':')
                return 0;
            e++;
        }
        size_t n = (size_t)(e - c);
        if (n == 0 || (n == 1 && c[0] == '.') ||
            (n == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        if (!*e)
            return 1;
        c = e + 1;
    }
}

/* Is the first component the state folder? Compared without case, because
 * on a case-insensitive filesystem ".CUDNN-DEPLOY/x" is the same place. */
static int in_state_dir(const char *p)
{
    const char *s = CDD_STATE_DIR;
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        char a = p[i], b = s[i];
        if (a >= 'A' && a <= 'Z')
            a = (char)(a - 'A' + 'a');
        if (a != b)
            return 0;
    }
    return p[n] == '/' || p[n] == '\0';
}

/* Destinations are tree paths, or one of the two state files that must
 * change in the same commit as the tree they describe. */
static int dest_ok(const char *p)
{
    if (!rel_ok(p))
        return 0;
    if (!in_state_dir(p))
        return 1;
    return strcmp(p, CDD_RECEIPT_FILE) == 0 ||
           strcmp(p, CDD_MANIFEST_COPY) == 0;
}

/* Sources are this transaction's staged files, or files in an earlier
 * transaction's backup (uninstall restores them). Nothing else: roll-back
 * assumes only this transaction moves a source away. */
static int src_ok(const char *p, const char *id)
{
    if (!rel_ok(p))
        return 0;
    size_t nid = strlen(id);
    if (has_prefix(p, STAGE_DIR_PREFIX)) {
        const char *q = p + strlen(STAGE_DIR_PREFIX);
        return strncmp(q, id, nid) == 0 && q[nid] == '/';
    }
    if (has_prefix(p, BACKUP_PREFIX)) {
        const char *q = p + strlen(BACKUP_PREFIX);
        const char *slash = strchr(q, '/');
        if (!slash)
            return 0;
        return !((size_t)(slash - q) == nid && strncmp(q, id, nid) == 0);
    }
    return 0;
}

static int id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n > 64)
        return 0;
    for (const char *c = id; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= 'a' && *c <= 'z') || *c == '-'))
            return 0;
    return 1;
}

static int kind_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 32)
        return 0;
    for (const char *c = k; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '-' || *c == '_'))
            return 0;
    return 1;
}

/* ---- the plan ----------------------------------------------------------- */

struct txn_op {
    char type;     /* 'P' put, 'D' delete, 'R' remove folder if empty */
    char *src;     /* P only */
    char *dest;    /* P, D: the file; R: the folder */
    int journaled; /* part of the plan (D: dest existed; R: folder existed) */
    int existed;   /* P: dest existed when planned, so it goes to backup */
    size_t seq;    /* queue order, for a stable sort of R operations */
};

/* What commit and recover share: enough to roll forward or back. */
struct txn_plan {
    char *root;
    char *id;
    char *kind;
    int purge;
    struct txn_op *ops;
    size_t nops, cap;
    struct strset mdirs; /* folders created, outermost first */
};

struct cdd_txn {
    struct txn_plan p;
    char *root_real;
    char *stage_rel;
    struct strset names; /* "d:<dest>", "s:<src>", used once each */
};

static void plan_clear(struct txn_plan *p)
{
    for (size_t i = 0; i < p->nops; i++) {
        free(p->ops[i].src);
        free(p->ops[i].dest);
    }
    free(p->ops);
    free(p->root);
    free(p->id);
    free(p->kind);
    strset_free(&p->mdirs);
    memset(p, 0, sizeof *p);
}

static void txn_free(struct cdd_txn *t)
{
    if (!t)
        return;
    plan_clear(&t->p);
    free(t->root_real);
    free(t->stage_rel);
    strset_free(&t->names);
    free(t);
}

static int plan_push(struct txn_plan *p, char type, const char *src,
                     const char *dest)
{
    if (p->nops == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        struct txn_op *ops = realloc(p->ops, cap * sizeof *ops);
        if (!ops)
            return nomem();
        p->ops = ops;
        p->cap = cap;
    }
    struct txn_op *op = &p->ops[p->nops];
    memset(op, 0, sizeof *op);
    op->type = type;
    op->seq = p->nops;
    op->journaled = 1;
    if ((src && !(op->src = str_dup(src))) || !(op->dest = str_dup(dest))) {
        free(op->src);
        return nomem();
    }
    p->nops++;
    return 0;
}

static char *abs_of(const struct txn_plan *p, const char *rel)
{
    return str_cat3(p->root, "/", rel);
}

static char *stage_rel_of(const char *id)
{
    return str_cat3(STAGE_DIR_PREFIX, "", id);
}

static char *backup_id_rel(const struct txn_plan *p)
{
    return str_cat3(BACKUP_PREFIX, "", p->id);
}

/* backup/<id>/<dest>, relative to the root. */
static char *backup_rel(const struct txn_plan *p, const char *dest)
{
    char *b = backup_id_rel(p);
    char *r = b ? str_cat3(b, "/", dest) : NULL;
    free(b);
    return r;
}

static int type_of(const char *abs, enum cdd_ftype *type)
{
    struct cdd_stat st;
    int r = cdd_fs_lstat(abs, &st);
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
static int rmdir_if_empty(const char *abs)
{
    enum cdd_ftype type;
    int r = type_of(abs, &type);
    if (r || type != CDD_FT_DIR)
        return r;
    r = cdd_fs_list(abs, stop_at_first, NULL);
    if (r == 1)
        return 0;
    if (r)
        return r;
    return cdd_fs_rmdir(abs);
}

static int unlink_if_present(const char *abs)
{
    enum cdd_ftype type;
    int r = type_of(abs, &type);
    if (r || type == CDD_FT_NONE)
        return r;
    return cdd_fs_remove_tree(abs);
}

/* Sync each folder of the set that still exists. */
static int sync_dirs(const struct strset *dirs)
{
    for (size_t i = 0; i < dirs->n; i++) {
        enum cdd_ftype type;
        int r = type_of(dirs->items[i], &type);
        if (!r && type == CDD_FT_DIR)
            r = cdd_fs_sync_dir(dirs->items[i]);
        if (r)
            return r;
    }
    return 0;
}

/* Add the folder that holds abs to the set of folders to sync. */
static int add_parent(struct strset *dirs, const char *abs)
{
    char *d = parent_of(abs);
    if (!d)
        return nomem();
    int r = strset_add(dirs, *d ? d : "/", NULL);
    free(d);
    return r;
}

/* ---- lock ---------------------------------------------------------------- */

int cdd_state_lock(const char *root, double timeout_s, int *created_state,
                   struct cdd_lock **out)
{
    char *state = str_cat3(root, "/", CDD_STATE_DIR);
    char *lock = str_cat3(root, "/", CDD_LOCK_FILE);
    enum cdd_ftype type;
    int r, created = 0;
    *out = NULL;
    if (created_state)
        *created_state = 0;
    if (!state || !lock) {
        r = nomem();
        goto out;
    }
    r = type_of(state, &type);
    if (r)
        goto out;
    if (type == CDD_FT_NONE) {
        r = cdd_fs_mkdir(state);
        if (r)
            goto out;
        created = 1;
    } else if (type != CDD_FT_DIR) {
        r = cdd_fail(CDD_E_STATE, state, 0,
                     "exists and is not a folder (a symlink is not accepted)");
        goto out;
    }
    r = cdd_lock_acquire(lock, timeout_s, NULL, out);
    if (r && created) {
        /* Leave the tree as it was; if another process got in between and
         * put its lock file there, the folder is not empty and stays. */
        struct cdd_errinfo e = *cdd_last_error();
        rmdir_if_empty(state);
        cdd_fail(e.code, e.path, e.os_err, "%s", e.msg);
        created = 0;
    }
    if (!r && created_state)
        *created_state = created;
out:
    free(state);
    free(lock);
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

int cdd_txn_begin(const char *root, const char *kind, struct cdd_txn **out)
{
    struct cdd_txn *t = NULL;
    char *state = NULL, *stage = NULL, *backup = NULL;
    char base[64], id[80];
    enum cdd_ftype type;
    int r = 0;
    *out = NULL;
    if (!kind_ok(kind))
        return cdd_fail(CDD_E_USAGE, NULL, 0, "bad transaction kind");
    if (!(t = calloc(1, sizeof *t)) || !(t->p.root = str_dup(root)) ||
        !(t->p.kind = str_dup(kind))) {
        r = nomem();
        goto out;
    }
    /* "tree/" and "tree" must give the same journal paths. */
    for (size_t n = strlen(t->p.root); n > 1 && t->p.root[n - 1] == '/';)
        t->p.root[--n] = '\0';
    r = cdd_fs_realpath(t->p.root, &t->root_real);
    if (r)
        goto out;
    if (!(state = abs_of(&t->p, CDD_STATE_DIR))) {
        r = nomem();
        goto out;
    }
    r = type_of(state, &type);
    if (!r && type != CDD_FT_DIR)
        r = cdd_fail(CDD_E_STATE, state, 0,
                     "missing: take the tree's lock before a transaction");
    if (r)
        goto out;

    /* Two transactions of one process within a second share time and pid;
     * the counter keeps their stage and backup folders apart. */
    make_base_id(base, sizeof base);
    for (unsigned k = 1;; k++) {
        if (k == 1)
            snprintf(id, sizeof id, "%s", base);
        else
            snprintf(id, sizeof id, "%s-%u", base, k);
        free(t->stage_rel);
        free(stage);
        free(backup);
        stage = backup = NULL;
        if (!(t->stage_rel = stage_rel_of(id)) ||
            !(stage = abs_of(&t->p, t->stage_rel)) ||
            !(backup = str_cat3(state, "/backup/", id))) {
            r = nomem();
            goto out;
        }
        enum cdd_ftype t1, t2;
        r = type_of(stage, &t1);
        if (!r)
            r = type_of(backup, &t2);
        if (r)
            goto out;
        if (t1 == CDD_FT_NONE && t2 == CDD_FT_NONE)
            break;
        if (k >= 1000) {
            r = cdd_fail(CDD_E_STATE, stage, 0,
                         "cannot find a free transaction id");
            goto out;
        }
    }
    if (!(t->p.id = str_dup(id))) {
        r = nomem();
        goto out;
    }
    r = cdd_fs_mkdir(stage);
out:
    free(state);
    free(stage);
    free(backup);
    if (r)
        txn_free(t);
    else
        *out = t;
    return r;
}

const char *cdd_txn_id(const struct cdd_txn *t)
{
    return t->p.id;
}

const char *cdd_txn_stage_rel(const struct cdd_txn *t)
{
    return t->stage_rel;
}

char *cdd_txn_abs(const struct cdd_txn *t, const char *rel)
{
    return abs_of(&t->p, rel);
}

size_t cdd_txn_count(const struct cdd_txn *t)
{
    return t->p.nops;
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
    if (!dest_ok(dest_rel))
        return cdd_fail(CDD_E_UNSAFE, dest_rel, 0,
                        "not a path the transaction may write");
    if (!src_ok(src_rel, t->p.id))
        return cdd_fail(CDD_E_UNSAFE, src_rel, 0,
                        "not a staged file or an earlier backup");
    int r = claim(t, dest_rel, src_rel);
    if (!r)
        r = plan_push(&t->p, 'P', src_rel, dest_rel);
    return r;
}

int cdd_txn_del(struct cdd_txn *t, const char *dest_rel)
{
    if (!dest_ok(dest_rel))
        return cdd_fail(CDD_E_UNSAFE, dest_rel, 0,
                        "not a path the transaction may remove");
    int r = claim(t, dest_rel, NULL);
    if (!r)
        r = plan_push(&t->p, 'D', NULL, dest_rel);
    return r;
}

int cdd_txn_rmdir(struct cdd_txn *t, const char *dir_rel)
{
    if (!rel_ok(dir_rel) || in_state_dir(dir_rel))
        return cdd_fail(CDD_E_UNSAFE, dir_rel, 0,
                        "not a folder the transaction may remove");
    int r = claim(t, dir_rel, NULL);
    if (!r)
        r = plan_push(&t->p, 'R', NULL, dir_rel);
    return r;
}

/* ---- commit: planning --------------------------------------------------- */

static int inside_root(const struct cdd_txn *t, const char *real)
{
    size_t n = strlen(t->root_real);
    if (n == 1 && t->root_real[0] == '/')
        return 1;
    return strncmp(real, t->root_real, n) == 0 &&
           (real[n] == '/' || real[n] == '\0');
}

/* Check the folders above rel: each must be a folder, or a symlink to a
 * folder inside the tree (real CUDA trees have lib64 -> targets/...; one that
 * leads out of the tree is never written through). With mdirs, missing
 * folders are added to it, outermost first; *missing says one was missing.
 * *canon receives rel's absolute path with symlinked folders resolved, so two
 * names of one file are caught. */
static int plan_parents(struct cdd_txn *t, const char *rel,
                        struct strset *mdirs, int *missing, char **canon)
{
    char *pre = str_dup(rel), *abs = NULL, *real = NULL;
    char *base = str_dup(t->root_real);
    size_t rest = 0;
    int r = 0;
    *missing = 0;
    *canon = NULL;
    if (!pre || !base) {
        r = nomem();
        goto out;
    }
    for (size_t i = 0; rel[i]; i++) {
        if (rel[i] != '/')
            continue;
        pre[i] = '\0';
        if (*missing) {
            r = mdirs ? strset_add(mdirs, pre, NULL) : 0;
            pre[i] = '/';
            if (r)
                goto out;
            continue;
        }
        enum cdd_ftype type;
        free(abs);
        if (!(abs = abs_of(&t->p, pre))) {
            r = nomem();
            goto out;
        }
        r = type_of(abs, &type);
        if (r)
            goto out;
        if (type == CDD_FT_NONE) {
            *missing = 1;
            r = mdirs ? strset_add(mdirs, pre, NULL) : 0;
        } else if (type == CDD_FT_SYMLINK) {
            r = cdd_fs_realpath(abs, &real);
            if (r) {
                r = cdd_fail(CDD_E_TARGET, abs, 0,
                             "is a symlink that leads nowhere");
                goto out;
            }
            if (!inside_root(t, real)) {
                r = cdd_fail(CDD_E_UNSAFE, abs, 0,
                             "is a symlink that leads out of the tree (to %s);"
                             " refusing to write through it", real);
                goto out;
            }
            r = type_of(real, &type);
            if (!r && type != CDD_FT_DIR)
                r = cdd_fail(CDD_E_TARGET, abs, 0,
                             "is a symlink to something that is not a folder");
            if (r)
                goto out;
            free(base);
            base = real;
            real = NULL;
            rest = i + 1;
        } else if (type != CDD_FT_DIR) {
            r = cdd_fail(CDD_E_TARGET, abs, 0,
                         "exists and is not a folder; %s cannot go there",
                         rel);
        }
        pre[i] = '/';
        if (r)
            goto out;
    }
    if (!(*canon = str_cat3(base, "/", rel + rest)))
        r = nomem();
out:
    free(pre);
    free(abs);
    free(real);
    free(base);
    return r;
}

static int deeper_first(const void *a, const void *b)
{
    const struct txn_op *x = a, *y = b;
    size_t dx = 0, dy = 0;
    for (const char *c = x->dest; *c; c++)
        dx += *c == '/';
    for (const char *c = y->dest; *c; c++)
        dy += *c == '/';
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Look at the tree and decide what commit will do: which dests exist (they
 * go to backup), which folders must be created, which deletes and folder
 * removals apply. Refuses plans that would replace a folder with a file,
 * write through a symlink out of the tree, or reach one file by two names.
 * Sorts folder removals last, deepest first. */
static int plan_commit(struct cdd_txn *t)
{
    struct strset canon = {0};
    struct txn_plan *p = &t->p;
    char *abs = NULL, *cn = NULL;
    int r = 0;
    strset_free(&p->mdirs);
    for (size_t i = 0; i < p->nops && !r; i++) {
        struct txn_op *op = &p->ops[i];
        enum cdd_ftype type;
        int missing = 0, added = 0;
        free(abs);
        free(cn);
        cn = NULL;
        if (!(abs = abs_of(p, op->dest))) {
            r = nomem();
            break;
        }
        if (op->type == 'R') {
            /* Only a folder that is there (not a symlink) is removed, and
             * never through a symlink out of the tree. */
            r = plan_parents(t, op->dest, NULL, &missing, &cn);
            type = CDD_FT_NONE;
            if (!r && !missing)
                r = type_of(abs, &type);
            op->journaled = type == CDD_FT_DIR;
            continue;
        }
        if (op->type == 'P') {
            char *src = abs_of(p, op->src);
            if (!src) {
                r = nomem();
                break;
            }
            r = type_of(src, &type);
            if (!r && type == CDD_FT_NONE)
                r = cdd_fail(CDD_E_NOTFOUND, src, 0,
                             "staged file is missing");
            else if (!r && type != CDD_FT_FILE && type != CDD_FT_SYMLINK)
                r = cdd_fail(CDD_E_STATE, src, 0,
                             "is neither a file nor a symlink");
            free(src);
            if (r)
                break;
        }
        r = plan_parents(t, op->dest, op->type == 'P' ? &p->mdirs : NULL,
                         &missing, &cn);
        if (r)
            break;
        type = CDD_FT_NONE;
        if (!missing && (r = type_of(abs, &type)) != 0)
            break;
        if (type == CDD_FT_DIR || type == CDD_FT_OTHER) {
            r = cdd_fail(CDD_E_TARGET, abs, 0,
                         type == CDD_FT_DIR
                             ? "is a folder; refusing to replace it"
                             : "is not a regular file or symlink");
            break;
        }
        if (op->type == 'P')
            op->existed = type != CDD_FT_NONE;
        else /* a file that is already gone needs no delete */
            op->journaled = type != CDD_FT_NONE;
        r = strset_add(&canon, cn, &added);
        if (!r && !added)
            r = cdd_fail(CDD_E_TARGET, abs, 0,
                         "is reached by two names in one transaction "
                         "(through a symlinked folder)");
    }
    /* A folder to create that is also a file to put: refuse, or the put
     * would fail half-way. */
    for (size_t i = 0; !r && i < p->mdirs.n; i++) {
        char *key = str_cat3("d:", "", p->mdirs.items[i]);
        if (!key)
            r = nomem();
        else if (strset_has(&t->names, key))
            r = cdd_fail(CDD_E_TARGET, p->mdirs.items[i], 0,
                         "is both a file and a folder in one transaction");
        free(key);
    }
    if (!r) {
        /* Removals of folders come last (they must be empty by then) and
         * deepest first (a parent empties when its child goes). */
        size_t k = 0;
        struct txn_op *sorted = malloc((p->nops ? p->nops : 1) * sizeof *sorted);
        if (!sorted) {
            r = nomem();
        } else {
            for (size_t i = 0; i < p->nops; i++)
                if (p->ops[i].type != 'R')
                    sorted[k++] = p->ops[i];
            size_t first_r = k;
            for (size_t i = 0; i < p->nops; i++)
                if (p->ops[i].type == 'R')
                    sorted[k++] = p->ops[i];
            qsort(sorted + first_r, k - first_r, sizeof *sorted, deeper_first);
            memcpy(p->ops, sorted, p->nops * sizeof *sorted);
            free(sorted);
        }
    }
    free(abs);
    free(cn);
    strset_free(&canon);
    return r;
}

static int journal_text(const struct txn_plan *p, struct sbuf *b)
{
    int r = sbuf_add(b, JOURNAL_MAGIC " 1 ");
    if (!r)
        r = sbuf_add(b, p->id);
    if (!r)
        r = sbuf_add(b, " ");
    if (!r)
        r = sbuf_add(b, p->kind);
    if (!r)
        r = sbuf_add(b, p->purge ? " purge-backup\n" : " keep-backup\n");
    for (size_t i = 0; !r && i < p->mdirs.n; i++) {
        r = sbuf_add(b, "M\t");
        if (!r)
            r = sbuf_add(b, p->mdirs.items[i]);
        if (!r)
            r = sbuf_add(b, "\n");
    }
    for (size_t i = 0; !r && i < p->nops; i++) {
        const struct txn_op *op = &p->ops[i];
        if (!op->journaled)
            continue;
        char tag[3] = {op->type, '\t', '\0'};
        r = sbuf_add(b, tag);
        if (!r && op->type == 'P') {
            r = sbuf_add(b, op->src);
            if (!r)
                r = sbuf_add(b, "\t");
        }
        if (!r)
            r = sbuf_add(b, op->dest);
        if (!r)
            r = sbuf_add(b, "\n");
    }
    if (!r)
        r = sbuf_add(b, "E\n");
    return r;
}

/* ---- commit: doing ------------------------------------------------------ */

/* Move dest to backup/<id>/<dest>, creating the folders the backup needs,
 * and note every folder whose entries changed. */
static int move_to_backup(const struct txn_plan *p, const char *dest,
                          struct strset *syncs)
{
    char *bk_rel = backup_rel(p, dest);
    char *bk = bk_rel ? abs_of(p, bk_rel) : NULL;
    char *bk_dir = bk ? parent_of(bk) : NULL;
    char *src = abs_of(p, dest);
    int r;
    if (!bk_dir || !src) {
        r = nomem();
        goto out;
    }
    r = cdd_fs_mkdirs(bk_dir, NULL);
    /* Each backup folder from .cudnn-deploy down may be new, and the last
     * one gains the file: sync them all (a set: once per commit each). */
    for (char *s = bk_rel; !r && (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        char *a = abs_of(p, bk_rel);
        r = a ? strset_add(syncs, a, NULL) : nomem();
        free(a);
        *s = '/';
    }
    if (!r)
        r = cdd_fs_rename(src, bk);
    if (!r)
        r = add_parent(syncs, src);
out:
    free(bk_rel);
    free(bk);
    free(bk_dir);
    free(src);
    return r;
}

static int apply_op(const struct txn_plan *p, const struct txn_op *op,
                    struct strset *syncs)
{
    char *dest = abs_of(p, op->dest), *src = NULL;
    int r = 0;
    if (!dest)
        return nomem();
    switch (op->type) {
    case 'P':
        if (!(src = abs_of(p, op->src))) {
            r = nomem();
            break;
        }
        if (op->existed)
            r = move_to_backup(p, op->dest, syncs);
        if (!r)
            r = cdd_fs_rename(src, dest);
        if (!r)
            r = add_parent(syncs, src);
        if (!r)
            r = add_parent(syncs, dest);
        break;
    case 'D':
        r = move_to_backup(p, op->dest, syncs);
        break;
    case 'R':
        r = rmdir_if_empty(dest);
        if (!r)
            r = add_parent(syncs, dest);
        break;
    }
    free(dest);
    free(src);
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
        char *abs = abs_of(p, rel);
        enum cdd_ftype type;
        if (!abs) {
            r = nomem();
            break;
        }
        r = type_of(abs, &type);
        if (!r && type == CDD_FT_DIR) {
            r = cdd_fs_list(abs, stop_at_first, NULL);
            if (r == 1) {
                free(abs);
                r = 0;
                break;
            }
            if (!r)
                r = cdd_fs_rmdir(abs);
        }
        free(abs);
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
    char *stage_rel = stage_rel_of(p->id);
    char *stage = stage_rel ? abs_of(p, stage_rel) : NULL;
    char *bk_rel = backup_id_rel(p);
    char *bk = bk_rel ? abs_of(p, bk_rel) : NULL;
    char *bk_top = abs_of(p, CDD_BACKUP_DIR);
    char *state = abs_of(p, CDD_STATE_DIR);
    char *journal = abs_of(p, CDD_JOURNAL_FILE);
    int r;
    if (!stage || !bk || !bk_top || !state || !journal) {
        r = nomem();
        goto out;
    }
    r = cdd_fs_remove_tree(stage);
    for (size_t i = 0; !r && i < p->nops; i++)
        if (p->ops[i].type == 'P' && has_prefix(p->ops[i].src, BACKUP_PREFIX))
            r = prune_backup_parents(p, p->ops[i].src);
    if (!r)
        r = p->purge ? cdd_fs_remove_tree(bk) : rmdir_if_empty(bk);
    if (!r)
        r = rmdir_if_empty(bk_top);
    /* What was removed must stay removed before the journal that would
     * redo it goes. */
    if (!r) {
        enum cdd_ftype type;
        r = type_of(bk_top, &type);
        if (!r && type == CDD_FT_DIR)
            r = cdd_fs_sync_dir(bk_top);
    }
    if (!r)
        r = cdd_fs_sync_dir(state);
    if (!r)
        r = unlink_if_present(journal);
    if (!r)
        r = cdd_fs_sync_dir(state);
out:
    free(stage_rel);
    free(stage);
    free(bk_rel);
    free(bk);
    free(bk_top);
    free(state);
    free(journal);
    return r;
}

/* Undo whatever part of the plan is on disk (see the top of the file).
 * Stops at the first failure with the journal kept, so that recover can
 * finish; nothing the journal still needs is removed before the moves are
 * all undone. */
static int txn_rollback(const struct txn_plan *p)
{
    struct strset syncs = {0};
    char *stage_rel = stage_rel_of(p->id);
    char *stage = stage_rel ? abs_of(p, stage_rel) : NULL;
    char *bk_rel = backup_id_rel(p);
    char *bk = bk_rel ? abs_of(p, bk_rel) : NULL;
    char *bk_top = abs_of(p, CDD_BACKUP_DIR);
    char *state = abs_of(p, CDD_STATE_DIR);
    char *journal = abs_of(p, CDD_JOURNAL_FILE);
    char *jtmp = journal ? str_cat3(journal, "", ".tmp") : NULL;
    char *dest = NULL, *src = NULL, *bkf_rel = NULL, *bkf = NULL;
    int r = 0;
    if (!stage || !bk || !bk_top || !state || !journal || !jtmp) {
        r = nomem();
        goto out;
    }
    /* Folders the commit removed come back first (outermost first), so
     * that files deleted from them have somewhere to return to. Only
     * folders that existed are journaled, so a missing one was removed. */
    for (size_t i = p->nops; !r && i-- > 0;) {
        const struct txn_op *op = &p->ops[i];
        if (op->type != 'R' || !op->journaled)
            continue;
        enum cdd_ftype type;
        free(dest);
        if (!(dest = abs_of(p, op->dest))) {
            r = nomem();
            break;
        }
        r = type_of(dest, &type);
        if (!r && type == CDD_FT_NONE)
            r = cdd_fs_mkdir(dest);
        if (!r)
            r = add_parent(&syncs, dest);
    }
    for (size_t i = p->nops; !r && i-- > 0;) {
        const struct txn_op *op = &p->ops[i];
        enum cdd_ftype st_src = CDD_FT_NONE, st_dest, st_bk;
        if (op->type == 'R' || !op->journaled)
            continue;
        free(dest);
        free(src);
        free(bkf_rel);
        free(bkf);
        src = bkf = NULL;
        dest = abs_of(p, op->dest);
        bkf_rel = backup_rel(p, op->dest);
        bkf = bkf_rel ? abs_of(p, bkf_rel) : NULL;
        if (!dest || !bkf || (op->type == 'P' && !(src = abs_of(p, op->src)))) {
            r = nomem();
            break;
        }
        if (op->type == 'P') {
            r = type_of(src, &st_src);
            if (!r)
                r = type_of(dest, &st_dest);
            if (!r && st_src == CDD_FT_NONE && st_dest != CDD_FT_NONE)
                r = cdd_fs_rename(dest, src);
            if (!r)
                r = add_parent(&syncs, src);
        }
        if (!r)
            r = type_of(bkf, &st_bk);
        if (!r && st_bk != CDD_FT_NONE)
            r = cdd_fs_rename(bkf, dest);
        if (!r)
            r = add_parent(&syncs, dest);
    }
    for (size_t i = p->mdirs.n; !r && i-- > 0;) {
        free(dest);
        if (!(dest = abs_of(p, p->mdirs.items[i]))) {
            r = nomem();
            break;
        }
        r = rmdir_if_empty(dest);
        if (!r)
            r = add_parent(&syncs, dest);
    }
    if (!r)
        r = cdd_fs_remove_tree(bk);
    if (!r)
        r = rmdir_if_empty(bk_top);
    if (!r)
        r = strset_add(&syncs, state, NULL);
    /* The undone moves must be on disk before the journal that would redo
     * the undo goes away. */
    if (!r)
        r = sync_dirs(&syncs);
    if (!r)
        r = unlink_if_present(journal);
    if (!r)
        r = unlink_if_present(jtmp);
    if (!r)
        r = cdd_fs_sync_dir(state);
    /* Only now: while the journal existed, "src missing" had to mean
     * "moved into dest". */
    if (!r)
        r = cdd_fs_remove_tree(stage);
out:
    strset_free(&syncs);
    free(stage_rel);
    free(stage);
    free(bk_rel);
    free(bk);
    free(bk_top);
    free(state);
    free(journal);
    free(jtmp);
    free(dest);
    free(src);
    free(bkf_rel);
    free(bkf);
    return r;
}

/* Roll back after a failure and return the original error, noting in its
 * message when the roll-back could not finish. */
static int fail_and_rollback(const struct txn_plan *p, int err)
{
    struct cdd_errinfo e = *cdd_last_error();
    if (e.code != err)
        memset(&e, 0, sizeof e);
    int rb = txn_rollback(p);
    if (!rb)
        return cdd_fail(err, e.path, e.os_err, "%s", e.msg);
    return cdd_fail(err, e.path, e.os_err,
                    "%s%sthe roll-back did not finish (%s); run "
                    "`cudnn-deploy recover` to complete it",
                    e.msg, e.msg[0] ? "; " : "", cdd_last_error()->msg);
}

int cdd_txn_commit(struct cdd_txn *t, int purge_backup)
{
    struct strset syncs = {0};
    struct sbuf j = {0};
    char *journal = NULL, *stage = NULL;
    struct txn_plan *p;
    int r = 0;
    if (!t)
        return cdd_fail(CDD_E_USAGE, NULL, 0, "no transaction");
    p = &t->p;
    p->purge = purge_backup != 0;
    if (!(journal = abs_of(p, CDD_JOURNAL_FILE)) ||
        !(stage = abs_of(p, t->stage_rel))) {
        r = nomem();
        goto no_journal;
    }
    r = plan_commit(t);
    if (!r && cdd_cancelled())
        r = cdd_fail(CDD_E_INTERRUPTED, p->root, 0,
                     "interrupted before the commit");
    if (r)
        goto no_journal;
    size_t n_journaled = 0;
    for (size_t i = 0; i < p->nops; i++)
        n_journaled += p->ops[i].journaled != 0;
    if (n_journaled == 0 && p->mdirs.n == 0) {
        /* Nothing to change (say, deletes of files already gone). */
        if (cdd_fs_remove_tree(stage) != 0)
            cdd_clear_error(); /* a stray stage for the next recover */
        goto out;
    }
    r = journal_text(p, &j);
    if (r)
        goto no_journal;

    /* From here on a journal may be on disk: every failure goes through
     * the roll-back, which copes with any prefix of the steps. */
    r = cdd_fs_write_atomic(journal, j.p, j.len);
    for (size_t i = 0; !r && i < p->mdirs.n; i++) {
        char *d = abs_of(p, p->mdirs.items[i]);
        r = d ? cdd_fs_mkdir(d) : nomem();
        if (!r)
            r = add_parent(&syncs, d);
        free(d);
    }
    for (size_t i = 0; !r && i < p->nops; i++) {
        if (!p->ops[i].journaled)
            continue;
        if (cdd_cancelled())
            r = cdd_fail(CDD_E_INTERRUPTED, p->root, 0,
                         "interrupted during the commit");
        else
            r = apply_op(p, &p->ops[i], &syncs);
    }
    if (!r)
        r = sync_dirs(&syncs);
    if (!r && cdd_cancelled())
        r = cdd_fail(CDD_E_INTERRUPTED, p->root, 0,
                     "interrupted during the commit");
    if (r) {
        r = fail_and_rollback(p, r);
        goto out;
    }

    r = cdd_fs_append_line(journal, "C");
    if (r) {
        /* Was part of "C" written before the failure? Put the journal back
         * as it was, so the roll-back cannot be mistaken for a commit by a
         * later recover; if even that fails, leave both to recover, which
         * finds the tree wholly "after" and reads whichever record is
         * there. */
        struct cdd_errinfo e = *cdd_last_error();
        if (cdd_fs_write_atomic(journal, j.p, j.len) != 0) {
            r = cdd_fail(r, e.path, e.os_err,
                         "%s; the commit record may be incomplete: run "
                         "`cudnn-deploy recover` to settle it", e.msg);
            goto out;
        }
        cdd_fail(r, e.path, e.os_err, "%s", e.msg);
        r = fail_and_rollback(p, r);
        goto out;
    }
    /* Committed. A failed clean-up is tried once more (every step tolerates
     * "already done"); if it still fails, the stage, backup or journal wait
     * for the next recover, which rolls forward: the tree is "after". */
    if (txn_finish(p) != 0 && txn_finish(p) != 0)
        cdd_clear_error();
    goto out;

no_journal:
    if (stage) {
        struct cdd_errinfo e = *cdd_last_error();
        cdd_fs_remove_tree(stage);
        cdd_fail(e.code, e.path, e.os_err, "%s", e.msg);
    }
out:
    strset_free(&syncs);
    free(j.p);
    free(journal);
    free(stage);
    txn_free(t);
    return r;
}

void cdd_txn_abort(struct cdd_txn *t)
{
    if (!t)
        return;
    char *stage = abs_of(&t->p, t->stage_rel);
    if (stage) {
        /* Keep the caller's error: abort follows a failure. A stage that
         * cannot be removed is a stray for the next recover. */
        struct cdd_errinfo e = *cdd_last_error();
        cdd_fs_remove_tree(stage);
        cdd_fail(e.code, e.path, e.os_err, "%s", e.msg);
    }
    free(stage);
    txn_free(t);
}

/* ---- recover ------------------------------------------------------------ */

/* Split the next line off *s (replacing '\n' with NUL). */
static char *next_line(char **s)
{
    char *l = *s;
    if (!l)
        return NULL;
    char *nl = strchr(l, '\n');
    if (nl) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = NULL;
    }
    return l;
}

static int bad_journal(const char *path, size_t line, const char *why)
{
    return cdd_fail(CDD_E_STATE, path, 0,
                    "line %zu: %s; the interrupted transaction cannot be "
                    "finished automatically: inspect the tree and remove "
                    "the journal", line, why);
}

/* Parse a journal into p. *acted: the plan was complete ("E" present), so
 * the tree may have changed; *committed: "C" present. Every path is checked
 * as when it was queued, so a damaged journal cannot steer the recovery
 * outside the tree. */
static int journal_parse(const char *path, char *text, struct txn_plan *p,
                         int *acted, int *committed)
{
    char *s = text, *l;
    size_t ln = 1;
    *acted = *committed = 0;
    l = next_line(&s);
    /* Header: magic, version, id, kind, backup mode. */
    char *f[6] = {0};
    size_t nf = 0;
    for (char *c = l; c && nf < 6;) {
        f[nf++] = c;
        c = strchr(c, ' ');
        if (c)
            *c++ = '\0';
    }
    if (nf != 5 || strcmp(f[0], JOURNAL_MAGIC) != 0 || strcmp(f[1], "1") != 0 ||
        !id_ok(f[2]) || !kind_ok(f[3]) ||
        (strcmp(f[4], "purge-backup") != 0 && strcmp(f[4], "keep-backup") != 0))
        return bad_journal(path, ln, "not a cudnn-deploy journal header");
    if (!(p->id = str_dup(f[2])) || !(p->kind = str_dup(f[3])))
        return nomem();
    p->purge = strcmp(f[4], "purge-backup") == 0;

    /* A plan without its end line never reached the disk whole, so the
     * commit never started (it writes the journal atomically before any
     * change): nothing to undo. */
    for (char *c = s; c; c = strchr(c, '\n')) {
        if (*c == '\n')
            c++;
        if (c[0] == 'E' && (c[1] == '\n' || c[1] == '\0')) {
            *acted = 1;
            break;
        }
    }
    if (!*acted)
        return 0;

    int seen_e = 0;
    while ((l = next_line(&s)) != NULL) {
        ln++;
        char *a = NULL, *b = NULL;
        int r = 0;
        if (*l == '\0') {
            if (s && *s)
                return bad_journal(path, ln, "empty line");
            continue;
        }
        if (l[1] == '\0' && (l[0] == 'E' || l[0] == 'C')) {
            if (l[0] == 'E' ? seen_e : (!seen_e || *committed))
                return bad_journal(path, ln, "record out of order");
            if (l[0] == 'E')
                seen_e = 1;
            else
                *committed = 1;
            continue;
        }
        if (seen_e || l[1] != '\t')
            return bad_journal(path, ln, "unknown record");
        a = l + 2;
        if ((b = strchr(a, '\t')) != NULL)
            *b++ = '\0';
        switch (l[0]) {
        case 'M':
            if (b || !rel_ok(a) || in_state_dir(a))
                return bad_journal(path, ln, "bad folder record");
            r = strset_add(&p->mdirs, a, NULL);
            break;
        case 'P':
            if (!b || strchr(b, '\t') || !src_ok(a, p->id) || !dest_ok(b))
                return bad_journal(path, ln, "bad move record");
            r = plan_push(p, 'P', a, b);
            break;
        case 'D':
        case 'R':
            if (b || (l[0] == 'D' ? !dest_ok(a) : (!rel_ok(a) || in_state_dir(a))))
                return bad_journal(path, ln, "bad removal record");
            r = plan_push(p, l[0], NULL, a);
            break;
        default:
            return bad_journal(path, ln, "unknown record");
        }
        if (r)
            return r;
    }
    return 0;
}

struct sweep {
    struct strset names;
};

static int sweep_one(void *ud, const char *name)
{
    struct sweep *w = ud;
    size_t n = strlen(name);
    if (has_prefix(name, CDD_STAGE_PREFIX) ||
        (n > 4 && strcmp(name + n - 4, ".tmp") == 0))
        return strset_add(&w->names, name, NULL);
    return 0;
}

int cdd_txn_recover(const char *root, int *found, int *rolled_back, char **id)
{
    struct txn_plan p = {0};
    struct sweep w = {{0}};
    char *state = NULL, *journal = NULL, *text = NULL, *stage = NULL;
    char *stray_id = NULL;
    enum cdd_ftype type;
    int r, had_journal = 0;
    *found = 0;
    *rolled_back = 0;
    if (id)
        *id = NULL;
    if (!(p.root = str_dup(root)) ||
        !(state = abs_of(&p, CDD_STATE_DIR)) ||
        !(journal = abs_of(&p, CDD_JOURNAL_FILE))) {
        r = nomem();
        goto out;
    }
    r = type_of(state, &type);
    if (r || type == CDD_FT_NONE)
        goto out;
    r = type_of(journal, &type);
    if (r)
        goto out;
    if (type != CDD_FT_NONE) {
        int acted, committed;
        had_journal = 1;
        r = cdd_fs_read_all(journal, JOURNAL_MAX, &text, NULL);
        if (!r)
            r = journal_parse(journal, text, &p, &acted, &committed);
        if (r)
            goto out;
        *found = 1;
        if (!acted) {
            char *srel = stage_rel_of(p.id);
            stage = srel ? abs_of(&p, srel) : NULL;
            free(srel);
            r = stage ? cdd_fs_unlink(journal) : nomem();
            if (!r)
                r = cdd_fs_sync_dir(state);
            if (!r)
                r = cdd_fs_remove_tree(stage);
            *rolled_back = 1;
        } else if (committed) {
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
    r = cdd_fs_list(state, sweep_one, &w);
    for (size_t i = 0; !r && i < w.names.n; i++) {
        const char *name = w.names.items[i];
        char *a = str_cat3(state, "/", name);
        r = a ? cdd_fs_remove_tree(a) : nomem();
        free(a);
        if (!r && has_prefix(name, CDD_STAGE_PREFIX) && !had_journal) {
            /* An install killed while staging: it never changed the tree,
             * which is as good as rolled back. */
            *found = 1;
            *rolled_back = 1;
            if (!stray_id && !(stray_id = str_dup(name + strlen(CDD_STAGE_PREFIX))))
                r = nomem();
        }
    }
    if (!r && w.names.n)
        r = cdd_fs_sync_dir(state);
    if (!r && id && (p.id || stray_id)) {
        if (p.id) {
            *id = p.id;
            p.id = NULL;
        } else {
            *id = stray_id;
            stray_id = NULL;
        }
    }
out:
    plan_clear(&p);
    strset_free(&w.names);
    free(state);
    free(journal);
    free(text);
    free(stage);
    free(stray_id);
    return r;
}
