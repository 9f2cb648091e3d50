/* The target tree (tree.h): the root opened once, the state folder, the
 * lock, and the beneath-resolution of every tree path.
 *
 * Resolution, portable, on the directory-handle primitives of fsops.h:
 *   1. where the kernel can do it alone (Linux openat2), the folder of a
 *      path is opened with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: a path
 *      with no link on the way is decided by the kernel in one call;
 *   2. otherwise (a link on the way, a missing folder, an old kernel,
 *      Windows) a walk: each component is looked at without following it
 *      (lstat-at), a folder is opened without following (open-at), a link is
 *      read and its target spliced into the components still to walk - a
 *      relative target from the folder holding the link, an absolute one
 *      only when it names a place under the root, restarting from the root;
 *      ".." pops a folder and may never pop the root. At most MAX_LINKS links
 *      per resolution (loops). Inside .cudnn-deploy no link is followed.
 * The walk keeps the handle of every folder it is in, so ".." needs no
 * lookup and the result is the handle of the folder itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/platform.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "cdd/tree.h"

#define MAX_LINKS 40
#define MAX_DEPTH 256
/* Components still to walk: the caller's path and up to MAX_LINKS link
 * targets, each a path of at most CDD_PATH_MAX bytes ("a/" per component). */
#define MAX_PENDING ((MAX_LINKS + 1) * ((size_t)CDD_PATH_MAX / 2 + 1))
/* Folders one walk creates: at most MAX_DEPTH paths, '\n'-separated. */
#define MAX_CREATED ((MAX_DEPTH + 1) * ((size_t)CDD_PATH_MAX + 1) + 1)
/* Names listed in one folder to remove it: cudnn-deploy removes what it
 * wrote (a package's staging, its state folder), never more entries than a
 * package holds. */
#define MAX_LISTED ((size_t)CDD_MAX_ENTRIES)

struct cdd_tree {
    char *given;               /* the root as named by the user */
    char *real;                /* canonical absolute path of the root */
    struct cdd_dir *root;
    struct cdd_dir *state;     /* .cudnn-deploy, NULL when missing */
    struct cdd_lock *lock;
    int access_checked;
    int root_only;             /* cdd_tree_open_root: state never read */
};

static int nomem(void)
{
    return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
}

/* A tree path as callers must give it: relative, no empty, "." or ".."
 * components ("" alone means the root where a folder is meant), and none of
 * what names another place on Windows: '\\' (a separator there), ':' (a
 * drive letter or a stream), control characters. */
static int rel_shape_ok(const char *p)
{
    for (const char *c = p; *c;) {
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
        c = *e ? e + 1 : e;
        if (*e && !*c)
            return 0;
    }
    return 1;
}

/* A name or a tree path longer than the system holds is refused as such,
 * before any call (never cut, never left to the OS to misname). A folder
 * entry's name holds 255 bytes on POSIX, 255 UTF-16 units on Windows
 * (cdd_name_units). */
static int rel_bounds(const struct cdd_tree *t, const char *rel)
{
    size_t total = strlen(rel);
    if (total > (size_t)CDD_PATH_MAX)
        return cdd_fail(CDD_E_TOOLONG, t->real, 0,
                        "a tree path of %zu bytes: longer than the %zu bytes "
                        "a path may have here", total, (size_t)CDD_PATH_MAX);
    for (const char *c = rel; *c;) {
        size_t n = strcspn(c, "/");
        if (cdd_name_units(c, n) > CDD_NAME_MAX) {
            char *shown = cdd_path_shown(rel);
            int r = cdd_fail(CDD_E_TOOLONG, t->real, 0,
                             "\"%s\": a name of %zu bytes, longer than the "
                             "%d a folder entry holds", CDD_SHOWN(shown), n,
                             CDD_NAME_MAX);
            free(shown);
            return r;
        }
        c += n;
        if (*c)
            c++;
    }
    return 0;
}

static int bad_path(const struct cdd_tree *t, const char *rel)
{
    char *shown = cdd_path_shown(rel);
    int r = cdd_fail(CDD_E_UNSAFE, t->real, 0,
                     "\"%s\" is not a path inside the tree", CDD_SHOWN(shown));
    free(shown);
    return r;
}

/* A link's whole target in d, malloc'd (bounded by the platform's path
 * limit, never cut). */
static int dir_readlink_dup(struct cdd_dir *d, const char *name, char **out)
{
    size_t cap = (size_t)CDD_PATH_MAX + 2;
    char *buf = malloc(cap);
    *out = NULL;
    if (!buf)
        return nomem();
    int r = cdd_dir_readlink(d, name, buf, cap);
    if (!r && !(*out = cdd_strdup(buf)))
        r = nomem();
    free(buf);
    return r;
}

/* ---- open / close ------------------------------------------------------- */

/* " (to <target>)" for a link name in d, printable, or "" when it cannot be
 * read: what a message about a link found in the state says it leads to.
 * malloc'd; NULL (read as "") on out of memory. */
static char *link_to(struct cdd_dir *d, const char *name)
{
    char *target = NULL, *shown = NULL, *to;
    if (dir_readlink_dup(d, name, &target) != 0) {
        cdd_clear_error();
        return cdd_strdup("");
    }
    shown = cdd_path_shown(target);
    to = shown ? cdd_aprintf(CDD_TEXT_MAX, "link target", " (to %s)", shown)
               : NULL;
    free(target);
    free(shown);
    return to;
}

