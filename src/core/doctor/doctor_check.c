/* doctor's second phase (doctor_int.h): the checks, and the fix each
 * states, computed from a scan. Nothing here reads a file, a variable or a
 * library: what the host holds is in struct cdd_dscan, so each check can be
 * tested on a synthetic scan (tests/unit/test_doctor_check.c). The checks
 * are written in the report's order, each able to refer to what the scan
 * found elsewhere (a toolkit's PATH position, the copy a conda copy
 * shadows). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/cudnn_facts.h"
#include "cdd/doctor.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cdd/gpu.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/verify.h"
#include "cdd/windll.h"
#include "doctor_int.h"

/* Adds a check, and the fix its text built up in c->fix (fix_prepend,
 * fix_libdir) goes with it. */
#define DCHECK(c, name, st, ...)                                               \
    do {                                                                       \
        cdd_dr_fail((c), cdd_checks_add(&(c)->res->checks, name, st,          \
                                        __VA_ARGS__));                         \
        cdd_checks_fix(&(c)->res->checks, &(c)->fix);                          \
    } while (0)

static void nomem(struct cdd_dscan *c)
{
    cdd_dr_nomem(c);
}

/* A call that recorded its failure returned none of its result (NULL):
 * keep that failure (CDD_E_TOOLONG or CDD_E_NOMEM). */
static void failed(struct cdd_dscan *c)
{
    int rc = cdd_last_error()->code;
    if (rc)
        cdd_dr_fail(c, rc);
    else
        cdd_dr_nomem(c);
}

/* ---- string helpers ------------------------------------------------------ */

int cdd_dr_same_path(const struct cdd_dscan *c, const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    return c->windows ? cdd_path_casecmp(a, b) == 0 : strcmp(a, b) == 0;
}

char *cdd_dr_dir_of(const char *path)
{
    char *d = strdup(path);
    char *s = d ? strrchr(d, '/') : NULL;
    if (s && s == d)
        s[1] = '\0'; /* "/lib" -> "/" */
    else if (s)
        *s = '\0';
    return d;
}

static char *join(const char *a, const char *b)
{
    return cdd_path_join(a, b);
}

/* The path as its platform writes it, for text the user types. */
static char *native(const struct cdd_dscan *c, const char *p)
{
    char *n = strdup(p);
    for (char *s = n; c->windows && s && *s; s++)
        if (*s == '/')
            *s = '\\';
    return n;
}

/* 1-based position of the folder (resolved) in the list, 0 when absent. */
int cdd_dr_plist_pos(const struct cdd_dscan *c, const struct cdd_dr_plist *l,
                     const char *real_dir)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i].real && cdd_dr_same_path(c, l->v[i].real, real_dir))
            return (int)i + 1;
    return 0;
}

/* Versions compared on their first three components ("8.5.0" and
 * "8.5.0.96" agree). 1 same, 0 different, -1 unknown. */
static int ver_same(const char *a, const char *b)
{
    long ca[4], cb[4];
    char x[40], y[40]; /* fixed: a version (a longer one is none) */
    if (!a || !b || !*a || !*b)
        return -1;
    snprintf(x, sizeof x, "%s", a);
    snprintf(y, sizeof y, "%s", b);
    int na = cdd_version_dotted(x, ca, 4), nb = cdd_version_dotted(y, cb, 4);
    if (na < 2 || nb < 2)
        return -1;
    int n = na < nb ? na : nb;
    if (n > 3)
        n = 3;
    for (int i = 0; i < n; i++)
        if (ca[i] != cb[i])
            return 0;
    return 1;
}

/* For "(8.5.0, PATH #2)" and for "cuDNN 8.5.0 at ...". */
const char *cdd_dr_ver_text(const char *v)
{
    return v && *v ? v : "version unknown";
}

static const char *ver_cudnn(const char *v)
{
    return v && *v ? v : "(version unknown)";
}


/* Put dirs (already joined with the host's separator) first in var: the
 * words here, the commands in c->fix (fix.h, the same as verify's), under
 * label (what this alternative achieves, NULL: the finding's only fix). */
static void fix_prepend(struct cdd_dscan *c, struct cdd_sb *b,
                        const char *var, const char *dirs, const char *label)
{
    char *n = native(c, dirs);
    if (!n)
        return;
    cdd_sb_catf(b, "put %s first on %s", n, var);
    cdd_fixes_label(&c->fix, label);
    cdd_dr_fail(c, cdd_fixes_path_first(&c->fix, c->windows, var, dirs));
    cdd_fixes_label(&c->fix, NULL);
    free(n);
}

/* As fix_prepend for one folder, which the list may not be able to hold
 * (fixes.c: a separator in it): then the words say why, and no command. */
static void fix_prepend_one(struct cdd_dscan *c, struct cdd_sb *b,
                            const char *var, const char *dir)
{
    const char *why = cdd_fix_list_entry_fault(var, dir, c->sep);
    if (why)
        cdd_sb_catf(b, "no command can put %s first on %s: %s", dir, var,
                      why);
    else
        fix_prepend(c, b, var, dir, NULL);
}

/* Make the library folder dir reachable by the loader. */
static void fix_libdir(struct cdd_dscan *c, struct cdd_sb *b,
                       const char *dir)
{
    char *n = native(c, dir);
    if (!n)
        return;
    if (c->windows) {
        /* PATH alone misleads Python >= 3.8 (windll.h). */
        char *py = cdd_windll_python_fix(n);
        cdd_sb_catf(b, "put %s first on PATH for programs; %s", n,
                      py ? py : "");
        if (!py)
            nomem(c);
        free(py);
    } else
        cdd_sb_catf(b, "add %s to LD_LIBRARY_PATH, or system-wide to "
                    "/etc/ld.so.conf.d", n);
    int fr = cdd_fixes_libdir(&c->fix, c->windows, dir);
    if (fr == CDD_E_NOMEM)
        cdd_dr_fail(c, fr);
    else if (fr)
        cdd_clear_error(); /* no command can name dir: the finding stands */
    free(n);
}

/* ---- PATH and LD_LIBRARY_PATH -------------------------------------------- */

