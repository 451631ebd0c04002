/* Tutorial 03 from C: C = A x B in fp16 with fp32 accumulation, the
 * L2-grouped @triton.autotune kernel -- the config chosen by the autotuner
 * at the first launch of each shape (the default), or by index with
 * --config N, or each in turn with --config all -- with the fused
 * leaky_relu epilogue and without, at the documents' size (512^3) and
 * irregular ones, on fresh random inputs with the output poisoned, against
 * a C reference accumulated in fp64.  Strides are passed as ints; those
 * equal to 1 specialise to constexprs, as in Triton.
 *   matmul [--quick] [--cpu] [--require-gpu] [--seed N] [--config N|all|tune] [matmul.tl] */
#include "../common/example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  GUARD = 16,
  NUM_CONFIGS = 8, /* the triton.Config entries of matmul.tl's @triton.autotune */
};

typedef struct Shape {
  int m, n, k;
} Shape;

typedef struct Reference {
  double *acc;       /* sum of a*b, exact products summed in fp64 */
  double *magnitude; /* sum of |a*b|: scales the fp32 accumulation's error bound */
} Reference;

typedef struct Matmul {
  tile_kernel *kernel;
  Shape s;
  tile_arg args[12];
} Matmul;

/* grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), ) */
static void matmul_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  const Matmul *mm = user;
  grid[0] = (unsigned)(example_cdiv(mm->s.m, example_constexpr(k, "BLOCK_SIZE_M")) *
                       example_cdiv(mm->s.n, example_constexpr(k, "BLOCK_SIZE_N")));
  grid[1] = grid[2] = 1;
}

static void matmul_launch(Example *ex, void *user) {
  Matmul *mm = user;
  EXAMPLE_TRY(ex, tile_launch_grid(mm->kernel, matmul_grid, mm, NULL, mm->args, 12));
}

static Reference reference(const uint16_t *a, const uint16_t *b, Shape s) {
  Reference r = {calloc((size_t)s.m * s.n, sizeof(double)), calloc((size_t)s.m * s.n, sizeof(double))};
  double *bv = malloc(sizeof(double) * (size_t)s.k * s.n);
  for (size_t i = 0; i < (size_t)s.k * s.n; i++) bv[i] = example_half_value(b[i]);
  for (int m = 0; m < s.m; m++) {
    double *acc = r.acc + (size_t)m * s.n, *mag = r.magnitude + (size_t)m * s.n;
    for (int k = 0; k < s.k; k++) {
      double av = example_half_value(a[(size_t)m * s.k + k]);
      const double *brow = bv + (size_t)k * s.n;
      for (int n = 0; n < s.n; n++) {
        acc[n] += av * brow[n];
        mag[n] += fabs(av * brow[n]);
      }
    }
  }
  free(bv);
  return r;
}

/* The kernel's epilogue: leaky_relu(x) = where(x + 1 >= 0, x + 1, 0.01 * (x + 1)). */
static double epilogue(double acc, int leaky_relu) {
  if (!leaky_relu) return acc;
  double x = acc + 1;
  return x >= 0 ? x : 0.01 * x;
}

/* fp32 accumulation of K products (each add within 2^-24 of the partial
 * sum, twice that allowed), the fp16 rounding of the result, and the
 * smallest fp16 step; the epilogue is 1-Lipschitz so the bound carries. */
static long compare(const Reference *r, const uint16_t *c, Shape s, int leaky_relu, double *max_error) {
  long bad = 0;
  size_t n = (size_t)s.m * s.n;
  *max_error = 0;
  for (size_t i = 0; i < n; i++) {
    double want = epilogue(r->acc[i], leaky_relu), got = example_half_value(c[i]);
    double tolerance = s.k * 0x1p-23 * r->magnitude[i] + 0x1p-10 * fabs(want) + 0x1p-24;
    double diff = fabs(got - want);
    if (!(diff <= tolerance)) bad++;
    *max_error = example_worse(*max_error, diff);
  }
  for (int g = 0; g < GUARD; g++) bad += c[n + g] != 0xFFFF;
  return bad;
}

static tile_kernel *matmul_kernel(Example *ex, int config, int leaky_relu) {
  const char *defines[] = {leaky_relu ? "ACTIVATION=\"leaky_relu\"" : "ACTIVATION=\"\""};
  tile_options opts;
  tile_options_init(&opts);
  opts.kernel = "matmul_kernel";
  opts.config = config;
  opts.defines = defines;
  opts.num_defines = 1;
  return example_kernel(ex, &opts);
}

static uint16_t *random_matrix(Example *ex, size_t n) {
  uint16_t *m = malloc(n * sizeof(uint16_t));
  for (size_t i = 0; i < n; i++) m[i] = example_random_half(ex);
  return m;
}

