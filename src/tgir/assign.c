/* Layout assignment (step assign-layouts): tile IR becomes GPU-layout IR.
 *
 * Requires: verified tile IR, f->layout_table set.
 * Guarantees: every tile value (op results, region arguments) has a layout
 *   of its rank for f->num_warps warps, and every operand the layout its
 *   user needs (rules.c); where it had another, a convert_layout sits just
 *   before the user.  The anchors get the layouts later steps keep: memory
 *   ops the coalesced layout of their pointers (coalesce.c), dots the FMA
 *   accumulator layout (layout_fma_accumulator) with operands in its
 *   dot-operand layouts.  Reduce results get the slice of their operand's
 *   layout, trans results the permuted layout, join and split results
 *   theirs with the pair dimension in registers (layout_joined), scans
 *   their operand's;
 *   everything else the default blocked layout of its shape.
 * Invalidates: nothing; remove-converts then removes what is needless. */
#include "passes.h"

#include <string.h>

typedef struct Assign {
  TirFunc *f;
  LayoutTable *table;
  const Layout **coalesced; /* per pointer value: the layout its memory op wants, or NULL */
  Vec(TirOp *) out;         /* the block being rebuilt */
} Assign;

static Type *T(Assign *A, int v) { return tir_type(A->f, v); }

static const Layout *default_layout(Assign *A, const Type *t) {
  return layout_default(A->table, t->rank, t->shape, NULL, NULL, A->f->num_warps);
}

/* Gives value v layout l (nothing for scalars). */
static void set(Assign *A, int v, const Layout *l) {
  if (tgir_is_tile(A->f, v)) tir_set_layout(A->f, v, l);
}

static void set_default(Assign *A, int v) {
  if (tgir_is_tile(A->f, v)) set(A, v, default_layout(A, T(A, v)));
}

/* Makes operand k of op have layout `want`, converting before op if needed. */
static void require(Assign *A, TirOp *op, int k, const Layout *want) {
  int v = op->operands.data[k];
  if (!want || tir_layout(A->f, v) == want) return;
  TirOp *cvt = tir_op_new(A->f, TIR_CONVERT_LAYOUT, op->loc);
  tir_add_operand(A->f, cvt, v);
  set(A, tir_add_result(A->f, cvt, T(A, v)), want);
  vec_push(A->f->arena, &A->out, cvt);
  op->operands.data[k] = cvt->results.data[0];
}

static void require_needs(Assign *A, TirOp *op, const Layout *own, const TirOp *parent) {
  for (int k = 0; k < op->operands.len; k++) require(A, op, k, tgir_operand_need(A->f, op, k, own, parent, NULL));
}

/* The layout a memory op works in: the one coalescing chose for its
 * pointer, else the default. */
static const Layout *memory_layout(Assign *A, const TirOp *op) {
  int ptr = op->operands.data[0];
  if (A->coalesced && A->coalesced[ptr]) return A->coalesced[ptr];
  return default_layout(A, T(A, ptr));
}

/* An inline_asm with pack > 1 takes `pack` consecutive elements of the last dimension at a time: its
 * operand's layout if that keeps them in one thread's registers, else the default with that many. */
static const Layout *asm_layout(Assign *A, const TirOp *op, const Layout *in) {
  const Type *t = T(A, op->results.data[0]);
  int pack = tir_asm_pack(op), last = t->rank - 1, spt[MAX_RANK];
  LinearLayout ll;
  const char *why;
  if (in && !layout_linear_of(in, t, &ll, &why) && ll_contiguous_registers(&ll, last) >= pack) return in;
  for (int d = 0; d < t->rank; d++) spt[d] = d == last ? pack : 1;
  return layout_default(A->table, t->rank, t->shape, spt, NULL, A->f->num_warps);
}

/* The layout op gets before its operands are converted. */
static const Layout *own_layout(Assign *A, const TirOp *op) {
  int lead = op->results.len ? op->results.data[0] : op->operands.len ? op->operands.data[0] : -1;
  if (lead < 0 || !tgir_is_tile(A->f, lead)) return NULL;
  const Layout *in = op->operands.len ? tir_layout(A->f, op->operands.data[0]) : NULL, *l = NULL;
  switch (op->code) {
  case TIR_LOAD:
  case TIR_STORE:
  case TIR_ATOMIC_RMW:
  case TIR_ATOMIC_CAS: return memory_layout(A, op);
  case TIR_DOT: return layout_fma_accumulator(A->table, T(A, lead)->rank, T(A, lead)->shape, A->f->num_warps);
  case TIR_REDUCE:
  case TIR_REDUCE_COMBINE:
  case TIR_TRANS:
  case TIR_RESHAPE:
  case TIR_SPLIT: l = tgir_result_layout(A->f, op, in); break;
  case TIR_JOIN: /* operands not blocked are converted to the default layout first */
    l = tgir_result_layout(A->f, op, in);
    if (!l) l = layout_joined(A->table, default_layout(A, T(A, op->operands.data[0])), 0);
    break;
  case TIR_SCAN:
  case TIR_SCAN_COMBINE:
  case TIR_HINT:
  case TIR_ASSERT: l = in; break;
  case TIR_GATHER: l = tir_layout(A->f, op->operands.data[1]); break; /* the index's */
  case TIR_INLINE_ASM: return tir_asm_pack(op) > 1 ? asm_layout(A, op, in) : default_layout(A, T(A, lead));
  case TIR_PRINT: return NULL; /* each thread prints what it holds */
  default: break;
  }
  return l ? l : default_layout(A, T(A, lead));
}

static void assign_op(Assign *A, TirOp *op, const TirOp *parent) {
  const Layout *own = (tir_op_flags(op->code) & TERM) ? NULL : own_layout(A, op);
  require_needs(A, op, own, parent);
  for (int i = 0; i < op->results.len; i++) set(A, op->results.data[i], own);
}

static void assign_block(Assign *A, TirBlock *b, const TirOp *parent);

/* Results and region arguments of for/if/while take the default layout;
 * the carried values are converted to it on the way in and out. */
static void assign_structured(Assign *A, TirOp *op) {
  for (int i = 0; i < op->results.len; i++) set_default(A, op->results.data[i]);
  const TirBlock *r0 = op->regions[0], *r1 = op->regions[1];
  if (op->code == TIR_FOR)
    for (int i = 0; i < op->results.len; i++) set(A, r0->args.data[1 + i], tir_layout(A->f, op->results.data[i]));
  if (op->code == TIR_WHILE) {
    for (int i = 0; i < r0->args.len; i++) set_default(A, r0->args.data[i]);
    for (int i = 0; i < r1->args.len; i++) set(A, r1->args.data[i], tir_layout(A->f, op->results.data[i]));
  }
  require_needs(A, op, NULL, NULL);
  for (int r = 0; r < 2; r++)
    if (op->regions[r]) assign_block(A, op->regions[r], op);
}

/* Rebuilds b's op list with the conversions its ops need. */
static void assign_block(Assign *A, TirBlock *b, const TirOp *parent) {
  Assign saved = *A;
  memset(&A->out, 0, sizeof A->out);
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    if (op->regions[0]) assign_structured(A, op);
    else assign_op(A, op, parent);
    vec_push(A->f->arena, &A->out, op);
  }
  b->ops.data = A->out.data;
  b->ops.len = A->out.len;
  b->ops.cap = A->out.cap;
  A->out = saved.out;
}

void tgir_assign(TirFunc *f, LayoutTable *table, const Layout **coalesced) {
  Assign A = {f, table, coalesced, {0}};
  assign_block(&A, f->body, NULL);
}
