/* Launching kernels through the public API (tile_kernel_create, tile_malloc,
 * tile_launch_grid) on the CPU interpreter: every seed kernel at irregular
 * sizes on fresh random inputs, outputs poisoned, against independent C
 * references; specialisation (types, alignment, ':1'), constexprs for grid
 * functions, device_print on stdout; every argument check with its exact
 * message, before anything runs; device memory, streams and events on the
 * host; the no-GPU error of each GPU call; AOT kernels (metadata checks,
 * launches checked against the metadata). */
#include "check.h"
#include "tile/tile.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static float frand(void) { return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f; }

static uint16_t random_half(void) { /* value in about [-2, 2] */
  uint16_t sign = (uint16_t)((rand() & 1) << 15), exp = (uint16_t)(8 + rand() % 8), mant = (uint16_t)(rand() & 0x3ff);
  return (uint16_t)(sign | (exp << 10) | mant);
}

static double half_value(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v = exp ? ldexp(1.0 + mant / 1024.0, exp - 15) : ldexp(mant / 1024.0, -14);
  if (exp == 31) v = mant ? NAN : INFINITY;
  return h & 0x8000 ? -v : v;
}

static tile_context *cpu_context(void) {
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  CHECK(tile_context_use_cpu(ctx) == TILE_OK && tile_context_on_cpu(ctx));
  return ctx;
}

static tile_kernel *seed(tile_context *ctx, const char *file, const char *kernel, const char **defines, int n, int config) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/seeds/%s", TILE_SOURCE_DIR, file);
  tile_options o;
  tile_options_init(&o);
  o.kernel = kernel;
  o.defines = defines;
  o.num_defines = n;
  o.config = config;
  tile_kernel *k = NULL;
  if (tile_kernel_create_file(ctx, path, &o, &k) != TILE_OK) fprintf(stderr, "%s: %s\n", file, tile_error(ctx));
  CHECK(k != NULL);
  return k;
}

/* Device memory holding a copy of `host` (bytes long). */
static void *upload(tile_context *ctx, const void *host, size_t bytes) {
  void *d = NULL;
  CHECK(tile_malloc(ctx, &d, bytes) == TILE_OK);
  CHECK(tile_memcpy_to_device(ctx, d, host, bytes) == TILE_OK);
  return d;
}

static void download(tile_context *ctx, void *host, const void *device, size_t bytes) {
  CHECK(tile_memcpy_to_host(ctx, host, device, bytes) == TILE_OK);
}

static int launched(tile_context *ctx, tile_kernel *k, tile_grid_fn grid, void *user, const tile_arg *args, int n) {
  tile_status s = tile_launch_grid(k, grid, user, NULL, args, n);
  if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_error(ctx));
  return s == TILE_OK;
}

static long long constexpr_of(const tile_kernel *k, const char *name) {
  long long v = -1;
  CHECK(tile_kernel_constexpr(k, name, &v) == TILE_OK);
  return v;
}

static unsigned cdiv(long long a, long long b) { return b > 0 ? (unsigned)((a + b - 1) / b) : 0; }

/* ---- vector add ------------------------------------------------------------------------- */

/* Triton's grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),), n being argument `user`. */
static void grid_over_n(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  grid[0] = cdiv(args[*(int *)user].i, constexpr_of(k, "BLOCK_SIZE"));
}

static void test_vector_add(tile_context *ctx, tile_kernel *k, int n) {
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes + 4);
  for (int i = 0; i < n; i++) x[i] = frand(), y[i] = frand();
  for (int i = 0; i <= n; i++) z[i] = NAN;
  float *dx = upload(ctx, x, bytes), *dy = upload(ctx, y, bytes), *dz = upload(ctx, z, bytes + 4);
  tile_arg args[] = {tile_buffer(dx, "fp32", n), tile_buffer(dy, "fp32", n), tile_buffer(dz, "fp32", n), tile_int(n)};
  int n_index = 3;
  CHECK(launched(ctx, k, grid_over_n, &n_index, args, 4));
  download(ctx, z, dz, bytes + 4);
  int exact = 1;
  for (int i = 0; i < n; i++) exact &= z[i] == x[i] + y[i];
  CHECK(exact);
  CHECK(isnan(z[n])); /* the element past the end was not written */
  tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dz);
  free(x), free(y), free(z);
}

