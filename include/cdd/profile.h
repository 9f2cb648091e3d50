/* Install profiles (install --profile, docs/containers.md): which of the
 * manifest's roles land in the tree. runtime: the shared libraries (and the
 * licence that must travel with them); dev: + headers and import
 * libraries; full (the default): + static libraries. The archive is still
 * checked whole; a profile only decides what is staged. */
#ifndef CDD_PROFILE_H
#define CDD_PROFILE_H

#include <stddef.h>

#include "cdd/manifest.h"

enum cdd_profile {
    CDD_PROFILE_FULL = 0, /* receipts without the key: full */
    CDD_PROFILE_DEV,
    CDD_PROFILE_RUNTIME,
    CDD_PROFILE_COUNT
};

/* "full", "dev", "runtime". */
const char *cdd_profile_name(enum cdd_profile p);
/* 0, or -1 for a name that is none of them. */
int cdd_profile_parse(const char *s, enum cdd_profile *out);
/* Whether the profile installs a file of this role (a symlink: the role of
 * the file its chain ends at). */
int cdd_profile_keeps(enum cdd_profile p, enum cdd_role role);

struct cdd_plan;
/* Drop the plan items marked omitted, counting them by role into
 * omitted[CDD_ROLE_COUNT] (added to what it holds). */
void cdd_profile_drop(struct cdd_plan *plan, size_t *omitted);

#endif
