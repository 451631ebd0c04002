/* The compilation driver: the context behind the public API and the
 * pipeline that calls the stages in order. */
#ifndef TILE_DRIVER_H
#define TILE_DRIVER_H

#include "../frontend/sema.h"
#include "tile/tile.h"

struct tile_context {
  Arena results;          /* text handed to the caller; reset at each call */
  const char *error;      /* borrowed by tile_error() */
  const char *diagnostics;
  size_t memory_cap;      /* bytes one compilation may use */
};

/* Everything one compilation owns; released whole when it ends. */
typedef struct Compilation {
  tile_context *ctx;
  Arena arena;
  Guard guard;
  Diags diags;
  Source source;
} Compilation;

tile_status pipeline_run(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out);
extern const unsigned char tile_stdlib_source[];
extern const size_t tile_stdlib_size;

#endif
