/* The tile IR verifier: every value defined once and before its uses (a
 * value defined in a region is visible only inside it), operand counts,
 * and the type and shape rules of each op.  It runs after lowering and
 * after every pass in tests; a failure is a compiler bug, reported at the
 * op's source location. */
#include "tir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Verifier {
  const TirFunc *f;
  Diags *diags;
  char *visible;         /* per value: defined and in scope here */
  char *defined;         /* per value: defined anywhere so far (SSA: once) */
  Vec(int) shown;        /* the values made visible, innermost last: a region hides its own */
  int problems;
} Verifier;

static void problem(Verifier *V, const TirOp *op, const char *fmt, const char *detail) {
  char msg[300];
  snprintf(msg, sizeof msg, fmt, detail);
  diag_error(V->diags, op->loc, "internal error: tile IR verifier: '%s': %s", tir_op_name(op->code), msg);
  V->problems++;
}

static Type *T(Verifier *V, const TirOp *op, int i) { return tir_type(V->f, op->operands.data[i]); }
static Type *R(Verifier *V, const TirOp *op, int i) { return tir_type(V->f, op->results.data[i]); }
static const char *S(Verifier *V, Type *t) { return type_str(V->f->arena, t); }

static void define(Verifier *V, const TirOp *op, int value) {
  if (value < 0 || value >= V->f->types.len) {
    problem(V, op, "%s", "defines a value outside the function's table");
    return;
  }
  if (V->defined[value]) problem(V, op, "defines %%%s twice", arena_printf(V->f->arena, "%d", value));
  V->defined[value] = V->visible[value] = 1;
  vec_push(V->f->arena, &V->shown, value);
}

static void check_operands_visible(Verifier *V, const TirOp *op) {
  for (int i = 0; i < op->operands.len; i++) {
    int v = op->operands.data[i];
    if (v < 0 || v >= V->f->types.len || !V->visible[v])
      problem(V, op, "uses %%%s before its definition or outside its region", arena_printf(V->f->arena, "%d", v));
  }
}

static void check_same(Verifier *V, const TirOp *op, Type *a, Type *b, const char *what) {
  if (!type_equal(a, b)) problem(V, op, "%s", arena_printf(V->f->arena, "%s: %s and %s differ", what, S(V, a), S(V, b)));
}

/* The row's signature (src/tir/libdevice.c): x of a type the row takes, the others as the row says. */
static void check_libdevice(Verifier *V, const TirOp *op) {
  if (op->operands.len != libdevice_arity(op->kind)) {
    problem(V, op, "%s", "has the wrong number of operands for its function");
    return;
  }
  const Type *xt = T(V, op, libdevice_x_arg(op->kind));
  DType x = xt->elem;
  if (xt->is_ptr || !libdevice_takes(op->kind, x)) problem(V, op, "%s", "needs an operand of a type its function takes");
  for (int i = 0; i < op->operands.len; i++)
    if (T(V, op, i)->elem != libdevice_arg(op->kind, i, x)) problem(V, op, "%s", "operand types do not match its function");
  if (R(V, op, 0)->elem != libdevice_result(op->kind, x)) problem(V, op, "%s", "result type does not match its function");
}

/* inline_asm: 1 to MAX_ASM_ARGS results of one shape, whose last dimension `pack` divides. */
static void check_asm(Verifier *V, const TirOp *op) {
  Type *r = R(V, op, 0);
  int pack = tir_asm_pack(op);
  for (int i = 1; i < op->results.len; i++)
    if (!type_same_shape(R(V, op, i), r)) problem(V, op, "%s", "its results differ in shape");
  if (op->results.len > MAX_ASM_ARGS) problem(V, op, "%s", "has more than 16 results");
  if (pack > 16 || (pack & (pack - 1)) || (pack > 1 && (!r->rank || r->shape[r->rank - 1] % pack)))
    problem(V, op, "%s", "pack must be a power of two up to 16 dividing the last dimension");
}

