/* Test helper for the Windows suite (built only for Windows): holds a file
 * open the way another program would -- without FILE_SHARE_DELETE or
 * FILE_SHARE_WRITE, as a program reading it does -- prints "held", and keeps
 * it until its standard input closes. Lets the end-to-end test provoke a
 * real "file in use" under Wine and on Windows. */
#include <stdio.h>

#include <windows.h>

int wmain(int argc, wchar_t **argv)
{
    if (argc != 2) {
        fputs("usage: holdfile FILE\n", stderr);
        return 2;
    }
    HANDLE h = CreateFileW(argv[1], GENERIC_READ, FILE_SHARE_READ, NULL,
                           OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "holdfile: cannot open (error %lu)\n", GetLastError());
        return 1;
    }
    puts("held");
    fflush(stdout);
    while (getchar() != EOF) {
    }
    CloseHandle(h);
    return 0;
}
