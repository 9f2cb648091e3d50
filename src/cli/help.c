/* --help: the tool's and each command's, written from the command table,
 * the option table and the error list (CDD_ERRORS), so that none of them is
 * typed twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdd/error.h"
#include "cli.h"

const char cdd_tool_description[] =
    "Installs NVIDIA cuDNN from its official archives into CUDA toolkit "
    "trees,\nchecked at every step, undoable, and verified.";

const char *cdd_exit_code_meaning(int exit_code)
{
    switch (exit_code) {
    case 0: return "success";
    case 1: return "a check found a problem (verify, doctor, status; install "
                   "whose verify failed)";
    case 2: return "usage error";
    case 3: return "rejected input";
    case 4: return "environment or I/O failure";
    }
    return NULL;
}

void cdd_option_synopsis(const struct cdd_option *o, char *buf, size_t len)
{
    char sh[8] = "    "; /* fixed: a short option */
    if (o->short_name)
        snprintf(sh, sizeof sh, "-%c, ", o->short_name);
    snprintf(buf, len, "%s--%s%s%s", sh, o->name, o->argname ? " " : "",
             o->argname ? o->argname : "");
}

/* text from column col on, words wrapped before column 80, continuation
 * lines indented to indent. */
static void wrap(const char *text, size_t col, size_t indent)
{
    const char *p = text;
    int first = 1;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (!first && col + 1 + w > 79) {
            printf("\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)w, p);
        col += w;
        first = 0;
        p += w;
        while (*p == ' ')
            p++;
    }
    putchar('\n');
}

static void print_option(const struct cdd_option *o)
{
    char left[64]; /* fixed: a synopsis from the option table */
    cdd_option_synopsis(o, left, sizeof left);
    /* A synopsis wider than its column ("--connect-timeout SECONDS") gets
     * the help on the next line, aligned with the others. */
    if (strlen(left) > 28) {
        printf("  %s\n%31s", left, "");
    } else {
        printf("  %-28s ", left);
    }
    wrap(o->help, 31, 31);
}

int cdd_error_is_test_only(int code)
{
    return code == CDD_E_FAULT; /* the fault hook's: -DCDD_FAULT_INJECTION */
}

/* Whether this binary can exit with code's row: the test-only rows only
 * where the hook is built in. */
static int row_shown(int code)
{
#ifdef CDD_FAULT_INJECTION
    (void)code;
    return 1;
#else
    return !cdd_error_is_test_only(code);
#endif
}

/* "rejected input: invalid manifest, archive …": the exit code's meaning,
 * then its error rows. Where the meaning is itself a row's message (2:
 * "usage error"), the others follow as alternatives ("usage error, or not
 * supported"), not as if they explained it. */
static void print_exit_code(int e)
{
    const char *meaning = cdd_exit_code_meaning(e);
    int is_row = 0, n_other = 0;
#define CDD_X_COUNT(name, exitc, msg)                                          \
    if (exitc == e && row_shown(CDD_E_##name)) {                               \
        if (strcmp(msg, meaning) == 0)                                         \
            is_row = 1;                                                        \
        else                                                                   \
            n_other++;                                                         \
    }
    CDD_ERRORS(CDD_X_COUNT)
#undef CDD_X_COUNT
    size_t len = strlen(meaning) + 1;
#define CDD_X_LEN(name, exitc, msg)                                            \
    if (exitc == e && row_shown(CDD_E_##name))                                 \
        len += strlen(msg) + 6;
    CDD_ERRORS(CDD_X_LEN)
#undef CDD_X_LEN
    char *line = malloc(len);
    if (!line) {
        printf("  %d  %s\n", e, meaning);
        return;
    }
    strcpy(line, meaning);
    const char *sep = is_row ? ", or " : ": ";
    if (e > 0 && n_other > 0) {
#define CDD_X_ADD(name, exitc, msg)                                            \
        if (exitc == e && row_shown(CDD_E_##name) &&                           \
            strcmp(msg, meaning) != 0) {                                       \
            strcat(line, sep);                                                 \
            strcat(line, msg);                                                 \
            sep = is_row ? ", or " : ", ";                                     \
        }
        CDD_ERRORS(CDD_X_ADD)
#undef CDD_X_ADD
    }
    printf("  %d  ", e);
    wrap(line, 5, 5);
    free(line);
}

static void print_exit_codes(void)
{
    printf("\nExit codes:\n");
    for (int e = 0; e <= CDD_EXIT_CODE_MAX; e++)
        print_exit_code(e);
}

static void print_globals(unsigned bit)
{
    printf("\nGlobal options (anywhere on the line):\n");
    for (size_t i = 0; i < cdd_option_count; i++)
        if ((cdd_options[i].commands & CMD_TOOL) &&
            (cdd_options[i].commands & bit))
            print_option(&cdd_options[i]);
}

void cdd_help_print(const struct cdd_command *cmd)
{
    if (cmd) {
        printf("Usage: cudnn-deploy %s %s\n\n%s\n\n%s\n\nOptions:\n",
               cmd->name, cmd->usage, cmd->summary, cmd->description);
        for (size_t i = 0; i < cdd_option_count; i++) {
            const struct cdd_option *o = &cdd_options[i];
            if ((o->commands & cmd->bit) && !(o->commands & CMD_TOOL))
                print_option(o);
        }
        print_globals(cmd->bit);
        print_exit_codes();
        return;
    }
    printf("Usage: cudnn-deploy [--json] [--quiet] <command> [options]\n\n"
           "%s\n\nCommands:\n", cdd_tool_description);
    for (size_t i = 0; i < cdd_command_count; i++)
        printf("  %-10s %s\n", cdd_commands[i].name, cdd_commands[i].summary);
    printf("  %-10s %s\n", "help", "this text, or 'help COMMAND': that "
           "command's options");
    printf("\nTargets (one of):\n");
    for (size_t i = 0; i < cdd_option_count; i++)
        if (cdd_option_is_target(&cdd_options[i]))
            print_option(&cdd_options[i]);
    print_globals(CMD_TOOL);
    print_exit_codes();
}
