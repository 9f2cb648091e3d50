/* --help: the tool's and each command's, written from the command table,
 * the option table and the error list (CDD_ERRORS), so that none of them is
 * typed twice. */
#include <stdio.h>
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
    char sh[8] = "    ";
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
    char left[64];
    cdd_option_synopsis(o, left, sizeof left);
    printf("  %-28s ", left);
    wrap(o->help, 31, 31);
}

static void print_exit_codes(void)
{
    printf("\nExit codes:\n");
    for (int e = 0; e <= CDD_EXIT_CODE_MAX; e++) {
        char line[1024];
        size_t n = (size_t)snprintf(line, sizeof line, "%s",
                                    cdd_exit_code_meaning(e));
        const char *sep = ": ";
#define CDD_X_EXIT(name, exitc, msg)                                           \
        if (exitc == e && e > 0 && n < sizeof line &&                      \
            strcmp(msg, cdd_exit_code_meaning(e)) != 0) {                      \
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s", sep,     \
                                  msg);                                        \
            sep = ", ";                                                        \
        }
        CDD_ERRORS(CDD_X_EXIT)
#undef CDD_X_EXIT
        printf("  %d  ", e);
        wrap(line, 5, 5);
    }
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
