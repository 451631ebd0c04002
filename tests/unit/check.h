/* A minimal test harness: CHECK records a failure with its place and goes
 * on; the run ends with the plain "N passed, N failed" line. */
#ifndef TILE_TEST_CHECK_H
#define TILE_TEST_CHECK_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
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

/* How many names in dir contain `part`. */
static inline int check_count_files(const char *dir, const char *part) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, part) != NULL;
  if (d) closedir(d);
  return n;
}

/* The file at dir/name (up to 1 MiB), NUL-terminated, malloc'd; NULL if it cannot be read. */
static inline char *check_read_file(const char *dir, const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  char *s = f ? malloc(1 << 20) : NULL;
  *len = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
  if (s) s[*len] = 0;
  if (f) fclose(f);
  return s;
}

static int check_report(void) {
  printf("%d passed, %d failed\n", checks_passed, checks_failed);
  return checks_failed != 0;
}

#endif
