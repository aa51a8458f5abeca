/* check.h - the unit tests' assertion: CHECK(x) counts a check and reports
 * a failing one with its place; check_report() prints the closing
 * "N passed, M failed" line and returns the exit status. */
#ifndef SHOAL_TEST_CHECK_H
#define SHOAL_TEST_CHECK_H
#include <stdio.h>

static int failures, checks;
#define CHECK(x)                                                                                                       \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(x)) {                                                                                                    \
            failures++;                                                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #x);                                      \
        }                                                                                                              \
    } while (0)

static inline int check_report(void) {
    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
#endif
