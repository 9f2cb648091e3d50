/* Multi-threaded xz decoding for archive.c (xzmt_int.h): liblzma's threaded
 * stream decoder, reading the file the reader holds by pread.
 *
 * xz splits a stream into blocks only when the writer asked for it (xz -T,
 * --block-size; pixz, pxz): each block then carries its own sizes and check,
 * and the index at the end of the stream lists them. liblzma's threaded
 * decoder gives each block to a thread of its own and still verifies every
 * check (CRC32/CRC64/SHA-256 of each block, the index against the blocks),
 * so the decoded bytes and the refusals are the single-threaded decoder's.
 * A single-block stream gains nothing from it: archive.c keeps libarchive's
 * filter for those (cdd_xzmt_blocks() says 1).
 *
 * Memory: liblzma keeps, per running thread, the block's dictionary, its
 * whole decoded size (output is handed back in order) and its compressed
 * bytes; memlimit_threading caps the sum (CDD_XZMT_MEM_PER_THREAD times the
 * threads, at most a quarter of physical memory) and liblzma runs fewer
 * threads, down to one block at a time, rather than exceed it. The hard
 * stop is libarchive's own (none): a stream the single-threaded path
 * decodes, this one decodes too. */
#include "xzmt_int.h"

#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/fsops.h"

#if defined(CDD_HAVE_XZMT)
#include <lzma.h>

/* What is read from the file and handed back per call. */
#define XZ_IN (1u << 20)
#define XZ_IN_FEED (64u << 10) /* while downloading */
#define XZ_OUT (1u << 20)
/* The indexes read by cdd_xzmt_blocks: a few bytes per block. */
#define PROBE_BUF (64u * 1024u)
#define PROBE_MEMLIMIT (64u << 20)

static const unsigned char xz_magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00}; /* fixed: xz magic */

struct cdd_xzmt {
    lzma_stream s;
    struct cdd_rfile *f;
    char *path;
    unsigned threads;
    uint64_t pos;   /* next offset to read */
    int eof, done;
    uint8_t *in, *out;
};

uint64_t cdd_xzmt_blocks(struct cdd_rfile *f, uint64_t size)
{
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_index *idx = NULL;
    unsigned char *buf = NULL;
    uint64_t pos = 0, blocks = 0;
    struct cdd_errsave saved;
    size_t got = 0;

    /* A file still downloading has no index to read yet: reading it would
     * wait for the whole download (cdd_xzmt_streaming() decides there). */
    if (cdd_rfile_feed(f))
        return 0;
    /* A failed read below records an error; the caller's stays. */
    cdd_error_save(&saved);
    if (size < 32 || !(buf = malloc(PROBE_BUF)))
        goto out;
    if (cdd_rfile_pread(f, 0, buf, sizeof xz_magic, &got) < 0 ||
        got != sizeof xz_magic || memcmp(buf, xz_magic, sizeof xz_magic))
        goto out;
    if (lzma_file_info_decoder(&s, &idx, PROBE_MEMLIMIT, size) != LZMA_OK)
        goto out;
    for (;;) {
        lzma_ret ret;
        if (s.avail_in == 0) {
            if (pos >= size ||
                cdd_rfile_pread(f, pos, buf, PROBE_BUF, &got) < 0 || !got)
                break;
            s.next_in = buf;
            s.avail_in = got;
            pos += got;
        }
        ret = lzma_code(&s, LZMA_RUN);
        if (ret == LZMA_SEEK_NEEDED) {
            pos = s.seek_pos;
            s.avail_in = 0;
        } else if (ret == LZMA_STREAM_END) {
            blocks = lzma_index_block_count(idx);
            break;
        } else if (ret != LZMA_OK) {
            break;
        }
    }
out:
    lzma_end(&s);
    lzma_index_end(idx, NULL);
    free(buf);
    cdd_error_restore(&saved);
    cdd_error_save_free(&saved);
    return blocks;
}

int cdd_xzmt_streaming(struct cdd_rfile *f)
{
    unsigned char buf[sizeof xz_magic]; /* fixed: the xz magic */
    struct cdd_errsave saved;
    size_t got = 0;
    int yes;
    if (!cdd_rfile_feed(f))
        return 0;
    /* The first bytes arrive first; a failed read is left to the reader. */
    cdd_error_save(&saved);
    yes = cdd_rfile_pread(f, 0, buf, sizeof buf, &got) >= 0 &&
          got == sizeof buf && !memcmp(buf, xz_magic, sizeof buf);
    cdd_error_restore(&saved);
    cdd_error_save_free(&saved);
    return yes;
}

static int lzma_failed(struct cdd_xzmt *x, lzma_ret ret)
{
    const char *what;
    x->done = 1;
    switch (ret) {
    case LZMA_MEM_ERROR:
        return cdd_fail(CDD_E_NOMEM, x->path, 0, "xz: out of memory");
    case LZMA_FORMAT_ERROR:
        what = "not in the xz format";
        break;
    case LZMA_OPTIONS_ERROR:
        what = "unsupported compression options";
        break;
    case LZMA_DATA_ERROR:
        what = "compressed data is corrupt";
        break;
    case LZMA_BUF_ERROR:
        what = "compressed data is truncated";
        break;
    case LZMA_MEMLIMIT_ERROR:
        what = "needs more memory than allowed";
        break;
    default:
        what = "decoder error";
    }
    return cdd_fail(CDD_E_CORRUPT, x->path, 0, "xz (%u threads): %s "
                    "(at compressed byte %llu)", x->threads, what,
                    (unsigned long long)x->s.total_in);
}

