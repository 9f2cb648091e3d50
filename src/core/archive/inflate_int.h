/* Inflating one zip entry ourselves, from the bytes zipcd.c validated: the
 * critical path of an install is the inflating of the largest entry
 * (docs/performance.md), and libarchive inflates with zlib. Two backends
 * with this one interface, chosen by the build: inflate_isal.c (Intel's
 * ISA-L, about 2-3x zlib's speed on x86-64; Linux) and inflate_zlib.c (zlib
 * itself; the Windows build, and any build without ISA-L). archive.c uses
 * it for deflated zip members; stored members and tar stay libarchive's.
 *
 * The entry's compressed bytes are read with cdd_rfile_pread() between its
 * validated data offset and data offset + compressed size, never beyond.
 * The entry passes only when the deflate stream ends exactly at the last of
 * those bytes, yields exactly the uncompressed size and its CRC-32 equals
 * the central record's: a stream that ends early, runs on, or hides bytes
 * after its end is CDD_E_CORRUPT naming the entry. */
#ifndef CDD_INFLATE_INT_H
#define CDD_INFLATE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cdd/fsops.h"
#include "zipcd.h"

struct cdd_inflate;

/* The backend's name, for docs and benchmarks ("isa-l 2.30", "zlib 1.2.13"). */
const char *cdd_inflate_backend(void);

/* Start inflating entry e of the zip f (archive path for messages). f stays
 * the caller's and must outlive the inflater. CDD_E_NOMEM only. */
int cdd_inflate_open(struct cdd_rfile *f, const char *archive_path,
                     const struct cdd_zipcd_entry *e,
                     struct cdd_inflate **out);
/* Up to len bytes of the entry's data; *got == 0 at its end, which is
 * reported only after the size, the CRC and the stream's end were checked.
 * CDD_E_CORRUPT (damaged or disagreeing data), or the reading error. */
int cdd_inflate_read(struct cdd_inflate *z, void *buf, size_t len,
                     size_t *got);
/* Compressed bytes read so far (for progress). */
uint64_t cdd_inflate_consumed(const struct cdd_inflate *z);
void cdd_inflate_free(struct cdd_inflate *z);



/* ---- the backend's half (inflate_isal.c / inflate_zlib.c), used only by
 * inflate.c ---------------------------------------------------------------- */
struct cdd_inflate_be;

int cdd_inflate_be_new(struct cdd_inflate_be **out);
/* Inflate from *in (*in_len bytes) into *out (*out_len bytes of room),
 * advancing both. Returns 0 while the stream goes on, 1 once its end was
 * decoded (then *in_len bytes of this input, plus
 * cdd_inflate_be_overread() bytes taken earlier, were not part of it), or
 * -1 on damaged data with *why set to the backend's words. */
int cdd_inflate_be_step(struct cdd_inflate_be *b, const unsigned char **in,
                        size_t *in_len, unsigned char **out, size_t *out_len,
                        const char **why);
/* Input bytes the backend consumed beyond the stream's end (valid once the
 * end was decoded). */
size_t cdd_inflate_be_overread(const struct cdd_inflate_be *b);
/* The CRC-32 of everything produced (valid once the end was decoded). */
uint32_t cdd_inflate_be_crc(const struct cdd_inflate_be *b);
void cdd_inflate_be_free(struct cdd_inflate_be *b);
#endif
