/* A minimal test harness: CHECK records a failure with its place and goes
 * on; the run ends with the plain "N passed, N failed" line. */
#ifndef TILE_TEST_CHECK_H
#define TILE_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

static int checks_passed, checks_failed;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      checks_passed++;                                                         \
    } else {                                                                   \
      checks_failed++;                                                         \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_CONTAINS(haystack, needle)                                       \
  do {                                                                         \
    const char *h_ = (haystack), *n_ = (needle);                               \
    if (h_ && strstr(h_, n_)) {                                                \
      checks_passed++;                                                         \
    } else {                                                                   \
      checks_failed++;                                                         \
      fprintf(stderr, "%s:%d: expected to find \"%s\" in:\n%s\n", __FILE__,   \
              __LINE__, n_, h_ ? h_ : "(null)");                               \
    }                                                                          \
  } while (0)

static int check_report(void) {
  printf("%d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed != 0;
}

#endif
