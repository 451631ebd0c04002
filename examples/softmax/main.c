/* Tutorial 02 from C: the fused row softmax with the tutorial's host logic
 * (BLOCK_SIZE the next power of two >= n_cols, num_warps 4, 8 from 2048, 16
 * from 4096; one program per row), at the documents' size (1823 x 781) and
 * irregular ones, on fresh random inputs with the output poisoned, against a
 * C reference accumulated in fp64.
 *   softmax [--quick] [--cpu] [--require-gpu] [--seed N] [softmax.tl] */
#include "../common/example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 16 };
/* tl.exp may be approximate (ex2.approx on the GPU) and the row sum is in
 * fp32: a relative error of 1e-4 leaves a wide margin over both, and any
 * real mistake (a lost element, a wrong row) is far larger. */
static const double RTOL = 1e-4, ATOL = 1e-9;

typedef struct Shape {
  int rows, cols;
} Shape;

typedef struct Softmax {
  tile_kernel *kernel;
  unsigned rows;
  tile_arg args[5];
} Softmax;

static long long next_power_of_2(long long n) {
  long long p = 1;
  while (p < n) p *= 2;
  return p;
}

/* softmax_kernel[(n_rows, )](y, x, x.stride(0), y.stride(0), n_cols, num_warps=..., BLOCK_SIZE=...) */
static void softmax_launch(Example *ex, void *user) {
  Softmax *s = user;
  unsigned grid[3] = {s->rows, 1, 1};
  EXAMPLE_TRY(ex, tile_launch(s->kernel, grid, NULL, s->args, 5));
}

/* The tutorial's kernel for n_cols: BLOCK_SIZE and num_warps chosen as it does. */
static tile_kernel *softmax_kernel(Example *ex, int cols, long long *block, int *warps) {
  *block = next_power_of_2(cols);
  *warps = 4;
  if (*block >= 2048) *warps = 8;
  if (*block >= 4096) *warps = 16;
  char define[64];
  snprintf(define, sizeof define, "BLOCK_SIZE=%lld", *block);
  const char *defines[] = {define};
  tile_options opts;
  tile_options_init(&opts);
  opts.defines = defines;
  opts.num_defines = 1;
  opts.num_warps = *warps;
  return example_kernel(ex, &opts);
}

/* exp(x - max) / sum exp(x - max) for each row, in fp64. */
static void reference(const float *x, double *want, Shape s) {
  for (int r = 0; r < s.rows; r++) {
    const float *row = x + (size_t)r * s.cols;
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < s.cols; c++) max = row[c] > max ? row[c] : max;
    for (int c = 0; c < s.cols; c++) sum += exp((double)row[c] - max);
    for (int c = 0; c < s.cols; c++) want[(size_t)r * s.cols + c] = exp((double)row[c] - max) / sum;
  }
}

static long compare(const double *want, const float *got, size_t n, double *max_error) {
  long bad = 0;
  *max_error = 0;
  for (size_t i = 0; i < n; i++) {
    double diff = fabs((double)got[i] - want[i]);
    if (!(diff <= ATOL + RTOL * fabs(want[i]))) bad++;
    *max_error = example_worse(*max_error, diff);
  }
  uint32_t bits;
  for (int g = 0; g < GUARD; g++) {
    memcpy(&bits, &got[n + g], 4);
    if (bits != 0xFFFFFFFFu) bad++;
  }
  return bad;
}

static void run_shape(Example *ex, Shape s) {
  size_t n = (size_t)s.rows * s.cols, bytes = n * sizeof(float), out_bytes = (n + GUARD) * sizeof(float);
  float *x = malloc(bytes), *y = malloc(out_bytes);
  double *want = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; i++) x[i] = (float)example_normal(ex); /* torch.randn */
  reference(x, want, s);
  void *dx = example_alloc(ex, bytes), *dy = example_alloc(ex, out_bytes);
  example_upload(ex, dx, x, bytes);
  example_poison(ex, dy, out_bytes);
  long long block;
  int warps;
  tile_kernel *kernel = softmax_kernel(ex, s.cols, &block, &warps);
  Softmax sm = {kernel, (unsigned)s.rows, {tile_buffer(dy, "fp32", n), tile_buffer(dx, "fp32", n),
                                          tile_int(s.cols), tile_int(s.cols), tile_int(s.cols)}};
  softmax_launch(ex, &sm);
  example_download(ex, y, dy, out_bytes);
  double max_error;
  long bad = compare(want, y, n, &max_error);
  double ms = example_time(ex, softmax_launch, &sm, 50);
  char what[96];
  snprintf(what, sizeof what, "%dx%d (BLOCK_SIZE %lld, %d warps)", s.rows, s.cols, block, warps);
  example_result(ex, what, max_error, bad, ms);
  tile_kernel_destroy(kernel);
  tile_free(ex->ctx, dx), tile_free(ex->ctx, dy);
  free(x), free(y), free(want);
}

int main(int argc, char **argv) {
  Example ex;
  example_start(&ex, argc, argv, TILE_SOURCE_DIR "/examples/softmax/softmax.tl");
  /* the document's 1823 x 781, then rows that need 8 and 16 warps */
  static const Shape full[] = {{1823, 781}, {37, 1029}, {300, 2500}, {41, 7001}};
  static const Shape quick[] = {{37, 1029}, {129, 781}, {5, 1500}, {3, 5000}};
  for (int i = 0; i < 4; i++) run_shape(&ex, ex.quick ? quick[i] : full[i]);
  return example_finish(&ex);
}