/* The state files, by the names install gives them: each must be a regular
 * file or absent. A link among them is tampered state whatever it leads to
 * (nothing in .cudnn-deploy is followed, and no link there is ever
 * expected): refused when the tree is opened, before any command reads or
 * changes anything, one answer for all of them. The backup folder, too,
 * must be a real folder or absent, so that status and verify, which never
 * read it, still report a link there -- unless a journal is present: then
 * recovery, which every command runs or reports first, refuses it naming
 * the record that leads there. (What lies inside it, and the stages, are
 * checked by the steps that use them.) */
static int check_state_files(struct cdd_tree *t)
{
    static const char *const files[] = {CDD_LOCK_FILE, CDD_JOURNAL_FILE,
                                        CDD_RECEIPT_FILE, CDD_MANIFEST_COPY,
                                        CDD_LOG_FILE};
    const size_t skip = sizeof CDD_STATE_DIR; /* ".cudnn-deploy/" */
    int r = 0, journal = 0;
    for (size_t i = 0; !r && i <= sizeof files / sizeof files[0]; i++) {
        int is_dir = i == sizeof files / sizeof files[0];
        if (is_dir && journal)
            break;
        const char *path = is_dir ? CDD_BACKUP_DIR : files[i];
        const char *name = path + skip;
        struct cdd_stat st;
        r = cdd_dir_lstat(t->state, name, &st);
        if (!r && !is_dir && strcmp(path, CDD_JOURNAL_FILE) == 0 &&
            st.type != CDD_FT_NONE)
            journal = 1;
        if (r || st.type == CDD_FT_NONE ||
            st.type == (is_dir ? CDD_FT_DIR : CDD_FT_FILE))
            continue;
        char *abs = cdd_tree_abs(t, path);
        const char *want = is_dir ? "a folder" : "a regular file";
        if (!abs)
            return nomem();
        if (st.type == CDD_FT_SYMLINK) {
            char *to = link_to(t->state, name);
            r = cdd_fail(CDD_E_STATE, abs, 0,
                         "is a link%s, not %s; nothing in %s is "
                         "followed: inspect the tree",
                         to ? to : "", want, CDD_STATE_DIR);
            free(to);
        } else
            r = cdd_fail(CDD_E_STATE, abs, 0, "is %s, not %s: inspect the "
                         "tree", st.type == CDD_FT_DIR ? "a folder"
                                 : st.type == CDD_FT_FILE ? "a file"
                                                          : "a special file",
                         want);
        free(abs);
    }
    return r;
}

/* A handle of cdd_tree_open_root reads no state: asked to, it refuses (a
 * caller's mistake, named as such, never state read unchecked). */
static int root_only_refusal(struct cdd_tree *t)
{
    return cdd_fail(CDD_E_STATE, t->real, 0,
                    "opened for its own files only: %s is not read through "
                    "this handle", CDD_STATE_DIR);
}

static int open_state(struct cdd_tree *t)
{
    struct cdd_stat st;
    if (t->root_only)
        return root_only_refusal(t);
    char *abs = cdd_tree_abs(t, CDD_STATE_DIR);
    int r = abs ? cdd_dir_lstat(t->root, CDD_STATE_DIR, &st) : nomem();
    if (!r && st.type == CDD_FT_DIR)
        r = cdd_dir_open_at(t->root, CDD_STATE_DIR, abs, &t->state);
    else if (!r && st.type != CDD_FT_NONE)
        r = cdd_fail(CDD_E_STATE, abs, 0,
                     "exists and is not a folder (a link is not accepted)");
    if (r == CDD_E_UNSAFE) /* replaced by a link between the two calls */
        r = cdd_fail(CDD_E_STATE, abs, 0,
                     "is not a folder (a link is not accepted)");
    if (!r && t->state)
        r = check_state_files(t);
    if (r && t->state) {
        cdd_dir_close(t->state);
        t->state = NULL;
    }
    free(abs);
    return r;
}

static int tree_open(const char *root, int root_only, struct cdd_tree **out)
{
    struct cdd_tree *t = calloc(1, sizeof *t);
    int r;
    *out = NULL;
    if (!t || !(t->given = cdd_strndup(root, strlen(root)))) {
        free(t);
        return nomem();
    }
    t->root_only = root_only;
    r = cdd_dir_open_path(root, &t->root, &t->real);
    if (!r && !root_only)
        r = open_state(t);
    if (r) {
        cdd_tree_close(t);
        return r;
    }
    *out = t;
    return 0;
}

int cdd_tree_open(const char *root, struct cdd_tree **out)
{
    return tree_open(root, 0, out);
}

int cdd_tree_open_root(const char *root, struct cdd_tree **out)
{
    return tree_open(root, 1, out);
}

void cdd_tree_close(struct cdd_tree *t)
{
    if (!t)
        return;
    cdd_lock_release(t->lock);
    cdd_dir_close(t->state);
    cdd_dir_close(t->root);
    free(t->given);
    free(t->real);
    free(t);
}

const char *cdd_tree_root(const struct cdd_tree *t)
{
    return t->real;
}

char *cdd_tree_abs(const struct cdd_tree *t, const char *rel)
{
    if (!*rel)
        return cdd_strndup(t->real, strlen(t->real));
    size_t n = strlen(t->real);
    /* A root of "/" (or "C:/") already ends in a separator. */
    if (n && t->real[n - 1] == '/')
        n--;
    size_t m = strlen(rel);
    char *p = malloc(n + m + 2);
    if (!p)
        return NULL;
    memcpy(p, t->real, n);
    p[n] = '/';
    memcpy(p + n + 1, rel, m + 1);
    return p;
}

