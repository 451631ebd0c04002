/* The autotuner without a GPU.  On the fake driver (fake_cuda.c) kernels are
 * compiled for real (LLVM, ptxas) and "launched": each launch runs a hook
 * that returns its duration on a virtual clock the fake's events read, so
 * the test decides which config is fastest, and that writes the buffers as
 * a kernel would, so reset_to_zero and restore_value show in memory.
 * Checks the choice (the fastest; configs that do not compile, load or
 * launch skipped; none running is a clear error), the grid function seeing
 * the config being run, what each timed run gets (buffers reset and
 * restored), a key change re-tuning and a non-key change not, the disk
 * cache sparing another context the tuning, tile_kernel_compile, kernels
 * with one config or a fixed one, on the CPU interpreter the first config
 * that compiles, with the result checked, the configs compiled on
 * several threads (TILE_COMPILE_THREADS) giving what one thread gives, and
 * each config's other refill schedule timed and chosen (tile_options.refill
 * AUTO), or not when the options fix it; @triton.heuristics on a launch's
 * arguments keyed in the disk cache by their values. */
#include "check.h"
#include "fake_cuda.h"
#include "tile/tile.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <time.h>

#ifndef FAKE_CUDA_PATH
#error "FAKE_CUDA_PATH: the fake driver's path"
#endif

static FakeCuda *fake;

/* Config 0 does not compile (BLOCK is no power of two); 1..4 do, with 1, 2, 4 and 8 warps, 3 with a
 * register cap. The decorator's configs and the kernel, apart from its other arguments (test_prune's
 * kernel shares them). */
#define BUMP_CONFIGS                                                                  \
  "@triton.autotune(configs=[triton.Config({'BLOCK': 100}, num_warps=1),\n"           \
  "                          triton.Config({'BLOCK': 128}, num_warps=1),\n"           \
  "                          triton.Config({'BLOCK': 256}, num_warps=2),\n"           \
  "                          triton.Config({'BLOCK': 512}, num_warps=4, maxnreg=64),\n"\
  "                          triton.Config({'BLOCK': 1024}, num_warps=8, num_stages=2)],\n"
#define BUMP_KERNEL                                                                   \
  "@triton.jit\n"                                                                     \
  "def bump(x_ptr, acc_ptr, n, m, BLOCK: tl.constexpr):\n"                            \
  "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"                       \
  "    x = tl.load(x_ptr + offs, mask=offs < n)\n"                                    \
  "    tl.store(x_ptr + offs, x + m, mask=offs < n)\n"                                \
  "    tl.atomic_add(acc_ptr + offs * 0, x, mask=offs < n)\n"

static const char bump_source[] = "import triton\n"
                                  "import triton.language as tl\n"
                                  "\n" BUMP_CONFIGS
                                  "                 key=['n'], reset_to_zero=['acc_ptr'], restore_value=['x_ptr'])\n" BUMP_KERNEL;

/* ---- the fake GPU's kernels -------------------------------------------------------- */

static double ms_by_warps[33]; /* a launch's duration by its block's warps: the test's choice */
static int writes;             /* the hook writes the buffers (bump's parameters) */

/* Adds 1 to x[0] and to acc[0], as a run of bump would change them, and takes ms_by_warps. */
static double on_launch(FakeCuda *state, void **params) {
  if (writes) {
    float *x = *(float **)params[0], *acc = *(float **)params[1];
    x[0] += 1;
    acc[0] += 1;
  }
  return ms_by_warps[state->block[0] / 32];
}

static void set_times(double w1, double w2, double w4, double w8) {
  ms_by_warps[1] = w1, ms_by_warps[2] = w2, ms_by_warps[4] = w4, ms_by_warps[8] = w8;
}

static char cache_dir[64];

static void remove_dir(const char *dir) {
  char command[160];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command)) fprintf(stderr, "could not remove %s\n", dir);
}

