/* The feed of a file still arriving (cdd/feed.h): what a reader gets of
 * published bytes, of the tail held in memory and at the end, and how a
 * failure or "no streaming" is recorded and handed to waiters. Single
 * thread: every wait here is already satisfied when it is asked. */
#include "test.h"

#include <string.h>

#include "cdd/error.h"
#include "cdd/feed.h"
#include "cdd/fsops.h"

static const char body[] = "0123456789abcdef";

/* The .part as the platform would read it: the body itself. */
static int raw(struct cdd_rfile *f, uint64_t off, void *buf, size_t len,
               size_t *got)
{
    (void)f;
    memcpy(buf, body + off, len);
    *got = len;
    return 0;
}

static void test_advance_tail_and_end(void)
{
    struct cdd_feed *f;
    char buf[32];
    size_t got = 0;
    CHECK_INT(cdd_feed_new(&f), 0);
    cdd_feed_set_size(f, 16);
    CHECK(cdd_feed_size(f) == 16);
    CHECK_INT(cdd_feed_set_tail(f, 12, body + 12, 4), 0);
    /* A tail not reaching the end is refused. */
    CHECK(cdd_feed_set_tail(f, 2, body + 2, 4) < 0);
    cdd_feed_advance(f, 12);
    /* Published prefix then the tail from memory, cut at the end. */
    memset(buf, 0, sizeof buf);
    CHECK_INT(cdd_feed_pread(f, NULL, raw, 4, buf, sizeof buf, &got), 0);
    CHECK(got == 12);
    CHECK(memcmp(buf, body + 4, 12) == 0);
    /* At or past the end: nothing, no error. */
    CHECK_INT(cdd_feed_pread(f, NULL, raw, 16, buf, 4, &got), 0);
    CHECK(got == 0);
    cdd_feed_unref(f);
}

static void test_failure_recorded_first_wins(void)
{
    struct cdd_feed *f;
    struct cdd_rfile *r = (struct cdd_rfile *)1;
    struct cdd_finfo fi;
    char buf[8];
    size_t got = 1;
    CHECK_INT(cdd_feed_new(&f), 0);
    cdd_feed_set_size(f, 16);
    cdd_feed_advance(f, 4);
    cdd_fail(CDD_E_NETWORK, NULL, 0, "first failure");
    cdd_feed_fail(f);
    cdd_fail(CDD_E_IO, NULL, 0, "second failure");
    cdd_feed_fail(f);
    CHECK(cdd_feed_wait_ready(f, &r) == CDD_FEED_FAILED);
    CHECK(r == NULL);
    /* Bytes already published still read; beyond them, the first error. */
    CHECK_INT(cdd_feed_pread(f, NULL, raw, 0, buf, 4, &got), 0);
    CHECK(got == 4);
    CHECK_INT(cdd_feed_pread(f, NULL, raw, 2, buf, 8, &got), CDD_E_NETWORK);
    CHECK(strstr(cdd_last_error()->msg, "first failure") != NULL);
    CHECK_INT(cdd_feed_final_info(f, &fi), CDD_E_NETWORK);
    CHECK(!cdd_feed_abandoned(f));
    cdd_feed_unref(f);
}

static void test_no_stream_and_settle(void)
{
    struct cdd_feed *f;
    struct cdd_rfile *r;
    CHECK_INT(cdd_feed_new(&f), 0);
    cdd_fail(CDD_E_IO, NULL, 0, "the writer's own error");
    cdd_feed_no_stream(f, "the server ignores Range");
    /* The writer's last error is left as it was. */
    CHECK_INT(cdd_last_error()->code, CDD_E_IO);
    CHECK(cdd_feed_wait_ready(f, &r) == CDD_FEED_NO_STREAM);
    CHECK_STR(cdd_feed_why(f), "the server ignores Range");
    CHECK(cdd_feed_abandoned(f));
    cdd_feed_unref(f);

    CHECK_INT(cdd_feed_new(&f), 0);
    CHECK(cdd_feed_ref(f) == f);
    cdd_feed_unref(f);
    cdd_feed_settle(f);
    CHECK(cdd_feed_wait_ready(f, &r) == CDD_FEED_NO_STREAM);
    CHECK_STR(cdd_feed_why(f), "the download did not offer its file");
    CHECK(!cdd_feed_abandoned(f));
    cdd_feed_unref(f);
    cdd_feed_unref(NULL);
}

static void test_complete(void)
{
    struct cdd_feed *f;
    struct cdd_finfo fi, out;
    memset(&fi, 0, sizeof fi);
    memset(&out, 0xff, sizeof out);
    CHECK_INT(cdd_feed_new(&f), 0);
    cdd_feed_set_size(f, 16);
    cdd_feed_advance(f, 99); /* clamped to the size */
    cdd_feed_complete(f, &fi);
    CHECK_INT(cdd_feed_final_info(f, &out), 0);
    CHECK(memcmp(&fi, &out, sizeof fi) == 0);
    cdd_feed_unref(f);
}

TEST_MAIN(TEST(test_advance_tail_and_end),
          TEST(test_failure_recorded_first_wins),
          TEST(test_no_stream_and_settle), TEST(test_complete))
