/* Backend-independent parts of hashing: hex conversion and hashing a whole
 * file by streaming it through fsops in fixed blocks (memory does not grow
 * with the file; a 500 MB archive is read once, 256 KiB at a time). */
#include <stdlib.h>

#include "cdd/error.h"
#include "cdd/fsops.h"
#include "cdd/hash.h"

#define HASH_BLOCK (256u * 1024u)

void cdd_hex_encode(const uint8_t *bin, size_t len, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = digits[bin[i] >> 4];
        hex[2 * i + 1] = digits[bin[i] & 15];
    }
    hex[2 * len] = '\0';
}

static int hex_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int cdd_hex_decode(const char *hex, uint8_t *bin, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        /* hex[2*i] is checked before hex[2*i+1] is read, so a short
         * string stops at its NUL. */
        if ((hi = hex_val(hex[2 * i])) < 0 || (lo = hex_val(hex[2 * i + 1])) < 0)
            return -1;
        bin[i] = (uint8_t)(hi << 4 | lo);
    }
    return hex[2 * len] == '\0' ? 0 : -1;
}

int cdd_sha256_rfile(struct cdd_rfile *f, const char *shown,
                     uint8_t digest[CDD_SHA256_LEN], uint64_t *size)
{
    struct cdd_sha256 *h = NULL;
    unsigned char *buf = NULL;
    uint64_t total = 0;
    int r;

    if ((r = cdd_sha256_new(&h)) < 0)
        goto out;
    if (!(buf = malloc(HASH_BLOCK))) {
        r = cdd_fail(CDD_E_NOMEM, shown, 0, NULL);
        goto out;
    }
    for (;;) {
        size_t got = 0;
        /* Archives are hundreds of MB: let Ctrl-C stop a long hash. */
        if (cdd_cancelled()) {
            r = cdd_fail(CDD_E_INTERRUPTED, shown, 0, "interrupted while "
                                                       "hashing");
            goto out;
        }
        if ((r = cdd_rfile_pread(f, total, buf, HASH_BLOCK, &got)) < 0)
            goto out;
        if (got == 0)
            break;
        if ((r = cdd_sha256_update(h, buf, got)) < 0)
            goto out;
        total += got;
    }
    if ((r = cdd_sha256_final(h, digest)) < 0)
        goto out;
    if (size)
        *size = total;
out:
    cdd_sha256_free(h);
    free(buf);
    return r;
}

int cdd_sha256_file(const char *path, uint8_t digest[CDD_SHA256_LEN],
                    uint64_t *size)
{
    struct cdd_rfile *f = NULL;
    int r = cdd_fs_open_read(path, &f);
    if (!r)
        r = cdd_sha256_rfile(f, path, digest, size);
    cdd_rfile_close(f);
    return r;
}