static void check_elementwise(Verifier *V, const TirOp *op) {
  Type *r = R(V, op, 0);
  for (int i = 0; i < op->operands.len; i++)
    if (!type_same_shape(T(V, op, i), r)) problem(V, op, "operand shape differs from the result's (%s)", S(V, r));
  switch (op->code) {
  case TIR_CMP: if (r->elem != DT_I1) problem(V, op, "%s", "result must be i1"); /* fall through */
  case TIR_CAST:
  case TIR_BITCAST:
  case TIR_INLINE_ASM: check_asm(V, op); break; /* the asm's operands and results are of any types */
  case TIR_ADDPTR: break;
  case TIR_LIBDEVICE: check_libdevice(V, op); break;
  case TIR_SELECT:
    if (T(V, op, 0)->elem != DT_I1) problem(V, op, "%s", "the condition must be i1");
    check_same(V, op, T(V, op, 1), r, "value and result");
    check_same(V, op, T(V, op, 2), r, "value and result");
    break;
  default:
    for (int i = 0; i < op->operands.len; i++) check_same(V, op, T(V, op, i), r, "operand and result");
  }
  if (op->code == TIR_CMP) check_same(V, op, T(V, op, 0), T(V, op, 1), "compared operands");
  if (op->code == TIR_ADDPTR && (!T(V, op, 0)->is_ptr || T(V, op, 1)->is_ptr || !dtype_is_int(T(V, op, 1)->elem)))
    problem(V, op, "%s", "needs a pointer and an integer offset");
}

/* join's result is its operands' shape and a last dimension of 2, which
 * split's operand has and its result drops. */
static void check_pair_dimension(Verifier *V, const TirOp *op, Type *x, Type *r) {
  Type *pair = op->code == TIR_JOIN ? r : x, *half = op->code == TIR_JOIN ? x : r;
  if (op->code == TIR_JOIN) check_same(V, op, T(V, op, 1), x, "joined operands");
  if (op->code == TIR_SPLIT && op->ival != 0 && op->ival != 1) problem(V, op, "%s", "half must be 0 or 1");
  int same = half->rank >= 1 && pair->rank == half->rank + 1 && pair->shape[half->rank] == 2;
  for (int i = 0; same && i < half->rank; i++) same = pair->shape[i] == half->shape[i];
  if (!same) problem(V, op, "%s", "the pair's shape must be the half's with a last dimension of 2");
}

/* gather's source and index have one rank and equal sizes off the axis; the
 * result has the index's shape and the source's element type. */
static void check_gather(Verifier *V, const TirOp *op) {
  Type *src = T(V, op, 0), *index = T(V, op, 1), *r = R(V, op, 0);
  if (r->elem != src->elem || r->is_ptr != src->is_ptr) problem(V, op, "%s", "the result must have the source's element type");
  if (index->is_ptr || !dtype_is_int(index->elem)) problem(V, op, "%s", "the index must be an integer tile");
  if (src->rank < 1 || src->rank != index->rank || r->rank != index->rank || op->axis < 0 || op->axis >= src->rank) {
    problem(V, op, "%s", "source, index and result need one rank, and the axis a dimension of it");
    return;
  }
  for (int i = 0; i < r->rank; i++) {
    if (r->shape[i] != index->shape[i]) problem(V, op, "%s", "the result must have the index's shape");
    if (i != op->axis && src->shape[i] != index->shape[i]) problem(V, op, "%s", "source and index differ off the axis");
  }
}

static void check_shape_op(Verifier *V, const TirOp *op) {
  Type *x = T(V, op, 0), *r = R(V, op, 0);
  if (x->elem != r->elem || x->is_ptr != r->is_ptr) problem(V, op, "%s", "changes the element type");
  switch (op->code) {
  case TIR_SPLAT:
    if (x->rank != 0) problem(V, op, "%s", "operand must be a scalar");
    break;
  case TIR_BROADCAST:
    if (x->rank != r->rank) problem(V, op, "%s", "ranks differ");
    for (int i = 0; i < x->rank && x->rank == r->rank; i++)
      if (x->shape[i] != r->shape[i] && x->shape[i] != 1) problem(V, op, "%s", "only size-1 dimensions grow");
    break;
  case TIR_EXPAND_DIMS:
    if (r->rank != x->rank + 1 || op->axis < 0 || op->axis > x->rank || r->shape[op->axis] != 1) {
      problem(V, op, "%s", "the result must insert a size-1 dimension at axis");
      break;
    }
    for (int i = 0, j = 0; i < r->rank; i++)
      if (i != op->axis && r->shape[i] != x->shape[j++]) problem(V, op, "%s", "the other dimensions must stay");
    break;
  case TIR_RESHAPE:
  case TIR_HINT:
    if (type_numel(x) != type_numel(r)) problem(V, op, "%s", "element counts differ");
    break;
  case TIR_JOIN:
  case TIR_SPLIT: check_pair_dimension(V, op, x, r); break;
  case TIR_TRANS:
    if (op->n_ints != x->rank || r->rank != x->rank) problem(V, op, "%s", "the permutation must cover every dimension");
    for (int i = 0; i < op->n_ints && op->n_ints == x->rank; i++)
      if (op->ints[i] < 0 || op->ints[i] >= x->rank || r->shape[i] != x->shape[op->ints[i]])
        problem(V, op, "%s", "the result is not the permuted operand");
    break;
  default: break;
  }
}

