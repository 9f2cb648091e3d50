/* doctor: what this host's environment does to a program that wants CUDA and
 * cuDNN (see doctor.h). Portable: the platform's conventions come from env.h
 * (toolkit folders, Python site folders, System32) and loader.h (the
 * loader's search order); the rest is reading files and variables.
 *
 * Two phases: first everything is looked at (toolkits, PATH and
 * LD_LIBRARY_PATH entries, every copy of cuDNN), then the checks are written,
 * so that each can refer to what the others found (a toolkit's PATH
 * position, the copy a conda copy shadows). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/doctor.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/gpu.h"
#include "cdd/layout.h"
#include "cdd/loader.h"
#include "cdd/manifest.h"
#include "cdd/mcreate.h"
#include "cdd/pathsafe.h"
#include "cdd/receipt.h"
#include "cdd/tree.h"

/* A cuDNN major's libraries as the loader is asked for them: the main
 * library loads the others by these names on first use. */
struct names {
    int major;
    const char *main;
    const char *subs[8];
};

static const struct names linux_names[] = {
    {8, "libcudnn.so.8",
     {"libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8",
      "libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8",
      "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8", NULL}},
    {9, "libcudnn.so.9",
     {"libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_cnn.so.9",
      "libcudnn_adv.so.9", "libcudnn_engines_precompiled.so.9",
      "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9",
      NULL}},
};

static const struct names windows_names[] = {
    {8, "cudnn64_8.dll",
     {"cudnn_ops_infer64_8.dll", "cudnn_ops_train64_8.dll",
      "cudnn_cnn_infer64_8.dll", "cudnn_cnn_train64_8.dll",
      "cudnn_adv_infer64_8.dll", "cudnn_adv_train64_8.dll", NULL}},
    {9, "cudnn64_9.dll",
     {"cudnn_graph64_9.dll", "cudnn_ops64_9.dll", "cudnn_cnn64_9.dll",
      "cudnn_adv64_9.dll", "cudnn_engines_precompiled64_9.dll",
      "cudnn_engines_runtime_compiled64_9.dll", "cudnn_heuristic64_9.dll",
      NULL}},
};

#define N_MAJORS 2

/* Where Python packages keep cuDNN: PyTorch's bundled copy, and pip's
 * nvidia-cudnn-cuXX package (lib on Linux, bin on Windows). */
static const struct {
    const char *sub;
    const char *label;
} py_pkgs[] = {
    {"torch/lib", "torch"},
    {"nvidia/cudnn/lib", "nvidia-cudnn"},
    {"nvidia/cudnn/bin", "nvidia-cudnn"},
};

/* The Visual C++ runtime DLLs cuDNN imports (BRIEF §4). */
static const char *const vc_runtime[] = {"msvcp140.dll", "vcruntime140.dll",
                                         "vcruntime140_1.dll"};

/* A version resource or file bigger than this is not scanned: the main
 * libraries are small shims (well under 1 MiB); the huge sub-libraries would
 * cost seconds each. */
#define PE_SCAN_MAX (32u << 20)

/* ---- a growing string, for details of any length -------------------------- */

struct sbuf {
    char *s;
    size_t n, cap;
    int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0 || b->oom)
        return;
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = (b->n + (size_t)k + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) {
            b->oom = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

static const char *sb_str(const struct sbuf *b)
{
    return b->s ? b->s : "";
}

static void sb_free(struct sbuf *b)
{
    free(b->s);
    memset(b, 0, sizeof *b);
}

/* ---- the context ------------------------------------------------------------ */

struct pentry {
    char *dir;     /* absolute, as written */
    char *real;    /* symlinks resolved; dir when it does not exist */
    int toolkit;   /* index into res->toolkits, -1 */
    char *cudnn;   /* "libcudnn.so.8 8.5.0, ..." held here, or NULL */
};

struct plist {
    const char *var;       /* "PATH", "LD_LIBRARY_PATH"; NULL: not used */
    int set;               /* the variable is set */
    struct pentry *v;
    size_t n;
};

struct dctx {
    const struct cdd_doctor_opts *o;
    struct cdd_doctor_result *res;
    int err;                 /* CDD_E_NOMEM once seen */
    int windows;             /* host */
    char sep;                /* list separator of PATH on this host */
    const struct names *names;
    struct plist path, libpath;
    struct plist *lib;       /* what the loader searches: LD_LIBRARY_PATH on
                                Linux, PATH on Windows */
    int winner[N_MAJORS];    /* res->copies index of the search winner of
                                each main library, -1 */
    /* the target */
    const struct cdd_target *t;
    struct cdd_receipt *rc;
    int rc_bad;              /* a receipt exists but could not be read */
    int t_windows;           /* the target's platform (receipt, else host) */
    char *t_libdir, *t_libdir_real;
    const struct names *t_names;
    int t_copy[N_MAJORS];    /* res->copies index of the target's main
                                library of each major, -1 */
};

#define DCHECK(c, name, st, ...)                                               \
    do {                                                                       \
        if (cdd_checks_add(&(c)->res->checks, name, st, __VA_ARGS__))          \
            (c)->err = CDD_E_NOMEM;                                            \
    } while (0)

static void nomem(struct dctx *c)
{
    c->err = CDD_E_NOMEM;
}

/* ---- small file helpers --------------------------------------------------- */

static int same_path(const struct dctx *c, const char *a, const char *b)
{
    if (!a || !b)
        return 0;
    return c->windows ? cdd_path_casecmp(a, b) == 0 : strcmp(a, b) == 0;
}

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

static char *dir_of(const char *path)
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
static char *native(const struct dctx *c, const char *p)
{
    char *n = strdup(p);
    for (char *s = n; c->windows && s && *s; s++)
        if (*s == '/')
            *s = '\\';
    return n;
}

/* ---- version parsers ------------------------------------------------------ */

/* "8.5.0" -> {8,5,0}: digits and single dots only, up to max components.
 * Returns the count, or -1. */
static int dotted(const char *s, long *comp, int max)
{
    int n = 0;
    while (*s) {
        if (n == max || !isdigit((unsigned char)*s))
            return -1;
        long v = 0;
        int digits = 0;
        while (isdigit((unsigned char)*s) && digits < 9) {
            v = v * 10 + (*s++ - '0');
            digits++;
        }
        if (isdigit((unsigned char)*s))
            return -1;
        comp[n++] = v;
        if (*s == '.') {
            s++;
            if (!*s)
                return -1;
        } else if (*s) {
            return -1;
        }
    }
    return n;
}

static int format_version(const long *comp, int n, int major, char *buf,
                          size_t len)
{
    char t[96];
    if (n < 2 || comp[0] != major)
        return -1;
    if (n == 2)
        snprintf(t, sizeof t, "%ld.%ld", comp[0], comp[1]);
    else if (n == 3)
        snprintf(t, sizeof t, "%ld.%ld.%ld", comp[0], comp[1], comp[2]);
    else
        snprintf(t, sizeof t, "%ld.%ld.%ld.%ld", comp[0], comp[1], comp[2],
                 comp[3]);
    if (strlen(t) >= len)
        return -1;
    memcpy(buf, t, strlen(t) + 1);
    return 0;
}

int cdd_cudnn_version_from_name(const char *file_name, int major, char *buf,
                                size_t len)
{
    long comp[4];
    const char *p = strstr(file_name, ".so.");
    if (!p)
        return -1;
    int n = dotted(p + 4, comp, 4);
    return format_version(comp, n, major, buf, len);
}

/* The value after UTF-16LE key "\0" in a version resource's String table. */
static int resource_value(const unsigned char *d, size_t n, const char *key,
                          int major, char *buf, size_t len)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + 2 * (kl + 1) <= n; i++) {
        size_t k;
        for (k = 0; k < kl; k++)
            if (d[i + 2 * k] != (unsigned char)key[k] || d[i + 2 * k + 1])
                break;
        if (k < kl || d[i + 2 * kl] || d[i + 2 * kl + 1])
            continue;
        /* The value starts at the next 32-bit boundary of the String
         * structure: skip up to two zero padding characters. */
        size_t j = i + 2 * (kl + 1);
        for (int pad = 0; pad < 2 && j + 1 < n && !d[j] && !d[j + 1]; pad++)
            j += 2;
        char v[40];
        size_t m = 0;
        while (j + 1 < n && m < sizeof v - 1 && !d[j + 1] &&
               (isdigit(d[j]) || d[j] == '.' || d[j] == ',' || d[j] == ' ')) {
            /* Some resources write "8, 5, 0, 96". */
            if (d[j] != ' ')
                v[m++] = d[j] == ',' ? '.' : (char)d[j];
            j += 2;
        }
        v[m] = '\0';
        /* Only a value whose end is in sight: one cut by the end of the
         * buffer (a chunk boundary) would read as a shorter version. */
        if (j + 1 >= n || d[j] || d[j + 1])
            continue;
        long comp[4];
        int nc = dotted(v, comp, 4);
        if (format_version(comp, nc, major, buf, len) == 0)
            return 0;
    }
    return -1;
}

