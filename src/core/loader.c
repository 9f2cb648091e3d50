/* What loader_posix.c and loader_win32.c share (loader.h): the search
 * results' memory and how a failed search is recorded. The search orders
 * themselves differ and stay there. */
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/loader.h"

int cdd_lib_search_fail(int r, const char *name)
{
    if (r == CDD_E_TOOLONG)
        return cdd_fail(r, name, 0,
                        "more than %d copies on the loader's search order",
                        CDD_LIB_COPIES_MAX);
    return cdd_fail(r, name, 0, NULL);
}

void cdd_lib_paths_free(char **paths, size_t n)
{
    if (!paths)
        return;
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
