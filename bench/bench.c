/* tile's GPU benchmarks, measured as bench/triton_bench.py measures Triton
 * and torch (bench/README.md):
 *   - vector add, fp32, 2^12..2^28 elements: GB/s = 3 * n * 4 bytes / time;
 *   - softmax, fp32, M = 4096 rows, N = 256..32768: GB/s = 2 * M * N * 4 / time;
 *   - matmul, fp16 in and out (fp32 accumulation), the example's autotuned
 *     kernel without epilogue: square 256..8192 and LLM shapes (M = 16..8192,
 *     (N, K) in (4096, 4096), (14336, 4096), (4096, 14336)):
 *     TFLOP/s = 2 * M * N * K / time, the autotuner's choice printed;
 *     each after 100 ms of untimed launches (clocks up again after
 *     compiling or autotuning), timed with CUDA events around one launch, the L2 flushed before
 *     it by a kernel writing a 256 MB buffer (outside the timed region; a kernel, as torch's
 *     fill_ in Triton's harness: ~10 us kernels read 5% slower after cuMemsetD8), the inputs
 *     rotated over several copies when they fit in L2, the median of many
 *     repetitions; every result checked against C once (matmul: sampled
 *     entries against fp64 sums);
 *   - the cold compile time of each example kernel (a fresh TILE_CACHE_DIR
 *     and context; tile_kernel_compile) and the warm one (from the disk cache);
 *     for the matmul also of all 8 autotune configs, as its first tuning
 *     compiles them: on a thread per core (the default) and on one thread;
 *   - the host time per launch of a cached tiny kernel (10000+ launches on
 *     the host clock, then a synchronise).
 * Prints a table and writes CSV rows: kernel,size,impl,ms,gbps,tflops,gpu.
 *   bench [--quick] [--cpu] [--csv FILE] [--only vector_add,softmax,compile,launch,matmul]
 *         [--time-limit SECONDS] [--softmax-warps N] [--softmax-cols N,N...]
 *         [--matmul-shapes MxNxK,...] [--matmul-config N] [SOURCE_DIR]
 * --time-limit: matmul shapes not started within that many seconds of the
 * start are skipped (and said so), so a run fits a time slot.  --matmul-shapes
 * and --matmul-config: those shapes only, with that one autotune config (as
 * bench/matmul_configs.py times it in Triton's harness).
 * Without a GPU it runs --quick on the CPU interpreter (a smoke run: the
 * numbers then mean nothing). */
#include "../examples/common/example.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SIZES(name, ...) static const int name[] = {__VA_ARGS__};
#include "sizes.def"
#undef SIZES
#define COUNT(array) ((int)(sizeof array / sizeof *array))

enum {
  MAX_REPS = 1000,
  MAX_SETS = 8,           /* input copies rotated through when they fit in L2 */
  COMPILE_REPS = 5,       /* cold and warm compiles per kernel, median */
  LAUNCHES = 20000,       /* the host-overhead loop */
};
static const size_t FLUSH_BYTES = (size_t)256 << 20;
static const size_t L2_BYTES = (size_t)64 << 20; /* at least the L2 of an H100/H200 (50 MB) */
static const double TARGET_MS = 200;              /* timed work per measurement, as do_bench's rep */
static const double WARMUP_MS = 100;              /* untimed launches first: clocks up after compiling or tuning */

typedef struct Bench {
  Example ex;
  FILE *csv;
  const char *source_dir;
  const char *only;
  char gpu[256];          /* the device's name, commas removed for the CSV */
  void *flush;            /* written before each timed launch, by `fill` */
  tile_kernel *fill;
  size_t flush_bytes;
  double flush_ms;        /* the time of that write */
  tile_event start[MAX_REPS], end[MAX_REPS];
  int min_reps, max_reps;
  double started, time_limit;   /* seconds: when the run began, and how long it may take (0: no limit) */
  int softmax_warps;      /* --softmax-warps: num_warps for every softmax size (0: the tutorial's rule) */
  const char *softmax_cols; /* --softmax-cols: "384,640" instead of the full list */
  const char *matmul_shapes; /* --matmul-shapes: "4096x4096x4096,16x4096x14336" instead of the full list */
  int matmul_config;      /* --matmul-config: that @autotune config at every shape (-1: autotuned) */
} Bench;

/* Launches one kernel on input set `set` (0 <= set < the number of sets). */
typedef void (*LaunchFn)(Bench *b, void *user, int set);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int wanted(const Bench *b, const char *part) { return !b->only || strstr(b->only, part) != NULL; }