/* The label into b (emptied first); returns its text. */
static const char *cuda_label(const struct cdd_doctor_toolkit *k,
                              struct cdd_sb *b)
{
    cdd_sb_reset(b);
    if (k->version.known)
        cdd_sb_catf(b, "CUDA %d.%d", k->version.major, k->version.minor);
    else
        cdd_sb_catf(b, "CUDA of unknown version at %s", k->root);
    return cdd_sb_str(b);
}

/* Toolkits of a list with different versions count as different CUDAs;
 * two names of one version (cuda -> cuda-11.6) do not. */
static int same_cuda(const struct cdd_dscan *c, int a, int b)
{
    const struct cdd_doctor_toolkit *x = &c->res->toolkits[a];
    const struct cdd_doctor_toolkit *y = &c->res->toolkits[b];
    if (a == b)
        return 1;
    if (x->version.known && y->version.known)
        return x->version.major == y->version.major &&
               x->version.minor == y->version.minor;
    return 0;
}

/* The first toolkit of a list, -1 when none. */
static int first_toolkit(const struct cdd_dr_plist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].toolkit >= 0)
            return l->v[i].toolkit;
    return -1;
}

/* All the list's entries that belong to CUDAs like toolkit t, joined with
 * the host's separator (bin and libnvvp both, say). */
static void entries_of(const struct cdd_dscan *c, const struct cdd_dr_plist *l,
                       int t, struct cdd_sb *b) {
    size_t start = cdd_sb_len(b);
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].toolkit >= 0 && l->v[i].toolkit == t)
            cdd_sb_catf(b, "%s%s",
                        cdd_sb_len(b) > start ? (c->sep == ';' ? ";" : ":")
                                              : "",
                        l->v[i].dir);
}

static void check_list(struct cdd_dscan *c, struct cdd_dr_plist *l, int is_lib)
{
    char name[64]; /* fixed: "path" and a variable name of the scan */
    struct cdd_sb list, d, lab, first;
    CDD_DR_TEXT_INIT(&list);
    CDD_DR_TEXT_INIT(&d);
    CDD_DR_TEXT_INIT(&lab);
    CDD_DR_TEXT_INIT(&first);
    int groups[16], n_groups = 0;
    snprintf(name, sizeof name, "path %s", l->var);
    if (!l->set) {
        DCHECK(c, name, CDD_CHECK_SKIP, "%s is not set%s", l->var,
               is_lib ? ": libraries come from the ld.so cache "
                        "(/etc/ld.so.conf.d) and the system folders"
                      : "");
        return;
    }
    int listed = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct cdd_dr_pentry *e = &l->v[i];
        if (e->toolkit < 0 && !e->cudnn)
            continue;
        cdd_sb_reset(&lab);
        if (e->toolkit >= 0)
            cuda_label(&c->res->toolkits[e->toolkit], &lab);
        /* The report keeps a detail to 2 KiB: the first entries matter. */
        if (++listed <= 10)
            cdd_sb_catf(&list, "%s#%zu %s (%s%s%s)", list.len ? ", " : "",
                          i + 1, e->dir, cdd_sb_str(&lab),
                          lab.len && e->cudnn ? "; " : "",
                          e->cudnn ? e->cudnn : "");
        else if (listed == 11)
            cdd_sb_catf(&list, ", ...");
        if (e->toolkit < 0)
            continue;
        int seen = 0;
        for (int g = 0; g < n_groups; g++)
            seen |= same_cuda(c, groups[g], e->toolkit);
        if (!seen && n_groups < 16)
            groups[n_groups++] = e->toolkit;
    }
    const char *what = is_lib       ? "libraries"
                       : c->windows ? "nvcc, tools and DLLs"
                                    : "nvcc and tools";
    if (!list.len) {
        DCHECK(c, name, CDD_CHECK_PASS, "no entry of %s holds CUDA or cuDNN",
               l->var);
    } else if (n_groups <= 1) {
        if (n_groups)
            cuda_label(&c->res->toolkits[groups[0]], &lab);
        DCHECK(c, name, CDD_CHECK_PASS,
               "entries holding CUDA or cuDNN, in order: %s%s%s%s",
               cdd_sb_str(&list), n_groups ? "; " : "",
               n_groups ? cdd_sb_str(&lab) : "",
               n_groups ? " comes first" : "");
    } else {
        const struct cdd_doctor_toolkit *t0 = &c->res->toolkits[groups[0]];
        cuda_label(t0, &first);
        cdd_sb_catf(&d,
                      "%d CUDA versions on %s: %s comes first (#%d), so "
                      "programs get its %s",
                      n_groups, l->var, cdd_sb_str(&first),
                      is_lib ? t0->lib_path_pos : t0->path_pos, what);
        for (int g = 1; g < n_groups; g++) {
            const struct cdd_doctor_toolkit *tg =
                &c->res->toolkits[groups[g]];
            cuda_label(tg, &lab);
            cdd_sb_catf(&d, "%s %s (#%d)", g == 1 ? ", not those of" : ",",
                          cdd_sb_str(&lab),
                          is_lib ? tg->lib_path_pos : tg->path_pos);
        }
        cdd_sb_catf(&d, ". ");
        /* With a CUDA target, the fix is to put the target's first. */
        const struct cdd_target *t = c->t;
        int want = -1;
        for (int g = 0; t && t->kind == CDD_TARGET_CUDA && g < n_groups; g++) {
            const struct cdd_doctor_toolkit *tg =
                &c->res->toolkits[groups[g]];
            if (t->version.known && tg->version.known &&
                tg->version.major == t->version.major &&
                tg->version.minor == t->version.minor)
                want = g;
        }
        if (want == 0) {
            cdd_sb_catf(&d,
                          "The target's CUDA comes first, as it should; "
                          "remove the other CUDA's entries from %s to avoid "
                          "surprises. ",
                          l->var);
        } else {
            for (int g = want > 0 ? want : 1;
                 g < (want > 0 ? want + 1 : n_groups); g++) {
                struct cdd_sb dirs, label;
                CDD_DR_TEXT_INIT(&dirs);
                CDD_DR_TEXT_INIT(&label);
                cuda_label(&c->res->toolkits[groups[g]], &lab);
                entries_of(c, l, groups[g], &dirs);
                cdd_sb_catf(&label, "to use %s%s", cdd_sb_str(&lab),
                            want > 0 ? " (the target's)" : " instead");
                cdd_sb_catf(&d, "To use %s%s: ", cdd_sb_str(&lab),
                              want > 0 ? " (the target's)" : " instead");
                fix_prepend(c, &d, l->var, cdd_sb_str(&dirs),
                            cdd_sb_str(&label));
                cdd_sb_catf(&d, ". ");
                cdd_dr_text_ok(c, &dirs);
                cdd_dr_text_ok(c, &label);
                cdd_sb_free(&dirs);
                cdd_sb_free(&label);
            }
            cdd_sb_catf(&d, "Or keep only one CUDA on %s. ", l->var);
        }
        cdd_sb_catf(&d, "Entries holding CUDA or cuDNN, in order: %s",
                      cdd_sb_str(&list));
        DCHECK(c, name, CDD_CHECK_WARN, "%s", cdd_sb_str(&d));
    }
    cdd_dr_text_ok(c, &list);
    cdd_dr_text_ok(c, &d);
    cdd_dr_text_ok(c, &lab);
    cdd_dr_text_ok(c, &first);
    cdd_sb_free(&list);
    cdd_sb_free(&d);
    cdd_sb_free(&lab);
    cdd_sb_free(&first);
}

