/* The format parsers binfile.c dispatches to (elf.c, pe.c). Each reads
 * through the reader of binrd_int.h only. */
#ifndef CDD_BINFMT_INT_H
#define CDD_BINFMT_INT_H

#include "binrd_int.h"

/* Fill out (fmt, machine, lists) from r. On failure the caller clears
 * out. */
int cdd_elf_parse(struct cdd_binrd *r, struct cdd_bininfo *out);
int cdd_pe_parse(struct cdd_binrd *r, struct cdd_bininfo *out);
/* The headers only: fmt, is_64 (ELF), machine, machine_name. */
int cdd_elf_identify(struct cdd_binrd *r, struct cdd_bininfo *out);
int cdd_pe_identify(struct cdd_binrd *r, struct cdd_bininfo *out);

#endif
