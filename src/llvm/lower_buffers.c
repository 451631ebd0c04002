/* Shared-memory buffers: where each local_alloc lives, the barriers their
 * accesses need, and the addresses of a tile's registers in a swizzled
 * buffer; local_alloc, memdesc_index, local_store and local_load (the
 * ldmatrix form of local_load is in lower_ldmatrix.c).
 *
 * Placement.  Before lowering, every local_alloc gets a live range in the
 * order ops are lowered (a use inside a loop that does not hold the
 * allocation keeps it live to the loop's end; one made inside a loop lives
 * through the whole body, so the buffers of one iteration never share
 * bytes and need no barrier between them; a tma_store's buffer, written
 * whole by its local_alloc and read whole by the store, lives from one to
 * the other, so the epilogue's scratch can have its bytes before) and the
 * lowest offset, aligned
 * (1024 bytes for NVMMA layouts, whose swizzle the hardware applies to
 * address bits 4-9; 128 otherwise), that no buffer live at the same time
 * uses.  The scratch space of layout conversions and reductions starts
 * above the buffers live at each op (L->shared points there), so a
 * pipelined loop's buffers die with the loop and the epilogue reuses them.
 *
 * Barriers.  Accesses to buffers since the last barrier are kept as byte
 * ranges; a read after another thread's write to the same range, and a
 * write after a read or write, need a barrier first.  Scratch and control
 * flow count as touching everything.  An async_copy's data is visible only
 * after the async_wait that retires it (which is followed by a barrier), so
 * it records nothing itself but waits for pending reads of its range.
 *
 * Addresses.  A shared layout maps element offsets to memory offsets
 * linearly over XOR, so register r of thread t is at S(reg part) ^ S(thread
 * part).  The thread part is computed once per kernel; the bits of a
 * register's part that the thread part can also have are XORed in once per
 * distinct value, the others are added as constants the instruction's
 * immediate offset takes. */
#include "lower.h"

#include <string.h>

enum { ACCESS_READ = 1, ACCESS_WRITE = 2, ACCESS_ASYNC = 4, ACCESS_ASYNC_PROXY = 8, ACCESS_FREE_SLOT = 16, NO_END = 1 << 30 };

/* ---- placement ------------------------------------------------------------------ */

typedef struct Planner {
  Lower *L;
  int counter;
  int depth;                        /* loops around the op being planned */
  int loop_start[64];               /* per depth: the first op index inside the loop */
  Vec(int) extend[64];              /* per depth: buffers live to that loop's end */
} Planner;

static int buffer_bytes(Lower *L, int v) {
  const Type *t = lower_type(L, v);
  return (int)(type_numel(t) * dtype_bits(t->elem) / 8);
}

static void plan_use(Planner *P, int v, int at) {
  int id = P->L->buffer_of[v];
  if (id < 0) return;
  BufferPlan *b = &P->L->buffers.data[id];
  if (at > b->end) b->end = at;
  for (int d = 0; d < P->depth; d++)
    if (P->loop_start[d] > b->start) { /* a loop that does not hold the allocation: live through it */
      vec_push(P->L->arena, &P->extend[d], id);
      break;
    }
}

static void plan_block(Planner *P, const TirBlock *b);