/* c[i * sc] = a[i * sa] + b[i * sb]: strides 1 specialise to ':1'. */
static void test_vector_add_strided(tile_context *ctx, int sa, int sb, int sc) {
  const char *defs[] = {"BLOCK_SIZE=256"};
  tile_kernel *k = seed(ctx, "vector_add_strided.tl", "_vector_add_kernel", defs, 1, -1);
  int m = 3001;
  float *a = malloc(sizeof(float) * m * sa), *b = malloc(sizeof(float) * m * sb), *c = malloc(sizeof(float) * m * sc);
  for (int i = 0; i < m * sa; i++) a[i] = frand();
  for (int i = 0; i < m * sb; i++) b[i] = frand();
  for (int i = 0; i < m * sc; i++) c[i] = NAN;
  float *da = upload(ctx, a, sizeof(float) * m * sa), *db = upload(ctx, b, sizeof(float) * m * sb);
  float *dc = upload(ctx, c, sizeof(float) * m * sc);
  tile_arg args[] = {tile_buffer(da, "fp32", 0), tile_buffer(db, "fp32", 0), tile_buffer(dc, "fp32", 0), tile_int(m),
                     tile_int(sa), tile_int(sb), tile_int(sc)};
  int m_index = 3;
  CHECK(k && launched(ctx, k, grid_over_n, &m_index, args, 7));
  download(ctx, c, dc, sizeof(float) * m * sc);
  int exact = 1;
  for (int i = 0; i < m * sc; i++) exact &= i % sc ? isnan(c[i]) : c[i] == a[i / sc * sa] + b[i / sc * sb];
  CHECK(exact);
  const char *meta = tile_kernel_metadata(k);
  if (sb == 1) CHECK_CONTAINS(meta, "{\"name\": \"stride_b\", \"type\": \"i32\", \"divisibility\": 1, \"position\": 5}");
  if (sb == 1) CHECK(constexpr_of(k, "stride_b") == 1);
  tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc);
  free(a), free(b), free(c);
}

/* ---- softmax ------------------------------------------------------------------------------ */

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

typedef struct SoftmaxCase {
  const char *file, *kernel;
  int config;
  unsigned programs; /* 0: one per row */
  unsigned rows;
} SoftmaxCase;

static void grid_softmax(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  const SoftmaxCase *c = user;
  grid[0] = c->programs ? c->programs : c->rows;
}

static void test_softmax(tile_context *ctx, SoftmaxCase c, int rows, int cols) {
  const char *defs[] = {"BLOCK_SIZE=1024", "BLOCK_SIZE_N=1024"};
  int row_kernel = !strcmp(c.kernel, "_row_softmax_kernel");
  c.rows = (unsigned)rows;
  tile_kernel *k = seed(ctx, c.file, c.kernel, row_kernel ? defs + 1 : defs, 1, c.config);
  size_t bytes = sizeof(float) * (size_t)rows * cols;
  float *in = malloc(bytes), *out = malloc(bytes);
  for (int i = 0; i < rows * cols; i++) in[i] = frand() * 4, out[i] = NAN;
  float *din = upload(ctx, in, bytes), *dout = upload(ctx, out, bytes);
  tile_arg args[8] = {tile_buffer(dout, "fp32", 0), tile_buffer(din, "fp32", 0), tile_int(cols), tile_int(cols),
                      tile_int(rows), tile_int(cols)};
  int n = c.programs ? 6 : 5;
  if (!c.programs) args[4] = tile_int(cols); /* (out, in, in_stride, out_stride, n_cols) */
  if (row_kernel) {                          /* (in, out, M, N, stride_in_m, stride_in_n, stride_out_m, stride_out_n) */
    tile_arg row_args[8] = {tile_buffer(din, "fp32", 0), tile_buffer(dout, "fp32", 0), tile_int(rows), tile_int(cols),
                            tile_int(cols), tile_int(1), tile_int(cols), tile_int(1)};
    memcpy(args, row_args, sizeof args);
    n = 8;
  }
  CHECK(k && launched(ctx, k, grid_softmax, &c, args, n));
  download(ctx, out, dout, bytes);
  double err = softmax_error(in, out, rows, cols);
  if (err >= 1e-5) fprintf(stderr, "%s: relative error %g\n", c.file, err);
  CHECK(err < 1e-5);
  if (row_kernel) CHECK(constexpr_of(k, "num_warps") == 8); /* config 3: num_warps=2**3 */
  tile_free(ctx, din), tile_free(ctx, dout);
  free(in), free(out);
}

/* ---- matmul ------------------------------------------------------------------------------- */

typedef struct MatmulCase {
  const char *file, *kernel;
  const char **defines;
  int n_defines, config;
  int fp16, act;          /* fp16 in and out (else fp32); leaky_relu epilogue */
  int two_d;              /* grid (cdiv(M, bm), cdiv(N, bn)), loads unmasked: A and B padded */
  const char *bm, *bn;    /* the block constexprs */
} MatmulCase;

static void grid_matmul(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  const MatmulCase *c = user;
  unsigned gm = cdiv(args[3].i, constexpr_of(k, c->bm)), gn = cdiv(args[4].i, constexpr_of(k, c->bn));
  grid[0] = c->two_d ? gm : gm * gn;
  grid[1] = c->two_d ? gn : 1;
}

