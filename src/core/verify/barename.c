/* Bare-name loads (barename.h): where a dlopen(soname) from cuDNN's main
 * library lands, and whether that copy is of the main library's version. */
#include "cdd/barename.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/binfile.h"
#include "cdd/cudnn_facts.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/loader.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"
#include "cdd/strbuf.h"

static char *dir_of(const char *path)
{
    const char *s = strrchr(path, '/');
    size_t n = s ? (size_t)(s - path) : 0;
    char *d = malloc(n + 2);
    if (!d)
        return NULL;
    if (!s) {
        strcpy(d, ".");
        return d;
    }
    memcpy(d, path, n ? n : 1);
    d[n ? n : 1] = '\0';
    return d;
}

/* entry with $ORIGIN / ${ORIGIN} replaced by origin; NULL: no memory. */
static char *expand_origin(const char *entry, size_t len, const char *origin)
{
    size_t cap = len + 1, ol = strlen(origin);
    for (size_t i = 0; i < len; i++)
        if (entry[i] == '$')
            cap += ol;
    char *out = malloc(cap), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        if (len - i >= 7 && strncmp(entry + i, "$ORIGIN", 7) == 0) {
            memcpy(o, origin, ol), o += ol, i += 7;
        } else if (len - i >= 9 && strncmp(entry + i, "${ORIGIN}", 9) == 0) {
            memcpy(o, origin, ol), o += ol, i += 9;
        } else {
            *o++ = entry[i++];
        }
    }
    *o = '\0';
    return out;
}

/* Look for name in each entry of list (':'-separated). 1 found (h->path
 * set), 0 not, -1 no memory. Entries with other tokens ($LIB, $PLATFORM)
 * are not guessed. */
static int search_list(const char *list, const char *origin, const char *name,
                       const char *how, struct cdd_bare_hit *h)
{
    for (const char *p = list; p;) {
        size_t len = strcspn(p, ":;");
        char *dir = expand_origin(p, len, origin);
        if (!dir)
            return -1;
        if (!strchr(dir, '$')) {
            char *abs = cdd_absolute_path(*dir ? dir : ".");
            char *cand = abs ? cdd_path_join(abs, name) : NULL;
            char *real = NULL;
            free(abs);
            if (!cand) {
                free(dir);
                return -1;
            }
            if (cdd_fs_realpath(cand, &real) == 0) {
                struct cdd_stat st;
                if (cdd_fs_lstat(real, &st) == 0 && st.type == CDD_FT_FILE) {
                    h->path = cand;
                    h->real = real;
                    h->how = how;
                    free(dir);
                    return 1;
                }
                free(real);
            }
            cdd_clear_error();
            free(cand);
        }
        free(dir);
        p = p[len] ? p + len + 1 : NULL;
    }
    return 0;
}

/* "libcudnn_ops.so.9.14.0" -> "9.14.0"; NULL when the name has fewer
 * than three version parts. */
static char *version_of_name(const char *base, int *oom)
{
    const char *so = strstr(base, ".so.");
    if (!so)
        return NULL;
    so += 4;
    int dots = 0;
    for (const char *q = so; *q; q++) {
        if (*q == '.')
            dots++;
        else if (*q < '0' || *q > '9')
            return NULL;
    }
    if (dots < 2)
        return NULL;
    char *v = strdup(so);
    if (!v)
        *oom = 1;
    return v;
}

struct distinfo {
    char *version;
    int oom;
};

static int on_site_entry(void *ud, const char *name)
{
    struct distinfo *d = ud;
    static const char pre[] = "nvidia_cudnn_cu";
    static const char suf[] = ".dist-info";
    size_t n = strlen(name), sl = sizeof suf - 1;
    if (d->version || strncmp(name, pre, sizeof pre - 1) != 0 || n <= sl ||
        strcmp(name + n - sl, suf) != 0)
        return 0;
    const char *dash = strchr(name, '-');
    if (!dash || dash > name + n - sl)
        return 0;
    size_t vl = (size_t)(name + n - sl - dash - 1);
    if (!(d->version = malloc(vl + 1))) {
        d->oom = 1;
        return 1;
    }
    memcpy(d->version, dash + 1, vl);
    d->version[vl] = '\0';
    return 0;
}

/* A library whose name says no version (a wheel's, a toolkit's
 * libcudnn_ops.so.9 as a real file): cudnn_version.h in ../include. */
static char *header_version(const char *lib, int *oom)
{
    char *dir = dir_of(lib), *up = NULL, *h = NULL, *text = NULL, *v = NULL;
    size_t len = 0;
    int ma, mi, pa;
    if (!dir) {
        *oom = 1;
        return NULL;
    }
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        up = cdd_path_join(dir, "include/cudnn_version.h");
        h = up;
    }
    if (h && cdd_fs_read_all(h, 1u << 20, &text, &len) == 0 &&
        cdd_cudnn_version_from_header(text, &ma, &mi, &pa) == 0) {
        if ((v = malloc(48)) != NULL)
            snprintf(v, 48, "%d.%d.%d", ma, mi, pa);
        else
            *oom = 1;
    }
    cdd_clear_error();
    free(text);
    free(up);
    free(dir);
    return v;
}

