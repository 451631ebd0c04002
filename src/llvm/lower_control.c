/* Structured control flow to LLVM blocks: for, if and while, with one phi
 * per register of every carried value.  Carried values, yields and results
 * are moved into the layout of the value they become, if they have another.
 *
 * A for loop over a variable of 32 bits or fewer counts its iterations in
 * an i32 against a trip count computed once, in 64 bits, before the loop
 * (at most 2^32 - 1), so a bound near the type's maximum ends the loop
 * instead of wrapping around, as the interpreter's does, while the loop
 * itself adds and compares in 32 bits; a 64-bit variable is its own
 * counter.  Scalars are the same in every
 * thread, so branches on them are uniform and barriers inside them are safe
 * (a scalar read from memory that may change under the kernel is volatile,
 * and one thread reads it for all: lower_memory.c). */
#include "lower.h"

#include <llvm-c/DebugInfo.h>

#include <string.h>

enum { MAX_UNROLLED_INSTRUCTIONS = 1 << 14, CALL_SIZE = 64 }; /* an unrolled loop body's size, at most (function_size) */

/* `value`'s registers in the layout of `target` (a value of the same type). */
static Regs in_layout_of(Lower *L, int value, int target) {
  LinearLayout have, want;
  lower_linear(L, value, &have);
  lower_linear(L, target, &want);
  return lower_move(L, lower_get(L, value), &have, &want, NULL, lower_elem_type(L, lower_type(L, value)));
}

static Regs phis_for(Lower *L, int value) {
  LinearLayout ll;
  lower_linear(L, value, &ll);
  Regs r = lower_regs(L, ll_registers(&ll));
  for (int i = 0; i < r.n; i++) r.v[i] = LLVMBuildPhi(L->b, lower_elem_type(L, lower_type(L, value)), "");
  return r;
}

static void add_incoming(Regs phis, Regs values, LLVMBasicBlockRef from) {
  for (int i = 0; i < phis.n; i++) LLVMAddIncoming(phis.v[i], &values.v[i], &from, 1);
}

/* The terminator (yield or condition) that ends a region. */
static const TirOp *terminator(const TirBlock *b) { return b->ops.len ? b->ops.data[b->ops.len - 1] : NULL; }

/* ---- for ------------------------------------------------------------------------------ */

typedef struct Induction {
  LLVMTypeRef type;   /* i64, or the variable's type when that is 64 bits */
  int is_signed;
} Induction;

static LLVMValueRef widen(Lower *L, const Induction *ind, LLVMValueRef v) {
  if (LLVMTypeOf(v) == ind->type) return v;
  return ind->is_signed ? LLVMBuildSExt(L->b, v, ind->type, "") : LLVMBuildZExt(L->b, v, ind->type, "");
}

/* step > 0 ? iv < ub : iv > ub */
static LLVMValueRef in_range(Lower *L, LLVMValueRef iv, LLVMValueRef ub, LLVMValueRef step) {
  LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(step));
  LLVMValueRef up = LLVMBuildICmp(L->b, LLVMIntSGT, step, zero, "");
  return LLVMBuildSelect(L->b, up, LLVMBuildICmp(L->b, LLVMIntSLT, iv, ub, ""), LLVMBuildICmp(L->b, LLVMIntSGT, iv, ub, ""), "");
}

typedef struct ForLoop {
  Induction ind;
  LLVMValueRef iv, ub, step;
  LLVMValueRef trip, trips; /* loops over 32 bits or fewer: the iteration's number and their count, i32; else NULL */
  LLVMBasicBlockRef header, exit;
  LLVMValueRef back_edge;  /* the latch's branch to the header */
  Regs *carried;       /* the phis of the carried values, in the body arguments' layouts */
} ForLoop;

/* How many times a loop over lb, lb + step... while below ub (above, for a
 * negative step) runs, computed in 64 bits from 32-bit (or narrower) bounds,
 * as an i32: at most 2^32 - 1.  None for a zero step. */