static double load_value(const void *p, size_t i, int fp16) {
  return fp16 ? half_value(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

/* C = A x B in double, then Triton's leaky_relu(x + 1) if asked; the relative Frobenius error of c. */
static double matmul_error(const void *a, const void *b, const void *c, int M, int N, int K, int ldb, int fp16, int act) {
  double num = 0, den = 0;
  for (int m = 0; m < M; m++)
    for (int n = 0; n < N; n++) {
      double acc = 0;
      for (int k = 0; k < K; k++) acc += load_value(a, (size_t)m * K + k, fp16) * load_value(b, (size_t)k * ldb + n, fp16);
      if (act) acc = acc + 1 >= 0 ? acc + 1 : 0.01 * (acc + 1);
      double got = load_value(c, (size_t)m * N + n, fp16);
      if (isnan(got)) return INFINITY;
      num += (got - acc) * (got - acc);
      den += acc * acc;
    }
  return sqrt(num / den);
}

static void *random_matrix(size_t count, int fp16) {
  void *p = malloc(count * (fp16 ? 2 : 4));
  for (size_t i = 0; i < count; i++) {
    if (fp16) ((uint16_t *)p)[i] = random_half();
    else ((float *)p)[i] = frand();
  }
  return p;
}

static void test_matmul(tile_context *ctx, MatmulCase c, int M, int N, int K) {
  tile_kernel *k = seed(ctx, c.file, c.kernel, c.defines, c.n_defines, c.config);
  if (!k) return;
  size_t elem = c.fp16 ? 2 : 4;
  /* the 2-D kernels load whole blocks: pad A's rows and B's columns to the blocks (read, never used) */
  size_t a_count = (size_t)M * K + (c.two_d ? 64u * K : 0), b_count = (size_t)K * N + (c.two_d ? 64 : 0);
  void *a = random_matrix(a_count, c.fp16), *b = random_matrix(b_count, c.fp16), *out = malloc((size_t)M * N * elem);
  memset(out, 0xFF, (size_t)M * N * elem); /* NaN in both types */
  void *da = upload(ctx, a, a_count * elem), *db = upload(ctx, b, b_count * elem), *dc = upload(ctx, out, (size_t)M * N * elem);
  const char *dt = c.fp16 ? "fp16" : "fp32";
  tile_arg args[] = {tile_buffer(da, dt, 0), tile_buffer(db, dt, 0), tile_buffer(dc, dt, (size_t)M * N), tile_int(M),
                     tile_int(N), tile_int(K), tile_int(K), tile_int(1), tile_int(N), tile_int(1), tile_int(N), tile_int(1)};
  CHECK(launched(ctx, k, grid_matmul, &c, args, 12));
  download(ctx, out, dc, (size_t)M * N * elem);
  double err = matmul_error(a, b, out, M, N, K, N, c.fp16, c.act), tolerance = c.fp16 ? 1e-2 : 1e-5;
  if (err >= tolerance) fprintf(stderr, "%s %dx%dx%d: relative error %g\n", c.kernel, M, N, K, err);
  CHECK(err < tolerance);
  tile_free(ctx, da), tile_free(ctx, db), tile_free(ctx, dc);
  free(a), free(b), free(out);
}

/* On the interpreter, or with --gpu on the GPU (the same host code). */
static void test_seed_kernels(tile_context *ctx) {
  const char *defs[] = {"BLOCK_SIZE=1024"};
  tile_kernel *add = seed(ctx, "vector_add.tl", "add_kernel", defs, 1, -1);
  if (add) {
    test_vector_add(ctx, add, 98433);
    test_vector_add(ctx, add, 1000);
    test_vector_add(ctx, add, 64);
  }
  test_vector_add_strided(ctx, 1, 1, 1);
  test_vector_add_strided(ctx, 2, 1, 3);
  test_softmax(ctx, (SoftmaxCase){"softmax.tl", "softmax_kernel", -1, 0, 0}, 203, 781);
  test_softmax(ctx, (SoftmaxCase){"softmax_persistent.tl", "softmax_kernel", -1, 32, 0}, 203, 781);
  test_softmax(ctx, (SoftmaxCase){"softmax_row_autotuned.tl", "_row_softmax_kernel", 3, 0, 0}, 77, 1000);
  const char *basic[] = {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=16", "GROUP_SIZE_M=4"};
  test_matmul(ctx, (MatmulCase){"matmul_basic.tl", "_matmul_kernel", basic, 3, -1, 0, 0, 0, "BLOCK_SIZE_M", "BLOCK_SIZE_N"}, 130, 75, 40);
  test_matmul(ctx, (MatmulCase){"matmul_basic_grouped.tl", "_matmul_kernel", basic, 4, -1, 0, 0, 0, "BLOCK_SIZE_M", "BLOCK_SIZE_N"}, 300, 200, 24);
  const char *naive[] = {"bm=32", "bn=32", "bk=32", "group_sz=4"};
  test_matmul(ctx, (MatmulCase){"matmul_naive.tl", "naive_matmul_k", naive, 3, -1, 1, 0, 1, "bm", "bn"}, 100, 70, 64);
  test_matmul(ctx, (MatmulCase){"matmul_grouped.tl", "grouped_matmul_k", naive, 4, -1, 1, 0, 1, "bm", "bn"}, 150, 90, 32);
  const char *act[] = {"ACTIVATION=\"leaky_relu\""}, *none[] = {"ACTIVATION=\"\""};
  test_matmul(ctx, (MatmulCase){"matmul_autotuned.tl", "matmul_kernel", act, 1, 7, 1, 1, 0, "BLOCK_SIZE_M", "BLOCK_SIZE_N"}, 300, 200, 72);
  test_matmul(ctx, (MatmulCase){"matmul_autotuned.tl", "matmul_kernel", none, 1, 6, 1, 0, 0, "BLOCK_SIZE_M", "BLOCK_SIZE_N"}, 97, 65, 40);
  /* the largest config: 128 x 256 x 64 blocks, 8 warps, 3 stages (on a GPU, more than 48 KB of shared memory) */
  test_matmul(ctx, (MatmulCase){"matmul_autotuned.tl", "matmul_kernel", act, 1, 0, 1, 1, 0, "BLOCK_SIZE_M", "BLOCK_SIZE_N"}, 300, 200, 136);
  tile_context_destroy(ctx); /* the kernels go with it */
}

/* ---- specialisation, constexprs, device_print -------------------------------------------- */

static const char add_source[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)\n";

static tile_kernel *add_kernel(tile_context *ctx, const char *signature, int num_warps) {
  const char *defs[] = {"BLOCK=128"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defs;
  o.num_defines = 1;
  o.signature = signature;
  o.num_warps = num_warps;
  tile_kernel *k = NULL;
  if (tile_kernel_create(ctx, "add.tl", add_source, sizeof add_source - 1, &o, &k) != TILE_OK)
    fprintf(stderr, "add.tl: %s\n", tile_error(ctx));
  return k;
}

static void grid_add(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  grid[0] = cdiv(args[3].i, constexpr_of(k, "BLOCK"));
}

static void test_specialisation(void) {
  tile_context *ctx = cpu_context();
  tile_kernel *k = add_kernel(ctx, NULL, 2);
  float *x = NULL, *y = NULL, *z = NULL;
  tile_malloc(ctx, (void **)&x, 4 * 1000), tile_malloc(ctx, (void **)&y, 4 * 1000), tile_malloc(ctx, (void **)&z, 4 * 1000);
  tile_memset(ctx, x, 0, 4000), tile_memset(ctx, y, 0, 4000);
  CHECK(tile_kernel_metadata(k) == NULL); /* nothing compiled yet */
  long long v;
  CHECK(tile_kernel_constexpr(k, "BLOCK", &v) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(ctx), "tile_kernel_constexpr: the kernel has no specialisation yet (compile or launch it first)"));
  tile_arg args[] = {tile_buffer(x, "fp32", 0), tile_buffer(y, "fp32", 0), tile_buffer(z, "fp32", 0), tile_int(1000)};
  CHECK(launched(ctx, k, grid_add, NULL, args, 4));
  const char *first = tile_kernel_metadata(k);
  CHECK_CONTAINS(first, "\"signature\": \"*fp32:16,*fp32:16,*fp32:16,i32\"");
  CHECK_CONTAINS(first, "\"num_warps\": 2");
  CHECK(constexpr_of(k, "BLOCK") == 128 && constexpr_of(k, "num_warps") == 2 && constexpr_of(k, "num_stages") == 3);
  CHECK(tile_kernel_constexpr(k, "BLOK", &v) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(ctx), "kernel 'add' has no constexpr 'BLOK'"));
  CHECK(launched(ctx, k, grid_add, NULL, args, 4));
  CHECK(tile_kernel_metadata(k) == first); /* the same specialisation, not compiled again */
  args[0] = tile_buffer(x + 1, "fp32", 0); /* not 16-byte aligned: a new specialisation */
  args[3] = tile_int(999);
  CHECK(launched(ctx, k, grid_add, NULL, args, 4));
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"signature\": \"*fp32,*fp32:16,*fp32:16,i32\"");
  args[0] = tile_buffer(x, "fp32", 0);
  args[3] = tile_int(1000);
  CHECK(launched(ctx, k, grid_add, NULL, args, 4));
  CHECK(tile_kernel_metadata(k) == first); /* found again in the list */
  CHECK_CONTAINS(tile_kernel_text(k, TILE_STAGE_TIR), "func @add(");
  CHECK(tile_kernel_text(k, TILE_STAGE_PTX) == NULL);
  const void *image;
  size_t size;
  CHECK(tile_kernel_image(k, &image, &size) == TILE_ERROR_UNSUPPORTED);
  CHECK_CONTAINS(tile_error(ctx), "a kernel compiled for the CPU interpreter has no GPU image");
  tile_kernel_destroy(k);
  tile_context_destroy(ctx);
}

static const char print_source[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def show(x_ptr):\n"
    "    tl.device_print(\"x=\", tl.load(x_ptr + tl.arange(0, 2)))\n";

/* device_print's text reaches stdout, as printf from a GPU kernel does. */
static void test_device_print(void) {
  tile_context *ctx = cpu_context();
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create(ctx, "show.tl", print_source, sizeof print_source - 1, NULL, &k) == TILE_OK);
  int values[2] = {41, 42};
  int *d = upload(ctx, values, sizeof values);
  tile_arg args[] = {tile_buffer(d, "i32", 2)};
  unsigned grid[3] = {2, 1, 1};
  char path[] = "/tmp/tile-print-XXXXXX";
  int fd = mkstemp(path), saved = dup(1);
  fflush(stdout);
  dup2(fd, 1);
  tile_status s = tile_launch(k, grid, NULL, args, 1);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  char text[512] = "";
  lseek(fd, 0, SEEK_SET);
  ssize_t got = read(fd, text, sizeof text - 1);
  text[got > 0 ? got : 0] = 0;
  close(fd);
  unlink(path);
  CHECK(s == TILE_OK);
  CHECK_CONTAINS(text, "pid (1, 0, 0) idx (1) x= 42");
  CHECK_CONTAINS(text, "pid (0, 0, 0) idx (0) x= 41");
  tile_context_destroy(ctx);
}

/* ---- argument checks -------------------------------------------------------------------- */

typedef struct Fixture {
  tile_context *ctx;
  float *x, *y, *z; /* device buffers of 64 floats; z poisoned */
} Fixture;

static Fixture fixture(void) {
  Fixture f = {cpu_context(), NULL, NULL, NULL};
  float host[64];
  for (int i = 0; i < 64; i++) host[i] = (float)i;
  f.x = upload(f.ctx, host, sizeof host);
  f.y = upload(f.ctx, host, sizeof host);
  for (int i = 0; i < 64; i++) host[i] = NAN;
  f.z = upload(f.ctx, host, sizeof host);
  return f;
}

/* The launch fails with exactly `message`, and z is untouched. */
static void expect_error(Fixture *f, tile_kernel *k, const tile_arg *args, int n, tile_status status, const char *message) {
  unsigned grid[3] = {1, 1, 1};
  tile_status s = tile_launch(k, grid, NULL, args, n);
  CHECK(s == status);
  if (strcmp(tile_error(f->ctx), message)) fprintf(stderr, "expected: %s\n     got: %s\n", message, tile_error(f->ctx));
  CHECK(!strcmp(tile_error(f->ctx), message));
  float z[64];
  download(f->ctx, z, f->z, sizeof z);
  int untouched = 1;
  for (int i = 0; i < 64; i++) untouched &= isnan(z[i]);
  CHECK(untouched);
}

static void test_argument_checks(void) {
  Fixture f = fixture();
  tile_kernel *jit = add_kernel(f.ctx, NULL, 0), *fixed = add_kernel(f.ctx, "*fp32:16,*fp32,*fp32,i32", 0);
  tile_arg args[] = {tile_buffer(f.x, "fp32", 64), tile_buffer(f.y, "fp32", 64), tile_buffer(f.z, "fp32", 64), tile_int(64)};
  tile_arg a[4];
  memcpy(a, args, sizeof a);
  a[3] = tile_buffer(f.x, "fp32", 64);
  /* a count other than the declaration's: an argument error naming the parameters, not a signature */
  expect_error(&f, jit, a, 3, TILE_ERROR_ARGUMENT, "kernel 'add' takes 4 arguments (x_ptr, y_ptr, out_ptr, n), not 3");
  expect_error(&f, fixed, args, 3, TILE_ERROR_ARGUMENT, "kernel 'add' takes 4 arguments (its non-constexpr parameters), not 3");
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 3 ('n'): a buffer for a parameter of type i32");
  memcpy(a, args, sizeof a);
  a[1] = tile_int(7);
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 1 ('y_ptr'): a number for a parameter of type *fp32");
  a[1] = tile_buffer(f.y, "fp16", 64);
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 1 ('y_ptr'): a buffer of fp16 for a parameter of type *fp32");
  a[1] = tile_buffer(f.y, "fp33", 64);
  expect_error(&f, jit, a, 4, TILE_ERROR_ARGUMENT, "argument 1: unknown dtype 'fp33' (expected e.g. fp32, fp16, i32)");
  a[1] = tile_buffer(NULL, "fp32", 0);
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 1 ('y_ptr'): a NULL buffer");
  expect_error(&f, jit, a, 4, TILE_ERROR_ARGUMENT, "argument 1 ('y_ptr'): a NULL buffer");
  memcpy(a, args, sizeof a);
  a[3] = tile_int(1LL << 33);
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 3 ('n'): 8589934592 does not fit the parameter's type i32");
  a[3] = tile_float(2.5);
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, "argument 3 ('n'): a float for a parameter of type i32");
  memcpy(a, args, sizeof a);
  a[0] = tile_buffer(f.x + 1, "fp32", 63);
  char message[256];
  snprintf(message, sizeof message, "argument 0 ('x_ptr'): address %p is not 16-byte aligned, as the kernel's ':16' specialisation promises",
           (void *)(f.x + 1));
  expect_error(&f, fixed, a, 4, TILE_ERROR_ARGUMENT, message);
  float host[4];
  a[0] = tile_buffer(host, "fp32", 4);
  snprintf(message, sizeof message, "argument 0 ('x_ptr'): %p is not memory from tile_malloc, which every buffer on the CPU interpreter must be",
           (void *)host);
  expect_error(&f, jit, a, 4, TILE_ERROR_ARGUMENT, message);
  a[0] = tile_buffer(f.x + 4, "fp32", 61);
  expect_error(&f, jit, a, 4, TILE_ERROR_ARGUMENT, "argument 0 ('x_ptr'): 61 elements of fp32 pass the end of its block (240 bytes from there)");
  unsigned too_big[3] = {1u << 31, 1, 1};
  CHECK(tile_launch(jit, too_big, NULL, args, 4) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(f.ctx), "the grid (2147483648, 1, 1) is larger than a GPU allows (2^31-1 x 65535 x 65535)"));
  unsigned empty[3] = {0, 1, 1};
  CHECK(tile_launch(jit, empty, NULL, args, 4) == TILE_OK); /* launches nothing: z stays poisoned */
  expect_error(&f, jit, NULL, 4, TILE_ERROR_ARGUMENT, "tile_launch: NULL arguments, or not from 0 to 256 of them");
  /* an out-of-bounds access is a runtime error with the place */
  a[0] = tile_buffer(f.x, "fp32", 64);
  a[3] = tile_int(100);
  unsigned one[3] = {1, 1, 1};
  CHECK(tile_launch(jit, one, NULL, a, 4) == TILE_ERROR_RUNTIME);
  CHECK_CONTAINS(tile_error(f.ctx), "kernel 'add', add.tl:6 (program 0, 0, 0): out-of-bounds load: element 64 of 'x_ptr', which has 64 elements");
  tile_context_destroy(f.ctx);
}

