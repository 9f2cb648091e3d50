/* The bounded string buffer and array: growth, the maximum (reached
 * exactly, then passed: an error naming the content, the content kept),
 * printf, joins, embedded NULs. */
#include "cdd/error.h"
#include "cdd/strbuf.h"

#include <stdlib.h>
#include <string.h>

#include "test.h"

static void test_empty(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 10, "name");
    CHECK_STR(cdd_sb_str(&sb), "");
    CHECK_INT(cdd_sb_len(&sb), 0);
    char *s = cdd_sb_take(&sb);
    CHECK_STR(s, "");
    free(s);
    cdd_sb_free(&sb);
    cdd_sb_free(NULL);
}

static void test_growth(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 100000, "text");
    for (int i = 0; i < 10000; i++)
        CHECK_INT(cdd_sb_adds(&sb, "abcdefghij"), 0);
    CHECK_INT(cdd_sb_len(&sb), 100000);
    CHECK(sb.cap <= 100001);
    CHECK_INT(strlen(cdd_sb_str(&sb)), 100000);
    CHECK(memcmp(cdd_sb_str(&sb) + 99990, "abcdefghij", 10) == 0);
    cdd_sb_free(&sb);
}

static void test_max_exact_then_over(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 5, "file name");
    CHECK_INT(cdd_sb_adds(&sb, "abc"), 0);
    CHECK_INT(cdd_sb_adds(&sb, "de"), 0);
    CHECK_STR(cdd_sb_str(&sb), "abcde");
    cdd_clear_error();
    CHECK_INT(cdd_sb_adds(&sb, "f"), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "file name") != NULL);
    CHECK(strstr(cdd_last_error()->msg, "5 bytes") != NULL);
    /* not cut, not changed */
    CHECK_STR(cdd_sb_str(&sb), "abcde");
    CHECK_INT(cdd_sb_len(&sb), 5);
    CHECK_INT(cdd_sb_addf(&sb, "%d", 1), CDD_E_TOOLONG);
    CHECK_INT(cdd_sb_add(&sb, "", 0), 0);
    CHECK_INT(cdd_sb_reserve(&sb, (size_t)-1), CDD_E_TOOLONG);
    cdd_sb_free(&sb);

    cdd_sb_init(&sb, 3, "x");
    CHECK_INT(cdd_sb_adds(&sb, "abcd"), CDD_E_TOOLONG);
    CHECK_STR(cdd_sb_str(&sb), "");
    CHECK_INT(cdd_sb_set(&sb, "abcd"), CDD_E_TOOLONG);
    CHECK_INT(cdd_sb_set(&sb, "abc"), 0);
    CHECK_STR(cdd_sb_str(&sb), "abc");
    cdd_sb_free(&sb);
}

static void test_printf(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 64, "line");
    CHECK_INT(cdd_sb_addf(&sb, "%s=%d", "n", 42), 0);
    CHECK_INT(cdd_sb_addf(&sb, ", %03d", 7), 0);
    CHECK_STR(cdd_sb_str(&sb), "n=42, 007");
    /* setf may read its own content */
    CHECK_INT(cdd_sb_setf(&sb, "[%s]", cdd_sb_str(&sb)), 0);
    CHECK_STR(cdd_sb_str(&sb), "[n=42, 007]");
    char big[100];
    memset(big, 'x', sizeof big - 1);
    big[99] = '\0';
    CHECK_INT(cdd_sb_setf(&sb, "%s", big), CDD_E_TOOLONG);
    CHECK_STR(cdd_sb_str(&sb), "[n=42, 007]");
    CHECK_INT(cdd_sb_setf(&sb, "%s", ""), 0);
    CHECK_STR(cdd_sb_str(&sb), "");
    cdd_sb_free(&sb);

    char *a = cdd_aprintf(8, "number", "%d-%d", 12, 34);
    CHECK_STR(a, "12-34");
    free(a);
    CHECK(cdd_aprintf(4, "number", "%d-%d", 12, 34) == NULL);
    CHECK_INT(cdd_last_error()->code, CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "number") != NULL);
}

static void test_join(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 16, "path");
    CHECK_INT(cdd_sb_join(&sb, "a/b", "c"), 0);
    CHECK_STR(cdd_sb_str(&sb), "a/b/c");
    CHECK_INT(cdd_sb_join(&sb, "a/b/", "c"), 0);
    CHECK_STR(cdd_sb_str(&sb), "a/b/c");
    CHECK_INT(cdd_sb_join(&sb, "", "c"), 0);
    CHECK_STR(cdd_sb_str(&sb), "c");
    /* from its own content */
    CHECK_INT(cdd_sb_join(&sb, cdd_sb_str(&sb), "de"), 0);
    CHECK_STR(cdd_sb_str(&sb), "c/de");
    CHECK_INT(cdd_sb_join(&sb, "0123456789", "abcdef"), CDD_E_TOOLONG);
    CHECK_STR(cdd_sb_str(&sb), "c/de");
    CHECK_INT(cdd_sb_join(&sb, "0123456789", "abcde"), 0);
    CHECK_INT(cdd_sb_len(&sb), 16);
    cdd_sb_free(&sb);
}

