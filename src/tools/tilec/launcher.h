/* tilec pack --launcher STEM: C that ships a bundle (see launcher.c). */
#ifndef TILEC_LAUNCHER_H
#define TILEC_LAUNCHER_H

#include <stddef.h>

/* Writes STEM.h and STEM.c for the bundle's kernel, whose parameters the
 * metadata JSON of one of its specialisations gives; `grid` is the launch
 * grid as an expression (NULL: the launch function takes a grid).  0, or 1
 * with the reason on stderr. */
int launcher_write(const char *stem, const char *source_path, const char *metadata, const char *grid,
                   const void *bundle, size_t size);

#endif