static void test_fixed_specialisations(void) {
  Fixture f = fixture();
  tile_kernel *div16 = add_kernel(f.ctx, "*fp32,*fp32,*fp32,i32:16", 0), *one = add_kernel(f.ctx, "*fp32,*fp32,*fp32,i32:1", 0);
  tile_arg a[] = {tile_buffer(f.x, "fp32", 64), tile_buffer(f.y, "fp32", 64), tile_buffer(f.z, "fp32", 64), tile_int(60)};
  expect_error(&f, div16, a, 4, TILE_ERROR_ARGUMENT, "argument 3 ('n'): 60 is not divisible by 16, as the kernel's ':16' specialisation promises");
  expect_error(&f, one, a, 4, TILE_ERROR_ARGUMENT, "argument 3 ('n'): the kernel was specialised for the integer 1 (':1'), not 60");
  a[3] = tile_int(1);
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_launch(one, grid, NULL, a, 4) == TILE_OK);
  float z[2];
  download(f.ctx, z, f.z, sizeof z);
  CHECK(z[0] == 0.0f && isnan(z[1])); /* n == 1: one element */
  CHECK(constexpr_of(one, "n") == 1);
  tile_context_destroy(f.ctx);
}

/* ---- memory, streams, events on the host ---------------------------------------------------- */