static LLVMValueRef trip_count(Lower *L, LLVMValueRef lb, LLVMValueRef ub, LLVMValueRef step) {
  LLVMBuilderRef b = L->b;
  LLVMValueRef zero = LLVMConstNull(L->i64), one = LLVMConstInt(L->i64, 1, 0);
  LLVMValueRef up = LLVMBuildICmp(b, LLVMIntSGT, step, zero, "");
  LLVMValueRef span = LLVMBuildSelect(b, up, LLVMBuildSub(b, ub, lb, ""), LLVMBuildSub(b, lb, ub, ""), "");
  LLVMValueRef stride = LLVMBuildSelect(b, up, step, LLVMBuildNeg(b, step, ""), "");
  LLVMValueRef none = LLVMBuildOr(b, LLVMBuildICmp(b, LLVMIntSLE, span, zero, ""),
                                  LLVMBuildICmp(b, LLVMIntEQ, stride, zero, ""), "");
  LLVMValueRef divisor = LLVMBuildSelect(b, none, one, stride, "");
  LLVMValueRef n = LLVMBuildUDiv(b, LLVMBuildSub(b, LLVMBuildAdd(b, span, divisor, ""), one, ""), divisor, "");
  return LLVMBuildTrunc(b, LLVMBuildSelect(b, none, zero, n, ""), L->i32, "trips");
}

/* The loop's header: the induction variable and carried values as phis,
 * the test; leaves the builder in the body. */
static void for_header(Lower *L, const TirOp *op, ForLoop *F) {
  const TirBlock *body = op->regions[0];
  const Type *it = lower_type(L, op->operands.data[0]);
  int narrow = dtype_bits(it->elem) < 64;
  F->ind = (Induction){narrow ? L->i64 : lower_elem_type(L, it), dtype_kind(it->elem) == DK_SINT};
  LLVMValueRef lb = lower_get(L, op->operands.data[0]).v[0];
  F->step = lower_get(L, op->operands.data[2]).v[0];
  F->ub = widen(L, &F->ind, lower_get(L, op->operands.data[1]).v[0]); /* in 64 bits */
  F->trips = narrow ? trip_count(L, widen(L, &F->ind, lb), F->ub, widen(L, &F->ind, F->step)) : NULL;
  int n = op->results.len;
  Regs *init = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1));
  F->carried = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) init[k] = in_layout_of(L, op->operands.data[3 + k], body->args.data[1 + k]);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), entry = lower_new_block(L, "for_body");
  F->header = lower_new_block(L, "for");
  F->exit = lower_new_block(L, "for_end");
  LLVMBuildBr(L->b, F->header);
  LLVMPositionBuilderAtEnd(L->b, F->header);
  F->iv = LLVMBuildPhi(L->b, LLVMTypeOf(lb), "iv");
  LLVMAddIncoming(F->iv, &lb, &pre, 1);
  if (narrow) {
    LLVMValueRef first = LLVMConstNull(L->i32);
    F->trip = LLVMBuildPhi(L->b, L->i32, "trip");
    LLVMAddIncoming(F->trip, &first, &pre, 1);
  }
  for (int k = 0; k < n; k++) {
    F->carried[k] = phis_for(L, body->args.data[1 + k]);
    add_incoming(F->carried[k], init[k], pre);
  }
  LLVMValueRef more = narrow ? LLVMBuildICmp(L->b, LLVMIntULT, F->trip, F->trips, "") : in_range(L, F->iv, F->ub, F->step);
  LLVMBuildCondBr(L->b, more, entry, F->exit);
  LLVMPositionBuilderAtEnd(L->b, entry);
}

/* tl.range's loop_unroll_factor: LLVM's loop unroller repeats the body `count` times (a remainder loop
 * takes the iterations left), through the back edge's !llvm.loop metadata, which names itself. */
static void unroll_hint(Lower *L, LLVMValueRef back_edge, int count) {
  if (count < 2) return;
  static const char key[] = "llvm.loop.unroll.count";
  LLVMMetadataRef self = LLVMTemporaryMDNode(L->ctx, NULL, 0);
  LLVMMetadataRef pair[2] = {LLVMMDStringInContext2(L->ctx, key, sizeof key - 1),
                             LLVMValueAsMetadata(LLVMConstInt(L->i32, (unsigned long long)count, 0))};
  LLVMMetadataRef parts[2] = {self, LLVMMDNodeInContext2(L->ctx, pair, 2)};
  LLVMMetadataRef loop = LLVMMDNodeInContext2(L->ctx, parts, 2);
  LLVMMetadataReplaceAllUsesWith(self, loop);
  LLVMSetMetadata(back_edge, LLVMGetMDKindIDInContext(L->ctx, "llvm.loop", 9), LLVMMetadataAsValue(L->ctx, loop));
}