/* One CSV row; gbps or tflops 0: not measured for this kernel. */
static void csv_row(Bench *b, const char *kernel, const char *size, double ms, double gbps, double tflops) {
  if (!b->csv) return;
  fprintf(b->csv, "%s,%s,tile,%.6f,", kernel, size, ms);
  if (gbps > 0) fprintf(b->csv, "%.3f", gbps);
  fprintf(b->csv, ",");
  if (tflops > 0) fprintf(b->csv, "%.3f", tflops);
  fprintf(b->csv, ",%s\n", b->gpu);
  fflush(b->csv);
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double event_ms(Bench *b, tile_event start, tile_event end) {
  float ms = 0;
  EXAMPLE_TRY(&b->ex, tile_event_elapsed(b->ex.ctx, start, end, &ms));
  return ms;
}

/* Options with one constexpr, `*define` (which must outlive them), for `kernel` (NULL: the file's only
 * one) on num_warps warps (0: the config's, else 4). */
static tile_options one_define(const char *const *define, const char *kernel, int num_warps) {
  tile_options opts;
  tile_options_init(&opts);
  opts.defines = define;
  opts.num_defines = 1;
  opts.kernel = kernel;
  opts.num_warps = num_warps;
  return opts;
}

/* Fills the flush buffer with int32 `value`s: a kernel launch like any other, queued behind the last. */
static const char FILL_SOURCE[] =
    "@triton.jit\n"
    "def fill(out, value, n, BLOCK: tl.constexpr):\n"
    "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(out + offsets, value, mask=offsets < n)\n";
enum { FILL_BLOCK = 4096 };

static void make_fill(Bench *b) {
  char block[32];
  snprintf(block, sizeof block, "BLOCK=%d", FILL_BLOCK);
  const char *define = block;
  tile_options opts = one_define(&define, NULL, 8);
  EXAMPLE_TRY(&b->ex, tile_kernel_create(b->ex.ctx, "fill.tl", FILL_SOURCE, sizeof FILL_SOURCE - 1, &opts, &b->fill));
}

static void flush_l2(Bench *b, int value) {
  size_t n = b->flush_bytes / sizeof(int32_t);
  unsigned grid[3] = {(unsigned)((n + FILL_BLOCK - 1) / FILL_BLOCK), 1, 1};
  tile_arg args[] = {tile_buffer(b->flush, "i32", n), tile_int(value), tile_int((long long)n)};
  EXAMPLE_TRY(&b->ex, tile_launch(b->fill, grid, NULL, args, 3));
}

/* Mean time of `count` back-to-back runs of `launch`, no flush: the estimate
 * that sizes the measurement. */
static double estimate_ms(Bench *b, LaunchFn launch, void *user, int sets, int count) {
  tile_context *ctx = b->ex.ctx;
  EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->start[0], NULL));
  for (int i = 0; i < count; i++) launch(b, user, i % sets);
  EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->end[0], NULL));
  EXAMPLE_TRY(&b->ex, tile_synchronize(ctx));
  return event_ms(b, b->start[0], b->end[0]) / count;
}

/* The median time of one launch with a cold L2 (see the file comment). */
static double time_launch(Bench *b, LaunchFn launch, void *user, int sets) {
  tile_context *ctx = b->ex.ctx;
  for (int set = 0; set < sets; set++) launch(b, user, set); /* compiles, if not yet; every set gets a result */
  double each = estimate_ms(b, launch, user, sets, 5);
  int warmup = (int)(WARMUP_MS / each);
  if (!b->ex.quick && warmup > 5) estimate_ms(b, launch, user, sets, warmup < 20000 ? warmup : 20000);
  int reps = (int)(TARGET_MS / (each + b->flush_ms));
  reps = reps < b->min_reps ? b->min_reps : reps > b->max_reps ? b->max_reps : reps;
  for (int r = 0; r < reps; r++) {
    flush_l2(b, r & 0xff);
    EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->start[r], NULL));
    launch(b, user, r % sets);
    EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->end[r], NULL));
  }
  EXAMPLE_TRY(&b->ex, tile_synchronize(ctx));
  static double ms[MAX_REPS];
  for (int r = 0; r < reps; r++) ms[r] = event_ms(b, b->start[r], b->end[r]);
  return median(ms, reps);
}

/* How many copies of a working set of `bytes` to rotate through. */
static int input_sets(size_t bytes) {
  if (bytes >= L2_BYTES) return 1;
  size_t sets = FLUSH_BYTES / bytes;
  return sets < 2 ? 2 : sets > MAX_SETS ? MAX_SETS : (int)sets;
}

static void kernel_path(const Bench *b, const char *example, char *path, size_t size) {
  snprintf(path, size, "%s/examples/%s/%s.tl", b->source_dir, example, example);
}

static tile_kernel *create_kernel(Bench *b, const char *example, const tile_options *opts) {
  char path[1024];
  kernel_path(b, example, path, sizeof path);
  tile_kernel *k = NULL;
  EXAMPLE_TRY(&b->ex, tile_kernel_create_file(b->ex.ctx, path, opts, &k));
  return k;
}

/* ---- vector add -------------------------------------------------------------- */

typedef struct VectorAdd {
  tile_kernel *kernel;
  long long n;
  void *x[MAX_SETS], *y[MAX_SETS], *out[MAX_SETS];
} VectorAdd;

