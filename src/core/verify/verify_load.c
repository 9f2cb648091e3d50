/* verify's load layer: which copy the loader would pick (search order), what
 * each installed library needs and whether the loader can find it (import
 * tables parsed, nothing loaded), then loading by absolute path and calling
 * the version functions. Data-driven by the manifest's verify section, so
 * cuDNN 8 and 9 layouts both work. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/binfile.h"
#include "cdd/compat_attr.h"
#include "cdd/cudnn_facts.h"
#include "cdd/error.h"
#include "cdd/extract.h"
#include "loaddiag.h"
#include "cdd/fsops.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"
#include "verify_int.h"

/* DLLs every Windows has: when checking a Windows tree from Linux they
 * cannot be looked for, and need not be. */
static int windows_system_dll(const char *name)
{
    static const char *const sys[] = {
        "kernel32.dll", "user32.dll",  "advapi32.dll", "ws2_32.dll",
        "shell32.dll",  "ole32.dll",   "oleaut32.dll", "gdi32.dll",
        "bcrypt.dll",   "crypt32.dll", "ntdll.dll",    "msvcrt.dll",
        "version.dll",  "setupapi.dll", "dbghelp.dll", "shlwapi.dll",
        "ucrtbase.dll", "psapi.dll",   "secur32.dll",  "comdlg32.dll"};
    char low[64]; /* fixed: compared with the system DLL names, all shorter */
    size_t i;
    for (i = 0; i < sizeof low - 1 && name[i]; i++)
        low[i] = (char)tolower((unsigned char)name[i]);
    low[i] = '\0';
    if (strncmp(low, "api-ms-win-", 11) == 0 || strncmp(low, "ext-ms-", 7) == 0)
        return 1;
    for (size_t k = 0; k < sizeof sys / sizeof sys[0]; k++)
        if (strcmp(low, sys[k]) == 0)
            return 1;
    return 0;
}

static int abs_path(const char *p)
{
    return p && (p[0] == '/' ||
                 (isalpha((unsigned char)p[0]) && p[1] == ':' &&
                  (p[2] == '/' || p[2] == '\\')));
}

/* Follows symlinks, as the loader does: a dangling soname link (its real
 * file deleted) is a missing library. */
static int file_exists(const struct vctx *c, const char *path)
{
    char *real = NULL;
    int r = cdd_fs_realpath(path, &real);
    free(real);
    /* Out of memory is not a missing library (the malloc trials). */
    if (r == CDD_E_NOMEM && c)
        c->res->checks.nomem = 1;
    cdd_clear_error();
    return r == 0 || r == CDD_E_NOMEM;
}

static char *dir_of(const char *path)
{
    char *d = strdup(path);
    char *s = d ? strrchr(d, '/') : NULL;
    if (s)
        *s = '\0';
    return d;
}

/* Look for `needed` in a ':'-separated list of folders, $ORIGIN expanded. */
static char *search_dirs(const char *list, const char *origin,
                         const char *needed)
{
    char *found = NULL;
    const char *p = list;
    while (p && *p && !found) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *d = cdd_strndup(p, len), *dir = NULL;
        p = end ? end + 1 : NULL;
        if (!d || !d[0]) {
            free(d);
            continue;
        }
        if (strncmp(d, "$ORIGIN", 7) == 0)
            dir = cdd_aprintf(CDD_TEXT_MAX, "RUNPATH entry", "%s%s", origin,
                              d + 7);
        else if (strncmp(d, "${ORIGIN}", 9) == 0)
            dir = cdd_aprintf(CDD_TEXT_MAX, "RUNPATH entry", "%s%s", origin,
                              d + 9);
        else
            dir = cdd_strdup(d);
        char *cand = dir ? cdd_path_join(dir, needed) : NULL;
        if (cand && file_exists(NULL, cand))
            found = cand;
        else
            free(cand);
        free(dir);
        free(d);
    }
    return found;
}

static int is_ours(const struct vctx *c, const char *name)
{
    for (size_t i = 0; i < c->n_libs; i++)
        if (strcmp(c->libs[i].name, name) == 0)
            return 1;
    for (size_t i = 0; c->rc && i < c->rc->n_files; i++)
        if (strcmp(cdd_path_basename(c->rc->files[i].path), name) == 0)
            return 1;
    return 0;
}

/* Where the loader would find `needed` for the library at `lib`. Returns a
 * malloc'd description ("/usr/lib/x86_64-linux-gnu/libz.so.1", "this
 * install", "Windows system DLL") or NULL when it would not be found. */
static char *resolve_dep(const struct vctx *c, const struct cdd_bininfo *bi,
                         const char *lib, const char *needed, int *beside,
                         int *oom)
{
    char *origin = dir_of(lib), *found = NULL;
    *beside = 0;
    if (!origin) {
        *oom = 1;
        return NULL;
    }
    if (bi->fmt == CDD_BIN_ELF) {
        /* glibc: DT_RPATH only when there is no DT_RUNPATH. */
        if (!bi->runpath && bi->rpath)
            found = search_dirs(bi->rpath, origin, needed);
        if (!found && bi->runpath)
            found = search_dirs(bi->runpath, origin, needed);
        /* Found through the library's own RPATH/RUNPATH ($ORIGIN): the
         * proven copy, loaded from elsewhere, would not see it there. */
        *beside = found != NULL;
    } else {
        /* LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: the DLL's own folder first
         * (joined, not split on ':' as a list: "C:/..." has a drive). */
        found = cdd_path_join(origin, needed);
        if (found && !file_exists(c, found)) {
            free(found);
            found = NULL;
        }
        *beside = found != NULL;
    }
    if (!found && c->host_can_load) {
        char **paths = NULL;
        size_t n = 0;
        int fr = cdd_lib_find_all(needed, &paths, &n);
        if (fr == 0 && n > 0 && !(found = strdup(paths[0])))
            *oom = 1;
        if (fr == CDD_E_NOMEM)
            *oom = 1;
        cdd_lib_paths_free(paths, n);
        cdd_clear_error();
    }
    /* A sibling of this install: the loader matches it by name once we
     * have loaded it by absolute path - if the file is really there. */
    if (!found && is_ours(c, needed)) {
        char *sib = cdd_path_join(origin, needed);
        if (!sib)
            *oom = 1;
        if (sib && file_exists(c, sib))
            found = strdup("this install (loaded first, by absolute path)");
        free(sib);
    }
    if (!found && bi->fmt == CDD_BIN_PE && windows_system_dll(needed))
        found = strdup("Windows system DLL");
    free(origin);
    return found;
}

