/* Ops that move elements between layouts or shapes: splat, broadcast,
 * expand_dims, reshape, trans, convert_layout (and hint, which moves
 * nothing).  One mechanism serves them all: each op is a GF(2)-linear map
 * from a destination element's flat offset to its source element's
 * (expand_dims, reshape and convert keep row-major offsets; broadcast drops
 * the grown dimensions' bits; trans permutes them).  When the map carries
 * the destination's lane and warp bases onto the source's, every thread
 * already holds what it needs and the op only renames registers; otherwise
 * the tile goes through shared memory (lower_shared.c). */
#include "lower.h"

#include <string.h>

static int log2_of(int64_t x) { return x > 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0; }

static void strides(const Type *t, int64_t *stride) {
  int64_t s = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= t->shape[d];
  }
}

/* The map of an op whose destination dimension e reads source dimension
 * from[e] (-1: a dimension of size 1 in the source, which reads 0). */
static void dimension_map(const Type *dst, const Type *src, const int *from, BitMap *m) {
  int64_t ds[MAX_RANK], ss[MAX_RANK];
  strides(dst, ds);
  strides(src, ss);
  memset(m, 0, sizeof *m);
  m->n = log2_of(type_numel(src));
  for (int e = 0; e < dst->rank; e++)
    for (int k = 0; (1LL << k) < dst->shape[e]; k++)
      m->image[log2_of(ds[e]) + k] = from[e] < 0 ? 0 : 1u << (log2_of(ss[from[e]]) + k);
}

static int same_linear(const LinearLayout *a, const LinearLayout *b) {
  return a->n_reg == b->n_reg && !memcmp(a->reg, b->reg, sizeof(uint32_t) * (size_t)a->n_reg) && ll_same_threads(a, b);
}

/* Each destination register from the source register that holds its
 * element in the same thread; 0 if some element is in another thread. */
static int rename_registers(Regs src, const LinearLayout *from, const Side *to, Regs out) {
  Side s;
  lower_side(from, NULL, &s);
  if (memcmp(s.thread, to->thread, sizeof s.thread)) return 0;
  for (int r = 0; r < out.n; r++) {
    uint32_t off = 0;
    for (int i = 0; i < to->n_reg; i++)
      if (r >> i & 1) off ^= to->reg[i];
    int k = ll_find_register(from, off);
    if (k < 0) return 0;
    out.v[r] = src.v[k];
  }
  return 1;
}

Regs lower_move(Lower *L, Regs src, const LinearLayout *from, const LinearLayout *to, const BitMap *map,
                LLVMTypeRef elem) {
  if (!map && same_linear(from, to)) return src;
  Regs out = lower_regs(L, ll_registers(to));
  if (from->rank == 0 || src.uniform) { /* a scalar, or a tile of one value (constants, splats) */
    for (int r = 0; r < out.n; r++) out.v[r] = src.v[0];
    out.uniform = 1;
    return out;
  }
  Side dst;
  lower_side(to, map, &dst);
  if (rename_registers(src, from, &dst, out)) return out;
  Exchange x;
  memset(&x, 0, sizeof x);
  lower_side(from, NULL, &x.from);
  if (lower_quad_shuffle(L, src, &x.from, &dst, elem, out)) return out;
  x.to = dst;
  x.space_bits = log2_of(shape_numel(from->rank, from->shape));
  x.elem = elem;
  return lower_exchange(L, &x, src);
}

void lower_splat(Lower *L, const TirOp *op) {
  LinearLayout to;
  lower_linear(L, op->results.data[0], &to);
  Regs s = lower_get(L, op->operands.data[0]), out = lower_regs(L, ll_registers(&to));
  for (int r = 0; r < out.n; r++) out.v[r] = s.v[0];
  out.uniform = 1;
  lower_result(L, op, 0, out);
}

void lower_shape_op(Lower *L, const TirOp *op) {
  int src = op->operands.data[0], dst = op->results.data[0];
  const Type *st = lower_type(L, src), *dt = lower_type(L, dst);
  LinearLayout from, to;
  lower_linear(L, src, &from);
  lower_linear(L, dst, &to);
  BitMap map, *m = NULL;
  int dims[MAX_RANK];
  if (op->code == TIR_BROADCAST || op->code == TIR_TRANS) {
    for (int e = 0; e < dt->rank; e++)
      dims[e] = op->code == TIR_TRANS ? (int)op->ints[e] : st->shape[e] == 1 && dt->shape[e] != 1 ? -1 : e;
    dimension_map(dt, st, dims, &map);
    m = &map;
  }
  lower_result(L, op, 0, lower_move(L, lower_get(L, src), &from, &to, m, lower_elem_type(L, dt)));
}

/* join and split: the pair's last dimension is bit 0 of its flat offsets.
 * A half is the pair's layout with the register bit holding that bit
 * dropped and the other offsets halved; the layout rules (rules.c) keep
 * that dimension in registers, so the halves are the pair's registers
 * with that bit 0 or 1, and moving them to the operands' or results'
 * layouts renames registers (through shared memory if they differ).
 * Returns the register bit. */
static int half_layout(Lower *L, const LinearLayout *pair, LinearLayout *half) {
  int bit = -1;
  *half = *pair;
  half->n_reg = 0;
  int others_clear = 1; /* no other basis touches the pair's bit */
  for (int i = 0; i < pair->n_reg; i++) {
    if (pair->reg[i] == 1) bit = i;
    else others_clear &= !(pair->reg[i] & 1), half->reg[half->n_reg++] = pair->reg[i] >> 1;
  }
  for (int i = 0; i < pair->n_lane; i++) others_clear &= !(pair->lane[i] & 1), half->lane[i] >>= 1;
  for (int i = 0; i < pair->n_warp; i++) others_clear &= !(pair->warp[i] & 1), half->warp[i] >>= 1;
  if (bit < 0 || !others_clear)
    lower_fail(L, "internal error: %s of a pair not held in registers", tir_op_name(L->op->code));
  half->rank--;
  return bit;
}