int cdd_tree_has_state(const struct cdd_tree *t)
{
    return t->state != NULL;
}

void cdd_tree_unlock(struct cdd_tree *t)
{
    if (!t)
        return;
    cdd_lock_release(t->lock);
    t->lock = NULL;
}

int cdd_tree_locked(const struct cdd_tree *t)
{
    return t->lock != NULL;
}

int cdd_tree_check_access(struct cdd_tree *t)
{
    if (t->access_checked)
        return 0;
    /* The first write goes into the state folder, or creates it: ask
     * about that one. Its name is the tree's, never the platform's. */
    char *state = NULL;
    if (t->state && !(state = cdd_tree_abs(t, CDD_STATE_DIR)))
        return nomem();
    int r = cdd_check_write_access(t->real, state ? state : t->real);
    free(state);
    if (!r)
        t->access_checked = 1;
    return r;
}

/* ---- the walk ----------------------------------------------------------- */

/* The components still to walk: a stack of strings, next on top. A
 * component that came from the caller's path (not a link target) carries
 * its end offset in that path, so a missing folder is named as the caller
 * knows it. */
struct pending {
    char **items;
    size_t *orig_end; /* 0: from a link target */
    size_t n, cap;
};

static int pending_push(struct pending *q, const char *s, size_t n,
                        size_t orig_end)
{
    /* Two arrays of one length: ends kept exactly at the items' capacity. */
    size_t cap = q->cap;
    int r = CDD_GROW(q->items, &cap, q->n + 1, MAX_PENDING, "path components");
    if (!r && cap != q->cap)
        r = CDD_GROW(q->orig_end, NULL, cap, MAX_PENDING, "path components");
    if (r)
        return r;
    q->cap = cap;
    if (!(q->items[q->n] = cdd_strndup(s, n)))
        return nomem();
    q->orig_end[q->n++] = orig_end;
    return 0;
}

/* Push the components of path so that the first is on top. base: offset of
 * path in the caller's path, or (size_t)-1 for a link target. */
static int pending_push_path(struct pending *q, const char *path, size_t base)
{
    size_t len = strlen(path);
    size_t end = len;
    while (end > 0) {
        size_t start = end;
        while (start > 0 && path[start - 1] != '/')
            start--;
        if (end > start) {
            int r = pending_push(q, path + start, end - start,
                                 base == (size_t)-1 ? 0 : base + end);
            if (r)
                return r;
        }
        end = start ? start - 1 : 0;
    }
    return 0;
}

static void pending_free(struct pending *q)
{
    for (size_t i = 0; i < q->n; i++)
        free(q->items[i]);
    free(q->items);
    free(q->orig_end);
    memset(q, 0, sizeof *q);
}

/* The folders the walk is in: handles (0 is the root, borrowed from the
 * tree) and their canonical names. */
struct walk {
    struct cdd_tree *t;
    struct cdd_dir *dirs[MAX_DEPTH + 1];
    char *names[MAX_DEPTH + 1];
    size_t depth;
};

static void walk_pop(struct walk *w)
{
    cdd_dir_close(w->dirs[w->depth]);
    free(w->names[w->depth]);
    w->dirs[w->depth] = NULL;
    w->names[w->depth] = NULL;
    w->depth--;
}

static void walk_free(struct walk *w)
{
    while (w->depth > 0)
        walk_pop(w);
    w->dirs[0] = NULL; /* the root's handle is the tree's */
}

/* The canonical tree path of the folder the walk is in. */
static char *walk_canon(const struct walk *w)
{
    size_t n = 0;
    for (size_t i = 1; i <= w->depth; i++)
        n += strlen(w->names[i]) + 1;
    char *p = malloc(n + 1), *o = p;
    if (!p)
        return NULL;
    for (size_t i = 1; i <= w->depth; i++) {
        size_t k = strlen(w->names[i]);
        if (i > 1)
            *o++ = '/';
        memcpy(o, w->names[i], k);
        o += k;
    }
    *o = '\0';
    return p;
}

/* An absolute link target that names the root or a place under it: the
 * part after the root, else NULL. Windows targets ("C:/...") compare
 * without case, as NTFS does. */
static const char *under_root(const char *root, const char *target)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    int drive = target[0] && target[1] == ':';
    int same = drive ? 1 : strncmp(target, root, n) == 0;
    if (drive) {
        for (size_t i = 0; i < n && same; i++) {
            char a = target[i], b = root[i];
            if (!a)
                same = 0;
            if (a >= 'A' && a <= 'Z')
                a = (char)(a - 'A' + 'a');
            if (b >= 'A' && b <= 'Z')
                b = (char)(b - 'A' + 'a');
            same = same && a == b;
        }
    }
    if (!same)
        return NULL;
    if (n == 1 && root[0] == '/')
        return target + 1;
    if (target[n] == '\0')
        return target + n;
    if (target[n] == '/')
        return target + n + 1;
    return NULL;
}

static int is_absolute(const char *target)
{
    return target[0] == '/' ||
           (target[0] && target[1] == ':' &&
            (target[2] == '/' || target[2] == '\\'));
}

enum {
    W_CREATE = 1,     /* create missing folders */
    W_MISSING_OK = 2, /* a missing folder ends the walk with *missing set */
    W_NO_FAST = 4     /* the caller needs the canonical path */
};

struct walk_out {
    struct cdd_dir *dir;  /* the folder reached (owned), NULL if missing */
    char *canon;          /* W_NO_FAST: its canonical tree path */
    size_t n_missing;     /* W_MISSING_OK: caller components not there */
    char *created;        /* W_CREATE: tree paths created, '\n'-separated */
};

