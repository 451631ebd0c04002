/* Tensor-core and shared-memory layouts (src/tir/layout_tc.c) against
 * references written from the PTX ISA, independently of the layout code:
 *   - mma.sync m16n8k* accumulators and the A/B fragments of m16n8k16
 *     (f16, bf16), m16n8k8 (tf32) and m16n8k32 (s8): for every register,
 *     lane and warp, the element the layout says equals the one the ISA's
 *     fragment table gives, with warps and repetitions placed as the
 *     layout documents (warps along M first, repetitions along N first);
 *   - wgmma m64nN accumulators (rows 16 * warp + lane / 4 (+8), columns
 *     8 * (i / 4) + 2 * (lane % 4) + i % 2);
 *   - every element is held exactly once (or replicated where warps
 *     outnumber the tile);
 *   - swizzled shared layouts are bijections whose XOR bases give every
 *     element's offset, and the rows ldmatrix reads at once fall in eight
 *     different 16-byte bank groups;
 *   - NVMMA layouts equal the hardware's swizzle on byte addresses (bits
 *     4.. XORed with bits 7..), blocks of the swizzle width stacked;
 *   - printing and the helpers that choose layouts. */
#include "check.h"
#include "../../src/tir/layout.h"

#include <stdlib.h>

/* A fresh table per test; the previous one's memory is released. */
static Arena arena;
static int arena_live;

static LayoutTable *table(void) {
  static LayoutTable t;
  if (arena_live) arena_free(&arena);
  arena_init(&arena, 1u << 26);
  arena_live = 1;
  memset(&t, 0, sizeof t);
  t.arena = &arena;
  return &t;
}

static LinearLayout linear(const Layout *l, int rank, int64_t d0, int64_t d1, int64_t d2) {
  int64_t shape[3] = {d0, d1, d2};
  LinearLayout ll;
  const char *why = NULL;
  int rc = layout_linear(l, rank, shape, &ll, &why);
  if (rc) fprintf(stderr, "layout_linear: %s\n", why);
  CHECK(rc == 0);
  return ll;
}

/* (row, col) of flat offset `off` in a tile of `cols` columns (rank 2). */
static void rc_of(uint32_t off, int64_t cols, int64_t *r, int64_t *c) {
  *r = off / cols;
  *c = off % cols;
}

/* ---- mma.sync accumulators ---- */

/* The ISA's m16n8 accumulator fragment: c[i] of lane l. */
static void acc_fragment(int lane, int i, int64_t *row, int64_t *col) {
  *row = lane / 4 + 8 * (i / 2);
  *col = 2 * (lane % 4) + i % 2;
}

static void test_mma_v2_accumulator(int64_t M, int64_t N, int wm, int wn) {
  LayoutTable *t = table();
  int warps[2] = {wm, wn}, instr[3] = {16, 8, 0};
  const char *why;
  const Layout *l = layout_mma(t, 2, 2, warps, instr, &why);
  CHECK(l != NULL);
  if (!l) return;
  LinearLayout ll = linear(l, 2, M, N, 0);
  int64_t reps_n = N / (8 * wn), reps_m = M / (16 * wm);
  int bad = 0;
  for (int w = 0; w < wm * wn; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int64_t rm = 0; rm < reps_m; rm++)
        for (int64_t rn = 0; rn < reps_n; rn++)
          for (int i = 0; i < 4; i++) {
            int64_t row, col, r, c;
            acc_fragment(lane, i, &row, &col);
            row += 16 * (w % wm + wm * rm);
            col += 8 * (w / wm + wn * rn);
            uint32_t reg = (uint32_t)((rm * reps_n + rn) * 4 + i);
            rc_of(ll_offset(&ll, reg, (uint32_t)lane, (uint32_t)w), N, &r, &c);
            bad += r != row || c != col;
          }
  CHECK(bad == 0);
  CHECK(ll_registers(&ll) == 4 * reps_m * reps_n);
}