/* The pair register holding element `k` (0 or 1) of half register h. */
static int pair_register(int h, int bit, int k) {
  return (h >> bit << (bit + 1)) | (k << bit) | (h & ((1 << bit) - 1));
}

void lower_join(Lower *L, const TirOp *op) {
  LinearLayout to, half;
  lower_linear(L, op->results.data[0], &to);
  int bit = half_layout(L, &to, &half);
  LLVMTypeRef elem = lower_elem_type(L, lower_type(L, op->results.data[0]));
  Regs out = lower_regs(L, ll_registers(&to));
  for (int k = 0; k < 2; k++) {
    LinearLayout from;
    lower_linear(L, op->operands.data[k], &from);
    Regs h = lower_move(L, lower_get(L, op->operands.data[k]), &from, &half, NULL, elem);
    for (int r = 0; r < h.n; r++) out.v[pair_register(r, bit, k)] = h.v[r];
  }
  lower_result(L, op, 0, out);
}

void lower_split(Lower *L, const TirOp *op) {
  LinearLayout from, half, to;
  lower_linear(L, op->operands.data[0], &from);
  lower_linear(L, op->results.data[0], &to);
  int bit = half_layout(L, &from, &half);
  Regs src = lower_get(L, op->operands.data[0]), h = lower_regs(L, ll_registers(&half));
  for (int r = 0; r < h.n; r++) h.v[r] = src.v[pair_register(r, bit, (int)op->ival)];
  h.uniform = src.uniform;
  lower_result(L, op, 0, lower_move(L, h, &half, &to, NULL, lower_elem_type(L, lower_type(L, op->results.data[0]))));
}

/* gather: the source goes to shared memory whole (any index may name any
 * element), then each thread reads, for every element of the index it
 * holds, the source element at that element's coordinates with the axis
 * coordinate replaced by the index.  Tile sizes are powers of two, so the
 * coordinates are bit fields of the flat offsets; the index is masked to
 * the axis (an index outside it is undefined in Triton; the mask keeps the
 * read inside the buffer). */
void lower_gather(Lower *L, const TirOp *op) {
  int src = op->operands.data[0], index = op->operands.data[1];
  const Type *st = lower_type(L, src), *xt = lower_type(L, index);
  LinearLayout from, to;
  lower_linear(L, src, &from);
  lower_linear(L, op->results.data[0], &to);
  Regs s = lower_get(L, src), x = lower_get(L, index), out = lower_regs(L, ll_registers(&to));
  if (s.uniform) { /* every element is the same */
    for (int r = 0; r < out.n; r++) out.v[r] = s.v[0];
    out.uniform = 1;
    lower_result(L, op, 0, out);
    return;
  }
  Exchange e;
  memset(&e, 0, sizeof e);
  lower_side(&from, NULL, &e.from);
  e.to = e.from; /* the reads are computed at run time: the plan lays out the source only */
  e.space_bits = log2_of(type_numel(st));
  e.elem = lower_elem_type(L, st);
  Scratch p;
  lower_scratch_plan(L, &e, 0, INT64_MAX, &p);
  if (L->shared_dirty) lower_barrier(L);
  lower_scratch_write(L, &p, s, 0);
  lower_barrier(L);
  int64_t inner = 1;
  for (int d = op->axis + 1; d < st->rank; d++) inner *= st->shape[d];
  int inner_bits = log2_of(inner), index_bits = log2_of(xt->shape[op->axis]), src_bits = log2_of(st->shape[op->axis]);
  Side dst;
  lower_side(&to, NULL, &dst);
  LLVMValueRef thread = lower_thread_offset(L, dst.thread);
  for (int r = 0; r < out.n; r++) {
    LLVMValueRef off = LLVMBuildAdd(L->b, thread, lower_i32(L, ll_reg_offset(&to, (uint32_t)r)), "");
    LLVMValueRef outer = LLVMBuildLShr(L->b, off, lower_i32(L, inner_bits + index_bits), "");
    LLVMValueRef at = LLVMBuildIntCast2(L->b, x.v[x.uniform ? 0 : r], L->i32, 1, "");
    at = LLVMBuildAnd(L->b, at, lower_i32(L, st->shape[op->axis] - 1), "");
    LLVMValueRef flat = LLVMBuildShl(L->b, outer, lower_i32(L, inner_bits + src_bits), "");
    flat = LLVMBuildOr(L->b, flat, LLVMBuildShl(L->b, at, lower_i32(L, inner_bits), ""), "");
    flat = LLVMBuildOr(L->b, flat, LLVMBuildAnd(L->b, off, lower_i32(L, inner - 1), ""), "");
    LLVMValueRef byte = lower_scratch_runtime(L, &p, flat);
    LLVMValueRef v = LLVMBuildLoad2(L->b, p.mem_type, LLVMBuildGEP2(L->b, L->i8, L->shared, &byte, 1, ""), "");
    LLVMSetAlignment(v, (unsigned)p.elem_bytes);
    out.v[r] = lower_from_memory(L, v, e.elem);
  }
  lower_shared_unknown(L);
  lower_result(L, op, 0, out);
}
