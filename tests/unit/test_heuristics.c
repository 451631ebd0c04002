/* @triton.heuristics on a launch's arguments, through the public API on the
 * CPU interpreter: EVEN_N = n % BLOCK == 0 picks an unmasked or a masked
 * path; launches at irregular sizes, outputs poisoned, against a C
 * reference; launches whose heuristics agree share one specialisation
 * (the same metadata), others get their own; with @triton.autotune the
 * heuristics see the config's values and a launch that changes only their
 * result does not tune again; a heuristic that reads a buffer, or fails,
 * is a compile error that names it. */
#include "check.h"
#include "tile/tile.h"

#include <stdlib.h>
#include <time.h>

enum { CAPACITY = 2048, BLOCK = 256 };
static const float POISON = -12345.0f;

#define SCALE_BODY                                                      \
  "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"         \
  "    if EVEN_N:\n"                                                    \
  "        x = tl.load(x_ptr + offs)\n"                                 \
  "        tl.store(y_ptr + offs, x * 2 + 1)\n"                         \
  "    else:\n"                                                         \
  "        x = tl.load(x_ptr + offs, mask=offs < n, other=0)\n"         \
  "        tl.store(y_ptr + offs, x * 2 + 1, mask=offs < n)\n"

static const char scale_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.heuristics({'EVEN_N': lambda args: args['n'] % args['BLOCK'] == 0})\n"
    "@triton.jit\n"
    "def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):\n" SCALE_BODY;

static tile_context *cpu_context(void) {
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  return ctx;
}

static tile_kernel *kernel(tile_context *ctx, const char *source, const char *block) {
  tile_options o;
  tile_options_init(&o);
  const char *defines[] = {block};
  o.defines = defines;
  o.num_defines = block ? 1 : 0;
  tile_kernel *k = NULL;
  if (tile_kernel_create(ctx, "scale.tl", source, strlen(source), &o, &k) != TILE_OK)
    fprintf(stderr, "create: %s\n", tile_error(ctx));
  CHECK(k != NULL);
  return k;
}

typedef struct Buffers {
  float *x, *y;
} Buffers;

static Buffers buffers(tile_context *ctx) {
  Buffers b = {0};
  CHECK(tile_malloc(ctx, (void **)&b.x, sizeof(float) * CAPACITY) == TILE_OK);
  CHECK(tile_malloc(ctx, (void **)&b.y, sizeof(float) * CAPACITY) == TILE_OK);
  return b;
}

/* Launches over n elements (fresh inputs, y poisoned) and checks y = 2x + 1 below n, poison above. */
static int run(tile_context *ctx, tile_kernel *k, Buffers b, int n) {
  for (int i = 0; i < CAPACITY; i++) b.x[i] = (float)(rand() % 1000) - 500, b.y[i] = POISON;
  tile_arg args[] = {tile_buffer(b.x, "fp32", CAPACITY), tile_buffer(b.y, "fp32", CAPACITY), tile_int(n)};
  unsigned grid[3] = {(unsigned)((n + BLOCK - 1) / BLOCK), 1, 1};
  tile_status s = tile_launch(k, grid, NULL, args, 3);
  if (s != TILE_OK) fprintf(stderr, "launch n=%d: %s\n", n, tile_error(ctx));
  int right = s == TILE_OK;
  for (int i = 0; i < CAPACITY && right; i++) right = b.y[i] == (i < n ? b.x[i] * 2 + 1 : POISON);
  return right;
}

static long long even_n(const tile_kernel *k) {
  long long v = -1;
  CHECK(tile_kernel_constexpr(k, "EVEN_N", &v) == TILE_OK);
  return v;
}

/* Equal heuristic values share a specialisation (its metadata); others make their own. */
static void test_specialises(void) {
  tile_context *ctx = cpu_context();
  tile_kernel *k = kernel(ctx, scale_source, "BLOCK=256");
  Buffers b = buffers(ctx);
  CHECK(run(ctx, k, b, 1024) && even_n(k) == 1);
  const char *even = tile_kernel_metadata(k);
  CHECK(run(ctx, k, b, 1000) && even_n(k) == 0);
  const char *odd = tile_kernel_metadata(k);
  CHECK(even && odd && even != odd);
  CHECK(run(ctx, k, b, 777) && even_n(k) == 0 && tile_kernel_metadata(k) == odd);
  CHECK(run(ctx, k, b, 512) && even_n(k) == 1 && tile_kernel_metadata(k) == even);
  CHECK(run(ctx, k, b, 1000) && tile_kernel_metadata(k) == odd); /* seen lately: nothing evaluated */
  CHECK(run(ctx, k, b, 3) && even_n(k) == 0 && tile_kernel_metadata(k) == odd);
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"EVEN_N\"");
  /* tile_kernel_compile runs them too */
  tile_arg args[] = {tile_buffer(b.x, "fp32", CAPACITY), tile_buffer(b.y, "fp32", CAPACITY), tile_int(2048)};
  CHECK(tile_kernel_compile(k, args, 3) == TILE_OK && tile_kernel_metadata(k) == even);
  tile_kernel_destroy(k);
  /* -D gives the value: the heuristic is not run */
  tile_options o;
  tile_options_init(&o);
  const char *defines[] = {"BLOCK=256", "EVEN_N=False"};
  o.defines = defines, o.num_defines = 2;
  CHECK(tile_kernel_create(ctx, "scale.tl", scale_source, strlen(scale_source), &o, &k) == TILE_OK);
  CHECK(run(ctx, k, b, 1024) && even_n(k) == 0);
  tile_context_destroy(ctx);
}

