/* dot on wgmma (version 3 mma layouts, sm_90a).
 *
 * B is a buffer in an NVMMA layout (accelerate-matmul put it there); A is
 * one too, or a tile in the mma's #dot_op layout: wgmma's register form,
 * whose four 32-bit registers per thread are mma.sync's A fragment for
 * the warp's 16 rows of the warpgroup's 64.
 * Four consecutive warps make a warpgroup of 64 rows; each warpgroup
 * issues, per K step of the instruction (16, or 8 for tf32) and per
 * repetition of its m64n{n} tile over the dot's tile, one
 * wgmma.mma_async on the n/2 accumulator registers of that repetition
 * (the mma layout puts them consecutively, in the ISA's fragment order).
 *
 * A shared-memory matrix descriptor gives the operand's start address
 * (bits 4-17), the byte distance of 8-row groups (SBO: 8 rows of the
 * swizzle width), of swizzle-wide column blocks (LBO: the width times the
 * tile's rows) and the swizzle mode.  The start of a sub-tile is the
 * address of its first element: its row is a multiple of 8, where the
 * swizzle is the identity, and the hardware applies the XOR to the
 * addresses it forms, so starting inside a swizzle row selects columns.
 * Operands stored along M or N (imm-trans 1) are allowed for fp16 and bf16;
 * tf32 and fp8 (e4m3, e5m2, k 32; accelerate-matmul takes them from the
 * fp16 conversions sema put before the dot, into K-major buffers) are read
 * K-major only.
 *
 * The wgmmas of one dot are one commit group; without a dot_wait using the
 * result, the dot waits for it at once (wait_group 0), and that wait takes
 * a register A's words as inputs: the ISA forbids changing A's registers
 * before the wgmma that reads them completes.  A register-A dot the
 * pipeline leaves in flight (its result carried to the next iteration's
 * wait) relies on ptxas for that, as Triton's does: ptxas allocates no
 * other value to a register an unfinished wgmma reads.  Operands written
 * by st.shared are fenced with fence.proxy.async before the barrier that
 * publishes them; cp.async's are not (lower_async.c).  tf32 operands
 * are not rounded first: the tensor cores ignore the low 13 bits. */
#include "lower.h"

#include <string.h>

typedef struct Operand {
  LinearLayout mem;          /* element offset -> memory offset (elements) */
  int64_t cols;              /* the tile's columns (its last dimension) */
  int trans;                 /* stored along M (A) or N (B): imm-trans 1 */
  int elem_bytes;
  LLVMValueRef start;        /* i64: the descriptor of this warpgroup's part of the buffer */
} Operand;

static int64_t swizzle_mode(int bytes) { return bytes == 128 ? 1 : bytes == 64 ? 2 : 3; }

/* op_index 0: A [M, K], K-major when dimension 1 is contiguous; 1: B [K, N], K-major when dimension 0 is. */
static void operand(Lower *L, int buffer, int op_index, const LinearLayout *acc, Operand *o) {
  const Layout *l = tir_layout(L->f, buffer);
  const Type *t = lower_type(L, buffer);
  memset(o, 0, sizeof *o);
  lower_linear(L, buffer, &o->mem);
  o->cols = t->shape[1];
  o->trans = l->order[0] == (op_index == 0 ? 0 : 1);
  o->elem_bytes = dtype_bits(t->elem) / 8;
  int64_t lbo = (int64_t)l->swizzle_bytes * t->shape[l->order[1]], sbo = 8 * (int64_t)l->swizzle_bytes;
  uint64_t fixed = (uint64_t)(lbo >> 4 & 0x3FFF) << 16 | (uint64_t)(sbo >> 4 & 0x3FFF) << 32 |
                   (uint64_t)swizzle_mode(l->swizzle_bytes) << 62;
  int64_t c[TID_BITS] = {0};
  for (int i = 0; i < acc->n_warp; i++) { /* warps 0-1 are inside the warpgroup; the others move it */
    int64_t x[MAX_RANK];
    ll_coords(acc, acc->warp[i], x);
    int64_t row = op_index == 0 ? (i >= 2 ? x[0] : 0) : 0, col = op_index == 0 ? 0 : x[1];
    c[LANE_BITS + i] = (int64_t)ll_reg_offset(&o->mem, (uint32_t)(row * o->cols + col)) * o->elem_bytes;
  }
  if (!L->shared_offset[buffer]) lower_fail(L, "internal error: a wgmma operand that is not a local_alloc or its slot");
  LLVMValueRef a = LLVMBuildAdd(L->b, LLVMBuildPtrToInt(L->b, L->raw_shared, L->i32, ""), L->shared_offset[buffer], "");
  a = LLVMBuildAdd(L->b, a, lower_thread_sum(L, c), "");
  a = LLVMBuildAnd(L->b, LLVMBuildLShr(L->b, a, lower_int(L, L->i32, 4), ""), lower_int(L, L->i32, 0x3FFF), "");
  o->start = LLVMBuildOr(L->b, LLVMBuildZExt(L->b, a, L->i64, ""), LLVMConstInt(L->i64, fixed, 0), "");
}

