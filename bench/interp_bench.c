/* Times the CPU interpreter through the public API (compile + run, host
 * clock, best of 5): vector add over 2^20 fp32 elements and a 256x256x256
 * fp16 matmul (the tutorial kernel, fp32 accumulation).
 *   build/bench/interp_bench [SOURCE_DIR] */
#include "tile/tile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static char *read_file(const char *dir, const char *name, size_t *len) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = malloc(1 << 20);
  *len = fread(s, 1, (1 << 20) - 1, f);
  fclose(f);
  return s;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double best_of(tile_context *ctx, const char *name, const char *src, size_t len, tile_options *o,
                      unsigned grid0, tile_arg *args, int n) {
  unsigned grid[3] = {grid0, 1, 1};
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    if (tile_run_cpu(ctx, name, src, len, o, grid, args, n, NULL) != TILE_OK) {
      fprintf(stderr, "%s\n", tile_error(ctx));
      exit(1);
    }
    double t = now() - t0;
    if (t < best) best = t;
  }
  return best;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  tile_context *ctx;
  tile_context_create(&ctx);
  size_t len;
  char *add = read_file(dir, "examples/vector_add/vector_add.tl", &len);
  if (!add) return fprintf(stderr, "run from the source tree or give it as the argument\n"), 1;
  int n = 1 << 20;
  float *x = malloc(4u * n), *y = malloc(4u * n), *z = malloc(4u * n);
  for (int i = 0; i < n; i++) x[i] = y[i] = (float)i;
  tile_arg aargs[] = {tile_buffer(x, "fp32", n), tile_buffer(y, "fp32", n), tile_buffer(z, "fp32", n), tile_int(n)};
  const char *adefs[] = {"BLOCK_SIZE=1024"};
  tile_options o;
  tile_options_init(&o);
  o.defines = adefs;
  o.num_defines = 1;
  printf("vector add, 2^20 fp32:        %7.1f ms\n", 1e3 * best_of(ctx, "vector_add.tl", add, len, &o, n / 1024, aargs, 4));

  size_t mlen;
  char *mm = read_file(dir, "examples/matmul/matmul.tl", &mlen);
  int M = 256;
  uint16_t *a = malloc(2u * M * M), *b = malloc(2u * M * M), *c = malloc(2u * M * M);
  for (int i = 0; i < M * M; i++) a[i] = b[i] = 0x3c00; /* 1.0 */
  tile_arg margs[] = {tile_buffer(a, "fp16", (size_t)M * M), tile_buffer(b, "fp16", (size_t)M * M),
                      tile_buffer(c, "fp16", (size_t)M * M), tile_int(M), tile_int(M), tile_int(M),
                      tile_int(M), tile_int(1), tile_int(M), tile_int(1), tile_int(M), tile_int(1)};
  const char *mdefs[] = {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8", "ACTIVATION=\"\""};
  o.kernel = "matmul_kernel";
  o.defines = mdefs;
  o.num_defines = 5;
  printf("matmul 256x256x256 fp16:      %7.1f ms\n", 1e3 * best_of(ctx, "matmul.tl", mm, mlen, &o, 16, margs, 12));
  tile_context_destroy(ctx);
  free(add), free(mm), free(x), free(y), free(z), free(a), free(b), free(c);
  return 0;
}
