/* The library never aborts, exits or crashes when memory runs out: every
 * allocation of a program using the public API on the CPU interpreter
 * (compile errors and their messages, tile_emit, tile_run_cpu with
 * device_print, a JIT kernel with tile_malloc, copies, streams and events,
 * an AOT kernel loaded; compiling to PTX is left out: LLVM itself aborts
 * on a failed allocation) is made to fail in turn, once (the Nth call only) and for
 * good (the Nth and every later call).  Each try runs in a child process,
 * which must end normally with every result either right or an error
 * whose message is a string; with nothing failing the results are checked
 * exactly.  malloc, calloc and realloc are replaced (glibc allows it) by
 * wrappers that can fail; under the sanitizers, which have their own
 * allocator, the test is skipped (exit 77). */
#include "check.h"
#include "tile/tile.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

#if !defined(UNDER_SANITIZER) && defined(__GLIBC__)

/* ---- allocation that fails on demand ------------------------------------------------------- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long calls;          /* allocations since counting started */
static long fail_at = -1;   /* the call that fails first; -1: none */
static int fail_after;      /* every call after fail_at fails too */

static int should_fail(void) {
  calls++;
  return fail_at >= 0 && (calls == fail_at || (fail_after && calls > fail_at));
}

/* exported (the build hides symbols by default), so libtile's calls come here */
#define EXPORTED __attribute__((visibility("default")))
EXPORTED void *malloc(size_t n) { return should_fail() ? NULL : __libc_malloc(n); }
EXPORTED void *calloc(size_t n, size_t size) { return should_fail() ? NULL : __libc_calloc(n, size); }
EXPORTED void *realloc(void *p, size_t n) { return should_fail() ? NULL : __libc_realloc(p, n); }
EXPORTED void free(void *p) { __libc_free(p); }

/* ---- the program -------------------------------------------------------------------------- */

static const char kernel[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
    "    tl.store(y_ptr + offs, x * 3 + 1, mask=offs < n)\n"
    "    if tl.program_id(0) == 1:\n"
    "        tl.device_print(\"n\", n)\n";

enum { N = 100, BLOCK = 64 };

static int failures; /* wrong results, or a failed call without a message */

static void fail(const char *what) {
  ssize_t ignored = write(2, what, strlen(what));
  ignored += write(2, "\n", 1);
  (void)ignored;
  failures++;
}

/* A failed call must leave a message (a fallback one when out of memory). */
static int ok(tile_context *ctx, tile_status s) {
  if (s != TILE_OK && !tile_error(ctx)[0]) fail("a failed call left no message");
  return s == TILE_OK;
}

static void expect_results(const float *y, const char *what) {
  for (int i = 0; i < N; i++)
    if (y[i] != (float)i * 3 + 1) return fail(what);
}

static void compile_error(tile_context *ctx) {
  const char *text = "unchanged";
  tile_status s = tile_emit(ctx, "bad.tl", "def k(:\n", 8, NULL, TILE_STAGE_AST, &text);
  if (s == TILE_OK || text) return fail("a syntax error compiled");
  const char *e = tile_error(ctx);
  if (s == TILE_ERROR_COMPILE && !strstr(e, "bad.tl:1:7: error")) fail("the syntax error's message is wrong");
  if (fail_at < 0 && s != TILE_ERROR_COMPILE) fail("the syntax error is not a compile error");
}

static void emit_and_run(tile_context *ctx) {
  tile_options o;
  tile_options_init(&o);
  const char *defs[] = {"BLOCK=64"};
  o.defines = defs;
  o.num_defines = 1;
  o.signature = "*fp32,*fp32,i32";
  const char *text = NULL;
  if (ok(ctx, tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_TIR, &text)) &&
      !strstr(text, "store"))
    fail("tile_emit's tile IR has no store");
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = -1;
  tile_arg args[] = {tile_buffer(x, "fp32", N), tile_buffer(y, "fp32", N), tile_int(N)};
  unsigned grid[3] = {(N + BLOCK - 1) / BLOCK, 1, 1};
  const char *printed = NULL;
  tile_options_init(&o);
  o.defines = defs;
  o.num_defines = 1;
  if (ok(ctx, tile_run_cpu(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, grid, args, 3, &printed))) {
    expect_results(y, "tile_run_cpu computed wrong values");
    if (!printed || !strstr(printed, "n")) fail("tile_run_cpu lost device_print's text");
  }
}

