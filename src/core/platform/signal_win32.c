/* Ctrl-C, Ctrl-Break and closing the console window request cancellation
 * instead of ending the process, so that a transaction in progress rolls
 * back before the tool exits (the Windows side of signal_posix.c). */
#include <windows.h>

#include "cdd/error.h"
#include "cdd/sys.h"

static BOOL WINAPI on_ctrl(DWORD type)
{
    cdd_cancel_request();
    switch (type) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
        return TRUE; /* handled: the main thread notices and rolls back */
    default:
        /* Close, logoff, shutdown: Windows ends the process as soon as this
         * handler returns (or after about 5 s). Waiting here gives the main
         * thread that time to roll back; when it finishes first, its exit
         * ends this thread too. A kill after that is what the journal and
         * `recover` are for. */
        Sleep(10000);
        return TRUE;
    }
}

void cdd_cancel_on_signals(void)
{
    SetConsoleCtrlHandler(on_ctrl, TRUE);
}