/* Runs one compiled variant on the device buffers and checks it; config -1: autotuned. */
static void run_variant(Example *ex, Matmul *mm, void *dc, uint16_t *c, const Reference *r, int config,
                        int leaky_relu) {
  size_t c_bytes = ((size_t)mm->s.m * mm->s.n + GUARD) * sizeof(uint16_t);
  example_poison(ex, dc, c_bytes);
  matmul_launch(ex, mm);
  example_download(ex, c, dc, c_bytes);
  double max_error;
  long bad = compare(r, c, mm->s, leaky_relu, &max_error);
  double ms = example_time(ex, matmul_launch, mm, 10);
  char what[192], refill[16];
  example_refill(mm->kernel, refill, sizeof refill);
  snprintf(what, sizeof what, "%dx%dx%d config %d%s (%lldx%lldx%lld, %lld warps, refill %s%s)%s", mm->s.m, mm->s.n,
           mm->s.k, tile_kernel_config(mm->kernel), config < 0 ? ", autotuned" : "",
           example_constexpr(mm->kernel, "BLOCK_SIZE_M"), example_constexpr(mm->kernel, "BLOCK_SIZE_N"),
           example_constexpr(mm->kernel, "BLOCK_SIZE_K"), example_constexpr(mm->kernel, "num_warps"), refill,
           example_tma(mm->kernel), leaky_relu ? " leaky_relu" : "");
  example_result(ex, what, max_error, bad, ms);
}

/* Every variant (configs[i], with and without leaky_relu) at shape s. */
static void run_shape(Example *ex, Shape s, tile_kernel *kernels[][2], const int *configs, int count) {
  size_t a_n = (size_t)s.m * s.k, b_n = (size_t)s.k * s.n, c_n = (size_t)s.m * s.n + GUARD;
  uint16_t *a = random_matrix(ex, a_n), *b = random_matrix(ex, b_n), *c = malloc(c_n * sizeof(uint16_t));
  Reference r = reference(a, b, s);
  void *da = example_alloc(ex, a_n * 2), *db = example_alloc(ex, b_n * 2), *dc = example_alloc(ex, c_n * 2);
  example_upload(ex, da, a, a_n * 2);
  example_upload(ex, db, b, b_n * 2);
  for (int i = 0; i < count; i++) {
    for (int leaky_relu = 1; leaky_relu >= 0; leaky_relu--) {
      Matmul mm = {kernels[i][leaky_relu], s,
                   {tile_buffer(da, "fp16", a_n), tile_buffer(db, "fp16", b_n), tile_buffer(dc, "fp16", c_n - GUARD),
                    tile_int(s.m), tile_int(s.n), tile_int(s.k),
                    tile_int(s.k), tile_int(1),   /* a.stride(0), a.stride(1) */
                    tile_int(s.n), tile_int(1),   /* b.stride(0), b.stride(1) */
                    tile_int(s.n), tile_int(1)}}; /* c.stride(0), c.stride(1) */
      run_variant(ex, &mm, dc, c, &r, configs[i], leaky_relu);
    }
  }
  tile_free(ex->ctx, da), tile_free(ex->ctx, db), tile_free(ex->ctx, dc);
  free(a), free(b), free(c), free(r.acc), free(r.magnitude);
}

int main(int argc, char **argv) {
  Example ex;
  example_start(&ex, argc, argv, TILE_SOURCE_DIR "/examples/matmul/matmul.tl");
  if (ex.config >= NUM_CONFIGS) {
    fprintf(stderr, "matmul: --config %d: matmul.tl has configs 0 to %d\n", ex.config, NUM_CONFIGS - 1);
    return 2;
  }
  int configs[NUM_CONFIGS] = {ex.config}, count = 1; /* an index, or -1: the autotuner's */
  if (ex.config == EXAMPLE_AUTOTUNE) configs[0] = -1;
  if (ex.config == EXAMPLE_ALL_CONFIGS)
    for (count = 0; count < NUM_CONFIGS; count++) configs[count] = count;
  tile_kernel *kernels[NUM_CONFIGS][2] = {{NULL}};
  for (int i = 0; i < count; i++)
    for (int leaky_relu = 0; leaky_relu < 2; leaky_relu++) kernels[i][leaky_relu] = matmul_kernel(&ex, configs[i], leaky_relu);
  static const Shape full[] = {{512, 512, 512}, {300, 200, 72}, {1000, 1000, 1000}};
  static const Shape quick[] = {{300, 200, 72}, {33, 65, 129}, {1, 40, 64}};
  for (int i = 0; i < 3; i++) run_shape(&ex, ex.quick ? quick[i] : full[i], kernels, configs, count);
  for (int i = 0; i < count; i++)
    for (int leaky_relu = 0; leaky_relu < 2; leaky_relu++) tile_kernel_destroy(kernels[i][leaky_relu]);
  return example_finish(&ex);
}
