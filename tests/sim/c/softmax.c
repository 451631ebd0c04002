/* seeds/softmax.tl's softmax_kernel written by hand as the sim target's code
 * would be (sim_diff --module tests/sim/c/softmax.c softmax_37x129): each
 * thread holds elements tid, tid + T, ...; max and sum are reduced in the
 * thread, over the warp with butterfly shuffles, then across warps through
 * shared memory; exp is ex2.approx(x * log2(e)) as Triton does. */
#include "tile_sim.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { THREADS = 32 * NUM_WARPS, PER_THREAD = BLOCK_SIZE / THREADS > 0 ? BLOCK_SIZE / THREADS : 1 };

static float shuffle_xor(float v, int mask) {
  int32_t bits;
  memcpy(&bits, &v, 4);
  bits = tile_sim_shfl_xor(bits, mask);
  memcpy(&v, &bits, 4);
  return v;
}

/* Every thread gets the combination of every thread's v. */
static float block_reduce(float v, int is_max) {
  for (int m = 16; m >= 1; m /= 2) {
    float o = shuffle_xor(v, m);
    v = is_max ? fmaxf(v, o) : v + o;
  }
  float *shared = tile_sim_shared();
  tile_sim_barrier(); /* the previous reduction's reads are done */
  if (tile_sim_tid() % 32 == 0) shared[tile_sim_tid() / 32] = v;
  tile_sim_barrier();
  v = shared[0];
  for (int w = 1; w < NUM_WARPS; w++) v = is_max ? fmaxf(v, shared[w]) : v + shared[w];
  return v;
}

void softmax_kernel_sim_entry(void **params) {
  float *out = *(float **)params[0], *in = *(float **)params[1];
  int32_t in_stride = *(int32_t *)params[2], out_stride = *(int32_t *)params[3], n_cols = *(int32_t *)params[4];
  int32_t row = tile_sim_ctaid(0), tid = tile_sim_tid();
  float x[PER_THREAD], mx = -INFINITY, sum = 0;
  for (int r = 0; r < PER_THREAD; r++) {
    int32_t col = tid + r * THREADS;
    x[r] = -INFINITY;
    if (col < BLOCK_SIZE && col < n_cols) tile_sim_load(&x[r], in + (int64_t)row * in_stride + col, 4);
    mx = fmaxf(mx, x[r]);
  }
  mx = block_reduce(mx, 1);
  for (int r = 0; r < PER_THREAD; r++) {
    x[r] = tile_sim_ex2_approx((x[r] - mx) * 1.44269504088896341f);
    if (tid + r * THREADS < BLOCK_SIZE) sum += x[r];
  }
  sum = block_reduce(sum, 0);
  for (int r = 0; r < PER_THREAD; r++) {
    int32_t col = tid + r * THREADS;
    float v = x[r] / sum;
    if (col < BLOCK_SIZE && col < n_cols) tile_sim_store(out + (int64_t)row * out_stride + col, &v, 4);
  }
}
