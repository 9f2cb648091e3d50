/* What an attacker plants in a tree in place of a cuDNN library: the same
 * soname and exports (CHECK_SYMBOL, as fake_cudnn_sub.c), and an ELF
 * constructor that appends a line to MARKER_PATH the moment any process
 * loads it -- before any function of it is called. verify's tests assert
 * that the marker never appears (issue 18). Built with:
 *   -DMARKER_PATH="/abs/marker"   where the constructor writes
 *   -DCHECK_SYMBOL=cudnnOpsInferVersionCheck  (omit: none) */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

__attribute__((constructor)) static void planted_runs(void)
{
    int fd = open(MARKER_PATH, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                  0644);
    if (fd >= 0) {
        (void)!write(fd, "planted code ran\n", 17);
        close(fd);
    }
}

#ifdef CHECK_SYMBOL
API int CHECK_SYMBOL(void)
{
    return 0;
}
#endif

API int cudnnGetVersion(void)
{
    return 8500;
}
