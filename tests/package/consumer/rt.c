/* libtile_rt from outside: the runtime alone links, says what it is, and refuses to compile. */
#include <tile/tile.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK) return 1;
  tile_kernel *k = NULL;
  tile_status s = tile_kernel_create(ctx, "k.tl", "", 0, NULL, &k);
  printf("consumer_rt: tile %s (%s): compiling says: %s\n", tile_version(), tile_build_info(), tile_error(ctx));
  int ok = s != TILE_OK && !k && !strcmp(tile_version(), TILE_VERSION_STRING);
  tile_context_destroy(ctx);
  return !ok;
}
