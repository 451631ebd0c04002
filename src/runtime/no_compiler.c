/* libtile_rt: the runtime without the compiler.  The calls that compile
 * say so; everything else (contexts, device memory, streams, events, AOT
 * kernels, launches) is the same code as libtile's. */
#include "context.h"
#include "bundle.h"

static const char no_compiler[] = "libtile_rt has no compiler: link libtile";

static tile_status unsupported(tile_context *ctx) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  return context_fail(ctx, TILE_ERROR_UNSUPPORTED, no_compiler);
}

const char *tile_build_info(void) { return "libtile_rt: the runtime alone (no compiler, no LLVM)"; }

tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                      tile_stage stage, const char **text) {
  if (text) *text = NULL;
  return unsupported(ctx);
}

tile_status tile_emit_file(tile_context *ctx, const char *path, const tile_options *opts, tile_stage stage,
                           const char **text) {
  if (text) *text = NULL;
  return unsupported(ctx);
}

tile_status tile_compile(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                         int ptx, const void **image, size_t *size, const char **metadata) {
  if (image) *image = NULL;
  if (size) *size = 0;
  if (metadata) *metadata = NULL;
  return unsupported(ctx);
}

tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                         const unsigned grid[3], const tile_arg *args, int num_args, const char **printed) {
  if (printed) *printed = NULL;
  return unsupported(ctx);
}

tile_status tile_kernel_create(tile_context *ctx, const char *name, const char *source, size_t len,
                               const tile_options *opts, tile_kernel **out) {
  if (out) *out = NULL;
  return unsupported(ctx);
}

tile_status tile_kernel_create_file(tile_context *ctx, const char *path, const tile_options *opts, tile_kernel **out) {
  if (out) *out = NULL;
  return unsupported(ctx);
}

tile_status tile_pack(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                      const char *const *signatures, int num_signatures, const char *const *archs, int num_archs,
                      const void **bundle, size_t *size) {
  if (bundle) *bundle = NULL;
  if (size) *size = 0;
  return unsupported(ctx);
}

/* Bundles run on the GPU only here: their tile IR needs libtile's interpreter. */
tile_status tile_kernel_load_bundle(tile_context *ctx, const char *name, const void *bundle, size_t size, tile_kernel **out) {
  return bundle_load(ctx, name, bundle, size, NULL, out);
}

tile_status tile_kernel_load_bundle_file(tile_context *ctx, const char *path, tile_kernel **out) {
  return bundle_load_file(ctx, path, NULL, out);
}