/* ---- search order --------------------------------------------------------- */

/* The fix for a library folder the loader does not search first: words
 * for the detail, the commands as data (fix.h), the same as doctor's. */
static int fix_libdir(const struct vctx *c, const char *dir,
                      struct cdd_sb *out, struct cdd_fixes *fx)
{
    int windows = cdd_platform_is_windows(c->m->platform);
    struct cdd_sb *buf = out;
    char *native = cdd_strdup(dir);
    if (!native)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    for (char *p = native; windows && *p; p++)
        if (*p == '/')
            *p = '\\';
    int r = windows ? cdd_sb_setf(buf, "put %s first on PATH", native)
                    : cdd_sb_setf(buf, "add %s to LD_LIBRARY_PATH, or "
                                       "system-wide to /etc/ld.so.conf.d",
                                  native);
    free(native);
    return r ? r : cdd_fixes_libdir(fx, windows, dir);
}

enum search_state { S_OURS = 0, S_SHADOWED, S_ABSENT, S_OTHER, S_UNKNOWN };

/* Report which copy the loader picks. A sub-library in the same state as
 * the main library is not reported again (the main check says "same for the
 * sub-libraries"): seven identical warnings help nobody. */
static enum search_state search_order(struct vctx *c, struct vlib *l,
                                      int report)
{
    enum search_state state = S_UNKNOWN;
    char **paths = NULL, *ours = NULL, *dir = dir_of(l->installed);
    size_t n = 0, mine = (size_t)-1;
    char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
    struct cdd_sb fix, others;
    struct cdd_fixes fx = {0};
    cdd_sb_init(&fix, CDD_TEXT_MAX, "fix");
    cdd_sb_init(&others, CDD_TEXT_MAX, "list of other copies");
    snprintf(name, sizeof name, "load.search %s", l->name);
    int fr = dir ? cdd_lib_find_all(l->name, &paths, &n) : CDD_E_NOMEM;
    if (fr == CDD_E_NOMEM) {
        c->res->checks.nomem = 1; /* an emulation we could not do */
        goto out;
    }
    if (fr != 0) {
        if (report)
            VCHECK(c, name, CDD_CHECK_WARN, "could not emulate the search: %s",
                   cdd_last_error()->msg);
        goto out;
    }
    if (cdd_fs_realpath(l->installed, &ours) != 0)
        ours = strdup(l->installed);
    cdd_clear_error();
    for (size_t i = 0; i < n; i++) {
        char *real = NULL;
        if (cdd_fs_realpath(paths[i], &real) == 0 && ours &&
            strcmp(real, ours) == 0 && mine == (size_t)-1)
            mine = i;
        else if (cdd_sb_addf(&others, "%s%s", cdd_sb_len(&others) ? ", " : "",
                             paths[i]))
            cdd_clear_error(); /* past CDD_TEXT_MAX: the list stops */
        free(real);
    }
    cdd_clear_error();
    int xr = fix_libdir(c, dir, &fix, &fx);
    if (xr == CDD_E_NOMEM)
        c->res->checks.nomem = 1; /* the fix would be missing its commands */
    if (xr)
        cdd_clear_error(); /* the check still stands without its commands */
    state = n == 0 ? S_ABSENT : mine == 0 ? S_OURS
            : mine != (size_t)-1 ? S_SHADOWED : S_OTHER;
    if (!report)
        goto out;
    char same[128] = ""; /* fixed: a constant note */
    if (l->is_main && c->n_libs > 1)
        snprintf(same, sizeof same, " (sub-libraries: the same unless "
                 "reported below)");
    if (state == S_ABSENT)
        VCHECK(c, name, CDD_CHECK_WARN,
               "not on the loader's search path: a program that asks for %s "
               "by name (as PyTorch and TensorFlow do) will not find it; fix: "
               "%s%s", l->name, cdd_sb_str(&fix), same);
    else if (state == S_OURS)
        VCHECK(c, name, CDD_CHECK_PASS, "the loader picks ours, %s%s%s%s",
               paths[0], cdd_sb_len(&others) ? "; it shadows " : "",
               cdd_sb_str(&others), same);
    else if (state == S_SHADOWED)
        VCHECK(c, name, CDD_CHECK_WARN,
               "the loader picks %s BEFORE ours (%s): programs get that copy, "
               "not this install; remove it or fix the order: %s%s",
               paths[0], l->installed, cdd_sb_str(&fix), same);
    else
        VCHECK(c, name, CDD_CHECK_WARN,
               "the loader picks %s, not ours: %s is not on the search path; "
               "fix: %s%s", paths[0], dir, cdd_sb_str(&fix), same);
    if (state != S_OURS)
        cdd_checks_fix(&c->res->checks, &fx);
out:
    cdd_sb_free(&fix);
    cdd_sb_free(&others);
    cdd_fixes_clear(&fx);
    cdd_clear_error();
    cdd_lib_paths_free(paths, n);
    free(ours);
    free(dir);
    return state;
}