/* wgmma m64nN: one warpgroup of 4 warps, n/2 registers per thread. */
static void test_mma_v3_accumulator(int64_t n, int warpgroups_m) {
  LayoutTable *t = table();
  int warps[2] = {4 * warpgroups_m, 1}, instr[3] = {16, (int)n, 16};
  const char *why;
  const Layout *l = layout_mma(t, 3, 2, warps, instr, &why);
  CHECK(l != NULL);
  if (!l) return;
  int64_t M = 64 * warpgroups_m;
  LinearLayout ll = linear(l, 2, M, n, 0);
  CHECK(ll_registers(&ll) == n / 2);
  int bad = 0;
  for (int w = 0; w < 4 * warpgroups_m; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int i = 0; i < n / 2; i++) {
        int64_t row = 16 * w + lane / 4 + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * (lane % 4) + i % 2, r, c;
        rc_of(ll_offset(&ll, (uint32_t)i, (uint32_t)lane, (uint32_t)w), n, &r, &c);
        bad += r != row || c != col;
      }
  CHECK(bad == 0);
}

/* ---- mma.sync operands ---- */

/* The ISA's fragments: element j of register i of lane l, as (row, col)
 * of the instruction's A (16 x 8kw) or B (8kw x 8).  kw: elements per
 * 32-bit register (2: f16/bf16 m16n8k16, 1: tf32 m16n8k8, 4: s8 m16n8k32). */
static void operand_fragment(int op, int kw, int lane, int i, int j, int64_t *row, int64_t *col) {
  int g = lane / 4, t = lane % 4;
  if (op == 0) { /* a0: (g, k), a1: (g + 8, k), a2: (g, k + 4kw), a3: (g + 8, k + 4kw) */
    *row = g + 8 * (i % 2);
    *col = t * kw + j + 4 * kw * (i / 2);
  } else { /* b0: (k, g), b1: (k + 4kw, g) */
    *row = t * kw + j + 4 * kw * i;
    *col = g;
  }
}

/* One instruction's operand in warp 0, the other warps holding copies or
 * their own rows (A along M) / columns (B along N). */
static void test_mma_operand(int op, int kw, int wm, int wn) {
  LayoutTable *t = table();
  int warps[2] = {wm, wn}, instr[3] = {16, 8, 0};
  const char *why;
  const Layout *acc = layout_mma(t, 2, 2, warps, instr, &why);
  const Layout *l = layout_dot_operand(t, op, acc, kw);
  int64_t rows = op == 0 ? 16 * wm : 8 * kw, cols = op == 0 ? 8 * kw : 8 * wn;
  LinearLayout ll = linear(l, 2, rows, cols, 0);
  CHECK(ll_registers(&ll) == (op == 0 ? 4 : 2) * kw);
  int bad = 0;
  for (int w = 0; w < wm * wn; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int i = 0; i < (op == 0 ? 4 : 2); i++)
        for (int j = 0; j < kw; j++) {
          int64_t row, col, r, c;
          operand_fragment(op, kw, lane, i, j, &row, &col);
          if (op == 0) row += 16 * (w % wm);
          else col += 8 * (w / wm);
          rc_of(ll_offset(&ll, (uint32_t)(i * kw + j), (uint32_t)lane, (uint32_t)w), cols, &r, &c);
          bad += r != row || c != col;
        }
  CHECK(bad == 0);
}

/* A larger operand: every element held by some thread, each thread's
 * registers distinct, the warps along the other operand's dimension
 * holding copies. */
static void test_operand_coverage(int op, int kw, int64_t rows, int64_t cols, int wm, int wn) {
  LayoutTable *t = table();
  int warps[2] = {wm, wn}, instr[3] = {16, 8, 0};
  const char *why;
  const Layout *l = layout_dot_operand(t, op, layout_mma(t, 2, 2, warps, instr, &why), kw);
  LinearLayout ll = linear(l, 2, rows, cols, 0);
  char *seen = calloc((size_t)(rows * cols), 1);
  int copies_ok = 1;
  for (int w = 0; w < wm * wn; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int r = 0; r < ll_registers(&ll); r++) {
        uint32_t off = ll_offset(&ll, (uint32_t)r, (uint32_t)lane, (uint32_t)w);
        seen[off] = 1;
        int owner_w = op == 0 ? w % wm : (w / wm) * wm; /* the warp whose copy this is */
        copies_ok &= off == ll_offset(&ll, (uint32_t)r, (uint32_t)lane, (uint32_t)owner_w);
      }
  int all = 1;
  for (int64_t i = 0; i < rows * cols; i++) all &= seen[i];
  CHECK(all);
  CHECK(copies_ok);
  CHECK(ll_registers(&ll) * 32 * (op == 0 ? wm : wn) == rows * cols);
  free(seen);
}

