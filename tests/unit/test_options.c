/* The command line's option table (src/cli/options.c): each type parsed
 * and refused as documented (usage errors, exit 2, one line naming the
 * option), each option accepted by its commands only, and the table itself
 * consistent (documented, no duplicates, fields in range). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cdd/error.h"
#include "cli.h"
#include "test.h"

static const struct cdd_command *command(const char *name)
{
    for (size_t i = 0; i < cdd_command_count; i++)
        if (strcmp(cdd_commands[i].name, name) == 0)
            return &cdd_commands[i];
    return NULL;
}

/* Parse the words of a command line after the command name (NULL-ended). */
static int parse_v(const char *cmd, struct cdd_cmdline *cl,
                   const char *const *words)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"cudnn-deploy";
    argv[argc++] = (char *)cmd;
    for (; *words && argc < 31; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    cdd_cmdline_init(cl);
    cdd_clear_error();
    return cdd_cmdline_parse(command(cmd), argc, argv, 2, cl, NULL);
}

#define PARSE(cmd, cl, ...)                                                    \
    parse_v(cmd, cl, (const char *const[]){__VA_ARGS__, NULL})

/* A usage error whose message holds want. */
#define CHECK_USAGE(r, want)                                                   \
    do {                                                                       \
        CHECK_INT(r, CDD_E_USAGE);                                             \
        CHECK_INT(cdd_err_exit_code(r), 2);                                    \
        CHECK_MSG(strstr(cdd_last_error()->msg, want) != NULL,                 \
                  "message '%s' lacks '%s'", cdd_last_error()->msg, want);     \
        CHECK(strchr(cdd_last_error()->msg, '\n') == NULL);                    \
    } while (0)

static void test_flags_and_strings(void)
{
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("install", &cl, "--dry-run", "-f", "--cuda-root", "/t",
                    "--archive=a.zip", "-m", "m.json", "--no-verify",
                    "--check-tree"),
              0);
    CHECK(cl.change.dry_run && cl.change.force && cl.change.no_verify &&
          cl.change.check_tree);
    CHECK_STR(cl.target.spec.cuda_root, "/t");
    CHECK_STR(cl.obtain.archive, "a.zip");
    CHECK_STR(cl.obtain.manifest, "m.json");
    CHECK(!cl.change.check && !cl.obtain.allow_unpinned);

    CHECK_USAGE(PARSE("install", &cl, "--dry-run=yes"), "takes no value");
    CHECK_USAGE(PARSE("install", &cl, "--archive"), "needs a value (FILE)");
    CHECK_USAGE(PARSE("install", &cl, "--archive="), "--archive needs a value");
    CHECK_USAGE(PARSE("install", &cl, "--archive", ""), "needs a value");
    CHECK_USAGE(PARSE("install", &cl, "-nf"), "one short option at a time");
    CHECK_USAGE(PARSE("install", &cl, "--frobnicate"),
                "unknown option '--frobnicate'");
    CHECK_USAGE(PARSE("install", &cl, "-z"), "unknown option '-z'");
}

