/* libFuzzer harness over the public API (include/tile/tile.h only) on the CPU
 * interpreter: each input is a short program of calls -- tile_emit,
 * tile_run_cpu, kernels created, compiled and launched, device memory,
 * streams and events, tile_options_check -- whose options, arguments,
 * grids and handles come from the input's bytes: out-of-range fields, NULL
 * defines, dtypes that do not exist, integers that do not fit, counts past
 * what can be addressed, streams and events never made or destroyed.  The
 * harness keeps the caller's side of the contract (tile.h): memory a
 * buffer's count names exists, unless the count is past the interpreter's
 * 2^43 bytes, which the library must refuse.  Any crash, leak, hang or
 * sanitizer report is a bug, and so is a failed call with no message. */
#include "tile/tile.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct Bytes {
  const uint8_t *p;
  size_t n;
} Bytes;

static unsigned take(Bytes *b) {
  if (!b->n) return 0;
  b->n--;
  return *b->p++;
}

#define PICK(b, table) ((table)[take(b) % (sizeof(table) / sizeof((table)[0]))])

static const char *const sources[] = {
    "import triton.language as tl\n@triton.jit\ndef fill(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.arange(0, BLOCK)\n    tl.store(x_ptr + offs, offs.to(tl.float32), mask=offs < n)\n",
    "import triton.language as tl\n@triton.jit\ndef copy(x_ptr, y_ptr, n):\n"
    "    offs = tl.program_id(0) * 8 + tl.arange(0, 8)\n    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n",
    "import triton.language as tl\n@triton.jit\ndef spin(x_ptr, n):\n    i = 0\n    while i < n:\n"
    "        i = i + 1 - (n > 1000)\n    tl.store(x_ptr, i)\n",
    "import triton\nimport triton.language as tl\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 4}), triton.Config({'BLOCK': 8}, num_warps=2)], key=['n'])\n"
    "@triton.jit\ndef tuned(x_ptr, n, BLOCK: tl.constexpr):\n    offs = tl.arange(0, BLOCK)\n"
    "    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)\n",
    "import triton.language as tl\n@triton.jit\ndef sum_loop(x_ptr, n, s):\n    acc = 0\n"
    "    for i in range(0, n, s):\n        acc += tl.load(x_ptr + i % 4)\n    tl.store(x_ptr, acc)\n",
};

static const int ints[] = {-1, 0, 1, 2, 3, 4, 8, 16, 17, 32, 64, -7, INT_MIN, INT_MAX, 1 << 20, 1000000};
static const long long values[] = {0, 1, 2, 3, 16, -1, 127, 128, 255, 256, 1000, 1LL << 31, 1LL << 32, INT64_MIN, INT64_MAX};
static const char *const defines[] = {"BLOCK=8", "BLOCK=4", "BLOCK=0", "BLOCK=-1", "BLOCK=1000000000", "X", "=", "BLOCK=abc", NULL};
static const char *const signatures[] = {NULL, NULL, "*fp32,i32", "*fp32:16,i32:1", "*fp32,i8", "*fp32,u8", "*i32,i64",
                                         "*fp32,*fp32,i32", "*fp32,i32,i32", "garbage", "*fp32"};
static const char *const dtypes[] = {NULL, "fp32", "fp32", "i32", "i8", "u8", "fp16", "i64", "fp31", "*fp32"};
static const char *const kernels[] = {NULL, NULL, "fill", "nope"};
static const char *const passes[] = {NULL, NULL, "none", "fold,bogus"};

/* Host memory for tile_run_cpu's buffers (its count honest), and for the bytes of copies. */
static float host[1024] __attribute__((aligned(16)));

typedef struct Session {
  tile_context *ctx;
  tile_kernel *kernels[4];
  void *blocks[4];
  size_t block_bytes[4];
  tile_stream streams[4];   /* some made, some destroyed, some never made */
  tile_event events[4];
  long long foreign[8];     /* readable memory that no handle is */
} Session;