/* Linux: nvcc from one CUDA and libraries from another is a classic
 * mismatch (code built with one, run against the other's runtime). */
static void check_path_vs_libpath(struct cdd_dscan *c)
{
    int a = first_toolkit(&c->path), b = first_toolkit(&c->libpath);
    if (c->windows || a < 0 || b < 0 || same_cuda(c, a, b))
        return;
    struct cdd_sb d, sa, sb;
    CDD_DR_TEXT_INIT(&d);
    CDD_DR_TEXT_INIT(&sa);
    CDD_DR_TEXT_INIT(&sb);
    const char *la = cuda_label(&c->res->toolkits[a], &sa);
    const char *lb = cuda_label(&c->res->toolkits[b], &sb);
    /* The libraries of PATH's first CUDA, so both agree. */
    const struct cdd_doctor_toolkit *k = &c->res->toolkits[a];
    char *lib = join(k->real, "lib64");
    cdd_sb_catf(&d,
                  "the first CUDA on PATH is %s but the first on "
                  "LD_LIBRARY_PATH is %s: programs are built with one and run "
                  "with the other's libraries. To use %s for both: ",
                  la, lb, la);
    fix_prepend(c, &d, "LD_LIBRARY_PATH", lib ? lib : k->real, NULL);
    DCHECK(c, "path PATH vs LD_LIBRARY_PATH", CDD_CHECK_WARN, "%s",
           cdd_sb_str(&d));
    cdd_dr_text_ok(c, &d);
    cdd_dr_text_ok(c, &sa);
    cdd_dr_text_ok(c, &sb);
    free(lib);
    cdd_sb_free(&d);
    cdd_sb_free(&sa);
    cdd_sb_free(&sb);
}

/* ---- checks: toolkits and driver ----------------------------------------- */

/* The variables naming something wrong, in one detail. */
static void describe_stale(const struct cdd_dscan *c, struct cdd_sb *b)
{
    const char *unset = c->windows
                            ? "delete it (System Properties > Environment "
                              "Variables)"
                            : "unset it";
    for (size_t i = 0; i < c->n_stale; i++) {
        const struct cdd_dr_stale *s = &c->stale[i];
        const char *sep = cdd_sb_len(b) ? "; " : "";
        if (s->kind == CDD_DR_STALE_NO_FOLDER) {
            cdd_sb_catf(b,
                          "%s%s=%s names no folder: the CUDA it named was "
                          "uninstalled or moved; %s, or point it at an "
                          "installed toolkit",
                          sep, s->name, s->value, unset);
        } else if (s->kind == CDD_DR_STALE_HOME) {
            cdd_sb_catf(b,
                          "%s%s=%s names no folder: build systems that "
                          "read it (PyTorch extensions, CMake) will fail; "
                          "point it at an installed toolkit or unset it",
                          sep, s->name, s->value);
        } else {
            const struct cdd_cuda_version *v =
                &c->res->toolkits[s->toolkit].version;
            int maj = s->want_major, min = s->want_minor;
            cdd_sb_catf(b,
                          "%s%s=%s is a CUDA %d.%d tree, not %d.%d: "
                          "`--cuda v%d.%d` and build tools that read it get "
                          "the wrong toolkit; point it at the CUDA %d.%d tree "
                          "or %s",
                          sep, s->name, s->value, v->major, v->minor, maj, min,
                          maj, min, maj, min, unset);
        }
    }
}

