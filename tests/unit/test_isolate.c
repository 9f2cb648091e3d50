/* Code run apart (isolate.h): what the child sends comes back whole and in
 * order, a cut record is not read, a child past its bound is stopped, a
 * child that dies keeps what it sent before and says how it died, and one
 * that falls silent past its bound is stopped while one that keeps sending
 * is not. On POSIX the child is forked; on Windows (under Wine in the
 * suite) it is this test program started afresh, which main() hands to
 * cdd_isolate_child_main with the entries below, and the request reaches
 * it whole. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

#include "cdd/error.h"
#include "cdd/isolate.h"
#include "test.h"

/* Run fn apart, by its name where it starts afresh (no request). */
#define RUN(fn, max, stall, iso)                                               \
    run_named(fn, #fn, NULL, 0, max, stall, iso)

static int run_named(int (*fn)(struct cdd_child *, void *), const char *name,
                     const void *req, size_t n, size_t max, long stall,
                     struct cdd_isolated *iso)
{
    struct cdd_respawn again = {name, req, n};
    return cdd_run_isolated(fn, (void *)req, &again, max, stall, NULL, iso);
}

static void pause_ms(int ms)
{
#ifdef _WIN32
    Sleep((DWORD)ms);
#else
    usleep((useconds_t)ms * 1000);
#endif
}

static int send_three(struct cdd_child *ch, void *arg)
{
    (void)arg;
    int r = cdd_child_send_rec(ch, 'a', "one", 3);
    if (!r)
        r = cdd_child_send_rec(ch, 'b', NULL, 0);
    if (!r)
        r = cdd_child_send_rec(ch, 'c', "three\0x", 7);
    return r;
}

static void test_records_come_back_in_order(void)
{
    struct cdd_isolated iso;
    CHECK_INT(RUN(send_three, 1024, 0, &iso), 0);
    CHECK(cdd_isolated_ok(&iso));
    size_t pos = 0, n = 0;
    const char *p = NULL;
    char type = 0;
    CHECK(cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK(type == 'a' && n == 3 && memcmp(p, "one", 3) == 0);
    CHECK(cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK(type == 'b' && n == 0);
    CHECK(cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK(type == 'c' && n == 7 && memcmp(p, "three\0x", 7) == 0);
    CHECK(!cdd_isolated_next(&iso, &pos, &type, &p, &n));
    cdd_isolated_free(&iso);
}

static int fail_after_one(struct cdd_child *ch, void *arg)
{
    (void)arg;
    (void)cdd_child_send_rec(ch, 'a', "x", 1);
    return cdd_fail(CDD_E_CHECK, NULL, 0, "fn failed");
}

static void test_fn_failing_is_status_1(void)
{
    struct cdd_isolated iso;
    char how[96];
    CHECK_INT(RUN(fail_after_one, 1024, 0, &iso), 0);
    CHECK(!cdd_isolated_ok(&iso));
    CHECK_INT(iso.code, 1);
    CHECK(!iso.signaled);
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how), "status 1"));
    CHECK_INT((int)cdd_sb_len(&iso.out), 6);
    cdd_isolated_free(&iso);
}

/* A header that promises 10 bytes, then 3 of them. */
static int cut_record(struct cdd_child *ch, void *arg)
{
    (void)arg;
    static const unsigned char head[5] = {'z', 10, 0, 0, 0};
    int r = cdd_child_send_rec(ch, 'a', "whole", 5);
    if (!r)
        r = cdd_child_send(ch, head, sizeof head);
    if (!r)
        r = cdd_child_send(ch, "cut", 3);
    return r;
}

static void test_cut_record_is_not_read(void)
{
    struct cdd_isolated iso;
    CHECK_INT(RUN(cut_record, 1024, 0, &iso), 0);
    size_t pos = 0, n = 0;
    const char *p = NULL;
    char type = 0;
    CHECK(cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK(type == 'a' && n == 5);
    CHECK(!cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK_INT((int)pos, 10);
    cdd_isolated_free(&iso);
}

static int send_a_lot(struct cdd_child *ch, void *arg)
{
    (void)arg;
    char block[256];
    memset(block, 'q', sizeof block);
    for (int i = 0; i < 64; i++)
        if (cdd_child_send(ch, block, sizeof block) != 0)
            return -1;
    return 0;
}

static void test_past_its_bound_is_stopped(void)
{
    struct cdd_isolated iso;
    char how[96];
    CHECK_INT(RUN(send_a_lot, 1000, 0, &iso), 0);
    CHECK(iso.over);
    CHECK(!cdd_isolated_ok(&iso));
    CHECK(cdd_sb_len(&iso.out) <= 1000);
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how), "bound"));
    cdd_isolated_free(&iso);
    cdd_clear_error();
}

static int send_then_crash(struct cdd_child *ch, void *arg)
{
    (void)arg;
    if (cdd_child_send_rec(ch, 'a', "before", 6) == 0) {
#ifdef _WIN32
        *(volatile int *)(uintptr_t)8 = 1; /* an access violation */
#else
        raise(SIGSEGV);
#endif
    }
    return 0;
}

