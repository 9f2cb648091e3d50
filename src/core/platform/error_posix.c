/* The operating system's words for an error on POSIX systems: os_err is
 * always an errno value here. */
#include <stdio.h>
#include <string.h>

#include "cdd/error.h"

char *cdd_os_error_text(int os_err, char *buf, size_t len)
{
    snprintf(buf, len, "%s", strerror(os_err));
    return buf;
}
