/* Kernels written by hand against tile_sim.h for test_sim_tensor.c: they
 * build each lane's fragments from matrices in global memory through the
 * ISA's tables (tensor_tests.h), run mma, ldmatrix, cp.async and wgmma, and
 * store what the lanes get back the same way.  Built by the harness
 * (sim_module_build) like generated code. */
#include "c/tensor_tests.h"
#include "tile_sim.h"

#include <stddef.h>
#include <string.h>

#define PARAM(i, type) (*(type *)params[i])

static float as_float(uint32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static uint32_t load32(const uint32_t *p) {
  uint32_t v;
  tile_sim_load(&v, p, 4);
  return v;
}

static int element_bits(int kind) { return kind >= KIND_S8 ? 8 : kind == KIND_TF32 ? 32 : 16; }

/* Puts element bits v into part `part` of a register. */
static void place(uint32_t *regs, FragmentSlot s, int bits, uint32_t v) {
  uint32_t mask = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
  regs[s.reg] |= (v & mask) << (bits * s.part);
}

/* ---- mma.sync ------------------------------------------------------------------- */

/* Warp w of program p multiplies matrix set p * num_warps + w: A (16 x k),
 * B (k x 8), C (16 x 8), each element a u32 (the element's bits), into D.
 * alias: C and D in the same registers.  mode 1: kind 7; mode 2: lane 5
 * asks for f16 while the others ask for `kind`; mode 3: lane 31 returns
 * instead.  params: kind, a, b, c, d, k, num_warps, alias, mode */
void mma_sim_entry(void **params) {
  int32_t kind = PARAM(0, int32_t), k = PARAM(5, int32_t), num_warps = PARAM(6, int32_t);
  int32_t alias = PARAM(7, int32_t), mode = PARAM(8, int32_t);
  const uint32_t *A = PARAM(1, const uint32_t *), *B = PARAM(2, const uint32_t *), *C = PARAM(3, const uint32_t *);
  uint32_t *D = PARAM(4, uint32_t *);
  int tid = tile_sim_tid(), lane = tid % 32, set = tile_sim_ctaid(0) * num_warps + tid / 32, bits = element_bits(kind);
  uint32_t a[4] = {0}, b[2] = {0}, cbits[4] = {0};
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < k; c++) {
      FragmentSlot s = mma_a_slot(kind, r, c);
      if (s.lane == lane) place(a, s, bits, load32(A + (size_t)set * 16 * k + r * k + c));
    }
  for (int r = 0; r < k; r++)
    for (int c = 0; c < 8; c++) {
      FragmentSlot s = mma_b_slot(kind, r, c);
      if (s.lane == lane) place(b, s, bits, load32(B + (size_t)set * k * 8 + r * 8 + c));
    }
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 8; c++) {
      FragmentSlot s = mma_c_slot(r, c);
      if (s.lane == lane) cbits[s.reg] = load32(C + (size_t)set * 128 + r * 8 + c);
    }
  float cf[4], df[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; i++) cf[i] = as_float(cbits[i]);
  if (mode == 1) kind = 9; /* past the fp8 kinds */
  if (mode == 2 && lane == 5) kind = KIND_F16;
  if (mode == 3 && lane == 31) return;
  tile_sim_mma(kind, alias ? cf : df, a, b, cf);
  const float *d = alias ? cf : df;
  for (int r = 0; r < 16; r++)
    for (int c = 0; c < 8; c++) {
      FragmentSlot s = mma_c_slot(r, c);
      if (s.lane == lane) tile_sim_store(D + (size_t)set * 128 + r * 8 + c, &d[s.reg], 4);
    }
}

/* ---- ldmatrix ---------------------------------------------------------------------- */

/* Thread 0 copies `image` into shared memory; then every warp runs one
 * ldmatrix in which lane l gives the address shared + offsets[l] (an
 * offset of -1: a wild pointer, fine for lanes past 8 * count) and stores
 * its registers at out[(warp * 32 + lane) * 4 ..].  mode 1: lanes 16-31
 * wait at a barrier instead; mode 2: lane 3 asks for x2 while the others
 * ask for `count`.  params: count, trans, offsets (i32[32]), image (u8*),
 * image_bytes, out (u32*), mode */
