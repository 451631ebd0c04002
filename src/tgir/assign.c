/* Layout assignment: tile IR becomes GPU-layout IR.
 *
 * Requires: verified tile IR.
 * Guarantees: every tile value (op results, region arguments) has a layout
 *   of its rank for f->num_warps warps, and every operand has the layout its
 *   user needs (below); where it had another, a convert_layout now sits just
 *   before the user.  What users need:
 *   - elementwise ops, load, store, atomics, select, for/if/while carried
 *     values and yields, print, assert: their result's layout (or, without
 *     a result, the first tile operand's);
 *   - broadcast: its result's layout; expand_dims: the slice of its
 *     result's layout along the new axis; reduce and scan results: the
 *     slice (reduce) or the layout (scan) of their operand;
 *   - dot: operands in the FMA dot-operand layouts of the result's layout.
 *   Results get the default blocked layout of their shape, except reduce
 *   (a slice of the operand), trans (the operand's layout, permuted) and
 *   memory ops (coalesced from AxisInfo, coalesce.c).
 * Invalidates: nothing; later passes (propagation) only remove converts. */
#include "tgir.h"

#include <string.h>

typedef struct Assign {
  TirFunc *f;
  LayoutTable *table;
  Vec(TirOp *) out;         /* the block being rebuilt */
  const struct Layout **forced; /* per value: the layout a memory op asks for (coalescing), or NULL */
} Assign;

static Type *T(Assign *A, int v) { return tir_type(A->f, v); }
static int is_tile(Assign *A, int v) { return T(A, v)->rank > 0; }

static const Layout *default_layout(Assign *A, const Type *t) {
  return layout_default(A->table, t->rank, t->shape, NULL, NULL, A->f->num_warps);
}

/* Gives value v layout l (nothing for scalars). */
static void set(Assign *A, int v, const Layout *l) {
  if (is_tile(A, v)) tir_set_layout(A->f, v, l);
}

/* Makes operand k of op have layout `want`, converting before op if needed. */
static void require(Assign *A, TirOp *op, int k, const Layout *want) {
  int v = op->operands.data[k];
  if (!is_tile(A, v) || !want || tir_layout(A->f, v) == want) return;
  TirOp *cvt = tir_op_new(A->f, TIR_CONVERT_LAYOUT, op->loc);
  tir_add_operand(A->f, cvt, v);
  int nv = tir_add_result(A->f, cvt, T(A, v));
  set(A, nv, want);
  vec_push(A->f->arena, &A->out, cvt);
  op->operands.data[k] = nv;
}

static void require_all(Assign *A, TirOp *op, int first, const Layout *want) {
  for (int k = first; k < op->operands.len; k++) require(A, op, k, want);
}

/* The layout a memory op works in: the one coalescing chose for its
 * pointer (or value), else the default. */
static const Layout *memory_layout(Assign *A, const TirOp *op) {
  int ptr = op->operands.data[0];
  if (A->forced && A->forced[ptr]) return A->forced[ptr];
  return default_layout(A, T(A, ptr));
}

static const Layout *trans_layout(Assign *A, const TirOp *op) {
  const Layout *in = tir_layout(A->f, op->operands.data[0]);
  if (!in || in->kind != LAYOUT_BLOCKED) return default_layout(A, T(A, op->results.data[0]));
  int spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], order[MAX_RANK], inverse[MAX_RANK];
  for (int d = 0; d < in->rank; d++) inverse[op->ints[d]] = d;
  for (int d = 0; d < in->rank; d++) {
    int from = (int)op->ints[d];
    spt[d] = in->size_per_thread[from];
    tpw[d] = in->threads_per_warp[from];
    wpc[d] = in->warps_per_cta[from];
    order[d] = inverse[in->order[d]];
  }
  const char *why;
  return layout_blocked(A->table, in->rank, spt, tpw, wpc, order, &why);
}