/* ---- dependencies --------------------------------------------------------- */

/* A DLL's version resource, as dependencies() read it. */
struct vres {
    int read;   /* the file was parsed */
    int has;    /* as cdd_bininfo.has_version */
    unsigned v[4];
    char problem[256]; /* fixed: cdd_bininfo.version_problem, same size */
};

/* Delay-loaded imports (/DELAYLOAD): the loader resolves them at the first
 * call into them, not when the DLL loads, so one that is missing lets the
 * DLL load and the program fail later - a warning, with the name. */
struct ldep;
static void ldep_note(struct vctx *c, struct ldep *d, const char *needed,
                      const char *where, int beside);
/* Not looked for to the end for lack of memory: not loaded, and the
 * answer is out of memory. */
static void ldep_refuse(struct vctx *c, struct ldep *d);

/* Append to a list of names; an append that fails (out of memory) marks
 * the result instead of cutting the list silently. */
static void list_addf(struct vctx *c, struct cdd_sb *sb, const char *fmt,
                      ...) CDD_PRINTF(3, 4);
static void list_addf(struct vctx *c, struct cdd_sb *sb, const char *fmt,
                      ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = cdd_sb_vaddf(sb, fmt, ap);
    va_end(ap);
    if (r) {
        c->res->checks.nomem = 1;
        cdd_clear_error();
    }
}

static void delay_imports(struct vctx *c, struct vlib *l,
                          const struct cdd_bininfo *bi,
                          struct cdd_sb *found_list, size_t *n_ok,
                          struct ldep *ld)
{
    char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
    struct cdd_sb miss; /* names and hints, whole */
    size_t n_miss = 0;
    cdd_sb_init(&miss, CDD_TEXT_MAX, "list of DLLs");
    for (size_t i = 0; i < bi->n_delay_needed; i++) {
        const char *dep = bi->delay_needed[i];
        int beside = 0, oom = 0;
        char *where = resolve_dep(c, bi, l->installed, dep, &beside, &oom);
        if (oom) { /* as in dependencies_in */
            free(where);
            ldep_refuse(c, ld);
            continue;
        }
        if (where && l->copy && c->host_can_load)
            ldep_note(c, ld, dep, where, beside);
        if (where) {
            list_addf(c, found_list, "%s%s -> %s (delay-loaded)",
                      cdd_sb_len(found_list) ? ", " : "", dep, where);
            (*n_ok)++;
        } else {
            const char *hint = cdd_dependency_hint(dep);
            list_addf(c, &miss, "%s%s (%s)", cdd_sb_len(&miss) ? "; " : "",
                      dep, hint ? hint : "not found on the search path");
            n_miss++;
        }
        free(where);
    }
    if (!n_miss) {
        cdd_sb_free(&miss);
        return;
    }
    snprintf(name, sizeof name, "load.delay %s", l->name);
    VCHECK(c, name, CDD_CHECK_WARN,
           "delay-loads %zu DLL%s the loader cannot find%s: %s. %s still "
           "loads; the failure comes at the first call into %s (a crash or "
           "exception 0xC06D007E in the program, not an error at load "
           "time)", n_miss, n_miss == 1 ? "" : "s",
           c->host_can_load ? "" : " (Windows' own folders cannot be "
                                   "searched from this host)",
           cdd_sb_str(&miss), l->name, n_miss == 1 ? "it" : "them");
    cdd_sb_free(&miss);
}

/* What the load step needs to know of a library's dependencies, from its
 * proven copy: the first one the loader would take from a folder another
 * account can write (then nothing is loaded), and those found beside it in
 * the tree (its RUNPATH's $ORIGIN, a DLL's own folder), which the copy
 * would not see there: loaded from the tree first, by absolute path. */
struct ldep {
    char *untrusted;
    char *unproven; /* a receipt component it needs could not be proven */
    /* Not to be loaded, for one of the two reasons above, also when their
     * words could not be kept (no memory: checks.nomem is set too). */
    int refuse;
    char **beside;
    size_t n_beside;
};

static void ldep_refuse(struct vctx *c, struct ldep *d)
{
    d->refuse = 1;
    c->res->checks.nomem = 1;
}

static void ldep_clear(struct ldep *d)
{
    free(d->untrusted);
    free(d->unproven);
    for (size_t i = 0; i < d->n_beside; i++)
        free(d->beside[i]);
    free(d->beside);
    memset(d, 0, sizeof *d);
}

/* A library's dependencies: its DT_NEEDED or import entries, and its
 * delay-load ones (binfile.h bounds each list). */
#define LDEP_BESIDE_MAX (2 * (size_t)CDD_BIN_MAX_NEEDED)
/* Libraries preloaded from the tree: those of every library verify loads
 * (one per manifest file at most). */
#define TREE_DEPS_MAX ((size_t)CDD_MAX_ENTRIES * LDEP_BESIDE_MAX)

static void ldep_beside(struct ldep *d, const char *path)
{
    /* Not kept (no memory): the load that needs it fails in the loader's
     * words, which say what is missing. */
    if (CDD_GROW(d->beside, NULL, d->n_beside + 1, LDEP_BESIDE_MAX,
                 "dependencies found beside a library") != 0) {
        cdd_clear_error();
        return;
    }
    if ((d->beside[d->n_beside] = strdup(path)) != NULL)
        d->n_beside++;
}

/* A receipt file that is not one of the libraries verify loads (an
 * optional component: zlibwapi.dll) but that one of them needs: proven the
 * same way (hashed while copied), and its private copy preloaded by
 * absolute path; unproven, the library that needs it is not loaded. */
