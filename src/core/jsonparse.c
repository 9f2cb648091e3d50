/* cdd_json_parse: cJSON with an allocator hook that remembers, per thread,
 * whether an allocation failed during the parse (jsonparse.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "cdd/jsonparse.h"

static _Thread_local int alloc_failed;
static atomic_int hooked;

static void *json_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        alloc_failed = 1;
    return p;
}

static void json_free(void *p)
{
    free(p);
}

cJSON *cdd_json_parse(const char *text, size_t len, const char **end,
                      int require_null, int *nomem)
{
    if (!atomic_exchange(&hooked, 1)) {
        /* Every cJSON allocation goes through json_malloc from now on (the
         * writers' too: they only lose cJSON's realloc shortcut). */
        cJSON_Hooks h = {json_malloc, json_free};
        cJSON_InitHooks(&h);
    }
    alloc_failed = 0;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, end, require_null);
    if (nomem)
        *nomem = !root && alloc_failed;
    return root;
}
