/* SIGINT/SIGTERM/SIGHUP request cancellation instead of killing the process,
 * so that a transaction in progress rolls back before the tool exits. */
#include <signal.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/sys.h"

static void on_signal(int sig)
{
    (void)sig;
    cdd_cancel_request();
}

void cdd_cancel_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* A closed stdout (| head) must become a write error, not a death. */
    signal(SIGPIPE, SIG_IGN);
}
