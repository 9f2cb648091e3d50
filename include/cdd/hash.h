/* SHA-256, streaming. The crypto library (OpenSSL libcrypto here, Windows CNG
 * in hash_win32.c) is touched only by the backend file. */
#ifndef CDD_HASH_H
#define CDD_HASH_H

#include <stddef.h>
#include <stdint.h>

#define CDD_SHA256_LEN 32
#define CDD_SHA256_HEX 65 /* 64 digits + NUL */

struct cdd_sha256;

int cdd_sha256_new(struct cdd_sha256 **out);
int cdd_sha256_update(struct cdd_sha256 *h, const void *buf, size_t len);
/* Finish into digest; the context can be reused after cdd_sha256_reset(). */
int cdd_sha256_final(struct cdd_sha256 *h, uint8_t digest[CDD_SHA256_LEN]);
int cdd_sha256_reset(struct cdd_sha256 *h);
void cdd_sha256_free(struct cdd_sha256 *h);

/* Hash a whole file, streaming; *size receives its length when not NULL. */
int cdd_sha256_file(const char *path, uint8_t digest[CDD_SHA256_LEN],
                    uint64_t *size);
/* The same on an open file, the whole of it from offset 0 by pread (shown
 * names it in messages): the handle's position is left as it was, so a
 * held archive is hashed and then read through the same handle. */
struct cdd_rfile;
int cdd_sha256_rfile(struct cdd_rfile *f, const char *shown,
                     uint8_t digest[CDD_SHA256_LEN], uint64_t *size);

/* Lower-case hex. */
void cdd_hex_encode(const uint8_t *bin, size_t len, char *hex /* 2*len+1 */);
/* Parse exactly 2*len hex digits (either case); 0 or -1. */
int cdd_hex_decode(const char *hex, uint8_t *bin, size_t len);

#endif
