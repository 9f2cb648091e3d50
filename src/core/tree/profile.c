/* Install profiles: the one place that decides which roles a profile
 * installs (profile.h). install marks each planned entry while the archive
 * is checked and drops the marked ones before the plan meets the tree. */
#include <string.h>

#include "cdd/deploy.h"
#include "cdd/profile.h"

static const char *const names[CDD_PROFILE_COUNT] = {"full", "dev",
                                                     "runtime"};

const char *cdd_profile_name(enum cdd_profile p)
{
    return (size_t)p < CDD_PROFILE_COUNT ? names[p] : "?";
}

int cdd_profile_parse(const char *s, enum cdd_profile *out)
{
    for (size_t i = 0; s && i < CDD_PROFILE_COUNT; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (enum cdd_profile)i;
            return 0;
        }
    return -1;
}

int cdd_profile_keeps(enum cdd_profile p, enum cdd_role role)
{
    switch (role) {
    case CDD_ROLE_RUNTIME:
    case CDD_ROLE_LICENSE: /* NVIDIA's licence travels with the libraries */
    case CDD_ROLE_ACTIVATION:
    case CDD_ROLE_SYMLINK: /* not a role a chain ends at */
        return 1;
    case CDD_ROLE_HEADER:
    case CDD_ROLE_IMPORT_LIB:
        return p != CDD_PROFILE_RUNTIME;
    case CDD_ROLE_STATIC_LIB:
        return p == CDD_PROFILE_FULL;
    case CDD_ROLE_COUNT:
        break;
    }
    return 1;
}

void cdd_profile_drop(struct cdd_plan *plan, size_t *omitted)
{
    size_t keep = 0;
    for (size_t i = 0; i < plan->n; i++) {
        struct cdd_plan_item *it = &plan->items[i];
        if (!it->omitted) {
            plan->items[keep++] = *it;
            continue;
        }
        if ((size_t)it->omitted_role < CDD_ROLE_COUNT)
            omitted[it->omitted_role]++;
        cdd_plan_item_clear(it);
    }
    plan->n = keep;
}