static void plan_op(Planner *P, const TirOp *op) {
  Lower *L = P->L;
  int at = P->counter++;
  for (int k = 0; k < op->operands.len; k++) plan_use(P, op->operands.data[k], at);
  if (op->code == TIR_LOCAL_ALLOC || op->code == TIR_MBAR_ALLOC) { /* in a loop: live through the whole body, beside the loop's other buffers */
    const Layout *l = tir_layout(L->f, op->results.data[0]);
    int start = P->depth ? P->loop_start[P->depth - 1] : at;
    BufferPlan b = {op->results.data[0], start, at, 0, buffer_bytes(L, op->results.data[0]),
                    l && l->kind == LAYOUT_NVMMA ? 1024 : 128, op, at, 0};
    L->buffer_of[b.value] = L->buffers.len;
    if (P->depth) vec_push(L->arena, &P->extend[P->depth - 1], L->buffers.len);
    vec_push(L->arena, &L->buffers, b);
  }
  if (op->code == TIR_MEMDESC_INDEX || op->code == TIR_MEMDESC_TRANS)
    L->buffer_of[op->results.data[0]] = L->buffer_of[op->operands.data[0]];
  if (op->code == TIR_TMA_STORE) {
    BufferPlan *b = &L->buffers.data[L->buffer_of[op->operands.data[0]]];
    b->start = b->made, b->transient = 1;
  }
  if (op->code == TIR_LOCAL_LOAD && L->deferred[op->results.data[0]]) /* read where the dot uses it */
    L->buffer_of[op->results.data[0]] = L->buffer_of[op->operands.data[0]];
  int loop = op->code == TIR_FOR || op->code == TIR_WHILE;
  if (loop && P->depth == 64) lower_fail(L, "loops nested more than 64 deep");
  if (loop) P->loop_start[P->depth++] = P->counter, P->extend[P->depth - 1].len = 0;
  for (int r = 0; r < 2; r++)
    if (op->regions[r]) plan_block(P, op->regions[r]);
  if (!loop) return;
  P->depth--;
  for (int i = 0; i < P->extend[P->depth].len; i++) {
    BufferPlan *b = &L->buffers.data[P->extend[P->depth].data[i]];
    if (b->end < P->counter - 1 && !b->transient) b->end = P->counter - 1;
  }
}

static void plan_block(Planner *P, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_YIELD || op->code == TIR_CONDITION) { /* not lowered as ops, but their uses count */
      for (int k = 0; k < op->operands.len; k++) plan_use(P, op->operands.data[k], P->counter - 1);
      return;
    }
    plan_op(P, op);
  }
}

static int overlaps(int a0, int a1, int b0, int b1) { return a0 < b1 && b0 < a1; }

/* First fit: the lowest aligned offset clear of every buffer live at the same time. */
static void place(Lower *L, int i) {
  BufferPlan *b = &L->buffers.data[i];
  for (int offset = 0;; offset += b->align) {
    int clear = 1;
    for (int j = 0; j < i && clear; j++) {
      const BufferPlan *o = &L->buffers.data[j];
      if (overlaps(b->start, b->end + 1, o->start, o->end + 1) && overlaps(offset, offset + b->bytes, o->offset, o->offset + o->bytes))
        clear = 0, offset = (o->offset + o->bytes + b->align - 1) / b->align * b->align - b->align;
    }
    if (clear) {
      b->offset = offset;
      return;
    }
  }
}

void lower_plan_buffers(Lower *L) {
  L->buffer_of = arena_alloc(L->arena, sizeof(int) * (size_t)(L->f->types.len + 1));
  for (int v = 0; v <= L->f->types.len; v++) L->buffer_of[v] = -1;
  L->shared_offset = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(L->f->types.len + 1)); /* zeroed: none */
  Planner P;
  memset(&P, 0, sizeof P);
  P.L = L;
  plan_block(&P, L->f->body);
  for (int i = 0; i < L->buffers.len; i++) {
    place(L, i);
    const BufferPlan *b = &L->buffers.data[i];
    if (b->offset + b->bytes > lower_max_shared(L)) {
      L->op = b->alloc;
      lower_fail(L, "the shared-memory buffers need %d bytes, more than %s has", b->offset + b->bytes, L->gpu->arch);
    }
    if (b->offset + b->bytes > L->shared_bytes) L->shared_bytes = b->offset + b->bytes;
  }
}

static LLVMValueRef shared_at(Lower *L, int offset) {
  LLVMValueRef c = lower_int(L, L->i64, offset);
  return offset ? LLVMBuildGEP2(L->pro, L->i8, L->raw_shared, &c, 1, "") : L->raw_shared;
}

