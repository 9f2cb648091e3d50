/* failmalloc: an LD_PRELOAD shim that makes the N-th heap allocation of a
 * process fail, for the malloc-failure trials of tests/torture/torture.py
 * (docs/reliability.md, "malloc"). Linux / glibc only; test builds only.
 *
 *   CDD_FAILMALLOC=count        count the allocations, fail none
 *   CDD_FAILMALLOC=N            the N-th allocation returns NULL (ENOMEM)
 *   CDD_FAILMALLOC_OUT=FILE     at exit, write "allocations N\nfailed K\n"
 *   CDD_FAILMALLOC_BT=FILE      when the N-th allocation fails, write its
 *                               backtrace (glibc backtrace_symbols_fd: the
 *                               caller's frames as object(function+offset)
 *                               [address], for addr2line) to FILE, to find
 *                               which allocation a failing N is
 *   CDD_FAILMALLOC_SPARE=a,b    allocations called from a shared object whose
 *                               file name starts with a or b (libarchive.so,
 *                               liblzma.so) are neither counted nor failed:
 *                               libraries whose own out-of-memory handling
 *                               is known to crash or exit, so that the
 *                               trials attack the tool's code
 *                               (docs/reliability.md says which and why)
 *   CDD_FAILMALLOC_ONLY=a,b     the opposite: only allocations called from
 *                               those objects are counted and failed (to
 *                               attack one library's own allocations:
 *                               N = 1.. its count); SPARE is then ignored.
 *                               "Called from" is the direct caller, for
 *                               both: libarchive's strdup() is libc's.
 *
 * Counted: malloc, calloc, realloc (to a non-zero size), posix_memalign,
 * aligned_alloc, memalign, valloc, pvalloc, reallocarray. strdup, strndup,
 * asprintf, getline, fopen's buffers and every library's allocations reach
 * malloc through the PLT (glibc supports replacing malloc so), so they are
 * counted and failed too, as one allocation each.
 *
 * Armed only once the program's main() starts (the shim wraps
 * __libc_start_main), so the dynamic loader's and constructors' start-up
 * is not counted, and only in that process: the variables and LD_PRELOAD
 * are removed from the environment before main() runs (a child it starts
 * is not attacked), and a forked child stops counting (pid check).
 * Threads share one atomic counter, so which allocation is the N-th can
 * vary with scheduling in a threaded step; each trial is still one failed
 * allocation. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's own allocator, exported under these names: forwarding to them
 * needs no dlsym (which itself allocates) before main. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static atomic_long counted;  /* allocations seen since main */
static atomic_long failed;   /* allocations failed */
static long fail_at;         /* 0: count only */
static pid_t armed_pid;      /* 0: not armed */
static char out_path[4096];
static int bt_fd = -1;       /* CDD_FAILMALLOC_BT's file, or -1 */

/* Address ranges of the spared objects' loaded segments. */
#define MAX_SPARED 64
static struct { uintptr_t lo, hi; } spared[MAX_SPARED];
static int n_spared;
static const char *spare_list;
static int only_listed;      /* CDD_FAILMALLOC_ONLY: count just the listed */

static int spare_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    name = name ? name + 1 : info->dlpi_name;
    if (!name || !*name || !spare_list)
        return 0;
    for (const char *p = spare_list; *p;) {
        size_t len = strcspn(p, ",");
        if (len && strncmp(name, p, len) == 0) {
            for (int i = 0; i < info->dlpi_phnum && n_spared < MAX_SPARED; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
                if (ph->p_type != PT_LOAD)
                    continue;
                spared[n_spared].lo = info->dlpi_addr + ph->p_vaddr;
                spared[n_spared].hi = spared[n_spared].lo + ph->p_memsz;
                n_spared++;
            }
            break;
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

static int is_spared(const void *caller)
{
    uintptr_t a = (uintptr_t)caller;
    for (int i = 0; i < n_spared; i++)
        if (a >= spared[i].lo && a < spared[i].hi)
            return 1;
    return 0;
}

/* 1 when this allocation (made by code at caller) must fail. */
#define should_fail() should_fail_from(__builtin_return_address(0))
static int should_fail_from(const void *caller)
{
    if (!armed_pid || getpid() != armed_pid)
        return 0;
    if (only_listed ? !is_spared(caller) : n_spared && is_spared(caller))
        return 0;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (fail_at > 0 && n == fail_at) {
        atomic_fetch_add(&failed, 1);
        if (bt_fd >= 0) {
            /* backtrace() was warmed up when armed (its first call loads
             * libgcc_s, which allocates); neither call allocates now. */
            void *frames[64];
            int k = backtrace(frames, 64);
            backtrace_symbols_fd(frames, k, bt_fd);
            close(bt_fd);
            bt_fd = -1;
        }
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return should_fail() ? NULL : __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
    return should_fail() ? NULL : __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees: not an allocation that can fail. */
    if (n == 0 && p)
        return __libc_realloc(p, n);
    return should_fail() ? NULL : __libc_realloc(p, n);
}

void *reallocarray(void *p, size_t a, size_t b)
{
    size_t n;
    if (__builtin_mul_overflow(a, b, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    if (should_fail())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    return should_fail() ? NULL : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n)
{
    return should_fail() ? NULL : __libc_memalign(align, n);
}

void *valloc(size_t n)
{
    return should_fail() ? NULL : __libc_valloc(n);
}

void *pvalloc(size_t n)
{
    return should_fail() ? NULL : __libc_pvalloc(n);
}

static void report(void)
{
    if (!armed_pid || getpid() != armed_pid || !out_path[0])
        return;
    char buf[128];
    int len = snprintf(buf, sizeof buf, "allocations %ld\nfailed %ld\n",
                       atomic_load(&counted), atomic_load(&failed));
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, buf, (size_t)len) < 0) {
        /* nothing to do: the trial reads a missing count as a failure */
    }
    close(fd);
}

typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int armed_main(int argc, char **argv, char **envp)
{
    const char *v = getenv("CDD_FAILMALLOC");
    const char *o = getenv("CDD_FAILMALLOC_OUT");
    if (o && strlen(o) < sizeof out_path)
        strcpy(out_path, o);
    spare_list = getenv("CDD_FAILMALLOC_SPARE");
    const char *only = getenv("CDD_FAILMALLOC_ONLY");
    if (only && *only) {
        spare_list = only;
        only_listed = 1;
    }
    const char *bt = getenv("CDD_FAILMALLOC_BT");
    if (v && bt && *bt) {
        void *warm[2];
        backtrace(warm, 2);
        bt_fd = open(bt, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (v && spare_list && *spare_list)
        dl_iterate_phdr(spare_object, NULL);
    if (v) {
        fail_at = strcmp(v, "count") == 0 ? 0 : strtol(v, NULL, 10);
        /* Children the tool starts run unattacked. */
        unsetenv("CDD_FAILMALLOC");
        unsetenv("CDD_FAILMALLOC_OUT");
        unsetenv("CDD_FAILMALLOC_SPARE");
        unsetenv("CDD_FAILMALLOC_ONLY");
        unsetenv("CDD_FAILMALLOC_BT");
        unsetenv("LD_PRELOAD");
        /* The report at exit comes after the tool's own atexit handlers
         * (registered later, run earlier). */
        atexit(report);
        armed_pid = getpid();
    }
    return real_main(argc, argv, environ);
    (void)envp;
}

typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                        void (*)(void), void *);

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack)
{
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (!real)
        _exit(127);
    real_main = main;
    return real(armed_main, argc, argv, init, fini, rtld_fini, stack);
}