/* The body's yields into the phis, the next induction value, the branch back. */
static void for_latch(Lower *L, const TirOp *op, ForLoop *F) {
  const TirBlock *body = op->regions[0];
  const TirOp *yield = terminator(body);
  for (int k = 0; k < op->results.len; k++)
    add_incoming(F->carried[k], in_layout_of(L, yield->operands.data[k], body->args.data[1 + k]), LLVMGetInsertBlock(L->b));
  LLVMValueRef next = LLVMBuildAdd(L->b, F->iv, F->step, "");
  /* A counted loop runs the body only where lb + k * step is below ub (or
   * above): only the last step can wrap, and its value is never read. */
  if (F->trips && F->ind.is_signed) LLVMSetNSW(next, 1);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMAddIncoming(F->iv, &next, &latch, 1);
  if (F->trips) {
    LLVMValueRef after = LLVMBuildAdd(L->b, F->trip, LLVMConstInt(L->i32, 1, 0), "");
    LLVMAddIncoming(F->trip, &after, &latch, 1);
  }
  F->back_edge = LLVMBuildBr(L->b, F->header);
  LLVMPositionBuilderAtEnd(L->b, F->exit);
}

/* The size of the function being lowered, in instructions; a call counts as CALL_SIZE (libdevice's
 * functions are inlined later, tens to hundreds of instructions each). */
static int function_size(Lower *L) {
  int n = 0;
  LLVMValueRef fn = LLVMGetBasicBlockParent(LLVMGetInsertBlock(L->b));
  for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b))
    for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
      n += LLVMGetInstructionOpcode(i) == LLVMCall ? CALL_SIZE : 1;
  return n;
}

static int has_loop(const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_FOR || op->code == TIR_WHILE) return 1;
    for (int r = 0; r < 2; r++)
      if (op->regions[r] && has_loop(op->regions[r])) return 1;
  }
  return 0;
}

/* The unroll count asked of LLVM for a loop whose body lowered to `body` (function_size): the loop's
 * factor, for an innermost loop only and cut so that the unrolled body stays within
 * MAX_UNROLLED_INSTRUCTIONS.  Unrolled outer loops multiply (three nested loops of 64 made LLVM use
 * 24 GiB), and no kernel may make the compiler run out of memory. */
static int unroll_count(const TirOp *op, int body) {
  if (op->ival2 < 2 || has_loop(op->regions[0])) return 0;
  int64_t most = MAX_UNROLLED_INSTRUCTIONS / (body > 0 ? body : 1);
  return (int)(op->ival2 < most ? op->ival2 : most);
}

/* 32-bit registers of the carried values other than pointers (lower.c's occupancy hint). */
static int carried_words(const Regs *carried, int n) {
  int words = 0;
  for (int k = 0; k < n; k++)
    if (carried[k].n && LLVMGetTypeKind(LLVMTypeOf(carried[k].v[0])) != LLVMPointerTypeKind)
      words += carried[k].n * ((lower_type_bits(LLVMTypeOf(carried[k].v[0])) + 31) / 32);
  return words;
}

/* What a loop adds to the counts of lower.c's occupancy hint. */
typedef struct LoopWords {
  int carried, pointers_before;
} LoopWords;

/* Around the lowering of a loop's blocks: the loop's carried values join
 * the nest's, and its accesses count from here (lower_note_access).  The
 * pointers of an inner loop's accesses are live only in it, so leave_loop
 * forgets them; an outer loop's accesses after the inner loop are missed. */
static LoopWords enter_loop(Lower *L, const Regs *carried, int n) {
  LoopWords w = {carried_words(carried, n), L->loop_pointer_words};
  L->loop_depth++;
  L->carried_words += w.carried;
  return w;
}

static void leave_loop(Lower *L, LoopWords w) {
  int kept = L->carried_words + L->loop_pointer_words;
  if (kept > L->most_loop_words) L->most_loop_words = kept;
  L->loop_depth--;
  L->carried_words -= w.carried;
  L->loop_pointer_words = w.pointers_before;
}

void lower_for(Lower *L, const TirOp *op) {
  const TirBlock *body = op->regions[0];
  LLVMTypeRef it = lower_elem_type(L, lower_type(L, op->operands.data[0]));
  ForLoop F;
  for_header(L, op, &F);
  Regs iv = lower_regs(L, 1);
  iv.v[0] = LLVMTypeOf(F.iv) == it ? F.iv : LLVMBuildTrunc(L->b, F.iv, it, "");
  lower_set(L, body->args.data[0], iv);
  for (int k = 0; k < op->results.len; k++) lower_set(L, body->args.data[1 + k], F.carried[k]);
  lower_shared_unknown(L);
  LoopWords words = enter_loop(L, F.carried, op->results.len);
  int before = op->ival2 > 1 ? function_size(L) : 0;
  lower_block(L, body);
  int lowered = op->ival2 > 1 ? function_size(L) - before : 0;
  leave_loop(L, words);
  for_latch(L, op, &F);
  unroll_hint(L, F.back_edge, unroll_count(op, lowered));
  for (int k = 0; k < op->results.len; k++)
    lower_set(L, op->results.data[k], in_layout_of(L, body->args.data[1 + k], op->results.data[k]));
  lower_shared_unknown(L);
}