/* What a child sent before it died or was stopped: the 'a' record "before". */
static void first_is_before(const struct cdd_isolated *iso)
{
    size_t pos = 0, n = 0;
    const char *p = NULL;
    char type = 0;
    CHECK(cdd_isolated_next(iso, &pos, &type, &p, &n));
    CHECK(type == 'a' && n == 6 && memcmp(p, "before", 6) == 0);
}

static void test_death_keeps_what_came_before(void)
{
    struct cdd_isolated iso;
    char how[96];
    CHECK_INT(RUN(send_then_crash, 1024, 0, &iso), 0);
    CHECK(iso.signaled);
#ifdef _WIN32
    CHECK_INT((unsigned)iso.code, 0xC0000005u);
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how),
                 "0xC0000005 (an access violation)"));
#else
    CHECK_INT(iso.code, SIGSEGV);
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how), "SIGSEGV"));
#endif
    CHECK(!cdd_isolated_ok(&iso));
    first_is_before(&iso);
    cdd_isolated_free(&iso);
}

/* The request, sent back as one record (POSIX: the same bytes as arg). */
static int echo(struct cdd_child *ch, void *arg)
{
    return cdd_child_send_rec(ch, 'q', arg, strlen(arg));
}

static void test_the_request_reaches_the_child(void)
{
    struct cdd_isolated iso;
    static char big[70000]; /* past a pipe's usual buffer */
    memset(big, 'r', sizeof big - 1);
    CHECK_INT(run_named(echo, "echo", big, sizeof big - 1, 100000, 0, &iso),
              0);
    CHECK(cdd_isolated_ok(&iso));
    size_t pos = 0, n = 0;
    const char *p = NULL;
    char type = 0;
    CHECK(cdd_isolated_next(&iso, &pos, &type, &p, &n));
    CHECK(type == 'q' && n == sizeof big - 1 && memcmp(p, big, n) == 0);
    cdd_isolated_free(&iso);
}

static double seconds(void)
{
#ifdef _WIN32
    return (double)GetTickCount64() / 1000.0;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
#endif
}

/* A record every 100 ms, ten times: a whole second, under a 400 ms bound
 * on silence. */
static int keep_sending(struct cdd_child *ch, void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        if (cdd_child_send_rec(ch, 'p', "tick", 4) != 0)
            return -1;
        pause_ms(100);
    }
    return cdd_child_send_rec(ch, 'e', NULL, 0);
}

/* One record, then silence far past the bound (a hung driver). */
static int send_then_hang(struct cdd_child *ch, void *arg)
{
    (void)arg;
    if (cdd_child_send_rec(ch, 'a', "before", 6) == 0)
        pause_ms(30000);
    return 0;
}

static void test_silence_past_its_bound_is_stopped(void)
{
    struct cdd_isolated iso;
    char how[96];
    CHECK_INT(RUN(keep_sending, 1024, 400, &iso), 0);
    CHECK(cdd_isolated_ok(&iso));
    CHECK(!iso.stalled);
    CHECK_INT((int)cdd_sb_len(&iso.out), 10 * 9 + 5);
    cdd_isolated_free(&iso);

    double t0 = seconds();
    CHECK_INT(RUN(send_then_hang, 1024, 400, &iso), 0);
    double took = seconds() - t0;
    CHECK(iso.stalled);
    CHECK(!cdd_isolated_ok(&iso));
#ifndef _WIN32
    CHECK(iso.signaled && iso.code == SIGKILL);
#endif
    CHECK(took >= 0.35 && took < 10); /* stopped at its bound, not at 30 s */
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how),
                 "made no progress for 0.4 s"));
    first_is_before(&iso);
    cdd_isolated_free(&iso);
}

/* The steps as a child started afresh runs them (Windows). */
#define ENTRY(fn)                                                              \
    static int entry_##fn(struct cdd_child *ch, const void *req, size_t n)     \
    {                                                                          \
        (void)req;                                                             \
        (void)n;                                                               \
        return fn(ch, NULL);                                                   \
    }
ENTRY(send_three)
ENTRY(fail_after_one)
ENTRY(cut_record)
ENTRY(send_a_lot)
ENTRY(send_then_crash)
ENTRY(keep_sending)
ENTRY(send_then_hang)

static int entry_echo(struct cdd_child *ch, const void *req, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        return 1;
    memcpy(s, req, n);
    s[n] = '\0';
    int r = echo(ch, s);
    free(s);
    return r;
}

static const struct cdd_isolate_entry entries[] = {
    {"send_three", entry_send_three},
    {"fail_after_one", entry_fail_after_one},
    {"cut_record", entry_cut_record},
    {"send_a_lot", entry_send_a_lot},
    {"send_then_crash", entry_send_then_crash},
    {"keep_sending", entry_keep_sending},
    {"send_then_hang", entry_send_then_hang},
    {"echo", entry_echo},
};

int main(int argc, char **argv)
{
    static const struct t_case cases[] = {
        TEST(test_records_come_back_in_order),
        TEST(test_fn_failing_is_status_1), TEST(test_cut_record_is_not_read),
        TEST(test_past_its_bound_is_stopped),
        TEST(test_death_keeps_what_came_before),
        TEST(test_the_request_reaches_the_child),
        TEST(test_silence_past_its_bound_is_stopped)};
    int child = cdd_isolate_child_main(argc, argv, entries,
                                       sizeof entries / sizeof entries[0]);
    if (child >= 0)
        return child;
    return t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);
}
