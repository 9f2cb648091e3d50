/* A two-thread pipeline for one stream of entry data (internal to
 * extract.c): the calling thread decodes into buffers, a second thread
 * hashes them and writes them to the entry's staged file, through a small
 * bounded ring (XPIPE_SLOTS buffers of XPIPE_BLOCK bytes). Used where
 * decoding cannot be split (tar.xz), so that decoding, hashing and writing
 * overlap on two cores. */
#ifndef CDD_XPIPE_INT_H
#define CDD_XPIPE_INT_H

#include <stddef.h>

#include "cdd/fsops.h"
#include "cdd/hash.h"

#define XPIPE_SLOTS 4
#define XPIPE_BLOCK (256u * 1024u)

struct cdd_xpipe;

/* Start the consumer thread. */
int cdd_xpipe_new(struct cdd_xpipe **out);
/* The hash and file (NULL: hash only) the next buffers go to. Only between
 * two drains; the consumer touches them until the next drain returns. */
void cdd_xpipe_target(struct cdd_xpipe *p, struct cdd_sha256 *h,
                      struct cdd_file *f);
/* A free buffer of XPIPE_BLOCK bytes (waits while all are queued). */
void *cdd_xpipe_get(struct cdd_xpipe *p);
/* Queue the buffer from cdd_xpipe_get() with len bytes in it. Returns the
 * consumer's failure, if it had one (recorded in this thread), else 0. */
int cdd_xpipe_put(struct cdd_xpipe *p, size_t len);
/* Wait until every queued buffer is hashed and written; the consumer's
 * failure, else 0 (recorded in this thread when report is set: a caller
 * that already failed keeps its own error). Clears it for the next entry. */
int cdd_xpipe_drain(struct cdd_xpipe *p, int report);
/* Stop the consumer (after draining) and free everything. NULL is fine. */
void cdd_xpipe_free(struct cdd_xpipe *p);

#endif
