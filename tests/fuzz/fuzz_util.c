/* The harness helpers of fuzz.h: the scratch folder and writing an input
 * to a file. POSIX only, like the fuzz build (docs/fuzzing.md). */
#include "fuzz.h"

#include "cdd/error.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fuzz_scratch(void)
{
    static char dir[512];
    if (dir[0])
        return dir;
    const char *base = getenv("CDD_FUZZ_TMP");
    if (!base || !*base)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(dir, sizeof dir, "%s/cdd-fuzz-%ld", base, (long)getpid());
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz: cannot create %s\n", dir);
        abort();
    }
    return dir;
}

void fuzz_write_file(const char *path, const uint8_t *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        fprintf(stderr, "fuzz: cannot write %s\n", path);
        abort();
    }
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, data + done, len - done);
        if (k <= 0) {
            fprintf(stderr, "fuzz: short write to %s\n", path);
            abort();
        }
        done += (size_t)k;
    }
    if (close(fd) != 0) {
        fprintf(stderr, "fuzz: cannot close %s\n", path);
        abort();
    }
}

void fuzz_check_error(void)
{
    static char line[4096];
    const char *msg = cdd_last_error()->msg;
    FUZZ_ASSERT(cdd_last_error()->code < 0, "a failure without a code");
    FUZZ_ASSERT(msg && *msg, "a failure without a message");
    cdd_error_format(line, sizeof line);
    for (const unsigned char *p = (const unsigned char *)line; *p; p++)
        FUZZ_ASSERT(*p >= 0x20 && *p != 0x7F,
                    "control byte 0x%02x in the rendered message \"%s\"", *p,
                    line);
}
