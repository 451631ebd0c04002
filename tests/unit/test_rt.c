/* libtile_rt, the runtime without the compiler: the compiling calls say to
 * link libtile; contexts, host memory on the interpreter, AOT loading and
 * argument checks work as in libtile; a launch without a GPU says why.
 * (check_rt.sh checks the library itself: no LLVM, only tile_* exported.) */
#include "check.h"
#include "tile/tile.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define NO_COMPILER "libtile_rt has no compiler: link libtile"

static const char metadata[] =
    "{\"format\": 1, \"name\": \"scale\", \"signature\": \"*fp32:16,fp32,i32:1\", \"num_args\": 3,\n"
    " \"params\": [{\"name\": \"x\", \"type\": \"*fp32\", \"divisibility\": 16, \"position\": 0},\n"
    "            {\"name\": \"alpha\", \"type\": \"fp32\", \"position\": 1}],\n"
    " \"specialized\": [{\"name\": \"stride\", \"type\": \"i32\", \"position\": 2}],\n"
    " \"constexprs\": {\"BLOCK\": 64}, \"num_warps\": 2, \"num_stages\": 3, \"shared\": 0,\n"
    " \"arch\": \"sm_80\", \"target\": \"ptx\"}\n";
static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n";

static void test_no_compiler(tile_context *ctx) {
  const char *text = "x";
  tile_kernel *k = (tile_kernel *)&text;
  const void *image = &text;
  size_t size = 1;
  unsigned grid[3] = {1, 1, 1};
  CHECK_CONTAINS(tile_build_info(), "libtile_rt");
  CHECK(tile_emit(ctx, "k.tl", "", 0, NULL, TILE_STAGE_TIR, &text) == TILE_ERROR_UNSUPPORTED && !text);
  CHECK(!strcmp(tile_error(ctx), NO_COMPILER));
  CHECK(tile_emit_file(ctx, "k.tl", NULL, TILE_STAGE_TIR, &text) == TILE_ERROR_UNSUPPORTED);
  CHECK(tile_kernel_create(ctx, "k.tl", "", 0, NULL, &k) == TILE_ERROR_UNSUPPORTED && !k);
  CHECK(!strcmp(tile_error(ctx), NO_COMPILER));
  CHECK(tile_kernel_create_file(ctx, "k.tl", NULL, &k) == TILE_ERROR_UNSUPPORTED && !k);
  CHECK(tile_compile(ctx, "k.tl", "", 0, NULL, 0, &image, &size, &text) == TILE_ERROR_UNSUPPORTED && !image && !size);
  CHECK(tile_run_cpu(ctx, "k.tl", "", 0, NULL, grid, NULL, 0, NULL) == TILE_ERROR_UNSUPPORTED);
  CHECK(!strcmp(tile_error(ctx), NO_COMPILER));
  const void *bundle = NULL;
  const char *const sig[] = {"i32"}, *const arch[] = {"sm_80"};
  CHECK(tile_pack(ctx, "k.tl", "", 0, NULL, sig, 1, arch, 1, &bundle, &size) == TILE_ERROR_UNSUPPORTED && !bundle);
  CHECK(!strcmp(tile_error(ctx), NO_COMPILER));
  /* bundles load here (a corrupt one is refused, naming it) */
  tile_kernel *bundled = NULL;
  CHECK(tile_kernel_load_bundle(ctx, "k.tlk", "TILEBNDL", 8, &bundled) == TILE_ERROR_ARGUMENT && !bundled);
  CHECK(strstr(tile_error(ctx), "bundle 'k.tlk'") != NULL);
}

static void test_aot(tile_context *ctx) {
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load(ctx, ptx, sizeof ptx - 1, metadata, &k) == TILE_OK && k);
  long long block = 0;
  CHECK(tile_kernel_constexpr(k, "BLOCK", &block) == TILE_OK && block == 64);
  CHECK(tile_kernel_text(k, TILE_STAGE_PTX) && !strcmp(tile_kernel_text(k, TILE_STAGE_PTX), ptx));
  float x[8] __attribute__((aligned(16)));
  tile_arg args[] = {tile_buffer(x, "fp32", 8), tile_float(2), tile_int(3)};
  unsigned grid[3] = {1, 1, 1};
  CHECK(tile_launch(k, grid, NULL, args, 3) == TILE_ERROR_ARGUMENT);
  CHECK(!strcmp(tile_error(ctx), "argument 2 ('stride'): the kernel was specialised for the integer 1 (':1'), not 3"));
  args[2] = tile_int(1);
  CHECK(tile_launch(k, grid, NULL, args, 3) == TILE_ERROR_UNSUPPORTED);
  CHECK_CONTAINS(tile_error(ctx), "no CUDA driver: cannot load /nonexistent/libcuda.so.1");
  tile_kernel_destroy(k);
}

/* Bytes the heap has handed out and not had back; 0 where unknown (ASan's allocator: LSan checks there). */
static long long heap_in_use(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
  return (long long)mallinfo2().uordblks;
#else
  return 0;
#endif
}

/* Streams and events the program leaves on the interpreter are freed with the context (tile.h: destroying
 * the context releases whatever is left).  Under LeakSanitizer (bash .ci/test) a leak fails the run; with
 * glibc's allocator the heap must come back to where it was. */
static void test_context_frees_streams_and_events(void) {
  enum { MANY = 1000 };
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  tile_context_destroy(ctx);
  long long before = heap_in_use();
  CHECK(tile_context_create(&ctx) == TILE_OK && tile_context_use_cpu(ctx) == TILE_OK);
  int ok = 1;
  tile_event first = NULL, last = NULL;
  for (int i = 0; i < MANY; i++) {
    tile_stream s = NULL;
    tile_event e = NULL;
    ok &= tile_stream_create(ctx, &s) == TILE_OK && tile_event_create(ctx, &e) == TILE_OK && s && e;
    ok &= tile_event_record(ctx, e, s) == TILE_OK;
    if (i % 3 == 0) tile_stream_destroy(ctx, s); /* some destroyed by the program, in any order */
    if (i == 0) first = e;
    else if (i % 7 == 0) tile_event_destroy(ctx, e);
    else last = e;
  }
  float ms = -1;
  CHECK(ok && tile_event_elapsed(ctx, first, last, &ms) == TILE_OK && ms >= 0);
  CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  tile_context_destroy(ctx);
  long long after = heap_in_use();
  if (after - before > 4096) fprintf(stderr, "%lld bytes more in use after the context was destroyed\n", after - before);
  CHECK(after - before <= 4096);
}

int main(void) {
  setenv("TILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  unsetenv("TILE_INTERPRET");
  tile_context *ctx;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  test_no_compiler(ctx);
  test_aot(ctx);
  void *p = NULL;
  CHECK(tile_context_use_cpu(ctx) == TILE_OK && tile_malloc(ctx, &p, 100) == TILE_OK && tile_free(ctx, p) == TILE_OK);
  tile_context_destroy(ctx);
  test_context_frees_streams_and_events();
  return check_report();
}