static void test_host_memory(void) {
  tile_context *ctx = cpu_context();
  void *p = NULL, *q = NULL;
  char host[32] = "0123456789abcdef", back[32] = "";
  CHECK(tile_malloc(ctx, &p, 16) == TILE_OK && p);
  CHECK(tile_malloc(ctx, &q, 0) == TILE_OK && q); /* an empty block is still a block */
  CHECK(tile_memcpy_to_device(ctx, p, host, 16) == TILE_OK);
  CHECK(tile_memset(ctx, (char *)p + 8, 'z', 4) == TILE_OK);
  CHECK(tile_memcpy_to_host(ctx, back, p, 16) == TILE_OK && !memcmp(back, "01234567zzzzcdef", 16));
  CHECK(tile_memcpy_to_device(ctx, (char *)p + 4, host, 13) == TILE_ERROR_ARGUMENT);
  char message[256];
  snprintf(message, sizeof message, "tile_memcpy_to_device: 13 bytes at %p pass the end of its block (12 bytes from there)",
           (void *)((char *)p + 4));
  CHECK(!strcmp(tile_error(ctx), message));
  CHECK(tile_memcpy_to_host(ctx, back, host, 4) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "is not memory from tile_malloc");
  CHECK(tile_free(ctx, host) == TILE_ERROR_ARGUMENT);
  snprintf(message, sizeof message, "tile_free: %p is not a block from tile_malloc (or was freed already)", (void *)host);
  CHECK(!strcmp(tile_error(ctx), message));
  CHECK(tile_free(ctx, p) == TILE_OK);
  CHECK(tile_free(ctx, p) == TILE_ERROR_ARGUMENT); /* twice */
  CHECK(tile_free(ctx, NULL) == TILE_OK);
  tile_stream s = NULL;
  tile_event e0 = NULL, e1 = NULL;
  float ms = -1;
  CHECK(tile_stream_create(ctx, &s) == TILE_OK && s);
  CHECK(tile_event_create(ctx, &e0) == TILE_OK && tile_event_create(ctx, &e1) == TILE_OK);
  CHECK(tile_event_elapsed(ctx, e0, e1, &ms) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(ctx), "tile_event_elapsed: an event was never recorded"));
  CHECK(tile_event_record(ctx, e0, s) == TILE_OK && tile_event_record(ctx, e1, s) == TILE_OK);
  CHECK(tile_event_elapsed(ctx, e0, e1, &ms) == TILE_OK && ms >= 0 && ms < 1000);
  CHECK(tile_stream_synchronize(ctx, s) == TILE_OK && tile_synchronize(ctx) == TILE_OK);
  CHECK(!strcmp(tile_device_name(ctx), ""));
  CHECK(tile_device_open(ctx, 0) == TILE_OK); /* nothing to open on the interpreter */
  tile_event_destroy(ctx, e0);
  tile_event_destroy(ctx, e1);
  tile_stream_destroy(ctx, s);
  tile_context_destroy(ctx); /* frees q */
}

