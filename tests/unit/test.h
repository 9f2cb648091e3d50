/* A very small unit-test harness: CHECK* macros record failures with file
 * and line, TEST_MAIN runs the listed functions and prints the plain
 * "N passed, N failed" line that CI reads. */
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

static inline int t_run(const struct t_case *cases, size_t n)
{
    int passed = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        t_cur_failed = 0;
        cases[i].fn();
        if (t_cur_failed) {
            failed++;
            fprintf(stderr, "FAIL %s\n", cases[i].name);
        } else {
            passed++;
            fprintf(stderr, "ok   %s\n", cases[i].name);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                         \
    int main(void)                                                             \
    {                                                                          \
        static const struct t_case cases[] = {__VA_ARGS__};                    \
        return t_run(cases, sizeof cases / sizeof cases[0]);                   \
    }

#endif
