/* Fuzz target: the zip inflater (archive/inflate.c and the build's backend,
 * ISA-L or zlib), against zlib's own inflate as the reference: zlib is what
 * unzip, Python's zipfile and libarchive read deflated members with, so a
 * stream must mean the same to us. The input is a raw deflate stream.
 *   - The backend, fed in pieces and writing into pieces whose sizes come
 *     from the input, must reach the stream's end exactly where zlib does,
 *     with the same bytes and their CRC-32; where zlib needs more input it
 *     must not see an end.
 *   - Where zlib refuses the data, the backend may read it only if a second
 *     reference, a plain decoder written here from RFC 1951 that differs
 *     from zlib only in accepting incomplete Huffman codes (zlib refuses
 *     them by policy; ISA-L reads them, and a prefix code, complete or not,
 *     decodes one way only), reads it too, to the same end and the same
 *     bytes. Over-subscribed codes (which could decode more than one way),
 *     bad symbols, distances before the start, bad stored lengths: refused
 *     by all three. docs/fuzzing.md says what this means for zip readers.
 *   - The whole inflater (cdd_inflate_*, reading the input as an entry's
 *     data from a file) accepts the entry only when the backend's stream
 *     ends at its last byte and the size and CRC-32 given are right: one
 *     byte more in the size, one bit off in the CRC, or bytes after the
 *     end, and it refuses with CDD_E_CORRUPT. */
#include "fuzz.h"

#include <zlib.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "inflate_int.h"

#define OUT_CAP (4u << 20) /* larger outputs are skipped (zlib's ratio: 1032) */

enum verdict { V_END, V_BAD, V_MORE };

struct result {
    enum verdict v;
    size_t consumed; /* V_END: input bytes that were the stream */
    unsigned char *out;
    size_t out_len;
};

static unsigned char *out_ref, *out_got, *out_whole, *out_lenient;

static void reference(const uint8_t *data, size_t size, struct result *r)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    FUZZ_ASSERT(inflateInit2(&zs, -MAX_WBITS) == Z_OK, "inflateInit2");
    zs.next_in = (Bytef *)data;
    zs.avail_in = (uInt)size;
    zs.next_out = out_ref;
    zs.avail_out = OUT_CAP;
    int rc = inflate(&zs, Z_FINISH);
    r->out = out_ref;
    r->out_len = OUT_CAP - zs.avail_out;
    r->consumed = size - zs.avail_in;
    if (rc == Z_STREAM_END)
        r->v = V_END;
    else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT)
        r->v = V_BAD;
    else
        r->v = zs.avail_out == 0 ? V_BAD /* over the cap: skipped */ : V_MORE;
    if (rc != Z_STREAM_END && zs.avail_out == 0)
        r->out_len = SIZE_MAX; /* marker: output over the cap */
    inflateEnd(&zs);
}

/* ---- the lenient reference: RFC 1951, incomplete codes allowed --------- */

struct lbits {
    const uint8_t *d;
    size_t len, pos; /* bytes taken so far */
    uint32_t buf;
    int cnt;
};

/* n bits (LSB first), or -1 when the input ends. Bytes are taken only when
 * needed, so pos ends as the number of bytes the stream used. */
static long lget(struct lbits *b, int n)
{
    while (b->cnt < n) {
        if (b->pos == b->len)
            return -1;
        b->buf |= (uint32_t)b->d[b->pos++] << b->cnt;
        b->cnt += 8;
    }
    long v = (long)(b->buf & ((1u << n) - 1));
    b->buf >>= n;
    b->cnt -= n;
    return v;
}

struct lhuff {
    int count[16];
    int symbol[320];
};

/* Canonical code from lengths: 0 complete, > 0 incomplete (allowed here),
 * -1 over-subscribed. */
static int lbuild(struct lhuff *h, const int *len, int n)
{
    int offs[16], left = 1;
    memset(h->count, 0, sizeof h->count);
    for (int i = 0; i < n; i++)
        h->count[len[i]]++;
    for (int l = 1; l < 16; l++) {
        left = left * 2 - h->count[l];
        if (left < 0)
            return -1;
    }
    offs[1] = 0;
    for (int l = 1; l < 15; l++)
        offs[l + 1] = offs[l] + h->count[l];
    for (int i = 0; i < n; i++)
        if (len[i])
            h->symbol[offs[len[i]]++] = i;
    return left;
}

/* A symbol; -1 input ended, -2 a code no symbol has. */
static int ldecode(struct lbits *b, const struct lhuff *h)
{
    int code = 0, first = 0, index = 0;
    for (int l = 1; l < 16; l++) {
        long bit = lget(b, 1);
        if (bit < 0)
            return -1;
        code |= (int)bit;
        int count = h->count[l];
        if (code - first < count)
            return h->symbol[index + code - first];
        index += count;
        first = (first + count) << 1;
        code <<= 1;
    }
    return -2;
}