/* A context on the fake driver with the disk cache in `dir`, compiling on `threads` threads (NULL: the default). */
static tile_context *context_with(int on_cpu, const char *dir, const char *threads) {
  setenv("TILE_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
  setenv("TILE_CACHE_DIR", dir, 1);
  if (threads) setenv("TILE_COMPILE_THREADS", threads, 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY"), unsetenv("TILE_CACHE_DIR"), unsetenv("TILE_COMPILE_THREADS");
  if (on_cpu) CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  return ctx;
}

static tile_context *context(int on_cpu) { return context_with(on_cpu, cache_dir, NULL); }

static tile_kernel *kernel(tile_context *ctx, const char *source, int config) {
  tile_options o;
  tile_options_init(&o);
  o.config = config;
  tile_kernel *k = NULL;
  tile_status s = tile_kernel_create(ctx, "bump.tl", source, strlen(source), &o, &k);
  if (s != TILE_OK) fprintf(stderr, "create: %s\n", tile_error(ctx));
  CHECK(s == TILE_OK);
  return k;
}

static long long grid_blocks; /* the BLOCK the grid function saw last */

static void grid_bump(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  grid_blocks = 0;
  tile_kernel_constexpr(k, "BLOCK", &grid_blocks);
  grid[0] = grid_blocks ? (unsigned)((args[2].i + grid_blocks - 1) / grid_blocks) : 0;
}

typedef struct Buffers {
  float *x, *acc;
  int n;
} Buffers;

static Buffers buffers(tile_context *ctx, int n) {
  Buffers b = {NULL, NULL, n};
  CHECK(tile_malloc(ctx, (void **)&b.x, sizeof(float) * (size_t)n) == TILE_OK);
  CHECK(tile_malloc(ctx, (void **)&b.acc, sizeof(float)) == TILE_OK);
  return b;
}

static tile_status launch(tile_kernel *k, const Buffers *b, int m) {
  tile_arg args[] = {tile_buffer(b->x, "fp32", (size_t)b->n), tile_buffer(b->acc, "fp32", 0), tile_int(b->n), tile_int(m)};
  return tile_launch_grid(k, grid_bump, NULL, NULL, args, 4);
}

/* ---- tests -------------------------------------------------------------------------- */

/* The fastest config, what each run sees, a key change re-tuning. */
static void test_choice(void) {
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 5000);
  b.x[0] = 10, b.acc[0] = 7;
  set_times(4, 3, 1, 2); /* 4 warps: config 3 */
  writes = 1;
  fake->params_to_copy = 3;
  int launches = fake->launches, memsets = fake->memsets, copies = fake->copies;
  CHECK(launch(k, &b, 3) == TILE_OK);
  int runs = fake->launches - launches - 1; /* timed runs (and warm-ups) before the real launch */
  CHECK(tile_kernel_config(k) == 3);
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"config\": 3");
  CHECK(grid_blocks == 512 && fake->grid[0] == 10 && fake->block[0] == 128); /* the real launch: config 3's grid */
  CHECK(runs >= 4 * (1 + 5 + 1 + 3));      /* 4 configs: a first run, the estimate, warm-up, at least 3 timed */
  CHECK(fake->memsets - memsets == runs + 1);    /* acc zeroed before each run and before the real launch */
  CHECK(fake->copies - copies == runs + 2);      /* x saved once, put back before each run and the launch */
  CHECK(b.x[0] == 11 && b.acc[0] == 1);          /* as if only the real launch had run */
  const char *notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "autotune: kernel 'bump' for n=5000:");
  CHECK_CONTAINS(notes, "config 0: skipped (");
  CHECK(!strcmp(tile_error(ctx), "")); /* the call succeeded: config 0's error is only a note */
  CHECK_CONTAINS(notes, "config 3: 1.0000 ms (4 warps)");
  CHECK_CONTAINS(notes, "config 4: 2.0000 ms (8 warps)");
  CHECK_CONTAINS(notes, "chose config 3");
  /* the same key: no tuning, nothing reset */
  launches = fake->launches, memsets = fake->memsets;
  set_times(1, 1, 9, 9);
  CHECK(launch(k, &b, 3) == TILE_OK && fake->launches == launches + 1 && fake->memsets == memsets);
  CHECK(tile_kernel_config(k) == 3 && b.x[0] == 12 && b.acc[0] == 2);
  CHECK(launch(k, &b, 5) == TILE_OK && fake->launches == launches + 2); /* m is not in the key */
  /* another n: tuned again, with other times */
  tile_free(ctx, b.x);
  b.n = 7000;
  CHECK(tile_malloc(ctx, (void **)&b.x, sizeof(float) * 7000) == TILE_OK);
  set_times(5, 5, 5, 2);
  launches = fake->launches;
  CHECK(launch(k, &b, 3) == TILE_OK && fake->launches > launches + 1);
  CHECK(tile_kernel_config(k) == 4 && grid_blocks == 1024 && fake->grid[0] == 7 && fake->block[0] == 256);
  CHECK_CONTAINS(tile_diagnostics(ctx), "autotune: kernel 'bump' for n=7000:");
  b.n = 5000; /* back to the first key: remembered */
  launches = fake->launches;
  CHECK(launch(k, &b, 3) == TILE_OK && fake->launches == launches + 1 && tile_kernel_config(k) == 3);
  writes = 0;
  fake->params_to_copy = 0;
  tile_context_destroy(ctx);
}

/* bump's configs pruned at each tuning by early_config_prune on the launch's values, as Triton calls it
 * (named_args, and every argument in **kwargs too: tile's launches are positional). */
static const char prune_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "def fit(configs, named_args, **kwargs):\n"
    "    if kwargs['m'] == 1:\n"
    "        return [c for c in configs if c.kwargs['BLOCK'] == 1024]\n"
    "    return [c for c in configs if c.kwargs['BLOCK'] <= named_args['n']]\n"
    "\n" BUMP_CONFIGS
    "                 key=['n'], prune_configs_by={'early_config_prune': fit})\n" BUMP_KERNEL;

/* n = 300: the configs with BLOCK <= n are kept, and the fastest of them chosen although a pruned one
 * (config 3) is faster; n = 700 with m = 1: config 4 alone, used without timing (as Triton does);
 * tile_kernel_compile prunes too; a prune function that reads a buffer fails the launch, at its place. */
static void test_prune(void) {
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, prune_source, -1);
  Buffers b = buffers(ctx, 300);
  set_times(4, 3, 1, 2);
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 2 && grid_blocks == 256);
  const char *notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "autotune: kernel 'bump' for n=300:");
  CHECK_CONTAINS(notes, "early_config_prune kept configs 0, 1, 2");
  CHECK_CONTAINS(notes, "config 1: 4.0000 ms (1 warp)");
  CHECK(!strstr(notes, "config 3:") && !strstr(notes, "config 4:"));
  CHECK_CONTAINS(notes, "chose config 2");
  b.n = 700;
  int launches = fake->launches;
  CHECK(launch(k, &b, 1) == TILE_OK && tile_kernel_config(k) == 4 && fake->launches == launches + 1);
  CHECK_CONTAINS(tile_diagnostics(ctx), "early_config_prune kept config 4");
  b.n = 400;
  const tile_arg args[] = {tile_buffer(b.x, "fp32", 400), tile_buffer(b.acc, "fp32", 0), tile_int(400), tile_int(2)};
  CHECK(tile_kernel_compile(k, args, 4) == TILE_OK && tile_kernel_config(k) == 1); /* config 0 does not compile */
  static const char reads_buffer[] = "import triton\n"
                                     "import triton.language as tl\n"
                                     "\n"
                                     "@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128})],\n"
                                     "                 key=['n'], prune_configs_by={'early_config_prune': lambda configs, named_args, **kw: configs[:named_args['x_ptr']]})\n"
                                     "@triton.jit\n"
                                     "def bump(x_ptr, acc_ptr, n, m, BLOCK: tl.constexpr):\n"
                                     "    tl.store(x_ptr + tl.arange(0, BLOCK), m)\n";
  tile_kernel *bad = kernel(ctx, reads_buffer, -1);
  CHECK(launch(bad, &b, 3) == TILE_ERROR_COMPILE);
  CHECK_CONTAINS(tile_error(ctx), "bump.tl:5:46: error: early_config_prune cannot be evaluated here: argument 'x_ptr' "
                                  "is a buffer at this launch (host code sees integers and floats)");
  tile_free(ctx, b.x), tile_free(ctx, b.acc);
  tile_context_destroy(ctx);
}

