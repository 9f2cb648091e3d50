/* Library loading on POSIX systems (see loader.h): dlopen by absolute path
 * only, and the Linux loader's search order emulated, so that the driver
 * library is found the way ld.so would find it and then loaded by the full
 * path it was found at.
 *
 * The search order emulated for a bare soname (glibc ld.so, for a dlopen()
 * from a program without DT_RPATH/DT_RUNPATH, which is what we are):
 *   1. LD_LIBRARY_PATH, left to right (':' or ';' separated; an empty entry
 *      is the current folder);
 *   2. /etc/ld.so.cache (ldcache.c);
 *   3. the default folders.
 * Candidates that ld.so would skip are skipped too: missing files, folders,
 * and ELF files of another class or machine (a 32-bit libcuda.so.1 in a
 * multilib folder on LD_LIBRARY_PATH is passed over by ld.so, and must be by
 * us). glibc-hwcaps subfolders of LD_LIBRARY_PATH entries are not searched:
 * the NVIDIA driver never installs there. */
#include "cdd/loader.h"

#include "cdd/compat_attr.h"
#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/strbuf.h"
#include "ldcache.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DRIVER_SONAME "libcuda.so.1"
#define DRIVER_ENV "CUDNN_DEPLOY_DRIVER_LIB"
#define LD_CACHE "/etc/ld.so.cache"

/* ld.so's trusted folders on x86-64: the Debian/Ubuntu multiarch ones, the
 * Fedora/RHEL/SUSE lib64 ones, then the generic ones. */
static const char *const default_dirs[] = {
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
};

/* Not searched by ld.so, but where the driver commonly lives when it is not
 * in the cache: the NVIDIA container runtime's legacy mount point, and WSL2's
 * driver folder (normally in ld.so.conf, but not always in containers). They
 * come after the defaults so they never shadow what ld.so itself would pick.
 * Loading from there is still safe for cuDNN: once libcuda.so.1 is loaded
 * by path, ld.so answers cudart's own dlopen("libcuda.so.1") with that copy,
 * by soname. */
static const char *const driver_extra_dirs[] = {
    "/usr/local/nvidia/lib64",
    "/usr/lib/wsl/lib",
};

/* The ELF machine we run as: a library for another one is skipped, as ld.so
 * skips it. 0 where we do not know (no check then). */
#if defined(__x86_64__)
#define HOST_EM 62 /* EM_X86_64 */
#elif defined(__aarch64__)
#define HOST_EM 183 /* EM_AARCH64 */
#else
#define HOST_EM 0
#endif

struct cdd_lib {
    void *h;
    char *path;
};

int cdd_lib_open(const char *abs_path, struct cdd_lib **out)
{
    struct cdd_lib *l = NULL;
    *out = NULL;
    if (!abs_path || abs_path[0] != '/')
        return cdd_fail(CDD_E_USAGE, abs_path, 0,
                        "refusing to load a library by a relative or bare "
                        "name: an absolute path is required");
    struct stat st;
    if (stat(abs_path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR))
        return cdd_fail(CDD_E_NOTFOUND, abs_path, errno, "no such library");
    l = calloc(1, sizeof *l);
    if (!l || !(l->path = strdup(abs_path))) {
        free(l);
        return cdd_fail(CDD_E_NOMEM, abs_path, 0, NULL);
    }
    (void)dlerror(); /* clear a stale message */
    l->h = dlopen(abs_path, RTLD_NOW | RTLD_LOCAL);
    if (!l->h) {
        /* Keep the loader's own words: they name the missing dependency or
         * the wrong ELF class, which is what the user needs. */
        const char *m = dlerror();
        /* ld.so out of memory ("cannot allocate symbol search list:
         * Cannot allocate memory"; "cannot create shared object
         * descriptor", which only a failed allocation says): no finding
         * about the library. */
        int nomem = m && (strstr(m, strerror(ENOMEM)) != NULL ||
                          strstr(m, "cannot create shared object "
                                    "descriptor") != NULL);
        int r = cdd_fail(nomem ? CDD_E_NOMEM : CDD_E_CHECK, abs_path,
                         nomem ? ENOMEM : 0, "%s",
                         m ? m : "dlopen failed without a message");
        free(l->path);
        free(l);
        return r;
    }
    *out = l;
    return 0;
}