static void add_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  const VectorAdd *v = user;
  grid[0] = (unsigned)example_cdiv(v->n, example_constexpr(k, "BLOCK_SIZE"));
  grid[1] = grid[2] = 1;
}

static void add_launch(Bench *b, void *user, int set) {
  VectorAdd *v = user;
  size_t n = (size_t)v->n;
  tile_arg args[] = {tile_buffer(v->x[set], "fp32", n), tile_buffer(v->y[set], "fp32", n),
                     tile_buffer(v->out[set], "fp32", n), tile_int(v->n)};
  EXAMPLE_TRY(&b->ex, tile_launch_grid(v->kernel, add_grid, v, NULL, args, 4));
}

static tile_kernel *vector_add_kernel(Bench *b) {
  static const char *const define = "BLOCK_SIZE=1024";
  tile_options opts = one_define(&define, NULL, 0);
  return create_kernel(b, "vector_add", &opts);
}

/* Every set's output must be exactly x + y. */
static long check_add(Bench *b, VectorAdd *v, int sets, const float *x, const float *y) {
  float *out = malloc(sizeof(float) * (size_t)v->n);
  long bad = 0;
  for (int s = 0; s < sets; s++) {
    example_download(&b->ex, out, v->out[s], sizeof(float) * (size_t)v->n);
    for (long long i = 0; i < v->n; i++) bad += !(out[i] == x[i] + y[i]);
  }
  free(out);
  return bad;
}

static void bench_vector_add_size(Bench *b, tile_kernel *kernel, long long n) {
  size_t bytes = sizeof(float) * (size_t)n;
  int sets = input_sets(3 * bytes);
  VectorAdd v = {kernel, n, {NULL}, {NULL}, {NULL}};
  float *x = malloc(bytes), *y = malloc(bytes);
  for (long long i = 0; i < n; i++) {
    x[i] = (float)example_uniform(&b->ex);
    y[i] = (float)example_uniform(&b->ex);
  }
  for (int s = 0; s < sets; s++) {
    v.x[s] = example_alloc(&b->ex, bytes), v.y[s] = example_alloc(&b->ex, bytes), v.out[s] = example_alloc(&b->ex, bytes);
    example_upload(&b->ex, v.x[s], x, bytes);
    example_upload(&b->ex, v.y[s], y, bytes);
    example_poison(&b->ex, v.out[s], bytes);
  }
  double ms = time_launch(b, add_launch, &v, sets);
  double gbps = 3.0 * (double)bytes / (ms * 1e6);
  long bad = check_add(b, &v, sets, x, y);
  b->ex.failures += bad != 0;
  printf("  vector_add  n=%-10lld %9.4f ms %8.1f GB/s  (%d input set%s)%s\n", n, ms, gbps, sets, sets > 1 ? "s" : "",
         bad ? "  WRONG RESULT" : "");
  char size[32];
  snprintf(size, sizeof size, "%lld", n);
  csv_row(b, "vector_add", size, ms, gbps, 0);
  for (int s = 0; s < sets; s++) tile_free(b->ex.ctx, v.x[s]), tile_free(b->ex.ctx, v.y[s]), tile_free(b->ex.ctx, v.out[s]);
  free(x), free(y);
}

static void bench_vector_add(Bench *b) {
  printf("vector add, fp32 (GB/s = 3 * n * 4 bytes / time)\n");
  tile_kernel *kernel = vector_add_kernel(b);
  int last = b->ex.quick ? 14 : 28;
  for (int e = 12; e <= last; e += b->ex.quick ? 2 : 1) bench_vector_add_size(b, kernel, 1ll << e);
  tile_kernel_destroy(kernel);
}

/* ---- softmax ----------------------------------------------------------------- */

typedef struct Softmax {
  tile_kernel *kernel;
  int rows, cols;
  void *x[MAX_SETS], *y[MAX_SETS];
} Softmax;

static void softmax_launch(Bench *b, void *user, int set) {
  Softmax *s = user;
  size_t n = (size_t)s->rows * s->cols;
  unsigned grid[3] = {(unsigned)s->rows, 1, 1};
  tile_arg args[] = {tile_buffer(s->y[set], "fp32", n), tile_buffer(s->x[set], "fp32", n), tile_int(s->cols),
                     tile_int(s->cols), tile_int(s->cols)};
  EXAMPLE_TRY(&b->ex, tile_launch(s->kernel, grid, NULL, args, 5));
}

/* The tutorial's host logic: BLOCK_SIZE = next_power_of_2(n_cols), num_warps 4/8/16. */
static tile_kernel *softmax_kernel(Bench *b, int cols) {
  long long block = 1;
  while (block < cols) block *= 2;
  char define[64];
  snprintf(define, sizeof define, "BLOCK_SIZE=%lld", block);
  const char *text = define;
  tile_options opts = one_define(&text, NULL, b->softmax_warps ? b->softmax_warps : block >= 4096 ? 16 : block >= 2048 ? 8 : 4);
  return create_kernel(b, "softmax", &opts);
}

