/* The public API, used as a C program would use it: contexts, statuses,
 * messages, ownership, and bad arguments. */
#include "check.h"
#include "tile/tile.h"

#include <stdlib.h>

static const char kernel[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n";

/* scale with BLOCK = 128 and an aligned pointer. */
static tile_options scale_options(void) {
  static const char *defs[] = {"BLOCK=128"};
  tile_options o;
  tile_options_init(&o);
  o.signature = "*fp32:16,i32";
  o.defines = defs;
  o.num_defines = 1;
  return o;
}

static void test_emit_ok(void) {
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  tile_options o = scale_options();
  const char *text = NULL;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_AST, &text) == TILE_OK);
  CHECK_CONTAINS(text, "FuncDef scale");
  CHECK_CONTAINS(text, "Hint x_ptr divisibility=16");
  CHECK(strcmp(tile_error(ctx), "") == 0);
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_TOKENS, &text) == TILE_OK);
  CHECK_CONTAINS(text, "3:1 def\n");
  tile_context_destroy(ctx);
}

static void test_compile_error_message(void) {
  tile_context *ctx;
  tile_context_create(&ctx);
  tile_options o;
  tile_options_init(&o);
  o.signature = "*fp32,i32";
  const char *text = (const char *)1;
  tile_status s = tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_AST, &text);
  CHECK(s == TILE_ERROR_COMPILE);
  CHECK(text == NULL);
  CHECK_CONTAINS(tile_error(ctx), "scale.tl:3:21: error: constexpr parameter 'BLOCK' has no value");
  CHECK_CONTAINS(tile_error(ctx), "def scale(x_ptr, n, BLOCK: tl.constexpr):\n                    ^~~~~\n");
  CHECK_CONTAINS(tile_status_string(s), "compile");
  tile_context_destroy(ctx);
}

static void test_bad_arguments(void) {
  tile_context *ctx;
  const char *text;
  CHECK(tile_context_create(NULL) == TILE_ERROR_ARGUMENT);
  CHECK(tile_emit(NULL, "a", "", 0, NULL, TILE_STAGE_AST, &text) == TILE_ERROR_ARGUMENT);
  tile_context_create(&ctx);
  CHECK(tile_emit(ctx, "a", NULL, 5, NULL, TILE_STAGE_AST, &text) == TILE_ERROR_ARGUMENT);
  CHECK(tile_emit(ctx, "a", "", 0, NULL, TILE_STAGE_AST, NULL) == TILE_ERROR_ARGUMENT);
  CHECK(tile_emit_file(ctx, "/nonexistent/k.tl", NULL, TILE_STAGE_AST, &text) == TILE_ERROR_IO);
  CHECK_CONTAINS(tile_error(ctx), "cannot read '/nonexistent/k.tl': No such file or directory");
  CHECK(tile_emit_file(ctx, "/", NULL, TILE_STAGE_AST, &text) != TILE_OK);
  /* a refill schedule out of range: refused at the API's edge */
  tile_options o;
  tile_options_init(&o);
  const char *block[] = {"BLOCK=64"};
  o.signature = "*fp32,i32", o.defines = block, o.num_defines = 1, o.refill = TILE_REFILL_LATE + 1;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_TGIR, &text) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "tile_emit: options: refill must be 0 (TILE_REFILL_AUTO), 1 (TILE_REFILL_EARLY) or 2 (TILE_REFILL_LATE), not 3");
  o.refill = TILE_REFILL_LATE;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_TGIR, &text) == TILE_OK);
  tile_context_destroy(ctx);
  tile_context_destroy(NULL);
}