void *cdd_lib_sym(struct cdd_lib *l, const char *name)
{
    if (!l || !l->h || !name)
        return NULL;
    (void)dlerror();
    return dlsym(l->h, name);
}

cdd_lib_fn cdd_lib_func(struct cdd_lib *l, const char *name)
{
    void *p = cdd_lib_sym(l, name);
    cdd_lib_fn f;
    /* POSIX guarantees a data pointer from dlsym can hold a function's
     * address; copying the representation avoids the ISO C cast. */
    _Static_assert(sizeof f == sizeof p, "function and data pointers differ");
    memcpy(&f, &p, sizeof f);
    return f;
}

const char *cdd_lib_path(const struct cdd_lib *l)
{
    return l ? l->path : NULL;
}

void cdd_lib_close(struct cdd_lib *l)
{
    if (!l)
        return;
    if (l->h)
        dlclose(l->h);
    free(l->path);
    free(l);
}

/* ---- search ------------------------------------------------------------ */

struct found {
    char **v;
    size_t n, cap, dev_cap, ino_cap;
    dev_t *dev;
    ino_t *ino;
    int first_only;
};

/* Would ld.so accept this file? A regular file (after symlinks) that is an
 * ELF of our class and machine. A file we cannot read is skipped: ld.so
 * could not open it either. */
static int candidate_ok(const char *path, struct stat *st)
{
    if (stat(path, st) != 0 || !S_ISREG(st->st_mode))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    unsigned char h[20]; /* fixed: the ELF header's first 20 bytes */
    ssize_t got = read(fd, h, sizeof h);
    close(fd);
    if (got != (ssize_t)sizeof h || memcmp(h, "\177ELF", 4) != 0)
        return 0;
    if (HOST_EM == 0)
        return 1;
    /* ELFCLASS64, little-endian, e_machine: what both our hosts are. */
    unsigned em = (unsigned)h[18] | (unsigned)h[19] << 8;
    return h[4] == 2 && h[5] == 1 && em == HOST_EM;
}

/* Add path if ld.so would take it and it is not a file already listed
 * (merged-/usr systems reach one file as /lib/... and /usr/lib/...). */
static int consider(struct found *f, const char *path)
{
    struct stat st;
    if (!candidate_ok(path, &st))
        return 0;
    for (size_t i = 0; i < f->n; i++)
        if (f->dev[i] == st.st_dev && f->ino[i] == st.st_ino)
            return 0;
    size_t need = f->n + 1;
    int r = CDD_GROW(f->v, &f->cap, need, CDD_LIB_COPIES_MAX, "copies");
    if (!r)
        r = CDD_GROW(f->dev, &f->dev_cap, need, CDD_LIB_COPIES_MAX, "copies");
    if (!r)
        r = CDD_GROW(f->ino, &f->ino_cap, need, CDD_LIB_COPIES_MAX, "copies");
    if (r)
        return r;
    if (!(f->v[f->n] = strdup(path)))
        return CDD_E_NOMEM;
    f->dev[f->n] = st.st_dev;
    f->ino[f->n] = st.st_ino;
    f->n++;
    return 0;
}

static int done(const struct found *f)
{
    return f->first_only && f->n > 0;
}