/* Resolve the folder rel (tree path; "" the root) beneath the tree. */
static int resolve_dir(struct cdd_tree *t, const char *rel, int flags,
                       struct walk_out *o)
{
    struct walk w = {0};
    struct pending q = {0};
    char *target = NULL;
    char *shown = NULL, *via = NULL; /* via: the last link followed */
    int r = 0, links = 0, state = cdd_path_in_state(rel);
    memset(o, 0, sizeof *o);
    if (!rel_shape_ok(rel))
        return bad_path(t, rel);
    if ((r = rel_bounds(t, rel)) != 0)
        return r;
    if (state && t->root_only)
        return root_only_refusal(t);
    w.t = t;
    w.dirs[0] = t->root;

    /* The kernel alone, when no link is on the way. */
    if (!(flags & W_NO_FAST) && *rel) {
        char *abs = cdd_tree_abs(t, rel);
        if (!abs)
            return nomem();
        r = cdd_dir_open_beneath(t->root, rel, 1, abs, &o->dir);
        free(abs);
        if (r <= 0)
            return r;
        r = 0;
    }
    r = pending_push_path(&q, rel, 0);
    while (!r && q.n > 0) {
        char *c = q.items[--q.n];
        size_t oe = q.orig_end[q.n];
        struct cdd_stat st;
        struct cdd_dir *cur = w.dirs[w.depth];
        free(shown);
        shown = NULL;
        if (strcmp(c, ".") == 0) {
            free(c);
            continue;
        }
        if (strcmp(c, "..") == 0) {
            free(c);
            if (w.depth == 0 || (state && w.depth == 1)) {
                r = cdd_fail(CDD_E_UNSAFE, via ? via : cdd_dir_path(cur), 0,
                             "is a link that leads out of the tree (above "
                             "its root, on the way to %s); not followed",
                             rel);
                break;
            }
            walk_pop(&w);
            continue;
        }
        if (w.depth >= MAX_DEPTH) {
            free(c);
            r = cdd_fail(CDD_E_UNSAFE, t->real, 0, "%s: too deep", rel);
            break;
        }
        /* Tree paths never reach into the state folder through a link, and
         * state paths never through anything but the real folder. */
        if (w.depth == 0 && cdd_path_in_state(c) && (!state || oe == 0)) {
            r = cdd_fail(CDD_E_UNSAFE, t->real, 0,
                         "a link on the way to %s leads into %s", rel,
                         CDD_STATE_DIR);
            free(c);
            break;
        }
        shown = malloc(strlen(cdd_dir_path(cur)) + strlen(c) + 2);
        if (!shown) {
            free(c);
            r = nomem();
            break;
        }
        sprintf(shown, "%s/%s", cdd_dir_path(cur), c);
        r = cdd_dir_lstat(cur, c, &st);
        if (!r && st.type == CDD_FT_NONE && (flags & W_CREATE) && oe) {
            r = cdd_dir_mkdir(cur, c);
            if (!r)
                r = cdd_lines_add(&o->created, rel, oe, MAX_CREATED,
                                  "created folders");
            if (!r)
                r = cdd_dir_lstat(cur, c, &st);
        }
        if (r) {
            free(c);
            break;
        }
        if (st.type == CDD_FT_DIR) {
            struct cdd_dir *d = NULL;
            r = cdd_dir_open_at(cur, c, shown, &d);
            if (r == CDD_E_UNSAFE && state)
                r = cdd_fail(CDD_E_STATE, shown, 0,
                             "is not a folder (nothing in %s is followed)",
                             CDD_STATE_DIR);
            if (!r && !cdd_dir_is_beneath(d, t->real)) {
                cdd_dir_close(d);
                r = cdd_fail(state ? CDD_E_STATE : CDD_E_UNSAFE, shown, 0,
                             "leads out of the tree; not followed");
            }
            if (r) {
                free(c);
                break;
            }
            w.dirs[++w.depth] = d;
            w.names[w.depth] = c;
            continue;
        }
        if (st.type == CDD_FT_SYMLINK && state) {
            char *to = link_to(cur, c);
            r = cdd_fail(CDD_E_STATE, shown, 0,
                         "is a link%s; nothing in %s is followed",
                         to ? to : "", CDD_STATE_DIR);
            free(to);
            free(c);
            break;
        }
        if (st.type == CDD_FT_SYMLINK) {
            if (++links > MAX_LINKS) {
                free(c);
                r = cdd_fail(CDD_E_UNSAFE, shown, 0,
                             "too many links on the way to %s (a loop)", rel);
                break;
            }
            free(target);
            r = dir_readlink_dup(cur, c, &target);
            free(c);
            if (r)
                break;
            free(via);
            if (!(via = cdd_strndup(shown, strlen(shown)))) {
                r = nomem();
                break;
            }
            if (!*target) {
                r = cdd_fail(CDD_E_UNSAFE, shown, 0, "is an empty link");
                break;
            }
            const char *rest = target;
            if (is_absolute(target)) {
                if (!(rest = under_root(t->real, target))) {
                    char *tshown = cdd_path_shown(target);
                    r = cdd_fail(CDD_E_UNSAFE, shown, 0,
                                 "is a link that leads out of the tree (to "
                                 "%s); not followed",
                                 CDD_SHOWN(tshown));
                    free(tshown);
                    break;
                }
                while (w.depth > 0)
                    walk_pop(&w);
            }
            r = pending_push_path(&q, rest, (size_t)-1);
            continue;
        }
        /* Missing, or not a folder. */
        if (st.type == CDD_FT_NONE && !oe) {
            free(c);
            if (flags & W_MISSING_OK) {
                o->n_missing = (size_t)-1; /* dangling: nothing to create */
                goto done;
            }
            r = cdd_fail(CDD_E_TARGET, via ? via : shown, 0,
                         "is a link that leads nowhere (on the way to %s)",
                         rel);
            break;
        }
        if (flags & W_MISSING_OK) {
            /* This component and every one after it are missing. */
            size_t n = 1;
            for (size_t i = 0; i < q.n; i++)
                n += q.orig_end[i] != 0;
            free(c);
            o->n_missing = st.type == CDD_FT_NONE ? n : (size_t)-1;
            if (flags & W_NO_FAST) {
                /* The canonical path goes on with the caller's names. */
                char *base = walk_canon(&w);
                size_t bl = base ? strlen(base) : 0;
                /* rel + oe points past this component: back up to it. */
                size_t cstart = oe;
                while (cstart > 0 && rel[cstart - 1] != '/')
                    cstart--;
                if (!base) {
                    r = nomem();
                    break;
                }
                o->canon = malloc(bl + strlen(rel + cstart) + 2);
                if (!o->canon) {
                    free(base);
                    r = nomem();
                    break;
                }
                sprintf(o->canon, "%s%s%s", base, bl ? "/" : "",
                        rel + cstart);
                free(base);
            }
            goto done;
        }
        r = st.type == CDD_FT_NONE
                ? cdd_fail(CDD_E_NOTFOUND, shown, 0, "no such folder")
                : cdd_fail(state ? CDD_E_STATE : CDD_E_TARGET, shown, 0,
                           "exists and is not a folder; %s cannot go there",
                           rel);
        free(c);
        break;
    }
    if (r)
        goto done;
    if ((flags & W_NO_FAST) && !(o->canon = walk_canon(&w))) {
        r = nomem();
        goto done;
    }
    if (w.depth == 0) {
        /* The root itself: a handle of our own. */
        r = cdd_dir_open_at(t->root, ".", t->real, &o->dir);
    } else {
        o->dir = w.dirs[w.depth];
        w.dirs[w.depth] = NULL;
        free(w.names[w.depth]);
        w.names[w.depth] = NULL;
        w.depth--;
    }
done:
    free(target);
    free(shown);
    free(via);
    pending_free(&q);
    walk_free(&w);
    if (r) {
        cdd_dir_close(o->dir);
        free(o->canon);
        free(o->created);
        memset(o, 0, sizeof *o);
    }
    return r;
}