static void ldep_component(struct vctx *c, struct ldep *d, const char *needed)
{
    for (size_t i = 0; i < c->n_libs; i++)
        if (strcmp(c->libs[i].name, needed) == 0)
            return; /* proven and loaded as a library of its own */
    for (size_t i = 0; c->rc && i < c->rc->n_files; i++) {
        const char *path = c->rc->files[i].path;
        if (strcmp(cdd_path_basename(path), needed) != 0)
            continue;
        struct vlib tmp = {0};
        tmp.rel = strdup(path);
        tmp.name = strdup(needed);
        if (tmp.rel && tmp.name && cdd_verify_prove(c, &tmp) == 0) {
            if (tmp.copy)
                ldep_beside(d, tmp.copy);
            else {
                d->refuse = 1;
                size_t len = strlen(needed) +
                             (tmp.skip ? strlen(tmp.skip) : 0) + 64;
                if (!d->unproven && (d->unproven = malloc(len)) != NULL)
                    snprintf(d->unproven, len, "not loaded; it needs %s, "
                             "which is %s", needed,
                             tmp.skip ? tmp.skip : "not proven");
                else if (!d->unproven)
                    c->res->checks.nomem = 1;
            }
        } else { /* no memory to prove it: refused all the same */
            ldep_refuse(c, d);
        }
        cdd_clear_error();
        free(tmp.rel);
        free(tmp.name);
        free(tmp.copy);
        free(tmp.skip);
        return;
    }
}

/* A dependency resolved at path `where` (or a description, not a path). */
static void ldep_note(struct vctx *c, struct ldep *d, const char *needed,
                      const char *where, int beside)
{
    if (is_ours(c, needed)) {
        ldep_component(c, d, needed);
        return;
    }
    if (!abs_path(where))
        return;
    char *dir = dir_of(where);
    char *problem = NULL;
    if (!dir) { /* no memory to examine its folder: refused */
        ldep_refuse(c, d);
    } else if (!d->untrusted && cdd_verify_dir_problem(c, dir, &problem)) {
        d->refuse = 1;
        size_t len = strlen(needed) + (problem ? strlen(problem) : 0) + 64;
        if (problem && (d->untrusted = malloc(len)) != NULL)
            snprintf(d->untrusted, len, "%s would come from there, but %s",
                     needed, problem);
        else
            c->res->checks.nomem = 1;
        free(problem);
    } else if (!d->untrusted && beside) {
        ldep_beside(d, where);
    }
    free(dir);
}

/* Parse every installed library (its proven copy where there is one) and
 * resolve what it needs. Remembers, for the load step, which libraries have
 * a dependency that cannot be found, and what ldep says. */
static void dependencies_in(struct vctx *c, struct vlib *l,
                            struct cdd_sb *missing, struct vres *vr,
                            struct ldep *ld, struct cdd_sb *found_list,
                            struct cdd_sb *miss);

/* *missing: the names of the dependencies not found, malloc'd (NULL:
 * none, or out of memory, marked). */
static void dependencies(struct vctx *c, struct vlib *l, char **missing,
                         struct vres *vr, struct ldep *ld)
{
    struct cdd_sb mis, found_list, miss; /* lists of names, whole */
    cdd_sb_init(&mis, CDD_TEXT_MAX, "list of libraries");
    cdd_sb_init(&found_list, CDD_TEXT_MAX, "list of libraries");
    cdd_sb_init(&miss, CDD_TEXT_MAX, "list of libraries");
    dependencies_in(c, l, &mis, vr, ld, &found_list, &miss);
    *missing = NULL;
    if (cdd_sb_len(&mis) && !(*missing = cdd_sb_take(&mis))) {
        c->res->checks.nomem = 1;
        cdd_clear_error();
    }
    cdd_sb_free(&mis);
    cdd_sb_free(&found_list);
    cdd_sb_free(&miss);
}

