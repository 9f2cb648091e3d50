/* Compiler attributes the public headers share. CDD_PRINTF(fmt, args)
 * marks a printf-like function so that -Wformat checks its callers: fmt is
 * the 1-based position of the format, args that of the first variadic
 * argument (0 for a va_list function). Compilers without GNU attributes get
 * nothing. */
#ifndef CDD_COMPAT_ATTR_H
#define CDD_COMPAT_ATTR_H

#if defined(__GNUC__)
#define CDD_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CDD_PRINTF(fmt, args)
#endif

#endif
