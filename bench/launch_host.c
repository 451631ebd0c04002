/* Host time per launch: a generated launcher (tilec pack --launcher, the
 * bundle embedded) against tile_launch_grid on the JIT-compiled source, the
 * same vector add of 1024 fp32 elements, already compiled and cached.  Each
 * round times LAUNCHES launches of one side on the host clock, then of the
 * other (so clocks and caches treat both alike), and prints microseconds
 * per launch; the median of the rounds per side is the result.
 *   launch_host [--cpu] [--rounds N] VECTOR_ADD.tl
 * Built by bench/CMakeLists.txt with add_kernel.{h,c} generated from
 * examples/vector_add/vector_add.tl for sm_80 and sm_90a. */
#include "add_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 1024, LAUNCHES = 20000, MAX_ROUNDS = 15 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct Sides {
  tile_context *ctx;
  tile_kernel *packed, *jit;
  void *x, *y, *out;
} Sides;

static void grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned g[3], void *user) {
  long long block = 1;
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  g[0] = (unsigned)((args[3].i + block - 1) / block), g[1] = g[2] = 1;
}

static tile_status launch_generated(Sides *s) {
  return add_kernel_launch(s->packed, NULL, s->x, N, s->y, N, s->out, N, N);
}

static tile_status launch_grid(Sides *s) {
  tile_arg args[4] = {tile_buffer(s->x, "fp32", N), tile_buffer(s->y, "fp32", N), tile_buffer(s->out, "fp32", N),
                      tile_int(N)};
  return tile_launch_grid(s->jit, grid, NULL, NULL, args, 4);
}

/* Microseconds per launch of `launch` over `count` launches (host clock, no synchronise inside). */
static double time_side(Sides *s, tile_status (*launch)(Sides *), int count) {
  if (tile_synchronize(s->ctx)) return -1;
  double t0 = now();
  for (int i = 0; i < count; i++)
    if (launch(s)) return -1;
  double us = 1e6 * (now() - t0) / count;
  return tile_synchronize(s->ctx) ? -1 : us;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int fail(Sides *s, const char *what) {
  fprintf(stderr, "launch_host: %s: %s\n", what, s->ctx ? tile_error(s->ctx) : "no context");
  return 1;
}

int main(int argc, char **argv) {
  int cpu = 0, rounds = 5;
  const char *source = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--cpu")) cpu = 1;
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else source = argv[i];
  }
  if (!source || rounds < 1 || rounds > MAX_ROUNDS) {
    fprintf(stderr, "usage: launch_host [--cpu] [--rounds 1..%d] VECTOR_ADD.tl\n", MAX_ROUNDS);
    return 2;
  }
  Sides s = {0};
  tile_options opts;
  tile_options_init(&opts);
  opts.defines = (const char *[]){"BLOCK_SIZE=1024"};
  opts.num_defines = 1;
  if (tile_context_create(&s.ctx) || (cpu && tile_context_use_cpu(s.ctx))) return fail(&s, "context");
  if (add_kernel_load(s.ctx, &s.packed)) return fail(&s, "add_kernel_load");
  if (tile_kernel_create_file(s.ctx, source, &opts, &s.jit)) return fail(&s, source);
  if (tile_malloc(s.ctx, &s.x, 4 * N) || tile_malloc(s.ctx, &s.y, 4 * N) || tile_malloc(s.ctx, &s.out, 4 * N) ||
      tile_memset(s.ctx, s.x, 0, 4 * N) || tile_memset(s.ctx, s.y, 0, 4 * N))
    return fail(&s, "device memory");
  int count = cpu ? 20 : LAUNCHES;
  if (time_side(&s, launch_generated, 100) < 0 || time_side(&s, launch_grid, 100) < 0) return fail(&s, "warm-up");
  double generated[MAX_ROUNDS], jit[MAX_ROUNDS];
  for (int r = 0; r < rounds; r++) {
    generated[r] = time_side(&s, launch_generated, count);
    jit[r] = time_side(&s, launch_grid, count);
    if (generated[r] < 0 || jit[r] < 0) return fail(&s, "launch");
    printf("round %d: generated launcher %.2f us, tile_launch_grid %.2f us per launch\n", r, generated[r], jit[r]);
  }
  qsort(generated, (size_t)rounds, sizeof *generated, compare);
  qsort(jit, (size_t)rounds, sizeof *jit, compare);
  printf("median of %d rounds of %d launches (vector add of %d fp32%s): generated launcher %.2f us, "
         "tile_launch_grid %.2f us, ratio %.3f\n",
         rounds, count, N, cpu ? ", interpreter" : "", generated[rounds / 2], jit[rounds / 2],
         generated[rounds / 2] / jit[rounds / 2]);
  tile_free(s.ctx, s.x), tile_free(s.ctx, s.y), tile_free(s.ctx, s.out);
  tile_kernel_destroy(s.packed), tile_kernel_destroy(s.jit);
  tile_context_destroy(s.ctx);
  return 0;
}