/* A fixed signature whose ':1' argument comes before the one the prune function reads: the launch still
 * passes it, so n is the third argument (n = 100 keeps BLOCK >= 100: config 1 on the interpreter). */
static void test_prune_fixed_signature(void) {
  static const char source[] = "import triton\n"
                               "import triton.language as tl\n"
                               "\n"
                               "def fit(configs, named_args, **kwargs):\n"
                               "    return [c for c in configs if c.kwargs['BLOCK'] >= named_args['n']]\n"
                               "\n"
                               "@triton.autotune(configs=[triton.Config({'BLOCK': 64}), triton.Config({'BLOCK': 128}),\n"
                               "                          triton.Config({'BLOCK': 256})],\n"
                               "                 key=['n'], prune_configs_by={'early_config_prune': fit})\n"
                               "@triton.jit\n"
                               "def scale(x_ptr, one, n, BLOCK: tl.constexpr):\n"
                               "    offs = tl.arange(0, BLOCK)\n"
                               "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * (one + 1), mask=offs < n)\n";
  tile_context *ctx = context(1);
  tile_options o;
  tile_options_init(&o);
  o.signature = "*fp32,i32:1,i32";
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create(ctx, "scale.tl", source, strlen(source), &o, &k) == TILE_OK);
  float *x = NULL;
  CHECK(tile_malloc(ctx, (void **)&x, sizeof(float) * 100) == TILE_OK);
  for (int i = 0; i < 100; i++) x[i] = (float)i;
  tile_arg args[] = {tile_buffer(x, "fp32", 100), tile_int(1), tile_int(100)};
  tile_status st = tile_launch(k, (unsigned[3]){1, 1, 1}, NULL, args, 3);
  if (st != TILE_OK) fprintf(stderr, "%s\n", tile_error(ctx));
  CHECK(st == TILE_OK);
  CHECK(tile_kernel_config(k) == 1 && x[99] == 198);
  CHECK_CONTAINS(tile_diagnostics(ctx), "early_config_prune kept configs 1, 2");
  tile_free(ctx, x);
  tile_context_destroy(ctx);
}

/* With an L2 of known size, every timed run follows a write of twice that (do_bench's flush), freed after. */
static void test_flush(void) {
  fake->l2_bytes = 1 << 20;
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 3333); /* a key no other test uses: tuned here */
  set_times(4, 3, 1, 2);
  int live = fake->live_allocations;
  size_t bytes = fake->memset_bytes;
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 3);
  CHECK(fake->memset_bytes - bytes >= (size_t)4 * 3 * (2 << 20)); /* 4 configs, 3 or more timed runs each */
  CHECK(fake->live_allocations == live);
  tile_context_destroy(ctx);
  fake->l2_bytes = 0;
}

/* Another context, same cache directory: the choice comes from disk. */
static void test_disk_cache(void) {
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 5000);
  set_times(1, 9, 9, 9); /* would choose config 1 */
  int launches = fake->launches;
  CHECK(launch(k, &b, 3) == TILE_OK && fake->launches == launches + 1);
  CHECK(tile_kernel_config(k) == 3);
  CHECK_CONTAINS(tile_diagnostics(ctx), "config 3, tuned by an earlier run (disk cache)");
  tile_context_destroy(ctx);
  char other[] = "/tmp/tile-autotune-other-XXXXXX";
  if (!mkdtemp(other)) return;
  setenv("TILE_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
  setenv("TILE_CACHE_DIR", other, 1);
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY"), unsetenv("TILE_CACHE_DIR");
  k = kernel(ctx, bump_source, -1);
  b = buffers(ctx, 5000);
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 1); /* tuned here: config 1 */
  tile_context_destroy(ctx);
  remove_dir(other);
}

static const char transpose_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.autotune(configs=[triton.Config({'B': 128}, num_warps=4), triton.Config({'B': 64}, num_warps=2)], key=[])\n"
    "@triton.jit\n"
    "def tr(x_ptr, y_ptr, B: tl.constexpr):\n"
    "    r = tl.arange(0, B)\n"
    "    x = tl.load(x_ptr + r[:, None] * B + r[None, :])\n"
    "    tl.store(y_ptr + r[:, None] * B + r[None, :], tl.trans(x))\n";

/* Configs that cannot load or launch are skipped; when none can run, each one's reason. */
static void test_skips(void) {
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 4500);
  set_times(9, 1, 1, 1);
  fake->max_block = 32; /* only one warp launches: config 1 */
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 1);
  CHECK_CONTAINS(tile_diagnostics(ctx), "config 2: skipped (cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  fake->max_block = 16; /* nothing launches */
  b.n = 4000;
  CHECK(launch(k, &b, 3) == TILE_ERROR_COMPILE); /* config 0's status: the first failure */
  CHECK_CONTAINS(tile_error(ctx), "autotune: no config of kernel 'bump' could run for n=4000:\n  config 0: ");
  CHECK_CONTAINS(tile_error(ctx), "\n  config 4: cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
  fake->max_block = 0;
  /* a config needing more shared memory than the GPU allows (the transpose of a 128x128 tile) */
  tile_context_destroy(ctx);
  fake->max_shared_optin = 60000;
  ctx = context(0);
  k = kernel(ctx, transpose_source, -1);
  void *x = NULL, *y = NULL;
  tile_malloc(ctx, &x, 4 * 128 * 128), tile_malloc(ctx, &y, 4 * 128 * 128);
  tile_arg args[] = {tile_buffer(x, "fp32", 0), tile_buffer(y, "fp32", 0)};
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_launch(k, grid, NULL, args, 2) == TILE_OK && tile_kernel_config(k) == 1);
  CHECK_CONTAINS(tile_diagnostics(ctx), "config 0: skipped (kernel 'tr' needs ");
  CHECK_CONTAINS(tile_diagnostics(ctx), "bytes of shared memory; Fake GPU allows 60000)");
  tile_context_destroy(ctx);
  fake->max_shared_optin = 227 * 1024;
}

