/* Messages are one printable line whatever they carry (error.c):
 * cdd_text_one_line and cdd_error_format, which renders through it. */
#include <string.h>

#include "cdd/error.h"
#include "test.h"

static const char *one(const char *in)
{
    static char buf[256];
    return cdd_text_one_line(in, buf, sizeof buf);
}

static void test_controls_are_escaped(void)
{
    CHECK_STR(one("a\nb"), "a\\nb");
    CHECK_STR(one("a\rb\tc"), "a\\rb\\tc");
    CHECK_STR(one("\x1b[31mred"), "\\x1b[31mred");
    CHECK_STR(one("del\x7f"), "del\\x7f");
    CHECK_STR(one("bell\x07"), "bell\\x07");
}

static void test_unicode_controls_are_escaped(void)
{
    CHECK_STR(one("nel\xc2\x85x"), "nel\\u{0085}x");         /* C1 NEL */
    CHECK_STR(one("ls\xe2\x80\xa8x"), "ls\\u{2028}x");       /* U+2028 */
    CHECK_STR(one("rlo\xe2\x80\xaex"), "rlo\\u{202e}x");     /* U+202E */
    CHECK_STR(one("fsi\xe2\x81\xa8x"), "fsi\\u{2068}x");     /* U+2068 */
}

static void test_bad_utf8_is_escaped_byte_by_byte(void)
{
    CHECK_STR(one("a\xff" "b"), "a\\xffb");
    CHECK_STR(one("\xc0\xaf"), "\\xc0\\xaf");                /* overlong '/' */
    CHECK_STR(one("\xed\xa0\x80"), "\\xed\\xa0\\x80");       /* surrogate */
    CHECK_STR(one("cut\xe4\xb8"), "cut\\xe4\\xb8");          /* truncated */
}

static void test_printable_text_is_kept(void)
{
    CHECK_STR(one("C:\\Program Files\\NVIDIA"), "C:\\Program Files\\NVIDIA");
    CHECK_STR(one("caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80"),
              "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
    CHECK_STR(one(""), "");
    CHECK_STR(one(NULL), "");
}

static void test_cut_at_a_whole_character(void)
{
    char buf[6];
    CHECK_STR(cdd_text_one_line("ab\ncd", buf, sizeof buf), "ab\\nc");
    CHECK_STR(cdd_text_one_line("abcd\n", buf, sizeof buf), "abcd"); /* not half an escape */
    CHECK_STR(cdd_text_one_line("abc\xe4\xb8\xad", buf, sizeof buf),
              "abc");                  /* 3 + 3 bytes + NUL do not fit */
    char tiny[1];
    CHECK_STR(cdd_text_one_line("x", tiny, sizeof tiny), "");
}

static void test_error_format_is_one_line(void)
{
    char buf[512];
    cdd_fail(CDD_E_STATE, "/tmp/tree\n\x1b[2Jx/.cudnn-deploy/receipt.json", 0,
             "files[%d]: unsafe path %s", 3, "a\nb");
    cdd_error_format(buf, sizeof buf);
    CHECK(strchr(buf, '\n') == NULL);
    CHECK(strchr(buf, '\x1b') == NULL);
    CHECK_STR(buf, "/tmp/tree\\n\\x1b[2Jx/.cudnn-deploy/receipt.json: "
                   "files[3]: unsafe path a\\nb");
    cdd_clear_error();
}

/* A message built from the last failure's own text (the roll-back's "…; the
 * roll-back did not finish (…)") reads it whole: formatting in place
 * repeated the new text inside its own parentheses. */
static void test_fail_may_quote_the_last_failure(void)
{
    cdd_fail(CDD_E_IO, "/t/.cudnn-deploy/backup/x", 234, "cannot resolve path");
    const struct cdd_errinfo *e = cdd_last_error();
    cdd_fail(CDD_E_IO, e->path, e->os_err,
             "%s; the roll-back did not finish (%s); run `cudnn-deploy "
             "recover` to complete it",
             e->msg, e->msg);
    CHECK_STR(cdd_last_error()->path, "/t/.cudnn-deploy/backup/x");
    CHECK_STR(cdd_last_error()->msg,
              "cannot resolve path; the roll-back did not finish (cannot "
              "resolve path); run `cudnn-deploy recover` to complete it");
    CHECK_INT(cdd_last_error()->os_err, 234);
    cdd_clear_error();
}

TEST_MAIN(TEST(test_controls_are_escaped),
          TEST(test_fail_may_quote_the_last_failure),
          TEST(test_unicode_controls_are_escaped),
          TEST(test_bad_utf8_is_escaped_byte_by_byte),
          TEST(test_printable_text_is_kept),
          TEST(test_cut_at_a_whole_character),
          TEST(test_error_format_is_one_line))