/* wgmma's register A (#dot_op opIdx 0 of a version 3 mma, kWidth 2): per
 * warp of a warpgroup 16 rows, per thread mma.sync's m16n8k16 A fragment,
 * K steps of 16 in further registers, then the next 64 x wm rows; the
 * warpgroups along N hold copies.  The accumulator of the same mma over a
 * tile of the same shape has every element in the same thread (the
 * conversion after the fp32 -> fp16 cast renames registers); B has no such
 * layout. */
static void test_wgmma_register_a(int wm, int wn, int64_t rows, int64_t k) {
  LayoutTable *t = table();
  int warps[2] = {wm, wn}, instr[3] = {16, 64, 16};
  const char *why;
  const Layout *acc = layout_mma(t, 3, 2, warps, instr, &why);
  const Layout *l = layout_dot_operand(t, 0, acc, 2);
  LinearLayout ll = linear(l, 2, rows, k, 0);
  int64_t k_steps = k / 16, m_reps = rows / (16 * wm);
  CHECK(ll_registers(&ll) == 8 * k_steps * m_reps);
  int bad = 0;
  for (int w = 0; w < wm * wn; w++)
    for (int lane = 0; lane < 32; lane++)
      for (int64_t rep = 0; rep < k_steps * m_reps; rep++)
        for (int i = 0; i < 4; i++)
          for (int j = 0; j < 2; j++) {
            int64_t row, col, r, c;
            operand_fragment(0, 2, lane, i, j, &row, &col);
            row += 16 * (w % wm) + 16 * wm * (rep / k_steps);
            col += 16 * (rep % k_steps);
            rc_of(ll_offset(&ll, (uint32_t)(8 * rep + 2 * i + j), (uint32_t)lane, (uint32_t)w), k, &r, &c);
            bad += r != row || c != col;
          }
  CHECK(bad == 0);
  if (wn == 1) {
    LinearLayout a = linear(acc, 2, rows, k, 0);
    CHECK(ll_same_threads(&a, &ll));
  }
  int64_t shape[2] = {k, 64};
  LinearLayout b;
  CHECK(layout_linear(layout_dot_operand(t, 1, acc, 2), 2, shape, &b, &why) != 0);
}

/* ---- shared memory ---- */

/* The swizzled offset straight from the definition (rank 2, order [1, 0]
 * or [0, 1]). */
static int64_t swizzled(int64_t r, int64_t c, int64_t rows, int64_t cols, int vec, int per_phase, int max_phase,
                        int col_major) {
  if (col_major) { /* dimension 0 contiguous: the roles swap */
    int64_t t = r;
    r = c, c = t, t = rows, rows = cols, cols = t;
  }
  int64_t phase = (r / per_phase) % max_phase, groups = cols / vec;
  return r * cols + (((c / vec) ^ (phase % groups)) * vec) + c % vec;
}

static void test_swizzled(int64_t rows, int64_t cols, int vec, int per_phase, int max_phase, int col_major) {
  LayoutTable *t = table();
  int order[2] = {col_major ? 0 : 1, col_major ? 1 : 0};
  const char *why;
  const Layout *l = layout_shared(t, 2, vec, per_phase, max_phase, order, &why);
  LinearLayout ll = linear(l, 2, rows, cols, 0);
  char *seen = calloc((size_t)(rows * cols), 1);
  int bad = 0, dup = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      uint32_t m = ll_reg_offset(&ll, (uint32_t)(r * cols + c));
      bad += m != (uint32_t)swizzled(r, c, rows, cols, vec, per_phase, max_phase, col_major);
      dup += m < rows * cols && seen[m];
      if (m < rows * cols) seen[m] = 1;
    }
  CHECK(bad == 0);
  CHECK(dup == 0);
  free(seen);
}