static void test_numbers(void)
{
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("install", &cl, "--jobs", "8", "--retries", "0",
                    "--connect-timeout", "5", "--low-speed-limit", "100",
                    "--low-speed-time", "9"),
              0);
    CHECK_INT(cl.change.jobs, 8);
    CHECK_INT(cl.obtain.retries, 0);
    CHECK_INT(cl.obtain.connect_timeout, 5);
    CHECK_INT(cl.obtain.low_speed_limit, 100);
    CHECK_INT(cl.obtain.low_speed_time, 9);
    CHECK_INT(PARSE("install", &cl, "-j", "1024"), 0);
    CHECK_INT(cl.change.jobs, 1024);
    CHECK_INT(PARSE("status", &cl, "--check"), 0);
    CHECK_INT(cl.obtain.retries, -1); /* the default: not given */
    CHECK_INT(cl.change.jobs, 0);

    CHECK_USAGE(PARSE("install", &cl, "--jobs", "0"), "--jobs 0: not a valid");
    CHECK_USAGE(PARSE("install", &cl, "--jobs", "1025"), "not a valid number");
    CHECK_USAGE(PARSE("install", &cl, "--jobs", "2.5"),
                "--jobs 2.5: expected a whole number");
    CHECK_USAGE(PARSE("install", &cl, "--jobs", "four"), "not a valid number");
    CHECK_USAGE(PARSE("install", &cl, "--jobs", "4x"), "not a valid number");
    CHECK_USAGE(PARSE("install", &cl, "--retries", "101"), "--retries 101");
    CHECK_USAGE(PARSE("install", &cl, "--retries", "-1"), "--retries -1");
    CHECK_USAGE(PARSE("manifest", &cl, "--cuda-major", "100"),
                "--cuda-major 100");
    CHECK_USAGE(PARSE("install", &cl, "--connect-timeout", "nan"),
                "not a valid number");
}

static void test_seconds(void)
{
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("uninstall", &cl, "--lock-timeout", "2.5"), 0);
    CHECK(cl.target.lock_timeout == 2.5);
    CHECK_INT(PARSE("recover", &cl, "--lock-timeout=0"), 0);
    CHECK(cl.target.lock_timeout == 0);
    CHECK_USAGE(PARSE("install", &cl, "--lock-timeout", "soon"),
                "--lock-timeout soon: not a valid number");
    CHECK_USAGE(PARSE("install", &cl, "--lock-timeout", "-1"),
                "not a valid number");
    CHECK_USAGE(PARSE("install", &cl, "--lock-timeout", "1e8"),
                "not a valid number");
}

static void test_level_is_an_enum(void)
{
    static const struct {
        const char *word;
        enum cdd_vlevel level;
    } cases[] = {{"files", CDD_LEVEL_FILES}, {"load", CDD_LEVEL_LOAD},
                 {"gpu", CDD_LEVEL_GPU}, {"bench", CDD_LEVEL_BENCH}};
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("verify", &cl, "--cuda-root", "/t"), 0);
    CHECK(!cl.verify.level_given);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_INT(PARSE("verify", &cl, "--level", cases[i].word), 0);
        CHECK(cl.verify.level_given);
        CHECK_INT(cl.verify.level, cases[i].level);
        CHECK_STR(cdd_opt_value_name(cdd_level_values, (int)cases[i].level),
                  cases[i].word);
    }
    CHECK_USAGE(PARSE("verify", &cl, "--level", "deep"),
                "--level deep: expected files, load, gpu or bench");
    CHECK_USAGE(PARSE("verify", &cl, "--level", "GPU"), "--level GPU");
}

static void test_sha256_decoded_once(void)
{
    struct cdd_cmdline cl;
    char hex[65];
    for (int i = 0; i < 64; i++)
        hex[i] = "0123456789abcdefABCDEF"[i % 22];
    hex[64] = '\0';
    CHECK_INT(PARSE("fetch", &cl, "--sha256", hex), 0);
    CHECK(cl.obtain.has_sha256);
    CHECK_INT(cl.obtain.sha256[0], 0x01);
    CHECK_INT(cl.obtain.sha256[5], 0xab);
    CHECK_INT(cl.obtain.sha256[31], 0xcd); /* digits 62, 63: C, D */
    CHECK_INT(PARSE("fetch", &cl, "--allow-unpinned"), 0);
    CHECK(!cl.obtain.has_sha256);

    CHECK_USAGE(PARSE("install", &cl, "--sha256", "not-hex"),
                "--sha256 not-hex: expected 64 hex digits");
    hex[63] = '\0';
    CHECK_USAGE(PARSE("install", &cl, "--sha256", hex), "expected 64 hex");
    hex[63] = 'g';
    CHECK_USAGE(PARSE("install", &cl, "--sha256", hex), "expected 64 hex");
    CHECK(!cl.obtain.has_sha256);
}

