/* cudnn-deploy on Windows: entry point. The command line arrives as UTF-16
 * (wmain) and is handed to the CLI as UTF-8, the encoding used everywhere
 * inside; the console is switched to UTF-8 so that paths with non-ASCII
 * names print as they are. Everything else happens in src/cli/ and the core
 * library, exactly as on POSIX (src/main.c). */
#include <stdio.h>
#include <stdlib.h>

#include <windows.h>

#include "cli.h"

static UINT saved_cp;

static void restore_console(void)
{
    /* The console's code page outlives us: leave it as the user had it. */
    if (saved_cp)
        SetConsoleOutputCP(saved_cp);
}

int wmain(int argc, wchar_t **wargv)
{
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (!argv) {
        fputs("cudnn-deploy: error: out of memory\n", stderr);
        return 4;
    }
    for (int i = 0; i < argc; i++) {
        /* Lossless: Windows command lines are UTF-16, and any UTF-16 string
         * (an unpaired surrogate aside) has a UTF-8 form. */
        int n = WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, NULL, 0, NULL,
                                    NULL);
        argv[i] = n > 0 ? malloc((size_t)n) : NULL;
        if (!argv[i] || WideCharToMultiByte(CP_UTF8, 0, wargv[i], -1, argv[i],
                                            n, NULL, NULL) != n) {
            fputs("cudnn-deploy: error: cannot read the command line\n",
                  stderr);
            return 2;
        }
    }
    /* A DLL that fails to load (verify's whole subject) must give an error
     * code, never a system dialog box that blocks an unattended run. */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX);
    saved_cp = GetConsoleOutputCP();
    if (saved_cp && saved_cp != CP_UTF8 && SetConsoleOutputCP(CP_UTF8))
        atexit(restore_console);
    else
        saved_cp = 0;
    int r = cdd_cli_main(argc, argv);
    for (int i = 0; i < argc; i++)
        free(argv[i]);
    free(argv);
    return r;
}