char *cdd_bare_file_version(const char *path, int *oom)
{
    char *real = NULL;
    char *v = NULL;
    if (cdd_fs_realpath(path, &real) != 0) {
        cdd_clear_error();
        real = NULL;
    }
    v = version_of_name(cdd_path_basename(real ? real : path), oom);
    if (!v && !*oom) {
        /* A wheel has no symlinks: site/nvidia/cudnn/lib/libcudnn.so.9,
         * its version in site/nvidia_cudnn_cuNN-X.dist-info. */
        static const char tail[] = "/nvidia/cudnn/lib/";
        const char *p = real ? real : path;
        const char *t = strstr(p, tail);
        if (t && !strchr(t + sizeof tail - 1, '/')) {
            size_t sl = (size_t)(t - p);
            char *site = malloc(sl + 1);
            if (!site) {
                *oom = 1;
            } else {
                struct distinfo d = {0};
                memcpy(site, p, sl);
                site[sl] = '\0';
                (void)cdd_fs_list(site, on_site_entry, &d);
                cdd_clear_error();
                v = d.version;
                *oom |= d.oom;
                free(site);
            }
        }
    }
    if (!v && !*oom)
        v = header_version(real ? real : path, oom);
    free(real);
    return v;
}

int cdd_bare_resolve(const char *loader, const char *name,
                     struct cdd_bare_hit *h)
{
    struct cdd_bininfo bi;
    char *origin = dir_of(loader);
    int found = 0, oom = 0;
    memset(h, 0, sizeof *h);
    memset(&bi, 0, sizeof bi);
    if (!origin)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (cdd_bin_parse_file(loader, &bi) != 0) {
        /* Unreadable: searched as a library without RPATH/RUNPATH. No
         * memory to read it: the answer would be wrong, not just poorer. */
        int nomem = cdd_last_error()->code == CDD_E_NOMEM;
        cdd_clear_error();
        memset(&bi, 0, sizeof bi);
        if (nomem) {
            free(origin);
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        }
    }
    if (bi.rpath && !bi.runpath)
        found = search_list(bi.rpath, origin, name, "DT_RPATH", h);
    const char *llp = cdd_getenv("LD_LIBRARY_PATH");
    if (!found && llp && *llp)
        found = search_list(llp, origin, name, "LD_LIBRARY_PATH", h);
    if (!found && bi.runpath)
        found = search_list(bi.runpath, origin, name, "DT_RUNPATH", h);
    if (!found) {
        char **paths = NULL;
        size_t n = 0;
        if (cdd_lib_find_all(name, &paths, &n) == 0 && n) {
            /* LD_LIBRARY_PATH missed above: the first is the cache's or a
             * default folder's. */
            h->path = paths[0];
            paths[0] = NULL;
            h->how = "ld.so cache or a system folder";
            if (cdd_fs_realpath(h->path, &h->real) != 0)
                h->real = strdup(h->path);
            found = h->real ? 1 : -1;
        } else if (cdd_last_error()->code == CDD_E_NOMEM) {
            found = -1;
        }
        cdd_clear_error();
        cdd_lib_paths_free(paths, n);
    }
    if (found > 0)
        h->version = cdd_bare_file_version(h->path, &oom);
    cdd_bininfo_clear(&bi);
    free(origin);
    if (found < 0 || oom) {
        cdd_bare_hit_clear(h);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    return 0;
}

void cdd_bare_hit_clear(struct cdd_bare_hit *h)
{
    free(h->path);
    free(h->real);
    free(h->version);
    memset(h, 0, sizeof *h);
}

/* Two versions the same release: "9.14.0" and "9.14.0.50" agree on the
 * parts both have (at least three). */
static int same_version(const char *a, const char *b)
{
    int parts = 0;
    while (*a && *b) {
        size_t x = strcspn(a, "."), y = strcspn(b, ".");
        if (x != y || strncmp(a, b, x) != 0)
            return 0;
        parts++;
        a += x + (a[x] == '.');
        b += y + (b[y] == '.');
    }
    return parts >= 3;
}

/* "a, b, c": names of a major's sub-libraries, each a file name. */
struct namelist {
    char *s;
};

#define BARE_LIST_MAX (CDD_CUDNN_MAX_SUBS * (CDD_NAME_MAX + 2))

static int list_add(struct namelist *l, const char *name)
{
    size_t n = l->s ? strlen(l->s) : 0, k = strlen(name) + 3;
    int rc = cdd_grow(&l->s, NULL, n + k, 1, BARE_LIST_MAX + 1,
                      "bytes of a list of sub-libraries");
    if (rc)
        return rc;
    snprintf(l->s + n, k, "%s%s", n ? ", " : "", name);
    return 0;
}

int cdd_bare_check(const char *main_lib, int major, const char *version,
                   const char *where, const char *prefix,
                   struct cdd_checks *out)
{
    struct namelist owned = {0}, same = {0}, nowhere = {0};
    const char *own_how = NULL;
    const struct cdd_cudnn_major *f = cdd_cudnn_major_facts(major);
    char *own_dir = dir_of(main_lib), *own_real = NULL, *mine = NULL;
    int r = 0, oom = 0;
    if (!own_dir)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    /* A folder that cannot be resolved is not ours to compare with; memory
     * running out is not an answer about the folder (exit 4). */
    int rr = cdd_fs_realpath(own_dir, &own_real);
    if (rr == CDD_E_NOMEM)
        oom = 1;
    else if (rr != 0) {
        cdd_clear_error();
        own_real = NULL;
    }
    if (!version)
        version = mine = cdd_bare_file_version(main_lib, &oom);
    for (size_t i = 0; f && !r && !oom && i < f->n_subs; i++) {
        const char *name = f->subs[i].linux_name;
        char *check = NULL, *beside = cdd_path_join(own_dir, name);
        char *beside_real = NULL;
        struct cdd_bare_hit h;
        size_t cl = strlen(prefix) + strlen(name) + 2;
        if (!beside || !(check = malloc(cl))) {
            free(beside);
            r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            break;
        }
        snprintf(check, cl, "%s %s", prefix, name);
        int rb = cdd_fs_realpath(beside, &beside_real), have = rb == 0;
        if (rb == CDD_E_NOMEM) {
            free(check);
            free(beside);
            r = rb;
            break;
        }
        cdd_clear_error();
        if ((r = cdd_bare_resolve(main_lib, name, &h)) != 0) {
            free(check);
            free(beside);
            free(beside_real);
            break;
        }
        int own = h.real && ((beside_real && strcmp(h.real, beside_real) == 0) ||
                             (own_real && strncmp(h.real, own_real,
                                                  strlen(own_real)) == 0 &&
                              h.real[strlen(own_real)] == '/' &&
                              !strchr(h.real + strlen(own_real) + 1, '/')));
        if (!h.path) {
            if (have)
                r = list_add(&nowhere, name);
        } else if (own) {
            r = list_add(&owned, name);
            if (!own_how)
                own_how = h.how;
        } else if (version && h.version && same_version(version, h.version)) {
            r = list_add(&same, name);
        } else {
            r = cdd_checks_add(
                out, check, CDD_CHECK_WARN,
                "%s: cuDNN %s at %s loads %s by bare name, and the loader "
                "answers with %s (%s), cuDNN %s%s: a mix of versions that "
                "fails at run time or computes with the wrong engines "
                "(pytorch/pytorch#188892). Fix: %s",
                where, version ? version : "(version unknown)", main_lib,
                name, h.path, h.how, h.version ? h.version : "of unknown "
                                                             "version",
                have ? "" : ", and there is no copy beside it",
                have ? "load the sub-libraries beside the main library by "
                       "full path first, or put its folder first on "
                       "LD_LIBRARY_PATH; or remove or update the other copy "
                       "(sudo ldconfig after removing a system copy)"
                     : "install the same cuDNN version's copy of it beside "
                       "the main library, or remove the other copy");
        }
        cdd_bare_hit_clear(&h);
        free(check);
        free(beside);
        free(beside_real);
    }
    if (!r && !oom && (owned.s || nowhere.s || same.s))
        r = cdd_checks_add(
            out, prefix, CDD_CHECK_PASS,
            "%s: cuDNN %s at %s loads its sub-libraries by bare name; %s%s%s%s"
            "%s%s%s%s%s%s%s",
            where, version ? version : "(version unknown)", main_lib,
            owned.s ? "the loader's answer is its own copy (" : "",
            owned.s ? own_how : "", owned.s ? ") for " : "",
            owned.s ? owned.s : "", owned.s && (same.s || nowhere.s) ? "; " : "",
            same.s ? "a copy of the same version elsewhere for " : "",
            same.s ? same.s : "", same.s && nowhere.s ? "; " : "",
            nowhere.s ? "no copy on the loader's search path (RPATH, "
                        "LD_LIBRARY_PATH, RUNPATH, ld.so cache, system "
                        "folders) for " : "",
            nowhere.s ? nowhere.s : "",
            nowhere.s ? ": the copies beside it are found only when the "
                        "program has loaded them already (as PyTorch does "
                        "for its wheel's) or puts that folder on "
                        "LD_LIBRARY_PATH" : "");
    if (!r && oom)
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    free(owned.s);
    free(same.s);
    free(nowhere.s);
    free(mine);
    free(own_dir);
    free(own_real);
    return r;
}