static int consider_in(struct found *f, const char *dir, const char *soname)
{
    size_t len = strlen(dir) + strlen(soname) + 2;
    char *p = malloc(len);
    if (!p)
        return CDD_E_NOMEM;
    snprintf(p, len, "%s%s%s", dir,
             dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", soname);
    int r = consider(f, p);
    free(p);
    return r;
}

static int search_ld_library_path(struct found *f, const char *soname)
{
    const char *llp = cdd_getenv("LD_LIBRARY_PATH");
    if (!llp)
        return 0;
    const char *p = llp;
    for (;;) {
        size_t len = strcspn(p, ":;");
        char *dir = malloc(len + 1);
        if (!dir)
            return CDD_E_NOMEM;
        memcpy(dir, p, len);
        dir[len] = '\0';
        int r = 0;
        /* Entries with dynamic string tokens ($ORIGIN, $LIB, $PLATFORM)
         * depend on the loading object; we do not guess them. */
        if (!strchr(dir, '$')) {
            /* ld.so opens a relative entry relative to the current folder
             * (an empty entry is the current folder itself): make that
             * explicit, so what we load is an absolute path. */
            char *abs = cdd_absolute_path(len ? dir : ".");
            if (!abs)
                r = CDD_E_NOMEM;
            else
                r = consider_in(f, abs, soname);
            free(abs);
        }
        free(dir);
        if (r || done(f))
            return r;
        if (!p[len])
            return 0;
        p += len + 1;
    }
}

static int search_cache(struct found *f, const char *soname)
{
    char **paths = NULL;
    size_t n = 0;
    /* An unreadable or malformed cache is passed over, as ld.so passes
     * over it; the default folders still apply. */
    if (cdd_ldcache_lookup(LD_CACHE, soname, &paths, &n) != 0)
        return 0;
    int r = 0;
    for (size_t i = 0; i < n && !r && !done(f); i++)
        r = consider(f, paths[i]);
    cdd_ldcache_free(paths, n);
    return r;
}

static int search(const char *soname, int driver, int first_only,
                  char ***paths, size_t *n)
{
    struct found f = {0};
    f.first_only = first_only;
    *paths = NULL;
    *n = 0;
    if (!soname || !*soname || strchr(soname, '/'))
        return cdd_fail(CDD_E_USAGE, soname, 0,
                        "a library name without folders is expected");
    int r = search_ld_library_path(&f, soname);
    if (!r && !done(&f))
        r = search_cache(&f, soname);
    for (size_t i = 0; !r && !done(&f) &&
                       i < sizeof default_dirs / sizeof default_dirs[0];
         i++)
        r = consider_in(&f, default_dirs[i], soname);
    for (size_t i = 0; driver && !r && !done(&f) &&
                       i < sizeof driver_extra_dirs / sizeof driver_extra_dirs[0];
         i++)
        r = consider_in(&f, driver_extra_dirs[i], soname);
    free(f.dev);
    free(f.ino);
    if (r) {
        cdd_lib_paths_free(f.v, f.n);
        return cdd_lib_search_fail(r, soname);
    }
    *paths = f.v;
    *n = f.n;
    return 0;
}

int cdd_lib_find_all(const char *soname, char ***paths, size_t *n)
{
    return search(soname, 0, 0, paths, n);
}

int cdd_driver_library_path(char **out)
{
    *out = NULL;
    const char *over = cdd_getenv(DRIVER_ENV);
    if (over) {
        struct stat st;
        if (over[0] != '/')
            return cdd_fail(CDD_E_USAGE, over, 0,
                            DRIVER_ENV " must be an absolute path");
        if (stat(over, &st) != 0 || !S_ISREG(st.st_mode))
            return cdd_fail(CDD_E_NOTFOUND, over, 0,
                            "no driver library here (named by " DRIVER_ENV
                            ")");
        if (!(*out = strdup(over)))
            return cdd_fail(CDD_E_NOMEM, over, 0, NULL);
        return 0;
    }
    char **paths = NULL;
    size_t n = 0;
    int r = search(DRIVER_SONAME, 1, 1, &paths, &n);
    if (r)
        return r;
    if (n == 0) {
        cdd_lib_paths_free(paths, n);
        return cdd_fail(CDD_E_NOTFOUND, DRIVER_SONAME, 0,
                        "no NVIDIA driver: not on LD_LIBRARY_PATH, not in "
                        LD_CACHE ", not in the default folders");
    }
    *out = paths[0];
    paths[0] = NULL;
    cdd_lib_paths_free(paths, n);
    return 0;
}

/* dlopen resolves imports by the dynamic linker's rules, not a folder list,
 * and never from PATH: there is nothing of Windows' kind to answer. */
int cdd_lib_dep_find(const char *abs_path, const char *name, char **out,
                     int *in_system)
{
    *out = NULL;
    *in_system = 0;
    return cdd_fail(CDD_E_NOTSUP, abs_path, 0,
                    "where %s resolves is the dynamic linker's search order",
                    name);
}

int cdd_lib_find_on_path(const char *name, char **out)
{
    *out = NULL;
    return cdd_fail(CDD_E_NOTSUP, name, 0,
                    "the dynamic linker does not look on PATH");
}

int cdd_lib_open_proven(const char *abs_path,
                        const uint8_t sha[CDD_SHA256_LEN],
                        struct cdd_lib **out)
{
    (void)sha; /* a forked child has the proven copies loaded already */
    *out = NULL;
    return cdd_fail(CDD_E_NOTSUP, abs_path, 0, "a library is loaded again "
                    "only by a step started afresh (Windows)");
}

/* ---- proven copies: the private folder -------------------------------- */

int cdd_lib_private_dir(char **out)
{
    const char *tmp = cdd_getenv("TMPDIR");
    *out = NULL;
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    size_t len = strlen(tmp) + sizeof "/cudnn-deploy-load.XXXXXX";
    char *p = malloc(len);
    if (!p)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    snprintf(p, len, "%s%scudnn-deploy-load.XXXXXX", tmp,
             tmp[strlen(tmp) - 1] == '/' ? "" : "/");
    /* mkdtemp: a name nobody held, created 0700 by this call, so nothing
     * another account prepared can be in it. */
    if (!mkdtemp(p)) {
        int e = errno;
        int r = cdd_fail_errno(p, e, "cannot create a private folder for "
                                     "the libraries to load");
        free(p);
        return r;
    }
    *out = p;
    return 0;
}

/* ---- StrictModes ------------------------------------------------------ */

/* Is gid a group we trust with write access? gid 0, and the caller's own
 * primary group when its member list names nobody but the caller (Debian's
 * user private groups). Whether another account has it as its primary
 * group is not known without reading every account: not looked for. */
static int group_trusted(gid_t gid)
{
    if (gid == 0)
        return 1;
    if (gid != getegid())
        return 0;
    struct group *g = getgrgid(gid);
    struct passwd *pw = getpwuid(geteuid());
    if (!g)
        return 0;
    for (char **m = g->gr_mem; m && *m; m++)
        if (!pw || strcmp(*m, pw->pw_name) != 0)
            return 0;
    return 1;
}

static char *fmt_alloc(const char *fmt, ...) CDD_PRINTF(1, 2);
static char *fmt_alloc(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int cdd_lib_dir_trust(const char *dir, int leaf, char **problem,
                      struct cdd_fixes *fix)
{
    struct stat st;
    uid_t me = geteuid();
    *problem = NULL;
    /* The caller hands real folders (realpath): a link has no permissions
     * of its own that matter. */
    if (stat(dir, &st) != 0) {
        *problem = fmt_alloc("cannot be examined (%s)", strerror(errno));
        return *problem ? 0 : cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    }
    int sticky = (st.st_mode & S_ISVTX) && !leaf;
    int owner_bad = st.st_uid != 0 && st.st_uid != me;
    int group_bad = (st.st_mode & S_IWGRP) && !sticky &&
                    !group_trusted(st.st_gid);
    int other_bad = (st.st_mode & S_IWOTH) && !sticky;
    if (!owner_bad && !group_bad && !other_bad)
        return 0;
    char *owner = NULL, *group = NULL;
    if (owner_bad) {
        struct passwd *pw = getpwuid(st.st_uid);
        owner = fmt_alloc("owned by %s%s(uid %ld)", pw ? pw->pw_name : "",
                          pw ? " " : "", (long)st.st_uid);
    }
    if (group_bad) {
        struct group *g = getgrgid(st.st_gid);
        group = fmt_alloc("writable by group %s%s(gid %ld)",
                          g ? g->gr_name : "", g ? " " : "", (long)st.st_gid);
    }
    if ((owner_bad && !owner) || (group_bad && !group))
        *problem = NULL;
    else
        *problem = fmt_alloc("%s%s%s%s%s (mode %04o)", owner ? owner : "",
                             owner && (group || other_bad) ? ", " : "",
                             group ? group : "",
                             group && other_bad ? ", " : "",
                             other_bad ? "writable by every account" : "",
                             (unsigned)(st.st_mode & 07777));
    free(owner);
    free(group);
    if (!*problem)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    int r = 0;
    if (fix && (group_bad || other_bad)) {
        const char *argv[] = {"chmod", group_bad && other_bad ? "go-w"
                                       : group_bad ? "g-w" : "o-w",
                              dir, NULL};
        r = cdd_fixes_run(fix, CDD_FIX_SYSTEM, argv);
    }
    if (!r && fix && owner_bad) {
        const char *argv[] = {"chown", "root:root", dir, NULL};
        r = cdd_fixes_run(fix, CDD_FIX_SYSTEM, argv);
    }
    return r;
}
