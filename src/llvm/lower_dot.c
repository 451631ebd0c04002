/* dot on the FMA path (tensor cores: lower_mma.c).  The accumulator stays in
 * its layout; A and B are needed in the FMA operand layouts derived from it
 * (a thread holds every K element of the rows of A and the columns of B
 * its accumulator elements need).  For each accumulator element and each k
 * in increasing order, acc = fma(a[m, k], b[k, n], acc) in fp32 (fp16 and
 * bf16 operands extended, tf32 operands rounded with cvt.rna.tf32.f32), in
 * fp64 for fp64 and i32 for int8: the interpreter's order and rounding, so
 * the results are bit-identical.  Batched (rank 3) dots keep the batch.
 *
 * When both operands arrive through convert_layout (the usual case: loads
 * in coalesced layouts; the conversion may sit outside the dot's loop), the
 * conversions are not done as such: the sources
 * go to shared memory once, and a loop over K in steps of UNROLL reads each
 * step's operand elements from there (vectorised along K for A), so the
 * code and the registers it needs grow with the accumulator, not with K.
 * Otherwise the operands are converted to the operand layouts and the whole
 * product is unrolled in registers. */
#include "lower.h"

#include <string.h>

enum { UNROLL = 8, STEP_VALUES = 128 }; /* K steps per loop iteration, at most; operand values they may load */

typedef struct Dims {
  int rank;
  int64_t batch, m, n, k;
} Dims;

static int log2_of(int64_t x) { return x > 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0; }

/* Flat offset of (z, i, j) in a [batch,] rows x cols tile. */
static uint32_t flat3(int64_t z, int64_t i, int64_t j, int64_t rows, int64_t cols) { return (uint32_t)((z * rows + i) * cols + j); }

/* The operand layout of A (op 0, [M, K]) or B (op 1, [K, N]) for an
 * accumulator layout: its bases with the other operand's dimension dropped,
 * then registers for all of K. */
static void operand_layout(const LinearLayout *acc, const Dims *d, int op, LinearLayout *out) {
  memset(out, 0, sizeof *out);
  out->rank = d->rank;
  if (d->rank == 3) out->shape[0] = d->batch;
  out->shape[d->rank - 2] = op == 0 ? d->m : d->k;
  out->shape[d->rank - 1] = op == 0 ? d->k : d->n;
  int64_t rows = out->shape[d->rank - 2], cols = out->shape[d->rank - 1];
  const uint32_t *lists[3] = {acc->reg, acc->lane, acc->warp};
  uint32_t *outs[3] = {out->reg, out->lane, out->warp};
  int counts[3] = {acc->n_reg, acc->n_lane, acc->n_warp}, *n_out[3] = {&out->n_reg, &out->n_lane, &out->n_warp};
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < counts[l]; i++) {
      int64_t c[MAX_RANK] = {0};
      ll_coords(acc, lists[l][i], c);
      int64_t z = d->rank == 3 ? c[0] : 0, m = c[d->rank - 2], n = c[d->rank - 1];
      uint32_t b = op == 0 ? (n ? 0 : flat3(z, m, 0, rows, cols)) : (m ? 0 : flat3(z, 0, n, rows, cols));
      if (l == 0 && !b) continue; /* registers never repeat an element */
      outs[l][(*n_out[l])++] = b;
    }
  for (int64_t k = 1; k < d->k; k <<= 1) out->reg[out->n_reg++] = (uint32_t)(op == 0 ? k : k * cols);
}

/* An operand element ready for the FMA: extended to the accumulation type. */
static LLVMValueRef fma_input(Lower *L, LLVMValueRef v, LLVMTypeRef acc_type, int tf32) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(acc_type) == LLVMIntegerTypeKind) return LLVMBuildSExt(L->b, v, acc_type, "");
  if (t != acc_type) v = LLVMBuildFPExt(L->b, v, acc_type, "");
  return tf32 ? L->target->round_tf32(L, v) : v;
}