static void check_memory(Verifier *V, const TirOp *op) {
  Type *p = T(V, op, 0);
  if (!p->is_ptr) problem(V, op, "%s", "the first operand must be a pointer");
  int values = op->code == TIR_LOAD ? 0 : op->code == TIR_ATOMIC_CAS ? 2 : 1;
  for (int i = 1; i < op->operands.len; i++) {
    Type *t = T(V, op, i);
    if (!type_same_shape(t, p)) problem(V, op, "%s", "operands must have the pointer's shape");
    int is_mask = (op->flags & LOAD_MASK) && i == 1 + values;
    if (is_mask && t->elem != DT_I1) problem(V, op, "%s", "the mask must be i1");
    if (!is_mask && t->elem != p->elem) problem(V, op, "%s", "values must have the pointee type");
  }
  if (op->results.len && (R(V, op, 0)->elem != p->elem || !type_same_shape(R(V, op, 0), p)))
    problem(V, op, "%s", "the result must have the pointee type and the pointer's shape");
}

static void check_dot(Verifier *V, const TirOp *op) {
  Type *a = T(V, op, 0), *b = T(V, op, 1), *c = T(V, op, 2), *r = R(V, op, 0);
  int n = a->rank;
  if (n < 2 || b->rank != n || r->rank != n || a->shape[n - 1] != b->shape[n - 2] || r->shape[n - 2] != a->shape[n - 2] ||
      r->shape[n - 1] != b->shape[n - 1])
    problem(V, op, "%s", "shapes do not form a matrix product");
  check_same(V, op, c, r, "accumulator and result");
}

static void check_reduce(Verifier *V, const TirOp *op) {
  Type *x = T(V, op, 0), *r = R(V, op, 0);
  int arg = op->kind == RED_ARGMAX || op->kind == RED_ARGMIN;
  if (arg ? r->elem != DT_I32 : r->elem != x->elem)
    problem(V, op, "%s", arg ? "an index result must be i32" : "the result keeps the element type");
  if (op->axis < 0 || op->axis >= x->rank || r->rank != x->rank - 1) {
    problem(V, op, "%s", "the result must drop the axis");
    return;
  }
  for (int i = 0, j = 0; i < x->rank; i++)
    if (i != op->axis && x->shape[i] != r->shape[j++]) problem(V, op, "%s", "the other dimensions must stay");
}

