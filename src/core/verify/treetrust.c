/* StrictModes for the tree (issue 18), in the spirit of sshd's StrictModes:
 * a folder that an account other than the caller's (and the system's own)
 * can write lets that account plant or swap code that programs load from
 * there. verify reports such folders -- the tree root, every folder above
 * it up to /, and every folder that holds one of our libraries -- as
 * warnings with the fix, and the load layer loads nothing that the loader
 * would take from such a folder (a dependency such as cuBLAS in the CUDA
 * tree, which no receipt of ours can prove). Our own libraries are loaded
 * from proven private copies (libproof.c), so a loose tree does not stop
 * them; the warning is for every other program that loads from the tree.
 * What counts as writable by whom is the platform's (loader_*.c,
 * cdd_lib_dir_trust): mode bits and owners on POSIX, the DACL on Windows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/extract.h"
#include "cdd/fix.h"
#include "cdd/fsops.h"
#include "cdd/strbuf.h"
#include "verify_int.h"

/* Folders examined: the tree root's, each library's (a manifest lists at
 * most CDD_MAX_ENTRIES files) and each folder a dependency of one resolves
 * in (a folder the loader searches: an entry of LD_LIBRARY_PATH or of a
 * RUNPATH, each list one string of at most 128 KiB, or a system folder),
 * and every folder above one of those (one per '/' of a path: at most half
 * its bytes). */
#define TRUST_LEAVES_MAX (1 + CDD_MAX_ENTRIES + 2 * (128 * 1024 + 1) + 64)
#define TRUST_DIRS_MAX ((size_t)TRUST_LEAVES_MAX * (CDD_PATH_MAX_WIN32 / 2))

/* Is d a root: "/" or "C:/"? */
static int is_root(const char *d)
{
    return strcmp(d, "/") == 0 ||
           (strlen(d) == 3 && d[1] == ':' && (d[2] == '/' || d[2] == '\\'));
}

/* Cut d (a real path) to its parent, in place; 0 when d is a root. */
static int up(char *d)
{
    if (is_root(d))
        return 0;
    char *s = strrchr(d, '/');
    if (!s)
        return 0;
    if (s == d)
        s[1] = '\0';
    else if (s == d + 2 && d[1] == ':')
        s[1] = '\0';
    else
        *s = '\0';
    return 1;
}

/* A folder that could not be examined is refused as one that others can
 * write would be (fail closed), never cached. */
static const char NOT_EXAMINED[] = "not examined (out of memory)";

/* The cached verdict on one folder; fix (may be NULL) gets its commands
 * the first time it is examined. */
static const char *examine(struct vctx *c, const char *dir, int leaf,
                           struct cdd_fixes *fix, int *fresh)
{
    *fresh = 0;
    for (size_t i = 0; i < c->n_trust; i++)
        if (strcmp(c->trust_dir[i], dir) == 0)
            return c->trust_problem[i];
    char *problem = NULL, *copy = strdup(dir);
    int gr = CDD_GROW(c->trust_dir, NULL, c->n_trust + 1, TRUST_DIRS_MAX,
                      "folders to examine");
    if (!gr)
        gr = CDD_GROW(c->trust_problem, NULL, c->n_trust + 1, TRUST_DIRS_MAX,
                      "folders to examine");
    if (!copy || gr || cdd_lib_dir_trust(dir, leaf, &problem, fix)) {
        /* Not examined (no memory, or past the bound): not trusted either,
         * and the whole answer is out of memory (checks.nomem). */
        free(copy);
        free(problem);
        cdd_clear_error();
        c->res->checks.nomem = 1;
        return NOT_EXAMINED;
    }
    c->trust_dir[c->n_trust] = copy;
    c->trust_problem[c->n_trust] = problem;
    c->n_trust++;
    *fresh = 1;
    return problem;
}

/* Walk dir (leaf) and every folder above it; with report, a check for
 * each problem met for the first time. 1 when one has a problem (*first,
 * when asked for, then "DIR is why", malloc'd, or NULL without memory), 0
 * when none has. */
static int walk(struct vctx *c, const char *dir, int report, char **first)
{
    char *d = NULL;
    int bad = 0;
    if (first)
        *first = NULL;
    if (cdd_fs_realpath(dir, &d) != 0) {
        cdd_clear_error();
        if (!(d = strdup(dir))) {
            c->res->checks.nomem = 1;
            return 1;
        }
    }
    for (int leaf = 1;; leaf = 0) {
        struct cdd_fixes fx = {0};
        int fresh = 0;
        const char *p = examine(c, d, leaf, report ? &fx : NULL, &fresh);
        if (p && !bad && first) {
            size_t len = strlen(d) + strlen(p) + 5;
            if ((*first = malloc(len)) != NULL)
                snprintf(*first, len, "%s is %s", d, p);
            else
                c->res->checks.nomem = 1;
        }
        if (p)
            bad = 1;
        if (p && fresh && report) {
            VCHECK(c, "load.trust", CDD_CHECK_WARN,
                   "%s is %s: that account can plant or swap libraries that "
                   "programs load from %s (sshd's StrictModes refuses such "
                   "a folder too); verify loads nothing from the tree there "
                   "except its own proven copies", d, p,
                   leaf ? "it" : "below it");
            cdd_checks_fix(&c->res->checks, &fx);
        }
        cdd_fixes_clear(&fx);
        if (!up(d))
            break;
    }
    free(d);
    return bad;
}

void cdd_verify_trust_checks(struct vctx *c)
{
    size_t before = c->res->checks.n_warn;
    (void)walk(c, c->root, 1, NULL);
    for (size_t i = 0; i < c->n_libs; i++) {
        char *dir = strdup(c->libs[i].installed);
        char *s = dir ? strrchr(dir, '/') : NULL;
        if (s) {
            *s = '\0';
            (void)walk(c, dir, 1, NULL);
        }
        else if (!dir)
            c->res->checks.nomem = 1;
        free(dir);
    }
    if (c->res->checks.n_warn == before)
        VCHECK(c, "load.trust", CDD_CHECK_PASS,
               "only this account and the system can change the tree, its "
               "library folders and every folder above them");
}

int cdd_verify_dir_problem(struct vctx *c, const char *dir, char **why)
{
    return walk(c, dir, 0, why);
}

void cdd_verify_trust_clear(struct vctx *c)
{
    for (size_t i = 0; i < c->n_trust; i++) {
        free(c->trust_dir[i]);
        free(c->trust_problem[i]);
    }
    free(c->trust_dir);
    free(c->trust_problem);
    c->trust_dir = c->trust_problem = NULL;
    c->n_trust = 0;
}
