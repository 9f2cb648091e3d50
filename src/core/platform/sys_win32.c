/* The process on Windows (sys.h): Ctrl-C, Ctrl-Break and closing the
 * console window request cancellation instead of ending the process, so that
 * a transaction in progress rolls back before the tool exits (the Windows
 * side of sys_posix.c); the process id, the clocks, sleeping, the hard kill. */
#include <windows.h>
#include <bcrypt.h>

#include <stdint.h>

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

long cdd_getpid(void)
{
    return (long)GetCurrentProcessId();
}

int cdd_isatty(int fd)
{
    DWORD which = fd == 0   ? STD_INPUT_HANDLE
                  : fd == 1 ? STD_OUTPUT_HANDLE
                            : STD_ERROR_HANDLE;
    HANDLE h = GetStdHandle(which);
    DWORD mode;
    /* NUL is a character device too; only a console has a console mode. */
    return h != NULL && h != INVALID_HANDLE_VALUE &&
           GetFileType(h) == FILE_TYPE_CHAR && GetConsoleMode(h, &mode);
}

double cdd_now(void)
{
    FILETIME ft;
    GetSystemTimePreciseAsFileTime(&ft);
    uint64_t t = ((uint64_t)ft.dwHighDateTime << 32) | ft.dwLowDateTime;
    /* 100 ns ticks since 1601-01-01 -> seconds since 1970-01-01. */
    return (double)(t - 116444736000000000ULL) / 1e7;
}

double cdd_monotonic(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER now;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (double)now.QuadPart / (double)freq.QuadPart;
}

void cdd_sleep_ms(int ms)
{
    Sleep(ms > 0 ? (DWORD)ms : 0);
}

void cdd_kill_self(void)
{
    /* 137 = 128 + SIGKILL, the exit status the POSIX build's kill tests
     * expect from a process killed the hard way. */
    TerminateProcess(GetCurrentProcess(), 137);
    ExitProcess(137);
}

int cdd_random_bytes(void *buf, size_t n)
{
    /* The system-preferred generator (Vista and later; bcrypt is linked
     * for hash_win32.c already). */
    if (n > 0xffffffffu ||
        BCryptGenRandom(NULL, (PUCHAR)buf, (ULONG)n,
                        BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
        return cdd_fail(CDD_E_IO, NULL, 0,
                        "the system's random source failed");
    return 0;
}
