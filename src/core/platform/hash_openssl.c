/* SHA-256 backend on OpenSSL's libcrypto (EVP interface). The only file that
 * touches OpenSSL; hash_win32.c provides the same functions on Windows CNG.
 * SHA-NI/AVX2 code paths in libcrypto keep hashing well ahead of disk and
 * decompression speed. */
#include <stdlib.h>

/* The one-shot SHA-256 functions are deprecated in OpenSSL 3.0 in favour
 * of EVP, which cudnn-deploy used before: EVP fetches the algorithm from a
 * provider at first use, with allocations inside libcrypto's own start-up,
 * and when one of those fails OpenSSL 3.0 keeps an object with a null lock
 * that the next digest dereferences (SIGSEGV; found by the malloc-failure
 * trials, docs/reliability.md). SHA256_Init/Update/Final allocate nothing
 * and run the same SHA-NI / AVX2 block functions. */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/sha.h>

#include "cdd/error.h"
#include "cdd/hash.h"

struct cdd_sha256 {
    SHA256_CTX ctx;
};

int cdd_sha256_new(struct cdd_sha256 **out)
{
    struct cdd_sha256 *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, "sha256: out of memory");
    if (SHA256_Init(&h->ctx) != 1) {
        free(h);
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: libcrypto cannot start a "
                                          "SHA-256 digest");
    }
    *out = h;
    return 0;
}

int cdd_sha256_update(struct cdd_sha256 *h, const void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (SHA256_Update(&h->ctx, buf, len) != 1)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest update failed");
    return 0;
}

int cdd_sha256_final(struct cdd_sha256 *h, uint8_t digest[CDD_SHA256_LEN])
{
    if (SHA256_Final(digest, &h->ctx) != 1)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest final failed");
    return 0;
}

int cdd_sha256_reset(struct cdd_sha256 *h)
{
    if (SHA256_Init(&h->ctx) != 1)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest reset failed");
    return 0;
}

void cdd_sha256_free(struct cdd_sha256 *h)
{
    if (!h)
        return;
    free(h);
}
