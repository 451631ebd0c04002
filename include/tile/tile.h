/* tile: a Triton-style tile language compiler and runtime, in C.
 *
 * The API follows lua.h: one opaque context owns everything made through
 * it; every call that can fail returns a tile_status and leaves a message in
 * the context (clang-style diagnostics for compile errors); nothing is global,
 * so two contexts on two threads are independent; the library never prints,
 * exits or aborts.
 *
 * Ownership: what tile_*_create gives you, you release with the matching
 * destroy.  Strings the library returns are borrowed: they stay valid until
 * the next call on the same context or its destruction. */
#ifndef TILE_TILE_H
#define TILE_TILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TILE_API __attribute__((visibility("default")))
#else
#define TILE_API
#endif

#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 1
#define TILE_VERSION_PATCH 0

typedef enum tile_status {
  TILE_OK = 0,
  TILE_ERROR_COMPILE,    /* the kernel has errors; tile_error() has the diagnostics */
  TILE_ERROR_ARGUMENT,   /* a bad argument to the API (NULL, out of range) */
  TILE_ERROR_IO,         /* a file could not be read or written */
  TILE_ERROR_MEMORY,     /* out of memory, or a compilation over its memory cap */
  TILE_ERROR_UNSUPPORTED,/* asked for something this build cannot do yet */
  TILE_ERROR_RUNTIME     /* the kernel failed while running: an out-of-bounds access,
                            a failed device_assert; tile_error() says where */
} tile_status;

/* Which stage's text tile_emit produces. */
typedef enum tile_stage {
  TILE_STAGE_TOKENS,     /* the token stream, one token a line */
  TILE_STAGE_AST,        /* the syntax tree; typed and specialised when the kernel's
                            parameters have types (signature or annotations) */
  TILE_STAGE_TIR,        /* tile IR (docs/ir.md), after the optimisation passes */
  TILE_STAGE_AXIS_INFO,  /* the AxisInfo analysis of the optimised tile IR */
  TILE_STAGE_BUILTINS,   /* the builtin reference (markdown), from the builtin table */
  TILE_STAGE_OPS         /* the tile IR op reference (markdown), from the op table */
} tile_stage;

/* How a kernel is specialised.  Initialise with tile_options_init; the
 * strings are borrowed for the duration of the call. */
typedef struct tile_options {
  const char *kernel;        /* function to compile; NULL: the one no other function calls */
  const char *signature;     /* Triton AOT signature, "*fp32:16,*fp32,i32"; NULL: annotations */
  const char *const *defines;/* constexpr values, "NAME=VALUE" */
  int num_defines;
  int config;                /* index of an @autotune config to take constexprs from; -1: none */
  int require_types;         /* nonzero: untyped parameters are an error (always check) */
  const char *passes;        /* tile IR passes to run: "fold,cse,licm,dce", "none"; NULL: all */
  int print_after_all;       /* nonzero: the IR after each pass precedes the output */
} tile_options;

typedef struct tile_context tile_context;

TILE_API const char *tile_version(void);               /* "0.1.0" */
TILE_API const char *tile_build_info(void);            /* versions of LLVM and targets linked in */
TILE_API const char *tile_status_string(tile_status s);

TILE_API tile_status tile_context_create(tile_context **out);
TILE_API void tile_context_destroy(tile_context *ctx); /* NULL is fine */

/* The message of the last failed call, "" if none; for TILE_ERROR_COMPILE,
 * every diagnostic in clang's form (file:line:col: error: ..., source line,
 * caret). */
TILE_API const char *tile_error(const tile_context *ctx);
/* Warnings and notes of the last call, also when it succeeded. */
TILE_API const char *tile_diagnostics(const tile_context *ctx);

TILE_API void tile_options_init(tile_options *opts);

/* Runs the pipeline on `source` (`len` bytes, NULs allowed; `name` is used
 * in diagnostics) up to `stage` and returns that stage's text in *text. */
TILE_API tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len,
                               const tile_options *opts, tile_stage stage, const char **text);
/* The same, reading the source from a file. */
TILE_API tile_status tile_emit_file(tile_context *ctx, const char *path, const tile_options *opts,
                                    tile_stage stage, const char **text);

/* ---- running kernels ------------------------------------------------------ */

typedef enum tile_arg_kind { TILE_ARG_BUFFER, TILE_ARG_INT, TILE_ARG_FLOAT } tile_arg_kind;

/* One argument of a launch, for a non-constexpr parameter.  Make them with
 * tile_buffer, tile_int and tile_float. */
typedef struct tile_arg {
  tile_arg_kind kind;
  const char *dtype;   /* element type of a buffer, or the scalar's type: "fp32", "i64", ...
                          (Triton's short names); NULL for a scalar: Triton's rule */
  void *data;          /* a buffer's memory (host memory for tile_run_cpu) */
  size_t count;        /* a buffer's length in elements */
  long long i;         /* TILE_ARG_INT */
  double f;            /* TILE_ARG_FLOAT */
} tile_arg;

TILE_API tile_arg tile_buffer(void *data, const char *dtype, size_t count);
TILE_API tile_arg tile_int(long long value);    /* i32 if it fits, else i64, as Triton */
TILE_API tile_arg tile_float(double value);     /* fp32 */

/* Compiles `source` specialised for `args` (their types, alignment and
 * values equal to 1, as Triton specialises) and runs it on the CPU
 * interpreter over grid[0] x grid[1] x grid[2] programs, reading and
 * writing the buffers in place.  An explicit opts->signature overrides the
 * types taken from the arguments.  Text from device_print goes to *printed
 * (may be NULL).  A run that fails returns TILE_ERROR_RUNTIME; the buffers
 * may then be partly written. */
TILE_API tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len,
                                  const tile_options *opts, const unsigned grid[3], const tile_arg *args,
                                  int num_args, const char **printed);

#ifdef __cplusplus
}
#endif

#endif
