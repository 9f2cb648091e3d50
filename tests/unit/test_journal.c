/* Unit tests of the journal format (journal.c): a plan written and read back
 * is the same plan; every malformed record, path outside the tree, source
 * outside the state folder, and wrong or missing backup record is refused
 * with CDD_E_STATE naming the journal, the line and the record. Pure
 * parsing: runs on every platform (under Wine too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cdd/journal.h"
#include "cdd/state.h"
#include "test.h"

#define SHA_A "14e78a26f30ad05810aee663185e2740f1d2dcc93e4497770e2414c6a0f39654"
#define HEAD "cudnn-deploy-journal 2 T-1 install keep-backup\n"
#define STAGE ".cudnn-deploy/stage-T-1/"

static int parse(const char *text, struct cdd_journal *j)
{
    char *copy = strdup(text);
    int r = cdd_journal_parse("tree/.cudnn-deploy/journal", copy, j);
    free(copy);
    return r;
}

static void test_round_trip(void)
{
    struct cdd_journal j = {0}, k = {0};
    struct cdd_jprev f = {CDD_FT_FILE, 11, {0}, NULL};
    struct cdd_jprev l = {CDD_FT_SYMLINK, 0, {0}, (char *)"libcudnn.so.8.5.0"};
    char *text = NULL;
    CHECK_INT(cdd_hex_decode(SHA_A, f.sha256, CDD_SHA256_LEN), 0);
    j.id = strdup("T-1");
    j.kind = strdup("install");
    CHECK_INT(cdd_journal_add_mdir(&j, "lib64"), 0);
    CHECK_INT(cdd_journal_add_mdir(&j, "lib64"), 0); /* once */
    CHECK_INT(cdd_journal_push(&j, 'P', STAGE "bin/a.dll", "bin/a.dll", &f), 0);
    CHECK_INT(cdd_journal_push(&j, 'P', STAGE "lib64/x", "lib64/x", NULL), 0);
    CHECK_INT(cdd_journal_push(&j, 'D', NULL, "lib64/libcudnn.so.8", &l), 0);
    CHECK_INT(cdd_journal_push(&j, 'R', NULL, "lib64/old", NULL), 0);
    CHECK_INT(cdd_journal_push(&j, 'D', NULL, "gone", &f), 0);
    j.ops[4].journaled = 0; /* not part of the plan: not written */
    CHECK_INT(cdd_journal_format(&j, &text, NULL), 0);
    CHECK_STR(text, HEAD "M\tlib64\n"
                         "P\t" STAGE "bin/a.dll\tbin/a.dll\tf:11:" SHA_A "\n"
                         "P\t" STAGE "lib64/x\tlib64/x\n"
                         "D\tlib64/libcudnn.so.8\tl:libcudnn.so.8.5.0\n"
                         "R\tlib64/old\n"
                         "E\n");
    CHECK_INT(parse(text, &k), 0);
    CHECK(k.acted && !k.committed && !k.purge);
    CHECK_STR(k.id, "T-1");
    CHECK_INT(k.n_mdirs, 1);
    CHECK_INT(k.nops, 4);
    CHECK(k.ops[0].has_prev && k.ops[0].prev.type == CDD_FT_FILE &&
          k.ops[0].prev.size == 11 &&
          memcmp(k.ops[0].prev.sha256, f.sha256, CDD_SHA256_LEN) == 0);
    CHECK(!k.ops[1].has_prev);
    CHECK(k.ops[2].prev.type == CDD_FT_SYMLINK);
    /* Each record knows its line, for the messages of recovery's checks;
     * queued ones have none. */
    CHECK_INT(k.mdir_lines[0], 2);
    CHECK_INT(k.ops[0].line, 3);
    CHECK_INT(k.ops[3].line, 6);
    CHECK_INT(j.ops[0].line, 0);
    CHECK_INT(j.mdir_lines[0], 0);
    CHECK_STR(k.ops[2].prev.target, "libcudnn.so.8.5.0");
    CHECK(k.ops[3].type == 'R');
    cdd_journal_clear(&k);
    /* With the commit record. */
    size_t n = strlen(text);
    char *c = malloc(n + 3);
    memcpy(c, text, n);
    memcpy(c + n, "C\n", 3);
    CHECK_INT(parse(c, &k), 0);
    CHECK(k.committed);
    cdd_journal_clear(&k);
    /* Without the end line: never acted on, records not even read. */
    CHECK_INT(parse(HEAD "P\t" STAGE "a\ta\n", &k), 0);
    CHECK(!k.acted && k.nops == 0);
    cdd_journal_clear(&k);
    free(c);
    free(text);
    cdd_journal_clear(&j); /* push copied every prev, link targets too */

    /* A link target that cannot go on a line is refused before writing. */
    struct cdd_jprev bad = {CDD_FT_SYMLINK, 0, {0}, (char *)"a\tb"};
    j.id = strdup("T-1");
    j.kind = strdup("install");
    CHECK_INT(cdd_journal_push(&j, 'D', NULL, "x", &bad), 0);
    CHECK_INT(cdd_journal_format(&j, &text, NULL), CDD_E_TARGET);
    cdd_journal_clear(&j);
}

