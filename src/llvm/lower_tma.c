/* The tensor memory accelerator's copies and their mbarriers (sm_90a, GPU
 * only: the pipeliner makes them only for a GPU target, so the simulator
 * never meets them): mbarrier_alloc, mbarrier_wait, mbarrier_inval and
 * tma_copy, as inline PTX (LLVM 19 has no intrinsics for these forms);
 * and tma_store, for the GPU and the simulator (the target's
 * tma_store_box and tma_store_wait).
 *
 * One thread (thread 0) initialises the barriers, expects each copy's
 * bytes and issues the copies; every thread waits.  The copy's destination
 * is `.shared::cluster` with the CTA's own shared address: LLVM 19 emits
 * PTX 8.5 at most, where `.shared::cta` is not allowed yet.  A tile wider
 * than one 128-byte swizzle row goes as several boxes, one per block of
 * the NVMMA layout (layout_tc.c), which is exactly where the hardware's
 * 128-byte swizzle puts a box's rows (1024-byte aligned blocks).
 *
 * tma_store goes the other way, box by box from the same blocks: the
 * tile's writes are fenced for the async proxy and a barrier orders them
 * before thread 0 issues the copies (`bulk_group` completion: no
 * mbarrier), commits them as a group and waits until they have read the
 * buffer (`wait_group.read 0`), so the barrier before the next write of
 * those bytes (the read is recorded) follows the wait.  The global writes
 * complete by the kernel's end, as Triton's do, where nothing after the
 * store reads or changes global memory but TMA copies; else (a load, an atomic: a lock
 * released after the tile, a read of what was stored) thread 0 waits for
 * the writes themselves, fences them for the generic proxy and a barrier
 * makes every thread wait for that: where each thread stored its own
 * elements, it would have seen them. */
#include "lower.h"

/* The shared-memory address (64 bits) of p. */
static LLVMValueRef address(Lower *L, LLVMValueRef p) { return LLVMBuildPtrToInt(L->b, p, L->i64, ""); }

static LLVMValueRef barrier_at(Lower *L, int bars, LLVMValueRef slot) {
  LLVMValueRef bytes = LLVMBuildMul(L->b, LLVMBuildSExt(L->b, slot, L->i64, ""), lower_int(L, L->i64, 8), "");
  return address(L, LLVMBuildGEP2(L->b, L->i8, lower_get(L, bars).v[0], &bytes, 1, ""));
}

/* Runs what the caller builds next in thread 0 only (and, with `also`, only if it is true);
 * returns the block to continue in. */
static LLVMBasicBlockRef thread0(Lower *L, LLVMValueRef also) {
  LLVMValueRef first = LLVMBuildICmp(L->b, LLVMIntEQ, L->tid, lower_i32(L, 0), "");
  if (also) first = LLVMBuildAnd(L->b, first, also, "");
  LLVMBasicBlockRef on = lower_new_block(L, "thread0"), after = lower_new_block(L, "all");
  LLVMBuildCondBr(L->b, first, on, after);
  LLVMPositionBuilderAtEnd(L->b, on);
  return after;
}

static void rejoin(Lower *L, LLVMBasicBlockRef after) {
  LLVMBuildBr(L->b, after);
  LLVMPositionBuilderAtEnd(L->b, after);
}

static void gpu_only(Lower *L) {
  if (L->target == target_sim()) lower_fail(L, "TMA copies and mbarriers run on the GPU only, not the simulator");
}

static void asm_void(Lower *L, const char *text, const char *cons, LLVMValueRef *args, int n) {
  lower_inline_asm(L, L->void_t, text, cons, args, n, 1);
}

/* Thread 0 initialises them; the fences make the inits visible to the other
 * threads and to the copy engine, the barrier orders every later use. */
void lower_mbar_alloc(Lower *L, const TirOp *op) {
  gpu_only(L);
  lower_local_alloc(L, op);
  int bars = op->results.data[0];
  int64_t slots = lower_type(L, bars)->shape[0];
  LLVMBasicBlockRef after = thread0(L, NULL);
  for (int64_t s = 0; s < slots; s++) {
    LLVMValueRef at = barrier_at(L, bars, lower_i32(L, s));
    asm_void(L, arena_printf(L->arena, "mbarrier.init.shared::cta.b64 [ $0 ], %lld;", (long long)op->ival), "l,~{memory}",
             &at, 1);
  }
  asm_void(L, "fence.mbarrier_init.release.cluster;", "~{memory}", NULL, 0);
  asm_void(L, "fence.proxy.async.shared::cta;", "~{memory}", NULL, 0);
  rejoin(L, after);
  lower_barrier(L);
}

void lower_mbar_wait(Lower *L, const TirOp *op) {
  gpu_only(L);
  LLVMValueRef args[2] = {barrier_at(L, op->operands.data[0], lower_get(L, op->operands.data[1]).v[0]),
                          lower_get(L, op->operands.data[2]).v[0]};
  asm_void(L,
           "{ .reg .pred done; wait: mbarrier.try_wait.parity.shared::cta.b64 done, [ $0 ], $1; @!done bra wait; }",
           "l,r,~{memory}", args, 2);
}

/* Before its bytes serve anything else; the barrier the next access of
 * them brings (a write recorded here) orders the reuse after it. */