static const int lbase[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19,
    23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const int lextra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
    2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const int dbase[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65,
    97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
    8193, 12289, 16385, 24577};
static const int dextra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

#define LMORE -1
#define LBAD -2
#define LCAP -3

static int lcodes(struct lbits *b, const struct lhuff *lit,
                  const struct lhuff *dist, unsigned char *out, size_t *n)
{
    for (;;) {
        int sym = ldecode(b, lit);
        if (sym == -1)
            return LMORE;
        if (sym < 0 || sym > 285)
            return LBAD;
        if (sym < 256) {
            if (*n == OUT_CAP)
                return LCAP;
            out[(*n)++] = (unsigned char)sym;
            continue;
        }
        if (sym == 256)
            return 0;
        sym -= 257;
        long e = lget(b, lextra[sym]);
        if (e < 0)
            return LMORE;
        size_t len = (size_t)(lbase[sym] + e);
        int ds = ldecode(b, dist);
        if (ds == -1)
            return LMORE;
        if (ds < 0 || ds > 29)
            return LBAD;
        long de = lget(b, dextra[ds]);
        if (de < 0)
            return LMORE;
        size_t d = (size_t)(dbase[ds] + de);
        if (d > *n)
            return LBAD;
        if (len > OUT_CAP - *n)
            return LCAP;
        for (size_t i = 0; i < len; i++, (*n)++)
            out[*n] = out[*n - d];
    }
}

static void lenient(const uint8_t *data, size_t size, unsigned char *out,
                    struct result *r)
{
    struct lbits b = {data, size, 0, 0, 0};
    struct lhuff lit, dist;
    size_t n = 0;
    int rc = 0;
    long last;
    r->out = out;
    r->out_len = SIZE_MAX;
    do {
        long type;
        if ((last = lget(&b, 1)) < 0 || (type = lget(&b, 2)) < 0) {
            rc = LMORE;
            break;
        }
        if (type == 0) {
            b.buf = 0; /* to the byte boundary */
            b.cnt = 0;
            long lo = lget(&b, 16), nlo = lget(&b, 16);
            if (lo < 0 || nlo < 0) {
                rc = LMORE;
                break;
            }
            if ((lo ^ 0xffff) != nlo) {
                rc = LBAD;
                break;
            }
            for (long i = 0; i < lo && !rc; i++) {
                long c = lget(&b, 8);
                if (c < 0)
                    rc = LMORE;
                else if (n == OUT_CAP)
                    rc = LCAP;
                else
                    out[n++] = (unsigned char)c;
            }
        } else if (type == 1) {
            int len[288];
            for (int i = 0; i < 288; i++)
                len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
            lbuild(&lit, len, 288);
            for (int i = 0; i < 30; i++)
                len[i] = 5;
            lbuild(&dist, len, 30);
            rc = lcodes(&b, &lit, &dist, out, &n);
        } else if (type == 2) {
            static const int order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5,
                                          11, 4, 12, 3, 13, 2, 14, 1, 15};
            int len[320] = {0};
            long nlen = lget(&b, 5), ndist = lget(&b, 5), ncode = lget(&b, 4);
            if (nlen < 0 || ndist < 0 || ncode < 0) {
                rc = LMORE;
                break;
            }
            nlen += 257;
            ndist += 1;
            ncode += 4;
            if (nlen > 286 || ndist > 30) {
                rc = LBAD;
                break;
            }
            for (int i = 0; i < ncode && !rc; i++) {
                long v = lget(&b, 3);
                if (v < 0)
                    rc = LMORE;
                else
                    len[order[i]] = (int)v;
            }
            if (rc)
                break;
            struct lhuff cl;
            if (lbuild(&cl, len, 19) < 0) {
                rc = LBAD;
                break;
            }
            int k = 0;
            while (k < nlen + ndist && !rc) {
                int sym = ldecode(&b, &cl);
                long rep = 0;
                int val = 0;
                if (sym == -1) {
                    rc = LMORE;
                    break;
                }
                if (sym < 0) {
                    rc = LBAD;
                    break;
                }
                if (sym < 16) {
                    len[k++] = sym;
                    continue;
                }
                if (sym == 16) {
                    if (k == 0) {
                        rc = LBAD;
                        break;
                    }
                    val = len[k - 1];
                    rep = lget(&b, 2);
                    rep = rep < 0 ? -1 : 3 + rep;
                } else if (sym == 17) {
                    rep = lget(&b, 3);
                    rep = rep < 0 ? -1 : 3 + rep;
                } else {
                    rep = lget(&b, 7);
                    rep = rep < 0 ? -1 : 11 + rep;
                }
                if (rep < 0) {
                    rc = LMORE;
                    break;
                }
                if (k + rep > nlen + ndist) {
                    rc = LBAD;
                    break;
                }
                while (rep--)
                    len[k++] = val;
            }
            if (rc)
                break;
            int dl[30];
            for (int i = 0; i < ndist; i++)
                dl[i] = len[nlen + i];
            if (lbuild(&lit, len, (int)nlen) < 0 ||
                lbuild(&dist, dl, (int)ndist) < 0) {
                rc = LBAD;
                break;
            }
            rc = lcodes(&b, &lit, &dist, out, &n);
        } else {
            rc = LBAD;
        }
    } while (!rc && !last);
    if (rc == LCAP)
        return; /* out_len stays SIZE_MAX: skipped */
    r->v = rc == 0 ? V_END : rc == LMORE ? V_MORE : V_BAD;
    r->consumed = b.pos;
    r->out_len = n;
}