/* With @triton.autotune: the heuristics see each config's BLOCK (config 0
 * does not compile: the interpreter takes config 1, BLOCK 256); the key is
 * m, so a launch that changes n only (not its signature: a multiple of 16
 * or not) is not tuned again. */
static void test_autotune(void) {
  static const char source[] =
      "import triton\n"
      "import triton.language as tl\n"
      "\n"
      "@triton.autotune(configs=[triton.Config({'BLOCK': 100}), triton.Config({'BLOCK': 256}),\n"
      "                          triton.Config({'BLOCK': 512})], key=['m'])\n"
      "@triton.heuristics({'EVEN_N': lambda args: args['n'] % args['BLOCK'] == 0})\n"
      "@triton.jit\n"
      "def scale(x_ptr, y_ptr, n, m, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):\n" SCALE_BODY;
  tile_context *ctx = cpu_context();
  tile_kernel *k = kernel(ctx, source, NULL);
  Buffers b = buffers(ctx);
  int sizes[] = {768, 1040, 1280, 1008}; /* multiples of 16: one signature, one tuning */
  const char *seen[4];
  for (int i = 0; i < 4; i++) {
    float *x = b.x, *y = b.y;
    for (int j = 0; j < CAPACITY; j++) x[j] = (float)(rand() % 1000), y[j] = POISON;
    tile_arg args[] = {tile_buffer(x, "fp32", CAPACITY), tile_buffer(y, "fp32", CAPACITY), tile_int(sizes[i]),
                       tile_int(7)};
    unsigned grid[3] = {(unsigned)((sizes[i] + BLOCK - 1) / BLOCK), 1, 1};
    tile_status s = tile_launch(k, grid, NULL, args, 4);
    if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_error(ctx));
    int right = s == TILE_OK;
    for (int j = 0; j < CAPACITY && right; j++) right = y[j] == (j < sizes[i] ? x[j] * 2 + 1 : POISON);
    CHECK(right && tile_kernel_config(k) == 1);
    CHECK(even_n(k) == (sizes[i] % 256 == 0));
    /* tuned at the first launch only */
    const char *notes = tile_diagnostics(ctx);
    CHECK((strstr(notes ? notes : "", "chose config 1") != NULL) == (i == 0));
    seen[i] = tile_kernel_metadata(k);
  }
  CHECK(seen[0] != seen[1] && seen[2] == seen[0] && seen[3] == seen[1]);
  tile_context_destroy(ctx);
}

/* A launch whose heuristic reads a buffer, or fails, is a compile error naming it. */
static void expect_error(const char *heuristic, const char *message) {
  char source[1024];
  snprintf(source, sizeof source,
           "import triton\n"
           "import triton.language as tl\n"
           "\n"
           "@triton.heuristics({'EVEN_N': %s})\n"
           "@triton.jit\n"
           "def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):\n" SCALE_BODY,
           heuristic);
  tile_context *ctx = cpu_context();
  tile_kernel *k = kernel(ctx, source, "BLOCK=256");
  Buffers b = buffers(ctx);
  tile_arg args[] = {tile_buffer(b.x, "fp32", CAPACITY), tile_buffer(b.y, "fp32", CAPACITY), tile_int(1000)};
  CHECK(tile_launch(k, (unsigned[3]){4, 1, 1}, NULL, args, 3) == TILE_ERROR_COMPILE);
  CHECK_CONTAINS(tile_error(ctx), "scale.tl:4:31: error: heuristic 'EVEN_N' cannot be evaluated here");
  CHECK_CONTAINS(tile_error(ctx), message);
  CHECK(tile_kernel_compile(k, args, 3) == TILE_ERROR_COMPILE); /* again, not remembered as a case */
  tile_context_destroy(ctx);
}

static void test_errors(void) {
  expect_error("lambda args: args['x_ptr'] % 16 == 0",
               "argument 'x_ptr' is a buffer at this launch (host code sees integers and floats)");
  expect_error("lambda args: args['n'] // (args['n'] - 1000) == 0", "division by zero");
}

int main(void) {
  srand((unsigned)time(NULL));
  test_specialises();
  test_autotune();
  test_errors();
  return check_report();
}
