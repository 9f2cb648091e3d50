/* Code run apart (isolate.h): what the child sends comes back whole and in
 * order, a cut record is not read, a child past its bound is stopped, and
 * (where fn runs in a child) a child that dies keeps what it sent before
 * and says how it died, and one that falls silent past its bound is
 * stopped while one that keeps sending is not. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#include "cdd/error.h"
#include "cdd/isolate.h"
#include "test.h"

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
    CHECK_INT(cdd_run_isolated(send_three, NULL, 1024, 0, NULL, &iso), 0);
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
    CHECK_INT(cdd_run_isolated(fail_after_one, NULL, 1024, 0, NULL, &iso), 0);
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
    CHECK_INT(cdd_run_isolated(cut_record, NULL, 1024, 0, NULL, &iso), 0);
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
    CHECK_INT(cdd_run_isolated(send_a_lot, NULL, 1000, 0, NULL, &iso), 0);
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
    if (cdd_child_send_rec(ch, 'a', "before", 6) == 0)
        raise(SIGSEGV);
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
    /* Only where fn runs in a child: in-process the crash would be ours. */
    CHECK_INT(cdd_run_isolated(send_three, NULL, 1024, 0, NULL, &iso), 0);
    int apart = iso.isolated;
    cdd_isolated_free(&iso);
    if (!apart) {
        printf("  (fn runs in this process here: no crash case)\n");
        return;
    }
    CHECK_INT(cdd_run_isolated(send_then_crash, NULL, 1024, 0, NULL, &iso), 0);
    CHECK(iso.signaled);
    CHECK_INT(iso.code, SIGSEGV);
    CHECK(!cdd_isolated_ok(&iso));
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how), "SIGSEGV"));
    first_is_before(&iso);
    cdd_isolated_free(&iso);
}

#ifndef _WIN32
static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A record every 100 ms, ten times: a whole second, under a 400 ms bound
 * on silence. */
static int keep_sending(struct cdd_child *ch, void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        if (cdd_child_send_rec(ch, 'p', "tick", 4) != 0)
            return -1;
        usleep(100 * 1000);
    }
    return cdd_child_send_rec(ch, 'e', NULL, 0);
}

/* One record, then silence far past the bound (a hung driver). */
static int send_then_hang(struct cdd_child *ch, void *arg)
{
    (void)arg;
    if (cdd_child_send_rec(ch, 'a', "before", 6) == 0)
        sleep(30);
    return 0;
}
#endif

static void test_silence_past_its_bound_is_stopped(void)
{
#ifdef _WIN32
    printf("  (fn runs in this process here: no bound on silence)\n");
#else
    struct cdd_isolated iso;
    char how[96];
    CHECK_INT(cdd_run_isolated(keep_sending, NULL, 1024, 400, NULL, &iso), 0);
    CHECK(cdd_isolated_ok(&iso));
    CHECK(!iso.stalled);
    CHECK_INT((int)cdd_sb_len(&iso.out), 10 * 9 + 5);
    cdd_isolated_free(&iso);

    double t0 = seconds();
    CHECK_INT(cdd_run_isolated(send_then_hang, NULL, 1024, 400, NULL, &iso), 0);
    double took = seconds() - t0;
    CHECK(iso.stalled);
    CHECK(!cdd_isolated_ok(&iso));
    CHECK(iso.signaled && iso.code == SIGKILL);
    CHECK(took >= 0.35 && took < 10); /* stopped at its bound, not at 30 s */
    CHECK(strstr(cdd_isolated_how(&iso, how, sizeof how),
                 "made no progress for 0.4 s"));
    first_is_before(&iso);
    cdd_isolated_free(&iso);
#endif
}

TEST_MAIN(TEST(test_records_come_back_in_order),
          TEST(test_fn_failing_is_status_1), TEST(test_cut_record_is_not_read),
          TEST(test_past_its_bound_is_stopped),
          TEST(test_death_keeps_what_came_before),
          TEST(test_silence_past_its_bound_is_stopped))