/* Shared memory (GPU-layout IR): buffers are tiles of the types they hold. */
static void check_shared(Verifier *V, const TirOp *op) {
  int n_ops = op->operands.len, n_res = op->results.len;
  switch (op->code) {
  case TIR_LOCAL_ALLOC:
    if (n_res != 1 || n_ops > 1 || R(V, op, 0)->rank < 1) problem(V, op, "%s", "makes one buffer, from at most one tile");
    else if (n_ops) check_same(V, op, T(V, op, 0), R(V, op, 0), "tile and buffer");
    break;
  case TIR_MEMDESC_INDEX: {
    Type *b = T(V, op, 0), *r = R(V, op, 0), slot = *b;
    slot.rank = b->rank - 1;
    for (int i = 0; i < slot.rank; i++) slot.shape[i] = b->shape[i + 1];
    if (b->rank < 2 || !type_equal(&slot, r)) problem(V, op, "%s", "the result is one buffer of the multi-buffer");
    if (T(V, op, 1)->rank || !dtype_is_int(T(V, op, 1)->elem)) problem(V, op, "%s", "the index must be an integer scalar");
    break;
  }
  case TIR_MEMDESC_TRANS: {
    Type *b = T(V, op, 0), *r = R(V, op, 0);
    if (b->rank != 2 || r->rank != 2 || r->elem != b->elem || r->shape[0] != b->shape[1] || r->shape[1] != b->shape[0])
      problem(V, op, "%s", "the result is the rank-2 buffer transposed");
    break;
  }
  case TIR_LOCAL_LOAD:
    if (n_res != 1) problem(V, op, "%s", "has one result");
    else check_same(V, op, T(V, op, 0), R(V, op, 0), "buffer and tile");
    break;
  case TIR_LOCAL_STORE: check_same(V, op, T(V, op, 0), T(V, op, 1), "tile and buffer"); break;
  case TIR_ASYNC_COPY: {
    Type *p = T(V, op, 0), *b = n_ops > 1 ? T(V, op, 1) : NULL;
    if (n_ops < 2 || n_ops > 4 || n_res || !p->is_ptr || b->is_ptr || b->elem != p->elem || !type_same_shape(p, b))
      problem(V, op, "%s", "copies a tile of pointers' pointees into a buffer of that type");
    else if (n_ops >= 3 && (T(V, op, 2)->elem != DT_I1 || !type_same_shape(T(V, op, 2), p)))
      problem(V, op, "%s", "the mask must be i1 of the pointers' shape");
    else if (n_ops == 4 && (T(V, op, 3)->elem != DT_I1 || T(V, op, 3)->rank))
      problem(V, op, "%s", "whether to issue the copy is an i1 scalar");
    break;
  }
  case TIR_DOT_WAIT:
    if (n_res != n_ops) problem(V, op, "%s", "has one result per operand");
    for (int i = 0; i < n_ops && n_res == n_ops; i++) check_same(V, op, T(V, op, i), R(V, op, i), "operand and result");
    break;
  default:
    if (n_res) problem(V, op, "%s", "has no results");
  }
}

static void check_types_match(Verifier *V, const TirOp *op, const int *values, int n, const int *want, int m,
                              const char *what) {
  if (n != m) {
    problem(V, op, "%s count differs", what);
    return;
  }
  for (int i = 0; i < n; i++) check_same(V, op, tir_type(V->f, values[i]), tir_type(V->f, want[i]), what);
}

static void verify_block(Verifier *V, const TirBlock *b, TirCode end);

/* Verifies a region with its arguments visible, then hides what it defined
 * (undoing its own definitions, not copying the table: a copy per region
 * is quadratic in 1,000 nested elifs). */
static void verify_region(Verifier *V, const TirOp *op, const TirBlock *b, TirCode end) {
  if (!b) {
    problem(V, op, "%s", "a region is missing");
    return;
  }
  int outer = V->shown.len;
  for (int i = 0; i < b->args.len; i++) define(V, op, b->args.data[i]);
  verify_block(V, b, end);
  while (V->shown.len > outer) V->visible[V->shown.data[--V->shown.len]] = 0;
}

static const TirOp *terminator(const TirBlock *b) { return b && b->ops.len ? b->ops.data[b->ops.len - 1] : NULL; }

/* What a combine may hold: scalar computations, control flow and asserts, no
 * other effects and no tiles (the checker's rule for combine_fn, src/frontend/combine.c). */
static void check_scalar_only(Verifier *V, const TirOp *combine_op, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    int control = op->code == TIR_FOR || op->code == TIR_IF || op->code == TIR_WHILE || (tir_op_flags(op->code) & TERM);
    int allowed = (tir_op_flags(op->code) & PURE) || control || op->code == TIR_ASSERT; /* device_assert per step */
    if (!allowed || op->code == TIR_RETURN || op->combine)
      problem(V, combine_op, "a combine region holds '%s'; only pure scalar ops and control flow", tir_op_name(op->code));
    for (int k = 0; k < op->results.len; k++)
      if (tir_type(V->f, op->results.data[k])->rank) problem(V, combine_op, "%s", "a combine region defines a tile");
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) check_scalar_only(V, combine_op, op->regions[r]);
  }
}

/* A combine sees its arguments only: the function it came from had no
 * other values (the enclosing ones are hidden while it is verified). */
static void verify_combine(Verifier *V, const TirOp *op) {
  if (!op->combine) {
    problem(V, op, "%s", "the combine region is missing");
    return;
  }
  check_scalar_only(V, op, op->combine);
  char *outer = V->visible;
  V->visible = arena_alloc(V->f->arena, (size_t)V->f->types.len + 1);
  int shown = V->shown.len;
  verify_region(V, op, op->combine, TIR_YIELD);
  V->shown.len = shown;
  V->visible = outer;
}

