/* The simulator's tensor-core instructions and asynchronous copies, on
 * kernels written by hand against tile_sim.h (c/tensor_kernels.c): each
 * builds its lanes' fragments from random matrices through the ISA's tables
 * (c/tensor_tests.h, written independently of sim_tensor.c) and the results
 * are compared with a plain matrix product (mma.sync of every kind, the
 * four fp8 ones, e4m3 and e5m2 in either operand, with their values
 * decoded here from the formats); ldmatrix against hand-computed
 * lanes; cp.async's poison before the wait, its groups and zero fill; wgmma
 * with every swizzle mode and major-ness on shared-memory images laid out
 * by an encoder written from the ISA's swizzle atoms; the TMA store's
 * swizzle and clipping; and the errors each instruction reports. */
#include "../unit/check.h"
#include "c/tensor_tests.h"
#include "hand_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static int run(SimLaunch *L) {
  int rc = sim_run(L);
  if (rc) fprintf(stderr, "%s\n", L->error);
  return rc;
}

/* ---- values --------------------------------------------------------------------- */

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}

static float float_of(uint32_t b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static int random_sign(void) { return rand() % 2; }

/* fp8 elements, for their values (not mma kinds): an fp8 kind's A and B are each one of these. */
enum { ELEM_E4M3 = 16, ELEM_E5M2 };

/* The element kind of operand 0 (A) or 1 (B) of an mma of `kind`. */
static int operand_kind(int kind, int operand) {
  if (kind < KIND_FP8) return kind;
  return ((kind - KIND_FP8) >> operand) & 1 ? ELEM_E5M2 : ELEM_E4M3;
}

/* e4m3: bias 7, 3 mantissa bits; e5m2: bias 15, 2 (the PTX ISA's alternate floating-point formats). */
static double fp8_element(uint32_t bits, int e5m2) {
  int man_bits = e5m2 ? 2 : 3, exponent = (int)(bits & 0x7f) >> man_bits, mantissa = (int)bits & ((1 << man_bits) - 1);
  int bias = e5m2 ? 15 : 7;
  double v = exponent ? ldexp((1 << man_bits) + mantissa, exponent - bias - man_bits)
                      : ldexp(mantissa, 1 - bias - man_bits);
  return bits & 0x80 ? -v : v;
}

/* An element's value as the tensor core reads it (fp16 and fp8: no inf or NaN here). */
static double element_value(int kind, uint32_t bits) {
  if (kind == ELEM_E4M3 || kind == ELEM_E5M2) return fp8_element(bits, kind == ELEM_E5M2);
  if (kind == KIND_TF32) return float_of(bits & ~0x1fffu);
  if (kind == KIND_BF16) return float_of(bits << 16);
  if (kind == KIND_S8) return (int8_t)bits;
  int exponent = (bits >> 10) & 31, mantissa = bits & 1023;
  double v = exponent ? ldexp(1024 + mantissa, exponent - 25) : ldexp(mantissa, -24);
  return bits & 0x8000 ? -v : v;
}

/* A random element whose products and sums stay exact in fp32: +-(1 + j/8)
 * 2^e, e in -2..2 (tf32: with junk in the 13 bits the hardware drops). */
static uint32_t exact_element(int kind) {
  int e = rand() % 5 - 2, j = rand() % 8, sign = random_sign();
  if (rand() % 10 == 0) return 0;
  switch (kind) {
  case KIND_F16: return (uint32_t)sign << 15 | (uint32_t)(e + 15) << 10 | (uint32_t)j << 7;
  case KIND_BF16: return (uint32_t)sign << 15 | (uint32_t)(e + 127) << 7 | (uint32_t)j << 4;
  case KIND_TF32:
    return (uint32_t)sign << 31 | (uint32_t)(e + 127) << 23 | (uint32_t)j << 20 | (uint32_t)(rand() & 0x1fff);
  case ELEM_E4M3: return (uint32_t)sign << 7 | (uint32_t)(e + 7) << 3 | (uint32_t)j;
  case ELEM_E5M2: return (uint32_t)sign << 7 | (uint32_t)(e + 15) << 2 | (uint32_t)(j % 4);
  default: return (uint32_t)(rand() % 256);
  }
}

/* Any finite element of moderate size, for the order-of-summation tests. */
static uint32_t random_element(int kind) {
  int sign = random_sign();
  switch (kind) {
  case KIND_F16: return (uint32_t)sign << 15 | (uint32_t)(rand() % 11 + 10) << 10 | (uint32_t)(rand() % 1024);
  case KIND_BF16: return (uint32_t)sign << 15 | (uint32_t)(rand() % 11 + 122) << 7 | (uint32_t)(rand() % 128);
  case KIND_TF32: return (uint32_t)sign << 31 | (uint32_t)(rand() % 11 + 122) << 23 | (uint32_t)(rand() & 0x7fffff);
  case ELEM_E4M3: return (uint32_t)sign << 7 | (uint32_t)(rand() % 0x7f); /* not S.1111.111, the NaN */
  case ELEM_E5M2: return (uint32_t)sign << 7 | (uint32_t)(rand() % 31) << 2 | (uint32_t)(rand() % 4); /* finite */
  default: return (uint32_t)(rand() % 256);
  }
}

/* A multiple of 2^-10 below 2^9 in magnitude: exact in any sum here. */
static float exact_accumulator(void) { return (float)ldexp(rand() % (1 << 19) - (1 << 18), -10); }

static float random_accumulator(void) { return (float)((rand() % 20001 - 10000) / 997.0); }

/* ---- the tables ---------------------------------------------------------------------- */

typedef FragmentSlot (*SlotOf)(int kind, int row, int col);

static FragmentSlot c_slot(int kind, int row, int col) { return (void)kind, mma_c_slot(row, col); }
static FragmentSlot d_slot(int kind, int row, int col) { return (void)kind, wgmma_d_slot(row, col); }

/* Each (lane, register, part) holds exactly one element of the matrix. */
static int is_bijection(SlotOf slot, int kind, int rows, int cols, int lanes, int regs, int parts) {
  static unsigned char seen[128 * 128 * 4];
  memset(seen, 0, sizeof seen);
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++) {
      FragmentSlot s = slot(kind, r, c);
      if (s.lane < 0 || s.lane >= lanes || s.reg < 0 || s.reg >= regs || s.part < 0 || s.part >= parts) return 0;
      if (seen[(s.lane * regs + s.reg) * parts + s.part]++) return 0;
    }
  return rows * cols == lanes * regs * parts;
}

