/* The CPU interpreter: runs a tile IR function over a launch grid on host
 * buffers, a tile at a time, with the semantics the GPU code has (C integer
 * division, IEEE float rounding at each op's precision, masked lanes of a
 * load giving `other`).  Pointers are checked: an access outside the buffer
 * it came from stops the run with the kernel, line, program and index. */
#ifndef TILE_INTERP_H
#define TILE_INTERP_H

#include "../tir/tir.h"

typedef struct InterpBuffer {
  const char *name;      /* the parameter it is bound to, for messages */
  void *data;            /* host memory, elem-typed, C order */
  size_t bytes;
} InterpBuffer;

typedef struct InterpArg {
  int buffer;            /* index into buffers for a pointer parameter, else -1 */
  int64_t i;             /* integer parameter */
  double f;              /* float parameter */
} InterpArg;

/* The largest buffer a run can address: a pointer is the buffer's number
 * above a signed 44-bit byte offset (interp.c). */
#define INTERP_MAX_BUFFER_BYTES ((size_t)1 << 43)

typedef struct InterpLaunch {
  const TirFunc *f;
  int grid[3];
  InterpBuffer *buffers;
  int n_buffers;
  const InterpArg *args; /* one per f->params */
  Buf *output;           /* device_print text goes here; NULL: dropped */
  int64_t max_iterations;/* per loop; 0: 2^30 (a bound so a runaway loop ends) */
  double time_limit_s;   /* the run stops with an error, naming the loop it is in, after this long; 0: none */
  char error[512];       /* set when the run fails */
} InterpLaunch;

/* Returns 0, or -1 with launch->error set (also for a buffer of more than
 * INTERP_MAX_BUFFER_BYTES). */
int interp_run(InterpLaunch *launch);

#endif
