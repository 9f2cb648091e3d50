/* inflate_int.h's backend on Intel's ISA-L (igzip): raw deflate with the
 * CRC-32 of the output computed as it is produced (ISAL_GZIP_NO_HDR: a
 * gzip body without header or trailer, which is exactly a zip member). */
#include "inflate_int.h"

#include <stdlib.h>

#include <isa-l/igzip_lib.h>

#include "cdd/error.h"

struct cdd_inflate_be {
    struct inflate_state st;
    size_t overread; /* bytes in the bit buffer past the stream's end */
};

const char *cdd_inflate_backend(void)
{
    return "isa-l";
}

int cdd_inflate_be_new(struct cdd_inflate_be **out)
{
    struct cdd_inflate_be *b = calloc(1, sizeof *b);
    *out = b;
    if (!b)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
    isal_inflate_init(&b->st);
    b->st.crc_flag = ISAL_GZIP_NO_HDR;
    return 0;
}

static const char *isal_words(int rc)
{
    switch (rc) {
    case ISAL_INVALID_BLOCK:
        return "invalid deflate block";
    case ISAL_INVALID_SYMBOL:
        return "invalid deflate symbol";
    case ISAL_INVALID_LOOKBACK:
        return "back-reference before the start of the data";
    default:
        return "invalid deflate data";
    }
}

int cdd_inflate_be_step(struct cdd_inflate_be *b, const unsigned char **in,
                        size_t *in_len, unsigned char **out, size_t *out_len,
                        const char **why)
{
    struct inflate_state *st = &b->st;
    /* ISA-L counts in 32 bits: hand it at most 1 GiB at a time. */
    uint32_t in_n = *in_len > (1u << 30) ? 1u << 30 : (uint32_t)*in_len;
    uint32_t out_n = *out_len > (1u << 30) ? 1u << 30 : (uint32_t)*out_len;
    int rc;

    st->next_in = (uint8_t *)*in;
    st->avail_in = in_n;
    st->next_out = *out;
    st->avail_out = out_n;
    rc = isal_inflate(st);
    /* On some errors ISA-L leaves avail_in wrapped below zero (0xFFFFFFFF:
     * found by fuzz_inflate); never count more than was given. */
    uint32_t in_left = st->avail_in <= in_n ? st->avail_in : 0;
    uint32_t out_left = st->avail_out <= out_n ? st->avail_out : 0;
    *in += in_n - in_left;
    *in_len -= in_n - in_left;
    *out += out_n - out_left;
    *out_len -= out_n - out_left;
    if (rc < 0) {
        *why = isal_words(rc);
        return -1;
    }
    if (st->block_state == ISAL_BLOCK_FINISH) {
        /* Whole bytes ISA-L took into its bit buffer beyond the stream's
         * end are not part of it. They may come from an earlier call's
         * input, so they are counted, not handed back by moving *in. */
        b->overread = st->read_in_length > 0
                          ? (size_t)(st->read_in_length / 8) : 0;
        return 1;
    }
    return 0;
}

size_t cdd_inflate_be_overread(const struct cdd_inflate_be *b)
{
    return b->overread;
}

uint32_t cdd_inflate_be_crc(const struct cdd_inflate_be *b)
{
    return b->st.crc;
}

void cdd_inflate_be_free(struct cdd_inflate_be *b)
{
    free(b);
}
