/* The public structs as tile.h declared them before struct_size (tile 0.1.0 as of commit 204ba95), and the
 * calls test_abi_old.c makes: what a program built against that header passes to today's library.  A
 * copy on purpose: it must not change when tile.h does. */
#ifndef TILE_OLD_H
#define TILE_OLD_H

#include <stddef.h>

typedef enum tile_status {
  TILE_OK = 0, TILE_ERROR_COMPILE, TILE_ERROR_ARGUMENT, TILE_ERROR_IO, TILE_ERROR_MEMORY, TILE_ERROR_UNSUPPORTED,
  TILE_ERROR_RUNTIME
} tile_status;

typedef enum tile_stage { TILE_STAGE_TOKENS, TILE_STAGE_AST } tile_stage; /* the first two of them */

typedef struct tile_options {
  const char *kernel;
  const char *signature;
  const char *const *defines;
  int num_defines;
  int config;
  int require_types;
  const char *passes;
  int print_after_all;
  int num_warps;
  int num_stages;
  const char *arch;
  const char *libdevice;
  int refill;
  int time_stages;
  int tma;
} tile_options;

typedef enum tile_arg_kind { TILE_ARG_BUFFER, TILE_ARG_INT, TILE_ARG_FLOAT } tile_arg_kind;

typedef struct tile_arg {
  tile_arg_kind kind;
  const char *dtype;
  void *data;
  size_t count;
  long long i;
  double f;
} tile_arg;

typedef struct tile_context tile_context;

tile_status tile_context_create(tile_context **out);
void tile_context_destroy(tile_context *ctx);
const char *tile_error(const tile_context *ctx);
tile_status tile_context_use_cpu(tile_context *ctx);
tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                      tile_stage stage, const char **text);
tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len,
                         const tile_options *opts, const unsigned grid[3], const tile_arg *args, int num_args,
                         const char **printed);

#endif