int cdd_cudnn_version_from_resource(const unsigned char *data, size_t n,
                                    int major, char *buf, size_t len)
{
    if (resource_value(data, n, "ProductVersion", major, buf, len) == 0)
        return 0;
    return resource_value(data, n, "FileVersion", major, buf, len);
}

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
        char *d = dir_of(bases[i]), *p = d ? dir_of(d) : NULL;
        char *inc = p ? join(p, "include/cudnn_version.h") : NULL;
        char *text = NULL;
        size_t n = 0;
        long v[3];
        int hv[3];
        int ok = inc && is_file(inc) &&
                 cdd_fs_read_all(inc, 1u << 20, &text, &n) == 0 &&
                 cdd_cudnn_version_from_header(text, &hv[0], &hv[1],
                                               &hv[2]) == 0;
        if (ok) {
            v[0] = hv[0];
            v[1] = hv[1];
            v[2] = hv[2];
            ok = format_version(v, 3, major, buf, len) == 0;
        }
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

/* Versions compared on their first three components ("8.5.0" and
 * "8.5.0.96" agree). 1 same, 0 different, -1 unknown. */
static int ver_same(const char *a, const char *b)
{
    long ca[4], cb[4];
    char x[40], y[40];
    if (!a || !b || !*a || !*b)
        return -1;
    snprintf(x, sizeof x, "%s", a);
    snprintf(y, sizeof y, "%s", b);
    int na = dotted(x, ca, 4), nb = dotted(y, cb, 4);
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
static const char *ver_text(const char *v)
{
    return v && *v ? v : "version unknown";
}

static const char *ver_cudnn(const char *v)
{
    return v && *v ? v : "(version unknown)";
}

/* ---- path lists ------------------------------------------------------------- */

static void plist_clear(struct plist *l)
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

static void plist_load(struct dctx *c, struct plist *l, const char *var,
                       const char *seps)
{
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
        struct pentry *v = realloc(l->v, (l->n + 1) * sizeof *v);
        if (!v) {
            free(abs);
            free(dir);
            nomem(c);
            return;
        }
        l->v = v;
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

/* 1-based position of the folder (resolved) in the list, 0 when absent. */
static int plist_pos(const struct dctx *c, const struct plist *l,
                     const char *real_dir)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i].real && same_path(c, l->v[i].real, real_dir))
            return (int)i + 1;
    return 0;
}

/* ---- toolkits --------------------------------------------------------------- */

static void append_found_by(struct dctx *c, struct cdd_doctor_toolkit *k,
                            const char *how, const char *root)
{
    struct sbuf b = {0};
    char item[1200];
    if (same_path(c, root, k->root) || same_path(c, root, k->real))
        snprintf(item, sizeof item, "%s", how);
    else
        snprintf(item, sizeof item, "%s (%s)", how, root);
    /* Each way once ("PATH" is also inside "CUDA_PATH": whole items). */
    for (const char *p = k->found_by; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == strlen(item) && !strncmp(p, item, len))
            return;
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    sb_printf(&b, "%s%s%s", k->found_by ? k->found_by : "",
              k->found_by ? ", " : "", item);
    if (b.oom) {
        nomem(c);
        sb_free(&b);
        return;
    }
    free(k->found_by);
    k->found_by = b.s;
}

/* Add (or find) the toolkit at root. Index, or -1 when root is no folder. */
static int toolkit_add(struct dctx *c, const char *root, const char *how)
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
        if (same_path(c, res->toolkits[i].real, real)) {
            append_found_by(c, &res->toolkits[i], how, abs);
            idx = (int)i;
            goto out;
        }
    struct cdd_doctor_toolkit *v =
        realloc(res->toolkits, (res->n_toolkits + 1) * sizeof *v);
    if (!v) {
        nomem(c);
        goto out;
    }
    res->toolkits = v;
    struct cdd_doctor_toolkit *k = &v[res->n_toolkits];
    memset(k, 0, sizeof *k);
    k->root = abs;
    k->real = real;
    abs = real = NULL;
    if (cdd_cuda_version_read(k->real, &k->version) != 0)
        memset(&k->version, 0, sizeof k->version);
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
    char *d1 = dir_of(dir), *d2 = d1 ? dir_of(d1) : NULL;
    char *d3 = d2 ? dir_of(d2) : NULL, *root = NULL;
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

struct envscan {
    struct dctx *c;
    struct sbuf stale;   /* variables naming something wrong */
};

static int on_cuda_env(void *ud, const char *name, const char *value)
{
    struct envscan *e = ud;
    struct dctx *c = e->c;
    int maj = 0, min = 0;
    char tail;
    int versioned = sscanf(name, "CUDA_PATH_V%d_%d%c", &maj, &min, &tail) == 2;
    if (strcmp(name, "CUDA_PATH") != 0 && !versioned)
        return 0;
    int idx = toolkit_add(c, value, name);
    const char *unset = c->windows
                            ? "delete it (System Properties > Environment "
                              "Variables)"
                            : "unset it";
    if (idx < 0) {
        sb_printf(&e->stale, "%s%s=%s names no folder: the CUDA it named was "
                  "uninstalled or moved; %s, or point it at an installed "
                  "toolkit", e->stale.n ? "; " : "", name, value, unset);
        return 0;
    }
    const struct cdd_cuda_version *v = &c->res->toolkits[idx].version;
    if (versioned && v->known && (v->major != maj || v->minor != min))
        sb_printf(&e->stale, "%s%s=%s is a CUDA %d.%d tree, not %d.%d: "
                  "`--cuda v%d.%d` and build tools that read it get the "
                  "wrong toolkit; point it at the CUDA %d.%d tree or %s",
                  e->stale.n ? "; " : "", name, value, v->major, v->minor, maj,
                  min, maj, min, maj, min, unset);
    return 0;
}

