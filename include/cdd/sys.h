/* Process-level set-up that differs per platform. */
#ifndef CDD_SYS_H
#define CDD_SYS_H

/* Turn Ctrl-C / termination requests into cdd_cancel_request(), so work in
 * progress is rolled back rather than cut off. */
void cdd_cancel_on_signals(void);

#endif