static tile_options options(Bytes *b, const char **defs) {
  tile_options o;
  tile_options_init(&o);
  for (int i = 0; i < 4; i++) defs[i] = PICK(b, defines);
  unsigned mode = take(b);
  o.defines = mode % 5 == 4 ? NULL : defs;
  o.num_defines = mode % 5 == 4 ? 2 : (int)(mode % 5 == 3 ? (int)take(b) % 3 - 1 : (int)(mode % 3));
  if (o.num_defines > 4) o.num_defines = 4;
  o.signature = PICK(b, signatures);
  o.kernel = PICK(b, kernels);
  o.passes = PICK(b, passes);
  unsigned fields = take(b);
  if (fields & 1) o.num_warps = PICK(b, ints);
  if (fields & 2) o.num_stages = PICK(b, ints);
  if (fields & 4) o.config = PICK(b, ints);
  if (fields & 8) o.refill = PICK(b, ints);
  if (fields & 16) o.tma = PICK(b, ints);
  return o;
}

/* An argument: buffers in host memory (honest counts, or ones past 2^43 bytes) or device blocks. */
static tile_arg argument(Bytes *b, Session *s, int device) {
  unsigned kind = take(b) % 8;
  const char *dtype = PICK(b, dtypes);
  if (kind < 3) {
    size_t counts[] = {0, 1, 4, 8, 64, SIZE_MAX, SIZE_MAX / 4 + 2, (size_t)1 << 61};
    size_t count = counts[take(b) % 8];
    if (!device && count > 64 && count < ((size_t)1 << 40)) count = 64;
    void *data = device ? s->blocks[take(b) % 4] : take(b) % 9 ? (void *)host : NULL;
    tile_arg a = tile_buffer(data, dtype, count);
    return a;
  }
  tile_arg a = kind < 6 ? tile_int(PICK(b, values)) : tile_float((double)PICK(b, values) / 3);
  if (kind == 7) a.kind = (tile_arg_kind)(take(b) % 5);
  a.dtype = take(b) % 3 ? a.dtype : dtype;
  return a;
}

static int arguments(Bytes *b, Session *s, tile_arg *args, int device) {
  int n = (int)(take(b) % 5);
  for (int i = 0; i < n; i++) args[i] = argument(b, s, device);
  return n;
}

static void grid_of(Bytes *b, unsigned grid[3]) {
  static const unsigned sizes[] = {0, 1, 1, 2, 3, 65536, 0x80000000u};
  for (int i = 0; i < 3; i++) grid[i] = i ? PICK(b, sizes) % 3 : PICK(b, sizes);
  if (grid[0] > 3 && take(b) % 4) grid[0] = 3;
}

static void check(tile_context *ctx, tile_status st) {
  if ((int)st < TILE_OK || st > TILE_ERROR_RUNTIME) __builtin_trap();
  if (st != TILE_OK && !*tile_error(ctx)) __builtin_trap(); /* a failure says why */
}

static void call_kernel(Bytes *b, Session *s) {
  const char *defs[4];
  tile_arg args[8];
  unsigned grid[3];
  int slot = (int)(take(b) % 4);
  tile_kernel **k = &s->kernels[slot];
  if (!*k || take(b) % 4 == 0) {
    tile_kernel_destroy(*k);
    *k = NULL;
    tile_options o = options(b, defs);
    const char *src = PICK(b, sources);
    check(s->ctx, tile_kernel_create(s->ctx, "k.tl", src, strlen(src), &o, k));
    return;
  }
  int n = arguments(b, s, args, 1);
  grid_of(b, grid);
  tile_stream stream = take(b) % 2 ? s->streams[take(b) % 4] : NULL;
  if (take(b) % 3 == 0) check(s->ctx, tile_kernel_compile(*k, args, n));
  else check(s->ctx, tile_launch(*k, grid, stream, args, n));
  long long v;
  tile_kernel_constexpr(*k, PICK(b, defines) ? "BLOCK" : "num_warps", &v);
}