static void check_toolkits(struct cdd_dscan *c)
{
    const struct cdd_doctor_result *res = c->res;
    struct cdd_sb stale;
    CDD_DR_TEXT_INIT(&stale);
    describe_stale(c, &stale);
    if (stale.len)
        DCHECK(c, "env CUDA_PATH", CDD_CHECK_WARN, "%s", cdd_sb_str(&stale));
    cdd_dr_text_ok(c, &stale);
    cdd_sb_free(&stale);
    if (!res->n_toolkits) {
        DCHECK(c, "cuda", CDD_CHECK_SKIP,
               "no CUDA toolkit found (CUDA_PATH, CUDA_PATH_V*, CUDA_HOME "
               "unset, none in the default folder%s, none on PATH): only "
               "needed to build CUDA code or to install cuDNN into a "
               "toolkit; name one with --cuda-root",
               c->windows ? " %ProgramFiles%\\NVIDIA GPU Computing "
                            "Toolkit\\CUDA"
                          : "s /usr/local/cuda*");
        return;
    }
    for (size_t i = 0; i < res->n_toolkits; i++) {
        const struct cdd_doctor_toolkit *k = &res->toolkits[i];
        char where[200]; /* fixed: constant words and two numbers */
        char *name = cdd_aprintf(CDD_TEXT_MAX, "check name", "cuda %s",
                                 k->root);
        if (!name) {
            failed(c);
            return;
        }
        if (k->path_pos)
            snprintf(where, sizeof where, "on PATH (#%d)", k->path_pos);
        else
            snprintf(where, sizeof where, "not on PATH");
        if (!c->windows) {
            size_t u = strlen(where);
            if (k->lib_path_pos)
                snprintf(where + u, sizeof where - u,
                         ", on LD_LIBRARY_PATH (#%d)", k->lib_path_pos);
            else
                snprintf(where + u, sizeof where - u,
                         ", not on LD_LIBRARY_PATH");
        }
        int alias = !cdd_dr_same_path(c, k->root, k->real);
        if (k->version.known) {
            char v[48]; /* fixed: a version of 3 ints */
            if (k->version.patch >= 0)
                snprintf(v, sizeof v, "%d.%d.%d", k->version.major,
                         k->version.minor, k->version.patch);
            else
                snprintf(v, sizeof v, "%d.%d", k->version.major,
                         k->version.minor);
            DCHECK(c, name, CDD_CHECK_PASS,
                   "CUDA %s (from %s)%s%s; found by %s; %s", v,
                   k->version.source, alias ? ", really " : "",
                   alias ? k->real : "", k->found_by, where);
        } else {
            DCHECK(c, name, CDD_CHECK_WARN,
                   "cannot tell which CUDA this is: no version.json, "
                   "version.txt or include/cuda.h (a partial or damaged "
                   "install? reinstall the toolkit)%s%s; found by %s; %s",
                   alias ? "; really " : "", alias ? k->real : "",
                   k->found_by, where);
        }
        free(name);
    }
}

static void check_driver(struct cdd_dscan *c)
{
    const struct cdd_doctor_result *res = c->res;
    if (c->driver_rc == CDD_E_NOTFOUND) {
        const char *why = c->driver_msg ? c->driver_msg : "";
        const char *path = c->driver_path ? c->driver_path : "";
        /* The loader's message starts with what we say anyway, or names
         * the library itself. */
        if (!strncmp(why, "no NVIDIA driver: ", 18))
            why += 18;
        int named = path[0] && strstr(why, path);
        DCHECK(c, "driver", CDD_CHECK_SKIP,
               "no NVIDIA driver found (%s%s%s): GPU programs cannot run on "
               "this host; install the NVIDIA driver if it has a GPU (build "
               "machines without one need none)",
               named ? "" : path[0] ? path : "libcuda.so.1 / nvcuda.dll",
               named || !*why ? "" : ": ", why);
        return;
    }
    if (c->driver_rc) {
        DCHECK(c, "driver", CDD_CHECK_WARN,
               "the NVIDIA driver library is there but unusable: %s%s%s; "
               "reinstall the NVIDIA driver",
               c->driver_path ? c->driver_path : "",
               c->driver_path && c->driver_path[0] ? ": " : "",
               c->driver_msg ? c->driver_msg : "");
        return;
    }
    char drv[16]; /* fixed: a CUDA version */
    cdd_cuda_version_str(res->driver_cuda_version, drv, sizeof drv);
    const char *rel = res->driver_release[0] ? res->driver_release : "";
    /* Which CUDAs can this driver run? The target's decides pass/fail;
     * other toolkits only warn. */
    struct cdd_sb too_old;
    CDD_DR_TEXT_INIT(&too_old);
    enum cdd_check_status st = CDD_CHECK_PASS;
    char target_note[300] = ""; /* fixed: numbers and a driver version */
    const struct cdd_target *t = c->t;
    if (t && t->kind == CDD_TARGET_CUDA && t->version.known) {
        int tm = t->version.major, tn = t->version.minor;
        const char *min = cdd_cuda_min_driver(tm, c->windows);
        enum cdd_drv_fit fit = cdd_gpu_driver_fit(res->driver_cuda_version,
                                                  rel, tm, tn);
        if (fit == CDD_DRV_TOO_OLD) {
            st = CDD_CHECK_FAIL;
            snprintf(target_note, sizeof target_note,
                     "; it cannot run the target's CUDA %d.%d: update the "
                     "NVIDIA driver%s%s", tm, tn, min ? " to at least " : "",
                     min ? min : "");
        } else {
            snprintf(target_note, sizeof target_note,
                     "; the target's CUDA %d.%d runs%s", tm, tn,
                     fit == CDD_DRV_MINOR_COMPAT
                         ? " through minor-version compatibility"
                         : "");
        }
    }
    for (size_t i = 0; i < res->n_toolkits; i++) {
        const struct cdd_doctor_toolkit *k = &res->toolkits[i];
        if (!k->version.known ||
            cdd_gpu_driver_fit(res->driver_cuda_version, rel, k->version.major,
                               k->version.minor) != CDD_DRV_TOO_OLD)
            continue;
        const char *min = cdd_cuda_min_driver(k->version.major, c->windows);
        cdd_sb_catf(&too_old, "%sCUDA %d.%d at %s (needs driver %s%s)",
                    too_old.len ? ", " : "", k->version.major,
                    k->version.minor, k->root, min ? ">= " : "newer",
                    min ? min : "");
    }
    if (too_old.len && st == CDD_CHECK_PASS)
        st = CDD_CHECK_WARN;
    DCHECK(c, "driver", st,
           "NVIDIA driver %s (%s) supports CUDA up to %s%s%s%s%s",
           *rel ? rel : "of unknown release",
           res->driver_path ? res->driver_path : "?", drv,
           target_note, too_old.len ? "; too old for " : "",
           cdd_sb_str(&too_old),
           too_old.len ? ": update the driver to use those" : "");
    cdd_dr_text_ok(c, &too_old);
    cdd_sb_free(&too_old);
}

/* ---- checks: cuDNN on the search path ------------------------------------ */

/* ---- checks: cuDNN on the search path ------------------------------------ */

static void describe_copies(const struct cdd_dscan *c, const int *idx, size_t n,
                            struct cdd_sb *b)
{
    for (size_t i = 0; i < n; i++) {
        const struct cdd_doctor_copy *k = &c->res->copies[idx[i]];
        if (i == 8) {
            cdd_sb_catf(b, "; and %zu more", n - i);
            break;
        }
        cdd_sb_catf(b, "%s%zu) %s (%s, %s)%s", i ? "; " : "", i + 1, k->path,
                      cdd_dr_ver_text(k->version), k->origin,
                      i == 0 ? " <- the loader picks this one" : "");
    }
}

