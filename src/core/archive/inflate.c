/* The backend-independent half of inflate_int.h: reading the entry's
 * compressed bytes within their validated bounds, and the checks at its
 * end (stream end, size, CRC-32). */
#include "inflate_int.h"

#include <stdio.h>
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/pathsafe.h"

/* Compressed bytes read per call of cdd_rfile_pread(). */
#define INFLATE_IN (256u * 1024u)

struct cdd_inflate {
    struct cdd_rfile *f;
    const char *path;                 /* the archive, for messages */
    const struct cdd_zipcd_entry *e;
    struct cdd_inflate_be *be;
    unsigned char *in;                /* INFLATE_IN bytes */
    const unsigned char *next;        /* unconsumed input in `in` */
    size_t avail;
    uint64_t read;                    /* compressed bytes read from f */
    uint64_t produced;                /* uncompressed bytes produced */
    int ended;                        /* the stream's end was decoded */
    int done;                         /* ... and the entry checked */
    int failed;
};

static int bad(struct cdd_inflate *z, const char *what, const char *detail)
{
    /* The entry's name, an untrusted one, shown whole. */
    char *shown = cdd_path_shown(z->e->name);
    z->failed = 1;
    int r = cdd_fail(CDD_E_CORRUPT, z->path, 0, "zip: entry \"%s\": %s%s%s",
                     CDD_SHOWN(shown), what, detail ? ": " : "",
                     detail ? detail : "");
    free(shown);
    return r;
}


int cdd_inflate_open(struct cdd_rfile *f, const char *archive_path,
                     const struct cdd_zipcd_entry *e,
                     struct cdd_inflate **out)
{
    struct cdd_inflate *z = calloc(1, sizeof *z);
    int r = 0;

    *out = NULL;
    if (!z || !(z->in = malloc(INFLATE_IN))) {
        r = cdd_fail(CDD_E_NOMEM, archive_path, 0, NULL);
        goto out;
    }
    if ((r = cdd_inflate_be_new(&z->be)) < 0)
        goto out;
    z->f = f;
    z->path = archive_path;
    z->e = e;
    z->next = z->in; /* no input yet, but never a null pointer to step from */
    *out = z;
    z = NULL;
out:
    cdd_inflate_free(z);
    return r;
}

/* More input, never past the entry's compressed size. */
static int refill(struct cdd_inflate *z)
{
    uint64_t left = z->e->csize - z->read;
    size_t want = left < INFLATE_IN ? (size_t)left : INFLATE_IN, got = 0;
    int r;

    if (want == 0)
        return 0;
    if ((r = cdd_rfile_pread(z->f, z->e->data_offset + z->read, z->in, want,
                             &got)) < 0) {
        z->failed = 1;
        return r;
    }
    if (got == 0)
        return bad(z, "the file ends inside the entry's data", NULL);
    z->read += got;
    z->next = z->in;
    z->avail = got;
    return 0;
}

/* The end was decoded: nothing of the compressed bytes may follow it, and
 * what came out must be what the central record promised. */
static int check_end(struct cdd_inflate *z)
{
    char detail[128]; /* fixed: two 64-bit numbers and a phrase */
    uint64_t after = z->avail + (z->e->csize - z->read) +
                     cdd_inflate_be_overread(z->be);
    if (after != 0) {
        snprintf(detail, sizeof detail, "%llu of its %llu compressed bytes "
                 "follow the end of the deflate stream",
                 (unsigned long long)after,
                 (unsigned long long)z->e->csize);
        return bad(z, "data after the end of the compressed stream", detail);
    }
    if (z->produced != z->e->usize) {
        snprintf(detail, sizeof detail, "%llu bytes, the central directory "
                 "says %llu", (unsigned long long)z->produced,
                 (unsigned long long)z->e->usize);
        return bad(z, "the data inflates to another size", detail);
    }
    if (cdd_inflate_be_crc(z->be) != z->e->crc32) {
        snprintf(detail, sizeof detail, "CRC-32 %08lx, the central "
                 "directory says %08lx",
                 (unsigned long)cdd_inflate_be_crc(z->be),
                 (unsigned long)z->e->crc32);
        return bad(z, "damaged data", detail);
    }
    z->done = 1;
    return 0;
}

int cdd_inflate_read(struct cdd_inflate *z, void *buf, size_t len,
                     size_t *got)
{
    unsigned char *out = buf;
    size_t room = len;
    int r;

    *got = 0;
    if (z->failed)
        return cdd_fail(CDD_E_CORRUPT, z->path, 0, "reading after an error");
    while (room > 0 && !z->ended) {
        if (z->avail == 0 && z->read < z->e->csize && (r = refill(z)) < 0)
            return r;
        const char *why = NULL;
        size_t before = room, in_before = z->avail;
        int s = cdd_inflate_be_step(z->be, &z->next, &z->avail, &out, &room,
                                    &why);
        if (s < 0)
            return bad(z, "damaged data", why);
        /* All input given and no progress: the stream stops short. (The
         * backend may still hold input bits and pending output after the
         * last byte was read, so this is decided only here.) */
        if (s == 0 && room == before && z->avail == in_before)
            return bad(z, z->avail == 0 ? "the compressed stream ends "
                                          "before its end marker"
                                        : "damaged data", NULL);
        z->produced += before - room;
        /* A bomb stops here: never more than the record promised. */
        if (z->produced > z->e->usize)
            return bad(z, "the data inflates to more than the central "
                          "directory's size", NULL);
        if (s == 1)
            z->ended = 1;
    }
    /* The end is checked as soon as it is decoded, so that a caller that
     * stops reading at the expected size still learns of a bad CRC. */
    if (z->ended && !z->done && (r = check_end(z)) < 0)
        return r;
    *got = len - room;
    return 0;
}

uint64_t cdd_inflate_consumed(const struct cdd_inflate *z)
{
    return z ? z->read : 0;
}

void cdd_inflate_free(struct cdd_inflate *z)
{
    if (!z)
        return;
    cdd_inflate_be_free(z->be);
    free(z->in);
    free(z);
}
