/* A very small unit-test harness: CHECK* macros record failures with file
 * and line, TEST_MAIN runs the listed functions (all of them, or those named
 * on the command line: `test_x case_a case_b`, `test_x --list`) and prints
 * the plain "N passed, N failed" line that CI reads. docs/testing.md. */
#ifndef CDD_TEST_H
#define CDD_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failed_checks;
static int t_cur_failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                    \
            t_cur_failed = 1;                                                  \
            t_failed_checks++;                                                 \
        }                                                                      \
    } while (0)

#define CHECK_MSG(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            t_cur_failed = 1;                                                  \
            t_failed_checks++;                                                 \
        }                                                                      \
    } while (0)

#define CHECK_INT(a, b)                                                        \
    do {                                                                       \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);                \
        if (t_a_ != t_b_) {                                                    \
            fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n",        \
                    __FILE__, __LINE__, #a, #b, t_a_, t_b_);                   \
            t_cur_failed = 1;                                                  \
            t_failed_checks++;                                                 \
        }                                                                      \
    } while (0)

#define CHECK_STR(a, b)                                                        \
    do {                                                                       \
        const char *t_a_ = (a), *t_b_ = (b);                                   \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0) {                       \
            fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n",    \
                    __FILE__, __LINE__, #a, #b, t_a_ ? t_a_ : "(null)",        \
                    t_b_ ? t_b_ : "(null)");                                   \
            t_cur_failed = 1;                                                  \
            t_failed_checks++;                                                 \
        }                                                                      \
    } while (0)

struct t_case {
    const char *name;
    void (*fn)(void);
};

#define TEST(fn) {#fn, fn}

/* Runs one case and prints its line ("ok   name" / "FAIL name"). */
static inline int t_run_one(const struct t_case *c)
{
    t_cur_failed = 0;
    c->fn();
    fprintf(stderr, "%s %s\n", t_cur_failed ? "FAIL" : "ok  ", c->name);
    return t_cur_failed;
}

static inline void t_list(FILE *out, const struct t_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s\n", cases[i].name);
}

/* No argument: every case, in the listed order. Arguments: only the named
 * cases, in the order given (a name may repeat). `--list` prints the names.
 * An unknown name runs nothing: it is a usage error (exit 2) that lists the
 * cases. The last line is always "N passed, N failed" (what CI reads). */
static inline int t_main(int argc, char **argv, const struct t_case *cases,
                         size_t n)
{
    int passed = 0, failed = 0, unknown = 0;
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        t_list(stdout, cases, n);
        return 0;
    }
    for (int a = 1; a < argc; a++) {
        size_t i = 0;
        while (i < n && strcmp(cases[i].name, argv[a]) != 0)
            i++;
        if (i == n) {
            fprintf(stderr, "%s: no case named '%s'\n", argv[0], argv[a]);
            unknown = 1;
        }
    }
    if (unknown) {
        fprintf(stderr, "the cases (run with no argument for all, or name some):\n");
        t_list(stderr, cases, n);
        return 2;
    }
    for (size_t k = 0; k < (argc > 1 ? (size_t)argc - 1 : n); k++) {
        size_t i = k;
        if (argc > 1)
            for (i = 0; strcmp(cases[i].name, argv[k + 1]) != 0; i++)
                ;
        if (t_run_one(&cases[i]))
            failed++;
        else
            passed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                         \
    int main(int argc, char **argv)                                            \
    {                                                                          \
        static const struct t_case cases[] = {__VA_ARGS__};                    \
        return t_main(argc, argv, cases, sizeof cases / sizeof cases[0]);      \
    }

#endif