void lower_enter_op(Lower *L) {
  int at = L->op_counter++, base = 0;
  for (int i = 0; i < L->buffers.len; i++) {
    const BufferPlan *b = &L->buffers.data[i];
    if (b->start <= at && at <= b->end && b->offset + b->bytes > base) base = b->offset + b->bytes;
  }
  base = (base + 127) / 128 * 128;
  if (base != L->scratch_base || !L->shared) {
    L->scratch_base = base;
    L->shared = shared_at(L, base);
  }
}

void lower_note_scratch(Lower *L, int64_t bytes) {
  if (L->scratch_base + bytes > lower_max_shared(L))
    lower_fail(L, "this op needs %lld bytes of shared memory, more than %s has", (long long)(L->scratch_base + bytes),
               L->gpu->arch);
  if (L->scratch_base + bytes > L->shared_bytes) L->shared_bytes = (int)(L->scratch_base + bytes);
}

/* ---- barriers ------------------------------------------------------------------------ */

void lower_shared_unknown(Lower *L) {
  L->shared_dirty = 1;
  Pending all = {0, NO_END, ACCESS_READ | ACCESS_WRITE, -1};
  vec_push(L->arena, &L->pending, all);
}

void lower_barrier(Lower *L) {
  L->target->barrier(L);
  L->shared_dirty = 0;
  L->pending.len = 0;
}

/* Records an access to buffer value v, with a barrier first if another
 * thread's pending access of the same bytes conflicts.  A write into a
 * free slot of a multi-buffer (FREE_SLOT) passes over the pending accesses
 * of its own buffer: the ranges cannot tell slots apart, and those are to
 * other slots. */
static void access_buffer(Lower *L, int v, int kind) {
  int id = L->buffer_of[v];
  const BufferPlan *b = &L->buffers.data[id];
  int lo = b->offset, hi = b->offset + b->bytes, conflict = 0, reads = kind & (ACCESS_READ | ACCESS_ASYNC_PROXY);
  for (int i = 0; i < L->pending.len; i++) {
    const Pending *p = &L->pending.data[i];
    if ((kind & ACCESS_FREE_SLOT) && p->buffer == id) continue;
    if (overlaps(lo, hi, p->lo, p->hi) && ((p->kind & ACCESS_WRITE) || !reads)) conflict = 1;
  }
  if (conflict && (kind & ACCESS_ASYNC_PROXY)) L->target->fence_proxy_async(L); /* the writes, for the async proxy */
  if (conflict) lower_barrier(L);
  L->shared_dirty = 1; /* scratch reusing these bytes later waits for this access */
  if (kind == ACCESS_ASYNC) return;
  Pending p = {lo, hi, reads ? ACCESS_READ : ACCESS_WRITE, id};
  vec_push(L->arena, &L->pending, p);
}

void lower_buffer_read(Lower *L, int v) { access_buffer(L, v, ACCESS_READ); }
void lower_buffer_async_write(Lower *L, int v) { access_buffer(L, v, ACCESS_ASYNC); }
void lower_buffer_write(Lower *L, int v) { access_buffer(L, v, ACCESS_WRITE); }
void lower_buffer_read_async_proxy(Lower *L, int v) { access_buffer(L, v, ACCESS_ASYNC_PROXY); }

/* ---- addresses ------------------------------------------------------------------------ */

/* The memory offset (elements) of element offset e under shared layout s. */
static uint32_t memory_offset(const LinearLayout *s, uint32_t e) { return ll_reg_offset(s, e); }

void lower_buffer_view(Lower *L, int buffer, const LinearLayout *tile, BufferView *out) {
  LinearLayout s;
  lower_linear(L, buffer, &s);
  memset(out, 0, sizeof *out);
  out->base = lower_get(L, buffer).v[0];
  out->elem_bytes = dtype_bits(lower_type(L, buffer)->elem) / 8;
  out->n_reg = tile->n_reg;
  for (int i = 0; i < tile->n_reg; i++) out->reg[i] = memory_offset(&s, tile->reg[i]);
  for (int i = 0; i < tile->n_lane; i++) out->thread[i] = memory_offset(&s, tile->lane[i]);
  for (int i = 0; i < tile->n_warp; i++) out->thread[LANE_BITS + i] = memory_offset(&s, tile->warp[i]);
  for (int i = 0; i < TID_BITS; i++)
    if ((1 << i) < L->num_threads) out->thread_mask |= out->thread[i];
}