/* Sub-libraries against the main library's winner: the main library loads
 * them by name on first use, so each must be the same version, best from
 * the same folder; cuDNN 8 aborts when one is missing. */
static void check_subs(struct cdd_dscan *c, int m)
{
    const struct cdd_dr_names *nm = &c->names[m];
    const int wi = c->winner[m];
    char *wdir = cdd_dr_dir_of(c->res->copies[wi].real), name[128];
    char wver[32]; /* fixed: a version */
    snprintf(wver, sizeof wver, "%s", c->res->copies[wi].version);
    struct cdd_sb bad, elsewhere;
    CDD_DR_TEXT_INIT(&bad);
    CDD_DR_TEXT_INIT(&elsewhere);
    int n_subs = 0, n_bad = 0;
    snprintf(name, sizeof name, "cudnn %s sub-libraries", nm->main);
    for (int s = 0; s < CDD_CUDNN_MAX_SUBS && nm->subs[s]; s++) {
        int first = c->search[m].sub_first[s];
        const struct cdd_cudnn_major *fm = cdd_cudnn_major_facts(nm->major);
        if (first < 0 && fm && fm->subs[s].optional)
            continue; /* only newer releases of the major ship it */
        n_subs++;
        if (first < 0) {
            cdd_sb_catf(&bad, "%s%s missing", bad.len ? "; " : "", nm->subs[s]);
            n_bad++;
            continue;
        }
        const struct cdd_doctor_copy *k = &c->res->copies[first];
        char *kdir = cdd_dr_dir_of(k->real);
        int same_dir = kdir && wdir && cdd_dr_same_path(c, kdir, wdir);
        if (ver_same(k->version, wver) == 0) {
            cdd_sb_catf(&bad, "%s%s is %s (%s)", bad.len ? "; " : "",
                          nm->subs[s], k->version, k->path);
            n_bad++;
        } else if (!same_dir) {
            cdd_sb_catf(&elsewhere, "%s%s from %s", elsewhere.len ? "; " : "",
                          nm->subs[s], k->path);
        }
        free(kdir);
    }
    const struct cdd_doctor_copy *w = &c->res->copies[wi];
    if (n_bad)
        DCHECK(c, name, CDD_CHECK_FAIL,
               "the winning %s (%s, %s) loads its sub-libraries by name, and "
               "%d of %d would not match: %s. cuDNN then stops with a "
               "version mismatch or a missing library at first use: install "
               "the whole archive of one version into one folder (or remove "
               "the stray copies)",
               nm->main, cdd_dr_ver_text(w->version), w->path, n_bad, n_subs,
               cdd_sb_str(&bad));
    else if (elsewhere.len)
        DCHECK(c, name, CDD_CHECK_WARN,
               "all %d have the winner's version, but some come from another "
               "folder than %s: %s; keep one cuDNN in one folder",
               n_subs, wdir ? wdir : w->path, cdd_sb_str(&elsewhere));
    else
        DCHECK(c, name, CDD_CHECK_PASS,
               "all %d found beside the winner in %s, version %s", n_subs,
               wdir ? wdir : "?", cdd_dr_ver_text(w->version));
    cdd_dr_text_ok(c, &bad);
    cdd_dr_text_ok(c, &elsewhere);
    cdd_sb_free(&bad);
    cdd_sb_free(&elsewhere);
    free(wdir);
}

static void check_search(struct cdd_dscan *c)
{
    int any = 0;
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        const struct cdd_dr_names *nm = &c->names[m];
        const int *idx = c->search[m].idx;
        char name[128]; /* fixed: "cudnn" and a name of the facts table */
        size_t n = c->search[m].n;
        if (!n)
            continue;
        any = 1;
        struct cdd_sb d;
        CDD_DR_TEXT_INIT(&d);
        int differ = 0;
        for (size_t i = 1; i < n; i++)
            if (ver_same(c->res->copies[idx[i]].version,
                         c->res->copies[idx[0]].version) != 1)
                differ = 1;
        snprintf(name, sizeof name, "cudnn %s", nm->main);
        if (n == 1) {
            describe_copies(c, idx, n, &d);
            DCHECK(c, name, CDD_CHECK_PASS, "one copy: %s", cdd_sb_str(&d));
        } else {
            cdd_sb_catf(&d, "%zu copies in the loader's order: ", n);
            describe_copies(c, idx, n, &d);
            if (differ) {
                const struct cdd_doctor_copy *k = &c->res->copies[idx[1]];
                char *dir = cdd_dr_dir_of(k->path);
                cdd_sb_catf(&d, ". Programs get %s; to get %s (%s) instead: ",
                              cdd_dr_ver_text(c->res->copies[idx[0]].version),
                              k->path, cdd_dr_ver_text(k->version));
                fix_prepend_one(c, &d, c->lib->var, dir ? dir : k->path);
                cdd_sb_catf(&d, "; or remove the copies you do not want");
                free(dir);
            } else {
                cdd_sb_catf(&d,
                              ". All the same version: harmless, but "
                              "removing the extra copies avoids surprises at "
                              "the next upgrade");
            }
            /* Another copy is there and one wins over it: what programs
             * load depends on the order, so it is never folded away into
             * "checks passed" (issue 23), whatever the versions. */
            DCHECK(c, name, CDD_CHECK_WARN, "%s", cdd_sb_str(&d));
        }
        cdd_dr_text_ok(c, &d);
        cdd_sb_free(&d);
        check_subs(c, m);
    }
    if (!any)
        DCHECK(c, "cudnn", CDD_CHECK_WARN,
               "no cuDNN (%s, %s) on the loader's search path (%s): a "
               "program that loads cuDNN by name will not find one. Install "
               "it (`cudnn-deploy install --cuda vX.Y`) and put its folder "
               "on %s; Python packages that bring their own are listed "
               "below", c->names[0].main, c->names[1].main,
               c->windows ? "application folder, system folders, PATH"
                          : "LD_LIBRARY_PATH, ld.so cache, system folders",
               c->lib->var);
}