/* The 8 rows one ldmatrix phase reads (8 consecutive rows, one 16-byte
 * group each) land in 8 different bank groups, for every row block and
 * K group, with the layout the compiler picks for an mma.sync operand. */
static void test_ldmatrix_conflicts(int op, int elem_bits, int64_t rows, int64_t cols, int contiguous_k) {
  LayoutTable *t = table();
  int kdim = op == 0 ? 1 : 0, order[2];
  order[0] = contiguous_k ? kdim : 1 - kdim;
  order[1] = 1 - order[0];
  int64_t shape[2] = {rows, cols};
  const Layout *l = layout_shared_for_dot(t, op, elem_bits, 2, shape, order);
  CHECK(l != NULL);
  LinearLayout ll = linear(l, 2, rows, cols, 0);
  int elem_bytes = elem_bits / 8, per_group = 16 / elem_bytes, conflicts = 0;
  int64_t lines = shape[order[1]], width = shape[order[0]];
  for (int64_t base = 0; base + 8 <= lines; base += 8)
    for (int64_t g = 0; g < width / per_group; g++) {
      int used = 0;
      for (int i = 0; i < 8; i++) {
        int64_t coord[2];
        coord[order[1]] = base + i;
        coord[order[0]] = g * per_group;
        uint32_t m = ll_reg_offset(&ll, (uint32_t)(coord[0] * cols + coord[1]));
        int bank_group = (int)((m * (uint32_t)elem_bytes / 16) % 8);
        conflicts += used >> bank_group & 1;
        used |= 1 << bank_group;
      }
    }
  CHECK(conflicts == 0);
}

/* NVMMA: blocks of `swizzle` bytes along the contiguous dimension, each a
 * [lines, swizzle] array; then address bits 4.. XORed with bits 7.. as the
 * wgmma hardware does (128B: 3 bits, 64B: 2, 32B: 1). */
static void test_nvmma(int64_t rows, int64_t cols, int elem_bits, int col_major) {
  LayoutTable *t = table();
  int order[2] = {col_major ? 0 : 1, col_major ? 1 : 0};
  int64_t shape[2] = {rows, cols};
  const Layout *l = layout_nvmma_for(t, elem_bits, 2, shape, order);
  CHECK(l != NULL);
  if (!l) return;
  LinearLayout ll = linear(l, 2, rows, cols, 0);
  int bytes = elem_bits / 8, swz = l->swizzle_bytes, width = swz / bytes, bits = swz == 128 ? 3 : swz == 64 ? 2 : 1;
  int64_t lines = shape[order[1]], bad = 0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      int64_t x = col_major ? r : c, y = col_major ? c : r;
      uint64_t a = (uint64_t)((x / width) * lines * swz + y * swz + (x % width) * bytes);
      a ^= ((a >> 7) & ((1u << bits) - 1)) << 4;
      bad += (uint64_t)ll_reg_offset(&ll, (uint32_t)(r * cols + c)) * (uint64_t)bytes != a;
    }
  CHECK(bad == 0);
}