static void test_cuda_and_versions(void)
{
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("status", &cl, "--cuda", "v11.6"), 0);
    CHECK_STR(cl.target.spec.cuda, "v11.6");
    CHECK_USAGE(PARSE("status", &cl, "--cuda", "banana"),
                "--cuda banana: expected a CUDA version like v11.6");
    CHECK_USAGE(PARSE("status", &cl, "--cuda", "v11.x"), "--cuda v11.x");

    CHECK_INT(PARSE("manifest", &cl, "create", "a.zip", "--version",
                    "8.5.0.96", "--cuda-major", "11", "-o", "m.json"),
              0);
    CHECK_STR(cl.create.version, "8.5.0.96");
    CHECK_INT(cl.create.cuda_major, 11);
    CHECK_STR(cl.create.output, "m.json");
    CHECK_INT(cl.n_positional, 2);
    CHECK_INT(PARSE("manifest", &cl, "--version", "9.1"), 0);
    const char *bad[] = {"8", "8.", ".5", "8.x.0", "8.5.0.96.1", "v8.5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = PARSE("manifest", &cl, "--version", bad[i]);
        CHECK_MSG(r == CDD_E_USAGE, "--version '%s' accepted", bad[i]);
    }
}

static void test_urls_repeat_up_to_a_bound(void)
{
    struct cdd_cmdline cl;
    CHECK_INT(PARSE("fetch", &cl, "--url", "https://a/", "--url=https://b/"),
              0);
    CHECK_INT(cl.obtain.n_urls, 2);
    CHECK_STR(cl.obtain.urls[0], "https://a/");
    CHECK_STR(cl.obtain.urls[1], "https://b/");
    const char *w[40];
    size_t n = 0;
    for (int i = 0; i < 17; i++) {
        w[n++] = "--url";
        w[n++] = "https://x/";
    }
    w[n] = NULL;
    char *argv[40];
    int argc = 0;
    argv[argc++] = (char *)"cudnn-deploy";
    for (size_t i = 0; i < n; i++)
        argv[argc++] = (char *)w[i];
    cdd_cmdline_init(&cl);
    int r = cdd_cmdline_parse(command("fetch"), argc, argv, 1, &cl, NULL);
    CHECK_USAGE(r, "too many --url options (at most 16)");
}

static void test_positionals(void)
{
    struct cdd_cmdline cl;
    CHECK_USAGE(PARSE("status", &cl, "--cuda-root", "/t", "extra"),
                "unexpected argument 'extra' for 'status'");
    CHECK_INT(PARSE("manifest", &cl, "show", "--", "-odd-name.json"), 0);
    CHECK_INT(cl.n_positional, 2);
    CHECK_STR(cl.positional[1], "-odd-name.json");
    CHECK_USAGE(PARSE("manifest", &cl, "show", "a", "b"),
                "unexpected argument 'b'");
    /* "-" alone is a word, not an option. */
    CHECK_INT(PARSE("manifest", &cl, "show", "-"), 0);
    CHECK_STR(cl.positional[1], "-");
}

static void test_global_options_before_the_command(void)
{
    struct cdd_cmdline cl;
    char *argv[] = {(char *)"cudnn-deploy", (char *)"--json", (char *)"-q",
                    (char *)"status", (char *)"--check", NULL};
    int next = -1;
    cdd_cmdline_init(&cl);
    CHECK_INT(cdd_cmdline_parse(NULL, 5, argv, 1, &cl, &next), 0);
    CHECK_INT(next, 3);
    CHECK(cl.out.json && cl.out.quiet && !cl.change.check);
    /* And after it. */
    CHECK_INT(PARSE("status", &cl, "--check", "--json", "--quiet"), 0);
    CHECK(cl.out.json && cl.out.quiet);

    /* --version: the tool's flag before the command, manifest create's
     * value after it. */
    char *v[] = {(char *)"cudnn-deploy", (char *)"--version", NULL};
    cdd_cmdline_init(&cl);
    CHECK_INT(cdd_cmdline_parse(NULL, 2, v, 1, &cl, &next), 0);
    CHECK(cl.out.version);
    CHECK_USAGE(PARSE("status", &cl, "--version"),
                "option '--version' does not apply to 'status'");

    char *bad[] = {(char *)"cudnn-deploy", (char *)"--archive", (char *)"a",
                   NULL};
    cdd_cmdline_init(&cl);
    CHECK_USAGE(cdd_cmdline_parse(NULL, 3, bad, 1, &cl, &next),
                "does not apply to 'cudnn-deploy'");
}

