/* doctor's first phase (doctor_int.h): discovery. Everything doctor reports
 * on is looked at here, once: the CUDA toolkits, each PATH and
 * LD_LIBRARY_PATH entry, every copy of cuDNN the loader, conda or a Python
 * package would pick, the variables (CUDA_PATH*, CUDA_HOME, CUDNN_PATH), the
 * driver, and on a Windows host the DLLs cuDNN needs beside itself. What is
 * found is data in a struct cdd_dscan (and the result's toolkits, copies and
 * driver); no advice is written here: doctor_check.c does that.
 *
 * Portable: the platform's conventions come from env.h (toolkit folders,
 * Python site folders, System32) and loader.h (the loader's search order).
 * The names looked for and the version readers are cudnn_facts.h's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/cudnn_facts.h"
#include "cdd/doctor.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/gpu.h"
#include "cdd/layout.h"
#include "cdd/loader.h"
#include "cdd/manifest.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/tree.h"
#include "doctor_int.h"

/* A version resource or file bigger than this is not scanned: the main
 * libraries are small shims (well under 1 MiB); the huge sub-libraries would
 * cost seconds each. */
#define PE_SCAN_MAX (32u << 20)

static void nomem(struct cdd_dscan *c)
{
    cdd_dr_nomem(c);
}

/* ---- small file helpers -------------------------------------------------- */

/* Symlinks resolved when the path exists, else its absolute form. */
static char *real_or_abs(const char *p)
{
    char *r = NULL;
    if (cdd_fs_realpath(p, &r) != 0) {
        cdd_clear_error();
        r = cdd_absolute_path(p);
    }
    return r;
}

/* Type of what path names, symlinks followed. */
static enum cdd_ftype type_of(const char *path)
{
    char *r = NULL;
    struct cdd_stat st;
    st.type = CDD_FT_NONE;
    if (cdd_fs_realpath(path, &r) == 0 && cdd_fs_lstat(r, &st) != 0)
        st.type = CDD_FT_NONE;
    cdd_clear_error();
    free(r);
    return st.type;
}

static int is_file(const char *p)
{
    return type_of(p) == CDD_FT_FILE;
}

static int is_dir(const char *p)
{
    return type_of(p) == CDD_FT_DIR;
}

static char *join(const char *a, const char *b)
{
    return cdd_path_join(a, b);
}

/* ---- reading a version (the readers: cudnn_facts.c) -------------------- */

/* Scan a small DLL for its version resource, chunk by chunk (with overlap,
 * so a string across a chunk boundary is still seen). */
static int version_from_pe_file(const char *path, int major, char *buf,
                                size_t len)
{
    enum { CHUNK = 1 << 20, OVERLAP = 256 };
    struct cdd_rfile *f = NULL;
    unsigned char *mem = NULL;
    uint64_t size = 0, off = 0;
    int found = -1;
    if (cdd_fs_open_read(path, &f) != 0 || cdd_rfile_size(f, &size) != 0 ||
        size > PE_SCAN_MAX || !(mem = malloc(CHUNK + OVERLAP)))
        goto out;
    while (off < size && found != 0) {
        size_t want = size - off < CHUNK + OVERLAP ? (size_t)(size - off)
                                                   : CHUNK + OVERLAP;
        size_t got = 0;
        if (cdd_rfile_pread(f, off, mem, want, &got) != 0 || got == 0)
            break;
        found = cdd_cudnn_version_from_resource(mem, got, major, buf, len);
        off += CHUNK;
    }
out:
    cdd_rfile_close(f);
    cdd_clear_error();
    free(mem);
    return found;
}

/* A library's version without loading it: the real file's name, else a
 * cudnn_version.h in ../include (beside the resolved file, then beside the
 * name it was found by), else a DLL's version resource. */
static void read_version(const char *path, const char *real, int major,
                         char *buf, size_t len, const char **from)
{
    buf[0] = '\0';
    *from = "";
    if (cdd_cudnn_version_from_name(cdd_path_basename(real), major, buf,
                                    len) == 0) {
        *from = "file name";
        return;
    }
    const char *bases[2] = {real, path};
    for (int i = 0; i < 2; i++) {
        char *d = cdd_dr_dir_of(bases[i]), *p = d ? cdd_dr_dir_of(d) : NULL;
        char *inc = p ? join(p, CDD_CUDNN_VERSION_HEADER) : NULL;
        char *text = NULL;
        size_t n = 0;
        int ok = inc && is_file(inc) &&
                 cdd_fs_read_all(inc, 1u << 20, &text, &n) == 0 &&
                 cdd_cudnn_version_from_header_text(text, major, buf,
                                                    len) == 0;
        cdd_clear_error();
        free(text);
        free(inc);
        free(p);
        free(d);
        if (ok) {
            *from = "cudnn_version.h";
            return;
        }
    }
    size_t rl = strlen(real);
    if (rl > 4 && cdd_path_casecmp(real + rl - 4, ".dll") == 0 &&
        version_from_pe_file(real, major, buf, len) == 0) {
        *from = "version resource";
        return;
    }
    buf[0] = '\0';
}

