/* Unit tests of the check type (checks.c, checks.h) that verify, doctor,
 * the verify record and the CLI's report share: the status words, the
 * counts kept while adding, a detail written whole (paths, quotes, long
 * text) and refused past its bound without a half-added check, a fix
 * moved onto the check added last (and merged into one it already has),
 * the list and a fix refused past their bounds (CDD_CHECKS_MAX,
 * CDD_FIX_STEPS_MAX) with the entries kept, and clearing. Runs on every platform. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/checks.h"
#include "cdd/error.h"
#include "cdd/strbuf.h"
#include "test.h"

static void test_status_names(void)
{
    CHECK_STR(cdd_check_status_name(CDD_CHECK_PASS), "pass");
    CHECK_STR(cdd_check_status_name(CDD_CHECK_WARN), "warn");
    CHECK_STR(cdd_check_status_name(CDD_CHECK_FAIL), "fail");
    CHECK_STR(cdd_check_status_name(CDD_CHECK_SKIP), "skip");
    /* A value outside the enum (a damaged record, a bug) never reads as a
     * real outcome. */
    CHECK_STR(cdd_check_status_name((enum cdd_check_status)CDD_CHECK_N_STATUS),
              "?");
    CHECK_STR(cdd_check_status_name((enum cdd_check_status)-1), "?");
}

static void test_add_counts_and_order(void)
{
    struct cdd_checks c = {0};
    CHECK_INT(cdd_checks_add(&c, "files", CDD_CHECK_PASS, "%d files", 31), 0);
    CHECK_INT(cdd_checks_add(&c, "load.search libcudnn.so.8", CDD_CHECK_WARN,
                             "shadowed by %s", "/opt/x/libcudnn.so.8"),
              0);
    CHECK_INT(cdd_checks_add(&c, "load.deps", CDD_CHECK_FAIL, "%s missing",
                             "libz.so.1"),
              0);
    CHECK_INT(cdd_checks_add(&c, "gpu", CDD_CHECK_SKIP, "no driver"), 0);
    CHECK_INT(cdd_checks_add(&c, "load.deps", CDD_CHECK_FAIL, "again"), 0);
    CHECK_INT(c.n, 5);
    CHECK_INT(c.n_fail, 2);
    CHECK_INT(c.n_warn, 1);
    CHECK_INT(c.nomem, 0);
    CHECK_INT(cdd_checks_count(&c, CDD_CHECK_PASS), 1);
    CHECK_INT(cdd_checks_count(&c, CDD_CHECK_WARN), 1);
    CHECK_INT(cdd_checks_count(&c, CDD_CHECK_FAIL), 2);
    CHECK_INT(cdd_checks_count(&c, CDD_CHECK_SKIP), 1);
    CHECK_INT(cdd_checks_count(NULL, CDD_CHECK_PASS), 0);
    /* In the order added, names and details as given. */
    CHECK_STR(c.v[0].name, "files");
    CHECK_STR(c.v[0].detail, "31 files");
    CHECK_STR(c.v[1].name, "load.search libcudnn.so.8");
    CHECK_STR(c.v[1].detail, "shadowed by /opt/x/libcudnn.so.8");
    CHECK_INT(c.v[2].status, CDD_CHECK_FAIL);
    CHECK_STR(c.v[4].detail, "again");
    CHECK_INT(c.v[0].fix.n, 0);
    cdd_checks_clear(&c);
    CHECK_INT(c.n, 0);
    CHECK(c.v == NULL);
    CHECK_INT(c.n_fail, 0);
}

/* More checks than the first allocation holds: every one kept. */
static void test_many(void)
{
    struct cdd_checks c = {0};
    for (int i = 0; i < 1000; i++)
        CHECK_INT(cdd_checks_add(&c, "load.lib", i % 3 == 0 ? CDD_CHECK_FAIL
                                                            : CDD_CHECK_PASS,
                                 "library %d", i),
                  0);
    CHECK_INT(c.n, 1000);
    CHECK_INT(c.n_fail, 334);
    CHECK_STR(c.v[999].detail, "library 999");
    cdd_checks_clear(&c);
}