static int on_default_root(void *ud, const char *path, const char *origin)
{
    toolkit_add(ud, path, origin);
    return 0;
}

static void find_toolkits(struct dctx *c, struct sbuf *stale)
{
    struct envscan e = {c, {0}};
    cdd_env_each("CUDA_PATH", on_cuda_env, &e);
    const char *home = cdd_getenv("CUDA_HOME");
    if (home && toolkit_add(c, home, "CUDA_HOME") < 0)
        sb_printf(&e.stale, "%sCUDA_HOME=%s names no folder: build systems "
                  "that read it (PyTorch extensions, CMake) will fail; point "
                  "it at an installed toolkit or unset it",
                  e.stale.n ? "; " : "", home);
    if (cdd_default_cuda_roots(on_default_root, c) == CDD_E_NOMEM)
        nomem(c);
    cdd_clear_error();
    if (e.stale.oom)
        nomem(c);
    *stale = e.stale;
}

/* ---- copies of cuDNN ---------------------------------------------------- */

const char *cdd_copy_where_name(enum cdd_copy_where w)
{
    switch (w) {
    case CDD_COPY_SEARCH:
        return "search path";
    case CDD_COPY_CONDA:
        return "conda";
    case CDD_COPY_PYTHON:
        return "python package";
    default:
        return "target";
    }
}

static int copy_find(const struct dctx *c, const char *name, const char *real)
{
    for (size_t i = 0; i < c->res->n_copies; i++)
        if (!strcmp(c->res->copies[i].name, name) &&
            same_path(c, c->res->copies[i].real, real))
            return (int)i;
    return -1;
}

/* Record a copy; returns its index (an existing one when the same file of
 * the same name is already listed: found again on the search path, a
 * target's or conda's copy becomes a search copy, with its place in the
 * loader's order), or -1. */
static int copy_add(struct dctx *c, const char *name, const char *path,
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
    struct cdd_doctor_copy *v =
        realloc(res->copies, (res->n_copies + 1) * sizeof *v);
    if (!v) {
        free(real);
        nomem(c);
        return -1;
    }
    res->copies = v;
    struct cdd_doctor_copy *k = &v[res->n_copies];
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
static void origin_of(const struct dctx *c, const char *file, char *buf,
                      size_t len)
{
    char *d = dir_of(file), *real = d ? real_or_abs(d) : NULL;
    int pos = real ? plist_pos(c, c->lib, real) : 0;
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
static size_t search_copies(struct dctx *c, const char *name, int major,
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
        char origin[300];
        origin_of(c, paths[i], origin, sizeof origin);
        int j = copy_add(c, name, paths[i], major, CDD_COPY_SEARCH, origin,
                         (int)i + 1, is_main);
        if (j >= 0 && k < max)
            idx[k++] = j;
    }
    cdd_lib_paths_free(paths, n);
    return k;
}

/* ---- fixes, as the user types them ------------------------------------------ */

/* Put dirs (already joined with the host's separator) first in var. */
static void fix_prepend(const struct dctx *c, struct sbuf *b, const char *var,
                        const char *dirs)
{
    char *n = native(c, dirs);
    if (!n)
        return;
    if (c->windows)
        sb_printf(b, "`set PATH=%s;%%PATH%%` (this console; to keep it: "
                  "System Properties > Environment Variables > Path, move "
                  "it to the top)", n);
    else if (!strcmp(var, "LD_LIBRARY_PATH"))
        sb_printf(b, "`export LD_LIBRARY_PATH=%s${LD_LIBRARY_PATH:+:"
                  "$LD_LIBRARY_PATH}` (this shell; add it to ~/.bashrc to "
                  "keep it)", n);
    else
        sb_printf(b, "`export %s=%s:$%s` (this shell; add it to ~/.bashrc "
                  "to keep it)", var, n, var);
    free(n);
}

/* Make the library folder dir reachable by the loader. */
static void fix_libdir(const struct dctx *c, struct sbuf *b, const char *dir)
{
    fix_prepend(c, b, c->lib->var, dir);
    if (!c->windows)
        sb_printf(b, ", or system-wide: `echo %s | sudo tee "
                  "/etc/ld.so.conf.d/cudnn.conf && sudo ldconfig`", dir);
}

/* ---- PATH and LD_LIBRARY_PATH ----------------------------------------------- */

static void cuda_label(const struct cdd_doctor_toolkit *k, char *buf,
                       size_t len)
{
    if (k->version.known)
        snprintf(buf, len, "CUDA %d.%d", k->version.major, k->version.minor);
    else
        snprintf(buf, len, "CUDA of unknown version at %s", k->root);
}

/* Toolkits of a list with different versions count as different CUDAs;
 * two names of one version (cuda -> cuda-11.6) do not. */
static int same_cuda(const struct dctx *c, int a, int b)
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

/* Look at each entry: which toolkit it belongs to, which cuDNN it holds. */
static void scan_list(struct dctx *c, struct plist *l, int is_lib)
{
    for (size_t i = 0; i < l->n; i++) {
        struct pentry *e = &l->v[i];
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
        struct sbuf b = {0};
        for (int m = 0; m < N_MAJORS; m++) {
            const struct names *nm = &c->names[m];
            for (int s = -1; s < 8; s++) {
                const char *name = s < 0 ? nm->main : nm->subs[s];
                if (!name)
                    break;
                char *p = join(e->real, name);
                if (p && is_file(p)) {
                    if (s < 0) {
                        char *real = real_or_abs(p);
                        char ver[32];
                        const char *from;
                        if (real)
                            read_version(p, real, nm->major, ver, sizeof ver,
                                         &from);
                        sb_printf(&b, "%s%s %s", b.n ? ", " : "", name,
                                  real ? ver_text(ver) : "");
                        free(real);
                    } else if (!b.n) {
                        sb_printf(&b, "cuDNN %d sub-libraries", nm->major);
                    }
                }
                free(p);
            }
        }
        if (b.oom)
            nomem(c);
        e->cudnn = b.s;
    }
}

/* The first toolkit of a list, -1 when none. */
static int first_toolkit(const struct plist *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].toolkit >= 0)
            return l->v[i].toolkit;
    return -1;
}

/* All the list's entries that belong to CUDAs like toolkit t, joined with
 * the host's separator (bin and libnvvp both, say). */
static void entries_of(const struct dctx *c, const struct plist *l, int t,
                       struct sbuf *b)
{
    size_t start = b->n;
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].toolkit >= 0 && l->v[i].toolkit == t)
            sb_printf(b, "%s%s", b->n > start ? (c->sep == ';' ? ";" : ":")
                                              : "", l->v[i].dir);
}

