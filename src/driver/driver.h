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

/* What the GPU half of the pipeline made; text and bytes live in the
 * compilation's arena.  Later stages are NULL when not reached. */
typedef struct GpuArtifacts {
  struct TirFunc *f;         /* GPU-layout IR */
  const char *arch;          /* the target it was made for: "sm_90a", "sim" */
  const char *tgir;          /* GPU-layout IR as text */
  const char *llir;          /* LLVM IR as lowered */
  const char *ptx;
  size_t ptx_len;
  const unsigned char *cubin;
  size_t cubin_size;
  const char *ptxas_log;     /* ptxas -v: registers, shared memory, spills */
  int shared_bytes;          /* dynamic shared memory per program */
  const char *dump;          /* with opts->print_after_all: the IR after each pass and step */
} GpuArtifacts;

/* Source to GPU code, up to stage `last`: TILE_STAGE_TGIR, TILE_STAGE_LLIR,
 * TILE_STAGE_PTX, or TILE_STAGE_METADATA for the cubin as well (ptxas
 * `ptxas_path`, NULL: located as ptxas.h says).  opts->arch NULL means
 * sm_90; the API resolves "the GPU present" before calling. */
tile_status pipeline_gpu(Compilation *c, const tile_options *opts, tile_stage last, const char *ptxas_path,
                         GpuArtifacts *out);
/* Source to optimised tile IR (the IR after each pass into dump, if any); NULL after errors. */
struct TirFunc *pipeline_tir(Compilation *c, const tile_options *opts, Buf *dump);
/* Starts and ends a compilation owned by ctx (context.c). */
Compilation *compilation_begin(tile_context *ctx, const char *name, const char *source, size_t len);
void compilation_end(Compilation *c);
/* Copies the compilation's diagnostics into ctx (tile_diagnostics, tile_error). */
void keep_diagnostics(tile_context *ctx, Compilation *c, tile_status s);
tile_status context_fail(tile_context *ctx, tile_status s, const char *message);
extern const unsigned char tile_stdlib_source[];
extern const size_t tile_stdlib_size;

#endif
