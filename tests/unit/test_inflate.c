/* The zip inflater (src/core/archive/inflate_int.h), on raw deflate streams
 * made here with zlib: every buffer size, the end checks (size, CRC-32,
 * bytes after the stream's end, a stream cut short, a file cut short), and
 * random damage, which must always be refused and never crash. Built once
 * per backend: test_inflate links the tool's (ISA-L on Linux), and where
 * that is not zlib, test_inflate_zlib links inflate_zlib.c, so both
 * backends pass the same cases. */
#include <errno.h>
#include <stdint.h>
#include <zlib.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "inflate_int.h"
#include "fixture.h"
#include "test.h"

static const char *tmpdir;

static void setup(void)
{
    tmpdir = fx_scratch(cdd_inflate_backend());
}

static const char *tmp_path(const char *name)
{
    return fx_path(tmpdir, name);
}

/* a then b, as one file. */
static void write_file(const char *path, const void *a, size_t na,
                       const void *b, size_t nb)
{
    unsigned char *all = malloc(na + nb + 1);
    CHECK(all != NULL);
    if (!all)
        return;
    memcpy(all, a, na);
    if (nb)
        memcpy(all + na, b, nb);
    CHECK_INT(fx_write(path, all, na + nb), 0);
    free(all);
}

/* Data shaped like GPU code: runs of repeated words with noise, so it
 * compresses about 2:1 and exercises long and short matches. */
static unsigned char *make_data(size_t n, uint32_t seed)
{
    unsigned char *d = malloc(n ? n : 1);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (x >> 24) < 96 ? (unsigned char)(x >> 16)
                              : (unsigned char)("\x00\x10\x20\x30\xff\x01"
                                                [(i / 4) % 6]);
    }
    return d;
}

/* Raw deflate of d at the given level (0: stored blocks). */
static unsigned char *deflate_raw(const unsigned char *d, size_t n, int level,
                                  size_t *out_len)
{
    z_stream zs = {0};
    size_t cap = n + n / 100 + 1024;
    unsigned char *o = malloc(cap);
    CHECK(deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8,
                       Z_DEFAULT_STRATEGY) == Z_OK);
    zs.next_in = (Bytef *)d;
    zs.avail_in = (uInt)n;
    zs.next_out = o;
    zs.avail_out = (uInt)cap;
    CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
    *out_len = cap - zs.avail_out;
    deflateEnd(&zs);
    return o;
}

/* Inflate the entry e of `path` with reads of `chunk` bytes; returns the
 * result and fills *out (malloc'd) with what came out. */
static int run(const char *path, const struct cdd_zipcd_entry *e,
               size_t chunk, unsigned char **out, size_t *out_len)
{
    struct cdd_rfile *f = NULL;
    struct cdd_inflate *z = NULL;
    size_t cap = (size_t)e->usize + chunk + 1, len = 0, got = 0;
    unsigned char *o = malloc(cap);
    int r;

    if ((r = cdd_fs_open_read(path, &f)) < 0)
        goto out;
    if ((r = cdd_inflate_open(f, path, e, &z)) < 0)
        goto out;
    do {
        size_t want = chunk < cap - len ? chunk : cap - len;
        if ((r = cdd_inflate_read(z, o + len, want, &got)) < 0)
            goto out;
        len += got;
    } while (got > 0 && len < cap);
    if (len >= cap)
        r = -1000; /* never reached an end: the test fails */
out:
    cdd_inflate_free(z);
    cdd_rfile_close(f);
    if (out) {
        *out = o;
        *out_len = len;
    } else {
        free(o);
    }
    return r;
}

static struct cdd_zipcd_entry entry(uint64_t off, size_t csize, size_t usize,
                                    uint32_t crc)
{
    struct cdd_zipcd_entry e;
    memset(&e, 0, sizeof e);
    e.name = "bin/cudnn64_8.dll";
    e.name_len = strlen(e.name);
    e.method = 8;
    e.crc32 = crc;
    e.csize = csize;
    e.usize = usize;
    e.data_offset = off;
    e.end_offset = off + csize;
    e.type = CDD_ENTRY_FILE;
    return e;
}

static int msg_has(const char *needle)
{
    return strstr(cdd_last_error()->msg, needle) != NULL;
}