/* ---- without a GPU ------------------------------------------------------------------------ */

#define NO_DRIVER "no CUDA driver: cannot load /nonexistent/libcuda.so.1"

static void expect_no_gpu(tile_context *ctx, tile_status s, const char *call) {
  if (s != TILE_ERROR_UNSUPPORTED || !strstr(tile_error(ctx), NO_DRIVER))
    fprintf(stderr, "%s: status %d, '%s'\n", call, (int)s, tile_error(ctx));
  CHECK(s == TILE_ERROR_UNSUPPORTED);
  CHECK_CONTAINS(tile_error(ctx), NO_DRIVER);
}

/* metadata for an AOT kernel add(x: *fp32:16, y: *fp32, n: i32) */
static const char aot_metadata[] =
    "{\"format\": 1, \"name\": \"add\", \"signature\": \"*fp32:16,*fp32,i32\", \"num_args\": 3,\n"
    " \"params\": [{\"name\": \"x\", \"type\": \"*fp32\", \"divisibility\": 16, \"position\": 0},\n"
    "            {\"name\": \"y\", \"type\": \"*fp32\", \"position\": 1},\n"
    "            {\"name\": \"n\", \"type\": \"i32\", \"position\": 2}],\n"
    " \"constexprs\": {\"BLOCK\": 256}, \"num_warps\": 4, \"num_stages\": 3, \"shared\": 0,\n"
    " \"arch\": \"sm_90a\", \"target\": \"cubin\"}\n";