/* The descriptor of the sub-tile whose first element is at (row, col):
 * the start's plus the sub-tile's offset, as shared addresses lie below
 * 2^18 and the address field (bits 4-17) cannot carry over.  The address
 * is computed once, in 32 bits: 64-bit arithmetic and a mask for each
 * descriptor cost the loop of a K=32 matmul a third more instructions. */
static LLVMValueRef descriptor(Lower *L, const Operand *o, int64_t row, int64_t col) {
  int64_t off = (int64_t)ll_reg_offset(&o->mem, (uint32_t)(row * o->cols + col)) * o->elem_bytes;
  if (off % 16) lower_fail(L, "internal error: a wgmma operand starting off a 16-byte boundary");
  return LLVMBuildAdd(L->b, o->start, lower_int(L, L->i64, off >> 4), "");
}

/* The four words of A for the instruction at rows m.. and K k0.. (register
 * parts): a0 rows +0, a1 rows +8, a2 K + 4 per, a3 both, each `per`
 * K-consecutive elements in one register (2 fp16 or bf16, 4 fp8). */
static void register_a(Lower *L, const LinearLayout *la, Regs a, int per, int64_t m, int64_t k0, LLVMValueRef *words) {
  int64_t cols = la->shape[1];
  for (int i = 0; i < 4; i++) {
    LLVMValueRef elems[4];
    for (int j = 0; j < per; j++) {
      int r = ll_find_register(la, (uint32_t)((m + 8 * (i & 1)) * cols + k0 + 4 * per * (i >> 1) + j));
      if (r < 0) lower_fail(L, "internal error: a wgmma register A lacks an element its accumulator tile needs");
      elems[j] = a.v[r];
    }
    words[i] = lower_pack(L, elems, per, L->i32);
  }
}

/* Every wgmma's four A words into `words`, in the order the dot issues them (per K step, per 64 rows of
 * the accumulator). */
static void pack_register_a(Lower *L, const LinearLayout *la, Regs a, const Type *ta, const LinearLayout *acc,
                           int per_instr, int k_step, LLVMValueRef *words) {
  int n = 0;
  for (int64_t k0 = 0; k0 < ta->shape[1]; k0 += k_step)
    for (int r = 0, m = -1; r < ll_registers(acc); r += per_instr) {
      int64_t x[MAX_RANK];
      ll_coords(acc, ll_reg_offset(acc, (uint32_t)r), x);
      if (x[0] == m) continue;
      register_a(L, la, a, 32 / dtype_bits(ta->elem), x[0], k0, words + n);
      n += 4;
      m = (int)x[0];
    }
}

static int wgmma_kind(DType a, DType b) {
  if (dtype_is_fp8(a)) return mma_fp8_kind(a, b);
  return a == DT_BF16 ? MMA_BF16 : a == DT_FP32 ? MMA_TF32 : MMA_F16;
}

/* Whether a dot_wait takes the dot's result (the wait is there, later). */
static int waited_later(Lower *L, const TirOp *op) {
  int v = op->results.data[0];
  return L->dot_waited && L->dot_waited[v];
}