static const char *const bad_journals[] = {
    /* headers */
    "",
    "garbage\n",
    "cudnn-deploy-journal 1 T-1 install keep-backup\nE\n", /* old version */
    "cudnn-deploy-journal 3 T-1 install keep-backup\nE\n",
    "cudnn-deploy-journal 2 ../x install keep-backup\nE\n",
    "cudnn-deploy-journal 2 T-1 INSTALL keep-backup\nE\n",
    "cudnn-deploy-journal 2 T-1 install maybe\nE\n",
    "cudnn-deploy-journal 2 T-1 install keep-backup extra\nE\n",
    /* malformed records */
    HEAD "Q\tx\nE\n",
    HEAD "P\n" "E\n",
    HEAD "Px\tb\nE\n",
    HEAD "E\nD\tx\tf:1:" SHA_A "\n",  /* after the end line */
    HEAD "E\nC\nC\n",
    HEAD "C\nE\n",
    HEAD "E\nE\n",
    HEAD "M\ta\tb\nE\n",
    HEAD "\nD\tx\tf:1:" SHA_A "\nE\n", /* empty line */
    /* paths outside the tree, or not of the shape install writes */
    HEAD "D\t/etc/passwd\tf:1:" SHA_A "\nE\n",
    HEAD "D\t../x\tf:1:" SHA_A "\nE\n",
    HEAD "D\ta/../../x\tf:1:" SHA_A "\nE\n",
    HEAD "D\tC:/Windows/x\tf:1:" SHA_A "\nE\n",
    HEAD "D\ta\\b\tf:1:" SHA_A "\nE\n",
    HEAD "D\tbin/CON\tf:1:" SHA_A "\nE\n",
    HEAD "D\ta//b\tf:1:" SHA_A "\nE\n",
    HEAD "D\ta/./b\tf:1:" SHA_A "\nE\n",
    HEAD "D\ta\x1b[2Jb\tf:1:" SHA_A "\nE\n",
    HEAD "D\t.cudnn-deploy/lock\tf:1:" SHA_A "\nE\n",
    HEAD "D\t.CUDNN-DEPLOY/journal\tf:1:" SHA_A "\nE\n",
    HEAD "M\t.cudnn-deploy/x\nE\n",
    HEAD "M\t../up\nE\n",
    HEAD "R\t.cudnn-deploy\nE\n",
    HEAD "R\t/tmp\nE\n",
    HEAD "P\t" STAGE "a\t../../a\nE\n",
    HEAD "P\t" STAGE "a\t.cudnn-deploy/backup/x\nE\n",
    /* sources outside the state folder */
    HEAD "P\t/etc/passwd\tx\nE\n",
    HEAD "P\tbin/a.dll\tx\nE\n",
    HEAD "P\t.cudnn-deploy/receipt.json\tx\nE\n",
    HEAD "P\t.cudnn-deploy/stage-OTHER/a\ta\nE\n",   /* another's stage */
    HEAD "P\t.cudnn-deploy/backup/T-1/a\ta\nE\n",   /* its own backup */
    HEAD "P\t.cudnn-deploy/backup/x\tx\nE\n",       /* no id folder */
    HEAD "P\t.cudnn-deploy/stage-T-1/../../x\tx\nE\n",
    /* backup records of the wrong type or shape */
    HEAD "D\tx\nE\n",                       /* a delete must say what it was */
    HEAD "D\tx\td:1:" SHA_A "\nE\n",
    HEAD "D\tx\tf:1\nE\n",
    HEAD "D\tx\tf::" SHA_A "\nE\n",
    HEAD "D\tx\tf:-1:" SHA_A "\nE\n",
    HEAD "D\tx\tf:1:" "abc" "\nE\n",
    HEAD "D\tx\tf:1:" SHA_A "00\nE\n",
    HEAD "D\tx\tf:99999999999999999999999:" SHA_A "\nE\n",
    HEAD "D\tx\tl:\nE\n",
    HEAD "P\t" STAGE "a\ta\tf:1:" SHA_A "\textra\nE\n",
    HEAD "P\t" STAGE "a\ta\tz:1\nE\n",
};

