/* The CPU interpreter through the public API: every seed kernel runs at the
 * source documents' irregular sizes on fresh random inputs, with outputs
 * poisoned first, against an independent C reference. */
#include "check.h"
#include "tile/tile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static float frand(void) { return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f; }

/* An fp16 bit pattern with value in about [-2, 2], decoded independently of the library. */
static uint16_t random_half(void) {
  uint16_t sign = (uint16_t)((rand() & 1) << 15), exp = (uint16_t)(8 + rand() % 8), mant = (uint16_t)(rand() & 0x3ff);
  return (uint16_t)(sign | (exp << 10) | mant);
}

static double half_value(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp ? ldexp(1.0 + mant / 1024.0, exp - 15) : ldexp(mant / 1024.0, -14);
  if (exp == 31) v = mant ? NAN : INFINITY;
  return h & 0x8000 ? -v : v;
}

static int run(const char *file, const char *kernel, const char **defines, int n_defines, unsigned g0, unsigned g1,
               tile_arg *args, int n_args, const char **error) {
  size_t len;
  char *src = check_read_file(TILE_SOURCE_DIR "/tests/seeds", file, &len);
  if (!src) return -1;
  tile_context *ctx;
  tile_context_create(&ctx);
  tile_options o;
  tile_options_init(&o);
  o.kernel = kernel;
  o.defines = defines;
  o.num_defines = n_defines;
  unsigned grid[3] = {g0, g1, 1};
  tile_status s = tile_run_cpu(ctx, file, src, len, &o, grid, args, n_args, NULL);
  static char message[2048];
  snprintf(message, sizeof message, "%s", tile_error(ctx));
  if (s != TILE_OK) fprintf(stderr, "%s: %s\n", file, message);
  if (error) *error = message;
  tile_context_destroy(ctx);
  free(src);
  return (int)s;
}

static void test_vector_add(void) {
  int n = 98432;
  float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n), *out = malloc(sizeof(float) * (n + 1));
  for (int i = 0; i < n; i++) {
    x[i] = frand();
    y[i] = frand();
  }
  for (int i = 0; i <= n; i++) out[i] = NAN;
  tile_arg args[] = {tile_buffer(x, "fp32", n), tile_buffer(y, "fp32", n), tile_buffer(out, "fp32", n), tile_int(n)};
  const char *defs[] = {"BLOCK_SIZE=1024"};
  CHECK(run("vector_add.tl", "add_kernel", defs, 1, (n + 1023) / 1024, 1, args, 4, NULL) == TILE_OK);
  int exact = 1;
  for (int i = 0; i < n; i++) exact &= out[i] == x[i] + y[i];
  CHECK(exact);
  CHECK(isnan(out[n])); /* nothing past the end was written */
  free(x), free(y), free(out);
}

static double softmax_error(const float *in, const float *out, int rows, int cols) {
  double worst = 0;
  for (int r = 0; r < rows; r++) {
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < cols; c++) mx = fmax(mx, in[r * cols + c]);
    for (int c = 0; c < cols; c++) sum += exp(in[r * cols + c] - mx);
    for (int c = 0; c < cols; c++) {
      double ref = exp(in[r * cols + c] - mx) / sum, got = out[r * cols + c];
      double err = isnan(got) ? INFINITY : fabs(got - ref) / fmax(ref, 1e-30);
      if (err > worst) worst = err;
    }
  }
  return worst;
}

static void test_softmax(const char *file, unsigned programs) {
  int rows = 1823, cols = 781;
  float *in = malloc(sizeof(float) * rows * cols), *out = malloc(sizeof(float) * rows * cols);
  for (int i = 0; i < rows * cols; i++) {
    in[i] = frand() * 4;
    out[i] = NAN;
  }
  tile_arg args[6] = {tile_buffer(out, "fp32", (size_t)rows * cols), tile_buffer(in, "fp32", (size_t)rows * cols),
                      tile_int(cols), tile_int(cols), tile_int(rows), tile_int(cols)};
  int persistent = programs != (unsigned)rows;
  if (!persistent) args[4] = args[5]; /* one row per program: (out, in, in_stride, out_stride, n_cols) */
  const char *defs[] = {"BLOCK_SIZE=1024"};
  CHECK(run(file, "softmax_kernel", defs, 1, programs, 1, args, persistent ? 6 : 5, NULL) == TILE_OK);
  double err = softmax_error(in, out, rows, cols);
  if (err >= 1e-5) fprintf(stderr, "%s: relative error %g\n", file, err);
  CHECK(err < 1e-5);
  free(in), free(out);
}