static void check_structured(Verifier *V, const TirOp *op) {
  const TirBlock *r0 = op->regions[0], *r1 = op->regions[1];
  const TirOp *t0 = terminator(r0), *t1 = terminator(r1);
  const int *res = op->results.data;
  int nres = op->results.len;
  if (op->code == TIR_FOR) {
    if (op->operands.len < 3 || !r0 || r0->args.len != op->operands.len - 2) {
      problem(V, op, "%s", "needs lb, ub, step and one block argument per carried value plus the induction variable");
      return;
    }
    for (int i = 0; i < 3; i++)
      if (T(V, op, i)->rank || T(V, op, i)->elem != tir_type(V->f, r0->args.data[0])->elem)
        problem(V, op, "%s", "bounds and step must be scalars of the induction variable's type");
    check_types_match(V, op, op->operands.data + 3, op->operands.len - 3, res, nres, "carried value");
    check_types_match(V, op, r0->args.data + 1, r0->args.len - 1, res, nres, "block argument");
    if (t0) check_types_match(V, op, t0->operands.data, t0->operands.len, res, nres, "yielded value");
  } else if (op->code == TIR_IF) {
    if (T(V, op, 0)->elem != DT_I1 || T(V, op, 0)->rank) problem(V, op, "%s", "the condition must be an i1 scalar");
    if (t0) check_types_match(V, op, t0->operands.data, t0->operands.len, res, nres, "yielded value");
    if (t1) check_types_match(V, op, t1->operands.data, t1->operands.len, res, nres, "yielded value");
  } else {
    if (!r0 || !r1) return;
    check_types_match(V, op, r0->args.data, r0->args.len, op->operands.data, op->operands.len, "block argument");
    check_types_match(V, op, r1->args.data, r1->args.len, res, nres, "block argument");
    if (t0 && (!t0->operands.len || tir_type(V->f, t0->operands.data[0])->elem != DT_I1 ||
               tir_type(V->f, t0->operands.data[0])->rank))
      problem(V, op, "%s", "the condition must be an i1 scalar");
    if (t0 && t0->operands.len) check_types_match(V, op, t0->operands.data + 1, t0->operands.len - 1, res, nres, "condition value");
    if (t1) check_types_match(V, op, t1->operands.data, t1->operands.len, op->operands.data, op->operands.len, "yielded value");
  }
}

/* reduce_combine and scan_combine: N operands of one shape, N results (the
 * axis dropped for reduce), a combine of 2N scalar arguments of the
 * operands' element types yielding N of them. */
static void check_combine(Verifier *V, const TirOp *op) {
  int n = op->operands.len;
  const TirBlock *c = op->combine;
  const TirOp *t = terminator(c);
  if (!n || op->results.len != n || !c || c->args.len != 2 * n || !t || t->operands.len != n) {
    problem(V, op, "%s", "needs N operands, N results and a combine of 2N arguments yielding N values");
    return;
  }
  Type *x = T(V, op, 0);
  if (op->axis < 0 || op->axis >= x->rank) problem(V, op, "%s", "the axis is out of range");
  for (int i = 0; i < n; i++) {
    Type *scalar = type_tile(V->f->arena, T(V, op, i), 0, NULL);
    if (!type_same_shape(T(V, op, i), x)) problem(V, op, "%s", "the operands must have one shape");
    check_same(V, op, tir_type(V->f, c->args.data[i]), scalar, "combine argument and operand element");
    check_same(V, op, tir_type(V->f, c->args.data[n + i]), scalar, "combine argument and operand element");
    check_same(V, op, tir_type(V->f, t->operands.data[i]), scalar, "combined value and operand element");
    Type *r = R(V, op, i), *want = T(V, op, i);
    if (op->code == TIR_REDUCE_COMBINE && op->axis >= 0 && op->axis < x->rank) {
      int64_t shape[MAX_RANK];
      for (int d = 0, j = 0; d < x->rank; d++)
        if (d != op->axis) shape[j++] = x->shape[d];
      want = type_tile(V->f->arena, T(V, op, i), x->rank - 1, shape);
    }
    check_same(V, op, r, want, "result");
  }
}

