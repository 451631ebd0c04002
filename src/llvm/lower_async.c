/* Asynchronous copies from global to shared memory: async_copy
 * (cp.async), async_commit (cp.async.commit_group) and async_wait
 * (cp.async.wait_group, then a barrier: a thread's wait covers only its own
 * copies, the barrier makes every thread's visible to all).
 *
 * Each thread copies what it holds of the pointer tile, in the vectors a
 * load would use (AxisInfo: contiguous, aligned pointers under one mask
 * value), cut further to what is contiguous in the buffer; a masked-off
 * vector reads nothing (src-size 0) and its bytes become zero.  A false
 * `issue` operand skips the copies altogether (a predicated cp.async);
 * where several threads hold an element, one of them copies it.
 * cp.async moves 4, 8 or 16 bytes: a narrower vector is loaded and stored
 * at once instead, which the wait and barrier after it order just the
 * same. */
#include "lower.h"

#include <string.h>

/* The vector's register bits that are also consecutive in the buffer, as a
 * count of leading bits. */
static int buffer_contiguous_bits(const Vector *v, const BufferView *b) {
  int k = 0;
  while (k < v->n_bits && b->reg[v->bit[k]] == 1u << k) k++;
  uint32_t low = (1u << k) - 1, others = b->thread_mask;
  for (int i = 0; i < b->n_reg; i++) {
    int in_vector = 0;
    for (int j = 0; j < k; j++) in_vector |= v->bit[j] == i;
    if (!in_vector) others |= b->reg[i];
  }
  while (k && (others & low)) k--, low >>= 1;
  return k;
}

/* A vector too narrow for cp.async: a predicated load, then a store. */
static void copy_at_once(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef predicate) {
  int word_bits, words;
  GlobalAccess g;
  memset(&g, 0, sizeof g);
  g.address = src;
  g.type = lower_word_type(L, bytes, bytes * 8 < 32 ? bytes * 8 : 32, &word_bits, &words);
  g.bytes = bytes;
  g.word_bits = word_bits;
  g.words = words;
  g.predicate = predicate;
  LLVMValueRef st = LLVMBuildStore(L->b, L->target->load(L, &g), dst);
  LLVMSetAlignment(st, (unsigned)bytes);
}

/* Whether this thread copies: the iteration exists (the `issue` operand),
 * and of the threads holding the same elements (a row statistic in a
 * slice of an accumulator layout), it is the first. */
static LLVMValueRef copies_here(Lower *L, const TirOp *op, const LinearLayout *ll) {
  Side s;
  lower_side(ll, NULL, &s);
  LLVMValueRef owner = lower_owner(L, s.thread, 0);
  LLVMValueRef issue = op->operands.len > 3 ? lower_get(L, op->operands.data[3]).v[0] : NULL;
  return owner && issue ? LLVMBuildAnd(L->b, owner, issue, "") : owner ? owner : issue;
}

void lower_async_copy(Lower *L, const TirOp *op) {
  int ptr = op->operands.data[0], buffer = op->operands.data[1], masked = op->operands.len > 2;
  LinearLayout ll;
  lower_linear(L, ptr, &ll);
  LLVMBasicBlockRef after = NULL;
  LLVMValueRef here = copies_here(L, op, &ll);
  if (here) {
    LLVMBasicBlockRef on = lower_new_block(L, "copy");
    after = lower_new_block(L, "copied");
    LLVMBuildCondBr(L->b, here, on, after);
    LLVMPositionBuilderAtEnd(L->b, on);
  }
  Regs p = lower_get(L, ptr), mask = masked ? lower_operand(L, op, 2, &ll) : (Regs){0, NULL, 0};
  BufferView view;
  lower_buffer_view(L, buffer, &ll, &view);
  Vector v = lower_choose_vector(L, ptr, masked ? op->operands.data[2] : -1, &ll, view.elem_bytes);
  v.n_bits = buffer_contiguous_bits(&v, &view);
  int bytes = view.elem_bytes << v.n_bits;
  lower_note_access(L, &v, p.n);
  lower_buffer_async_write(L, buffer);
  for (uint32_t r = 0; r < (uint32_t)p.n; r++) {
    if (!lower_is_group_base(&v, r)) continue;
    LLVMValueRef dst = lower_view_address(L, &view, lower_view_offset(&view, r)), on = masked ? mask.v[r] : NULL;
    if (bytes < 4) {
      copy_at_once(L, dst, p.v[r], bytes, on);
      continue;
    }
    LLVMValueRef size = lower_i32(L, bytes);
    if (on) size = LLVMBuildSelect(L->b, on, size, lower_i32(L, 0), "");
    L->target->cp_async(L, dst, p.v[r], bytes, size);
  }
  if (after) {
    LLVMBuildBr(L->b, after);
    LLVMPositionBuilderAtEnd(L->b, after);
  }
}

void lower_async_commit(Lower *L, const TirOp *op) { L->target->cp_async_commit(L); }

/* No proxy fence follows the wait, not even where a wgmma dot reads the
 * copies: cp.async's writes, waited for and published by the barrier, are
 * what Triton's pipeliner and CUTLASS's cp.async GMMA mainloops hand wgmma
 * unfenced too.  At sm_90 the fence is a MEMBAR.ALL.CTA in every
 * iteration (its cost: D7 of docs/decisions.md).  Writes by st.shared
 * stay fenced (lower_buffers.c). */
void lower_async_wait(Lower *L, const TirOp *op) {
  L->target->cp_async_wait(L, (int)op->ival);
  lower_barrier(L);
}
