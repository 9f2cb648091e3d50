/* Internal helpers shared by install.c, uninstall.c and status.c. */
#ifndef CDD_PLAN_INT_H
#define CDD_PLAN_INT_H

#include "cdd/deploy.h"

/* Append an item (zeroed but for path); NULL on out of memory. */
struct cdd_plan_item *cdd_plan_add(struct cdd_plan *p, const char *path);
struct cdd_plan_item *cdd_plan_find(struct cdd_plan *p, const char *path,
                                    int case_insensitive);

/* Compare what the tree holds at rel with what is expected. */
int cdd_tree_compare(struct cdd_tree *tree, const char *rel, int is_symlink,
                     const char *link_target, uint64_t size,
                     const uint8_t *sha, int full_hash, enum cdd_action *act,
                     char **detail);

#endif