/* Rows 0, the last and a few between, against fp64; relative error 1e-4. */
static long check_softmax(Bench *b, const Softmax *s, const float *x) {
  float *y = malloc(sizeof(float) * (size_t)s->rows * s->cols);
  example_download(&b->ex, y, s->y[0], sizeof(float) * (size_t)s->rows * s->cols);
  long bad = 0;
  for (int k = 0; k <= 8; k++) {
    size_t r = (size_t)((long long)(s->rows - 1) * k / 8), base = r * (size_t)s->cols;
    double max = -INFINITY, sum = 0;
    for (int c = 0; c < s->cols; c++) max = fmax(max, x[base + c]);
    for (int c = 0; c < s->cols; c++) sum += exp((double)x[base + c] - max);
    for (int c = 0; c < s->cols; c++) {
      double want = exp((double)x[base + c] - max) / sum;
      bad += !(fabs(y[base + c] - want) <= 1e-4 * want + 1e-9);
    }
  }
  free(y);
  return bad;
}

static void bench_softmax_size(Bench *b, int rows, int cols) {
  size_t bytes = sizeof(float) * (size_t)rows * cols;
  int sets = input_sets(2 * bytes);
  Softmax s = {softmax_kernel(b, cols), rows, cols, {NULL}, {NULL}};
  float *x = malloc(bytes);
  for (size_t i = 0; i < (size_t)rows * cols; i++) x[i] = (float)example_normal(&b->ex);
  for (int k = 0; k < sets; k++) {
    s.x[k] = example_alloc(&b->ex, bytes), s.y[k] = example_alloc(&b->ex, bytes);
    example_upload(&b->ex, s.x[k], x, bytes);
    example_poison(&b->ex, s.y[k], bytes);
  }
  double ms = time_launch(b, softmax_launch, &s, sets);
  double gbps = 2.0 * (double)bytes / (ms * 1e6);
  long bad = check_softmax(b, &s, x);
  b->ex.failures += bad != 0;
  printf("  softmax     %dx%-6d %9.4f ms %8.1f GB/s  (%d input set%s)%s\n", rows, cols, ms, gbps, sets,
         sets > 1 ? "s" : "", bad ? "  WRONG RESULT" : "");
  char size[32];
  snprintf(size, sizeof size, "%d", cols);
  csv_row(b, "softmax", size, ms, gbps, 0);
  for (int k = 0; k < sets; k++) tile_free(b->ex.ctx, s.x[k]), tile_free(b->ex.ctx, s.y[k]);
  tile_kernel_destroy(s.kernel);
  free(x);
}

static void bench_softmax(Bench *b) {
  int rows = b->ex.quick ? 64 : 4096;
  printf("softmax, fp32, M=%d (GB/s = 2 * M * N * 4 bytes / time)\n", rows);
  const int *cols = b->ex.quick ? SOFTMAX_COLS_QUICK : SOFTMAX_COLS;
  int count = b->ex.quick ? COUNT(SOFTMAX_COLS_QUICK) : COUNT(SOFTMAX_COLS);
  if (b->softmax_cols) {
    char *end;
    for (const char *p = b->softmax_cols;; p = end + 1) {
      long n = strtol(p, &end, 10);
      if (end == p || n < 1 || n > 1 << 20) return (void)fprintf(stderr, "bench: bad --softmax-cols %s\n", b->softmax_cols);
      bench_softmax_size(b, rows, (int)n);
      if (*end != ',') return;
    }
  }
  for (int i = 0; i < count; i++) bench_softmax_size(b, rows, cols[i]);
}

/* ---- matmul ------------------------------------------------------------------ */

typedef struct Matmul {
  tile_kernel *kernel;
  int m, n, k;
  void *a[MAX_SETS], *b[MAX_SETS], *c[MAX_SETS];
} Matmul;

/* grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), ) */
static void matmul_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  const Matmul *mm = user;
  grid[0] = (unsigned)(example_cdiv(mm->m, example_constexpr(k, "BLOCK_SIZE_M")) *
                       example_cdiv(mm->n, example_constexpr(k, "BLOCK_SIZE_N")));
  grid[1] = grid[2] = 1;
}

static void matmul_launch(Bench *b, void *user, int set) {
  Matmul *mm = user;
  size_t m = (size_t)mm->m, n = (size_t)mm->n, k = (size_t)mm->k;
  tile_arg args[] = {tile_buffer(mm->a[set], "fp16", m * k), tile_buffer(mm->b[set], "fp16", k * n),
                     tile_buffer(mm->c[set], "fp16", m * n), tile_int(mm->m), tile_int(mm->n), tile_int(mm->k),
                     tile_int(mm->k), tile_int(1), tile_int(mm->n), tile_int(1), tile_int(mm->n), tile_int(1)};
  EXAMPLE_TRY(&b->ex, tile_launch_grid(mm->kernel, matmul_grid, mm, NULL, args, 12));
}