void lower_wgmma_dot(Lower *L, const TirOp *op) {
  const Layout *mma = tir_layout(L->f, op->results.data[0]);
  const Type *ta = lower_type(L, op->operands.data[0]);
  int a_regs = !layout_is_shared(tir_layout(L->f, op->operands.data[0]));
  if (a_regs && ta->elem != DT_FP16 && ta->elem != DT_BF16 && !dtype_is_mma_fp8(ta->elem))
    lower_fail(L, "wgmma with A in registers takes fp16, bf16 or fp8 (A is %s)", dtype_name(ta->elem));
  LinearLayout acc_ll;
  lower_linear(L, op->results.data[0], &acc_ll);
  if (acc_ll.n_reg < 2 || acc_ll.reg[0] != 1 || acc_ll.reg[1] != 8 * (uint32_t)acc_ll.shape[1] ||
      acc_ll.shape[0] < 16 * mma->warps_per_cta[0])
    lower_fail(L, "internal error: a wgmma accumulator tile smaller than its warpgroups' instructions");
  for (int k = a_regs; k < 2; k++) lower_buffer_read_async_proxy(L, op->operands.data[k]);
  Operand a, b;
  LinearLayout a_ll;
  Regs av = {0};
  if (a_regs) {
    lower_linear(L, op->operands.data[0], &a_ll);
    av = lower_operand(L, op, 0, &a_ll);
  } else {
    operand(L, op->operands.data[0], 0, &acc_ll, &a);
  }
  operand(L, op->operands.data[1], 1, &acc_ll, &b);
  Regs c = lower_operand(L, op, 2, &acc_ll), acc = lower_regs(L, c.n);
  for (int r = 0; r < c.n; r++) acc.v[r] = LLVMTypeOf(c.v[r]) == L->f32 ? c.v[r] : LLVMBuildFPExt(L->b, c.v[r], L->f32, "");
  int n = mma->instr[1], k_step = mma->instr[2], per = n / 2;
  int kind = wgmma_kind(ta->elem, lower_type(L, op->operands.data[1])->elem);
  if (kind >= MMA_FP8 && ((!a_regs && a.trans) || b.trans))
    lower_fail(L, "internal error: an fp8 wgmma operand stored along M or N (wgmma reads fp8 K-major only)");
  /* the A words every wgmma reads, kept for the wait.  One warpgroup packs them all before the fence (a
   * register written between a group's wgmmas makes ptxas fence and track each wgmma alone); two or more,
   * whose kernels run at the register limit, pack each before its wgmma (all at once raised spills) */
  int n_words = 0, pack_first = a_regs && L->num_threads == 128;
  LLVMValueRef *words = a_regs ? arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(av.n / 2 + 4)) : NULL;
  if (pack_first) pack_register_a(L, &a_ll, av, ta, &acc_ll, per, k_step, words);
  L->target->wgmma_fence(L);
  for (int64_t k0 = 0; k0 < ta->shape[1]; k0 += k_step)
    for (int r = 0, m = -1; r < acc.n; r += per) { /* repetitions along N inside those along M */
      int64_t x[MAX_RANK];
      ll_coords(&acc_ll, ll_reg_offset(&acc_ll, (uint32_t)r), x);
      LLVMValueRef b_desc = descriptor(L, &b, k0, x[1]);
      if (!a_regs) {
        L->target->wgmma(L, kind, n, acc.v + r, descriptor(L, &a, x[0], k0), NULL, b_desc, a.trans, b.trans);
        continue;
      }
      if (x[0] != m) { /* the next 64 rows: their A words */
        if (!pack_first) register_a(L, &a_ll, av, 32 / dtype_bits(ta->elem), x[0], k0, words + n_words);
        n_words += 4;
        m = (int)x[0];
      }
      L->target->wgmma(L, kind, n, acc.v + r, NULL, words + n_words - 4, b_desc, 0, b.trans);
    }
  L->target->wgmma_commit(L);
  if (!waited_later(L, op)) L->target->wgmma_wait(L, 0, acc.v, acc.n, words, n_words);
  LLVMTypeRef et = lower_elem_type(L, lower_type(L, op->results.data[0]));
  for (int r = 0; r < acc.n && !waited_later(L, op); r++)
    if (et != L->f32) acc.v[r] = LLVMBuildFPTrunc(L->b, acc.v[r], et, "");
  lower_result(L, op, 0, acc);
}

/* Waits for all but `pending` groups of wgmma; its results are its
 * operands, made ready (and rounded to their type where the dot's was
 * not fp32). */
void lower_dot_wait(Lower *L, const TirOp *op) {
  int total = 0;
  for (int k = 0; k < op->operands.len; k++) total += lower_get(L, op->operands.data[k]).n;
  LLVMValueRef *all = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(total + 1));
  for (int k = 0, at = 0; k < op->operands.len; k++) {
    Regs x = lower_get(L, op->operands.data[k]);
    for (int r = 0; r < x.n; r++) all[at++] = x.v[r];
  }
  L->target->wgmma_wait(L, (int)op->ival, all, total, NULL, 0);
  for (int k = 0, at = 0; k < op->operands.len; k++) {
    Regs x = lower_regs(L, lower_get(L, op->operands.data[k]).n);
    LLVMTypeRef et = lower_elem_type(L, lower_type(L, op->results.data[k]));
    for (int r = 0; r < x.n; r++, at++) x.v[r] = LLVMTypeOf(all[at]) == et ? all[at] : LLVMBuildFPTrunc(L->b, all[at], et, "");
    lower_result(L, op, k, x);
  }
}