static void test_nul_bytes(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 8, "bytes");
    CHECK_INT(cdd_sb_add(&sb, "a\0b", 3), 0);
    CHECK_INT(cdd_sb_add(&sb, "\0", 1), 0);
    CHECK_INT(cdd_sb_len(&sb), 4);
    CHECK(memcmp(cdd_sb_str(&sb), "a\0b\0", 5) == 0);
    char *t = cdd_sb_take(&sb);
    CHECK(t && memcmp(t, "a\0b\0", 5) == 0);
    free(t);
    CHECK_INT(cdd_sb_len(&sb), 0);
    CHECK_STR(cdd_sb_str(&sb), "");
    cdd_sb_free(&sb);
}

static void test_bounds_of_platform(void)
{
    CHECK_INT(CDD_NAME_MAX, 255);
    CHECK(CDD_PATH_MAX == CDD_PATH_MAX_POSIX ||
          CDD_PATH_MAX == CDD_PATH_MAX_WIN32);
    struct cdd_sb sb;
    cdd_sb_init(&sb, CDD_PATH_MAX, "path");
    for (size_t i = 0; i < CDD_PATH_MAX; i++)
        CHECK_INT(cdd_sb_add(&sb, "p", 1), 0);
    CHECK_INT(cdd_sb_add(&sb, "p", 1), CDD_E_TOOLONG);
    cdd_sb_free(&sb);
}

static void test_strdup(void)
{
    char *d = cdd_strdup("hello");
    CHECK_STR(d, "hello");
    free(d);
    CHECK(cdd_strdup(NULL) == NULL);
    d = cdd_strndup("hello", 3);
    CHECK_STR(d, "hel");
    free(d);
    d = cdd_strndup("hi", 10);
    CHECK_STR(d, "hi");
    free(d);
}

static void test_vec(void)
{
    struct cdd_vec v;
    cdd_vec_init(&v, sizeof(int), 100, "entries");
    for (int i = 0; i < 100; i++)
        CHECK_INT(cdd_vec_push(&v, &i), 0);
    CHECK_INT(v.len, 100);
    CHECK(v.cap <= 100);
    CHECK_INT(*(int *)cdd_vec_at(&v, 57), 57);
    CHECK(cdd_vec_at(&v, 100) == NULL);
    int x = 100;
    CHECK_INT(cdd_vec_push(&v, &x), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "100 entries") != NULL);
    CHECK_INT(v.len, 100);
    CHECK_INT(cdd_vec_reserve(&v, (size_t)-1), CDD_E_TOOLONG);
    size_t n = 0;
    int *a = cdd_vec_take(&v, &n);
    CHECK_INT(n, 100);
    CHECK_INT(a[99], 99);
    free(a);
    CHECK_INT(v.len, 0);
    cdd_vec_free(&v);
    cdd_vec_free(NULL);
}

/* cdd_grow on an array kept in a struct: doubling with a capacity field,
 * exact without one, the bound named, and the array untouched on failure. */
static void test_grow(void)
{
    long *a = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < 40; i++) {
        CHECK_INT(CDD_GROW(a, &cap, i + 1, 40, "toolkits"), 0);
        a[i] = (long)i;
    }
    CHECK_INT(cap, 40);
    long *before = a;
    CHECK_INT(CDD_GROW(a, &cap, 41, 40, "toolkits"), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "more than 40 toolkits") != NULL);
    CHECK(a == before);
    CHECK_INT(cap, 40);
    CHECK_INT(a[39], 39);
    /* A size whose product overflows is out of memory, not a wrap. */
    CHECK_INT(cdd_grow(&a, &cap, 41, (size_t)-1 / 8, (size_t)-1, "x"),
              CDD_E_NOMEM);
    CHECK(a == before);
    free(a);

    /* No capacity field: resized to exactly need items each time. */
    char **v = NULL;
    for (size_t i = 0; i < 3; i++) {
        CHECK_INT(CDD_GROW(v, NULL, i + 1, 3, "names"), 0);
        v[i] = NULL;
    }
    CHECK_INT(CDD_GROW(v, NULL, 4, 3, "names"), CDD_E_TOOLONG);
    free(v);
    /* Nothing asked, nothing allocated. */
    int *z = NULL;
    CHECK_INT(CDD_GROW(z, NULL, 0, 10, "x"), 0);
    CHECK(z == NULL);
}

/* cdd_sb_catf: the first failure sticks, later pieces are dropped, the
 * content stays what fitted, and the error is read once at the end. */
static void test_catf_sticky(void)
{
    struct cdd_sb sb;
    cdd_sb_init(&sb, 10, "detail");
    cdd_sb_catf(&sb, "%s", "12345");
    CHECK_INT(cdd_sb_error(&sb), 0);
    cdd_sb_catf(&sb, "%d", 678901);
    CHECK_INT(cdd_sb_error(&sb), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "detail longer than 10 bytes"));
    cdd_sb_catf(&sb, "x");
    CHECK_STR(cdd_sb_str(&sb), "12345");
    CHECK_INT(cdd_sb_error(&sb), CDD_E_TOOLONG);
    cdd_sb_free(&sb);
    cdd_sb_init(&sb, 10, "detail");
    CHECK_INT(cdd_sb_error(&sb), 0);
    cdd_sb_catf(&sb, "%s", "0123456789");
    CHECK_INT(cdd_sb_error(&sb), 0);
    CHECK_STR(cdd_sb_str(&sb), "0123456789");
    cdd_sb_free(&sb);
}

TEST_MAIN(TEST(test_empty), TEST(test_growth), TEST(test_max_exact_then_over),
          TEST(test_printf), TEST(test_join), TEST(test_nul_bytes),
          TEST(test_bounds_of_platform), TEST(test_strdup), TEST(test_vec),
          TEST(test_grow), TEST(test_catf_sticky))
