/* Environment and host facts on POSIX systems. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdd/env.h"

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
