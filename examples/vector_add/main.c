/* Tutorial 01 from C: out = x + y over fp32 vectors, at the documents' size
 * (98432) and irregular ones, on fresh random inputs with the output
 * poisoned, compared exactly with C's own sums; the kernel time from events.
 *   vector_add [--quick] [--cpu] [--require-gpu] [--seed N] [vector_add.tl] */
#include "../common/example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 16 }; /* poisoned elements past the end that must stay untouched */

typedef struct Add {
  tile_kernel *kernel;
  long long n;
  tile_arg args[4];
} Add;

/* grid = lambda meta: (triton.cdiv(n_elements, meta['BLOCK_SIZE']),) */
static void add_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  const Add *add = user;
  grid[0] = (unsigned)example_cdiv(add->n, example_constexpr(k, "BLOCK_SIZE"));
  grid[1] = grid[2] = 1;
}

static void add_launch(Example *ex, void *user) {
  Add *add = user;
  EXAMPLE_TRY(ex, tile_launch_grid(add->kernel, add_grid, add, NULL, add->args, 4));
}

/* Elements that are not exactly x + y, the largest difference, and whether
 * the guard past the end kept its poison. */
static long compare(const float *x, const float *y, const float *out, long long n, double *max_error) {
  long bad = 0;
  *max_error = 0;
  for (long long i = 0; i < n; i++) {
    float want = x[i] + y[i];
    double diff = fabs((double)out[i] - (double)want);
    if (!(out[i] == want)) bad++;
    *max_error = example_worse(*max_error, diff);
  }
  uint32_t bits;
  for (int g = 0; g < GUARD; g++) {
    memcpy(&bits, &out[n + g], 4);
    if (bits != 0xFFFFFFFFu) bad++;
  }
  return bad;
}

static void run_size(Example *ex, tile_kernel *kernel, long long n) {
  size_t bytes = sizeof(float) * (size_t)n, out_bytes = sizeof(float) * (size_t)(n + GUARD);
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(out_bytes);
  for (long long i = 0; i < n; i++) {
    x[i] = (float)example_uniform(ex); /* torch.rand */
    y[i] = (float)example_uniform(ex);
  }
  void *dx = example_alloc(ex, bytes), *dy = example_alloc(ex, bytes), *dout = example_alloc(ex, out_bytes);
  example_upload(ex, dx, x, bytes);
  example_upload(ex, dy, y, bytes);
  example_poison(ex, dout, out_bytes);
  Add add = {kernel, n, {tile_buffer(dx, "fp32", (size_t)n), tile_buffer(dy, "fp32", (size_t)n),
                         tile_buffer(dout, "fp32", (size_t)n), tile_int(n)}};
  add_launch(ex, &add);
  example_download(ex, out, dout, out_bytes);
  double max_error;
  long bad = compare(x, y, out, n, &max_error);
  double ms = example_time(ex, add_launch, &add, 100);
  char what[64];
  snprintf(what, sizeof what, "n=%lld", n);
  example_result(ex, what, max_error, bad, ms);
  tile_free(ex->ctx, dx), tile_free(ex->ctx, dy), tile_free(ex->ctx, dout);
  free(x), free(y), free(out);
}

int main(int argc, char **argv) {
  Example ex;
  example_start(&ex, argc, argv, TILE_SOURCE_DIR "/examples/vector_add/vector_add.tl");
  static const long long full[] = {98432, 1000003, 1}, quick[] = {98432, 4099, 1};
  const char *defines[] = {"BLOCK_SIZE=1024"}; /* add_kernel[grid](..., BLOCK_SIZE=1024) */
  tile_options opts;
  tile_options_init(&opts);
  opts.defines = defines;
  opts.num_defines = 1;
  tile_kernel *kernel = example_kernel(&ex, &opts);
  for (int i = 0; i < 3; i++) run_size(&ex, kernel, ex.quick ? quick[i] : full[i]);
  tile_kernel_destroy(kernel);
  return example_finish(&ex);
}
