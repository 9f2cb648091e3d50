/* What env_posix.c and env_win32.c do alike (env_int.h): walking PYTHONPATH.
 * The platform files keep only what differs (how a folder is tested, where
 * the platform's Python lives). */
#include <stdlib.h>
#include <string.h>

#include "cdd/env.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "cdd/compat.h"
#include "env_int.h"

int cdd_pythonpath_each(int (*fn)(void *ud, const char *path,
                                  const char *origin),
                        void *ud, int (*is_dir)(const char *path))
{
    const char *seps = CDD_HOST_WINDOWS ? ";" : ":";
    int r = 0;
    const char *pp = cdd_getenv("PYTHONPATH");
    for (const char *p = pp; p && !r;) {
        size_t len = strcspn(p, seps);
        if (len > 0) {
            char *dir = cdd_strndup(p, len);
            if (!dir)
                return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
            for (char *s = dir; CDD_HOST_WINDOWS && *s; s++)
                if (*s == '\\')
                    *s = '/';
            if ((CDD_HOST_WINDOWS || dir[0] == '/') && is_dir(dir))
                r = fn(ud, dir, "PYTHONPATH");
            free(dir);
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    return r;
}
