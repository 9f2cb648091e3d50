/* The hints under the first errors users meet (src/cli/hints.c): each one
 * given for its error and command line, and none where it would mislead. */
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cli.h"
#include "cmds.h"
#include "test.h"

static char *last; /* the last hint, freed by the next call */

static const char *hint_for(const char *cmd, struct cdd_cmdline *cl, int code)
{
    free(last);
    last = cdd_cli_hint(cl, cdd_command_find(cmd), code);
    return last;
}

static void test_default_manifest_pin(void)
{
    struct cdd_cmdline cl;
    cdd_cmdline_init(&cl);
    cl.obtain.archive = "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz";
    cdd_fail(CDD_E_CHECKSUM, cl.obtain.archive, 0, "sha256 ab does not match "
             "builtin:cudnn-8.5.0.96-cuda11-linux-x86_64's pin cd");
    const char *h = hint_for("install", &cl, CDD_E_CHECKSUM);
    CHECK(h && strstr(h, "--manifest") && strstr(h, "manifest create"));
    /* Entries that do not match the default manifest: the same advice. */
    cdd_fail(CDD_E_ARCHIVE, cl.obtain.archive, 0, "unexpected entry");
    CHECK(hint_for("fetch", &cl, CDD_E_ARCHIVE) != NULL);
    /* The user chose the manifest: their archive is what is wrong. */
    cl.obtain.manifest = "mine.json";
    cdd_fail(CDD_E_CHECKSUM, cl.obtain.archive, 0, "sha256 differs");
    CHECK(hint_for("install", &cl, CDD_E_CHECKSUM) == NULL);
    /* Other commands never obtain an archive. */
    cl.obtain.manifest = NULL;
    CHECK(hint_for("verify", &cl, CDD_E_CHECKSUM) == NULL);
}

static void test_missing_tree(void)
{
    struct cdd_cmdline cl;
    cdd_cmdline_init(&cl);
    cl.target.spec.cuda = "v11.6";
    cdd_fail(CDD_E_NOTFOUND, "/usr/local/cuda-11.6", 0,
             "CUDA v11.6 not found: CUDA_PATH_V11_6 is not set and this "
             "folder does not exist (use --cuda-root DIR)");
    const char *h = hint_for("status", &cl, CDD_E_NOTFOUND);
    CHECK(h && strstr(h, "CUDA v11.6 is installed elsewhere") &&
          strstr(h, "--cuda-root DIR") && strstr(h, "doctor"));
    cdd_cmdline_init(&cl);
    cl.target.spec.cuda_root = "/opt/cuda-11.6";
    cdd_fail(CDD_E_NOTFOUND, "/opt/cuda-11.6", 0,
             "target folder does not exist (from --cuda-root)");
    h = hint_for("install", &cl, CDD_E_NOTFOUND);
    CHECK(h && strstr(h, "--prefix DIR"));
    /* Some other file not found (a manifest): no tree hint. */
    cdd_fail(CDD_E_NOTFOUND, "m.json", 2, "cannot open");
    CHECK(hint_for("install", &cl, CDD_E_NOTFOUND) == NULL);
}

static void test_program_files_needs_elevation(void)
{
    struct cdd_cmdline cl;
    cdd_cmdline_init(&cl);
    cl.target.spec.cuda = "v11.6";
    cdd_fail(CDD_E_PERM,
             "C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.6/bin/"
             "cudnn64_8.dll", 5, "cannot replace the file");
    const char *h = hint_for("install", &cl, CDD_E_PERM);
    CHECK(h && strstr(h, "elevated prompt") && strstr(h, "Run as administrator"));
    /* The message already says it: not twice. */
    cdd_fail(CDD_E_PERM, "C:/PROGRAM FILES/x", 5,
             "access denied: run from an elevated prompt");
    CHECK(hint_for("install", &cl, CDD_E_PERM) == NULL);
    /* Permission denied elsewhere: nothing about Program Files. */
    cdd_fail(CDD_E_PERM, "/usr/local/cuda-11.6/lib64", 13, "read-only");
    CHECK(hint_for("install", &cl, CDD_E_PERM) == NULL);
}

TEST_MAIN(TEST(test_default_manifest_pin), TEST(test_missing_tree),
          TEST(test_program_files_needs_elevation))
