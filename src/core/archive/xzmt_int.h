/* Multi-threaded xz decoding (internal to archive.c; src/core/archive/xzmt.c).
 *
 * A .xz file whose streams hold more than one block can be decoded by
 * several threads, one block each (liblzma's lzma_stream_decoder_mt, xz >=
 * 5.4). archive.c asks cdd_xzmt_blocks() first; with more than one block and
 * more than one job it decodes the file here and hands libarchive the plain
 * tar through its read callback, so that the tar header check and the tar
 * reader see the same decoded bytes as on the single-threaded path.
 * Built without a liblzma that has the decoder (CDD_HAVE_XZMT unset),
 * cdd_xzmt_blocks() says 0 blocks and libarchive's own xz filter is used. */
#ifndef CDD_XZMT_INT_H
#define CDD_XZMT_INT_H

#include <stddef.h>
#include <stdint.h>

struct cdd_rfile;
struct cdd_xzmt;

/* Memory the decoder may use for running blocks in parallel, per thread
 * (the whole bound is this times the threads, at most a quarter of the
 * machine's memory); past it, liblzma decodes with fewer threads, down to
 * one, never fails for it. */
#define CDD_XZMT_MEM_PER_THREAD (64u << 20)
/* Most threads, whatever --jobs says. */
#define CDD_XZMT_MAX_THREADS 64

/* The number of xz blocks in f (size bytes; every concatenated stream
 * counted), read from the streams' indexes at the end of the file. 0 when
 * it is not an .xz file, when its indexes cannot be read (damaged,
 * truncated, still being written), or when the build has no multi-threaded
 * decoder: the caller then reads it the single-threaded way, which reports
 * any damage. Never fails, never records an error. */
uint64_t cdd_xzmt_blocks(struct cdd_rfile *f, uint64_t size);

/* 1 when f is still downloading (cdd/feed.h) and begins with the xz magic,
 * in a build with the threaded decoder: its block count cannot be known
 * before the download ends, so the caller starts the threaded decoder
 * anyway, which decodes a single-block stream on the calling thread and
 * hands the blocks of a multi-block one to its threads as they arrive.
 * Never fails, never records an error. */
int cdd_xzmt_streaming(struct cdd_rfile *f);

/* A decoder of f (held by the caller, read by pread from offset 0) with at
 * most `threads` threads; path is for messages. */
int cdd_xzmt_open(struct cdd_rfile *f, const char *path, unsigned threads,
                  struct cdd_xzmt **out);
/* The next decoded bytes: *buf (valid until the next call) and *len, 0 at
 * the end of the last stream. CDD_E_CORRUPT for damaged or truncated data
 * (a block's check, the index), CDD_E_NOMEM, or the read's own error. */
int cdd_xzmt_read(struct cdd_xzmt *x, const void **buf, size_t *len);
/* Compressed bytes consumed so far (progress). */
uint64_t cdd_xzmt_consumed(const struct cdd_xzmt *x);
/* Threads the decoder was started with (0 for NULL). */
unsigned cdd_xzmt_threads(const struct cdd_xzmt *x);
void cdd_xzmt_free(struct cdd_xzmt *x);

#endif