static void test_choices_and_printing(void) {
  LayoutTable *t = table();
  Arena *a = t->arena;
  int64_t a64x32[2] = {64, 32}, b32x256[2] = {32, 256};
  int kmaj[2] = {1, 0};
  const Layout *sa = layout_shared_for_dot(t, 0, 16, 2, a64x32, kmaj);
  CHECK_CONTAINS(layout_str(a, sa), "#shared<{vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]}>");
  const Layout *sb = layout_shared_for_dot(t, 1, 16, 2, b32x256, kmaj);
  CHECK_CONTAINS(layout_str(a, sb), "#shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>");
  const Layout *na = layout_nvmma_for(t, 16, 2, a64x32, kmaj);
  CHECK_CONTAINS(layout_str(a, na), "#nvmma_shared<{swizzlingByteWidth = 64, elementBitWidth = 16, order = [1, 0]}>");
  int64_t narrow[2] = {64, 8};
  CHECK(layout_nvmma_for(t, 16, 2, narrow, kmaj) == NULL);
  int w2[2] = {2, 2}, i2[3] = {16, 8, 0}, w3[2] = {8, 1}, i3[3] = {16, 256, 16};
  const char *why;
  CHECK_CONTAINS(layout_str(a, layout_mma(t, 2, 2, w2, i2, &why)),
                 "#mma<{versionMajor = 2, warpsPerCTA = [2, 2], instrShape = [16, 8]}>");
  CHECK_CONTAINS(layout_str(a, layout_mma(t, 3, 2, w3, i3, &why)),
                 "#mma<{versionMajor = 3, warpsPerCTA = [8, 1], instrShape = [16, 256, 16]}>");
  int bad_warps[2] = {2, 4};
  CHECK(layout_mma(t, 3, 2, bad_warps, i3, &why) == NULL);
  CHECK_CONTAINS(why, "groups of 4");
  /* buffers: a slot dimension in front, and back */
  const Layout *buf = layout_shared_buffers(t, sa);
  CHECK_CONTAINS(layout_str(a, buf), "order = [2, 1, 0]");
  CHECK(layout_shared_slot(t, buf) == sa);
  /* over a tile smaller than one instruction (a slice's parent), the missing bases replicate */
  LinearLayout ll;
  int64_t row[2] = {1, 64};
  CHECK(layout_linear(layout_mma(t, 2, 2, w2, i2, &why), 2, row, &ll, &why) == 0);
  CHECK(ll.lane[2] == 0 && ll.lane[3] == 0 && ll.lane[4] == 0 && ll.warp[0] == 0 && ll.lane[0] == 2);
}

int main(void) {
  test_mma_v2_accumulator(16, 8, 1, 1);
  test_mma_v2_accumulator(64, 64, 2, 2);
  test_mma_v2_accumulator(128, 256, 2, 4);
  test_mma_v2_accumulator(32, 64, 1, 4);
  test_mma_v3_accumulator(8, 1);
  test_mma_v3_accumulator(128, 1);
  test_mma_v3_accumulator(256, 2);
  test_wgmma_register_a(4, 1, 64, 16);
  test_wgmma_register_a(4, 1, 64, 64);
  test_wgmma_register_a(8, 1, 128, 64);
  test_wgmma_register_a(4, 1, 256, 128);
  test_wgmma_register_a(4, 2, 64, 64);
  for (int op = 0; op < 2; op++)
    for (int kw = 1; kw <= 4; kw *= 2) {
      test_mma_operand(op, kw, 1, 1);
      test_mma_operand(op, kw, 2, 2);
      test_mma_operand(op, kw, 4, 2);
      test_operand_coverage(op, kw, op == 0 ? 128 : 64, op == 0 ? 64 : 256, 2, 4);
    }
  test_swizzled(64, 32, 8, 2, 4, 0);
  test_swizzled(32, 256, 8, 1, 8, 0);
  test_swizzled(64, 64, 4, 2, 4, 1);
  test_swizzled(16, 16, 8, 4, 2, 0);
  for (int op = 0; op < 2; op++)
    for (int k_contiguous = 0; k_contiguous < 2; k_contiguous++) {
      test_ldmatrix_conflicts(op, 16, 64, 64, k_contiguous);
      test_ldmatrix_conflicts(op, 16, op == 0 ? 128 : 32, op == 0 ? 32 : 256, k_contiguous);
    }
  test_ldmatrix_conflicts(0, 32, 64, 32, 1);
  test_ldmatrix_conflicts(0, 8, 64, 64, 1);
  test_nvmma(128, 64, 16, 0);
  test_nvmma(64, 32, 16, 0);
  test_nvmma(128, 16, 16, 0);
  test_nvmma(64, 256, 16, 1);
  test_nvmma(32, 256, 16, 0);
  test_nvmma(64, 32, 32, 0);
  test_choices_and_printing();
  arena_free(&arena);
  return check_report();
}