/* ---- path lists ---------------------------------------------------------- */

static void plist_clear(struct cdd_dr_plist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].dir);
        free(l->v[i].real);
        free(l->v[i].cudnn);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

static void plist_load(struct cdd_dscan *c, struct cdd_dr_plist *l,
                       const char *var, const char *seps) {
    const char *val = cdd_getenv(var);
    l->var = var;
    l->set = val != NULL;
    for (const char *p = val; p && *p;) {
        size_t len = strcspn(p, seps);
        char *dir = malloc(len + 1);
        if (!dir) {
            nomem(c);
            return;
        }
        memcpy(dir, p, len);
        dir[len] = '\0';
        /* Users quote Windows entries with spaces; they mean the folder. */
        if (len >= 2 && dir[0] == '"' && dir[len - 1] == '"') {
            memmove(dir, dir + 1, len - 2);
            dir[len - 2] = '\0';
        }
        /* Empty entries and ones with $ORIGIN-style tokens name no fixed
         * folder; they still count for positions. */
        char *abs = dir[0] && !strchr(dir, '$') ? cdd_absolute_path(dir) : NULL;
        int gr = CDD_GROW(l->v, NULL, l->n + 1, CDD_DR_LIST_MAX,
                          "entries of a search list");
        if (gr) {
            free(abs);
            free(dir);
            cdd_dr_fail(c, gr);
            return;
        }
        struct cdd_dr_pentry *v = l->v;
        memset(&v[l->n], 0, sizeof v[l->n]);
        v[l->n].toolkit = -1;
        v[l->n].dir = abs ? abs : dir;
        v[l->n].real = abs ? real_or_abs(abs) : NULL;
        if (abs)
            free(dir);
        l->n++;
        cdd_clear_error();
        if (!p[len])
            break;
        p += len + 1;
    }
}

/* ---- toolkits ------------------------------------------------------------ */