/* A detail is whatever the finding needs: a long list of paths comes
 * whole; past CDD_TEXT_MAX the add fails and leaves no half check. */
static void test_detail_bound(void)
{
    struct cdd_checks c = {0};
    size_t n = 70000;
    char *big = malloc(n + 1);
    CHECK(big != NULL);
    if (!big)
        return;
    memset(big, 'p', n);
    big[n] = '\0';
    CHECK_INT(cdd_checks_add(&c, "path", CDD_CHECK_WARN, "%s", big), 0);
    CHECK_INT(c.n, 1);
    CHECK_INT(strlen(c.v[0].detail), n);
    CHECK_INT(c.toolong, 0);
    free(big);

    size_t over = CDD_TEXT_MAX + 16;
    char *huge = malloc(over + 1);
    CHECK(huge != NULL);
    if (huge) {
        memset(huge, 'q', over);
        huge[over] = '\0';
        cdd_clear_error();
        int r = cdd_checks_add(&c, "path", CDD_CHECK_FAIL, "%s", huge);
        CHECK_INT(r, CDD_E_TOOLONG);
        CHECK_INT(cdd_last_error()->code, r);
        /* Nothing recorded, nothing counted; the list says it is
         * incomplete. */
        CHECK_INT(c.n, 1);
        CHECK_INT(c.n_fail, 0);
        CHECK_INT(c.toolong, 1);
        CHECK_INT(c.nomem, 0);
        cdd_clear_error();
        free(huge);
    }
    cdd_checks_clear(&c);
}

/* The list holds CDD_CHECKS_MAX checks; one more is CDD_E_TOOLONG naming
 * the checks, and leaves the list as it was (nothing cut, nothing half). */
static void test_list_bound(void)
{
    struct cdd_checks c = {0};
    int bad = 0;
    for (size_t i = 0; i < CDD_CHECKS_MAX && !bad; i++)
        bad = cdd_checks_add(&c, "x", CDD_CHECK_PASS, "%zu", i) != 0;
    CHECK_INT(bad, 0);
    CHECK_INT(c.n, CDD_CHECKS_MAX);
    cdd_clear_error();
    CHECK_INT(cdd_checks_add(&c, "x", CDD_CHECK_FAIL, "one more"),
              CDD_E_TOOLONG);
    CHECK_INT(cdd_last_error()->code, CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "checks") != NULL);
    CHECK_INT(c.n, CDD_CHECKS_MAX);
    CHECK_INT(c.n_fail, 0);
    CHECK_INT(c.nomem, 0);
    CHECK_INT(c.toolong, 1);
    char last[32];
    snprintf(last, sizeof last, "%d", CDD_CHECKS_MAX - 1);
    CHECK_STR(c.v[CDD_CHECKS_MAX - 1].detail, last);
    cdd_clear_error();
    cdd_checks_clear(&c);
}

/* A fix list holds CDD_FIX_STEPS_MAX steps; one more is CDD_E_TOOLONG, the
 * steps already there kept whole. */