static const char fake_cubin[] = "\x7f" "ELF not really a cubin";

static void test_without_gpu(void) {
  setenv("TILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  unsetenv("TILE_INTERPRET");
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK && !tile_context_on_cpu(ctx));
  void *p = NULL, *fake = (void *)(uintptr_t)0x10000;
  char host[16];
  tile_stream s = NULL;
  tile_event e = NULL;
  float ms;
  expect_no_gpu(ctx, tile_device_open(ctx, 0), "tile_device_open");
  expect_no_gpu(ctx, tile_malloc(ctx, &p, 64), "tile_malloc");
  CHECK(p == NULL);
  expect_no_gpu(ctx, tile_memcpy_to_device(ctx, fake, host, 16), "tile_memcpy_to_device");
  expect_no_gpu(ctx, tile_memcpy_to_host(ctx, host, fake, 16), "tile_memcpy_to_host");
  expect_no_gpu(ctx, tile_memset(ctx, fake, 0, 16), "tile_memset");
  expect_no_gpu(ctx, tile_synchronize(ctx), "tile_synchronize");
  expect_no_gpu(ctx, tile_stream_create(ctx, &s), "tile_stream_create");
  expect_no_gpu(ctx, tile_stream_synchronize(ctx, NULL), "tile_stream_synchronize");
  expect_no_gpu(ctx, tile_event_create(ctx, &e), "tile_event_create");
  /* an event the context did not make is refused before the driver is asked */
  CHECK(tile_event_record(ctx, (tile_event)fake, NULL) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_event_record: the event is not one tile_event_create made in this context");
  CHECK(tile_event_elapsed(ctx, (tile_event)fake, (tile_event)fake, &ms) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_device_name(ctx), ""));
  /* an AOT kernel loads (the image goes to the GPU at the first launch), its arguments are checked, the launch says why not */
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load(ctx, fake_cubin, sizeof fake_cubin - 1, aot_metadata, &k) == TILE_OK && k);
  float aligned[8] __attribute__((aligned(16)));
  tile_arg args[] = {tile_buffer(aligned + 1, "fp32", 4), tile_buffer(aligned, "fp32", 4), tile_int(4)};
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_launch(k, grid, NULL, args, 3) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 0 ('x'): address ");
  args[0] = tile_buffer(aligned, "fp32", 4);
  expect_no_gpu(ctx, tile_launch(k, grid, NULL, args, 3), "tile_launch");
  CHECK(constexpr_of(k, "BLOCK") == 256);
  /* having failed, the context can still run on the interpreter */
  CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  CHECK(tile_malloc(ctx, &p, 64) == TILE_OK && p);
  CHECK(tile_launch(k, grid, NULL, args, 3) == TILE_ERROR_UNSUPPORTED);
  CHECK(!strcmp(tile_error(ctx), "kernel 'add' was loaded ahead of time: a GPU image cannot run on the CPU interpreter"));
  tile_context_destroy(ctx);
  unsetenv("TILE_CUDA_LIBRARY");
  setenv("TILE_INTERPRET", "1", 1);
  CHECK(tile_context_create(&ctx) == TILE_OK && tile_context_on_cpu(ctx));
  tile_context_destroy(ctx);
  unsetenv("TILE_INTERPRET");
}

