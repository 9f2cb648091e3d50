/* The records a child process sends its parent (isolate.h): a type byte,
 * the payload's length in 4 bytes (little-endian), the payload. The
 * platform halves (isolate_posix.c, isolate_win32.c) carry the bytes. */
#include <stdint.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/isolate.h"

#define REC_HEAD 5

int cdd_child_send_rec(struct cdd_child *ch, char type, const void *p,
                       size_t n)
{
    unsigned char h[REC_HEAD]; /* fixed: a record's head */
    if (n > UINT32_MAX)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "a record past 4 GiB");
    h[0] = (unsigned char)type;
    for (int i = 0; i < 4; i++)
        h[1 + i] = (unsigned char)(n >> (8 * i));
    int r = cdd_child_send(ch, h, sizeof h);
    return r ? r : n ? cdd_child_send(ch, p, n) : 0;
}

int cdd_isolated_next(const struct cdd_isolated *res, size_t *pos,
                      char *type, const char **p, size_t *n)
{
    const unsigned char *b = (const unsigned char *)cdd_sb_str(&res->out);
    size_t len = cdd_sb_len(&res->out);
    if (*pos > len || len - *pos < REC_HEAD)
        return 0;
    const unsigned char *h = b + *pos;
    size_t m = 0;
    for (int i = 0; i < 4; i++)
        m |= (size_t)h[1 + i] << (8 * i);
    if (m > len - *pos - REC_HEAD)
        return 0;
    *type = (char)h[0];
    *p = (const char *)h + REC_HEAD;
    *n = m;
    *pos += REC_HEAD + m;
    return 1;
}