static void append_found_by(struct cdd_dscan *c, struct cdd_doctor_toolkit *k,
                            const char *how, const char *root)
{
    struct cdd_sb b, ib;
    CDD_DR_TEXT_INIT(&b);
    CDD_DR_TEXT_INIT(&ib);
    if (cdd_dr_same_path(c, root, k->root) ||
        cdd_dr_same_path(c, root, k->real))
        cdd_sb_catf(&ib, "%s", how);
    else
        cdd_sb_catf(&ib, "%s (%s)", how, root);
    if (!cdd_dr_text_ok(c, &ib)) {
        cdd_sb_free(&ib);
        return;
    }
    const char *item = cdd_sb_str(&ib);
    /* Each way once ("PATH" is also inside "CUDA_PATH": whole items). */
    for (const char *p = k->found_by; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == strlen(item) && !strncmp(p, item, len)) {
            cdd_sb_free(&ib);
            return;
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    cdd_sb_catf(&b, "%s%s%s", k->found_by ? k->found_by : "",
                k->found_by ? ", " : "", item);
    cdd_sb_free(&ib);
    char *fb = cdd_dr_text_ok(c, &b) ? cdd_sb_take(&b) : NULL;
    cdd_sb_free(&b);
    if (!fb) {
        nomem(c); /* take's failure; a failed text's is kept already */
        return;
    }
    free(k->found_by);
    k->found_by = fb;
}

/* Add (or find) the toolkit at root. Index, or -1 when root is no folder. */
static int toolkit_add(struct cdd_dscan *c, const char *root, const char *how)
{
    struct cdd_doctor_result *res = c->res;
    char *abs = cdd_absolute_path(root), *real = abs ? real_or_abs(abs) : NULL;
    int idx = -1;
    if (!abs || !real) {
        nomem(c);
        goto out;
    }
    if (!is_dir(real))
        goto out;
    for (size_t i = 0; i < res->n_toolkits; i++)
        if (cdd_dr_same_path(c, res->toolkits[i].real, real)) {
            append_found_by(c, &res->toolkits[i], how, abs);
            idx = (int)i;
            goto out;
        }
    int gr = CDD_GROW(res->toolkits, NULL, res->n_toolkits + 1,
                      CDD_DR_TOOLKITS_MAX, "CUDA toolkits found");
    if (gr) {
        cdd_dr_fail(c, gr);
        goto out;
    }
    struct cdd_doctor_toolkit *k = &res->toolkits[res->n_toolkits];
    memset(k, 0, sizeof *k);
    k->root = abs;
    k->real = real;
    abs = real = NULL;
    /* Opened by path (cdd_tree_open is the constructor of a tree doctor
     * finds); one it cannot open says no version, as an unreadable file. */
    struct cdd_tree *kt = NULL;
    if (cdd_tree_open(k->real, &kt) != 0 ||
        cdd_cuda_version_read(kt, &k->version) != 0)
        memset(&k->version, 0, sizeof k->version);
    cdd_tree_close(kt);
    cdd_clear_error();
    append_found_by(c, k, how, k->root);
    idx = (int)res->n_toolkits++;
out:
    free(abs);
    free(real);
    return idx;
}

/* A CUDA tree has a version file or CUDA's headers. An nvcc alone is no
 * sign: /usr/local/bin often holds wrapper scripts named nvcc. */
static int looks_like_cuda(const char *root)
{
    static const char *const marks[] = {"version.json", "version.txt",
                                        "include/cuda.h",
                                        "include/cuda_runtime_api.h"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        char *p = join(root, marks[i]);
        int ok = p && is_file(p);
        free(p);
        if (ok)
            return 1;
    }
    return 0;
}

/* The CUDA tree a PATH / LD_LIBRARY_PATH entry belongs to: bin, lib64, lib,
 * libnvvp -> parent; lib/x64 -> two up; targets/<arch>/lib -> three up.
 * malloc'd, or NULL. */
static char *cuda_root_of(const char *dir)
{
    char *d1 = cdd_dr_dir_of(dir), *d2 = d1 ? cdd_dr_dir_of(d1) : NULL;
    char *d3 = d2 ? cdd_dr_dir_of(d2) : NULL, *root = NULL;
    const char *base = cdd_path_basename(dir);
    const char *b1 = d1 ? cdd_path_basename(d1) : "";
    const char *b2 = d2 ? cdd_path_basename(d2) : "";
    const char *cands[3] = {NULL, NULL, NULL};
    if (!strcmp(base, "bin") || !strcmp(base, "lib64") ||
        !strcmp(base, "lib") || !strcmp(base, "libnvvp") ||
        !cdd_path_casecmp(base, "bin"))
        cands[0] = d1;
    if (!cdd_path_casecmp(base, "x64") && !cdd_path_casecmp(b1, "lib"))
        cands[1] = d2;
    if (!strcmp(base, "lib") && !strcmp(b2, "targets"))
        cands[2] = d3;
    /* Most specific first: targets/<arch> has include/cuda.h too, but the
     * toolkit is three up. */
    for (int i = 2; i >= 0 && !root; i--)
        if (cands[i] && looks_like_cuda(cands[i]))
            root = strdup(cands[i]);
    free(d1);
    free(d2);
    free(d3);
    return root;
}

/* Remember a variable that names something wrong, for check_toolkits. */
static void stale_add(struct cdd_dscan *c, enum cdd_dr_stale_kind kind,
                      const char *name, const char *value, int maj, int min,
                      int toolkit)
{
    int gr = CDD_GROW(c->stale, NULL, c->n_stale + 1, CDD_DR_STALE_MAX,
                      "CUDA variables naming something wrong");
    if (gr) {
        cdd_dr_fail(c, gr);
        return;
    }
    struct cdd_dr_stale *s = &c->stale[c->n_stale];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->want_major = maj;
    s->want_minor = min;
    s->toolkit = toolkit;
    s->name = strdup(name);
    s->value = strdup(value);
    if (!s->name || !s->value) {
        free(s->name);
        free(s->value);
        nomem(c);
        return;
    }
    c->n_stale++;
}

static int on_cuda_env(void *ud, const char *name, const char *value)
{
    struct cdd_dscan *c = ud;
    int maj = 0, min = 0;
    char tail;
    int versioned = sscanf(name, "CUDA_PATH_V%d_%d%c", &maj, &min, &tail) == 2;
    if (strcmp(name, "CUDA_PATH") != 0 && !versioned)
        return 0;
    int idx = toolkit_add(c, value, name);
    if (idx < 0) {
        stale_add(c, CDD_DR_STALE_NO_FOLDER, name, value, 0, 0, -1);
        return 0;
    }
    const struct cdd_cuda_version *v = &c->res->toolkits[idx].version;
    if (versioned && v->known && (v->major != maj || v->minor != min))
        stale_add(c, CDD_DR_STALE_WRONG_VERSION, name, value, maj, min, idx);
    return 0;
}

static int on_default_root(void *ud, const char *path, const char *origin)
{
    toolkit_add(ud, path, origin);
    return 0;
}

static void find_toolkits(struct cdd_dscan *c)
{
    cdd_env_each("CUDA_PATH", on_cuda_env, c);
    const char *home = cdd_getenv("CUDA_HOME");
    if (home && toolkit_add(c, home, "CUDA_HOME") < 0)
        stale_add(c, CDD_DR_STALE_HOME, "CUDA_HOME", home, 0, 0, -1);
    if (cdd_default_cuda_roots(on_default_root, c) == CDD_E_NOMEM)
        nomem(c);
    cdd_clear_error();
}

/* ---- copies of cuDNN ----------------------------------------------------- */

static int copy_find(const struct cdd_dscan *c, const char *name,
                     const char *real) {
    for (size_t i = 0; i < c->res->n_copies; i++)
        if (!strcmp(c->res->copies[i].name, name) &&
            cdd_dr_same_path(c, c->res->copies[i].real, real))
            return (int)i;
    return -1;
}

/* Record a copy; returns its index (an existing one when the same file of
 * the same name is already listed: found again on the search path, a
 * target's or conda's copy becomes a search copy, with its place in the
 * loader's order), or -1. */
static int copy_add(struct cdd_dscan *c, const char *name, const char *path,
                    int major, enum cdd_copy_where where, const char *origin,
                    int order, int is_main)
{
    struct cdd_doctor_result *res = c->res;
    char *real = real_or_abs(path);
    if (!real) {
        nomem(c);
        return -1;
    }
    int idx = copy_find(c, name, real);
    if (idx >= 0) {
        struct cdd_doctor_copy *k = &res->copies[idx];
        char *o = NULL, *p = NULL;
        if (where == CDD_COPY_SEARCH && k->where != CDD_COPY_SEARCH) {
            if (!(o = strdup(origin)) || !(p = strdup(path))) {
                free(o);
                nomem(c);
            } else {
                /* The loader's own name for it (lib vs lib64). */
                free(k->origin);
                free(k->path);
                k->origin = o;
                k->path = p;
                k->where = where;
                k->order = order;
            }
        }
        free(real);
        return idx;
    }
    int gr = CDD_GROW(res->copies, NULL, res->n_copies + 1,
                      CDD_DR_COPIES_MAX, "copies of cuDNN found");
    if (gr) {
        free(real);
        cdd_dr_fail(c, gr);
        return -1;
    }
    struct cdd_doctor_copy *k = &res->copies[res->n_copies];
    memset(k, 0, sizeof *k);
    k->name = strdup(name);
    k->path = strdup(path);
    k->origin = strdup(origin);
    k->real = real;
    k->where = where;
    k->order = order;
    k->is_main = is_main;
    if (!k->name || !k->path || !k->origin) {
        free(k->name);
        free(k->path);
        free(k->origin);
        free(k->real);
        nomem(c);
        return -1;
    }
    read_version(path, real, major, k->version, sizeof k->version,
                 &k->version_from);
    return (int)res->n_copies++;
}

/* Where a folder sits in the loader's order, for a person. */
static void origin_of(const struct cdd_dscan *c, const char *file, char *buf,
                      size_t len)
{
    char *d = cdd_dr_dir_of(file), *real = d ? real_or_abs(d) : NULL;
    int pos = real ? cdd_dr_plist_pos(c, c->lib, real) : 0;
    if (pos)
        snprintf(buf, len, "%s #%d", c->lib->var, pos);
    else if (c->windows)
        snprintf(buf, len, "system or application folder");
    else
        snprintf(buf, len, "ld.so cache or system folder");
    free(real);
    free(d);
}

/* Every copy the loader could pick for name, in its order. Fills idx[] (up
 * to max) with res->copies indexes; returns the count. */
static size_t search_copies(struct cdd_dscan *c, const char *name, int major,
                            int is_main, int *idx, size_t max)
{
    char **paths = NULL;
    size_t n = 0, k = 0;
    if (cdd_lib_find_all(name, &paths, &n) != 0) {
        if (cdd_last_error()->code == CDD_E_NOMEM)
            nomem(c);
        cdd_clear_error();
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char origin[300]; /* fixed: a variable name and a number, or words */
        origin_of(c, paths[i], origin, sizeof origin);
        int j = copy_add(c, name, paths[i], major, CDD_COPY_SEARCH, origin,
                         (int)i + 1, is_main);
        if (j >= 0 && k < max)
            idx[k++] = j;
    }
    cdd_lib_paths_free(paths, n);
    return k;
}

/* ---- PATH and LD_LIBRARY_PATH entries ------------------------------------ */

/* Look at each entry: which toolkit it belongs to, which cuDNN it holds. */
static void scan_list(struct cdd_dscan *c, struct cdd_dr_plist *l, int is_lib)
{
    for (size_t i = 0; i < l->n; i++) {
        struct cdd_dr_pentry *e = &l->v[i];
        if (!e->real || !is_dir(e->real))
            continue;
        /* The name as written first (/usr/local/cuda-13.0/lib64), then the
         * resolved one (.../targets/x86_64-linux/lib). */
        char *root = e->dir ? cuda_root_of(e->dir) : NULL;
        if (!root)
            root = cuda_root_of(e->real);
        if (root) {
            e->toolkit = toolkit_add(c, root, l->var);
            free(root);
            if (e->toolkit >= 0) {
                struct cdd_doctor_toolkit *k = &c->res->toolkits[e->toolkit];
                int *pos = is_lib ? &k->lib_path_pos : &k->path_pos;
                if (!*pos)
                    *pos = (int)i + 1;
            }
        }
        struct cdd_sb b;
        CDD_DR_TEXT_INIT(&b);
        for (int m = 0; m < CDD_DR_MAJORS; m++) {
            const struct cdd_dr_names *nm = &c->names[m];
            for (int s = -1; s < 8; s++) {
                const char *name = s < 0 ? nm->main : nm->subs[s];
                if (!name)
                    break;
                char *p = join(e->real, name);
                if (p && is_file(p)) {
                    if (s < 0) {
                        char *real = real_or_abs(p);
                        char ver[32]; /* fixed: a version */
                        const char *from;
                        if (real)
                            read_version(p, real, nm->major, ver, sizeof ver,
                                         &from);
                        cdd_sb_catf(&b, "%s%s %s", b.len ? ", " : "", name,
                                    real ? cdd_dr_ver_text(ver) : "");
                        free(real);
                    } else if (!b.len) {
                        cdd_sb_catf(&b, "cuDNN %d sub-libraries", nm->major);
                    }
                }
                free(p);
            }
        }
        /* NULL: no cuDNN here. */
        e->cudnn = cdd_dr_text_ok(c, &b) && b.len ? cdd_sb_take(&b) : NULL;
        cdd_sb_free(&b);
    }
}

/* ---- the driver ---------------------------------------------------------- */

static void scan_driver(struct cdd_dscan *c)
{
    struct cdd_gpu_env *g = NULL;
    struct cdd_doctor_result *res = c->res;
    int r = cdd_gpu_env_open(NULL, &g);
    if (r) {
        const struct cdd_errinfo *e = cdd_last_error();
        c->driver_rc = r;
        c->driver_path = strdup(e->path);
        c->driver_msg = strdup(e->msg);
        cdd_clear_error();
        if (!c->driver_path || !c->driver_msg)
            cdd_dr_nomem(c);
        return;
    }
    const struct cdd_gpu_info *gi = cdd_gpu_env_info(g);
    res->have_driver = 1;
    if (!(res->driver_path = strdup(cdd_gpu_env_driver_path(g))))
        cdd_dr_nomem(c);
    snprintf(res->driver_release, sizeof res->driver_release, "%s",
             gi->driver_release);
    res->driver_cuda_version = gi->driver_cuda_version;
    cdd_gpu_env_close(g);
}

/* ---- cuDNN on the search path -------------------------------------------- */

/* Each main library's copies in the loader's order; where one is found, the
 * first copy of each of its sub-libraries (which the main library loads by
 * name on first use). */
static void scan_search(struct cdd_dscan *c)
{
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        const struct cdd_dr_names *nm = &c->names[m];
        struct cdd_dr_search *s = &c->search[m];
        s->n = search_copies(c, nm->main, nm->major, 1, s->idx, 32);
        c->winner[m] = s->n ? s->idx[0] : -1;
        for (int k = 0; k < CDD_CUDNN_MAX_SUBS; k++)
            s->sub_first[k] = -1;
        for (int k = 0; s->n && k < CDD_CUDNN_MAX_SUBS && nm->subs[k]; k++) {
            int idx[16];
            if (search_copies(c, nm->subs[k], nm->major, 0, idx, 16))
                s->sub_first[k] = idx[0];
        }
    }
}