void ldmatrix_sim_entry(void **params) {
  int32_t count = PARAM(0, int32_t), trans = PARAM(1, int32_t), bytes = PARAM(4, int32_t), mode = PARAM(6, int32_t);
  const int32_t *offsets = PARAM(2, const int32_t *);
  const unsigned char *image = PARAM(3, const unsigned char *);
  uint32_t *out = PARAM(5, uint32_t *);
  unsigned char *shared = tile_sim_shared();
  int tid = tile_sim_tid(), lane = tid % 32;
  if (tid == 0)
    for (int i = 0; i < bytes; i += 16) tile_sim_load(shared + i, image + i, 16);
  tile_sim_barrier();
  int32_t offset = (int32_t)load32((const uint32_t *)offsets + lane);
  const void *row = offset == -1 ? (const void *)(uintptr_t)0x1003 : shared + offset;
  uint32_t regs[4] = {0, 0, 0, 0};
  if (mode == 1 && lane >= 16) {
    tile_sim_barrier();
    return;
  }
  if (mode == 2 && lane == 3) count = 2;
  tile_sim_ldmatrix(regs, count, trans, row);
  for (int m = 0; m < 4; m++) tile_sim_store(out + (size_t)tid * 4 + m, &regs[m], 4);
}

/* ldmatrix feeding mma, as a lowering does: A (16 x 16 f16, row-major) and B
 * (16 x 8 f16, row-major, k x n) in shared memory; ldmatrix.x4 gives A's
 * fragment (lane l points at row l % 16, column 8 (l / 16)), ldmatrix.x2.trans
 * B's (lane l < 16 at row l); D = A B + C.  params: a (u16*), b (u16*), c
 * (f32*), d (f32*) */
void ldmatrix_mma_sim_entry(void **params) {
  const uint16_t *A = PARAM(0, const uint16_t *), *B = PARAM(1, const uint16_t *);
  const float *C = PARAM(2, const float *);
  float *D = PARAM(3, float *);
  unsigned char *shared = tile_sim_shared();
  int lane = tile_sim_tid() % 32;
  if (tile_sim_tid() == 0) {
    for (int i = 0; i < 512; i += 16) tile_sim_load(shared + i, (const unsigned char *)A + i, 16);
    for (int i = 0; i < 256; i += 16) tile_sim_load(shared + 512 + i, (const unsigned char *)B + i, 16);
  }
  tile_sim_barrier();
  uint32_t a[4], b[2];
  tile_sim_ldmatrix(a, 4, 0, shared + (lane % 16) * 32 + (lane / 16) * 16);
  tile_sim_ldmatrix(b, 2, 1, shared + 512 + (lane % 16) * 16);
  float c[4], d[4];
  for (int r = 0; r < 16; r++)
    for (int col = 0; col < 8; col++) {
      FragmentSlot s = mma_c_slot(r, col);
      if (s.lane == lane) tile_sim_load(&c[s.reg], C + r * 8 + col, 4);
    }
  tile_sim_mma(KIND_F16, d, a, b, c);
  for (int r = 0; r < 16; r++)
    for (int col = 0; col < 8; col++) {
      FragmentSlot s = mma_c_slot(r, col);
      if (s.lane == lane) tile_sim_store(D + r * 8 + col, &d[s.reg], 4);
    }
}

/* ---- cp.async ---------------------------------------------------------------------- */

/* Copies the 16 shared bytes at src to out (through a register, as a load). */
static void observe(uint32_t *out, const unsigned char *src) {
  uint32_t v[4];
  memcpy(v, src, 16);
  tile_sim_store(out, v, 16);
}

/* Groups: each thread copies 4 blocks of 16 bytes from its part of src
 * into shared memory, blocks 0, 1, 2 in groups of their own and block 3 in
 * none, and records (out: 8 observations of 16 bytes a thread) the
 * destinations as the waits retire the groups one by one:
 * block 0 at issue; after wait_group 2: blocks 0 and 1; after wait_group 1:
 * 1 and 2; after wait_group 0: 2 and 3 (3 is in no group: still poison);
 * after a commit and wait_group 0: block 3.  params: src (u8*), out */
void cp_async_groups_sim_entry(void **params) {
  const unsigned char *src = PARAM(0, const unsigned char *);
  uint32_t *out = PARAM(1, uint32_t *) + (size_t)(tile_sim_ctaid(0) * 64 + tile_sim_tid()) * 32;
  unsigned char *mine = (unsigned char *)tile_sim_shared() + 64 * tile_sim_tid();
  const unsigned char *from = src + (size_t)(tile_sim_ctaid(0) * 64 + tile_sim_tid()) * 64;
  for (int b = 0; b < 4; b++) {
    tile_sim_cp_async(mine + 16 * b, from + 16 * b, 16, 16);
    if (b < 3) tile_sim_cp_async_commit();
  }
  observe(out, mine);
  tile_sim_cp_async_wait(2);
  observe(out + 4, mine), observe(out + 8, mine + 16);
  tile_sim_cp_async_wait(1);
  observe(out + 12, mine + 16), observe(out + 16, mine + 32);
  tile_sim_cp_async_wait(0);
  observe(out + 20, mine + 32), observe(out + 24, mine + 48);
  tile_sim_cp_async_commit();
  tile_sim_cp_async_wait(0);
  observe(out + 28, mine + 48);
}