static void call_memory(Bytes *b, Session *s) {
  int i = (int)(take(b) % 4);
  size_t sizes[] = {0, 1, 16, 64, 4096, SIZE_MAX};
  size_t offset = take(b) % 80, bytes = PICK(b, sizes);
  switch (take(b) % 4) {
  case 0:
    tile_free(s->ctx, s->blocks[i]);
    s->blocks[i] = NULL;
    if (tile_malloc(s->ctx, &s->blocks[i], bytes % 4096) == TILE_OK) s->block_bytes[i] = bytes % 4096;
    break;
  case 1:
    if (s->blocks[i]) check(s->ctx, tile_memcpy_to_device(s->ctx, (char *)s->blocks[i] + offset, host, bytes % sizeof host));
    break;
  case 2:
    if (s->blocks[i]) check(s->ctx, tile_memcpy_to_host(s->ctx, host, (char *)s->blocks[i] + offset, bytes % sizeof host));
    break;
  default:
    /* host memory, or a block (kept: copies into it, launches on it, a second free must all be refused) */
    check(s->ctx, tile_free(s->ctx, take(b) % 2 ? (void *)host : s->blocks[i]));
  }
}

static void call_handles(Bytes *b, Session *s) {
  int i = (int)(take(b) % 4), j = (int)(take(b) % 4);
  float ms;
  switch (take(b) % 6) {
  case 0: check(s->ctx, tile_stream_create(s->ctx, &s->streams[i])); break;
  case 1: tile_stream_destroy(s->ctx, s->streams[i]); break; /* the handle kept: used again, it must be refused */
  case 2: check(s->ctx, tile_event_create(s->ctx, &s->events[i])); break;
  case 3: tile_event_destroy(s->ctx, take(b) % 2 ? s->events[i] : (tile_event)(void *)s->streams[i]); break;
  case 4: check(s->ctx, tile_event_record(s->ctx, s->events[i], take(b) % 2 ? s->streams[j] : (tile_stream)(void *)s->foreign)); break;
  default: check(s->ctx, tile_event_elapsed(s->ctx, s->events[i], take(b) % 2 ? s->events[j] : (tile_event)(void *)s->foreign, &ms));
  }
}

static void call_compiler(Bytes *b, Session *s) {
  const char *defs[4], *text, *printed;
  tile_arg args[8];
  unsigned grid[3];
  tile_options o = options(b, defs);
  const char *src = PICK(b, sources);
  switch (take(b) % 3) {
  case 0: check(s->ctx, tile_emit(s->ctx, "k.tl", src, strlen(src), &o, (tile_stage)((int)(take(b) % 12) - 1), &text)); break;
  case 1: check(s->ctx, tile_options_check(s->ctx, &o)); break;
  default: {
    int n = arguments(b, s, args, 0);
    grid_of(b, grid);
    check(s->ctx, tile_run_cpu(s->ctx, "k.tl", src, strlen(src), &o, grid, args, n, &printed));
  }
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  setenv("TILE_INTERPRET_TIMEOUT", "0.2", 1); /* an endless loop ends quickly, and says so */
  setenv("TILE_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Bytes b = {data, size};
  Session s = {0};
  if (tile_context_create(&s.ctx) != TILE_OK) return 0;
  if (take(&b) % 8) tile_context_use_cpu(s.ctx); /* else: no GPU, every GPU call must say so */
  for (int step = 0; step < 12 && b.n; step++) {
    switch (take(&b) % 4) {
    case 0: call_compiler(&b, &s); break;
    case 1: call_kernel(&b, &s); break;
    case 2: call_memory(&b, &s); break;
    default: call_handles(&b, &s);
    }
  }
  tile_context_destroy(s.ctx); /* frees kernels, blocks, streams and events left */
  return 0;
}