static void dependencies_in(struct vctx *c, struct vlib *l,
                            struct cdd_sb *missing, struct vres *vr,
                            struct ldep *ld, struct cdd_sb *found_list,
                            struct cdd_sb *miss)
{
    struct cdd_bininfo bi;
    char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
    size_t n_ok = 0, n_miss = 0;
    memset(&bi, 0, sizeof bi);
    snprintf(name, sizeof name, "load.deps %s", l->name);
    int pr = cdd_bin_parse_file(l->copy ? l->copy : l->installed, &bi);
    /* Its dependencies unread, their folders unexamined: it is not loaded
     * either (the loader would look for them wherever it looks). */
    if (pr == CDD_E_NOMEM) {
        ldep_refuse(c, ld); /* not a bad library: out of memory */
        return;
    }
    if (pr != 0) {
        ld->refuse = 1;
        VCHECK(c, name, CDD_CHECK_FAIL, "%s is not a loadable library: %s",
               l->installed, cdd_last_error()->msg);
        cdd_clear_error();
        return;
    }
    vr->read = 1;
    vr->has = bi.has_version;
    memcpy(vr->v, bi.file_version, sizeof vr->v);
    snprintf(vr->problem, sizeof vr->problem, "%s", bi.version_problem);
    int foreign = (bi.fmt == CDD_BIN_PE) !=
                  cdd_platform_is_windows(c->m->platform);
    enum cdd_machine want = cdd_platform_machine(c->m->platform);
    if (foreign || bi.machine != (bi.fmt == CDD_BIN_PE ? cdd_machine_pe(want)
                                                       : cdd_machine_elf(want))) {
        ld->refuse = 1;
        VCHECK(c, name, CDD_CHECK_FAIL,
               "%s is a %s %s file, not an %s %s library (platform %s)",
               l->installed, bi.machine_name,
               bi.fmt == CDD_BIN_PE ? "PE" : "ELF", cdd_machine_name(want),
               cdd_platform_is_windows(c->m->platform) ? "Windows" : "Linux",
               cdd_platform_name(c->m->platform));
        cdd_bininfo_clear(&bi);
        return;
    }
    for (size_t i = 0; i < bi.n_needed; i++) {
        int via_origin = 0, oom = 0;
        char *where = resolve_dep(c, &bi, l->installed, bi.needed[i],
                                  &via_origin, &oom);
        if (oom) { /* neither "missing" nor loaded: its folder was not
                      * examined */
            free(where);
            ldep_refuse(c, ld);
            continue;
        }
        if (where && l->copy && c->host_can_load)
            ldep_note(c, ld, bi.needed[i], where, via_origin);
        if (where) {
            list_addf(c, found_list, "%s%s -> %s",
                      cdd_sb_len(found_list) ? ", " : "", bi.needed[i],
                      where);
            n_ok++;
        } else {
            const char *hint = cdd_dependency_hint(bi.needed[i]);
            char *dir = dir_of(l->installed);
            char *beside = dir ? cdd_path_join(dir, bi.needed[i]) : NULL;
            /* cuBLAS and friends often sit right beside cuDNN in the CUDA
             * tree, yet the loader only looks where it is told to. */
            int here = beside && file_exists(c, beside);
            free(beside);
            list_addf(c, miss, "%s%s (%s%s%s%s)", cdd_sb_len(miss) ? "; " : "",
                      bi.needed[i], here ? "it is in " : "",
                      here ? dir : "",
                      here ? ", but that folder is not on the loader's "
                             "search path: "
                           : "",
                      hint ? hint : "not found on the search path");
            free(dir);
            list_addf(c, missing, "%s%s", cdd_sb_len(missing) ? ", " : "",
                      bi.needed[i]);
            n_miss++;
        }
        free(where);
    }
    delay_imports(c, l, &bi, found_list, &n_ok, ld);
    if (n_miss && !c->host_can_load && bi.fmt == CDD_BIN_PE)
        VCHECK(c, name, CDD_CHECK_WARN,
               "needs %s, not in the tree; Windows' own folders cannot be "
               "searched from this host. Found: %s", cdd_sb_str(miss),
               cdd_sb_len(found_list) ? cdd_sb_str(found_list) : "none");
    else if (n_miss)
        VCHECK(c, name, CDD_CHECK_FAIL,
               "needs %zu librar%s the loader cannot find: %s", n_miss,
               n_miss == 1 ? "y" : "ies", cdd_sb_str(miss));
    else if (n_ok == 0)
        VCHECK(c, name, CDD_CHECK_PASS, "no dependencies");
    else
        VCHECK(c, name, CDD_CHECK_PASS, "%zu dependenc%s resolved: %s", n_ok,
               n_ok == 1 ? "y" : "ies", cdd_sb_str(found_list));
    cdd_bininfo_clear(&bi);
}

/* ---- version resources ------------------------------------------------------ */

static int same_version(const unsigned *a, const unsigned *b)
{
    return memcmp(a, b, 4 * sizeof *a) == 0;
}

/* Every DLL's file version (VS_FIXEDFILEINFO) against the main library's:
 * DLLs from two builds in one folder load and pass their own checks until a
 * call crosses between them. Windows only: ELF libraries carry no such
 * resource. */
static void version_resources(struct vctx *c, const struct vres *vr)
{
    const struct vres *ref = NULL;
    const struct vlib *ref_lib = NULL;
    struct cdd_sb lacking, bad, odd; /* lists of DLL names, whole */
    size_t n_have = 0, n_read = 0;
    int r = 0;
    for (size_t i = 0; i < c->n_libs; i++) {
        if (!vr[i].read)
            continue;
        n_read++;
        if (vr[i].has == 1) {
            n_have++;
            if (!ref) {
                ref = &vr[i];
                ref_lib = &c->libs[i];
            }
        }
    }
    if (!n_read)
        return;
    if (!n_have) {
        VCHECK(c, "load.resource", CDD_CHECK_WARN,
               "none of the %zu DLLs carries a version resource: whether "
               "they come from one build cannot be told from the files",
               n_read);
        return;
    }
    cdd_sb_init(&lacking, CDD_TEXT_MAX, "list of DLLs");
    cdd_sb_init(&bad, CDD_TEXT_MAX, "list of DLLs");
    cdd_sb_init(&odd, CDD_TEXT_MAX, "list of DLLs");
    for (size_t i = 0; !r && i < c->n_libs; i++) {
        const struct vres *v = &vr[i];
        const char *nm = c->libs[i].name;
        if (!v->read || v == ref)
            continue;
        if (v->has == 1 && !same_version(v->v, ref->v))
            r = cdd_sb_addf(&bad, "%s%s is %u.%u.%u.%u",
                            cdd_sb_len(&bad) ? ", " : "", nm, v->v[0],
                            v->v[1], v->v[2], v->v[3]);
        else if (v->has == 0)
            r = cdd_sb_addf(&lacking, "%s%s",
                            cdd_sb_len(&lacking) ? ", " : "", nm);
        else if (v->has < 0)
            r = cdd_sb_addf(&odd, "%s%s (%s)", cdd_sb_len(&odd) ? "; " : "",
                            nm, v->problem);
    }
    if (r) { /* out of memory: not a finding about the DLLs */
        c->res->checks.nomem = 1;
        cdd_clear_error();
        goto out;
    }
    char refv[64]; /* fixed: four numbers */
    snprintf(refv, sizeof refv, "%u.%u.%u.%u", ref->v[0], ref->v[1],
             ref->v[2], ref->v[3]);
    if (cdd_sb_len(&bad))
        VCHECK(c, "load.resource", CDD_CHECK_FAIL,
               "the DLLs come from different builds: %s but %s is %s "
               "(file versions in their version resources); reinstall the "
               "whole archive", cdd_sb_str(&bad), ref_lib->name, refv);
    else if (cdd_sb_len(&lacking) || cdd_sb_len(&odd))
        VCHECK(c, "load.resource", CDD_CHECK_WARN,
               "%zu DLL%s carr%s file version %s (as %s does)%s%s%s%s",
               n_have, n_have == 1 ? "" : "s", n_have == 1 ? "ies" : "y",
               refv, ref_lib->name,
               cdd_sb_len(&lacking) ? "; no version resource in " : "",
               cdd_sb_str(&lacking),
               cdd_sb_len(&odd) ? "; unreadable version resource in " : "",
               cdd_sb_str(&odd));
    else
        VCHECK(c, "load.resource", CDD_CHECK_PASS,
               "all %zu DLLs carry file version %s in their version "
               "resources", n_have, refv);
out:
    cdd_sb_free(&lacking);
    cdd_sb_free(&bad);
    cdd_sb_free(&odd);
}