/* The folder holding rel's last component, and that component. */
static int resolve_parent(struct cdd_tree *t, const char *rel, int flags,
                          struct cdd_dir **dir, const char **name)
{
    struct walk_out o;
    *dir = NULL;
    *name = NULL;
    if (!*rel || !rel_shape_ok(rel))
        return bad_path(t, rel);
    int rb = rel_bounds(t, rel);
    if (rb)
        return rb;
    const char *slash = strrchr(rel, '/');
    char *parent = cdd_strndup(rel, slash ? (size_t)(slash - rel) : 0);
    if (!parent)
        return nomem();
    int r = resolve_dir(t, parent, flags, &o);
    free(parent);
    if (r)
        return r;
    free(o.created);
    *dir = o.dir;
    *name = slash ? slash + 1 : rel;
    return 0;
}

/* ---- operations ------------------------------------------------------------ */

int cdd_tree_lstat(struct cdd_tree *t, const char *rel, struct cdd_stat *st)
{
    struct cdd_dir *d;
    const char *name;
    memset(st, 0, sizeof *st);
    int r = resolve_parent(t, rel, W_MISSING_OK, &d, &name);
    if (r || !d)
        return r;
    r = cdd_dir_lstat(d, name, st);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_readlink(struct cdd_tree *t, const char *rel, char *buf,
                      size_t len)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_readlink(d, name, buf, len);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_readlink_dup(struct cdd_tree *t, const char *rel, char **out)
{
    /* A link's target is at most a path: read into a buffer of that bound
     * plus one, then keep a copy of its real length. */
    size_t cap = (size_t)CDD_PATH_MAX + 2;
    char *buf = malloc(cap);
    *out = NULL;
    if (!buf)
        return cdd_fail(CDD_E_NOMEM, rel, 0, NULL);
    int r = cdd_tree_readlink(t, rel, buf, cap);
    if (!r && !(*out = cdd_strdup(buf)))
        r = cdd_fail(CDD_E_NOMEM, rel, 0, NULL);
    free(buf);
    return r;
}

int cdd_tree_create(struct cdd_tree *t, const char *rel, int executable,
                    struct cdd_file **out)
{
    struct cdd_dir *d;
    const char *name;
    *out = NULL;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_create(d, name, executable, out);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_open_read(struct cdd_tree *t, const char *rel,
                       struct cdd_rfile **out)
{
    struct cdd_dir *d;
    const char *name;
    *out = NULL;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_open_read(d, name, out);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_sha256(struct cdd_tree *t, const char *rel,
                    uint8_t digest[CDD_SHA256_LEN], uint64_t *size)
{
    enum { BLOCK = 1 << 20 };
    struct cdd_rfile *f = NULL;
    struct cdd_sha256 *h = NULL;
    unsigned char *buf = NULL;
    uint64_t total = 0;
    int r = cdd_sha256_new(&h);
    if (!r && !(buf = malloc(BLOCK)))
        r = nomem();
    if (!r)
        r = cdd_tree_open_read(t, rel, &f);
    while (!r) {
        size_t got = 0;
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, rel, 0, "interrupted while "
                                                     "hashing");
            break;
        }
        r = cdd_rfile_read(f, buf, BLOCK, &got);
        if (r || got == 0)
            break;
        r = cdd_sha256_update(h, buf, got);
        total += got;
    }
    if (!r)
        r = cdd_sha256_final(h, digest);
    if (!r && size)
        *size = total;
    cdd_rfile_close(f);
    cdd_sha256_free(h);
    free(buf);
    return r;
}

int cdd_tree_rename(struct cdd_tree *t, const char *from, const char *to)
{
    struct cdd_dir *df = NULL, *dt = NULL;
    const char *nf, *nt;
    int r = resolve_parent(t, from, 0, &df, &nf);
    if (!r)
        r = resolve_parent(t, to, 0, &dt, &nt);
    if (!r)
        r = cdd_dir_rename(df, nf, dt, nt);
    cdd_dir_close(df);
    cdd_dir_close(dt);
    return r;
}

int cdd_tree_unlink(struct cdd_tree *t, const char *rel)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_unlink(d, name);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_rmdir(struct cdd_tree *t, const char *rel)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_rmdir(d, name);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_mkdir(struct cdd_tree *t, const char *rel)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_mkdir(d, name);
    cdd_dir_close(d);
    if (!r && strcmp(rel, CDD_STATE_DIR) == 0 && !t->state)
        r = open_state(t);
    return r;
}

