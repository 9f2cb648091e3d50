/* Internal helpers shared by install.c, uninstall.c and status.c. */
#ifndef CDD_PLAN_INT_H
#define CDD_PLAN_INT_H

#include "cdd/deploy.h"
#include "cdd/extract.h"

/* The items of one plan: the entries of the package it installs and of the
 * one it replaces or removes (each at most CDD_MAX_ENTRIES, extract.h),
 * with the activation scripts around them. */
#define CDD_PLAN_MAX_ITEMS (2 * (size_t)CDD_MAX_ENTRIES + 64)

/* Append an item (zeroed but for path); NULL with the error recorded
 * (CDD_E_TOOLONG past CDD_PLAN_MAX_ITEMS, CDD_E_NOMEM). */
struct cdd_plan_item *cdd_plan_add(struct cdd_plan *p, const char *path);
struct cdd_plan_item *cdd_plan_find(struct cdd_plan *p, const char *path,
                                    int case_insensitive);

#endif