static void jit_launch(tile_context *ctx) {
  tile_options o;
  tile_options_init(&o);
  const char *defs[] = {"BLOCK=64"};
  o.defines = defs;
  o.num_defines = 1;
  tile_kernel *k = NULL;
  void *x = NULL, *y = NULL;
  tile_stream s = NULL;
  tile_event e = NULL;
  float host[N];
  for (int i = 0; i < N; i++) host[i] = (float)i;
  int ready = ok(ctx, tile_kernel_create(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, &k)) &&
              ok(ctx, tile_malloc(ctx, &x, sizeof host)) && ok(ctx, tile_malloc(ctx, &y, sizeof host)) &&
              ok(ctx, tile_memcpy_to_device(ctx, x, host, sizeof host)) && ok(ctx, tile_stream_create(ctx, &s)) &&
              ok(ctx, tile_event_create(ctx, &e));
  tile_arg args[] = {tile_buffer(x, "fp32", N), tile_buffer(y, "fp32", N), tile_int(N)};
  unsigned grid[3] = {(N + BLOCK - 1) / BLOCK, 1, 1};
  if (ready && ok(ctx, tile_launch(k, grid, s, args, 3)) && ok(ctx, tile_event_record(ctx, e, s)) &&
      ok(ctx, tile_memcpy_to_host(ctx, host, y, sizeof host)))
    expect_results(host, "the JIT launch computed wrong values");
  if (fail_at < 0 && !ready) fail("the JIT kernel could not be made with memory to spare");
  tile_free(ctx, x); /* y, the stream, the event and the kernel are left to the context */
}

static void aot_load(tile_context *ctx) {
  static const char metadata[] =
      "{\"format\": 1, \"name\": \"scale\", \"signature\": \"*fp32:16,i32\", \"num_args\": 2,\n"
      " \"params\": [{\"name\": \"x\", \"type\": \"*fp32\", \"divisibility\": 16, \"position\": 0},\n"
      "            {\"name\": \"n\", \"type\": \"i32\", \"position\": 1}],\n"
      " \"constexprs\": {\"BLOCK\": 64}, \"num_warps\": 2, \"num_stages\": 3, \"shared\": 0,\n"
      " \"arch\": \"sm_80\", \"target\": \"ptx\"}\n";
  static const char ptx[] = ".version 8.0\n.target sm_80\n.address_size 64\n";
  tile_kernel *k = NULL;
  long long block = 0;
  if (ok(ctx, tile_kernel_load(ctx, ptx, sizeof ptx - 1, metadata, &k)) &&
      (tile_kernel_constexpr(k, "BLOCK", &block) != TILE_OK || block != 64))
    fail("the AOT kernel's constexpr is wrong");
  if (fail_at < 0 && !k) fail("the AOT kernel could not be loaded with memory to spare");
  tile_kernel_destroy(k);
}

/* The whole program; the number of failures it saw. */
static int program(void) {
  tile_context *ctx = NULL;
  if (tile_context_create(&ctx) != TILE_OK) return ctx ? (fail("a failed context was returned"), failures) : 0;
  if (ok(ctx, tile_context_use_cpu(ctx))) {
    compile_error(ctx);
    emit_and_run(ctx);
    jit_launch(ctx);
    aot_load(ctx);
  }
  tile_context_destroy(ctx);
  return failures;
}

/* Runs the program in a child with allocation `at` failing (and all after it, with `after`). */
static int survives(long at, int after) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(30);
    calls = 0, fail_at = at, fail_after = after;
    _exit(program() ? 1 : 0);
  }
  int status = 1;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
  fprintf(stderr, "allocation %ld failing%s: %s %d\n", at, after ? " (and every later one)" : "",
          WIFSIGNALED(status) ? "killed by signal" : "exit status",
          WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  return 0;
}

int main(void) {
  unsetenv("TILE_INTERPRET");
  setenv("TILE_CACHE_DIR", "/nonexistent/tile-oom-test", 1);
  calls = 0;
  CHECK(program() == 0); /* nothing fails: exact results */
  long total = calls;
  printf("%ld allocations\n", total);
  CHECK(total > 20);
  int survived = 0, tries = 0;
  for (long at = 1; at <= total + 1; at++)
    for (int after = 0; after < 2; after++, tries++) survived += survives(at, after);
  printf("%d of %d tries survived\n", survived, tries);
  CHECK(survived == tries);
  return check_report();
}

#else

int main(void) {
  (void)check_report;
  printf("skipped: the sanitizers' allocator cannot be replaced\n");
  return 77;
}

#endif