static int slot_is(FragmentSlot s, int lane, int reg, int part) {
  return s.lane == lane && s.reg == reg && s.part == part;
}

static void test_tables(void) {
  CHECK(is_bijection(mma_a_slot, KIND_F16, 16, 16, 32, 4, 2));
  CHECK(is_bijection(mma_a_slot, KIND_TF32, 16, 8, 32, 4, 1));
  CHECK(is_bijection(mma_a_slot, KIND_S8, 16, 32, 32, 4, 4));
  CHECK(is_bijection(mma_b_slot, KIND_F16, 16, 8, 32, 2, 2));
  CHECK(is_bijection(mma_b_slot, KIND_TF32, 8, 8, 32, 2, 1));
  CHECK(is_bijection(mma_b_slot, KIND_S8, 32, 8, 32, 2, 4));
  CHECK(is_bijection(c_slot, 0, 16, 8, 32, 4, 1));
  CHECK(is_bijection(d_slot, 0, 64, 256, 128, 128, 1));
  CHECK(is_bijection(wgmma_a_slot, KIND_F16, 64, 16, 128, 4, 2));
  CHECK(is_bijection(wgmma_a_slot, KIND_TF32, 64, 8, 128, 4, 1));
  /* entries read off the ISA's figures */
  CHECK(slot_is(mma_a_slot(KIND_F16, 0, 1), 0, 0, 1));   /* Figure 79: T0 {a0, a1} row 0 */
  CHECK(slot_is(mma_a_slot(KIND_F16, 8, 0), 0, 1, 0));   /* T0 a2: row 8 */
  CHECK(slot_is(mma_a_slot(KIND_F16, 0, 9), 0, 2, 1));   /* T0 a5: row 0, column 9 */
  CHECK(slot_is(mma_a_slot(KIND_F16, 15, 15), 31, 3, 1));
  CHECK(slot_is(mma_a_slot(KIND_F16, 2, 4), 10, 0, 0));  /* T10 a0: row 2, column 4 */
  CHECK(slot_is(mma_b_slot(KIND_F16, 9, 3), 12, 1, 1));  /* Figure 81: T12 b3: row 9, column 3 */
  CHECK(slot_is(mma_a_slot(KIND_TF32, 8, 5), 1, 3, 0));  /* Figure 72: T1 a3: row 8, column 5 */
  CHECK(slot_is(mma_b_slot(KIND_TF32, 6, 7), 30, 1, 0)); /* Figure 75: T30 b1: row 6, column 7 */
  CHECK(slot_is(mma_a_slot(KIND_S8, 9, 22), 5, 3, 2));   /* Figure 88: T5 a14: row 9, column 22 */
  CHECK(slot_is(mma_b_slot(KIND_S8, 19, 2), 8, 1, 3));   /* Figure 91: T8 b7: row 19, column 2 */
  CHECK(slot_is(mma_c_slot(9, 7), 7, 3, 0));             /* Figure 83: T7 c3: row 9, column 7 */
  CHECK(slot_is(wgmma_d_slot(45, 9), 64 + 20, 7, 0));    /* Figure 149: warp 2, T20 d7: row 32 + 13, column 9 */
}

/* ---- mma.sync ------------------------------------------------------------------------- */

static int mma_k(int kind) { return kind == KIND_TF32 ? 8 : kind >= KIND_S8 ? 32 : 16; }

/* D = A B + C for each of `sets` products, as the hardware's documented
 * order: products summed in order of k with fmaf from +0, then C added
 * (s8: wrapping 32-bit sums). */
static void mma_reference(int kind, int sets, const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D) {
  int k = mma_k(kind), ka = operand_kind(kind, 0), kb = operand_kind(kind, 1);
  for (int s = 0; s < sets; s++)
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 8; c++) {
        const uint32_t *a = A + s * 16 * k + r * k, *b = B + s * k * 8 + c;
        uint32_t *d = D + s * 128 + r * 8 + c, addend = C[s * 128 + r * 8 + c];
        if (kind == KIND_S8) {
          uint32_t sum = addend;
          for (int j = 0; j < k; j++)
            sum += (uint32_t)((int)element_value(kind, a[j]) * (int)element_value(kind, b[j * 8]));
          *d = sum;
          continue;
        }
        float sum = 0.0f;
        for (int j = 0; j < k; j++)
          sum = fmaf((float)element_value(ka, a[j]), (float)element_value(kb, b[j * 8]), sum);
        *d = bits_of(sum + float_of(addend));
      }
}

/* With exact inputs every order of summation agrees: the plain product. */
static void exact_product(int kind, int sets, const uint32_t *A, const uint32_t *B, const uint32_t *C, uint32_t *D) {
  int k = mma_k(kind), ka = operand_kind(kind, 0), kb = operand_kind(kind, 1);
  for (int s = 0; s < sets; s++)
    for (int r = 0; r < 16; r++)
      for (int c = 0; c < 8; c++) {
        double sum = float_of(C[s * 128 + r * 8 + c]);
        for (int j = 0; j < k; j++)
          sum += element_value(ka, A[s * 16 * k + r * k + j]) * element_value(kb, B[s * k * 8 + j * 8 + c]);
        D[s * 128 + r * 8 + c] = bits_of((float)sum);
      }
}

typedef struct MmaRun {
  int kind, exact, alias, mode;
  char error[1024];
} MmaRun;