/* ---- checks: conda and Python package copies ----------------------------- */

/* The copy a conda or Python copy competes with: the target's of that
 * major, else the loader's winner. -1 when none. */
static int reference_copy(const struct cdd_dscan *c, int m)
{
    if (c->t_copy[m] >= 0 && !c->t_windows == !c->windows)
        return c->t_copy[m];
    return c->winner[m];
}

static void report_shadow(struct cdd_dscan *c, const char *name, int k, int m,
                          const char *who, const char *why, const char *fix)
{
    const struct cdd_doctor_copy *cp = &c->res->copies[k];
    int ref = reference_copy(c, m);
    if (ref < 0) {
        DCHECK(c, name, CDD_CHECK_PASS,
               "%s has cuDNN %s at %s; %s. Nothing on the search path%s "
               "competes with it", who, ver_cudnn(cp->version), cp->path, why,
               c->t ? " or in the target" : "");
        return;
    }
    const struct cdd_doctor_copy *r = &c->res->copies[ref];
    const char *rname = ref == c->t_copy[m] ? "the target's" : "the loader's "
                                                               "winner";
    if (cdd_dr_same_path(c, cp->real, r->real)) {
        DCHECK(c, name, CDD_CHECK_PASS, "%s has cuDNN %s at %s: the same "
               "file as %s copy", who, ver_cudnn(cp->version), cp->path,
               rname);
        return;
    }
    int same = ver_same(cp->version, r->version) == 1;
    /* It wins over another copy: a warning even at the same version, so
     * that the short output shows it. */
    DCHECK(
        c, name, CDD_CHECK_WARN,
        "%s has its own cuDNN %s at %s; %s, so it shadows %s copy %s "
        "(%s)%s%s",
        who, ver_cudnn(cp->version), cp->path, why, rname, r->path,
        cdd_dr_ver_text(r->version),
        same ? ": the same version, so harmless" : ". Fix: ", same ? "" : fix);
}

static void check_conda(struct cdd_dscan *c)
{
    const char *cp = c->conda_prefix;
    for (size_t i = 0; i < c->n_conda; i++) {
        const struct cdd_dr_conda *f = &c->conda[i];
        int m = f->m, k = f->k, pos = f->pos;
        char name[128]; /* fixed: "conda" and a name of the facts table */
        snprintf(name, sizeof name, "conda %s", c->names[m].main);
        char *who = cdd_aprintf(CDD_TEXT_MAX, "finding", "the conda "
                                "environment %s (CONDA_PREFIX)", cp);
        char *fix = cdd_aprintf(CDD_TEXT_MAX, "fix",
                                "remove the environment's cuDNN (`conda "
                                "remove cudnn`), or install the cuDNN you "
                                "want into it: `cudnn-deploy install "
                                "--prefix %s`", cp);
        if (!who || !fix) {
            free(who);
            free(fix);
            nomem(c);
            return;
        }
        if (f->is_target) {
            DCHECK(c, name, CDD_CHECK_PASS, "%s is the target; its "
                   "cuDNN %s is at %s", who,
                   ver_cudnn(c->res->copies[k].version), f->path);
        } else {
            report_shadow(
                c, name, k, m, who,
                c->windows
                    ? "activating the environment puts its "
                      "Library\\bin first on PATH"
                    : pos ? "its lib is on LD_LIBRARY_PATH, and conda "
                            "packages load from it first (their "
                            "RPATH)"
                          : "conda packages load libraries from "
                            "their environment's lib first (their "
                            "RPATH)",
                fix);
        }
        free(who);
        free(fix);
    }
}

static void check_python(struct cdd_dscan *c)
{
    for (size_t i = 0; i < c->n_py; i++) {
        const struct cdd_dr_py *f = &c->py[i];
        char *name = NULL, *who = NULL;
        const char *why, *fix;
        name = cdd_aprintf(CDD_TEXT_MAX, "check name", "python %s", f->dir);
        if (!strcmp(cdd_dr_py_pkgs[f->pkg].label, "torch")) {
            who = cdd_aprintf(CDD_TEXT_MAX, "finding", "PyTorch in %s (%s)",
                              f->site, f->origin);
            why = "`import torch` loads its bundled copy by path, "
                  "before anything on the search path";
            fix = "this copy belongs to the torch wheel (replaced at "
                  "its next upgrade); to run another cuDNN, install "
                  "the torch build made for it rather than copying "
                  "files into torch/lib";
        } else {
            who = cdd_aprintf(CDD_TEXT_MAX, "finding", "pip's nvidia-cudnn "
                              "package in %s (%s)", f->site, f->origin);
            why = "PyTorch and TensorFlow wheels that depend on it "
                  "load it by path";
            fix = "`pip install` the nvidia-cudnn version you want "
                  "in that environment, or uninstall it if nothing "
                  "there needs it";
        }
        if (name && who)
            report_shadow(c, name, f->k, f->m, who, why, fix);
        else
            nomem(c);
        free(name);
        free(who);
    }
}

/* ---- checks: variables the loader ignores -------------------------------- */

