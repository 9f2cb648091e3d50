/* Messages are one printable line whatever they carry (error.c):
 * cdd_text_one_line and cdd_error_format, which renders through it; the
 * record and its saves hold long paths and messages whole. */
#include <string.h>

#include <stdlib.h>

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

/* Issue 18: the record holds a path up to the platform's limit and a long
 * message whole (the 1024-byte fields cut both), and the one-line form
 * carries all of it. */
static void test_long_record_is_whole(void)
{
    size_t pl = 4095, ml = 20000;
    char *path = malloc(pl + 1), *msg = malloc(ml + 1);
    CHECK(path && msg);
    memset(path, 'p', pl);
    path[0] = '/';
    path[pl] = '\0';
    memset(msg, 'm', ml);
    memcpy(msg + ml - 3, "end", 3);
    msg[ml] = '\0';
    cdd_fail(CDD_E_UNSAFE, path, 0, "%s", msg);
    CHECK_INT(strlen(cdd_last_error()->path), pl);
    CHECK_STR(cdd_last_error()->path, path);
    CHECK_STR(cdd_last_error()->msg, msg);
    char *t = cdd_error_text();
    CHECK(t && strlen(t) == pl + 2 + ml);
    CHECK(t && strstr(t, "mmmend") != NULL);
    free(t);
    free(path);
    free(msg);
    cdd_clear_error();
    CHECK_STR(cdd_last_error()->path, "");
    CHECK_STR(cdd_last_error()->msg, "");
}

/* A save is the record's own copy: later failures (a roll-back's) do not
 * touch it; it restores whole, more than once, through a copy of the
 * struct too; a zeroed or freed save restores "no failure". */
static void test_save_outlives_later_failures(void)
{
    struct cdd_errsave s, copy, zero = {0};
    cdd_fail(CDD_E_NOSPC, "/tree/lib/libcudnn.so.9", 28, "cannot write: %d",
             42);
    cdd_error_save(&s);
    for (int i = 0; i < 100; i++)
        cdd_fail(CDD_E_IO, "/elsewhere", 5, "roll-back step %d failed", i);
    copy = s;
    CHECK_INT(cdd_error_restore(&copy), CDD_E_NOSPC);
    CHECK_STR(cdd_last_error()->path, "/tree/lib/libcudnn.so.9");
    CHECK_STR(cdd_last_error()->msg, "cannot write: 42");
    CHECK_INT(cdd_last_error()->os_err, 28);
    cdd_fail(CDD_E_IO, NULL, 0, "another");
    CHECK_INT(cdd_error_restore(&s), CDD_E_NOSPC);
    CHECK_STR(cdd_last_error()->msg, "cannot write: 42");
    cdd_error_save_free(&s);
    CHECK_INT(cdd_error_restore(&s), 0);
    CHECK_INT(cdd_error_restore(&zero), 0);
    CHECK_STR(cdd_last_error()->msg, "");
    cdd_error_save_free(&zero);
}

/* Names kept for a message (cdd_err_keep) are released when it is
 * recorded; a NULL (out of memory) shows a placeholder. */
static void test_kept_names(void)
{
    char *a = malloc(4);
    CHECK(a != NULL);
    strcpy(a, "abc");
    cdd_fail(CDD_E_UNSAFE, NULL, 0, "entry \"%s\" and \"%s\"",
             cdd_err_keep(a), cdd_err_keep(NULL));
    CHECK_STR(cdd_last_error()->msg,
              "entry \"abc\" and \"(name not shown: out of memory)\"");
    cdd_clear_error();
}

TEST_MAIN(TEST(test_controls_are_escaped),
          TEST(test_long_record_is_whole),
          TEST(test_save_outlives_later_failures), TEST(test_kept_names),
          TEST(test_fail_may_quote_the_last_failure),
          TEST(test_unicode_controls_are_escaped),
          TEST(test_bad_utf8_is_escaped_byte_by_byte),
          TEST(test_printable_text_is_kept),
          TEST(test_cut_at_a_whole_character),
          TEST(test_error_format_is_one_line))
