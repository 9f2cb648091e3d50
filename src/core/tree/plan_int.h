/* Internal helpers shared by install.c, uninstall.c and status.c. */
#ifndef CDD_PLAN_INT_H
#define CDD_PLAN_INT_H

#include "cdd/deploy.h"

/* Append an item (zeroed but for path); NULL on out of memory. */
struct cdd_plan_item *cdd_plan_add(struct cdd_plan *p, const char *path);
struct cdd_plan_item *cdd_plan_find(struct cdd_plan *p, const char *path,
                                    int case_insensitive);

#endif