/* ---- conda and Python package copies ------------------------------------- */

static void scan_conda(struct cdd_dscan *c)
{
    const char *env = cdd_getenv("CONDA_PREFIX");
    /* Absolute, and in the core's separator style on Windows too. */
    char *cp = env ? cdd_absolute_path(env) : NULL;
    char *cp_real = cp ? real_or_abs(cp) : NULL;
    static const char *const subs[] = {"lib", "Library/bin"};
    if (!cp || !cp_real)
        goto out;
    for (int m = 0; m < CDD_DR_MAJORS; m++)
        for (size_t s = 0; s < 2; s++) {
            char *dir = join(cp, subs[s]);
            char *p = dir ? join(dir, c->names[m].main) : NULL;
            if (p && is_file(p)) {
                char *pdir = cdd_dr_dir_of(p);
                char *pdir_real = pdir ? real_or_abs(pdir) : NULL;
                int k = copy_add(c, c->names[m].main, p, c->names[m].major,
                                 CDD_COPY_CONDA, "CONDA_PREFIX", 0, 1);
                int gr = k < 0 ? 0
                               : CDD_GROW(c->conda, NULL, c->n_conda + 1,
                                          CDD_DR_CONDA_MAX,
                                          "conda copies of cuDNN");
                if (gr) {
                    cdd_dr_fail(c, gr);
                } else if (k >= 0) {
                    struct cdd_dr_conda *v = c->conda;
                    v[c->n_conda].m = m;
                    v[c->n_conda].k = k;
                    v[c->n_conda].path = p;
                    p = NULL;
                    v[c->n_conda].pos =
                        pdir_real ? cdd_dr_plist_pos(c, c->lib, pdir_real) : 0;
                    v[c->n_conda].is_target =
                        c->t && cdd_dr_same_path(c, cp_real, c->t->root);
                    c->n_conda++;
                }
                free(pdir);
                free(pdir_real);
            }
            free(p);
            free(dir);
        }
    c->conda_prefix = cp;
    cp = NULL;
out:
    free(cp_real);
    free(cp);
}

