/* inflate_int.h's backend on zlib: raw deflate (negative window bits), the
 * CRC-32 computed over the output by zlib's crc32(). */
#include "inflate_int.h"

#include <limits.h>
#include <stdlib.h>

#include <zlib.h>

#include "cdd/error.h"

struct cdd_inflate_be {
    z_stream zs;
    uLong crc;
};

const char *cdd_inflate_backend(void)
{
    return "zlib";
}

int cdd_inflate_be_new(struct cdd_inflate_be **out)
{
    struct cdd_inflate_be *b = calloc(1, sizeof *b);
    *out = NULL;
    if (!b)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    if (inflateInit2(&b->zs, -MAX_WBITS) != Z_OK) {
        free(b);
        return cdd_fail(CDD_E_NOMEM, NULL, 0, "zlib cannot start inflating");
    }
    b->crc = crc32(0L, Z_NULL, 0);
    *out = b;
    return 0;
}

int cdd_inflate_be_step(struct cdd_inflate_be *b, const unsigned char **in,
                        size_t *in_len, unsigned char **out, size_t *out_len,
                        const char **why)
{
    z_stream *zs = &b->zs;
    uInt in_n = *in_len > UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)*in_len;
    uInt out_n = *out_len > UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)*out_len;
    unsigned char *start = *out;
    int rc;

    zs->next_in = (Bytef *)*in;
    zs->avail_in = in_n;
    zs->next_out = start;
    zs->avail_out = out_n;
    rc = inflate(zs, Z_NO_FLUSH);
    *in += in_n - zs->avail_in;
    *in_len -= in_n - zs->avail_in;
    *out += out_n - zs->avail_out;
    *out_len -= out_n - zs->avail_out;
    b->crc = crc32(b->crc, start, out_n - zs->avail_out);
    if (rc == Z_STREAM_END)
        return 1;
    if (rc == Z_OK || rc == Z_BUF_ERROR)
        return 0;
    *why = zs->msg ? zs->msg : "invalid deflate data";
    return -1;
}

size_t cdd_inflate_be_overread(const struct cdd_inflate_be *b)
{
    (void)b; /* zlib stops at the stream's last byte */
    return 0;
}

uint32_t cdd_inflate_be_crc(const struct cdd_inflate_be *b)
{
    return (uint32_t)b->crc;
}

void cdd_inflate_be_free(struct cdd_inflate_be *b)
{
    if (!b)
        return;
    inflateEnd(&b->zs);
    free(b);
}
