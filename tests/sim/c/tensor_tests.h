/* What the tensor-core tests share between their kernels
 * (c/tensor_kernels.c, built by the harness like generated code) and the
 * host side (test_sim_tensor.c): the PTX ISA's fragment tables, and the
 * parameters of the wgmma kernel.
 *
 * The tables are written the other way round from the simulator
 * (sim_tensor.c computes, for a lane's element i, its row and column): here,
 * for each element (row, col) of a matrix, which lane holds it, in which b32
 * register and in which part of the register (0: the lowest bits).  They
 * come from the figures of the PTX ISA (9.0): mma.sync 9.7.14.5.7 (m16n8k8
 * .tf32, Figures 72, 75, 77), 9.7.14.5.8 (m16n8k16 .f16/.bf16, Figures 79,
 * 81, 83), 9.7.14.5.10 (m16n8k32 .s8, Figures 88, 90-92); wgmma 9.7.15.5.1.1
 * (Figures 148-151). */
#ifndef TILE_SIM_TENSOR_TESTS_H
#define TILE_SIM_TENSOR_TESTS_H

#include <stdint.h>

typedef struct FragmentSlot {
  int lane;  /* the lane (wgmma: the thread of the warpgroup, 0..127) */
  int reg;   /* its b32 register */
  int part;  /* which element of the register, from the low bits */
} FragmentSlot;

/* TILE_SIM_MMA_*; KIND_FP8 (e4m3 x e4m3) + 1 where A is e5m2, + 2 where B is: m16n8k32 like s8 (9.7.14.5.10) */
enum { KIND_F16, KIND_BF16, KIND_TF32, KIND_S8, KIND_FP8 };

/* mma.sync's A, 16 x K: each row is held by the 4 lanes of one quad
 * (lanes 4r..4r+3 for rows r and r+8), each lane a run of 2 (f16), 1 (tf32)
 * or 4 (s8) consecutive columns; registers: row half first, then column
 * half (K/2 columns on). */
static inline FragmentSlot mma_a_slot(int kind, int row, int col) {
  FragmentSlot s;
  if (kind == KIND_TF32) s = (FragmentSlot){4 * (row % 8) + col % 4, row / 8 + 2 * (col / 4), 0};
  else if (kind >= KIND_S8) s = (FragmentSlot){4 * (row % 8) + col % 16 / 4, row / 8 + 2 * (col / 16), col % 4};
  else s = (FragmentSlot){4 * (row % 8) + col % 8 / 2, row / 8 + 2 * (col / 8), col % 2};
  return s;
}

/* mma.sync's B, K x 8: column n by lanes 4n..4n+3, each a run of K rows
 * like A's columns; the second register holds the rows K/2 on. */
static inline FragmentSlot mma_b_slot(int kind, int row, int col) {
  FragmentSlot s;
  if (kind == KIND_TF32) s = (FragmentSlot){4 * col + row % 4, row / 4, 0};
  else if (kind >= KIND_S8) s = (FragmentSlot){4 * col + row % 16 / 4, row / 16, row % 4};
  else s = (FragmentSlot){4 * col + row % 8 / 2, row / 8, row % 2};
  return s;
}

/* mma.sync's C and D, 16 x 8 (f32 or s32, one per register): row r by the
 * quad of lanes 4(r%8).., two adjacent columns a lane; c0, c1 in rows 0-7,
 * c2, c3 in rows 8-15. */
static inline FragmentSlot mma_c_slot(int row, int col) {
  return (FragmentSlot){4 * (row % 8) + col / 2, 2 * (row / 8) + col % 2, 0};
}

/* wgmma's accumulator D, 64 x N: warp w of the warpgroup holds rows
 * 16w..16w+15, each 8-column block of them like mma.sync's C, the blocks one
 * after another in the registers. */
static inline FragmentSlot wgmma_d_slot(int row, int col) {
  FragmentSlot c = mma_c_slot(row % 16, col % 8);
  return (FragmentSlot){32 * (row / 16) + c.lane, 4 * (col / 8) + c.reg, 0};
}

/* wgmma's register A, 64 x K (f16/bf16: K 16; tf32: K 8): warp w holds rows
 * 16w..16w+15 as mma.sync's A fragment. */
static inline FragmentSlot wgmma_a_slot(int kind, int row, int col) {
  FragmentSlot a = mma_a_slot(kind, row % 16, col);
  return (FragmentSlot){32 * (row / 16) + a.lane, a.reg, a.part};
}

/* The wgmma kernel's parameters (one struct, passed by value). */
typedef struct WgmmaParams {
  int32_t kind, n, k_steps;       /* D(64 x n) = A(64 x k k_steps) B(k k_steps x n) + D, k_steps <= 8 */
  int32_t a_in_registers, trans_a, trans_b, scale_d, mode;
  uint64_t a_desc, b_desc;        /* descriptors without their start address */
  int64_t a_start[8], b_start[8]; /* per K step, where the operands start: bytes into shared memory */
  const unsigned char *image;     /* shared memory as the test laid it out */
  int64_t image_bytes;            /* a multiple of 16 */
  const uint32_t *a_bits;         /* A's element bits, 64 x K, row-major (register A) */
  const float *acc_in;            /* per warpgroup, 64 x n */
  float *out;                     /* per warpgroup, 64 x n */
} WgmmaParams;

/* WgmmaParams.mode: how the wgmma kernel misbehaves. */
enum {
  WGMMA_OK,
  WGMMA_NO_FENCE,        /* no wgmma.fence before the wgmma */
  WGMMA_NO_COMMIT,       /* returns with the wgmma not committed */
  WGMMA_NO_WAIT,         /* returns with the group not waited for */
  WGMMA_ONE_GROUP,       /* one fence, all K steps in one group, an empty group, wait_group 1 (fine) */
  WGMMA_SKEWED_DESC,     /* thread 77 passes b-desc + 1 */
  WGMMA_DIVERGENT_N,     /* warp 2 asks for n + 8 */
  WGMMA_DIVERGENT_FENCE  /* warp 3 waits instead of fencing */
};

#endif