struct pyscan {
    struct cdd_dscan *c;
    char **seen;        /* site folders done (resolved) */
    size_t n_seen;
};

static void py_add(struct cdd_dscan *c, int m, int k, size_t pkg,
                   const char *site, const char *origin, char *dir)
{
    int gr = CDD_GROW(c->py, NULL, c->n_py + 1, CDD_DR_PY_MAX,
                      "Python package copies of cuDNN");
    if (gr) {
        free(dir);
        cdd_dr_fail(c, gr);
        return;
    }
    struct cdd_dr_py *e = &c->py[c->n_py];
    e->m = m;
    e->k = k;
    e->pkg = pkg;
    e->dir = dir;
    e->site = strdup(site);
    e->origin = strdup(origin);
    if (!e->site || !e->origin) {
        free(e->site);
        free(e->origin);
        free(e->dir);
        nomem(c);
        return;
    }
    c->n_py++;
}

static int on_site(void *ud, const char *site, const char *origin)
{
    struct pyscan *ps = ud;
    struct cdd_dscan *c = ps->c;
    char *real = real_or_abs(site);
    if (!real) {
        nomem(c);
        return 0;
    }
    for (size_t i = 0; i < ps->n_seen; i++)
        if (cdd_dr_same_path(c, ps->seen[i], real)) {
            free(real);
            return 0;
        }
    int gr = CDD_GROW(ps->seen, NULL, ps->n_seen + 1, CDD_DR_SITES_MAX,
                      "Python site folders");
    if (gr) {
        free(real);
        cdd_dr_fail(c, gr);
        return 0;
    }
    ps->seen[ps->n_seen++] = real;
    for (size_t pk = 0; pk < CDD_DR_N_PYPKGS; pk++)
        for (int m = 0; m < CDD_DR_MAJORS; m++) {
            char *dir = join(site, cdd_dr_py_pkgs[pk].sub);
            char *p = dir ? join(dir, c->names[m].main) : NULL;
            if (p && is_file(p)) {
                char lab[300]; /* fixed: a package label and an origin word */
                snprintf(lab, sizeof lab, "%s (%s)", cdd_dr_py_pkgs[pk].label,
                         origin);
                int k = copy_add(c, c->names[m].main, p, c->names[m].major,
                                 CDD_COPY_PYTHON, lab, 0, 1);
                if (k >= 0) {
                    py_add(c, m, k, pk, site, origin, dir);
                    dir = NULL;
                }
            }
            free(p);
            free(dir);
        }
    return 0;
}

