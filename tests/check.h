// Minimal test helpers: each CHECK prints the values that differed and counts a
// failure; a test's main returns test_exit_code() so ctest sees any failure.
#ifndef TRAINER_TESTS_CHECK_H
#define TRAINER_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int test_failures = 0;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            test_failures++;                                                   \
        }                                                                      \
    } while (0)

#define CHECK_INT_EQ(a, b)                                                     \
    do {                                                                       \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);        \
        if (check_a_ != check_b_) {                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n",  \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_);           \
            test_failures++;                                                   \
        }                                                                      \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                  \
    do {                                                                       \
        double check_a_ = (double)(a), check_b_ = (double)(b);                 \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s ~ %s (%.9g vs %.9g, tol %g)\n", \
                    __FILE__, __LINE__, #a, #b, check_a_, check_b_, (double)(tol)); \
            test_failures++;                                                   \
        }                                                                      \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                       \
    do {                                                                       \
        const char *check_h_ = (haystack), *check_n_ = (needle);               \
        if (!check_h_ || !strstr(check_h_, check_n_)) {                        \
            fprintf(stderr, "%s:%d: CHECK failed: \"%s\" does not contain \"%s\"\n", \
                    __FILE__, __LINE__, check_h_ ? check_h_ : "(null)", check_n_); \
            test_failures++;                                                   \
        }                                                                      \
    } while (0)

static inline int test_exit_code(const char *name) {
    if (test_failures) fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
    else fprintf(stderr, "%s: all checks passed\n", name);
    return test_failures ? 1 : 0;
}

#endif