/* A value each type accepts. */
static const char *sample(const struct cdd_option *o, char *buf, size_t len)
{
    switch (o->type) {
    case CDD_OPT_FLAG: return NULL;
    case CDD_OPT_STRING:
    case CDD_OPT_FILE:
    case CDD_OPT_DIR:
    case CDD_OPT_LIST: return "x";
    case CDD_OPT_URL: return "https://example.com/a.zip";
    case CDD_OPT_NUMBER:
    case CDD_OPT_SECONDS: snprintf(buf, len, "%.0f", o->max); return buf;
    case CDD_OPT_ENUM: return o->values[0].name;
    case CDD_OPT_CUDA: return "v12.4";
    case CDD_OPT_VERSION: return "8.9.7.29";
    case CDD_OPT_SHA256:
        memset(buf, 'f', 64);
        buf[64] = '\0';
        return buf;
    }
    return NULL;
}

static void test_each_option_only_for_its_commands(void)
{
    for (size_t i = 0; i < cdd_option_count; i++) {
        const struct cdd_option *o = &cdd_options[i];
        if (o->commands == CMD_TOOL)
            continue; /* before the command only: test above */
        for (size_t c = 0; c < cdd_command_count; c++) {
            const struct cdd_command *cmd = &cdd_commands[c];
            char name[64], buf[80];
            struct cdd_cmdline cl;
            const char *v = sample(o, buf, sizeof buf);
            /* A name may have one entry per command group (bundle's
             * repeatable --manifest): test each entry where it applies. */
            int twin = 0;
            for (size_t k = 0; k < cdd_option_count; k++)
                twin |= k != i && strcmp(cdd_options[k].name, o->name) == 0 &&
                        (cdd_options[k].commands & cmd->bit);
            if (twin)
                continue;
            snprintf(name, sizeof name, "--%s", o->name);
            int r = v ? PARSE(cmd->name, &cl, name, v)
                      : PARSE(cmd->name, &cl, name);
            if (o->commands & cmd->bit) {
                CHECK_MSG(r == 0, "%s %s %s: %s", cmd->name, name,
                          v ? v : "", cdd_last_error()->msg);
            } else {
                CHECK_MSG(r == CDD_E_USAGE &&
                              strstr(cdd_last_error()->msg, "does not apply"),
                          "%s accepted by %s", name, cmd->name);
            }
            if (o->short_name) {
                char sh[3] = {'-', o->short_name, '\0'};
                r = v ? PARSE(cmd->name, &cl, sh, v) : PARSE(cmd->name, &cl, sh);
                CHECK_MSG(((o->commands & cmd->bit) != 0) == (r == 0),
                          "%s for %s: %d", sh, cmd->name, r);
            }
        }
    }
}

