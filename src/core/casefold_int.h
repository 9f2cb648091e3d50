/* The generated case-folding table (casefold_table.c) and its lookup
 * (casefold.c). */
#ifndef CDD_CASEFOLD_INT_H
#define CDD_CASEFOLD_INT_H

#include <stdint.h>

struct cdd_fold_pair {
    uint32_t from, to;
};

/* Sorted by from; no from appears twice. */
extern const struct cdd_fold_pair cdd_fold_pairs[];
extern const unsigned cdd_fold_pair_count;
extern const char cdd_casefold_unicode_version[];

#endif
