/* Code that may crash, on Windows (isolate.h). There is no fork, so the
 * step runs in a process started afresh from this program's own
 * executable: `EXE --cdd-isolated-child ENTRY HANDLE`. The parent writes
 * the step's request (the bytes that rebuild its state there) into the
 * child's standard input and reads the records the child writes into an
 * anonymous pipe whose inherited handle is the command line's HANDLE; the
 * child's stdout and stderr are the parent's stderr, so whatever the
 * driver prints cannot be taken for a record.
 *
 * The parent polls the pipe: a child silent for stall_ms, or past max
 * bytes, is terminated. The child is in a job object that kills it when
 * the parent's handle to the job closes, so a parent that is killed takes
 * it along. In the child an unhandled exception ends the process at once
 * with the exception's code as its exit status (no error-reporting dialog,
 * no debugger), which the parent names (0xC0000005, an access
 * violation). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <windows.h>

#include "cdd/error.h"
#include "cdd/isolate.h"
#include "win32_int.h"

/* The most a request may hold: a step's state is a few kilobytes. */
#define REQ_MAX (16u * 1024u * 1024u)
/* How often the parent looks at the pipe and the child. */
#define POLL_MS 20

struct cdd_child {
    HANDLE out; /* the records' pipe */
};

int cdd_child_send(struct cdd_child *ch, const void *p, size_t n)
{
    const char *b = p;
    while (n) {
        DWORD put = 0, want = n > 65536 ? 65536 : (DWORD)n;
        if (!WriteFile(ch->out, b, want, &put, NULL) || put == 0)
            return cdd_fail(CDD_E_IO, NULL, (int)GetLastError(),
                            "cannot send to the parent (error %lu)",
                            GetLastError());
        b += put;
        n -= put;
    }
    return 0;
}

static ULONGLONG now_ms(void)
{
    return GetTickCount64();
}

/* ---- the parent ---------------------------------------------------------- */

static wchar_t *own_exe(void)
{
    DWORD cap = MAX_PATH;
    for (;;) {
        wchar_t *w = malloc(cap * sizeof *w);
        if (!w)
            return NULL;
        DWORD got = GetModuleFileNameW(NULL, w, cap);
        if (got > 0 && got < cap)
            return w;
        free(w);
        if (got == 0 || cap >= 32768)
            return NULL;
        cap *= 2;
    }
}

/* "EXE" --cdd-isolated-child ENTRY HANDLE, quoted for CommandLineToArgvW:
 * the executable's path holds no quote (a Windows name cannot), entry is
 * a plain word. */
static wchar_t *command_line(const wchar_t *exe, const char *entry,
                             HANDLE out)
{
    size_t n = wcslen(exe) + strlen(entry) + 96;
    wchar_t *w = malloc(n * sizeof *w);
    if (!w)
        return NULL;
    int k = swprintf(w, n, L"\"%ls\" %hs %hs %llu", exe,
                     CDD_ISOLATE_CHILD_ARG, entry,
                     (unsigned long long)(uintptr_t)out);
    if (k < 0) {
        free(w);
        return NULL;
    }
    return w;
}