static void check_types(Verifier *V, const TirOp *op) {
  int flags = tir_op_flags(op->code);
  if (flags & EW) {
    check_elementwise(V, op);
    return;
  }
  switch (op->code) {
  case TIR_SPLAT: case TIR_BROADCAST: case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_TRANS: case TIR_HINT:
  case TIR_JOIN: case TIR_SPLIT:
    check_shape_op(V, op);
    break;
  case TIR_LOAD: case TIR_STORE: case TIR_ATOMIC_RMW: case TIR_ATOMIC_CAS: check_memory(V, op); break;
  case TIR_DOT: check_dot(V, op); break;
  case TIR_REDUCE: check_reduce(V, op); break;
  case TIR_GATHER: check_gather(V, op); break;
  case TIR_SCAN: check_same(V, op, T(V, op, 0), R(V, op, 0), "operand and result"); break;
  case TIR_REDUCE_COMBINE: case TIR_SCAN_COMBINE: check_combine(V, op); break;
  case TIR_MAKE_RANGE:
    if (R(V, op, 0)->rank != 1 || R(V, op, 0)->shape[0] != op->ival2 - op->ival || R(V, op, 0)->elem != DT_I32)
      problem(V, op, "%s", "must be an i32 tile of length end - start");
    break;
  case TIR_FOR: case TIR_IF: case TIR_WHILE: check_structured(V, op); break;
  case TIR_LOCAL_ALLOC: case TIR_MEMDESC_INDEX: case TIR_MEMDESC_TRANS: case TIR_LOCAL_LOAD: case TIR_LOCAL_STORE:
  case TIR_ASYNC_COPY: case TIR_ASYNC_COMMIT: case TIR_ASYNC_WAIT: case TIR_DOT_WAIT:
    check_shared(V, op);
    break;
  default: break;
  }
}

static int results_expected(const TirOp *op) {
  int flags = tir_op_flags(op->code);
  if (op->code == TIR_REDUCE_COMBINE || op->code == TIR_SCAN_COMBINE) return -1; /* one per operand */
  if (op->code == TIR_INLINE_ASM) return -1; /* one per dtype: check_asm */
  if (flags & (PURE | EW)) return 1;
  return op->code == TIR_LOAD || op->code == TIR_ATOMIC_RMW || op->code == TIR_ATOMIC_CAS ? 1 : -1;
}

static void verify_op(Verifier *V, const TirOp *op) {
  int arity = tir_op_arity(op->code);
  if (arity >= 0 && op->operands.len != arity) {
    problem(V, op, "has %s operands", arena_printf(V->f->arena, "%d (expected %d)", op->operands.len, arity));
    return;
  }
  int want = results_expected(op);
  if ((want >= 0 && op->results.len != want) || (op->code == TIR_INLINE_ASM && !op->results.len)) {
    problem(V, op, "%s", "has the wrong number of results");
    return;
  }
  check_operands_visible(V, op);
  if (op->code == TIR_FOR || op->code == TIR_IF) verify_region(V, op, op->regions[0], TIR_YIELD);
  if (op->code == TIR_IF) verify_region(V, op, op->regions[1], TIR_YIELD);
  if (op->code == TIR_WHILE) {
    verify_region(V, op, op->regions[0], TIR_CONDITION);
    verify_region(V, op, op->regions[1], TIR_YIELD);
  }
  if (op->code == TIR_REDUCE_COMBINE || op->code == TIR_SCAN_COMBINE) verify_combine(V, op);
  if (V->problems == 0) check_types(V, op);
  for (int i = 0; i < op->results.len; i++) define(V, op, op->results.data[i]);
}

static void verify_block(Verifier *V, const TirBlock *b, TirCode end) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    int last = i == b->ops.len - 1;
    if ((tir_op_flags(op->code) & TERM) && (!last || op->code != end))
      problem(V, op, "%s", "a terminator in the wrong place");
    verify_op(V, op);
  }
  const TirOp *t = terminator(b);
  if (!t || t->code != end) {
    diag_error(V->diags, t ? t->loc : (Loc){0}, "internal error: tile IR verifier: a block does not end with '%s'",
               tir_op_name(end));
    V->problems++;
  }
}

int tir_verify(const TirFunc *f, Diags *d) {
  Verifier V = {f, d, NULL, NULL, {0}, 0};
  V.visible = arena_alloc(f->arena, (size_t)f->types.len + 1);
  V.defined = arena_alloc(f->arena, (size_t)f->types.len + 1);
  for (int i = 0; i < f->params.len; i++) V.visible[f->params.data[i].value] = V.defined[f->params.data[i].value] = 1;
  verify_block(&V, f->body, TIR_RETURN);
  return V.problems;
}
