/* Comparing a tree with its receipt, file by file, on several threads: the
 * unchanged re-install's metadata check, `status`, and the re-hash of
 * `status --check` and `install --check-tree`. */
#ifndef CDD_TREECHECK_H
#define CDD_TREECHECK_H

#include "cdd/deploy.h"
#include "cdd/receipt.h"

enum cdd_tree_check_mode {
    CDD_TC_SIZE = 0, /* type, size (symlinks: target) */
    CDD_TC_META,     /* and the modification time the receipt recorded */
    CDD_TC_HASH,     /* and the sha256 of every byte */
    CDD_TC_IDENT     /* cdd_tree_check_ident only */
};

struct cdd_idcache;
struct cdd_idrec;

struct cdd_tree;

/* Compare every file of rc with the tree, on up to `jobs` threads (<= 1: this
 * one). acts[i] and details[i] (malloc'd, may be NULL; details may be NULL
 * to skip them) receive receipt file i's UNCHANGED, MISSING or MODIFIED.
 * The first error stops the others and is returned. */
int cdd_tree_check(struct cdd_tree *tree, const struct cdd_receipt *rc,
                   enum cdd_tree_check_mode mode, int jobs,
                   enum cdd_action *acts, char **details);

/* The unchanged re-install's check: type, size, and the sha256 of each
 * file unless an identity record of ids (NULL: none) vouches for it
 * (tree/idcache.h). fresh[i] (n_files of them) receives the record taken
 * while hashing file i, valid when it matched and held still. */
int cdd_tree_check_ident(struct cdd_tree *tree, const struct cdd_receipt *rc,
                         const struct cdd_idcache *ids, int jobs,
                         enum cdd_action *acts, struct cdd_idrec *fresh);

#endif
