/* What the simulator's files share (sim.c, sim_printf.c): not for tests. */
#ifndef TILE_SIM_INTERNAL_H
#define TILE_SIM_INTERNAL_H

#include "sim.h"

#include <stdio.h>

/* Appends n bytes to t (growing it); -1 when out of memory or past limit. */
int sim_text_append(SimText *t, const char *s, size_t n, size_t limit);

/* Formats CUDA's printf `format` with `args` packed as the PTX vprintf ABI
 * (each argument aligned to its size; char and short promoted to int,
 * float to double; %s and %p take 8-byte pointers) into out.  Returns the
 * number of arguments read, or -1 with a message in err for a conversion
 * CUDA does not support. */
int sim_format(const char *format, const void *args, SimText *out, char *err, size_t errsz);

#endif
