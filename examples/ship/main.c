/* Three tutorial kernels shipped in a C program through generated launchers (CMakeLists.txt):
 * each run on fresh random inputs at sizes that are not multiples of the blocks, the outputs poisoned
 * first, and checked against C: the sums exactly, softmax and the fp16 matmul within their rounding.
 * On the GPU, or on the CPU interpreter with TILE_INTERPRET=1. */
#include "add_kernel.h"
#include "matmul_kernel.h"
#include "softmax_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tile_context *ctx;

static void *device_copy(const void *host, size_t bytes) {
  void *d = NULL;
  if (tile_malloc(ctx, &d, bytes) || tile_memcpy_to_device(ctx, d, host, bytes)) return NULL;
  return d;
}

static int back(void *host, void *device, size_t bytes) {
  return tile_synchronize(ctx) || tile_memcpy_to_host(ctx, host, device, bytes);
}

static float uniform(void) { return (float)rand() / RAND_MAX; }

static int report(const char *what, int bad, double worst) {
  printf("%-40s %s (largest error %.3g)\n", what, bad < 0 ? tile_error(ctx) : bad ? "WRONG" : "ok", worst);
  return bad != 0;
}

static int vector_add(tile_kernel *k, int n) {
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  for (int i = 0; i < n; i++) x[i] = uniform(), y[i] = uniform(), z[i] = NAN;
  float *dx = device_copy(x, bytes), *dy = device_copy(y, bytes), *dz = device_copy(z, bytes);
  int bad = -1;
  if (dx && dy && dz && !add_kernel_launch(k, NULL, dx, n, dy, n, dz, n, n) && !back(z, dz, bytes))
    for (int i = bad = 0; i < n; i++) bad += z[i] != x[i] + y[i];
  char what[64];
  snprintf(what, sizeof what, "vector add, n = %d", n);
  tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dz), free(x), free(y), free(z);
  return report(what, bad, 0);
}

static int softmax(tile_kernel *k, int rows, int cols) {
  size_t bytes = sizeof(float) * (size_t)rows * cols;
  float *x = malloc(bytes), *y = malloc(bytes);
  for (int i = 0; i < rows * cols; i++) x[i] = 8 * uniform() - 4, y[i] = NAN;
  float *dx = device_copy(x, bytes), *dy = device_copy(y, bytes);
  unsigned grid[3] = {(unsigned)rows, 1, 1};
  int bad = -1;
  double worst = 0;
  if (dx && dy && !softmax_kernel_launch(k, NULL, grid, dy, (size_t)rows * cols, dx, (size_t)rows * cols, cols, cols, cols) &&
      !back(y, dy, bytes)) {
    bad = 0;
    for (int r = 0; r < rows; r++) {
      double max = -INFINITY, sum = 0;
      for (int c = 0; c < cols; c++) max = fmax(max, x[r * cols + c]);
      for (int c = 0; c < cols; c++) sum += exp(x[r * cols + c] - max);
      for (int c = 0; c < cols; c++) {
        double want = exp(x[r * cols + c] - max) / sum, error = fabs(y[r * cols + c] - want);
        worst = error > worst ? error : worst;
        bad += !(error <= 1e-6 + 1e-5 * want);
      }
    }
  }
  char what[64];
  snprintf(what, sizeof what, "softmax, %d x %d", rows, cols);
  tile_free(ctx, dx), tile_free(ctx, dy), free(x), free(y);
  return report(what, bad, worst);
}

/* fp16 by its bits: a float to the nearest half (normal range) and back */
static uint16_t to_half(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000, rest = u & 0x7fffffff;
  if (rest < 0x38800000) return (uint16_t)sign; /* below the normal halves: 0 (inputs here are not) */
  uint32_t h = ((rest - 0x38000000) >> 13), round = rest & 0x1fff;
  h += round > 0x1000 || (round == 0x1000 && (h & 1));
  return (uint16_t)(sign | h);
}

static double from_half(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return h & 0x8000 ? -v : v;
}

static int matmul(tile_kernel *k, int M, int N, int K) {
  uint16_t *a = malloc(2 * (size_t)M * K), *b = malloc(2 * (size_t)K * N), *c = malloc(2 * (size_t)M * N);
  for (int i = 0; i < M * K; i++) a[i] = to_half(uniform() - 0.5f);
  for (int i = 0; i < K * N; i++) b[i] = to_half(uniform() - 0.5f);
  memset(c, 0xff, 2 * (size_t)M * N);
  uint16_t *da = device_copy(a, 2 * (size_t)M * K), *db = device_copy(b, 2 * (size_t)K * N), *dc = device_copy(c, 2 * (size_t)M * N);
  int bad = -1;
  double worst = 0;
  if (da && db && dc &&
      !matmul_kernel_launch(k, NULL, da, (size_t)M * K, db, (size_t)K * N, dc, (size_t)M * N, M, N, K, K, 1, N, 1, N, 1) &&
      !back(c, dc, 2 * (size_t)M * N)) {
    bad = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double s = 0;
        for (int p = 0; p < K; p++) s += from_half(a[i * K + p]) * from_half(b[p * N + j]);
        double x = s + 1, want = x >= 0 ? x : 0.01 * x; /* the documents' leaky_relu: of acc + 1 */
        double error = fabs(from_half(c[i * N + j]) - want);
        worst = error > worst ? error : worst;
        bad += !(error <= 2e-2 + 2e-3 * fabs(want));
      }
  }
  char what[64];
  snprintf(what, sizeof what, "matmul fp16, %d x %d x %d (config %d)", M, N, K, tile_kernel_config(k));
  tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc), free(a), free(b), free(c);
  return report(what, bad, worst);
}

int main(void) {
  srand(20261127u);
  tile_kernel *add, *soft, *mm;
  if (tile_context_create(&ctx) || add_kernel_load(ctx, &add) || softmax_kernel_load(ctx, &soft) ||
      matmul_kernel_load(ctx, &mm))
    return fprintf(stderr, "ship: %s\n", ctx ? tile_error(ctx) : "no context"), 1;
  printf("ship: tile %s on the %s\n", tile_version(), tile_context_on_cpu(ctx) ? "CPU interpreter" : tile_device_name(ctx));
  int failed = vector_add(add, 98432) + vector_add(add, 4099) + softmax(soft, 37, 781) + softmax(soft, 5, 1000) +
               matmul(mm, 67, 45, 96) + matmul(mm, 130, 72, 64);
  tile_kernel_destroy(add), tile_kernel_destroy(soft), tile_kernel_destroy(mm);
  tile_context_destroy(ctx);
  printf("%d passed, %d failed\n", 6 - failed, failed);
  return failed != 0;
}
