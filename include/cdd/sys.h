/* The process, where it differs per platform (sys_posix.c / sys_win32.c):
 * signals, the process id, the clocks, sleeping, the hard kill. */
#ifndef CDD_SYS_H
#define CDD_SYS_H

#include <stddef.h>

/* Turn Ctrl-C / termination requests into cdd_cancel_request(), so work in
 * progress is rolled back rather than cut off. */
void cdd_cancel_on_signals(void);

/* Process id, for lock files and journal names. */
long cdd_getpid(void);
/* Is the standard stream fd (0,1,2) a terminal? */
int cdd_isatty(int fd);
/* Wall clock: seconds since the epoch, and monotonic seconds. */
double cdd_now(void);
double cdd_monotonic(void);
void cdd_sleep_ms(int ms);
/* End this process at once, without clean-up (SIGKILL / TerminateProcess):
 * the fault injector's model of a crash. */
void cdd_kill_self(void);
/* n bytes from the system's random source (getrandom / /dev/urandom,
 * BCryptGenRandom): 0, or CDD_E_IO with the fault recorded. For names an
 * attacker must not guess (the GITHUB_ENV delimiter), not for keys. */
int cdd_random_bytes(void *buf, size_t n);

#endif