uint32_t lower_view_offset(const BufferView *v, uint32_t r) {
  uint32_t off = 0;
  for (int i = 0; i < v->n_reg; i++)
    if (r >> i & 1) off ^= v->reg[i];
  return off;
}

/* XOR over the tid bits of their offsets, plus `x`, in bytes: once per kernel. */
static LLVMValueRef thread_xor(Lower *L, const BufferView *v, uint32_t x) {
  for (int i = 0; i < L->xors.len; i++) {
    const ThreadXor *t = &L->xors.data[i];
    if (t->x == x && t->elem_bytes == v->elem_bytes && !memcmp(t->thread, v->thread, sizeof t->thread)) return t->value;
  }
  LLVMBuilderRef b = L->pro;
  LLVMValueRef acc = lower_i32(L, (int64_t)x);
  for (int i = 0; i < TID_BITS && (1 << i) < L->num_threads; i++) {
    if (!v->thread[i]) continue;
    LLVMValueRef bit = LLVMBuildAnd(b, LLVMBuildLShr(b, L->tid, lower_i32(L, i), ""), lower_i32(L, 1), "");
    acc = LLVMBuildXor(b, acc, LLVMBuildMul(b, bit, lower_i32(L, v->thread[i]), ""), "");
  }
  LLVMValueRef bytes = LLVMBuildMul(b, acc, lower_i32(L, v->elem_bytes), "");
  ThreadXor t = {{0}, x, v->elem_bytes, LLVMBuildZExt(b, bytes, L->i64, "")};
  memcpy(t.thread, v->thread, sizeof t.thread);
  vec_push(L->arena, &L->xors, t);
  return t.value;
}

LLVMValueRef lower_view_address(Lower *L, const BufferView *v, uint32_t offset) {
  uint32_t low = offset & v->thread_mask, high = offset & ~v->thread_mask;
  LLVMValueRef at = LLVMBuildGEP2(L->b, L->i8, v->base, (LLVMValueRef[]){thread_xor(L, v, low)}, 1, "");
  LLVMValueRef c = lower_int(L, L->i64, (int64_t)high * v->elem_bytes);
  return high ? LLVMBuildGEP2(L->b, L->i8, at, &c, 1, "") : at;
}

/* Low register bits whose offsets are 1, 2, 4...: one access of up to 16
 * bytes, aligned because no other part of an offset has those bits. */
int lower_view_vector_bits(const BufferView *v, int max_bytes) {
  int k = 0;
  while (k < v->n_reg && v->reg[k] == (1u << k) && (v->elem_bytes << (k + 1)) <= max_bytes) k++;
  uint32_t low = (1u << k) - 1, others = v->thread_mask;
  for (int i = k; i < v->n_reg; i++) others |= v->reg[i];
  while (k && (others & low)) k--, low >>= 1;
  return k;
}

/* ---- the ops ------------------------------------------------------------------------ */

static void store_tile(Lower *L, int buffer, int tile, Regs value, int free_slot) {
  LinearLayout ll;
  lower_linear(L, tile, &ll);
  BufferView v;
  lower_buffer_view(L, buffer, &ll, &v);
  int bits = lower_view_vector_bits(&v, 16), n = 1 << bits, word_bits, words;
  LLVMTypeRef word = lower_word_type(L, v.elem_bytes * n, v.elem_bytes * 8, &word_bits, &words);
  access_buffer(L, buffer, ACCESS_WRITE | (free_slot ? ACCESS_FREE_SLOT : 0));
  LLVMValueRef elems[16];
  for (uint32_t r = 0; r < (uint32_t)value.n; r += (uint32_t)n) {
    for (int j = 0; j < n; j++) elems[j] = value.v[r + (uint32_t)j];
    LLVMValueRef st = LLVMBuildStore(L->b, lower_pack(L, elems, n, word), lower_view_address(L, &v, lower_view_offset(&v, r)));
    LLVMSetAlignment(st, (unsigned)(v.elem_bytes * n));
  }
}