static void test_table_is_consistent(void)
{
    for (size_t i = 0; i < cdd_option_count; i++) {
        const struct cdd_option *o = &cdd_options[i];
        CHECK_MSG(o->help && *o->help && !strchr(o->help, '\n'),
                  "--%s: help missing or not one line", o->name);
        CHECK_MSG(o->name && strlen(o->name) > 1 &&
                      strspn(o->name, "abcdefghijklmnopqrstuvwxyz0123456789-") ==
                          strlen(o->name),
                  "option %zu: bad name", i);
        CHECK_MSG((o->type == CDD_OPT_FLAG) == (o->argname == NULL),
                  "--%s: an argument name exactly when it takes a value",
                  o->name);
        CHECK_MSG(o->commands & (CMD_EVERY | CMD_TOOL),
                  "--%s applies to nothing", o->name);
        CHECK_MSG(o->field < sizeof(struct cdd_cmdline), "--%s: field",
                  o->name);
        CHECK_MSG(o->given == CDD_NO_FIELD ||
                      o->given < sizeof(struct cdd_cmdline),
                  "--%s: given field", o->name);
        if (o->type == CDD_OPT_NUMBER || o->type == CDD_OPT_SECONDS)
            CHECK_MSG(o->min <= o->max, "--%s: bounds", o->name);
        if (o->type == CDD_OPT_ENUM)
            CHECK_MSG(o->values && o->values[0].name, "--%s: no values",
                      o->name);
        if (o->type == CDD_OPT_SHA256 || o->type == CDD_OPT_ENUM)
            CHECK_MSG(o->given != CDD_NO_FIELD,
                      "--%s: a value with no 'not given' needs a given field",
                      o->name);
        for (size_t j = i + 1; j < cdd_option_count; j++) {
            const struct cdd_option *p = &cdd_options[j];
            unsigned both = o->commands & p->commands;
            CHECK_MSG(!both || strcmp(o->name, p->name) != 0,
                      "--%s twice for the same command", o->name);
            CHECK_MSG(!both || !o->short_name ||
                          o->short_name != p->short_name,
                      "-%c twice for the same command", o->short_name);
            /* One option may have a row per command, for its help there
             * (--force): the same name, disjoint commands, one field. */
            CHECK_MSG(o->field != p->field ||
                          (!both && strcmp(o->name, p->name) == 0 &&
                           o->type == p->type),
                      "--%s and --%s write the same field", o->name, p->name);
        }
    }
    unsigned seen = 0;
    for (size_t c = 0; c < cdd_command_count; c++) {
        const struct cdd_command *cmd = &cdd_commands[c];
        CHECK_MSG(cmd->bit && (cmd->bit & CMD_EVERY) == cmd->bit &&
                      !(seen & cmd->bit),
                  "%s: its bit", cmd->name);
        seen |= cmd->bit;
        CHECK(cmd->usage && cmd->summary && *cmd->summary &&
              cmd->description && *cmd->description);
        CHECK_MSG(!cmd->subcommands || cmd->max_positional >= 1,
                  "%s: sub-commands need a positional", cmd->name);
    }
    CHECK_INT(seen, CMD_EVERY);
}

static void test_every_exit_code_is_documented(void)
{
#define CDD_X_DOC(name, exitc, msg)                                            \
    CHECK_MSG(exitc >= 0 && exitc <= CDD_EXIT_CODE_MAX &&                      \
                  cdd_exit_code_meaning(exitc) != NULL,                        \
              "CDD_E_%s: exit code %d undocumented", #name, exitc);
    CDD_ERRORS(CDD_X_DOC)
#undef CDD_X_DOC
    for (int e = 0; e <= CDD_EXIT_CODE_MAX; e++)
        CHECK(cdd_exit_code_meaning(e) != NULL);
    CHECK(cdd_exit_code_meaning(CDD_EXIT_CODE_MAX + 1) == NULL);
}

TEST_MAIN(TEST(test_flags_and_strings), TEST(test_numbers),
          TEST(test_seconds), TEST(test_level_is_an_enum),
          TEST(test_sha256_decoded_once), TEST(test_cuda_and_versions),
          TEST(test_urls_repeat_up_to_a_bound), TEST(test_positionals),
          TEST(test_global_options_before_the_command),
          TEST(test_each_option_only_for_its_commands),
          TEST(test_table_is_consistent),
          TEST(test_every_exit_code_is_documented))