int cdd_xzmt_open(struct cdd_rfile *f, const char *path, unsigned threads,
                  struct cdd_xzmt **out)
{
    struct cdd_xzmt *x = calloc(1, sizeof *x);
    lzma_mt mt;
    uint64_t lim, phys;
    lzma_ret ret;

    *out = NULL;
    if (!x || !(x->path = strdup(path)) || !(x->in = malloc(XZ_IN)) ||
        !(x->out = malloc(XZ_OUT))) {
        cdd_xzmt_free(x);
        return cdd_fail(CDD_E_NOMEM, path, 0, NULL);
    }
    x->f = f;
    x->s = (lzma_stream)LZMA_STREAM_INIT;
    if (threads < 1)
        threads = 1;
    if (threads > CDD_XZMT_MAX_THREADS)
        threads = CDD_XZMT_MAX_THREADS;
    x->threads = threads;
    lim = (uint64_t)threads * CDD_XZMT_MEM_PER_THREAD;
    phys = lzma_physmem();
    if (phys && lim > phys / 4)
        lim = phys / 4;
    memset(&mt, 0, sizeof mt);
    /* Concatenated streams as xz -d and libarchive read them; fail fast:
     * a damaged block stops the whole decoder at once, not after the
     * blocks before it are handed out. */
    mt.flags = LZMA_CONCATENATED | LZMA_FAIL_FAST;
    mt.threads = threads;
    mt.timeout = 0;
    mt.memlimit_threading = lim;
    mt.memlimit_stop = UINT64_MAX;
    if ((ret = lzma_stream_decoder_mt(&x->s, &mt)) != LZMA_OK) {
        int r = lzma_failed(x, ret);
        cdd_xzmt_free(x);
        return r;
    }
    *out = x;
    return 0;
}

int cdd_xzmt_read(struct cdd_xzmt *x, const void **buf, size_t *len)
{
    *buf = x->out;
    *len = 0;
    if (x->done)
        return 0;
    x->s.next_out = x->out;
    x->s.avail_out = XZ_OUT;
    while (x->s.avail_out > 0) {
        lzma_ret ret;
        if (x->s.avail_in == 0 && !x->eof) {
            size_t got = 0;
            /* A download still arriving (cdd/feed.h): hand over what is
             * decoded before waiting for more, and wait for small reads,
             * so that the install follows the download closely. */
            int feed = cdd_rfile_feed(x->f) != NULL;
            if (feed && x->s.avail_out < XZ_OUT)
                break;
            int r = cdd_rfile_pread(x->f, x->pos, x->in,
                                    feed ? XZ_IN_FEED : XZ_IN, &got);
            if (r < 0) {
                x->done = 1;
                return r;
            }
            x->pos += got;
            x->eof = got == 0;
            x->s.next_in = x->in;
            x->s.avail_in = got;
        }
        ret = lzma_code(&x->s, x->eof ? LZMA_FINISH : LZMA_RUN);
        if (ret == LZMA_STREAM_END) {
            x->done = 1;
            break;
        }
        if (ret != LZMA_OK)
            return lzma_failed(x, ret);
    }
    *len = XZ_OUT - x->s.avail_out;
    return 0;
}

uint64_t cdd_xzmt_consumed(const struct cdd_xzmt *x)
{
    return x ? x->s.total_in : 0;
}

unsigned cdd_xzmt_threads(const struct cdd_xzmt *x)
{
    return x ? x->threads : 0;
}

void cdd_xzmt_free(struct cdd_xzmt *x)
{
    if (!x)
        return;
    lzma_end(&x->s);
    free(x->in);
    free(x->out);
    free(x->path);
    free(x);
}

#else /* no threaded decoder in this build's liblzma */

int cdd_xzmt_streaming(struct cdd_rfile *f)
{
    (void)f;
    return 0;
}

uint64_t cdd_xzmt_blocks(struct cdd_rfile *f, uint64_t size)
{
    (void)f;
    (void)size;
    return 0;
}

int cdd_xzmt_open(struct cdd_rfile *f, const char *path, unsigned threads,
                  struct cdd_xzmt **out)
{
    (void)f;
    (void)threads;
    *out = NULL;
    return cdd_fail(CDD_E_NOTSUP, path, 0,
                    "built without liblzma's multi-threaded decoder");
}

int cdd_xzmt_read(struct cdd_xzmt *x, const void **buf, size_t *len)
{
    (void)x;
    *buf = NULL;
    *len = 0;
    return cdd_fail(CDD_E_NOTSUP, NULL, 0,
                    "built without liblzma's multi-threaded decoder");
}

uint64_t cdd_xzmt_consumed(const struct cdd_xzmt *x)
{
    (void)x;
    return 0;
}

unsigned cdd_xzmt_threads(const struct cdd_xzmt *x)
{
    (void)x;
    return 0;
}

void cdd_xzmt_free(struct cdd_xzmt *x)
{
    (void)x;
}

#endif