/* tile_kernel_compile: every config before a choice, the choice after; one config, a fixed config. */
static void test_compile_and_fixed(void) {
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 3000);
  tile_arg args[] = {tile_buffer(b.x, "fp32", 3000), tile_buffer(b.acc, "fp32", 1), tile_int(3000), tile_int(3)};
  CHECK(tile_kernel_compile(k, args, 4) == TILE_OK && tile_kernel_config(k) == 1); /* the first that compiles */
  set_times(3, 3, 3, 1);
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 4);
  CHECK(tile_kernel_compile(k, args, 4) == TILE_OK && tile_kernel_config(k) == 4);
  tile_kernel *fixed = kernel(ctx, bump_source, 2);
  int launches = fake->launches;
  CHECK(launch(fixed, &b, 3) == TILE_OK && fake->launches == launches + 1 && tile_kernel_config(fixed) == 2);
  tile_context_destroy(ctx);
}

/* One config: used as it is, nothing timed. */
static void test_single_config(void) {
  static const char source[] =
      "import triton\n"
      "import triton.language as tl\n"
      "@triton.autotune(configs=[triton.Config({'BLOCK': 256}, num_warps=2)], key=['n'])\n"
      "@triton.jit\n"
      "def bump(x_ptr, acc_ptr, n, m, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n";
  tile_context *ctx = context(0);
  tile_kernel *k = kernel(ctx, source, -1);
  Buffers b = buffers(ctx, 1000);
  int launches = fake->launches;
  CHECK(launch(k, &b, 3) == TILE_OK && fake->launches == launches + 1 && tile_kernel_config(k) == 0);
  CHECK(grid_blocks == 256 && !strstr(tile_diagnostics(ctx), "autotune"));
  tile_context_destroy(ctx);
}

/* Mistakes in the decorator or the arguments. */
static void test_errors(void) {
  static const char not_a_buffer[] =
      "import triton\n"
      "import triton.language as tl\n"
      "@triton.autotune(configs=[triton.Config({'BLOCK': 256}), triton.Config({'BLOCK': 512})], key=['n'],\n"
      "                 reset_to_zero=['n'])\n"
      "@triton.jit\n"
      "def bump(x_ptr, acc_ptr, n: \"i32\", m, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n";
  tile_context *ctx = context(0);
  tile_kernel *k = NULL;
  tile_options o;
  tile_options_init(&o);
  /* the declaration is checked when the kernel is created, not at its first launch */
  CHECK(tile_kernel_create(ctx, "bump.tl", not_a_buffer, strlen(not_a_buffer), &o, &k) == TILE_ERROR_COMPILE && !k);
  CHECK_CONTAINS(tile_error(ctx), "bump.tl:4:32: error: autotune reset_to_zero 'n' must be a pointer parameter (a buffer) of 'bump'");
  Buffers b = buffers(ctx, 1000);
  /* a reset_to_zero buffer whose size is unknown: no count, not tile_malloc memory */
  k = kernel(ctx, bump_source, -1);
  static float outside[16];
  tile_arg args[] = {tile_buffer(b.x, "fp32", 1000), tile_buffer(outside, "fp32", 0), tile_int(1000), tile_int(3)};
  CHECK(tile_launch_grid(k, grid_bump, NULL, NULL, args, 4) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "autotune reset_to_zero: argument 1 ('acc_ptr') has no element count and is not memory "
                                  "from tile_malloc");
  tile_context_destroy(ctx);
}

/* A pipelined tl.dot loop: two configs with an early and a late refill schedule (sm_90a), and one
 * whose two buffers cannot go fewer (mma.sync on 2 warps, 2 stages): its other schedule is its own code. */
