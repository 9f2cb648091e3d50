/* What every fuzz target of tests/fuzz/ shares (docs/fuzzing.md): the
 * libFuzzer entry point's declaration, a NUL-terminated copy of the input,
 * a private scratch folder for the targets whose parser reads a file, and
 * the way a target reports a broken property: a message on stderr, then
 * abort(), which libFuzzer records as a crash with the input that made it.
 * Test code: it prints, the core library never does. */
#ifndef CDD_FUZZ_H
#define CDD_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A broken property: name it, then crash so libFuzzer keeps the input. */
#define FUZZ_ASSERT(cond, ...)                                                 \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "fuzz property failed (%s:%d): %s: ", __FILE__,   \
                    __LINE__, #cond);                                          \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* data as a malloc'd C string (len bytes plus a NUL; the bytes may hold
 * NULs of their own). */
static inline char *fuzz_strdup(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        abort();
    if (len)
        memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

/* The last error as the user sees it: a message was recorded, and the
 * rendered line (cdd_error_format: the core records untrusted names raw,
 * the rendering escapes them) is one line without control characters. */
void fuzz_check_error(void);

/* The scratch folder: $CDD_FUZZ_TMP, else $TMPDIR, else /tmp, with a
 * folder of this process under it (made once). Static storage. */
const char *fuzz_scratch(void);

/* Write len bytes to path (replacing it); aborts on failure, which is the
 * harness's, not the target's. */
void fuzz_write_file(const char *path, const uint8_t *data, size_t len);

#endif
