/* The simulator's tensor-core instructions and asynchronous copies (the
 * bottom of tile_sim.h): mma.sync, ldmatrix, cp.async and wgmma, for the
 * code the sm_80 and sm_90a paths generate.  Section numbers are the PTX
 * ISA's (9.0).
 *
 * Requires: sim.c's rendezvous (sim_internal.h) for the warp- and
 * warpgroup-synchronous instructions, and its shared memory aligned to
 * 1024 bytes, so that the swizzles, which act on address bits 4-9, see in
 * host addresses the bits a GPU sees in shared addresses.
 * Guarantees: each lane's fragments are read and written exactly as the
 * ISA's fragment tables place matrix elements; every shared-memory and
 * global byte an instruction touches is checked first; a cp.async's
 * destination holds poison (0xA5) from its issue until the
 * cp.async.wait_group of the issuing thread that retires its group, and a
 * program that returns with copies or wgmma groups in flight fails.
 *
 * Numerics: the products of an mma or wgmma are exact in fp32 for every
 * input type here (f16, bf16 and tf32 significands have at most 11 bits;
 * bf16 and tf32 products may still overflow or underflow fp32's range),
 * the hardware's order of accumulation is unspecified, and the simulator
 * fixes one: the K products summed in order of k in fp32 with fmaf,
 * starting from +0, then the accumulator added once.  tf32 operands lose
 * their low 13 bits first, as the hardware truncates them.  s8: exact
 * integer sums, wrapping like .s32 without .satfinite.
 *
 * Asynchrony: an mma or wgmma computes at the call (the ABI passes the
 * accumulators in and out of the call), so reading accumulators before
 * wgmma.wait_group is not caught; a cp.async completes only at the wait. */
#include "sim_internal.h"

#pragma GCC visibility push(default)
#include "tile_sim.h"
#pragma GCC visibility pop

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { WARP = 32, WARPGROUP = 128, POISON = 0xA5, TF32_DROPPED_BITS = 0x1fff, MAX_N = 256, MAX_K = 32 };

/* One warp's mma or ldmatrix while its lanes meet. */
typedef struct WarpExchange {
  uint32_t a[WARP][4], b[WARP][2];       /* mma: each lane's fragments */
  float fa[16][MAX_K], fb[MAX_K][8];     /* mma: the operands they make (f16, bf16, tf32, fp8) */
  int32_t ia[16][MAX_K], ib[MAX_K][8];   /* mma: the same for s8 */
  const unsigned char *rows[WARP];       /* ldmatrix: the row address each lane gives */
  uint32_t loaded[WARP][4];              /* ldmatrix: what each lane receives */
} WarpExchange;

/* One warpgroup's wgmma while its threads meet. */
typedef struct GroupExchange {
  uint64_t a_desc[WARPGROUP], b_desc[WARPGROUP];
  int32_t scale_d[WARPGROUP];
  uint32_t a_regs[WARPGROUP][4];
  float a[64][32], b[32][MAX_N];         /* the operands, decoded (k up to 32, fp8) */
} GroupExchange;

/* A cp.async in flight. */
typedef struct Copy {
  unsigned char *dst;
  const unsigned char *src;
  int bytes, src_bytes;
  long group;                            /* the cp.async-group, -1 until committed */
} Copy;

/* A thread's asynchronous work. */
typedef struct ThreadAsync {
  Copy *copies;                          /* issued and not complete, in issue order */
  int n_copies, cap_copies;
  long committed;                        /* cp.async groups committed */
  int fenced;                            /* a wgmma.fence ran in this program */
  int wgmma_uncommitted;                 /* wgmma.mma_async since the last commit */
  long wgmma_committed;                  /* wgmma groups committed */
  long wgmma_last_busy;                  /* the newest group holding an mma_async, -1: none */
  long wgmma_retired;                    /* groups below this one are complete */
} ThreadAsync;

struct SimTensor {
  int num_warps;
  WarpExchange *warps;
  GroupExchange *groups;
  ThreadAsync *threads;
};

static ThreadAsync *thread_async(Sim *s) { return &sim_tensor_of(s)->threads[sim_thread_id(s)]; }
static WarpExchange *warp_exchange(Sim *s) { return &sim_tensor_of(s)->warps[sim_thread_id(s) / WARP]; }
static GroupExchange *group_exchange(Sim *s) { return &sim_tensor_of(s)->groups[sim_thread_id(s) / WARPGROUP]; }

/* ---- elements ------------------------------------------------------------------ */

static float float_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* The value the tensor core multiplies: tf32 drops the low 13 bits. */
static float tf32_value(uint32_t bits) { return float_bits(bits & ~(uint32_t)TF32_DROPPED_BITS); }