int cdd_tree_mkdirs(struct cdd_tree *t, const char *rel, char **created)
{
    struct walk_out o;
    if (created)
        *created = NULL;
    int r = resolve_dir(t, rel, W_CREATE, &o);
    if (r)
        return r;
    cdd_dir_close(o.dir);
    if (created)
        *created = o.created;
    else
        free(o.created);
    if (!t->state && cdd_path_in_state(rel))
        r = open_state(t);
    return r;
}

int cdd_tree_mkparents(struct cdd_tree *t, const char *rel)
{
    const char *s = strrchr(rel, '/');
    if (!s)
        return 0;
    char *dir = cdd_strndup(rel, (size_t)(s - rel));
    if (!dir)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    int r = cdd_tree_mkdirs(t, dir, NULL);
    free(dir);
    return r;
}

int cdd_tree_write_new(struct cdd_tree *t, const char *rel, const void *buf,
                       size_t len)
{
    struct cdd_file *f = NULL;
    int r = cdd_tree_mkparents(t, rel);
    if (!r)
        r = cdd_tree_create(t, rel, 0, &f);
    if (r)
        return r;
    if ((r = cdd_file_write(f, buf, len))) {
        cdd_file_abort(f);
        return r;
    }
    return cdd_file_finish(f);
}

int cdd_tree_symlink(struct cdd_tree *t, const char *target, const char *rel)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_symlink(target, d, name);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_set_mtime(struct cdd_tree *t, const char *rel, int64_t sec)
{
    struct cdd_dir *d;
    const char *name;
    if (!*rel)
        return cdd_dir_set_mtime(t->root, ".", sec);
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_set_mtime(d, name, sec);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_sync_dir(struct cdd_tree *t, const char *rel)
{
    struct walk_out o;
    int r = resolve_dir(t, rel, 0, &o);
    if (r)
        return r;
    r = cdd_dir_sync(o.dir);
    cdd_dir_close(o.dir);
    return r;
}

int cdd_tree_list(struct cdd_tree *t, const char *rel,
                  int (*fn)(void *ud, const char *name), void *ud)
{
    struct walk_out o;
    int r = resolve_dir(t, rel, 0, &o);
    if (r)
        return r;
    r = cdd_dir_list(o.dir, fn, ud);
    cdd_dir_close(o.dir);
    return r;
}

struct names {
    char **v;
    size_t n, cap;
};

static int collect(void *ud, const char *name)
{
    struct names *l = ud;
    int r = CDD_GROW(l->v, &l->cap, l->n + 1, MAX_LISTED, "folder entries");
    if (r)
        return r;
    if (!(l->v[l->n] = cdd_strndup(name, strlen(name))))
        return nomem();
    l->n++;
    return 0;
}

static void names_free(struct names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

/* Remove name inside d: a folder with its contents (opened without
 * following, so a link swapped in is removed, not followed). */
static int remove_at(struct cdd_dir *d, const char *name)
{
    struct cdd_stat st;
    int r = cdd_dir_lstat(d, name, &st);
    if (r || st.type == CDD_FT_NONE)
        return r;
    if (st.type != CDD_FT_DIR)
        return cdd_dir_unlink(d, name);
    struct cdd_dir *sub = NULL;
    struct names l = {0};
    r = cdd_dir_open_at(d, name, NULL, &sub);
    if (!r)
        r = cdd_dir_list(sub, collect, &l);
    for (size_t i = 0; !r && i < l.n; i++)
        r = remove_at(sub, l.v[i]);
    cdd_dir_close(sub);
    names_free(&l);
    if (!r)
        r = cdd_dir_rmdir(d, name);
    return r;
}

int cdd_tree_remove_tree(struct cdd_tree *t, const char *rel)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, W_MISSING_OK, &d, &name);
    if (r || !d)
        return r;
    r = remove_at(d, name);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_write_atomic(struct cdd_tree *t, const char *rel,
                          const void *buf, size_t len)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_write_atomic(d, name, buf, len);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_append_line(struct cdd_tree *t, const char *rel,
                         const char *line)
{
    struct cdd_dir *d;
    const char *name;
    int r = resolve_parent(t, rel, 0, &d, &name);
    if (r)
        return r;
    r = cdd_dir_append_line(d, name, line);
    cdd_dir_close(d);
    return r;
}

int cdd_tree_read_all(struct cdd_tree *t, const char *rel, size_t max,
                      char **out, size_t *len)
{
    struct cdd_rfile *f = NULL;
    *out = NULL;
    int r = cdd_tree_open_read(t, rel, &f);
    if (r)
        return r;
    char *abs = cdd_tree_abs(t, rel);
    r = cdd_rfile_read_all(f, abs ? abs : rel, max, out, len);
    free(abs);
    cdd_rfile_close(f);
    return r;
}

int cdd_tree_canon(struct cdd_tree *t, const char *rel, char **canon,
                   size_t *n_missing)
{
    struct walk_out o;
    *canon = NULL;
    if (n_missing)
        *n_missing = 0;
    if (!*rel || !rel_shape_ok(rel))
        return bad_path(t, rel);
    int rb = rel_bounds(t, rel);
    if (rb)
        return rb;
    const char *slash = strrchr(rel, '/');
    const char *name = slash ? slash + 1 : rel;
    char *parent = cdd_strndup(rel, slash ? (size_t)(slash - rel) : 0);
    if (!parent)
        return nomem();
    int r = resolve_dir(t, parent, W_MISSING_OK | W_NO_FAST, &o);
    free(parent);
    if (r)
        return r;
    cdd_dir_close(o.dir);
    if (o.n_missing == (size_t)-1) {
        free(o.canon);
        char *abs = cdd_tree_abs(t, rel);
        r = cdd_fail(CDD_E_TARGET, abs ? abs : rel, 0,
                     "a folder on the way is not a folder, or a link that "
                     "leads nowhere");
        free(abs);
        return r;
    }
    if (n_missing)
        *n_missing = o.n_missing;
    size_t bl = strlen(o.canon);
    *canon = malloc(bl + strlen(name) + 2);
    if (!*canon) {
        free(o.canon);
        return nomem();
    }
    sprintf(*canon, "%s%s%s", o.canon, bl ? "/" : "", name);
    free(o.canon);
    return 0;
}

struct case_find {
    const char *name;
    char *exact, *variant;
};

static int case_one(void *ud, const char *entry)
{
    struct case_find *c = ud;
    if (strcmp(entry, c->name) == 0)
        return (c->exact = cdd_strndup(entry, strlen(entry))) ? 0 : nomem();
    if (!c->variant && cdd_path_casecmp(entry, c->name) == 0)
        return (c->variant = cdd_strndup(entry, strlen(entry))) ? 0 : nomem();
    return 0;
}

int cdd_tree_find_case(struct cdd_tree *t, const char *dir, const char *name,
                       char **found)
{
    struct walk_out o;
    struct case_find c = {name, NULL, NULL};
    *found = NULL;
    int r = resolve_dir(t, dir, W_MISSING_OK, &o);
    if (r || !o.dir)
        return r;
    r = cdd_dir_list(o.dir, case_one, &c);
    cdd_dir_close(o.dir);
    if (r) {
        free(c.exact);
        free(c.variant);
        return r;
    }
    if (c.exact) {
        *found = c.exact;
        free(c.variant);
    } else {
        *found = c.variant;
    }
    return 0;
}

/* ---- the lock (recovery, which needs it, is txn.h's: treelock.c) ------- */

/* The lock of the state folder held in t->state: 0 with t->lock set, 1
 * when the folder or its lock file went away while we waited (an emptying
 * uninstall removed them, cdd_tree_remove_state: open them again), or an
 * error. */
static int lock_held_state(struct cdd_tree *t, double timeout_s,
                           const char *lock)
{
    struct cdd_stat st;
    /* The lock file must be a plain file: a link planted there is a
     * tampered state, the same answer as for any other state file. */
    int r = cdd_dir_lstat(t->state, "lock", &st);
    if (!r && st.type != CDD_FT_NONE && st.type != CDD_FT_FILE)
        r = cdd_fail(CDD_E_STATE, lock, 0,
                     "is not a regular file (a link is not accepted)");
    /* Opened inside the held state folder, by name, never through a path:
     * a .cudnn-deploy swapped for a link after the open cannot make it
     * create or lock a file elsewhere. */
    if (!r)
        r = cdd_lock_acquire_at(t->state, "lock", timeout_s, NULL, &t->lock);
    /* The folder held was removed before the lock file could be made in it
     * (an emptying uninstall ran between our open and this lock: a removed
     * folder takes no new name): start again from the names, as when the
     * lock file went away while we waited. */
    if (r && r != CDD_E_STATE && cdd_dir_removed(t->state)) {
        cdd_clear_error();
        return 1;
    }
    if (r)
        return r;
    struct cdd_stat now;
    /* Gone: no folder at the name, or the one we hold was removed (and
     * another made since by whoever came next). */
    int gone = (cdd_dir_lstat(t->root, CDD_STATE_DIR, &now) == 0 &&
                now.type == CDD_FT_NONE) || cdd_dir_removed(t->state);
    cdd_clear_error();
    /* Taken on a file an emptying uninstall unlinked (with its folder, or
     * the folder left for something else in it): nobody else sees that
     * lock. Start again from the names. */
    if (gone || (cdd_dir_same_at(t->root, CDD_STATE_DIR, t->state) &&
                 !cdd_lock_is_at(t->lock, t->state, "lock"))) {
        cdd_lock_release(t->lock);
        t->lock = NULL;
        return 1;
    }
    /* If .cudnn-deploy was swapped after the tree was opened, the folder
     * held (and the lock taken in it) is no longer this tree's. Never go on
     * with it (two runs could then both hold "the" lock). */
    if (!cdd_dir_same_at(t->root, CDD_STATE_DIR, t->state)) {
        cdd_lock_release(t->lock);
        t->lock = NULL;
        char *abs = cdd_tree_abs(t, CDD_STATE_DIR);
        r = cdd_fail(CDD_E_STATE, abs ? abs : CDD_STATE_DIR, 0,
                     "was replaced while the lock was taken; not used");
        free(abs);
    }
    return r;
}

int cdd_tree_lock_state(struct cdd_tree *t, double timeout_s,
                        int create_state, int *created_out)
{
    char *lock = NULL;
    int r = 0, created = 0;
    if (created_out)
        *created_out = 0;
    if (t->lock)
        return 0;
    if (!(lock = cdd_tree_abs(t, CDD_LOCK_FILE)))
        return nomem();
    /* Each round that finds its lock file removed under it opens the
     * folder again; a few rounds, then it is an error (something keeps
     * removing it). */
    for (int round = 0;; round++) {
        if (!t->state) {
            r = open_state(t); /* it may have appeared since the open */
            if (!r && !t->state && create_state) {
                r = cdd_dir_mkdir(t->root, CDD_STATE_DIR);
                if (!r)
                    r = open_state(t);
                created = !r;
            }
            if (r || !t->state)
                break;
        }
        r = lock_held_state(t, timeout_s, lock);
        if (r != 1)
            break;
        cdd_dir_close(t->state);
        t->state = NULL;
        created = 0;
        if (round == 8) {
            r = cdd_fail(CDD_E_STATE, lock, 0,
                         "removed again each time it was locked; not used");
            break;
        }
    }
    if (r && created) {
        /* Leave the tree as it was; if another process got in between and
         * put its lock file there, the folder is not empty and stays. */
        struct cdd_errsave e;
        cdd_error_save(&e);
        struct names l = {0};
        int empty = cdd_dir_list(t->state, collect, &l) == 0 && l.n == 0;
        /* Closed first: Windows cannot remove a folder we hold open. */
        cdd_dir_close(t->state);
        t->state = NULL;
        if (empty)
            cdd_dir_rmdir(t->root, CDD_STATE_DIR);
        names_free(&l);
        cdd_error_restore(&e);
        cdd_error_save_free(&e);
        created = 0;
    }
    free(lock);
    if (created_out)
        *created_out = created;
    return r;
}

/* Entries of the state folder that an emptying uninstall may remove (all
 * ours, and describing nothing once the tree holds nothing of ours): the
 * deploy log, and the backup folder when it is empty. The lock goes last,
 * by cdd_lock_unlink_at. Anything else keeps the folder. */
static int state_leftover(const char *name)
{
    return strcmp(name, "lock") == 0 || strcmp(name, "log.jsonl") == 0 ||
           strcmp(name, "backup") == 0;
}

int cdd_tree_remove_state(struct cdd_tree *t, int *removed)
{
    struct names l = {0};
    int r;
    *removed = 0;
    if (!t->lock || !t->state || !cdd_lock_can_unlink())
        return 0;
    r = cdd_dir_list(t->state, collect, &l);
    for (size_t i = 0; !r && i < l.n; i++)
        if (!state_leftover(l.v[i]))
            goto keep;
    /* backup/ must be empty (a folder of ours; rmdir refuses otherwise). */
    for (size_t i = 0; !r && i < l.n; i++)
        if (strcmp(l.v[i], "backup") == 0 &&
            cdd_dir_rmdir(t->state, "backup") != 0)
            goto keep;
    for (size_t i = 0; !r && i < l.n; i++)
        if (strcmp(l.v[i], "log.jsonl") == 0)
            r = cdd_dir_unlink(t->state, "log.jsonl");
    if (r)
        goto out;
    /* While we hold the lock: a process waiting on it finds, once it has
     * it, that the file is no longer named (lock_held_state) and starts
     * again; one that opens the name after this creates a new lock file,
     * and then the folder is not empty and the rmdir below leaves it. */
    if (cdd_lock_unlink_at(t->lock, t->state, "lock") != 0)
        goto keep;
    cdd_dir_close(t->state);
    t->state = NULL;
    if (cdd_dir_rmdir(t->root, CDD_STATE_DIR) == 0)
        *removed = 1;
    else
        cdd_clear_error();
    /* The lock file held is unnamed now: released, it locks nothing. */
    cdd_lock_release(t->lock);
    t->lock = NULL;
    goto out;
keep:
    cdd_clear_error();
    r = 0;
out:
    names_free(&l);
    return r;
}

int cdd_tree_lock(struct cdd_tree *t, double timeout_s, int create_state,
                  int *locked)
{
    int r;
    if (locked)
        *locked = 0;
    if (!t->lock) {
        if (!t->state && !create_state && (r = open_state(t)) != 0)
            return r;
        if (!t->state && !create_state)
            return 0;
        r = cdd_tree_check_access(t);
        if (!r)
            r = cdd_tree_lock_state(t, timeout_s, create_state, NULL);
        if (r)
            return r;
        if (!t->lock)
            return 0;
    }
    if (locked)
        *locked = 1;
    return 0;
}