static void check_list(struct dctx *c, struct plist *l, int is_lib)
{
    char name[64];
    struct sbuf list = {0}, d = {0};
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
        const struct pentry *e = &l->v[i];
        if (e->toolkit < 0 && !e->cudnn)
            continue;
        char lab[600] = "";
        if (e->toolkit >= 0)
            cuda_label(&c->res->toolkits[e->toolkit], lab, sizeof lab);
        /* The report keeps a detail to 2 KiB: the first entries matter. */
        if (++listed <= 10)
            sb_printf(&list, "%s#%zu %s (%s%s%s)", list.n ? ", " : "", i + 1,
                      e->dir, lab, *lab && e->cudnn ? "; " : "",
                      e->cudnn ? e->cudnn : "");
        else if (listed == 11)
            sb_printf(&list, ", ...");
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
    if (!list.n) {
        DCHECK(c, name, CDD_CHECK_PASS, "no entry of %s holds CUDA or cuDNN",
               l->var);
    } else if (n_groups <= 1) {
        char lab[600] = "";
        if (n_groups)
            cuda_label(&c->res->toolkits[groups[0]], lab, sizeof lab);
        DCHECK(c, name, CDD_CHECK_PASS,
               "entries holding CUDA or cuDNN, in order: %s%s%s%s",
               sb_str(&list), n_groups ? "; " : "", lab,
               n_groups ? " comes first" : "");
    } else {
        char first[600], lab[600];
        const struct cdd_doctor_toolkit *t0 = &c->res->toolkits[groups[0]];
        cuda_label(t0, first, sizeof first);
        sb_printf(&d, "%d CUDA versions on %s: %s comes first (#%d), so "
                  "programs get its %s", n_groups, l->var, first,
                  is_lib ? t0->lib_path_pos : t0->path_pos, what);
        for (int g = 1; g < n_groups; g++) {
            const struct cdd_doctor_toolkit *tg =
                &c->res->toolkits[groups[g]];
            cuda_label(tg, lab, sizeof lab);
            sb_printf(&d, "%s %s (#%d)", g == 1 ? ", not those of" : ",",
                      lab, is_lib ? tg->lib_path_pos : tg->path_pos);
        }
        sb_printf(&d, ". ");
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
            sb_printf(&d, "The target's CUDA comes first, as it should; "
                      "remove the other CUDA's entries from %s to avoid "
                      "surprises. ", l->var);
        } else {
            for (int g = want > 0 ? want : 1;
                 g < (want > 0 ? want + 1 : n_groups); g++) {
                struct sbuf dirs = {0};
                cuda_label(&c->res->toolkits[groups[g]], lab, sizeof lab);
                entries_of(c, l, groups[g], &dirs);
                sb_printf(&d, "To use %s%s: ", lab,
                          want > 0 ? " (the target's)" : " instead");
                fix_prepend(c, &d, l->var, sb_str(&dirs));
                sb_printf(&d, ". ");
                sb_free(&dirs);
            }
            sb_printf(&d, "Or keep only one CUDA on %s. ", l->var);
        }
        sb_printf(&d, "Entries holding CUDA or cuDNN, in order: %s",
                  sb_str(&list));
        DCHECK(c, name, CDD_CHECK_WARN, "%s", sb_str(&d));
    }
    if (list.oom || d.oom)
        nomem(c);
    sb_free(&list);
    sb_free(&d);
}

/* Linux: nvcc from one CUDA and libraries from another is a classic
 * mismatch (code built with one, run against the other's runtime). */
static void check_path_vs_libpath(struct dctx *c)
{
    int a = first_toolkit(&c->path), b = first_toolkit(&c->libpath);
    if (c->windows || a < 0 || b < 0 || same_cuda(c, a, b))
        return;
    char la[600], lb[600];
    struct sbuf d = {0};
    cuda_label(&c->res->toolkits[a], la, sizeof la);
    cuda_label(&c->res->toolkits[b], lb, sizeof lb);
    /* The libraries of PATH's first CUDA, so both agree. */
    const struct cdd_doctor_toolkit *k = &c->res->toolkits[a];
    char *lib = join(k->real, "lib64");
    sb_printf(&d, "the first CUDA on PATH is %s but the first on "
              "LD_LIBRARY_PATH is %s: programs are built with one and run "
              "with the other's libraries. To use %s for both: ", la, lb, la);
    fix_prepend(c, &d, "LD_LIBRARY_PATH", lib ? lib : k->real);
    DCHECK(c, "path PATH vs LD_LIBRARY_PATH", CDD_CHECK_WARN, "%s",
           sb_str(&d));
    if (d.oom)
        nomem(c);
    free(lib);
    sb_free(&d);
}

/* ---- checks: toolkits and driver ------------------------------------------- */

static void check_toolkits(struct dctx *c, const struct sbuf *stale)
{
    const struct cdd_doctor_result *res = c->res;
    if (stale->n)
        DCHECK(c, "env CUDA_PATH", CDD_CHECK_WARN, "%s", sb_str(stale));
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
        char name[1100], where[200];
        snprintf(name, sizeof name, "cuda %s", k->root);
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
        int alias = !same_path(c, k->root, k->real);
        if (k->version.known) {
            char v[48];
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
    }
}

static void check_driver(struct dctx *c)
{
    struct cdd_gpu_env *g = NULL;
    struct cdd_doctor_result *res = c->res;
    int r = cdd_gpu_env_open(NULL, &g);
    if (r == CDD_E_NOTFOUND) {
        const struct cdd_errinfo *e = cdd_last_error();
        const char *why = e->msg;
        /* The loader's message starts with what we say anyway, or names
         * the library itself. */
        if (!strncmp(why, "no NVIDIA driver: ", 18))
            why += 18;
        int named = e->path[0] && strstr(why, e->path);
        DCHECK(c, "driver", CDD_CHECK_SKIP,
               "no NVIDIA driver found (%s%s%s): GPU programs cannot run on "
               "this host; install the NVIDIA driver if it has a GPU (build "
               "machines without one need none)",
               named ? "" : e->path[0] ? e->path : "libcuda.so.1 / nvcuda.dll",
               named || !*why ? "" : ": ", why);
        cdd_clear_error();
        return;
    }
    if (r) {
        DCHECK(c, "driver", CDD_CHECK_WARN,
               "the NVIDIA driver library is there but unusable: %s%s%s; "
               "reinstall the NVIDIA driver", cdd_last_error()->path,
               cdd_last_error()->path[0] ? ": " : "", cdd_last_error()->msg);
        cdd_clear_error();
        return;
    }
    const struct cdd_gpu_info *gi = cdd_gpu_env_info(g);
    char drv[16];
    res->have_driver = 1;
    snprintf(res->driver_path, sizeof res->driver_path, "%s",
             gi->driver_path);
    snprintf(res->driver_release, sizeof res->driver_release, "%s",
             gi->driver_release);
    res->driver_cuda_version = gi->driver_cuda_version;
    cdd_cuda_version_str(gi->driver_cuda_version, drv, sizeof drv);
    const char *rel = gi->driver_release[0] ? gi->driver_release : "";
    /* Which CUDAs can this driver run? The target's decides pass/fail;
     * other toolkits only warn. */
    struct sbuf too_old = {0};
    enum cdd_cstatus st = CDD_CHECK_PASS;
    char target_note[300] = "";
    const struct cdd_target *t = c->t;
    if (t && t->kind == CDD_TARGET_CUDA && t->version.known) {
        int tm = t->version.major, tn = t->version.minor;
        const char *min = cdd_cuda_min_driver(tm, c->windows);
        enum cdd_drv_fit fit = cdd_gpu_driver_fit(gi->driver_cuda_version,
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
            cdd_gpu_driver_fit(gi->driver_cuda_version, rel, k->version.major,
                               k->version.minor) != CDD_DRV_TOO_OLD)
            continue;
        const char *min = cdd_cuda_min_driver(k->version.major, c->windows);
        sb_printf(&too_old, "%sCUDA %d.%d at %s (needs driver %s%s)",
                  too_old.n ? ", " : "", k->version.major, k->version.minor,
                  k->root, min ? ">= " : "newer", min ? min : "");
    }
    if (too_old.n && st == CDD_CHECK_PASS)
        st = CDD_CHECK_WARN;
    DCHECK(c, "driver", st,
           "NVIDIA driver %s (%s) supports CUDA up to %s%s%s%s%s",
           *rel ? rel : "of unknown release", gi->driver_path, drv,
           target_note, too_old.n ? "; too old for " : "", sb_str(&too_old),
           too_old.n ? ": update the driver to use those" : "");
    if (too_old.oom)
        nomem(c);
    sb_free(&too_old);
    cdd_gpu_env_close(g);
}