/* ---- loading and version functions ---------------------------------------- */

typedef size_t (*version_fn)(void);
typedef int (*status_fn)(void);
typedef const char *(*errstr_fn)(int);

/* Each sub-library's version check, resolved from the library that should
 * export it (run apart: cdd_verify_run_apart_checks). */
void cdd_verify_sub_checks(struct vctx *c)
{
    struct vlib *main_lib = &c->libs[0];
    errstr_fn es = main_lib->handle
                       ? (errstr_fn)cdd_lib_func(main_lib->handle,
                                                 "cudnnGetErrorString")
                       : NULL;
    for (size_t i = 1; i < c->n_libs; i++) {
        struct vlib *l = &c->libs[i];
        char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
        if (!l->check_symbol)
            continue;
        snprintf(name, sizeof name, "load.check %s", l->name);
        if (!l->handle) {
            if (l->skip)
                VCHECK(c, name, CDD_CHECK_SKIP, "%s", l->skip);
            else
                VCHECK(c, name, CDD_CHECK_SKIP, "did not load: cannot call %s",
                       l->check_symbol);
            continue;
        }
        /* Resolved from the library that should export it: a main library
         * that re-exports the symbol would otherwise hide a stale copy. */
        status_fn fn = (status_fn)cdd_lib_func(l->handle, l->check_symbol);
        if (!fn) {
            VCHECK(c, name, CDD_CHECK_FAIL, "%s does not export %s",
                   l->installed, l->check_symbol);
            continue;
        }
        cdd_verify_stage(c, name);
        int st = fn();
        const char *text = es ? es(st) : NULL;
        if (st == 0)
            VCHECK(c, name, CDD_CHECK_PASS, "%s() = 0 (success)",
                   l->check_symbol);
        else if (st == c->m->verify.mismatch_status)
            VCHECK(c, name, CDD_CHECK_FAIL,
                   "%s() = %d (%s): this sub-library is from another cuDNN "
                   "version than %s; reinstall the whole archive",
                   l->check_symbol, st, text ? text : "version mismatch",
                   main_lib->name);
        else
            VCHECK(c, name, CDD_CHECK_FAIL, "%s() = %d (%s)", l->check_symbol,
                   st, text ? text : "error");
    }
}

static void version_checks(struct vctx *c)
{
    struct vlib *main_lib = &c->libs[0];
    const struct cdd_mverify *v = &c->m->verify;
    char got[32], want[32]; /* fixed: versions */
    if (!main_lib->handle && main_lib->skip) {
        VCHECK(c, "load.version", CDD_CHECK_SKIP, "%s: %s", main_lib->name,
               main_lib->skip);
    } else if (!main_lib->handle) {
        VCHECK(c, "load.version", CDD_CHECK_SKIP,
               "%s did not load: no version to read", main_lib->name);
    } else {
        version_fn gv = (version_fn)cdd_lib_func(main_lib->handle,
                                                 v->version_symbol);
        if (!gv) {
            VCHECK(c, "load.version", CDD_CHECK_FAIL,
                   "%s does not export %s", main_lib->name, v->version_symbol);
        } else {
            long ver = (long)gv();
            c->res->cudnn_version = ver;
            cdd_cudnn_version_decode(ver, got, sizeof got);
            cdd_cudnn_version_decode(v->version_number, want, sizeof want);
            if (ver == v->version_number)
                VCHECK(c, "load.version", CDD_CHECK_PASS,
                       "%s() = %ld: cuDNN %s, as the manifest expects",
                       v->version_symbol, ver, got);
            else
                VCHECK(c, "load.version", CDD_CHECK_FAIL,
                       "%s() = %ld (cuDNN %s) but the manifest expects %ld "
                       "(cuDNN %s): the library in the tree is from another "
                       "version", v->version_symbol, ver, got,
                       v->version_number, want);
        }
        version_fn cv = v->cudart_symbol
                            ? (version_fn)cdd_lib_func(main_lib->handle,
                                                       v->cudart_symbol)
                            : NULL;
        int tree_major = c->o->target->version.known
                             ? c->o->target->version.major
                             : c->m->cuda_major;
        if (v->cudart_symbol && !cv) {
            VCHECK(c, "load.cudart", CDD_CHECK_FAIL, "%s does not export %s",
                   main_lib->name, v->cudart_symbol);
        } else if (cv) {
            long cr = (long)cv();
            long major = cdd_cuda_version_major(cr);
            long minor = cdd_cuda_version_minor(cr);
            if (major == tree_major)
                VCHECK(c, "load.cudart", CDD_CHECK_PASS,
                       "built against CUDA %ld.%ld (%s() = %ld), matching the "
                       "tree's CUDA %d", major, minor, v->cudart_symbol, cr,
                       tree_major);
            else
                VCHECK(c, "load.cudart", CDD_CHECK_FAIL,
                       "built against CUDA %ld.%ld (%s() = %ld) but the tree "
                       "is CUDA %d: install the cuDNN build for CUDA %d",
                       major, minor, v->cudart_symbol, cr, tree_major,
                       tree_major);
        }
    }
    /* Apart (apart.c): cuDNN 9's version checks start the driver. */
    int any = 0;
    for (size_t i = 1; i < c->n_libs; i++)
        any |= c->libs[i].check_symbol && c->libs[i].handle;
    if (any)
        cdd_verify_run_apart_checks(c);
    else
        cdd_verify_sub_checks(c);
}