void lower_mbar_inval(Lower *L, const TirOp *op) {
  gpu_only(L);
  int bars = op->operands.data[0];
  int64_t slots = lower_type(L, bars)->shape[0];
  LLVMBasicBlockRef after = thread0(L, NULL);
  for (int64_t s = 0; s < slots; s++) {
    LLVMValueRef at = barrier_at(L, bars, lower_i32(L, s));
    asm_void(L, "mbarrier.inval.shared::cta.b64 [ $0 ];", "l,~{memory}", &at, 1);
  }
  rejoin(L, after);
  lower_buffer_write(L, bars);
}

/* Box b of a tile (at element `b * box[0]` of its inner dimension): where its bytes start in the buffer. */
static LLVMValueRef box_start(Lower *L, LLVMValueRef buffer, int64_t b, int64_t box_bytes) {
  LLVMValueRef off = lower_int(L, L->i64, b * box_bytes);
  return LLVMBuildGEP2(L->b, L->i8, buffer, &off, 1, "");
}

void lower_tma_copy(Lower *L, const TirOp *op) {
  gpu_only(L);
  int buffer = op->operands.data[0], bars = op->operands.data[1];
  const TirTensorMap *m = &L->f->tensor_maps.data[op->ival];
  const Type *t = lower_type(L, buffer);
  int elem = dtype_bits(t->elem) / 8;
  int64_t bytes = type_numel(t) * elem, box_bytes = (int64_t)m->box[0] * m->box[1] * elem;
  lower_buffer_async_write(L, buffer);
  LLVMValueRef dst = lower_get(L, buffer).v[0], bar = barrier_at(L, bars, lower_get(L, op->operands.data[2]).v[0]);
  LLVMValueRef c0 = lower_get(L, op->operands.data[4]).v[0], c1 = lower_get(L, op->operands.data[5]).v[0];
  LLVMValueRef map = LLVMGetParam(L->fn, (unsigned)(L->f->params.len + op->ival));
  LLVMBasicBlockRef after = thread0(L, lower_get(L, op->operands.data[3]).v[0]);
  LLVMValueRef expect[2] = {bar, lower_i32(L, bytes)};
  asm_void(L, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [ $0 ], $1;", "l,r,~{memory}", expect, 2);
  for (int64_t b = 0; b * box_bytes < bytes; b++) {
    LLVMValueRef args[5] = {address(L, box_start(L, dst, b, box_bytes)), map,
                            LLVMBuildAdd(L->b, c0, lower_i32(L, b * m->box[0]), ""), c1, bar};
    asm_void(L,
             "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [ $0 ], [ $1, { $2, $3 } ], "
             "[ $4 ];",
             "l,l,r,r,l,~{memory}", args, 5);
  }
  rejoin(L, after);
}

static int generic_access(const TirOp *op) {
  return op->code == TIR_LOAD || op->code == TIR_ATOMIC_RMW || op->code == TIR_ATOMIC_CAS;
}

/* Whether b reads or changes global memory other than by TMA copies. */
static int generic_global_access(const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (generic_access(op)) return 1;
    for (int r = 0; r < 2; r++)
      if (op->regions[r] && generic_global_access(op->regions[r])) return 1;
  }
  return 0;
}

/* Whether global memory is read or changed other than by TMA after
 * `store`: later in program order, or anywhere in a loop around it (its
 * next iteration).  *seen: the store was passed. */
static int accessed_after(const TirBlock *b, const TirOp *store, int *seen) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op == store) *seen = 1;
    if (*seen && generic_access(op)) return 1;
    for (int r = 0; r < 2; r++) {
      int before = *seen;
      if (op->regions[r] && accessed_after(op->regions[r], store, seen)) return 1;
      int loop = op->code == TIR_FOR || op->code == TIR_WHILE;
      if (loop && !before && *seen && (generic_global_access(op->regions[0]) ||
                                       (op->regions[1] && generic_global_access(op->regions[1]))))
        return 1;
    }
  }
  return 0;
}

void lower_tma_store(Lower *L, const TirOp *op) {
  int buffer = op->operands.data[0];
  const TirTensorMap *m = &L->f->tensor_maps.data[op->ival];
  const Type *t = lower_type(L, buffer);
  int elem = dtype_bits(t->elem) / 8;
  int64_t bytes = type_numel(t) * elem, box_bytes = (int64_t)m->box[0] * m->box[1] * elem;
  lower_buffer_read_async_proxy(L, buffer);
  LLVMValueRef src = lower_get(L, buffer).v[0];
  LLVMValueRef c0 = lower_get(L, op->operands.data[1]).v[0], c1 = lower_get(L, op->operands.data[2]).v[0];
  LLVMBasicBlockRef after = thread0(L, NULL);
  for (int64_t b = 0; b * box_bytes < bytes; b++) {
    L->target->tma_store_box(L, (int)op->ival, box_start(L, src, b, box_bytes),
                             LLVMBuildAdd(L->b, c0, lower_i32(L, b * m->box[0]), ""), c1);
  }
  int seen = 0, writes = accessed_after(L->f->body, op, &seen);
  L->target->tma_store_wait(L, writes);
  rejoin(L, after);
  if (writes) L->target->barrier(L);
}