/* ---- checks: cuDNN on the search path --------------------------------------- */

static void describe_copies(const struct dctx *c, const int *idx, size_t n,
                            struct sbuf *b)
{
    for (size_t i = 0; i < n; i++) {
        const struct cdd_doctor_copy *k = &c->res->copies[idx[i]];
        if (i == 8) {
            sb_printf(b, "; and %zu more", n - i);
            break;
        }
        sb_printf(b, "%s%zu) %s (%s, %s)%s", i ? "; " : "", i + 1, k->path,
                  ver_text(k->version), k->origin,
                  i == 0 ? " <- the loader picks this one" : "");
    }
}

/* Sub-libraries against the main library's winner: the main library loads
 * them by name on first use, so each must be the same version, best from
 * the same folder; cuDNN 8 aborts when one is missing. */
static void check_subs(struct dctx *c, int m)
{
    const struct names *nm = &c->names[m];
    /* Indexes, not pointers: search_copies() grows res->copies. */
    const int wi = c->winner[m];
    char *wdir = dir_of(c->res->copies[wi].real), name[128];
    char wver[32];
    snprintf(wver, sizeof wver, "%s", c->res->copies[wi].version);
    struct sbuf bad = {0}, elsewhere = {0};
    int n_subs = 0, n_bad = 0;
    snprintf(name, sizeof name, "cudnn %s sub-libraries", nm->main);
    for (int s = 0; s < 8 && nm->subs[s]; s++) {
        int idx[16];
        n_subs++;
        size_t n = search_copies(c, nm->subs[s], nm->major, 0, idx, 16);
        if (!n) {
            sb_printf(&bad, "%s%s missing", bad.n ? "; " : "", nm->subs[s]);
            n_bad++;
            continue;
        }
        const struct cdd_doctor_copy *k = &c->res->copies[idx[0]];
        char *kdir = dir_of(k->real);
        int same_dir = kdir && wdir && same_path(c, kdir, wdir);
        if (ver_same(k->version, wver) == 0) {
            sb_printf(&bad, "%s%s is %s (%s)", bad.n ? "; " : "",
                      nm->subs[s], k->version, k->path);
            n_bad++;
        } else if (!same_dir) {
            sb_printf(&elsewhere, "%s%s from %s", elsewhere.n ? "; " : "",
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
               nm->main, ver_text(w->version), w->path, n_bad, n_subs,
               sb_str(&bad));
    else if (elsewhere.n)
        DCHECK(c, name, CDD_CHECK_WARN,
               "all %d have the winner's version, but some come from another "
               "folder than %s: %s; keep one cuDNN in one folder",
               n_subs, wdir ? wdir : w->path, sb_str(&elsewhere));
    else
        DCHECK(c, name, CDD_CHECK_PASS,
               "all %d found beside the winner in %s, version %s", n_subs,
               wdir ? wdir : "?", ver_text(w->version));
    if (bad.oom || elsewhere.oom)
        nomem(c);
    sb_free(&bad);
    sb_free(&elsewhere);
    free(wdir);
}

static void check_search(struct dctx *c)
{
    int any = 0;
    for (int m = 0; m < N_MAJORS; m++) {
        const struct names *nm = &c->names[m];
        int idx[32];
        char name[128];
        size_t n = search_copies(c, nm->main, nm->major, 1, idx, 32);
        c->winner[m] = n ? idx[0] : -1;
        if (!n)
            continue;
        any = 1;
        struct sbuf d = {0};
        int differ = 0;
        for (size_t i = 1; i < n; i++)
            if (ver_same(c->res->copies[idx[i]].version,
                         c->res->copies[idx[0]].version) != 1)
                differ = 1;
        snprintf(name, sizeof name, "cudnn %s", nm->main);
        if (n == 1) {
            describe_copies(c, idx, n, &d);
            DCHECK(c, name, CDD_CHECK_PASS, "one copy: %s", sb_str(&d));
        } else {
            sb_printf(&d, "%zu copies in the loader's order: ", n);
            describe_copies(c, idx, n, &d);
            if (differ) {
                const struct cdd_doctor_copy *k = &c->res->copies[idx[1]];
                char *dir = dir_of(k->path);
                sb_printf(&d, ". Programs get %s; to get %s (%s) instead: ",
                          ver_text(c->res->copies[idx[0]].version), k->path,
                          ver_text(k->version));
                fix_prepend(c, &d, c->lib->var, dir ? dir : k->path);
                sb_printf(&d, "; or remove the copies you do not want");
                free(dir);
            } else {
                sb_printf(&d, ". All the same version: harmless, but "
                          "removing the extra copies avoids surprises at "
                          "the next upgrade");
            }
            DCHECK(c, name, differ ? CDD_CHECK_WARN : CDD_CHECK_PASS, "%s",
                   sb_str(&d));
        }
        if (d.oom)
            nomem(c);
        sb_free(&d);
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

/* ---- checks: conda and Python package copies --------------------------------- */

/* The copy a conda or Python copy competes with: the target's of that
 * major, else the loader's winner. -1 when none. */
static int reference_copy(const struct dctx *c, int m)
{
    if (c->t_copy[m] >= 0 && !c->t_windows == !c->windows)
        return c->t_copy[m];
    return c->winner[m];
}

static void report_shadow(struct dctx *c, const char *name, int k, int m,
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
    if (same_path(c, cp->real, r->real)) {
        DCHECK(c, name, CDD_CHECK_PASS, "%s has cuDNN %s at %s: the same "
               "file as %s copy", who, ver_cudnn(cp->version), cp->path,
               rname);
        return;
    }
    int same = ver_same(cp->version, r->version) == 1;
    DCHECK(c, name, same ? CDD_CHECK_PASS : CDD_CHECK_WARN,
           "%s has its own cuDNN %s at %s; %s, so it shadows %s copy %s "
           "(%s)%s%s", who, ver_cudnn(cp->version), cp->path, why, rname,
           r->path, ver_text(r->version),
           same ? ": the same version, so harmless" : ". Fix: ",
           same ? "" : fix);
}

static void check_conda(struct dctx *c)
{
    const char *env = cdd_getenv("CONDA_PREFIX");
    /* Absolute, and in the core's separator style on Windows too. */
    char *cp = env ? cdd_absolute_path(env) : NULL;
    char *cp_real = cp ? real_or_abs(cp) : NULL;
    static const char *const subs[] = {"lib", "Library/bin"};
    if (!cp || !cp_real)
        goto out;
    for (int m = 0; m < N_MAJORS; m++)
        for (size_t s = 0; s < 2; s++) {
            char *dir = join(cp, subs[s]);
            char *p = dir ? join(dir, c->names[m].main) : NULL;
            if (p && is_file(p)) {
                char name[128], fix[1200], who[1200];
                char *pdir = dir_of(p), *pdir_real = pdir ? real_or_abs(pdir)
                                                         : NULL;
                int pos = pdir_real ? plist_pos(c, c->lib, pdir_real) : 0;
                char origin[64];
                snprintf(origin, sizeof origin, "CONDA_PREFIX");
                int k = copy_add(c, c->names[m].main, p, c->names[m].major,
                                 CDD_COPY_CONDA, origin, 0, 1);
                snprintf(name, sizeof name, "conda %s", c->names[m].main);
                snprintf(who, sizeof who, "the conda environment %s "
                         "(CONDA_PREFIX)", cp);
                snprintf(fix, sizeof fix,
                         "remove the environment's cuDNN (`conda remove "
                         "cudnn`), or install the cuDNN you want into it: "
                         "`cudnn-deploy install --prefix %s`", cp);
                if (k >= 0 && c->t && same_path(c, cp_real, c->t->root)) {
                    DCHECK(c, name, CDD_CHECK_PASS, "%s is the target; its "
                           "cuDNN %s is at %s", who,
                           ver_cudnn(c->res->copies[k].version), p);
                } else if (k >= 0) {
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
                free(pdir);
                free(pdir_real);
            }
            free(p);
            free(dir);
        }
out:
    free(cp_real);
    free(cp);
}

struct pyscan {
    struct dctx *c;
    char **seen;        /* site folders done (resolved) */
    size_t n_seen;
};

static int on_site(void *ud, const char *site, const char *origin)
{
    struct pyscan *ps = ud;
    struct dctx *c = ps->c;
    char *real = real_or_abs(site);
    if (!real) {
        nomem(c);
        return 0;
    }
    for (size_t i = 0; i < ps->n_seen; i++)
        if (same_path(c, ps->seen[i], real)) {
            free(real);
            return 0;
        }
    char **v = realloc(ps->seen, (ps->n_seen + 1) * sizeof *v);
    if (!v) {
        free(real);
        nomem(c);
        return 0;
    }
    ps->seen = v;
    v[ps->n_seen++] = real;
    for (size_t pk = 0; pk < sizeof py_pkgs / sizeof py_pkgs[0]; pk++)
        for (int m = 0; m < N_MAJORS; m++) {
            char *dir = join(site, py_pkgs[pk].sub);
            char *p = dir ? join(dir, c->names[m].main) : NULL;
            if (p && is_file(p)) {
                char name[1200], who[1200], lab[300];
                const char *why, *fix;
                snprintf(lab, sizeof lab, "%s (%s)", py_pkgs[pk].label,
                         origin);
                int k = copy_add(c, c->names[m].main, p, c->names[m].major,
                                 CDD_COPY_PYTHON, lab, 0, 1);
                snprintf(name, sizeof name, "python %s", dir);
                if (!strcmp(py_pkgs[pk].label, "torch")) {
                    snprintf(who, sizeof who, "PyTorch in %s (%s)", site,
                             origin);
                    why = "`import torch` loads its bundled copy by path, "
                          "before anything on the search path";
                    fix = "this copy belongs to the torch wheel (replaced at "
                          "its next upgrade); to run another cuDNN, install "
                          "the torch build made for it rather than copying "
                          "files into torch/lib";
                } else {
                    snprintf(who, sizeof who, "pip's nvidia-cudnn package "
                             "in %s (%s)", site, origin);
                    why = "PyTorch and TensorFlow wheels that depend on it "
                          "load it by path";
                    fix = "`pip install` the nvidia-cudnn version you want "
                          "in that environment, or uninstall it if nothing "
                          "there needs it";
                }
                if (k >= 0)
                    report_shadow(c, name, k, m, who, why, fix);
            }
            free(p);
            free(dir);
        }
    return 0;
}

static void check_python(struct dctx *c)
{
    struct pyscan ps = {c, NULL, 0};
    if (cdd_python_site_dirs(on_site, &ps) == CDD_E_NOMEM)
        nomem(c);
    cdd_clear_error();
    for (size_t i = 0; i < ps.n_seen; i++)
        free(ps.seen[i]);
    free(ps.seen);
}

/* ---- checks: variables the loader ignores ----------------------------------- */

static void check_cudnn_path(struct dctx *c)
{
    static const char *const subs[] = {"bin", "lib64", "lib", "lib/x64"};
    const char *cp = cdd_getenv("CUDNN_PATH");
    char *top = NULL, *libdir = NULL, *real = NULL;
    struct sbuf d = {0};
    int pos = 0;
    if (!cp)
        return;
    /* Absolute, and in the core's separator style on Windows too. */
    if (!(top = cdd_absolute_path(cp))) {
        nomem(c);
        goto out;
    }
    if (!is_dir(top)) {
        DCHECK(c, "env CUDNN_PATH", CDD_CHECK_WARN,
               "CUDNN_PATH=%s names no folder: build systems that read it "
               "(CMake's FindCUDNN, PyTorch's setup.py) will fail; point it "
               "at a cuDNN folder or unset it", cp);
        goto out;
    }
    /* The folder of CUDNN_PATH that holds the libraries, if any. */
    for (size_t s = 0; s < 4 && !libdir; s++)
        for (int m = 0; m < N_MAJORS && !libdir; m++) {
            char *sub = join(top, subs[s]);
            char *p = sub ? join(sub, c->names[m].main) : NULL;
            if (p && is_file(p))
                libdir = sub, sub = NULL;
            free(p);
            free(sub);
        }
    real = libdir ? real_or_abs(libdir) : NULL;
    pos = real ? plist_pos(c, c->lib, real) : 0;
    if (c->windows)
        sb_printf(&d, "CUDNN_PATH=%s is set, but the Windows DLL loader "
                  "ignores it: programs find cuDNN's DLLs only in their own "
                  "folder, the system folders and PATH. ", cp);
    else
        sb_printf(&d, "CUDNN_PATH=%s is read by build systems (CMake's "
                  "FindCUDNN, PyTorch's setup.py) but ignored by the dynamic "
                  "loader: at run time cuDNN is found through "
                  "LD_LIBRARY_PATH, /etc/ld.so.conf.d or a program's RPATH. ",
                  cp);
    if (pos)
        sb_printf(&d, "Its %s is on %s (#%d), which is what counts.", libdir,
                  c->lib->var, pos);
    else if (libdir) {
        sb_printf(&d, "Its %s is not on %s; fix: ", libdir, c->lib->var);
        fix_libdir(c, &d, libdir);
        sb_printf(&d, ", or install cuDNN into the CUDA tree: "
                  "`cudnn-deploy install --cuda vX.Y`");
    } else {
        sb_printf(&d, "It holds no %s or %s under bin, lib64 or lib.",
                  c->names[0].main, c->names[1].main);
    }
    DCHECK(c, "env CUDNN_PATH", pos ? CDD_CHECK_PASS : CDD_CHECK_WARN, "%s",
           sb_str(&d));
    if (d.oom)
        nomem(c);
out:
    sb_free(&d);
    free(real);
    free(libdir);
    free(top);
}

/* ---- checks: Windows dependencies ------------------------------------------ */

/* cuDNN 8.3 to 9.1 import zlibwapi.dll (BRIEF §4). 1 yes, 0 no, -1 unknown. */
static int needs_zlibwapi(const char *version, int major)
{
    long v[4];
    char b[40];
    snprintf(b, sizeof b, "%s", version);
    if (dotted(b, v, 4) < 2)
        return major == 8 ? -1 : 0; /* 9.x unknown: likely >= 9.2 */
    return (v[0] == 8 && v[1] >= 3) || (v[0] == 9 && v[1] <= 1);
}

static void check_zlibwapi_for(struct dctx *c, int k, const char *label,
                               int host_search)
{
    const struct cdd_doctor_copy *cp = &c->res->copies[k];
    int major = cp->name[strlen(cp->name) - 5] - '0'; /* cudnn64_N.dll */
    int need = needs_zlibwapi(cp->version, major);
    char name[1200];
    char *dir = dir_of(cp->real), *beside = dir ? join(dir, "zlibwapi.dll")
                                                 : NULL;
    char **paths = NULL;
    size_t n = 0;
    const char *found = NULL;
    if (!need)
        goto out;
    snprintf(name, sizeof name, "windows.zlibwapi %s", label);
    if (beside && is_file(beside))
        found = beside;
    if (!found && host_search && cdd_lib_find_all("zlibwapi.dll", &paths,
                                                  &n) == 0 && n)
        found = paths[0];
    cdd_clear_error();
    if (found)
        DCHECK(c, name, CDD_CHECK_PASS, "cuDNN %s at %s needs zlibwapi.dll: "
               "found at %s", ver_cudnn(cp->version), cp->path, found);
    else
        DCHECK(c, name, need > 0 ? CDD_CHECK_FAIL : CDD_CHECK_WARN,
               "cuDNN %s at %s %s zlibwapi.dll, and it is %s: loading "
               "cuDNN's libraries fails with 'Could not locate ... error "
               "126'. Fix: %s", ver_cudnn(cp->version), cp->path,
               need > 0 ? "needs" : "may need (cuDNN 8.3 to 9.1 do)",
               host_search ? "not beside it, in the system folders or on "
                             "PATH"
                           : "not beside it (a Windows tree: PATH cannot be "
                             "searched from this host)",
               cdd_dependency_hint("zlibwapi.dll"));
out:
    cdd_lib_paths_free(paths, n);
    free(beside);
    free(dir);
}

static void check_windows(struct dctx *c)
{
    if (c->windows) {
        char *sys = cdd_system_dir();
        struct sbuf miss = {0};
        for (size_t i = 0; sys && i < sizeof vc_runtime / sizeof vc_runtime[0];
             i++) {
            char *p = join(sys, vc_runtime[i]);
            if (p && !is_file(p))
                sb_printf(&miss, "%s%s", miss.n ? ", " : "", vc_runtime[i]);
            free(p);
        }
        if (sys && miss.n)
            DCHECK(c, "windows.vcruntime", CDD_CHECK_FAIL,
                   "%s missing from %s: cuDNN's DLLs need the Visual C++ "
                   "runtime and fail to load with error 126 without it. "
                   "Fix: install %s "
                   "(https://aka.ms/vs/17/release/vc_redist.x64.exe)",
                   sb_str(&miss), sys, cdd_dependency_hint("msvcp140.dll"));
        else if (sys)
            DCHECK(c, "windows.vcruntime", CDD_CHECK_PASS,
                   "the Visual C++ runtime (msvcp140.dll, vcruntime140.dll, "
                   "vcruntime140_1.dll) is in %s", sys);
        if (miss.oom)
            nomem(c);
        sb_free(&miss);
        free(sys);
        for (int m = 0; m < N_MAJORS; m++)
            if (c->winner[m] >= 0)
                check_zlibwapi_for(c, c->winner[m], "search path", 1);
    }
    for (int m = 0; m < N_MAJORS; m++)
        if (c->t_windows && c->t_copy[m] >= 0 && c->t_copy[m] != c->winner[m])
            check_zlibwapi_for(c, c->t_copy[m], "target", c->windows);
}

/* ---- the target -------------------------------------------------------------- */

static void target_prepare(struct dctx *c)
{
    const struct cdd_target *t = c->t;
    enum cdd_platform plat = cdd_platform_host();
    /* The receipt is read through the tree (tree.h): beneath its root,
     * no link followed in .cudnn-deploy. */
    struct cdd_tree *tree = NULL;
    if (cdd_tree_open(t->root, &tree) != 0 ||
        cdd_receipt_load(tree, &c->rc) != 0) {
        c->rc_bad = 1;
        cdd_clear_error();
    }
    cdd_tree_close(tree);
    if (c->rc && cdd_platform_parse(c->rc->platform, &plat) != 0)
        plat = cdd_platform_host();
    cdd_clear_error();
    c->t_windows = plat == CDD_PLATFORM_WINDOWS_X86_64;
    c->t_names = c->t_windows ? windows_names : linux_names;
    const char *rel = cdd_layout_dir(cdd_layout_select(t->kind, plat),
                                     CDD_ROLE_RUNTIME);
    c->t_libdir = join(t->root, rel ? rel : "lib");
    c->t_libdir_real = c->t_libdir ? real_or_abs(c->t_libdir) : NULL;
    if (!c->t_libdir || !c->t_libdir_real) {
        nomem(c);
        return;
    }
    for (int m = 0; m < N_MAJORS; m++) {
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

static void check_target(struct dctx *c)
{
    const struct cdd_target *t = c->t;
    struct sbuf d = {0};
    enum cdd_cstatus st = CDD_CHECK_PASS;
    if (t->kind == CDD_TARGET_CUDA && t->version.known) {
        sb_printf(&d, "CUDA %d.%d", t->version.major, t->version.minor);
        if (t->version.patch >= 0)
            sb_printf(&d, ".%d", t->version.patch);
        sb_printf(&d, " tree (from %s) at %s, from %s", t->version.source,
                  t->root, t->how);
    } else if (t->kind == CDD_TARGET_CUDA) {
        st = CDD_CHECK_WARN;
        sb_printf(&d, "CUDA tree at %s (from %s) of unknown version: no "
                  "version.json, version.txt or include/cuda.h; reinstall "
                  "the toolkit or check the folder", t->root, t->how);
    } else {
        sb_printf(&d, "prefix %s (from %s)", t->root, t->how);
    }
    if (c->rc)
        sb_printf(&d, "; %s %s (%s) installed by cudnn-deploy at %s",
                  c->rc->product ? c->rc->product : "cuDNN",
                  c->rc->version ? c->rc->version : "?",
                  c->rc->platform ? c->rc->platform : "?",
                  c->rc->installed_at ? c->rc->installed_at : "?");
    else if (c->rc_bad) {
        st = CDD_CHECK_WARN;
        sb_printf(&d, "; its receipt (.cudnn-deploy/receipt.json) cannot be "
                  "read: run `cudnn-deploy status` on it");
    } else {
        int any = 0;
        for (int m = 0; m < N_MAJORS; m++)
            if (c->t_copy[m] >= 0) {
                const struct cdd_doctor_copy *k = &c->res->copies[c->t_copy[m]];
                sb_printf(&d, "%s%s %s", any ? ", " : "; holds ", k->name,
                          ver_text(k->version));
                any = 1;
            }
        sb_printf(&d, "%s", any ? " not installed by cudnn-deploy"
                                : "; no cuDNN in it yet");
    }
    DCHECK(c, "target", st, "%s", sb_str(&d));
    if (d.oom)
        nomem(c);
    sb_free(&d);
}

/* Is the target's library folder where the loader looks? */
static void check_target_search(struct dctx *c)
{
    struct sbuf d = {0};
    if (!c->t_windows != !c->windows) {
        DCHECK(c, "target.search", CDD_CHECK_SKIP,
               "a %s tree: its search path is that of the machine it will "
               "run on", c->t_windows ? "Windows" : "Linux");
        return;
    }
    int pos = plist_pos(c, c->lib, c->t_libdir_real);
    int cached = 0;
    for (int m = 0; !pos && m < N_MAJORS; m++)
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
        sb_printf(&d, "%s is not on the loader's search path: programs that "
                  "load cuDNN%s by name (PyTorch, TensorFlow) will not find "
                  "the target's libraries. Fix: ", c->t_libdir,
                  c->t->kind == CDD_TARGET_CUDA ? " or CUDA libraries" : "");
        fix_libdir(c, &d, c->t_libdir);
        DCHECK(c, "target.search", CDD_CHECK_WARN, "%s", sb_str(&d));
    }
    if (d.oom)
        nomem(c);
    sb_free(&d);
}

/* Does the loader pick the target's cuDNN, or another copy before it? */
static void check_target_shadow(struct dctx *c)
{
    if (!c->t_windows != !c->windows)
        return;
    for (int m = 0; m < N_MAJORS; m++) {
        if (c->t_copy[m] < 0)
            continue;
        const struct cdd_doctor_copy *ours = &c->res->copies[c->t_copy[m]];
        const char *by = c->rc ? " (installed by cudnn-deploy)" : "";
        char name[128];
        struct sbuf d = {0};
        snprintf(name, sizeof name, "target.shadow %s", ours->name);
        int w = c->winner[m];
        if (w < 0) {
            DCHECK(c, name, CDD_CHECK_WARN,
                   "no copy of %s is on the search path, not even the "
                   "target's%s: see target.search", ours->name, by);
        } else if (w == c->t_copy[m]) {
            DCHECK(c, name, CDD_CHECK_PASS,
                   "the loader picks the target's %s (%s)%s", ours->path,
                   ver_text(ours->version), by);
        } else {
            const struct cdd_doctor_copy *win = &c->res->copies[w];
            const char *off = "";
            if (!ours->order)
                off = plist_pos(c, c->lib, c->t_libdir_real)
                          ? ", which the loader passes over although its "
                            "folder is searched (not a loadable library for "
                            "this machine?)"
                          : ", which is not on the search path";
            sb_printf(&d, "the loader picks %s (%s, %s), not the target's "
                      "%s (%s)%s%s: programs get that copy. Fix: ", win->path,
                      ver_text(win->version), win->origin, ours->path,
                      ver_text(ours->version), by, off);
            fix_prepend(c, &d, c->lib->var, c->t_libdir);
            sb_printf(&d, ", or remove %s", win->path);
            DCHECK(c, name, CDD_CHECK_WARN, "%s", sb_str(&d));
        }
        if (d.oom)
            nomem(c);
        sb_free(&d);
    }
}

/* ---- the whole ---------------------------------------------------------------- */

void cdd_doctor_result_clear(struct cdd_doctor_result *r)
{
    if (!r)
        return;
    cdd_checks_clear(&r->checks);
    for (size_t i = 0; i < r->n_toolkits; i++) {
        free(r->toolkits[i].root);
        free(r->toolkits[i].real);
        free(r->toolkits[i].found_by);
    }
    free(r->toolkits);
    for (size_t i = 0; i < r->n_copies; i++) {
        free(r->copies[i].name);
        free(r->copies[i].path);
        free(r->copies[i].real);
        free(r->copies[i].origin);
    }
    free(r->copies);
    memset(r, 0, sizeof *r);
}

int cdd_doctor(const struct cdd_doctor_opts *o, struct cdd_doctor_result *res)
{
    struct dctx c;
    struct sbuf stale = {0};
    memset(res, 0, sizeof *res);
    memset(&c, 0, sizeof c);
    c.o = o;
    c.res = res;
    c.t = o ? o->target : NULL;
    c.windows = cdd_platform_host() == CDD_PLATFORM_WINDOWS_X86_64;
    c.sep = c.windows ? ';' : ':';
    c.names = c.windows ? windows_names : linux_names;
    for (int m = 0; m < N_MAJORS; m++)
        c.winner[m] = c.t_copy[m] = -1;

    /* Look. */
    plist_load(&c, &c.path, "PATH", c.windows ? ";" : ":");
    if (!c.windows)
        /* ld.so splits LD_LIBRARY_PATH on ':' and ';'. */
        plist_load(&c, &c.libpath, "LD_LIBRARY_PATH", ":;");
    c.lib = c.windows ? &c.path : &c.libpath;
    find_toolkits(&c, &stale);
    scan_list(&c, &c.path, 0);
    if (!c.windows)
        scan_list(&c, &c.libpath, 1);

    /* Report, the target first: it is what the user asked about. */
    if (c.t) {
        target_prepare(&c);
        check_target(&c);
    }
    check_toolkits(&c, &stale);
    check_list(&c, &c.path, 0);
    if (!c.windows) {
        check_list(&c, &c.libpath, 1);
        check_path_vs_libpath(&c);
    }
    check_driver(&c);
    check_search(&c);
    check_conda(&c);
    check_python(&c);
    check_cudnn_path(&c);
    check_windows(&c);
    if (c.t) {
        check_target_search(&c);
        check_target_shadow(&c);
    }

    sb_free(&stale);
    plist_clear(&c.path);
    plist_clear(&c.libpath);
    cdd_receipt_free(c.rc);
    free(c.t_libdir);
    free(c.t_libdir_real);
    cdd_clear_error();
    if (c.err)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    return 0;
}