/* C = A x B in double from fp16 inputs; `act` adds leaky_relu(x + 1). */
static void reference_matmul(const uint16_t *a, const uint16_t *b, double *c, int M, int N, int K, int act) {
  double *da = malloc(sizeof(double) * M * K), *db = malloc(sizeof(double) * K * N);
  for (int i = 0; i < M * K; i++) da[i] = half_value(a[i]);
  for (int i = 0; i < K * N; i++) db[i] = half_value(b[i]);
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += da[m * K + k] * db[k * N + n];
      if (act) {
        acc += 1;
        acc = acc >= 0 ? acc : 0.01 * acc;
      }
      c[m * N + n] = acc;
    }
  free(da);
  free(db);
}

static double relative_error(const double *ref, const uint16_t *got16, const float *got32, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; i++) {
    double g = got16 ? half_value(got16[i]) : got32[i];
    if (isnan(g)) return INFINITY;
    num += (g - ref[i]) * (g - ref[i]);
    den += ref[i] * ref[i];
  }
  return sqrt(num / den);
}

static void fill_halves(uint16_t *p, int n) {
  for (int i = 0; i < n; i++) p[i] = random_half();
}

static void test_matmul_tutorial(int M, int N, int K, int act) {
  uint16_t *a = malloc(2u * M * K), *b = malloc(2u * K * N), *c = malloc(2u * M * N);
  double *ref = malloc(sizeof(double) * M * N);
  fill_halves(a, M * K);
  fill_halves(b, K * N);
  for (int i = 0; i < M * N; i++) c[i] = 0x7e00; /* NaN */
  reference_matmul(a, b, ref, M, N, K, act);
  tile_arg args[] = {tile_buffer(a, "fp16", (size_t)M * K), tile_buffer(b, "fp16", (size_t)K * N),
                     tile_buffer(c, "fp16", (size_t)M * N), tile_int(M), tile_int(N), tile_int(K),
                     tile_int(K), tile_int(1), tile_int(N), tile_int(1), tile_int(N), tile_int(1)};
  const char *defs[] = {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8",
                        act ? "ACTIVATION=\"leaky_relu\"" : "ACTIVATION=\"\""};
  unsigned grid = (unsigned)(((M + 63) / 64) * ((N + 63) / 64));
  CHECK(run("matmul_autotuned.tl", "matmul_kernel", defs, 5, grid, 1, args, 12, NULL) == TILE_OK);
  double err = relative_error(ref, c, NULL, M * N);
  if (err >= 1e-2) fprintf(stderr, "matmul %dx%dx%d: relative error %g\n", M, N, K, err);
  CHECK(err < 1e-2);
  free(a), free(b), free(c), free(ref);
}

static void test_matmul_fp32(int M, int N, int K) {
  float *a = malloc(4u * M * K), *b = malloc(4u * K * N), *c = malloc(4u * M * N);
  double *ref = malloc(sizeof(double) * M * N);
  for (int i = 0; i < M * K; i++) a[i] = frand();
  for (int i = 0; i < K * N; i++) b[i] = frand();
  for (int i = 0; i < M * N; i++) c[i] = NAN;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += (double)a[m * K + k] * b[k * N + n];
      ref[m * N + n] = acc;
    }
  tile_arg args[] = {tile_buffer(a, "fp32", (size_t)M * K), tile_buffer(b, "fp32", (size_t)K * N),
                     tile_buffer(c, "fp32", (size_t)M * N), tile_int(M), tile_int(N), tile_int(K),
                     tile_int(K), tile_int(1), tile_int(N), tile_int(1), tile_int(N), tile_int(1)};
  const char *defs[] = {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=16"};
  unsigned grid = (unsigned)(((M + 31) / 32) * ((N + 63) / 64));
  CHECK(run("matmul_basic.tl", "_matmul_kernel", defs, 3, grid, 1, args, 12, NULL) == TILE_OK);
  double err = relative_error(ref, NULL, c, M * N);
  if (err >= 1e-5) fprintf(stderr, "fp32 matmul: relative error %g\n", err);
  CHECK(err < 1e-5); /* allow_tf32=False: IEEE fp32 */
  free(a), free(b), free(c), free(ref);
}