static void test_backend_named(void)
{
    const char *b = cdd_inflate_backend();
    CHECK(strcmp(b, "isa-l") == 0 || strcmp(b, "zlib") == 0);
    fprintf(stderr, "    backend: %s\n", b);
}

/* Every read size gives back exactly the data, at levels 0 (stored
 * blocks), 1, 6 and 9, for sizes 0 to 3 MiB, at an offset in the file. */
static void test_roundtrip(void)
{
    static const size_t sizes[] = {0, 1, 100, 65536, 3u << 20};
    static const int levels[] = {0, 1, 6, 9};
    static const size_t chunks[] = {1, 7, 4096, 256 * 1024, 4u << 20};
    unsigned char pad[123];
    memset(pad, 'P', sizeof pad);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si], clen = 0;
        unsigned char *d = make_data(n, (uint32_t)si);
        uint32_t crc = (uint32_t)crc32(0, d, (uInt)n);
        for (size_t li = 0; li < sizeof levels / sizeof *levels; li++) {
            unsigned char *c = deflate_raw(d, n, levels[li], &clen);
            write_file(tmp_path("rt"), pad, sizeof pad, c, clen);
            struct cdd_zipcd_entry e = entry(sizeof pad, clen, n, crc);
            for (size_t ci = 0; ci < sizeof chunks / sizeof *chunks; ci++) {
                if (chunks[ci] == 1 && n > 65536)
                    continue; /* a byte at a time: only the small ones */
                unsigned char *o = NULL;
                size_t olen = 0;
                int r = run(tmp_path("rt"), &e, chunks[ci], &o, &olen);
                CHECK_MSG(r == 0, "size %zu level %d chunk %zu: %s", n,
                          levels[li], chunks[ci], cdd_last_error()->msg);
                CHECK_MSG(olen == n && (n == 0 || memcmp(o, d, n) == 0),
                          "size %zu level %d chunk %zu: %zu bytes back", n,
                          levels[li], chunks[ci], olen);
                free(o);
            }
            free(c);
        }
        free(d);
    }
}

/* The end checks, each naming the entry. */
static void test_end_checks(void)
{
    size_t n = 200000, clen = 0;
    unsigned char *d = make_data(n, 7);
    uint32_t crc = (uint32_t)crc32(0, d, (uInt)n);
    unsigned char *c = deflate_raw(d, n, 6, &clen);
    struct cdd_zipcd_entry e;
    int r;

    write_file(tmp_path("end"), c, clen, "JUNKJUNK", 8);

    e = entry(0, clen, n, crc ^ 1);
    r = run(tmp_path("end"), &e, 65536, NULL, NULL);
    CHECK_INT(r, CDD_E_CORRUPT);
    CHECK(msg_has("\"bin/cudnn64_8.dll\"") && msg_has("CRC-32"));

    e = entry(0, clen, n + 1, crc);
    CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("inflates to another size"));

    e = entry(0, clen, n - 1, crc);
    CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("more than the central directory's size"));

    /* bytes after the stream's end, inside the entry's compressed size */
    e = entry(0, clen + 8, n, crc);
    CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("data after the end of the compressed stream"));
    e = entry(0, clen + 1, n, crc);
    CHECK_INT(run(tmp_path("end"), &e, 1 << 20, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("data after the end of the compressed stream"));

    /* the stream cut short by the record's compressed size */
    for (size_t cut = 1; cut < clen; cut += clen / 7 + 1) {
        e = entry(0, clen - cut, n, crc);
        CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
        CHECK_MSG(msg_has("ends before its end marker") ||
                      msg_has("damaged data"),
                  "cut %zu: %s", cut, cdd_last_error()->msg);
    }

    /* no compressed bytes at all (the inflater once stepped from a null
     * input pointer here: found by fuzz_inflate under UBSan) */
    e = entry(0, 0, 0, 0);
    CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("ends before its end marker"));

    /* the file itself shorter than the record says */
    write_file(tmp_path("short"), c, clen / 2, NULL, 0);
    e = entry(0, clen, n, crc);
    CHECK_INT(run(tmp_path("short"), &e, 65536, NULL, NULL), CDD_E_CORRUPT);
    CHECK(msg_has("the file ends inside the entry's data"));

    /* and the good one still passes, the junk after it not read */
    e = entry(0, clen, n, crc);
    CHECK_INT(run(tmp_path("end"), &e, 65536, NULL, NULL), 0);
    free(c);
    free(d);
}

