/* Hostile inputs at the public API (issue #22): no crash, no hang, no silent
 * wrong answer.  Each case names what it once did; all run on the CPU
 * interpreter, against include/tile/tile.h only. */
#include "check.h"
#include "tile/tile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char store_n[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def fill(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)\n";

static const char read_past[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def past(x_ptr, y_ptr):\n"
    "    offs = tl.arange(0, 8)\n"
    "    tl.store(y_ptr + offs, tl.load(x_ptr + offs))\n";

static const char endless[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def spin(x_ptr):\n"
    "    i = 0\n"
    "    while i >= 0:\n"
    "        i = (i + 1) % 7\n"
    "    tl.store(x_ptr, i)\n";

static tile_context *cpu_context(void) {
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  return ctx;
}

static const char *block_define[] = {"BLOCK=8"};

static tile_options with_block(void) {
  tile_options o;
  tile_options_init(&o);
  o.defines = block_define;
  o.num_defines = 1;
  return o;
}

/* ---- 1. options with NULL defines; foreign handles ------------------------------------- */

static void test_null_defines(void) {
  tile_context *ctx = cpu_context();
  static const char *with_null[] = {"BLOCK=8", NULL};
  const char *text;
  tile_kernel *k;
  unsigned grid[3] = {1, 1, 1};
  float x[8];
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_int(8)};
  tile_options o = with_block();
  o.defines = NULL;
  o.num_defines = 2; /* once: a NULL dereference in the checker */
  CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &o, TILE_STAGE_TIR, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_emit: options: num_defines is 2 but defines is NULL");
  CHECK(tile_run_cpu(ctx, "f.tl", store_n, sizeof store_n - 1, &o, grid, args, 2, NULL) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_run_cpu: options: num_defines is 2 but defines is NULL");
  o.defines = with_null;
  CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &o, TILE_STAGE_TIR, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_emit: options: defines[1] is NULL");
  const void *image;
  size_t size;
  const char *meta;
  CHECK(tile_compile(ctx, "f.tl", store_n, sizeof store_n - 1, &o, 1, &image, &size, &meta) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_compile: options: defines[1] is NULL");
  CHECK(tile_kernel_create(ctx, "f.tl", store_n, sizeof store_n - 1, &o, &k) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_kernel_create: options: defines[1] is NULL");
  o.num_defines = -1;
  CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &o, TILE_STAGE_TIR, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "num_defines must be 0 or more, not -1");
  tile_context_destroy(ctx);
}

static void test_foreign_handles(void) {
  tile_context *ctx = cpu_context();
  long long not_a_handle[8] = {0};
  tile_stream foreign_stream = (tile_stream)(void *)not_a_handle;
  tile_event foreign_event = (tile_event)(void *)not_a_handle, e1 = NULL, e2 = NULL;
  tile_stream s = NULL;
  float ms;
  CHECK(tile_event_create(ctx, &e1) == TILE_OK && tile_event_create(ctx, &e2) == TILE_OK);
  CHECK(tile_stream_create(ctx, &s) == TILE_OK);
  /* once: writes through the foreign pointer, or a crash */
  CHECK(tile_event_record(ctx, foreign_event, NULL) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_event_record: the event is not one tile_event_create made in this context (or it was destroyed)");
  CHECK(tile_event_record(ctx, e1, foreign_stream) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_event_record: the stream is not one tile_stream_create made in this context");
  CHECK(tile_event_record(ctx, (tile_event)(void *)s, NULL) == TILE_ERROR_ARGUMENT); /* a stream is not an event */
  CHECK(tile_stream_synchronize(ctx, foreign_stream) == TILE_ERROR_ARGUMENT);
  CHECK(tile_event_record(ctx, e1, s) == TILE_OK && tile_event_record(ctx, e2, s) == TILE_OK);
  CHECK(tile_event_elapsed(ctx, e1, foreign_event, &ms) == TILE_ERROR_ARGUMENT);
  CHECK(tile_event_elapsed(ctx, e1, e2, &ms) == TILE_OK);
  tile_stream_destroy(ctx, foreign_stream); /* ignored, not a crash */
  tile_event_destroy(ctx, foreign_event);
  tile_event_destroy(ctx, e2);
  tile_event_destroy(ctx, e2); /* twice: ignored */
  CHECK(tile_event_record(ctx, e2, NULL) == TILE_ERROR_ARGUMENT); /* destroyed */
  /* a launch on a foreign stream */
  tile_kernel *k;
  tile_options o = with_block();
  void *x;
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_malloc(ctx, &x, 8 * sizeof(float)) == TILE_OK);
  CHECK(tile_kernel_create(ctx, "f.tl", store_n, sizeof store_n - 1, &o, &k) == TILE_OK);
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_int(8)};
  CHECK(tile_launch(k, grid, foreign_stream, args, 2) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_launch: the stream is not one tile_stream_create made in this context");
  CHECK(tile_launch(k, grid, s, args, 2) == TILE_OK);
  tile_stream_destroy(ctx, s);
  /* every live handle released once: switching is allowed again only if the counts are right */
  tile_event_destroy(ctx, e1);
  tile_free(ctx, x);
  tile_context_destroy(ctx);
}

/* ---- 2. tile_run_cpu checks its arguments as tile_launch does ----------------------------- */

/* tile_run_cpu of `source` (x_ptr and one scalar) with signature `sig`: the status; x poisoned first. */
static tile_status run_scalar(tile_context *ctx, const char *source, const char *sig, tile_arg scalar, float *x) {
  tile_options o = with_block();
  o.signature = sig;
  unsigned grid[3] = {1, 1, 1};
  for (int i = 0; i < 8; i++) x[i] = -99.0f;
  tile_arg args[] = {tile_buffer(x, "fp32", 8), scalar};
  return tile_run_cpu(ctx, "k.tl", source, strlen(source), &o, grid, args, 2, NULL);
}

static tile_status run_fill(tile_context *ctx, const char *sig, long long n, float *x) {
  return run_scalar(ctx, store_n, sig, tile_int(n), x);
}

static void test_run_cpu_checks_arguments(void) {
  tile_context *ctx = cpu_context();
  float x[8];
  /* once: a ':1' integer given 1000 wrote 1 element; i8 given 1000 none; u8 -1 became 255; i32 2^32 none */
  CHECK(run_fill(ctx, "*fp32,i32:1", 1000, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('n'): the kernel was specialised for the integer 1 (':1'), not 1000");
  CHECK(x[0] == -99.0f);
  CHECK(run_fill(ctx, "*fp32,i8", 1000, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('n'): 1000 does not fit the parameter's type i8");
  CHECK(run_fill(ctx, "*fp32,u8", -1, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('n'): -1 does not fit the parameter's type u8");
  CHECK(run_fill(ctx, "*fp32,i32", 1LL << 32, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('n'): 4294967296 does not fit the parameter's type i32");
  CHECK(run_fill(ctx, "*fp32,i32:16", 5, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('n'): 5 is not divisible by 16");
  CHECK(x[0] == -99.0f);
  CHECK(run_fill(ctx, "*fp32,i8", 3, x) == TILE_OK); /* in range: runs */
  CHECK(x[0] == 0.0f && x[2] == 2.0f && x[3] == -99.0f);
  tile_context_destroy(ctx);
}

static const char store_s[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def put(x_ptr, s, BLOCK: tl.constexpr):\n"
    "    tl.store(x_ptr + tl.arange(0, BLOCK), s.to(tl.float32) + tl.zeros([BLOCK], tl.float32))\n";

static tile_status run_put(tile_context *ctx, const char *sig, double s, float *x) {
  return run_scalar(ctx, store_s, sig, tile_float(s), x);
}

/* once: 1e300 for an fp32 parameter became inf without a word (and its conversion was undefined) */
static void test_float_that_does_not_fit(void) {
  tile_context *ctx = cpu_context();
  float x[8];
  CHECK(run_put(ctx, "*fp32,fp32", 1e300, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 1 ('s'): 1e+300 does not fit the parameter's type fp32 (it would be inf)");
  CHECK(run_put(ctx, "*fp32,fp32", -4e38, x) == TILE_ERROR_ARGUMENT);
  CHECK(run_put(ctx, "*fp32,fp16", 70000.0, x) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "70000 does not fit the parameter's type fp16");
  CHECK(x[0] == -99.0f);
  CHECK(run_put(ctx, "*fp32,fp32", 3e38, x) == TILE_OK && x[7] == 3e38f); /* the largest ones fit */
  CHECK(run_put(ctx, "*fp32,fp16", 65504.0, x) == TILE_OK && x[0] == 65504.0f);
  CHECK(run_put(ctx, "*fp32,fp32", INFINITY, x) == TILE_OK && isinf(x[0])); /* inf itself is a value */
  tile_context_destroy(ctx);
}

/* ---- 3. the interpreter: sizes that overflow, endless loops, messages --------------------- */

static void test_huge_count(void) {
  tile_context *ctx = cpu_context();
  float x[4] = {1, 2, 3, 4}, y[8];
  unsigned grid[3] = {1, 1, 1};
  size_t counts[] = {SIZE_MAX, SIZE_MAX / 4 + 2, (size_t)1 << 62};
  for (int i = 0; i < 3; i++) { /* once: the bounds check off (count * 4 wrapped), a heap overflow */
    tile_arg args[] = {tile_buffer(x, "fp32", counts[i]), tile_buffer(y, "fp32", 8)};
    CHECK(tile_run_cpu(ctx, "p.tl", read_past, sizeof read_past - 1, NULL, grid, args, 2, NULL) == TILE_ERROR_ARGUMENT);
    CHECK_CONTAINS(tile_error(ctx), "argument 0 ('x_ptr'): ");
    CHECK_CONTAINS(tile_error(ctx), "elements of fp32 are more than the interpreter can address");
  }
  tile_arg args[] = {tile_buffer(x, "fp32", 1), tile_buffer(y, "fp32", 8)};
  CHECK(tile_run_cpu(ctx, "p.tl", read_past, sizeof read_past - 1, NULL, grid, args, 2, NULL) == TILE_ERROR_RUNTIME);
  CHECK_CONTAINS(tile_error(ctx), "element 1 of 'x_ptr', which has 1 element (lane 1)");
  tile_context_destroy(ctx);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_endless_loop(void) {
  setenv("TILE_INTERPRET_TIMEOUT", "1", 1);
  tile_context *ctx = cpu_context();
  unsigned grid[3] = {1, 1, 1};
  int x = -5;
  tile_arg args[] = {tile_buffer(&x, "i32", 1)};
  double start = now_s();
  /* once: 2^30 iterations, 101 s */
  CHECK(tile_run_cpu(ctx, "spin.tl", endless, sizeof endless - 1, NULL, grid, args, 1, NULL) == TILE_ERROR_RUNTIME);
  double took = now_s() - start;
  CHECK(took < 10);
  CHECK_CONTAINS(tile_error(ctx), "kernel 'spin', spin.tl:5 (program 0, 0, 0): the while loop ran past the interpreter's time limit of 1 s (TILE_INTERPRET_TIMEOUT)");
  CHECK(x == -5);
  /* through a kernel: the same limit */
  tile_kernel *k;
  void *buf;
  CHECK(tile_malloc(ctx, &buf, 4) == TILE_OK);
  CHECK(tile_kernel_create(ctx, "spin.tl", endless, sizeof endless - 1, NULL, &k) == TILE_OK);
  tile_arg dev[] = {tile_buffer(buf, "i32", 1)};
  CHECK(tile_launch(k, grid, NULL, dev, 1) == TILE_ERROR_RUNTIME);
  CHECK_CONTAINS(tile_error(ctx), "spin.tl:5 (program 0, 0, 0): the while loop ran past the interpreter's time limit");
  tile_context_destroy(ctx);
  unsetenv("TILE_INTERPRET_TIMEOUT");
}

/* ---- 3b. the environment: every TILE_* value checked once, at tile_context_create ------------- */

/* The message tile_context_create gives with `name` set to `value` ("" when it succeeds); the context it
 * makes either way is checked to be one (usable, destroyable). */
static const char *create_with(const char *name, const char *value, int *on_cpu) {
  static char message[512];
  setenv(name, value, 1);
  tile_context *ctx = NULL;
  tile_status s = tile_context_create(&ctx);
  unsetenv(name);
  CHECK(ctx != NULL);
  snprintf(message, sizeof message, "%s", tile_error(ctx));
  CHECK((s == TILE_OK) == !message[0] && (s == TILE_OK || s == TILE_ERROR_ARGUMENT));
  if (on_cpu) *on_cpu = tile_context_on_cpu(ctx);
  tile_context_destroy(ctx);
  return message;
}

static void test_environment(void) {
  int on = -1;
  /* TILE_INTERPRET: once only "1" turned it on, and "true" silently ran on the GPU */
  const char *yes[] = {"1", "true", "TRUE", "yes", "Yes", "on", "ON"}, *no[] = {"", "0", "false", "False", "no", "off", "OFF"};
  for (int i = 0; i < 7; i++) {
    CHECK(!strcmp(create_with("TILE_INTERPRET", yes[i], &on), "") && on == 1);
    CHECK(!strcmp(create_with("TILE_INTERPRET", no[i], &on), "") && on == 0);
  }
  CHECK(!strcmp(create_with("TILE_INTERPRET", "maybe", &on),
                "TILE_INTERPRET is 'maybe': expected 1, true, yes or on (kernels run on the CPU interpreter), "
                "or 0, false, no, off or nothing"));
  CHECK(on == 0);
  CHECK(!strcmp(create_with("TILE_INTERPRET", "2", NULL), "TILE_INTERPRET is '2': expected 1, true, yes or on "
                                                          "(kernels run on the CPU interpreter), or 0, false, no, off or nothing"));
  CHECK(!strcmp(create_with("TILE_PRINT_AUTOTUNING", "Yes", NULL), ""));
  CHECK_CONTAINS(create_with("TILE_PRINT_AUTOTUNING", "verbose", NULL), "TILE_PRINT_AUTOTUNING is 'verbose': expected 1, true");
  /* the numbers, one parser: once TILE_INTERPRET_TIMEOUT=abc was the default without a word */
  CHECK(!strcmp(create_with("TILE_INTERPRET_TIMEOUT", "abc", NULL),
                "TILE_INTERPRET_TIMEOUT is 'abc': expected a number of seconds from 0 (no limit) to 1000000000"));
  CHECK(!strcmp(create_with("TILE_INTERPRET_TIMEOUT", "-1", NULL),
                "TILE_INTERPRET_TIMEOUT is '-1': expected a number of seconds from 0 (no limit) to 1000000000"));
  CHECK(!strcmp(create_with("TILE_INTERPRET_TIMEOUT", "nan", NULL),
                "TILE_INTERPRET_TIMEOUT is 'nan': expected a number of seconds from 0 (no limit) to 1000000000"));
  CHECK(!strcmp(create_with("TILE_INTERPRET_TIMEOUT", "0.25", NULL), ""));
  CHECK(!strcmp(create_with("TILE_INTERPRET_TIMEOUT", "0", NULL), ""));
  CHECK(!strcmp(create_with("TILE_PTXAS_TIMEOUT", "5m", NULL),
                "TILE_PTXAS_TIMEOUT is '5m': expected a whole number of seconds from 0 (no limit) to 16777216"));
  CHECK(!strcmp(create_with("TILE_PTXAS_TIMEOUT", "1.5", NULL),
                "TILE_PTXAS_TIMEOUT is '1.5': expected a whole number of seconds from 0 (no limit) to 16777216"));
  CHECK(!strcmp(create_with("TILE_PTXAS_TIMEOUT", "16777217", NULL),
                "TILE_PTXAS_TIMEOUT is '16777217': expected a whole number of seconds from 0 (no limit) to 16777216"));
  CHECK(!strcmp(create_with("TILE_PTXAS_TIMEOUT", "16777216", NULL), ""));
  CHECK(!strcmp(create_with("TILE_PTXAS_MEMORY", "-1", NULL),
                "TILE_PTXAS_MEMORY is '-1': expected a whole number of MiB from 0 (no limit) to 1073741824"));
  CHECK(!strcmp(create_with("TILE_PTXAS_MEMORY", "99999999999999999999999", NULL),
                "TILE_PTXAS_MEMORY is '99999999999999999999999': expected a whole number of MiB from 0 (no limit) to 1073741824"));
  CHECK(!strcmp(create_with("TILE_COMPILE_THREADS", "65", NULL),
                "TILE_COMPILE_THREADS is '65': expected a whole number of threads from 0 (one per core, at most 16) to 64"));
  CHECK(!strcmp(create_with("TILE_COMPILE_THREADS", "4x", NULL),
                "TILE_COMPILE_THREADS is '4x': expected a whole number of threads from 0 (one per core, at most 16) to 64"));
  CHECK(!strcmp(create_with("TILE_COMPILE_THREADS", "64", NULL), ""));
  /* a long value is cut in the message, not overflowing it */
  char long_value[600];
  memset(long_value, '7', sizeof long_value - 1);
  long_value[sizeof long_value - 1] = 0;
  CHECK_CONTAINS(create_with("TILE_PTXAS_MEMORY", long_value, NULL),
                 "TILE_PTXAS_MEMORY is '7777777777777777777777777777777777777777': expected");
  /* the first bad variable is named; the context keeps the defaults and runs */
  setenv("TILE_INTERPRET_TIMEOUT", "soon", 1);
  setenv("TILE_INTERPRET", "1", 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "TILE_INTERPRET_TIMEOUT is 'soon'");
  unsigned grid[3] = {1, 1, 1};
  float x[8];
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_int(8)};
  tile_options o = with_block();
  CHECK(tile_run_cpu(ctx, "fill.tl", store_n, sizeof store_n - 1, &o, grid, args, 2, NULL) == TILE_OK && x[7] == 7);
  tile_context_destroy(ctx);
  unsetenv("TILE_INTERPRET_TIMEOUT");
  unsetenv("TILE_INTERPRET");
}

/* ---- 3c. struct sizes (docs/abi.md, section 10) --------------------------------------------- */

/* A struct from a newer tile.h (larger) is refused, naming both sizes; tile_options_init_size writes
 * nothing past the size it is given; a tile_arg not made by the makers is refused before it is read. */
static void test_struct_sizes(void) {
  tile_context *ctx = cpu_context();
  const char *text;
  struct {
    tile_options o;
    long long newer_field;
    unsigned char guard[16];
  } big;
  memset(&big, 0xAB, sizeof big);
  tile_options_init_size(&big.o, sizeof big.o + sizeof big.newer_field);
  CHECK(big.newer_field == 0 && big.guard[0] == 0xAB && big.guard[15] == 0xAB && big.o.config == -1);
  CHECK(tile_emit(ctx, "k.tl", store_n, sizeof store_n - 1, &big.o, TILE_STAGE_TOKENS, &text) == TILE_ERROR_ARGUMENT);
  char want[256];
  snprintf(want, sizeof want, "tile_emit: options: struct_size is %zu, larger than the tile_options of this library (%zu "
           "bytes, tile %s): the program was built against a newer tile.h", sizeof big.o + 8, sizeof big.o, tile_version());
  CHECK(!strcmp(tile_error(ctx), want));
  CHECK(tile_options_check(ctx, &big.o) == TILE_ERROR_ARGUMENT);
  /* a size smaller than any layout: only struct_size is written, and it is refused */
  tile_options small;
  memset(&small, 0xAB, sizeof small);
  tile_options_init_size(&small, 16);
  CHECK(small.struct_size == 16 && small.num_defines == (int)0xABABABAB);
  CHECK(tile_options_check(ctx, &small) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "options: struct_size is 16, not the size of a tile_options (");
  /* a tile_arg of another size among good ones */
  tile_options o = with_block();
  float x[8];
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_int(8)};
  args[1].struct_size = sizeof(tile_arg) + 8;
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_run_cpu(ctx, "fill.tl", store_n, sizeof store_n - 1, &o, grid, args, 2, NULL) == TILE_ERROR_ARGUMENT);
  snprintf(want, sizeof want, "argument 1: struct_size is %zu, larger than the tile_arg of this library (%zu bytes, tile "
           "%s): the program was built against a newer tile.h", sizeof(tile_arg) + 8, sizeof(tile_arg), tile_version());
  CHECK(!strcmp(tile_error(ctx), want));
  tile_kernel *k;
  CHECK(tile_kernel_create(ctx, "fill.tl", store_n, sizeof store_n - 1, &o, &k) == TILE_OK);
  args[1].struct_size = 0;
  CHECK(tile_launch(k, grid, NULL, args, 2) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_launch: argument 1: struct_size is 0, not the size of a tile_arg (");
  tile_context_destroy(ctx);
}

/* ---- 4. options out of range at the edge ------------------------------------------------- */

static void test_option_ranges(void) {
  tile_context *ctx = cpu_context();
  const char *text;
  tile_options o = with_block();
  /* once: TILE_OK with no text */
  CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &o, (tile_stage)999, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_emit: stage 999 is not a tile_stage");
  CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &o, (tile_stage)-1, &text) == TILE_ERROR_ARGUMENT);
  struct {
    int field, value;
    const char *message;
  } bad[] = {
      {0, -3, "options: num_stages must be from 0 (the default) to 16, not -3"},
      {0, 1000000, "options: num_stages must be from 0 (the default) to 16, not 1000000"},
      {1, -7, "options: config must be -1 (none) or an index from 0 to 1048575, not -7"},
      {2, 3, "options: num_warps must be 0 (the default) or a power of two from 1 to 32, not 3"},
      {3, 3, "options: refill must be 0 (TILE_REFILL_AUTO), 1 (TILE_REFILL_EARLY) or 2 (TILE_REFILL_LATE), not 3"},
      {4, 2, "options: tma must be TILE_TMA_AUTO (0) or TILE_TMA_OFF (1), not 2"},
      {5, 16, "options: maxnreg must be 0 (no cap, or the config's) or from 24 to 255, not 16"},
      {5, 256, "options: maxnreg must be 0 (no cap, or the config's) or from 24 to 255, not 256"},
      {5, -1, "options: maxnreg must be 0 (no cap, or the config's) or from 24 to 255, not -1"},
      {6, 2, "options: fp_fusion must be TILE_FP_FUSION_ON (0) or TILE_FP_FUSION_OFF (1), not 2"},
      {6, -1, "options: fp_fusion must be TILE_FP_FUSION_ON (0) or TILE_FP_FUSION_OFF (1), not -1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    tile_options b = o;
    int *field[] = {&b.num_stages, &b.config, &b.num_warps, NULL, NULL, &b.maxnreg, NULL};
    if (bad[i].field == 3) b.refill = (tile_refill)bad[i].value; /* enum fields: any int a caller may cast */
    else if (bad[i].field == 4) b.tma = (tile_tma)bad[i].value;
    else if (bad[i].field == 6) b.fp_fusion = (tile_fp_fusion)bad[i].value;
    else *field[bad[i].field] = bad[i].value;
    CHECK(tile_emit(ctx, "f.tl", store_n, sizeof store_n - 1, &b, TILE_STAGE_TIR, &text) == TILE_ERROR_ARGUMENT);
    CHECK_CONTAINS(tile_error(ctx), bad[i].message);
    CHECK(tile_options_check(ctx, &b) == TILE_ERROR_ARGUMENT);
    CHECK_CONTAINS(tile_error(ctx), bad[i].message);
    tile_kernel *k = NULL;
    CHECK(tile_kernel_create(ctx, "f.tl", store_n, sizeof store_n - 1, &b, &k) == TILE_ERROR_ARGUMENT && !k);
    CHECK_CONTAINS(tile_error(ctx), bad[i].message);
  }
  CHECK(tile_options_check(ctx, &o) == TILE_OK);
  CHECK(tile_options_check(ctx, NULL) == TILE_OK); /* NULL options: the defaults */
  tile_context_destroy(ctx);
}

static void test_constexpr_on_cpu(void) {
  tile_context *ctx = cpu_context();
  tile_options o = with_block();
  tile_kernel *k;
  float x[8];
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_int(8)};
  CHECK(tile_kernel_create(ctx, "f.tl", store_n, sizeof store_n - 1, &o, &k) == TILE_OK);
  CHECK(tile_kernel_compile(k, args, 2) == TILE_OK);
  long long v = -99;
  /* once: TILE_OK with -1 */
  CHECK(tile_kernel_constexpr(k, "num_warps", &v) == TILE_OK && v == 4);
  CHECK(tile_kernel_constexpr(k, "num_stages", &v) == TILE_OK && v == 3);
  CHECK(tile_kernel_constexpr(k, "BLOCK", &v) == TILE_OK && v == 8);
  tile_context_destroy(ctx);
}

/* ---- 5. metadata numbers out of range ------------------------------------------------ */

static void test_metadata_numbers(void) {
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  static const char *fields[] = {"1e400", "-1e400", "1e19", "9223372036854775808", "-9223372036854775809", "1.5"};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
    char meta[512];
    snprintf(meta, sizeof meta,
             "{\"format\": 1, \"name\": \"k\", \"signature\": \"\", \"arch\": \"sm_90\", \"target\": \"ptx\", "
             "\"num_args\": 0, \"num_warps\": 4, \"shared\": 0, \"spills\": %s}", fields[i]);
    tile_kernel *k = NULL;
    /* once: 1e400 converted to an integer (undefined behaviour) */
    CHECK(tile_kernel_load(ctx, ".version 8.0\n", 13, meta, &k) == TILE_ERROR_ARGUMENT && !k);
    CHECK_CONTAINS(tile_error(ctx), "metadata: missing or non-integer field spills");
  }
  tile_context_destroy(ctx);
}

/* ---- 6. files that are not regular files ------------------------------------------------- */

static void test_fifo_source(void) {
  char dir[] = "/tmp/tile-hostile-XXXXXX", path[128];
  if (!mkdtemp(dir)) return;
  snprintf(path, sizeof path, "%s/k.tl", dir);
  CHECK(mkfifo(path, 0600) == 0);
  tile_context *ctx = cpu_context();
  tile_kernel *k = NULL;
  const char *text;
  alarm(20); /* once: open() of a FIFO blocked forever */
  CHECK(tile_kernel_create_file(ctx, path, NULL, &k) == TILE_ERROR_IO && !k);
  CHECK_CONTAINS(tile_error(ctx), ": not a regular file");
  CHECK(tile_emit_file(ctx, path, NULL, TILE_STAGE_TOKENS, &text) == TILE_ERROR_IO);
  CHECK(tile_kernel_load_file(ctx, path, NULL, &k) == TILE_ERROR_IO);
  CHECK(tile_emit_file(ctx, dir, NULL, TILE_STAGE_TOKENS, &text) == TILE_ERROR_IO); /* a directory */
  CHECK_CONTAINS(tile_error(ctx), ": Is a directory");
  alarm(0);
  unlink(path);
  rmdir(dir);
  tile_context_destroy(ctx);
}

/* All of them, or the one named: test_hostile_api endless_loop */
/* tile_kernel_create refuses what no launch could compile: an unknown arch, a define the kernel does not
 * take, a define for a run-time parameter, a declaration in error; a launch with another argument count
 * than the kernel's run-time parameters is an argument error naming them. */
static void test_create_checks_options(void) {
  static const char source[] = "import triton\nimport triton.language as tl\n@triton.jit\n"
                               "def k(x_ptr, n, BLOCK: tl.constexpr):\n"
                               "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, 1.0, mask=offs < n)\n";
  static const struct {
    const char *arch, *define;
    tile_status status;
    const char *message;
  } cases[] = {
      {"sm_75", "BLOCK=16", TILE_ERROR_ARGUMENT, "tile_kernel_create: unknown arch 'sm_75' (known: sm_80, sm_86, "},
      {NULL, "BLOK=16", TILE_ERROR_COMPILE, "<-D>:1:1: error: kernel 'k' has no constexpr parameter 'BLOK'"},
      {NULL, "n=16", TILE_ERROR_COMPILE, "'n' is a run-time parameter of 'k'"},
  };
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK && tile_context_use_cpu(ctx) == TILE_OK);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tile_options o;
    tile_options_init(&o);
    o.arch = cases[i].arch;
    o.defines = &cases[i].define;
    o.num_defines = 1;
    tile_kernel *k = NULL;
    CHECK(tile_kernel_create(ctx, "k.tl", source, sizeof source - 1, &o, &k) == cases[i].status && !k);
    CHECK_CONTAINS(tile_error(ctx), cases[i].message);
  }
  tile_options o;
  tile_options_init(&o);
  const char *block = "BLOCK=16";
  o.defines = &block;
  o.num_defines = 1;
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create(ctx, "k.tl", source, sizeof source - 1, &o, &k) == TILE_OK);
  float *x = NULL; /* on the interpreter, tile_malloc's host memory */
  CHECK(tile_malloc(ctx, (void **)&x, 16 * sizeof *x) == TILE_OK);
  for (int i = 0; i < 16; i++) x[i] = -1.0f;
  tile_arg args[2] = {tile_buffer(x, "fp32", 16), tile_int(5)};
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_launch(k, grid, NULL, args, 1) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(ctx), "kernel 'k' takes 2 arguments (x_ptr, n), not 1"));
  CHECK(x[0] == -1.0f); /* nothing ran */
  tile_status s = tile_launch(k, grid, NULL, args, 2);
  if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_error(ctx));
  CHECK(s == TILE_OK && tile_synchronize(ctx) == TILE_OK && x[4] == 1.0f && x[5] == -1.0f);
  tile_context_destroy(ctx);
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*run)(void);
  } tests[] = {
#define TEST(name) {#name, test_##name},
      TEST(null_defines) TEST(foreign_handles) TEST(run_cpu_checks_arguments) TEST(float_that_does_not_fit) TEST(huge_count) TEST(endless_loop) TEST(environment) TEST(struct_sizes)
      TEST(option_ranges) TEST(constexpr_on_cpu) TEST(metadata_numbers) TEST(fifo_source) TEST(create_checks_options)
#undef TEST
  };
  unsetenv("TILE_INTERPRET");
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
    if (argc < 2 || !strcmp(argv[1], tests[i].name)) tests[i].run();
  return check_report();
}
