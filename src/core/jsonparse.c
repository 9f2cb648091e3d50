/* cJSON with an allocator hook that remembers whether an allocation failed:
 * per thread during a parse, and a count for the whole process, which the
 * JSON report checks before it prints a document that silently lost parts
 * (jsonparse.h). */
#include <stdatomic.h>
#include <stdlib.h>

#include "cdd/jsonparse.h"

static _Thread_local int alloc_failed;
static _Thread_local int in_parse; /* a parse reports its own failures */
static atomic_int hooked;
static atomic_long failures; /* every failed cJSON allocation, ever */

static void *json_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p) {
        alloc_failed = 1;
        if (!in_parse)
            atomic_fetch_add(&failures, 1);
    }
    return p;
}

static void json_free(void *p)
{
    free(p);
}

void cdd_json_track(void)
{
    if (!atomic_exchange(&hooked, 1)) {
        /* Every cJSON allocation goes through json_malloc from now on (the
         * writers' too: they only lose cJSON's realloc shortcut). */
        cJSON_Hooks h = {json_malloc, json_free};
        cJSON_InitHooks(&h);
    }
}

long cdd_json_alloc_failures(void)
{
    return atomic_load(&failures);
}

cJSON *cdd_json_parse(const char *text, size_t len, const char **end,
                      int require_null, int *nomem)
{
    cdd_json_track();
    alloc_failed = 0;
    in_parse = 1;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, end, require_null);
    in_parse = 0;
    if (nomem)
        *nomem = !root && alloc_failed;
    return root;
}