/* Zero fill: thread t copies `bytes` (4, 8 or 16) with src-size t % (bytes + 1)
 * from src + 16 t (NULL when src-size is 0) to shared + 16 t, waits, and
 * stores the 16 shared bytes at out + 16 t.  params: src, out, bytes */
void cp_async_fill_sim_entry(void **params) {
  const unsigned char *src = PARAM(0, const unsigned char *);
  uint32_t *out = PARAM(1, uint32_t *);
  int32_t bytes = PARAM(2, int32_t);
  int t = tile_sim_tid(), src_bytes = t % (bytes + 1);
  unsigned char *dst = (unsigned char *)tile_sim_shared() + 16 * t;
  memset(dst, 0x11, 16);
  tile_sim_cp_async(dst, src_bytes ? src + 16 * t : NULL, bytes, src_bytes);
  tile_sim_cp_async_commit();
  tile_sim_cp_async_wait(0);
  observe(out + 4 * t, dst);
}

/* Thread 6 breaks a rule of cp.async, by mode: 1 a source past the end of
 * src, 2 a misaligned source, 3 a misaligned destination, 4 a destination
 * past shared memory, 5 cp-size 2, 6 src-size above cp-size, 7 returns
 * with a committed copy not waited for, 8 returns with a copy in no group,
 * 9 a negative wait, 10 thread 7 writes into thread 6's destination while
 * its copy is in flight, 11 as 10 but thread 7's write is the same data
 * (a benign duplicate, fine), 12 thread 6 copies src[0..16) twice to the
 * same place, one group each, and waits once (fine).
 * params: src (u8[64]), mode, shared_bytes */
void cp_async_misuse_sim_entry(void **params) {
  const unsigned char *src = PARAM(0, const unsigned char *);
  int32_t mode = PARAM(1, int32_t), shared_bytes = PARAM(2, int32_t), t = tile_sim_tid();
  unsigned char *shared = tile_sim_shared(), *dst = shared + 64;
  if (t == 6) {
    const unsigned char *from = mode == 1 ? src + 56 : mode == 2 ? src + 8 : src;
    unsigned char *to = mode == 3 ? dst + 4 : mode == 4 ? shared + shared_bytes - 8 : dst;
    tile_sim_cp_async(to, from, mode == 5 ? 2 : 16, mode == 6 ? 17 : 16);
    if (mode == 12) tile_sim_cp_async_commit(), tile_sim_cp_async(to, from, 16, 16);
    if (mode != 8) tile_sim_cp_async_commit();
  }
  tile_sim_barrier();
  if (t == 7 && mode == 10) memset(dst, 0, 16);
  if (t == 7 && mode == 11) tile_sim_load(dst, src, 16);
  tile_sim_barrier();
  if (t == 6 && mode < 7) tile_sim_cp_async_wait(0);
  if (t == 6 && mode == 9) tile_sim_cp_async_wait(-1);
  if (t == 6 && mode >= 10) tile_sim_cp_async_wait(0);
}

/* ---- wgmma ------------------------------------------------------------------------- */

/* A descriptor with its start address field: bits 4-17 of the address. */
static uint64_t with_start(uint64_t desc, const unsigned char *p) { return desc + (((uintptr_t)p & 0x3ffff) >> 4); }

/* Each warpgroup g: thread 0 of the program copies p->image into shared
 * memory; the group loads its accumulators from p->acc_in + g * 64 * n and
 * for each K step fences, runs one wgmma (A by descriptor, or its fragment
 * built from p->a_bits), commits and waits; then stores the accumulators
 * at p->out + g * 64 * n.  p->mode misbehaves (WGMMA_*).
 * params: WgmmaParams (by value) */