static const char dot_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.autotune(configs=[triton.Config({'BN': 64}, num_warps=4, num_stages=3),\n"
    "                          triton.Config({'BN': 128}, num_warps=4, num_stages=3),\n"
    "                          triton.Config({'BN': 64}, num_warps=2, num_stages=2)], key=['K'])\n"
    "@triton.jit\n"
    "def dot_rows(a_ptr, b_ptr, c_ptr, K, BN: tl.constexpr):\n"
    "    rm = tl.arange(0, 64)\n"
    "    rn = tl.program_id(0) * BN + tl.arange(0, BN)\n"
    "    rk = tl.arange(0, 32)\n"
    "    acc = tl.zeros((64, BN), dtype=tl.float32)\n"
    "    for k in range(0, K, 32):\n"
    "        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])\n"
    "        b = tl.load(b_ptr + (k + rk)[:, None] * 256 + rn[None, :])\n"
    "        acc += tl.dot(a, b)\n"
    "    tl.store(c_ptr + rm[:, None] * 256 + rn[None, :], acc.to(tl.float16))\n";

/* The least shared memory is fastest, 2 warps slowest. */
static double by_shared(FakeCuda *state, void **params) { return 1.0 + state->shared / 1e6 + (state->block[0] < 128); }

static void grid_dot(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  long long bn = 1;
  tile_kernel_constexpr(k, "BN", &bn);
  grid[0] = (unsigned)(256 / bn);
}

static tile_status launch_dot(tile_kernel *k, void *a, void *b, void *c, int K) {
  tile_arg args[] = {tile_buffer(a, "fp16", 0), tile_buffer(b, "fp16", 0), tile_buffer(c, "fp16", 0), tile_int(K)};
  return tile_launch_grid(k, grid_dot, NULL, NULL, args, 4);
}

/* A (64 x 512), B (512 x 256) and C (64 x 256) of fp16 for the dot kernels below. */
static void dot_buffers(tile_context *ctx, void **a, void **b, void **c) {
  CHECK(tile_malloc(ctx, a, 64 * 512 * 2) == TILE_OK && tile_malloc(ctx, b, 512 * 256 * 2) == TILE_OK &&
        tile_malloc(ctx, c, 64 * 256 * 2) == TILE_OK);
}

/* A tuned kernel of `source` with these refill and tma options. */
static tile_kernel *tuned(tile_context *ctx, const char *name, const char *source, int refill, int tma) {
  tile_options o;
  tile_options_init(&o);
  o.refill = refill;
  o.tma = tma;
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create(ctx, name, source, strlen(source), &o, &k) == TILE_OK);
  return k;
}

static tile_kernel *dot_kernel(tile_context *ctx, int refill) { return tuned(ctx, "dot.tl", dot_source, refill, TILE_TMA_AUTO); }

/* Each config's other refill schedule is timed too, and may be the choice: on disk with it. */
static void test_refill(void) {
  fake->on_launch = by_shared; /* config 0 refilled late */
  tile_context *ctx = context(0);
  tile_kernel *k = dot_kernel(ctx, TILE_REFILL_AUTO);
  void *a = NULL, *b = NULL, *c = NULL;
  dot_buffers(ctx, &a, &b, &c);
  CHECK(launch_dot(k, a, b, c, 512) == TILE_OK);
  const char *notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "config 0: 1.0");
  CHECK_CONTAINS(notes, "config 1: 1.0");
  CHECK_CONTAINS(notes, "config 0, refill late: 1.0");
  CHECK_CONTAINS(notes, "config 1, refill late: 1.0");
  CHECK(!strstr(notes, "refill early")); /* the compiler's own choice for both: timed once */
  CHECK_CONTAINS(notes, "config 2: 2.0");
  CHECK_CONTAINS(notes, "config 2, refill late: the same code as config 2's, not timed again");
  CHECK_CONTAINS(notes, "chose config 0, refill late");
  CHECK(tile_kernel_config(k) == 0);
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"refill\": \"late\"");
  unsigned shared = fake->shared;
  tile_context_destroy(ctx);
  /* another context: the variant from disk, nothing timed */
  ctx = context(0);
  k = dot_kernel(ctx, TILE_REFILL_AUTO);
  dot_buffers(ctx, &a, &b, &c);
  int launches = fake->launches;
  CHECK(launch_dot(k, a, b, c, 512) == TILE_OK && fake->launches == launches + 1 && fake->shared == shared);
  CHECK_CONTAINS(tile_diagnostics(ctx), "config 0, refill late, tuned by an earlier run (disk cache)");
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"refill\": \"late\"");
  /* refill fixed by the options: one schedule a config */
  k = dot_kernel(ctx, TILE_REFILL_EARLY);
  CHECK(launch_dot(k, a, b, c, 512) == TILE_OK);
  notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "config 1: 1.0");
  CHECK(!strstr(notes, "refill late") && !strstr(notes, "refill early"));
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"refill\": \"early\"");
  CHECK(fake->shared > shared);
  /* a value out of range */
  tile_options o;
  tile_options_init(&o);
  o.refill = 3;
  CHECK(tile_kernel_create(ctx, "dot.tl", dot_source, strlen(dot_source), &o, &k) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "refill must be 0 (TILE_REFILL_AUTO), 1 (TILE_REFILL_EARLY) or 2 (TILE_REFILL_LATE), not 3");
  tile_context_destroy(ctx);
  fake->on_launch = on_launch;
}

/* A masked dot loop whose operands TMA can bring (sm_90a): with the least shared memory fastest,
 * each variant with TMA copies (32 bytes of mbarriers more) loses to itself without. */
static const char tma_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "@triton.autotune(configs=[triton.Config({'BN': 64}, num_warps=4, num_stages=3),\n"
    "                          triton.Config({'BN': 128}, num_warps=4, num_stages=3)], key=['K'])\n"
    "@triton.jit\n"
    "def dot_masked(a_ptr, b_ptr, c_ptr, M, N, K, BN: tl.constexpr):\n"
    "    rm = tl.arange(0, 64)\n"
    "    rn = tl.program_id(0) * BN + tl.arange(0, BN)\n"
    "    rk = tl.arange(0, 64)\n"
    "    a_ptrs = a_ptr + rm[:, None] * K + rk[None, :]\n"
    "    b_ptrs = b_ptr + rk[:, None] * N + rn[None, :]\n"
    "    acc = tl.zeros((64, BN), dtype=tl.float32)\n"
    "    for k in range(0, K, 64):\n"
    "        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)\n"
    "        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)\n"
    "        acc += tl.dot(a, b)\n"
    "        a_ptrs += 64\n"
    "        b_ptrs += 64 * N\n"
    "    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))\n";

static tile_kernel *tma_kernel(tile_context *ctx, int tma) { return tuned(ctx, "tma.tl", tma_source, TILE_REFILL_AUTO, tma); }

static tile_status launch_tma(tile_kernel *k, void *a, void *b, void *c) {
  tile_arg args[] = {tile_buffer(a, "fp16", 0), tile_buffer(b, "fp16", 0), tile_buffer(c, "fp16", 0), tile_int(64),
                     tile_int(256), tile_int(512)};
  return tile_launch_grid(k, grid_dot, NULL, NULL, args, 6);
}