/* The example's kernel without epilogue, autotuned at each shape's first launch (or --matmul-config's). */
static tile_kernel *matmul_kernel(Bench *b) {
  static const char *const define = "ACTIVATION=\"\"";
  tile_options opts = one_define(&define, "matmul_kernel", 0);
  opts.config = b->matmul_config;
  return create_kernel(b, "matmul", &opts);
}

/* 256 sampled entries of every set's C against fp64 sums: within 2^-9 of
 * the value (fp16 output) plus 2^-14 of sum |a*b| (fp32 accumulation). */
static long check_matmul(Bench *b, const Matmul *mm, int sets, const uint16_t *a, const uint16_t *bm) {
  size_t m = (size_t)mm->m, n = (size_t)mm->n, k = (size_t)mm->k;
  uint16_t *c = malloc(sizeof(uint16_t) * m * n);
  long bad = 0;
  for (int s = 0; s < sets; s++) {
    example_download(&b->ex, c, mm->c[s], sizeof(uint16_t) * m * n);
    for (int t = 0; t < 256; t++) {
      size_t i = (size_t)(example_uniform(&b->ex) * (double)m), j = (size_t)(example_uniform(&b->ex) * (double)n);
      double want = 0, magnitude = 0;
      for (size_t p = 0; p < k; p++) {
        double x = example_half_value(a[i * k + p]) * example_half_value(bm[p * n + j]);
        want += x;
        magnitude += fabs(x);
      }
      bad += !(fabs(example_half_value(c[i * n + j]) - want) <= 0x1p-9 * fabs(want) + 0x1p-14 * magnitude);
    }
  }
  free(c);
  return bad;
}

static uint16_t *random_halves(Bench *b, size_t count) {
  uint16_t *h = malloc(sizeof(uint16_t) * count);
  for (size_t i = 0; i < count; i++) h[i] = example_random_half(&b->ex);
  return h;
}

static void bench_matmul_shape(Bench *b, tile_kernel *kernel, const char *group, int m, int n, int k) {
  size_t a_bytes = 2 * (size_t)m * k, b_bytes = 2 * (size_t)k * n, c_bytes = 2 * (size_t)m * n;
  int sets = input_sets(a_bytes + b_bytes + c_bytes);
  Matmul mm = {kernel, m, n, k, {NULL}, {NULL}, {NULL}};
  uint16_t *a = random_halves(b, a_bytes / 2), *bm = random_halves(b, b_bytes / 2);
  for (int s = 0; s < sets; s++) {
    mm.a[s] = example_alloc(&b->ex, a_bytes), mm.b[s] = example_alloc(&b->ex, b_bytes), mm.c[s] = example_alloc(&b->ex, c_bytes);
    example_upload(&b->ex, mm.a[s], a, a_bytes);
    example_upload(&b->ex, mm.b[s], bm, b_bytes);
    example_poison(&b->ex, mm.c[s], c_bytes);
  }
  double ms = time_launch(b, matmul_launch, &mm, sets);
  double tflops = 2.0 * m * n * (double)k / (ms * 1e9);
  long bad = check_matmul(b, &mm, sets, a, bm);
  b->ex.failures += bad != 0;
  char kernel_name[32], size[64];
  snprintf(kernel_name, sizeof kernel_name, "matmul_%s", group);
  snprintf(size, sizeof size, "%dx%dx%d", m, n, k);
  char refill[16];
  example_refill(kernel, refill, sizeof refill);
  printf("  matmul %-6s %-17s %9.4f ms %7.1f TFLOP/s  (config %d: %lldx%lldx%lld, %lld warps, %lld stages, refill %s%s)%s\n",
         group, size, ms, tflops, tile_kernel_config(kernel), example_constexpr(kernel, "BLOCK_SIZE_M"),
         example_constexpr(kernel, "BLOCK_SIZE_N"), example_constexpr(kernel, "BLOCK_SIZE_K"),
         example_constexpr(kernel, "num_warps"), example_constexpr(kernel, "num_stages"), refill, example_tma(kernel),
         bad ? "  WRONG RESULT" : "");
  csv_row(b, kernel_name, size, ms, 0, tflops);
  for (int s = 0; s < sets; s++) tile_free(b->ex.ctx, mm.a[s]), tile_free(b->ex.ctx, mm.b[s]), tile_free(b->ex.ctx, mm.c[s]);
  free(a), free(bm);
}

static int out_of_time(Bench *b, const char *what) {
  if (b->time_limit <= 0 || now() - b->started < b->time_limit) return 0;
  printf("  %s: skipped, --time-limit %.0f s reached\n", what, b->time_limit);
  return 1;
}

