/* Offsets past 2^31 elements (and 2^32 bytes): a vector add over
 * 2^31 + 4099 fp16 elements (about 4.3 GB a buffer) with add_int64.tl, the
 * tutorial kernel with 64-bit offsets.  The inputs are small integers derived
 * from each element's index (so their fp16 sums are exact and an element
 * read from the wrong place shows), the output is poisoned, and the result
 * is checked at sampled windows: the start, around 2^31, the end, the
 * poisoned guard past the end, and random places.
 *   large_offsets [--elements N] [--require-gpu] [--cpu] [--seed S] [add_int64.tl]
 * Without a GPU it skips (77), unless --elements is small enough for the
 * interpreter (at most 2^24). */
#include "../../examples/common/example.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 64, WINDOW = 8192, RANDOM_WINDOWS = 64 };
static const size_t CHUNK = (size_t)32 << 20; /* elements filled on the host at a time */

typedef struct Add {
  tile_kernel *kernel;
  long long n;
  tile_arg args[4];
} Add;

/* x[i] and y[i]: integers in [-1024, 1023] from a multiplicative hash of i. */
static int x_value(unsigned long long i) { return (int)((i * 0x9E3779B97F4A7C15ull) >> 53) - 1024; }
static int y_value(unsigned long long i) { return (int)((i * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull) >> 53) - 1024; }

/* The fp16 bits of an integer with |v| <= 2048 (exact). */
static uint16_t half_from_int(int v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned a = (unsigned)(v < 0 ? -v : v);
  int e = 31 - __builtin_clz(a);
  unsigned mantissa = e <= 10 ? (a << (10 - e)) & 0x3ff : (a >> (e - 10)) & 0x3ff;
  return (uint16_t)(sign | (unsigned)(e + 15) << 10 | mantissa);
}

static void add_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  const Add *add = user;
  grid[0] = (unsigned)example_cdiv(add->n, example_constexpr(k, "BLOCK_SIZE"));
  grid[1] = grid[2] = 1;
}

static void add_launch(Example *ex, void *user) {
  Add *add = user;
  EXAMPLE_TRY(ex, tile_launch_grid(add->kernel, add_grid, add, NULL, add->args, 4));
}

/* Writes the inputs chunk by chunk, so the host needs only one chunk. */
static void fill_inputs(Example *ex, void *dx, void *dy, long long n) {
  uint16_t *host = malloc(CHUNK * sizeof(uint16_t)), half[2048]; /* half[v + 1024]: v's fp16 bits */
  for (int v = -1024; v < 1024; v++) half[v + 1024] = half_from_int(v);
  for (long long start = 0; start < n; start += (long long)CHUNK) {
    size_t len = (size_t)(n - start) < CHUNK ? (size_t)(n - start) : CHUNK;
    for (size_t j = 0; j < len; j++) host[j] = half[x_value((unsigned long long)start + j) + 1024];
    example_upload(ex, (uint16_t *)dx + start, host, len * 2);
    for (size_t j = 0; j < len; j++) host[j] = half[y_value((unsigned long long)start + j) + 1024];
    example_upload(ex, (uint16_t *)dy + start, host, len * 2);
  }
  free(host);
}

/* Mismatches in out[start, start + len): sums below n, poison from n on. */
static long check_window(Example *ex, const void *dout, long long n, long long start, long long len) {
  if (start < 0) start = 0;
  if (start + len > n + GUARD) len = n + GUARD - start;
  if (len <= 0) return 0;
  uint16_t *got = malloc((size_t)len * 2);
  example_download(ex, got, (const uint16_t *)dout + start, (size_t)len * 2);
  long bad = 0;
  for (long long j = 0; j < len; j++) {
    unsigned long long i = (unsigned long long)(start + j);
    int ok = (long long)i < n ? example_half_value(got[j]) == (double)(x_value(i) + y_value(i)) : got[j] == 0xFFFF;
    if (!ok && bad++ < 5)
      fprintf(stderr, "  out[%llu] = 0x%04x, want %s\n", i, got[j], (long long)i < n ? "x + y" : "the poison 0xffff");
  }
  free(got);
  return bad;
}

static long check_samples(Example *ex, const void *dout, long long n) {
  long long two31 = 1ll << 31;
  long bad = check_window(ex, dout, n, 0, WINDOW) + check_window(ex, dout, n, two31 - WINDOW, 2 * WINDOW) +
             check_window(ex, dout, n, n - WINDOW, WINDOW + GUARD);
  for (int w = 0; w < RANDOM_WINDOWS; w++)
    bad += check_window(ex, dout, n, (long long)(example_uniform(ex) * (double)n), 256);
  return bad;
}

/* Takes --elements N out of argv (the rest is example_start's). */
static long long take_elements(int *argc, char **argv) {
  long long n = (1ll << 31) + 4099;
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--elements") || i + 1 >= *argc) continue;
    n = strtoll(argv[i + 1], NULL, 10);
    memmove(&argv[i], &argv[i + 2], sizeof(char *) * (size_t)(*argc - i - 1));
    *argc -= 2;
    break;
  }
  return n;
}

int main(int argc, char **argv) {
  long long n = take_elements(&argc, argv);
  Example ex;
  example_start(&ex, argc, argv, TILE_SOURCE_DIR "/tests/gpu/add_int64.tl");
  if (n < 1) return fprintf(stderr, "large_offsets: --elements must be positive\n"), 2;
  if (ex.on_cpu && n > (1ll << 24)) {
    printf("SKIP: large_offsets: %lld elements are too many for the interpreter (give --elements N <= 2^24)\n", n);
    tile_context_destroy(ex.ctx);
    return EXAMPLE_SKIP;
  }
  size_t bytes = (size_t)n * 2, out_bytes = (size_t)(n + GUARD) * 2;
  void *dx = example_alloc(&ex, bytes), *dy = example_alloc(&ex, bytes), *dout = example_alloc(&ex, out_bytes);
  fill_inputs(&ex, dx, dy, n);
  example_poison(&ex, dout, out_bytes);
  const char *defines[] = {"BLOCK_SIZE=1024"};
  tile_options opts;
  tile_options_init(&opts);
  opts.defines = defines;
  opts.num_defines = 1;
  tile_kernel *kernel = example_kernel(&ex, &opts);
  Add add = {kernel, n, {tile_buffer(dx, "fp16", (size_t)n), tile_buffer(dy, "fp16", (size_t)n),
                         tile_buffer(dout, "fp16", (size_t)n), tile_int(n)}};
  EXAMPLE_TRY(&ex, tile_kernel_compile(kernel, add.args, 4)); /* not inside the timed run */
  double ms = example_time(&ex, add_launch, &add, 1);          /* the checked run */
  long bad = check_samples(&ex, dout, n);
  char what[96];
  snprintf(what, sizeof what, "n=%lld fp16 (%.1f GB/s)", n, 3.0 * (double)bytes / (ms * 1e6));
  example_result(&ex, what, bad ? 1.0 : 0.0, bad, ms);
  tile_kernel_destroy(kernel);
  tile_free(ex.ctx, dx), tile_free(ex.ctx, dy), tile_free(ex.ctx, dout);
  return example_finish(&ex);
}