static int plain_word(const char *s)
{
    if (!s || !*s || strlen(s) > 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-'))
            return 0;
    return 1;
}

struct spawn {
    HANDLE proc, job;
    HANDLE req_w;  /* ours: the child's stdin */
    HANDLE rec_r;  /* ours: the records */
};

static void spawn_close(struct spawn *s)
{
    HANDLE *hs[] = {&s->proc, &s->job, &s->req_w, &s->rec_r};
    for (size_t i = 0; i < sizeof hs / sizeof hs[0]; i++)
        if (*hs[i]) {
            CloseHandle(*hs[i]);
            *hs[i] = NULL;
        }
}

/* A pipe whose one end (the child's) is inheritable. */
static int child_pipe(HANDLE *r, HANDLE *w, int child_reads, DWORD size)
{
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    if (!CreatePipe(r, w, &sa, size))
        return cdd_fail_win32(NULL, GetLastError(),
                              "cannot make a pipe for the child process");
    if (!SetHandleInformation(child_reads ? *w : *r, HANDLE_FLAG_INHERIT, 0)) {
        DWORD e = GetLastError();
        CloseHandle(*r);
        CloseHandle(*w);
        return cdd_fail_win32(NULL, e, "cannot make a pipe for the child "
                                       "process");
    }
    return 0;
}

/* Start the child, suspended until it is in its job, inheriting only the
 * handles listed (where the system takes a list; else every inheritable
 * one, and ours are not). */
static int start(const struct cdd_respawn *again, struct spawn *s)
{
    HANDLE req_r = NULL, rec_w = NULL, err = NULL;
    wchar_t *exe = NULL, *cmd = NULL;
    LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
    int r = 0;
    if (!plain_word(again->entry) || again->n > REQ_MAX)
        return cdd_fail(CDD_E_TOOLONG, NULL, 0, "a step to run apart with "
                        "no plain name or a request past its bound");
    if (!(exe = own_exe())) {
        r = cdd_fail(CDD_E_IO, NULL, (int)GetLastError(), "cannot find "
                     "this program's own executable to start the step in a "
                     "process of its own");
        goto out;
    }
    if ((r = child_pipe(&req_r, &s->req_w, 1,
                        (DWORD)(again->n + 4096))) != 0 ||
        (r = child_pipe(&s->rec_r, &rec_w, 0, 65536)) != 0)
        goto out;
    /* The child's stdout and stderr: a copy of our stderr, inheritable
     * (none when we have none). */
    HANDLE e0 = GetStdHandle(STD_ERROR_HANDLE);
    if (e0 && e0 != INVALID_HANDLE_VALUE &&
        !DuplicateHandle(GetCurrentProcess(), e0, GetCurrentProcess(), &err,
                         0, TRUE, DUPLICATE_SAME_ACCESS))
        err = NULL;
    if (!(cmd = command_line(exe, again->entry, rec_w))) {
        r = cdd_fail(CDD_E_NOMEM, NULL, 0, NULL);
        goto out;
    }
    HANDLE list[3] = {req_r, rec_w, err}; /* fixed: the inherited handles */
    SIZE_T asz = 0;
    InitializeProcThreadAttributeList(NULL, 1, 0, &asz);
    if (asz && (attrs = malloc(asz)) != NULL &&
        (!InitializeProcThreadAttributeList(attrs, 1, 0, &asz) ||
         !UpdateProcThreadAttribute(attrs, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
                                    list, (err ? 3 : 2) * sizeof(HANDLE),
                                    NULL, NULL))) {
        free(attrs);
        attrs = NULL;
    }
    STARTUPINFOEXW si;
    memset(&si, 0, sizeof si);
    si.StartupInfo.cb = attrs ? sizeof si : sizeof si.StartupInfo;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    si.StartupInfo.hStdInput = req_r;
    si.StartupInfo.hStdOutput = err;
    si.StartupInfo.hStdError = err;
    si.lpAttributeList = attrs;
    PROCESS_INFORMATION pi;
    memset(&pi, 0, sizeof pi);
    if (!CreateProcessW(exe, cmd, NULL, NULL, TRUE,
                        CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
                            (attrs ? EXTENDED_STARTUPINFO_PRESENT : 0),
                        NULL, NULL, &si.StartupInfo, &pi)) {
        DWORD ce = GetLastError();
        r = ce == ERROR_NOT_ENOUGH_MEMORY || ce == ERROR_OUTOFMEMORY
                ? cdd_fail(CDD_E_NOMEM, NULL, (int)ce, "cannot start a child "
                           "process: out of memory")
                : cdd_fail_win32(NULL, ce, "cannot start a child process");
        goto out;
    }
    s->proc = pi.hProcess;
    /* Killed with us: a job that ends its processes when its last handle
     * (ours) closes. A job that cannot be made or joined (an older system
     * that nests no jobs) leaves the child unbound to us, no worse. */
    s->job = CreateJobObjectW(NULL, NULL);
    if (s->job) {
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
        memset(&li, 0, sizeof li);
        li.BasicLimitInformation.LimitFlags =
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        if (!SetInformationJobObject(s->job, JobObjectExtendedLimitInformation,
                                     &li, sizeof li) ||
            !AssignProcessToJobObject(s->job, pi.hProcess)) {
            CloseHandle(s->job);
            s->job = NULL;
        }
    }
    ResumeThread(pi.hThread);
    CloseHandle(pi.hThread);
out:
    if (attrs) {
        DeleteProcThreadAttributeList(attrs);
        free(attrs);
    }
    if (req_r)
        CloseHandle(req_r);
    if (rec_w)
        CloseHandle(rec_w);
    if (err)
        CloseHandle(err);
    free(cmd);
    free(exe);
    return r;
}

/* The request, whole, then our end closed: the child reads it to its end
 * before it sends anything. The pipe was made large enough to take it
 * without waiting; a child that died first is seen by the reading. */
static void send_request(struct spawn *s, const struct cdd_respawn *again)
{
    const char *b = again->req;
    size_t n = again->n;
    while (n) {
        DWORD put = 0, want = n > 65536 ? 65536 : (DWORD)n;
        if (!WriteFile(s->req_w, b, want, &put, NULL) || put == 0)
            break;
        b += put;
        n -= put;
    }
    CloseHandle(s->req_w);
    s->req_w = NULL;
}

static void stop(struct spawn *s)
{
    TerminateProcess(s->proc, 1);
    WaitForSingleObject(s->proc, INFINITE);
}

/* Everything the child sends, up to max; past it, or silent for stall_ms
 * (0: no bound), it is terminated. */
static int collect(struct spawn *s, size_t max, long stall_ms,
                   struct cdd_isolated *res)
{
    char buf[16384]; /* fixed: a read's chunk */
    ULONGLONG last = now_ms();
    for (;;) {
        DWORD avail = 0;
        if (!PeekNamedPipe(s->rec_r, NULL, 0, NULL, &avail, NULL)) {
            DWORD e = GetLastError();
            if (e == ERROR_BROKEN_PIPE)
                return 0; /* every writer gone: the child ended */
            stop(s);
            return cdd_fail_win32(NULL, e, "cannot read from the child "
                                           "process");
        }
        if (avail) {
            DWORD got = 0;
            if (!ReadFile(s->rec_r, buf, avail < sizeof buf ? avail
                                                            : sizeof buf,
                          &got, NULL)) {
                if (GetLastError() == ERROR_BROKEN_PIPE)
                    return 0;
                DWORD e = GetLastError();
                stop(s);
                return cdd_fail_win32(NULL, e, "cannot read from the child "
                                               "process");
            }
            last = now_ms();
            if (cdd_sb_len(&res->out) + got > max) {
                res->over = 1;
                stop(s);
                return 0;
            }
            int r = cdd_sb_add(&res->out, buf, got);
            if (r) {
                stop(s);
                return r;
            }
            continue;
        }
        /* Nothing to read: ended (a child whose handle lives on in a
         * process it started would otherwise keep the pipe open), silent
         * past its bound, or still at work. */
        if (WaitForSingleObject(s->proc, POLL_MS) == WAIT_OBJECT_0) {
            if (PeekNamedPipe(s->rec_r, NULL, 0, NULL, &avail, NULL) && avail)
                continue;
            return 0;
        }
        if (stall_ms > 0 && now_ms() - last >= (ULONGLONG)stall_ms) {
            res->stalled = 1;
            stop(s);
            return 0;
        }
    }
}

int cdd_run_isolated(int (*fn)(struct cdd_child *ch, void *arg), void *arg,
                     const struct cdd_respawn *again, size_t max,
                     long stall_ms, const char *what,
                     struct cdd_isolated *res)
{
    (void)fn; /* it runs in the child, from again's request */
    (void)arg;
    (void)what;
    memset(res, 0, sizeof *res);
    res->stall_ms = stall_ms > 0 ? stall_ms : 0;
    cdd_sb_init(&res->out, max, "what the child process sent");
    if (!again)
        return cdd_fail(CDD_E_NOTSUP, NULL, 0, "a step run apart without "
                        "the request that starts it afresh");
    struct spawn s;
    memset(&s, 0, sizeof s);
    fflush(NULL); /* our stderr is the child's too: ours first */
    int r = start(again, &s);
    if (r) {
        spawn_close(&s);
        return r;
    }
    send_request(&s, again);
    r = collect(&s, max, res->stall_ms, res);
    WaitForSingleObject(s.proc, INFINITE);
    DWORD code = 1;
    if (!GetExitCodeProcess(s.proc, &code))
        code = 1;
    res->code = (int)code;
    /* NTSTATUS errors (0xC...): the child ended by an exception. */
    res->signaled = (code & 0xC0000000u) == 0xC0000000u && !res->stalled &&
                    !res->over;
    spawn_close(&s);
    return r;
}

int cdd_isolated_ok(const struct cdd_isolated *res)
{
    return !res->signaled && !res->over && !res->stalled && res->code == 0;
}

static const char *exception_words(unsigned long code)
{
    switch (code) {
    case 0xC0000005ul: return "an access violation";
    case 0xC00000FDul: return "a stack overflow";
    case 0xC0000409ul: return "a fail-fast exit or stack buffer overrun";
    case 0xC000001Dul: return "an illegal instruction";
    case 0xC0000094ul: return "an integer division by zero";
    case 0xC0000096ul: return "a privileged instruction";
    case 0xC0000006ul: return "an in-page error: a mapped file went away";
    case 0xC0000374ul: return "a corrupted heap";
    case 0xC0000135ul: return "a DLL it needs was not found";
    case 0xC0000142ul: return "a DLL failed to initialise";
    default: return "an exception";
    }
}

const char *cdd_isolated_how(const struct cdd_isolated *res, char *buf,
                             size_t n)
{
    unsigned long code = (unsigned long)(unsigned)res->code;
    if (res->over)
        snprintf(buf, n, "sent more than its bound and was stopped");
    else if (res->stalled)
        snprintf(buf, n, "made no progress for %g s and was stopped",
                 (double)res->stall_ms / 1000.0);
    else if (res->signaled && code == 0xC000013Aul)
        snprintf(buf, n, "was ended by Ctrl+C (status 0x%08lX)", code);
    else if (res->signaled)
        snprintf(buf, n, "crashed with exception 0x%08lX (%s)", code,
                 exception_words(code));
    else
        snprintf(buf, n, "exited with status %lu", code);
    return buf;
}

void cdd_isolated_free(struct cdd_isolated *res)
{
    cdd_sb_free(&res->out);
}

/* ---- the child ----------------------------------------------------------- */

static LONG WINAPI end_on_exception(EXCEPTION_POINTERS *ep)
{
    /* No dialog, no debugger, no unwinding through the driver's frames:
     * the code is the parent's answer. */
    TerminateProcess(GetCurrentProcess(),
                     (UINT)ep->ExceptionRecord->ExceptionCode);
    return EXCEPTION_CONTINUE_SEARCH;
}

/* The request: standard input to its end, bounded. */
static int read_request(struct cdd_sb *req)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    char buf[16384]; /* fixed: a read's chunk */
    cdd_sb_init(req, REQ_MAX, "the step's request");
    for (;;) {
        DWORD got = 0;
        if (!ReadFile(in, buf, sizeof buf, &got, NULL) || got == 0)
            return 0; /* the parent closed its end */
        int r = cdd_sb_add(req, buf, got);
        if (r)
            return r;
    }
}