static void test_tma(void) {
  fake->on_launch = by_shared;
  tile_context *ctx = context(0);
  tile_kernel *k = tma_kernel(ctx, TILE_TMA_AUTO);
  void *a = NULL, *b = NULL, *c = NULL;
  dot_buffers(ctx, &a, &b, &c);
  CHECK(launch_tma(k, a, b, c) == TILE_OK);
  const char *notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "config 0: 1.0");
  CHECK_CONTAINS(notes, "config 0, no TMA: 1.0");
  CHECK_CONTAINS(notes, "config 1, refill early, no TMA: 1.0");
  CHECK_CONTAINS(notes, "chose config 0, no TMA");
  CHECK(tile_kernel_config(k) == 0);
  CHECK(!strstr(tile_kernel_metadata(k), "tensor_maps"));
  tile_context_destroy(ctx);
  /* another context: the variant from disk, nothing timed */
  ctx = context(0);
  k = tma_kernel(ctx, TILE_TMA_AUTO);
  dot_buffers(ctx, &a, &b, &c);
  int launches = fake->launches;
  CHECK(launch_tma(k, a, b, c) == TILE_OK && fake->launches == launches + 1);
  CHECK_CONTAINS(tile_diagnostics(ctx), "config 0, no TMA, tuned by an earlier run (disk cache)");
  CHECK(!strstr(tile_kernel_metadata(k), "tensor_maps"));
  /* TMA off by the options: no variant has it, none is timed twice for it */
  k = tma_kernel(ctx, TILE_TMA_OFF);
  CHECK(launch_tma(k, a, b, c) == TILE_OK);
  notes = tile_diagnostics(ctx);
  CHECK_CONTAINS(notes, "config 1: 1.0");
  CHECK(!strstr(notes, "no TMA"));
  /* with TMA, the launch passes the maps: one a load */
  tile_options o;
  tile_options_init(&o);
  o.config = 1;
  CHECK(tile_kernel_create(ctx, "tma.tl", tma_source, strlen(tma_source), &o, &k) == TILE_OK);
  CHECK(launch_tma(k, a, b, c) == TILE_OK);
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"tensor_maps\"");
  /* a value out of range */
  o.config = -1;
  o.tma = 2;
  CHECK(tile_kernel_create(ctx, "tma.tl", tma_source, strlen(tma_source), &o, &k) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tma must be TILE_TMA_AUTO (0) or TILE_TMA_OFF (1), not 2");
  tile_context_destroy(ctx);
  fake->on_launch = on_launch;
}

/* On the interpreter: the first config that compiles, nothing timed, and the right result. */
static void test_cpu(void) {
  tile_context *ctx = context(1);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 300);
  float want = 0;
  for (int i = 0; i < 300; i++) b.x[i] = (float)(rand() % 100), want += b.x[i];
  b.acc[0] = 0;
  float x0[300];
  memcpy(x0, b.x, sizeof x0);
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 1 && grid_blocks == 128);
  int same = 1;
  for (int i = 0; i < 300; i++) same &= b.x[i] == x0[i] + 3;
  CHECK(same && b.acc[0] == want);
  CHECK_CONTAINS(tile_diagnostics(ctx), "(CPU interpreter: nothing timed, the first config that compiles)");
  CHECK_CONTAINS(tile_diagnostics(ctx), "chose config 1");
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"config\": 1");
  tile_context_destroy(ctx);
}

/* Configs from a module-level function (a comprehension over zip with a
 * tuple target, filtered by a predicate, '**' options) and a heuristic on a
 * config's value, on the CPU interpreter, against a C reference at an
 * irregular size. */
static void test_cpu_host_configs(void) {
  static const char source[] =
      "import triton\n"
      "import triton.language as tl\n"
      "\n"
      "def configs():\n"
      "    opts = dict(num_stages=2)\n"
      "    every = [triton.Config({'BLOCK': b, 'SCALE': s}, num_warps=w, **opts)\n"
      "             for b, w in zip([64, 128, 256], [1, 2, 4]) for s in (2, 3)]\n"
      "    return [c for c in every if c.kwargs['BLOCK'] >= 128 and c.kwargs['SCALE'] == 3]\n"
      "\n"
      "@triton.autotune(configs=configs(), key=['n'])\n"
      "@triton.heuristics({'HALF': lambda args: args['BLOCK'] // 2})\n"
      "@triton.jit\n"
      "def bump(x_ptr, acc_ptr, n, m, BLOCK: tl.constexpr, SCALE: tl.constexpr, HALF: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
      "    tl.store(x_ptr + offs, x * SCALE + HALF + m, mask=offs < n)\n"
      "    tl.atomic_add(acc_ptr + offs * 0, x, mask=offs < n)\n";
  tile_context *ctx = context(1);
  tile_kernel *k = kernel(ctx, source, -1);
  Buffers b = buffers(ctx, 301);
  float x0[301], want = 0;
  for (int i = 0; i < 301; i++) x0[i] = b.x[i] = (float)(rand() % 100), want += b.x[i];
  b.acc[0] = 0;
  CHECK(launch(k, &b, 5) == TILE_OK && tile_kernel_config(k) == 0 && grid_blocks == 128);
  int same = 1;
  for (int i = 0; i < 301; i++) same &= b.x[i] == x0[i] * 3 + 64 + 5;
  long long half = 0;
  CHECK(tile_kernel_constexpr(k, "HALF", &half) == TILE_OK && half == 64);
  CHECK(same && b.acc[0] == want);
  tile_context_destroy(ctx);
}

/* ---- @triton.heuristics on a launch's arguments: the disk cache -------------------------------- */

static int cache_entries(const char *dir);