/* Piece sizes from the input itself, 1..4096, so the fuzzer steers them. */
static size_t piece(const uint8_t *data, size_t size, size_t *k)
{
    size_t n = size ? 1 + (size_t)(data[*k % size] * 37u + *k * 11u) % 4096u : 1;
    (*k)++;
    return n;
}

static void backend(const uint8_t *data, size_t size, struct result *r)
{
    struct cdd_inflate_be *b = NULL;
    size_t pos = 0, k = 0, produced = 0;
    FUZZ_ASSERT(cdd_inflate_be_new(&b) == 0, "backend");
    r->v = V_MORE;
    r->out = out_got;
    for (int rounds = 0; rounds < 1000000; rounds++) {
        size_t in_room = piece(data, size, &k), out_room = piece(data, size, &k);
        if (in_room > size - pos)
            in_room = size - pos;
        if (out_room > OUT_CAP - produced)
            out_room = OUT_CAP - produced;
        const unsigned char *in = data + pos;
        unsigned char *out = out_got + produced;
        size_t in_len = in_room, out_len = out_room;
        const char *why = NULL;
        int rc = cdd_inflate_be_step(b, &in, &in_len, &out, &out_len, &why);
        FUZZ_ASSERT(in >= data && (size_t)(in - data) <= size &&
                        out - (out_got + produced) ==
                            (ptrdiff_t)(out_room - out_len),
                    "the backend's pointers and counts disagree: input at "
                    "%td of %zu (this piece %zu at %zu), output %td of %zu "
                    "room, %zu left", in - data, size, in_room, pos,
                    out - (out_got + produced), out_room, out_len);
        pos = (size_t)(in - data);
        produced += out_room - out_len;
        if (rc < 0) {
            FUZZ_ASSERT(why && *why, "an error without words");
            r->v = V_BAD;
            break;
        }
        if (rc == 1) {
            /* Bytes the backend took beyond the end (ISA-L's bit buffer,
             * possibly from an earlier piece) are counted, not handed
             * back by moving the pointer. */
            size_t over = cdd_inflate_be_overread(b);
            FUZZ_ASSERT(over <= pos, "overread %zu beyond the %zu bytes given",
                        over, pos);
            r->v = V_END;
            r->consumed = pos - over;
            break;
        }
        if (produced == OUT_CAP) {
            r->v = V_BAD; /* over the cap: skipped */
            produced = SIZE_MAX;
            break;
        }
        /* No input left and no room used: zlib would say "more input". */
        if (pos == size && out_len == out_room)
            break;
    }
    r->out_len = produced;
    if (r->v == V_END)
        FUZZ_ASSERT(cdd_inflate_be_crc(b) == (uint32_t)crc32(0L, out_got,
                                                              (uInt)produced),
                    "the backend's CRC-32 is not the output's");
    cdd_inflate_be_free(b);
}