int cdd_isolate_child_main(int argc, char **argv,
                           const struct cdd_isolate_entry *v, size_t nv)
{
    if (argc < 2 || strcmp(argv[1], CDD_ISOLATE_CHILD_ARG) != 0)
        return -1;
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX |
                 SEM_NOOPENFILEERRORBOX);
    SetUnhandledExceptionFilter(end_on_exception);
    if (argc != 4)
        return 2;
    const struct cdd_isolate_entry *e = NULL;
    for (size_t i = 0; i < nv && !e; i++)
        if (strcmp(v[i].name, argv[2]) == 0)
            e = &v[i];
    char *end = NULL;
    unsigned long long hv = strtoull(argv[3], &end, 10);
    if (!e || !end || *end || end == argv[3])
        return 2;
    struct cdd_child ch = {(HANDLE)(uintptr_t)hv};
    DWORD type = GetFileType(ch.out);
    if (type != FILE_TYPE_PIPE)
        return 2;
    struct cdd_sb req;
    if (read_request(&req) != 0) {
        cdd_sb_free(&req);
        return 1;
    }
    int r = e->run(&ch, cdd_sb_str(&req), cdd_sb_len(&req));
    cdd_sb_free(&req);
    fflush(NULL);
    CloseHandle(ch.out);
    return r ? 1 : 0;
}
