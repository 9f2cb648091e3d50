/* Lookup in the generated simple case-folding table (casefold_table.c).
 * The table is sorted, so a binary search finds a code point in at most 11
 * steps; ASCII, the common case in archive names, never reaches it. */
#include "casefold.h"

#include "casefold_int.h"

uint32_t cdd_casefold_cp(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    unsigned lo = 0, hi = cdd_fold_pair_count;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (cdd_fold_pairs[mid].from == cp)
            return cdd_fold_pairs[mid].to;
        if (cdd_fold_pairs[mid].from < cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return cp;
}

const char *cdd_casefold_version(void)
{
    return cdd_casefold_unicode_version;
}