void lower_local_alloc(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  Regs r = lower_regs(L, 1);
  r.v[0] = shared_at(L, L->buffers.data[L->buffer_of[res]].offset);
  L->shared_offset[res] = lower_int(L, L->i32, L->buffers.data[L->buffer_of[res]].offset);
  lower_result(L, op, 0, r);
  if (op->operands.len) store_tile(L, res, op->operands.data[0], lower_get(L, op->operands.data[0]), 0);
}

void lower_memdesc_index(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  LLVMValueRef index = lower_get(L, op->operands.data[1]).v[0], within = L->shared_offset[op->operands.data[0]];
  if (within) { /* the same address in 32 bits, for wgmma's descriptors */
    LLVMValueRef slot = LLVMBuildTrunc(L->b, index, L->i32, "");
    LLVMValueRef at = LLVMBuildMul(L->b, slot, lower_int(L, L->i32, buffer_bytes(L, res)), "");
    L->shared_offset[res] = LLVMBuildAdd(L->b, within, at, "");
  }
  index = LLVMBuildSExt(L->b, index, L->i64, "");
  LLVMValueRef bytes = LLVMBuildMul(L->b, index, lower_int(L, L->i64, buffer_bytes(L, res)), "");
  Regs r = lower_regs(L, 1);
  r.v[0] = LLVMBuildGEP2(L->b, L->i8, lower_get(L, op->operands.data[0]).v[0], &bytes, 1, "");
  lower_result(L, op, 0, r);
}

/* The same bytes: only the layout (the wgmma operand's major-ness) differs. */
void lower_memdesc_trans(Lower *L, const TirOp *op) {
  L->shared_offset[op->results.data[0]] = L->shared_offset[op->operands.data[0]];
  lower_result(L, op, 0, lower_get(L, op->operands.data[0]));
}

/* A store into a free slot is read only after the loop's next wait and
 * its barrier; a wgmma reads it through the async proxy, so the writes are
 * fenced for it here, before that barrier. */
void lower_local_store(Lower *L, const TirOp *op) {
  int buffer = op->operands.data[1], free_slot = op->flags & FREE_SLOT;
  store_tile(L, buffer, op->operands.data[0], lower_get(L, op->operands.data[0]), free_slot);
  const Layout *l = tir_layout(L->f, buffer);
  if (free_slot && l && l->kind == LAYOUT_NVMMA) L->target->fence_proxy_async(L);
}

/* A buffer's elements into the registers of the result's layout, in
 * vectors where the layout's registers are contiguous in memory. */
void lower_local_load(Lower *L, const TirOp *op) {
  int buffer = op->operands.data[0], res = op->results.data[0];
  LinearLayout ll;
  lower_linear(L, res, &ll);
  lower_buffer_read(L, buffer);
  if (lower_ldmatrix(L, op, &ll)) return;
  BufferView v;
  lower_buffer_view(L, buffer, &ll, &v);
  int bits = lower_view_vector_bits(&v, 16), n = 1 << bits, word_bits, words;
  LLVMTypeRef word = lower_word_type(L, v.elem_bytes * n, v.elem_bytes * 8, &word_bits, &words);
  LLVMTypeRef elem = lower_elem_type(L, lower_type(L, res));
  Regs out = lower_regs(L, ll_registers(&ll));
  for (uint32_t r = 0; r < (uint32_t)out.n; r += (uint32_t)n) {
    LLVMValueRef x = LLVMBuildLoad2(L->b, word, lower_view_address(L, &v, lower_view_offset(&v, r)), "");
    LLVMSetAlignment(x, (unsigned)(v.elem_bytes * n));
    lower_unpack(L, x, elem, n, out.v + r);
  }
  lower_result(L, op, 0, out);
}