void wgmma_sim_entry(void **params) {
  const WgmmaParams *p = params[0];
  int tid = tile_sim_tid(), g = tid / 128, t = tid % 128, n = p->n, k = p->kind == KIND_TF32 ? 8 : 16;
  unsigned char *shared = tile_sim_shared();
  if (tid == 0)
    for (int64_t i = 0; i < p->image_bytes; i += 16) tile_sim_load(shared + i, p->image + i, 16);
  tile_sim_barrier();
  float acc[128];
  for (int i = 0; i < 128; i++) acc[i] = as_float(0x7fc00bad);
  for (int r = 16 * (t / 32); r < 16 * (t / 32) + 16; r++)
    for (int c = 0; c < n; c++) {
      FragmentSlot s = wgmma_d_slot(r, c);
      if (s.lane == t) tile_sim_load(&acc[s.reg], p->acc_in + (size_t)g * 64 * n + r * n + c, 4);
    }
  int32_t kind = p->kind, bits = element_bits(kind), k_total = k * p->k_steps;
  for (int step = 0; step < p->k_steps; step++) {
    uint32_t regs[4] = {0, 0, 0, 0};
    for (int r = 16 * (t / 32); p->a_in_registers && r < 16 * (t / 32) + 16; r++)
      for (int c = 0; c < k; c++) {
        FragmentSlot s = wgmma_a_slot(kind, r, c);
        if (s.lane == t) place(regs, s, bits, load32(p->a_bits + (size_t)r * k_total + step * k + c));
      }
    uint64_t a_desc = with_start(p->a_desc, shared + p->a_start[step]);
    uint64_t b_desc = with_start(p->b_desc, shared + p->b_start[step]);
    if (p->mode == WGMMA_SKEWED_DESC && t == 77) b_desc += 1;
    if (p->mode == WGMMA_DIVERGENT_FENCE && t / 32 == 3) tile_sim_wgmma_wait(0);
    else if (p->mode != WGMMA_NO_FENCE && (p->mode != WGMMA_ONE_GROUP || step == 0)) tile_sim_wgmma_fence();
    int n_asked = p->mode == WGMMA_DIVERGENT_N && t / 32 == 2 ? n + 8 : n;
    tile_sim_wgmma(kind, n_asked, acc, a_desc, p->a_in_registers ? regs : NULL, b_desc, step > 0 || p->scale_d,
                   p->trans_a, p->trans_b);
    if (p->mode == WGMMA_NO_COMMIT) return;
    if (p->mode == WGMMA_ONE_GROUP) {
      if (step < p->k_steps - 1) continue;
      tile_sim_wgmma_commit();
      tile_sim_wgmma_commit(); /* an empty group: wait_group 1 leaves only it pending */
      tile_sim_wgmma_wait(1);
      continue;
    }
    tile_sim_wgmma_commit();
    if (p->mode == WGMMA_NO_WAIT) return;
    tile_sim_wgmma_wait(0);
  }
  for (int r = 16 * (t / 32); r < 16 * (t / 32) + 16; r++)
    for (int c = 0; c < n; c++) {
      FragmentSlot s = wgmma_d_slot(r, c);
      if (s.lane == t) tile_sim_store(p->out + (size_t)g * 64 * n + r * n + c, &acc[s.reg], 4);
    }
}

/* TMA store: thread 0 lays a box of 16 rows by swizzle/4 fp32 columns out
 * in shared memory as the ISA's swizzle atoms put them (8 rows of W bytes,
 * row r's 16-byte chunk c at chunk c ^ (r / (128 / W)) % (W / 16)),
 * element (r, j) = 1000 r + j, then stores it at (c0, c1) of the tensor
 * [dim1][dim0] at out (row stride `stride` elements).  params: out, dim0,
 * dim1, stride (i64), c0, c1, swizzle (i32) */
void tma_store_box_sim_entry(void **params) {
  float *out = PARAM(0, float *);
  int64_t dim0 = PARAM(1, int64_t), dim1 = PARAM(2, int64_t), stride = PARAM(3, int64_t);
  int32_t c0 = PARAM(4, int32_t), c1 = PARAM(5, int32_t), w = PARAM(6, int32_t), cols = w / 4;
  unsigned char *box = tile_sim_shared();
  if (tile_sim_tid() == 0)
    for (int r = 0; r < 16; r++)
      for (int j = 0; j < cols; j++) {
        int chunk = j * 4 / 16, phase = (r % 8) / (128 / w) % (w / 16);
        float v = (float)(1000 * r + j);
        memcpy(box + (r / 8) * 8 * w + (r % 8) * w + (chunk ^ phase) * 16 + j * 4 % 16, &v, 4);
      }
  tile_sim_barrier();
  if (tile_sim_tid() == 0) {
    tile_sim_tma_store(box, out, dim0, dim1, stride, c0, c1, cols, 16, w, 4);
    tile_sim_tma_store_wait();
  }
}