/* Reads the next MxNxK of a --matmul-shapes list at *p: 1, or 0 at its end, or -1 if it is not one. */
static int next_shape(const char **p, int *m, int *n, int *k) {
  int used = 0;
  if (!**p) return 0;
  if (sscanf(*p, "%dx%dx%d%n", m, n, k, &used) != 3 || *m < 1 || *n < 1 || *k < 1 || ((*p)[used] && (*p)[used] != ','))
    return -1;
  *p += used + ((*p)[used] == ',');
  return 1;
}

static void bench_matmul(Bench *b) {
  printf("matmul, fp16 (fp32 accumulation), the %s example kernel (TFLOP/s = 2 * M * N * K / time)\n",
         b->matmul_config < 0 ? "autotuned" : "one config of the");
  tile_kernel *kernel = matmul_kernel(b);
  if (b->matmul_shapes) {
    int m, n, k;
    for (const char *p = b->matmul_shapes; next_shape(&p, &m, &n, &k) > 0;) bench_matmul_shape(b, kernel, "shape", m, n, k);
    return tile_kernel_destroy(kernel);
  }
  int squares = b->ex.quick ? COUNT(MATMUL_SQUARE_QUICK) : COUNT(MATMUL_SQUARE);
  char what[64];
  for (int i = 0; i < squares; i++) {
    int s = b->ex.quick ? MATMUL_SQUARE_QUICK[i] : MATMUL_SQUARE[i];
    snprintf(what, sizeof what, "matmul %dx%dx%d", s, s, s);
    if (!out_of_time(b, what)) bench_matmul_shape(b, kernel, "square", s, s, s);
  }
  for (int j = 0; j < COUNT(MATMUL_LLM_N); j++)
    for (int i = 0; i < (b->ex.quick ? 1 : COUNT(MATMUL_LLM_M)); i++) {
      int m = b->ex.quick ? 16 : MATMUL_LLM_M[i], n = b->ex.quick ? MATMUL_LLM_N[j] / 32 : MATMUL_LLM_N[j];
      int k = b->ex.quick ? MATMUL_LLM_K[j] / 32 : MATMUL_LLM_K[j];
      snprintf(what, sizeof what, "matmul %dx%dx%d", m, n, k);
      if (!out_of_time(b, what)) bench_matmul_shape(b, kernel, "llm", m, n, k);
    }
  tile_kernel_destroy(kernel);
}

/* ---- compile time ------------------------------------------------------------ */

/* Removes a cache directory and what it holds (files and folders). */
static void remove_tree(const char *path) {
  DIR *dir = opendir(path);
  if (dir) {
    struct dirent *e;
    while ((e = readdir(dir))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char child[1024];
      snprintf(child, sizeof child, "%s/%s", path, e->d_name);
      struct stat st;
      if (!lstat(child, &st) && S_ISDIR(st.st_mode)) remove_tree(child);
      else unlink(child);
    }
    closedir(dir);
  }
  rmdir(path);
}

typedef struct CompileCase {
  const char *name;    /* in the table and the CSV */
  const char *example;
  const char *kernel;  /* function name, or NULL */
  const char *define;  /* one constexpr */
  int config;          /* @autotune config, or -1: every config, as the autotuner compiles them */
  const char *threads; /* TILE_COMPILE_THREADS, or NULL: the default (one per core) */
  const char *dtype;   /* of the buffers */
  int num_buffers, num_ints;
  long long ints[9];   /* the integer arguments, as the example passes them */
} CompileCase;

/* Seconds of tile_kernel_compile for `c` in a new context on cache `dir`. */
static double compile_once(Bench *b, const CompileCase *c, const char *dir) {
  setenv("TILE_CACHE_DIR", dir, 1);
  if (c->threads) setenv("TILE_COMPILE_THREADS", c->threads, 1);
  Example ex = {0};
  ex.quiet = 1;
  example_open(&ex, "bench", b->ex.on_cpu, 0, 1);
  unsetenv("TILE_COMPILE_THREADS");
  tile_options opts = one_define(&c->define, c->kernel, 0);
  opts.config = c->config;
  char path[1024];
  kernel_path(b, c->example, path, sizeof path);
  tile_kernel *k = NULL;
  EXAMPLE_TRY(&ex, tile_kernel_create_file(ex.ctx, path, &opts, &k));
  tile_arg args[12];
  void *buffers[3];
  for (int i = 0; i < c->num_buffers; i++) {
    buffers[i] = example_alloc(&ex, 4096);
    args[i] = tile_buffer(buffers[i], c->dtype, 1024);
  }
  for (int i = 0; i < c->num_ints; i++) args[c->num_buffers + i] = tile_int(c->ints[i]);
  double t0 = now();
  EXAMPLE_TRY(&ex, tile_kernel_compile(k, args, c->num_buffers + c->num_ints));
  double seconds = now() - t0;
  tile_kernel_destroy(k);
  for (int i = 0; i < c->num_buffers; i++) tile_free(ex.ctx, buffers[i]);
  tile_context_destroy(ex.ctx);
  return seconds;
}

