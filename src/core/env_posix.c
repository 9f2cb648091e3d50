/* Environment and host facts on POSIX systems. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/state.h"

const char *cdd_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

char *cdd_default_cuda_root(int major, int minor)
{
    char buf[64];
    snprintf(buf, sizeof buf, "/usr/local/cuda-%d.%d", major, minor);
    return strdup(buf);
}

char *cdd_absolute_path(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *r = malloc(n);
    if (r)
        snprintf(r, n, "%s/%s", cwd, path);
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

int cdd_check_write_access(const char *root)
{
    if (cdd_is_elevated())
        return 0;
    /* The first write goes into the tree's state folder, or creates it:
     * ask about that one. access() asks with the real uid, which is what a
     * setuid-free tool runs as. */
    size_t n = strlen(root) + sizeof "/" CDD_STATE_DIR;
    char *state = malloc(n);
    if (!state)
        return 0;
    snprintf(state, n, "%s/%s", root, CDD_STATE_DIR);
    const char *dir = access(state, F_OK) == 0 ? state : root;
    int denied = access(dir, W_OK) != 0 && errno == EACCES;
    int r = denied ? cdd_fail(CDD_E_PERM, dir, EACCES,
                              "this account may not change this tree: run "
                              "as root (sudo) or as the tree's owner")
                   : 0;
    free(state);
    return r;
}
