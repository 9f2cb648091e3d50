/* The one place outside the *_posix.c / *_win32.c files that knows which
 * platform the program is built for: portable code tests these macros in
 * plain `if`s instead of carrying #ifdefs of its own. */
#ifndef CDD_COMPAT_H
#define CDD_COMPAT_H

/* CDD_PRINTF, for the core files that include only this header. */
#include "cdd/compat_attr.h"

#ifdef _WIN32
#define CDD_HOST_WINDOWS 1
#else
#define CDD_HOST_WINDOWS 0
#endif

/* The instruction set the program is built for (cdd_host_machine). */
#if defined(__aarch64__) || defined(_M_ARM64)
#define CDD_HOST_AARCH64 1
#else
#define CDD_HOST_AARCH64 0
#endif

#endif
