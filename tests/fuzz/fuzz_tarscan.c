/* Fuzz target: the raw tar header scanner (archive/tarscan.c), which sees
 * the decompressed tar bytes in whatever blocks the decompressor yields.
 * The same stream is fed whole and then in pieces whose sizes come from the
 * input's own bytes (1 to 1024 bytes each): the verdict, the error code and
 * the message must not depend on where the blocks were cut. Errors are
 * CDD_E_UNSAFE, CDD_E_CORRUPT or CDD_E_NOMEM with a one-line message; after
 * a failure every call fails. */
#include "fuzz.h"

#include "cdd/error.h"
#include "tarscan.h"

static int scan(const uint8_t *data, size_t size, int pieces, char *msg,
                size_t msglen)
{
    struct cdd_tarscan *s = NULL;
    int r = cdd_tarscan_new("fuzz.tar", &s);
    FUZZ_ASSERT(r == 0, "cdd_tarscan_new");
    size_t at = 0, k = 0;
    while (!r && at < size) {
        size_t n = size - at;
        if (pieces) {
            /* 1..1024 bytes, from the data itself, so the fuzzer steers it */
            size_t want = 1 + (size_t)(data[k % size] * 7u + k) % 1024u;
            n = want < n ? want : n;
            k++;
        }
        r = cdd_tarscan_feed(s, data + at, n);
        at += n;
    }
    msg[0] = '\0';
    if (r) {
        const char *m = cdd_last_error()->msg;
        snprintf(msg, msglen, "%s", m ? m : "");
        FUZZ_ASSERT(r == CDD_E_UNSAFE || r == CDD_E_CORRUPT || r == CDD_E_NOMEM,
                    "error %d", r);
        fuzz_check_error();
        FUZZ_ASSERT(cdd_tarscan_feed(s, "", 0) != 0 &&
                        cdd_tarscan_feed(s, data, size) != 0,
                    "a failed scanner accepted more");
    }
    cdd_clear_error();
    cdd_tarscan_free(s);
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char m1[512], m2[512];
    if (size == 0)
        return 0;
    int whole = scan(data, size, 0, m1, sizeof m1);
    int cut = scan(data, size, 1, m2, sizeof m2);
    FUZZ_ASSERT(whole == cut, "whole: %d (%s), in pieces: %d (%s)", whole, m1,
                cut, m2);
    FUZZ_ASSERT(strcmp(m1, m2) == 0, "messages differ: \"%s\" / \"%s\"", m1,
                m2);
    return 0;
}