/* Part `part` (0: the lowest bits) of a b32 register of kind F16, BF16 or TF32. */
static float register_float(int kind, uint32_t reg, int part) {
  if (kind == TILE_SIM_MMA_TF32) return tf32_value(reg);
  uint16_t bits = (uint16_t)(reg >> (16 * part));
  return kind == TILE_SIM_MMA_BF16 ? float_bits((uint32_t)bits << 16) : sim_half_to_float(bits);
}

static int32_t register_s8(uint32_t reg, int part) { return (int8_t)(uint8_t)(reg >> (8 * part)); }

static int is_fp8_kind(int kind) { return kind >= TILE_SIM_MMA_FP8 && kind <= TILE_SIM_MMA_FP8 + 3; }
static float fp8_value(uint32_t bits, int e5m2);

/* Part `part` of a b32 register of four fp8 values; `e5m2` picks the format. */
static float register_fp8(uint32_t reg, int part, int e5m2) { return fp8_value((reg >> (8 * part)) & 0xff, e5m2); }

/* A checked pointer to `bytes` of shared memory at p, aligned to `align`. */
static const unsigned char *check_shared(Sim *s, const char *what, const void *p, size_t bytes, size_t align) {
  size_t size;
  unsigned char *base = sim_shared_window(s, &size);
  uintptr_t a = (uintptr_t)p, lo = (uintptr_t)base;
  if (a < lo || a - lo > size || bytes > size - (a - lo))
    sim_fail(s, "%s %p (%zu bytes at shared offset %td) is outside shared memory (%zu bytes)", what, p, bytes,
             (ptrdiff_t)(a - lo), size);
  if (a % align)
    sim_fail(s, "misaligned %s %p (shared offset %zu): not %zu-byte aligned", what, p, (size_t)(a - lo), align);
  return p;
}

/* ---- mma.sync -------------------------------------------------------------------- */

typedef struct MmaKind {
  const char *name;
  int k;                                 /* m16n8k<k> */
  int per_register;                      /* elements in a b32 register */
} MmaKind;

