/* Environment and host facts on POSIX systems: the environment, the default
 * CUDA root, the cache folder, elevation, and where doctor looks for CUDA
 * toolkits and Python packages on Linux. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/state.h"
#include "cdd/strbuf.h"
#include "env_int.h"

const char *cdd_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

char *cdd_default_cuda_root(int major, int minor)
{
    char buf[64]; /* fixed: a constant folder and two ints */
    snprintf(buf, sizeof buf, "/usr/local/cuda-%d.%d", major, minor);
    return strdup(buf);
}

char *cdd_absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char *cwd = getcwd(NULL, 0); /* as long as it is (glibc, BSDs) */
    if (!cwd)
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", cwd, path);
    free(cwd);
    return r;
}

char *cdd_default_cache_dir(void)
{
    /* The XDG spec says a relative $XDG_CACHE_HOME is invalid and must be
     * ignored: it would put the cache wherever the tool happens to run. */
    const char *base = cdd_getenv("XDG_CACHE_HOME");
    const char *sub = "cudnn-deploy";
    if (!base || base[0] != '/') {
        base = cdd_getenv("HOME");
        sub = ".cache/cudnn-deploy";
    }
    if (!base || base[0] != '/')
        return NULL;
    size_t n = strlen(base) + strlen(sub) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", base, sub);
    return r;
}

int cdd_is_elevated(void)
{
    return geteuid() == 0;
}

int cdd_check_write_access(const char *root, const char *first)
{
    (void)root;
    if (cdd_is_elevated())
        return 0;
    /* access() asks with the real uid, which is what a setuid-free tool
     * runs as. */
    int denied = access(first, W_OK) != 0 && errno == EACCES;
    return denied ? cdd_fail(CDD_E_PERM, first, EACCES,
                             "this account may not change this tree: run "
                             "as root (sudo) or as the tree's owner")
                  : 0;
}

/* ---- what doctor looks at ------------------------------------------------ */

extern char **environ;

int cdd_env_each(const char *prefix,
                 int (*fn)(void *ud, const char *name, const char *value),
                 void *ud)
{
    size_t pl = strlen(prefix);
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t nl = eq ? (size_t)(eq - *e) : 0;
        if (!eq || nl < pl || !eq[1] || strncmp(*e, prefix, pl) != 0)
            continue;
        char *name = cdd_strndup(*e, nl);
        if (!name)
            return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        int r = fn(ud, name, eq + 1);
        free(name);
        if (r)
            return r;
    }
    return 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Call fn for dir/NAME/tail for every NAME in dir that starts with prefix,
 * in name order, when that folder exists (tail "" means dir/NAME itself):
 * the one wildcard the conventions below need (cuda-*, python3.*). */
static int glob_dirs(const char *dir, const char *prefix, const char *tail,
                     const char *origin,
                     int (*fn)(void *ud, const char *path, const char *origin),
                     void *ud)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    int r = 0;
    if (!d)
        return 0; /* absent: nothing there */
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
            strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        r = CDD_GROW(names, &cap, n + 1, CDD_ENV_GLOB_MAX,
                     "folders matching one wildcard");
        if (r)
            goto out;
        if (!(names[n] = strdup(e->d_name))) {
            r = cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
            goto out;
        }
        n++;
    }
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n && !r; i++) {
        size_t len = strlen(dir) + strlen(names[i]) + strlen(tail) + 3;
        char *p = malloc(len);
        if (!p) {
            r = cdd_fail(CDD_E_NOMEM, dir, 0, NULL);
            break;
        }
        snprintf(p, len, "%s/%s%s%s", dir, names[i], *tail ? "/" : "", tail);
        if (is_dir(p))
            r = fn(ud, p, origin);
        free(p);
    }
out:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return r;
}

int cdd_default_cuda_roots(int (*fn)(void *ud, const char *path,
                                     const char *origin),
                           void *ud)
{
    /* The runfile and the distribution packages both install into
     * /usr/local/cuda-X.Y and point the /usr/local/cuda symlink at one. */
    int r = 0;
    if (is_dir("/usr/local/cuda"))
        r = fn(ud, "/usr/local/cuda", "default root");
    if (!r)
        r = glob_dirs("/usr/local", "cuda-", "", "default root", fn, ud);
    return r;
}