static void bench_compile_case(Bench *b, const CompileCase *c) {
  double cold[COMPILE_REPS], warm[COMPILE_REPS];
  int reps = b->ex.quick ? 1 : COMPILE_REPS;
  char warm_dir[] = "/tmp/tile-bench-warm-XXXXXX";
  if (!mkdtemp(warm_dir)) return (void)fprintf(stderr, "bench: cannot make a cache directory in /tmp\n");
  compile_once(b, c, warm_dir); /* fills the warm cache */
  for (int r = 0; r < reps; r++) {
    char cold_dir[] = "/tmp/tile-bench-cold-XXXXXX";
    if (!mkdtemp(cold_dir)) return (void)fprintf(stderr, "bench: cannot make a cache directory in /tmp\n");
    cold[r] = 1e3 * compile_once(b, c, cold_dir);
    remove_tree(cold_dir);
    warm[r] = 1e3 * compile_once(b, c, warm_dir);
  }
  remove_tree(warm_dir);
  double cold_ms = median(cold, reps), warm_ms = median(warm, reps);
  printf("  %-26s cold %9.2f ms   warm (disk cache) %7.3f ms\n", c->name, cold_ms, warm_ms);
  csv_row(b, "compile_cold", c->name, cold_ms, 0, 0);
  csv_row(b, "compile_warm", c->name, warm_ms, 0, 0);
}

static void bench_compile(Bench *b) {
  static const CompileCase cases[] = {
#define MATMUL_ARGS "fp16", 3, 9, {512, 512, 512, 512, 1, 512, 1, 512, 1}
      {"vector_add", "vector_add", NULL, "BLOCK_SIZE=1024", -1, NULL, "fp32", 3, 1, {98432}},
      {"softmax", "softmax", NULL, "BLOCK_SIZE=1024", -1, NULL, "fp32", 2, 3, {781, 781, 781}},
      {"matmul", "matmul", "matmul_kernel", "ACTIVATION=\"leaky_relu\"", 0, NULL, MATMUL_ARGS},
      {"matmul_8_configs", "matmul", "matmul_kernel", "ACTIVATION=\"\"", -1, NULL, MATMUL_ARGS},
      {"matmul_8_configs_1_thread", "matmul", "matmul_kernel", "ACTIVATION=\"\"", -1, "1", MATMUL_ARGS},
#undef MATMUL_ARGS
  };
  printf("compile time to a cubin (tile_kernel_compile; median of %d)\n", b->ex.quick ? 1 : COMPILE_REPS);
  const char *saved = getenv("TILE_CACHE_DIR");
  char *restore = saved ? strdup(saved) : NULL;
  char first_dir[] = "/tmp/tile-bench-first-XXXXXX";
  if (mkdtemp(first_dir)) { /* the process's first compile pays one-time set-up: not counted */
    printf("  (first compile in the process, not counted: %.2f ms)\n", 1e3 * compile_once(b, &cases[0], first_dir));
    remove_tree(first_dir);
  }
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) bench_compile_case(b, &cases[i]);
  if (restore) setenv("TILE_CACHE_DIR", restore, 1), free(restore);
  else unsetenv("TILE_CACHE_DIR");
}

/* ---- host time per launch ---------------------------------------------------- */

static void bench_launch(Bench *b) {
  int launches = b->ex.quick ? 200 : LAUNCHES;
  VectorAdd v = {vector_add_kernel(b), 1024, {NULL}, {NULL}, {NULL}};
  v.x[0] = example_alloc(&b->ex, 4096), v.y[0] = example_alloc(&b->ex, 4096), v.out[0] = example_alloc(&b->ex, 4096);
  EXAMPLE_TRY(&b->ex, tile_memset(b->ex.ctx, v.x[0], 0, 4096));
  EXAMPLE_TRY(&b->ex, tile_memset(b->ex.ctx, v.y[0], 0, 4096));
  for (int i = 0; i < 100; i++) add_launch(b, &v, 0); /* compiled and cached */
  EXAMPLE_TRY(&b->ex, tile_synchronize(b->ex.ctx));
  double t0 = now();
  for (int i = 0; i < launches; i++) add_launch(b, &v, 0);
  double t1 = now();
  EXAMPLE_TRY(&b->ex, tile_synchronize(b->ex.ctx));
  double t2 = now();
  double host_us = 1e6 * (t1 - t0) / launches, total_us = 1e6 * (t2 - t0) / launches;
  printf("host time per launch (tile_launch_grid, vector add of 1024 fp32, %d launches)\n", launches);
  printf("  %.2f us per launch on the host; %.2f us with the final synchronise\n", host_us, total_us);
  csv_row(b, "launch_host", "1024", host_us * 1e-3, 0, 0);
  csv_row(b, "launch_sync", "1024", total_us * 1e-3, 0, 0);
  tile_free(b->ex.ctx, v.x[0]), tile_free(b->ex.ctx, v.y[0]), tile_free(b->ex.ctx, v.out[0]);
  tile_kernel_destroy(v.kernel);
}

