/* The binary reader (binrd.c), imported by elf.c and pe.c and by
 * binfile.c: a bounds-checked, cached reader over a cdd_binsrc, a string
 * arena, bounded string lists, and little/big-endian loads. Every read
 * goes through cdd_binrd_read(), which refuses ranges past the end of the
 * file, so the format parsers only decide what to read. */
#ifndef CDD_BINRD_INT_H
#define CDD_BINRD_INT_H

#include "cdd/binfile.h"

#include <stddef.h>
#include <stdint.h>

#include "cdd/compat_attr.h"

/* Windows of the cache: tables are scanned sequentially while names are
 * fetched from another part of the file, so a few windows avoid
 * re-reading. Reads larger than half a window bypass the cache. */
#define CDD_BINRD_WIN (64u * 1024u)
#define CDD_BINRD_NWIN 4
/* A name table up to this size is read whole before its names are fetched:
 * symbols point into it in no useful order, and a few windows would thrash
 * (cuDNN's libcudnn_graph: 57 MB read for a 3.7 MB file). */
#define CDD_BINRD_PIN_MAX (16u * 1024u * 1024u)

struct cdd_binrd {
    const struct cdd_binsrc *src;
    const char *path; /* for messages, never NULL */
    uint64_t size;
    uint64_t tick;
    struct {
        unsigned char *buf;
        uint64_t off;
        size_t len; /* 0: empty */
        uint64_t used;
    } win[CDD_BINRD_NWIN];
    unsigned char *pin; /* a whole table, see cdd_binrd_pin() */
    uint64_t pin_off;
    size_t pin_len;
    struct cdd_binarena *arena; /* where kept strings go */
    size_t str_bytes;           /* against CDD_BIN_MAX_STRBYTES */
};

/* A growable list of arena strings with a hard maximum length. */
struct cdd_strvec {
    char **v;
    size_t n, cap, max;
    const char *what; /* "DT_NEEDED entries", for the over-limit message */
};

void cdd_binrd_init(struct cdd_binrd *r, const struct cdd_binsrc *src);
void cdd_binrd_fini(struct cdd_binrd *r);

/* CDD_E_CORRUPT with "<what> ..." recorded against the file. */
int cdd_binrd_corrupt(struct cdd_binrd *r, const char *fmt, ...)
    CDD_PRINTF(2, 3);

/* Is [off, off+len) inside the file? Overflow-safe. */
int cdd_binrd_in_file(const struct cdd_binrd *r, uint64_t off, uint64_t len);

/* Read exactly len bytes at off; a range past the end of the file is
 * CDD_E_CORRUPT "<what> extends past end of file". */
int cdd_binrd_read(struct cdd_binrd *r, uint64_t off, void *buf, size_t len,
                   const char *what);

/* Keep [off, off+len) in memory for the reads that follow, when it lies in
 * the file and is at most CDD_BINRD_PIN_MAX bytes; otherwise, or without
 * memory for it, reads simply go through the windows. Replaces an earlier
 * pin. Fails only when reading fails. */
int cdd_binrd_pin(struct cdd_binrd *r, uint64_t off, uint64_t len);

/* Read the NUL-terminated string at off, which must end before `end` (the
 * end of its table) and within CDD_BIN_MAX_STRING bytes, into the arena. */
int cdd_binrd_str(struct cdd_binrd *r, uint64_t off, uint64_t end,
                  const char *what, char **out);

/* Append s (an arena string) to sv; over sv->max is CDD_E_CORRUPT. */
int cdd_strvec_push(struct cdd_binrd *r, struct cdd_strvec *sv, char *s);
/* Frees the pointer array only; the strings belong to the arena. */
void cdd_strvec_free(struct cdd_strvec *sv);

void cdd_binarena_free(struct cdd_binarena *a);

static inline uint16_t cdd_ld16(const unsigned char *p, int be)
{
    return be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static inline uint32_t cdd_ld32(const unsigned char *p, int be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
                    (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 |
                    (uint32_t)p[1] << 8 | p[0];
}

static inline uint64_t cdd_ld64(const unsigned char *p, int be)
{
    uint64_t hi = cdd_ld32(be ? p : p + 4, be), lo = cdd_ld32(be ? p + 4 : p, be);
    return hi << 32 | lo;
}

#endif