static void check_cudnn_path(struct cdd_dscan *c)
{
    const char *cp = c->cudnn_path, *libdir = c->cudnn_path_libdir;
    struct cdd_sb d;
    CDD_DR_TEXT_INIT(&d);
    int pos = c->cudnn_path_pos;
    if (!cp || !c->cudnn_path_abs)
        return;
    if (!c->cudnn_path_is_dir) {
        DCHECK(c, "env CUDNN_PATH", CDD_CHECK_WARN,
               "CUDNN_PATH=%s names no folder: build systems that read it "
               "(CMake's FindCUDNN, PyTorch's setup.py) will fail; point it "
               "at a cuDNN folder or unset it", cp);
        return;
    }
    if (c->windows)
        cdd_sb_catf(
            &d,
            "CUDNN_PATH=%s is set, but the Windows DLL loader "
            "ignores it: programs find cuDNN's DLLs only in their own "
            "folder, the system folders and PATH. ",
            cp);
    else
        cdd_sb_catf(
            &d,
            "CUDNN_PATH=%s is read by build systems (CMake's "
            "FindCUDNN, PyTorch's setup.py) but ignored by the dynamic "
            "loader: at run time cuDNN is found through "
            "LD_LIBRARY_PATH, /etc/ld.so.conf.d or a program's RPATH. ",
            cp);
    if (pos)
        cdd_sb_catf(&d, "Its %s is on %s (#%d), which is what counts.",
                      libdir, c->lib->var, pos);
    else if (libdir) {
        cdd_sb_catf(&d, "Its %s is not on %s; fix: ", libdir, c->lib->var);
        fix_libdir(c, &d, libdir);
        cdd_sb_catf(&d, ", or install cuDNN into the CUDA tree: "
                          "`cudnn-deploy install --cuda vX.Y`");
    } else {
        cdd_sb_catf(&d, "It holds no %s or %s under bin, lib64 or lib.",
                      c->names[0].main, c->names[1].main);
    }
    DCHECK(c, "env CUDNN_PATH", pos ? CDD_CHECK_PASS : CDD_CHECK_WARN, "%s",
           cdd_sb_str(&d));
    cdd_dr_text_ok(c, &d);
    cdd_sb_free(&d);
}

/* ---- checks: Windows dependencies ---------------------------------------- */

static void check_zlibwapi_for(struct cdd_dscan *c, int k, int major,
                               const char *label, int host_search,
                               const struct cdd_dr_zlib *z)
{
    const struct cdd_doctor_copy *cp = &c->res->copies[k];
    int need = cdd_cudnn_needs_zlibwapi(cp->version, major);
    const char *found = z->beside ? z->beside : z->found;
    if (!need || !z->looked)
        return;
    char *name = cdd_aprintf(CDD_TEXT_MAX, "check name", "windows.zlibwapi %s",
                             label);
    if (!name) {
        failed(c);
        return;
    }
    if (found)
        DCHECK(c, name, CDD_CHECK_PASS, "cuDNN %s at %s needs zlibwapi.dll: "
               "found at %s", ver_cudnn(cp->version), cp->path, found);
    else
        DCHECK(c, name, need > 0 ? CDD_CHECK_FAIL : CDD_CHECK_WARN,
               "cuDNN %s at %s %s zlibwapi.dll, and it is %s: loading "
               "cuDNN's libraries fails with 'Could not locate ... error "
               "126'. Fix: %s", ver_cudnn(cp->version), cp->path,
               need > 0 ? "needs"
                        : "may need (cuDNN " CDD_CUDNN_ZLIBWAPI_RANGE " do)",
               host_search ? "not beside it, in the system folders or on "
                             "PATH"
                           : "not beside it (a Windows tree: PATH cannot be "
                             "searched from this host)",
               cdd_dependency_hint("zlibwapi.dll"));
    free(name);
}

static void check_windows(struct cdd_dscan *c)
{
    if (c->windows) {
        const char *sys = c->sysdir;
        struct cdd_sb miss, all;
        CDD_DR_TEXT_INIT(&miss);
        CDD_DR_TEXT_INIT(&all);
        for (size_t i = 0; sys && i < CDD_DR_N_VCRT; i++) {
            if (c->vc_missing[i])
                cdd_sb_catf(&miss, "%s%s", miss.len ? ", " : "",
                              cdd_msvc_runtime[i]);
            cdd_sb_catf(&all, "%s%s", all.len ? ", " : "",
                          cdd_msvc_runtime[i]);
        }
        if (sys && miss.len)
            DCHECK(c, "windows.vcruntime", CDD_CHECK_FAIL,
                   "%s missing from %s: cuDNN's DLLs need the Visual C++ "
                   "runtime and fail to load with error 126 without it. "
                   "Fix: install %s "
                   "(https://aka.ms/vs/17/release/vc_redist.x64.exe)",
                   cdd_sb_str(&miss), sys,
                   cdd_dependency_hint("msvcp140.dll"));
        else if (sys)
            DCHECK(c, "windows.vcruntime", CDD_CHECK_PASS,
                   "the Visual C++ runtime (%s) is in %s", cdd_sb_str(&all),
                   sys);
        cdd_dr_text_ok(c, &miss);
        cdd_dr_text_ok(c, &all);
        cdd_sb_free(&miss);
        cdd_sb_free(&all);
        for (int m = 0; m < CDD_DR_MAJORS; m++)
            if (c->winner[m] >= 0)
                check_zlibwapi_for(c, c->winner[m], c->names[m].major,
                                   "search path", 1,
                                   &c->zlib_winner[m]);
    }
    for (int m = 0; m < CDD_DR_MAJORS; m++)
        if (c->t_windows && c->t_copy[m] >= 0 && c->t_copy[m] != c->winner[m])
            check_zlibwapi_for(c, c->t_copy[m], c->t_names[m].major,
                               "target", c->windows,
                               &c->zlib_target[m]);
}

/* ---- checks: the target -------------------------------------------------- */