static void test_contexts_are_independent(void) {
  tile_context *a, *b;
  tile_context_create(&a);
  tile_context_create(&b);
  const char *ta, *tb;
  tile_emit(a, "bad.tl", "def k(:\n", 8, NULL, TILE_STAGE_AST, &ta);
  CHECK(tile_emit(b, "ok.tl", kernel, sizeof kernel - 1, NULL, TILE_STAGE_AST, &tb) == TILE_OK);
  CHECK_CONTAINS(tile_error(a), "bad.tl:1:7: error");
  CHECK(strcmp(tile_error(b), "") == 0);
  CHECK_CONTAINS(tb, "FuncDef scale");
  tile_context_destroy(a);
  tile_context_destroy(b);
}

static void test_builtin_reference(void) {
  tile_context *ctx;
  tile_context_create(&ctx);
  const char *text;
  CHECK(tile_emit(ctx, "", "", 0, NULL, TILE_STAGE_BUILTINS, &text) == TILE_OK);
  CHECK_CONTAINS(text, "| `load` | `(pointer, mask=None, other=None,");
  CHECK_CONTAINS(text, "| `dot` |");
  /* the standard library (lang/stdlib.tl) too, from its source: parameters with defaults, the docstring */
  CHECK_CONTAINS(text, "| `cdiv` | `(x, div)` | `tl.`, standard library | Ceiling division: the number of blocks of "
                       "size `div` that cover `x`. |\n");
  CHECK_CONTAINS(text, "| `softmax` | `(x, dim=None, keep_dims=False, ieee_rounding=False)` | `tl.`, standard library |");
  CHECK_CONTAINS(text, "the grid in column-major groups of size_g rows, so that programs"); /* lines joined */
  CHECK_CONTAINS(tile_build_info(), "LLVM 19");
  tile_context_destroy(ctx);
}

static void test_many_compilations(void) {
  tile_context *ctx;
  tile_context_create(&ctx);
  const char *text;
  int ok = 1;
  for (int i = 0; i < 200; i++) {
    tile_options o;
    tile_options_init(&o);
    char def[32];
    snprintf(def, sizeof def, "BLOCK=%d", 1 << (i % 10));
    const char *defs[] = {def};
    o.signature = "*fp32,i32";
    o.defines = defs;
    o.num_defines = 1;
    ok &= tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_AST, &text) == TILE_OK;
  }
  CHECK(ok);
  tile_context_destroy(ctx);
}

/* time_stages: a note with each stage that ran, through tile_emit and a JIT kernel's compile. */
static void test_stage_times(void) {
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  tile_options o = scale_options();
  o.time_stages = 1;
  const char *text = NULL;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_LLIR, &text) == TILE_OK);
  CHECK_CONTAINS(tile_diagnostics(ctx), "note: time: frontend ");
  CHECK_CONTAINS(tile_diagnostics(ctx), " ms, GPU-layout IR ");
  CHECK(!strstr(tile_diagnostics(ctx), "NVPTX")); /* LLVM IR only: no PTX made */
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, &k) == TILE_OK);
  CHECK(tile_kernel_compile(k, NULL, 0) == TILE_OK);
  CHECK_CONTAINS(tile_diagnostics(ctx), "note: time: frontend ");
  CHECK(!strstr(tile_diagnostics(ctx), "GPU-layout IR")); /* the interpreter runs tile IR */
  o.time_stages = 0;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_TIR, &text) == TILE_OK);
  CHECK(!strstr(tile_diagnostics(ctx), "time:"));
  tile_context_destroy(ctx);
}

/* A tensor descriptor argument: tile_tensordesc's arguments run on the
 * interpreter (a 5 x 7 matrix in rows of 8, 4 x 8 blocks: the edges are
 * masked), and what Triton's TensorDescriptor refuses is refused. */