static int site_under(const char *prefix_var, const char *origin,
                      int (*fn)(void *ud, const char *path, const char *origin),
                      void *ud)
{
    const char *base = cdd_getenv(prefix_var);
    if (!base || base[0] != '/')
        return 0;
    char *lib = cdd_aprintf(CDD_PATH_MAX, "environment prefix", "%s/lib", base);
    if (!lib)
        return cdd_last_error()->code;
    int r = glob_dirs(lib, "python3", "site-packages", origin, fn, ud);
    free(lib);
    return r;
}

/* The python3 a shell would run: its prefix's site folder. A venv or conda
 * environment is often used through PATH alone (a Docker image's
 * /opt/venv/bin first on PATH), without VIRTUAL_ENV or CONDA_PREFIX. */
static int site_of_path_python(int (*fn)(void *ud, const char *path,
                                         const char *origin),
                               void *ud)
{
    const char *path = cdd_getenv("PATH");
    for (const char *p = path; p;) {
        size_t len = strcspn(p, ":");
        struct stat st;
        if (len > 0 && p[0] == '/') {
            char *dir = cdd_strndup(p, len);
            char *exe = dir ? cdd_aprintf(CDD_TEXT_MAX, "PATH entry",
                                          "%s/python3", dir)
                            : NULL;
            if (!exe) {
                free(dir);
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            }
            int found = stat(exe, &st) == 0 && S_ISREG(st.st_mode);
            free(exe);
            if (found) {
                /* <prefix>/bin/python3 -> <prefix>/lib/python3.N/... */
                char *slash = strrchr(dir, '/');
                int r = 0;
                if (slash && strcmp(slash, "/bin") == 0) {
                    memcpy(slash, "/lib", 5);
                    r = glob_dirs(dir, "python3", "site-packages",
                                  "python3 on PATH", fn, ud);
                }
                free(dir);
                return r;
            }
            free(dir);
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    return 0;
}

int cdd_python_site_dirs(int (*fn)(void *ud, const char *path,
                                   const char *origin),
                         void *ud)
{
    int r = cdd_pythonpath_each(fn, ud, is_dir);
    if (!r)
        r = site_under("VIRTUAL_ENV", "VIRTUAL_ENV", fn, ud);
    if (!r)
        r = site_under("CONDA_PREFIX", "CONDA_PREFIX", fn, ud);
    if (!r)
        r = site_of_path_python(fn, ud);
    if (!r) {
        /* The user site: $PYTHONUSERBASE/lib/python3.N/site-packages, by
         * default under ~/.local (where `pip install --user` puts torch). */
        const char *ub = cdd_getenv("PYTHONUSERBASE");
        const char *home = cdd_getenv("HOME");
        char *lib = NULL;
        if (ub && ub[0] == '/')
            lib = cdd_aprintf(CDD_TEXT_MAX, "PYTHONUSERBASE", "%s/lib", ub);
        else if (home && home[0] == '/')
            lib = cdd_aprintf(CDD_TEXT_MAX, "HOME", "%s/.local/lib", home);
        if (lib)
            r = glob_dirs(lib, "python3", "site-packages", "user site", fn,
                          ud);
        else if ((ub && ub[0] == '/') || (home && home[0] == '/'))
            r = cdd_last_error()->code;
        free(lib);
    }
    /* Debian/Ubuntu: packages in /usr/lib/python3/dist-packages, `sudo pip`
     * in /usr/local/lib/python3.N/dist-packages; Fedora and python.org
     * builds use site-packages. */
    if (!r)
        r = glob_dirs("/usr/local/lib", "python3", "dist-packages", "system",
                      fn, ud);
    if (!r)
        r = glob_dirs("/usr/local/lib", "python3", "site-packages", "system",
                      fn, ud);
    if (!r)
        r = glob_dirs("/usr/lib", "python3", "dist-packages", "system", fn,
                      ud);
    if (!r)
        r = glob_dirs("/usr/lib", "python3", "site-packages", "system", fn,
                      ud);
    if (!r)
        r = glob_dirs("/usr/lib64", "python3", "site-packages", "system", fn,
                      ud);
    return r;
}

char *cdd_system_dir(void)
{
    return NULL;
}
