/* What loader_posix.c and loader_win32.c share (loader.h): the search
 * results' memory. The search orders themselves differ and stay there. */
#include <stdlib.h>

#include "cdd/loader.h"

void cdd_lib_paths_free(char **paths, size_t n)
{
    if (!paths)
        return;
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}