/* Runs 3 programs of 3 warps, each warp its own product; 1 when D is right. */
static int run_mma(MmaRun *m) {
  enum { GRID = 3, WARPS = 3, SETS = GRID * WARPS };
  int kind = m->kind, k = mma_k(kind);
  uint32_t *A = malloc(4u * SETS * 16 * k), *B = malloc(4u * SETS * k * 8), *C = malloc(4u * SETS * 128);
  uint32_t *D = malloc(4u * SETS * 128), *want = malloc(4u * SETS * 128);
  int ka = operand_kind(kind, 0), kb = operand_kind(kind, 1);
  for (int i = 0; i < SETS * 16 * k; i++) A[i] = m->exact ? exact_element(ka) : random_element(ka);
  for (int i = 0; i < SETS * k * 8; i++) B[i] = m->exact ? exact_element(kb) : random_element(kb);
  for (int i = 0; i < SETS * 128; i++) {
    if (kind == KIND_S8) C[i] = (uint32_t)rand() * 2654435761u; /* any 32 bits: the sums wrap */
    else C[i] = bits_of(m->exact ? exact_accumulator() : random_accumulator());
    D[i] = 0xa5a5a5a5u;
  }
  if (m->exact && kind != KIND_S8) exact_product(kind, SETS, A, B, C, want);
  else mma_reference(kind, SETS, A, B, C, want);
  int32_t kind_param = kind, k_param = k, warps = WARPS, alias = m->alias, mode = m->mode;
  void *params[] = {&kind_param, &A, &B, &C, &D, &k_param, &warps, &alias, &mode};
  SimBuffer buffers[] = {{"a", A, 4u * SETS * 16 * k}, {"b", B, 4u * SETS * k * 8}, {"c", C, 4u * SETS * 128},
                         {"d", D, 4u * SETS * 128}};
  SimLaunch L = hand_launch("mma", GRID, WARPS, params, buffers, 4, 1024);
  int ok = sim_run(&L) == 0;
  snprintf(m->error, sizeof m->error, "%s", L.error);
  int same = ok && memcmp(D, want, 4u * SETS * 128) == 0;
  if (ok && !same)
    for (int i = 0; i < SETS * 128; i++)
      if (D[i] != want[i]) {
        fprintf(stderr, "mma kind %d: set %d, D[%d][%d] is 0x%08x, want 0x%08x\n", kind, i / 128, i % 128 / 8, i % 8,
                D[i], want[i]);
        break;
      }
  free(A), free(B), free(C), free(D), free(want);
  return same;
}

/* Exact inputs (tf32's with junk in the 13 bits the hardware drops: kept,
 * they would change the sums), inputs that round (the documented order),
 * and C and D in the same registers. */