/* Load in dependency order: a sub-library whose DT_NEEDED names another of
 * ours is loaded after it, so the loader matches that name to the copy we
 * loaded instead of searching for one; and the main library after the
 * sub-libraries (unless one of them needs it), because cuDNN loads its
 * sub-libraries itself, by bare name, and must find our proven copies
 * loaded already. needs[i] ("a\nb\n", from the proven copy) stays for the
 * load step. */
static int needs_name(const char *needs, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = needs; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : p + len;
    }
    return 0;
}

/* The order in *out (n_libs indexes), or CDD_E_NOMEM: an order worked out
 * without every library's needs would load by another rule than the one
 * verify states, so running out of memory fails the layer (exit 4). */
static int load_order(struct vctx *c, char **needs, size_t **out)
{
    size_t n = c->n_libs, *order = calloc(n ? n : 1, sizeof *order);
    int *done = calloc(n ? n : 1, sizeof *done);
    size_t k = 0;
    *out = NULL;
    if (!order || !done) {
        free(order);
        free(done);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        struct cdd_bininfo bi;
        const char *path = c->libs[i].copy;
        int pr = 0;
        memset(&bi, 0, sizeof bi);
        if (path && (pr = cdd_bin_parse_file(path, &bi)) == 0) {
            size_t len = 1;
            for (size_t j = 0; j < bi.n_needed; j++)
                len += strlen(bi.needed[j]) + 1;
            if ((needs[i] = malloc(len)) != NULL) {
                needs[i][0] = '\0';
                for (size_t j = 0; j < bi.n_needed; j++) {
                    strcat(needs[i], bi.needed[j]);
                    strcat(needs[i], "\n");
                }
            } else {
                pr = CDD_E_NOMEM;
            }
        }
        cdd_bininfo_clear(&bi);
        /* A copy that does not parse is said by its own checks; memory
         * running out is not a finding about the library. */
        if (pr == CDD_E_NOMEM) {
            free(order);
            free(done);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
    }
    cdd_clear_error();
    while (k < n) {
        size_t before = k;
        /* Pass 0: every ready sub-library; pass 1: the main library, once
         * no sub-library is ready any more. */
        for (int pass = 0; pass < 2 && k == before; pass++)
            for (size_t i = 0; i < n; i++) {
                if (done[i] || (pass == 0 && c->libs[i].is_main))
                    continue;
                int ready = 1;
                for (size_t j = 0; j < n && ready; j++)
                    if (j != i && !done[j] &&
                        needs_name(needs[i], c->libs[j].name))
                        ready = 0;
                if (ready) {
                    done[i] = 1;
                    order[k++] = i;
                }
            }
        if (k == before) /* a cycle: take the rest as listed */
            for (size_t i = 0; i < n; i++)
                if (!done[i]) {
                    done[i] = 1;
                    order[k++] = i;
                }
    }
    free(done);
    *out = order;
    return 0;
}

int cdd_verify_loaded_add(struct vctx *c, int lib, const char *path)
{
    char *p = cdd_strdup(path);
    if (!p || CDD_GROW(c->loaded, NULL, c->n_loaded + 1,
                       TREE_DEPS_MAX + CDD_MAX_ENTRIES,
                       "libraries loaded") != 0) {
        free(p);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    c->loaded[c->n_loaded].lib = lib;
    c->loaded[c->n_loaded++].path = p;
    return 0;
}

/* Load one proven copy, after what it needs; or say why not. */
static void load_one(struct vctx *c, size_t i, char **needs,
                     const struct ldep *ld, const char *missing)
{
    struct vlib *l = &c->libs[i];
    char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
    snprintf(name, sizeof name, "load.open %s", l->name);
    /* Refused, with the words when there was memory for them; without,
     * still refused, and the answer is out of memory (checks.nomem). */
    int refuse = ld->refuse;
    if (!l->skip && ld->unproven)
        l->skip = strdup(ld->unproven);
    if (!l->skip && ld->untrusted) {
        size_t len = strlen(ld->untrusted) + 96;
        if ((l->skip = malloc(len)) != NULL)
            snprintf(l->skip, len, "%s (see load.trust): nothing is loaded "
                     "from such a folder, so neither is this", ld->untrusted);
    }
    /* One of ours that it needs did not load: the loader would look for
     * that name itself, perhaps in the tree, and find unproven bytes. Not
     * proven (changed): a skip, as that one's; missing or refused: this
     * one fails, with that as the cause. */
    enum cdd_check_status st = CDD_CHECK_SKIP;
    for (size_t j = 0; !l->skip && j < c->n_libs; j++) {
        const struct vlib *o = &c->libs[j];
        if (j == i || o->handle || !needs_name(needs[i], o->name))
            continue;
        size_t len = strlen(o->name) * 2 + 160;
        if (!o->skip)
            st = CDD_CHECK_FAIL;
        refuse = 1;
        if ((l->skip = malloc(len)) != NULL)
            snprintf(l->skip, len, "not loaded; the cause: it needs %s, "
                     "which %s (see load.open %s), and the loader would "
                     "look for it by name", o->name,
                     o->skip ? "was not proven" : "did not load", o->name);
    }
    if (refuse && !l->skip) { /* no words kept (no memory), or none fit */
        VCHECK(c, name, CDD_CHECK_SKIP, "not loaded: what it needs could "
               "not be read or examined to the end (see load.deps)");
        return;
    }
    if (l->skip || !l->copy) {
        VCHECK(c, name, l->skip ? st : CDD_CHECK_SKIP, "%s",
               l->skip ? l->skip : "not proven: not loaded");
        return;
    }
    for (size_t k = 0; k < ld->n_beside; k++) {
        struct cdd_lib *h = NULL;
        if (CDD_GROW(c->tree_deps, NULL, c->n_tree_deps + 1, TREE_DEPS_MAX,
                     "libraries preloaded from the tree") != 0) {
            cdd_clear_error(); /* the load below says what is missing */
            break;
        }
        /* A failure here shows again, in the loader's words, below. */
        if (cdd_lib_open(ld->beside[k], &h) == 0) {
            c->tree_deps[c->n_tree_deps++] = h;
            if (cdd_verify_loaded_add(c, -1, ld->beside[k]) != 0)
                c->res->checks.nomem = 1;
        }
        cdd_clear_error();
    }
    if (cdd_lib_open_explained(l->copy, &l->handle) == 0) {
        if (cdd_verify_loaded_add(c, (int)i, l->copy) != 0) {
            c->res->checks.nomem = 1;
            cdd_clear_error();
        }
        VCHECK(c, name, CDD_CHECK_PASS, "loaded %s (its bytes proven: a "
               "private copy, sha256 as recorded)", l->installed);
        return;
    }
    if (cdd_last_error()->code == CDD_E_NOMEM) { /* not the library's fault */
        c->res->checks.nomem = 1;
        cdd_clear_error();
        return;
    }
    const char *why = cdd_last_error()->msg;
    if (missing && missing[0])
        VCHECK(c, name, CDD_CHECK_FAIL,
               "%s; the cause: it needs %s, which the loader cannot "
               "find (see load.deps)", why, missing);
    else
        VCHECK(c, name, CDD_CHECK_FAIL, "%s", why);
    cdd_clear_error();
}

int cdd_verify_load_layer(struct vctx *c)
{
    enum search_state main_state = S_UNKNOWN;
    size_t n = c->n_libs ? c->n_libs : 1;
    char **missing = calloc(n, sizeof *missing);
    char **needs = calloc(n, sizeof *needs);
    struct vres *vr = calloc(n, sizeof *vr);
    struct ldep *ld = calloc(n, sizeof *ld);
    int r = 0;
    if (!missing || !needs || !vr || !ld) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    if (c->host_can_load)
        cdd_verify_trust_checks(c);
    for (size_t i = 0; i < c->n_libs; i++) {
        struct vlib *l = &c->libs[i];
        if (!file_exists(c, l->installed)) {
            char name[16 + CDD_NAME_MAX + 1]; /* fixed: a check word, a lib name */
            snprintf(name, sizeof name, "load.%s", l->name);
            VCHECK(c, name, CDD_CHECK_FAIL,
                   "%s is missing: %s is needed (install the whole archive)",
                   l->installed, l->is_main ? "the main library" : "this "
                                                                   "sub-library");
            continue;
        }
        if (c->host_can_load) {
            if (l->is_main)
                main_state = search_order(c, l, 1);
            else if (search_order(c, l, 0) != main_state)
                search_order(c, l, 1);
            /* The bytes first: everything below reads the proven copy. */
            if ((r = cdd_verify_prove(c, l)) != 0)
                goto out;
        }
        dependencies(c, l, &missing[i], &vr[i], &ld[i]);
    }
    if (cdd_platform_is_windows(c->m->platform))
        version_resources(c, vr);
    if (!c->host_can_load) {
        enum cdd_machine want = cdd_platform_machine(c->m->platform);
        VCHECK(c, "load.open", CDD_CHECK_SKIP,
               "%s libraries cannot be loaded on this host%s%s%s%s%s: "
               "search order, loading and version functions are checked "
               "where they run",
               cdd_platform_name(c->m->platform),
               want != cdd_host_machine() ? " (they are " : "",
               want != cdd_host_machine() ? cdd_machine_name(want) : "",
               want != cdd_host_machine() ? ", this host is " : "",
               want != cdd_host_machine()
                   ? cdd_machine_name(cdd_host_machine())
                   : "",
               want != cdd_host_machine() ? ")" : "");
    } else {
        size_t *order = NULL;
        if ((r = load_order(c, needs, &order)) < 0)
            goto out;
        for (size_t k = 0; k < c->n_libs; k++) {
            size_t i = order[k];
            if (file_exists(c, c->libs[i].installed) || c->libs[i].copy)
                load_one(c, i, needs, &ld[i], missing[i]);
        }
        free(order);
        version_checks(c);
    }
out:
    for (size_t i = 0; i < c->n_libs; i++) {
        if (missing)
            free(missing[i]);
        if (needs)
            free(needs[i]);
        if (ld)
            ldep_clear(&ld[i]);
    }
    free(missing);
    free(needs);
    free(vr);
    free(ld);
    return r;
}