static const MmaKind mma_kinds[] = {
    [TILE_SIM_MMA_F16] = {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 2},
    [TILE_SIM_MMA_BF16] = {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 2},
    [TILE_SIM_MMA_TF32] = {"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8, 1},
    [TILE_SIM_MMA_S8] = {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 32, 4},
    [TILE_SIM_MMA_FP8] = {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 32, 4},
    [TILE_SIM_MMA_FP8 + 1] = {"mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32", 32, 4},
    [TILE_SIM_MMA_FP8 + 2] = {"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32", 32, 4},
    [TILE_SIM_MMA_FP8 + 3] = {"mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32", 32, 4},
};

/* Row and column of element a<i> of a lane's A fragment (elements numbered
 * from the low bits of the first register): 9.7.14.5.7 (m16n8k8 .tf32),
 * 9.7.14.5.8 (m16n8k16 .f16/.bf16), 9.7.14.5.10 (m16n8k32 .s8, and
 * .e4m3/.e5m2 alike).  wgmma's register A (9.7.15.5.1.1) is this per warp,
 * 16 rows lower per warp. */
static void a_position(int kind, int lane, int i, int *row, int *col) {
  int group = lane >> 2, thread = lane & 3;
  if (is_fp8_kind(kind)) kind = TILE_SIM_MMA_S8;
  switch (kind) {
  case TILE_SIM_MMA_TF32:
    *row = group + (i & 1) * 8;
    *col = thread + (i >= 2) * 4;
    return;
  case TILE_SIM_MMA_S8:
    *row = group + ((i >= 4 && i < 8) || i >= 12) * 8;
    *col = thread * 4 + (i & 3) + (i >= 8) * 16;
    return;
  default:
    *row = group + ((i >= 2 && i < 4) || i >= 6) * 8;
    *col = thread * 2 + (i & 1) + (i >= 4) * 8;
  }
}

/* Row (k) and column (n) of element b<i> of a lane's B fragment (same sections). */
static void b_position(int kind, int lane, int i, int *row, int *col) {
  int group = lane >> 2, thread = lane & 3;
  *col = group;
  if (kind == TILE_SIM_MMA_TF32) *row = thread + i * 4;
  else if (kind == TILE_SIM_MMA_S8 || is_fp8_kind(kind)) *row = thread * 4 + (i & 3) + (i >= 4) * 16;
  else *row = thread * 2 + (i & 1) + (i >= 2) * 8;
}

/* Row and column of c<i> / d<i>, the same for every kind here (and, per
 * 8-column block, for wgmma's accumulators). */
static void c_position(int lane, int i, int *row, int *col) {
  *row = (lane >> 2) + (i >= 2) * 8;
  *col = (lane & 3) * 2 + (i & 1);
}

/* The warp's A (16 x k) and B (k x 8) from its lanes' fragments. */
static void gather_mma_operands(WarpExchange *x, int kind) {
  int per = mma_kinds[kind].per_register, row, col;
  for (int lane = 0; lane < WARP; lane++) {
    for (int i = 0; i < 4 * per; i++) {
      a_position(kind, lane, i, &row, &col);
      if (kind == TILE_SIM_MMA_S8) x->ia[row][col] = register_s8(x->a[lane][i / per], i % per);
      else if (is_fp8_kind(kind)) x->fa[row][col] = register_fp8(x->a[lane][i / per], i % per, (kind - TILE_SIM_MMA_FP8) & 1);
      else x->fa[row][col] = register_float(kind, x->a[lane][i / per], i % per);
    }
    for (int i = 0; i < 2 * per; i++) {
      b_position(kind, lane, i, &row, &col);
      if (kind == TILE_SIM_MMA_S8) x->ib[row][col] = register_s8(x->b[lane][i / per], i % per);
      else if (is_fp8_kind(kind)) x->fb[row][col] = register_fp8(x->b[lane][i / per], i % per, (kind - TILE_SIM_MMA_FP8) >> 1);
      else x->fb[row][col] = register_float(kind, x->b[lane][i / per], i % per);
    }
  }
}

/* The lane's four results; c is read before d is written (they may alias). */
static void mma_lane_result(const WarpExchange *x, int kind, int lane, float *d, const float *c) {
  int k = mma_kinds[kind].k, row, col;
  float out[4];
  for (int i = 0; i < 4; i++) {
    c_position(lane, i, &row, &col);
    if (kind == TILE_SIM_MMA_S8) {
      uint32_t sum, addend;
      memcpy(&addend, &c[i], 4);
      sum = 0;
      for (int j = 0; j < k; j++) sum += (uint32_t)(x->ia[row][j] * x->ib[j][col]);
      sum += addend;
      memcpy(&out[i], &sum, 4);
    } else {
      float sum = 0.0f;
      for (int j = 0; j < k; j++) sum = fmaf(x->fa[row][j], x->fb[j][col], sum);
      out[i] = sum + c[i];
    }
  }
  memcpy(d, out, sizeof out);
}

void tile_sim_mma(int32_t kind, float *d, const uint32_t *a, const uint32_t *b, const float *c) {
  Sim *s = sim_active();
  if (!s) return;
  if (kind < TILE_SIM_MMA_F16 || kind > TILE_SIM_MMA_FP8 + 3) sim_fail(s, "mma of unknown kind %d", kind);
  WarpExchange *x = warp_exchange(s);
  int lane = sim_thread_id(s) % WARP;
  memcpy(x->a[lane], a, sizeof x->a[lane]);
  memcpy(x->b[lane], b, sizeof x->b[lane]);
  if (sim_rendezvous(s, WARP, mma_kinds[kind].name)) gather_mma_operands(x, kind);
  mma_lane_result(x, kind, lane, d, c);
  sim_rendezvous(s, WARP, mma_kinds[kind].name); /* before the next instruction reuses x */
}

/* ---- ldmatrix -------------------------------------------------------------------- */

static const char *const ldmatrix_names[3][2] = {
    {"ldmatrix.sync.aligned.m8n8.x1.shared.b16", "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16"},
    {"ldmatrix.sync.aligned.m8n8.x2.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"},
    {"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"},
};

static uint32_t row_element(const unsigned char *row, int i) {
  uint16_t v;
  memcpy(&v, row + 2 * i, 2);
  return v;
}

/* 9.7.14.5.15: lanes 8m..8m+7 give the rows of matrix m; lane l receives in
 * register m the elements 2(l%4) and 2(l%4)+1 of row l/4 (.trans: of column
 * l/4), the first in the low half. */
static void load_matrices(WarpExchange *x, int count, int trans) {
  for (int m = 0; m < count; m++)
    for (int lane = 0; lane < WARP; lane++) {
      const unsigned char *const *rows = x->rows + 8 * m;
      int r = lane / 4, c = 2 * (lane % 4);
      uint32_t lo = trans ? row_element(rows[c], r) : row_element(rows[r], c);
      uint32_t hi = trans ? row_element(rows[c + 1], r) : row_element(rows[r], c + 1);
      x->loaded[lane][m] = lo | hi << 16;
    }
}

void tile_sim_ldmatrix(uint32_t *out, int32_t count, int32_t trans, const void *shared_row) {
  Sim *s = sim_active();
  if (!s) return;
  if ((count != 1 && count != 2 && count != 4) || (trans != 0 && trans != 1))
    sim_fail(s, "ldmatrix with count %d and trans %d: count must be 1, 2 or 4, trans 0 or 1", count, trans);
  const char *name = ldmatrix_names[count / 2][trans];
  int lane = sim_thread_id(s) % WARP;
  WarpExchange *x = warp_exchange(s);
  if (lane < 8 * count) check_shared(s, "ldmatrix row address", shared_row, 16, 16);
  x->rows[lane] = shared_row;
  if (sim_rendezvous(s, WARP, name)) load_matrices(x, count, trans);
  memcpy(out, x->loaded[lane], 4 * (size_t)count);
  sim_rendezvous(s, WARP, name);
}

/* ---- cp.async ---------------------------------------------------------------------- */

static Copy *push_copy(Sim *s, ThreadAsync *t) {
  if (t->n_copies == t->cap_copies) {
    int cap = t->cap_copies ? 2 * t->cap_copies : 16;
    Copy *grown = realloc(t->copies, sizeof *grown * (size_t)cap);
    if (!grown) sim_fail(s, "out of memory for %d cp.async copies in flight", t->n_copies + 1);
    t->copies = grown;
    t->cap_copies = cap;
  }
  return &t->copies[t->n_copies++];
}

void tile_sim_cp_async(void *shared_dst, const void *global_src, int32_t bytes, int32_t src_bytes) {
  Sim *s = sim_active();
  if (!s) return;
  if (bytes != 4 && bytes != 8 && bytes != 16) sim_fail(s, "cp.async of %d bytes: cp-size must be 4, 8 or 16", bytes);
  if (src_bytes < 0 || src_bytes > bytes)
    sim_fail(s, "cp.async with src-size %d: it must be 0..%d (the cp-size)", src_bytes, bytes);
  check_shared(s, "cp.async destination", shared_dst, (size_t)bytes, (size_t)bytes);
  if (src_bytes > 0) sim_check_global_span(s, "cp.async source", global_src, (size_t)src_bytes, (size_t)bytes);
  ThreadAsync *t = thread_async(s);
  *push_copy(s, t) = (Copy){shared_dst, global_src, bytes, src_bytes, -1};
  memset(shared_dst, POISON, (size_t)bytes);
}

void tile_sim_cp_async_commit(void) {
  Sim *s = sim_active();
  if (!s) return;
  ThreadAsync *t = thread_async(s);
  for (int i = 0; i < t->n_copies; i++)
    if (t->copies[i].group < 0) t->copies[i].group = t->committed;
  t->committed++; /* an empty group counts as one, trivially complete */
}

static int all_poison(const unsigned char *p, int bytes) {
  for (int i = 0; i < bytes; i++)
    if (p[i] != POISON) return 0;
  return 1;
}

/* Does the copy.  Its destination must still hold the poison of its issue,
 * or what the copy writes (a duplicate copy of the same data is benign);
 * anything else was written while the copy was in flight, a race. */
static void complete_copy(Sim *s, const Copy *c) {
  unsigned char data[16] = {0};
  if (c->src_bytes) memcpy(data, c->src, (size_t)c->src_bytes);
  if (!all_poison(c->dst, c->bytes) && memcmp(c->dst, data, (size_t)c->bytes)) {
    size_t size;
    unsigned char *base = sim_shared_window(s, &size);
    sim_fail(s, "the destination of a cp.async of this thread (%d bytes at shared offset %zu) was written while the "
                "copy was in flight",
             c->bytes, (size_t)(c->dst - base));
  }
  memcpy(c->dst, data, (size_t)c->bytes);
}

void tile_sim_cp_async_wait(int32_t pending) {
  Sim *s = sim_active();
  if (!s) return;
  if (pending < 0) sim_fail(s, "cp.async.wait_group %d: N must not be negative", pending);
  ThreadAsync *t = thread_async(s);
  long complete_below = t->committed - pending;
  int kept = 0;
  for (int i = 0; i < t->n_copies; i++) {
    const Copy *c = &t->copies[i];
    if (c->group >= 0 && c->group < complete_below) complete_copy(s, c);
    else t->copies[kept++] = *c;
  }
  t->n_copies = kept;
}

/* ---- wgmma: the shared-memory matrix descriptor --------------------------------------- */

typedef struct MatrixDescriptor {
  uintptr_t start;                       /* host address of the matrix start */
  size_t lbo, sbo;                       /* leading and stride dimension byte offsets */
  unsigned base_offset;                  /* the swizzle pattern's row phase at its start */
  unsigned swizzle;                      /* bytes a swizzled row spans: 0 (none), 32, 64 or 128 */
} MatrixDescriptor;

/* Bits 14-15, 30-31, 46-48 and 52-61 of a descriptor are reserved. */
static const uint64_t descriptor_reserved = 3ull << 14 | 3ull << 30 | 7ull << 46 | 0x3ffull << 52;

/* 9.7.15.5.1.2.2: bits 0-13 start address, 16-29 leading and 32-45 stride
 * dimension byte offsets, each as (x & 0x3FFFF) >> 4; 49-51 base offset;
 * 62-63 swizzle.  The start address is a shared address: the byte of this
 * program's shared memory whose address has those bits 4-17. */
static MatrixDescriptor decode_descriptor(const unsigned char *shared, uint64_t desc) {
  static const unsigned swizzle_bytes[4] = {0, 128, 64, 32};
  uintptr_t window = (uintptr_t)shared, encoded = (uintptr_t)(desc & 0x3fff) << 4;
  MatrixDescriptor d;
  d.start = window + ((encoded - window) & 0x3ffff);
  d.lbo = (size_t)((desc >> 16) & 0x3fff) << 4;
  d.sbo = (size_t)((desc >> 32) & 0x3fff) << 4;
  d.base_offset = (unsigned)(desc >> 49) & 7;
  d.swizzle = swizzle_bytes[desc >> 62];
  return d;
}

/* The address of element (mn, k) of an operand (mn: m of A, n of B), from
 * the canonical layouts of 9.7.15.5.1.2.1.3 in bytes (E bytes an element,
 * W the swizzle's row bytes):
 *   K-major, no swizzle:   8-row, 16-byte core matrices; rows 16 bytes
 *                          apart, the next 8 rows SBO on, the next 16 bytes
 *                          of K LBO on
 *   K-major, swizzled:     rows W bytes apart, the next 8 rows SBO on, K
 *                          contiguous (one instruction's 32 bytes of K fit
 *                          in a row; LBO unused)
 *   MN-major, no swizzle:  8 K-rows of 16 bytes of MN; the next 16 bytes of
 *                          MN SBO on, the next 8 K-rows LBO on
 *   MN-major, swizzled:    K-rows W bytes apart, the next W bytes of MN LBO
 *                          on, the next 8 K-rows SBO on
 * then the swizzle (Swizzle<log2(W/16),4,3>): the 16-byte chunk index, bits
 * 4.., XOR the 128-byte row index, bits 7.., both of the address.  A
 * non-zero base offset says the pattern starts at a row whose bits 7-9 are
 * that value: rows count from there (the simulator's reading of the ISA's
 * formula; Triton and CUTLASS always use 0). */
static uintptr_t element_address(const MatrixDescriptor *d, int mn_major, size_t e, size_t mn, size_t k) {
  size_t w = d->swizzle, offset;
  if (!mn_major && !w) offset = mn / 8 * d->sbo + mn % 8 * 16 + k * e / 16 * d->lbo + k * e % 16;
  else if (!mn_major) offset = mn / 8 * d->sbo + mn % 8 * w + k * e;
  else if (!w) offset = mn * e / 16 * d->sbo + mn * e % 16 + k % 8 * 16 + k / 8 * d->lbo;
  else offset = mn * e / w * d->lbo + mn * e % w + k % 8 * w + k / 8 * d->sbo;
  uintptr_t a = d->start + offset;
  if (w) a ^= (((a >> 7) - d->base_offset) & (w / 16 - 1)) << 4;
  return a;
}

/* ---- wgmma.mma_async ------------------------------------------------------------------- */

typedef struct WgmmaKind {
  const char *a_type, *b_type;
  int k;
  size_t element_bytes;
} WgmmaKind;

static const WgmmaKind wgmma_kinds[] = {
    [TILE_SIM_MMA_F16] = {"f16", "f16", 16, 2},
    [TILE_SIM_MMA_BF16] = {"bf16", "bf16", 16, 2},
    [TILE_SIM_MMA_TF32] = {"tf32", "tf32", 8, 4},
    [TILE_SIM_MMA_FP8] = {"e4m3", "e4m3", 32, 1},
    [TILE_SIM_MMA_FP8 + 1] = {"e5m2", "e4m3", 32, 1},
    [TILE_SIM_MMA_FP8 + 2] = {"e4m3", "e5m2", 32, 1},
    [TILE_SIM_MMA_FP8 + 3] = {"e5m2", "e5m2", 32, 1},
};

/* An fp8 element (PTX ISA, "Alternate Floating Point Data Formats"): e4m3
 * has no infinities and one NaN, S.1111.111; e5m2 is IEEE-like. */
static float fp8_value(uint32_t bits, int e5m2) {
  int man_bits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, exp = (int)(bits & 0x7f) >> man_bits;
  int man = (int)bits & ((1 << man_bits) - 1);
  float v;
  if (!e5m2 && (bits & 0x7f) == 0x7f) return NAN;
  if (e5m2 && exp == 31) v = man ? NAN : INFINITY;
  else v = exp ? ldexpf(1.0f + (float)man / (float)(1 << man_bits), exp - bias)
               : ldexpf((float)man, 1 - bias - man_bits);
  return bits & 0x80 ? -v : v;
}

/* What one wgmma of a warpgroup decodes together. */
typedef struct WgmmaCall {
  int kind, n, trans_a, trans_b, a_in_registers;
} WgmmaCall;

/* One operand of a wgmma in shared memory. */
typedef struct SharedOperand {
  const char *name;                      /* "A" or "B" */
  uint64_t desc;
  MatrixDescriptor d;
  int mn_major;
} SharedOperand;

static SharedOperand shared_operand(Sim *s, const char *name, uint64_t desc, int mn_major) {
  size_t size;
  SharedOperand o = {name, desc, decode_descriptor(sim_shared_window(s, &size), desc), mn_major};
  return o;
}

/* Element (mn, k) of the operand, checked inside shared memory. */
static float shared_element(Sim *s, int kind, const SharedOperand *o, int mn, int k) {
  size_t size, e = wgmma_kinds[kind].element_bytes;
  unsigned char *shared = sim_shared_window(s, &size);
  uintptr_t a = element_address(&o->d, o->mn_major, e, (size_t)mn, (size_t)k);
  if (a < (uintptr_t)shared || a + e > (uintptr_t)shared + size) {
    int row = o->name[0] == 'A' ? mn : k, col = o->name[0] == 'A' ? k : mn;
    sim_fail(s, "wgmma operand %s (descriptor 0x%016llx): element (%d, %d) at shared offset %td is outside shared "
                "memory (%zu bytes)",
             o->name, (unsigned long long)o->desc, row, col, (ptrdiff_t)(a - (uintptr_t)shared), size);
  }
  uint32_t bits = 0;
  memcpy(&bits, (const void *)a, e);
  if (is_fp8_kind(kind)) return fp8_value(bits, ((kind - TILE_SIM_MMA_FP8) >> (o->name[0] == 'B')) & 1);
  return register_float(kind, bits, 0);
}

/* The warpgroup's operands must agree (9.7.15.5.2: "the contents of a
 * matrix descriptor must be same across all the warps"). */
static void check_uniform(Sim *s, const GroupExchange *x, const WgmmaCall *call) {
  for (int i = 1; i < WARPGROUP; i++) {
    const char *what = !call->a_in_registers && x->a_desc[i] != x->a_desc[0] ? "a-desc"
                       : x->b_desc[i] != x->b_desc[0]                        ? "b-desc"
                       : x->scale_d[i] != x->scale_d[0]                      ? "scale-d"
                                                                              : NULL;
    if (what)
      sim_fail(s, "wgmma: threads of a warpgroup pass different %s (warpgroup thread 0: a-desc 0x%llx, b-desc 0x%llx, "
                  "scale-d %d; warpgroup thread %d: 0x%llx, 0x%llx, %d)",
               what, (unsigned long long)x->a_desc[0], (unsigned long long)x->b_desc[0], x->scale_d[0], i,
               (unsigned long long)x->a_desc[i], (unsigned long long)x->b_desc[i], x->scale_d[i]);
  }
  for (int operand = call->a_in_registers; operand < 2; operand++) {
    uint64_t desc = operand ? x->b_desc[0] : x->a_desc[0];
    if (desc & descriptor_reserved)
      sim_fail(s, "wgmma: descriptor %s 0x%016llx sets reserved bits 0x%016llx", operand ? "b-desc" : "a-desc",
               (unsigned long long)desc, (unsigned long long)(desc & descriptor_reserved));
  }
}

/* A (64 x k) from the registers of the warpgroup: warp w holds rows 16w..16w+15
 * as an mma.sync A fragment (9.7.15.5.1.1.1, .1.2); fp8 as m16n8k32's 8-bit one. */
static void gather_register_a(GroupExchange *x, int kind) {
  int fp8 = is_fp8_kind(kind), per = kind == TILE_SIM_MMA_TF32 ? 1 : fp8 ? 4 : 2, row, col;
  for (int t = 0; t < WARPGROUP; t++)
    for (int i = 0; i < 4 * per; i++) {
      uint32_t reg = x->a_regs[t][i / per];
      a_position(fp8 ? TILE_SIM_MMA_S8 : kind, t % WARP, i, &row, &col);
      x->a[16 * (t / WARP) + row][col] = fp8 ? fp8_value(reg >> (8 * (i % per)) & 0xff, (kind - TILE_SIM_MMA_FP8) & 1)
                                             : register_float(kind, reg, i % per);
    }
}

static void gather_wgmma_operands(Sim *s, GroupExchange *x, const WgmmaCall *call) {
  int k = wgmma_kinds[call->kind].k;
  check_uniform(s, x, call);
  SharedOperand a = shared_operand(s, "A", x->a_desc[0], call->trans_a);
  SharedOperand b = shared_operand(s, "B", x->b_desc[0], call->trans_b);
  if (call->a_in_registers) gather_register_a(x, call->kind);
  else
    for (int m = 0; m < 64; m++)
      for (int j = 0; j < k; j++) x->a[m][j] = shared_element(s, call->kind, &a, m, j);
  for (int n = 0; n < call->n; n++)
    for (int j = 0; j < k; j++) x->b[j][n] = shared_element(s, call->kind, &b, n, j);
}

/* The thread's accumulators: d<i> of warp w, lane l is row 16w + l/4 + 8((i/2)%2),
 * column 8(i/4) + 2(l%4) + i%2 (9.7.15.5.1.1.1, Figure 149). */
static void wgmma_thread_result(const GroupExchange *x, const WgmmaCall *call, int t, float *acc) {
  int k = wgmma_kinds[call->kind].k, warp = t / WARP, lane = t % WARP;
  for (int i = 0; i < call->n / 2; i++) {
    int row, col;
    c_position(lane, i % 4, &row, &col);
    row += 16 * warp;
    col += 8 * (i / 4);
    float sum = 0.0f;
    for (int j = 0; j < k; j++) sum = fmaf(x->a[row][j], x->b[j][col], sum);
    acc[i] = x->scale_d[0] ? sum + acc[i] : sum;
  }
}

/* Checks what one thread can see of the instruction; writes its name to op. */
static void check_wgmma_call(Sim *s, const WgmmaCall *call, char *op, size_t size) {
  if (call->kind < TILE_SIM_MMA_F16 || call->kind == TILE_SIM_MMA_S8 || call->kind > TILE_SIM_MMA_FP8 + 3)
    sim_fail(s, "wgmma of kind %d: the simulator has f16, bf16, tf32, e4m3 and e5m2", call->kind);
  if (call->n < 8 || call->n > MAX_N || call->n % 8)
    sim_fail(s, "wgmma with n %d: n must be 8..256 in steps of 8", call->n);
  if ((call->trans_a != 0 && call->trans_a != 1) || (call->trans_b != 0 && call->trans_b != 1))
    sim_fail(s, "wgmma with imm-trans-a %d, imm-trans-b %d: each must be 0 or 1", call->trans_a, call->trans_b);
  if ((call->kind == TILE_SIM_MMA_TF32 || is_fp8_kind(call->kind)) && (call->trans_a || call->trans_b))
    sim_fail(s, "wgmma .%s with imm-trans-a %d, imm-trans-b %d: only .f16 and .bf16 operands may be MN-major",
             wgmma_kinds[call->kind].a_type, call->trans_a, call->trans_b);
  if (call->a_in_registers && call->trans_a)
    sim_fail(s, "wgmma with A in registers and imm-trans-a 1: that form has no imm-trans-a");
  if (!thread_async(s)->fenced)
    sim_fail(s, "wgmma.mma_async before any wgmma.fence in this program (one must precede the first)");
  const WgmmaKind *wk = &wgmma_kinds[call->kind];
  snprintf(op, size, "wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s.%s (A %s, imm-trans-a %d, imm-trans-b %d)",
           call->n, wk->k, wk->a_type, wk->b_type, call->a_in_registers ? "in registers" : "by descriptor", call->trans_a,
           call->trans_b);
}

void tile_sim_wgmma(int32_t kind, int32_t n, float *acc, uint64_t a_desc, const uint32_t *a_regs, uint64_t b_desc,
                    int32_t scale_d, int32_t trans_a, int32_t trans_b) {
  Sim *s = sim_active();
  if (!s) return;
  WgmmaCall call = {kind, n, trans_a, trans_b, a_regs != NULL};
  char op[160];
  check_wgmma_call(s, &call, op, sizeof op);
  GroupExchange *x = group_exchange(s);
  int t = sim_thread_id(s) % WARPGROUP;
  x->a_desc[t] = a_desc;
  x->b_desc[t] = b_desc;
  x->scale_d[t] = scale_d != 0;
  if (a_regs) memcpy(x->a_regs[t], a_regs, sizeof x->a_regs[t]);
  if (sim_rendezvous(s, WARPGROUP, op)) gather_wgmma_operands(s, x, &call);
  wgmma_thread_result(x, &call, t, acc);
  sim_rendezvous(s, WARPGROUP, op);
  thread_async(s)->wgmma_uncommitted++;
}

void tile_sim_wgmma_fence(void) {
  Sim *s = sim_active();
  if (!s) return;
  sim_rendezvous(s, WARPGROUP, "wgmma.fence.sync.aligned");
  thread_async(s)->fenced = 1;
}

void tile_sim_wgmma_commit(void) {
  Sim *s = sim_active();
  if (!s) return;
  sim_rendezvous(s, WARPGROUP, "wgmma.commit_group.sync.aligned");
  ThreadAsync *t = thread_async(s);
  if (t->wgmma_uncommitted) t->wgmma_last_busy = t->wgmma_committed;
  t->wgmma_uncommitted = 0;
  t->wgmma_committed++;
}

void tile_sim_wgmma_wait(int32_t pending) {
  Sim *s = sim_active();
  if (!s) return;
  if (pending < 0) sim_fail(s, "wgmma.wait_group %d: N must not be negative", pending);
  char op[64];
  snprintf(op, sizeof op, "wgmma.wait_group.sync.aligned %d", pending);
  sim_rendezvous(s, WARPGROUP, op);
  ThreadAsync *t = thread_async(s);
  if (t->wgmma_committed - pending > t->wgmma_retired) t->wgmma_retired = t->wgmma_committed - pending;
}

void tile_sim_fence_proxy_async(void) {}

/* ---- the simulator's side ---------------------------------------------------------------- */

SimTensor *sim_tensor_new(int num_warps) {
  SimTensor *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->num_warps = num_warps;
  t->warps = calloc((size_t)num_warps, sizeof *t->warps);
  t->groups = calloc((size_t)(num_warps + 3) / 4, sizeof *t->groups);
  t->threads = calloc((size_t)num_warps * WARP, sizeof *t->threads);
  if (t->warps && t->groups && t->threads) return t;
  sim_tensor_free(t);
  return NULL;
}

void sim_tensor_start(SimTensor *t) {
  for (int i = 0; i < t->num_warps * WARP; i++) {
    ThreadAsync *a = &t->threads[i];
    Copy *copies = a->copies;
    int cap = a->cap_copies;
    *a = (ThreadAsync){.copies = copies, .cap_copies = cap, .wgmma_last_busy = -1};
  }
}

void sim_tensor_thread_exit(Sim *s, SimTensor *t, int tid) {
  ThreadAsync *a = &t->threads[tid];
  if (a->n_copies) {
    int uncommitted = 0;
    for (int i = 0; i < a->n_copies; i++) uncommitted += a->copies[i].group < 0;
    sim_fail(s, "exited with %d cp.async copies not complete (%d of them in no group): a cp.async.wait_group must "
                "retire them",
             a->n_copies, uncommitted);
  }
  if (a->wgmma_uncommitted) sim_fail(s, "exited with %d wgmma.mma_async not committed", a->wgmma_uncommitted);
  if (a->wgmma_last_busy >= a->wgmma_retired)
    sim_fail(s, "exited with wgmma groups not waited for (wgmma.wait_group)");
}

void sim_tensor_free(SimTensor *t) {
  if (!t) return;
  if (t->threads)
    for (int i = 0; i < t->num_warps * WARP; i++) free(t->threads[i].copies);
  free(t->warps);
  free(t->groups);
  free(t->threads);
  free(t);
}

/* ---- TMA stores ------------------------------------------------------------------ */

/* Where the hardware's swizzle puts byte `offset` of a box: the 16-byte
 * chunk XORed with the row of 128 bytes, modulo the swizzle's chunks. */
static size_t swizzled(size_t offset, int swizzle) {
  size_t chunks = swizzle ? (size_t)swizzle / 16 - 1 : 0;
  return offset ^ (((offset >> 7) & chunks) << 4);
}

void tile_sim_tma_store(const void *shared_src, void *global_base, int64_t dim0, int64_t dim1, int64_t stride,
                        int32_t c0, int32_t c1, int32_t box0, int32_t box1, int32_t swizzle, int32_t elem_bytes) {
  Sim *s = sim_active();
  if (!s) return;
  if (swizzle && swizzle != 32 && swizzle != 64 && swizzle != 128)
    sim_fail(s, "TMA store with a %d-byte swizzle: it must be 0, 32, 64 or 128", swizzle);
  if (swizzle && (int64_t)box0 * elem_bytes != swizzle)
    sim_fail(s, "TMA store of %d-byte rows with a %d-byte swizzle: a box row must be the swizzle's width",
             box0 * elem_bytes, swizzle);
  if (c0 < 0 || c1 < 0) /* an H200 stops with an illegal instruction, where a TMA load would read zeros */
    sim_fail(s, "TMA store at coordinates (%d, %d): a bulk store's box must not start below 0", c0, c1);
  size_t bytes = (size_t)box0 * (size_t)box1 * (size_t)elem_bytes;
  const unsigned char *src = check_shared(s, "TMA store source", shared_src, bytes, swizzle ? (size_t)swizzle * 8 : 16);
  for (int64_t r = 0; r < box1; r++)
    for (int64_t j = 0; j < box0; j++) {
      int64_t x = c0 + j, y = c1 + r;
      if (x < 0 || x >= dim0 || y < 0 || y >= dim1) continue;
      unsigned char *dst = (unsigned char *)global_base + (y * stride + x) * elem_bytes;
      sim_check_global_span(s, "TMA store", dst, (size_t)elem_bytes, (size_t)elem_bytes);
      memcpy(dst, src + swizzled((size_t)(r * box0 + j) * (size_t)elem_bytes, swizzle), (size_t)elem_bytes);
    }
}

void tile_sim_tma_store_wait(void) {}
