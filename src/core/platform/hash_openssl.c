/* SHA-256 backend on OpenSSL's libcrypto (EVP interface). The only file that
 * touches OpenSSL; hash_win32.c provides the same functions on Windows CNG.
 * SHA-NI/AVX2 code paths in libcrypto keep hashing well ahead of disk and
 * decompression speed. */
#include <stdlib.h>

#include <openssl/evp.h>

#include "cdd/error.h"
#include "cdd/hash.h"

struct cdd_sha256 {
    EVP_MD_CTX *ctx;
};

int cdd_sha256_new(struct cdd_sha256 **out)
{
    struct cdd_sha256 *h = NULL;
    int r = 0;

    *out = NULL;
    h = calloc(1, sizeof *h);
    if (!h || !(h->ctx = EVP_MD_CTX_new())) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, "sha256: out of memory");
        goto out;
    }
    if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1) {
        /* The built-in SHA-256 fails to start only when libcrypto cannot
         * allocate its context (found by the malloc-failure trials). */
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, "sha256: libcrypto cannot start a "
                                          "SHA-256 digest: out of memory");
        goto out;
    }
    *out = h;
    h = NULL;
out:
    cdd_sha256_free(h);
    return r;
}

int cdd_sha256_update(struct cdd_sha256 *h, const void *buf, size_t len)
{
    if (len == 0)
        return 0;
    if (EVP_DigestUpdate(h->ctx, buf, len) != 1)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest update failed");
    return 0;
}

int cdd_sha256_final(struct cdd_sha256 *h, uint8_t digest[CDD_SHA256_LEN])
{
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(h->ctx, digest, &n) != 1 || n != CDD_SHA256_LEN)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest final failed");
    return 0;
}

int cdd_sha256_reset(struct cdd_sha256 *h)
{
    if (EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
        return cdd_fail(CDD_E_IO, NULL, 0, "sha256: digest reset failed");
    return 0;
}

void cdd_sha256_free(struct cdd_sha256 *h)
{
    if (!h)
        return;
    EVP_MD_CTX_free(h->ctx);
    free(h);
}
