/* A program built against tile.h before struct_size (tests/unit/abi_old/tile_old.h), run against today's
 * libtile.so (docs/abi.md, section 10): the calls whose structs did not change keep working; options and
 * arguments of the old layout are refused with an error that says why, before anything is read past
 * them or run; the old entry points that would write today's larger structs into its memory
 * (tile_options_init, tile_buffer, tile_int, tile_float) are not exported, so a program calling them
 * fails to load, naming the symbol.  Never silent memory corruption. */
#define _GNU_SOURCE /* dlvsym */
#include "check.h"
#include "abi_old/tile_old.h"

#include <dlfcn.h>
#include <string.h>

static const char fill[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def fill(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n";

static const char *block_define[] = {"BLOCK=8"};

int main(void) {
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK && tile_context_use_cpu(ctx) == TILE_OK);
  const char *text = NULL;
  /* no struct of the old layout: works as it did */
  CHECK(tile_emit(ctx, "fill.tl", fill, sizeof fill - 1, NULL, TILE_STAGE_TOKENS, &text) == TILE_OK);
  CHECK_CONTAINS(text, "fill");
  /* old options, set up as the old header allowed (every field by hand), kernel NULL: struct_size reads 0 */
  tile_options o;
  memset(&o, 0, sizeof o);
  o.config = -1;
  o.defines = block_define;
  o.num_defines = 1;
  CHECK(tile_emit(ctx, "fill.tl", fill, sizeof fill - 1, &o, TILE_STAGE_TOKENS, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_emit: options: struct_size is 0, not the size of a tile_options (");
  CHECK_CONTAINS(tile_error(ctx), " bytes): initialise them with tile_options_init (a program built against a tile.h "
                                  "older than struct_size must be rebuilt)");
  /* ... and with a kernel named, the first word is a pointer: no size at all */
  o.kernel = "fill";
  CHECK(tile_emit(ctx, "fill.tl", fill, sizeof fill - 1, &o, TILE_STAGE_AST, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), ", not the size of a tile_options (");
  /* old arguments: refused before the kernel runs, the buffer untouched */
  float x[8] = {0};
  tile_arg args[] = {{TILE_ARG_BUFFER, "fp32", x, 8, 0, 0}, {TILE_ARG_INT, NULL, NULL, 0, 8, 0}};
  unsigned grid[3] = {1, 1, 1};
  o.kernel = NULL;
  CHECK(tile_run_cpu(ctx, "fill.tl", fill, sizeof fill - 1, NULL, grid, args, 2, NULL) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 0: struct_size is 0, not the size of a tile_arg (");
  CHECK_CONTAINS(tile_error(ctx), "make arguments with tile_buffer, tile_int and tile_float");
  CHECK(x[0] == 0 && x[7] == 0);
  /* the entry points that wrote the structs are gone; what replaces them is there, under TILE_0 */
  const char *gone[] = {"tile_options_init", "tile_buffer", "tile_int", "tile_float"};
  for (int i = 0; i < 4; i++) CHECK(dlsym(RTLD_DEFAULT, gone[i]) == NULL);
  CHECK(dlvsym(RTLD_DEFAULT, "tile_options_init_size", "TILE_0") != NULL);
  CHECK(dlvsym(RTLD_DEFAULT, "tile_run_cpu", "TILE_0") != NULL);
  tile_context_destroy(ctx);
  return check_report();
}