static void test_mma(void) {
  for (int kind = KIND_F16; kind <= KIND_FP8 + 3; kind++) {
    MmaRun exact = {.kind = kind, .exact = 1}, ordered = {.kind = kind}, aliased = {.kind = kind, .alias = 1};
    CHECK(run_mma(&exact));
    CHECK(run_mma(&ordered));
    CHECK(run_mma(&aliased));
  }
  MmaRun bad = {.kind = KIND_BF16, .mode = 1};
  CHECK(!run_mma(&bad));
  CHECK_CONTAINS(bad.error, "kernel 'mma' (program 0, 0, 0), thread 0 (warp 0, lane 0): mma of unknown kind 9");
  bad.mode = 2;
  CHECK(!run_mma(&bad));
  CHECK_CONTAINS(bad.error, "thread 5 (warp 0, lane 5): divergent warp: thread 0 called "
                            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, this thread "
                            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  bad.mode = 3;
  CHECK(!run_mma(&bad));
  CHECK_CONTAINS(bad.error, "thread 31 (warp 0, lane 31): exited while 31 lanes of its warp wait in "
                            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
}

/* ---- ldmatrix ----------------------------------------------------------------------------- */

enum { LD_SLOTS = 64, LD_SHARED = LD_SLOTS * 16 };

typedef struct LdmatrixRun {
  int count, trans, mode, warps;
  int32_t offsets[32];
  uint16_t image[LD_SHARED / 2];
  uint32_t out[64 * 4];
  char error[1024];
} LdmatrixRun;

static int run_ldmatrix(LdmatrixRun *r) {
  int32_t count = r->count, trans = r->trans, bytes = LD_SHARED, mode = r->mode;
  void *offsets = r->offsets, *image = r->image, *out = r->out;
  for (int i = 0; i < 64 * 4; i++) r->out[i] = 0xa5a5a5a5u;
  void *params[] = {&count, &trans, &offsets, &image, &bytes, &out, &mode};
  SimBuffer buffers[] = {{"offsets", r->offsets, sizeof r->offsets}, {"image", r->image, sizeof r->image},
                         {"out", r->out, sizeof r->out}};
  SimLaunch L = hand_launch("ldmatrix", 2, r->warps ? r->warps : 2, params, buffers, 3, LD_SHARED);
  int rc = sim_run(&L);
  snprintf(r->error, sizeof r->error, "%s", L.error);
  return rc;
}

/* Rows of 4 matrices at random 16-byte slots: element (m, row, col) is the
 * u16 at image[slot(m, row) * 8 + col]. */
static void scatter_rows(LdmatrixRun *r, int *slot_of) {
  int order[LD_SLOTS];
  for (int i = 0; i < LD_SLOTS; i++) order[i] = i;
  for (int i = LD_SLOTS - 1; i > 0; i--) {
    int j = rand() % (i + 1), t = order[i];
    order[i] = order[j], order[j] = t;
  }
  for (int i = 0; i < LD_SHARED / 2; i++) r->image[i] = (uint16_t)rand();
  for (int i = 0; i < 32; i++) slot_of[i] = order[i];
}

static uint32_t ld_element(const LdmatrixRun *r, const int *slot_of, int m, int row, int col) {
  return r->image[slot_of[m * 8 + row] * 8 + col];
}

static void test_ldmatrix(void) {
  static LdmatrixRun r;
  for (int count = 1; count <= 4; count *= 2)
    for (int trans = 0; trans < 2; trans++) {
      int slot_of[32], ok = 1;
      memset(&r, 0, sizeof r);
      r.count = count, r.trans = trans;
      scatter_rows(&r, slot_of);
      for (int lane = 0; lane < 32; lane++) r.offsets[lane] = lane < 8 * count ? slot_of[lane] * 16 : -1;
      CHECK(run_ldmatrix(&r) == 0);
      for (int t = 0; t < 64; t++)
        for (int m = 0; m < 4; m++) {
          int lane = t % 32, row = lane / 4, col = 2 * (lane % 4);
          uint32_t want = 0;
          if (m < count && !trans)
            want = ld_element(&r, slot_of, m, row, col) | ld_element(&r, slot_of, m, row, col + 1) << 16;
          if (m < count && trans)
            want = ld_element(&r, slot_of, m, col, row) | ld_element(&r, slot_of, m, col + 1, row) << 16;
          ok &= r.out[t * 4 + m] == want;
        }
      CHECK(ok);
    }
}

/* Four matrices stored one after another, element (m, row, col) = 64 m +
 * 8 row + col: lanes worked out by hand from Figure 104. */
static void test_ldmatrix_by_hand(void) {
  static LdmatrixRun r;
  memset(&r, 0, sizeof r);
  for (int i = 0; i < 256; i++) r.image[i] = (uint16_t)i;
  for (int lane = 0; lane < 32; lane++) r.offsets[lane] = 16 * lane;
  r.count = 4;
  CHECK(run_ldmatrix(&r) == 0);
  CHECK(r.out[0 * 4 + 0] == 0x00010000u);  /* lane 0: row 0, columns 0 and 1 */
  CHECK(r.out[5 * 4 + 0] == 0x000b000au);  /* lane 5: row 1, columns 2, 3: 10, 11 */
  CHECK(r.out[30 * 4 + 2] == 0x00bd00bcu); /* lane 30, matrix 2: row 7, columns 4, 5: 188, 189 */
  CHECK(r.out[(32 + 31) * 4 + 3] == 0x00ff00feu); /* warp 1 the same: lane 31, matrix 3: 254, 255 */
  r.trans = 1;
  CHECK(run_ldmatrix(&r) == 0);
  CHECK(r.out[0 * 4 + 0] == 0x00080000u);  /* .trans lane 0: column 0, rows 0 and 1: 0, 8 */
  CHECK(r.out[5 * 4 + 0] == 0x00190011u);  /* lane 5: column 1, rows 2, 3: 17, 25 */
  CHECK(r.out[30 * 4 + 3] == 0x00ef00e7u); /* lane 30, matrix 3: column 7, rows 4, 5: 231, 239 */
}

static void ldmatrix_fails(int count, int bad_lane, int32_t offset, int mode, int warps, const char *expected) {
  static LdmatrixRun r;
  memset(&r, 0, sizeof r);
  for (int lane = 0; lane < 32; lane++) r.offsets[lane] = 16 * lane;
  if (bad_lane >= 0) r.offsets[bad_lane] = offset;
  r.count = count, r.mode = mode, r.warps = warps;
  CHECK(run_ldmatrix(&r) == -1);
  CHECK_CONTAINS(r.error, expected);
}

static void test_ldmatrix_errors(void) {
  ldmatrix_fails(4, 3, 8, 0, 2, "kernel 'ldmatrix' (program 0, 0, 0), thread 3 (warp 0, lane 3): misaligned ldmatrix "
                                "row address");
  ldmatrix_fails(4, 3, 8, 0, 2, "(shared offset 8): not 16-byte aligned");
  ldmatrix_fails(2, 12, LD_SHARED - 8, 0, 2, "thread 12 (warp 0, lane 12): ldmatrix row address");
  ldmatrix_fails(2, 12, LD_SHARED - 8, 0, 2, "(16 bytes at shared offset 1016) is outside shared memory (1024 bytes)");
  ldmatrix_fails(2, 12, LD_SHARED, 0, 2, "(16 bytes at shared offset 1024) is outside shared memory");
  ldmatrix_fails(2, 12, -48, 0, 2, "(16 bytes at shared offset -48) is outside shared memory");
  ldmatrix_fails(3, -1, 0, 0, 2, "ldmatrix with count 3 and trans 0: count must be 1, 2 or 4");
  ldmatrix_fails(4, -1, 0, 1, 1, "kernel 'ldmatrix' (program 0, 0, 0): deadlock: threads 0-15 wait in "
                                 "ldmatrix.sync.aligned.m8n8.x4.shared.b16, threads 16-31 wait at a barrier");
  /* after the barrier its last arrival, lane 31, runs on first */
  ldmatrix_fails(4, -1, 0, 2, 1, "thread 3 (warp 0, lane 3): divergent warp: thread 31 called "
                                 "ldmatrix.sync.aligned.m8n8.x4.shared.b16, this thread "
                                 "ldmatrix.sync.aligned.m8n8.x2.shared.b16");
  /* lanes past 8 * count give wild addresses (offset -1): not checked */
  static LdmatrixRun r;
  memset(&r, 0, sizeof r);
  for (int lane = 0; lane < 32; lane++) r.offsets[lane] = lane < 8 ? 16 * lane : -1;
  r.count = 1;
  CHECK(run_ldmatrix(&r) == 0);
}

/* ldmatrix's registers are mma's fragments: x4 of a row-major A, x2.trans
 * of a row-major B (k x n). */
static void test_ldmatrix_into_mma(void) {
  uint16_t A[16 * 16], B[16 * 8];
  float C[128], D[128], want[128];
  for (int i = 0; i < 256; i++) A[i] = (uint16_t)exact_element(KIND_F16);
  for (int i = 0; i < 128; i++) B[i] = (uint16_t)exact_element(KIND_F16), C[i] = exact_accumulator(), D[i] = NAN;
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 8; c++) {
      double sum = C[r * 8 + c];
      for (int k = 0; k < 16; k++)
        sum += element_value(KIND_F16, A[r * 16 + k]) * element_value(KIND_F16, B[k * 8 + c]);
      want[r * 8 + c] = (float)sum;
    }
  void *pa = A, *pb = B, *pc = C, *pd = D;
  void *params[] = {&pa, &pb, &pc, &pd};
  SimBuffer buffers[] = {{"a", A, sizeof A}, {"b", B, sizeof B}, {"c", C, sizeof C}, {"d", D, sizeof D}};
  SimLaunch L = hand_launch("ldmatrix_mma", 2, 1, params, buffers, 4, 768);
  CHECK(run(&L) == 0);
  CHECK(memcmp(D, want, sizeof D) == 0);
}

/* ---- cp.async -------------------------------------------------------------------------------- */

static int all_bytes(const unsigned char *p, int n, unsigned char v) {
  for (int i = 0; i < n; i++)
    if (p[i] != v) return 0;
  return 1;
}

static void test_cp_async_groups(void) {
  enum { GRID = 3, THREADS = 64 };
  size_t src_bytes = GRID * THREADS * 64, out_bytes = GRID * THREADS * 128;
  unsigned char *src = malloc(src_bytes), *out = malloc(out_bytes);
  for (size_t i = 0; i < src_bytes; i++) src[i] = (unsigned char)(rand() % 256);
  for (size_t i = 0; i < src_bytes; i++) src[i] = src[i] == 0xa5 ? 0x5a : src[i]; /* data never looks like poison */
  memset(out, 0x33, out_bytes);
  void *params[] = {&src, &out};
  SimBuffer buffers[] = {{"src", src, src_bytes}, {"out", out, out_bytes}};
  SimLaunch L = hand_launch("cp_async_groups", GRID, 2, params, buffers, 2, 64 * THREADS);
  CHECK(run(&L) == 0);
  /* observation i shows block `block[i]`: data (1) or poison (0) */
  static const int block[8] = {0, 0, 1, 1, 2, 2, 3, 3}, data[8] = {0, 1, 0, 1, 0, 1, 0, 1};
  int ok = 1;
  for (int t = 0; t < GRID * THREADS; t++)
    for (int i = 0; i < 8; i++) {
      const unsigned char *seen = out + (size_t)t * 128 + 16 * i, *from = src + (size_t)t * 64 + 16 * block[i];
      ok &= data[i] ? memcmp(seen, from, 16) == 0 : all_bytes(seen, 16, 0xa5);
    }
  CHECK(ok);
  free(src), free(out);
}

static void test_cp_async_fill(void) {
  for (int32_t bytes = 4; bytes <= 16; bytes *= 2) {
    unsigned char src[32 * 16], out[32 * 16];
    for (int i = 0; i < 32 * 16; i++) src[i] = (unsigned char)(rand() % 200 + 1);
    memset(out, 0xa5, sizeof out);
    void *ps = src, *po = out;
    void *params[] = {&ps, &po, &bytes};
    SimBuffer buffers[] = {{"src", src, sizeof src}, {"out", out, sizeof out}};
    SimLaunch L = hand_launch("cp_async_fill", 1, 1, params, buffers, 2, 32 * 16);
    CHECK(run(&L) == 0);
    int ok = 1;
    for (int t = 0; t < 32; t++) {
      int copied = t % (bytes + 1);
      for (int i = 0; i < 16; i++) {
        unsigned char want = i < copied ? src[16 * t + i] : i < bytes ? 0 : 0x11;
        ok &= out[16 * t + i] == want;
      }
    }
    CHECK(ok);
  }
}

static void cp_async_misuse(int32_t mode, const char *expected) {
  unsigned char src[64];
  for (int i = 0; i < 64; i++) src[i] = (unsigned char)(i + 1);
  int32_t shared_bytes = 256;
  void *ps = src;
  void *params[] = {&ps, &mode, &shared_bytes};
  SimBuffer buffers[] = {{"src", src, sizeof src}};
  SimLaunch L = hand_launch("cp_async_misuse", 2, 1, params, buffers, 1, (size_t)shared_bytes);
  CHECK(sim_run(&L) == (expected ? -1 : 0));
  if (expected) CHECK_CONTAINS(L.error, expected);
  if (expected) CHECK_CONTAINS(L.error, "kernel 'cp_async_misuse' (program 0, 0, 0), thread 6 (warp 0, lane 6): ");
  if (!expected && L.error[0]) fprintf(stderr, "%s\n", L.error);
}

static void test_cp_async_errors(void) {
  cp_async_misuse(0, NULL);
  cp_async_misuse(1, "out-of-bounds cp.async source of 16 bytes at");
  cp_async_misuse(1, "runs 8 bytes past the end of buffer 'src' (64 bytes)");
  cp_async_misuse(2, "misaligned cp.async source of 16 bytes at");
  cp_async_misuse(2, "(byte 8 of buffer 'src')");
  cp_async_misuse(3, "misaligned cp.async destination");
  cp_async_misuse(3, "(shared offset 68): not 16-byte aligned");
  cp_async_misuse(4, "cp.async destination");
  cp_async_misuse(4, "(16 bytes at shared offset 248) is outside shared memory (256 bytes)");
  cp_async_misuse(5, "cp.async of 2 bytes: cp-size must be 4, 8 or 16");
  cp_async_misuse(6, "cp.async with src-size 17: it must be 0..16 (the cp-size)");
  cp_async_misuse(7, "exited with 1 cp.async copies not complete (0 of them in no group)");
  cp_async_misuse(8, "exited with 1 cp.async copies not complete (1 of them in no group)");
  cp_async_misuse(9, "cp.async.wait_group -1: N must not be negative");
  cp_async_misuse(10, "the destination of a cp.async of this thread (16 bytes at shared offset 64) was written while "
                      "the copy was in flight");
  cp_async_misuse(11, NULL);
  cp_async_misuse(12, NULL);
}

/* ---- wgmma: an encoder of shared-memory layouts ---------------------------------------------------- */

/* An operand in shared memory, as the ISA's swizzle atoms (9.7.15.5.1.2,
 * Table 38) build it: atoms of 8 rows of W bytes (no swizzle: of 16
 * bytes); rows run along the strided dimension (MN for K-major, K for
 * MN-major), bytes along the contiguous one (K, resp. MN).  Atoms follow
 * each other `strided` bytes apart along the strided dimension and
 * `contiguous` bytes apart along the contiguous one. */
typedef struct Layout {
  int mn_major;
  int swizzle;        /* 0, 32, 64 or 128 */
  size_t strided, contiguous;
  size_t offset;      /* the first atom, bytes into shared memory */
  int base_offset;    /* the descriptor's base offset */
} Layout;

/* Where element (mn, k) goes: inside its atom, row r at r W bytes, and the
 * 16-byte chunk c of the row at chunk c ^ phase(r), where phase(r) =
 * (r / (128 / W)) % (W / 16) -- Triton's swizzled shared layout with 16-byte
 * vectors, perPhase 128 / W and maxPhase W / 16. */
static size_t encode_position(const Layout *L, size_t e, size_t mn, size_t k) {
  size_t w = L->swizzle ? (size_t)L->swizzle : 16;
  size_t strided = L->mn_major ? k : mn, contiguous = L->mn_major ? mn * e : k * e;
  size_t r = strided % 8, chunk = contiguous % w / 16, phase = L->swizzle ? r / (128 / w) % (w / 16) : 0;
  return L->offset + strided / 8 * L->strided + contiguous / w * L->contiguous + r * w + (chunk ^ phase) * 16 +
         contiguous % 16;
}

/* The descriptor without its start address.  LBO and SBO as 9.7.15.5.1.2.1
 * defines them on the matrix of 128-bit elements, rows MN, columns K:
 *   K-major:  SBO from the first 8 rows to the next 8 (strided atoms); LBO,
 *             no swizzle: from the first column to the second of the 8x2
 *             tile (contiguous atoms); swizzled: not used, 1
 *   MN-major: LBO, interleave: from the first 8 columns to the next 8
 *             (strided atoms); swizzled: from the first W/16 rows to the
 *             next (contiguous atoms); SBO, interleave: from the first row
 *             to the next (contiguous); swizzled: from the first 8 columns
 *             to the next 8 (strided). */
static uint64_t descriptor_of(const Layout *L) {
  size_t lbo, sbo;
  if (!L->mn_major) sbo = L->strided, lbo = L->swizzle ? 16 : L->contiguous;
  else if (!L->swizzle) lbo = L->strided, sbo = L->contiguous;
  else lbo = L->contiguous, sbo = L->strided;
  uint64_t mode = L->swizzle == 128 ? 1 : L->swizzle == 64 ? 2 : L->swizzle == 32 ? 3 : 0;
  return (uint64_t)(lbo >> 4) << 16 | (uint64_t)(sbo >> 4) << 32 | (uint64_t)L->base_offset << 49 | mode << 62;
}

/* Strides for an operand of `mn` rows by `k_bytes` of K: the atoms packed
 * along the strided dimension first (variant odd) or the contiguous one,
 * with a gap of one atom after each run (variant 0, 1) or none (2, 3: for
 * K-major swizzled operands, Triton's NVMMA shared layout with SBO 8 W and
 * LBO W times the rows). */
static void choose_strides(Layout *L, size_t mn, size_t k_bytes, size_t e, int variant) {
  size_t w = L->swizzle ? (size_t)L->swizzle : 16, atom = 8 * w, gap = variant < 2;
  size_t strided_extent = L->mn_major ? k_bytes / e : mn, contiguous_extent = L->mn_major ? mn * e : k_bytes;
  size_t n_strided = (strided_extent + 7) / 8, n_contiguous = (contiguous_extent + w - 1) / w;
  if (variant % 2) L->strided = atom, L->contiguous = (n_strided + gap) * atom;
  else L->contiguous = atom, L->strided = (n_contiguous + gap) * atom;
}

typedef struct WgmmaCase {
  int kind, n, k_steps, a_in_registers, scale_d, num_warps, mode;
  Layout a, b;
  int variant;
  size_t shared_bytes;       /* 0: the image's size */
  uint64_t a_desc_extra, b_desc_extra; /* or'ed into the descriptors */
  int trans_a, trans_b;      /* 0: from the layouts' majors; others sent as given, for error tests */
  int quiet;                 /* a mismatch is expected: do not print it */
  char error[1024];
} WgmmaCase;

static size_t element_bytes(int kind) { return kind == KIND_TF32 ? 4 : 2; }
static int wgmma_k(int kind) { return kind == KIND_TF32 ? 8 : 16; }

/* Lays out A (64 x k_total) and B (k_total x n) as the case says into an
 * image of shared memory (unused bytes 0xFF: NaN in every type), and fills
 * the descriptors and step starts. */
static unsigned char *build_image(WgmmaCase *c, WgmmaParams *p, const uint32_t *A, const uint32_t *B, size_t *bytes) {
  size_t e = element_bytes(c->kind), k = (size_t)wgmma_k(c->kind), k_total = k * (size_t)c->k_steps, end = 0;
  unsigned char *image = NULL;
  if (!c->a_in_registers) choose_strides(&c->a, 64, k_total * e, e, c->variant);
  choose_strides(&c->b, (size_t)c->n, k_total * e, e, c->variant ^ 1);
  for (int pass = 0; pass < 2; pass++) {
    for (size_t m = 0; !c->a_in_registers && m < 64; m++)
      for (size_t j = 0; j < k_total; j++) {
        size_t at = encode_position(&c->a, e, m, j);
        if (pass) memcpy(image + at, &A[m * k_total + j], e);
        else if (at + e > end) end = at + e;
      }
    if (!pass) c->b.offset += (end + 1023) / 1024 * 1024 + 2048, end = 0;
    for (size_t n = 0; n < (size_t)c->n; n++)
      for (size_t j = 0; j < k_total; j++) {
        size_t at = encode_position(&c->b, e, n, j);
        if (pass) memcpy(image + at, &B[j * (size_t)c->n + n], e);
        else if (at + e > end) end = at + e;
      }
    if (!pass) {
      *bytes = (end + 15) / 16 * 16;
      image = malloc(*bytes);
      memset(image, 0xff, *bytes);
    }
  }
  for (int s = 0; s < c->k_steps; s++) {
    p->a_start[s] = c->a_in_registers ? 0 : (int64_t)encode_position(&c->a, e, 0, k * (size_t)s);
    p->b_start[s] = (int64_t)encode_position(&c->b, e, 0, k * (size_t)s);
  }
  p->a_desc = (c->a_in_registers ? 0 : descriptor_of(&c->a)) | c->a_desc_extra;
  p->b_desc = descriptor_of(&c->b) | c->b_desc_extra;
  p->image = image;
  return image;
}

/* Runs the case on random exact inputs; 1 when every warpgroup's D equals
 * the plain product. */
static int run_wgmma(WgmmaCase *c) {
  int kind = c->kind, n = c->n, k_total = wgmma_k(kind) * c->k_steps;
  int groups = ((c->num_warps ? c->num_warps : 4) + 3) / 4;
  uint32_t *A = malloc(4u * 64 * (size_t)k_total), *B = malloc(4u * (size_t)k_total * (size_t)n);
  float *acc = malloc(4u * (size_t)groups * 64 * (size_t)n), *out = malloc(4u * (size_t)groups * 64 * (size_t)n);
  for (int i = 0; i < 64 * k_total; i++) A[i] = exact_element(kind);
  for (int i = 0; i < k_total * n; i++) B[i] = exact_element(kind);
  for (int i = 0; i < groups * 64 * n; i++) acc[i] = exact_accumulator(), out[i] = float_of(0xa5a5a5a5u);
  WgmmaParams p = {.kind = kind, .n = n, .k_steps = c->k_steps, .a_in_registers = c->a_in_registers,
                   .trans_a = c->trans_a ? c->trans_a : c->a.mn_major,
                   .trans_b = c->trans_b ? c->trans_b : c->b.mn_major,
                   .scale_d = c->scale_d, .mode = c->mode, .a_bits = A, .acc_in = acc, .out = out};
  size_t image_bytes = 0;
  unsigned char *image = build_image(c, &p, A, B, &image_bytes);
  size_t shared = c->shared_bytes ? c->shared_bytes : (image_bytes + 1023) / 1024 * 1024;
  p.image_bytes = (int64_t)(image_bytes < shared ? image_bytes : shared / 16 * 16);
  void *params[] = {&p};
  SimBuffer buffers[] = {{"image", image, image_bytes}, {"a_bits", A, 4u * 64 * (size_t)k_total},
                         {"acc_in", acc, 4u * (size_t)groups * 64 * (size_t)n},
                         {"out", out, 4u * (size_t)groups * 64 * (size_t)n}};
  SimLaunch L = hand_launch("wgmma", 2, c->num_warps ? c->num_warps : 4, params, buffers, 4, shared);
  int ok = sim_run(&L) == 0, same = ok;
  snprintf(c->error, sizeof c->error, "%s", L.error);
  for (int g = 0; ok && g < groups; g++)
    for (int m = 0; m < 64; m++)
      for (int j = 0; j < n; j++) {
        double sum = c->scale_d ? acc[(g * 64 + m) * n + j] : 0.0;
        for (int q = 0; q < k_total; q++)
          sum += element_value(kind, A[m * k_total + q]) * element_value(kind, B[q * n + j]);
        float got = out[(g * 64 + m) * n + j];
        if (same && !c->quiet && bits_of(got) != bits_of((float)sum))
          fprintf(stderr, "wgmma kind %d n %d: group %d D[%d][%d] = %g, want %g\n", kind, n, g, m, j, got, sum);
        same &= bits_of(got) == bits_of((float)sum);
      }
  free(A), free(B), free(acc), free(out), free(image);
  return same;
}

static void describe(const WgmmaCase *c, char *out, size_t size) {
  snprintf(out, size, "kind %d n %d k_steps %d A %s/%d B %s/%d variant %d warps %d scale_d %d mode %d", c->kind,
           c->n, c->k_steps, c->a_in_registers ? "registers" : c->a.mn_major ? "MN" : "K", c->a.swizzle,
           c->b.mn_major ? "MN" : "K", c->b.swizzle, c->variant, c->num_warps, c->scale_d, c->mode);
}

/* A box of 16 rows at (-3, 5) of a 30 x 18 tensor (row stride 36): the
 * elements inside the tensor get the box's values, the others (left of 0,
 * below row 18, past column 30 in the stride's padding) stay -1. */
/* The box from (c0, c1) written where it lies inside the tensor; one starting below 0 stops the
 * program, as on an H200. */
static void test_tma_store(void) {
  enum { DIM0 = 30, DIM1 = 18, STRIDE = 36 };
  for (int32_t w = 32; w <= 128; w *= 2) {
    float out[DIM1 * STRIDE];
    for (int i = 0; i < DIM1 * STRIDE; i++) out[i] = -1;
    int64_t dim0 = DIM0, dim1 = DIM1, stride = STRIDE;
    int32_t c0 = 3, c1 = 5;
    void *po = out;
    void *params[] = {&po, &dim0, &dim1, &stride, &c0, &c1, &w};
    SimBuffer buffers[] = {{"out", out, sizeof out}};
    SimLaunch L = hand_launch("tma_store_box", 1, 1, params, buffers, 1, 16 * 128);
    CHECK(run(&L) == 0);
    int ok = 1;
    for (int y = 0; y < DIM1; y++)
      for (int x = 0; x < STRIDE; x++) {
        int r = y - c1, j = x - c0, inside = x < DIM0 && r >= 0 && r < 16 && j >= 0 && j < w / 4;
        ok &= out[y * STRIDE + x] == (inside ? (float)(1000 * r + j) : -1.0f);
      }
    CHECK(ok);
    c0 = -3;
    L = hand_launch("tma_store_box", 1, 1, params, buffers, 1, 16 * 128);
    CHECK(sim_run(&L) != 0);
    CHECK_CONTAINS(L.error, "TMA store at coordinates (-3, 5): a bulk store's box must not start below 0");
  }
}

static void test_wgmma_layouts(void) {
  static const int swizzles[4] = {0, 32, 64, 128}, ns[10] = {8, 16, 24, 40, 64, 96, 128, 136, 200, 256};
  int counter = 0, failures = 0;
  for (int kind = KIND_F16; kind <= KIND_TF32; kind++) {
    int majors = kind == KIND_TF32 ? 1 : 2;
    for (int a = -1; a < 4 * majors; a++)
      for (int b = 0; b < 4 * majors; b++, counter++) {
        WgmmaCase c = {.kind = kind, .n = ns[counter % 10], .k_steps = 1 + counter % 4, .variant = counter / 3 % 4,
                       .scale_d = counter % 3 != 0, .num_warps = counter % 5 == 0 ? 8 : 4,
                       .mode = counter % 7 == 0 ? WGMMA_ONE_GROUP : WGMMA_OK};
        c.a_in_registers = a < 0;
        if (a >= 0) c.a.mn_major = a / 4, c.a.swizzle = swizzles[a % 4];
        c.b.mn_major = b / 4, c.b.swizzle = swizzles[b % 4];
        if (!run_wgmma(&c)) {
          char what[256];
          describe(&c, what, sizeof what);
          fprintf(stderr, "wgmma case failed: %s%s%s\n", what, c.error[0] ? ": " : "", c.error);
          failures++;
        }
      }
  }
  CHECK(failures == 0);
  CHECK(counter == 2 * 9 * 8 + 5 * 4);
}

/* Operands whose swizzle pattern does not start on its repeat boundary,
 * told by the base offset ((start >> 7) & 7).  The simulator's reading of
 * the base offset (rows counted from the pattern's start) is not confirmed
 * on hardware: Triton and CUTLASS always align and use 0. */
static void test_wgmma_base_offset(void) {
  WgmmaCase c = {.kind = KIND_F16, .n = 64, .k_steps = 2, .scale_d = 1, .num_warps = 4};
  c.a.swizzle = 128, c.a.offset = 1024 + 384, c.a.base_offset = 3;
  c.b.swizzle = 64, c.b.mn_major = 1, c.b.offset = 256, c.b.base_offset = 2;
  CHECK(run_wgmma(&c));
  c.a.base_offset = 0, c.quiet = 1; /* the rows' phases now come from the address alone: the wrong elements */
  CHECK(!run_wgmma(&c));
  CHECK(c.error[0] == 0);
}

static void wgmma_fails(WgmmaCase c, const char *expected) {
  if (!c.n) c.n = 16;
  if (!c.k_steps) c.k_steps = 1;
  if (!c.kind) c.kind = KIND_F16;
  if (!c.num_warps) c.num_warps = 4;
  CHECK(!run_wgmma(&c));
  CHECK_CONTAINS(c.error, expected);
}

/* The thread that reports is the one that runs first: after the kernel's
 * barrier, its last arrival (the program's last thread); after a
 * rendezvous, its last arrival. */
static void test_wgmma_errors(void) {
  wgmma_fails((WgmmaCase){.num_warps = 2}, "kernel 'wgmma' (program 0, 0, 0), thread 63 (warp 1, lane 31): "
                                           "wgmma.fence.sync.aligned needs a warpgroup of 4 warps, but the program "
                                           "has 2 warps");
  wgmma_fails((WgmmaCase){.num_warps = 6}, "thread 191 (warp 5, lane 31): wgmma.fence.sync.aligned needs a "
                                           "warpgroup of 4 warps, but the program has 6 warps");
  wgmma_fails((WgmmaCase){.mode = WGMMA_NO_FENCE}, "thread 127 (warp 3, lane 31): wgmma.mma_async before any "
                                                   "wgmma.fence in this program");
  wgmma_fails((WgmmaCase){.mode = WGMMA_NO_COMMIT}, "exited with 1 wgmma.mma_async not committed");
  wgmma_fails((WgmmaCase){.mode = WGMMA_NO_WAIT}, "exited with wgmma groups not waited for (wgmma.wait_group)");
  wgmma_fails((WgmmaCase){.mode = WGMMA_SKEWED_DESC}, "wgmma: threads of a warpgroup pass different b-desc");
  wgmma_fails((WgmmaCase){.mode = WGMMA_SKEWED_DESC}, "warpgroup thread 77:");
  wgmma_fails((WgmmaCase){.mode = WGMMA_DIVERGENT_N, .n = 24},
              "thread 64 (warp 2, lane 0): divergent warpgroup: thread 126 called "
              "wgmma.mma_async.sync.aligned.m64n24k16.f32.f16.f16 (A by descriptor, imm-trans-a 0, imm-trans-b 0), "
              "this thread wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16");
  wgmma_fails((WgmmaCase){.mode = WGMMA_DIVERGENT_FENCE}, "thread 0 (warp 0, lane 0): divergent warpgroup: thread "
                                                          "127 called wgmma.wait_group.sync.aligned 0, this thread "
                                                          "wgmma.fence.sync.aligned");
  wgmma_fails((WgmmaCase){.b_desc_extra = 1ull << 46}, "wgmma: descriptor b-desc 0x");
  wgmma_fails((WgmmaCase){.b_desc_extra = 1ull << 46}, "sets reserved bits 0x0000400000000000");
  /* B's second 8 columns of K lie 1152 bytes on (its atoms: packed along n, then one spare; 5120 bytes in) */
  wgmma_fails((WgmmaCase){.n = 64, .shared_bytes = 7168}, "wgmma operand B (descriptor 0x");
  wgmma_fails((WgmmaCase){.n = 64, .shared_bytes = 7168}, "): element (8, 56) at shared offset 7168 is outside "
                                                          "shared memory (7168 bytes)");
  wgmma_fails((WgmmaCase){.kind = KIND_TF32, .trans_b = 1},
              "wgmma .tf32 with imm-trans-a 0, imm-trans-b 1: only .f16 and .bf16 operands may be MN-major");
  wgmma_fails((WgmmaCase){.a_in_registers = 1, .trans_a = 1},
              "wgmma with A in registers and imm-trans-a 1: that form has no imm-trans-a");
  wgmma_fails((WgmmaCase){.trans_b = 2}, "wgmma with imm-trans-a 0, imm-trans-b 2: each must be 0 or 1");
}

/* n 12 is no wgmma shape; the wgmma kernel cannot ask for it (its n sizes
 * its loops), so a launch with n 12 fails before any loop runs past it. */
static void test_wgmma_bad_n(void) {
  WgmmaCase c = {.kind = KIND_BF16, .n = 12, .k_steps = 1, .num_warps = 4};
  CHECK(!run_wgmma(&c));
  CHECK_CONTAINS(c.error, "wgmma with n 12: n must be 8..256 in steps of 8");
}

/* test_sim_tensor [SEED]: the inputs are random from SEED (default: the time). */
int main(int argc, char **argv) {
  unsigned seed = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)time(NULL);
  srand(seed);
  if (load_kernels("tensor_kernels.c")) return 1;
  test_tables();
  test_mma();
  test_ldmatrix();
  test_ldmatrix_by_hand();
  test_ldmatrix_errors();
  test_ldmatrix_into_mma();
  test_cp_async_groups();
  test_cp_async_fill();
  test_cp_async_errors();
  test_tma_store();
  test_wgmma_layouts();
  test_wgmma_base_offset();
  test_wgmma_errors();
  test_wgmma_bad_n();
  sim_module_close(module);
  if (checks_failed) fprintf(stderr, "seed %u (rerun: test_sim_tensor %u)\n", seed, seed);
  return check_report();
}
