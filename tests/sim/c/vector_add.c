/* seeds/vector_add.tl's add_kernel written by hand as the sim target's
 * code would be, to check sim_diff's own machinery (parameters, buffers,
 * poisoning, comparison) before the lowering exists:
 *   sim_diff --module tests/sim/c/vector_add.c vector_add_1000
 * Layout: blocked, 4 consecutive elements per thread, threads then warps
 * along the block; 16-byte accesses where the run of 4 is in bounds and
 * aligned, else one element at a time.  -DBUG swaps two elements. */
#include "tile_sim.h"

#include <stdint.h>

#ifndef BLOCK_SIZE
#error "BLOCK_SIZE is given by the case's defines"
#endif

enum { VEC = 4, THREADS = 32 * NUM_WARPS };

static void add_run(float *x, float *y, float *out, int32_t n, int32_t first) {
  float a[VEC], b[VEC], c[VEC];
  int whole = first + VEC <= n && (uintptr_t)(x + first) % 16 == 0 && (uintptr_t)(y + first) % 16 == 0 &&
              (uintptr_t)(out + first) % 16 == 0;
  if (whole) {
    tile_sim_load(a, x + first, 16);
    tile_sim_load(b, y + first, 16);
  }
  for (int r = 0; r < VEC && !whole; r++) {
    if (first + r >= n) break;
    tile_sim_load(&a[r], x + first + r, 4);
    tile_sim_load(&b[r], y + first + r, 4);
  }
  for (int r = 0; r < VEC; r++) c[r] = a[r] + b[r];
#ifdef BUG
  if (first == 8) {
    float t = c[0];
    c[0] = c[1], c[1] = t;
  }
#endif
  if (whole) tile_sim_store(out + first, c, 16);
  for (int r = 0; r < VEC && !whole; r++)
    if (first + r < n) tile_sim_store(out + first + r, &c[r], 4);
}

void add_kernel_sim_entry(void **params) {
  float *x = *(float **)params[0], *y = *(float **)params[1], *out = *(float **)params[2];
  int32_t n = *(int32_t *)params[3];
  int32_t base = tile_sim_ctaid(0) * BLOCK_SIZE + tile_sim_tid() * VEC;
  for (int32_t k = 0; k < BLOCK_SIZE; k += THREADS * VEC)
    if (k + tile_sim_tid() * VEC < BLOCK_SIZE) add_run(x, y, out, n, base + k);
}