/* ---- main ---------------------------------------------------------------------- */

static void usage(void) {
  fprintf(stderr, "usage: bench [--quick] [--cpu] [--csv FILE] [--only vector_add,softmax,compile,launch,matmul]\n"
                  "             [--time-limit SECONDS] [--softmax-warps N] [--softmax-cols N,N...]\n"
                  "             [--matmul-shapes MxNxK,...] [--matmul-config N] [SOURCE_DIR]\n");
  exit(2);
}

static void parse(Bench *b, int argc, char **argv, int *cpu) {
  b->source_dir = TILE_SOURCE_DIR;
  b->matmul_config = -1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) b->ex.quick = 1;
    else if (!strcmp(argv[i], "--cpu")) *cpu = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) b->only = argv[++i];
    else if (!strcmp(argv[i], "--time-limit") && i + 1 < argc) b->time_limit = atof(argv[++i]);
    else if (!strcmp(argv[i], "--softmax-warps") && i + 1 < argc) b->softmax_warps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--softmax-cols") && i + 1 < argc) b->softmax_cols = argv[++i];
    else if (!strcmp(argv[i], "--matmul-shapes") && i + 1 < argc) {
      int m, n, k, got;
      const char *p = b->matmul_shapes = argv[++i];
      while ((got = next_shape(&p, &m, &n, &k)) > 0) continue;
      if (got < 0 || !*b->matmul_shapes) fprintf(stderr, "bench: bad --matmul-shapes %s (MxNxK,...)\n", argv[i]), exit(2);
    }
    else if (!strcmp(argv[i], "--matmul-config") && i + 1 < argc) {
      char *end;
      long config = strtol(argv[++i], &end, 10);
      if (end == argv[i] || *end || config < 0 || config > 1000)
        fprintf(stderr, "bench: bad --matmul-config %s (an autotune config's index)\n", argv[i]), exit(2);
      b->matmul_config = (int)config;
    }
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      b->csv = fopen(argv[++i], "w");
      if (!b->csv) fprintf(stderr, "bench: cannot write %s\n", argv[i]), exit(1);
    } else if (argv[i][0] == '-') usage();
    else b->source_dir = argv[i];
  }
}

static void set_up(Bench *b) {
  tile_context *ctx = b->ex.ctx;
  const char *name = b->ex.on_cpu ? "CPU interpreter" : tile_device_name(ctx);
  snprintf(b->gpu, sizeof b->gpu, "%s", name);
  for (char *c = b->gpu; *c; c++) *c = *c == ',' ? ' ' : *c;
  if (b->ex.on_cpu && !b->ex.quick) {
    printf("bench: on the interpreter only --quick makes sense: using it (the numbers mean nothing)\n");
    b->ex.quick = 1;
  }
  b->flush_bytes = b->ex.quick ? (size_t)1 << 20 : FLUSH_BYTES;
  b->flush = example_alloc(&b->ex, b->flush_bytes);
  b->min_reps = b->ex.quick ? 2 : 20;
  b->max_reps = b->ex.quick ? 3 : MAX_REPS;
  for (int r = 0; r < MAX_REPS; r++) {
    EXAMPLE_TRY(&b->ex, tile_event_create(ctx, &b->start[r]));
    EXAMPLE_TRY(&b->ex, tile_event_create(ctx, &b->end[r]));
  }
  make_fill(b);
  flush_l2(b, 0); /* compiles it */
  EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->start[0], NULL));
  flush_l2(b, 1);
  EXAMPLE_TRY(&b->ex, tile_event_record(ctx, b->end[0], NULL));
  EXAMPLE_TRY(&b->ex, tile_synchronize(ctx));
  b->flush_ms = event_ms(b, b->start[0], b->end[0]);
  if (b->csv) fprintf(b->csv, "kernel,size,impl,ms,gbps,tflops,gpu\n");
}

int main(int argc, char **argv) {
  static Bench b; /* large: the events */
  int cpu = 0;
  parse(&b, argc, argv, &cpu);
  b.started = now();
  example_open(&b.ex, "bench", cpu, 0, 20240601);
  set_up(&b);
  printf("bench: %s\n", b.gpu);
  if (wanted(&b, "vector_add")) bench_vector_add(&b);
  if (wanted(&b, "softmax")) bench_softmax(&b);
  if (wanted(&b, "compile")) bench_compile(&b);
  if (wanted(&b, "launch")) bench_launch(&b);
  if (wanted(&b, "matmul")) bench_matmul(&b);
  for (int r = 0; r < MAX_REPS; r++) tile_event_destroy(b.ex.ctx, b.start[r]), tile_event_destroy(b.ex.ctx, b.end[r]);
  tile_free(b.ex.ctx, b.flush);
  tile_kernel_destroy(b.fill);
  if (b.csv) fclose(b.csv);
  return example_finish(&b.ex);
}
