/* A kernel bundle from outside, in one C file built with nothing but pkg-config: tutorial 01's vector add
 * packed by `tilec pack` (the file is argv[1]), loaded with tile_kernel_load_bundle_file and launched with a
 * grid function, on the interpreter (TILE_INTERPRET=1, libtile) or a GPU, checked against C's sums at a
 * size that is not a multiple of the block, the poison past the end untouched.  Exit 0 when every element
 * is right; 1, with tile_error on stderr, when a call fails (libtile_rt on the interpreter: it runs
 * bundles on the GPU only, and says so). */
#include <tile/tile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 1000, GUARD = 8 };

static void grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned g[3], void *user) {
  long long block = 1;
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  g[0] = (unsigned)((args[3].i + block - 1) / block), g[1] = g[2] = 1;
}

static int fail(tile_context *ctx, const char *what) {
  fprintf(stderr, "bundle: %s: %s\n", what, tile_error(ctx));
  tile_context_destroy(ctx);
  return 1;
}

int main(int argc, char **argv) {
  tile_context *ctx = NULL;
  if (argc != 2 || tile_context_create(&ctx) != TILE_OK) return fail(ctx, "usage: bundle K.tlk, or no context");
  float x[N], y[N], out[N + GUARD];
  srand(2026);
  for (int i = 0; i < N; i++) x[i] = (float)rand() / RAND_MAX, y[i] = (float)rand() / RAND_MAX;
  memset(out, 0xff, sizeof out);
  tile_kernel *k;
  void *dx, *dy, *dout;
  if (tile_kernel_load_bundle_file(ctx, argv[1], &k) != TILE_OK) return fail(ctx, "load");
  if (tile_malloc(ctx, &dx, sizeof x) || tile_malloc(ctx, &dy, sizeof y) || tile_malloc(ctx, &dout, sizeof out) ||
      tile_memcpy_to_device(ctx, dx, x, sizeof x) || tile_memcpy_to_device(ctx, dy, y, sizeof y) ||
      tile_memcpy_to_device(ctx, dout, out, sizeof out))
    return fail(ctx, "memory");
  tile_arg args[] = {tile_buffer(dx, "fp32", N), tile_buffer(dy, "fp32", N), tile_buffer(dout, "fp32", N), tile_int(N)};
  if (tile_launch_grid(k, grid, NULL, NULL, args, 4) != TILE_OK || tile_synchronize(ctx) != TILE_OK)
    return fail(ctx, "launch");
  if (tile_memcpy_to_host(ctx, out, dout, sizeof out) != TILE_OK) return fail(ctx, "copy back");
  int bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != x[i] + y[i];
  for (int i = N; i < N + GUARD; i++) bad += memcmp(&out[i], "\xff\xff\xff\xff", 4) != 0;
  printf("bundle: %s on %s: %d of %d wrong\n", argv[1], tile_context_on_cpu(ctx) ? "the interpreter" : "the GPU", bad, N);
  tile_context_destroy(ctx);
  return bad != 0;
}
