/* Unicode simple case folding: the one table behind every case-insensitive
 * name comparison in the program (the archive and manifest duplicate checks,
 * and finding an existing file of a Windows-layout tree under another case).
 * NTFS compares names through its upcase table; simple case folding puts
 * the same letters together (Ա/ա, Ǎ/ǎ, Ά/ά, Ⅰ/ⅰ, ...), and where the two
 * differ at all it folds more, never less, so a name NTFS takes for another
 * is never missed. Generated from Unicode's CaseFolding.txt
 * (scripts/gen_casefold.py -> src/core/casefold_table.c). */
#ifndef CDD_CASEFOLD_H
#define CDD_CASEFOLD_H

#include <stdint.h>

/* The simple case folding of one code point (itself when it has none). */
uint32_t cdd_casefold_cp(uint32_t cp);

/* The Unicode version the table was generated from, e.g. "15.0.0". */
const char *cdd_casefold_version(void);

#endif