static LLVMValueRef fma_step(Lower *L, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef y) {
  LLVMTypeRef t = LLVMTypeOf(acc);
  if (LLVMGetTypeKind(t) == LLVMIntegerTypeKind) return LLVMBuildAdd(L->b, acc, LLVMBuildMul(L->b, x, y, ""), "");
  LLVMValueRef args[3] = {x, y, acc};
  return lower_intrinsic(L, "llvm.fma", &t, 1, args, 3);
}

static int find(Lower *L, const LinearLayout *ll, uint32_t off) {
  int r = ll_find_register(ll, off);
  if (r < 0) lower_fail(L, "internal error: a dot operand lacks an element its accumulator needs");
  return r;
}

typedef struct Dot {
  Dims d;
  LinearLayout acc, la, lb;  /* la, lb: rows (cols) first, then the K registers */
  int is_int, tf32;
  LLVMTypeRef at;            /* accumulation type */
  int *arow, *bcol;          /* per accumulator register: its row of A, column of B (K bits 0) */
} Dot;

static void plan_dot(Lower *L, const TirOp *op, Dot *D) {
  int res = op->results.data[0];
  const Type *ta = lower_type(L, op->operands.data[0]);
  D->d = (Dims){ta->rank, ta->rank == 3 ? ta->shape[0] : 1, ta->shape[ta->rank - 2],
                lower_type(L, op->operands.data[1])->shape[ta->rank - 1], ta->shape[ta->rank - 1]};
  lower_linear(L, res, &D->acc);
  operand_layout(&D->acc, &D->d, 0, &D->la);
  operand_layout(&D->acc, &D->d, 1, &D->lb);
  D->is_int = !dtype_is_float(ta->elem);
  D->tf32 = op->kind == DOT_TF32 && ta->elem == DT_FP32;
  D->at = D->is_int ? L->i32 : ta->elem == DT_FP64 ? L->f64 : L->f32;
  int n = ll_registers(&D->acc);
  D->arow = arena_alloc(L->arena, sizeof(int) * (size_t)n);
  D->bcol = arena_alloc(L->arena, sizeof(int) * (size_t)n);
  for (int r = 0; r < n; r++) {
    int64_t x[MAX_RANK] = {0};
    ll_coords(&D->acc, ll_reg_offset(&D->acc, (uint32_t)r), x);
    int64_t z = D->d.rank == 3 ? x[0] : 0;
    D->arow[r] = find(L, &D->la, flat3(z, x[D->d.rank - 2], 0, D->d.m, D->d.k));
    D->bcol[r] = find(L, &D->lb, flat3(z, 0, x[D->d.rank - 1], D->d.k, D->d.n));
  }
}

/* The accumulator's initial registers in the accumulation type. */
static Regs initial_acc(Lower *L, const TirOp *op, const Dot *D) {
  Regs c = lower_operand(L, op, 2, &D->acc), out = lower_regs(L, c.n);
  for (int r = 0; r < c.n; r++) out.v[r] = D->is_int || LLVMTypeOf(c.v[r]) == D->at ? c.v[r] : LLVMBuildFPExt(L->b, c.v[r], D->at, "");
  return out;
}

static void finish(Lower *L, const TirOp *op, Regs acc) {
  LLVMTypeRef et = lower_elem_type(L, lower_type(L, op->results.data[0]));
  for (int r = 0; r < acc.n; r++)
    if (LLVMTypeOf(acc.v[r]) != et) acc.v[r] = LLVMBuildFPTrunc(L->b, acc.v[r], et, "");
  lower_result(L, op, 0, acc);
}

/* ---- operands in registers -------------------------------------------------------- */