/* The whole inflater on the input as entry data; 0 or its error. */
static int whole(const char *path, size_t size, uint64_t usize, uint32_t crc,
                 const uint8_t *data, size_t *k, size_t *got_len)
{
    struct cdd_rfile *f = NULL;
    struct cdd_inflate *z = NULL;
    struct cdd_zipcd_entry e;
    memset(&e, 0, sizeof e);
    e.name = "fuzz/entry.dll";
    e.name_len = strlen(e.name);
    e.method = 8;
    e.crc32 = crc;
    e.csize = size;
    e.usize = usize;
    e.data_offset = 0;
    e.end_offset = size;
    FUZZ_ASSERT(cdd_fs_open_read(path, &f) == 0, "open");
    int r = cdd_inflate_open(f, path, &e, &z);
    size_t total = 0;
    while (!r) {
        size_t got = 0, want = piece(data, size, k);
        if (total + want > OUT_CAP)
            want = OUT_CAP - total;
        if (want == 0) {
            r = CDD_E_CORRUPT; /* over the cap: not compared */
            break;
        }
        r = cdd_inflate_read(z, out_whole + total, want, &got);
        if (!r && got == 0)
            break;
        total += got;
    }
    if (r) {
        FUZZ_ASSERT(r == CDD_E_CORRUPT || r == CDD_E_NOMEM, "error %d", r);
        fuzz_check_error();
    }
    *got_len = total;
    cdd_clear_error();
    cdd_inflate_free(z);
    cdd_rfile_close(f);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[600];
    struct result ref, got;
    size_t k = 0, n = 0;
    if (!out_ref) {
        out_ref = malloc(OUT_CAP);
        out_got = malloc(OUT_CAP);
        out_whole = malloc(OUT_CAP);
        out_lenient = malloc(OUT_CAP);
        FUZZ_ASSERT(out_ref && out_got && out_whole && out_lenient, "buffers");
        snprintf(path, sizeof path, "%s/entry.deflate", fuzz_scratch());
    }
    reference(data, size, &ref);
    if (ref.out_len == SIZE_MAX)
        return 0;
    backend(data, size, &got);
    if (got.out_len == SIZE_MAX)
        return 0;
    /* The lenient reference reads all zlib reads, the same way. */
    struct result len_ref;
    memset(&len_ref, 0, sizeof len_ref);
    lenient(data, size, out_lenient, &len_ref);
    if (len_ref.out_len == SIZE_MAX)
        return 0;
    if (ref.v == V_END)
        FUZZ_ASSERT(len_ref.v == V_END && len_ref.consumed == ref.consumed &&
                        len_ref.out_len == ref.out_len &&
                        memcmp(len_ref.out, ref.out, ref.out_len) == 0,
                    "the lenient reference reads zlib's stream otherwise");
    /* (zlib may wait for more input where a refusal is already certain:
     * an empty code-length code reads as zero lengths of one bit each.) */
    if (ref.v == V_MORE)
        FUZZ_ASSERT(len_ref.v != V_END, "the lenient reference ends a stream "
                    "where zlib waits for more");
    if (ref.v == V_BAD && got.v != V_BAD) {
        /* Only what the lenient reference reads the same way. */
        FUZZ_ASSERT(len_ref.v != V_BAD, "zlib and the lenient decoder find "
                    "the data damaged, the backend %s",
                    got.v == V_END ? "reads it" : "waits for more");
        FUZZ_ASSERT(got.v == len_ref.v, "the lenient decoder %s, the backend "
                    "%s", len_ref.v == V_END ? "reads it" : "waits for more",
                    got.v == V_END ? "reads it" : "waits for more");
        if (got.v == V_END)
            FUZZ_ASSERT(got.consumed == len_ref.consumed &&
                            got.out_len == len_ref.out_len &&
                            memcmp(got.out, len_ref.out, got.out_len) == 0,
                        "the backend and the lenient decoder read the stream "
                        "differently");
        ref = got; /* what the inflater must then do, checked below */
        memcpy(out_ref, got.out, got.out_len);
        ref.out = out_ref;
    }
    switch (ref.v) {
    case V_END:
        FUZZ_ASSERT(got.v == V_END, "zlib ends the stream at %zu, the backend "
                    "says %s", ref.consumed, got.v == V_BAD ? "damaged" : "more");
        FUZZ_ASSERT(got.consumed == ref.consumed,
                    "the stream ends at %zu for zlib, %zu for the backend",
                    ref.consumed, got.consumed);
        FUZZ_ASSERT(got.out_len == ref.out_len &&
                        memcmp(got.out, ref.out, ref.out_len) == 0,
                    "the backend's bytes differ from zlib's");
        break;
    case V_BAD:
        break; /* the backend refused it too (above) */
    case V_MORE:
        FUZZ_ASSERT(got.v != V_END, "zlib needs more input, the backend ended "
                    "the stream at %zu", got.consumed);
        break;
    }

    fuzz_write_file(path, data, size);
    uint32_t crc = (uint32_t)crc32(0L, ref.out, (uInt)ref.out_len);
    int exact = ref.v == V_END && ref.consumed == size;
    int r = whole(path, size, ref.out_len, crc, data, &k, &n);
    FUZZ_ASSERT(exact ? r == 0 : r != 0,
                "the inflater %s an entry zlib %s",
                r ? "refused" : "accepted", exact ? "reads" : "does not");
    if (exact) {
        FUZZ_ASSERT(n == ref.out_len && memcmp(out_whole, ref.out, n) == 0,
                    "the inflater's bytes differ from zlib's");
        FUZZ_ASSERT(whole(path, size, ref.out_len + 1, crc, data, &k, &n) != 0,
                    "a size one byte too large accepted");
        FUZZ_ASSERT(whole(path, size, ref.out_len, crc ^ 1, data, &k, &n) != 0,
                    "a wrong CRC-32 accepted");
    }
    return 0;
}
