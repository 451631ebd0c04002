/* A program built on a generated launcher (tilec pack --launcher add_kernel: tests/package/test_launcher.sh, and tile_add_kernels: consumer/):
 * only add_kernel.h's two functions and tile.h's memory calls.  Vector add at sizes that are not multiples of
 * the block, on fresh random inputs, the output poisoned first and its guard past the end checked. */
#include "add_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { GUARD = 8 };

static int run_size(tile_context *ctx, tile_kernel *k, int n) {
  size_t bytes = sizeof(float) * (size_t)n, out_bytes = bytes + GUARD * sizeof(float);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(out_bytes);
  for (int i = 0; i < n; i++) x[i] = (float)rand() / RAND_MAX - 0.5f, y[i] = (float)rand() / RAND_MAX;
  memset(out, 0xff, out_bytes);
  void *dx, *dy, *dout;
  int bad = -1;
  if (!tile_malloc(ctx, &dx, bytes) && !tile_malloc(ctx, &dy, bytes) && !tile_malloc(ctx, &dout, out_bytes) &&
      !tile_memcpy_to_device(ctx, dx, x, bytes) && !tile_memcpy_to_device(ctx, dy, y, bytes) &&
      !tile_memcpy_to_device(ctx, dout, out, out_bytes) &&
      !add_kernel_launch(k, NULL, dx, (size_t)n, dy, (size_t)n, dout, (size_t)n, n) && !tile_synchronize(ctx) &&
      !tile_memcpy_to_host(ctx, out, dout, out_bytes)) {
    bad = 0;
    for (int i = 0; i < n; i++) bad += out[i] != x[i] + y[i];
    for (int i = n; i < n + GUARD; i++) {
      unsigned bits;
      memcpy(&bits, &out[i], 4);
      bad += bits != 0xffffffffu;
    }
  }
  printf("n = %d: %s\n", n, bad < 0 ? tile_error(ctx) : bad ? "WRONG" : "every element right");
  tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dout);
  free(x), free(y), free(out);
  return bad != 0;
}

int main(void) {
  srand((unsigned)time(NULL));
  tile_context *ctx;
  tile_kernel *k;
  if (tile_context_create(&ctx) || add_kernel_load(ctx, &k)) return fprintf(stderr, "load failed\n"), 1;
  int failed = 0;
  const int sizes[] = {1, 1000, 4099, 98432 + rand() % 1000};
  for (int i = 0; i < 4; i++) failed += run_size(ctx, k, sizes[i]);
  /* a buffer shorter than n: the runtime's argument check, through the launcher */
  float small[4] = {0};
  tile_status s = add_kernel_launch(k, NULL, small, 4, small, 4, small, 4, 5);
  printf("n = 5 over 4-element buffers: %s\n", s ? tile_error(ctx) : "launched");
  failed += s == TILE_OK && tile_context_on_cpu(ctx);
  tile_kernel_destroy(k);
  tile_context_destroy(ctx);
  printf("%d passed, %d failed\n", 5 - failed, failed);
  return failed != 0;
}
