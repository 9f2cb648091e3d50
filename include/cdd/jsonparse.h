/* cJSON parsing that tells an allocation failure from bad JSON: cJSON_Parse
 * returns NULL for both, and a tool that reports "not valid JSON" for a
 * good manifest under memory pressure sends the user to fix the wrong thing
 * (found by the malloc-failure trials, docs/reliability.md). */
#ifndef CDD_JSONPARSE_H
#define CDD_JSONPARSE_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* cJSON_ParseWithLengthOpts(text, len, end, require_null), and *nomem set
 * to 1 when it returned NULL because an allocation failed (else 0). */
cJSON *cdd_json_parse(const char *text, size_t len, const char **end,
                      int require_null, int *nomem);

/* Route cJSON's allocations through the tracking hook (idempotent; the
 * parse does it itself). */
void cdd_json_track(void);

/* How many cJSON allocations outside cdd_json_parse (which reports its own)
 * have failed in this process since tracking began: a builder (cJSON_Create*, cJSON_Add*) drops what it could not
 * allocate without a word, so a writer compares this before and after. */
long cdd_json_alloc_failures(void);

#endif