/* The 002 kernels (no masks): exact tiles, with and without grouped ordering. */
static void test_matmul_helpers(const char *file, const char *kernel, int grouped) {
  int M = 512, N = 512, K = 512;
  uint16_t *a = malloc(2u * M * K), *b = malloc(2u * K * N), *c = malloc(2u * M * N);
  double *ref = malloc(sizeof(double) * M * N);
  fill_halves(a, M * K);
  fill_halves(b, K * N);
  for (int i = 0; i < M * N; i++) c[i] = 0x7e00;
  reference_matmul(a, b, ref, M, N, K, 0);
  tile_arg args[] = {tile_buffer(a, "fp16", (size_t)M * K), tile_buffer(b, "fp16", (size_t)K * N),
                     tile_buffer(c, "fp16", (size_t)M * N), tile_int(M), tile_int(N), tile_int(K),
                     tile_int(K), tile_int(1), tile_int(N), tile_int(1), tile_int(N), tile_int(1)};
  const char *defs[] = {"bm=32", "bn=32", "bk=32", "group_sz=4"};
  CHECK(run(file, kernel, defs, grouped ? 4 : 3, M / 32, N / 32, args, 12, NULL) == TILE_OK);
  double err = relative_error(ref, c, NULL, M * N);
  if (err >= 1e-2) fprintf(stderr, "%s: relative error %g\n", kernel, err);
  CHECK(err < 1e-2);
  free(a), free(b), free(c), free(ref);
}

/* The same unmasked kernel on a shape that is not a multiple of the block
 * reads past A: the run must stop with the place, not crash. */
static void test_out_of_bounds_is_reported(void) {
  int M = 300, N = 200, K = 72;
  uint16_t *a = calloc((size_t)M * K, 2), *b = calloc((size_t)K * N, 2), *c = calloc((size_t)M * N, 2);
  tile_arg args[] = {tile_buffer(a, "fp16", (size_t)M * K), tile_buffer(b, "fp16", (size_t)K * N),
                     tile_buffer(c, "fp16", (size_t)M * N), tile_int(M), tile_int(N), tile_int(K),
                     tile_int(K), tile_int(1), tile_int(N), tile_int(1), tile_int(N), tile_int(1)};
  const char *defs[] = {"bm=32", "bn=32", "bk=32"};
  const char *error = NULL;
  CHECK(run("matmul_naive.tl", "naive_matmul_k", defs, 3, (M + 31) / 32, (N + 31) / 32, args, 12, &error) ==
        TILE_ERROR_RUNTIME);
  CHECK_CONTAINS(error, "kernel 'naive_matmul_k'");
  CHECK_CONTAINS(error, "out-of-bounds load");
  CHECK_CONTAINS(error, "matmul_naive.tl:");
  free(a), free(b), free(c);
}

int main(void) {
  unsigned seed = (unsigned)time(NULL);
  printf("seed %u\n", seed);
  srand(seed);
  test_vector_add();
  test_softmax("softmax.tl", 1823);
  test_softmax("softmax_persistent.tl", 32);
  test_matmul_tutorial(512, 512, 512, 1);
  test_matmul_tutorial(300, 200, 72, 0);
  test_matmul_tutorial(300, 200, 72, 1);
  test_matmul_fp32(300, 200, 72);
  test_matmul_helpers("matmul_naive.tl", "naive_matmul_k", 0);
  test_matmul_helpers("matmul_grouped.tl", "grouped_matmul_k", 1);
  test_out_of_bounds_is_reported();
  return check_report();
}