static void scan_python(struct cdd_dscan *c)
{
    struct pyscan ps = {c, NULL, 0};
    if (cdd_python_site_dirs(on_site, &ps) == CDD_E_NOMEM)
        nomem(c);
    cdd_clear_error();
    for (size_t i = 0; i < ps.n_seen; i++)
        free(ps.seen[i]);
    free(ps.seen);
}

/* ---- variables the loader ignores ---------------------------------------- */

static void scan_cudnn_path(struct cdd_dscan *c)
{
    static const char *const subs[] = {"bin", "lib64", "lib", "lib/x64"};
    const char *cp = cdd_getenv("CUDNN_PATH");
    char *top = NULL, *libdir = NULL, *real = NULL;
    if (!cp)
        return;
    /* Absolute, and in the core's separator style on Windows too. */
    if (!(c->cudnn_path = strdup(cp)) || !(top = cdd_absolute_path(cp))) {
        nomem(c);
        goto out;
    }
    c->cudnn_path_abs = top;
    if (!(c->cudnn_path_is_dir = is_dir(top)))
        goto out;
    /* The folder of CUDNN_PATH that holds the libraries, if any. */
    for (size_t s = 0; s < 4 && !libdir; s++)
        for (int m = 0; m < CDD_DR_MAJORS && !libdir; m++) {
            char *sub = join(top, subs[s]);
            char *p = sub ? join(sub, c->names[m].main) : NULL;
            if (p && is_file(p))
                libdir = sub, sub = NULL;
            free(p);
            free(sub);
        }
    real = libdir ? real_or_abs(libdir) : NULL;
    c->cudnn_path_pos = real ? cdd_dr_plist_pos(c, c->lib, real) : 0;
    c->cudnn_path_libdir = libdir;
out:
    free(real);
}