static void test_refusals(void)
{
    for (size_t i = 0; i < sizeof bad_journals / sizeof bad_journals[0]; i++) {
        struct cdd_journal j = {0};
        int r = parse(bad_journals[i], &j);
        CHECK_MSG(r == CDD_E_STATE, "journal %zu: %s", i, cdd_err_name(r));
        if (r == CDD_E_STATE) {
            const struct cdd_errinfo *e = cdd_last_error();
            CHECK_MSG(strstr(e->path, "journal") != NULL, "journal %zu: %s",
                      i, e->path);
            CHECK_MSG(strstr(e->msg, "line ") != NULL, "journal %zu: %s", i,
                      e->msg);
            /* One line, whatever the record held. */
            CHECK_MSG(strchr(e->msg, '\n') == NULL && strchr(e->msg, 0x1b) ==
                                                          NULL,
                      "journal %zu: raw control character in the message", i);
        }
        cdd_journal_clear(&j);
    }
}

static void test_rules(void)
{
    CHECK(cdd_jdest_ok("bin/cudnn64_8.dll"));
    CHECK(cdd_jdest_ok(CDD_RECEIPT_FILE));
    CHECK(cdd_jdest_ok(CDD_MANIFEST_COPY));
    CHECK(!cdd_jdest_ok(CDD_JOURNAL_FILE));
    CHECK(!cdd_jdest_ok(".Cudnn-Deploy/receipt.json"));
    CHECK(cdd_jsrc_ok(".cudnn-deploy/stage-T-1/bin/x", "T-1"));
    CHECK(!cdd_jsrc_ok(".cudnn-deploy/stage-T-10/bin/x", "T-1"));
    CHECK(cdd_jsrc_ok(".cudnn-deploy/backup/T-0/bin/x", "T-1"));
    CHECK(!cdd_jsrc_ok(".cudnn-deploy/backup/T-1/bin/x", "T-1"));
    CHECK(!cdd_jsrc_ok(".cudnn-deploy/backup//x", "T-1"));
    CHECK(cdd_jdir_ok("lib/x64"));
    CHECK(!cdd_jdir_ok(CDD_STATE_DIR));
    CHECK(cdd_jid_ok("20260101T000000Z-42-2"));
    CHECK(!cdd_jid_ok("a/b"));
    CHECK(!cdd_jid_ok(""));
    CHECK(!cdd_jkind_ok("in stall"));
}

TEST_MAIN(TEST(test_round_trip), TEST(test_refusals), TEST(test_rules))