static void assign_op(Assign *A, TirOp *op) {
  int res = op->results.len ? op->results.data[0] : -1;
  switch (op->code) {
  case TIR_LOAD:
  case TIR_STORE:
  case TIR_ATOMIC_RMW:
  case TIR_ATOMIC_CAS: {
    if (!is_tile(A, op->operands.data[0])) break;
    const Layout *l = memory_layout(A, op);
    require_all(A, op, 0, l);
    if (res >= 0) set(A, res, l);
    break;
  }
  case TIR_DOT: {
    const Layout *acc = default_layout(A, T(A, res));
    require(A, op, 0, layout_dot_operand(A->table, 0, acc, 1));
    require(A, op, 1, layout_dot_operand(A->table, 1, acc, 1));
    require(A, op, 2, acc);
    set(A, res, acc);
    break;
  }
  case TIR_REDUCE:
    if (res >= 0 && is_tile(A, res)) set(A, res, layout_slice(A->table, op->axis, tir_layout(A->f, op->operands.data[0])));
    break;
  case TIR_EXPAND_DIMS: {
    const Layout *l = default_layout(A, T(A, res));
    require(A, op, 0, layout_slice(A->table, op->axis, l));
    set(A, res, l);
    break;
  }
  case TIR_TRANS: set(A, res, trans_layout(A, op)); break;
  case TIR_SCAN: set(A, res, tir_layout(A->f, op->operands.data[0])); break;
  case TIR_PRINT:
  case TIR_ASSERT: break; /* any layout: each thread prints or checks what it holds */
  default: {
    if (res < 0 || !is_tile(A, res)) break;
    const Layout *l = default_layout(A, T(A, res));
    if (op->code != TIR_RESHAPE) require_all(A, op, 0, l); /* reshape moves elements: codegen converts */
    set(A, res, l);
  }
  }
}

static void assign_region(Assign *A, TirBlock *b, const TirOp *parent);

/* Region arguments and results of for/if/while take the default layout;
 * the carried values are converted to it on the way in and out. */
static void assign_structured(Assign *A, TirOp *op) {
  for (int i = 0; i < op->results.len; i++) set(A, op->results.data[i], default_layout(A, T(A, op->results.data[i])));
  if (op->code == TIR_FOR) {
    TirBlock *body = op->regions[0];
    for (int i = 0; i < op->results.len; i++) {
      const Layout *l = tir_layout(A->f, op->results.data[i]);
      require(A, op, 3 + i, l);
      set(A, body->args.data[1 + i], l);
    }
  } else if (op->code == TIR_WHILE) {
    for (int i = 0; i < op->operands.len; i++) {
      int v = op->operands.data[i];
      const Layout *l = is_tile(A, v) ? default_layout(A, T(A, v)) : NULL;
      require(A, op, i, l);
      set(A, op->regions[0]->args.data[i], l);
    }
    for (int i = 0; i < op->regions[1]->args.len; i++) {
      int v = op->regions[1]->args.data[i];
      set(A, v, is_tile(A, v) ? default_layout(A, T(A, v)) : NULL);
    }
  }
  for (int r = 0; r < 2; r++)
    if (op->regions[r]) assign_region(A, op->regions[r], op);
}

/* A terminator hands values to its enclosing op: they need its layouts. */
static void assign_terminator(Assign *A, TirOp *op, const TirOp *parent) {
  if (!parent) return;
  int skip = op->code == TIR_CONDITION; /* a condition's first operand is the flag */
  for (int k = skip; k < op->operands.len; k++) {
    int target;
    if (parent->code == TIR_WHILE && op->code == TIR_YIELD) target = parent->regions[0]->args.data[k];
    else if (parent->code == TIR_WHILE) target = parent->regions[1]->args.data[k - skip];
    else target = parent->results.data[k];
    require(A, op, k, tir_layout(A->f, target));
  }
}

/* Rebuilds b's op list with the conversions its ops need. */
static void assign_region(Assign *A, TirBlock *b, const TirOp *parent) {
  Assign saved = *A;
  memset(&A->out, 0, sizeof A->out);
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    if (op->regions[0]) assign_structured(A, op);
    else if (tir_op_flags(op->code) & TERM) assign_terminator(A, op, parent);
    else assign_op(A, op);
    vec_push(A->f->arena, &A->out, op);
  }
  b->ops.data = A->out.data;
  b->ops.len = A->out.len;
  b->ops.cap = A->out.cap;
  A->out = saved.out;
}

void tgir_assign(TirFunc *f, LayoutTable *table, const struct Layout **forced) {
  Assign A = {f, table, {0}, forced};
  assign_region(&A, f->body, NULL);
}