static void check_target(struct cdd_dscan *c)
{
    const struct cdd_target *t = c->t;
    struct cdd_sb d;
    CDD_DR_TEXT_INIT(&d);
    enum cdd_check_status st = CDD_CHECK_PASS;
    if (t->kind == CDD_TARGET_CUDA && t->version.known) {
        cdd_sb_catf(&d, "CUDA %d.%d", t->version.major, t->version.minor);
        if (t->version.patch >= 0)
            cdd_sb_catf(&d, ".%d", t->version.patch);
        cdd_sb_catf(&d, " tree (from %s) at %s, from %s", t->version.source,
                      t->root, t->how);
    } else if (t->kind == CDD_TARGET_CUDA) {
        st = CDD_CHECK_WARN;
        cdd_sb_catf(&d,
                      "CUDA tree at %s (from %s) of unknown version: no "
                      "version.json, version.txt or include/cuda.h; reinstall "
                      "the toolkit or check the folder",
                      t->root, t->how);
    } else {
        cdd_sb_catf(&d, "prefix %s (from %s)", t->root, t->how);
    }
    if (c->rc)
        cdd_sb_catf(&d, "; %s %s (%s) installed by cudnn-deploy at %s",
                      c->rc->product ? c->rc->product : "cuDNN",
                      c->rc->version ? c->rc->version : "?",
                      c->rc->platform ? c->rc->platform : "?",
                      c->rc->installed_at ? c->rc->installed_at : "?");
    else if (c->rc_bad && c->rc_state) {
        /* Every command that reads or changes the tree refuses it so. */
        st = CDD_CHECK_FAIL;
        cdd_sb_catf(&d,
                      "; its state folder (.cudnn-deploy) cannot be trusted: "
                      "%s; no command reads or changes this tree until it "
                      "is put right (see `cudnn-deploy status`)",
                      c->rc_why ? c->rc_why : "(the reason: out of memory)");
    } else if (c->rc_bad) {
        st = CDD_CHECK_WARN;
        cdd_sb_catf(&d,
                      "; its receipt (.cudnn-deploy/receipt.json) cannot be "
                      "read: %s; run `cudnn-deploy status` on it",
                      c->rc_why ? c->rc_why : "(the reason: out of memory)");
    } else {
        int any = 0;
        for (int m = 0; m < CDD_DR_MAJORS; m++)
            if (c->t_copy[m] >= 0) {
                const struct cdd_doctor_copy *k = &c->res->copies[c->t_copy[m]];
                cdd_sb_catf(&d, "%s%s %s", any ? ", " : "; holds ", k->name,
                              cdd_dr_ver_text(k->version));
                any = 1;
            }
        cdd_sb_catf(&d, "%s",
                      any ? " not installed by cudnn-deploy"
                          : "; no cuDNN in it yet");
    }
    DCHECK(c, "target", st, "%s", cdd_sb_str(&d));
    cdd_dr_text_ok(c, &d);
    cdd_sb_free(&d);
}

/* Is the target's library folder where the loader looks? */
static void check_target_search(struct cdd_dscan *c)
{
    struct cdd_sb d;
    CDD_DR_TEXT_INIT(&d);
    if (!c->t_windows != !c->windows) {
        DCHECK(c, "target.search", CDD_CHECK_SKIP,
               "a %s tree: its search path is that of the machine it will "
               "run on", c->t_windows ? "Windows" : "Linux");
        return;
    }
    int pos = c->t_libdir_pos;
    int cached = 0;
    for (int m = 0; !pos && m < CDD_DR_MAJORS; m++)
        if (c->t_copy[m] >= 0 && c->res->copies[c->t_copy[m]].where ==
                                     CDD_COPY_SEARCH)
            cached = 1;
    if (pos)
        DCHECK(c, "target.search", CDD_CHECK_PASS, "%s is on %s (#%d)",
               c->t_libdir, c->lib->var, pos);
    else if (cached)
        DCHECK(c, "target.search", CDD_CHECK_PASS,
               "%s is searched by the loader (%s)", c->t_libdir,
               c->windows ? "a system or application folder"
                          : "the ld.so cache: /etc/ld.so.conf.d");
    else {
        cdd_sb_catf(
            &d,
            "%s is not on the loader's search path: programs that "
            "load cuDNN%s by name (PyTorch, TensorFlow) will not find "
            "the target's libraries. Fix: ",
            c->t_libdir,
            c->t->kind == CDD_TARGET_CUDA ? " or CUDA libraries" : "");
        fix_libdir(c, &d, c->t_libdir);
        DCHECK(c, "target.search", CDD_CHECK_WARN, "%s", cdd_sb_str(&d));
    }
    cdd_dr_text_ok(c, &d);
    cdd_sb_free(&d);
}

/* Does the loader pick the target's cuDNN, or another copy before it? */
static void check_target_shadow(struct cdd_dscan *c)
{
    if (!c->t_windows != !c->windows)
        return;
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        if (c->t_copy[m] < 0)
            continue;
        const struct cdd_doctor_copy *ours = &c->res->copies[c->t_copy[m]];
        const char *by = c->rc ? " (installed by cudnn-deploy)" : "";
        char name[128]; /* fixed: a check word and a name of the facts table */
        struct cdd_sb d;
        CDD_DR_TEXT_INIT(&d);
        snprintf(name, sizeof name, "target.shadow %s", ours->name);
        int w = c->winner[m];
        if (w < 0) {
            DCHECK(c, name, CDD_CHECK_WARN,
                   "no copy of %s is on the search path, not even the "
                   "target's%s: see target.search", ours->name, by);
        } else if (w == c->t_copy[m]) {
            DCHECK(c, name, CDD_CHECK_PASS,
                   "the loader picks the target's %s (%s)%s", ours->path,
                   cdd_dr_ver_text(ours->version), by);
        } else {
            const struct cdd_doctor_copy *win = &c->res->copies[w];
            const char *off = "";
            if (!ours->order)
                off = c->t_libdir_pos
                          ? ", which the loader passes over although its "
                            "folder is searched (not a loadable library for "
                            "this machine?)"
                          : ", which is not on the search path";
            cdd_sb_catf(&d,
                          "the loader picks %s (%s, %s), not the target's "
                          "%s (%s)%s%s: programs get that copy. Fix: ",
                          win->path, cdd_dr_ver_text(win->version), win->origin,
                          ours->path, cdd_dr_ver_text(ours->version), by, off);
            fix_prepend_one(c, &d, c->lib->var, c->t_libdir);
            cdd_sb_catf(&d, ", or remove %s", win->path);
            DCHECK(c, name, CDD_CHECK_WARN, "%s", cdd_sb_str(&d));
        }
        cdd_dr_text_ok(c, &d);
        cdd_sb_free(&d);
    }
}

/* ---- the whole ----------------------------------------------------------- */

void cdd_doctor_check(struct cdd_dscan *c)
{
    /* The target first: it is what the user asked about. */
    if (c->t)
        check_target(c);
    check_toolkits(c);
    check_list(c, &c->path, 0);
    if (!c->windows) {
        check_list(c, &c->libpath, 1);
        check_path_vs_libpath(c);
    }
    check_driver(c);
    check_search(c);
    check_conda(c);
    check_python(c);
    check_cudnn_path(c);
    check_windows(c);
    if (c->t) {
        check_target_search(c);
        check_target_shadow(c);
    }
}