/* ---- AOT metadata and files ---------------------------------------------------------------- */

static const char *load_error(tile_context *ctx, const void *image, size_t size, const char *metadata) {
  tile_kernel *k = NULL;
  if (tile_kernel_load(ctx, image, size, metadata, &k) == TILE_OK) return "(loaded)";
  CHECK(k == NULL);
  return tile_error(ctx);
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f) fwrite(data, 1, size, f), fclose(f);
}

static void test_aot(void) {
  tile_context *ctx = cpu_context(); /* loading needs no GPU */
  CHECK(!strcmp(load_error(ctx, fake_cubin, sizeof fake_cubin - 1, aot_metadata), "(loaded)"));
  CHECK(!strcmp(load_error(ctx, ".version 8.0", 12, aot_metadata),
                "tile_kernel_load: the metadata says cubin but the image is not an ELF file"));
  CHECK(!strcmp(load_error(ctx, fake_cubin, sizeof fake_cubin - 1, "{\"format\": 1"), "metadata: not JSON: line 1, column 13: expected ',' or '}' in an object"));
  CHECK(!strcmp(load_error(ctx, fake_cubin, 0, aot_metadata), "tile_kernel_load: NULL or empty image, NULL metadata or out"));
  char json[2048];
  snprintf(json, sizeof json, "%s", aot_metadata);
  memcpy(strstr(json, "\"cubin\""), "\"ptx\"  ", 7);
  CHECK(!strcmp(load_error(ctx, ".version 8.0\n.target sm_80\n", 27, json), "(loaded)"));
  CHECK(!strcmp(load_error(ctx, fake_cubin, sizeof fake_cubin - 1, json),
                "tile_kernel_load: the metadata says ptx but the image is not PTX text"));
  /* files: the metadata beside the image by default */
  char dir[] = "/tmp/tile-aot-XXXXXX", image_path[256], json_path[256];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(image_path, sizeof image_path, "%s/add.cubin", dir);
  snprintf(json_path, sizeof json_path, "%s/add.json", dir);
  write_file(image_path, fake_cubin, sizeof fake_cubin - 1);
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load_file(ctx, image_path, NULL, &k) == TILE_ERROR_IO);
  CHECK_CONTAINS(tile_error(ctx), "add.json': No such file or directory");
  write_file(json_path, aot_metadata, sizeof aot_metadata - 1);
  CHECK(tile_kernel_load_file(ctx, image_path, NULL, &k) == TILE_OK && k);
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"name\": \"add\"");
  const void *image;
  size_t size;
  CHECK(tile_kernel_image(k, &image, &size) == TILE_OK && size == sizeof fake_cubin - 1 && !memcmp(image, fake_cubin, size));
  CHECK(tile_kernel_load_file(ctx, image_path, json_path, &k) == TILE_OK);
  unlink(image_path), unlink(json_path), rmdir(dir);
  tile_context_destroy(ctx);
}

int main(int argc, char **argv) {
  unsigned seed_value = (unsigned)time(NULL);
  printf("seed %u\n", seed_value);
  srand(seed_value);
  if (argc > 1 && !strcmp(argv[1], "--gpu")) { /* ctest -L gpu */
    tile_context *ctx;
    tile_context_create(&ctx);
    if (tile_device_open(ctx, 0) != TILE_OK) {
      printf("SKIP: no GPU: %s\n", tile_error(ctx));
      tile_context_destroy(ctx);
      return 77;
    }
    printf("the seed kernels on %s\n", tile_device_name(ctx));
    test_seed_kernels(ctx);
    return check_report();
  }
  test_seed_kernels(cpu_context());
  test_specialisation();
  test_device_print();
  test_argument_checks();
  test_fixed_specialisations();
  test_host_memory();
  test_without_gpu();
  test_aot();
  return check_report();
}
