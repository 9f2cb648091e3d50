/* SHA-256 backend on Windows CNG (BCrypt), the Windows side of
 * hash_openssl.c: the only file that touches the crypto API there, so the
 * Windows build needs no OpenSSL. CNG picks SHA-NI/AVX2 code paths itself. */
#include <stdlib.h>

#include <windows.h>
#include <bcrypt.h>

#include "cdd/error.h"
#include "cdd/hash.h"

#ifndef NT_SUCCESS
#define NT_SUCCESS(s) ((NTSTATUS)(s) >= 0)
#endif

struct cdd_sha256 {
    BCRYPT_HASH_HANDLE h;
};

/* One algorithm provider for the process: opening it is the expensive part
 * (it loads the provider), and a provider handle may be shared by threads. */
static BCRYPT_ALG_HANDLE alg;
static INIT_ONCE alg_once = INIT_ONCE_STATIC_INIT;
static NTSTATUS alg_status;

static BOOL CALLBACK open_alg(PINIT_ONCE once, PVOID param, PVOID *ctx)
{
    (void)once;
    (void)param;
    (void)ctx;
    alg_status = BCryptOpenAlgorithmProvider(&alg, BCRYPT_SHA256_ALGORITHM,
                                             NULL, 0);
    return TRUE;
}

static int start(struct cdd_sha256 *h)
{
    InitOnceExecuteOnce(&alg_once, open_alg, NULL, NULL);
    if (!NT_SUCCESS(alg_status))
        return cdd_fail(CDD_E_IO, NULL, 0,
                        "sha256: Windows CNG has no SHA-256 provider "
                        "(NTSTATUS 0x%08lx)",
                        (unsigned long)alg_status);
    /* A NULL object buffer lets CNG allocate it (Windows 7 and later). */
    NTSTATUS st = BCryptCreateHash(alg, &h->h, NULL, 0, NULL, 0, 0);
    if (!NT_SUCCESS(st))
        return cdd_fail(CDD_E_IO, NULL, 0,
                        "sha256: cannot start a digest (NTSTATUS 0x%08lx)",
                        (unsigned long)st);
    return 0;
}

int cdd_sha256_new(struct cdd_sha256 **out)
{
    struct cdd_sha256 *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h)
        return cdd_fail(CDD_E_NOMEM, NULL, 0, "sha256: out of memory");
    int r = start(h);
    if (r) {
        free(h);
        return r;
    }
    *out = h;
    return 0;
}

int cdd_sha256_update(struct cdd_sha256 *h, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    while (len > 0) {
        ULONG n = len > 0x40000000u ? 0x40000000u : (ULONG)len;
        NTSTATUS st = BCryptHashData(h->h, (PUCHAR)p, n, 0);
        if (!NT_SUCCESS(st))
            return cdd_fail(CDD_E_IO, NULL, 0,
                            "sha256: digest update failed (NTSTATUS 0x%08lx)",
                            (unsigned long)st);
        p += n;
        len -= n;
    }
    return 0;
}

int cdd_sha256_final(struct cdd_sha256 *h, uint8_t digest[CDD_SHA256_LEN])
{
    NTSTATUS st = BCryptFinishHash(h->h, digest, CDD_SHA256_LEN, 0);
    if (!NT_SUCCESS(st))
        return cdd_fail(CDD_E_IO, NULL, 0,
                        "sha256: digest final failed (NTSTATUS 0x%08lx)",
                        (unsigned long)st);
    return 0;
}

int cdd_sha256_reset(struct cdd_sha256 *h)
{
    /* A finished CNG hash cannot be restarted (the reusable flag needs
     * Windows 8): make a new one. */
    if (h->h)
        BCryptDestroyHash(h->h);
    h->h = NULL;
    return start(h);
}

void cdd_sha256_free(struct cdd_sha256 *h)
{
    if (!h)
        return;
    if (h->h)
        BCryptDestroyHash(h->h);
    free(h);
}