/* ---- Windows dependencies ------------------------------------------------ */

/* Where zlibwapi.dll is for the copy k: beside it, else (host_search) the
 * first on the host's search path. */
static void scan_zlib(struct cdd_dscan *c, int k, int host_search,
                      struct cdd_dr_zlib *z)
{
    const struct cdd_doctor_copy *cp = &c->res->copies[k];
    char *dir = cdd_dr_dir_of(cp->real);
    char *beside = dir ? join(dir, "zlibwapi.dll") : NULL;
    char **paths = NULL;
    size_t n = 0;
    z->looked = 1;
    if (beside && is_file(beside)) {
        z->beside = beside;
        beside = NULL;
    } else if (host_search &&
               cdd_lib_find_all("zlibwapi.dll", &paths, &n) == 0 && n) {
        z->found = paths[0];
        paths[0] = NULL;
    }
    cdd_clear_error();
    cdd_lib_paths_free(paths, n);
    free(beside);
    free(dir);
}

static void scan_windows(struct cdd_dscan *c)
{
    if (c->windows) {
        c->sysdir = cdd_system_dir();
        for (size_t i = 0; c->sysdir && i < CDD_DR_N_VCRT; i++) {
            char *p = join(c->sysdir, cdd_msvc_runtime[i]);
            c->vc_missing[i] = p && !is_file(p);
            free(p);
        }
        for (int m = 0; m < CDD_DR_MAJORS; m++)
            if (c->winner[m] >= 0)
                scan_zlib(c, c->winner[m], 1, &c->zlib_winner[m]);
    }
    for (int m = 0; m < CDD_DR_MAJORS; m++)
        if (c->t_windows && c->t_copy[m] >= 0)
            scan_zlib(c, c->t_copy[m], c->windows, &c->zlib_target[m]);
}

/* ---- the target ---------------------------------------------------------- */

