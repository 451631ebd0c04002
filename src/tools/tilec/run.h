/* tilec run (run.c). */
#ifndef TILEC_RUN_H
#define TILEC_RUN_H

#include "tile/tile.h"

int tilec_run(int argc, char **argv);
typedef struct RunArgs RunArgs;
/* tilec run's command line (argv[1] is "run"), parsed without reading or
 * writing a file (tests/fuzz/fuzz_run_args.c); NULL, with the message on
 * stderr, when it is wrong. */
RunArgs *tilec_run_parse(int argc, char **argv);
void tilec_run_free(RunArgs *r);
/* A context, or NULL with why on stderr ("WHO: error: TILE_INTERPRET is 'maybe': ..."). */
tile_context *tilec_context(const char *who);
/* A whole file (at most 64 MiB), malloc'd and NUL-terminated; NULL, with
 * "cannot read 'PATH': why" on stderr, if it cannot be read. */
char *tilec_read_file(const char *path, size_t *len);
/* Whether two paths name one file: by (st_dev, st_ino), or for a file not
 * made yet by its folder's and its name. */
int tilec_same_file(const char *a, const char *b);
/* The option argv[i] is, from the NULL-terminated `options` that take a
 * value, when its value is missing or empty ("--kernel" last, "--kernel=",
 * "-D --"); NULL otherwise.  An empty value is a mistake, not a setting, but
 * for --signature, where "" is a kernel without run-time parameters. */
const char *tilec_missing_value(int argc, char **argv, int i, const char *const *options);
/* A decimal integer option's value from lo to hi into *out; 0 if it is not one. */
int tilec_integer(const char *v, long lo, long hi, int *out);
/* --fp-fusion's value, "on" or "off", into *out; 0 if it is neither. */
int tilec_fp_fusion(const char *value, tile_fp_fusion *out);

#endif
