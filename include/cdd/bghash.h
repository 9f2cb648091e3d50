/* The archive's own SHA-256, computed on a thread of its own while the
 * archive is checked and staged, so that install reads it once more in
 * parallel instead of in a pass of its own before. The caller must not act
 * on anything it staged before cdd_bghash_finish() returned and the digest
 * was compared with its pin. */
#ifndef CDD_BGHASH_H
#define CDD_BGHASH_H

#include <stdint.h>

#include "cdd/hash.h"

struct cdd_bghash;

/* Start hashing the file at path. */
int cdd_bghash_start(const char *path, struct cdd_bghash **out);
/* The same through f, a file the caller holds open (issue 18: the bytes the
 * extraction reads through f are the bytes hashed); f stays the caller's. */
struct cdd_rfile;
int cdd_bghash_start_file(struct cdd_rfile *f, struct cdd_bghash **out);
/* Wait for the end; 0 with the digest and the file's size, or the hashing
 * thread's failure (recorded in this thread). Frees h. */
int cdd_bghash_finish(struct cdd_bghash *h, uint8_t digest[CDD_SHA256_LEN],
                      uint64_t *size);
/* The same, with the digest in rec and the identity the file kept while
 * it was read (rec->valid when it held still; tree/idcache.h). */
struct cdd_idrec;
int cdd_bghash_finish_rec(struct cdd_bghash *h, struct cdd_idrec *rec,
                          uint64_t *size);
/* Stop early (the install failed anyway) and free h. NULL is fine. */
void cdd_bghash_cancel(struct cdd_bghash *h);

#endif
