/* What the ELF and PE parser tests (test_elf.c, test_pe.c) share: parsing
 * an image from memory, the results any input may give, the structural
 * sanity of any successful parse, every truncation of an image, and seeded
 * random damage. Include after test.h (it uses CHECK). */
#ifndef CDD_TEST_BINFILE_CHECK_H
#define CDD_TEST_BINFILE_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/binfile.h"
#include "cdd/error.h"

static inline int bf_parse_mem(const void *buf, size_t len, const char *name,
                               struct cdd_bininfo *b)
{
    struct cdd_binsrc src;
    cdd_binsrc_mem(&src, buf, len, name);
    return cdd_bin_parse(&src, b);
}

/* What a parse of any bytes may return: success, or a clean refusal. */
static inline int bf_acceptable(int rc)
{
    return rc == 0 || rc == CDD_E_CORRUPT || rc == CDD_E_NOTSUP;
}

/* Structural sanity of a successful parse of any input. */
static inline void bf_check_sane(const struct cdd_bininfo *b)
{
    CHECK(b->fmt == CDD_BIN_ELF || b->fmt == CDD_BIN_PE);
    CHECK(b->machine_name != NULL);
    CHECK(b->n_needed <= CDD_BIN_MAX_NEEDED);
    CHECK(b->n_delay_needed <= CDD_BIN_MAX_NEEDED);
    CHECK(b->n_exports <= CDD_BIN_MAX_EXPORTS);
    for (size_t i = 0; i < b->n_needed; i++)
        CHECK(b->needed[i] && strlen(b->needed[i]) <= CDD_BIN_MAX_STRING);
    for (size_t i = 0; i < b->n_delay_needed; i++)
        CHECK(b->delay_needed[i] &&
              strlen(b->delay_needed[i]) <= CDD_BIN_MAX_STRING);
    for (size_t i = 1; i < b->n_exports; i++)
        CHECK(strcmp(b->exports[i - 1], b->exports[i]) < 0);
}

/* Every prefix of a valid image (parsed as name): never a crash, never
 * success for a library cut short (the loader would fail on it). */
static inline void bf_truncations(const unsigned char *img, size_t len,
                                  const char *name, const char *what)
{
    size_t accepted = 0;
    for (size_t n = 0; n < len; n++) {
        struct cdd_bininfo b = {0};
        int rc = bf_parse_mem(img, n, name, &b);
        CHECK_MSG(bf_acceptable(rc), "%s truncated to %zu: rc %d", what, n, rc);
        if (rc == 0)
            accepted++;
        CHECK_MSG(rc != 0 || b.fmt, "%s: success without a format", what);
        cdd_bininfo_clear(&b);
    }
    CHECK_MSG(accepted == 0, "%s: %zu truncated images accepted", what, accepted);
}

/* xorshift64: the next value of *state. */
static inline uint64_t bf_xorshift(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* The values that break parsers of any format (a test adds its own). */
#define BF_NASTY 0, 1, 0xffffffffu, 0x7fffffffu, 0x80000000u, 0xffff

/* How bf_mutations damages an image of one format. */
struct bf_damage {
    const char *name;       /* the image's name for the parser */
    const uint32_t *nasty;  /* values written over 4 aligned bytes */
    size_t n_nasty;
    size_t hot;             /* > 0: half the edits aim at the first hot bytes */
    uint64_t *rng;          /* the generator's state (the test's seed) */
};

/* rounds seeded random damages of img: bit flips, random bytes, and fields
 * overwritten with the values that break parsers. Each parses to success
 * (then sane) or a clean refusal recorded as the last error. Returns how
 * many parsed. */
static inline size_t bf_mutations(const unsigned char *img, size_t len,
                                  int rounds, const struct bf_damage *d)
{
    unsigned char *m = malloc(len);
    uint64_t *s = d->rng;
    size_t ok = 0;
    CHECK(m != NULL);
    if (!m)
        return 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(m, img, len);
        int edits = 1 + (int)(bf_xorshift(s) % 4);
        for (int k = 0; k < edits; k++) {
            size_t at = d->hot ? (size_t)(bf_xorshift(s) %
                                          (bf_xorshift(s) & 1 ? len : d->hot))
                               : (size_t)(bf_xorshift(s) % len);
            switch (bf_xorshift(s) % 3) {
            case 0:
                m[at] ^= (unsigned char)(1u << (bf_xorshift(s) % 8));
                break;
            case 1:
                m[at] = (unsigned char)bf_xorshift(s);
                break;
            default: {
                uint32_t v = d->nasty[bf_xorshift(s) % d->n_nasty];
                at &= ~(size_t)3;
                for (int i = 0; i < 4 && at + i < len; i++)
                    m[at + i] = (unsigned char)(v >> (8 * i));
            }
            }
        }
        struct cdd_bininfo b = {0};
        int rc = bf_parse_mem(m, len, d->name, &b);
        CHECK_MSG(bf_acceptable(rc), "mutation %d: rc %d", r, rc);
        if (rc == 0) {
            ok++;
            bf_check_sane(&b);
        } else {
            CHECK_INT(cdd_last_error()->code, rc);
        }
        cdd_bininfo_clear(&b);
    }
    free(m);
    return ok;
}

#endif