/* The heuristics' values are part of the disk cache's key: n = 1024 and 1040
 * (one signature, i32:16; EVEN_N differs) write two entries, 1008 and 512 none
 * more; another context finds both (tests/unit/test_heuristics.c checks the
 * results, on the interpreter). */
static void test_heuristics_disk_cache(void) {
  static const char source[] =
      "import triton\n"
      "import triton.language as tl\n"
      "\n"
      "@triton.heuristics({'EVEN_N': lambda args: args['n'] % args['BLOCK'] == 0})\n"
      "@triton.jit\n"
      "def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN_N: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    if EVEN_N:\n"
      "        tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)\n"
      "    else:\n"
      "        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n";
  char dir[] = "/tmp/tile-heuristics-XXXXXX";
  if (!mkdtemp(dir)) return;
  int sizes[] = {1024, 1040, 1008, 512};
  for (int round = 0; round < 2; round++) { /* the second in a new context, on the same cache */
    tile_context *ctx = context_with(0, dir, NULL);
    tile_options o;
    tile_options_init(&o);
    const char *defines[] = {"BLOCK=256"};
    o.defines = defines, o.num_defines = 1;
    tile_kernel *k = NULL;
    CHECK(tile_kernel_create(ctx, "scale.tl", source, strlen(source), &o, &k) == TILE_OK);
    float *x = NULL, *y = NULL;
    CHECK(tile_malloc(ctx, (void **)&x, 8192) == TILE_OK && tile_malloc(ctx, (void **)&y, 8192) == TILE_OK);
    for (int i = 0; i < 4; i++) {
      tile_arg args[] = {tile_buffer(x, "fp32", 2048), tile_buffer(y, "fp32", 2048), tile_int(sizes[i])};
      long long even = -1;
      CHECK(tile_launch(k, (unsigned[3]){5, 1, 1}, NULL, args, 3) == TILE_OK);
      CHECK(tile_kernel_constexpr(k, "EVEN_N", &even) == TILE_OK && even == (sizes[i] % 256 == 0));
      CHECK(cache_entries(dir) == (round == 0 && i == 0 ? 1 : 2));
    }
    tile_context_destroy(ctx);
  }
  remove_dir(dir);
}

/* ---- TILE_PRINT_AUTOTUNING ------------------------------------------------------------------ */

static char captured[8192];

/* Sends stderr to a file until end_capture, which reads it into `captured`. */
static int begin_capture(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/stderr.txt", cache_dir);
  fflush(stderr);
  int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  CHECK(saved >= 0 && fd >= 0 && dup2(fd, 2) == 2);
  close(fd);
  return saved;
}

static const char *end_capture(int saved) {
  char path[128];
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  snprintf(path, sizeof path, "%s/stderr.txt", cache_dir);
  FILE *f = fopen(path, "rb");
  size_t n = f ? fread(captured, 1, sizeof captured - 1, f) : 0;
  captured[n] = 0;
  if (f) fclose(f);
  remove(path);
  return captured;
}

/* Each config's time and the choice with its key on stderr, as Triton's TRITON_PRINT_AUTOTUNING=1 prints them:
 * when tuned, when the choice comes from disk, and on the interpreter; nothing without the variable, nothing
 * when the choice is in memory. */
static void test_print(void) {
  setenv("TILE_PRINT_AUTOTUNING", "1", 1);
  tile_context *ctx = context(0);
  unsetenv("TILE_PRINT_AUTOTUNING");
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 4321); /* a key no other test uses: tuned here */
  set_times(4, 3, 1, 2);
  int saved = begin_capture();
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 3);
  const char *text = end_capture(saved);
  CHECK_CONTAINS(text, "tile autotuning for kernel 'bump' with key n=4321:\n  config 0: skipped (");
  CHECK_CONTAINS(text, "\n  config 1: 4.0000 ms (1 warp)\n  config 2: 3.0000 ms (2 warps)\n"
                       "  config 3: 1.0000 ms (4 warps)\n  config 4: 2.0000 ms (8 warps)\n"
                       "tile autotuning for kernel 'bump' finished after ");
  CHECK_CONTAINS(text, " s; best config selected: config 3 (BLOCK: 512, num_warps: 4, num_stages: 3, maxnreg: 64);\n");
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"maxnreg\": 64,"); /* the chosen config compiled with its cap */
  saved = begin_capture();
  CHECK(launch(k, &b, 3) == TILE_OK); /* chosen already: nothing to say */
  CHECK(!strcmp(end_capture(saved), ""));
  tile_context_destroy(ctx);
  /* another process's view: the choice from the disk cache, said so */
  setenv("TILE_PRINT_AUTOTUNING", "yes", 1);
  ctx = context(0);
  unsetenv("TILE_PRINT_AUTOTUNING");
  k = kernel(ctx, bump_source, -1);
  b = buffers(ctx, 4321);
  saved = begin_capture();
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 3);
  CHECK_CONTAINS(end_capture(saved), "tile autotuning for kernel 'bump' with key n=4321:\n"
                                     "  config 3, tuned by an earlier run (disk cache)\n"
                                     "tile autotuning for kernel 'bump' finished after ");
  tile_context_destroy(ctx);
  /* the interpreter: the first config that compiles */
  setenv("TILE_PRINT_AUTOTUNING", "on", 1);
  ctx = context(1);
  unsetenv("TILE_PRINT_AUTOTUNING");
  k = kernel(ctx, bump_source, -1);
  b = buffers(ctx, 100);
  saved = begin_capture();
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 1);
  text = end_capture(saved);
  CHECK_CONTAINS(text, "tile autotuning for kernel 'bump' with key n=100 (CPU interpreter: nothing timed, the first "
                       "config that compiles):\n  config 0: skipped (");
  CHECK_CONTAINS(text, "best config selected: config 1 (BLOCK: 128, num_warps: 1, num_stages: 3);\n");
  tile_context_destroy(ctx);
  /* not asked: the library prints nothing */
  ctx = context(0);
  k = kernel(ctx, bump_source, -1);
  b = buffers(ctx, 4322);
  saved = begin_capture();
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 3);
  CHECK(!strcmp(end_capture(saved), ""));
  CHECK_CONTAINS(tile_diagnostics(ctx), "chose config 3"); /* the same report, where it always is */
  tile_context_destroy(ctx);
}

