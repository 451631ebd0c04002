/* tilec run (run.c). */
#ifndef TILEC_RUN_H
#define TILEC_RUN_H

#include "tile/tile.h"

int tilec_run(int argc, char **argv);
/* A whole file, malloc'd and NUL-terminated; NULL if it cannot be read. */
char *tilec_read_file(const char *path, size_t *len);

#endif