/* Random damage (flipped bits, overwritten bytes, a cut) is refused or,
 * where the damage leaves a valid stream of the same data, passes: the
 * verdict is never a wrong success and nothing crashes. */
static void test_random_damage(void)
{
    size_t n = 300000, clen = 0;
    unsigned char *d = make_data(n, 11);
    uint32_t crc = (uint32_t)crc32(0, d, (uInt)n);
    unsigned char *c = deflate_raw(d, n, 6, &clen);
    unsigned char *m = malloc(clen);
    uint32_t x = 99;
    int refused = 0;

    for (int round = 0; round < 300; round++) {
        memcpy(m, c, clen);
        int k = 1 + round % 4;
        for (int j = 0; j < k; j++) {
            x = x * 1103515245u + 12345u;
            size_t at = (x >> 8) % clen;
            if (round % 2)
                m[at] ^= (unsigned char)(1u << (x % 8));
            else
                m[at] = (unsigned char)(x >> 3);
        }
        write_file(tmp_path("dmg"), m, clen, NULL, 0);
        struct cdd_zipcd_entry e = entry(0, clen, n, crc);
        unsigned char *o = NULL;
        size_t olen = 0;
        int r = run(tmp_path("dmg"), &e, 100000, &o, &olen);
        if (r == 0)
            CHECK_MSG(olen == n && memcmp(o, d, n) == 0,
                      "round %d: a damaged stream passed with other data",
                      round);
        else {
            CHECK_MSG(r == CDD_E_CORRUPT, "round %d: %d %s", round, r,
                      cdd_last_error()->msg);
            refused++;
        }
        free(o);
    }
    CHECK_MSG(refused > 250, "only %d of 300 damaged streams refused",
              refused);
    free(m);
    free(c);
    free(d);
}

/* A bomb: 64 MiB of zeros in a few KiB, its record saying 1 KiB. Reading
 * stops at the record's size; no more than that is ever handed out. */
static void test_bomb(void)
{
    size_t n = 64u << 20, clen = 0;
    unsigned char *d = calloc(1, n);
    unsigned char *c = deflate_raw(d, n, 9, &clen);
    struct cdd_zipcd_entry e = entry(0, clen, 1024, 0);
    unsigned char *o = NULL;
    size_t olen = 0;
    write_file(tmp_path("bomb"), c, clen, NULL, 0);
    CHECK_INT(run(tmp_path("bomb"), &e, 4096, &o, &olen), CDD_E_CORRUPT);
    CHECK(msg_has("more than the central directory's size"));
    CHECK_MSG(olen <= 1024, "handed out %zu bytes", olen);
    free(o);
    free(c);
    free(d);
}

/* A stream whose back-reference reaches before the start (found by
 * fuzz_inflate): ISA-L refused it but left its input count wrapped, and the
 * backend then reported one byte more consumed than it was given. The
 * backend's counts stay within what it was handed, whatever the data. */
static void test_counts_on_error(void)
{
    static const unsigned char s[] = {0x42, 0x25, 0x30, 0x01, 0x00, 0x7f,
                                      0xfc, 0x76, 0xe9, 0x23, 0x18, 0x5d,
                                      0x25, 0x0b, 0x2c, 0x0b};
    struct cdd_inflate_be *b = NULL;
    unsigned char out[4096], *op = out;
    const unsigned char *ip = s;
    size_t in_len = sizeof s, out_len = sizeof out;
    const char *why = NULL;
    CHECK_INT(cdd_inflate_be_new(&b), 0);
    if (!b)
        return;
    CHECK_INT(cdd_inflate_be_step(b, &ip, &in_len, &op, &out_len, &why), -1);
    CHECK(why != NULL);
    CHECK_MSG(ip >= s && ip <= s + sizeof s && in_len == sizeof s - (size_t)(ip - s),
              "input: %td consumed, %zu left of %zu", ip - s, in_len, sizeof s);
    CHECK(op >= out && out_len == sizeof out - (size_t)(op - out));
    cdd_inflate_be_free(b);
}

static void test_setup(void) { setup(); }

TEST_MAIN(TEST(test_setup), TEST(test_backend_named), TEST(test_roundtrip),
          TEST(test_end_checks), TEST(test_random_damage), TEST(test_bomb),
          TEST(test_counts_on_error))