static void dot_in_registers(Lower *L, const TirOp *op, const Dot *D) {
  Regs a = lower_operand(L, op, 0, &D->la), b = lower_operand(L, op, 1, &D->lb);
  Regs xa = lower_regs(L, a.n), xb = lower_regs(L, b.n), acc = initial_acc(L, op, D);
  for (int i = 0; i < a.n; i++) xa.v[i] = fma_input(L, a.v[i], D->at, D->tf32);
  for (int i = 0; i < b.n; i++) xb.v[i] = fma_input(L, b.v[i], D->at, D->tf32);
  for (int64_t k = 0; k < D->d.k; k++) {
    int ak = find(L, &D->la, (uint32_t)k), bk = find(L, &D->lb, (uint32_t)(k * D->d.n));
    for (int r = 0; r < acc.n; r++) acc.v[r] = fma_step(L, acc.v[r], xa.v[D->arow[r] ^ ak], xb.v[D->bcol[r] ^ bk]);
  }
  finish(L, op, acc);
}

/* ---- operands from shared memory ---------------------------------------------------- */

typedef struct Staged {
  Scratch s;
  int n_rest;          /* operand register bits that are not K: rows of A, columns of B */
  uint32_t k_unit;     /* flat offset of k = 1 */
  LLVMValueRef thread; /* this thread's pointer into the buffer */
} Staged;

/* The reading side: A's K bits first (vectors along K), B's columns first. */
static void reading_side(const LinearLayout *ll, int n_rest, int k_bits, int k_first, Side *s) {
  Side full;
  lower_side(ll, NULL, &full);
  *s = full;
  for (int i = 0; i < n_rest + k_bits; i++) {
    int from = k_first ? (i < k_bits ? n_rest + i : i - k_bits) : i;
    s->reg[i] = full.reg[from];
  }
}

/* Source registers of a convert_layout feeding operand k, written to scratch at `base`. */
static void stage(Lower *L, const TirOp *op, const Dot *D, int k, int base, Staged *st) {
  const TirOp *cvt = L->defs[op->operands.data[k]];
  int src = cvt->operands.data[0];
  const LinearLayout *ll = k == 0 ? &D->la : &D->lb;
  int k_bits = log2_of(D->d.k);
  st->n_rest = ll->n_reg - k_bits;
  st->k_unit = k == 0 ? 1 : (uint32_t)D->d.n;
  LinearLayout from;
  lower_linear(L, src, &from);
  Exchange x;
  memset(&x, 0, sizeof x);
  lower_side(&from, NULL, &x.from);
  reading_side(ll, st->n_rest, k_bits, k == 0, &x.to);
  x.space_bits = log2_of(shape_numel(from.rank, from.shape));
  x.elem = lower_elem_type(L, lower_type(L, src));
  lower_scratch_plan(L, &x, base, lower_max_shared(L), &st->s);
  lower_scratch_write(L, &st->s, lower_get(L, src), 0);
  st->thread = lower_scratch_thread(L, &st->s, x.to.thread);
}

static void load_vector(Lower *L, const Staged *st, LLVMValueRef step, uint32_t off, int n, LLVMValueRef *out) {
  int word_bits, words;
  LLVMTypeRef word = lower_word_type(L, st->s.elem_bytes * n, st->s.elem_bytes * 8, &word_bits, &words);
  LLVMValueRef c = lower_int(L, L->i64, lower_scratch_offset(&st->s, off));
  LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, LLVMBuildGEP2(L->b, L->i8, st->thread, &step, 1, ""), &c, 1, "");
  LLVMValueRef v = LLVMBuildLoad2(L->b, word, p, "");
  LLVMSetAlignment(v, (unsigned)(st->s.elem_bytes * n));
  lower_unpack(L, v, st->s.mem_type, n, out);
}