/* ---- compiling the configs on several threads ------------------------------------------------ */

static int cache_entries(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) n += e->d_name[0] != '.';
  if (d) closedir(d);
  return n;
}

/* The rest of the line of `text` from `start` on, malloc'd; "" if `start` is not there. */
static char *line_of(const char *text, const char *start) {
  const char *at = strstr(text, start);
  return at ? strndup(at, strcspn(at, "\n")) : strdup("");
}

/* bump tuned with TILE_COMPILE_THREADS=threads, each config compiled into
 * the fresh cache `dir` (made here), by tile_kernel_compile first or by the
 * launch.  Each config that compiles is built once, the tuning builds
 * nothing more.  Returns the report's line on config 0 (malloc'd). */
static char *tune_with_threads(const char *threads, char *dir, int compile_first) {
  snprintf(dir, 64, "/tmp/tile-autotune-threads-XXXXXX");
  CHECK(mkdtemp(dir) != NULL);
  tile_context *ctx = context_with(0, dir, threads);
  tile_kernel *k = kernel(ctx, bump_source, -1);
  Buffers b = buffers(ctx, 6000);
  tile_arg args[] = {tile_buffer(b.x, "fp32", 6000), tile_buffer(b.acc, "fp32", 1), tile_int(6000), tile_int(3)};
  int modules = fake->live_modules;
  if (compile_first) {
    CHECK(tile_kernel_compile(k, args, 4) == TILE_OK && tile_kernel_config(k) == 1);
    CHECK(!strcmp(tile_error(ctx), "")); /* config 0 did not compile: its diagnostics, not an error */
    CHECK(fake->live_modules == modules + 4 && cache_entries(dir) == 4); /* configs 1 to 4 */
    CHECK(tile_kernel_text(k, TILE_STAGE_TIR) != NULL); /* compiled, not read back from the cache */
  }
  set_times(4, 3, 1, 2);
  CHECK(launch(k, &b, 3) == TILE_OK && tile_kernel_config(k) == 3 && tile_kernel_text(k, TILE_STAGE_TIR) != NULL);
  CHECK(fake->live_modules == modules + 4 && cache_entries(dir) == 5); /* and the choice */
  char *skipped = line_of(tile_diagnostics(ctx), "config 0: skipped (");
  tile_context_destroy(ctx);
  return skipped;
}

/* None of the configs compiles: tile_kernel_compile's error lists each one's reason. */
static char *none_compiles(const char *threads) {
  static const char source[] =
      "import triton\n"
      "import triton.language as tl\n"
      "@triton.autotune(configs=[triton.Config({'BLOCK': 100}), triton.Config({'BLOCK': 200}),\n"
      "                          triton.Config({'BLOCK': 300}), triton.Config({'BLOCK': 400})], key=['n'])\n"
      "@triton.jit\n"
      "def bump(x_ptr, acc_ptr, n, m, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n";
  char dir[64] = "/tmp/tile-autotune-threads-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  tile_context *ctx = context_with(0, dir, threads);
  tile_kernel *k = kernel(ctx, source, -1);
  Buffers b = buffers(ctx, 100);
  tile_arg args[] = {tile_buffer(b.x, "fp32", 100), tile_buffer(b.acc, "fp32", 1), tile_int(100), tile_int(3)};
  CHECK(tile_kernel_compile(k, args, 4) == TILE_ERROR_COMPILE);
  char *error = strdup(tile_error(ctx));
  tile_context_destroy(ctx);
  remove_dir(dir);
  return error;
}

/* The configs compiled on 4 threads give what one thread gives: the same
 * cubins and metadata (the disk cache's entries, byte for byte), the same
 * choice, and the same report of the config that does not compile. */
static void test_threads(void) {
  char one[64], four[64], diff[160];
  for (int compile_first = 0; compile_first < 2; compile_first++) {
    char *skipped_one = tune_with_threads("1", one, compile_first);
    char *skipped_four = tune_with_threads("4", four, compile_first);
    CHECK_CONTAINS(skipped_one, "config 0: skipped (bump.tl:");
    CHECK(!strcmp(skipped_one, skipped_four));
    snprintf(diff, sizeof diff, "diff -r '%s' '%s'", one, four);
    CHECK(system(diff) == 0);
    free(skipped_one), free(skipped_four);
    remove_dir(one), remove_dir(four);
  }
  char *error_one = none_compiles("1"), *error_four = none_compiles("4");
  CHECK_CONTAINS(error_one, "autotune: no config of kernel 'bump' could run for n=100:\n  config 0: bump.tl:");
  CHECK_CONTAINS(error_one, "\n  config 3: bump.tl:");
  CHECK(!strcmp(error_one, error_four));
  free(error_one), free(error_four);
}

int main(void) {
  srand((unsigned)time(NULL));
  void *library;
  fake = fake_cuda_open(FAKE_CUDA_PATH, &library);
  if (!fake) return 1;
  fake->on_launch = on_launch;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-autotune-XXXXXX");
  if (!mkdtemp(cache_dir)) return 1;
  test_choice();
  test_prune();
  test_prune_fixed_signature();
  test_disk_cache();
  test_flush();
  test_skips();
  test_compile_and_fixed();
  test_single_config();
  test_errors();
  test_cpu();
  test_cpu_host_configs();
  test_heuristics_disk_cache();
  test_print();
  test_threads();
  test_refill();
  test_tma();
  fake->on_launch = NULL;
  remove_dir(cache_dir);
  dlclose(library);
  return check_report();
}
