/* The load layer's platform pieces (issue 18), POSIX: the private folder
 * for proven copies (fresh, 0700, ours) and the StrictModes verdict on a
 * folder (cdd_lib_dir_trust): other-writable, group-writable for an
 * untrusted group, a foreign owner; the sticky exemption above a library
 * only; the fix commands. Run as root it also tries a foreign owner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdd/error.h"
#include "cdd/fix.h"
#include "cdd/fsops.h"
#include "cdd/loader.h"
#include "test.h"

static char *base;

static char *mk(const char *name, mode_t mode)
{
    size_t len = strlen(base) + strlen(name) + 2;
    char *p = malloc(len);
    snprintf(p, len, "%s/%s", base, name);
    CHECK(mkdir(p, 0700) == 0);
    CHECK(chmod(p, mode) == 0);
    return p;
}

static int fix_has(const struct cdd_fixes *f, const char *prog,
                   const char *arg)
{
    for (size_t i = 0; i < f->n; i++) {
        if (f->v[i].kind != CDD_FIX_RUN || strcmp(f->v[i].name, prog) != 0)
            continue;
        for (size_t k = 0; k < f->v[i].n_args; k++)
            if (strcmp(f->v[i].args[k], arg) == 0)
                return 1;
    }
    return 0;
}

static void test_private_dir(void)
{
    char *a = NULL, *b = NULL;
    struct stat st;
    CHECK_INT(cdd_lib_private_dir(&a), 0);
    CHECK_INT(cdd_lib_private_dir(&b), 0);
    CHECK(a && b && strcmp(a, b) != 0);
    CHECK(a && strstr(a, "/cudnn-deploy-load.") != NULL);
    CHECK(a && stat(a, &st) == 0 && S_ISDIR(st.st_mode));
    CHECK_INT(st.st_mode & 07777, 0700);
    CHECK_INT(st.st_uid, geteuid());
    CHECK_INT(cdd_fs_remove_tree(a), 0);
    CHECK_INT(cdd_fs_remove_tree(b), 0);
    CHECK(stat(a, &st) != 0);
    free(a);
    free(b);
}

static void test_private_dir_tmpdir(void)
{
    char *a = NULL;
    setenv("TMPDIR", base, 1);
    CHECK_INT(cdd_lib_private_dir(&a), 0);
    CHECK(a && strncmp(a, base, strlen(base)) == 0);
    cdd_fs_remove_tree(a);
    free(a);
    setenv("TMPDIR", "relative/not/used", 1);
    CHECK_INT(cdd_lib_private_dir(&a), 0);
    CHECK(a && strncmp(a, "/tmp/", 5) == 0);
    cdd_fs_remove_tree(a);
    free(a);
    unsetenv("TMPDIR");
}

static void test_trusted_modes(void)
{
    char *d = mk("ok", 0755), *problem = (char *)1;
    struct cdd_fixes fx = {0};
    CHECK_INT(cdd_lib_dir_trust(d, 1, &problem, &fx), 0);
    CHECK(problem == NULL);
    CHECK_INT(fx.n, 0);
    free(d);
}

static void test_other_writable(void)
{
    char *d = mk("world", 0777), *problem = NULL;
    struct cdd_fixes fx = {0};
    CHECK_INT(cdd_lib_dir_trust(d, 1, &problem, &fx), 0);
    CHECK(problem && strstr(problem, "writable by every account"));
    CHECK(problem && strstr(problem, "0777"));
    CHECK(fix_has(&fx, "chmod", d));
    CHECK(fix_has(&fx, "chmod", "o-w") || fix_has(&fx, "chmod", "go-w"));
    CHECK(fx.n && fx.v[0].scope == CDD_FIX_SYSTEM);
    free(problem);
    cdd_fixes_clear(&fx);
    free(d);
}

static void test_sticky(void)
{
    /* Above a library, a sticky folder (/tmp) protects what it does not
     * own; as the library's own folder anyone may still add files. */
    char *d = mk("sticky", 01777), *problem = NULL;
    CHECK_INT(cdd_lib_dir_trust(d, 0, &problem, NULL), 0);
    CHECK(problem == NULL);
    CHECK_INT(cdd_lib_dir_trust(d, 1, &problem, NULL), 0);
    CHECK(problem != NULL);
    free(problem);
    free(d);
}

static void test_group_writable(void)
{
    char *d = mk("group", 0775), *problem = NULL;
    struct cdd_fixes fx = {0};
    /* A group that is not the caller's own (nor root's) is untrusted. */
    if (geteuid() == 0)
        CHECK(chown(d, (uid_t)-1, 4242) == 0);
    else if (getegid() == 0)
        goto out; /* cannot pick another group: nothing to show */
    CHECK_INT(cdd_lib_dir_trust(d, 1, &problem, &fx), 0);
    if (geteuid() == 0) {
        CHECK(problem && strstr(problem, "writable by group"));
        CHECK(problem && strstr(problem, "gid 4242"));
        CHECK(fix_has(&fx, "chmod", "g-w"));
    }
out:
    free(problem);
    cdd_fixes_clear(&fx);
    free(d);
}

static void test_foreign_owner(void)
{
    if (geteuid() != 0)
        return; /* only root can give a folder away */
    char *d = mk("alien", 0755), *problem = NULL;
    struct cdd_fixes fx = {0};
    CHECK(chown(d, 4243, 0) == 0);
    CHECK_INT(cdd_lib_dir_trust(d, 0, &problem, &fx), 0);
    CHECK(problem && strstr(problem, "uid 4243"));
    CHECK(fix_has(&fx, "chown", d));
    free(problem);
    cdd_fixes_clear(&fx);
    free(d);
}

static void test_missing(void)
{
    char *problem = NULL;
    CHECK_INT(cdd_lib_dir_trust("/nonexistent/cdd-libtrust", 1, &problem,
                                NULL), 0);
    CHECK(problem && strstr(problem, "cannot be examined"));
    free(problem);
}

static void setup(void)
{
    const char *t = getenv("CDD_TEST_TMP");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/libtrust.XXXXXX", t && *t ? t : "/tmp");
    base = strdup(mkdtemp(tmpl));
}

static void teardown(void)
{
    cdd_fs_remove_tree(base);
    free(base);
}

static void test_all(void)
{
    setup();
    test_private_dir();
    test_private_dir_tmpdir();
    test_trusted_modes();
    test_other_writable();
    test_sticky();
    test_group_writable();
    test_foreign_owner();
    test_missing();
    teardown();
}

TEST_MAIN(TEST(test_all))