/* The operand elements of one K step: vals[rest + kk * n_rest_values]. */
static LLVMValueRef *load_step(Lower *L, const Dot *D, const Staged *st, const LinearLayout *ll, LLVMValueRef k0,
                               int along_k, int unroll) {
  int n_rest = 1 << st->n_rest;
  LLVMValueRef *vals = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(n_rest * unroll));
  LLVMValueRef step = lower_scratch_runtime(L, &st->s, LLVMBuildMul(L->b, k0, lower_i32(L, st->k_unit), ""));
  int vec = 1 << st->s.vec_bits[1];
  if (along_k && vec > unroll) vec = unroll;
  if (!along_k && vec > n_rest) vec = n_rest;
  LLVMValueRef e[16];
  for (int rest = 0; rest < n_rest; rest += along_k ? 1 : vec)
    for (int kk = 0; kk < unroll; kk += along_k ? vec : 1) {
      uint32_t off = ll_reg_offset(ll, (uint32_t)rest) + (uint32_t)kk * st->k_unit;
      load_vector(L, st, step, off, vec, e);
      for (int j = 0; j < vec; j++) {
        int r = along_k ? rest : rest + j, q = along_k ? kk + j : kk;
        vals[r + q * n_rest] = fma_input(L, e[j], D->at, D->tf32);
      }
    }
  return vals;
}

/* The loop over K: a phi for k and one per accumulator register; leaves
 * the builder in the body. */
typedef struct KLoop {
  LLVMBasicBlockRef head, done;
  LLVMValueRef k;
  Regs acc;
} KLoop;

static KLoop k_loop_begin(Lower *L, const Dot *D, Regs acc0) {
  KLoop lp;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b), body = lower_new_block(L, "dot_k");
  lp.head = lower_new_block(L, "dot_k");
  lp.done = lower_new_block(L, "dot_done");
  LLVMBuildBr(L->b, lp.head);
  LLVMPositionBuilderAtEnd(L->b, lp.head);
  LLVMValueRef zero = lower_i32(L, 0);
  lp.k = LLVMBuildPhi(L->b, L->i32, "k");
  LLVMAddIncoming(lp.k, &zero, &pre, 1);
  lp.acc = lower_regs(L, acc0.n);
  for (int r = 0; r < acc0.n; r++) {
    lp.acc.v[r] = LLVMBuildPhi(L->b, D->at, "");
    LLVMAddIncoming(lp.acc.v[r], &acc0.v[r], &pre, 1);
  }
  LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, lp.k, lower_i32(L, D->d.k), ""), body, lp.done);
  LLVMPositionBuilderAtEnd(L->b, body);
  return lp;
}