static void target_prepare(struct cdd_dscan *c)
{
    const struct cdd_target *t = c->t;
    enum cdd_platform plat = cdd_platform_host();
    /* The receipt is read through the tree the caller opened (tree.h):
     * beneath its root, no link followed in .cudnn-deploy. Tampered state
     * (a link, a folder where a file belongs) or a receipt that is not one
     * is said as a finding; the rest of the tree is still looked at (a
     * tree whose state did not pass at all was opened by its root alone). */
    struct cdd_tree *tree = c->tree;
    int r = 0;
    if (c->state_bad) {
        c->rc_bad = c->rc_state = 1;
        if (c->state_why && !(c->rc_why = cdd_strdup(c->state_why)))
            nomem(c);
    } else if (tree && (r = cdd_receipt_load(tree, &c->rc)) == CDD_E_NOMEM) {
        nomem(c);
    } else if (r) {
        c->rc_bad = 1;
        c->rc_state = r == CDD_E_STATE;
        c->rc_why = cdd_error_text();
    }
    cdd_clear_error();
    if (c->rc && cdd_platform_parse(c->rc->platform, &plat) != 0)
        plat = cdd_platform_host();
    /* No receipt: the tree's own layout says which platform it serves (a
     * Windows tree examined from Linux has no lib64 to advise). */
    if (!c->rc && (!tree || cdd_target_layout_platform(tree, &plat) != 0))
        plat = cdd_platform_host();
    cdd_clear_error();
    c->t_windows = cdd_platform_is_windows(plat);
    cdd_dr_names_fill(c->t_names, c->t_windows);
    const char *rel = cdd_layout_dir(cdd_layout_select(t->kind, plat),
                                     CDD_ROLE_RUNTIME);
    c->t_libdir = join(t->root, rel ? rel : "lib");
    c->t_libdir_real = c->t_libdir ? real_or_abs(c->t_libdir) : NULL;
    if (!c->t_libdir || !c->t_libdir_real) {
        nomem(c);
        return;
    }
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        char *p = join(c->t_libdir, c->t_names[m].main);
        if (p && is_file(p)) {
            char *real = real_or_abs(p);
            int k = real ? copy_find(c, c->t_names[m].main, real) : -1;
            if (k < 0)
                k = copy_add(c, c->t_names[m].main, p, c->t_names[m].major,
                             CDD_COPY_TARGET, "target", 0, 1);
            c->t_copy[m] = k;
            free(real);
        }
        free(p);
    }
}

/* ---- the whole ----------------------------------------------------------- */

void cdd_doctor_scan(struct cdd_dscan *c)
{
    plist_load(c, &c->path, "PATH", c->windows ? ";" : ":");
    if (!c->windows)
        /* ld.so splits LD_LIBRARY_PATH on ':' and ';'. */
        plist_load(c, &c->libpath, "LD_LIBRARY_PATH", ":;");
    find_toolkits(c);
    scan_list(c, &c->path, 0);
    if (!c->windows)
        scan_list(c, &c->libpath, 1);
    /* The target's copies first: the copies keep the order they are found
     * in, and the report lists the target first. */
    if (c->t) {
        target_prepare(c);
        c->t_libdir_pos = c->t_libdir_real
                              ? cdd_dr_plist_pos(c, c->lib, c->t_libdir_real)
                              : 0;
    }
    scan_driver(c);
    scan_search(c);
    scan_conda(c);
    scan_python(c);
    scan_cudnn_path(c);
    scan_windows(c);
    cdd_clear_error();
}

void cdd_dscan_clear(struct cdd_dscan *c)
{
    plist_clear(&c->path);
    plist_clear(&c->libpath);
    for (size_t i = 0; i < c->n_stale; i++) {
        free(c->stale[i].name);
        free(c->stale[i].value);
    }
    free(c->stale);
    free(c->conda_prefix);
    free(c->driver_path);
    free(c->driver_msg);
    cdd_fixes_clear(&c->fix);
    for (size_t i = 0; i < c->n_conda; i++)
        free(c->conda[i].path);
    free(c->conda);
    for (size_t i = 0; i < c->n_py; i++) {
        free(c->py[i].site);
        free(c->py[i].origin);
        free(c->py[i].dir);
    }
    free(c->py);
    free(c->cudnn_path);
    free(c->cudnn_path_abs);
    free(c->cudnn_path_libdir);
    free(c->sysdir);
    for (int m = 0; m < CDD_DR_MAJORS; m++) {
        free(c->zlib_winner[m].beside);
        free(c->zlib_winner[m].found);
        free(c->zlib_target[m].beside);
        free(c->zlib_target[m].found);
    }
    cdd_receipt_free(c->rc);
    free(c->rc_why);
    c->rc_why = NULL;
    free(c->t_libdir);
    free(c->t_libdir_real);
    c->path.v = c->libpath.v = NULL;
    c->stale = NULL;
    c->conda = NULL;
    c->py = NULL;
    c->rc = NULL;
    cdd_error_save_free(&c->err_save);
}