static void test_tensor_descriptor(void) {
  static const char src[] =
      "import triton.language as tl\n"
      "@triton.jit\n"
      "def twice(x_desc, y_desc):\n"
      "    off = [tl.program_id(0) * 4, 0]\n"
      "    y_desc.store(off, x_desc.load(off) * 2)\n";
  static float x[40] __attribute__((aligned(16))), y[40] __attribute__((aligned(16)));
  for (int i = 0; i < 40; i++) x[i] = (float)i, y[i] = -1;
  long long shape[2] = {5, 7}, strides[2] = {8, 1};
  tile_arg args[10];
  CHECK(tile_tensordesc(args, x, "fp32", 40, 2, shape, strides) == 5);
  CHECK(tile_tensordesc(args + 5, y, "fp32", 40, 2, shape, strides) == 5);
  tile_context *ctx;
  tile_context_create(&ctx);
  tile_options o;
  tile_options_init(&o);
  o.signature = "tensordesc<fp32[4, 8]>,tensordesc<fp32[4, 8]>";
  unsigned grid[3] = {2, 1, 1};
  CHECK(tile_run_cpu(ctx, "twice.tl", src, sizeof src - 1, &o, grid, args, 10, NULL) == TILE_OK);
  int good = 1;
  for (int i = 0; i < 40; i++) good &= y[i] == (i < 40 && i % 8 < 7 ? 2.0f * (float)i : -1.0f);
  CHECK(good);
  args[9] = tile_int(2); /* the last stride */
  CHECK(tile_run_cpu(ctx, "twice.tl", src, sizeof src - 1, &o, grid, args, 10, NULL) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "argument 9 ('y_desc.stride.1'): the kernel was specialised for the integer 1");
  tile_context_destroy(ctx);
  long long bad_stride[2] = {6, 1}, bad_last[2] = {8, 2};
  CHECK(tile_tensordesc(args, x, "fp32", 40, 2, shape, bad_stride) == -1); /* 24 bytes */
  CHECK(tile_tensordesc(args, x, "fp32", 40, 2, shape, bad_last) == -1);
  CHECK(tile_tensordesc(args, x + 1, "fp32", 40, 2, shape, strides) == -1); /* not 16-byte aligned */
  CHECK(tile_tensordesc(args, x, "fp32", 40, 6, shape, strides) == -1);
}

/* A register cap: the option's, else the chosen config's, is the PTX's .maxnreg and the metadata's
 * "maxnreg"; without one neither has it. */
static void test_register_cap(void) {
  static const char tuned[] =
      "import triton\n"
      "import triton.language as tl\n"
      "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, maxnreg=32), triton.Config({'BLOCK': 64})], key=[])\n"
      "@triton.jit\n"
      "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
      "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
      "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)\n";
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  tile_options o = scale_options();
  const char *text = NULL, *metadata = NULL;
  const void *image;
  size_t size;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_PTX, &text) == TILE_OK);
  CHECK(text && !strstr(text, ".maxnreg"));
  o.maxnreg = 64;
  CHECK(tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_PTX, &text) == TILE_OK);
  CHECK_CONTAINS(text, ".maxnreg 64\n");
  CHECK(tile_compile(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, 1, &image, &size, &metadata) == TILE_OK);
  CHECK_CONTAINS(metadata, "\"maxnreg\": 64,");
  tile_options t;
  tile_options_init(&t);
  t.signature = "*fp32:16,i32";
  for (int config = 0; config < 2; config++) {
    t.config = config, t.maxnreg = 0;
    CHECK(tile_emit(ctx, "tuned.tl", tuned, sizeof tuned - 1, &t, TILE_STAGE_PTX, &text) == TILE_OK);
    CHECK(text && (strstr(text, ".maxnreg 32\n") != NULL) == (config == 0));
    t.maxnreg = 200; /* the option overrides the config's */
    CHECK(tile_emit(ctx, "tuned.tl", tuned, sizeof tuned - 1, &t, TILE_STAGE_PTX, &text) == TILE_OK);
    CHECK_CONTAINS(text, ".maxnreg 200\n");
  }
  tile_context_destroy(ctx);
}

int main(void) {
  test_register_cap();
  test_tensor_descriptor();
  test_emit_ok();
  test_stage_times();
  test_compile_error_message();
  test_bad_arguments();
  test_contexts_are_independent();
  test_builtin_reference();
  test_many_compilations();
  return check_report();
}