static void k_loop_end(Lower *L, KLoop *lp, Regs next, int step) {
  LLVMValueRef k1 = LLVMBuildAdd(L->b, lp->k, lower_i32(L, step), "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMAddIncoming(lp->k, &k1, &latch, 1);
  for (int r = 0; r < next.n; r++) LLVMAddIncoming(lp->acc.v[r], &next.v[r], &latch, 1);
  LLVMBuildBr(L->b, lp->head);
  LLVMPositionBuilderAtEnd(L->b, lp->done);
}

static void dot_from_shared(Lower *L, const TirOp *op, const Dot *D) {
  Regs acc0 = initial_acc(L, op, D);
  if (L->shared_dirty) lower_barrier(L);
  Staged a, b;
  stage(L, op, D, 0, 0, &a);
  stage(L, op, D, 1, (a.s.base + a.s.bytes + 15) / 16 * 16, &b);
  lower_barrier(L);
  int unroll = UNROLL, per_k = (1 << a.n_rest) + (1 << b.n_rest); /* operand values one k needs */
  while (unroll > 1 && (unroll > D->d.k || unroll * per_k > STEP_VALUES)) unroll /= 2;
  KLoop lp = k_loop_begin(L, D, acc0);
  LLVMValueRef *va = load_step(L, D, &a, &D->la, lp.k, 1, unroll), *vb = load_step(L, D, &b, &D->lb, lp.k, 0, unroll);
  Regs next = lower_regs(L, acc0.n);
  for (int r = 0; r < next.n; r++) next.v[r] = lp.acc.v[r];
  for (int kk = 0; kk < unroll; kk++)
    for (int r = 0; r < next.n; r++)
      next.v[r] = fma_step(L, next.v[r], va[D->arow[r] + kk * (1 << a.n_rest)], vb[D->bcol[r] + kk * (1 << b.n_rest)]);
  k_loop_end(L, &lp, next, unroll);
  lower_shared_unknown(L);
  finish(L, op, lp.acc);
}

void lower_dot(Lower *L, const TirOp *op) {
  const Layout *l = tir_layout(L->f, op->results.data[0]);
  if (l && l->kind == LAYOUT_MMA && l->version == 2) {
    lower_mma_dot(L, op);
    return;
  }
  if (l && l->kind == LAYOUT_MMA) {
    lower_wgmma_dot(L, op);
    return;
  }
  Dot D;
  plan_dot(L, op, &D);
  if (L->deferred[op->operands.data[0]]) dot_from_shared(L, op, &D);
  else dot_in_registers(L, op, &D);
}

/* ---- which dots read shared memory -------------------------------------------------- */

/* Operand k comes from a convert_layout that only this dot uses.  It may
 * sit in an enclosing block (an operand loaded before the loop, as the
 * attention pattern's Q): its source registers are live at the dot anyway,
 * and the dot stages them on each run; converted once into the operand
 * layout they would be whole K-rows per thread, and spill. */
static int staged_operand(Lower *L, const TirOp *dot, int k) {
  int v = dot->operands.data[k];
  const TirOp *def = L->defs[v];
  return def && def->code == TIR_CONVERT_LAYOUT && L->uses[v] == 1;
}

static int64_t tile_bytes(Lower *L, int v) {
  const Type *t = lower_type(L, v);
  return type_numel(t) * (dtype_bits(t->elem) / 8);
}

/* An mma.sync dot reads its operands' local_loads itself, a K step at a
 * time, when they are its alone and in its block. */
static void defer_mma_operands(Lower *L, const TirOp *dot, const TirBlock *b) {
  for (int k = 0; k < 2; k++) {
    int v = dot->operands.data[k];
    const TirOp *def = L->defs[v];
    if (!def || def->code != TIR_LOCAL_LOAD || L->uses[v] != 1) continue;
    for (int i = 0; i < b->ops.len; i++)
      if (b->ops.data[i] == def) L->deferred[v] = 1;
  }
}

/* v and what it was converted from (conversions that only rename
 * registers, as the pipeline step checked) are waited for. */
static void mark_waited(Lower *L, int v) {
  for (const TirOp *d; v >= 0; v = d && d->code == TIR_CONVERT_LAYOUT ? d->operands.data[0] : -1) {
    L->dot_waited[v] = 1;
    d = L->defs[v];
  }
}

/* A value a loop carries to a dot_wait (the pipeline's in-flight dot)
 * is waited for there: so is what the body yields for it. */
static void mark_carried_waits(Lower *L, const TirOp *loop) {
  const TirBlock *body = loop->regions[0];
  const TirOp *yield = body->ops.data[body->ops.len - 1];
  for (int k = 0; k < yield->operands.len && k + 1 < body->args.len; k++)
    if (L->dot_waited[body->args.data[k + 1]]) L->dot_waited[yield->operands.data[k]] = 1;
}

void lower_plan_dots(Lower *L, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) lower_plan_dots(L, op->regions[r]);
    for (int k = 0; op->code == TIR_DOT_WAIT && k < op->operands.len; k++) mark_waited(L, op->operands.data[k]);
    if (op->code == TIR_FOR) mark_carried_waits(L, op);
    const Layout *l = op->code == TIR_DOT ? tir_layout(L->f, op->results.data[0]) : NULL;
    if (l && l->kind == LAYOUT_MMA) {
      if (l->version == 2) defer_mma_operands(L, op, b);
      continue;
    }
    if (op->code != TIR_DOT || !staged_operand(L, op, 0) || !staged_operand(L, op, 1)) continue;
    int64_t bytes = (tile_bytes(L, op->operands.data[0]) + tile_bytes(L, op->operands.data[1])) * 5 / 4 + 64;
    if (bytes > lower_max_shared(L)) continue; /* padding included; else in registers */
    L->deferred[op->operands.data[0]] = L->deferred[op->operands.data[1]] = 1;
  }
}