/* ---- if ------------------------------------------------------------------------------- */

/* Lowers a branch; its yielded values (in the results' layouts) into out. */
static LLVMBasicBlockRef lower_branch(Lower *L, const TirOp *op, const TirBlock *b, Regs *out) {
  lower_block(L, b);
  const TirOp *yield = terminator(b);
  for (int k = 0; k < op->results.len && yield; k++) out[k] = in_layout_of(L, yield->operands.data[k], op->results.data[k]);
  return LLVMGetInsertBlock(L->b);
}

void lower_if(Lower *L, const TirOp *op) {
  int n = op->results.len, dirty = L->shared_dirty;
  Regs *a = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1)), *b = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1));
  LLVMBasicBlockRef then_ = lower_new_block(L, "then"), else_ = lower_new_block(L, "else"), merge = lower_new_block(L, "endif");
  LLVMBuildCondBr(L->b, lower_get(L, op->operands.data[0]).v[0], then_, else_);
  LLVMPositionBuilderAtEnd(L->b, then_);
  Pending *before = arena_alloc(L->arena, sizeof(Pending) * (size_t)(L->pending.len + 1));
  int n_before = L->pending.len;
  if (n_before) memcpy(before, L->pending.data, sizeof(Pending) * (size_t)n_before);
  LLVMBasicBlockRef then_end = lower_branch(L, op, op->regions[0], a);
  int then_dirty = L->shared_dirty;
  LLVMBuildBr(L->b, merge);
  L->shared_dirty = dirty; /* the else branch starts from the state before the if */
  L->pending.len = 0;
  for (int i = 0; i < n_before; i++) vec_push(L->arena, &L->pending, before[i]);
  LLVMPositionBuilderAtEnd(L->b, else_);
  LLVMBasicBlockRef else_end = lower_branch(L, op, op->regions[1], b);
  LLVMBuildBr(L->b, merge);
  if (then_dirty) lower_shared_unknown(L);
  LLVMPositionBuilderAtEnd(L->b, merge);
  for (int k = 0; k < n; k++) {
    Regs phis = phis_for(L, op->results.data[k]);
    add_incoming(phis, a[k], then_end);
    add_incoming(phis, b[k], else_end);
    lower_set(L, op->results.data[k], phis);
  }
}

/* ---- while ---------------------------------------------------------------------------- */

void lower_while(Lower *L, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  int n = op->operands.len;
  Regs *args = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1));
  Regs *init = arena_alloc(L->arena, sizeof(Regs) * (size_t)(n + 1));
  for (int k = 0; k < n; k++) init[k] = in_layout_of(L, op->operands.data[k], before->args.data[k]);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), test = lower_new_block(L, "while"),
                    body = lower_new_block(L, "while_body"), exit = lower_new_block(L, "while_end");
  LLVMBuildBr(L->b, test);
  LLVMPositionBuilderAtEnd(L->b, test);
  for (int k = 0; k < n; k++) {
    args[k] = phis_for(L, before->args.data[k]);
    add_incoming(args[k], init[k], pre);
    lower_set(L, before->args.data[k], args[k]);
  }
  lower_shared_unknown(L);
  LoopWords words = enter_loop(L, args, n);
  lower_block(L, before);
  const TirOp *cond = terminator(before);
  LLVMBuildCondBr(L->b, lower_get(L, cond->operands.data[0]).v[0], body, exit);
  LLVMPositionBuilderAtEnd(L->b, body);
  for (int k = 0; k < after->args.len; k++) lower_set(L, after->args.data[k], in_layout_of(L, cond->operands.data[k + 1], after->args.data[k]));
  lower_block(L, after);
  leave_loop(L, words);
  const TirOp *yield = terminator(after);
  for (int k = 0; k < n; k++) add_incoming(args[k], in_layout_of(L, yield->operands.data[k], before->args.data[k]), LLVMGetInsertBlock(L->b));
  LLVMBuildBr(L->b, test);
  LLVMPositionBuilderAtEnd(L->b, exit);
  for (int k = 0; k < op->results.len; k++) lower_set(L, op->results.data[k], in_layout_of(L, cond->operands.data[k + 1], op->results.data[k]));
  lower_shared_unknown(L);
}