static void test_fix_steps_bound(void)
{
    struct cdd_fixes f = {0};
    int bad = 0;
    for (size_t i = 0; i < CDD_FIX_STEPS_MAX && !bad; i++)
        bad = cdd_fixes_set(&f, CDD_FIX_SESSION, "V", "1") != 0;
    CHECK_INT(bad, 0);
    CHECK_INT(f.n, CDD_FIX_STEPS_MAX);
    cdd_clear_error();
    CHECK_INT(cdd_fixes_set(&f, CDD_FIX_SESSION, "W", "2"), CDD_E_TOOLONG);
    CHECK(strstr(cdd_last_error()->msg, "steps") != NULL);
    const char *argv[] = {"ldconfig", NULL};
    CHECK_INT(cdd_fixes_run(&f, CDD_FIX_SYSTEM, argv), CDD_E_TOOLONG);
    CHECK_INT(cdd_fixes_prepend(&f, CDD_FIX_SESSION, "PATH", "/b", ':'),
              CDD_E_TOOLONG);
    CHECK_INT(f.n, CDD_FIX_STEPS_MAX);
    CHECK_STR(f.v[f.n - 1].name, "V");
    /* Appending a list to a full one fails the same way. */
    struct cdd_fixes g = {0};
    CHECK_INT(cdd_fixes_set(&g, CDD_FIX_SESSION, "X", "3"), 0);
    CHECK_INT(cdd_fixes_append(&f, &g), CDD_E_TOOLONG);
    CHECK_INT(f.n, CDD_FIX_STEPS_MAX);
    cdd_clear_error();
    cdd_fixes_clear(&g);
    cdd_fixes_clear(&f);
}

static void test_fix_moves_to_last_check(void)
{
    struct cdd_checks c = {0};
    struct cdd_fixes fx = {0};

    /* No check yet: the fix is dropped, and left empty. */
    CHECK_INT(cdd_fixes_set(&fx, CDD_FIX_SESSION, "CUDA_PATH", "/c"), 0);
    cdd_checks_fix(&c, &fx);
    CHECK_INT(fx.n, 0);
    CHECK(fx.v == NULL);

    CHECK_INT(cdd_checks_add(&c, "path", CDD_CHECK_PASS, "ok"), 0);
    CHECK_INT(cdd_checks_add(&c, "path PATH", CDD_CHECK_WARN, "order"), 0);
    CHECK_INT(cdd_fixes_prepend(&fx, CDD_FIX_SESSION, "PATH", "/c/bin", ':'),
              0);
    cdd_checks_fix(&c, &fx);
    CHECK_INT(fx.n, 0);
    CHECK_INT(c.v[0].fix.n, 0);
    CHECK_INT(c.v[1].fix.n, 1);
    CHECK_STR(c.v[1].fix.v[0].name, "PATH");
    CHECK_STR(c.v[1].fix.v[0].value, "/c/bin");
    CHECK_INT(cdd_fixes_alternatives(&c.v[1].fix), 1);

    /* A second fix for the same check joins it as another alternative. */
    CHECK_INT(cdd_fixes_set(&fx, CDD_FIX_SYSTEM, "CUDA_PATH", "/c"), 0);
    cdd_checks_fix(&c, &fx);
    CHECK_INT(fx.n, 0);
    CHECK_INT(c.v[1].fix.n, 2);
    CHECK_INT(cdd_fixes_alternatives(&c.v[1].fix), 2);
    CHECK_STR(c.v[1].fix.v[1].name, "CUDA_PATH");

    /* An empty fix adds nothing. */
    cdd_checks_fix(&c, &fx);
    CHECK_INT(c.v[1].fix.n, 2);
    cdd_checks_clear(&c);
    cdd_fixes_clear(&fx);
}

static void test_clear_is_safe(void)
{
    struct cdd_checks c = {0};
    cdd_checks_clear(NULL);
    cdd_checks_clear(&c);
    cdd_checks_clear(&c);
    CHECK_INT(cdd_checks_add(&c, "files", CDD_CHECK_PASS, "x"), 0);
    cdd_checks_clear(&c);
    /* Usable again after clearing. */
    CHECK_INT(cdd_checks_add(&c, "files", CDD_CHECK_FAIL, "y"), 0);
    CHECK_INT(c.n, 1);
    CHECK_INT(c.n_fail, 1);
    cdd_checks_clear(&c);
}

TEST_MAIN(TEST(test_status_names), TEST(test_add_counts_and_order),
          TEST(test_many), TEST(test_detail_bound), TEST(test_list_bound),
          TEST(test_fix_steps_bound),
          TEST(test_fix_moves_to_last_check), TEST(test_clear_is_safe))
